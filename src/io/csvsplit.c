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
