/*
 * queues.c - flavors, cohorts and ClusterQueues for the engine, and Volcano
 * and KAI queues translated onto them (docs/volcano-kai.md, "Mapping onto
 * carve's quota model").  Part of the bridge build (bridge_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge_int.h"

/* ---- flavors ---- */

void br_add_flavors(struct bld *b)
{
	size_t i, j;

	for (i = 0; i < b->m->nflavors && !b->nomem; i++) {
		const struct carve_mf_flavor *f = &b->m->flavors[i];
		struct carve_taint_spec *taints = br_scratch(b, f->ntaints, sizeof(*taints));
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
		s.labels = br_conv_kv(b, &f->node_labels);
		s.ntaints = f->ntaints;
		s.taints = taints;
		s.ntolerations = f->ntolerations;
		s.tolerations = br_conv_tols(b, f->ntolerations, f->tolerations);
		if (f->topology_name) {
			const struct carve_mf_topology *t =
				carve_mf_find_topology(b->m, f->topology_name);

			if (!t) {
				carve_diag_error(b->diags, f->topology_pos,
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
			br_refused(b, &f->meta, br_meta_pos(&f->meta), rc, &err);
		else
			b->flavor_ok[i] = true;
	}
}

/* ---- resource groups ---- */

bool br_flavor_known(struct bld *b, const char *name)
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
	const char **flavors = br_scratch(b, g->nflavors, sizeof(*flavors));
	struct carve_fquota *q = br_scratch(b, g->nflavors * (g->ncovered ? g->ncovered : 1),
					 sizeof(*q));
	size_t f, r, k, nf = 0;

	memset(out, 0, sizeof(*out));
	if (b->nomem)
		return;
	for (f = 0; f < g->nflavors; f++) {
		const struct carve_mf_flavorquotas *fq = &g->flavors[f];

		if (!br_flavor_known(b, fq->flavor)) {
			size_t n0 = b->diags->n;

			carve_diag_error(b->diags, fq->pos,
					 "%s %s: ResourceFlavor '%s' is not defined", owner->kind,
					 owner->name, fq->flavor);
			carve_diags_tag(b->diags, n0, "flavor-ref");
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
	struct carve_rgroup_spec *v = br_scratch(b, n, sizeof(*v));
	size_t i;

	for (i = 0; v && i < n; i++)
		conv_group(b, owner, &g[i], &v[i]);
	return v;
}

/* ---- cohorts ---- */

/* The parent graph of the Cohorts, for br_find_cycles(). */
struct cohort_graph {
	struct bld *b;
	bool *cut;
};

static int cohort_parent(const void *ctx, size_t i)
{
	const struct cohort_graph *g = ctx;
	const struct carve_manifests *m = g->b->m;
	const struct carve_mf_cohort *p;

	if (carve_mf_find_cohort(m, m->cohorts[i].meta.name) != &m->cohorts[i])
		return -1; /* a duplicate: the engine reports it */
	p = m->cohorts[i].parent ? carve_mf_find_cohort(m, m->cohorts[i].parent) : NULL;
	return p ? (int)(p - m->cohorts) : -1;
}

static const char *cohort_name(const void *ctx, size_t i)
{
	return ((const struct cohort_graph *)ctx)->b->m->cohorts[i].meta.name;
}

static void cohort_cycle(void *ctx, const size_t *path, size_t len)
{
	struct cohort_graph *g = ctx;
	const struct carve_mf_cohort *last = &g->b->m->cohorts[path[len - 1]];
	char chain[512];

	size_t n0 = g->b->diags->n;

	carve_diag_error(g->b->diags, last->parent_pos, BR_CYCLE_MSG, "Cohort", last->meta.name,
			 br_cycle_text(path, len, cohort_name, g, chain, sizeof(chain)));
	carve_diags_tag(g->b->diags, n0, "cohort-cycle");
	g->cut[path[len - 1]] = true;
}

/*
 * The engine refuses the whole tree on a cohort cycle, so cycles are found
 * here first (br_find_cycles) and the link that closes each is cut and
 * reported; the rest of the tree stays.
 */
static void cut_cycles(struct bld *b, bool *cut)
{
	struct cohort_graph g = {b, cut};

	if (!br_find_cycles(b->m->ncohorts, cohort_parent, &g, cohort_cycle, &g))
		b->nomem = true;
}

void br_add_cohorts(struct bld *b)
{
	bool *cut = br_scratch(b, b->m->ncohorts, sizeof(*cut));
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
		/* a weight of 0 is a weight (an infinite share when borrowing) */
		s.fair_weight_milli = c->fair_weight_milli ? c->fair_weight_milli
							   : CARVE_FAIR_WEIGHT_ZERO;
		if (b->nomem)
			return;
		rc = carve_adm_add_cohort(b->ad->adm, &s, &err);
		if (rc < 0)
			br_refused(b, &c->meta, br_meta_pos(&c->meta), rc, &err);
	}
}

/* ---- ClusterQueues ---- */

void br_add_cqs(struct bld *b)
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
		s.fair_weight_milli = q->fair_weight_milli ? q->fair_weight_milli
							   : CARVE_FAIR_WEIGHT_ZERO;
		if (b->nomem)
			return;
		rc = carve_adm_add_cq(b->ad->adm, &s, &err);
		if (rc < 0)
			br_refused(b, &q->meta, br_meta_pos(&q->meta), rc, &err);
	}
}

/* ---- Volcano and KAI queues (docs/volcano-kai.md) ---- */

int br_fam_find(const struct family *f, const char *name)
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
	f->q = br_scratch(b, n, sizeof(*f->q));
	for (i = 0; f->q && i < n; i++) {
		f->q[i].up = -1;
		f->q[i].weight_milli = 1000;
		f->q[i].res = br_scratch(b, CARVE_RES_MAX, sizeof(*f->q[i].res));
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
	static const char *const names[] = {CARVE_RES_NAME_GPU, CARVE_RES_NAME_CPU,
						    CARVE_RES_NAME_MEMORY};
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
				carve_diag_error(b->diags, kr[k]->pos,
						 "Queue %s: %s quota or limit is too large", v->meta.name,
						 names[k]);
				q->skip = true;
			}
		}
	}
}

/* A family's parent graph, for br_find_cycles(). */
struct fam_graph {
	struct bld *b;
	struct family *f;
};

static int fam_parent(const void *ctx, size_t i)
{
	return ((const struct fam_graph *)ctx)->f->q[i].up;
}

static const char *fam_name(const void *ctx, size_t i)
{
	return ((const struct fam_graph *)ctx)->f->q[i].meta->name;
}

/* Reports a cycle of queues and cuts the link that closes it. */
static void fam_cycle(void *ctx, const size_t *path, size_t len)
{
	struct fam_graph *g = ctx;
	struct xq *last = &g->f->q[path[len - 1]];
	char chain[512];

	size_t n0 = g->b->diags->n;

	carve_diag_error(g->b->diags, last->parent_pos, BR_CYCLE_MSG, g->f->what,
			 last->meta->name, br_cycle_text(path, len, fam_name, g, chain,
							 sizeof(chain)));
	carve_diags_tag(g->b->diags, n0, "queue-cycle");
	last->up = -1;
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
	size_t i;

	for (i = 0; i < f->n; i++) {
		struct xq *q = &f->q[i];
		const char *name = q->meta->name;
		const char *clash = NULL;

		if (f->root_queue && !strcmp(name, f->root_queue)) {
			q->is_root = q->is_parent = true;
			continue;
		}
		if (br_fam_find(f, name) != (int)i)
			clash = f->what;
		else if (carve_mf_find_cq(m, name))
			clash = "Kueue ClusterQueue";
		else if (carve_mf_find_cohort(m, name))
			clash = "Kueue Cohort";
		else if (f == &b->kai && br_fam_find(&b->vc, name) >= 0)
			clash = "Volcano Queue";
		if (clash) {
			size_t n0 = b->diags->n;

			carve_diag_error(b->diags, br_meta_pos(q->meta),
					 "%s %s: a %s of the same name is already defined; this "
					 "queue is not used", f->what, name, clash);
			carve_diags_tag(b->diags, n0, "duplicate");
			q->skip = true;
		}
	}
	for (i = 0; i < f->n; i++) {
		struct xq *q = &f->q[i];
		int up;

		if (q->skip || q->is_root || !q->parent || !strcmp(q->parent, q->meta->name) ||
		    (f->root_queue && !strcmp(q->parent, f->root_queue)))
			continue;
		up = br_fam_find(f, q->parent);
		if (up < 0) {
			carve_diag_warn(b->diags, q->parent_pos,
					"%s %s: parent queue '%s' is not defined; the queue is "
					"placed under the root cohort %s", f->what, q->meta->name,
					q->parent, f->root);
			continue;
		}
		q->up = up;
		f->q[up].is_parent = true;
	}
	{
		struct fam_graph g = {b, f};

		if (!br_find_cycles(f->n, fam_parent, &g, fam_cycle, &g))
			b->nomem = true;
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
		f->flavor_ok = br_flavor_known(b, f->flavor);
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
	const char **res = br_scratch(b, q->nres, sizeof(*res));
	struct carve_fquota *quota = br_scratch(b, q->nres, sizeof(*quota));
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
			br_refused(b, q->meta, br_meta_pos(q->meta), rc, &err);
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
			carve_diag_error(b->diags, br_meta_pos(q->meta),
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
			br_refused(b, q->meta, br_meta_pos(q->meta), rc, &err);
		else
			q->added = true;
	}
}

bool br_is_volcano_pg(const struct carve_mf_podgroup *pg)
{
	return pg->meta.api_version && !strncmp(pg->meta.api_version, "scheduling.volcano.sh/", 22);
}

/* Every resource a Volcano PodGroup asks for is covered by its queue. */
static void vc_podgroup_resources(struct bld *b)
{
	size_t i, k;

	for (i = 0; i < b->m->npodgroups; i++) {
		const struct carve_mf_podgroup *pg = &b->m->podgroups[i];
		int qi = br_is_volcano_pg(pg) ? br_fam_find(&b->vc, pg->queue) : -1;

		for (k = 0; qi >= 0 && k < pg->min_resources.n; k++)
			xres_get(&b->vc.q[qi], pg->min_resources.v[k].name);
	}
}

/* Translates the Volcano and KAI queues; before finalize. */
void br_add_xqueues(struct bld *b)
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

