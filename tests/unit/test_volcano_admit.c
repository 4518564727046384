/*
 * test_volcano_admit.c - Volcano Queues and PodGroups (and KAI Queues)
 * through the admission engine, per the mapping in docs/volcano-kai.md:
 * deserved as nominal quota, capability as a borrowing cap, guarantee as
 * the part never lent, reclaim and reclaimable: false, closed queues, weight
 * under fair sharing, parent queues as cohorts, PodGroup gangs and their
 * per-pod requests, and what the bridge reports and skips.
 */
#include "testutil.h"

#include "carve/admission.h"

struct run {
	struct carve_manifests *m;
	struct carve_admission *ad;
};

static bool fair_sharing;

/* Loads yaml and builds the engine; no cycle runs.  Errors are allowed
 * (the caller checks the diagnostics). */
static struct run build(const char *yaml)
{
	struct run r;

	r.m = tu_load(yaml);
	r.ad = carve_admission_build(r.m);
	assert_non_null(r.ad);
	carve_adm_set_fair_sharing(r.ad->adm, fair_sharing);
	return r;
}

/* Loads yaml, builds the engine (no errors allowed) and runs `cycles`
 * cycles (evicting marked workloads between them); cycles < 0 runs until
 * stable. */
static struct run run(const char *yaml, int cycles)
{
	struct run r = build(yaml);
	int c;

	if (r.m->diags.nerrors)
		tu_dump(r.m);
	assert_int_equal(r.m->diags.nerrors, 0);
	if (cycles < 0) {
		assert_true(carve_adm_run(r.ad->adm, r.ad->now, 100) > 0);
	} else {
		for (c = 0; c < cycles; c++) {
			if (c)
				carve_adm_evict_marked(r.ad->adm);
			assert_true(carve_adm_cycle(r.ad->adm, r.ad->now) >= 0);
		}
	}
	return r;
}

static void done(struct run *r)
{
	carve_admission_destroy(r->ad);
	carve_manifests_destroy(r->m);
}

static bool has(const struct run *r, const char *key)
{
	return carve_adm_find_workload(r->ad->adm, key) >= 0;
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
	assert_false(s->marked);
	assert_int_equal(s->podsets[0].count, count);
}

static void assert_pending(const struct run *r, const char *key, enum carve_pending_reason why)
{
	const struct carve_wl_status *s = st(r, key);

	assert_int_equal(s->state, CARVE_WL_PENDING);
	assert_int_equal(s->pending_reason, why);
}

/* A Volcano Queue; spec is a flow mapping's body, tail follows the spec. */
#define VQT(name, spec, tail)                                                            \
	"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: " name \
	"}\nspec: {" spec "}\n" tail "---\n"
#define VQ(name, spec) VQT(name, spec, "")

/* A Volcano PodGroup asking `gpu` GPUs for `members` pods; extra goes into
 * the spec mapping, meta into metadata, tail after the spec. */
#define PGX(ns, name, meta, queue, members, gpu, extra, tail)                            \
	"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {namespace: " \
	ns ", name: " name meta "}\nspec: {queue: " queue ", minMember: " members          \
	", minResources: {nvidia.com/gpu: " gpu "}" extra "}\n" tail "---\n"
#define PG(ns, name, queue, members, gpu) PGX(ns, name, "", queue, members, gpu, "", "")
#define RUNNING(ns, name, queue, members, gpu) \
	PGX(ns, name, "", queue, members, gpu, "", "status: {phase: Running}\n")
#define AT(t) ", creationTimestamp: '2026-01-01T00:0" t ":00Z'"

static void admitted_within_deserved(void **state)
{
	struct run r = run(VQ("a", "deserved: {nvidia.com/gpu: 4, cpu: 4}")
			   "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
			   "metadata: {namespace: t, name: job}\n"
			   "spec: {queue: a, minMember: 2, minResources: {nvidia.com/gpu: 4, cpu: 3}}\n",
			   1);
	const struct carve_wl_status *s;
	int id;

	(void)state;
	tu_assert_clean(r.m);
	assert_admitted(&r, "t/job", 2);
	s = st(&r, "t/job");
	assert_string_equal(s->cq, "a");
	assert_false(s->borrowing);
	assert_string_equal(s->podsets[0].name, "pods");
	assert_int_equal(s->podsets[0].n, 2);
	assert_string_equal(s->podsets[0].flavors[0], "volcano");
	assert_string_equal(s->podsets[0].flavors[1], "volcano");
	done(&r);

	/* cpu splits to the millicore: 3 cpu over 2 pods is 1500m each, so
	 * 3 fit next to 1 more; 3001m would be 1501m each, 3.002 > 3. */
	r = run(VQ("a", "deserved: {cpu: 4}")
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		"metadata: {namespace: t, name: one, creationTimestamp: '2026-01-01T00:00:00Z'}\n"
		"spec: {queue: a, minMember: 1, minResources: {cpu: 1}}\n---\n"
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		"metadata: {namespace: t, name: job, creationTimestamp: '2026-01-01T00:01:00Z'}\n"
		"spec: {queue: a, minMember: 2, minResources: {cpu: 3}}\n", -1);
	assert_admitted(&r, "t/one", 1);
	assert_admitted(&r, "t/job", 2);
	done(&r);
	r = run(VQ("a", "deserved: {cpu: 4}")
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		"metadata: {namespace: t, name: one, creationTimestamp: '2026-01-01T00:00:00Z'}\n"
		"spec: {queue: a, minMember: 1, minResources: {cpu: 1}}\n---\n"
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		"metadata: {namespace: t, name: job, creationTimestamp: '2026-01-01T00:01:00Z'}\n"
		"spec: {queue: a, minMember: 2, minResources: {cpu: 3001m}}\n", -1);
	assert_admitted(&r, "t/one", 1);
	assert_pending(&r, "t/job", CARVE_PEND_NOFIT);
	id = carve_adm_find_workload(r.ad->adm, "t/job");
	assert_non_null(carve_admission_podgroup(r.ad, (uint32_t)id));
	assert_null(carve_admission_workload(r.ad, (uint32_t)id));
	done(&r);
}

static void gang_and_per_pod_rounding(void **state)
{
	/* 3 GPUs over 2 pods is 2 per pod (whole GPUs, rounded up): 4 > 3. */
	struct run r = run(VQ("a", "deserved: {nvidia.com/gpu: 3}, capability: {nvidia.com/gpu: 3}")
			   PG("t", "odd", "a", "2", "3"), -1);
	/* minMember 0 is one pod. */
	struct run r2 = run(VQ("a", "deserved: {nvidia.com/gpu: 3}") PG("t", "solo", "a", "0", "3"),
			    -1);

	(void)state;
	assert_pending(&r, "t/odd", CARVE_PEND_NOFIT);
	assert_admitted(&r2, "t/solo", 1);
	done(&r);
	done(&r2);
}

static void borrow_idle_deserved_up_to_capability(void **state)
{
#define TWO "deserved: {nvidia.com/gpu: 2}, capability: {nvidia.com/gpu: 4}"
	struct run r = run(VQ("a", TWO) VQ("b", "deserved: {nvidia.com/gpu: 8}")
			   PG("t", "four", "a", "4", "4"), -1);
	/* At its capability: b's idle GPUs do not help. */
	struct run r2 = run(VQ("a", TWO) VQ("b", "deserved: {nvidia.com/gpu: 8}")
			    RUNNING("t", "four", "a", "4", "4")
			    PG("t", "one", "a", "1", "1"), -1);
	struct run r3 = run(VQ("a", TWO) VQ("b", "deserved: {nvidia.com/gpu: 8}")
			    PG("t", "five", "a", "5", "5"), -1);
#undef TWO

	(void)state;
	assert_admitted(&r, "t/four", 4);
	assert_true(st(&r, "t/four")->borrowing);
	assert_pending(&r2, "t/one", CARVE_PEND_NOFIT);
	assert_int_equal(st(&r2, "t/four")->state, CARVE_WL_ADMITTED);
	assert_pending(&r3, "t/five", CARVE_PEND_NOFIT);
	done(&r);
	done(&r2);
	done(&r3);
}

static void guarantee_is_never_lent(void **state)
{
#define LENDER "deserved: {nvidia.com/gpu: 4}, guarantee: {resource: {nvidia.com/gpu: 3}}"
	struct run r = run(VQ("a", LENDER) VQ("b", "weight: 1") PG("t", "two", "b", "2", "2"), -1);
	struct run r2 = run(VQ("a", LENDER) VQ("b", "weight: 1") PG("t", "one", "b", "1", "1"), -1);
#undef LENDER

	(void)state;
	assert_pending(&r, "t/two", CARVE_PEND_NOFIT);
	assert_admitted(&r2, "t/one", 1);
	assert_true(st(&r2, "t/one")->borrowing);
	done(&r);
	done(&r2);
}

static void reclaim_from_borrower(void **state)
{
	struct run r = run(VQ("a", "deserved: {nvidia.com/gpu: 4}") VQ("b", "weight: 1")
			   RUNNING("t", "borrower", "b", "4", "4")
			   PGX("t", "owner", AT("5"), "a", "2", "2", "", ""), 1);
	const struct carve_wl_status *s = st(&r, "t/borrower");

	(void)state;
	assert_true(s->marked);
	assert_int_equal(s->preempt_reason, CARVE_PREEMPT_RECLAIM);
	assert_pending(&r, "t/owner", CARVE_PEND_PREEMPTION_ISSUED);
	/* Next cycle: the borrower has released its GPUs. */
	carve_adm_evict_marked(r.ad->adm);
	assert_true(carve_adm_cycle(r.ad->adm, r.ad->now) > 0);
	assert_admitted(&r, "t/owner", 2);
	assert_true(st(&r, "t/borrower")->evicted);
	done(&r);
}

static void not_reclaimable_is_protected(void **state)
{
	struct run r = run(VQ("a", "deserved: {nvidia.com/gpu: 4}")
			   VQ("b", "reclaimable: false")
			   RUNNING("t", "borrower", "b", "4", "4")
			   PG("t", "owner", "a", "2", "2"), -1);

	(void)state;
	assert_false(st(&r, "t/borrower")->marked);
	assert_false(st(&r, "t/borrower")->evicted);
	assert_pending(&r, "t/owner", CARVE_PEND_NOFIT);
	done(&r);
}

static void priority_class_orders_within_queue(void **state)
{
	struct run r = run("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
			   "metadata: {name: high}\nvalue: 100\n---\n"
			   VQ("a", "deserved: {nvidia.com/gpu: 4}")
			   RUNNING("t", "low", "a", "4", "4")
			   PGX("t", "urgent", "", "a", "1", "2", ", priorityClassName: high", ""), 1);

	(void)state;
	assert_int_equal(st(&r, "t/low")->preempt_reason, CARVE_PREEMPT_IN_CQ);
	assert_pending(&r, "t/urgent", CARVE_PEND_PREEMPTION_ISSUED);
	done(&r);
}

static void closed_queue_holds(void **state)
{
	struct run closed = run(VQT("a", "deserved: {nvidia.com/gpu: 4}", "status: {state: Closed}\n")
				PG("t", "job", "a", "1", "1"), -1);
	struct run closing = run(VQT("a", "deserved: {nvidia.com/gpu: 4}",
				     "status: {state: Closing, running: 0}\n")
				 PG("t", "job", "a", "1", "1"), -1);
	struct run open = run(VQT("a", "deserved: {nvidia.com/gpu: 4}", "status: {state: Open}\n")
			      PG("t", "job", "a", "1", "1"), -1);

	(void)state;
	assert_int_equal(closed.m->vcqueues[0].state[0], 'C');
	assert_int_equal(st(&closed, "t/job")->state, CARVE_WL_PENDING);
	assert_int_equal(st(&closing, "t/job")->state, CARVE_WL_PENDING);
	assert_admitted(&open, "t/job", 1);
	done(&closed);
	done(&closing);
	done(&open);
}

/* a and b borrow the last 2 of l's GPUs; a's PodGroup is older. */
#define CONTEST(bweight)                                                        \
	VQ("a", "weight: 1") VQ("b", "weight: " bweight)                      \
	VQ("l", "deserved: {nvidia.com/gpu: 2}")                              \
	PGX("t", "older", AT("1"), "a", "2", "2", "", "")                     \
	PGX("u", "newer", AT("2"), "b", "2", "2", "", "")

static void weight_drives_fair_sharing(void **state)
{
	struct run fifo, heavy, even;

	(void)state;
	fifo = run(CONTEST("3"), 1);
	assert_admitted(&fifo, "t/older", 2); /* fair sharing off: oldest first */
	assert_pending(&fifo, "u/newer", CARVE_PEND_SKIPPED);
	done(&fifo);

	fair_sharing = true;
	heavy = run(CONTEST("3"), 1);
	even = run(CONTEST("1"), 1);
	fair_sharing = false;
	/* b's weight 3 makes its share after admission a third of a's. */
	assert_admitted(&heavy, "u/newer", 2);
	assert_pending(&heavy, "t/older", CARVE_PEND_SKIPPED);
	assert_admitted(&even, "t/older", 2);
	assert_pending(&even, "u/newer", CARVE_PEND_SKIPPED);
	done(&heavy);
	done(&even);
}
#undef CONTEST

/* ml is a parent: c1 and c2 share its cohort; o stands outside it. */
#define TREE(mlspec, want)                                                          \
	VQ("ml", mlspec) VQ("c1", "parent: ml, deserved: {nvidia.com/gpu: 2}")    \
	VQ("c2", "parent: ml") VQ("o", "parent: root, deserved: {nvidia.com/gpu: 4}") \
	PG("t", "job", "c2", want, want)

static void parent_queue_is_a_cohort(void **state)
{
	/* Without a capability on ml, c2 borrows o's idle GPUs too. */
	struct run open = run(TREE("weight: 1", "6"), -1);
	/* capability 3 on ml: its subtree holds at most 3 (1 beyond c1's 2). */
	struct run capped = run(TREE("capability: {nvidia.com/gpu: 3}", "3"), -1);
	struct run over = run(TREE("capability: {nvidia.com/gpu: 3}", "4"), -1);
	/* A PodGroup in the parent queue is not queued (leaf queues run jobs). */
	struct run inparent = run(TREE("weight: 1", "1") PG("t", "top", "ml", "1", "1"), -1);

	(void)state;
	assert_admitted(&open, "t/job", 6);
	assert_true(st(&open, "t/job")->borrowing);
	assert_admitted(&capped, "t/job", 3);
	assert_pending(&over, "t/job", CARVE_PEND_NOFIT);
	assert_false(has(&inparent, "t/top"));
	tu_assert_warning(inparent.m, 29, 15, "Queue 'ml' is a parent queue");
	done(&open);
	done(&capped);
	done(&over);
	done(&inparent);
}
#undef TREE

static void what_is_skipped(void **state)
{
	/* 1: no Queue "default" for a PodGroup without spec.queue; 2: no
	 * minResources; 3: KAI PodGroup; 4: Completed; 5: undefined queue. */
	struct run r = run(VQ("a", "deserved: {nvidia.com/gpu: 1}")
			   "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
			   "metadata: {namespace: t, name: nodefault}\n"
			   "spec: {minMember: 1, minResources: {cpu: 1}}\n---\n"
			   "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
			   "metadata: {namespace: t, name: empty}\nspec: {queue: a, minMember: 2}\n---\n"
			   "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\n"
			   "metadata: {namespace: t, name: kai}\nspec: {queue: a, minMember: 1}\n---\n"
			   PGX("t", "done", "", "a", "1", "1", "", "status: {phase: Completed}\n")
			   PG("t", "lost", "nowhere", "1", "1"), -1);

	(void)state;
	assert_int_equal(carve_adm_workload_count(r.ad->adm), 0);
	tu_assert_warning(r.m, 6, 1, "PodGroup t/nodefault: Volcano Queue 'default' is not defined");
	tu_assert_warning(r.m, 13, 32, "PodGroup t/empty has no minResources");
	tu_assert_warning(r.m, 18, 32, "PodGroup t/kai: KAI PodGroups carry no resource requests");
	tu_assert_warning(r.m, 30, 15, "PodGroup t/lost: Volcano Queue 'nowhere' is not defined");
	assert_int_equal(r.m->diags.n, 4);
	done(&r);

	/* With a Queue named default, the same PodGroup is queued there. */
	r = run(VQ("default", "weight: 1") VQ("l", "deserved: {cpu: 1}")
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		"metadata: {namespace: t, name: nodefault}\n"
		"spec: {minMember: 1, minResources: {cpu: 1}}\n---\n", -1);
	tu_assert_clean(r.m);
	assert_admitted(&r, "t/nodefault", 1); /* borrowing l's idle cpu */
	assert_true(st(&r, "t/nodefault")->borrowing);
	done(&r);
}

static void name_clashes_and_cycles(void **state)
{
	struct run r = build("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
			     "metadata: {name: a}\nspec: {}\n---\n"
			     VQ("a", "deserved: {nvidia.com/gpu: 1}")
			     VQ("x", "parent: y") VQ("y", "parent: x")
			     VQ("z", "parent: x")
			     VQ("w", "parent: nope")
			     PG("t", "job", "a", "1", "1"));

	(void)state;
	tu_assert_error(r.m, 8, 18, "Volcano Queue a: a Kueue ClusterQueue of the same name is "
			"already defined");
	/* x and y name each other: the cycle is cut where the walk closes it,
	 * with the message every reader of parent links gives. */
	tu_assert_error(r.m, 19, 16, "Volcano Queue y: parent chain forms a cycle: x -> y -> x");
	tu_assert_warning(r.m, 29, 16, "Volcano Queue w: parent queue 'nope' is not defined");
	assert_int_equal(r.m->diags.nerrors, 2);
	assert_true(r.ad->finalized);
	assert_false(has(&r, "t/job")); /* its queue was skipped */
	done(&r);
}

static void kai_queue_quota(void **state)
{
	/* KAI queues are ClusterQueues "kai-a", "kai-b" in cohort kai-root;
	 * a Kueue Workload reaches one through a LocalQueue. */
#define KQ(name, res)                                                               \
	"apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: " name "}\n" \
	"spec: {resources: " res "}\n---\n"
#define KWL(name, gpus)                                                                \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: " name      \
	", namespace: t}\nspec:\n  queueName: q\n  podSets:\n  - name: main\n"             \
	"    count: 1\n    template:\n      spec:\n        containers:\n        - name: c\n" \
	"          resources: {requests: {nvidia.com/gpu: " gpus ", memory: 1Gi}}\n---\n"
#define KAI_SETUP                                                                       \
	KQ("kai-a", "{gpu: {quota: 2, limit: 3, overQuotaWeight: 2}, "                   \
	   "memory: {quota: 4096, limit: -1}}")                                             \
	KQ("kai-b", "{gpu: {quota: 4}, memory: {quota: 0}}")                               \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, "        \
	"namespace: t}\nspec: {clusterQueue: kai-a}\n---\n"
	struct run r = run(KAI_SETUP KWL("three", "3"), -1);
	struct run r2 = run(KAI_SETUP KWL("four", "4"), -1);
	const struct carve_wl_status *s;

	(void)state;
	s = st(&r, "t/three");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_true(s->borrowing); /* 1 GPU of kai-b's quota */
	assert_string_equal(s->podsets[0].flavors[0], "kai");
	assert_pending(&r2, "t/four", CARVE_PEND_NOFIT); /* limit 3 */
	done(&r);
	done(&r2);
#undef KAI_SETUP
#undef KWL
#undef KQ
}

static void running_counts_and_latest_time(void **state)
{
	/* A Running PodGroup holds its quota; the cycle time is the latest
	 * creationTimestamp, PodGroups included. */
	struct run r = run(VQ("a", "deserved: {nvidia.com/gpu: 4}")
			   PGX("t", "run", AT("7"), "a", "2", "4", "", "status: {phase: Running}\n")
			   PG("t", "wait", "a", "1", "1"), -1);
	const struct carve_wl_status *s = st(&r, "t/run");

	(void)state;
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_false(s->admitted_by_engine);
	assert_string_equal(s->podsets[0].flavors[0], "volcano");
	assert_pending(&r, "t/wait", CARVE_PEND_NOFIT);
	assert_int_equal(r.ad->now, 1767225600 + 7 * 60);
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(admitted_within_deserved),
		cmocka_unit_test(gang_and_per_pod_rounding),
		cmocka_unit_test(borrow_idle_deserved_up_to_capability),
		cmocka_unit_test(guarantee_is_never_lent),
		cmocka_unit_test(reclaim_from_borrower),
		cmocka_unit_test(not_reclaimable_is_protected),
		cmocka_unit_test(priority_class_orders_within_queue),
		cmocka_unit_test(closed_queue_holds),
		cmocka_unit_test(weight_drives_fair_sharing),
		cmocka_unit_test(parent_queue_is_a_cohort),
		cmocka_unit_test(what_is_skipped),
		cmocka_unit_test(name_clashes_and_cycles),
		cmocka_unit_test(kai_queue_quota),
		cmocka_unit_test(running_counts_and_latest_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
