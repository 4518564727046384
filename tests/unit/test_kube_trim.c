/*
 * test_kube_trim.c - kube_trim (src/kube/trim.h): what the scheduler keeps
 * of a stored object.  The plan built from trimmed pods equals the plan
 * built from the pods as the API server returns them (fixtures
 * tests/data/plan/cluster.yaml plus pods carrying every field trimmed),
 * and the trimmed pods hold exactly what trim.h promises.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "carve/plan.h"
#include "trim.h"

#define NOW 1767225660 /* a minute after the pods' creation */

/* A pod as the API server returns it: managedFields, env, probes, volumes,
 * a full status.  i < 4: one of the gang "train" in ns-a (one GPU each);
 * else a pod of ns-b asking for more GPUs than its queue holds. */
static json_t *full_pod(int i)
{
	char name[32], text[4096];
	json_t *pod;
	json_error_t e;

	snprintf(name, sizeof(name), i < 4 ? "train-%d" : "big-%d", i);
	snprintf(text, sizeof(text),
		 "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {"
		 "\"namespace\": \"%s\", \"name\": \"%s\", \"uid\": \"u-%s\", \"resourceVersion\": \"7\","
		 "\"creationTimestamp\": \"2026-01-01T00:00:00Z\","
		 "\"labels\": {\"kueue.x-k8s.io/queue-name\": \"lq\"%s},"
		 "\"annotations\": {\"kueue.x-k8s.io/pod-group-total-count\": \"4\"},"
		 "\"managedFields\": [{\"manager\": \"kubectl\", \"operation\": \"Update\","
		 " \"fieldsType\": \"FieldsV1\", \"fieldsV1\": {\"f:spec\": {}}}]},"
		 "\"spec\": {\"schedulerName\": \"carve\", %s"
		 "\"volumes\": [{\"name\": \"data\", \"emptyDir\": {}}],"
		 "\"imagePullSecrets\": [{\"name\": \"regcred\"}],"
		 "\"initContainers\": [{\"name\": \"init\", \"image\": \"busybox\", \"command\": [\"true\"],"
		 " \"resources\": {\"requests\": {\"cpu\": \"1\"}}}],"
		 "\"containers\": [{\"name\": \"c\", \"image\": \"trainer:1\", \"command\": [\"python3\"],"
		 " \"args\": [\"train.py\"], \"env\": [{\"name\": \"A\", \"value\": \"1\"}],"
		 " \"envFrom\": [{\"configMapRef\": {\"name\": \"cfg\"}}], \"workingDir\": \"/w\","
		 " \"volumeMounts\": [{\"name\": \"data\", \"mountPath\": \"/data\"}],"
		 " \"imagePullPolicy\": \"Always\","
		 " \"livenessProbe\": {\"exec\": {\"command\": [\"true\"]}},"
		 " \"readinessProbe\": {\"exec\": {\"command\": [\"true\"]}},"
		 " \"resources\": {\"requests\": {\"cpu\": \"8\", \"memory\": \"64Gi\","
		 " \"nvidia.com/gpu\": \"%d\"}}}]},"
		 "\"status\": {\"phase\": \"Pending\", \"qosClass\": \"Burstable\","
		 " \"nominatedNodeName\": \"\","
		 " \"conditions\": [{\"type\": \"Initialized\", \"status\": \"True\"},"
		 " {\"type\": \"PodScheduled\", \"status\": \"False\", \"reason\": \"Unschedulable\","
		 " \"message\": \"waiting\"}]}}",
		 i < 4 ? "ns-a" : "ns-b", name, name,
		 i < 4 ? ", \"kueue.x-k8s.io/pod-group-name\": \"train\"" : "",
		 i < 4 ? "\"nodeSelector\": {\"carve.dev/pool\": \"train\"}," : "", i < 4 ? 1 : 5);
	pod = json_loads(text, 0, &e);
	if (!pod)
		fprintf(stderr, "pod %d: %s at %d\n", i, e.text, e.position);
	assert_non_null(pod);
	return pod;
}

static struct carve_plan *plan_of(bool trim)
{
	const char *dir = getenv("CARVE_TEST_DATA");
	struct carve_manifests *m = carve_manifests_create();
	struct carve_plan_opts o;
	struct carve_plan *p = NULL;
	struct carve_error err = {0};
	char path[1024], src[64];
	int i;

	assert_non_null(dir);
	assert_non_null(m);
	snprintf(path, sizeof(path), "%s/plan/cluster.yaml", dir);
	assert_int_equal(carve_manifests_load_path(m, path), 0);
	for (i = 0; i < 5; i++) {
		json_t *pod = full_pod(i);

		if (trim)
			kube_trim(pod, true);
		snprintf(src, sizeof(src), "Pod %d", i);
		assert_int_equal(carve_manifests_add_json(m, src, pod), 0);
		json_decref(pod);
	}
	assert_int_equal(m->diags.nerrors, 0);
	memset(&o, 0, sizeof(o));
	o.queues = CARVE_QUEUES_CARVE;
	o.now = NOW;
	assert_int_equal(carve_plan_build(m, &o, NULL, &p, &err), 0);
	assert_non_null(p);
	carve_manifests_destroy(m);
	return p;
}

static bool eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void test_same_plan(void **state)
{
	struct carve_plan *a = plan_of(false), *b = plan_of(true);
	size_t i;

	(void)state;
	assert_int_equal(a->nbinds, 4); /* the gang, whole */
	assert_int_equal(a->npending, 1);
	assert_int_equal(a->nbinds, b->nbinds);
	assert_int_equal(a->npending, b->npending);
	assert_int_equal(a->nvictims, b->nvictims);
	assert_int_equal(a->ncqs, b->ncqs);
	for (i = 0; i < a->nbinds; i++) {
		assert_string_equal(a->binds[i].pod.name, b->binds[i].pod.name);
		assert_string_equal(a->binds[i].node, b->binds[i].node);
		assert_true(eq(a->binds[i].devices, b->binds[i].devices));
		assert_true(eq(a->binds[i].flavors, b->binds[i].flavors));
	}
	for (i = 0; i < a->npending; i++) {
		assert_string_equal(a->pending[i].pod.name, b->pending[i].pod.name);
		assert_true(eq(a->pending[i].message, b->pending[i].message));
	}
	carve_plan_free(a);
	carve_plan_free(b);
}

static void test_what_is_kept(void **state)
{
	json_t *pod = full_pod(0), *c, *st;

	(void)state;
	kube_trim(pod, true);
	assert_null(json_object_get(json_object_get(pod, "metadata"), "managedFields"));
	assert_non_null(json_object_get(json_object_get(pod, "metadata"), "labels"));
	assert_null(json_object_get(json_object_get(pod, "spec"), "volumes"));
	assert_null(json_object_get(json_object_get(pod, "spec"), "imagePullSecrets"));
	c = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
	assert_null(json_object_get(c, "env"));
	assert_null(json_object_get(c, "command"));
	assert_null(json_object_get(c, "volumeMounts"));
	assert_null(json_object_get(c, "livenessProbe"));
	assert_non_null(json_object_get(c, "resources"));
	assert_non_null(json_object_get(c, "image"));
	c = json_array_get(json_object_get(json_object_get(pod, "spec"), "initContainers"), 0);
	assert_null(json_object_get(c, "command"));
	assert_non_null(json_object_get(c, "resources"));
	st = json_object_get(pod, "status");
	assert_string_equal(json_string_value(json_object_get(st, "phase")), "Pending");
	assert_non_null(json_object_get(st, "nominatedNodeName"));
	assert_null(json_object_get(st, "qosClass"));
	assert_int_equal(json_array_size(json_object_get(st, "conditions")), 1);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(st, "conditions"), 0), "type")),
			    "PodScheduled");
	json_decref(pod);
	/* another kind: only managedFields goes; odd shapes are left alone */
	pod = json_pack("{s:{s:s, s:[]}, s:{s:[{s:s}]}}", "metadata", "name", "n", "managedFields",
			"spec", "volumes", "name", "v");
	kube_trim(pod, false);
	assert_null(json_object_get(json_object_get(pod, "metadata"), "managedFields"));
	assert_non_null(json_object_get(json_object_get(pod, "spec"), "volumes"));
	json_decref(pod);
	pod = json_pack("{s:s, s:[]}", "spec", "x", "status");
	kube_trim(pod, true);
	json_decref(pod);
	kube_trim(NULL, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_plan),
		cmocka_unit_test(test_what_is_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
