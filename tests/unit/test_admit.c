/*
 * test_admit.c - the admission engine's policies one by one, each on a
 * small Kueue manifest: lending and borrowing limits, preemption that
 * cannot help, priority ties broken by creation time, gang and partial
 * admission, StrictFIFO against BestEffortFIFO, reclaim, hierarchical
 * cohort quota, and several cycles with eviction in between.
 */
#include "testutil.h"

#include "carve/admission.h"

struct run {
	struct carve_manifests *m;
	struct carve_admission *ad;
};

/* Loads yaml, builds the engine and runs `cycles` cycles (evicting marked
 * workloads between them); cycles < 0 runs until stable. */
static bool fair_sharing;

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
	if (cycles < 0) {
		assert_true(carve_adm_run(r.ad->adm, 0, 100) > 0);
	} else {
		for (c = 0; c < cycles; c++) {
			if (c)
				carve_adm_evict_marked(r.ad->adm);
			assert_true(carve_adm_cycle(r.ad->adm, 0) >= 0);
		}
	}
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
		cmocka_unit_test(newer_equal_priority_preemption),
		cmocka_unit_test(priority_class_orders_heads),
		cmocka_unit_test(try_next_flavor_avoids_borrowing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
