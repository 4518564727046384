/*
 * admq.h - admission-engine generators for carve-bench (admq.c): flavors,
 * one-resource ClusterQueues, single-podSet workloads, and the cohort
 * layout of figures 2 and 7.  Each returns 0 (or an id) or -1 with the
 * engine's message on stderr.
 */
#ifndef CARVE_BENCH_ADMQ_H
#define CARVE_BENCH_ADMQ_H

#include "bench.h"

#define ADMQ_FLAVOR "default-gpu"
#define ADMQ_RESOURCE CARVE_RES_NAME_GPU

struct admq_cq {
	const char *name, *cohort;   /* cohort NULL: standalone */
	const char *resource, *flavor;
	int64_t nominal;             /* milli */
	int64_t borrowing_limit;     /* milli; < 0: none */
	enum carve_within_cq within_cq;
	enum carve_reclaim reclaim;
};

struct admq_wl {
	const char *key, *cq, *resource, *flavor;
	int64_t milli;               /* per pod */
	int32_t count, priority;
	int64_t created;
	bool admitted;               /* given as admitted on flavor */
};

int admq_flavor(struct carve_adm *a, const char *name);
int admq_cq(struct carve_adm *a, const struct admq_cq *q);
int admq_finalize(struct carve_adm *a);
/* Workload id (>= 0) or -1. */
int admq_workload(struct carve_adm *a, const struct admq_wl *w);

/*
 * ncqs ClusterQueues "cq-NNNN" in ncohorts cohorts (queue i in cohort
 * i % ncohorts), each with nominal and borrowing_limit (milli, < 0: none)
 * of nvidia.com/gpu on one flavor, withinClusterQueue LowerPriority,
 * reclaimWithinCohort Any; finalized.  NULL on failure.
 */
struct carve_adm *admq_cohorts(size_t ncqs, size_t ncohorts, int64_t nominal,
			       int64_t borrowing_limit);

#endif
