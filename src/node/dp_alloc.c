/*
 * dp_alloc.c - Allocate and GetPreferredAllocation of the device plugin
 * (dp_int.h): matching the kubelet's device IDs to the pod the scheduler
 * bound to this node with exactly those devices (its carve.dev/devices
 * annotation, nd_dp_set_bindings), and the environment and CDI device
 * names handed to the container.  docs/internals/device-plugin.md has the
 * rules.
 *
 * Invariants: a request is answered from one binding that holds every
 * requested device of the plugin's resource (whole GPUs and MIG devices
 * by UUID; shares of a GPU by the GPU, "<UUID>::<n>" IDs being
 * interchangeable tokens), with exactly the requested devices, or
 * refused; nothing is ever made up.  Among
 * several matching pods the one not given devices yet, then the oldest,
 * wins.  Everything here runs under dp->mu except the on_refuse call.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deviceplugin/v1beta1/api.pb-c.h"
#include "dp_int.h"
#include "dpgrpc.h"

#define KEY_MAX 96

/* One device of a binding, as the plugin's resource sees it. */
struct bdev {
	char key[KEY_MAX];     /* GPU or MIG UUID */
	int replica;           /* -1 */
	int milli;             /* 0: not a fraction */
	uint32_t mem_mib;
};

bool dp_shared_id(const char *id, char *gpu, size_t size, unsigned *n)
{
	const char *sep = strstr(id, "::");
	const char *q;
	unsigned long v = 0;

	if (!sep || sep == id || (size_t)(sep - id) >= size || !sep[2])
		return false;
	for (q = sep + 2; *q; q++) {
		if (!isdigit((unsigned char)*q) || v > 100000)
			return false;
		v = v * 10 + (unsigned long)(*q - '0');
	}
	memcpy(gpu, id, (size_t)(sep - id));
	gpu[sep - id] = '\0';
	*n = (unsigned)v;
	return true;
}

/* The reason a binding is left out, only when the caller wants it. */
#define WHY(why, wsz, ...) ((why) ? (void)snprintf(why, wsz, __VA_ARGS__) : (void)0)

static const struct dp_gpu *gpu_by_index(const struct dp_view *v, int index)
{
	size_t i;

	for (i = 0; i < v->ngpus; i++)
		if ((int)v->gpus[i].index == index)
			return &v->gpus[i];
	return NULL;
}

/*
 * The devices of binding b that belong to plugin p, into out (room for
 * CARVE_DEVREF_MAX).  Returns their number, or -1 with why set (unless
 * NULL) when the binding names a device this node does not have.
 */
static int binding_devices(const struct nd_dp *dp, const struct dp_plugin *p,
			   const struct nd_binding *b, struct bdev *out, char *why, size_t wsz)
{
	int i, n = 0;

	for (i = 0; i < b->ndev && i < CARVE_DEVREF_MAX; i++) {
		const struct carve_devref *d = &b->dev[i];
		const struct dp_gpu *g = gpu_by_index(&dp->view, d->gpu);
		const char *key;
		enum dp_kind kind;
		size_t k;

		if (!g) {
			WHY(why, wsz, "device %d: GPU %d is not on this node", i + 1, d->gpu);
			return -1;
		}
		if (d->mig_profile[0]) {
			const struct dp_mig *m = NULL;

			for (k = 0; k < g->nmig; k++)
				if ((int)g->migs[k].start == d->mig_start &&
				    !strcmp(g->migs[k].profile, d->mig_profile))
					m = &g->migs[k];
			if (!m) {
				WHY(why, wsz, "device %d: GPU %d has no MIG device %s at slot %d",
					 i + 1, d->gpu, d->mig_profile, d->mig_start);
				return -1;
			}
			if (d->uuid[0] && strcmp(d->uuid, m->uuid) && strcmp(d->uuid, g->uuid)) {
				WHY(why, wsz, "device %d: MIG device %s@%d of GPU %d is %s, not %s",
					 i + 1, d->mig_profile, d->mig_start, d->gpu, m->uuid, d->uuid);
				return -1;
			}
			if (p->kind != DP_MIG || strcmp(p->profile, m->profile))
				continue;
			key = m->uuid;
			kind = DP_MIG;
		} else {
			if (d->uuid[0] && strcmp(d->uuid, g->uuid)) {
				WHY(why, wsz, "device %d: GPU %d is %s, not %s", i + 1, d->gpu,
					 g->uuid, d->uuid);
				return -1;
			}
			key = g->uuid;
			kind = d->replica >= 0 || d->milli > 0 ? DP_SHARED : DP_GPU;
		}
		if (kind != p->kind)
			continue;
		snprintf(out[n].key, sizeof(out[n].key), "%s", key);
		out[n].replica = d->replica;
		out[n].milli = d->milli;
		out[n].mem_mib = d->mem_mib;
		n++;
	}
	return n;
}

/* Whether key is a device of plugin p on this node. */
static bool served(const struct nd_dp *dp, const struct dp_plugin *p, const char *key)
{
	size_t i, k;

	for (i = 0; i < dp->view.ngpus; i++) {
		const struct dp_gpu *g = &dp->view.gpus[i];

		if (p->kind != DP_MIG && !g->mig && !strcmp(g->uuid, key))
			return true;
		if (p->kind == DP_MIG)
			for (k = 0; k < g->nmig; k++)
				if (!strcmp(g->migs[k].uuid, key) &&
				    !strcmp(g->migs[k].profile, p->profile))
					return true;
	}
	return false;
}

/* The match key of a requested device ID into key.  Returns 0, or -1 with
 * why set for an ID this plugin does not serve. */
static int request_key(const struct nd_dp *dp, const struct dp_plugin *p, const char *id,
		       char *key, int *replica, char *why, size_t wsz)
{
	unsigned n = 0;

	*replica = -1;
	if (p->kind == DP_SHARED) {
		if (!dp_shared_id(id, key, KEY_MAX, &n) || (int)n >= dp->shares ||
		    !served(dp, p, key))
			goto bad;
		*replica = (int)n;
		return 0;
	}
	if (strlen(id) >= KEY_MAX || !served(dp, p, id))
		goto bad;
	snprintf(key, KEY_MAX, "%s", id);
	return 0;
bad:
	WHY(why, wsz, "device ID \"%.100s\" is not a %s device of this node", id, p->resource);
	return -1;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(a, b);
}

static bool is_allocated(const struct nd_dp *dp, const char *uid)
{
	size_t i;

	for (i = 0; i < dp->nalloc; i++)
		if (!strcmp(dp->alloc[i].uid, uid))
			return true;
	return false;
}

static void mark_allocated(struct nd_dp *dp, const char *uid)
{
	struct nd_dp_uid *n;

	if (is_allocated(dp, uid))
		return;
	if (dp->nalloc == dp->capalloc) {
		size_t cap = dp->capalloc ? dp->capalloc * 2 : 16;

		n = realloc(dp->alloc, cap * sizeof(*n));
		if (!n)
			return;  /* only the preference among equal pods is lost */
		dp->alloc = n;
		dp->capalloc = cap;
	}
	snprintf(dp->alloc[dp->nalloc++].uid, sizeof(dp->alloc[0].uid), "%s", uid);
}

/* Whether candidate b is a better choice than the current best c. */
static bool better(const struct nd_dp *dp, const struct nd_binding *b, const struct nd_binding *c)
{
	bool ab = is_allocated(dp, b->uid), ac = is_allocated(dp, c->uid);
	int o;

	if (ab != ac)
		return !ab;
	if (b->created_ns != c->created_ns)
		return b->created_ns < c->created_ns;
	o = strcmp(b->ns, c->ns);
	return o ? o < 0 : strcmp(b->name, c->name) < 0;
}

/*
 * The binding for a container asking for keys[0..n): one whose devices of
 * plugin p are exactly those (preferred), else one holding them among
 * more (a pod whose containers split its devices; whole GPUs and MIG
 * devices belong to one pod each, so this is not a guess); ties by
 * better().  Returns it with the devices asked for in dev / *ndev, or NULL
 * with reason set (and *near a pod holding some of them).
 */
static const struct nd_binding *match(const struct nd_dp *dp, const struct dp_plugin *p,
				      char (*keys)[KEY_MAX], size_t n, struct bdev *dev,
				      int *ndev, const struct nd_binding **near, char *reason,
				      size_t rsz)
{
	const struct nd_binding *best = NULL, *bad = NULL;
	struct bdev d[CARVE_DEVREF_MAX];
	char why[256], badwhy[256] = "";
	bool best_exact = false;
	size_t i, j;
	int nd, k;

	*near = NULL;
	for (i = 0; i < dp->nb; i++) {
		const struct nd_binding *b = &dp->b[i];
		bool used[CARVE_DEVREF_MAX] = {false}, exact;

		nd = binding_devices(dp, p, b, d, bad ? NULL : why, sizeof(why));
		if (nd < 0) {
			if (!bad) {
				bad = b;
				snprintf(badwhy, sizeof(badwhy), "%s", why);
			}
			continue;
		}
		/* one device of the binding for each requested key */
		for (j = 0; j < n; j++) {
			for (k = 0; k < nd && (used[k] || strcmp(d[k].key, keys[j])); k++)
				;
			if (k == nd)
				break;
			used[k] = true;
		}
		if (j < n) {
			for (k = 0; k < nd && !*near; k++)
				for (j = 0; j < n; j++)
					if (!strcmp(d[k].key, keys[j]))
						*near = b;
			continue;
		}
		exact = (size_t)nd == n;
		if (best && (best_exact && !exact))
			continue;
		if (best && best_exact == exact && !better(dp, b, best))
			continue;
		best = b;
		best_exact = exact;
		*ndev = 0;
		for (k = 0; k < nd; k++)     /* in the binding's order */
			if (used[k])
				dev[(*ndev)++] = d[k];
	}
	if (best)
		return best;
	if (*near)
		snprintf(reason, rsz, "no pod bound to this node holds all of these %zu %s "
			 "device(s); pod %s/%s holds some of them", n, p->resource,
			 (*near)->ns, (*near)->name);
	else if (bad)
		snprintf(reason, rsz, "no pod bound to this node holds these %zu %s device(s) "
			 "(pod %s/%s was not considered: %s)", n, p->resource, bad->ns, bad->name,
			 badwhy);
	else
		snprintf(reason, rsz, "no pod bound to this node holds these %zu %s device(s)", n,
			 p->resource);
	return NULL;
}

/* ---- the answer to one container ---- */

struct answer {
	struct nd_kvs env;
	size_t ncdi;
	char cdi[CARVE_DEVREF_MAX][KEY_MAX + 32];
};

/* Fills a with what the container of pod b gets for devices dev[0..n).
 * Returns 0 or CARVE_ENOMEM. */
static int build_answer(const struct nd_dp *dp, const struct nd_binding *b,
			const struct bdev *dev, int n, struct answer *a)
{
	char vis[CARVE_DEVREF_MAX][KEY_MAX], list[CARVE_DEVREF_MAX * (KEY_MAX + 1)] = "";
	int nvis = 0, i, k, milli = 0, replica = -1, rc = 0;

	for (i = 0; i < n; i++) {
		for (k = 0; k < nvis && strcmp(vis[k], dev[i].key); k++)
			;
		if (k == nvis) {
			memcpy(vis[nvis++], dev[i].key, KEY_MAX);
			if (list[0])
				strcat(list, ",");
			strcat(list, dev[i].key);
		}
		if (dev[i].milli > 0) {
			if (!milli || dev[i].milli < milli)
				milli = dev[i].milli;
			if (dev[i].mem_mib) {
				char key[64];

				snprintf(key, sizeof(key), "CUDA_DEVICE_MEMORY_LIMIT_%d", k);
				rc |= nd_kvs_addf(&a->env, key, "%um", (unsigned)dev[i].mem_mib);
			}
		}
		if (dev[i].replica >= 0 && replica < 0)
			replica = dev[i].replica;
	}
	rc |= nd_kvs_addf(&a->env, "NVIDIA_VISIBLE_DEVICES", "%s", list);
	if (milli) {
		rc |= nd_kvs_addf(&a->env, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "%d",
				  (milli + 9) / 10);
		rc |= nd_kvs_addf(&a->env, "CARVE_GPU_MILLI", "%d", milli);
	}
	if (replica >= 0)
		rc |= nd_kvs_addf(&a->env, "CARVE_GPU_REPLICA", "%d", replica);
	rc |= nd_kvs_addf(&a->env, "CARVE_POD", "%s/%s", b->ns, b->name);
	rc |= nd_kvs_addf(&a->env, "CARVE_POD_UID", "%s", b->uid);
	nd_kvs_sort(&a->env);
	if (dp->cdi)
		for (i = 0; i < nvis; i++)
			snprintf(a->cdi[a->ncdi++], sizeof(a->cdi[0]), "nvidia.com/gpu=%s", vis[i]);
	return rc ? CARVE_ENOMEM : 0;
}

/* Packs the answers into an AllocateResponse.  Returns 0 or CARVE_ENOMEM. */
static int pack_answers(const struct answer *a, size_t n, uint8_t **out, size_t *outn)
{
	V1beta1__AllocateResponse r = V1BETA1__ALLOCATE_RESPONSE__INIT;
	V1beta1__ContainerAllocateResponse *c = calloc(n + 1, sizeof(*c));
	V1beta1__ContainerAllocateResponse **cp = calloc(n + 1, sizeof(*cp));
	size_t nenv = 0, ncdi = 0, i, k, ie = 0, ic = 0;
	V1beta1__ContainerAllocateResponse__EnvsEntry *e, **ep;
	V1beta1__CDIDevice *d, **dpp;
	int rc = CARVE_ENOMEM;

	for (i = 0; i < n; i++) {
		nenv += a[i].env.n;
		ncdi += a[i].ncdi;
	}
	e = calloc(nenv + 1, sizeof(*e));
	ep = calloc(nenv + 1, sizeof(*ep));
	d = calloc(ncdi + 1, sizeof(*d));
	dpp = calloc(ncdi + 1, sizeof(*dpp));
	if (!c || !cp || !e || !ep || !d || !dpp)
		goto out;
	for (i = 0; i < n; i++) {
		v1beta1__container_allocate_response__init(&c[i]);
		c[i].envs = &ep[ie];
		for (k = 0; k < a[i].env.n; k++, ie++) {
			v1beta1__container_allocate_response__envs_entry__init(&e[ie]);
			e[ie].key = a[i].env.v[k].key;
			e[ie].value = a[i].env.v[k].value;
			ep[ie] = &e[ie];
		}
		c[i].n_envs = a[i].env.n;
		c[i].cdi_devices = &dpp[ic];
		for (k = 0; k < a[i].ncdi; k++, ic++) {
			v1beta1__cdidevice__init(&d[ic]);
			d[ic].name = (char *)a[i].cdi[k];
			dpp[ic] = &d[ic];
		}
		c[i].n_cdi_devices = a[i].ncdi;
		cp[i] = &c[i];
	}
	r.n_container_responses = n;
	r.container_responses = cp;
	*outn = v1beta1__allocate_response__get_packed_size(&r);
	*out = malloc(*outn ? *outn : 1);
	if (!*out)
		goto out;
	v1beta1__allocate_response__pack(&r, *out);
	rc = 0;
out:
	free(c);
	free(cp);
	free(e);
	free(ep);
	free(d);
	free(dpp);
	return rc;
}

/* Sorted match keys of ids[0..n) into keys.  Returns 0 or -1 with why. */
static int request_keys(const struct nd_dp *dp, const struct dp_plugin *p, char **ids, size_t n,
			char (*keys)[KEY_MAX], char *why, size_t wsz)
{
	size_t i;
	int replica;

	for (i = 0; i < n; i++)
		if (request_key(dp, p, ids[i], keys[i], &replica, why, wsz))
			return -1;
	qsort(keys, n, KEY_MAX, cmp_key);
	return 0;
}

int dp_allocate(struct dp_plugin *p, const uint8_t *in, size_t n, uint8_t **out, size_t *outn,
		char *msg, size_t msgsz)
{
	struct nd_dp *dp = p->dp;
	V1beta1__AllocateRequest *r = v1beta1__allocate_request__unpack(NULL, n, in);
	struct answer *a = NULL;
	char keys[CARVE_DEVREF_MAX][KEY_MAX], reason[768] = "", rns[256] = "", rname[256] = "";
	const struct nd_binding *near = NULL;
	size_t i;
	int status = 0;

	if (!r) {
		dp_logf("%s: Allocate: the request (%zu bytes) is not a v1beta1.AllocateRequest",
			p->resource, n);
		snprintf(msg, msgsz, "Allocate: malformed request (%zu bytes)", n);
		return DPG_INVALID_ARGUMENT;
	}
	a = calloc(r->n_container_requests + 1, sizeof(*a));
	if (!a) {
		v1beta1__allocate_request__free_unpacked(r, NULL);
		snprintf(msg, msgsz, "out of memory");
		return DPG_INTERNAL;
	}
	pthread_mutex_lock(&dp->mu);
	for (i = 0; i < r->n_container_requests && !status; i++) {
		V1beta1__ContainerAllocateRequest *c = r->container_requests[i];
		struct bdev dev[CARVE_DEVREF_MAX];
		const struct nd_binding *b;
		int ndev = 0;

		if (!c->n_devices_ids || c->n_devices_ids > CARVE_DEVREF_MAX) {
			snprintf(reason, sizeof(reason), "container %zu asks for %zu %s devices "
				 "(1..%d can be bound)", i + 1, c->n_devices_ids, p->resource,
				 CARVE_DEVREF_MAX);
			status = DPG_INVALID_ARGUMENT;
			break;
		}
		if (request_keys(dp, p, c->devices_ids, c->n_devices_ids, keys, reason,
				 sizeof(reason))) {
			status = DPG_INVALID_ARGUMENT;
			break;
		}
		b = match(dp, p, keys, c->n_devices_ids, dev, &ndev, &near, reason, sizeof(reason));
		if (!b) {
			if (near) {
				snprintf(rns, sizeof(rns), "%s", near->ns);
				snprintf(rname, sizeof(rname), "%s", near->name);
			}
			status = DPG_FAILED_PRECONDITION;
			break;
		}
		if (build_answer(dp, b, dev, ndev, &a[i])) {
			snprintf(reason, sizeof(reason), "out of memory");
			status = DPG_INTERNAL;
			break;
		}
		mark_allocated(dp, b->uid);
	}
	pthread_mutex_unlock(&dp->mu);
	if (!status && pack_answers(a, r->n_container_requests, out, outn)) {
		snprintf(reason, sizeof(reason), "out of memory");
		status = DPG_INTERNAL;
	}
	if (status) {
		snprintf(msg, msgsz, "carve refuses to allocate %s: %s", p->resource, reason);
		dp_logf("%s: Allocate refused: %s", p->resource, reason);
		if (dp->on_refuse)
			dp->on_refuse(dp->arg, rns[0] ? rns : NULL, rname[0] ? rname : NULL, msg);
	}
	for (i = 0; i < r->n_container_requests; i++)
		nd_kvs_free(&a[i].env);
	free(a);
	v1beta1__allocate_request__free_unpacked(r, NULL);
	return status;
}

/* ---- GetPreferredAllocation ---- */

/* The IDs of the binding's devices among avail[0..navail) into pick (each
 * used once; a share's own replica number first).  Returns true when all
 * were found. */
static bool pick_ids(const struct nd_dp *dp, const struct dp_plugin *p, const struct bdev *dev,
		     int ndev, char **avail, size_t navail, char **pick, bool *used)
{
	char key[KEY_MAX];
	unsigned rep;
	size_t k;
	int i, pass;

	for (i = 0; i < ndev; i++) {
		pick[i] = NULL;
		for (pass = 0; pass < 2 && !pick[i]; pass++) {
			for (k = 0; k < navail && !pick[i]; k++) {
				if (used[k])
					continue;
				if (p->kind == DP_SHARED) {
					if (!dp_shared_id(avail[k], key, sizeof(key), &rep) ||
					    strcmp(key, dev[i].key) ||
					    (pass == 0 && (int)rep != dev[i].replica))
						continue;
				} else if (strcmp(avail[k], dev[i].key)) {
					continue;
				}
				used[k] = true;
				pick[i] = avail[k];
			}
		}
		if (!pick[i])
			return false;
	}
	return true;
}

int dp_preferred(struct dp_plugin *p, const uint8_t *in, size_t n, uint8_t **out, size_t *outn,
		 char *msg, size_t msgsz)
{
	struct nd_dp *dp = p->dp;
	V1beta1__PreferredAllocationRequest *r =
		v1beta1__preferred_allocation_request__unpack(NULL, n, in);
	V1beta1__PreferredAllocationResponse resp = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
	V1beta1__ContainerPreferredAllocationResponse *c, **cp;
	char **ids;
	size_t i, k, nc;
	int status = 0;

	if (!r) {
		dp_logf("%s: GetPreferredAllocation: the request (%zu bytes) is not a "
			"v1beta1.PreferredAllocationRequest", p->resource, n);
		snprintf(msg, msgsz, "GetPreferredAllocation: malformed request (%zu bytes)", n);
		return DPG_INVALID_ARGUMENT;
	}
	nc = r->n_container_requests;
	c = calloc(nc + 1, sizeof(*c));
	cp = calloc(nc + 1, sizeof(*cp));
	ids = calloc(nc * CARVE_DEVREF_MAX + 1, sizeof(*ids));
	if (!c || !cp || !ids) {
		status = DPG_INTERNAL;
		snprintf(msg, msgsz, "out of memory");
		goto out;
	}
	pthread_mutex_lock(&dp->mu);
	for (i = 0; i < nc; i++) {
		V1beta1__ContainerPreferredAllocationRequest *q = r->container_requests[i];
		const struct nd_binding *best = NULL;
		struct bdev dev[CARVE_DEVREF_MAX];
		char **pick = &ids[i * CARVE_DEVREF_MAX];
		char *bestpick[CARVE_DEVREF_MAX];
		bool *used = calloc(q->n_available_deviceids + 1, sizeof(*used));
		int nd, bestn = 0;

		v1beta1__container_preferred_allocation_response__init(&c[i]);
		cp[i] = &c[i];
		if (!used)
			continue;
		for (k = 0; k < dp->nb; k++) {
			const struct nd_binding *b = &dp->b[k];
			size_t m, j;

			nd = binding_devices(dp, p, b, dev, NULL, 0);
			if (nd <= 0 || nd != q->allocation_size)
				continue;
			memset(used, 0, (q->n_available_deviceids + 1) * sizeof(*used));
			if (!pick_ids(dp, p, dev, nd, q->available_deviceids,
				      q->n_available_deviceids, pick, used))
				continue;
			/* every must-include ID is among the picks */
			for (m = 0; m < q->n_must_include_deviceids; m++) {
				for (j = 0; j < (size_t)nd; j++)
					if (!strcmp(pick[j], q->must_include_deviceids[m]))
						break;
				if (j == (size_t)nd)
					break;
			}
			if (m < q->n_must_include_deviceids)
				continue;
			if (!best || better(dp, b, best)) {
				best = b;
				bestn = nd;
				memcpy(bestpick, pick, sizeof(*pick) * (size_t)nd);
			}
		}
		free(used);
		if (best) {
			memcpy(pick, bestpick, sizeof(*pick) * (size_t)bestn);
			c[i].deviceids = pick;
			c[i].n_deviceids = (size_t)bestn;
		}
	}
	pthread_mutex_unlock(&dp->mu);
	resp.n_container_responses = nc;
	resp.container_responses = cp;
	*outn = v1beta1__preferred_allocation_response__get_packed_size(&resp);
	*out = malloc(*outn ? *outn : 1);
	if (!*out) {
		status = DPG_INTERNAL;
		snprintf(msg, msgsz, "out of memory");
		goto out;
	}
	v1beta1__preferred_allocation_response__pack(&resp, *out);
out:
	free(c);
	free(cp);
	free(ids);
	v1beta1__preferred_allocation_request__free_unpacked(r, NULL);
	return status;
}
