/*
 * admit_int.h - private layout of the admission engine, shared by
 * quota.c (the quota tree), flavor.c (flavor assignment), preempt.c
 * (victim selection), admit.c (engine object, lists, placement),
 * admit_cycle.c (the cycle), admit_index.c (indexes) and admit_check.c
 * (the invariant checker).
 *
 * Invariants:
 *   - Quota is tracked per "fr": a (flavor, resource) pair that some
 *     ClusterQueue or Cohort lists; frs are dense ids 0..nfr-1 assigned at
 *     finalize.  A pair nobody lists has no fr and zero quota everywhere.
 *   - The quota tree holds ClusterQueues (leaves) and Cohorts; usage[fr]
 *     of a cohort is the sum over its children of what each uses beyond its
 *     guaranteed (non-lendable) quota, kept exact by carve__qt_add_usage().
 *   - A workload's usage list (struct frq) is what it charges while
 *     admitted; the tree is charged and uncharged only through carve__wl_charge().
 *   - An admitted workload is in its queue's admitted list (cq.wls, at
 *     wl.qpos) with a victim record beside it (cq.vr) that matches it; a
 *     pending one is in its queue's heap or set-aside list (admit_index.c);
 *     a marked one is in adm.marked.
 *   - A pending workload with wl.waiting set has the status "waiting
 *     behind the head of its queue" (or "stopped") as of adm.cycle_done;
 *     one that may become so at the end of a cycle is in adm.visit.
 * Nothing per cycle or per head is proportional to the number of
 * workloads (docs/internals/ADMISSION-PERF.md).
 * Everything is allocated from the engine's arena or with carve_malloc
 * and owned by struct carve_adm.
 */
#ifndef CARVE_ADMIT_INT_H
#define CARVE_ADMIT_INT_H

#include "carve/arena.h"
#include "carve/admit.h"
#include "carve/place.h"
#include "carve/resource.h"

#define QTY_INF INT64_MAX

/* Fair sharing's own paths (off by default): kept out of line and out of
 * the way of the classical paths' code, which they must not slow down. */
#if defined(__GNUC__)
#define CARVE__COLD __attribute__((cold, noinline))
#else
#define CARVE__COLD
#endif

struct frq {
	int fr;
	int64_t q;
};

/* A quota-tree node: a ClusterQueue or a Cohort. */
struct qnode {
	const char *name;
	bool is_cq;
	int cq;          /* index in adm->cqs when is_cq, else -1 */
	int parent;      /* node index, -1 for a root */
	int depth;       /* 0 for a root */
	int height;      /* distance to its deepest leaf: 0 for a ClusterQueue */
	int root;        /* node index of its root (itself for a root) */
	int rcq_first, rcq_n; /* at a root: its ClusterQueues, adm->root_cqs[first ..] */
	int64_t *nominal, *blimit, *llimit; /* per fr; QTY_INF = no limit */
	int64_t *subtree;    /* SubtreeQuota: own nominal + children's lendable subtree */
	int64_t *usage;
	int64_t fair_weight_milli;
	struct carve_rgroup_spec *groups; /* copied spec */
	size_t ngroups;
	bool defined;    /* a Cohort object (or CQ) was added, not just named */
	const char *parent_name;
};

/* An entry of a pending heap: the workload and the numbers queue order
 * looks at first (creation time, INT64_MIN without one; priority), so
 * most comparisons need not touch the workload. */
struct pqent {
	int64_t created;
	int32_t priority;
	uint32_t id;
};

/* What victim search needs of an admitted workload, beside its id in its
 * queue's admitted list, so that filtering and ordering candidates does
 * not touch the workloads. */
struct vrec {
	uint64_t mask;     /* carve__wl_frmask */
	int64_t at;        /* admitted_at */
	int32_t priority;
	uint32_t rank;     /* its key's rank (krank), UINT32_MAX when not ranked */
	bool has_at;       /* has_admitted_at */
};

/* A ClusterQueue: policies, and its resource groups as flavor/resource ids. */
struct cq_group {
	int nres, nflv;
	int *res;        /* resource ids */
	int *flv;        /* flavor ids, preference order */
};

struct cq {
	struct carve_cq_spec spec; /* strings point into the arena */
	int node;        /* its qnode */
	int ngroups;
	struct cq_group *groups;
	int group_of[CARVE_RES_MAX]; /* resource id -> group index, -1 */
	uint32_t *wls;   /* admitted workloads (ids), unordered; wl.qpos is the index */
	struct vrec *vr; /* parallel to wls: what victim search reads of each */
	size_t nwls, capwls; /* room for one more admission is made before a cycle
			      * may admit (carve__cq_reserve_admitted) */
	struct pqent *pend; /* pending workloads that may be heads: a binary heap
			     * in queue order (admit_index.c) */
	size_t npend, cappend;
	uint32_t *aside; /* pending workloads set aside (BestEffortFIFO) */
	size_t naside, capaside;
	size_t nall;     /* workloads ever added; all lists have room for all */
	bool held_by_nofit; /* BestEffortFIFO bookkeeping, see admit.c */
	int claim;       /* the pending workload that issued preemptions and waits
			  * for them: the queue's head while its last decision
			  * is PreemptionIssued (head_of); -1 none */
};

struct flavor {
	struct carve_flavor_spec spec; /* copied into the arena */
	const char *preempt_why;       /* flavor.c's "preemption needed" text, once made */
};

struct podset {
	struct carve_podset_spec spec; /* copied */
	int nreqs;
	int *res;                      /* resource id of each request (nreqs, arena) */
	int64_t *milli;                /* ... and its per-pod quantity */
	/* Per-pod placement request (only with a placer, else NULL): cpu,
	 * memory and GPU kind; node constraints are added per assignment
	 * (flavors).  In the arena. */
	struct carve_pod_req *preq;
};

/* Flavor chosen per (podset, request): fr ids (or -1) and flavor ids.
 * One carve_malloc'd block (carve__assignment_alloc), freed through use. */
struct assignment {
	int32_t *count;  /* per podset */
	int *flavor;     /* [podset * CARVE_RES_MAX + req] flavor id, -1 unassigned;
			  * only req < the podset's nreqs is set */
	struct frq *use; /* merged usage: room for one entry per request */
	size_t nuse;
};

/* What the engine keeps of a workload's spec (the rest is in ps). */
struct wl_spec {
	const char *key;              /* arena copy */
	const char *cq;               /* its queue's name */
	int64_t created;
	int32_t priority;
	bool has_created;
};

struct wl {
	struct wl_spec spec;
	int cq;
	int npodsets;
	struct podset *ps;
	uint8_t state;            /* enum carve_wl_state */
	uint8_t preempt_reason;   /* enum carve_preempt_reason */
	uint8_t pending_reason;   /* enum carve_pending_reason */
	bool marked, evicted, admitted_by_engine, borrowing;
	bool inadmissible;        /* BestEffortFIFO: set aside until something changes
				   * (then in its queue's aside list, else in its heap) */
	bool waiting;             /* pending behind its queue's head: its status is
				   * NoFit "waiting behind ..." as of the last cycle
				   * (adm->cycle_done); fields below not yet written */
	bool in_visit;            /* in adm->visit */
	bool has_admitted_at;
	uint32_t qpos;            /* position in its queue's admitted list */
	uint32_t preemptor;
	int cycle;
	const char *message;      /* "" or a literal or interned (carve__adm_intern) */
	struct assignment adm;    /* valid while admitted */
	int64_t admitted_at;      /* for victim ordering */
	/* Placement while admitted (with a placer): npl places, podset by
	 * podset in adm.count order; carve_malloc'd, NULL when not placed. */
	struct carve_pod_place *pl;
	size_t npl;
	/* Status view storage, carve_malloc'd when first asked for: the view,
	 * and its podSet results (one block, built once per admission and
	 * dropped when the admission changes). */
	struct carve_wl_status *st;
	struct carve_ps_result *psr;
};

/* A victim (preempt.c). */
struct target {
	uint32_t wl;
	enum carve_preempt_reason reason;
};

/* Victims the preemption oracle found for one flavor of the assignment
 * being made (flavor.c), for evaluate() to reuse (admit.c). */
#define OCACHE_SLOTS 8
struct ocache {
	int need[CARVE_RES_MAX];
	int nneed;
	struct frq use[CARVE_RES_MAX];
	size_t nuse;
	struct target *targets; /* carve_malloc'd, grown as needed */
	size_t ntargets, cap;
};

/* Open-addressing hash map name -> id (admit_index.c); hash 0 = empty. */
struct idslot {
	uint32_t hash, id;
};

struct idmap {
	struct idslot *slots;
	size_t cap, n;
};

/*
 * The engine.  Its state is grouped by owner and lifetime:
 *   cat    the objects: flavors, ClusterQueues (with their admitted lists
 *          and pending heaps) and workloads, by dense id; filled by the
 *          carve_adm_add_* calls (admit.c), never shrunk.
 *   qt     the quota tree (quota.c): nodes with per-fr quota and usage,
 *          the fr ids, each root's ClusterQueues; built by carve__qt_finalize(),
 *          usage changed only through carve__qt_add_usage().
 *   ix     indexes over cat (admit_index.c): hash maps, interned messages,
 *          key ranks; derived data, rebuilt or extended, never the truth.
 *   sched  scheduling state carried from one cycle to the next (admit.c,
 *          admit_cycle.c): the cycle counter and time, the marked victims,
 *          the workloads whose "waiting" status may change.
 *   cyc    scratch of one cycle or one call (admit_cycle.c, flavor.c,
 *          preempt.c): buffers kept only to avoid allocating; nothing in
 *          it is meaningful between calls.
 * Everything is owned by the engine and freed by carve_adm_destroy().
 */
struct adm_catalog {
	struct carve_resreg *res;
	bool finalized;
	struct flavor *flavors;
	size_t nflavors, capflavors;
	struct cq *cqs;
	size_t ncqs, capcqs;
	struct wl *wls;
	size_t nwls, capwls;
	struct carve_placer *placer;        /* borrowed; NULL: quota-only admission */
	const struct carve_cluster *cluster; /* the placer's, borrowed */
};

struct adm_quota {
	struct qnode *nodes;
	size_t nnodes, capnodes;
	int nfr;
	int *fr_of;      /* [flavor * CARVE_RES_MAX + res] -> fr or -1 */
	int *fr_flavor, *fr_res;
	int *root_cqs;   /* ClusterQueue ids grouped by root, ascending within one */
};

struct adm_index {
	struct idmap wlmap, cqmap, msgmap; /* workloads by key, queues by name, messages */
	const char **msgs;
	size_t nmsgs, capmsgs;
	const char *last_msg; /* the message interned last */
	/* Key ranks (admit_index.c): krank[id] orders the keys of workloads
	 * 0 .. nranked-1 as strcmp does; rebuilt when sorting by key costs
	 * more than rebuilding would (krank_debt). */
	uint32_t *krank;
	size_t nranked, krank_debt;
};

struct adm_sched {
	int cycle;
	int cycle_done;     /* last cycle that ran to its end */
	int64_t now;        /* time of the current (last) cycle */
	bool changed;       /* something was admitted or released since the last cycle */
	int set_aside;      /* BestEffortFIFO heads set aside in the last cycle */
	bool fair_sharing;  /* order heads and preempt by dominant resource share
			     * (its settings: struct adm_fair) */
	/* Workloads whose "waiting behind the head" status may need setting at
	 * the end of the next cycle (added, evicted, set-aside cleared, heads). */
	uint32_t *visit;
	size_t nvisit, capvisit;
	uint32_t *marked;   /* marked workloads (may hold finished ones: filtered) */
	size_t nmarked, capmarked;
};

struct adm_scratch {
	struct entry *ents; /* the cycle's heads (admit_cycle.c), room for every queue */
	struct entry **ord; /* ... in the order they are processed */
	int *skip_cohort;   /* per node: preemptions a root's heads issued this cycle */
	struct target *scratch_targets; /* room for every workload: preemption oracle */
	void *scratch_keys;             /* preempt.c: candidate sort keys */
	size_t capkeys;
	uint32_t *scratch_cands;        /* preempt.c: candidate ids */
	size_t capscratch;
	struct ocache ocache[OCACHE_SLOTS]; /* oracle results of the last assignment */
	int nocache;
};

/* Fair sharing's settings (admit.c setters; read by preempt.c and
 * admit_cycle.c). */
struct adm_fair {
	/* fairSharing.preemptionStrategies (enum carve_fs_strategy), in
	 * order; none set (0) means Kueue's default, both */
	uint8_t strategy[2];
	int nstrategy;
	bool no_within_nominal; /* gate FairSharingPreemptWithinNominal off */
	bool no_non_borrowing;  /* gate FairSharingPrioritizeNonBorrowing off */
};

struct carve_adm {
	struct carve_arena arena;
	struct adm_catalog cat;
	struct adm_quota qt;
	struct adm_index ix;
	struct adm_sched sched;
	struct adm_scratch cyc;
	struct carve_wl_status st_oom; /* the view when a workload's could not be allocated */
	struct adm_fair fs;
};

/* ---- quota.c ---- */
/* A spec's fair_weight_milli as the node keeps it: 0 (unset) is weight 1,
 * CARVE_FAIR_WEIGHT_ZERO is 0. */
static inline int64_t carve__fair_weight(int64_t spec)
{
	return spec > 0 ? spec : spec == CARVE_FAIR_WEIGHT_ZERO ? 0 : 1000;
}
int carve__qt_finalize(struct carve_adm *a, struct carve_error *err);
int carve__fr_id(const struct carve_adm *a, int flavor, int res);
int64_t carve__qt_guaranteed(const struct carve_adm *a, int node, int fr);
int64_t carve__qt_available(const struct carve_adm *a, int node, int fr);
int64_t carve__qt_potential(const struct carve_adm *a, int node, int fr);
bool carve__qt_borrowing_with(const struct carve_adm *a, int node, int fr, int64_t val);
bool carve__qt_borrowing(const struct carve_adm *a, int node, int fr);
/* The lowest subtree (node index) holding val more of fr for node; node
 * itself when it need not borrow.  Its height is the borrowing level. */
int carve__qt_fit_subtree(const struct carve_adm *a, int node, int fr, int64_t val);
int carve__qt_borrow_level(const struct carve_adm *a, int node, int fr, int64_t val);
void carve__qt_add_usage(struct carve_adm *a, int node, int fr, int64_t delta);
/* Whether adding delta >= 0 of fr at node (use: every entry) keeps every
 * usage up the tree within INT64_MAX milli; usage is exact, never clamped,
 * so nothing is charged that these refuse. */
bool carve__qt_can_add(const struct carve_adm *a, int node, int fr, int64_t delta);
bool carve__qt_can_charge(const struct carve_adm *a, int node, const struct frq *use, size_t n);
/* The most any delta of fr at node may be for carve__qt_can_add (a lower
 * bound: the smallest room left at node or above). */
int64_t carve__qt_headroom(const struct carve_adm *a, int node, int fr);
int carve__qt_root(const struct carve_adm *a, int node);
bool carve__qt_fits(const struct carve_adm *a, int node, const struct frq *use, size_t n);
/* Fair-sharing share of a node at its current usage (quota.c): value is
 * the weighted dominant resource share in thousandths rounded up
 * (INT64_MAX: weight 0 and borrowing), ratio the unweighted one. */
struct carve_share {
	int64_t value;    /* rounded up, thousandths; INT64_MAX: infinite */
	double ratio;
	bool borrowing;   /* uses more than its subtree quota of something */
	double weighted;  /* ratio / weight, unrounded: what finite shares compare by */
};
struct carve_share carve__qt_share(const struct carve_adm *a, int node);
int carve__share_cmp(const struct carve_share *x, const struct carve_share *y);
bool carve__qt_borrowing_on(const struct carve_adm *a, int node, const struct frq *use, size_t nuse);
void carve__qt_charge(struct carve_adm *a, int node, const struct frq *use, size_t nuse, int sign);
bool carve__qt_charge_checked(struct carve_adm *a, int node, const struct frq *use, size_t nuse);

/* ---- admit_index.c ---- */
int carve__idmap_find(const struct idmap *m, const char *key,
	       const char *(*key_fn)(const void *, uint32_t), const void *ctx);
/* Room for one more; then carve__idmap_put never fails. */
int carve__idmap_reserve(struct idmap *m, const char *(*key_fn)(const void *, uint32_t),
		  const void *ctx);
void carve__idmap_put(struct idmap *m, const char *key, uint32_t id);
void carve__idmap_free(struct idmap *m);
const char *carve__adm_intern(struct carve_adm *a, const char *s);
int carve__wl_queue_cmp(const struct wl *x, const struct wl *y);
/* Whether krank orders every one of ids; else notes the n*log(n) key
 * comparisons a sort will do, rebuilding the ranks when those add up to
 * more than a rebuild (then true when it succeeded). */
bool carve__krank_ready(struct carve_adm *a, const uint32_t *ids, size_t n);
void carve__pq_push(struct carve_adm *a, struct cq *q, uint32_t id);
void carve__pq_remove(struct carve_adm *a, struct cq *q, uint32_t id);
int carve__pq_top(struct carve_adm *a, struct cq *q);
void carve__aside_push(struct carve_adm *a, struct cq *q, uint32_t id);

/* ---- admit.c: the objects, their lists, placement ---- */
void carve__wl_charge(struct carve_adm *a, struct wl *w, int sign);
/* Room for need elements in *arr (at least doubling); CARVE_ENOMEM. */
int carve__adm_reserve(void **arr, size_t *cap, size_t need, size_t size);
/* Room in q's admitted list for one more; CARVE_ENOMEM. */
int carve__cq_reserve_admitted(struct cq *q);
/* Into / out of q's admitted list (room made by carve__cq_reserve_admitted),
 * after the workload's assignment and admission time are set. */
void carve__cq_add_wl(struct carve_adm *a, struct cq *q, uint32_t id);
void carve__cq_del_wl(struct carve_adm *a, struct cq *q, uint32_t id);
/* Into / out of its queue's pending heap (room reserved at add time). */
void carve__cq_add_pending(struct carve_adm *a, uint32_t id);
void carve__cq_del_pending(struct carve_adm *a, uint32_t id);
/* Onto sched.visit once (never allocates). */
void carve__visit_add(struct carve_adm *a, uint32_t id);
/* Places every pod of w at the counts of as, all or nothing, and keeps the
 * placement on w: 0, CARVE_ENOFIT or CARVE_EINVAL (why says why; nothing
 * held), CARVE_ENOMEM.  carve__unplace_wl gives it back. */
int carve__place_wl(struct carve_adm *a, struct wl *w, const struct assignment *as, char *why,
	     size_t whysize);
void carve__unplace_wl(struct carve_adm *a, struct wl *w);
/* Victims that make room on the nodes for w's gang under as (replacing
 * *tout, carve_malloc'd): how many, 0 when none helps, or CARVE_ENOMEM. */
int carve__place_victims(struct carve_adm *a, struct wl *w, const struct assignment *as,
		  struct target **tout);
/* Bit fr set for each fr w's admission charges (q > 0); all bits when
 * there are more than 64 frs (then test wl's usage itself). */
uint64_t carve__wl_frmask(const struct carve_adm *a, const struct wl *w);
int64_t carve__sat_add(int64_t x, int64_t y);

/* ---- flavor.c ---- */
enum gmode { GM_NOFIT = 0, GM_NOCAND, GM_PREEMPT, GM_RECLAIM, GM_FIT };

struct assign_result {
	enum gmode mode;    /* worst over podsets */
	int borrow_level;   /* highest over podsets: height of the lowest cohort
			     * subtree holding the request (after preemption
			     * when it preempts), 0 without borrowing */
	bool borrowing;
	char why[512];      /* for NoFit */
	int need[128];      /* frs whose request needs preemption */
	int nneed;
};

bool carve__flavor_matches(const struct carve_adm *a, const struct podset *ps, int flavor,
		    char *why, size_t whysize);
int carve__assign_flavors(struct carve_adm *a, struct wl *w, const int32_t *counts,
		   struct assignment *out, struct assign_result *res);
/* The same, never choosing a flavor id f with skip[f] (skip: nflavors
 * entries, or NULL): a flavor whose nodes cannot hold the gang. */
int carve__assign_flavors_skip(struct carve_adm *a, struct wl *w, const int32_t *counts,
			const bool *skip, struct assignment *out, struct assign_result *res);
void carve__assignment_free(struct assignment *as);
/* Counts 0, flavors -1, no usage; CARVE_ENOMEM. */
int carve__assignment_alloc(struct assignment *as, const struct wl *w);

/* ---- preempt.c ---- */

/*
 * Victims for w (whose usage would be `use`) given the frs needing
 * preemption; fills targets (capacity: number of workloads) and returns how
 * many, 0 when preemption cannot help.  Leaves the tree as it found it.
 */
int carve__preempt_targets(struct carve_adm *a, struct wl *w, const struct frq *use, size_t nuse,
		    const int *need, int nneed, struct target *targets);

#endif
