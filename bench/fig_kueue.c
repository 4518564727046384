/*
 * fig_kueue.c - figure 3: Kueue's scheduler performance test shape
 * (kubernetes-sigs/kueue test/performance/scheduler, configs/baseline/
 * generator.yaml): 5 cohorts x 6 ClusterQueues, nominalQuota 20,
 * borrowingLimit 100, reclaimWithinCohort Any, withinClusterQueue
 * LowerPriority; per queue 350 small (request 1, priority 50, created
 * every 100 ms, runs 200 ms), 100 medium (5, 100, 500 ms, 500 ms) and 50
 * large (20, 200, 1200 ms, 1000 ms): 15,000 workloads.
 *
 * Replayed in virtual time (milliseconds are the engine's time unit here):
 * at every instant with an arrival or a completion, the new workloads are
 * added, the finished ones removed (carve_adm_finish), and cycles run until
 * they settle (carve_adm_run), preempted workloads going back to pending
 * and starting over when re-admitted.  Engine time is the run's clock
 * around those engine calls only; the statuses the replay reads to learn
 * what was admitted are not counted.
 *
 * Reported: engine time to admit all 15,000 (the key), admissions per
 * second of engine time, virtual time of the last first admission and of
 * the last completion, preemptions.  Peer: the test's own wall time, about
 * 351 s (rangespec.yaml, average of 5 runs), which includes the workloads'
 * run time; the virtual makespan here is the comparable figure of merit
 * for the schedule, the engine time for the cost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admq.h"

#define NCLASS 3

static const struct {
	const char *name;
	int count, interval_ms, runtime_ms, request, priority;
} cls[NCLASS] = {
	{"small", 350, 100, 200, 1, 50},
	{"medium", 100, 500, 500, 5, 100},
	{"large", 50, 1200, 1000, 20, 200},
};

struct kwl {
	int64_t arrive;
	int cq, klass, id;
	bool running, admitted_once;
	unsigned gen;
};

struct fin {
	int64_t t;
	int w;
	unsigned gen;
};

struct heap {
	struct fin *v;
	size_t n, cap;
};

static int heap_push(struct heap *h, struct fin f)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 1024;
		struct fin *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -1;
		h->v = v;
		h->cap = cap;
	}
	i = h->n++;
	while (i && h->v[(i - 1) / 2].t > f.t) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = f;
	return 0;
}

static struct fin heap_pop(struct heap *h)
{
	struct fin top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1].t < h->v[c].t)
			c++;
		if (h->v[c].t >= last.t)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

static int cmp_arrive(const void *a, const void *b)
{
	const struct kwl *x = a, *y = b;

	if (x->arrive != y->arrive)
		return x->arrive < y->arrive ? -1 : 1;
	if (x->cq != y->cq)
		return x->cq - y->cq;
	return x->klass - y->klass;
}

struct kueue_run {
	size_t n, admitted, preemptions, instants;
	double engine_s, last_admit_s, makespan_s;
	bool settled;
};

/* Moves the pending workloads the last cycles admitted to running (and
 * running ones they evicted back to pending). */
static int collect(struct carve_adm *a, struct kwl *w, int *pend, size_t *npend, int *run,
		   size_t *nrun, struct heap *h, int64_t t, struct kueue_run *out)
{
	size_t i;

	for (i = 0; i < *nrun;) {
		struct kwl *k = &w[run[i]];
		const struct carve_wl_status *st = carve_adm_status(a, (uint32_t)k->id);

		if (st->state == CARVE_WL_PENDING) {
			k->running = false;
			k->gen++;
			out->preemptions++;
			pend[(*npend)++] = run[i];
			run[i] = run[--*nrun];
		} else {
			i++;
		}
	}
	for (i = 0; i < *npend;) {
		struct kwl *k = &w[pend[i]];
		const struct carve_wl_status *st = carve_adm_status(a, (uint32_t)k->id);

		if (st->state == CARVE_WL_ADMITTED) {
			k->running = true;
			if (!k->admitted_once) {
				k->admitted_once = true;
				out->admitted++;
				out->last_admit_s = (double)t / 1e3;
			}
			if (heap_push(h, (struct fin){t + cls[k->klass].runtime_ms, pend[i],
						      k->gen}))
				return -1;
			run[(*nrun)++] = pend[i];
			pend[i] = pend[--*npend];
		} else {
			i++;
		}
	}
	return 0;
}

static int replay(const struct bench_opts *o, struct carve_adm *a, struct kwl *w, size_t n,
		  struct kueue_run *out)
{
	int *pend = malloc(n * sizeof(*pend)), *run = malloc(n * sizeof(*run));
	struct heap h = {0};
	size_t ai = 0, npend = 0, nrun = 0, done = 0;
	char key[64], cq[24];
	int rc = -1;

	if (!pend || !run) {
		fprintf(stderr, "carve-bench: out of memory\n");
		goto out;
	}
	out->settled = true;
	while (done < n) {
		int64_t t;
		double t0;
		int d;

		if (ai < n && (!h.n || w[ai].arrive <= h.v[0].t))
			t = w[ai].arrive;
		else if (h.n)
			t = h.v[0].t;
		else {
			fprintf(stderr, "carve-bench: kueue replay stuck with %zu pending\n", npend);
			goto out;
		}
		out->instants++;
		t0 = bench_now(o);
		for (; ai < n && w[ai].arrive == t; ai++) {
			struct admq_wl s = {key, cq, ADMQ_RESOURCE, ADMQ_FLAVOR,
					    1000 * cls[w[ai].klass].request, 1,
					    cls[w[ai].klass].priority, t, false};

			snprintf(key, sizeof(key), "ns-%02d/%s-%05zu", w[ai].cq,
				 cls[w[ai].klass].name, ai);
			snprintf(cq, sizeof(cq), "cq-%02d", w[ai].cq);
			w[ai].id = admq_workload(a, &s);
			if (w[ai].id < 0)
				goto out;
			pend[npend++] = (int)ai;
		}
		while (h.n && h.v[0].t == t) {
			struct fin f = heap_pop(&h);

			if (f.gen != w[f.w].gen || !w[f.w].running)
				continue; /* preempted since: restarted elsewhere */
			if (carve_adm_finish(a, (uint32_t)w[f.w].id)) {
				fprintf(stderr, "carve-bench: finish failed\n");
				goto out;
			}
			w[f.w].running = false;
			done++;
			for (size_t i = 0; i < nrun; i++)
				if (run[i] == f.w) {
					run[i] = run[--nrun];
					break;
				}
		}
		d = carve_adm_run(a, t, 100000);
		if (d < 0) {
			fprintf(stderr, "carve-bench: cycle: %s\n", carve_strerror(d));
			goto out;
		}
		if (d == 100000)
			out->settled = false;
		carve_adm_evict_marked(a);
		out->engine_s += bench_now(o) - t0;
		if (collect(a, w, pend, &npend, run, &nrun, &h, t, out)) {
			fprintf(stderr, "carve-bench: out of memory\n");
			goto out;
		}
		out->makespan_s = (double)t / 1e3;
	}
	rc = 0;
out:
	free(h.v);
	free(pend);
	free(run);
	return rc;
}

int bench_fig_kueue(const struct bench_opts *o, struct bench_results *r)
{
	int ncoh = o->quick ? 1 : 5, per = o->quick ? 3 : 6, div = o->quick ? 10 : 1;
	int ncq = ncoh * per, q, k, i;
	struct kueue_run run = {0};
	struct carve_adm *a = carve_adm_create();
	struct kwl *w = NULL;
	size_t n = 0;
	int rc = -1;

	if (!a || admq_flavor(a, ADMQ_FLAVOR))
		goto out;
	for (q = 0; q < ncq; q++) {
		char name[24], cohort[24];
		struct admq_cq s = {name, cohort, ADMQ_RESOURCE, ADMQ_FLAVOR, 20000, 100000,
				    CARVE_WCQ_LOWER, CARVE_RECLAIM_ANY};

		snprintf(name, sizeof(name), "cq-%02d", q);
		snprintf(cohort, sizeof(cohort), "cohort-%d", q / per);
		if (admq_cq(a, &s))
			goto out;
	}
	if (admq_finalize(a))
		goto out;
	for (k = 0; k < NCLASS; k++)
		n += (size_t)(cls[k].count / div) * (size_t)ncq;
	w = calloc(n, sizeof(*w));
	if (!w) {
		fprintf(stderr, "carve-bench: out of memory\n");
		goto out;
	}
	n = 0;
	for (q = 0; q < ncq; q++)
		for (k = 0; k < NCLASS; k++)
			for (i = 0; i < cls[k].count / div; i++)
				w[n++] = (struct kwl){.arrive = (int64_t)i * cls[k].interval_ms,
						      .cq = q, .klass = k, .id = -1};
	qsort(w, n, sizeof(*w), cmp_arrive);
	run.n = n;
	if (replay(o, a, w, n, &run))
		goto out;
	bench_title("3 kueue", "Kueue's scheduler perf test shape, replayed in virtual time");
	bench_note("%d cohorts x %d ClusterQueues, %zu workloads (small/medium/large%s); "
		   "engine time on %s", ncoh, per, n, div > 1 ? ", counts / 10" : "",
		   bench_clock_name(o));
	bench_row("engine time to admit all", run.engine_s, "s");
	bench_row("admitted", (double)run.admitted, "workloads");
	bench_row("admissions/s (engine time)", (double)run.admitted / run.engine_s, "1/s");
	bench_row("preemptions (re-admitted later)", (double)run.preemptions, "");
	bench_row("instants replayed", (double)run.instants, "");
	bench_row("virtual time of the last first admission", run.last_admit_s, "s");
	bench_row("virtual makespan (last completion)", run.makespan_s, "s");
	bench_note("cycles settled at every instant: %s", run.settled ? "yes" : "NO (cap reached)");
	bench_note("peer: Kueue's test takes ~351 s wall for the same 15,000 (~42/s); "
		   "engine time here is %.0fx less", 351.0 / run.engine_s);
	if (run.admitted != n) {
		fprintf(stderr, "carve-bench: kueue: %zu of %zu admitted\n", run.admitted, n);
		goto out;
	}
	r->kueue_baseline_s = run.engine_s;
	rc = 0;
out:
	if (!a)
		fprintf(stderr, "carve-bench: out of memory\n");
	free(w);
	carve_adm_destroy(a);
	return rc;
}
