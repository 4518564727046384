/*
 * test_kube_client.c - the API client (http.c, watch.c, store.c,
 * lease.c) against the fake API server (tests/kube/fakeapi.py, started
 * here on loopback and stopped here; it also exits by itself when this
 * process dies): requests of every method, retries on 429 and 500, no
 * retry on 409, TLS with a CA and a bearer token (also from a file that
 * changes), the reflector (paged list, REPLACE, events in order, a
 * dropped watch resumed without a relist, compaction answered by a
 * relist), the store, and leader election with a leader killed -9.
 * A small raw server checks the watch parser on lines cut across reads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "carve/kube.h"
#include "kube_int.h"

static char tmp[64];
static const char *fake_py;

/* ---- the fake API server ---- */

struct fake {
	pid_t pid;
	int port;
	char url[64];
};

static void fake_start(struct fake *f, const char *extra1, const char *extra2,
		       const char *extra3, const char *extra4)
{
	char pf[128];
	int i;

	snprintf(pf, sizeof(pf), "%s/port.%d", tmp, (int)kube_rand(1000000));
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0) {
		const char *argv[16] = { "/usr/bin/python3", fake_py, "--port-file", pf,
					 "--max-seconds", "120", "--bookmark-seconds", "0.3" };
		int n = 8;

		if (extra1)
			argv[n++] = extra1;
		if (extra2)
			argv[n++] = extra2;
		if (extra3)
			argv[n++] = extra3;
		if (extra4)
			argv[n++] = extra4;
		argv[n] = NULL;
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (i = 0; i < 1000; i++) { /* up to 20 s */
		FILE *pfile = fopen(pf, "r");

		if (pfile) {
			int ok = fscanf(pfile, "%d", &f->port);

			fclose(pfile);
			if (ok == 1 && f->port > 0)
				break;
		}
		assert_int_equal(waitpid(f->pid, NULL, WNOHANG), 0);
		usleep(20000);
	}
	assert_true(f->port > 0);
	unlink(pf);
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d", f->port);
}

static void fake_stop(struct fake *f)
{
	kill(f->pid, SIGTERM);
	waitpid(f->pid, NULL, 0);
}

static struct carve_kube *client_for(const char *server)
{
	struct carve_kube_config c = { 0 };
	struct carve_kube_retry r = { .base_ms = 20, .cap_ms = 200 };
	struct carve_error err = { 0 };
	struct carve_kube *k;

	c.server = (char *)server;
	c.ns = (char *)"default";
	k = carve_kube_create(&c, &err);
	assert_non_null(k);
	carve_kube_set_retry(k, &r);
	return k;
}

static int req(struct carve_kube *k, const char *method, const char *path, const char *ctype,
	       const char *body, json_t **out)
{
	json_t *b = body ? json_loads(body, 0, NULL) : NULL;
	struct carve_error err = { 0 };
	int rc;

	if (body)
		assert_non_null(b);
	rc = carve_kube_request(k, method, path, ctype, b, out, &err);
	json_decref(b);
	return rc;
}

static void faults(struct carve_kube *k, const char *body)
{
	assert_int_equal(req(k, "POST", "/fake/faults", NULL, body, NULL), 200);
}

static int64_t ms_since(int64_t t0)
{
	return (kube_mono_ns() - t0) / 1000000;
}

/* ---- requests ---- */

#define CM_PATH "/api/v1/namespaces/default/configmaps"

static void test_methods(void **state)
{
	struct fake f;
	struct carve_kube *k;
	struct carve_kube_stats st;
	json_t *out = NULL;

	(void)state;
	fake_start(&f, NULL, NULL, NULL, NULL);
	k = client_for(f.url);
	assert_int_equal(req(k, "POST", CM_PATH, NULL,
			     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"},"
			     "\"data\":{\"x\":\"1\"}}", &out), 201);
	assert_string_equal(carve_kube_name(out), "a");
	assert_non_null(carve_kube_uid(out));
	json_decref(out);
	assert_int_equal(req(k, "GET", CM_PATH "/a", NULL, NULL, &out), 200);
	assert_string_equal(json_string_value(json_object_get(json_object_get(out, "data"), "x")), "1");
	json_object_set_new(json_object_get(out, "data"), "x", json_string("2"));
	{
		struct carve_error err = { 0 };
		json_t *o2 = NULL;

		assert_int_equal(carve_kube_request(k, "PUT", CM_PATH "/a", NULL, out, &o2, &err), 200);
		assert_string_not_equal(carve_kube_rv(o2), carve_kube_rv(out));
		json_decref(o2);
	}
	json_decref(out);
	assert_int_equal(req(k, "PATCH", CM_PATH "/a", "application/merge-patch+json",
			     "{\"data\":{\"y\":\"3\"}}", &out), 200);
	assert_string_equal(json_string_value(json_object_get(json_object_get(out, "data"), "x")), "2");
	assert_string_equal(json_string_value(json_object_get(json_object_get(out, "data"), "y")), "3");
	json_decref(out);
	/* 409 AlreadyExists: answered at once, not retried. */
	assert_int_equal(req(k, "POST", CM_PATH, NULL,
			     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}",
			     &out), 409);
	assert_string_equal(json_string_value(json_object_get(out, "reason")), "AlreadyExists");
	json_decref(out);
	assert_int_equal(req(k, "DELETE", CM_PATH "/a", NULL, NULL, NULL), 200);
	assert_int_equal(req(k, "GET", CM_PATH "/a", NULL, NULL, &out), 404);
	assert_string_equal(json_string_value(json_object_get(out, "kind")), "Status");
	json_decref(out);
	carve_kube_stats(k, &st);
	assert_int_equal(st.requests, 7);
	assert_int_equal(st.retries, 0);
	assert_int_equal(st.by_class[2], 5);
	assert_int_equal(st.by_class[4], 2);
	assert_true(st.server_ns > 0);
	carve_kube_destroy(k);
	fake_stop(&f);
}

static void test_retries(void **state)
{
	struct carve_kube_retry three = { .max_attempts = 3, .base_ms = 10, .cap_ms = 50 };
	struct carve_error err = { 0 };
	struct carve_kube_stats st;
	struct carve_kube *k, *dead;
	struct fake f;
	json_t *out = NULL;
	int64_t t0;
	int fd, port;

	(void)state;
	fake_start(&f, NULL, NULL, NULL, NULL);
	k = client_for(f.url);
	/* 429 with Retry-After: 1, then the answer. */
	faults(k, "{\"throttle\": 1, \"retry_after\": 1}");
	t0 = kube_mono_ns();
	assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, &out), 200);
	assert_true(ms_since(t0) >= 950);
	assert_string_equal(carve_kube_name(out), "default");
	json_decref(out);
	carve_kube_stats(k, &st);
	assert_int_equal(st.retries, 1);
	assert_int_equal(st.by_class[4], 1);
	/* Two 500s, then the answer. */
	faults(k, "{\"fail_500\": 2}");
	assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 200);
	carve_kube_stats(k, &st);
	assert_int_equal(st.retries, 3);
	assert_int_equal(st.by_class[5], 2);
	/* More 500s than attempts: the last answer comes back. */
	carve_kube_set_retry(k, &three);
	faults(k, "{\"fail_500\": 5}");
	assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, &out), 500);
	assert_string_equal(json_string_value(json_object_get(out, "reason")), "InternalError");
	json_decref(out);
	carve_kube_stats(k, &st);
	assert_int_equal(st.by_class[5], 5);
	faults(k, "{\"reset\": true}");
	/* A 409 on a write is not retried. */
	assert_int_equal(req(k, "POST", CM_PATH, NULL,
			     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}",
			     NULL), 201);
	faults(k, "{\"conflict_next_writes\": 1}");
	carve_kube_stats(k, &st);
	assert_int_equal(req(k, "PATCH", CM_PATH "/c", "application/merge-patch+json",
			     "{\"data\":{\"y\":\"3\"}}", NULL), 409);
	{
		struct carve_kube_stats st2;

		carve_kube_stats(k, &st2);
		assert_int_equal(st2.retries, st.retries);
	}
	carve_kube_destroy(k);
	fake_stop(&f);

	/* No server: every attempt fails, CARVE_EIO with curl's reason. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	{
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t len = sizeof(a);
		char url[64];

		assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
		port = ntohs(a.sin_port);
		close(fd); /* bound once, nobody listens now */
		snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
		dead = client_for(url);
	}
	carve_kube_set_retry(dead, &three);
	assert_int_equal(carve_kube_request(dead, "GET", "/api", NULL, NULL, &out, &err), CARVE_EIO);
	assert_null(out);
	assert_non_null(strstr(err.text, "GET http://127.0.0.1:"));
	carve_kube_stats(dead, &st);
	assert_int_equal(st.requests, 3);
	assert_int_equal(st.by_class[0], 3);
	carve_kube_destroy(dead);
}

static void *three_gets(void *arg)
{
	struct carve_error err = { 0 };
	int i;

	for (i = 0; i < 3; i++)
		if (carve_kube_request(arg, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL,
				       &err) != 200)
			return arg;
	return NULL;
}

static void test_rate_limit(void **state)
{
	struct carve_kube_config c = { 0 };
	struct carve_error err = { 0 };
	struct carve_kube_stats st;
	struct carve_kube *k;
	struct fake f;
	int64_t t0;
	int i;

	(void)state;
	fake_start(&f, NULL, NULL, NULL, NULL);
	c.server = f.url;
	c.qps = 10;
	c.burst = 2;
	k = carve_kube_create(&c, &err);
	assert_non_null(k);
	t0 = kube_mono_ns();
	for (i = 0; i < 5; i++)
		assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 200);
	/* 2 at once, then 3 at 10/s: at least 300 ms. */
	assert_true(ms_since(t0) >= 290);
	carve_kube_stats(k, &st);
	assert_true(st.throttled_ns >= 50000000);
	carve_kube_destroy(k);

	/* One bucket for every thread: 3 threads x 3 requests at 10/s, burst 1. */
	c.burst = 1;
	k = carve_kube_create(&c, &err);
	assert_non_null(k);
	{
		pthread_t th[3];

		t0 = kube_mono_ns();
		for (i = 0; i < 3; i++)
			assert_int_equal(pthread_create(&th[i], NULL, three_gets, k), 0);
		for (i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		assert_true(ms_since(t0) >= 790);
		carve_kube_stats(k, &st);
		assert_int_equal(st.by_class[2], 9);
	}
	carve_kube_destroy(k);
	c.burst = 0;
	assert_null(carve_kube_create(&c, &err));
	assert_string_equal(err.text, "kube client: burst 0 must be >= 1 when qps > 0");
	c.server = (char *)"ftp://x";
	assert_null(carve_kube_create(&c, &err));
	fake_stop(&f);
}

static void write_text(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static char *read_text(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = calloc(1, 65536);

	assert_non_null(fp);
	assert_non_null(buf);
	assert_true(fread(buf, 1, 65535, fp) > 0);
	fclose(fp);
	return buf;
}

static void test_tls_token(void **state)
{
	struct carve_kube_config c = { 0 };
	struct carve_error err = { 0 };
	char tls[128], ca[160], url[64], tokf[160], *pem;
	struct carve_kube *k;
	struct fake f;

	(void)state;
	snprintf(tls, sizeof(tls), "%s/tls", tmp);
	mkdir(tls, 0700);
	fake_start(&f, "--tls-dir", tls, "--token", "t0ken");
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", f.port);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tls);
	c.server = url;
	c.ca_file = ca;
	c.token = (char *)"t0ken";
	k = carve_kube_create(&c, &err);
	assert_non_null(k);
	assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 200);
	carve_kube_destroy(k);

	/* The CA as PEM bytes; a wrong token is 401, not retried. */
	pem = read_text(ca);
	c.ca_file = NULL;
	c.ca_data = pem;
	c.token = (char *)"wrong";
	k = carve_kube_create(&c, &err);
	assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 401);
	carve_kube_destroy(k);

	/* A token file, re-read when it changes. */
	snprintf(tokf, sizeof(tokf), "%s/token", tmp);
	write_text(tokf, "bad\n");
	c.token = NULL;
	c.token_file = tokf;
	k = carve_kube_create(&c, &err);
	assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 401);
	write_text(tokf, "t0ken\n");
	assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 200);
	carve_kube_destroy(k);

	/* No CA: the server's certificate is not trusted; insecure skips it. */
	c.ca_data = NULL;
	c.token_file = NULL;
	c.token = (char *)"t0ken";
	k = carve_kube_create(&c, &err);
	{
		struct carve_kube_retry once = { .max_attempts = 1 };

		carve_kube_set_retry(k, &once);
	}
	assert_int_equal(carve_kube_request(k, "GET", "/api", NULL, NULL, NULL, &err), CARVE_EIO);
	carve_kube_destroy(k);
	c.insecure = true;
	k = carve_kube_create(&c, &err);
	assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 200);
	carve_kube_destroy(k);
	/* A client certificate signed by the test CA, no token: files, then
	 * PEM bytes. */
	{
		char crt[160], key[160], *crt_pem, *key_pem;

		snprintf(crt, sizeof(crt), "%s/client.crt", tls);
		snprintf(key, sizeof(key), "%s/client.key", tls);
		memset(&c, 0, sizeof(c));
		c.server = url;
		c.ca_data = pem;
		k = carve_kube_create(&c, &err);
		assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 401);
		carve_kube_destroy(k);
		c.cert_file = crt;
		c.key_file = key;
		k = carve_kube_create(&c, &err);
		assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 200);
		carve_kube_destroy(k);
		crt_pem = read_text(crt);
		key_pem = read_text(key);
		c.cert_file = c.key_file = NULL;
		c.cert_data = crt_pem;
		c.key_data = key_pem;
		k = carve_kube_create(&c, &err);
		assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 200);
		carve_kube_destroy(k);
		c.key_data = NULL;
		assert_null(carve_kube_create(&c, &err));
		assert_non_null(strstr(err.text, "a client certificate needs its key"));
		free(crt_pem);
		free(key_pem);
	}
	free(pem);
	fake_stop(&f);
}

/* ---- the store ---- */

static json_t *cm(const char *ns, const char *name, const char *rv)
{
	json_t *o = json_pack("{s:s, s:{s:s, s:s}}", "kind", "ConfigMap", "metadata", "name", name,
			      "resourceVersion", rv);

	if (ns)
		json_object_set_new(json_object_get(o, "metadata"), "namespace", json_string(ns));
	return o;
}

static int collect_names(void *ctx, json_t *obj)
{
	char *s = ctx;

	strcat(s, carve_kube_name(obj));
	strcat(s, ",");
	return 0;
}

static void test_store(void **state)
{
	struct carve_kube_store *s = carve_kube_store_create();
	struct carve_error err = { 0 };
	struct carve_kube_event ev = { 0 };
	char names[256] = "";

	(void)state;
	ev.type = CARVE_KEV_ADDED;
	ev.obj = cm("b", "x", "1");
	assert_int_equal(carve_kube_store_apply(s, &ev, &err), 1);
	json_decref(ev.obj);
	ev.obj = cm("b", "x", "1");
	assert_int_equal(carve_kube_store_apply(s, &ev, &err), 0);
	json_decref(ev.obj);
	ev.type = CARVE_KEV_MODIFIED;
	ev.obj = cm("b", "x", "2");
	assert_int_equal(carve_kube_store_apply(s, &ev, &err), 1);
	json_decref(ev.obj);
	ev.obj = cm("a", "z", "3");
	assert_int_equal(carve_kube_store_apply(s, &ev, &err), 1);
	json_decref(ev.obj);
	ev.obj = cm(NULL, "node1", "4");
	assert_int_equal(carve_kube_store_apply(s, &ev, &err), 1);
	json_decref(ev.obj);
	assert_int_equal(carve_kube_store_count(s), 3);
	assert_string_equal(carve_kube_rv(carve_kube_store_get(s, "b", "x")), "2");
	assert_non_null(carve_kube_store_get(s, NULL, "node1"));
	assert_non_null(carve_kube_store_get(s, "", "node1"));
	assert_null(carve_kube_store_get(s, "a", "x"));
	assert_int_equal(carve_kube_store_each(s, collect_names, names), 0);
	assert_string_equal(names, "z,x,node1,");
	ev.obj = json_pack("{s:{s:s}}", "metadata", "namespace", "a");
	assert_int_equal(carve_kube_store_apply(s, &ev, &err), CARVE_EINVAL);
	assert_string_equal(err.text, "an object without metadata.name (or one too long)");
	json_decref(ev.obj);
	ev.type = CARVE_KEV_DELETED;
	ev.obj = cm("b", "x", "5");
	assert_int_equal(carve_kube_store_apply(s, &ev, &err), 1);
	assert_int_equal(carve_kube_store_apply(s, &ev, &err), 0);
	json_decref(ev.obj);
	/* REPLACE: the same content changes nothing; a new one replaces all. */
	ev.type = CARVE_KEV_REPLACE;
	ev.obj = json_pack("[o, o]", cm("a", "z", "3"), cm(NULL, "node1", "4"));
	assert_int_equal(carve_kube_store_apply(s, &ev, &err), 0);
	json_decref(ev.obj);
	ev.obj = json_pack("[o]", cm("a", "w", "9"));
	assert_int_equal(carve_kube_store_apply(s, &ev, &err), 1);
	json_decref(ev.obj);
	assert_int_equal(carve_kube_store_count(s), 1);
	ev.obj = json_pack("[o, {}]", cm("a", "q", "9"));
	assert_int_equal(carve_kube_store_apply(s, &ev, &err), CARVE_EINVAL);
	json_decref(ev.obj);
	assert_non_null(carve_kube_store_get(s, "a", "w"));
	{
		json_t *o = cm("a", "w", "10");

		assert_int_equal(carve_kube_store_put(s, o), 0);
		json_decref(o);
		assert_string_equal(carve_kube_rv(carve_kube_store_get(s, "a", "w")), "10");
	}
	carve_kube_store_destroy(s);
}

static void test_queue(void **state)
{
	struct carve_kube_queue *q = carve_kube_queue_create();
	struct carve_kube_event *ev = NULL;
	int64_t t0 = kube_mono_ns();

	(void)state;
	assert_int_equal(carve_kube_queue_take(q, 0, &ev), 0);
	assert_int_equal(carve_kube_queue_take(q, 50, &ev), 0);
	assert_true(ms_since(t0) >= 45);
	carve_kube_queue_wake(q);
	t0 = kube_mono_ns();
	assert_int_equal(carve_kube_queue_take(q, -1, &ev), 0);
	assert_true(ms_since(t0) < 1000);
	assert_null(ev);
	carve_kube_queue_destroy(q);
}

/* ---- the reflector ---- */

struct seen {
	struct carve_kube_store *store;
	char log[4096]; /* "R3 A:d M:a D:b ..." */
	int replaces;
};

/* Takes events until the log ends with want (NULL: until `replaces`
 * REPLACE events came), or 10 s pass. */
static void wait_for(struct carve_kube_queue *q, struct seen *s, const char *want, int replaces)
{
	int64_t t0 = kube_mono_ns();
	size_t wl = want ? strlen(want) : 0;

	while (ms_since(t0) < 10000) {
		struct carve_kube_event *ev;
		struct carve_error err = { 0 };
		size_t ll = strlen(s->log);
		int n, i;

		if (want ? ll >= wl && strcmp(s->log + ll - wl, want) == 0 : s->replaces >= replaces)
			return;
		n = carve_kube_queue_take(q, 200, &ev);
		for (i = 0; i < n; i++) {
			char item[128];

			if (ev[i].type == CARVE_KEV_REPLACE) {
				snprintf(item, sizeof(item), "R%zu ", json_array_size(ev[i].obj));
				s->replaces++;
			} else {
				snprintf(item, sizeof(item), "%c:%s ",
					 "AMD"[ev[i].type], carve_kube_name(ev[i].obj));
			}
			assert_true(strlen(s->log) + strlen(item) < sizeof(s->log));
			strcat(s->log, item);
			assert_true(carve_kube_store_apply(s->store, &ev[i], &err) >= 0);
			json_decref(ev[i].obj);
		}
		carve_free(ev);
	}
	fail_msg("events: \"%s\", want them to end with \"%s\" (or %d REPLACE)", s->log,
		 want ? want : "", replaces);
}

static void wait_log(struct carve_kube_queue *q, struct seen *s, const char *want)
{
	wait_for(q, s, want, 0);
}

static void create_cm(struct carve_kube *k, const char *name)
{
	char body[256];

	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
		 "\"labels\":{\"app\":\"t\"}}}", name);
	assert_int_equal(req(k, "POST", CM_PATH, NULL, body, NULL), 201);
}

static int store_names(void *ctx, json_t *obj)
{
	return collect_names(ctx, obj);
}

/* The store holds exactly what the server lists. */
static void assert_store_is_server(struct carve_kube *k, struct carve_kube_store *store)
{
	char a[1024] = "", b[1024] = "";
	json_t *out = NULL, *it;
	size_t i;

	assert_int_equal(req(k, "GET", CM_PATH "?labelSelector=app%3Dt", NULL, NULL, &out), 200);
	json_array_foreach(json_object_get(out, "items"), i, it) {
		json_t *mine = carve_kube_store_get(store, "default", carve_kube_name(it));

		assert_non_null(mine);
		assert_string_equal(carve_kube_rv(mine), carve_kube_rv(it));
		strcat(a, carve_kube_name(it));
		strcat(a, ",");
	}
	assert_int_equal(carve_kube_store_count(store), json_array_size(json_object_get(out, "items")));
	json_decref(out);
	carve_kube_store_each(store, store_names, b);
	assert_string_equal(a, b);
}

static void test_reflector(void **state)
{
	struct carve_kube_watch_spec spec = { .kind = "ConfigMap", .path = CM_PATH,
					      .label_selector = "app=t", .page_size = 2 };
	struct carve_kube_queue *q = carve_kube_queue_create();
	struct seen s = { .store = carve_kube_store_create() };
	struct carve_kube_watch_stats ws;
	struct carve_error err = { 0 };
	struct carve_kube_reflector *r;
	struct carve_kube *k;
	struct fake f;
	int64_t t0;

	(void)state;
	fake_start(&f, NULL, NULL, NULL, NULL);
	k = client_for(f.url);
	create_cm(k, "a");
	create_cm(k, "b");
	create_cm(k, "c");
	/* Not matched by the label selector: never seen. */
	assert_int_equal(req(k, "POST", CM_PATH, NULL,
			     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"other\"}}",
			     NULL), 201);
	r = carve_kube_watch_start(k, &spec, 7, q, &err);
	assert_non_null(r);
	/* Three items over two pages, then the watch. */
	wait_log(q, &s, "R3 ");
	assert_string_equal(json_string_value(json_object_get(carve_kube_store_get(s.store, "default", "a"),
							      "kind")), "ConfigMap");
	create_cm(k, "d");
	assert_int_equal(req(k, "PATCH", CM_PATH "/a", "application/merge-patch+json",
			     "{\"data\":{\"v\":\"1\"}}", NULL), 200);
	assert_int_equal(req(k, "DELETE", CM_PATH "/b", NULL, NULL, NULL), 200);
	wait_log(q, &s, "R3 A:d M:a D:b ");
	assert_store_is_server(k, s.store);

	/* A dropped watch is resumed from the last resourceVersion: no relist. */
	faults(k, "{\"drop_watch_after\": 1}");
	create_cm(k, "e");
	create_cm(k, "f");
	wait_log(q, &s, "A:e A:f ");
	carve_kube_watch_stats(r, &ws);
	assert_int_equal(ws.lists, 1);
	assert_int_equal(ws.relists, 0);
	assert_true(ws.watches >= 2);
	assert_int_equal(s.replaces, 1);
	assert_true(ws.synced);
	/* Bookmarks come every 0.3 s. */
	t0 = kube_mono_ns();
	do {
		carve_kube_watch_stats(r, &ws);
		usleep(20000);
	} while (ws.bookmarks == 0 && ms_since(t0) < 5000);
	assert_true(ws.bookmarks > 0);

	/* Compaction: the watch gets 410, the reflector lists again. */
	faults(k, "{\"compact\": true}");
	create_cm(k, "g"); /* in the relist or an event after it */
	wait_for(q, &s, NULL, 2);
	create_cm(k, "h");
	wait_log(q, &s, "A:h ");
	assert_store_is_server(k, s.store);
	carve_kube_watch_stats(r, &ws);
	assert_int_equal(ws.lists, 2);
	assert_int_equal(ws.relists, 1);
	assert_int_equal(s.replaces, 2);

	/* Stop interrupts the open watch within about a second. */
	t0 = kube_mono_ns();
	carve_kube_watch_stop(r);
	assert_true(ms_since(t0) < 1500);
	carve_kube_store_destroy(s.store);
	carve_kube_queue_destroy(q);
	carve_kube_destroy(k);
	fake_stop(&f);
}

static void test_optional_kind(void **state)
{
	struct carve_kube_watch_spec spec = { .kind = "PodGroup", .optional = true,
					      .path = "/apis/scheduling.volcano.sh/v1beta1/podgroups" };
	struct carve_kube_queue *q = carve_kube_queue_create();
	struct carve_kube_watch_stats ws;
	struct carve_error err = { 0 };
	struct carve_kube_reflector *r;
	struct carve_kube_event *ev;
	struct carve_kube_stats st;
	struct carve_kube *k;
	struct fake f;
	int64_t t0;

	(void)state;
	fake_start(&f, NULL, NULL, NULL, NULL);
	k = client_for(f.url);
	r = carve_kube_watch_start(k, &spec, 1, q, &err);
	assert_non_null(r);
	t0 = kube_mono_ns();
	do {
		carve_kube_stats(k, &st);
		usleep(10000);
	} while (st.by_class[4] == 0 && ms_since(t0) < 5000);
	assert_int_equal(st.by_class[4], 1); /* the 404, not an error */
	assert_int_equal(carve_kube_queue_take(q, 100, &ev), 0);
	carve_kube_watch_stats(r, &ws);
	assert_int_equal(ws.errors, 0);
	assert_false(ws.synced);
	/* Waiting 30 s to try again, yet it stops at once. */
	t0 = kube_mono_ns();
	carve_kube_watch_stop(r);
	assert_true(ms_since(t0) < 1000);
	spec.path = "no-slash";
	assert_null(carve_kube_watch_start(k, &spec, 1, q, &err));
	carve_kube_queue_destroy(q);
	carve_kube_destroy(k);
	fake_stop(&f);
}

/* ---- the stream parser, with lines cut across reads ---- */

static void *raw_server(void *arg)
{
	int ls = *(int *)arg, c, one = 1;
	char buf[4096];
	static const char *pieces[] = {
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p1\",\"resourceVersion\":\"1\"}}}\n{\"ty",
		"pe\":\"MODIFIED\",\"object\":{\"metadata\":{\"na",
		"me\":\"p1\",\"resourceVersion\":\"2\"}}}\n",
		"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"3\"}}}\n"
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p2\",\"resourceVersion\":\"4\"}}}\n"
		"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"p1\",\"resourceVersion\":\"5\"}}}",
	};
	size_t i;

	c = accept(ls, NULL, NULL);
	if (c < 0)
		return NULL;
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (recv(c, buf, sizeof(buf), 0) <= 0) {
		close(c);
		return NULL;
	}
	for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		if (send(c, pieces[i], strlen(pieces[i]), MSG_NOSIGNAL) < 0)
			break;
		usleep(30000);
	}
	close(c);
	return NULL;
}

static int raw_line(void *ctx, const char *text, size_t len)
{
	char *log = ctx;
	json_t *j = json_loadb(text, len, 0, NULL);
	json_t *o = json_object_get(j, "object");

	assert_non_null(j);
	strcat(log, json_string_value(json_object_get(j, "type")));
	strcat(log, ":");
	strcat(log, carve_kube_rv(o));
	strcat(log, " ");
	json_decref(j);
	return 0;
}

static void test_stream_lines(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct carve_error err = { 0 };
	atomic_bool stop = false;
	char url[64], log[512] = "";
	struct carve_kube *k;
	pthread_t th;
	int ls;

	(void)state;
	ls = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(ls, 1), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &len), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	assert_int_equal(pthread_create(&th, NULL, raw_server, &ls), 0);
	k = client_for(url);
	assert_int_equal(kube_stream(k, "/w", 10, raw_line, log, &stop, &err), 200);
	/* Every line whole, in order, the last one without its newline too. */
	assert_string_equal(log, "ADDED:1 MODIFIED:2 BOOKMARK:3 ADDED:4 DELETED:5 ");
	pthread_join(th, NULL);
	close(ls);
	carve_kube_destroy(k);
}

/* ---- a scripted API: the exact list and watch queries, HTTP 410 ---- */

struct script {
	int ls;
	char got[5][512]; /* the request line of each connection */
};

static int accept_request(int ls, char *line, size_t size)
{
	char buf[4096] = "";
	size_t n = 0;
	int c = accept(ls, NULL, NULL);

	if (c < 0)
		return -1;
	while (n < sizeof(buf) - 1 && !strstr(buf, "\r\n\r\n")) {
		ssize_t m = recv(c, buf + n, sizeof(buf) - 1 - n, 0);

		if (m <= 0)
			break;
		n += (size_t)m;
		buf[n] = '\0';
	}
	buf[n] = '\0';
	snprintf(line, size, "%.*s", (int)strcspn(buf, "\r"), buf);
	return c;
}

static void answer(int c, int status, const char *body)
{
	char head[256];

	snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
		 "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, strlen(body));
	(void)!send(c, head, strlen(head), MSG_NOSIGNAL);
	(void)!send(c, body, strlen(body), MSG_NOSIGNAL);
	close(c);
}

#define ITEM(n) "{\"metadata\":{\"name\":\"" n "\",\"namespace\":\"default\",\"resourceVersion\":\"1\"}}"

static void *script_server(void *arg)
{
	struct script *s = arg;
	char buf[64];
	int c;

	if ((c = accept_request(s->ls, s->got[0], sizeof(s->got[0]))) < 0)
		return NULL;
	answer(c, 200, "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{"
		       "\"resourceVersion\":\"5\",\"continue\":\"a b\"},\"items\":[" ITEM("a") "," ITEM("b") "]}");
	if ((c = accept_request(s->ls, s->got[1], sizeof(s->got[1]))) < 0)
		return NULL;
	answer(c, 200, "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{"
		       "\"resourceVersion\":\"5\"},\"items\":[" ITEM("c") "]}");
	if ((c = accept_request(s->ls, s->got[2], sizeof(s->got[2]))) < 0)
		return NULL;
	answer(c, 410, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
		       "\"reason\":\"Expired\",\"code\":410}");
	if ((c = accept_request(s->ls, s->got[3], sizeof(s->got[3]))) < 0)
		return NULL;
	answer(c, 200, "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{"
		       "\"resourceVersion\":\"9\"},\"items\":[" ITEM("a") "]}");
	if ((c = accept_request(s->ls, s->got[4], sizeof(s->got[4]))) < 0)
		return NULL;
	{
		static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
					   "Connection: close\r\n\r\n"
					   "{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\","
					   "\"metadata\":{\"name\":\"d\",\"namespace\":\"default\","
					   "\"resourceVersion\":\"10\"}}}\n";

		(void)!send(c, head, strlen(head), MSG_NOSIGNAL);
	}
	/* Held open until the reflector stops. */
	while (recv(c, buf, sizeof(buf), 0) > 0)
		;
	close(c);
	return NULL;
}

static void test_reflector_queries_and_410(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct carve_kube_watch_spec spec = { .kind = "ConfigMap", .path = CM_PATH, .page_size = 2,
					      .field_selector = "metadata.name!=x",
					      .label_selector = "app=t" };
	struct carve_kube_queue *q = carve_kube_queue_create();
	struct seen s = { .store = carve_kube_store_create() };
	struct carve_kube_watch_stats ws;
	struct carve_error err = { 0 };
	struct carve_kube_reflector *r;
	struct script sc = { 0 };
	socklen_t len = sizeof(a);
	struct carve_kube *k;
	char url[64];
	pthread_t th;
	int timeout;
	const char *sel = "&fieldSelector=metadata.name%21%3Dx&labelSelector=app%3Dt";
	char want[512];

	(void)state;
	sc.ls = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(bind(sc.ls, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(sc.ls, 4), 0);
	assert_int_equal(getsockname(sc.ls, (struct sockaddr *)&a, &len), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	assert_int_equal(pthread_create(&th, NULL, script_server, &sc), 0);
	k = client_for(url);
	r = carve_kube_watch_start(k, &spec, 3, q, &err);
	assert_non_null(r);
	wait_log(q, &s, "R3 R1 A:d ");
	carve_kube_watch_stats(r, &ws);
	assert_int_equal(ws.lists, 2);
	assert_int_equal(ws.relists, 1);
	assert_int_equal(ws.watches, 2);
	assert_int_equal(ws.events, 1);
	carve_kube_watch_stop(r);
	pthread_join(th, NULL);
	close(sc.ls);

	snprintf(want, sizeof(want), "GET %s?limit=2%s HTTP/1.1", CM_PATH, sel);
	assert_string_equal(sc.got[0], want);
	snprintf(want, sizeof(want), "GET %s?limit=2%s&continue=a%%20b HTTP/1.1", CM_PATH, sel);
	assert_string_equal(sc.got[1], want);
	snprintf(want, sizeof(want), "GET %s?watch=1&resourceVersion=5&allowWatchBookmarks=true"
		 "&timeoutSeconds=", CM_PATH);
	assert_int_equal(strncmp(sc.got[2], want, strlen(want)), 0);
	timeout = atoi(sc.got[2] + strlen(want));
	assert_true(timeout >= 300 && timeout <= 600);
	assert_non_null(strstr(sc.got[2], sel));
	snprintf(want, sizeof(want), "GET %s?limit=2%s HTTP/1.1", CM_PATH, sel);
	assert_string_equal(sc.got[3], want);
	assert_non_null(strstr(sc.got[4], "watch=1&resourceVersion=9&"));
	/* The list's kind and apiVersion reach its items. */
	assert_string_equal(json_string_value(json_object_get(
				    carve_kube_store_get(s.store, "default", "a"), "kind")), "ConfigMap");
	assert_int_equal(carve_kube_store_count(s.store), 2);
	carve_kube_store_destroy(s.store);
	carve_kube_queue_destroy(q);
	carve_kube_destroy(k);
}

/* ---- leader election ---- */

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/default/leases/carve"

static const struct carve_kube_lease_opts opts_a = { .ns = "default", .name = "carve",
						     .identity = "a", .lease_ms = 1500,
						     .renew_ms = 1000, .retry_ms = 200 };

static bool wait_leader(struct carve_kube_elector *e, struct carve_kube_queue *q, int ms)
{
	int64_t t0 = kube_mono_ns();

	while (!carve_kube_is_leader(e) && ms_since(t0) < ms) {
		struct carve_kube_event *ev = NULL;

		assert_int_equal(carve_kube_queue_take(q, 50, &ev), 0);
	}
	return carve_kube_is_leader(e);
}

static json_t *lease_spec(struct carve_kube *k, json_t **hold)
{
	assert_int_equal(req(k, "GET", LEASE_PATH, NULL, NULL, hold), 200);
	return json_object_get(*hold, "spec");
}

static void test_election(void **state)
{
	struct carve_kube_lease_opts ob = opts_a;
	struct carve_kube_queue *q = carve_kube_queue_create();
	struct carve_error err = { 0 };
	struct carve_kube_elector *b;
	struct carve_kube *k;
	struct fake f;
	json_t *hold = NULL, *spec;
	int64_t t_kill, took;
	int pipefd[2];
	pid_t child;
	char c;

	(void)state;
	fake_start(&f, NULL, NULL, NULL, NULL);
	/* Candidate a runs in a child process, so it can be killed -9 while
	 * it leads (it never releases the Lease). */
	assert_int_equal(pipe(pipefd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct carve_kube *ka = client_for(f.url);
		struct carve_kube_queue *qa = carve_kube_queue_create();
		struct carve_kube_elector *a = carve_kube_elect_start(ka, &opts_a, qa, NULL);

		if (a && wait_leader(a, qa, 5000))
			(void)!write(pipefd[1], "L", 1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);

	k = client_for(f.url);
	spec = lease_spec(k, &hold);
	assert_string_equal(json_string_value(json_object_get(spec, "holderIdentity")), "a");
	assert_int_equal(json_integer_value(json_object_get(spec, "leaseDurationSeconds")), 2);
	assert_int_equal(json_integer_value(json_object_get(spec, "leaseTransitions")), 0);
	assert_non_null(strchr(json_string_value(json_object_get(spec, "renewTime")), '.'));
	json_decref(hold);

	ob.identity = "b";
	b = carve_kube_elect_start(k, &ob, q, &err);
	assert_non_null(b);
	/* a keeps renewing: b must not lead. */
	assert_false(wait_leader(b, q, 2500));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	t_kill = kube_mono_ns();
	/* b takes over once the record stayed unchanged for the whole
	 * leaseDurationSeconds (2 s), not before. */
	assert_true(wait_leader(b, q, 5000));
	took = ms_since(t_kill);
	assert_true(took >= 1500);
	assert_true(took <= 3500);
	spec = lease_spec(k, &hold);
	assert_string_equal(json_string_value(json_object_get(spec, "holderIdentity")), "b");
	assert_int_equal(json_integer_value(json_object_get(spec, "leaseTransitions")), 1);
	json_decref(hold);

	/* Renewals failing past the renew deadline: b stops leading. */
	faults(k, "{\"fail_500\": 1000, \"match\": \"/leases/\"}");
	t_kill = kube_mono_ns();
	while (carve_kube_is_leader(b) && ms_since(t_kill) < 3000)
		usleep(20000);
	assert_false(carve_kube_is_leader(b));
	took = ms_since(t_kill);
	assert_true(took <= 1500);
	faults(k, "{\"reset\": true}");
	assert_true(wait_leader(b, q, 3000));

	/* Stop releases the Lease: another candidate takes it at once. */
	carve_kube_elect_stop(b);
	spec = lease_spec(k, &hold);
	assert_string_equal(json_string_value(json_object_get(spec, "holderIdentity")), "");
	json_decref(hold);
	ob.identity = "c";
	b = carve_kube_elect_start(k, &ob, q, &err);
	assert_true(wait_leader(b, q, 1000));
	carve_kube_elect_stop(b);

	ob.renew_ms = 2000;
	assert_null(carve_kube_elect_start(k, &ob, q, &err));
	assert_non_null(strstr(err.text, "need retry < renew deadline < lease"));
	carve_kube_queue_destroy(q);
	carve_kube_destroy(k);
	fake_stop(&f);
}

/* ---- review fixes: a canned server, retries, caps, stop, relists ---- */

/* Answers connection i with canned[i] (status 0: a watch stream that
 * sends body and stays open until the client goes); records each
 * request line. */
struct canned {
	int status;
	const char *body;
	const char *extra; /* more header lines, or NULL */
};

struct seq {
	int ls;
	const struct canned *c;
	int n;
	atomic_int served;
	char got[8][512];
};

static void *seq_server(void *arg)
{
	struct seq *s = arg;
	char buf[64];
	int i, c;

	for (i = 0; i < s->n; i++) {
		if ((c = accept_request(s->ls, s->got[i], sizeof(s->got[i]))) < 0)
			return NULL;
		s->served = i + 1;
		if (s->c[i].status) {
			char head[512];

			snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
				 "%sContent-Length: %zu\r\nConnection: close\r\n\r\n", s->c[i].status,
				 s->c[i].extra ? s->c[i].extra : "", strlen(s->c[i].body));
			(void)!send(c, head, strlen(head), MSG_NOSIGNAL);
			(void)!send(c, s->c[i].body, strlen(s->c[i].body), MSG_NOSIGNAL);
			close(c);
			continue;
		}
		{
			static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
						   "Connection: close\r\n\r\n";

			(void)!send(c, head, strlen(head), MSG_NOSIGNAL);
			(void)!send(c, s->c[i].body, strlen(s->c[i].body), MSG_NOSIGNAL);
		}
		while (recv(c, buf, sizeof(buf), 0) > 0)
			;
		close(c);
	}
	return NULL;
}

static struct carve_kube *seq_start(struct seq *s, pthread_t *th)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	char url[64];

	s->ls = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(bind(s->ls, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->ls, 8), 0);
	assert_int_equal(getsockname(s->ls, (struct sockaddr *)&a, &len), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	assert_int_equal(pthread_create(th, NULL, seq_server, s), 0);
	return client_for(url);
}

static void seq_end(struct seq *s, pthread_t th)
{
	shutdown(s->ls, SHUT_RDWR); /* a server still waiting in accept ends */
	pthread_join(th, NULL);
	close(s->ls);
}

#define LIST(rv, cont, items)                                                                  \
	"{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" rv \
	"\"" cont "},\"items\":[" items "]}"
#define STATUS(code) "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"code\":" #code "}"

/* A 5xx without Retry-After still waits the backoff; POST is retried
 * only when it was never sent or got 429. */
static void test_retry_rules(void **state)
{
	struct carve_kube_retry five = { .max_attempts = 5, .base_ms = 100, .cap_ms = 1000 };
	struct carve_kube_retry slow = { .max_attempts = 3, .base_ms = 10, .timeout_ms = 300 };
	const char *cm = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"p\"}}";
	struct carve_kube_stats st, st2;
	struct carve_kube *k;
	struct fake f;
	int64_t t0;

	(void)state;
	fake_start(&f, NULL, NULL, NULL, NULL);
	k = client_for(f.url);
	carve_kube_set_retry(k, &five);
	/* Four 500s (no Retry-After): four jittered waits of up to
	 * 100, 200, 400, 800 ms, not none at all. */
	faults(k, "{\"fail_500\": 4}");
	t0 = kube_mono_ns();
	assert_int_equal(req(k, "GET", "/api/v1/namespaces/default", NULL, NULL, NULL), 200);
	assert_true(ms_since(t0) >= 40);
	/* A POST answered 500 is not sent again. */
	faults(k, "{\"fail_500\": 1}");
	carve_kube_stats(k, &st);
	assert_int_equal(req(k, "POST", CM_PATH, NULL, cm, NULL), 500);
	carve_kube_stats(k, &st2);
	assert_int_equal(st2.requests - st.requests, 1);
	assert_int_equal(st2.retries, st.retries);
	/* A POST answered 429 is. */
	faults(k, "{\"throttle\": 1, \"retry_after\": 0}");
	carve_kube_stats(k, &st2);
	assert_int_equal(req(k, "POST", CM_PATH, NULL, cm, NULL), 201);
	carve_kube_stats(k, &st);
	assert_int_equal(st.requests - st2.requests, 2);
	/* A PUT answered 500 is. */
	faults(k, "{\"fail_500\": 1}");
	carve_kube_stats(k, &st);
	assert_int_equal(req(k, "PUT", CM_PATH "/p", NULL, cm, NULL), 200);
	carve_kube_stats(k, &st2);
	assert_int_equal(st2.requests - st.requests, 2);
	/* A POST that timed out after sending is not sent again. */
	carve_kube_set_retry(k, &slow);
	faults(k, "{\"latency_ms\": 1000}");
	carve_kube_stats(k, &st2);
	assert_int_equal(req(k, "POST", CM_PATH, NULL,
			     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"q\"}}",
			     NULL), CARVE_EIO);
	carve_kube_stats(k, &st);
	assert_int_equal(st.requests - st2.requests, 1);
	/* A GET that timed out is. */
	assert_int_equal(req(k, "GET", CM_PATH, NULL, NULL, NULL), CARVE_EIO);
	carve_kube_stats(k, &st2);
	assert_int_equal(st2.requests - st.requests, 3);
	carve_kube_destroy(k);
	fake_stop(&f);
}

struct stopper {
	atomic_bool *stop;
	int ms;
};

static void *stop_later(void *arg)
{
	struct stopper *s = arg;

	usleep((useconds_t)s->ms * 1000);
	atomic_store(s->stop, true);
	return NULL;
}

/* Stop ends a list in flight and a retry's sleep. */
static void test_stop_prompt(void **state)
{
	struct carve_kube_watch_spec spec = { .kind = "ConfigMap", .path = CM_PATH };
	struct carve_kube_retry r = { .max_attempts = 3, .base_ms = 10 };
	struct carve_kube_queue *q = carve_kube_queue_create();
	struct carve_error err = { 0 };
	struct carve_kube_reflector *rf;
	atomic_bool stop = false;
	struct stopper sp = { &stop, 300 };
	struct carve_kube *k;
	pthread_t th;
	struct fake f;
	int64_t t0;

	(void)state;
	fake_start(&f, NULL, NULL, NULL, NULL);
	k = client_for(f.url);
	/* A retry waiting out Retry-After: 5. */
	faults(k, "{\"throttle\": 1, \"retry_after\": 5}");
	assert_int_equal(pthread_create(&th, NULL, stop_later, &sp), 0);
	t0 = kube_mono_ns();
	assert_int_equal(kube_request_r(k, &r, "GET", CM_PATH, NULL, NULL, NULL, &stop, &err),
			 CARVE_EIO);
	assert_true(ms_since(t0) < 1500);
	assert_non_null(strstr(err.text, "stopped"));
	pthread_join(th, NULL);
	/* A list the server is slow to answer. */
	faults(k, "{\"reset\": true, \"latency_ms\": 5000}");
	rf = carve_kube_watch_start(k, &spec, 1, q, &err);
	assert_non_null(rf);
	usleep(300000); /* the list is in flight */
	t0 = kube_mono_ns();
	carve_kube_watch_stop(rf);
	assert_true(ms_since(t0) < 1500);
	faults(k, "{\"reset\": true}");
	carve_kube_queue_destroy(q);
	carve_kube_destroy(k);
	fake_stop(&f);
}

/* A response body or a watch line over the caps. */
static void test_caps(void **state)
{
	struct carve_kube_watch_spec spec = { .kind = "ConfigMap", .path = CM_PATH,
					      .label_selector = "app=t" };
	struct carve_kube_queue *q = carve_kube_queue_create();
	struct seen s = { .store = carve_kube_store_create() };
	struct carve_kube_watch_stats ws;
	struct carve_error err = { 0 };
	struct carve_kube_reflector *r;
	char body[8192], big[4096];
	struct carve_kube *k;
	struct fake f;
	json_t *out = NULL;
	int64_t t0;

	(void)state;
	fake_start(&f, NULL, NULL, NULL, NULL);
	k = client_for(f.url);
	create_cm(k, "a");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"big\","
		 "\"labels\":{\"app\":\"t\"}},\"data\":{\"x\":\"%s\"}}", big);
	/* The list now passes 2 KiB: refused whole, not retried. */
	assert_int_equal(req(k, "POST", CM_PATH, NULL, body, NULL), 201);
	kube_set_limits(k, 2048, 2048);
	assert_int_equal(carve_kube_request(k, "GET", CM_PATH, NULL, NULL, &out, &err), CARVE_EIO);
	assert_null(out);
	assert_non_null(strstr(err.text, "response too large"));
	kube_set_limits(k, 0, 0);
	assert_int_equal(req(k, "DELETE", CM_PATH "/big", NULL, NULL, NULL), 200);
	/* A watch event of 4 KiB over a 2 KiB line cap: the reflector
	 * backs off and lists again (the list holds the big one). */
	kube_set_limits(k, 0, 2048);
	r = carve_kube_watch_start(k, &spec, 1, q, &err);
	assert_non_null(r);
	wait_log(q, &s, "R1 ");
	assert_int_equal(req(k, "POST", CM_PATH, NULL, body, NULL), 201);
	wait_log(q, &s, "R1 R2 ");
	create_cm(k, "c");
	wait_log(q, &s, "A:c ");
	carve_kube_watch_stats(r, &ws);
	assert_int_equal(ws.relists, 1);
	assert_true(ws.errors >= 1);
	assert_store_is_server(k, s.store);
	t0 = kube_mono_ns();
	carve_kube_watch_stop(r);
	assert_true(ms_since(t0) < 1500);

	/* The default 64 MiB line cap against a line without end. */
	kube_set_limits(k, 0, 0);
	faults(k, "{\"endless_line\": 1}");
	s.log[0] = '\0';
	r = carve_kube_watch_start(k, &spec, 1, q, &err);
	assert_non_null(r);
	wait_log(q, &s, "R3 ");
	t0 = kube_mono_ns();
	do {
		carve_kube_watch_stats(r, &ws);
		usleep(20000);
	} while (ws.relists == 0 && ms_since(t0) < 10000);
	assert_int_equal(ws.relists, 1);
	assert_int_equal(ws.errors, 1);
	create_cm(k, "d");
	wait_log(q, &s, "A:d ");
	assert_store_is_server(k, s.store);
	carve_kube_watch_stop(r);
	carve_kube_store_destroy(s.store);
	carve_kube_queue_destroy(q);
	carve_kube_destroy(k);
	fake_stop(&f);
}

/* A watch answered 500 lists again; a kind gone (404) empties the store;
 * 410 on continue pages is counted and backed off from the second. */
static void test_watch_errors_relist(void **state)
{
	static const struct canned c[] = {
		{ 200, LIST("5", "", ITEM("a")), NULL },
		{ 500, STATUS(500), NULL },
		{ 200, LIST("6", "", ITEM("a") "," ITEM("b")), NULL },
		{ 404, STATUS(404), NULL },
		{ 404, STATUS(404), NULL },
	};
	static const struct canned c410[] = {
		{ 200, LIST("5", ",\"continue\":\"t\"", ITEM("a")), NULL },
		{ 410, STATUS(410), NULL },
		{ 200, LIST("5", ",\"continue\":\"t\"", ITEM("a")), NULL },
		{ 410, STATUS(410), NULL },
		{ 200, LIST("5", ",\"continue\":\"t\"", ITEM("a")), NULL },
		{ 200, LIST("5", "", ITEM("b")), NULL },
		{ 0, "", NULL },
	};
	struct carve_kube_watch_spec spec = { .kind = "ConfigMap", .path = CM_PATH, .optional = true };
	struct carve_kube_queue *q = carve_kube_queue_create();
	struct seen s = { .store = carve_kube_store_create() };
	struct seq sq = { .c = c, .n = 5 };
	struct carve_kube_watch_stats ws;
	struct carve_error err = { 0 };
	struct carve_kube_reflector *r;
	struct carve_kube *k;
	pthread_t th;

	(void)state;
	k = seq_start(&sq, &th);
	r = carve_kube_watch_start(k, &spec, 1, q, &err);
	assert_non_null(r);
	wait_log(q, &s, "R1 R2 R0 ");
	assert_int_equal(carve_kube_store_count(s.store), 0);
	carve_kube_watch_stats(r, &ws);
	assert_int_equal(ws.errors, 2);
	carve_kube_watch_stop(r);
	carve_kube_destroy(k);
	seq_end(&sq, th);
	assert_non_null(strstr(sq.got[1], "watch=1&resourceVersion=5&"));
	assert_non_null(strstr(sq.got[2], "?limit="));
	assert_non_null(strstr(sq.got[3], "watch=1&resourceVersion=6&"));
	assert_non_null(strstr(sq.got[4], "?limit="));

	memset(&sq, 0, sizeof(sq));
	sq.c = c410;
	sq.n = 7;
	spec.optional = false;
	k = seq_start(&sq, &th);
	r = carve_kube_watch_start(k, &spec, 1, q, &err);
	assert_non_null(r);
	wait_log(q, &s, "R2 ");
	{
		int64_t t0 = kube_mono_ns();

		while (sq.served < 7 && ms_since(t0) < 5000) /* the watch opens */
			usleep(10000);
	}
	carve_kube_watch_stats(r, &ws);
	assert_int_equal(ws.errors, 2);
	assert_int_equal(ws.lists, 1);
	carve_kube_watch_stop(r);
	carve_kube_destroy(k);
	seq_end(&sq, th);
	assert_non_null(strstr(sq.got[6], "watch=1&resourceVersion=5&"));
	carve_kube_store_destroy(s.store);
	carve_kube_queue_destroy(q);
}

/* A line cut short by stop is not handed on. */
static void test_stream_stop_partial(void **state)
{
	static const struct canned c[] = {
		{ 0, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\"}}}\n{\"ty", NULL },
	};
	struct seq sq = { .c = c, .n = 1 };
	struct carve_error err = { 0 };
	atomic_bool stop = false;
	struct stopper sp = { &stop, 300 };
	char log[512] = "";
	struct carve_kube *k;
	pthread_t th, th2;

	(void)state;
	k = seq_start(&sq, &th);
	assert_int_equal(pthread_create(&th2, NULL, stop_later, &sp), 0);
	assert_int_equal(kube_stream(k, "/w", 10, raw_line, log, &stop, &err), 200);
	assert_string_equal(log, "ADDED:1 ");
	pthread_join(th2, NULL);
	carve_kube_destroy(k);
	seq_end(&sq, th);
}

/* A token file larger than the client reads is refused, not cut. */
static void test_token_file_too_big(void **state)
{
	struct carve_kube_config c = { 0 };
	struct carve_error err = { 0 };
	struct carve_kube *k;
	char path[128];
	FILE *fp;
	int i;

	(void)state;
	snprintf(path, sizeof(path), "%s/bigtoken", tmp);
	fp = fopen(path, "w");
	assert_non_null(fp);
	for (i = 0; i < 20000; i++)
		fputc('t', fp);
	fclose(fp);
	c.server = (char *)"http://127.0.0.1:1";
	c.token_file = path;
	k = carve_kube_create(&c, &err);
	assert_non_null(k);
	assert_int_equal(carve_kube_request(k, "GET", "/api", NULL, NULL, NULL, &err), CARVE_EIO);
	assert_non_null(strstr(err.text, "bigtoken: larger than"));
	carve_kube_destroy(k);
	unlink(path);
}

/* A Lease naming us already (a restart): acquireTime and
 * leaseTransitions stay, like client-go. */
static void test_election_restart_keeps_record(void **state)
{
	struct carve_kube_queue *q = carve_kube_queue_create();
	struct carve_error err = { 0 };
	struct carve_kube_elector *a;
	struct carve_kube *k;
	struct fake f;
	json_t *hold = NULL, *spec;

	(void)state;
	fake_start(&f, NULL, NULL, NULL, NULL);
	k = client_for(f.url);
	assert_int_equal(req(k, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", NULL,
			     "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
			     "\"metadata\":{\"name\":\"carve\"},\"spec\":{\"holderIdentity\":\"a\","
			     "\"leaseDurationSeconds\":2,\"leaseTransitions\":5,"
			     "\"acquireTime\":\"2026-01-01T00:00:00.000000Z\","
			     "\"renewTime\":\"2026-01-01T00:00:01.000000Z\"}}", NULL), 201);
	a = carve_kube_elect_start(k, &opts_a, q, &err);
	assert_non_null(a);
	assert_true(wait_leader(a, q, 3000));
	spec = lease_spec(k, &hold);
	assert_string_equal(json_string_value(json_object_get(spec, "holderIdentity")), "a");
	assert_int_equal(json_integer_value(json_object_get(spec, "leaseTransitions")), 5);
	assert_string_equal(json_string_value(json_object_get(spec, "acquireTime")),
			    "2026-01-01T00:00:00.000000Z");
	assert_string_not_equal(json_string_value(json_object_get(spec, "renewTime")),
				"2026-01-01T00:00:01.000000Z");
	json_decref(hold);
	carve_kube_elect_stop(a);
	spec = lease_spec(k, &hold);
	assert_string_equal(json_string_value(json_object_get(spec, "holderIdentity")), "");
	json_decref(hold);
	carve_kube_queue_destroy(q);
	carve_kube_destroy(k);
	fake_stop(&f);
}

static int setup(void **state)
{
	static char path[512];
	const char *src = getenv("CARVE_SOURCE_DIR");

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	fake_py = getenv("CARVE_FAKEAPI");
	if (!fake_py && src) {
		snprintf(path, sizeof(path), "%s/tests/kube/fakeapi.py", src);
		fake_py = path;
	}
	snprintf(tmp, sizeof(tmp), "/tmp/carve-kube-XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest offline[] = {
		cmocka_unit_test(test_store),
		cmocka_unit_test(test_queue),
		cmocka_unit_test(test_stream_lines),
		cmocka_unit_test(test_reflector_queries_and_410),
	};
	const struct CMUnitTest online[] = {
		cmocka_unit_test(test_methods),
		cmocka_unit_test(test_retries),
		cmocka_unit_test(test_rate_limit),
		cmocka_unit_test(test_tls_token),
		cmocka_unit_test(test_reflector),
		cmocka_unit_test(test_optional_kind),
		cmocka_unit_test(test_election),
		cmocka_unit_test(test_retry_rules),
		cmocka_unit_test(test_stop_prompt),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_watch_errors_relist),
		cmocka_unit_test(test_stream_stop_partial),
		cmocka_unit_test(test_token_file_too_big),
		cmocka_unit_test(test_election_restart_keeps_record),
	};
	int rc = cmocka_run_group_tests(offline, setup, teardown);

	if (access("/usr/bin/python3", X_OK) != 0 || !fake_py || access(fake_py, R_OK) != 0) {
		fprintf(stderr, "test_kube_client: no fake API server (%s) or no /usr/bin/python3\n",
			fake_py ? fake_py : "CARVE_SOURCE_DIR unset");
		return 1;
	}
	return rc | cmocka_run_group_tests(online, setup, teardown);
}
