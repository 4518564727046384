/*
 * policy.c - the built-in placement policies: one score function per policy
 * (and optionally a GPU chooser) in the table carve__policies[].
 *
 * Adding a policy = one new score function (in this file or its own
 * policy_<name>.c, declared in place_int.h) + one table entry below.  A
 * score rates one feasible candidate (node + the devices the chooser picked)
 * and must not change the placer's state; higher wins, and equal scores go
 * to the node that comes first in the placer's seeded node permutation.
 *
 * The baselines follow the FGD paper's simulator as described in
 * ../shared/reference/fgd.md section 5, integer quantisation included, on
 * carve's generalised state: every GPU has a free milli-GPU value
 * (place_state.c: exclusive 0/1000, fraction 1000 - used, time-slice and
 * MIG by the share of replicas / memory slices still free), "the largest spec" is the
 * cluster's largest node (allocatable cpu, GPU count x 1000), and a
 * dimension a node does not constrain (allocatable cpu 0, no GPUs)
 * contributes 0 to its score.  carve's own binpack and spread are
 * unquantised.
 */
#include "place_int.h"

/* floor() without libm, exact for |x| < 2^53. */
static double flr(double x)
{
	double t = (double)(int64_t)x;

	return t > x ? t - 1 : t;
}

/* Taken milli of the candidate over the node's GPUs. */
static int64_t cand_milli(struct carve_placer *p, const struct carve__cand *c)
{
	return carve__node_gpu_free(p, c->node) - carve__node_gpu_free_after(p, c);
}

/* Share of the node allocated after placement: 0.5 cpu + 0.5 GPU. */
static double allocated_after(struct carve_placer *p, const struct carve_pod_req *req,
			      const struct carve__cand *c)
{
	int64_t cap = carve__node_cpu_cap(p, c->node), gcap = carve__node_gpu_cap(p, c->node);
	double cpu = 0, gpu = 0;

	if (cap)
		cpu = (double)(p->nodes[c->node].cpu_used + req->cpu_milli) / (double)cap;
	if (gcap)
		gpu = (double)(gcap - carve__node_gpu_free_after(p, c)) / (double)gcap;
	return 0.5 * cpu + 0.5 * gpu;
}

/* binpack: the most allocated node after placement. */
static double score_binpack(struct carve_placer *p, const struct carve_pod_req *req,
			    const struct carve__cand *c)
{
	return allocated_after(p, req, c);
}

/* spread: the least allocated node after placement. */
static double score_spread(struct carve_placer *p, const struct carve_pod_req *req,
			   const struct carve__cand *c)
{
	return 1.0 - allocated_after(p, req, c);
}

/*
 * bestfit: leftover after placement per resource over the largest spec,
 * weighted 0.5 cpu + 0.5 GPU; score = floor(100 (1 - leftover)).  The
 * simulator then min-max rescales the feasible nodes' scores to 0..100 with
 * integer maths; for integer scores spanning at most 100 that map is
 * strictly increasing, so it never changes the winner or a tie, and carve
 * leaves it out.
 */
double carve__bestfit_score(struct carve_placer *p, const struct carve_pod_req *req,
			    const struct carve__cand *c)
{
	int64_t cap = carve__node_cpu_cap(p, c->node);
	double lc = 0, lg = 0;

	if (cap && p->max_cpu)
		lc = (double)(cap - p->nodes[c->node].cpu_used - req->cpu_milli) / (double)p->max_cpu;
	if (p->max_gpu_milli)
		lg = (double)carve__node_gpu_free_after(p, c) / (double)p->max_gpu_milli;
	return flr(100.0 * (1.0 - (0.5 * lc + 0.5 * lg)));
}

/*
 * dotprod (Tetris): node = (free cpu, free GPU milli summed) before
 * placement, task = (cpu, GPU milli taken), both over the largest spec;
 * score = floor(100 (1 - node.task / 2)): the smallest dot product wins.
 */
static double score_dotprod(struct carve_placer *p, const struct carve_pod_req *req,
			    const struct carve__cand *c)
{
	int64_t cap = carve__node_cpu_cap(p, c->node);
	double nc = 0, ng = 0, tc = 0, tg = 0;

	if (p->max_cpu) {
		if (cap)
			nc = (double)(cap - p->nodes[c->node].cpu_used) / (double)p->max_cpu;
		tc = (double)req->cpu_milli / (double)p->max_cpu;
	}
	if (p->max_gpu_milli) {
		ng = (double)carve__node_gpu_free(p, c->node) / (double)p->max_gpu_milli;
		tg = (double)cand_milli(p, c) / (double)p->max_gpu_milli;
	}
	return flr(100.0 * (1.0 - (nc * tc + ng * tg) / 2.0));
}

static int64_t imax(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/*
 * gpupacking, three tiers (higher wins); CPU-only pods score 0 everywhere:
 *   every GPU of the node fully free        max(33 - G, G), G = its GPUs;
 *   the pod needs k fully free GPUs          max(50 - k, 33);
 *   it fits on partly used GPUs alone        max(100 - sum(free% of them) / 10, 50).
 */
static double score_gpupacking(struct carve_placer *p, const struct carve_pod_req *req,
			       const struct carve__cand *c)
{
	const struct carve_node *n = carve__node(p, c->node);
	int64_t g = n->ngpus, k = 0, pct = 0;
	int i, j;

	if (req->gpu == CARVE_GREQ_NONE)
		return 0;
	if (carve__node_fully_free_gpus(p, c->node) == g)
		return (double)imax(100 / 3 - g, g);
	for (i = 0; i < c->ndevs; i++) {
		uint32_t gid = c->devs[i].gpu;
		int free;

		for (j = 0; j < i && c->devs[j].gpu != gid; j++)
			;
		if (j < i) /* counted already */
			continue;
		free = carve__gpu_free_milli_in(p, gid, &p->gpus[gid]);
		if (free == 1000)
			k++;
		pct += free * 100 / 1000;
	}
	if (k > 0)
		return (double)imax(100 / 2 - k, 100 / 3);
	return (double)imax(100 - pct / 10, 100 / 2);
}

/*
 * gpuclustering: bands by the GPU-pod classes the node hosts (shared, or k
 * whole GPUs): only the pod's class 75, its class among others 50, none 25,
 * only other classes 0; plus floor(25 (max spec - node free milli) / max
 * spec) in integers.  CPU-only pods score 0 everywhere.
 */
static double score_gpuclustering(struct carve_placer *p, const struct carve_pod_req *req,
				  const struct carve__cand *c)
{
	const struct carve__node_state *ns = &p->nodes[c->node];
	int cls = carve__req_class(req), present = 0, k;
	int64_t band, fill = 0;

	if (cls < 0)
		return 0;
	for (k = 0; k < CARVE__NCLASS; k++)
		present += ns->klass[k] > 0;
	if (ns->klass[cls])
		band = present == 1 ? 75 : 50;
	else
		band = present == 0 ? 25 : 0;
	if (p->max_gpu_milli)
		fill = 25 * (p->max_gpu_milli - carve__node_gpu_free(p, c->node)) / p->max_gpu_milli;
	return (double)(band + fill);
}

/* random: every feasible node draws a uniform number; the largest wins, so
 * the node is uniform among the feasible ones (seeded). */
static double score_random(struct carve_placer *p, const struct carve_pod_req *req,
			   const struct carve__cand *c)
{
	return carve_rng_double(&p->rng);
}

/* random's GPU choice: a fraction goes to a uniform GPU among those that
 * fit (reservoir sampling); other requests as the default. */
static int choose_random(struct carve_placer *p, const struct carve_pod_req *req,
			 struct carve__cand *c)
{
	const struct carve_node *n = carve__node(p, c->node);
	uint32_t g, pick = UINT32_MAX;
	uint64_t seen = 0;

	if (req->gpu != CARVE_GREQ_FRACTION)
		return carve__choose_default(p, req, c);
	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
		if (carve__gpu_usable(p, g, req) && carve__fraction_fits(p, g, req) &&
		    carve_rng_below(&p->rng, ++seen) == 0)
			pick = g;
	if (pick == UINT32_MAX)
		return CARVE_ENOFIT;
	carve__take_fraction(p, pick, req, c);
	return 0;
}

const struct carve__policy carve__policies[] = {
	{"binpack", true, score_binpack, NULL},
	{"spread", true, score_spread, NULL},
	{"bestfit", true, carve__bestfit_score, NULL},
	{"dotprod", true, score_dotprod, NULL},
	{"gpupacking", true, score_gpupacking, NULL},
	{"gpuclustering", true, score_gpuclustering, NULL},
	{"random", false, score_random, choose_random},
	{"fgd", true, carve__fgd_score, carve__fgd_choose},
};

const int carve__npolicies = (int)(sizeof(carve__policies) / sizeof(carve__policies[0]));

int carve_policy_count(void)
{
	return carve__npolicies;
}

const char *carve_policy_name(int i)
{
	return i >= 0 && i < carve__npolicies ? carve__policies[i].name : NULL;
}
