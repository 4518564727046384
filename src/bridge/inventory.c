/*
 * inventory.c - builds the engine's cluster from loaded manifests (see
 * include/carve/inventory.h) and records what every node advertises: the
 * inventory's life cycle, the node builder every source fills (struct nb:
 * labels, taints, GPUs) and the one place a built node enters the cluster
 * (br_nb_commit) with the resources it advertises (br_nb_advertise).
 *
 * Build order: NodePools, then v1 Nodes grouped into pools (label
 * carve.dev/pool, else by GPU product and sharing mode), then openb CSV
 * files (inventory_nodes.c); MIG layouts and time-slicing come from the
 * NVIDIA configs (inventory_nvidia.c).  Nodes of one pool get consecutive
 * ids.  A problem is reported at the manifest position that caused it and
 * the node falls back to a safe shape (exclusive GPUs), so one mistake
 * never hides the rest of the cluster.  Scratch per node lives in struct
 * nb, reset for every node (its label and taint arrays grow as needed and
 * are reused).  A mistake that many nodes share (one bad mig-parted config
 * named by many Nodes, a pool's config) is reported once, naming how many
 * nodes it affects.
 *
 * Ownership: the inventory owns the cluster, its pools and resources
 * (carve_realloc'd arrays) and an arena for the strings it makes; names
 * and labels from the manifests are borrowed and must outlive it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/inventory.h"
#include "carve/resource.h"
#include "inventory_int.h"

/* ---- the node builder ---- */

const char *br_inv_fmt(struct carve_inventory *inv, const char *fmt, const char *a,
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
bool br_nb_grow(struct nb *b, void **arr, size_t *cap, size_t n, size_t size)
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
void br_nb_add_label(struct nb *b, const char *key, const char *value)
{
	if (!br_nb_grow(b, (void **)&b->labels, &b->caplabels, b->spec.nlabels + 1,
			sizeof(*b->labels)))
		return;
	b->spec.labels = b->labels;
	b->labels[b->spec.nlabels].key = key;
	b->labels[b->spec.nlabels++].value = value;
}

void br_nb_set_label(struct nb *b, const char *key, const char *value)
{
	size_t i;

	for (i = 0; i < b->spec.nlabels; i++)
		if (!strcmp(b->labels[i].key, key)) {
			b->labels[i].value = value;
			return;
		}
	br_nb_add_label(b, key, value);
}

void br_nb_set_taints(struct nb *b, const struct carve_taint *t, size_t n)
{
	size_t i;

	if (!br_nb_grow(b, (void **)&b->taints, &b->captaints, n, sizeof(*b->taints)))
		return;
	for (i = 0; i < n; i++) {
		b->taints[i].key = t[i].key;
		b->taints[i].value = t[i].value;
		b->taints[i].effect = t[i].effect;
	}
	b->spec.taints = b->taints;
	b->spec.ntaints = n;
}

void br_nb_reset(struct nb *b)
{
	memset(&b->spec, 0, sizeof(b->spec));
	b->spec.labels = b->labels;
	b->spec.taints = b->taints;
	b->spec.gpus = b->gpus;
	/* keeps the label/taint arrays for the next node */
	b->nres = 0;
}

/* ---- GPUs ---- */

void br_nb_init_gpus(struct nb *b, int n, const struct carve_gpu_model *gm, const char *model,
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
void br_nb_share_whole_gpus(struct nb *b)
{
	size_t i;

	for (i = 0; i < b->spec.ngpus; i++)
		if (b->gpus[i].sharing == CARVE_SHARE_EXCLUSIVE)
			b->gpus[i].sharing = CARVE_SHARE_FRACTION;
}

/* ---- what a node advertises, and committing it ---- */

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
	if (b->nres < BR_MAX_NODE_RES) {
		b->res[b->nres].name = name;
		b->res[b->nres].count = count;
		b->res[b->nres].max_per_pod = max_per_pod;
		b->res[b->nres].sharing = sharing;
		b->res[b->nres++].mig_timesliced = false;
	}
}

/* Resources advertised by the GPUs built into b. */
void br_nb_advertise(struct carve_inventory *inv, struct nb *b, const char *ts_name,
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
				const char *rn = br_inv_fmt(inv, CARVE_RES_NAME_MIG_PREFIX "%s%s",
							    pn, "");

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
int br_nb_commit(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b)
{
	struct carve_inventory_int *p = inv->priv;
	size_t nnodes = carve_cluster_node_count(inv->cluster);
	size_t need = inv->nres + b->nres;
	struct carve_error err;
	int id;

	if (nnodes >= BR_MAX_NODES) {
		if (!p->full)
			carve_diag_error(&m->diags, b->spec.pos, "node %s: the inventory holds at "
					 "most %d nodes; this node and the ones after it are skipped",
					 b->spec.name ? b->spec.name : "?", BR_MAX_NODES);
		p->full = true;
		return CARVE_EFULL;
	}
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

struct carve_inv_pool *br_new_pool(struct carve_inventory *inv, const char *name,
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

/* ---- lookups in a manifest's lists ---- */

const char *br_kv_get(const struct carve_kvlist *l, const char *key, struct carve_pos *pos)
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

int64_t br_res_get(const struct carve_reslist *l, const char *name, bool *found)
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

/* ---- life cycle ---- */

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
		br_build_pool(inv, m, &m->pools[i], b);
	br_build_nodes(inv, m, b);
	br_build_csv(inv, m, b);
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
