/*
 * agent.c - the node agent's loop (`carve node`, docs/node.md): every
 * interval an NVML snapshot; the node's GFD labels (patched on the Node,
 * or written to NFD's features.d file); the pods bound to this node
 * (a reflector on pods with spec.nodeName=<node>) turned into the device
 * plugin's bindings, refusals becoming Events on the pod; the Node's
 * carve.dev/mig-layout applied GPU by GPU when nothing runs in what
 * changes, with carve.dev/mig-current and carve.dev/mig-status written
 * back; dcgm-exporter metrics served from the latest snapshot.
 *
 * Threads: this loop owns the API client, the store, the NVML handle's
 * MIG changes and the Events; the metrics server's threads read the
 * published view (snapshot + owners) under view_mu; the device plugin's
 * threads report refusals through refuse_mu's list.  Bad input (a bad
 * annotation, a failed apply, an API error) is reported and the loop goes
 * on; only a failure to start ends it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_int.h"
#include "carve/kube.h"
#include "carve/miglayout.h"
#include "kube_int.h"
#include "serve.h"

#define CONTROLLER "carve.dev/node-agent"
#define MAX_OWNERS 512
#define MAX_SEEN 1024

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* What the metrics server renders: a snapshot and the owners of its
 * devices, with copies of every string (so the store may change). */
struct view {
	struct nd_snapshot snap;
	size_t nowners;
	struct nd_owner owners[MAX_OWNERS];
	unsigned pids[MAX_OWNERS][8];  /* each owner's processes (owners[i].pids) */
	json_t *pods;  /* array: keeps the owners' strings alive */
};

struct refusal_item {
	char ns[254], name[254], reason[512];
};

struct agent {
	const struct nd_agent_opts *o;
	char hostname[256];
	struct nd_nvml *nvml;
	struct carve_kube *k;
	struct carve_kube_queue *q;
	struct carve_kube_reflector *pods_r;
	struct carve_kube_store *pods;
	char pod_selector[400];    /* the reflector's field selector (borrowed by it) */
	struct nd_dp *dp;
	struct kube_server *srv;
	struct nd_snapshot snap;
	bool have_snap;
	struct nd_kvs labels_set;  /* what the Node has from us */
	char mig_current[2048], mig_status[2048];
	char *seen[MAX_SEEN];      /* Events already posted (dedup) */
	size_t nseen;
	pthread_mutex_t view_mu;
	struct view *view;
	pthread_mutex_t refuse_mu;
	struct refusal_item refusals[64];
	size_t nrefusals;
};

static void logf_(const struct agent *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void logf_(const struct agent *a, const char *fmt, ...)
{
	va_list ap;

	(void)a;
	va_start(ap, fmt);
	fputs("carve node: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- Events ---- */

/* Whether key was seen before (and remembers it). */
static bool seen_before(struct agent *a, const char *key)
{
	size_t i;

	for (i = 0; i < a->nseen; i++)
		if (!strcmp(a->seen[i], key))
			return true;
	if (a->nseen == MAX_SEEN) {
		for (i = 0; i < a->nseen; i++)
			free(a->seen[i]);
		a->nseen = 0;
	}
	if ((a->seen[a->nseen] = strdup(key)))
		a->nseen++;
	return false;
}

/* Posts a Warning Event (events.k8s.io/v1) on a Pod (ns set) or the Node,
 * once per (object, reason, note). */
static void event(struct agent *a, const char *ns, const char *name, const char *uid,
		  const char *reason, const char *note)
{
	struct carve_error err = {0, ""};
	char key[1200], ename[300], t[40], path[400];
	json_t *reg, *ev;
	int64_t now = kube_real_ns();
	int rc;

	snprintf(key, sizeof(key), "%s/%s/%s/%s", ns ? ns : "", name, reason, note);
	if (seen_before(a, key))
		return;
	logf_(a, "%s %s%s%s: %s", reason, ns ? ns : "node ", ns ? "/" : "", name, note);
	if (!a->k)
		return;
	reg = ns ? json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", "v1", "kind", "Pod", "name",
			     name, "namespace", ns)
		 : json_pack("{s:s, s:s, s:s}", "apiVersion", "v1", "kind", "Node", "name", name);
	if (reg && uid)
		json_object_set_new(reg, "uid", json_string(uid));
	snprintf(ename, sizeof(ename), "%.200s.%llx", name, (unsigned long long)now);
	ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s}",
		       "apiVersion", "events.k8s.io/v1", "kind", "Event", "metadata", "name", ename,
		       "namespace", ns ? ns : "default", "eventTime",
		       carve_kube_time(now, t, sizeof(t)), "reportingController", CONTROLLER,
		       "reportingInstance", a->o->node_name, "action", "NodeAgent", "reason", reason,
		       "type", "Warning", "regarding", reg, "note", note);
	if (!ev)
		return;
	snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events",
		 ns ? ns : "default");
	rc = carve_kube_request(a->k, "POST", path, NULL, ev, NULL, &err);
	if (rc < 0 || rc >= 300)
		logf_(a, "event %s on %s: %s", reason, name, rc < 0 ? err.text : "refused by the API");
	json_decref(ev);
}

/* The device plugin's refusals (its threads) queued for the loop. */
static void on_refuse(void *arg, const char *ns, const char *name, const char *reason)
{
	struct agent *a = arg;
	struct refusal_item *r;

	pthread_mutex_lock(&a->refuse_mu);
	if (a->nrefusals < sizeof(a->refusals) / sizeof(a->refusals[0])) {
		r = &a->refusals[a->nrefusals++];
		snprintf(r->ns, sizeof(r->ns), "%s", ns ? ns : "");
		snprintf(r->name, sizeof(r->name), "%s", name ? name : "");
		snprintf(r->reason, sizeof(r->reason), "%s", reason ? reason : "");
	}
	pthread_mutex_unlock(&a->refuse_mu);
}

static void drain_refusals(struct agent *a)
{
	struct refusal_item r[64];
	size_t n, i;

	pthread_mutex_lock(&a->refuse_mu);
	n = a->nrefusals;
	memcpy(r, a->refusals, n * sizeof(r[0]));
	a->nrefusals = 0;
	pthread_mutex_unlock(&a->refuse_mu);
	for (i = 0; i < n; i++) {
		json_t *pod = r[i].name[0] ? carve_kube_store_get(a->pods, r[i].ns, r[i].name) : NULL;

		if (r[i].name[0])
			event(a, r[i].ns, r[i].name, pod ? carve_kube_uid(pod) : NULL,
			      "CarveAllocateRefused", r[i].reason);
		else
			event(a, NULL, a->o->node_name, NULL, "CarveAllocateRefused", r[i].reason);
	}
}

/* ---- metrics ---- */

static char *render(void *arg, size_t *len)
{
	struct agent *a = arg;
	struct nd_export_opts eo;
	char *text = NULL;

	pthread_mutex_lock(&a->view_mu);
	if (a->view) {
		eo.hostname = a->hostname;
		eo.owners = a->view->owners;
		eo.nowners = a->view->nowners;
		text = nd_export(&a->view->snap, &eo, len);
	}
	pthread_mutex_unlock(&a->view_mu);
	return text;
}

static void view_free(struct view *v)
{
	if (!v)
		return;
	nd_snapshot_free(&v->snap);
	json_decref(v->pods);
	free(v);
}

/* ---- pods ---- */

struct collect {
	struct agent *a;
	struct nd_binding *b;
	size_t nb, cap;
	struct view *v;
};

static int collect_pod(void *ctx, json_t *pod)
{
	struct collect *c = ctx;
	struct nd_refusal r;
	json_t *copy;
	int rc;

	if (c->nb == c->cap)
		return 0;
	rc = nd_pod_binding(pod, c->a->o->node_name, &c->a->snap, &c->b[c->nb], &r);
	if (rc == CARVE_EINVAL) {
		event(c->a, carve_kube_ns(pod), carve_kube_name(pod), carve_kube_uid(pod), r.reason,
		      r.note);
		return 0;
	}
	if (rc != 1)
		return 0;
	/* the view keeps its own copy, so the owners' strings outlive the store's */
	if (c->v && (copy = json_deep_copy(pod)) && !json_array_append_new(c->v->pods, copy)) {
		struct nd_binding cb;
		struct nd_refusal r2;

		if (nd_pod_binding(copy, c->a->o->node_name, &c->a->snap, &cb, &r2) == 1)
			c->v->nowners += nd_pod_owners(copy, &cb, &c->a->snap,
						       c->v->owners + c->v->nowners,
						       MAX_OWNERS - c->v->nowners);
	}
	c->nb++;
	return 0;
}

/* The pod uid of process pid from /proc/<pid>/cgroup, false unknown. */
static bool pid_pod(unsigned pid, char uid[37])
{
	char path[64], buf[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	if (!(f = fopen(path, "r")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return nd_cgroup_pod_uid(buf, uid);
}

/* Gives each owner of a fraction the GPU processes of its pod (per-tenant
 * memory on shared GPUs). */
static void owner_pids(struct view *v)
{
	size_t i, j, k;
	char uid[37];

	for (i = 0; i < v->snap.ngpus; i++) {
		const struct nd_gpu *g = &v->snap.gpus[i];

		for (j = 0; j < g->nproc; j++) {
			if (!pid_pod(g->proc[j].pid, uid))
				continue;
			for (k = 0; k < v->nowners; k++) {
				struct nd_owner *o = &v->owners[k];

				if (o->gpu == g->index && o->mem_mib > 0 && o->uid &&
				    !strcmp(o->uid, uid) && o->npids < 8) {
					v->pids[k][o->npids++] = g->proc[j].pid;
					o->pids = v->pids[k];
				}
			}
		}
	}
}

/* Bindings to the device plugin and a new view for the metrics. */
static void publish(struct agent *a, struct nd_binding *b, size_t *nb)
{
	struct view *v = calloc(1, sizeof(*v)), *old;
	struct collect c = {a, b, 0, 256, v};
	struct carve_error err = {0, ""};

	if (v)
		v->pods = json_array();
	if (a->pods)
		carve_kube_store_each(a->pods, collect_pod, &c);
	*nb = c.nb;
	if (a->dp)
		nd_dp_set_bindings(a->dp, b, c.nb);
	if (!v)
		return;
	/* the view's snapshot is its own: a new one from NVML */
	if (nd_nvml_snapshot(a->nvml, &v->snap, &err)) {
		logf_(a, "metrics snapshot: %s", err.text);
		view_free(v);
		return;
	}
	owner_pids(v);
	pthread_mutex_lock(&a->view_mu);
	old = a->view;
	a->view = v;
	pthread_mutex_unlock(&a->view_mu);
	view_free(old);
	if (a->srv)
		kube_serve_set_ready(a->srv, true);
}

/* ---- labels ---- */

static char *read_machine(const char *path)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return n ? strdup(buf) : NULL;
}

static bool same_kvs(const struct nd_kvs *x, const struct nd_kvs *y)
{
	size_t i;

	if (x->n != y->n)
		return false;
	for (i = 0; i < x->n; i++)
		if (strcmp(x->v[i].key, y->v[i].key) || strcmp(x->v[i].value, y->v[i].value))
			return false;
	return true;
}

/* Writes path atomically (a temporary file renamed over it). */
static int write_file(const char *path, const char *text, struct carve_error *err)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w")))
		return carve_errorf(err, CARVE_EIO, "cannot write %s", tmp);
	fputs(text, f);
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return carve_errorf(err, CARVE_EIO, "cannot write %s", path);
	}
	return 0;
}

static void update_labels(struct agent *a)
{
	struct nd_label_opts lo = {a->o->mig_strategy, NULL, 0, 0};
	struct carve_error err = {0, ""};
	struct nd_kvs l = {0};
	char *machine = read_machine(a->o->machine_file);
	char *text;
	int rc;

	lo.machine = machine;
	if (a->o->features_file)
		lo.timestamp = kube_real_ns() / 1000000000;
	rc = nd_labels(&a->snap, &lo, &l, &err);
	free(machine);
	if (rc) {
		event(a, NULL, a->o->node_name ? a->o->node_name : a->hostname, NULL,
		      "CarveLabelsFailed", err.text);
		nd_kvs_free(&l);
		return;
	}
	if (a->o->features_file) {
		if ((text = nd_labels_features(&l)) && write_file(a->o->features_file, text, &err))
			logf_(a, "%s", err.text);
		free(text);
	} else if (a->k && !same_kvs(&l, &a->labels_set)) {
		char path[512];
		json_t *body;

		text = nd_labels_patch(&l, &a->labels_set);
		body = text ? json_loads(text, 0, NULL) : NULL;
		snprintf(path, sizeof(path), "/api/v1/nodes/%s", a->o->node_name);
		rc = body ? carve_kube_request(a->k, "PATCH", path, "application/merge-patch+json",
					       body, NULL, &err) : CARVE_ENOMEM;
		json_decref(body);
		free(text);
		if (rc >= 200 && rc < 300) {
			nd_kvs_free(&a->labels_set);
			a->labels_set = l;
			return;
		}
		logf_(a, "labels on node %s: %s", a->o->node_name,
		      rc < 0 ? err.text : "the API refused the patch");
	}
	nd_kvs_free(&l);
}

/* ---- MIG ---- */

static void patch_annotations(struct agent *a, const char *current, const char *status)
{
	struct carve_error err = {0, ""};
	char path[512];
	json_t *body;
	int rc;

	if (!strcmp(current, a->mig_current) && !strcmp(status, a->mig_status))
		return;
	body = json_pack("{s:{s:{s:s, s:s}}}", "metadata", "annotations",
			 CARVE_MIG_CURRENT_ANNOTATION, current, CARVE_MIG_STATUS_ANNOTATION, status);
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", a->o->node_name);
	rc = body ? carve_kube_request(a->k, "PATCH", path, "application/merge-patch+json", body,
				       NULL, &err) : CARVE_ENOMEM;
	json_decref(body);
	if (rc >= 200 && rc < 300) {
		snprintf(a->mig_current, sizeof(a->mig_current), "%s", current);
		snprintf(a->mig_status, sizeof(a->mig_status), "%s", status);
	} else {
		logf_(a, "MIG annotations on node %s: %s", a->o->node_name,
		      rc < 0 ? err.text : "the API refused the patch");
	}
}

/* Appends "; "-separated text to status. */
static void status_add(char *status, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void status_add(char *status, size_t size, const char *fmt, ...)
{
	size_t n = strlen(status);
	va_list ap;

	if (n && n + 2 < size) {
		strcpy(status + n, "; ");
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(status + n, size - n, fmt, ap);
	va_end(ap);
}

/* Applies the Node's carve.dev/mig-layout; returns whether a GPU changed. */
static bool update_mig(struct agent *a, const struct nd_binding *b, size_t nb)
{
	struct carve_error err = {0, ""};
	char path[512], current[2048], status[2048] = "";
	const char *want;
	json_t *node = NULL;
	struct nd_mig_plan plan;
	bool changed = false;
	size_t i;
	int rc;

	snprintf(path, sizeof(path), "/api/v1/nodes/%s", a->o->node_name);
	rc = carve_kube_request(a->k, "GET", path, NULL, NULL, &node, &err);
	if (rc != 200) {
		logf_(a, "node %s: %s", a->o->node_name, rc < 0 ? err.text : "cannot be read");
		json_decref(node);
		return false;
	}
	want = json_string_value(json_object_get(
		json_object_get(json_object_get(node, "metadata"), "annotations"),
		CARVE_MIG_LAYOUT_ANNOTATION));
	if (want && nd_mig_plan(want, &a->snap, b, nb, &plan, &err)) {
		event(a, NULL, a->o->node_name, NULL, "CarveMigLayoutInvalid", err.text);
		status_add(status, sizeof(status), "invalid layout annotation: %s", err.text);
	} else if (want) {
		for (i = 0; i < plan.n; i++) {
			struct nd_mig_step *st = &plan.step[i];

			switch (st->action) {
			case ND_MIG_SAME:
				status_add(status, sizeof(status), "GPU %u: applied", st->want.gpu);
				break;
			case ND_MIG_INVALID:
				event(a, NULL, a->o->node_name, NULL, "CarveMigLayoutInvalid", st->why);
				status_add(status, sizeof(status), "invalid: %s", st->why);
				break;
			case ND_MIG_BUSY:
				event(a, NULL, a->o->node_name, NULL, "CarveMigBusy", st->why);
				status_add(status, sizeof(status), "waiting: %s", st->why);
				break;
			case ND_MIG_APPLY:
				rc = nd_mig_apply(a->nvml, &st->want, &err);
				if (rc) {
					char note[700];

					snprintf(note, sizeof(note), "GPU %u: %s", st->want.gpu, err.text);
					event(a, NULL, a->o->node_name, NULL,
					      rc == CARVE_EBUSY ? "CarveMigBusy" : "CarveMigApplyFailed", note);
					status_add(status, sizeof(status), "failed: %s", note);
				} else {
					logf_(a, "GPU %u: MIG layout applied", st->want.gpu);
					status_add(status, sizeof(status), "GPU %u: applied", st->want.gpu);
					changed = true;
				}
				break;
			}
		}
	}
	json_decref(node);
	if (changed) {
		struct nd_snapshot s;

		if (!nd_nvml_snapshot(a->nvml, &s, &err)) {
			nd_snapshot_free(&a->snap);
			a->snap = s;
		}
	}
	if (nd_miglayout_current(&a->snap, current, sizeof(current)) >= 0)
		patch_annotations(a, current, status);
	return changed;
}

/* ---- the loop ---- */

static int start(struct agent *a, struct carve_error *err)
{
	const struct nd_agent_opts *o = a->o;
	struct carve_kube_config cfg;
	int rc;

	if ((rc = nd_nvml_open(o->nvml_lib, &a->nvml, err)))
		return rc;
	if ((rc = nd_nvml_snapshot(a->nvml, &a->snap, err)))
		return rc;
	a->have_snap = true;
	if (!o->standalone) {
		struct carve_kube_watch_spec ws = {"Pod", "/api/v1/pods", a->pod_selector, NULL, false,
						   0};

		if ((rc = carve_kube_config_load(o->kubeconfig, o->context, &cfg, err)))
			return rc;
		cfg.qps = 5;
		cfg.burst = 10;
		a->k = carve_kube_create(&cfg, err);
		carve_kube_config_free(&cfg);
		if (!a->k)
			return CARVE_EINVAL;
		snprintf(a->pod_selector, sizeof(a->pod_selector), "spec.nodeName=%s", o->node_name);
		if (!(a->q = carve_kube_queue_create()) || !(a->pods = carve_kube_store_create()))
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
		if (!(a->pods_r = carve_kube_watch_start(a->k, &ws, 0, a->q, err)))
			return CARVE_EIO;
	}
	if (o->dp_dir && *o->dp_dir) {
		struct nd_dp_opts dpo = {o->dp_dir, o->domain, o->shares, o->cdi, on_refuse, a};

		if (!(a->dp = nd_dp_start(&dpo, &a->snap, err)))
			return CARVE_EIO;
	}
	if (o->metrics_listen && *o->metrics_listen) {
		struct kube_serve_opts so = {.addr = o->metrics_listen, .render = render,
					     .render_arg = a};

		if (!(a->srv = kube_serve_start(&so, err)))
			return CARVE_EIO;
	}
	return 0;
}

static void stop(struct agent *a)
{
	size_t i;

	if (a->srv)
		kube_serve_stop(a->srv);
	if (a->dp)
		nd_dp_stop(a->dp);
	if (a->pods_r)
		carve_kube_watch_stop(a->pods_r);
	carve_kube_queue_destroy(a->q);
	carve_kube_store_destroy(a->pods);
	carve_kube_destroy(a->k);
	view_free(a->view);
	if (a->have_snap)
		nd_snapshot_free(&a->snap);
	nd_nvml_close(a->nvml);
	nd_kvs_free(&a->labels_set);
	for (i = 0; i < a->nseen; i++)
		free(a->seen[i]);
}

/* Moves the reflector's events into the store; returns whether it changed. */
static bool take_pods(struct agent *a, int wait_ms)
{
	struct carve_kube_event *ev = NULL;
	struct carve_error err = {0, ""};
	bool changed = false;
	int n, i;

	if (!a->q) {
		usleep((useconds_t)wait_ms * 1000);
		return false;
	}
	n = carve_kube_queue_take(a->q, wait_ms, &ev);
	for (i = 0; i < n; i++) {
		if (carve_kube_store_apply(a->pods, &ev[i], &err) > 0)
			changed = true;
		json_decref(ev[i].obj);
	}
	carve_free(ev);
	return changed;
}

int nd_agent_run(const struct nd_agent_opts *o, struct carve_error *err)
{
	static struct nd_binding b[256];
	struct agent *a = calloc(1, sizeof(*a));
	struct sigaction sa;
	int64_t next = 0, end;
	size_t nb = 0;
	int rc;

	if (!a)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	a->o = o;
	gethostname(a->hostname, sizeof(a->hostname) - 1);
	if (o->node_name && *o->node_name)
		snprintf(a->hostname, sizeof(a->hostname), "%s", o->node_name);
	pthread_mutex_init(&a->view_mu, NULL);
	pthread_mutex_init(&a->refuse_mu, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	stop_flag = 0;
	rc = start(a, err);
	end = o->max_seconds ? kube_mono_ns() + (int64_t)o->max_seconds * 1000000000 : 0;
	while (!rc && !stop_flag && (!end || kube_mono_ns() < end)) {
		bool pods_changed = take_pods(a, 200);
		int64_t t = kube_mono_ns();

		if (a->srv)
			kube_serve_heartbeat(a->srv);
		nd_nvml_poll_events(a->nvml, 0, err);
		drain_refusals(a);
		if (t < next && !pods_changed)
			continue;
		if (t >= next) {
			struct nd_snapshot s;

			next = t + (int64_t)(o->interval_s > 0 ? o->interval_s : 10) * 1000000000;
			if (nd_nvml_snapshot(a->nvml, &s, err)) {
				logf_(a, "snapshot: %s", err->text);
				continue;
			}
			nd_snapshot_free(&a->snap);
			a->snap = s;
			if (a->dp)
				nd_dp_update(a->dp, &a->snap);
			update_labels(a);
		}
		publish(a, b, &nb);
		if (a->k && update_mig(a, b, nb)) {
			if (a->dp)
				nd_dp_update(a->dp, &a->snap);
			publish(a, b, &nb);
		}
	}
	stop(a);
	pthread_mutex_destroy(&a->view_mu);
	pthread_mutex_destroy(&a->refuse_mu);
	free(a);
	return rc;
}
