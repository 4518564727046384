/*
 * fig_place.c - figure 1: placement at scale.  10,000 nodes / 80,000 GPUs
 * in the mixed pools of gen.c, 100,000 pending single-pod workloads drawn
 * from the pod mix (one seed, the same sequence for every policy), placed
 * one decision at a time through carve_placer_place on an empty placer.
 *
 * Reported per policy: decisions per second (total on the run's clock),
 * per-decision latency p50/p99 (each decision on the run's clock: a CPU-
 * time read costs a system call, shown as "clock read" and included in
 * the samples; on a machine others share, wall-time samples would measure
 * their load), placed and refused.  A
 * refused pod (ENOFIT) is a decision too: it costs a full search.  fgd runs
 * under a time budget at full size (its decisions are the first ones of
 * the same sequence; the table says how many ran).
 *
 * Baseline in the same run: one naive full scan of the cluster's free
 * state through the public view (carve_placer_gpu_free_units for every GPU,
 * no filtering and no scoring), timed on the run's clock on the placer's
 * state every 8,192 decisions (off the decisions' own total);
 * it is what any placer without an index reads per decision.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

struct place_run {
	size_t decisions, placed, refused;
	double per_s, p50_us, p99_us;
	double scan_us;        /* naive full scan, mean of the samples */
};

/* Keeps the naive scan from being optimised away. */
static volatile int64_t sink;

static double naive_scan_us(const struct bench_opts *o, const struct carve_placer *p,
			    size_t ngpus, int reps)
{
	double t0 = bench_now(o);
	int64_t acc = 0;
	size_t g;
	int r;

	for (r = 0; r < reps; r++)
		for (g = 0; g < ngpus; g++)
			acc += carve_placer_gpu_free_units(p, (uint32_t)g);
	sink = acc;
	return (bench_now(o) - t0) * 1e6 / reps;
}

static int run_policy(const struct bench_opts *o, const struct carve_cluster *c,
		      const char *policy, size_t npods, double budget_s, struct place_run *out)
{
	struct carve_error err;
	struct carve_placer *p = carve_placer_create(c, policy, 42, &err);
	uint64_t *lat = NULL, rng = 7;
	size_t i, ngpus = carve_cluster_gpu_count(c), nscan = 0;
	double t0, t1, scan = 0;
	int rc = -1;

	if (!p) {
		fprintf(stderr, "carve-bench: placer %s: %s\n", policy, err.text);
		return -1;
	}
	if (carve_placer_set_mix(p, bench_pod_types, bench_pod_prob, BENCH_NPODTYPES)) {
		fprintf(stderr, "carve-bench: placer %s: cannot set the mix\n", policy);
		goto out;
	}
	lat = malloc(npods * sizeof(*lat));
	if (!lat) {
		fprintf(stderr, "carve-bench: out of memory\n");
		goto out;
	}
	*out = (struct place_run){0};
	t0 = bench_now(o);
	for (i = 0; i < npods; i++) {
		struct carve_pod_group grp = {&bench_pod_types[bench_pod_type(&rng)], 1};
		struct carve_pod_place pl;
		double a = bench_now(o);
		int prc = carve_placer_place(p, &grp, 1, NULL, &pl);

		lat[i] = (uint64_t)((bench_now(o) - a) * 1e9);
		if (prc == 0)
			out->placed++;
		else if (prc == CARVE_ENOFIT)
			out->refused++;
		else {
			fprintf(stderr, "carve-bench: place %s: %s\n", policy, carve_strerror(prc));
			goto out;
		}
		if (i % 8192 == 0) {
			/* Baseline samples, off the run's clock. */
			double s0 = bench_now(o);

			scan += naive_scan_us(o, p, ngpus, 2);
			nscan++;
			t0 += bench_now(o) - s0;
		}
		if (budget_s > 0 && (i & 255) == 255 && bench_now(o) - t0 > budget_s) {
			i++;
			break;
		}
	}
	t1 = bench_now(o);
	out->decisions = i;
	out->per_s = t1 > t0 ? (double)i / (t1 - t0) : NAN;
	out->p50_us = bench_quantile(lat, i, 0.50) / 1e3;
	out->p99_us = bench_quantile(lat, i, 0.99) / 1e3;
	out->scan_us = nscan ? scan / (double)nscan : NAN;
	if (carve_placer_check(p, &err)) {
		fprintf(stderr, "carve-bench: placer %s state broken: %s\n", policy, err.text);
		goto out;
	}
	rc = 0;
out:
	free(lat);
	carve_placer_destroy(p);
	return rc;
}

/* Cost of one pair of clock reads around a sample, ns. */
static double clock_pair_ns(const struct bench_opts *o)
{
	double t0 = bench_now(o), t1 = t0;
	int i;

	for (i = 0; i < 1000; i++)
		t1 = bench_now(o);
	return (t1 - t0) / 1000 * 2 * 1e9;
}

int bench_fig_place(const struct bench_opts *o, struct bench_results *r)
{
	static const char *const pols[] = {"binpack", "fgd"};
	size_t nnodes = o->quick ? 200 : 10000, npods = o->quick ? 2000 : 100000;
	struct carve_cluster *c = bench_mixed_cluster(nnodes, 8);
	struct place_run run[2];
	char label[96];
	size_t k;

	if (!c)
		return -1;
	bench_title("1 place", "placement at scale, single-pod workloads, one decision each");
	bench_note("%zu nodes / %zu GPUs (exclusive, MIG, time-sliced, fractional), "
		   "%zu pending pods; totals on %s",
		   nnodes, carve_cluster_gpu_count(c), npods, bench_clock_name(o));
	for (k = 0; k < 2; k++) {
		/* fgd scores every feasible node with the fragmentation of the
		 * mix: at full size it gets a budget, the run says how far. */
		double budget = !o->quick && k == 1 ? 30.0 : 0;

		if (run_policy(o, c, pols[k], npods, budget, &run[k])) {
			carve_cluster_destroy(c);
			return -1;
		}
		snprintf(label, sizeof(label), "%s decisions/s", pols[k]);
		bench_row(label, run[k].per_s, "1/s");
		snprintf(label, sizeof(label), "%s latency p50", pols[k]);
		bench_row(label, run[k].p50_us, "us");
		snprintf(label, sizeof(label), "%s latency p99", pols[k]);
		bench_row(label, run[k].p99_us, "us");
		snprintf(label, sizeof(label), "%s decisions run / placed / refused", pols[k]);
		bench_note("%-46s %zu / %zu / %zu", label, run[k].decisions, run[k].placed,
			   run[k].refused);
		snprintf(label, sizeof(label), "baseline: naive full scan (%s run)", pols[k]);
		bench_row(label, run[k].scan_us, "us per scan");
		snprintf(label, sizeof(label), "%s decision / naive scan", pols[k]);
		bench_row(label, run[k].p50_us / run[k].scan_us, "x (p50)");
	}
	bench_row("clock read pair (inside each latency sample)", clock_pair_ns(o) / 1e3, "us");
	bench_note("peer: kube-scheduler CI threshold 270 pods/s at 5,000 nodes; "
		   "binpack here is %.0fx that", run[0].per_s / 270.0);
	r->place_binpack_per_s = run[0].per_s;
	r->place_binpack_p99_us = run[0].p99_us;
	r->place_fgd_per_s = run[1].per_s;
	carve_cluster_destroy(c);
	return 0;
}
