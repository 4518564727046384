/*
 * jobs_load.c - carve's trace format (docs/trace-format.md), CSV and YAML,
 * and openb pod lists, into the job list of include/carve/jobs.h.
 *
 * Every loader builds one struct carve_job at a time in a scratch arena
 * that dies with the file, and hands it to carve_jobs_add(), which copies
 * it and checks the list's invariants in one place.  A job is kept only
 * when nothing about it was reported: each loader compares the error count
 * of the diagnostics before and after decoding a job.
 *
 * Ownership: file names that positions borrow are copied into the list's
 * arena (carve__jobs_arena), so they live as long as the jobs.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "carve/jobs.h"
#include "carve/quantity.h"
#include "carve/resource.h"
#include "csvsplit.h"
#include "decode.h"
#include "jobs_int.h"
#include "readfile.h"
#include "walk.h"
#include "ytree.h"

#define MAX_FILE_BYTES (1024u << 20)
#define MAX_SPAN (100LL * 365 * 86400)
#define MAX_COUNT 100000
#define MIB_MILLI (1024LL * 1024 * 1000)

/* ---- time spans ---- */

int carve_jobs_parse_span(const char *s, int64_t *out, const char **why)
{
	static const char units[] = "dhms";
	static const int64_t mult[] = {86400, 3600, 60, 1};
	const char *p = s;
	int64_t total = 0;
	bool neg = false;
	int last = -1;

	if (!s || !*s) {
		if (why)
			*why = "empty time span";
		return CARVE_EPARSE;
	}
	if (*p == '-') {
		neg = true;
		p++;
	}
	do {
		int64_t v = 0;
		const char *u;
		int k;

		if (*p < '0' || *p > '9') {
			if (why)
				*why = "expected seconds or a span like 90, 45m, 2h30m, 1d";
			return CARVE_EPARSE;
		}
		for (; *p >= '0' && *p <= '9'; p++) {
			v = v * 10 + (*p - '0');
			if (v > MAX_SPAN)
				goto range;
		}
		if (!*p) {
			if (last >= 0 && last < 3) {
				/* "2h30" is ambiguous: a unit is needed after the first. */
				if (why)
					*why = "a number after a unit needs a unit too (s, m, h, d)";
				return CARVE_EPARSE;
			}
			k = 3;
		} else {
			u = strchr(units, *p);
			if (!u) {
				if (why)
					*why = "unknown unit (expected s, m, h or d)";
				return CARVE_EPARSE;
			}
			k = (int)(u - units);
			p++;
		}
		if (k <= last) {
			if (why)
				*why = "units must go from largest to smallest, each once (1d2h30m)";
			return CARVE_EPARSE;
		}
		last = k;
		total += v * mult[k];
		if (total > MAX_SPAN)
			goto range;
	} while (*p);
	*out = neg ? -total : total;
	return 0;
range:
	if (why)
		*why = "longer than 100 years";
	return CARVE_ERANGE;
}

/* ---- helpers shared by the loaders ---- */

static const char *keep_name(struct carve_jobs *js, const char *name)
{
	return carve_arena_strdup(carve__jobs_arena(js), name ? name : "(trace)");
}

static bool parse_demand(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s)
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !(v > 0.0 && v <= 1.0))
		return false;
	*out = v;
	return true;
}

/* Milli of one GPU: "0.5", "500m", 1..999. */
static bool parse_fraction(const char *s, int32_t *out)
{
	int64_t m;

	if (carve_qty_parse(s, &m, NULL) || m < 1 || m > 999)
		return false;
	*out = (int32_t)m;
	return true;
}

/* Bytes quantity to whole MiB, rounded up; false when negative or too big. */
static bool bytes_to_mib(int64_t milli, uint32_t *out)
{
	int64_t mib;

	if (milli < 0)
		return false;
	mib = milli / MIB_MILLI + (milli % MIB_MILLI != 0);
	if (mib > UINT32_MAX)
		return false;
	*out = (uint32_t)mib;
	return true;
}

/*
 * Adds j.  Reports a failure at pos (the name's position) with the list's
 * message and counts the job as skipped.  Returns CARVE_ENOMEM, else 0.
 */
static int add_job(struct carve_jobs *js, const struct carve_job *j, struct carve_diags *d,
		   struct carve_pos pos, const char *prefix, size_t *skipped)
{
	struct carve_error err = {0, ""};
	int rc = carve_jobs_add(js, j, &err);

	if (rc >= 0)
		return 0;
	carve_diag_error(d, pos, "%s%s", prefix, err.text);
	if (skipped)
		(*skipped)++;
	return rc == CARVE_ENOMEM ? rc : 0;
}

/* ---- CSV ---- */

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
	if (*s && !parse_fraction(s, &ps->gpu_milli)) {
		carve_diag_error(r->d, cpos(r, col),
				 "gpu_fraction: expected a share of one GPU in (0, 1) such as 0.5 "
				 "or 500m, got '%s'", s);
		ok = false;
	}
	if (csv_qty(r, f, C_GMEM, &v, &given) && given && !bytes_to_mib(v, &ps->gpu_mem_mib)) {
		carve_diag_error(r->d, cpos(r, f[r->pos[C_GMEM]].col), "gpu_memory: too large");
		ok = false;
	} else if (r->pos[C_GMEM] >= 0 && f[r->pos[C_GMEM]].len && !given) {
		ok = false;
	}
	return ok;
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
	csv_span(r, f, C_ARRIVAL, &j.arrival);
	csv_span(r, f, C_DURATION, &j.duration);
	j.ns = fstr(r, f, C_NS, NULL);
	sv = fstr(r, f, C_QUEUE, NULL);
	j.queue = *sv ? sv : NULL;
	csv_int(r, f, C_PRIO, INT32_MIN, INT32_MAX, &prio);
	j.priority = (int32_t)prio;
	if (csv_int(r, f, C_COUNT, 1, MAX_COUNT, &count) &&
	    csv_int(r, f, C_MINCOUNT, 1, MAX_COUNT, &minc) && minc > count) {
		carve_diag_error(r->d, cpos(r, f[r->pos[C_MINCOUNT]].col),
				 "min_count: %lld is more than count %lld", (long long)minc,
				 (long long)count);
	}
	ps.count = (int32_t)count;
	ps.min_count = (int32_t)minc;
	csv_requests(r, f, &ps);
	csv_lists(r, f, &ps);
	sv = fstr(r, f, C_DEMAND, &col);
	if (*sv && !parse_demand(sv, &j.demand))
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
	rc = add_job(r->js, &j, r->d, cpos(r, f[r->pos[C_NAME]].col), "", skipped);
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
	r.file = keep_name(js, name);
	if (!r.file)
		return CARVE_ENOMEM;
	carve_arena_init(&r.scratch);
	if (len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
		p += 3;
	for (r.line = 1; p < end && !rc; r.line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		if (e > p && e[-1] == '\r')
			e--;
		if (r.line == 1) {
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

/* ---- YAML ---- */

#define MAX_PODSETS 8

struct ypodset {
	struct carve_job_podset ps;
	struct carve_pos count_pos, min_pos;
	bool has_min;
};

struct yjob {
	struct carve_job j;
	struct ypodset ps[MAX_PODSETS];
	size_t nps;
	struct carve_pos name_pos;
};

static bool y_span(struct ld *ld, const struct ynode *v, int64_t *out)
{
	const char *why = NULL;

	if (v->kind != YN_SCALAR) {
		ld_error(ld, v->pos, "expected seconds or a span like 2h30m, got %s",
			 ytree_kind_name(v));
		return false;
	}
	if (carve_jobs_parse_span(v->str, out, &why)) {
		ld_error(ld, v->pos, "%s, got '%s'", why, v->str);
		return false;
	}
	return true;
}

static void f_name(struct ld *ld, const struct ynode *v, void *o)
{
	struct yjob *y = o;

	if (ld_str(ld, v, &y->j.name) && !*y->j.name)
		ld_error(ld, v->pos, "empty job name");
	y->name_pos = v->pos;
}

static void f_arrival(struct ld *ld, const struct ynode *v, void *o)
{
	struct yjob *y = o;

	if (y_span(ld, v, &y->j.arrival) && y->j.arrival < 0)
		ld_error(ld, v->pos, "must not be negative (got '%s')", v->str);
}

static void f_duration(struct ld *ld, const struct ynode *v, void *o)
{
	struct yjob *y = o;

	if (y_span(ld, v, &y->j.duration) && y->j.duration <= 0)
		ld_error(ld, v->pos, "must be positive (got '%s')", v->str);
}

static void f_ns(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct yjob *)o)->j.ns);
}

static void f_queue(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct yjob *)o)->j.queue);
}

static void f_priority(struct ld *ld, const struct ynode *v, void *o)
{
	ld_i32(ld, v, INT32_MIN, INT32_MAX, &((struct yjob *)o)->j.priority);
}

static void f_demand(struct ld *ld, const struct ynode *v, void *o)
{
	if (v->kind != YN_SCALAR || !parse_demand(v->str, &((struct yjob *)o)->j.demand))
		ld_error(ld, v->pos, "expected a number in (0, 1], got %s%s%s",
			 v->kind == YN_SCALAR ? "'" : "",
			 v->kind == YN_SCALAR ? v->str : ytree_kind_name(v),
			 v->kind == YN_SCALAR ? "'" : "");
}

static void f_checkpoint(struct ld *ld, const struct ynode *v, void *o)
{
	ld_bool(ld, v, &((struct yjob *)o)->j.checkpoint);
}

static void f_class(struct ld *ld, const struct ynode *v, void *o)
{
	const char **c = &((struct yjob *)o)->j.job_class;

	if (ld_str(ld, v, c) && !carve__job_class_ok(*c)) {
		ld_error(ld, v->pos, "expected 1-63 letters, digits, '-', '_' or '.', got '%s'",
			 *c);
		*c = NULL;
	}
}

static void f_ps_name(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct ypodset *)o)->ps.name);
}

static void f_ps_count(struct ld *ld, const struct ynode *v, void *o)
{
	struct ypodset *y = o;

	ld_i32(ld, v, 1, MAX_COUNT, &y->ps.count);
	y->count_pos = v->pos;
}

static void f_ps_min(struct ld *ld, const struct ynode *v, void *o)
{
	struct ypodset *y = o;

	y->has_min = ld_i32(ld, v, 1, MAX_COUNT, &y->ps.min_count);
	y->min_pos = v->pos;
}

static void f_ps_requests(struct ld *ld, const struct ynode *v, void *o)
{
	struct ypodset *y = o;
	struct carve_reslist rl;
	struct carve_req *reqs;
	size_t i;

	if (!ld_resmap_nonneg(ld, v, &rl) || !rl.n)
		return;
	reqs = carve_arena_alloc(ld->a, rl.n * sizeof(*reqs));
	if (!reqs) {
		ld_error(ld, v->pos, "out of memory");
		return;
	}
	for (i = 0; i < rl.n; i++) {
		reqs[i].name = rl.v[i].name;
		reqs[i].milli = rl.v[i].milli;
	}
	y->ps.reqs = reqs;
	y->ps.nreqs = rl.n;
}

static void f_ps_fraction(struct ld *ld, const struct ynode *v, void *o)
{
	if (v->kind != YN_SCALAR || !parse_fraction(v->str, &((struct ypodset *)o)->ps.gpu_milli))
		ld_error(ld, v->pos, "expected a share of one GPU in (0, 1) such as 0.5 or 500m, "
			 "got %s%s%s", v->kind == YN_SCALAR ? "'" : "",
			 v->kind == YN_SCALAR ? v->str : ytree_kind_name(v),
			 v->kind == YN_SCALAR ? "'" : "");
}

static void f_ps_gmem(struct ld *ld, const struct ynode *v, void *o)
{
	int64_t m;

	if (ld_qty_nonneg(ld, v, &m) && !bytes_to_mib(m, &((struct ypodset *)o)->ps.gpu_mem_mib))
		ld_error(ld, v->pos, "'%s' is too large", v->str);
}

static void f_ps_models(struct ld *ld, const struct ynode *v, void *o)
{
	struct ypodset *y = o;
	const char **s;

	if (ld_strlist(ld, v, &s, &y->ps.nmodels, NULL))
		y->ps.models = s;
}

static void f_ps_selector(struct ld *ld, const struct ynode *v, void *o)
{
	struct ypodset *y = o;
	struct carve_kvlist kv;
	struct carve_label *sel;
	size_t i;

	if (!ld_kvmap(ld, v, &kv) || !kv.n)
		return;
	sel = carve_arena_alloc(ld->a, kv.n * sizeof(*sel));
	if (!sel) {
		ld_error(ld, v->pos, "out of memory");
		return;
	}
	for (i = 0; i < kv.n; i++) {
		sel[i].key = kv.v[i].key;
		sel[i].value = kv.v[i].value;
	}
	y->ps.selector = sel;
	y->ps.nselector = kv.n;
}

static const struct ld_field podset_fields[] = {
	{"name", f_ps_name, 0},
	{"count", f_ps_count, 0},
	{"minCount", f_ps_min, 0},
	{"requests", f_ps_requests, 0},
	{"gpuFraction", f_ps_fraction, 0},
	{"gpuMemory", f_ps_gmem, 0},
	{"gpuModels", f_ps_models, 0},
	{"nodeSelector", f_ps_selector, 0},
	{NULL, NULL, 0},
};

static void y_podset(struct ld *ld, const struct ynode *item, size_t i, void *o)
{
	struct yjob *y = o;
	struct ypodset *ps;

	if (i >= MAX_PODSETS) {
		if (i == MAX_PODSETS)
			ld_error(ld, item->pos, "at most %d podSets per job", MAX_PODSETS);
		return;
	}
	ps = &y->ps[y->nps++];
	ps->ps.count = 1;
	ps->count_pos = item->pos;
	ld_fields(ld, item, podset_fields, ps);
	if (ps->has_min && ps->ps.min_count > ps->ps.count) {
		size_t old = ld_push(ld, ".minCount");

		ld_error(ld, ps->min_pos, "%d is more than count %d", (int)ps->ps.min_count,
			 (int)ps->ps.count);
		ld_pop(ld, old);
	}
}

static void f_podsets(struct ld *ld, const struct ynode *v, void *o)
{
	struct yjob *y = o;

	if (!ld_list(ld, v, y_podset, o))
		return;
	if (!y->nps)
		ld_error(ld, v->pos, "at least one podSet is needed");
}

static const struct ld_field job_fields[] = {
	{"name", f_name, LD_REQUIRED},
	{"arrival", f_arrival, LD_REQUIRED},
	{"duration", f_duration, LD_REQUIRED},
	{"namespace", f_ns, 0},
	{"queue", f_queue, 0},
	{"priority", f_priority, 0},
	{"demand", f_demand, 0},
	{"checkpoint", f_checkpoint, 0},
	{"class", f_class, 0},
	{"podSets", f_podsets, LD_REQUIRED},
	{NULL, NULL, 0},
};

struct ytrace {
	struct carve_jobs *js;
	size_t *skipped;
	int rc;
};

static void y_job(struct ld *ld, const struct ynode *item, size_t i, void *o)
{
	struct ytrace *t = o;
	struct carve_job_podset ps[MAX_PODSETS];
	size_t e0 = ld->d->nerrors, k, oldlen = ld->pathlen;
	const char *okind = ld->kind;
	char oldpath[LD_PATH_MAX];
	const struct ynode *nm = ytree_get(item, "name");
	struct yjob y;

	if (t->rc)
		return;
	memset(&y, 0, sizeof(y));
	memcpy(oldpath, ld->path, sizeof(oldpath));
	/* Messages name the job when it has a name: "job x: duration: ...". */
	ld->kind = "job";
	if (nm && nm->kind == YN_SCALAR && *nm->str) {
		ld->name = nm->str;
		ld_pop(ld, 0);
	} else {
		ld->kind = "Trace";
	}
	y.j.pos = item->pos;
	y.name_pos = item->pos;
	ld_fields(ld, item, job_fields, &y);
	if (ld->d->nerrors == e0) {
		for (k = 0; k < y.nps; k++)
			ps[k] = y.ps[k].ps;
		y.j.npodsets = y.nps;
		y.j.podsets = ps;
		struct carve_error err = {0, ""};
		int rc = carve_jobs_add(t->js, &y.j, &err);

		if (rc < 0) {
			ld_pop(ld, 0);
			ld_error(ld, y.name_pos, "%s", err.text);
			if (t->skipped)
				(*t->skipped)++;
			if (rc == CARVE_ENOMEM)
				t->rc = rc;
		}
	} else if (t->skipped) {
		(*t->skipped)++;
	}
	(void)i;
	ld->kind = okind;
	ld->name = NULL;
	memcpy(ld->path, oldpath, sizeof(oldpath));
	ld->pathlen = oldlen;
}

static void f_jobs(struct ld *ld, const struct ynode *v, void *o)
{
	ld_list(ld, v, y_job, o);
}

static void f_api(struct ld *ld, const struct ynode *v, void *o)
{
	const char *s;

	(void)o;
	if (ld_str(ld, v, &s) && strcmp(s, "carve.dev/v1alpha1"))
		ld_error(ld, v->pos, "expected carve.dev/v1alpha1, got '%s'", s);
}

static void f_kind(struct ld *ld, const struct ynode *v, void *o)
{
	(void)ld, (void)v, (void)o; /* checked before the fields */
}

static const struct ld_field trace_fields[] = {
	{"apiVersion", f_api, LD_REQUIRED},
	{"kind", f_kind, LD_REQUIRED},
	{"metadata", NULL, 0},
	{"jobs", f_jobs, LD_REQUIRED},
	{NULL, NULL, 0},
};

static void y_doc(struct ld *ld, const struct ydoc *doc, struct ytrace *t)
{
	const struct ynode *root = doc->root, *kind;

	ld->kind = "Trace";
	ld->name = NULL;
	ld_pop(ld, 0);
	if (!root || ytree_is_null(root))
		return;
	if (root->kind != YN_MAP) {
		carve_diag_error(ld->d, root->pos, "expected a Trace mapping (apiVersion: "
				 "carve.dev/v1alpha1, kind: Trace, jobs: [...]), got %s",
				 ytree_kind_name(root));
		return;
	}
	kind = ytree_get(root, "kind");
	if (kind && (kind->kind != YN_SCALAR || strcmp(kind->str, "Trace"))) {
		carve_diag_error(ld->d, kind->pos, "Trace: kind: expected Trace in a trace file, "
				 "got '%s'; document skipped",
				 kind->kind == YN_SCALAR ? kind->str : ytree_kind_name(kind));
		return;
	}
	ld_fields(ld, root, trace_fields, t);
}

int carve_jobs_load_yaml_buf(struct carve_jobs *js, const char *name, const char *buf,
			     size_t len, struct carve_diags *d, size_t *skipped)
{
	struct carve_arena a;
	struct ytrace t = {js, skipped, 0};
	struct ydocs docs;
	struct ld ld;
	size_t i;
	int rc;

	if (!js || !d || (len && !buf))
		return CARVE_EINVAL;
	memset(&ld, 0, sizeof(ld));
	ld.file = keep_name(js, name);
	if (!ld.file)
		return CARVE_ENOMEM;
	carve_arena_init(&a);
	ld.a = &a;
	ld.d = d;
	ld.buf = buf;
	ld.buflen = len;
	rc = ytree_parse(&a, ld.file, buf, len, 0, 0, d, &docs);
	if (rc != CARVE_ENOMEM) {
		for (i = 0; i < docs.n && !t.rc; i++)
			y_doc(&ld, &docs.v[i], &t);
		rc = t.rc;
	}
	carve_arena_cleanup(&a);
	return rc == CARVE_ENOMEM ? rc : 0;
}

/* ---- files and directories ---- */

typedef int (*load_buf_fn)(struct carve_jobs *, const char *, const char *, size_t,
			   struct carve_diags *, size_t *);

static int load_file(struct carve_jobs *js, const char *path, struct carve_diags *d,
		     size_t *skipped, load_buf_fn fn)
{
	char *buf;
	size_t len;
	int rc;

	if (!js || !path || !d)
		return CARVE_EINVAL;
	rc = carve__read_file(d, path, MAX_FILE_BYTES, &buf, &len);
	if (rc)
		return rc;
	rc = fn(js, path, buf, len, d, skipped);
	carve_free(buf);
	return rc;
}

int carve_jobs_load_csv(struct carve_jobs *js, const char *path, struct carve_diags *d,
			size_t *skipped)
{
	return load_file(js, path, d, skipped, carve_jobs_load_csv_buf);
}

int carve_jobs_load_yaml(struct carve_jobs *js, const char *path, struct carve_diags *d,
			 size_t *skipped)
{
	return load_file(js, path, d, skipped, carve_jobs_load_yaml_buf);
}

/* The one list of carve's trace file extensions. */
static const char *const trace_exts[] = {".trace.csv", ".trace.yaml", ".trace.yml"};

bool carve_jobs_is_trace_name(const char *path)
{
	size_t i;

	for (i = 0; i < sizeof(trace_exts) / sizeof(trace_exts[0]); i++)
		if (carve__has_ext(path, trace_exts[i]))
			return true;
	return false;
}

bool carve_jobs_dir_has_trace(const char *dir)
{
	struct carve_diags d;
	char **names;
	size_t n = 0;
	bool found;

	carve_diags_init(&d);
	found = !carve__walk_dir(&d, dir, carve_jobs_is_trace_name, &names, &n) && n > 0;
	if (found)
		carve__walk_free(names, n);
	carve_diags_cleanup(&d);
	return found;
}

static int load_one(struct carve_jobs *js, const char *path, struct carve_diags *d,
		    size_t *skipped)
{
	if (carve__has_ext(path, ".csv"))
		return carve_jobs_load_csv(js, path, d, skipped);
	if (carve__has_ext(path, ".yaml") || carve__has_ext(path, ".yml"))
		return carve_jobs_load_yaml(js, path, d, skipped);
	carve_diag_error(d, (struct carve_pos){keep_name(js, path), 0, 0},
			 "not a trace file: expected a .csv, .yaml or .yml name");
	return CARVE_EIO;
}

int carve_jobs_load_path(struct carve_jobs *js, const char *path, struct carve_diags *d,
			 size_t *skipped)
{
	char **names;
	size_t n, i;
	struct stat st;
	int rc;

	if (!js || !path || !d)
		return CARVE_EINVAL;
	if (stat(path, &st)) {
		carve_diag_error(d, (struct carve_pos){0}, "cannot open %s: %s", path,
				 strerror(errno));
		return CARVE_EIO;
	}
	if (!S_ISDIR(st.st_mode))
		return load_one(js, path, d, skipped);
	rc = carve__walk_dir(d, path, carve_jobs_is_trace_name, &names, &n);
	if (rc)
		return rc;
	for (i = 0; i < n && rc != CARVE_ENOMEM; i++) {
		int r = load_one(js, names[i], d, skipped);

		if (r && !rc)
			rc = r;
	}
	carve__walk_free(names, n);
	return rc;
}

/* ---- openb ---- */

int carve_jobs_from_openb(struct carve_jobs *js, const struct carve_trace *t,
			  struct carve_diags *d, size_t *skipped)
{
	int64_t first = INT64_MAX, last = 0;
	size_t i;
	int rc;

	if (!js || !t || !d)
		return CARVE_EINVAL;
	for (i = 0; i < t->n; i++) {
		const struct carve_task *k = &t->tasks[i];

		if (k->creation_time >= 0 && k->creation_time < first)
			first = k->creation_time;
		if (k->creation_time > last)
			last = k->creation_time;
		if (k->deletion_time > last)
			last = k->deletion_time;
		if (k->scheduled_time > last)
			last = k->scheduled_time;
	}
	if (first == INT64_MAX)
		first = 0;
	for (i = 0; i < t->n; i++) {
		const struct carve_task *k = &t->tasks[i];
		int64_t c = k->creation_time >= 0 ? k->creation_time : first;
		struct carve_job_podset ps;
		struct carve_req reqs[3];
		struct carve_job j;

		if (k->deletion_time >= 0 && k->deletion_time < c) {
			carve_diag_error(d, k->pos, "deletion_time: %lld is before creation_time "
					 "%lld (negative duration); row skipped",
					 (long long)k->deletion_time, (long long)c);
			if (skipped)
				(*skipped)++;
			continue;
		}
		memset(&j, 0, sizeof(j));
		memset(&ps, 0, sizeof(ps));
		j.name = k->name;
		j.arrival = c - first;
		j.duration = (k->deletion_time >= 0 ? k->deletion_time : last) - c;
		if (j.duration < 1)
			j.duration = 1;
		j.pos = k->pos;
		reqs[0] = (struct carve_req){CARVE_RES_NAME_CPU, k->cpu_milli};
		reqs[1] = (struct carve_req){CARVE_RES_NAME_MEMORY, k->memory_mib * MIB_MILLI};
		ps.nreqs = 2;
		if (k->num_gpu > 0 && k->gpu_milli >= 1000)
			reqs[ps.nreqs++] = (struct carve_req){CARVE_RES_NAME_GPU,
							      (int64_t)k->num_gpu * 1000};
		else if (k->num_gpu > 0)
			ps.gpu_milli = k->gpu_milli;
		ps.reqs = reqs;
		ps.count = 1;
		ps.nmodels = k->nmodels;
		ps.models = k->models;
		j.npodsets = 1;
		j.podsets = &ps;
		rc = add_job(js, &j, d, k->pos, "", skipped);
		if (rc)
			return rc;
	}
	return 0;
}
