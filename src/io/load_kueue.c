/*
 * load_kueue.c - Kueue's quota objects into the manifest set:
 * ResourceFlavor, ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass
 * (and scheduling.k8s.io PriorityClass), and Kueue/KAI Topology; and the
 * two helpers every Kueue loader shares (ld_name_str, ld_version_note,
 * declared in loaders.h).  Workload, the one Kueue object that is not
 * quota, is load_workload.c's.
 *
 * Invariants: every real v1beta1/v1beta2 field is known, so real manifests
 * never draw "unknown field"; a spelling of the other API version is used but
 * warned about.  Only checks local to one object are made here (cross-object
 * ones are validate.c's); an object is appended only when it has a name and
 * its required fields.  Ownership: strings and arrays live in the set's
 * arena (ld->a), as for every loader.
 */
#include <stdint.h>
#include <string.h>

#include "loaders.h"

/* ---- shared by every Kueue loader (loaders.h), and a version test ---- */

bool ld_name_str(struct ld *ld, const struct ynode *v, const char **out)
{
	const char *s;

	if (!ld_str(ld, v, &s))
		return false;
	if (!*s) {
		ld_error(ld, v->pos, "must not be empty");
		return false;
	}
	*out = s;
	return true;
}

/* carve's own queue kinds (carve.dev/v1alpha1) have exactly Kueue
 * v1beta2's spec schema (docs/kubernetes.md): read as that version. */
static const char *kueue_version(const struct ld *ld)
{
	if (ld->api_version && !strcmp(ld->api_version, LD_CARVE_V1ALPHA1))
		return LD_KUEUE_V1BETA2;
	return ld->api_version;
}

void ld_version_note(struct ld *ld, const struct ynode *v, const char *field,
		     const char *only_in, const char *instead)
{
	if (kueue_version(ld) && strcmp(kueue_version(ld), only_in))
		ld_warn(ld, v->pos, "'%s' is a %s field; %s calls it '%s'", field, only_in,
			ld->api_version, instead);
}

static bool is_v1beta2(const struct ld *ld)
{
	return kueue_version(ld) && !strcmp(kueue_version(ld), LD_KUEUE_V1BETA2);
}

/* ---- fairSharing, label selectors ---- */

static void f_fs_weight(struct ld *ld, const struct ynode *v, void *o)
{
	int64_t x;

	if (!ytree_is_null(v) && ld_qty_nonneg(ld, v, &x))
		*(int64_t *)o = x;
}

static const struct ld_field fairsharing_fields[] = {
	{"weight", f_fs_weight, 0},
	{NULL, NULL, 0},
};

/* fairSharing: {weight}; o is the int64_t weight in milli-units. */
static void fairsharing(struct ld *ld, const struct ynode *v, int64_t *weight)
{
	ld_fields(ld, v, fairsharing_fields, weight);
}

static const struct ld_field labelselector_fields[] = {
	{"matchLabels", NULL, 0},
	{"matchExpressions", NULL, 0},
	{NULL, NULL, 0},
};

static const char *const stop_policies[] = {"None", "Hold", "HoldAndDrain", NULL};

/* ---- resource groups (ClusterQueue and Cohort) ---- */

struct rgs {
	struct carve_mf_rgroup *v;
	size_t n, cap;
};

struct grp {
	struct carve_mf_rgroup g;
	size_t cap;
	bool has_covered;
	const struct rgs *prev; /* the object's groups read so far */
};

struct fq {
	struct carve_mf_flavorquotas f;
	size_t cap;
	const struct grp *grp;
};

struct quota {
	struct carve_mf_quota q;
	bool has_nominal;
};

static bool in_strs(const char *s, const char *const *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, v[i]))
			return true;
	return false;
}

static void f_q_name(struct ld *ld, const struct ynode *v, void *o)
{
	struct quota *q = o;

	if (ld_name_str(ld, v, &q->q.resource))
		q->q.pos = v->pos;
}

static void f_q_nominal(struct ld *ld, const struct ynode *v, void *o)
{
	struct quota *q = o;

	if (ytree_is_null(v))
		return; /* reported as missing */
	q->q.nominal_pos = v->pos;
	if (ld_qty_nonneg(ld, v, &q->q.nominal))
		q->has_nominal = true;
}

static void f_q_borrowing(struct ld *ld, const struct ynode *v, void *o)
{
	struct quota *q = o;

	if (ytree_is_null(v))
		return;
	q->q.borrowing_pos = v->pos;
	if (ld_qty_nonneg(ld, v, &q->q.borrowing_limit))
		q->q.has_borrowing_limit = true;
}

static void f_q_lending(struct ld *ld, const struct ynode *v, void *o)
{
	struct quota *q = o;

	if (ytree_is_null(v))
		return;
	q->q.lending_pos = v->pos;
	if (ld_qty_nonneg(ld, v, &q->q.lending_limit))
		q->q.has_lending_limit = true;
}

static const struct ld_field quota_fields[] = {
	{"name", f_q_name, LD_REQUIRED},
	{"nominalQuota", f_q_nominal, LD_REQUIRED},
	{"borrowingLimit", f_q_borrowing, 0},
	{"lendingLimit", f_q_lending, 0},
	{NULL, NULL, 0},
};

static void one_quota(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct fq *f = obj;
	const struct grp *g = f->grp;
	struct carve_mf_quota *e;
	struct quota q;
	size_t j;

	memset(&q, 0, sizeof(q));
	q.q.pos = item->pos;
	if (!ld_fields(ld, item, quota_fields, &q) || !q.q.resource || !q.has_nominal)
		return;
	if (g->has_covered && !in_strs(q.q.resource, g->g.covered, g->g.ncovered)) {
		ld_error(ld, q.q.pos, "resource '%s' is not in the group's coveredResources",
			 q.q.resource);
		return;
	}
	for (j = 0; j < f->f.n; j++)
		if (!strcmp(f->f.v[j].resource, q.q.resource)) {
			ld_error(ld, q.q.pos, "resource '%s' is listed twice", q.q.resource);
			return;
		}
	e = LD_APPEND(ld, f->f.v, f->f.n, f->cap);
	if (e)
		*e = q.q;
}

static void f_fq_name(struct ld *ld, const struct ynode *v, void *o)
{
	struct fq *f = o;

	/* Kueue's ResourceFlavorReference: a DNS-1123 subdomain. */
	if (ld_name_str(ld, v, &f->f.flavor) &&
	    ld_dns_check(ld, v->pos, f->f.flavor, LD_DNS_SUBDOMAIN))
		f->f.pos = v->pos;
	else
		f->f.flavor = NULL;
}

static void f_fq_resources(struct ld *ld, const struct ynode *v, void *o)
{
	struct fq *f = o;
	size_t before = f->f.n;

	ld_list(ld, v, one_quota, o);
	/* Entries dropped for errors already reported: later checks skip the
	 * "no quota for a covered resource" error that would only repeat them. */
	if (!ytree_is_null(v) && v->kind == YN_SEQ && f->f.n - before < v->n)
		f->f.incomplete = true;
}

static const struct ld_field flavorquota_fields[] = {
	{"name", f_fq_name, LD_REQUIRED},
	{"resources", f_fq_resources, LD_REQUIRED},
	{NULL, NULL, 0},
};

static bool has_flavor(const struct carve_mf_rgroup *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->nflavors; i++)
		if (!strcmp(g->flavors[i].flavor, name))
			return true;
	return false;
}

static void one_flavorquota(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct grp *g = obj;
	struct carve_mf_flavorquotas *e;
	struct fq f;
	size_t k;

	memset(&f, 0, sizeof(f));
	f.f.pos = item->pos;
	f.grp = g;
	if (!ld_fields(ld, item, flavorquota_fields, &f) || !f.f.flavor)
		return;
	if (has_flavor(&g->g, f.f.flavor)) {
		ld_error(ld, f.f.pos, "flavor '%s' is listed twice", f.f.flavor);
		return;
	}
	for (k = 0; k < g->prev->n; k++)
		if (has_flavor(&g->prev->v[k], f.f.flavor)) {
			ld_error(ld, f.f.pos, "flavor '%s' is already in resourceGroups[%zu]; "
				 "a flavor belongs to one resource group", f.f.flavor, k);
			return;
		}
	e = LD_APPEND(ld, g->g.flavors, g->g.nflavors, g->cap);
	if (e)
		*e = f.f;
}

static void f_g_flavors(struct ld *ld, const struct ynode *v, void *o)
{
	ld_list(ld, v, one_flavorquota, o);
}

/* coveredResources is read before the other fields (see one_group). */
static const struct ld_field group_fields[] = {
	{"coveredResources", NULL, LD_REQUIRED},
	{"flavors", f_g_flavors, LD_REQUIRED},
	{NULL, NULL, 0},
};

/* Reports covered resources listed twice, here or in an earlier group. */
static void check_covered(struct ld *ld, const struct grp *g)
{
	size_t j, k, r;

	for (j = 0; j < g->g.ncovered; j++) {
		const char *s = g->g.covered[j];

		for (k = 0; k < j; k++)
			if (!strcmp(s, g->g.covered[k])) {
				ld_error(ld, g->g.covered_pos[j], "resource '%s' is listed twice", s);
				break;
			}
		for (r = 0; r < g->prev->n; r++)
			if (in_strs(s, g->prev->v[r].covered, g->prev->v[r].ncovered)) {
				ld_error(ld, g->g.covered_pos[j],
					 "resource '%s' is already covered by resourceGroups[%zu]; "
					 "a resource belongs to one resource group", s, r);
				break;
			}
	}
}

static void one_group(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct rgs *rg = obj;
	struct carve_mf_rgroup *e;
	const struct ynode *cov;
	struct grp g;

	memset(&g, 0, sizeof(g));
	g.g.pos = item->pos;
	g.prev = rg;
	/* Covered resources first, so quotas can be checked against them
	 * whatever the key order. */
	cov = ytree_get(item, "coveredResources");
	if (cov && !ytree_is_null(cov)) {
		size_t old = ld_push(ld, ".coveredResources");

		if (ld_strlist(ld, cov, &g.g.covered, &g.g.ncovered, &g.g.covered_pos)) {
			g.has_covered = true;
			check_covered(ld, &g);
		}
		ld_pop(ld, old);
	}
	if (!ld_fields(ld, item, group_fields, &g) || !g.has_covered)
		return;
	e = LD_APPEND(ld, rg->v, rg->n, rg->cap);
	if (e)
		*e = g.g;
}

static void resource_groups(struct ld *ld, const struct ynode *v, struct rgs *rg)
{
	ld_list(ld, v, one_group, rg);
}

/* ---- ResourceFlavor ---- */

static void f_rf_labels(struct ld *ld, const struct ynode *v, void *o)
{
	ld_kvmap(ld, v, &((struct carve_mf_flavor *)o)->node_labels);
}

static void f_rf_taints(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_flavor *f = o;

	ld_taints(ld, v, &f->node_taints, &f->ntaints);
}

static void f_rf_tolerations(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_flavor *f = o;

	ld_tolerations(ld, v, &f->tolerations, &f->ntolerations);
}

static void f_rf_topology(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_flavor *f = o;

	if (ytree_is_null(v))
		return;
	ld_name_str(ld, v, &f->topology_name);
	f->topology_pos = ld_pos(v);
}

static void f_rf_weights(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_reslist rl;

	ld_resmap(ld, v, &rl);
}

static const struct ld_field flavorspec_fields[] = {
	{"nodeLabels", f_rf_labels, 0},
	{"nodeTaints", f_rf_taints, 0},
	{"tolerations", f_rf_tolerations, 0},
	{"topologyName", f_rf_topology, 0},
	{"resourceWeights", f_rf_weights, 0},
	{NULL, NULL, 0},
};

static void f_rf_spec(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, flavorspec_fields, o);
}

static const struct ld_field flavor_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_rf_spec, 0},
	{NULL, NULL, 0},
};

void load_flavor(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_flavor f, *e;

	memset(&f, 0, sizeof(f));
	ld_metadata(ld, doc, &f.meta, false);
	ld_fields(ld, doc, flavor_fields, &f);
	if (!f.meta.name)
		return;
	e = LD_APPEND(ld, ld->m->flavors, ld->m->nflavors, ld->m->cap_flavors);
	if (e)
		*e = f;
}

/* ---- ClusterQueue ---- */

struct cq {
	struct carve_mf_cq cq;
	struct rgs rg;
};

static void set_cohort(struct ld *ld, const struct ynode *v, struct cq *c)
{
	const char *s;

	if (ytree_is_null(v) || !ld_str(ld, v, &s) || !*s)
		return; /* empty: no cohort */
	if (!ld_dns_check(ld, v->pos, s, LD_DNS_SUBDOMAIN))
		return; /* Kueue's CohortReference: a DNS-1123 subdomain */
	c->cq.cohort = s;
	c->cq.cohort_pos = v->pos;
}

static void f_cq_cohortname(struct ld *ld, const struct ynode *v, void *o)
{
	ld_version_note(ld, v, "cohortName", LD_KUEUE_V1BETA2, "cohort");
	set_cohort(ld, v, o);
}

static void f_cq_cohort(struct ld *ld, const struct ynode *v, void *o)
{
	ld_version_note(ld, v, "cohort", LD_KUEUE_V1BETA1, "cohortName");
	set_cohort(ld, v, o);
}

static void f_cq_groups(struct ld *ld, const struct ynode *v, void *o)
{
	resource_groups(ld, v, &((struct cq *)o)->rg);
}

static void f_cq_strategy(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const names[] = {"BestEffortFIFO", "StrictFIFO", NULL};
	int x;

	if (!ytree_is_null(v) && ld_enum(ld, v, names, &x))
		((struct cq *)o)->cq.strategy = (enum carve_qstrategy)x;
}

static void f_cq_stop(struct ld *ld, const struct ynode *v, void *o)
{
	int x;

	if (!ytree_is_null(v) && ld_enum(ld, v, stop_policies, &x))
		((struct cq *)o)->cq.stop_policy = (enum carve_stop_policy)x;
}

static void f_cq_nssel(struct ld *ld, const struct ynode *v, void *o)
{
	if (ytree_is_null(v))
		return; /* null selects no namespace */
	if (ld_fields(ld, v, labelselector_fields, NULL))
		((struct cq *)o)->cq.has_namespace_selector = true;
}

static void f_pre_within(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const names[] = {"Never", "LowerPriority",
					    "LowerOrNewerEqualPriority", NULL};
	int x;

	if (!ytree_is_null(v) && ld_enum(ld, v, names, &x))
		((struct cq *)o)->cq.within_cq = (enum carve_within_cq)x;
}

static void f_pre_reclaim(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const names[] = {"Never", "LowerPriority", "Any", NULL};
	int x;

	if (!ytree_is_null(v) && ld_enum(ld, v, names, &x))
		((struct cq *)o)->cq.reclaim = (enum carve_reclaim)x;
}

static void f_bwc_policy(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const names[] = {"Never", "LowerPriority", NULL};
	int x;

	if (!ytree_is_null(v) && ld_enum(ld, v, names, &x))
		((struct cq *)o)->cq.bwc = (enum carve_bwc)x;
}

static void f_bwc_threshold(struct ld *ld, const struct ynode *v, void *o)
{
	struct cq *c = o;

	if (!ytree_is_null(v) && ld_i32(ld, v, INT32_MIN, INT32_MAX, &c->cq.bwc_max_priority))
		c->cq.has_bwc_threshold = true;
}

static const struct ld_field bwc_fields[] = {
	{"policy", f_bwc_policy, 0},
	{"maxPriorityThreshold", f_bwc_threshold, 0},
	{NULL, NULL, 0},
};

static void f_pre_bwc(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, bwc_fields, o);
}

static const struct ld_field preemption_fields[] = {
	{"withinClusterQueue", f_pre_within, 0},
	{"reclaimWithinCohort", f_pre_reclaim, 0},
	{"borrowWithinCohort", f_pre_bwc, 0},
	{NULL, NULL, 0},
};

static void f_cq_preemption(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, preemption_fields, o);
}

/* v1beta1 spelled MayStopSearch "Borrow" (whenCanBorrow) and "Preempt"
 * (whenCanPreempt); index 2 of these lists is that old name. */
static void fungibility(struct ld *ld, const struct ynode *v, const char *const *names,
			enum carve_fungibility *out)
{
	int x;

	if (ytree_is_null(v) || !ld_enum(ld, v, names, &x))
		return;
	if (x == 2 && is_v1beta2(ld))
		ld_warn(ld, v->pos, "'%s' is the kueue.x-k8s.io/v1beta1 value; %s calls it 'MayStopSearch'",
			names[2], ld->api_version);
	*out = x == 1 ? CARVE_FUNG_TRY_NEXT : CARVE_FUNG_MAY_STOP;
}

static void f_ff_borrow(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const names[] = {"MayStopSearch", "TryNextFlavor", "Borrow", NULL};

	fungibility(ld, v, names, &((struct cq *)o)->cq.when_can_borrow);
}

static void f_ff_preempt(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const names[] = {"MayStopSearch", "TryNextFlavor", "Preempt", NULL};

	fungibility(ld, v, names, &((struct cq *)o)->cq.when_can_preempt);
}

static void f_ff_pref(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const names[] = {"BorrowingOverPreemption", "PreemptionOverBorrowing",
					    NULL};
	int x;

	if (!ytree_is_null(v) && ld_enum(ld, v, names, &x))
		((struct cq *)o)->cq.preempt_over_borrow = x == 1;
}

static const struct ld_field fungibility_fields[] = {
	{"whenCanBorrow", f_ff_borrow, 0},
	{"whenCanPreempt", f_ff_preempt, 0},
	{"preference", f_ff_pref, 0},
	{NULL, NULL, 0},
};

static void f_cq_fungibility(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, fungibility_fields, o);
}

static void f_cq_fairsharing(struct ld *ld, const struct ynode *v, void *o)
{
	fairsharing(ld, v, &((struct cq *)o)->cq.fair_weight_milli);
}

/* v1beta1 and v1beta2 ClusterQueueSpec together. */
static const struct ld_field cqspec_fields[] = {
	{"resourceGroups", f_cq_groups, 0},
	{"cohortName", f_cq_cohortname, 0},
	{"cohort", f_cq_cohort, 0},
	{"queueingStrategy", f_cq_strategy, 0},
	{"namespaceSelector", f_cq_nssel, 0},
	{"flavorFungibility", f_cq_fungibility, 0},
	{"preemption", f_cq_preemption, 0},
	{"admissionChecks", NULL, 0},
	{"admissionChecksStrategy", NULL, 0},
	{"stopPolicy", f_cq_stop, 0},
	{"fairSharing", f_cq_fairsharing, 0},
	{"admissionScope", NULL, 0},
	{"concurrentAdmissionPolicy", NULL, 0},
	{NULL, NULL, 0},
};

static void f_cq_spec(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, cqspec_fields, o);
}

static const struct ld_field cq_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_cq_spec, 0},
	{"status", NULL, 0},
	{NULL, NULL, 0},
};

void load_cq(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_cq *e;
	struct cq c;

	memset(&c, 0, sizeof(c));
	c.cq.fair_weight_milli = 1000;
	c.cq.when_can_borrow = CARVE_FUNG_MAY_STOP;
	c.cq.when_can_preempt = CARVE_FUNG_TRY_NEXT;
	ld_metadata(ld, doc, &c.cq.meta, false);
	ld_fields(ld, doc, cq_fields, &c);
	if (!c.cq.meta.name)
		return;
	c.cq.groups = c.rg.v;
	c.cq.ngroups = c.rg.n;
	e = LD_APPEND(ld, ld->m->cqs, ld->m->ncqs, ld->m->cap_cqs);
	if (e)
		*e = c.cq;
}

/* ---- Cohort ---- */

struct cohort {
	struct carve_mf_cohort c;
	struct rgs rg;
};

static void set_parent(struct ld *ld, const struct ynode *v, struct cohort *c)
{
	const char *s;

	if (ytree_is_null(v) || !ld_str(ld, v, &s) || !*s)
		return; /* empty: a root cohort */
	if (!ld_dns_check(ld, v->pos, s, LD_DNS_SUBDOMAIN))
		return; /* Kueue's CohortReference: a DNS-1123 subdomain */
	c->c.parent = s;
	c->c.parent_pos = v->pos;
}

static void f_co_parentname(struct ld *ld, const struct ynode *v, void *o)
{
	set_parent(ld, v, o);
}

/* The v1alpha1 spelling (v1beta1 and v1beta2 both say parentName). */
static void f_co_parent(struct ld *ld, const struct ynode *v, void *o)
{
	ld_warn(ld, v->pos, "'parent' is the kueue.x-k8s.io/v1alpha1 field; %s calls it 'parentName'",
		ld->api_version);
	set_parent(ld, v, o);
}

static void f_co_groups(struct ld *ld, const struct ynode *v, void *o)
{
	resource_groups(ld, v, &((struct cohort *)o)->rg);
}

static void f_co_fairsharing(struct ld *ld, const struct ynode *v, void *o)
{
	fairsharing(ld, v, &((struct cohort *)o)->c.fair_weight_milli);
}

static const struct ld_field cohortspec_fields[] = {
	{"parentName", f_co_parentname, 0},
	{"parent", f_co_parent, 0},
	{"resourceGroups", f_co_groups, 0},
	{"fairSharing", f_co_fairsharing, 0},
	{NULL, NULL, 0},
};

static void f_co_spec(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, cohortspec_fields, o);
}

static const struct ld_field cohort_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_co_spec, 0},
	{"status", NULL, 0},
	{NULL, NULL, 0},
};

void load_cohort(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_cohort *e;
	struct cohort c;

	memset(&c, 0, sizeof(c));
	c.c.fair_weight_milli = 1000;
	ld_metadata(ld, doc, &c.c.meta, false);
	ld_fields(ld, doc, cohort_fields, &c);
	if (!c.c.meta.name)
		return;
	c.c.groups = c.rg.v;
	c.c.ngroups = c.rg.n;
	e = LD_APPEND(ld, ld->m->cohorts, ld->m->ncohorts, ld->m->cap_cohorts);
	if (e)
		*e = c.c;
}

/* ---- LocalQueue ---- */

static void f_lq_cq(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_localqueue *q = o;

	if (ytree_is_null(v))
		return; /* reported as missing */
	/* Kueue's ClusterQueueReference: a DNS-1123 subdomain (at most 253). */
	if (ld_name_str(ld, v, &q->cluster_queue) &&
	    ld_dns_check(ld, v->pos, q->cluster_queue, LD_DNS_SUBDOMAIN))
		q->cq_pos = v->pos;
	else
		q->cluster_queue = NULL;
}

static void f_lq_stop(struct ld *ld, const struct ynode *v, void *o)
{
	int x;

	if (!ytree_is_null(v))
		ld_enum(ld, v, stop_policies, &x);
}

static void f_lq_fairsharing(struct ld *ld, const struct ynode *v, void *o)
{
	int64_t w;

	fairsharing(ld, v, &w);
}

static const struct ld_field lqspec_fields[] = {
	{"clusterQueue", f_lq_cq, LD_REQUIRED},
	{"stopPolicy", f_lq_stop, 0},
	{"fairSharing", f_lq_fairsharing, 0},
	{"wallTimePolicy", NULL, 0},
	{NULL, NULL, 0},
};

static void f_lq_spec(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, lqspec_fields, o);
}

static const struct ld_field lq_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_lq_spec, LD_REQUIRED},
	{"status", NULL, 0},
	{NULL, NULL, 0},
};

void load_lq(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_localqueue q, *e;

	memset(&q, 0, sizeof(q));
	ld_metadata(ld, doc, &q.meta, true);
	ld_fields(ld, doc, lq_fields, &q);
	if (!q.meta.name || !q.cluster_queue)
		return;
	e = LD_APPEND(ld, ld->m->lqs, ld->m->nlqs, ld->m->cap_lqs);
	if (e)
		*e = q;
}

/* ---- WorkloadPriorityClass, PriorityClass ---- */

struct pc {
	struct carve_mf_priorityclass p;
	bool has_value;
};

static void f_pc_value(struct ld *ld, const struct ynode *v, void *o)
{
	struct pc *p = o;

	if (!ytree_is_null(v) && ld_i32(ld, v, INT32_MIN, INT32_MAX, &p->p.value))
		p->has_value = true;
}

static void f_pc_desc(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_str(ld, v, &((struct pc *)o)->p.description);
}

static void f_pc_global(struct ld *ld, const struct ynode *v, void *o)
{
	bool b;

	if (!ytree_is_null(v))
		ld_bool(ld, v, &b);
}

static void f_pc_policy(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const names[] = {"PreemptLowerPriority", "Never", NULL};
	int x;

	if (!ytree_is_null(v))
		ld_enum(ld, v, names, &x);
}

/* WorkloadPriorityClass: value and description at the top, no spec. */
static const struct ld_field wpc_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"value", f_pc_value, LD_REQUIRED},
	{"description", f_pc_desc, 0},
	{NULL, NULL, 0},
};

/* scheduling.k8s.io/v1 PriorityClass. */
static const struct ld_field podpc_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"value", f_pc_value, LD_REQUIRED},
	{"description", f_pc_desc, 0},
	{"globalDefault", f_pc_global, 0},
	{"preemptionPolicy", f_pc_policy, 0},
	{NULL, NULL, 0},
};

void load_wpc(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_priorityclass *e;
	struct pc p;

	memset(&p, 0, sizeof(p));
	ld_metadata(ld, doc, &p.p.meta, false);
	ld_fields(ld, doc, strcmp(ld->kind, "PriorityClass") ? wpc_fields : podpc_fields, &p);
	if (!p.p.meta.name || !p.has_value)
		return;
	e = LD_APPEND(ld, ld->m->wpcs, ld->m->nwpcs, ld->m->cap_wpcs);
	if (e)
		*e = p.p;
}

/* ---- Topology (Kueue and KAI): levels kept for placement ---- */

struct topo {
	size_t n;
	const char *labels[CARVE_MF_TOPO_MAX];
	struct carve_pos pos[CARVE_MF_TOPO_MAX];
};

static void f_lv_label(struct ld *ld, const struct ynode *v, void *o)
{
	const char **s = o;

	if (!ytree_is_null(v))
		ld_name_str(ld, v, s);
}

static const struct ld_field level_fields[] = {
	{"nodeLabel", f_lv_label, LD_REQUIRED},
	{NULL, NULL, 0},
};

static void one_level(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct topo *t = obj;
	const char *label = NULL;
	size_t k;

	if (!ld_fields(ld, item, level_fields, &label) || !label)
		return;
	for (k = 0; k < t->n; k++)
		if (!strcmp(t->labels[k], label)) {
			ld_error(ld, item->pos, "node label '%s' is listed twice", label);
			return;
		}
	if (t->n == CARVE_MF_TOPO_MAX) {
		ld_error(ld, item->pos, "a Topology has at most %d levels", CARVE_MF_TOPO_MAX);
		return;
	}
	t->pos[t->n] = item->pos;
	t->labels[t->n++] = label;
}

static void f_tp_levels(struct ld *ld, const struct ynode *v, void *o)
{
	if (ytree_is_null(v))
		return; /* reported as missing */
	if (ld_list(ld, v, one_level, o) && !v->n)
		ld_error(ld, v->pos, "a Topology needs at least one level");
}

static const struct ld_field topospec_fields[] = {
	{"levels", f_tp_levels, LD_REQUIRED},
	{NULL, NULL, 0},
};

static void f_tp_spec(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, topospec_fields, o);
}

static const struct ld_field topo_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_tp_spec, LD_REQUIRED},
	{"status", NULL, 0},
	{NULL, NULL, 0},
};

void load_topology(struct ld *ld, const struct ynode *doc)
{
	struct carve_meta meta;
	struct topo t;
	struct carve_mf_topology *e;

	memset(&meta, 0, sizeof(meta));
	memset(&t, 0, sizeof(t));
	ld_metadata(ld, doc, &meta, false);
	ld_fields(ld, doc, topo_fields, &t);
	if (!meta.name || !t.n)
		return;
	e = LD_APPEND(ld, ld->m->topologies, ld->m->ntopologies, ld->m->cap_topologies);
	if (!e)
		return;
	e->meta = meta;
	e->levels = carve_arena_alloc(ld->a, t.n * sizeof(*e->levels));
	e->level_pos = carve_arena_alloc(ld->a, t.n * sizeof(*e->level_pos));
	if (!e->levels || !e->level_pos) {
		ld->m->ntopologies--;
		carve_diag_error(ld->d, meta.pos, "out of memory");
		return;
	}
	memcpy(e->levels, t.labels, t.n * sizeof(*e->levels));
	memcpy(e->level_pos, t.pos, t.n * sizeof(*e->level_pos));
	e->nlevels = t.n;
}
