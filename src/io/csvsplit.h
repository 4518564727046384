/*
 * csvsplit.h - splitting one line of a plain CSV (no quoting: the openb
 * node and pod lists have none) into fields that keep their column.
 */
#ifndef CARVE_CSVSPLIT_H
#define CARVE_CSVSPLIT_H

#include <stddef.h>
#include <stdint.h>

struct csv_field {
	const char *s;  /* not NUL-terminated: len bytes */
	size_t len;
	uint32_t col;   /* 1-based column of the field's first byte */
};

/*
 * Splits [s, end) at commas into f (room for max fields) and returns how
 * many fields the line has, which may exceed max (only max are stored).
 */
size_t csv_split(const char *s, const char *end, struct csv_field *f, size_t max);

#endif
