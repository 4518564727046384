/*
 * place_gang.c - gangs, all or nothing, and topology (the public
 * carve_placer_place()): the groups' pods are placed one at a time, each on
 * the best candidate node (place_pod.c), straight into the live state; the
 * caller's out[] is the undo log, released in reverse when a pod finds no
 * node, and the RNG is restored, so a failed gang changes nothing.  With a
 * topology the nodes are grouped into domains per level, narrowest level
 * first, tightest domain first, and each is tried as the whole gang's
 * candidate set (docs/internals/PLACEMENT.md, Topology).
 *
 * Scratch (p->tsort, p->doms, p->dnodes) is allocated at create; placing
 * allocates nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "place_int.h"

/* ---- gangs ---------------------------------------------------------------------- */

/* Every pod of every group on cands, or nothing (state unchanged). */
static int place_gang(struct carve_placer *p, const struct carve_pod_group *groups,
		      size_t ngroups, const uint32_t *cands, size_t ncands,
		      struct carve_pod_place *out)
{
	size_t g, done = 0;
	int k, rc;

	for (g = 0; g < ngroups; g++) {
		struct carve__slot *slot = NULL;

		if (groups[g].count <= 0)
			continue;
		carve__req_models(p, groups[g].req);
		if (cands == p->all)
			slot = carve__cache_get(p, groups[g].req);
		else if (groups[g].count > 1) /* a topology domain */
			slot = carve__cache_local(p, groups[g].req, cands, ncands);
		if (!slot)
			carve__prepare_group(p, groups[g].req, cands, ncands);
		for (k = 0; k < groups[g].count; k++) {
			rc = carve__place_pod(p, groups[g].req, cands, ncands, slot, &out[done]);
			if (rc) {
				carve_placer_release(p, out, done);
				return rc;
			}
			done++;
		}
	}
	return 0;
}

/* ---- topology ------------------------------------------------------------------- */

static int cmp_tent(const void *a, const void *b)
{
	const struct carve__tent *x = a, *y = b;
	int r = x->val == y->val ? 0 : strcmp(x->val, y->val); /* interned: often the same */

	return r ? r : (x->node > y->node) - (x->node < y->node);
}

/* Least free first (the tightest domain that holds the gang), then value. */
static int cmp_dom(const void *a, const void *b)
{
	const struct carve__dom *x = a, *y = b;

	if (x->free_gpu != y->free_gpu)
		return x->free_gpu < y->free_gpu ? -1 : 1;
	if (x->free_cpu != y->free_cpu)
		return x->free_cpu < y->free_cpu ? -1 : 1;
	return strcmp(x->val, y->val);
}

/*
 * Groups the nodes by their value at level lvl into p->doms; returns how
 * many domains.  Only nodes with a value at every level take part, so each
 * domain lies inside one domain of every wider level.
 */
/* Labels are a node class's (carve__scan_classes): the label lookups of a class
 * are remembered in a small direct-mapped table, by class id. */
#define TOPO_MEMO 256

struct topo_memo {
	uint32_t cls;        /* UINT32_MAX: empty */
	bool all;            /* every level has a label, or is the hostname */
	const char *label;   /* the label at this level, or NULL */
};

static size_t build_domains(struct carve_placer *p, const struct carve_topology *topo, size_t lvl)
{
	struct topo_memo memo[TOPO_MEMO];
	const char *key = topo->levels[lvl];
	bool host = !strcmp(key, "kubernetes.io/hostname");
	size_t i, l, m = 0, nd = 0;

	for (i = 0; i < TOPO_MEMO; i++)
		memo[i].cls = UINT32_MAX;
	for (i = 0; i < p->nnodes; i++) {
		const struct carve_node *n = carve__node(p, (uint32_t)i);
		struct topo_memo *e = &memo[p->cls[i] % TOPO_MEMO];
		const char *v;

		if (e->cls != p->cls[i]) {
			e->cls = p->cls[i];
			e->label = carve_node_label(n, key);
			e->all = true;
			for (l = 0; e->all && l < topo->nlevels; l++)
				e->all = carve_node_label(n, topo->levels[l]) ||
					 !strcmp(topo->levels[l], "kubernetes.io/hostname");
		}
		/* a node's value at a level is its label; kubernetes.io/hostname
		 * falls back to the node's name */
		v = e->label ? e->label : host ? n->name : NULL;
		if (!e->all)
			v = NULL;
		if (v) {
			p->tsort[m].val = v;
			p->tsort[m++].node = (uint32_t)i;
		}
	}
	qsort(p->tsort, m, sizeof(*p->tsort), cmp_tent);
	for (i = 0; i < m; i++) {
		uint32_t node = p->tsort[i].node;
		int64_t cap = carve__node_cpu_cap(p, node), fc;
		struct carve__dom *d;

		p->dnodes[i] = node;
		if (!nd || (p->doms[nd - 1].val != p->tsort[i].val &&
			    strcmp(p->doms[nd - 1].val, p->tsort[i].val))) {
			d = &p->doms[nd++];
			memset(d, 0, sizeof(*d));
			d->val = p->tsort[i].val;
			d->first = (uint32_t)i;
		}
		d = &p->doms[nd - 1];
		d->n++;
		d->free_gpu += carve__node_gpu_free(p, node);
		fc = cap ? cap - p->nodes[node].cpu_used : 0;
		d->free_cpu = d->free_cpu > INT64_MAX - fc ? INT64_MAX : d->free_cpu + fc;
	}
	qsort(p->doms, nd, sizeof(*p->doms), cmp_dom);
	return nd;
}

/* A lower bound of the GPU milli the gang takes (whole and fraction only). */
static int64_t gang_milli(const struct carve_pod_group *groups, size_t ngroups)
{
	int64_t sum = 0;
	size_t g;

	for (g = 0; g < ngroups; g++) {
		const struct carve_pod_req *r = groups[g].req;

		if (r->gpu == CARVE_GREQ_WHOLE)
			sum += (int64_t)groups[g].count * r->count * 1000;
		else if (r->gpu == CARVE_GREQ_FRACTION)
			sum += (int64_t)groups[g].count * r->milli;
	}
	return sum;
}

static int place_topo(struct carve_placer *p, const struct carve_pod_group *groups,
		      size_t ngroups, const struct carve_topology *topo,
		      struct carve_pod_place *out)
{
	int64_t need = gang_milli(groups, ngroups);
	size_t lvl, d, nd;

	for (lvl = topo->nlevels; lvl-- > 0;) {
		nd = build_domains(p, topo, lvl);
		for (d = 0; d < nd; d++) {
			const struct carve__dom *dom = &p->doms[d];

			if (dom->free_gpu < need)
				continue;
			if (!place_gang(p, groups, ngroups, &p->dnodes[dom->first], dom->n, out))
				return 0;
		}
	}
	if (topo->required)
		return CARVE_ENOFIT;
	return place_gang(p, groups, ngroups, p->all, p->nnodes, out);
}

/* ---- carve_placer_place --------------------------------------------------------- */

static bool req_valid(const struct carve_pod_req *r)
{
	if (!r || r->cpu_milli < 0 || r->memory_milli < 0)
		return false;
	if ((r->nmodels && !r->models) || (r->nselector && !r->selector) ||
	    (r->nterms && !r->terms) || (r->ntolerations && !r->tolerations))
		return false;
	switch (r->gpu) {
	case CARVE_GREQ_NONE:
		return true;
	case CARVE_GREQ_MIG:
		if (!r->mig_profile || !*r->mig_profile)
			return false;
		/* fall through */
	case CARVE_GREQ_WHOLE:
	case CARVE_GREQ_REPLICA:
	case CARVE_GREQ_GPU:
		return r->count >= 1 && r->count <= CARVE_POD_MAX_GPUS;
	case CARVE_GREQ_FRACTION:
		return r->milli >= 0 && r->milli <= 999 && (r->milli > 0 || r->mem_mib > 0);
	}
	return false;
}

int carve_placer_place(struct carve_placer *p, const struct carve_pod_group *groups,
		       size_t ngroups, const struct carve_topology *topo,
		       struct carve_pod_place *out)
{
	struct carve_rng rng;
	size_t g, total = 0, l;
	int rc;

	if (!p || (ngroups && !groups))
		return CARVE_EINVAL;
	for (g = 0; g < ngroups; g++) {
		if (groups[g].count < 0 || (groups[g].count && !req_valid(groups[g].req)))
			return CARVE_EINVAL;
		total += (size_t)groups[g].count;
	}
	if (!total)
		return 0;
	if (!out)
		return CARVE_EINVAL;
	if (topo && topo->nlevels) {
		if (!topo->levels)
			return CARVE_EINVAL;
		for (l = 0; l < topo->nlevels; l++)
			if (!topo->levels[l])
				return CARVE_EINVAL;
	}
	rng = p->rng;
	if (topo && topo->nlevels)
		rc = place_topo(p, groups, ngroups, topo, out);
	else
		rc = place_gang(p, groups, ngroups, p->all, p->nnodes, out);
	if (rc)
		p->rng = rng;
	return rc;
}
