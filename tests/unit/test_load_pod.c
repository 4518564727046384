/*
 * test_load_pod.c - unit tests of load_pod.c: Pods, Jobs and pod templates.
 * Effective pod requests/limits as Kubernetes computes them (containers
 * summed, init containers maxed, sidecars, limit-defaults-request, pod-level
 * resources, overhead), node affinity terms, and exact diagnostics for bad
 * container fields and expressions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "testutil.h"

static int64_t res(const struct carve_reslist *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return l->v[i].milli;
	return -1;
}

static const char *kv(const struct carve_kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return l->v[i].value;
	return NULL;
}

static const char pod_head[] =
	"apiVersion: v1\n"  /* 1 */
	"kind: Pod\n"       /* 2 */
	"metadata:\n"       /* 3 */
	"  name: p\n"       /* 4 */
	"  namespace: ns\n" /* 5 */
	"  labels: {app: web}\n" /* 6 */
	"spec:\n";          /* 7 */

static struct carve_manifests *load_pod_spec(const char *spec)
{
	char buf[8192];

	snprintf(buf, sizeof(buf), "%s%s", pod_head, spec);
	return tu_load(buf);
}

/* Containers add up; the largest init container raises the total. */
static void test_effective_sum_and_init_max(void **state)
{
	struct carve_manifests *m = load_pod_spec(
		"  initContainers:\n"
		"  - name: init-big\n"
		"    image: busybox\n"
		"    command: [sh, -c, 'true']\n"
		"    resources: {requests: {cpu: '2', memory: 100Mi}}\n"
		"  - name: init-small\n"
		"    resources: {requests: {cpu: 500m}}\n"
		"  containers:\n"
		"  - name: a\n"
		"    image: nginx\n"
		"    ports: [{containerPort: 80}]\n"
		"    env: [{name: X, value: y}]\n"
		"    volumeMounts: [{name: v, mountPath: /v}]\n"
		"    resources:\n"
		"      requests: {cpu: '1', memory: 1Gi}\n"
		"      limits: {cpu: '2', memory: 1Gi}\n"
		"  - name: b\n"
		"    resources: {requests: {cpu: 500m, nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}\n"
		"  volumes: [{name: v, emptyDir: {}}]\n"
		"  restartPolicy: Never\n");
	const struct carve_podspec *ps;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npods, 1);
	assert_string_equal(m->pods[0].meta.ns, "ns");
	ps = &m->pods[0].spec;
	assert_int_equal(ps->ncontainers, 2);
	assert_int_equal(ps->ninit, 2);
	assert_string_equal(ps->containers[1].name, "b");
	assert_int_equal(ps->containers[0].resources_pos.line, 21);
	assert_int_equal(ps->containers[0].resources_pos.col, 5);
	/* cpu: max(1 + 0.5, 2, 0.5) = 2; memory: max(1Gi, 100Mi) */
	assert_int_equal(res(&ps->requests, "cpu"), 2000);
	assert_int_equal(res(&ps->requests, "memory"), 1073741824000LL);
	assert_int_equal(res(&ps->requests, "nvidia.com/gpu"), 1000);
	/* limits: only what containers set */
	assert_int_equal(res(&ps->limits, "cpu"), 2000);
	assert_int_equal(res(&ps->limits, "memory"), 1073741824000LL);
	assert_int_equal(res(&ps->limits, "nvidia.com/gpu"), 1000);
	assert_string_equal(kv(&ps->labels, "app"), "web");
	carve_manifests_destroy(m);
}

/* A limit without a request defaults the request (per container). */
static void test_limit_defaults_request(void **state)
{
	struct carve_manifests *m = load_pod_spec(
		"  containers:\n"
		"  - name: a\n"
		"    resources:\n"
		"      requests: {cpu: 250m}\n"
		"      limits: {cpu: '1', memory: 2Gi, nvidia.com/gpu: '2'}\n"
		"  - name: b\n"
		"    resources: {limits: {memory: 1Gi}}\n");
	const struct carve_podspec *ps;

	(void)state;
	tu_assert_clean(m);
	ps = &m->pods[0].spec;
	/* container a: cpu request stays 250m, memory and gpu default to the limit */
	assert_int_equal(res(&ps->containers[0].requests, "cpu"), 250);
	assert_int_equal(res(&ps->containers[0].requests, "memory"), 2147483648000LL);
	assert_int_equal(res(&ps->containers[0].requests, "nvidia.com/gpu"), 2000);
	assert_int_equal(res(&ps->containers[1].requests, "memory"), 1073741824000LL);
	assert_int_equal(res(&ps->requests, "cpu"), 250);
	assert_int_equal(res(&ps->requests, "memory"), 3221225472000LL);
	assert_int_equal(res(&ps->requests, "nvidia.com/gpu"), 2000);
	assert_int_equal(res(&ps->limits, "cpu"), 1000);
	carve_manifests_destroy(m);
}

/* Sidecars (init containers with restartPolicy: Always) run beside the
 * app containers and beside every init container after them. */
static void test_sidecars(void **state)
{
	struct carve_manifests *m = load_pod_spec(
		"  initContainers:\n"
		"  - name: proxy\n"
		"    restartPolicy: Always\n"
		"    resources: {requests: {cpu: '1'}}\n"
		"  - name: migrate\n"
		"    resources: {requests: {cpu: '3'}}\n"
		"  containers:\n"
		"  - name: app\n"
		"    resources: {requests: {cpu: '1'}}\n");

	(void)state;
	tu_assert_clean(m);
	/* running: app 1 + proxy 1 = 2; during migrate: 3 + proxy 1 = 4 */
	assert_int_equal(res(&m->pods[0].spec.requests, "cpu"), 4000);
	carve_manifests_destroy(m);
}

/* Pod-level resources replace cpu/memory totals; overhead is added. */
static void test_pod_level_and_overhead(void **state)
{
	struct carve_manifests *m = load_pod_spec(
		"  resources: {limits: {cpu: '4'}}\n"
		"  overhead: {cpu: 250m, memory: 120Mi}\n"
		"  runtimeClassName: kata\n"
		"  containers:\n"
		"  - name: app\n"
		"    resources: {requests: {cpu: '1', nvidia.com/gpu: 1}, limits: {memory: 1Gi}}\n");
	const struct carve_podspec *ps;

	(void)state;
	tu_assert_clean(m);
	ps = &m->pods[0].spec;
	assert_int_equal(res(&ps->requests, "cpu"), 4250);
	assert_int_equal(res(&ps->requests, "memory"), (1024LL + 120) * 1048576 * 1000);
	assert_int_equal(res(&ps->requests, "nvidia.com/gpu"), 1000);
	assert_int_equal(res(&ps->limits, "cpu"), 4250);
	assert_int_equal(res(&ps->limits, "memory"), (1024LL + 120) * 1048576 * 1000);
	carve_manifests_destroy(m);
}

static void test_affinity_and_scheduling_fields(void **state)
{
	struct carve_manifests *m = load_pod_spec(
		"  schedulerName: kai-scheduler\n"
		"  priorityClassName: high\n"
		"  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"
		"  tolerations:\n"
		"  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
		"  affinity:\n"
		"    nodeAffinity:\n"
		"      requiredDuringSchedulingIgnoredDuringExecution:\n"
		"        nodeSelectorTerms:\n"
		"        - matchExpressions:\n"
		"          - {key: type, operator: In, values: [a, b]}\n"
		"          - {key: spot, operator: DoesNotExist}\n"
		"        - matchExpressions:\n"
		"          - {key: gen, operator: Gt, values: ['3']}\n"
		"          matchFields:\n"
		"          - {key: metadata.name, operator: In, values: [n1]}\n"
		"      preferredDuringSchedulingIgnoredDuringExecution:\n"
		"      - weight: 1\n"
		"        preference: {matchExpressions: [{key: zone, operator: In, values: [z]}]}\n"
		"    podAntiAffinity:\n"
		"      requiredDuringSchedulingIgnoredDuringExecution:\n"
		"      - labelSelector: {matchLabels: {app: web}}\n"
		"        topologyKey: kubernetes.io/hostname\n"
		"  containers: [{name: c}]\n");
	const struct carve_podspec *ps;

	(void)state;
	tu_assert_clean(m);
	ps = &m->pods[0].spec;
	assert_string_equal(ps->scheduler_name, "kai-scheduler");
	assert_string_equal(ps->priority_class, "high");
	assert_string_equal(kv(&ps->node_selector, "nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-80GB");
	assert_int_equal(ps->ntolerations, 1);
	assert_string_equal(ps->tolerations[0].op, "Exists");
	assert_int_equal(ps->nterms, 2);
	assert_int_equal(ps->terms[0].n, 2);
	assert_string_equal(ps->terms[0].v[0].key, "type");
	assert_string_equal(ps->terms[0].v[0].op, "In");
	assert_int_equal(ps->terms[0].v[0].nvalues, 2);
	assert_string_equal(ps->terms[0].v[0].values[1], "b");
	assert_int_equal(ps->terms[0].v[0].pos.line, 18);
	assert_int_equal(ps->terms[0].v[0].pos.col, 13);
	assert_string_equal(ps->terms[0].v[1].op, "DoesNotExist");
	assert_int_equal(ps->terms[0].v[1].nvalues, 0);
	assert_int_equal(ps->terms[1].n, 1);
	assert_string_equal(ps->terms[1].v[0].op, "Gt");
	carve_manifests_destroy(m);
}

static void test_bad_expressions(void **state)
{
	struct carve_manifests *m = load_pod_spec(
		"  affinity:\n"                                         /* 8 */
		"    nodeAffinity:\n"                                   /* 9 */
		"      requiredDuringSchedulingIgnoredDuringExecution:\n" /* 10 */
		"        nodeSelectorTerms:\n"                          /* 11 */
		"        - matchExpressions:\n"                         /* 12 */
		"          - {key: a, operator: Inn, values: [x]}\n"   /* 13 */
		"          - {key: b, operator: In}\n"                  /* 14 */
		"          - {key: c, operator: Exists, values: [x]}\n" /* 15 */
		"          - {key: d, operator: Lt, values: [ten]}\n"   /* 16 */
		"          - {key: e, operator: NotIn, values: [y]}\n"  /* 17 */
		"  containers: [{name: c}]\n");
	const struct carve_podspec *ps;

	(void)state;
	tu_assert_error(m, 13, 32, "Pod p: spec.affinity.nodeAffinity."
				   "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
				   "matchExpressions[0].operator: unknown value 'Inn' (did you mean 'In'?");
	tu_assert_error(m, 14, 13, "matchExpressions[1]: operator In needs at least one value");
	tu_assert_error(m, 15, 13, "operator Exists must not have values");
	tu_assert_error(m, 16, 13, "operator Lt needs exactly one integer value");
	assert_int_equal(m->diags.nerrors, 4);
	ps = &m->pods[0].spec;
	assert_int_equal(ps->nterms, 1);
	assert_int_equal(ps->terms[0].n, 1);
	assert_string_equal(ps->terms[0].v[0].key, "e");
	carve_manifests_destroy(m);
}

static void test_unknown_container_field(void **state)
{
	struct carve_manifests *m = load_pod_spec(
		"  containers:\n"             /* 8 */
		"  - name: c\n"               /* 9 */
		"    resource:\n"             /* 10 */
		"      requests: {cpu: 1}\n"  /* 11 */
		"  - name: d\n"               /* 12 */
		"    resources:\n"            /* 13 */
		"      request: {cpu: 1}\n"   /* 14 */
		"  nodeSelectr: {a: b}\n");   /* 15 */

	(void)state;
	tu_assert_error(m, 10, 5, "Pod p: spec.containers[0]: unknown field 'resource' "
				  "(did you mean 'resources'?)");
	tu_assert_error(m, 14, 7, "Pod p: spec.containers[1].resources: unknown field 'request' "
				  "(did you mean 'requests'?)");
	tu_assert_error(m, 15, 3, "Pod p: spec: unknown field 'nodeSelectr' "
				  "(did you mean 'nodeSelector'?)");
	assert_int_equal(m->diags.nerrors, 3);
	/* the pod is kept, without the misspelled requests */
	assert_int_equal(m->npods, 1);
	assert_int_equal(m->pods[0].spec.requests.n, 0);
	carve_manifests_destroy(m);
}

static void test_bad_resources(void **state)
{
	struct carve_manifests *m = load_pod_spec(
		"  containers:\n"                                              /* 8 */
		"  - name: c\n"                                                /* 9 */
		"    resources:\n"                                             /* 10 */
		"      requests: {cpu: '-1', memory: 2Gi, nvidia.com/gpu: 1x}\n" /* 11 */
		"      limits: {memory: 1Gi}\n"                                /* 12 */
		"  - resources: {requests: {cpu: 1}}\n");                      /* 13 */

	(void)state;
	tu_assert_error(m, 11, 18, "spec.containers[0].resources.requests[cpu]: quantity must not be negative");
	tu_assert_error(m, 11, 58, "resources.requests[nvidia.com/gpu]: malformed quantity '1x'");
	tu_assert_error(m, 11, 29, "resources.requests[memory]: request must not exceed its limit");
	tu_assert_error(m, 13, 5, "spec.containers[1]: missing required field 'name'");
	assert_int_equal(m->diags.nerrors, 4);
	/* memory falls back to the limit; the nameless container is dropped */
	assert_int_equal(m->pods[0].spec.ncontainers, 1);
	assert_int_equal(res(&m->pods[0].spec.requests, "memory"), 1073741824000LL);
	assert_int_equal(res(&m->pods[0].spec.requests, "cpu"), -1);
	carve_manifests_destroy(m);
}

static void test_pod_missing_spec(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: v1\n"
					    "kind: Pod\n"
					    "metadata: {name: p}\n"
					    "status: {phase: Pending}\n"
					    "---\n"
					    "apiVersion: v1\n"
					    "kind: Pod\n"
					    "metadata: {name: q}\n"
					    "spec: {}\n");

	(void)state;
	tu_assert_error(m, 1, 1, "Pod p: missing required field 'spec'");
	tu_assert_error(m, 9, 7, "Pod q: spec: missing required field 'containers'");
	assert_int_equal(m->diags.nerrors, 2);
	assert_int_equal(m->npods, 1);
	assert_string_equal(m->pods[0].meta.ns, "default");
	carve_manifests_destroy(m);
}

static void test_job(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: batch/v1\n"
		"kind: Job\n"
		"metadata:\n"
		"  name: train\n"
		"  namespace: ml\n"
		"  labels: {kueue.x-k8s.io/queue-name: team-a}\n"
		"spec:\n"
		"  parallelism: 4\n"
		"  completions: 8\n"
		"  completionMode: Indexed\n"
		"  backoffLimit: 3\n"
		"  suspend: true\n"
		"  ttlSecondsAfterFinished: 60\n"
		"  podFailurePolicy: {rules: []}\n"
		"  template:\n"
		"    metadata:\n"
		"      labels: {app: train}\n"
		"      annotations: {kueue.x-k8s.io/podset-required-topology: rack}\n"
		"    spec:\n"
		"      restartPolicy: Never\n"
		"      containers:\n"
		"      - name: t\n"
		"        image: pytorch\n"
		"        resources:\n"
		"          limits: {nvidia.com/gpu: 8}\n"
		"---\n"
		"apiVersion: batch/v1\n"
		"kind: Job\n"
		"metadata: {name: queue}\n"
		"spec:\n"
		"  parallelism: 3\n"
		"  template: {spec: {containers: [{name: w}]}}\n"
		"---\n"
		"apiVersion: batch/v1\n"
		"kind: Job\n"
		"metadata: {name: one}\n"
		"spec:\n"
		"  template: {spec: {containers: [{name: w}]}}\n");
	const struct carve_mf_job *j;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->njobs, 3);
	j = &m->jobs[0];
	assert_string_equal(j->meta.name, "train");
	assert_string_equal(j->meta.ns, "ml");
	assert_string_equal(kv(&j->meta.labels, "kueue.x-k8s.io/queue-name"), "team-a");
	assert_int_equal(j->parallelism, 4);
	assert_int_equal(j->parallelism_pos.line, 8);
	assert_int_equal(j->parallelism_pos.col, 16);
	assert_int_equal(j->completions, 8);
	assert_string_equal(kv(&j->spec.labels, "app"), "train");
	assert_string_equal(kv(&j->spec.annotations, "kueue.x-k8s.io/podset-required-topology"), "rack");
	assert_int_equal(res(&j->spec.requests, "nvidia.com/gpu"), 8000);
	assert_int_equal(res(&j->spec.limits, "nvidia.com/gpu"), 8000);
	/* a work-queue Job: completions unset, parallelism set */
	assert_int_equal(m->jobs[1].parallelism, 3);
	assert_int_equal(m->jobs[1].completions, 3);
	assert_int_equal(m->jobs[2].parallelism, 1);
	assert_int_equal(m->jobs[2].completions, 1);
	carve_manifests_destroy(m);
}

static void test_job_bad_fields(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: batch/v1\n"
					    "kind: Job\n"
					    "metadata: {name: j}\n"
					    "spec:\n"
					    "  paralelism: 2\n"
					    "  completions: -1\n"
					    "  completionMode: Indexd\n"
					    "---\n"
					    "apiVersion: batch/v1\n"
					    "kind: Job\n"
					    "metadata: {name: k}\n"
					    "spec:\n"
					    "  template:\n"
					    "    spec:\n"
					    "      containers: [{name: c}]\n");

	(void)state;
	tu_assert_error(m, 5, 3, "Job j: spec: unknown field 'paralelism' (did you mean 'parallelism'?)");
	tu_assert_error(m, 6, 16, "spec.completions: -1 is out of range");
	tu_assert_error(m, 7, 19, "unknown value 'Indexd' (did you mean 'Indexed'?");
	tu_assert_error(m, 5, 3, "Job j: spec: missing required field 'template'");
	assert_int_equal(m->diags.nerrors, 4);
	assert_int_equal(m->njobs, 1);
	assert_string_equal(m->jobs[0].meta.name, "k");
	carve_manifests_destroy(m);
}

static void test_generate_name(void **state)
{
	/* Kueue's sample Job has only generateName; so may a Pod.  Kueue's own
	 * objects still need a name.  Errors in metadata name the object. */
	struct carve_manifests *m = tu_load(
		"apiVersion: batch/v1\nkind: Job\n"                      /* 1 */
		"metadata:\n  generateName: sample-job-\n  namespace: team\n"
		"spec:\n  template:\n    spec:\n"                       /* 6 */
		"      containers: [{name: c, image: x}]\n"
		"---\n"
		"apiVersion: v1\nkind: Pod\n"                            /* 11 */
		"metadata: {generateName: p-, labelz: {}}\n"
		"spec: {containers: [{name: c}]}\n"
		"---\n"
		"apiVersion: v1\nkind: Pod\n"                            /* 16 */
		"metadata: {name: named, labelz: {}}\n"
		"spec: {containers: [{name: c}]}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"  /* 21 */
		"metadata: {generateName: lq-, namespace: team}\n"
		"spec: {clusterQueue: cq}\n");

	(void)state;
	tu_assert_error(m, 13, 30, "Pod p-*: metadata: unknown field 'labelz' (did you mean "
			"'labels'?)");
	tu_assert_error(m, 18, 25, "Pod named: metadata: unknown field 'labelz'");
	tu_assert_error(m, 23, 11, "LocalQueue: metadata: missing required field 'name'");
	assert_int_equal(m->diags.n, 3);
	assert_int_equal(m->njobs, 1);
	assert_string_equal(m->jobs[0].meta.name, "sample-job-*");
	assert_true(m->jobs[0].meta.generated);
	assert_int_equal(m->jobs[0].meta.name_pos.line, 4);
	assert_int_equal(m->npods, 2);
	assert_string_equal(m->pods[0].meta.name, "p-*");
	assert_false(m->pods[1].meta.generated);
	assert_int_equal(m->nlqs, 0);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_effective_sum_and_init_max),
		cmocka_unit_test(test_limit_defaults_request),
		cmocka_unit_test(test_sidecars),
		cmocka_unit_test(test_pod_level_and_overhead),
		cmocka_unit_test(test_affinity_and_scheduling_fields),
		cmocka_unit_test(test_bad_expressions),
		cmocka_unit_test(test_unknown_container_field),
		cmocka_unit_test(test_bad_resources),
		cmocka_unit_test(test_pod_missing_spec),
		cmocka_unit_test(test_job),
		cmocka_unit_test(test_job_bad_fields),
		cmocka_unit_test(test_generate_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
