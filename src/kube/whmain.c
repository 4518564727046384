/*
 * whmain.c - wh_run(), `carve webhook`'s process (whserver.h): loads the
 * policy and the certificate, starts the server and, with cluster access,
 * the reflectors that build its context; then the main thread waits for
 * signals, polling the certificate files between them.
 *
 * Signals: SIGTERM and SIGINT are blocked before any thread starts (every
 * thread inherits the mask) and taken only here by sigtimedwait(), so
 * no handler runs in a worker; SIGHUP reloads the certificate at once.
 * Stop order: no new connections, the connections left get a grace
 * period, then the reflectors, the context, the certificate, the policy.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "carve/diag.h"
#include "carve/kube.h"
#include "kube_int.h"
#include "whserver.h"

#define GRACE_MS 5000

static void logf_(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "carve webhook: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
}

/* The policy, or NULL after saying why. */
static struct wh_policy *load_policy(const char *path)
{
	struct carve_diags d;
	struct wh_policy *p = NULL;
	int rc;

	carve_diags_init(&d);
	rc = wh_policy_load(path, &p, &d);
	if (d.n)
		carve_diags_print(&d, stderr);
	carve_diags_cleanup(&d);
	if (rc) {
		logf_("policy %s: %s", path ? path : "(embedded defaults)", carve_strerror(rc));
		return NULL;
	}
	return p;
}

/* A client for the cluster, or NULL after saying why. */
static struct carve_kube *connect_cluster(const struct wh_opts *o)
{
	struct carve_kube_config kc;
	struct carve_error err = {0};
	struct carve_kube *k;

	if (o->in_cluster) {
		if (!getenv("KUBERNETES_SERVICE_HOST")) {
			logf_("%s%s", "--in-cluster: KUBERNETES_SERVICE_HOST is not set (not in a pod)", "");
			return NULL;
		}
		unsetenv("KUBECONFIG");
	}
	if (carve_kube_config_load(o->in_cluster ? NULL : o->kubeconfig, o->context, &kc, &err)) {
		logf_("%s%s", err.text, "");
		return NULL;
	}
	if (o->qps >= 0)
		kc.qps = o->qps;
	if (o->burst > 0)
		kc.burst = o->burst;
	k = carve_kube_create(&kc, &err);
	if (!k)
		logf_("%s: %s", kc.source, err.text);
	else
		logf_("cluster: %s (%s)", kc.server, kc.source);
	carve_kube_config_free(&kc);
	return k;
}

int wh_run(const struct wh_opts *o)
{
	struct carve_error err = {0};
	struct wh_policy *pol = NULL;
	struct wh_tls *tls = NULL;
	struct wh_server *srv = NULL;
	struct carve_kube *k = NULL;
	struct wh_watch *w = NULL;
	struct wh_server_opts so = {0};
	sigset_t set;
	int64_t deadline, next_poll = 0;
	int reload_ms = o->reload_ms > 0 ? o->reload_ms : 1000;
	int rc = 0, sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (!(pol = load_policy(o->policy)))
		return CARVE_EPARSE;
	if (!o->insecure_http && !(tls = wh_tls_create(o->cert, o->key, &err))) {
		logf_("%s%s", err.text, "");
		rc = err.code ? err.code : CARVE_EIO;
		goto out;
	}
	if (!o->no_cluster && !(k = connect_cluster(o))) {
		rc = CARVE_ENOTFOUND;
		goto out;
	}
	so.listen = o->listen ? o->listen : ":8443";
	so.tls = tls;
	so.policy = pol;
	so.threads = o->threads;
	so.timeout_s = o->timeout_s;
	so.log_requests = o->verbose;
	if (!(srv = wh_server_start(&so, &err))) {
		logf_("%s%s", err.text, "");
		rc = err.code ? err.code : CARVE_EIO;
		goto out;
	}
	if (k) {
		if (!(w = wh_watch_start(k, srv, o->debounce_ms, &err))) {
			logf_("%s%s", err.text, "");
			rc = err.code ? err.code : CARVE_EIO;
			goto out;
		}
	} else {
		wh_server_set_ready(srv, true); /* the empty context is all there is */
	}
	fprintf(stderr, "carve webhook: serving %s on port %d (%s)\n", tls ? "HTTPS" : "plain HTTP",
		wh_server_port(srv), k ? "context from the cluster" : "no cluster context");
	deadline = o->max_seconds > 0 ? kube_mono_ns() + (int64_t)o->max_seconds * 1000000000 : 0;
	for (;;) {
		struct timespec ts = {0, 200 * 1000000};
		int64_t now;

		sig = sigtimedwait(&set, NULL, &ts);
		now = kube_mono_ns();
		if (sig == SIGTERM || sig == SIGINT) {
			fprintf(stderr, "carve webhook: signal %d: stopping\n", sig);
			break;
		}
		if (deadline && now >= deadline) {
			fprintf(stderr, "carve webhook: --max-seconds reached: stopping\n");
			break;
		}
		if (tls && (sig == SIGHUP || now >= next_poll)) {
			int r = wh_tls_reload(tls, sig == SIGHUP, &err);

			if (r > 0)
				fprintf(stderr, "carve webhook: certificate reloaded (generation %llu)\n",
					(unsigned long long)wh_tls_generation(tls));
			else if (r < 0)
				fprintf(stderr, "carve webhook: certificate not reloaded, the old one is "
					"still served: %s\n", err.text);
			next_poll = now + (int64_t)reload_ms * 1000000;
		}
	}
out:
	wh_watch_stop(w); /* first: it installs contexts in the server */
	wh_server_stop(srv, GRACE_MS);
	if (k)
		carve_kube_destroy(k);
	wh_tls_destroy(tls);
	wh_policy_free(pol);
	return rc;
}
