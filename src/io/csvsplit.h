/*
 * csvsplit.h - splitting one line of a plain CSV (no quoting: the openb
 * node and pod lists have none) into fields that keep their column.
 *
 * Quoting is refused, not read: none of carve's CSV formats (openb node
 * and pod lists, carve's CSV trace) has a field that needs it, and a
 * quote read as text would keep its quotes silently.  A line with a '"'
 * or a NUL byte (which would cut a field short) is an error at its column
 * (csv_line_problem); every reader skips that row, or the file at the
 * header.
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

/* NULL when [s, end) holds no '"' and no NUL byte; else the message for
 * the first ("a NUL byte ...", "'\"': quoted fields are not supported ...")
 * with its 1-based column in *col. */
const char *csv_line_problem(const char *s, const char *end, uint32_t *col);

#endif
