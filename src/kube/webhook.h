/*
 * webhook.h - `carve webhook`'s parts inside src/kube (private prefix
 * wh_), docs/webhook.md:
 *   review.c    one AdmissionReview (admission.k8s.io/v1) in, its answer
 *               out: validation rules with their levels, mutations as a
 *               JSON Patch.  Pure: no I/O, no clock, no globals; safe to
 *               call from many threads at once.
 *   whpolicy.c  the policy: each rule's level (deny, warn, off) by
 *               default and per namespace, which mutations a namespace
 *               opts into, its default LocalQueue.  From a YAML file
 *               (carve.dev/v1alpha1 WebhookPolicy) and Namespace labels.
 *   whctx.c     the cluster context the cross-object checks read:
 *               Namespaces, Kueue/carve queue objects (ResourceFlavor,
 *               ClusterQueue, Cohort, LocalQueue), PodGroups, and the node
 *               inventory (Nodes, device-plugin ConfigMaps); built from
 *               API objects (the server's reflectors) into an immutable,
 *               reference-counted value the reviews share.
 *   webhook.c   the HTTPS server (libmicrohttpd, GnuTLS; certificate and
 *               key reloaded when their files change), body and time
 *               limits, the reflectors that rebuild the context, /metrics,
 *               /healthz, /readyz.
 */
#ifndef CARVE_KUBE_WEBHOOK_H
#define CARVE_KUBE_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "carve/carve.h"
#include "carve/diag.h"

/* A rule's level in a namespace. */
enum wh_level { WH_OFF = 0, WH_WARN = 1, WH_DENY = 2 };

/* ---- policy (whpolicy.c) ---- */

struct wh_policy;

/*
 * Reads the policy file at path, or the embedded defaults when path is
 * NULL.  Errors go to d with the file, line and field (an unknown rule
 * name, a level that is not deny|warn|off ...).  Returns 0, CARVE_EPARSE
 * (d says why), CARVE_EIO, CARVE_ENOMEM; *out is NULL on error.  The
 * diagnostics' file name is path itself: keep it while d is used.
 */
int wh_policy_load(const char *path, struct wh_policy **out, struct carve_diags *d);
void wh_policy_free(struct wh_policy *p);

/* ---- cluster context (whctx.c) ---- */

struct wh_ctx;

/*
 * Builds a context from API objects (borrowed; any kind: those the
 * context does not keep are skipped).  n == 0 gives the empty context
 * (no namespaces known, no queue objects).  Objects that do not load are
 * left out with a diagnostic in d (may be NULL).  Returns NULL only when
 * out of memory.  The result has one reference.
 */
struct wh_ctx *wh_ctx_build(json_t *const *objs, size_t n, struct carve_diags *d);
struct wh_ctx *wh_ctx_ref(struct wh_ctx *c);
/* Drops one reference; the last frees.  NULL is a no-op.  Thread-safe. */
void wh_ctx_unref(struct wh_ctx *c);

/* One API resource the context is built from, for the server's reflectors. */
struct wh_ctx_resource {
	const char *path;     /* collection path: "/api/v1/namespaces", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues" */
	bool optional;        /* a CRD that may be missing (404 is not an error) */
};
/* The resources wh_ctx_build() reads, terminated by { NULL }. */
extern const struct wh_ctx_resource wh_ctx_resources[];

/* ---- one review (review.c) ---- */

/* What a review answered, for metrics and logs. */
struct wh_outcome {
	bool allowed;
	int nwarnings;
	int npatches;          /* JSON Patch operations */
	const char *rule;      /* the first denying rule, or NULL (static string) */
};

/*
 * Answers one request body sent to /validate (mutate false) or /mutate
 * (mutate true).  Always produces a body: *out (malloc'd, caller frees,
 * *outlen bytes, JSON) and returns the HTTP status to send:
 *  200 with an AdmissionReview response (uid echoed, allowed or denied
 *      with status {code, message}, warnings, patchType and base64 patch)
 *      whenever the body is an AdmissionReview with a request.uid, even
 *      when the object inside is malformed (denied: code 400, the message
 *      names the field); a rule at level deny gives code 403, its message
 *      the diagnostics joined by "; ", each ending "[carve rule ID]"
 *      (docs/webhook.md);
 *  400 with a JSON Status naming what is wrong when the body is not JSON,
 *      not admission.k8s.io/v1 AdmissionReview, or has no request.uid.
 * ctx and pol are borrowed (NULL ctx: the empty context; NULL pol: the
 * embedded defaults).  o may be NULL.  Returns a negative carve error code
 * only when out of memory (then *out is NULL).
 */
int wh_review(const struct wh_policy *pol, const struct wh_ctx *ctx, bool mutate,
	      const char *body, size_t len, char **out, size_t *outlen, struct wh_outcome *o);

#endif
