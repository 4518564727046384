/*
 * wh_int.h - names private to the webhook's review logic (review.c,
 * whpolicy.c, whctx.c): the rule table, the policy's lookups and the
 * context's layout.  Nothing here is for the server (webhook.h is).
 */
#ifndef CARVE_KUBE_WH_INT_H
#define CARVE_KUBE_WH_INT_H

#include <stdatomic.h>

#include "carve/inventory.h"
#include "webhook.h"

/* One rule the webhook enforces: its id (the diagnostics' carve_diag_rule),
 * its level when no policy says otherwise, and what triggers it. */
struct wh_rule {
	const char *id;
	enum wh_level def;
	const char *what;
};

/* Every rule, in docs/webhook.md's order; WH_NRULES entries. */
extern const struct wh_rule wh_rules[];
#define WH_NRULES 18

/* Index of rule id in wh_rules, or -1. */
int wh_rule_index(const char *id);

/* What a namespace opted into at /mutate. */
struct wh_mutations {
	bool gang;           /* gang labels and schedulerName on multi-pod GPU Jobs */
	bool gpu_limits;     /* a GPU request without a limit gets the equal limit */
	const char *queue;   /* default LocalQueue (kueue.x-k8s.io/queue-name), or NULL */
};

/*
 * The level of rule index r in namespace ns (NULL: cluster-scoped) whose
 * Namespace carries labels (may be NULL): the policy file's entry for ns,
 * else the label webhook.carve.dev/RULE, else spec.rules, else the
 * default.  A label value that is not deny|warn|off is ignored.
 */
enum wh_level wh_policy_level(const struct wh_policy *p, const char *ns, const json_t *labels,
			      int r);
/* The mutations namespace ns opted into, in the same order (labels
 * webhook.carve.dev/mutate-gang, mutate-gpu-limits: "true"|"false",
 * default-queue); strings borrowed from p or labels. */
struct wh_mutations wh_policy_mutations(const struct wh_policy *p, const char *ns,
					const json_t *labels);

/* The context: immutable after wh_ctx_build but for refs. */
struct wh_ctx {
	atomic_int refs;
	size_t n;
	json_t **objs;      /* owned copies of the kept objects */
	char **srcs;        /* "Kind ns/name" per object (diagnostics' file) */
	size_t nbase;
	char **base;        /* sorted messages carve validate gives the context alone */
	size_t nns;
	struct wh_ns {
		const char *name;   /* borrowed from labels' owner below */
		json_t *obj;        /* owned copy of the Namespace */
	} *ns;              /* Namespaces, sorted by name */
	/* The node inventory (mig-timeslice-mix): v1 Nodes trimmed to what
	 * the inventory reads, and the ConfigMaps that hold a device-plugin
	 * or mig-parted config.  inv is NULL when there is no Node. */
	size_t ninv;
	json_t **inv_objs;  /* owned copies */
	char **inv_srcs;    /* "Kind ns/name" per object */
	struct carve_manifests *inv_m; /* what inv was built from (owns its names) */
	struct carve_inventory *inv;
};

/* metadata.labels of Namespace ns in c, or NULL (unknown namespace, NULL c). */
const json_t *wh_ctx_ns_labels(const struct wh_ctx *c, const char *ns);

/* True when msg is one of the context's own diagnostics. */
bool wh_ctx_has_base(const struct wh_ctx *c, const char *msg);

/* "Kind ns/name" or "Kind name" for an object, into buf. */
void wh_source(const json_t *obj, char *buf, size_t size);

#endif
