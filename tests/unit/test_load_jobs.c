/*
 * test_load_jobs.c - the kind dispatch (kinds carve does not read, typos of
 * the ones it reads, kind: List and typed lists, server-written status) and
 * the job kinds beside the queues: JobSet and Volcano's batch.volcano.sh Job.
 */
#include "testutil.h"

static void foreign_group_same_kind_is_skipped(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: batch.volcano.sh/v1alpha1\n"
		"kind: CronJob\n"
		"metadata: {name: c, namespace: d}\n"
		"---\n"
		"apiVersion: scheduling.sigs.k8s.io/v1alpha1\n"
		"kind: PodGroup\n"
		"metadata: {name: p, namespace: d}\n"
		"---\n"
		"apiVersion: argoproj.io/v1alpha1\n"
		"kind: Workflow\n"
		"metadata: {name: w}\n");

	(void)state;
	tu_assert_warning(m, 2, 7, "kind CronJob (batch.volcano.sh/v1alpha1) is not read by carve");
	tu_assert_warning(m, 6, 7, "kind PodGroup (scheduling.sigs.k8s.io/v1alpha1) is not read");
	tu_assert_warning(m, 10, 7, "kind Workflow (argoproj.io/v1alpha1) is not read");
	assert_int_equal(m->diags.nerrors, 0);
	assert_int_equal(m->diags.nwarnings, 3);
	carve_manifests_destroy(m);
}

static void typos_of_read_kinds_are_errors(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: kueue.x-k8s.io/v1beta2\n"
		"kind: clusterqueue\n"
		"metadata: {name: x}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.ioo/v1beta2\n"
		"kind: ClusterQueue\n"
		"metadata: {name: y}\n"
		"---\n"
		"apiVersion: v1\n"
		"kind: Pods\n"
		"metadata: {name: z}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\n"
		"kind: AdmissionCheck\n"
		"metadata: {name: a}\n");

	(void)state;
	tu_assert_error(m, 2, 7, "unknown kind 'clusterqueue' (did you mean 'ClusterQueue'?)");
	tu_assert_error(m, 5, 13, "ClusterQueue: unknown API group in apiVersion "
			"'kueue.x-k8s.ioo/v1beta2' (did you mean 'kueue.x-k8s.io/v1beta1'?)");
	tu_assert_error(m, 10, 7, "unknown kind 'Pods' (did you mean 'Pod'?)");
	tu_assert_warning(m, 14, 7, "kind AdmissionCheck (kueue.x-k8s.io/v1beta2) is not read");
	assert_int_equal(m->diags.nerrors, 3);
	carve_manifests_destroy(m);
}

static void list_items_read_in_place(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\n"
		"kind: List\n"
		"items:\n"
		"- apiVersion: kueue.x-k8s.io/v1beta2\n"
		"  kind: ResourceFlavor\n"
		"  metadata: {name: f}\n"
		"- apiVersion: v1\n"
		"  kind: Secret\n"
		"  metadata: {name: s}\n"
		"- apiVersion: kueue.x-k8s.io/v1beta2\n"
		"  kind: ClusterQueue\n"
		"  metadata: {name: q}\n"
		"  spec: {bogus: 1}\n"
		"---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\n"
		"kind: LocalQueueList\n"
		"items:\n"
		"- metadata: {name: lq, namespace: ns}\n"
		"  spec: {clusterQueue: q}\n");

	(void)state;
	assert_int_equal(m->nflavors, 1);
	assert_string_equal(m->flavors[0].meta.name, "f");
	tu_assert_warning(m, 8, 9, "kind Secret (v1) is not read by carve");
	tu_assert_error(m, 13, 10, "ClusterQueue q: spec: unknown field 'bogus'");
	assert_int_equal(m->nlqs, 1);
	assert_string_equal(m->lqs[0].cluster_queue, "q");
	assert_int_equal(m->lqs[0].meta.pos.line, 18);
	assert_int_equal(m->ndocs, 4);
	carve_manifests_destroy(m);
}

static void list_needs_items(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: v1\nkind: List\nitems: {a: 1}\n");

	(void)state;
	tu_assert_error(m, 3, 8, "List: 'items' must be a list of objects");
	carve_manifests_destroy(m);
}

static void status_fields_are_servers(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\n"
		"kind: Node\n"
		"metadata: {name: n}\n"
		"status:\n"
		"  capacity: {cpu: '4'}\n"
		"  declaredFeatures: [InPlacePodVerticalScaling]\n"
		"  somethingNewer: {x: 1}\n"
		"---\n"
		"apiVersion: v1\n"
		"kind: Node\n"
		"metadata: {name: m}\n"
		"spec: {bogus: 1}\n");

	(void)state;
	assert_int_equal(m->nnodes, 2);
	tu_assert_error(m, 12, 8, "unknown field 'bogus'");
	assert_int_equal(m->diags.nerrors, 1);
	carve_manifests_destroy(m);
}

static void scheduling_group_warns(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\n"
		"kind: Pod\n"
		"metadata: {name: p, namespace: d}\n"
		"spec:\n"
		"  schedulingGroup: {podGroupName: g}\n"
		"  containers: [{name: c}]\n");

	(void)state;
	assert_int_equal(m->npods, 1);
	tu_assert_warning(m, 5, 20, "spec.schedulingGroup: a scheduling.k8s.io PodGroup is not "
			  "read by carve");
	assert_int_equal(m->diags.nerrors, 0);
	carve_manifests_destroy(m);
}

static void jobset_read(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: jobset.x-k8s.io/v1alpha2\n"
		"kind: JobSet\n"
		"metadata: {name: js, namespace: d}\n"
		"spec:\n"
		"  replicatedJobs:\n"
		"  - name: workers\n"
		"    replicas: 3\n"
		"    template:\n"
		"      spec:\n"
		"        parallelism: 2\n"
		"        template:\n"
		"          spec:\n"
		"            containers:\n"
		"            - {name: c, resources: {requests: {nvidia.com/gpu: 1}}}\n"
		"  - name: workers\n"
		"    template: {spec: {template: {spec: {containers: [{name: c}]}}}}\n"
		"  - name: bad\n"
		"    templat: {}\n");

	(void)state;
	assert_int_equal(m->njobsets, 1);
	assert_int_equal(m->jobsets[0].n, 1);
	assert_int_equal(m->jobsets[0].v[0].replicas, 3);
	assert_int_equal(m->jobsets[0].v[0].parallelism, 2);
	assert_int_equal(m->jobsets[0].v[0].completions, 2);
	assert_int_equal(m->jobsets[0].v[0].spec.requests.n, 1);
	tu_assert_error(m, 15, 5, "replicatedJob 'workers' is defined twice");
	tu_assert_error(m, 18, 5, "unknown field 'templat' (did you mean 'template'?)");
	carve_manifests_destroy(m);
}

static void volcano_job_read(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: batch.volcano.sh/v1alpha1\n"
		"kind: Job\n"
		"metadata: {name: j, namespace: d}\n"
		"spec:\n"
		"  minAvailable: 2\n"
		"  tasks:\n"
		"  - replicas: 2\n"
		"    minAvailable: 3\n"
		"    template: {spec: {containers: [{name: c}]}}\n"
		"  - template: {spec: {containers: [{name: c}]}}\n");

	(void)state;
	assert_int_equal(m->nvcjobs, 1);
	assert_int_equal(m->njobs, 0);
	assert_string_equal(m->vcjobs[0].queue, "default");
	assert_true(m->vcjobs[0].has_min_available);
	assert_int_equal(m->vcjobs[0].ntasks, 1);
	assert_string_equal(m->vcjobs[0].tasks[0].name, "default1");
	assert_int_equal(m->vcjobs[0].tasks[0].replicas, 1);
	tu_assert_error(m, 7, 5, "minAvailable 3 is more than replicas 2");
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(foreign_group_same_kind_is_skipped),
		cmocka_unit_test(typos_of_read_kinds_are_errors),
		cmocka_unit_test(list_items_read_in_place),
		cmocka_unit_test(list_needs_items),
		cmocka_unit_test(status_fields_are_servers),
		cmocka_unit_test(scheduling_group_warns),
		cmocka_unit_test(jobset_read),
		cmocka_unit_test(volcano_job_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
