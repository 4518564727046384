/*
 * admit.c - the admission engine object: flavors, cohorts, ClusterQueues
 * and workloads in (deep copies), their lists (admitted lists with victim
 * records, pending heaps), placement glue, removal of finished
 * workloads, and the status views.  The cycle itself is admit_cycle.c.
 *
 * With a placer (carve_adm_set_placer), a head that fits its quota is
 * admitted only when its whole gang is placed (carve__place_wl; within one domain
 * of its podSets' topology level when they name one); otherwise it is
 * NoFit and charges nothing.  A workload holds its placement exactly while
 * it is admitted: placed right before it is charged, released when it is
 * uncharged (eviction, finish).
 *
 * Ownership: specs are deep-copied into the arena at add time; per-workload
 * assignments and placements are carve_malloc'd and freed when replaced or
 * at destroy (the placer is borrowed and never touched by destroy).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit_int.h"
#include "carve/quantity.h"

const char *carve_pending_reason_name(enum carve_pending_reason r)
{
	switch (r) {
	case CARVE_PEND_NOFIT:
		return "NoFit";
	case CARVE_PEND_PREEMPTION_ISSUED:
		return "PreemptionIssued";
	case CARVE_PEND_SKIPPED:
		return "SkippedInCycle";
	default:
		return "";
	}
}

const char *carve_preempt_reason_name(enum carve_preempt_reason r)
{
	switch (r) {
	case CARVE_PREEMPT_IN_CQ:
		return "InClusterQueue";
	case CARVE_PREEMPT_RECLAIM:
		return "InCohortReclamation";
	case CARVE_PREEMPT_RECLAIM_WHILE_BORROWING:
		return "InCohortReclaimWhileBorrowing";
	case CARVE_PREEMPT_FAIR_SHARING:
		return "InCohortFairSharing";
	default:
		return "";
	}
}

/* ---- create / destroy ---- */

struct carve_adm *carve_adm_create(void)
{
	struct carve_adm *a = carve_calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	carve_arena_init(&a->arena);
	a->cat.res = carve_resreg_create();
	if (!a->cat.res) {
		carve_free(a);
		return NULL;
	}
	return a;
}

void carve_adm_destroy(struct carve_adm *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->cat.nwls; i++) {
		carve__assignment_free(&a->cat.wls[i].adm);
		carve_free(a->cat.wls[i].pl);
		carve_free(a->cat.wls[i].psr);
		carve_free(a->cat.wls[i].st);
	}
	for (i = 0; i < a->cat.ncqs; i++) {
		carve_free(a->cat.cqs[i].wls);
		carve_free(a->cat.cqs[i].vr);
		carve_free(a->cat.cqs[i].pend);
		carve_free(a->cat.cqs[i].aside);
	}
	carve__idmap_free(&a->ix.wlmap);
	carve__idmap_free(&a->ix.cqmap);
	carve__idmap_free(&a->ix.msgmap);
	carve_free(a->ix.msgs);
	carve_free(a->sched.visit);
	carve_free(a->sched.marked);
	carve_free(a->cyc.scratch_targets);
	carve_free(a->cyc.scratch_keys);
	carve_free(a->ix.krank);
	carve_free(a->cyc.ents);
	carve_free(a->cyc.ord);
	carve_free(a->cyc.skip_cohort);
	for (i = 0; i < OCACHE_SLOTS; i++)
		carve_free(a->cyc.ocache[i].targets);
	carve_free(a->cyc.scratch_cands);
	carve_free(a->cat.wls);
	carve_free(a->cat.cqs);
	carve_free(a->qt.nodes);
	carve_free(a->cat.flavors);
	carve_resreg_destroy(a->cat.res);
	carve_arena_cleanup(&a->arena);
	carve_free(a);
}

static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *v;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	v = carve_realloc(*arr, c * size);
	if (!v)
		return CARVE_ENOMEM;
	*arr = v;
	*cap = c;
	return 0;
}

/* Room for need elements in *arr (at least doubling). */
int carve__adm_reserve(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t c;
	void *v;

	if (need <= *cap)
		return 0;
	c = *cap * 2 > need ? *cap * 2 : need;
	v = carve_realloc(*arr, c * size);
	if (!v)
		return CARVE_ENOMEM;
	*arr = v;
	*cap = c;
	return 0;
}

/* ---- deep copies into the arena ---- */

#define ADUP(a, s) ((s) ? carve_arena_strdup(&(a)->arena, (s)) : NULL)

/* Arena copy of s (NULL stays NULL); a failed copy sets *oom. */
static const char *cp(struct carve_adm *a, const char *s, bool *oom)
{
	const char *c = ADUP(a, s);

	if (s && !c)
		*oom = true;
	return c;
}

static const char **dup_strs(struct carve_adm *a, const char *const *v, size_t n, bool *oom)
{
	const char **o;
	size_t i;

	if (!n)
		return NULL;
	o = carve_arena_alloc(&a->arena, n * sizeof(*o));
	if (!o) {
		*oom = true;
		return NULL;
	}
	for (i = 0; i < n; i++)
		o[i] = cp(a, v[i], oom);
	return o;
}

static struct carve_label *dup_labels(struct carve_adm *a, const struct carve_label *v, size_t n,
				      bool *oom)
{
	struct carve_label *o;
	size_t i;

	if (!n)
		return NULL;
	o = carve_arena_alloc(&a->arena, n * sizeof(*o));
	if (!o) {
		*oom = true;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		o[i].key = cp(a, v[i].key, oom);
		o[i].value = cp(a, v[i].value, oom);
	}
	return o;
}

static struct carve_toleration_spec *dup_tols(struct carve_adm *a,
					      const struct carve_toleration_spec *v, size_t n,
					      bool *oom)
{
	struct carve_toleration_spec *o;
	size_t i;

	if (!n)
		return NULL;
	o = carve_arena_alloc(&a->arena, n * sizeof(*o));
	if (!o) {
		*oom = true;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		o[i].key = cp(a, v[i].key, oom);
		o[i].op = cp(a, v[i].op, oom);
		o[i].value = cp(a, v[i].value, oom);
		o[i].effect = cp(a, v[i].effect, oom);
	}
	return o;
}

static int check_groups(const char *kind, const char *name, const struct carve_rgroup_spec *g,
			size_t ng, struct carve_error *err)
{
	size_t i, j, f, r, i2, r2;

	for (i = 0; i < ng; i++) {
		for (f = 0; f < g[i].nflavors; f++) {
			for (j = 0; j < f; j++)
				if (!strcmp(g[i].flavors[j], g[i].flavors[f]))
					return carve_errorf(err, CARVE_EINVAL, "%s %s: flavor %s "
							    "listed twice", kind, name, g[i].flavors[f]);
			for (r = 0; r < g[i].nres; r++) {
				const struct carve_fquota *q = &g[i].quota[f * g[i].nres + r];

				if (q->present && (q->nominal < 0 ||
						   (q->has_borrowing_limit && q->borrowing_limit < 0) ||
						   (q->has_lending_limit && q->lending_limit < 0)))
					return carve_errorf(err, CARVE_EINVAL, "%s %s: negative quota "
							    "for %s/%s", kind, name, g[i].flavors[f],
							    g[i].resources[r]);
			}
		}
		for (r = 0; r < g[i].nres; r++)
			for (i2 = 0; i2 <= i; i2++)
				for (r2 = 0; r2 < (i2 == i ? r : g[i2].nres); r2++)
					if (!strcmp(g[i].resources[r], g[i2].resources[r2]))
						return carve_errorf(err, CARVE_EINVAL, "%s %s: resource "
								    "%s is in two resource groups",
								    kind, name, g[i].resources[r]);
	}
	return 0;
}

static struct carve_rgroup_spec *dup_groups(struct carve_adm *a, const struct carve_rgroup_spec *g,
					    size_t ng, bool *oom)
{
	struct carve_rgroup_spec *o;
	size_t i;

	if (!ng)
		return NULL;
	o = carve_arena_alloc(&a->arena, ng * sizeof(*o));
	if (!o) {
		*oom = true;
		return NULL;
	}
	for (i = 0; i < ng; i++) {
		struct carve_fquota *q;
		size_t nq = g[i].nres * g[i].nflavors;

		o[i].nres = g[i].nres;
		o[i].nflavors = g[i].nflavors;
		o[i].resources = dup_strs(a, g[i].resources, g[i].nres, oom);
		o[i].flavors = dup_strs(a, g[i].flavors, g[i].nflavors, oom);
		q = nq ? carve_arena_alloc(&a->arena, nq * sizeof(*q)) : NULL;
		if (nq && !q)
			*oom = true;
		else if (nq)
			memcpy(q, g[i].quota, nq * sizeof(*q));
		o[i].quota = q;
	}
	return o;
}

/* ---- objects ---- */

static const char *cq_key(const void *ctx, uint32_t id)
{
	return ((const struct carve_adm *)ctx)->cat.cqs[id].spec.name;
}

static const char *wl_key(const void *ctx, uint32_t id)
{
	return ((const struct carve_adm *)ctx)->cat.wls[id].spec.key;
}

int carve_adm_add_flavor(struct carve_adm *a, const struct carve_flavor_spec *s,
			 struct carve_error *err)
{
	struct flavor *f;
	bool oom = false;
	size_t i;

	if (a->cat.finalized)
		return carve_errorf(err, CARVE_EINVAL, "flavors must be added before finalize");
	if (!s->name || !*s->name)
		return carve_errorf(err, CARVE_EINVAL, "flavor without a name");
	for (i = 0; i < a->cat.nflavors; i++)
		if (!strcmp(a->cat.flavors[i].spec.name, s->name))
			return carve_errorf(err, CARVE_EEXISTS, "flavor %s defined twice", s->name);
	if (grow((void **)&a->cat.flavors, &a->cat.capflavors, a->cat.nflavors, sizeof(*a->cat.flavors)))
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	f = &a->cat.flavors[a->cat.nflavors];
	memset(f, 0, sizeof(*f));
	f->spec.name = ADUP(a, s->name);
	f->spec.nlabels = s->nlabels;
	f->spec.labels = dup_labels(a, s->labels, s->nlabels, &oom);
	f->spec.ntaints = s->ntaints;
	if (s->ntaints) {
		struct carve_taint_spec *t = carve_arena_alloc(&a->arena, s->ntaints * sizeof(*t));

		if (!t)
			oom = true;
		for (i = 0; t && i < s->ntaints; i++) {
			t[i].key = cp(a, s->taints[i].key, &oom);
			t[i].value = cp(a, s->taints[i].value, &oom);
			t[i].effect = cp(a, s->taints[i].effect, &oom);
		}
		f->spec.taints = t;
	}
	f->spec.ntolerations = s->ntolerations;
	f->spec.tolerations = dup_tols(a, s->tolerations, s->ntolerations, &oom);
	f->spec.ntopology = s->ntopology;
	if (s->ntopology)
		f->spec.topology = dup_strs(a, s->topology, s->ntopology, &oom);
	if (oom || !f->spec.name)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	a->cat.nflavors++;
	return 0;
}

static int new_node(struct carve_adm *a, const char *name, bool is_cq, struct carve_error *err)
{
	size_t i;
	struct qnode *n;

	for (i = 0; i < a->qt.nnodes; i++)
		if (a->qt.nodes[i].is_cq == is_cq && !strcmp(a->qt.nodes[i].name, name))
			return carve_errorf(err, CARVE_EEXISTS, "%s %s defined twice",
					    is_cq ? "ClusterQueue" : "Cohort", name);
	if (grow((void **)&a->qt.nodes, &a->qt.capnodes, a->qt.nnodes, sizeof(*a->qt.nodes)))
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	n = &a->qt.nodes[a->qt.nnodes];
	memset(n, 0, sizeof(*n));
	n->name = ADUP(a, name);
	if (!n->name)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	n->is_cq = is_cq;
	n->cq = -1;
	n->parent = -1;
	n->defined = true;
	n->fair_weight_milli = 1000;
	return (int)a->qt.nnodes++;
}

int carve_adm_add_cohort(struct carve_adm *a, const struct carve_cohort_spec *s,
			 struct carve_error *err)
{
	struct qnode *n;
	bool oom = false;
	int id, rc;

	if (a->cat.finalized)
		return carve_errorf(err, CARVE_EINVAL, "cohorts must be added before finalize");
	if (!s->name || !*s->name)
		return carve_errorf(err, CARVE_EINVAL, "cohort without a name");
	if ((rc = check_groups("Cohort", s->name, s->groups, s->ngroups, err)))
		return rc;
	id = new_node(a, s->name, false, err);
	if (id < 0)
		return id;
	n = &a->qt.nodes[id];
	n->parent_name = ADUP(a, s->parent);
	n->groups = dup_groups(a, s->groups, s->ngroups, &oom);
	n->ngroups = s->ngroups;
	n->fair_weight_milli = carve__fair_weight(s->fair_weight_milli);
	if (oom || (s->parent && !n->parent_name)) {
		a->qt.nnodes--;
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	}
	return 0;
}

int carve_adm_add_cq(struct carve_adm *a, const struct carve_cq_spec *s, struct carve_error *err)
{
	struct cq *q;
	bool oom = false;
	int id, rc;

	if (a->cat.finalized)
		return carve_errorf(err, CARVE_EINVAL, "ClusterQueues must be added before finalize");
	if (!s->name || !*s->name)
		return carve_errorf(err, CARVE_EINVAL, "ClusterQueue without a name");
	if ((rc = check_groups("ClusterQueue", s->name, s->groups, s->ngroups, err)))
		return rc;
	if (grow((void **)&a->cat.cqs, &a->cat.capcqs, a->cat.ncqs, sizeof(*a->cat.cqs)) ||
	    carve__idmap_reserve(&a->ix.cqmap, cq_key, a))
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	id = new_node(a, s->name, true, err);
	if (id < 0)
		return id;
	q = &a->cat.cqs[a->cat.ncqs];
	memset(q, 0, sizeof(*q));
	q->spec = *s;
	q->spec.name = a->qt.nodes[id].name;
	q->spec.cohort = ADUP(a, s->cohort);
	q->spec.groups = dup_groups(a, s->groups, s->ngroups, &oom);
	q->node = id;
	q->claim = -1;
	a->qt.nodes[id].cq = (int)a->cat.ncqs;
	a->qt.nodes[id].groups = (struct carve_rgroup_spec *)q->spec.groups;
	a->qt.nodes[id].ngroups = s->ngroups;
	a->qt.nodes[id].fair_weight_milli = carve__fair_weight(s->fair_weight_milli);
	if (oom || (s->cohort && !q->spec.cohort)) {
		a->qt.nnodes--;
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	}
	carve__idmap_put(&a->ix.cqmap, q->spec.name, (uint32_t)a->cat.ncqs);
	a->cat.ncqs++;
	return 0;
}

/* Resource groups of each queue as ids, and resource -> group. */
static int index_cq(struct carve_adm *a, struct cq *q, struct carve_error *err)
{
	size_t g, k;

	for (k = 0; k < CARVE_RES_MAX; k++)
		q->group_of[k] = -1;
	q->ngroups = (int)q->spec.ngroups;
	q->groups = carve_arena_alloc(&a->arena, (q->spec.ngroups ? q->spec.ngroups : 1) *
						     sizeof(*q->groups));
	if (!q->groups)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	for (g = 0; g < q->spec.ngroups; g++) {
		const struct carve_rgroup_spec *gs = &q->spec.groups[g];
		struct cq_group *cg = &q->groups[g];

		cg->nres = (int)gs->nres;
		cg->nflv = (int)gs->nflavors;
		cg->res = carve_arena_alloc(&a->arena, (gs->nres + 1) * sizeof(int));
		cg->flv = carve_arena_alloc(&a->arena, (gs->nflavors + 1) * sizeof(int));
		if (!cg->res || !cg->flv)
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
		for (k = 0; k < gs->nres; k++) {
			cg->res[k] = carve_resreg_find(a->cat.res, gs->resources[k]);
			if (cg->res[k] >= 0)
				q->group_of[cg->res[k]] = (int)g;
		}
		for (k = 0; k < gs->nflavors; k++) {
			size_t f;

			cg->flv[k] = -1;
			for (f = 0; f < a->cat.nflavors; f++)
				if (!strcmp(a->cat.flavors[f].spec.name, gs->flavors[k]))
					cg->flv[k] = (int)f;
		}
	}
	return 0;
}

int carve_adm_finalize(struct carve_adm *a, struct carve_error *err)
{
	size_t i;
	int rc;

	if (a->cat.finalized)
		return 0;
	if ((rc = carve__qt_finalize(a, err)))
		return rc;
	for (i = 0; i < a->cat.ncqs; i++)
		if ((rc = index_cq(a, &a->cat.cqs[i], err)))
			return rc;
	a->cat.finalized = true;
	return 0;
}

/* ---- workloads ---- */

static int find_cq(const struct carve_adm *a, const char *name)
{
	return carve__idmap_find(&a->ix.cqmap, name, cq_key, a);
}

int carve_adm_find_workload(const struct carve_adm *a, const char *key)
{
	int id = carve__idmap_find(&a->ix.wlmap, key, wl_key, a);

	return id >= 0 ? id : CARVE_ENOTFOUND;
}

/* ---- placement ---- */

int carve_adm_set_placer(struct carve_adm *a, struct carve_placer *p, const struct carve_cluster *c)
{
	if (!a || !p || !c || !a->cat.finalized || a->cat.nwls)
		return CARVE_EINVAL;
	a->cat.placer = p;
	a->cat.cluster = c;
	return 0;
}

/* The per-pod placement request of ps, from its merged requests. */
static int podset_preq(struct carve_adm *a, const struct carve_wl_spec *s, struct podset *ps,
		       struct carve_error *err)
{
	struct carve_pod_req *r = carve_arena_alloc(&a->arena, sizeof(*r));
	struct carve_req reqs[CARVE_RES_MAX];
	struct carve_podset_spec merged = ps->spec;
	struct carve_error why = {0};
	int k;

	if (!r)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	ps->preq = r;
	for (k = 0; k < ps->nreqs; k++) {
		reqs[k].name = carve_resreg_name(a->cat.res, ps->res[k]);
		reqs[k].milli = ps->milli[k];
	}
	merged.nreqs = (size_t)ps->nreqs;
	merged.reqs = reqs;
	if (carve_pod_req_of(&merged, r, &why))
		return carve_errorf(err, CARVE_EINVAL, "workload %s %s", s->key, why.text);
	/* the constraints are the podSet's and its flavors', per assignment
	 * (build_groups); the request keeps devices, cpu and memory */
	r->nselector = 0;
	r->selector = NULL;
	r->nterms = 0;
	r->terms = NULL;
	r->ntolerations = 0;
	r->tolerations = NULL;
	if (r->mig_profile) {
		r->mig_profile = ADUP(a, r->mig_profile);
		if (!r->mig_profile)
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * Builds the pod requests of w under assignment as (podSet constraints plus
 * the nodeLabels and tolerations of each flavor assigned to the podSet) and
 * the groups.  Everything lives in one carve_malloc'd block (*blk).
 */
static int build_groups(const struct carve_adm *a, const struct wl *w,
			const struct assignment *as, struct carve_pod_group **groups,
			void **blk)
{
	size_t np = (size_t)w->npodsets, nsel = 0, ntol = 0, flab = 0, ftol = 0, i, p;
	struct carve_pod_req *reqs;
	struct carve_label *sel;
	struct carve_toleration_spec *tol;
	char *m;

	for (i = 0; i < a->cat.nflavors; i++) {
		flab += a->cat.flavors[i].spec.nlabels;
		ftol += a->cat.flavors[i].spec.ntolerations;
	}
	for (p = 0; p < np; p++) {
		nsel += w->ps[p].spec.nselector + flab;
		ntol += w->ps[p].spec.ntolerations + ftol;
	}
	m = carve_malloc(np * (sizeof(struct carve_pod_group) + sizeof(*reqs)) +
			 (nsel + 1) * sizeof(*sel) + (ntol + 1) * sizeof(*tol));
	if (!m)
		return CARVE_ENOMEM;
	*blk = m;
	*groups = (struct carve_pod_group *)(void *)m;
	reqs = (struct carve_pod_req *)(void *)(m + np * sizeof(struct carve_pod_group));
	sel = (struct carve_label *)(void *)((char *)reqs + np * sizeof(*reqs));
	tol = (struct carve_toleration_spec *)(void *)(sel + nsel + 1);
	for (p = 0; p < np; p++) {
		const struct podset *ps = &w->ps[p];
		struct carve_pod_req *r = &reqs[p];
		int k, k2;

		*r = *ps->preq;
		r->selector = sel;
		r->tolerations = tol;
		if (ps->spec.nselector)
			memcpy(sel, ps->spec.selector, ps->spec.nselector * sizeof(*sel));
		if (ps->spec.ntolerations)
			memcpy(tol, ps->spec.tolerations, ps->spec.ntolerations * sizeof(*tol));
		r->nselector = ps->spec.nselector;
		r->ntolerations = ps->spec.ntolerations;
		r->nterms = ps->spec.nterms;
		r->terms = ps->spec.terms;
		for (k = 0; k < ps->nreqs; k++) {
			int fl = as->flavor[p * CARVE_RES_MAX + k];
			const struct carve_flavor_spec *f;

			if (fl < 0)
				continue;
			for (k2 = 0; k2 < k && as->flavor[p * CARVE_RES_MAX + k2] != fl; k2++)
				;
			if (k2 < k)
				continue; /* flavor already added */
			f = &a->cat.flavors[fl].spec;
			if (f->nlabels)
				memcpy(sel + r->nselector, f->labels, f->nlabels * sizeof(*sel));
			r->nselector += f->nlabels;
			if (f->ntolerations)
				memcpy(tol + r->ntolerations, f->tolerations,
				       f->ntolerations * sizeof(*tol));
			r->ntolerations += f->ntolerations;
		}
		sel += r->nselector;
		tol += r->ntolerations;
		(*groups)[p].req = r;
		(*groups)[p].count = as->count[p];
	}
	return 0;
}

const char *const carve_topology_levels[CARVE_TOPOLOGY_NLEVELS] = {
	"cloud.provider.com/topology-block",
	"cloud.provider.com/topology-rack",
	"kubernetes.io/hostname",
};

int carve_topology_level(const char *key)
{
	int i;

	for (i = 0; key && i < CARVE_TOPOLOGY_NLEVELS; i++)
		if (!strcmp(key, carve_topology_levels[i]))
			return i;
	return -1;
}

/* Index of key in the n levels lv, or -1. */
static int level_index(const char *const *lv, size_t n, const char *key)
{
	size_t i;

	for (i = 0; key && i < n; i++)
		if (!strcmp(lv[i], key))
			return (int)i;
	return -1;
}

/*
 * The topology levels for placing w under as: those of the first flavor
 * assigned to w (podSets, then resources, in order) that has a Topology;
 * else the default levels.  *flavor names that flavor, or is NULL.
 */
static const char *const *wl_levels(const struct carve_adm *a, const struct wl *w,
				    const struct assignment *as, size_t *n, const char **flavor)
{
	int p, r;

	for (p = 0; p < w->npodsets; p++)
		for (r = 0; r < w->ps[p].nreqs; r++) {
			int fl = as->flavor[p * CARVE_RES_MAX + r];

			if (fl >= 0 && a->cat.flavors[fl].spec.ntopology) {
				*n = a->cat.flavors[fl].spec.ntopology;
				*flavor = a->cat.flavors[fl].spec.name;
				return a->cat.flavors[fl].spec.topology;
			}
		}
	*n = CARVE_TOPOLOGY_NLEVELS;
	*flavor = NULL;
	return carve_topology_levels;
}

/*
 * The topology for placing w (Kueue TAS annotations on its podSets) under
 * as, into *t; *out is t or NULL (none).  The whole gang shares one: a
 * required level beats a preferred one, and among levels of the same kind
 * the narrowest wins.  Required level L: levels L .. narrowest, required
 * (one value of L, narrower domains tried first).  Preferred level L:
 * levels widest .. L, not required (L first, then each wider level, then
 * anywhere).  Returns 0, or CARVE_ENOFIT (why says which podSet names a
 * level the flavor's topology lacks).
 */
static int wl_topology(const struct carve_adm *a, const struct wl *w,
		       const struct assignment *as, struct carve_topology *t,
		       const struct carve_topology **out, char *why, size_t whysize)
{
	const char *flavor;
	size_t n;
	const char *const *lv = wl_levels(a, w, as, &n, &flavor);
	int lvl = -1, p;
	bool req = false;

	*out = NULL;
	for (p = 0; p < w->npodsets; p++) {
		const struct carve_podset_spec *s = &w->ps[p].spec;
		int l = level_index(lv, n, s->topology_level);

		if (!s->topology_level)
			continue;
		if (l < 0) {
			snprintf(why, whysize, "quota fits but no placement: podSet %s: topology "
				 "level %s is not a level of %s%s", s->name, s->topology_level,
				 flavor ? "the Topology of flavor " : "the default topology",
				 flavor ? flavor : "");
			return CARVE_ENOFIT;
		}
		if (s->topology_required && !req) {
			req = true;
			lvl = l;
		} else if (s->topology_required == req && l > lvl) {
			lvl = l;
		}
	}
	if (lvl < 0)
		return 0;
	t->required = req;
	t->levels = req ? &lv[lvl] : lv;
	t->nlevels = req ? n - (size_t)lvl : (size_t)lvl + 1;
	*out = t;
	return 0;
}

/* Places groups 0..k with group k at count c and gives it back: 0 when it fits. */
static int try_prefix(struct carve_adm *a, struct carve_pod_group *g, size_t k, int c,
		      size_t before, const struct carve_topology *topo,
		      struct carve_pod_place *out)
{
	int full = g[k].count, rc;

	g[k].count = c;
	rc = carve_placer_place(a->cat.placer, g, k + 1, topo, out);
	g[k].count = full;
	if (rc == 0)
		carve_placer_release(a->cat.placer, out, before + (size_t)c);
	return rc;
}

/* A hint when req asks for more than one time-slice replica and some
 * time-sliced GPU refuses that (failRequestsGreaterThanOne); else "". */
static const char *gt_one_hint(const struct carve_adm *a, const struct carve_pod_req *req)
{
	size_t g, n;

	if ((req->gpu != CARVE_GREQ_REPLICA && req->gpu != CARVE_GREQ_GPU) || req->count <= 1 ||
	    !a->cat.cluster)
		return "";
	n = carve_cluster_gpu_count(a->cat.cluster);
	for (g = 0; g < n; g++)
		if (carve_cluster_gpu(a->cat.cluster, (uint32_t)g)->fail_gt_one)
			return " (time-sliced GPUs with failRequestsGreaterThanOne serve one "
			       "replica per pod)";
	return "";
}

/*
 * Which podSet (and pod) of a gang that does not fit stops it, for people:
 * the first podSet whose pods do not all fit beside the podSets before it,
 * and (by bisection, so O(log count) tries) the first pod that does not.
 */
static void explain_nofit(struct carve_adm *a, const struct wl *w, struct carve_pod_group *g,
			  size_t ng, const struct carve_topology *topo,
			  struct carve_pod_place *out, char *why, size_t whysize)
{
	char where[160] = "", nowhere[256];
	size_t k, n = 0;

	if (topo && topo->required)
		snprintf(where, sizeof(where), " within one %s", topo->levels[0]);

	for (k = 0; k < ng; k++) {
		int lo = 1, hi = g[k].count;

		if (g[k].count <= 0)
			continue;
		if (!try_prefix(a, g, k, g[k].count, n, topo, out)) {
			n += (size_t)g[k].count;
			continue;
		}
		while (lo < hi) { /* first failing count in lo..hi */
			int mid = lo + (hi - lo) / 2;

			if (try_prefix(a, g, k, mid, n, topo, out))
				hi = mid;
			else
				lo = mid + 1;
		}
		if (lo == 1 && !n && !topo &&
		    carve_pod_why_nowhere(a->cat.cluster, g[k].req, nowhere, sizeof(nowhere))) {
			snprintf(why, whysize, "quota fits but no placement: podSet %s: %s",
				 w->ps[k].spec.name, nowhere);
			return;
		}
		snprintf(why, whysize, "quota fits but no placement: podSet %s: pod %d of %d "
			 "finds no node with room%s%s%s", w->ps[k].spec.name, lo, g[k].count,
			 where, n ? " beside the podSets before it" : "",
			 gt_one_hint(a, g[k].req));
		return;
	}
	snprintf(why, whysize, "quota fits but no placement: the gang does not fit the nodes%s",
		 where);
}

/*
 * Places every pod of w at the counts of as, all or nothing, and keeps the
 * placement on w.  Returns 0, CARVE_ENOFIT or CARVE_EINVAL (why says why;
 * nothing held), CARVE_ENOMEM.
 */
int carve__place_wl(struct carve_adm *a, struct wl *w, const struct assignment *as, char *why,
	     size_t whysize)
{
	struct carve_pod_group *g = NULL;
	struct carve_pod_place *out;
	struct carve_topology tb;
	const struct carve_topology *topo;
	void *blk = NULL;
	size_t total = 0, p;
	int rc;

	if ((rc = wl_topology(a, w, as, &tb, &topo, why, whysize)))
		return rc;
	if ((rc = build_groups(a, w, as, &g, &blk)))
		return rc;
	for (p = 0; p < (size_t)w->npodsets; p++)
		total += (size_t)(g[p].count > 0 ? g[p].count : 0);
	out = carve_malloc((total ? total : 1) * sizeof(*out));
	if (!out) {
		carve_free(blk);
		return CARVE_ENOMEM;
	}
	rc = carve_placer_place(a->cat.placer, g, (size_t)w->npodsets, topo, out);
	if (rc == 0) {
		w->pl = out;
		w->npl = total;
		carve_free(blk);
		return 0;
	}
	if (rc == CARVE_ENOFIT)
		explain_nofit(a, w, g, (size_t)w->npodsets, topo, out, why, whysize);
	else if (rc == CARVE_EINVAL)
		snprintf(why, whysize, "quota fits but no placement: the placer refuses its pod "
			 "requests");
	carve_free(out);
	carve_free(blk);
	return rc;
}

/* The podSet of pod i (of w's admitted pods, podSet by podSet); *first
 * is the index of that podSet's first pod. */
static size_t podset_of(const struct wl *w, size_t i, size_t *first)
{
	size_t p, off = 0, c;

	for (p = 0; p + 1 < (size_t)w->npodsets; p++) {
		c = (size_t)(w->adm.count[p] > 0 ? w->adm.count[p] : 0);
		if (i < off + c)
			break;
		off += c;
	}
	*first = off;
	return p;
}

/*
 * An admitted workload's given placements (carve_wl_spec.places, n ==
 * the sum of its admitted counts, podSet by podSet): the placed ones
 * taken exactly (carve_placer_retake, all or nothing, in pod order), then
 * the pods marked CARVE_PLACE_NONE placed as a gang around them (the same
 * podSet requests, flavor constraints and topology, counts reduced); the
 * full list, in pod order, kept on w.  Returns 0, CARVE_ENOFIT or
 * CARVE_EINVAL (why says why; nothing held), CARVE_ENOMEM.
 */
static int place_given(struct carve_adm *a, struct wl *w, const struct carve_pod_place *given,
		       size_t n, char *why, size_t whysize)
{
	struct carve_pod_group *g = NULL;
	struct carve_pod_place *full, *held, *rest;
	struct carve_topology tb;
	const struct carve_topology *topo;
	void *blk = NULL;
	size_t nheld = 0, i, k, off, p;
	int rc, c;

	full = carve_malloc(3 * (n ? n : 1) * sizeof(*full));
	if (!full)
		return CARVE_ENOMEM;
	held = full + (n ? n : 1);
	rest = held + (n ? n : 1);
	for (i = 0; i < n; i++)
		if (given[i].node != CARVE_PLACE_NONE)
			held[nheld++] = given[i];
	/* Every device on its pod's node (the placer checks the rest). */
	for (i = 0; i < n; i++) {
		const struct carve_node *nd;
		int d;

		if (given[i].node == CARVE_PLACE_NONE)
			continue;
		nd = given[i].node < carve_cluster_node_count(a->cat.cluster)
			     ? carve_cluster_node(a->cat.cluster, given[i].node) : NULL;
		for (d = 0; nd && d < given[i].ndevs && d < CARVE_POD_MAX_GPUS; d++)
			if (given[i].devs[d].gpu < nd->gpu_first ||
			    given[i].devs[d].gpu - nd->gpu_first >= nd->ngpus)
				break;
		if (!nd || d < given[i].ndevs)
			break;
	}
	if (i < n) {
		size_t at = i;

		p = podset_of(w, at, &off);
		snprintf(why, whysize, "podSet %s pod %zu names a node or GPU the cluster does "
			 "not have (or a GPU of another node)", w->ps[p].spec.name, at - off + 1);
		carve_free(full);
		return CARVE_EINVAL;
	}
	if (nheld && carve_placer_retake(a->cat.placer, held, nheld)) {
		/* Which pod: the first whose devices are not free beside the
		 * pods before it (each taken, then all given back). */
		for (i = 0, k = 0; i < n; i++) {
			if (given[i].node == CARVE_PLACE_NONE)
				continue;
			if (carve_placer_retake(a->cat.placer, &given[i], 1))
				break;
			held[k++] = given[i];
		}
		carve_placer_release(a->cat.placer, held, k);
		p = podset_of(w, i, &off);
		snprintf(why, whysize, "podSet %s pod %zu holds devices that are not free "
			 "(held by another workload or another of its pods, or not on its node)",
			 w->ps[p].spec.name, i - off + 1);
		carve_free(full);
		return CARVE_EINVAL;
	}
	if (nheld < n) {
		rc = wl_topology(a, w, &w->adm, &tb, &topo, why, whysize);
		if (!rc)
			rc = build_groups(a, w, &w->adm, &g, &blk);
		for (p = 0, off = 0; !rc && p < (size_t)w->npodsets; p++) {
			c = w->adm.count[p] > 0 ? w->adm.count[p] : 0;
			for (i = off; i < off + (size_t)c; i++)
				if (given[i].node != CARVE_PLACE_NONE)
					g[p].count--;
			off += (size_t)c;
		}
		if (!rc)
			rc = carve_placer_place(a->cat.placer, g, (size_t)w->npodsets, topo, rest);
		if (rc == CARVE_ENOFIT && g)
			explain_nofit(a, w, g, (size_t)w->npodsets, topo, rest, why, whysize);
		else if (rc == CARVE_EINVAL)
			snprintf(why, whysize, "quota fits but no placement: the placer refuses "
				 "its pod requests");
		carve_free(blk);
		if (rc) {
			carve_placer_release(a->cat.placer, held, nheld);
			carve_free(full);
			return rc;
		}
	}
	for (i = 0, k = 0; i < n; i++)
		full[i] = given[i].node != CARVE_PLACE_NONE ? given[i] : rest[k++];
	w->pl = full;
	w->npl = n;
	return 0;
}

/* Gives back w's placement, if it has one. */
void carve__unplace_wl(struct carve_adm *a, struct wl *w)
{
	if (w->pl && a->cat.placer)
		carve_placer_release(a->cat.placer, w->pl, w->npl);
	carve_free(w->pl);
	w->pl = NULL;
	w->npl = 0;
}

/*
 * Refuses a request the engine could not count exactly: what one podSet
 * asks of resource res (count pods x per pod), or that added to what the
 * podSets before it ask (*total, summed here).  With every such total in
 * int64 milli-units, any charge of the workload (any counts up to these,
 * any flavors) is exact.
 */
static int check_total(const struct carve_adm *a, const struct carve_wl_spec *s,
		       const struct podset *ps, int res, int64_t milli, int64_t *total,
		       struct carve_error *err)
{
	const char *name = carve_resreg_name(a->cat.res, res);
	char q[32];
	int64_t c;

	if (__builtin_mul_overflow((int64_t)ps->spec.count, milli, &c)) {
		if (carve_res_kind(name, NULL) == CARVE_RK_MEMORY)
			carve_qty_format_bytes(milli, q, sizeof(q));
		else
			carve_qty_format(milli, q, sizeof(q));
		return carve_errorf(err, CARVE_ERANGE, "workload %s podSet %s: %d pods x %s %s "
				    "overflows the largest quantity carve holds (%lldm)", s->key,
				    ps->spec.name, ps->spec.count, q, name, (long long)CARVE_QTY_MAX);
	}
	if (__builtin_add_overflow(*total, c, total))
		return carve_errorf(err, CARVE_ERANGE, "workload %s podSet %s: the podSets up "
				    "to this one ask for more %s than the largest quantity carve "
				    "holds (%lldm)", s->key, ps->spec.name, name,
				    (long long)CARVE_QTY_MAX);
	return 0;
}

static int copy_podsets(struct carve_adm *a, struct wl *w, const struct carve_wl_spec *s,
			struct carve_error *err)
{
	int64_t total[CARVE_RES_MAX] = {0};
	bool oom = false;
	size_t p, r, t;
	int j, rc;

	w->ps = carve_arena_alloc(&a->arena, s->npodsets * sizeof(*w->ps));
	if (!w->ps)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	w->npodsets = (int)s->npodsets;
	for (p = 0; p < s->npodsets; p++) {
		const struct carve_podset_spec *in = &s->podsets[p];
		struct podset *ps = &w->ps[p];
		struct carve_match_term *terms = NULL;
		int lres[CARVE_RES_MAX];
		int64_t lmilli[CARVE_RES_MAX];

		if (in->count < 0 || in->min_count < 0 || in->min_count > in->count)
			return carve_errorf(err, CARVE_EINVAL,
					    "workload %s podSet %s: count %d / minCount %d are not "
					    "0 <= minCount <= count", s->key, in->name ? in->name : "?",
					    in->count, in->min_count);
		ps->spec = *in;
		ps->spec.name = ADUP(a, in->name ? in->name : "main");
		ps->spec.selector = dup_labels(a, in->selector, in->nselector, &oom);
		ps->spec.tolerations = dup_tols(a, in->tolerations, in->ntolerations, &oom);
		if (in->nterms) {
			terms = carve_arena_alloc(&a->arena, in->nterms * sizeof(*terms));
			if (!terms)
				return carve_errorf(err, CARVE_ENOMEM, "out of memory");
			for (t = 0; t < in->nterms; t++) {
				struct carve_match_expr *ex = NULL;
				size_t e;

				terms[t].n = in->terms[t].n;
				if (in->terms[t].n)
					ex = carve_arena_alloc(&a->arena, in->terms[t].n * sizeof(*ex));
				if (in->terms[t].n && !ex)
					return carve_errorf(err, CARVE_ENOMEM, "out of memory");
				for (e = 0; e < in->terms[t].n; e++) {
					ex[e].key = cp(a, in->terms[t].exprs[e].key, &oom);
					ex[e].op = cp(a, in->terms[t].exprs[e].op, &oom);
					ex[e].nvalues = in->terms[t].exprs[e].nvalues;
					ex[e].values = dup_strs(a, in->terms[t].exprs[e].values,
								in->terms[t].exprs[e].nvalues, &oom);
				}
				terms[t].exprs = ex;
			}
		}
		ps->spec.terms = terms;
		ps->spec.topology_level = cp(a, in->topology_level, &oom);
		ps->spec.topology_required = in->topology_level && in->topology_required;
		ps->spec.reqs = NULL;
		ps->nreqs = 0;
		ps->res = lres; /* built here, then copied at their size */
		ps->milli = lmilli;
		for (r = 0; r < in->nreqs; r++) {
			int id, k;

			if (in->reqs[r].milli == 0)
				continue; /* a zero request never needs quota */
			if (in->reqs[r].milli < 0)
				return carve_errorf(err, CARVE_EINVAL, "workload %s: negative request "
						    "for %s", s->key, in->reqs[r].name);
			id = carve_resreg_intern(a->cat.res, in->reqs[r].name);
			if (id < 0)
				return carve_errorf(err, id, "workload %s: too many distinct resources",
						    s->key);
			for (k = 0; k < ps->nreqs && ps->res[k] != id; k++)
				;
			if (k < ps->nreqs) {
				if (__builtin_add_overflow(ps->milli[k], in->reqs[r].milli,
							   &ps->milli[k]))
					return carve_errorf(err, CARVE_ERANGE, "workload %s podSet "
							    "%s: its requests for %s add up to more "
							    "than the largest quantity carve holds "
							    "(%lldm)", s->key,
							    in->name ? in->name : "main",
							    in->reqs[r].name, (long long)CARVE_QTY_MAX);
				continue;
			}
			ps->res[ps->nreqs] = id;
			ps->milli[ps->nreqs++] = in->reqs[r].milli;
		}
		/* A queue covering "pods" counts every pod as one. */
		if (a->cat.cqs[w->cq].group_of[CARVE_RES_PODS] >= 0 && ps->nreqs < CARVE_RES_MAX) {
			int k;

			for (k = 0; k < ps->nreqs && ps->res[k] != CARVE_RES_PODS; k++)
				;
			if (k == ps->nreqs) {
				ps->res[ps->nreqs] = CARVE_RES_PODS;
				ps->milli[ps->nreqs++] = 1000;
			}
		}
		ps->res = carve_arena_alloc(&a->arena, (size_t)(ps->nreqs ? ps->nreqs : 1) *
							       sizeof(*ps->res));
		ps->milli = carve_arena_alloc(&a->arena, (size_t)(ps->nreqs ? ps->nreqs : 1) *
								 sizeof(*ps->milli));
		if (oom || !ps->spec.name || !ps->res || !ps->milli)
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
		memcpy(ps->res, lres, (size_t)ps->nreqs * sizeof(*ps->res));
		memcpy(ps->milli, lmilli, (size_t)ps->nreqs * sizeof(*ps->milli));
		for (j = 0; j < ps->nreqs; j++)
			if ((rc = check_total(a, s, ps, ps->res[j], ps->milli[j],
					      &total[ps->res[j]], err)))
				return rc;
		if (a->cat.placer && (rc = podset_preq(a, s, ps, err)))
			return rc;
	}
	return 0;
}

void carve__wl_charge(struct carve_adm *a, struct wl *w, int sign)
{
	size_t i;
	int node = a->cat.cqs[w->cq].node;

	for (i = 0; i < w->adm.nuse; i++)
		if (w->adm.use[i].fr >= 0)
			carve__qt_add_usage(a, node, w->adm.use[i].fr, sign * w->adm.use[i].q);
}

uint64_t carve__wl_frmask(const struct carve_adm *a, const struct wl *w)
{
	uint64_t m = 0;
	size_t i;

	if (a->qt.nfr > 64)
		return ~(uint64_t)0;
	for (i = 0; i < w->adm.nuse; i++)
		if (w->adm.use[i].fr >= 0 && w->adm.use[i].q > 0)
			m |= (uint64_t)1 << w->adm.use[i].fr;
	return m;
}

/* Room in q's admitted list for one more. */
int carve__cq_reserve_admitted(struct cq *q)
{
	size_t cap = q->capwls;

	if (q->nwls < cap)
		return 0;
	if (carve__adm_reserve((void **)&q->wls, &cap, q->nwls + 1, sizeof(*q->wls)))
		return CARVE_ENOMEM;
	cap = q->capwls;
	if (carve__adm_reserve((void **)&q->vr, &cap, q->nwls + 1, sizeof(*q->vr)))
		return CARVE_ENOMEM;
	q->capwls = cap;
	return 0;
}

/* Into its queue's admitted list (room made by carve__cq_reserve_admitted), after
 * its assignment and admission time are set; swap-removed by position, as
 * a scan would. */
void carve__cq_add_wl(struct carve_adm *a, struct cq *q, uint32_t id)
{
	const struct wl *w = &a->cat.wls[id];
	struct vrec *r = &q->vr[q->nwls];

	a->cat.wls[id].qpos = (uint32_t)q->nwls;
	r->mask = carve__wl_frmask(a, w);
	r->at = w->admitted_at;
	r->priority = w->spec.priority;
	r->rank = id < a->ix.nranked ? a->ix.krank[id] : UINT32_MAX;
	r->has_at = w->has_admitted_at;
	q->wls[q->nwls++] = id;
}

void carve__cq_del_wl(struct carve_adm *a, struct cq *q, uint32_t id)
{
	size_t i = a->cat.wls[id].qpos;

	q->nwls--;
	if (i < q->nwls) {
		q->wls[i] = q->wls[q->nwls];
		q->vr[i] = q->vr[q->nwls];
		a->cat.wls[q->wls[i]].qpos = (uint32_t)i;
	}
}

/* Into its queue's heap; the room was reserved when it was added. */
void carve__cq_add_pending(struct carve_adm *a, uint32_t id)
{
	carve__pq_push(a, &a->cat.cqs[a->cat.wls[id].cq], id);
}

/* A head leaving its queue's heap (admitted). */
void carve__cq_del_pending(struct carve_adm *a, uint32_t id)
{
	carve__pq_remove(a, &a->cat.cqs[a->cat.wls[id].cq], id);
}

/* Appends id to the visit list once; room for every workload was reserved
 * when it was added, so this never allocates. */
void carve__visit_add(struct carve_adm *a, uint32_t id)
{
	if (a->cat.wls[id].in_visit)
		return;
	a->cat.wls[id].in_visit = true;
	a->sched.visit[a->sched.nvisit++] = id;
}

/* Writes the implicit "waiting behind the head" status into the fields. */
static void wl_settle(struct carve_adm *a, struct wl *w)
{
	if (!w->waiting)
		return;
	w->waiting = false;
	w->pending_reason = CARVE_PEND_NOFIT;
	w->message = a->cat.cqs[w->cq].spec.stop != CARVE_STOP_NONE ?
			     "its ClusterQueue is stopped (stopPolicy)" :
			     "waiting behind the head of its queue";
	w->cycle = a->sched.cycle_done;
}

/* Usage of an existing admission: count x per-pod request per (flavor, resource). */
static int admission_from_spec(struct carve_adm *a, struct wl *w, const struct carve_wl_spec *s,
			       struct carve_error *err)
{
	struct assignment *as = &w->adm;
	size_t i, k;
	int p, r;

	if (carve__assignment_alloc(as, w))
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	for (p = 0; p < w->npodsets; p++) {
		const struct carve_ps_admission *pa = NULL;

		for (i = 0; i < s->nadmission; i++)
			if (s->admission[i].podset &&
			    !strcmp(s->admission[i].podset, w->ps[p].spec.name))
				pa = &s->admission[i];
		if (!pa && s->nadmission == 1 && w->npodsets == 1)
			pa = &s->admission[0];
		if (!pa)
			return carve_errorf(err, CARVE_EINVAL, "workload %s: admission has no "
					    "assignment for podSet %s", s->key, w->ps[p].spec.name);
		if (pa->count < 0)
			return carve_errorf(err, CARVE_EINVAL, "workload %s podSet %s: admitted "
					    "count %d is negative", s->key, w->ps[p].spec.name,
					    pa->count);
		as->count[p] = pa->count;
		for (r = 0; r < w->ps[p].nreqs; r++) {
			const char *rname = carve_resreg_name(a->cat.res, w->ps[p].res[r]);
			int fl = -1, fr;
			int64_t c;

			for (k = 0; k < pa->n; k++)
				if (!strcmp(pa->flavors[k].key, rname)) {
					size_t f;

					for (f = 0; f < a->cat.nflavors; f++)
						if (!strcmp(a->cat.flavors[f].spec.name,
							    pa->flavors[k].value))
							fl = (int)f;
					if (fl < 0)
						return carve_errorf(err, CARVE_EINVAL,
								    "workload %s: admission names "
								    "unknown flavor %s", s->key,
								    pa->flavors[k].value);
				}
			as->flavor[p * CARVE_RES_MAX + r] = fl;
			fr = fl >= 0 ? carve__fr_id(a, fl, w->ps[p].res[r]) : -1;
			if (fr < 0)
				continue; /* not under quota here: charges nothing */
			for (k = 0; k < as->nuse && as->use[k].fr != fr; k++)
				;
			if (k == as->nuse) {
				as->use[as->nuse].fr = fr;
				as->use[as->nuse++].q = 0;
			}
			if (__builtin_mul_overflow((int64_t)pa->count, w->ps[p].milli[r], &c) ||
			    __builtin_add_overflow(as->use[k].q, c, &as->use[k].q))
				return carve_errorf(err, CARVE_ERANGE, "workload %s podSet %s: its "
						    "admission charges more %s than the largest "
						    "quantity carve holds (%lldm)", s->key,
						    w->ps[p].spec.name, rname,
						    (long long)CARVE_QTY_MAX);
		}
	}
	return 0;
}

/*
 * A workload given as admitted holds its quota whatever it is, but usage
 * is exact and held in int64 milli-units: one whose charge would take the
 * usage of its ClusterQueue or of a cohort above it past that is refused
 * (CARVE_ERANGE), naming the (flavor, resource).
 */
static int check_charge_fits(const struct carve_adm *a, const struct wl *w,
			     struct carve_error *err)
{
	int node = a->cat.cqs[w->cq].node;
	size_t i;

	for (i = 0; i < w->adm.nuse; i++) {
		int fr = w->adm.use[i].fr;

		if (fr >= 0 && !carve__qt_can_add(a, node, fr, w->adm.use[i].q))
			return carve_errorf(err, CARVE_ERANGE, "workload %s: admitted, it would "
					    "take the usage of %s/%s in ClusterQueue %s or its "
					    "cohorts past the largest quantity carve holds "
					    "(%lldm)", w->spec.key,
					    a->cat.flavors[a->qt.fr_flavor[fr]].spec.name,
					    carve_resreg_name(a->cat.res, a->qt.fr_res[fr]),
					    w->spec.cq, (long long)CARVE_QTY_MAX);
	}
	return 0;
}

int carve_adm_add_workload(struct carve_adm *a, const struct carve_wl_spec *s,
			   struct carve_error *err)
{
	struct wl *w;
	int cq, rc;
	uint32_t id;

	if (!a->cat.finalized)
		return carve_errorf(err, CARVE_EINVAL, "finalize before adding workloads");
	if (!s->key || !*s->key)
		return carve_errorf(err, CARVE_EINVAL, "workload without a name");
	if (carve_adm_find_workload(a, s->key) >= 0)
		return carve_errorf(err, CARVE_EEXISTS, "workload %s added twice", s->key);
	if (!s->npodsets)
		return carve_errorf(err, CARVE_EINVAL, "workload %s has no podSets", s->key);
	cq = s->cq ? find_cq(a, s->cq) : -1;
	if (cq < 0)
		return carve_errorf(err, CARVE_ENOTFOUND, "workload %s: ClusterQueue %s does not exist",
				    s->key, s->cq ? s->cq : "(none)");
	if (grow((void **)&a->cat.wls, &a->cat.capwls, a->cat.nwls, sizeof(*a->cat.wls)) ||
	    (s->admitted && carve__cq_reserve_admitted(&a->cat.cqs[cq])) ||
	    grow((void **)&a->cat.cqs[cq].pend, &a->cat.cqs[cq].cappend, a->cat.cqs[cq].nall,
		 sizeof(struct pqent)) ||
	    grow((void **)&a->cat.cqs[cq].aside, &a->cat.cqs[cq].capaside, a->cat.cqs[cq].nall,
		 sizeof(uint32_t)) ||
	    grow((void **)&a->sched.visit, &a->sched.capvisit, a->cat.nwls, sizeof(*a->sched.visit)) ||
	    carve__idmap_reserve(&a->ix.wlmap, wl_key, a))
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	/* Both lists now have room for every workload of the queue, so moving
	 * one between them later never allocates. */
	id = (uint32_t)a->cat.nwls;
	w = &a->cat.wls[id];
	memset(w, 0, sizeof(*w));
	w->spec.key = ADUP(a, s->key);
	w->spec.cq = a->cat.cqs[cq].spec.name;
	w->spec.created = s->created;
	w->spec.priority = s->priority;
	w->spec.has_created = s->has_created;
	w->cq = cq;
	w->message = "";
	if (!w->spec.key)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	if ((rc = copy_podsets(a, w, s, err)))
		return rc;
	if (s->nplaces && !s->admitted)
		return carve_errorf(err, CARVE_EINVAL, "workload %s: placements given for a "
				    "workload not admitted", s->key);
	if (s->nplaces && !s->places)
		return carve_errorf(err, CARVE_EINVAL, "workload %s: %zu placements and no "
				    "list", s->key, s->nplaces);
	if (s->admitted) {
		if ((rc = admission_from_spec(a, w, s, err))) {
			carve__assignment_free(&w->adm);
			return rc;
		}
		if (s->nplaces && a->cat.placer) {
			size_t total = 0, p;

			for (p = 0; p < (size_t)w->npodsets; p++)
				total += (size_t)(w->adm.count[p] > 0 ? w->adm.count[p] : 0);
			if (total != s->nplaces) {
				carve__assignment_free(&w->adm);
				return carve_errorf(err, CARVE_EINVAL, "workload %s: %zu placements "
						    "for %zu admitted pods", s->key, s->nplaces,
						    total);
			}
		}
		if ((rc = check_charge_fits(a, w, err))) {
			carve__assignment_free(&w->adm);
			return rc;
		}
		w->state = CARVE_WL_ADMITTED;
		w->admitted_at = s->has_admitted_at ? s->admitted_at : s->created;
		w->has_admitted_at = s->has_admitted_at || s->has_created;
		carve__cq_add_wl(a, &a->cat.cqs[cq], id);
		carve__wl_charge(a, w, +1);
		if (a->cat.placer) {
			char why[400];

			why[0] = '\0';
			rc = s->nplaces ? place_given(a, w, s->places, s->nplaces, why, sizeof(why))
					: carve__place_wl(a, w, &w->adm, why, sizeof(why));
			if (rc == CARVE_ENOMEM) {
				carve__wl_charge(a, w, -1);
				carve__cq_del_wl(a, &a->cat.cqs[cq], id);
				carve__assignment_free(&w->adm);
				return carve_errorf(err, CARVE_ENOMEM, "out of memory");
			}
			if (rc) {
				char msg[512];

				snprintf(msg, sizeof(msg), "admitted without a placement (%s)", why);
				w->message = carve__adm_intern(a, msg);
			}
		}
	} else {
		carve__cq_add_pending(a, id);
		carve__visit_add(a, id);
	}
	carve__idmap_put(&a->ix.wlmap, w->spec.key, id);
	a->cat.nwls++;
	a->cat.cqs[cq].nall++;
	a->sched.changed = true;
	return (int)id;
}

int carve_adm_finish(struct carve_adm *a, uint32_t id)
{
	struct wl *w;

	if (id >= a->cat.nwls || a->cat.wls[id].state == CARVE_WL_FINISHED)
		return CARVE_ENOTFOUND;
	w = &a->cat.wls[id];
	if (w->state == CARVE_WL_ADMITTED) {
		carve__wl_charge(a, w, -1);
		carve__cq_del_wl(a, &a->cat.cqs[w->cq], id);
		carve__unplace_wl(a, w);
	} else {
		wl_settle(a, w); /* left in its heap or aside list: dropped there later */
	}
	w->state = CARVE_WL_FINISHED;
	w->marked = false;
	carve_free(w->psr); /* a finished workload's view has no podSets */
	w->psr = NULL;
	a->sched.changed = true;
	return 0;
}

bool carve_adm_fair_sharing(const struct carve_adm *a)
{
	return a->sched.fair_sharing;
}

int carve_adm_set_fair_strategies(struct carve_adm *a, const enum carve_fs_strategy *s, size_t n)
{
	size_t i;

	if (n < 1 || n > 2)
		return CARVE_EINVAL;
	for (i = 0; i < n; i++)
		if (s[i] != CARVE_FS_LE_FINAL_SHARE && s[i] != CARVE_FS_LT_INITIAL_SHARE)
			return CARVE_EINVAL;
	if (n == 2 && (s[0] != CARVE_FS_LE_FINAL_SHARE || s[1] != CARVE_FS_LT_INITIAL_SHARE))
		return CARVE_EINVAL;
	for (i = 0; i < n; i++)
		a->fs.strategy[i] = (uint8_t)s[i];
	a->fs.nstrategy = (int)n;
	return 0;
}

void carve_adm_set_fair_gate(struct carve_adm *a, enum carve_fair_gate g, bool on)
{
	if (g == CARVE_GATE_PREEMPT_WITHIN_NOMINAL)
		a->fs.no_within_nominal = !on;
	else if (g == CARVE_GATE_PRIORITIZE_NON_BORROWING)
		a->fs.no_non_borrowing = !on;
}

void carve_adm_set_fair_sharing(struct carve_adm *a, bool on)
{
	a->sched.fair_sharing = on;
}

size_t carve_adm_workload_count(const struct carve_adm *a)
{
	return a->cat.nwls;
}

/* ---- preemption to make room on the nodes ---- */

static const struct carve_adm *vord;

/* Victim order: lower priority, then most recently admitted, then key. */
static int victim_cmp(const void *pa, const void *pb)
{
	const struct wl *x = &vord->cat.wls[*(const uint32_t *)pa];
	const struct wl *y = &vord->cat.wls[*(const uint32_t *)pb];

	if (x->spec.priority != y->spec.priority)
		return x->spec.priority < y->spec.priority ? -1 : 1;
	if (x->admitted_at != y->admitted_at)
		return x->admitted_at > y->admitted_at ? -1 : 1;
	return strcmp(x->spec.key, y->spec.key);
}

/* Whether v's queue borrows a (flavor, resource) v uses. */
static bool queue_borrows_for(const struct carve_adm *a, const struct wl *v)
{
	size_t i;

	for (i = 0; i < v->adm.nuse; i++)
		if (v->adm.use[i].fr >= 0 && v->adm.use[i].q > 0 &&
		    carve__qt_borrowing(a, a->cat.cqs[v->cq].node, v->adm.use[i].fr))
			return true;
	return false;
}

/* Whether w may preempt v to make room on the nodes: v is placed, admitted
 * and not marked; from w's queue per withinClusterQueue, or from another
 * queue of its cohort tree that may be reclaimed from and borrows a
 * (flavor, resource) v uses, per reclaimWithinCohort. */
static bool node_candidate(const struct carve_adm *a, const struct wl *w, const struct wl *v)
{
	const struct cq *q = &a->cat.cqs[w->cq], *o = &a->cat.cqs[v->cq];

	if (v == w || v->state != CARVE_WL_ADMITTED || v->marked || !v->pl || !v->npl)
		return false;
	if (v->cq == w->cq) {
		if (q->spec.within_cq == CARVE_WCQ_NEVER || v->spec.priority > w->spec.priority)
			return false;
		if (v->spec.priority < w->spec.priority)
			return true;
		return q->spec.within_cq == CARVE_WCQ_LOWER_OR_NEWER_EQUAL && v->spec.has_created &&
		       (!w->spec.has_created || v->spec.created > w->spec.created);
	}
	if (q->spec.reclaim == CARVE_RECLAIM_NEVER || a->qt.nodes[q->node].parent < 0 ||
	    carve__qt_root(a, o->node) != carve__qt_root(a, q->node) || o->spec.not_reclaimable ||
	    !queue_borrows_for(a, v))
		return false;
	return q->spec.reclaim != CARVE_RECLAIM_LOWER || v->spec.priority < w->spec.priority;
}

/* Whether w's gang places under as now (what-if: given back at once). */
static int gang_places(struct carve_adm *a, struct wl *w, const struct assignment *as)
{
	struct carve_pod_group *g = NULL;
	struct carve_pod_place *out;
	struct carve_topology tb;
	const struct carve_topology *topo;
	void *blk = NULL;
	size_t total = 0, p;
	char why[8];
	int rc;

	if (wl_topology(a, w, as, &tb, &topo, why, sizeof(why)))
		return 0;
	if ((rc = build_groups(a, w, as, &g, &blk)))
		return rc == CARVE_ENOMEM ? CARVE_ENOMEM : 0;
	for (p = 0; p < (size_t)w->npodsets; p++)
		total += (size_t)(g[p].count > 0 ? g[p].count : 0);
	out = carve_malloc((total ? total : 1) * sizeof(*out));
	if (!out) {
		carve_free(blk);
		return CARVE_ENOMEM;
	}
	rc = carve_placer_place(a->cat.placer, g, (size_t)w->npodsets, topo, out);
	if (rc == 0)
		carve_placer_release(a->cat.placer, out, total);
	carve_free(out);
	carve_free(blk);
	return rc == 0 ? 1 : rc == CARVE_ENOMEM ? CARVE_ENOMEM : 0;
}

/*
 * Preemption to make room on the nodes, for a head w whose quota fits
 * under as but whose gang no flavor's nodes can hold.  Candidates
 * (node_candidate) in victim_cmp order are released in the placer one by
 * one until the gang places; then every victim but the last is taken back
 * (carve_placer_retake) when the gang still places without it, so the set
 * is minimal in that order.  The placer ends as it was found (every victim
 * taken back: they hold their nodes until evicted).  Returns how many
 * targets it wrote (0: none helps, or Dynamic MIG is on), or CARVE_ENOMEM.
 */
int carve__place_victims(struct carve_adm *a, struct wl *w, const struct assignment *as,
		  struct target **tout)
{
	uint32_t *c;
	bool *gone;
	struct target *targets;
	size_t n = 0, i, last = 0, nadm = 0, q;
	int rc = 0, fits = 0, nv = 0;

	if (carve_placer_is_mig_dynamic(a->cat.placer) || !a->cat.nwls)
		return 0;
	for (q = 0; q < a->cat.ncqs; q++)
		nadm += a->cat.cqs[q].nwls;
	c = carve_malloc((nadm ? nadm : 1) * sizeof(*c));
	gone = carve_calloc(nadm ? nadm : 1, sizeof(*gone));
	targets = carve_malloc((nadm ? nadm : 1) * sizeof(*targets));
	if (!c || !gone || !targets) {
		carve_free(c);
		carve_free(gone);
		carve_free(targets);
		return CARVE_ENOMEM;
	}
	/* Candidates are admitted, so in their queue's list; victim_cmp is a
	 * total order, so the order they are collected in does not matter. */
	for (q = 0; q < a->cat.ncqs; q++)
		for (i = 0; i < a->cat.cqs[q].nwls; i++)
			if (node_candidate(a, w, &a->cat.wls[a->cat.cqs[q].wls[i]]))
				c[n++] = a->cat.cqs[q].wls[i];
	vord = a;
	qsort(c, n, sizeof(*c), victim_cmp);
	for (i = 0; i < n && !fits; i++) {
		carve_placer_release(a->cat.placer, a->cat.wls[c[i]].pl, a->cat.wls[c[i]].npl);
		gone[i] = true;
		last = i;
		fits = gang_places(a, w, as);
		if (fits < 0)
			rc = fits;
	}
	for (i = 0; fits > 0 && i < last; i++) {
		const struct wl *v = &a->cat.wls[c[i]];
		int still;

		if (carve_placer_retake(a->cat.placer, v->pl, v->npl))
			continue; /* cannot happen: nothing else changed */
		gone[i] = false;
		still = gang_places(a, w, as);
		if (still < 0) {
			rc = still;
			break;
		}
		if (!still) {
			carve_placer_release(a->cat.placer, v->pl, v->npl);
			gone[i] = true;
		}
	}
	for (i = n; i-- > 0;) {
		const struct wl *v = &a->cat.wls[c[i]];

		if (!gone[i])
			continue;
		carve_placer_retake(a->cat.placer, v->pl, v->npl);
		if (fits > 0 && rc == 0) {
			targets[nv].wl = c[i];
			targets[nv++].reason = v->cq == w->cq ? CARVE_PREEMPT_IN_CQ
							    : CARVE_PREEMPT_RECLAIM;
		}
	}
	carve_free(c);
	carve_free(gone);
	if (nv > 0 && rc == 0) {
		carve_free(*tout);
		*tout = targets;
	} else {
		carve_free(targets);
	}
	return rc ? rc : nv;
}

/* ---- status ---- */

const struct carve_wl_status *carve_adm_status(const struct carve_adm *ca, uint32_t id)
{
	struct carve_adm *a = (struct carve_adm *)ca; /* the view is cached storage */
	struct wl *w;
	struct carve_wl_status *st;
	int p, r, n = 0;
	size_t off = 0, ntot = 0, base = 0;
	const char **psr_res, **psr_flv;
	int64_t *psr_use;

	if (id >= a->cat.nwls)
		return NULL;
	w = &a->cat.wls[id];
	if (!w->st)
		w->st = carve_malloc(sizeof(*w->st));
	st = w->st ? w->st : &a->st_oom;
	memset(st, 0, sizeof(*st));
	st->key = w->spec.key;
	st->cq = w->spec.cq;
	st->state = w->state;
	st->admitted_by_engine = w->admitted_by_engine;
	st->borrowing = w->borrowing;
	st->marked = w->marked;
	st->evicted = w->evicted;
	st->preemptor = w->preemptor;
	st->preempt_reason = w->preempt_reason;
	st->pending_reason = w->state == CARVE_WL_PENDING ? w->pending_reason : CARVE_PEND_NONE;
	st->message = w->message;
	st->cycle = w->cycle;
	if (w->waiting && w->state == CARVE_WL_PENDING) {
		st->pending_reason = CARVE_PEND_NOFIT;
		st->message = a->cat.cqs[w->cq].spec.stop != CARVE_STOP_NONE ?
				      "its ClusterQueue is stopped (stopPolicy)" :
				      "waiting behind the head of its queue";
		st->cycle = a->sched.cycle_done;
	}
	if (w->state != CARVE_WL_ADMITTED || !w->adm.count)
		return st;
	if (w->psr) /* built for this admission already */
		goto done;
	for (p = 0; p < w->npodsets; p++)
		ntot += (size_t)w->ps[p].nreqs;
	w->psr = carve_calloc(1, (size_t)w->npodsets * sizeof(*w->psr) +
				     ntot * (2 * sizeof(char *) + sizeof(int64_t)));
	if (!w->psr)
		return st; /* the podset detail is missing; the rest is right */
	psr_res = (const char **)(void *)(w->psr + w->npodsets);
	psr_flv = psr_res + ntot;
	psr_use = (int64_t *)(void *)(psr_flv + ntot);
	for (p = 0; p < w->npodsets; p++) {
		struct carve_ps_result *pr = &w->psr[p];

		pr->name = w->ps[p].spec.name;
		pr->count = w->adm.count[p];
		if (w->pl) {
			pr->npods = (size_t)(pr->count > 0 ? pr->count : 0);
			pr->pods = w->pl + off;
			off += pr->npods;
		}
		pr->resources = psr_res + base;
		pr->flavors = psr_flv + base;
		pr->usage = psr_use + base;
		n = 0;
		for (r = 0; r < w->ps[p].nreqs; r++) {
			int fl = w->adm.flavor[p * CARVE_RES_MAX + r];

			if (fl < 0)
				continue;
			psr_res[base + (size_t)n] = carve_resreg_name(a->cat.res, w->ps[p].res[r]);
			psr_flv[base + (size_t)n] = a->cat.flavors[fl].spec.name;
			psr_use[base + (size_t)n] = carve_qty_sat_mul(w->ps[p].milli[r], pr->count);
			n++;
		}
		pr->n = (size_t)n;
		base += (size_t)w->ps[p].nreqs;
	}
done:
	st->npodsets = (size_t)w->npodsets;
	st->podsets = w->psr;
	return st;
}

int64_t carve_adm_cq_usage(const struct carve_adm *a, const char *cq, const char *flavor,
			   const char *resource)
{
	int q = find_cq(a, cq), res, fr;
	size_t f;

	if (q < 0)
		return CARVE_ENOTFOUND;
	res = carve_resreg_find(a->cat.res, resource);
	for (f = 0; f < a->cat.nflavors; f++)
		if (!strcmp(a->cat.flavors[f].spec.name, flavor))
			break;
	if (res < 0 || f == a->cat.nflavors || !a->cat.finalized)
		return 0;
	fr = carve__fr_id(a, (int)f, res);
	return fr < 0 ? 0 : a->qt.nodes[a->cat.cqs[q].node].usage[fr];
}
