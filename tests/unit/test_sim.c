/*
 * test_sim.c - the replay simulator (sim.h) on small scenarios that can
 * be checked by hand: one queue over 4 GPUs with jobs of known durations
 * (exact allocation %, waits, completions), a priority preemption that
 * requeues and restarts a job (with and without checkpointing), the
 * exclusive baseline holding a partial gang's GPUs until the gang
 * timeout (test_sim_baselines.c has the baselines' own rules), the result's field names, determinism, invalid jobs
 * (unknown queue, a pod no node fits) reported at the job's position, and
 * times at the end of the int64 range (they saturate; such events never
 * happen).
 */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "carve/sim.h"

/* One NodePool of `nodes` nodes x `gpus` H100s, flavor h100, ClusterQueue
 * team (nominal `quota` GPUs, preemption within the queue by priority),
 * LocalQueue ns/team. */
static struct carve_manifests *cluster(int nodes, int gpus, int quota, const char *extra)
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
		 "metadata: {namespace: ns, name: team}\nspec: {clusterQueue: team}\n%s",
		 nodes, gpus, quota, extra ? extra : "");
	return tu_load(y);
}

/* The class job() gives the jobs it adds (NULL: none). */
static const char *job_class;

/* Adds job name: count pods x gpus GPUs (and 1 cpu) each. */
static void job(struct carve_jobs *js, const char *name, int64_t arrival, int64_t duration,
		int count, int gpus, int prio, bool ckpt, const char *queue)
{
	struct carve_req reqs[2] = {{"cpu", 1000}, {"nvidia.com/gpu", gpus * 1000}};
	struct carve_job_podset ps;
	struct carve_job j;
	struct carve_error err;

	memset(&ps, 0, sizeof(ps));
	ps.count = count;
	ps.nreqs = 2;
	ps.reqs = reqs;
	memset(&j, 0, sizeof(j));
	j.name = name;
	j.ns = "ns";
	j.queue = queue;
	j.priority = prio;
	j.arrival = arrival;
	j.duration = duration;
	j.checkpoint = ckpt;
	j.job_class = job_class;
	j.npodsets = 1;
	j.podsets = &ps;
	j.pos.file = "jobs.csv";
	j.pos.line = (int)js->n + 2;
	j.pos.col = 1;
	assert_true(carve_jobs_add(js, &j, &err) >= 0);
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

static json_t *run(struct carve_manifests *m, struct carve_jobs *js, enum carve_sim_sched sc,
		   int64_t until)
{
	struct carve_sim_opts o;

	memset(&o, 0, sizeof(o));
	o.sched = sc;
	return run_opts(m, js, &o, until);
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

/* The hand-checked run below with classes: a and b "serve", c "train", d
 * none (1 GPU from 200 to 210).  Per class: GPU-hours over completed jobs,
 * waits, and no first-time success for single-pod jobs. */
static void test_classes(void **state)
{
	struct carve_manifests *m = cluster(1, 4, 4, NULL);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r, *cl;

	(void)state;
	job_class = "serve";
	job(js, "a", 0, 100, 1, 2, 0, false, "team");
	job(js, "b", 0, 50, 1, 2, 0, false, "team");
	job_class = "train";
	job(js, "c", 10, 100, 1, 4, 0, false, "team");
	job_class = NULL;
	job(js, "d", 200, 10, 1, 1, 0, false, "team");
	r = run(m, js, CARVE_SIM_CARVE, -1);
	cl = json_object_get(r, "classes");
	assert_int_equal((int)json_object_size(cl), 2);
	assert_int_equal((int)dget(r, "classes.serve.jobs"), 2);
	assert_int_equal((int)dget(r, "classes.serve.jobs_completed"), 2);
	assert_true(fabs(dget(r, "classes.serve.gpu_hours_per_job") - 300.0 / 3600 / 2) < 1e-4);
	assert_int_equal((int)dget(r, "classes.serve.wait_first_gpu_s.p50"), 0);
	assert_true(fabs(dget(r, "classes.train.gpu_hours_per_job") - 400.0 / 3600) < 1e-4);
	assert_int_equal((int)dget(r, "classes.train.wait_first_gpu_s.p50"), 90);
	assert_true(json_is_null(json_object_get(json_object_get(cl, "train"),
						 "first_time_success_pct")));
	/* the classless job counts in the totals only */
	assert_int_equal((int)dget(r, "jobs.completed"), 4);
	assert_true(fabs(dget(r, "gpu_hours_per_job") - 710.0 / 3600 / 4) < 1e-4);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* 4 GPUs; a (2 GPUs, 0..100) and b (2 GPUs, 0..50) start at once; c (4
 * GPUs, arrives 10) waits for both and runs 100..200.  The window is the
 * trace's span, 0 .. 110 (c's arrival + duration): 4 GPUs for 50 s, 2 for
 * 50 s, 4 for 10 s = 340 of 440 GPU-seconds; the run goes on to 200. */
static void test_hand_checked(void **state)
{
	struct carve_manifests *m = cluster(1, 4, 4, NULL);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	job(js, "a", 0, 100, 1, 2, 0, false, "team");
	job(js, "b", 0, 50, 1, 2, 0, false, "team");
	job(js, "c", 10, 100, 1, 4, 0, false, "team");
	r = run(m, js, CARVE_SIM_CARVE, -1);
	assert_int_equal((int)dget(r, "horizon_s"), 200);
	assert_int_equal((int)dget(r, "makespan_s"), 200);
	assert_int_equal((int)dget(r, "window.end_s"), 110);
	assert_true(fabs(dget(r, "gpu_allocation_pct") - 340.0 / 440 * 100) < 1e-4);
	assert_true(fabs(dget(r, "effective_utilisation_pct") - 340.0 / 440 * 100) < 1e-4);
	assert_int_equal((int)dget(r, "jobs.completed"), 3);
	assert_int_equal((int)dget(r, "queues.team.jobs_completed"), 3);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.team.p50"), 0);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.team.p95"), 90);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.team.p99"), 90);
	assert_true(dget(r, "quota.team.nominal") == 4);
	assert_true(fabs(dget(r, "quota.team.used_avg") - 340.0 / 110) < 1e-4);
	assert_true(dget(r, "quota.team.borrowed_avg") == 0);
	assert_int_equal((int)dget(r, "preemptions"), 0);
	assert_true(fabs(dget(r, "gpu_hours_per_job") - 700.0 / 3600 / 3) < 1e-4);
	assert_true(json_is_null(json_object_get(r, "first_time_success_pct")));
	/* series: 200 samples, the pool full at t = 0 and half full at 75 */
	assert_int_equal(json_array_size(json_object_get(json_object_get(r, "series"), "t_s")),
			 200);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* lo (4 GPUs, 1000 s) starts at 0; hi (priority 10, 4 GPUs, 100 s) arrives
 * at 100 and preempts it; lo restarts at 200 and needs 1000 s again (no
 * checkpoint: done at 1200) or 900 s (checkpoint: done at 1100). */
static void preempt_case(bool ckpt, int horizon)
{
	struct carve_manifests *m = cluster(1, 4, 4, NULL);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	job(js, "lo", 0, 1000, 1, 4, 0, ckpt, "team");
	job(js, "hi", 100, 100, 1, 4, 10, false, "team");
	r = run(m, js, CARVE_SIM_CARVE, -1);
	assert_int_equal((int)dget(r, "preemptions"), 1);
	assert_int_equal((int)dget(r, "queues.team.preemptions"), 1);
	assert_int_equal((int)dget(r, "horizon_s"), horizon);
	assert_int_equal((int)dget(r, "jobs.completed"), 2);
	/* always 4 GPUs held */
	assert_true(dget(r, "gpu_allocation_pct") == 100.0);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* The baseline's pods carry their queue's flavor tolerations: a tainted
 * pool meant for the team is reachable without Kueue injecting them.  The
 * same pool without the toleration: the job never starts. */
static void baseline_taint_case(bool tolerate, int completed)
{
	char y[4096];
	struct carve_manifests *m;
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	snprintf(y, sizeof(y),
		 "apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: h100}\n"
		 "spec: {count: 1, namePrefix: n-, gpu: {model: H100-80GB, count: 4},"
		 " sharing: {mode: exclusive}, cpu: \"64\", memory: 512Gi, labels: {pool: h100},"
		 " taints: [{key: pool, value: h100, effect: NoSchedule}]}\n"
		 "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		 "metadata: {name: h100}\nspec: {nodeLabels: {pool: h100}%s}\n"
		 "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		 "metadata: {name: team}\nspec:\n  namespaceSelector: {}\n"
		 "  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n"
		 "    - name: h100\n      resources:\n      - {name: cpu, nominalQuota: \"1000\"}\n"
		 "      - {name: nvidia.com/gpu, nominalQuota: \"4\"}\n"
		 "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		 "metadata: {namespace: ns, name: team}\nspec: {clusterQueue: team}\n",
		 tolerate ? ", tolerations: [{key: pool, operator: Equal, value: h100, "
			    "effect: NoSchedule}]" : "");
	m = tu_load(y);
	job(js, "gang", 0, 100, 2, 2, 0, false, "team");
	r = run(m, js, CARVE_SIM_EXCLUSIVE, 1000);
	assert_int_equal((int)dget(r, "jobs.completed"), completed);
	assert_true(dget(r, "quota.team.borrowed_avg") == 0);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

static void test_baseline_tolerations(void **state)
{
	(void)state;
	baseline_taint_case(true, 1);
	baseline_taint_case(false, 0);
}

/* 1 node x 4 GPUs: a (3 GPUs, 0..100) leaves 1 GPU that b (2 GPUs, pending
 * from 0 to 100) cannot use: 1/4 of the capacity for the whole window
 * (0 .. 100; the run goes on to 200). */
static void test_fragmentation(void **state)
{
	struct carve_manifests *m = cluster(1, 4, 8, NULL);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	job(js, "a", 0, 100, 1, 3, 0, false, "team");
	job(js, "b", 0, 100, 1, 2, 0, false, "team");
	r = run(m, js, CARVE_SIM_CARVE, -1);
	assert_int_equal((int)dget(r, "horizon_s"), 200);
	assert_true(fabs(dget(r, "fragmentation_pct") - 25) < 1e-9);
	json_decref(r);
	r = run(m, js, CARVE_SIM_EXCLUSIVE, -1);
	assert_true(fabs(dget(r, "fragmentation_pct") - 25) < 1e-9);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* 70 pending jobs of one shape are one pod type, in both schedulers: a (3
 * GPUs, 0..100) leaves 1 GPU of 4 that the 2-GPU jobs cannot use until
 * 100, the whole window (every job arrives at 0 and lasts 100 s); then
 * they run two by two until 3600 with nothing free. */
static void test_fragmentation_one_type(void **state)
{
	struct carve_manifests *m = cluster(1, 4, 8, NULL);
	struct carve_jobs *js = carve_jobs_create();
	char name[16];
	json_t *r;
	int i, s;

	(void)state;
	job(js, "a", 0, 100, 1, 3, 0, false, "team");
	for (i = 0; i < 70; i++) {
		snprintf(name, sizeof(name), "b%02d", i);
		job(js, name, 0, 100, 1, 2, 0, false, "team");
	}
	for (s = 0; s < 2; s++) {
		r = run(m, js, s ? CARVE_SIM_EXCLUSIVE : CARVE_SIM_CARVE, -1);
		assert_int_equal((int)dget(r, "horizon_s"), 3600);
		assert_true(fabs(dget(r, "fragmentation_pct") - 25.0) < 1e-4);
		json_decref(r);
	}
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

static void test_preempt_requeue(void **state)
{
	(void)state;
	preempt_case(false, 1200);
}

static void test_preempt_checkpoint(void **state)
{
	(void)state;
	preempt_case(true, 1100);
}

/* Baseline, 2 nodes x 2 GPUs, quota 4: "hold" (1 GPU, 0..3000) leaves 3
 * GPUs; "gang" (4 pods x 1 GPU, arrives 10) gets 3 pods and holds them
 * while the 4th waits; at the gang timeout (1810) it releases them, is
 * retried at once and holds 3 again; at 3000 the 4th pod fits and the gang
 * runs to 3100.  carve (gang admission) admits it whole at 3000: no
 * timeout, no partial hold. */
static void test_baseline_gang_timeout(void **state)
{
	struct carve_manifests *m = cluster(2, 2, 4, NULL);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	job(js, "hold", 0, 3000, 1, 1, 0, false, "team");
	job(js, "gang", 10, 100, 4, 1, 0, false, "team");
	r = run(m, js, CARVE_SIM_EXCLUSIVE, -1);
	assert_string_equal(json_string_value(json_object_get(r, "scheduler")), "exclusive");
	assert_int_equal((int)dget(r, "gang_timeouts"), 1);
	assert_int_equal((int)dget(r, "horizon_s"), 3100);
	assert_int_equal((int)dget(r, "jobs.completed"), 2);
	assert_true(dget(r, "first_time_success_pct") == 0);
	assert_true(dget(r, "queues.team.first_time_success_pct") == 0);
	/* GPU-hours per job, per queue and overall (4 decimals): (3000 + 3 x 2990 + 400) GPU-s / 2 jobs */
	assert_true(fabs(dget(r, "queues.team.gpu_hours_per_job") -
			 (3000.0 + 3 * 2990 + 400) / 3600 / 2) < 1e-4);
	assert_true(fabs(dget(r, "gpu_hours_per_job") -
			 (3000.0 + 3 * 2990 + 400) / 3600 / 2) < 1e-4);
	/* the gang's first pod got a GPU on arrival */
	assert_int_equal((int)dget(r, "wait_first_gpu_s.team.p99"), 0);
	/* GPU-seconds in the window (0 .. 3000, hold's span): hold 3000, the
	 * gang's 3 partial pods 10..3000 (the gang runs after the window) */
	assert_true(fabs(dget(r, "gpu_allocation_pct") -
			 (3000.0 + 3 * 2990) / (4 * 3000.0) * 100) < 1e-3);
	/* work: only running jobs work */
	assert_true(fabs(dget(r, "effective_utilisation_pct") - 3000.0 / (4 * 3000.0) * 100) <
		    1e-3);
	json_decref(r);

	r = run(m, js, CARVE_SIM_CARVE, -1);
	assert_int_equal((int)dget(r, "gang_timeouts"), 0);
	assert_int_equal((int)dget(r, "horizon_s"), 3100);
	assert_true(dget(r, "first_time_success_pct") == 100);
	assert_true(dget(r, "queues.team.first_time_success_pct") == 100);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.team.p99"), 2990);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* Times at the end of the int64 range: a gang timeout, a duration and
 * --until of INT64_MAX.  now + timeout (now + remaining) used to wrap
 * negative, moving the clock back and timing the gang out at once; every
 * sum of times now saturates at CARVE_SIM_TIME_MAX, where an event never
 * happens, and the horizon is capped there. */
static void test_times_saturate(void **state)
{
	struct carve_manifests *m = cluster(2, 2, 4, NULL);
	struct carve_jobs *js = carve_jobs_create();
	struct carve_sim_opts o;
	json_t *r;
	int sc;

	(void)state;
	job(js, "hold", 0, 3000, 1, 1, 0, false, "team");
	job(js, "gang", 10, 100, 4, 1, 0, false, "team");
	memset(&o, 0, sizeof(o));
	o.sched = CARVE_SIM_EXCLUSIVE;
	o.gang_timeout = INT64_MAX;
	/* the partial gang never times out: it runs once hold is done */
	r = run_opts(m, js, &o, -1);
	assert_int_equal((int)dget(r, "gang_timeouts"), 0);
	assert_int_equal((int)dget(r, "horizon_s"), 3100);
	assert_int_equal((int)dget(r, "jobs.completed"), 2);
	json_decref(r);
	carve_jobs_destroy(js);

	/* a job that never ends, in both modes: the run ends with the others */
	js = carve_jobs_create();
	job(js, "short", 0, 100, 1, 1, 0, false, "team");
	job(js, "forever", 10, INT64_MAX, 1, 1, 0, false, "team");
	for (sc = CARVE_SIM_CARVE; sc <= CARVE_SIM_EXCLUSIVE; sc++) {
		r = run(m, js, (enum carve_sim_sched)sc, -1);
		assert_int_equal((int)dget(r, "horizon_s"), 100);
		assert_int_equal((int)dget(r, "jobs.completed"), 1);
		json_decref(r);
	}
	/* until beyond the end of virtual time stops there */
	r = run(m, js, CARVE_SIM_CARVE, INT64_MAX);
	assert_true(dget(r, "horizon_s") == (double)CARVE_SIM_TIME_MAX);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

static void test_fields_and_determinism(void **state)
{
	static const char *const fields[] = {
		"mode", "scheduler", "policy", "seed", "horizon_s", "gpu_allocation_pct",
		"effective_utilisation_pct", "first_time_success_pct", "wait_first_gpu_s",
		"quota", "preemptions", "gang_timeouts", "fragmentation_pct",
		"gpu_hours_per_job", "jobs", "queues", "series", "wait_cdf"};
	struct carve_manifests *m = cluster(3, 4, 8, NULL);
	struct carve_jobs *js = carve_jobs_create();
	json_t *a, *b, *ser;
	char *sa, *sb, name[16];
	size_t i;

	(void)state;
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "j%zu", i);
		job(js, name, (int64_t)(i * 37 % 5000), 60 + (int64_t)(i * 53 % 900),
		    1 + (int)(i % 3), 1 + (int)(i % 2), (int)(i % 4), i % 5 == 0, "team");
	}
	a = run(m, js, CARVE_SIM_CARVE, -1);
	b = run(m, js, CARVE_SIM_CARVE, -1);
	sa = json_dumps(a, JSON_SORT_KEYS);
	sb = json_dumps(b, JSON_SORT_KEYS);
	assert_string_equal(sa, sb);
	free(sa);
	free(sb);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!json_object_get(a, fields[i]))
			fail_msg("no field %s", fields[i]);
	assert_string_equal(json_string_value(json_object_get(a, "mode")), "replay");
	ser = json_object_get(a, "series");
	assert_true(json_array_size(json_object_get(ser, "t_s")) <= 200);
	assert_non_null(json_object_get(json_object_get(json_object_get(ser, "pools"), "h100"),
					"allocation_pct"));
	assert_non_null(json_object_get(json_object_get(json_object_get(ser, "pools"), "h100"),
					"utilisation_pct"));
	assert_non_null(json_object_get(json_object_get(ser, "quota_used"), "team"));
	assert_true(json_array_size(json_object_get(json_object_get(a, "wait_cdf"), "team")) <=
		    100);
	assert_int_equal((int)dget(a, "jobs.completed"), 300);
	json_decref(b);
	b = run(m, js, CARVE_SIM_EXCLUSIVE, -1);
	assert_int_equal((int)dget(b, "jobs.total"), 300);
	json_decref(b);
	json_decref(a);
	/* --until: stops there, horizon = until */
	a = run(m, js, CARVE_SIM_CARVE, 1000);
	assert_int_equal((int)dget(a, "horizon_s"), 1000);
	assert_true(dget(a, "jobs.completed") < 300);
	json_decref(a);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

static void test_invalid_jobs(void **state)
{
	struct carve_manifests *m = cluster(1, 4, 4, NULL);
	struct carve_jobs *js = carve_jobs_create();
	struct carve_sim_opts o;
	struct carve_error err;
	struct carve_sim *s;

	(void)state;
	job(js, "ok", 0, 10, 1, 1, 0, false, "team");
	job(js, "lost", 0, 10, 1, 1, 0, false, "nosuch");
	job(js, "huge", 0, 10, 1, 8, 0, false, "team");
	memset(&o, 0, sizeof(o));
	s = carve_sim_create(m, js, &o, &err);
	assert_null(s);
	assert_true(carve_diags_find(&m->diags, "no LocalQueue ns/nosuch") >= 0);
	assert_int_equal(m->diags.v[carve_diags_find(&m->diags, "nosuch")].pos.line, 3);
	assert_true(carve_diags_find(&m->diags, "job huge: a pod of podSet main fits no node") >= 0);
	assert_int_equal(m->diags.v[carve_diags_find(&m->diags, "huge")].pos.line, 4);
	carve_manifests_destroy(m);

	m = cluster(1, 4, 4, NULL);
	o.skip_invalid = true;
	s = carve_sim_create(m, js, &o, &err);
	assert_non_null(s);
	assert_int_equal(carve_sim_skipped(s), 2);
	assert_int_equal(m->diags.nerrors, 0);
	assert_int_equal(carve_sim_run(s, -1, NULL, &err), 0);
	assert_int_equal(carve_sim_jobs_left(s), 0);
	carve_sim_destroy(s);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* A job without a queue goes to the only ClusterQueue. */
static void test_no_queue_single_cq(void **state)
{
	struct carve_manifests *m = cluster(1, 4, 4, NULL);
	struct carve_jobs *js = carve_jobs_create();
	json_t *r;

	(void)state;
	job(js, "anon", 5, 10, 1, 1, 0, false, NULL);
	r = run(m, js, CARVE_SIM_CARVE, -1);
	assert_int_equal((int)dget(r, "queues.team.jobs_completed"), 1);
	assert_int_equal((int)dget(r, "horizon_s"), 15);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* One A100-80GB as 7 x 1g.10gb, quota 7 instances = 1 GPU-equivalent;
 * seven inference jobs of one 1g.10gb each, 100 s.  carve runs all seven
 * at once on the slices (0..100, the GPU fully allocated and used); the
 * baseline gives each a whole GPU, so they run one after another (0..700):
 * the GPU stays allocated but only 1/7 of it works. */
static void test_mig_vs_whole(void **state)
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
	struct carve_req reqs[2] = {{"cpu", 1000}, {"nvidia.com/mig-1g.10gb", 1000}};
	struct carve_job_podset ps;
	struct carve_job j;
	struct carve_error err;
	char name[16];
	json_t *r;
	int i;

	(void)state;
	tu_assert_clean(m);
	memset(&ps, 0, sizeof(ps));
	ps.count = 1;
	ps.nreqs = 2;
	ps.reqs = reqs;
	for (i = 0; i < 7; i++) {
		memset(&j, 0, sizeof(j));
		snprintf(name, sizeof(name), "i%d", i);
		j.name = name;
		j.ns = "ns";
		j.queue = "inf";
		j.duration = 100;
		j.npodsets = 1;
		j.podsets = &ps;
		assert_true(carve_jobs_add(js, &j, &err) >= 0);
	}
	r = run(m, js, CARVE_SIM_CARVE, -1);
	assert_int_equal((int)dget(r, "horizon_s"), 100);
	assert_true(fabs(dget(r, "gpu_allocation_pct") - 100) < 1e-3);
	assert_true(fabs(dget(r, "effective_utilisation_pct") - 100) < 1e-3);
	assert_true(fabs(dget(r, "quota.inf.nominal") - 1) < 1e-3);
	assert_true(json_is_array(json_object_get(
		json_object_get(json_object_get(json_object_get(r, "series"), "pools"), "mig"),
		"allocation_pct")));
	json_decref(r);
	r = run(m, js, CARVE_SIM_EXCLUSIVE, -1);
	assert_int_equal((int)dget(r, "horizon_s"), 700);
	assert_true(fabs(dget(r, "gpu_allocation_pct") - 100) < 1e-3);
	assert_true(fabs(dget(r, "effective_utilisation_pct") - 100.0 / 7) < 1e-3);
	/* inside the window (0 .. 100): i1 got its GPU at 100, the five
	 * others still wait at its end and count 100 s each (censored) */
	assert_int_equal((int)dget(r, "wait_first_gpu_s.inf.p99"), 100);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.inf.censored"), 5);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.inf.n"), 7);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* One L40S time-sliced 4 ways, quota nvidia.com/gpu 4 (= 4 replicas = 1
 * GPU-equivalent); four jobs of one nvidia.com/gpu, demand 0.5, 100 s.
 * carve runs them together on the replicas; the baseline gives each the
 * whole GPU (its cap is 4 requested GPUs, as a ResourceQuota counts them),
 * one after another, and the GPU works 1/8 of that time. */
static void test_timeslice_vs_whole(void **state)
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
	struct carve_req reqs[2] = {{"cpu", 1000}, {"nvidia.com/gpu", 1000}};
	struct carve_job_podset ps;
	struct carve_job j;
	struct carve_error err;
	char name[16];
	json_t *r;
	int i;

	(void)state;
	tu_assert_clean(m);
	memset(&ps, 0, sizeof(ps));
	ps.count = 1;
	ps.nreqs = 2;
	ps.reqs = reqs;
	for (i = 0; i < 4; i++) {
		memset(&j, 0, sizeof(j));
		snprintf(name, sizeof(name), "t%d", i);
		j.name = name;
		j.ns = "ns";
		j.queue = "dev";
		j.duration = 100;
		j.demand = 0.5;
		j.npodsets = 1;
		j.podsets = &ps;
		assert_true(carve_jobs_add(js, &j, &err) >= 0);
	}
	r = run(m, js, CARVE_SIM_CARVE, -1);
	assert_int_equal((int)dget(r, "horizon_s"), 100);
	assert_true(fabs(dget(r, "gpu_allocation_pct") - 100) < 1e-3);
	assert_true(fabs(dget(r, "effective_utilisation_pct") - 50) < 1e-3);
	assert_true(fabs(dget(r, "quota.dev.nominal") - 1) < 1e-3);
	assert_true(fabs(dget(r, "quota.dev.used_avg") - 1) < 1e-3);
	json_decref(r);
	r = run(m, js, CARVE_SIM_EXCLUSIVE, -1);
	assert_int_equal((int)dget(r, "horizon_s"), 400);
	assert_true(fabs(dget(r, "gpu_allocation_pct") - 100) < 1e-3);
	/* each job still needs one replica's worth (1/4 GPU) at demand 0.5 */
	assert_true(fabs(dget(r, "effective_utilisation_pct") - 12.5) < 1e-3);
	/* inside the window (0 .. 100): t2 and t3 still wait at its end */
	assert_int_equal((int)dget(r, "wait_first_gpu_s.dev.p99"), 100);
	assert_int_equal((int)dget(r, "wait_first_gpu_s.dev.censored"), 2);
	json_decref(r);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_checked),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_fragmentation),
		cmocka_unit_test(test_fragmentation_one_type),
		cmocka_unit_test(test_baseline_tolerations),
		cmocka_unit_test(test_preempt_requeue),
		cmocka_unit_test(test_preempt_checkpoint),
		cmocka_unit_test(test_baseline_gang_timeout),
		cmocka_unit_test(test_times_saturate),
		cmocka_unit_test(test_fields_and_determinism),
		cmocka_unit_test(test_invalid_jobs),
		cmocka_unit_test(test_no_queue_single_cq),
		cmocka_unit_test(test_mig_vs_whole),
		cmocka_unit_test(test_timeslice_vs_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
