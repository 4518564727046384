/*
 * walk.c - one level of a directory as sorted paths (walk.h).
 *
 * Invariants: the listing is complete or nothing (on any failure every
 * path built so far is freed and the caller gets none); hidden entries
 * (names starting with '.', "." and ".." among them) are never listed; the
 * order is strcmp order of the paths, so every walk of the same directory
 * reads files in the same order on every machine; only regular files and
 * directories are listed (a FIFO or device would block a reader or never
 * end: each is skipped with a warning).  All memory goes through
 * carve_malloc and belongs to the caller on success.
 */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "walk.h"

bool carve__has_ext(const char *name, const char *ext)
{
	size_t ln = strlen(name), le = strlen(ext);

	return ln > le && !strcmp(name + ln - le, ext);
}

/* A regular file or a directory (following symlinks); anything else is
 * reported and left out.  An entry that vanished is left out silently. */
static bool listable(struct carve_diags *d, const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return errno != ENOENT;
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return true;
	carve_diag_warn(d, (struct carve_pos){0}, "%s: not a regular file; skipped (a FIFO or "
			"device would block or never end)", path);
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void carve__walk_free(char **paths, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		carve_free(paths[i]);
	carve_free(paths);
}

int carve__walk_dir(struct carve_diags *d, const char *dir, carve__walk_keep_fn *keep,
		    char ***paths, size_t *n)
{
	const char *sep = carve__has_ext(dir, "/") ? "" : "/";
	char **names = NULL;
	size_t k = 0, cap = 0;
	struct dirent *e;
	DIR *dh;

	*paths = NULL;
	*n = 0;
	dh = opendir(dir);
	if (!dh) {
		carve_diag_error(d, (struct carve_pos){0}, "cannot open directory %s: %s", dir,
				 strerror(errno));
		return CARVE_EIO;
	}
	while ((e = readdir(dh))) {
		size_t len;

		if (e->d_name[0] == '.' || (keep && !keep(e->d_name)))
			continue;
		if (k == cap) {
			size_t c = cap ? cap * 2 : 16;
			char **nn = carve_realloc(names, c * sizeof(*nn));

			if (!nn)
				goto out_nomem;
			names = nn;
			cap = c;
		}
		len = strlen(dir) + strlen(sep) + strlen(e->d_name) + 1;
		names[k] = carve_malloc(len);
		if (!names[k])
			goto out_nomem;
		snprintf(names[k], len, "%s%s%s", dir, sep, e->d_name);
		if (!listable(d, names[k])) {
			carve_free(names[k]);
			continue;
		}
		k++;
	}
	closedir(dh);
	if (k)
		qsort(names, k, sizeof(*names), cmp_str);
	*paths = names;
	*n = k;
	return 0;
out_nomem:
	carve__walk_free(names, k);
	closedir(dh);
	return CARVE_ENOMEM;
}
