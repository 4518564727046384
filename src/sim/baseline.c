/*
 * baseline.c - the kube-default baseline of the replay simulator: what
 * the stock Kubernetes stack (kube-scheduler, the NVIDIA device plugin,
 * ResourceQuota, the Job controller) does with the same trace, modelled
 * as docs/simulator.md ("The kube-default baseline") states:
 *
 *   - exclusive whole GPUs only: the cluster is copied with every GPU
 *     exclusive; a MIG, time-slice (gpu.shared) or fractional request takes
 *     one whole GPU per requested unit (a fraction: one GPU) on a node that
 *     served that kind of request in the real cluster (a label
 *     carve.dev/sim-<kind> on the copy says which);
 *   - per-queue static caps: a ClusterQueue's nominal GPU quota (in
 *     GPU-equivalents of what pods request, as a ResourceQuota counts
 *     requests) with no borrowing; a pod that would exceed it waits;
 *   - per-pod scheduling, no gang: pods are placed one by one in queue
 *     order (priority, then arrival or last retry), so a multi-pod job may
 *     hold some GPUs while its other pods wait; a job runs once all its
 *     pods are placed; a partial job fails after the gang timeout, releases
 *     its pods and is retried at the back of the queue;
 *   - pods carry the tolerations of their queue's ResourceFlavors (what
 *     Kueue would inject, written by the team into its pod specs), so a
 *     tainted pool stays reachable for the teams it is meant for; no
 *     nodeSelector is added: the stock scheduler sends a pod to any node
 *     that fits;
 *   - no preemption; placement scores with "spread" (kube-scheduler's
 *     default LeastAllocated);
 *   - a job this model can never run (more than its queue's cap, or pods
 *     that do not all fit the empty copy at once) is counted as never
 *     fitting when it arrives and never queued: retrying it would time out
 *     for ever (every side of a comparison must end).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

#define KIND_GPU "carve.dev/sim-gpu"
#define KIND_SHARED "carve.dev/sim-shared"
#define KIND_FRACTION "carve.dev/sim-fraction"
#define KIND_MIG "carve.dev/sim-mig-"

/* ---- the all-exclusive copy of the cluster --------------------------------------- */

struct lbl {
	char key[96];
};

static int copy_node(struct carve_sim *s, const struct carve_node *n, struct carve_error *err)
{
	struct carve_gpu_spec gpus[64];
	struct carve_label *labels;
	struct lbl extra[24];
	size_t nextra = 0, i, k;
	struct carve_node_spec ns;
	int rc;

	if (n->ngpus > 64)
		return carve_errorf(err, CARVE_EINVAL, "node %s: more than 64 GPUs", n->name);
	memset(gpus, 0, sizeof(gpus));
	for (i = 0; i < n->ngpus; i++) {
		const struct carve_gpu *g = carve_cluster_gpu(s->c, n->gpu_first + (uint32_t)i);
		const char *kind = NULL;

		gpus[i].model = g->model;
		gpus[i].memory_mib = g->memory_mib;
		gpus[i].sharing = CARVE_SHARE_EXCLUSIVE;
		gpus[i].uuid = g->uuid;
		if (g->sharing != CARVE_SHARE_MIG)
			kind = KIND_GPU;
		for (k = 0; kind && k < nextra && strcmp(extra[k].key, kind); k++)
			;
		if (kind && k == nextra && nextra < 24)
			snprintf(extra[nextra++].key, sizeof(extra[0].key), "%s", kind);
		kind = g->sharing == CARVE_SHARE_TIMESLICE ? KIND_SHARED
		       : g->sharing == CARVE_SHARE_FRACTION ? KIND_FRACTION : NULL;
		for (k = 0; kind && k < nextra && strcmp(extra[k].key, kind); k++)
			;
		if (kind && k == nextra && nextra < 24)
			snprintf(extra[nextra++].key, sizeof(extra[0].key), "%s", kind);
		if (g->sharing == CARVE_SHARE_MIG && g->mig_model) {
			size_t m;

			for (m = 0; m < g->mig.n; m++) {
				char key[96];

				snprintf(key, sizeof(key), "%s%s", KIND_MIG,
					 g->mig_model->profiles[g->mig.inst[m].profile].name);
				for (k = 0; k < nextra && strcmp(extra[k].key, key); k++)
					;
				if (k == nextra && nextra < 24)
					memcpy(extra[nextra++].key, key, sizeof(key));
			}
		}
	}
	labels = carve_calloc(n->nlabels + nextra + 1, sizeof(*labels));
	if (!labels)
		return CARVE_ENOMEM;
	if (n->nlabels)
		memcpy(labels, n->labels, n->nlabels * sizeof(*labels));
	for (k = 0; k < nextra; k++) {
		labels[n->nlabels + k].key = extra[k].key;
		labels[n->nlabels + k].value = "true";
	}
	memset(&ns, 0, sizeof(ns));
	ns.name = n->name;
	ns.pool = n->pool;
	ns.nlabels = n->nlabels + nextra;
	ns.labels = labels;
	ns.ntaints = n->ntaints;
	ns.taints = n->taints;
	ns.cpu_milli = n->cpu_milli;
	ns.memory_milli = n->memory_milli;
	ns.pods = n->pods;
	ns.ngpus = n->ngpus;
	ns.gpus = gpus;
	ns.block = n->block;
	ns.rack = n->rack;
	ns.pos = n->pos;
	rc = carve_cluster_add_node(s->bc, &ns, err);
	carve_free(labels);
	return rc < 0 ? rc : 0;
}

int sim_base_init(struct carve_sim *s, struct carve_error *err)
{
	size_t i, nn = carve_cluster_node_count(s->c);
	int rc;

	s->bc = carve_cluster_create();
	s->qcap = carve_calloc(s->nqueues + 1, sizeof(double));
	s->qcharged = carve_calloc(s->nqueues + 1, sizeof(double));
	if (!s->bc || !s->qcap || !s->qcharged)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	for (i = 0; i < nn; i++) {
		rc = copy_node(s, carve_cluster_node(s->c, (uint32_t)i), err);
		if (rc)
			return rc == CARVE_ENOMEM ? carve_errorf(err, rc, "out of memory") : rc;
	}
	s->bp = carve_placer_create(s->bc, "spread", s->seed, err);
	s->bprobe = carve_placer_create(s->bc, "binpack", 1, err);
	if (!s->bp || !s->bprobe)
		return CARVE_ENOMEM;
	for (i = 0; i < s->nqueues; i++)
		s->qcap[i] = s->queues[i].nominal_req;
	return 0;
}

void sim_base_free(struct carve_sim *s)
{
	carve_placer_destroy(s->bp);
	carve_placer_destroy(s->bprobe);
	carve_cluster_destroy(s->bc);
	carve_free(s->qcap);
	carve_free(s->qcharged);
}

/* ---- requests ---------------------------------------------------------------------- */

void sim_base_pod_req(const struct sjob *jb, size_t p, struct carve_pod_req *r,
		      struct carve_label *sel, char *key, size_t keylen)
{
	const struct carve_podset_spec *ps = &jb->spec.podsets[p];

	sim_pod_req(jb, p, r);
	if (r->gpu == CARVE_GREQ_NONE)
		return;
	switch (r->gpu) {
	case CARVE_GREQ_REPLICA:
		snprintf(key, keylen, "%s", KIND_SHARED);
		break;
	case CARVE_GREQ_MIG:
		snprintf(key, keylen, "%s%s", KIND_MIG, r->mig_profile);
		break;
	case CARVE_GREQ_FRACTION:
		snprintf(key, keylen, "%s", KIND_FRACTION);
		r->count = 1;
		break;
	default:
		snprintf(key, keylen, "%s", KIND_GPU);
		break;
	}
	r->gpu = CARVE_GREQ_WHOLE;
	r->mig_profile = NULL;
	r->milli = 0;
	r->mem_mib = 0;
	if (ps->nselector)
		memcpy(sel, ps->selector, ps->nselector * sizeof(*sel));
	sel[ps->nselector].key = key;
	sel[ps->nselector].value = "true";
	r->nselector = ps->nselector + 1;
	r->selector = sel;
}


/* ---- events -------------------------------------------------------------------------- */

/*
 * Whether jb can ever run in this model: its pods' charge within its
 * queue's cap, and all its pods placed at once on the empty copy (a
 * scratch placer, given back).  -1 on allocation failure.
 */
static int can_ever_run(struct carve_sim *s, const struct sjob *jb)
{
	size_t np = jb->j->npodsets, p, nsel = 0, off = 0;
	struct carve_pod_group *g = carve_calloc(np, sizeof(*g));
	struct carve_pod_req *r = carve_calloc(np, sizeof(*r));
	struct carve_pod_place *pl = carve_calloc((size_t)jb->npods + 1, sizeof(*pl));
	char (*keys)[128] = carve_calloc(np, sizeof(*keys));
	struct carve_label *sel;
	double charge = 0;
	int ok = -1, rc;

	for (p = 0; p < np; p++)
		nsel += jb->j->podsets[p].nselector + 1;
	sel = carve_calloc(nsel + 1, sizeof(*sel));
	if (!g || !r || !pl || !keys || !sel)
		goto out;
	for (p = 0; p < np; p++) {
		const struct carve_job_podset *ps = &jb->j->podsets[p];

		charge += ps->count * sim_podset_ge(s, ps);
		sim_base_pod_req(jb, p, &r[p], sel + off, keys[p], sizeof(keys[p]));
		off += ps->nselector + 1;
		r[p].ntolerations = s->qtol_off[jb->q + 1] - s->qtol_off[jb->q];
		r[p].tolerations = s->qtol + s->qtol_off[jb->q];
		g[p].req = &r[p];
		g[p].count = ps->count;
	}
	if (charge > s->qcap[jb->q] + 1e-9) {
		ok = 0;
		goto out;
	}
	rc = carve_placer_place(s->bprobe, g, np, NULL, pl);
	if (rc == CARVE_ENOMEM)
		goto out;
	ok = rc == 0;
	if (ok)
		carve_placer_release(s->bprobe, pl, (size_t)jb->npods);
out:
	carve_free(g);
	carve_free(r);
	carve_free(pl);
	carve_free(keys);
	carve_free(sel);
	return ok;
}

int sim_base_arrive(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];
	int ever = can_ever_run(s, jb);

	if (ever < 0)
		return CARVE_ENOMEM;
	if (!ever) {
		jb->never_fits = true;
		s->never_fit++;
		return 0; /* pending for good, never retried */
	}

	jb->pl = carve_calloc((size_t)jb->npods + 1, sizeof(*jb->pl));
	jb->placed = carve_calloc((size_t)jb->npods + 1, sizeof(*jb->placed));
	if (!jb->pl || !jb->placed)
		return CARVE_ENOMEM;
	if (s->nwaiting == s->capwaiting) {
		size_t c = s->capwaiting ? s->capwaiting * 2 : 64;
		void *v = carve_realloc(s->waiting, c * sizeof(*s->waiting));

		if (!v)
			return CARVE_ENOMEM;
		s->waiting = v;
		s->capwaiting = c;
	}
	s->waiting[s->nwaiting++] = job;
	return 0;
}

/* Gives back every pod jb holds. */
static void release_all(struct carve_sim *s, struct sjob *jb)
{
	int i;

	for (i = 0; i < jb->npods; i++)
		if (jb->placed[i]) {
			carve_placer_release(s->bp, &jb->pl[i], 1);
			jb->placed[i] = false;
		}
	jb->nplaced = 0;
	sim_unhold(s, jb);
	s->qcharged[jb->q] -= jb->charged;
	if (s->qcharged[jb->q] < 1e-9)
		s->qcharged[jb->q] = 0;
	jb->charged = 0;
}

int sim_base_complete(struct carve_sim *s, uint32_t job)
{
	release_all(s, &s->jobs[job]);
	return 0;
}

int sim_base_timeout(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];

	if (jb->st != SJ_PENDING || !jb->nplaced)
		return 0;
	release_all(s, jb);
	jb->failed_first = true;
	jb->enq = s->now;
	jb->partial_since = -1;
	jb->gen++;
	s->gang_timeouts++;
	return 0;
}

/* Queue order of a waiting job: priority (higher first), then arrival or
 * last retry, then trace order. */
struct wkey {
	int32_t prio;
	int64_t enq;
	uint32_t job;
};

static int cmp_wkey(const void *a, const void *b)
{
	const struct wkey *x = a, *y = b;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->enq != y->enq)
		return x->enq < y->enq ? -1 : 1;
	return (x->job > y->job) - (x->job < y->job);
}

static int sort_waiting(struct carve_sim *s)
{
	struct wkey *k = carve_malloc((s->nwaiting + 1) * sizeof(*k));
	size_t i;

	if (!k)
		return CARVE_ENOMEM;
	for (i = 0; i < s->nwaiting; i++) {
		const struct sjob *jb = &s->jobs[s->waiting[i]];

		k[i] = (struct wkey){jb->j->priority, jb->enq, s->waiting[i]};
	}
	qsort(k, s->nwaiting, sizeof(*k), cmp_wkey);
	for (i = 0; i < s->nwaiting; i++)
		s->waiting[i] = k[i].job;
	carve_free(k);
	return 0;
}

/* Places what it can of jb's pods, one by one. */
static int place_pods(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];
	size_t p;
	int off = 0, i, rc;

	for (p = 0; p < jb->j->npodsets; p++) {
		const struct carve_job_podset *ps = &jb->j->podsets[p];
		struct carve_label *sel = carve_calloc(ps->nselector + 2, sizeof(*sel));
		struct carve_pod_req r;
		struct carve_pod_group g;
		char key[128];
		double ge = sim_podset_ge(s, ps);

		if (!sel)
			return CARVE_ENOMEM;
		sim_base_pod_req(jb, p, &r, sel, key, sizeof(key));
		r.ntolerations = s->qtol_off[jb->q + 1] - s->qtol_off[jb->q];
		r.tolerations = s->qtol + s->qtol_off[jb->q];
		g.req = &r;
		g.count = 1;
		for (i = off; i < off + ps->count; i++) {
			if (jb->placed[i])
				continue;
			if (ge > 0 && s->qcharged[jb->q] + ge > s->qcap[jb->q] + 1e-9)
				break; /* the quota refuses the pod */
			rc = carve_placer_place(s->bp, &g, 1, NULL, &jb->pl[i]);
			if (rc == CARVE_ENOMEM) {
				carve_free(sel);
				return rc;
			}
			if (rc)
				break; /* its siblings are the same: they fit no better */
			jb->placed[i] = true;
			jb->nplaced++;
			s->qcharged[jb->q] += ge;
			jb->charged += ge;
			if (sim_hold(s, jb, jb->pl[i].node, jb->pl[i].ndevs, 0)) {
				carve_free(sel);
				return CARVE_ENOMEM;
			}
			if (jb->pl[i].ndevs && !jb->has_first_gpu) {
				jb->first_gpu = s->now;
				jb->has_first_gpu = true;
			}
		}
		carve_free(sel);
		off += ps->count;
	}
	return 0;
}

/* GPU work one pod of ps can do on the whole GPUs of place pl, in GE: what
 * its request would use of those GPUs as they are in the real cluster (a
 * MIG instance's compute share, one time-slice replica, a fraction). */
static double pod_work_ge(const struct carve_sim *s, const struct carve_job_podset *ps,
			  const struct carve_pod_place *pl)
{
	const char *mig = NULL, *mig_res = NULL;
	double ge = 0;
	size_t k;
	int d;

	if (ps->gpu_milli)
		return ps->gpu_milli / 1000.0;
	if (ps->gpu_mem_mib)
		return pl->ndevs;
	for (k = 0; k < ps->nreqs; k++)
		if (carve_res_is_mig(ps->reqs[k].name, &mig))
			mig_res = ps->reqs[k].name;
	for (d = 0; d < pl->ndevs; d++) {
		const struct carve_gpu *g = carve_cluster_gpu(s->c, pl->devs[d].gpu);
		int p = mig && g->mig_model ? carve_mig_profile_find(g->mig_model, mig) : -1;

		if (p >= 0)
			ge += (double)g->mig_model->profiles[p].compute / g->mig_model->compute_slices;
		else if (mig)
			ge += sim_res_ge(s, mig_res);
		else if (g->sharing == CARVE_SHARE_TIMESLICE && g->replicas)
			ge += 1.0 / g->replicas;
		else
			ge += 1.0;
	}
	return ge;
}

/* All pods placed: the job runs. */
static int start(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];
	size_t p;
	int off = 0, i;

	for (p = 0; p < jb->j->npodsets; p++) {
		const struct carve_job_podset *ps = &jb->j->podsets[p];

		for (i = off; i < off + ps->count; i++) {
			double ge = pod_work_ge(s, ps, &jb->pl[i]) * jb->j->demand;

			if (ge > 0 && sim_hold(s, jb, jb->pl[i].node, 0, ge))
				return CARVE_ENOMEM;
		}
		off += ps->count;
	}
	jb->st = SJ_RUNNING;
	jb->start = s->now;
	sim_job_running(s, jb, s->now); /* the window's waits and attempts */
	jb->remaining = jb->j->duration;
	jb->partial_since = -1;
	if (jb->npods > 1)
		jb->attempted = true;
	jb->gen++;
	return sim_push(s, sim_time_add(s->now, jb->remaining), EV_COMPLETE, job);
}

int sim_base_pass(struct carve_sim *s)
{
	size_t i, n = 0;
	int rc;

	rc = sort_waiting(s);
	if (rc)
		return rc;
	for (i = 0; i < s->nwaiting; i++) {
		uint32_t job = s->waiting[i];
		struct sjob *jb = &s->jobs[job];

		rc = place_pods(s, job);
		if (rc)
			return rc;
		if (jb->nplaced == jb->npods) {
			rc = start(s, job);
			if (rc)
				return rc;
			continue;
		}
		s->waiting[n++] = job;
		if (jb->nplaced && jb->partial_since < 0) {
			jb->partial_since = s->now;
			rc = sim_push(s, sim_time_add(s->now, s->o.gang_timeout), EV_TIMEOUT, job);
			if (rc)
				return rc;
		}
	}
	s->nwaiting = n;
	return 0;
}
