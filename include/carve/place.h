/*
 * place.h - placement: which node and which exact devices every pod of a
 * workload gets, on top of the cluster model (cluster.h).
 *
 * A struct carve_placer keeps the free capacity of each node (cpu, memory,
 * pods) and of each GPU according to its sharing mode:
 *   exclusive  - free or taken whole;
 *   mig        - each instance of the GPU's current layout free or taken (the
 *                cluster's layout, or one the placer chose: Dynamic MIG below);
 *   timeslice  - how many of its replicas are taken;
 *   fraction   - milli-GPU (0..1000) and memory MiB taken, bin-packed.
 * A whole-GPU request may also take a fully free fractional GPU (1000 milli).
 *
 * carve_placer_place() places a gang atomically: every pod of every group
 * gets a place, or nothing changes (a failed gang holds no device).  The
 * policy (an ops table, src/core/policy.c) scores feasible nodes and may
 * choose the GPUs inside a node; adding a policy means one file and one
 * table entry.  Same cluster, same requests, same seed: same placements.
 * The placer borrows the cluster (it must outlive the placer and not gain
 * nodes meanwhile); placements are plain values owned by the caller.
 */
#ifndef CARVE_PLACE_H
#define CARVE_PLACE_H

#include "carve/admit.h"
#include "carve/cluster.h"
#include "carve/resource.h"

#define CARVE_POD_MAX_GPUS 16

enum carve_gpu_req {
	CARVE_GREQ_NONE = 0,  /* no GPU */
	CARVE_GREQ_WHOLE,     /* count whole GPUs (exclusive, or fully free fractional) */
	CARVE_GREQ_MIG,       /* count instances of mig_profile */
	CARVE_GREQ_REPLICA,   /* count time-slice replicas (nvidia.com/gpu on a
			       * time-sliced node, or nvidia.com/gpu.shared); a
			       * GPU with fail_gt_one serves count 1 only */
	CARVE_GREQ_FRACTION,  /* milli of one GPU (1..999) and/or mem_mib of it */
	CARVE_GREQ_GPU        /* count of "nvidia.com/gpu" as the node advertises it:
			       * replicas on a node with time-sliced GPUs (of an
			       * allowed model), else whole GPUs (as WHOLE).  Resolved
			       * per node; the placement records what was taken. */
};

/*
 * The GPU request a resource of kind k makes of the placer:
 * CARVE_RK_GPU -> CARVE_GREQ_GPU (whole GPUs, or replicas on a time-sliced
 * node, resolved per node), CARVE_RK_GPU_WHOLE (carve.dev/gpu) ->
 * CARVE_GREQ_WHOLE, CARVE_RK_REPLICA -> CARVE_GREQ_REPLICA,
 * CARVE_RK_MIG -> CARVE_GREQ_MIG (the profile from carve_res_kind), every
 * other kind -> CARVE_GREQ_NONE (quota only).  CARVE_GREQ_WHOLE is also
 * the baseline's and the benchmarks' explicit whole GPU; CARVE_GREQ_FRACTION
 * comes from no resource name but a KAI "gpu-fraction" or "gpu-memory"
 * annotation.
 */
enum carve_gpu_req carve_res_greq(enum carve_res_kind k);

/* What one pod needs.  Strings and arrays are borrowed for the call. */
struct carve_pod_req {
	int64_t cpu_milli;
	int64_t memory_milli;          /* memory, in milli-bytes as quantities parse */
	enum carve_gpu_req gpu;
	int count;                     /* WHOLE, MIG, REPLICA: how many */
	const char *mig_profile;       /* MIG: "3g.40gb" */
	int milli;                     /* FRACTION: share of one GPU, 1..999 */
	uint32_t mem_mib;              /* FRACTION: GPU memory wanted (0: by milli) */
	size_t nmodels;                /* allowed GPU models (canonical or product */
	const char *const *models;     /* names); 0 = any model */
	size_t nselector;
	const struct carve_label *selector;      /* node labels required */
	size_t nterms;
	const struct carve_match_term *terms;    /* required node affinity (OR) */
	size_t ntolerations;
	const struct carve_toleration_spec *tolerations;
};

/*
 * The placement request of one pod of podSet ps: cpu and memory, the one
 * GPU device kind it asks for (nvidia.com/gpu, nvidia.com/gpu.shared,
 * nvidia.com/mig-<profile>, or a fraction), its nodeSelector, required
 * node affinity and tolerations, all borrowed from ps (models stay 0:
 * they are affinity terms in a spec).  Resources the placer does not
 * know are quota only.  Returns 0, or CARVE_EINVAL (err says why) when a
 * pod asks for more than one kind of GPU device, a device count that is
 * not whole or above CARVE_POD_MAX_GPUS, or a fraction outside (0, 1);
 * *r is filled as far as it could be either way.
 */
int carve_pod_req_of(const struct carve_podset_spec *ps, struct carve_pod_req *r,
		     struct carve_error *err);

/*
 * Why a pod of req fits no node of c even empty, for people: the first
 * requirement no node meets, in this order: its nodeSelector and required
 * node affinity, untolerated taints, a GPU of the kind it asks for (a MIG
 * profile, time-slice replicas, fractions, GPUs outside MIG), then devices,
 * cpu and memory for one pod.  Writes a phrase into buf (size bytes) and
 * returns buf; NULL when some node could hold it when empty (then only
 * what is taken now is in the way).  Models (req->models) are not looked at.
 */
const char *carve_pod_why_nowhere(const struct carve_cluster *c, const struct carve_pod_req *req,
				  char *buf, size_t size);

/* One device a pod got. */
struct carve_dev {
	uint32_t gpu;      /* cluster-wide GPU id (carve_cluster_gpu) */
	int16_t mig;       /* MIG: index of the instance in the GPU's layout, else -1 */
	int16_t replica;   /* REPLICA: replica number on that GPU, else -1 */
	int16_t milli;     /* milli taken on a fractional GPU (1000: a WHOLE
			    * request took it), else 0 */
};

struct carve_pod_place {
	uint32_t node;
	int ndevs;
	struct carve_dev devs[CARVE_POD_MAX_GPUS];
	uint32_t mem_mib;          /* FRACTION: GPU memory taken */
	int64_t cpu_milli, memory_milli; /* what the node gave (for release) */
};

/* A group of identical pods of one gang (a podSet). */
struct carve_pod_group {
	const struct carve_pod_req *req;
	int count;
};

/* Topology preference for a gang: keep its pods within one value of these
 * node labels, tried from the narrowest (host) to the widest (block). */
struct carve_topology {
	size_t nlevels;
	const char *const *levels;  /* label keys, widest first, e.g. block, rack, host */
	bool required;              /* refuse to spread beyond the widest level */
};

struct carve_placer;

/* Names of the built-in policies: "binpack", "spread", "bestfit", "dotprod",
 * "gpupacking", "gpuclustering", "random", "fgd". */
int carve_policy_count(void);
const char *carve_policy_name(int i);

/*
 * New placer over c with the named policy and RNG seed.  NULL on an unknown
 * policy (err says which exist) or allocation failure.
 */
struct carve_placer *carve_placer_create(const struct carve_cluster *c, const char *policy,
					 uint64_t seed, struct carve_error *err);
void carve_placer_destroy(struct carve_placer *p);

/*
 * Target workload for fragmentation-aware policies (fgd): n task types with
 * their probabilities (summing to about 1).  Copied.  Returns 0 or
 * CARVE_ENOMEM / CARVE_EINVAL.
 */
int carve_placer_set_mix(struct carve_placer *p, const struct carve_pod_req *types,
			 const double *prob, size_t n);

/*
 * Dynamic MIG (off by default).  When on and a MIG request for profile P
 * does not fit a node's free instances, the placer may repartition the
 * node's idle MIG GPUs (nothing of them taken) whose model has P, lowest
 * GPU index first and only as many as the pod needs, each to the layout
 * with as many P instances as fit (carve_mig_layout_from_counts of
 * {P: carve_mig_fit_count(model, empty, P)}).  The placer keeps its own
 * per-GPU layouts (the cluster is not changed).  A repartition belongs to
 * the pod that caused it: when a release leaves the GPU idle again (a
 * failed gang undone, a placement given back), the GPU returns to its
 * previous layout and the entry leaves the log, so the log always holds
 * exactly the repartitions the current placements stand on, at most one
 * per GPU, in the order they were decided.  Returns 0 or CARVE_EINVAL
 * (no placer).  Switching it off keeps the layouts already chosen.
 */
int carve_placer_set_mig_dynamic(struct carve_placer *p, bool on);

/*
 * Mixed Dynamic MIG layouts: the MIG profiles pending work asks for, with
 * weights (e.g. pods x instances).  When set (n > 0), a repartition gives
 * an idle GPU the instances of the requested profile the pod still needs,
 * then as many of each wanted profile as still fit, heaviest first, then
 * the largest profiles that fit; without, as many instances of the
 * requested profile as fit.  Copied; n 0 clears.  Returns 0, CARVE_EINVAL
 * (no placer, NULL arrays or names; nothing changed) or CARVE_ENOMEM (the
 * list is then empty).
 */
int carve_placer_set_mig_wants(struct carve_placer *p, const char *const *profiles,
			       const double *weights, size_t n);

/* One repartition: cluster-wide GPU id, layout before and after. */
struct carve_repartition {
	uint32_t gpu;
	struct carve_mig_layout from, to;
};

/*
 * The repartition log (see carve_placer_set_mig_dynamic): *out points at
 * the entries, oldest first, valid until the next place or release call.
 * Returns how many; *out (when out is not NULL) is always set.
 */
size_t carve_placer_repartitions(const struct carve_placer *p,
				 const struct carve_repartition **out);

/* Current MIG layout of GPU gpu as the placer sees it (NULL when gpu is not
 * a MIG GPU with a known model); carve_dev.mig indexes its instances.
 * Valid until the next place or release call. */
const struct carve_mig_layout *carve_placer_mig_layout(const struct carve_placer *p,
							uint32_t gpu);

/*
 * Places every pod of every group, all or nothing.  out receives one
 * carve_pod_place per pod, group by group (room for the sum of counts).
 * topo may be NULL.  Returns 0 (placed and committed), CARVE_ENOFIT (nothing
 * changed), CARVE_EINVAL (a malformed request), CARVE_ENOMEM.
 */
int carve_placer_place(struct carve_placer *p, const struct carve_pod_group *groups,
		       size_t ngroups, const struct carve_topology *topo,
		       struct carve_pod_place *out);

/* Gives back what placements took (they must come from this placer). */
void carve_placer_release(struct carve_placer *p, const struct carve_pod_place *pl, size_t n);

/*
 * Takes again exactly what n placements took after carve_placer_release
 * gave them back (a what-if release undone), in order, all or nothing.
 * Returns 0, or CARVE_EINVAL when a placement is malformed or a device it
 * names is no longer free (nothing changed then).  Not for placements on
 * GPUs a Dynamic MIG repartition was undone on by the release: their
 * instance indexes name the old layout.
 */
int carve_placer_retake(struct carve_placer *p, const struct carve_pod_place *pl, size_t n);

/* Whether Dynamic MIG is on (carve_placer_set_mig_dynamic); false for NULL. */
bool carve_placer_is_mig_dynamic(const struct carve_placer *p);

/* Free state views, for reports and tests.  free_cpu is INT64_MAX on a node
 * whose allocatable cpu is 0 (unknown: not constrained).  gpu_free_milli is
 * 0..1000 in every sharing mode (time-slice and MIG: the share of replicas or
 * instance memory slices still free); gpu_free_units counts carve_gpu_units()
 * still free (a fractional GPU: 1 only when nothing of it is taken). */
int64_t carve_placer_free_cpu(const struct carve_placer *p, uint32_t node);
int carve_placer_gpu_free_milli(const struct carve_placer *p, uint32_t gpu);
int carve_placer_gpu_free_units(const struct carve_placer *p, uint32_t gpu);
/* Free milli of a node: carve_placer_gpu_free_milli summed over its GPUs
 * (0 for a NULL placer or a node out of range). */
int64_t carve_placer_node_gpu_free_milli(const struct carve_placer *p, uint32_t node);

/*
 * Checks every invariant (no device over-allocated, MIG instances within
 * their current legal layout, the repartition log consistent with it, free counters equal to capacity minus what is held,
 * cpu/memory/pods not negative).  Returns 0, or CARVE_EINVAL with err
 * naming the first broken one.  For tests and debug builds.
 */
int carve_placer_check(const struct carve_placer *p, struct carve_error *err);

#endif
