/*
 * jobs_csv.c - carve's CSV trace (docs/trace-format.md) into the job list:
 * a header naming the columns (name, arrival and duration required, the
 * rest in any order; unknown ones get a "did you mean"), then one job of
 * one podSet per row, every problem reported at its file:line:col.
 *
 * Invariants: a row is a job only when nothing in it was reported; a row
 * with the wrong number of fields is skipped whole.  Ownership: one row's
 * strings and arrays live in the reader's scratch arena (struct crd), reset
 * for every row; carve_jobs_add copies what it keeps, and the file name
 * positions borrow lives in the list's arena (carve__jobs_keep_name).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/jobs.h"
#include "carve/quantity.h"
#include "carve/resource.h"
#include "csvsplit.h"
#include "decode.h"
#include "jobs_int.h"

enum col {
	C_NAME, C_ARRIVAL, C_DURATION, C_NS, C_QUEUE, C_PRIO, C_COUNT, C_MINCOUNT, C_CPU,
	C_MEM, C_GPU, C_GPURES, C_GFRAC, C_GMEM, C_MODELS, C_SELECTOR, C_DEMAND, C_CKPT, C_CLASS,
	NCOLS
};

static const char *const columns[NCOLS] = {
	"name", "arrival", "duration", "namespace", "queue", "priority", "count",
	"min_count", "cpu", "memory", "gpu", "gpu_resource", "gpu_fraction",
	"gpu_memory", "gpu_models", "node_selector", "demand", "checkpoint", "class",
};

#define REQUIRED_COLS "name, arrival, duration"

struct crd {
	struct carve_jobs *js;
	struct carve_diags *d;
	struct carve_arena scratch;   /* one row's strings and arrays */
	const char *file;
	int map[NCOLS + 1];           /* header position -> enum col */
	int pos[NCOLS];               /* enum col -> header position, -1 absent */
	size_t ncols;
	uint32_t line;
	bool oom;
};

static struct carve_pos cpos(const struct crd *r, uint32_t col)
{
	return (struct carve_pos){r->file, r->line, col};
}

static bool check_csv_header(struct crd *r, const char *s, const char *end)
{
	struct csv_field f[NCOLS + 1];
	size_t n = csv_split(s, end, f, NCOLS + 1), i, k;
	bool ok = true;

	for (k = 0; k < NCOLS; k++)
		r->pos[k] = -1;
	if (n > NCOLS) {
		carve_diag_error(r->d, cpos(r, f[NCOLS].col),
				 "header: more than %d columns (each column at most once)", NCOLS);
		return false;
	}
	for (i = 0; i < n; i++) {
		char name[64];
		const char *sug;

		snprintf(name, sizeof(name), "%.*s", (int)(f[i].len < 63 ? f[i].len : 63), f[i].s);
		for (k = 0; k < NCOLS && strcmp(name, columns[k]); k++)
			;
		if (k == NCOLS) {
			sug = ld_suggest(name, columns, NCOLS);
			if (sug)
				carve_diag_error(r->d, cpos(r, f[i].col),
						 "header: unknown column '%s' (did you mean '%s'?)",
						 name, sug);
			else
				carve_diag_error(r->d, cpos(r, f[i].col),
						 "header: unknown column '%s'", name);
			ok = false;
		} else if (r->pos[k] >= 0) {
			carve_diag_error(r->d, cpos(r, f[i].col), "header: column '%s' appears twice",
					 name);
			ok = false;
		} else {
			r->pos[k] = (int)i;
			r->map[i] = (int)k;
		}
	}
	for (k = C_NAME; k <= C_DURATION; k++)
		if (r->pos[k] < 0) {
			carve_diag_error(r->d, cpos(r, (uint32_t)(end - s) + 1),
					 "header: missing column '%s' (required: " REQUIRED_COLS ")",
					 columns[k]);
			ok = false;
		}
	r->ncols = n;
	return ok;
}

/* The field of column c as a NUL-terminated scratch string ("" when the
 * header lacks it); *col its column (1 when absent). */
static const char *fstr(struct crd *r, const struct csv_field *f, enum col c, uint32_t *col)
{
	char *s;

	if (r->pos[c] < 0) {
		if (col)
			*col = 1;
		return "";
	}
	if (col)
		*col = f[r->pos[c]].col;
	s = carve_arena_strndup(&r->scratch, f[r->pos[c]].s, f[r->pos[c]].len);
	if (!s) {
		r->oom = true;
		return "";
	}
	return s;
}

static bool csv_span(struct crd *r, const struct csv_field *f, enum col c, int64_t *out)
{
	uint32_t col;
	const char *s = fstr(r, f, c, &col);
	const char *why = NULL;

	if (carve_jobs_parse_span(s, out, &why)) {
		carve_diag_error(r->d, cpos(r, col), "%s: %s, got '%s'", columns[c], why, s);
		return false;
	}
	if (c == C_ARRIVAL && *out < 0) {
		carve_diag_error(r->d, cpos(r, col), "arrival: must not be negative (got '%s')", s);
		return false;
	}
	if (c == C_DURATION && *out <= 0) {
		carve_diag_error(r->d, cpos(r, col), "duration: must be positive (got '%s')", s);
		return false;
	}
	return true;
}

static bool csv_int(struct crd *r, const struct csv_field *f, enum col c, int64_t min,
		    int64_t max, int64_t *out)
{
	uint32_t col;
	const char *s = fstr(r, f, c, &col);
	char *end;
	long long x;

	if (!*s)
		return true; /* keeps the default */
	errno = 0;
	x = strtoll(s, &end, 10);
	if (*end || end == s || s[0] == ' ') {
		carve_diag_error(r->d, cpos(r, col), "%s: expected an integer, got '%s'",
				 columns[c], s);
		return false;
	}
	if (errno == ERANGE || x < min || x > max) {
		carve_diag_error(r->d, cpos(r, col), "%s: %s is out of range [%lld, %lld]",
				 columns[c], s, (long long)min, (long long)max);
		return false;
	}
	*out = x;
	return true;
}

/* A non-negative quantity; *given false for an empty field. */
static bool csv_qty(struct crd *r, const struct csv_field *f, enum col c, int64_t *out,
		    bool *given)
{
	uint32_t col;
	const char *s = fstr(r, f, c, &col);
	const char *why = NULL;

	*given = false;
	if (!*s)
		return true;
	if (carve_qty_parse(s, out, &why)) {
		carve_diag_error(r->d, cpos(r, col), "%s: malformed quantity '%s': %s", columns[c],
				 s, why);
		return false;
	}
	if (*out < 0) {
		carve_diag_error(r->d, cpos(r, col), "%s: must not be negative (got '%s')",
				 columns[c], s);
		return false;
	}
	*given = true;
	return true;
}

/* Splits s at sep into scratch strings. */
static const char **split(struct crd *r, const char *s, char sep, size_t *n)
{
	size_t k = 1, i = 0;
	const char *p, **v;

	for (p = s; *p; p++)
		k += *p == sep;
	v = carve_arena_alloc(&r->scratch, k * sizeof(*v));
	if (!v) {
		r->oom = true;
		return NULL;
	}
	for (p = s;; p++) {
		if (*p && *p != sep)
			continue;
		v[i] = carve_arena_strndup(&r->scratch, s, (size_t)(p - s));
		if (!v[i++]) {
			r->oom = true;
			return NULL;
		}
		if (!*p)
			break;
		s = p + 1;
	}
	*n = i;
	return v;
}

/* gpu_models "A|B" and node_selector "k=v;k2=v2". */
static bool csv_lists(struct crd *r, const struct csv_field *f, struct carve_job_podset *ps)
{
	uint32_t col;
	const char *s = fstr(r, f, C_MODELS, &col);
	struct carve_label *sel;
	const char **v;
	size_t n, i;

	if (*s) {
		v = split(r, s, '|', &n);
		if (!v)
			return false;
		for (i = 0; i < n; i++)
			if (!*v[i]) {
				carve_diag_error(r->d, cpos(r, col),
						 "gpu_models: empty model name in '%s'", s);
				return false;
			}
		ps->models = v;
		ps->nmodels = n;
	}
	s = fstr(r, f, C_SELECTOR, &col);
	if (!*s)
		return true;
	v = split(r, s, ';', &n);
	sel = v ? carve_arena_alloc(&r->scratch, n * sizeof(*sel)) : NULL;
	if (!sel) {
		r->oom = true;
		return false;
	}
	for (i = 0; i < n; i++) {
		char *eq = strchr(v[i], '=');

		if (!eq || eq == v[i]) {
			carve_diag_error(r->d, cpos(r, col),
					 "node_selector: expected key=value[;key=value...], got '%s'",
					 s);
			return false;
		}
		*eq = '\0';
		sel[i].key = v[i];
		sel[i].value = eq + 1;
	}
	ps->selector = sel;
	ps->nselector = n;
	return true;
}

static bool csv_bool(struct crd *r, const struct csv_field *f, bool *out)
{
	uint32_t col;
	const char *s = fstr(r, f, C_CKPT, &col);

	if (!*s || !strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "0")) {
		*out = false;
	} else if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "1")) {
		*out = true;
	} else {
		carve_diag_error(r->d, cpos(r, col), "checkpoint: expected true or false, got '%s'",
				 s);
		return false;
	}
	return true;
}

/* One podSet's requests and GPU share. */
static bool csv_requests(struct crd *r, const struct csv_field *f, struct carve_job_podset *ps)
{
	static const enum col qcols[] = {C_CPU, C_MEM, C_GPU};
	struct carve_req *reqs;
	int64_t v;
	uint32_t col;
	const char *s, *gres;
	bool ok = true, given;
	size_t i;

	reqs = carve_arena_alloc(&r->scratch, 3 * sizeof(*reqs));
	if (!reqs) {
		r->oom = true;
		return false;
	}
	gres = fstr(r, f, C_GPURES, &col);
	for (i = 0; i < 3; i++) {
		if (!csv_qty(r, f, qcols[i], &v, &given)) {
			ok = false;
		} else if (given) {
			reqs[ps->nreqs].name = qcols[i] == C_GPU ? (*gres ? gres : CARVE_RES_NAME_GPU)
								: columns[qcols[i]];
			reqs[ps->nreqs++].milli = v;
		} else if (qcols[i] == C_GPU && *gres) {
			carve_diag_error(r->d, cpos(r, col),
					 "gpu_resource: '%s' given without a gpu count", gres);
			ok = false;
		}
	}
	ps->reqs = reqs;
	s = fstr(r, f, C_GFRAC, &col);
	if (*s && !carve__jobs_parse_fraction(s, &ps->gpu_milli)) {
		carve_diag_error(r->d, cpos(r, col),
				 "gpu_fraction: expected a share of one GPU in (0, 1) such as 0.5 "
				 "or 500m, got '%s'", s);
		ok = false;
	}
	if (csv_qty(r, f, C_GMEM, &v, &given) && given &&
	    !carve__jobs_bytes_to_mib(v, &ps->gpu_mem_mib)) {
		carve_diag_error(r->d, cpos(r, f[r->pos[C_GMEM]].col), "gpu_memory: too large");
		ok = false;
	} else if (r->pos[C_GMEM] >= 0 && f[r->pos[C_GMEM]].len && !given) {
		ok = false;
	}
	return ok;
}

/* Kubernetes names as the API server checks them (decode.c): a job becomes
 * a Workload of its name (a DNS-1123 subdomain) in its namespace (a label),
 * queued to a LocalQueue (a subdomain). */
static void csv_dns(struct crd *r, const char *s, uint32_t col, enum col c,
		    enum ld_name_rule rule)
{
	char why[320];

	if (ld_dns_problem(s, rule, why, sizeof(why)))
		carve_diag_error(r->d, cpos(r, col), "%s: %s", columns[c], why);
}

static int csv_row(struct crd *r, const char *s, const char *end, size_t *skipped)
{
	struct csv_field f[NCOLS + 1];
	size_t n = csv_split(s, end, f, NCOLS + 1);
	size_t e0 = r->d->nerrors;
	struct carve_job_podset ps;
	struct carve_job j;
	int64_t prio = 0, count = 1, minc = 0;
	uint32_t col;
	const char *sv;
	int rc = 0;

	if (n != r->ncols) {
		carve_diag_error(r->d, cpos(r, n < r->ncols ? 1 : f[r->ncols].col),
				 "row has %zu field%s, the header %zu; row skipped", n,
				 n == 1 ? "" : "s", r->ncols);
		goto skip;
	}
	memset(&j, 0, sizeof(j));
	memset(&ps, 0, sizeof(ps));
	j.name = fstr(r, f, C_NAME, &col);
	if (!*j.name)
		carve_diag_error(r->d, cpos(r, col), "name: empty job name");
	else
		csv_dns(r, j.name, col, C_NAME, LD_DNS_SUBDOMAIN);
	csv_span(r, f, C_ARRIVAL, &j.arrival);
	csv_span(r, f, C_DURATION, &j.duration);
	j.ns = fstr(r, f, C_NS, &col);
	if (*j.ns)
		csv_dns(r, j.ns, col, C_NS, LD_DNS_LABEL);
	sv = fstr(r, f, C_QUEUE, &col);
	j.queue = *sv ? sv : NULL;
	if (j.queue)
		csv_dns(r, j.queue, col, C_QUEUE, LD_DNS_SUBDOMAIN);
	csv_int(r, f, C_PRIO, INT32_MIN, INT32_MAX, &prio);
	j.priority = (int32_t)prio;
	if (csv_int(r, f, C_COUNT, 1, CARVE__JOBS_MAX_COUNT, &count) &&
	    csv_int(r, f, C_MINCOUNT, 1, CARVE__JOBS_MAX_COUNT, &minc) && minc > count) {
		carve_diag_error(r->d, cpos(r, f[r->pos[C_MINCOUNT]].col),
				 "min_count: %lld is more than count %lld", (long long)minc,
				 (long long)count);
	}
	ps.count = (int32_t)count;
	ps.min_count = (int32_t)minc;
	csv_requests(r, f, &ps);
	csv_lists(r, f, &ps);
	sv = fstr(r, f, C_DEMAND, &col);
	if (*sv && !carve__jobs_parse_demand(sv, &j.demand))
		carve_diag_error(r->d, cpos(r, col), "demand: expected a number in (0, 1], got '%s'",
				 sv);
	csv_bool(r, f, &j.checkpoint);
	sv = fstr(r, f, C_CLASS, &col);
	j.job_class = *sv ? sv : NULL;
	if (*sv && !carve__job_class_ok(sv))
		carve_diag_error(r->d, cpos(r, col), "class: expected 1-63 letters, digits, '-', "
				 "'_' or '.', got '%s'", sv);
	if (r->oom)
		return CARVE_ENOMEM;
	if (r->d->nerrors != e0)
		goto skip;
	j.npodsets = 1;
	j.podsets = &ps;
	j.pos = cpos(r, 1);
	rc = carve__jobs_add_reported(r->js, &j, r->d, cpos(r, f[r->pos[C_NAME]].col), "",
				      skipped);
	carve_arena_cleanup(&r->scratch);
	return rc;
skip:
	if (skipped)
		(*skipped)++;
	carve_arena_cleanup(&r->scratch);
	return 0;
}

int carve_jobs_load_csv_buf(struct carve_jobs *js, const char *name, const char *buf,
			    size_t len, struct carve_diags *d, size_t *skipped)
{
	const char *p = buf, *end = buf + len;
	struct crd r;
	int rc = 0;

	if (!js || !d || (len && !buf))
		return CARVE_EINVAL;
	memset(&r, 0, sizeof(r));
	r.js = js;
	r.d = d;
	r.file = carve__jobs_keep_name(js, name);
	if (!r.file)
		return CARVE_ENOMEM;
	carve_arena_init(&r.scratch);
	if (len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
		p += 3;
	for (r.line = 1; p < end && !rc; r.line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		const char *why;
		uint32_t col;

		if (e > p && e[-1] == '\r')
			e--;
		if ((why = csv_line_problem(p, e, &col))) {
			carve_diag_error(d, cpos(&r, col), "%s; %s skipped", why,
					 r.line == 1 ? "file" : "row");
			if (r.line == 1) {
				carve_arena_cleanup(&r.scratch);
				return 0;
			}
			if (skipped)
				(*skipped)++;
		} else if (r.line == 1) {
			if (!check_csv_header(&r, p, e))
				return 0;
		} else if (e > p && *p != '#') {
			rc = csv_row(&r, p, e, skipped);
		}
		p = nl ? nl + 1 : end;
	}
	carve_arena_cleanup(&r.scratch);
	if (rc) {
		carve_diag_error(d, cpos(&r, 1), "out of memory loading the trace");
		return rc;
	}
	if (r.line == 1)
		carve_diag_error(d, (struct carve_pos){r.file, 1, 1},
				 "empty file (expected a header with at least " REQUIRED_COLS ")");
	return 0;
}
