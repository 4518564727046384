/*
 * fill.h - the FGD paper's "fill" experiment (../shared/reference/fgd.md
 * section 6): submit a trace's tasks, shuffled and resampled up to a
 * multiple of the cluster's GPU capacity, one by one onto an empty cluster
 * (nothing departs, a task no node takes is dropped), and measure the
 * unallocated GPU share and the fragmentation against the share of GPU
 * capacity that has arrived.
 *
 * A struct carve_fill is prepared once per (cluster, task list): each task
 * mapped to a pod request, the typical task types of the list (the target
 * mix FGD measures fragmentation against), the capacity.  Each
 * carve_fill_run() is then independent: its own placer, its own seeded
 * shuffle and resampling.  Same inputs, policy and seed: same result.
 *
 * Ownership: the fill borrows the cluster and the tasks (both must outlive
 * it); results are owned by the caller and released with
 * carve_fill_result_cleanup().
 */
#ifndef CARVE_FILL_H
#define CARVE_FILL_H

#include "carve/cluster.h"
#include "carve/manifest.h"
#include "carve/trace.h"

struct carve_fill_config {
	double tune_ratio;    /* resample the GPU request to this x capacity (0: 1.3) */
	double typical_pct;   /* popularity cut-off of the typical types, % (0: 95) */
};

/* Per arrived-% bucket (0, 1, ..., nbuckets - 1): the mean over the
 * submissions whose arrived GPU request rounds to that % of capacity
 * (half to even), or, when none does, over those of the buckets next to it
 * (the simulator's analysis); have[b] false when neither exists. */
struct carve_fill_result {
	size_t nbuckets;
	bool *have;
	double *unalloc_pct;   /* 100 - allocated GPU milli / capacity % */
	double *frag_pct;      /* cluster fragmentation F / capacity % */
	size_t submitted, placed, dropped;
	size_t ntypes;         /* typical task types used */
	double final_arrived_pct;
};

struct carve_fill;

/*
 * Prepares the experiment.  Task i becomes: CPU-only -> no GPU; num_gpu 1
 * and gpu_milli < 1000 -> a fraction of one GPU; otherwise num_gpu whole
 * GPUs; models from gpu_spec, memory as a node filter.  NULL with err set
 * on an empty task list, a cluster without GPU capacity, or allocation
 * failure.
 */
struct carve_fill *carve_fill_create(const struct carve_cluster *c, const struct carve_task *tasks,
				     size_t ntasks, const struct carve_fill_config *cfg,
				     struct carve_error *err);
void carve_fill_destroy(struct carve_fill *f);

/* Number of typical task types and the one at i (its first task's index into
 * tasks[] and its probability); for reports and tests. */
size_t carve_fill_ntypes(const struct carve_fill *f);
bool carve_fill_type(const struct carve_fill *f, size_t i, size_t *task, double *prob);

/*
 * One run with policy (a carve_policy_name()) and seed.  Returns 0 with out
 * filled, or CARVE_EINVAL (unknown policy; err says which exist) /
 * CARVE_ENOMEM.  out is cleaned up first, so a result may be reused.
 */
int carve_fill_run(struct carve_fill *f, const char *policy, uint64_t seed,
		   struct carve_fill_result *out, struct carve_error *err);
void carve_fill_result_cleanup(struct carve_fill_result *r);

/*
 * Checks the list of policies a caller means to run: CARVE_EINVAL with err
 * set when it is empty, a name is empty, or a name comes twice ("policy
 * 'fgd' is given twice (each policy is run once per seed)"); 0 otherwise.
 * Unknown names are carve_fill_run's to report.  For the CLI's --policy.
 */
int carve_fill_check_policies(const char *const *pols, size_t n, struct carve_error *err);

/*
 * A cluster of openb node CSV rows (carve_manifests' csvnodes): per row a
 * node with its cpu, memory, 1001 pods (the simulator's allocatable) and
 * gpu fractional GPUs of its model, as the FGD simulator models them.
 * NULL with err set on a bad row (duplicate name, more than
 * CARVE_NODE_MAX_GPUS GPUs: "node n: 1000 GPUs per node is more than 64") or
 * allocation failure.  Free with carve_cluster_destroy().
 */
struct carve_cluster *carve_fill_cluster_csv(const struct carve_mf_csvnode *rows, size_t n,
					     struct carve_error *err);

#endif
