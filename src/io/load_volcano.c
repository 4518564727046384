/*
 * load_volcano.c - Volcano scheduling.volcano.sh/v1beta1 Queue and PodGroup,
 * KAI scheduling.run.ai/v2 Queue and scheduling.run.ai/v2alpha2 PodGroup, the
 * coscheduling plugin's scheduling.x-k8s.io/v1alpha1 PodGroup.
 *
 * The field tables list every field of the upstream Go types (all releases
 * seen), so real manifests never meet a false "unknown field"; fields carve
 * does not keep have a NULL decoder or are only checked.  Local checks follow
 * the upstream webhooks where one object decides them.  Of status, only a
 * Volcano Queue's state and a Volcano PodGroup's phase are kept (admission
 * reads them: src/io/admission.c, docs/volcano-kai.md).
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "carve/resource.h"
#include "carve/quantity.h"
#include "loaders.h"

/* ---- small shared helpers ---- */

/* Top level of every kind here: metadata is read by ld_metadata. */
static void f_spec_vcqueue(struct ld *ld, const struct ynode *v, void *o);
static void f_spec_podgroup(struct ld *ld, const struct ynode *v, void *o);
static void f_spec_kaiqueue(struct ld *ld, const struct ynode *v, void *o);
static void f_spec_kaipg(struct ld *ld, const struct ynode *v, void *o);
static void f_status_vcqueue(struct ld *ld, const struct ynode *v, void *o);
static void f_status_podgroup(struct ld *ld, const struct ynode *v, void *o);

/* statusfn reads the one status field carve keeps (NULL: status ignored). */
#define TOP_FIELDS(specfn, statusfn)             \
	{                                        \
		{"apiVersion", NULL, 0},         \
		{"kind", NULL, 0},               \
		{"metadata", NULL, 0},           \
		{"spec", specfn, 0},             \
		{"status", statusfn, 0},         \
		{NULL, NULL, 0},                 \
	}

static const struct ld_field vcqueue_top[] = TOP_FIELDS(f_spec_vcqueue, f_status_vcqueue);
static const struct ld_field podgroup_top[] = TOP_FIELDS(f_spec_podgroup, f_status_podgroup);
static const struct ld_field kaiqueue_top[] = TOP_FIELDS(f_spec_kaiqueue, NULL);
static const struct ld_field kaipg_top[] = TOP_FIELDS(f_spec_kaipg, NULL);
static void f_spec_cospg(struct ld *ld, const struct ynode *v, void *o);
static const struct ld_field cospg_top[] = TOP_FIELDS(f_spec_cospg, NULL);

/* An optional string: null means unset (out untouched). */
static bool opt_str(struct ld *ld, const struct ynode *v, const char **out, struct carve_pos *pos)
{
	if (ytree_is_null(v))
		return false;
	if (!ld_str(ld, v, out))
		return false;
	if (pos)
		*pos = v->pos;
	return true;
}

/* Formats one quantity of resource `name` for a message. */
static const char *qty_text(const char *name, int64_t milli, char *buf, size_t size)
{
	if (carve_res_kind(name, NULL) == CARVE_RK_MEMORY || !strcmp(name, "ephemeral-storage") ||
	    !strncmp(name, "hugepages-", 10))
		carve_qty_format_bytes(milli, buf, size);
	else
		carve_qty_format(milli, buf, size);
	return buf;
}

static const struct carve_resq *res_find(const struct carve_reslist *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	return NULL;
}

/*
 * Reports every entry of `lo` above the same resource in `hi`:
 * "<loname> <res> <x> exceeds <hiname> <y>", at the entry of `lo`.
 * Resources missing from `hi` are not compared (see docs/volcano-kai.md).
 */
static void res_not_above(struct ld *ld, const struct carve_reslist *lo, const char *loname,
			  const struct carve_reslist *hi, const char *hiname)
{
	size_t i;

	for (i = 0; i < lo->n; i++) {
		const struct carve_resq *a = &lo->v[i];
		const struct carve_resq *b = res_find(hi, a->name);
		char x[48], y[48];

		if (!b || a->milli <= b->milli)
			continue;
		ld_error(ld, a->pos, "%s %s %s exceeds %s %s", loname, a->name,
			 qty_text(a->name, a->milli, x, sizeof(x)), hiname,
			 qty_text(b->name, b->milli, y, sizeof(y)));
	}
}

/*
 * One string of a status mapping (status.state, status.phase).  The
 * controller writes status, so only that key is read: every other status
 * field, and a status that is not a mapping, is accepted and ignored.
 */
static void status_str(struct ld *ld, const struct ynode *status, const char *key,
		       const char **out)
{
	const struct ynode *v;
	size_t old;

	if (!status || status->kind != YN_MAP)
		return;
	v = ytree_get(status, key);
	if (!v || ytree_is_null(v))
		return;
	old = ld_push(ld, ".%s", key);
	ld_str(ld, v, out);
	ld_pop(ld, old);
}

/* Validates (does not keep) a value carve accepts but ignores. */
static void f_check_str(struct ld *ld, const struct ynode *v, void *o)
{
	const char *s;

	if (!ytree_is_null(v))
		ld_str(ld, v, &s);
}

static void f_check_bool(struct ld *ld, const struct ynode *v, void *o)
{
	bool b;

	if (!ytree_is_null(v))
		ld_bool(ld, v, &b);
}

/* ---- Volcano Queue ---- */

static void f_vcq_weight(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_vcqueue *q = o;
	int32_t w;

	if (ytree_is_null(v) || !ld_i32(ld, v, 0, 65535, &w))
		return;
	if (w == 0) {
		/* Volcano's mutating webhook turns 0 into the default 1;
		 * CRDs with "minimum: 1" reject it when that webhook is off. */
		ld_warn(ld, v->pos, "weight 0 is read as the default 1 (Volcano's webhook "
			"does the same; its CRD requires 1..65535)");
		w = 1;
	}
	q->weight = w;
}

static void f_vcq_capability(struct ld *ld, const struct ynode *v, void *o)
{
	ld_resmap_nonneg(ld, v, &((struct carve_mf_vcqueue *)o)->capability);
}

static void f_vcq_deserved(struct ld *ld, const struct ynode *v, void *o)
{
	ld_resmap_nonneg(ld, v, &((struct carve_mf_vcqueue *)o)->deserved);
}

static void f_vcq_guar_resource(struct ld *ld, const struct ynode *v, void *o)
{
	ld_resmap_nonneg(ld, v, &((struct carve_mf_vcqueue *)o)->guarantee);
}

static const struct ld_field vcq_guarantee_fields[] = {
	{"resource", f_vcq_guar_resource, 0},
	{NULL, NULL, 0},
};

static void f_vcq_guarantee(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, vcq_guarantee_fields, o);
}

static void f_vcq_reclaimable(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_bool(ld, v, &((struct carve_mf_vcqueue *)o)->reclaimable);
}

static void f_vcq_parent(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_vcqueue *q = o;
	const char *s;
	struct carve_pos pos;

	if (opt_str(ld, v, &s, &pos) && *s) {
		q->parent = s;
		q->parent_pos = pos;
	}
}

static void f_vcq_priority(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_i32(ld, v, 0, INT32_MAX, &((struct carve_mf_vcqueue *)o)->priority);
}

static const char *const dequeue_strategies[] = {"fifo", "traverse", NULL};

static void f_vcq_dequeue(struct ld *ld, const struct ynode *v, void *o)
{
	int e;

	if (!ytree_is_null(v))
		ld_enum(ld, v, dequeue_strategies, &e);
}

/* QueueSpec, volcano.sh/apis scheduling/v1beta1 (preemptable: some
 * releases' mutating webhook sets it). */
static const struct ld_field vcq_spec_fields[] = {
	{"weight", f_vcq_weight, 0},
	{"capability", f_vcq_capability, 0},
	{"reclaimable", f_vcq_reclaimable, 0},
	{"extendClusters", NULL, 0},
	{"guarantee", f_vcq_guarantee, 0},
	{"affinity", NULL, 0},
	{"type", f_check_str, 0},
	{"parent", f_vcq_parent, 0},
	{"deserved", f_vcq_deserved, 0},
	{"priority", f_vcq_priority, 0},
	{"dequeueStrategy", f_vcq_dequeue, 0},
	{"dra", NULL, 0},
	{"preemptable", f_check_bool, 0},
	{NULL, NULL, 0},
};

static void f_spec_vcqueue(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, vcq_spec_fields, o);
}

/* status.state: Open, Closed, Closing or Unknown (kept as written). */
static void f_status_vcqueue(struct ld *ld, const struct ynode *v, void *o)
{
	status_str(ld, v, "state", &((struct carve_mf_vcqueue *)o)->state);
}

void load_vcqueue(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_vcqueue q;
	struct carve_mf_vcqueue *e;
	size_t old;

	memset(&q, 0, sizeof(q));
	q.weight = 1;
	q.reclaimable = true;
	ld_metadata(ld, doc, &q.meta, false);
	ld_fields(ld, doc, vcqueue_top, &q);

	/* Volcano's queue webhook: deserved <= capability, guarantee <=
	 * capability, guarantee <= deserved (compared per resource here). */
	old = ld_push(ld, ".spec");
	res_not_above(ld, &q.deserved, "deserved", &q.capability, "capability");
	res_not_above(ld, &q.guarantee, "guarantee", &q.capability, "capability");
	res_not_above(ld, &q.guarantee, "guarantee", &q.deserved, "deserved");
	if (q.parent && q.meta.name && !strcmp(q.parent, q.meta.name))
		ld_error(ld, q.parent_pos, "queue %s cannot be its own parent", q.meta.name);
	ld_pop(ld, old);

	if (!q.meta.name)
		return;
	e = LD_APPEND(ld, ld->m->vcqueues, ld->m->nvcqueues, ld->m->cap_vcqueues);
	if (e)
		*e = q;
}

/* ---- Volcano PodGroup ---- */

static void f_pg_min_member(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_i32(ld, v, 0, INT32_MAX, &((struct carve_mf_podgroup *)o)->min_member);
}

static void f_pg_min_task_member(struct ld *ld, const struct ynode *v, void *o)
{
	size_t i;

	if (ytree_is_null(v))
		return;
	if (v->kind != YN_MAP) {
		ld_error(ld, v->pos, "expected a mapping of task names to counts, got %s",
			 ytree_kind_name(v));
		return;
	}
	for (i = 0; i < v->n; i++) {
		size_t old = ld_push(ld, "[%s]", v->pairs[i].key->str);
		int32_t n;

		ld_i32(ld, v->pairs[i].val, 0, INT32_MAX, &n);
		ld_pop(ld, old);
	}
}

static void f_pg_queue(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_podgroup *pg = o;
	const char *s;
	struct carve_pos pos;

	if (!opt_str(ld, v, &s, &pos))
		return;
	if (!*s) {
		ld_error(ld, pos, "queue must not be empty (omit it for the \"default\" queue)");
		return;
	}
	pg->queue = s;
	pg->queue_pos = pos;
}

static void f_pg_priority_class(struct ld *ld, const struct ynode *v, void *o)
{
	const char *s;

	if (opt_str(ld, v, &s, NULL) && *s)
		((struct carve_mf_podgroup *)o)->priority_class = s;
}

static void f_pg_min_resources(struct ld *ld, const struct ynode *v, void *o)
{
	ld_resmap_nonneg(ld, v, &((struct carve_mf_podgroup *)o)->min_resources);
}

/* PodGroupSpec, scheduling/v1beta1; networkTopologies and
 * podsNetworkTopology are the names of networkTopology in some releases. */
static const struct ld_field pg_spec_fields[] = {
	{"minMember", f_pg_min_member, 0},
	{"minTaskMember", f_pg_min_task_member, 0},
	{"queue", f_pg_queue, 0},
	{"priorityClassName", f_pg_priority_class, 0},
	{"minResources", f_pg_min_resources, 0},
	{"networkTopology", NULL, 0},
	{"networkTopologies", NULL, 0},
	{"podsNetworkTopology", NULL, 0},
	{"subGroupPolicy", NULL, 0},
	{NULL, NULL, 0},
};

static void f_spec_podgroup(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, pg_spec_fields, o);
}

/* status.phase: Pending, Inqueue, Running, Unknown, Completed (kept as written). */
static void f_status_podgroup(struct ld *ld, const struct ynode *v, void *o)
{
	status_str(ld, v, "phase", &((struct carve_mf_podgroup *)o)->phase);
}

static void append_podgroup(struct ld *ld, const struct carve_mf_podgroup *pg)
{
	struct carve_mf_podgroup *e;

	if (!pg->meta.name)
		return;
	e = LD_APPEND(ld, ld->m->podgroups, ld->m->npodgroups, ld->m->cap_podgroups);
	if (e)
		*e = *pg;
}

/* The coscheduling plugin's PodGroupSpec (kubernetes-sigs/scheduler-plugins,
 * scheduling.x-k8s.io/v1alpha1: minMember, minResources,
 * scheduleTimeoutSeconds); no queue. */
static const struct ld_field cospg_spec_fields[] = {
	{"minMember", f_pg_min_member, 0},
	{"minResources", f_pg_min_resources, 0},
	{"scheduleTimeoutSeconds", NULL, 0},
	{NULL, NULL, 0},
};

static void f_spec_cospg(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, cospg_spec_fields, o);
}

void load_cospodgroup(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_podgroup pg;

	memset(&pg, 0, sizeof(pg));
	pg.queue_pos = doc->pos; /* no queue: its pods' labels say */
	ld_metadata(ld, doc, &pg.meta, true);
	ld_fields(ld, doc, cospg_top, &pg);
	append_podgroup(ld, &pg);
}

void load_podgroup(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_podgroup pg;

	memset(&pg, 0, sizeof(pg));
	pg.queue = "default"; /* +kubebuilder:default:="default" */
	pg.queue_pos = doc->pos;
	ld_metadata(ld, doc, &pg.meta, true);
	ld_fields(ld, doc, podgroup_top, &pg);
	append_podgroup(ld, &pg);
}

/* ---- KAI Queue ---- */

/*
 * A JSON number (KAI's float64 fields): [+-]digits[.digits][e[+-]digits],
 * ".5" and "5." included.  strtod alone would also take hex, "inf", "nan"
 * and leading blanks, which the API server rejects.  carve never calls
 * setlocale, so strtod's decimal point is '.'.
 */
static bool kai_number(struct ld *ld, const struct ynode *v, double *out)
{
	const char *s, *p;
	bool digits = false;
	char *end;
	double x;

	if (!v || v->kind != YN_SCALAR) {
		ld_error(ld, v ? v->pos : (struct carve_pos){ld->file, 0, 0},
			 "expected a number, got %s", ytree_kind_name(v));
		return false;
	}
	s = p = v->str;
	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char)*p)) {
		p++;
		digits = true;
	}
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p)) {
			p++;
			digits = true;
		}
	}
	if (digits && (*p == 'e' || *p == 'E')) {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			digits = false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (!digits || *p) {
		ld_error(ld, v->pos, "expected a number, got '%s'", s);
		return false;
	}
	x = strtod(s, &end);
	if (*end || !isfinite(x)) {
		ld_error(ld, v->pos, "number '%s' is out of range", s);
		return false;
	}
	*out = x;
	return true;
}

/* Decoding state of one resources.<gpu|cpu|memory> mapping. */
struct kaires_ld {
	struct carve_mf_kaires *r;
	struct carve_pos quota_pos, limit_pos;
	double lending;
	bool has_lending;
	struct carve_pos lending_pos;
};

/* quota and limit: -1 (unlimited) or >= 0. */
static bool kai_amount(struct ld *ld, const struct ynode *v, double *out)
{
	double x;

	if (!kai_number(ld, v, &x))
		return false;
	if (x != -1 && x < 0) {
		ld_error(ld, v->pos, "%s must be -1 (unlimited) or a non-negative number", v->str);
		return false;
	}
	*out = x;
	return true;
}

static void f_kr_quota(struct ld *ld, const struct ynode *v, void *o)
{
	struct kaires_ld *k = o;

	if (!ytree_is_null(v) && kai_amount(ld, v, &k->r->quota)) {
		k->r->has_quota = true;
		k->quota_pos = v->pos;
	}
}

static void f_kr_limit(struct ld *ld, const struct ynode *v, void *o)
{
	struct kaires_ld *k = o;

	if (!ytree_is_null(v) && kai_amount(ld, v, &k->r->limit)) {
		k->r->has_limit = true;
		k->limit_pos = v->pos;
	}
}

static void f_kr_weight(struct ld *ld, const struct ynode *v, void *o)
{
	struct kaires_ld *k = o;
	double x;

	if (ytree_is_null(v) || !kai_number(ld, v, &x))
		return;
	if (x < 0) {
		ld_error(ld, v->pos, "overQuotaWeight %s must not be negative", v->str);
		return;
	}
	k->r->over_quota_weight = x;
}

static void f_kr_lending(struct ld *ld, const struct ynode *v, void *o)
{
	struct kaires_ld *k = o;
	double x;

	if (ytree_is_null(v) || !kai_number(ld, v, &x))
		return;
	if (x < 0) {
		ld_error(ld, v->pos, "lendingLimit %s must not be negative", v->str);
		return;
	}
	k->lending = x;
	k->has_lending = true;
	k->lending_pos = v->pos;
}

/* QueueResource, kai-scheduler pkg/apis/scheduling/v2 (lendingLimit is
 * newer; checked, not kept). */
static const struct ld_field kaires_fields[] = {
	{"quota", f_kr_quota, 0},
	{"overQuotaWeight", f_kr_weight, 0},
	{"limit", f_kr_limit, 0},
	{"lendingLimit", f_kr_lending, 0},
	{NULL, NULL, 0},
};

static void kaires_load(struct ld *ld, const struct ynode *v, struct carve_mf_kaires *r)
{
	struct kaires_ld k;

	memset(&k, 0, sizeof(k));
	k.r = r;
	r->pos = v->pos;
	if (!ld_fields(ld, v, kaires_fields, &k))
		return;
	if (r->has_limit && r->limit != -1 && r->has_quota && r->quota != -1 &&
	    r->limit < r->quota)
		ld_error(ld, k.limit_pos, "limit %g is below quota %g", r->limit, r->quota);
	if (k.has_lending && r->has_quota && r->quota != -1 && k.lending > r->quota)
		ld_error(ld, k.lending_pos, "lendingLimit %g exceeds quota %g", k.lending, r->quota);
}

static void f_kq_gpu(struct ld *ld, const struct ynode *v, void *o)
{
	kaires_load(ld, v, &((struct carve_mf_kaiqueue *)o)->gpu);
}

static void f_kq_cpu(struct ld *ld, const struct ynode *v, void *o)
{
	kaires_load(ld, v, &((struct carve_mf_kaiqueue *)o)->cpu);
}

static void f_kq_memory(struct ld *ld, const struct ynode *v, void *o)
{
	kaires_load(ld, v, &((struct carve_mf_kaiqueue *)o)->memory);
}

static const struct ld_field kai_resources_fields[] = {
	{"gpu", f_kq_gpu, 0},
	{"cpu", f_kq_cpu, 0},
	{"memory", f_kq_memory, 0},
	{NULL, NULL, 0},
};

static void f_kq_resources(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, kai_resources_fields, o);
}

static void f_kq_parent(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_kaiqueue *q = o;
	const char *s;
	struct carve_pos pos;

	if (opt_str(ld, v, &s, &pos) && *s) {
		q->parent = s;
		q->parent_pos = pos;
	}
}

static void f_kq_priority(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_i32(ld, v, INT32_MIN, INT32_MAX, &((struct carve_mf_kaiqueue *)o)->priority);
}

/* A Go time.Duration string ("90s", "1h30m", "0"), as metav1.Duration
 * decodes it: a number without a unit is an error there. */
static bool go_duration(const char *s)
{
	static const char *const units[] = {"ns", "us", "\xc2\xb5s", "\xce\xbcs", "ms", "s", "m", "h"};

	if (*s == '+' || *s == '-')
		s++;
	if (!strcmp(s, "0"))
		return true;
	if (!*s)
		return false;
	while (*s) {
		bool digits = false;
		size_t n, i;

		while (isdigit((unsigned char)*s)) {
			s++;
			digits = true;
		}
		if (*s == '.') {
			s++;
			while (isdigit((unsigned char)*s)) {
				s++;
				digits = true;
			}
		}
		if (!digits)
			return false;
		for (n = 0; s[n] && s[n] != '.' && !isdigit((unsigned char)s[n]); n++)
			;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strlen(units[i]) == n && !strncmp(s, units[i], n))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return false;
		s += n;
	}
	return true;
}

static void f_kq_duration(struct ld *ld, const struct ynode *v, void *o)
{
	const char *s;

	if (ytree_is_null(v) || !ld_str(ld, v, &s))
		return;
	if (!go_duration(s))
		ld_error(ld, v->pos, "malformed duration '%s' (expected e.g. 30s, 10m, 1h30m)", s);
}

/* QueueSpec, kai-scheduler pkg/apis/scheduling/v2.  KAI's queue webhook
 * rejects a Queue without resources. */
static const struct ld_field kaiq_spec_fields[] = {
	{"displayName", f_check_str, 0},
	{"parentQueue", f_kq_parent, 0},
	{"resources", f_kq_resources, LD_REQUIRED},
	{"priority", f_kq_priority, 0},
	{"preemptMinRuntime", f_kq_duration, 0},
	{"reclaimMinRuntime", f_kq_duration, 0},
	{NULL, NULL, 0},
};

static void f_spec_kaiqueue(struct ld *ld, const struct ynode *v, void *o)
{
	if (ytree_is_null(v)) {
		ld_error(ld, v->pos, "missing required field 'resources'");
		return;
	}
	ld_fields(ld, v, kaiq_spec_fields, o);
}

void load_kaiqueue(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_kaiqueue q;
	struct carve_mf_kaiqueue *e;

	memset(&q, 0, sizeof(q));
	q.priority = 100; /* KAI's DefaultQueuePriority */
	ld_metadata(ld, doc, &q.meta, false);
	ld_fields(ld, doc, kaiqueue_top, &q);
	if (!ytree_get(doc, "spec"))
		ld_error(ld, doc->pos, "missing required field 'spec' (KAI needs spec.resources)");
	if (q.parent && q.meta.name && !strcmp(q.parent, q.meta.name)) {
		size_t old = ld_push(ld, ".spec");

		ld_error(ld, q.parent_pos, "queue %s cannot be its own parent", q.meta.name);
		ld_pop(ld, old);
	}
	if (!q.meta.name)
		return;
	e = LD_APPEND(ld, ld->m->kaiqueues, ld->m->nkaiqueues, ld->m->cap_kaiqueues);
	if (e)
		*e = q;
}

/* ---- KAI PodGroup ---- */

struct kaipg_ld {
	struct carve_mf_podgroup *pg;
	bool has_min_sub;
	struct carve_pos min_sub_pos;
};

static void f_kpg_min_member(struct ld *ld, const struct ynode *v, void *o)
{
	f_pg_min_member(ld, v, ((struct kaipg_ld *)o)->pg);
}

static void f_kpg_min_subgroup(struct ld *ld, const struct ynode *v, void *o)
{
	struct kaipg_ld *k = o;
	int32_t n;

	if (ytree_is_null(v) || !ld_i32(ld, v, 1, INT32_MAX, &n))
		return;
	k->has_min_sub = true;
	k->min_sub_pos = v->pos;
}

static void f_kpg_queue(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_podgroup *pg = ((struct kaipg_ld *)o)->pg;
	const char *s;
	struct carve_pos pos;

	if (opt_str(ld, v, &s, &pos) && *s) {
		pg->queue = s;
		pg->queue_pos = pos;
	}
}

static void f_kpg_priority_class(struct ld *ld, const struct ynode *v, void *o)
{
	f_pg_priority_class(ld, v, ((struct kaipg_ld *)o)->pg);
}

static const char *const kai_preemptibility[] = {"preemptible", "non-preemptible", NULL};

static void f_kpg_preemptibility(struct ld *ld, const struct ynode *v, void *o)
{
	int e;

	if (!ytree_is_null(v) && !(v->kind == YN_SCALAR && !*v->str))
		ld_enum(ld, v, kai_preemptibility, &e);
}

/* PodGroupSpec, kai-scheduler pkg/apis/scheduling/v2alpha2. */
static const struct ld_field kaipg_spec_fields[] = {
	{"minMember", f_kpg_min_member, 0},
	{"minSubGroup", f_kpg_min_subgroup, 0},
	{"queue", f_kpg_queue, 0},
	{"priorityClassName", f_kpg_priority_class, 0},
	{"preemptibility", f_kpg_preemptibility, 0},
	{"topologyConstraint", NULL, 0},
	{"subGroups", NULL, 0},
	{"markUnschedulable", f_check_bool, 0},
	{"schedulingBackoff", NULL, 0},
	{NULL, NULL, 0},
};

static void f_spec_kaipg(struct ld *ld, const struct ynode *v, void *o)
{
	struct kaipg_ld *k = o;

	if (!ld_fields(ld, v, kaipg_spec_fields, k))
		return;
	if (k->has_min_sub && k->pg->min_member > 0)
		ld_error(ld, k->min_sub_pos, "minMember and minSubGroup are mutually exclusive");
}

void load_kaipodgroup(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_podgroup pg;
	struct kaipg_ld k;

	memset(&pg, 0, sizeof(pg));
	memset(&k, 0, sizeof(k));
	k.pg = &pg;
	pg.queue_pos = doc->pos; /* queue stays NULL when not set */
	ld_metadata(ld, doc, &pg.meta, true);
	/* The top-level table hands spec the kaipg_ld, not the podgroup. */
	ld_fields(ld, doc, kaipg_top, &k);
	append_podgroup(ld, &pg);
}
