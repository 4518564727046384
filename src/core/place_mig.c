/*
 * place_mig.c - Dynamic MIG (docs/internals/PLACEMENT.md): which idle MIG
 * GPUs of a node a MIG request may repartition and to which layout
 * (planned in the candidate, nothing changed), carrying a plan out and
 * undoing it (the repartition log), and the settings and views of the
 * public API (carve_placer_set_mig_dynamic, _set_mig_wants,
 * _repartitions, _mig_layout).
 *
 * Invariants: the log p->reparts lists exactly the repartitions the current
 * placements stand on, at most one per GPU, oldest first; p->rpart[g] is
 * g's entry or -1; an entry's `from` is the cluster's layout and `to` is
 * p->mig[g]; a GPU with an entry is busy.  The log's room (one entry per
 * MIG GPU) is allocated at create; carve_placer_set_mig_wants() allocates
 * one block for the wanted profiles (freed by destroy or the next call).
 */
#include <string.h>

#include "place_int.h"

/* ---- choosing a repartition ----------------------------------------------------- */

/* Adds instances of profile q to counts while a legal layout still holds
 * them (at most `most`); the layout of the last success in *out. */
static void fill_profile(const struct carve_mig_model *m, int q, int most, int *counts,
			 struct carve_mig_layout *out)
{
	while (most-- > 0) {
		counts[q]++;
		if (carve_mig_layout_from_counts(m, counts, out, NULL)) {
			counts[q]--;
			return;
		}
	}
}

/*
 * The layout an idle GPU of model m gets for a pod that still needs `need`
 * instances of profile prof.  Without wants: as many prof instances as fit
 * on an empty GPU.  With wants (p->wants): min(need, fit) prof instances,
 * then each wanted profile, then the largest profiles, as many as still fit
 * (carve_mig_layout_from_counts decides the starts).  0, or -1 when there
 * is none or it holds no more prof instances than cur.
 */
static int repart_layout(const struct carve_placer *p, const struct carve_mig_model *m,
			 int prof, int need, const struct carve_mig_layout *cur,
			 struct carve_mig_layout *out)
{
	struct carve_mig_layout empty = {0};
	int counts[32] = {0}, have = 0, fit, q, k;
	unsigned i;
	size_t w;

	if (m->nprofiles > 32)
		return -1;
	fit = carve_mig_fit_count(m, &empty, prof);
	for (i = 0; i < cur->n; i++)
		have += cur->inst[i].profile == prof;
	if (!p->nwants) {
		counts[prof] = fit;
		if (counts[prof] <= have || carve_mig_layout_from_counts(m, counts, out, NULL))
			return -1;
		return 0;
	}
	/* Mixed: the pod's instances, then the wanted profiles in turn, then
	 * the largest ones, each as many as still fit. */
	counts[prof] = need < fit ? need : fit;
	if (counts[prof] <= have || carve_mig_layout_from_counts(m, counts, out, NULL))
		return -1;
	for (w = 0; w < p->nwants; w++) {
		q = carve_mig_profile_find(m, p->wants[w]);
		if (q >= 0 && !m->profiles[q].media)
			fill_profile(m, q, CARVE_MIG_MAX_INST, counts, out);
	}
	for (k = m->mem_slices; k > 0; k--)
		for (q = 0; q < m->nprofiles; q++)
			if (m->profiles[q].mem_slices == k && !m->profiles[q].media)
				fill_profile(m, q, CARVE_MIG_MAX_INST, counts, out);
	return 0;
}

/* The rest of a MIG request from idle GPUs repartitioned (planned in c;
 * nothing changes until carve__apply), lowest index first, as few as
 * needed. */
void carve__choose_mig_dynamic(struct carve_placer *p, const struct carve_node *n,
			       const struct carve_pod_req *req, struct carve__cand *c)
{
	uint32_t g;
	unsigned i;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus && c->ndevs < req->count; g++) {
		const struct carve_gpu *v = carve__gpu(p, g);
		struct carve_mig_layout *nl;
		int prof;

		if (!carve__gpu_usable(p, g, req) || carve__gpu_busy(&p->gpus[g]) ||
		    carve__cand_has_gpu(c, g) || c->nrepart >= CARVE_POD_MAX_GPUS)
			continue;
		prof = carve_mig_profile_find(v->mig_model, req->mig_profile);
		nl = &c->rlayout[c->nrepart];
		memset(nl, 0, sizeof(*nl));
		if (prof < 0 || repart_layout(p, v->mig_model, prof, req->count - c->ndevs,
					      &p->mig[g], nl))
			continue;
		c->repart[c->nrepart++] = g;
		for (i = 0; i < nl->n && c->ndevs < req->count; i++)
			if (nl->inst[i].profile == prof)
				carve__add_dev(c, g, (int)i, -1, 0);
	}
}

/* ---- the repartition log -------------------------------------------------------- */

/* Dynamic MIG: GPU g (idle) takes layout l; logged. */
void carve__mig_repartition(struct carve_placer *p, uint32_t g, const struct carve_mig_layout *l)
{
	struct carve_repartition *r = &p->reparts[p->nreparts];

	r->gpu = g;
	r->from = p->mig[g];
	r->to = *l;
	p->rpart[g] = (int32_t)p->nreparts++;
	p->mig[g] = *l;
	p->ginfo[g].mig_slices = carve__layout_slices(carve__gpu(p, g)->mig_model, l);
}

/* Dynamic MIG: GPU g went idle again; back to its layout before, entry dropped. */
void carve__mig_unrepartition(struct carve_placer *p, uint32_t g)
{
	size_t k = (size_t)p->rpart[g], j;

	p->mig[g] = p->reparts[k].from;
	p->ginfo[g].mig_slices = carve__layout_slices(carve__gpu(p, g)->mig_model, &p->mig[g]);
	p->rpart[g] = -1;
	for (j = k + 1; j < p->nreparts; j++) {
		p->reparts[j - 1] = p->reparts[j];
		p->rpart[p->reparts[j - 1].gpu] = (int32_t)(j - 1);
	}
	p->nreparts--;
}

/* ---- settings and views --------------------------------------------------------- */

int carve_placer_set_mig_dynamic(struct carve_placer *p, bool on)
{
	if (!p)
		return CARVE_EINVAL;
	p->mig_dynamic = on;
	carve__cache_invalidate(p);
	return 0;
}

bool carve_placer_is_mig_dynamic(const struct carve_placer *p)
{
	return p && p->mig_dynamic;
}

int carve_placer_set_mig_wants(struct carve_placer *p, const char *const *profiles,
			       const double *weights, size_t n)
{
	size_t i, j, chars = 0;
	size_t *ord;
	char **v, *at;

	if (!p || (n && (!profiles || !weights)))
		return CARVE_EINVAL;
	for (i = 0; i < n; i++) {
		if (!profiles[i])
			return CARVE_EINVAL;
		chars += strlen(profiles[i]) + 1;
	}
	carve_free(p->wants);
	p->wants = NULL;
	p->nwants = 0;
	carve__cache_invalidate(p);
	if (!n)
		return 0;
	ord = carve_malloc(n * sizeof(*ord));
	v = carve_malloc(n * sizeof(*v) + chars);
	if (!ord || !v) {
		carve_free(ord);
		carve_free(v);
		return CARVE_ENOMEM;
	}
	for (i = 0; i < n; i++) { /* stable insertion sort: heaviest first */
		for (j = i; j > 0 && weights[ord[j - 1]] < weights[i]; j--)
			ord[j] = ord[j - 1];
		ord[j] = i;
	}
	at = (char *)(v + n);
	for (i = 0; i < n; i++) {
		size_t len = strlen(profiles[ord[i]]) + 1;

		memcpy(at, profiles[ord[i]], len);
		v[i] = at;
		at += len;
	}
	carve_free(ord);
	p->wants = v;
	p->nwants = n;
	return 0;
}

size_t carve_placer_repartitions(const struct carve_placer *p,
				 const struct carve_repartition **out)
{
	if (out)
		*out = p ? p->reparts : NULL;
	return p ? p->nreparts : 0;
}

const struct carve_mig_layout *carve_placer_mig_layout(const struct carve_placer *p, uint32_t gpu)
{
	const struct carve_gpu *v;

	if (!p || gpu >= p->ngpus)
		return NULL;
	v = carve__gpu(p, gpu);
	return v->sharing == CARVE_SHARE_MIG && v->mig_model ? &p->mig[gpu] : NULL;
}
