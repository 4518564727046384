/*
 * cluster.h - the engine's model of a GPU cluster: nodes (labels, taints,
 * allocatable cpu/memory/pods, topology) and their GPUs (model, memory,
 * sharing mode: exclusive, MIG layout, time-slice replicas, fractions).
 *
 * Specs come from any driver (YAML, HTTP, SQLite, a trace) and are copied
 * in by carve_cluster_add_node(); the cluster owns every copy.  Nodes and
 * GPUs are addressed by dense ids (node ids 0..n-1; a node's GPUs are
 * gpu_first .. gpu_first+ngpus-1 in one flat array), so later layers keep
 * ids, never pointers.  Views returned by carve_cluster_node()/gpu() stay
 * valid until the next carve_cluster_add_node() or _destroy().
 */
#ifndef CARVE_CLUSTER_H
#define CARVE_CLUSTER_H

#include "carve/mig.h"

enum carve_sharing {
	CARVE_SHARE_EXCLUSIVE = 0, /* whole GPUs: nvidia.com/gpu */
	CARVE_SHARE_MIG,           /* MIG instances: nvidia.com/mig-<profile> */
	CARVE_SHARE_TIMESLICE,     /* N replicas per GPU, no memory isolation */
	CARVE_SHARE_FRACTION       /* milli-GPU + memory bin-packing */
};

/* Most time-slice replicas per GPU carve accepts (the device plugin sets
 * no maximum; beyond this a config is almost surely a typo). */
#define CARVE_TIMESLICE_MAX_REPLICAS 1024

/* "exclusive", "mig", "timeslice", "fraction". */
const char *carve_sharing_name(enum carve_sharing s);

struct carve_label {
	const char *key, *value;
};

struct carve_taint_spec {
	const char *key, *value, *effect;
};

struct carve_gpu_spec {
	const char *model;       /* canonical model name when known, else as given */
	uint32_t memory_mib;
	enum carve_sharing sharing;
	const struct carve_mig_model *mig_model; /* sharing == MIG */
	struct carve_mig_layout mig;             /* sharing == MIG: legal layout */
	uint32_t replicas;       /* sharing == TIMESLICE: 1 .. CARVE_TIMESLICE_MAX_REPLICAS */
	bool fail_gt_one;        /* sharing == TIMESLICE: failRequestsGreaterThanOne
				  * (a pod may take one replica of it at most) */
	const char *uuid;        /* optional */
};

struct carve_node_spec {
	const char *name;
	const char *pool;        /* node pool / group name for reports; may be NULL */
	size_t nlabels;
	const struct carve_label *labels;
	size_t ntaints;
	const struct carve_taint_spec *taints;
	int64_t cpu_milli, memory_milli, pods; /* allocatable */
	size_t ngpus;
	const struct carve_gpu_spec *gpus;
	const char *block, *rack; /* topology; NULL when unknown */
	struct carve_pos pos;     /* where the node was defined */
};

/* Read-only views. */
struct carve_gpu {
	uint32_t node;           /* owning node id */
	uint16_t index;          /* index on the node */
	enum carve_sharing sharing;
	uint32_t replicas;
	bool fail_gt_one;        /* TIMESLICE: failRequestsGreaterThanOne */
	uint32_t memory_mib;
	const char *model;
	const char *uuid;
	const struct carve_mig_model *mig_model;
	struct carve_mig_layout mig;
};

struct carve_node {
	uint32_t id;
	const char *name, *pool, *block, *rack;
	size_t nlabels, ntaints;
	const struct carve_label *labels;
	const struct carve_taint_spec *taints;
	int64_t cpu_milli, memory_milli, pods;
	uint32_t gpu_first, ngpus;
	struct carve_pos pos;
};

struct carve_cluster;

struct carve_cluster *carve_cluster_create(void);
void carve_cluster_destroy(struct carve_cluster *c);

/*
 * Copies spec in.  Returns the new node id (>= 0), or CARVE_EINVAL (err:
 * empty name, MIG GPU without a model or with an illegal layout, replicas
 * < 1 or > CARVE_TIMESLICE_MAX_REPLICAS on a time-sliced GPU), CARVE_EEXISTS
 * (a node of that name exists), CARVE_ENOMEM.  Failure leaves the cluster
 * unchanged.
 */
int carve_cluster_add_node(struct carve_cluster *c, const struct carve_node_spec *spec,
			   struct carve_error *err);

size_t carve_cluster_node_count(const struct carve_cluster *c);
size_t carve_cluster_gpu_count(const struct carve_cluster *c);
const struct carve_node *carve_cluster_node(const struct carve_cluster *c, uint32_t id);
const struct carve_gpu *carve_cluster_gpu(const struct carve_cluster *c, uint32_t id);
/* Node id by name, or CARVE_ENOTFOUND.  O(1) on average (hash index). */
int carve_cluster_find_node(const struct carve_cluster *c, const char *name);
/* Value of a node label, or NULL. */
const char *carve_node_label(const struct carve_node *n, const char *key);

/*
 * Schedulable units of one GPU: 1 for an exclusive or fractional GPU, its
 * replicas for a time-sliced one, its instance count for a MIG GPU.
 */
unsigned carve_gpu_units(const struct carve_gpu *g);

#endif
