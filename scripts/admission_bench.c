/*
 * admission_bench.c - the admission engine at scale (docs/internals/
 * ADMISSION-PERF.md): the scale, Kueue-baseline and reclaim shapes, engine
 * time (the thread's CPU clock; WALL=1 for wall time), bytes per pending
 * workload (every allocation, through carve_set_allocator) and a checksum
 * of every workload's whole status after every step, so two builds can be
 * shown to decide the same (DUMP=FILE writes the statuses as text).
 *
 * Not part of the build; against a Release build tree:
 *   cc -O2 -std=gnu11 -Iinclude scripts/admission_bench.c \
 *      build/libcarve_core.a -lm -o /tmp/admission_bench
 *   /tmp/admission_bench [all|scale|kueue|reclaim] [quick]
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "carve/admit.h"
#include "carve/cluster.h"
#include "carve/place.h"

static double now_s(void)
{
	struct timespec ts;

	static int wall = -1; if (wall < 0) wall = getenv("WALL") != NULL; clock_gettime(wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- allocation accounting ---- */
static long long live_bytes;
static void *m_malloc(size_t n)
{
	void *p = malloc(n);
	if (p)
		live_bytes += malloc_usable_size(p);
	return p;
}
static void *m_realloc(void *p, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0;
	void *q = realloc(p, n);
	if (q) {
		live_bytes -= old;
		live_bytes += malloc_usable_size(q);
	}
	return q;
}
static void m_free(void *p)
{
	if (p)
		live_bytes -= malloc_usable_size(p);
	free(p);
}

/* ---- checksum ---- */
static uint64_t H = 1469598103934665603ULL;
static FILE *dump;
static void hb(const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;
	for (i = 0; i < n; i++) {
		H ^= c[i];
		H *= 1099511628211ULL;
	}
}
static void hs(const char *s)
{
	if (!s)
		s = "(null)";
	hb(s, strlen(s) + 1);
}
static void hi(long long v)
{
	hb(&v, sizeof(v));
}

static double status_time;

static void hash_status(struct carve_adm *a, uint32_t id, int step)
{
	double t0 = now_s();
	const struct carve_wl_status *s = carve_adm_status(a, id);
	size_t p, k;

	status_time += now_s() - t0;
	hs(s->key);
	hs(s->cq);
	hi(s->state);
	hi(s->admitted_by_engine);
	hi(s->borrowing);
	hi(s->marked);
	hi(s->evicted);
	hi(s->marked || s->evicted ? (long long)s->preemptor : -1);
	hi(s->preempt_reason);
	hi(s->pending_reason);
	hs(s->message);
	hi(s->cycle);
	hi((long long)s->npodsets);
	for (p = 0; p < s->npodsets; p++) {
		const struct carve_ps_result *r = &s->podsets[p];
		hs(r->name);
		hi(r->count);
		for (k = 0; k < r->n; k++) {
			hs(r->resources[k]);
			hs(r->flavors[k]);
			hi(r->usage[k]);
		}
		for (k = 0; k < r->npods; k++) {
			int d;
			hi(r->pods[k].node);
			for (d = 0; d < r->pods[k].ndevs; d++)
				hi(r->pods[k].devs[d].gpu);
		}
	}
	if (dump)
		fprintf(dump, "%d %s %d %d %d %d %u %d %d c%d %s %s\n", step, s->key, s->state,
			s->marked, s->evicted, s->borrowing, s->preemptor, s->preempt_reason,
			s->pending_reason, s->cycle,
			s->npodsets && s->podsets[0].n ? s->podsets[0].flavors[0] : "-", s->message);
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t xr(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void die(const char *what, int rc, struct carve_error *e)
{
	fprintf(stderr, "%s: %d %s\n", what, rc, e ? e->text : "");
	exit(1);
}

/* ---- shape A: 1000 CQs / 50 cohorts / 100k pending ---- */
static void shape_scale(int ncq_total, int ncohorts, int nwl, bool quick)
{
	struct carve_error err;
	struct carve_adm *a = carve_adm_create();
	const char *res[] = {"cpu", "nvidia.com/gpu"};
	const char *flv[] = {"a100", "h100"};
	struct carve_flavor_spec fs = {0};
	char name[64], key[64], cqn[64];
	int i, rc;
	double t0, t_add, t_run = 0, t_add2 = 0;
	int cycles = 0, admitted = 0, decisions = 0, evictions = 0, final_admitted = 0;
	double max_cycle = 0;
	bool quick_hash = getenv("FULLHASH") == NULL;
	long long mem0, mem1;
	(void)quick;

	fs.name = "a100";
	if ((rc = carve_adm_add_flavor(a, &fs, &err)))
		die("flavor", rc, &err);
	fs.name = "h100";
	if ((rc = carve_adm_add_flavor(a, &fs, &err)))
		die("flavor", rc, &err);
	for (i = 0; i < ncq_total; i++) {
		struct carve_fquota q[4] = {{0}};
		struct carve_rgroup_spec g = {2, res, 2, flv, q};
		struct carve_cq_spec s = {0};
		char coh[64];

		q[0].present = true; q[0].nominal = 64000;       /* a100 cpu */
		q[1].present = true; q[1].nominal = (20 + (i % 5) * 10) * 1000; /* a100 gpu */
		q[1].has_borrowing_limit = (i % 3) != 0;
		q[1].borrowing_limit = 30000;
		q[2].present = true; q[2].nominal = 64000;
		q[3].present = true; q[3].nominal = (10 + (i % 4) * 5) * 1000;
		snprintf(cqn, sizeof(cqn), "cq-%04d", i);
		snprintf(coh, sizeof(coh), "cohort-%02d", i % ncohorts);
		s.name = cqn;
		s.cohort = coh;
		s.ngroups = 1;
		s.groups = &g;
		s.within_cq = CARVE_WCQ_LOWER;
		s.reclaim = CARVE_RECLAIM_ANY;
		s.bwc = CARVE_BWC_NEVER;
		s.when_can_borrow = CARVE_FUNG_MAY_STOP;
		s.when_can_preempt = CARVE_FUNG_TRY_NEXT;
		s.fair_weight_milli = 1000;
		if ((rc = carve_adm_add_cq(a, &s, &err)))
			die("cq", rc, &err);
	}
	if ((rc = carve_adm_finalize(a, &err)))
		die("finalize", rc, &err);
	mem0 = live_bytes;
	/* Phase 1: 90% of workloads; phase 2: the rest, higher priority. */
	int n1 = nwl * 9 / 10;
	t0 = now_s();
	for (i = 0; i < n1; i++) {
		struct carve_req rq[2] = {{"cpu", 1000}, {"nvidia.com/gpu", 0}};
		struct carve_podset_spec ps = {0};
		struct carve_wl_spec w = {0};

		rq[1].milli = (int64_t)(1 + xr() % 2) * 1000;
		ps.name = "main";
		ps.count = 1;
		ps.min_count = 1;
		ps.nreqs = 2;
		ps.reqs = rq;
		snprintf(key, sizeof(key), "ns/wl-%06d", i);
		snprintf(name, sizeof(name), "cq-%04d", (int)((i * 7919ULL + xr() % 3) % ncq_total));
		w.key = key;
		w.cq = name;
		w.priority = (int32_t)(xr() % 3) * 100;
		w.created = (int64_t)(xr() % 100000);
		w.has_created = true;
		w.npodsets = 1;
		w.podsets = &ps;
		rc = carve_adm_add_workload(a, &w, &err);
		if (rc < 0)
			die("wl", rc, &err);
	}
	t_add = now_s() - t0;
	mem1 = live_bytes;
	printf("scale: %d CQs, %d cohorts, %d workloads added in %.3f s; %.0f B/pending "
	       "(every engine allocation, arena included, before any status is read)\n",
	       ncq_total, ncohorts, n1, t_add, (double)(mem1 - mem0) / n1);
	for (int step = 0; step < 2; step++) {
		if (step == 1) {
			t0 = now_s();
			for (i = n1; i < nwl; i++) {
				struct carve_req rq[2] = {{"cpu", 1000}, {"nvidia.com/gpu", 0}};
				struct carve_podset_spec ps = {0};
				struct carve_wl_spec w = {0};

				rq[1].milli = (int64_t)(1 + xr() % 4) * 1000;
				ps.name = "main";
				ps.count = 1;
				ps.min_count = 1;
				ps.nreqs = 2;
				ps.reqs = rq;
				snprintf(key, sizeof(key), "ns/late-%06d", i);
				snprintf(name, sizeof(name), "cq-%04d", (int)(xr() % ncq_total));
				w.key = key;
				w.cq = name;
				w.priority = 300 + (int32_t)(xr() % 3) * 100;
				w.created = 100000 + (int64_t)(xr() % 1000);
				w.has_created = true;
				w.npodsets = 1;
				w.podsets = &ps;
				rc = carve_adm_add_workload(a, &w, &err);
				if (rc < 0)
					die("wl", rc, &err);
			}
			t_add2 = now_s() - t0;
		}
		for (int cc = 0; cc < (step ? 100 : 150); cc++) {
			int d, ev = 0;

			t0 = now_s();
			if (cc)
				ev = carve_adm_evict_marked(a);
			d = carve_adm_cycle(a, 1000 + step * 1000 + cc);
			double dt = now_s() - t0;
			t_run += dt;
			if (dt > max_cycle)
				max_cycle = dt;
			cycles++;
			decisions += d;
			evictions += ev;
			if (!quick_hash || cc % 10 == 0 || cc == (step ? 99 : 149))
				for (i = 0; i < (int)carve_adm_workload_count(a); i++)
					hash_status(a, (uint32_t)i, step * 1000 + cc);
		}
		t0 = now_s();
		evictions += carve_adm_evict_marked(a);
		t_run += now_s() - t0;
	}
	admitted = decisions - evictions;
	for (i = 0; i < (int)carve_adm_workload_count(a); i++)
		hash_status(a, (uint32_t)i, 9999);
	{
	for (i = 0; i < (int)carve_adm_workload_count(a); i++) {
		const struct carve_wl_status *s = carve_adm_status(a, (uint32_t)i);
		if (s->state == CARVE_WL_ADMITTED && s->admitted_by_engine)
			final_admitted++;
	}
	}
	printf("scale: %d admissions, %d preemptions, %d admitted at the end, %d cycles, engine %.3f s "
	       "(+ add %.3f s): %.0f admissions/s, %.3f ms/cycle mean, %.3f ms max; status reads %.3f s\n",
	       admitted, evictions, final_admitted, cycles, t_run, t_add + t_add2, admitted / t_run,
	       1000 * t_run / cycles, 1000 * max_cycle, status_time);
	printf("scale: after the run, statuses read: %.0f B per workload\n",
	       (double)(live_bytes - mem0) / (double)carve_adm_workload_count(a));
	printf("scale checksum %016llx\n", (unsigned long long)H);
	carve_adm_destroy(a);
}

/* ---- shape B: Kueue perf baseline ---- */
struct kw {
	int cq, cls;
	int64_t created;
	int id;
	int64_t done_at; /* -1: not admitted */
	int finished;
};

static int kw_cmp(const void *x, const void *y)
{
	const struct kw *a = x, *b = y;
	if (a->created != b->created)
		return a->created < b->created ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static void shape_kueue(void)
{
	struct carve_error err;
	struct carve_adm *a = carve_adm_create();
	const char *res[] = {"cpu"};
	const char *flv[] = {"default"};
	struct carve_flavor_spec fs = {0};
	int i, rc, c, k;
	static const int cnt[3] = {350, 100, 50}, every[3] = {100, 500, 1200},
			 runtime[3] = {200, 500, 1000}, prio[3] = {50, 100, 200}, req[3] = {1, 5, 20};
	static const char *cls[3] = {"small", "medium", "large"};
	int nw = 0;
	struct kw *ws = calloc(15000, sizeof(*ws));
	double t_engine = 0, t0;
	int cycles = 0, admitted = 0, steps = 0;

	fs.name = "default";
	carve_adm_add_flavor(a, &fs, &err);
	for (c = 0; c < 30; c++) {
		struct carve_fquota q = {true, 20000, 100000, 0, true, false};
		struct carve_rgroup_spec g = {1, res, 1, flv, &q};
		struct carve_cq_spec s = {0};
		char cqn[32], coh[32];

		snprintf(cqn, sizeof(cqn), "cq-%d", c);
		snprintf(coh, sizeof(coh), "cohort-%d", c / 6);
		s.name = cqn;
		s.cohort = coh;
		s.ngroups = 1;
		s.groups = &g;
		s.within_cq = CARVE_WCQ_LOWER;
		s.reclaim = CARVE_RECLAIM_ANY;
		s.fair_weight_milli = 1000;
		if ((rc = carve_adm_add_cq(a, &s, &err)))
			die("cq", rc, &err);
		for (k = 0; k < 3; k++)
			for (i = 0; i < cnt[k]; i++) {
				ws[nw].cq = c;
				ws[nw].cls = k;
				ws[nw].created = (int64_t)i * every[k];
				ws[nw].id = nw;
				ws[nw].done_at = -1;
				nw++;
			}
	}
	if ((rc = carve_adm_finalize(a, &err)))
		die("finalize", rc, &err);
	qsort(ws, (size_t)nw, sizeof(*ws), kw_cmp);
	int *engine_id = malloc(sizeof(int) * (size_t)nw); /* engine id -> ws index */
	int next = 0, nlive = 0, nfin = 0;
	int *live = malloc(sizeof(int) * (size_t)nw);
	int64_t t = 0;
	while (nfin < nw) {
		/* next event time */
		int64_t tn = INT64_MAX;
		if (next < nw)
			tn = ws[next].created;
		for (i = 0; i < nlive; i++)
			if (ws[live[i]].done_at >= 0 && ws[live[i]].done_at < tn)
				tn = ws[live[i]].done_at;
		if (tn == INT64_MAX) {
			fprintf(stderr, "kueue: stuck with %d live\n", nlive);
			break;
		}
		t = tn;
		t0 = now_s();
		for (i = 0; i < nlive; i++) {
			struct kw *w = &ws[live[i]];
			if (w->done_at >= 0 && w->done_at <= t) {
				carve_adm_finish(a, (uint32_t)w->id);
				w->finished = 1;
				nfin++;
				live[i--] = live[--nlive];
			}
		}
		while (next < nw && ws[next].created <= t) {
			struct kw *w = &ws[next];
			struct carve_req rq = {"cpu", (int64_t)req[w->cls] * 1000};
			struct carve_podset_spec ps = {0};
			struct carve_wl_spec s = {0};
			char key[48], cqn[32];

			ps.name = "main";
			ps.count = 1;
			ps.min_count = 1;
			ps.nreqs = 1;
			ps.reqs = &rq;
			snprintf(key, sizeof(key), "ns/%s-%d-%d", cls[w->cls], w->cq, next);
			snprintf(cqn, sizeof(cqn), "cq-%d", w->cq);
			s.key = key;
			s.cq = cqn;
			s.priority = prio[w->cls];
			s.created = w->created;
			s.has_created = true;
			s.npodsets = 1;
			s.podsets = &ps;
			rc = carve_adm_add_workload(a, &s, &err);
			if (rc < 0)
				die("kwl", rc, &err);
			w->id = rc;
			engine_id[rc] = next;
			live[nlive++] = next;
			next++;
		}
		cycles += carve_adm_run(a, t, 1000);
		carve_adm_evict_marked(a);
		t_engine += now_s() - t0;
		steps++;
		for (i = 0; i < nlive; i++) {
			struct kw *w = &ws[live[i]];
			double t1 = now_s();
			const struct carve_wl_status *s = carve_adm_status(a, (uint32_t)w->id);
			status_time += now_s() - t1;
			if (s->state == CARVE_WL_ADMITTED && w->done_at < 0) {
				w->done_at = t + runtime[w->cls];
				admitted++;
			} else if (s->state == CARVE_WL_PENDING && w->done_at >= 0) {
				w->done_at = -1; /* evicted */
			}
			hash_status(a, (uint32_t)w->id, steps);
		}
	}
	printf("kueue: %d workloads, %d admissions, %d steps, %d cycles, simulated %.1f s; "
	       "engine %.3f s (%.0f admissions/s); status reads %.3f s\n",
	       nw, admitted, steps, cycles, t / 1000.0, t_engine, admitted / t_engine, status_time);
	printf("kueue checksum %016llx\n", (unsigned long long)H);
	free(ws);
	free(live);
	free(engine_id);
	carve_adm_destroy(a);
}

/* ---- shape C: reclaim on 500 nodes x 8 GPUs ---- */
static void shape_reclaim(int nnodes, int hi_pods, int hi_gpus)
{
	struct carve_error err;
	struct carve_cluster *cl = carve_cluster_create();
	struct carve_gpu_spec gpus[8];
	struct carve_adm *a = carve_adm_create();
	struct carve_placer *pl;
	const char *res[] = {"nvidia.com/gpu"};
	const char *flv[] = {"gpu"};
	struct carve_flavor_spec fs = {0};
	int i, rc;
	char name[64];
	double t0, t1;

	memset(gpus, 0, sizeof(gpus));
	for (i = 0; i < 8; i++) {
		gpus[i].model = "NVIDIA-H100-80GB-HBM3";
		gpus[i].memory_mib = 81559;
		gpus[i].sharing = CARVE_SHARE_EXCLUSIVE;
	}
	for (i = 0; i < nnodes; i++) {
		struct carve_node_spec ns = {0};

		snprintf(name, sizeof(name), "node-%04d", i);
		ns.name = name;
		ns.cpu_milli = 128000;
		ns.memory_milli = (int64_t)1 << 50;
		ns.pods = 110;
		ns.ngpus = 8;
		ns.gpus = gpus;
		if ((rc = carve_cluster_add_node(cl, &ns, &err)) < 0)
			die("node", rc, &err);
	}
	pl = carve_placer_create(cl, "binpack", 1, &err);
	if (!pl)
		die("placer", 0, &err);
	fs.name = "gpu";
	carve_adm_add_flavor(a, &fs, &err);
	{
		struct carve_fquota qlo = {true, 0, 0, 0, false, false};
		struct carve_fquota qhi = {true, (int64_t)nnodes * 8 * 1000 / 2, 0, 0, false, false};
		struct carve_rgroup_spec glo = {1, res, 1, flv, &qlo}, ghi = {1, res, 1, flv, &qhi};
		struct carve_fquota qlo2 = {true, (int64_t)nnodes * 8 * 1000 / 2, 0, 0, false, false};
		struct carve_cq_spec s = {0};

		glo.quota = &qlo2;
		s.name = "lo";
		s.cohort = "research";
		s.ngroups = 1;
		s.groups = &glo;
		s.within_cq = CARVE_WCQ_LOWER;
		s.reclaim = CARVE_RECLAIM_ANY;
		s.fair_weight_milli = 1000;
		carve_adm_add_cq(a, &s, &err);
		s.name = "hi";
		s.groups = &ghi;
		carve_adm_add_cq(a, &s, &err);
		(void)qlo;
	}
	if ((rc = carve_adm_finalize(a, &err)))
		die("finalize", rc, &err);
	if ((rc = carve_adm_set_placer(a, pl, cl)))
		die("set_placer", rc, NULL);
	t0 = now_s();
	for (i = 0; i < nnodes * 8; i++) {
		struct carve_req rq = {"nvidia.com/gpu", 1000};
		struct carve_podset_spec ps = {0};
		struct carve_wl_spec w = {0};
		struct carve_label fl = {"nvidia.com/gpu", "gpu"};
		struct carve_ps_admission pa = {"main", 1, 1, &fl};
		char key[48];

		ps.name = "main";
		ps.count = 1;
		ps.min_count = 1;
		ps.nreqs = 1;
		ps.reqs = &rq;
		snprintf(key, sizeof(key), "lo/job-%05d", i);
		w.key = key;
		w.cq = "lo";
		w.priority = (int32_t)(xr() % 4);
		w.created = (int64_t)(xr() % 10000);
		w.has_created = true;
		w.npodsets = 1;
		w.podsets = &ps;
		w.admitted = true;
		w.admitted_at = w.created + (int64_t)(xr() % 100);
		w.has_admitted_at = true;
		w.nadmission = 1;
		w.admission = &pa;
		if ((rc = carve_adm_add_workload(a, &w, &err)) < 0)
			die("lo wl", rc, &err);
	}
	{
		struct carve_req rq = {"nvidia.com/gpu", (int64_t)hi_gpus * 1000};
		struct carve_podset_spec ps = {0};
		struct carve_wl_spec w = {0};

		ps.name = "main";
		ps.count = hi_pods;
		ps.min_count = hi_pods;
		ps.nreqs = 1;
		ps.reqs = &rq;
		w.key = "hi/train";
		w.cq = "hi";
		w.priority = 1000;
		w.created = 20000;
		w.has_created = true;
		w.npodsets = 1;
		w.podsets = &ps;
		if ((rc = carve_adm_add_workload(a, &w, &err)) < 0)
			die("hi wl", rc, &err);
	}
	t1 = now_s();
	printf("reclaim: %d nodes x 8 GPUs, %d low-priority jobs placed in %.3f s\n", nnodes,
	       nnodes * 8, t1 - t0);
	t0 = now_s();
	rc = carve_adm_cycle(a, 30000);
	t1 = now_s();
	int nmarked = 0;
	for (i = 0; i < (int)carve_adm_workload_count(a); i++) {
		const struct carve_wl_status *s = carve_adm_status(a, (uint32_t)i);
		nmarked += s->marked;
		hash_status(a, (uint32_t)i, 0);
	}
	printf("reclaim: hi needs %d pods x %d GPUs: cycle 1 %.3f ms, %d decisions, %d victims "
	       "marked\n", hi_pods, hi_gpus, 1000 * (t1 - t0), rc, nmarked);
	double tot = t1 - t0;
	for (int round = 1; round < 10; round++) {
		int ev = carve_adm_evict_marked(a);
		t0 = now_s();
		rc = carve_adm_cycle(a, 30000 + round);
		t1 = now_s();
		tot += t1 - t0;
		nmarked = 0;
		for (i = 0; i < (int)carve_adm_workload_count(a); i++) {
			const struct carve_wl_status *s = carve_adm_status(a, (uint32_t)i);
			nmarked += s->marked;
			hash_status(a, (uint32_t)i, round);
		}
		const struct carve_wl_status *h = carve_adm_status(a, (uint32_t)(nnodes * 8));
		printf("reclaim: cycle %d after evicting %d: %.3f ms, %d decisions, %d marked, "
		       "hi %s\n", round + 1, ev, 1000 * (t1 - t0), rc, nmarked,
		       h->state == CARVE_WL_ADMITTED ? "admitted" : h->message);
		if (rc == 0 || h->state == CARVE_WL_ADMITTED)
			break;
	}
	printf("reclaim checksum %016llx\n", (unsigned long long)H);
	carve_adm_destroy(a);
	carve_placer_destroy(pl);
	carve_cluster_destroy(cl);
}

int main(int argc, char **argv)
{
	struct carve_allocator al = {m_malloc, m_realloc, m_free};
	const char *which = argc > 1 ? argv[1] : "all";
	bool quick = argc > 2 && !strcmp(argv[2], "quick");

	if (getenv("DUMP"))
		dump = fopen(getenv("DUMP"), "w");
	carve_set_allocator(&al);
	if (!strcmp(which, "all") || !strcmp(which, "scale")) {
		H = 1469598103934665603ULL;
		if (quick)
			shape_scale(100, 10, 10000, true);
		else
			shape_scale(1000, 50, 100000, false);
	}
	if (!strcmp(which, "all") || !strcmp(which, "kueue")) {
		H = 1469598103934665603ULL;
		status_time = 0;
		shape_kueue();
	}
	if (!strcmp(which, "all") || !strcmp(which, "reclaim")) {
		H = 1469598103934665603ULL;
		status_time = 0;
		if (quick)
			shape_reclaim(50, 25, 8);
		else
			shape_reclaim(500, 250, 8);
	}
	if (dump)
		fclose(dump);
	return 0;
}
