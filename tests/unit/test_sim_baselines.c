/*
 * test_sim_baselines.c - the three baseline models of the replay
 * simulator (src/sim/baseline.c, docs/simulator.md "Baselines") on small
 * clusters worked out by hand, one rule each: device-plugin serves a MIG
 * request on a static instance and time-slice replicas to several pods
 * where exclusive takes whole GPUs; the ResourceQuota is per resource name
 * and charged when a pod is created; PriorityClass preemption picks the
 * node and the fewest, lowest victims; kueue admits by quota, fails to
 * place on a fragmented cluster, and waitForPodsReady evicts and requeues
 * with Kueue's backoff at exact times; every model is deterministic.
 */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "carve/sim.h"

/* ---- helpers ------------------------------------------------------------------------ */

/* A job of one podSet: count pods asking `res: units` and 1 cpu each,
 * optionally pinned by a nodeSelector pool=<pool>. */
struct jdef {
	const char *name;
	int64_t arrival, duration;
	int count;
	const char *res;
	int units;
	int prio;
	bool ckpt;
	const char *queue;
	const char *pool;   /* nodeSelector pool=<pool>; NULL none */
	double demand;      /* 0: 1 */
};

/* minCount of the podSets add() makes (partial admission); 0: none. */
static int add_min_count;

static void add(struct carve_jobs *js, const struct jdef *d)
{
	struct carve_req reqs[2] = {{"cpu", 1000}, {d->res, d->units * 1000}};
	struct carve_label sel = {"pool", d->pool};
	struct carve_job_podset ps;
	struct carve_job j;
	struct carve_error err;

	memset(&ps, 0, sizeof(ps));
	ps.count = d->count;
	ps.min_count = add_min_count;
	ps.nreqs = 2;
	ps.reqs = reqs;
	if (d->pool) {
		ps.nselector = 1;
		ps.selector = &sel;
	}
	memset(&j, 0, sizeof(j));
	j.name = d->name;
	j.ns = "ns";
	j.queue = d->queue;
	j.priority = d->prio;
	j.arrival = d->arrival;
	j.duration = d->duration;
	j.checkpoint = d->ckpt;
	j.demand = d->demand > 0 ? d->demand : 1;
	j.npodsets = 1;
	j.podsets = &ps;
	j.pos.file = "jobs.csv";
	j.pos.line = (int)js->n + 2;
	j.pos.col = 1;
	assert_true(carve_jobs_add(js, &j, &err) >= 0);
}

static json_t *run_to(struct carve_manifests *m, struct carve_jobs *js, enum carve_sim_sched sc,
		      int64_t gang_timeout, int64_t until)
{
	struct carve_sim_opts o;
	struct carve_error err;
	struct carve_sim *s;
	json_t *r;

	memset(&o, 0, sizeof(o));
	o.sched = sc;
	o.gang_timeout = gang_timeout;
	s = carve_sim_create(m, js, &o, &err);
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

static json_t *run(struct carve_manifests *m, struct carve_jobs *js, enum carve_sim_sched sc)
{
	return run_to(m, js, sc, 0, -1);
}

static double dget(json_t *o, const char *path)
{
	json_t *v = o;
	char buf[256], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save))
		v = json_object_get(v, tok);
	if (!json_is_number(v))
		fail_msg("%s is not a number", path);
	return json_number_value(v);
}

static const char *sget(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		fail_msg("%s is not a string", key);
	return json_string_value(v);
}

/* the run object rounds to 4 decimals */
#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-4)

/* The event times a run goes through, in order, into t (at most n);
 * returns how many. */
static size_t event_times(struct carve_manifests *m, struct carve_jobs *js,
			  enum carve_sim_sched sc, int64_t gang_timeout, int64_t *t, size_t n)
{
	struct carve_sim_opts o;
	struct carve_error err;
	struct carve_sim *s;
	size_t k = 0;
	int rc;

	memset(&o, 0, sizeof(o));
	o.sched = sc;
	o.gang_timeout = gang_timeout;
	s = carve_sim_create(m, js, &o, &err);
	assert_non_null(s);
	while ((rc = carve_sim_run_events(s, -1, 1, NULL, &err)) == 1) {
		assert_true(k < n);
		t[k++] = carve_sim_now(s);
	}
	assert_int_equal(rc, 0);
	if (k < n && (k == 0 || t[k - 1] != carve_sim_now(s)))
		t[k++] = carve_sim_now(s);
	carve_sim_destroy(s);
	return k;
}

/* One NodePool of `nodes` x `gpus` H100s (flavor h100), ClusterQueue team
 * (nvidia.com/gpu `quota`, cpu 1000, preemption within the queue by
 * priority), LocalQueue ns/team. */
static struct carve_manifests *whole(int nodes, int gpus, int quota)
{
	char y[4096];

	snprintf(y, sizeof(y),
		 "apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: h100}\n"
		 "spec: {count: %d, namePrefix: n-, gpu: {model: H100-80GB, count: %d},"
		 " sharing: {mode: exclusive}, cpu: \"64\", memory: 512Gi, labels: {pool: h100}}\n"
		 "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		 "metadata: {name: h100}\nspec: {nodeLabels: {pool: h100}}\n"
		 "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		 "metadata: {name: team}\nspec:\n  namespaceSelector: {}\n"
		 "  preemption: {withinClusterQueue: LowerPriority}\n"
		 "  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n"
		 "    - name: h100\n      resources:\n      - {name: cpu, nominalQuota: \"1000\"}\n"
		 "      - {name: nvidia.com/gpu, nominalQuota: \"%d\"}\n"
		 "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		 "metadata: {namespace: ns, name: team}\nspec: {clusterQueue: team}\n",
		 nodes, gpus, quota);
	return tu_load(y);
}

/* ---- device plugin: MIG and time-slicing kept ---------------------------------------- */

/* One A100-80GB as 7 x 1g.10gb, quota 7 instances; two jobs of one
 * nvidia.com/mig-1g.10gb, 100 s, at 0.  device-plugin (and kueue) serve
 * each an instance of the static layout: both run 0..100 on 2/7 of the
 * GPU, no whole GPU taken.  exclusive needs a whole GPU per job: the
 * second waits for the first (0..200), the GPU held whole all along. */
static void test_mig_instance_not_whole(void **state)
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
		"  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/mig-1g.10gb]\n"
		"    flavors:\n    - name: mig\n      resources:\n"
		"      - {name: cpu, nominalQuota: \"1000\"}\n"
		"      - {name: nvidia.com/mig-1g.10gb, nominalQuota: \"7\"}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: inf}\nspec: {clusterQueue: inf}\n";
	struct carve_manifests *m = tu_load(y);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;
	int sc;

	(void)state;
	tu_assert_clean(m);
	add(js, &(struct jdef){"a", 0, 100, 1, "nvidia.com/mig-1g.10gb", 1, 0, false, "inf", NULL, 0});
	add(js, &(struct jdef){"b", 0, 100, 1, "nvidia.com/mig-1g.10gb", 1, 0, false, "inf", NULL, 0});
	for (sc = CARVE_SIM_DEVICE_PLUGIN; sc <= CARVE_SIM_KUEUE; sc++) {
		r = run(m, js, (enum carve_sim_sched)sc);
		assert_int_equal((int)dget(r, "horizon_s"), 100);
		assert_int_equal((int)dget(r, "jobs.completed"), 2);
		assert_int_equal((int)dget(r, "jobs.never_fit"), 0);
		/* two 1/7 instances of the one GPU, all the run long */
		NEAR(dget(r, "gpu_allocation_pct"), 200.0 / 7);
		NEAR(dget(r, "effective_utilisation_pct"), 200.0 / 7);
		assert_int_equal((int)dget(r, "wait_first_gpu_s.inf.p99"), 0);
		json_decref(r);
	}
	r = run(m, js, CARVE_SIM_EXCLUSIVE);
	assert_string_equal(sget(r, "scheduler"), "exclusive");
	assert_int_equal((int)dget(r, "horizon_s"), 200);
	NEAR(dget(r, "gpu_allocation_pct"), 100);
	/* each job works its instance's share of the whole GPU it holds */
	NEAR(dget(r, "effective_utilisation_pct"), 100.0 / 7);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.inf.p99"), 100);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* One L40S time-sliced 4 ways, quota nvidia.com/gpu 4; five jobs of one
 * nvidia.com/gpu at 0, 100 s, demand 0.5.  device-plugin: four pods share
 * the four replicas 0..100 (the GPU allocated whole, working half); the
 * ResourceQuota (4) refuses the fifth pod's creation until one ends: it
 * runs 100..200 on one replica.  exclusive: one job at a time, 0..500. */
static void test_timeslice_replicas_shared(void **state)
{
	static const char *y =
		"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: ts}\n"
		"spec: {count: 1, namePrefix: t-, gpu: {model: L40S, count: 1},"
		" sharing: {mode: timeslice, timeSlicing: {replicas: 4}}, cpu: \"64\","
		" memory: 512Gi, labels: {pool: ts}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: ts}\nspec: {nodeLabels: {pool: ts}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		"metadata: {name: dev}\nspec:\n  namespaceSelector: {}\n"
		"  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n"
		"    flavors:\n    - name: ts\n      resources:\n"
		"      - {name: cpu, nominalQuota: \"1000\"}\n"
		"      - {name: nvidia.com/gpu, nominalQuota: \"4\"}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: dev}\nspec: {clusterQueue: dev}\n";
	struct carve_manifests *m = tu_load(y);
	struct carve_jobs *js = carve_jobs_create();
	static const char *const names[] = {"t0", "t1", "t2", "t3", "t4"};
	json_t *r;
	int i;

	(void)state;
	tu_assert_clean(m);
	for (i = 0; i < 5; i++)
		add(js, &(struct jdef){names[i], 0, 100, 1, "nvidia.com/gpu", 1, 0, false, "dev",
				       NULL, 0.5});
	r = run(m, js, CARVE_SIM_DEVICE_PLUGIN);
	assert_int_equal((int)dget(r, "horizon_s"), 200);
	assert_int_equal((int)dget(r, "jobs.completed"), 5);
	/* The window is the trace's span, 0..100: 4 replicas (the whole GPU)
	 * for 100 s, working half; the fifth job gets its replica at 100,
	 * the window's end itself (a wait of 100 s, not censored), and runs
	 * 100..200 after it. */
	NEAR(dget(r, "gpu_allocation_pct"), 100);
	NEAR(dget(r, "effective_utilisation_pct"), 50);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.dev.p99"), 100);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.dev.censored"), 0);
	assert_int_equal((int)dget(r, "makespan_s"), 200);
	json_decref(r);
	r = run(m, js, CARVE_SIM_EXCLUSIVE);
	assert_int_equal((int)dget(r, "horizon_s"), 500);
	NEAR(dget(r, "gpu_allocation_pct"), 100);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* ---- ResourceQuota ---------------------------------------------------------------------- */

/* Two pools (a, b) of one node x 1 H100 each, plus one A100 as 7 x
 * 1g.10gb (pool mig); ClusterQueue q: nvidia.com/gpu 1 in flavor a and 1
 * in b (the namespace's hard limit is their sum, 2), mig-1g.10gb 1. */
static struct carve_manifests *quota_cluster(void)
{
	static const char *y =
		"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: a}\n"
		"spec: {count: 1, namePrefix: a-, gpu: {model: H100-80GB, count: 1},"
		" sharing: {mode: exclusive}, cpu: \"64\", memory: 512Gi, labels: {pool: a}}\n"
		"---\napiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: b}\n"
		"spec: {count: 1, namePrefix: b-, gpu: {model: H100-80GB, count: 1},"
		" sharing: {mode: exclusive}, cpu: \"64\", memory: 512Gi, labels: {pool: b}}\n"
		"---\napiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: mig}\n"
		"spec: {count: 1, namePrefix: m-, gpu: {model: A100-80GB, count: 1},"
		" sharing: {mode: mig, mig: {layout: {\"1g.10gb\": 7}}}, cpu: \"64\","
		" memory: 512Gi, labels: {pool: mig}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: a}\nspec: {nodeLabels: {pool: a}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: b}\nspec: {nodeLabels: {pool: b}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: mig}\nspec: {nodeLabels: {pool: mig}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		"metadata: {name: q}\nspec:\n  namespaceSelector: {}\n"
		"  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n"
		"    - name: a\n      resources:\n      - {name: cpu, nominalQuota: \"100\"}\n"
		"      - {name: nvidia.com/gpu, nominalQuota: \"1\"}\n"
		"    - name: b\n      resources:\n      - {name: cpu, nominalQuota: \"100\"}\n"
		"      - {name: nvidia.com/gpu, nominalQuota: \"1\"}\n"
		"  - coveredResources: [nvidia.com/mig-1g.10gb]\n    flavors:\n"
		"    - name: mig\n      resources:\n"
		"      - {name: nvidia.com/mig-1g.10gb, nominalQuota: \"1\"}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: q}\nspec: {clusterQueue: q}\n";
	struct carve_manifests *m = tu_load(y);

	tu_assert_clean(m);
	return m;
}

/* Charged at creation: h (1 GPU on pool a, 0..100) runs; x (1 GPU on pool
 * a, arrives 10) is created (quota 2 of 2) but fits no node; y (1 GPU
 * anywhere, arrives 20) is refused creation although pool b is free.  At
 * 50: one job runs, two wait.  At 100 h ends: x runs on a, y is created
 * and runs on b, both to 200.  A quota charged at placement would have
 * run y on b at 20. */
static void test_quota_charged_at_creation(void **state)
{
	struct carve_manifests *m = quota_cluster();
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	add(js, &(struct jdef){"h", 0, 100, 1, "nvidia.com/gpu", 1, 0, false, "q", "a", 0});
	add(js, &(struct jdef){"x", 10, 100, 1, "nvidia.com/gpu", 1, 0, false, "q", "a", 0});
	add(js, &(struct jdef){"y", 20, 100, 1, "nvidia.com/gpu", 1, 0, false, "q", NULL, 0});
	r = run_to(m, js, CARVE_SIM_DEVICE_PLUGIN, 0, 50);
	assert_int_equal((int)dget(r, "jobs.running"), 1);
	assert_int_equal((int)dget(r, "jobs.pending"), 2);
	json_decref(r);
	r = run(m, js, CARVE_SIM_DEVICE_PLUGIN);
	assert_int_equal((int)dget(r, "horizon_s"), 200);
	assert_int_equal((int)dget(r, "jobs.completed"), 3);
	/* window 0..120 (y: 20 + 100): h 100 + x 20 + y 20 GPU-seconds
	 * inside it (the A100 idle): 140 of 3 x 120 */
	NEAR(dget(r, "gpu_allocation_pct"), 140.0 / 360 * 100);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.q.p99"), 90);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* Per resource name: m1 and m2 (one mig-1g.10gb each, at 0, 100 s) share
 * a quota of one instance: m2 waits for m1 although six instances are
 * free; g (one nvidia.com/gpu, at 0) runs at once: the full MIG quota does
 * not block it.  At 50: m1 and g run, m2 waits; m2 runs 100..200.  A job
 * of three 1-GPU pods asks more than the namespace's limit of two (and
 * than the two H100s): it never fits, counted on arrival. */
static void test_quota_per_resource(void **state)
{
	struct carve_manifests *m = quota_cluster();
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	add(js, &(struct jdef){"m1", 0, 100, 1, "nvidia.com/mig-1g.10gb", 1, 0, false, "q", NULL, 0});
	add(js, &(struct jdef){"m2", 0, 100, 1, "nvidia.com/mig-1g.10gb", 1, 0, false, "q", NULL, 0});
	add(js, &(struct jdef){"g", 0, 100, 1, "nvidia.com/gpu", 1, 0, false, "q", NULL, 0});
	add(js, &(struct jdef){"big", 0, 100, 3, "nvidia.com/gpu", 1, 0, false, "q", NULL, 0});
	r = run_to(m, js, CARVE_SIM_DEVICE_PLUGIN, 0, 50);
	assert_int_equal((int)dget(r, "jobs.running"), 2);
	assert_int_equal((int)dget(r, "jobs.pending"), 2);
	json_decref(r);
	r = run(m, js, CARVE_SIM_DEVICE_PLUGIN);
	assert_int_equal((int)dget(r, "horizon_s"), 200);
	assert_int_equal((int)dget(r, "jobs.completed"), 3);
	assert_int_equal((int)dget(r, "jobs.never_fit"), 1);
	/* window 0..100: m1 1/7 and g 1 for 100 s (m2 runs 100..200, after
	 * it), over 3 GPUs x 100 s */
	NEAR(dget(r, "gpu_allocation_pct"), (100.0 / 7 + 100) / 300 * 100);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* ---- PriorityClass preemption ------------------------------------------------------- */

/* One node x 4 GPUs: x (1 GPU), y (2 GPUs), z (1 GPU), priority 0, 0..1000,
 * fill it; hi (priority 10, 2 GPUs) arrives at 100.  All three are
 * candidates; the reprieve gives back x (still fits), not y, and z (still
 * fits): y alone is evicted.  hi runs 100..200; y restarts at 200 from the
 * beginning (1200), or with checkpointing from where it was (1100). */
static void preempt_reprieve_case(enum carve_sim_sched sc, bool ckpt, int horizon)
{
	struct carve_manifests *m = whole(1, 4, 8);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	add(js, &(struct jdef){"x", 0, 1000, 1, "nvidia.com/gpu", 1, 0, false, "team", NULL, 0});
	add(js, &(struct jdef){"y", 0, 1000, 1, "nvidia.com/gpu", 2, 0, ckpt, "team", NULL, 0});
	add(js, &(struct jdef){"z", 0, 1000, 1, "nvidia.com/gpu", 1, 0, false, "team", NULL, 0});
	add(js, &(struct jdef){"hi", 100, 100, 1, "nvidia.com/gpu", 2, 10, false, "team", NULL, 0});
	r = run(m, js, sc);
	assert_int_equal((int)dget(r, "preemptions"), 1);
	assert_int_equal((int)dget(r, "queues.team.preemptions"), 1);
	assert_int_equal((int)dget(r, "horizon_s"), horizon);
	assert_int_equal((int)dget(r, "jobs.completed"), 4);
	/* hi got its GPUs on arrival */
	assert_int_equal((int)dget(r, "wait_first_gpu_s.team.p99"), 0);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

static void test_preempt_reprieve(void **state)
{
	(void)state;
	preempt_reprieve_case(CARVE_SIM_DEVICE_PLUGIN, false, 1200);
	preempt_reprieve_case(CARVE_SIM_DEVICE_PLUGIN, true, 1100);
	preempt_reprieve_case(CARVE_SIM_EXCLUSIVE, false, 1200);
}

/* Two nodes x 2 GPUs: a (priority 5, 2 GPUs) fills n-0; b and c (priority
 * 1, 1 GPU each) fill n-1 (spread); all 0..1000.  hi (priority 10, 2 GPUs,
 * at 100) could evict a alone on n-0 or b and c on n-1: kube-scheduler
 * picks the node whose highest victim priority is lowest, n-1, two
 * victims.  a runs to 1000 undisturbed; b and c restart at 200 (1200). */
static void test_preempt_lowest_victims(void **state)
{
	struct carve_manifests *m = whole(2, 2, 8);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	add(js, &(struct jdef){"a", 0, 1000, 1, "nvidia.com/gpu", 2, 5, false, "team", NULL, 0});
	add(js, &(struct jdef){"b", 0, 1000, 1, "nvidia.com/gpu", 1, 1, false, "team", NULL, 0});
	add(js, &(struct jdef){"c", 0, 1000, 1, "nvidia.com/gpu", 1, 1, false, "team", NULL, 0});
	add(js, &(struct jdef){"hi", 100, 100, 1, "nvidia.com/gpu", 2, 10, false, "team", NULL, 0});
	r = run(m, js, CARVE_SIM_DEVICE_PLUGIN);
	assert_int_equal((int)dget(r, "preemptions"), 2);
	assert_int_equal((int)dget(r, "horizon_s"), 1200);
	/* window 0..1000; GPU-seconds inside it: a 2000, b and c 100 +
	 * 800 each (restarted at 200), hi 200: all 4 GPUs busy throughout */
	NEAR(dget(r, "gpu_allocation_pct"), (2000.0 + 2 * 900 + 200) / (4 * 1000.0) * 100);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* ---- kueue ---------------------------------------------------------------------------- */

/* Two nodes x 2 GPUs, quota 4: h1 and h2 (1 GPU each, 0..1000) take one
 * GPU of each node (spread).  gang (one pod of 2 GPUs, at 10): Kueue
 * admits it by quota (2 + 2 <= 4) at 10, but no node has 2 free GPUs.
 * waitForPodsReady (300 s) evicts it at 310; the 1st requeue waits 60 s
 * (370), admitted again, evicted at 670; the 2nd waits 120 s (790),
 * admitted; at 1000 the holders end and its pod runs, 1000..1100 (its
 * timeout at 1090 is void).  Event times: 0, 10, 310, 370, 670, 790, 1000,
 * 1100.  With --gang-timeout 100: evicted at 110, 270 (requeued 170),
 * 490 (390), 830 (730); the 4th backoff (480 s) ends at 1310: runs
 * 1310..1410.  device-plugin runs the same gang at 1000 (its pod waits
 * for a node, no timeout: nothing of it is placed). */
static void test_kueue_pods_ready_backoff(void **state)
{
	static const int64_t want[] = {0, 10, 310, 370, 670, 790, 1000, 1100};
	struct carve_manifests *m = whole(2, 2, 4);
	struct carve_jobs *js = carve_jobs_create();
	int64_t t[32];
	size_t n, i;
	json_t *r;

	(void)state;
	assert_int_equal(carve_sim_sched_parse("kueue", &(enum carve_sim_sched){0}), 0);
	add(js, &(struct jdef){"h1", 0, 1000, 1, "nvidia.com/gpu", 1, 0, false, "team", NULL, 0});
	add(js, &(struct jdef){"h2", 0, 1000, 1, "nvidia.com/gpu", 1, 0, false, "team", NULL, 0});
	add(js, &(struct jdef){"gang", 10, 100, 1, "nvidia.com/gpu", 2, 0, false, "team", NULL, 0});
	n = event_times(m, js, CARVE_SIM_KUEUE, 0, t, 32);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < n; i++)
		assert_int_equal(t[i], want[i]);
	r = run(m, js, CARVE_SIM_KUEUE);
	assert_string_equal(sget(r, "scheduler"), "kueue");
	assert_non_null(strstr(sget(r, "model"), "waitForPodsReady"));
	assert_int_equal((int)dget(r, "gang_timeout_s"), 300);
	assert_int_equal((int)dget(r, "gang_timeouts"), 2);
	assert_int_equal((int)dget(r, "preemptions"), 0);
	assert_int_equal((int)dget(r, "horizon_s"), 1100);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.team.p99"), 990);
	json_decref(r);

	r = run_to(m, js, CARVE_SIM_KUEUE, 100, -1);
	assert_int_equal((int)dget(r, "gang_timeout_s"), 100);
	assert_int_equal((int)dget(r, "gang_timeouts"), 4);
	assert_int_equal((int)dget(r, "horizon_s"), 1410);
	json_decref(r);

	r = run(m, js, CARVE_SIM_DEVICE_PLUGIN);
	assert_int_equal((int)dget(r, "gang_timeouts"), 0);
	assert_int_equal((int)dget(r, "horizon_s"), 1100);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* A gang blocked for ever: f holds one GPU of each node and never ends
 * (its duration saturates: no completion).  Kueue admits gang (2 GPUs on
 * one node) at 10 and evicts it at 310; nothing can free a device any
 * more, so it is not requeued (Kueue would cycle for ever): the run ends
 * at 310 with the gang pending. */
static void test_kueue_blocked_for_ever(void **state)
{
	struct carve_manifests *m = whole(2, 2, 4);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	add(js, &(struct jdef){"f", 0, INT64_MAX, 2, "nvidia.com/gpu", 1, 0, false, "team", NULL, 0});
	add(js, &(struct jdef){"gang", 10, 100, 1, "nvidia.com/gpu", 2, 0, false, "team", NULL, 0});
	r = run(m, js, CARVE_SIM_KUEUE);
	assert_int_equal((int)dget(r, "horizon_s"), 310);
	assert_int_equal((int)dget(r, "gang_timeouts"), 1);
	assert_int_equal((int)dget(r, "jobs.running"), 1);
	assert_int_equal((int)dget(r, "jobs.pending"), 1);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* Kueue's own preemption (withinClusterQueue: LowerPriority): lo (4 GPUs,
 * 0..1000) holds the queue's whole quota; hi (priority 10, 4 GPUs, at 100)
 * makes Kueue evict lo, whose pods go; hi runs 100..200, lo again
 * 200..1200.  The backoff: 1st 60 s, then doubling, capped at 3600 s. */
static void test_kueue_preemption(void **state)
{
	struct carve_manifests *m = whole(1, 4, 4);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	add(js, &(struct jdef){"lo", 0, 1000, 1, "nvidia.com/gpu", 4, 0, false, "team", NULL, 0});
	add(js, &(struct jdef){"hi", 100, 100, 1, "nvidia.com/gpu", 4, 10, false, "team", NULL, 0});
	r = run(m, js, CARVE_SIM_KUEUE);
	assert_int_equal((int)dget(r, "preemptions"), 1);
	assert_int_equal((int)dget(r, "horizon_s"), 1200);
	assert_int_equal((int)dget(r, "gang_timeouts"), 0);
	NEAR(dget(r, "gpu_allocation_pct"), 100);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* Two flavors on two pools: a (one node x 4 H100s, flavor fa) and b (one
 * node x 2 L40S time-sliced 4 ways, flavor fb).  ClusterQueues team and
 * other (cohort org) have nvidia.com/gpu 3 each in fa; ts has 8 in fb. */
static struct carve_manifests *flavor_cluster(void)
{
	static const char *y =
		"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: a}\n"
		"spec: {count: 1, namePrefix: a-, gpu: {model: H100-80GB, count: 4},"
		" sharing: {mode: exclusive}, cpu: \"64\", memory: 512Gi, labels: {pool: a}}\n"
		"---\napiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: b}\n"
		"spec: {count: 1, namePrefix: b-, gpu: {model: L40S, count: 2},"
		" sharing: {mode: timeslice, timeSlicing: {replicas: 4}}, cpu: \"64\","
		" memory: 512Gi, labels: {pool: b}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: fa}\nspec: {nodeLabels: {pool: a}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: fb}\nspec: {nodeLabels: {pool: b}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		"metadata: {name: team}\nspec:\n  namespaceSelector: {}\n  cohortName: org\n"
		"  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n"
		"    - name: fa\n      resources:\n      - {name: cpu, nominalQuota: \"100\"}\n"
		"      - {name: nvidia.com/gpu, nominalQuota: \"3\"}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		"metadata: {name: other}\nspec:\n  namespaceSelector: {}\n  cohortName: org\n"
		"  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n"
		"    - name: fa\n      resources:\n      - {name: cpu, nominalQuota: \"100\"}\n"
		"      - {name: nvidia.com/gpu, nominalQuota: \"3\"}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		"metadata: {name: ts}\nspec:\n  namespaceSelector: {}\n"
		"  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n"
		"    - name: fb\n      resources:\n      - {name: cpu, nominalQuota: \"100\"}\n"
		"      - {name: nvidia.com/gpu, nominalQuota: \"8\"}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: team}\nspec: {clusterQueue: team}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: other}\nspec: {clusterQueue: other}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: ts}\nspec: {clusterQueue: ts}\n";
	struct carve_manifests *m = tu_load(y);

	tu_assert_clean(m);
	return m;
}

/* Kueue puts the assigned flavor's nodeLabels into the pods' nodeSelector:
 * x (team, 4 pods x 1 GPU, 0..100) is admitted in fa, borrowing 1 GPU of
 * other's, and its pods go to pool a's H100s, not to pool b's L40S
 * replicas (1/4 GE each), although pool b is the least allocated: held
 * 4 GE x 100 s in the window 0..100 = 400 GE-s.  team's quota: used 4,
 * borrowed 4 - 3 = 1 GE on average over the window (the windowed
 * borrowed area counts kueue as the whole run's does). */
static void test_kueue_flavor_nodes(void **state)
{
	struct carve_manifests *m = flavor_cluster();
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	add(js, &(struct jdef){"x", 0, 100, 4, "nvidia.com/gpu", 1, 0, false, "team", NULL, 0});
	r = run(m, js, CARVE_SIM_KUEUE);
	NEAR(dget(r, "gpu_hours.held"), 400.0 / 3600);
	NEAR(dget(r, "quota.team.used_avg"), 4);
	NEAR(dget(r, "quota.team.borrowed_avg"), 1);
	NEAR(dget(r, "quota.other.borrowed_avg"), 0);
	assert_int_equal((int)dget(r, "horizon_s"), 100);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* waitForPodsReady.blockAdmission (on by default with waitForPodsReady):
 * h (team, one pod x 3 GPUs, 0..1000) leaves one H100 free; gang (other,
 * one pod x 2 GPUs, at 10) is admitted by quota (3 + 2 <= 6 in the
 * cohort) but fits no node.  s (ts, 1 GPU, at 20, 100 s) is not admitted
 * while gang waits for its pods: only when waitForPodsReady evicts gang
 * at 310 is s admitted, placed on an L40S replica, and runs 310..410:
 * its wait to first GPU is 290 s (0 without blockAdmission). */
static void test_kueue_block_admission(void **state)
{
	struct carve_manifests *m = flavor_cluster();
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	add(js, &(struct jdef){"h", 0, 1000, 1, "nvidia.com/gpu", 3, 0, false, "team", NULL, 0});
	add(js, &(struct jdef){"gang", 10, 100, 1, "nvidia.com/gpu", 2, 0, false, "other", NULL,
			       0});
	add(js, &(struct jdef){"s", 20, 100, 1, "nvidia.com/gpu", 1, 0, false, "ts", NULL, 0});
	r = run(m, js, CARVE_SIM_KUEUE);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.ts.p99"), 290);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.team.p99"), 0);
	assert_int_equal((int)dget(r, "jobs.completed"), 3);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* Partial admission: quota 2 GPUs on one node of 4; p asks 4 pods x 1 GPU
 * (minCount 2) for 100 s.  Kueue admits 2 pods; only those are created and
 * placed, and p runs 100 x 4 / 2 = 200 s (work conserved, as carve does),
 * counted in jobs.partial, not a first-time success.  Held in the window
 * 0..100: 2 GE x 100 s.  No waitForPodsReady eviction. */
static void test_kueue_partial(void **state)
{
	struct carve_manifests *m = whole(1, 4, 2);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	add_min_count = 2;
	add(js, &(struct jdef){"p", 0, 100, 4, "nvidia.com/gpu", 1, 0, false, "team", NULL, 0});
	add_min_count = 0;
	r = run(m, js, CARVE_SIM_KUEUE);
	assert_int_equal((int)dget(r, "jobs.partial"), 1);
	assert_int_equal((int)dget(r, "makespan_s"), 200);
	assert_int_equal((int)dget(r, "gang_timeouts"), 0);
	NEAR(dget(r, "first_time_success_pct"), 0);
	NEAR(dget(r, "gpu_hours.held"), 200.0 / 3600);
	NEAR(dget(r, "backlog.gpu_hours_left"), 200.0 / 3600);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* ---- every model -------------------------------------------------------------------- */

/* 300 jobs of mixed sizes and priorities on 3 nodes x 4 GPUs: each model
 * gives the same JSON twice, names itself, and ends every job. */
static void test_determinism(void **state)
{
	struct carve_manifests *m = whole(3, 4, 8);
	struct carve_jobs *js = carve_jobs_create();
	char name[300][16];
	json_t *a, *b;
	char *sa, *sb;
	size_t i;
	int sc;

	(void)state;
	for (i = 0; i < 300; i++) {
		snprintf(name[i], sizeof(name[i]), "j%zu", i);
		add(js, &(struct jdef){name[i], (int64_t)(i * 37 % 5000),
				       60 + (int64_t)(i * 53 % 900), 1 + (int)(i % 3),
				       "nvidia.com/gpu", 1 + (int)(i % 2), (int)(i % 4),
				       i % 5 == 0, "team", NULL, 0});
	}
	for (sc = CARVE_SIM_EXCLUSIVE; sc <= CARVE_SIM_KUEUE; sc++) {
		a = run(m, js, (enum carve_sim_sched)sc);
		b = run(m, js, (enum carve_sim_sched)sc);
		sa = json_dumps(a, JSON_SORT_KEYS);
		sb = json_dumps(b, JSON_SORT_KEYS);
		assert_non_null(sa);
		assert_string_equal(sa, sb);
		assert_string_equal(sget(a, "scheduler"),
				    carve_sim_sched_name((enum carve_sim_sched)sc));
		assert_int_equal((int)dget(a, "jobs.completed"), 300);
		free(sa);
		free(sb);
		json_decref(a);
		json_decref(b);
	}
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mig_instance_not_whole),
		cmocka_unit_test(test_timeslice_replicas_shared),
		cmocka_unit_test(test_quota_charged_at_creation),
		cmocka_unit_test(test_quota_per_resource),
		cmocka_unit_test(test_preempt_reprieve),
		cmocka_unit_test(test_preempt_lowest_victims),
		cmocka_unit_test(test_kueue_pods_ready_backoff),
		cmocka_unit_test(test_kueue_blocked_for_ever),
		cmocka_unit_test(test_kueue_preemption),
		cmocka_unit_test(test_kueue_flavor_nodes),
		cmocka_unit_test(test_kueue_block_admission),
		cmocka_unit_test(test_kueue_partial),
		cmocka_unit_test(test_determinism),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
