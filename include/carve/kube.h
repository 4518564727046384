/*
 * kube.h - a Kubernetes API client for carve's drivers (the scheduler
 * now; the webhook and the node agent later): connection settings from a
 * kubeconfig or the pod's service account, JSON requests with retries and
 * client-side rate limits, list-then-watch reflectors feeding one event
 * queue, an object store, and Lease-based leader election.
 * libcurl (HTTP/1.1 keep-alive, TLS) and jansson; src/kube.
 *
 * Threads: a struct carve_kube may be used by several threads at once
 * (each thread gets its own curl handle, kept for keep-alive; the rate
 * limiter is shared).  A reflector runs in its own thread and only pushes
 * events into its queue; the store is owned by the thread that drains the
 * queue.  Ownership follows carve.h; json_t references handed out are
 * new references the receiver json_decref()s unless said otherwise.
 */
#ifndef CARVE_KUBE_H
#define CARVE_KUBE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "carve/carve.h"

/* ---- connection settings ---- */

struct carve_kube_config {
	char *server;        /* "https://10.0.0.1:6443" (no trailing '/') */
	char *ca_file;       /* PEM file, or NULL */
	char *ca_data;       /* PEM bytes (certificate-authority-data decoded), or NULL */
	char *cert_file, *cert_data; /* client certificate (PEM), or NULL */
	char *key_file, *key_data;   /* its key (PEM), or NULL */
	char *token;         /* bearer token, or NULL */
	char *token_file;    /* re-read when its mtime changes (in-cluster:
			      * the service-account token rotates), or NULL */
	bool insecure;       /* insecure-skip-tls-verify */
	char *ns;            /* the context's namespace, in-cluster the pod's;
			      * "default" when none */
	char *source;        /* where it came from, for messages:
			      * "/home/u/.kube/config (context kind)" or "in-cluster" */
	double qps;          /* client-side rate limit; <= 0: unlimited */
	int burst;           /* token bucket size (>= 1 when qps > 0) */
	char *user_agent;    /* NULL: "carve/<version>" */
};

/*
 * Fills *out the way client-go's loading rules do: `kubeconfig` when not
 * NULL, else $KUBECONFIG (the first existing file of its ':'-separated
 * list), else in-cluster when $KUBERNETES_SERVICE_HOST is set (server
 * https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, token file,
 * CA and namespace from /var/run/secrets/kubernetes.io/serviceaccount, or
 * from $CARVE_SA_DIR for tests), else ~/.kube/config.  `context` NULL
 * means current-context.  qps/burst default to 50/100.  Returns 0;
 * CARVE_ENOTFOUND (no configuration anywhere), CARVE_EPARSE (err names
 * the file, line and field: a missing cluster, user or server, bad
 * base64 ...), CARVE_EIO, CARVE_ENOMEM.  Free with
 * carve_kube_config_free(); on error *out holds nothing.
 */
int carve_kube_config_load(const char *kubeconfig, const char *context,
			   struct carve_kube_config *out, struct carve_error *err);
void carve_kube_config_free(struct carve_kube_config *c);

/* ---- the client ---- */

struct carve_kube;

/*
 * A client for c (copied).  NULL on a bad setting (err says which) or
 * allocation failure.  No request is sent.
 */
struct carve_kube *carve_kube_create(const struct carve_kube_config *c, struct carve_error *err);
void carve_kube_destroy(struct carve_kube *k);

/* Retry policy for requests (zeroed struct: the defaults). */
struct carve_kube_retry {
	int max_attempts;    /* 0: 5 */
	int base_ms;         /* first backoff; 0: 200 ms, doubled per attempt,
			      * full jitter, capped at cap_ms (0: 10 s) */
	int cap_ms;
	int timeout_ms;      /* per attempt; 0: 30 s */
};
void carve_kube_set_retry(struct carve_kube *k, const struct carve_kube_retry *r);

/*
 * One request: method "GET", "POST", "PUT", "PATCH", "DELETE"; path
 * starting with '/' (query included); body NULL or a JSON value sent with
 * content_type (NULL: "application/json"; PATCH needs
 * "application/merge-patch+json", "application/strategic-merge-patch+json"
 * or "application/json-patch+json").  Waits for the rate limiter; retries
 * connection failures, 429 and 5xx with exponential backoff and jitter,
 * waiting at least Retry-After (seconds, at most 60) when the server sends
 * it.  A POST is not idempotent: it is retried only when it was never
 * sent (no connection, unknown host) or answered 429; a timeout or a 5xx
 * after sending is returned at once (client-go's rule).  A body over
 * 256 MiB fails with CARVE_EIO ("response too large").  Returns the
 * final HTTP status (200..599; a 4xx other than 429 is returned at once,
 * not retried), with *out (when out is not NULL) the parsed JSON body or
 * NULL when the body is empty or not JSON; or a negative CARVE_EIO when no
 * HTTP answer came after every attempt (err says why), CARVE_ENOMEM.
 */
int carve_kube_request(struct carve_kube *k, const char *method, const char *path,
		       const char *content_type, json_t *body, json_t **out,
		       struct carve_error *err);

/* Counters since create, for /metrics. */
struct carve_kube_stats {
	uint64_t requests;        /* HTTP requests sent (every attempt) */
	uint64_t retries;
	uint64_t throttled_ns;    /* time spent waiting on the rate limiter */
	uint64_t server_ns;       /* time spent waiting on responses */
	uint64_t by_class[6];     /* answers by status class: [0] transport
				   * error, [1] 1xx .. [5] 5xx */
};
void carve_kube_stats(struct carve_kube *k, struct carve_kube_stats *out);

/* ---- list-then-watch ---- */

enum carve_kube_ev_type {
	CARVE_KEV_ADDED,
	CARVE_KEV_MODIFIED,
	CARVE_KEV_DELETED,
	CARVE_KEV_REPLACE        /* a (re)list completed: obj is a JSON array
				  * holding every object of the kind now; the
				  * store drops what is not in it */
};

struct carve_kube_event {
	int source;              /* the reflector's id (carve_kube_watch_start) */
	enum carve_kube_ev_type type;
	json_t *obj;             /* owned by the event */
};

struct carve_kube_queue;

/* An unbounded FIFO of events, many producers, one consumer. */
struct carve_kube_queue *carve_kube_queue_create(void);
void carve_kube_queue_destroy(struct carve_kube_queue *q);
/* Waits up to timeout_ms (-1: forever) for events, then moves every queued
 * event into *ev (a new array, caller frees each obj and the array with
 * carve_free).  Returns how many (0 on timeout or wake), or CARVE_ENOMEM. */
int carve_kube_queue_take(struct carve_kube_queue *q, int timeout_ms,
			  struct carve_kube_event **ev);
/* Wakes a waiting carve_kube_queue_take (from any thread). */
void carve_kube_queue_wake(struct carve_kube_queue *q);

struct carve_kube_watch_spec {
	const char *kind;           /* "Pod": for messages and metrics */
	const char *path;           /* collection path: "/api/v1/pods",
				     * "/apis/carve.dev/v1alpha1/clusterqueues" */
	const char *field_selector; /* NULL or "status.phase!=Succeeded,..." */
	const char *label_selector; /* NULL or a selector */
	bool optional;              /* a CRD that may be missing: 404 on the
				     * list is not an error; retried every 30 s */
	int page_size;              /* list `limit`; 0: 500 */
};

struct carve_kube_reflector;

/*
 * Starts a thread that lists s->path in pages (limit/continue), pushes one
 * CARVE_KEV_REPLACE, then watches from the list's resourceVersion with
 * allowWatchBookmarks=true and a random timeoutSeconds in [300, 600],
 * pushing ADDED/MODIFIED/DELETED as they arrive (the stream parsed line by
 * line as it comes); bookmarks only move its resourceVersion.  A watch
 * that ends is resumed from the last resourceVersion; HTTP 410 or an ERROR
 * event with code 410 (Expired) starts over with a relist; other errors
 * back off (jittered, up to 30 s) and retry.  id is copied into every
 * event's source.  REPLACE items carry their list's kind and apiVersion
 * (the API leaves them out of list items).  Returns NULL on a path that
 * does not start with '/' or holds a query, or on allocation or thread
 * failure.
 */
struct carve_kube_reflector *carve_kube_watch_start(struct carve_kube *k,
						    const struct carve_kube_watch_spec *s,
						    int id, struct carve_kube_queue *q,
						    struct carve_error *err);
/* Stops the thread (interrupting a blocked watch within about 1 s) and frees. */
void carve_kube_watch_stop(struct carve_kube_reflector *r);

struct carve_kube_watch_stats {
	uint64_t lists, watches, relists, events, bookmarks, errors;
	bool synced;               /* a first REPLACE was pushed */
};
void carve_kube_watch_stats(struct carve_kube_reflector *r, struct carve_kube_watch_stats *out);

/* ---- the store: objects of one kind by namespace/name ---- */

struct carve_kube_store;

struct carve_kube_store *carve_kube_store_create(void);
void carve_kube_store_destroy(struct carve_kube_store *s);
/*
 * Applies an event (ADDED/MODIFIED: put, DELETED: remove, REPLACE: the
 * whole content).  The store takes its own references.  Returns 1 when
 * the store changed, 0 when not (the same resourceVersion again), or
 * CARVE_EINVAL for an object without metadata.name (err says so; nothing
 * changes), CARVE_ENOMEM.
 */
int carve_kube_store_apply(struct carve_kube_store *s, const struct carve_kube_event *ev,
			   struct carve_error *err);
/* The object at ns/name (ns NULL or "" for cluster-scoped), borrowed, or NULL. */
json_t *carve_kube_store_get(const struct carve_kube_store *s, const char *ns, const char *name);
/* Replaces one object (a local assumption, e.g. a pod just bound); takes a
 * new reference.  Returns 0 or CARVE_ENOMEM. */
int carve_kube_store_put(struct carve_kube_store *s, json_t *obj);
size_t carve_kube_store_count(const struct carve_kube_store *s);
/* Calls fn for every object in key order ("ns/name"), stopping at a
 * non-zero return, which it returns. */
int carve_kube_store_each(const struct carve_kube_store *s,
			  int (*fn)(void *ctx, json_t *obj), void *ctx);

/* ---- leader election (coordination.k8s.io/v1 Lease) ---- */

struct carve_kube_lease_opts {
	const char *ns, *name;       /* the Lease */
	const char *identity;        /* this candidate (hostname_uuid) */
	int lease_ms, renew_ms, retry_ms; /* 0: 15000, 10000, 2000 */
};

struct carve_kube_elector;

/*
 * Starts a thread running client-go's protocol: get the Lease, create it
 * when missing; take it over only after its record stayed unchanged for
 * a full lease duration on this process's monotonic clock; renew every
 * retry period; every write a PUT carrying the resourceVersion read (409:
 * someone else won); leaseTransitions bumped when the holder changes.
 * When leadership is gained or lost, wakes q (when not NULL).  Returns
 * NULL on allocation or thread failure.
 */
struct carve_kube_elector *carve_kube_elect_start(struct carve_kube *k,
						  const struct carve_kube_lease_opts *o,
						  struct carve_kube_queue *q, struct carve_error *err);
/* Whether this process leads now: it holds the Lease and its last
 * successful renewal is younger than the renew deadline. */
bool carve_kube_is_leader(struct carve_kube_elector *e);
/* Stops; a leader releases the Lease (holderIdentity cleared) first. */
void carve_kube_elect_stop(struct carve_kube_elector *e);

/* ---- small helpers every driver needs ---- */

/* metadata.namespace / .name / .uid / .resourceVersion of obj, borrowed, or NULL. */
const char *carve_kube_ns(const json_t *obj);
const char *carve_kube_name(const json_t *obj);
const char *carve_kube_uid(const json_t *obj);
const char *carve_kube_rv(const json_t *obj);
/* RFC 3339 with microseconds ("2026-12-03T17:02:26.123456Z") of a
 * CLOCK_REALTIME time in ns, into buf (>= 32 bytes); returns buf. */
char *carve_kube_time(int64_t unix_ns, char *buf, size_t size);
/* Percent-encodes s for a URL query value into a new string (carve_free). */
char *carve_kube_escape(const char *s);

#endif
