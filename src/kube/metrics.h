/*
 * metrics.h - the scheduler's Prometheus metrics (private to src/kube;
 * names shared between src/kube files start with `kube_`).
 *
 * Two parts:
 *  - a small registry: counters, gauges and histograms, each with a fixed
 *    list of label names, one series per distinct tuple of label values,
 *    rendered in the Prometheus text exposition format 0.0.4 (# HELP and
 *    # TYPE lines, label values escaped, histograms as cumulative
 *    _bucket{le="..."} series ending in le="+Inf", then _sum and _count).
 *  - the scheduler's metric set, one table in metrics.c (enum kube_metric
 *    below is its index): Kueue's names and labels where Kueue has the
 *    same metric (kubernetes-sigs/kueue pkg/metrics/metrics.go), carve_
 *    names for what only carve has; and setters so the driver calls one
 *    function per thing that happened.
 *
 * Threads: every function may be called from any thread at once; one
 * mutex per registry.  The HTTP server thread renders while the scheduler
 * thread updates; kube_registry_begin()/kube_registry_commit() make a
 * batch of updates (e.g. every queue gauge of one plan) appear to
 * renderers all at once.
 */
#ifndef CARVE_KUBE_METRICS_H
#define CARVE_KUBE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "carve/carve.h"
#include "carve/kube.h"
#include "carve/plan.h"

/* ---- the registry ---- */

enum kube_mtype { KUBE_COUNTER, KUBE_GAUGE, KUBE_HISTOGRAM };

#define KUBE_MAX_LABELS 4
#define KUBE_MAX_BUCKETS 24

/* A metric family.  Strings are borrowed for the registry's lifetime
 * (string literals in practice). */
struct kube_mdesc {
	const char *name;        /* [a-zA-Z_:][a-zA-Z0-9_:]*, no "__" prefix */
	const char *help;        /* one line; '\\' and newlines are escaped */
	enum kube_mtype type;
	const char *labels[KUBE_MAX_LABELS]; /* label names, NULL-terminated
					      * when fewer; "le" is reserved */
	const double *buckets;   /* histograms: upper bounds, strictly
				  * increasing, finite; +Inf is implied */
	size_t nbuckets;         /* 1..KUBE_MAX_BUCKETS for histograms */
};

struct kube_registry;

/* An empty registry, or NULL when out of memory. */
struct kube_registry *kube_registry_create(void);
void kube_registry_destroy(struct kube_registry *r);

/*
 * Adds a family.  Returns its id (>= 0, ids count up from 0 in the order
 * added), or CARVE_EINVAL (err names the metric and what is wrong: a bad
 * name, a bad or repeated label name, bad buckets, a name already
 * registered), CARVE_ENOMEM.
 */
int kube_registry_add(struct kube_registry *r, const struct kube_mdesc *d,
		      struct carve_error *err);

/*
 * Updates the series of family id with these label values (values[i] for
 * labels[i], exactly as many as the family has labels; NULL is taken as
 * ""; any bytes, escaped on output).  The series is created on first use.
 *  - set:     gauges; also counters mirroring a cumulative total kept
 *             elsewhere (a value below the current one is CARVE_ERANGE)
 *  - add:     counters (delta >= 0, else CARVE_ERANGE) and gauges
 *  - observe: histograms (one observation of v)
 * Returns 0, CARVE_EINVAL (unknown id, wrong type, NaN), CARVE_ERANGE,
 * CARVE_ENOMEM.
 */
int kube_metric_set(struct kube_registry *r, int id, const char *const *values, double v);
int kube_metric_add(struct kube_registry *r, int id, const char *const *values, double delta);
int kube_metric_observe(struct kube_registry *r, int id, const char *const *values, double v);
/* Drops every series of family id (a gauge set afresh from each plan, so
 * that a deleted queue disappears).  Returns 0 or CARVE_EINVAL. */
int kube_metric_reset(struct kube_registry *r, int id);
/* The current value of a counter or gauge series, or a histogram's count;
 * NAN when the series does not exist.  For tests and the benchmark. */
double kube_metric_get(struct kube_registry *r, int id, const char *const *values);

/* Holds the registry's lock across several updates (recursive: the update
 * functions may be called in between, by this thread only); renders wait. */
void kube_registry_begin(struct kube_registry *r);
void kube_registry_commit(struct kube_registry *r);

/*
 * Renders every family in id order (series in the order first created)
 * as text format 0.0.4 into a new NUL-terminated string (carve_free);
 * *len (when not NULL) gets its length.  NULL when out of memory.
 */
char *kube_registry_render(struct kube_registry *r, size_t *len);

/* The Content-Type of that text. */
#define KUBE_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* ---- the scheduler's metric set ---- */

/* Index into the table in metrics.c == the id in a registry made by
 * kube_metrics_create().  Labels in braces. */
enum kube_metric {
	KM_PENDING_WORKLOADS,        /* kueue_pending_workloads{cluster_queue,status} gauge */
	KM_RESERVING_ACTIVE,         /* kueue_reserving_active_workloads{cluster_queue} gauge */
	KM_ADMITTED_ACTIVE,          /* kueue_admitted_active_workloads{cluster_queue} gauge */
	KM_QUOTA_RESERVED_TOTAL,     /* kueue_quota_reserved_workloads_total{cluster_queue} */
	KM_ADMITTED_TOTAL,           /* kueue_admitted_workloads_total{cluster_queue} */
	KM_EVICTED_TOTAL,            /* kueue_evicted_workloads_total{cluster_queue,reason} */
	KM_PREEMPTED_TOTAL,          /* kueue_preempted_workloads_total{preempting_cluster_queue,reason} */
	KM_ADMISSION_WAIT,           /* kueue_admission_wait_time_seconds{cluster_queue} histogram */
	KM_ADMISSION_ATTEMPTS,       /* kueue_admission_attempts_total{result} */
	KM_ADMISSION_ATTEMPT_DURATION, /* kueue_admission_attempt_duration_seconds{result} histogram */
	KM_CQ_STATUS,                /* kueue_cluster_queue_status{cluster_queue,status} gauge */
	KM_CQ_USAGE,                 /* kueue_cluster_queue_resource_usage{cohort,cluster_queue,flavor,resource} */
	KM_CQ_NOMINAL,               /* kueue_cluster_queue_nominal_quota{...same} */
	KM_CQ_BORROWING_LIMIT,       /* kueue_cluster_queue_borrowing_limit{...same} */
	KM_CQ_LENDING_LIMIT,         /* kueue_cluster_queue_lending_limit{...same} */
	KM_BIND_DURATION,            /* carve_bind_duration_seconds histogram */
	KM_BINDS_TOTAL,              /* carve_binds_total{result} */
	KM_CYCLE_DURATION,           /* carve_cycle_duration_seconds histogram */
	KM_WATCH_RESTARTS,           /* carve_watch_restarts_total{kind,reason} */
	KM_API_REQUESTS,             /* carve_api_requests_total{code_class} */
	KM_API_WAIT,                 /* carve_api_wait_seconds_total{on}: server, rate_limiter */
	KM_GPU_ALLOCATED,            /* carve_gpu_allocated{node,gpu,queue} gauge */
	KM_LEADER,                   /* carve_leader gauge, 0 or 1 */
	KM__COUNT
};

/* A registry holding the whole table (ids == enum kube_metric), with
 * carve_leader at 0; NULL when out of memory. */
struct kube_registry *kube_metrics_create(void);

/*
 * Sets the queue gauges from one plan, replacing what the previous plan
 * set (a ClusterQueue gone from the plan loses its series), in one batch:
 * kueue_pending_workloads{cq,"inadmissible"} = pending and {cq,"active"}
 * = 0 (a plan runs the engine until quiet, so a workload still pending
 * has had a failed admission attempt: Kueue's "inadmissible"),
 * kueue_admitted_active_workloads and kueue_reserving_active_workloads =
 * admitted (carve reserves and admits at once), kueue_cluster_queue_status
 * {cq,"active"} = 1 (pending and terminating 0), and per usage entry
 * kueue_cluster_queue_resource_usage = total and _nominal_quota = nominal
 * (milli-units to units: GPUs, cores, bytes).  Also counts the attempt:
 * kueue_admission_attempts_total{success} when the plan admitted a gang,
 * else {inadmissible} when workloads were pending; and observes
 * duration_s in kueue_admission_attempt_duration_seconds and
 * carve_cycle_duration_seconds.  Returns 0 or CARVE_ENOMEM.
 */
int kube_metrics_plan(struct kube_registry *r, const struct carve_plan *p, double duration_s);

/* A ClusterQueue's borrowing and lending limits for one (flavor,
 * resource), in units; a negative limit (none) sets no series.  plan.h
 * does not carry them, so the driver reads them from the ClusterQueue.
 * kube_metrics_plan() drops both families: call this after it, inside
 * kube_registry_begin()/_commit() to make both one batch.  Returns 0 or
 * CARVE_ENOMEM. */
int kube_metrics_limits(struct kube_registry *r, const char *cohort, const char *cq,
			const char *flavor, const char *resource,
			double borrowing_limit, double lending_limit);

/* The event setters below each return 0 or CARVE_ENOMEM. */

/* One gang's binds all succeeded: kueue_quota_reserved_workloads_total and
 * kueue_admitted_workloads_total{cq} + 1, wait_s (from the workload's
 * first pod's creation to its last bind) into
 * kueue_admission_wait_time_seconds{cq}. */
int kube_metrics_admitted(struct kube_registry *r, const char *cq, double wait_s);

/* One binding request answered: carve_binds_total{result} + 1 (result
 * "success", "conflict" (409), "error") and its round trip into
 * carve_bind_duration_seconds. */
int kube_metrics_bind(struct kube_registry *r, const char *result, double seconds);

/* A victim deleted: kueue_preempted_workloads_total{preempting_cq,reason}
 * and kueue_evicted_workloads_total{victim_cq,"Preempted"} + 1. */
int kube_metrics_preempted(struct kube_registry *r, const char *preempting_cq,
			   const char *reason, const char *victim_cq);

/* carve_watch_restarts_total{kind,reason} + 1; reason "expired" (410),
 * "closed", "error". */
int kube_metrics_watch_restart(struct kube_registry *r, const char *kind, const char *reason);

/* Mirrors the client's cumulative counters: carve_api_requests_total
 * {code_class} for "error" (no answer), "1xx" .. "5xx". */
int kube_metrics_api(struct kube_registry *r, const struct carve_kube_stats *s);

/* carve_leader = 1 or 0. */
int kube_metrics_leader(struct kube_registry *r, bool leader);

/*
 * carve_gpu_allocated{node,gpu,queue}: the share of one GPU held by the
 * pods of one queue (the caller computes share: 1 for a whole GPU, a
 * fraction's milli / 1000, a MIG instance's compute slices over the GPU's,
 * a time-slice replica 1 / replicas; shares of one series add up).
 * Between kube_metrics_gpus_begin() and _commit() (one batch, begin drops
 * the previous values) the driver calls kube_metrics_gpu_add() for every
 * device of every bound carve pod.  gpu is the index on the node; queue
 * the pod's ClusterQueue, or "" without one.  gpu_add returns 0,
 * CARVE_EINVAL (share < 0), CARVE_ENOMEM.
 */
void kube_metrics_gpus_begin(struct kube_registry *r);
int kube_metrics_gpu_add(struct kube_registry *r, const char *node, int gpu,
			 const char *queue, double share);
void kube_metrics_gpus_commit(struct kube_registry *r);

#endif
