/*
 * fig_gang.c - figure 4: gangs.  20 gangs of 500 pods (4 whole H100 GPUs
 * each) placed one gang per decision on an empty 5,000-node cluster of 8
 * GPUs a node (the 20 gangs fill its 40,000 GPUs exactly), binpack, through
 * carve_placer_place: all 500 pods or none.
 *
 * Reported: time per gang decision (mean, the key; max), with and without
 * a topology preference (Kueue TAS levels block, rack, host: narrowest
 * domain that holds the gang first).  Baseline in the same run: the same
 * 500 pods as 500 single-pod decisions on a fresh placer (no all-or-
 * nothing, no undo), per gang.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

static const char *const h100[] = {"H100-80GB"};
static const struct carve_pod_req pod4 = {
	.cpu_milli = 32000, .memory_milli = 256ll * 1024 * 1024 * 1024 * 1000,
	.gpu = CARVE_GREQ_WHOLE, .count = 4, .nmodels = 1, .models = h100,
};
static const char *const levels[] = {"cloud.provider.com/topology-block",
				     "cloud.provider.com/topology-rack",
				     "kubernetes.io/hostname"};

struct gang_run {
	double mean_ms, max_ms;
	int placed;
};

/* mode 0: gangs; 1: gangs with topology; 2: pods one at a time. */
static int run(const struct bench_opts *o, const struct carve_cluster *c, int ngangs, int size,
	       int mode, struct gang_run *out)
{
	struct carve_topology topo = {3, levels, false};
	struct carve_pod_place *pl = malloc((size_t)size * sizeof(*pl));
	struct carve_error err;
	struct carve_placer *p = carve_placer_create(c, "binpack", 42, &err);
	double sum = 0;
	int g, k, rc = -1;

	*out = (struct gang_run){0};
	if (!pl || !p) {
		fprintf(stderr, "carve-bench: gang: %s\n", p ? "out of memory" : err.text);
		goto out;
	}
	for (g = 0; g < ngangs; g++) {
		double t0 = bench_now(o), dt;
		int prc = 0;

		if (mode < 2) {
			struct carve_pod_group grp = {&pod4, size};

			prc = carve_placer_place(p, &grp, 1, mode ? &topo : NULL, pl);
		} else {
			struct carve_pod_group one = {&pod4, 1};

			for (k = 0; k < size && !prc; k++)
				prc = carve_placer_place(p, &one, 1, NULL, &pl[k]);
		}
		dt = (bench_now(o) - t0) * 1e3;
		sum += dt;
		if (dt > out->max_ms)
			out->max_ms = dt;
		if (prc == 0)
			out->placed++;
		else if (prc != CARVE_ENOFIT) {
			fprintf(stderr, "carve-bench: gang: %s\n", carve_strerror(prc));
			goto out;
		}
	}
	out->mean_ms = sum / ngangs;
	if (carve_placer_check(p, &err)) {
		fprintf(stderr, "carve-bench: gang: placer state broken: %s\n", err.text);
		goto out;
	}
	rc = 0;
out:
	carve_placer_destroy(p);
	free(pl);
	return rc;
}

int bench_fig_gang(const struct bench_opts *o, struct bench_results *r)
{
	int nnodes = o->quick ? 500 : 5000, ngangs = 20, size = o->quick ? 50 : 500;
	struct carve_cluster *c = bench_exclusive_cluster((size_t)nnodes, 8);
	struct gang_run plain, topo, single;
	int rc = -1;

	if (!c)
		return -1;
	if (run(o, c, ngangs, size, 0, &plain) || run(o, c, ngangs, size, 1, &topo) ||
	    run(o, c, ngangs, size, 2, &single))
		goto out;
	bench_title("4 gang", "all-or-nothing gangs on an exclusive cluster, binpack");
	bench_note("%d gangs x %d pods x 4 GPUs on %d nodes x 8 GPUs; on %s", ngangs, size,
		   nnodes, bench_clock_name(o));
	bench_row("per gang decision, mean", plain.mean_ms, "ms");
	bench_row("per gang decision, max", plain.max_ms, "ms");
	bench_row("gangs placed", plain.placed, "");
	bench_row("with topology (block/rack/host), mean", topo.mean_ms, "ms");
	bench_row("with topology, gangs placed", topo.placed, "");
	bench_row("baseline: pods one by one, per gang", single.mean_ms, "ms");
	bench_row("gang / one by one", plain.mean_ms / single.mean_ms, "x");
	bench_note("peer: KAI's cycle ~2.4 s at 4,000 nodes / 140,000 pods (a whole cycle, "
		   "not one gang)");
	r->gang500_ms = plain.mean_ms;
	rc = 0;
out:
	carve_cluster_destroy(c);
	return rc;
}
