/*
 * testutil.h - helpers shared by the cmocka unit tests: load YAML text into
 * a fresh manifest set and assert on the diagnostics it produced.
 * Header-only (static functions) so each test binary stays one file.
 */
#ifndef CARVE_TESTUTIL_H
#define CARVE_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "carve/manifest.h"

/* Loads text (display name "t.yaml") into a new set; never NULL. */
static inline struct carve_manifests *tu_load(const char *yaml)
{
	struct carve_manifests *m = carve_manifests_create();

	assert_non_null(m);
	assert_int_equal(carve_manifests_load_yaml(m, "t.yaml", yaml, strlen(yaml)), 0);
	return m;
}

/* Prints every diagnostic (helps when an assertion fails). */
static inline void tu_dump(const struct carve_manifests *m)
{
	carve_diags_print(&m->diags, stderr);
}

/* Asserts there is no diagnostic at all. */
static inline void tu_assert_clean(const struct carve_manifests *m)
{
	if (m->diags.n)
		tu_dump(m);
	assert_int_equal(m->diags.n, 0);
}

/*
 * Asserts that some diagnostic has exactly this line, column and severity
 * and a message containing `msg`.
 */
static inline void tu_assert_diag(const struct carve_manifests *m, enum carve_severity sev,
				  unsigned line, unsigned col, const char *msg)
{
	size_t i;

	for (i = 0; i < m->diags.n; i++) {
		const struct carve_diag *g = &m->diags.v[i];

		if (g->sev == sev && g->pos.line == line && g->pos.col == col &&
		    strstr(g->msg, msg))
			return;
	}
	fprintf(stderr, "expected %s at %u:%u containing \"%s\"; got:\n",
		sev == CARVE_SEV_ERROR ? "error" : "warning", line, col, msg);
	tu_dump(m);
	fail();
}

#define tu_assert_error(m, line, col, msg) tu_assert_diag((m), CARVE_SEV_ERROR, (line), (col), (msg))
#define tu_assert_warning(m, line, col, msg) tu_assert_diag((m), CARVE_SEV_WARNING, (line), (col), (msg))

/* Reads a whole file into a malloc'd NUL-terminated buffer (NULL if absent). */
static inline char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* The path of rel inside the source tree (CARVE_SOURCE_DIR, which ctest
 * sets) in buf; fails the test when CARVE_SOURCE_DIR is unset or the path
 * does not fit.  The data the tests read ships in the tree (data/openb,
 * tests/conformance), so a missing file is a failure, never a skip. */
static inline const char *tu_source_path(char *buf, size_t size, const char *rel)
{
	const char *src = getenv("CARVE_SOURCE_DIR");
	int n;

	if (!src || !*src)
		fail_msg("CARVE_SOURCE_DIR is not set (run the tests through ctest)");
	n = snprintf(buf, size, "%s/%s", src, rel);
	if (n < 0 || (size_t)n >= size)
		fail_msg("path too long: %s/%s", src, rel);
	return buf;
}

#endif
