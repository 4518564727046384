/*
 * cmd_simulate.c - `carve simulate --mode fill --nodes NODES.csv --trace
 * PODS.csv [--policy P[,P...]] [--seeds 42-51] [-o json|table]`.
 *
 * Runs the FGD paper's fill experiment (src/sim/fill.c) once per policy and
 * seed and prints, per policy, the unallocated GPU % at arrived workload
 * 50, 55, ..., 130 % of GPU capacity: median, min and max over the seeds
 * (JSON), or the medians as a table.  Every run is independent.  Input
 * problems are printed gcc-style on stderr (exit 1, nothing simulated);
 * progress goes to stderr once the runs take longer than a second.  Only
 * this file reads a clock, for that progress.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "carve/fill.h"
#include "carve/place.h"
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
		"usage: carve simulate --mode fill --nodes NODES.csv --trace PODS.csv\n"
		"                      [--policy P[,P...]] [--seeds LIST] [-o json|table]\n"
		"\n"
		"--mode fill runs the fill experiment of the FGD paper (Weng et al., USENIX\n"
		"ATC '23; docs/fgd-results.md) on an openb cluster and trace: per seed the\n"
		"tasks are sorted by name, shuffled, resampled up to 1.3x the GPU capacity and\n"
		"submitted one by one to an empty cluster (nothing departs; a task no node\n"
		"takes is dropped).  It prints the unallocated GPU %% at arrived workload\n"
		"%d, %d, ..., %d %% of capacity: median, min and max over the seeds (JSON), or\n"
		"the medians as a table.\n"
		"\n"
		"  --mode MODE        fill (the default).  replay (a trace replayed with its\n"
		"                     arrival and departure times) is not implemented yet\n"
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
		"  -o, --output FMT   json (default) or table\n"
		"  -h, --help         this help\n"
		"\n"
		"One JSON object per policy ({\"policy\", \"seeds\", \"unallocated_gpu_pct\":\n"
		"{\"50\": {\"median\", \"min\", \"max\"}, ...}}), an array of them for several.\n"
		"Exit status: 0 ok, 1 errors in the input, 2 usage error.\n");
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

struct stat {
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
static struct stat stat_of(const struct series *s, size_t nseeds, size_t j, double *tmp)
{
	struct stat st = {false, 0, 0, 0};
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
		struct stat st = stat_of(s, nseeds, j, tmp);
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
			struct stat st = stat_of(&ser[i], nseeds, j, tmp);
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
static int simulate(const char *nodes, const char *trace, const char **pols, size_t npol,
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

int cmd_simulate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"mode", required_argument, NULL, 'm'},
		{"nodes", required_argument, NULL, 'n'},
		{"trace", required_argument, NULL, 't'},
		{"policy", required_argument, NULL, 'p'},
		{"seeds", required_argument, NULL, 's'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static uint64_t seeds[MAX_SEEDS];
	char polbuf[512];
	const char *pols[MAX_POLICIES];
	const char *mode = "fill", *nodes = NULL, *trace = NULL, *policy = paper_policies;
	size_t nseeds, npol;
	bool table = false;
	int c;

	nseeds = 10;
	for (c = 0; c < 10; c++)
		seeds[c] = 42 + (uint64_t)c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
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
		case 's':
			if (!parse_seeds(optarg, seeds, &nseeds)) {
				fprintf(stderr, "carve simulate: --seeds wants N, A-B (A <= B) or a "
					"comma-separated list of them, at most %d seeds, not '%s'\n",
					MAX_SEEDS, optarg);
				return CARVE_EXIT_USAGE;
			}
			break;
		case 'o':
			if (!strcmp(optarg, "json")) {
				table = false;
			} else if (!strcmp(optarg, "table")) {
				table = true;
			} else {
				fprintf(stderr, "carve simulate: unknown output format '%s' "
					"(expected json or table)\n", optarg);
				return CARVE_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return CARVE_EXIT_OK;
		default:
			usage(stderr);
			return CARVE_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "carve simulate: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return CARVE_EXIT_USAGE;
	}
	if (!strcmp(mode, "replay")) {
		fprintf(stderr, "carve simulate: --mode replay is not implemented yet\n");
		return CARVE_EXIT_USAGE;
	}
	if (strcmp(mode, "fill")) {
		fprintf(stderr, "carve simulate: unknown mode '%s' (fill; replay is not "
			"implemented yet)\n", mode);
		return CARVE_EXIT_USAGE;
	}
	if (!nodes || !trace) {
		fprintf(stderr, "carve simulate: --mode fill needs --nodes and --trace\n");
		usage(stderr);
		return CARVE_EXIT_USAGE;
	}
	if (strlen(policy) >= sizeof(polbuf)) {
		fprintf(stderr, "carve simulate: --policy list too long\n");
		return CARVE_EXIT_USAGE;
	}
	strcpy(polbuf, policy);
	if (!parse_policies(polbuf, pols, &npol)) {
		fprintf(stderr, "carve simulate: --policy wants a comma-separated list of: ");
		for (c = 0; c < carve_policy_count(); c++)
			fprintf(stderr, "%s%s", c ? ", " : "", carve_policy_name(c));
		fprintf(stderr, "\n");
		return CARVE_EXIT_USAGE;
	}
	return simulate(nodes, trace, pols, npol, seeds, nseeds, table);
}
