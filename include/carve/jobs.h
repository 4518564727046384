/*
 * jobs.h - workload traces for the replay simulator: jobs that arrive at a
 * time, wait in a queue, run for a duration once every pod has a place,
 * and leave.
 *
 * A job is what a team submits: one Kueue Workload (or Volcano PodGroup),
 * with podSets of identical pods.  carve's own trace format (CSV and YAML,
 * docs/trace-format.md) describes jobs directly; openb pod lists become
 * one single-pod job per row (carve_jobs_from_openb).
 *
 * Ownership: a struct carve_jobs owns its job array and everything the jobs
 * point to (strings, podSets, requests, selectors) in one arena, plus the
 * file names their positions borrow: keep it alive while diagnostics that
 * came from it are printed.  carve_jobs_add() copies its argument.  Loading
 * appends, so several files may feed one list; jobs keep the order they
 * were added in (the simulator sorts by arrival, ties by that order).
 *
 * Invariants of every job in a list: name non-empty and unique in the list;
 * arrival >= 0; duration > 0; 0 < demand <= 1; npodsets >= 1; each podSet
 * has count >= 1 and 1 <= min_count <= count; requests are per pod, in
 * milli-units (carve/quantity.h), non-negative, resource names as
 * Kubernetes spells them ("nvidia.com/gpu", "nvidia.com/mig-3g.40gb",
 * "cpu", "memory").
 */
#ifndef CARVE_JOBS_H
#define CARVE_JOBS_H

#include "carve/admit.h"
#include "carve/diag.h"
#include "carve/trace.h"

struct carve_job_podset {
	const char *name;               /* unique within the job ("main" when one) */
	int32_t count;
	int32_t min_count;              /* partial admission floor; == count when none */
	size_t nreqs;
	const struct carve_req *reqs;   /* per pod */
	int32_t gpu_milli;              /* fraction of one GPU per pod, 1..999; 0 none */
	uint32_t gpu_mem_mib;           /* GPU memory per pod for a fraction; 0 none */
	size_t nmodels;                 /* allowed GPU models (openb gpu_spec); 0 any */
	const char *const *models;
	size_t nselector;
	const struct carve_label *selector; /* nodeSelector */
	const char *topology_level;     /* Kueue TAS level label key; NULL none */
	bool topology_required;
};

struct carve_job {
	const char *name;               /* unique in the list */
	const char *ns;                 /* namespace; "default" when not given */
	const char *queue;              /* LocalQueue name in ns; NULL: the trace gives none */
	int32_t priority;
	int64_t arrival;                /* seconds from the start of the trace */
	int64_t duration;               /* seconds of running once every pod has a place */
	double demand;                  /* GPU work actually done, as a fraction of the
					 * devices allocated (0, 1]; 1 when not given */
	bool checkpoint;                /* a preempted job keeps its progress */
	size_t npodsets;
	const struct carve_job_podset *podsets;
	struct carve_pos pos;           /* where the job was read (file NULL: made in memory) */
};

struct carve_jobs {
	size_t n;
	struct carve_job *jobs;
	struct carve_jobs_int *priv;    /* arena, capacity, name index */
};

/* An empty list; NULL on allocation failure. */
struct carve_jobs *carve_jobs_create(void);
void carve_jobs_destroy(struct carve_jobs *js);

/*
 * Appends a deep copy of j (strings, podSets, requests, selectors, models).
 * NULL ns becomes "default", demand 0 becomes 1, min_count 0 becomes count,
 * a NULL podSet name becomes "main" (or "ps<i>" beyond the first).  Returns
 * the job's index (>= 0), CARVE_EEXISTS (a job of that name is in the
 * list), CARVE_EINVAL (an invariant above does not hold; err says which
 * field) or CARVE_ENOMEM.
 */
int carve_jobs_add(struct carve_jobs *js, const struct carve_job *j, struct carve_error *err);

#endif
