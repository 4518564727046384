/*
 * plan.h - the scheduler's decision step, in the bridge: the cluster's
 * objects as read from the API server (a manifest set filled with
 * carve_manifests_add_json) in, what the scheduler must do out.  Pure: no
 * I/O, no clock (the caller passes now), same objects and options, same
 * plan.  The Kubernetes driver (src/kube/sched.c) calls it once per cycle
 * and carries the plan out; tests call it on YAML fixtures.
 *
 * What it reads (docs/kubernetes.md):
 *  - pods to schedule: spec.schedulerName == opts->scheduler_name, no
 *    spec.nodeName, no spec.schedulingGates, no deletionTimestamp, phase
 *    Pending.  Gangs from kueue.x-k8s.io/pod-group-name +
 *    kueue.x-k8s.io/pod-group-total-count, scheduling.k8s.io/group-name
 *    (Volcano PodGroup: minMember, queue), KAI's pod-group-name
 *    annotation (PodGroup: minMember, queue), scheduling.x-k8s.io/pod-group
 *    (coscheduling PodGroup: minMember); else one pod is one workload.  A
 *    gang is considered once the pods it needs exist.  The queue from the
 *    kueue.x-k8s.io/queue-name label (with opts->queues CARVE_QUEUES_NONE
 *    every pod is placed without quota).
 *  - bound pods (spec.nodeName set, not Succeeded/Failed) hold their
 *    node's capacity: carve's own (a carve.dev/devices annotation) hold
 *    exactly the devices it names and their workload's quota (flavors from
 *    carve.dev/flavors); anyone else's hold cpu, memory and as many
 *    devices of the kinds they request on that node.  A carve-bound gang
 *    that cannot be held as an admitted workload (its flavor gone, no
 *    flavors annotation, a node carve does not know, no LocalQueue ...)
 *    keeps its exact devices without charging quota, with a warning:
 *    running pods are never deleted for configuration or bad input;
 *    releases are only for half-bound gangs whose remaining pods cannot
 *    be placed around the bound ones.  Carve-bound pods being deleted
 *    hold their devices outside their gang; a half-bound gang is
 *    completed up to its declared size only (extra pods stay pending).
 *  - workload keys: "ns/name" for a single pod; "ns/<kind>:group" for a
 *    group, kind one of pod-group (Kueue), volcano, kai, coscheduling.
 *  - pending pods of other schedulers with status.nominatedNodeName are
 *    not held (kube-scheduler holds a nominated pod's requests against
 *    pods of lower or equal priority): carve counts them once bound, so
 *    a carve pod may take room such a pod was nominated for, and that
 *    pod waits for its scheduler's next attempt.
 *  - Nodes, ResourceFlavors, ClusterQueues, Cohorts, LocalQueues,
 *    (Workload)PriorityClasses, Volcano/KAI queues and PodGroups, the
 *    device-plugin and mig-parted ConfigMaps: as `carve admit` reads them.
 *
 * Ownership: a struct carve_plan owns every string and array it points at
 * (copied out of the set), so it outlives the manifest set.
 */
#ifndef CARVE_PLAN_H
#define CARVE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "carve/carve.h"
#include "carve/diag.h"
#include "carve/manifest.h"

enum carve_queues_mode {
	CARVE_QUEUES_CARVE = 0,  /* carve.dev/v1alpha1 queue objects */
	CARVE_QUEUES_KUEUE,      /* kueue.x-k8s.io objects */
	CARVE_QUEUES_NONE        /* place only: no quota */
};

struct carve_plan_opts {
	const char *scheduler_name;   /* NULL: "carve" */
	enum carve_queues_mode queues;
	const char *policy;           /* placement policy; NULL: "binpack" */
	uint64_t seed;
	int64_t now;                  /* seconds since the epoch */
	int max_cycles;               /* engine cycles per plan; 0: until quiet (a cycle
					 * that decides nothing and sets no head aside;
					 * capped at the pending workloads + 8) */
	bool mig_dynamic;             /* Dynamic MIG: idle MIG GPUs may be given a new
					 * layout (carve_placer_set_mig_dynamic); a gang
					 * that stands on one is not bound but waits for
					 * the node agent to apply it (layouts below) */
};

/* A pod named by the plan. */
struct carve_plan_pod {
	char *ns, *name, *uid;
};

/* Bind pod to node with these annotations (carve.dev/devices, carve.dev/flavors). */
struct carve_plan_bind {
	struct carve_plan_pod pod;
	char *node;
	char *devices;               /* carve.dev/devices value */
	char *flavors;               /* carve.dev/flavors value: "res=flavor,..." ("" in none mode) */
	char *workload;              /* the workload key it belongs to */
	size_t gang;                 /* index in carve_plan.gangs */
};

/* A workload admitted in this plan: its binds are binds[first .. first+n-1]. */
struct carve_plan_gang {
	char *workload, *cq;
	size_t first, n;
};

/* A pod left pending: PodScheduled=False with this reason and message. */
struct carve_plan_pending {
	struct carve_plan_pod pod;
	char *workload;
	char *reason;                /* "Unschedulable" or "SchedulerError" */
	char *message;               /* the engine's own words */
};

/* A bound pod to preempt (DisruptionTarget, then delete). */
struct carve_plan_victim {
	struct carve_plan_pod pod;
	char *workload;              /* the victim's workload */
	char *preemptor;             /* the workload it makes room for */
	char *reason;                /* "InClusterQueue", "InCohortReclamation", ... */
	char *message;
};

/* A pending pod whose victims are being evicted: status.nominatedNodeName. */
struct carve_plan_nominate {
	struct carve_plan_pod pod;
	char *node;
};

/* A carve-bound gang found half-bound (a binding cut off): either its
 * remaining pods are in binds (completed), or its bound pods are listed
 * here to be deleted (released) so the gang is queued whole again. */
struct carve_plan_release {
	struct carve_plan_pod pod;
	char *workload;
	char *message;
};

/* Usage of one (flavor, resource) of a ClusterQueue, milli-units. */
struct carve_plan_usage {
	char *flavor, *resource;
	int64_t total, borrowed, nominal;
};

struct carve_plan_cq {
	char *name, *cohort;
	int32_t pending, admitted;   /* workloads */
	size_t nusage;
	struct carve_plan_usage *usage;
};

struct carve_plan_lq {
	char *ns, *name, *cq;
	int32_t pending, admitted;
};

/* A Volcano or KAI PodGroup's status.phase: "Pending", "Inqueue", "Running". */
struct carve_plan_podgroup {
	char *api_version, *ns, *name, *phase;
	char *message;               /* why it waits, or "" */
};

/*
 * A Node's wanted MIG layout (Dynamic MIG): the new value of its
 * carve.dev/mig-layout annotation (miglayout.h), the entries it already
 * had for other GPUs kept, this plan's GPUs given the layout a gang
 * stands on.  The gang's pods stay pending (their message says so) until
 * the node agent has applied it and carve.dev/mig-current shows it.
 */
struct carve_plan_layout {
	char *node;
	char *layout;                /* the annotation's whole new value */
	char *message;               /* "GPU 1: 3g.40gb@0,3g.40gb@4 for gang ..." */
};

struct carve_plan {
	size_t nbinds, ngangs, npending, nvictims, nnominate, nreleases, nlayouts;
	struct carve_plan_layout *layouts;
	struct carve_plan_bind *binds;
	struct carve_plan_gang *gangs;
	struct carve_plan_pending *pending;
	struct carve_plan_victim *victims;
	struct carve_plan_nominate *nominate;
	struct carve_plan_release *releases;
	size_t ncqs, nlqs, npodgroups;
	struct carve_plan_cq *cqs;
	struct carve_plan_lq *lqs;
	struct carve_plan_podgroup *podgroups;
	size_t pods_seen;            /* pods of this scheduler waiting, this plan */
	size_t workloads;            /* workloads the engine held */
	int cycles;                  /* engine cycles run */
};

/*
 * Decides.  Problems with objects (a pod with an impossible request, a
 * ClusterQueue naming a missing flavor, a devices annotation naming a GPU
 * the node lacks) go to d (when not NULL; else m->diags) at the object
 * and field, and the object is left out; they never fail the plan.
 * Returns 0 with *out set (free with carve_plan_free), or CARVE_ENOMEM.
 */
int carve_plan_build(struct carve_manifests *m, const struct carve_plan_opts *o,
		     struct carve_diags *d, struct carve_plan **out, struct carve_error *err);
void carve_plan_free(struct carve_plan *p);

#endif
