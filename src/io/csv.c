/*
 * csv.c - the openb node list (Alibaba cluster-trace-gpu-v2023):
 * "sn,cpu_milli,memory_mib,gpu,model", one node a row, model empty for
 * CPU-only nodes.  No quoting: the trace has none.  A bad header skips the
 * file; a bad row is reported at the line and column of the bad field and
 * skipped, and the other rows are kept.  LF or CRLF line ends.  memory_mib
 * must fit the inventory's milli-byte count (int64); a row with GPUs but no
 * model keeps them as model "unknown", with a warning; a model carve does
 * not know draws the NodePool's warning (ld_gpu_model_note).  A '"' or a
 * NUL byte in a line is an error (csvsplit.h): quoting is not read.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "csvsplit.h"
#include "loaders.h"
#include "manifest_int.h"

#define NCOLS 5
#define MAXF (NCOLS + 1) /* one more, to see a long row */
/* Largest memory_mib whose milli-byte count (MiB * 2^20 * 1000) fits int64. */
#define MAX_MEMORY_MIB (INT64_MAX / (1024LL * 1024 * 1000))

static const char *const columns[NCOLS] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};

static bool is_field(const struct csv_field *f, const char *name)
{
	return f->len == strlen(name) && !memcmp(f->s, name, f->len);
}

static struct carve_pos at(struct ld *ld, uint32_t line, uint32_t col)
{
	return (struct carve_pos){ld->file, line, col};
}

static bool check_header(struct ld *ld, const char *s, const char *end)
{
	struct csv_field f[MAXF];
	size_t n = csv_split(s, end, f, MAXF), i;

	for (i = 0; i < NCOLS; i++) {
		if (i >= n) {
			ld_error(ld, at(ld, 1, (uint32_t)(end - s) + 1),
				 "header: missing column '%s' (the header must be "
				 "sn,cpu_milli,memory_mib,gpu,model)", columns[i]);
			return false;
		}
		if (!is_field(&f[i], columns[i])) {
			ld_error(ld, at(ld, 1, f[i].col),
				 "header: unexpected column '%.*s' where '%s' belongs (the header "
				 "must be sn,cpu_milli,memory_mib,gpu,model)",
				 (int)f[i].len, f[i].s, columns[i]);
			return false;
		}
	}
	if (n > NCOLS) {
		ld_error(ld, at(ld, 1, f[NCOLS].col),
			 "header: unexpected column '%.*s' after 'model' (the header must be "
			 "sn,cpu_milli,memory_mib,gpu,model)", (int)f[NCOLS].len, f[NCOLS].s);
		return false;
	}
	return true;
}

/* A non-negative decimal integer no larger than max; reports on failure. */
static bool field_int(struct ld *ld, uint32_t line, const struct csv_field *f, int col,
		      int64_t max, int64_t *out)
{
	char buf[32];
	long long x;
	size_t i;

	for (i = 0; i < f->len; i++)
		if (f->s[i] < '0' || f->s[i] > '9')
			break;
	if (!f->len || i < f->len) {
		ld_error(ld, at(ld, line, f->col), "%s: expected a non-negative integer, got '%.*s'",
			 columns[col], (int)f->len, f->s);
		return false;
	}
	if (f->len >= sizeof(buf))
		goto range;
	memcpy(buf, f->s, f->len);
	buf[f->len] = '\0';
	errno = 0;
	x = strtoll(buf, NULL, 10);
	if (errno == ERANGE || x > max)
		goto range;
	*out = x;
	return true;
range:
	ld_error(ld, at(ld, line, f->col), "%s: %.*s is too large (at most %lld)", columns[col],
		 (int)f->len, f->s, (long long)max);
	return false;
}

static void load_row(struct ld *ld, uint32_t line, const char *s, const char *end)
{
	struct csv_field f[MAXF];
	size_t n = csv_split(s, end, f, MAXF);
	struct carve_mf_csvnode node, *e;
	int64_t cpu = 0, mem = 0, gpus = 0;
	bool ok = true;

	if (n < NCOLS) {
		ld_error(ld, at(ld, line, 1),
			 "row has %zu field%s, expected 5 (sn,cpu_milli,memory_mib,gpu,model); row skipped",
			 n, n == 1 ? "" : "s");
		return;
	}
	if (n > NCOLS) {
		ld_error(ld, at(ld, line, f[NCOLS].col),
			 "row has %zu fields, expected 5 (sn,cpu_milli,memory_mib,gpu,model); row skipped",
			 n);
		return;
	}
	if (!f[0].len) {
		ld_error(ld, at(ld, line, 1), "sn: empty node name");
		ok = false;
	}
	ok &= field_int(ld, line, &f[1], 1, INT64_MAX / 1000, &cpu);
	ok &= field_int(ld, line, &f[2], 2, MAX_MEMORY_MIB, &mem);
	ok &= field_int(ld, line, &f[3], 3, INT_MAX, &gpus);
	if (ok && gpus > CARVE_NODE_MAX_GPUS) {
		/* The bound and message of every node source (carve/manifest.h). */
		ld_error(ld, at(ld, line, f[3].col), "gpu: %lld GPUs per node is more than %d; "
			 "row skipped", (long long)gpus, CARVE_NODE_MAX_GPUS);
		ok = false;
	}
	if (!ok)
		return;
	memset(&node, 0, sizeof(node));
	node.name = carve_arena_strndup(ld->a, f[0].s, f[0].len);
	if (gpus > 0 && !f[4].len) {
		ld_warn(ld, at(ld, line, f[4].col), "gpu %lld but no model; GPUs kept as model "
			"'unknown'", (long long)gpus);
		node.model = "unknown";
	} else {
		node.model = carve_arena_strndup(ld->a, f[4].s, f[4].len);
		if (node.model && gpus > 0)
			ld_gpu_model_note(ld, at(ld, line, f[4].col), node.model);
	}
	if (!node.name || !node.model) {
		carve_diag_error(ld->d, at(ld, line, 1), "out of memory");
		return;
	}
	node.cpu_milli = cpu;
	node.memory_mib = mem;
	node.gpus = (int)gpus;
	node.pos = at(ld, line, 1);
	e = LD_APPEND(ld, ld->m->csvnodes, ld->m->ncsvnodes, ld->m->cap_csvnodes);
	if (e)
		*e = node;
}

int carve_manifests_load_csv(struct carve_manifests *m, const char *name,
			     const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	const char *file = carve_arena_strdup(&m->priv->arena, name);
	struct ld ld;
	uint32_t line = 1;

	if (!file)
		return CARVE_ENOMEM;
	memset(&ld, 0, sizeof(ld));
	ld.m = m;
	ld.a = &m->priv->arena;
	ld.d = &m->diags;
	ld.kind = "node CSV";
	ld.file = file;
	ld.buf = buf;
	ld.buflen = len;
	if (len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
		p += 3;
	for (; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		const char *why;
		uint32_t col;

		if (e > p && e[-1] == '\r')
			e--;
		if ((why = csv_line_problem(p, e, &col))) {
			ld_error(&ld, at(&ld, line, col), "%s; %s skipped", why,
				 line == 1 ? "file" : "row");
			if (line == 1)
				return 0;
		} else if (line == 1) {
			if (!check_header(&ld, p, e))
				return 0;
		} else if (e > p) {
			load_row(&ld, line, p, e);
		}
		p = nl ? nl + 1 : end;
	}
	if (line == 1)
		ld_error(&ld, at(&ld, 1, 1),
			 "empty file (expected the header sn,cpu_milli,memory_mib,gpu,model)");
	return 0;
}
