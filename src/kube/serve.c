/*
 * serve.c - the scheduler's HTTP endpoints (serve.h): /metrics, /healthz
 * and /readyz, one libmicrohttpd thread per connection (at most 64), so
 * a probe never queues behind a long /metrics render on another
 * connection.
 *
 * Invariants: /healthz and /readyz read only atomics; /metrics reads the
 * registry (which locks itself), so neither waits on the scheduler
 * thread; every answer
 * is built whole before it is queued.  A request with a body is answered
 * at once (405) and the body is discarded by the library.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "metrics.h"
#include "serve.h"

struct kube_server {
	struct MHD_Daemon *d;
	struct kube_registry *metrics;
	char *(*render)(void *arg, size_t *len);
	void *render_arg;
	int64_t stale_ns;
	int port;
	_Atomic int64_t beat_ns;   /* CLOCK_MONOTONIC of the last heartbeat */
	atomic_bool ready;
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int kube_parse_addr(const char *what, const char *addr, struct sockaddr_in *sa,
		    struct carve_error *err)
{
	const char *colon = addr ? strrchr(addr, ':') : NULL;
	char host[64], *end;
	long port;

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (!colon || (size_t)(colon - addr) >= sizeof(host))
		return carve_errorf(err, CARVE_EINVAL, "%s \"%s\": want host:port or :port", what,
				    addr ? addr : "(null)");
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 0 || port > 65535)
		return carve_errorf(err, CARVE_EINVAL, "%s \"%s\": port must be 0..65535", what, addr);
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = '\0';
	sa->sin_port = htons((uint16_t)port);
	if (!host[0])
		sa->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (!strcmp(host, "localhost"))
		sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return carve_errorf(err, CARVE_EINVAL, "%s \"%s\": host \"%s\" is not an IPv4 address",
				    what, addr, host);
	return 0;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned code, const char *type, char *body,
			      size_t len, bool owned)
{
	struct MHD_Response *r;
	enum MHD_Result ok;

	if (owned)
		r = MHD_create_response_from_buffer_with_free_callback(len, body, carve_free);
	else
		r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			carve_free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ok = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned code, const char *msg)
{
	return answer(c, code, "text/plain; charset=utf-8", (char *)msg, strlen(msg), false);
}

static enum MHD_Result healthz(struct kube_server *s, struct MHD_Connection *c)
{
	int64_t age = mono_ns() - atomic_load(&s->beat_ns);
	char msg[96];
	char *copy;

	if (age <= s->stale_ns)
		return text(c, MHD_HTTP_OK, "ok\n");
	snprintf(msg, sizeof(msg), "stale: no heartbeat for %.1f s\n", (double)age / 1e9);
	if (!(copy = carve_strdup(msg)))
		return MHD_NO;
	return answer(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", copy, strlen(copy),
		      true);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct kube_server *s = cls;

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (!strcmp(url, "/healthz"))
		return healthz(s, c);
	if (!strcmp(url, "/readyz"))
		return atomic_load(&s->ready) ? text(c, MHD_HTTP_OK, "ok\n")
					      : text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready\n");
	if (!strcmp(url, "/metrics") && s->metrics) {
		size_t len;
		char *body = kube_registry_render(s->metrics, &len);
		if (!body)
			return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
		return answer(c, MHD_HTTP_OK, KUBE_METRICS_CONTENT_TYPE, body, len, true);
	}
	if (!strcmp(url, "/metrics") && s->render) {
		size_t len = 0;
		char *body = s->render(s->render_arg, &len);

		if (!body)
			return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "metrics not available\n");
		return answer(c, MHD_HTTP_OK, KUBE_METRICS_CONTENT_TYPE, body, len, true);
	}
	return text(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

struct kube_server *kube_serve_start(const struct kube_serve_opts *o, struct carve_error *err)
{
	struct kube_server *s;
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;
	char host[INET_ADDRSTRLEN];

	if (kube_parse_addr("address", o->addr, &sa, err))
		return NULL;
	if (!(s = carve_calloc(1, sizeof(*s)))) {
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		return NULL;
	}
	s->metrics = o->metrics;
	s->render = o->render;
	s->render_arg = o->render_arg;
	s->stale_ns = (int64_t)(o->stale_ms > 0 ? o->stale_ms : 30000) * 1000000;
	atomic_store(&s->beat_ns, mono_ns());
	atomic_store(&s->ready, false);
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
				MHD_USE_AUTO, 0, NULL, NULL, handle, s,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned)10, MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_END);
	if (!s->d) {
		inet_ntop(AF_INET, &sa.sin_addr, host, sizeof(host));
		carve_errorf(err, CARVE_EIO, "cannot listen on %s (%s:%d): address in use or not available",
			     o->addr, host, ntohs(sa.sin_port));
		carve_free(s);
		return NULL;
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : ntohs(sa.sin_port);
	return s;
}

int kube_serve_port(const struct kube_server *s)
{
	return s->port;
}

void kube_serve_heartbeat(struct kube_server *s)
{
	atomic_store(&s->beat_ns, mono_ns());
}

void kube_serve_set_ready(struct kube_server *s, bool ready)
{
	atomic_store(&s->ready, ready);
}

void kube_serve_stop(struct kube_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	carve_free(s);
}
