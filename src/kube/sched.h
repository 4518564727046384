/*
 * sched.h - private to src/kube: `carve scheduler`, the loop that watches
 * the cluster (sched.c), decides with the plan (include/carve/plan.h) and
 * carries the plan out through the API (act.c).  Private names start with
 * sched_ (the loop) and act_ (the actions).
 *
 * Threads: the loop thread owns the stores and the act state; act_run's
 * bind workers only send requests and fill their own result slots; act's
 * writer thread sends the queued pending-pod writes (the queue under its
 * mutex) and reads nothing else of the act state.
 */
#ifndef CARVE_KUBE_SCHED_H
#define CARVE_KUBE_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "carve/kube.h"
#include "carve/plan.h"

/* What `carve scheduler` was asked (cmd_scheduler.c fills it). */
struct sched_opts {
	const char *kubeconfig;      /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
	const char *context;         /* NULL: current-context */
	const char *scheduler_name;  /* "carve" */
	enum carve_queues_mode queues;
	const char *policy;          /* NULL: binpack */
	uint64_t seed;
	bool leader_elect;
	const char *lease_ns;        /* NULL: the configuration's namespace */
	const char *lease_name;      /* "carve-scheduler" */
	const char *identity;        /* NULL: hostname_<random hex> */
	double qps;
	int burst;
	const char *metrics_addr;    /* "host:port", ":port", or NULL/"0": off */
	int max_seconds;             /* > 0: exit 0 after that long (tests) */
	bool verbose;                /* log every cycle */
	bool mig_dynamic;            /* Dynamic MIG (carve_plan_opts.mig_dynamic) */
};

/*
 * Runs the scheduler until SIGTERM/SIGINT (exit 0, the lease released),
 * --max-seconds (exit 0), or the loss of leadership (exit 1: crash-only,
 * the Deployment restarts it).  Returns the process exit code; a setup
 * failure (no kubeconfig, a bad setting, a server address that cannot be
 * used) prints the reason on stderr and returns 1.
 */
int sched_run(const struct sched_opts *o);

/* Prints one log line on stderr: "carve scheduler: " + the message
 * (escaped as diagnostics are: it carries names from the cluster). */
void sched_logf(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

/* ---- act.c: carrying a plan out ---- */

/* The stores the actions read (to skip writes that change nothing) and
 * update (the assume cache: a pod bound is put in pods at once). */
struct act_stores {
	struct carve_kube_store *pods;
	struct carve_kube_store *cqs, *lqs;       /* NULL in --queues none */
	struct carve_kube_store *vcpgs, *kaipgs;  /* Volcano, KAI PodGroups */
	struct carve_kube_store *nodes;           /* for Dynamic MIG layouts; may be NULL */
};

/* What one act_run did, for the log and the metrics. */
struct act_result {
	size_t bound, bind_conflicts, bind_errors;
	size_t pending_updates, events, preempted, nominated, released;
	size_t status_updates, errors;
	size_t layouts;           /* nodes given a new carve.dev/mig-layout */
	size_t transient;         /* binds or writes that got 429/5xx or no answer */
	size_t status_queued;     /* pending-pod writes handed to the writer thread */
	bool lost;                /* stopped: leadership lost */
	double bind_seconds_sum;  /* latency of the successful binds, summed */
};

struct act;
struct kube_registry;

/* How act_create sets the actions up. */
struct act_opts {
	struct carve_kube *k;          /* binds, preemption, queue status (borrowed) */
	struct carve_kube *status_k;   /* the pending-pod writer's own client (its own
					* share of the rate budget), borrowed; NULL: k */
	struct carve_kube_elector *el; /* checked before every write; NULL: always leads */
	const char *identity;          /* copied; reportingInstance of every event */
	enum carve_queues_mode queues;
	int workers;                   /* bind threads (0: 8) */
	struct kube_registry *reg;     /* metrics fed, borrowed, or NULL */
	void (*beat)(void *ctx);       /* called while act works (health heartbeat), or NULL */
	void *beat_ctx;
	size_t status_queue_max;       /* pending-pod writes queued at most (0: 10000) */
};

/*
 * The actions, and the pending-pod writer thread (PodScheduled=False and
 * FailedScheduling events go through a bounded queue keyed by pod, the
 * latest message winning, drained by that thread through status_k).  NULL
 * on allocation failure.  act_destroy stops the writer (what is still
 * queued is dropped: the next leader writes it again).
 */
struct act *act_create(const struct act_opts *o);
void act_destroy(struct act *a);

/* Whether a write was refused because leadership was lost (the loop exits). */
bool act_lost_leadership(const struct act *a);

/* Pending-pod writes queued now (tests, metrics). */
size_t act_status_queued(struct act *a);

/*
 * Carries p out: binds (concurrently, the pods put in s->pods as bound
 * when the server accepted; the assumed objects are also recorded in
 * assumed when not NULL, a JSON object "ns/name" -> pod), preemption
 * (DisruptionTarget, then delete), nominatedNodeName, releases, pending
 * conditions and FailedScheduling events (rate-limited per pod), queue and
 * PodGroup status (only what changed).  now_ns: CLOCK_REALTIME.  Every API
 * error is logged and counted in r; nothing here fails the loop.  Returns
 * 0, or CARVE_ENOMEM.
 */
int act_run(struct act *a, const struct carve_plan *p, const struct act_stores *s,
	    json_t *assumed, int64_t now_ns, struct act_result *r);

/*
 * Settles the binds that may have succeeded (a timeout or a 5xx: act_run
 * keeps such a pod bound in s->pods and in assumed, holding its devices):
 * one the watch has settled meanwhile (no longer in assumed) is forgotten;
 * for the others a GET of the pod puts the server's truth in s->pods and
 * ends the assumption (404: the pod is gone).  Loop thread, before a
 * cycle.  Returns how many stay unsettled (the GET failed).
 */
size_t act_settle(struct act *a, const struct act_stores *s, json_t *assumed);

/* Posts an events.k8s.io/v1 Event about obj (apiVersion/kind/ns/name/uid
 * read from it): type "Normal" or "Warning", reason, note (cut to 1 KiB).
 * Returns the HTTP status or a negative carve error (logged). */
int act_event(struct act *a, const json_t *obj, const char *type, const char *reason,
	      const char *note, int64_t now_ns);

/* Quantity text of milli-units for resource res ("4", "500m", "64Gi"),
 * into buf (>= 32 bytes); returns buf. */
char *act_qty(const char *res, int64_t milli, char *buf, size_t size);

#endif
