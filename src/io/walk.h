/*
 * walk.h - the one directory walker of src/io: the entries of a directory
 * as sorted paths, for the manifest walk (manifest.c) and the trace
 * directories (jobs_load.c).
 */
#ifndef CARVE_WALK_H
#define CARVE_WALK_H

#include <stdbool.h>

#include "carve/diag.h"

/* Chooses the entries to list, by name (no directory part). */
typedef bool carve__walk_keep_fn(const char *name);

/*
 * Lists directory dir, one level: every entry whose name does not start
 * with '.' and that keep accepts (NULL: every such entry) and that is a
 * regular file or a directory (subdirectories are listed, not entered; a
 * FIFO, socket or device is warned about in d and left out), as "dir/name" (no second
 * '/' when dir ends in one), sorted by strcmp.  Returns 0, CARVE_EIO
 * (cannot open the directory: reported in d as "cannot open directory
 * DIR: why") or CARVE_ENOMEM (not reported).  On success the caller owns
 * *paths (*n of them, possibly none) and frees them with
 * carve__walk_free(); on failure *paths is NULL and *n 0.
 */
int carve__walk_dir(struct carve_diags *d, const char *dir, carve__walk_keep_fn *keep,
		    char ***paths, size_t *n);

/* Frees what carve__walk_dir returned; (NULL, 0) is a no-op. */
void carve__walk_free(char **paths, size_t n);

/* True when name ends in ext and is longer than it ("a.csv", not ".csv"). */
bool carve__has_ext(const char *name, const char *ext);

#endif
