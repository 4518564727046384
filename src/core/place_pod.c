/*
 * place_pod.c - one pod: the default GPU choice per request kind (whole,
 * MIG, time-slice replicas, fraction; docs/internals/PLACEMENT.md), room
 * for cpu, memory and pods, nvidia.com/gpu resolved per node, a node's
 * candidate and score, and the choice of the best node, by a scan of the
 * candidates or from the decision cache (place_cache.c), both by the same
 * rule: highest score, then lowest p->rank.
 *
 * Invariant: choosing changes nothing; a candidate (struct carve__cand) is
 * a plan that only carve__apply() (place_state.c) carries out.  This is the
 * hot path of placement: the choosers, room_ok() and eval_on() stay in this
 * one file, and the small helpers they share with other files are static
 * inline in place_int.h.  Allocates nothing.
 */
#include <math.h>

#include "place_int.h"

/* ---- the default GPU choice ----------------------------------------------------- */

/* WHOLE: lowest-index free exclusive GPUs or fully free fractional GPUs. */
static int choose_whole(struct carve_placer *p, const struct carve_node *n,
			const struct carve_pod_req *req, struct carve__cand *c)
{
	uint32_t g;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus && c->ndevs < req->count; g++) {
		const struct carve__gpu_state *s = &p->gpus[g];

		if (!carve__gpu_usable(p, g, req) || carve__gpu_busy(s))
			continue;
		carve__add_dev(c, g, -1, -1,
			       carve__share(p, g) == CARVE_SHARE_FRACTION ? 1000 : 0);
	}
	return c->ndevs == req->count ? 0 : CARVE_ENOFIT;
}

/* MIG: free instances of the profile, GPUs by index, instances in layout order;
 * with Dynamic MIG, then idle GPUs repartitioned (carve__choose_mig_dynamic). */
static int choose_mig(struct carve_placer *p, const struct carve_node *n,
		      const struct carve_pod_req *req, struct carve__cand *c)
{
	uint32_t g;
	unsigned i;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus && c->ndevs < req->count; g++) {
		const struct carve_gpu *v = carve__gpu(p, g);
		int prof;

		if (!carve__gpu_usable(p, g, req))
			continue;
		prof = carve_mig_profile_find(v->mig_model, req->mig_profile);
		if (prof < 0)
			continue;
		for (i = 0; i < p->mig[g].n && c->ndevs < req->count; i++)
			if (p->mig[g].inst[i].profile == prof && !(p->gpus[g].mig_taken & (1u << i)))
				carve__add_dev(c, g, (int)i, -1, 0);
	}
	if (c->ndevs < req->count && p->mig_dynamic)
		carve__choose_mig_dynamic(p, n, req, c);
	return c->ndevs == req->count ? 0 : CARVE_ENOFIT;
}

/* Takes k free replica numbers of g, lowest first. */
static void take_replicas(struct carve_placer *p, uint32_t g, int k, struct carve__cand *c)
{
	unsigned r;

	for (r = 0; r < p->ginfo[g].rcap && k > 0; r++)
		if (!carve__rbit(p, g, r)) {
			carve__add_dev(c, g, -1, (int)r, 0);
			k--;
		}
}

/*
 * REPLICA: fewest GPUs first.  When one GPU can hold every replica, the one
 * with most replicas already taken (packing; lowest index on ties);
 * otherwise the GPUs with most free replicas first (lowest index on ties),
 * which uses the fewest GPUs.
 */
static int choose_replica(struct carve_placer *p, const struct carve_node *n,
			  const struct carve_pod_req *req, struct carve__cand *c)
{
	uint32_t g, *ord = p->gorder, m = 0, i, j, best = UINT32_MAX;
	int need = req->count, total = 0;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++) {
		const struct carve__gpu_state *s = &p->gpus[g];
		int f;

		if (!carve__gpu_usable(p, g, req))
			continue;
		f = p->ginfo[g].rcap - s->rtaken;
		if (f <= 0)
			continue;
		total += f;
		ord[m++] = g;
		if (f >= need && (best == UINT32_MAX || s->rtaken > p->gpus[best].rtaken))
			best = g;
	}
	if (total < need)
		return CARVE_ENOFIT;
	if (best != UINT32_MAX) {
		take_replicas(p, best, need, c);
		return 0;
	}
	/* Insertion sort by free replicas descending, index ascending (stable). */
	for (i = 1; i < m; i++) {
		uint32_t x = ord[i];
		int fx = p->ginfo[x].rcap - p->gpus[x].rtaken;

		for (j = i; j > 0 && p->ginfo[ord[j - 1]].rcap - p->gpus[ord[j - 1]].rtaken < fx; j--)
			ord[j] = ord[j - 1];
		ord[j] = x;
	}
	for (i = 0; i < m && need > 0; i++) {
		int f = p->ginfo[ord[i]].rcap - p->gpus[ord[i]].rtaken;
		int k = f < need ? f : need;

		take_replicas(p, ord[i], k, c);
		need -= k;
	}
	return 0;
}

bool carve__fraction_fits(const struct carve_placer *p, uint32_t g, const struct carve_pod_req *req)
{
	const struct carve_gpu *v = carve__gpu(p, g);
	const struct carve__gpu_state *s = &p->gpus[g];
	int need = req->milli > 0 ? req->milli : 1;

	if (1000 - s->milli_used < need)
		return false;
	return !req->mem_mib || !v->memory_mib || v->memory_mib - s->mem_used >= req->mem_mib;
}

void carve__take_fraction(const struct carve_placer *p, uint32_t g, const struct carve_pod_req *req,
			  struct carve__cand *c)
{
	carve__add_dev(c, g, -1, -1, req->milli);
	c->mem_mib = carve__gpu(p, g)->memory_mib ? req->mem_mib : 0;
}

/* FRACTION: best fit, the GPU with least free milli (then least free
 * memory) that fits; lowest index on ties. */
static int choose_fraction(struct carve_placer *p, const struct carve_node *n,
			   const struct carve_pod_req *req, struct carve__cand *c)
{
	uint32_t g, best = UINT32_MAX;
	int bm = 0;
	uint32_t bmem = 0;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++) {
		const struct carve_gpu *v;
		int fm;
		uint32_t fmem;

		if (!carve__gpu_usable(p, g, req) || !carve__fraction_fits(p, g, req))
			continue;
		v = carve__gpu(p, g);
		fm = 1000 - p->gpus[g].milli_used;
		fmem = v->memory_mib - p->gpus[g].mem_used;
		if (best == UINT32_MAX || fm < bm || (fm == bm && fmem < bmem)) {
			best = g;
			bm = fm;
			bmem = fmem;
		}
	}
	if (best == UINT32_MAX)
		return CARVE_ENOFIT;
	carve__take_fraction(p, best, req, c);
	return 0;
}

int carve__choose_default(struct carve_placer *p, const struct carve_pod_req *req,
			  struct carve__cand *c)
{
	const struct carve_node *n = carve__node(p, c->node);

	switch (req->gpu) {
	case CARVE_GREQ_NONE:
		return 0;
	case CARVE_GREQ_WHOLE:
		return choose_whole(p, n, req, c);
	case CARVE_GREQ_MIG:
		return choose_mig(p, n, req, c);
	case CARVE_GREQ_REPLICA:
		return choose_replica(p, n, req, c);
	case CARVE_GREQ_FRACTION:
		return choose_fraction(p, n, req, c);
	case CARVE_GREQ_GPU:
		break; /* resolved per node by carve__place_pod() */
	}
	return CARVE_ENOFIT;
}

/* ---- one pod on one node, the best node ----------------------------------------- */

/* cpu, memory and pods: allocatable 0 does not constrain. */
static bool room_ok(const struct carve_placer *p, uint32_t node, const struct carve_pod_req *req)
{
	const struct carve_node *n = carve__node(p, node);
	const struct carve__node_state *s = &p->nodes[node];

	if (n->cpu_milli > 0 && n->cpu_milli - s->cpu_used < req->cpu_milli)
		return false;
	if (n->memory_milli > 0 && n->memory_milli - s->mem_used < req->memory_milli)
		return false;
	if (n->pods > 0 && n->pods - s->pods_used < 1)
		return false;
	return true;
}

/*
 * CARVE_GREQ_GPU on node n as the node advertises nvidia.com/gpu: replicas
 * when it has a time-sliced GPU of an allowed model, whole GPUs otherwise.
 * Other requests are returned as they are.
 */
static const struct carve_pod_req *resolve_gpu(const struct carve_placer *p, uint32_t node,
					       const struct carve_pod_req *req,
					       struct carve_pod_req *tmp)
{
	const struct carve_node *n;
	uint32_t g;

	if (req->gpu != CARVE_GREQ_GPU)
		return req;
	n = carve__node(p, node);
	*tmp = *req;
	tmp->gpu = CARVE_GREQ_WHOLE;
	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++) {
		int m = p->ginfo[g].model;

		if (carve__share(p, g) == CARVE_SHARE_TIMESLICE &&
		    (p->any_model || (m >= 0 && p->model_ok[m]))) {
			tmp->gpu = CARVE_GREQ_REPLICA;
			break;
		}
	}
	return tmp;
}

/* Node n's candidate for greq in *c (the request as resolved for n in *tmp,
 * pointed to by *rq) and its score; NaN when n has no room or GPUs for it.
 * Static feasibility is the caller's. */
static double eval_on(struct carve_placer *p, const struct carve_pod_req *greq, uint32_t n,
		      struct carve__cand *c, struct carve_pod_req *tmp,
		      const struct carve_pod_req **rq)
{
	const struct carve_pod_req *req;

	if (!room_ok(p, n, greq))
		return NAN;
	req = resolve_gpu(p, n, greq, tmp);
	*rq = req;
	/* WHOLE takes GPUs with nothing taken: a node with fewer idle GPUs
	 * fails the choice anyway (before any policy draws or scores). */
	if (req->gpu == CARVE_GREQ_WHOLE &&
	    carve__node(p, n)->ngpus - p->nodes[n].gpus_busy < (uint32_t)req->count)
		return NAN;
	/* Only these are read before they are written (devs up to ndevs,
	 * repart/rlayout up to nrepart). */
	c->node = n;
	c->ndevs = 0;
	c->mem_mib = 0;
	c->aux = 0;
	c->nrepart = 0;
	if (p->pol->choose_gpus ? p->pol->choose_gpus(p, req, c) : carve__choose_default(p, req, c))
		return NAN;
	return p->pol->score(p, req, c);
}

double carve__node_eval(struct carve_placer *p, const struct carve_pod_req *greq, uint32_t node)
{
	struct carve__cand c;
	struct carve_pod_req tmp;
	const struct carve_pod_req *rq;

	if (!carve__static_fit(p, node, greq))
		return NAN;
	return eval_on(p, greq, node, &c, &tmp, &rq);
}

/* One pod (place_int.h); the scan and the cache pick by the same rule. */
int carve__place_pod(struct carve_placer *p, const struct carve_pod_req *greq,
		     const uint32_t *cands, size_t ncands, struct carve__slot *slot,
		     struct carve_pod_place *out)
{
	struct carve__cand c, best;
	struct carve_pod_req tmp, btmp;
	const struct carve_pod_req *req, *breq = greq;
	double s, bs = 0;
	bool have = false;
	size_t i;

	if (slot) {
		uint32_t x = slot->map ? carve__cache_local_best(p, slot)
				       : carve__cache_best(p, slot, greq);
		uint32_t n = slot->map && x != UINT32_MAX ? slot->map[x] : x;

		if (n == UINT32_MAX)
			return CARVE_ENOFIT;
		s = eval_on(p, greq, n, &best, &btmp, &req);
		if (s != s) /* cannot happen: the slot says it fits */
			return CARVE_ENOFIT;
		carve__apply(p, req, &best, out);
		if (slot->map)
			carve__cache_local_changed(p, slot, greq, x);
		return 0;
	}
	for (i = 0; i < ncands; i++) {
		uint32_t n = cands[i];

		if (!p->fit[n])
			continue;
		s = eval_on(p, greq, n, &c, &tmp, &req);
		if (s != s) /* NaN: never chosen */
			continue;
		if (!have || s > bs || (s == bs && p->rank[n] < p->rank[best.node])) {
			best = c;
			bs = s;
			have = true;
			btmp = *req;
			breq = &btmp;
		}
	}
	if (!have)
		return CARVE_ENOFIT;
	carve__apply(p, breq, &best, out);
	return 0;
}
