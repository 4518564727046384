/*
 * whctx.c - the cluster context a review's cross-object checks read: the
 * queue objects (ResourceFlavor, ClusterQueue, Cohort, LocalQueue, their
 * carve.dev twins, WorkloadPriorityClass, Topology, Volcano and KAI
 * Queues, PodGroups) and Namespaces, as API JSON.  A review loads them
 * with the object under review into one manifest set and runs carve
 * validate over it (review.c); the context also keeps what validate says
 * of the context alone (its baseline), so a review blames an object only
 * for what it adds.
 *
 * Immutable after wh_ctx_build but for the atomic reference count: any
 * number of threads may read one context while the server swaps in a new
 * one.  The context owns deep copies of the objects it keeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/kube.h"
#include "carve/manifest.h"
#include "carve/validate.h"
#include "trim.h"
#include "wh_int.h"

const struct wh_ctx_resource wh_ctx_resources[] = {
	{"/api/v1/namespaces", false},
	{"/apis/kueue.x-k8s.io/v1beta2/resourceflavors", true},
	{"/apis/kueue.x-k8s.io/v1beta2/clusterqueues", true},
	{"/apis/kueue.x-k8s.io/v1beta2/cohorts", true},
	{"/apis/kueue.x-k8s.io/v1beta2/localqueues", true},
	{"/apis/kueue.x-k8s.io/v1beta2/workloadpriorityclasses", true},
	{"/apis/kueue.x-k8s.io/v1beta2/topologies", true},
	{"/apis/carve.dev/v1alpha1/resourceflavors", true},
	{"/apis/carve.dev/v1alpha1/clusterqueues", true},
	{"/apis/carve.dev/v1alpha1/cohorts", true},
	{"/apis/carve.dev/v1alpha1/localqueues", true},
	{"/apis/scheduling.volcano.sh/v1beta1/queues", true},
	{"/apis/scheduling.volcano.sh/v1beta1/podgroups", true},
	{"/apis/scheduling.run.ai/v2/queues", true},
	{"/apis/scheduling.run.ai/v2alpha2/podgroups", true},
	{"/apis/scheduling.x-k8s.io/v1alpha1/podgroups", true},
	{"/api/v1/nodes", false},
	{"/api/v1/configmaps", false},
	{NULL, false},
};

static const char *const kept_kinds[] = {
	"Namespace", "ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue",
	"WorkloadPriorityClass", "Topology", "Queue", "PodGroup", NULL,
};

static bool kept(const json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	size_t i;

	for (i = 0; kind && kept_kinds[i]; i++)
		if (!strcmp(kind, kept_kinds[i]))
			return true;
	return false;
}

void wh_source(const json_t *obj, char *buf, size_t size)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const char *ns = carve_kube_ns(obj), *name = carve_kube_name(obj);

	if (!name || !*name) {
		json_t *md = json_object_get(obj, "metadata");

		name = json_string_value(json_object_get(md, "generateName"));
	}
	if (ns && *ns)
		snprintf(buf, size, "%s %s/%s", kind ? kind : "?", ns, name ? name : "");
	else
		snprintf(buf, size, "%s %s", kind ? kind : "?", name ? name : "");
}

/* Whether obj is one the inventory reads: a v1 Node or an NVIDIA ConfigMap. */
static bool inv_kind(const json_t *obj, bool *node)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));

	*node = kind && !strcmp(kind, "Node");
	if (!kind || !av || strcmp(av, "v1"))
		return false;
	return *node || (!strcmp(kind, "ConfigMap") && kube_nvidia_configmap(obj));
}

/* A copy of Node n with what the inventory reads (load_node.c): metadata's
 * name, labels and annotations, spec, status.capacity and allocatable; the
 * rest (images, conditions, managedFields) is most of a Node's size.
 * NULL when out of memory. */
static json_t *trim_node(const json_t *n)
{
	static const char *const mdk[] = {"name", "labels", "annotations", NULL};
	static const char *const stk[] = {"capacity", "allocatable", NULL};
	const json_t *md = json_object_get(n, "metadata"), *st = json_object_get(n, "status");
	json_t *t = json_pack("{s:s, s:s, s:{}}", "apiVersion", "v1", "kind", "Node", "metadata");
	json_t *tmd = json_object_get(t, "metadata"), *tst = NULL, *v;
	size_t i;

	if (!t)
		return NULL;
	for (i = 0; mdk[i]; i++)
		if ((v = json_object_get(md, mdk[i])) && json_object_set_new(tmd, mdk[i], json_deep_copy(v)))
			goto oom;
	if ((v = json_object_get(n, "spec")) && json_object_set_new(t, "spec", json_deep_copy(v)))
		goto oom;
	for (i = 0; json_is_object(st) && stk[i]; i++) {
		if (!(v = json_object_get(st, stk[i])))
			continue;
		if (!tst && (json_object_set_new(t, "status", json_object()) ||
			     !(tst = json_object_get(t, "status"))))
			goto oom;
		if (json_object_set_new(tst, stk[i], json_deep_copy(v)))
			goto oom;
	}
	return t;
oom:
	json_decref(t);
	return NULL;
}

/* Keeps a copy of obj (a Node trimmed) for the inventory.  Returns 0 or
 * CARVE_ENOMEM. */
static int keep_inv(struct wh_ctx *c, const json_t *obj, bool node)
{
	char src[600];

	wh_source(obj, src, sizeof(src));
	c->inv_objs[c->ninv] = node ? trim_node(obj) : json_deep_copy(obj);
	c->inv_srcs[c->ninv] = carve_strdup(src);
	if (!c->inv_objs[c->ninv] || !c->inv_srcs[c->ninv]) {
		json_decref(c->inv_objs[c->ninv]);
		carve_free(c->inv_srcs[c->ninv]);
		return CARVE_ENOMEM;
	}
	c->ninv++;
	return 0;
}

/* Builds the node inventory from the kept Nodes and ConfigMaps when there
 * is a Node; its load errors go to d.  Returns 0 or CARVE_ENOMEM. */
static int build_inv(struct wh_ctx *c, struct carve_diags *d)
{
	bool any_node = false, node;
	size_t i;

	for (i = 0; i < c->ninv; i++)
		if (inv_kind(c->inv_objs[i], &node) && node)
			any_node = true;
	if (!any_node)
		return 0;
	c->inv_m = carve_manifests_create();
	if (!c->inv_m)
		return CARVE_ENOMEM;
	for (i = 0; i < c->ninv; i++)
		if (carve_manifests_add_json(c->inv_m, c->inv_srcs[i], c->inv_objs[i]) == CARVE_ENOMEM)
			return CARVE_ENOMEM;
	c->inv = carve_inventory_build(c->inv_m);
	if (!c->inv)
		return CARVE_ENOMEM;
	for (i = 0; d && i < c->inv_m->diags.n; i++)
		if (c->inv_m->diags.v[i].sev == CARVE_SEV_ERROR)
			carve_diag(d, CARVE_SEV_ERROR, c->inv_m->diags.v[i].pos, "%s",
				   c->inv_m->diags.v[i].msg);
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool wh_ctx_has_base(const struct wh_ctx *c, const char *msg)
{
	return c && c->nbase &&
	       bsearch(&msg, c->base, c->nbase, sizeof(*c->base), str_cmp) != NULL;
}

static int ns_cmp(const void *a, const void *b)
{
	return strcmp(((const struct wh_ns *)a)->name, ((const struct wh_ns *)b)->name);
}

const json_t *wh_ctx_ns_labels(const struct wh_ctx *c, const char *ns)
{
	struct wh_ns key, *hit;

	if (!c || !ns || !c->nns)
		return NULL;
	key.name = ns;
	hit = bsearch(&key, c->ns, c->nns, sizeof(*c->ns), ns_cmp);
	return hit ? json_object_get(json_object_get(hit->obj, "metadata"), "labels") : NULL;
}

/* Runs carve validate over the context alone (with its inventory) and
 * keeps its messages. */
static int baseline(struct wh_ctx *c, struct carve_diags *d)
{
	struct carve_manifests *m = carve_manifests_create();
	size_t i;

	if (!m)
		return CARVE_ENOMEM;
	for (i = 0; i < c->n; i++)
		if (carve_manifests_add_json(m, c->srcs[i], c->objs[i]) == CARVE_ENOMEM)
			goto oom;
	carve_validate(m, c->inv);
	c->base = carve_calloc(m->diags.n ? m->diags.n : 1, sizeof(*c->base));
	if (!c->base)
		goto oom;
	for (i = 0; i < m->diags.n; i++) {
		const struct carve_diag *x = &m->diags.v[i];

		c->base[c->nbase] = carve_strdup(x->msg);
		if (!c->base[c->nbase])
			goto oom;
		c->nbase++;
		/* what does not load is left out of the reviews' view too */
		if (d && x->sev == CARVE_SEV_ERROR && !strcmp(carve_diag_rule(x), "invalid"))
			carve_diag(d, x->sev, x->pos, "%s", x->msg);
	}
	qsort(c->base, c->nbase, sizeof(*c->base), str_cmp);
	carve_manifests_destroy(m);
	return 0;
oom:
	carve_manifests_destroy(m);
	return CARVE_ENOMEM;
}

static void ctx_free(struct wh_ctx *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		json_decref(c->objs[i]);
		carve_free(c->srcs[i]);
	}
	for (i = 0; i < c->nbase; i++)
		carve_free(c->base[i]);
	for (i = 0; i < c->nns; i++)
		json_decref(c->ns[i].obj);
	carve_free(c->ns);
	carve_inventory_destroy(c->inv);
	carve_manifests_destroy(c->inv_m);
	for (i = 0; i < c->ninv; i++) {
		json_decref(c->inv_objs[i]);
		carve_free(c->inv_srcs[i]);
	}
	carve_free(c->inv_objs);
	carve_free(c->inv_srcs);
	carve_free(c->objs);
	carve_free(c->srcs);
	carve_free(c->base);
	carve_free(c);
}

struct wh_ctx *wh_ctx_build(json_t *const *objs, size_t n, struct carve_diags *d)
{
	struct wh_ctx *c = carve_calloc(1, sizeof(*c));
	char src[600];
	size_t i;
	bool node;

	if (!c)
		return NULL;
	atomic_init(&c->refs, 1);
	c->objs = carve_calloc(n ? n : 1, sizeof(*c->objs));
	c->srcs = carve_calloc(n ? n : 1, sizeof(*c->srcs));
	c->ns = carve_calloc(n ? n : 1, sizeof(*c->ns));
	c->inv_objs = carve_calloc(n ? n : 1, sizeof(*c->inv_objs));
	c->inv_srcs = carve_calloc(n ? n : 1, sizeof(*c->inv_srcs));
	if (!c->objs || !c->srcs || !c->ns || !c->inv_objs || !c->inv_srcs)
		goto oom;
	for (i = 0; i < n; i++) {
		if (!json_is_object(objs[i]) || (!kept(objs[i]) && !inv_kind(objs[i], &node)))
			continue;
		if (!carve_kube_name(objs[i]) || !*carve_kube_name(objs[i])) {
			if (d) {
				wh_source(objs[i], src, sizeof(src));
				carve_diag_warn(d, (struct carve_pos){0},
						"%s: metadata.name is missing; left out of the "
						"webhook's context", src);
			}
			continue;
		}
		if (!strcmp(json_string_value(json_object_get(objs[i], "kind")), "Namespace")) {
			/* carve reads no Namespace: kept apart, for their labels */
			json_t *cp = json_deep_copy(objs[i]);

			if (!cp)
				goto oom;
			c->ns[c->nns++] = (struct wh_ns){carve_kube_name(cp), cp};
			continue;
		}
		if (inv_kind(objs[i], &node)) {
			if (keep_inv(c, objs[i], node))
				goto oom;
			continue;
		}
		wh_source(objs[i], src, sizeof(src));
		c->objs[c->n] = json_deep_copy(objs[i]);
		c->srcs[c->n] = carve_strdup(src);
		if (!c->objs[c->n] || !c->srcs[c->n]) {
			json_decref(c->objs[c->n]);
			carve_free(c->srcs[c->n]);
			goto oom;
		}
		c->n++;
	}
	qsort(c->ns, c->nns, sizeof(*c->ns), ns_cmp);
	for (i = 1; i < c->nns; i++)
		if (!strcmp(c->ns[i - 1].name, c->ns[i].name) && d)
			carve_diag_warn(d, (struct carve_pos){0}, "Namespace %s is listed twice; "
					"the webhook reads the labels of one", c->ns[i].name);
	if (build_inv(c, d) || baseline(c, d))
		goto oom;
	return c;
oom:
	ctx_free(c);
	return NULL;
}

struct wh_ctx *wh_ctx_ref(struct wh_ctx *c)
{
	if (c)
		atomic_fetch_add(&c->refs, 1);
	return c;
}

void wh_ctx_unref(struct wh_ctx *c)
{
	if (c && atomic_fetch_sub(&c->refs, 1) == 1)
		ctx_free(c);
}
