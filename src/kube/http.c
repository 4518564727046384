/*
 * http.c - the API client's requests (kube.h): libcurl easy handles kept
 * in a small pool and reused, so connections stay alive between requests;
 * TLS with a CA file or PEM bytes, client certificates as files or bytes,
 * or no verification; a bearer token, re-read from its file when the
 * file changes (the service-account token rotates); JSON bodies in and
 * out with jansson; a token-bucket rate limiter shared by every thread
 * (client-go's flowcontrol: qps refill, burst size, callers wait for
 * their turn); retries of transport errors, 429 and 5xx with capped
 * exponential backoff and full jitter, Retry-After a floor under it (a
 * POST only when it never left or got 429); responses capped at 256 MiB,
 * stream lines at 64 MiB; TCP keepalive on every connection and a
 * low-speed limit on streams.
 *
 * Invariants: a handle belongs to one request at a time (taken from the
 * pool, given back reset, holding no pointer into a finished request); k->mu guards the pool, the token cache, the
 * retry policy and the counters; the limiter has its own lock and never
 * sleeps holding it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <curl/curl.h>

#include "kube_int.h"

#define POOL_MAX 16
#define RETRY_AFTER_MAX_S 60
#define BODY_MAX_DEFAULT ((size_t)256 << 20) /* one response body */
#define LINE_MAX_DEFAULT ((size_t)64 << 20)  /* one line of a watch */

struct carve_kube {
	struct carve_kube_config c; /* own copies */
	char *ua;
	char *auth;                 /* "Authorization: Bearer ..." or NULL */
	struct timespec tok_mtime;  /* of token_file when read */
	off_t tok_size;
	pthread_mutex_t mu;
	CURL *pool[POOL_MAX];
	int npool;
	struct carve_kube_retry retry;
	struct carve_kube_stats st;
	size_t body_max, line_max;  /* kube_set_limits */
	/* the rate limiter */
	pthread_mutex_t lim_mu;
	double tokens;
	int64_t lim_ns;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int64_t kube_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t kube_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t kube_rand(uint64_t n)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t s;
	uint64_t x;

	pthread_mutex_lock(&mu);
	if (!s)
		s = (uint64_t)kube_real_ns() ^ ((uint64_t)kube_mono_ns() << 17) ^ 0x9e3779b97f4a7c15u;
	/* splitmix64 */
	s += 0x9e3779b97f4a7c15u;
	x = s;
	pthread_mutex_unlock(&mu);
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
	x ^= x >> 31;
	return n ? x % n : 0;
}

void kube_nap(pthread_mutex_t *mu, pthread_cond_t *cv, const atomic_bool *stop, int64_t ms)
{
	struct timespec ts;
	int64_t until;

	if (ms <= 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* cv waits on CLOCK_MONOTONIC */
	until = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + ms * 1000000;
	ts.tv_sec = (time_t)(until / 1000000000);
	ts.tv_nsec = (long)(until % 1000000000);
	pthread_mutex_lock(mu);
	if (!atomic_load(stop))
		pthread_cond_timedwait(cv, mu, &ts);
	pthread_mutex_unlock(mu);
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000) };

	while (ns > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int copy_str(char **dst, const char *src)
{
	if (!src) {
		*dst = NULL;
		return 0;
	}
	*dst = carve_strdup(src);
	return *dst ? 0 : CARVE_ENOMEM;
}

struct carve_kube *carve_kube_create(const struct carve_kube_config *c, struct carve_error *err)
{
	struct carve_kube *k;
	int rc = 0;

	if (!c || !c->server ||
	    (strncmp(c->server, "https://", 8) != 0 && strncmp(c->server, "http://", 7) != 0)) {
		carve_errorf(err, CARVE_EINVAL, "kube client: server \"%s\" is not an http(s) URL",
			     c && c->server ? c->server : "");
		return NULL;
	}
	if (c->qps > 0 && c->burst < 1) {
		carve_errorf(err, CARVE_EINVAL, "kube client: burst %d must be >= 1 when qps > 0",
			     c->burst);
		return NULL;
	}
	if ((c->cert_file || c->cert_data) != (c->key_file || c->key_data)) {
		carve_errorf(err, CARVE_EINVAL,
			     "kube client: a client certificate needs its key and a key its certificate");
		return NULL;
	}
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		carve_errorf(err, CARVE_EIO, "kube client: libcurl: %s",
			     curl_easy_strerror(curl_init_rc));
		return NULL;
	}
	k = carve_calloc(1, sizeof(*k));
	if (!k) {
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		return NULL;
	}
	k->c = *c;
	rc |= copy_str(&k->c.server, c->server);
	rc |= copy_str(&k->c.ca_file, c->ca_file);
	rc |= copy_str(&k->c.ca_data, c->ca_data);
	rc |= copy_str(&k->c.cert_file, c->cert_file);
	rc |= copy_str(&k->c.cert_data, c->cert_data);
	rc |= copy_str(&k->c.key_file, c->key_file);
	rc |= copy_str(&k->c.key_data, c->key_data);
	rc |= copy_str(&k->c.token, c->token);
	rc |= copy_str(&k->c.token_file, c->token_file);
	rc |= copy_str(&k->c.ns, c->ns);
	rc |= copy_str(&k->c.source, c->source);
	rc |= copy_str(&k->c.user_agent, c->user_agent);
	rc |= copy_str(&k->ua, c->user_agent ? c->user_agent : "carve/" CARVE_VERSION);
	if (!rc && k->c.token && !k->c.token_file) {
		size_t n = strlen(k->c.token) + 32;

		k->auth = carve_malloc(n);
		if (k->auth)
			snprintf(k->auth, n, "Authorization: Bearer %s", k->c.token);
		else
			rc = CARVE_ENOMEM;
	}
	pthread_mutex_init(&k->mu, NULL);
	pthread_mutex_init(&k->lim_mu, NULL);
	k->tokens = c->burst;
	k->lim_ns = kube_mono_ns();
	k->body_max = BODY_MAX_DEFAULT;
	k->line_max = LINE_MAX_DEFAULT;
	if (rc) {
		carve_kube_destroy(k);
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		return NULL;
	}
	return k;
}

void carve_kube_destroy(struct carve_kube *k)
{
	int i;

	if (!k)
		return;
	for (i = 0; i < k->npool; i++)
		curl_easy_cleanup(k->pool[i]);
	carve_free(k->auth);
	carve_free(k->ua);
	carve_kube_config_free(&k->c);
	pthread_mutex_destroy(&k->mu);
	pthread_mutex_destroy(&k->lim_mu);
	carve_free(k);
}

void carve_kube_set_retry(struct carve_kube *k, const struct carve_kube_retry *r)
{
	pthread_mutex_lock(&k->mu);
	k->retry = *r;
	pthread_mutex_unlock(&k->mu);
}

void kube_set_limits(struct carve_kube *k, size_t body_max, size_t line_max)
{
	pthread_mutex_lock(&k->mu);
	k->body_max = body_max ? body_max : BODY_MAX_DEFAULT;
	k->line_max = line_max ? line_max : LINE_MAX_DEFAULT;
	pthread_mutex_unlock(&k->mu);
}

void carve_kube_stats(struct carve_kube *k, struct carve_kube_stats *out)
{
	pthread_mutex_lock(&k->mu);
	*out = k->st;
	pthread_mutex_unlock(&k->mu);
}

/* Waits for a token of the bucket: refilled at qps, at most burst. */
static void limiter_wait(struct carve_kube *k)
{
	int64_t now, wait_ns = 0;

	if (k->c.qps <= 0)
		return;
	pthread_mutex_lock(&k->lim_mu);
	now = kube_mono_ns();
	k->tokens += (double)(now - k->lim_ns) / 1e9 * k->c.qps;
	if (k->tokens > k->c.burst)
		k->tokens = k->c.burst;
	k->lim_ns = now;
	k->tokens -= 1; /* reserve ours; a debt is paid by waiting */
	if (k->tokens < 0)
		wait_ns = (int64_t)(-k->tokens / k->c.qps * 1e9);
	pthread_mutex_unlock(&k->lim_mu);
	if (wait_ns > 0) {
		sleep_ns(wait_ns);
		pthread_mutex_lock(&k->mu);
		k->st.throttled_ns += (uint64_t)wait_ns;
		pthread_mutex_unlock(&k->mu);
	}
}

/* The Authorization header, re-reading token_file when it changed.
 * Called with k->mu held; returns a new copy (or NULL for none) in *out. */
static int auth_header(struct carve_kube *k, char **out, struct carve_error *err)
{
	struct stat sb;

	*out = NULL;
	if (k->c.token_file) {
		if (stat(k->c.token_file, &sb) != 0) {
			if (!k->auth)
				return carve_errorf(err, CARVE_EIO, "token file %s: %s",
						    k->c.token_file, strerror(errno));
		} else if (!k->auth || sb.st_mtim.tv_sec != k->tok_mtime.tv_sec ||
			   sb.st_mtim.tv_nsec != k->tok_mtime.tv_nsec || sb.st_size != k->tok_size) {
			FILE *f = fopen(k->c.token_file, "r");
			char buf[16384];
			size_t n = 0, m;
			char *h;

			if (f) {
				n = fread(buf, 1, sizeof(buf) - 1, f);
				if (n == sizeof(buf) - 1 && fgetc(f) != EOF) {
					fclose(f);
					return carve_errorf(err, CARVE_EIO,
							    "token file %s: larger than %zu bytes",
							    k->c.token_file, sizeof(buf) - 1);
				}
				fclose(f);
			}
			buf[n] = '\0';
			while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
					 buf[n - 1] == ' ' || buf[n - 1] == '\t'))
				buf[--n] = '\0';
			if (!f || n == 0) {
				if (!k->auth)
					return carve_errorf(err, CARVE_EIO, "token file %s: %s",
							    k->c.token_file,
							    f ? "empty" : strerror(errno));
			} else {
				m = n + 32;
				h = carve_malloc(m);
				if (!h)
					return carve_errorf(err, CARVE_ENOMEM, "out of memory");
				snprintf(h, m, "Authorization: Bearer %s", buf);
				carve_free(k->auth);
				k->auth = h;
				k->tok_mtime = sb.st_mtim;
				k->tok_size = sb.st_size;
			}
		}
	}
	if (k->auth) {
		*out = carve_strdup(k->auth);
		if (!*out)
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	}
	return 0;
}

static CURL *handle_take(struct carve_kube *k)
{
	CURL *h = NULL;

	pthread_mutex_lock(&k->mu);
	if (k->npool > 0)
		h = k->pool[--k->npool];
	pthread_mutex_unlock(&k->mu);
	return h ? h : curl_easy_init();
}

static void handle_give(struct carve_kube *k, CURL *h)
{
	/* Forget the request's pointers (error buffer, write target, headers
	 * on the caller's stack); the connection and caches stay. */
	curl_easy_reset(h);
	pthread_mutex_lock(&k->mu);
	if (k->npool < POOL_MAX) {
		k->pool[k->npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&k->mu);
	if (h)
		curl_easy_cleanup(h);
}

/* The options every request sets (the handle was reset). */
static void setup_common(struct carve_kube *k, CURL *h)
{
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, k->ua);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 15L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, NULL);
	if (k->c.insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (k->c.ca_data) {
		struct curl_blob b = { k->c.ca_data, strlen(k->c.ca_data), CURL_BLOB_COPY };

		/* Only the cluster's CA is trusted, like client-go: no
		 * system bundle or directory besides it. */
		curl_easy_setopt(h, CURLOPT_CAINFO, NULL);
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
	} else if (k->c.ca_file) {
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
		curl_easy_setopt(h, CURLOPT_CAINFO, k->c.ca_file);
	}
	if (k->c.cert_data) {
		struct curl_blob b = { k->c.cert_data, strlen(k->c.cert_data), CURL_BLOB_COPY };

		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (k->c.cert_file) {
		curl_easy_setopt(h, CURLOPT_SSLCERT, k->c.cert_file);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (k->c.key_data) {
		struct curl_blob b = { k->c.key_data, strlen(k->c.key_data), CURL_BLOB_COPY };

		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (k->c.key_file) {
		curl_easy_setopt(h, CURLOPT_SSLKEY, k->c.key_file);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	}
}

static char *make_url(struct carve_kube *k, const char *path)
{
	size_t n = strlen(k->c.server) + strlen(path) + 1;
	char *u = carve_malloc(n);

	if (u)
		snprintf(u, n, "%s%s", k->c.server, path);
	return u;
}

struct buf {
	char *p;
	size_t n, cap;
	size_t max;     /* the most bytes it may hold (0: no cap) */
	bool oom;
	bool too_large; /* refused bytes beyond max */
};

static size_t buf_write(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct buf *b = ctx;
	size_t n = size * nmemb;

	if (b->max && n > b->max - b->n) {
		b->too_large = true;
		return 0;
	}
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->n + n + 1)
			cap *= 2;
		p = carve_realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return 0;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, n);
	b->n += n;
	b->p[b->n] = '\0';
	return n;
}

/* One answer (status 0: a transport error) that took wait_ns of waiting. */
static void count_answer(struct carve_kube *k, long status, int64_t wait_ns)
{
	int cls = status >= 100 && status < 600 ? (int)(status / 100) : 0;

	pthread_mutex_lock(&k->mu);
	k->st.requests++;
	k->st.by_class[cls]++;
	k->st.server_ns += (uint64_t)(wait_ns > 0 ? wait_ns : 0);
	pthread_mutex_unlock(&k->mu);
}

/* Progress callback of a request or stream: ends it once *stop is set. */
static int stop_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	const atomic_bool *stop = ctx;

	(void)a, (void)b, (void)c, (void)d;
	return stop && atomic_load(stop) ? 1 : 0;
}

/* Sleeps ms in slices of at most 50 ms, returning early once *stop is set
 * (stop may be NULL). */
static void sleep_stoppable(int64_t ms, const atomic_bool *stop)
{
	int64_t until = kube_mono_ns() + ms * 1000000, left;

	while ((left = until - kube_mono_ns()) > 0 && !(stop && atomic_load(stop)))
		sleep_ns(left < 50000000 ? left : 50000000);
}

/*
 * Whether a failed attempt may be sent again.  A POST is not idempotent:
 * it is retried only when the request surely never reached the server
 * (no connection, no name) or on 429 (the server refused it before
 * acting); a timeout or a 5xx after sending goes back to the caller
 * (client-go's rule).  Every other method is retried on transport errors,
 * 429 and 5xx.
 */
static bool may_retry(const char *method, CURLcode cc, long status)
{
	bool post = strcmp(method, "POST") == 0;

	if (cc != CURLE_OK)
		return !post || cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
		       cc == CURLE_COULDNT_RESOLVE_PROXY;
	if (status == 429)
		return true;
	return status >= 500 && !post;
}

int kube_request_r(struct carve_kube *k, const struct carve_kube_retry *r, const char *method,
		   const char *path, const char *content_type, json_t *body, json_t **out,
		   const atomic_bool *stop, struct carve_error *err)
{
	int attempts = r->max_attempts > 0 ? r->max_attempts : 5;
	int64_t base = r->base_ms > 0 ? r->base_ms : 200, cap = r->cap_ms > 0 ? r->cap_ms : 10000;
	long timeout = r->timeout_ms > 0 ? r->timeout_ms : 30000;
	char ctype[128], *url = NULL, *text = NULL, *auth = NULL;
	char curl_err[CURL_ERROR_SIZE];
	struct curl_slist *hdr = NULL, *x;
	struct buf b = { 0 };
	long status = 0;
	CURL *h = NULL;
	int rc = 0, i;

	if (out)
		*out = NULL;
	if (!method || !path || path[0] != '/')
		return carve_errorf(err, CARVE_EINVAL, "kube request: path must start with '/'");
	url = make_url(k, path);
	if (body)
		text = json_dumps(body, JSON_COMPACT);
	if (!url || (body && !text)) {
		rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
		goto out;
	}
	pthread_mutex_lock(&k->mu);
	b.max = k->body_max;
	pthread_mutex_unlock(&k->mu);
	snprintf(ctype, sizeof(ctype), "Content-Type: %s",
		 content_type ? content_type : "application/json");
	for (i = 0; i < attempts; i++) {
		CURLcode cc;
		curl_off_t retry_after = 0;
		int64_t t0, sleep_ms, ceil_ms;

		if (i > 0) {
			pthread_mutex_lock(&k->mu);
			k->st.retries++;
			pthread_mutex_unlock(&k->mu);
		}
		pthread_mutex_lock(&k->mu);
		rc = auth_header(k, &auth, err);
		pthread_mutex_unlock(&k->mu);
		if (rc)
			goto out;
		hdr = NULL;
		x = curl_slist_append(NULL, "Accept: application/json");
		if (x && body)
			x = curl_slist_append((hdr = x), ctype);
		if (x)
			x = curl_slist_append((hdr = x), "Expect:");
		if (x && auth)
			x = curl_slist_append((hdr = x), auth);
		carve_free(auth);
		auth = NULL;
		if (!x) {
			curl_slist_free_all(hdr);
			rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
			goto out;
		}
		hdr = x;
		if (!h)
			h = handle_take(k);
		if (!h) {
			curl_slist_free_all(hdr);
			rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
			goto out;
		}
		curl_easy_reset(h);
		setup_common(k, h);
		curl_easy_setopt(h, CURLOPT_URL, url);
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout);
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, buf_write);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
		if (stop) {
			/* a reflector's list ends once the reflector stops */
			curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
			curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, stop_progress);
			curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)stop);
		}
		if (strcmp(method, "GET") == 0) {
			curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
		} else {
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
			if (text) {
				curl_easy_setopt(h, CURLOPT_POSTFIELDS, text);
				curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
						 (curl_off_t)strlen(text));
			}
		}
		curl_err[0] = '\0';
		b.n = 0;
		if (b.p)
			b.p[0] = '\0';
		limiter_wait(k);
		t0 = kube_mono_ns();
		cc = curl_easy_perform(h);
		curl_slist_free_all(hdr);
		hdr = NULL;
		if (b.oom) {
			rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
			goto out;
		}
		status = 0;
		if (cc == CURLE_OK) {
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
			/* 0 when the header is absent (or says 0): no wait asked */
			curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &retry_after);
		}
		count_answer(k, status, kube_mono_ns() - t0);
		if (b.too_large) {
			rc = carve_errorf(err, CARVE_EIO, "%s %s: response too large (over %zu bytes)",
					  method, url, b.max);
			curl_easy_cleanup(h); /* the rest of the body is still on its connection */
			h = NULL;
			goto out;
		}
		if (stop && atomic_load(stop)) {
			rc = carve_errorf(err, CARVE_EIO, "%s %s: stopped", method, url);
			if (cc != CURLE_OK) {
				curl_easy_cleanup(h);
				h = NULL;
			}
			goto out;
		}
		if (cc != CURLE_OK) {
			carve_errorf(err, CARVE_EIO, "%s %s: %s", method, url,
				     curl_err[0] ? curl_err : curl_easy_strerror(cc));
			/* A handle that failed is not reused: its connection may be bad. */
			curl_easy_cleanup(h);
			h = NULL;
		} else if (status != 429 && status < 500) {
			break;
		} else {
			carve_errorf(err, CARVE_EIO, "%s %s: HTTP %ld", method, url, status);
		}
		if (i + 1 == attempts || !may_retry(method, cc, status))
			break;
		/* The server's Retry-After is a floor under the jittered backoff. */
		ceil_ms = base << (i < 20 ? i : 20);
		sleep_ms = (int64_t)kube_rand((uint64_t)(ceil_ms < cap ? ceil_ms : cap) + 1);
		if (retry_after > 0) {
			int64_t ra_ms = (retry_after > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S
									 : (int64_t)retry_after) * 1000;

			if (ra_ms > sleep_ms)
				sleep_ms = ra_ms;
		}
		sleep_stoppable(sleep_ms, stop);
		if (stop && atomic_load(stop)) {
			rc = carve_errorf(err, CARVE_EIO, "%s %s: stopped", method, url);
			goto out;
		}
	}
	if (status == 0) {
		rc = CARVE_EIO; /* err holds the transport error */
		goto out;
	}
	rc = (int)status;
	if (out && b.n > 0)
		*out = json_loadb(b.p, b.n, 0, NULL);
out:
	if (h)
		handle_give(k, h);
	carve_free(b.p);
	carve_free(url);
	if (text) {
		json_free_t jfree;

		json_get_alloc_funcs(NULL, &jfree); /* json_dumps allocated it */
		jfree(text);
	}
	return rc;
}

int carve_kube_request(struct carve_kube *k, const char *method, const char *path,
		       const char *content_type, json_t *body, json_t **out,
		       struct carve_error *err)
{
	struct carve_kube_retry r;

	pthread_mutex_lock(&k->mu);
	r = k->retry;
	pthread_mutex_unlock(&k->mu);
	return kube_request_r(k, &r, method, path, content_type, body, out, NULL, err);
}

/* ---- streamed GET ---- */

struct stream {
	struct buf line;
	int (*fn)(void *ctx, const char *text, size_t len);
	void *ctx;
	const atomic_bool *stop;
	bool ended; /* fn asked to end */
};

static size_t stream_write(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct stream *s = ctx;
	size_t n = size * nmemb, i = 0;

	while (i < n) {
		char *nl = memchr(data + i, '\n', n - i);
		size_t m = nl ? (size_t)(nl - (data + i)) : n - i;

		if (s->line.max && m > s->line.max - s->line.n) {
			s->line.too_large = true; /* whole or in pieces */
			return 0;
		}
		if (!nl) {
			if (buf_write(data + i, 1, m, &s->line) != m)
				return 0;
			break;
		}
		if (s->line.n) {
			/* the line began in an earlier piece */
			if (buf_write(data + i, 1, m, &s->line) != m)
				return 0;
			if (s->fn(s->ctx, s->line.p, s->line.n)) {
				s->ended = true;
				return 0;
			}
			s->line.n = 0;
		} else if (m && s->fn(s->ctx, data + i, m)) {
			s->ended = true;
			return 0;
		}
		i += m + 1;
	}
	return n;
}

int kube_stream(struct carve_kube *k, const char *path, int timeout_s,
		int (*line)(void *ctx, const char *text, size_t len), void *ctx,
		const atomic_bool *stop, struct carve_error *err)
{
	struct stream s = { .fn = line, .ctx = ctx, .stop = stop };
	char curl_err[CURL_ERROR_SIZE], *url = make_url(k, path), *auth = NULL;
	struct curl_slist *hdr = NULL, *x;
	long status = 0;
	CURLcode cc;
	int64_t t0;
	CURL *h;
	int rc;

	if (!url)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	pthread_mutex_lock(&k->mu);
	s.line.max = k->line_max;
	rc = auth_header(k, &auth, err);
	pthread_mutex_unlock(&k->mu);
	if (rc) {
		carve_free(url);
		return rc;
	}
	x = curl_slist_append(NULL, "Accept: application/json");
	if (x && auth)
		x = curl_slist_append((hdr = x), auth);
	carve_free(auth);
	h = x ? handle_take(k) : NULL;
	if (!x || !h) {
		curl_slist_free_all(x ? x : hdr);
		carve_free(url);
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	}
	hdr = x;
	curl_easy_reset(h);
	setup_common(k, h);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, stream_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, stop_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)stop);
	/* A stream silent for 2 minutes is dead: a healthy watch carries
	 * bookmarks far more often than that. */
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 120L);
	/* The server ends the watch after timeoutSeconds; a guard beyond it
	 * for a server that never does. */
	curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)(timeout_s > 0 ? timeout_s + 60 : 0));
	curl_err[0] = '\0';
	limiter_wait(k);
	t0 = kube_mono_ns();
	cc = curl_easy_perform(h);
	curl_slist_free_all(hdr);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	{
		/* A watch waits on the server only until its answer begins; the
		 * open stream after that is not waiting. */
		curl_off_t first_us = 0;

		if (curl_easy_getinfo(h, CURLINFO_STARTTRANSFER_TIME_T, &first_us) != CURLE_OK ||
		    first_us <= 0)
			first_us = (kube_mono_ns() - t0) / 1000;
		count_answer(k, status > 0 ? status : 0, (int64_t)first_us * 1000);
	}
	if (s.line.oom) {
		rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
	} else if (s.line.too_large) {
		rc = carve_errorf(err, CARVE_ERANGE, "GET %s: response too large (a line over %zu bytes)",
				  url, s.line.max);
	} else if (cc == CURLE_OK || s.ended || (cc == CURLE_ABORTED_BY_CALLBACK && atomic_load(stop))) {
		/* The last line may lack its newline (a Status body); a line cut
		 * short by stop is not handed on. */
		if (cc == CURLE_OK && !s.ended && s.line.n)
			line(ctx, s.line.p, s.line.n);
		rc = status > 0 ? (int)status : 200;
	} else if (status >= 200 && status < 300) {
		/* The stream broke after it began: resumable, like a normal end. */
		rc = (int)status;
	} else {
		rc = carve_errorf(err, CARVE_EIO, "GET %s: %s", url,
				  curl_err[0] ? curl_err : curl_easy_strerror(cc));
	}
	if (cc == CURLE_OK || s.ended || atomic_load(stop))
		handle_give(k, h);
	else
		curl_easy_cleanup(h);
	carve_free(s.line.p);
	carve_free(url);
	return rc;
}
