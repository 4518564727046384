/*
 * dp.c - the kubelet device plugins of the node agent (dp.h): one plugin
 * per resource carve serves on this node, each with its own gRPC server
 * on <dir>/carve-<name>.sock, registered with the kubelet and registered
 * again when the kubelet's socket is recreated; ListAndWatch streams;
 * the unary methods other than Allocate/GetPreferredAllocation
 * (dp_alloc.c).  docs/internals/device-plugin.md.
 *
 * Invariants: the plugin set follows the last snapshot (nd_dp_update);
 * each plugin's packed device list changes generation only when its bytes
 * change, so streams send a list only when it differs.  The registration
 * thread polls the kubelet's socket every DP_POLL_MS (inode and ctime:
 * a restarted kubelet makes a new one) and its own sockets (a kubelet
 * removes the plugin sockets when it starts).  Ownership: dp.h's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "deviceplugin/v1beta1/api.pb-c.h"
#include "dp_int.h"
#include "dpgrpc.h"

#define DP_POLL_MS 200
#define DP_REGISTER_TIMEOUT_MS 2000

enum { M_OPTIONS, M_LISTWATCH, M_PREFERRED, M_ALLOCATE, M_PRESTART, M_COUNT };

static const struct dpg_method methods[M_COUNT] = {
	[M_OPTIONS] = {"/v1beta1.DevicePlugin/GetDevicePluginOptions", false},
	[M_LISTWATCH] = {"/v1beta1.DevicePlugin/ListAndWatch", true},
	[M_PREFERRED] = {"/v1beta1.DevicePlugin/GetPreferredAllocation", false},
	[M_ALLOCATE] = {"/v1beta1.DevicePlugin/Allocate", false},
	[M_PRESTART] = {"/v1beta1.DevicePlugin/PreStartContainer", false},
};

void dp_logf(const char *fmt, ...)
{
	va_list ap;
	char line[1024];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "carve node: device plugin: %s\n", line);
}

/* ---- the view of a snapshot ---- */

static void view_free(struct dp_view *v)
{
	size_t i;

	for (i = 0; i < v->ngpus; i++)
		free(v->gpus[i].migs);
	free(v->gpus);
	v->gpus = NULL;
	v->ngpus = 0;
}

/* Copies what the plugin needs from snap.  Returns 0 or CARVE_ENOMEM. */
static int view_from(struct dp_view *v, const struct nd_snapshot *snap)
{
	size_t i, k;

	memset(v, 0, sizeof(*v));
	if (!snap || !snap->ngpus)
		return 0;
	v->gpus = calloc(snap->ngpus, sizeof(*v->gpus));
	if (!v->gpus)
		return CARVE_ENOMEM;
	v->ngpus = snap->ngpus;
	for (i = 0; i < snap->ngpus; i++) {
		const struct nd_gpu *g = &snap->gpus[i];
		struct dp_gpu *d = &v->gpus[i];

		d->index = g->index;
		snprintf(d->uuid, sizeof(d->uuid), "%s", g->uuid ? g->uuid : "");
		d->numa = g->numa_node;
		d->healthy = g->healthy;
		d->mig = g->mig_current == 1;
		if (!d->mig || !g->nmig)
			continue;
		d->migs = calloc(g->nmig, sizeof(*d->migs));
		if (!d->migs) {
			view_free(v);
			return CARVE_ENOMEM;
		}
		d->nmig = g->nmig;
		for (k = 0; k < g->nmig; k++) {
			snprintf(d->migs[k].uuid, sizeof(d->migs[k].uuid), "%s",
				 g->mig[k].uuid ? g->mig[k].uuid : "");
			snprintf(d->migs[k].profile, sizeof(d->migs[k].profile), "%s",
				 g->mig[k].profile ? g->mig[k].profile : "");
			d->migs[k].start = g->mig[k].start;
		}
	}
	return 0;
}

/* ---- device lists (ListAndWatch) ---- */

/* Appends one device to the response being built (arrays sized by the
 * caller). */
static void add_device(V1beta1__ListAndWatchResponse *r, V1beta1__Device *devs,
		       V1beta1__TopologyInfo *topo, V1beta1__NUMANode *numa,
		       V1beta1__NUMANode **numap, char (*ids)[112], const char *id,
		       bool healthy, int numa_node)
{
	size_t i = r->n_devices;

	v1beta1__device__init(&devs[i]);
	snprintf(ids[i], sizeof(ids[i]), "%s", id);
	devs[i].id = ids[i];
	devs[i].health = healthy ? "Healthy" : "Unhealthy";
	if (numa_node >= 0) {
		v1beta1__topology_info__init(&topo[i]);
		v1beta1__numanode__init(&numa[i]);
		numa[i].id = numa_node;
		numap[i] = &numa[i];
		topo[i].n_nodes = 1;
		topo[i].nodes = &numap[i];
		devs[i].topology = &topo[i];
	}
	r->devices[i] = &devs[i];
	r->n_devices++;
}

/* The number of devices plugin p lists for view v. */
static size_t count_devices(const struct nd_dp *dp, const struct dp_plugin *p)
{
	const struct dp_view *v = &dp->view;
	size_t i, k, n = 0;

	for (i = 0; i < v->ngpus; i++) {
		const struct dp_gpu *g = &v->gpus[i];

		if (p->kind == DP_GPU && !g->mig)
			n++;
		else if (p->kind == DP_SHARED && !g->mig)
			n += (size_t)dp->shares;
		else if (p->kind == DP_MIG)
			for (k = 0; k < g->nmig; k++)
				n += !strcmp(g->migs[k].profile, p->profile);
	}
	return n;
}

/* Packs p's device list from dp->view (under mu); bumps p->gen when it
 * changed.  Returns 0 or CARVE_ENOMEM (the old list stays). */
static int build_list(struct nd_dp *dp, struct dp_plugin *p)
{
	const struct dp_view *v = &dp->view;
	V1beta1__ListAndWatchResponse r = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
	size_t n = count_devices(dp, p), i, k, len;
	V1beta1__Device *devs = calloc(n + 1, sizeof(*devs));
	V1beta1__Device **devp = calloc(n + 1, sizeof(*devp));
	V1beta1__TopologyInfo *topo = calloc(n + 1, sizeof(*topo));
	V1beta1__NUMANode *numa = calloc(n + 1, sizeof(*numa));
	V1beta1__NUMANode **numap = calloc(n + 1, sizeof(*numap));
	char(*ids)[112] = calloc(n + 1, sizeof(*ids));
	uint8_t *buf = NULL;
	int rc = CARVE_ENOMEM;

	if (!devs || !devp || !topo || !numa || !numap || !ids)
		goto out;
	r.devices = devp;
	for (i = 0; i < v->ngpus; i++) {
		const struct dp_gpu *g = &v->gpus[i];
		char id[112];
		int s;

		if (p->kind == DP_GPU && !g->mig) {
			add_device(&r, devs, topo, numa, numap, ids, g->uuid, g->healthy, g->numa);
		} else if (p->kind == DP_SHARED && !g->mig) {
			for (s = 0; s < dp->shares; s++) {
				snprintf(id, sizeof(id), "%s::%d", g->uuid, s);
				add_device(&r, devs, topo, numa, numap, ids, id, g->healthy, g->numa);
			}
		} else if (p->kind == DP_MIG) {
			for (k = 0; k < g->nmig; k++)
				if (!strcmp(g->migs[k].profile, p->profile))
					add_device(&r, devs, topo, numa, numap, ids, g->migs[k].uuid,
						   g->healthy, g->numa);
		}
	}
	len = v1beta1__list_and_watch_response__get_packed_size(&r);
	buf = malloc(len ? len : 1);
	if (!buf)
		goto out;
	v1beta1__list_and_watch_response__pack(&r, buf);
	if (p->list && p->nlist == len && !memcmp(p->list, buf, len)) {
		free(buf);
	} else {
		free(p->list);
		p->list = buf;
		p->nlist = len;
		p->gen++;
	}
	rc = 0;
out:
	free(devs);
	free(devp);
	free(topo);
	free(numa);
	free(numap);
	free(ids);
	return rc;
}

/* ---- the plugin's gRPC methods ---- */

static int on_unary(void *arg, int m, const uint8_t *in, size_t n, uint8_t **out, size_t *outn,
		    char *msg, size_t msgsz)
{
	struct dp_plugin *p = arg;

	*out = NULL;
	*outn = 0;
	switch (m) {
	case M_OPTIONS: {
		V1beta1__Empty *e = v1beta1__empty__unpack(NULL, n, in);
		V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;

		if (!e) {
			dp_logf("%s: GetDevicePluginOptions: the request is not a v1beta1.Empty",
				p->resource);
			snprintf(msg, msgsz, "GetDevicePluginOptions: malformed request");
			return DPG_INVALID_ARGUMENT;
		}
		v1beta1__empty__free_unpacked(e, NULL);
		o.pre_start_required = false;
		o.get_preferred_allocation_available = true;
		*outn = v1beta1__device_plugin_options__get_packed_size(&o);
		*out = malloc(*outn ? *outn : 1);
		if (!*out) {
			snprintf(msg, msgsz, "out of memory");
			return DPG_INTERNAL;
		}
		v1beta1__device_plugin_options__pack(&o, *out);
		return 0;
	}
	case M_PREFERRED:
		return dp_preferred(p, in, n, out, outn, msg, msgsz);
	case M_ALLOCATE:
		return dp_allocate(p, in, n, out, outn, msg, msgsz);
	case M_PRESTART: {
		V1beta1__PreStartContainerRequest *r =
			v1beta1__pre_start_container_request__unpack(NULL, n, in);

		if (!r) {
			dp_logf("%s: PreStartContainer: the request is not a "
				"v1beta1.PreStartContainerRequest", p->resource);
			snprintf(msg, msgsz, "PreStartContainer: malformed request");
			return DPG_INVALID_ARGUMENT;
		}
		v1beta1__pre_start_container_request__free_unpacked(r, NULL);
		return 0;      /* nothing to prepare: the empty answer */
	}
	}
	snprintf(msg, msgsz, "method not served");
	return DPG_UNIMPLEMENTED;
}

static int on_stream(void *arg, int m, uint64_t *gen, uint8_t **out, size_t *outn)
{
	struct dp_plugin *p = arg;
	struct nd_dp *dp = p->dp;
	int rc = 0;

	pthread_mutex_lock(&dp->mu);
	if (p->list && p->gen != *gen) {
		*out = malloc(p->nlist ? p->nlist : 1);
		if (*out) {
			memcpy(*out, p->list, p->nlist);
			*outn = p->nlist;
			*gen = p->gen;
			rc = 1;
		}
	}
	pthread_mutex_unlock(&dp->mu);
	return rc;
}

/* ---- plugins ---- */

/* Serves p on its socket.  Returns 0 or a carve error (logged). */
static int plugin_serve(struct dp_plugin *p)
{
	struct dpg_handlers h = {on_unary, on_stream, p};
	struct carve_error err;
	struct stat st;
	int rc;

	rc = dpg_server_start(p->sock, methods, M_COUNT, &h, &p->srv, &err);
	if (rc) {
		dp_logf("%s: %s", p->resource, err.text);
		return rc;
	}
	p->sock_ino = stat(p->sock, &st) ? 0 : st.st_ino;
	p->registered = false;
	return 0;
}

static void plugin_free(struct dp_plugin *p)
{
	if (!p)
		return;
	dpg_server_stop(p->srv);
	free(p->list);
	free(p);
}

/* A new plugin (not serving yet) for kind/profile, or NULL. */
static struct dp_plugin *plugin_new(struct nd_dp *dp, enum dp_kind kind, const char *profile)
{
	struct dp_plugin *p = calloc(1, sizeof(*p));
	char name[96];
	size_t i;

	if (!p)
		return NULL;
	p->dp = dp;
	p->kind = kind;
	if (kind == DP_GPU) {
		snprintf(name, sizeof(name), "gpu");
	} else if (kind == DP_SHARED) {
		snprintf(name, sizeof(name), "gpu.shared");
	} else {
		snprintf(p->profile, sizeof(p->profile), "%s", profile);
		snprintf(name, sizeof(name), "mig-%s", profile);
		for (i = 0; name[i]; i++)
			if (name[i] == '+')
				name[i] = '.';
	}
	snprintf(p->resource, sizeof(p->resource), "%s/%s", dp->domain, name);
	snprintf(p->endpoint, sizeof(p->endpoint), "carve-%s.sock", name);
	snprintf(p->sock, sizeof(p->sock), "%s/%s", dp->dir, p->endpoint);
	return p;
}

static struct dp_plugin *find_plugin(struct nd_dp *dp, enum dp_kind kind, const char *profile)
{
	size_t i;

	for (i = 0; i < dp->npl; i++)
		if (dp->pl[i]->kind == kind &&
		    (kind != DP_MIG || !strcmp(dp->pl[i]->profile, profile)))
			return dp->pl[i];
	return NULL;
}

/* Makes sure a plugin for kind/profile is in dp->pl (under mu) and marks
 * it seen.  Returns 0 or CARVE_ENOMEM. */
static int want_plugin(struct nd_dp *dp, enum dp_kind kind, const char *profile)
{
	struct dp_plugin *p = find_plugin(dp, kind, profile), **np;

	if (!p) {
		np = realloc(dp->pl, (dp->npl + 1) * sizeof(*np));
		if (!np)
			return CARVE_ENOMEM;
		dp->pl = np;
		p = plugin_new(dp, kind, profile);
		if (!p)
			return CARVE_ENOMEM;
		dp->pl[dp->npl++] = p;
	}
	p->seen = true;
	return 0;
}

/* Takes a new snapshot: plugins wanted, lists rebuilt (under life).
 * Plugins no longer wanted are moved to *gone (caller stops them outside
 * mu). */
static void apply_snapshot(struct nd_dp *dp, const struct nd_snapshot *snap,
			   struct dp_plugin ***gone, size_t *ngone)
{
	struct dp_view v;
	size_t i, k, j;
	bool whole = false;

	*gone = NULL;
	*ngone = 0;
	if (view_from(&v, snap)) {
		dp_logf("out of memory taking the new device list; the old one is kept");
		return;
	}
	pthread_mutex_lock(&dp->mu);
	view_free(&dp->view);
	dp->view = v;
	for (i = 0; i < dp->npl; i++)
		dp->pl[i]->seen = false;
	for (i = 0; i < v.ngpus; i++) {
		whole |= !v.gpus[i].mig;
		for (k = 0; k < v.gpus[i].nmig; k++)
			if (want_plugin(dp, DP_MIG, v.gpus[i].migs[k].profile))
				dp_logf("out of memory adding the plugin of MIG profile %s",
					v.gpus[i].migs[k].profile);
	}
	if (whole && want_plugin(dp, DP_GPU, ""))
		dp_logf("out of memory adding the whole-GPU plugin");
	if (whole && dp->shares > 0 && want_plugin(dp, DP_SHARED, ""))
		dp_logf("out of memory adding the shared-GPU plugin");
	*gone = calloc(dp->npl + 1, sizeof(**gone));
	for (i = j = 0; i < dp->npl; i++) {
		struct dp_plugin *p = dp->pl[i];

		if (!p->seen && *gone) {
			(*gone)[(*ngone)++] = p;
			continue;
		}
		if (build_list(dp, p))
			dp_logf("%s: out of memory building the device list", p->resource);
		dp->pl[j++] = p;
	}
	dp->npl = j;
	pthread_mutex_unlock(&dp->mu);
}

/* ---- registration ---- */

/* Register p with the kubelet through c.  Returns 0 or CARVE_EIO (logged). */
static int register_plugin(struct dp_plugin *p, struct dpg_client *c)
{
	V1beta1__RegisterRequest r = V1BETA1__REGISTER_REQUEST__INIT;
	V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
	V1beta1__Empty *e;
	struct carve_error err;
	uint8_t buf[512], *out = NULL;
	size_t n, outn = 0;

	r.version = "v1beta1";
	r.endpoint = p->endpoint;
	r.resource_name = p->resource;
	o.pre_start_required = false;
	o.get_preferred_allocation_available = true;
	r.options = &o;
	n = v1beta1__register_request__get_packed_size(&r);
	if (n > sizeof(buf))
		return CARVE_EIO;
	v1beta1__register_request__pack(&r, buf);
	if (dpg_client_call(c, "/v1beta1.Registration/Register", buf, n, DP_REGISTER_TIMEOUT_MS,
			    &out, &outn, &err)) {
		dp_logf("%s: registering with the kubelet: %s", p->resource, err.text);
		return CARVE_EIO;
	}
	e = v1beta1__empty__unpack(NULL, outn, out);
	free(out);
	if (!e) {
		dp_logf("%s: registering with the kubelet: the answer is not a v1beta1.Empty "
			"(%zu bytes); trying again", p->resource, outn);
		return CARVE_EIO;
	}
	v1beta1__empty__free_unpacked(e, NULL);
	return 0;
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* One round (under life): sockets served again where they vanished,
 * plugins registered with the kubelet instance now there. */
static void register_round(struct nd_dp *dp, unsigned round)
{
	struct dpg_client *c = NULL;
	struct carve_error err;
	struct stat ks, st;
	size_t i;
	bool kubelet = !stat(dp->kubelet_sock, &ks);

	for (i = 0; i < dp->npl; i++) {
		struct dp_plugin *p = dp->pl[i];

		if (p->srv && (stat(p->sock, &st) || st.st_ino != p->sock_ino)) {
			dp_logf("%s: socket %s was removed; serving it again", p->resource,
				p->sock);
			dpg_server_stop(p->srv);
			p->srv = NULL;
		}
		/* after failures, try every 2^fails rounds (at most 32) */
		if (p->fails && round % (1u << (p->fails < 5 ? p->fails : 5)))
			continue;
		if (!p->srv && plugin_serve(p)) {
			p->fails++;
			continue;
		}
		if (!kubelet) {
			p->registered = false;
			p->fails = 0;
			continue;
		}
		if (p->registered && p->reg_ino == ks.st_ino && same_time(&p->reg_ctime, &ks.st_ctim))
			continue;
		if (!c && dpg_client_open(dp->kubelet_sock, &c, &err)) {
			dp_logf("%s", err.text);
			return;
		}
		if (register_plugin(p, c)) {
			p->fails++;
			p->registered = false;
			continue;
		}
		p->fails = 0;
		p->registered = true;
		p->reg_ino = ks.st_ino;
		p->reg_ctime = ks.st_ctim;
		dp_logf("%s: registered with the kubelet (%s)", p->resource, p->endpoint);
	}
	dpg_client_close(c);
}

static void *register_main(void *arg)
{
	struct nd_dp *dp = arg;
	unsigned round = 0;

	pthread_mutex_lock(&dp->mu);
	while (!dp->stopping) {
		struct timespec t;

		pthread_mutex_unlock(&dp->mu);
		pthread_mutex_lock(&dp->life);
		register_round(dp, ++round);
		pthread_mutex_unlock(&dp->life);
		pthread_mutex_lock(&dp->mu);
		if (dp->stopping)
			break;
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += DP_POLL_MS * 1000000L;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&dp->cv, &dp->mu, &t);
	}
	pthread_mutex_unlock(&dp->mu);
	return NULL;
}

/* ---- dp.h ---- */

static void free_bindings(struct nd_binding *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free((char *)b[i].ns);
		free((char *)b[i].name);
		free((char *)b[i].uid);
	}
	free(b);
}

struct nd_dp *nd_dp_start(const struct nd_dp_opts *o, const struct nd_snapshot *snap,
			  struct carve_error *err)
{
	struct nd_dp *dp;
	struct stat st;

	errno = 0;
	if (!o->dir || stat(o->dir, &st) || !S_ISDIR(st.st_mode) || access(o->dir, W_OK)) {
		carve_errorf(err, CARVE_EIO, "device plugin directory %s: %s",
			     o->dir ? o->dir : "(none)",
			     !o->dir ? "not given" : errno ? strerror(errno) : "not a directory");
		return NULL;
	}
	if (strlen(o->dir) > 3000) {
		carve_errorf(err, CARVE_EINVAL, "device plugin directory %.64s...: path too long",
			     o->dir);
		return NULL;
	}
	dp = calloc(1, sizeof(*dp));
	if (!dp) {
		carve_errorf(err, CARVE_ENOMEM, "device plugin: out of memory");
		return NULL;
	}
	dp->dir = strdup(o->dir);
	dp->domain = strdup(o->domain ? o->domain : "carve.dev");
	if (!dp->dir || !dp->domain) {
		free(dp->dir);
		free(dp->domain);
		free(dp);
		carve_errorf(err, CARVE_ENOMEM, "device plugin: out of memory");
		return NULL;
	}
	dp->shares = o->shares > 0 ? o->shares : 0;
	dp->cdi = o->cdi;
	dp->on_refuse = o->on_refuse;
	dp->arg = o->arg;
	snprintf(dp->kubelet_sock, sizeof(dp->kubelet_sock), "%s/kubelet.sock", dp->dir);
	pthread_mutex_init(&dp->life, NULL);
	pthread_mutex_init(&dp->mu, NULL);
	pthread_cond_init(&dp->cv, NULL);
	nd_dp_update(dp, snap);
	if (pthread_create(&dp->reg, NULL, register_main, dp)) {
		dp->reg = 0;
		nd_dp_stop(dp);
		carve_errorf(err, CARVE_ENOMEM, "device plugin: cannot start a thread");
		return NULL;
	}
	return dp;
}

void nd_dp_update(struct nd_dp *dp, const struct nd_snapshot *snap)
{
	struct dp_plugin **gone;
	size_t ngone, i;

	pthread_mutex_lock(&dp->life);
	apply_snapshot(dp, snap, &gone, &ngone);
	for (i = 0; i < dp->npl; i++)
		if (!dp->pl[i]->srv)
			plugin_serve(dp->pl[i]);
	for (i = 0; i < ngone; i++) {
		dp_logf("%s: no such devices any more; plugin stopped", gone[i]->resource);
		plugin_free(gone[i]);
	}
	free(gone);
	pthread_mutex_unlock(&dp->life);
	pthread_mutex_lock(&dp->mu);
	pthread_cond_signal(&dp->cv);
	pthread_mutex_unlock(&dp->mu);
}

void nd_dp_set_bindings(struct nd_dp *dp, const struct nd_binding *b, size_t n)
{
	struct nd_binding *nb = calloc(n + 1, sizeof(*nb));
	size_t i, k, j;

	if (!nb) {
		dp_logf("out of memory taking %zu bindings; the old ones are kept", n);
		return;
	}
	for (i = 0; i < n; i++) {
		nb[i] = b[i];
		nb[i].ns = strdup(b[i].ns ? b[i].ns : "");
		nb[i].name = strdup(b[i].name ? b[i].name : "");
		nb[i].uid = strdup(b[i].uid ? b[i].uid : "");
		if (!nb[i].ns || !nb[i].name || !nb[i].uid) {
			free_bindings(nb, i + 1);
			dp_logf("out of memory taking %zu bindings; the old ones are kept", n);
			return;
		}
	}
	pthread_mutex_lock(&dp->mu);
	free_bindings(dp->b, dp->nb);
	dp->b = nb;
	dp->nb = n;
	/* forget pods that are gone */
	for (i = j = 0; i < dp->nalloc; i++) {
		for (k = 0; k < n; k++)
			if (!strcmp(nb[k].uid, dp->alloc[i].uid))
				break;
		if (k < n)
			dp->alloc[j++] = dp->alloc[i];
	}
	dp->nalloc = j;
	pthread_mutex_unlock(&dp->mu);
}

void nd_dp_stop(struct nd_dp *dp)
{
	size_t i;

	if (!dp)
		return;
	pthread_mutex_lock(&dp->mu);
	dp->stopping = true;
	pthread_cond_signal(&dp->cv);
	pthread_mutex_unlock(&dp->mu);
	if (dp->reg)
		pthread_join(dp->reg, NULL);
	for (i = 0; i < dp->npl; i++)
		plugin_free(dp->pl[i]);
	free(dp->pl);
	view_free(&dp->view);
	free_bindings(dp->b, dp->nb);
	free(dp->alloc);
	pthread_cond_destroy(&dp->cv);
	pthread_mutex_destroy(&dp->mu);
	pthread_mutex_destroy(&dp->life);
	free(dp->dir);
	free(dp->domain);
	free(dp);
}
