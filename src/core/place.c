/*
 * place.c - placement (include/carve/place.h): free state per node and per
 * GPU, feasibility of a pod on a node, the default GPU choice, atomic gangs
 * and topology domains.  Policies (policy.c) only score candidates.
 *
 * A gang is placed pod by pod straight into the live state; the caller's
 * out[] array is the undo log: on any failure the pods placed so far are
 * released in reverse, and release is the exact inverse of apply on
 * integers, so a failed gang leaves the state bit-identical (the RNG is
 * restored too).  Dynamic MIG repartitions of idle GPUs are applied with
 * the pod that needs them and reverted by the release that leaves the GPU
 * idle, so they are part of that undo.  Layout and invariants:
 * place_int.h; the model: docs/internals/PLACEMENT.md.  Libc only; no
 * allocation after create.
 *
 * Speed (PLACEMENT.md, Performance): a pod is placed from the decision
 * cache (place_cache.c) when its policy is cacheable, else by a scan;
 * both pick by the same rule.  Every change of a node's state goes through
 * account(), which tells the caches; nothing else may change the state.
 * Static feasibility is answered once per node class (scan_classes).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "carve/gpumodel.h"
#include "carve/match.h"
#include "place_int.h"

/* ---- create / destroy ---------------------------------------------------- */

/* Normalised canonical name of a GPU model: the table's name when known. */
static int model_key(const char *name, char *out)
{
	const struct carve_gpu_model *m;

	if (!name)
		return -1;
	m = carve_gpu_model_find(name);
	return carve__gpu_name_normalize(m ? m->name : name, out, CARVE__GPU_NAME_MAX);
}

static int find_model(const struct carve_placer *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->nmodels; i++)
		if (!strcmp(p->model_key[i], key))
			return (int)i;
	return -1;
}

static bool layout_eq(const struct carve_mig_layout *a, const struct carve_mig_layout *b)
{
	return a->n == b->n && !memcmp(a->inst, b->inst, a->n * sizeof(a->inst[0]));
}

/* Memory slices the instances of l cover. */
static uint8_t layout_slices(const struct carve_mig_model *m, const struct carve_mig_layout *l)
{
	unsigned i, s = 0;

	for (i = 0; i < l->n; i++)
		s += m->profiles[l->inst[i].profile].mem_slices;
	return (uint8_t)s;
}

/* Fills ginfo (models, replica bit offsets, MIG coverage), the MIG layouts. */
static int scan_gpus(struct carve_placer *p)
{
	char key[CARVE__GPU_NAME_MAX];
	size_t g, words = 0;

	for (g = 0; g < p->ngpus; g++) {
		const struct carve_gpu *v = carve__gpu(p, (uint32_t)g);
		struct carve__gpu_info *gi = &p->ginfo[g];
		int m = -1;

		if (model_key(v->model, key) == 0) {
			m = find_model(p, key);
			if (m < 0) {
				void *n = carve_realloc(p->model_key,
							(p->nmodels + 1) * sizeof(*p->model_key));

				if (!n)
					return CARVE_ENOMEM;
				p->model_key = n;
				memcpy(p->model_key[p->nmodels], key, sizeof(key));
				m = (int)p->nmodels++;
			}
		}
		gi->model = m;
		gi->mode = (uint8_t)((unsigned)v->sharing & CARVE__GI_SHARE);
		if (v->sharing == CARVE_SHARE_TIMESLICE && v->fail_gt_one)
			gi->mode |= CARVE__GI_FAILGT1;
		if (v->sharing == CARVE_SHARE_MIG && v->mig_model)
			gi->mode |= CARVE__GI_MIGMODEL;
		if (v->sharing == CARVE_SHARE_TIMESLICE) {
			gi->rcap = v->replicas > CARVE__MAX_REPLICAS ? CARVE__MAX_REPLICAS
								     : v->replicas;
			gi->rbits = (uint32_t)words;
			words += (gi->rcap + 63u) / 64u;
		} else if (v->sharing == CARVE_SHARE_MIG && v->mig_model) {
			p->mig[g] = v->mig;
			gi->mig_slices = layout_slices(v->mig_model, &v->mig);
			p->nmig++;
		}
		p->rpart[g] = -1;
	}
	p->nrbits = words;
	p->rbits = carve_calloc(words ? words : 1, sizeof(*p->rbits));
	p->model_ok = carve_calloc(p->nmodels ? p->nmodels : 1, sizeof(*p->model_ok));
	p->reparts = carve_calloc(p->nmig ? p->nmig : 1, sizeof(*p->reparts));
	return p->rbits && p->model_ok && p->reparts ? 0 : CARVE_ENOMEM;
}

/* ---- node classes ------------------------------------------------------------ */

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

/* What node_static_ok() and resolve_gpu() read of GPU g. */
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
static int scan_classes(struct carve_placer *p)
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

static const struct carve__policy *find_policy(const char *name)
{
	int i;

	for (i = 0; name && i < carve__npolicies; i++)
		if (!strcmp(carve__policies[i].name, name))
			return &carve__policies[i];
	return NULL;
}

struct carve_placer *carve_placer_create(const struct carve_cluster *c, const char *policy,
					 uint64_t seed, struct carve_error *err)
{
	const struct carve__policy *pol = find_policy(policy);
	struct carve_placer *p;
	size_t n, i;

	if (!c) {
		carve_errorf(err, CARVE_EINVAL, "no cluster");
		return NULL;
	}
	if (!pol) {
		carve_errorf(err, CARVE_EINVAL,
			     "unknown placement policy '%s' (binpack, spread, bestfit, dotprod, "
			     "gpupacking, gpuclustering, random, fgd)",
			     policy ? policy : "(null)");
		return NULL;
	}
	p = carve_calloc(1, sizeof(*p));
	if (!p)
		goto out_nomem;
	p->c = c;
	p->pol = pol;
	p->nnodes = n = carve_cluster_node_count(c);
	p->ngpus = carve_cluster_gpu_count(c);
	p->cn = carve_cluster_node(c, 0);
	p->cg = carve_cluster_gpu(c, 0);
	for (i = 0; i < n; i++) {
		const struct carve_node *v = carve_cluster_node(c, (uint32_t)i);

		if (v->cpu_milli > p->max_cpu)
			p->max_cpu = v->cpu_milli;
		if (v->ngpus > p->max_node_gpus)
			p->max_node_gpus = v->ngpus;
	}
	p->max_gpu_milli = (int64_t)p->max_node_gpus * 1000;
	/* +1 keeps every calloc non-zero for an empty cluster. */
	p->nodes = carve_calloc(n + 1, sizeof(*p->nodes));
	p->gpus = carve_calloc(p->ngpus + 1, sizeof(*p->gpus));
	p->ginfo = carve_calloc(p->ngpus + 1, sizeof(*p->ginfo));
	p->rank = carve_calloc(n + 1, sizeof(*p->rank));
	p->all = carve_calloc(n + 1, sizeof(*p->all));
	p->fit = carve_calloc(n + 1, sizeof(*p->fit));
	p->tsort = carve_calloc(n + 1, sizeof(*p->tsort));
	p->doms = carve_calloc(n + 1, sizeof(*p->doms));
	p->dnodes = carve_calloc(n + 1, sizeof(*p->dnodes));
	p->gorder = carve_calloc(p->max_node_gpus + 1, sizeof(*p->gorder));
	p->mig = carve_calloc(p->ngpus + 1, sizeof(*p->mig));
	p->rpart = carve_calloc(p->ngpus + 1, sizeof(*p->rpart));
	if (!p->nodes || !p->gpus || !p->ginfo || !p->rank || !p->all || !p->fit ||
	    !p->tsort || !p->doms || !p->dnodes || !p->gorder || !p->mig || !p->rpart ||
	    scan_gpus(p) || scan_classes(p) || carve__cache_init(p))
		goto out_nomem;
	carve_rng_seed(&p->rng, seed);
	/* Seeded permutation of node ids (Fisher-Yates); rank = position. */
	for (i = 0; i < n; i++)
		p->all[i] = (uint32_t)i;
	for (i = n; i > 1; i--) {
		size_t j = (size_t)carve_rng_below(&p->rng, i);
		uint32_t t = p->all[i - 1];

		p->all[i - 1] = p->all[j];
		p->all[j] = t;
	}
	for (i = 0; i < n; i++) {
		p->rank[p->all[i]] = (uint32_t)i;
		p->all[i] = (uint32_t)i;
	}
	return p;

out_nomem:
	carve_placer_destroy(p);
	carve_errorf(err, CARVE_ENOMEM, "out of memory");
	return NULL;
}

static void mix_free(struct carve__mix *m)
{
	carve_free(m->types);
	carve_free(m->prob);
	carve_free(m->model_ok);
	carve_free(m->strings);
	carve_free(m->names);
	carve_free(m->psmall);
	carve_free(m->pfit);
	carve_free(m->pacc);
	carve_free(m->pbase);
	carve_free(m->pok);
	memset(m, 0, sizeof(*m));
}

void carve_placer_destroy(struct carve_placer *p)
{
	if (!p)
		return;
	mix_free(&p->mix);
	carve__cache_free(p);
	carve_free(p->nodes);
	carve_free(p->gpus);
	carve_free(p->ginfo);
	carve_free(p->rbits);
	carve_free(p->rank);
	carve_free(p->model_key);
	carve_free(p->model_ok);
	carve_free(p->all);
	carve_free(p->fit);
	carve_free(p->tsort);
	carve_free(p->doms);
	carve_free(p->dnodes);
	carve_free(p->gorder);
	carve_free(p->mig);
	carve_free(p->wants);
	carve_free(p->rpart);
	carve_free(p->reparts);
	carve_free(p->cls);
	carve_free(p->crep);
	carve_free(p->cgen);
	carve_free(p->cfit);
	carve_free(p);
}

/* ---- the request's GPU models ---------------------------------------------- */

/* Which distinct cluster models the names allow, into ok[nmodels]. */
static void models_allowed(const struct carve_placer *p, size_t nnames,
			   const char *const *names, bool *ok)
{
	char key[CARVE__GPU_NAME_MAX];
	size_t i;
	int m;

	memset(ok, 0, p->nmodels * sizeof(*ok));
	for (i = 0; i < nnames; i++)
		if (model_key(names[i], key) == 0 && (m = find_model(p, key)) >= 0)
			ok[m] = true;
}

/* ---- the target mix (for fgd) ------------------------------------------------ */

static size_t slen(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

static const char *scopy(char **at, const char *s)
{
	char *r = *at;
	size_t n = slen(s);

	if (!s)
		return NULL;
	memcpy(r, s, n);
	*at += n;
	return r;
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

int carve_placer_set_mix(struct carve_placer *p, const struct carve_pod_req *types,
			 const double *prob, size_t n)
{
	struct carve__mix m;
	size_t t, k, chars = 0, nnames = 0, nn = 0, rows;
	char *at;

	if (n && (!types || !prob))
		return CARVE_EINVAL;
	for (t = 0; t < n; t++) {
		if (!(prob[t] >= 0) || (types[t].nmodels && !types[t].models))
			return CARVE_EINVAL;
		chars += slen(types[t].mig_profile);
		for (k = 0; k < types[t].nmodels; k++)
			chars += slen(types[t].models[k]);
		nnames += types[t].nmodels;
	}
	memset(&m, 0, sizeof(m));
	m.n = n;
	m.types = carve_calloc(n + 1, sizeof(*m.types));
	m.prob = carve_calloc(n + 1, sizeof(*m.prob));
	m.model_ok = carve_calloc(n * p->nmodels + 1, sizeof(*m.model_ok));
	m.strings = carve_malloc(chars + 1);
	m.names = carve_calloc(nnames + 1, sizeof(*m.names));
	rows = (p->nnodes + 1) * (n + 1);
	m.psmall = carve_calloc(rows, sizeof(*m.psmall));
	m.pfit = carve_calloc(rows, sizeof(*m.pfit));
	m.pacc = carve_calloc(rows, sizeof(*m.pacc));
	m.pbase = carve_calloc(p->nnodes + 1, sizeof(*m.pbase));
	m.pok = carve_calloc(p->nnodes + 1, sizeof(*m.pok));
	if (!m.types || !m.prob || !m.model_ok || !m.strings || !m.names || !m.psmall ||
	    !m.pfit || !m.pacc || !m.pbase || !m.pok) {
		mix_free(&m);
		return CARVE_ENOMEM;
	}
	at = m.strings;
	for (t = 0; t < n; t++) {
		struct carve_pod_req *d = &m.types[t];
		const struct carve_pod_req *s = &types[t];

		d->cpu_milli = s->cpu_milli;
		d->memory_milli = s->memory_milli;
		d->gpu = s->gpu;
		d->count = s->count;
		d->milli = s->milli;
		d->mem_mib = s->mem_mib;
		d->mig_profile = scopy(&at, s->mig_profile);
		d->nmodels = s->nmodels;
		d->models = s->nmodels ? &m.names[nn] : NULL;
		for (k = 0; k < s->nmodels; k++)
			m.names[nn++] = scopy(&at, s->models[k]);
		m.prob[t] = prob[t];
		if (s->nmodels)
			models_allowed(p, s->nmodels, s->models, &m.model_ok[t * p->nmodels]);
		else
			for (k = 0; k < p->nmodels; k++)
				m.model_ok[t * p->nmodels + k] = true;
	}
	mix_free(&p->mix);
	p->mix = m;
	carve__cache_invalidate(p);
	return 0;
}

/* ---- GPU views ------------------------------------------------------------------ */

static bool gpu_busy(const struct carve__gpu_state *s)
{
	return s->taken || s->mig_taken || s->rtaken || s->milli_used || s->mem_used;
}

int carve__gpu_cap_milli(const struct carve_placer *p, uint32_t g)
{
	return carve__share(p, g) == CARVE_SHARE_MIG && !p->ginfo[g].mig_slices ? 0 : 1000;
}

/* Free milli of MIG GPU g in state s were its layout l covering slices. */
static int mig_free_milli(const struct carve_placer *p, uint32_t g,
			  const struct carve__gpu_state *s, const struct carve_mig_layout *l,
			  unsigned slices)
{
	const struct carve_mig_model *m = carve__gpu(p, g)->mig_model;
	unsigned i, fs = 0;

	if (!slices)
		return 0;
	for (i = 0; i < l->n; i++)
		if (!(s->mig_taken & (1u << i)))
			fs += m->profiles[l->inst[i].profile].mem_slices;
	return (int)(1000u * fs / slices);
}

int carve__gpu_free_milli_in(const struct carve_placer *p, uint32_t g,
			     const struct carve__gpu_state *s)
{
	const struct carve__gpu_info *gi = &p->ginfo[g];

	switch (carve__share(p, g)) {
	case CARVE_SHARE_EXCLUSIVE:
		return s->taken ? 0 : 1000;
	case CARVE_SHARE_FRACTION:
		return 1000 - s->milli_used;
	case CARVE_SHARE_TIMESLICE:
		return gi->rcap ? (int)(1000L * (gi->rcap - s->rtaken) / gi->rcap) : 0;
	case CARVE_SHARE_MIG:
		return mig_free_milli(p, g, s, &p->mig[g], gi->mig_slices);
	}
	return 0;
}

/* s with the devices of c that sit on g applied. */
static void gpu_apply_devs(const struct carve_placer *p, uint32_t g, struct carve__gpu_state *s,
			   const struct carve__cand *c)
{
	int i;

	for (i = 0; i < c->ndevs; i++) {
		const struct carve_dev *d = &c->devs[i];

		if (d->gpu != g)
			continue;
		switch (carve__share(p, g)) {
		case CARVE_SHARE_EXCLUSIVE:
			s->taken = true;
			break;
		case CARVE_SHARE_MIG:
			s->mig_taken |= (uint8_t)(1u << d->mig);
			break;
		case CARVE_SHARE_TIMESLICE:
			s->rtaken++;
			break;
		case CARVE_SHARE_FRACTION:
			s->milli_used = (uint16_t)(s->milli_used + d->milli);
			if (i == 0)
				s->mem_used += c->mem_mib;
			break;
		}
	}
}

int carve__gpu_free_milli_after(const struct carve_placer *p, uint32_t g,
				const struct carve__cand *c)
{
	struct carve__gpu_state s = p->gpus[g];
	int k;

	gpu_apply_devs(p, g, &s, c);
	for (k = 0; k < c->nrepart; k++)
		if (c->repart[k] == g) {
			const struct carve_mig_model *m = carve__gpu(p, g)->mig_model;

			return mig_free_milli(p, g, &s, &c->rlayout[k],
					      layout_slices(m, &c->rlayout[k]));
		}
	return carve__gpu_free_milli_in(p, g, &s);
}

int64_t carve__node_gpu_free(const struct carve_placer *p, uint32_t node)
{
	const struct carve_node *n = carve__node(p, node);
	int64_t sum = 0;
	uint32_t g;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
		sum += carve__gpu_free_milli_in(p, g, &p->gpus[g]);
	return sum;
}

static bool cand_has_gpu(const struct carve__cand *c, uint32_t g)
{
	int i;

	for (i = 0; i < c->ndevs; i++)
		if (c->devs[i].gpu == g)
			return true;
	return false;
}

int64_t carve__node_gpu_free_after(const struct carve_placer *p, const struct carve__cand *c)
{
	const struct carve_node *n = carve__node(p, c->node);
	int64_t sum = 0;
	uint32_t g;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
		sum += cand_has_gpu(c, g) ? carve__gpu_free_milli_after(p, g, c)
					  : carve__gpu_free_milli_in(p, g, &p->gpus[g]);
	return sum;
}

int64_t carve__node_gpu_cap(const struct carve_placer *p, uint32_t node)
{
	const struct carve_node *n = carve__node(p, node);
	int64_t sum = 0;
	uint32_t g;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
		sum += carve__gpu_cap_milli(p, g);
	return sum;
}

int carve__node_fully_free_gpus(const struct carve_placer *p, uint32_t node)
{
	const struct carve_node *n = carve__node(p, node);
	uint32_t g;
	int k = 0;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
		k += carve__gpu_free_milli_in(p, g, &p->gpus[g]) == 1000;
	return k;
}

int64_t carve__node_cpu_cap(const struct carve_placer *p, uint32_t node)
{
	const struct carve_node *n = carve__node(p, node);

	return n->cpu_milli > 0 ? n->cpu_milli : 0;
}

enum carve_gpu_req carve_res_greq(enum carve_res_kind k)
{
	switch (k) {
	case CARVE_RK_GPU:
		return CARVE_GREQ_GPU;
	case CARVE_RK_REPLICA:
		return CARVE_GREQ_REPLICA;
	case CARVE_RK_MIG:
		return CARVE_GREQ_MIG;
	default:
		return CARVE_GREQ_NONE;
	}
}

int carve__req_class(const struct carve_pod_req *req)
{
	switch (req->gpu) {
	case CARVE_GREQ_NONE:
		return -1;
	case CARVE_GREQ_WHOLE:
		return req->count;
	default:
		return 0;
	}
}

/* ---- static feasibility: labels, affinity, taints, models ------------------------ */

bool carve__gpu_usable(const struct carve_placer *p, uint32_t g, const struct carve_pod_req *req)
{
	unsigned mode = p->ginfo[g].mode;
	enum carve_sharing sh = (enum carve_sharing)(mode & CARVE__GI_SHARE);
	int m = p->ginfo[g].model;

	switch (req->gpu) {
	case CARVE_GREQ_WHOLE:
		if (sh != CARVE_SHARE_EXCLUSIVE && sh != CARVE_SHARE_FRACTION)
			return false;
		break;
	case CARVE_GREQ_MIG:
		if (sh != CARVE_SHARE_MIG || !(mode & CARVE__GI_MIGMODEL))
			return false;
		break;
	case CARVE_GREQ_REPLICA:
		/* failRequestsGreaterThanOne: the device plugin refuses a pod
		 * asking for more than one replica. */
		if (sh != CARVE_SHARE_TIMESLICE || ((mode & CARVE__GI_FAILGT1) && req->count > 1))
			return false;
		break;
	case CARVE_GREQ_FRACTION:
		if (sh != CARVE_SHARE_FRACTION)
			return false;
		break;
	case CARVE_GREQ_GPU:
		if (sh == CARVE_SHARE_MIG)
			return false;
		break;
	default:
		return false;
	}
	return p->any_model || (m >= 0 && p->model_ok[m]);
}

/* Everything about node n that placements do not change. */
static bool node_static_ok(const struct carve_placer *p, uint32_t node,
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

/* node_static_ok() for the request of the current generation (set_models),
 * once per node class. */
static bool static_fit(struct carve_placer *p, uint32_t node, const struct carve_pod_req *req)
{
	uint32_t k = p->cls[node];

	if (p->cgen[k] != p->fitgen) {
		p->cgen[k] = p->fitgen;
		p->cfit[k] = node_static_ok(p, p->crep[k], req);
	}
	return p->cfit[k];
}

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

/* ---- the default GPU choice --------------------------------------------------------- */

static void add_dev(struct carve__cand *c, uint32_t g, int mig, int replica, int milli)
{
	struct carve_dev *d = &c->devs[c->ndevs++];

	memset(d, 0, sizeof(*d)); /* padding too: placements compare bytewise */
	d->gpu = g;
	d->mig = (int16_t)mig;
	d->replica = (int16_t)replica;
	d->milli = (int16_t)milli;
}

/* WHOLE: lowest-index free exclusive GPUs or fully free fractional GPUs. */
static int choose_whole(struct carve_placer *p, const struct carve_node *n,
			const struct carve_pod_req *req, struct carve__cand *c)
{
	uint32_t g;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus && c->ndevs < req->count; g++) {
		const struct carve__gpu_state *s = &p->gpus[g];

		if (!carve__gpu_usable(p, g, req) || gpu_busy(s))
			continue;
		add_dev(c, g, -1, -1,
			carve__share(p, g) == CARVE_SHARE_FRACTION ? 1000 : 0);
	}
	return c->ndevs == req->count ? 0 : CARVE_ENOFIT;
}

/*
 * Dynamic MIG: the layout an idle GPU of model m gets for a pod that still
 * needs `need` instances of profile prof.  Without wants: as many prof
 * instances as fit on an empty GPU.  With wants (p->wants): min(need, fit)
 * prof instances, then each wanted profile, then the largest profiles, as
 * many as still fit (carve_mig_layout_from_counts decides the starts).
 * 0, or -1 when there is none or it holds no more prof instances than cur.
 */
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
 * nothing changes until apply), lowest index first, as few as needed. */
static void choose_mig_dynamic(struct carve_placer *p, const struct carve_node *n,
			       const struct carve_pod_req *req, struct carve__cand *c)
{
	uint32_t g;
	unsigned i;

	for (g = n->gpu_first; g < n->gpu_first + n->ngpus && c->ndevs < req->count; g++) {
		const struct carve_gpu *v = carve__gpu(p, g);
		struct carve_mig_layout *nl;
		int prof;

		if (!carve__gpu_usable(p, g, req) || gpu_busy(&p->gpus[g]) || cand_has_gpu(c, g) ||
		    c->nrepart >= CARVE_POD_MAX_GPUS)
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
				add_dev(c, g, (int)i, -1, 0);
	}
}

/* MIG: free instances of the profile, GPUs by index, instances in layout order;
 * with Dynamic MIG, then idle GPUs repartitioned (choose_mig_dynamic). */
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
				add_dev(c, g, (int)i, -1, 0);
	}
	if (c->ndevs < req->count && p->mig_dynamic)
		choose_mig_dynamic(p, n, req, c);
	return c->ndevs == req->count ? 0 : CARVE_ENOFIT;
}

static bool rbit(const struct carve_placer *p, uint32_t g, unsigned r)
{
	return (p->rbits[p->ginfo[g].rbits + r / 64] >> (r % 64)) & 1u;
}

/* Takes k free replica numbers of g, lowest first. */
static void take_replicas(struct carve_placer *p, uint32_t g, int k, struct carve__cand *c)
{
	unsigned r;

	for (r = 0; r < p->ginfo[g].rcap && k > 0; r++)
		if (!rbit(p, g, r)) {
			add_dev(c, g, -1, (int)r, 0);
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
	add_dev(c, g, -1, -1, req->milli);
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
		break; /* resolved per node by place_pod() */
	}
	return CARVE_ENOFIT;
}

/* ---- apply / release ------------------------------------------------------------------- */

/* Class of a placement, from its devices: whole GPUs (exclusive, or a
 * fractional GPU taken at 1000 milli) give their count, anything else 0. */
static int place_class(const struct carve_placer *p, const struct carve_pod_place *pl)
{
	int i;

	for (i = 0; i < pl->ndevs; i++) {
		enum carve_sharing sh = carve__share(p, pl->devs[i].gpu);

		if (sh == CARVE_SHARE_EXCLUSIVE)
			continue;
		if (sh == CARVE_SHARE_FRACTION && pl->devs[i].milli == 1000)
			continue;
		return 0;
	}
	return pl->ndevs;
}

static void set_rbit(struct carve_placer *p, uint32_t g, unsigned r, bool on)
{
	uint64_t *w = &p->rbits[p->ginfo[g].rbits + r / 64];

	if (on)
		*w |= 1ULL << (r % 64);
	else
		*w &= ~(1ULL << (r % 64));
}

/* Dynamic MIG: GPU g (idle) takes layout l; logged. */
static void repartition(struct carve_placer *p, uint32_t g, const struct carve_mig_layout *l)
{
	struct carve_repartition *r = &p->reparts[p->nreparts];

	r->gpu = g;
	r->from = p->mig[g];
	r->to = *l;
	p->rpart[g] = (int32_t)p->nreparts++;
	p->mig[g] = *l;
	p->ginfo[g].mig_slices = layout_slices(carve__gpu(p, g)->mig_model, l);
}

/* Dynamic MIG: GPU g went idle again; back to its layout before, entry dropped. */
static void unrepartition(struct carve_placer *p, uint32_t g)
{
	size_t k = (size_t)p->rpart[g], j;

	p->mig[g] = p->reparts[k].from;
	p->ginfo[g].mig_slices = layout_slices(carve__gpu(p, g)->mig_model, &p->mig[g]);
	p->rpart[g] = -1;
	for (j = k + 1; j < p->nreparts; j++) {
		p->reparts[j - 1] = p->reparts[j];
		p->rpart[p->reparts[j - 1].gpu] = (int32_t)(j - 1);
	}
	p->nreparts--;
}

/* Takes (sign 1) or gives back (sign -1) what pl holds. */
static void account(struct carve_placer *p, const struct carve_pod_place *pl, int sign)
{
	struct carve__node_state *ns = &p->nodes[pl->node];
	int i, cls;

	carve__cache_touch(p, pl->node);
	if (p->mix.pok)
		p->mix.pok[pl->node] = false;
	ns->cpu_used += sign * pl->cpu_milli;
	ns->mem_used += sign * pl->memory_milli;
	ns->pods_used += sign;
	for (i = 0; i < pl->ndevs; i++) {
		const struct carve_dev *d = &pl->devs[i];
		struct carve__gpu_state *s = &p->gpus[d->gpu];
		bool was = gpu_busy(s);

		switch (carve__share(p, d->gpu)) {
		case CARVE_SHARE_EXCLUSIVE:
			s->taken = sign > 0;
			break;
		case CARVE_SHARE_MIG:
			if (sign > 0)
				s->mig_taken |= (uint8_t)(1u << d->mig);
			else
				s->mig_taken &= (uint8_t)~(1u << d->mig);
			break;
		case CARVE_SHARE_TIMESLICE:
			set_rbit(p, d->gpu, (unsigned)d->replica, sign > 0);
			s->rtaken = (uint16_t)(s->rtaken + sign);
			break;
		case CARVE_SHARE_FRACTION:
			s->milli_used = (uint16_t)(s->milli_used + sign * d->milli);
			if (i == 0)
				s->mem_used = (uint32_t)((int64_t)s->mem_used + sign * (int64_t)pl->mem_mib);
			break;
		}
		if (was != gpu_busy(s))
			ns->gpus_busy = (uint32_t)(ns->gpus_busy + (was ? -1 : 1));
	}
	if (pl->ndevs > 0) {
		cls = place_class(p, pl);
		ns->gpu_pods = (uint32_t)(ns->gpu_pods + sign);
		ns->klass[cls] = (uint32_t)(ns->klass[cls] + sign);
	}
	for (i = 0; sign < 0 && i < pl->ndevs; i++) {
		uint32_t g = pl->devs[i].gpu;

		if (p->rpart[g] >= 0 && !gpu_busy(&p->gpus[g]))
			unrepartition(p, g);
	}
}

static void apply(struct carve_placer *p, const struct carve_pod_req *req,
		  const struct carve__cand *c, struct carve_pod_place *out)
{
	int k;

	for (k = 0; k < c->nrepart; k++)
		repartition(p, c->repart[k], &c->rlayout[k]);
	memset(out, 0, sizeof(*out));
	out->node = c->node;
	out->ndevs = c->ndevs;
	memcpy(out->devs, c->devs, (size_t)c->ndevs * sizeof(c->devs[0]));
	out->mem_mib = c->mem_mib;
	out->cpu_milli = req->cpu_milli;
	out->memory_milli = req->memory_milli;
	account(p, out, 1);
}

static bool place_sane(const struct carve_placer *p, const struct carve_pod_place *pl)
{
	int i;

	if (pl->node >= p->nnodes || pl->ndevs < 0 || pl->ndevs > CARVE_POD_MAX_GPUS)
		return false;
	for (i = 0; i < pl->ndevs; i++)
		if (pl->devs[i].gpu >= p->ngpus)
			return false;
	return true;
}

void carve_placer_release(struct carve_placer *p, const struct carve_pod_place *pl, size_t n)
{
	size_t i;

	if (!p || !pl)
		return;
	for (i = n; i-- > 0;)
		if (place_sane(p, &pl[i]))
			account(p, &pl[i], -1);
}

/* True when what d names on GPU g is free now. */
static bool dev_free(const struct carve_placer *p, const struct carve_dev *d, uint32_t mem_mib)
{
	const struct carve_gpu *v = carve__gpu(p, d->gpu);
	const struct carve__gpu_state *s = &p->gpus[d->gpu];

	switch (v->sharing) {
	case CARVE_SHARE_EXCLUSIVE:
		return !s->taken;
	case CARVE_SHARE_MIG:
		return d->mig >= 0 && d->mig < p->mig[d->gpu].n && !(s->mig_taken & (1u << d->mig));
	case CARVE_SHARE_TIMESLICE:
		return d->replica >= 0 && (unsigned)d->replica < p->ginfo[d->gpu].rcap &&
		       !rbit(p, d->gpu, (unsigned)d->replica);
	case CARVE_SHARE_FRACTION:
		return d->milli >= 0 && s->milli_used + d->milli <= 1000 &&
		       (!v->memory_mib || (uint64_t)s->mem_used + mem_mib <= v->memory_mib);
	}
	return false;
}

int carve_placer_retake(struct carve_placer *p, const struct carve_pod_place *pl, size_t n)
{
	size_t i;
	int k;

	if (!p || (n && !pl))
		return CARVE_EINVAL;
	for (i = 0; i < n; i++) {
		bool ok = place_sane(p, &pl[i]);

		for (k = 0; ok && k < pl[i].ndevs; k++)
			ok = dev_free(p, &pl[i].devs[k], k == 0 ? pl[i].mem_mib : 0);
		if (!ok) {
			carve_placer_release(p, pl, i);
			return CARVE_EINVAL;
		}
		account(p, &pl[i], 1);
	}
	return 0;
}

bool carve_placer_is_mig_dynamic(const struct carve_placer *p)
{
	return p && p->mig_dynamic;
}

/* ---- placing one pod, a gang, topology --------------------------------------------------- */

/* Sets up any_model / model_ok for req; a new generation of class answers. */
static void set_models(struct carve_placer *p, const struct carve_pod_req *req)
{
	if (++p->fitgen == 0) { /* wrapped: forget every answer */
		memset(p->cgen, 0, (p->nclass + 1) * sizeof(*p->cgen));
		p->fitgen = 1;
	}
	p->any_model = req->nmodels == 0;
	if (!p->any_model)
		models_allowed(p, req->nmodels, req->models, p->model_ok);
}

/* fit[] for the candidates (set_models first). */
static void prepare_group(struct carve_placer *p, const struct carve_pod_req *req,
			  const uint32_t *cands, size_t ncands)
{
	size_t i;

	for (i = 0; i < ncands; i++)
		p->fit[cands[i]] = static_fit(p, cands[i], req);
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

void carve__req_models(struct carve_placer *p, const struct carve_pod_req *req)
{
	set_models(p, req);
}

double carve__node_eval(struct carve_placer *p, const struct carve_pod_req *greq, uint32_t node)
{
	struct carve__cand c;
	struct carve_pod_req tmp;
	const struct carve_pod_req *rq;

	if (!static_fit(p, node, greq))
		return NAN;
	return eval_on(p, greq, node, &c, &tmp, &rq);
}

/* One pod on the best of cands (fit[] set by prepare_group), or on the
 * node the decision cache slot names (cands are all nodes), or the root of
 * a gang-local tree over cands (slot->map == cands). */
static int place_pod(struct carve_placer *p, const struct carve_pod_req *greq,
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
		apply(p, req, &best, out);
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
	apply(p, breq, &best, out);
	return 0;
}

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
		set_models(p, groups[g].req);
		if (cands == p->all)
			slot = carve__cache_get(p, groups[g].req);
		else if (groups[g].count > 1) /* a topology domain */
			slot = carve__cache_local(p, groups[g].req, cands, ncands);
		if (!slot)
			prepare_group(p, groups[g].req, cands, ncands);
		for (k = 0; k < groups[g].count; k++) {
			rc = place_pod(p, groups[g].req, cands, ncands, slot, &out[done]);
			if (rc) {
				carve_placer_release(p, out, done);
				return rc;
			}
			done++;
		}
	}
	return 0;
}

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
/* Labels are a node class's (scan_classes): the label lookups of a class
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

/* ---- Dynamic MIG ---------------------------------------------------------------------------- */

int carve_placer_set_mig_dynamic(struct carve_placer *p, bool on)
{
	if (!p)
		return CARVE_EINVAL;
	p->mig_dynamic = on;
	carve__cache_invalidate(p);
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

/* ---- views and the invariant check -------------------------------------------------------- */

int64_t carve_placer_free_cpu(const struct carve_placer *p, uint32_t node)
{
	int64_t cap;

	if (!p || node >= p->nnodes)
		return 0;
	cap = carve__node_cpu_cap(p, node);
	return cap ? cap - p->nodes[node].cpu_used : INT64_MAX;
}

int carve_placer_gpu_free_milli(const struct carve_placer *p, uint32_t gpu)
{
	if (!p || gpu >= p->ngpus)
		return 0;
	return carve__gpu_free_milli_in(p, gpu, &p->gpus[gpu]);
}

int64_t carve_placer_node_gpu_free_milli(const struct carve_placer *p, uint32_t node)
{
	if (!p || node >= p->nnodes)
		return 0;
	return carve__node_gpu_free(p, node);
}

static int popcount64(uint64_t x)
{
	int n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

int carve_placer_gpu_free_units(const struct carve_placer *p, uint32_t gpu)
{
	const struct carve__gpu_state *s;
	const struct carve_gpu *v;

	if (!p || gpu >= p->ngpus)
		return 0;
	s = &p->gpus[gpu];
	v = carve__gpu(p, gpu);
	switch (v->sharing) {
	case CARVE_SHARE_EXCLUSIVE:
		return !s->taken;
	case CARVE_SHARE_MIG:
		return p->mig[gpu].n - popcount64(s->mig_taken);
	case CARVE_SHARE_TIMESLICE:
		return p->ginfo[gpu].rcap - s->rtaken;
	case CARVE_SHARE_FRACTION:
		return !gpu_busy(s);
	}
	return 0;
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
		if (gi->mig_slices != layout_slices(v->mig_model, &p->mig[g]))
			return carve_errorf(err, CARVE_EINVAL,
					    "node %s GPU %u: MIG slices %u do not match the layout",
					    name, v->index, gi->mig_slices);
		if (p->rpart[g] < 0 ? !layout_eq(&p->mig[g], &v->mig)
				    : ((size_t)p->rpart[g] >= p->nreparts ||
				       p->reparts[p->rpart[g]].gpu != g ||
				       !layout_eq(&p->reparts[p->rpart[g]].to, &p->mig[g]) ||
				       !layout_eq(&p->reparts[p->rpart[g]].from, &v->mig) ||
				       !gpu_busy(s)))
			return carve_errorf(err, CARVE_EINVAL,
					    "node %s GPU %u: MIG layout and repartition log disagree",
					    name, v->index);
		break;
	case CARVE_SHARE_TIMESLICE:
		words = (gi->rcap + 63u) / 64u;
		for (w = 0; w < words; w++)
			bits += popcount64(p->rbits[gi->rbits + w]);
		for (r = gi->rcap; r < words * 64; r++)
			if (rbit(p, g, r))
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
		busy += gpu_busy(&p->gpus[g]);
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
