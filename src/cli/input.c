/*
 * input.c - manifest paths as `carve validate` and `carve admit` take them:
 * a file, a directory, or "-" for standard input read as one YAML stream
 * (any number of documents), shown in diagnostics as "<stdin>".
 */
#include <errno.h>
#include <string.h>

#include "carve/manifest.h"
#include "cli.h"

#define STDIN_MAX_BYTES (256u * 1024u * 1024u) /* as for a file (manifest.c) */

/* Standard input into a new buffer (the caller frees it); 0, CARVE_EIO
 * (reported in d) or CARVE_ENOMEM. */
static int read_stdin(struct carve_diags *d, char **out, size_t *len)
{
	size_t cap = 64 * 1024, n = 0, got;
	char *buf = carve_malloc(cap), *nb;

	if (!buf)
		return CARVE_ENOMEM;
	while ((got = fread(buf + n, 1, cap - n, stdin)) > 0) {
		n += got;
		if (n < cap)
			continue;
		if (cap >= STDIN_MAX_BYTES) {
			carve_diag_error(d, (struct carve_pos){CLI_STDIN_NAME, 0, 0},
					 "larger than %u MiB", STDIN_MAX_BYTES >> 20);
			carve_free(buf);
			return CARVE_EIO;
		}
		nb = carve_realloc(buf, cap * 2);
		if (!nb) {
			carve_free(buf);
			return CARVE_ENOMEM;
		}
		buf = nb;
		cap *= 2;
	}
	if (ferror(stdin)) {
		carve_diag_error(d, (struct carve_pos){CLI_STDIN_NAME, 0, 0}, "cannot read: %s",
				 strerror(errno));
		carve_free(buf);
		return CARVE_EIO;
	}
	*out = buf;
	*len = n;
	return 0;
}

int cli_manifests_load(struct carve_manifests *m, const char *path)
{
	char *buf;
	size_t len;
	int rc;

	if (strcmp(path, "-"))
		return carve_manifests_load_path(m, path);
	rc = read_stdin(&m->diags, &buf, &len);
	if (rc)
		return rc;
	rc = carve_manifests_load_yaml(m, CLI_STDIN_NAME, buf, len);
	carve_free(buf);
	return rc;
}
