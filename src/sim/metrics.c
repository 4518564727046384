/*
 * metrics.c - the replay simulator's accounting and its JSON result
 * (docs/simulator.md defines every field).
 *
 * What jobs hold is kept as running sums (per pool, per queue, total) in
 * GPU-equivalents, changed only through sim_hold()/sim_unhold(); the
 * time-weighted metrics integrate those step functions between event
 * times (sim_advance), and a snapshot after each event time records them
 * for the sampled "series".  Nothing here allocates per event except the
 * snapshot log and the fragmentation mix.
 *
 * The window: every percentage, average, wait and first-time success is
 * measured inside one window, the same for every side of a comparison
 * (first arrival .. the trace's end, or --until), over the same
 * denominator (its length x capacity); the w_ integrals clip to it, and a
 * run that ends before the window's end carries its last state (nothing
 * changes once no event is left) to it.  gpu_hours_per_job, makespan and
 * the series cover the whole run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "carve/frag.h"
#include "sim_int.h"

/* ---- accounting ------------------------------------------------------------------ */

int sim_hold(struct carve_sim *s, struct sjob *jb, uint32_t node, double alloc, double work)
{
	uint32_t pool = node == SIM_NO_NODE ? 0 : s->node_pool[node];

	if (!jb->contrib) {
		jb->contrib = carve_calloc(2 * s->npools + 1, sizeof(double));
		if (!jb->contrib)
			return CARVE_ENOMEM;
	}
	if (node != SIM_NO_NODE) {
		jb->contrib[pool] += alloc;
		jb->contrib[s->npools + pool] += work;
		s->pool_alloc[pool] += alloc;
		s->pool_work[pool] += work;
	}
	s->alloc += alloc;
	s->work += work;
	s->queues[jb->q].used += alloc;
	if (jb->cls >= 0)
		s->classes[jb->cls].used += alloc;
	jb->held_alloc += alloc;
	jb->held_work += work;
	return 0;
}

void sim_unhold(struct carve_sim *s, struct sjob *jb)
{
	size_t i;

	if (!jb->contrib)
		return;
	for (i = 0; i < s->npools; i++) {
		s->pool_alloc[i] -= jb->contrib[i];
		s->pool_work[i] -= jb->contrib[s->npools + i];
		/* Sums of the same doubles in another order: clamp the dust. */
		if (fabs(s->pool_alloc[i]) < 1e-9)
			s->pool_alloc[i] = 0;
		if (fabs(s->pool_work[i]) < 1e-9)
			s->pool_work[i] = 0;
	}
	memset(jb->contrib, 0, 2 * s->npools * sizeof(double));
	s->alloc -= jb->held_alloc;
	s->work -= jb->held_work;
	s->queues[jb->q].used -= jb->held_alloc;
	if (jb->cls >= 0) {
		s->classes[jb->cls].used -= jb->held_alloc;
		if (fabs(s->classes[jb->cls].used) < 1e-9)
			s->classes[jb->cls].used = 0;
	}
	if (fabs(s->alloc) < 1e-9)
		s->alloc = 0;
	if (fabs(s->work) < 1e-9)
		s->work = 0;
	if (fabs(s->queues[jb->q].used) < 1e-9)
		s->queues[jb->q].used = 0;
	jb->held_alloc = jb->held_work = 0;
}

/* Whether the run's queues can borrow: only carve and Kueue do; the
 * ResourceQuotas of the other baselines never lend or borrow. */
static bool sim_borrows(const struct carve_sim *s)
{
	return s->o.sched == CARVE_SIM_CARVE || s->o.sched == CARVE_SIM_KUEUE;
}

/* GE q holds above its nominal now (0 when the run's queues cannot borrow). */
static double borrowed_now(const struct carve_sim *s, const struct squeue *q)
{
	return sim_borrows(s) && q->used > q->nominal + 1e-9 ? q->used - q->nominal : 0;
}

/* Adds dt seconds of the current state to the window's integrals. */
static void window_add(struct carve_sim *s, double dt)
{
	size_t i;

	s->w_alloc_area += s->alloc * dt;
	s->w_work_area += s->work * dt;
	s->w_frag_area += s->frag_now * dt;
	for (i = 0; i < s->nqueues; i++) {
		struct squeue *q = &s->queues[i];

		q->w_used_area += q->used * dt;
		q->w_borrowed_area += borrowed_now(s, q) * dt;
	}
}

void sim_advance(struct carve_sim *s, int64_t t)
{
	double dt = (double)(t - s->last_t);
	int64_t lo = s->last_t > s->win_start ? s->last_t : s->win_start;
	int64_t hi = t < s->win_end ? t : s->win_end;
	size_t i;

	if (hi > lo)
		window_add(s, (double)(hi - lo));
	if (dt > 0) {
		/* the whole run's areas: GPU-hours per completed job */
		for (i = 0; i < s->nqueues; i++)
			s->queues[i].used_area += s->queues[i].used * dt;
		for (i = 0; i < s->nclasses; i++)
			s->classes[i].used_area += s->classes[i].used * dt;
		s->last_t = t;
	}
	s->now = t;
}

int sim_snapshot(struct carve_sim *s)
{
	size_t w = 1 + s->snapw, i;
	double *row;

	if (s->nsnap && (int64_t)s->snaps[(s->nsnap - 1) * w] == s->now) {
		row = &s->snaps[(s->nsnap - 1) * w];
	} else {
		if (s->nsnap == s->capsnap) {
			size_t c = s->capsnap ? s->capsnap * 2 : 256;
			void *v = carve_realloc(s->snaps, c * w * sizeof(double));

			if (!v)
				return CARVE_ENOMEM;
			s->snaps = v;
			s->capsnap = c;
		}
		row = &s->snaps[s->nsnap++ * w];
	}
	row[0] = (double)s->now;
	for (i = 0; i < s->npools; i++) {
		row[1 + i] = s->pool_alloc[i];
		row[1 + s->npools + i] = s->pool_work[i];
	}
	for (i = 0; i < s->nqueues; i++)
		row[1 + 2 * s->npools + i] = s->queues[i].used;
	return 0;
}

/* ---- window, waits, attempts ------------------------------------------------------ */

void sim_window_open(struct carve_sim *s, int64_t until)
{
	int64_t lo = -1, hi = 0;
	size_t i;

	for (i = 0; i < s->njobs; i++) {
		const struct carve_job *j = s->jobs[i].j;
		int64_t end;

		if (s->jobs[i].st == SJ_SKIPPED)
			continue;
		end = sim_time_add(j->arrival, j->duration);
		if (lo < 0 || j->arrival < lo)
			lo = j->arrival;
		if (end > hi)
			hi = end;
	}
	s->win_start = lo < 0 ? 0 : lo;
	s->win_end = hi;
	s->win_until = until >= 0;
	if (until >= 0)
		s->win_end = until < CARVE_SIM_TIME_MAX ? until : CARVE_SIM_TIME_MAX;
	if (s->win_end < s->win_start)
		s->win_end = s->win_start;
}

void sim_job_running(struct carve_sim *s, struct sjob *jb, int64_t at)
{
	jb->ready = at;
	if (!jb->has_all_pods && at <= s->now) { /* later: the caller records it then */
		jb->all_pods = at;
		jb->has_all_pods = true;
	}
	if (jb->gpu_job && !jb->has_first_gpu) {
		jb->first_gpu = s->now;
		jb->has_first_gpu = true;
	}
	if (jb->npods > 1) {
		jb->attempted = true;
		if (!jb->has_attempt_t) {
			jb->attempt_t = s->now;
			jb->has_attempt_t = true;
		}
	}
}

void sim_job_failed(struct carve_sim *s, struct sjob *jb)
{
	jb->failed_first = true;
	if (!jb->has_fail_t) {
		jb->fail_t = s->now;
		jb->has_fail_t = true;
	}
}

/* Seconds of work (at the size the job asked for) left to jb at time at. */
static double work_left(const struct sjob *jb, int64_t at)
{
	double left = (double)jb->remaining;

	if (jb->st == SJ_RUNNING && at > jb->ready) {
		double adm = jb->adm_pods > 0 ? jb->adm_pods : jb->npods;

		left -= (double)(at - jb->ready) * adm / (jb->npods > 0 ? jb->npods : 1);
	}
	return left > 0 ? left : 0;
}

/* The backlog at time at (the state now, no event between now and at):
 * arrived jobs waiting and running, GE x seconds of work left. */
static void backlog_at(const struct carve_sim *s, int64_t at, size_t *waiting,
		       size_t *running, double *left)
{
	size_t i;

	*waiting = *running = 0;
	*left = 0;
	for (i = 0; i < s->njobs; i++) {
		const struct sjob *jb = &s->jobs[i];

		if (jb->st != SJ_PENDING && jb->st != SJ_RUNNING)
			continue;
		*waiting += jb->st == SJ_PENDING;
		*running += jb->st == SJ_RUNNING;
		*left += jb->asked_ge * work_left(jb, at);
	}
}

void sim_window_backlog(struct carve_sim *s)
{
	if (s->backlog_done)
		return;
	/* called once no event is left before the window's end */
	backlog_at(s, s->win_end, &s->bl_waiting, &s->bl_running, &s->bl_left);
	s->backlog_done = true;
}

/* ---- fragmentation ------------------------------------------------------------- */

#define MIX_MAX 64

/* One pending pod type: the request it is placed with (in the baseline as
 * the baseline turns it into whole GPUs, with the kind label in sel/key),
 * the podSet it was first seen in (its shape is the type's key) and its
 * queue (the tolerations). */
struct mixt {
	struct carve_pod_req r;
	const struct carve_job_podset *ps;
	int q;
	struct carve_label *sel;      /* baseline: ps's selector + the kind label */
	char key[128];
};

void sim_measure_frag(struct carve_sim *s)
{
	struct mixt *mix = carve_calloc(MIX_MAX, sizeof(*mix));
	struct carve_pod_req types[MIX_MAX];
	double w[MIX_MAX], total = 0, f;
	size_t n = 0, i, p, k;
	bool base = s->o.sched != CARVE_SIM_CARVE;
	struct carve_placer *pl = base ? s->bp : s->p;
	const uint32_t *list = base ? s->waiting : s->active;
	size_t nlist = base ? s->nwaiting : s->nactive;

	s->frag_now = 0;
	if (!mix || !pl) { /* no mix, or quota only: nothing to place */
		carve_free(mix);
		return;
	}
	for (i = 0; i < nlist; i++) {
		const struct sjob *jb = &s->jobs[list[i]];

		if (jb->st != SJ_PENDING)
			continue;
		for (p = 0; p < jb->j->npodsets; p++) {
			const struct carve_job_podset *ps = &jb->j->podsets[p];
			struct carve_pod_req r;

			for (k = 0; k < n &&
				    !(mix[k].q == jb->q && sim_same_pod(mix[k].ps, ps)); k++)
				;
			if (k < n) {
				w[k] += ps->count;
				total += ps->count;
				continue;
			}
			if (n == MIX_MAX)
				continue; /* types beyond MIX_MAX are left out of the mix */
			total += ps->count;
			sim_pod_req(jb, p, &r);
			r.nmodels = ps->nmodels;
			r.models = ps->models;
			mix[n].ps = ps;
			mix[n].q = jb->q;
			mix[n].r = r;
			if (base) {
				mix[n].sel = carve_calloc(ps->nselector + 2, sizeof(*mix[n].sel));
				if (!mix[n].sel)
					goto out;
				sim_base_pod_req(jb, p, &mix[n].r, mix[n].sel,
						 mix[n].key, sizeof(mix[n].key));
				mix[n].r.nmodels = ps->nmodels;
				mix[n].r.models = ps->models;
			}
			mix[n].r.nterms = 0;
			mix[n].r.terms = NULL;
			mix[n].r.ntolerations = s->qtol_off[jb->q + 1] - s->qtol_off[jb->q];
			mix[n].r.tolerations = s->qtol + s->qtol_off[jb->q];
			w[n++] = ps->count;
		}
	}
	if (!n || s->cap <= 0)
		goto out;
	for (i = 0; i < n; i++) {
		w[i] /= total;
		types[i] = mix[i].r;
	}
	/* fgd places against the pending mix (its typical task types) */
	if (!base && !strcmp(s->policy, "fgd") && carve_placer_set_mix(pl, types, w, n))
		goto out;
	f = carve_frag_pending(pl, types, w, n);
	if (f > 0)
		s->frag_now = f / s->cap * 100.0;
out:
	for (i = 0; i < n; i++)
		carve_free(mix[i].sel);
	carve_free(mix);
}

/* ---- JSON ------------------------------------------------------------------------ */

static double r4(double x)
{
	return round(x * 10000.0) / 10000.0;
}

static json_t *num(double x)
{
	return json_real(r4(x));
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least pct % of them at or below. */
static int64_t pctl(const int64_t *v, size_t n, double pct)
{
	size_t k = (size_t)ceil(pct / 100.0 * (double)n);

	return v[k ? k - 1 : 0];
}

#define SET(o, k, v) (bad |= json_object_set_new((o), (k), (v)) != 0)

/* The window as measured: cut is where it stops (its end once the run is
 * complete or reached it; the time reached when stopped earlier), len its
 * length, and the integrals with the state after the last event carried
 * to cut (nothing changes once no event is left). */
struct wview {
	int64_t cut;
	double len, alloc, work, frag, tail;
};

static void window_view(const struct carve_sim *s, struct wview *v)
{
	bool complete = s->started && !s->nheap;
	int64_t from;

	v->cut = complete || s->now >= s->win_end ? s->win_end : s->now;
	if (v->cut < s->win_start)
		v->cut = s->win_start;
	v->len = (double)(v->cut - s->win_start);
	from = s->now > s->win_start ? s->now : s->win_start;
	v->tail = v->cut > from ? (double)(v->cut - from) : 0;
	v->alloc = s->w_alloc_area + s->alloc * v->tail;
	v->work = s->w_work_area + s->work * v->tail;
	v->frag = s->w_frag_area + s->frag_now * v->tail;
}

/* Whether jb is a multi-pod job whose first attempt was decided by cut
 * (-1: not counted), and whether it succeeded: every pod placed at once,
 * not partially admitted, neither preempted nor timed out by cut. */
static int first_time(const struct sjob *jb, int64_t cut)
{
	bool ran, failed;

	if (jb->npods <= 1 || jb->st == SJ_SKIPPED || jb->j->arrival > cut)
		return -1;
	ran = jb->attempted && (!jb->has_attempt_t || jb->attempt_t <= cut);
	failed = jb->failed_first && (!jb->has_fail_t || jb->fail_t <= cut);
	if (!ran && !failed)
		return -1;
	return ran && !failed && !jb->partial;
}

/* Waits (sorted) of the GPU jobs of queue q (q < 0: any) and class c (c <
 * 0: any) that arrived by cut: until the first GPU, or (all) until every
 * pod ran; a job that had not by cut counts cut - arrival (censored). */
static size_t collect_waits(const struct carve_sim *s, int64_t cut, int q, int c, bool all,
			    int64_t *out, size_t *censored)
{
	size_t i, n = 0;

	*censored = 0;
	for (i = 0; i < s->njobs; i++) {
		const struct sjob *jb = &s->jobs[i];
		bool has = all ? jb->has_all_pods : jb->has_first_gpu;
		int64_t t = all ? jb->all_pods : jb->first_gpu;

		if ((q >= 0 && jb->q != q) || (c >= 0 && jb->cls != c) || !jb->gpu_job ||
		    jb->st == SJ_FUTURE || jb->st == SJ_SKIPPED || jb->j->arrival > cut)
			continue;
		if (has && t <= cut) {
			out[n++] = t - jb->j->arrival;
		} else {
			out[n++] = cut - jb->j->arrival;
			(*censored)++;
		}
	}
	qsort(out, n, sizeof(*out), cmp_i64);
	return n;
}

/* A wait object from n sorted waits, censored of them: n, censored,
 * still_waiting (alias), p50, p95, p99 (null without waits).  NULL on
 * allocation failure. */
static json_t *wait_obj(const int64_t *buf, size_t n, size_t censored)
{
	json_t *w = json_object();
	int bad = !w;

	SET(w, "n", json_integer((json_int_t)n));
	SET(w, "censored", json_integer((json_int_t)censored));
	SET(w, "still_waiting", json_integer((json_int_t)censored));
	SET(w, "p50", n ? json_integer(pctl(buf, n, 50)) : json_null());
	SET(w, "p95", n ? json_integer(pctl(buf, n, 95)) : json_null());
	SET(w, "p99", n ? json_integer(pctl(buf, n, 99)) : json_null());
	if (bad) {
		json_decref(w);
		return NULL;
	}
	return w;
}

/* Sets o[key] to the wait object of (q, c, all). */
static int set_wait(json_t *o, const char *key, const struct carve_sim *s, int64_t cut, int q,
		    int c, bool all, int64_t *buf)
{
	size_t cens, n = collect_waits(s, cut, q, c, all, buf, &cens);
	json_t *w = wait_obj(buf, n, cens);

	return !w || json_object_set_new(o, key, w);
}

/* "wait_first_gpu_s" (wait_all_pods_s with all) per queue, and with cdf
 * the CDF of the first-GPU waits per queue into *cdf. */
static json_t *waits_json(const struct carve_sim *s, int64_t cut, bool all, int64_t *buf,
			  json_t **cdf)
{
	json_t *o = json_object();
	size_t q, i;
	int bad = !o || (cdf && !(*cdf = json_object()));

	for (q = 0; !bad && q < s->nqueues; q++) {
		size_t cens, n = collect_waits(s, cut, (int)q, -1, all, buf, &cens), pts;
		json_t *w = wait_obj(buf, n, cens), *c;

		bad |= !w;
		SET(o, s->queues[q].name, w);
		if (bad || !cdf)
			continue;
		c = json_array();
		bad |= !c;
		pts = n < 100 ? n : 100;
		for (i = 1; !bad && i <= pts; i++) {
			size_t k = (size_t)ceil((double)i * (double)n / (double)pts) - 1;
			json_t *pt = json_pack("[If]", (json_int_t)buf[k], r4((double)(k + 1) / n));

			bad |= !pt || json_array_append_new(c, pt);
		}
		SET(*cdf, s->queues[q].name, c);
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* "classes": per job class of the trace, what the queues report, by class. */
static json_t *classes_json(const struct carve_sim *s, int64_t cut, int64_t *buf)
{
	json_t *o = json_object();
	size_t c, i;
	int bad = !o;

	for (c = 0; !bad && c < s->nclasses; c++) {
		json_t *co = json_object();
		size_t jobs = 0, done = 0, multi = 0, ok = 0;

		for (i = 0; i < s->njobs; i++) {
			const struct sjob *jb = &s->jobs[i];
			int ft;

			if (jb->cls != (int)c || jb->st == SJ_SKIPPED)
				continue;
			jobs++;
			done += jb->st == SJ_DONE;
			ft = first_time(jb, cut);
			multi += ft >= 0;
			ok += ft > 0;
		}
		bad |= !co;
		if (bad)
			break;
		SET(co, "jobs", json_integer((json_int_t)jobs));
		SET(co, "jobs_completed", json_integer((json_int_t)done));
		SET(co, "first_time_success_pct",
		    multi ? num(100.0 * (double)ok / (double)multi) : json_null());
		bad |= set_wait(co, "wait_first_gpu_s", s, cut, -1, (int)c, false, buf);
		bad |= set_wait(co, "wait_all_pods_s", s, cut, -1, (int)c, true, buf);
		SET(co, "gpu_hours_per_job",
		    done ? num(s->classes[c].used_area / 3600.0 / (double)done) : json_null());
		SET(o, s->classes[c].name, co);
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static double pct_of(double area, double cap, double h)
{
	return cap > 0 && h > 0 ? area / (cap * h) * 100.0 : 0;
}

/* "series": the step functions sampled at <= 200 evenly spaced times. */
static json_t *series_json(const struct carve_sim *s)
{
	json_t *o = json_object(), *ts = json_array(), *pools = json_object(),
	       *qu = json_object();
	size_t npts = s->now > 0 ? 200 : 1, w = 1 + s->snapw, i, k, at = 0;
	json_t **pa = carve_calloc(s->npools + 1, sizeof(*pa));
	json_t **pu = carve_calloc(s->npools + 1, sizeof(*pu));
	json_t **qa = carve_calloc(s->nqueues + 1, sizeof(*qa));
	int bad = !o || !ts || !pools || !qu || !pa || !pu || !qa;

	if (s->now > 0 && s->now < 199)
		npts = (size_t)s->now + 1;
	for (k = 0; !bad && k < s->npools; k++) {
		json_t *p = json_object();

		pa[k] = json_array();
		pu[k] = json_array();
		bad |= !p || !pa[k] || !pu[k];
		if (!bad) {
			SET(p, "allocation_pct", pa[k]);
			SET(p, "utilisation_pct", pu[k]);
			SET(pools, s->pool_names[k], p);
		} else {
			json_decref(p);
			json_decref(pa[k]);
			json_decref(pu[k]);
		}
	}
	for (k = 0; !bad && k < s->nqueues; k++) {
		qa[k] = json_array();
		bad |= !qa[k];
		SET(qu, s->queues[k].name, qa[k]);
	}
	for (i = 0; !bad && i < npts && s->nsnap; i++) {
		int64_t t = npts > 1 ? (int64_t)llround((double)s->now * (double)i /
							  (double)(npts - 1)) : s->now;
		const double *row;

		while (at + 1 < s->nsnap && s->snaps[(at + 1) * w] <= (double)t)
			at++;
		row = &s->snaps[at * w];
		bad |= json_array_append_new(ts, json_integer(t)) != 0;
		for (k = 0; !bad && k < s->npools; k++) {
			double cap = s->pool_cap[k];

			bad |= json_array_append_new(pa[k], num(cap > 0 ? row[1 + k] / cap * 100 : 0));
			bad |= json_array_append_new(
				pu[k], num(cap > 0 ? row[1 + s->npools + k] / cap * 100 : 0));
		}
		for (k = 0; !bad && k < s->nqueues; k++)
			bad |= json_array_append_new(qa[k], num(row[1 + 2 * s->npools + k]));
	}
	carve_free(pa);
	carve_free(pu);
	carve_free(qa);
	SET(o, "t_s", ts);
	SET(o, "pools", pools);
	SET(o, "quota_used", qu);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Seconds of jb's asked run [arrival, arrival + duration] inside the
 * window [from, cut]: "asked" GPU-hours count the work asked inside the
 * window, as held and useful count what was held inside it. */
static double asked_overlap(const struct sjob *jb, int64_t from, int64_t cut)
{
	int64_t lo = jb->j->arrival > from ? jb->j->arrival : from;
	int64_t end = sim_time_add(jb->j->arrival, jb->j->duration);
	int64_t hi = end < cut ? end : cut;

	return hi > lo ? (double)(hi - lo) : 0;
}

json_t *carve_sim_result_json(const struct carve_sim *s)
{
	json_t *o = json_object(), *quota = json_object(), *queues = json_object(),
	       *jobs = json_object(), *win = json_object(), *bl = json_object(),
	       *gh = json_object(), *mig = json_object(), *cdf = NULL, *waits, *wall;
	struct wview v;
	size_t i, multi = 0, ok = 0, running = 0, pending = 0, future = 0, bw, br, notdone = 0;
	double area = 0, asked = 0, bleft;
	int64_t *buf = carve_calloc(s->njobs + 1, sizeof(*buf));
	size_t *qmulti = carve_calloc(s->nqueues + 1, 2 * sizeof(*qmulti)); /* multi, ok per queue */
	int bad = !o || !quota || !queues || !jobs || !win || !bl || !gh || !mig || !buf ||
		  !qmulti;

	window_view(s, &v);
	for (i = 0; i < s->njobs; i++) {
		const struct sjob *jb = &s->jobs[i];
		int ft = first_time(jb, v.cut);

		running += jb->st == SJ_RUNNING;
		pending += jb->st == SJ_PENDING;
		future += jb->st == SJ_FUTURE;
		notdone += jb->st != SJ_DONE && jb->st != SJ_SKIPPED;
		if (jb->st != SJ_SKIPPED)
			asked += jb->asked_ge * asked_overlap(jb, s->win_start, v.cut);
		if (ft < 0)
			continue;
		multi++;
		ok += (size_t)ft;
		if (qmulti && jb->q >= 0 && (size_t)jb->q < s->nqueues) {
			qmulti[2 * jb->q]++;
			qmulti[2 * jb->q + 1] += (size_t)ft;
		}
	}
	if (s->backlog_done) {
		bw = s->bl_waiting;
		br = s->bl_running;
		bleft = s->bl_left;
	} else {
		backlog_at(s, s->now, &bw, &br, &bleft);
	}
	waits = bad ? NULL : waits_json(s, v.cut, false, buf, &cdf);
	bad |= !waits;
	wall = bad ? NULL : waits_json(s, v.cut, true, buf, NULL);
	bad |= !wall;
	for (i = 0; !bad && i < s->nqueues; i++) {
		const struct squeue *q = &s->queues[i];
		json_t *qo = json_object(), *qq = json_object();
		double used = q->w_used_area + q->used * v.tail;
		double borrowed = q->w_borrowed_area + borrowed_now(s, q) * v.tail;

		bad |= !qo || !qq;
		SET(qo, "nominal", num(q->nominal));
		SET(qo, "used_avg", num(v.len > 0 ? used / v.len : 0));
		SET(qo, "borrowed_avg", num(v.len > 0 ? borrowed / v.len : 0));
		SET(quota, q->name, qo);
		SET(qq, "nominal", num(q->nominal));
		SET(qq, "jobs", json_integer((json_int_t)q->jobs));
		SET(qq, "jobs_completed", json_integer((json_int_t)q->completed));
		SET(qq, "preemptions", json_integer((json_int_t)q->preemptions));
		SET(qq, "first_time_success_pct",
		    qmulti[2 * i] ? num(100.0 * (double)qmulti[2 * i + 1] / (double)qmulti[2 * i])
				  : json_null());
		SET(qq, "gpu_hours_per_job", q->completed ? num(q->used_area / 3600.0 /
								 (double)q->completed)
							  : json_null());
		SET(queues, q->name, qq);
		area += q->used_area;
	}
	SET(jobs, "total", json_integer((json_int_t)s->njobs));
	SET(jobs, "completed", json_integer((json_int_t)s->completed));
	SET(jobs, "running", json_integer((json_int_t)running));
	SET(jobs, "pending", json_integer((json_int_t)pending));
	SET(jobs, "not_arrived", json_integer((json_int_t)future));
	SET(jobs, "skipped", json_integer((json_int_t)s->skipped));
	SET(jobs, "rejected", json_integer((json_int_t)s->rejected));
	SET(jobs, "never_fit", json_integer((json_int_t)s->never_fit));
	SET(jobs, "partial", json_integer((json_int_t)s->partial));

	SET(win, "start_s", json_integer(s->win_start));
	SET(win, "end_s", json_integer(s->win_end));
	SET(win, "from", json_string(s->win_until ? "until" : "trace"));
	SET(bl, "jobs_waiting", json_integer((json_int_t)bw));
	SET(bl, "jobs_running", json_integer((json_int_t)br));
	SET(bl, "gpu_hours_left", num(bleft / 3600.0));
	SET(gh, "held", num(v.alloc / 3600.0));
	SET(gh, "useful", num(v.work / 3600.0));
	SET(gh, "asked", num(asked / 3600.0));
	SET(mig, "mode", json_string(s->o.mig_dynamic && s->o.sched == CARVE_SIM_CARVE
					     ? "dynamic" : "static"));
	SET(mig, "repartitions", json_integer((json_int_t)s->mig_reparts));
	SET(mig, "reconfig_delay_s", json_integer(s->o.mig_dynamic &&
						  s->o.sched == CARVE_SIM_CARVE ? s->mig_delay : 0));

	SET(o, "mode", json_string("replay"));
	SET(o, "scheduler", json_string(carve_sim_sched_name(s->o.sched)));
	SET(o, "model", json_string(s->o.sched != CARVE_SIM_CARVE ? sim_base_model(s)
		: "carve: Kueue-style admission with gang placement on whole GPUs, MIG "
		  "instances and fractions (the admission engine and its placer)"));
	SET(o, "policy", json_string(s->o.sched != CARVE_SIM_CARVE ? "spread"
									      : s->policy));
	SET(o, "gang_timeout_s", s->o.sched == CARVE_SIM_CARVE ? json_null()
		: json_integer(s->o.sched == CARVE_SIM_KUEUE ? s->pods_ready_timeout
							     : s->o.gang_timeout));
	SET(o, "seed", json_integer((json_int_t)s->seed));
	SET(o, "window", win);
	SET(o, "horizon_s", json_integer(s->now));
	SET(o, "makespan_s", notdone ? json_null() : json_integer(s->last_done));
	SET(o, "backlog", bl);
	SET(o, "gpu_capacity", num(s->cap));
	SET(o, "gpu_allocation_pct", num(pct_of(v.alloc, s->cap, v.len)));
	SET(o, "effective_utilisation_pct", num(pct_of(v.work, s->cap, v.len)));
	SET(o, "gpu_hours", gh);
	SET(o, "first_time_success_pct", multi ? num(100.0 * (double)ok / (double)multi)
					       : json_null());
	SET(o, "wait_first_gpu_s", waits);
	SET(o, "wait_all_pods_s", wall);
	SET(o, "quota", quota);
	SET(o, "preemptions", json_integer((json_int_t)s->preemptions));
	SET(o, "gang_timeouts", json_integer((json_int_t)s->gang_timeouts));
	SET(o, "fragmentation_pct", num(v.len > 0 ? v.frag / v.len : 0));
	SET(o, "gpu_hours_per_job", s->completed ? num(area / 3600.0 / (double)s->completed)
						 : json_null());
	SET(o, "jobs", jobs);
	SET(o, "mig", mig);
	SET(o, "queues", queues);
	if (!bad) {
		json_t *cl = classes_json(s, v.cut, buf);

		bad |= !cl;
		SET(o, "classes", cl);
	}
	if (!bad) {
		json_t *ser = series_json(s);

		bad |= !ser;
		SET(o, "series", ser);
	}
	SET(o, "wait_cdf", cdf);
	carve_free(buf);
	carve_free(qmulti);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}
