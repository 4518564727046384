/*
 * fig_reclaim.c - figure 5: reclaim.  500 nodes x 8 H100 GPUs, full of
 * 4,000 low-priority one-GPU jobs of ClusterQueue "low" (nominal 2,000,
 * borrowing the idle quota of "high" in their cohort), given as admitted
 * and placed by the engine's placer (binpack).  "high" (nominal 2,000,
 * reclaimWithinCohort Any) then submits one workload of 250 pods x 8 GPUs:
 * its whole quota, which needs 250 empty nodes.
 *
 * Reported: time of the cycle that chooses the victims (the key), how many
 * it marked, and whether the next cycle, after the eviction, admits and
 * places the workload.  Baseline in the same run: the same reclaim on a
 * quota-only engine (no placer: victims chosen on quota alone).
 */
#include <stdio.h>

#include "admq.h"

struct reclaim_run {
	double choose_ms, admit_ms;
	size_t marked;
	bool admitted;
};

static int run(const struct bench_opts *o, const struct carve_cluster *c, int ngpus,
	       bool placed, struct reclaim_run *out)
{
	struct carve_adm *a = carve_adm_create();
	struct carve_placer *p = NULL;
	struct carve_error err;
	char key[48];
	int i, id, d, rc = -1;
	double t0;

	*out = (struct reclaim_run){0};
	if (!a || admq_flavor(a, ADMQ_FLAVOR))
		goto out;
	{
		struct admq_cq low = {"low", "pool", ADMQ_RESOURCE, ADMQ_FLAVOR,
				      (int64_t)ngpus * 500, -1, CARVE_WCQ_NEVER,
				      CARVE_RECLAIM_NEVER};
		struct admq_cq high = {"high", "pool", ADMQ_RESOURCE, ADMQ_FLAVOR,
				       (int64_t)ngpus * 500, -1, CARVE_WCQ_LOWER,
				       CARVE_RECLAIM_ANY};

		if (admq_cq(a, &low) || admq_cq(a, &high) || admq_finalize(a))
			goto out;
	}
	if (placed) {
		p = carve_placer_create(c, "binpack", 42, &err);
		if (!p) {
			fprintf(stderr, "carve-bench: reclaim: %s\n", err.text);
			goto out;
		}
		if (carve_adm_set_placer(a, p, c)) {
			fprintf(stderr, "carve-bench: reclaim: cannot set the placer\n");
			goto out;
		}
	}
	for (i = 0; i < ngpus; i++) {
		struct admq_wl w = {key, "low", ADMQ_RESOURCE, ADMQ_FLAVOR, 1000, 1, 0, i, true};

		snprintf(key, sizeof(key), "team-low/job-%05d", i);
		if (admq_workload(a, &w) < 0)
			goto out;
	}
	{
		struct admq_wl w = {"team-high/train", "high", ADMQ_RESOURCE, ADMQ_FLAVOR, 8000,
				    ngpus / 16, 100, ngpus + 1, false};

		id = admq_workload(a, &w);
		if (id < 0)
			goto out;
	}
	t0 = bench_now(o);
	d = carve_adm_cycle(a, ngpus + 2);
	out->choose_ms = (bench_now(o) - t0) * 1e3;
	if (d < 0) {
		fprintf(stderr, "carve-bench: reclaim: %s\n", carve_strerror(d));
		goto out;
	}
	for (i = 0; i < ngpus; i++) {
		const struct carve_wl_status *st = carve_adm_status(a, (uint32_t)i);

		if (st && st->marked)
			out->marked++;
	}
	t0 = bench_now(o);
	carve_adm_evict_marked(a);
	d = carve_adm_cycle(a, ngpus + 3);
	out->admit_ms = (bench_now(o) - t0) * 1e3;
	if (d < 0) {
		fprintf(stderr, "carve-bench: reclaim: %s\n", carve_strerror(d));
		goto out;
	}
	out->admitted = carve_adm_status(a, (uint32_t)id)->state == CARVE_WL_ADMITTED;
	rc = 0;
out:
	if (!a)
		fprintf(stderr, "carve-bench: out of memory\n");
	carve_adm_destroy(a);
	carve_placer_destroy(p);
	return rc;
}

int bench_fig_reclaim(const struct bench_opts *o, struct bench_results *r)
{
	int nnodes = o->quick ? 50 : 500, ngpus = nnodes * 8;
	struct carve_cluster *c = bench_exclusive_cluster((size_t)nnodes, 8);
	struct reclaim_run pl, q;
	int rc = -1;

	if (!c)
		return -1;
	if (run(o, c, ngpus, true, &pl) || run(o, c, ngpus, false, &q))
		goto out;
	bench_title("5 reclaim", "a high-priority queue reclaims its quota from a full cluster");
	bench_note("%d nodes x 8 GPUs, %d low-priority one-GPU jobs, one %d x 8-GPU gang; on %s",
		   nnodes, ngpus, ngpus / 16, bench_clock_name(o));
	bench_row("choose victims (one cycle, with placement)", pl.choose_ms, "ms");
	bench_row("victims marked", (double)pl.marked, "jobs");
	bench_row("evict + next cycle", pl.admit_ms, "ms");
	bench_note("%-46s %s", "reclaiming gang admitted and placed after it",
		   pl.admitted ? "yes" : "NO");
	bench_row("baseline: quota only, choose victims", q.choose_ms, "ms");
	bench_row("baseline: victims marked", (double)q.marked, "jobs");
	bench_note("%-46s %s", "baseline: gang admitted after eviction", q.admitted ? "yes" : "NO");
	bench_row("with placement / quota only", pl.choose_ms / q.choose_ms, "x");
	r->reclaim_ms = pl.choose_ms;
	rc = 0;
out:
	carve_cluster_destroy(c);
	return rc;
}
