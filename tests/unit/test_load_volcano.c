/*
 * test_load_volcano.c - unit tests of the Volcano Queue/PodGroup and KAI
 * Queue/PodGroup loaders: good manifests load clean with the right values
 * and defaults; bad ones are reported at the exact line and column (unknown
 * fields with suggestions, quantities, deserved > capability, KAI numbers,
 * limit < quota, apiVersion) and the rest of the file still loads.
 */
#include "testutil.h"

static const struct carve_resq *res(const struct carve_reslist *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	fail_msg("resource %s not found", name);
	return NULL;
}

/* ---- Volcano Queue ---- */

static void test_vcqueue_good(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"          /* 1 */
		"kind: Queue\n"                                        /* 2 */
		"metadata:\n"                                          /* 3 */
		"  name: team-a\n"                                     /* 4 */
		"  labels: {org: eng}\n"                               /* 5 */
		"spec:\n"                                              /* 6 */
		"  weight: 3\n"                                        /* 7 */
		"  capability: {nvidia.com/gpu: \"16\", cpu: 64, memory: 512Gi}\n"
		"  deserved:   {nvidia.com/gpu: \"8\", cpu: 32}\n"     /* 9 */
		"  guarantee:  {resource: {nvidia.com/gpu: \"2\"}}\n"  /* 10 */
		"  reclaimable: false\n"                               /* 11 */
		"  parent: eng\n"                                      /* 12 */
		"  priority: 100\n"                                    /* 13 */
		"  dequeueStrategy: fifo\n"                            /* 14 */
		"  type: ml\n"                                         /* 15 */
		"  affinity: {nodeGroupAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [h100-pool]}}\n"
		"  extendClusters: [{name: c1, weight: 1, capacity: {cpu: 8}}]\n"
		"status: {state: Open, allocated: {cpu: \"2\"}, reservation: {}}\n");
	const struct carve_mf_vcqueue *q;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->nvcqueues, 1);
	q = &m->vcqueues[0];
	assert_string_equal(q->meta.name, "team-a");
	assert_string_equal(q->meta.kind, "Queue");
	assert_string_equal(q->meta.api_version, "scheduling.volcano.sh/v1beta1");
	assert_null(q->meta.ns);
	assert_int_equal(q->weight, 3);
	assert_int_equal(q->capability.n, 3);
	assert_int_equal(res(&q->capability, "nvidia.com/gpu")->milli, 16000);
	assert_int_equal(res(&q->capability, "memory")->milli, 512LL * 1024 * 1024 * 1024 * 1000);
	assert_int_equal(q->deserved.n, 2);
	assert_int_equal(res(&q->deserved, "cpu")->milli, 32000);
	assert_int_equal(res(&q->deserved, "nvidia.com/gpu")->pos.line, 9);
	assert_int_equal(res(&q->deserved, "nvidia.com/gpu")->pos.col, 16);
	assert_int_equal(q->guarantee.n, 1);
	assert_int_equal(res(&q->guarantee, "nvidia.com/gpu")->milli, 2000);
	assert_false(q->reclaimable);
	assert_string_equal(q->parent, "eng");
	assert_int_equal(q->parent_pos.line, 12);
	assert_int_equal(q->parent_pos.col, 11);
	assert_int_equal(q->priority, 100);
	carve_manifests_destroy(m);
}

static void test_vcqueue_defaults(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: Queue\n"
		"metadata: {name: default}\n");
	const struct carve_mf_vcqueue *q;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->nvcqueues, 1);
	q = &m->vcqueues[0];
	assert_int_equal(q->weight, 1);
	assert_true(q->reclaimable);
	assert_null(q->parent);
	assert_int_equal(q->priority, 0);
	assert_int_equal(q->capability.n + q->deserved.n + q->guarantee.n, 0);
	carve_manifests_destroy(m);
}

static void test_vcqueue_unknown_field(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: Queue\n"
		"metadata: {name: team-a}\n"
		"spec:\n"
		"  capabilty: {cpu: 4}\n"
		"  guarantee: {resources: {cpu: 1}}\n"
		"  reclaimable: maybe\n");

	(void)state;
	tu_assert_error(m, 5, 3,
			"Queue team-a: spec: unknown field 'capabilty' (did you mean 'capability'?)");
	tu_assert_error(m, 6, 15,
			"spec.guarantee: unknown field 'resources' (did you mean 'resource'?)");
	tu_assert_error(m, 7, 16, "spec.reclaimable: expected true or false, got 'maybe'");
	assert_int_equal(m->diags.nerrors, 3);
	/* Still usable: it has a name. */
	assert_int_equal(m->nvcqueues, 1);
	assert_true(m->vcqueues[0].reclaimable);
	carve_manifests_destroy(m);
}

static void test_vcqueue_deserved_above_capability(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: Queue\n"
		"metadata: {name: team-a}\n"
		"spec:\n"
		"  capability:\n"
		"    nvidia.com/gpu: 4\n"
		"    memory: 8Gi\n"
		"  deserved:\n"
		"    nvidia.com/gpu: 8\n"
		"    memory: 16Gi\n"
		"    cpu: 100\n"          /* not in capability: not compared */
		"  guarantee:\n"
		"    resource:\n"
		"      nvidia.com/gpu: 2\n" /* <= both: fine */
		"      cpu: 200\n");      /* above deserved cpu */

	(void)state;
	tu_assert_error(m, 9, 5,
			"Queue team-a: spec: deserved nvidia.com/gpu 8 exceeds capability 4");
	tu_assert_error(m, 10, 5, "deserved memory 16Gi exceeds capability 8Gi");
	tu_assert_error(m, 15, 7, "guarantee cpu 200 exceeds deserved 100");
	assert_int_equal(m->diags.nerrors, 3);
	assert_int_equal(m->nvcqueues, 1);
	carve_manifests_destroy(m);
}

static void test_vcqueue_guarantee_above_capability(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: Queue\n"
		"metadata: {name: q}\n"
		"spec:\n"
		"  capability: {nvidia.com/gpu: 4}\n"
		"  guarantee: {resource: {nvidia.com/gpu: 5}}\n");

	(void)state;
	tu_assert_error(m, 6, 26, "guarantee nvidia.com/gpu 5 exceeds capability 4");
	assert_int_equal(m->diags.nerrors, 1);
	carve_manifests_destroy(m);
}

static void test_vcqueue_bad_values(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: Queue\n"
		"metadata: {name: team-a}\n"
		"spec:\n"
		"  capability: {cpu: 4x, memory: -1Gi}\n"
		"  weight: 70000\n"
		"  priority: -1\n"
		"  dequeueStrategy: fifi\n"
		"  parent: team-a\n"
		"  deserved: [cpu]\n");

	(void)state;
	tu_assert_error(m, 5, 21, "spec.capability[cpu]: malformed quantity '4x'");
	tu_assert_error(m, 5, 33, "spec.capability[memory]: quantity '-1Gi' must not be negative");
	tu_assert_error(m, 6, 11, "spec.weight: 70000 is out of range [0, 65535]");
	tu_assert_error(m, 7, 13, "spec.priority: -1 is out of range [0, 2147483647]");
	tu_assert_error(m, 8, 20, "unknown value 'fifi' (did you mean 'fifo'?");
	tu_assert_error(m, 9, 11, "queue team-a cannot be its own parent");
	tu_assert_error(m, 10, 13, "spec.deserved: expected a mapping of resource names");
	assert_int_equal(m->diags.nerrors, 7);
	assert_int_equal(m->nvcqueues, 1);
	assert_int_equal(m->vcqueues[0].weight, 1);
	assert_int_equal(m->vcqueues[0].capability.n, 0);
	carve_manifests_destroy(m);
}

static void test_vcqueue_weight_zero(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: Queue\n"
		"metadata: {name: q, namespace: x}\n"
		"spec: {weight: 0}\n");

	(void)state;
	tu_assert_warning(m, 4, 16, "weight 0 is read as the default 1");
	tu_assert_warning(m, 3, 11, "metadata.namespace is ignored: Queue is cluster-scoped");
	assert_int_equal(m->diags.nerrors, 0);
	assert_int_equal(m->vcqueues[0].weight, 1);
	assert_null(m->vcqueues[0].meta.ns);
	carve_manifests_destroy(m);
}

static void test_vcqueue_wrong_api_version(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1alpha9\n"
		"kind: Queue\n"
		"metadata: {name: team-a}\n"
		"---\n"
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: Queue\n"
		"metadata: {name: team-b}\n");

	(void)state;
	tu_assert_error(m, 1, 13,
			"Queue: unsupported apiVersion 'scheduling.volcano.sh/v1alpha9' (carve reads: "
			"scheduling.volcano.sh/v1beta1, scheduling.run.ai/v2)");
	assert_int_equal(m->diags.nerrors, 1);
	assert_int_equal(m->nvcqueues, 1);
	assert_string_equal(m->vcqueues[0].meta.name, "team-b");
	assert_int_equal(m->nkaiqueues, 0);
	carve_manifests_destroy(m);
}

static void test_vcqueue_no_name(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: Queue\n"
		"metadata: {labels: {a: b}}\n"
		"spec: {weight: 2}\n");

	(void)state;
	tu_assert_error(m, 3, 11, "Queue: metadata: missing required field 'name'");
	assert_int_equal(m->nvcqueues, 0);
	carve_manifests_destroy(m);
}

/* ---- Volcano PodGroup ---- */

static void test_podgroup_good(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: PodGroup\n"
		"metadata: {name: train-1, namespace: team-a}\n"
		"spec:\n"
		"  minMember: 4\n"
		"  minTaskMember: {worker: 4, ps: 1}\n"
		"  queue: team-a\n"
		"  priorityClassName: high\n"
		"  minResources: {nvidia.com/gpu: \"32\", cpu: 500m}\n"
		"  networkTopology: {mode: hard, highestTierAllowed: 1}\n"
		"  subGroupPolicy: [{name: pp, subGroupSize: 2}]\n"
		"status: {phase: Running, running: 4}\n");
	const struct carve_mf_podgroup *pg;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npodgroups, 1);
	pg = &m->podgroups[0];
	assert_string_equal(pg->meta.api_version, "scheduling.volcano.sh/v1beta1");
	assert_string_equal(pg->meta.name, "train-1");
	assert_string_equal(pg->meta.ns, "team-a");
	assert_int_equal(pg->min_member, 4);
	assert_string_equal(pg->queue, "team-a");
	assert_int_equal(pg->queue_pos.line, 7);
	assert_int_equal(pg->queue_pos.col, 10);
	assert_string_equal(pg->priority_class, "high");
	assert_int_equal(pg->min_resources.n, 2);
	assert_int_equal(res(&pg->min_resources, "nvidia.com/gpu")->milli, 32000);
	assert_int_equal(res(&pg->min_resources, "cpu")->milli, 500);
	carve_manifests_destroy(m);
}

static void test_podgroup_defaults(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: PodGroup\n"
		"metadata: {name: pg}\n");
	const struct carve_mf_podgroup *pg;

	(void)state;
	tu_assert_clean(m);
	pg = &m->podgroups[0];
	assert_string_equal(pg->meta.ns, "default");
	assert_string_equal(pg->queue, "default");
	assert_int_equal(pg->queue_pos.line, 1);
	assert_int_equal(pg->min_member, 0);
	assert_null(pg->priority_class);
	carve_manifests_destroy(m);
}

static void test_podgroup_bad(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: PodGroup\n"
		"metadata: {name: pg, namespace: ns}\n"
		"spec:\n"
		"  minMembers: 2\n"
		"  minMember: -1\n"
		"  minTaskMember: {worker: many}\n"
		"  queue: \"\"\n"
		"  minResources: {nvidia.com/gpu: 1.5.0}\n");

	(void)state;
	tu_assert_error(m, 5, 3,
			"PodGroup pg: spec: unknown field 'minMembers' (did you mean 'minMember'?)");
	tu_assert_error(m, 6, 14, "spec.minMember: -1 is out of range [0, 2147483647]");
	tu_assert_error(m, 7, 27, "spec.minTaskMember[worker]: expected an integer, got 'many'");
	tu_assert_error(m, 8, 10, "queue must not be empty");
	tu_assert_error(m, 9, 34, "spec.minResources[nvidia.com/gpu]: malformed quantity '1.5.0'");
	assert_int_equal(m->diags.nerrors, 5);
	assert_int_equal(m->npodgroups, 1);
	assert_string_equal(m->podgroups[0].queue, "default");
	carve_manifests_destroy(m);
}

/* ---- KAI Queue ---- */

static void test_kaiqueue_good(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.run.ai/v2\n"                   /* 1 */
		"kind: Queue\n"                                        /* 2 */
		"metadata: {name: ml-team}\n"                          /* 3 */
		"spec:\n"                                              /* 4 */
		"  displayName: \"ML Team\"\n"                         /* 5 */
		"  parentQueue: research-team\n"                       /* 6 */
		"  priority: 200\n"                                    /* 7 */
		"  preemptMinRuntime: 10m\n"                           /* 8 */
		"  reclaimMinRuntime: 1h30m\n"                         /* 9 */
		"  resources:\n"                                       /* 10 */
		"    gpu:    {quota: 1.5, overQuotaWeight: 1, limit: 4}\n"
		"    cpu:    {quota: 500, overQuotaWeight: 2, limit: -1}\n"
		"    memory: {quota: 0, overQuotaWeight: 1e0, limit: -1, lendingLimit: 0}\n"
		"status: {childQueues: [a], allocated: {nvidia.com/gpu: \"1\"}}\n");
	const struct carve_mf_kaiqueue *q;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->nkaiqueues, 1);
	assert_int_equal(m->nvcqueues, 0);
	q = &m->kaiqueues[0];
	assert_string_equal(q->meta.api_version, "scheduling.run.ai/v2");
	assert_string_equal(q->meta.name, "ml-team");
	assert_string_equal(q->parent, "research-team");
	assert_int_equal(q->parent_pos.line, 6);
	assert_int_equal(q->parent_pos.col, 16);
	assert_int_equal(q->priority, 200);
	assert_true(q->gpu.has_quota && q->gpu.has_limit);
	assert_true(q->gpu.quota == 1.5);
	assert_true(q->gpu.over_quota_weight == 1);
	assert_true(q->gpu.limit == 4);
	assert_int_equal(q->gpu.pos.line, 11);
	assert_int_equal(q->gpu.pos.col, 13);
	assert_true(q->cpu.quota == 500 && q->cpu.over_quota_weight == 2 && q->cpu.limit == -1);
	assert_true(q->memory.has_quota && q->memory.quota == 0);
	assert_true(q->memory.over_quota_weight == 1 && q->memory.limit == -1);
	carve_manifests_destroy(m);
}

static void test_kaiqueue_defaults(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.run.ai/v2\n"
		"kind: Queue\n"
		"metadata: {name: q}\n"
		"spec: {resources: {gpu: {quota: -1}}}\n");
	const struct carve_mf_kaiqueue *q;

	(void)state;
	tu_assert_clean(m);
	q = &m->kaiqueues[0];
	assert_int_equal(q->priority, 100);
	assert_null(q->parent);
	assert_true(q->gpu.has_quota && q->gpu.quota == -1);
	assert_false(q->gpu.has_limit);
	assert_true(q->gpu.limit == 0 && q->gpu.over_quota_weight == 0);
	assert_false(q->cpu.has_quota || q->cpu.has_limit || q->memory.has_quota);
	carve_manifests_destroy(m);
}

static void test_kaiqueue_limit_below_quota(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.run.ai/v2\n"
		"kind: Queue\n"
		"metadata: {name: ml}\n"
		"spec:\n"
		"  resources:\n"
		"    gpu: {quota: 4, limit: 2}\n"
		"    cpu: {limit: 2, quota: 4000}\n"
		"    memory: {quota: 100, lendingLimit: 200}\n");

	(void)state;
	tu_assert_error(m, 6, 28, "Queue ml: spec.resources.gpu: limit 2 is below quota 4");
	tu_assert_error(m, 7, 18, "spec.resources.cpu: limit 2 is below quota 4000");
	tu_assert_error(m, 8, 40, "spec.resources.memory: lendingLimit 200 exceeds quota 100");
	assert_int_equal(m->diags.nerrors, 3);
	assert_int_equal(m->nkaiqueues, 1);
	carve_manifests_destroy(m);
}

static void test_kaiqueue_resource_typo(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.run.ai/v2\n"
		"kind: Queue\n"
		"metadata: {name: ml}\n"
		"spec:\n"
		"  resources:\n"
		"    gpus: {quota: 1}\n"
		"    cpu: {qouta: 1, overQuotaWieght: 2}\n"
		"    nvidia.com/gpu: {quota: 1}\n"
		"  parent: x\n");

	(void)state;
	tu_assert_error(m, 6, 5,
			"Queue ml: spec.resources: unknown field 'gpus' (did you mean 'gpu'?)");
	tu_assert_error(m, 7, 11,
			"spec.resources.cpu: unknown field 'qouta' (did you mean 'quota'?)");
	tu_assert_error(m, 7, 21, "unknown field 'overQuotaWieght' (did you mean 'overQuotaWeight'?)");
	tu_assert_error(m, 8, 5, "spec.resources: unknown field 'nvidia.com/gpu'");
	tu_assert_error(m, 9, 3, "spec: unknown field 'parent'");
	assert_int_equal(m->diags.nerrors, 5);
	carve_manifests_destroy(m);
}

static void test_kaiqueue_bad_numbers(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.run.ai/v2\n"
		"kind: Queue\n"
		"metadata: {name: ml}\n"
		"spec:\n"
		"  priority: high\n"
		"  preemptMinRuntime: 10\n"
		"  reclaimMinRuntime: 5 minutes\n"
		"  resources:\n"
		"    gpu: {quota: 1x, limit: 0x10, overQuotaWeight: .inf}\n"
		"    cpu: {quota: -2, limit: 1e999, overQuotaWeight: -1}\n"
		"    memory: {quota: [1], limit: \" 5\", overQuotaWeight: 1e}\n");

	(void)state;
	tu_assert_error(m, 5, 13, "spec.priority: expected an integer, got 'high'");
	tu_assert_error(m, 6, 22, "spec.preemptMinRuntime: malformed duration '10'");
	tu_assert_error(m, 7, 22, "malformed duration '5 minutes'");
	tu_assert_error(m, 9, 18, "spec.resources.gpu.quota: expected a number, got '1x'");
	tu_assert_error(m, 9, 29, "spec.resources.gpu.limit: expected a number, got '0x10'");
	tu_assert_error(m, 9, 52, "expected a number, got '.inf'");
	tu_assert_error(m, 10, 18,
			"spec.resources.cpu.quota: -2 must be -1 (unlimited) or a non-negative number");
	tu_assert_error(m, 10, 29, "spec.resources.cpu.limit: number '1e999' is out of range");
	tu_assert_error(m, 10, 53, "overQuotaWeight -1 must not be negative");
	tu_assert_error(m, 11, 21, "spec.resources.memory.quota: expected a number, got a list");
	tu_assert_error(m, 11, 33, "expected a number, got ' 5'");
	tu_assert_error(m, 11, 56, "expected a number, got '1e'");
	assert_int_equal(m->diags.nerrors, 12);
	assert_int_equal(m->nkaiqueues, 1);
	assert_false(m->kaiqueues[0].gpu.has_quota || m->kaiqueues[0].gpu.has_limit);
	assert_int_equal(m->kaiqueues[0].priority, 100);
	carve_manifests_destroy(m);
}

static void test_kaiqueue_missing_resources(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.run.ai/v2\n"
		"kind: Queue\n"
		"metadata: {name: a}\n"
		"spec: {displayName: A}\n"
		"---\n"
		"apiVersion: scheduling.run.ai/v2\n"
		"kind: Queue\n"
		"metadata: {name: b}\n"
		"---\n"
		"apiVersion: scheduling.run.ai/v2\n"
		"kind: Queue\n"
		"metadata: {name: c}\n"
		"spec:\n"
		"---\n"
		"apiVersion: scheduling.run.ai/v2\n"
		"kind: Queue\n"
		"metadata: {name: d}\n"
		"spec: {resources: {}, parentQueue: d}\n");

	(void)state;
	tu_assert_error(m, 4, 7, "Queue a: spec: missing required field 'resources'");
	tu_assert_error(m, 6, 1, "Queue b: missing required field 'spec'");
	tu_assert_error(m, 13, 6, "Queue c: spec: missing required field 'resources'");
	tu_assert_error(m, 18, 36, "Queue d: spec: queue d cannot be its own parent");
	assert_int_equal(m->diags.nerrors, 4);
	assert_int_equal(m->nkaiqueues, 4);
	carve_manifests_destroy(m);
}

/* ---- KAI PodGroup ---- */

static void test_kaipodgroup_good(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.run.ai/v2alpha2\n"
		"kind: PodGroup\n"
		"metadata: {name: train, namespace: ml}\n"
		"spec:\n"
		"  minMember: 4\n"
		"  queue: ml-team\n"
		"  priorityClassName: train\n"
		"  preemptibility: non-preemptible\n"
		"  markUnschedulable: true\n"
		"  schedulingBackoff: 1\n"
		"  topologyConstraint: {topology: cluster-topology, requiredTopologyLevel: rack}\n"
		"  subGroups: [{name: prefill, minMember: 2, parent: null}]\n"
		"status: {phase: Running, schedulingConditions: []}\n");
	const struct carve_mf_podgroup *pg;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npodgroups, 1);
	pg = &m->podgroups[0];
	assert_string_equal(pg->meta.api_version, "scheduling.run.ai/v2alpha2");
	assert_string_equal(pg->meta.ns, "ml");
	assert_int_equal(pg->min_member, 4);
	assert_string_equal(pg->queue, "ml-team");
	assert_int_equal(pg->queue_pos.line, 6);
	assert_string_equal(pg->priority_class, "train");
	assert_int_equal(pg->min_resources.n, 0);
	carve_manifests_destroy(m);
}

static void test_kaipodgroup_bad(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.run.ai/v2alpha2\n"
		"kind: PodGroup\n"
		"metadata: {name: pg}\n"
		"spec:\n"
		"  minMember: 2\n"
		"  minSubGroup: 1\n"
		"  preemptibility: preemptable\n"
		"  minResources: {cpu: 1}\n"
		"---\n"
		"apiVersion: scheduling.run.ai/v2\n"
		"kind: PodGroup\n"
		"metadata: {name: pg2}\n");

	(void)state;
	tu_assert_error(m, 6, 16, "PodGroup pg: spec: minMember and minSubGroup are mutually exclusive");
	tu_assert_error(m, 7, 19, "unknown value 'preemptable' (did you mean 'preemptible'?");
	tu_assert_error(m, 8, 3, "spec: unknown field 'minResources'");
	tu_assert_error(m, 10, 13,
			"PodGroup: unsupported apiVersion 'scheduling.run.ai/v2' (carve reads: "
			"scheduling.volcano.sh/v1beta1, scheduling.run.ai/v2alpha2, "
			"scheduling.x-k8s.io/v1alpha1)");
	assert_int_equal(m->diags.nerrors, 4);
	assert_int_equal(m->npodgroups, 1);
	assert_null(m->podgroups[0].queue);
	carve_manifests_destroy(m);
}

/* Both PodGroup flavours land in one array; the apiVersion tells them apart. */
static void test_mixed(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: PodGroup\n"
		"metadata: {name: a}\n"
		"---\n"
		"apiVersion: scheduling.run.ai/v2alpha2\n"
		"kind: PodGroup\n"
		"metadata: {name: b}\n"
		"spec: {minMember: 1, queue: q}\n"
		"---\n"
		"apiVersion: scheduling.volcano.sh/v1beta1\n"
		"kind: Queue\n"
		"metadata: {name: q}\n"
		"---\n"
		"apiVersion: scheduling.run.ai/v2\n"
		"kind: Queue\n"
		"metadata: {name: q}\n"
		"spec: {resources: {gpu: {quota: 2, limit: 2}}}\n");

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->ndocs, 4);
	assert_int_equal(m->npodgroups, 2);
	assert_string_equal(m->podgroups[0].meta.api_version, "scheduling.volcano.sh/v1beta1");
	assert_string_equal(m->podgroups[1].meta.api_version, "scheduling.run.ai/v2alpha2");
	assert_int_equal(m->nvcqueues, 1);
	assert_int_equal(m->nkaiqueues, 1);
	assert_true(m->kaiqueues[0].gpu.limit == 2);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vcqueue_good),
		cmocka_unit_test(test_vcqueue_defaults),
		cmocka_unit_test(test_vcqueue_unknown_field),
		cmocka_unit_test(test_vcqueue_deserved_above_capability),
		cmocka_unit_test(test_vcqueue_guarantee_above_capability),
		cmocka_unit_test(test_vcqueue_bad_values),
		cmocka_unit_test(test_vcqueue_weight_zero),
		cmocka_unit_test(test_vcqueue_wrong_api_version),
		cmocka_unit_test(test_vcqueue_no_name),
		cmocka_unit_test(test_podgroup_good),
		cmocka_unit_test(test_podgroup_defaults),
		cmocka_unit_test(test_podgroup_bad),
		cmocka_unit_test(test_kaiqueue_good),
		cmocka_unit_test(test_kaiqueue_defaults),
		cmocka_unit_test(test_kaiqueue_limit_below_quota),
		cmocka_unit_test(test_kaiqueue_resource_typo),
		cmocka_unit_test(test_kaiqueue_bad_numbers),
		cmocka_unit_test(test_kaiqueue_missing_resources),
		cmocka_unit_test(test_kaipodgroup_good),
		cmocka_unit_test(test_kaipodgroup_bad),
		cmocka_unit_test(test_mixed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
