/*
 * load_workload.c - Kueue's Workload into the manifest set: its podSets
 * (each a PodTemplateSpec through ld_podtemplate), queue and priority
 * (priorityClassName or priorityClassRef, whichever the API version
 * spells), and a status with its admission (flavor assignments per podSet)
 * and conditions.
 *
 * Invariants: as for every Kueue loader (load_kueue.c): every real
 * v1beta1/v1beta2 field is known, the other version's spelling is used but
 * warned about, and only checks local to the object are made.  A Workload
 * is appended only when it has a name, at least one podSet, no unusable
 * podSet or assignment, every podSetAssignment naming one of its podSets
 * and, when admitted, its ClusterQueue.  Ownership: strings and arrays live in the set's arena.
 */
#include <stdint.h>
#include <string.h>

#include "loaders.h"

struct wl {
	struct carve_mf_workload w;
	size_t cap_ps, cap_as;
	bool has_admission;
	bool bad; /* a podSet or assignment is unusable: the workload is not kept */
};

struct podset {
	struct carve_mf_podset ps;
	bool has_template, bad;
	struct carve_pos min_pos;
};

static void f_ps_name(struct ld *ld, const struct ynode *v, void *o)
{
	struct podset *p = o;

	if (ytree_is_null(v))
		return;
	/* Kueue's PodSetReference: a DNS-1123 label (at most 63). */
	if (!ld_name_str(ld, v, &p->ps.name) ||
	    !ld_dns_check(ld, v->pos, p->ps.name, LD_DNS_LABEL))
		p->bad = true;
}

static void f_ps_count(struct ld *ld, const struct ynode *v, void *o)
{
	struct podset *p = o;

	if (ytree_is_null(v))
		return;
	p->ps.count_pos = v->pos;
	if (!ld_i32(ld, v, 0, INT32_MAX, &p->ps.count))
		p->bad = true;
}

static void f_ps_mincount(struct ld *ld, const struct ynode *v, void *o)
{
	struct podset *p = o;

	if (ytree_is_null(v))
		return;
	p->min_pos = v->pos;
	if (ld_i32(ld, v, 1, INT32_MAX, &p->ps.min_count))
		p->ps.has_min_count = true;
	else
		p->bad = true;
}

static void f_ps_template(struct ld *ld, const struct ynode *v, void *o)
{
	struct podset *p = o;

	if (ytree_is_null(v))
		return; /* reported as missing */
	p->has_template = true;
	ld_podtemplate(ld, v, &p->ps.spec);
}

static const struct ld_field podset_fields[] = {
	{"name", f_ps_name, 0},
	{"template", f_ps_template, LD_REQUIRED},
	{"count", f_ps_count, 0},
	{"minCount", f_ps_mincount, 0},
	{"topologyRequest", NULL, 0},
	{NULL, NULL, 0},
};

static const struct carve_mf_podset *find_podset(const struct carve_mf_workload *w,
						  const char *name)
{
	size_t i;

	for (i = 0; i < w->npodsets; i++)
		if (!strcmp(w->podsets[i].name, name))
			return &w->podsets[i];
	return NULL;
}

static void one_podset(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct wl *w = obj;
	struct carve_mf_podset *e;
	struct podset p;

	memset(&p, 0, sizeof(p));
	p.ps.name = "main";
	p.ps.count = 1;
	p.ps.pos = item->pos;
	p.ps.count_pos = item->pos;
	if (!ld_fields(ld, item, podset_fields, &p) || !p.has_template || p.bad) {
		w->bad = true;
		return;
	}
	if (p.ps.has_min_count && p.ps.min_count > p.ps.count) {
		ld_error(ld, p.min_pos, "minCount %d must not exceed count %d",
			 (int)p.ps.min_count, (int)p.ps.count);
		w->bad = true;
		return;
	}
	if (find_podset(&w->w, p.ps.name)) {
		ld_error(ld, item->pos, "podSet name '%s' is used twice", p.ps.name);
		w->bad = true;
		return;
	}
	e = LD_APPEND(ld, w->w.podsets, w->w.npodsets, w->cap_ps);
	if (e)
		*e = p.ps;
}

/* Kueue's CRD caps spec.podSets and status.admission.podSetAssignments at
 * LD_MAX_PODSETS items (maxItems 8): more is refused before any is read. */
static bool too_many_podsets(struct ld *ld, const struct ynode *v)
{
	if (v->kind != YN_SEQ || v->n <= LD_MAX_PODSETS)
		return false;
	ld_error(ld, v->pos, "at most %d podSets (Kueue's limit), got %zu", LD_MAX_PODSETS, v->n);
	return true;
}

static void f_wl_podsets(struct ld *ld, const struct ynode *v, void *o)
{
	struct wl *w = o;

	if (ytree_is_null(v))
		return; /* reported as missing */
	if (too_many_podsets(ld, v)) {
		w->bad = true;
	} else if (!ld_list(ld, v, one_podset, o)) {
		w->bad = true;
	} else if (!v->n) {
		ld_error(ld, v->pos, "a Workload needs at least one podSet");
		w->bad = true;
	}
}

static void f_wl_queue(struct ld *ld, const struct ynode *v, void *o)
{
	struct wl *w = o;

	if (ytree_is_null(v))
		return;
	if (ld_str(ld, v, &w->w.queue_name)) {
		w->w.queue_pos = v->pos;
		/* spec.queueName: a DNS-1123 subdomain in Kueue's Workload CRD. */
		if (!*w->w.queue_name)
			w->w.queue_name = NULL;
		else if (!ld_dns_check(ld, v->pos, w->w.queue_name, LD_DNS_SUBDOMAIN))
			w->bad = true;
	}
}

static void f_wl_pcname(struct ld *ld, const struct ynode *v, void *o)
{
	struct wl *w = o;

	if (ytree_is_null(v))
		return;
	ld_version_note(ld, v, "priorityClassName", LD_KUEUE_V1BETA1, "priorityClassRef");
	if (ld_str(ld, v, &w->w.priority_class) && !*w->w.priority_class)
		w->w.priority_class = NULL;
}

static void f_pcref_group(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const names[] = {"kueue.x-k8s.io", "scheduling.k8s.io", NULL};
	int x;

	if (!ytree_is_null(v))
		ld_enum(ld, v, names, &x);
}

static void f_pcref_kind(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const names[] = {"WorkloadPriorityClass", "PriorityClass", NULL};
	int x;

	if (!ytree_is_null(v))
		ld_enum(ld, v, names, &x);
}

static void f_pcref_name(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_name_str(ld, v, &((struct wl *)o)->w.priority_class);
}

static const struct ld_field pcref_fields[] = {
	{"group", f_pcref_group, LD_REQUIRED},
	{"kind", f_pcref_kind, LD_REQUIRED},
	{"name", f_pcref_name, LD_REQUIRED},
	{NULL, NULL, 0},
};

static void f_wl_pcref(struct ld *ld, const struct ynode *v, void *o)
{
	if (ytree_is_null(v))
		return;
	ld_version_note(ld, v, "priorityClassRef", LD_KUEUE_V1BETA2, "priorityClassName");
	ld_fields(ld, v, pcref_fields, o);
}

static void f_wl_priority(struct ld *ld, const struct ynode *v, void *o)
{
	struct wl *w = o;

	if (!ytree_is_null(v) && ld_i32(ld, v, INT32_MIN, INT32_MAX, &w->w.priority))
		w->w.has_priority = true;
}

static void f_wl_active(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_bool(ld, v, &((struct wl *)o)->w.active);
}

static void f_wl_maxexec(struct ld *ld, const struct ynode *v, void *o)
{
	int32_t x;

	if (!ytree_is_null(v))
		ld_i32(ld, v, 1, INT32_MAX, &x);
}

/* v1beta1 and v1beta2 WorkloadSpec together. */
static const struct ld_field wlspec_fields[] = {
	{"podSets", f_wl_podsets, LD_REQUIRED},
	{"queueName", f_wl_queue, 0},
	{"priorityClassName", f_wl_pcname, 0},
	{"priorityClassSource", NULL, 0},
	{"priorityClassRef", f_wl_pcref, 0},
	{"priority", f_wl_priority, 0},
	{"active", f_wl_active, 0},
	{"maximumExecutionTimeSeconds", f_wl_maxexec, 0},
	{NULL, NULL, 0},
};

static void f_wl_spec(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, wlspec_fields, o);
}

struct asg {
	struct carve_mf_psassign a;
	bool bad;
};

static void f_as_name(struct ld *ld, const struct ynode *v, void *o)
{
	struct asg *a = o;

	if (!ytree_is_null(v) && !ld_name_str(ld, v, &a->a.name))
		a->bad = true;
}

static void f_as_count(struct ld *ld, const struct ynode *v, void *o)
{
	struct asg *a = o;

	if (!ytree_is_null(v) && !ld_i32(ld, v, 0, INT32_MAX, &a->a.count))
		a->bad = true;
}

static void f_as_flavors(struct ld *ld, const struct ynode *v, void *o)
{
	struct asg *a = o;

	if (!ld_kvmap(ld, v, &a->a.flavors))
		a->bad = true;
}

static const struct ld_field assign_fields[] = {
	{"name", f_as_name, 0},
	{"flavors", f_as_flavors, 0},
	{"resourceUsage", NULL, 0},
	{"count", f_as_count, 0},
	{"topologyAssignment", NULL, 0},
	{"delayedTopologyRequest", NULL, 0},
	{NULL, NULL, 0},
};

static void one_assign(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct wl *w = obj;
	struct carve_mf_psassign *e;
	struct asg a;

	memset(&a, 0, sizeof(a));
	a.a.name = "main";
	a.a.count = -1; /* unset: the podSet's count (resolved in load_workload) */
	a.a.pos = item->pos;
	if (!ld_fields(ld, item, assign_fields, &a) || a.bad) {
		w->bad = true;
		return;
	}
	e = LD_APPEND(ld, w->w.assign, w->w.nassign, w->cap_as);
	if (e)
		*e = a.a;
}

static void f_ad_cq(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_name_str(ld, v, &((struct wl *)o)->w.admitted_cq);
}

static void f_ad_assign(struct ld *ld, const struct ynode *v, void *o)
{
	if (too_many_podsets(ld, v))
		((struct wl *)o)->bad = true;
	else
		ld_list(ld, v, one_assign, o);
}

static const struct ld_field admission_fields[] = {
	{"clusterQueue", f_ad_cq, LD_REQUIRED},
	{"podSetAssignments", f_ad_assign, 0},
	{NULL, NULL, 0},
};

static void f_st_admission(struct ld *ld, const struct ynode *v, void *o)
{
	struct wl *w = o;

	if (ytree_is_null(v))
		return; /* not admitted */
	w->w.admission_pos = v->pos;
	w->has_admission = true;
	ld_fields(ld, v, admission_fields, o);
}

/* One metav1.Condition of status.conditions.  Only QuotaReserved=True is
 * kept: its lastTransitionTime is when the workload got its quota. */
struct cond {
	const char *type;
	int status; /* index in cond_statuses, -1 unset */
	int64_t at;
	bool has_at;
};

static const char *const cond_statuses[] = {"True", "False", "Unknown", NULL};

static void f_cond_type(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_name_str(ld, v, &((struct cond *)o)->type);
}

static void f_cond_status(struct ld *ld, const struct ynode *v, void *o)
{
	int x;

	if (!ytree_is_null(v) && ld_enum(ld, v, cond_statuses, &x))
		((struct cond *)o)->status = x;
}

static void f_cond_time(struct ld *ld, const struct ynode *v, void *o)
{
	struct cond *c = o;

	if (!ytree_is_null(v) && ld_time(ld, v, &c->at))
		c->has_at = true;
}

static void f_cond_generation(struct ld *ld, const struct ynode *v, void *o)
{
	int64_t x;

	if (!ytree_is_null(v))
		ld_int(ld, v, 0, INT64_MAX, &x);
}

static const struct ld_field cond_fields[] = {
	{"type", f_cond_type, LD_REQUIRED},
	{"status", f_cond_status, LD_REQUIRED},
	{"lastTransitionTime", f_cond_time, 0},
	{"observedGeneration", f_cond_generation, 0},
	{"reason", NULL, 0},
	{"message", NULL, 0},
	{NULL, NULL, 0},
};

static void one_condition(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct wl *w = obj;
	struct cond c;

	memset(&c, 0, sizeof(c));
	c.status = -1;
	if (!ld_fields(ld, item, cond_fields, &c) || !c.type)
		return;
	if (!strcmp(c.type, "QuotaReserved") && c.status == 0 && c.has_at) {
		w->w.quota_reserved_at = c.at;
		w->w.has_quota_reserved_at = true;
	}
}

static void f_st_conditions(struct ld *ld, const struct ynode *v, void *o)
{
	ld_list(ld, v, one_condition, o);
}

/* v1beta1 and v1beta2 WorkloadStatus together. */
static const struct ld_field wlstatus_fields[] = {
	{"conditions", f_st_conditions, 0},
	{"admission", f_st_admission, 0},
	{"requeueState", NULL, 0},
	{"reclaimablePods", NULL, 0},
	{"admissionChecks", NULL, 0},
	{"resourceRequests", NULL, 0},
	{"accumulatedPastExecutionTimeSeconds", NULL, 0},
	{"schedulingStats", NULL, 0},
	{"nominatedClusterNames", NULL, 0},
	{"clusterName", NULL, 0},
	{"unhealthyNodes", NULL, 0},
	{NULL, NULL, 0},
};

static void f_wl_status(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, wlstatus_fields, o);
}

static const struct ld_field wl_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_wl_spec, LD_REQUIRED},
	{"status", f_wl_status, 0},
	{NULL, NULL, 0},
};

/* Each podSetAssignment names a podSet; an unset count is the podSet's. */
static bool resolve_assignments(struct ld *ld, struct carve_mf_workload *w, bool admitted)
{
	size_t i, old = ld_push(ld, "status.admission");
	bool ok = true;

	for (i = 0; i < w->nassign; i++) {
		const struct carve_mf_podset *ps = find_podset(w, w->assign[i].name);

		if (!ps) {
			ld_error(ld, w->assign[i].pos,
				 "podSetAssignment '%s' names no podSet of spec.podSets",
				 w->assign[i].name);
			ok = false;
		} else if (w->assign[i].count < 0) {
			w->assign[i].count = ps->count;
		}
	}
	if (admitted && !w->admitted_cq)
		ok = false; /* clusterQueue was reported missing */
	ld_pop(ld, old);
	return ok;
}

void load_workload(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_workload *e;
	struct wl w;

	memset(&w, 0, sizeof(w));
	w.w.active = true;
	ld_metadata(ld, doc, &w.w.meta, true);
	ld_fields(ld, doc, wl_fields, &w);
	if (!w.w.meta.name || w.bad || !w.w.npodsets)
		return;
	if (!resolve_assignments(ld, &w.w, w.has_admission))
		return;
	e = LD_APPEND(ld, ld->m->workloads, ld->m->nworkloads, ld->m->cap_workloads);
	if (e)
		*e = w.w;
}
