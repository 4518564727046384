/*
 * test_admit_range.c - the admission engine at the edges of int64
 * milli-units: a podSet whose count x request does not fit is refused at
 * add time (never admitted), as is a workload given as admitted whose
 * charge would take a usage past INT64_MAX; quotas near the limit in a
 * cohort keep every usage exact.
 */
#include "testutil.h"

#include "carve/admission.h"

#define QMAX INT64_MAX

/* ---- manifests: the inputs of the hardening issue ---- */

/* ClusterQueue team with a cpu quota, LocalQueue ns/q. */
#define TEAM(quota)                                                                    \
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}\n" \
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: team}\n" \
	"spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n"  \
	"    flavors:\n    - name: default\n      resources:\n"                              \
	"      - {name: cpu, nominalQuota: " quota "}\n"                                    \
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"                      \
	"metadata: {namespace: ns, name: q}\nspec: {clusterQueue: team}\n"

/* A Workload of count pods of cpu each; admitted to team when adm. */
#define CPU_WL(name, count, cpu, adm)                                                   \
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"                         \
	"metadata: {namespace: ns, name: " name "}\nspec:\n  queueName: q\n  podSets:\n"     \
	"  - name: main\n    count: " count "\n    template:\n      spec:\n"               \
	"        containers:\n        - name: c\n          resources: {requests: {cpu: \"" \
	cpu "\"}}\n" adm

#define ADM(count)                                                                     \
	"status:\n  admission:\n    clusterQueue: team\n    podSetAssignments:\n"           \
	"    - {name: main, count: " count ", flavors: {cpu: default}}\n"

static void check_engine(const struct carve_adm *a)
{
	struct carve_error err;

	if (carve_adm_check(a, &err))
		fail_msg("carve_adm_check: %s", err.text);
}

static const struct carve_wl_status *status_of(const struct carve_admission *ad, const char *key)
{
	int id = carve_adm_find_workload(ad->adm, key);

	if (id < 0)
		fail_msg("no workload %s", key);
	return carve_adm_status(ad->adm, (uint32_t)id);
}

/* Issue item 1: 2 x 5e15 cpu (1e19 milli) in a queue of 1 cpu.  The
 * product used to wrap negative and fit; it is an input error naming the
 * workload, podSet and resource, and nothing is admitted. */
static void count_times_request_overflow_refused(void **state)
{
	struct carve_manifests *m = tu_load(TEAM("1") CPU_WL("big", "2", "5000000000000000", "")
						    CPU_WL("small", "1", "1", ""));
	struct carve_admission *ad;

	(void)state;
	ad = carve_admission_build(m);
	assert_non_null(ad);
	assert_int_equal(m->diags.nerrors, 1);
	tu_assert_error(m, 24, 33, "workload ns/big podSet main: 2 pods x 5000000000000000 cpu "
			"overflows the largest quantity carve holds (9223372036854775807m)");
	assert_int_equal(carve_adm_find_workload(ad->adm, "ns/big"), CARVE_ENOTFOUND);
	assert_true(carve_adm_run(ad->adm, 0, 10) > 0);
	check_engine(ad->adm);
	assert_int_equal(status_of(ad, "ns/small")->state, CARVE_WL_ADMITTED);
	assert_int_equal(carve_adm_cq_usage(ad->adm, "team", "default", "cpu"), 1000);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

/* A one-podSet workload through the API: count pods asking for n
 * requests (names and milli); 0 or the error. */
static int add_api(struct carve_adm *a, const char *key, const char *cq, int32_t count,
		   const struct carve_req *reqs, size_t n, struct carve_error *err)
{
	struct carve_podset_spec ps;
	struct carve_wl_spec w;

	memset(&ps, 0, sizeof(ps));
	ps.name = "main";
	ps.count = ps.min_count = count;
	ps.nreqs = n;
	ps.reqs = reqs;
	memset(&w, 0, sizeof(w));
	w.key = key;
	w.cq = cq;
	w.npodsets = 1;
	w.podsets = &ps;
	return carve_adm_add_workload(a, &w, err);
}

/* Every way a workload's total request can leave int64 milli-units is
 * CARVE_ERANGE at add time with a message naming it; exactly at the limit
 * is fine. */
static void request_totals_refused_at_the_edge(void **state)
{
	struct carve_manifests *m = tu_load(TEAM("9223372036854775807m"));
	struct carve_admission *ad = carve_admission_build(m);
	struct carve_req one[1] = {{"cpu", QMAX / 3}};
	struct carve_req dup[2] = {{"cpu", QMAX / 2 + 1}, {"cpu", QMAX / 2 + 1}};
	struct carve_req reqs2[1] = {{"cpu", QMAX / 2 + 1}};
	struct carve_podset_spec ps[2];
	struct carve_wl_spec w;
	struct carve_error err;

	(void)state;
	tu_assert_clean(m);
	/* 3 x INT64_MAX/3 fits exactly; 4 x does not */
	assert_true(add_api(ad->adm, "ns/exact", "team", 3, one, 1, &err) >= 0);
	assert_int_equal(add_api(ad->adm, "ns/four", "team", 4, one, 1, &err), CARVE_ERANGE);
	assert_non_null(strstr(err.text, "workload ns/four podSet main: 4 pods x "));
	assert_non_null(strstr(err.text, " cpu overflows the largest quantity carve holds"));
	/* two entries for one resource in one pod */
	assert_int_equal(add_api(ad->adm, "ns/dup", "team", 1, dup, 2, &err), CARVE_ERANGE);
	assert_string_equal(err.text, "workload ns/dup podSet main: its requests for cpu add up "
			    "to more than the largest quantity carve holds (9223372036854775807m)");
	/* two podSets, each in range, together not */
	memset(ps, 0, sizeof(ps));
	ps[0].name = "a";
	ps[1].name = "b";
	ps[0].count = ps[0].min_count = ps[1].count = ps[1].min_count = 1;
	ps[0].nreqs = ps[1].nreqs = 1;
	ps[0].reqs = ps[1].reqs = reqs2;
	memset(&w, 0, sizeof(w));
	w.key = "ns/two";
	w.cq = "team";
	w.npodsets = 2;
	w.podsets = ps;
	assert_int_equal(carve_adm_add_workload(ad->adm, &w, &err), CARVE_ERANGE);
	assert_string_equal(err.text, "workload ns/two podSet b: the podSets up to this one ask "
			    "for more cpu than the largest quantity carve holds "
			    "(9223372036854775807m)");
	check_engine(ad->adm);
	/* the exact one is admitted and charges exactly 3 x INT64_MAX/3 */
	assert_true(carve_adm_run(ad->adm, 0, 10) > 0);
	check_engine(ad->adm);
	assert_int_equal(status_of(ad, "ns/exact")->state, CARVE_WL_ADMITTED);
	assert_int_equal(carve_adm_cq_usage(ad->adm, "team", "default", "cpu"), QMAX / 3 * 3);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

/* Issue item 2: Workloads already admitted with 4e15 cpu each (4e18
 * milli).  Two fit in int64; the third would wrap the queue's usage
 * negative and make a 1-cpu workload fit a 1-cpu queue that is 8e18 over:
 * it is refused, and the small one stays pending. */
static void admitted_usage_overflow_refused(void **state)
{
	struct carve_manifests *m =
		tu_load(TEAM("1") CPU_WL("a", "1", "4000000000000000", ADM("1"))
				CPU_WL("b", "1", "4000000000000000", ADM("1"))
				CPU_WL("c", "1", "4000000000000000", ADM("1"))
				CPU_WL("small", "1", "1", ""));
	struct carve_admission *ad = carve_admission_build(m);

	(void)state;
	assert_non_null(ad);
	assert_int_equal(m->diags.nerrors, 1);
	tu_assert_error(m, 62, 33, "workload ns/c: admitted, it would take the usage of "
			"default/cpu in ClusterQueue team or its cohorts past the largest quantity "
			"carve holds (9223372036854775807m)");
	assert_int_equal(carve_adm_find_workload(ad->adm, "ns/c"), CARVE_ENOTFOUND);
	check_engine(ad->adm);
	assert_int_equal(carve_adm_cq_usage(ad->adm, "team", "default", "cpu"), 8000000000000000000);
	carve_adm_run(ad->adm, 0, 10);
	check_engine(ad->adm);
	assert_int_equal(status_of(ad, "ns/small")->state, CARVE_WL_PENDING);
	assert_int_equal(status_of(ad, "ns/small")->pending_reason, CARVE_PEND_NOFIT);
	assert_int_equal(carve_adm_cq_usage(ad->adm, "team", "default", "cpu"), 8000000000000000000);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

/* ClusterQueue a keeps 8e18 of its 9e18 (lendingLimit 1e18) in a cohort
 * whose subtree quota saturates (b lends 9e18).  Kueue's available for a
 * is more than int64 holds: it was computed with a wrapping sum (a 1-cpu
 * workload did not fit), and nothing kept a's usage from passing
 * INT64_MAX.  a takes 9e18 and 2e17 more (usage 9.2e18); 1e17 more would
 * overflow: what a may take stops short of it, so it does not fit. */
static void cohort_near_the_limit(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: a}\n"
		"spec:\n  cohortName: c\n  resourceGroups:\n  - coveredResources: [cpu]\n"
		"    flavors:\n    - name: default\n      resources:\n"
		"      - {name: cpu, nominalQuota: 9000000000000000, lendingLimit: 1000000000000000}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: b}\n"
		"spec:\n  cohortName: c\n  resourceGroups:\n  - coveredResources: [cpu]\n"
		"    flavors:\n    - name: default\n      resources:\n"
		"      - {name: cpu, nominalQuota: 9000000000000000}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: q}\nspec: {clusterQueue: a}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: nb, name: q}\nspec: {clusterQueue: b}\n"
		CPU_WL("one", "1", "1", "")
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
		"metadata: {namespace: nb, name: borrow}\nspec:\n  queueName: q\n  podSets:\n"
		"  - name: main\n    count: 1\n    template:\n      spec:\n        containers:\n"
		"        - name: c\n          resources: {requests: {cpu: \"1\"}}\n");
	struct carve_admission *ad = carve_admission_build(m);
	struct carve_error err;
	struct carve_req big[1] = {{"cpu", 9000000000000000000 - 1000}};
	struct carve_req more[1] = {{"cpu", 200000000000000000}};
	struct carve_req over[1] = {{"cpu", 100000000000000000}};

	(void)state;
	tu_assert_clean(m);
	assert_true(carve_adm_run(ad->adm, 0, 10) > 0);
	check_engine(ad->adm);
	assert_int_equal(status_of(ad, "ns/one")->state, CARVE_WL_ADMITTED);
	assert_int_equal(status_of(ad, "nb/borrow")->state, CARVE_WL_ADMITTED);
	assert_true(add_api(ad->adm, "ns/big", "a", 1, big, 1, &err) >= 0);
	assert_true(carve_adm_run(ad->adm, 1, 10) > 0);
	check_engine(ad->adm);
	assert_int_equal(status_of(ad, "ns/big")->state, CARVE_WL_ADMITTED);
	assert_true(add_api(ad->adm, "ns/more", "a", 1, more, 1, &err) >= 0);
	assert_true(add_api(ad->adm, "ns/over", "a", 1, over, 1, &err) >= 0);
	carve_adm_run(ad->adm, 2, 10);
	check_engine(ad->adm);
	assert_int_equal(status_of(ad, "ns/more")->state, CARVE_WL_ADMITTED);
	assert_int_equal(status_of(ad, "ns/over")->state, CARVE_WL_PENDING);
	/* what a may take stops at INT64_MAX: NoFit, not SkippedInCycle */
	assert_int_equal(status_of(ad, "ns/over")->pending_reason, CARVE_PEND_NOFIT);
	assert_int_equal(carve_adm_cq_usage(ad->adm, "a", "default", "cpu"),
			 9000000000000000000 + 200000000000000000);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(count_times_request_overflow_refused),
		cmocka_unit_test(request_totals_refused_at_the_edge),
		cmocka_unit_test(admitted_usage_overflow_refused),
		cmocka_unit_test(cohort_near_the_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
