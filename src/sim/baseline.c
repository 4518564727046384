/*
 * baseline.c - the baseline models of the replay simulator: what a
 * platform team's stock stack does with the same trace, cluster and queues
 * (docs/simulator.md, "Baselines").  Three models, chosen by o.sched:
 *
 *   exclusive      kube-scheduler + the NVIDIA device plugin without any
 *                  sharing: the cluster is copied with every GPU whole; a
 *                  MIG, time-slice or fractional request takes one whole
 *                  GPU per unit (a fraction: one GPU) on a node that served
 *                  that kind of request in the real cluster (a label
 *                  carve.dev/sim-<kind> on the copy says which);
 *   device-plugin  kube-scheduler + the device plugin serving the
 *                  manifests' static MIG layouts (mixed strategy: one
 *                  nvidia.com/mig-<profile> device per instance) and
 *                  time-slicing replicas (one nvidia.com/gpu unit each); a
 *                  KAI fraction asks nvidia.com/gpu: 1 (the stock stack
 *                  cannot split a card), which the device plugin serves as
 *                  a whole GPU, or as one replica on a time-sliced node;
 *   kueue          Kueue admitting on the ClusterQueues' quota alone (a
 *                  second admission engine built without nodes:
 *                  cohorts, borrowing and preemption as the manifests
 *                  configure them), then kube-scheduler placing the
 *                  admitted pods (the admitted count, under partial
 *                  admission, run longer as in carve mode) on the
 *                  device-plugin model's devices of the nodes of their
 *                  assigned flavors (whose nodeLabels Kueue injects);
 *                  waitForPodsReady evicts a workload whose pods do not all
 *                  run within its timeout and requeues it after Kueue's
 *                  exponential backoff (not when nothing can free a
 *                  device any more: it would cycle for ever), and, with
 *                  blockAdmission (Kueue's default), nothing is admitted
 *                  while an admitted workload's pods do not all run.
 *
 * exclusive and device-plugin share the rest: a ResourceQuota per
 * namespace and resource name (hard = the ClusterQueue's nominal quota of
 * that name summed over flavors, split evenly between the namespaces of
 * the trace that reach the queue), charged when the Job controller
 * creates a pod (creation beyond it is refused and retried at the next
 * pass; a created pod counts until it is deleted); per-pod scheduling in
 * queue order (priority, then arrival or last retry); PriorityClass
 * preemption as kube-scheduler's DefaultPreemption (a pod that fits no
 * node may evict lower-priority pods of one node: the node whose victims
 * have the lowest highest priority, then the lowest sum, then the fewest,
 * each victim set minimised by reprieving the most important pods first);
 * a partial gang releases its pods after the gang timeout and retries.
 * Every model places with "spread" (kube-scheduler's default
 * LeastAllocated scoring) and gives pods the tolerations of their queue's
 * ResourceFlavors.  A job that loses its pods to a preemption loses its
 * attempt: it restarts, keeping its progress only with checkpointing.
 *
 * A job a model can never run (its pods do not all fit the empty copy at
 * once; exclusive/device-plugin: or its pods ask more than its
 * namespace's ResourceQuota) is counted as never fitting on arrival and
 * never queued: retrying it would go on for ever.
 *
 * Invariants: the copy's nodes and GPUs have the real cluster's ids (so
 * placements name the same GPUs in both); every placed pod is created;
 * rq[].used is the sum of the charges of the created pods; a job is in
 * s->waiting exactly while it is pending (never-fitting jobs aside).
 */
#include <stdlib.h>
#include <string.h>

#include "carve/admission.h"
#include "carve/quantity.h"
#include "carve/resource.h"
#include "sim_int.h"

#define KIND_GPU "carve.dev/sim-gpu"
#define KIND_SHARED "carve.dev/sim-shared"
#define KIND_FRACTION "carve.dev/sim-fraction"
#define KIND_MIG "carve.dev/sim-mig-"
/* Every node of the copy carries its name under this label: preemption
 * tries one node at a time through a nodeSelector on it. */
#define NODE_LABEL "carve.dev/sim-node"

/* Kueue's documented defaults: waitForPodsReady.timeout 5 minutes (Kueue
 * docs, "Sequential Admission with Ready Pods",
 * kueue.sigs.k8s.io/docs/tasks/manage/setup_sequential_admission/);
 * requeuingStrategy (Kueue configuration API reference, RequeuingStrategy):
 * backoffBaseSeconds 60, backoffMaxSeconds 3600, each backoff "about
 * b*2^(n-1)+Rand" with n the requeue count (the random jitter is left out
 * here, for determinism), backoffLimitCount null: requeued for ever. */
#define KUEUE_PODS_READY_TIMEOUT 300
#define KUEUE_BACKOFF_BASE 60
#define KUEUE_BACKOFF_MAX 3600

static bool is_kueue(const struct carve_sim *s)
{
	return s->o.sched == CARVE_SIM_KUEUE;
}

int64_t sim_kueue_backoff(int n)
{
	int64_t b = KUEUE_BACKOFF_BASE;

	while (--n > 0 && b < KUEUE_BACKOFF_MAX)
		b *= 2;
	return b < KUEUE_BACKOFF_MAX ? b : KUEUE_BACKOFF_MAX;
}

const char *sim_base_model(const struct carve_sim *s)
{
	switch (s->o.sched) {
	case CARVE_SIM_EXCLUSIVE:
		return "kube-scheduler + NVIDIA device plugin without sharing (every GPU whole), "
		       "ResourceQuota per namespace and resource charged at pod creation, "
		       "PriorityClass preemption, per-pod scheduling with a gang timeout";
	case CARVE_SIM_DEVICE_PLUGIN:
		return "kube-scheduler + NVIDIA device plugin serving the static MIG layouts "
		       "(mixed strategy) and time-slicing replicas, ResourceQuota per namespace "
		       "and resource charged at pod creation, PriorityClass preemption, per-pod "
		       "scheduling with a gang timeout";
	case CARVE_SIM_KUEUE:
		return "Kueue admitting on ClusterQueue quota alone (cohorts, borrowing, "
		       "preemption), kube-scheduler placing admitted pods on the device plugin's "
		       "MIG and time-slice devices of the assigned flavors' nodes, partial "
		       "admission, waitForPodsReady (blockAdmission) timeout and requeue with "
		       "exponential backoff";
	default:
		return NULL;
	}
}

/* ---- the copy of the cluster ------------------------------------------------------ */

struct lbl {
	char key[96];
	const char *value;
};

static void add_lbl(struct lbl *extra, size_t *n, const char *key, const char *value)
{
	size_t k;

	for (k = 0; k < *n && strcmp(extra[k].key, key); k++)
		;
	if (k == *n && *n < 24) {
		snprintf(extra[*n].key, sizeof(extra[0].key), "%s", key);
		extra[(*n)++].value = value;
	}
}

static int copy_node(struct carve_sim *s, const struct carve_node *n, struct carve_error *err)
{
	bool keep = s->o.sched != CARVE_SIM_EXCLUSIVE;
	struct carve_gpu_spec gpus[64];
	struct carve_label *labels;
	struct lbl extra[24];
	size_t nextra = 0, i, k;
	struct carve_node_spec ns;
	int rc;

	if (n->ngpus > 64)
		return carve_errorf(err, CARVE_EINVAL, "node %s: more than 64 GPUs", n->name);
	memset(gpus, 0, sizeof(gpus));
	add_lbl(extra, &nextra, NODE_LABEL, n->name);
	for (i = 0; i < n->ngpus; i++) {
		const struct carve_gpu *g = carve_cluster_gpu(s->c, n->gpu_first + (uint32_t)i);

		gpus[i].model = g->model;
		gpus[i].memory_mib = g->memory_mib;
		gpus[i].sharing = CARVE_SHARE_EXCLUSIVE;
		gpus[i].uuid = g->uuid;
		if (keep && g->sharing == CARVE_SHARE_MIG && g->mig_model) {
			/* the device plugin serves the static layout as it is */
			gpus[i].sharing = CARVE_SHARE_MIG;
			gpus[i].mig_model = g->mig_model;
			gpus[i].mig = g->mig;
		} else if (keep && g->sharing == CARVE_SHARE_TIMESLICE) {
			gpus[i].sharing = CARVE_SHARE_TIMESLICE;
			gpus[i].replicas = g->replicas;
			gpus[i].fail_gt_one = g->fail_gt_one;
		}
		if (g->sharing != CARVE_SHARE_MIG)
			add_lbl(extra, &nextra, KIND_GPU, "true");
		if (g->sharing == CARVE_SHARE_TIMESLICE)
			add_lbl(extra, &nextra, KIND_SHARED, "true");
		if (g->sharing == CARVE_SHARE_FRACTION)
			add_lbl(extra, &nextra, KIND_FRACTION, "true");
		if (g->sharing == CARVE_SHARE_MIG && g->mig_model) {
			size_t m;

			for (m = 0; m < g->mig.n; m++) {
				char key[96];

				snprintf(key, sizeof(key), "%s%s", KIND_MIG,
					 g->mig_model->profiles[g->mig.inst[m].profile].name);
				add_lbl(extra, &nextra, key, "true");
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
		labels[n->nlabels + k].value = extra[k].value;
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

/* ---- ResourceQuota (exclusive, device-plugin) -------------------------------------- */

static int rq_find(const struct carve_sim *s, const char *ns, const char *res)
{
	size_t i;

	for (i = 0; i < s->nrq; i++)
		if (!strcmp(s->rq[i].res, res) && !strcmp(s->rq[i].ns, ns))
			return (int)i;
	return -1;
}

/* ClusterQueue cq's nominal quota of res summed over its flavors (milli). */
static int64_t cq_nominal(const struct carve_mf_cq *cq, const char *res)
{
	int64_t sum = 0;
	size_t g, f, k;

	for (g = 0; g < cq->ngroups; g++)
		for (f = 0; f < cq->groups[g].nflavors; f++) {
			const struct carve_mf_flavorquotas *fq = &cq->groups[g].flavors[f];

			for (k = 0; k < fq->n; k++)
				if (!strcmp(fq->v[k].resource, res))
					sum = carve_qty_sat_add(sum, fq->v[k].nominal);
		}
	return sum;
}

/* Whether the resource of entry (g, f, r) of cq appears at an earlier entry. */
static bool cq_seen(const struct carve_mf_cq *cq, size_t g, size_t f, size_t r)
{
	const char *res = cq->groups[g].flavors[f].v[r].resource;
	size_t g2, f2, r2;

	for (g2 = 0; g2 <= g; g2++)
		for (f2 = 0; f2 < cq->groups[g2].nflavors; f2++) {
			const struct carve_mf_flavorquotas *fq = &cq->groups[g2].flavors[f2];

			if (g2 == g && f2 > f)
				break;
			for (r2 = 0; r2 < fq->n; r2++) {
				if (g2 == g && f2 == f && r2 == r)
					return false;
				if (!strcmp(fq->v[r2].resource, res))
					return true;
			}
		}
	return false;
}

static int rq_add(struct carve_sim *s, size_t *cap, const char *ns, const char *res,
		  int64_t hard)
{
	int i = rq_find(s, ns, res);

	if (i >= 0) {
		s->rq[i].hard = carve_qty_sat_add(s->rq[i].hard, hard);
		return 0;
	}
	if (s->nrq == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		void *v = carve_realloc(s->rq, c * sizeof(*s->rq));

		if (!v)
			return CARVE_ENOMEM;
		s->rq = v;
		*cap = c;
	}
	s->rq[s->nrq++] = (struct srq){ns, res, hard, 0};
	return 0;
}

/*
 * One ResourceQuota per namespace of the trace: for each ClusterQueue its
 * jobs reach, every resource the queue names, hard = the queue's nominal
 * quota of it (summed over flavors) divided evenly between the namespaces
 * whose jobs reach that queue (a namespace reaching two queues gets both
 * shares).  Jobs of a Volcano or KAI queue have no ResourceQuota.
 */
static int build_rq(struct carve_sim *s)
{
	const struct carve_manifests *m = s->m;
	size_t *nns = carve_calloc(m->ncqs + 1, sizeof(*nns));
	uint32_t *first = carve_calloc(s->njobs + 1, sizeof(*first)); /* (q, ns) pairs */
	size_t npairs = 0, cap = 0, i, k, g, f, r;
	int rc = 0;

	if (!nns || !first) {
		rc = CARVE_ENOMEM;
		goto out;
	}
	for (i = 0; i < s->njobs; i++) {
		const struct sjob *jb = &s->jobs[i];

		if (jb->st == SJ_SKIPPED || jb->q < 0 || (size_t)jb->q >= m->ncqs)
			continue;
		for (k = 0; k < npairs; k++) {
			const struct sjob *o = &s->jobs[first[k]];

			if (o->q == jb->q && !strcmp(o->j->ns, jb->j->ns))
				break;
		}
		if (k == npairs) {
			first[npairs++] = (uint32_t)i;
			nns[jb->q]++;
		}
	}
	for (k = 0; k < npairs && !rc; k++) {
		const struct sjob *jb = &s->jobs[first[k]];
		const struct carve_mf_cq *cq = &m->cqs[jb->q];

		for (g = 0; g < cq->ngroups && !rc; g++)
			for (f = 0; f < cq->groups[g].nflavors && !rc; f++) {
				const struct carve_mf_flavorquotas *fq = &cq->groups[g].flavors[f];

				for (r = 0; r < fq->n && !rc; r++) {
					const char *res = fq->v[r].resource;

					if (cq_seen(cq, g, f, r))
						continue; /* summed at its first entry */
					rc = rq_add(s, &cap, jb->j->ns, res,
						    cq_nominal(cq, res) / (int64_t)nns[jb->q]);
				}
			}
	}
out:
	carve_free(nns);
	carve_free(first);
	return rc;
}

/* The ResourceQuota charge of one pod of ps, entry by entry: each request
 * by its name, and a fraction as nvidia.com/gpu: 1 (what the pod asks the
 * stock stack for).  op 0: whether it fits; +1 charge it; -1 give it back. */
static bool rq_pod(struct carve_sim *s, const struct sjob *jb,
		   const struct carve_job_podset *ps, int op)
{
	size_t k, n = ps->nreqs + 1;
	bool fits = true;

	if (!s->nrq)
		return true;
	for (k = 0; k < n; k++) {
		const char *res = k < ps->nreqs ? ps->reqs[k].name : "nvidia.com/gpu";
		int64_t milli = k < ps->nreqs ? ps->reqs[k].milli : 1000;
		int i;

		if (k == ps->nreqs && !ps->gpu_milli && !ps->gpu_mem_mib)
			break;
		i = rq_find(s, jb->j->ns, res);
		if (i < 0 || milli <= 0)
			continue;
		if (op == 0 && carve_qty_sat_add(s->rq[i].used, milli) > s->rq[i].hard)
			fits = false;
		else if (op > 0)
			s->rq[i].used = carve_qty_sat_add(s->rq[i].used, milli);
		else if (op < 0)
			s->rq[i].used -= milli;
	}
	return fits;
}

/* Whether every pod of jb together stays within its namespace's quota. */
static bool rq_job_fits(const struct carve_sim *s, const struct sjob *jb)
{
	size_t i, p, k;

	for (i = 0; i < s->nrq; i++) {
		int64_t sum = 0;

		if (strcmp(s->rq[i].ns, jb->j->ns))
			continue;
		for (p = 0; p < jb->j->npodsets; p++) {
			const struct carve_job_podset *ps = &jb->j->podsets[p];
			int64_t one = 0;

			for (k = 0; k < ps->nreqs; k++)
				if (!strcmp(ps->reqs[k].name, s->rq[i].res))
					one = carve_qty_sat_add(one, ps->reqs[k].milli);
			if ((ps->gpu_milli || ps->gpu_mem_mib) &&
			    !strcmp(s->rq[i].res, "nvidia.com/gpu"))
				one = carve_qty_sat_add(one, 1000);
			for (k = 0; k < (size_t)ps->count; k++)
				sum = carve_qty_sat_add(sum, one);
		}
		if (sum > s->rq[i].hard)
			return false;
	}
	return true;
}

/* ---- building -------------------------------------------------------------------- */

int sim_base_init(struct carve_sim *s, struct carve_error *err)
{
	size_t i, nn = carve_cluster_node_count(s->c);
	int rc;

	s->bc = carve_cluster_create();
	if (!s->bc)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	for (i = 0; i < nn; i++) {
		rc = copy_node(s, carve_cluster_node(s->c, (uint32_t)i), err);
		if (rc)
			return rc == CARVE_ENOMEM ? carve_errorf(err, rc, "out of memory") : rc;
	}
	s->bp = carve_placer_create(s->bc, "spread", s->seed, err);
	s->bprobe = carve_placer_create(s->bc, "binpack", 1, err);
	if (!s->bp || !s->bprobe)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	for (i = 0; i < s->njobs; i++) {
		s->jobs[i].kwl = -1;
		s->jobs[i].keep_sharing = s->o.sched != CARVE_SIM_EXCLUSIVE;
	}
	if (is_kueue(s)) {
		struct carve_admission_opts ao;
		struct carve_diags d;

		/* The same ClusterQueues, Cohorts and flavors without nodes:
		 * the engine admits by quota alone.  What the build says about
		 * the queues was said by the first build already. */
		carve_diags_init(&d);
		memset(&ao, 0, sizeof(ao));
		ao.queues_only = true;
		ao.no_workloads = true;
		ao.diags = &d;
		s->kad = carve_admission_build_opts(s->m, &ao);
		carve_diags_cleanup(&d);
		if (!s->kad)
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
		if (!s->kad->finalized)
			return carve_errorf(err, CARVE_EINVAL, "the quota tree cannot be built");
		/* waitForPodsReady.timeout: Kueue's default unless the user
		 * gave --gang-timeout */
		s->pods_ready_timeout = s->gang_timeout_given ? s->o.gang_timeout
							      : KUEUE_PODS_READY_TIMEOUT;
		return 0;
	}
	rc = build_rq(s);
	return rc ? carve_errorf(err, rc, "out of memory") : 0;
}

void sim_base_free(struct carve_sim *s)
{
	carve_placer_destroy(s->bp);
	carve_placer_destroy(s->bprobe);
	carve_cluster_destroy(s->bc);
	carve_free(s->rq);
	carve_admission_destroy(s->kad);
}

/* ---- requests ---------------------------------------------------------------------- */

void sim_base_pod_req(const struct sjob *jb, size_t p, struct carve_pod_req *r,
		      struct carve_label *sel, char *key, size_t keylen)
{
	const struct carve_podset_spec *ps = &jb->spec.podsets[p];

	sim_pod_req(jb, p, r);
	if (r->gpu == CARVE_GREQ_NONE)
		return;
	if (jb->keep_sharing) {
		/* MIG, time-slice and nvidia.com/gpu requests as they are; a
		 * fraction asks nvidia.com/gpu: 1 */
		if (r->gpu == CARVE_GREQ_FRACTION) {
			r->gpu = CARVE_GREQ_GPU;
			r->count = 1;
			r->milli = 0;
			r->mem_mib = 0;
		}
		return;
	}
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

/* kueue: how many nodeLabels the ResourceFlavors assigned to podSet p of
 * jb at its admission add to its pods' nodeSelector (0 before one). */
static size_t kueue_nlabels(const struct carve_sim *s, const struct sjob *jb, size_t p)
{
	size_t n = 0, f;

	if (!is_kueue(s) || !jb->kflv)
		return 0;
	for (f = 0; f < SIM_KFLV && jb->kflv[p * SIM_KFLV + f]; f++)
		n += jb->kflv[p * SIM_KFLV + f]->node_labels.n;
	return n;
}

/* The request of one pod of podSet p of jb as this model places it, with
 * the queue's tolerations; kueue, once admitted: with the nodeLabels of
 * the flavors Kueue assigned added to its nodeSelector (Kueue injects
 * them when it unsuspends the Job: kueue.sigs.k8s.io/docs/concepts/
 * cluster_queue/, "ResourceFlavor"); node, when not NULL, pins it to that
 * node of the copy.  sel has room for nselector + 2 + kueue_nlabels()
 * labels. */
static void pod_req(const struct carve_sim *s, const struct sjob *jb, size_t p,
		    struct carve_pod_req *r, struct carve_label *sel, char *key, size_t keylen,
		    const char *node)
{
	size_t n, f, k;

	sim_base_pod_req(jb, p, r, sel, key, keylen);
	r->ntolerations = s->qtol_off[jb->q + 1] - s->qtol_off[jb->q];
	r->tolerations = s->qtol + s->qtol_off[jb->q];
	if (!node && !kueue_nlabels(s, jb, p))
		return;
	n = r->nselector;
	if (r->selector != sel && n)
		memcpy(sel, r->selector, n * sizeof(*sel));
	r->selector = sel;
	for (f = 0; kueue_nlabels(s, jb, p) && f < SIM_KFLV && jb->kflv[p * SIM_KFLV + f]; f++) {
		const struct carve_kvlist *nl = &jb->kflv[p * SIM_KFLV + f]->node_labels;

		for (k = 0; k < nl->n; k++) {
			sel[n].key = nl->v[k].key;
			sel[n++].value = nl->v[k].value;
		}
	}
	r->nselector = n;
	if (!node)
		return;
	sel[n].key = NODE_LABEL;
	sel[n].value = node;
	r->selector = sel;
	r->nselector = n + 1;
}

/* Podset of pod i of jb. */
static size_t pod_podset(const struct sjob *jb, int i)
{
	size_t p;

	for (p = 0; p < jb->j->npodsets; p++) {
		if (i < jb->j->podsets[p].count)
			return p;
		i -= jb->j->podsets[p].count;
	}
	return 0;
}

/* ---- events -------------------------------------------------------------------------- */

/*
 * Whether jb can ever run in this model: its pods within its namespace's
 * ResourceQuota (exclusive, device-plugin; Kueue's own engine judges the
 * kueue model's quota), and all its pods placed at once on the empty copy
 * (a scratch placer, given back).  -1 on allocation failure.
 */
static int can_ever_run(struct carve_sim *s, const struct sjob *jb)
{
	size_t np = jb->j->npodsets, p, nsel = 0, off = 0;
	struct carve_pod_group *g = carve_calloc(np, sizeof(*g));
	struct carve_pod_req *r = carve_calloc(np, sizeof(*r));
	struct carve_pod_place *pl = carve_calloc((size_t)jb->npods + 1, sizeof(*pl));
	char (*keys)[128] = carve_calloc(np, sizeof(*keys));
	struct carve_label *sel;
	int ok = -1, rc;

	for (p = 0; p < np; p++)
		nsel += jb->j->podsets[p].nselector + 2;
	sel = carve_calloc(nsel + 1, sizeof(*sel));
	if (!g || !r || !pl || !keys || !sel)
		goto out;
	if (!rq_job_fits(s, jb)) {
		ok = 0;
		goto out;
	}
	for (p = 0; p < np; p++) {
		pod_req(s, jb, p, &r[p], sel + off, keys[p], sizeof(keys[p]), NULL);
		off += jb->j->podsets[p].nselector + 2;
		g[p].req = &r[p];
		g[p].count = jb->j->podsets[p].count;
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

static int add_waiting(struct carve_sim *s, uint32_t job)
{
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

/* kueue: adds jb to the quota-only engine as a workload created at
 * created (its first time under the bridge's key, then under key#n). */
static int kueue_add(struct carve_sim *s, uint32_t job, int64_t created)
{
	struct sjob *jb = &s->jobs[job];
	struct carve_wl_spec spec = jb->spec;
	struct carve_error err;
	int id;

	if (jb->nrequeue) {
		size_t len = strlen(jb->spec.key) + 24;

		carve_free(jb->kkey);
		jb->kkey = carve_malloc(len);
		if (!jb->kkey)
			return CARVE_ENOMEM;
		snprintf(jb->kkey, len, "%s#%d", jb->spec.key, jb->nrequeue);
		spec.key = jb->kkey;
		spec.created = created;
		spec.has_created = true;
	}
	id = carve_adm_add_workload(s->kad->adm, &spec, &err);
	if (id == CARVE_ENOMEM)
		return id;
	if (id < 0) {
		/* refused by Kueue (no such ClusterQueue for it): never runs */
		jb->never_fits = true;
		s->never_fit++;
		return 1;
	}
	jb->kwl = id;
	return 0;
}

int sim_base_arrive(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];
	int ever = can_ever_run(s, jb), rc;

	if (ever < 0)
		return CARVE_ENOMEM;
	if (!ever) {
		jb->never_fits = true;
		s->never_fit++;
		return 0; /* pending for good, never retried */
	}
	jb->pl = carve_calloc((size_t)jb->npods + 1, sizeof(*jb->pl));
	jb->placed = carve_calloc((size_t)jb->npods + 1, sizeof(*jb->placed));
	jb->created = carve_calloc((size_t)jb->npods + 1, sizeof(*jb->created));
	if (!jb->pl || !jb->placed || !jb->created)
		return CARVE_ENOMEM;
	if (is_kueue(s)) {
		rc = kueue_add(s, job, jb->j->arrival);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	return add_waiting(s, job);
}

/* Deletes every pod of jb, placed or only created: devices back to the
 * placer, its ResourceQuota charge back. */
static void release_all(struct carve_sim *s, struct sjob *jb)
{
	int i;

	for (i = 0; i < jb->npods; i++) {
		if (jb->placed[i]) {
			carve_placer_release(s->bp, &jb->pl[i], 1);
			jb->placed[i] = false;
		}
		if (jb->created[i]) {
			rq_pod(s, jb, &jb->j->podsets[pod_podset(jb, i)], -1);
			jb->created[i] = false;
		}
	}
	jb->nplaced = 0;
	jb->partial_since = -1;
	sim_unhold(s, jb);
}

/* jb lost its pods to a preemption (kube-scheduler's or Kueue's): the
 * attempt is lost; a running job restarts later, keeping its progress only
 * with checkpointing.  A job that was running goes back to the waiting
 * list. */
static int preempted(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];
	bool was_running = jb->st == SJ_RUNNING;

	if (was_running)
		sim_keep_progress(s, jb);
	release_all(s, jb);
	jb->st = SJ_PENDING;
	jb->gen++;
	sim_job_failed(s, jb);
	jb->enq = s->now;
	s->preemptions++;
	s->queues[jb->q].preemptions++;
	return was_running ? add_waiting(s, job) : 0;
}

/* kueue: jb's workload leaves the quota-only engine (finished or evicted):
 * its quota is released. */
static void kueue_release(struct carve_sim *s, struct sjob *jb)
{
	if (jb->kwl < 0)
		return;
	carve_adm_finish(s->kad->adm, (uint32_t)jb->kwl);
	jb->kwl = -1;
	jb->kadmitted = false;
}

int sim_base_complete(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];

	release_all(s, jb);
	if (is_kueue(s))
		kueue_release(s, jb);
	return 0;
}

/*
 * kueue: whether anything can still free or take devices: a completion,
 * an arrival or another waitForPodsReady timeout still to come.  Without
 * one, an evicted workload would be requeued and evicted again for ever
 * (a job holding devices that never ends): it stays pending instead.
 */
static bool can_change(const struct carve_sim *s)
{
	size_t i;

	for (i = 0; i < s->nheap; i++) {
		const struct event *e = &s->heap[i];

		if (e->gen == s->jobs[e->job].gen && e->kind != EV_REQUEUE)
			return true;
	}
	return false;
}

int sim_base_timeout(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];

	if (jb->st != SJ_PENDING)
		return 0;
	if (is_kueue(s)) {
		/* waitForPodsReady: not every pod runs within the timeout of
		 * the admission: evicted (quota and pods released), requeued
		 * after the backoff */
		if (!jb->kadmitted || jb->kwl < 0)
			return 0;
		release_all(s, jb);
		kueue_release(s, jb);
		jb->nrequeue++;
		sim_job_failed(s, jb);
		jb->enq = s->now;
		jb->gen++;
		s->gang_timeouts++;
		if (!can_change(s))
			return 0;
		return sim_push(s, sim_time_add(s->now, sim_kueue_backoff(jb->nrequeue)),
				EV_REQUEUE, job);
	}
	if (!jb->nplaced)
		return 0;
	release_all(s, jb);
	sim_job_failed(s, jb);
	jb->enq = s->now;
	jb->gen++;
	s->gang_timeouts++;
	return 0;
}

int sim_base_requeue(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];
	int rc;

	if (!is_kueue(s) || jb->st != SJ_PENDING || jb->kwl >= 0)
		return 0;
	/* Kueue's requeuing timestamp (Eviction, the default) orders it by
	 * the time it was evicted */
	rc = kueue_add(s, job, jb->enq);
	return rc < 0 ? rc : 0;
}

/* Queue order of a waiting job: priority (higher first), then arrival or
 * last retry (kueue: admission), then trace order. */
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

/* ---- PriorityClass preemption (exclusive, device-plugin) --------------------------- */

/* A placed pod that could make room: its job, its index, its priority. */
struct victim {
	uint32_t job;
	int pod;
	int32_t prio;
	bool spared;
};

/* More important first: higher priority, then the earlier job. */
static int cmp_victim(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return (x->pod > y->pod) - (x->pod < y->pod);
}

static int retake(struct carve_sim *s, const struct victim *v)
{
	return carve_placer_retake(s->bp, &s->jobs[v->job].pl[v->pod], 1) ? CARVE_EINVAL : 0;
}

static void give(struct carve_sim *s, const struct victim *v)
{
	carve_placer_release(s->bp, &s->jobs[v->job].pl[v->pod], 1);
}

/*
 * Pod `pod` (podSet p) of job fits no node as things are: kube-scheduler's
 * DefaultPreemption (kubernetes.io/docs/concepts/scheduling-eviction/
 * pod-priority-preemption/).  On each node, the placed pods of
 * lower-priority jobs are taken away; when the pod then fits, the most
 * important of them are given back one by one as long as it still fits
 * (the reprieve), and the rest are that node's victims.  The node chosen
 * is the one whose victims' highest priority is lowest, then whose sum of
 * priorities is lowest, then with the fewest victims, then the first.
 * The victims' jobs lose their attempts (preempted()) and the pod takes
 * the node (jb->pl[pod]).  *placed says whether it did.  0, CARVE_ENOMEM,
 * CARVE_EINVAL (the placer refused to take back what it gave).
 */
static int try_preempt(struct carve_sim *s, uint32_t job, size_t p, int pod, bool *placed)
{
	struct sjob *jb = &s->jobs[job];
	int32_t prio = jb->j->priority;
	size_t nall = 0, cap = 0, nn = carve_cluster_node_count(s->bc), i, k, node;
	struct victim *all = NULL, *cand = NULL, *best = NULL;
	size_t nbest = 0;
	long best_node = -1;
	int32_t best_max = 0;
	int64_t best_sum = 0;
	struct carve_label *sel;
	char key[128];
	struct carve_pod_req r;
	struct carve_pod_group g;
	struct carve_pod_place tmp;
	int rc = 0;

	*placed = false;
	for (i = 0; i < s->njobs; i++) {
		const struct sjob *o = &s->jobs[i];
		int d;

		if (i == job || !o->nplaced || o->j->priority >= prio)
			continue;
		for (d = 0; d < o->npods; d++) {
			if (!o->placed[d])
				continue;
			if (nall == cap) {
				size_t c = cap ? cap * 2 : 32;
				void *v = carve_realloc(all, c * sizeof(*all));

				if (!v) {
					carve_free(all);
					return CARVE_ENOMEM;
				}
				all = v;
				cap = c;
			}
			all[nall++] = (struct victim){(uint32_t)i, d, o->j->priority, false};
		}
	}
	if (!nall)
		return 0;
	sel = carve_calloc(jb->j->podsets[p].nselector + 3, sizeof(*sel));
	cand = carve_calloc(nall, sizeof(*cand));
	best = carve_calloc(nall, sizeof(*best));
	if (!sel || !cand || !best) {
		rc = CARVE_ENOMEM;
		goto out;
	}
	g.req = &r;
	g.count = 1;
	for (node = 0; node < nn && !rc; node++) {
		const struct carve_node *n = carve_cluster_node(s->bc, (uint32_t)node);
		size_t nc = 0, nv = 0;
		int32_t vmax = INT32_MIN;
		int64_t vsum = 0;

		for (k = 0; k < nall; k++)
			if (s->jobs[all[k].job].pl[all[k].pod].node == node)
				cand[nc++] = all[k];
		if (!nc)
			continue;
		pod_req(s, jb, p, &r, sel, key, sizeof(key), n->name);
		for (k = 0; k < nc; k++)
			give(s, &cand[k]);
		rc = carve_placer_place(s->bp, &g, 1, NULL, &tmp);
		if (rc == CARVE_ENOMEM)
			break;
		if (rc) {
			rc = 0;
			for (k = 0; k < nc && !rc; k++)
				rc = retake(s, &cand[k]);
			continue;
		}
		carve_placer_release(s->bp, &tmp, 1);
		qsort(cand, nc, sizeof(*cand), cmp_victim);
		for (k = 0; k < nc && !rc; k++) {
			rc = retake(s, &cand[k]);
			if (rc)
				break;
			rc = carve_placer_place(s->bp, &g, 1, NULL, &tmp);
			if (rc == CARVE_ENOMEM)
				break;
			if (!rc) {
				carve_placer_release(s->bp, &tmp, 1);
				cand[k].spared = true;
			} else {
				rc = 0;
				give(s, &cand[k]);
				cand[k].spared = false;
				nv++;
				vsum += cand[k].prio;
				if (cand[k].prio > vmax)
					vmax = cand[k].prio;
			}
		}
		for (k = 0; k < nc && !rc; k++)
			if (!cand[k].spared)
				rc = retake(s, &cand[k]);
		if (rc || !nv)
			continue;
		if (best_node < 0 || vmax < best_max || (vmax == best_max && vsum < best_sum) ||
		    (vmax == best_max && vsum == best_sum && nv < nbest)) {
			best_node = (long)node;
			best_max = vmax;
			best_sum = vsum;
			nbest = 0;
			for (k = 0; k < nc; k++)
				if (!cand[k].spared)
					best[nbest++] = cand[k];
		}
	}
	if (rc || best_node < 0)
		goto out;
	for (k = 0; k < nbest && !rc; k++) {
		struct sjob *v = &s->jobs[best[k].job];

		if (v->nplaced && v->placed[best[k].pod])
			rc = preempted(s, best[k].job);
	}
	if (rc)
		goto out;
	pod_req(s, jb, p, &r, sel, key, sizeof(key),
		carve_cluster_node(s->bc, (uint32_t)best_node)->name);
	rc = carve_placer_place(s->bp, &g, 1, NULL, &jb->pl[pod]);
	if (rc == CARVE_ENOMEM)
		goto out;
	*placed = rc == 0;
	rc = 0;
out:
	carve_free(all);
	carve_free(cand);
	carve_free(best);
	carve_free(sel);
	return rc;
}

/* ---- placement ------------------------------------------------------------------------ */

/* Holds what pod i of jb just got (its devices' GPU-equivalents on the
 * copy) and notes the job's first GPU. */
static int hold_pod(struct carve_sim *s, struct sjob *jb, int i)
{
	double ge = 0;
	int d;

	for (d = 0; d < jb->pl[i].ndevs; d++)
		ge += sim_dev_ge(s, s->bp, &jb->pl[i].devs[d]);
	jb->placed[i] = true;
	jb->nplaced++;
	if (sim_hold(s, jb, jb->pl[i].node, ge, 0))
		return CARVE_ENOMEM;
	if (jb->pl[i].ndevs && !jb->has_first_gpu) {
		jb->first_gpu = s->now;
		jb->has_first_gpu = true;
	}
	return 0;
}

/* Pods of podSet p jb runs with: kueue, once admitted, the count Kueue
 * admitted (partial admission: down to the podSet's minCount); else all. */
static int podset_want(const struct sjob *jb, size_t p)
{
	int c = jb->j->podsets[p].count;

	return jb->kcount && jb->kcount[p] < c ? jb->kcount[p] : c;
}

/* Pods jb runs with (podset_want summed). */
static int job_want(const struct sjob *jb)
{
	size_t p;
	int n = 0;

	for (p = 0; p < jb->j->npodsets; p++)
		n += podset_want(jb, p);
	return n;
}

/*
 * The Job controller creates what it can of jb's pods (the ResourceQuota
 * refuses a pod beyond it: that one and the rest wait for the next pass),
 * then the scheduler places the created pods one by one; a pod that fits
 * nowhere may preempt (exclusive, device-plugin), else its podSet's later
 * pods are not tried in this pass (they fit no better).
 */
static int place_pods(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];
	size_t p;
	int off = 0, i, rc;

	for (p = 0, i = 0; p < jb->j->npodsets; p++) {
		const struct carve_job_podset *ps = &jb->j->podsets[p];
		bool stop = false;

		for (i = off; i < off + podset_want(jb, p) && !stop; i++) {
			if (jb->created[i])
				continue;
			if (!rq_pod(s, jb, ps, 0))
				stop = true;
			else {
				rq_pod(s, jb, ps, 1);
				jb->created[i] = true;
			}
		}
		off += ps->count;
	}
	for (p = 0, off = 0; p < jb->j->npodsets; p++) {
		const struct carve_job_podset *ps = &jb->j->podsets[p];
		struct carve_label *sel = carve_calloc(ps->nselector + 3 + kueue_nlabels(s, jb, p),
						       sizeof(*sel));
		struct carve_pod_req r;
		struct carve_pod_group g;
		char key[128];

		if (!sel)
			return CARVE_ENOMEM;
		pod_req(s, jb, p, &r, sel, key, sizeof(key), NULL);
		g.req = &r;
		g.count = 1;
		for (i = off; i < off + podset_want(jb, p); i++) {
			bool got = false;

			if (jb->placed[i])
				continue;
			if (!jb->created[i])
				break;
			rc = carve_placer_place(s->bp, &g, 1, NULL, &jb->pl[i]);
			if (rc == CARVE_ENOMEM) {
				carve_free(sel);
				return rc;
			}
			got = rc == 0;
			if (!got && !is_kueue(s)) {
				rc = try_preempt(s, job, p, i, &got);
				if (rc) {
					carve_free(sel);
					return rc;
				}
			}
			if (!got)
				break;
			if (hold_pod(s, jb, i)) {
				carve_free(sel);
				return CARVE_ENOMEM;
			}
		}
		carve_free(sel);
		off += ps->count;
	}
	return 0;
}

/* GPU work one pod of ps does on the whole GPUs of place pl (exclusive),
 * in GE: what its request would use of those GPUs as they are in the real
 * cluster (a MIG instance's compute share, one time-slice replica, a
 * fraction). */
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

/* All pods placed (kueue: all admitted pods): the job runs (from the
 * start, or from where it was preempted when it checkpoints).  Admitted
 * with fewer pods than asked (kueue, partial admission), it runs longer in
 * proportion, as carve mode does (sim_scaled_run: work conserved), and
 * counts in jobs.partial. */
static int start(struct carve_sim *s, uint32_t job)
{
	struct sjob *jb = &s->jobs[job];
	size_t p;
	int off = 0, i, d, want = job_want(jb);

	for (p = 0; p < jb->j->npodsets; p++) {
		const struct carve_job_podset *ps = &jb->j->podsets[p];

		for (i = off; i < off + ps->count; i++) {
			double ge = 0;

			if (!jb->placed[i])
				continue; /* not admitted (partial admission) */

			if (jb->keep_sharing)
				for (d = 0; d < jb->pl[i].ndevs; d++)
					ge += sim_dev_ge(s, s->bp, &jb->pl[i].devs[d]);
			else
				ge = pod_work_ge(s, ps, &jb->pl[i]);
			ge *= jb->j->demand;
			if (ge > 0 && sim_hold(s, jb, jb->pl[i].node, 0, ge))
				return CARVE_ENOMEM;
		}
		off += ps->count;
	}
	jb->st = SJ_RUNNING;
	jb->start = s->now;
	sim_job_running(s, jb, s->now); /* the window's waits and attempts */
	if (!jb->started_once || !jb->j->checkpoint)
		jb->remaining = jb->j->duration;
	jb->started_once = true;
	jb->partial_since = -1;
	jb->adm_pods = want < jb->npods ? want : 0;
	if (jb->adm_pods && !jb->partial) {
		jb->partial = true;
		s->partial++;
	}
	if (jb->npods > 1)
		jb->attempted = true;
	jb->gen++;
	return sim_push(s, sim_time_add(s->now, sim_scaled_run(jb->remaining, jb->npods, want)),
			EV_COMPLETE, job);
}

/* ---- kueue: the quota-only engine ------------------------------------------------ */

/* Kueue admitted jb: the Job is unsuspended, its pods created (no
 * ResourceQuota: Kueue is the quota), the waitForPodsReady clock starts. */
static int kueue_admitted(struct carve_sim *s, uint32_t job, const struct carve_wl_status *st)
{
	struct sjob *jb = &s->jobs[job];
	size_t np = jb->j->npodsets, p, k, f;

	if (!jb->kcount) {
		jb->kcount = carve_calloc(np + 1, sizeof(*jb->kcount));
		jb->kflv = carve_calloc(np * SIM_KFLV + 1, sizeof(*jb->kflv));
		if (!jb->kcount || !jb->kflv)
			return CARVE_ENOMEM;
	}
	/* the admitted count and the assigned flavors of each podSet (the
	 * engine's podSets are the job's, in order) */
	for (p = 0; p < np; p++) {
		const struct carve_ps_result *pr = p < st->npodsets ? &st->podsets[p] : NULL;

		jb->kcount[p] = pr ? pr->count : jb->j->podsets[p].count;
		memset(&jb->kflv[p * SIM_KFLV], 0, SIM_KFLV * sizeof(*jb->kflv));
		for (k = 0, f = 0; pr && k < pr->n; k++) {
			const struct carve_mf_flavor *fl = carve_mf_find_flavor(s->m, pr->flavors[k]);
			size_t e;

			for (e = 0; e < f && jb->kflv[p * SIM_KFLV + e] != fl; e++)
				;
			if (fl && e == f && f < SIM_KFLV)
				jb->kflv[p * SIM_KFLV + f++] = fl;
		}
	}
	jb->kadmitted = true;
	jb->kcycle = st->cycle;
	jb->enq = s->now;
	return sim_push(s, sim_time_add(s->now, s->pods_ready_timeout), EV_TIMEOUT, job);
}

/* Reads back the engine's decisions: admissions and preemptions. */
static int kueue_scan(struct carve_sim *s)
{
	size_t i;
	int rc;

	for (i = 0; i < s->njobs; i++) {
		struct sjob *jb = &s->jobs[i];
		const struct carve_wl_status *st;

		if (jb->kwl < 0 || jb->st == SJ_DONE)
			continue;
		st = carve_adm_status(s->kad->adm, (uint32_t)jb->kwl);
		if (!st)
			continue;
		if (jb->kadmitted) {
			bool again = st->state == CARVE_WL_ADMITTED && st->evicted &&
				     st->cycle != jb->kcycle;

			if (st->state != CARVE_WL_PENDING && !again)
				continue;
			/* preempted by Kueue: pods deleted, quota released */
			jb->kadmitted = false;
			rc = preempted(s, (uint32_t)i);
			if (!rc && again)
				rc = kueue_admitted(s, (uint32_t)i, st);
			if (rc)
				return rc;
		} else if (st->state == CARVE_WL_ADMITTED) {
			rc = kueue_admitted(s, (uint32_t)i, st);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* waitForPodsReady.blockAdmission: whether a workload Kueue admitted
 * has not yet got every (admitted) pod running. */
static bool kueue_blocked(const struct carve_sim *s)
{
	size_t i;

	for (i = 0; i < s->njobs; i++)
		if (s->jobs[i].kadmitted && s->jobs[i].st == SJ_PENDING)
			return true;
	return false;
}

/*
 * Engine cycles until stable, evicting marked workloads between them (as
 * carve mode runs its engine), under waitForPodsReady.blockAdmission
 * (Kueue's default when waitForPodsReady is on): no cycle runs while an
 * admitted workload has not got all its pods running, so the quota
 * engine admits again only once they all run, or the workload is
 * evicted at its timeout.  One cycle may still admit the heads of
 * several ClusterQueues at once (Kueue would admit them one after the
 * other, each once the one before is ready).
 */
static int kueue_schedule(struct carve_sim *s)
{
	int round, rc, ev;

	for (round = 0; round < 1000; round++) {
		if (kueue_blocked(s))
			break;
		rc = carve_adm_cycle(s->kad->adm, s->now);
		if (rc < 0)
			return rc;
		ev = kueue_scan(s);
		if (ev)
			return ev;
		ev = carve_adm_evict_marked(s->kad->adm);
		if (!rc && !ev) {
			/* no decision: settle what the cycle set aside */
			if (kueue_blocked(s))
				break;
			rc = carve_adm_run(s->kad->adm, s->now, 1000);
			if (rc < 0)
				return rc;
			break;
		}
	}
	return kueue_scan(s);
}

/* One pass; *again: kueue, the pass started the last admitted workload
 * that blocked admission, so the quota engine may admit more now. */
static int base_pass(struct carve_sim *s, bool *again)
{
	size_t i, n = 0;
	bool blocked = false;
	int rc;

	*again = false;
	if (is_kueue(s)) {
		rc = kueue_schedule(s);
		if (rc)
			return rc;
		blocked = kueue_blocked(s);
	}
	rc = sort_waiting(s);
	if (rc)
		return rc;
	/* preemption may append victims that were running: they are placed
	 * again in this pass, after the others */
	for (i = 0; i < s->nwaiting; i++) {
		uint32_t job = s->waiting[i];
		struct sjob *jb = &s->jobs[job];

		if (jb->st != SJ_PENDING)
			continue; /* started earlier in this pass (listed twice) */
		if (is_kueue(s) && !jb->kadmitted) {
			s->waiting[n++] = job;
			continue;
		}
		rc = place_pods(s, job);
		if (rc)
			return rc;
		if (jb->nplaced == job_want(jb)) {
			rc = start(s, job);
			if (rc)
				return rc;
			continue;
		}
		s->waiting[n++] = job;
		if (!is_kueue(s) && jb->nplaced && jb->partial_since < 0) {
			jb->partial_since = s->now;
			rc = sim_push(s, sim_time_add(s->now, s->o.gang_timeout), EV_TIMEOUT, job);
			if (rc)
				return rc;
		}
	}
	s->nwaiting = n;
	*again = blocked && !kueue_blocked(s);
	return 0;
}

int sim_base_pass(struct carve_sim *s)
{
	bool again = true;
	int round, rc = 0;

	for (round = 0; round < 1000 && again && !rc; round++)
		rc = base_pass(s, &again);
	return rc;
}
