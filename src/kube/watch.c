/*
 * watch.c - list-then-watch reflectors and the event queue they feed
 * (kube.h), after client-go's tools/cache/reflector.go and the API
 * concepts of Kubernetes (paged lists with limit/continue, watches from
 * the list's resourceVersion with bookmarks, 410 Expired answered by a
 * relist).
 *
 * One thread per reflector: list every page, push one REPLACE holding
 * every item (items get the kind and apiVersion of their list, which the
 * API leaves out of list items), then watch from the list's
 * resourceVersion with a random timeoutSeconds in [300, 600]; the stream
 * is parsed line by line as it arrives; a watch that ends is resumed from
 * the last resourceVersion seen (events and bookmarks move it); HTTP 410
 * or an ERROR event with code 410 starts over with a list; a watch
 * answered with another HTTP error, or carrying a line over the client's
 * cap, starts over with a list after the backoff; transport errors back
 * off (jittered, doubling up to 30 s) and watch again; a 410 on a
 * continue page lists again, after the backoff from the second in a row
 * (each counted as an error); an optional kind whose list answers 404 is
 * tried again every 30 s, and when it had been listed before, an empty
 * REPLACE drops its objects from the store.
 *
 * Invariants: the thread only pushes events into the queue and updates
 * its own counters (under r->mu); stop sets an atomic flag that every
 * wait (on CLOCK_MONOTONIC), the list requests and the streaming transfer
 * check, so a reflector stops within
 * about a second.  The queue hands its whole array to the consumer.
 */
#include <stdio.h>
#include <string.h>

#include "kube_int.h"

/* ---- the queue ---- */

struct carve_kube_queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct carve_kube_event *v;
	size_t n, cap;
	bool woken;
};

struct carve_kube_queue *carve_kube_queue_create(void)
{
	struct carve_kube_queue *q = carve_calloc(1, sizeof(*q));
	pthread_condattr_t ca;

	if (!q)
		return NULL;
	pthread_mutex_init(&q->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cv, &ca);
	pthread_condattr_destroy(&ca);
	return q;
}

void carve_kube_queue_destroy(struct carve_kube_queue *q)
{
	size_t i;

	if (!q)
		return;
	for (i = 0; i < q->n; i++)
		json_decref(q->v[i].obj);
	carve_free(q->v);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	carve_free(q);
}

/* Appends one event; takes obj's reference (dropped on failure). */
static int queue_push(struct carve_kube_queue *q, int source, enum carve_kube_ev_type type,
		      json_t *obj)
{
	int rc = 0;

	pthread_mutex_lock(&q->mu);
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		struct carve_kube_event *v = carve_realloc(q->v, cap * sizeof(*v));

		if (!v) {
			rc = CARVE_ENOMEM;
			goto out;
		}
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n].source = source;
	q->v[q->n].type = type;
	q->v[q->n].obj = obj;
	q->n++;
	pthread_cond_signal(&q->cv);
out:
	pthread_mutex_unlock(&q->mu);
	if (rc)
		json_decref(obj);
	return rc;
}

int carve_kube_queue_take(struct carve_kube_queue *q, int timeout_ms,
			  struct carve_kube_event **ev)
{
	struct timespec until;
	int n;

	*ev = NULL;
	clock_gettime(CLOCK_MONOTONIC, &until);
	if (timeout_ms > 0) {
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
	}
	pthread_mutex_lock(&q->mu);
	while (q->n == 0 && !q->woken && timeout_ms != 0) {
		if (timeout_ms < 0)
			pthread_cond_wait(&q->cv, &q->mu);
		else if (pthread_cond_timedwait(&q->cv, &q->mu, &until) != 0)
			break;
	}
	q->woken = false;
	n = (int)q->n;
	if (n) {
		*ev = q->v;
		q->v = NULL;
		q->n = q->cap = 0;
	}
	pthread_mutex_unlock(&q->mu);
	return n;
}

void carve_kube_queue_wake(struct carve_kube_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->woken = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

/* ---- the reflector ---- */

#define BACKOFF_BASE_MS 200
#define BACKOFF_CAP_MS 30000
#define OPTIONAL_RETRY_MS 30000

struct carve_kube_reflector {
	struct carve_kube *k;
	struct carve_kube_queue *q;
	int id;
	char *kind, *path, *sel; /* sel: "&fieldSelector=..&labelSelector=.." or "" */
	bool optional;
	int page_size;
	pthread_t th;
	atomic_bool stop;
	pthread_mutex_t mu; /* stats, rv, the nap condition */
	pthread_cond_t cv;
	struct carve_kube_watch_stats st;
	char *rv;
	int fails; /* errors in a row, for the backoff */
	int expired_pages; /* continue pages answered 410, in a row */
	bool present; /* the last list found the kind (an optional one may go) */
};

static void count(struct carve_kube_reflector *r, uint64_t *field)
{
	pthread_mutex_lock(&r->mu);
	(*field)++;
	pthread_mutex_unlock(&r->mu);
}

static void set_rv(struct carve_kube_reflector *r, const char *rv)
{
	char *c;

	if (!rv || (r->rv && strcmp(rv, r->rv) == 0))
		return;
	c = carve_strdup(rv);
	if (!c)
		return;
	carve_free(r->rv);
	r->rv = c;
}

static void backoff(struct carve_kube_reflector *r)
{
	int64_t d = (int64_t)BACKOFF_BASE_MS << (r->fails < 8 ? r->fails : 8);

	if (d > BACKOFF_CAP_MS)
		d = BACKOFF_CAP_MS;
	r->fails++;
	kube_nap(&r->mu, &r->cv, &r->stop, d / 2 + (int64_t)kube_rand((uint64_t)d / 2 + 1));
}

/* The list's kind without "List" and its apiVersion, on items lacking them. */
static void fill_kind(json_t *items, const json_t *list)
{
	const char *lk = json_string_value(json_object_get(list, "kind"));
	const json_t *av = json_object_get(list, "apiVersion");
	char kind[128];
	size_t i, n;
	json_t *it;

	if (!lk)
		return;
	n = strlen(lk);
	if (n < 5 || n - 4 >= sizeof(kind) || strcmp(lk + n - 4, "List") != 0)
		return;
	memcpy(kind, lk, n - 4);
	kind[n - 4] = '\0';
	json_array_foreach(items, i, it) {
		if (!json_is_object(it))
			continue;
		if (!json_object_get(it, "kind"))
			json_object_set_new(it, "kind", json_string(kind));
		if (av && !json_object_get(it, "apiVersion"))
			json_object_set(it, "apiVersion", (json_t *)av);
	}
}

enum { LIST_OK, LIST_MISSING, LIST_FAILED, LIST_RESTART };

/* Every page into one REPLACE event. */
static int list_all(struct carve_kube_reflector *r)
{
	struct carve_kube_retry once = { .max_attempts = 1, .timeout_ms = 60000 };
	json_t *all = json_array(), *resp = NULL;
	char *cont = NULL, *path = NULL, *rv = NULL;
	struct carve_error err = { 0 };
	int rc = LIST_OK, status;
	bool paging;

	if (!all)
		return LIST_FAILED;
	do {
		size_t n = strlen(r->path) + strlen(r->sel) + (cont ? strlen(cont) : 0) + 64;
		json_t *items, *meta;
		const char *c;

		path = carve_malloc(n);
		if (!path) {
			rc = LIST_FAILED;
			break;
		}
		snprintf(path, n, "%s?limit=%d%s%s%s", r->path, r->page_size, r->sel,
			 cont ? "&continue=" : "", cont ? cont : "");
		paging = cont != NULL;
		status = kube_request_r(r->k, &once, "GET", path, NULL, NULL, &resp, &r->stop, &err);
		carve_free(path);
		carve_free(cont);
		cont = NULL;
		if (status == 404 && r->optional) {
			rc = LIST_MISSING;
		} else if (status < 0 && atomic_load(&r->stop)) {
			rc = LIST_FAILED; /* stopped in flight */
		} else if (status == 410 && paging) {
			rc = LIST_RESTART; /* the continue token expired */
		} else if (status != 200 || !json_is_object(resp)) {
			fprintf(stderr, "carve: list %s: %s\n", r->kind,
				status < 0 ? err.text : status == 200 ? "not a JSON object" : "HTTP error");
			rc = LIST_FAILED;
		}
		if (rc != LIST_OK)
			break;
		items = json_object_get(resp, "items");
		if (json_is_array(items)) {
			fill_kind(items, resp);
			json_array_extend(all, items);
		}
		meta = json_object_get(resp, "metadata");
		if (!rv && (c = json_string_value(json_object_get(meta, "resourceVersion"))))
			rv = carve_strdup(c);
		c = json_string_value(json_object_get(meta, "continue"));
		if (c && *c && !(cont = carve_kube_escape(c)))
			rc = LIST_FAILED;
		json_decref(resp);
		resp = NULL;
	} while (cont && !atomic_load(&r->stop));
	json_decref(resp);
	carve_free(cont);
	if (rc == LIST_OK && atomic_load(&r->stop))
		rc = LIST_FAILED;
	if (rc == LIST_OK) {
		pthread_mutex_lock(&r->mu);
		carve_free(r->rv);
		r->rv = rv;
		rv = NULL;
		if (r->st.lists++)
			r->st.relists++;
		r->st.synced = true;
		pthread_mutex_unlock(&r->mu);
		if (queue_push(r->q, r->id, CARVE_KEV_REPLACE, all))
			rc = LIST_FAILED;
		all = NULL;
	}
	json_decref(all);
	carve_free(rv);
	return rc;
}

/* W_ERROR: back off, watch again; W_ERROR_RELIST: back off, list again. */
enum { W_RESUME, W_RELIST, W_ERROR, W_ERROR_RELIST };

struct wctx {
	struct carve_kube_reflector *r;
	int outcome;
	uint64_t lines;
	long status_code; /* of a Status body, when one came */
};

static int on_line(void *ctx, const char *text, size_t len)
{
	struct wctx *w = ctx;
	struct carve_kube_reflector *r = w->r;
	json_t *ev = json_loadb(text, len, 0, NULL), *obj;
	const char *type;
	enum carve_kube_ev_type t;

	w->lines++;
	if (!json_is_object(ev)) {
		json_decref(ev);
		fprintf(stderr, "carve: watch %s: a line that is not a JSON object\n", r->kind);
		w->outcome = W_ERROR;
		return 1;
	}
	type = json_string_value(json_object_get(ev, "type"));
	obj = json_object_get(ev, "object");
	if (!type) {
		/* A Status body (an answer that is not a watch stream). */
		w->status_code = (long)json_integer_value(json_object_get(ev, "code"));
		json_decref(ev);
		return 0;
	}
	if (strcmp(type, "ERROR") == 0) {
		long code = (long)json_integer_value(json_object_get(obj, "code"));

		w->outcome = code == 410 ? W_RELIST : W_ERROR;
		if (code != 410)
			fprintf(stderr, "carve: watch %s: ERROR %ld %s\n", r->kind, code,
				json_string_value(json_object_get(obj, "message")) ?: "");
		json_decref(ev);
		return 1;
	}
	if (!json_is_object(obj)) {
		json_decref(ev);
		w->outcome = W_ERROR;
		return 1;
	}
	if (strcmp(type, "BOOKMARK") == 0) {
		set_rv(r, carve_kube_rv(obj));
		count(r, &r->st.bookmarks);
		json_decref(ev);
		return 0;
	}
	if (strcmp(type, "ADDED") == 0)
		t = CARVE_KEV_ADDED;
	else if (strcmp(type, "MODIFIED") == 0)
		t = CARVE_KEV_MODIFIED;
	else if (strcmp(type, "DELETED") == 0)
		t = CARVE_KEV_DELETED;
	else {
		json_decref(ev);
		return 0; /* a type this client does not know: skipped */
	}
	set_rv(r, carve_kube_rv(obj));
	count(r, &r->st.events);
	json_incref(obj);
	json_decref(ev);
	if (queue_push(r->q, r->id, t, obj)) {
		w->outcome = W_RELIST; /* an event was lost: start over */
		return 1;
	}
	return 0;
}

static int watch_once(struct carve_kube_reflector *r)
{
	struct wctx w = { .r = r, .outcome = W_RESUME };
	struct carve_error err = { 0 };
	int timeout = 300 + (int)kube_rand(301), status;
	char *path, *rv;
	size_t n;

	rv = carve_kube_escape(r->rv ? r->rv : "");
	if (!rv)
		return W_ERROR;
	n = strlen(r->path) + strlen(r->sel) + strlen(rv) + 128;
	path = carve_malloc(n);
	if (!path) {
		carve_free(rv);
		return W_ERROR;
	}
	snprintf(path, n, "%s?watch=1&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=%d%s",
		 r->path, rv, timeout, r->sel);
	carve_free(rv);
	count(r, &r->st.watches);
	status = kube_stream(r->k, path, timeout, on_line, &w, &r->stop, &err);
	carve_free(path);
	if (atomic_load(&r->stop))
		return W_RESUME;
	if (status == 410 || w.status_code == 410)
		return W_RELIST;
	if (status < 0) {
		fprintf(stderr, "carve: watch %s: %s\n", r->kind, err.text);
		/* a line over the cap: what followed it is lost, start over */
		return status == CARVE_ERANGE ? W_ERROR_RELIST : W_ERROR;
	}
	if (status != 200) {
		/* Watching again from the same resourceVersion would get the
		 * same answer (403, 404 of a kind gone, 500...): list again. */
		fprintf(stderr, "carve: watch %s: HTTP %d\n", r->kind, status);
		return W_ERROR_RELIST;
	}
	return w.outcome;
}

static void *reflect(void *arg)
{
	struct carve_kube_reflector *r = arg;

	while (!atomic_load(&r->stop)) {
		int rc = list_all(r);

		if (rc != LIST_RESTART)
			r->expired_pages = 0;
		if (rc == LIST_MISSING) {
			/* The kind went away (its CRD was deleted): the store
			 * drops what it held. */
			if (r->present) {
				json_t *none = json_array();

				if (none && queue_push(r->q, r->id, CARVE_KEV_REPLACE, none) == 0)
					r->present = false;
			}
			kube_nap(&r->mu, &r->cv, &r->stop, OPTIONAL_RETRY_MS);
			continue;
		}
		if (rc == LIST_RESTART) {
			/* The continue token expired: list again at once, but
			 * from the second in a row after the backoff. */
			count(r, &r->st.errors);
			if (++r->expired_pages >= 2)
				backoff(r);
			continue;
		}
		if (rc == LIST_FAILED) {
			if (!atomic_load(&r->stop)) {
				count(r, &r->st.errors);
				backoff(r);
			}
			continue;
		}
		r->fails = 0;
		r->present = true;
		while (!atomic_load(&r->stop)) {
			int64_t t0 = kube_mono_ns();
			uint64_t before = r->st.events + r->st.bookmarks;
			int w = watch_once(r);

			if (atomic_load(&r->stop))
				break;
			if (w == W_RELIST)
				break;
			if (w == W_ERROR || w == W_ERROR_RELIST) {
				count(r, &r->st.errors);
				backoff(r);
				if (w == W_ERROR_RELIST)
					break;
				continue;
			}
			r->fails = 0;
			/* A watch that ended at once with nothing: do not spin. */
			if (r->st.events + r->st.bookmarks == before &&
			    kube_mono_ns() - t0 < 1000000000)
				kube_nap(&r->mu, &r->cv, &r->stop, 500 + (int64_t)kube_rand(500));
		}
	}
	return NULL;
}

/* "&name=escaped value" appended to *sel. */
static int add_sel(char **sel, const char *name, const char *v)
{
	char *e, *s;
	size_t n;

	if (!v || !*v)
		return 0;
	e = carve_kube_escape(v);
	if (!e)
		return CARVE_ENOMEM;
	n = strlen(*sel) + strlen(name) + strlen(e) + 3;
	s = carve_malloc(n);
	if (s)
		snprintf(s, n, "%s&%s=%s", *sel, name, e);
	carve_free(e);
	if (!s)
		return CARVE_ENOMEM;
	carve_free(*sel);
	*sel = s;
	return 0;
}

static void reflector_free(struct carve_kube_reflector *r)
{
	carve_free(r->kind);
	carve_free(r->path);
	carve_free(r->sel);
	carve_free(r->rv);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	carve_free(r);
}

struct carve_kube_reflector *carve_kube_watch_start(struct carve_kube *k,
						    const struct carve_kube_watch_spec *s,
						    int id, struct carve_kube_queue *q,
						    struct carve_error *err)
{
	struct carve_kube_reflector *r;
	pthread_condattr_t ca;

	if (!s || !s->path || s->path[0] != '/' || strchr(s->path, '?')) {
		carve_errorf(err, CARVE_EINVAL, "watch %s: the path must start with '/' and hold no query",
			     s && s->kind ? s->kind : "?");
		return NULL;
	}
	r = carve_calloc(1, sizeof(*r));
	if (!r) {
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* kube_nap's clock */
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&r->stop, false);
	r->k = k;
	r->q = q;
	r->id = id;
	r->optional = s->optional;
	r->page_size = s->page_size > 0 ? s->page_size : 500;
	r->kind = carve_strdup(s->kind ? s->kind : s->path);
	r->path = carve_strdup(s->path);
	r->sel = carve_strdup("");
	if (!r->kind || !r->path || !r->sel || add_sel(&r->sel, "fieldSelector", s->field_selector) ||
	    add_sel(&r->sel, "labelSelector", s->label_selector)) {
		reflector_free(r);
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		return NULL;
	}
	if (pthread_create(&r->th, NULL, reflect, r) != 0) {
		reflector_free(r);
		carve_errorf(err, CARVE_EIO, "watch %s: cannot start its thread", s->kind);
		return NULL;
	}
	return r;
}

void carve_kube_watch_stop(struct carve_kube_reflector *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->mu);
	atomic_store(&r->stop, true);
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->th, NULL);
	reflector_free(r);
}

void carve_kube_watch_stats(struct carve_kube_reflector *r, struct carve_kube_watch_stats *out)
{
	pthread_mutex_lock(&r->mu);
	*out = r->st;
	pthread_mutex_unlock(&r->mu);
}
