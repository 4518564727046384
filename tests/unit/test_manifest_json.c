/*
 * test_manifest_json.c - unit tests of manifest_json.c and the API fields
 * of a Pod (load_pod.c): objects as the API server returns them (JSON)
 * load into the same structs as the same objects written as YAML; API
 * metadata and status blocks load without a warning; bad objects get the
 * loaders' errors naming the source and the field; carve.dev/v1alpha1
 * queue kinds load as kueue.x-k8s.io/v1beta2.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "testutil.h"

#include "carve/admission.h"

/* Adds JSON text as one API object named source; asserts it parses. */
static void add(struct carve_manifests *m, const char *source, const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fail_msg("bad JSON in the test: %s (line %d)", e.text, e.line);
	assert_int_equal(carve_manifests_add_json(m, source, j), 0);
	json_decref(j);
}

static struct carve_manifests *from_json(const char *source, const char *text)
{
	struct carve_manifests *m = carve_manifests_create();

	assert_non_null(m);
	add(m, source, text);
	return m;
}

/* Some error or warning printed as "SOURCE: <sev>: ...msg..." (line 0). */
static void assert_diag(const struct carve_manifests *m, enum carve_severity sev,
			const char *source, const char *msg)
{
	char *buf = NULL, want[512];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	carve_diags_print(&m->diags, f);
	fclose(f);
	snprintf(want, sizeof(want), "%s: %s: ", source,
		 sev == CARVE_SEV_ERROR ? "error" : "warning");
	if (!strstr(buf, want) || !strstr(buf, msg)) {
		fprintf(stderr, "expected \"%s...%s\"; got:\n%s", want, msg, buf);
		free(buf);
		fail();
	}
	free(buf);
}

/* ---- struct comparisons (positions aside) ---- */

static void eq_str(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void eq_kv(const struct carve_kvlist *a, const struct carve_kvlist *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		eq_str(a->v[i].key, b->v[i].key);
		eq_str(a->v[i].value, b->v[i].value);
	}
}

static void eq_res(const struct carve_reslist *a, const struct carve_reslist *b)
{
	size_t i;

	assert_int_equal(a->n, b->n);
	for (i = 0; i < a->n; i++) {
		eq_str(a->v[i].name, b->v[i].name);
		assert_int_equal(a->v[i].milli, b->v[i].milli);
	}
}

static void eq_meta(const struct carve_meta *a, const struct carve_meta *b)
{
	eq_str(a->api_version, b->api_version);
	eq_str(a->kind, b->kind);
	eq_str(a->name, b->name);
	eq_str(a->ns, b->ns);
	eq_kv(&a->labels, &b->labels);
	eq_kv(&a->annotations, &b->annotations);
	assert_int_equal(a->has_created, b->has_created);
	assert_int_equal(a->created, b->created);
}

static void eq_taints(const struct carve_taint *a, const struct carve_taint *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		eq_str(a[i].key, b[i].key);
		eq_str(a[i].value, b[i].value);
		eq_str(a[i].effect, b[i].effect);
	}
}

static void eq_podspec(const struct carve_podspec *a, const struct carve_podspec *b)
{
	size_t i, j;

	eq_kv(&a->labels, &b->labels);
	eq_kv(&a->annotations, &b->annotations);
	assert_int_equal(a->ncontainers, b->ncontainers);
	for (i = 0; i < a->ncontainers; i++) {
		eq_str(a->containers[i].name, b->containers[i].name);
		eq_res(&a->containers[i].requests, &b->containers[i].requests);
		eq_res(&a->containers[i].limits, &b->containers[i].limits);
	}
	assert_int_equal(a->ninit, b->ninit);
	eq_res(&a->requests, &b->requests);
	eq_res(&a->limits, &b->limits);
	eq_kv(&a->node_selector, &b->node_selector);
	assert_int_equal(a->nterms, b->nterms);
	for (i = 0; i < a->nterms; i++) {
		assert_int_equal(a->terms[i].n, b->terms[i].n);
		for (j = 0; j < a->terms[i].n; j++) {
			eq_str(a->terms[i].v[j].key, b->terms[i].v[j].key);
			eq_str(a->terms[i].v[j].op, b->terms[i].v[j].op);
			assert_int_equal(a->terms[i].v[j].nvalues, b->terms[i].v[j].nvalues);
		}
	}
	assert_int_equal(a->ntolerations, b->ntolerations);
	for (i = 0; i < a->ntolerations; i++) {
		eq_str(a->tolerations[i].key, b->tolerations[i].key);
		eq_str(a->tolerations[i].op, b->tolerations[i].op);
		eq_str(a->tolerations[i].value, b->tolerations[i].value);
		eq_str(a->tolerations[i].effect, b->tolerations[i].effect);
	}
	eq_str(a->scheduler_name, b->scheduler_name);
	eq_str(a->priority_class, b->priority_class);
}

static void eq_pod(const struct carve_mf_pod *a, const struct carve_mf_pod *b)
{
	eq_meta(&a->meta, &b->meta);
	eq_podspec(&a->spec, &b->spec);
	eq_str(a->uid, b->uid);
	eq_str(a->node_name, b->node_name);
	eq_str(a->phase, b->phase);
	eq_str(a->nominated_node, b->nominated_node);
	assert_int_equal(a->ngates, b->ngates);
	assert_int_equal(a->deleting, b->deleting);
	assert_int_equal(a->grace_seconds, b->grace_seconds);
}

static void eq_rgroups(const struct carve_mf_rgroup *a, const struct carve_mf_rgroup *b, size_t n)
{
	size_t g, i, k;

	for (g = 0; g < n; g++) {
		assert_int_equal(a[g].ncovered, b[g].ncovered);
		for (i = 0; i < a[g].ncovered; i++)
			eq_str(a[g].covered[i], b[g].covered[i]);
		assert_int_equal(a[g].nflavors, b[g].nflavors);
		for (i = 0; i < a[g].nflavors; i++) {
			const struct carve_mf_flavorquotas *x = &a[g].flavors[i], *y = &b[g].flavors[i];

			eq_str(x->flavor, y->flavor);
			assert_int_equal(x->n, y->n);
			for (k = 0; k < x->n; k++) {
				eq_str(x->v[k].resource, y->v[k].resource);
				assert_int_equal(x->v[k].nominal, y->v[k].nominal);
				assert_int_equal(x->v[k].has_borrowing_limit, y->v[k].has_borrowing_limit);
				assert_int_equal(x->v[k].borrowing_limit, y->v[k].borrowing_limit);
				assert_int_equal(x->v[k].has_lending_limit, y->v[k].has_lending_limit);
				assert_int_equal(x->v[k].lending_limit, y->v[k].lending_limit);
			}
		}
	}
}

static void eq_cq(const struct carve_mf_cq *a, const struct carve_mf_cq *b)
{
	eq_str(a->meta.name, b->meta.name);
	eq_str(a->cohort, b->cohort);
	assert_int_equal(a->strategy, b->strategy);
	assert_int_equal(a->stop_policy, b->stop_policy);
	assert_int_equal(a->ngroups, b->ngroups);
	eq_rgroups(a->groups, b->groups, a->ngroups);
	assert_int_equal(a->within_cq, b->within_cq);
	assert_int_equal(a->reclaim, b->reclaim);
	assert_int_equal(a->bwc, b->bwc);
	assert_int_equal(a->has_bwc_threshold, b->has_bwc_threshold);
	assert_int_equal(a->bwc_max_priority, b->bwc_max_priority);
	assert_int_equal(a->when_can_borrow, b->when_can_borrow);
	assert_int_equal(a->when_can_preempt, b->when_can_preempt);
	assert_int_equal(a->preempt_over_borrow, b->preempt_over_borrow);
	assert_int_equal(a->fair_weight_milli, b->fair_weight_milli);
	assert_int_equal(a->has_namespace_selector, b->has_namespace_selector);
}

/* ---- the same objects as YAML and as JSON ---- */

static const char pod_yaml[] =
	"apiVersion: v1\n"
	"kind: Pod\n"
	"metadata:\n"
	"  name: train-0\n"
	"  namespace: team-a\n"
	"  labels: {kueue.x-k8s.io/queue-name: lq-a, app: \"007\"}\n"
	"  annotations: {note: \"null\"}\n"
	"  creationTimestamp: \"2026-01-02T03:04:05Z\"\n"
	"  uid: 5f1c2d3e-0000-4000-8000-000000000001\n"
	"spec:\n"
	"  schedulerName: carve\n"
	"  priorityClassName: high\n"
	"  terminationGracePeriodSeconds: 45\n"
	"  schedulingGates: [{name: a}, {name: b}]\n"
	"  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"
	"  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
	"  containers:\n"
	"  - name: main\n"
	"    resources:\n"
	"      requests: {cpu: 1500m, memory: 8Gi, nvidia.com/gpu: 2}\n"
	"      limits: {nvidia.com/gpu: 2}\n"
	"status:\n"
	"  phase: Pending\n"
	"  nominatedNodeName: node-3\n";

static const char pod_json[] =
	"{\"apiVersion\": \"v1\", \"kind\": \"Pod\","
	" \"metadata\": {\"name\": \"train-0\", \"namespace\": \"team-a\","
	"  \"labels\": {\"kueue.x-k8s.io/queue-name\": \"lq-a\", \"app\": \"007\"},"
	"  \"annotations\": {\"note\": \"null\"},"
	"  \"creationTimestamp\": \"2026-01-02T03:04:05Z\","
	"  \"uid\": \"5f1c2d3e-0000-4000-8000-000000000001\"},"
	" \"spec\": {\"schedulerName\": \"carve\", \"priorityClassName\": \"high\","
	"  \"terminationGracePeriodSeconds\": 45,"
	"  \"schedulingGates\": [{\"name\": \"a\"}, {\"name\": \"b\"}],"
	"  \"nodeSelector\": {\"nvidia.com/gpu.product\": \"NVIDIA-A100-SXM4-80GB\"},"
	"  \"tolerations\": [{\"key\": \"nvidia.com/gpu\", \"operator\": \"Exists\","
	"                     \"effect\": \"NoSchedule\"}],"
	"  \"containers\": [{\"name\": \"main\", \"resources\": {"
	"    \"requests\": {\"cpu\": \"1500m\", \"memory\": \"8Gi\", \"nvidia.com/gpu\": 2},"
	"    \"limits\": {\"nvidia.com/gpu\": \"2\"}}}]},"
	" \"status\": {\"phase\": \"Pending\", \"nominatedNodeName\": \"node-3\"}}";

static void test_pod_same_as_yaml(void **state)
{
	struct carve_manifests *y = tu_load(pod_yaml);
	struct carve_manifests *j = from_json("Pod team-a/train-0", pod_json);
	const struct carve_mf_pod *p;

	(void)state;
	tu_assert_clean(y);
	tu_assert_clean(j);
	assert_int_equal(y->npods, 1);
	assert_int_equal(j->npods, 1);
	eq_pod(&y->pods[0], &j->pods[0]);
	p = &j->pods[0];
	assert_string_equal(p->uid, "5f1c2d3e-0000-4000-8000-000000000001");
	assert_null(p->node_name);
	assert_string_equal(p->phase, "Pending");
	assert_string_equal(p->nominated_node, "node-3");
	assert_int_equal(p->ngates, 2);
	assert_false(p->deleting);
	assert_int_equal(p->grace_seconds, 45);
	/* The string "null" stays a string; "007" is text, not a number. */
	assert_string_equal(p->meta.annotations.v[0].value, "null");
	assert_string_equal(p->meta.labels.v[1].value, "007");
	assert_int_equal(j->ndocs, 1);
	/* Positions name the source at line 0. */
	assert_string_equal(p->meta.pos.file, "Pod team-a/train-0");
	assert_int_equal(p->meta.pos.line, 0);
	carve_manifests_destroy(y);
	carve_manifests_destroy(j);
}

/* A pod as a live API server returns it: every metadata and status field
 * it adds loads without a diagnostic; bound, deleting, default grace. */
static void test_pod_from_api_server(void **state)
{
	struct carve_manifests *m = from_json("Pod default/web-1",
		"{\"kind\": \"Pod\", \"apiVersion\": \"v1\","
		" \"metadata\": {\"name\": \"web-1\", \"generateName\": \"web-\","
		"  \"namespace\": \"default\", \"uid\": \"u-1\", \"resourceVersion\": \"1234\","
		"  \"generation\": 1, \"creationTimestamp\": \"2026-01-02T03:04:05Z\","
		"  \"deletionTimestamp\": \"2026-01-02T04:00:00Z\","
		"  \"deletionGracePeriodSeconds\": 30, \"selfLink\": \"/api/v1/x\","
		"  \"finalizers\": [\"a/b\"],"
		"  \"ownerReferences\": [{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\","
		"    \"name\": \"web\", \"uid\": \"u-0\", \"controller\": true,"
		"    \"blockOwnerDeletion\": true}],"
		"  \"managedFields\": [{\"manager\": \"kubectl\", \"operation\": \"Update\","
		"    \"apiVersion\": \"v1\", \"time\": \"2026-01-02T03:04:05Z\","
		"    \"fieldsType\": \"FieldsV1\", \"fieldsV1\": {\"f:spec\": {}}}]},"
		" \"spec\": {\"nodeName\": \"node-1\", \"schedulerName\": \"default-scheduler\","
		"  \"restartPolicy\": \"Always\", \"dnsPolicy\": \"ClusterFirst\","
		"  \"enableServiceLinks\": true, \"preemptionPolicy\": \"PreemptLowerPriority\","
		"  \"priority\": 0, \"securityContext\": {}, \"serviceAccountName\": \"default\","
		"  \"serviceAccount\": \"default\", \"schedulingGates\": null,"
		"  \"tolerations\": [{\"key\": \"node.kubernetes.io/not-ready\","
		"    \"operator\": \"Exists\", \"effect\": \"NoExecute\", \"tolerationSeconds\": 300}],"
		"  \"containers\": [{\"name\": \"c\", \"image\": \"nginx\", \"resources\": {},"
		"    \"terminationMessagePath\": \"/dev/termination-log\","
		"    \"terminationMessagePolicy\": \"File\", \"imagePullPolicy\": \"Always\"}]},"
		" \"status\": {\"phase\": \"Running\", \"qosClass\": \"BestEffort\","
		"  \"hostIP\": \"10.0.0.1\", \"hostIPs\": [{\"ip\": \"10.0.0.1\"}],"
		"  \"podIP\": \"10.1.0.5\", \"podIPs\": [{\"ip\": \"10.1.0.5\"}],"
		"  \"startTime\": \"2026-01-02T03:04:06Z\", \"observedGeneration\": 1,"
		"  \"conditions\": [{\"type\": \"PodScheduled\", \"status\": \"True\","
		"    \"lastProbeTime\": null, \"lastTransitionTime\": \"2026-01-02T03:04:06Z\"}],"
		"  \"containerStatuses\": [{\"name\": \"c\", \"ready\": true, \"restartCount\": 0,"
		"    \"image\": \"nginx\", \"imageID\": \"\", \"started\": true,"
		"    \"state\": {\"running\": {\"startedAt\": \"2026-01-02T03:04:07Z\"}}}]}}");
	const struct carve_mf_pod *p;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npods, 1);
	p = &m->pods[0];
	assert_string_equal(p->meta.name, "web-1");
	assert_string_equal(p->uid, "u-1");
	assert_string_equal(p->node_name, "node-1");
	assert_string_equal(p->phase, "Running");
	assert_null(p->nominated_node);
	assert_int_equal(p->ngates, 0);
	assert_true(p->deleting);
	assert_int_equal(p->grace_seconds, 30);
	carve_manifests_destroy(m);
}

/* A pod in a file without the API fields: all unset, grace 30. */
static void test_pod_file_defaults(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
					    "spec: {containers: [{name: c}]}\n");

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npods, 1);
	assert_null(m->pods[0].uid);
	assert_null(m->pods[0].node_name);
	assert_null(m->pods[0].phase);
	assert_null(m->pods[0].nominated_node);
	assert_int_equal(m->pods[0].ngates, 0);
	assert_false(m->pods[0].deleting);
	assert_int_equal(m->pods[0].grace_seconds, 30);
	carve_manifests_destroy(m);
}

static const char node_yaml[] =
	"apiVersion: v1\n"
	"kind: Node\n"
	"metadata:\n"
	"  name: gpu-1\n"
	"  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.count: \"8\","
	" nvidia.com/mig.config: all-disabled}\n"
	"spec:\n"
	"  unschedulable: true\n"
	"  taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]\n"
	"status:\n"
	"  capacity: {cpu: \"96\", memory: 1Ti, nvidia.com/gpu: \"8\", pods: \"110\"}\n"
	"  allocatable: {cpu: 95500m, memory: 1000Gi, nvidia.com/gpu: \"8\", pods: \"110\"}\n";

static const char node_json[] =
	"{\"apiVersion\": \"v1\", \"kind\": \"Node\","
	" \"metadata\": {\"name\": \"gpu-1\", \"uid\": \"n-1\", \"resourceVersion\": \"9\","
	"  \"labels\": {\"nvidia.com/gpu.product\": \"NVIDIA-A100-SXM4-80GB\","
	"   \"nvidia.com/gpu.count\": \"8\", \"nvidia.com/mig.config\": \"all-disabled\"},"
	"  \"annotations\": {}},"
	" \"spec\": {\"unschedulable\": true, \"podCIDR\": \"10.1.0.0/24\","
	"  \"podCIDRs\": [\"10.1.0.0/24\"], \"providerID\": \"kind://x\","
	"  \"taints\": [{\"key\": \"nvidia.com/gpu\", \"value\": \"present\","
	"   \"effect\": \"NoSchedule\"}]},"
	" \"status\": {\"capacity\": {\"cpu\": \"96\", \"memory\": \"1Ti\","
	"   \"nvidia.com/gpu\": \"8\", \"pods\": \"110\"},"
	"  \"allocatable\": {\"cpu\": \"95500m\", \"memory\": \"1000Gi\","
	"   \"nvidia.com/gpu\": \"8\", \"pods\": \"110\"},"
	"  \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}],"
	"  \"addresses\": [{\"type\": \"InternalIP\", \"address\": \"10.0.0.1\"}],"
	"  \"nodeInfo\": {\"kubeletVersion\": \"v1.35.0\"},"
	"  \"daemonEndpoints\": {\"kubeletEndpoint\": {\"Port\": 10250}}}}";

static void test_node_same_as_yaml(void **state)
{
	struct carve_manifests *y = tu_load(node_yaml);
	struct carve_manifests *j = from_json("Node gpu-1", node_json);

	(void)state;
	tu_assert_clean(y);
	tu_assert_clean(j);
	assert_int_equal(y->nnodes, 1);
	assert_int_equal(j->nnodes, 1);
	eq_meta(&y->nodes[0].meta, &j->nodes[0].meta);
	assert_int_equal(y->nodes[0].ntaints, j->nodes[0].ntaints);
	eq_taints(y->nodes[0].taints, j->nodes[0].taints, y->nodes[0].ntaints);
	eq_res(&y->nodes[0].capacity, &j->nodes[0].capacity);
	eq_res(&y->nodes[0].allocatable, &j->nodes[0].allocatable);
	assert_true(j->nodes[0].unschedulable);
	carve_manifests_destroy(y);
	carve_manifests_destroy(j);
}

/* Kueue's quota objects; the JSON ones in carve.dev/v1alpha1 with their
 * status blocks, the YAML ones in kueue.x-k8s.io/v1beta2. */
static const char queues_yaml[] =
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: ResourceFlavor\n"
	"metadata: {name: a100}\n"
	"spec:\n"
	"  nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"
	"  nodeTaints: [{key: dedicated, value: ml, effect: NoSchedule}]\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: Cohort\n"
	"metadata: {name: org}\n"
	"spec: {fairSharing: {weight: \"2\"}}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: ClusterQueue\n"
	"metadata: {name: team-a}\n"
	"spec:\n"
	"  cohortName: org\n"
	"  queueingStrategy: StrictFIFO\n"
	"  namespaceSelector: {}\n"
	"  resourceGroups:\n"
	"  - coveredResources: [nvidia.com/gpu, cpu]\n"
	"    flavors:\n"
	"    - name: a100\n"
	"      resources:\n"
	"      - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4}\n"
	"      - {name: cpu, nominalQuota: 64, lendingLimit: 32}\n"
	"  preemption:\n"
	"    reclaimWithinCohort: Any\n"
	"    withinClusterQueue: LowerPriority\n"
	"    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}\n"
	"  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: MayStopSearch}\n"
	"  fairSharing: {weight: 1500m}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: LocalQueue\n"
	"metadata: {name: lq-a, namespace: team-a}\n"
	"spec: {clusterQueue: team-a}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: WorkloadPriorityClass\n"
	"metadata: {name: prod}\n"
	"value: 1000\n"
	"description: production\n";

static const char *const queues_json[] = {
	"{\"apiVersion\": \"carve.dev/v1alpha1\", \"kind\": \"ResourceFlavor\","
	" \"metadata\": {\"name\": \"a100\", \"uid\": \"f\", \"generation\": 1},"
	" \"spec\": {\"nodeLabels\": {\"nvidia.com/gpu.product\": \"NVIDIA-A100-SXM4-80GB\"},"
	"  \"nodeTaints\": [{\"key\": \"dedicated\", \"value\": \"ml\", \"effect\": \"NoSchedule\"}]}}",
	"{\"apiVersion\": \"carve.dev/v1alpha1\", \"kind\": \"Cohort\","
	" \"metadata\": {\"name\": \"org\", \"resourceVersion\": \"3\"},"
	" \"spec\": {\"fairSharing\": {\"weight\": \"2\"}}, \"status\": {}}",
	"{\"apiVersion\": \"carve.dev/v1alpha1\", \"kind\": \"ClusterQueue\","
	" \"metadata\": {\"name\": \"team-a\", \"uid\": \"c\", \"generation\": 2,"
	"  \"finalizers\": [\"kueue.x-k8s.io/resource-in-use\"]},"
	" \"spec\": {\"cohortName\": \"org\", \"queueingStrategy\": \"StrictFIFO\","
	"  \"namespaceSelector\": {},"
	"  \"resourceGroups\": [{\"coveredResources\": [\"nvidia.com/gpu\", \"cpu\"],"
	"   \"flavors\": [{\"name\": \"a100\", \"resources\": ["
	"    {\"name\": \"nvidia.com/gpu\", \"nominalQuota\": 8, \"borrowingLimit\": 4},"
	"    {\"name\": \"cpu\", \"nominalQuota\": \"64\", \"lendingLimit\": 32}]}]}],"
	"  \"preemption\": {\"reclaimWithinCohort\": \"Any\","
	"   \"withinClusterQueue\": \"LowerPriority\","
	"   \"borrowWithinCohort\": {\"policy\": \"LowerPriority\", \"maxPriorityThreshold\": 100}},"
	"  \"flavorFungibility\": {\"whenCanBorrow\": \"TryNextFlavor\","
	"   \"whenCanPreempt\": \"MayStopSearch\"},"
	"  \"fairSharing\": {\"weight\": \"1500m\"}},"
	" \"status\": {\"admittedWorkloads\": 1, \"pendingWorkloads\": 0,"
	"  \"reservingWorkloads\": 1, \"conditions\": [],"
	"  \"flavorsUsage\": [{\"name\": \"a100\", \"resources\": [{\"name\": \"cpu\","
	"   \"total\": \"1\", \"borrowed\": \"0\"}]}]}}",
	"{\"apiVersion\": \"carve.dev/v1alpha1\", \"kind\": \"LocalQueue\","
	" \"metadata\": {\"name\": \"lq-a\", \"namespace\": \"team-a\"},"
	" \"spec\": {\"clusterQueue\": \"team-a\"},"
	" \"status\": {\"pendingWorkloads\": 0, \"admittedWorkloads\": 1}}",
	"{\"apiVersion\": \"carve.dev/v1alpha1\", \"kind\": \"WorkloadPriorityClass\","
	" \"metadata\": {\"name\": \"prod\", \"uid\": \"w\"},"
	" \"value\": 1000, \"description\": \"production\"}",
};

static void test_queues_carve_group_same_as_kueue(void **state)
{
	struct carve_manifests *y = tu_load(queues_yaml);
	struct carve_manifests *j = carve_manifests_create();
	size_t i;

	(void)state;
	assert_non_null(j);
	for (i = 0; i < sizeof(queues_json) / sizeof(queues_json[0]); i++)
		add(j, "queue object", queues_json[i]);
	tu_assert_clean(y);
	tu_assert_clean(j);
	assert_int_equal(j->nflavors, 1);
	assert_int_equal(j->ncohorts, 1);
	assert_int_equal(j->ncqs, 1);
	assert_int_equal(j->nlqs, 1);
	assert_int_equal(j->nwpcs, 1);
	assert_int_equal(y->ncqs, 1);
	assert_string_equal(j->cqs[0].meta.api_version, "carve.dev/v1alpha1");
	eq_cq(&y->cqs[0], &j->cqs[0]);
	eq_kv(&y->flavors[0].node_labels, &j->flavors[0].node_labels);
	assert_int_equal(j->flavors[0].ntaints, 1);
	eq_taints(y->flavors[0].node_taints, j->flavors[0].node_taints, 1);
	assert_int_equal(y->cohorts[0].fair_weight_milli, j->cohorts[0].fair_weight_milli);
	assert_string_equal(j->lqs[0].cluster_queue, "team-a");
	assert_string_equal(j->lqs[0].meta.ns, "team-a");
	assert_int_equal(j->wpcs[0].value, 1000);
	assert_string_equal(j->wpcs[0].description, "production");
	carve_manifests_destroy(y);
	carve_manifests_destroy(j);
}

/* carve.dev/v1alpha1 reads as v1beta2: v1beta1's spelling is warned. */
static void test_carve_group_is_v1beta2(void **state)
{
	struct carve_manifests *m = from_json("ClusterQueue old",
		"{\"apiVersion\": \"carve.dev/v1alpha1\", \"kind\": \"ClusterQueue\","
		" \"metadata\": {\"name\": \"old\"},"
		" \"spec\": {\"cohort\": \"org\", \"resourceGroups\": []}}");

	(void)state;
	assert_int_equal(m->ncqs, 1);
	assert_diag(m, CARVE_SEV_WARNING, "ClusterQueue old",
		    "'cohort' is a kueue.x-k8s.io/v1beta1 field; carve.dev/v1alpha1 calls it "
		    "'cohortName'");
	carve_manifests_destroy(m);
}

/* A typed list's items go through as documents too. */
static void test_list(void **state)
{
	struct carve_manifests *m = from_json("PodList",
		"{\"apiVersion\": \"v1\", \"kind\": \"PodList\", \"metadata\": {\"resourceVersion\": \"7\"},"
		" \"items\": [{\"metadata\": {\"name\": \"a\"}, \"spec\": {\"containers\": [{\"name\": \"c\"}]}},"
		"  {\"metadata\": {\"name\": \"b\"}, \"spec\": {\"containers\": [{\"name\": \"c\"}]}}]}");

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npods, 2);
	assert_string_equal(m->pods[1].meta.name, "b");
	carve_manifests_destroy(m);
}

/* ---- bad objects ---- */

static void test_missing_kind(void **state)
{
	struct carve_manifests *m = from_json("object 1",
		"{\"apiVersion\": \"v1\", \"metadata\": {\"name\": \"x\"}}");

	(void)state;
	assert_int_equal(m->npods, 0);
	assert_diag(m, CARVE_SEV_ERROR, "object 1", "document has no 'kind'");
	carve_manifests_destroy(m);
}

static void test_not_an_object(void **state)
{
	struct carve_manifests *m = carve_manifests_create();
	json_t *a = json_array();

	(void)state;
	assert_int_equal(carve_manifests_add_json(m, "thing", a), 0);
	assert_int_equal(carve_manifests_add_json(m, "nothing", NULL), 0);
	assert_diag(m, CARVE_SEV_ERROR, "thing", "expected a JSON object, got a list");
	assert_diag(m, CARVE_SEV_ERROR, "nothing", "expected a JSON object, got nothing");
	json_decref(a);
	carve_manifests_destroy(m);
}

static void test_wrong_types(void **state)
{
	struct carve_manifests *m = from_json("Pod default/p",
		"{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\","
		"  \"uid\": 7, \"labels\": [\"x\"]},"
		" \"spec\": {\"nodeName\": {\"a\": 1}, \"schedulingGates\": \"g\","
		"  \"terminationGracePeriodSeconds\": \"soon\", \"containers\": [{\"name\": \"c\","
		"  \"resources\": {\"requests\": {\"cpu\": true}}}]},"
		" \"status\": {\"phase\": \"Sleeping\", \"nominatedNodeName\": []}}");

	(void)state;
	assert_diag(m, CARVE_SEV_ERROR, "Pod default/p", "metadata.labels");
	assert_diag(m, CARVE_SEV_ERROR, "Pod default/p", "spec.nodeName: expected a string");
	assert_diag(m, CARVE_SEV_ERROR, "Pod default/p", "spec.schedulingGates: expected a list");
	assert_diag(m, CARVE_SEV_ERROR, "Pod default/p",
		    "spec.terminationGracePeriodSeconds: expected an integer");
	assert_diag(m, CARVE_SEV_ERROR, "Pod default/p", "spec.containers[0].resources.requests");
	assert_diag(m, CARVE_SEV_ERROR, "Pod default/p", "status.phase");
	assert_diag(m, CARVE_SEV_ERROR, "Pod default/p", "status.nominatedNodeName");
	carve_manifests_destroy(m);
}

static void test_unknown_fields(void **state)
{
	struct carve_manifests *m = from_json("ClusterQueue q",
		"{\"apiVersion\": \"carve.dev/v1alpha1\", \"kind\": \"ClusterQueue\","
		" \"metadata\": {\"name\": \"q\"}, \"spec\": {\"cohortNam\": \"x\"}}");

	(void)state;
	assert_diag(m, CARVE_SEV_ERROR, "ClusterQueue q", "cohortNam");
	assert_diag(m, CARVE_SEV_ERROR, "ClusterQueue q", "did you mean 'cohortName'");
	carve_manifests_destroy(m);
	m = from_json("Pod default/p",
		"{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"},"
		" \"spec\": {\"nodeNam\": \"n\", \"containers\": [{\"name\": \"c\"}]}}");
	assert_diag(m, CARVE_SEV_ERROR, "Pod default/p", "unknown field 'nodeNam' (did you mean 'nodeName'?)");
	carve_manifests_destroy(m);
	/* Under status the server may add fields newer than carve: accepted. */
	m = from_json("Pod default/p",
		"{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"},"
		" \"spec\": {\"containers\": [{\"name\": \"c\"}]},"
		" \"status\": {\"phase\": \"Pending\", \"newerField\": {\"x\": 1}}}");
	tu_assert_clean(m);
	assert_int_equal(m->npods, 1);
	carve_manifests_destroy(m);
}

/* A ClusterQueue's quota as a JSON real and a quoted string. */
static void test_numbers(void **state)
{
	struct carve_manifests *m = from_json("ClusterQueue q",
		"{\"apiVersion\": \"carve.dev/v1alpha1\", \"kind\": \"ClusterQueue\","
		" \"metadata\": {\"name\": \"q\"},"
		" \"spec\": {\"resourceGroups\": [{\"coveredResources\": [\"cpu\", \"memory\"],"
		"  \"flavors\": [{\"name\": \"f\", \"resources\": ["
		"   {\"name\": \"cpu\", \"nominalQuota\": 2.5},"
		"   {\"name\": \"memory\", \"nominalQuota\": \"1e3\"}]}]}]}}");

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->ncqs, 1);
	assert_int_equal(m->cqs[0].groups[0].flavors[0].v[0].nominal, 2500);
	assert_int_equal(m->cqs[0].groups[0].flavors[0].v[1].nominal, 1000000);
	carve_manifests_destroy(m);
}

/* A boolean field given something else. */
static void test_string_not_bool(void **state)
{
	struct carve_manifests *m = from_json("Node n",
		"{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\"},"
		" \"spec\": {\"unschedulable\": \"maybe\"}}");

	(void)state;
	assert_diag(m, CARVE_SEV_ERROR, "Node n", "spec.unschedulable");
	carve_manifests_destroy(m);
}

/* Deeper than the limit: refused whole. */
static void test_too_deep(void **state)
{
	struct carve_manifests *m = carve_manifests_create();
	json_t *root = json_object(), *cur;
	int i;

	(void)state;
	json_object_set_new(root, "kind", json_string("Pod"));
	json_object_set_new(root, "apiVersion", json_string("v1"));
	cur = root;
	for (i = 0; i < 300; i++) {
		json_t *next = json_object();

		json_object_set_new(cur, "x", next);
		cur = next;
	}
	assert_int_equal(carve_manifests_add_json(m, "deep", root), 0);
	assert_diag(m, CARVE_SEV_ERROR, "deep", "nested deeper than");
	assert_int_equal(m->npods, 0);
	json_decref(root);
	carve_manifests_destroy(m);
}


/* Only waiting pods become workloads: a bound, a finished and a deleting
 * pod are left out (the scheduler reads bound pods on its own); a Kueue
 * pod group counts its waiting pods only; groups of the same name in two
 * namespaces, or of Kueue and KAI, stay apart. */
static void test_waiting_pods_only(void **state)
{
	static const char head[] =
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
		"spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n"
		"    flavors: [{name: f, resources: [{name: cpu, nominalQuota: \"100\"}]}]\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {name: lq, namespace: a}\nspec: {clusterQueue: cq}\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {name: lq, namespace: b}\nspec: {clusterQueue: cq}\n";
	static const char *const pods[] = {
		/* name, namespace, extra spec, status, group, total */
		"waiting", "a", "", "", NULL, NULL,
		"bound", "a", ", \"nodeName\": \"n1\"", "", NULL, NULL,
		"done", "a", "", "\"phase\": \"Succeeded\"", NULL, NULL,
		"failed", "a", "", "\"phase\": \"Failed\"", NULL, NULL,
		"g-0", "a", ", \"nodeName\": \"n1\"", "\"phase\": \"Running\"", "g", "2",
		"g-1", "a", "", "\"phase\": \"Pending\"", "g", "2",
		"h-0", "b", "", "", "g", "2",
		"h-1", "b", "", "", "g", "2",
	};
	struct carve_manifests *m = tu_load(head);
	struct carve_admission *ad;
	char buf[2048];
	size_t i, n = 0;

	(void)state;
	for (i = 0; i < sizeof(pods) / sizeof(pods[0]); i += 6) {
		char labels[256];

		if (pods[i + 4])
			snprintf(labels, sizeof(labels), "\"kueue.x-k8s.io/queue-name\": \"lq\", "
				 "\"kueue.x-k8s.io/pod-group-name\": \"%s\"}, \"annotations\": "
				 "{\"kueue.x-k8s.io/pod-group-total-count\": \"%s\"", pods[i + 4],
				 pods[i + 5]);
		else
			snprintf(labels, sizeof(labels), "\"kueue.x-k8s.io/queue-name\": \"lq\"");
		snprintf(buf, sizeof(buf),
			 "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"%s\","
			 " \"namespace\": \"%s\", \"labels\": {%s}}, \"spec\": {\"containers\":"
			 " [{\"name\": \"c\", \"resources\": {\"requests\": {\"cpu\": \"1\"}}}]%s},"
			 " \"status\": {%s}}", pods[i], pods[i + 1], labels, pods[i + 2], pods[i + 3]);
		add(m, pods[i], buf);
	}
	/* one deleting pod */
	add(m, "going", "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": "
		"\"going\", \"namespace\": \"a\", \"deletionTimestamp\": \"2026-01-01T00:00:00Z\","
		" \"labels\": {\"kueue.x-k8s.io/queue-name\": \"lq\"}}, \"spec\": {\"containers\":"
		" [{\"name\": \"c\"}]}}");
	tu_assert_clean(m);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	/* a/waiting, and b/g (two pods); a/g has one waiting pod of 2: not
	 * queued, with the warning saying so */
	for (i = 0; i < ad->nderived; i++) {
		const char *name = ad->derived[i].w->meta.name;

		if (!strcmp(name, "waiting"))
			n += 1;
		else if (!strcmp(name, "g") && !strcmp(ad->derived[i].w->meta.ns, "b"))
			n += 10, assert_int_equal(ad->derived[i].w->podsets[0].count, 2);
		else
			fail_msg("unexpected workload %s/%s", ad->derived[i].w->meta.ns, name);
	}
	assert_int_equal(n, 11);
	assert_diag(m, CARVE_SEV_WARNING, "g-1", "is 2 but the input has 1 of its pods");
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}


/* The coscheduling convention: pods with the scheduling.x-k8s.io/pod-group
 * label form one workload; its PodGroup's minMember is the gang (fewer
 * pods than that: not queued yet); the PodGroup itself is not queued. */
static void test_coscheduling_group(void **state)
{
	static const char yaml[] =
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
		"spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n"
		"    flavors: [{name: f, resources: [{name: cpu, nominalQuota: \"100\"}]}]\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {name: lq, namespace: a}\nspec: {clusterQueue: cq}\n---\n"
		"apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
		"metadata: {name: pg, namespace: a}\n"
		"spec: {minMember: 2, minResources: {cpu: \"2\"}, scheduleTimeoutSeconds: 60}\n"
		"status: {phase: Pending}\n---\n"
		"apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
		"metadata: {name: big, namespace: a}\nspec: {minMember: 5}\n";
	struct carve_manifests *m = tu_load(yaml);
	struct carve_admission *ad;
	char buf[1024];
	int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		snprintf(buf, sizeof(buf),
			 "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p%d\","
			 " \"namespace\": \"a\", \"labels\": {\"kueue.x-k8s.io/queue-name\": \"lq\","
			 " \"scheduling.x-k8s.io/pod-group\": \"%s\"}}, \"spec\": {\"containers\":"
			 " [{\"name\": \"c\", \"resources\": {\"requests\": {\"cpu\": \"1\"}}}]}}",
			 i, i < 3 ? "pg" : "big");
		add(m, "pod", buf);
	}
	tu_assert_clean(m);
	assert_int_equal(m->npodgroups, 2);
	assert_int_equal(m->podgroups[0].min_member, 2);
	assert_null(m->podgroups[0].queue);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	assert_int_equal(ad->nderived, 1);
	assert_string_equal(ad->derived[0].w->meta.name, "pg");
	assert_int_equal(ad->derived[0].w->podsets[0].count, 3);
	assert_true(ad->derived[0].w->podsets[0].has_min_count);
	assert_int_equal(ad->derived[0].w->podsets[0].min_count, 2);
	assert_diag(m, CARVE_SEV_WARNING, "pod", "Pod group a/big: PodGroup minMember is 5 but "
		    "the input has 2 of its pods");
	for (i = 0; i < (int)m->diags.n; i++)
		if (strstr(m->diags.v[i].msg, "PodGroup a/pg: coscheduling PodGroups carry no "
			   "resource requests; it is not queued"))
			break;
	if (i == (int)m->diags.n) {
		tu_dump(m);
		fail();
	}
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_same_as_yaml),
		cmocka_unit_test(test_pod_from_api_server),
		cmocka_unit_test(test_pod_file_defaults),
		cmocka_unit_test(test_node_same_as_yaml),
		cmocka_unit_test(test_queues_carve_group_same_as_kueue),
		cmocka_unit_test(test_carve_group_is_v1beta2),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_missing_kind),
		cmocka_unit_test(test_not_an_object),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_unknown_fields),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_string_not_bool),
		cmocka_unit_test(test_too_deep),
		cmocka_unit_test(test_waiting_pods_only),
		cmocka_unit_test(test_coscheduling_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
