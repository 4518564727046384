/*
 * place_feas.c - static feasibility of a pod on a node: everything about a
 * node that placements never change (nodeSelector, required node affinity,
 * taints and tolerations through match.h; a GPU of a usable sharing mode and
 * an allowed model), and the node classes that let it be answered once per
 * class instead of once per node.
 *
 * Invariant: two nodes of one class (same labels, taints, and per GPU the
 * same mode, MIG model, failRequestsGreaterThanOne and model) get the same
 * answer for every request, so carve__static_fit() (place_int.h) asks
 * carve__node_static_ok() only for a class's first node, once per request
 * generation (p->fitgen, moved on by carve__req_models()).  Nothing here
 * changes the free state or draws from the RNG.  carve__scan_classes()
 * allocates the class arrays at create (freed by destroy) and frees its
 * hash table before returning; nothing else here allocates.
 */
#include <string.h>

#include "carve/match.h"
#include "place_int.h"

/* ---- node classes --------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *v, size_t n)
{
	const unsigned char *b = v;

	while (n--)
		h = (h ^ *b++) * 1099511628211ULL;
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return s ? fnv(h, s, strlen(s) + 1) : fnv(h, "\xff", 1);
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* What carve__node_static_ok() and resolve_gpu() read of GPU g. */
static uint64_t gpu_class_hash(const struct carve_placer *p, uint64_t h, uint32_t g)
{
	const struct carve_gpu *v = carve__gpu(p, g);
	int32_t m = p->ginfo[g].model;

	h = fnv(h, &v->sharing, sizeof(v->sharing));
	h = fnv(h, &v->mig_model, sizeof(v->mig_model));
	h = fnv(h, &v->fail_gt_one, sizeof(v->fail_gt_one));
	return fnv(h, &m, sizeof(m));
}

static uint64_t node_class_hash(const struct carve_placer *p, uint32_t node)
{
	const struct carve_node *n = carve__node(p, node);
	uint64_t h = 14695981039346656037ULL;
	size_t i;
	uint32_t g;

	h = fnv(h, &n->nlabels, sizeof(n->nlabels));
	for (i = 0; i < n->nlabels; i++) {
		h = fnv_str(h, n->labels[i].key);
		h = fnv_str(h, n->labels[i].value);
	}
	h = fnv(h, &n->ntaints, sizeof(n->ntaints));
	for (i = 0; i < n->ntaints; i++) {
		h = fnv_str(h, n->taints[i].key);
		h = fnv_str(h, n->taints[i].value);
		h = fnv_str(h, n->taints[i].effect);
	}
	h = fnv(h, &n->ngpus, sizeof(n->ngpus));
	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
		h = gpu_class_hash(p, h, g);
	return h;
}

static bool same_class(const struct carve_placer *p, uint32_t a, uint32_t b)
{
	const struct carve_node *x = carve__node(p, a), *y = carve__node(p, b);
	size_t i;
	uint32_t k;

	if (x->nlabels != y->nlabels || x->ntaints != y->ntaints || x->ngpus != y->ngpus)
		return false;
	for (i = 0; i < x->nlabels; i++)
		if (!str_eq(x->labels[i].key, y->labels[i].key) ||
		    !str_eq(x->labels[i].value, y->labels[i].value))
			return false;
	for (i = 0; i < x->ntaints; i++)
		if (!str_eq(x->taints[i].key, y->taints[i].key) ||
		    !str_eq(x->taints[i].value, y->taints[i].value) ||
		    !str_eq(x->taints[i].effect, y->taints[i].effect))
			return false;
	for (k = 0; k < x->ngpus; k++) {
		const struct carve_gpu *u = carve__gpu(p, x->gpu_first + k);
		const struct carve_gpu *v = carve__gpu(p, y->gpu_first + k);

		if (u->sharing != v->sharing || u->mig_model != v->mig_model ||
		    u->fail_gt_one != v->fail_gt_one ||
		    p->ginfo[x->gpu_first + k].model != p->ginfo[y->gpu_first + k].model)
			return false;
	}
	return true;
}

/* cls[], crep[], nclass; cgen/cfit sized.  Scratch: an open-addressing
 * table of class ids by hash, freed before returning. */
int carve__scan_classes(struct carve_placer *p)
{
	size_t cap = 16, i, j;
	uint32_t *ht, k;
	uint64_t *hv;

	while (cap < 2 * p->nnodes)
		cap *= 2;
	ht = carve_malloc(cap * sizeof(*ht));
	hv = carve_malloc((p->nnodes + 1) * sizeof(*hv));
	p->cls = carve_calloc(p->nnodes + 1, sizeof(*p->cls));
	p->crep = carve_calloc(p->nnodes + 1, sizeof(*p->crep));
	if (!ht || !hv || !p->cls || !p->crep) {
		carve_free(ht);
		carve_free(hv);
		return CARVE_ENOMEM;
	}
	memset(ht, 0xff, cap * sizeof(*ht));
	for (i = 0; i < p->nnodes; i++) {
		uint64_t h = node_class_hash(p, (uint32_t)i);

		for (j = h & (cap - 1); (k = ht[j]) != UINT32_MAX; j = (j + 1) & (cap - 1))
			if (hv[k] == h && same_class(p, p->crep[k], (uint32_t)i))
				break;
		if (k == UINT32_MAX) {
			k = p->nclass++;
			ht[j] = k;
			hv[k] = h;
			p->crep[k] = (uint32_t)i;
		}
		p->cls[i] = k;
	}
	carve_free(ht);
	carve_free(hv);
	p->cgen = carve_calloc(p->nclass + 1, sizeof(*p->cgen));
	p->cfit = carve_calloc(p->nclass + 1, sizeof(*p->cfit));
	return p->cgen && p->cfit ? 0 : CARVE_ENOMEM;
}

/* ---- static feasibility: labels, affinity, taints, models ----------------------- */

/* Sets up any_model / model_ok for req; a new generation of class answers. */
void carve__req_models(struct carve_placer *p, const struct carve_pod_req *req)
{
	if (++p->fitgen == 0) { /* wrapped: forget every answer */
		memset(p->cgen, 0, (p->nclass + 1) * sizeof(*p->cgen));
		p->fitgen = 1;
	}
	p->any_model = req->nmodels == 0;
	if (!p->any_model)
		carve__models_allowed(p, req->nmodels, req->models, p->model_ok);
}

/* Everything about node n that placements do not change. */
bool carve__node_static_ok(const struct carve_placer *p, uint32_t node,
			   const struct carve_pod_req *req)
{
	const struct carve_node *n = carve__node(p, node);
	struct carve_labels nl = carve_labels_of(n->labels, n->nlabels);
	uint32_t g;

	/* Kubernetes' NodeAffinity and TaintToleration filters (match.h). */
	if (!carve_match_selector(&nl, req->selector, req->nselector, CARVE_MATCH_ALL_KEYS, NULL))
		return false;
	if (req->nterms &&
	    !carve_match_terms(&nl, req->terms, req->nterms, CARVE_MATCH_ALL_KEYS))
		return false;
	if (carve_untolerated_taint(n->taints, n->ntaints, req->tolerations, req->ntolerations))
		return false;
	if (req->gpu == CARVE_GREQ_NONE)
		return true;
	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
		if (carve__gpu_usable(p, g, req))
			return true;
	return false;
}

/* fit[] for the candidates (carve__req_models first). */
void carve__prepare_group(struct carve_placer *p, const struct carve_pod_req *req,
			  const uint32_t *cands, size_t ncands)
{
	size_t i;

	for (i = 0; i < ncands; i++)
		p->fit[cands[i]] = carve__static_fit(p, cands[i], req);
}
