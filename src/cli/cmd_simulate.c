/*
 * cmd_simulate.c - `carve simulate`, two modes:
 *
 *   --mode replay (default): `carve simulate -f MANIFESTS... --trace FILE
 *   [--baseline|--compare kube-default] ...` replays a job trace in virtual
 *   time through the admission engine and/or the kube-default baseline
 *   (src/sim/replay.c, docs/simulator.md) and prints the metrics as JSON
 *   or a table.  SIGINT stops the replay at the next event time and the
 *   partial report is printed.
 *
 *   --mode fill: `--nodes NODES.csv --trace PODS.csv [--policy P[,P...]]
 *   [--seeds 42-51]` runs the FGD paper's fill experiment (src/sim/fill.c)
 *   once per policy and seed and prints, per policy, the unallocated GPU %
 *   at arrived workload 50, 55, ..., 130 % of GPU capacity: median, min and
 *   max over the seeds (JSON), or the medians as a table.
 *
 * Input problems are printed gcc-style on stderr (exit 1, nothing
 * simulated); progress goes to stderr once a run takes longer than a
 * second.  Only this file reads a clock, for that progress.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <sys/stat.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "carve/fill.h"
#include "carve/jobs.h"
#include "carve/place.h"
#include "carve/quantity.h"
#include "carve/report.h"
#include "carve/sim.h"
#include "cli.h"

#define MAX_SEEDS 10000
#define MAX_POLICIES 32
#define PCT_FIRST 50
#define PCT_LAST 130
#define PCT_STEP 5
#define NPCT ((PCT_LAST - PCT_FIRST) / PCT_STEP + 1)

static const char *const paper_policies =
	"random,dotprod,gpuclustering,gpupacking,bestfit,fgd";

static void usage(FILE *out)
{
	size_t col;
	int i;

	fprintf(out,
		"usage: carve simulate [-f] MANIFESTS... --trace FILE [--baseline|--compare\n"
		"                      kube-default] [--policy P] [--seed N] [--until T]\n"
		"                      [--mig static|dynamic] [--gang-timeout T]\n"
		"                      [--skip-invalid] [--workloads [--workload-duration T]]\n"
		"                      [--report OUT.html] [-o json|table]\n"
		"       carve simulate DIR            (manifests and DIR/*.trace.csv or *.trace.yaml)\n"
		"       carve simulate --mode fill --nodes NODES.csv --trace PODS.csv\n"
		"                      [--policy P[,P...]] [--seeds LIST] [-o json|table]\n"
		"\n"
		"--mode replay (the default) replays a job trace in virtual time: arrivals,\n"
		"admission cycles, preemptions (a preempted job restarts, keeping its progress\n"
		"only with checkpointing) and completions, through carve's admission engine\n"
		"and placer, and prints allocation, utilisation, waits, quota use, preemptions\n"
		"and fragmentation (docs/simulator.md).\n"
		"\n"
		"  -f, --file PATH    manifests: YAML file, node CSV or directory (repeatable;\n"
		"                     plain arguments are manifests too)\n"
		"  --trace PATH       the job trace: carve's CSV or YAML trace format\n"
		"                     (docs/trace-format.md), a directory of *.trace.csv /\n"
		"                     *.trace.yaml, or an openb pod CSV (one job per row)\n"
		"  --baseline kube-default\n"
		"                     run only the stock-stack model: whole GPUs, static\n"
		"                     per-queue caps, per-pod scheduling with a gang timeout\n"
		"  --compare kube-default\n"
		"                     run the trace both ways; JSON {\"baseline\", \"carve\"}\n"
		"  --policy P         carve's placement policy (default binpack)\n"
		"  --seed N           placer seed (default 42)\n"
		"  --until T          stop at virtual time T (seconds, or with s/m/h/d)\n"
		"  --mig MODE         static (default) or dynamic MIG repartitioning\n"
		"  --gang-timeout T   baseline gang timeout (default 30m)\n"
		"  --skip-invalid     skip jobs with an unknown queue or a pod no node fits\n"
		"                     (their count on stderr) instead of failing\n"
		"  --workloads        start from the manifests' Kueue Workloads and Volcano\n"
		"                     PodGroups: admitted ones hold their quota and devices\n"
		"                     from the start, pending ones join the trace at time 0\n"
		"                     (carve only; the trace may then be left out)\n"
		"  --workload-duration T\n"
		"                     how long each pending Workload's job runs (default 1h)\n"
		"  --report FILE      also write the HTML report (docs/report.md) to FILE\n"
		"\n"
		"--mode fill runs the fill experiment of the FGD paper (Weng et al., USENIX\n"
		"ATC '23; docs/fgd-results.md) on an openb cluster and trace: per seed the\n"
		"tasks are sorted by name, shuffled, resampled up to 1.3x the GPU capacity and\n"
		"submitted one by one to an empty cluster (nothing departs; a task no node\n"
		"takes is dropped).  It prints the unallocated GPU %% at arrived workload\n"
		"%d, %d, ..., %d %% of capacity: median, min and max over the seeds (JSON), or\n"
		"the medians as a table.\n"
		"\n"
		"  --nodes PATH       openb node CSV (sn,cpu_milli,memory_mib,gpu,model); the\n"
		"                     paper uses openb_node_list_gpu_node.csv\n"
		"  --trace PATH       openb pod CSV (openb_pod_list_*.csv)\n"
		"  --policy LIST      comma-separated placement policies (default the paper's\n"
		"                     %s)\n"
		"                     from:",
		PCT_FIRST, PCT_FIRST + PCT_STEP, PCT_LAST, paper_policies);
	for (i = 0, col = 26; i < carve_policy_count(); i++) {
		const char *name = carve_policy_name(i);

		if (i && col + strlen(name) + 2 > 79) {
			fprintf(out, ",\n%26s", "");
			col = 26;
		} else if (i) {
			fputc(',', out);
			col++;
		}
		col += fprintf(out, " %s", name);
	}
	fprintf(out,
		"\n"
		"  --seeds LIST       seeds: N, A-B or a comma-separated mix (default 42-51)\n"
		"  -o, --output FMT   table (default) or json\n"
		"  -h, --help         this help\n"
		"\n"
		"Fill prints one JSON object per policy ({\"policy\", \"seeds\",\n"
		"\"unallocated_gpu_pct\": {\"50\": {\"median\", \"min\", \"max\"}, ...}}), an array\n"
		"of them for several.\n"
		"Exit status: 0 ok, 1 errors in the input (or an interrupted replay, whose\n"
		"partial report is printed), 2 usage error.\n");
}

/* ---- options ------------------------------------------------------------------ */

static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
	char buf[32];
	char *end;
	unsigned long long v;

	if (!len || len >= sizeof(buf) || s[0] < '0' || s[0] > '9')
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* "42-51", "7", "1,5-6": into seeds[]; false on a malformed list. */
static bool parse_seeds(const char *s, uint64_t *seeds, size_t *n)
{
	*n = 0;
	while (*s) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		const char *dash = memchr(s, '-', len);
		uint64_t a, b;

		if (dash) {
			if (!parse_u64(s, (size_t)(dash - s), &a) ||
			    !parse_u64(dash + 1, len - (size_t)(dash - s) - 1, &b) || b < a)
				return false;
		} else if (!parse_u64(s, len, &a)) {
			return false;
		} else {
			b = a;
		}
		for (;; a++) {
			if (*n == MAX_SEEDS)
				return false;
			seeds[(*n)++] = a;
			if (a == b)
				break;
		}
		if (!comma)
			break;
		s = comma + 1;
		if (!*s)
			return false;
	}
	return *n > 0;
}

static bool known_policy(const char *name)
{
	int i;

	for (i = 0; i < carve_policy_count(); i++)
		if (!strcmp(carve_policy_name(i), name))
			return true;
	return false;
}

/* Splits list (modified in place) at commas into names[]. */
static bool parse_policies(char *list, const char **names, size_t *n)
{
	char *save = NULL, *tok;

	*n = 0;
	if (!*list || list[strlen(list) - 1] == ',')
		return false;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_POLICIES) {
			fprintf(stderr, "carve simulate: more than %d policies\n", MAX_POLICIES);
			return false;
		}
		if (!known_policy(tok)) {
			fprintf(stderr, "carve simulate: unknown policy '%s'\n", tok);
			return false;
		}
		names[(*n)++] = tok;
	}
	return *n > 0;
}

/* ---- statistics and output -------------------------------------------------------- */

/* Per policy: per seed, the bucket values at PCT_FIRST.. step PCT_STEP. */
struct series {
	const char *policy;
	double *v;     /* nseeds x NPCT */
	bool *have;
};

struct summary {
	bool ok;
	double median, min, max;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double round2(double x)
{
	return round(x * 100.0) / 100.0;
}

/* Median (mean of the middle two for an even count), min, max over seeds
 * that reached bucket j. */
static struct summary stat_of(const struct series *s, size_t nseeds, size_t j, double *tmp)
{
	struct summary st = {false, 0, 0, 0};
	size_t i, n = 0;

	for (i = 0; i < nseeds; i++)
		if (s->have[i * NPCT + j])
			tmp[n++] = s->v[i * NPCT + j];
	if (!n)
		return st;
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	st.ok = true;
	st.min = tmp[0];
	st.max = tmp[n - 1];
	st.median = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
	return st;
}

static json_t *series_json(const struct series *s, const uint64_t *seeds, size_t nseeds,
			   double *tmp)
{
	json_t *o = json_object(), *js = json_array(), *u = json_object();
	size_t i, j;
	int bad = !o || !js || !u;

	for (i = 0; !bad && i < nseeds; i++)
		bad |= json_array_append_new(js, json_integer((json_int_t)seeds[i]));
	for (j = 0; !bad && j < NPCT; j++) {
		struct summary st = stat_of(s, nseeds, j, tmp);
		char key[8];
		json_t *b;

		snprintf(key, sizeof(key), "%d", PCT_FIRST + (int)j * PCT_STEP);
		if (!st.ok) {
			bad |= json_object_set_new(u, key, json_null());
			continue;
		}
		b = json_object();
		bad |= !b || json_object_set_new(b, "median", json_real(round2(st.median))) ||
		       json_object_set_new(b, "min", json_real(round2(st.min))) ||
		       json_object_set_new(b, "max", json_real(round2(st.max))) ||
		       json_object_set_new(u, key, b);
	}
	if (!bad)
		bad |= json_object_set_new(o, "policy", json_string(s->policy)) ||
		       json_object_set_new(o, "seeds", js) ||
		       json_object_set_new(o, "unallocated_gpu_pct", u);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int print_json(const struct series *ser, size_t npol, const uint64_t *seeds,
		      size_t nseeds, double *tmp)
{
	json_t *root = npol == 1 ? NULL : json_array();
	size_t i;
	int rc;

	if (npol == 1) {
		root = series_json(&ser[0], seeds, nseeds, tmp);
	} else if (root) {
		for (i = 0; i < npol; i++)
			if (json_array_append_new(root, series_json(&ser[i], seeds, nseeds, tmp))) {
				json_decref(root);
				return CARVE_ENOMEM;
			}
	}
	if (!root)
		return CARVE_ENOMEM;
	rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (rc)
		return CARVE_ENOMEM;
	fputc('\n', stdout);
	return 0;
}

static void print_table(const struct series *ser, size_t npol, size_t nseeds, double *tmp)
{
	size_t i, j;

	printf("# unallocated GPU %% by arrived workload (%% of GPU capacity), median over %zu "
	       "seed%s\n", nseeds, nseeds == 1 ? "" : "s");
	printf("%8s", "arrived");
	for (i = 0; i < npol; i++)
		printf("  %*s", (int)(strlen(ser[i].policy) > 7 ? strlen(ser[i].policy) : 7),
		       ser[i].policy);
	printf("\n");
	for (j = 0; j < NPCT; j++) {
		printf("%8d", PCT_FIRST + (int)j * PCT_STEP);
		for (i = 0; i < npol; i++) {
			struct summary st = stat_of(&ser[i], nseeds, j, tmp);
			int w = (int)(strlen(ser[i].policy) > 7 ? strlen(ser[i].policy) : 7);

			if (st.ok)
				printf("  %*.2f", w, st.median);
			else
				printf("  %*s", w, "-");
		}
		printf("\n");
	}
}

/* ---- running ----------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every (policy, seed) run into ser; progress on stderr past one second. */
static int run_all(struct carve_fill *f, struct series *ser, size_t npol, const uint64_t *seeds,
		   size_t nseeds)
{
	struct carve_fill_result r;
	struct carve_error err;
	double t0 = now_s();
	size_t i, k, j, done = 0;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < npol; i++) {
		for (k = 0; k < nseeds; k++) {
			double t1 = now_s(), t2;

			if (carve_fill_run(f, ser[i].policy, seeds[k], &r, &err)) {
				fprintf(stderr, "carve simulate: %s seed %llu: %s\n", ser[i].policy,
					(unsigned long long)seeds[k], err.text);
				carve_fill_result_cleanup(&r);
				return CARVE_EXIT_FAIL;
			}
			for (j = 0; j < NPCT; j++) {
				size_t b = (size_t)(PCT_FIRST + (int)j * PCT_STEP);

				ser[i].have[k * NPCT + j] = b < r.nbuckets && r.have[b];
				ser[i].v[k * NPCT + j] = b < r.nbuckets ? r.unalloc_pct[b] : 0;
			}
			t2 = now_s();
			done++;
			if (t2 - t0 > 1.0)
				fprintf(stderr,
					"carve simulate: [%zu/%zu] %s seed %llu: %.1f s, %zu tasks, "
					"%zu dropped\n",
					done, npol * nseeds, ser[i].policy,
					(unsigned long long)seeds[k], t2 - t1, r.submitted, r.dropped);
		}
	}
	carve_fill_result_cleanup(&r);
	return 0;
}

/* Loads both inputs, runs, prints; the exit code. */
static int simulate_fill(const char *nodes, const char *trace, const char **pols, size_t npol,
		    const uint64_t *seeds, size_t nseeds, bool table)
{
	struct carve_manifests *m = carve_manifests_create();
	struct carve_trace *t = carve_trace_create();
	struct carve_cluster *c = NULL;
	struct carve_fill *f = NULL;
	struct series *ser = NULL;
	struct carve_error err;
	double *tmp = NULL;
	int rc = CARVE_EXIT_FAIL;
	size_t i;

	if (!m || !t)
		goto out_nomem;
	if (carve_manifests_load_path(m, nodes) == CARVE_ENOMEM ||
	    carve_trace_load_openb(t, trace, &m->diags) == CARVE_ENOMEM)
		goto out_nomem;
	if (!m->diags.nerrors && !m->ncsvnodes)
		carve_diag_error(&m->diags, (struct carve_pos){0},
				 "%s: no openb node rows (expected a CSV with the header "
				 "sn,cpu_milli,memory_mib,gpu,model)", nodes);
	if (!m->diags.nerrors && !t->n)
		carve_diag_error(&m->diags, (struct carve_pos){0}, "%s: no tasks", trace);
	carve_diags_sort(&m->diags);
	carve_diags_print(&m->diags, stderr);
	if (m->diags.nerrors) {
		fprintf(stderr, "carve simulate: %zu error%s in the input; nothing simulated\n",
			m->diags.nerrors, m->diags.nerrors == 1 ? "" : "s");
		goto out;
	}
	c = carve_fill_cluster_csv(m->csvnodes, m->ncsvnodes, &err);
	if (c)
		f = carve_fill_create(c, t->tasks, t->n, NULL, &err);
	if (!c || !f) {
		fprintf(stderr, "carve simulate: %s\n", err.text);
		goto out;
	}
	ser = carve_calloc(npol, sizeof(*ser));
	tmp = carve_calloc(nseeds, sizeof(*tmp));
	if (!ser || !tmp)
		goto out_nomem;
	for (i = 0; i < npol; i++) {
		ser[i].policy = pols[i];
		ser[i].v = carve_calloc(nseeds * NPCT, sizeof(*ser[i].v));
		ser[i].have = carve_calloc(nseeds * NPCT, sizeof(*ser[i].have));
		if (!ser[i].v || !ser[i].have)
			goto out_nomem;
	}
	rc = run_all(f, ser, npol, seeds, nseeds);
	if (rc)
		goto out;
	if (table)
		print_table(ser, npol, nseeds, tmp);
	else if (print_json(ser, npol, seeds, nseeds, tmp))
		goto out_nomem;
	rc = CARVE_EXIT_OK;
	if (fflush(stdout)) {
		fprintf(stderr, "carve simulate: cannot write the result\n");
		rc = CARVE_EXIT_FAIL;
	}
	goto out;
out_nomem:
	fprintf(stderr, "carve simulate: out of memory\n");
	rc = CARVE_EXIT_FAIL;
out:
	for (i = 0; ser && i < npol; i++) {
		carve_free(ser[i].v);
		carve_free(ser[i].have);
	}
	carve_free(ser);
	carve_free(tmp);
	carve_fill_destroy(f);
	carve_cluster_destroy(c);
	carve_trace_destroy(t);
	carve_manifests_destroy(m);
	return rc;
}

/* ---- replay: the trace --------------------------------------------------------------- */

/* True when the file at path starts with the openb pod list's header. */
static bool is_openb(const char *path)
{
	static const char head[] = "name,cpu_milli,memory_mib,num_gpu";
	char buf[sizeof(head)];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(head) - 1, f);
	fclose(f);
	return n == sizeof(head) - 1 && !memcmp(buf, head, n);
}

/*
 * Reads the job trace at path into js; problems go to d.  The one place
 * the replay reads a trace: an openb pod CSV (recognised by its header)
 * becomes one single-pod job per row (carve_jobs_from_openb; t keeps its
 * file names alive), anything else is carve's own trace format, a file or
 * a directory of *.trace.csv / *.trace.yaml (carve_jobs_load_path,
 * docs/trace-format.md).  *skipped counts rows reported and not made into
 * jobs.  Returns 0, CARVE_EIO or CARVE_ENOMEM.
 */
static int load_trace(struct carve_jobs *js, struct carve_trace *t, const char *path,
		      struct carve_diags *d, size_t *skipped)
{
	struct stat st;
	int rc;

	*skipped = 0;
	if (stat(path, &st) || !S_ISREG(st.st_mode) || !is_openb(path))
		return carve_jobs_load_path(js, path, d, skipped);
	rc = carve_trace_load_openb(t, path, d);
	if (rc)
		return rc;
	rc = carve_jobs_from_openb(js, t, d, skipped);
	return rc == CARVE_ENOMEM ? rc : 0;
}

/* ---- replay: running and printing ----------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

struct replay_opts {
	struct carve_sim_opts sim;
	int64_t until;            /* -1: none */
	bool baseline, compare, table;
	const char *report;       /* --report FILE: the HTML report; NULL none */
};

/* Runs one simulation to its end (or SIGINT) with progress on stderr;
 * returns the result object, NULL on failure (reported). */
static json_t *replay_one(struct carve_manifests *m, const struct carve_jobs *js,
			  const struct replay_opts *ro, enum carve_sim_sched sched)
{
	struct carve_sim_opts o = ro->sim;
	struct carve_error err;
	struct carve_sim *s;
	const char *who = sched == CARVE_SIM_KUBE_DEFAULT ? "kube-default" : "carve";
	double t0 = now_s(), last = t0;
	json_t *r;
	int rc;

	o.sched = sched;
	s = carve_sim_create(m, js, &o, &err);
	if (!s) {
		carve_diags_sort(&m->diags);
		carve_diags_print(&m->diags, stderr);
		fprintf(stderr, "carve simulate: %s; nothing simulated\n", err.text);
		return NULL;
	}
	if (carve_sim_skipped(s))
		fprintf(stderr, "carve simulate: %s: skipped %zu invalid job%s\n", who,
			carve_sim_skipped(s), carve_sim_skipped(s) == 1 ? "" : "s");
	do {
		rc = carve_sim_run_events(s, ro->until, 4096, &interrupted, &err);
		if (rc > 0 && now_s() - last > 1.0) {
			last = now_s();
			fprintf(stderr, "carve simulate: %s: t=%llds, %zu events, %zu jobs left, "
				"%.1f s\n", who, (long long)carve_sim_now(s), carve_sim_events(s),
				carve_sim_jobs_left(s), last - t0);
		}
	} while (rc > 0 && !interrupted);
	if (rc < 0) {
		fprintf(stderr, "carve simulate: %s: %s\n", who, err.text);
		carve_sim_destroy(s);
		return NULL;
	}
	if (interrupted)
		fprintf(stderr, "carve simulate: %s: interrupted at t=%llds; partial report\n",
			who, (long long)carve_sim_now(s));
	/* Rejections by the engine at arrival are errors too. */
	if (m->diags.nerrors) {
		carve_diags_sort(&m->diags);
		carve_diags_print(&m->diags, stderr);
	}
	r = carve_sim_result_json(s);
	carve_sim_destroy(s);
	if (!r)
		fprintf(stderr, "carve simulate: out of memory\n");
	return r;
}

/* The number at keys path[0].path[1]... (up to 4, NULL-ended) of o, or NaN. */
static double jnum(json_t *o, const char *const *path)
{
	size_t i;

	for (i = 0; i < 4 && path[i]; i++)
		o = json_object_get(o, path[i]);
	return json_is_number(o) ? json_number_value(o) : NAN;
}

static void cell(double v)
{
	if (isnan(v))
		printf("  %14s", "-");
	else
		printf("  %14.2f", v);
}

/* One row: label, then the value at the key path in each run. */
static void row_path(json_t *const *runs, size_t n, const char *label,
		     const char *const *path)
{
	size_t i;

	printf("%-36s", label);
	for (i = 0; i < n; i++)
		cell(jnum(runs[i], path));
	printf("\n");
}

#define row(runs, n, label, ...) \
	row_path((runs), (n), (label), (const char *const[]){__VA_ARGS__, NULL})

static void heading(const char *h)
{
	printf("\n%s\n", h);
}

static void print_replay_table(json_t *const *runs, const char *const *names, size_t n)
{
	json_t *quota = json_object_get(runs[0], "quota");
	json_t *classes = json_object_get(runs[0], "classes");
	const char *q;
	json_t *v;
	size_t i;
	char label[128];

	printf("%-36s", "metric");
	for (i = 0; i < n; i++)
		printf("  %14s", names[i]);
	printf("\n");
	row(runs, n, "horizon_s", "horizon_s");
	row(runs, n, "jobs completed", "jobs", "completed");
	row(runs, n, "jobs pending at the end", "jobs", "pending");
	row(runs, n, "gpu_allocation_pct", "gpu_allocation_pct");
	row(runs, n, "effective_utilisation_pct", "effective_utilisation_pct");
	row(runs, n, "first_time_success_pct", "first_time_success_pct");
	row(runs, n, "fragmentation_pct", "fragmentation_pct");
	row(runs, n, "preemptions", "preemptions");
	row(runs, n, "gang_timeouts", "gang_timeouts");
	row(runs, n, "gpu_hours_per_job", "gpu_hours_per_job");
	json_object_foreach(quota, q, v) {
		(void)v;
		snprintf(label, sizeof(label), "queue %.28s", q);
		heading(label);
		row(runs, n, "  first_time_success_pct", "queues", q, "first_time_success_pct");
		row(runs, n, "  gpu_hours_per_job", "queues", q, "gpu_hours_per_job");
		row(runs, n, "  wait_first_gpu_s p50", "wait_first_gpu_s", q, "p50");
		row(runs, n, "  wait_first_gpu_s p95", "wait_first_gpu_s", q, "p95");
		row(runs, n, "  wait_first_gpu_s p99", "wait_first_gpu_s", q, "p99");
		row(runs, n, "  quota nominal", "quota", q, "nominal");
		row(runs, n, "  quota used_avg", "quota", q, "used_avg");
		row(runs, n, "  quota borrowed_avg", "quota", q, "borrowed_avg");
	}
	json_object_foreach(classes, q, v) {
		snprintf(label, sizeof(label), "class %.28s", q);
		heading(label);
		row(runs, n, "  jobs completed", "classes", q, "jobs_completed");
		if (!json_is_null(json_object_get(v, "first_time_success_pct")))
			row(runs, n, "  first_time_success_pct", "classes", q,
			    "first_time_success_pct");
		row(runs, n, "  wait_first_gpu_s p50", "classes", q, "wait_first_gpu_s", "p50");
		row(runs, n, "  wait_first_gpu_s p95", "classes", q, "wait_first_gpu_s", "p95");
		row(runs, n, "  gpu_hours_per_job", "classes", q, "gpu_hours_per_job");
	}
}

/* Manifests from each path (the manifest walk leaves trace files out); a
 * directory that holds trace files is the trace too when --trace is not
 * given (the first such directory). */
static int load_inputs(struct carve_manifests *m, char *const *paths, size_t n,
		       const char **trace)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		struct stat st;

		if (!*trace && !stat(paths[i], &st) && S_ISDIR(st.st_mode) &&
		    carve_jobs_dir_has_trace(paths[i]))
			*trace = paths[i];
		rc = carve_manifests_load_path(m, paths[i]);
		if (rc == CARVE_ENOMEM)
			return rc;
	}
	return 0;
}

/* Writes the HTML report of result to path (removed again on failure).
 * Returns 0, or -1 after saying why on stderr. */
static int write_report(const char *path, const json_t *result)
{
	struct carve_error err;
	FILE *f = fopen(path, "w");
	int rc;

	if (!f) {
		fprintf(stderr, "carve simulate: %s: %s\n", path, strerror(errno));
		return -1;
	}
	rc = carve_report_html(f, result, "carve simulate", &err);
	if (fclose(f) && !rc) {
		snprintf(err.text, sizeof(err.text), "%s", strerror(errno));
		rc = CARVE_EIO;
	}
	if (rc) {
		fprintf(stderr, "carve simulate: %s: %s\n", path, err.text);
		remove(path);
		return -1;
	}
	return 0;
}

static int simulate_replay(char *const *paths, size_t npaths, const char *trace,
			   const struct replay_opts *ro)
{
	struct carve_manifests *m = carve_manifests_create();
	struct carve_jobs *js = carve_jobs_create();
	struct carve_trace *t = carve_trace_create();
	json_t *runs[2] = {NULL, NULL}, *root = NULL;
	const char *names[2];
	struct sigaction sa, old;
	size_t skipped = 0, n = 0;
	int rc = CARVE_EXIT_FAIL;

	if (!m || !js || !t || load_inputs(m, paths, npaths, &trace))
		goto out_nomem;
	if (!trace && !ro->sim.workloads) {
		fprintf(stderr, "carve simulate: no trace (--trace FILE, or a DIR holding *.trace.csv or *.trace.yaml, or --workloads)\n");
		rc = CARVE_EXIT_USAGE;
		goto out;
	}
	if (ro->sim.workloads && (ro->baseline || ro->compare)) {
		fprintf(stderr, "carve simulate: --workloads runs carve only: the stock-stack "
			"model cannot start from admitted Workloads\n");
		rc = CARVE_EXIT_USAGE;
		goto out;
	}
	if (trace && load_trace(js, t, trace, &m->diags, &skipped) == CARVE_ENOMEM)
		goto out_nomem;
	if (!m->diags.nerrors && !js->n && trace)
		carve_diag_error(&m->diags, (struct carve_pos){0}, "%s: no jobs", trace);
	if (m->diags.nerrors) {
		carve_diags_sort(&m->diags);
		carve_diags_print(&m->diags, stderr);
		fprintf(stderr, "carve simulate: %zu error%s in the input; nothing simulated\n",
			m->diags.nerrors, m->diags.nerrors == 1 ? "" : "s");
		goto out;
	}
	carve_diags_sort(&m->diags);
	carve_diags_print(&m->diags, stderr); /* warnings */
	m->diags.n = 0;
	if (m->nworkloads + m->npodgroups && !ro->sim.workloads)
		fprintf(stderr, "carve simulate: left out %zu Workload/PodGroup object%s of the "
			"manifests: the trace is the workload (--workloads adds them)\n", m->nworkloads + m->npodgroups,
			m->nworkloads + m->npodgroups == 1 ? "" : "s");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	interrupted = 0;
	if (ro->baseline || ro->compare) {
		names[n] = "kube-default";
		runs[n] = replay_one(m, js, ro, CARVE_SIM_KUBE_DEFAULT);
		if (!runs[n++])
			goto out_sig;
	}
	if (!ro->baseline && interrupted) {
		names[n] = "carve";
		runs[n++] = json_pack("{s:s, s:s, s:b}", "mode", "replay", "scheduler", "carve",
				      "interrupted_before_start", 1);
		if (!runs[n - 1])
			goto out_sig;
	} else if (!ro->baseline) {
		names[n] = "carve";
		runs[n] = replay_one(m, js, ro, CARVE_SIM_CARVE);
		if (!runs[n++])
			goto out_sig;
	}
	if (ro->compare) {
		root = json_object();
		if (!root || json_object_set(root, "baseline", runs[0]) ||
		    json_object_set(root, "carve", runs[1]))
			goto out_sig;
	} else {
		root = json_incref(runs[0]);
	}
	if (ro->table) {
		print_replay_table(runs, names, n);
	} else {
		if (json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
				   JSON_REAL_PRECISION(10)))
			goto out_sig;
		fputc('\n', stdout);
	}
	rc = interrupted ? CARVE_EXIT_FAIL : CARVE_EXIT_OK;
	if (ro->report && write_report(ro->report, root))
		rc = CARVE_EXIT_FAIL;
	if (fflush(stdout)) {
		fprintf(stderr, "carve simulate: cannot write the result\n");
		rc = CARVE_EXIT_FAIL;
	}
out_sig:
	sigaction(SIGINT, &old, NULL);
	goto out;
out_nomem:
	fprintf(stderr, "carve simulate: out of memory\n");
	rc = CARVE_EXIT_FAIL;
out:
	json_decref(root);
	json_decref(runs[0]);
	json_decref(runs[1]);
	carve_jobs_destroy(js);
	carve_trace_destroy(t);
	carve_manifests_destroy(m);
	return rc;
}

/* "90", "90s", "15m", "2h", "7d" -> seconds; false when malformed. */
static bool parse_duration(const char *s, int64_t *out)
{
	uint64_t v;
	size_t len = strlen(s);
	int64_t mul = 1;

	if (len && strchr("smhd", s[len - 1])) {
		mul = s[len - 1] == 's' ? 1 : s[len - 1] == 'm' ? 60 : s[len - 1] == 'h' ? 3600
											   : 86400;
		len--;
	}
	if (!parse_u64(s, len, &v) || v > (uint64_t)INT64_MAX / 86400)
		return false;
	*out = (int64_t)v * mul;
	return true;
}

int cmd_simulate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"mode", required_argument, NULL, 'm'},
		{"nodes", required_argument, NULL, 'n'},
		{"trace", required_argument, NULL, 't'},
		{"policy", required_argument, NULL, 'p'},
		{"seeds", required_argument, NULL, 's'},
		{"seed", required_argument, NULL, 'S'},
		{"file", required_argument, NULL, 'f'},
		{"baseline", required_argument, NULL, 'B'},
		{"compare", required_argument, NULL, 'C'},
		{"until", required_argument, NULL, 'U'},
		{"mig", required_argument, NULL, 'M'},
		{"gang-timeout", required_argument, NULL, 'G'},
		{"skip-invalid", no_argument, NULL, 'K'},
		{"workloads", no_argument, NULL, 'W'},
		{"workload-duration", required_argument, NULL, 'D'},
		{"report", required_argument, NULL, 'R'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static uint64_t seeds[MAX_SEEDS];
	char polbuf[512];
	const char *pols[MAX_POLICIES];
	const char *mode = "replay", *nodes = NULL, *trace = NULL, *policy = NULL;
	char **files;
	size_t nseeds, npol, nfiles = 0;
	struct replay_opts ro;
	bool table = true;
	uint64_t seed = 0;
	int c, rc;

	memset(&ro, 0, sizeof(ro));
	ro.until = -1;
	files = carve_calloc((size_t)argc + 1, sizeof(*files));
	if (!files) {
		fprintf(stderr, "carve simulate: out of memory\n");
		return CARVE_EXIT_FAIL;
	}
	nseeds = 10;
	for (c = 0; c < 10; c++)
		seeds[c] = 42 + (uint64_t)c;
	optind = 1;
	rc = -1;
	while (rc < 0 && (c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 'n':
			nodes = optarg;
			break;
		case 't':
			trace = optarg;
			break;
		case 'p':
			policy = optarg;
			break;
		case 'f':
			files[nfiles++] = optarg;
			break;
		case 's':
			if (!parse_seeds(optarg, seeds, &nseeds)) {
				fprintf(stderr, "carve simulate: --seeds wants N, A-B (A <= B) or a "
					"comma-separated list of them, at most %d seeds, not '%s'\n",
					MAX_SEEDS, optarg);
				rc = CARVE_EXIT_USAGE;
			}
			break;
		case 'S':
			if (!parse_u64(optarg, strlen(optarg), &seed)) {
				fprintf(stderr, "carve simulate: --seed wants a number, not '%s'\n",
					optarg);
				rc = CARVE_EXIT_USAGE;
			}
			ro.sim.seed = seed;
			ro.sim.has_seed = true;
			break;
		case 'B':
		case 'C':
			if (strcmp(optarg, "kube-default")) {
				fprintf(stderr, "carve simulate: unknown baseline '%s' (kube-default)\n",
					optarg);
				rc = CARVE_EXIT_USAGE;
			}
			if (c == 'B')
				ro.baseline = true;
			else
				ro.compare = true;
			break;
		case 'U':
		case 'G':
			if (!parse_duration(optarg, c == 'U' ? &ro.until : &ro.sim.gang_timeout) ||
			    (c == 'G' && ro.sim.gang_timeout == 0)) {
				fprintf(stderr, "carve simulate: --%s wants a duration (90, 90s, 15m, "
					"2h, 7d), not '%s'\n", c == 'U' ? "until" : "gang-timeout",
					optarg);
				rc = CARVE_EXIT_USAGE;
			}
			break;
		case 'M':
			if (!strcmp(optarg, "dynamic")) {
				ro.sim.mig_dynamic = true;
			} else if (!strcmp(optarg, "static")) {
				ro.sim.mig_dynamic = false;
			} else {
				fprintf(stderr, "carve simulate: --mig wants static or dynamic, not "
					"'%s'\n", optarg);
				rc = CARVE_EXIT_USAGE;
			}
			break;
		case 'K':
			ro.sim.skip_invalid = true;
			break;
		case 'W':
			ro.sim.workloads = true;
			break;
		case 'D':
			if (!parse_duration(optarg, &ro.sim.workload_duration) ||
			    ro.sim.workload_duration == 0) {
				fprintf(stderr, "carve simulate: --workload-duration wants a duration "
					"above 0 (90, 90s, 15m, 2h, 7d), not '%s'\n", optarg);
				rc = CARVE_EXIT_USAGE;
			}
			break;
		case 'R':
			ro.report = optarg;
			break;
		case 'o':
			if (!strcmp(optarg, "json")) {
				table = false;
			} else if (!strcmp(optarg, "table")) {
				table = true;
			} else {
				fprintf(stderr, "carve simulate: unknown output format '%s' "
					"(expected json or table)\n", optarg);
				rc = CARVE_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			rc = CARVE_EXIT_OK;
			break;
		default:
			usage(stderr);
			rc = CARVE_EXIT_USAGE;
			break;
		}
	}
	if (rc >= 0)
		goto out;
	rc = CARVE_EXIT_USAGE;
	if (!strcmp(mode, "replay")) {
		while (optind < argc)
			files[nfiles++] = argv[optind++];
		if (ro.baseline && ro.compare) {
			fprintf(stderr, "carve simulate: --baseline and --compare exclude each other\n");
			goto out;
		}
		if (!nfiles) {
			fprintf(stderr, "carve simulate: no manifests (-f PATH or DIR)\n");
			usage(stderr);
			goto out;
		}
		if (policy && !known_policy(policy)) {
			fprintf(stderr, "carve simulate: unknown policy '%s'\n", policy);
			goto out;
		}
		ro.sim.policy = policy;
		ro.table = table;
		rc = simulate_replay(files, nfiles, trace, &ro);
		goto out;
	}
	if (strcmp(mode, "fill")) {
		fprintf(stderr, "carve simulate: unknown mode '%s' (replay or fill)\n", mode);
		goto out;
	}
	if (optind < argc || nfiles) {
		fprintf(stderr, "carve simulate: --mode fill takes no manifests ('%s')\n",
			nfiles ? files[0] : argv[optind]);
		usage(stderr);
		goto out;
	}
	if (!nodes || !trace) {
		fprintf(stderr, "carve simulate: --mode fill needs --nodes and --trace\n");
		usage(stderr);
		goto out;
	}
	if (!policy)
		policy = paper_policies;
	if (strlen(policy) >= sizeof(polbuf)) {
		fprintf(stderr, "carve simulate: --policy list too long\n");
		goto out;
	}
	strcpy(polbuf, policy);
	if (!parse_policies(polbuf, pols, &npol)) {
		fprintf(stderr, "carve simulate: --policy wants a comma-separated list of: ");
		for (c = 0; c < carve_policy_count(); c++)
			fprintf(stderr, "%s%s", c ? ", " : "", carve_policy_name(c));
		fprintf(stderr, "\n");
		goto out;
	}
	rc = simulate_fill(nodes, trace, pols, npol, seeds, nseeds, table);
out:
	carve_free(files);
	return rc;
}
