/*
 * whwatch.c - keeps the webhook's cluster context current (whserver.h):
 * one reflector (src/kube/watch.c) per resource of wh_ctx_resources[],
 * one store per reflector (store.c), and a thread that drains their event
 * queue and rebuilds the context with wh_ctx_build() from every stored
 * object, then installs it in the server.
 *
 * Invariants: the stores belong to the watch thread alone; a rebuild
 * happens at most once per debounce interval, counted from the first
 * change not yet built (a burst of events gives one build), and only once
 * every required reflector has listed (an optional kind that is missing
 * is waited for OPTIONAL_WAIT_MS, then built without); the server is
 * ready from the first build on.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/kube.h"
#include "kube_int.h"
#include "whserver.h"

#define OPTIONAL_WAIT_MS 5000

struct wh_watch {
	struct carve_kube *k;
	struct wh_server *srv;
	int64_t debounce_ns;
	size_t n;                          /* resources */
	struct carve_kube_reflector **refl;
	struct carve_kube_store **store;
	struct carve_kube_queue *q;
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	_Atomic uint64_t builds;
};

/* Whether every reflector listed (optional ones: or the wait is over). */
static bool synced(struct wh_watch *w, int64_t started)
{
	bool waited = kube_mono_ns() - started >= (int64_t)OPTIONAL_WAIT_MS * 1000000;
	size_t i;

	for (i = 0; i < w->n; i++) {
		struct carve_kube_watch_stats ws;

		carve_kube_watch_stats(w->refl[i], &ws);
		if (!ws.synced && (!wh_ctx_resources[i].optional || !waited))
			return false;
	}
	return true;
}

struct gather {
	json_t **objs;
	size_t n, cap;
};

static int gather_one(void *ctx, json_t *obj)
{
	struct gather *g = ctx;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 256;
		json_t **o = carve_realloc(g->objs, cap * sizeof(*o));

		if (!o)
			return CARVE_ENOMEM;
		g->objs = o;
		g->cap = cap;
	}
	g->objs[g->n++] = obj;
	return 0;
}

/* Builds a context from every store and installs it.  Returns 0 or CARVE_ENOMEM. */
static int rebuild(struct wh_watch *w)
{
	struct gather g = {NULL, 0, 0};
	struct carve_diags *d = NULL;
	struct wh_ctx *ctx;
	size_t i;
	int rc = 0;

	for (i = 0; i < w->n && !rc; i++)
		rc = carve_kube_store_each(w->store[i], gather_one, &g);
	if (!rc) {
		ctx = wh_ctx_build(g.objs, g.n, d);
		if (ctx) {
			wh_server_set_ctx(w->srv, ctx);
			wh_server_set_ready(w->srv, true);
			atomic_fetch_add(&w->builds, 1);
		} else {
			rc = CARVE_ENOMEM;
		}
	}
	carve_free(g.objs);
	if (rc)
		fprintf(stderr, "carve webhook: out of memory building the cluster context\n");
	return rc;
}

static void *loop(void *arg)
{
	struct wh_watch *w = arg;
	int64_t started = kube_mono_ns(), first_change = 0;
	bool dirty = true; /* the first build, once synced */

	while (!atomic_load(&w->stop)) {
		struct carve_kube_event *ev = NULL;
		struct carve_error err = {0};
		int n, i, rc;

		n = carve_kube_queue_take(w->q, 100, &ev);
		for (i = 0; i < n; i++) {
			int id = ev[i].source;

			if (id >= 0 && (size_t)id < w->n) {
				rc = carve_kube_store_apply(w->store[id], &ev[i], &err);
				if (rc < 0)
					fprintf(stderr, "carve webhook: %s: event refused: %s\n",
						wh_ctx_resources[id].path, err.text);
				if (rc > 0 && !dirty) {
					dirty = true;
					first_change = kube_mono_ns();
				}
			}
			json_decref(ev[i].obj);
		}
		carve_free(ev);
		if (dirty && kube_mono_ns() - first_change >= w->debounce_ns && synced(w, started) &&
		    !rebuild(w))
			dirty = false;
	}
	return NULL;
}

struct wh_watch *wh_watch_start(struct carve_kube *k, struct wh_server *s, int debounce_ms,
				struct carve_error *err)
{
	struct wh_watch *w;
	size_t n = 0, i;

	while (wh_ctx_resources[n].path)
		n++;
	if (!(w = carve_calloc(1, sizeof(*w))) || !(w->refl = carve_calloc(n ? n : 1, sizeof(*w->refl))) ||
	    !(w->store = carve_calloc(n ? n : 1, sizeof(*w->store))) || !(w->q = carve_kube_queue_create())) {
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		goto fail;
	}
	w->k = k;
	w->srv = s;
	w->n = n;
	w->debounce_ns = (int64_t)(debounce_ms > 0 ? debounce_ms : 200) * 1000000;
	for (i = 0; i < n; i++) {
		struct carve_kube_watch_spec spec = {
			.kind = wh_ctx_resources[i].path,
			.path = wh_ctx_resources[i].path,
			.optional = wh_ctx_resources[i].optional,
		};

		if (!(w->store[i] = carve_kube_store_create())) {
			carve_errorf(err, CARVE_ENOMEM, "out of memory");
			goto fail;
		}
		if (!(w->refl[i] = carve_kube_watch_start(k, &spec, (int)i, w->q, err)))
			goto fail;
	}
	if (pthread_create(&w->thread, NULL, loop, w)) {
		carve_errorf(err, CARVE_EIO, "cannot start the watch thread");
		goto fail;
	}
	w->thread_started = true;
	return w;
fail:
	wh_watch_stop(w);
	return NULL;
}

uint64_t wh_watch_builds(const struct wh_watch *w)
{
	return atomic_load(&((struct wh_watch *)w)->builds);
}

void wh_watch_stop(struct wh_watch *w)
{
	size_t i;

	if (!w)
		return;
	atomic_store(&w->stop, true);
	if (w->q)
		carve_kube_queue_wake(w->q);
	if (w->thread_started)
		pthread_join(w->thread, NULL);
	for (i = 0; w->refl && i < w->n; i++)
		if (w->refl[i])
			carve_kube_watch_stop(w->refl[i]);
	for (i = 0; w->store && i < w->n; i++)
		if (w->store[i])
			carve_kube_store_destroy(w->store[i]);
	if (w->q)
		carve_kube_queue_destroy(w->q);
	carve_free(w->refl);
	carve_free(w->store);
	carve_free(w);
}
