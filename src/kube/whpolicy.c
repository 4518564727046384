/*
 * whpolicy.c - the webhook's policy: each rule's level (deny, warn, off)
 * by default and per namespace, and the mutations a namespace opts into
 * (docs/webhook.md, "Policy file"), with Namespace labels
 * (webhook.carve.dev/...) for what the file leaves open.  Read once from a carve.dev/v1alpha1
 * WebhookPolicy YAML (or JSON) file; immutable afterwards, so reviews on
 * many threads read it without locks.  The policy owns every string in it
 * (one arena).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/arena.h"
#include "../io/readfile.h"
#include "../io/ytree.h"
#include "wh_int.h"

#define WH_POLICY_MAX (1024 * 1024) /* a policy file is small */

const struct wh_rule wh_rules[WH_NRULES] = {
	{"invalid", WH_DENY, "the object does not load (a field of the wrong type, a bad quantity ...)"},
	{"gpu-limits", WH_DENY, "a container requests a GPU resource without an equal limit"},
	{"flavor-ref", WH_DENY, "a ClusterQueue or Cohort names a ResourceFlavor that does not exist"},
	{"lending-limit", WH_DENY, "a lendingLimit above its nominalQuota"},
	{"cohort-cycle", WH_DENY, "Cohort parents form a cycle"},
	{"queue-cycle", WH_DENY, "Volcano or KAI queue parents form a cycle"},
	{"queue-ref", WH_DENY, "a LocalQueue names a missing ClusterQueue; a Workload a missing queue"},
	{"queue-label", WH_WARN, "a Pod or Job labelled for a LocalQueue its namespace lacks (Kueue leaves it unqueued)"},
	{"quota", WH_DENY, "quota arithmetic: a resource covered twice, a flavor without quota, limits without a cohort"},
	{"duplicate", WH_DENY, "an object of that kind and name already exists"},
	{"gpu-selector", WH_WARN, "a GPU request with no GPU model or sharing-mode selector"},
	{"gang", WH_WARN, "a multi-pod GPU Job with nothing ganging its pods"},
	{"mig-timeslice-mix", WH_WARN, "MIG and time-slicing under one resource name"},
	{"topology", WH_WARN, "a multi-pod GPU Job with no Kueue topology annotation"},
	{"fit", WH_WARN, "a pod asks more than any node offers"},
	{"fraction", WH_WARN, "a GPU fraction no GPU can give"},
	{"lint", WH_WARN, "other lints of carve validate"},
	{"other", WH_WARN, "any other diagnostic of carve validate"},
};

int wh_rule_index(const char *id)
{
	int i;

	for (i = 0; i < WH_NRULES; i++)
		if (!strcmp(wh_rules[i].id, id))
			return i;
	return -1;
}

struct nspol {
	const char *name;
	signed char lv[WH_NRULES]; /* -1: not set here */
	signed char gang, limits;  /* -1: not set here */
	const char *queue;         /* NULL: not set here */
};

struct wh_policy {
	struct carve_arena arena;
	struct nspol def;          /* spec.rules / spec.mutate: every field set */
	size_t nns;
	struct nspol *ns;          /* sorted by name */
};

static void nspol_unset(struct nspol *n, const char *name)
{
	memset(n->lv, -1, sizeof(n->lv));
	n->gang = n->limits = -1;
	n->queue = NULL;
	n->name = name;
}

static const struct nspol *find_ns(const struct wh_policy *p, const char *ns)
{
	size_t lo = 0, hi = p->nns;

	while (ns && lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(ns, p->ns[mid].name);

		if (!c)
			return &p->ns[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* The Namespace label webhook.carve.dev/<name>, or NULL. */
static const char *ns_label(const json_t *labels, const char *name)
{
	char key[96];

	snprintf(key, sizeof(key), "webhook.carve.dev/%s", name);
	return json_string_value(json_object_get(labels, key));
}

static int label_level(const json_t *labels, int r)
{
	const char *v = ns_label(labels, wh_rules[r].id);

	if (!v)
		return -1;
	return !strcmp(v, "deny") ? WH_DENY : !strcmp(v, "warn") ? WH_WARN
	       : !strcmp(v, "off") ? WH_OFF : -1;
}

static int label_bool(const json_t *labels, const char *name)
{
	const char *v = ns_label(labels, name);

	return !v ? -1 : !strcmp(v, "true") ? 1 : !strcmp(v, "false") ? 0 : -1;
}

enum wh_level wh_policy_level(const struct wh_policy *p, const char *ns, const json_t *labels,
			      int r)
{
	const struct nspol *n;
	int l;

	if (r < 0 || r >= WH_NRULES)
		return WH_WARN;
	n = p ? find_ns(p, ns) : NULL;
	if (n && n->lv[r] >= 0)
		return (enum wh_level)n->lv[r];
	if (ns && (l = label_level(labels, r)) >= 0)
		return (enum wh_level)l;
	return p ? (enum wh_level)p->def.lv[r] : wh_rules[r].def;
}

struct wh_mutations wh_policy_mutations(const struct wh_policy *p, const char *ns,
					const json_t *labels)
{
	struct wh_mutations w = {0};
	const struct nspol *n = p ? find_ns(p, ns) : NULL;
	int lg = ns ? label_bool(labels, "mutate-gang") : -1;
	int ll = ns ? label_bool(labels, "mutate-gpu-limits") : -1;
	const char *lq = ns ? ns_label(labels, "default-queue") : NULL;

	w.gang = (n && n->gang >= 0 ? n->gang : lg >= 0 ? lg : p ? p->def.gang : 0) > 0;
	w.gpu_limits = (n && n->limits >= 0 ? n->limits : ll >= 0 ? ll : p ? p->def.limits : 0) > 0;
	w.queue = n && n->queue ? n->queue : lq ? lq : p ? p->def.queue : NULL;
	if (w.queue && !*w.queue)
		w.queue = NULL;
	return w;
}

static struct wh_policy *policy_new(void)
{
	struct wh_policy *p = carve_calloc(1, sizeof(*p));
	int i;

	if (!p)
		return NULL;
	carve_arena_init(&p->arena);
	nspol_unset(&p->def, "");
	for (i = 0; i < WH_NRULES; i++)
		p->def.lv[i] = (signed char)wh_rules[i].def;
	p->def.gang = p->def.limits = 0;
	return p;
}

void wh_policy_free(struct wh_policy *p)
{
	if (!p)
		return;
	carve_arena_cleanup(&p->arena);
	carve_free(p->ns);
	carve_free(p);
}

/* ---- reading the file ---- */

struct rd {
	struct wh_policy *p;
	struct carve_diags *d;
	int rc;
};

static void bad(struct rd *r, const struct ynode *at, const char *fmt, const char *a, const char *b)
{
	carve_diag_error(r->d, at->pos, fmt, a, b);
	r->rc = CARVE_EPARSE;
}

static bool is_map(struct rd *r, const struct ynode *n, const char *field)
{
	if (n->kind == YN_MAP)
		return true;
	bad(r, n, "WebhookPolicy: %s must be a mapping, not %s", field, ytree_kind_name(n));
	return false;
}

static void read_rules(struct rd *r, const struct ynode *m, struct nspol *out, const char *field)
{
	size_t i;

	if (!is_map(r, m, field))
		return;
	for (i = 0; i < m->n; i++) {
		const struct ynode *k = m->pairs[i].key, *v = m->pairs[i].val;
		int ix = wh_rule_index(k->str);

		if (ix < 0) {
			bad(r, k, "WebhookPolicy: %s: unknown rule '%s' (docs/webhook.md lists them)",
			    field, k->str);
			continue;
		}
		if (v->kind == YN_SCALAR && !strcmp(v->str, "deny"))
			out->lv[ix] = WH_DENY;
		else if (v->kind == YN_SCALAR && !strcmp(v->str, "warn"))
			out->lv[ix] = WH_WARN;
		else if (v->kind == YN_SCALAR && !strcmp(v->str, "off"))
			out->lv[ix] = WH_OFF;
		else
			bad(r, v, "WebhookPolicy: %s.%s: level must be deny, warn or off", field, k->str);
	}
}

static signed char read_bool(struct rd *r, const struct ynode *v, const char *field, const char *key)
{
	if (v->kind == YN_SCALAR && !strcmp(v->str, "true"))
		return 1;
	if (v->kind == YN_SCALAR && !strcmp(v->str, "false"))
		return 0;
	bad(r, v, "WebhookPolicy: %s.%s must be true or false", field, key);
	return -1;
}

static void read_mutate(struct rd *r, const struct ynode *m, struct nspol *out, const char *field)
{
	size_t i;

	if (!is_map(r, m, field))
		return;
	for (i = 0; i < m->n; i++) {
		const struct ynode *k = m->pairs[i].key, *v = m->pairs[i].val;

		if (!strcmp(k->str, "gang"))
			out->gang = read_bool(r, v, field, k->str);
		else if (!strcmp(k->str, "gpuLimits"))
			out->limits = read_bool(r, v, field, k->str);
		else if (!strcmp(k->str, "defaultQueue") && v->kind == YN_SCALAR)
			out->queue = v->str;
		else if (!strcmp(k->str, "defaultQueue"))
			bad(r, v, "WebhookPolicy: %s.%s must be a LocalQueue name", field, k->str);
		else
			bad(r, k, "WebhookPolicy: %s: unknown field '%s' (gang, gpuLimits, "
			    "defaultQueue)", field, k->str);
	}
}

/* Reads one block (spec, or a namespace's): rules and mutate. */
static void read_block(struct rd *r, const struct ynode *m, struct nspol *out, const char *field,
		       bool top)
{
	char f[300];
	size_t i;

	if (!is_map(r, m, field))
		return;
	for (i = 0; i < m->n; i++) {
		const struct ynode *k = m->pairs[i].key, *v = m->pairs[i].val;

		snprintf(f, sizeof(f), "%s.%s", field, k->str);
		if (!strcmp(k->str, "rules"))
			read_rules(r, v, out, f);
		else if (!strcmp(k->str, "mutate"))
			read_mutate(r, v, out, f);
		else if (!top || strcmp(k->str, "namespaces"))
			bad(r, k, "WebhookPolicy: %s: unknown field '%s'", field, k->str);
	}
}

static int ns_cmp(const void *a, const void *b)
{
	return strcmp(((const struct nspol *)a)->name, ((const struct nspol *)b)->name);
}

static void read_namespaces(struct rd *r, const struct ynode *m)
{
	char f[300];
	size_t i;

	if (!is_map(r, m, "spec.namespaces"))
		return;
	r->p->ns = carve_calloc(m->n ? m->n : 1, sizeof(*r->p->ns));
	if (!r->p->ns) {
		r->rc = CARVE_ENOMEM;
		return;
	}
	for (i = 0; i < m->n; i++) {
		struct nspol *n = &r->p->ns[r->p->nns];
		const struct ynode *k = m->pairs[i].key;

		nspol_unset(n, k->str);
		snprintf(f, sizeof(f), "spec.namespaces.%s", k->str);
		read_block(r, m->pairs[i].val, n, f, false);
		r->p->nns++;
	}
	qsort(r->p->ns, r->p->nns, sizeof(*r->p->ns), ns_cmp);
}

static int read_doc(void *ctx, const struct ydoc *doc)
{
	struct rd *r = ctx;
	const struct ynode *root = doc->root, *v, *spec;

	if (!root)
		return 0;
	if (root->kind != YN_MAP) {
		bad(r, root, "WebhookPolicy: the document must be a mapping, not %s%s",
		    ytree_kind_name(root), "");
		return 0;
	}
	v = ytree_get(root, "apiVersion");
	if (!v || v->kind != YN_SCALAR || strcmp(v->str, "carve.dev/v1alpha1"))
		bad(r, v ? v : root, "WebhookPolicy: apiVersion must be %s%s", "carve.dev/v1alpha1", "");
	v = ytree_get(root, "kind");
	if (!v || v->kind != YN_SCALAR || strcmp(v->str, "WebhookPolicy"))
		bad(r, v ? v : root, "WebhookPolicy: kind must be %s%s", "WebhookPolicy", "");
	spec = ytree_get(root, "spec");
	if (!spec || ytree_is_null(spec))
		return 0;
	read_block(r, spec, &r->p->def, "spec", true);
	if (r->rc == CARVE_ENOMEM)
		return r->rc;
	v = spec->kind == YN_MAP ? ytree_get(spec, "namespaces") : NULL;
	if (v && !ytree_is_null(v)) {
		if (r->p->ns) {
			bad(r, v, "WebhookPolicy: %s%s: only one WebhookPolicy document per file",
			    "spec.namespaces", "");
			return 0;
		}
		read_namespaces(r, v);
	}
	return r->rc == CARVE_ENOMEM ? r->rc : 0;
}

int wh_policy_load(const char *path, struct wh_policy **out, struct carve_diags *d)
{
	struct rd r = {0};
	char *buf = NULL;
	size_t len = 0;
	const char *file;
	int rc;

	*out = NULL;
	r.p = policy_new();
	if (!r.p)
		return CARVE_ENOMEM;
	if (!path) {
		*out = r.p;
		return 0;
	}
	rc = carve__read_file(d, path, WH_POLICY_MAX, &buf, &len);
	if (rc) {
		wh_policy_free(r.p);
		return rc;
	}
	/* The diagnostics name the file by the caller's path (borrowed): the
	 * policy's arena is gone when they are printed after an error. */
	file = path;
	r.d = d;
	rc = ytree_parse_each(&r.p->arena, file, buf, len, d, read_doc, &r);
	carve_free(buf);
	if (!rc)
		rc = r.rc;
	if (rc) {
		wh_policy_free(r.p);
		return rc;
	}
	*out = r.p;
	return 0;
}
