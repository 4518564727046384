/*
 * cmd_simulate_fill.c - `carve simulate --mode fill`: the FGD paper's fill
 * experiment (src/sim/fill.c) on an openb node CSV and pod CSV, once per
 * policy and seed, and its output: per policy the unallocated GPU % at
 * arrived workload SIMULATE_PCT_FIRST, +SIMULATE_PCT_STEP, ...,
 * SIMULATE_PCT_LAST % of GPU capacity, as median, min and max over the
 * seeds (JSON) or the medians as a table.
 *
 * Invariants: input problems are printed gcc-style on stderr and nothing
 * runs (exit 1); a bucket a run never reached is left out of the
 * statistics, never counted as 0.  Ownership: everything is allocated and
 * freed by simulate_fill; the policy names and seeds are borrowed.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/fill.h"
#include "carve/manifest.h"
#include "carve/trace.h"
#include "cli.h"

#define NPCT ((SIMULATE_PCT_LAST - SIMULATE_PCT_FIRST) / SIMULATE_PCT_STEP + 1)

/* ---- statistics and output -------------------------------------------------------- */

/* Per policy: per seed, the bucket values at SIMULATE_PCT_FIRST.. step
 * SIMULATE_PCT_STEP. */
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

		snprintf(key, sizeof(key), "%d", SIMULATE_PCT_FIRST + (int)j * SIMULATE_PCT_STEP);
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
	if (rc && !ferror(stdout))
		return CARVE_ENOMEM; /* a failed write is reported by the caller */
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
		printf("%8d", SIMULATE_PCT_FIRST + (int)j * SIMULATE_PCT_STEP);
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

/* Every (policy, seed) run into ser; progress on stderr past one second. */
static int run_all(struct carve_fill *f, struct series *ser, size_t npol, const uint64_t *seeds,
		   size_t nseeds)
{
	struct carve_fill_result r;
	struct carve_error err;
	double t0 = simulate_now_s();
	size_t i, k, j, done = 0;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < npol; i++) {
		for (k = 0; k < nseeds; k++) {
			double t1 = simulate_now_s(), t2;

			if (carve_fill_run(f, ser[i].policy, seeds[k], &r, &err)) {
				cli_errorf("simulate", "%s seed %llu: %s", ser[i].policy,
					   (unsigned long long)seeds[k], err.text);
				carve_fill_result_cleanup(&r);
				return CARVE_EXIT_FAIL;
			}
			for (j = 0; j < NPCT; j++) {
				size_t b = (size_t)(SIMULATE_PCT_FIRST +
						     (int)j * SIMULATE_PCT_STEP);

				ser[i].have[k * NPCT + j] = b < r.nbuckets && r.have[b];
				ser[i].v[k * NPCT + j] = b < r.nbuckets ? r.unalloc_pct[b] : 0;
			}
			t2 = simulate_now_s();
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
int simulate_fill(const char *nodes, const char *trace, const char **pols, size_t npol,
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
		cli_errorf("simulate", "%s", err.text);
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
	rc = cli_stdout_ok("simulate") ? CARVE_EXIT_OK : CARVE_EXIT_FAIL;
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
