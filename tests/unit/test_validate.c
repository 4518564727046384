/*
 * test_validate.c - every cross-object error and lint warning of
 * `carve validate`, each fed a bad manifest and checked for its exact line,
 * column and message; plus the clean seed scenario.
 */
#include "testutil.h"

#include "carve/inventory.h"
#include "carve/validate.h"

/* Loads yaml, builds the inventory, validates; the caller destroys m. */
static struct carve_manifests *run(const char *yaml)
{
	struct carve_manifests *m = tu_load(yaml);
	struct carve_inventory *inv = carve_inventory_build(m);

	assert_non_null(inv);
	carve_validate(m, inv);
	carve_inventory_destroy(inv);
	return m;
}

static const char *const kueue_bad =
	"apiVersion: kueue.x-k8s.io/v1beta2\n"      /* 1 */
	"kind: ResourceFlavor\n"
	"metadata:\n"
	"  name: h100\n"
	"---\n"                                      /* 5 */
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: ClusterQueue\n"
	"metadata:\n"
	"  name: research\n"
	"spec:\n"                                    /* 10 */
	"  resourceGroups:\n"
	"  - coveredResources: [nvidia.com/gpu]\n"
	"    flavors:\n"
	"    - name: h1000\n"
	"      resources:\n"                         /* 15 */
	"      - name: nvidia.com/gpu\n"
	"        nominalQuota: 8\n"
	"        borrowingLimit: 2\n"
	"        lendingLimit: 10\n"
	"---\n"                                      /* 20 */
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: LocalQueue\n"
	"metadata:\n"
	"  namespace: team\n"
	"  name: q\n"                                /* 25 */
	"spec:\n"
	"  clusterQueue: reserch\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: Cohort\n"                             /* 30 */
	"metadata:\n"
	"  name: a\n"
	"spec:\n"
	"  parentName: b\n"
	"---\n"                                      /* 35 */
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: Cohort\n"
	"metadata:\n"
	"  name: b\n"
	"spec:\n"                                    /* 40 */
	"  parentName: a\n";

static void kueue_references_and_quota(void **state)
{
	struct carve_manifests *m = run(kueue_bad);

	(void)state;
	tu_assert_error(m, 14, 13, "ClusterQueue research: flavor 'h1000' is not defined by any "
			"ResourceFlavor (did you mean 'h100'?)");
	tu_assert_error(m, 18, 25, "ClusterQueue research: borrowingLimit for h1000/nvidia.com/gpu "
			"needs a cohort, but the ClusterQueue is in none");
	tu_assert_error(m, 19, 23, "ClusterQueue research: lendingLimit 10 for h1000/nvidia.com/gpu "
			"is above its nominalQuota 8");
	tu_assert_error(m, 27, 17, "LocalQueue team/q: ClusterQueue 'reserch' is not defined "
			"(did you mean 'research'?)");
	tu_assert_error(m, 41, 15, "Cohort b: parent chain forms a cycle: a -> b -> a");
	assert_int_equal(m->diags.nerrors, 6);
	carve_manifests_destroy(m);
}

static void self_parent_cohort(void **state)
{
	struct carve_manifests *m = run("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\n"
					"metadata: {name: loop}\nspec: {parentName: loop}\n");

	(void)state;
	tu_assert_error(m, 4, 20, "Cohort loop: parent chain forms a cycle: loop -> loop");
	carve_manifests_destroy(m);
}

static void duplicates(void **state)
{
	struct carve_manifests *m = run("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
					"metadata: {name: x}\n---\n"
					"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
					"metadata: {name: x}\n");

	(void)state;
	tu_assert_error(m, 7, 18, "ResourceFlavor x is defined twice (first at t.yaml:1)");
	carve_manifests_destroy(m);
}

static const char *const pools_bad =
	"apiVersion: carve.dev/v1alpha1\n"          /* 1 */
	"kind: NodePool\n"
	"metadata:\n"
	"  name: prod\n"
	"spec:\n"                                    /* 5 */
	"  count: 2\n"
	"  gpu: {model: A100-80GB, count: 1}\n"
	"  sharing:\n"
	"    mode: mig\n"
	"    mig:\n"                                 /* 10 */
	"      layout: {\"3g.40gb\": 2, \"1g.10gb\": 1}\n"
	"---\n"
	"apiVersion: carve.dev/v1alpha1\n"
	"kind: NodePool\n"
	"metadata:\n"                                /* 15 */
	"  name: dev\n"
	"spec:\n"
	"  count: 2\n"
	"  gpu: {model: L40S, count: 1}\n"
	"  sharing:\n"                               /* 20 */
	"    mode: mig\n"
	"    mig:\n"
	"      layout: {\"1g.10gb\": 1}\n"
	"---\n"
	"apiVersion: carve.dev/v1alpha1\n"           /* 25 */
	"kind: NodePool\n"
	"metadata:\n"
	"  name: ts\n"
	"spec:\n"
	"  count: 1\n"                               /* 30 */
	"  gpu: {model: T4, count: 2}\n"
	"  sharing:\n"
	"    mode: timeslice\n"
	"    timeSlicing: {replicas: 0}\n";

static void mig_and_timeslice_errors(void **state)
{
	struct carve_manifests *m = run(pools_bad);

	(void)state;
	tu_assert_error(m, 11, 15, "NodePool prod: illegal MIG layout for A100-80GB: no legal "
			"placement for 1g.10gb:1, 3g.40gb:2 on A100-80GB");
	tu_assert_error(m, 21, 11, "NodePool dev: MIG is not available on L40S");
	tu_assert_error(m, 34, 29, "NodePool ts: spec.sharing.timeSlicing.replicas: replicas must "
			"be at least 1");
	carve_manifests_destroy(m);
}

static void mig_bad_start_via_migparted(void **state)
{
	/* A mig-parted config that asks for more 3g.40gb than fit. */
	struct carve_manifests *m = run(
		"version: v1\n"
		"mig-configs:\n"
		"  too-many:\n"
		"  - devices: all\n"
		"    mig-enabled: true\n"
		"    mig-devices: {\"3g.40gb\": 3}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: p}\n"
		"spec:\n"
		"  count: 1\n"
		"  gpu: {model: H100-80GB, count: 1}\n"
		"  sharing: {mode: mig, mig: {config: too-many}}\n");

	(void)state;
	tu_assert_error(m, 4, 5, "NodePool p: illegal MIG layout for H100-80GB");
	carve_manifests_destroy(m);
}

static const char *const lint_bad =
	"apiVersion: carve.dev/v1alpha1\n"          /* 1 */
	"kind: NodePool\n"
	"metadata: {name: t4}\n"
	"spec:\n"
	"  count: 1\n"                               /* 5 */
	"  gpu: {model: T4, count: 2}\n"
	"---\n"
	"apiVersion: batch/v1\n"
	"kind: Job\n"
	"metadata:\n"                                /* 10 */
	"  name: train\n"
	"  namespace: team\n"
	"spec:\n"
	"  parallelism: 4\n"
	"  template:\n"                              /* 15 */
	"    spec:\n"
	"      containers:\n"
	"      - name: main\n"
	"        resources:\n"
	"          requests:\n"                      /* 20 */
	"            nvidia.com/gpu: 16\n"
	"---\n"
	"apiVersion: v1\n"
	"kind: Pod\n"
	"metadata:\n"                                /* 25 */
	"  name: p\n"
	"  namespace: team\n"
	"spec:\n"
	"  nodeSelector:\n"
	"    nvidia.com/gpu.product: NVIDIA-B200\n"  /* 30 */
	"  containers:\n"
	"  - name: c\n"
	"    resources:\n"
	"      requests: {nvidia.com/gpu: 1}\n"
	"      limits: {nvidia.com/gpu: 2}\n";      /* 35 */

static void template_lints(void **state)
{
	struct carve_manifests *m = run(lint_bad);

	(void)state;
	tu_assert_warning(m, 14, 16, "Job team/train: 4 pods request GPUs but nothing gangs them");
	tu_assert_warning(m, 17, 7, "Job team/train requests GPUs but selects no GPU model or "
			  "sharing mode");
	tu_assert_warning(m, 21, 13, "Job team/train: container main requests 16 nvidia.com/gpu "
			  "without a limit");
	tu_assert_warning(m, 21, 13, "Job team/train: a pod requests 16 nvidia.com/gpu but no node "
			  "can give one pod more than 2");
	tu_assert_warning(m, 34, 18, "Pod team/p: container c requests 1 nvidia.com/gpu but its "
			  "limit is 2");
	tu_assert_warning(m, 34, 18, "Pod team/p: no node matches its nodeSelector, so its 1 "
			  "nvidia.com/gpu can never be placed");
	assert_int_equal(m->diags.nerrors, 0);
	carve_manifests_destroy(m);
}

static void gang_and_selector_satisfied(void **state)
{
	/* A Kueue-managed Job whose flavor injects the selector: no lint. */
	struct carve_manifests *m = run(
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: t4}\nspec: {nodeLabels: {nvidia.com/gpu.product: Tesla-T4}}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
		"spec:\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
		"    flavors: [{name: t4, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {name: q, namespace: team}\nspec: {clusterQueue: cq}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: t4}\n"
		"spec: {count: 2, gpu: {model: Tesla-T4, count: 2}}\n"
		"---\n"
		"apiVersion: batch/v1\nkind: Job\n"
		"metadata: {name: j, namespace: team, labels: {kueue.x-k8s.io/queue-name: q}}\n"
		"spec:\n  parallelism: 2\n  template:\n    spec:\n      containers:\n"
		"      - name: c\n        resources: {limits: {nvidia.com/gpu: 2}}\n");

	(void)state;
	tu_assert_clean(m);
	carve_manifests_destroy(m);
}

static void mig_timeslice_mix(void **state)
{
	struct carve_manifests *m = run(
		"apiVersion: v1\n"
		"kind: Node\n"
		"metadata:\n"
		"  name: a100-0\n"
		"  labels:\n"
		"    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n"
		"    nvidia.com/gpu.count: \"1\"\n"
		"    nvidia.com/mig.strategy: mixed\n"
		"    nvidia.com/device-plugin.config: mig-ts\n"
		"status:\n"
		"  allocatable:\n"
		"    nvidia.com/mig-1g.10gb: \"7\"\n"
		"---\n"
		"version: v1\n"
		"sharing:\n"
		"  timeSlicing:\n"
		"    resources:\n"
		"    - name: nvidia.com/mig-1g.10gb\n"
		"      replicas: 2\n");
	struct carve_manifests *m2;

	(void)state;
	/* A bare device-plugin config is named after its file ("t"), so the
	 * label's 'mig-ts' names nothing. */
	tu_assert_warning(m, 9, 5, "Node a100-0: device-plugin config 'mig-ts' is not defined "
			  "in the inputs; its sharing settings are unknown");
	carve_manifests_destroy(m);
	m2 = carve_manifests_create();
	{
		const char *dp = "version: v1\nsharing:\n  timeSlicing:\n"
				 "    resources:\n    - name: nvidia.com/mig-1g.10gb\n"
				 "      replicas: 2\n";

		assert_int_equal(carve_manifests_load_yaml(m2, "mig-ts.yaml", dp, strlen(dp)), 0);
	}
	{
		const char *node =
			"apiVersion: v1\nkind: Node\nmetadata:\n  name: a100-0\n  labels:\n"
			"    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n"
			"    nvidia.com/gpu.count: \"1\"\n"
			"    nvidia.com/device-plugin.config: mig-ts\n"
			"status:\n  allocatable:\n    nvidia.com/mig-1g.10gb: \"7\"\n";
		struct carve_inventory *inv;

		assert_int_equal(carve_manifests_load_yaml(m2, "t.yaml", node, strlen(node)), 0);
		inv = carve_inventory_build(m2);
		carve_validate(m2, inv);
		assert_int_equal(carve_inventory_node_res(inv, 0, "nvidia.com/mig-1g.10gb", NULL), 14);
		carve_inventory_destroy(inv);
	}
	tu_assert_warning(m2, 1, 1, "mixes MIG instances and time-sliced replicas under one "
			  "resource name, nvidia.com/mig-1g.10gb");
	carve_manifests_destroy(m2);
}

static void per_workload_cap(void **state)
{
	struct carve_manifests *m = run(
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		"metadata:\n  name: cq\n  annotations:\n"
		"    carve.dev/max-per-workload: \"nvidia.com/gpu=2,bogus\"\n"
		"spec: {}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {name: q, namespace: team}\nspec: {clusterQueue: cq}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
		"metadata: {name: w, namespace: team}\n"
		"spec:\n  queueName: q\n  podSets:\n  - name: main\n    count: 3\n"
		"    template:\n      spec:\n        nodeSelector: {nvidia.com/gpu.product: X}\n"
		"        containers:\n        - name: c\n"
		"          resources: {limits: {nvidia.com/gpu: 1}}\n");

	(void)state;
	tu_assert_error(m, 6, 5, "ClusterQueue cq: carve.dev/max-per-workload entry 'bogus' is "
			"not resource=quantity");
	tu_assert_warning(m, 14, 1, "Workload team/w asks for 3 nvidia.com/gpu in total, above "
			  "ClusterQueue cq's per-workload cap of 2");
	carve_manifests_destroy(m);
}

static void seed_scenario_is_clean(void **state)
{
	char path[4096];
	const char *src = getenv("CARVE_SOURCE_DIR");
	struct carve_manifests *m;
	struct carve_inventory *inv;
	int64_t gpu = 0, m3g = 0, m1g = 0;
	uint32_t id;

	(void)state;
	if (!src) {
		skip();
		return;
	}
	snprintf(path, sizeof(path), "%s/examples/seed-scenario", src);
	m = carve_manifests_create();
	assert_int_equal(carve_manifests_load_path(m, path), 0);
	inv = carve_inventory_build(m);
	carve_validate(m, inv);
	tu_assert_clean(m);
	for (id = 0; id < carve_cluster_node_count(inv->cluster); id++) {
		gpu += carve_inventory_node_res(inv, id, "nvidia.com/gpu", NULL);
		m3g += carve_inventory_node_res(inv, id, "nvidia.com/mig-3g.40gb", NULL);
		m1g += carve_inventory_node_res(inv, id, "nvidia.com/mig-1g.10gb", NULL);
	}
	assert_int_equal(gpu, 16 + 48); /* H100s plus L40S replicas */
	assert_int_equal(m3g, 14);
	assert_int_equal(m1g, 6);
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kueue_references_and_quota),
		cmocka_unit_test(self_parent_cohort),
		cmocka_unit_test(duplicates),
		cmocka_unit_test(mig_and_timeslice_errors),
		cmocka_unit_test(mig_bad_start_via_migparted),
		cmocka_unit_test(template_lints),
		cmocka_unit_test(gang_and_selector_satisfied),
		cmocka_unit_test(mig_timeslice_mix),
		cmocka_unit_test(per_workload_cap),
		cmocka_unit_test(seed_scenario_is_clean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
