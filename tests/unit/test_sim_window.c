/*
 * test_sim_window.c - the replay simulator's window (sim.h,
 * docs/simulator.md "Window, waits and GPU-hours" and "Partial admission
 * and Dynamic MIG"): one window for every side, waits censored at its
 * end, wait until every pod runs beside wait to first GPU, GPU-hours
 * held / useful / asked, makespan and backlog, partial admission running
 * longer, and the Dynamic MIG reconfiguration delay.
 *
 * The hand-computed test (test_hand_computed) is one scenario written
 * once, then one block per model with every figure worked out on paper
 * in the comments.
 */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "carve/sim.h"

/* ---- helpers ------------------------------------------------------------------- */

/* Adds job name: count pods (min_count 0: no partial admission) of
 * `units` of resource res each, no cpu; demand 0 means 1. */
static void add_job(struct carve_jobs *js, const char *name, const char *queue,
		    int64_t arrival, int64_t duration, int count, int min_count, const char *res,
		    int units, double demand)
{
	struct carve_req reqs[1] = {{res, units * 1000}};
	struct carve_job_podset ps;
	struct carve_job j;
	struct carve_error err;

	memset(&ps, 0, sizeof(ps));
	ps.count = count;
	ps.min_count = min_count;
	ps.nreqs = 1;
	ps.reqs = reqs;
	memset(&j, 0, sizeof(j));
	j.name = name;
	j.ns = "ns";
	j.queue = queue;
	j.arrival = arrival;
	j.duration = duration;
	j.demand = demand;
	j.npodsets = 1;
	j.podsets = &ps;
	j.pos.file = "jobs.csv";
	j.pos.line = (int)js->n + 2;
	j.pos.col = 1;
	if (carve_jobs_add(js, &j, &err) < 0)
		fail_msg("job %s: %s", name, err.text);
}

static json_t *run_opts(struct carve_manifests *m, struct carve_jobs *js,
			const struct carve_sim_opts *o, int64_t until)
{
	struct carve_error err;
	struct carve_sim *s;
	json_t *r;

	s = carve_sim_create(m, js, o, &err);
	if (!s) {
		tu_dump(m);
		fail_msg("carve_sim_create: %s", err.text);
	}
	assert_int_equal(carve_sim_run(s, until, NULL, &err), 0);
	r = carve_sim_result_json(s);
	assert_non_null(r);
	carve_sim_destroy(s);
	return r;
}

static json_t *get(json_t *o, const char *path)
{
	json_t *v = o;
	char buf[256], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save))
		v = json_object_get(v, tok);
	return v;
}

static double dget(json_t *o, const char *path)
{
	json_t *v = get(o, path);

	if (!json_is_number(v))
		fail_msg("%s is not a number", path);
	return json_number_value(v);
}

/* Asserts the number at path is want (the JSON rounds to 4 decimals). */
#define EQ(r, path, want)                                                                    \
	do {                                                                                   \
		double got_ = dget((r), (path)), want_ = (want);                               \
		if (fabs(got_ - want_) > 0.5e-4 + 1e-9)                                        \
			fail_msg("%s: %.6f, want %.6f", (path), got_, want_);                  \
	} while (0)

#define IS_NULL(r, path)                                                                     \
	do {                                                                                   \
		if (!json_is_null(get((r), (path))))                                           \
			fail_msg("%s is not null", (path));                                     \
	} while (0)

/* ---- the hand-computed scenario ------------------------------------------------ */

/*
 * Two nodes: g-0 with 2 exclusive H100s (pool h100) and m-0 with one
 * A100-80GB in MIG mode as 7 x 1g.10gb (pool mig): capacity 3 GPUs.
 * ClusterQueue train: nvidia.com/gpu 2 in flavor h100; ClusterQueue inf:
 * nvidia.com/mig-1g.10gb 7 in flavor mig (7 x 1/7 = 1 GPU-equivalent).
 */
static const char *hand_yaml =
	"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: h100}\n"
	"spec: {count: 1, namePrefix: g-, gpu: {model: H100-80GB, count: 2},"
	" sharing: {mode: exclusive}, cpu: \"64\", memory: 512Gi, labels: {pool: h100}}\n"
	"---\napiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: mig}\n"
	"spec: {count: 1, namePrefix: m-, gpu: {model: A100-80GB, count: 1},"
	" sharing: {mode: mig, mig: {layout: {\"1g.10gb\": 7}}}, cpu: \"64\","
	" memory: 512Gi, labels: {pool: mig}}\n"
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
	"metadata: {name: h100}\nspec: {nodeLabels: {pool: h100}}\n"
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
	"metadata: {name: mig}\nspec: {nodeLabels: {pool: mig}}\n"
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
	"metadata: {name: train}\nspec:\n  namespaceSelector: {}\n"
	"  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
	"    - name: h100\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: \"2\"}\n"
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
	"metadata: {name: inf}\nspec:\n  namespaceSelector: {}\n"
	"  resourceGroups:\n  - coveredResources: [nvidia.com/mig-1g.10gb]\n    flavors:\n"
	"    - name: mig\n      resources:\n"
	"      - {name: nvidia.com/mig-1g.10gb, nominalQuota: \"7\"}\n"
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
	"metadata: {namespace: ns, name: train}\nspec: {clusterQueue: train}\n"
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
	"metadata: {namespace: ns, name: inf}\nspec: {clusterQueue: inf}\n";

/*
 * The trace (every model replays it with a 60 s gang timeout):
 *   J1 train-a  train  arrives 0,  100 s, 1 pod x 1 nvidia.com/gpu, demand 0.5
 *   J2 gang     train  arrives 10, 100 s, 2 pods x 1 nvidia.com/gpu
 *   J3 inf-gang inf    arrives 0,  300 s, 2 pods x 1 nvidia.com/mig-1g.10gb
 *   J4 inf-1    inf    arrives 50, 100 s, 1 pod x 1 nvidia.com/mig-1g.10gb
 * The window: first arrival 0 to the latest arrival + duration, J3's
 * 0 + 300 = 300; capacity x window = 3 x 300 = 900 GPU-seconds.
 * Asked (the same for every model): J1 1 x 100 + J2 2 x 100 + J3 2/7 x
 * 300 + J4 1/7 x 100 = 100 + 200 + 600/7 + 100/7 = 400 GE-s = 0.1111 h.
 * J3 is the gang only carve admits whole: its two 1g.10gb pods share the
 * one MIG GPU in carve; a model without MIG sharing needs two whole MIG
 * GPUs and has one.
 */
static struct carve_jobs *hand_trace(void)
{
	struct carve_jobs *js = carve_jobs_create();

	add_job(js, "train-a", "train", 0, 100, 1, 0, "nvidia.com/gpu", 1, 0.5);
	add_job(js, "gang", "train", 10, 100, 2, 0, "nvidia.com/gpu", 1, 0);
	add_job(js, "inf-gang", "inf", 0, 300, 2, 0, "nvidia.com/mig-1g.10gb", 1, 0);
	add_job(js, "inf-1", "inf", 50, 100, 1, 0, "nvidia.com/mig-1g.10gb", 1, 0);
	return js;
}

static void test_hand_computed(void **state)
{
	struct carve_manifests *m = tu_load(hand_yaml);
	struct carve_jobs *js = hand_trace();
	struct carve_sim_opts o;
	json_t *r;

	(void)state;
	tu_assert_clean(m);
	memset(&o, 0, sizeof(o));
	o.gang_timeout = 60;

	/* ---- carve -------------------------------------------------------------
	 * t=0   J1 admitted on an H100 (1 GE, works 0.5), J3 admitted whole on
	 *       two 1g.10gb slices (2/7 GE); both first GPU and all pods at 0.
	 * t=10  J2 (2 H100s) waits: one H100 is free, the gang needs two.
	 * t=50  J4 on a third slice (1/7 GE).
	 * t=100 J1 done; J2 admitted whole: wait to first GPU = wait until
	 *       every pod runs = 90 s.  t=150 J4 done, t=200 J2 done, t=300 J3
	 *       done: makespan 300 = the window's end, no backlog.
	 * Held:   J1 100 + J2 2 x 100 + J3 2/7 x 300 + J4 1/7 x 100 = 400 GE-s
	 *         -> allocation 400 / 900 = 44.4444 %, 0.1111 GPU-hours.
	 * Useful: 400 - J1's idle half (0.5 x 100) = 350 GE-s
	 *         -> effective utilisation 350 / 900 = 38.8889 %, 0.0972 h.
	 * Quota:  train (100 + 200) / 300 = 1.0 GE, inf (600/7 + 100/7) / 300
	 *         = 1/3 GE on average; nothing borrowed.
	 * Waits (nearest rank): train {0, 90}: p50 0, p95 90; inf {0, 0}.
	 * First-time success: the multi-pod jobs J2 and J3 both ran whole at
	 * their first attempt: 100 %.
	 * Fragmentation: while J2 waits (10..100) its pod type (one whole GPU)
	 * fits the free H100 but not the MIG GPU's free slices: 5 of 7 slices
	 * for 10..50 and 4 of 7 for 50..100, which the placer counts in whole
	 * milli-GPUs (714 and 571), of 3 GPUs: (0.714 x 40 + 0.571 x 50) / 3 x
	 * 100 / 300 = 6.3456 %. */
	r = run_opts(m, js, &o, -1);
	assert_string_equal(json_string_value(get(r, "window.from")), "trace");
	EQ(r, "window.start_s", 0);
	EQ(r, "window.end_s", 300);
	EQ(r, "horizon_s", 300);
	EQ(r, "makespan_s", 300);
	EQ(r, "gpu_capacity", 3);
	EQ(r, "gpu_allocation_pct", 400.0 / 900 * 100);
	EQ(r, "effective_utilisation_pct", 350.0 / 900 * 100);
	EQ(r, "gpu_hours.held", 400.0 / 3600);
	EQ(r, "gpu_hours.useful", 350.0 / 3600);
	EQ(r, "gpu_hours.asked", 400.0 / 3600);
	EQ(r, "backlog.jobs_waiting", 0);
	EQ(r, "backlog.jobs_running", 0);
	EQ(r, "backlog.gpu_hours_left", 0);
	EQ(r, "quota.train.used_avg", 1.0);
	EQ(r, "quota.inf.used_avg", 1.0 / 3);
	EQ(r, "quota.inf.nominal", 1.0);
	EQ(r, "quota.train.borrowed_avg", 0);
	EQ(r, "wait_first_gpu_s.train.n", 2);
	EQ(r, "wait_first_gpu_s.train.censored", 0);
	EQ(r, "wait_first_gpu_s.train.p50", 0);
	EQ(r, "wait_first_gpu_s.train.p95", 90);
	EQ(r, "wait_all_pods_s.train.p95", 90);
	EQ(r, "wait_first_gpu_s.inf.p95", 0);
	EQ(r, "wait_all_pods_s.inf.p95", 0);
	EQ(r, "wait_first_gpu_s.inf.censored", 0);
	EQ(r, "first_time_success_pct", 100);
	EQ(r, "queues.train.first_time_success_pct", 100);
	EQ(r, "queues.inf.first_time_success_pct", 100);
	EQ(r, "gang_timeouts", 0);
	EQ(r, "preemptions", 0);
	EQ(r, "jobs.completed", 4);
	EQ(r, "jobs.partial", 0);
	EQ(r, "fragmentation_pct", (0.714 * 40 + 0.571 * 50) / 3 * 100 / 300);
	assert_string_equal(json_string_value(get(r, "mig.mode")), "static");
	EQ(r, "mig.repartitions", 0);
	json_decref(r);

	/* ---- exclusive (every GPU whole; the baseline as it is today) ----------
	 * The copy of the cluster has 3 whole GPUs; a 1g.10gb pod takes the
	 * whole A100 and works 1/7 of it.  J3 needs two such GPUs: it can never
	 * run (never_fit), waits for ever.
	 * t=0   J1 on an H100 (held 1, works 0.5).
	 * t=10  J2's first pod on the other H100 (held 1, works 0): first GPU
	 *       at 10 (wait 0); its second pod waits.
	 * t=50  J4 on the A100 (held 1, works 1/7) until 150.
	 * t=70  gang timeout (60 s): J2 gives its pod back and takes it again
	 *       at once (held without a break), gang_timeouts 1.
	 * t=100 J1 done; J2's second pod placed: every pod runs at 100 (wait
	 *       90), J2 runs 100..200 (held 2, works 2).
	 * The run ends at 200 (J3 never completes: makespan null); the window
	 * still ends at 300.
	 * Held:   J1 100 + J2 90 (10..100) + 200 + J4 100 = 490 GE-s
	 *         -> 490 / 900 = 54.4444 %, 0.1361 h.
	 * Useful: J1 50 + J2 200 + J4 100/7 = 264.2857 GE-s
	 *         -> 29.3651 %, 0.0734 h.  Asked as for carve: 0.1111 h.
	 * Quota:  train (100 + 90 + 200) / 300 = 1.3, inf 100 / 300 = 1/3.
	 * Waits to first GPU: train {0, 0}; inf {J4 0, J3 still waiting at
	 * the window's end: 300 - 0 = 300, censored}: n 2, p50 0, p95 300.
	 * Waits until every pod runs: train {0, 90}: p95 90; inf as above.
	 * First-time success: J2 timed out (0 of 1; J3 never tried): 0 %.
	 * Backlog at 300: J3 waiting, 2/7 GE x 300 s left = 0.0238 h.
	 * Fragmentation: J2's pod (a whole GPU of the H100 kind) waits from 10
	 * to 100; the A100 is free only 10..50 and its kind is not the pod's:
	 * 1 of 3 GPUs for 40 s: 100/3 x 40 / 300 = 4.4444 %. */
	o.sched = CARVE_SIM_EXCLUSIVE;
	r = run_opts(m, js, &o, -1);
	EQ(r, "window.start_s", 0);
	EQ(r, "window.end_s", 300);
	EQ(r, "horizon_s", 200);
	IS_NULL(r, "makespan_s");
	EQ(r, "gpu_allocation_pct", 490.0 / 900 * 100);
	EQ(r, "effective_utilisation_pct", (250 + 100.0 / 7) / 900 * 100);
	EQ(r, "gpu_hours.held", 490.0 / 3600);
	EQ(r, "gpu_hours.useful", (250 + 100.0 / 7) / 3600);
	EQ(r, "gpu_hours.asked", 400.0 / 3600);
	EQ(r, "backlog.jobs_waiting", 1);
	EQ(r, "backlog.jobs_running", 0);
	EQ(r, "backlog.gpu_hours_left", 2.0 / 7 * 300 / 3600);
	EQ(r, "quota.train.used_avg", 1.3);
	EQ(r, "quota.inf.used_avg", 1.0 / 3);
	EQ(r, "wait_first_gpu_s.train.n", 2);
	EQ(r, "wait_first_gpu_s.train.p95", 0);
	EQ(r, "wait_all_pods_s.train.p50", 0);
	EQ(r, "wait_all_pods_s.train.p95", 90);
	EQ(r, "wait_first_gpu_s.inf.n", 2);
	EQ(r, "wait_first_gpu_s.inf.censored", 1);
	EQ(r, "wait_first_gpu_s.inf.still_waiting", 1);
	EQ(r, "wait_first_gpu_s.inf.p50", 0);
	EQ(r, "wait_first_gpu_s.inf.p95", 300);
	EQ(r, "wait_all_pods_s.inf.censored", 1);
	EQ(r, "wait_all_pods_s.inf.p95", 300);
	EQ(r, "first_time_success_pct", 0);
	IS_NULL(r, "queues.inf.first_time_success_pct");
	EQ(r, "gang_timeouts", 1);
	EQ(r, "jobs.completed", 3);
	EQ(r, "jobs.never_fit", 1);
	EQ(r, "jobs.partial", 0);
	EQ(r, "fragmentation_pct", 100.0 / 3 * 40 / 300);
	json_decref(r);

	/* ---- device-plugin (static MIG instances served, ResourceQuota per
	 * resource name charged at pod creation: ns may hold 2 nvidia.com/gpu
	 * and 7 nvidia.com/mig-1g.10gb) -------------------------------------
	 * t=0   J1 on an H100 (gpu quota 1 of 2); J3's two pods created (mig
	 *       quota 2 of 7) and placed on two 1g.10gb instances: J3 runs
	 *       whole 0..300 (2/7 GE, working).
	 * t=10  J2: its first pod is created (gpu quota 2 of 2) and placed on
	 *       the other H100 (first GPU at 10, wait 0); creating the second
	 *       is refused by the quota.
	 * t=50  J4 on a third instance (1/7 GE) until 150.
	 * t=70  gang timeout: J2 gives its pod back and takes it again at once
	 *       (held without a break), gang_timeouts 1.
	 * t=100 J1 done: J2's second pod is created and placed: every pod runs
	 *       at 100 (wait 90); J2 runs 100..200.  J3 done at 300 = makespan.
	 * Held:   J1 100 + J2 90 + 200 + J3 600/7 + J4 100/7 = 490 GE-s
	 *         -> 54.4444 %.  Useful: J1 50 + J2 200 + 100 = 350 -> 38.8889 %.
	 * Quota:  train (100 + 90 + 200) / 300 = 1.3, inf 1/3.
	 * Waits to first GPU: train {0, 0}, inf {0, 0}; until every pod runs:
	 * train {0, 90}.  First-time success: J2 timed out, J3 whole: 50 %.
	 * Fragmentation: while J2's pod waits (10..100) the free capacity its
	 * kind cannot use is the MIG GPU's free slices, as for carve. */
	o.sched = CARVE_SIM_DEVICE_PLUGIN;
	r = run_opts(m, js, &o, -1);
	assert_string_equal(json_string_value(get(r, "scheduler")), "device-plugin");
	EQ(r, "window.end_s", 300);
	EQ(r, "horizon_s", 300);
	EQ(r, "makespan_s", 300);
	EQ(r, "gpu_allocation_pct", 490.0 / 900 * 100);
	EQ(r, "effective_utilisation_pct", 350.0 / 900 * 100);
	EQ(r, "gpu_hours.held", 490.0 / 3600);
	EQ(r, "gpu_hours.useful", 350.0 / 3600);
	EQ(r, "gpu_hours.asked", 400.0 / 3600);
	EQ(r, "backlog.jobs_waiting", 0);
	EQ(r, "backlog.jobs_running", 0);
	EQ(r, "backlog.gpu_hours_left", 0);
	EQ(r, "quota.train.used_avg", 1.3);
	EQ(r, "quota.inf.used_avg", 1.0 / 3);
	EQ(r, "wait_first_gpu_s.train.n", 2);
	EQ(r, "wait_first_gpu_s.train.p95", 0);
	EQ(r, "wait_all_pods_s.train.p50", 0);
	EQ(r, "wait_all_pods_s.train.p95", 90);
	EQ(r, "wait_first_gpu_s.inf.n", 2);
	EQ(r, "wait_first_gpu_s.inf.censored", 0);
	EQ(r, "wait_first_gpu_s.inf.p95", 0);
	EQ(r, "wait_all_pods_s.inf.p95", 0);
	EQ(r, "first_time_success_pct", 50);
	EQ(r, "queues.train.first_time_success_pct", 0);
	EQ(r, "queues.inf.first_time_success_pct", 100);
	EQ(r, "gang_timeouts", 1);
	EQ(r, "preemptions", 0);
	EQ(r, "jobs.completed", 4);
	EQ(r, "jobs.never_fit", 0);
	EQ(r, "jobs.partial", 0);
	EQ(r, "fragmentation_pct", (0.714 * 40 + 0.571 * 50) / 3 * 100 / 300);
	json_decref(r);

	/* ---- kueue (quota-only admission on the same ClusterQueues, then
	 * kube-scheduler; waitForPodsReady takes the given 60 s) ---------------
	 * t=0   J1 admitted (train 1 of 2) and placed; J3 admitted (inf 2 of
	 *       7), both pods placed on instances: runs whole 0..300.
	 * t=10  J2 asks 2 GPUs, train has 1 left: not admitted, no pod exists.
	 * t=50  J4 admitted and placed, 50..150.
	 * t=100 J1 done: J2 admitted, both pods placed at once (wait 90 to
	 *       first GPU and to every pod), runs 100..200; no pods-ready
	 *       timeout.  J3 done at 300.
	 * The same schedule as carve: held 400 GE-s -> 44.4444 %, useful 350
	 * -> 38.8889 %; quota train 1.0, inf 1/3; waits train {0, 90}, inf
	 * {0, 0}; first-time success 100 %; fragmentation as for carve. */
	o.sched = CARVE_SIM_KUEUE;
	r = run_opts(m, js, &o, -1);
	assert_string_equal(json_string_value(get(r, "scheduler")), "kueue");
	EQ(r, "window.end_s", 300);
	EQ(r, "horizon_s", 300);
	EQ(r, "makespan_s", 300);
	EQ(r, "gang_timeout_s", 60);
	EQ(r, "gpu_allocation_pct", 400.0 / 900 * 100);
	EQ(r, "effective_utilisation_pct", 350.0 / 900 * 100);
	EQ(r, "gpu_hours.held", 400.0 / 3600);
	EQ(r, "gpu_hours.useful", 350.0 / 3600);
	EQ(r, "gpu_hours.asked", 400.0 / 3600);
	EQ(r, "backlog.jobs_waiting", 0);
	EQ(r, "backlog.jobs_running", 0);
	EQ(r, "quota.train.used_avg", 1.0);
	EQ(r, "quota.inf.used_avg", 1.0 / 3);
	EQ(r, "wait_first_gpu_s.train.p50", 0);
	EQ(r, "wait_first_gpu_s.train.p95", 90);
	EQ(r, "wait_all_pods_s.train.p95", 90);
	EQ(r, "wait_first_gpu_s.inf.p95", 0);
	EQ(r, "first_time_success_pct", 100);
	EQ(r, "gang_timeouts", 0);
	EQ(r, "preemptions", 0);
	EQ(r, "jobs.completed", 4);
	EQ(r, "jobs.partial", 0);
	EQ(r, "fragmentation_pct", (0.714 * 40 + 0.571 * 50) / 3 * 100 / 300);
	json_decref(r);

	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* ---- the gang only carve admits whole ---------------------------------------------
 *
 * Three nodes n-0..n-2 of 2 H100s each (capacity 6), ClusterQueue train with
 * 6 nvidia.com/gpu (the namespace's ResourceQuota in the baselines: 6), a
 * 60 s gang timeout (waitForPodsReady's timeout in kueue):
 *   A  arrives 0,  100 s, 1 pod x 1 GPU
 *   B  arrives 0,  100 s, 1 pod x 1 GPU
 *   C  arrives 10, 100 s, 2 pods x 2 GPUs (the gang)
 * Window 0 .. max(100, 100, 110) = 110: capacity x window = 660 GPU-s.
 * Asked: A 100 + B 100 + C 4 x 100 = 600 GE-s.
 * carve packs A and B on one node, so C finds two empty nodes at once;
 * kube-scheduler's LeastAllocated spreads A and B over two nodes, leaving
 * one node with 2 free GPUs for C's first pod and two single GPUs no pod of
 * C can use.
 */
static void test_hand_gang_only_carve(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: h100}\n"
		"spec: {count: 3, namePrefix: n-, gpu: {model: H100-80GB, count: 2},"
		" sharing: {mode: exclusive}, cpu: \"64\", memory: 512Gi, labels: {pool: h100}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: h100}\nspec: {nodeLabels: {pool: h100}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		"metadata: {name: train}\nspec:\n  namespaceSelector: {}\n"
		"  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
		"    - name: h100\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: \"6\"}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: train}\nspec: {clusterQueue: train}\n");
	struct carve_jobs *js = carve_jobs_create();
	struct carve_sim_opts o;
	json_t *r;
	int sc;

	(void)state;
	tu_assert_clean(m);
	add_job(js, "a", "train", 0, 100, 1, 0, "nvidia.com/gpu", 1, 0);
	add_job(js, "b", "train", 0, 100, 1, 0, "nvidia.com/gpu", 1, 0);
	add_job(js, "c", "train", 10, 100, 2, 0, "nvidia.com/gpu", 2, 0);
	memset(&o, 0, sizeof(o));
	o.gang_timeout = 60;

	/* ---- carve (binpack) ---------------------------------------------------
	 * t=0 A and B on n-0; t=10 C admitted whole on n-1 and n-2 (waits 0),
	 * runs 10..110 = the window's end = makespan.
	 * Held = useful = 600 GE-s -> 90.9091 %; quota used 600 / 110 =
	 * 5.4545; first-time success 100 %; nothing waits: fragmentation 0. */
	r = run_opts(m, js, &o, -1);
	EQ(r, "window.end_s", 110);
	EQ(r, "makespan_s", 110);
	EQ(r, "gpu_allocation_pct", 600.0 / 660 * 100);
	EQ(r, "effective_utilisation_pct", 600.0 / 660 * 100);
	EQ(r, "gpu_hours.held", 600.0 / 3600);
	EQ(r, "gpu_hours.useful", 600.0 / 3600);
	EQ(r, "gpu_hours.asked", 600.0 / 3600);
	EQ(r, "backlog.jobs_waiting", 0);
	EQ(r, "backlog.jobs_running", 0);
	EQ(r, "quota.train.used_avg", 600.0 / 110);
	EQ(r, "wait_first_gpu_s.train.n", 3);
	EQ(r, "wait_first_gpu_s.train.p95", 0);
	EQ(r, "wait_all_pods_s.train.p95", 0);
	EQ(r, "first_time_success_pct", 100);
	EQ(r, "gang_timeouts", 0);
	EQ(r, "fragmentation_pct", 0);
	json_decref(r);

	/* ---- exclusive and device-plugin (whole GPUs either way) ----------------
	 * t=0   A on n-0, B on n-1 (LeastAllocated); quota 2 of 6.
	 * t=10  C's two pods are created (quota 6 of 6); the first goes to n-2
	 *       (first GPU at 10: wait 0), the second fits no node (n-0 and n-1
	 *       have one free GPU each); equal priorities: no preemption.
	 * t=70  gang timeout: C gives its pod back and takes n-2 again at once.
	 * t=100 A and B done: the second pod goes to n-0: every pod runs at
	 *       100 (wait 90); C runs 100..200 = makespan (after the window).
	 * Held in the window: A 100 + B 100 + C's first pod 2 GPUs x 100 s
	 *   (10..110, unbroken) + its second 2 x 10 (100..110) = 420 GE-s
	 *   -> 63.6364 %.
	 * Useful: A 100 + B 100 + C running 100..110 (4 x 10) = 240 -> 36.3636 %.
	 * Backlog at 110: C running, 4 GE x 90 s left = 0.1 GPU-hours.
	 * Quota used 420 / 110.  Waits to first GPU {0, 0, 0}; until every pod
	 * runs {0, 0, 90}: p95 90.  First-time success: C timed out: 0 %.
	 * Fragmentation: while C's pod waits (10..100), n-0's and n-1's single
	 * free GPUs fit no pod of C: 2 of 6 GPUs for 90 s: 2 x 90 / 660. */
	for (sc = CARVE_SIM_EXCLUSIVE; sc <= CARVE_SIM_DEVICE_PLUGIN; sc++) {
		o.sched = (enum carve_sim_sched)sc;
		r = run_opts(m, js, &o, -1);
		EQ(r, "window.end_s", 110);
		EQ(r, "makespan_s", 200);
		EQ(r, "gpu_allocation_pct", 420.0 / 660 * 100);
		EQ(r, "effective_utilisation_pct", 240.0 / 660 * 100);
		EQ(r, "gpu_hours.held", 420.0 / 3600);
		EQ(r, "gpu_hours.useful", 240.0 / 3600);
		EQ(r, "gpu_hours.asked", 600.0 / 3600);
		EQ(r, "backlog.jobs_waiting", 0);
		EQ(r, "backlog.jobs_running", 1);
		EQ(r, "backlog.gpu_hours_left", 0.1);
		EQ(r, "quota.train.used_avg", 420.0 / 110);
		EQ(r, "wait_first_gpu_s.train.p95", 0);
		EQ(r, "wait_all_pods_s.train.p50", 0);
		EQ(r, "wait_all_pods_s.train.p95", 90);
		EQ(r, "wait_all_pods_s.train.censored", 0);
		EQ(r, "first_time_success_pct", 0);
		EQ(r, "gang_timeouts", 1);
		EQ(r, "preemptions", 0);
		EQ(r, "fragmentation_pct", 2.0 * 90 / 660 * 100);
		json_decref(r);
	}

	/* ---- kueue --------------------------------------------------------------
	 * t=0   A and B admitted, placed on n-0 and n-1 (spread).
	 * t=10  C admitted on quota (6 of 6); its first pod to n-2 (first GPU:
	 *       wait 0), the second fits nowhere.
	 * t=70  waitForPodsReady (60 s): C evicted (pods and quota released),
	 *       requeued after the backoff of its first eviction, 60 s: 130.
	 * t=100 A and B done; C is in backoff.  t=130 C admitted again, both
	 *       pods placed, runs 130..230 = makespan.
	 * Held in the window: A 100 + B 100 + C 2 x 60 = 320 -> 48.4848 %;
	 * useful 200 -> 30.3030 %.  Backlog at 110: C waiting, 4 x 100 GE-s
	 * left = 0.1111 h.  Waits to first GPU {0, 0, 0}; until every pod
	 * runs: C still waiting at 110, censored at 110 - 10 = 100.  First-time
	 * success 0 %, one pods-ready eviction (gang_timeouts). */
	o.sched = CARVE_SIM_KUEUE;
	r = run_opts(m, js, &o, -1);
	EQ(r, "window.end_s", 110);
	EQ(r, "makespan_s", 230);
	EQ(r, "gpu_allocation_pct", 320.0 / 660 * 100);
	EQ(r, "effective_utilisation_pct", 200.0 / 660 * 100);
	EQ(r, "gpu_hours.held", 320.0 / 3600);
	EQ(r, "gpu_hours.useful", 200.0 / 3600);
	EQ(r, "backlog.jobs_waiting", 1);
	EQ(r, "backlog.jobs_running", 0);
	EQ(r, "backlog.gpu_hours_left", 400.0 / 3600);
	EQ(r, "quota.train.used_avg", 320.0 / 110);
	EQ(r, "wait_first_gpu_s.train.p95", 0);
	EQ(r, "wait_all_pods_s.train.censored", 1);
	EQ(r, "wait_all_pods_s.train.p95", 100);
	EQ(r, "first_time_success_pct", 0);
	EQ(r, "gang_timeouts", 1);
	EQ(r, "preemptions", 0);
	json_decref(r);

	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* ---- censoring, --until ---------------------------------------------------------- */

/* One H100 pool of 2 GPUs, queue train only (hand_yaml without MIG). */
static const char *two_gpus_yaml =
	"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: h100}\n"
	"spec: {count: 1, namePrefix: g-, gpu: {model: H100-80GB, count: 2},"
	" sharing: {mode: exclusive}, cpu: \"64\", memory: 512Gi, labels: {pool: h100}}\n"
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
	"metadata: {name: h100}\nspec: {nodeLabels: {pool: h100}}\n"
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
	"metadata: {name: train}\nspec:\n  namespaceSelector: {}\n"
	"  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
	"    - name: h100\n      resources:\n      - {name: nvidia.com/gpu, nominalQuota: \"%d\"}\n"
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
	"metadata: {namespace: ns, name: train}\nspec: {clusterQueue: train}\n";

static struct carve_manifests *two_gpus(int quota)
{
	char y[2048];

	snprintf(y, sizeof(y), two_gpus_yaml, quota);
	return tu_load(y);
}

/* a (2 GPUs, 0..100), b (2 GPUs, arrives 20, 50 s), c (2 GPUs, arrives
 * 30, 10 s); the window is 0 .. max(100, 70, 40) = 100.  b gets the GPUs
 * at 100 (wait 80, at the window's end: not censored) and runs 100..150;
 * c is still waiting at 100 and counts 100 - 30 = 70 s, censored; it runs
 * 150..160 (makespan 160, after the window).  Backlog at 100: b running
 * with all its 2 x 50 GE-s left, c waiting with 2 x 10.  Allocation in the
 * window: 2 of 2 GPUs all along.  Every model schedules these single-pod
 * jobs alike. */
static void test_censored(void **state)
{
	struct carve_manifests *m = two_gpus(2);
	struct carve_jobs *js = carve_jobs_create();
	struct carve_sim_opts o;
	json_t *r;
	int sc;

	(void)state;
	add_job(js, "a", "train", 0, 100, 1, 0, "nvidia.com/gpu", 2, 0);
	add_job(js, "b", "train", 20, 50, 1, 0, "nvidia.com/gpu", 2, 0);
	add_job(js, "c", "train", 30, 10, 1, 0, "nvidia.com/gpu", 2, 0);
	memset(&o, 0, sizeof(o));
	for (sc = CARVE_SIM_CARVE; sc <= CARVE_SIM_EXCLUSIVE; sc++) {
		o.sched = (enum carve_sim_sched)sc;
		r = run_opts(m, js, &o, -1);
		EQ(r, "window.end_s", 100);
		EQ(r, "horizon_s", 160);
		EQ(r, "makespan_s", 160);
		EQ(r, "wait_first_gpu_s.train.n", 3);
		EQ(r, "wait_first_gpu_s.train.censored", 1);
		EQ(r, "wait_first_gpu_s.train.p50", 70);
		EQ(r, "wait_first_gpu_s.train.p99", 80);
		EQ(r, "wait_all_pods_s.train.censored", 1);
		EQ(r, "backlog.jobs_waiting", 1);
		EQ(r, "backlog.jobs_running", 1);
		EQ(r, "backlog.gpu_hours_left", 120.0 / 3600);
		EQ(r, "gpu_allocation_pct", 100);
		/* asked: a 200 + b 100 + c 20 GE-s; held in the window: 200 */
		EQ(r, "gpu_hours.asked", 320.0 / 3600);
		EQ(r, "gpu_hours.held", 200.0 / 3600);
		json_decref(r);
	}
	/* --until 60: the window is 0 .. 60, from "until"; b and c wait 40 and
	 * 30 s, censored; a runs with 40 s x 2 GPUs left, b and c wait with
	 * 100 and 20 GE-s.  Asked is the work asked inside the window, each
	 * job's GE x the part of [arrival, arrival + duration] in 0 .. 60:
	 * a 2 x 60 + b 2 x (60 - 20) + c 2 x 10 (30 .. 40) = 220 GE-s (not the
	 * 320 of the whole trace, which held / useful, clipped to the window,
	 * could never reach) */
	o.sched = CARVE_SIM_CARVE;
	r = run_opts(m, js, &o, 60);
	assert_string_equal(json_string_value(get(r, "window.from")), "until");
	EQ(r, "window.end_s", 60);
	EQ(r, "horizon_s", 60);
	IS_NULL(r, "makespan_s");
	EQ(r, "wait_first_gpu_s.train.censored", 2);
	EQ(r, "wait_first_gpu_s.train.p99", 40);
	EQ(r, "backlog.jobs_waiting", 2);
	EQ(r, "backlog.jobs_running", 1);
	EQ(r, "backlog.gpu_hours_left", (2 * 40.0 + 100 + 20) / 3600);
	EQ(r, "gpu_allocation_pct", 100);
	EQ(r, "gpu_hours.asked", 220.0 / 3600);
	EQ(r, "gpu_hours.held", 120.0 / 3600);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* ---- a baseline gang placed partly ----------------------------------------------- */

/* Exclusive baseline, 2 GPUs: hold (1 GPU, 0..200); gang (2 pods x 1 GPU,
 * arrives 10, 100 s) gets one pod at 10 (first GPU: wait 0) and its second
 * at 200 (every pod runs: wait 190); window 0 .. 200.  The partial pod is
 * held 10..200 but works nothing: held 200 + 190 = 390 GE-s, useful 200
 * (hold's), asked 200 + 2 x 100 = 400.  carve admits the gang whole at
 * 200: both waits 190, held 200. */
static void test_wait_all_pods(void **state)
{
	struct carve_manifests *m = two_gpus(2);
	struct carve_jobs *js = carve_jobs_create();
	struct carve_sim_opts o;
	json_t *r;

	(void)state;
	add_job(js, "hold", "train", 0, 200, 1, 0, "nvidia.com/gpu", 1, 0);
	add_job(js, "gang", "train", 10, 100, 2, 0, "nvidia.com/gpu", 1, 0);
	memset(&o, 0, sizeof(o));
	o.sched = CARVE_SIM_EXCLUSIVE;
	o.gang_timeout = 1000;
	r = run_opts(m, js, &o, -1);
	EQ(r, "window.end_s", 200);
	EQ(r, "wait_first_gpu_s.train.p99", 0);
	EQ(r, "wait_all_pods_s.train.p50", 0);
	EQ(r, "wait_all_pods_s.train.p99", 190);
	EQ(r, "wait_all_pods_s.train.censored", 0);
	EQ(r, "gpu_hours.held", 390.0 / 3600);
	EQ(r, "gpu_hours.useful", 200.0 / 3600);
	EQ(r, "gpu_hours.asked", 400.0 / 3600);
	EQ(r, "first_time_success_pct", 100);
	EQ(r, "makespan_s", 300);
	json_decref(r);
	o.sched = CARVE_SIM_CARVE;
	r = run_opts(m, js, &o, -1);
	EQ(r, "wait_first_gpu_s.train.p99", 190);
	EQ(r, "wait_all_pods_s.train.p99", 190);
	EQ(r, "gpu_hours.held", 200.0 / 3600);
	EQ(r, "gpu_hours.useful", 200.0 / 3600);
	EQ(r, "makespan_s", 300);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* ---- partial admission ------------------------------------------------------------- */

/* Quota 2 GPUs: job p asks 4 pods x 1 GPU (minCount 2) for 100 s; carve
 * admits it with 2 pods, so it runs 100 x 4 / 2 = 200 s (work conserved:
 * 2 GPUs x 200 s = the 4 x 100 it asked), is counted in jobs.partial and is
 * not a first-time success.  With 3 of 4 pods (quota 3) the run time is
 * 100 x 4 / 3 = 133.3 s, rounded up to 134 s. */
static void test_partial(void **state)
{
	struct carve_manifests *m = two_gpus(2);
	struct carve_jobs *js = carve_jobs_create();
	struct carve_sim_opts o;
	json_t *r;

	(void)state;
	add_job(js, "p", "train", 0, 100, 4, 2, "nvidia.com/gpu", 1, 0);
	memset(&o, 0, sizeof(o));
	r = run_opts(m, js, &o, -1);
	EQ(r, "jobs.partial", 1);
	EQ(r, "makespan_s", 200);
	EQ(r, "first_time_success_pct", 0);
	EQ(r, "wait_all_pods_s.train.p99", 0);
	/* window 0 .. 100 (the trace's span): 2 GPUs held in it of the 400
	 * GE-s asked; the backlog at 100 is p running with the other half of
	 * its work (200 GE-s) left */
	EQ(r, "gpu_hours.held", 200.0 / 3600);
	EQ(r, "gpu_hours.useful", 200.0 / 3600);
	EQ(r, "gpu_hours.asked", 400.0 / 3600);
	EQ(r, "backlog.jobs_running", 1);
	EQ(r, "backlog.gpu_hours_left", 200.0 / 3600);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);

	/* 3 pods on 4 H100s with quota 3 */
	{
		char y[2048];
		const char *fmt = strstr(two_gpus_yaml, "---");

		snprintf(y, sizeof(y),
			 "apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: h100}\n"
			 "spec: {count: 1, namePrefix: g-, gpu: {model: H100-80GB, count: 4},"
			 " sharing: {mode: exclusive}, cpu: \"64\", memory: 512Gi,"
			 " labels: {pool: h100}}\n");
		snprintf(y + strlen(y), sizeof(y) - strlen(y), fmt, 3);
		m = tu_load(y);
	}
	js = carve_jobs_create();
	add_job(js, "p", "train", 0, 100, 4, 2, "nvidia.com/gpu", 1, 0);
	r = run_opts(m, js, &o, -1);
	EQ(r, "jobs.partial", 1);
	EQ(r, "makespan_s", 134);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* ---- Dynamic MIG -------------------------------------------------------------------- */

/* One A100-80GB laid out as 7 x 1g.10gb; queue inf covers 3g.40gb.  With
 * --mig dynamic, a (one 3g.40gb pod, 100 s, arrives 0) needs the idle GPU
 * repartitioned: it holds its 3/7 from 0, works from the delay d on, and
 * completes at d + 100.  b (same, arrives 10) takes the second 3g
 * instance of the layout a's repartition made: no new repartition, but
 * the GPU is being reconfigured until d, so b holds from 10 and works from
 * max(10, d): done at max(10, d) + 100 (d = 60: 160, not 110 as when only
 * the job that set the repartition off waited). */
static void mig_case(bool has_delay, int64_t delay)
{
	static const char *y =
		"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: mig}\n"
		"spec: {count: 1, namePrefix: m-, gpu: {model: A100-80GB, count: 1},"
		" sharing: {mode: mig, mig: {layout: {\"1g.10gb\": 7}}}, cpu: \"64\","
		" memory: 512Gi, labels: {pool: mig}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: mig}\nspec: {nodeLabels: {pool: mig}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		"metadata: {name: inf}\nspec:\n  namespaceSelector: {}\n"
		"  resourceGroups:\n  - coveredResources: [nvidia.com/mig-3g.40gb]\n"
		"    flavors:\n    - name: mig\n      resources:\n"
		"      - {name: nvidia.com/mig-3g.40gb, nominalQuota: \"2\"}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: inf}\nspec: {clusterQueue: inf}\n";
	struct carve_manifests *m = tu_load(y);
	struct carve_jobs *js = carve_jobs_create();
	struct carve_sim_opts o;
	int64_t d = has_delay ? delay : 60;
	json_t *r;

	add_job(js, "a", "inf", 0, 100, 1, 0, "nvidia.com/mig-3g.40gb", 1, 0);
	add_job(js, "b", "inf", 10, 100, 1, 0, "nvidia.com/mig-3g.40gb", 1, 0);
	memset(&o, 0, sizeof(o));
	o.mig_dynamic = true;
	o.has_mig_delay = has_delay;
	o.mig_delay = delay;
	r = run_opts(m, js, &o, -1);
	assert_string_equal(json_string_value(get(r, "mig.mode")), "dynamic");
	EQ(r, "mig.repartitions", 1);
	EQ(r, "mig.reconfig_delay_s", (double)d);
	EQ(r, "makespan_s", (double)((d > 10 ? d : 10) + 100));
	/* first GPU at admission (a 0, b 0), every pod working after the
	 * delay: a waits d, b max(10, d) - 10 (nearest rank: p50 the smaller,
	 * p99 the larger) */
	EQ(r, "wait_first_gpu_s.inf.p99", 0);
	EQ(r, "wait_all_pods_s.inf.p99", (double)d);
	EQ(r, "wait_all_pods_s.inf.p50", (double)(d > 10 ? d - 10 : 0));
	/* window 0 .. 110: a held 3/7 x min(d + 100, 110), b 3/7 x 100;
	 * useful: a 3/7 x (min(d + 100, 110) - d), b 3/7 x (110 - max(10, d))
	 * (d = 60: 3/7 x (50 + 50)) */
	EQ(r, "gpu_hours.held", 3.0 / 7 * ((d + 100 < 110 ? d + 100 : 110) + 100) / 3600);
	EQ(r, "gpu_hours.useful",
	   3.0 / 7 * ((d + 100 < 110 ? d + 100 : 110) - d + 110 - (d > 10 ? d : 10)) / 3600);
	json_decref(r);

	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

static void test_mig_delay(void **state)
{
	(void)state;
	mig_case(false, 0);   /* default 60 s: a and b done at 160 */
	mig_case(true, 5);    /* a done at 105, b at 110 */
	mig_case(true, 0);    /* no delay: a done at 100 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_computed),
		cmocka_unit_test(test_hand_gang_only_carve),
		cmocka_unit_test(test_censored),
		cmocka_unit_test(test_wait_all_pods),
		cmocka_unit_test(test_partial),
		cmocka_unit_test(test_mig_delay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
