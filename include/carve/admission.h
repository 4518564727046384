/*
 * admission.h - the bridge from loaded manifests (manifest.h) to the
 * admission engine (admit.h), and the engine's decisions back out as the
 * `carve admit` result (JSON, docs/admit-json.md, or a table for people).
 *
 * Ownership: a struct carve_admission owns its engine, its id map and, when
 * the input has nodes, the inventory and placer that make admission place
 * pods (admit.h, carve_adm_set_placer); it
 * borrows the manifest set it was built from (workload pointers, names,
 * positions), so the set must outlive it.  Problems found while building
 * (an unknown queue, a workload the engine refuses ...) go to m->diags at
 * the object's position; the object is skipped and everything else is
 * built, like the loaders do.
 */
#ifndef CARVE_ADMISSION_H
#define CARVE_ADMISSION_H

#include <stdio.h>

#include <jansson.h>

#include "carve/admit.h"
#include "carve/manifest.h"

struct carve_inventory;
struct carve_placer;

struct carve_job;
struct carve_arena;

struct carve_admission {
	struct carve_adm *adm;        /* the engine, owned */
	struct carve_manifests *m;    /* the set it was built from, borrowed */
	struct carve_arena *jobs;     /* owned: what carve_admission_job() made */
	bool *pg_queued;              /* owned, per m->podgroups[i]: Volcano queues it
				       * (its queue is a known leaf, it has requests) */
	bool finalized;               /* false: the quota tree failed (reported); no workloads */
	int64_t now;                  /* cycle time: the latest timestamp in the input, or 0 */
	int64_t job_epoch;            /* engine time of a trace's second 0 (0; the
				       * simulator with --workloads sets it to now) */
	size_t nwl;                   /* engine workload ids 0 .. nwl-1 are mapped */
	/* Engine workload id -> the manifest Workload or Volcano PodGroup it
	 * came from (borrowed from the set; a Workload made from a Job, JobSet,
	 * pod group or Volcano Job lives in `jobs`, its meta.kind saying
	 * which); for each id at most one of the two is set, neither for an id
	 * the bridge did not add. */
	const struct carve_mf_workload **wl;
	const struct carve_mf_podgroup **pg;
	/* With nodes in the input (NodePools, Nodes or openb CSV rows): the
	 * inventory built from them and a placer over its cluster, both owned,
	 * set on the engine; NULL without nodes (quota-only admission). */
	struct carve_inventory *inv;
	struct carve_placer *placer;
	bool mig_dynamic;             /* the placer may repartition idle MIG GPUs */
	/* The Workloads the build made from Jobs, JobSets, Kueue and KAI pods
	 * and Volcano Jobs (in `jobs`), in input order, each with the queue
	 * it names directly (KAI, Volcano: a queue of the engine; NULL: its
	 * LocalQueue): those queued, and with admitted_only or queues_only
	 * those that would be (added to no engine then).  Owned array. */
	struct carve_admission_derived {
		const struct carve_mf_workload *w;
		const char *cq;
		bool pc_only;         /* priority from a PriorityClass only (not Kueue's) */
	} *derived;
	size_t nderived;
};

/* Build options; a zeroed struct means the defaults. */
struct carve_admission_opts {
	const char *policy;           /* placement policy (place.h); NULL: "binpack" */
	uint64_t seed;                /* placer RNG seed; used when has_seed, else 42 */
	bool has_seed;
	bool mig_dynamic;             /* Dynamic MIG (place.h): the placer may
				       * repartition idle MIG GPUs; reported */
	bool no_workloads;            /* build queues, flavors, nodes and placer
				       * only: the manifests' Workloads and
				       * PodGroups are not added (the simulator,
				       * whose jobs come from a trace) */
	bool queues_only;             /* flavors, cohorts, ClusterQueues and Volcano/KAI
				       * queues only: no inventory, placer or
				       * workloads (carve validate's check of what
				       * the build refuses) */
	struct carve_diags *diags;    /* where problems go; NULL: m->diags */
	bool admitted_only;           /* add only the Workloads and PodGroups that
				       * are already admitted (a simulation that
				       * starts from the manifests' state; the
				       * pending ones become its jobs) */
	/* Place only (the scheduler's --queues none, plan.h): when not NULL,
	 * one more ResourceFlavor and one more ClusterQueue of this name,
	 * standalone, whose nominal quota of that flavor is
	 * CARVE_PLACE_ONLY_QUOTA for each of the nplace_only_res resources,
	 * so what is queued there is placed without a quota limit.  A name
	 * the input already uses is an error in the diagnostics (not added). */
	const char *place_only;
	size_t nplace_only_res;
	const char *const *place_only_res;
};

/* The nominal quota of a place-only queue per resource, milli-units: more
 * than any cluster holds, with room to add requests without overflow. */
#define CARVE_PLACE_ONLY_QUOTA (INT64_MAX / 4)

/*
 * Builds the engine from m: ResourceFlavors, Cohorts, ClusterQueues, then
 * every Workload (queue resolved spec.queueName -> LocalQueue in the
 * workload's namespace -> ClusterQueue, or status.admission.clusterQueue
 * when already admitted).  Inactive (spec.active: false) pending workloads
 * and pending workloads without a queueName are not queued (a warning for
 * the latter).  Volcano Queues and PodGroups, and KAI Queues, are mapped
 * onto the same model (docs/volcano-kai.md): each leaf queue becomes a
 * ClusterQueue of its name, each parent queue a Cohort, under the implicit
 * flavor "volcano" (or "kai") and root cohort "volcano-root" ("kai-root");
 * each Volcano PodGroup becomes a workload "namespace/name" with one podSet
 * "pods".  When m has nodes, admission also places (see struct
 * carve_admission); a podSet template's annotations "gpu-fraction" (0 < f
 * < 1) and "gpu-memory" (MiB) ask for a fraction of one GPU per pod.
 * A workload asking for what no GPU can give (a MIG profile no model
 * offers, a fraction outside (0, 1), more gpu-memory than the largest GPU
 * of the input) is an error in m->diags at that field and is not added.
 * A ClusterQueue covering carve.dev/mig-memory-slices and/or
 * carve.dev/mig-compute-slices also charges every nvidia.com/mig-<profile>
 * request its instances' slices (docs/admission.md, "MIG quota in physical
 * slices"); a profile whose slices the queue's flavors cannot tell is an
 * error at the request and the workload is not added.
 * ResourceFlavors naming a Kueue Topology (spec.topologyName) give the
 * engine its levels; a podSet topology annotation naming a level none of
 * its ClusterQueue's flavors has is an error at the annotation, and the
 * workload is not added.
 * Returns NULL only on allocation failure (reported in m->diags too).  Free
 * with carve_admission_destroy().  carve_admission_build() uses the default
 * options; an unknown policy is reported in m->diags (no placer then).
 */
struct carve_admission *carve_admission_build(struct carve_manifests *m);
struct carve_admission *carve_admission_build_opts(struct carve_manifests *m,
						   const struct carve_admission_opts *o);
void carve_admission_destroy(struct carve_admission *ad);

/*
 * The engine workload for trace job j (carve/jobs.h), made by the same
 * conversion as a Workload's: its queue is j->cluster_queue when set (a
 * Volcano or KAI queue as a PodGroup names it; the engine refuses an
 * unknown one), else j->queue (a LocalQueue in j->ns) or, when the job
 * names none, the only ClusterQueue; priority j->priority; created at
 * j->created when j->has_created, else at ad->job_epoch + j->arrival (no
 * creation time with j->created_unknown); each podSet checked and
 * converted exactly like a Workload podSet (MIG profiles, MIG slice charges, a fraction's GPU memory,
 * topology levels of the queue's flavors; GPU models become node
 * affinity).  Fills *out (key "ns/name"; every array it points to is
 * owned by ad and valid until carve_admission_destroy()); the workload is
 * not added to the engine.  Returns 0; CARVE_EINVAL when the job cannot be
 * queued, with the first reason in err and every problem also added to d
 * (at its field, else at j->pos) when d is not NULL; CARVE_ENOMEM.
 */
int carve_admission_job(struct carve_admission *ad, const struct carve_job *j,
			struct carve_wl_spec *out, struct carve_diags *d, struct carve_error *err);

/*
 * Kueue Workload w of ad's manifests as a trace job (the reverse of what
 * carve_admission_job() reads): name and namespace, queue
 * (spec.queueName), priority (spec.priority, else its (Workload)
 * PriorityClass's value, else 0), creation time (created_unknown without
 * a creationTimestamp), each podSet's count, minCount, requests,
 * nodeSelector, required node affinity, tolerations, KAI fraction
 * annotations and Kueue topology annotations; arrival, duration, demand
 * are left 0 for the caller.  Strings are borrowed from the manifests,
 * arrays owned by ad (valid until carve_admission_destroy()).  Returns 0;
 * CARVE_ENOTFOUND when Kueue would not queue it (deactivated, or no
 * spec.queueName); CARVE_EINVAL for a malformed annotation (err says
 * which; also added to d when not NULL); CARVE_ENOMEM.
 */
int carve_admission_workload_job(struct carve_admission *ad, const struct carve_mf_workload *w,
				 struct carve_job *out, struct carve_diags *d,
				 struct carve_error *err);

/*
 * ad->derived[i] (a Workload made from a Job, JobSet, pod or Volcano Job)
 * as a trace job, as carve_admission_workload_job() turns a Workload into
 * one; a workload naming its queue directly (KAI, Volcano) gets it as
 * cluster_queue.  Returns as carve_admission_workload_job(); CARVE_EINVAL
 * for i out of range.
 */
int carve_admission_derived_job(struct carve_admission *ad, size_t i, struct carve_job *out,
				struct carve_diags *d, struct carve_error *err);

/*
 * Volcano PodGroup pg of ad's manifests as a trace job, as the build turns
 * it into a workload: one podSet "pods" of max(minMember, 1) pods each
 * asking minResources / count rounded up, its Volcano queue as
 * cluster_queue, its PriorityClass's value, its creation time.  Returns 0;
 * CARVE_ENOTFOUND when the build did not queue it (KAI, Completed, an
 * unknown or parent queue, no minResources: warned there); CARVE_ENOMEM.
 * Ownership as carve_admission_workload_job().
 */
int carve_admission_podgroup_job(struct carve_admission *ad, const struct carve_mf_podgroup *pg,
				 struct carve_job *out, struct carve_diags *d,
				 struct carve_error *err);

/* The manifest workload behind engine id wl, or NULL. */
const struct carve_mf_workload *carve_admission_workload(const struct carve_admission *ad,
							 uint32_t wl);
/* The Volcano PodGroup behind engine id wl, or NULL. */
const struct carve_mf_podgroup *carve_admission_podgroup(const struct carve_admission *ad,
							 uint32_t wl);

/*
 * The result object of docs/admit-json.md: {"admitted": [...],
 * "preempted": [...], "pending": [...]}, each list sorted by workload key,
 * and with Dynamic MIG on a "repartitions" array (the placer's log).
 * Returns a new reference (the caller json_decref()s it), or NULL on
 * allocation failure.
 */
json_t *carve_admission_result_json(const struct carve_admission *ad);

/*
 * Prints one aligned line per workload (WORKLOAD, QUEUE, DECISION,
 * FLAVORS, REASON), sorted by key, then with Dynamic MIG one line per
 * repartition ("repartition NODE GPU I: FROM -> TO", instances as
 * profile@start joined by ',', "-" for none).  Returns 0 or CARVE_ENOMEM.
 */
int carve_admission_print_table(const struct carve_admission *ad, FILE *out);

#endif
