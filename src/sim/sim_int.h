/*
 * sim_int.h - the replay simulator's private state, shared by replay.c
 * (events, carve mode), baseline.c (the three baseline models: exclusive,
 * device-plugin, kueue) and metrics.c (accounting and the JSON result).
 *
 * Accounting invariant: every device a job holds was added to the pool,
 * queue, class and total counters through sim_hold() with a contribution the job
 * keeps (struct sjob.contrib), and is taken off with exactly that
 * contribution (sim_unhold()), so the counters are always the sum over
 * the jobs holding something.
 */
#ifndef CARVE_SIM_INT_H
#define CARVE_SIM_INT_H

#include "carve/admission.h"
#include "carve/inventory.h"
#include "carve/manifest.h"
#include "carve/place.h"
#include "carve/sim.h"

/* kueue: at most this many ResourceFlavors noted per podSet (one per
 * resource group it uses). */
#define SIM_KFLV 4

enum sjob_state { SJ_FUTURE = 0, SJ_PENDING, SJ_RUNNING, SJ_DONE, SJ_SKIPPED };

struct sjob {
	const struct carve_job *j;
	int q;                    /* index into sim->queues */
	int cls;                  /* index into sim->classes; -1 when the job has none */
	const char *cq;           /* ClusterQueue name */
	/* The engine workload the bridge made of the job (carve_admission_job;
	 * arrays owned by the admission object): what carve mode adds and
	 * what both modes place. */
	struct carve_wl_spec spec;
	int wl;                   /* carve mode: engine id, -1 before arrival */
	enum sjob_state st;
	int64_t start;            /* time the current run started */
	int64_t remaining;        /* seconds of work left */
	bool started_once;
	int64_t first_gpu;        /* when the first pod got a GPU; valid when has_first_gpu */
	bool has_first_gpu;
	bool gpu_job;             /* asks for some GPU */
	int npods;                /* sum of podSet counts */
	bool attempted;           /* multi-pod: reached full placement or failed once */
	bool failed_first;        /* multi-pod: timed out or preempted before completing */
	uint32_t gen;             /* bumped to invalidate its scheduled events */
	int adm_cycle;            /* carve mode: engine cycle of the admission */
	/* Held devices: per pool allocated then working GPU-equivalents
	 * (2 * npools), NULL when nothing held. */
	double *contrib;
	double held_alloc, held_work;
	/* Baseline: one place per pod (npods), which are placed, which are
	 * created (exclusive, device-plugin: charged to the ResourceQuota). */
	struct carve_pod_place *pl;
	bool *placed;
	bool *created;
	int nplaced;
	int64_t enq;              /* baseline queue order: arrival or last requeue */
	int64_t partial_since;    /* baseline: first pod of this attempt placed; -1 none */
	bool never_fits;          /* baseline: can never run in its model (never queued) */
	bool keep_sharing;        /* baseline: the device plugin's MIG and time-slicing
				   * are kept (device-plugin, kueue), not turned whole */
	/* kueue: the workload in s->kad's engine (-1: not in it), whether
	 * Kueue admitted it (its pods are being placed or run), the engine
	 * cycle of that admission, how many times waitForPodsReady evicted
	 * it, and the key of its latest re-added workload (owned). */
	int kwl;
	bool kadmitted;
	int kcycle;
	int nrequeue;
	char *kkey;
	/* kueue, from the engine's status at admission: per podSet the pods
	 * admitted (kcount[p], fewer than asked under partial admission) and
	 * the ResourceFlavors assigned (kflv[p * SIM_KFLV .. ], NULL-ended
	 * when fewer), whose nodeLabels Kueue injects into the pods'
	 * nodeSelector.  Both owned, NULL before the first admission. */
	int *kcount;
	const struct carve_mf_flavor **kflv;
	/* Window metrics (metrics.c, sim_job_running/sim_job_failed): */
	int64_t all_pods;         /* first time every pod (or, partially admitted,
				   * every admitted pod) ran at once; valid when
				   * has_all_pods */
	bool has_all_pods;
	int64_t attempt_t;        /* multi-pod: when attempted first became true */
	bool has_attempt_t;
	int64_t fail_t;           /* multi-pod: when failed_first first became true */
	bool has_fail_t;
	bool partial;             /* carve, kueue: admitted with fewer pods than asked */
	int adm_pods;             /* carve, kueue: pods of the current admission
				   * (0: not admitted, or every pod) */
	double asked_ge;          /* GE its pods ask for (sim_job_asked_ge) */
	int64_t ready;            /* when useful work of the current run starts
				   * (carve: admission + MIG reconfiguration delay) */
	uint32_t *rgpus;          /* carve, --mig dynamic: the repartitioned GPUs the
				   * current run holds (counted in mig_hold) */
	size_t nrgpus;
};

/* One ResourceQuota entry (exclusive, device-plugin): namespace ns may
 * have requests of resource res up to hard (milli-units); used is what
 * its created pods request. */
struct srq {
	const char *ns, *res;
	int64_t hard, used;
};

struct squeue {
	const char *name;
	double nominal;           /* GPU-equivalents */
	double used;              /* GPU-equivalents held now */
	double used_area;         /* GE x seconds, the whole run (GPU-hours per job) */
	double w_used_area, w_borrowed_area; /* GE x seconds inside the window */
	size_t completed, preemptions, jobs;
};

/* A job class of the trace (carve_job.job_class): per-class metrics. */
struct sclass {
	const char *name;         /* borrowed from the first job of the class */
	double used;              /* GPU-equivalents held now */
	double used_area;         /* GE x seconds */
};

/* Event kinds; at one time they apply in the order they were pushed. */
enum { EV_COMPLETE = 0, EV_TIMEOUT, EV_ARRIVE, EV_REQUEUE /* kueue: backoff over */,
       EV_READY /* carve: MIG reconfiguration over */ };

struct event {
	int64_t t;
	uint64_t seq;             /* insertion order: ties */
	int kind;                 /* EV_* (replay.c) */
	uint32_t job;
	uint32_t gen;
};

struct carve_sim {
	struct carve_cluster *empty; /* quota only (no nodes): the empty cluster s->c */
	size_t ntrace;            /* jobs 0 .. ntrace-1 come from the trace, the rest
				   * from the manifests' Workloads (o.workloads) */
	struct carve_jobs *own;   /* with o.workloads: the trace's jobs and the
				   * pending Workloads' (s->js points here) */
	struct carve_manifests *m;
	const struct carve_jobs *js;
	struct carve_sim_opts o;
	const char *policy;
	uint64_t seed;
	struct carve_admission *ad;   /* engine, inventory, placer (carve mode) */
	const struct carve_cluster *c; /* the cluster being placed on */
	struct carve_placer *p;       /* the placer being placed with */
	/* Baseline: a copy of the cluster as the device plugin serves it
	 * (exclusive: every GPU whole) and its placer. */
	struct carve_cluster *bc;
	struct carve_placer *bp;
	struct carve_placer *bprobe; /* baseline: the empty copy, for "can it ever run" */
	size_t never_fit;         /* baseline: jobs that can never run in its model */
	struct srq *rq;           /* exclusive, device-plugin: the ResourceQuotas */
	size_t nrq;
	struct carve_admission *kad; /* kueue: quota-only engine (no nodes) */
	int64_t pods_ready_timeout;  /* kueue: waitForPodsReady timeout, seconds */
	bool gang_timeout_given;  /* the caller set o.gang_timeout */
	/* The tolerations queue q's pods carry (those of its ResourceFlavors;
	 * in the baseline, as a team writes them into its pod specs):
	 * qtol[qtol_off[q] .. qtol_off[q + 1]). */
	struct carve_toleration_spec *qtol;
	size_t *qtol_off;

	size_t njobs;
	struct sjob *jobs;
	size_t nqueues;
	struct squeue *queues;
	size_t nclasses;
	struct sclass *classes;       /* in order of first appearance in the trace */
	size_t npools;
	const char **pool_names;
	uint32_t *node_pool;          /* node id -> pool index */
	double *pool_cap;             /* GPUs per pool */
	double *pool_alloc, *pool_work; /* GE held now */
	double cap;                   /* GPUs in the cluster */
	double alloc, work;           /* GE held now */

	/* event heap */
	struct event *heap;
	size_t nheap, capheap;
	uint64_t seq;

	int64_t now, last_t;
	bool started;
	size_t nevents, skipped, left, rejected;
	size_t preemptions, gang_timeouts, completed;
	double frag_now;
	uint32_t *active;             /* carve mode: jobs in the engine */
	size_t nactive, capactive;
	uint32_t *waiting;            /* baseline: jobs not fully placed */
	size_t nwaiting, capwaiting;

	/* The window (docs/simulator.md, "Window, waits and GPU-hours"): from
	 * the first arrival to the trace's end (the latest arrival + duration)
	 * or to `until` (win_until), fixed when the run starts; the w_ areas
	 * integrate inside it only. */
	int64_t win_start, win_end;
	bool win_until;
	double w_alloc_area, w_work_area, w_frag_area;
	/* The backlog at the window's end (backlog_done once recorded). */
	bool backlog_done;
	size_t bl_waiting, bl_running;
	double bl_left;           /* GE x seconds of work left */
	int64_t last_done;        /* latest completion */
	size_t partial;           /* jobs admitted with fewer pods than asked */
	/* --mig dynamic (carve mode): repartitions counted, the delay, and per
	 * GPU how many running jobs hold a device of it while it stands
	 * repartitioned (a repartition found on a GPU nobody holds is new). */
	size_t mig_reparts;
	int64_t mig_delay;
	int32_t *mig_hold;
	/* per GPU: when its latest repartition's reconfiguration is over; a
	 * job placed on an instance of it works from then on at the earliest */
	int64_t *mig_ready;

	/* snapshots: t then npools alloc, npools work, nqueues used */
	size_t nsnap, capsnap, snapw;
	double *snaps;
};

/* ---- replay.c ---- */
/* Schedules an event at t; one at CARVE_SIM_TIME_MAX or later never
 * happens and is dropped (0).  0 or CARVE_ENOMEM. */
int sim_push(struct carve_sim *s, int64_t t, int kind, uint32_t job);
/* t + d for times (d >= 0), saturating at CARVE_SIM_TIME_MAX: the one way
 * the simulator adds times, so no option or trace overflows the clock. */
int64_t sim_time_add(int64_t t, int64_t d);
/* Run time of `work` seconds of full-size work on adm of a job's npods
 * pods (partial admission): work x npods / adm, rounded up to the second
 * (no work is lost), saturating; work itself when adm is 0 or >= npods. */
int64_t sim_scaled_run(int64_t work, int npods, int adm);
/* A checkpointing job losing its run at s->now keeps the full-size work it
 * did since it started working (jb->ready): seconds x admitted / asked
 * pods, rounded down; at least 1 s of work is left.  A job without
 * checkpointing keeps nothing (its remaining is reset when it starts). */
void sim_keep_progress(const struct carve_sim *s, struct sjob *jb);
/* Pod request of podSet p of job jb as the engine's placer builds it,
 * from the job's bridged spec (borrows from it). */
void sim_pod_req(const struct sjob *jb, size_t p, struct carve_pod_req *r);
/* GPU-equivalents of one device of placement on the placer's GPUs. */
double sim_dev_ge(const struct carve_sim *s, const struct carve_placer *p,
		  const struct carve_dev *d);
/* GPU-equivalents one unit of resource name stands for (quota). */
double sim_res_ge(const struct carve_sim *s, const char *name);
/* GPU-equivalents one pod of ps asks for (its quota charge). */
double sim_podset_ge(const struct carve_sim *s, const struct carve_job_podset *ps);
bool sim_is_gpu_res(const char *name);
/* GE the pods of jb ask for: per GPU unit its quota GE in the first flavor
 * of the job's ClusterQueue that covers it (sim_res_ge without one); a
 * fraction milli/1000.  "asked" GPU-hours and the backlog use it. */
double sim_job_asked_ge(const struct carve_sim *s, const struct sjob *jb);

/* Pods of podSets a and b have the same shape: requests, fraction, models
 * and selector, compared by value. */
bool sim_same_pod(const struct carve_job_podset *a, const struct carve_job_podset *b);
/* Builds qtol/qtol_off from the manifests (queue i = ClusterQueue i). */
int sim_queue_tolerations(struct carve_sim *s);

/* ---- metrics.c ---- */
/* sim_hold's node for what a quota-only run holds: no pool, no node. */
#define SIM_NO_NODE UINT32_MAX
/* Adds to what jb holds: alloc GE (devices reserved) and work GE (devices
 * working) on node; see the invariant above. */
int sim_hold(struct carve_sim *s, struct sjob *jb, uint32_t node, double alloc, double work);
/* Takes off everything jb holds. */
void sim_unhold(struct carve_sim *s, struct sjob *jb);
/* Integrates the time-weighted metrics up to t and moves the clock. */
void sim_advance(struct carve_sim *s, int64_t t);
int sim_snapshot(struct carve_sim *s);
void sim_measure_frag(struct carve_sim *s);
/* Every model calls this when all pods of jb (all admitted pods) are
 * placed and the job starts: records the first GPU and the first attempt
 * (multi-pod jobs) now, and sets jb->ready = at, when they start working;
 * the wait until every pod runs ends at at when at <= now (otherwise the
 * caller records all_pods when at comes: carve's MIG delay). */
void sim_job_running(struct carve_sim *s, struct sjob *jb, int64_t at);
/* A multi-pod job's attempt failed (timed out, preempted): failed_first
 * and its time. */
void sim_job_failed(struct carve_sim *s, struct sjob *jb);
/* Fixes the window (at the first run call; until < 0: the trace's span). */
void sim_window_open(struct carve_sim *s, int64_t until);
/* Records the backlog at the window's end (once; the state now). */
void sim_window_backlog(struct carve_sim *s);

/* ---- baseline.c ---- */
int sim_base_init(struct carve_sim *s, struct carve_error *err);
/* The baseline request of one pod of ps: whole GPUs on a node of the
 * matching kind.  sel has room for the podSet's nselector + 1 labels; key (keylen
 * bytes) holds the kind label's key. */
void sim_base_pod_req(const struct sjob *jb, size_t p, struct carve_pod_req *r,
		      struct carve_label *sel, char *key, size_t keylen);
void sim_base_free(struct carve_sim *s);
int sim_base_arrive(struct carve_sim *s, uint32_t job);
int sim_base_complete(struct carve_sim *s, uint32_t job);
int sim_base_timeout(struct carve_sim *s, uint32_t job);
/* kueue: the backoff after a waitForPodsReady eviction is over. */
int sim_base_requeue(struct carve_sim *s, uint32_t job);
int sim_base_pass(struct carve_sim *s);
/* One line saying what the run's baseline model is (docs/simulator.md,
 * "Baselines"); NULL for carve mode. */
const char *sim_base_model(const struct carve_sim *s);
/* kueue: the backoff before the n-th requeue (n >= 1) after a
 * waitForPodsReady eviction, seconds. */
int64_t sim_kueue_backoff(int n);

#endif
