/*
 * whserver.h - the parts of `carve webhook` around one review (private
 * to src/kube; names start with wh_, like webhook.h's):
 *   whtls.c    the serving certificate and key, read from PEM files and
 *              read again when either file changes; handed to GnuTLS
 *              from a certificate callback, swapped atomically.
 *   webhook.c  the HTTPS server: POST /validate and /mutate answered by
 *              wh_review() under a reference to the current context;
 *              GET /healthz, /readyz, /metrics; limits on body size and
 *              time.
 *   whwatch.c  reflectors over wh_ctx_resources[] whose stores rebuild
 *              the context (debounced) with wh_ctx_build().
 *   whmain.c   wh_run(): options, signals, graceful stop.
 *
 * Threads: the server's worker threads call wh_review() at once; the
 * context pointer is swapped under a mutex and every review holds its
 * own reference, so a swap never frees a context in use.
 */
#ifndef CARVE_KUBE_WHSERVER_H
#define CARVE_KUBE_WHSERVER_H

#include <stdbool.h>
#include <stdint.h>

#include <gnutls/abstract.h>

#include "carve/carve.h"
#include "webhook.h"

/* The largest request body read: an AdmissionReview holds the object and
 * its old version, each at most the API server's 1.5 MiB request limit
 * (etcd's default --max-request-bytes), so 8 MiB leaves room; more is 413. */
#define WH_MAX_BODY ((size_t)8 << 20)

/* ---- certificates (whtls.c) ---- */

struct wh_tls;

/*
 * Reads cert (PEM chain, leaf first) and key (PEM, any key GnuTLS reads)
 * and checks that the key belongs to the leaf.  NULL on error (err names
 * the file and why).
 */
struct wh_tls *wh_tls_create(const char *cert, const char *key, struct carve_error *err);
/*
 * Reads the files again when their size, mtime or inode changed since the
 * last load (force: always).  A pair that does not load (a half-written
 * rotation) leaves the current one in place.  Returns 1 when a new pair is
 * served, 0 when nothing changed, or a negative CARVE_E* (err says why;
 * the old pair still served).  Called from one thread at a time.
 */
int wh_tls_reload(struct wh_tls *t, bool force, struct carve_error *err);
/* The callback libmicrohttpd hands to GnuTLS (MHD_OPTION_HTTPS_CERT_CALLBACK);
 * it serves the pair set by wh_tls_bind() for this process. */
gnutls_certificate_retrieve_function2 *wh_tls_callback(void);
/* Makes t the pair wh_tls_callback() serves (one per process). */
void wh_tls_bind(struct wh_tls *t);
/* How many times a new pair was loaded (the first load is 1). */
uint64_t wh_tls_generation(const struct wh_tls *t);
/* Frees t and every pair it loaded; the server must be stopped first. */
void wh_tls_destroy(struct wh_tls *t);

/* ---- the server (webhook.c) ---- */

struct wh_server_opts {
	const char *listen;        /* "host:port" or ":port"; port 0: ephemeral */
	struct wh_tls *tls;        /* borrowed; NULL serves plain HTTP (tests, bench only) */
	const struct wh_policy *policy; /* borrowed; NULL: the embedded defaults */
	int threads;               /* worker threads (epoll each); 0: 2 */
	int timeout_s;             /* idle connection timeout and the limit on
				    * reading one request; 0: 10 */
	int max_conns;             /* 0: 1024 */
	bool log_requests;         /* one stderr line per review */
};

struct wh_server;

/* Binds and serves.  NULL when the address is malformed or cannot be bound
 * (err says which) or out of memory.  Starts not ready, with no context
 * (reviews use the empty one). */
struct wh_server *wh_server_start(const struct wh_server_opts *o, struct carve_error *err);
int wh_server_port(const struct wh_server *s);
/* Installs ctx (the server takes the caller's reference) and drops the old one. */
void wh_server_set_ctx(struct wh_server *s, struct wh_ctx *ctx);
void wh_server_set_ready(struct wh_server *s, bool ready);
/* Reviews answered so far (any status). */
uint64_t wh_server_reviews(const struct wh_server *s);
/* Stops accepting, waits up to grace_ms for the connections left, stops. */
void wh_server_stop(struct wh_server *s, int grace_ms);

/* ---- the context's reflectors (whwatch.c) ---- */

struct carve_kube;
struct wh_watch;

/* Starts one reflector per wh_ctx_resources[] entry and a thread that
 * rebuilds the context at most every debounce_ms (0: 200) after changes,
 * installing it in s; s becomes ready once every reflector synced.  NULL
 * on allocation or thread failure (err says which). */
struct wh_watch *wh_watch_start(struct carve_kube *k, struct wh_server *s, int debounce_ms,
				struct carve_error *err);
/* Contexts built so far. */
uint64_t wh_watch_builds(const struct wh_watch *w);
void wh_watch_stop(struct wh_watch *w);

/* ---- the command (whmain.c) ---- */

struct wh_opts {
	const char *listen;        /* default ":8443" */
	const char *cert, *key;    /* required unless insecure_http */
	const char *policy;        /* NULL: embedded defaults */
	const char *kubeconfig, *context;
	bool in_cluster;           /* the pod's service account only */
	bool no_cluster;           /* no API access: the empty context */
	bool insecure_http;        /* plain HTTP (tests and benchmarks) */
	int threads, timeout_s, reload_ms, debounce_ms, max_seconds;
	double qps;
	int burst;
	bool verbose;
};

/* Runs until SIGTERM/SIGINT or max_seconds (SIGHUP reloads the
 * certificate).  Returns 0 after a requested stop, or a negative CARVE_E*
 * after saying why on stderr (bad files, address in use, no cluster
 * configuration). */
int wh_run(const struct wh_opts *o);

#endif
