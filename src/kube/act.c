/*
 * act.c - carries a scheduler plan (include/carve/plan.h) out through the
 * API server, the way kube-scheduler and Kueue write their decisions:
 *  - binds: POST pods/NAME/binding, metadata.uid as the precondition and
 *    the plan's annotations (carve.dev/devices, carve.dev/flavors) merged
 *    onto the pod by the server; sent concurrently by a few worker threads
 *    (a gang's binds go out together); 409 means someone else acted: the
 *    pod is dropped from this plan and the next cycle sees the truth.  A
 *    bind accepted is put in the pod store as bound at once (the assume
 *    cache), and a Normal "Scheduled" event says where.
 *  - pending pods: PodScheduled=False, reason Unschedulable and the
 *    engine's message (a strategic-merge PATCH of pods/NAME/status, only
 *    when it changed; lastTransitionTime kept while the status stays
 *    False), and a Warning FailedScheduling event, again only when the
 *    message changed or after a backoff per pod that doubles from 1 to 10
 *    minutes (kube-scheduler's event aggregation).  Both go through a
 *    bounded queue keyed by pod (the latest message wins) drained by the
 *    writer thread on its own client, so binds never wait behind them.
 *  - preemption: the DisruptionTarget condition (PreemptionByScheduler) on
 *    each victim, then DELETE with the pod's grace period and its uid as
 *    precondition; status.nominatedNodeName on the preemptor's pods.
 *    A bind that got no answer or a 5xx may have succeeded: the pod is
 *    held as bound the same way ("maybe bound") until the watch shows it
 *    or act_settle's GET says what the server holds.
 *  - releases (a half-bound gang that cannot complete): a Warning event,
 *    then DELETE, so the gang is queued whole again.
 *  - queue status: ClusterQueue and LocalQueue status as Kueue's
 *    ClusterQueueStatus spells it (pendingWorkloads, reservingWorkloads,
 *    admittedWorkloads, flavorsReservation, flavorsUsage), and Volcano/KAI
 *    PodGroup status.phase: a merge PATCH of the status subresource, only
 *    when it differs from the stored object.
 * Events are events.k8s.io/v1 (reportingController carve.dev/scheduler).
 * Leadership is checked before every request; once lost, nothing more is
 * sent (act_lost_leadership).  Every API error is logged with the object
 * and counted (403/404/422, which retrying does not cure, logged once per
 * request and status); nothing here stops the loop.  Sources: kube-scheduler's binder, its
 * FailedScheduling/Scheduled/Preempted events and PodScheduled condition,
 * the DisruptionTarget condition (Kubernetes' pod disruption conditions),
 * Kueue's ClusterQueueStatus (apis/kueue/v1beta2/clusterqueue_types.go).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "carve/devices.h"
#include "carve/miglayout.h"
#include "metrics.h"
#include "sched.h"
#include "trim.h"

#define ACT_WORKERS 8
#define EVENT_NOTE_MAX 1024        /* events.k8s.io/v1 note limit */
#define EVENT_REPEAT_S 60          /* a pending pod's event again after this, */
#define EVENT_REPEAT_MAX_S 600     /* doubling each time up to this */
#define STATUS_QUEUE_MAX 10000     /* pending-pod writes queued at most */
#define LOGGED_MAX 20000           /* persistent failures remembered */
#define CONTROLLER "carve.dev/scheduler"

struct act {
	struct carve_kube *k;
	char *identity;
	enum carve_queues_mode queues;
	int workers;
	struct kube_registry *reg;   /* metrics, or NULL */
	atomic_ulong seq;            /* event names unique within one ns */
	json_t *pending_memo;        /* pod uid -> {"m": message, "t": seconds, "b": backoff,
				      * "p": patched} (loop thread) */
	json_t *written;             /* status path -> {"want", "have"}: what a status
				      * PATCH sent and the server kept (loop thread) */
	struct carve_kube *sk;       /* the writer's client */
	struct carve_kube_elector *el;
	void (*beat)(void *);
	void *beat_ctx;
	atomic_bool lost;            /* leadership lost: nothing more is sent */
	atomic_size_t transient;     /* 429/5xx/no answer, counted by req */
	pthread_mutex_t log_mu;
	json_t *logged;              /* "METHOD path status" of persistent failures */
	json_t *maybe;               /* "ns/name" -> uid: binds that may have succeeded
				      * (timed out, 5xx), held as bound (loop thread) */
	/* the pending-pod writes: pod key -> {"ns","name","pod","cond","note"} */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	json_t *sq;
	size_t sq_max;
	bool stop, started;
	pthread_t writer;
};

static void *writer_main(void *arg);

struct act *act_create(const struct act_opts *o)
{
	struct act *a = carve_calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->k = o->k;
	a->sk = o->status_k ? o->status_k : o->k;
	a->el = o->el;
	a->beat = o->beat;
	a->beat_ctx = o->beat_ctx;
	a->identity = carve_strdup(o->identity ? o->identity : "carve");
	a->queues = o->queues;
	a->workers = o->workers > 0 ? o->workers : ACT_WORKERS;
	a->reg = o->reg;
	a->sq_max = o->status_queue_max ? o->status_queue_max : STATUS_QUEUE_MAX;
	atomic_init(&a->seq, 0);
	atomic_init(&a->lost, false);
	atomic_init(&a->transient, 0);
	pthread_mutex_init(&a->log_mu, NULL);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	a->pending_memo = json_object();
	a->written = json_object();
	a->logged = json_object();
	a->sq = json_object();
	a->maybe = json_object();
	if (!a->identity || !a->pending_memo || !a->written || !a->logged || !a->sq || !a->maybe) {
		act_destroy(a);
		return NULL;
	}
	a->started = pthread_create(&a->writer, NULL, writer_main, a) == 0;
	if (!a->started) {
		act_destroy(a);
		return NULL;
	}
	return a;
}

void act_destroy(struct act *a)
{
	if (!a)
		return;
	if (a->started) {
		pthread_mutex_lock(&a->mu);
		a->stop = true;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->writer, NULL);
	}
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	pthread_mutex_destroy(&a->log_mu);
	json_decref(a->sq);
	json_decref(a->maybe);
	json_decref(a->logged);
	json_decref(a->written);
	json_decref(a->pending_memo);
	carve_free(a->identity);
	carve_free(a);
}

bool act_lost_leadership(const struct act *a)
{
	return atomic_load(&((struct act *)a)->lost);
}

size_t act_status_queued(struct act *a)
{
	size_t n;

	pthread_mutex_lock(&a->mu);
	n = json_object_size(a->sq);
	pthread_mutex_unlock(&a->mu);
	return n;
}

static void beat(struct act *a)
{
	if (a->beat)
		a->beat(a->beat_ctx);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool ok2xx(int status)
{
	return status >= 200 && status < 300;
}

/* Whether a failure may pass by itself (429, 5xx, no answer). */
static bool transient(int st)
{
	return st < 0 || st == 429 || st >= 500;
}

/* Whether this process may still write: checked before every request. */
static bool leads(struct act *a)
{
	if (atomic_load(&a->lost))
		return false;
	if (a->el && !carve_kube_is_leader(a->el)) {
		atomic_store(&a->lost, true);
		return false;
	}
	return true;
}

/* A persistent failure (403, 404, 422...) is logged once per request and
 * status; true when this one was not logged before. */
static bool first_failure(struct act *a, const char *method, const char *path, int st)
{
	char key[1024];
	bool first;

	snprintf(key, sizeof(key), "%s %s %d", method, path, st);
	pthread_mutex_lock(&a->log_mu);
	if (json_object_size(a->logged) >= LOGGED_MAX)
		json_object_clear(a->logged);
	first = !json_object_get(a->logged, key);
	if (first)
		json_object_set_new(a->logged, key, json_true());
	pthread_mutex_unlock(&a->log_mu);
	return first;
}

/* One request through client k; body stolen (may be NULL).  Logs a
 * failure naming what.  CARVE_EINVAL, nothing sent, once leadership is lost. */
static int req_on(struct act *a, struct carve_kube *k, const char *method, const char *path,
		  const char *ctype, json_t *body, json_t **out, const char *what)
{
	struct carve_error err = {0};
	int st;

	if (!leads(a)) {
		json_decref(body);
		return CARVE_EINVAL;
	}
	st = carve_kube_request(k, method, path, ctype, body, out, &err);
	json_decref(body);
	if (transient(st) && k == a->k) /* the writer's own retries: not the loop's */
		atomic_fetch_add(&a->transient, 1);
	if (st < 0)
		sched_logf("%s: %s", what, err.text[0] ? err.text : carve_strerror(st));
	else if (!ok2xx(st) && st != 409 && (transient(st) || first_failure(a, method, path, st)))
		sched_logf("%s: HTTP %d%s", what, st,
			   transient(st) ? "" : " (logged once; not retried until something changes)");
	return st;
}

static int req(struct act *a, const char *method, const char *path, const char *ctype,
	       json_t *body, json_t **out, const char *what)
{
	return req_on(a, a->k, method, path, ctype, body, out, what);
}

char *act_qty(const char *res, int64_t milli, char *buf, size_t size)
{
	bool bytes = res && (strstr(res, "memory") || strstr(res, "storage"));
	int64_t v;

	if (milli % 1000) {
		snprintf(buf, size, "%lldm", (long long)milli);
		return buf;
	}
	v = milli / 1000;
	if (bytes && v > 0 && v % (1LL << 30) == 0)
		snprintf(buf, size, "%lldGi", (long long)(v >> 30));
	else if (bytes && v > 0 && v % (1LL << 20) == 0)
		snprintf(buf, size, "%lldMi", (long long)(v >> 20));
	else
		snprintf(buf, size, "%lld", (long long)v);
	return buf;
}

/* ---- events ---- */

/* s cut to at most max bytes on a UTF-8 character boundary (a new string). */
static json_t *cut_utf8(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	return json_stringn(s, n);
}

static const char *str_at(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int event_on(struct act *a, struct carve_kube *k, const json_t *obj, const char *type,
		    const char *reason, const char *note, int64_t now_ns)
{
	const char *ns = carve_kube_ns(obj), *name = carve_kube_name(obj), *uid = carve_kube_uid(obj);
	const char *kind = str_at(obj, "kind"), *apiv = str_at(obj, "apiVersion");
	char ename[256], t[40], path[512], what[512];
	json_t *ev, *reg;

	if (!name)
		return CARVE_EINVAL;
	if (!ns || !*ns)
		ns = "default";
	snprintf(ename, sizeof(ename), "%.200s.%llx%lx", name, (unsigned long long)now_ns,
		 (unsigned long)atomic_fetch_add(&a->seq, 1) & 0xfff);
	reg = json_pack("{s:s, s:s, s:s}", "apiVersion", apiv ? apiv : "v1", "kind",
			kind ? kind : "Pod", "name", name);
	if (!reg)
		return CARVE_ENOMEM;
	if (carve_kube_ns(obj))
		json_object_set_new(reg, "namespace", json_string(ns));
	if (uid)
		json_object_set_new(reg, "uid", json_string(uid));
	ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o}",
		       "apiVersion", "events.k8s.io/v1", "kind", "Event",
		       "metadata", "name", ename, "namespace", ns,
		       "eventTime", carve_kube_time(now_ns, t, sizeof(t)),
		       "reportingController", CONTROLLER, "reportingInstance", a->identity,
		       "action", "Scheduling", "reason", reason, "type", type,
		       "regarding", reg, "note", cut_utf8(note ? note : "", EVENT_NOTE_MAX));
	if (!ev)
		return CARVE_ENOMEM;
	snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events", ns);
	snprintf(what, sizeof(what), "event %s on %s %s/%s", reason, kind ? kind : "Pod", ns, name);
	return req_on(a, k, "POST", path, NULL, ev, NULL, what);
}

int act_event(struct act *a, const json_t *obj, const char *type, const char *reason,
	      const char *note, int64_t now_ns)
{
	return event_on(a, a->k, obj, type, reason, note, now_ns);
}

/* ---- binds ---- */

struct bind_job {
	struct act *a;
	const struct carve_plan *p;
	int64_t now_ns;
	atomic_size_t next;
	int *status;        /* per bind: HTTP status or negative error */
	double *secs;       /* per bind: latency */
};

static json_t *bind_body(const struct carve_plan_bind *b)
{
	json_t *ann = json_object(), *body;

	if (!ann)
		return NULL;
	json_object_set_new(ann, CARVE_DEVICES_ANNOTATION, json_string(b->devices ? b->devices : ""));
	if (b->flavors && *b->flavors)
		json_object_set_new(ann, CARVE_FLAVORS_ANNOTATION, json_string(b->flavors));
	body = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:o}, s:{s:s, s:s, s:s}}",
			 "apiVersion", "v1", "kind", "Binding",
			 "metadata", "name", b->pod.name, "namespace", b->pod.ns,
			 "uid", b->pod.uid ? b->pod.uid : "", "annotations", ann,
			 "target", "apiVersion", "v1", "kind", "Node", "name", b->node);
	return body;
}

static void *bind_worker(void *arg)
{
	struct bind_job *j = arg;
	size_t i;

	while ((i = atomic_fetch_add(&j->next, 1)) < j->p->nbinds) {
		const struct carve_plan_bind *b = &j->p->binds[i];
		char path[768], what[768], note[1024];
		double t0 = mono_s();
		json_t *body, *pod;

		beat(j->a);
		if (!leads(j->a)) { /* stop at once: the rest stays unbound */
			j->status[i] = CARVE_EINVAL;
			continue;
		}
		body = bind_body(b);
		if (!body) {
			j->status[i] = CARVE_ENOMEM;
			continue;
		}
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/binding", b->pod.ns,
			 b->pod.name);
		snprintf(what, sizeof(what), "bind Pod %s/%s to %s", b->pod.ns, b->pod.name, b->node);
		j->status[i] = req(j->a, "POST", path, NULL, body, NULL, what);
		j->secs[i] = mono_s() - t0;
		if (j->status[i] == 409)
			sched_logf("bind Pod %s/%s: 409 Conflict (bound or changed by someone else); "
				   "left to the next cycle", b->pod.ns, b->pod.name);
		if (!ok2xx(j->status[i]))
			continue;
		pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "Pod",
				"metadata", "namespace", b->pod.ns, "name", b->pod.name, "uid",
				b->pod.uid ? b->pod.uid : "");
		snprintf(note, sizeof(note), "Successfully assigned %s/%s to %s (devices %s)",
			 b->pod.ns, b->pod.name, b->node, b->devices ? b->devices : "");
		if (pod)
			act_event(j->a, pod, "Normal", "Scheduled", note, j->now_ns);
		json_decref(pod);
	}
	return NULL;
}

/* The pod as the server now holds it after the bind: nodeName, the
 * annotations, PodScheduled=True (a new object), or NULL. */
static json_t *assume_bound(const json_t *stored, const struct carve_plan_bind *b)
{
	json_t *pod = json_deep_copy(stored), *meta, *ann, *spec;

	if (!pod)
		return NULL;
	meta = json_object_get(pod, "metadata");
	spec = json_object_get(pod, "spec");
	if (!json_is_object(meta) || !json_is_object(spec)) {
		json_decref(pod);
		return NULL;
	}
	ann = json_object_get(meta, "annotations");
	if (!json_is_object(ann)) {
		ann = json_object();
		json_object_set_new(meta, "annotations", ann);
	}
	json_object_set_new(ann, CARVE_DEVICES_ANNOTATION, json_string(b->devices ? b->devices : ""));
	if (b->flavors && *b->flavors)
		json_object_set_new(ann, CARVE_FLAVORS_ANNOTATION, json_string(b->flavors));
	json_object_set_new(spec, "nodeName", json_string(b->node));
	return pod;
}

/* Seconds since the epoch of an RFC 3339 time ("2026-12-03T17:02:26Z",
 * fractions ignored), or -1. */
static double rfc3339_s(const char *t)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!t || sscanf(t, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			 &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm);
}

/* kueue_admitted_workloads_total and the admission wait of every gang of
 * p whose binds all succeeded: from its first pod's creation to now. */
static void gangs_admitted(struct act *a, const struct carve_plan *p, const struct act_stores *s,
			   const int *status, int64_t now_ns)
{
	size_t g, k;

	for (g = 0; g < p->ngangs; g++) {
		const struct carve_plan_gang *gg = &p->gangs[g];
		double first = -1;
		bool all = gg->n > 0;

		for (k = gg->first; k < gg->first + gg->n && k < p->nbinds; k++) {
			json_t *pod = carve_kube_store_get(s->pods, p->binds[k].pod.ns,
							   p->binds[k].pod.name);
			double c = rfc3339_s(str_at(json_object_get(pod, "metadata"),
						    "creationTimestamp"));

			if (!ok2xx(status[k]))
				all = false;
			if (c >= 0 && (first < 0 || c < first))
				first = c;
		}
		if (all)
			kube_metrics_admitted(a->reg, gg->cq ? gg->cq : "",
					      first < 0 ? 0 : (double)now_ns / 1e9 - first);
	}
}

static int do_binds(struct act *a, const struct carve_plan *p, const struct act_stores *s,
		    json_t *assumed, int64_t now_ns, struct act_result *r)
{
	struct bind_job j = {.a = a, .p = p, .now_ns = now_ns};
	pthread_t th[ACT_WORKERS * 4];
	int nth = a->workers, started = 0, i;
	size_t k;

	if (!p->nbinds)
		return 0;
	j.status = carve_calloc(p->nbinds, sizeof(*j.status));
	j.secs = carve_calloc(p->nbinds, sizeof(*j.secs));
	if (!j.status || !j.secs) {
		carve_free(j.status);
		carve_free(j.secs);
		return CARVE_ENOMEM;
	}
	atomic_init(&j.next, 0);
	if ((size_t)nth > p->nbinds)
		nth = (int)p->nbinds;
	if (nth > (int)(sizeof(th) / sizeof(th[0])))
		nth = (int)(sizeof(th) / sizeof(th[0]));
	for (i = 1; i < nth; i++) {
		if (pthread_create(&th[started], NULL, bind_worker, &j))
			break;
		started++;
	}
	bind_worker(&j); /* this thread works too */
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (k = 0; k < p->nbinds; k++) {
		const struct carve_plan_bind *b = &p->binds[k];
		json_t *stored, *pod;
		char key[512];

		stored = carve_kube_store_get(s->pods, b->pod.ns, b->pod.name);
		if (j.status[k] == 409) {
			r->bind_conflicts++;
			if (a->reg)
				kube_metrics_bind(a->reg, "conflict", j.secs[k]);
			continue;
		}
		if (!ok2xx(j.status[k])) {
			r->bind_errors++;
			if (a->reg)
				kube_metrics_bind(a->reg, "error", j.secs[k]);
			/* no answer or a 5xx: the server may have bound it; its
			 * devices stay held until the watch or a GET settles it */
			if ((j.status[k] >= 500 || j.status[k] == CARVE_EIO) && stored &&
			    (pod = assume_bound(stored, b))) {
				snprintf(key, sizeof(key), "%s/%s", b->pod.ns, b->pod.name);
				sched_logf("bind Pod %s: no clear answer; held as bound to %s until "
					   "the watch or a GET settles it", key, b->node);
				if (carve_kube_store_put(s->pods, pod) == 0 && assumed) {
					json_object_set(assumed, key, pod);
					json_object_set_new(a->maybe, key,
							    json_string(b->pod.uid ? b->pod.uid : ""));
				}
				json_decref(pod);
			}
			continue;
		}
		r->bound++;
		r->bind_seconds_sum += j.secs[k];
		if (b->pod.uid && *b->pod.uid) { /* nothing pending to write about it any more */
			pthread_mutex_lock(&a->mu);
			json_object_del(a->sq, b->pod.uid);
			pthread_mutex_unlock(&a->mu);
		}
		if (a->reg)
			kube_metrics_bind(a->reg, "success", j.secs[k]);
		if (!stored)
			continue;
		pod = assume_bound(stored, b);
		if (!pod)
			continue;
		if (carve_kube_store_put(s->pods, pod) == 0 && assumed) {
			snprintf(key, sizeof(key), "%s/%s", b->pod.ns, b->pod.name);
			json_object_set(assumed, key, pod);
		}
		json_decref(pod);
	}
	if (a->reg)
		gangs_admitted(a, p, s, j.status, now_ns);
	carve_free(j.status);
	carve_free(j.secs);
	return 0;
}

/* ---- pod status ---- */

/* The pod in the store when it is still the one the plan named. */
static json_t *plan_pod(const struct act_stores *s, const struct carve_plan_pod *pp)
{
	json_t *pod = carve_kube_store_get(s->pods, pp->ns, pp->name);
	const char *uid;

	if (!pod)
		return NULL;
	uid = carve_kube_uid(pod);
	if (pp->uid && *pp->uid && uid && strcmp(uid, pp->uid))
		return NULL;
	return pod;
}

static json_t *pod_condition(const json_t *pod, const char *type)
{
	json_t *conds = json_object_get(json_object_get(pod, "status"), "conditions"), *c;
	size_t i;

	json_array_foreach(conds, i, c) {
		const char *t = str_at(c, "type");

		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

static bool str_eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* PATCH pods/NAME/status (strategic merge: conditions merge by type). */
static int patch_pod_status(struct act *a, const struct carve_plan_pod *pp, json_t *status,
			    const char *what)
{
	char path[768], w[768];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", pp->ns, pp->name);
	snprintf(w, sizeof(w), "%s of Pod %s/%s", what, pp->ns, pp->name);
	return req(a, "PATCH", path, "application/strategic-merge-patch+json",
		   json_pack("{s:o}", "status", status), NULL, w);
}

/* A condition; lastTransitionTime is since when (NULL: now). */
static json_t *condition(const char *type, const char *st, const char *reason, const char *msg,
			 const char *since, int64_t now_ns)
{
	char t[40], *dot;

	carve_kube_time(now_ns, t, sizeof(t));
	dot = strchr(t, '.');
	if (dot) /* conditions carry whole seconds (metav1.Time) */
		strcpy(dot, "Z");
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status", st, "reason", reason,
			 "message", msg ? msg : "", "lastTransitionTime", since ? since : t);
}

/* ---- the pending-pod writer ---- */

/* Queues a PodScheduled condition (cond, stolen, or NULL) and/or a
 * FailedScheduling event (note, or NULL) for pod; what is already queued
 * for it is replaced (the latest message wins).  false when the queue is
 * full (nothing queued). */
static bool status_enqueue(struct act *a, const char *key, const struct carve_plan_pod *pp,
			   const json_t *pod, json_t *cond, const char *note)
{
	json_t *e, *ref;
	bool ok = true;

	pthread_mutex_lock(&a->mu);
	e = json_object_get(a->sq, key);
	if (!e && json_object_size(a->sq) >= a->sq_max) {
		ok = false;
	} else if (!e) {
		ref = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "Pod",
				"metadata", "namespace", pp->ns, "name", pp->name, "uid",
				carve_kube_uid(pod) ? carve_kube_uid(pod) : "");
		e = json_pack("{s:s, s:s, s:o}", "ns", pp->ns, "name", pp->name, "pod", ref);
		ok = e && !json_object_set_new(a->sq, key, e);
	}
	if (ok) {
		if (cond) {
			json_object_set(e, "cond", cond);
			json_object_set_new(e, "rv", json_string(carve_kube_rv(pod) ? carve_kube_rv(pod)
										      : ""));
		}
		if (note)
			json_object_set_new(e, "note", json_string(note));
		pthread_cond_signal(&a->cv);
	}
	pthread_mutex_unlock(&a->mu);
	json_decref(cond);
	return ok;
}

static void writer_one(struct act *a, json_t *e)
{
	const char *ns = str_at(e, "ns"), *name = str_at(e, "name");
	json_t *cond = json_object_get(e, "cond");
	const char *note = str_at(e, "note");
	struct timespec ts;
	char path[768], w[768];

	clock_gettime(CLOCK_REALTIME, &ts);
	if (cond) {
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", ns, name);
		snprintf(w, sizeof(w), "PodScheduled condition of Pod %s/%s", ns, name);
		/* the pod's resourceVersion as precondition: a pod bound (or
		 * changed) since the condition was decided gets a 409, and no
		 * PodScheduled=False lands on top of the binding's True */
		req_on(a, a->sk, "PATCH", path, "application/strategic-merge-patch+json",
		       json_pack("{s:{s:s}, s:{s:[O]}}", "metadata", "resourceVersion",
				 str_at(e, "rv") ? str_at(e, "rv") : "", "status", "conditions",
				 cond),
		       NULL, w);
	}
	if (note)
		event_on(a, a->sk, json_object_get(e, "pod"), "Warning", "FailedScheduling", note,
			 (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

/* The writer thread: one queued pod at a time, until act_destroy. */
static void *writer_main(void *arg)
{
	struct act *a = arg;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		void *it;
		json_t *e;

		while (!a->stop && !json_object_size(a->sq))
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop)
			break;
		if (!leads(a)) {
			json_object_clear(a->sq);
			continue;
		}
		it = json_object_iter(a->sq);
		e = json_incref(json_object_iter_value(it));
		json_object_del(a->sq, json_object_iter_key(it));
		pthread_mutex_unlock(&a->mu);
		writer_one(a, e);
		json_decref(e);
		pthread_mutex_lock(&a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* Decides the pending pods' writes on the loop thread and queues them for
 * the writer (nothing is sent here). */
static int do_pending(struct act *a, const struct carve_plan *p, const struct act_stores *s,
		      int64_t now_ns, struct act_result *r)
{
	json_t *memo = json_object();
	double now_s = (double)now_ns / 1e9;
	size_t i;

	if (!memo)
		return CARVE_ENOMEM;
	for (i = 0; i < p->npending; i++) {
		const struct carve_plan_pending *pe = &p->pending[i];
		json_t *pod = plan_pod(s, &pe->pod), *c, *old, *m, *cond = NULL;
		const char *key, *reason = pe->reason ? pe->reason : "Unschedulable";
		const char *msg = pe->message ? pe->message : "", *since = NULL;
		double backoff;
		bool same, again, patch, was_false;

		if (!pod)
			continue;
		key = carve_kube_uid(pod) ? carve_kube_uid(pod) : carve_kube_name(pod);
		old = json_object_get(a->pending_memo, key);
		c = pod_condition(pod, "PodScheduled");
		was_false = c && str_eq(str_at(c, "status"), "False");
		same = was_false && str_eq(str_at(c, "reason"), reason) &&
		       str_eq(str_at(c, "message"), msg);
		/* "p"/"v": the message last queued at the pod's resourceVersion then
		 * (the write may have lost to a bind or another change: a pod
		 * changed since is written again) */
		patch = !same && !(old && str_eq(str_at(old, "p"), msg) &&
				   str_eq(str_at(old, "v"), carve_kube_rv(pod)));
		if (patch) {
			if (was_false) /* the status stays False: so does its transition time */
				since = str_at(c, "lastTransitionTime");
			cond = condition("PodScheduled", "False", reason, msg, since, now_ns);
		}
		backoff = old ? json_real_value(json_object_get(old, "b")) : 0;
		if (backoff < EVENT_REPEAT_S)
			backoff = EVENT_REPEAT_S;
		again = !old || !str_eq(str_at(old, "m"), msg) ||
			now_s - json_real_value(json_object_get(old, "t")) >= backoff;
		if (!patch && !again) {
			m = json_deep_copy(old);
			if (m)
				json_object_set_new(m, "p", json_string(msg));
		} else if (!status_enqueue(a, key, &pe->pod, pod, cond, again ? msg : NULL)) {
			m = old ? json_deep_copy(old) : NULL; /* full: tried again next cycle */
		} else {
			r->status_queued++;
			if (patch)
				r->pending_updates++;
			if (again) {
				r->events++;
				/* the same message again only after a backoff that doubles */
				backoff = old && str_eq(str_at(old, "m"), msg) ? backoff * 2
									 : EVENT_REPEAT_S;
				if (backoff > EVENT_REPEAT_MAX_S)
					backoff = EVENT_REPEAT_MAX_S;
				m = json_pack("{s:s, s:f, s:f, s:s, s:s}", "m", msg, "t", now_s,
					      "b", backoff, "p", msg, "v",
					      carve_kube_rv(pod) ? carve_kube_rv(pod) : "");
			} else {
				m = json_deep_copy(old);
				if (m) {
					json_object_set_new(m, "p", json_string(msg));
					json_object_set_new(m, "v", json_string(carve_kube_rv(pod)
										? carve_kube_rv(pod) : ""));
				}
			}
		}
		if (m)
			json_object_set_new(memo, key, m);
	}
	json_decref(a->pending_memo); /* pods no longer pending are forgotten */
	a->pending_memo = memo;
	return 0;
}

static int64_t grace_of(const json_t *pod)
{
	json_t *g = json_object_get(json_object_get(pod, "spec"), "terminationGracePeriodSeconds");

	return json_is_integer(g) && json_integer_value(g) >= 0 ? json_integer_value(g) : 30;
}

/* DELETE the pod with its grace period and its uid as precondition. */
static int delete_pod(struct act *a, const json_t *pod, const struct carve_plan_pod *pp,
		      const char *what)
{
	char path[768], w[768];
	json_t *body = json_pack("{s:s, s:s, s:I, s:{s:s}}", "apiVersion", "v1", "kind",
				 "DeleteOptions", "gracePeriodSeconds", (json_int_t)grace_of(pod),
				 "preconditions", "uid",
				 carve_kube_uid(pod) ? carve_kube_uid(pod) : "");

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", pp->ns, pp->name);
	snprintf(w, sizeof(w), "%s: delete Pod %s/%s", what, pp->ns, pp->name);
	return req(a, "DELETE", path, NULL, body, NULL, w);
}

static bool deleting(const json_t *pod)
{
	return json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") != NULL;
}

/* The ClusterQueue of a pod: its kueue.x-k8s.io/queue-name label through
 * the LocalQueue of its namespace; "" when unknown. */
static const char *cq_of_pod(const struct act_stores *s, const json_t *pod)
{
	const char *lqn = str_at(json_object_get(json_object_get(pod, "metadata"), "labels"),
				 "kueue.x-k8s.io/queue-name");
	json_t *lq;
	const char *cq;

	if (!lqn || !s->lqs)
		return "";
	lq = carve_kube_store_get(s->lqs, carve_kube_ns(pod), lqn);
	cq = str_at(json_object_get(lq, "spec"), "clusterQueue");
	return cq ? cq : "";
}

/* The ClusterQueue of workload wl, through one of its pending pods. */
static const char *cq_of_workload(const struct carve_plan *p, const struct act_stores *s,
				  const char *wl)
{
	size_t i;

	for (i = 0; wl && i < p->npending; i++)
		if (p->pending[i].workload && !strcmp(p->pending[i].workload, wl)) {
			json_t *pod = plan_pod(s, &p->pending[i].pod);

			return pod ? cq_of_pod(s, pod) : "";
		}
	return "";
}

static void do_victims(struct act *a, const struct carve_plan *p, const struct act_stores *s,
		       int64_t now_ns, struct act_result *r)
{
	size_t i;

	for (i = 0; i < p->nvictims; i++) {
		const struct carve_plan_victim *v = &p->victims[i];
		json_t *pod = plan_pod(s, &v->pod);
		char msg[1024];
		int st;

		if (!pod || deleting(pod))
			continue;
		snprintf(msg, sizeof(msg), "%s: preempted to make room for workload %s%s%s",
			 v->reason ? v->reason : "Preempted", v->preemptor ? v->preemptor : "?",
			 v->message && *v->message ? ": " : "", v->message ? v->message : "");
		beat(a);
		st = patch_pod_status(a, &v->pod,
				      json_pack("{s:[o]}", "conditions",
						condition("DisruptionTarget", "True",
							  "PreemptionByScheduler", msg, NULL, now_ns)),
				      "DisruptionTarget condition");
		if (!ok2xx(st)) {
			r->errors++;
			continue; /* the pod changed or is gone: the next cycle decides again */
		}
		act_event(a, pod, "Normal", "Preempted", msg, now_ns);
		st = delete_pod(a, pod, &v->pod, "preemption");
		if (ok2xx(st) && a->reg)
			kube_metrics_preempted(a->reg, cq_of_workload(p, s, v->preemptor),
					       v->reason ? v->reason : "", cq_of_pod(s, pod));
		if (ok2xx(st))
			r->preempted++;
		else if (st != 404)
			r->errors++;
	}
}

static void do_nominate(struct act *a, const struct carve_plan *p, const struct act_stores *s,
			struct act_result *r)
{
	size_t i;

	for (i = 0; i < p->nnominate; i++) {
		const struct carve_plan_nominate *n = &p->nominate[i];
		json_t *pod = plan_pod(s, &n->pod);
		const char *cur;

		if (!pod || !n->node)
			continue;
		cur = str_at(json_object_get(pod, "status"), "nominatedNodeName");
		if (str_eq(cur, n->node))
			continue;
		if (ok2xx(patch_pod_status(a, &n->pod, json_pack("{s:s}", "nominatedNodeName", n->node),
					   "nominatedNodeName")))
			r->nominated++;
		else
			r->errors++;
	}
}

static void do_releases(struct act *a, const struct carve_plan *p, const struct act_stores *s,
			int64_t now_ns, struct act_result *r)
{
	size_t i;

	for (i = 0; i < p->nreleases; i++) {
		const struct carve_plan_release *rl = &p->releases[i];
		json_t *pod = plan_pod(s, &rl->pod);
		char msg[1024];
		int st;

		if (!pod || deleting(pod))
			continue;
		snprintf(msg, sizeof(msg), "gang %s was bound only in part and cannot complete; "
			 "its bound pods are released so it is queued whole again%s%s",
			 rl->workload ? rl->workload : "?", rl->message && *rl->message ? ": " : "",
			 rl->message ? rl->message : "");
		act_event(a, pod, "Warning", "GangReleased", msg, now_ns);
		st = delete_pod(a, pod, &rl->pod, "gang release");
		if (ok2xx(st))
			r->released++;
		else if (st != 404)
			r->errors++;
	}
}

/* ---- queue and PodGroup status ---- */

/* true when every key of want equals the same key of have's status. */
static bool status_has(const json_t *obj, const json_t *want)
{
	const json_t *have = json_object_get(obj, "status");
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)want, k, v)
		if (!json_equal(v, json_object_get(have, k)))
			return false;
	return true;
}

static json_t *flavors_usage(const struct carve_plan_cq *cq)
{
	json_t *arr = json_array(), *fl = NULL;
	const char *cur = NULL;
	size_t i;
	char q[40], b[40];

	if (!arr)
		return NULL;
	for (i = 0; i < cq->nusage; i++) {
		const struct carve_plan_usage *u = &cq->usage[i];
		json_t *res;

		if (!cur || strcmp(cur, u->flavor)) {
			fl = json_pack("{s:s, s:[]}", "name", u->flavor, "resources");
			if (!fl || json_array_append_new(arr, fl))
				break;
			cur = u->flavor;
		}
		res = json_pack("{s:s, s:s, s:s}", "name", u->resource, "total",
				act_qty(u->resource, u->total, q, sizeof(q)), "borrowed",
				act_qty(u->resource, u->borrowed, b, sizeof(b)));
		if (res)
			json_array_append_new(json_object_get(fl, "resources"), res);
	}
	return arr;
}

/* PATCHes the status subresource at path to want (stolen) unless obj's
 * status has it already, or unless this very status was sent before and
 * the server kept obj's status as it answered then (a schema that prunes
 * a field is not written again every cycle). */
static void patch_status(struct act *a, const char *path, const json_t *obj, json_t *want,
			 const char *what, struct act_result *r)
{
	json_t *prev = json_object_get(a->written, path), *out = NULL;
	int st;

	if (obj && status_has(obj, want)) {
		json_object_del(a->written, path);
		json_decref(want);
		return;
	}
	if (obj && prev && json_equal(json_object_get(prev, "want"), want) &&
	    json_equal(json_object_get(prev, "have"), json_object_get(obj, "status"))) {
		json_decref(want);
		return;
	}
	beat(a);
	st = req(a, "PATCH", path, "application/merge-patch+json",
		 json_pack("{s:O}", "status", want), &out, what);
	if (ok2xx(st)) {
		r->status_updates++;
		json_object_set_new(a->written, path,
				    json_pack("{s:o, s:O?}", "want", want, "have",
					      json_object_get(out, "status")));
	} else {
		json_decref(want);
		r->errors++;
	}
	json_decref(out);
}

static void do_queues(struct act *a, const struct carve_plan *p, const struct act_stores *s,
		      struct act_result *r)
{
	const char *gv = a->queues == CARVE_QUEUES_KUEUE ? "kueue.x-k8s.io/v1beta2"
							  : "carve.dev/v1alpha1";
	char path[768], what[768];
	size_t i;

	if (a->queues == CARVE_QUEUES_NONE)
		return;
	for (i = 0; i < p->ncqs; i++) {
		const struct carve_plan_cq *cq = &p->cqs[i];
		json_t *fu = flavors_usage(cq), *want;

		if (!fu)
			continue;
		want = json_pack("{s:i, s:i, s:i, s:O, s:o}", "pendingWorkloads", (int)cq->pending,
				 "reservingWorkloads", (int)cq->admitted, "admittedWorkloads",
				 (int)cq->admitted, "flavorsReservation", fu, "flavorsUsage", fu);
		if (!want)
			continue;
		snprintf(path, sizeof(path), "/apis/%s/clusterqueues/%s/status", gv, cq->name);
		snprintf(what, sizeof(what), "status of ClusterQueue %s", cq->name);
		patch_status(a, path, s->cqs ? carve_kube_store_get(s->cqs, NULL, cq->name) : NULL,
			     want, what, r);
	}
	for (i = 0; i < p->nlqs; i++) {
		const struct carve_plan_lq *lq = &p->lqs[i];
		json_t *want = json_pack("{s:i, s:i, s:i}", "pendingWorkloads", (int)lq->pending,
					 "reservingWorkloads", (int)lq->admitted,
					 "admittedWorkloads", (int)lq->admitted);

		if (!want)
			continue;
		snprintf(path, sizeof(path), "/apis/%s/namespaces/%s/localqueues/%s/status", gv,
			 lq->ns, lq->name);
		snprintf(what, sizeof(what), "status of LocalQueue %s/%s", lq->ns, lq->name);
		patch_status(a, path, s->lqs ? carve_kube_store_get(s->lqs, lq->ns, lq->name) : NULL,
			     want, what, r);
	}
}

static void do_podgroups(struct act *a, const struct carve_plan *p, const struct act_stores *s,
			 struct act_result *r)
{
	char path[768], what[768];
	size_t i;

	for (i = 0; i < p->npodgroups; i++) {
		const struct carve_plan_podgroup *g = &p->podgroups[i];
		bool kai = g->api_version && !strncmp(g->api_version, "scheduling.run.ai/", 18);
		struct carve_kube_store *st = kai ? s->kaipgs : s->vcpgs;
		json_t *want;

		if (!g->api_version || !g->phase)
			continue;
		want = json_pack("{s:s}", "phase", g->phase);
		if (!want)
			continue;
		snprintf(path, sizeof(path), "/apis/%s/namespaces/%s/podgroups/%s/status",
			 g->api_version, g->ns, g->name);
		snprintf(what, sizeof(what), "status of PodGroup %s/%s", g->ns, g->name);
		patch_status(a, path, st ? carve_kube_store_get(st, g->ns, g->name) : NULL, want,
			     what, r);
	}
}

size_t act_settle(struct act *a, const struct act_stores *s, json_t *assumed)
{
	const char *key;
	json_t *uid;
	void *tmp;

	json_object_foreach_safe(a->maybe, tmp, key, uid) {
		char path[768], ns[256], name[256];
		json_t *pod = NULL;
		const char *slash = strchr(key, '/');
		int st;

		if (!json_object_get(assumed, key)) { /* the watch settled it */
			json_object_del(a->maybe, key);
			continue;
		}
		if (!slash || (size_t)(slash - key) >= sizeof(ns) || strlen(slash + 1) >= sizeof(name))
			continue;
		memcpy(ns, key, (size_t)(slash - key));
		ns[slash - key] = '\0';
		strcpy(name, slash + 1);
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
		st = req(a, "GET", path, NULL, NULL, &pod, path);
		if (st == 404 || (st == 200 && json_is_object(pod))) {
			const char *u = carve_kube_uid(pod);

			if (st == 200) {
				json_object_set_new(pod, "kind", json_string("Pod"));
				json_object_set_new(pod, "apiVersion", json_string("v1"));
				kube_trim(pod, true);
			}
			json_object_del(assumed, key);
			if (st == 404 || !u || strcmp(u, json_string_value(uid))) {
				struct carve_kube_event ev = {.type = CARVE_KEV_DELETED};

				ev.obj = carve_kube_store_get(s->pods, ns, name);
				if (ev.obj) {
					json_incref(ev.obj);
					carve_kube_store_apply(s->pods, &ev, NULL);
					json_decref(ev.obj);
				}
				if (st == 200)
					carve_kube_store_put(s->pods, pod);
			} else {
				carve_kube_store_put(s->pods, pod); /* bound or not: the truth */
			}
			json_object_del(a->maybe, key);
		}
		json_decref(pod);
	}
	return json_object_size(a->maybe);
}

/*
 * Dynamic MIG: the nodes' wanted layouts (carve.dev/mig-layout) as the
 * plan computed them, written with a merge patch of the annotation when
 * the stored Node has another value; a Normal event on the Node says which
 * gangs wait for it.  The node agent applies the layout and reports it.
 */
static void do_layouts(struct act *a, const struct carve_plan *p, const struct act_stores *s,
		       int64_t now_ns, struct act_result *r)
{
	size_t i;

	for (i = 0; i < p->nlayouts; i++) {
		const struct carve_plan_layout *l = &p->layouts[i];
		const json_t *node = s->nodes ? carve_kube_store_get(s->nodes, NULL, l->node) : NULL;
		json_t *ann = json_object_get(json_object_get(node, "metadata"), "annotations");
		char *esc, path[512];
		int st;

		if (!node || str_eq(str_at(ann, CARVE_MIG_LAYOUT_ANNOTATION), l->layout))
			continue;
		esc = carve_kube_escape(l->node);
		if (!esc) {
			r->errors++;
			continue;
		}
		snprintf(path, sizeof(path), "/api/v1/nodes/%s", esc);
		free(esc);
		st = req(a, "PATCH", path, "application/merge-patch+json",
			 json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
				   CARVE_MIG_LAYOUT_ANNOTATION, l->layout), NULL, "MIG layout");
		if (ok2xx(st)) {
			const char *uid = carve_kube_uid(node);
			json_t *ref = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
						"Node", "metadata", "name", l->node);

			r->layouts++;
			if (ref && uid)
				json_object_set_new(json_object_get(ref, "metadata"), "uid",
						    json_string(uid));
			if (ref && ok2xx(act_event(a, ref, "Normal", "MIGLayoutWanted", l->message,
						   now_ns)))
				r->events++;
			json_decref(ref);
		} else {
			r->errors++;
		}
	}
}

int act_run(struct act *a, const struct carve_plan *p, const struct act_stores *s,
	    json_t *assumed, int64_t now_ns, struct act_result *r)
{
	int rc;

	size_t t0 = atomic_load(&a->transient);

	memset(r, 0, sizeof(*r));
	rc = do_binds(a, p, s, assumed, now_ns, r);
	if (rc || (r->lost = atomic_load(&a->lost)))
		goto out;
	do_victims(a, p, s, now_ns, r);
	do_nominate(a, p, s, r);
	do_releases(a, p, s, now_ns, r);
	if ((r->lost = atomic_load(&a->lost)))
		goto out;
	rc = do_pending(a, p, s, now_ns, r);
	if (rc)
		goto out;
	beat(a);
	do_queues(a, p, s, r);
	do_podgroups(a, p, s, r);
	do_layouts(a, p, s, now_ns, r);
	r->lost = atomic_load(&a->lost);
out:
	r->transient = atomic_load(&a->transient) - t0;
	return rc;
}
