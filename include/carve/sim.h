/*
 * sim.h - the replay simulator: a job trace replayed in virtual time
 * against a cluster and its queues, either through the real admission
 * engine (carve mode) or through one of three models of what a stock
 * stack does (the baselines: exclusive, device-plugin, kueue).
 * docs/simulator.md defines every metric and the baseline models
 * ("Baselines").
 *
 * Events are arrivals, completions, preemptions (carve mode: a preempted
 * job requeues and restarts, keeping its progress only when it declares
 * checkpointing; in the baselines, PriorityClass or Kueue preemption),
 * gang timeouts and Kueue's requeues after waitForPodsReady (baselines).  Time is virtual
 * seconds from the start of the trace; nothing here reads a clock, so the
 * same manifests, jobs, options and seed give the same result.
 *
 * Ownership: a struct carve_sim borrows the manifest set (its diagnostics
 * receive problems found in the jobs) and the job list; both must outlive
 * it.  It owns its engine, inventory and placers.  carve_sim_result_json()
 * returns a new reference.
 */
#ifndef CARVE_SIM_H
#define CARVE_SIM_H

#include <signal.h>

#include <jansson.h>

#include "carve/jobs.h"
#include "carve/manifest.h"

/*
 * The latest virtual time, in seconds (2^62, about 146 billion years):
 * every sum of times saturates here, and an event that would fall here or
 * later (an arrival, a completion or a gang timeout beyond it) never
 * happens; `until` is capped to it.  Options that are times (gang_timeout,
 * workload_duration, until) should be far below it, as trace spans (at
 * most 100 years, docs/trace-format.md) are.
 */
#define CARVE_SIM_TIME_MAX ((int64_t)1 << 62)

/*
 * Who schedules a run: carve itself, or one of the baselines, each a named
 * model of a stack a platform team really runs (docs/simulator.md,
 * "Baselines"):
 *   exclusive      stock kube-scheduler + NVIDIA device plugin, no sharing:
 *                  every GPU whole;
 *   device-plugin  stock kube-scheduler + device plugin serving the
 *                  manifests' MIG layouts and time-slicing replicas,
 *                  ResourceQuota per namespace and resource name charged at
 *                  pod creation, PriorityClass preemption, per-pod
 *                  scheduling with a gang timeout;
 *   kueue          Kueue admitting on the same ClusterQueues' quota alone,
 *                  kube-scheduler placing the admitted pods with its default
 *                  scoring, waitForPodsReady with timeout and requeue.
 */
enum carve_sim_sched {
	CARVE_SIM_CARVE = 0,          /* the admission engine + placer */
	CARVE_SIM_EXCLUSIVE,          /* baseline "exclusive" */
	CARVE_SIM_DEVICE_PLUGIN,      /* baseline "device-plugin" */
	CARVE_SIM_KUEUE,              /* baseline "kueue" */
	CARVE_SIM_NSCHED
};

/* The name of s as the CLI and the JSON spell it ("carve", "exclusive",
 * "device-plugin", "kueue"); static storage. */
const char *carve_sim_sched_name(enum carve_sim_sched s);

/*
 * Reads a scheduler/baseline name into *out.  Returns 0 for a current
 * name, 1 for the deprecated alias "kube-default" (which now names the
 * device-plugin model; the caller warns), -1 for an unknown name (*out
 * unchanged).
 */
int carve_sim_sched_parse(const char *name, enum carve_sim_sched *out);

/* Options; a zeroed struct means the defaults. */
struct carve_sim_opts {
	enum carve_sim_sched sched;
	const char *policy;           /* carve placement policy; NULL: "binpack" */
	uint64_t seed;                /* placer RNG seed (default 42 unless has_seed) */
	bool has_seed;
	bool mig_dynamic;             /* --mig dynamic (carve mode) */
	int64_t gang_timeout;         /* exclusive, device-plugin: the gang timeout,
				       * seconds, 0: 1800; kueue: the
				       * waitForPodsReady timeout, 0: Kueue's
				       * default 300 */
	bool skip_invalid;            /* skip invalid jobs (counted) instead of failing */
	bool workloads;               /* start from the manifests' Kueue Workloads: the
				       * admitted ones hold their quota and devices
				       * from the start and never finish; each
				       * pending one joins the trace as a job that
				       * arrives at 0 (carve_admission_workload_job) */
	int64_t workload_duration;    /* run time of a pending Workload's job; 0: 3600 */
	int cycles;                   /* carve mode: engine cycles per scheduling step;
				       * 0: until a cycle decides nothing */
	int64_t mig_delay;            /* --mig dynamic: seconds a repartition takes,
				       * during which the GPU's changed instances
				       * serve nobody; used when has_mig_delay,
				       * else 60 */
	bool has_mig_delay;
};

struct carve_sim;

/*
 * Prepares a replay of js over the cluster and queues of m (ResourceFlavors,
 * Cohorts, ClusterQueues, LocalQueues and nodes; the Workloads and
 * PodGroups of m only with o->workloads, see there).  Every job becomes an
 * engine workload through the bridge (carve_admission_job), as `carve
 * admit` turns a Workload into one.  Each job is checked: its
 * queue must resolve (namespace/queue -> LocalQueue -> ClusterQueue; a job
 * without a queue goes to the only ClusterQueue when there is exactly one)
 * and each pod of a trace job must fit some node of the empty cluster (a
 * Workload of the manifests that fits nowhere stays pending, as in `carve
 * admit`).  A job that fails a check is reported as an error in m->diags at
 * its position, unless o->skip_invalid, where it is only counted
 * (carve_sim_skipped()).  Without nodes, carve mode admits by quota alone
 * (the baselines place pods: they need nodes).
 * Returns NULL with err set when anything was reported as an error (in the
 * manifests or the jobs), when the baseline has no nodes, when m has no
 * queue (ClusterQueue, Volcano or KAI Queue), on an unknown policy, or on
 * allocation failure.
 */
struct carve_sim *carve_sim_create(struct carve_manifests *m, const struct carve_jobs *js,
				   const struct carve_sim_opts *o, struct carve_error *err);
void carve_sim_destroy(struct carve_sim *s);

/* Jobs skipped as invalid (skip_invalid). */
size_t carve_sim_skipped(const struct carve_sim *s);
/* The admission engine, inventory and placer carve mode drives (owned by
 * s); carve_admission_result_json() of it is the engine's decisions so far
 * in `carve admit`'s JSON. */
const struct carve_admission *carve_sim_admission(const struct carve_sim *s);

/*
 * Runs events in time order until none is left, the next one is later
 * than until (until < 0: no limit; the horizon is then until, at most
 * CARVE_SIM_TIME_MAX), or *stop
 * becomes non-zero (checked between event times; stop may be NULL).  May
 * be called again to go on.  Returns 0, CARVE_ENOMEM, or CARVE_EINVAL when
 * the engine refused something (err says what).
 */
int carve_sim_run(struct carve_sim *s, int64_t until, const volatile sig_atomic_t *stop,
		  struct carve_error *err);

/*
 * The same, in steps: returns after at most max_events event times (then
 * 1: more remain, and the clock is not moved on to until), or 0 when the
 * run is complete (as carve_sim_run), or a negative error.  For progress
 * reports.
 */
int carve_sim_run_events(struct carve_sim *s, int64_t until, size_t max_events,
			 const volatile sig_atomic_t *stop, struct carve_error *err);

/* Virtual time reached, events processed, jobs not yet arrived or done. */
int64_t carve_sim_now(const struct carve_sim *s);
size_t carve_sim_events(const struct carve_sim *s);
size_t carve_sim_jobs_left(const struct carve_sim *s);

/*
 * The run object of docs/simulator.md: the metrics at the time reached
 * (gpu_allocation_pct, effective_utilisation_pct, first_time_success_pct,
 * wait_first_gpu_s, quota, preemptions, gang_timeouts, fragmentation_pct,
 * gpu_hours_per_job, jobs, queues, series, wait_cdf, policy, seed, mode,
 * scheduler (carve_sim_sched_name()), model (one line saying what the
 * scheduler models), gang_timeout_s (the timeout a baseline used; null
 * for carve), horizon_s; window, makespan_s, backlog, gpu_hours,
 * wait_all_pods_s, mig).  Percentages, averages, waits and first-time
 * success are measured inside the window (first arrival .. the trace's
 * end, or the first run call's until).  New reference, or NULL on
 * allocation failure.
 */
json_t *carve_sim_result_json(const struct carve_sim *s);

#endif
