/*
 * test_admit.c - the admission engine's policies one by one, each on a
 * small Kueue manifest: lending and borrowing limits, preemption that
 * cannot help, priority ties broken by creation time, gang and partial
 * admission, StrictFIFO against BestEffortFIFO, reclaim, hierarchical
 * cohort quota, and several cycles with eviction in between.
 */
#include "testutil.h"

#include <stdarg.h>

#include "admit_int.h" /* the corruption test reaches into the engine */
#include "carve/admission.h"

struct run {
	struct carve_manifests *m;
	struct carve_admission *ad;
};

/* Loads yaml, builds the engine and runs `cycles` cycles (evicting marked
 * workloads between them); cycles < 0 runs until stable. */
static bool fair_sharing;

/* carve_adm_check after every cycle of every test. */
static void check_engine(struct carve_adm *a)
{
	struct carve_error err;

	if (carve_adm_check(a, &err))
		fail_msg("carve_adm_check: %s", err.text);
}

static struct run run(const char *yaml, int cycles)
{
	struct run r;
	int c;

	r.m = tu_load(yaml);
	r.ad = carve_admission_build(r.m);
	assert_non_null(r.ad);
	carve_adm_set_fair_sharing(r.ad->adm, fair_sharing);
	if (r.m->diags.nerrors)
		tu_dump(r.m);
	assert_int_equal(r.m->diags.nerrors, 0);
	check_engine(r.ad->adm);
	if (cycles < 0) {
		assert_true(carve_adm_run(r.ad->adm, 0, 100) > 0);
	} else {
		for (c = 0; c < cycles; c++) {
			if (c)
				carve_adm_evict_marked(r.ad->adm);
			assert_true(carve_adm_cycle(r.ad->adm, 0) >= 0);
			check_engine(r.ad->adm);
		}
	}
	check_engine(r.ad->adm);
	return r;
}

static void done(struct run *r)
{
	carve_admission_destroy(r->ad);
	carve_manifests_destroy(r->m);
}

static const struct carve_wl_status *st(const struct run *r, const char *key)
{
	int id = carve_adm_find_workload(r->ad->adm, key);

	if (id < 0)
		fprintf(stderr, "no workload %s\n", key);
	assert_true(id >= 0);
	return carve_adm_status(r->ad->adm, (uint32_t)id);
}

static void assert_admitted(const struct run *r, const char *key, int32_t count)
{
	const struct carve_wl_status *s = st(r, key);

	if (s->state != CARVE_WL_ADMITTED)
		fprintf(stderr, "%s: pending (%s) %s\n", key,
			carve_pending_reason_name(s->pending_reason), s->message);
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_int_equal(s->podsets[0].count, count);
}

static void assert_pending(const struct run *r, const char *key, enum carve_pending_reason why)
{
	const struct carve_wl_status *s = st(r, key);

	assert_int_equal(s->state, CARVE_WL_PENDING);
	assert_int_equal(s->pending_reason, why);
}

#define FLAVOR "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"

/* A ClusterQueue with one gpu quota line; extra goes inside spec. */
#define CQ(name, cohort, quota, extra)                                                \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: " name \
	"}\nspec:\n  " cohort "\n  resourceGroups:\n  - coveredResources: [gpu]\n"     \
	"    flavors:\n    - name: f\n      resources:\n      - " quota "\n" extra      \
	"---\n"                                                                       \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, "   \
	"namespace: " name "}\nspec: {clusterQueue: " name "}\n---\n"

/* A pending workload: namespace (= queue's), name, priority, count, gpus per pod. */
#define WL(ns, name, prio, count, gpu, extra)                                          \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: " name     \
	", namespace: " ns extra "}\nspec:\n  queueName: q\n  priority: " prio "\n"      \
	"  podSets:\n  - name: main\n    count: " count "\n    template:\n      spec:\n" \
	"        containers:\n        - name: c\n          resources: {requests: {gpu: " \
	gpu "}}\n---\n"

#define ADMITTED(ns, name, prio, count, gpu)                                            \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: " name      \
	", namespace: " ns "}\nspec:\n  queueName: q\n  priority: " prio "\n"             \
	"  podSets:\n  - name: main\n    count: " count "\n    template:\n      spec:\n"  \
	"        containers:\n        - name: c\n          resources: {requests: {gpu: "  \
	gpu "}}\nstatus:\n  admission:\n    clusterQueue: " ns "\n    podSetAssignments:\n" \
	"    - {name: main, count: " count ", flavors: {gpu: f}}\n---\n"

static void lending_limit_reached(void **state)
{
	struct run r = run(FLAVOR
			   CQ("a", "cohortName: c", "{name: gpu, nominalQuota: 4, lendingLimit: 1}", "")
			   CQ("b", "cohortName: c", "{name: gpu, nominalQuota: 0}", "")
			   WL("b", "two", "0", "1", "2", "")
			   WL("a", "own", "0", "1", "3", ""), 1);

	(void)state;
	/* a lends at most 1 of its 4: b's 2 can never fit. */
	assert_pending(&r, "b/two", CARVE_PEND_NOFIT);
	assert_non_null(strstr(st(&r, "b/two")->message, "maximum capacity"));
	assert_admitted(&r, "a/own", 1);
	done(&r);
}

static void lending_limit_allows_one(void **state)
{
	struct run r = run(FLAVOR
			   CQ("a", "cohortName: c", "{name: gpu, nominalQuota: 4, lendingLimit: 1}", "")
			   CQ("b", "cohortName: c", "{name: gpu, nominalQuota: 0}", "")
			   WL("b", "one", "0", "1", "1", ""), 1);

	(void)state;
	assert_admitted(&r, "b/one", 1);
	assert_true(st(&r, "b/one")->borrowing);
	done(&r);
}

static void borrowing_limit_reached(void **state)
{
	struct run r = run(FLAVOR
			   CQ("a", "cohortName: c", "{name: gpu, nominalQuota: 2, borrowingLimit: 1}", "")
			   CQ("b", "cohortName: c", "{name: gpu, nominalQuota: 10}", "")
			   WL("a", "three", "0", "3", "1", ""), 1);
	struct run r2 = run(FLAVOR
			    CQ("a", "cohortName: c", "{name: gpu, nominalQuota: 2, borrowingLimit: 1}", "")
			    CQ("b", "cohortName: c", "{name: gpu, nominalQuota: 10}", "")
			    WL("a", "four", "0", "4", "1", ""), 1);

	(void)state;
	assert_admitted(&r, "a/three", 3); /* borrows exactly its limit */
	assert_true(st(&r, "a/three")->borrowing);
	assert_pending(&r2, "a/four", CARVE_PEND_NOFIT); /* 4 > 2 + 1 */
	done(&r);
	done(&r2);
}

static void preemption_cannot_help(void **state)
{
	const char *extra = "  preemption: {withinClusterQueue: LowerPriority}\n";
	/* Asking more than the queue could ever hold: nothing is preempted. */
	struct run r = run(FLAVOR CQ("a", "", "{name: gpu, nominalQuota: 4}", "")
			   ADMITTED("a", "low", "-5", "2", "1")
			   WL("a", "big", "10", "6", "1", ""), 1);
	/* Victims of equal priority are not victims under LowerPriority. */
	struct run r2 = run(FLAVOR "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
			    "metadata: {name: a}\nspec:\n  resourceGroups:\n"
			    "  - coveredResources: [gpu]\n    flavors: [{name: f, resources: "
			    "[{name: gpu, nominalQuota: 4}]}]\n"
			    "  preemption: {withinClusterQueue: LowerPriority}\n---\n"
			    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, "
			    "namespace: a}\nspec: {clusterQueue: a}\n---\n"
			    ADMITTED("a", "peer", "0", "4", "1")
			    WL("a", "same", "0", "1", "1", ""), 1);

	(void)state;
	(void)extra;
	assert_pending(&r, "a/big", CARVE_PEND_NOFIT);
	assert_false(st(&r, "a/low")->marked);
	assert_pending(&r2, "a/same", CARVE_PEND_NOFIT);
	assert_false(st(&r2, "a/peer")->marked);
	done(&r);
	done(&r2);
}

static void priority_preemption_then_admission(void **state)
{
	struct run r = run(FLAVOR "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
			   "metadata: {name: a}\nspec:\n  resourceGroups:\n"
			   "  - coveredResources: [gpu]\n    flavors: [{name: f, resources: "
			   "[{name: gpu, nominalQuota: 4}]}]\n"
			   "  preemption: {withinClusterQueue: LowerPriority}\n---\n"
			   "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, "
			   "namespace: a}\nspec: {clusterQueue: a}\n---\n"
			   ADMITTED("a", "low1", "1", "2", "1")
			   ADMITTED("a", "low2", "2", "2", "1")
			   WL("a", "high", "10", "2", "1", ""), 1);
	const struct carve_wl_status *s;

	(void)state;
	/* Fewest, lowest-priority victims: low1 alone makes room. */
	s = st(&r, "a/low1");
	assert_true(s->marked);
	assert_int_equal(s->preempt_reason, CARVE_PREEMPT_IN_CQ);
	assert_false(st(&r, "a/low2")->marked);
	assert_pending(&r, "a/high", CARVE_PEND_PREEMPTION_ISSUED);
	/* Next cycle: the victim is gone and the preemptor is admitted. */
	carve_adm_evict_marked(r.ad->adm);
	assert_true(carve_adm_cycle(r.ad->adm, 0) > 0);
	assert_admitted(&r, "a/high", 2);
	assert_true(st(&r, "a/low1")->evicted);
	done(&r);
}

static void ties_broken_by_creation_time(void **state)
{
	struct run r = run(FLAVOR CQ("a", "", "{name: gpu, nominalQuota: 1}",
				     "  queueingStrategy: StrictFIFO\n")
			   WL("a", "newer", "0", "1", "1", ", creationTimestamp: '2026-01-02T00:00:00Z'")
			   WL("a", "older", "0", "1", "1", ", creationTimestamp: '2026-01-01T00:00:00Z'"),
			   -1);

	(void)state;
	assert_admitted(&r, "a/older", 1);
	assert_pending(&r, "a/newer", CARVE_PEND_NOFIT);
	done(&r);
}

static void gang_all_or_nothing(void **state)
{
	struct run r = run(FLAVOR CQ("a", "", "{name: gpu, nominalQuota: 3}", "")
			   WL("a", "gang", "0", "4", "1", ""), -1);

	(void)state;
	assert_pending(&r, "a/gang", CARVE_PEND_NOFIT);
	done(&r);
}

static void partial_admission_down_to_min(void **state)
{
	struct run r = run(FLAVOR CQ("a", "", "{name: gpu, nominalQuota: 5}", "")
			   "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
			   "metadata: {name: elastic, namespace: a}\nspec:\n  queueName: q\n"
			   "  podSets:\n  - name: main\n    count: 8\n    minCount: 2\n"
			   "    template:\n      spec:\n        containers:\n        - name: c\n"
			   "          resources: {requests: {gpu: 1}}\n---\n"
			   "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
			   "metadata: {name: floor, namespace: a}\nspec:\n  queueName: q\n"
			   "  priority: -1\n"
			   "  podSets:\n  - name: main\n    count: 8\n    minCount: 6\n"
			   "    template:\n      spec:\n        containers:\n        - name: c\n"
			   "          resources: {requests: {gpu: 1}}\n---\n", -1);

	(void)state;
	assert_admitted(&r, "a/elastic", 5); /* the most that fits */
	assert_pending(&r, "a/floor", CARVE_PEND_NOFIT); /* never below minCount */
	done(&r);
}

static void best_effort_fifo_moves_on(void **state)
{
	struct run be = run(FLAVOR CQ("a", "", "{name: gpu, nominalQuota: 2}",
				      "  queueingStrategy: BestEffortFIFO\n")
			    WL("a", "huge", "5", "1", "3", "")
			    WL("a", "small", "0", "1", "1", ""), -1);
	struct run sf = run(FLAVOR CQ("a", "", "{name: gpu, nominalQuota: 2}",
				      "  queueingStrategy: StrictFIFO\n")
			    WL("a", "huge", "5", "1", "3", "")
			    WL("a", "small", "0", "1", "1", ""), 3);

	(void)state;
	assert_admitted(&be, "a/small", 1);
	assert_pending(&be, "a/huge", CARVE_PEND_NOFIT);
	assert_pending(&sf, "a/small", CARVE_PEND_NOFIT); /* blocked behind its head */
	done(&be);
	done(&sf);
}

static void reclaim_from_borrower(void **state)
{
	struct run r = run(FLAVOR
			   CQ("a", "cohortName: c", "{name: gpu, nominalQuota: 4}",
			      "  preemption: {reclaimWithinCohort: Any}\n")
			   CQ("b", "cohortName: c", "{name: gpu, nominalQuota: 0}", "")
			   ADMITTED("b", "borrower", "100", "4", "1")
			   WL("a", "owner", "0", "2", "1", ""), 1);
	const struct carve_wl_status *s = st(&r, "b/borrower");

	(void)state;
	/* Reclaim takes a borrower even of higher priority (policy Any). */
	assert_true(s->marked);
	assert_int_equal(s->preempt_reason, CARVE_PREEMPT_RECLAIM);
	assert_pending(&r, "a/owner", CARVE_PEND_PREEMPTION_ISSUED);
	done(&r);
}

/* Adds workload key to queue cq through the API: one pod of `gpu` GPUs,
 * admitted on flavor f when admitted. */
static void api_wl(struct run *r, const char *key, const char *cq, int32_t prio, int64_t gpu,
		   bool admitted)
{
	static const struct carve_label fl = {"gpu", "f"};
	struct carve_req req = {"gpu", gpu * 1000};
	struct carve_podset_spec ps;
	struct carve_ps_admission pa = {"main", 1, 1, &fl};
	struct carve_wl_spec w;
	struct carve_error err;

	memset(&ps, 0, sizeof(ps));
	ps.name = "main";
	ps.count = ps.min_count = 1;
	ps.nreqs = 1;
	ps.reqs = &req;
	memset(&w, 0, sizeof(w));
	w.key = key;
	w.cq = cq;
	w.priority = prio;
	w.npodsets = 1;
	w.podsets = &ps;
	w.admitted = admitted;
	w.nadmission = admitted;
	w.admission = admitted ? &pa : NULL;
	assert_true(carve_adm_add_workload(r->ad->adm, &w, &err) >= 0);
}

/* A preemptor keeps its queue's head only while it waits for its victims:
 * once it no longer fits (here a StrictFIFO head whose quota another
 * admission took), a newer, higher-priority workload of the queue is the
 * head again and gets its own preemption. */
static void claim_ends_when_claimant_no_longer_fits(void **state)
{
	struct run r = run(FLAVOR
			   CQ("p", "cohortName: c", "{name: gpu, nominalQuota: 4}",
			      "  queueingStrategy: StrictFIFO\n"
			      "  preemption: {withinClusterQueue: LowerPriority, "
			      "reclaimWithinCohort: Any}\n")
			   CQ("r", "cohortName: c", "{name: gpu, nominalQuota: 0}", "")
			   ADMITTED("p", "blk", "100", "1", "2")
			   ADMITTED("r", "bor", "0", "1", "2")
			   WL("p", "w", "0", "1", "2", ""), 1);
	int i;

	(void)state;
	assert_pending(&r, "p/w", CARVE_PEND_PREEMPTION_ISSUED);
	assert_true(st(&r, "r/bor")->marked);
	/* the freed quota goes to another admission before w's next cycle */
	api_wl(&r, "p/blk2", "p", 100, 2, true);
	carve_adm_evict_marked(r.ad->adm);
	assert_true(carve_adm_cycle(r.ad->adm, 0) >= 0);
	assert_pending(&r, "p/w", CARVE_PEND_NOFIT);
	api_wl(&r, "p/hi", "p", 1000, 2, false);
	for (i = 0; i < 3; i++) {
		carve_adm_evict_marked(r.ad->adm);
		assert_true(carve_adm_cycle(r.ad->adm, 0) >= 0);
	}
	/* hi preempted a priority-100 workload of its own queue and got in */
	assert_admitted(&r, "p/hi", 1);
	done(&r);
}

static void cohort_object_quota(void **state)
{
	/* A Cohort with quota of its own lends it to its queues. */
	struct run r = run(FLAVOR
			   "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: c}\n"
			   "spec:\n  resourceGroups:\n  - coveredResources: [gpu]\n"
			   "    flavors: [{name: f, resources: [{name: gpu, nominalQuota: 3}]}]\n---\n"
			   CQ("a", "cohortName: c", "{name: gpu, nominalQuota: 1}", "")
			   WL("a", "four", "0", "4", "1", "")
			   WL("a", "one", "-1", "1", "1", ""), -1);

	(void)state;
	assert_admitted(&r, "a/four", 4);
	assert_pending(&r, "a/one", CARVE_PEND_NOFIT);
	done(&r);
}

static void skipped_in_cycle(void **state)
{
	/* Two queues borrow the same last unit in one cycle: the older head
	 * wins, the other is skipped, not refused. */
	struct run r = run(FLAVOR
			   CQ("a", "cohortName: c", "{name: gpu, nominalQuota: 0}", "")
			   CQ("b", "cohortName: c", "{name: gpu, nominalQuota: 0}", "")
			   CQ("l", "cohortName: c", "{name: gpu, nominalQuota: 1}", "")
			   WL("a", "first", "0", "1", "1", ", creationTimestamp: '2026-01-01T00:00:00Z'")
			   WL("b", "second", "0", "1", "1", ", creationTimestamp: '2026-01-02T00:00:00Z'"),
			   1);

	(void)state;
	assert_admitted(&r, "a/first", 1);
	assert_pending(&r, "b/second", CARVE_PEND_SKIPPED);
	done(&r);
}

#define FOUR_QUEUES                                                                   \
	FLAVOR CQ("a", "cohortName: c", "{name: gpu, nominalQuota: 2}", "")            \
	CQ("b", "cohortName: c", "{name: gpu, nominalQuota: 2}",                         \
	   "  preemption: {reclaimWithinCohort: Any}\n")                                \
	CQ("y", "cohortName: c", "{name: gpu, nominalQuota: 2}", "")                     \
	CQ("z", "cohortName: c", "{name: gpu, nominalQuota: 2}", "")                     \
	ADMITTED("a", "a1", "0", "2", "1")                                               \
	ADMITTED("a", "a2", "0", "2", "1")                                               \
	ADMITTED("a", "a3", "0", "2", "1")                                               \
	ADMITTED("z", "z1", "0", "2", "1")

static void fair_sharing_preempts_toward_fair_share(void **state)
{
	struct run classic, fs;
	int marked;

	(void)state;
	/* The cohort's 8 are full: a uses 6 (borrowing 4), z its own 2.  b
	 * wants 3, one more than its nominal.  Classical reclaim must leave b
	 * within nominal, so b waits; with fair sharing a, far above its fair
	 * share, gives up two workloads and b borrows one unit. */
	classic = run(FOUR_QUEUES WL("b", "want3", "0", "3", "1", ""), 1);
	assert_pending(&classic, "b/want3", CARVE_PEND_NOFIT);
	done(&classic);

	fair_sharing = true;
	fs = run(FOUR_QUEUES WL("b", "want3", "0", "3", "1", ""), 1);
	fair_sharing = false;
	assert_pending(&fs, "b/want3", CARVE_PEND_PREEMPTION_ISSUED);
	marked = st(&fs, "a/a1")->marked + st(&fs, "a/a2")->marked + st(&fs, "a/a3")->marked;
	assert_int_equal(marked, 2);
	assert_int_equal(st(&fs, "a/a3")->marked ? st(&fs, "a/a3")->preempt_reason :
						   st(&fs, "a/a2")->preempt_reason,
			 CARVE_PREEMPT_FAIR_SHARING);
	assert_false(st(&fs, "z/z1")->marked); /* z is not borrowing */
	done(&fs);

	/* Asking for more than a fair share allows: nothing is preempted. */
	fair_sharing = true;
	fs = run(FOUR_QUEUES WL("b", "want6", "0", "6", "1", ""), 1);
	fair_sharing = false;
	assert_pending(&fs, "b/want6", CARVE_PEND_NOFIT);
	assert_false(st(&fs, "a/a1")->marked || st(&fs, "a/a2")->marked || st(&fs, "a/a3")->marked);
	done(&fs);
}

static void fair_sharing_orders_by_share(void **state)
{
	struct run r;

	(void)state;
	/* a already borrows; a's and b's heads both want the last 2 units.
	 * a is older, so it would go first; fair sharing picks b, whose share
	 * stays lower. */
	fair_sharing = true;
	r = run(FLAVOR CQ("a", "cohortName: c", "{name: gpu, nominalQuota: 1}", "")
		CQ("b", "cohortName: c", "{name: gpu, nominalQuota: 1}", "")
		CQ("l", "cohortName: c", "{name: gpu, nominalQuota: 2}", "")
		ADMITTED("a", "running", "0", "2", "1")
		WL("a", "older", "0", "2", "1", ", creationTimestamp: '2026-01-01T00:00:00Z'")
		WL("b", "newer", "0", "2", "1", ", creationTimestamp: '2026-01-02T00:00:00Z'"), 1);
	fair_sharing = false;
	assert_admitted(&r, "b/newer", 2);
	assert_pending(&r, "a/older", CARVE_PEND_SKIPPED);
	done(&r);
}

static void fair_sharing_compares_exact_shares(void **state)
{
	struct run r;

	(void)state;
	/* Shares compare exactly, as Kueue's CompareDRS (ratio / weight), not
	 * as rounded thousandths: with a and b borrowing 1002 and 1001 of
	 * the cohort's 10000, both round up to 101 thousandths, yet b's share
	 * is lower, so b's newer head takes the room for one, not a's older. */
	fair_sharing = true;
	r = run(FLAVOR CQ("a", "cohortName: c", "{name: gpu, nominalQuota: 0}", "")
		CQ("b", "cohortName: c", "{name: gpu, nominalQuota: 0}", "")
		CQ("l", "cohortName: c", "{name: gpu, nominalQuota: 10000}", "")
		ADMITTED("l", "busy", "0", "1", "8500")
		WL("a", "older", "0", "1", "1002", ", creationTimestamp: '2026-01-01T00:00:00Z'")
		WL("b", "newer", "0", "1", "1001", ", creationTimestamp: '2026-01-02T00:00:00Z'"), 1);
	fair_sharing = false;
	assert_admitted(&r, "b/newer", 1);
	assert_pending(&r, "a/older", CARVE_PEND_SKIPPED);
	done(&r);
}

static void newer_equal_priority_preemption(void **state)
{
	/* LowerOrNewerEqualPriority also takes an equal-priority workload
	 * created after the preemptor; LowerPriority does not. */
	const char *q = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: a}\n"
			"spec:\n  resourceGroups:\n  - coveredResources: [gpu]\n"
			"    flavors: [{name: f, resources: [{name: gpu, nominalQuota: 2}]}]\n"
			"  preemption: {withinClusterQueue: %s}\n---\n"
			"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
			"metadata: {name: q, namespace: a}\nspec: {clusterQueue: a}\n---\n";
	const char *rest =
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
		"metadata: {name: later, namespace: a, creationTimestamp: '2026-01-02T00:00:00Z'}\n"
		"spec:\n  queueName: q\n  podSets:\n  - name: main\n    count: 2\n"
		"    template: {spec: {containers: [{name: c, resources: {requests: {gpu: 1}}}]}}\n"
		"status:\n  admission:\n    clusterQueue: a\n    podSetAssignments:\n"
		"    - {name: main, count: 2, flavors: {gpu: f}}\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
		"metadata: {name: earlier, namespace: a, creationTimestamp: '2026-01-01T00:00:00Z'}\n"
		"spec:\n  queueName: q\n  podSets:\n  - name: main\n    count: 1\n"
		"    template: {spec: {containers: [{name: c, resources: {requests: {gpu: 1}}}]}}\n";
	char yaml[4096];
	struct run r;

	(void)state;
	snprintf(yaml, sizeof(yaml), q, "LowerOrNewerEqualPriority");
	strncat(yaml, FLAVOR, sizeof(yaml) - strlen(yaml) - 1);
	strncat(yaml, rest, sizeof(yaml) - strlen(yaml) - 1);
	r = run(yaml, 1);
	assert_true(st(&r, "a/later")->marked);
	assert_int_equal(st(&r, "a/later")->preempt_reason, CARVE_PREEMPT_IN_CQ);
	done(&r);

	snprintf(yaml, sizeof(yaml), q, "LowerPriority");
	strncat(yaml, FLAVOR, sizeof(yaml) - strlen(yaml) - 1);
	strncat(yaml, rest, sizeof(yaml) - strlen(yaml) - 1);
	r = run(yaml, 1);
	assert_false(st(&r, "a/later")->marked);
	assert_pending(&r, "a/earlier", CARVE_PEND_NOFIT);
	done(&r);
}

static void priority_class_orders_heads(void **state)
{
	/* WorkloadPriorityClass values order a queue: the high class goes first
	 * although it is newer. */
	struct run r = run(FLAVOR CQ("a", "", "{name: gpu, nominalQuota: 1}", "")
			   "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
			   "metadata: {name: urgent}\nvalue: 1000\n---\n"
			   "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
			   "metadata: {name: old, namespace: a, creationTimestamp: '2026-01-01T00:00:00Z'}\n"
			   "spec:\n  queueName: q\n  podSets:\n  - name: main\n    count: 1\n"
			   "    template: {spec: {containers: [{name: c, resources: {requests: {gpu: 1}}}]}}\n---\n"
			   "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
			   "metadata: {name: new, namespace: a, creationTimestamp: '2026-01-05T00:00:00Z'}\n"
			   "spec:\n  queueName: q\n"
			   "  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: urgent}\n"
			   "  podSets:\n  - name: main\n    count: 1\n"
			   "    template: {spec: {containers: [{name: c, resources: {requests: {gpu: 1}}}]}}\n",
			   -1);

	(void)state;
	assert_admitted(&r, "a/new", 1);
	assert_pending(&r, "a/old", CARVE_PEND_NOFIT);
	done(&r);
}

static void try_next_flavor_avoids_borrowing(void **state)
{
	/* whenCanBorrow TryNextFlavor: the second flavor fits without
	 * borrowing, so it wins over borrowing on the first. */
	const char *two =
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: g}\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: a}\n"
		"spec:\n  cohortName: c\n  resourceGroups:\n  - coveredResources: [gpu]\n"
		"    flavors:\n    - {name: f, resources: [{name: gpu, nominalQuota: 1}]}\n"
		"    - {name: g, resources: [{name: gpu, nominalQuota: 4}]}\n"
		"  flavorFungibility: {whenCanBorrow: %s}\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: l}\n"
		"spec:\n  cohortName: c\n  resourceGroups:\n  - coveredResources: [gpu]\n"
		"    flavors:\n    - {name: f, resources: [{name: gpu, nominalQuota: 4}]}\n"
		"    - {name: g, resources: [{name: gpu, nominalQuota: 0}]}\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {name: q, namespace: a}\nspec: {clusterQueue: a}\n---\n"
		WL("a", "two", "0", "2", "1", "");
	char yaml[4096];
	struct run r;

	(void)state;
	snprintf(yaml, sizeof(yaml), two, "TryNextFlavor");
	r = run(yaml, 1);
	assert_admitted(&r, "a/two", 2);
	assert_string_equal(st(&r, "a/two")->podsets[0].flavors[0], "g");
	assert_false(st(&r, "a/two")->borrowing);
	done(&r);
	snprintf(yaml, sizeof(yaml), two, "MayStopSearch");
	r = run(yaml, 1);
	assert_string_equal(st(&r, "a/two")->podsets[0].flavors[0], "f");
	assert_true(st(&r, "a/two")->borrowing);
	done(&r);
}

/* ---- Kueue behaviours: borrowing level, fungibility, preemption ---- */

#define FLAVORS2                                                                    \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f1}\n" \
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"              \
	"metadata: {name: f2}\n---\n"

/* A ClusterQueue over flavors f1, f2 (gpu quota q1, q2); extra inside spec. */
#define CQ2(name, cohort, q1, q2, extra)                                              \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: " name \
	"}\nspec:\n  cohortName: " cohort "\n" extra                                     \
	"  resourceGroups:\n  - coveredResources: [gpu]\n    flavors:\n"                \
	"    - {name: f1, resources: [{name: gpu, nominalQuota: " q1 "}]}\n"             \
	"    - {name: f2, resources: [{name: gpu, nominalQuota: " q2 "}]}\n---\n"        \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, "     \
	"namespace: " name "}\nspec: {clusterQueue: " name "}\n---\n"

/* Admitted with its gpus on flavor fl. */
#define ADMITTED_ON(ns, name, prio, gpu, fl)                                           \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: " name     \
	", namespace: " ns "}\nspec:\n  queueName: q\n  priority: " prio "\n"            \
	"  podSets:\n  - name: main\n    count: 1\n    template:\n      spec:\n"         \
	"        containers:\n        - name: c\n          resources: {requests: {gpu: " \
	gpu "}}\nstatus:\n  admission:\n    clusterQueue: " ns "\n    podSetAssignments:\n" \
	"    - {name: main, count: 1, flavors: {gpu: " fl "}}\n---\n"

#define COHORT(name, parent)                                                          \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: " name "}\n" \
	"spec: {parentName: " parent "}\n---\n"

/*
 * (a) Heads that fit are ordered by borrowing level, the height of the
 * lowest cohort subtree that holds the request, before priority.  b1
 * borrows inside cohort c (height 1); a, directly under the root r whose
 * subtree holds c, borrows from r (height 2).  Only one of them fits:
 * b1's low-priority head goes first, a's high-priority head is skipped.
 */
static void borrowing_level_is_subtree_height(void **state)
{
	struct run r = run(FLAVOR COHORT("c", "r")
			   CQ("a", "cohortName: r", "{name: gpu, nominalQuota: 4}", "")
			   CQ("b1", "cohortName: c", "{name: gpu, nominalQuota: 4}", "")
			   CQ("b2", "cohortName: c", "{name: gpu, nominalQuota: 4}", "")
			   ADMITTED("a", "full", "0", "4", "1")
			   ADMITTED("b1", "full", "0", "4", "1")
			   ADMITTED("b2", "one", "0", "1", "1")
			   WL("a", "high", "10", "3", "1", "")
			   WL("b1", "low", "0", "3", "1", ""), 1);

	(void)state;
	assert_admitted(&r, "b1/low", 3);
	assert_true(st(&r, "b1/low")->borrowing);
	assert_pending(&r, "a/high", CARVE_PEND_SKIPPED);
	done(&r);
}

/*
 * (b) flavorFungibility preference PreemptionOverBorrowing: f1 fits only
 * by borrowing b's idle quota; f2 fits by preempting a's own low-priority
 * workload, after which it borrows nothing.  Borrowing is compared first,
 * so f2 wins; with BorrowingOverPreemption f1 (a fit) wins.
 */
static void preemption_over_borrowing(void **state)
{
	static const char *const fmt = FLAVORS2
		CQ2("a", "co", "0", "2",
		    "  preemption: {withinClusterQueue: LowerPriority}\n"
		    "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: "
		    "TryNextFlavor, preference: %s}\n")
		CQ2("b", "co", "4", "0", "")
		ADMITTED_ON("a", "low", "0", "2", "f2")
		WL("a", "high", "5", "1", "2", "");
	char yaml[8192];
	struct run r;

	(void)state;
	snprintf(yaml, sizeof(yaml), fmt, "PreemptionOverBorrowing");
	r = run(yaml, 1);
	assert_pending(&r, "a/high", CARVE_PEND_PREEMPTION_ISSUED);
	assert_true(st(&r, "a/low")->marked);
	done(&r);
	snprintf(yaml, sizeof(yaml), fmt, "BorrowingOverPreemption");
	r = run(yaml, 1);
	assert_admitted(&r, "a/high", 1);
	assert_string_equal(st(&r, "a/high")->podsets[0].flavors[0], "f1");
	assert_false(st(&r, "a/low")->marked);
	done(&r);
}

/*
 * (c) Two flavors that both need preemption in a's own queue (reclaim is
 * off): on f1 a is at its nominal quota, on f2 under it but b borrows the
 * rest.  Once the victims are gone neither borrows, so they tie and the
 * first flavor, f1, is kept (its victim low1 is preempted, not low2).
 */
static void equal_preemption_keeps_first_flavor(void **state)
{
	struct run r = run(FLAVORS2
			   CQ2("a", "co", "2", "4",
			       "  preemption: {withinClusterQueue: LowerPriority}\n"
			       "  flavorFungibility: {whenCanPreempt: TryNextFlavor}\n")
			   CQ2("b", "co", "0", "0", "")
			   ADMITTED_ON("a", "low1", "0", "2", "f1")
			   ADMITTED_ON("a", "low2", "0", "2", "f2")
			   ADMITTED_ON("b", "borrower", "0", "2", "f2")
			   WL("a", "high", "5", "1", "2", ""), 1);

	(void)state;
	assert_pending(&r, "a/high", CARVE_PEND_PREEMPTION_ISSUED);
	assert_true(st(&r, "a/low1")->marked);
	assert_false(st(&r, "a/low2")->marked);
	assert_false(st(&r, "b/borrower")->marked);
	done(&r);
}

/*
 * (d) A request above the queue's nominal quota would have to borrow; in a
 * flat cohort, without borrowWithinCohort, it may not preempt at all, not
 * even its own queue's lower-priority workload.  With borrowWithinCohort
 * it may.
 */
static void no_preemption_beyond_nominal(void **state)
{
	static const char *const fmt = FLAVOR
		CQ("a", "cohortName: co", "{name: gpu, nominalQuota: 4}",
		   "  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: "
		   "LowerPriority, borrowWithinCohort: {policy: %s}}\n")
		CQ("b", "cohortName: co", "{name: gpu, nominalQuota: 4}", "")
		ADMITTED("a", "low", "0", "4", "1")
		ADMITTED("b", "some", "0", "2", "1")
		WL("a", "big", "5", "1", "6", "");
	char yaml[8192];
	struct run r;

	(void)state;
	snprintf(yaml, sizeof(yaml), fmt, "Never");
	r = run(yaml, 1);
	assert_pending(&r, "a/big", CARVE_PEND_NOFIT);
	assert_non_null(strstr(st(&r, "a/big")->message, "above the nominal quota"));
	assert_false(st(&r, "a/low")->marked);
	done(&r);
	snprintf(yaml, sizeof(yaml), fmt, "LowerPriority");
	r = run(yaml, 1);
	assert_pending(&r, "a/big", CARVE_PEND_PREEMPTION_ISSUED);
	assert_true(st(&r, "a/low")->marked);
	done(&r);
}

/*
 * (e) Two ClusterQueues of one cohort each preempt their own lower-priority
 * workload in the same cycle: the victims are disjoint and neither borrows.
 * When both would take the same victim (the only borrower, c's), the
 * second is skipped.
 */
static void disjoint_preemptions_in_one_cohort(void **state)
{
	struct run r = run(FLAVOR
			   CQ("a", "cohortName: co", "{name: gpu, nominalQuota: 2}",
			      "  preemption: {withinClusterQueue: LowerPriority}\n")
			   CQ("b", "cohortName: co", "{name: gpu, nominalQuota: 2}",
			      "  preemption: {withinClusterQueue: LowerPriority}\n")
			   ADMITTED("a", "low", "0", "2", "1")
			   ADMITTED("b", "low", "0", "2", "1")
			   WL("a", "high", "5", "1", "2", "")
			   WL("b", "high", "5", "1", "2", ""), 1);

	(void)state;
	assert_pending(&r, "a/high", CARVE_PEND_PREEMPTION_ISSUED);
	assert_pending(&r, "b/high", CARVE_PEND_PREEMPTION_ISSUED);
	assert_true(st(&r, "a/low")->marked);
	assert_true(st(&r, "b/low")->marked);
	done(&r);
	r = run(FLAVOR
		CQ("a", "cohortName: co", "{name: gpu, nominalQuota: 2}",
		   "  preemption: {reclaimWithinCohort: Any}\n")
		CQ("b", "cohortName: co", "{name: gpu, nominalQuota: 2}",
		   "  preemption: {reclaimWithinCohort: Any}\n")
		CQ("c", "cohortName: co", "{name: gpu, nominalQuota: 0}", "")
		ADMITTED("c", "borrower", "0", "1", "4")
		WL("a", "x", "0", "1", "2", "")
		WL("b", "y", "0", "1", "2", ""), 1);
	assert_true(st(&r, "c/borrower")->marked);
	assert_pending(&r, "a/x", CARVE_PEND_PREEMPTION_ISSUED);
	assert_pending(&r, "b/y", CARVE_PEND_SKIPPED);
	assert_non_null(strstr(st(&r, "b/y")->message, "overlap"));
	done(&r);
}

/* ---- carve_adm_check ---- */

/* carve_adm_check must fail with a message containing want. */
static void assert_broken(struct carve_adm *a, const char *want)
{
	struct carve_error err;

	memset(&err, 0, sizeof(err));
	assert_int_equal(carve_adm_check(a, &err), CARVE_EINVAL);
	if (!strstr(err.text, want))
		fail_msg("carve_adm_check said \"%s\", expected \"%s\"", err.text, want);
}

static void check_detects_corruption(void **state)
{
	struct run r = run(FLAVOR
			   CQ("a", "cohortName: c", "{name: gpu, nominalQuota: 4}",
			      "  preemption: {withinClusterQueue: LowerPriority}\n")
			   CQ("b", "cohortName: c", "{name: gpu, nominalQuota: 1}", "")
			   ADMITTED("b", "held", "0", "1", "1")
			   ADMITTED("a", "low", "0", "4", "1")
			   WL("a", "high", "10", "2", "1", "")
			   WL("a", "behind", "0", "1", "1", "")
			   WL("b", "one", "0", "1", "1", ""), 1);
	struct carve_adm *a = r.ad->adm;
	/* The cohort is full: a/high preempts a/low in its queue; b/one waits. */
	int low = carve_adm_find_workload(a, "a/low");
	int behind = carve_adm_find_workload(a, "a/behind");
	struct wl *wb = &a->cat.wls[behind];
	struct cq *qa = &a->cat.cqs[wb->cq];
	int node = qa->node, root = a->qt.nodes[node].root, fr = 0;
	const char *key;

	(void)state;
	assert_true(st(&r, "a/low")->marked); /* a state with every kind of list */
	assert_pending(&r, "b/one", CARVE_PEND_NOFIT);
	check_engine(a);
	/* a queue's usage counter */
	a->qt.nodes[node].usage[fr] += 1000;
	assert_broken(a, "ClusterQueue a: usage of f/gpu");
	a->qt.nodes[node].usage[fr] -= 1000;
	/* the cohort's */
	a->qt.nodes[root].usage[fr] -= 1;
	assert_broken(a, "Cohort c: usage of f/gpu");
	a->qt.nodes[root].usage[fr] += 1;
	/* an admitted workload also in a pending list */
	qa->aside[qa->naside++] = (uint32_t)low;
	assert_broken(a, "admitted and pending at once");
	qa->naside--;
	/* a pending workload in no list */
	assert_true(qa->npend >= 2);
	qa->npend--;
	assert_broken(a, "times in its queue's heap");
	qa->npend++;
	/* heap order */
	{
		struct pqent t = qa->pend[0];

		qa->pend[0] = qa->pend[1];
		qa->pend[1] = t;
		assert_broken(a, "heap order broken");
		qa->pend[1] = qa->pend[0];
		qa->pend[0] = t;
	}
	/* a pending workload marked */
	wb->marked = true;
	assert_broken(a, "marked for preemption but not admitted");
	wb->marked = false;
	/* a victim record */
	qa->vr[0].priority++;
	assert_broken(a, "victim record");
	qa->vr[0].priority--;
	/* a charge that is not its admission's */
	a->cat.wls[low].adm.use[0].q += 1000;
	assert_broken(a, "charges f/gpu differently");
	a->cat.wls[low].adm.use[0].q -= 1000;
	/* the by-key index */
	key = wb->spec.key;
	wb->spec.key = "a/nobody";
	assert_broken(a, "not found by its key");
	wb->spec.key = key;
	check_engine(a);
	done(&r);
}

/* ---- property: random cohorts, queues, policies and workloads ---- */

struct ybuf {
	char s[65536];
	size_t n;
};

static void yput(struct ybuf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
	va_end(ap);
	assert_true(k >= 0 && (size_t)k < sizeof(b->s) - b->n);
	b->n += (size_t)k;
}

static uint64_t prng;

static uint32_t rnd(uint32_t n)
{
	uint64_t z = (prng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (uint32_t)(z % n);
}

static const char *pick(const char *const *v, uint32_t n)
{
	return v[rnd(n)];
}

/* Quota lines for flavors f0, f1 over cpu and gpu, with random limits. */
static void rq_groups(struct ybuf *b, bool cohort)
{
	int f;

	yput(b, "  resourceGroups:\n  - coveredResources: [cpu, gpu]\n    flavors:\n");
	for (f = 0; f < 2; f++) {
		int g = (int)rnd(cohort ? 4 : 9), c = 2 + (int)rnd(15);

		yput(b, "    - name: f%d\n      resources:\n", f);
		yput(b, "      - {name: cpu, nominalQuota: \"%d\"}\n", c);
		yput(b, "      - {name: gpu, nominalQuota: \"%d\"", g);
		if (!cohort && rnd(4) == 0)
			yput(b, ", borrowingLimit: \"%d\"", (int)rnd(5));
		if (rnd(5) == 0)
			yput(b, ", lendingLimit: \"%d\"", (int)rnd((uint32_t)g + 1));
		yput(b, "}\n");
	}
}

static void rq_cq(struct ybuf *b, int q, const char *cohort)
{
	static const char *const wcq[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority"};
	static const char *const rec[] = {"Never", "LowerPriority", "Any"};
	static const char *const strat[] = {"BestEffortFIFO", "StrictFIFO"};
	static const char *const fung[] = {"MayStopSearch", "TryNextFlavor"};
	const char *reclaim = pick(rec, 3), *wb = pick(fung, 2), *wp = pick(fung, 2);

	yput(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q%d}\n"
		"spec:\n  namespaceSelector: {}\n  cohortName: %s\n  queueingStrategy: %s\n",
	     q, cohort, pick(strat, 2));
	yput(b, "  preemption:\n    withinClusterQueue: %s\n    reclaimWithinCohort: %s\n",
	     pick(wcq, 3), reclaim);
	if (strcmp(reclaim, "Never") && rnd(2)) {
		yput(b, "    borrowWithinCohort: {policy: LowerPriority");
		if (rnd(2))
			yput(b, ", maxPriorityThreshold: %d", (int)rnd(3));
		yput(b, "}\n");
	}
	yput(b, "  flavorFungibility: {whenCanBorrow: %s, whenCanPreempt: %s", wb, wp);
	if (!strcmp(wb, "TryNextFlavor") && !strcmp(wp, "TryNextFlavor") && rnd(2))
		yput(b, ", preference: %s",
		     rnd(2) ? "PreemptionOverBorrowing" : "BorrowingOverPreemption");
	yput(b, "}\n");
	rq_groups(b, false);
	yput(b, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: q%d}\nspec: {clusterQueue: q%d}\n---\n", q, q);
}

static void rq_workload(struct ybuf *b, int i, int nq)
{
	static const char *const prio[] = {"-1", "0", "0", "1", "2", "5"};
	int count = 1 + (int)rnd(4);

	yput(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w%d, "
		"namespace: ns", i);
	if (rnd(6))
		yput(b, ", creationTimestamp: \"2026-01-01T00:%02d:%02dZ\"", i / 60, i % 60);
	yput(b, "}\nspec:\n  queueName: q%d\n  priority: %s\n  podSets:\n  - name: main\n"
		"    count: %d\n", (int)rnd((uint32_t)nq), pick(prio, 6), count);
	if (count > 1 && rnd(3) == 0)
		yput(b, "    minCount: %d\n", 1 + (int)rnd((uint32_t)count - 1));
	yput(b, "    template:\n      spec:\n        containers:\n        - name: c\n"
		"          resources: {requests: {cpu: \"%d\", gpu: \"%d\"}}\n---\n",
	     1 + (int)rnd(2), 1 + (int)rnd(3));
}

/* A workload arriving between cycles, through the engine's API, with a
 * priority above most of those already there (so it tends to preempt). */
static void rq_arrive(struct carve_adm *a, int i, int nq, int64_t now)
{
	struct carve_req reqs[2] = {{"cpu", 1000}, {"gpu", 1000}};
	struct carve_podset_spec ps;
	struct carve_wl_spec w;
	char key[32], cq[16];
	struct carve_error err;

	memset(&ps, 0, sizeof(ps));
	memset(&w, 0, sizeof(w));
	reqs[1].milli = 1000 * (1 + (int64_t)rnd(3));
	ps.name = "main";
	ps.count = ps.min_count = 1 + (int32_t)rnd(3);
	ps.nreqs = 2;
	ps.reqs = reqs;
	snprintf(key, sizeof(key), "ns/late%d", i);
	snprintf(cq, sizeof(cq), "q%d", (int)rnd((uint32_t)nq));
	w.key = key;
	w.cq = cq;
	w.priority = 1 + (int32_t)rnd(6);
	w.created = now;
	w.has_created = true;
	w.npodsets = 1;
	w.podsets = &ps;
	if (carve_adm_add_workload(a, &w, &err) < 0)
		fail_msg("adding %s: %s", key, err.text);
}

/* No queue is over-admitted once the marked victims are gone: what every
 * ClusterQueue may still take is then never negative, for any (flavor,
 * resource).  (Until the driver evicts them, victims keep their quota
 * while workloads admitted after the preemptor in the same cycle may
 * already count on it, as in Kueue.) */
static void assert_not_overadmitted(struct carve_adm *a)
{
	size_t q, i;
	int fr;

	for (i = 0; i < a->cat.nwls; i++)
		if (a->cat.wls[i].marked)
			carve__wl_charge(a, &a->cat.wls[i], -1);
	for (q = 0; q < a->cat.ncqs; q++)
		for (fr = 0; fr < a->qt.nfr; fr++)
			if (carve__qt_available(a, a->cat.cqs[q].node, fr) < 0) {
				const struct qnode *n = &a->qt.nodes[a->cat.cqs[q].node];

				fail_msg("ClusterQueue %s over-admitted in %s/%s: available %lld, "
					 "usage %lld of nominal %lld; cohort %s usage %lld of %lld",
					 a->cat.cqs[q].spec.name,
					 a->cat.flavors[a->qt.fr_flavor[fr]].spec.name,
					 carve_resreg_name(a->cat.res, a->qt.fr_res[fr]),
					 (long long)carve__qt_available(a, a->cat.cqs[q].node, fr),
					 (long long)n->usage[fr], (long long)n->nominal[fr],
					 a->qt.nodes[n->root].name,
					 (long long)a->qt.nodes[n->root].usage[fr],
					 (long long)a->qt.nodes[n->root].subtree[fr]);
			}
	for (i = 0; i < a->cat.nwls; i++)
		if (a->cat.wls[i].marked)
			carve__wl_charge(a, &a->cat.wls[i], +1);
}

static void property_random_quota(void **state)
{
	static struct ybuf b;
	int trial, admitted = 0, preempted = 0, finished = 0;

	(void)state;
	prng = 20260701;
	for (trial = 0; trial < 200; trial++) {
		int nq = 2 + (int)rnd(4), nw = 8 + (int)rnd(25), i, c;
		bool nested = rnd(2);
		struct carve_manifests *m;
		struct carve_admission *ad;

		b.n = 0;
		yput(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
			 "metadata: {name: f0}\n---\napiVersion: kueue.x-k8s.io/v1beta2\n"
			 "kind: ResourceFlavor\nmetadata: {name: f1}\n---\n");
		if (nested) { /* root r (maybe with quota of its own) over cohorts c0, c1 */
			yput(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\n"
				 "metadata: {name: r}\nspec:\n");
			if (rnd(2))
				rq_groups(&b, true);
			else
				yput(&b, "  resourceGroups: []\n");
			for (i = 0; i < 2; i++)
				yput(&b, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\n"
					 "metadata: {name: c%d}\nspec: {parentName: r}\n", i);
			yput(&b, "---\n");
		}
		for (i = 0; i < nq; i++) {
			static const char *const where[] = {"r", "c0", "c1"};

			rq_cq(&b, i, nested ? pick(where, 3) : "r");
		}
		for (i = 0; i < nw; i++)
			rq_workload(&b, i, nq);
		m = tu_load(b.s);
		if (m->diags.nerrors)
			tu_dump(m);
		assert_int_equal(m->diags.nerrors, 0);
		ad = carve_admission_build(m);
		assert_non_null(ad);
		carve_adm_set_fair_sharing(ad->adm, rnd(4) == 0);
		check_engine(ad->adm);
		for (c = 0; c < 14; c++) {
			int rc, late = (int)rnd(3);

			if (c)
				carve_adm_evict_marked(ad->adm);
			while (late-- > 0)
				rq_arrive(ad->adm, (int)carve_adm_workload_count(ad->adm), nq, 100 + c);
			check_engine(ad->adm);
			rc = carve_adm_cycle(ad->adm, 100 + c);
			assert_true(rc >= 0);
			check_engine(ad->adm);
			assert_not_overadmitted(ad->adm);
			nw = (int)carve_adm_workload_count(ad->adm);
			for (i = 0; i < nw; i++) {
				const struct carve_wl_status *s = carve_adm_status(ad->adm, (uint32_t)i);

				admitted += s->state == CARVE_WL_ADMITTED && s->cycle == c + 1 &&
					    s->admitted_by_engine;
				preempted += s->marked && s->cycle == c + 1;
			}
			/* Some admitted workloads finish. */
			for (i = 0; i < nw; i++) {
				const struct carve_wl_status *s = carve_adm_status(ad->adm, (uint32_t)i);

				if (s->state == CARVE_WL_ADMITTED && rnd(5) == 0) {
					assert_int_equal(carve_adm_finish(ad->adm, (uint32_t)i), 0);
					finished++;
				}
			}
			check_engine(ad->adm);
		}
		carve_admission_destroy(ad);
		carve_manifests_destroy(m);
	}
	print_message("admitted %d, preempted %d, finished %d\n", admitted, preempted, finished);
	/* Every kind of decision was exercised. */
	assert_true(admitted > 2000);
	assert_true(preempted > 150);
	assert_true(finished > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lending_limit_reached),
		cmocka_unit_test(lending_limit_allows_one),
		cmocka_unit_test(borrowing_limit_reached),
		cmocka_unit_test(preemption_cannot_help),
		cmocka_unit_test(priority_preemption_then_admission),
		cmocka_unit_test(ties_broken_by_creation_time),
		cmocka_unit_test(gang_all_or_nothing),
		cmocka_unit_test(partial_admission_down_to_min),
		cmocka_unit_test(best_effort_fifo_moves_on),
		cmocka_unit_test(reclaim_from_borrower),
		cmocka_unit_test(claim_ends_when_claimant_no_longer_fits),
		cmocka_unit_test(cohort_object_quota),
		cmocka_unit_test(skipped_in_cycle),
		cmocka_unit_test(fair_sharing_preempts_toward_fair_share),
		cmocka_unit_test(fair_sharing_orders_by_share),
		cmocka_unit_test(fair_sharing_compares_exact_shares),
		cmocka_unit_test(newer_equal_priority_preemption),
		cmocka_unit_test(priority_class_orders_heads),
		cmocka_unit_test(try_next_flavor_avoids_borrowing),
		cmocka_unit_test(borrowing_level_is_subtree_height),
		cmocka_unit_test(preemption_over_borrowing),
		cmocka_unit_test(equal_preemption_keeps_first_flavor),
		cmocka_unit_test(no_preemption_beyond_nominal),
		cmocka_unit_test(disjoint_preemptions_in_one_cohort),
		cmocka_unit_test(check_detects_corruption),
		cmocka_unit_test(property_random_quota),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
