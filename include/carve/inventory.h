/*
 * inventory.h - the effective inventory: the engine's cluster model built
 * from loaded manifests, with what each node advertises to pods.
 *
 * Sources, in this order: carve NodePools (expanded to count nodes), v1
 * Nodes (GPU model, memory and count from GPU Feature Discovery labels and
 * status.allocatable; MIG layout from the mig-parted config named by
 * nvidia.com/mig.config or from the nvidia.com/mig-* resources;
 * time-slicing from the device-plugin config named by
 * nvidia.com/device-plugin.config), and openb node CSV rows (fractional
 * GPU sharing, as the openb trace's cluster uses).
 *
 * Every problem found while building (an illegal MIG layout, MIG on a card
 * without MIG, a config name that names nothing, a GFD label that is not a
 * number) is reported in the manifests' diags at the position that caused
 * it; the node is then kept with its GPUs exclusive (or the label ignored),
 * or skipped when that is not possible, so one bad node never hides the
 * rest.  A problem that many nodes share (a pool's mig-parted config, one
 * bad config named by N Nodes' nvidia.com/mig.config) is reported once,
 * naming how many nodes use it.  The inventory owns its cluster.
 */
#ifndef CARVE_INVENTORY_H
#define CARVE_INVENTORY_H

#include "carve/cluster.h"
#include "carve/manifest.h"

/* One pool: a NodePool, a group of v1 Nodes, or a CSV file's nodes. */
struct carve_inv_pool {
	const char *name;
	const char *origin;       /* "NodePool", "Node", "openb CSV" */
	struct carve_pos pos;
	uint32_t node_first, nnodes; /* node ids node_first .. +nnodes-1 */
};

/* A resource a node advertises to pods, with the pods' view of it. */
struct carve_inv_resource {
	const char *name;       /* "nvidia.com/gpu", "nvidia.com/mig-3g.40gb", "nvidia.com/gpu.shared" */
	int64_t count;          /* units on the node */
	int64_t max_per_pod;    /* most one pod may request (failRequestsGreaterThanOne: 1) */
	enum carve_sharing sharing;
	bool mig_timesliced;    /* MIG instances shared by time-slicing under this name */
};

struct carve_inventory {
	struct carve_cluster *cluster;
	size_t npools;
	struct carve_inv_pool *pools;
	/* Per node: resources advertised, node_res[node_res_first[i] ..
	 * node_res_first[i] + node_nres[i] - 1]. */
	uint32_t *node_res_first, *node_nres;
	size_t nres;
	struct carve_inv_resource *res;
	struct carve_inventory_int *priv;
};

/*
 * Builds the inventory from m, reporting problems into m->diags.  Returns
 * NULL only on allocation failure (also reported).  Free with _destroy.
 */
struct carve_inventory *carve_inventory_build(struct carve_manifests *m);
void carve_inventory_destroy(struct carve_inventory *inv);

/* Units a node advertises under resource name (0 when none). */
int64_t carve_inventory_node_res(const struct carve_inventory *inv, uint32_t node,
				 const char *name, int64_t *max_per_pod);

/*
 * Writes the human-readable inventory and quota summary (`carve validate
 * --explain`): per pool its nodes, GPUs and schedulable units, totals, and
 * per ClusterQueue its nominal quota per flavor and what it may borrow.
 */
void carve_inventory_explain(const struct carve_inventory *inv,
			     const struct carve_manifests *m, FILE *out);

#endif
