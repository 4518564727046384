/*
 * admit.h - the admission engine: team quotas (ClusterQueues in cohorts,
 * with borrowing and lending limits), flavor assignment, priority and
 * reclaim preemption, gang and partial admission, one Kueue-style cycle at
 * a time.
 *
 * Drivers (the CLI, the simulator, the daemon, the Kubernetes scheduler)
 * describe flavors, cohorts, ClusterQueues and workloads with the plain
 * *_spec structs below, then call carve_adm_cycle() with the time; the
 * engine never reads a clock and never does I/O.  Same inputs in the same
 * order give the same decisions.
 *
 * Lifecycle: create -> add flavors, cohorts, ClusterQueues (any order) ->
 * carve_adm_finalize() -> [carve_adm_set_placer()] -> add workloads (any
 * time) -> cycles.  Specs are
 * borrowed for the call and copied.  Quantities are int64 milli-units
 * (carve/quantity.h).  Workloads and queues are addressed by dense ids.
 * Views returned by carve_adm_status() stay valid until the next mutating
 * call on the engine.
 *
 * Semantics follow Kueue (kueue.x-k8s.io v1beta2, with v1beta1's spellings
 * mapped by the loaders); docs/admission.md says where carve differs.
 */
#ifndef CARVE_ADMIT_H
#define CARVE_ADMIT_H

#include "carve/cluster.h"

/* ---- queue policies (Kueue's field values) ---- */

enum carve_qstrategy { CARVE_BEST_EFFORT_FIFO = 0, CARVE_STRICT_FIFO };
enum carve_within_cq { CARVE_WCQ_NEVER = 0, CARVE_WCQ_LOWER, CARVE_WCQ_LOWER_OR_NEWER_EQUAL };
enum carve_reclaim { CARVE_RECLAIM_NEVER = 0, CARVE_RECLAIM_LOWER, CARVE_RECLAIM_ANY };
enum carve_bwc { CARVE_BWC_NEVER = 0, CARVE_BWC_LOWER };
enum carve_fungibility { CARVE_FUNG_MAY_STOP = 0, CARVE_FUNG_TRY_NEXT };
enum carve_stop_policy { CARVE_STOP_NONE = 0, CARVE_STOP_HOLD, CARVE_STOP_HOLD_AND_DRAIN };

/* ---- specs ---- */

struct carve_toleration_spec {
	const char *key, *op, *value, *effect; /* op "Equal" or "Exists"; NULLs are wildcards */
};

struct carve_flavor_spec {
	const char *name;
	size_t nlabels;
	const struct carve_label *labels;        /* nodeLabels */
	size_t ntaints;
	const struct carve_taint_spec *taints;   /* nodeTaints */
	size_t ntolerations;
	const struct carve_toleration_spec *tolerations;
	/* Topology levels of its nodes (a Kueue Topology named by the
	 * flavor's topologyName): node label keys, widest first; ntopology
	 * 0: the default levels (carve_topology_levels).  Copied. */
	size_t ntopology;
	const char *const *topology;
};

/* Quota of one flavor for one resource. */
struct carve_fquota {
	bool present;                 /* false: the flavor lists no quota for it (0) */
	int64_t nominal;
	int64_t borrowing_limit;      /* valid when has_borrowing_limit */
	int64_t lending_limit;        /* valid when has_lending_limit */
	bool has_borrowing_limit, has_lending_limit;
};

/* A resource group: covered resources x flavors in preference order.
 * quota is row-major: quota[f * nres + r]. */
struct carve_rgroup_spec {
	size_t nres;
	const char *const *resources;
	size_t nflavors;
	const char *const *flavors;
	const struct carve_fquota *quota;
};

struct carve_cq_spec {
	const char *name;
	const char *cohort;           /* NULL: standalone */
	enum carve_qstrategy strategy;
	enum carve_stop_policy stop;
	size_t ngroups;
	const struct carve_rgroup_spec *groups;
	enum carve_within_cq within_cq;
	enum carve_reclaim reclaim;
	enum carve_bwc bwc;
	int32_t bwc_max_priority;     /* valid when has_bwc_threshold */
	bool has_bwc_threshold;
	enum carve_fungibility when_can_borrow, when_can_preempt;
	bool preempt_over_borrow;     /* flavorFungibility.preference: PreemptionOverBorrowing */
	int64_t fair_weight_milli;    /* 1000 = weight 1; 0 = the default (1);
				       * CARVE_FAIR_WEIGHT_ZERO = weight 0 */
	bool not_reclaimable;         /* its workloads are never reclaim victims of
				       * other queues (Volcano reclaimable: false) */
};

/* fair_weight_milli of a queue or cohort whose fairSharing.weight is 0
 * (0 itself means "not set": weight 1). */
#define CARVE_FAIR_WEIGHT_ZERO (-1)

/* A Cohort object: its parent and its own (shared) quota.  Cohorts named by
 * a ClusterQueue but never added exist implicitly, with no quota. */
struct carve_cohort_spec {
	const char *name;
	const char *parent;
	size_t ngroups;
	const struct carve_rgroup_spec *groups;
	int64_t fair_weight_milli;
};

struct carve_match_expr {
	const char *key;
	const char *op;               /* In, NotIn, Exists, DoesNotExist, Gt, Lt */
	size_t nvalues;
	const char *const *values;
};

struct carve_match_term {
	size_t n;
	const struct carve_match_expr *exprs;
};

struct carve_req {
	const char *name;             /* resource name */
	int64_t milli;                /* per pod */
};

struct carve_podset_spec {
	const char *name;
	int32_t count;
	int32_t min_count;            /* partial admission floor; == count when none */
	size_t nreqs;
	const struct carve_req *reqs; /* effective per-pod requests */
	size_t nselector;
	const struct carve_label *selector;     /* nodeSelector */
	size_t nterms;
	const struct carve_match_term *terms;   /* required node affinity (OR) */
	size_t ntolerations;
	const struct carve_toleration_spec *tolerations;
	/* Fractional GPU per pod (KAI-style "gpu-fraction" / "gpu-memory"
	 * annotations), used only for placement: 1..999 milli of one GPU
	 * and/or GPU memory in MiB; 0 = none. */
	int32_t gpu_milli;
	uint32_t gpu_mem_mib;
	/* Kueue TAS ("kueue.x-k8s.io/podset-required-topology" or
	 * "-preferred-topology"): the node label key of the topology level
	 * the workload's pods must (required) or should stay within one value
	 * of; NULL = none.  It must be a level of the assigned flavor's
	 * topology (carve_flavor_spec.topology, or carve_topology_levels);
	 * placing on a flavor without that level is a NoFit.  Used only for
	 * placement; copied. */
	const char *topology_level;
	bool topology_required;
};

/* Topology levels placement knows, widest first (Kueue TAS defaults):
 * "cloud.provider.com/topology-block", "cloud.provider.com/topology-rack",
 * "kubernetes.io/hostname". */
#define CARVE_TOPOLOGY_NLEVELS 3
extern const char *const carve_topology_levels[CARVE_TOPOLOGY_NLEVELS];
/* Index of key in carve_topology_levels, or -1. */
int carve_topology_level(const char *key);

/* An existing admission of one podSet: count and resource -> flavor. */
struct carve_ps_admission {
	const char *podset;
	int32_t count;
	size_t n;
	const struct carve_label *flavors; /* key: resource, value: flavor */
};

struct carve_wl_spec {
	const char *key;              /* "namespace/name", unique */
	const char *cq;               /* ClusterQueue (resolved from its LocalQueue) */
	int32_t priority;
	int64_t created;              /* creation time, seconds */
	bool has_created;             /* false: older than any workload with one */
	size_t npodsets;
	const struct carve_podset_spec *podsets;
	/* Already admitted (holds quota): */
	bool admitted;
	int64_t admitted_at;          /* QuotaReserved time; valid when has_admitted_at */
	bool has_admitted_at;
	size_t nadmission;
	const struct carve_ps_admission *admission;
	/* Admitted only, with a placer: the placements its pods already hold
	 * (a scheduler restarted from the pods bound on a cluster), podSet by
	 * podSet in pod order, one per admitted pod (nplaces == the sum of the
	 * admitted counts); an entry whose node is CARVE_PLACE_NONE is a pod
	 * not placed yet.  The placed ones are taken exactly
	 * (carve_placer_retake: all or nothing), then the rest are placed as a
	 * gang around them; when either fails the workload stays admitted
	 * without a placement and its message says why.  nplaces 0: the
	 * engine places the whole workload (as before).  Copied. */
	size_t nplaces;
	const struct carve_pod_place *places;
};

/* carve_pod_place.node of a pod not placed yet (carve_wl_spec.places). */
#define CARVE_PLACE_NONE UINT32_MAX

/* ---- results ---- */

enum carve_wl_state {
	CARVE_WL_PENDING = 0,
	CARVE_WL_ADMITTED,            /* holds quota */
	CARVE_WL_FINISHED             /* removed by the driver */
};

enum carve_pending_reason {
	CARVE_PEND_NONE = 0,
	CARVE_PEND_NOFIT,             /* not admitted, nothing preempted for it */
	CARVE_PEND_PREEMPTION_ISSUED, /* victims marked; waits for them */
	CARVE_PEND_SKIPPED            /* fitted at cycle start, capacity taken in the cycle */
};

enum carve_preempt_reason {
	CARVE_PREEMPT_NONE = 0,
	CARVE_PREEMPT_IN_CQ,          /* InClusterQueue */
	CARVE_PREEMPT_RECLAIM,        /* InCohortReclamation */
	CARVE_PREEMPT_RECLAIM_WHILE_BORROWING, /* InCohortReclaimWhileBorrowing */
	CARVE_PREEMPT_FAIR_SHARING    /* InCohortFairSharing */
};

/* "NoFit", "PreemptionIssued", "SkippedInCycle"; "" for NONE. */
const char *carve_pending_reason_name(enum carve_pending_reason r);
/* "InClusterQueue", "InCohortReclamation", ...; "" for NONE. */
const char *carve_preempt_reason_name(enum carve_preempt_reason r);

struct carve_pod_place;

struct carve_ps_result {
	const char *name;
	int32_t count;
	size_t n;
	const char *const *resources; /* n resource names ... */
	const char *const *flavors;   /* ... and the flavor each got */
	const int64_t *usage;         /* ... and what the podSet charges of it:
				       * per-pod request x count, milli */
	/* With a placer (carve_adm_set_placer): npods == count places, one per
	 * pod, in the placer's cluster; 0 without a placer, or for a workload
	 * given as admitted that could not be placed. */
	size_t npods;
	const struct carve_pod_place *pods;
};

struct carve_wl_status {
	const char *key;
	const char *cq;
	enum carve_wl_state state;
	bool admitted_by_engine;      /* admitted in a cycle (not given as admitted) */
	bool borrowing;               /* its admission borrows from the cohort */
	bool marked;                  /* marked for preemption (still holds quota) */
	bool evicted;                 /* was preempted and released its quota */
	uint32_t preemptor;           /* valid when marked or evicted */
	enum carve_preempt_reason preempt_reason;
	enum carve_pending_reason pending_reason;
	const char *message;          /* why it is pending, for people */
	size_t npodsets;
	const struct carve_ps_result *podsets; /* when admitted */
	int cycle;                    /* cycle of the last decision, 0 = none */
};

struct carve_adm;

/* New engine; NULL on allocation failure. */
struct carve_adm *carve_adm_create(void);
void carve_adm_destroy(struct carve_adm *a);

/*
 * Add objects before carve_adm_finalize().  Each returns 0, CARVE_EEXISTS
 * (same name twice), CARVE_EINVAL (err says why: negative quota, a flavor
 * listed twice, a resource in two groups ...), CARVE_EFULL (more than
 * CARVE_RES_MAX distinct resources), CARVE_ENOMEM.
 */
int carve_adm_add_flavor(struct carve_adm *a, const struct carve_flavor_spec *s,
			 struct carve_error *err);
int carve_adm_add_cohort(struct carve_adm *a, const struct carve_cohort_spec *s,
			 struct carve_error *err);
int carve_adm_add_cq(struct carve_adm *a, const struct carve_cq_spec *s, struct carve_error *err);

/*
 * Builds the quota tree.  Returns 0, CARVE_EINVAL (a cohort cycle; a
 * ClusterQueue naming an unknown flavor), CARVE_ENOMEM.  After it, no more
 * flavors, cohorts or ClusterQueues.
 */
int carve_adm_finalize(struct carve_adm *a, struct carve_error *err);

/*
 * Placement, atomic with admission (docs/admission.md, "Placement").  With
 * a placer set, a workload is admitted only when every pod of every podSet
 * (at its admitted count) gets a node and exact devices from p as one gang
 * (carve_placer_place); a workload whose quota fits but whose gang cannot
 * be placed stays pending NoFit and holds neither quota nor devices.  Pod
 * requests come from the podSet: cpu, memory, "nvidia.com/mig-<profile>"
 * (CARVE_GREQ_MIG), "nvidia.com/gpu.shared" (CARVE_GREQ_REPLICA),
 * "nvidia.com/gpu" (CARVE_GREQ_GPU: whole GPUs, or replicas on time-sliced
 * nodes) and gpu_milli / gpu_mem_mib (CARVE_GREQ_FRACTION); node
 * constraints are the podSet's selector, affinity and tolerations plus the
 * nodeLabels (as a selector) and tolerations of the flavors it was
 * assigned.  Placements are released when a workload is evicted or
 * finished.  A workload given as admitted is placed when added; when that
 * fails it stays admitted (quota only) with no pods, and its message says
 * so.  Preemption stays quota-based.
 *
 * p and c are borrowed: c must be the placer's cluster, and both must
 * outlive the engine.  Call after carve_adm_finalize() and before any
 * workload is added.  Returns 0, or CARVE_EINVAL (not finalized, workloads
 * already added, a NULL argument).
 */
struct carve_placer;
int carve_adm_set_placer(struct carve_adm *a, struct carve_placer *p, const struct carve_cluster *c);

/*
 * Adds a workload; returns its id (>= 0), or CARVE_ENOTFOUND (unknown
 * ClusterQueue), CARVE_EINVAL (no podSets, bad counts, an admission that
 * names an unknown flavor or podSet), CARVE_ERANGE (its request does not
 * fit in int64 milli-units: a podSet's count x per-pod request, or the sum
 * over its podSets per resource; or, given as admitted, its charge would
 * take the usage of its ClusterQueue or a cohort above it past INT64_MAX;
 * err names the workload, podSet or (flavor, resource)), CARVE_EEXISTS,
 * CARVE_ENOMEM.  An admitted workload's usage is charged at once.
 */
int carve_adm_add_workload(struct carve_adm *a, const struct carve_wl_spec *s,
			   struct carve_error *err);

/* Removes a workload (it finished or was deleted), releasing its quota.
 * Returns 0 or CARVE_ENOTFOUND. */
int carve_adm_finish(struct carve_adm *a, uint32_t wl);

/*
 * Runs one scheduling cycle at time now (seconds).  Returns the number of
 * decisions taken (admissions + preemptions marked), or CARVE_ENOMEM.
 * Workloads marked in this cycle keep their quota until
 * carve_adm_evict_marked().
 */
int carve_adm_cycle(struct carve_adm *a, int64_t now);

/* How many queue heads the last cycle set aside (BestEffortFIFO): a cycle
 * that decided nothing and set none aside would be repeated exactly by
 * the next (carve_adm_run's stop condition, for callers that cycle
 * without evicting). */
int carve_adm_last_set_aside(const struct carve_adm *a);

/* Releases the quota of every marked workload and puts it back in its
 * queue, ordered by the time of the last cycle (Kueue's default
 * requeuing timestamp, Eviction).  Returns how many. */
int carve_adm_evict_marked(struct carve_adm *a);

/*
 * Runs cycles until one takes no decision and sets no BestEffortFIFO head
 * aside (so the next would be the same), or max_cycles have run, evicting
 * marked workloads between cycles.  Returns the number of cycles run.
 */
int carve_adm_run(struct carve_adm *a, int64_t now, int max_cycles);

/*
 * Fair sharing (off by default, like Kueue's): heads of one cohort tree
 * are ordered by Kueue's tournament of weighted dominant resource shares
 * down the tree, and victims are chosen by its fair-sharing preemption
 * (within nominal: InCohortReclamation; else the strategies:
 * InCohortFairSharing), whole workloads only, so no gang is ever cut
 * below its minimum; borrowWithinCohort plays no part.  See
 * docs/admission.md, "Fair sharing".
 */
void carve_adm_set_fair_sharing(struct carve_adm *a, bool on);
bool carve_adm_fair_sharing(const struct carve_adm *a);

/* Kueue's fairSharing.preemptionStrategies (config.kueue.x-k8s.io). */
enum carve_fs_strategy {
	CARVE_FS_LE_FINAL_SHARE,   /* LessThanOrEqualToFinalShare (rule S2-a) */
	CARVE_FS_LT_INITIAL_SHARE, /* LessThanInitialShare (rule S2-b) */
};

/*
 * The fair-sharing preemption strategies, in order: one or two, a second
 * one only LessThanInitialShare after LessThanOrEqualToFinalShare (the
 * combinations Kueue's configuration validation accepts).  The default
 * is both, in that order.  Returns 0, or CARVE_EINVAL (nothing changed).
 */
int carve_adm_set_fair_strategies(struct carve_adm *a, const enum carve_fs_strategy *s, size_t n);

/* Kueue feature gates the fair-sharing rules follow; both on by default,
 * as in Kueue (pkg/features/kube_features.go). */
enum carve_fair_gate {
	CARVE_GATE_PREEMPT_WITHIN_NOMINAL,    /* FairSharingPreemptWithinNominal */
	CARVE_GATE_PRIORITIZE_NON_BORROWING,  /* FairSharingPrioritizeNonBorrowing */
};
void carve_adm_set_fair_gate(struct carve_adm *a, enum carve_fair_gate g, bool on);

size_t carve_adm_workload_count(const struct carve_adm *a);
/* Id of a workload by key, or CARVE_ENOTFOUND. */
int carve_adm_find_workload(const struct carve_adm *a, const char *key);
/* Status view of workload id (NULL for a bad id). */
const struct carve_wl_status *carve_adm_status(const struct carve_adm *a, uint32_t wl);

/*
 * Quota usage of ClusterQueue cq for (flavor, resource), in milli-units:
 * the sum over its admitted (and marked) workloads of count x per-pod
 * request.  0 for a pair the queue's tree does not list; CARVE_ENOTFOUND
 * for an unknown queue.  Outside a cycle only (heads waiting for
 * preemption hold usage during one).  For reports and tests.
 */
int64_t carve_adm_cq_usage(const struct carve_adm *a, const char *cq, const char *flavor,
			   const char *resource);

/*
 * Checks every invariant of the engine (docs/admission.md, "Checking the
 * engine"): each ClusterQueue's and Cohort's quota usage per (flavor,
 * resource) equals what its admitted and marked workloads charge (each
 * charge recomputed from the admission), rolled up through the cohort
 * tree beyond each child's guaranteed quota; every admitted workload is in
 * its queue's admitted list once, with a victim record that matches it;
 * every pending one is in its queue's pending heap (or set-aside list)
 * exactly once and no admitted one is; heap order holds; only admitted
 * workloads are marked, each on the marked list; the by-key and by-name
 * maps find every workload, queue and message under its own id.  Call it
 * between cycles (not from inside one); it changes nothing.
 *
 * Returns 0 when all hold (and before carve_adm_finalize(), when there is
 * nothing to check), CARVE_EINVAL with err naming the first broken one,
 * or CARVE_ENOMEM.  For tests and debug builds: it looks at every
 * workload.
 */
int carve_adm_check(const struct carve_adm *a, struct carve_error *err);

#endif
