/*
 * frag.h - fragmentation of a placer's free GPU capacity, for the simulator
 * and reports: the FGD paper's measure (../shared/reference/fgd.md
 * sections 2-3) against a target mix of task types, the "typical task
 * types" of a trace that make such a mix, and the capacity the pending pods
 * of a replay cannot use.  Implemented in src/core/frag.c over the placer's
 * own state and feasibility; the fgd policy uses the same measure.
 *
 * Units: GPU milli for the FGD measure (a node's free milli is the sum of
 * carve_placer_gpu_free_milli over its GPUs), whole GPUs for
 * carve_frag_pending.
 *
 * Ownership: every placer and array argument is borrowed for the call;
 * nothing returned needs freeing (typical types are written into the
 * caller's array).  Only carve_frag_typical_types and carve_frag_pending
 * allocate, and they free their scratch before returning.  None of these
 * changes a placement or moves the placer's random stream, so measuring
 * between placements leaves every later decision as it would have been.
 */
#ifndef CARVE_FRAG_H
#define CARVE_FRAG_H

#include "carve/place.h"

/*
 * FGD fragmentation F_n of one node in the placer's current state, in GPU
 * milli: sum over the mix of carve_placer_set_mix() of p_m frag(n, m), where
 * frag(n, m) is the node's free milli that type m cannot use (all of it
 * when m cannot be placed on the node at all; see frag.c for the cases).
 * 0 without a mix, for a NULL placer or a node out of range.
 */
double carve_frag_node(const struct carve_placer *p, uint32_t node);

/* F = the sum of carve_frag_node over every node of the cluster. */
double carve_frag_cluster(const struct carve_placer *p);

/*
 * Free GPU capacity the pending pod types cannot use, in GPUs: over the
 * nodes, the node's free milli / 1000 times the summed weight w[t] of the
 * types[t] that cannot be placed on it now by the placer's own feasibility
 * (room, GPUs of a usable mode and model, labels, affinity, taints).  Every
 * request kind counts (whole, MIG, time-slice, fraction).  Types with
 * w[t] <= 0 are skipped.  Returns the sum (>= 0), or -1 for a NULL placer,
 * NULL arrays with n > 0, or allocation failure.  Takes a non-const placer
 * because evaluating uses its per-request scratch; no placement changes
 * and the random stream is left where it was.
 */
double carve_frag_pending(struct carve_placer *p, const struct carve_pod_req *types,
			  const double *w, size_t n);

/* The key of one task for typical types: cpu, per-GPU milli, GPU count and
 * the model constraint as written (spec "" or NULL: any model; borrowed). */
struct carve_frag_task_key {
	int64_t cpu_milli;
	int64_t gpu_milli;
	int64_t num_gpu;
	const char *spec;
};

/* One typical type: the first task (index into the keys) with its key, how
 * many tasks share the key, and its probability renormalised over the kept
 * types. */
struct carve_frag_typical {
	size_t task;
	size_t count;
	double prob;
};

/*
 * Typical task types of tasks[0..n) (fgd.md section 2): the distinct keys by
 * count descending (ties: the larger key first by cpu, GPU milli, count,
 * model string), taken one at a time until they cover pct % of the tasks,
 * probabilities renormalised over the kept keys.  out needs room for n
 * entries (the caller's).  Returns how many were kept (0 when n is 0),
 * CARVE_EINVAL (NULL tasks or out with n > 0) or CARVE_ENOMEM.
 */
long carve_frag_typical_types(const struct carve_frag_task_key *tasks, size_t n, double pct,
			      struct carve_frag_typical *out);

#endif
