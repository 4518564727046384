/*
 * fig_openb.c - figure 6: the FGD paper's fill experiment on the Alibaba
 * openb trace (../shared/reference/fgd.md), through the library the
 * `carve simulate --mode fill` command uses (carve/fill.h).
 *
 * One run: the 1,213 GPU nodes of openb_node_list_gpu_node.csv, the
 * default pod list, policy fgd, seed 42; the run itself (carve_fill_run)
 * is the key, loading and preparing are a row of their own.  Baseline in
 * the same run: the same fill with binpack.
 *
 * The sweep: 7 policies (the paper's six: random, dotprod, gpuclustering,
 * gpupacking, bestfit, fgd; and carve's binpack) x every
 * openb_pod_list_*.csv in the directory x 10 seeds (42..51), each trace
 * loaded and prepared once.  With --sweep-seeds N < 10 only seeds 42..
 * 41+N run and each (policy, trace) run time is scaled by 10 / N: the key
 * is then the measured estimate of the full sweep, and the table says so.
 * Quick sizes: the first 40 nodes, the first 400 tasks of a trace, and a
 * sweep of binpack and fgd over two traces with one seed (not
 * extrapolated).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "carve/fill.h"
#include "carve/manifest.h"
#include "carve/trace.h"

#define NODES_CSV "openb_node_list_gpu_node.csv"
#define MAX_TRACES 64

static const char *const sweep_pols[] = {
	"random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd", "binpack",
};
#define NSWEEP (sizeof(sweep_pols) / sizeof(sweep_pols[0]))

struct openb {
	struct carve_manifests *m;
	struct carve_cluster *c;
	size_t nnodes, maxtasks;
};

static void print_diags(struct carve_diags *d)
{
	carve_diags_sort(d);
	carve_diags_print(d, stderr);
}

static int load_nodes(const struct bench_opts *o, struct openb *ob)
{
	char path[4096];
	struct carve_error err;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", o->openb_dir, NODES_CSV);
	ob->m = carve_manifests_create();
	if (!ob->m || carve_manifests_load_path(ob->m, path) == CARVE_ENOMEM) {
		fprintf(stderr, "carve-bench: out of memory\n");
		return -1;
	}
	if (ob->m->diags.nerrors || !ob->m->ncsvnodes) {
		print_diags(&ob->m->diags);
		fprintf(stderr, "carve-bench: %s: no usable openb node rows\n", path);
		return -1;
	}
	n = ob->m->ncsvnodes;
	if (o->quick && n > 40)
		n = 40;
	ob->c = carve_fill_cluster_csv(ob->m->csvnodes, n, &err);
	if (!ob->c) {
		fprintf(stderr, "carve-bench: %s: %s\n", path, err.text);
		return -1;
	}
	ob->nnodes = n;
	ob->maxtasks = o->quick ? 400 : (size_t)-1;
	return 0;
}

/* Loads one pod list and prepares the fill; NULL on failure. */
static struct carve_fill *prepare(const struct openb *ob, const char *path,
				  struct carve_trace **tp)
{
	struct carve_trace *t = carve_trace_create();
	struct carve_diags d;
	struct carve_error err;
	struct carve_fill *f = NULL;
	size_t n;

	*tp = t;
	if (!t) {
		fprintf(stderr, "carve-bench: out of memory\n");
		return NULL;
	}
	carve_diags_init(&d);
	if (carve_trace_load_openb(t, path, &d) || d.nerrors || !t->n) {
		print_diags(&d);
		fprintf(stderr, "carve-bench: %s: no usable tasks\n", path);
		carve_diags_cleanup(&d);
		return NULL;
	}
	carve_diags_cleanup(&d);
	n = t->n < ob->maxtasks ? t->n : ob->maxtasks;
	f = carve_fill_create(ob->c, t->tasks, n, NULL, &err);
	if (!f)
		fprintf(stderr, "carve-bench: %s: %s\n", path, err.text);
	return f;
}

static int one_run(const struct bench_opts *o, struct carve_fill *f, const char *policy,
		   uint64_t seed, double *secs, double *unalloc)
{
	struct carve_fill_result res;
	struct carve_error err;
	double t0 = bench_now(o);
	int rc;

	memset(&res, 0, sizeof(res));
	rc = carve_fill_run(f, policy, seed, &res, &err);
	*secs = bench_now(o) - t0;
	if (rc) {
		fprintf(stderr, "carve-bench: fill %s seed %llu: %s\n", policy,
			(unsigned long long)seed, err.text);
		carve_fill_result_cleanup(&res);
		return -1;
	}
	*unalloc = res.nbuckets > 100 && res.have[100] ? res.unalloc_pct[100] : NAN;
	carve_fill_result_cleanup(&res);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The pod lists of the directory, sorted; returns how many (or -1). */
static int list_traces(const char *dir, char **names, int max)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!dp) {
		fprintf(stderr, "carve-bench: cannot open %s\n", dir);
		return -1;
	}
	while ((e = readdir(dp)) && n < max) {
		size_t len = strlen(e->d_name);

		if (strncmp(e->d_name, "openb_pod_list_", 15) || len < 4 ||
		    strcmp(e->d_name + len - 4, ".csv"))
			continue;
		names[n] = carve_strdup(e->d_name);
		if (!names[n]) {
			fprintf(stderr, "carve-bench: out of memory\n");
			break;
		}
		n++;
	}
	closedir(dp);
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	return n;
}

static int sweep(const struct bench_opts *o, const struct openb *ob, double *est_s,
		 double *measured_s, size_t *nruns, int *ntraces)
{
	char *names[MAX_TRACES], path[4096];
	double per_pol[NSWEEP] = {0};
	int n = list_traces(o->openb_dir, names, MAX_TRACES), i, k, rc = -1;
	int seeds = o->quick ? 1 : o->sweep_seeds, npol = o->quick ? 2 : (int)NSWEEP;
	int ntr = o->quick && n > 2 ? 2 : n;
	double scale = o->quick ? 1.0 : 10.0 / seeds;
	size_t p;

	*est_s = *measured_s = 0;
	*nruns = 0;
	*ntraces = ntr;
	if (n <= 0) {
		fprintf(stderr, "carve-bench: no openb_pod_list_*.csv in %s\n", o->openb_dir);
		return -1;
	}
	for (i = 0; i < ntr; i++) {
		struct carve_trace *t = NULL;
		struct carve_fill *f;
		double t0 = bench_now(o), prep;

		snprintf(path, sizeof(path), "%s/%s", o->openb_dir, names[i]);
		f = prepare(ob, path, &t);
		prep = bench_now(o) - t0;
		*est_s += prep;
		*measured_s += prep;
		for (p = 0; f && p < (size_t)npol; p++) {
			/* quick: binpack and fgd, the last two */
			const char *pol = sweep_pols[o->quick ? NSWEEP - 1 - p : p];

			for (k = 0; k < seeds; k++) {
				double s, u;

				if (one_run(o, f, pol, 42 + (uint64_t)k, &s, &u)) {
					carve_fill_destroy(f);
					carve_trace_destroy(t);
					goto out;
				}
				*measured_s += s;
				*est_s += s * scale;
				per_pol[o->quick ? NSWEEP - 1 - p : p] += s;
				(*nruns)++;
			}
		}
		carve_fill_destroy(f);
		carve_trace_destroy(t);
		if (!f)
			goto out;
	}
	for (p = 0; p < NSWEEP; p++)
		if (per_pol[p] > 0) {
			char label[64];

			snprintf(label, sizeof(label), "sweep: %s, mean per run", sweep_pols[p]);
			bench_row(label, per_pol[p] / (ntr * seeds), "s");
		}
	rc = 0;
out:
	for (i = 0; i < n; i++)
		carve_free(names[i]);
	return rc;
}

int bench_fig_openb(const struct bench_opts *o, struct bench_results *r)
{
	struct openb ob = {0};
	struct carve_trace *t = NULL;
	struct carve_fill *f = NULL;
	char path[4096];
	double t0, prep, fgd_s, fgd_u, bp_s, bp_u, est, meas;
	size_t nruns;
	int ntr, rc = -1;

	bench_title("6 openb", "the FGD paper's fill experiment on the openb trace");
	t0 = bench_now(o);
	if (load_nodes(o, &ob))
		goto out;
	snprintf(path, sizeof(path), "%s/openb_pod_list_default.csv", o->openb_dir);
	f = prepare(&ob, path, &t);
	if (!f)
		goto out;
	prep = bench_now(o) - t0;
	if (one_run(o, f, "fgd", 42, &fgd_s, &fgd_u) || one_run(o, f, "binpack", 42, &bp_s, &bp_u))
		goto out;
	bench_note("%zu nodes / %zu GPUs, default trace%s; on %s", ob.nnodes,
		   carve_cluster_gpu_count(ob.c), o->quick ? " (first 400 tasks)" : "",
		   bench_clock_name(o));
	bench_row("one fgd run (seed 42)", fgd_s, "s");
	bench_row("  unallocated GPU at 100 % arrived", fgd_u, "%");
	bench_row("load nodes + trace, prepare", prep, "s");
	bench_row("baseline: one binpack run (seed 42)", bp_s, "s");
	bench_row("  unallocated GPU at 100 % arrived", bp_u, "%");
	bench_row("fgd / binpack run time", fgd_s / bp_s, "x");
	if (sweep(o, &ob, &est, &meas, &nruns, &ntr))
		goto out;
	if (o->quick)
		bench_note("sweep (quick): binpack, fgd x %d traces x 1 seed, %zu runs", ntr, nruns);
	else
		bench_note("sweep: %zu policies x %d traces x %d of 10 seeds = %zu runs measured%s",
			   NSWEEP, ntr, o->sweep_seeds, nruns,
			   o->sweep_seeds < 10 ? "; run times scaled by 10/seeds" : "");
	bench_row("sweep, measured", meas, "s");
	bench_row(o->quick || o->sweep_seeds == 10 ? "sweep, full" : "sweep, full (estimate)",
		  est, "s");
	bench_note("peer: FGD paper's simulator ~10 min per run on 2 vCPUs; one run here is "
		   "%.0fx less", 600.0 / fgd_s);
	r->openb_fgd_run_s = fgd_s;
	r->openb_sweep_s = est;
	rc = 0;
out:
	carve_fill_destroy(f);
	carve_trace_destroy(t);
	carve_cluster_destroy(ob.c);
	carve_manifests_destroy(ob.m);
	return rc;
}
