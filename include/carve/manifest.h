/*
 * manifest.h - the manifests a platform team already has, loaded into plain
 * structs: Kubernetes Nodes and carve NodePools, Kueue objects, Volcano and
 * KAI queues, Pods/Jobs (for linting), NVIDIA device-plugin and mig-parted
 * configs, and openb node CSVs.
 *
 * Ownership: a struct carve_manifests owns everything it holds (one arena);
 * every string and array below lives until carve_manifests_destroy().  Every
 * object and every field that a check may complain about carries its
 * struct carve_pos.  Loading never stops at the first problem: each bad
 * document or field is reported in `diags` and skipped, and everything else
 * is kept.  These are specs, not the engine's model: the inventory and the
 * quota model are built from them (inventory.h), so the same model can also
 * come from HTTP, SQLite or a trace.
 */
#ifndef CARVE_MANIFEST_H
#define CARVE_MANIFEST_H

#include <jansson.h>

#include "carve/admit.h"
#include "carve/cluster.h"
#include "carve/diag.h"

/* Most GPUs on one node, from every node source (NodePool gpu.count, a
 * Node's nvidia.com/gpu, an openb node list) and in the fill experiment;
 * past it: "<n> GPUs per node is more than 64" (docs/limits.md). */
#define CARVE_NODE_MAX_GPUS 64

/* ---- shared small shapes ---- */

struct carve_kv {
	const char *key, *value;
	struct carve_pos pos; /* of the key */
};

struct carve_kvlist {
	size_t n;
	struct carve_kv *v;
};

/* One resource quantity: "nvidia.com/gpu: 4". */
struct carve_resq {
	const char *name;
	int64_t milli;
	struct carve_pos pos; /* of the name */
};

struct carve_reslist {
	size_t n;
	struct carve_resq *v;
};

struct carve_taint {
	const char *key, *value, *effect; /* value may be NULL */
	struct carve_pos pos;
};

struct carve_toleration {
	const char *key, *op, *value, *effect; /* op: "Equal" (default) | "Exists" */
	struct carve_pos pos;
};

/* A required node-affinity match expression: key In/NotIn/Exists/... values. */
struct carve_nodeexpr {
	const char *key, *op;
	size_t nvalues;
	const char **values;
	struct carve_pos pos;
};

/* One nodeSelectorTerm: every expression must hold (terms are OR-ed). */
struct carve_nodeterm {
	size_t n;
	struct carve_nodeexpr *v;
};

struct carve_meta {
	const char *api_version; /* "kueue.x-k8s.io/v1beta2" */
	const char *kind;        /* "ClusterQueue" */
	const char *name;        /* never NULL once loaded */
	bool generated;          /* Pod/Job with generateName only: name is "<generateName>*" */
	const char *ns;          /* NULL for cluster-scoped objects */
	struct carve_kvlist labels, annotations;
	int64_t created;         /* creationTimestamp, seconds since the epoch */
	bool has_created;
	struct carve_pos pos;     /* start of the document */
	struct carve_pos name_pos;
};

/* ---- pods (Pod, Job template, Workload podSet template) ---- */

struct carve_container {
	const char *name;
	struct carve_reslist requests, limits;
	struct carve_pos pos;
	struct carve_pos resources_pos; /* "resources:" or the container when absent */
};

struct carve_podspec {
	struct carve_kvlist labels, annotations; /* template metadata */
	size_t ncontainers, ninit;
	struct carve_container *containers, *init;
	struct carve_reslist requests;   /* effective pod request, as Kubernetes sums it */
	struct carve_reslist limits;     /* effective pod limits */
	struct carve_kvlist node_selector;
	size_t nterms;                   /* required node affinity, OR of terms */
	struct carve_nodeterm *terms;
	size_t ntolerations;
	struct carve_toleration *tolerations;
	const char *scheduler_name;
	const char *priority_class;
	struct carve_pos pos;            /* of the pod spec */
};

/* ---- nodes ---- */

struct carve_mf_node {
	struct carve_meta meta;
	size_t ntaints;
	struct carve_taint *taints;
	struct carve_reslist capacity, allocatable;
	bool unschedulable;
};

/* MIG instance counts per GPU, mig-parted style: {"3g.40gb": 2}. */
struct carve_migcount {
	const char *profile;
	int count;
	struct carve_pos pos;
};

/* One explicitly placed MIG instance: profile at a start memory slice. */
struct carve_migplace {
	const char *profile;
	int start;
	struct carve_pos pos, start_pos;
};

struct carve_mf_timeslice {
	int replicas; /* >= 1 once validated; 0 = not set */
	bool rename_by_default, fail_requests_gt_one;
	struct carve_pos replicas_pos;
};

/* carve.dev/v1alpha1 NodePool: count identical nodes. */
struct carve_mf_nodepool {
	struct carve_meta meta;
	int count;
	const char *name_prefix;    /* default: "<pool name>-" */
	const char *gpu_model;      /* canonical or GFD product name */
	int gpus_per_node;
	int64_t gpu_memory_mib;     /* 0: from the model table */
	enum carve_sharing sharing;
	size_t nmig;                /* sharing == MIG: layout per GPU ... */
	struct carve_migcount *mig;
	const char *mig_config;     /* ... or a mig-parted config name ... */
	size_t nplace;              /* ... or explicit placements per GPU */
	struct carve_migplace *place;
	struct carve_mf_timeslice timeslice;
	int64_t cpu_milli, memory_milli, pods;
	struct carve_kvlist labels;
	size_t ntaints;
	struct carve_taint *taints;
	const char *block, *rack;   /* topology */
	struct carve_pos gpu_model_pos, sharing_pos, mig_pos, count_pos;
};

/* ---- Kueue ---- */

struct carve_mf_flavor {
	struct carve_meta meta;
	struct carve_kvlist node_labels;
	size_t ntaints, ntolerations;
	struct carve_taint *node_taints;
	struct carve_toleration *tolerations;
	const char *topology_name;       /* spec.topologyName; NULL: none */
	struct carve_pos topology_pos;
};

struct carve_mf_quota {
	const char *resource;
	int64_t nominal, borrowing_limit, lending_limit; /* milli */
	bool has_borrowing_limit, has_lending_limit;
	struct carve_pos pos, nominal_pos, borrowing_pos, lending_pos;
};

struct carve_mf_flavorquotas {
	const char *flavor;
	struct carve_pos pos;
	bool incomplete; /* some resource entries were dropped (errors reported) */
	size_t n;
	struct carve_mf_quota *v;
};

struct carve_mf_rgroup {
	size_t ncovered;
	const char **covered;
	struct carve_pos *covered_pos;
	size_t nflavors;
	struct carve_mf_flavorquotas *flavors;
	struct carve_pos pos;
};

/* enum carve_qstrategy, carve_within_cq, carve_reclaim, carve_bwc,
 * carve_fungibility, carve_stop_policy: see carve/admit.h. */

struct carve_mf_cq {
	struct carve_meta meta;
	const char *cohort; /* spec.cohortName (v1beta2) or spec.cohort (v1beta1) */
	struct carve_pos cohort_pos;
	enum carve_qstrategy strategy;
	enum carve_stop_policy stop_policy;
	size_t ngroups;
	struct carve_mf_rgroup *groups;
	enum carve_within_cq within_cq;
	enum carve_reclaim reclaim;
	enum carve_bwc bwc;
	int32_t bwc_max_priority; /* when has_bwc_threshold */
	bool has_bwc_threshold;
	enum carve_fungibility when_can_borrow, when_can_preempt;
	bool preempt_over_borrow; /* preference: PreemptionOverBorrowing */
	int64_t fair_weight_milli; /* default 1000 */
	bool has_namespace_selector;
};

struct carve_mf_cohort {
	struct carve_meta meta;
	const char *parent;
	struct carve_pos parent_pos;
	size_t ngroups;
	struct carve_mf_rgroup *groups;
	int64_t fair_weight_milli;
};

struct carve_mf_localqueue {
	struct carve_meta meta;
	const char *cluster_queue;
	struct carve_pos cq_pos;
};

struct carve_mf_priorityclass {
	struct carve_meta meta;
	int32_t value;
	const char *description;
};

struct carve_mf_podset {
	const char *name;
	int32_t count;
	int32_t min_count; /* valid when has_min_count */
	bool has_min_count;
	struct carve_podspec spec;
	struct carve_pos pos, count_pos;
};

struct carve_mf_psassign {
	const char *name;
	int32_t count;
	struct carve_kvlist flavors; /* resource -> flavor */
	struct carve_pos pos;
};

struct carve_mf_workload {
	struct carve_meta meta;
	const char *queue_name;
	const char *priority_class;
	int32_t priority;
	bool has_priority;
	bool active; /* spec.active, default true */
	size_t npodsets;
	struct carve_mf_podset *podsets;
	/* status.admission: set when already admitted */
	const char *admitted_cq;
	size_t nassign;
	struct carve_mf_psassign *assign;
	/* status.conditions[type=QuotaReserved, status=True].lastTransitionTime */
	int64_t quota_reserved_at;
	bool has_quota_reserved_at;
	struct carve_pos queue_pos, admission_pos;
};

/* ---- Volcano, KAI ---- */

struct carve_mf_vcqueue {
	struct carve_meta meta;
	int32_t weight;
	struct carve_reslist capability, deserved, guarantee;
	bool reclaimable; /* default true */
	const char *parent;
	int32_t priority;
	const char *state; /* status.state ("Open", "Closed", ...); NULL if absent */
	struct carve_pos parent_pos;
};

struct carve_mf_podgroup {
	struct carve_meta meta;
	int32_t min_member;
	const char *queue;
	const char *priority_class;
	struct carve_reslist min_resources;
	const char *phase; /* Volcano status.phase ("Running", ...); NULL if absent or KAI */
	struct carve_pos queue_pos;
};

struct carve_mf_kaires {
	double quota, over_quota_weight, limit; /* -1 = unlimited */
	bool has_quota, has_limit;
	struct carve_pos pos;
};

struct carve_mf_kaiqueue {
	struct carve_meta meta;
	const char *parent;
	int32_t priority;
	struct carve_mf_kaires gpu, cpu, memory;
	struct carve_pos parent_pos;
};

/* ---- Pods and Jobs (templates, for linting) ---- */

struct carve_mf_pod {
	struct carve_meta meta;
	struct carve_podspec spec;
	/* What a pod read from the API server carries beyond its spec (all
	 * NULL / 0 for a pod written in a file without them): */
	const char *uid;              /* metadata.uid */
	const char *node_name;        /* spec.nodeName: bound (by anyone) */
	const char *phase;            /* status.phase ("Pending", "Running" ...) */
	const char *nominated_node;   /* status.nominatedNodeName */
	size_t ngates;                /* spec.schedulingGates entries */
	bool deleting;                /* metadata.deletionTimestamp is set */
	int64_t grace_seconds;        /* spec.terminationGracePeriodSeconds (30) */
};

struct carve_mf_job {
	struct carve_meta meta;
	int32_t parallelism, completions; /* default 1 */
	struct carve_podspec spec;         /* spec.template */
	struct carve_pos parallelism_pos;
};

/* A JobSet (jobset.x-k8s.io/v1alpha2): one Job template per replicatedJob. */
struct carve_mf_rjob {
	const char *name;
	int32_t replicas;                  /* default 1 */
	int32_t parallelism, completions;  /* of its Job template, defaulted as a Job's */
	struct carve_podspec spec;
	struct carve_pos pos;
};

struct carve_mf_jobset {
	struct carve_meta meta;
	size_t n;
	struct carve_mf_rjob *v;
};

/* A Volcano Job (batch.volcano.sh/v1alpha1): tasks of pods in a Volcano Queue. */
struct carve_mf_vctask {
	const char *name;
	int32_t replicas;
	int32_t min_available;             /* valid when has_min_available */
	bool has_min_available;
	struct carve_podspec spec;
	struct carve_pos pos;
};

struct carve_mf_vcjob {
	struct carve_meta meta;
	const char *queue;                 /* spec.queue, default "default" */
	const char *priority_class;        /* spec.priorityClassName */
	int32_t min_available;             /* valid when has_min_available */
	bool has_min_available;
	size_t ntasks;
	struct carve_mf_vctask *tasks;
	struct carve_pos queue_pos;
};

/* ---- NVIDIA device plugin and mig-parted ---- */

struct carve_mf_tsresource {
	const char *name;   /* nvidia.com/gpu or nvidia.com/mig-1g.10gb */
	const char *rename; /* NULL unless set */
	int replicas;
	struct carve_pos pos, replicas_pos;
};

struct carve_mf_dpconfig {
	const char *name; /* ConfigMap data key, or the file's base name */
	const char *mig_strategy; /* flags.migStrategy: none|single|mixed, NULL if unset */
	bool rename_by_default, fail_requests_gt_one;
	bool mps;                       /* the replicas are sharing.mps's: each share
					 * gets 1/replicas of the GPU's memory and compute */
	size_t nts;
	struct carve_mf_tsresource *ts; /* sharing.timeSlicing.resources, or sharing.mps's */
	struct carve_pos pos;
};

struct carve_mf_migdevice {
	bool all_devices;   /* devices: all */
	size_t ndevices;
	int *devices;       /* devices: [0, 1] */
	size_t nfilters;
	const char **device_filter; /* PCI ids, "0x20B210DE" */
	bool mig_enabled;
	size_t ncounts;
	struct carve_migcount *counts;
	struct carve_pos pos;
};

struct carve_mf_migconfig {
	const char *name; /* key under mig-configs */
	size_t n;
	struct carve_mf_migdevice *v;
	struct carve_pos pos;
};

/* ---- openb node CSV ---- */

struct carve_mf_csvnode {
	const char *name;
	int64_t cpu_milli, memory_mib;
	int gpus;
	const char *model; /* "" for CPU-only nodes */
	struct carve_pos pos;
};

/* A Kueue (kueue.x-k8s.io) or KAI Topology: node labels of its levels,
 * widest first, each at most once (1 to CARVE_MF_TOPO_MAX). */
#define CARVE_MF_TOPO_MAX 16
struct carve_mf_topology {
	struct carve_meta meta;
	size_t nlevels;
	const char **levels;
	struct carve_pos *level_pos;
};

/* A Kueue controller Configuration (config.kueue.x-k8s.io/v1beta1 or
 * v1beta2, kind Configuration): the fields carve honours
 * (docs/admission.md, "Fair sharing"); the others are accepted unread. */
enum carve_mf_fs_strategy {
	CARVE_MF_FS_LE_FINAL_SHARE,   /* LessThanOrEqualToFinalShare */
	CARVE_MF_FS_LT_INITIAL_SHARE, /* LessThanInitialShare */
};

struct carve_mf_kueue_config {
	struct carve_pos pos;         /* the document's kind */
	bool fair_sharing;            /* fair sharing enabled (fairSharing.enable in
				       * v1beta1; in v1beta2 a fairSharing section,
				       * unless its enable says otherwise) */
	size_t nstrategies;           /* fairSharing.preemptionStrategies; 0: not set
				       * (Kueue's default: both, in order) */
	enum carve_mf_fs_strategy strategies[2];
	struct carve_pos strategies_pos;
	/* featureGates carve models: -1 not set, else 0 or 1 */
	int8_t gate_preempt_within_nominal;   /* FairSharingPreemptWithinNominal */
	int8_t gate_prioritize_non_borrowing; /* FairSharingPrioritizeNonBorrowing */
};

/* ---- the set ---- */

#define CARVE_MF_ARRAY(type, name) \
	size_t n##name;            \
	size_t cap_##name;         \
	type *name

struct carve_manifests {
	struct carve_diags diags;
	CARVE_MF_ARRAY(struct carve_mf_node, nodes);
	CARVE_MF_ARRAY(struct carve_mf_nodepool, pools);
	CARVE_MF_ARRAY(struct carve_mf_csvnode, csvnodes);
	CARVE_MF_ARRAY(struct carve_mf_flavor, flavors);
	CARVE_MF_ARRAY(struct carve_mf_cq, cqs);
	CARVE_MF_ARRAY(struct carve_mf_cohort, cohorts);
	CARVE_MF_ARRAY(struct carve_mf_localqueue, lqs);
	CARVE_MF_ARRAY(struct carve_mf_priorityclass, wpcs);
	CARVE_MF_ARRAY(struct carve_mf_workload, workloads);
	CARVE_MF_ARRAY(struct carve_mf_vcqueue, vcqueues);
	CARVE_MF_ARRAY(struct carve_mf_podgroup, podgroups);
	CARVE_MF_ARRAY(struct carve_mf_kaiqueue, kaiqueues);
	CARVE_MF_ARRAY(struct carve_mf_pod, pods);
	CARVE_MF_ARRAY(struct carve_mf_job, jobs);
	CARVE_MF_ARRAY(struct carve_mf_jobset, jobsets);
	CARVE_MF_ARRAY(struct carve_mf_vcjob, vcjobs);
	CARVE_MF_ARRAY(struct carve_mf_dpconfig, dpconfigs);
	CARVE_MF_ARRAY(struct carve_mf_migconfig, migconfigs);
	CARVE_MF_ARRAY(struct carve_mf_topology, topologies);
	CARVE_MF_ARRAY(struct carve_mf_kueue_config, kueue_configs); /* at most one */
	size_t ndocs; /* documents seen, of any kind */
	/* Object names the API server would refuse (not DNS-1123): false (the
	 * default, carve validate): an error at the name and the object
	 * skipped; true (carve admit, carve simulate, set before loading): a
	 * warning and the object kept, so files written outside a cluster
	 * (Kueue's own test cases use names like "a_standard") still decide. */
	bool names_warn;
	struct carve_manifests_int *priv; /* arena, file names, raw buffers */
};

/* An empty set; NULL on allocation failure. */
struct carve_manifests *carve_manifests_create(void);
void carve_manifests_destroy(struct carve_manifests *m);

/*
 * Loads path: a YAML file (.yaml/.yml, any number of documents), a CSV node
 * list (.csv), or a directory (every .yaml/.yml/.csv regular file in it,
 * recursively, in name order, except workload traces named *.trace.csv,
 * *.trace.yaml, *.trace.yml (carve/jobs.h; skipped silently); a directory
 * reached again through a symlink and a FIFO or device are skipped with a
 * warning).  A file named directly loads by extension alone.  Problems go to
 * m->diags; what loaded cleanly is kept.
 * Returns 0 when the file(s) could be read (even with diagnostics), or
 * CARVE_EIO (reported in diags) / CARVE_ENOMEM.
 */
int carve_manifests_load_path(struct carve_manifests *m, const char *path);

/*
 * Loads YAML text already in memory; name is the display file name.  Same
 * rules as load_path.
 */
int carve_manifests_load_yaml(struct carve_manifests *m, const char *name,
			      const char *buf, size_t len);

/*
 * Adds one object as the API server returns it (an item of a list, a
 * watch event's object: a JSON object with apiVersion and kind) through
 * the same kind table and loaders as a YAML document, so what the
 * scheduler reads from a cluster is read exactly as `carve admit` reads
 * files.  source names the object in diagnostics ("Pod team-a/train-0");
 * their positions have line 0 and name the field in the message.
 * Returns 0 (added, or refused or skipped with a diagnostic) or
 * CARVE_ENOMEM.
 */
int carve_manifests_add_json(struct carve_manifests *m, const char *source, const json_t *obj);

/* Loads an openb node CSV (sn,cpu_milli,memory_mib,gpu,model) from memory. */
int carve_manifests_load_csv(struct carve_manifests *m, const char *name,
			     const char *buf, size_t len);

/* Lookups by name (namespace too for LocalQueue); NULL when absent. */
const struct carve_mf_flavor *carve_mf_find_flavor(const struct carve_manifests *m, const char *name);
/* The Topology of that name, or NULL (the first, when defined twice). */
const struct carve_mf_topology *carve_mf_find_topology(const struct carve_manifests *m,
							const char *name);
const struct carve_mf_cq *carve_mf_find_cq(const struct carve_manifests *m, const char *name);
const struct carve_mf_cohort *carve_mf_find_cohort(const struct carve_manifests *m, const char *name);
const struct carve_mf_localqueue *carve_mf_find_lq(const struct carve_manifests *m,
						   const char *ns, const char *name);
const struct carve_mf_dpconfig *carve_mf_find_dpconfig(const struct carve_manifests *m, const char *name);
const struct carve_mf_migconfig *carve_mf_find_migconfig(const struct carve_manifests *m, const char *name);

#endif
