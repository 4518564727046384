/*
 * replay.c - the replay simulator's event loop (include/carve/sim.h) and
 * its carve mode, which drives the real admission engine.
 *
 * Events sit in a binary min-heap ordered by (time, insertion order), so
 * equal times keep the order they were scheduled in.  At each event time
 * the loop integrates the metrics up to that time, applies every event of
 * that time (completions and timeouts, then arrivals, as they were
 * pushed), and schedules once, only when something changed: carve mode
 * runs engine cycles until they are stable (carve_adm_run) and reads the
 * statuses back (admissions start jobs, evictions requeue them); a
 * baseline does its own pass (baseline.c: kueue's quota-only engine, then
 * per-pod placement).  A job's scheduled events
 * carry its generation; bumping it cancels them (a preempted job's
 * completion, a finished gang's timeout).  Times add only through
 * sim_time_add, saturating at CARVE_SIM_TIME_MAX, and an event at that
 * time never happens, so no trace or option overflows the clock.
 *
 * carve mode conserves work: a job admitted with fewer pods than it asked
 * (partial admission) runs duration x asked / admitted pods, rounded up;
 * with --mig dynamic, a job whose placement stands on a GPU repartitioned
 * for it (the placer's repartition log, a GPU no running job held) holds
 * its devices from admission but works, and counts its run time, only
 * from the reconfiguration delay on (EV_READY); a later job on another
 * new instance of that GPU works from the GPU's ready time
 * (s->mig_ready) when it comes after its admission.  The window
 * (metrics.c) is fixed when the run starts; the backlog is recorded once
 * no event is left before its end.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "carve/match.h"
#include "carve/quantity.h"
#include "carve/resource.h"
#include "sim_int.h"

/* ---- heap ---------------------------------------------------------------------- */

static bool ev_less(const struct event *a, const struct event *b)
{
	return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

int64_t sim_time_add(int64_t t, int64_t d)
{
	int64_t r = carve_qty_sat_add(t, d);

	return r < CARVE_SIM_TIME_MAX ? r : CARVE_SIM_TIME_MAX;
}

int sim_push(struct carve_sim *s, int64_t t, int kind, uint32_t job)
{
	struct event e;
	size_t i;

	if (t >= CARVE_SIM_TIME_MAX)
		return 0; /* at the end of virtual time: never happens */
	e = (struct event){t, s->seq++, kind, job, s->jobs[job].gen};

	if (s->nheap == s->capheap) {
		size_t c = s->capheap ? s->capheap * 2 : 64;
		void *v = carve_realloc(s->heap, c * sizeof(*s->heap));

		if (!v)
			return CARVE_ENOMEM;
		s->heap = v;
		s->capheap = c;
	}
	for (i = s->nheap++; i && ev_less(&e, &s->heap[(i - 1) / 2]); i = (i - 1) / 2)
		s->heap[i] = s->heap[(i - 1) / 2];
	s->heap[i] = e;
	return 0;
}

static struct event pop(struct carve_sim *s)
{
	struct event top = s->heap[0], last = s->heap[--s->nheap];
	size_t i = 0, k;

	for (;;) {
		k = 2 * i + 1;
		if (k >= s->nheap)
			break;
		if (k + 1 < s->nheap && ev_less(&s->heap[k + 1], &s->heap[k]))
			k++;
		if (!ev_less(&s->heap[k], &last))
			break;
		s->heap[i] = s->heap[k];
		i = k;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

/* ---- requests and GPU-equivalents ---------------------------------------------- */

void sim_pod_req(const struct sjob *jb, size_t p, struct carve_pod_req *r)
{
	struct carve_error err;

	/* A podSet the mapping refuses was refused when the job was checked. */
	carve_pod_req_of(&jb->spec.podsets[p], r, &err);
}

bool sim_is_gpu_res(const char *name)
{
	return carve_res_is_gpu_device(name);
}

double sim_dev_ge(const struct carve_sim *s, const struct carve_placer *p,
		  const struct carve_dev *d)
{
	const struct carve_gpu *g = carve_cluster_gpu(s->c, d->gpu);

	if (d->mig >= 0) {
		const struct carve_mig_layout *l = carve_placer_mig_layout(p, d->gpu);
		const struct carve_mig_model *mm = g ? g->mig_model : NULL;

		if (l && mm && d->mig < l->n)
			return (double)mm->profiles[l->inst[d->mig].profile].compute /
			       mm->compute_slices;
		return 1.0;
	}
	if (d->replica >= 0)
		return g && g->replicas ? 1.0 / g->replicas : 1.0;
	if (d->milli > 0)
		return d->milli / 1000.0;
	return 1.0;
}

/* Compute slices of profile "Ng..." on the first MIG model of the cluster
 * that has it, over that model's compute slices; N/7 when none has it. */
static double mig_ge(const struct carve_sim *s, const char *prof)
{
	size_t i, n = carve_cluster_gpu_count(s->c);

	for (i = 0; i < n; i++) {
		const struct carve_gpu *g = carve_cluster_gpu(s->c, (uint32_t)i);
		int k;

		if (!g->mig_model)
			continue;
		k = carve_mig_profile_find(g->mig_model, prof);
		if (k >= 0)
			return (double)g->mig_model->profiles[k].compute /
			       g->mig_model->compute_slices;
	}
	return atoi(prof) > 0 ? atoi(prof) / 7.0 : 1.0;
}

double sim_podset_ge(const struct carve_sim *s, const struct carve_job_podset *ps)
{
	double ge = 0;
	size_t k;

	if (ps->gpu_milli)
		return ps->gpu_milli / 1000.0;
	if (ps->gpu_mem_mib)
		return 1.0;
	for (k = 0; k < ps->nreqs; k++)
		if (sim_is_gpu_res(ps->reqs[k].name))
			ge += ps->reqs[k].milli / 1000.0 * sim_res_ge(s, ps->reqs[k].name);
	return ge;
}

double sim_res_ge(const struct carve_sim *s, const char *name)
{
	size_t i, n = carve_cluster_gpu_count(s->c);
	const char *prof;
	enum carve_res_kind k = carve_res_kind(name, &prof);

	if (k == CARVE_RK_MIG)
		return mig_ge(s, prof);
	if (k == CARVE_RK_REPLICA) {
		for (i = 0; i < n; i++) {
			const struct carve_gpu *g = carve_cluster_gpu(s->c, (uint32_t)i);

			if (g->sharing == CARVE_SHARE_TIMESLICE && g->replicas)
				return 1.0 / g->replicas;
		}
	}
	return sim_is_gpu_res(name) ? 1.0 : 0.0;
}

/* ---- building ------------------------------------------------------------------ */

static int find_queue(const struct carve_sim *s, const char *cq)
{
	size_t i;

	for (i = 0; i < s->nqueues; i++)
		if (!strcmp(s->queues[i].name, cq))
			return (int)i;
	return -1;
}

/* Whether node n carries every nodeLabel of flavor f (and f has some). */
static bool flavor_matches(const struct carve_mf_flavor *f, const struct carve_node *n)
{
	struct carve_labels l = carve_labels_of(n->labels, n->nlabels);
	size_t k;

	for (k = 0; k < f->node_labels.n; k++)
		if (!carve_match_label(&l, f->node_labels.v[k].key, f->node_labels.v[k].value))
			return false;
	return f->node_labels.n > 0;
}

/* GE of one unit of quota of resource res in flavor: as sim_res_ge(), but
 * nvidia.com/gpu on a flavor whose first GPU node is time-sliced counts
 * one replica (1/replicas). */
static double quota_ge(const struct carve_sim *s, const char *flavor, const char *res)
{
	const struct carve_mf_flavor *f = carve_mf_find_flavor(s->m, flavor);
	size_t i, nn = carve_cluster_node_count(s->c);

	if (f && carve_res_kind(res, NULL) == CARVE_RK_GPU)
		for (i = 0; i < nn; i++) {
			const struct carve_node *n = carve_cluster_node(s->c, (uint32_t)i);
			const struct carve_gpu *g;

			if (!n->ngpus || !flavor_matches(f, n))
				continue;
			g = carve_cluster_gpu(s->c, n->gpu_first);
			if (g->sharing == CARVE_SHARE_TIMESLICE && g->replicas)
				return 1.0 / g->replicas;
			break;
		}
	return sim_res_ge(s, res);
}

double sim_job_asked_ge(const struct carve_sim *s, const struct sjob *jb)
{
	const struct carve_mf_cq *cq = jb->q >= 0 && (size_t)jb->q < s->m->ncqs
					       ? &s->m->cqs[jb->q] : NULL;
	double ge = 0;
	size_t p, k, g, f, r;

	for (p = 0; p < jb->j->npodsets; p++) {
		const struct carve_job_podset *ps = &jb->j->podsets[p];
		double pod = 0;

		if (ps->gpu_milli || ps->gpu_mem_mib) {
			ge += ps->count * sim_podset_ge(s, ps);
			continue;
		}
		for (k = 0; k < ps->nreqs; k++) {
			const char *res = ps->reqs[k].name, *flavor = NULL;

			if (!sim_is_gpu_res(res))
				continue;
			/* the first flavor of the queue that covers it */
			for (g = 0; cq && !flavor && g < cq->ngroups; g++)
				for (f = 0; !flavor && f < cq->groups[g].nflavors; f++)
					for (r = 0; r < cq->groups[g].flavors[f].n; r++)
						if (!strcmp(cq->groups[g].flavors[f].v[r].resource,
							    res))
							flavor = cq->groups[g].flavors[f].flavor;
			pod += ps->reqs[k].milli / 1000.0 *
			       (flavor ? quota_ge(s, flavor, res) : sim_res_ge(s, res));
		}
		ge += ps->count * pod;
	}
	return ge;
}

static int build_queues(struct carve_sim *s)
{
	const struct carve_manifests *m = s->m;
	size_t i, g, f, k;

	/* Room for a queue per job as well: jobs naming a Volcano or KAI queue
	 * (cluster_queue) add theirs when they are checked (metrics only). */
	s->queues = carve_calloc(m->ncqs + s->njobs + 1, sizeof(*s->queues));
	if (!s->queues)
		return CARVE_ENOMEM;
	for (i = 0; i < m->ncqs; i++) {
		const struct carve_mf_cq *cq = &m->cqs[i];
		struct squeue *q = &s->queues[s->nqueues++];

		q->name = cq->meta.name;
		for (g = 0; g < cq->ngroups; g++)
			for (f = 0; f < cq->groups[g].nflavors; f++) {
				const struct carve_mf_flavorquotas *fq = &cq->groups[g].flavors[f];

				for (k = 0; k < fq->n; k++)
					if (sim_is_gpu_res(fq->v[k].resource)) {
						double units = fq->v[k].nominal / 1000.0;

						q->nominal += units * quota_ge(s, fq->flavor,
									       fq->v[k].resource);
					}
			}
	}
	return 0;
}

/* The pool a node reports under: its NodePool's name; otherwise the
 * first ResourceFlavor whose nodeLabels it carries; otherwise "default". */
static const char *node_pool_name(const struct carve_sim *s, const struct carve_inv_pool *pl,
				  const struct carve_node *n)
{
	size_t f;

	if (!strcmp(pl->origin, "NodePool"))
		return pl->name;
	for (f = 0; f < s->m->nflavors; f++)
		if (flavor_matches(&s->m->flavors[f], n))
			return s->m->flavors[f].meta.name;
	return "default";
}

static int build_pools(struct carve_sim *s)
{
	const struct carve_inventory *inv = s->ad->inv;
	size_t nn = carve_cluster_node_count(s->c), i, k;
	uint32_t j;

	s->pool_names = carve_calloc(nn + 1, sizeof(*s->pool_names));
	s->node_pool = carve_calloc(nn + 1, sizeof(*s->node_pool));
	s->pool_cap = carve_calloc(nn + 1, sizeof(double));
	s->pool_alloc = carve_calloc(nn + 1, sizeof(double));
	s->pool_work = carve_calloc(nn + 1, sizeof(double));
	if (!s->pool_names || !s->node_pool || !s->pool_cap || !s->pool_alloc || !s->pool_work)
		return CARVE_ENOMEM;
	for (i = 0; inv && i < inv->npools; i++) {
		const struct carve_inv_pool *pl = &inv->pools[i];

		for (j = 0; j < pl->nnodes; j++) {
			uint32_t node = pl->node_first + j;
			const struct carve_node *n = carve_cluster_node(s->c, node);
			const char *name;

			if (node >= nn)
				continue;
			name = node_pool_name(s, pl, n);
			for (k = 0; k < s->npools && strcmp(s->pool_names[k], name); k++)
				;
			if (k == s->npools)
				s->pool_names[s->npools++] = name;
			s->node_pool[node] = (uint32_t)k;
			s->pool_cap[k] += n->ngpus;
			s->cap += n->ngpus;
		}
	}
	return 0;
}

/* Podsets already probed (their pod shape and whether it fits), so a
 * trace of many identical pods probes each shape once. */
#define PROBE_CACHE 256

struct probe_cache {
	size_t n;
	const struct carve_job_podset *ps[PROBE_CACHE];
	bool fits[PROBE_CACHE];
};

static bool same_strs(const char *const *a, const char *const *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

static bool streq_null(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Node-affinity terms equal by value, in order. */
static bool same_terms(const struct carve_match_term *a, const struct carve_match_term *b,
		       size_t na, size_t nb)
{
	size_t t, e;

	if (na != nb)
		return false;
	for (t = 0; t < na; t++) {
		if (a[t].n != b[t].n)
			return false;
		for (e = 0; e < a[t].n; e++) {
			const struct carve_match_expr *x = &a[t].exprs[e], *y = &b[t].exprs[e];

			if (!streq_null(x->key, y->key) || !streq_null(x->op, y->op) ||
			    x->nvalues != y->nvalues || !same_strs(x->values, y->values, x->nvalues))
				return false;
		}
	}
	return true;
}

/* Tolerations equal by value, in order. */
static bool same_tols(const struct carve_toleration_spec *a, const struct carve_toleration_spec *b,
		      size_t na, size_t nb)
{
	size_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (!streq_null(a[i].key, b[i].key) || !streq_null(a[i].op, b[i].op) ||
		    !streq_null(a[i].value, b[i].value) || !streq_null(a[i].effect, b[i].effect))
			return false;
	return true;
}

bool sim_same_pod(const struct carve_job_podset *a, const struct carve_job_podset *b)
{
	size_t i;

	if (a->nreqs != b->nreqs || a->gpu_milli != b->gpu_milli ||
	    a->gpu_mem_mib != b->gpu_mem_mib || a->nmodels != b->nmodels ||
	    a->nselector != b->nselector || !same_strs(a->models, b->models, a->nmodels))
		return false;
	for (i = 0; i < a->nreqs; i++)
		if (a->reqs[i].milli != b->reqs[i].milli || strcmp(a->reqs[i].name, b->reqs[i].name))
			return false;
	for (i = 0; i < a->nselector; i++)
		if (strcmp(a->selector[i].key, b->selector[i].key) ||
		    strcmp(a->selector[i].value, b->selector[i].value))
			return false;
	return same_terms(a->terms, b->terms, a->nterms, b->nterms) &&
	       same_tols(a->tolerations, b->tolerations, a->ntolerations, b->ntolerations);
}

/* Exists with no key tolerates every taint (Kubernetes semantics). */
static const struct carve_toleration_spec tolerate_all = {NULL, "Exists", NULL, NULL};

/* Whether one pod of ps fits some node of the empty cluster (placed on a
 * scratch placer and given back), taints aside. */
static bool pod_fits(struct carve_placer *scratch, struct probe_cache *pc,
		     const struct sjob *jb, size_t p)
{
	const struct carve_job_podset *ps = &jb->j->podsets[p];
	struct carve_pod_req r;
	struct carve_pod_group g;
	struct carve_pod_place pl;
	bool fits;
	size_t i;

	for (i = 0; i < pc->n; i++)
		if (sim_same_pod(pc->ps[i], ps))
			return pc->fits[i];
	sim_pod_req(jb, p, &r);
	/* Taints are left out: the queue's flavors bring the tolerations (a
	 * tainted pool is meant for the queues whose flavor tolerates it),
	 * and this check is about resources, not about which queue may go
	 * where. */
	r.ntolerations = 1;
	r.tolerations = &tolerate_all;
	g.req = &r;
	g.count = 1;
	fits = carve_placer_place(scratch, &g, 1, NULL, &pl) == 0;
	if (fits)
		carve_placer_release(scratch, &pl, 1);
	if (pc->n < PROBE_CACHE) {
		pc->ps[pc->n] = ps;
		pc->fits[pc->n++] = fits;
	}
	return fits;
}

/* Checks one pod of every podSet of job against the empty cluster. */
static bool fits_somewhere(struct carve_placer *scratch, struct probe_cache *pc,
			   const struct sjob *jb, const char **why)
{
	const struct carve_job *j = jb->j;
	size_t p;

	for (p = 0; p < j->npodsets; p++)
		if (!pod_fits(scratch, pc, jb, p)) {
			*why = j->podsets[p].name;
			return false;
		}
	return true;
}

/* Each queue's tolerations: those of every ResourceFlavor its resource
 * groups name (queue i is the manifests' ClusterQueue i). */
int sim_queue_tolerations(struct carve_sim *s)
{
	const struct carve_manifests *m = s->m;
	size_t q, g, f, t, n = 0;

	/* Queues added later (Volcano, KAI: check_jobs) bring no tolerations. */
	s->qtol_off = carve_calloc(s->nqueues + s->njobs + 1, sizeof(*s->qtol_off));
	if (!s->qtol_off)
		return CARVE_ENOMEM;
	for (q = 0; q < s->nqueues; q++)
		for (g = 0; g < m->cqs[q].ngroups; g++)
			for (f = 0; f < m->cqs[q].groups[g].nflavors; f++) {
				const struct carve_mf_flavor *rf =
					carve_mf_find_flavor(m, m->cqs[q].groups[g].flavors[f].flavor);

				n += rf ? rf->ntolerations : 0;
			}
	s->qtol = carve_calloc(n + 1, sizeof(*s->qtol));
	if (!s->qtol)
		return CARVE_ENOMEM;
	for (n = 0, q = 0; q < s->nqueues; q++) {
		s->qtol_off[q] = n;
		for (g = 0; g < m->cqs[q].ngroups; g++)
			for (f = 0; f < m->cqs[q].groups[g].nflavors; f++) {
				const struct carve_mf_flavor *rf =
					carve_mf_find_flavor(m, m->cqs[q].groups[g].flavors[f].flavor);

				for (t = 0; rf && t < rf->ntolerations; t++) {
					const struct carve_toleration *tl = &rf->tolerations[t];

					s->qtol[n].key = tl->key;
					s->qtol[n].op = tl->op;
					s->qtol[n].value = tl->value;
					s->qtol[n++].effect = tl->effect;
				}
			}
	}
	for (q = s->nqueues; q <= s->nqueues + s->njobs; q++)
		s->qtol_off[q] = n;
	return 0;
}

/* The trace's job classes, in order of first appearance; each job's index. */
static int build_classes(struct carve_sim *s)
{
	size_t i, k;

	s->classes = carve_calloc(s->njobs + 1, sizeof(*s->classes));
	if (!s->classes)
		return CARVE_ENOMEM;
	for (i = 0; i < s->njobs; i++) {
		const char *c = s->jobs[i].j->job_class;

		s->jobs[i].cls = -1;
		if (!c)
			continue;
		for (k = 0; k < s->nclasses && strcmp(s->classes[k].name, c); k++)
			;
		if (k == s->nclasses)
			s->classes[s->nclasses++].name = c;
		s->jobs[i].cls = (int)k;
	}
	return 0;
}

/* Every podSet of jb maps to one placement request (one GPU device kind). */
static int pods_ok(const struct sjob *jb, struct carve_error *err)
{
	struct carve_error why = {0};
	struct carve_pod_req r;
	size_t p;

	for (p = 0; p < jb->spec.npodsets; p++)
		if (carve_pod_req_of(&jb->spec.podsets[p], &r, &why))
			return carve_errorf(err, CARVE_EINVAL, "job %s: %s", jb->j->name,
					    why.text);
	return 0;
}

/* Resolves every job's queue and checks that it can ever fit. */
static int check_jobs(struct carve_sim *s)
{
	struct carve_error err;
	struct carve_placer *scratch;
	struct probe_cache *pc = carve_calloc(1, sizeof(*pc));
	size_t i, p, bad = 0;
	int rc = 0;

	scratch = s->p ? carve_placer_create(s->c, "binpack", 1, &err) : NULL;
	if ((s->p && !scratch) || !pc) {
		carve_placer_destroy(scratch);
		carve_free(pc);
		return CARVE_ENOMEM;
	}
	/* --mig dynamic: a profile the static layouts lack fits once an idle
	 * GPU is repartitioned */
	if (scratch && carve_placer_is_mig_dynamic(s->p))
		carve_placer_set_mig_dynamic(scratch, true);
	for (i = 0; i < s->njobs; i++) {
		struct sjob *jb = &s->jobs[i];
		const struct carve_job *j = jb->j;
		const char *why = NULL, *cq = NULL;
		char msg[300];

		jb->wl = -1;
		jb->partial_since = -1;
		rc = carve_admission_job(s->ad, j, &jb->spec, NULL, &err);
		if (rc == CARVE_ENOMEM)
			break;
		if (!rc)
			rc = pods_ok(jb, &err);
		if (rc) {
			snprintf(msg, sizeof(msg), "%s", err.text);
		} else if (scratch && i < s->ntrace && !fits_somewhere(scratch, pc, jb, &why)) {
			/* (a Workload of the manifests that fits nowhere stays
			 * pending, as `carve admit` leaves it) */
			snprintf(msg, sizeof(msg), "job %s: a pod of podSet %s fits no node of the "
				 "cluster, even empty", j->name, why);
		} else {
			cq = jb->spec.cq;
		}
		if (!cq) {
			jb->st = SJ_SKIPPED;
			s->skipped++;
			if (!s->o.skip_invalid) {
				carve_diag_error(&s->m->diags, j->pos, "%s", msg);
				bad++;
			}
			continue;
		}
		jb->cq = cq;
		jb->q = find_queue(s, cq);
		if (jb->q < 0) { /* a Volcano or KAI queue: the engine knows it */
			jb->q = (int)s->nqueues;
			s->queues[s->nqueues++].name = cq;
		}
		s->queues[jb->q].jobs++;
		for (p = 0; p < j->npodsets; p++) {
			struct carve_pod_req r;

			sim_pod_req(jb, p, &r);
			jb->gpu_job |= r.gpu != CARVE_GREQ_NONE;
			jb->npods += j->podsets[p].count;
		}
		jb->remaining = j->duration;
		s->left++;
	}
	carve_placer_destroy(scratch);
	carve_free(pc);
	if (rc == CARVE_ENOMEM)
		return rc;
	return bad ? CARVE_EINVAL : 0;
}

/* Adds j, converted from a manifest object of that kind with result rc,
 * to s->own as a job arriving at 0 that runs dur; an object the bridge
 * does not queue (CARVE_ENOTFOUND) is left out, as Kueue would. */
static int own_add(struct carve_sim *s, int rc, struct carve_job *j, const char *kind,
		   int64_t dur, struct carve_error *err)
{
	if (rc == CARVE_ENOTFOUND)
		return 0;
	if (rc)
		return rc;
	j->duration = dur;
	rc = carve_jobs_add(s->own, j, err);
	if (rc == CARVE_EEXISTS)
		return carve_errorf(err, rc, "%s %s/%s: the trace has a job of that name", kind,
				    j->ns, j->name);
	return rc < 0 ? rc : 0;
}

/* With o.workloads: s->own holds the trace's jobs and one job per pending
 * Workload or PodGroup of the manifests and per Job, JobSet, pod (group)
 * or Volcano Job the bridge queues, arriving at 0; s->js points at it. */
static int own_jobs(struct carve_sim *s, struct carve_error *err)
{
	const struct carve_manifests *m = s->m;
	int64_t dur = s->o.workload_duration > 0 ? s->o.workload_duration : 3600;
	struct carve_job j;
	size_t i;
	int rc = 0;

	s->own = carve_jobs_create();
	if (!s->own)
		return CARVE_ENOMEM;
	for (i = 0; i < s->js->n && rc >= 0; i++)
		rc = carve_jobs_add(s->own, &s->js->jobs[i], err);
	for (i = 0; i < m->nworkloads && rc >= 0; i++)
		if (!m->workloads[i].admitted_cq) /* else in the engine already */
			rc = own_add(s, carve_admission_workload_job(s->ad, &m->workloads[i], &j,
								     &s->m->diags, err),
				     &j, "Workload", dur, err);
	for (i = 0; i < m->npodgroups && rc >= 0; i++) {
		const struct carve_mf_podgroup *pg = &m->podgroups[i];

		if (!pg->phase || strcmp(pg->phase, "Running")) /* else in the engine already */
			rc = own_add(s, carve_admission_podgroup_job(s->ad, pg, &j, &s->m->diags, err),
				     &j, "PodGroup", dur, err);
	}
	for (i = 0; i < s->ad->nderived && rc >= 0; i++)
		rc = own_add(s, carve_admission_derived_job(s->ad, i, &j, &s->m->diags, err), &j,
			     s->ad->derived[i].w->meta.kind, dur, err);
	if (rc < 0)
		return rc;
	s->js = s->own;
	return 0;
}

static const char *const sched_names[CARVE_SIM_NSCHED] = {
	[CARVE_SIM_CARVE] = "carve",
	[CARVE_SIM_EXCLUSIVE] = "exclusive",
	[CARVE_SIM_DEVICE_PLUGIN] = "device-plugin",
	[CARVE_SIM_KUEUE] = "kueue",
};

const char *carve_sim_sched_name(enum carve_sim_sched sc)
{
	return (unsigned)sc < CARVE_SIM_NSCHED ? sched_names[sc] : "?";
}

int carve_sim_sched_parse(const char *name, enum carve_sim_sched *out)
{
	int i;

	if (!strcmp(name, "kube-default")) {
		*out = CARVE_SIM_DEVICE_PLUGIN;
		return 1;
	}
	for (i = 0; i < CARVE_SIM_NSCHED; i++)
		if (!strcmp(name, sched_names[i])) {
			*out = (enum carve_sim_sched)i;
			return 0;
		}
	return -1;
}

const struct carve_admission *carve_sim_admission(const struct carve_sim *s)
{
	return s->ad;
}

struct carve_sim *carve_sim_create(struct carve_manifests *m, const struct carve_jobs *js,
				   const struct carve_sim_opts *o, struct carve_error *err)
{
	struct carve_admission_opts ao;
	struct carve_sim *s = carve_calloc(1, sizeof(*s));
	size_t i;
	int rc;

	if (!s) {
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		return NULL;
	}
	s->m = m;
	s->js = js;
	s->ntrace = js->n;
	if (o)
		s->o = *o;
	s->gang_timeout_given = s->o.gang_timeout != 0;
	if (!s->o.gang_timeout)
		s->o.gang_timeout = 1800;
	s->policy = s->o.policy ? s->o.policy : "binpack";
	s->seed = s->o.has_seed ? s->o.seed : 42;
	memset(&ao, 0, sizeof(ao));
	ao.policy = s->policy;
	ao.seed = s->seed;
	ao.has_seed = true;
	ao.mig_dynamic = s->o.mig_dynamic && s->o.sched == CARVE_SIM_CARVE;
	/* The trace is the workload (docs/simulator.md); with o.workloads the
	 * admitted Workloads are the starting state. */
	ao.no_workloads = !s->o.workloads;
	ao.admitted_only = s->o.workloads;
	s->ad = carve_admission_build_opts(m, &ao);
	if (!s->ad)
		goto out_nomem;
	if (s->o.workloads && !m->diags.nerrors) {
		/* The manifests' objects keep their own times; the trace's second
		 * 0 is the latest of them (the engine's clock of `carve admit`). */
		s->ad->job_epoch = s->ad->now;
		rc = own_jobs(s, err);
		if (rc == CARVE_ENOMEM)
			goto out_nomem;
		if (rc)
			goto out;
		js = s->js;
	}
	if (m->diags.nerrors) {
		carve_errorf(err, CARVE_EINVAL, "%zu error%s in the manifests", m->diags.nerrors,
			     m->diags.nerrors == 1 ? "" : "s");
		goto out;
	}
	if (!s->ad->inv || !s->ad->placer || !carve_cluster_node_count(s->ad->inv->cluster)) {
		/* No nodes: carve mode admits by quota alone (as `carve admit`
		 * does); the baseline places pods, so it needs them. */
		if (s->o.sched != CARVE_SIM_CARVE || s->ad->inv) {
			carve_errorf(err, CARVE_EINVAL, "the manifests describe no nodes to "
				     "simulate on");
			goto out;
		}
		s->empty = carve_cluster_create();
		if (!s->empty)
			goto out_nomem;
	}
	if (!m->ncqs && !m->nvcqueues && !m->nkaiqueues) {
		carve_errorf(err, CARVE_EINVAL, "the manifests have no ClusterQueue");
		goto out;
	}
	s->c = s->ad->inv ? s->ad->inv->cluster : s->empty;
	s->p = s->ad->placer;
	s->njobs = js->n;
	s->jobs = carve_calloc(s->njobs + 1, sizeof(*s->jobs));
	if (!s->jobs || build_queues(s) || build_pools(s))
		goto out_nomem;
	for (i = 0; i < s->njobs; i++)
		s->jobs[i].j = &js->jobs[i];
	if (build_classes(s) || sim_queue_tolerations(s))
		goto out_nomem;
	rc = check_jobs(s);
	if (rc == CARVE_ENOMEM)
		goto out_nomem;
	if (rc) {
		carve_errorf(err, CARVE_EINVAL, "%zu invalid job%s", s->skipped,
			     s->skipped == 1 ? "" : "s");
		goto out;
	}
	if (s->o.sched != CARVE_SIM_CARVE) {
		rc = sim_base_init(s, err);
		if (rc)
			goto out;
	}
	s->snapw = 2 * s->npools + s->nqueues;
	for (i = 0; i < s->njobs; i++)
		s->jobs[i].asked_ge = sim_job_asked_ge(s, &s->jobs[i]);
	sim_window_open(s, -1);
	s->mig_delay = s->o.has_mig_delay ? s->o.mig_delay : 60;
	if (s->mig_delay < 0)
		s->mig_delay = 0;
	if (s->o.sched == CARVE_SIM_CARVE && s->p && carve_placer_is_mig_dynamic(s->p)) {
		const struct carve_repartition *log;
		size_t nlog = carve_placer_repartitions(s->p, &log), k;

		s->mig_hold = carve_calloc(carve_cluster_gpu_count(s->c) + 1,
					   sizeof(*s->mig_hold));
		s->mig_ready = carve_calloc(carve_cluster_gpu_count(s->c) + 1,
					    sizeof(*s->mig_ready));
		if (!s->mig_hold || !s->mig_ready)
			goto out_nomem;
		/* what the admitted Workloads stand on (--workloads) is never
		 * given back */
		for (k = 0; k < nlog; k++)
			s->mig_hold[log[k].gpu]++;
	}
	for (i = 0; i < s->njobs; i++)
		if (s->jobs[i].st == SJ_FUTURE &&
		    sim_push(s, s->jobs[i].j->arrival, EV_ARRIVE, (uint32_t)i))
			goto out_nomem;
	return s;
out_nomem:
	carve_errorf(err, CARVE_ENOMEM, "out of memory");
out:
	carve_sim_destroy(s);
	return NULL;
}

void carve_sim_destroy(struct carve_sim *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->njobs; i++) {
		carve_free(s->jobs[i].contrib);
		carve_free(s->jobs[i].pl);
		carve_free(s->jobs[i].placed);
		carve_free(s->jobs[i].created);
		carve_free(s->jobs[i].kkey);
		carve_free(s->jobs[i].kcount);
		carve_free(s->jobs[i].kflv);
		carve_free(s->jobs[i].rgpus);
	}
	sim_base_free(s);
	carve_free(s->jobs);
	carve_free(s->queues);
	carve_free(s->classes);
	carve_free(s->qtol);
	carve_free(s->qtol_off);
	carve_free(s->pool_names);
	carve_free(s->node_pool);
	carve_free(s->pool_cap);
	carve_free(s->pool_alloc);
	carve_free(s->pool_work);
	carve_free(s->heap);
	carve_free(s->active);
	carve_free(s->waiting);
	carve_free(s->snaps);
	carve_free(s->mig_hold);
	carve_free(s->mig_ready);
	carve_admission_destroy(s->ad);
	carve_jobs_destroy(s->own);
	carve_cluster_destroy(s->empty);
	carve_free(s);
}

size_t carve_sim_skipped(const struct carve_sim *s)
{
	return s->skipped;
}

int64_t carve_sim_now(const struct carve_sim *s)
{
	return s->now;
}

size_t carve_sim_events(const struct carve_sim *s)
{
	return s->nevents;
}

size_t carve_sim_jobs_left(const struct carve_sim *s)
{
	return s->left;
}

/* ---- carve mode ------------------------------------------------------------------ */

static int add_active(struct carve_sim *s, uint32_t job)
{
	if (s->nactive == s->capactive) {
		size_t c = s->capactive ? s->capactive * 2 : 64;
		void *v = carve_realloc(s->active, c * sizeof(*s->active));

		if (!v)
			return CARVE_ENOMEM;
		s->active = v;
		s->capactive = c;
	}
	s->active[s->nactive++] = job;
	return 0;
}

static int carve_arrive(struct carve_sim *s, uint32_t job, struct carve_error *err)
{
	struct sjob *jb = &s->jobs[job];
	const struct carve_job *j = jb->j;
	int id = carve_adm_add_workload(s->ad->adm, &jb->spec, err);

	if (id == CARVE_ENOMEM)
		return id;
	if (id < 0) {
		/* Refused by the engine: reported, counted, never scheduled. */
		carve_diag_error(&s->m->diags, j->pos, "job %s: %s", j->name, err->text);
		jb->st = SJ_SKIPPED;
		s->rejected++;
		s->left--;
		return 0;
	}
	jb->wl = id;
	return add_active(s, job);
}

int64_t sim_scaled_run(int64_t work, int npods, int adm)
{
	if (adm <= 0 || adm >= npods)
		return work;
	if (work > (CARVE_SIM_TIME_MAX - adm) / npods)
		return CARVE_SIM_TIME_MAX;
	return (work * npods + adm - 1) / adm;
}

void sim_keep_progress(const struct carve_sim *s, struct sjob *jb)
{
	int adm = jb->adm_pods > 0 && jb->adm_pods < jb->npods ? jb->adm_pods : jb->npods;

	if (!jb->j->checkpoint)
		return;
	if (s->now > jb->ready)
		jb->remaining -= (int64_t)((double)(s->now - jb->ready) * adm / jb->npods);
	if (jb->remaining < 1)
		jb->remaining = 1;
}

/* --mig dynamic: notes the repartitioned GPUs jb's placement stands on
 * (carve_placer_repartitions), holding them in s->mig_hold; a GPU no
 * running job held was repartitioned for it: counted, its reconfiguration
 * over at now + delay (s->mig_ready).  *ready: when the last of jb's GPUs
 * is reconfigured (now at the earliest), so a job placed on another new
 * instance of a GPU still being reconfigured waits for it too.  Returns
 * whether *ready is later than now, or -1 on allocation failure. */
static int mig_note(struct carve_sim *s, struct sjob *jb, const struct carve_wl_status *st,
		    int64_t *ready)
{
	const struct carve_repartition *log;
	size_t nlog = carve_placer_repartitions(s->p, &log), p, k, e, r;
	int d;

	*ready = s->now;
	if (!s->mig_hold || !nlog)
		return 0;
	for (p = 0; p < st->npodsets; p++)
		for (k = 0; k < st->podsets[p].npods; k++) {
			const struct carve_pod_place *pl = &st->podsets[p].pods[k];

			for (d = 0; d < pl->ndevs; d++) {
				uint32_t g = pl->devs[d].gpu;

				for (e = 0; e < nlog && log[e].gpu != g; e++)
					;
				for (r = 0; r < jb->nrgpus && jb->rgpus[r] != g; r++)
					;
				if (e == nlog || r < jb->nrgpus)
					continue; /* not repartitioned, or noted already */
				if (!(jb->nrgpus & (jb->nrgpus - 1))) { /* 0, 1, 2, 4 ...: grow */
					void *v = carve_realloc(jb->rgpus, (jb->nrgpus ? 2 * jb->nrgpus
									  : 1) * sizeof(*jb->rgpus));

					if (!v)
						return -1;
					jb->rgpus = v;
				}
				jb->rgpus[jb->nrgpus++] = g;
				if (!s->mig_hold[g]++) {
					s->mig_reparts++;
					s->mig_ready[g] = sim_time_add(s->now, s->mig_delay);
				}
				if (s->mig_ready[g] > *ready)
					*ready = s->mig_ready[g];
			}
		}
	return *ready > s->now;
}

/* jb no longer stands on its repartitioned GPUs. */
static void mig_release(struct carve_sim *s, struct sjob *jb)
{
	size_t r;

	for (r = 0; s->mig_hold && r < jb->nrgpus; r++)
		s->mig_hold[jb->rgpus[r]]--;
	jb->nrgpus = 0;
}

/* Holds the work (GE x demand) of what st placed for jb. */
static int carve_hold_work(struct carve_sim *s, struct sjob *jb,
			   const struct carve_wl_status *st)
{
	size_t p, k;
	int d;

	for (p = 0; p < st->npodsets; p++)
		for (k = 0; k < st->podsets[p].npods; k++) {
			const struct carve_pod_place *pl = &st->podsets[p].pods[k];
			double ge = 0;

			for (d = 0; d < pl->ndevs; d++)
				ge += sim_dev_ge(s, s->p, &pl->devs[d]);
			if (sim_hold(s, jb, pl->node, 0, ge * jb->j->demand))
				return CARVE_ENOMEM;
		}
	return 0;
}

/*
 * Job admitted by the engine at s->now with placement st.  Admitted with
 * fewer pods than it asked (partial admission), it runs longer in
 * proportion (scaled_run); on a GPU repartitioned for it (--mig dynamic)
 * it holds its devices from now but works only after the reconfiguration
 * delay (EV_READY).
 */
static int carve_start(struct carve_sim *s, uint32_t job, const struct carve_wl_status *st)
{
	struct sjob *jb = &s->jobs[job];
	size_t p, k;
	int d, adm = 0, fresh;
	int64_t ready = s->now;

	for (p = 0; p < st->npodsets && p < jb->j->npodsets; p++)
		adm += st->podsets[p].count;
	fresh = s->p ? mig_note(s, jb, st, &ready) : 0;
	if (fresh < 0)
		return CARVE_ENOMEM;
	for (p = 0; p < st->npodsets; p++) {
		if (!s->p && p < jb->j->npodsets) {
			/* Quota only: what the podSet's pods ask for, on no node. */
			double ge = st->podsets[p].count * sim_podset_ge(s, &jb->j->podsets[p]);

			if (sim_hold(s, jb, SIM_NO_NODE, ge, ge * jb->j->demand))
				return CARVE_ENOMEM;
			continue;
		}
		for (k = 0; k < st->podsets[p].npods; k++) {
			const struct carve_pod_place *pl = &st->podsets[p].pods[k];
			double ge = 0;

			for (d = 0; d < pl->ndevs; d++)
				ge += sim_dev_ge(s, s->p, &pl->devs[d]);
			if (sim_hold(s, jb, pl->node, ge, 0))
				return CARVE_ENOMEM;
		}
	}
	if (s->p && !fresh && carve_hold_work(s, jb, st))
		return CARVE_ENOMEM;
	jb->st = SJ_RUNNING;
	jb->adm_cycle = st->cycle;
	jb->start = s->now;
	if (!jb->started_once || !jb->j->checkpoint)
		jb->remaining = jb->j->duration;
	jb->started_once = true;
	jb->adm_pods = adm;
	if (adm > 0 && adm < jb->npods && !jb->partial) {
		jb->partial = true;
		s->partial++;
	}
	sim_job_running(s, jb, ready);
	jb->gen++;
	if (fresh && sim_push(s, jb->ready, EV_READY, job))
		return CARVE_ENOMEM;
	return sim_push(s, sim_time_add(jb->ready, sim_scaled_run(jb->remaining, jb->npods, adm)),
			EV_COMPLETE, job);
}

/* The reconfiguration delay of jb's run is over: its devices work. */
static int carve_ready(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];
	const struct carve_wl_status *st = carve_adm_status(s->ad->adm, (uint32_t)jb->wl);

	if (jb->st != SJ_RUNNING || !st || st->state != CARVE_WL_ADMITTED)
		return 0;
	if (!jb->has_all_pods) {
		jb->all_pods = s->now;
		jb->has_all_pods = true;
	}
	return carve_hold_work(s, jb, st);
}

static void carve_preempted(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];

	sim_keep_progress(s, jb);
	sim_unhold(s, jb);
	mig_release(s, jb);
	jb->st = SJ_PENDING;
	jb->gen++;
	sim_job_failed(s, jb);
	s->preemptions++;
	s->queues[jb->q].preemptions++;
}

/* Reads back the decisions of the cycles just run. */
static int carve_scan(struct carve_sim *s)
{
	size_t i, n = 0;
	int rc;

	for (i = 0; i < s->nactive; i++) {
		uint32_t job = s->active[i];
		struct sjob *jb = &s->jobs[job];
		const struct carve_wl_status *st;

		if (jb->st == SJ_DONE)
			continue;
		s->active[n++] = job;
		st = carve_adm_status(s->ad->adm, (uint32_t)jb->wl);
		if (!st)
			continue;
		if (jb->st == SJ_RUNNING) {
			if (st->state == CARVE_WL_PENDING) {
				carve_preempted(s, job);
			} else if (st->state == CARVE_WL_ADMITTED && st->evicted &&
				   st->cycle != jb->adm_cycle) {
				carve_preempted(s, job);
				rc = carve_start(s, job, st);
				if (rc)
					return rc;
			}
		} else if (st->state == CARVE_WL_ADMITTED) {
			rc = carve_start(s, job, st);
			if (rc)
				return rc;
		}
	}
	s->nactive = n;
	return 0;
}

static int carve_schedule(struct carve_sim *s)
{
	int rc, round;

	if (s->o.cycles > 0) {
		/* Victims marked by the step before are evicted first: a cycle's
		 * marks stand until the next cycle, as `carve admit --cycles`. */
		for (round = 0; round < s->o.cycles; round++) {
			if (carve_adm_evict_marked(s->ad->adm) < 0)
				return CARVE_ENOMEM;
			if (carve_adm_cycle(s->ad->adm, sim_time_add(s->ad->job_epoch, s->now)) < 0)
				return CARVE_ENOMEM;
		}
		return carve_scan(s);
	}
	for (round = 0; round < 100; round++) {
		rc = carve_adm_run(s->ad->adm, sim_time_add(s->ad->job_epoch, s->now), 1000);
		if (rc < 0)
			return rc;
		if (rc > 1 || round) {
			rc = carve_scan(s);
			if (rc)
				return rc;
		}
		if (!carve_adm_evict_marked(s->ad->adm))
			break;
	}
	return 0;
}

static void carve_complete(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];

	mig_release(s, jb);
	carve_adm_finish(s->ad->adm, (uint32_t)jb->wl);
	sim_unhold(s, jb);
}

/* ---- the loop -------------------------------------------------------------------- */

static void job_done(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];

	jb->st = SJ_DONE;
	jb->gen++;
	s->left--;
	s->completed++;
	s->queues[jb->q].completed++;
	if (s->now > s->last_done)
		s->last_done = s->now;
}

static int apply(struct carve_sim *s, const struct event *e, bool *changed, bool *measured,
		 struct carve_error *err)
{
	struct sjob *jb = &s->jobs[e->job];
	bool base = s->o.sched != CARVE_SIM_CARVE;
	int rc = 0;

	if (e->gen != jb->gen)
		return 0; /* cancelled */
	switch (e->kind) {
	case EV_ARRIVE:
		jb->st = SJ_PENDING;
		jb->enq = s->now;
		rc = base ? sim_base_arrive(s, e->job) : carve_arrive(s, e->job, err);
		break;
	case EV_COMPLETE:
		if (jb->st != SJ_RUNNING)
			return 0;
		if (base)
			rc = sim_base_complete(s, e->job);
		else
			carve_complete(s, e->job);
		job_done(s, e->job);
		break;
	case EV_TIMEOUT:
		if (base)
			rc = sim_base_timeout(s, e->job);
		if (jb->failed_first && !jb->has_fail_t)
			sim_job_failed(s, jb);
		break;
	case EV_READY:
		/* only what works changes: recorded, nothing to schedule */
		*measured = true;
		return base ? 0 : carve_ready(s, e->job);
	case EV_REQUEUE:
		if (base)
			rc = sim_base_requeue(s, e->job);
		break;
	}
	*changed = true;
	return rc;
}

int carve_sim_run(struct carve_sim *s, int64_t until, const volatile sig_atomic_t *stop,
		  struct carve_error *err)
{
	int rc = carve_sim_run_events(s, until, SIZE_MAX, stop, err);

	return rc > 0 ? 0 : rc;
}

int carve_sim_run_events(struct carve_sim *s, int64_t until, size_t max_events,
			 const volatile sig_atomic_t *stop, struct carve_error *err)
{
	size_t steps = 0;
	int rc;

	if (until > CARVE_SIM_TIME_MAX)
		until = CARVE_SIM_TIME_MAX;
	if (!s->started) {
		s->started = true;
		sim_window_open(s, until);
		if (sim_snapshot(s))
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	}
	while (s->nheap && !(stop && *stop)) {
		int64_t t;

		if (steps == max_events)
			return 1;
		bool changed = false, measured = false;

		if (s->heap[0].gen != s->jobs[s->heap[0].job].gen) {
			pop(s); /* cancelled: it must not move the clock */
			continue;
		}
		t = s->heap[0].t;
		if (until >= 0 && t > until)
			break;
		steps++;
		if (t > s->win_end)
			sim_window_backlog(s); /* nothing left before the window's end */
		sim_advance(s, t);
		while (s->nheap && s->heap[0].t == t) {
			struct event e = pop(s);

			s->nevents++;
			rc = apply(s, &e, &changed, &measured, err);
			if (rc)
				return rc == CARVE_ENOMEM
					       ? carve_errorf(err, rc, "out of memory") : rc;
		}
		if (changed) {
			rc = s->o.sched != CARVE_SIM_CARVE ? sim_base_pass(s)
								   : carve_schedule(s);
			if (rc)
				return carve_errorf(err, rc, "%s", rc == CARVE_ENOMEM ? "out of memory"
					: "the scheduler failed");
			sim_measure_frag(s);
		}
		if ((changed || measured) && sim_snapshot(s))
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	}
	if (stop && *stop)
		return 1;
	if (until >= 0 && until > s->now) {
		sim_advance(s, until);
		if (sim_snapshot(s))
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	}
	if (!s->nheap || s->now >= s->win_end)
		sim_window_backlog(s);
	return 0;
}
