/*
 * frag.c - the FGD fragmentation measure (../shared/reference/fgd.md
 * section 3) on the placer's state, and the "typical task types" it is
 * measured against (section 2).
 *
 * Fragmentation of node n for task type m, in GPU milli, with U = the free
 * milli summed over n's GPUs (place_state.c's view: exclusive 0/1000, fraction
 * 1000 - used, time-slice and MIG by the share still free):
 *   - m is CPU-only                          -> U (whether or not its cpu fits);
 *   - no GPU of n may serve m (model, mode)  -> U ("no access");
 *   - m fits (cpu and enough GPUs each with
 *     free >= m's per-GPU milli)             -> the free milli of the GPUs that
 *                                               cannot serve m (too small, or
 *                                               of a mode/model m cannot use);
 *   - otherwise (cpu or GPUs short)          -> U.
 * F_n = sum_m p_m frag(n, m) over the mix of carve_placer_set_mix(); the
 * cluster's F = sum_n F_n.  Per-GPU milli of a type: FRACTION max(milli, 1),
 * WHOLE 1000 (only a fully free GPU serves it).  MIG and REPLICA types have
 * no per-GPU milli in this model: every node is "no access" for them.  An
 * unknown allocatable cpu (0) always fits.  Memory plays no part.
 *
 * A node view (struct carve__fview) holds the node's free cpu and one word
 * per GPU: free milli in the low bits and which request kinds the GPU can
 * serve.  The words live in the placer's per-node scratch p->gorder, so a
 * view is valid until the next placement call or view load; evaluating one
 * allocates nothing.  Callers describe a hypothetical state by changing the
 * view's words and cpu, as policy_fgd.c does.
 *
 * Per-node parts (carve__fview_frag_parts): for each mix type, how many
 * GPUs serve it with enough free milli, the free milli of the rest and
 * whether any GPU serves it, plus F_n, kept in p->mix per node (allocated
 * by carve_placer_set_mix) until account() marks the node changed.  A
 * changed view's F_n' is then the same integers adjusted for the changed
 * GPUs and summed in the same order (carve__fview_frag_after), so it is
 * bit-identical to carve__fview_frag() of that view.  carve_frag_node()
 * does not use them (tests change the state behind account()'s back).
 *
 * carve_frag_typical_types() and carve_frag_pending() allocate scratch and
 * free it before they return; nothing else here allocates.  The public
 * measures (carve_frag_*) are declared in include/carve/frag.h, the node
 * views in place_int.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "carve/frag.h"
#include "place_int.h"

/* ---- node views ------------------------------------------------------------- */

static int gpu_bits(enum carve_sharing sh)
{
	switch (sh) {
	case CARVE_SHARE_EXCLUSIVE:
		return CARVE__FV_WHOLE;
	case CARVE_SHARE_FRACTION:
		return CARVE__FV_WHOLE | CARVE__FV_FRACTION;
	default:
		return 0;
	}
}

void carve__fview_load(const struct carve_placer *p, uint32_t node, struct carve__fview *fv)
{
	const struct carve_node *n = carve__node(p, node);
	int64_t cap = carve__node_cpu_cap(p, node);
	uint32_t k;

	fv->node = node;
	fv->first = n->gpu_first;
	fv->n = n->ngpus;
	fv->cpu_free = cap ? cap - p->nodes[node].cpu_used : INT64_MAX;
	fv->v = p->gorder;
	for (k = 0; k < fv->n; k++) {
		uint32_t g = fv->first + k;

		fv->v[k] = (uint32_t)carve__gpu_free_milli_in(p, g, &p->gpus[g]) |
			   (uint32_t)gpu_bits(carve__share(p, g));
	}
}

/* GPU k of the view may serve type t: its mode and model. */
static bool gpu_serves(const struct carve_placer *p, const struct carve__fview *fv, uint32_t k,
		       size_t t, uint32_t bit)
{
	const struct carve_pod_req *m = &p->mix.types[t];
	int model;

	if (!(fv->v[k] & bit))
		return false;
	if (!m->nmodels)
		return true;
	model = p->ginfo[fv->first + k].model;
	return model >= 0 && p->mix.model_ok[t * p->nmodels + (size_t)model];
}

/* Type t's per-GPU need, GPU count and the view bit of the GPUs that may
 * serve it; false for a type every node is "no access" to (CPU-only, MIG,
 * REPLICA): its frag is U. */
static bool type_shape(const struct carve_pod_req *m, int64_t *need, int64_t *want, uint32_t *bit)
{
	switch (m->gpu) {
	case CARVE_GREQ_WHOLE:
		*need = 1000;
		*want = m->count;
		*bit = CARVE__FV_WHOLE;
		return true;
	case CARVE_GREQ_FRACTION:
		*need = m->milli > 0 ? m->milli : 1;
		*want = 1;
		*bit = CARVE__FV_FRACTION;
		return true;
	default:
		return false;
	}
}

/* Type t's parts on the view: GPUs that serve it with free >= need (*fit),
 * the free milli of all the others (*small), whether any GPU serves it. */
static void type_parts(const struct carve_placer *p, const struct carve__fview *fv, size_t t,
		       int64_t need, uint32_t bit, int64_t *small, int32_t *fit, bool *access)
{
	uint32_t k;

	*small = 0;
	*fit = 0;
	*access = false;
	for (k = 0; k < fv->n; k++) {
		int64_t f = fv->v[k] & CARVE__FV_FREE;

		if (!gpu_serves(p, fv, k, t, bit)) {
			*small += f;
			continue;
		}
		*access = true;
		if (f >= need)
			(*fit)++;
		else
			*small += f;
	}
}

/* frag(n, t) given U, the view's free milli summed. */
static double frag_type(const struct carve_placer *p, const struct carve__fview *fv, size_t t,
			int64_t u)
{
	const struct carve_pod_req *m = &p->mix.types[t];
	int64_t small, need, want;
	int32_t fit;
	uint32_t bit;
	bool access;

	if (!type_shape(m, &need, &want, &bit)) /* CPU-only, and MIG/REPLICA (no access) */
		return (double)u;
	type_parts(p, fv, t, need, bit, &small, &fit, &access);
	if (!access || fit < want || fv->cpu_free < m->cpu_milli)
		return (double)u;
	return (double)small;
}

static int64_t view_free(const struct carve__fview *fv)
{
	int64_t u = 0;
	uint32_t k;

	for (k = 0; k < fv->n; k++)
		u += fv->v[k] & CARVE__FV_FREE;
	return u;
}

double carve__fview_frag(const struct carve_placer *p, const struct carve__fview *fv)
{
	int64_t u = view_free(fv);
	double f = 0;
	size_t t;

	if (!u) /* nothing free: nothing to fragment */
		return 0;
	for (t = 0; t < p->mix.n; t++)
		if (p->mix.prob[t] > 0)
			f += p->mix.prob[t] * frag_type(p, fv, t, u);
	return f;
}

double carve__fview_frag_parts(const struct carve_placer *p, const struct carve__fview *fv)
{
	const struct carve__mix *mx = &p->mix;
	size_t r = (size_t)fv->node * (mx->n + 1), t;
	int64_t u, need, want;
	double f = 0;
	uint32_t bit;
	bool acc;

	if (mx->pok[fv->node])
		return mx->pbase[fv->node];
	u = view_free(fv);
	mx->psmall[r + mx->n] = (int32_t)u;
	for (t = 0; t < mx->n; t++) {
		int64_t small;
		int32_t fit;

		if (!type_shape(&mx->types[t], &need, &want, &bit))
			continue;
		type_parts(p, fv, t, need, bit, &small, &fit, &acc);
		mx->psmall[r + t] = (int32_t)small;
		mx->pfit[r + t] = (uint16_t)fit;
		mx->pacc[r + t] = acc;
	}
	for (t = 0; u && t < mx->n; t++) {
		const struct carve_pod_req *m = &mx->types[t];
		int64_t v = u;

		if (!(mx->prob[t] > 0))
			continue;
		if (type_shape(m, &need, &want, &bit) && mx->pacc[r + t] && mx->pfit[r + t] >= want &&
		    fv->cpu_free >= m->cpu_milli)
			v = mx->psmall[r + t];
		f += mx->prob[t] * (double)v;
	}
	mx->pbase[fv->node] = f;
	mx->pok[fv->node] = true;
	return f;
}

double carve__fview_frag_after(const struct carve_placer *p, const struct carve__fview *fv,
			       const uint32_t *ks, const uint32_t *nfree, int nchg, int64_t cpu_free)
{
	const struct carve__mix *mx = &p->mix;
	size_t r = (size_t)fv->node * (mx->n + 1);
	int64_t u = mx->psmall[r + mx->n], need, want;
	double f = 0;
	uint32_t bit;
	size_t t;
	int i;

	for (i = 0; i < nchg; i++)
		u += (int64_t)nfree[i] - (int64_t)(fv->v[ks[i]] & CARVE__FV_FREE);
	if (!u)
		return 0;
	for (t = 0; t < mx->n; t++) {
		const struct carve_pod_req *m = &mx->types[t];
		int64_t v = u, small;
		int32_t fit;

		if (!(mx->prob[t] > 0))
			continue;
		if (type_shape(m, &need, &want, &bit) && mx->pacc[r + t]) {
			small = mx->psmall[r + t];
			fit = mx->pfit[r + t];
			for (i = 0; i < nchg; i++) {
				int64_t o = fv->v[ks[i]] & CARVE__FV_FREE, nw = nfree[i];

				if (!gpu_serves(p, fv, ks[i], t, bit)) {
					small += nw - o;
					continue;
				}
				if (o >= need)
					fit--;
				else
					small -= o;
				if (nw >= need)
					fit++;
				else
					small += nw;
			}
			if (fit >= want && cpu_free >= m->cpu_milli)
				v = small;
		}
		f += mx->prob[t] * (double)v;
	}
	return f;
}

double carve__fview_frag_type(const struct carve_placer *p, const struct carve__fview *fv, size_t t)
{
	return t < p->mix.n ? frag_type(p, fv, t, view_free(fv)) : 0;
}

double carve_frag_node(const struct carve_placer *p, uint32_t node)
{
	struct carve__fview fv;

	if (!p || node >= p->nnodes || !p->mix.n)
		return 0;
	carve__fview_load(p, node, &fv);
	return carve__fview_frag(p, &fv);
}

double carve_frag_cluster(const struct carve_placer *p)
{
	double f = 0;
	size_t i;

	for (i = 0; p && i < p->nnodes; i++)
		f += carve_frag_node(p, (uint32_t)i);
	return f;
}

/* ---- typical task types ------------------------------------------------------ */

struct kent {
	struct carve_frag_task_key k;
	size_t idx;
};

static int cmp_key(const struct carve_frag_task_key *a, const struct carve_frag_task_key *b)
{
	if (a->cpu_milli != b->cpu_milli)
		return a->cpu_milli < b->cpu_milli ? -1 : 1;
	if (a->gpu_milli != b->gpu_milli)
		return a->gpu_milli < b->gpu_milli ? -1 : 1;
	if (a->num_gpu != b->num_gpu)
		return a->num_gpu < b->num_gpu ? -1 : 1;
	return strcmp(a->spec ? a->spec : "", b->spec ? b->spec : "");
}

/* By key, then by position (so a group's first entry is its first task). */
static int cmp_kent(const void *a, const void *b)
{
	const struct kent *x = a, *y = b;
	int r = cmp_key(&x->k, &y->k);

	if (r)
		return r;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

struct group {
	const struct carve_frag_task_key *k;
	size_t first, count;
};

/* Count descending, then the larger key first (the simulator's order). */
static int cmp_grp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return -cmp_key(x->k, y->k);
}

long carve_frag_typical_types(const struct carve_frag_task_key *tasks, size_t n, double pct,
			      struct carve_frag_typical *out)
{
	struct kent *e;
	struct group *g;
	size_t i, ng = 0, kept = 0;
	double expected, cum = 0;

	if (!n)
		return 0;
	if (!tasks || !out)
		return CARVE_EINVAL;
	e = carve_calloc(n, sizeof(*e));
	g = carve_calloc(n, sizeof(*g));
	if (!e || !g) {
		carve_free(e);
		carve_free(g);
		return CARVE_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		e[i].k = tasks[i];
		e[i].idx = i;
	}
	qsort(e, n, sizeof(*e), cmp_kent);
	for (i = 0; i < n; i++) {
		if (!ng || cmp_key(g[ng - 1].k, &e[i].k)) {
			g[ng].k = &tasks[e[i].idx];
			g[ng].first = e[i].idx;
			g[ng].count = 0;
			ng++;
		}
		g[ng - 1].count++;
	}
	qsort(g, ng, sizeof(*g), cmp_grp);
	/* Keys one at a time until their tasks reach pct % of all (as the
	 * simulator computes it), then renormalise over the kept ones. */
	expected = pct * (double)n / 100.0;
	while (kept < ng && cum < expected)
		cum += (double)g[kept++].count;
	for (i = 0; i < kept; i++) {
		out[i].task = g[i].first;
		out[i].count = g[i].count;
		out[i].prob = (double)g[i].count / cum;
	}
	carve_free(e);
	carve_free(g);
	return (long)kept;
}

/* ---- what the pending pods cannot use (any request kind) -------------------------- */

double carve_frag_pending(struct carve_placer *p, const struct carve_pod_req *types,
			  const double *w, size_t n)
{
	uint32_t nn, k;
	double *u, *acc;
	struct carve_rng rng;
	double f = 0;
	size_t t;

	if (!p || (n && (!types || !w)))
		return -1;
	nn = (uint32_t)carve_cluster_node_count(p->c);
	u = carve_calloc((size_t)nn + 1, sizeof(*u));
	acc = carve_calloc((size_t)nn + 1, sizeof(*acc));
	if (!u || !acc) {
		carve_free(u);
		carve_free(acc);
		return -1;
	}
	/* a policy's choice may draw from the placer's stream (random):
	 * measuring must not move it */
	rng = p->rng;
	for (k = 0; k < nn; k++)
		u[k] = (double)carve__node_gpu_free(p, k) / 1000.0;
	for (t = 0; t < n; t++) {
		if (!(w[t] > 0))
			continue;
		carve__req_models(p, &types[t]);
		for (k = 0; k < nn; k++)
			if (u[k] > 0 && isnan(carve__node_eval(p, &types[t], k)))
				acc[k] += w[t];
	}
	p->rng = rng;
	for (k = 0; k < nn; k++)
		f += u[k] * acc[k];
	carve_free(u);
	carve_free(acc);
	return f;
}
