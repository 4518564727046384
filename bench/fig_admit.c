/*
 * fig_admit.c - figure 2: admission at scale.  1,000 ClusterQueues in 50
 * cohorts (nominal 20 GPUs each, borrowingLimit 40), withinClusterQueue
 * LowerPriority and reclaimWithinCohort Any; the first queue of every
 * cohort holds 60 low-priority workloads given as admitted (it borrows 40),
 * so the others reclaim; 100,000 pending single-pod one-GPU workloads
 * (100 a queue, priorities 0..3).  (A mix with 10 % two-GPU workloads
 * once never settled, a reclaim loop the admission engine's claim rule
 * ended: bench/README.md.)  Cycles run at one instant
 * until one decides nothing, evicting marked victims between cycles, as
 * carve_adm_run does, each cycle timed.
 *
 * Reported: admissions per second of engine time (cycles + evictions),
 * cycle latency p50/p99/max (each cycle on the run's clock: a cycle is
 * long enough for a CPU-time read), preemptions, and the time to add the
 * workloads.  Baseline in the same run: the same workloads on standalone
 * queues (no cohort, no preemption): the cost of the cohort and
 * preemption machinery.
 */
#include <stdio.h>
#include <stdlib.h>

#include "admq.h"

struct admit_run {
	size_t admitted, preempted, cycles;
	bool settled;
	double add_s, engine_s, per_s, p50_ms, p99_ms, max_ms;
};

static int add_all(const struct bench_opts *o, struct carve_adm *a, size_t ncqs, size_t per_cq,
		   size_t ncohorts, bool cohorts, struct admit_run *out)
{
	char key[48], cq[32];
	uint64_t rng = 11;
	double t0 = bench_now(o);
	size_t i;

	if (cohorts) {
		/* The first queue of each cohort borrows with low-priority work. */
		for (i = 0; i < ncohorts * 60; i++) {
			struct admq_wl w = {key, cq, ADMQ_RESOURCE, ADMQ_FLAVOR, 1000, 1, -1,
					    (int64_t)i, true};

			snprintf(key, sizeof(key), "team-%04zu/low-%06zu", i % ncohorts, i);
			snprintf(cq, sizeof(cq), "cq-%04zu", i % ncohorts);
			if (admq_workload(a, &w) < 0)
				return -1;
		}
	}
	/* Priorities 0..3: a splitmix64 draw modulo 4 (a power of two, so
	 * unbiased; the same stream as every earlier run of this figure). */
	for (i = 0; i < ncqs * per_cq; i++) {
		size_t q = i % ncqs;
		struct admq_wl w = {key, cq, ADMQ_RESOURCE, ADMQ_FLAVOR, 1000, 1,
				    (int32_t)(carve_splitmix64(&rng) % 4), (int64_t)(1000 + i), false};

		snprintf(key, sizeof(key), "team-%04zu/job-%06zu", q, i);
		snprintf(cq, sizeof(cq), "cq-%04zu", q);
		if (admq_workload(a, &w) < 0)
			return -1;
	}
	out->add_s = bench_now(o) - t0;
	return 0;
}

static int cycles(const struct bench_opts *o, struct carve_adm *a, size_t max,
		  struct admit_run *out)
{
	size_t cap = 4096, n = 0, i;
	uint64_t *lat = malloc(cap * sizeof(*lat));
	int64_t now = 10000000;
	double t0, t1;
	int d, rc = -1;

	if (!lat) {
		fprintf(stderr, "carve-bench: out of memory\n");
		return -1;
	}
	t0 = bench_now(o);
	for (;;) {
		double s = bench_now(o);

		d = carve_adm_cycle(a, now);
		if (d < 0) {
			fprintf(stderr, "carve-bench: cycle: %s\n", carve_strerror(d));
			goto out;
		}
		carve_adm_evict_marked(a);
		if (n == cap) {
			uint64_t *nl = realloc(lat, 2 * cap * sizeof(*lat));

			if (!nl) {
				fprintf(stderr, "carve-bench: out of memory\n");
				goto out;
			}
			lat = nl;
			cap *= 2;
		}
		lat[n++] = (uint64_t)((bench_now(o) - s) * 1e9);
		if (d == 0 || n >= max)
			break;
	}
	/* Heads set aside in the last cycle may let later workloads in:
	 * finish as carve_adm_run does (same clock, not sampled). */
	d = carve_adm_run(a, now, (int)max);
	if (d < 0) {
		fprintf(stderr, "carve-bench: run: %s\n", carve_strerror(d));
		goto out;
	}
	t1 = bench_now(o);
	out->cycles = n + (size_t)d;
	out->settled = n < max && (size_t)d < max;
	out->engine_s = t1 - t0;
	for (i = 0; i < carve_adm_workload_count(a); i++) {
		const struct carve_wl_status *st = carve_adm_status(a, (uint32_t)i);

		if (st && st->admitted_by_engine && st->state == CARVE_WL_ADMITTED)
			out->admitted++;
		if (st && st->evicted)
			out->preempted++;
	}
	out->per_s = out->engine_s > 0 ? (double)out->admitted / out->engine_s : NAN;
	out->p50_ms = bench_quantile(lat, n, 0.50) / 1e6;
	out->p99_ms = bench_quantile(lat, n, 0.99) / 1e6;
	out->max_ms = bench_quantile(lat, n, 1.0) / 1e6;
	rc = 0;
out:
	free(lat);
	return rc;
}

static int run(const struct bench_opts *o, bool cohorts, struct admit_run *out)
{
	size_t ncqs = o->quick ? 40 : 1000, ncoh = o->quick ? 4 : 50;
	size_t per_cq = o->quick ? 20 : 100;
	struct carve_adm *a;
	int rc = -1;

	*out = (struct admit_run){0};
	if (cohorts) {
		a = admq_cohorts(ncqs, ncoh, 20000, 40000);
	} else {
		char name[32];
		size_t i;

		a = carve_adm_create();
		if (!a || admq_flavor(a, ADMQ_FLAVOR))
			goto out;
		for (i = 0; i < ncqs; i++) {
			struct admq_cq q = {name, NULL, ADMQ_RESOURCE, ADMQ_FLAVOR, 20000, -1,
					    CARVE_WCQ_NEVER, CARVE_RECLAIM_NEVER};

			snprintf(name, sizeof(name), "cq-%04zu", i);
			if (admq_cq(a, &q))
				goto out;
		}
		if (admq_finalize(a))
			goto out;
	}
	if (!a)
		goto out;
	if (add_all(o, a, ncqs, per_cq, ncoh, cohorts, out) || cycles(o, a, 10 * per_cq + 100, out))
		goto out;
	rc = 0;
out:
	if (!a)
		fprintf(stderr, "carve-bench: cannot build the admission engine\n");
	carve_adm_destroy(a);
	return rc;
}

int bench_fig_admit(const struct bench_opts *o, struct bench_results *r)
{
	struct admit_run c, b;

	bench_title("2 admit", "admission at scale, cohorts with borrowing and preemption");
	if (run(o, true, &c) || run(o, false, &b))
		return -1;
	bench_note("%s ClusterQueues in %s cohorts, %s pending + %s admitted low-priority; "
		   "totals on %s", o->quick ? "40" : "1,000", o->quick ? "4" : "50",
		   o->quick ? "800" : "100,000", o->quick ? "240" : "3,000", bench_clock_name(o));
	bench_row("admissions/s (engine time)", c.per_s, "1/s");
	bench_row("admitted", (double)c.admitted, "workloads");
	bench_row("preempted (evicted)", (double)c.preempted, "workloads");
	bench_row("cycles", (double)c.cycles, c.settled ? "(settled)" : "(cap reached: NOT settled)");
	bench_row("cycle latency p50", c.p50_ms, "ms");
	bench_row("cycle latency p99", c.p99_ms, "ms");
	bench_row("cycle latency max", c.max_ms, "ms");
	bench_row("engine time, all cycles", c.engine_s, "s");
	bench_row("adding the workloads", c.add_s, "s");
	bench_row("baseline: standalone queues, admissions/s", b.per_s, "1/s");
	bench_row("baseline: admitted", (double)b.admitted, "workloads");
	bench_row("baseline: cycle latency p50", b.p50_ms, "ms");
	bench_row("cohorts+preemption / standalone", c.per_s / b.per_s, "x (admissions/s)");
	bench_note("peer: Kueue perf test ~42 workloads/s (15,000 over 30 CQs in 351 s); "
		   "here %.0fx that", c.per_s / 42.0);
	r->admit_per_s = c.per_s;
	return 0;
}
