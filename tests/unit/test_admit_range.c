/*
 * test_admit_range.c - the admission engine at the edges of int64
 * milli-units: a podSet whose count x request does not fit is refused at
 * add time (never admitted), as is a workload given as admitted whose
 * charge would take a usage past INT64_MAX; quotas near the limit in a
 * cohort keep every usage exact; and a property test feeding extreme but
 * valid quantities (near INT64_MAX / count, many workloads, random cohort
 * trees and limits) checks after every cycle that carve_adm_check holds
 * and that no ClusterQueue uses more than nominal + borrowingLimit allows.
 */
#include "testutil.h"

#include "admit_int.h" /* potential and usage of the quota tree */
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

/* ---- property: extreme quantities, random cohort trees ---- */

static uint64_t prng;

static uint64_t rnd64(void)
{
	uint64_t z = (prng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rnd(uint32_t n)
{
	return (uint32_t)(rnd64() % n);
}

/* A quantity for a quota: small, around a fraction of INT64_MAX, or at it. */
static int64_t extreme(void)
{
	switch (rnd(8)) {
	case 0:
		return 0;
	case 1:
		return 1000 * (int64_t)(1 + rnd(8));
	case 2:
		return QMAX;
	case 3:
		return QMAX - (int64_t)rnd(1000);
	case 4:
		return QMAX / (2 + (int64_t)rnd(5));
	case 5:
		return QMAX / 2 + (int64_t)rnd(1000);
	default:
		return (int64_t)(rnd64() >> 1);
	}
}

#define NFLV 2
#define NRES 2
#define MAXQ 6

static const char *const flv_names[NFLV] = {"f0", "f1"};
static const char *const res_names[NRES] = {"cpu", "gpu"};

struct pcase {
	int nq;
	bool has_blimit[MAXQ][NFLV * NRES];
	int64_t nominal[MAXQ][NFLV * NRES], blimit[MAXQ][NFLV * NRES];
	char names[MAXQ][16];
};

/* Random quota for one group of NFLV x NRES; cq: may have a borrowing limit. */
static void random_quota(struct carve_fquota *q, bool cq)
{
	int k;

	for (k = 0; k < NFLV * NRES; k++) {
		memset(&q[k], 0, sizeof(q[k]));
		q[k].present = true;
		q[k].nominal = extreme();
		if (cq && rnd(3) == 0) {
			q[k].has_borrowing_limit = true;
			q[k].borrowing_limit = extreme();
		}
		if (rnd(4) == 0) {
			q[k].has_lending_limit = true;
			q[k].lending_limit = rnd(2) ? extreme() : q[k].nominal / 2;
		}
	}
}

/* Flavors, a random cohort tree (flat, nested, or none) and queues. */
static struct carve_adm *random_engine(struct pcase *pc)
{
	static const char *const cohorts[] = {"r", "c0", "c1", NULL};
	struct carve_adm *a = carve_adm_create();
	struct carve_error err;
	struct carve_fquota q[NFLV * NRES];
	struct carve_rgroup_spec g = {NRES, res_names, NFLV, flv_names, q};
	int i, k, shape = (int)rnd(3); /* 0: standalone, 1: flat cohort r, 2: r over c0, c1 */

	assert_non_null(a);
	for (i = 0; i < NFLV; i++) {
		struct carve_flavor_spec f;

		memset(&f, 0, sizeof(f));
		f.name = flv_names[i];
		assert_int_equal(carve_adm_add_flavor(a, &f, &err), 0);
	}
	if (shape == 2)
		for (i = 0; i < 3; i++) {
			struct carve_cohort_spec c;

			memset(&c, 0, sizeof(c));
			c.name = cohorts[i];
			c.parent = i ? "r" : NULL;
			if (rnd(2)) {
				random_quota(q, false);
				c.ngroups = 1;
				c.groups = &g;
			}
			assert_int_equal(carve_adm_add_cohort(a, &c, &err), 0);
		}
	pc->nq = 2 + (int)rnd(MAXQ - 1);
	for (i = 0; i < pc->nq; i++) {
		struct carve_cq_spec s;

		memset(&s, 0, sizeof(s));
		snprintf(pc->names[i], sizeof(pc->names[i]), "q%d", i);
		s.name = pc->names[i];
		s.cohort = shape == 0 ? NULL : shape == 1 ? "r" : cohorts[rnd(3)];
		s.strategy = rnd(2) ? CARVE_STRICT_FIFO : CARVE_BEST_EFFORT_FIFO;
		s.within_cq = (enum carve_within_cq)rnd(3);
		s.reclaim = (enum carve_reclaim)rnd(3);
		s.bwc = (enum carve_bwc)rnd(2);
		s.when_can_borrow = (enum carve_fungibility)rnd(2);
		s.when_can_preempt = (enum carve_fungibility)rnd(2);
		s.fair_weight_milli = rnd(3) ? 1000 : (int64_t)(1 + rnd(3000));
		random_quota(q, s.cohort != NULL);
		for (k = 0; k < NFLV * NRES; k++) {
			pc->nominal[i][k] = q[k].nominal;
			pc->has_blimit[i][k] = q[k].has_borrowing_limit;
			pc->blimit[i][k] = q[k].borrowing_limit;
		}
		s.ngroups = 1;
		s.groups = &g;
		assert_int_equal(carve_adm_add_cq(a, &s, &err), 0);
	}
	if (carve_adm_finalize(a, &err))
		fail_msg("finalize: %s", err.text);
	return a;
}

/* A per-pod request for count pods: near INT64_MAX / count (sometimes
 * just past it), small, or anything. */
static int64_t per_pod(int32_t count)
{
	switch (rnd(6)) {
	case 0:
		return QMAX / count;
	case 1:
		return QMAX / count - (int64_t)rnd(1000);
	case 2: /* count x this overflows (one pod: the most there is) */
		return count > 1 ? QMAX / count + 1 + (int64_t)rnd(3) : QMAX;
	case 3:
		return 1000 * (int64_t)(1 + rnd(4));
	case 4:
		return QMAX / count / (2 + (int64_t)rnd(4));
	default: {
		uint64_t v = rnd64(); /* then the shift: one order of calls */

		return (int64_t)(v >> (1 + rnd(62)));
	}
	}
}

struct pstats {
	int added, refused, refused_admitted, admitted, huge_admitted, preempted, finished;
};

/*
 * A random workload (one or two podSets, some with minCount) of queue qi,
 * pending or given as admitted on flavor f0; the engine must refuse it
 * with CARVE_ERANGE exactly when a podSet's count x request, or their sum
 * per resource, leaves int64 (computed here in 128 bits), and may refuse
 * one given as admitted only when its charge would take a usage past
 * INT64_MAX: at its queue (exactly, here) or at a cohort above it.
 */
static void random_workload(struct carve_adm *a, const struct pcase *pc, int n, int64_t now,
			    bool admitted, struct pstats *ps)
{
	static const int32_t counts[] = {1, 1, 2, 3, 7, 1000, 65536, INT32_MAX};
	struct carve_req reqs[2][NRES];
	struct carve_podset_spec pss[2];
	struct carve_ps_admission pa[2];
	struct carve_label fl[NRES] = {{"cpu", "f0"}, {"gpu", "f0"}};
	struct carve_wl_spec w;
	struct carve_error err;
	__int128 total[NRES] = {0};
	bool over = false, near_usage = false;
	char key[32];
	int p, r, rc, np = 1 + (int)(rnd(4) == 0), qi = (int)rnd((uint32_t)pc->nq);

	memset(pss, 0, sizeof(pss));
	for (p = 0; p < np; p++) {
		int32_t count = counts[rnd(sizeof(counts) / sizeof(counts[0]))];

		pss[p].name = p ? "second" : "main";
		pss[p].count = count;
		pss[p].min_count = count > 1 && rnd(3) == 0 ? 1 + (int32_t)rnd((uint32_t)count - 1)
							    : count;
		pss[p].nreqs = NRES;
		pss[p].reqs = reqs[p];
		for (r = 0; r < NRES; r++) {
			reqs[p][r].name = res_names[r];
			reqs[p][r].milli = rnd(5) ? per_pod(count) : 0;
			total[r] += (__int128)count * reqs[p][r].milli;
			over |= (__int128)count * reqs[p][r].milli > QMAX || total[r] > QMAX;
		}
		pa[p].podset = pss[p].name;
		pa[p].count = count;
		pa[p].n = NRES;
		pa[p].flavors = fl;
	}
	snprintf(key, sizeof(key), "ns/w%d", n);
	memset(&w, 0, sizeof(w));
	w.key = key;
	w.cq = pc->names[qi];
	w.priority = (int32_t)rnd(4);
	w.created = now;
	w.has_created = rnd(5) != 0;
	w.npodsets = (size_t)np;
	w.podsets = pss;
	if (admitted) {
		int node = a->cat.cqs[qi].node;

		w.admitted = true;
		w.nadmission = (size_t)np;
		w.admission = pa;
		for (r = 0; r < NRES; r++) {
			int fr = carve__fr_id(a, 0, carve_resreg_find(a->cat.res, res_names[r]));

			if (fr >= 0 && (__int128)a->qt.nodes[node].usage[fr] + total[r] > QMAX)
				near_usage = true;
		}
	}
	rc = carve_adm_add_workload(a, &w, &err);
	if (over) {
		if (rc != CARVE_ERANGE)
			fail_msg("%s: total request beyond int64 accepted (%d)", key, rc);
		assert_non_null(strstr(err.text, key));
		ps->refused++;
		return;
	}
	if (rc == CARVE_ERANGE && admitted &&
	    (near_usage || a->qt.nodes[a->cat.cqs[qi].node].parent >= 0)) {
		assert_non_null(strstr(err.text, "past the largest quantity carve holds"));
		ps->refused_admitted++;
		return;
	}
	if (rc < 0)
		fail_msg("%s refused: %s", key, err.text);
	if (near_usage)
		fail_msg("%s: admitted although its queue's usage would pass INT64_MAX", key);
	ps->added++;
}

/* What every ClusterQueue holds once the marked victims are gone is within
 * what it may hold: available >= 0, usage <= its potential and, with a
 * borrowingLimit, <= nominal + borrowingLimit (standalone: nominal).
 * Workloads given as admitted may be over quota, so only the queues of
 * cohort trees without any are held to it (given: per root node). */
static void assert_within_quota(struct carve_adm *a, const struct pcase *pc, const bool *given)
{
	size_t i;
	int q, fr;

	for (i = 0; i < a->cat.nwls; i++)
		if (a->cat.wls[i].marked)
			carve__wl_charge(a, &a->cat.wls[i], -1);
	for (i = 0; i < a->qt.nnodes; i++)
		for (fr = 0; fr < a->qt.nfr; fr++)
			assert_true(a->qt.nodes[i].usage[fr] >= 0);
	for (q = 0; q < pc->nq; q++) {
		const struct qnode *n = &a->qt.nodes[a->cat.cqs[q].node];

		if (given[n->root])
			continue;
		for (fr = 0; fr < a->qt.nfr; fr++) {
			int k = a->qt.fr_flavor[fr] * NRES +
				(strcmp(carve_resreg_name(a->cat.res, a->qt.fr_res[fr]), "cpu") ? 1 : 0);
			int64_t u = n->usage[fr];

			if (carve__qt_available(a, a->cat.cqs[q].node, fr) < 0 ||
			    u > carve__qt_potential(a, a->cat.cqs[q].node, fr) ||
			    (pc->has_blimit[q][k] &&
			     (__int128)u > (__int128)pc->nominal[q][k] + pc->blimit[q][k]) ||
			    (n->parent < 0 && u > pc->nominal[q][k]))
				fail_msg("ClusterQueue %s over quota in %s/%s: usage %lld, nominal %lld, "
					 "potential %lld", pc->names[q],
					 flv_names[a->qt.fr_flavor[fr]],
					 carve_resreg_name(a->cat.res, a->qt.fr_res[fr]), (long long)u,
					 (long long)pc->nominal[q][k],
					 (long long)carve__qt_potential(a, a->cat.cqs[q].node, fr));
		}
	}
	for (i = 0; i < a->cat.nwls; i++)
		if (a->cat.wls[i].marked)
			carve__wl_charge(a, &a->cat.wls[i], +1);
}

static void property_extreme_quantities(void **state)
{
	struct pstats st = {0};
	int trial;

	(void)state;
	prng = 20260801;
	for (trial = 0; trial < 500; trial++) {
		struct pcase pc;
		struct carve_adm *a = random_engine(&pc);
		bool given[MAXQ + 3] = {false}; /* per node: queues, then cohorts */
		int i, c, n = 0, npre = rnd(3) ? 0 : 1 + (int)rnd(4), nw = 4 + (int)rnd(20);

		assert_true(a->qt.nnodes <= MAXQ + 3);
		carve_adm_set_fair_sharing(a, rnd(4) == 0);
		for (i = 0; i < npre; i++) {
			int before = st.added;

			random_workload(a, &pc, n++, 0, true, &st);
			if (st.added > before)
				given[a->qt.nodes[a->cat.cqs[a->cat.wls[a->cat.nwls - 1].cq].node].root] =
					true;
		}
		for (i = 0; i < nw; i++)
			random_workload(a, &pc, n++, i, false, &st);
		check_engine(a);
		for (c = 0; c < 12; c++) {
			size_t k, nwl;

			if (rnd(3))
				carve_adm_evict_marked(a);
			for (i = (int)rnd(4); i > 0; i--)
				random_workload(a, &pc, n++, 100 + c, false, &st);
			check_engine(a);
			assert_true(carve_adm_cycle(a, 100 + c) >= 0);
			check_engine(a);
			assert_within_quota(a, &pc, given);
			nwl = carve_adm_workload_count(a);
			for (k = 0; k < nwl; k++) {
				const struct carve_wl_status *s = carve_adm_status(a, (uint32_t)k);
				const struct wl *w = &a->cat.wls[k];

				if (s->state == CARVE_WL_ADMITTED && s->cycle == c + 1 &&
				    s->admitted_by_engine) {
					size_t u;

					st.admitted++;
					for (u = 0; u < w->adm.nuse; u++)
						if (w->adm.use[u].q > QMAX / 4) {
							st.huge_admitted++;
							break;
						}
				}
				st.preempted += s->marked && s->cycle == c + 1;
			}
			for (k = 0; k < nwl; k++)
				if (carve_adm_status(a, (uint32_t)k)->state == CARVE_WL_ADMITTED &&
				    rnd(4) == 0) {
					assert_int_equal(carve_adm_finish(a, (uint32_t)k), 0);
					st.finished++;
				}
			check_engine(a);
		}
		carve_adm_destroy(a);
	}
	print_message("added %d, refused %d (given admitted: %d), admitted %d (%d above "
		      "INT64_MAX/4), preempted %d, finished %d\n", st.added, st.refused,
		      st.refused_admitted, st.admitted, st.huge_admitted, st.preempted, st.finished);
	/* every path was taken */
	assert_true(st.refused > 1000);
	assert_true(st.refused_admitted > 20);
	assert_true(st.admitted > 2000);
	assert_true(st.huge_admitted > 1000);
	assert_true(st.preempted > 100);
	assert_true(st.finished > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(count_times_request_overflow_refused),
		cmocka_unit_test(request_totals_refused_at_the_edge),
		cmocka_unit_test(admitted_usage_overflow_refused),
		cmocka_unit_test(cohort_near_the_limit),
		cmocka_unit_test(property_extreme_quantities),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
