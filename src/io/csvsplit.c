/*
 * csvsplit.c - see csvsplit.h.  Reads the line only; stores pointers into it.
 */
#include <string.h>

#include "csvsplit.h"

size_t csv_split(const char *s, const char *end, struct csv_field *f, size_t max)
{
	const char *start = s;
	size_t n = 0;

	for (;;) {
		const char *c = memchr(s, ',', (size_t)(end - s));
		const char *e = c ? c : end;

		if (n < max) {
			f[n].s = s;
			f[n].len = (size_t)(e - s);
			f[n].col = (uint32_t)(s - start) + 1;
		}
		n++;
		if (!c)
			return n;
		s = c + 1;
	}
}

const char *csv_line_problem(const char *s, const char *end, uint32_t *col)
{
	const char *p;

	for (p = s; p < end; p++) {
		if (*p == '\0') {
			*col = (uint32_t)(p - s) + 1;
			return "a NUL byte: CSV input must be text";
		}
		if (*p == '"') {
			*col = (uint32_t)(p - s) + 1;
			return "'\"': quoted fields are not supported (carve's CSV formats have "
			       "no quoting; a field holds no ',' or '\"')";
		}
	}
	return NULL;
}
