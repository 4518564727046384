/*
 * policy_fgd.c - FGD (fragmentation gradient descent) placement,
 * ../shared/reference/fgd.md section 4, on the fragmentation measure of
 * frag.c and the target mix of carve_placer_set_mix().
 *
 * For a candidate node n the chooser builds the hypothetical state n' the
 * pod would leave and computes delta = F_n - F_n' (GPU milli; positive when
 * fragmentation drops), quantised as floor(100 sigmoid(delta / 1000)):
 *   - FRACTION: every GPU of n that may take the pod (mode, model, free
 *     milli and memory) is tried; the node keeps the GPU with the highest
 *     quantised score, the lowest index on ties, and that GPU is the one the
 *     pod gets;
 *   - anything else (CPU-only, WHOLE, MIG, REPLICA): the default choice
 *     (lowest-index free GPUs; for WHOLE the simulator's pick has the same
 *     free-milli multiset, which is all F depends on), cpu taken too.
 * The chooser leaves the score in c->aux and carve__fgd_score() returns it;
 * the highest score wins, ties by the placer's seeded node order.
 *
 * Without a mix (nothing to measure against) FGD would score every node
 * 50; it scores and chooses as bestfit instead.
 *
 * Invariant: the placer's state is only read; the node view in p->gorder
 * is scratch, and the node's fragmentation parts (frag.c) are a cache of
 * its current state: F_n' of a candidate comes from them in O(types) per
 * changed GPU, bit-identical to measuring the changed view.  Nothing is allocated.  sigmoid is never evaluated: the
 * quantisation compares delta with the 99 bin edges 1000 ln(k / (100 - k)),
 * so libm is not needed and the result is the exact floor.
 */
#include "place_int.h"

/* 1000 ln(k / (100 - k)), k = 1..99: floor(100 sigmoid(d / 1000)) >= k iff
 * d >= edge[k - 1]. */
static const double edge[99] = {
	-4595.1198501345898, -3891.8202981106269, -3476.098689835273,
	-3178.0538303479457, -2944.4389791664407, -2751.5353130419489,
	-2586.6893440979425, -2442.3470353692041, -2313.6349291806305,
	-2197.2245773362197, -2090.7410969337693, -1992.4301646902063,
	-1900.9587611930469, -1815.2899666382491, -1734.6010553881065,
	-1658.2280766035324, -1585.627263740382, -1516.3474893680884,
	-1450.0101755059984, -1386.2943611198905, -1324.9254147435986,
	-1265.666373331276, -1208.3112059245343, -1152.6795099383855,
	-1098.6122886681098, -1045.9685551826876, -994.62257514406213,
	-944.46160884085134, -895.38404705484129, -847.29786038720363,
	-800.11930011211314, -753.77180237638015, -708.18505792448582,
	-663.2942174102642, -619.03920840622345, -575.36414490356185,
	-532.21681374730827, -489.54822531870576, -447.31221804366476,
	-405.46510810816443, -363.96537720141157, -322.77339226305099,
	-281.85115214098772, -241.16205681688811, -200.67069546215112,
	-160.34265007517936, -120.14431184206322, -80.04270767353637,
	-40.005334613699127, 0, 40.005334613699205,
	80.042707673536356, 120.14431184206322, 160.34265007517948,
	200.67069546215126, 241.16205681688805, 281.85115214098767,
	322.77339226305099, 363.96537720141157, 405.46510810816437,
	447.31221804366481, 489.54822531870576, 532.21681374730827,
	575.36414490356185, 619.03920840622345, 663.2942174102642,
	708.18505792448582, 753.77180237638015, 800.11930011211302,
	847.29786038720363, 895.38404705484129, 944.46160884085145,
	994.62257514406201, 1045.9685551826879, 1098.6122886681098,
	1152.6795099383853, 1208.3112059245343, 1265.666373331276,
	1324.9254147435986, 1386.2943611198905, 1450.0101755059984,
	1516.3474893680884, 1585.627263740382, 1658.2280766035324,
	1734.6010553881065, 1815.2899666382491, 1900.9587611930469,
	1992.4301646902061, 2090.7410969337693, 2197.2245773362197,
	2313.6349291806305, 2442.3470353692041, 2586.6893440979429,
	2751.5353130419489, 2944.4389791664403, 3178.0538303479457,
	3476.098689835273, 3891.8202981106265, 4595.1198501345898,
};

/* From 53 ln 2 GPUs on, 1 + exp(-x) rounds to 1 in double and the
 * simulator's sigmoid is exactly 1: score 100. */
#define EDGE_100 36736.800569677101

int carve__fgd_quantise(double d)
{
	int lo = 0, hi = 99; /* answer in [lo, hi]: edges below lo are <= d */

	if (d >= EDGE_100)
		return 100;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (d >= edge[mid - 1])
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Distinct (word, model) pairs remembered for skipping equal GPUs. */
#define NSEEN 16

/* FRACTION: the GPU whose hypothetical state scores best. */
static int choose_fraction(struct carve_placer *p, const struct carve_pod_req *req,
			   struct carve__cand *c)
{
	struct carve__fview fv;
	uint32_t k, best = UINT32_MAX, seen[NSEEN], nfree;
	int32_t seen_model[NSEEN];
	int bs = -1, nseen = 0, s, i;
	double base;
	int64_t cpu;

	carve__fview_load(p, c->node, &fv);
	base = carve__fview_frag_parts(p, &fv);
	cpu = fv.cpu_free;
	if (cpu != INT64_MAX)
		cpu -= req->cpu_milli;
	for (k = 0; k < fv.n; k++) {
		uint32_t g = fv.first + k, w = fv.v[k];
		int32_t model = p->ginfo[g].model;

		if (!carve__gpu_usable(p, g, req) || !carve__fraction_fits(p, g, req))
			continue;
		/* A GPU equal to an earlier fitting one (same free milli, modes
		 * and model) leaves the same F: it can only tie, and ties go to
		 * the lower index. */
		for (i = 0; i < nseen && (seen[i] != w || seen_model[i] != model); i++)
			;
		if (i < nseen)
			continue;
		if (nseen < NSEEN) {
			seen[nseen] = w;
			seen_model[nseen++] = model;
		}
		nfree = (w & CARVE__FV_FREE) - (uint32_t)req->milli;
		s = carve__fgd_quantise(base - carve__fview_frag_after(p, &fv, &k, &nfree, 1, cpu));
		if (s > bs) {
			bs = s;
			best = g;
		}
	}
	if (best == UINT32_MAX)
		return CARVE_ENOFIT;
	carve__take_fraction(p, best, req, c);
	c->aux = bs;
	return 0;
}

int carve__fgd_choose(struct carve_placer *p, const struct carve_pod_req *req,
		      struct carve__cand *c)
{
	struct carve__fview fv;
	uint32_t ks[CARVE_POD_MAX_GPUS], nfree[CARVE_POD_MAX_GPUS];
	double base;
	int rc, i, j, nchg = 0;
	int64_t cpu;

	if (!p->mix.n)
		return carve__choose_default(p, req, c);
	if (req->gpu == CARVE_GREQ_FRACTION)
		return choose_fraction(p, req, c);
	rc = carve__choose_default(p, req, c);
	if (rc)
		return rc;
	carve__fview_load(p, c->node, &fv);
	base = carve__fview_frag_parts(p, &fv);
	for (i = 0; i < c->ndevs; i++) {
		uint32_t g = c->devs[i].gpu, k = g - fv.first;

		for (j = 0; j < nchg && ks[j] != k; j++)
			;
		if (j < nchg) /* this GPU's state after c is set already */
			continue;
		ks[nchg] = k;
		nfree[nchg++] = (uint32_t)carve__gpu_free_milli_after(p, g, c);
	}
	cpu = fv.cpu_free;
	if (cpu != INT64_MAX)
		cpu -= req->cpu_milli;
	c->aux = carve__fgd_quantise(base - carve__fview_frag_after(p, &fv, ks, nfree, nchg, cpu));
	return 0;
}

double carve__fgd_score(struct carve_placer *p, const struct carve_pod_req *req,
			const struct carve__cand *c)
{
	if (!p->mix.n)
		return carve__bestfit_score(p, req, c);
	return c->aux;
}
