/*
 * review.c - one AdmissionReview (admission.k8s.io/v1) in, its answer out
 * (webhook.h, docs/webhook.md).
 *
 * /validate: the object under review is loaded with the context's queue
 * objects into one manifest set and carve validate runs over it, so the
 * webhook says exactly what `carve validate` says of the same objects.
 * Each diagnostic's rule id (carve_diag_rule) picks its level in the
 * object's namespace: deny joins the response's status message, warn
 * becomes one of its `warnings`, off drops it.  The object answers for the
 * diagnostics at its own fields and, for a queue object, for any the
 * context alone does not give (a cycle it closes, a flavor it leaves
 * dangling).  A ResourceFlavor is validated with the context's node
 * inventory (a flavor selecting nodes that offer one name as MIG and
 * time-sliced); a device-plugin ConfigMap with the context's Nodes and
 * ResourceFlavors, so a config that would make a pool mix them is blamed
 * on it.  Pods and Jobs never build or read an inventory.  On UPDATE, a denial the oldObject already earned is only a
 * warning, so a pre-existing object can still be relabelled.
 *
 * /mutate: the namespace's opt-ins (whpolicy.c) as an RFC 6902 JSON Patch,
 * each operation also reported as a warning.
 *
 * Pure: no I/O, no clock, no globals; the policy and context are read
 * only, so any number of threads may review at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/kube.h"
#include "carve/manifest.h"
#include "carve/validate.h"
#include "trim.h"
#include "wh_int.h"

#define MSG_MAX 4096 /* status.message is cut (with "...") past this */

/* ---- small helpers ---- */

static const char *str_at(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool is_gpu_resource(const char *name)
{
	return !strncmp(name, "nvidia.com/", 11) || !strcmp(name, "amd.com/gpu") ||
	       !strncmp(name, "alibabacloud.com/gpu", 20);
}

/* The kinds a review accepts, and whether they run pods. */
static const struct {
	const char *kind;
	bool workload;
} kinds[] = {
	{"Pod", true}, {"Job", true}, {"PodGroup", false}, {"ResourceFlavor", false},
	{"ClusterQueue", false}, {"Cohort", false}, {"LocalQueue", false}, {"Queue", false},
	{"ConfigMap", false},
};

static int kind_index(const char *kind)
{
	size_t i;

	for (i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].kind, kind))
			return (int)i;
	return -1;
}

static void b64(const unsigned char *in, size_t n, char *out)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i, o = 0;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];

		out[o++] = t[v >> 18 & 63];
		out[o++] = t[v >> 12 & 63];
		out[o++] = t[v >> 6 & 63];
		out[o++] = t[v & 63];
	}
	if (i < n) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0);

		out[o++] = t[v >> 18 & 63];
		out[o++] = t[v >> 12 & 63];
		out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
		out[o++] = '=';
	}
	out[o] = '\0';
}

/* Serializes j into a malloc'd buffer (free()).  Returns 0 or CARVE_ENOMEM. */
static int dump(const json_t *j, char **out, size_t *outlen)
{
	size_t n = json_dumpb(j, NULL, 0, JSON_COMPACT);

	*out = n ? malloc(n) : NULL;
	if (!*out)
		return CARVE_ENOMEM;
	*outlen = json_dumpb(j, *out, n, JSON_COMPACT);
	return 0;
}

/* A Status (meta/v1) for a body that is no AdmissionReview: HTTP 400. */
static int bad_request(const char *msg, char **out, size_t *outlen, struct wh_outcome *o)
{
	json_t *s = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "apiVersion", "v1", "kind",
			      "Status", "metadata", "status", "Failure", "message", msg, "reason",
			      "BadRequest", "code", 400);
	int rc;

	if (!s)
		return CARVE_ENOMEM;
	rc = dump(s, out, outlen);
	json_decref(s);
	if (o)
		*o = (struct wh_outcome){.allowed = false, .rule = "bad-request"};
	return rc ? rc : 400;
}

/* ---- what validate says of one object ---- */

struct finding {
	int rule;            /* index in wh_rules */
	const char *msg;     /* owned by the review's manifest set */
};

struct findings {
	struct carve_manifests *m;
	size_t n;
	struct finding *v;
};

static void findings_free(struct findings *f)
{
	carve_manifests_destroy(f->m);
	carve_free(f->v);
	memset(f, 0, sizeof(*f));
}

static bool has_key(const json_t *o, const char *k)
{
	return json_object_get(o, k) != NULL;
}

/* True when a Job's pods are ganged by some convention carve reads
 * (docs/kubernetes.md "Gangs"): Kueue's queue label on the Job or its
 * template, Kueue plain pod groups, Volcano, KAI, coscheduling. */
static bool job_ganged(const json_t *job)
{
	const json_t *jl = json_object_get(json_object_get(job, "metadata"), "labels");
	const json_t *tm = json_object_get(json_object_get(json_object_get(job, "spec"),
							   "template"), "metadata");
	const json_t *tl = json_object_get(tm, "labels"), *ta = json_object_get(tm, "annotations");

	return has_key(jl, "kueue.x-k8s.io/queue-name") || has_key(tl, "kueue.x-k8s.io/queue-name") ||
	       has_key(tl, "kueue.x-k8s.io/pod-group-name") ||
	       has_key(tl, "scheduling.x-k8s.io/pod-group") ||
	       has_key(tl, "pod-group.scheduling.sigs.k8s.io") ||
	       has_key(ta, "scheduling.k8s.io/group-name") || has_key(ta, "pod-group-name");
}

static bool same_identity(const json_t *a, const json_t *b)
{
	const char *ka = str_at(a, "kind"), *kb = str_at(b, "kind");
	const char *na = carve_kube_name(a), *nb = carve_kube_name(b);
	const char *sa = carve_kube_ns(a), *sb = carve_kube_ns(b);

	return ka && kb && na && nb && !strcmp(ka, kb) && !strcmp(na, nb) &&
	       !strcmp(sa ? sa : "", sb ? sb : "");
}

static bool kind_is(const json_t *o, const char *kind)
{
	const char *k = str_at(o, "kind");

	return k && !strcmp(k, kind);
}

static bool name_is(const json_t *o, const char *name)
{
	const char *n = carve_kube_name(o);

	return n && name && !strcmp(n, name);
}

/*
 * What a Pod or Job's checks read of the context: its LocalQueue (the
 * kueue.x-k8s.io/queue-name label, in its namespace), that queue's
 * ClusterQueue, the ResourceFlavors it names, and every
 * WorkloadPriorityClass.  Loading only these keeps a review's cost
 * independent of the number of queues in the cluster; what the other queue
 * objects would say is not the Pod's to answer for anyway.
 */
static int add_ctx_for_workload(struct carve_manifests *m, const struct wh_ctx *ctx,
				const json_t *obj)
{
	const char *ns = carve_kube_ns(obj), *cq = NULL;
	const char *q = str_at(json_object_get(json_object_get(obj, "metadata"), "labels"),
			       "kueue.x-k8s.io/queue-name");
	const json_t *cqo = NULL;
	size_t i;

	for (i = 0; ctx && i < ctx->n; i++) {
		const json_t *o = ctx->objs[i];
		bool want = kind_is(o, "WorkloadPriorityClass");

		if (q && kind_is(o, "LocalQueue") && name_is(o, q) && carve_kube_ns(o) && ns &&
		    !strcmp(carve_kube_ns(o), ns)) {
			want = true;
			cq = str_at(json_object_get(o, "spec"), "clusterQueue");
		}
		if (want && carve_manifests_add_json(m, ctx->srcs[i], o) == CARVE_ENOMEM)
			return CARVE_ENOMEM;
	}
	for (i = 0; cq && i < ctx->n; i++)
		if (kind_is(ctx->objs[i], "ClusterQueue") && name_is(ctx->objs[i], cq)) {
			cqo = ctx->objs[i];
			if (carve_manifests_add_json(m, ctx->srcs[i], cqo) == CARVE_ENOMEM)
				return CARVE_ENOMEM;
		}
	for (i = 0; cqo && i < ctx->n; i++) {
		const json_t *groups = json_object_get(json_object_get(cqo, "spec"), "resourceGroups");
		size_t g, f;
		bool named = false;

		if (!kind_is(ctx->objs[i], "ResourceFlavor"))
			continue;
		for (g = 0; g < json_array_size(groups) && !named; g++) {
			const json_t *fl = json_object_get(json_array_get(groups, g), "flavors");

			for (f = 0; f < json_array_size(fl) && !named; f++)
				named = name_is(ctx->objs[i],
						str_at(json_array_get(fl, f), "name"));
		}
		if (named && carve_manifests_add_json(m, ctx->srcs[i], ctx->objs[i]) == CARVE_ENOMEM)
			return CARVE_ENOMEM;
	}
	return 0;
}

/*
 * A device-plugin ConfigMap: loads it with the context's Nodes, other
 * NVIDIA ConfigMaps (not the context's copy of obj) and ResourceFlavors
 * into f->m, builds that inventory and validates.  Returns 0 or
 * CARVE_ENOMEM.
 */
static int configmap_findings(const struct wh_ctx *ctx, const json_t *obj, const char *src,
			      struct findings *f)
{
	struct carve_inventory *inv;
	size_t i;

	for (i = 0; ctx && i < ctx->ninv; i++) {
		if (same_identity(ctx->inv_objs[i], obj))
			continue;
		if (carve_manifests_add_json(f->m, ctx->inv_srcs[i], ctx->inv_objs[i]) == CARVE_ENOMEM)
			return CARVE_ENOMEM;
	}
	for (i = 0; ctx && i < ctx->n; i++)
		if (kind_is(ctx->objs[i], "ResourceFlavor") &&
		    carve_manifests_add_json(f->m, ctx->srcs[i], ctx->objs[i]) == CARVE_ENOMEM)
			return CARVE_ENOMEM;
	if (carve_manifests_add_json(f->m, src, obj) == CARVE_ENOMEM)
		return CARVE_ENOMEM;
	inv = carve_inventory_build(f->m);
	if (!inv)
		return CARVE_ENOMEM;
	carve_validate(f->m, inv);
	carve_inventory_destroy(inv);
	return 0;
}

/*
 * Loads obj (named src) with the context, skipping the context's copy of
 * obj itself when replacing (UPDATE), runs carve validate and keeps what
 * obj answers for.  Returns 0 or CARVE_ENOMEM.
 */
static int findings_of(const struct wh_ctx *ctx, const json_t *obj, const char *src,
		       bool workload, bool replacing, struct findings *f)
{
	bool ganged = !strcmp(str_at(obj, "kind"), "Job") && job_ganged(obj);
	bool cm = kind_is(obj, "ConfigMap");
	size_t i;

	memset(f, 0, sizeof(*f));
	f->m = carve_manifests_create();
	if (!f->m)
		return CARVE_ENOMEM;
	if (cm) {
		if (configmap_findings(ctx, obj, src, f))
			return CARVE_ENOMEM;
	} else {
		if (workload && add_ctx_for_workload(f->m, ctx, obj))
			return CARVE_ENOMEM;
		for (i = 0; !workload && ctx && i < ctx->n; i++) {
			if (replacing && same_identity(ctx->objs[i], obj))
				continue;
			if (carve_manifests_add_json(f->m, ctx->srcs[i], ctx->objs[i]) == CARVE_ENOMEM)
				return CARVE_ENOMEM;
		}
		if (carve_manifests_add_json(f->m, src, obj) == CARVE_ENOMEM)
			return CARVE_ENOMEM;
		/* only a flavor's checks read nodes; the baseline has them too */
		carve_validate(f->m, ctx && kind_is(obj, "ResourceFlavor") ? ctx->inv : NULL);
	}
	f->v = carve_calloc(f->m->diags.n ? f->m->diags.n : 1, sizeof(*f->v));
	if (!f->v)
		return CARVE_ENOMEM;
	for (i = 0; i < f->m->diags.n; i++) {
		const struct carve_diag *x = &f->m->diags.v[i];
		const char *rule = carve_diag_rule(x);
		bool own = x->pos.file && !strcmp(x->pos.file, src);
		int r;

		if (!own && (workload || wh_ctx_has_base(ctx, x->msg)))
			continue;
		/* a ConfigMap answers for itself and for the mixes it makes; the
		 * Nodes' own problems (a label, another config) are not its own */
		if (!own && cm && strcmp(rule, "mig-timeslice-mix"))
			continue;
		if (!strcmp(rule, "gang") && ganged)
			continue; /* carve reads more gang conventions than validate's lint */
		if (!strcmp(rule, "invalid") && x->sev != CARVE_SEV_ERROR)
			rule = "lint"; /* a loader's warning does not make the object invalid */
		r = wh_rule_index(rule);
		f->v[f->n++] = (struct finding){r >= 0 ? r : wh_rule_index("other"), x->msg};
	}
	return 0;
}

static bool findings_have(const struct findings *f, const char *msg)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].msg, msg))
			return true;
	return false;
}

/* ---- the answer ---- */

struct answer {
	json_t *warnings;    /* array */
	char msg[MSG_MAX];   /* denial message */
	size_t mlen;
	bool denied;
	int code;
	const char *rule;    /* first denying rule */
};

static void deny(struct answer *a, int code, const char *rule, const char *fmt, const char *x,
		 const char *y)
{
	int n;

	if (a->mlen + 3 >= sizeof(a->msg))
		return;
	if (a->mlen) {
		memcpy(a->msg + a->mlen, "; ", 2);
		a->mlen += 2;
	}
	n = snprintf(a->msg + a->mlen, sizeof(a->msg) - a->mlen, fmt, x, y);
	if (n < 0)
		n = 0;
	a->mlen += (size_t)n;
	if (a->mlen >= sizeof(a->msg)) {
		a->mlen = sizeof(a->msg) - 1;
		memcpy(a->msg + a->mlen - 3, "...", 3);
	}
	if (!a->denied) {
		a->denied = true;
		a->code = code;
		a->rule = rule;
	}
}

static int warn(struct answer *a, const char *fmt, const char *x, const char *y)
{
	char buf[1200];

	snprintf(buf, sizeof(buf), fmt, x, y);
	return json_array_append_new(a->warnings, json_string(buf)) ? CARVE_ENOMEM : 0;
}

/* Validates obj into a.  Returns 0 or CARVE_ENOMEM. */
static int validate(const struct wh_policy *pol, const struct wh_ctx *ctx, const json_t *req,
		    const json_t *obj, const char *src, const char *ns, bool workload, struct answer *a)
{
	const char *op = str_at(req, "operation");
	const json_t *old = json_object_get(req, "oldObject");
	bool update = op && !strcmp(op, "UPDATE");
	struct findings f, fo = {0};
	size_t i;
	int rc;

	rc = findings_of(ctx, obj, src, workload, update, &f);
	if (!rc && update && json_is_object(old) && json_object_get(old, "kind"))
		rc = findings_of(ctx, old, src, workload, true, &fo);
	for (i = 0; !rc && i < f.n; i++) {
		const char *id = wh_rules[f.v[i].rule].id;
		enum wh_level lv = wh_policy_level(pol, ns, wh_ctx_ns_labels(ctx, ns), f.v[i].rule);

		if (lv == WH_DENY && fo.m && findings_have(&fo, f.v[i].msg))
			lv = WH_WARN; /* the object had it before this update */
		if (lv == WH_DENY)
			deny(a, !strcmp(id, "invalid") ? 400 : 403, wh_rules[f.v[i].rule].id,
			     "%s [carve rule %s]", f.v[i].msg, id);
		else if (lv == WH_WARN)
			rc = warn(a, "%s [carve rule %s]", f.v[i].msg, id);
	}
	findings_free(&f);
	findings_free(&fo);
	return rc;
}

/* ---- mutations ---- */

struct patcher {
	json_t *ops;   /* the JSON Patch */
	json_t *work;  /* obj with the patch applied so far */
	struct answer *a;
};

/* RFC 6901: "~" as "~0", "/" as "~1". */
static void ptr_append(char *path, size_t size, const char *key)
{
	size_t n = strlen(path);

	if (n + 1 < size)
		path[n++] = '/';
	for (; *key && n + 2 < size; key++) {
		if (*key == '~' || *key == '/') {
			path[n++] = '~';
			path[n++] = *key == '~' ? '0' : '1';
		} else {
			path[n++] = *key;
		}
	}
	path[n] = '\0';
}

/* Adds {"op":"add","path":path,"value":v} (v stolen) and applies it to the
 * working copy at parent[key]. */
static int op_add(struct patcher *p, json_t *parent, const char *path, const char *key, json_t *v,
		  const char *why)
{
	json_t *op;

	if (!v)
		return CARVE_ENOMEM;
	op = json_pack("{s:s, s:s, s:o}", "op", "add", "path", path, "value", json_deep_copy(v));
	if (!op || json_array_append_new(p->ops, op) || json_object_set_new(parent, key, v)) {
		return CARVE_ENOMEM;
	}
	if (why) {
		char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		char what[600];
		int rc;

		snprintf(what, sizeof(what), "%s to %s", path, text ? text : "?");
		free(text);
		rc = warn(p->a, "carve webhook set %s (%s)", what, why);
		if (rc)
			return rc;
	}
	return 0;
}

/* The object at path (keys from the working copy's root, NULL-terminated),
 * created as {} with add operations where missing; NULL on ENOMEM or when
 * something on the way is not an object. */
static json_t *jget(json_t *o, const char *k);

static json_t *ensure(struct patcher *p, const char *const *keys, char *path, size_t size)
{
	json_t *cur = p->work;
	size_t i;

	path[0] = '\0';
	for (i = 0; keys[i]; i++) {
		json_t *next = jget(cur, keys[i]);

		ptr_append(path, size, keys[i]);
		if (!next) {
			if (!json_is_object(cur) || op_add(p, cur, path, keys[i], json_object(), NULL))
				return NULL;
			next = json_object_get(cur, keys[i]);
		}
		if (!json_is_object(next) && !json_is_array(next))
			return NULL;
		cur = next;
	}
	return json_is_object(cur) ? cur : NULL;
}

/* Sets map[key] = value under the object at keys (created when missing). */
static int set_entry(struct patcher *p, const char *const *keys, const char *key, json_t *value,
		     const char *why)
{
	char path[1024];
	json_t *m = ensure(p, keys, path, sizeof(path));

	if (!m) {
		json_decref(value);
		return 0; /* a field of the wrong type: the validation says so */
	}
	ptr_append(path, sizeof(path), key);
	return op_add(p, m, path, key, value, why);
}

static int mutate_limits(struct patcher *p, const char *const *spec, size_t nspec)
{
	static const char *const lists[] = {"containers", "initContainers"};
	const char *keys[12];
	size_t l, c, k;
	char idx[24];
	int rc;

	for (k = 0; k < nspec; k++)
		keys[k] = spec[k];
	for (l = 0; l < 2; l++) {
		json_t *podspec = p->work;
		json_t *arr;

		for (k = 0; k < nspec; k++)
			podspec = json_object_get(podspec, spec[k]);
		arr = json_object_get(podspec, lists[l]);
		for (c = 0; c < json_array_size(arr); c++) {
			json_t *res = json_object_get(json_array_get(arr, c), "resources");
			json_t *req = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
			const char *name;
			json_t *q;

			if (!json_is_object(req))
				continue;
			json_object_foreach(req, name, q) {
				if (!is_gpu_resource(name) || json_object_get(lim, name))
					continue;
				snprintf(idx, sizeof(idx), "%zu", c);
				keys[nspec] = lists[l];
				keys[nspec + 1] = idx;
				keys[nspec + 2] = "resources";
				keys[nspec + 3] = "limits";
				keys[nspec + 4] = NULL;
				rc = set_entry(p, keys, name, json_deep_copy(q), "gpu-limits: a GPU limit equals its request");
				if (rc)
					return rc;
				lim = json_object_get(res, "limits");
			}
		}
	}
	return 0;
}

/* o[k]: a member of an object, or the item of an array k indexes. */
static json_t *jget(json_t *o, const char *k)
{
	if (json_is_array(o)) {
		char *end;
		unsigned long i = strtoul(k, &end, 10);

		return *end ? NULL : json_array_get(o, i);
	}
	return json_object_get(o, k);
}

static bool wants_gpu(const json_t *podspec)
{
	static const char *const lists[] = {"containers", "initContainers"};
	size_t l, c;

	for (l = 0; l < 2; l++) {
		const json_t *arr = json_object_get(podspec, lists[l]);

		for (c = 0; c < json_array_size(arr); c++) {
			const json_t *res = json_object_get(json_array_get(arr, c), "resources");
			const char *side[] = {"requests", "limits"}, *name;
			json_t *q;
			int s;

			for (s = 0; s < 2; s++)
				json_object_foreach(json_object_get(res, side[s]), name, q)
					if (is_gpu_resource(name) && strcmp(json_string_value(q) ?
									    json_string_value(q) : "", "0"))
						return true;
		}
	}
	return false;
}

static int64_t job_pods(const json_t *job)
{
	const json_t *spec = json_object_get(job, "spec");
	const json_t *p = json_object_get(spec, "parallelism"), *c = json_object_get(spec, "completions");
	json_int_t par = json_is_integer(p) ? json_integer_value(p) : 1;
	json_int_t com = json_is_integer(c) ? json_integer_value(c) : par;

	return com < par ? com : par;
}

static int mutate(const struct wh_policy *pol, const struct wh_ctx *ctx, const json_t *obj,
		  const char *ns, bool is_job, struct answer *a, json_t **patch)
{
	struct wh_mutations w = wh_policy_mutations(pol, ns, wh_ctx_ns_labels(ctx, ns));
	static const char *const job_spec[] = {"spec", "template", "spec"};
	static const char *const pod_spec[] = {"spec"};
	struct patcher p = {json_array(), json_deep_copy(obj), a};
	int rc = 0;

	*patch = NULL;
	if (!p.ops || !p.work) {
		json_decref(p.ops);
		json_decref(p.work);
		return CARVE_ENOMEM;
	}
	if (w.queue && !json_object_get(json_object_get(json_object_get(p.work, "metadata"),
							 "labels"), "kueue.x-k8s.io/queue-name")) {
		static const char *const k[] = {"metadata", "labels", NULL};

		rc = set_entry(&p, k, "kueue.x-k8s.io/queue-name", json_string(w.queue),
			       "the namespace's default LocalQueue");
	}
	if (!rc && w.gpu_limits)
		rc = mutate_limits(&p, is_job ? job_spec : pod_spec, is_job ? 3 : 1);
	if (!rc && w.gang && is_job && job_pods(p.work) > 1 && !job_ganged(p.work) &&
	    wants_gpu(json_object_get(json_object_get(json_object_get(p.work, "spec"), "template"),
				      "spec"))) {
		static const char *const lk[] = {"spec", "template", "metadata", "labels", NULL};
		static const char *const ak[] = {"spec", "template", "metadata", "annotations", NULL};
		static const char *const sk[] = {"spec", "template", "spec", NULL};
		const char *name = carve_kube_name(p.work);
		char count[32];

		if (!name || !*name) {
			rc = warn(a, "carve webhook cannot gang Job %s%s: it has no metadata.name yet "
				  "(generateName), so its pods cannot name their group",
				  str_at(json_object_get(obj, "metadata"), "generateName") ?
				  str_at(json_object_get(obj, "metadata"), "generateName") : "?", "");
		} else {
			snprintf(count, sizeof(count), "%lld", (long long)job_pods(p.work));
			rc = set_entry(&p, lk, "kueue.x-k8s.io/pod-group-name", json_string(name),
				       "gang: the Job's pods are one gang");
			if (!rc)
				rc = set_entry(&p, ak, "kueue.x-k8s.io/pod-group-total-count",
					       json_string(count), "gang: the gang's size");
			if (!rc)
				rc = set_entry(&p, sk, "schedulerName", json_string("carve"),
					       "gang: carve schedules gangs");
		}
	}
	json_decref(p.work);
	if (rc || !json_array_size(p.ops)) {
		json_decref(p.ops);
		return rc;
	}
	*patch = p.ops;
	return 0;
}

/* ---- the review ---- */

static int respond(const char *uid, struct answer *a, json_t *patch, char **out, size_t *outlen,
		   struct wh_outcome *o)
{
	json_t *resp = json_pack("{s:s, s:b}", "uid", uid, "allowed", !a->denied);
	json_t *rev = NULL;
	int rc = CARVE_ENOMEM;

	if (!resp)
		goto done;
	if (a->denied &&
	    json_object_set_new(resp, "status", json_pack("{s:i, s:s%}", "code", a->code, "message",
							 a->msg, a->mlen)))
		goto done;
	if (json_array_size(a->warnings) && json_object_set(resp, "warnings", a->warnings))
		goto done;
	if (patch && !a->denied) {
		char *txt = json_dumps(patch, JSON_COMPACT);
		char *enc = txt ? malloc(4 * (strlen(txt) / 3 + 1) + 1) : NULL;

		if (enc)
			b64((const unsigned char *)txt, strlen(txt), enc);
		free(txt);
		if (!enc || json_object_set_new(resp, "patchType", json_string("JSONPatch")) ||
		    json_object_set_new(resp, "patch", json_string(enc))) {
			free(enc);
			goto done;
		}
		free(enc);
	}
	rev = json_pack("{s:s, s:s, s:O}", "apiVersion", "admission.k8s.io/v1", "kind",
			"AdmissionReview", "response", resp);
	if (!rev)
		goto done;
	rc = dump(rev, out, outlen);
	if (!rc) {
		rc = 200;
		if (o)
			*o = (struct wh_outcome){!a->denied, (int)json_array_size(a->warnings),
						 a->denied ? 0 : (int)json_array_size(patch), a->rule};
	}
done:
	json_decref(resp);
	json_decref(rev);
	return rc;
}

int wh_review(const struct wh_policy *pol, const struct wh_ctx *ctx, bool mutate_req,
	      const char *body, size_t len, char **out, size_t *outlen, struct wh_outcome *o)
{
	struct answer a = {0};
	json_error_t err;
	json_t *doc, *req, *obj, *copy = NULL, *patch = NULL;
	const char *uid, *op, *kind, *ns, *sub;
	char msg[512], src[600];
	int rc = 0, ki;

	*out = NULL;
	*outlen = 0;
	doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &err);
	if (!doc) {
		snprintf(msg, sizeof(msg), "the request body is not JSON: %s (line %d, column %d)",
			 err.text, err.line, err.column);
		return bad_request(msg, out, outlen, o);
	}
	if (!json_is_object(doc) || !str_at(doc, "apiVersion") ||
	    strcmp(str_at(doc, "apiVersion"), "admission.k8s.io/v1") || !str_at(doc, "kind") ||
	    strcmp(str_at(doc, "kind"), "AdmissionReview")) {
		json_decref(doc);
		return bad_request("the request body is not an admission.k8s.io/v1 AdmissionReview "
				   "(apiVersion and kind)", out, outlen, o);
	}
	req = json_object_get(doc, "request");
	uid = str_at(req, "uid");
	if (!json_is_object(req) || !uid || !*uid) {
		bool has_req = json_is_object(req);

		json_decref(doc);
		return bad_request(has_req ? "the AdmissionReview has no request.uid"
				   : "the AdmissionReview has no request", out, outlen, o);
	}
	a.warnings = json_array();
	if (!a.warnings) {
		json_decref(doc);
		return CARVE_ENOMEM;
	}
	op = str_at(req, "operation");
	sub = str_at(req, "subResource");
	obj = json_object_get(req, "object");
	kind = json_is_object(obj) ? str_at(obj, "kind") : NULL;
	ki = kind_index(kind);
	if ((op && (!strcmp(op, "DELETE") || !strcmp(op, "CONNECT"))) || (sub && *sub)) {
		/* nothing to check: deletions, connections, status and scale */
	} else if (!json_is_object(obj)) {
		deny(&a, 400, "invalid", "request.object is %s%s",
		     !obj || json_is_null(obj) ? "missing" : "not an object", "");
	} else if (ki < 0) {
		deny(&a, 400, "invalid", "kind %s%s is not one that carve's webhook reviews (Pod, Job, "
		     "PodGroup, ResourceFlavor, ClusterQueue, Cohort, LocalQueue, Queue, ConfigMap)",
		     kind ? kind : "(missing: request.object.kind)", "");
	} else {
		ns = carve_kube_ns(obj);
		if ((!ns || !*ns) && str_at(req, "namespace") && *str_at(req, "namespace")) {
			/* on CREATE the API server may leave the namespace to the request */
			copy = json_deep_copy(obj);
			if (!copy || json_object_set_new(json_object_get(copy, "metadata") ?
							 json_object_get(copy, "metadata") : copy,
							 json_object_get(copy, "metadata") ? "namespace" :
							 "metadata", json_object_get(copy, "metadata") ?
							 json_string(str_at(req, "namespace")) :
							 json_pack("{s:s}", "namespace",
								   str_at(req, "namespace"))))
				rc = CARVE_ENOMEM;
			obj = copy;
			ns = carve_kube_ns(obj);
		}
		if (!rc) {
			const char *av = str_at(obj, "apiVersion");
			bool job = !strcmp(kind, "Job") && av && !strcmp(av, "batch/v1");
			bool pod = !strcmp(kind, "Pod") && av && !strcmp(av, "v1");

			wh_source(obj, src, sizeof(src));
			/* mutations know the pod template of Pods and batch/v1 Jobs
			 * only; other kinds are allowed unchanged */
			if (mutate_req && (job || pod))
				rc = mutate(pol, ctx, obj, ns, job, &a, &patch);
			else if (!mutate_req && !strcmp(kind, "ConfigMap") &&
				 (!av || strcmp(av, "v1") || !kube_nvidia_configmap(obj)))
				; /* no device-plugin or mig-parted config: nothing carve reads */
			else if (!mutate_req)
				rc = validate(pol, ctx, req, obj, src, ns, kinds[ki].workload, &a);
		}
	}
	if (!rc)
		rc = respond(uid, &a, patch, out, outlen, o);
	json_decref(patch);
	json_decref(copy);
	json_decref(a.warnings);
	json_decref(doc);
	return rc;
}
