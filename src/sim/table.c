/*
 * table.c - the replay's result as the table people read (`carve
 * simulate`, -o table, the default; carve_report_table in
 * include/carve/report.h): the run's settings in a few
 * lines, then one column per model (carve first), a difference column
 * (carve against the best baseline on that row), and the figures in
 * blocks: inside the window, makespan and backlog, per queue, per class.
 * docs/simulator.md ("Reading the table") says what each row is.
 *
 * Invariants: every number goes through carve_fmt (include/carve/format.h)
 * and every label is carve's own words; names from the input (queues,
 * classes, paths) are written escaped (carve_fputs_esc).  A figure is read
 * by its JSON path, so a key a run lacks (an older run object) leaves its
 * cell "-" and a row no run has is left out.  With --seeds a run is
 * {"median", "min", "max", "per_seed"}: the cells are the medians, and a
 * row "min-max" under each figure gives the spread.
 * Ownership: borrows the result and the stream.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "carve/diag.h"
#include "carve/format.h"
#include "carve/report.h"

#define LABEL_W 38
#define CELL_W 15
#define MAX_RUNS 8

/* The runs of a result, in its order. */
struct runs {
	size_t n;
	const char *name[MAX_RUNS];
	const json_t *run[MAX_RUNS];  /* a run, or the median of a seeded run */
	const json_t *min[MAX_RUNS];  /* seeded: the minimum and maximum; NULL otherwise */
	const json_t *max[MAX_RUNS];
	size_t nseeds;                /* 0: not seeded */
	int carve;                    /* index of carve; -1 none */
	FILE *out;                    /* where the table goes */
};

/* One figure: its label, its JSON path in a run ("$" is the queue or
 * class of the block), the path read when the first is missing (NULL
 * none), its unit and which way is better (+1 higher, -1 lower, 0 none). */
struct fig {
	const char *label;
	const char *path[5];
	const char *alt[5];
	enum carve_unit unit;
	int better;
	bool censorable;              /* a wait: marked when jobs were censored */
};

/* ---- reading ------------------------------------------------------------------ */

static const json_t *at(const json_t *o, const char *const *path, const char *name)
{
	size_t i;

	for (i = 0; i < 5 && path[i] && o; i++)
		o = json_object_get(o, !strcmp(path[i], "$") ? name : path[i]);
	return o;
}

static double value(const json_t *run, const struct fig *f, const char *name)
{
	const json_t *v = at(run, f->path, name);

	if (!v && f->alt[0])
		v = at(run, f->alt, name);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* True when the figure's key exists in run, even as null. */
static bool present(const json_t *run, const struct fig *f, const char *name)
{
	return at(run, f->path, name) || (f->alt[0] && at(run, f->alt, name));
}

/* Jobs censored in the wait object a censorable figure belongs to (its
 * path without the last key); 0 when it says none. */
static double censored(const json_t *run, const struct fig *f, const char *name)
{
	const char *p[5] = {NULL};
	const json_t *o, *c;
	size_t i;

	for (i = 0; i + 1 < 5 && f->path[i + 1]; i++)
		p[i] = f->path[i];
	o = at(run, p, name);
	c = json_object_get(o, "censored"); /* not still_waiting: older runs left those out */
	return json_is_number(c) ? json_number_value(c) : 0;
}

/* ---- writing ------------------------------------------------------------------ */

/* Columns a UTF-8 string takes (continuation bytes take none). */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

static void cell(FILE *out, const char *s, size_t w)
{
	size_t n = width(s);

	fprintf(out, "  %*s%s", n < w ? (int)(w - n) : 0, "", s);
}

static void label(FILE *out, const char *s)
{
	size_t n = width(s);

	fprintf(out, "%s%*s", s, n < LABEL_W ? (int)(LABEL_W - n) : 0, "");
}

/* The index of the best baseline for f (by its better direction) among
 * those with a value; -1 when none or the figure has no direction. */
static int best_baseline(const struct runs *r, const double *v, int better)
{
	int best = -1;
	size_t i;

	if (!better || r->carve < 0)
		return -1;
	for (i = 0; i < r->n; i++) {
		if ((int)i == r->carve || isnan(v[i]))
			continue;
		if (best < 0 || (better > 0 ? v[i] > v[best] : v[i] < v[best]))
			best = (int)i;
	}
	return best;
}

static bool any_baseline(const struct runs *r)
{
	return r->carve >= 0 && r->n > 1;
}

/* One figure's row (and with seeds its spread row); nothing when no run
 * has the figure.  *marked is set when a cell was marked censored. */
static void row(const struct runs *r, const struct fig *f, const char *name, bool *marked)
{
	FILE *out = r->out;
	double v[MAX_RUNS];
	char b[CARVE_FMT_LEN + 4];
	bool any = false, nullable = false;
	size_t i;
	int best;

	for (i = 0; i < r->n; i++) {
		v[i] = value(r->run[i], f, name);
		any |= !isnan(v[i]);
		nullable |= present(r->run[i], f, name);
	}
	if (!any && !(nullable && f->unit == CARVE_UNIT_SEC && !f->censorable))
		return;
	label(r->out, f->label);
	for (i = 0; i < r->n; i++) {
		if (!isnan(v[i]))
			carve_fmt(b, sizeof(b), f->unit, v[i]);
		else if (present(r->run[i], f, name) && !strcmp(f->path[0], "makespan_s"))
			strcpy(b, "not all done");
		else
			strcpy(b, "-");
		if (f->censorable && !isnan(v[i]) && censored(r->run[i], f, name) > 0) {
			strcat(b, " *");
			*marked = true;
		} else {
			strcat(b, "  ");  /* every cell keeps the mark's place: columns align */
		}
		cell(r->out, b, CELL_W);
	}
	best = best_baseline(r, v, f->better);
	if (any_baseline(r)) {
		if (best >= 0 && !isnan(v[r->carve])) {
			char d[CARVE_FMT_LEN * 2];

			carve_fmt_diff(b, sizeof(b), f->unit, v[best], v[r->carve], false);
			if (r->n > 2)
				snprintf(d, sizeof(d), "%s vs %s", b, r->name[best]);
			else
				snprintf(d, sizeof(d), "%s", b);
			fprintf(out, "  %s", d);
		}
	}
	fprintf(out, "\n");
	if (!r->nseeds)
		return;
	label(r->out, "    min\xe2\x80\x93max over the seeds");
	for (i = 0; i < r->n; i++) {
		double lo = value(r->min[i], f, name), hi = value(r->max[i], f, name);

		if (isnan(lo) || isnan(hi))
			strcpy(b, "-");
		else
			carve_fmt_range(b, sizeof(b), f->unit, lo, hi);
		strcat(b, "  ");
		cell(r->out, b, CELL_W);
	}
	fprintf(out, "\n");
}

static void rows(const struct runs *r, const struct fig *f, size_t n, const char *name,
		 bool *marked)
{
	size_t i;

	for (i = 0; i < n; i++)
		row(r, &f[i], name, marked);
}

/* A block heading naming a queue or class from the input, escaped. */
static void heading(FILE *out, const char *what, const char *name)
{
	fprintf(out, "\n%s", what);
	if (name) {
		fputc(' ', out);
		carve_fputs_esc(name, out);
	}
	fputc('\n', out);
}

#define P(...) {__VA_ARGS__, NULL}

static const struct fig window_figs[] = {
	{"Effective GPU utilisation", P("effective_utilisation_pct"), {NULL}, CARVE_UNIT_PCT, +1, false},
	{"GPU allocation (held)", P("gpu_allocation_pct"), {NULL}, CARVE_UNIT_PCT, 0, false},
	{"Fragmentation", P("fragmentation_pct"), {NULL}, CARVE_UNIT_PCT, -1, false},
	{"First-time success (multi-pod jobs)", P("first_time_success_pct"), {NULL}, CARVE_UNIT_PCT, +1, false},
	{"GPU-hours held", P("gpu_hours", "held"), {NULL}, CARVE_UNIT_GPUH, -1, false},
	{"GPU-hours of useful work", P("gpu_hours", "useful"), {NULL}, CARVE_UNIT_GPUH, +1, false},
	{"GPU-hours the trace asks", P("gpu_hours", "asked"), {NULL}, CARVE_UNIT_GPUH, 0, false},
	{"GPU-hours held per completed job", P("gpu_hours_per_job"), {NULL}, CARVE_UNIT_GPUH, -1, false},
	{"Preemptions", P("preemptions"), {NULL}, CARVE_UNIT_COUNT, -1, false},
	{"Gang timeouts", P("gang_timeouts"), {NULL}, CARVE_UNIT_COUNT, -1, false},
	{"MIG repartitions", P("mig", "repartitions"), {NULL}, CARVE_UNIT_COUNT, 0, false},
};

static const struct fig end_figs[] = {
	{"Makespan (last job done)", P("makespan_s"), {NULL}, CARVE_UNIT_SEC, -1, false},
	{"Run length (time reached)", P("horizon_s"), {NULL}, CARVE_UNIT_SEC, 0, false},
	{"Jobs waiting at the window's end", P("backlog", "jobs_waiting"), {NULL}, CARVE_UNIT_COUNT, -1, false},
	{"Jobs running at the window's end", P("backlog", "jobs_running"), {NULL}, CARVE_UNIT_COUNT, 0, false},
	{"GPU-hours of work left at the end", P("backlog", "gpu_hours_left"), {NULL}, CARVE_UNIT_GPUH, -1, false},
	{"Jobs in the trace", P("jobs", "total"), {NULL}, CARVE_UNIT_COUNT, 0, false},
	{"Jobs completed", P("jobs", "completed"), {NULL}, CARVE_UNIT_COUNT, +1, false},
	{"Jobs admitted with fewer pods", P("jobs", "partial"), {NULL}, CARVE_UNIT_COUNT, 0, false},
	{"Jobs not done when the run ended", P("jobs", "pending"), {NULL}, CARVE_UNIT_COUNT, -1, false},
	{"  of which never fit", P("jobs", "never_fit"), {NULL}, CARVE_UNIT_COUNT, -1, false},
};

static const struct fig queue_figs[] = {
	{"  First-time success", P("queues", "$", "first_time_success_pct"), {NULL}, CARVE_UNIT_PCT, +1, false},
	{"  Wait to first GPU, median", P("wait_first_gpu_s", "$", "p50"), {NULL}, CARVE_UNIT_SEC, -1, true},
	{"  Wait to first GPU, p95", P("wait_first_gpu_s", "$", "p95"), {NULL}, CARVE_UNIT_SEC, -1, true},
	{"  Wait to first GPU, p99", P("wait_first_gpu_s", "$", "p99"), {NULL}, CARVE_UNIT_SEC, -1, true},
	{"  Wait until every pod runs, median", P("wait_all_pods_s", "$", "p50"), {NULL}, CARVE_UNIT_SEC, -1, true},
	{"  Wait until every pod runs, p95", P("wait_all_pods_s", "$", "p95"), {NULL}, CARVE_UNIT_SEC, -1, true},
	{"  Jobs still waiting at the end", P("wait_first_gpu_s", "$", "censored"),
	 P("wait_first_gpu_s", "$", "still_waiting"), CARVE_UNIT_COUNT, -1, false},
	{"  GPU-hours held per completed job", P("queues", "$", "gpu_hours_per_job"), {NULL}, CARVE_UNIT_GPUH, -1, false},
	{"  Quota: nominal (GPUs)", P("quota", "$", "nominal"), {NULL}, CARVE_UNIT_NUM, 0, false},
	{"  Quota: used, average (GPUs)", P("quota", "$", "used_avg"), {NULL}, CARVE_UNIT_NUM, 0, false},
	{"  Quota: borrowed, average (GPUs)", P("quota", "$", "borrowed_avg"), {NULL}, CARVE_UNIT_NUM, 0, false},
};

static const struct fig class_figs[] = {
	{"  Jobs completed", P("classes", "$", "jobs_completed"), {NULL}, CARVE_UNIT_COUNT, +1, false},
	{"  First-time success", P("classes", "$", "first_time_success_pct"), {NULL}, CARVE_UNIT_PCT, +1, false},
	{"  Wait to first GPU, median", P("classes", "$", "wait_first_gpu_s", "p50"), {NULL}, CARVE_UNIT_SEC, -1, true},
	{"  Wait to first GPU, p95", P("classes", "$", "wait_first_gpu_s", "p95"), {NULL}, CARVE_UNIT_SEC, -1, true},
	{"  Wait until every pod runs, median", P("classes", "$", "wait_all_pods_s", "p50"), {NULL}, CARVE_UNIT_SEC, -1, true},
	{"  Jobs still waiting at the end", P("classes", "$", "wait_first_gpu_s", "censored"),
	 P("classes", "$", "wait_first_gpu_s", "still_waiting"), CARVE_UNIT_COUNT, -1, false},
	{"  GPU-hours held per completed job", P("classes", "$", "gpu_hours_per_job"), {NULL}, CARVE_UNIT_GPUH, -1, false},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- settings ------------------------------------------------------------------ */

/* A string of the JSON, escaped; "-" when v is not a string. */
static void put_str(FILE *out, const json_t *v)
{
	if (json_is_string(v))
		carve_fputs_esc(json_string_value(v), out);
	else
		fputs("-", out);
}

static void setting(FILE *out, const char *name)
{
	fprintf(out, "%-14s", name);
}

static void print_settings(const json_t *s, const struct runs *r)
{
	FILE *out = r->out;
	const json_t *tr = json_object_get(s, "trace"), *man = json_object_get(s, "manifests");
	const json_t *w = json_object_get(s, "window"), *v;
	char a[CARVE_FMT_LEN], b[CARVE_FMT_LEN];
	size_t i;

	if (!json_is_object(s))
		return;
	setting(out, "Trace");
	if (json_is_string(tr)) {
		carve_fputs_esc(json_string_value(tr), out);
	} else if (json_is_object(tr)) {
		const json_t *seeds = json_object_get(tr, "seeds");
		size_t n = json_array_size(seeds);

		fprintf(out, "generated: scenario ");
		put_str(out, json_object_get(tr, "generated"));
		fprintf(out, ", %lld days, %zu seed%s", (long long)json_integer_value(
			json_object_get(tr, "days")), n, n == 1 ? "" : "s");
		if (n)
			fprintf(out, " (%lld to %lld)", (long long)json_integer_value(json_array_get(seeds, 0)),
			       (long long)json_integer_value(json_array_get(seeds, n - 1)));
	} else {
		fprintf(out, "none (the manifests' Workloads)");
	}
	fprintf(out, "\n");
	setting(out, "Manifests");
	json_array_foreach(man, i, v) {
		if (i)
			fprintf(out, ", ");
		put_str(out, v);
	}
	fprintf(out, "\n");
	setting(out, "Window");
	if (json_is_object(w)) {
		const json_t *from = json_object_get(w, "from");

		carve_fmt(a, sizeof(a), CARVE_UNIT_SEC,
			  json_number_value(json_object_get(w, "start_s")));
		carve_fmt(b, sizeof(b), CARVE_UNIT_SEC,
			  json_number_value(json_object_get(w, "end_s")));
		fprintf(out, "%s to %s (%s)\n", a, b, json_is_string(from) &&
		       !strcmp(json_string_value(from), "until") ? "--until" :
		       "the trace's span: first arrival to the last job's arrival + duration");
	} else {
		fprintf(out, "each seed's own trace span\n");
	}
	setting(out, "Models");
	for (i = 0; i < r->n; i++)
		fprintf(out, "%s%s", i ? ", " : "", r->name[i]);
	fprintf(out, "; policy ");
	put_str(out, json_object_get(s, "policy"));
	fprintf(out, ", placer seed %lld\n", (long long)json_integer_value(json_object_get(s, "seed")));
	setting(out, "MIG");
	v = json_object_get(s, "mig");
	if (json_is_string(v) && !strcmp(json_string_value(v), "dynamic"))
		fprintf(out, "dynamic, %s per repartition\n", carve_fmt(a, sizeof(a), CARVE_UNIT_SEC,
			json_number_value(json_object_get(s, "mig_delay_s"))));
	else
		fprintf(out, "static layouts\n");
	if (any_baseline(r) || r->carve < 0) {
		setting(out, "Gang timeout");
		fprintf(out, "%s (baselines)\n", carve_fmt(a, sizeof(a), CARVE_UNIT_SEC,
			json_number_value(json_object_get(s, "gang_timeout_s"))));
	}
	if (json_is_number(json_object_get(s, "until_s"))) {
		setting(out, "Until");
		fprintf(out, "%s\n", carve_fmt(a, sizeof(a), CARVE_UNIT_SEC,
			json_number_value(json_object_get(s, "until_s"))));
	}
}

/* ---- the table ------------------------------------------------------------------ */

/* Names of a per-queue (or per-class) object over every run, first seen
 * first, each once; calls fn(r, name) for each. */
static void each_name(const struct runs *r, const char *const *keys, size_t nkeys,
		      void (*fn)(const struct runs *, const char *, bool *), bool *marked)
{
	size_t i, j, k, l;
	const char *name;
	const json_t *v;

	for (i = 0; i < r->n; i++)
		for (j = 0; j < nkeys; j++)
			json_object_foreach(json_object_get(r->run[i], keys[j]), name, v) {
				bool seen = false;

				(void)v;
				for (k = 0; k <= i && !seen; k++)
					for (l = 0; l < (k == i ? j : nkeys) && !seen; l++)
						seen = json_object_get(json_object_get(r->run[k],
							keys[l]), name) != NULL;
				if (!seen)
					fn(r, name, marked);
			}
}

static void queue_block(const struct runs *r, const char *name, bool *marked)
{
	heading(r->out, "Queue", name);
	rows(r, queue_figs, N(queue_figs), name, marked);
}

static void class_block(const struct runs *r, const char *name, bool *marked)
{
	heading(r->out, "Class", name);
	rows(r, class_figs, N(class_figs), name, marked);
}

int carve_report_table(FILE *out, const json_t *result)
{
	static const char *const qkeys[] = {"quota", "queues", "wait_first_gpu_s"};
	static const char *const ckeys[] = {"classes"};
	const json_t *runs = json_object_get(result, "runs"), *v;
	struct runs r = {.carve = -1, .out = out};
	const char *name;
	bool marked = false;
	size_t i;

	if (!json_is_object(runs))
		return CARVE_EINVAL;
	json_object_foreach((json_t *)runs, name, v) {
		if (r.n == MAX_RUNS)
			break;
		r.name[r.n] = name;
		if (json_is_object(json_object_get(v, "median"))) {
			r.run[r.n] = json_object_get(v, "median");
			r.min[r.n] = json_object_get(v, "min");
			r.max[r.n] = json_object_get(v, "max");
			r.nseeds = json_array_size(json_object_get(v, "per_seed"));
		} else {
			r.run[r.n] = v;
		}
		if (!strcmp(name, "carve"))
			r.carve = (int)r.n;
		r.n++;
	}
	print_settings(json_object_get(result, "settings"), &r);
	if (r.nseeds)
		fprintf(out, "Figures are medians over %zu seeds; the row under each gives the "
		       "min\xe2\x80\x93max.\n", r.nseeds);
	fprintf(out, "\n");
	label(out, "");
	for (i = 0; i < r.n; i++) {
		char h[CARVE_FMT_LEN];

		snprintf(h, sizeof(h), "%s  ", r.name[i]);
		cell(out, h, CELL_W);
	}
	if (any_baseline(&r))
		fprintf(out, "  %s", r.n > 2 ? "carve vs the best baseline" : "carve vs baseline");
	fprintf(out, "\n");
	heading(out, "Inside the window", NULL);
	rows(&r, window_figs, N(window_figs), NULL, &marked);
	heading(out, "Makespan and backlog", NULL);
	rows(&r, end_figs, N(end_figs), NULL, &marked);
	each_name(&r, qkeys, N(qkeys), queue_block, &marked);
	each_name(&r, ckeys, N(ckeys), class_block, &marked);
	if (marked)
		fprintf(out, "\n* counts jobs still waiting at the window's end, their wait taken up to "
		       "it (censored): the true wait is longer.\n");
	return ferror(out) ? CARVE_EIO : 0;
}
