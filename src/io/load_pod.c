/*
 * load_pod.c - v1 Pods, batch/v1 Jobs and the PodSpec/PodTemplateSpec they
 * (and Kueue Workload podSets) carry, into struct carve_podspec.
 *
 * Invariants: every real PodSpec, Container and JobSpec field is known (the
 * unused ones are accepted and ignored).  A limit without a request defaults
 * the request, as API defaulting does.  Effective pod requests/limits follow
 * Kubernetes: containers and sidecars summed, raised to the largest init
 * container, pod-level resources and overhead applied.
 */
#include <stdint.h>
#include <string.h>

#include "carve/resource.h"
#include "carve/quantity.h"
#include "loaders.h"

/* ---- resource list arithmetic ---- */

struct rlb {
	struct carve_reslist l;
	size_t cap;
};

static struct carve_resq *rl_find(const struct carve_reslist *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	return NULL;
}

static struct carve_resq *rlb_slot(struct ld *ld, struct rlb *b, const struct carve_resq *q)
{
	struct carve_resq *e = rl_find(&b->l, q->name);

	if (e)
		return e;
	e = LD_APPEND(ld, b->l.v, b->l.n, b->cap);
	if (e) {
		e->name = q->name;
		e->pos = q->pos;
	}
	return e;
}

static void rlb_add_list(struct ld *ld, struct rlb *b, const struct carve_reslist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		struct carve_resq *e = rlb_slot(ld, b, &l->v[i]);

		if (e)
			e->milli = carve_qty_sat_add(e->milli, l->v[i].milli);
	}
}

static void rlb_max_list(struct ld *ld, struct rlb *b, const struct carve_reslist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		struct carve_resq *e = rl_find(&b->l, l->v[i].name);

		if (!e) {
			e = rlb_slot(ld, b, &l->v[i]);
			if (e)
				e->milli = l->v[i].milli;
		} else if (l->v[i].milli > e->milli) {
			e->milli = l->v[i].milli;
		}
	}
}

/* ---- containers ---- */

struct cont {
	struct carve_container c;
	bool always; /* restartPolicy: Always (a sidecar when an init container) */
};

static void f_c_name(struct ld *ld, const struct ynode *v, void *o)
{
	struct cont *c = o;

	if (ld_str(ld, v, &c->c.name) && !*c->c.name) {
		ld_error(ld, v->pos, "must not be empty");
		c->c.name = NULL;
	}
}

static void f_c_limits(struct ld *ld, const struct ynode *v, void *o)
{
	ld_resmap(ld, v, &((struct cont *)o)->c.limits);
}

static void f_c_requests(struct ld *ld, const struct ynode *v, void *o)
{
	ld_resmap(ld, v, &((struct cont *)o)->c.requests);
}

static const struct ld_field resreq_fields[] = {
	{"limits", f_c_limits, 0},
	{"requests", f_c_requests, 0},
	{"claims", NULL, 0},
	{NULL, NULL, 0},
};

static void f_c_resources(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, resreq_fields, o);
}

static void f_c_restart(struct ld *ld, const struct ynode *v, void *o)
{
	const char *s;

	if (ytree_is_null(v))
		return;
	if (ld_str(ld, v, &s))
		((struct cont *)o)->always = !strcmp(s, "Always");
}

/* v1.Container (also used for initContainers). */
static const struct ld_field container_fields[] = {
	{"name", f_c_name, LD_REQUIRED},
	{"image", NULL, 0},
	{"command", NULL, 0},
	{"args", NULL, 0},
	{"workingDir", NULL, 0},
	{"ports", NULL, 0},
	{"envFrom", NULL, 0},
	{"env", NULL, 0},
	{"resources", f_c_resources, 0},
	{"resizePolicy", NULL, 0},
	{"restartPolicy", f_c_restart, 0},
	{"restartPolicyRules", NULL, 0},
	{"volumeMounts", NULL, 0},
	{"volumeDevices", NULL, 0},
	{"livenessProbe", NULL, 0},
	{"readinessProbe", NULL, 0},
	{"startupProbe", NULL, 0},
	{"lifecycle", NULL, 0},
	{"terminationMessagePath", NULL, 0},
	{"terminationMessagePolicy", NULL, 0},
	{"imagePullPolicy", NULL, 0},
	{"securityContext", NULL, 0},
	{"stdin", NULL, 0},
	{"stdinOnce", NULL, 0},
	{"tty", NULL, 0},
	{NULL, NULL, 0},
};

/* Drops negative quantities (Kubernetes rejects them), reporting each;
 * where is the path of the list below the current one. */
static void drop_negative(struct ld *ld, struct carve_reslist *l, const char *where)
{
	size_t i, k = 0;

	for (i = 0; i < l->n; i++) {
		if (l->v[i].milli < 0) {
			size_t old = ld_push(ld, "%s[%s]", where, l->v[i].name);

			ld_error(ld, l->v[i].pos, "quantity must not be negative");
			ld_pop(ld, old);
			continue;
		}
		l->v[k++] = l->v[i];
	}
	l->n = k;
}

/*
 * API defaulting: a resource with a limit and no request is requested at
 * its limit.  A request above its limit is invalid (reported, and the
 * request is dropped so the limit, defaulted in its place, stands).
 */
static void default_requests(struct ld *ld, struct carve_container *c)
{
	struct carve_resq *v;
	size_t i, n = 0;

	drop_negative(ld, &c->requests, ".resources.requests");
	drop_negative(ld, &c->limits, ".resources.limits");
	for (i = 0; i < c->requests.n; i++) {
		const struct carve_resq *lim = rl_find(&c->limits, c->requests.v[i].name);

		if (lim && c->requests.v[i].milli > lim->milli) {
			size_t old = ld_push(ld, ".resources.requests[%s]", c->requests.v[i].name);

			ld_error(ld, c->requests.v[i].pos, "request must not exceed its limit");
			ld_pop(ld, old);
			c->requests.v[i].name = NULL; /* dropped below */
		}
	}
	if (!c->limits.n && !c->requests.n)
		return;
	v = carve_arena_alloc(ld->a, (c->requests.n + c->limits.n) * sizeof(*v));
	if (!v) {
		carve_diag_error(ld->d, c->pos, "out of memory");
		return;
	}
	for (i = 0; i < c->requests.n; i++)
		if (c->requests.v[i].name)
			v[n++] = c->requests.v[i];
	for (i = 0; i < c->limits.n; i++) {
		size_t j;
		bool have = false;

		for (j = 0; j < n; j++)
			if (!strcmp(v[j].name, c->limits.v[i].name))
				have = true;
		if (!have)
			v[n++] = c->limits.v[i];
	}
	c->requests.v = v;
	c->requests.n = n;
}

/* ---- node affinity ---- */

static const char *const expr_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", NULL};

struct expr {
	struct carve_nodeexpr e;
	bool has_values;
};

static void f_x_key(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct expr *)o)->e.key);
}

static void f_x_op(struct ld *ld, const struct ynode *v, void *o)
{
	int i;

	if (ld_enum(ld, v, expr_ops, &i))
		((struct expr *)o)->e.op = expr_ops[i];
}

static void f_x_values(struct ld *ld, const struct ynode *v, void *o)
{
	struct expr *x = o;

	if (ld_strlist(ld, v, &x->e.values, &x->e.nvalues, NULL))
		x->has_values = true;
}

static const struct ld_field expr_fields[] = {
	{"key", f_x_key, LD_REQUIRED},
	{"operator", f_x_op, LD_REQUIRED},
	{"values", f_x_values, 0},
	{NULL, NULL, 0},
};

static bool is_integer(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

struct term {
	struct carve_nodeterm t;
	size_t cap;
};

static void one_expr(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct term *t = obj;
	struct expr x;
	struct carve_nodeexpr *e;

	memset(&x, 0, sizeof(x));
	x.e.pos = item->pos;
	if (!ld_fields(ld, item, expr_fields, &x) || !x.e.key || !x.e.op)
		return;
	if (!strcmp(x.e.op, "In") || !strcmp(x.e.op, "NotIn")) {
		if (!x.e.nvalues) {
			ld_error(ld, item->pos, "operator %s needs at least one value", x.e.op);
			return;
		}
	} else if (!strcmp(x.e.op, "Exists") || !strcmp(x.e.op, "DoesNotExist")) {
		if (x.e.nvalues) {
			ld_error(ld, item->pos, "operator %s must not have values", x.e.op);
			return;
		}
	} else if (x.e.nvalues != 1 || !is_integer(x.e.values[0])) {
		ld_error(ld, item->pos, "operator %s needs exactly one integer value", x.e.op);
		return;
	}
	e = LD_APPEND(ld, t->t.v, t->t.n, t->cap);
	if (e)
		*e = x.e;
}

static void f_t_exprs(struct ld *ld, const struct ynode *v, void *o)
{
	ld_list(ld, v, one_expr, o);
}

static const struct ld_field term_fields[] = {
	{"matchExpressions", f_t_exprs, 0},
	{"matchFields", NULL, 0},
	{NULL, NULL, 0},
};

struct pspec {
	struct carve_podspec *ps;
	size_t cap_c, cap_i, cap_t, cap_side;
	size_t nside;
	bool *side; /* per init container: a sidecar (restartPolicy: Always) */
	struct carve_reslist pod_req, pod_lim, overhead;
};

static void one_term(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct pspec *p = obj;
	struct term t;
	struct carve_nodeterm *e;

	memset(&t, 0, sizeof(t));
	if (!ld_fields(ld, item, term_fields, &t))
		return;
	e = LD_APPEND(ld, p->ps->terms, p->ps->nterms, p->cap_t);
	if (e)
		*e = t.t;
}

static void f_ns_terms(struct ld *ld, const struct ynode *v, void *o)
{
	ld_list(ld, v, one_term, o);
}

static const struct ld_field nodeselector_fields[] = {
	{"nodeSelectorTerms", f_ns_terms, LD_REQUIRED},
	{NULL, NULL, 0},
};

static void f_na_required(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, nodeselector_fields, o);
}

static const struct ld_field nodeaffinity_fields[] = {
	{"requiredDuringSchedulingIgnoredDuringExecution", f_na_required, 0},
	{"preferredDuringSchedulingIgnoredDuringExecution", NULL, 0},
	{NULL, NULL, 0},
};

static void f_a_node(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, nodeaffinity_fields, o);
}

static const struct ld_field affinity_fields[] = {
	{"nodeAffinity", f_a_node, 0},
	{"podAffinity", NULL, 0},
	{"podAntiAffinity", NULL, 0},
	{NULL, NULL, 0},
};

/* ---- pod spec ---- */

static void one_container_of(struct ld *ld, const struct ynode *item, struct pspec *p, bool init)
{
	struct carve_podspec *ps = p->ps;
	struct carve_container *e;
	struct cont c;
	size_t i;

	memset(&c, 0, sizeof(c));
	c.c.pos = item->pos;
	c.c.resources_pos = item->pos;
	if (!ld_fields(ld, item, container_fields, &c) || !c.c.name)
		return;
	for (i = 0; i < item->n; i++)
		if (!strcmp(item->pairs[i].key->str, "resources"))
			c.c.resources_pos = item->pairs[i].key->pos;
	default_requests(ld, &c.c);
	if (init) {
		bool *s;

		e = LD_APPEND(ld, ps->init, ps->ninit, p->cap_i);
		if (!e)
			return;
		s = LD_APPEND(ld, p->side, p->nside, p->cap_side);
		if (!s) {
			ps->ninit--;
			return;
		}
		*s = c.always;
	} else {
		e = LD_APPEND(ld, ps->containers, ps->ncontainers, p->cap_c);
		if (!e)
			return;
	}
	*e = c.c;
}

static void one_container(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	one_container_of(ld, item, obj, false);
}

static void one_init(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	one_container_of(ld, item, obj, true);
}

static void f_ps_containers(struct ld *ld, const struct ynode *v, void *o)
{
	ld_list(ld, v, one_container, o);
}

static void f_ps_init(struct ld *ld, const struct ynode *v, void *o)
{
	ld_list(ld, v, one_init, o);
}

static void f_ps_nodesel(struct ld *ld, const struct ynode *v, void *o)
{
	ld_kvmap(ld, v, &((struct pspec *)o)->ps->node_selector);
}

static void f_ps_affinity(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, affinity_fields, o);
}

static void f_ps_tolerations(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_podspec *ps = ((struct pspec *)o)->ps;

	ld_tolerations(ld, v, &ps->tolerations, &ps->ntolerations);
}

static void f_ps_scheduler(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_str(ld, v, &((struct pspec *)o)->ps->scheduler_name);
}

static void f_ps_prioclass(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_str(ld, v, &((struct pspec *)o)->ps->priority_class);
}

static void f_ps_overhead(struct ld *ld, const struct ynode *v, void *o)
{
	struct pspec *p = o;

	if (ld_resmap(ld, v, &p->overhead))
		drop_negative(ld, &p->overhead, "");
}

static void f_pr_limits(struct ld *ld, const struct ynode *v, void *o)
{
	struct pspec *p = o;

	if (ld_resmap(ld, v, &p->pod_lim))
		drop_negative(ld, &p->pod_lim, "");
}

static void f_pr_requests(struct ld *ld, const struct ynode *v, void *o)
{
	struct pspec *p = o;

	if (ld_resmap(ld, v, &p->pod_req))
		drop_negative(ld, &p->pod_req, "");
}

static const struct ld_field podres_fields[] = {
	{"limits", f_pr_limits, 0},
	{"requests", f_pr_requests, 0},
	{"claims", NULL, 0},
	{NULL, NULL, 0},
};

/* Pod-level resources (spec.resources, Kubernetes 1.32+). */
static void f_ps_resources(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, podres_fields, o);
}

/*
 * spec.schedulingGroup (Kubernetes 1.35, alpha behind the GenericWorkload
 * gate: kubernetes.io/docs/concepts/workloads/pods/scheduling-group/) links
 * the pod to a scheduling.k8s.io PodGroup, which carve does not read: the
 * field is accepted and the pod is admitted alone, with a warning.
 */
static void f_ps_schedgroup(struct ld *ld, const struct ynode *v, void *o)
{
	(void)o;
	if (!ytree_is_null(v))
		ld_warn(ld, v->pos, "a scheduling.k8s.io PodGroup is not read by carve; the pod "
			"is treated as a group of one");
}

/* v1.PodSpec. */
static const struct ld_field podspec_fields[] = {
	{"containers", f_ps_containers, LD_REQUIRED},
	{"initContainers", f_ps_init, 0},
	{"nodeSelector", f_ps_nodesel, 0},
	{"affinity", f_ps_affinity, 0},
	{"tolerations", f_ps_tolerations, 0},
	{"schedulerName", f_ps_scheduler, 0},
	{"priorityClassName", f_ps_prioclass, 0},
	{"overhead", f_ps_overhead, 0},
	{"resources", f_ps_resources, 0},
	{"volumes", NULL, 0},
	{"ephemeralContainers", NULL, 0},
	{"restartPolicy", NULL, 0},
	{"terminationGracePeriodSeconds", NULL, 0},
	{"activeDeadlineSeconds", NULL, 0},
	{"dnsPolicy", NULL, 0},
	{"serviceAccountName", NULL, 0},
	{"serviceAccount", NULL, 0},
	{"automountServiceAccountToken", NULL, 0},
	{"nodeName", NULL, 0},
	{"hostNetwork", NULL, 0},
	{"hostPID", NULL, 0},
	{"hostIPC", NULL, 0},
	{"shareProcessNamespace", NULL, 0},
	{"securityContext", NULL, 0},
	{"imagePullSecrets", NULL, 0},
	{"hostname", NULL, 0},
	{"hostnameOverride", NULL, 0},
	{"subdomain", NULL, 0},
	{"hostAliases", NULL, 0},
	{"priority", NULL, 0},
	{"dnsConfig", NULL, 0},
	{"readinessGates", NULL, 0},
	{"runtimeClassName", NULL, 0},
	{"enableServiceLinks", NULL, 0},
	{"preemptionPolicy", NULL, 0},
	{"topologySpreadConstraints", NULL, 0},
	{"setHostnameAsFQDN", NULL, 0},
	{"os", NULL, 0},
	{"hostUsers", NULL, 0},
	{"schedulingGates", NULL, 0},
	{"resourceClaims", NULL, 0},
	{"workloadRef", NULL, 0},
	{"schedulingGroup", f_ps_schedgroup, 0},
	{NULL, NULL, 0},
};

/*
 * Kubernetes's effective pod value for requests (or limits): regular
 * containers and sidecars add up; each regular init container runs alone
 * beside the sidecars started before it; the pod needs the larger of the
 * two, per resource.
 */
static void effective(struct ld *ld, struct pspec *p, bool limits, struct carve_reslist *out)
{
	struct carve_podspec *ps = p->ps;
	struct rlb sum = {{0, NULL}, 0}, side = {{0, NULL}, 0}, initmax = {{0, NULL}, 0};
	size_t i;

	for (i = 0; i < ps->ncontainers; i++)
		rlb_add_list(ld, &sum, limits ? &ps->containers[i].limits : &ps->containers[i].requests);
	for (i = 0; i < ps->ninit; i++) {
		const struct carve_reslist *l = limits ? &ps->init[i].limits : &ps->init[i].requests;

		if (p->side[i]) {
			rlb_add_list(ld, &sum, l);
			rlb_add_list(ld, &side, l);
			rlb_max_list(ld, &initmax, &side.l);
		} else {
			struct rlb cur = {{0, NULL}, 0};

			rlb_add_list(ld, &cur, l);
			rlb_add_list(ld, &cur, &side.l);
			rlb_max_list(ld, &initmax, &cur.l);
		}
	}
	rlb_max_list(ld, &sum, &initmax.l);
	*out = sum.l;
}

/* Pod-level resources replace the container totals for cpu, memory and
 * hugepages; a pod-level limit without a request defaults the request. */
static bool pod_level(const char *name)
{
	enum carve_res_kind k = carve_res_kind(name, NULL);

	return k == CARVE_RK_CPU || k == CARVE_RK_MEMORY ||
	       !strncmp(name, "hugepages-", 10);
}

static void apply_pod_level(struct ld *ld, struct carve_reslist *eff, const struct carve_reslist *l)
{
	struct rlb b = {*eff, eff->n};
	size_t i;

	for (i = 0; i < l->n; i++) {
		struct carve_resq *e;

		if (!pod_level(l->v[i].name))
			continue;
		e = rlb_slot(ld, &b, &l->v[i]);
		if (e)
			e->milli = l->v[i].milli;
	}
	*eff = b.l;
}

void ld_podspec(struct ld *ld, const struct ynode *spec, struct carve_podspec *out)
{
	struct pspec p;
	size_t i;

	memset(&p, 0, sizeof(p));
	p.ps = out;
	if (ytree_is_null(spec))
		return; /* the parent reports a missing required spec */
	out->pos = spec->pos;
	if (!ld_fields(ld, spec, podspec_fields, &p))
		return;
	effective(ld, &p, false, &out->requests);
	effective(ld, &p, true, &out->limits);
	for (i = 0; i < p.pod_lim.n; i++)
		if (!rl_find(&p.pod_req, p.pod_lim.v[i].name)) {
			struct rlb b = {p.pod_req, p.pod_req.n};
			struct carve_resq *e = rlb_slot(ld, &b, &p.pod_lim.v[i]);

			if (e)
				e->milli = p.pod_lim.v[i].milli;
			p.pod_req = b.l;
		}
	apply_pod_level(ld, &out->requests, &p.pod_req);
	apply_pod_level(ld, &out->limits, &p.pod_lim);
	/* Overhead adds to every request, and to the limits that are set. */
	for (i = 0; i < p.overhead.n; i++) {
		struct rlb b = {out->requests, out->requests.n};
		struct carve_resq *e = rlb_slot(ld, &b, &p.overhead.v[i]);

		if (e)
			e->milli = carve_qty_sat_add(e->milli, p.overhead.v[i].milli);
		out->requests = b.l;
		e = rl_find(&out->limits, p.overhead.v[i].name);
		if (e)
			e->milli = carve_qty_sat_add(e->milli, p.overhead.v[i].milli);
	}
}

/* ---- pod template ---- */

static void f_tm_labels(struct ld *ld, const struct ynode *v, void *o)
{
	ld_kvmap(ld, v, &((struct carve_podspec *)o)->labels);
}

static void f_tm_annots(struct ld *ld, const struct ynode *v, void *o)
{
	ld_kvmap(ld, v, &((struct carve_podspec *)o)->annotations);
}

/* ObjectMeta of a template: only labels and annotations matter. */
static const struct ld_field tmeta_fields[] = {
	{"labels", f_tm_labels, 0},
	{"annotations", f_tm_annots, 0},
	{"name", NULL, 0},
	{"generateName", NULL, 0},
	{"namespace", NULL, 0},
	{"uid", NULL, 0},
	{"resourceVersion", NULL, 0},
	{"generation", NULL, 0},
	{"creationTimestamp", NULL, 0},
	{"deletionTimestamp", NULL, 0},
	{"deletionGracePeriodSeconds", NULL, 0},
	{"finalizers", NULL, 0},
	{"ownerReferences", NULL, 0},
	{"managedFields", NULL, 0},
	{"selfLink", NULL, 0},
	{NULL, NULL, 0},
};

static void f_tm_meta(struct ld *ld, const struct ynode *v, void *o)
{
	ld_fields(ld, v, tmeta_fields, o);
}

static void f_tm_spec(struct ld *ld, const struct ynode *v, void *o)
{
	ld_podspec(ld, v, o);
}

static const struct ld_field template_fields[] = {
	{"metadata", f_tm_meta, 0},
	{"spec", f_tm_spec, LD_REQUIRED},
	{NULL, NULL, 0},
};

void ld_podtemplate(struct ld *ld, const struct ynode *tmpl, struct carve_podspec *out)
{
	if (ytree_is_null(tmpl))
		return; /* the parent reports a missing required template */
	out->pos = tmpl->pos;
	ld_fields(ld, tmpl, template_fields, out);
}

/* ---- Pod ---- */

static void f_pod_spec(struct ld *ld, const struct ynode *v, void *o)
{
	ld_podspec(ld, v, &((struct carve_mf_pod *)o)->spec);
}

static void f_st_phase(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const phases[] = {"Pending", "Running", "Succeeded", "Failed",
					     "Unknown", NULL};
	int x;

	if (!ytree_is_null(v) && ld_enum(ld, v, phases, &x))
		((struct carve_mf_pod *)o)->phase = phases[x];
}

static void f_st_nominated(struct ld *ld, const struct ynode *v, void *o)
{
	const char *s;

	if (ld_str(ld, v, &s) && *s)
		((struct carve_mf_pod *)o)->nominated_node = s;
}

/* PodStatus (core/v1, Kubernetes 1.35): what the scheduler reads, the
 * rest accepted unread. */
static const struct ld_field pod_status_fields[] = {
	{"phase", f_st_phase, 0},
	{"nominatedNodeName", f_st_nominated, 0},
	{"conditions", NULL, 0},
	{"message", NULL, 0},
	{"reason", NULL, 0},
	{"observedGeneration", NULL, 0},
	{"hostIP", NULL, 0},
	{"hostIPs", NULL, 0},
	{"podIP", NULL, 0},
	{"podIPs", NULL, 0},
	{"startTime", NULL, 0},
	{"initContainerStatuses", NULL, 0},
	{"containerStatuses", NULL, 0},
	{"ephemeralContainerStatuses", NULL, 0},
	{"qosClass", NULL, 0},
	{"resize", NULL, 0},
	{"resourceClaimStatuses", NULL, 0},
	{"extendedResourceClaimStatus", NULL, 0},
	{NULL, NULL, 0},
};

static void f_pod_status(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, pod_status_fields, o);
}

static const struct ld_field pod_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_pod_spec, LD_REQUIRED},
	{"status", f_pod_status, 0},
	{NULL, NULL, 0},
};

/*
 * What a pod read from the API server carries beyond its PodSpec
 * (struct carve_mf_pod): metadata.uid and deletionTimestamp, spec.nodeName,
 * schedulingGates and terminationGracePeriodSeconds (the API's default 30,
 * core/v1 DefaultTerminationGracePeriodSeconds).  Fields ld_podspec and
 * the metadata accept unread are checked here.
 */
static void pod_api_fields(struct ld *ld, const struct ynode *doc, struct carve_mf_pod *pod)
{
	const struct ynode *md = ytree_get(doc, "metadata"), *spec = ytree_get(doc, "spec");
	const struct ynode *v;
	const char *s;
	int64_t t;
	size_t old;

	pod->grace_seconds = 30;
	if ((v = ytree_get(md, "uid"))) {
		old = ld_push(ld, "metadata.uid");
		if (ld_str(ld, v, &s) && *s)
			pod->uid = s;
		ld_pop(ld, old);
	}
	if ((v = ytree_get(md, "deletionTimestamp")) && !ytree_is_null(v)) {
		old = ld_push(ld, "metadata.deletionTimestamp");
		ld_time(ld, v, &t);
		pod->deleting = true; /* set at all: the pod is going */
		ld_pop(ld, old);
	}
	if ((v = ytree_get(spec, "nodeName"))) {
		old = ld_push(ld, "spec.nodeName");
		if (ld_str(ld, v, &s) && *s)
			pod->node_name = s;
		ld_pop(ld, old);
	}
	if ((v = ytree_get(spec, "schedulingGates")) && !ytree_is_null(v)) {
		old = ld_push(ld, "spec.schedulingGates");
		if (v->kind == YN_SEQ)
			pod->ngates = v->n;
		else
			ld_error(ld, v->pos, "expected a list, got %s", ytree_kind_name(v));
		ld_pop(ld, old);
	}
	if ((v = ytree_get(spec, "terminationGracePeriodSeconds")) && !ytree_is_null(v)) {
		old = ld_push(ld, "spec.terminationGracePeriodSeconds");
		if (ld_int(ld, v, 0, INT64_MAX, &t))
			pod->grace_seconds = t;
		ld_pop(ld, old);
	}
}

void load_pod(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_pod pod, *e;

	memset(&pod, 0, sizeof(pod));
	ld_metadata_gen(ld, doc, &pod.meta, true);
	ld_fields(ld, doc, pod_fields, &pod);
	if (!pod.meta.name || !ytree_get(doc, "spec") || ytree_is_null(ytree_get(doc, "spec")))
		return;
	pod_api_fields(ld, doc, &pod);
	/* Template labels/annotations come from the pod's own metadata. */
	pod.spec.labels = pod.meta.labels;
	pod.spec.annotations = pod.meta.annotations;
	e = LD_APPEND(ld, ld->m->pods, ld->m->npods, ld->m->cap_pods);
	if (e)
		*e = pod;
}

/* ---- Job ---- */

struct job {
	struct carve_mf_job j;
	bool has_parallelism, has_completions, has_template;
};

static void f_j_par(struct ld *ld, const struct ynode *v, void *o)
{
	struct job *j = o;

	if (ytree_is_null(v))
		return;
	j->j.parallelism_pos = v->pos;
	if (ld_i32(ld, v, 0, INT32_MAX, &j->j.parallelism))
		j->has_parallelism = true;
}

static void f_j_comp(struct ld *ld, const struct ynode *v, void *o)
{
	struct job *j = o;

	if (ytree_is_null(v))
		return;
	if (ld_i32(ld, v, 0, INT32_MAX, &j->j.completions))
		j->has_completions = true;
}

static void f_j_nonneg(struct ld *ld, const struct ynode *v, void *o)
{
	int32_t x;

	if (!ytree_is_null(v))
		ld_i32(ld, v, 0, INT32_MAX, &x);
}

static void f_j_bool(struct ld *ld, const struct ynode *v, void *o)
{
	bool b;

	if (!ytree_is_null(v))
		ld_bool(ld, v, &b);
}

static void f_j_mode(struct ld *ld, const struct ynode *v, void *o)
{
	static const char *const modes[] = {"NonIndexed", "Indexed", NULL};
	int m;

	if (!ytree_is_null(v))
		ld_enum(ld, v, modes, &m);
}

static void f_j_template(struct ld *ld, const struct ynode *v, void *o)
{
	struct job *j = o;

	j->has_template = !ytree_is_null(v);
	ld_podtemplate(ld, v, &j->j.spec);
}

/* batch/v1 JobSpec. */
static const struct ld_field jobspec_fields[] = {
	{"template", f_j_template, LD_REQUIRED},
	{"parallelism", f_j_par, 0},
	{"completions", f_j_comp, 0},
	{"completionMode", f_j_mode, 0},
	{"backoffLimit", f_j_nonneg, 0},
	{"backoffLimitPerIndex", f_j_nonneg, 0},
	{"maxFailedIndexes", f_j_nonneg, 0},
	{"suspend", f_j_bool, 0},
	{"manualSelector", f_j_bool, 0},
	{"activeDeadlineSeconds", NULL, 0},
	{"ttlSecondsAfterFinished", f_j_nonneg, 0},
	{"podFailurePolicy", NULL, 0},
	{"successPolicy", NULL, 0},
	{"selector", NULL, 0},
	{"podReplacementPolicy", NULL, 0},
	{"managedBy", NULL, 0},
	{NULL, NULL, 0},
};

static void f_job_spec(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, jobspec_fields, o);
}

static const struct ld_field job_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_job_spec, LD_REQUIRED},
	{"status", NULL, 0},
	{NULL, NULL, 0},
};

/*
 * API defaulting: both unset means 1 and 1; parallelism defaults to 1.
 * A work-queue Job (parallelism set, completions unset) runs
 * `parallelism` pods at once, so completions takes that value here.
 */
static void job_defaults(struct job *j, struct carve_pos at)
{
	if (!j->has_parallelism)
		j->j.parallelism = 1;
	if (!j->has_completions)
		j->j.completions = j->has_parallelism ? j->j.parallelism : 1;
	if (!j->has_parallelism)
		j->j.parallelism_pos = at;
}

bool ld_jobspec(struct ld *ld, const struct ynode *spec, int32_t *parallelism,
		int32_t *completions, struct carve_podspec *out)
{
	struct job j;

	memset(&j, 0, sizeof(j));
	if (ytree_is_null(spec))
		return false;
	ld_fields(ld, spec, jobspec_fields, &j);
	if (!j.has_template)
		return false;
	job_defaults(&j, spec->pos);
	*parallelism = j.j.parallelism;
	*completions = j.j.completions;
	*out = j.j.spec;
	return true;
}

void load_job(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_job *e;
	struct job j;

	memset(&j, 0, sizeof(j));
	ld_metadata_gen(ld, doc, &j.j.meta, true);
	ld_fields(ld, doc, job_fields, &j);
	if (!j.j.meta.name || !j.has_template)
		return;
	job_defaults(&j, doc->pos);
	e = LD_APPEND(ld, ld->m->jobs, ld->m->njobs, ld->m->cap_jobs);
	if (e)
		*e = j.j;
}
