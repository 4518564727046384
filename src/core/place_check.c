/*
 * place_check.c - carve_placer_check(): verifies every invariant listed in
 * place_int.h against a recount of the state (nothing negative or over
 * allocatable, no state of another sharing mode, MIG bits inside a legal
 * current layout that the repartition log agrees with, replica counts equal
 * to the bits set, busy-GPU and class counters).  Reads only; for tests
 * and debug builds, never on the placement path.
 */
#include <string.h>

#include "place_int.h"

static bool layout_eq(const struct carve_mig_layout *a, const struct carve_mig_layout *b)
{
	return a->n == b->n && !memcmp(a->inst, b->inst, a->n * sizeof(a->inst[0]));
}

static int check_gpu(const struct carve_placer *p, uint32_t g, struct carve_error *err)
{
	const struct carve_gpu *v = carve__gpu(p, g);
	const struct carve__gpu_state *s = &p->gpus[g];
	const struct carve__gpu_info *gi = &p->ginfo[g];
	const char *name = carve__node(p, v->node)->name;
	struct carve_error e;
	unsigned w, words, r;
	int bits = 0;

	if (v->sharing != CARVE_SHARE_EXCLUSIVE && s->taken)
		goto out_mode;
	if (v->sharing != CARVE_SHARE_MIG && s->mig_taken)
		goto out_mode;
	if (v->sharing != CARVE_SHARE_TIMESLICE && s->rtaken)
		goto out_mode;
	if (v->sharing != CARVE_SHARE_FRACTION && (s->milli_used || s->mem_used))
		goto out_mode;
	switch (v->sharing) {
	case CARVE_SHARE_MIG:
		if (!v->mig_model)
			break;
		if (s->mig_taken >> p->mig[g].n)
			return carve_errorf(err, CARVE_EINVAL,
					    "node %s GPU %u: MIG instance taken beyond the layout's %u",
					    name, v->index, p->mig[g].n);
		if (carve_mig_layout_check(v->mig_model, &p->mig[g], &e))
			return carve_errorf(err, CARVE_EINVAL, "node %s GPU %u: %s", name,
					    v->index, e.text);
		if (gi->mig_slices != carve__layout_slices(v->mig_model, &p->mig[g]))
			return carve_errorf(err, CARVE_EINVAL,
					    "node %s GPU %u: MIG slices %u do not match the layout",
					    name, v->index, gi->mig_slices);
		if (p->rpart[g] < 0 ? !layout_eq(&p->mig[g], &v->mig)
				    : ((size_t)p->rpart[g] >= p->nreparts ||
				       p->reparts[p->rpart[g]].gpu != g ||
				       !layout_eq(&p->reparts[p->rpart[g]].to, &p->mig[g]) ||
				       !layout_eq(&p->reparts[p->rpart[g]].from, &v->mig) ||
				       !carve__gpu_busy(s)))
			return carve_errorf(err, CARVE_EINVAL,
					    "node %s GPU %u: MIG layout and repartition log disagree",
					    name, v->index);
		break;
	case CARVE_SHARE_TIMESLICE:
		words = (gi->rcap + 63u) / 64u;
		for (w = 0; w < words; w++)
			bits += carve__popcount64(p->rbits[gi->rbits + w]);
		for (r = gi->rcap; r < words * 64; r++)
			if (carve__rbit(p, g, r))
				return carve_errorf(err, CARVE_EINVAL,
						    "node %s GPU %u: replica %u taken beyond %u",
						    name, v->index, r, gi->rcap);
		if (bits != s->rtaken || s->rtaken > gi->rcap)
			return carve_errorf(err, CARVE_EINVAL,
					    "node %s GPU %u: %u replicas counted, %d marked, %u exist",
					    name, v->index, s->rtaken, bits, gi->rcap);
		break;
	case CARVE_SHARE_FRACTION:
		if (s->milli_used > 1000)
			return carve_errorf(err, CARVE_EINVAL, "node %s GPU %u: %u milli used",
					    name, v->index, s->milli_used);
		if (s->mem_used > v->memory_mib)
			return carve_errorf(err, CARVE_EINVAL,
					    "node %s GPU %u: %u MiB used of %u", name, v->index,
					    s->mem_used, v->memory_mib);
		break;
	case CARVE_SHARE_EXCLUSIVE:
		break;
	}
	return 0;
out_mode:
	return carve_errorf(err, CARVE_EINVAL, "node %s GPU %u: state of another sharing mode than %s",
			    name, v->index, carve_sharing_name(v->sharing));
}

static int check_used(const char *node, const char *what, int64_t used, int64_t cap,
		      struct carve_error *err)
{
	if (used < 0)
		return carve_errorf(err, CARVE_EINVAL, "node %s: %s used is negative (%lld)", node,
				    what, (long long)used);
	if (cap > 0 && used > cap)
		return carve_errorf(err, CARVE_EINVAL, "node %s: %s used %lld exceeds allocatable %lld",
				    node, what, (long long)used, (long long)cap);
	return 0;
}

static int check_node(const struct carve_placer *p, uint32_t node, struct carve_error *err)
{
	const struct carve_node *n = carve__node(p, node);
	const struct carve__node_state *s = &p->nodes[node];
	uint32_t g, busy = 0, sum = 0;
	int rc, k;

	if ((rc = check_used(n->name, "cpu", s->cpu_used, n->cpu_milli, err)) ||
	    (rc = check_used(n->name, "memory", s->mem_used, n->memory_milli, err)) ||
	    (rc = check_used(n->name, "pods", s->pods_used, n->pods, err)))
		return rc;
	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++) {
		if ((rc = check_gpu(p, g, err)))
			return rc;
		busy += carve__gpu_busy(&p->gpus[g]);
	}
	if (busy != s->gpus_busy)
		return carve_errorf(err, CARVE_EINVAL, "node %s: %u busy GPUs counted, %u found",
				    n->name, s->gpus_busy, busy);
	for (k = 0; k < CARVE__NCLASS; k++)
		sum += s->klass[k];
	if (sum != s->gpu_pods || s->gpu_pods > (uint64_t)s->pods_used)
		return carve_errorf(err, CARVE_EINVAL,
				    "node %s: GPU pods %u, by class %u, pods %lld", n->name,
				    s->gpu_pods, sum, (long long)s->pods_used);
	return 0;
}

int carve_placer_check(const struct carve_placer *p, struct carve_error *err)
{
	size_t i;
	int rc;

	if (!p)
		return carve_errorf(err, CARVE_EINVAL, "no placer");
	if (carve_cluster_node_count(p->c) != p->nnodes || carve_cluster_gpu_count(p->c) != p->ngpus)
		return carve_errorf(err, CARVE_EINVAL, "the cluster changed under the placer");
	for (i = 0; i < p->nnodes; i++)
		if ((rc = check_node(p, (uint32_t)i, err)))
			return rc;
	if (p->nreparts > p->nmig)
		return carve_errorf(err, CARVE_EINVAL, "%zu repartitions logged, %zu MIG GPUs",
				    p->nreparts, p->nmig);
	for (i = 0; i < p->nreparts; i++)
		if (p->reparts[i].gpu >= p->ngpus || p->rpart[p->reparts[i].gpu] != (int32_t)i)
			return carve_errorf(err, CARVE_EINVAL,
					    "repartition %zu (GPU %u) not the GPU's entry", i,
					    p->reparts[i].gpu);
	return 0;
}
