/*
 * inventory_int.h - the inventory's private layout, shared by the three
 * files that build it: inventory.c (life cycle, the node builder, what a
 * node advertises), inventory_nodes.c (NodePools, v1 Nodes, openb CSV
 * expanded into nodes), inventory_nvidia.c (MIG layouts and
 * time-slicing from NVIDIA's configs, labels and resources) and
 * inventory_carve.c (Nodes serving carve's own device names).
 *
 * Ownership: struct carve_inventory_int is owned by its inventory (freed by
 * carve_inventory_destroy); struct nb is scratch for the node being built,
 * owned by carve_inventory_build, its label and taint arrays reused from
 * node to node.  Cross-file names start with br_ (the bridge's prefix,
 * bridge_int.h); every function reports its problems in m->diags at the
 * manifest position that caused them.
 */
#ifndef CARVE_INVENTORY_INT_H
#define CARVE_INVENTORY_INT_H

#include "carve/gpumodel.h"
#include "carve/inventory.h"
#include "carve/mig.h"
#include "manifest_int.h"

#define BR_MAX_NODE_GPUS CARVE_NODE_MAX_GPUS /* GPUs on one node (carve/manifest.h) */
/* Nodes in one inventory, from every source together (docs/limits.md): a
 * few NodePools of the per-pool maximum must not make a small file cost
 * seconds and gigabytes. */
#define BR_MAX_NODES 100000
#define BR_MAX_NODE_RES 24      /* resources one node advertises */

/* A (mig.config value, model) whose config drew diagnostics on a Node:
 * reported once, after every Node is built. */
struct migbad {
	const char *config;
	const struct carve_mig_model *mm;
	const char *first;       /* first Node that named it */
	struct carve_pos pos;    /* its label */
	size_t nodes;
};

/* The inventory's private part (inv->priv). */
struct carve_inventory_int {
	struct carve_arena arena;
	size_t cappools, capres, capnodes;
	struct migbad *migbad;
	size_t nmigbad, capmigbad;
	bool oom; /* an allocation failed: the inventory is incomplete */
	bool full; /* BR_MAX_NODES reached (reported once) */
	size_t carve_nodes; /* nodes serving carve's own device names */
};

/* Scratch for the node being built. */
struct nb {
	struct carve_node_spec spec;
	struct carve_label *labels;        /* grown as needed: NFD nodes have 100+ */
	struct carve_taint_spec *taints;
	size_t caplabels, captaints;
	bool *oom;                         /* the inventory's flag */
	struct carve_gpu_spec gpus[BR_MAX_NODE_GPUS];
	struct carve_inv_resource res[BR_MAX_NODE_RES];
	size_t nres;
	char name[256];                    /* a Kubernetes node name has at most 253 */
	char numbuf[4][32];
};

/* ---- inventory.c: the node builder and what a node advertises ---- */

/* printf of two strings into the inventory's arena; NULL (and marked) on failure. */
const char *br_inv_fmt(struct carve_inventory *inv, const char *fmt, const char *a,
		       const char *b);
/* Room for n elements in *arr; false (and the inventory marked) on failure. */
bool br_nb_grow(struct nb *b, void **arr, size_t *cap, size_t n, size_t size);
/* Appends a label the node does not have yet; set_label replaces one it has. */
void br_nb_add_label(struct nb *b, const char *key, const char *value);
void br_nb_set_label(struct nb *b, const char *key, const char *value);
void br_nb_set_taints(struct nb *b, const struct carve_taint *t, size_t n);
/* Starts the next node (keeps the label and taint arrays). */
void br_nb_reset(struct nb *b);
/* n exclusive GPUs of model gm (NULL: unknown, named model), mem_mib
 * memory each (0: the model's). */
void br_nb_init_gpus(struct nb *b, int n, const struct carve_gpu_model *gm, const char *model,
		     uint32_t mem_mib);
/* Exclusive GPUs take KAI-style fractions (unless the pool opts out). */
void br_nb_share_whole_gpus(struct nb *b);
/* Resources advertised by the GPUs built into b (ts_name: the time-sliced
 * resource's name, NULL nvidia.com/gpu). */
void br_nb_advertise(struct carve_inventory *inv, struct nb *b, const char *ts_name,
		     bool fail_gt_one);
/* Adds b's node to the cluster with what it advertises; its id, or a
 * negative CARVE_E* (reported; CARVE_ENOMEM marks the inventory). */
int br_nb_commit(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b);
/* A new pool whose nodes are the next ones committed; NULL when out of memory. */
struct carve_inv_pool *br_new_pool(struct carve_inventory *inv, const char *name,
				   const char *origin, struct carve_pos pos);
/* Lookups in a manifest's label and resource lists. */
const char *br_kv_get(const struct carve_kvlist *l, const char *key, struct carve_pos *pos);
int64_t br_res_get(const struct carve_reslist *l, const char *name, bool *found);

/* ---- inventory_carve.c: Nodes serving carve's own device names ---- */

/* Families of device names a Node advertises, as bits. */
#define BR_FAM_NVIDIA 1u
#define BR_FAM_CARVE 2u
#define BR_FAM_BIT(f) ((f) == CARVE_RF_NVIDIA ? BR_FAM_NVIDIA : (f) == CARVE_RF_CARVE ? BR_FAM_CARVE : 0u)

/*
 * *view: Node n as the builder reads it (NVIDIA's names): n itself unless
 * it advertises carve's names, then with carve's names spelled as their
 * nvidia.com twins (carve's only) or dropped (both families).  Returns the
 * families n advertises (BR_FAM_* bits; 0 none).  Out of memory: *view is
 * n and the inventory is marked.
 */
unsigned br_node_view(struct carve_inventory *inv, const struct carve_mf_node *n,
		      struct carve_mf_node *view);
/*
 * After br_nb_advertise: b advertises the names of families fam (carve's
 * names in place of NVIDIA's, or both) and carries CARVE_DEVICE_NAMES_LABEL
 * ("carve", "both"; "nvidia" only when the Node had the label, to replace a
 * stale value).  Counts nodes serving carve's names in inv.
 */
void br_nb_device_names(struct carve_inventory *inv, struct nb *b, unsigned fam,
			bool had_label);

/*
 * A NodePool's served device names from its labels: CARVE_DEVICE_NAMES_LABEL
 * "carve" or "both" in *fam (BR_FAM_* bits), 0 when absent or "nvidia".
 * Another value is an error at the label (who names the pool) and false:
 * the pool is skipped.
 */
bool br_pool_names_fam(struct carve_manifests *m, const char *who,
		       const struct carve_kvlist *labels, unsigned *fam);

/* ---- inventory_nodes.c: node sources expanded into nodes ---- */

void br_build_pool(struct carve_inventory *inv, struct carve_manifests *m,
		   const struct carve_mf_nodepool *np, struct nb *b);
void br_build_nodes(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b);
void br_build_csv(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b);

/* ---- inventory_nvidia.c: MIG layouts and time-slicing ---- */

/* One GPU's layout from mig-parted style counts, or from explicit
 * placements; false (reported) when a profile is unknown or illegal. */
bool br_mig_layout_from_counts(struct carve_diags *d, const struct carve_mig_model *mm,
			       const struct carve_migcount *c, size_t n, struct carve_pos pos,
			       const char *who, struct carve_mig_layout *out);
bool br_mig_layout_from_placements(struct carve_manifests *m, const struct carve_mig_model *mm,
				   const struct carve_migplace *pl, size_t n, const char *who,
				   struct carve_mig_layout *out);
/* mig-parted config `name` applied to b's GPUs; true when one became MIG. */
bool br_apply_migconfig(struct carve_manifests *m, struct carve_diags *dg, struct nb *b,
			const struct carve_mig_model *mm, const char *name,
			struct carve_pos pos, const char *who);
/* A Node's nvidia.com/mig.config, its diagnostics set aside for
 * br_report_migbad (once per config and model, after every Node). */
bool br_node_migconfig(struct carve_inventory *inv, struct carve_manifests *m,
		       struct nb *b, const struct carve_mig_model *mm, const char *cfg,
		       struct carve_pos pos, const char *node, const char *who);
void br_report_migbad(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b);
/* MIG from the Node's carve.dev/mig-current annotation (miglayout.h): the
 * exact layout per listed GPU, the others whole.  False (with an error at
 * the annotation) when it does not parse or a layout is not legal on the
 * model; b's GPUs are then left as they were. */
bool br_mig_from_current(struct carve_manifests *m, struct nb *b, const char *v,
			 struct carve_pos pos, const struct carve_mig_model *mm, const char *who);
/* MIG from a Node's nvidia.com/mig-* resources (mixed strategy). */
bool br_mig_from_resources(struct carve_manifests *m, struct nb *b,
			   const struct carve_mf_node *n, const struct carve_mig_model *mm);
/* Errors at nvidia.com/mig-* resources of a card without MIG. */
void br_mig_on_non_mig(struct carve_manifests *m, const char *who,
		       const struct carve_reslist *rl, const struct carve_gpu_model *gm);
/* A warning when status.allocatable's MIG resources disagree with the config's. */
void br_check_mig_alloc(struct carve_manifests *m, const char *who, const struct nb *b,
			const struct carve_reslist *rl, const char *cfg, struct carve_pos pos);
/* Device-plugin time-slicing: replicas on exclusive GPUs, the resource's name. */
void br_apply_dpconfig(struct carve_inventory *inv, struct carve_manifests *m,
		       struct nb *b, const struct carve_mf_dpconfig *dp,
		       const char **ts_name, bool *fail_gt_one);
/* MIG resources the device-plugin config time-slices too (dp may be NULL). */
void br_mark_mig_timesliced(struct nb *b, const struct carve_mf_dpconfig *dp);

#endif
