/*
 * admission.c - manifests -> admission engine, and its decisions -> the
 * `carve admit` result (see include/carve/admission.h, docs/admit-json.md).
 *
 * Invariants: the engine only ever sees what the manifests say (no clock:
 * cycles run at the latest timestamp of the input); every object the engine
 * or the bridge refuses is reported once in m->diags at its position and
 * skipped; spec arrays handed to the engine live in a scratch arena that
 * dies with the build; results are always listed in workload-key order so
 * the same input prints the same bytes.  Volcano and KAI queues are
 * translated into ClusterQueues and Cohorts of the same engine, PodGroups
 * into workloads (docs/volcano-kai.md, "Mapping onto carve's quota model").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "carve/admission.h"
#include "carve/inventory.h"
#include "carve/place.h"
#include "carve/quantity.h"
#include "carve/resource.h"

/* ---- build context ---- */

/* One resource of a Volcano or KAI queue, in milli-units. */
struct xres {
	const char *name;
	int64_t nominal;        /* deserved, KAI quota; 0 when absent */
	int64_t cap;            /* capability, KAI limit (a cap on usage); when has_cap */
	int64_t guar;           /* guarantee (never lent); when has_guar */
	bool has_cap, has_guar;
};

/* A Volcano or KAI queue in Kueue's terms. */
struct xq {
	const struct carve_meta *meta;
	const char *parent;           /* as written; NULL: none */
	struct carve_pos parent_pos;
	int up;                       /* its parent queue in the family; -1: the root */
	bool is_root;                 /* Volcano's queue "root": the root cohort itself */
	bool is_parent;               /* other queues name it: a Cohort, runs nothing */
	bool skip;                    /* reported; the engine never sees it */
	bool added;                   /* the engine accepted it */
	bool res_full;                /* more than CARVE_RES_MAX resources */
	size_t nres;
	struct xres *res;             /* CARVE_RES_MAX entries */
	int64_t weight_milli;
	bool not_reclaimable;
	enum carve_stop_policy stop;
};

/* Volcano's queues or KAI's: one flavor, one root cohort, one name space. */
struct family {
	const char *what;             /* "Volcano Queue", "KAI Queue" (messages) */
	const char *flavor;           /* implicit ResourceFlavor */
	const char *root;             /* cohort of the top-level queues */
	const char *root_queue;       /* queue name that means the root; NULL: none */
	size_t n;
	struct xq *q;
	bool flavor_ok;
};

struct bld {
	struct carve_manifests *m;
	struct carve_admission *ad;
	struct carve_arena a;   /* scratch: specs, keys; freed when the build ends */
	bool *flavor_ok;        /* per m->flavors[i]: the engine accepted it */
	struct family vc, kai;  /* Volcano's and KAI's queues, translated */
	const struct carve_admission_opts *opts;
	bool nomem;
};

/* n zeroed elements of size from the scratch arena; NULL for n == 0 too. */
static void *scratch(struct bld *b, size_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	if (n > SIZE_MAX / size) {
		b->nomem = true;
		return NULL;
	}
	p = carve_arena_alloc(&b->a, n * size);
	if (!p)
		b->nomem = true;
	return p;
}

static struct carve_pos meta_pos(const struct carve_meta *meta)
{
	return meta->name_pos.line ? meta->name_pos : meta->pos;
}

/* "ns/name" for namespaced objects, "name" otherwise (scratch). */
static const char *obj_name(struct bld *b, const struct carve_meta *meta)
{
	size_t nl, sl;
	char *s;

	if (!meta->ns)
		return meta->name;
	nl = strlen(meta->ns);
	sl = strlen(meta->name);
	s = scratch(b, nl + sl + 2, 1);
	if (!s)
		return meta->name;
	memcpy(s, meta->ns, nl);
	s[nl] = '/';
	memcpy(s + nl + 1, meta->name, sl + 1);
	return s;
}

/* Reports an engine refusal of one object: the engine's text, prefixed
 * with "<Kind> <name>: " unless the text already names the object. */
static void refused(struct bld *b, const struct carve_meta *meta, struct carve_pos pos, int rc,
		    const struct carve_error *err)
{
	const char *name = obj_name(b, meta);
	const char *why = err->code && err->text[0] ? err->text : carve_strerror(rc);

	if (rc == CARVE_ENOMEM) {
		b->nomem = true;
		return;
	}
	if (strstr(why, name))
		carve_diag_error(&b->m->diags, pos, "%s", why);
	else
		carve_diag_error(&b->m->diags, pos, "%s %s: %s", meta->kind, name, why);
}

/* ---- small conversions ---- */

static const struct carve_label *conv_kv(struct bld *b, const struct carve_kvlist *l)
{
	struct carve_label *v = scratch(b, l->n, sizeof(*v));
	size_t i;

	for (i = 0; v && i < l->n; i++) {
		v[i].key = l->v[i].key;
		v[i].value = l->v[i].value;
	}
	return v;
}

static const struct carve_toleration_spec *conv_tols(struct bld *b, size_t n,
						     const struct carve_toleration *t)
{
	struct carve_toleration_spec *v = scratch(b, n, sizeof(*v));
	size_t i;

	for (i = 0; v && i < n; i++) {
		v[i].key = t[i].key;
		v[i].op = t[i].op;
		v[i].value = t[i].value;
		v[i].effect = t[i].effect;
	}
	return v;
}

/* ---- flavors ---- */

static void add_flavors(struct bld *b)
{
	size_t i, j;

	for (i = 0; i < b->m->nflavors && !b->nomem; i++) {
		const struct carve_mf_flavor *f = &b->m->flavors[i];
		struct carve_taint_spec *taints = scratch(b, f->ntaints, sizeof(*taints));
		struct carve_flavor_spec s;
		struct carve_error err = {0};
		int rc;

		for (j = 0; taints && j < f->ntaints; j++) {
			taints[j].key = f->node_taints[j].key;
			taints[j].value = f->node_taints[j].value;
			taints[j].effect = f->node_taints[j].effect;
		}
		memset(&s, 0, sizeof(s));
		s.name = f->meta.name;
		s.nlabels = f->node_labels.n;
		s.labels = conv_kv(b, &f->node_labels);
		s.ntaints = f->ntaints;
		s.taints = taints;
		s.ntolerations = f->ntolerations;
		s.tolerations = conv_tols(b, f->ntolerations, f->tolerations);
		if (f->topology_name) {
			const struct carve_mf_topology *t =
				carve_mf_find_topology(b->m, f->topology_name);

			if (!t) {
				carve_diag_error(&b->m->diags, f->topology_pos,
						 "ResourceFlavor %s: topologyName '%s' names no "
						 "Topology", f->meta.name, f->topology_name);
			} else {
				s.ntopology = t->nlevels;
				s.topology = t->levels;
			}
		}
		if (b->nomem)
			return;
		rc = carve_adm_add_flavor(b->ad->adm, &s, &err);
		if (rc < 0)
			refused(b, &f->meta, meta_pos(&f->meta), rc, &err);
		else
			b->flavor_ok[i] = true;
	}
}

/* ---- resource groups ---- */

static bool flavor_known(struct bld *b, const char *name)
{
	const struct carve_mf_flavor *f = carve_mf_find_flavor(b->m, name);

	return f && b->flavor_ok[f - b->m->flavors];
}

/*
 * One manifest resource group as the engine's quota matrix.  Flavors that
 * are not defined are reported and left out (so one typo does not sink the
 * whole quota tree); a covered resource a flavor lists no quota for gets
 * present = false.
 */
static void conv_group(struct bld *b, const struct carve_meta *owner,
		       const struct carve_mf_rgroup *g, struct carve_rgroup_spec *out)
{
	const char **flavors = scratch(b, g->nflavors, sizeof(*flavors));
	struct carve_fquota *q = scratch(b, g->nflavors * (g->ncovered ? g->ncovered : 1),
					 sizeof(*q));
	size_t f, r, k, nf = 0;

	memset(out, 0, sizeof(*out));
	if (b->nomem)
		return;
	for (f = 0; f < g->nflavors; f++) {
		const struct carve_mf_flavorquotas *fq = &g->flavors[f];

		if (!flavor_known(b, fq->flavor)) {
			carve_diag_error(&b->m->diags, fq->pos,
					 "%s %s: ResourceFlavor '%s' is not defined", owner->kind,
					 owner->name, fq->flavor);
			continue;
		}
		for (r = 0; r < g->ncovered; r++) {
			struct carve_fquota *e = &q[nf * g->ncovered + r];

			for (k = 0; k < fq->n; k++) {
				const struct carve_mf_quota *mq = &fq->v[k];

				if (strcmp(mq->resource, g->covered[r]))
					continue;
				e->present = true;
				e->nominal = mq->nominal;
				e->borrowing_limit = mq->borrowing_limit;
				e->has_borrowing_limit = mq->has_borrowing_limit;
				e->lending_limit = mq->lending_limit;
				e->has_lending_limit = mq->has_lending_limit;
				break;
			}
		}
		flavors[nf++] = fq->flavor;
	}
	out->nres = g->ncovered;
	out->resources = (const char *const *)g->covered;
	out->nflavors = nf;
	out->flavors = flavors;
	out->quota = q;
}

static const struct carve_rgroup_spec *conv_groups(struct bld *b, const struct carve_meta *owner,
						   size_t n, const struct carve_mf_rgroup *g)
{
	struct carve_rgroup_spec *v = scratch(b, n, sizeof(*v));
	size_t i;

	for (i = 0; v && i < n; i++)
		conv_group(b, owner, &g[i], &v[i]);
	return v;
}

/* ---- cohorts ---- */

/*
 * The engine refuses the whole tree on a cohort cycle, so cycles are found
 * here first: each cohort follows its parents (a cut link ends the walk);
 * one that comes back to itself has its parent link cut and reported.
 */
static void cut_cycles(struct bld *b, bool *cut)
{
	const struct carve_manifests *m = b->m;
	size_t i, steps;

	for (i = 0; i < m->ncohorts; i++) {
		const struct carve_mf_cohort *c = &m->cohorts[i];
		const struct carve_mf_cohort *p = c;

		if (carve_mf_find_cohort(m, c->meta.name) != c)
			continue; /* a duplicate: the engine reports it */
		for (steps = 0; steps <= m->ncohorts; steps++) {
			if (cut[p - m->cohorts] || !p->parent)
				break;
			p = carve_mf_find_cohort(m, p->parent);
			if (!p)
				break;
			if (p == c) {
				carve_diag_error(&b->m->diags, c->parent_pos,
						 "Cohort %s: parent '%s' makes a cycle of cohorts",
						 c->meta.name, c->parent);
				cut[i] = true;
				break;
			}
		}
	}
}

static void add_cohorts(struct bld *b)
{
	bool *cut = scratch(b, b->m->ncohorts, sizeof(*cut));
	size_t i;

	if (b->m->ncohorts && !cut)
		return;
	cut_cycles(b, cut);
	for (i = 0; i < b->m->ncohorts && !b->nomem; i++) {
		const struct carve_mf_cohort *c = &b->m->cohorts[i];
		struct carve_cohort_spec s;
		struct carve_error err = {0};
		int rc;

		memset(&s, 0, sizeof(s));
		s.name = c->meta.name;
		s.parent = cut[i] ? NULL : c->parent;
		s.ngroups = c->ngroups;
		s.groups = conv_groups(b, &c->meta, c->ngroups, c->groups);
		s.fair_weight_milli = c->fair_weight_milli;
		if (b->nomem)
			return;
		rc = carve_adm_add_cohort(b->ad->adm, &s, &err);
		if (rc < 0)
			refused(b, &c->meta, meta_pos(&c->meta), rc, &err);
	}
}

/* ---- ClusterQueues ---- */

static void add_cqs(struct bld *b)
{
	size_t i;

	for (i = 0; i < b->m->ncqs && !b->nomem; i++) {
		const struct carve_mf_cq *q = &b->m->cqs[i];
		struct carve_cq_spec s;
		struct carve_error err = {0};
		int rc;

		memset(&s, 0, sizeof(s));
		s.name = q->meta.name;
		s.cohort = q->cohort;
		s.strategy = q->strategy;
		s.stop = q->stop_policy;
		s.ngroups = q->ngroups;
		s.groups = conv_groups(b, &q->meta, q->ngroups, q->groups);
		s.within_cq = q->within_cq;
		s.reclaim = q->reclaim;
		s.bwc = q->bwc;
		s.bwc_max_priority = q->bwc_max_priority;
		s.has_bwc_threshold = q->has_bwc_threshold;
		s.when_can_borrow = q->when_can_borrow;
		s.when_can_preempt = q->when_can_preempt;
		s.preempt_over_borrow = q->preempt_over_borrow;
		s.fair_weight_milli = q->fair_weight_milli;
		if (b->nomem)
			return;
		rc = carve_adm_add_cq(b->ad->adm, &s, &err);
		if (rc < 0)
			refused(b, &q->meta, meta_pos(&q->meta), rc, &err);
	}
}

/* ---- workloads ---- */

/* Value of a (Workload)PriorityClass; WorkloadPriorityClass wins a tie. */
static bool priority_value(const struct carve_manifests *m, const char *name, int32_t *out)
{
	const struct carve_mf_priorityclass *hit = NULL;
	size_t i;

	for (i = 0; i < m->nwpcs; i++) {
		const struct carve_mf_priorityclass *p = &m->wpcs[i];

		if (strcmp(p->meta.name, name))
			continue;
		if (!hit || (!strcmp(p->meta.kind, "WorkloadPriorityClass") &&
			     strcmp(hit->meta.kind, "WorkloadPriorityClass")))
			hit = p;
	}
	if (hit)
		*out = hit->value;
	return hit != NULL;
}

static const struct carve_match_term *conv_terms(struct bld *b, size_t n,
						 const struct carve_nodeterm *t)
{
	struct carve_match_term *v = scratch(b, n, sizeof(*v));
	size_t i, j;

	for (i = 0; v && i < n; i++) {
		struct carve_match_expr *e = scratch(b, t[i].n, sizeof(*e));

		for (j = 0; e && j < t[i].n; j++) {
			e[j].key = t[i].v[j].key;
			e[j].op = t[i].v[j].op;
			e[j].nvalues = t[i].v[j].nvalues;
			e[j].values = (const char *const *)t[i].v[j].values;
		}
		v[i].n = t[i].n;
		v[i].exprs = e;
	}
	return v;
}

/* A podSet template annotation, or NULL. */
static const struct carve_kv *annotation(const struct carve_podspec *sp, const char *key)
{
	size_t i;

	for (i = 0; i < sp->annotations.n; i++)
		if (sp->annotations.v[i].key && !strcmp(sp->annotations.v[i].key, key))
			return &sp->annotations.v[i];
	return NULL;
}

/* The most memory (MiB) any GPU of the inventory has; 0 without nodes. */
static uint32_t largest_gpu_mib(const struct bld *b, const char **model)
{
	const struct carve_cluster *c;
	uint32_t best = 0;
	size_t g, n;

	*model = NULL;
	if (!b->ad->inv)
		return 0;
	c = b->ad->inv->cluster;
	n = carve_cluster_gpu_count(c);
	for (g = 0; g < n; g++) {
		const struct carve_gpu *gpu = carve_cluster_gpu(c, (uint32_t)g);

		if (gpu->memory_mib > best) {
			best = gpu->memory_mib;
			*model = gpu->model;
		}
	}
	return best;
}

/*
 * KAI-style fractional GPU annotations: "gpu-fraction" (0 < f < 1, to
 * milli) and "gpu-memory" (MiB, at most the largest GPU's memory when the
 * input has nodes).  A bad value is an error at the annotation; false
 * then: the workload must not be queued.
 */
static bool gpu_share(struct bld *b, const struct carve_podspec *sp, const char *wl,
		      const char *ps, struct carve_podset_spec *v)
{
	const struct carve_kv *f = annotation(sp, "gpu-fraction");
	const struct carve_kv *mem = annotation(sp, "gpu-memory");
	bool ok = true;
	char *end;

	if (f && f->value) {
		double x = strtod(f->value, &end);
		long milli = x > 0 && x < 1 ? (long)(x * 1000.0 + 0.5) : 0;

		if (end == f->value || *end || !(x > 0 && x < 1) || milli < 1 || milli > 999) {
			carve_diag_error(&b->m->diags, f->pos, "Workload %s podSet %s: annotation "
					 "gpu-fraction '%s' is not a number above 0 and below 1 "
					 "(whole GPUs are requested as nvidia.com/gpu); not admitted",
					 wl, ps, f->value);
			ok = false;
		} else {
			v->gpu_milli = (int32_t)milli;
		}
	}
	if (mem && mem->value) {
		unsigned long long x = strtoull(mem->value, &end, 10);
		const char *model;
		uint32_t most = largest_gpu_mib(b, &model);

		if (end == mem->value || *end || *mem->value == '-' || x < 1 || x > UINT32_MAX) {
			carve_diag_error(&b->m->diags, mem->pos, "Workload %s podSet %s: annotation "
					 "gpu-memory '%s' is not a whole number of MiB; not admitted",
					 wl, ps, mem->value);
			ok = false;
		} else if (most && x > most) {
			carve_diag_error(&b->m->diags, mem->pos, "Workload %s podSet %s: annotation "
					 "gpu-memory %llu MiB is more than any GPU has (largest: "
					 "%s, %u MiB); not admitted", wl, ps, x,
					 model ? model : "?", most);
			ok = false;
		} else {
			v->gpu_mem_mib = (uint32_t)x;
		}
	}
	return ok;
}

/*
 * Every nvidia.com/mig-<profile> request names a profile some GPU model of
 * the MIG table (mig_profiles.c) offers; an unknown one is an error at the
 * request and false: the workload must not be queued.
 */
static bool mig_known(struct bld *b, const struct carve_podspec *sp, const char *wl,
		      const char *ps)
{
	bool ok = true;
	size_t j;

	for (j = 0; j < sp->requests.n; j++) {
		const struct carve_resq *r = &sp->requests.v[j];
		const char *prof;
		int k;

		if (!r->name || strncmp(r->name, "nvidia.com/mig-", 15) || r->milli <= 0)
			continue;
		prof = r->name + 15;
		for (k = 0; k < carve_mig_model_count(); k++)
			if (carve_mig_profile_find(carve_mig_model_at(k), prof) >= 0)
				break;
		if (k < carve_mig_model_count())
			continue;
		carve_diag_error(&b->m->diags, r->pos, "Workload %s podSet %s: resource %s: no GPU "
				 "model offers MIG profile '%s'; not admitted", wl, ps, r->name, prof);
		ok = false;
	}
	return ok;
}

/* True when level is one of the n levels lv. */
static bool has_level(const char *const *lv, size_t n, const char *level)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(lv[i], level))
			return true;
	return false;
}

/*
 * True when level is a topology level of some flavor of ClusterQueue
 * cqname: the levels of the Topology its topologyName names, or the default
 * levels (carve_topology_levels) for a flavor without one (and when the
 * queue is unknown).  The levels it could use go to `levels` for messages.
 */
static bool cq_has_level(struct bld *b, const char *cqname, const char *level, char *levels,
			 size_t size)
{
	const struct carve_mf_cq *cq = cqname ? carve_mf_find_cq(b->m, cqname) : NULL;
	bool found = false, dflt = !cq;
	size_t g, f, k, used = 0;

	levels[0] = '\0';
	for (g = 0; cq && g < cq->ngroups; g++)
		for (f = 0; f < cq->groups[g].nflavors; f++) {
			const struct carve_mf_flavor *fl =
				carve_mf_find_flavor(b->m, cq->groups[g].flavors[f].flavor);
			const struct carve_mf_topology *t = fl && fl->topology_name
				? carve_mf_find_topology(b->m, fl->topology_name) : NULL;

			if (!t) {
				dflt = true;
				continue;
			}
			if (has_level(t->levels, t->nlevels, level))
				found = true;
			for (k = 0; k < t->nlevels && used < size; k++)
				used += (size_t)snprintf(levels + used, size - used, "%s%s",
							 used ? ", " : "", t->levels[k]);
		}
	if (dflt) {
		if (has_level(carve_topology_levels, CARVE_TOPOLOGY_NLEVELS, level))
			found = true;
		for (k = 0; k < CARVE_TOPOLOGY_NLEVELS && used < size; k++)
			used += (size_t)snprintf(levels + used, size - used, "%s%s",
						 used ? ", " : "", carve_topology_levels[k]);
	}
	return found;
}

/*
 * Kueue TAS annotations: "kueue.x-k8s.io/podset-required-topology" (wins
 * when both are set) or "-preferred-topology", naming the node label of a
 * topology level of the queue's flavors (a Kueue Topology's levels, or the
 * default ones).  Another label is an error at the annotation; false then:
 * the workload must not be queued.
 */
static bool podset_topology(struct bld *b, const struct carve_podspec *sp, const char *wl,
			    const char *ps, const char *cq, struct carve_podset_spec *v)
{
	static const char *const keys[2] = {"kueue.x-k8s.io/podset-required-topology",
					    "kueue.x-k8s.io/podset-preferred-topology"};
	bool ok = true;
	int i;

	for (i = 0; i < 2; i++) {
		const struct carve_kv *t = annotation(sp, keys[i]);
		char levels[512];

		if (!t || !t->value)
			continue;
		if (!cq_has_level(b, cq, t->value, levels, sizeof(levels))) {
			carve_diag_error(&b->m->diags, t->pos, "Workload %s podSet %s: annotation %s "
					 "'%s' is not a topology level of ClusterQueue %s's flavors "
					 "(%s); not admitted", wl, ps, keys[i], t->value,
					 cq ? cq : "?", levels);
			ok = false;
			continue;
		}
		if (v->topology_level)
			continue; /* required already set */
		v->topology_level = t->value;
		v->topology_required = i == 0;
	}
	return ok;
}

/* ---- MIG quota in physical slices (docs/admission.md) ---- */

#define MIG_MEM_SLICES "carve.dev/mig-memory-slices"
#define MIG_COMPUTE_SLICES "carve.dev/mig-compute-slices"

/* Slices of one instance of a profile: memory and compute (SM) slices. */
struct slices {
	int mem, cmp;
	const char *model; /* where they came from (messages) */
};

static bool cq_covers(const struct carve_mf_cq *cq, const char *res)
{
	size_t g, c;

	for (g = 0; g < cq->ngroups; g++)
		for (c = 0; c < cq->groups[g].ncovered; c++)
			if (cq->groups[g].covered[c] && !strcmp(cq->groups[g].covered[c], res))
				return true;
	return false;
}

/* Adds model's slices for prof to *acc; false when they disagree with
 * what *acc holds (acc->mem == 0: empty). */
static bool slices_add(struct slices *acc, const struct carve_mig_model *model, const char *prof)
{
	int k = carve_mig_profile_find(model, prof);

	if (k < 0)
		return true; /* this model does not offer it */
	if (!acc->mem) {
		acc->mem = model->profiles[k].mem_slices;
		acc->cmp = model->profiles[k].compute;
		acc->model = model->name;
		return true;
	}
	return acc->mem == model->profiles[k].mem_slices && acc->cmp == model->profiles[k].compute;
}

static bool labels_match(const struct carve_node *n, const struct carve_kvlist *want)
{
	size_t i, j;

	for (i = 0; i < want->n; i++) {
		for (j = 0; j < n->nlabels; j++)
			if (!strcmp(n->labels[j].key, want->v[i].key) && want->v[i].value &&
			    !strcmp(n->labels[j].value, want->v[i].value))
				break;
		if (j == n->nlabels)
			return false;
	}
	return true;
}

/*
 * The slices of prof on the GPUs flavor f stands for, into *out (mem 0:
 * f stands for no GPU offering it).  The model is f's
 * nvidia.com/gpu.product nodeLabel when set; else, when every model of the
 * MIG table that offers prof gives it the same slices, those; else the
 * MIG GPUs of the nodes f selects.  False when that is ambiguous.
 */
static bool flavor_slices(const struct bld *b, const struct carve_mf_flavor *f, const char *prof,
			  struct slices *out)
{
	const struct carve_cluster *c;
	size_t i, n;
	int k;

	memset(out, 0, sizeof(*out));
	for (i = 0; f && i < f->node_labels.n; i++)
		if (!strcmp(f->node_labels.v[i].key, "nvidia.com/gpu.product")) {
			const struct carve_mig_model *model =
				carve_mig_model_find(f->node_labels.v[i].value);

			if (model)
				slices_add(out, model, prof);
			return true;
		}
	for (k = 0; k < carve_mig_model_count(); k++)
		if (!slices_add(out, carve_mig_model_at(k), prof))
			break;
	if (k == carve_mig_model_count())
		return true;
	memset(out, 0, sizeof(*out));
	if (!b->ad->inv)
		return false;
	c = b->ad->inv->cluster;
	n = carve_cluster_node_count(c);
	for (i = 0; i < n; i++) {
		const struct carve_node *node = carve_cluster_node(c, (uint32_t)i);
		uint32_t g;

		if (f && !labels_match(node, &f->node_labels))
			continue;
		for (g = node->gpu_first; g < node->gpu_first + node->ngpus; g++) {
			const struct carve_gpu *gpu = carve_cluster_gpu(c, g);

			if (gpu->mig_model && !slices_add(out, gpu->mig_model, prof))
				return false;
		}
	}
	return true;
}

/*
 * The slices one prof instance is charged in ClusterQueue cq: those of
 * every flavor of the resource groups covering nvidia.com/mig-<prof> (or,
 * when none does, the slice resources), which must agree.  False, with the
 * models that disagree in *why, when they do not.
 */
static bool cq_slices(const struct bld *b, const struct carve_mf_cq *cq, const char *res,
		      const char *prof, struct slices *out, char *why, size_t whysz)
{
	const char *key = cq_covers(cq, res) ? res : NULL;
	size_t g, c, f;

	memset(out, 0, sizeof(*out));
	for (g = 0; g < cq->ngroups; g++) {
		bool in = false;

		for (c = 0; c < cq->groups[g].ncovered; c++) {
			const char *cov = cq->groups[g].covered[c];

			if (cov && (key ? !strcmp(cov, key)
					: !strcmp(cov, MIG_MEM_SLICES) ||
						  !strcmp(cov, MIG_COMPUTE_SLICES)))
				in = true;
		}
		for (f = 0; in && f < cq->groups[g].nflavors; f++) {
			const char *fname = cq->groups[g].flavors[f].flavor;
			struct slices one;

			if (!flavor_slices(b, carve_mf_find_flavor(b->m, fname), prof, &one)) {
				snprintf(why, whysz, "the nodes of flavor %s have GPU models that "
					 "give it different slices", fname);
				return false;
			}
			if (!one.mem)
				continue;
			if (!out->mem) {
				*out = one;
			} else if (out->mem != one.mem || out->cmp != one.cmp) {
				snprintf(why, whysz, "its flavors stand for GPU models that give it "
					 "different slices (%s: %d memory, %d compute; %s: %d, %d)",
					 out->model, out->mem, out->cmp, one.model, one.mem, one.cmp);
				return false;
			}
		}
	}
	if (!out->mem)
		snprintf(why, whysz, "none of its flavors stands for a GPU model that offers it");
	return out->mem > 0;
}

/*
 * When the workload's ClusterQueue covers carve.dev/mig-memory-slices or
 * carve.dev/mig-compute-slices, every nvidia.com/mig-<profile> request of
 * the podSet also asks for its instances' slices of those (the engine sums
 * a resource named twice).  Returns the requests to use (v itself when
 * nothing is added); false in *ok when a profile's slices cannot be told
 * (reported at the request).
 */
static struct carve_req *mig_slice_reqs(struct bld *b, const char *cqname,
					const struct carve_podspec *sp, const char *wl,
					const char *ps, struct carve_req *v, size_t *n, bool *ok)
{
	const struct carve_mf_cq *cq = cqname ? carve_mf_find_cq(b->m, cqname) : NULL;
	int64_t mem = 0, cmp = 0;
	struct carve_req *out;
	bool want_mem, want_cmp;
	size_t j, k;

	if (!cq)
		return v;
	want_mem = cq_covers(cq, MIG_MEM_SLICES);
	want_cmp = cq_covers(cq, MIG_COMPUTE_SLICES);
	if (!want_mem && !want_cmp)
		return v;
	for (j = 0; j < sp->requests.n; j++) {
		const struct carve_resq *r = &sp->requests.v[j];
		struct slices sl;
		char why[256];

		if (!r->name || strncmp(r->name, "nvidia.com/mig-", 15) || r->milli <= 0)
			continue;
		if (!cq_slices(b, cq, r->name, r->name + 15, &sl, why, sizeof(why))) {
			carve_diag_error(&b->m->diags, r->pos, "Workload %s podSet %s: resource %s: "
					 "ClusterQueue %s charges MIG slices, but %s (set "
					 "nvidia.com/gpu.product in the flavor's nodeLabels); "
					 "not admitted", wl, ps, r->name, cq->meta.name, why);
			*ok = false;
			continue;
		}
		mem = carve_qty_sat_add(mem, carve_qty_sat_mul(r->milli, sl.mem));
		cmp = carve_qty_sat_add(cmp, carve_qty_sat_mul(r->milli, sl.cmp));
	}
	if (!mem)
		return v;
	out = scratch(b, *n + 2, sizeof(*out));
	if (!out)
		return v;
	for (k = 0; k < *n; k++)
		out[k] = v[k];
	if (want_mem) {
		out[k].name = MIG_MEM_SLICES;
		out[k++].milli = mem;
	}
	if (want_cmp) {
		out[k].name = MIG_COMPUTE_SLICES;
		out[k++].milli = cmp;
	}
	*n = k;
	return out;
}

/* The podSets of w for the engine; *bad is set when one of them asks for
 * something no GPU can give (reported; the workload must be skipped). */
static const struct carve_podset_spec *conv_podsets(struct bld *b,
						    const struct carve_mf_workload *w,
						    const char *cq, bool *bad)
{
	const char *key = obj_name(b, &w->meta);
	struct carve_podset_spec *v = scratch(b, w->npodsets, sizeof(*v));
	size_t i, j;

	for (i = 0; v && i < w->npodsets; i++) {
		const struct carve_mf_podset *ps = &w->podsets[i];
		const struct carve_podspec *sp = &ps->spec;
		struct carve_req *reqs = scratch(b, sp->requests.n, sizeof(*reqs));
		bool ok = mig_known(b, sp, key, ps->name);

		for (j = 0; reqs && j < sp->requests.n; j++) {
			reqs[j].name = sp->requests.v[j].name;
			reqs[j].milli = sp->requests.v[j].milli;
		}
		v[i].name = ps->name;
		v[i].count = ps->count;
		v[i].min_count = ps->has_min_count ? ps->min_count : ps->count;
		v[i].nreqs = sp->requests.n;
		v[i].reqs = reqs;
		if (reqs && ok)
			v[i].reqs = mig_slice_reqs(b, cq, sp, key, ps->name, reqs, &v[i].nreqs, &ok);
		v[i].nselector = sp->node_selector.n;
		v[i].selector = conv_kv(b, &sp->node_selector);
		v[i].nterms = sp->nterms;
		v[i].terms = conv_terms(b, sp->nterms, sp->terms);
		v[i].ntolerations = sp->ntolerations;
		v[i].tolerations = conv_tols(b, sp->ntolerations, sp->tolerations);
		if (!gpu_share(b, sp, key, ps->name, &v[i]))
			ok = false;
		if (!ok)
			*bad = true;
		if (!podset_topology(b, sp, key, ps->name, cq, &v[i]))
			*bad = true;
	}
	return v;
}

static const struct carve_ps_admission *conv_admission(struct bld *b,
						       const struct carve_mf_workload *w)
{
	struct carve_ps_admission *v = scratch(b, w->nassign, sizeof(*v));
	size_t i;

	for (i = 0; v && i < w->nassign; i++) {
		v[i].podset = w->assign[i].name;
		v[i].count = w->assign[i].count;
		v[i].n = w->assign[i].flavors.n;
		v[i].flavors = conv_kv(b, &w->assign[i].flavors);
	}
	return v;
}

/* Records that engine id came from w or pg (the other is NULL). */
static bool map_workload(struct bld *b, int id, const struct carve_mf_workload *w,
			 const struct carve_mf_podgroup *pg)
{
	struct carve_admission *ad = b->ad;
	size_t need = (size_t)id + 1;

	if (need > ad->nwl) {
		const struct carve_mf_workload **v = carve_realloc(ad->wl, need * sizeof(*v));
		const struct carve_mf_podgroup **p;

		if (v)
			ad->wl = v;
		p = v ? carve_realloc(ad->pg, need * sizeof(*p)) : NULL;
		if (!p) {
			b->nomem = true;
			return false;
		}
		ad->pg = p;
		memset(ad->wl + ad->nwl, 0, (need - ad->nwl) * sizeof(*ad->wl));
		memset(ad->pg + ad->nwl, 0, (need - ad->nwl) * sizeof(*ad->pg));
		ad->nwl = need;
	}
	ad->wl[id] = w;
	ad->pg[id] = pg;
	return true;
}

/*
 * Resolves the ClusterQueue of w: its admission's, or spec.queueName ->
 * LocalQueue -> ClusterQueue.  NULL when it is not queued (reported when
 * that is a problem); *lq is the LocalQueue used, if any.
 */
static const char *resolve_cq(struct bld *b, const struct carve_mf_workload *w,
			      const struct carve_mf_localqueue **lq)
{
	const char *key = obj_name(b, &w->meta);

	*lq = NULL;
	if (w->admitted_cq)
		return w->admitted_cq;
	if (!w->active)
		return NULL; /* deactivated: Kueue does not queue it */
	if (!w->queue_name) {
		carve_diag_warn(&b->m->diags, meta_pos(&w->meta),
				"Workload %s has no spec.queueName; it is not queued", key);
		return NULL;
	}
	*lq = carve_mf_find_lq(b->m, w->meta.ns, w->queue_name);
	if (!*lq) {
		carve_diag_error(&b->m->diags, w->queue_pos,
				 "Workload %s: LocalQueue '%s' does not exist in namespace %s", key,
				 w->queue_name, w->meta.ns);
		return NULL;
	}
	return (*lq)->cluster_queue;
}

static void add_workload(struct bld *b, const struct carve_mf_workload *w)
{
	const struct carve_mf_localqueue *lq;
	struct carve_wl_spec s;
	struct carve_error err = {0};
	struct carve_pos qpos;
	bool bad = false;
	int rc;

	memset(&s, 0, sizeof(s));
	s.key = obj_name(b, &w->meta);
	s.cq = resolve_cq(b, w, &lq);
	if (!s.cq)
		return;
	if (w->has_priority) {
		s.priority = w->priority;
	} else if (w->priority_class && !priority_value(b->m, w->priority_class, &s.priority)) {
		carve_diag_warn(&b->m->diags, meta_pos(&w->meta),
				"Workload %s: priority class '%s' is not defined; using priority 0",
				s.key, w->priority_class);
	}
	s.created = w->meta.created;
	s.has_created = w->meta.has_created;
	s.npodsets = w->npodsets;
	s.podsets = conv_podsets(b, w, s.cq, &bad);
	if (bad)
		return;
	if (w->admitted_cq) {
		s.admitted = true;
		s.admitted_at = w->quota_reserved_at;
		s.has_admitted_at = w->has_quota_reserved_at;
		s.nadmission = w->nassign;
		s.admission = conv_admission(b, w);
	}
	if (b->nomem)
		return;
	rc = carve_adm_add_workload(b->ad->adm, &s, &err);
	if (rc >= 0) {
		map_workload(b, rc, w, NULL);
		return;
	}
	qpos = lq ? w->queue_pos : w->admission_pos;
	if (!qpos.line)
		qpos = meta_pos(&w->meta);
	if (rc == CARVE_ENOTFOUND && lq)
		carve_diag_error(&b->m->diags, qpos,
				 "Workload %s: ClusterQueue '%s' (of LocalQueue %s/%s) is not defined",
				 s.key, s.cq, lq->meta.ns, lq->meta.name);
	else if (rc == CARVE_ENOTFOUND)
		carve_diag_error(&b->m->diags, qpos,
				 "Workload %s: admitted to ClusterQueue '%s', which is not defined",
				 s.key, s.cq);
	else
		refused(b, &w->meta, meta_pos(&w->meta), rc, &err);
}

/* ---- Volcano and KAI queues (docs/volcano-kai.md) ---- */

static int fam_find(const struct family *f, const char *name)
{
	size_t i;

	for (i = 0; name && i < f->n; i++)
		if (!strcmp(f->q[i].meta->name, name))
			return (int)i;
	return -1;
}

/* The entry of resource name in q, appended (all zero) when new; NULL when
 * q already has CARVE_RES_MAX resources (q->res_full). */
static struct xres *xres_get(struct xq *q, const char *name)
{
	size_t i;

	for (i = 0; i < q->nres; i++)
		if (!strcmp(q->res[i].name, name))
			return &q->res[i];
	if (q->nres == CARVE_RES_MAX) {
		q->res_full = true;
		return NULL;
	}
	q->res[q->nres].name = name;
	return &q->res[q->nres++];
}

/* n queues with room for their resources; false on allocation failure. */
static bool fam_alloc(struct bld *b, struct family *f, size_t n)
{
	size_t i;

	f->n = n;
	f->q = scratch(b, n, sizeof(*f->q));
	for (i = 0; f->q && i < n; i++) {
		f->q[i].up = -1;
		f->q[i].weight_milli = 1000;
		f->q[i].res = scratch(b, CARVE_RES_MAX, sizeof(*f->q[i].res));
	}
	return !b->nomem;
}

/* Volcano Queue: deserved -> nominal, capability -> cap, guarantee. */
static void vc_fill(struct bld *b)
{
	struct family *f = &b->vc;
	size_t i, k;

	f->what = "Volcano Queue";
	f->flavor = "volcano";
	f->root = "volcano-root";
	f->root_queue = "root";
	if (!fam_alloc(b, f, b->m->nvcqueues))
		return;
	for (i = 0; i < f->n; i++) {
		const struct carve_mf_vcqueue *v = &b->m->vcqueues[i];
		struct xq *q = &f->q[i];
		struct xres *r;

		q->meta = &v->meta;
		q->parent = v->parent;
		q->parent_pos = v->parent_pos;
		q->weight_milli = (int64_t)(v->weight > 0 ? v->weight : 1) * 1000;
		q->not_reclaimable = !v->reclaimable;
		if (v->state && (!strcmp(v->state, "Closed") || !strcmp(v->state, "Closing")))
			q->stop = CARVE_STOP_HOLD;
		for (k = 0; k < v->deserved.n; k++)
			if ((r = xres_get(q, v->deserved.v[k].name)))
				r->nominal = v->deserved.v[k].milli;
		for (k = 0; k < v->capability.n; k++)
			if ((r = xres_get(q, v->capability.v[k].name))) {
				r->cap = v->capability.v[k].milli;
				r->has_cap = true;
			}
		for (k = 0; k < v->guarantee.n; k++)
			if ((r = xres_get(q, v->guarantee.v[k].name))) {
				r->guar = v->guarantee.v[k].milli;
				r->has_guar = true;
			}
	}
}

/* A KAI amount in its own unit as milli-units of the Kubernetes resource. */
static bool kai_milli(double v, double scale, int64_t *out)
{
	double x = v * scale;

	if (!(x >= 0) || x >= 9.2e18)
		return false;
	*out = (int64_t)(x + 0.5);
	return true;
}

/* KAI Queue: per gpu (devices), cpu (millicores), memory (MB) a quota
 * (-1: unlimited, read as 0 with no cap), a limit (-1: none) and a weight. */
static void kai_fill(struct bld *b)
{
	static const char *const names[] = {"nvidia.com/gpu", "cpu", "memory"};
	static const double scale[] = {1e3, 1, 1e9};
	struct family *f = &b->kai;
	size_t i, k;

	f->what = "KAI Queue";
	f->flavor = "kai";
	f->root = "kai-root";
	if (!fam_alloc(b, f, b->m->nkaiqueues))
		return;
	for (i = 0; i < f->n; i++) {
		const struct carve_mf_kaiqueue *v = &b->m->kaiqueues[i];
		const struct carve_mf_kaires *kr[3] = {&v->gpu, &v->cpu, &v->memory};
		struct xq *q = &f->q[i];

		q->meta = &v->meta;
		q->parent = v->parent;
		q->parent_pos = v->parent_pos;
		if (v->gpu.over_quota_weight > 0 &&
		    !kai_milli(v->gpu.over_quota_weight, 1e3, &q->weight_milli))
			q->weight_milli = INT64_MAX / 2;
		for (k = 0; k < 3; k++) {
			struct xres *r;
			bool ok = true;

			if (!kr[k]->pos.line)
				continue; /* resources.<r> not given */
			r = xres_get(q, names[k]);
			if (kr[k]->has_quota && kr[k]->quota != -1)
				ok = kai_milli(kr[k]->quota, scale[k], &r->nominal);
			if (ok && kr[k]->has_limit && kr[k]->limit != -1) {
				ok = kai_milli(kr[k]->limit, scale[k], &r->cap);
				r->has_cap = ok;
			}
			if (!ok) {
				carve_diag_error(&b->m->diags, kr[k]->pos,
						 "Queue %s: %s quota or limit is too large", v->meta.name,
						 names[k]);
				q->skip = true;
			}
		}
	}
}

/*
 * Names and links: a queue named like an earlier one of its family, like a
 * Kueue ClusterQueue or Cohort, or (KAI) like a Volcano Queue is an error
 * and skipped.  Each queue's parent is resolved (an undefined parent is a
 * warning and means the root); a queue that some queue names as parent is
 * a Cohort; a parent cycle is reported and cut at the queue that closes it.
 */
static void fam_link(struct bld *b, struct family *f)
{
	const struct carve_manifests *m = b->m;
	size_t i, steps;

	for (i = 0; i < f->n; i++) {
		struct xq *q = &f->q[i];
		const char *name = q->meta->name;
		const char *clash = NULL;

		if (f->root_queue && !strcmp(name, f->root_queue)) {
			q->is_root = q->is_parent = true;
			continue;
		}
		if (fam_find(f, name) != (int)i)
			clash = f->what;
		else if (carve_mf_find_cq(m, name))
			clash = "Kueue ClusterQueue";
		else if (carve_mf_find_cohort(m, name))
			clash = "Kueue Cohort";
		else if (f == &b->kai && fam_find(&b->vc, name) >= 0)
			clash = "Volcano Queue";
		if (clash) {
			carve_diag_error(&b->m->diags, meta_pos(q->meta),
					 "%s %s: a %s of the same name is already defined; this "
					 "queue is not used", f->what, name, clash);
			q->skip = true;
		}
	}
	for (i = 0; i < f->n; i++) {
		struct xq *q = &f->q[i];
		int up;

		if (q->skip || q->is_root || !q->parent || !strcmp(q->parent, q->meta->name) ||
		    (f->root_queue && !strcmp(q->parent, f->root_queue)))
			continue;
		up = fam_find(f, q->parent);
		if (up < 0) {
			carve_diag_warn(&b->m->diags, q->parent_pos,
					"%s %s: parent queue '%s' is not defined; the queue is "
					"placed under the root cohort %s", f->what, q->meta->name,
					q->parent, f->root);
			continue;
		}
		q->up = up;
		f->q[up].is_parent = true;
	}
	for (i = 0; i < f->n; i++) {
		int j = f->q[i].up;

		for (steps = 0; j >= 0 && steps <= f->n; steps++) {
			if (j == (int)i) {
				carve_diag_error(&b->m->diags, f->q[i].parent_pos,
						 "%s %s: parent '%s' makes a cycle of queues", f->what,
						 f->q[i].meta->name, f->q[i].parent);
				f->q[i].up = -1;
				break;
			}
			j = f->q[j].up;
		}
	}
}

/* Cohort of queue i: its parent queue's name, else the family's root. */
static const char *fam_cohort(const struct family *f, size_t i)
{
	int up = f->q[i].up;

	return up >= 0 ? f->q[up].meta->name : f->root;
}

/* True when queue l lies in the subtree of queue p. */
static bool fam_below(const struct family *f, size_t l, size_t p)
{
	int j = f->q[l].up;
	size_t steps;

	for (steps = 0; j >= 0 && steps <= f->n; steps++, j = f->q[j].up)
		if (j == (int)p)
			return true;
	return false;
}

/* The implicit flavor, unless a ResourceFlavor of that name is defined. */
static void fam_flavor(struct bld *b, struct family *f)
{
	struct carve_flavor_spec s;
	struct carve_error err = {0};
	int rc;

	if (!f->n)
		return;
	if (carve_mf_find_flavor(b->m, f->flavor)) {
		f->flavor_ok = flavor_known(b, f->flavor);
		return;
	}
	memset(&s, 0, sizeof(s));
	s.name = f->flavor;
	rc = carve_adm_add_flavor(b->ad->adm, &s, &err);
	if (rc == CARVE_ENOMEM)
		b->nomem = true;
	f->flavor_ok = rc == 0;
}

/* One resource group over q's resources (only those with a cap for a
 * Cohort), quota per the table in docs/volcano-kai.md. */
static size_t fam_group(struct bld *b, const struct family *f, size_t i, bool cohort,
			struct carve_rgroup_spec *g)
{
	const struct xq *q = &f->q[i];
	const char **res = scratch(b, q->nres, sizeof(*res));
	struct carve_fquota *quota = scratch(b, q->nres, sizeof(*quota));
	size_t k, l, n = 0;

	memset(g, 0, sizeof(*g));
	for (k = 0; res && quota && k < q->nres; k++) {
		const struct xres *r = &q->res[k];
		struct carve_fquota *e = &quota[n];

		if (cohort && !r->has_cap)
			continue;
		res[n++] = r->name;
		e->present = true;
		if (cohort) {
			/* What the subtree may take beyond its leaves' deserved. */
			int64_t sum = 0;

			for (l = 0; l < f->n; l++) {
				const struct xres *lr;

				if (f->q[l].skip || f->q[l].is_parent || !fam_below(f, l, i))
					continue;
				for (lr = f->q[l].res; lr < f->q[l].res + f->q[l].nres; lr++)
					if (!strcmp(lr->name, r->name) && sum <= INT64_MAX - lr->nominal)
						sum += lr->nominal;
			}
			e->has_borrowing_limit = true;
			e->borrowing_limit = r->cap > sum ? r->cap - sum : 0;
			continue;
		}
		e->nominal = r->nominal;
		if (r->has_cap) {
			e->has_borrowing_limit = true;
			e->borrowing_limit = r->cap > r->nominal ? r->cap - r->nominal : 0;
		}
		if (r->has_guar) {
			e->has_lending_limit = true;
			e->lending_limit = r->nominal > r->guar ? r->nominal - r->guar : 0;
		}
	}
	if (!n)
		return 0;
	g->nres = n;
	g->resources = res;
	g->nflavors = 1;
	g->flavors = &f->flavor;
	g->quota = quota;
	return 1;
}

static void fam_add_cohorts(struct bld *b, struct family *f)
{
	size_t i;

	for (i = 0; i < f->n && !b->nomem && f->flavor_ok; i++) {
		struct xq *q = &f->q[i];
		struct carve_rgroup_spec g;
		struct carve_cohort_spec s;
		struct carve_error err = {0};
		int rc;

		if (q->skip || !q->is_parent || q->is_root)
			continue;
		memset(&s, 0, sizeof(s));
		s.name = q->meta->name;
		s.parent = strcmp(s.name, f->root) ? fam_cohort(f, i) : NULL;
		s.ngroups = fam_group(b, f, i, true, &g);
		s.groups = &g;
		s.fair_weight_milli = q->weight_milli;
		if (b->nomem)
			return;
		rc = carve_adm_add_cohort(b->ad->adm, &s, &err);
		if (rc < 0)
			refused(b, q->meta, meta_pos(q->meta), rc, &err);
		else
			q->added = true;
	}
}

static void fam_add_cqs(struct bld *b, struct family *f)
{
	size_t i;

	for (i = 0; i < f->n && !b->nomem && f->flavor_ok; i++) {
		struct xq *q = &f->q[i];
		struct carve_rgroup_spec g;
		struct carve_cq_spec s;
		struct carve_error err = {0};
		int rc;

		if (q->skip || q->is_parent)
			continue;
		if (q->res_full) {
			carve_diag_error(&b->m->diags, meta_pos(q->meta),
					 "%s %s: more than %d distinct resources", f->what,
					 q->meta->name, CARVE_RES_MAX);
			continue;
		}
		memset(&s, 0, sizeof(s));
		s.name = q->meta->name;
		s.cohort = fam_cohort(f, i);
		s.strategy = CARVE_BEST_EFFORT_FIFO;
		s.stop = q->stop;
		s.ngroups = fam_group(b, f, i, false, &g);
		s.groups = &g;
		s.within_cq = CARVE_WCQ_LOWER;
		s.reclaim = CARVE_RECLAIM_ANY;
		s.fair_weight_milli = q->weight_milli;
		s.not_reclaimable = q->not_reclaimable;
		if (b->nomem)
			return;
		rc = carve_adm_add_cq(b->ad->adm, &s, &err);
		if (rc < 0)
			refused(b, q->meta, meta_pos(q->meta), rc, &err);
		else
			q->added = true;
	}
}

static bool is_volcano_pg(const struct carve_mf_podgroup *pg)
{
	return pg->meta.api_version && !strncmp(pg->meta.api_version, "scheduling.volcano.sh/", 22);
}

/* Every resource a Volcano PodGroup asks for is covered by its queue. */
static void vc_podgroup_resources(struct bld *b)
{
	size_t i, k;

	for (i = 0; i < b->m->npodgroups; i++) {
		const struct carve_mf_podgroup *pg = &b->m->podgroups[i];
		int qi = is_volcano_pg(pg) ? fam_find(&b->vc, pg->queue) : -1;

		for (k = 0; qi >= 0 && k < pg->min_resources.n; k++)
			xres_get(&b->vc.q[qi], pg->min_resources.v[k].name);
	}
}

/* Translates the Volcano and KAI queues; before finalize. */
static void add_xqueues(struct bld *b)
{
	vc_fill(b);
	kai_fill(b);
	if (b->nomem)
		return;
	fam_link(b, &b->vc);
	fam_link(b, &b->kai);
	vc_podgroup_resources(b);
	fam_flavor(b, &b->vc);
	fam_flavor(b, &b->kai);
	fam_add_cohorts(b, &b->vc);
	fam_add_cohorts(b, &b->kai);
	fam_add_cqs(b, &b->vc);
	fam_add_cqs(b, &b->kai);
}

/* Value of a scheduling.k8s.io PriorityClass. */
static bool pc_value(const struct carve_manifests *m, const char *name, int32_t *out)
{
	size_t i;

	for (i = 0; i < m->nwpcs; i++) {
		const struct carve_mf_priorityclass *p = &m->wpcs[i];

		if (!strcmp(p->meta.kind, "PriorityClass") && !strcmp(p->meta.name, name)) {
			*out = p->value;
			return true;
		}
	}
	return false;
}

/* The queue a PodGroup can be admitted in, or NULL (reported when that is
 * the PodGroup's problem rather than its queue's). */
static const struct xq *pg_queue(struct bld *b, const struct carve_mf_podgroup *pg,
				 const char *key)
{
	int qi = fam_find(&b->vc, pg->queue);
	const struct xq *q = qi >= 0 ? &b->vc.q[qi] : NULL;

	if (!q) {
		carve_diag_warn(&b->m->diags, pg->queue_pos,
				"PodGroup %s: Volcano Queue '%s' is not defined; it is not queued", key,
				pg->queue);
		return NULL;
	}
	if (q->is_parent && !q->skip) {
		carve_diag_warn(&b->m->diags, pg->queue_pos,
				"PodGroup %s: Queue '%s' is a parent queue (Volcano runs PodGroups "
				"in leaf queues only); it is not queued", key, pg->queue);
		return NULL;
	}
	return q->added ? q : NULL;
}

/*
 * One pod's share of a PodGroup's total: rounded up to a millicore for cpu
 * and to a whole unit (a byte, a GPU) for everything else, as Kubernetes
 * accepts only whole extended resources.
 */
static int64_t per_pod(const char *res, int64_t total, int32_t count)
{
	int64_t unit = strcmp(res, "cpu") ? 1000 : 1;
	int64_t units = total / unit + (total % unit != 0);
	int64_t each = units / count + (units % count != 0);

	return each > INT64_MAX / unit ? INT64_MAX : each * unit;
}

/*
 * A Volcano PodGroup as a workload: one podSet "pods" of max(minMember, 1)
 * pods, each asking minResources / count rounded up; status.phase Running
 * means admitted (flavor "volcano" for everything), Completed means gone.
 */
static void add_podgroup(struct bld *b, const struct carve_mf_podgroup *pg)
{
	const char *key = obj_name(b, &pg->meta);
	struct carve_podset_spec ps;
	struct carve_ps_admission psa;
	struct carve_wl_spec s;
	struct carve_error err = {0};
	struct carve_req *reqs;
	struct carve_label *fl;
	size_t k, n = pg->min_resources.n;
	int32_t count = pg->min_member > 0 ? pg->min_member : 1;
	int rc;

	if (!is_volcano_pg(pg)) {
		carve_diag_warn(&b->m->diags, meta_pos(&pg->meta),
				"PodGroup %s: KAI PodGroups carry no resource requests; it is not "
				"queued", key);
		return;
	}
	if (pg->phase && !strcmp(pg->phase, "Completed"))
		return;
	if (!pg_queue(b, pg, key))
		return;
	if (!n) {
		carve_diag_warn(&b->m->diags, meta_pos(&pg->meta),
				"PodGroup %s has no minResources, so carve cannot tell what it "
				"requests; it is not queued", key);
		return;
	}
	reqs = scratch(b, n, sizeof(*reqs));
	fl = scratch(b, n, sizeof(*fl));
	if (b->nomem)
		return;
	for (k = 0; k < n; k++) {
		reqs[k].name = pg->min_resources.v[k].name;
		reqs[k].milli = per_pod(reqs[k].name, pg->min_resources.v[k].milli, count);
		fl[k].key = reqs[k].name;
		fl[k].value = b->vc.flavor;
	}
	memset(&ps, 0, sizeof(ps));
	ps.name = "pods";
	ps.count = ps.min_count = count;
	ps.nreqs = n;
	ps.reqs = reqs;
	memset(&s, 0, sizeof(s));
	s.key = key;
	s.cq = pg->queue;
	if (pg->priority_class && !pc_value(b->m, pg->priority_class, &s.priority))
		carve_diag_warn(&b->m->diags, meta_pos(&pg->meta),
				"PodGroup %s: PriorityClass '%s' is not defined; using priority 0",
				key, pg->priority_class);
	s.created = pg->meta.created;
	s.has_created = pg->meta.has_created;
	s.npodsets = 1;
	s.podsets = &ps;
	if (pg->phase && !strcmp(pg->phase, "Running")) {
		psa.podset = ps.name;
		psa.count = count;
		psa.n = n;
		psa.flavors = fl;
		s.admitted = true;
		s.nadmission = 1;
		s.admission = &psa;
	}
	rc = carve_adm_add_workload(b->ad->adm, &s, &err);
	if (rc >= 0)
		map_workload(b, rc, NULL, pg);
	else
		refused(b, &pg->meta, meta_pos(&pg->meta), rc, &err);
}

static int64_t latest_time(const struct carve_manifests *m)
{
	int64_t t = 0;
	size_t i;

	for (i = 0; i < m->nworkloads; i++) {
		const struct carve_mf_workload *w = &m->workloads[i];

		if (w->meta.has_created && w->meta.created > t)
			t = w->meta.created;
		if (w->has_quota_reserved_at && w->quota_reserved_at > t)
			t = w->quota_reserved_at;
	}
	for (i = 0; i < m->npodgroups; i++)
		if (m->podgroups[i].meta.has_created && m->podgroups[i].meta.created > t)
			t = m->podgroups[i].meta.created;
	return t;
}

/* ---- build ---- */

/* Nodes in the input: the inventory and a placer over it, set on the engine. */
static void add_placer(struct bld *b)
{
	struct carve_manifests *m = b->m;
	struct carve_error err = {0};
	struct carve_pos none = {NULL, 0, 0};
	const char *policy = b->opts && b->opts->policy ? b->opts->policy : "binpack";
	uint64_t seed = b->opts && b->opts->has_seed ? b->opts->seed : 42;

	if (!m->nnodes && !m->npools && !m->ncsvnodes)
		return;
	b->ad->inv = carve_inventory_build(m);
	if (!b->ad->inv) {
		b->nomem = true;
		return;
	}
	b->ad->placer = carve_placer_create(b->ad->inv->cluster, policy, seed, &err);
	if (!b->ad->placer) {
		if (err.code == CARVE_ENOMEM || !err.code)
			b->nomem = true;
		else
			carve_diag_error(&m->diags, none, "placement: %s", err.text);
		return;
	}
	b->ad->mig_dynamic = b->opts && b->opts->mig_dynamic;
	carve_placer_set_mig_dynamic(b->ad->placer, b->ad->mig_dynamic);
	if (carve_adm_set_placer(b->ad->adm, b->ad->placer, b->ad->inv->cluster))
		b->nomem = true; /* cannot happen: finalized, no workloads yet */
}

/*
 * Dynamic MIG: the MIG profiles the pending (not yet admitted) Workloads
 * ask for, weighted by pods x instances, go to the placer, so a
 * repartitioned GPU is filled with what the queue wants
 * (carve_placer_set_mig_wants).
 */
static void set_mig_wants(struct bld *b)
{
	const char **names;
	double *wt;
	size_t i, j, k, n = 0;

	names = scratch(b, 64, sizeof(*names));
	wt = scratch(b, 64, sizeof(*wt));
	if (!names || !wt)
		return;
	for (i = 0; i < b->m->nworkloads; i++) {
		const struct carve_mf_workload *w = &b->m->workloads[i];

		if (w->admitted_cq || !w->active)
			continue;
		for (j = 0; j < w->npodsets; j++) {
			const struct carve_reslist *rl = &w->podsets[j].spec.requests;

			for (k = 0; k < rl->n; k++) {
				const char *prof;
				size_t t;

				if (!rl->v[k].name || strncmp(rl->v[k].name, "nvidia.com/mig-", 15) ||
				    rl->v[k].milli <= 0)
					continue;
				prof = rl->v[k].name + 15;
				for (t = 0; t < n && strcmp(names[t], prof); t++)
					;
				if (t == n) {
					if (n == 64)
						continue;
					names[n] = prof;
					wt[n++] = 0;
				}
				wt[t] += (double)w->podsets[j].count * (double)rl->v[k].milli / 1000.0;
			}
		}
	}
	if (carve_placer_set_mig_wants(b->ad->placer, names, wt, n) == CARVE_ENOMEM)
		b->nomem = true;
}

static void build(struct bld *b)
{
	struct carve_error err = {0};
	size_t i;
	int rc;

	add_flavors(b);
	add_cohorts(b);
	add_cqs(b);
	if (!b->nomem)
		add_xqueues(b);
	if (b->nomem)
		return;
	rc = carve_adm_finalize(b->ad->adm, &err);
	if (rc == CARVE_ENOMEM) {
		b->nomem = true;
		return;
	}
	if (rc < 0) {
		struct carve_pos none = {NULL, 0, 0};

		carve_diag_error(&b->m->diags, none, "the quota tree cannot be built: %s",
				 err.code && err.text[0] ? err.text : carve_strerror(rc));
		return;
	}
	b->ad->finalized = true;
	add_placer(b);
	if (b->opts && b->opts->no_workloads)
		return;
	for (i = 0; i < b->m->nworkloads && !b->nomem; i++)
		add_workload(b, &b->m->workloads[i]);
	for (i = 0; i < b->m->npodgroups && !b->nomem; i++)
		add_podgroup(b, &b->m->podgroups[i]);
	if (b->ad->placer && b->ad->mig_dynamic && !b->nomem)
		set_mig_wants(b);
}

struct carve_admission *carve_admission_build(struct carve_manifests *m)
{
	return carve_admission_build_opts(m, NULL);
}

struct carve_admission *carve_admission_build_opts(struct carve_manifests *m,
						   const struct carve_admission_opts *o)
{
	struct carve_pos none = {NULL, 0, 0};
	struct bld b;

	memset(&b, 0, sizeof(b));
	b.m = m;
	b.opts = o;
	carve_arena_init(&b.a);
	b.ad = carve_calloc(1, sizeof(*b.ad));
	if (b.ad)
		b.ad->adm = carve_adm_create();
	b.flavor_ok = m->nflavors ? carve_calloc(m->nflavors, sizeof(*b.flavor_ok)) : NULL;
	if (!b.ad || !b.ad->adm || (m->nflavors && !b.flavor_ok))
		b.nomem = true;
	else
		build(&b);
	carve_free(b.flavor_ok);
	carve_arena_cleanup(&b.a);
	if (b.nomem) {
		carve_diag_error(&m->diags, none, "out of memory building the admission engine");
		carve_admission_destroy(b.ad);
		return NULL;
	}
	b.ad->now = latest_time(m);
	return b.ad;
}

void carve_admission_destroy(struct carve_admission *ad)
{
	if (!ad)
		return;
	carve_adm_destroy(ad->adm);      /* before the placer it borrows */
	carve_placer_destroy(ad->placer);
	carve_inventory_destroy(ad->inv);
	carve_free(ad->wl);
	carve_free(ad->pg);
	carve_free(ad);
}

const struct carve_mf_workload *carve_admission_workload(const struct carve_admission *ad,
							 uint32_t wl)
{
	return ad && wl < ad->nwl ? ad->wl[wl] : NULL;
}

const struct carve_mf_podgroup *carve_admission_podgroup(const struct carve_admission *ad,
							 uint32_t wl)
{
	return ad && wl < ad->nwl ? ad->pg[wl] : NULL;
}

/* ---- results ---- */

enum decision { D_NONE = 0, D_ADMITTED, D_PREEMPTED, D_PENDING, D_RUNNING };

static const char *const decision_names[] = {"", "admitted", "preempted", "pending", "running"};

/*
 * Marked victims are preempted even though they still hold quota; an
 * engine admission that stands is admitted (also after an earlier
 * eviction); an admission given in the input that stands is running.
 */
static enum decision decide(const struct carve_wl_status *s)
{
	if (s->marked)
		return D_PREEMPTED;
	if (s->state == CARVE_WL_ADMITTED)
		return s->admitted_by_engine ? D_ADMITTED : D_RUNNING;
	if (s->evicted)
		return D_PREEMPTED;
	if (s->state == CARVE_WL_PENDING)
		return D_PENDING;
	return D_NONE;
}

static const char *pending_reason(const struct carve_wl_status *s)
{
	return s->pending_reason == CARVE_PEND_NONE ? carve_pending_reason_name(CARVE_PEND_NOFIT)
						    : carve_pending_reason_name(s->pending_reason);
}

static const char *preemptor_key(const struct carve_admission *ad, const struct carve_wl_status *s)
{
	const struct carve_wl_status *p = carve_adm_status(ad->adm, s->preemptor);

	return p && p->key ? p->key : "";
}

struct row {
	uint32_t id;
	const struct carve_wl_status *s;
};

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	return strcmp(a->s->key, b->s->key);
}

/* Every workload with a status, sorted by key; *n rows (carve_free them). */
static struct row *sorted_rows(const struct carve_admission *ad, size_t *n)
{
	size_t cnt = carve_adm_workload_count(ad->adm), i, k = 0;
	struct row *v = carve_malloc((cnt ? cnt : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (i = 0; i < cnt; i++) {
		const struct carve_wl_status *s = carve_adm_status(ad->adm, (uint32_t)i);

		if (s && s->key) {
			v[k].id = (uint32_t)i;
			v[k++].s = s;
		}
	}
	qsort(v, k, sizeof(*v), row_cmp);
	*n = k;
	return v;
}

/* Sets o[key] = v, taking v; false (v released) on failure. */
static bool jset(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0;
}

static bool jstr(json_t *o, const char *key, const char *s)
{
	return jset(o, key, json_string(s ? s : ""));
}

/* One GPU a pod got: {"index", "uuid"?, "mig" | "replica" | "milli"}.  MIG
 * instances are named in the placer's layout (it may have repartitioned). */
static json_t *dev_json(const struct carve_admission *ad, const struct carve_cluster *c,
			const struct carve_dev *d)
{
	const struct carve_gpu *g = carve_cluster_gpu(c, d->gpu);
	const struct carve_mig_layout *l = carve_placer_mig_layout(ad->placer, d->gpu);
	json_t *o = json_object();
	bool ok = o && g && jset(o, "index", json_integer(g->index));

	if (ok && g->uuid && *g->uuid)
		ok = jstr(o, "uuid", g->uuid);
	if (ok && d->mig >= 0 && g->mig_model && l && d->mig < l->n) {
		const struct carve_mig_instance *in = &l->inst[d->mig];
		json_t *mg = json_object();

		ok = mg && jstr(mg, "profile", g->mig_model->profiles[in->profile].name) &&
		     jset(mg, "start", json_integer(in->start));
		if (ok)
			ok = jset(o, "mig", mg);
		else
			json_decref(mg);
	} else if (ok && d->replica >= 0) {
		ok = jset(o, "replica", json_integer(d->replica));
	} else if (ok && d->milli > 0 && d->milli < 1000) {
		ok = jset(o, "milli", json_integer(d->milli));
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* "pods": [{"node", "gpus": [...]}, ...], one per pod of a placed podSet. */
static json_t *pods_json(const struct carve_admission *ad, const struct carve_ps_result *p)
{
	const struct carve_cluster *c = ad->inv ? ad->inv->cluster : NULL;
	json_t *arr = json_array();
	size_t i;
	int d;

	for (i = 0; arr && c && i < p->npods; i++) {
		const struct carve_pod_place *pl = &p->pods[i];
		const struct carve_node *n = carve_cluster_node(c, pl->node);
		json_t *pod = json_object(), *gpus = json_array();
		bool ok = pod && gpus && n && jstr(pod, "node", n->name);

		for (d = 0; ok && d < pl->ndevs; d++)
			ok = json_array_append_new(gpus, dev_json(ad, c, &pl->devs[d])) == 0;
		if (ok)
			ok = jset(pod, "gpus", gpus);
		else
			json_decref(gpus);
		if (!ok || json_array_append_new(arr, pod)) {
			if (!ok)
				json_decref(pod);
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *podsets_json(const struct carve_admission *ad, const struct carve_wl_status *s)
{
	json_t *arr = json_array();
	size_t i, j;

	for (i = 0; arr && i < s->npodsets; i++) {
		const struct carve_ps_result *p = &s->podsets[i];
		json_t *ps = json_object(), *fl = json_object(), *use = json_object();
		bool ok = ps && fl && use;
		char q[64];

		for (j = 0; ok && j < p->n; j++) {
			ok = jstr(fl, p->resources[j], p->flavors[j]);
			if (ok && p->usage) {
				if (!strcmp(p->resources[j], "memory"))
					carve_qty_format_bytes(p->usage[j], q, sizeof(q));
				else
					carve_qty_format(p->usage[j], q, sizeof(q));
				ok = jstr(use, p->resources[j], q);
			}
		}
		ok = ok && jstr(ps, "name", p->name) && jset(ps, "count", json_integer(p->count));
		if (ok) {
			ok = jset(ps, "flavors", fl); /* takes fl */
			ok = jset(ps, "usage", use) && ok; /* takes use */
		} else {
			json_decref(fl);
			json_decref(use);
		}
		if (ok && ad->placer && p->npods)
			ok = jset(ps, "pods", pods_json(ad, p));
		if (!ok) {
			json_decref(ps);
			json_decref(arr);
			return NULL;
		}
		if (json_array_append_new(arr, ps)) { /* takes ps */
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *entry_json(const struct carve_admission *ad, const struct carve_wl_status *s,
			  enum decision d)
{
	json_t *e = json_object();
	bool ok;

	if (!e)
		return NULL;
	ok = jstr(e, "workload", s->key);
	switch (d) {
	case D_ADMITTED:
		ok = ok && jstr(e, "clusterQueue", s->cq) && jset(e, "podSets", podsets_json(ad, s)) &&
		     jset(e, "borrowing", json_boolean(s->borrowing));
		if (ok && s->message && *s->message)
			ok = jstr(e, "message", s->message);
		break;
	case D_PREEMPTED:
		ok = ok && jstr(e, "preemptor", preemptor_key(ad, s)) &&
		     jstr(e, "reason", carve_preempt_reason_name(s->preempt_reason));
		break;
	default:
		ok = ok && jstr(e, "reason", pending_reason(s)) && jstr(e, "message", s->message);
		break;
	}
	if (!ok) {
		json_decref(e);
		return NULL;
	}
	return e;
}

/* ["3g.40gb@0", ...]: a layout's instances as profile@start. */
static json_t *layout_json(const struct carve_mig_model *m, const struct carve_mig_layout *l)
{
	json_t *arr = json_array();
	char buf[64];
	unsigned i;

	for (i = 0; arr && i < l->n; i++) {
		snprintf(buf, sizeof(buf), "%s@%u", m->profiles[l->inst[i].profile].name,
			 (unsigned)l->inst[i].start);
		if (json_array_append_new(arr, json_string(buf))) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* "repartitions": [{"node", "gpu", "from", "to"}, ...], the placer's log in order. */
static json_t *repartitions_json(const struct carve_admission *ad)
{
	const struct carve_cluster *c = ad->inv->cluster;
	const struct carve_repartition *r;
	size_t n = carve_placer_repartitions(ad->placer, &r), i;
	json_t *arr = json_array();

	for (i = 0; arr && i < n; i++) {
		const struct carve_gpu *g = carve_cluster_gpu(c, r[i].gpu);
		json_t *o = json_object();
		bool ok = o && jstr(o, "node", carve_cluster_node(c, g->node)->name) &&
			  jset(o, "gpu", json_integer(g->index)) &&
			  jset(o, "from", layout_json(g->mig_model, &r[i].from)) &&
			  jset(o, "to", layout_json(g->mig_model, &r[i].to));

		if (!ok || json_array_append_new(arr, o)) {
			if (!ok)
				json_decref(o);
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *carve_admission_result_json(const struct carve_admission *ad)
{
	static const char *const lists[] = {"admitted", "preempted", "pending"};
	static const enum decision kinds[] = {D_ADMITTED, D_PREEMPTED, D_PENDING};
	json_t *root = json_object(), *arr[3];
	struct row *rows;
	size_t n = 0, i, k;

	rows = root ? sorted_rows(ad, &n) : NULL;
	if (!rows)
		goto fail;
	for (k = 0; k < 3; k++)
		if (!jset(root, lists[k], arr[k] = json_array()))
			goto fail;
	for (i = 0; i < n; i++) {
		enum decision d = decide(rows[i].s);

		for (k = 0; k < 3; k++)
			if (kinds[k] == d && json_array_append_new(arr[k], entry_json(ad, rows[i].s, d)))
				goto fail;
	}
	if (ad->mig_dynamic && ad->placer && !jset(root, "repartitions", repartitions_json(ad)))
		goto fail;
	carve_free(rows);
	return root;
fail:
	carve_free(rows);
	json_decref(root);
	return NULL;
}

/* ---- table ---- */

struct sbuf {
	char *s;
	size_t n, cap;
	bool nomem;
};

static void sb_put(struct sbuf *b, const char *s)
{
	size_t l = strlen(s);

	if (b->nomem)
		return;
	if (b->n + l + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		char *p;

		while (cap < b->n + l + 1)
			cap *= 2;
		p = carve_realloc(b->s, cap);
		if (!p) {
			b->nomem = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, l + 1);
	b->n += l;
}

/* Placed pods of a podSet: " @node-a(2),node-b", nodes in first-use order,
 * with the pod count when more than one. */
static void nodes_cell(struct sbuf *b, const struct carve_admission *ad,
		       const struct carve_ps_result *p)
{
	const struct carve_cluster *c = ad->inv ? ad->inv->cluster : NULL;
	size_t i, j, k;
	char num[32];

	if (!c || !p->npods)
		return;
	sb_put(b, " @");
	for (i = 0, k = 0; i < p->npods; i++) {
		size_t cnt = 0;

		for (j = 0; j < i && p->pods[j].node != p->pods[i].node; j++)
			;
		if (j < i)
			continue; /* listed already */
		for (j = i; j < p->npods; j++)
			cnt += p->pods[j].node == p->pods[i].node;
		if (k++)
			sb_put(b, ",");
		sb_put(b, carve_cluster_node(c, p->pods[i].node)->name);
		if (cnt > 1) {
			snprintf(num, sizeof(num), "(%zu)", cnt);
			sb_put(b, num);
		}
	}
}

/* "cpu=default,nvidia.com/gpu=h100"; several podSets: "driver:cpu=a;worker:cpu=b";
 * placed pods follow each podSet (nodes_cell). */
static void flavors_cell(struct sbuf *b, const struct carve_admission *ad,
			 const struct carve_wl_status *s)
{
	size_t i, j;

	for (i = 0; i < s->npodsets; i++) {
		const struct carve_ps_result *p = &s->podsets[i];

		if (i)
			sb_put(b, ";");
		if (s->npodsets > 1) {
			sb_put(b, p->name);
			sb_put(b, ":");
		}
		for (j = 0; j < p->n; j++) {
			if (j)
				sb_put(b, ",");
			sb_put(b, p->resources[j]);
			sb_put(b, "=");
			sb_put(b, p->flavors[j]);
		}
		nodes_cell(b, ad, p);
	}
	if (!b->n)
		sb_put(b, "-");
}

static void reason_cell(struct sbuf *b, const struct carve_admission *ad,
			const struct carve_wl_status *s, enum decision d)
{
	switch (d) {
	case D_PREEMPTED:
		sb_put(b, carve_preempt_reason_name(s->preempt_reason));
		sb_put(b, " by ");
		sb_put(b, preemptor_key(ad, s));
		break;
	case D_PENDING:
		sb_put(b, pending_reason(s));
		if (s->message && *s->message) {
			sb_put(b, ": ");
			sb_put(b, s->message);
		}
		break;
	case D_ADMITTED:
		sb_put(b, s->borrowing ? "borrowing" : "-");
		break;
	default:
		sb_put(b, "-");
		break;
	}
}

struct cells {
	const char *key, *cq, *decision;
	struct sbuf flavors, reason;
};

static int width(size_t a, const char *s)
{
	size_t l = strlen(s);

	return (int)(l > a ? l : a);
}

static void print_layout(const struct carve_mig_model *m, const struct carve_mig_layout *l,
			 FILE *out)
{
	unsigned i;

	if (!l->n)
		fputs("-", out);
	for (i = 0; i < l->n; i++)
		fprintf(out, "%s%s@%u", i ? "," : "", m->profiles[l->inst[i].profile].name,
			(unsigned)l->inst[i].start);
}

/* "repartition NODE GPU I: FROM -> TO", one line per log entry. */
static void print_repartitions(const struct carve_admission *ad, FILE *out)
{
	const struct carve_cluster *c = ad->inv->cluster;
	const struct carve_repartition *r;
	size_t n = carve_placer_repartitions(ad->placer, &r), i;

	for (i = 0; i < n; i++) {
		const struct carve_gpu *g = carve_cluster_gpu(c, r[i].gpu);

		fprintf(out, "repartition %s GPU %u: ", carve_cluster_node(c, g->node)->name,
			(unsigned)g->index);
		print_layout(g->mig_model, &r[i].from, out);
		fputs(" -> ", out);
		print_layout(g->mig_model, &r[i].to, out);
		fputs("\n", out);
	}
}

int carve_admission_print_table(const struct carve_admission *ad, FILE *out)
{
	struct row *rows;
	struct cells *c = NULL;
	size_t n = 0, i, k = 0;
	int wk = 8, wq = 5, wd = 8, wf = 7, rc = 0;

	rows = sorted_rows(ad, &n);
	if (!rows)
		return CARVE_ENOMEM;
	c = carve_calloc(n ? n : 1, sizeof(*c));
	if (!c) {
		carve_free(rows);
		return CARVE_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const struct carve_wl_status *s = rows[i].s;
		enum decision d = decide(s);

		if (d == D_NONE)
			continue;
		c[k].key = s->key;
		c[k].cq = s->cq ? s->cq : "-";
		c[k].decision = decision_names[d];
		flavors_cell(&c[k].flavors, ad, s);
		reason_cell(&c[k].reason, ad, s, d);
		if (c[k].flavors.nomem || c[k].reason.nomem)
			rc = CARVE_ENOMEM;
		k++;
	}
	for (i = 0; i < k && !rc; i++) {
		wk = width((size_t)wk, c[i].key);
		wq = width((size_t)wq, c[i].cq);
		wd = width((size_t)wd, c[i].decision);
		wf = width((size_t)wf, c[i].flavors.s);
	}
	if (!rc) {
		fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", wk, "WORKLOAD", wq, "QUEUE", wd,
			"DECISION", wf, "FLAVORS", "REASON");
		for (i = 0; i < k; i++)
			fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", wk, c[i].key, wq, c[i].cq, wd,
				c[i].decision, wf, c[i].flavors.s, c[i].reason.s);
		if (ad->mig_dynamic && ad->placer)
			print_repartitions(ad, out);
	}
	for (i = 0; i < k; i++) {
		carve_free(c[i].flavors.s);
		carve_free(c[i].reason.s);
	}
	carve_free(c);
	carve_free(rows);
	return rc;
}
