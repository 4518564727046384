/*
 * place.c - the placer object (include/carve/place.h): create and destroy,
 * the static facts computed once at create (GPU models by normalised name,
 * sharing modes, replica bit offsets, MIG layouts copied from the cluster,
 * node classes via place_feas.c, the seeded node ranks), the target mix for
 * fragmentation-aware policies, and what a resource kind asks of the placer.
 *
 * The placer is split by job (layout and invariants of the whole: place_int.h;
 * the model: docs/internals/PLACEMENT.md):
 *   place.c        this file: the object and its static facts;
 *   place_feas.c   static feasibility (labels, affinity, taints, models), per
 *                  node class;
 *   place_pod.c    one pod: the default GPU choice per request kind, room,
 *                  the score of a node, the best node (scan or cache);
 *   place_state.c  the free state: GPU and node views, and account(), the
 *                  one place that changes it (apply, release, retake);
 *   place_gang.c   gangs all or nothing, topology domains, the public
 *                  carve_placer_place();
 *   place_mig.c    Dynamic MIG: repartition plans, the log, its settings;
 *   place_check.c  carve_placer_check(): every invariant of place_int.h;
 *   place_cache.c  the decision cache.
 * Policies (policy.c, policy_fgd.c) only score candidates and may choose
 * GPUs.  Everything is allocated here at create (the mix at
 * carve_placer_set_mix) and freed by destroy; placing allocates nothing.
 * The only randomness is p->rng, seeded here (carve_rng_seed).
 */
#include <string.h>

#include "carve/gpumodel.h"
#include "place_int.h"

/* ---- create / destroy ----------------------------------------------------------- */

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
			gi->mig_slices = carve__layout_slices(v->mig_model, &v->mig);
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
	    scan_gpus(p) || carve__scan_classes(p) || carve__cache_init(p))
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

/* ---- the request's GPU models --------------------------------------------------- */

/* Which distinct cluster models the names allow, into ok[nmodels]. */
void carve__models_allowed(const struct carve_placer *p, size_t nnames,
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

/* ---- the target mix (for fgd) --------------------------------------------------- */

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
			carve__models_allowed(p, s->nmodels, s->models, &m.model_ok[t * p->nmodels]);
		else
			for (k = 0; k < p->nmodels; k++)
				m.model_ok[t * p->nmodels + k] = true;
	}
	mix_free(&p->mix);
	p->mix = m;
	carve__cache_invalidate(p);
	return 0;
}

/* ---- requests ------------------------------------------------------------------- */

enum carve_gpu_req carve_res_greq(enum carve_res_kind k)
{
	switch (k) {
	case CARVE_RK_GPU:
		return CARVE_GREQ_GPU;
	case CARVE_RK_GPU_WHOLE:
		return CARVE_GREQ_WHOLE;
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
