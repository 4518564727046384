/*
 * webhook.c - the webhook's HTTPS server (whserver.h): libmicrohttpd over
 * GnuTLS, a pool of worker threads each with its own epoll set, HTTP/1.1
 * keep-alive.
 *
 *   POST /validate, /mutate   an AdmissionReview (Content-Type
 *                             application/json) answered by wh_review()
 *   GET  /healthz             200 while the process serves
 *   GET  /readyz              200 once the context is built, else 503
 *   GET  /metrics             counters in the Prometheus text format
 *
 * Bad requests never reach wh_review(): an unknown path is 404, a wrong
 * method 405 (with Allow), a body that is not JSON by its Content-Type
 * 415, a body over WH_MAX_BODY 413 (from Content-Length before reading
 * it, or as soon as the bytes read pass the cap), a request whose body is
 * not in within timeout_s 408; an idle or stalled connection is closed
 * after timeout_s.  Each answer is a JSON Status (kind Status, code,
 * message) for review paths, plain text for the probes.
 *
 * Invariants: a review runs under its own reference to the context read
 * at the start (wh_server_set_ctx swaps under ctx_mu and drops the old
 * reference, so a context lives until its last review ends); the body
 * buffer of a request is owned by its struct req, freed by the completion
 * callback; counters are atomics.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "kube_int.h"
#include "serve.h"
#include "whserver.h"

enum route { R_VALIDATE, R_MUTATE, R_NROUTES };
enum outcome { O_ALLOWED, O_DENIED, O_ERROR, O_NOUTCOMES };
/* Statuses answered before a review, for /metrics. */
static const unsigned early_codes[] = {404, 405, 408, 413, 415};
#define NEARLY (sizeof(early_codes) / sizeof(early_codes[0]))

struct wh_server {
	struct MHD_Daemon *d;
	const struct wh_policy *policy;
	int port;
	int64_t timeout_ns;
	bool log;
	atomic_bool ready;
	pthread_mutex_t ctx_mu;
	struct wh_ctx *ctx;        /* guarded by ctx_mu; NULL: the empty context */
	_Atomic uint64_t reviews[R_NROUTES][O_NOUTCOMES];
	_Atomic uint64_t early[NEARLY];
	_Atomic uint64_t review_ns; /* time inside wh_review, summed */
	_Atomic uint64_t patches, warnings;
};

/* One request in progress (the connection's *state). */
struct req {
	enum route route;
	int64_t start_ns;
	char *buf;
	size_t len, cap;
};

static const char *route_name[R_NROUTES] = {"validate", "mutate"};

/* Queues body (owned: freed with carve_free) with status and type. */
static enum MHD_Result send_body(struct MHD_Connection *c, unsigned status, const char *type,
				 char *body, size_t len, bool owned, const char *allow)
{
	struct MHD_Response *r;
	enum MHD_Result ok;

	if (owned)
		r = MHD_create_response_from_buffer_with_free_callback(len, body, free);
	else
		r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return send_body(c, status, "text/plain; charset=utf-8", (char *)msg, strlen(msg), false, NULL);
}

static void count_early(struct wh_server *s, unsigned status)
{
	size_t i;

	for (i = 0; i < NEARLY; i++)
		if (early_codes[i] == status)
			atomic_fetch_add(&s->early[i], 1);
}

/* A Kubernetes-style Status for a request refused before review. */
static enum MHD_Result status_json(struct wh_server *s, struct MHD_Connection *c, unsigned status,
				   const char *reason, const char *msg, const char *allow)
{
	json_t *j;
	char *body;

	count_early(s, status);
	j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1",
		      "status", "Failure", "reason", reason, "message", msg, "code", (int)status);
	body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!body)
		return MHD_NO;
	return send_body(c, status, "application/json", body, strlen(body), true, allow);
}

/* Whether the Content-Type is application/json (parameters allowed). */
static bool is_json(const char *ct)
{
	size_t n = strlen("application/json");

	if (!ct || strncasecmp(ct, "application/json", n))
		return false;
	return ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ';
}

static enum MHD_Result metrics(struct wh_server *s, struct MHD_Connection *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r, o;
	size_t i;
	static const char *oname[O_NOUTCOMES] = {"allowed", "denied", "error"};

	if (!f)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	fprintf(f, "# HELP carve_webhook_reviews_total AdmissionReviews answered, by path and result.\n"
		   "# TYPE carve_webhook_reviews_total counter\n");
	for (r = 0; r < R_NROUTES; r++)
		for (o = 0; o < O_NOUTCOMES; o++)
			fprintf(f, "carve_webhook_reviews_total{path=\"/%s\",result=\"%s\"} %llu\n",
				route_name[r], oname[o], (unsigned long long)atomic_load(&s->reviews[r][o]));
	fprintf(f, "# HELP carve_webhook_rejected_total Requests refused before review, by HTTP status.\n"
		   "# TYPE carve_webhook_rejected_total counter\n");
	for (i = 0; i < NEARLY; i++)
		fprintf(f, "carve_webhook_rejected_total{code=\"%u\"} %llu\n", early_codes[i],
			(unsigned long long)atomic_load(&s->early[i]));
	fprintf(f, "# HELP carve_webhook_review_seconds_total Time spent inside reviews.\n"
		   "# TYPE carve_webhook_review_seconds_total counter\n"
		   "carve_webhook_review_seconds_total %.9f\n"
		   "# HELP carve_webhook_patches_total JSON Patch operations returned.\n"
		   "# TYPE carve_webhook_patches_total counter\n"
		   "carve_webhook_patches_total %llu\n"
		   "# HELP carve_webhook_warnings_total Warnings returned.\n"
		   "# TYPE carve_webhook_warnings_total counter\n"
		   "carve_webhook_warnings_total %llu\n"
		   "# HELP carve_webhook_ready Whether the cluster context is built.\n"
		   "# TYPE carve_webhook_ready gauge\n"
		   "carve_webhook_ready %d\n",
		(double)atomic_load(&s->review_ns) / 1e9, (unsigned long long)atomic_load(&s->patches),
		(unsigned long long)atomic_load(&s->warnings), atomic_load(&s->ready) ? 1 : 0);
	if (fclose(f) || !buf) {
		free(buf);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	return send_body(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", buf, len, true, NULL);
}

/* GET endpoints.  Returns the queued answer. */
static enum MHD_Result probe(struct wh_server *s, struct MHD_Connection *c, const char *url,
			     const char *method)
{
	bool known = !strcmp(url, "/healthz") || !strcmp(url, "/readyz") || !strcmp(url, "/metrics");

	if (!known)
		return status_json(s, c, MHD_HTTP_NOT_FOUND, "NotFound",
				   "no such path: the webhook serves /validate and /mutate", NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return status_json(s, c, MHD_HTTP_METHOD_NOT_ALLOWED, "MethodNotAllowed",
				   "method not allowed: use GET", "GET, HEAD");
	if (!strcmp(url, "/healthz"))
		return text(c, MHD_HTTP_OK, "ok\n");
	if (!strcmp(url, "/readyz"))
		return atomic_load(&s->ready) ? text(c, MHD_HTTP_OK, "ok\n")
					      : text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready\n");
	return metrics(s, c);
}

/* The first call for a review path: checks method and headers.  Returns
 * MHD_YES with *state set to read the body, or the refusal queued. */
static enum MHD_Result review_begin(struct wh_server *s, struct MHD_Connection *c, enum route route,
				    const char *method, void **state)
{
	const char *ct, *cl;
	struct req *r;

	if (strcmp(method, MHD_HTTP_METHOD_POST))
		return status_json(s, c, MHD_HTTP_METHOD_NOT_ALLOWED, "MethodNotAllowed",
				   "method not allowed: AdmissionReviews are POSTed", "POST");
	ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	if (!is_json(ct))
		return status_json(s, c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType",
				   "Content-Type must be application/json", NULL);
	cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl && strtoull(cl, NULL, 10) > WH_MAX_BODY)
		return status_json(s, c, MHD_HTTP_CONTENT_TOO_LARGE, "RequestEntityTooLarge",
				   "request body larger than 8 MiB", NULL);
	if (!(r = calloc(1, sizeof(*r))))
		return MHD_NO;
	r->route = route;
	r->start_ns = kube_mono_ns();
	*state = r;
	return MHD_YES;
}

/* Appends an upload chunk.  Returns 0, or the HTTP status to refuse with. */
static unsigned review_append(struct wh_server *s, struct req *r, const char *data, size_t n)
{
	if (kube_mono_ns() - r->start_ns > s->timeout_ns)
		return MHD_HTTP_REQUEST_TIMEOUT;
	if (n > WH_MAX_BODY - r->len)
		return MHD_HTTP_CONTENT_TOO_LARGE;
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 16384;
		char *b;

		while (cap < r->len + n)
			cap *= 2;
		if (!(b = realloc(r->buf, cap)))
			return MHD_HTTP_INTERNAL_SERVER_ERROR;
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	return 0;
}

/* The whole body is in: reviews it under a context reference. */
static enum MHD_Result review_end(struct wh_server *s, struct MHD_Connection *c, struct req *r)
{
	struct wh_outcome o = {0};
	struct wh_ctx *ctx;
	char *out = NULL;
	size_t outlen = 0;
	int64_t t0;
	int status;
	enum outcome kind;

	pthread_mutex_lock(&s->ctx_mu);
	ctx = s->ctx ? wh_ctx_ref(s->ctx) : NULL;
	pthread_mutex_unlock(&s->ctx_mu);
	t0 = kube_mono_ns();
	status = wh_review(s->policy, ctx, r->route == R_MUTATE, r->buf ? r->buf : "", r->len, &out,
			   &outlen, &o);
	atomic_fetch_add(&s->review_ns, (uint64_t)(kube_mono_ns() - t0));
	wh_ctx_unref(ctx);
	if (status < 0 || !out) {
		free(out);
		atomic_fetch_add(&s->reviews[r->route][O_ERROR], 1);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	kind = status != 200 ? O_ERROR : o.allowed ? O_ALLOWED : O_DENIED;
	atomic_fetch_add(&s->reviews[r->route][kind], 1);
	if (status == 200) {
		atomic_fetch_add(&s->patches, (uint64_t)(o.npatches > 0 ? o.npatches : 0));
		atomic_fetch_add(&s->warnings, (uint64_t)(o.nwarnings > 0 ? o.nwarnings : 0));
	}
	if (s->log)
		fprintf(stderr, "carve webhook: /%s %d %s%s%s (%zu bytes)\n", route_name[r->route], status,
			kind == O_ALLOWED ? "allowed" : kind == O_DENIED ? "denied" : "bad request",
			o.rule && kind == O_DENIED ? " by " : "", o.rule && kind == O_DENIED ? o.rule : "",
			r->len);
	/* wh_review's buffer comes from jansson or malloc: freed with free(). */
	return send_body(c, (unsigned)status, "application/json", out, outlen, true, NULL);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct wh_server *s = cls;
	struct req *r = *state;
	unsigned refuse;

	(void)version;
	if (!r) {
		if (!strcmp(url, "/validate"))
			return review_begin(s, c, R_VALIDATE, method, state);
		if (!strcmp(url, "/mutate"))
			return review_begin(s, c, R_MUTATE, method, state);
		return probe(s, c, url, method);
	}
	if (r->len == (size_t)-1) /* refused already: drop what still comes */
		return (*upload_size = 0), MHD_YES;
	if (*upload_size) {
		refuse = review_append(s, r, upload, *upload_size);
		*upload_size = 0;
		if (!refuse)
			return MHD_YES;
		r->len = (size_t)-1;
		if (refuse == MHD_HTTP_REQUEST_TIMEOUT)
			return status_json(s, c, refuse, "Timeout",
					   "request body not received in time", NULL);
		if (refuse == MHD_HTTP_CONTENT_TOO_LARGE)
			return status_json(s, c, refuse, "RequestEntityTooLarge",
					   "request body larger than 8 MiB", NULL);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	return review_end(s, c, r);
}

static void completed(void *cls, struct MHD_Connection *c, void **state,
		      enum MHD_RequestTerminationCode why)
{
	struct req *r = *state;

	(void)cls;
	(void)c;
	(void)why;
	if (r) {
		free(r->buf);
		free(r);
		*state = NULL;
	}
}

struct wh_server *wh_server_start(const struct wh_server_opts *o, struct carve_error *err)
{
	struct wh_server *s;
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC;
	unsigned threads = (unsigned)(o->threads > 0 ? o->threads : 2);
	unsigned timeout = (unsigned)(o->timeout_s > 0 ? o->timeout_s : 10);
	unsigned conns = (unsigned)(o->max_conns > 0 ? o->max_conns : 1024);
	struct MHD_OptionItem opts[] = {
		{MHD_OPTION_SOCK_ADDR, 0, &sa},
		{MHD_OPTION_CONNECTION_TIMEOUT, timeout, NULL},
		{MHD_OPTION_CONNECTION_LIMIT, conns, NULL},
		{MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, NULL},
		{threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, threads, NULL},
		{MHD_OPTION_END, 0, NULL},
	};

	if (kube_parse_addr("--listen", o->listen, &sa, err))
		return NULL;
	if (!(s = carve_calloc(1, sizeof(*s)))) {
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		return NULL;
	}
	s->policy = o->policy;
	s->timeout_ns = (int64_t)timeout * 1000000000;
	s->log = o->log_requests;
	pthread_mutex_init(&s->ctx_mu, NULL);
	if (o->tls) {
		wh_tls_bind(o->tls);
		flags |= MHD_USE_TLS;
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_ARRAY, opts,
					MHD_OPTION_HTTPS_CERT_CALLBACK, wh_tls_callback(), MHD_OPTION_END);
	} else {
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_ARRAY, opts,
					MHD_OPTION_END);
	}
	if (!s->d) {
		carve_errorf(err, CARVE_EIO, "cannot listen on %s: address in use or not available",
			     o->listen);
		pthread_mutex_destroy(&s->ctx_mu);
		carve_free(s);
		return NULL;
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : ntohs(sa.sin_port);
	return s;
}

int wh_server_port(const struct wh_server *s)
{
	return s->port;
}

void wh_server_set_ctx(struct wh_server *s, struct wh_ctx *ctx)
{
	struct wh_ctx *old;

	pthread_mutex_lock(&s->ctx_mu);
	old = s->ctx;
	s->ctx = ctx;
	pthread_mutex_unlock(&s->ctx_mu);
	wh_ctx_unref(old);
}

void wh_server_set_ready(struct wh_server *s, bool ready)
{
	atomic_store(&s->ready, ready);
}

uint64_t wh_server_reviews(const struct wh_server *s)
{
	uint64_t n = 0;
	int r, o;

	for (r = 0; r < R_NROUTES; r++)
		for (o = 0; o < O_NOUTCOMES; o++)
			n += atomic_load(&((struct wh_server *)s)->reviews[r][o]);
	return n;
}

void wh_server_stop(struct wh_server *s, int grace_ms)
{
	int fd;
	int64_t end = kube_mono_ns() + (int64_t)grace_ms * 1000000;
	const union MHD_DaemonInfo *info;

	if (!s)
		return;
	fd = MHD_quiesce_daemon(s->d);
	if (fd >= 0)
		close(fd);
	while (kube_mono_ns() < end) {
		info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (!info || info->num_connections == 0)
			break;
		usleep(20000);
	}
	MHD_stop_daemon(s->d);
	wh_ctx_unref(s->ctx);
	pthread_mutex_destroy(&s->ctx_mu);
	carve_free(s);
}
