/*
 * test_bridge.c - the bridge is the one path from objects to the engine:
 * `carve admit` (Workloads added at build time) and the simulator's first
 * cycle (the same Workloads turned into trace jobs, carve_admission_job)
 * decide the same on every example and every Kueue conformance case, and
 * the MIG-slice quota case gives the same answer in both.
 */
#include <dirent.h>
#include <unistd.h>
#include <jansson.h>

#include "testutil.h"

#include "carve/admission.h"
#include "carve/inventory.h"
#include "carve/jobs.h"
#include "carve/validate.h"
#include "carve/sim.h"

/* The decisions of one engine cycle on path through `carve admit`'s path. */
static json_t *admit_once(const char *path)
{
	struct carve_manifests *m = carve_manifests_create();
	struct carve_admission *ad;
	json_t *j = NULL;

	assert_non_null(m);
	m->names_warn = true; /* as carve admit reads them */
	carve_manifests_load_path(m, path);
	ad = m->diags.nerrors ? NULL : carve_admission_build(m);
	if (ad && !m->diags.nerrors && carve_adm_cycle(ad->adm, ad->now) >= 0)
		j = carve_admission_result_json(ad);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
	return j;
}

/* The same input through the simulator: the admitted Workloads are its
 * starting state, the pending ones trace jobs arriving at 0; one cycle. */
static json_t *simulate_once(const char *path)
{
	struct carve_manifests *m = carve_manifests_create();
	struct carve_jobs *js = carve_jobs_create();
	struct carve_sim_opts o;
	struct carve_error err = {0};
	struct carve_sim *s = NULL;
	json_t *j = NULL;

	assert_non_null(m);
	assert_non_null(js);
	m->names_warn = true; /* as carve simulate reads them */
	carve_manifests_load_path(m, path);
	memset(&o, 0, sizeof(o));
	o.workloads = true;
	o.cycles = 1;
	if (!m->diags.nerrors)
		s = carve_sim_create(m, js, &o, &err);
	if (!s) {
		printf("  %s: simulate: %s\n", path, err.text);
		carve_diags_print(&m->diags, stdout);
	} else if (carve_sim_run_events(s, 0, SIZE_MAX, NULL, &err) >= 0) {
		j = carve_admission_result_json(carve_sim_admission(s));
	}
	carve_sim_destroy(s);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
	return j;
}

/* Both paths on path; true when they agree (the difference printed). */
static bool same_decisions(const char *path)
{
	json_t *a = admit_once(path), *b = simulate_once(path);
	bool ok = a && b && json_equal(a, b);

	if (!ok) {
		char *x = a ? json_dumps(a, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;
		char *y = b ? json_dumps(b, JSON_INDENT(1) | JSON_SORT_KEYS) : NULL;

		printf("DIFFER %s\n--- admit\n%s\n--- simulate\n%s\n", path, x ? x : "(none)",
		       y ? y : "(none)");
		free(x);
		free(y);
	}
	json_decref(a);
	json_decref(b);
	return ok;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs same_decisions on every entry of dir that want() accepts (name
 * order); returns how many there were, asserting all agree. */
static size_t each(const char *dir, bool (*want)(const char *dir, const struct dirent *de))
{
	char *names[512];
	char path[4096];
	size_t n = 0, i, bad = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < 512)
		if (de->d_name[0] != '.' && want(dir, de))
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), str_cmp);
	for (i = 0; i < n; i++) {
		assert_true((size_t)snprintf(path, sizeof(path), "%s/%.255s", dir, names[i]) <
			    sizeof(path));
		if (!same_decisions(path))
			bad++;
		free(names[i]);
	}
	printf("%s: %zu/%zu agree\n", dir, n - bad, n);
	assert_int_equal(bad, 0);
	return n;
}

static bool is_dir(const char *dir, const struct dirent *de)
{
	char path[4096];
	DIR *d;

	if ((size_t)snprintf(path, sizeof(path), "%.3800s/%.255s", dir, de->d_name) >= sizeof(path))
		return false;
	d = opendir(path);
	if (d)
		closedir(d);
	return d != NULL;
}

static bool is_case(const char *dir, const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	(void)dir;
	return n > 5 && !strcmp(de->d_name + n - 5, ".yaml");
}

/* each() on the source tree's directory sub; returns its count. */
static size_t each_in(const char *sub, bool (*want)(const char *dir, const struct dirent *de))
{
	const char *src = getenv("CARVE_SOURCE_DIR");
	char dir[4096];

	assert_non_null(src);
	snprintf(dir, sizeof(dir), "%s/%s", src, sub);
	return each(dir, want);
}

static void test_examples_agree(void **state)
{
	(void)state;
	assert_true(each_in("examples", is_dir) >= 2);
}

static void test_conformance_agrees(void **state)
{
	(void)state;
	assert_true(each_in("tests/conformance/kueue", is_case) >= 30);
}

/* The fair-sharing cases of this project decide alike too (a Kueue
 * Configuration among the inputs reaches both paths). */
static void test_fair_sharing_cases_agree(void **state)
{
	(void)state;
	assert_true(each_in("tests/conformance/carve-fair-sharing", is_case) >= 10);
}

/* Jobs, JobSets, Kueue and KAI pods and Volcano Jobs become workloads in
 * `carve admit` and jobs of `simulate --workloads` through the same
 * conversion: the first cycle decides alike (tests/data/jobs, and the Job
 * the fuzz harness once found admitted by one path only). */
static void test_jobs_and_pods_agree(void **state)
{
	const char *src = getenv("CARVE_SOURCE_DIR");
	static const char *const one_job =
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: t4}\n"
		"spec: {nodeLabels: {nvidia.com/gpu.product: Tesla-T4}}\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
		"spec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
		"    flavors: [{name: t4, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {name: q, namespace: team}\nspec: {clusterQueue: cq}\n---\n"
		"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: t4}\n"
		"spec: {count: 2, gpu: {model: Tesla-T4, count: 2}}\n---\n"
		"apiVersion: batch/v1\nkind: Job\n"
		"metadata: {name: j, namespace: team, labels: {kueue.x-k8s.io/queue-name: q}}\n"
		"spec:\n  parallelism: 2\n  template:\n    spec:\n      containers:\n"
		"      - name: c\n        resources: {limits: {nvidia.com/gpu: 2}}\n";
	char dir[4096], path[] = "/tmp/carve-bridge-job-XXXXXX.yaml";
	int fd;

	(void)state;
	assert_non_null(src);
	snprintf(dir, sizeof(dir), "%s/tests/data/jobs", src);
	assert_true(same_decisions(dir));
	fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	assert_true(write(fd, one_job, strlen(one_job)) == (ssize_t)strlen(one_job));
	close(fd);
	assert_true(same_decisions(path));
	unlink(path);
}

/*
 * A ClusterQueue charging carve.dev/mig-memory-slices with nominal 8 (one
 * A100-80GB's worth) gets a 7g.80gb job and an 8 x 1g.10gb job: the first
 * takes all 8 slices, so the second must wait, in admit and in simulate.
 */
static const char mig_slices[] =
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: ResourceFlavor\n"
	"metadata: {name: a100}\n"
	"spec:\n"
	"  nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: ClusterQueue\n"
	"metadata: {name: cq}\n"
	"spec:\n"
	"  resourceGroups:\n"
	"  - coveredResources: [nvidia.com/mig-7g.80gb, nvidia.com/mig-1g.10gb,\n"
	"                       carve.dev/mig-memory-slices]\n"
	"    flavors:\n"
	"    - name: a100\n"
	"      resources:\n"
	"      - {name: nvidia.com/mig-7g.80gb, nominalQuota: 8}\n"
	"      - {name: nvidia.com/mig-1g.10gb, nominalQuota: 8}\n"
	"      - {name: carve.dev/mig-memory-slices, nominalQuota: 8}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: LocalQueue\n"
	"metadata: {name: lq, namespace: t}\n"
	"spec: {clusterQueue: cq}\n";

static const char mig_workloads[] =
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: Workload\n"
	"metadata: {name: big, namespace: t, creationTimestamp: \"2026-01-01T00:00:00Z\"}\n"
	"spec:\n"
	"  queueName: lq\n"
	"  podSets:\n"
	"  - name: main\n"
	"    count: 1\n"
	"    template:\n"
	"      spec:\n"
	"        containers:\n"
	"        - name: c\n"
	"          resources: {requests: {nvidia.com/mig-7g.80gb: 1}, limits: {nvidia.com/mig-7g.80gb: 1}}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: Workload\n"
	"metadata: {name: small, namespace: t, creationTimestamp: \"2026-01-01T00:00:01Z\"}\n"
	"spec:\n"
	"  queueName: lq\n"
	"  podSets:\n"
	"  - name: main\n"
	"    count: 8\n"
	"    template:\n"
	"      spec:\n"
	"        containers:\n"
	"        - name: c\n"
	"          resources: {requests: {nvidia.com/mig-1g.10gb: 1}, limits: {nvidia.com/mig-1g.10gb: 1}}\n";

static const char mig_trace[] =
	"name,arrival,duration,namespace,queue,count,gpu,gpu_resource\n"
	"big,0,100,t,lq,1,1,nvidia.com/mig-7g.80gb\n"
	"small,1,100,t,lq,8,1,nvidia.com/mig-1g.10gb\n";

/* The decision for workload key in a result JSON: "admitted", "pending"... */
static const char *decision_of(json_t *res, const char *key)
{
	static const char *const lists[] = {"admitted", "preempted", "pending"};
	size_t l, i;

	for (l = 0; l < 3; l++) {
		json_t *arr = json_object_get(res, lists[l]);

		for (i = 0; i < json_array_size(arr); i++)
			if (!strcmp(json_string_value(json_object_get(json_array_get(arr, i),
								      "workload")), key))
				return lists[l];
	}
	return "absent";
}

static void test_mig_slices_same_answer(void **state)
{
	size_t len = strlen(mig_slices) + strlen(mig_workloads) + 1;
	char *both = malloc(len);
	struct carve_manifests *m;
	struct carve_admission *ad;
	struct carve_jobs *js;
	struct carve_sim *s;
	struct carve_sim_opts o;
	struct carve_error err = {0};
	json_t *res;

	(void)state;
	assert_non_null(both);
	snprintf(both, len, "%s%s", mig_slices, mig_workloads);
	/* carve admit, until nothing changes */
	m = tu_load(both);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	tu_assert_clean(m);
	assert_true(carve_adm_run(ad->adm, ad->now, 10) >= 0);
	res = carve_admission_result_json(ad);
	assert_string_equal(decision_of(res, "t/big"), "admitted");
	assert_string_equal(decision_of(res, "t/small"), "pending");
	json_decref(res);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
	free(both);

	/* carve simulate with a trace of the same two jobs: small waits for
	 * big to finish (t = 100), so it cannot have run at t = 50 */
	m = tu_load(mig_slices);
	js = carve_jobs_create();
	assert_non_null(js);
	assert_int_equal(carve_jobs_load_csv_buf(js, "t.trace.csv", mig_trace, strlen(mig_trace),
						 &m->diags, NULL), 0);
	memset(&o, 0, sizeof(o));
	s = carve_sim_create(m, js, &o, &err);
	assert_non_null(s);
	assert_true(carve_sim_run_events(s, 50, SIZE_MAX, NULL, &err) >= 0);
	res = carve_admission_result_json(carve_sim_admission(s));
	assert_string_equal(decision_of(res, "t/big"), "admitted");
	assert_string_equal(decision_of(res, "t/small"), "pending");
	json_decref(res);
	assert_true(carve_sim_run_events(s, 150, SIZE_MAX, NULL, &err) >= 0);
	res = carve_admission_result_json(carve_sim_admission(s));
	assert_string_equal(decision_of(res, "t/small"), "admitted");
	json_decref(res);
	carve_sim_destroy(s);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* KAI fractions on a plain v1 Node: the GPU takes fractions unless the node
 * opts out (carve.dev/sharing-mode: exclusive); then the pending message
 * and carve validate say what is missing. */
static const char kai_node[] =
	"apiVersion: v1\n"
	"kind: Node\n"
	"metadata:\n"
	"  name: n1\n"
	"  labels: {nvidia.com/gpu.product: NVIDIA-L40S%s}\n"
	"status:\n"
	"  allocatable: {cpu: \"16\", memory: 64Gi, nvidia.com/gpu: \"1\"}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: ResourceFlavor\n"
	"metadata: {name: l40s}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: ClusterQueue\n"
	"metadata: {name: cq}\n"
	"spec:\n"
	"  resourceGroups:\n"
	"  - coveredResources: [cpu, nvidia.com/gpu]\n"
	"    flavors:\n"
	"    - name: l40s\n"
	"      resources: [{name: cpu, nominalQuota: 16}, {name: nvidia.com/gpu, nominalQuota: 1}]\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: LocalQueue\n"
	"metadata: {name: lq, namespace: t}\n"
	"spec: {clusterQueue: cq}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: Workload\n"
	"metadata: {name: half, namespace: t, creationTimestamp: \"2026-01-01T00:00:00Z\"}\n"
	"spec:\n"
	"  queueName: lq\n"
	"  podSets:\n"
	"  - name: main\n"
	"    count: 2\n"
	"    template:\n"
	"      metadata:\n"
	"        annotations: {gpu-fraction: \"0.5\"}\n"
	"      spec:\n"
	"        containers:\n"
	"        - {name: c, resources: {requests: {cpu: \"1\"}}}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: Workload\n"
	"metadata: {name: whole, namespace: t, creationTimestamp: \"2026-01-01T00:00:01Z\"}\n"
	"spec:\n"
	"  queueName: lq\n"
	"  podSets:\n"
	"  - name: main\n"
	"    count: 1\n"
	"    template:\n"
	"      spec:\n"
	"        containers:\n"
	"        - {name: c, resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}}\n";

static json_t *admit_text(const char *text, struct carve_manifests **mp)
{
	struct carve_manifests *m = tu_load(text);
	struct carve_admission *ad = carve_admission_build(m);
	json_t *res;

	assert_non_null(ad);
	assert_true(carve_adm_run(ad->adm, ad->now, 10) >= 0);
	res = carve_admission_result_json(ad);
	assert_non_null(res);
	carve_admission_destroy(ad);
	*mp = m;
	return res;
}

static void test_kai_fractions_on_plain_nodes(void **state)
{
	char text[sizeof(kai_node) + 64];
	struct carve_manifests *m;
	json_t *res, *pend;

	(void)state;
	snprintf(text, sizeof(text), kai_node, "");
	res = admit_text(text, &m);
	/* both halves share GPU 0; the whole-GPU workload waits for them */
	assert_string_equal(decision_of(res, "t/half"), "admitted");
	assert_string_equal(decision_of(res, "t/whole"), "pending");
	json_decref(res);
	carve_manifests_destroy(m);

	snprintf(text, sizeof(text), kai_node, ", carve.dev/sharing-mode: exclusive");
	res = admit_text(text, &m);
	assert_string_equal(decision_of(res, "t/half"), "pending");
	assert_string_equal(decision_of(res, "t/whole"), "admitted");
	pend = json_array_get(json_object_get(res, "pending"), 0);
	assert_non_null(strstr(json_string_value(json_object_get(pend, "message")),
			       "no GPU it may use takes fractions"));
	json_decref(res);
	carve_manifests_destroy(m);

	m = tu_load(text);
	{
		struct carve_inventory *inv = carve_inventory_build(m);

		carve_validate(m, inv);
		carve_inventory_destroy(inv);
	}
	assert_true(carve_diags_find(&m->diags, "annotation gpu-fraction asks for a GPU "
				     "fraction, but no GPU takes fractions") >= 0);
	carve_manifests_destroy(m);
}

/* A cohort cycle reads the same in carve validate and in the build, once,
 * at the link that closes it; the build cuts that link and keeps the rest. */
static void test_cohort_cycle_one_message(void **state)
{
	static const char text[] =
		"apiVersion: kueue.x-k8s.io/v1beta2\n"
		"kind: Cohort\n"
		"metadata: {name: a}\n"
		"spec: {parentName: b}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\n"
		"kind: Cohort\n"
		"metadata: {name: b}\n"
		"spec: {parentName: a}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\n"
		"kind: ClusterQueue\n"
		"metadata: {name: cq}\n"
		"spec: {cohortName: a}\n";
	static const char msg[] = "Cohort b: parent chain forms a cycle: a -> b -> a";
	struct carve_manifests *m = tu_load(text);
	struct carve_admission *ad;

	(void)state;
	carve_validate(m, NULL);
	tu_assert_error(m, 9, 20, msg);
	assert_int_equal(m->diags.nerrors, 1);
	carve_manifests_destroy(m);

	m = tu_load(text);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	tu_assert_error(m, 9, 20, msg);
	assert_int_equal(m->diags.nerrors, 1);
	assert_true(ad->finalized); /* the tree stands without the cut link */
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

/* What admit refuses about Volcano and KAI queues, validate refuses too,
 * with the same words (one set of checks: the build's). */
static void test_validate_checks_queues_as_admit(void **state)
{
	static const char text[] =
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
		"metadata: {name: x}\nspec: {parent: y}\n---\n"
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
		"metadata: {name: y}\nspec: {parent: x}\n---\n"
		"apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: k}\n"
		"spec: {resources: {memory: {quota: 9223372036854775807}}}\n";
	static const char *const msgs[] = {
		"Volcano Queue y: parent chain forms a cycle: x -> y -> x",
		"Queue k: memory quota or limit is too large"};
	struct carve_manifests *m;
	struct carve_admission *ad;
	size_t i;

	(void)state;
	m = tu_load(text);
	carve_validate(m, NULL);
	for (i = 0; i < 2; i++)
		assert_true(carve_diags_find(&m->diags, msgs[i]) >= 0);
	assert_int_equal(m->diags.nerrors, 2);
	carve_manifests_destroy(m);

	m = tu_load(text);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	for (i = 0; i < 2; i++)
		assert_true(carve_diags_find(&m->diags, msgs[i]) >= 0);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

/* Writes text to a fresh file under /tmp; returns its path (free it). */
static char *temp_yaml(const char *text)
{
	char *path = strdup("/tmp/carve-bridge-XXXXXX.yaml");
	int fd;
	FILE *f;

	assert_non_null(path);
	fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static const char two_nodes[] =
	"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"
	"spec: {count: 2, gpu: {model: L40S, count: 1}, cpu: \"8\", memory: 32Gi}\n---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
	"spec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
	"    - name: f\n      resources: [{name: nvidia.com/gpu, nominalQuota: %d}]\n---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: t}\n"
	"spec: {clusterQueue: cq}\n";

#define ONE_GPU_WL(name, ts, affinity)                                                     \
	"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"                         \
	"metadata: {name: " name ", namespace: t, creationTimestamp: \"" ts "\"}\n"           \
	"spec:\n  queueName: lq\n  podSets:\n  - name: main\n    count: 1\n    template:\n" \
	"      spec:\n" affinity "        containers:\n        - name: c\n"                  \
	"          resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}\n"

/* Two pending Workloads asking for the same resources, one pinned by node
 * affinity to a zone no node has: the simulator must not take the pinned
 * one's "fits nowhere" for the other's (pod shapes compare affinity too). */
static void test_affinity_is_part_of_the_pod_shape(void **state)
{
	char text[4096];
	char *path;

	(void)state;
	snprintf(text, sizeof(text), two_nodes, 2);
	strcat(text, ONE_GPU_WL("pinned", "2026-01-01T00:00:00Z",
				"        affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
				"{nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, "
				"values: [nowhere]}]}]}}}\n"));
	strcat(text, ONE_GPU_WL("free", "2026-01-01T00:00:01Z", ""));
	path = temp_yaml(text);
	assert_true(same_decisions(path));
	unlink(path);
	free(path);
}

/* With --workloads, the manifests' objects keep their own times and the
 * trace starts at the latest of them: a pending Workload created before the
 * trace goes before a trace job of the same priority. */
static void test_workloads_before_the_trace(void **state)
{
	static const char trace[] =
		"name,arrival,duration,namespace,queue,count,gpu\n"
		"blocker,1,200,t,lq,1,1\n"
		"late,100,50,t,lq,1,1\n";
	char text[4096];
	struct carve_manifests *m;
	struct carve_jobs *js;
	struct carve_sim *s;
	struct carve_sim_opts o;
	struct carve_error err = {0};
	json_t *res;

	(void)state;
	snprintf(text, sizeof(text), two_nodes, 1);
	strcat(text, ONE_GPU_WL("early", "2026-01-01T00:00:00Z", ""));
	m = tu_load(text);
	js = carve_jobs_create();
	assert_non_null(js);
	assert_int_equal(carve_jobs_load_csv_buf(js, "t.trace.csv", trace, strlen(trace),
						 &m->diags, NULL), 0);
	memset(&o, 0, sizeof(o));
	o.workloads = true;
	o.workload_duration = 1000;
	s = carve_sim_create(m, js, &o, &err);
	assert_non_null(s);
	/* The trace's second 0 is the Workload's creation time: it is older
	 * than every trace job, so it takes the one GPU first. */
	assert_true(carve_sim_run_events(s, 250, SIZE_MAX, NULL, &err) >= 0);
	res = carve_admission_result_json(carve_sim_admission(s));
	assert_string_equal(decision_of(res, "t/early"), "admitted");
	assert_string_equal(decision_of(res, "t/blocker"), "pending");
	assert_string_equal(decision_of(res, "t/late"), "pending");
	json_decref(res);
	/* then the trace jobs in their own order */
	assert_true(carve_sim_run_events(s, 1100, SIZE_MAX, NULL, &err) >= 0);
	res = carve_admission_result_json(carve_sim_admission(s));
	assert_string_equal(decision_of(res, "t/blocker"), "admitted");
	assert_string_equal(decision_of(res, "t/late"), "pending");
	json_decref(res);
	carve_sim_destroy(s);
	carve_jobs_destroy(js);
	carve_manifests_destroy(m);
}

/* A Volcano PodGroup goes through the one podSet conversion in the build
 * too: an unknown MIG profile is refused by admit as by the simulator. */
static void test_podgroup_through_the_one_conversion(void **state)
{
	static const char text[] =
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
		"spec: {deserved: {nvidia.com/mig-9g.99gb: 1}}\n---\n"
		"apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
		"metadata: {name: pg, namespace: t}\n"
		"spec: {queue: q, minMember: 1, minResources: {nvidia.com/mig-9g.99gb: 1}}\n";
	struct carve_manifests *m = tu_load(text);
	struct carve_admission *ad = carve_admission_build(m);

	(void)state;
	assert_non_null(ad);
	assert_true(carve_diags_find(&m->diags, "PodGroup t/pg podSet pods: resource "
				     "nvidia.com/mig-9g.99gb: no GPU model offers MIG profile "
				     "'9g.99gb'") >= 0);
	assert_true(carve_adm_workload_count(ad->adm) == 0);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples_agree),
		cmocka_unit_test(test_conformance_agrees),
		cmocka_unit_test(test_fair_sharing_cases_agree),
		cmocka_unit_test(test_jobs_and_pods_agree),
		cmocka_unit_test(test_mig_slices_same_answer),
		cmocka_unit_test(test_kai_fractions_on_plain_nodes),
		cmocka_unit_test(test_cohort_cycle_one_message),
		cmocka_unit_test(test_validate_checks_queues_as_admit),
		cmocka_unit_test(test_affinity_is_part_of_the_pod_shape),
		cmocka_unit_test(test_workloads_before_the_trace),
		cmocka_unit_test(test_podgroup_through_the_one_conversion),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
