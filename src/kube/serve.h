/*
 * serve.h - the scheduler's HTTP endpoints (private to src/kube), served
 * by libmicrohttpd from its own internal thread:
 *   GET /metrics  the registry rendered (metrics.h), text format 0.0.4
 *   GET /healthz  200 "ok" while the process loop is alive: the driver
 *                 calls kube_serve_heartbeat() every loop turn; 500
 *                 "stale: no heartbeat for N s" once the last beat is
 *                 older than stale_ms (a wedged loop gets the pod
 *                 restarted by its liveness probe)
 *   GET /readyz   200 "ok" while the ready flag is set (stores synced, and
 *                 leader or a healthy follower), else 503 "not ready"
 * HEAD is answered as GET without the body; other methods get 405 with
 * an Allow header, other paths 404.  No request body is read.
 *
 * Threads: heartbeat and ready may be called from any thread (atomics);
 * the registry has its own lock.
 */
#ifndef CARVE_KUBE_SERVE_H
#define CARVE_KUBE_SERVE_H

#include <stdbool.h>

#include "carve/carve.h"

struct kube_registry;

struct kube_serve_opts {
	const char *addr;        /* "host:port" (an IPv4 address or
				  * "localhost"), ":port" for every
				  * interface; port 0 takes an ephemeral one */
	struct kube_registry *metrics; /* borrowed, outlives the server;
					* NULL: /metrics is 404 */
	int stale_ms;            /* 0: 30000 */
	/* Another source for /metrics (the node agent's exporter), used when
	 * metrics is NULL: returns a new text (carve_free) and its length, or
	 * NULL (500).  Called from the server's threads, arg passed back. */
	char *(*render)(void *arg, size_t *len);
	void *render_arg;
};

struct sockaddr_in;

/*
 * Parses "host:port", ":port" (every interface) or "localhost:port" (IPv4;
 * port 0..65535) into sa.  Returns 0, or CARVE_EINVAL with err saying
 * `WHAT "ADDR": ...` (what: the flag or "address").
 */
int kube_parse_addr(const char *what, const char *addr, struct sockaddr_in *sa,
		    struct carve_error *err);

struct kube_server;

/*
 * Binds and starts serving; the heartbeat starts fresh and ready false.
 * NULL when addr is malformed (err quotes it), the address cannot be
 * bound (err names it and why), or out of memory.
 */
struct kube_server *kube_serve_start(const struct kube_serve_opts *o, struct carve_error *err);
/* The port bound (the ephemeral one chosen when addr asked for 0). */
int kube_serve_port(const struct kube_server *s);
/* The process loop is alive now. */
void kube_serve_heartbeat(struct kube_server *s);
/* Sets the /readyz flag. */
void kube_serve_set_ready(struct kube_server *s, bool ready);
/* Stops the thread (waits for requests in progress) and frees. */
void kube_serve_stop(struct kube_server *s);

#endif
