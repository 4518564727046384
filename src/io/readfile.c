/*
 * readfile.c - see readfile.h.  The buffer doubles from 64 KiB up to max;
 * nothing is kept on failure.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "readfile.h"

int carve__read_file(struct carve_diags *d, const char *path, size_t max, char **out,
		     size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int rc = CARVE_EIO;

	if (!f) {
		carve_diag_error(d, (struct carve_pos){0}, "cannot open %s: %s", path,
				 strerror(errno));
		return CARVE_EIO;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			size_t c = cap ? cap * 2 : 65536;
			char *nb;

			if (cap >= max) {
				carve_diag_error(d, (struct carve_pos){0}, "%s: larger than %zu MiB",
						 path, max >> 20);
				goto out_free;
			}
			if (c > max)
				c = max;
			nb = carve_realloc(buf, c + 1);
			if (!nb) {
				rc = CARVE_ENOMEM;
				goto out_free;
			}
			buf = nb;
			cap = c;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		carve_diag_error(d, (struct carve_pos){0}, "cannot read %s: %s", path,
				 strerror(errno));
		goto out_free;
	}
	fclose(f);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
out_free:
	carve_free(buf);
	fclose(f);
	return rc;
}
