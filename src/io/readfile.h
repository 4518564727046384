/*
 * readfile.h - reading a whole input file into memory, with the failure
 * reported as a diagnostic naming the file.
 */
#ifndef CARVE_READFILE_H
#define CARVE_READFILE_H

#include "carve/diag.h"

/*
 * Reads path into a new buffer (NUL-terminated; *len excludes the NUL) of
 * at most max bytes.  Returns 0, CARVE_EIO (cannot open or read, or larger
 * than max: reported in d) or CARVE_ENOMEM.  The caller frees *out with
 * carve_free().
 */
int carve__read_file(struct carve_diags *d, const char *path, size_t max, char **out,
		     size_t *len);

#endif
