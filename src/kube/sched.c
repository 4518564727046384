/*
 * sched.c - `carve scheduler`'s loop (docs/kubernetes.md): one reflector
 * (list-then-watch, kube.h) and one store per kind, every reflector
 * feeding one event queue; a Lease-based leader elector unless disabled;
 * the metrics and health server.
 *
 * The loop takes every queued event (a blocking wait: no fixed sleep
 * decides anything), applies it to its store, and when something changed,
 * this process leads and every reflector has synced, runs one cycle: a
 * manifest set built from the stores (carve_manifests_add_json per object,
 * source "Kind ns/name"), carve_plan_build, then act.c carries the plan
 * out.  A cycle also runs 30 s after one that left pods pending (the way
 * kube-scheduler flushes its unschedulable pods), and 1 s after one whose
 * binds failed.
 *
 * Invariants:
 *  - only this thread touches the stores and the act state;
 *  - the assume cache: a pod bound by this process is held in the pod
 *    store as bound (nodeName, annotations) from the moment the server
 *    accepted the Binding until the watch brings a version of the pod that
 *    is bound, deleted, or a different pod (uid); an older, unbound
 *    version arriving in between never replaces it, so no plan sees a pod
 *    it bound as still waiting, and no device is assigned twice;
 *  - objects the loaders refuse are logged once per resourceVersion and
 *    message, with a Warning event on the object; they never stop the
 *    loop;
 *  - leadership lost after it was held ends the process with exit 1
 *    (crash-only: the Deployment restarts it, and the restart rebuilds
 *    everything from the API); SIGTERM/SIGINT release the lease, exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "carve/devices.h"
#include "carve/diag.h"
#include "carve/manifest.h"
#include "metrics.h"
#include "sched.h"
#include "serve.h"
#include "trim.h"

#define TICK_MS 2000            /* the longest wait: the health heartbeat */
#define RESYNC_PENDING_S 30.0   /* a cycle again when pods stay pending */
#define RETRY_ERRORS_S 1.0      /* a cycle again after failed binds or 429/5xx, */
#define RETRY_MAX_S 30.0        /* the delay doubling up to this while they go on */
#define STATUS_SHARE 0.25       /* of --qps/--burst: the pending-pod writer's client */
#define OPTIONAL_WAIT_S 30.0    /* optional kinds served at start: wait at most
				 * this long for their first list */
#define REPORTED_MAX 20000      /* object problems remembered; past it, those
				 * not seen in the last cycle are forgotten */

/* ---- logging ---- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

void sched_logf(const char *fmt, ...)
{
	char buf[2048], t[40];
	struct timespec ts;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	clock_gettime(CLOCK_REALTIME, &ts);
	carve_kube_time((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, t, sizeof(t));
	pthread_mutex_lock(&log_mu);
	fprintf(stderr, "%s carve scheduler: ", t);
	carve_fputs_esc(buf, stderr);
	fputc('\n', stderr);
	pthread_mutex_unlock(&log_mu);
}

/* ---- the kinds watched ---- */

enum kind_id {
	K_POD, K_NODE, K_PRIORITYCLASS, K_CONFIGMAP,
	K_FLAVOR, K_CQ, K_LQ, K_COHORT, K_WPC,
	K_VCPG, K_VCQUEUE, K_KAIPG, K_KAIQUEUE, K_COPG,
	K__COUNT
};

struct kind {
	const char *kind, *api_version, *plural;
	bool namespaced, optional, queue; /* queue: one of --queues' kinds */
};

/* Pod is first: the manifest set reads pods after what they refer to
 * does not matter (the plan resolves names after loading). */
static const struct kind kinds[K__COUNT] = {
	[K_POD] = {"Pod", "v1", "pods", true, false, false},
	[K_NODE] = {"Node", "v1", "nodes", false, false, false},
	[K_PRIORITYCLASS] = {"PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", false, false, false},
	[K_CONFIGMAP] = {"ConfigMap", "v1", "configmaps", true, false, false},
	[K_FLAVOR] = {"ResourceFlavor", NULL, "resourceflavors", false, false, true},
	[K_CQ] = {"ClusterQueue", NULL, "clusterqueues", false, false, true},
	[K_LQ] = {"LocalQueue", NULL, "localqueues", true, false, true},
	[K_COHORT] = {"Cohort", NULL, "cohorts", false, true, true},
	[K_WPC] = {"WorkloadPriorityClass", NULL, "workloadpriorityclasses", false, true, true},
	[K_VCPG] = {"PodGroup", "scheduling.volcano.sh/v1beta1", "podgroups", true, true, false},
	[K_VCQUEUE] = {"Queue", "scheduling.volcano.sh/v1beta1", "queues", false, true, false},
	[K_KAIPG] = {"PodGroup", "scheduling.run.ai/v2alpha2", "podgroups", true, true, false},
	[K_KAIQUEUE] = {"Queue", "scheduling.run.ai/v2", "queues", false, true, false},
	[K_COPG] = {"PodGroup", "scheduling.x-k8s.io/v1alpha1", "podgroups", true, true, false},
};

/* Field selector of the pod reflector: terminal pods hold nothing. */
#define POD_FIELD_SELECTOR "status.phase!=Succeeded,status.phase!=Failed"

struct sched {
	const struct sched_opts *o;
	struct carve_kube_config cfg;
	struct carve_kube *k;
	struct carve_kube *sk;           /* the pending-pod writer's client */
	struct carve_kube_queue *q;
	struct carve_kube_reflector *refl[K__COUNT];
	struct carve_kube_store *store[K__COUNT];
	const char *apiv[K__COUNT];      /* apiVersion per kind (queue kinds per --queues) */
	char path[K__COUNT][160];
	struct carve_kube_watch_stats last_stats[K__COUNT];
	bool served[K__COUNT];           /* optional kinds: served at start (wait for them) */
	struct carve_kube_elector *el;
	struct kube_registry *reg;
	struct kube_server *srv;
	struct act *act;
	char *identity;
	json_t *assumed;                 /* "ns/name" -> the pod as bound here */
	json_t *reported;                /* object problems already logged -> cycle seen */
	double started;
	double retry_s;                  /* the next retry delay (doubles) */
	uint64_t cycles;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- signals: one thread waits for them, the loop polls a flag ---- */

static atomic_int stop_signal;

struct sigctx {
	sigset_t set;
	struct carve_kube_queue *q;
	atomic_int done;
};

static void *signal_thread(void *arg)
{
	struct sigctx *c = arg;
	int sig;

	for (;;) {
		if (sigwait(&c->set, &sig))
			continue;
		if (atomic_load(&c->done))
			return NULL;
		atomic_store(&stop_signal, sig);
		carve_kube_queue_wake(c->q);
	}
}

/* ---- identity ---- */

static char *make_identity(void)
{
	char host[256] = "carve", buf[320];
	unsigned char rnd[4] = {0};
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd))
			memset(rnd, 0, sizeof(rnd));
		close(fd);
	}
	if (gethostname(host, sizeof(host) - 1))
		strcpy(host, "carve");
	host[sizeof(host) - 1] = '\0';
	snprintf(buf, sizeof(buf), "%s_%02x%02x%02x%02x%04x", host, rnd[0], rnd[1], rnd[2], rnd[3],
		 (unsigned)getpid() & 0xffff);
	return carve_strdup(buf);
}

/* ---- events into stores ---- */

/* Gives obj its apiVersion and kind when the list left them out (items of
 * a list carry them only for custom resources). */
static void typed(json_t *obj, const struct kind *kd, const char *apiv)
{
	if (!json_is_object(obj))
		return;
	if (!json_is_string(json_object_get(obj, "kind")))
		json_object_set_new(obj, "kind", json_string(kd->kind));
	if (!json_is_string(json_object_get(obj, "apiVersion")))
		json_object_set_new(obj, "apiVersion", json_string(apiv));
}

static bool pod_bound(const json_t *pod)
{
	const json_t *n = json_object_get(json_object_get(pod, "spec"), "nodeName");

	return json_is_string(n) && *json_string_value(n);
}

static void pod_key(const json_t *pod, char *key, size_t size)
{
	const char *ns = carve_kube_ns(pod), *name = carve_kube_name(pod);

	snprintf(key, size, "%s/%s", ns ? ns : "", name ? name : "");
}

/* Whether the server's version of a pod ends this process's assumption. */
static bool ends_assumption(const json_t *assumed, const json_t *pod)
{
	const char *u1 = carve_kube_uid(assumed), *u2 = carve_kube_uid(pod);

	return pod_bound(pod) || !u1 || !u2 || strcmp(u1, u2);
}

/* After a relist of pods: assumptions the new content does not end are
 * put back; the others dropped. */
static void reassume(struct sched *S)
{
	struct carve_kube_store *st = S->store[K_POD];
	const char *key;
	json_t *v, *cur;
	void *tmp;

	json_object_foreach_safe(S->assumed, tmp, key, v) {
		cur = carve_kube_store_get(st, carve_kube_ns(v), carve_kube_name(v));
		if (!cur || ends_assumption(v, cur))
			json_object_del(S->assumed, key);
		else
			carve_kube_store_put(st, v);
	}
}

/* Whether o's key k equals n's, the keys named in drop left out of both. */
static bool equal_but(const json_t *o, const json_t *n, const char *k, const char *const *drop)
{
	json_t *a = json_copy(json_object_get(o, k)), *b = json_copy(json_object_get(n, k));
	bool eq;

	for (; drop && *drop; drop++) {
		json_object_del(a, *drop);
		json_object_del(b, *drop);
	}
	eq = json_equal(a, b) || (!a && !b);
	json_decref(a);
	json_decref(b);
	return eq;
}

/* Whether a new version n of stored pod o changes nothing the plan reads:
 * only its resourceVersion, managedFields or status conditions moved (the
 * PodScheduled writes coming back through the watch). */
static bool same_for_plan(const json_t *o, const json_t *n)
{
	static const char *const meta[] = {"resourceVersion", "managedFields", NULL};
	static const char *const status[] = {"conditions", NULL};
	const char *k;
	json_t *v;

	if (!o || !n)
		return false;
	json_object_foreach((json_t *)n, k, v)
		if (strcmp(k, "metadata") && strcmp(k, "status") &&
		    !json_equal(v, json_object_get(o, k)))
			return false;
	json_object_foreach((json_t *)o, k, v)
		if (!json_object_get(n, k))
			return false;
	return equal_but(o, n, "metadata", meta) && equal_but(o, n, "status", status);
}

/* Applies one event; returns true when a store changed. */
static bool apply_event(struct sched *S, struct carve_kube_event *ev)
{
	struct carve_error err = {0};
	int id = ev->source, rc;
	char key[512];
	json_t *as = NULL, *it;
	bool same = false;
	size_t i;

	if (id < 0 || id >= K__COUNT || !S->store[id])
		return false;
	if (ev->type == CARVE_KEV_REPLACE) {
		json_array_foreach(ev->obj, i, it) {
			typed(it, &kinds[id], S->apiv[id]);
			kube_trim(it, id == K_POD);
		}
	} else {
		typed(ev->obj, &kinds[id], S->apiv[id]);
		kube_trim(ev->obj, id == K_POD);
	}
	if (id == K_POD && ev->type != CARVE_KEV_REPLACE) {
		pod_key(ev->obj, key, sizeof(key));
		as = json_object_get(S->assumed, key);
		if (as && ev->type != CARVE_KEV_DELETED && !ends_assumption(as, ev->obj))
			return false; /* an older, unbound version: the assumption stands */
		if (as)
			json_object_del(S->assumed, key);
	}
	if (id == K_POD && ev->type == CARVE_KEV_MODIFIED)
		same = same_for_plan(carve_kube_store_get(S->store[id], carve_kube_ns(ev->obj),
							  carve_kube_name(ev->obj)), ev->obj);
	rc = carve_kube_store_apply(S->store[id], ev, &err);
	if (rc < 0) {
		sched_logf("%s event refused: %s", kinds[id].kind, err.text);
		return false;
	}
	if (same)
		return false; /* stored, but nothing the plan reads changed */
	if (id == K_POD && ev->type == CARVE_KEV_REPLACE && json_object_size(S->assumed))
		reassume(S);
	return rc > 0;
}

/* ---- the manifest set from the stores ---- */

struct fill {
	struct carve_manifests *m;
	const char *kind;
	bool configmaps;
	int rc;
};

static int fill_one(void *ctx, json_t *obj)
{
	struct fill *f = ctx;
	const char *ns = carve_kube_ns(obj), *name = carve_kube_name(obj);
	char src[600];

	if (f->configmaps && !kube_nvidia_configmap(obj))
		return 0;

	if (ns && *ns)
		snprintf(src, sizeof(src), "%s %s/%s", f->kind, ns, name ? name : "");
	else
		snprintf(src, sizeof(src), "%s %s", f->kind, name ? name : "");
	f->rc = carve_manifests_add_json(f->m, src, obj);
	return f->rc;
}

/* The object a diagnostic's source names ("Kind ns/name" or "Kind name"),
 * or NULL. */
static json_t *object_of_source(struct sched *S, const char *src)
{
	char kind[64], rest[512], *slash;
	json_t *obj;
	int id;

	if (!src || sscanf(src, "%63s %511s", kind, rest) != 2)
		return NULL;
	for (id = 0; id < K__COUNT; id++) {
		if (!S->store[id] || strcmp(kinds[id].kind, kind))
			continue;
		slash = strchr(rest, '/');
		if (slash) {
			*slash = '\0';
			obj = carve_kube_store_get(S->store[id], rest, slash + 1);
			*slash = '/';
		} else {
			obj = carve_kube_store_get(S->store[id], NULL, rest);
		}
		if (obj)
			return obj;
	}
	return NULL;
}

/* Logs each problem once per object version and message, and posts a
 * Warning event on the object for each error (as Kubernetes does, events
 * about cluster-scoped objects go to namespace "default"). */
static void report_diags(struct sched *S, const struct carve_diags *d, int64_t now_ns)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct carve_diag *g = &d->v[i];
		json_t *obj;
		const char *rv;
		char key[1536];

		if (g->sev == CARVE_SEV_NOTE)
			continue;
		obj = object_of_source(S, g->pos.file);
		rv = obj ? carve_kube_rv(obj) : NULL;
		snprintf(key, sizeof(key), "%s\n%s\n%s", g->pos.file ? g->pos.file : "",
			 rv ? rv : "", g->msg);
		if (json_object_get(S->reported, key)) {
			json_object_set_new(S->reported, key, json_integer((json_int_t)S->cycles));
			continue;
		}
		json_object_set_new(S->reported, key, json_integer((json_int_t)S->cycles));
		sched_logf("%s: %s: %s", g->pos.file ? g->pos.file : "(cluster)",
			   g->sev == CARVE_SEV_ERROR ? "error" : "warning", g->msg);
		if (obj && g->sev == CARVE_SEV_ERROR) /* cluster-scoped: in "default" */
			act_event(S->act, obj, "Warning", "InvalidObject", g->msg, now_ns);
	}
}

/* Past REPORTED_MAX problems remembered, forgets those not seen in this
 * cycle (fixed or gone); the ones still there stay remembered, so they are
 * neither logged nor posted again. */
static void forget_reported(struct sched *S)
{
	const char *key;
	json_t *v;
	void *tmp;

	if (json_object_size(S->reported) <= REPORTED_MAX)
		return;
	json_object_foreach_safe(S->reported, tmp, key, v)
		if (json_integer_value(v) != (json_int_t)S->cycles)
			json_object_del(S->reported, key);
}

/* carve_gpu_allocated from the bound carve pods (their devices annotation). */
struct gpuctx {
	struct sched *S;
};

static double device_share(const struct carve_devref *d, const json_t *node)
{
	const json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
	const json_t *rep = json_object_get(labels, "nvidia.com/gpu.replicas");
	const json_t *prod = json_object_get(labels, "nvidia.com/gpu.product");
	int slices = 7, g = 0, n;

	if (d->milli > 0)
		return d->milli / 1000.0;
	if (d->mig_profile[0]) {
		/* compute slices of the profile ("3g.40gb") over the GPU's: 4 on
		 * an A30, 7 elsewhere (NVIDIA MIG user guide) */
		if (json_is_string(prod) && strstr(json_string_value(prod), "A30"))
			slices = 4;
		if (sscanf(d->mig_profile, "%dg", &g) != 1 || g <= 0)
			g = 1;
		return (double)g / slices;
	}
	if (d->replica >= 0) {
		n = json_is_string(rep) ? atoi(json_string_value(rep)) : 1;
		return 1.0 / (n > 0 ? n : 1);
	}
	return 1.0;
}

static int gpu_one(void *ctx, json_t *pod)
{
	struct gpuctx *c = ctx;
	struct carve_devref d[CARVE_DEVREF_MAX];
	const json_t *meta = json_object_get(pod, "metadata");
	const json_t *dev = json_object_get(json_object_get(meta, "annotations"),
					    CARVE_DEVICES_ANNOTATION);
	const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
	const char *lq = json_string_value(json_object_get(json_object_get(meta, "labels"),
							   "kueue.x-k8s.io/queue-name"));
	const char *cq = "";
	json_t *nodeobj, *lqobj;
	int n, i;

	if (!node || !json_is_string(dev))
		return 0;
	n = carve_devices_parse(json_string_value(dev), d, CARVE_DEVREF_MAX, NULL);
	if (n <= 0)
		return 0;
	if (lq && c->S->store[K_LQ]) {
		lqobj = carve_kube_store_get(c->S->store[K_LQ], carve_kube_ns(pod), lq);
		cq = json_string_value(json_object_get(json_object_get(lqobj, "spec"), "clusterQueue"));
		if (!cq)
			cq = "";
	}
	nodeobj = carve_kube_store_get(c->S->store[K_NODE], NULL, node);
	for (i = 0; i < n; i++)
		kube_metrics_gpu_add(c->S->reg, node, d[i].gpu, cq, device_share(&d[i], nodeobj));
	return 0;
}

static void gpu_metrics(struct sched *S)
{
	struct gpuctx c = {S};

	kube_metrics_gpus_begin(S->reg);
	carve_kube_store_each(S->store[K_POD], gpu_one, &c);
	kube_metrics_gpus_commit(S->reg);
}

/* One cycle: build, decide, act.  Returns the plan's pending count (for
 * the resync), -1 when requests failed (retry soon), or CARVE_ENOMEM. */
static int cycle(struct sched *S, int *retry)
{
	struct carve_plan_opts po = {0};
	struct carve_manifests *m = carve_manifests_create();
	struct carve_plan *plan = NULL;
	struct carve_error err = {0};
	struct act_result ar;
	struct carve_diags d;
	struct fill f = {0};
	double t0 = mono_s(), t1;
	int64_t now = real_ns();
	int id, rc, pending;

	*retry = 0;
	if (!m)
		return CARVE_ENOMEM;
	/* binds that may have succeeded (timeouts, 5xx) settled first */
	act_settle(S->act, &(struct act_stores){.pods = S->store[K_POD]}, S->assumed);
	m->names_warn = true;
	carve_diags_init(&d);
	f.m = m;
	for (id = 0; id < K__COUNT; id++) {
		if (!S->store[id])
			continue;
		f.kind = kinds[id].kind;
		f.configmaps = id == K_CONFIGMAP;
		if (carve_kube_store_each(S->store[id], fill_one, &f) == CARVE_ENOMEM) {
			carve_manifests_destroy(m);
			carve_diags_cleanup(&d);
			return CARVE_ENOMEM;
		}
	}
	po.scheduler_name = S->o->scheduler_name;
	po.queues = S->o->queues;
	po.policy = S->o->policy;
	po.seed = S->o->seed;
	po.mig_dynamic = S->o->mig_dynamic;
	po.now = now / 1000000000;
	rc = carve_plan_build(m, &po, &d, &plan, &err);
	report_diags(S, &m->diags, now);
	report_diags(S, &d, now);
	forget_reported(S);
	if (rc) {
		sched_logf("cycle %llu: the plan failed: %s", (unsigned long long)S->cycles,
			   err.text[0] ? err.text : carve_strerror(rc));
		carve_manifests_destroy(m);
		carve_diags_cleanup(&d);
		return rc;
	}
	t1 = mono_s();
	rc = act_run(S->act, plan, &(struct act_stores){
		.pods = S->store[K_POD], .cqs = S->store[K_CQ], .lqs = S->store[K_LQ],
		.vcpgs = S->store[K_VCPG], .kaipgs = S->store[K_KAIPG], .nodes = S->store[K_NODE]},
		S->assumed, now, &ar);
	S->cycles++;
	if (S->o->verbose || ar.bound || ar.bind_conflicts || ar.bind_errors || ar.preempted ||
	    ar.released || ar.errors || ar.layouts)
		sched_logf("cycle %llu: %zu pods waiting, %zu workloads; bound %zu (%zu conflicts, "
			   "%zu errors), pending %zu, preempted %zu, released %zu, status updates "
			   "%zu, MIG layouts %zu, errors %zu; plan %.1f ms, act %.1f ms",
			   (unsigned long long)S->cycles, plan->pods_seen, plan->workloads, ar.bound,
			   ar.bind_conflicts, ar.bind_errors, plan->npending, ar.preempted, ar.released,
			   ar.status_updates, ar.layouts, ar.errors, (t1 - t0) * 1e3,
			   (mono_s() - t1) * 1e3);
	if (S->reg) {
		kube_metrics_plan(S->reg, plan, mono_s() - t0);
		gpu_metrics(S);
	}
	/* a fast retry only for failed binds and 429/5xx/no answer: a 403, 404
	 * or 422 on a status write waits for the next change or resync */
	*retry = ar.bind_errors || ar.bind_conflicts || ar.transient;
	if (ar.lost)
		*retry = -1;
	pending = (int)(plan->npending > 1000000 ? 1000000 : plan->npending);
	carve_plan_free(plan);
	carve_manifests_destroy(m);
	carve_diags_cleanup(&d);
	return rc ? rc : pending;
}

/* ---- start and stop ---- */

/* Whether the API server serves plural in group/version gv now (its
 * discovery document lists it): an optional kind served at start is
 * waited for before the first cycle (a Volcano PodGroup not yet read
 * would leave its pods looking like single pods); one missing is not,
 * and its reflector picks it up if its CRD comes later. */
static bool served(struct sched *S, const char *gv, const char *plural)
{
	char path[200];
	json_t *doc = NULL, *r;
	size_t i;
	bool found = false;
	int st;

	snprintf(path, sizeof(path), "/apis/%s", gv);
	st = carve_kube_request(S->k, "GET", path, NULL, NULL, &doc, NULL);
	if (st == 200)
		json_array_foreach(json_object_get(doc, "resources"), i, r)
			if (json_is_string(json_object_get(r, "name")) &&
			    !strcmp(json_string_value(json_object_get(r, "name")), plural))
				found = true;
	json_decref(doc);
	return found;
}

static int start_watches(struct sched *S)
{
	const char *qgv = S->o->queues == CARVE_QUEUES_KUEUE ? "kueue.x-k8s.io/v1beta2"
							     : "carve.dev/v1alpha1";
	struct carve_error err = {0};
	int id;

	for (id = 0; id < K__COUNT; id++) {
		const struct kind *kd = &kinds[id];
		struct carve_kube_watch_spec ws = {0};
		const char *gv;

		if (kd->queue && S->o->queues == CARVE_QUEUES_NONE)
			continue;
		gv = kd->queue ? qgv : kd->api_version;
		S->apiv[id] = gv;
		if (!strcmp(gv, "v1"))
			snprintf(S->path[id], sizeof(S->path[id]), "/api/v1/%s", kd->plural);
		else
			snprintf(S->path[id], sizeof(S->path[id]), "/apis/%s/%s", gv, kd->plural);
		S->store[id] = carve_kube_store_create();
		if (!S->store[id])
			return CARVE_ENOMEM;
		ws.kind = kd->kind;
		ws.path = S->path[id];
		ws.field_selector = id == K_POD ? POD_FIELD_SELECTOR : NULL;
		ws.optional = kd->optional;
		S->served[id] = !kd->optional || served(S, gv, kd->plural);
		if (kd->queue && !kd->optional && !served(S, gv, kd->plural))
			sched_logf("%s/%s is not served (yet): nothing is scheduled until it is; "
				   "install the CRDs (deploy/) or run with --queues none", gv,
				   kd->plural);
		S->refl[id] = carve_kube_watch_start(S->k, &ws, id, S->q, &err);
		if (!S->refl[id]) {
			sched_logf("cannot watch %s: %s", S->path[id], err.text);
			return CARVE_ENOMEM;
		}
	}
	return 0;
}

/* carve_watch_restarts_total from one reflector's counters since the last
 * look: a relist is "expired" (410), an error "error", and a watch started
 * without a list before it (a stream that ended and was resumed) "closed". */
static void watch_restarts(struct sched *S, int id, const struct carve_kube_watch_stats *ws)
{
	const struct carve_kube_watch_stats *o = &S->last_stats[id];
	uint64_t i, resumed = 0;

	if (ws->watches - o->watches > ws->lists - o->lists)
		resumed = (ws->watches - o->watches) - (ws->lists - o->lists);
	for (i = o->relists; i < ws->relists; i++)
		kube_metrics_watch_restart(S->reg, kinds[id].kind, "expired");
	for (i = o->errors; i < ws->errors; i++)
		kube_metrics_watch_restart(S->reg, kinds[id].kind, "error");
	for (i = 0; i < resumed; i++)
		kube_metrics_watch_restart(S->reg, kinds[id].kind, "closed");
}

/* Every required reflector has listed once; optional ones served at start
 * too, unless OPTIONAL_WAIT_S passed (a CRD deleted meanwhile never lists). */
static bool all_synced(struct sched *S)
{
	bool waited = mono_s() - S->started >= OPTIONAL_WAIT_S;
	int id;

	for (id = 0; id < K__COUNT; id++) {
		struct carve_kube_watch_stats ws;

		if (!S->refl[id])
			continue;
		carve_kube_watch_stats(S->refl[id], &ws);
		if (S->reg)
			watch_restarts(S, id, &ws);
		S->last_stats[id] = ws;
		if (!ws.synced && S->served[id] && (!kinds[id].optional || !waited))
			return false;
	}
	return true;
}

static void teardown(struct sched *S)
{
	int id;

	act_destroy(S->act); /* stops the writer thread first */
	S->act = NULL;
	if (S->el)
		carve_kube_elect_stop(S->el); /* a leader releases the Lease */
	for (id = 0; id < K__COUNT; id++)
		if (S->refl[id])
			carve_kube_watch_stop(S->refl[id]);
	if (S->srv)
		kube_serve_stop(S->srv);
	for (id = 0; id < K__COUNT; id++)
		carve_kube_store_destroy(S->store[id]);
	act_destroy(S->act);
	kube_registry_destroy(S->reg);
	carve_kube_queue_destroy(S->q);
	carve_kube_destroy(S->k);
	carve_kube_destroy(S->sk);
	carve_kube_config_free(&S->cfg);
	json_decref(S->assumed);
	json_decref(S->reported);
	carve_free(S->identity);
}

static void beat(void *srv)
{
	kube_serve_heartbeat(srv);
}

static int setup(struct sched *S)
{
	const struct sched_opts *o = S->o;
	struct carve_error err = {0};
	int rc;

	rc = carve_kube_config_load(o->kubeconfig, o->context, &S->cfg, &err);
	if (rc) {
		sched_logf("no cluster configuration: %s", err.text[0] ? err.text : carve_strerror(rc));
		memset(&S->cfg, 0, sizeof(S->cfg));
		return rc;
	}
	/* the pending-pod writer gets STATUS_SHARE of the rate budget on its
	 * own client, so binds never wait behind status writes */
	S->cfg.qps = o->qps > 0 ? o->qps * STATUS_SHARE : o->qps;
	S->cfg.burst = o->burst * STATUS_SHARE >= 1 ? (int)(o->burst * STATUS_SHARE) : 1;
	S->sk = carve_kube_create(&S->cfg, &err);
	S->cfg.qps = o->qps > 0 ? o->qps - S->cfg.qps : o->qps;
	S->cfg.burst = o->burst - S->cfg.burst >= 1 ? o->burst - S->cfg.burst : 1;
	if (S->sk)
		S->k = carve_kube_create(&S->cfg, &err);
	if (!S->k) {
		sched_logf("%s: %s", S->cfg.source ? S->cfg.source : "kubeconfig", err.text);
		return CARVE_EINVAL;
	}
	S->identity = o->identity ? carve_strdup(o->identity) : make_identity();
	S->q = carve_kube_queue_create();
	S->reg = kube_metrics_create();
	S->assumed = json_object();
	S->reported = json_object();
	if (!S->identity || !S->q || !S->reg || !S->assumed || !S->reported)
		return CARVE_ENOMEM;
	if (o->metrics_addr && strcmp(o->metrics_addr, "0")) {
		struct kube_serve_opts so = {.addr = o->metrics_addr, .metrics = S->reg};

		S->srv = kube_serve_start(&so, &err);
		if (!S->srv) {
			sched_logf("--metrics-addr %s: %s", o->metrics_addr, err.text);
			return CARVE_EINVAL;
		}
		sched_logf("serving /metrics, /healthz, /readyz on port %d", kube_serve_port(S->srv));
	}
	rc = start_watches(S);
	if (rc)
		return rc;
	if (o->leader_elect) {
		struct carve_kube_lease_opts lo = {
			.ns = o->lease_ns ? o->lease_ns : S->cfg.ns,
			.name = o->lease_name ? o->lease_name : "carve-scheduler",
			.identity = S->identity,
		};

		S->el = carve_kube_elect_start(S->k, &lo, S->q, &err);
		if (!S->el) {
			sched_logf("leader election: %s", err.text);
			return CARVE_ENOMEM;
		}
		sched_logf("%s: candidate for Lease %s/%s", S->identity, lo.ns, lo.name);
	}
	S->act = act_create(&(struct act_opts){
		.k = S->k, .status_k = S->sk, .el = S->el, .identity = S->identity,
		.queues = o->queues, .reg = S->reg, .beat = S->srv ? beat : NULL,
		.beat_ctx = S->srv});
	if (!S->act)
		return CARVE_ENOMEM;
	return 0;
}

/* The loop; returns the exit code. */
static int loop(struct sched *S)
{
	double deadline = S->o->max_seconds > 0 ? S->started + S->o->max_seconds : INFINITY;
	double next_cycle = INFINITY;
	bool changed = true, was_leader = false;
	int i;

	for (;;) {
		struct carve_kube_event *ev = NULL;
		double now = mono_s(), wait = TICK_MS / 1000.0;
		bool leader, synced;
		int n, retry, rc;

		if (deadline - now < wait)
			wait = deadline - now;
		if (next_cycle - now < wait)
			wait = next_cycle - now;
		if (wait < 0)
			wait = 0;
		n = carve_kube_queue_take(S->q, (int)(wait * 1000), &ev);
		for (i = 0; i < n; i++) {
			if (apply_event(S, &ev[i]))
				changed = true;
			json_decref(ev[i].obj);
		}
		carve_free(ev);
		if (n == CARVE_ENOMEM)
			sched_logf("out of memory taking events");
		if (atomic_load(&stop_signal)) {
			sched_logf("signal %d: stopping", atomic_load(&stop_signal));
			return 0;
		}
		now = mono_s();
		if (now >= deadline) {
			sched_logf("--max-seconds reached: stopping");
			return 0;
		}
		leader = !S->el || carve_kube_is_leader(S->el);
		if (was_leader && !leader) {
			sched_logf("%s: leadership lost: exiting so a fresh process starts over",
				   S->identity);
			return 1;
		}
		if (leader && !was_leader) {
			if (S->el)
				sched_logf("%s: now leading", S->identity);
			changed = true;
			if (S->reg)
				kube_metrics_leader(S->reg, true);
		}
		was_leader = leader;
		synced = all_synced(S);
		if (S->srv) {
			kube_serve_heartbeat(S->srv);
			kube_serve_set_ready(S->srv, synced);
		}
		if (S->reg) {
			struct carve_kube_stats ks;

			carve_kube_stats(S->k, &ks);
			kube_metrics_api(S->reg, &ks);
		}
		if (!leader || !synced || (!changed && now < next_cycle))
			continue;
		changed = false;
		next_cycle = INFINITY;
		rc = cycle(S, &retry);
		if (retry < 0 || (S->act && act_lost_leadership(S->act))) {
			sched_logf("%s: leadership lost while acting: stopped; exiting so a fresh "
				   "process starts over", S->identity);
			return 1;
		}
		if (rc == CARVE_ENOMEM)
			sched_logf("cycle: out of memory; trying again");
		if (retry || rc < 0) {
			if (S->retry_s < RETRY_ERRORS_S)
				S->retry_s = RETRY_ERRORS_S;
			next_cycle = mono_s() + S->retry_s;
			S->retry_s = S->retry_s * 2 > RETRY_MAX_S ? RETRY_MAX_S : S->retry_s * 2;
		} else {
			S->retry_s = RETRY_ERRORS_S;
			if (rc > 0)
				next_cycle = mono_s() + RESYNC_PENDING_S;
		}
	}
}

int sched_run(const struct sched_opts *o)
{
	struct sched S = {.o = o};
	struct sigctx sc = {0};
	pthread_t sth;
	bool sig_started = false;
	int rc;

	atomic_store(&stop_signal, 0);
	sigemptyset(&sc.set);
	sigaddset(&sc.set, SIGTERM);
	sigaddset(&sc.set, SIGINT);
	signal(SIGPIPE, SIG_IGN);
	/* blocked here, before any thread starts, so every thread inherits it
	 * and only signal_thread takes them */
	pthread_sigmask(SIG_BLOCK, &sc.set, NULL);
	S.started = mono_s();
	rc = setup(&S);
	if (rc == 0) {
		sc.q = S.q;
		atomic_init(&sc.done, 0);
		sig_started = pthread_create(&sth, NULL, signal_thread, &sc) == 0;
		sched_logf("%s: scheduling pods with schedulerName %s (queues: %s)", S.identity,
			   o->scheduler_name,
			   o->queues == CARVE_QUEUES_KUEUE ? "kueue.x-k8s.io"
			   : o->queues == CARVE_QUEUES_NONE ? "none" : "carve.dev");
		rc = loop(&S);
	} else {
		rc = 1;
	}
	if (sig_started) {
		atomic_store(&sc.done, 1);
		pthread_kill(sth, SIGTERM);
		pthread_join(sth, NULL);
	}
	teardown(&S); /* the signals stay blocked: the process is ending */
	return rc;
}
