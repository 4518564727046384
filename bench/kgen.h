/*
 * kgen.h - the objects a Kubernetes API server would hold for the
 * scheduler benchmark (bench/sched.c), as JSON the way the API returns
 * them: Nodes with GPU Feature Discovery labels, the device-plugin and
 * mig-parted ConfigMaps, carve.dev/v1alpha1 queue objects, pending Pods
 * in Kueue pod groups and alone.
 *
 * The cluster follows the seed scenario's three pools (examples/
 * seed-scenario), scaled: by node index modulo 10, 0-3 "training" (8 x
 * H100-80GB whole, tainted), 4-6 "production" (8 x A100-80GB, MIG
 * prod-3g: two 3g.40gb per GPU), 7-9 "dev" (8 x L40S time-sliced 4 ways).
 * Three ClusterQueues in cohort gpu-org (research, production, dev),
 * each with a LocalQueue in its team namespace.  Pods: training gangs of
 * gang_size pods (1 H100 each), MIG inference pods (one 3g.40gb),
 * notebooks (one L40S replica), in the proportions 20/40/40; every pod
 * fits, so a plan binds all of them.  Deterministic: same options, same
 * bytes.  Ownership: every returned json_t is a new reference.
 */
#ifndef CARVE_BENCH_KGEN_H
#define CARVE_BENCH_KGEN_H

#include <stddef.h>

#include <jansson.h>

struct kgen_opts {
	size_t nodes;       /* a multiple of 10 */
	size_t pods;        /* pending pods */
	int gang_size;      /* training gang size (>= 1) */
	const char *scheduler_name;
};

/* Nodes, ConfigMaps, flavors, cohort, ClusterQueues, LocalQueues, the
 * WorkloadPriorityClasses: a JSON array, or NULL when out of memory. */
json_t *kgen_cluster(const struct kgen_opts *o);

/* The i-th pending pod (0 <= i < o->pods), or NULL when out of memory. */
json_t *kgen_pod(const struct kgen_opts *o, size_t i);

/*
 * A pod of one extra training gang named name (n pods, one H100 each):
 * the k-th, pending.  NULL when out of memory.
 */
json_t *kgen_gang_pod(const struct kgen_opts *o, const char *name, int n, int k);

/* The pod as the API holds it once bound: spec.nodeName, the annotations
 * (devices, flavors), PodScheduled=True, phase Running.  A new object. */
json_t *kgen_bound(const json_t *pod, const char *node, const char *devices, const char *flavors);

#endif
