/*
 * test_validate.c - every cross-object error and lint warning of
 * `carve validate`, each fed a bad manifest and checked for its exact line,
 * column and message; inventory regressions (CPU-only nodes, GFD labels,
 * MIG resources against the card and its config, errors shared by many
 * nodes reported once, many labels, pool grouping, saturating sums); plus
 * the clean seed scenario.
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
		"spec:\n  parallelism: 2\n  template:\n"
		"    metadata: {annotations: {kueue.x-k8s.io/podset-preferred-topology: rack}}\n"
		"    spec:\n      containers:\n"
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

/* ---- inventory: regressions ---- */

/* Builds the inventory of m (kept for inspection); the caller destroys both. */
static struct carve_inventory *build(struct carve_manifests *m)
{
	struct carve_inventory *inv = carve_inventory_build(m);

	assert_non_null(inv);
	carve_validate(m, inv);
	return inv;
}

static void cpu_only_nodes(void **state)
{
	/* Nodes that advertise no GPU resource at all (UBSan: memcpy from NULL). */
	const char *csv = "sn,cpu_milli,memory_mib,gpu,model\nc1,1000,1000,0,\n";
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: cpu}\n"
		"spec: {count: 2, cpu: \"8\"}\n"
		"---\n"
		"apiVersion: v1\nkind: Node\nmetadata: {name: c0}\n"
		"status: {allocatable: {cpu: \"4\"}}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: z}\n"
		"spec:\n  count: 1\n  gpu: {model: A100-80GB, count: 8}\n"
		"  sharing: {mode: mig, mig: {layout: {\"1g.10gb\": 0}}}\n");
	struct carve_inventory *inv;

	(void)state;
	assert_int_equal(carve_manifests_load_csv(m, "n.csv", csv, strlen(csv)), 0);
	inv = build(m);
	tu_assert_clean(m);
	assert_int_equal(carve_cluster_node_count(inv->cluster), 5);
	assert_int_equal(inv->nres, 0);
	assert_int_equal(carve_inventory_node_res(inv, 4, "nvidia.com/gpu", NULL), 0);
	assert_int_equal(carve_cluster_node(inv->cluster, 4)->memory_milli, 1000LL * 1048576000);
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

static void csv_gpus_without_model(void **state)
{
	const char *csv = "sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1000,2,\n";
	struct carve_manifests *m = carve_manifests_create();
	struct carve_inventory *inv;
	const struct carve_gpu *g;

	(void)state;
	assert_int_equal(carve_manifests_load_csv(m, "n.csv", csv, strlen(csv)), 0);
	inv = build(m);
	tu_assert_warning(m, 2, 16, "gpu 2 but no model; GPUs kept as model 'unknown'");
	assert_int_equal(carve_cluster_gpu_count(inv->cluster), 2);
	g = carve_cluster_gpu(inv->cluster, 0);
	assert_string_equal(g->model, "unknown");
	assert_int_equal(g->sharing, CARVE_SHARE_FRACTION);
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

static void gfd_labels(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\nkind: Node\nmetadata:\n  name: single-ts\n  labels:\n"  /* 1 */
		"    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-1g.10gb-SHARED\n"   /* 6 */
		"    nvidia.com/mig.strategy: single\n"
		"status: {allocatable: {nvidia.com/gpu: \"14\"}}\n"
		"---\n"
		"apiVersion: v1\nkind: Node\nmetadata:\n  name: bad\n  labels:\n"         /* 10 */
		"    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n"                      /* 15 */
		"    nvidia.com/gpu.count: \"0x10\"\n"
		"    nvidia.com/gpu.memory: \"-5\"\n"
		"status: {allocatable: {nvidia.com/gpu: \"8\"}}\n"
		"---\n"
		"apiVersion: v1\nkind: Node\nmetadata:\n  name: big\n  labels:\n"         /* 20 */
		"    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n"                      /* 25 */
		"    nvidia.com/gpu.count: \"100\"\n"
		"    nvidia.com/gpu.memory: \"40000\"\n"
		"status: {allocatable: {nvidia.com/gpu: \"4\"}}\n");
	struct carve_inventory *inv = build(m);
	const struct carve_node *n;

	(void)state;
	/* -SHARED is trimmed before the single-strategy profile is read. */
	assert_int_equal(carve_diags_find(&m->diags, "does not exist"), -1);
	n = carve_cluster_node(inv->cluster, 0);
	assert_string_equal(n->name, "single-ts");
	assert_int_equal(n->ngpus, 2);
	assert_int_equal(carve_cluster_gpu(inv->cluster, 0)->sharing, CARVE_SHARE_MIG);
	assert_int_equal(carve_inventory_node_res(inv, 0, "nvidia.com/gpu", NULL), 14);
	tu_assert_warning(m, 16, 5, "Node bad: nvidia.com/gpu.count: '0x10' is not a number; "
			  "using status.allocatable");
	tu_assert_warning(m, 17, 5, "Node bad: nvidia.com/gpu.memory: '-5' is not a number; "
			  "using the model's memory");
	tu_assert_warning(m, 26, 5, "Node big: nvidia.com/gpu.count: '100' is out of range "
			  "(0 to 64); using status.allocatable");
	assert_int_equal(m->diags.n, 3);
	n = carve_cluster_node(inv->cluster, (uint32_t)carve_cluster_find_node(inv->cluster, "bad"));
	assert_int_equal(n->ngpus, 8);
	assert_int_equal(carve_cluster_gpu(inv->cluster, n->gpu_first)->memory_mib, 81920);
	n = carve_cluster_node(inv->cluster, (uint32_t)carve_cluster_find_node(inv->cluster, "big"));
	assert_int_equal(n->ngpus, 4);
	assert_int_equal(carve_cluster_gpu(inv->cluster, n->gpu_first)->memory_mib, 40000);
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

static void mig_resources_checked(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"                     /* 1 */
		"  labels: {nvidia.com/gpu.product: NVIDIA-L40S, nvidia.com/gpu.count: \"2\"}\n"
		"status:\n  allocatable: {nvidia.com/mig-1g.10gb: \"4\", cpu: \"1\"}\n"
		"---\n"
		"apiVersion: v1\nkind: Node\nmetadata:\n  name: n2\n  labels:\n"          /* 9 */
		"    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n"
		"    nvidia.com/gpu.count: \"1\"\n"
		"    nvidia.com/mig.config: all-3g.40gb\n"                                 /* 16 */
		"status:\n  allocatable: {nvidia.com/mig-1g.10gb: \"7\"}\n"
		"---\n"
		"apiVersion: v1\nkind: Node\nmetadata:\n  name: n3\n  labels:\n"          /* 20 */
		"    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n"
		"    nvidia.com/gpu.count: \"1\"\n"
		"    nvidia.com/mig.config: all-3g.40gb\n"
		"status:\n  allocatable: {nvidia.com/mig-3g.40gb: \"2\"}\n");
	struct carve_inventory *inv = build(m);

	(void)state;
	tu_assert_error(m, 7, 17, "Node n1: nvidia.com/mig-1g.10gb: MIG is not available on L40S");
	tu_assert_warning(m, 16, 5, "Node n2: nvidia.com/mig.config=all-3g.40gb gives 2 "
			  "nvidia.com/mig-3g.40gb but status.allocatable has 0; using the config");
	assert_int_equal(m->diags.n, 2); /* n3 agrees with its allocatable */
	assert_int_equal(carve_inventory_node_res(inv, 1, "nvidia.com/mig-3g.40gb", NULL), 2);
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

static const char *const migparted_shared =
	"version: v1\n"                                     /* 1 */
	"mig-configs:\n"
	"  bad:\n"
	"    - devices: all\n"
	"      mig-enabled: true\n"                         /* 5 */
	"      mig-devices: {\"3g.40gb\": 3}\n"
	"  only-a30:\n"
	"    - device-filter: [\"0x20B710DE\"]\n"
	"      devices: all\n"
	"      mig-enabled: true\n"                         /* 10 */
	"      mig-devices: {\"1g.6gb\": 4}\n"
	"  half:\n"
	"    - devices: [0]\n"                             /* 13 */
	"      mig-enabled: true\n"
	"      mig-devices: {\"3g.40gb\": 3}\n"
	"    - devices: [1]\n"
	"      mig-enabled: true\n"
	"      mig-devices: {\"3g.40gb\": 2}\n"
	"---\n"
	"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: h}\n"  /* 20 */
	"spec:\n  count: 2\n  gpu: {model: H100-80GB, count: 8}\n"
	"  sharing: {mode: mig, mig: {config: only-a30}}\n"                      /* 26 */
	"---\n"
	"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"  /* 28 */
	"spec:\n  count: 3\n  gpu: {model: A100-80GB, count: 2}\n"
	"  sharing: {mode: mig, mig: {config: half}}\n";

static void migconfig_errors_once(void **state)
{
	struct carve_manifests *m = tu_load(migparted_shared);
	struct carve_inventory *inv;
	int i;

	(void)state;
	/* Three Nodes naming one bad config: one error, counting them. */
	for (i = 1; i <= 3; i++) {
		char node[512];

		snprintf(node, sizeof(node),
			 "apiVersion: v1\nkind: Node\nmetadata:\n  name: n%d\n  labels:\n"
			 "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n"
			 "    nvidia.com/gpu.count: \"8\"\n    nvidia.com/mig.config: bad\n", i);
		assert_int_equal(carve_manifests_load_yaml(m, "nodes.yaml", node, strlen(node)), 0);
	}
	inv = build(m);
	tu_assert_error(m, 4, 7, "Node n1 (and 2 more Nodes with nvidia.com/mig.config=bad): "
			"illegal MIG layout for A100-80GB: 3 instances of 3g.40gb exceed its "
			"maximum of 2");
	tu_assert_error(m, 26, 38, "NodePool h: mig-parted config only-a30 has no entry for "
			"H100-80GB");
	/* A pool of 3 whose config has one bad entry: reported once too. */
	tu_assert_error(m, 13, 7, "NodePool p: illegal MIG layout for A100-80GB");
	assert_int_equal(m->diags.nerrors, 3);
	assert_int_equal(carve_inventory_node_res(inv, 2, "nvidia.com/mig-3g.40gb", NULL), 2);
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

static void many_labels_and_taints(void **state)
{
	/* NFD nodes carry 100+ labels: none may be dropped. */
	char *y = malloc(32768), key[32];
	struct carve_manifests *m;
	struct carve_inventory *inv;
	const struct carve_node *n;
	size_t len = 0;
	int i;

	(void)state;
	assert_non_null(y);
	len += (size_t)sprintf(y + len, "apiVersion: v1\nkind: Node\nmetadata:\n  name: nfd\n"
			       "  labels:\n");
	for (i = 0; i < 200; i++)
		len += (size_t)sprintf(y + len, "    feature.node.kubernetes.io/f%d: \"true\"\n", i);
	len += (size_t)sprintf(y + len, "spec:\n  taints:\n");
	for (i = 0; i < 40; i++)
		len += (size_t)sprintf(y + len, "  - {key: t%d, effect: NoSchedule}\n", i);
	m = tu_load(y);
	inv = build(m);
	tu_assert_clean(m);
	n = carve_cluster_node(inv->cluster, 0);
	assert_int_equal(n->nlabels, 200);
	assert_int_equal(n->ntaints, 40);
	snprintf(key, sizeof(key), "feature.node.kubernetes.io/f%d", 199);
	assert_string_equal(carve_node_label(n, key), "true");
	assert_string_equal(n->taints[39].key, "t39");
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
	free(y);
}

static void node_pools_grouped(void **state)
{
	/* Interleaved pools: grouped in order of first appearance, each pool's
	 * Nodes consecutive and in file order; a duplicate names the first. */
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\nkind: Node\nmetadata: {name: a0, labels: {carve.dev/pool: a}}\n"
		"---\n"
		"apiVersion: v1\nkind: Node\nmetadata: {name: b0, labels: {carve.dev/pool: b}}\n"
		"---\n"
		"apiVersion: v1\nkind: Node\nmetadata: {name: a1, labels: {carve.dev/pool: a}}\n"
		"---\n"
		"apiVersion: v1\nkind: Node\nmetadata: {name: b1, labels: {carve.dev/pool: b}}\n"
		"---\n"
		"apiVersion: v1\nkind: Node\nmetadata: {name: a0, labels: {carve.dev/pool: a}}\n");
	struct carve_inventory *inv = build(m);

	(void)state;
	assert_int_equal(inv->npools, 2);
	assert_string_equal(inv->pools[0].name, "a");
	assert_int_equal(inv->pools[0].nnodes, 2);
	assert_string_equal(inv->pools[1].name, "b");
	assert_int_equal(inv->pools[1].node_first, 2);
	assert_string_equal(carve_cluster_node(inv->cluster, 1)->name, "a1");
	assert_string_equal(carve_cluster_node(inv->cluster, 3)->name, "b1");
	tu_assert_error(m, 17, 1, "node a0 is defined twice (first at t.yaml:1)");
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

static void overflows_saturate(void **state)
{
	/* 2^31-1 pods of 9P each against a cap; three 9P quotas lendable in a
	 * cohort: sums saturate instead of wrapping around (UBSan). */
	struct carve_manifests *m = run(
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
		"metadata:\n  name: cq\n  annotations: {carve.dev/max-per-workload: \"nvidia.com/gpu=8\"}\n"
		"spec:\n  cohort: c\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
		"    flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: f}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
		"metadata: {name: lq, namespace: default}\nspec: {clusterQueue: cq}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
		"metadata: {name: w, namespace: default}\n"
		"spec:\n  queueName: lq\n  podSets:\n  - name: main\n    count: 2147483647\n"
		"    template:\n      spec:\n        nodeSelector: {nvidia.com/gpu.product: X}\n"
		"        containers:\n        - name: c\n"
		"          resources: {limits: {nvidia.com/gpu: \"9P\"}}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: a}\n"
		"spec:\n  cohort: c\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
		"    flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 9P}]}]\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: b}\n"
		"spec:\n  cohort: c\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
		"    flavors: [{name: f, resources: [{name: nvidia.com/gpu, nominalQuota: 9P}]}]\n");
	struct carve_inventory *inv = carve_inventory_build(m);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	tu_assert_warning(m, 21, 1, "Workload default/w asks for 9223372036854775807m "
			  "nvidia.com/gpu in total, above ClusterQueue cq's per-workload cap of 8");
	assert_non_null(f);
	carve_inventory_explain(inv, m, f);
	fclose(f);
	assert_non_null(strstr(out, "nominal 8        may borrow unlimited (what the cohort "
			       "can lend)"));
	free(out);
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

static void topology_intent(void **state)
{
	/* A multi-pod GPU Job names a Kueue topology level, or is warned of;
	 * one pod, or a Job without GPUs, needs none. */
	struct carve_manifests *m = run(
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: near, namespace: t}\n"
		"spec:\n  parallelism: 3\n  template:\n"
		"    metadata: {annotations: {kueue.x-k8s.io/podset-required-topology: rack}}\n"
		"    spec:\n      nodeSelector: {nvidia.com/gpu.product: Tesla-T4}\n"
		"      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
		"---\n"
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: cpu, namespace: t}\n"
		"spec:\n  parallelism: 3\n  template:\n    spec:\n"
		"      containers: [{name: c, resources: {limits: {cpu: 1}}}]\n"
		"---\n"
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: far, namespace: t,\n"
		"  labels: {kueue.x-k8s.io/queue-name: q}}\n"
		"spec:\n  parallelism: 3\n  template:\n    spec:\n"
		"      nodeSelector: {nvidia.com/gpu.product: Tesla-T4}\n"
		"      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n");
	long i;

	(void)state;
	i = carve_diags_find(&m->diags, "Job t/far: 3 pods request GPUs but state no topology "
			     "intent (no kueue.x-k8s.io/podset-required-topology or "
			     "podset-preferred-topology annotation)");
	assert_true(i >= 0);
	assert_string_equal(carve_diag_rule(&m->diags.v[i]), "topology");
	assert_true(carve_diags_find(&m->diags, "Job t/near: 3 pods request GPUs but state no") < 0);
	assert_true(carve_diags_find(&m->diags, "Job t/cpu") < 0); /* no lint at all */
	carve_manifests_destroy(m);
}

static void gang_and_generated_names(void **state)
{
	/* Pods at once = min(parallelism, completions); generateName Jobs are
	 * never duplicates of each other. */
	struct carve_manifests *m = run(
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: one}\n"              /* 1 */
		"spec:\n  parallelism: 4\n  completions: 1\n  template:\n    spec:\n"
		"      nodeSelector: {nvidia.com/gpu.product: Tesla-T4}\n"
		"      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
		"---\n"
		"apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: sample-job-}\n" /* 12 */
		"spec:\n  parallelism: 4\n  completions: 2\n  template:\n    spec:\n"
		"      nodeSelector: {nvidia.com/gpu.product: Tesla-T4}\n"
		"      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
		"---\n"
		"apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: sample-job-}\n" /* 23 */
		"spec:\n  template:\n    spec:\n"
		"      nodeSelector: {nvidia.com/gpu.product: Tesla-T4}\n"
		"      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n");

	(void)state;
	tu_assert_warning(m, 16, 16, "Job default/sample-job-*: 2 pods request GPUs but nothing "
			  "gangs them");
	tu_assert_warning(m, 20, 7, "Job default/sample-job-*: 2 pods request GPUs but state no "
			  "topology intent");
	assert_int_equal(m->diags.nwarnings, 2);
	assert_int_equal(m->diags.nerrors, 0);
	carve_manifests_destroy(m);
}

static void fit_cache_by_selector(void **state)
{
	/* Templates share one scan per (resource, nodeSelector). */
	struct carve_manifests *m = run(
		"apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: t4}\n"  /* 1 */
		"spec: {count: 3, gpu: {model: T4, count: 2}}\n"
		"---\n"
		"apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"                          /* 6 */
		"spec:\n  nodeSelector: {carve.dev/pool: t4}\n"
		"  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 2}}}]\n"
		"---\n"
		"apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n"                          /* 13 */
		"spec:\n  nodeSelector: {carve.dev/pool: t4}\n"
		"  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 3}}}]\n"
		"---\n"
		"apiVersion: v1\nkind: Pod\nmetadata: {name: c}\n"                          /* 20 */
		"spec:\n  nodeSelector: {carve.dev/pool: h100}\n"
		"  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
		"---\n"
		"apiVersion: v1\nkind: Pod\nmetadata: {name: d}\n"                          /* 27 */
		"spec:\n  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 3}}}]\n");

	(void)state;
	tu_assert_warning(m, 18, 47, "Pod default/b: a pod requests 3 nvidia.com/gpu but no node "
			  "can give one pod more than 2");
	tu_assert_warning(m, 25, 47, "Pod default/c: no node matches its nodeSelector");
	tu_assert_warning(m, 31, 47, "Pod default/d: a pod requests 3 nvidia.com/gpu but no node "
			  "can give one pod more than 2");
	assert_int_equal(carve_diags_find(&m->diags, "Pod default/a:"), -1);
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
		cmocka_unit_test(topology_intent),
		cmocka_unit_test(mig_timeslice_mix),
		cmocka_unit_test(per_workload_cap),
		cmocka_unit_test(cpu_only_nodes),
		cmocka_unit_test(csv_gpus_without_model),
		cmocka_unit_test(gfd_labels),
		cmocka_unit_test(mig_resources_checked),
		cmocka_unit_test(migconfig_errors_once),
		cmocka_unit_test(many_labels_and_taints),
		cmocka_unit_test(node_pools_grouped),
		cmocka_unit_test(overflows_saturate),
		cmocka_unit_test(gang_and_generated_names),
		cmocka_unit_test(fit_cache_by_selector),
		cmocka_unit_test(seed_scenario_is_clean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
