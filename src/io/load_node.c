/*
 * load_node.c - v1 Node and carve.dev/v1alpha1 NodePool loaders.
 *
 * A Node keeps metadata, spec.taints, spec.unschedulable and
 * status.capacity/allocatable; everything else a `kubectl get node -o yaml`
 * dump carries is accepted and ignored.  A NodePool (shape below, and in
 * docs/nodepool.md) gets local checks only: MIG layout legality and
 * references to mig-parted configs are checked when the inventory is built.
 */

/*
 * NodePool shape:
 *
 *   apiVersion: carve.dev/v1alpha1
 *   kind: NodePool
 *   metadata: {name: h100}
 *   spec:
 *     count: 16                 # required, 1 .. 100000
 *     namePrefix: h100-         # default "<name>-": nodes h100-0 .. h100-15;
 *                               # prefix + digits at most 253 characters
 *     gpu:
 *       model: H100-80GB        # canonical or GFD name; required when count > 0
 *       count: 8                # GPUs per node, >= 0 (required in gpu)
 *       memory: 80Gi            # optional override of the model table
 *     sharing:
 *       mode: mig               # exclusive (default) | mig | timeslice | fraction
 *       mig:                    # only with mode: mig; exactly one of:
 *         layout: {"3g.40gb": 2, "1g.10gb": 1}   # instances per GPU
 *         config: all-balanced                   # a mig-parted config name
 *         placements:                            # explicit, as nvidia-smi mig -cgi 9:4
 *         - {profile: 3g.40gb, start: 4}
 *       timeSlicing:            # only with mode: timeslice
 *         replicas: 4           # required, 1 .. 1024
 *         renameByDefault: false
 *         failRequestsGreaterThanOne: false
 *     cpu: "96"                 # quantities, per node
 *     memory: 1Ti
 *     pods: 110
 *     labels: {topology.kubernetes.io/zone: a}
 *     taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
 *     topology: {block: b1, rack: r3}
 *
 * A pool is kept unless it lacks a name or a valid count, or its sharing
 * mode cannot work (mig without a usable layout or config, timeslice
 * without valid replicas).  Settings for another mode are reported at
 * their key and ignored; unknown MIG profiles are reported and dropped.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "carve/gpumodel.h"
#include "carve/mig.h"
#include "loaders.h"

#define MAX_POOL_NODES 100000
#define MAX_NODE_NAME 253 /* Kubernetes: a DNS subdomain */

/* ---- shared ---- */

/* Key node of `key` in mapping m (for "error at that key"), or NULL. */
static const struct ynode *key_node(const struct ynode *m, const char *key)
{
	size_t i;

	if (!m || m->kind != YN_MAP)
		return NULL;
	for (i = 0; i < m->n; i++)
		if (!strcmp(m->pairs[i].key->str, key))
			return m->pairs[i].key;
	return NULL;
}

/* ---- Node ---- */

static void f_node_taints(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_node *n = o;

	ld_taints(ld, v, &n->taints, &n->ntaints);
}

static void f_node_unsched(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_bool(ld, v, &((struct carve_mf_node *)o)->unschedulable);
}

static const struct ld_field node_spec_fields[] = {
	{"taints", f_node_taints, 0},
	{"unschedulable", f_node_unsched, 0},
	{"podCIDR", NULL, 0},
	{"podCIDRs", NULL, 0},
	{"providerID", NULL, 0},
	{"externalID", NULL, 0},
	{"configSource", NULL, 0},
	{NULL, NULL, 0},
};

/*
 * Extended resources (a name with a domain: nvidia.com/gpu, nvidia.com/mig-*,
 * alibabacloud.com/gpu-count) count devices: Kubernetes allows whole numbers
 * only ("must be an integer", IsExtendedResourceName), so "0.5" is an error
 * at the resource and the Node is not kept (it is never rounded up).
 */
static bool whole_devices(struct ld *ld, const struct carve_reslist *rl)
{
	bool ok = true;
	size_t i;

	for (i = 0; i < rl->n; i++) {
		const char *name = rl->v[i].name;
		size_t old;
		char q[32];

		if (!strchr(name, '/') || !strncmp(name, "kubernetes.io/", 14) ||
		    rl->v[i].milli % 1000 == 0)
			continue;
		old = ld_push(ld, "[%s]", name);
		snprintf(q, sizeof(q), "%.3f", (double)rl->v[i].milli / 1000.0);
		ld_error(ld, rl->v[i].pos, "%s is not a whole number: device counts are whole "
			 "numbers", q);
		ld_pop(ld, old);
		ok = false;
	}
	return ok;
}

struct node_ctx {
	struct carve_mf_node n;
	bool bad;
};

static void f_node_capacity(struct ld *ld, const struct ynode *v, void *o)
{
	struct node_ctx *c = o;

	if (ld_resmap_nonneg(ld, v, &c->n.capacity) && !whole_devices(ld, &c->n.capacity))
		c->bad = true;
}

static void f_node_alloc(struct ld *ld, const struct ynode *v, void *o)
{
	struct node_ctx *c = o;

	if (ld_resmap_nonneg(ld, v, &c->n.allocatable) && !whole_devices(ld, &c->n.allocatable))
		c->bad = true;
}

static const struct ld_field node_status_fields[] = {
	{"capacity", f_node_capacity, 0},
	{"allocatable", f_node_alloc, 0},
	{"conditions", NULL, 0},
	{"nodeInfo", NULL, 0},
	{"addresses", NULL, 0},
	{"images", NULL, 0},
	{"daemonEndpoints", NULL, 0},
	{"phase", NULL, 0},
	{"volumesInUse", NULL, 0},
	{"volumesAttached", NULL, 0},
	{"config", NULL, 0},
	{"runtimeHandlers", NULL, 0},
	{"features", NULL, 0},
	{NULL, NULL, 0},
};

static void f_node_spec(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, node_spec_fields, o);
}

static void f_node_status(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, node_status_fields, o);
}

static const struct ld_field node_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_node_spec, 0},
	{"status", f_node_status, 0},
	{NULL, NULL, 0},
};

void load_node(struct ld *ld, const struct ynode *doc)
{
	struct node_ctx c;
	struct carve_mf_node *e;

	memset(&c, 0, sizeof(c));
	ld_metadata(ld, doc, &c.n.meta, false);
	ld_fields(ld, doc, node_fields, &c);
	if (!c.n.meta.name || !*c.n.meta.name || c.bad)
		return;
	e = LD_APPEND(ld, ld->m->nodes, ld->m->nnodes, ld->m->cap_nodes);
	if (e)
		*e = c.n;
}

/* ---- NodePool ---- */

static const char *const share_modes[] = {"exclusive", "mig", "timeslice", "fraction", NULL};

struct pool_ctx {
	struct carve_mf_nodepool p;
	size_t cap_mig, cap_place;
	bool place_bad;
	const struct ynode *spec, *gpu, *sharing, *mode, *mig, *layout, *config, *ts, *placements;
	bool count_ok, replicas_seen, gpu_bad;
	struct carve_pos prefix_pos;
};

static void f_pool_count(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;
	int64_t x;

	/* The message gives the field's own range, never the C type's. */
	if (!ld_int(ld, v, 1, MAX_POOL_NODES, &x))
		return;
	c->p.count = (int)x;
	c->p.count_pos = v->pos;
	c->count_ok = true;
}

static void f_pool_prefix(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;

	if (ld_str(ld, v, &c->p.name_prefix))
		c->prefix_pos = v->pos;
}

static void f_gpu_model(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;

	if (!ld_str(ld, v, &c->p.gpu_model))
		return;
	c->p.gpu_model_pos = v->pos;
	if (!*c->p.gpu_model) {
		ld_error(ld, v->pos, "model must not be empty");
		c->p.gpu_model = NULL;
	}
}

static void f_gpu_count(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;
	int64_t x;

	if (!ld_int(ld, v, INT64_MIN, INT64_MAX, &x))
		return;
	if (x < 0) {
		ld_error(ld, v->pos, "count must not be negative, got %lld", (long long)x);
		return;
	}
	/* The one bound on GPUs per node, with the message every node source
	 * and the fill experiment give (carve/manifest.h). */
	if (x > CARVE_NODE_MAX_GPUS) {
		ld_error(ld, v->pos, "%lld GPUs per node is more than %d", (long long)x,
			 CARVE_NODE_MAX_GPUS);
		c->gpu_bad = true; /* the pool is not kept */
		return;
	}
	c->p.gpus_per_node = (int)x;
}

static void f_gpu_memory(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;
	int64_t milli, mib;

	if (!ld_qty_nonneg(ld, v, &milli))
		return;
	mib = milli / 1000 / (1024 * 1024);
	if (mib < 1) {
		ld_error(ld, v->pos, "GPU memory '%s' is less than 1Mi (write bytes with a unit, e.g. 80Gi)",
			 v->str);
		return;
	}
	c->p.gpu_memory_mib = mib;
}

static const struct ld_field gpu_fields[] = {
	{"model", f_gpu_model, 0},
	{"count", f_gpu_count, LD_REQUIRED},
	{"memory", f_gpu_memory, 0},
	{NULL, NULL, 0},
};

static void f_pool_gpu(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;

	if (ytree_is_null(v))
		return;
	c->gpu = v;
	ld_fields(ld, v, gpu_fields, c);
}

static void f_share_mode(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;
	int e;

	if (!ld_enum(ld, v, share_modes, &e))
		return;
	c->p.sharing = (enum carve_sharing)e;
	c->mode = v;
}

static void f_mig_layout(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;
	size_t i;

	if (v->kind != YN_MAP) { /* null included: "layout:" alone is a mistake */
		ld_error(ld, v->pos, "expected a mapping of MIG profiles to counts, got %s",
			 ytree_kind_name(v));
		return;
	}
	c->layout = v;
	for (i = 0; i < v->n; i++) {
		const struct ypair *p = &v->pairs[i];
		size_t old = ld_push(ld, "[%s]", p->key->str);
		struct carve_migcount *e;
		int64_t x;

		if (ld_int(ld, p->val, 0, INT_MAX, &x)) {
			e = LD_APPEND(ld, c->p.mig, c->p.nmig, c->cap_mig);
			if (e) {
				e->profile = p->key->str;
				e->count = (int)x;
				e->pos = p->key->pos;
			}
		}
		ld_pop(ld, old);
	}
}

static void f_mig_config(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;
	const char *s;

	if (!ld_str(ld, v, &s))
		return;
	if (!*s) {
		ld_error(ld, v->pos, "config must not be empty");
		return;
	}
	c->p.mig_config = s;
	c->config = v;
}

static void f_place_profile(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct carve_migplace *)o)->profile);
}

static void f_place_start(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_migplace *pl = o;
	int64_t x;

	if (ld_int(ld, v, 0, 7, &x)) {
		pl->start = (int)x;
		pl->start_pos = v->pos;
	}
}

static const struct ld_field place_fields[] = {
	{"profile", f_place_profile, LD_REQUIRED},
	{"start", f_place_start, LD_REQUIRED},
	{NULL, NULL, 0},
};

static void one_place(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct pool_ctx *c = obj;
	struct carve_migplace pl, *e;

	memset(&pl, 0, sizeof(pl));
	pl.pos = item->pos;
	pl.start = -1;
	if (!ld_fields(ld, item, place_fields, &pl) || !pl.profile || pl.start < 0) {
		c->place_bad = true;
		return;
	}
	e = LD_APPEND(ld, c->p.place, c->p.nplace, c->cap_place);
	if (e)
		*e = pl;
}

static void f_mig_placements(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;

	if (ytree_is_null(v) || v->kind != YN_SEQ || !v->n) {
		ld_error(ld, v->pos, "expected a non-empty list of {profile, start}, got %s",
			 ytree_kind_name(v));
		c->place_bad = true;
		return;
	}
	c->placements = v;
	ld_list(ld, v, one_place, c);
}

static const struct ld_field mig_fields[] = {
	{"layout", f_mig_layout, 0},
	{"config", f_mig_config, 0},
	{"placements", f_mig_placements, 0},
	{NULL, NULL, 0},
};

static void f_share_mig(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;

	c->mig = v;
	if (!ytree_is_null(v))
		ld_fields(ld, v, mig_fields, c);
}

static void f_ts_replicas(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;
	int64_t x;

	c->replicas_seen = true;
	if (!ld_int(ld, v, INT64_MIN, INT_MAX, &x))
		return;
	if (x < 1) {
		ld_error(ld, v->pos, "replicas must be at least 1");
		return;
	}
	if (x > CARVE_TIMESLICE_MAX_REPLICAS) {
		ld_error(ld, v->pos, "replicas must be at most %d", CARVE_TIMESLICE_MAX_REPLICAS);
		return;
	}
	c->p.timeslice.replicas = (int)x;
	c->p.timeslice.replicas_pos = v->pos;
}

static void f_ts_rename(struct ld *ld, const struct ynode *v, void *o)
{
	ld_bool(ld, v, &((struct pool_ctx *)o)->p.timeslice.rename_by_default);
}

static void f_ts_fail(struct ld *ld, const struct ynode *v, void *o)
{
	ld_bool(ld, v, &((struct pool_ctx *)o)->p.timeslice.fail_requests_gt_one);
}

static const struct ld_field ts_fields[] = {
	{"replicas", f_ts_replicas, 0},
	{"renameByDefault", f_ts_rename, 0},
	{"failRequestsGreaterThanOne", f_ts_fail, 0},
	{NULL, NULL, 0},
};

static void f_share_ts(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;

	c->ts = v;
	if (!ytree_is_null(v))
		ld_fields(ld, v, ts_fields, c);
}

static const struct ld_field sharing_fields[] = {
	{"mode", f_share_mode, 0},
	{"mig", f_share_mig, 0},
	{"timeSlicing", f_share_ts, 0},
	{NULL, NULL, 0},
};

static void f_pool_sharing(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;

	if (ytree_is_null(v))
		return;
	c->sharing = v;
	ld_fields(ld, v, sharing_fields, c);
}

static void f_pool_cpu(struct ld *ld, const struct ynode *v, void *o)
{
	ld_qty_nonneg(ld, v, &((struct pool_ctx *)o)->p.cpu_milli);
}

static void f_pool_memory(struct ld *ld, const struct ynode *v, void *o)
{
	ld_qty_nonneg(ld, v, &((struct pool_ctx *)o)->p.memory_milli);
}

static void f_pool_pods(struct ld *ld, const struct ynode *v, void *o)
{
	ld_int(ld, v, 0, INT_MAX, &((struct pool_ctx *)o)->p.pods);
}

static void f_pool_labels(struct ld *ld, const struct ynode *v, void *o)
{
	ld_kvmap(ld, v, &((struct pool_ctx *)o)->p.labels);
}

static void f_pool_taints(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;

	ld_taints(ld, v, &c->p.taints, &c->p.ntaints);
}

static void f_topo_block(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct pool_ctx *)o)->p.block);
}

static void f_topo_rack(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct pool_ctx *)o)->p.rack);
}

static const struct ld_field topo_fields[] = {
	{"block", f_topo_block, 0},
	{"rack", f_topo_rack, 0},
	{NULL, NULL, 0},
};

static void f_pool_topology(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, topo_fields, o);
}

static const struct ld_field pool_spec_fields[] = {
	{"count", f_pool_count, LD_REQUIRED},
	{"namePrefix", f_pool_prefix, 0},
	{"gpu", f_pool_gpu, 0},
	{"sharing", f_pool_sharing, 0},
	{"cpu", f_pool_cpu, 0},
	{"memory", f_pool_memory, 0},
	{"pods", f_pool_pods, 0},
	{"labels", f_pool_labels, 0},
	{"taints", f_pool_taints, 0},
	{"topology", f_pool_topology, 0},
	{NULL, NULL, 0},
};

static void f_pool_spec(struct ld *ld, const struct ynode *v, void *o)
{
	struct pool_ctx *c = o;

	if (ytree_is_null(v))
		return; /* reported as missing by the LD_REQUIRED check */
	c->spec = v;
	ld_fields(ld, v, pool_spec_fields, c);
}

static const struct ld_field pool_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_pool_spec, LD_REQUIRED},
	{NULL, NULL, 0},
};

/* gpu.model: required with GPUs (false without); an unknown name is a warning. */
static bool pool_check_gpu(struct ld *ld, struct pool_ctx *c)
{
	if (!c->p.gpu_model) {
		if (c->p.gpus_per_node > 0 && !ytree_get(c->gpu, "model"))
			ld_error(ld, c->gpu->pos,
				 "missing required field 'model' (required when count > 0)");
		return c->p.gpus_per_node == 0;
	}
	ld_gpu_model_note(ld, c->p.gpu_model_pos, c->p.gpu_model);
	return true;
}

void ld_gpu_model_note(struct ld *ld, struct carve_pos pos, const char *model)
{
	const char *names[128];
	size_t n = 0;
	const char *s;
	int i;

	if (carve_gpu_model_find(model))
		return;
	for (i = 0; i < carve_gpu_model_count() && n < 128; i++)
		names[n++] = carve_gpu_model_at(i)->name;
	s = ld_suggest(model, names, n);
	if (s)
		ld_warn(ld, pos, "unknown GPU model '%s' (did you mean '%s'?)", model, s);
	else
		ld_warn(ld, pos, "unknown GPU model '%s'; its memory and MIG geometry are not known",
			model);
}

/* Drops layout entries whose profile the model lacks (when the model is known). */
static void pool_check_profiles(struct ld *ld, struct pool_ctx *c)
{
	const struct carve_mig_model *mm;
	const char *names[64];
	size_t i, j, n = 0, keep = 0;
	char list[512];
	size_t len = 0, old;

	mm = c->p.gpu_model ? carve_mig_model_find(c->p.gpu_model) : NULL;
	if (!mm)
		return; /* unknown or MIG-less model: inventory.c reports it */
	old = ld_push(ld, ".mig.layout");
	list[0] = '\0';
	for (j = 0; j < mm->nprofiles && n < 64; j++) {
		names[n++] = mm->profiles[j].name;
		if (len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						j ? ", " : "", mm->profiles[j].name);
	}
	for (i = 0; i < c->p.nmig; i++) {
		const struct carve_migcount *e = &c->p.mig[i];
		const char *s;

		if (carve_mig_profile_find(mm, e->profile) >= 0) {
			c->p.mig[keep++] = *e;
			continue;
		}
		s = ld_suggest(e->profile, names, n);
		if (s)
			ld_error(ld, e->pos, "unknown MIG profile '%s' for %s (did you mean '%s'?)",
				 e->profile, mm->name, s);
		else
			ld_error(ld, e->pos, "unknown MIG profile '%s' for %s (profiles: %s)",
				 e->profile, mm->name, list);
	}
	c->p.nmig = keep;
	ld_pop(ld, old);
}

/* Sharing settings against the mode; false when the pool cannot be used. */
static bool pool_check_sharing(struct ld *ld, struct pool_ctx *c)
{
	struct carve_mf_nodepool *p = &c->p;
	const char *mode = share_modes[p->sharing];
	struct carve_pos mode_pos = c->mode ? c->mode->pos : c->sharing ? c->sharing->pos :
							      c->spec->pos;
	const struct ynode *k;

	p->sharing_pos = mode_pos;
	if (p->sharing != CARVE_SHARE_MIG && (k = key_node(c->sharing, "mig"))) {
		ld_error(ld, k->pos, "mig settings need mode: mig (mode is %s); ignored", mode);
		p->nmig = 0;
		p->mig = NULL;
		p->mig_config = NULL;
		p->nplace = 0;
		p->place = NULL;
	}
	if (p->sharing != CARVE_SHARE_TIMESLICE && (k = key_node(c->sharing, "timeSlicing"))) {
		ld_error(ld, k->pos, "timeSlicing settings need mode: timeslice (mode is %s); ignored",
			 mode);
		memset(&p->timeslice, 0, sizeof(p->timeslice));
	}
	if (p->sharing == CARVE_SHARE_MIG) {
		if (c->placements && (c->layout || c->config)) {
			ld_error(ld, c->placements->pos,
				 "set one of mig.layout, mig.config or mig.placements; "
				 "placements ignored");
			p->nplace = 0;
			p->place = NULL;
		} else if (c->placements) {
			/* Legality is the inventory's check, with the model's rules. */
			p->mig_pos = c->placements->pos;
			return !c->place_bad;
		}
		if (c->layout && c->config) {
			ld_error(ld, c->config->pos,
				 "set either mig.layout or mig.config, not both; config ignored");
			p->mig_config = NULL;
		}
		if (c->layout) {
			size_t before = p->nmig;

			p->mig_pos = c->layout->pos;
			if (!c->layout->n) {
				ld_error(ld, c->layout->pos, "mig.layout lists no MIG profile");
				return false;
			}
			pool_check_profiles(ld, c);
			/* Entries that failed were reported; a partial layout is no layout. */
			return p->nmig == before && p->nmig == c->layout->n;
		}
		if (p->mig_config) {
			p->mig_pos = c->config->pos;
			return true;
		}
		if (!key_node(c->mig, "config") && !key_node(c->mig, "layout") &&
		    !key_node(c->mig, "placements"))
			ld_error(ld, mode_pos, "mode mig needs sharing.mig.layout, "
				 "sharing.mig.config or sharing.mig.placements");
		return false;
	}
	if (p->sharing == CARVE_SHARE_TIMESLICE && p->timeslice.replicas < 1) {
		if (!c->replicas_seen)
			ld_error(ld, mode_pos, "mode timeslice needs sharing.timeSlicing.replicas");
		return false;
	}
	return true;
}

/* Node names are <namePrefix><index>: the longest must be a valid node name. */
static bool pool_check_prefix(struct ld *ld, struct pool_ctx *c)
{
	size_t len = strlen(c->p.name_prefix), digits = 1;
	int last = c->p.count - 1;
	size_t old;

	while (last >= 10) {
		last /= 10;
		digits++;
	}
	if (len + digits <= MAX_NODE_NAME)
		return true;
	old = ld_push(ld, ytree_get(c->spec, "namePrefix") ? ".spec.namePrefix" : "metadata.name");
	ld_error(ld, c->prefix_pos, "node names <namePrefix><index> would be %zu characters, "
		 "above Kubernetes' %d", len + digits, MAX_NODE_NAME);
	ld_pop(ld, old);
	return false;
}

void load_nodepool(struct ld *ld, const struct ynode *doc)
{
	struct pool_ctx c;
	struct carve_mf_nodepool *e;
	size_t old;
	bool ok = true;

	memset(&c, 0, sizeof(c));
	ld_metadata(ld, doc, &c.p.meta, false);
	ld_fields(ld, doc, pool_fields, &c);
	if (!c.spec)
		return;
	old = ld_push(ld, ".spec");
	if (c.gpu) {
		size_t o2 = ld_push(ld, ".gpu");

		ok = pool_check_gpu(ld, &c);
		ld_pop(ld, o2);
	}
	{
		size_t o2 = ld_push(ld, ".sharing");

		ok &= pool_check_sharing(ld, &c);
		ld_pop(ld, o2);
	}
	ld_pop(ld, old);
	if (!c.p.meta.name || !*c.p.meta.name || !c.count_ok || c.gpu_bad || !ok)
		return;
	if (!c.p.name_prefix) {
		size_t n = strlen(c.p.meta.name);
		char *s = carve_arena_alloc(ld->a, n + 2);

		if (!s) {
			carve_diag_error(ld->d, doc->pos, "out of memory");
			return;
		}
		memcpy(s, c.p.meta.name, n);
		s[n] = '-';
		s[n + 1] = '\0';
		c.p.name_prefix = s;
		c.prefix_pos = c.p.meta.name_pos;
	}
	if (!pool_check_prefix(ld, &c))
		return;
	if (!c.p.gpu_model_pos.line)
		c.p.gpu_model_pos = c.gpu ? c.gpu->pos : c.spec->pos;
	if (!c.p.mig_pos.line)
		c.p.mig_pos = c.p.sharing_pos;
	e = LD_APPEND(ld, ld->m->pools, ld->m->npools, ld->m->cap_pools);
	if (e)
		*e = c.p;
}
