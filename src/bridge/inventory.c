/*
 * inventory.c - builds the engine's cluster from loaded manifests (see
 * include/carve/inventory.h) and records what every node advertises.
 *
 * Build order: NodePools, then v1 Nodes grouped into pools (label
 * carve.dev/pool, else by GPU product and sharing mode), then openb CSV
 * files.  Nodes of one pool get consecutive ids.  A problem is reported at
 * the manifest position that caused it and the node falls back to a safe
 * shape (exclusive GPUs), so one mistake never hides the rest of the
 * cluster.  Scratch per node lives in struct nb, reset for every node (its
 * label and taint arrays grow as needed and are reused).  A mistake that
 * many nodes share (one bad mig-parted config named by many Nodes, a pool's
 * config) is reported once, naming how many nodes it affects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/gpumodel.h"
#include "carve/inventory.h"
#include "carve/quantity.h"
#include "carve/resource.h"
#include "manifest_int.h"

#define MAX_NODE_GPUS 64
#define MAX_NODE_RES 24
#define MAX_GPU_MEMORY_MIB (1LL << 31)

/* A (mig.config value, model) whose config drew diagnostics on a Node:
 * reported once, after every Node is built. */
struct migbad {
	const char *config;
	const struct carve_mig_model *mm;
	const char *first;       /* first Node that named it */
	struct carve_pos pos;    /* its label */
	size_t nodes;
};

struct carve_inventory_int {
	struct carve_arena arena;
	size_t cappools, capres, capnodes;
	struct migbad *migbad;
	size_t nmigbad, capmigbad;
	bool oom; /* an allocation failed: the inventory is incomplete */
};

/* Scratch for the node being built. */
struct nb {
	struct carve_node_spec spec;
	struct carve_label *labels;        /* grown as needed: NFD nodes have 100+ */
	struct carve_taint_spec *taints;
	size_t caplabels, captaints;
	bool *oom;                         /* the inventory's flag */
	struct carve_gpu_spec gpus[MAX_NODE_GPUS];
	struct carve_inv_resource res[MAX_NODE_RES];
	size_t nres;
	char name[256];                    /* a Kubernetes node name has at most 253 */
	char numbuf[4][32];
};

static const char *arena_fmt(struct carve_inventory *inv, const char *fmt, const char *a,
			     const char *b)
{
	char buf[512];

	const char *s;

	snprintf(buf, sizeof(buf), fmt, a, b);
	s = carve_arena_strdup(&inv->priv->arena, buf);
	if (!s)
		inv->priv->oom = true;
	return s;
}

/* Room for n elements in *arr; false (and the inventory marked) on failure. */
static bool nb_grow(struct nb *b, void **arr, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap : 32;
	void *v;

	if (n <= *cap)
		return true;
	while (c < n)
		c *= 2;
	v = carve_realloc(*arr, c * size);
	if (!v) {
		*b->oom = true;
		return false;
	}
	*arr = v;
	*cap = c;
	return true;
}

/* Appends a label the node does not have yet. */
static void add_label(struct nb *b, const char *key, const char *value)
{
	if (!nb_grow(b, (void **)&b->labels, &b->caplabels, b->spec.nlabels + 1,
		     sizeof(*b->labels)))
		return;
	b->spec.labels = b->labels;
	b->labels[b->spec.nlabels].key = key;
	b->labels[b->spec.nlabels++].value = value;
}

static void set_label(struct nb *b, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < b->spec.nlabels; i++)
		if (!strcmp(b->labels[i].key, key)) {
			b->labels[i].value = value;
			return;
		}
	add_label(b, key, value);
}

static void set_taints(struct nb *b, const struct carve_taint *t, size_t n)
{
	size_t i;

	if (!nb_grow(b, (void **)&b->taints, &b->captaints, n, sizeof(*b->taints)))
		return;
	for (i = 0; i < n; i++) {
		b->taints[i].key = t[i].key;
		b->taints[i].value = t[i].value;
		b->taints[i].effect = t[i].effect;
	}
	b->spec.taints = b->taints;
	b->spec.ntaints = n;
}

static void add_res(struct nb *b, const char *name, int64_t count, int64_t max_per_pod,
		    enum carve_sharing sharing)
{
	size_t i;

	for (i = 0; i < b->nres; i++)
		if (!strcmp(b->res[i].name, name)) {
			b->res[i].count += count;
			b->res[i].max_per_pod += max_per_pod;
			return;
		}
	if (b->nres < MAX_NODE_RES) {
		b->res[b->nres].name = name;
		b->res[b->nres].count = count;
		b->res[b->nres].max_per_pod = max_per_pod;
		b->res[b->nres].sharing = sharing;
		b->res[b->nres++].mig_timesliced = false;
	}
}

static void nb_reset(struct nb *b)
{
	memset(&b->spec, 0, sizeof(b->spec));
	b->spec.labels = b->labels;
	b->spec.taints = b->taints;
	b->spec.gpus = b->gpus;
	/* keeps the label/taint arrays for the next node */
	b->nres = 0;
}

/* Resources advertised by the GPUs built into b. */
static void advertise_gpus(struct carve_inventory *inv, struct nb *b, const char *ts_name,
			   bool fail_gt_one)
{
	size_t i, j;

	for (i = 0; i < b->spec.ngpus; i++) {
		const struct carve_gpu_spec *g = &b->gpus[i];

		switch (g->sharing) {
		case CARVE_SHARE_EXCLUSIVE:
		case CARVE_SHARE_FRACTION:
			add_res(b, CARVE_RES_NAME_GPU, 1, 1, g->sharing);
			break;
		case CARVE_SHARE_TIMESLICE:
			add_res(b, ts_name ? ts_name : CARVE_RES_NAME_GPU, g->replicas,
				fail_gt_one ? 0 : g->replicas, g->sharing);
			break;
		case CARVE_SHARE_MIG:
			for (j = 0; j < g->mig.n; j++) {
				const char *pn = g->mig_model->profiles[g->mig.inst[j].profile].name;
				const char *rn = arena_fmt(inv, CARVE_RES_NAME_MIG_PREFIX "%s%s", pn, "");

				if (rn)
					add_res(b, rn, 1, 1, CARVE_SHARE_MIG);
			}
			break;
		}
	}
	/* failRequestsGreaterThanOne: a pod may ask for one replica at most. */
	for (i = 0; i < b->nres; i++)
		if (b->res[i].sharing == CARVE_SHARE_TIMESLICE && fail_gt_one)
			b->res[i].max_per_pod = 1;
}

/* Adds b's node to the cluster and records what it advertises.  Room is
 * reserved first, so an allocation failure leaves the inventory as it was
 * (and marks it: carve_inventory_build then gives up). */
static int commit_node(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b)
{
	struct carve_inventory_int *p = inv->priv;
	size_t nnodes = carve_cluster_node_count(inv->cluster);
	size_t need = inv->nres + b->nres;
	struct carve_error err;
	int id;

	if (nnodes >= p->capnodes) {
		size_t c = p->capnodes ? p->capnodes * 2 : 64;
		uint32_t *f = carve_realloc(inv->node_res_first, c * sizeof(*f));

		if (!f)
			goto oom;
		inv->node_res_first = f;
		f = carve_realloc(inv->node_nres, c * sizeof(*f));
		if (!f)
			goto oom;
		inv->node_nres = f;
		p->capnodes = c;
	}
	if (need > p->capres) {
		size_t c = p->capres ? p->capres : 64;
		struct carve_inv_resource *r;

		while (c < need)
			c *= 2;
		r = carve_realloc(inv->res, c * sizeof(*r));
		if (!r)
			goto oom;
		inv->res = r;
		p->capres = c;
	}
	if (p->oom)
		return CARVE_ENOMEM; /* a label or taint array could not grow */
	id = carve_cluster_add_node(inv->cluster, &b->spec, &err);
	if (id == CARVE_ENOMEM)
		goto oom;
	if (id == CARVE_EEXISTS) {
		const struct carve_node *first = carve_cluster_node(
			inv->cluster, (uint32_t)carve_cluster_find_node(inv->cluster, b->spec.name));

		if (first && first->pos.file && first->pos.line)
			carve_diag_error(&m->diags, b->spec.pos, "%s (first at %s:%u)", err.text,
					 first->pos.file, (unsigned)first->pos.line);
		else
			carve_diag_error(&m->diags, b->spec.pos, "%s", err.text);
		return id;
	}
	if (id < 0) {
		carve_diag_error(&m->diags, b->spec.pos, "%s", err.text);
		return id;
	}
	if (b->nres) /* a CPU-only node advertises nothing: inv->res may be NULL */
		memcpy(inv->res + inv->nres, b->res, b->nres * sizeof(*b->res));
	inv->node_res_first[id] = (uint32_t)inv->nres;
	inv->node_nres[id] = (uint32_t)b->nres;
	inv->nres += b->nres;
	return id;
oom:
	p->oom = true;
	return CARVE_ENOMEM;
}

static struct carve_inv_pool *new_pool(struct carve_inventory *inv, const char *name,
				       const char *origin, struct carve_pos pos)
{
	struct carve_inv_pool *pl;

	if (inv->npools == inv->priv->cappools) {
		size_t c = inv->priv->cappools ? inv->priv->cappools * 2 : 8;
		void *v = carve_realloc(inv->pools, c * sizeof(*inv->pools));

		if (!v) {
			inv->priv->oom = true;
			return NULL;
		}
		inv->pools = v;
		inv->priv->cappools = c;
	}
	pl = &inv->pools[inv->npools++];
	pl->name = carve_arena_strdup(&inv->priv->arena, name);
	if (!pl->name) {
		inv->npools--;
		inv->priv->oom = true;
		return NULL;
	}
	pl->origin = origin;
	pl->pos = pos;
	pl->node_first = (uint32_t)carve_cluster_node_count(inv->cluster);
	pl->nnodes = 0;
	return pl;
}

/* ---- MIG layouts from counts and from mig-parted configs ---- */

/*
 * Layout for one GPU from mig-parted style counts.  Reports in d at pos and
 * returns false when a profile is unknown or no legal layout exists.
 */
static bool layout_from_migcounts(struct carve_diags *d, const struct carve_mig_model *mm,
				  const struct carve_migcount *c, size_t n, struct carve_pos pos,
				  const char *who, struct carve_mig_layout *out)
{
	int counts[32] = {0};
	struct carve_error err;
	size_t i;

	for (i = 0; i < n; i++) {
		int p = carve_mig_profile_find(mm, c[i].profile);

		if (p < 0) {
			carve_diag_error(d, c[i].pos, "%s: MIG profile %s does not exist on %s",
					 who, c[i].profile, mm->name);
			return false;
		}
		counts[p] += c[i].count;
	}
	if (carve_mig_layout_from_counts(mm, counts, out, &err)) {
		carve_diag_error(d, pos, "%s: illegal MIG layout for %s: %s", who,
				 mm->name, err.text);
		return false;
	}
	return true;
}

/*
 * Layout from explicit placements, checked one instance at a time so each
 * problem is reported at the placement that causes it.
 */
static bool layout_from_placements(struct carve_manifests *m, const struct carve_mig_model *mm,
				   const struct carve_migplace *pl, size_t n, const char *who,
				   struct carve_mig_layout *out)
{
	struct carve_error err;
	bool ok = true;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		struct carve_mig_layout t = *out;
		int p = carve_mig_profile_find(mm, pl[i].profile);

		if (p < 0) {
			carve_diag_error(&m->diags, pl[i].pos, "%s: MIG profile %s does not exist on %s",
					 who, pl[i].profile, mm->name);
			ok = false;
			continue;
		}
		if (t.n == CARVE_MIG_MAX_INST) {
			carve_diag_error(&m->diags, pl[i].pos, "%s: more than %d MIG instances on one GPU",
					 who, CARVE_MIG_MAX_INST);
			return false;
		}
		t.inst[t.n].profile = (uint8_t)p;
		t.inst[t.n].start = (uint8_t)pl[i].start;
		t.n++;
		if (carve_mig_layout_check(mm, &t, &err)) {
			carve_diag_error(&m->diags, pl[i].pos, "%s: illegal MIG layout for %s: %s", who,
					 mm->name, err.text);
			ok = false;
			continue;
		}
		*out = t;
	}
	return ok;
}

/* mig-parted's built-in names: all-disabled, all-<profile> (as many as fit),
 * all-balanced (per the reference's table). */
static bool builtin_migconfig(const struct carve_mig_model *mm, const char *name,
			      struct carve_mig_layout *out, bool *disabled)
{
	int counts[32] = {0};
	int p;

	*disabled = false;
	memset(out, 0, sizeof(*out));
	if (!strcmp(name, "all-disabled")) {
		*disabled = true;
		return true;
	}
	if (!strcmp(name, "all-balanced")) {
		/* 1g x2, 2g x1, 3g x1 with the model's memory sizes (mig-parted). */
		int g1 = -1, g2 = -1, g3 = -1, i;

		for (i = 0; i < mm->nprofiles; i++) {
			const struct carve_mig_profile *pr = &mm->profiles[i];

			if (pr->media)
				continue;
			if (pr->compute == 1 && pr->mem_slices == 1 && g1 < 0)
				g1 = i;
			if (pr->compute == 2 && g2 < 0)
				g2 = i;
			if (pr->compute == 3 && g3 < 0)
				g3 = i;
		}
		if (mm->mem_slices == 4) { /* A30: 1g.6gb x2, 2g.12gb x1 */
			if (g1 < 0 || g2 < 0)
				return false;
			counts[g1] = 2;
			counts[g2] = 1;
		} else {
			if (g1 < 0 || g2 < 0 || g3 < 0)
				return false;
			counts[g1] = 2;
			counts[g2] = 1;
			counts[g3] = 1;
		}
		return carve_mig_layout_from_counts(mm, counts, out, NULL) == 0;
	}
	if (strncmp(name, "all-", 4))
		return false;
	p = carve_mig_profile_find(mm, name + 4);
	if (p < 0)
		return false;
	counts[p] = carve_mig_fit_count(mm, out, p);
	return carve_mig_layout_from_counts(mm, counts, out, NULL) == 0;
}

/* True when every profile an entry names exists on the model. */
static bool entry_fits_model(const struct carve_mf_migdevice *e, const struct carve_mig_model *mm)
{
	size_t i;

	for (i = 0; i < e->ncounts; i++)
		if (carve_mig_profile_find(mm, e->counts[i].profile) < 0)
			return false;
	return true;
}

/*
 * Applies mig-parted config `name` to b's GPUs (all of model mm), reporting
 * in dg.  Returns true when at least one GPU became MIG.  Entries with a
 * device-filter are applied only when their profiles exist on this model
 * (that is what the PCI-id filters of mig-parted's stock configs select); a
 * config none of whose entries is for the model is an error at pos.
 */
static bool apply_migconfig(struct carve_manifests *m, struct carve_diags *dg, struct nb *b,
			    const struct carve_mig_model *mm, const char *name,
			    struct carve_pos pos, const char *who)
{
	const struct carve_mf_migconfig *mc = carve_mf_find_migconfig(m, name);
	struct carve_mig_layout l;
	bool any = false, disabled, for_model = false;
	size_t i, e, d;

	if (!mc) {
		if (!builtin_migconfig(mm, name, &l, &disabled)) {
			carve_diag_error(dg, pos,
					 "%s: mig-parted config '%s' is not defined (and is not a "
					 "built-in name such as all-balanced or all-<profile>)",
					 who, name);
			return false;
		}
		for (i = 0; i < b->spec.ngpus && !disabled; i++) {
			b->gpus[i].sharing = CARVE_SHARE_MIG;
			b->gpus[i].mig_model = mm;
			b->gpus[i].mig = l;
			any = true;
		}
		return any;
	}
	for (e = 0; e < mc->n; e++) {
		const struct carve_mf_migdevice *ent = &mc->v[e];

		if (ent->nfilters && !entry_fits_model(ent, mm))
			continue;
		for_model = true;
		if (!ent->mig_enabled)
			continue;
		if (!layout_from_migcounts(dg, mm, ent->counts, ent->ncounts, ent->pos, who, &l))
			continue;
		for (i = 0; i < b->spec.ngpus; i++) {
			bool pick = ent->all_devices;

			for (d = 0; !pick && d < ent->ndevices; d++)
				pick = ent->devices[d] == (int)i;
			if (!pick)
				continue;
			b->gpus[i].sharing = CARVE_SHARE_MIG;
			b->gpus[i].mig_model = mm;
			b->gpus[i].mig = l;
			any = true;
		}
	}
	if (!for_model)
		carve_diag_error(dg, pos, "%s: mig-parted config %s has no entry for %s "
				 "(every entry's device-filter is for another model)", who, name,
				 mm->name);
	return any;
}

/* ---- NodePools ---- */

static void init_gpus(struct nb *b, int n, const struct carve_gpu_model *gm, const char *model,
		      uint32_t mem_mib)
{
	int i;

	b->spec.ngpus = (size_t)n;
	for (i = 0; i < n; i++) {
		memset(&b->gpus[i], 0, sizeof(b->gpus[i]));
		b->gpus[i].model = gm ? gm->name : model;
		b->gpus[i].memory_mib = mem_mib ? mem_mib : gm ? gm->memory_mib : 0;
		b->gpus[i].sharing = CARVE_SHARE_EXCLUSIVE;
	}
}

/*
 * KAI-style GPU fractions on ordinary GPU nodes: a GPU no MIG layout or
 * time-slicing divides serves whole-GPU requests while no fraction holds
 * it and fractions ("gpu-fraction", "gpu-memory") otherwise, as KAI does
 * with GPU sharing on (the placer's CARVE_SHARE_FRACTION: shared when the
 * first fraction lands, whole again when the last one leaves).  A pool
 * opts out with an explicit sharing mode "exclusive" (a NodePool's
 * spec.sharing.mode, a Node's carve.dev/sharing-mode label).
 */
static void share_whole_gpus(struct nb *b)
{
	size_t i;

	for (i = 0; i < b->spec.ngpus; i++)
		if (b->gpus[i].sharing == CARVE_SHARE_EXCLUSIVE)
			b->gpus[i].sharing = CARVE_SHARE_FRACTION;
}

static void build_pool(struct carve_inventory *inv, struct carve_manifests *m,
		       const struct carve_mf_nodepool *np, struct nb *b)
{
	const struct carve_gpu_model *gm = np->gpu_model ? carve_gpu_model_find(np->gpu_model) : NULL;
	const char *model = gm ? gm->name : np->gpu_model;
	const char *prefix = np->name_prefix;
	struct carve_inv_pool *pl;
	char who[300];
	int ngpus = np->gpus_per_node, i;
	size_t k;
	bool mig_ok = false;
	struct carve_mig_layout l;
	const char *ts_name = NULL;
	const char *product = np->gpu_model;

	snprintf(who, sizeof(who), "NodePool %s", np->meta.name);
	if (ngpus > MAX_NODE_GPUS) {
		carve_diag_error(&m->diags, np->count_pos, "%s: %d GPUs per node is more than %d",
				 who, ngpus, MAX_NODE_GPUS);
		return;
	}
	if (np->sharing == CARVE_SHARE_MIG && ngpus > 0) {
		if (!gm || !gm->mig) {
			carve_diag_error(&m->diags, np->sharing_pos,
					 "%s: MIG is not available on %s; use exclusive, timeslice "
					 "or fraction sharing", who, model ? model : "an unknown GPU model");
		} else if (np->nplace) {
			mig_ok = layout_from_placements(m, gm->mig, np->place, np->nplace, who, &l);
		} else if (np->nmig) {
			mig_ok = layout_from_migcounts(&m->diags, gm->mig, np->mig, np->nmig,
						       np->mig_pos, who, &l);
		} else if (np->mig_config) {
			mig_ok = true; /* applied per node below */
		}
	}
	if (np->sharing == CARVE_SHARE_TIMESLICE)
		ts_name = np->timeslice.rename_by_default ? CARVE_RES_NAME_GPU_SHARED : CARVE_RES_NAME_GPU;
	if (np->gpu_model && np->sharing == CARVE_SHARE_TIMESLICE &&
	    !np->timeslice.rename_by_default)
		product = arena_fmt(inv, "%s%s", np->gpu_model, "-SHARED");
	pl = new_pool(inv, np->meta.name, "NodePool", np->meta.pos);
	if (!pl)
		return;
	for (i = 0; i < np->count; i++) {
		nb_reset(b);
		if ((size_t)snprintf(b->name, sizeof(b->name), "%s%d", prefix ? prefix : "", i) >=
		    sizeof(b->name)) {
			/* The loader refuses such prefixes; never build a cut name. */
			carve_diag_error(&m->diags, np->meta.pos, "%s: node name %s%d is longer "
					 "than %zu characters", who, prefix ? prefix : "", i,
					 sizeof(b->name) - 1);
			return;
		}
		b->spec.name = b->name;
		b->spec.pool = np->meta.name;
		b->spec.pos = np->meta.pos;
		b->spec.cpu_milli = np->cpu_milli;
		b->spec.memory_milli = np->memory_milli;
		b->spec.pods = np->pods ? np->pods : 110;
		b->spec.block = np->block;
		b->spec.rack = np->rack;
		set_taints(b, np->taints, np->ntaints);
		set_label(b, "kubernetes.io/hostname", b->name);
		set_label(b, "carve.dev/pool", np->meta.name);
		if (np->block)
			set_label(b, "cloud.provider.com/topology-block", np->block);
		if (np->rack)
			set_label(b, "cloud.provider.com/topology-rack", np->rack);
		init_gpus(b, ngpus, gm, model,
			  np->gpu_memory_mib > 0 ? (uint32_t)np->gpu_memory_mib : 0);
		if (ngpus > 0 && model) {
			snprintf(b->numbuf[0], sizeof(b->numbuf[0]), "%d", ngpus);
			/* GFD labels the product as written, with -SHARED appended
			 * when time-slicing does not rename the resource. */
			set_label(b, "nvidia.com/gpu.product", product);
			set_label(b, "nvidia.com/gpu.count", b->numbuf[0]);
			if (b->gpus[0].memory_mib) {
				snprintf(b->numbuf[1], sizeof(b->numbuf[1]), "%u",
					 (unsigned)b->gpus[0].memory_mib);
				set_label(b, "nvidia.com/gpu.memory", b->numbuf[1]);
			}
		}
		if (mig_ok && (np->nmig || np->nplace)) {
			for (k = 0; k < (size_t)ngpus; k++) {
				b->gpus[k].sharing = CARVE_SHARE_MIG;
				b->gpus[k].mig_model = gm->mig;
				b->gpus[k].mig = l;
			}
		} else if (mig_ok && np->mig_config) {
			/* Every node gets the same result: report for the first only. */
			struct carve_diags quiet;

			carve_diags_init(&quiet);
			if (!apply_migconfig(m, i ? &quiet : &m->diags, b, gm->mig, np->mig_config,
					     np->mig_pos, who))
				mig_ok = false; /* later nodes stay exclusive */
			carve_diags_cleanup(&quiet);
		} else if (np->sharing == CARVE_SHARE_TIMESLICE && np->timeslice.replicas >= 1) {
			for (k = 0; k < (size_t)ngpus; k++) {
				b->gpus[k].sharing = CARVE_SHARE_TIMESLICE;
				b->gpus[k].replicas = (uint32_t)np->timeslice.replicas;
				b->gpus[k].fail_gt_one = np->timeslice.fail_requests_gt_one;
			}
		} else if (np->sharing == CARVE_SHARE_FRACTION) {
			for (k = 0; k < (size_t)ngpus; k++)
				b->gpus[k].sharing = CARVE_SHARE_FRACTION;
		}
		if (np->sharing == CARVE_SHARE_MIG && mig_ok)
			set_label(b, "nvidia.com/mig.strategy", "mixed");
		if (np->sharing == CARVE_SHARE_TIMESLICE)
			set_label(b, "nvidia.com/gpu.sharing-strategy", "time-slicing");
		for (k = 0; k < np->labels.n; k++)
			set_label(b, np->labels.v[k].key, np->labels.v[k].value);
		if (np->sharing != CARVE_SHARE_EXCLUSIVE || !np->sharing_pos.line)
			share_whole_gpus(b);
		advertise_gpus(inv, b, ts_name, np->timeslice.fail_requests_gt_one);
		if (commit_node(inv, m, b) >= 0)
			pl->nnodes++;
	}
}

/* ---- v1 Nodes ---- */

static const char *kv_get(const struct carve_kvlist *l, const char *key, struct carve_pos *pos)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key)) {
			if (pos)
				*pos = l->v[i].pos;
			return l->v[i].value;
		}
	return NULL;
}

static int64_t res_get(const struct carve_reslist *l, const char *name, bool *found)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name)) {
			if (found)
				*found = true;
			return l->v[i].milli;
		}
	if (found)
		*found = false;
	return 0;
}

/* GPU product of a node: GFD label (minus -SHARED and a single-strategy
 * -MIG-<profile> suffix), else the openb card-model label.  The profile
 * points into buf, past the trimmed -SHARED. */
static const char *node_product(const struct carve_mf_node *n, char *buf, size_t size,
				const char **single_profile)
{
	const char *p = kv_get(&n->meta.labels, "nvidia.com/gpu.product", NULL);
	char *cut;

	*single_profile = NULL;
	if (!p)
		return kv_get(&n->meta.labels, "alibabacloud.com/gpu-card-model", NULL);
	snprintf(buf, size, "%s", p);
	cut = strstr(buf, "-SHARED");
	if (cut && !cut[7])
		*cut = '\0';
	cut = strstr(buf, "-MIG-");
	if (cut) {
		*single_profile = cut + 5;
		*cut = '\0';
	}
	return buf;
}

struct nodeinfo {
	const char *pool;
	char key[160];
};

static void node_pool_key(const struct carve_mf_node *n, struct nodeinfo *ni)
{
	const char *pool = kv_get(&n->meta.labels, "carve.dev/pool", NULL);
	const char *single;
	char prod[128];
	const char *model;
	const char *mode = "whole", *strategy, *opt;

	if (pool) {
		snprintf(ni->key, sizeof(ni->key), "%s", pool);
		return;
	}
	model = node_product(n, prod, sizeof(prod), &single);
	strategy = kv_get(&n->meta.labels, "nvidia.com/mig.strategy", NULL);
	if (kv_get(&n->meta.labels, "nvidia.com/mig.config", NULL) || single ||
	    (strategy && strcmp(strategy, "none")))
		mode = "mig";
	else if (kv_get(&n->meta.labels, "nvidia.com/device-plugin.config", NULL))
		mode = "shared";
	else if (kv_get(&n->meta.labels, "alibabacloud.com/gpu-card-model", NULL))
		mode = "fraction";
	else if ((opt = kv_get(&n->meta.labels, "carve.dev/sharing-mode", NULL)) &&
		 !strcmp(opt, "exclusive"))
		mode = "exclusive"; /* opted out of fractions: a pool of its own */
	snprintf(ni->key, sizeof(ni->key), "nodes/%s/%s", model ? model : "cpu", mode);
}

/* Device-plugin time-slicing on a node: sets replicas on exclusive GPUs, or
 * marks MIG resources that are time-sliced too. */
static void apply_dpconfig(struct carve_inventory *inv, struct carve_manifests *m,
			   struct nb *b, const struct carve_mf_dpconfig *dp,
			   const char **ts_name, bool *fail_gt_one)
{
	size_t i, k;

	*fail_gt_one = dp->fail_requests_gt_one;
	for (i = 0; i < dp->nts; i++) {
		const struct carve_mf_tsresource *r = &dp->ts[i];

		if (r->replicas < 1)
			continue;
		if (!strcmp(r->name, CARVE_RES_NAME_GPU)) {
			for (k = 0; k < b->spec.ngpus; k++) {
				if (b->gpus[k].sharing != CARVE_SHARE_EXCLUSIVE)
					continue;
				b->gpus[k].sharing = CARVE_SHARE_TIMESLICE;
				b->gpus[k].replicas = (uint32_t)r->replicas;
				b->gpus[k].fail_gt_one = dp->fail_requests_gt_one;
			}
			if (r->rename)
				*ts_name = r->rename;
			else if (dp->rename_by_default)
				*ts_name = CARVE_RES_NAME_GPU_SHARED;
		}
	}
	(void)inv;
	(void)m;
}

static void mark_mig_timesliced(struct nb *b, const struct carve_mf_dpconfig *dp)
{
	size_t i, k;

	for (i = 0; dp && i < dp->nts; i++)
		for (k = 0; k < b->nres; k++)
			if (!strcmp(b->res[k].name, dp->ts[i].name) &&
			    b->res[k].sharing == CARVE_SHARE_MIG && dp->ts[i].replicas >= 1) {
				b->res[k].mig_timesliced = true;
				b->res[k].count *= dp->ts[i].replicas;
				b->res[k].max_per_pod = dp->fail_requests_gt_one ? 1 : b->res[k].count;
			}
}

/* MIG from allocatable nvidia.com/mig-* (mixed strategy): spread the
 * instances over the GPUs, largest profiles first. */
static bool mig_from_resources(struct carve_manifests *m, struct nb *b,
			       const struct carve_mf_node *n, const struct carve_mig_model *mm)
{
	const struct carve_reslist *rl = n->allocatable.n ? &n->allocatable : &n->capacity;
	int want[32] = {0};
	size_t i, g;
	int p;
	bool any = false;

	for (i = 0; i < rl->n; i++) {
		const char *prof;

		if (!carve_res_is_mig(rl->v[i].name, &prof))
			continue;
		p = carve_mig_profile_find(mm, prof);
		if (p < 0) {
			carve_diag_error(&m->diags, rl->v[i].pos,
					 "Node %s: %s: MIG profile %s does not exist on %s",
					 n->meta.name, rl->v[i].name, prof, mm->name);
			continue;
		}
		want[p] += (int)carve_qty_value(rl->v[i].milli);
		any = true;
	}
	if (!any)
		return false;
	for (g = 0; g < b->spec.ngpus; g++) {
		b->gpus[g].sharing = CARVE_SHARE_MIG;
		b->gpus[g].mig_model = mm;
		memset(&b->gpus[g].mig, 0, sizeof(b->gpus[g].mig));
	}
	/* Largest first, first GPU with a free legal slot. */
	for (;;) {
		int best = -1;

		for (p = 0; p < mm->nprofiles; p++)
			if (want[p] > 0 && (best < 0 ||
					    mm->profiles[p].mem_slices > mm->profiles[best].mem_slices))
				best = p;
		if (best < 0)
			break;
		for (g = 0; g < b->spec.ngpus; g++) {
			uint8_t st;

			if (carve_mig_free_starts(mm, &b->gpus[g].mig, best, &st, 1) > 0 &&
			    carve_mig_layout_add(mm, &b->gpus[g].mig, best, st) == 0)
				break;
		}
		if (g == b->spec.ngpus) {
			carve_diag_error(&m->diags, n->meta.pos,
					 "Node %s: its nvidia.com/mig-* resources do not fit on %zu %s "
					 "GPU(s) in any legal MIG layout",
					 n->meta.name, b->spec.ngpus, mm->name);
			for (g = 0; g < b->spec.ngpus; g++)
				b->gpus[g].sharing = CARVE_SHARE_EXCLUSIVE;
			return false;
		}
		want[best]--;
	}
	return true;
}

/*
 * A count in a node label: decimal digits only, at most max.  Absent: false.
 * A bad value is a warning at the label, naming what is used instead, and
 * false, so the caller falls back.
 */
static bool label_num(struct carve_manifests *m, const char *who, const struct carve_mf_node *n,
		      const char *key, int64_t max, const char *fallback, int64_t *out)
{
	struct carve_pos pos;
	const char *v = kv_get(&n->meta.labels, key, &pos), *s;
	bool digits = v && *v;
	int64_t x = 0;

	if (!v)
		return false;
	for (s = v; *s && digits; s++) {
		if (*s < '0' || *s > '9')
			digits = false;
		else if (x <= max)
			x = x * 10 + (*s - '0');
	}
	if (!digits) {
		carve_diag_warn(&m->diags, pos, "%s: %s: '%s' is not a number; using %s", who, key,
				v, fallback);
		return false;
	}
	if (x > max) {
		carve_diag_warn(&m->diags, pos, "%s: %s: '%s' is out of range (0 to %lld); using %s",
				who, key, v, (long long)max, fallback);
		return false;
	}
	*out = x;
	return true;
}

/* nvidia.com/mig-* in status.allocatable of a card without MIG: an error at
 * each such resource (the node keeps its GPUs whole). */
static void mig_on_non_mig(struct carve_manifests *m, const char *who,
			   const struct carve_reslist *rl, const struct carve_gpu_model *gm)
{
	size_t i;

	for (i = 0; i < rl->n; i++)
		if (carve_res_is_mig(rl->v[i].name, NULL) && rl->v[i].milli > 0)
			carve_diag_error(&m->diags, rl->v[i].pos, "%s: %s: MIG is not available on %s",
					 who, rl->v[i].name, gm->name);
}

/*
 * After nvidia.com/mig.config gave the node its layout: when
 * status.allocatable lists MIG resources too and they disagree with what
 * the config gives, a warning at the label (the config is used).
 */
static void check_mig_alloc(struct carve_manifests *m, const char *who, const struct nb *b,
			    const struct carve_reslist *rl, const char *cfg, struct carve_pos pos)
{
	const char *name = NULL;
	int64_t from_cfg = 0, alloc = 0;
	size_t i, k;
	bool any = false;

	for (i = 0; i < rl->n; i++)
		any |= carve_res_is_mig(rl->v[i].name, NULL);
	if (!any)
		return; /* MIG resources not advertised (yet): nothing to compare */
	for (k = 0; k < b->nres && !name; k++)
		if (b->res[k].sharing == CARVE_SHARE_MIG &&
		    carve_qty_value(res_get(rl, b->res[k].name, NULL)) != b->res[k].count) {
			name = b->res[k].name;
			from_cfg = b->res[k].count;
			alloc = carve_qty_value(res_get(rl, name, NULL));
		}
	for (i = 0; i < rl->n && !name; i++) {
		if (!carve_res_is_mig(rl->v[i].name, NULL) || rl->v[i].milli <= 0)
			continue;
		for (k = 0; k < b->nres; k++)
			if (!strcmp(b->res[k].name, rl->v[i].name))
				break;
		if (k == b->nres) {
			name = rl->v[i].name;
			alloc = carve_qty_value(rl->v[i].milli);
		}
	}
	if (name)
		carve_diag_warn(&m->diags, pos, "%s: nvidia.com/mig.config=%s gives %lld %s but "
				"status.allocatable has %lld; using the config", who, cfg,
				(long long)from_cfg, name, (long long)alloc);
}

/*
 * A Node's nvidia.com/mig.config, applied with its diagnostics set aside:
 * a (config, model) that draws any is remembered and reported once by
 * report_migbad(), so N Nodes naming one bad config give one error.
 */
static bool node_migconfig(struct carve_inventory *inv, struct carve_manifests *m,
			   struct nb *b, const struct carve_mig_model *mm, const char *cfg,
			   struct carve_pos pos, const char *node, const char *who)
{
	struct carve_inventory_int *p = inv->priv;
	struct carve_diags quiet;
	size_t i;
	bool ok;

	carve_diags_init(&quiet);
	ok = apply_migconfig(m, &quiet, b, mm, cfg, pos, who);
	if (quiet.nerrors || quiet.nwarnings) {
		for (i = 0; i < p->nmigbad; i++)
			if (p->migbad[i].mm == mm && !strcmp(p->migbad[i].config, cfg))
				break;
		if (i < p->nmigbad) {
			p->migbad[i].nodes++;
		} else if (nb_grow(b, (void **)&p->migbad, &p->capmigbad, p->nmigbad + 1,
				   sizeof(*p->migbad))) {
			p->migbad[p->nmigbad++] = (struct migbad){cfg, mm, node, pos, 1};
		}
	}
	carve_diags_cleanup(&quiet);
	return ok;
}

/* Reports each remembered (config, model) once, at its first Node's label
 * and the config's own positions, with how many Nodes use it. */
static void report_migbad(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b)
{
	struct carve_inventory_int *p = inv->priv;
	char who[400];
	size_t i;

	for (i = 0; i < p->nmigbad; i++) {
		const struct migbad *e = &p->migbad[i];

		if (e->nodes == 1)
			snprintf(who, sizeof(who), "Node %s", e->first);
		else
			snprintf(who, sizeof(who), "Node %s (and %zu more Nodes with "
				 "nvidia.com/mig.config=%s)", e->first, e->nodes - 1, e->config);
		nb_reset(b);
		init_gpus(b, 1, NULL, e->mm->name, 0);
		apply_migconfig(m, &m->diags, b, e->mm, e->config, e->pos, who);
	}
}

static void build_node(struct carve_inventory *inv, struct carve_manifests *m,
		       const struct carve_mf_node *n, struct nb *b)
{
	const struct carve_reslist *rl = n->allocatable.n ? &n->allocatable : &n->capacity;
	char prod[128];
	const char *single = NULL, *model, *v, *ts_name = NULL;
	const struct carve_gpu_model *gm;
	const struct carve_mf_dpconfig *dp = NULL;
	struct carve_pos lpos, cfg_pos = {0};
	const char *cfg = NULL;
	int64_t ngpus = 0, x;
	uint32_t mem = 0;
	bool found, fail_gt_one = false;
	size_t i;
	char who[300];

	snprintf(who, sizeof(who), "Node %s", n->meta.name);
	nb_reset(b);
	b->spec.name = n->meta.name;
	b->spec.pos = n->meta.pos;
	b->spec.cpu_milli = res_get(rl, CARVE_RES_NAME_CPU, NULL);
	b->spec.memory_milli = res_get(rl, CARVE_RES_NAME_MEMORY, NULL);
	b->spec.pods = carve_qty_value(res_get(rl, CARVE_RES_NAME_PODS, &found));
	if (!found)
		b->spec.pods = 110;
	for (i = 0; i < n->meta.labels.n; i++) /* unique: duplicate keys are YAML errors */
		add_label(b, n->meta.labels.v[i].key, n->meta.labels.v[i].value);
	set_taints(b, n->taints, n->ntaints);
	b->spec.block = kv_get(&n->meta.labels, "cloud.provider.com/topology-block", NULL);
	b->spec.rack = kv_get(&n->meta.labels, "cloud.provider.com/topology-rack", NULL);

	model = node_product(n, prod, sizeof(prod), &single);
	gm = model ? carve_gpu_model_find(model) : NULL;
	/* A label that is not a count is reported and the next source used. */
	if (!single && label_num(m, who, n, "nvidia.com/gpu.count", MAX_NODE_GPUS,
				 "status.allocatable", &x))
		ngpus = x;
	else if (label_num(m, who, n, "alibabacloud.com/gpu-count", MAX_NODE_GPUS,
			   "status.allocatable", &x))
		ngpus = x;
	else if (res_get(rl, "alibabacloud.com/gpu-count", &found), found)
		ngpus = carve_qty_value(res_get(rl, "alibabacloud.com/gpu-count", NULL));
	else if (!single)
		ngpus = carve_qty_value(res_get(rl, CARVE_RES_NAME_GPU, NULL));
	if (!single && label_num(m, who, n, "nvidia.com/gpu.memory", MAX_GPU_MEMORY_MIB,
				 "the model's memory", &x))
		mem = (uint32_t)x;
	if (single && gm && gm->mig) {
		/* Single strategy: nvidia.com/gpu counts MIG devices of one profile. */
		int p = carve_mig_profile_find(gm->mig, single);
		int64_t inst = carve_qty_value(res_get(rl, CARVE_RES_NAME_GPU, NULL));
		struct carve_mig_layout empty = {0};
		int per = p >= 0 ? carve_mig_fit_count(gm->mig, &empty, p) : 0;

		if (p < 0 || per <= 0) {
			carve_diag_error(&m->diags, n->meta.pos, "%s: MIG profile %s (from "
					 "nvidia.com/gpu.product) does not exist on %s", who,
					 single, gm->mig->name);
		} else {
			int64_t g;

			ngpus = (inst + per - 1) / per;
			if (ngpus > MAX_NODE_GPUS)
				ngpus = MAX_NODE_GPUS;
			init_gpus(b, (int)ngpus, gm, model, 0);
			for (g = 0; g < ngpus && inst > 0; g++) {
				int c = inst < per ? (int)inst : per, k;

				b->gpus[g].sharing = CARVE_SHARE_MIG;
				b->gpus[g].mig_model = gm->mig;
				for (k = 0; k < c; k++) {
					uint8_t st;

					carve_mig_free_starts(gm->mig, &b->gpus[g].mig, p, &st, 1);
					carve_mig_layout_add(gm->mig, &b->gpus[g].mig, p, st);
				}
				inst -= c;
			}
			advertise_gpus(inv, b, NULL, false);
			/* Single strategy advertises the instances as nvidia.com/gpu. */
			for (i = 0; i < b->nres; i++)
				if (b->res[i].sharing == CARVE_SHARE_MIG)
					b->res[i].name = CARVE_RES_NAME_GPU;
			goto commit;
		}
	}
	if (ngpus < 0 || ngpus > MAX_NODE_GPUS) {
		carve_diag_error(&m->diags, n->meta.pos, "%s: %lld GPUs is not supported (at most %d)",
				 who, (long long)ngpus, MAX_NODE_GPUS);
		ngpus = 0;
	}
	init_gpus(b, (int)ngpus, gm, model, mem);
	if (ngpus && (v = kv_get(&n->meta.labels, "nvidia.com/mig.config", &lpos)) &&
	    strcmp(v, "all-disabled")) {
		if (!gm || !gm->mig)
			carve_diag_error(&m->diags, lpos, "%s: nvidia.com/mig.config=%s but MIG is "
					 "not available on %s", who, v,
					 model ? model : "an unknown GPU model");
		else if (node_migconfig(inv, m, b, gm->mig, v, lpos, n->meta.name, who)) {
			cfg = v;
			cfg_pos = lpos;
		}
	} else if (ngpus && gm && gm->mig) {
		mig_from_resources(m, b, n, gm->mig);
	}
	if (gm && !gm->mig)
		mig_on_non_mig(m, who, rl, gm);
	if ((v = kv_get(&n->meta.labels, "nvidia.com/device-plugin.config", &lpos))) {
		dp = carve_mf_find_dpconfig(m, v);
		if (!dp)
			carve_diag_warn(&m->diags, lpos, "%s: device-plugin config '%s' is not "
					"defined in the inputs; its sharing settings are unknown",
					who, v);
		else
			apply_dpconfig(inv, m, b, dp, &ts_name, &fail_gt_one);
	}
	v = kv_get(&n->meta.labels, "carve.dev/sharing-mode", NULL);
	if (!v || strcmp(v, "exclusive"))
		share_whole_gpus(b);
	advertise_gpus(inv, b, ts_name, fail_gt_one);
	mark_mig_timesliced(b, dp);
	if (cfg)
		check_mig_alloc(m, who, b, rl, cfg, cfg_pos);
commit:
	if (commit_node(inv, m, b) >= 0)
		inv->pools[inv->npools - 1].nnodes++;
}

static size_t key_hash(const char *s)
{
	size_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/*
 * Groups Nodes by pool key, pools in order of each key's first Node and
 * Nodes in file order within a pool.  Keys are looked up in a hash table
 * (slot: first Node of the group + 1), so grouping is linear.
 */
static void build_nodes(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b)
{
	struct nodeinfo *keys;
	size_t *next, *last, *ht, cap = 16, i, j, h;

	if (!m->nnodes)
		return;
	while (cap < 2 * m->nnodes)
		cap *= 2;
	keys = carve_calloc(m->nnodes, sizeof(*keys));
	next = carve_calloc(m->nnodes, sizeof(*next)); /* next Node of the group + 1 */
	last = carve_calloc(m->nnodes, sizeof(*last)); /* for a group's first: its last */
	ht = carve_calloc(cap, sizeof(*ht));
	if (!keys || !next || !last || !ht) {
		inv->priv->oom = true;
		goto out;
	}
	for (i = 0; i < m->nnodes; i++) {
		node_pool_key(&m->nodes[i], &keys[i]);
		for (h = key_hash(keys[i].key) & (cap - 1); ht[h]; h = (h + 1) & (cap - 1))
			if (!strcmp(keys[ht[h] - 1].key, keys[i].key))
				break;
		if (!ht[h]) {
			ht[h] = i + 1;
			last[i] = i;
			continue;
		}
		j = ht[h] - 1;
		next[last[j]] = i + 1;
		last[j] = i;
	}
	for (i = 0; i < m->nnodes; i++) {
		h = key_hash(keys[i].key) & (cap - 1);
		while (strcmp(keys[ht[h] - 1].key, keys[i].key))
			h = (h + 1) & (cap - 1);
		if (ht[h] - 1 != i)
			continue; /* not the first of its group: built with it */
		if (!new_pool(inv, keys[i].key, "Node", m->nodes[i].meta.pos))
			goto out;
		for (j = i + 1; j; j = next[j - 1])
			build_node(inv, m, &m->nodes[j - 1], b);
	}
	report_migbad(inv, m, b);
out:
	carve_free(keys);
	carve_free(next);
	carve_free(last);
	carve_free(ht);
}

/* ---- openb CSV ---- */

static void build_csv(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b)
{
	const char *file = NULL;
	size_t i;
	int k;

	for (i = 0; i < m->ncsvnodes; i++) {
		const struct carve_mf_csvnode *c = &m->csvnodes[i];
		const struct carve_gpu_model *gm;

		if (!file || strcmp(file, c->pos.file)) {
			file = c->pos.file;
			if (!new_pool(inv, file, "openb CSV", c->pos))
				return;
		}
		nb_reset(b);
		b->spec.name = c->name;
		b->spec.pool = inv->pools[inv->npools - 1].name;
		b->spec.pos = c->pos;
		b->spec.cpu_milli = c->cpu_milli;
		/* csv.c keeps memory_mib small enough; saturate all the same. */
		b->spec.memory_milli = carve_qty_sat_mul(c->memory_mib, 1024LL * 1024 * 1000);
		b->spec.pods = 110;
		set_label(b, "kubernetes.io/hostname", c->name);
		if (c->gpus > 0 && c->model && *c->model) {
			if (c->gpus > MAX_NODE_GPUS) {
				carve_diag_error(&m->diags, c->pos, "node %s: %d GPUs is more than %d",
						 c->name, c->gpus, MAX_NODE_GPUS);
				continue;
			}
			gm = carve_gpu_model_find(c->model);
			init_gpus(b, c->gpus, gm, c->model, 0);
			for (k = 0; k < c->gpus; k++)
				b->gpus[k].sharing = CARVE_SHARE_FRACTION;
			set_label(b, "alibabacloud.com/gpu-card-model", c->model);
		}
		advertise_gpus(inv, b, NULL, false);
		if (commit_node(inv, m, b) >= 0)
			inv->pools[inv->npools - 1].nnodes++;
	}
}

static void nb_free(struct nb *b)
{
	if (!b)
		return;
	carve_free(b->labels);
	carve_free(b->taints);
	carve_free(b);
}

struct carve_inventory *carve_inventory_build(struct carve_manifests *m)
{
	struct carve_inventory *inv = carve_calloc(1, sizeof(*inv));
	struct nb *b = carve_calloc(1, sizeof(*b));
	size_t i;

	if (!inv || !b)
		goto oom;
	inv->priv = carve_calloc(1, sizeof(*inv->priv));
	inv->cluster = carve_cluster_create();
	if (!inv->priv || !inv->cluster)
		goto oom;
	carve_arena_init(&inv->priv->arena);
	b->oom = &inv->priv->oom;
	for (i = 0; i < m->npools; i++)
		build_pool(inv, m, &m->pools[i], b);
	build_nodes(inv, m, b);
	build_csv(inv, m, b);
	if (inv->priv->oom)
		goto oom;
	nb_free(b);
	return inv;
oom:
	carve_diag_error(&m->diags, (struct carve_pos){0}, "out of memory building the inventory");
	nb_free(b);
	carve_inventory_destroy(inv);
	return NULL;
}

void carve_inventory_destroy(struct carve_inventory *inv)
{
	if (!inv)
		return;
	carve_cluster_destroy(inv->cluster);
	if (inv->priv) {
		carve_arena_cleanup(&inv->priv->arena);
		carve_free(inv->priv->migbad);
	}
	carve_free(inv->priv);
	carve_free(inv->pools);
	carve_free(inv->res);
	carve_free(inv->node_res_first);
	carve_free(inv->node_nres);
	carve_free(inv);
}

int64_t carve_inventory_node_res(const struct carve_inventory *inv, uint32_t node,
				 const char *name, int64_t *max_per_pod)
{
	uint32_t i;

	if (node >= carve_cluster_node_count(inv->cluster))
		return 0;
	for (i = 0; i < inv->node_nres[node]; i++) {
		const struct carve_inv_resource *r = &inv->res[inv->node_res_first[node] + i];

		if (!strcmp(r->name, name)) {
			if (max_per_pod)
				*max_per_pod = r->max_per_pod;
			return r->count;
		}
	}
	if (max_per_pod)
		*max_per_pod = 0;
	return 0;
}
