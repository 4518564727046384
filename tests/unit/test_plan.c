/*
 * test_plan.c - the scheduler's decision step (plan.h) on API objects:
 * fixtures under tests/data/plan/ (a cluster, then pods in every state a
 * cluster holds them), loaded as YAML, and pods added as the API server
 * returns them (carve_manifests_add_json).
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

#include "carve/devices.h"
#include "carve/plan.h"

/* 2026-01-01T00:01:00Z: a minute after the fixtures' pods were created. */
#define NOW 1767225660

static struct carve_manifests *load(const char *first, ...)
{
	const char *dir = getenv("CARVE_TEST_DATA");
	struct carve_manifests *m = carve_manifests_create();
	const char *f;
	va_list ap;
	char path[1024];

	assert_non_null(dir);
	assert_non_null(m);
	va_start(ap, first);
	for (f = first; f; f = va_arg(ap, const char *)) {
		snprintf(path, sizeof(path), "%s/plan/%s.yaml", dir, f);
		assert_int_equal(carve_manifests_load_path(m, path), 0);
	}
	va_end(ap);
	return m;
}

static struct carve_plan *plan_of(struct carve_manifests *m, enum carve_queues_mode q)
{
	struct carve_plan_opts o;
	struct carve_plan *p = NULL;
	struct carve_error err = {0};

	memset(&o, 0, sizeof(o));
	o.queues = q;
	o.now = NOW;
	assert_int_equal(carve_plan_build(m, &o, NULL, &p, &err), 0);
	assert_non_null(p);
	return p;
}

/* No errors in the diagnostics (warnings allowed). */
static void no_errors(const struct carve_manifests *m)
{
	if (m->diags.nerrors)
		carve_diags_print(&m->diags, stderr);
	assert_int_equal(m->diags.nerrors, 0);
}

static const struct carve_plan_bind *bind_of(const struct carve_plan *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->nbinds; i++)
		if (!strcmp(p->binds[i].pod.name, name))
			return &p->binds[i];
	return NULL;
}

static const struct carve_plan_cq *cq_of(const struct carve_plan *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->ncqs; i++)
		if (!strcmp(p->cqs[i].name, name))
			return &p->cqs[i];
	return NULL;
}

static int64_t usage_of(const struct carve_plan_cq *q, const char *res)
{
	size_t i;

	for (i = 0; i < q->nusage; i++)
		if (!strcmp(q->usage[i].resource, res))
			return q->usage[i].total;
	return -1;
}

/* Extra metadata fields of the next add_pod() (",\"k\": v"), then "". */
static const char *meta_extra = "";

/* Adds one pod as the API server returns it: namespace, name, labels and
 * annotations (JSON object bodies), spec.nodeName (NULL: waiting), GPUs
 * and CPUs asked for, created at minute `minute` of 2026-01-01. */
static void add_pod(struct carve_manifests *m, const char *ns, const char *name,
		    const char *labels, const char *annots, const char *node, const char *gpus,
		    const char *cpus, int minute)
{
	char buf[4096];
	json_error_t jerr;
	json_t *j;

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"namespace\": "
		 "\"%s\", \"name\": \"%s\", \"uid\": \"u-%s\", \"labels\": {%s}, "
		 "\"annotations\": {%s}, \"creationTimestamp\": \"2026-01-01T00:%02d:00Z\"%s}, "
		 "\"spec\": {\"schedulerName\": \"carve\"%s%s%s, \"nodeSelector\": "
		 "{\"carve.dev/pool\": \"train\"}, \"containers\": [{\"name\": \"c\", "
		 "\"resources\": {\"requests\": {\"cpu\": \"%s\", \"memory\": \"1Gi\", "
		 "\"nvidia.com/gpu\": \"%s\"}}}]}, \"status\": {\"phase\": \"%s\"}}",
		 ns, name, name, labels, annots, minute, meta_extra, node ? ", \"nodeName\": \"" : "",
		 node ? node : "", node ? "\"" : "", cpus, gpus, node ? "Running" : "Pending");
	meta_extra = "";
	j = json_loads(buf, 0, &jerr);
	if (!j)
		fprintf(stderr, "%s: %s\n", buf, jerr.text);
	assert_non_null(j);
	assert_int_equal(carve_manifests_add_json(m, "Pod", j), 0);
	json_decref(j);
}

static const struct carve_plan_pending *pending_of(const struct carve_plan *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->npending; i++)
		if (!strcmp(p->pending[i].pod.name, name))
			return &p->pending[i];
	return NULL;
}

/* The one device of a bind, parsed. */
static struct carve_devref dev_of(const struct carve_plan_bind *b)
{
	struct carve_devref d[CARVE_DEVREF_MAX];
	struct carve_error err = {0};

	assert_int_equal(carve_devices_parse(b->devices, d, CARVE_DEVREF_MAX, &err), 1);
	return d[0];
}

/* Asserts no two binds share a (node, GPU) and none takes one of the
 * n (node, GPU) pairs in held. */
static void distinct_gpus(const struct carve_plan *p, const char *const *held_node,
			  const int *held_gpu, size_t n)
{
	size_t i, k;

	for (i = 0; i < p->nbinds; i++) {
		struct carve_devref a = dev_of(&p->binds[i]);

		for (k = i + 1; k < p->nbinds; k++) {
			struct carve_devref b = dev_of(&p->binds[k]);

			assert_false(!strcmp(p->binds[i].node, p->binds[k].node) && a.gpu == b.gpu);
		}
		for (k = 0; k < n; k++)
			assert_false(!strcmp(p->binds[i].node, held_node[k]) && a.gpu == held_gpu[k]);
	}
}

static void test_gang_whole(void **state)
{
	struct carve_manifests *m = load("cluster", "gang", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);
	const struct carve_plan_cq *q;
	size_t i;

	(void)state;
	no_errors(m);
	assert_int_equal(p->pods_seen, 4);
	assert_int_equal(p->ngangs, 1);
	assert_string_equal(p->gangs[0].workload, "ns-a/pod-group:train");
	assert_string_equal(p->gangs[0].cq, "team-a");
	assert_int_equal(p->gangs[0].first, 0);
	assert_int_equal(p->gangs[0].n, 4);
	assert_int_equal(p->nbinds, 4);
	assert_int_equal(p->npending, 0);
	for (i = 0; i < 4; i++) {
		char name[16], uid[16];

		snprintf(name, sizeof(name), "train-%zu", i);
		snprintf(uid, sizeof(uid), "u-train-%zu", i);
		assert_non_null(bind_of(p, name));
		assert_string_equal(bind_of(p, name)->pod.uid, uid);
		assert_string_equal(bind_of(p, name)->pod.ns, "ns-a");
		assert_string_equal(p->binds[i].node, p->binds[0].node); /* one node: binpack */
		assert_true(!strncmp(p->binds[i].node, "train-", 6));
		assert_string_equal(p->binds[i].flavors, "cpu=any,memory=any,nvidia.com/gpu=any");
		assert_string_equal(p->binds[i].workload, "ns-a/pod-group:train");
		assert_int_equal(p->binds[i].gang, 0);
		assert_int_equal(dev_of(&p->binds[i]).mig_start, -1);
		assert_int_equal(dev_of(&p->binds[i]).replica, -1);
		assert_int_equal(dev_of(&p->binds[i]).milli, 0);
	}
	distinct_gpus(p, NULL, NULL, 0);
	q = cq_of(p, "team-a");
	assert_non_null(q);
	assert_string_equal(q->cohort, "all");
	assert_int_equal(q->admitted, 1);
	assert_int_equal(q->pending, 0);
	assert_int_equal(usage_of(q, "nvidia.com/gpu"), 4000);
	assert_int_equal(usage_of(q, "cpu"), 32000);
	assert_int_equal(p->nlqs, 2);
	assert_string_equal(p->lqs[0].ns, "ns-a");
	assert_int_equal(p->lqs[0].admitted, 1);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static void test_mig_slots(void **state)
{
	struct carve_manifests *m = load("cluster", "mig", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);
	const struct carve_plan_bind *a, *b;

	(void)state;
	no_errors(m);
	assert_int_equal(p->nbinds, 2);
	assert_int_equal(p->ngangs, 2); /* one workload per pod */
	a = bind_of(p, "infer-0");
	b = bind_of(p, "infer-1");
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a->node, "mig-0");
	assert_string_equal(b->node, "mig-0");
	/* 3g.40gb on an A100-80GB starts at memory slice 0 or 4 only */
	assert_string_equal(a->devices, "gpu=0,mig=3g.40gb@0");
	assert_string_equal(b->devices, "gpu=0,mig=3g.40gb@4");
	assert_string_equal(a->flavors, "cpu=any,memory=any,nvidia.com/mig-3g.40gb=any");
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static struct carve_plan *plan_dyn(struct carve_manifests *m, bool dynamic)
{
	struct carve_plan_opts o;
	struct carve_plan *p = NULL;
	struct carve_error err = {0};

	memset(&o, 0, sizeof(o));
	o.queues = CARVE_QUEUES_NONE;
	o.now = NOW;
	o.mig_dynamic = dynamic;
	assert_int_equal(carve_plan_build(m, &o, NULL, &p, &err), 0);
	assert_non_null(p);
	return p;
}

/* Dynamic MIG: a pod no instance fits waits for the layout the plan wants
 * (carve.dev/mig-layout; the old entry for GPU 1, which the one-GPU node
 * lacks, is dropped rather than kept for the agent to refuse); once the node reports
 * it in carve.dev/mig-current, the pod is bound to the new instance. */
static void test_mig_dynamic(void **state)
{
	struct carve_manifests *m = load("migdyn", NULL);
	struct carve_plan *p = plan_dyn(m, false);
	size_t i;

	(void)state;
	no_errors(m);
	/* Off: the 1g.10gb pod fits nowhere, nothing is asked of the node. */
	assert_int_equal(p->nbinds, 0);
	assert_int_equal(p->nlayouts, 0);
	assert_int_equal(p->npending, 1);
	carve_plan_free(p);

	p = plan_dyn(m, true);
	assert_int_equal(p->nbinds, 0);
	assert_int_equal(p->nlayouts, 1);
	assert_string_equal(p->layouts[0].node, "dyn-0");
	assert_string_equal(p->layouts[0].layout,
			    "0=1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,1g.10gb@4,"
			    "1g.10gb@5,1g.10gb@6");
	assert_non_null(strstr(p->layouts[0].message, "ns-a/small-0"));
	assert_int_equal(p->npending, 1);
	assert_non_null(strstr(p->pending[0].message, "waiting for node dyn-0 to apply a new "
				"MIG layout on GPU 0"));
	carve_plan_free(p);

	/* The agent applied it: the annotation shows the new layout. */
	for (i = 0; i < m->nnodes; i++) {
		struct carve_kvlist *a = &m->nodes[i].meta.annotations;
		size_t k;

		for (k = 0; k < a->n; k++)
			if (!strcmp(a->v[k].key, "carve.dev/mig-current"))
				a->v[k].value = "0=1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,"
						"1g.10gb@4,1g.10gb@5,1g.10gb@6";
	}
	p = plan_dyn(m, true);
	no_errors(m);
	assert_int_equal(p->nlayouts, 0);
	assert_int_equal(p->nbinds, 1);
	assert_string_equal(p->binds[0].node, "dyn-0");
	assert_string_equal(p->binds[0].devices, "gpu=0,mig=1g.10gb@0");
	carve_plan_free(p);

	/* A bad current layout is an error at the Node; the GPU is then read
	 * from its resources as before. */
	for (i = 0; i < m->nnodes; i++) {
		struct carve_kvlist *a = &m->nodes[i].meta.annotations;
		size_t k;

		for (k = 0; k < a->n; k++)
			if (!strcmp(a->v[k].key, "carve.dev/mig-current"))
				a->v[k].value = "0=3g.40gb@1";
	}
	p = plan_dyn(m, false);
	assert_true(carve_diags_find(&m->diags, "annotation carve.dev/mig-current: GPU 0: "
				     "3g.40gb@1 is not a legal placement") >= 0);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static void test_notebook_replicas(void **state)
{
	struct carve_manifests *m = load("cluster", "notebooks", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);
	int seen = 0;
	size_t i;

	(void)state;
	no_errors(m);
	assert_int_equal(p->nbinds, 3);
	for (i = 0; i < 3; i++) {
		struct carve_devref d = dev_of(&p->binds[i]);

		assert_string_equal(p->binds[i].node, "dev-0");
		assert_int_equal(d.gpu, 0);
		assert_in_range(d.replica, 0, 3);
		assert_false(seen & (1 << d.replica));
		seen |= 1 << d.replica;
	}
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static void test_fraction(void **state)
{
	struct carve_manifests *m = load("cluster", "fraction", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);
	struct carve_devref d;

	(void)state;
	no_errors(m);
	assert_int_equal(p->nbinds, 1);
	assert_string_equal(p->binds[0].node, "frac-0");
	d = dev_of(&p->binds[0]);
	assert_int_equal(d.gpu, 0);
	assert_int_equal(d.milli, 500);
	assert_string_equal(p->binds[0].flavors, "cpu=any,memory=any");
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static void test_over_quota(void **state)
{
	struct carve_manifests *m = load("cluster", "overquota", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);
	size_t i;

	(void)state;
	no_errors(m);
	assert_int_equal(p->nbinds, 0);
	assert_int_equal(p->npending, 4);
	for (i = 0; i < 4; i++) {
		assert_string_equal(p->pending[i].reason, "Unschedulable");
		assert_string_equal(p->pending[i].workload, "ns-b/pod-group:big");
		assert_non_null(strstr(p->pending[i].message,
				       "insufficient quota for nvidia.com/gpu in flavor any"));
	}
	assert_int_equal(cq_of(p, "team-b")->pending, 1);
	assert_int_equal(cq_of(p, "team-b")->admitted, 0);
	assert_int_equal(p->lqs[1].pending, 1);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static void test_preemption(void **state)
{
	struct carve_manifests *m = load("cluster", "preempt", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);
	size_t i;

	(void)state;
	no_errors(m);
	/* the preemptor waits for its victims' pods to go: nothing bound now */
	assert_int_equal(p->nbinds, 0);
	assert_int_equal(p->nvictims, 4);
	for (i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "old-%zu", i);
		assert_string_equal(p->victims[i].pod.name, name);
		assert_string_equal(p->victims[i].workload, "ns-a/pod-group:old");
		assert_string_equal(p->victims[i].preemptor, "ns-a/urgent");
		assert_string_equal(p->victims[i].reason, "InClusterQueue");
		assert_non_null(strstr(p->victims[i].message, "ns-a/urgent"));
	}
	assert_int_equal(p->npending, 1);
	assert_string_equal(p->pending[0].pod.name, "urgent");
	assert_int_equal(p->nnominate, 1);
	assert_string_equal(p->nominate[0].pod.name, "urgent");
	assert_string_equal(p->nominate[0].node, "train-0");
	assert_int_equal(cq_of(p, "team-a")->admitted, 1);
	assert_int_equal(cq_of(p, "team-a")->pending, 1);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static void test_foreign_pods_hold(void **state)
{
	struct carve_manifests *m = load("cluster", "foreign", "gang", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);
	size_t i;

	(void)state;
	no_errors(m);
	assert_int_equal(p->pods_seen, 4); /* the other scheduler's pods are not carve's */
	assert_int_equal(p->nbinds, 0);
	assert_int_equal(p->npending, 4);
	for (i = 0; i < 4; i++)
		assert_non_null(strstr(p->pending[i].message, "no placement"));
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* Pod b of a plan as the API server returns it once bound. */
static json_t *bound_pod_json(const struct carve_plan_bind *b)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s}, "
			 "s:s}, s:{s:s, s:s, s:{s:s}, s:[{s:s, s:{s:{s:s, s:s, s:s}}}]}, "
			 "s:{s:s}}",
			 "apiVersion", "v1", "kind", "Pod",
			 "metadata", "namespace", b->pod.ns, "name", b->pod.name, "uid", b->pod.uid,
			 "labels", "kueue.x-k8s.io/queue-name", "lq",
			 "kueue.x-k8s.io/pod-group-name", "train",
			 "annotations", "kueue.x-k8s.io/pod-group-total-count", "4",
			 CARVE_DEVICES_ANNOTATION, b->devices, CARVE_FLAVORS_ANNOTATION, b->flavors,
			 "creationTimestamp", "2026-01-01T00:00:00Z",
			 "spec", "schedulerName", "carve", "nodeName", b->node,
			 "nodeSelector", "carve.dev/pool", "train",
			 "containers", "name", "c", "resources", "requests", "cpu", "8",
			 "memory", "64Gi", "nvidia.com/gpu", "1",
			 "status", "phase", "Running");
}

/* After a restart: the plan over the pods it bound (their annotations
 * read back through carve_manifests_add_json) binds nothing again, still
 * charges their quota, and gives a new pod (team-b's) a GPU none of them
 * holds. */
static void test_restart(void **state)
{
	struct carve_manifests *m = load("cluster", "gang", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE), *q;
	struct carve_manifests *m2 = load("cluster", NULL);
	const char *nodes[4];
	int gpus[4];
	json_t *extra;
	size_t i;

	(void)state;
	assert_int_equal(p->nbinds, 4);
	for (i = 0; i < 4; i++) {
		json_t *j = bound_pod_json(&p->binds[i]);

		assert_non_null(j);
		assert_int_equal(carve_manifests_add_json(m2, "Pod", j), 0);
		json_decref(j);
		nodes[i] = p->binds[i].node;
		gpus[i] = dev_of(&p->binds[i]).gpu;
	}
	extra = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s}}, s:{s:s, s:{s:s}, "
			  "s:[{s:s, s:{s:{s:s}}}]}, s:{s:s}}",
			  "apiVersion", "v1", "kind", "Pod",
			  "metadata", "namespace", "ns-b", "name", "extra", "uid", "u-extra",
			  "labels", "kueue.x-k8s.io/queue-name", "lq",
			  "spec", "schedulerName", "carve", "nodeSelector", "carve.dev/pool", "train",
			  "containers", "name", "c", "resources", "requests", "nvidia.com/gpu", "1",
			  "status", "phase", "Pending");
	assert_non_null(extra);
	assert_int_equal(carve_manifests_add_json(m2, "Pod ns-b/extra", extra), 0);
	json_decref(extra);
	q = plan_of(m2, CARVE_QUEUES_CARVE);
	no_errors(m2);
	assert_int_equal(q->pods_seen, 1);
	assert_int_equal(q->nbinds, 1);
	assert_string_equal(q->binds[0].pod.name, "extra");
	assert_int_equal(q->nreleases, 0);
	assert_int_equal(q->nvictims, 0);
	assert_int_equal(q->npending, 0);
	distinct_gpus(q, nodes, gpus, 4);
	assert_int_equal(usage_of(cq_of(q, "team-a"), "nvidia.com/gpu"), 4000);
	assert_int_equal(cq_of(q, "team-a")->admitted, 1);
	assert_int_equal(usage_of(cq_of(q, "team-b"), "nvidia.com/gpu"), 1000);
	carve_plan_free(q);
	carve_plan_free(p);
	carve_manifests_destroy(m2);
	carve_manifests_destroy(m);
}

static void test_halfbound_completed(void **state)
{
	static const char *const held_node[2] = {"train-0", "train-0"};
	static const int held_gpu[2] = {0, 1};
	struct carve_manifests *m = load("cluster", "halfbound", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);

	(void)state;
	no_errors(m);
	assert_int_equal(p->nreleases, 0);
	assert_int_equal(p->npending, 0);
	assert_int_equal(p->ngangs, 1);
	assert_int_equal(p->gangs[0].n, 2);
	assert_int_equal(p->nbinds, 2);
	assert_non_null(bind_of(p, "train-2"));
	assert_non_null(bind_of(p, "train-3"));
	distinct_gpus(p, held_node, held_gpu, 2);
	/* the bound pods keep GPUs 0 and 1 of train-0: the rest of the gang
	 * joins them there */
	assert_string_equal(bind_of(p, "train-2")->node, "train-0");
	assert_string_equal(bind_of(p, "train-3")->node, "train-0");
	assert_int_equal(usage_of(cq_of(p, "team-a"), "nvidia.com/gpu"), 4000);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static void test_halfbound_released(void **state)
{
	struct carve_manifests *m = load("cluster", "halfbound", "halfbound-blocked", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);
	size_t i;

	(void)state;
	no_errors(m);
	assert_int_equal(p->nbinds, 0);
	assert_int_equal(p->nreleases, 2);
	assert_string_equal(p->releases[0].pod.name, "train-0");
	assert_string_equal(p->releases[1].pod.name, "train-1");
	for (i = 0; i < 2; i++) {
		assert_string_equal(p->releases[i].workload, "ns-a/pod-group:train");
		assert_non_null(strstr(p->releases[i].message, "ns-a/pod-group:train"));
	}
	assert_int_equal(p->npending, 2);
	assert_string_equal(p->pending[0].pod.name, "train-2");
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static void test_queues_none(void **state)
{
	struct carve_manifests *m = load("cluster", "none", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_NONE);

	(void)state;
	no_errors(m);
	assert_int_equal(p->pods_seen, 2); /* "other" is default-scheduler's */
	assert_int_equal(p->nbinds, 2);
	assert_null(bind_of(p, "other"));
	assert_string_equal(bind_of(p, "w-0")->flavors, "");
	assert_string_equal(bind_of(p, "w-1")->flavors, "");
	distinct_gpus(p, NULL, NULL, 0);
	assert_int_equal(p->ncqs, 0);
	assert_int_equal(p->nlqs, 0);
	carve_plan_free(p);
	/* the same pods with queues: they name none, so they wait, saying why */
	p = plan_of(m, CARVE_QUEUES_CARVE);
	assert_int_equal(p->nbinds, 0);
	assert_int_equal(p->npending, 2);
	assert_non_null(strstr(p->pending[0].message, "kueue.x-k8s.io/queue-name"));
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static void test_impossible_request(void **state)
{
	struct carve_manifests *m = load("cluster", "impossible", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);
	size_t i;
	bool named = false;

	(void)state;
	for (i = 0; i < m->diags.n; i++)
		if (m->diags.v[i].sev == CARVE_SEV_ERROR && strstr(m->diags.v[i].msg, "Pod ns-a/bad") &&
		    strstr(m->diags.v[i].msg, "nvidia.com/mig-9g.99gb"))
			named = true;
	assert_true(named);
	assert_int_equal(p->nbinds, 1);
	assert_string_equal(p->binds[0].pod.name, "good");
	assert_int_equal(p->npending, 1);
	assert_string_equal(p->pending[0].pod.name, "bad");
	assert_non_null(strstr(p->pending[0].message, "9g.99gb"));
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static void test_deterministic(void **state)
{
	struct carve_manifests *m = load("cluster", "gang", "mig", "notebooks", "fraction",
					 "overquota", NULL);
	struct carve_plan *a = plan_of(m, CARVE_QUEUES_CARVE), *b = plan_of(m, CARVE_QUEUES_CARVE);
	size_t i;

	(void)state;
	assert_int_equal(a->nbinds, 6); /* the gang waits: team-a's 4 GPUs are taken */
	assert_int_equal(a->nbinds, b->nbinds);
	assert_int_equal(a->npending, b->npending);
	assert_int_equal(a->ngangs, b->ngangs);
	for (i = 0; i < a->nbinds; i++) {
		assert_string_equal(a->binds[i].pod.name, b->binds[i].pod.name);
		assert_string_equal(a->binds[i].node, b->binds[i].node);
		assert_string_equal(a->binds[i].devices, b->binds[i].devices);
		assert_string_equal(a->binds[i].flavors, b->binds[i].flavors);
	}
	for (i = 0; i < a->npending; i++)
		assert_string_equal(a->pending[i].message, b->pending[i].message);
	carve_plan_free(a);
	carve_plan_free(b);
	carve_manifests_destroy(m);
}

static void test_volcano_podgroups(void **state)
{
	struct carve_manifests *m = load("cluster", "volcano", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);

	(void)state;
	no_errors(m);
	assert_int_equal(p->nbinds, 2);
	assert_string_equal(p->binds[0].workload, "vc/volcano:sweep");
	assert_string_equal(p->binds[0].flavors, "cpu=volcano,memory=volcano,nvidia.com/gpu=volcano");
	assert_string_equal(p->gangs[0].cq, "research");
	/* partial has two of the three pods its minMember asks for */
	assert_int_equal(p->npending, 2);
	assert_non_null(strstr(p->pending[0].message, "all 3 pods"));
	assert_int_equal(p->npodgroups, 2);
	assert_string_equal(p->podgroups[0].name, "partial");
	assert_string_equal(p->podgroups[0].phase, "Pending");
	assert_string_equal(p->podgroups[0].api_version, "scheduling.volcano.sh/v1beta1");
	assert_non_null(strstr(p->podgroups[0].message, "all 3 pods"));
	assert_string_equal(p->podgroups[1].name, "sweep");
	assert_string_equal(p->podgroups[1].phase, "Inqueue");
	assert_string_equal(p->podgroups[1].message, "");
	carve_plan_free(p);
	carve_manifests_destroy(m);
	/* once carve bound sweep's pods: Running, nothing to do */
	m = load("cluster", "volcano-bound", NULL);
	p = plan_of(m, CARVE_QUEUES_CARVE);
	no_errors(m);
	assert_int_equal(p->nbinds + p->npending + p->nreleases + p->nvictims, 0);
	assert_int_equal(p->npodgroups, 1);
	assert_string_equal(p->podgroups[0].name, "sweep");
	assert_string_equal(p->podgroups[0].phase, "Running");
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* A cordoned node takes nothing new; a devices annotation naming a GPU
 * the node lacks is a warning naming the pod, which keeps running
 * (never deleted for bad input). */
static void test_bad_objects(void **state)
{
	struct carve_manifests *m = load("cluster", "bad", NULL);
	struct carve_plan *p = plan_of(m, CARVE_QUEUES_CARVE);
	size_t i;
	bool named = false;

	(void)state;
	no_errors(m);
	for (i = 0; i < m->diags.n; i++)
		if (strstr(m->diags.v[i].msg, "Pod ns-a/lost: annotation carve.dev/devices names "
					      "GPU 9, but node train-0 has 4 GPU(s)"))
			named = true;
	assert_true(named);
	assert_int_equal(p->nreleases, 0);
	assert_int_equal(p->nbinds, 0);
	assert_int_equal(p->npending, 1);
	assert_string_equal(p->pending[0].pod.name, "wants-cordoned");
	assert_non_null(strstr(p->pending[0].message, "node.kubernetes.io/unschedulable:NoSchedule"));
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* [e9] A fitting pod behind two older over-quota pods of its queue
 * (BestEffortFIFO) is bound in the same plan: each inadmissible head set
 * aside lets the next be tried. */
static void test_starvation(void **state)
{
	struct carve_manifests *m = load("cluster", NULL);
	struct carve_plan *p;

	(void)state;
	add_pod(m, "ns-b", "huge-1", "\"kueue.x-k8s.io/queue-name\": \"lq\"", "", NULL, "3", "1", 0);
	add_pod(m, "ns-b", "huge-2", "\"kueue.x-k8s.io/queue-name\": \"lq\"", "", NULL, "3", "1", 1);
	add_pod(m, "ns-b", "small", "\"kueue.x-k8s.io/queue-name\": \"lq\"", "", NULL, "1", "1", 2);
	p = plan_of(m, CARVE_QUEUES_CARVE);
	no_errors(m);
	assert_int_equal(p->nbinds, 1);
	assert_string_equal(p->binds[0].pod.name, "small");
	assert_int_equal(p->npending, 2);
	assert_non_null(strstr(pending_of(p, "huge-1")->message, "insufficient quota"));
	assert_non_null(strstr(pending_of(p, "huge-2")->message, "insufficient quota"));
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* [e3] max_cycles 0 runs until quiet: 100 fitting one-CPU pods of one
 * queue are all bound in one plan, none left "waiting behind the head". */
static void test_until_quiet(void **state)
{
	struct carve_manifests *m = load("cluster", NULL);
	struct carve_plan *p;
	char name[32];
	int i;

	(void)state;
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "cpu-%03d", i);
		add_pod(m, "ns-a", name, "\"kueue.x-k8s.io/queue-name\": \"lq\"", "", NULL, "0",
			"1", i % 60);
	}
	p = plan_of(m, CARVE_QUEUES_CARVE);
	no_errors(m);
	assert_int_equal(p->nbinds, 100);
	assert_int_equal(p->npending, 0);
	assert_true(p->cycles >= 100 && p->cycles <= 108);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* A gang still filling up keeps one message whatever pods arrive. */
static void test_filling_message(void **state)
{
	struct carve_manifests *m = load("cluster", NULL);
	const char *lab = "\"kueue.x-k8s.io/queue-name\": \"lq\", "
			  "\"kueue.x-k8s.io/pod-group-name\": \"g\"";
	const char *ann = "\"kueue.x-k8s.io/pod-group-total-count\": \"4\"";
	struct carve_plan *p;
	char first[512];

	(void)state;
	add_pod(m, "ns-a", "g-0", lab, ann, NULL, "1", "1", 0);
	p = plan_of(m, CARVE_QUEUES_CARVE);
	assert_int_equal(p->npending, 1);
	snprintf(first, sizeof(first), "%s", p->pending[0].message);
	assert_non_null(strstr(first, "all 4 pods"));
	carve_plan_free(p);
	add_pod(m, "ns-a", "g-1", lab, ann, NULL, "1", "1", 0);
	p = plan_of(m, CARVE_QUEUES_CARVE);
	assert_int_equal(p->npending, 2);
	assert_string_equal(p->pending[0].message, first);
	assert_string_equal(p->pending[1].message, first);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* [e4] A single pod "train" and a Kueue group "train" in one namespace
 * are two workloads: both are bound. */
static void test_distinct_keys(void **state)
{
	struct carve_manifests *m = load("cluster", NULL);
	struct carve_plan *p;

	(void)state;
	add_pod(m, "ns-a", "train", "\"kueue.x-k8s.io/queue-name\": \"lq\"", "", NULL, "1", "1", 0);
	add_pod(m, "ns-a", "w-0", "\"kueue.x-k8s.io/queue-name\": \"lq\", "
		"\"kueue.x-k8s.io/pod-group-name\": \"train\"",
		"\"kueue.x-k8s.io/pod-group-total-count\": \"1\"", NULL, "1", "1", 0);
	p = plan_of(m, CARVE_QUEUES_CARVE);
	no_errors(m);
	assert_int_equal(p->nbinds, 2);
	assert_int_equal(p->ngangs, 2);
	assert_string_not_equal(p->gangs[0].workload, p->gangs[1].workload);
	assert_string_equal(bind_of(p, "train")->workload, "ns-a/train");
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* [e1, e5] Bound gangs whose flavor is gone, or that carry no flavors
 * annotation (bound under --queues none), or whose node carve does not
 * know, are never released: they keep their exact devices (no new pod
 * gets them) and a warning names them. */
static void test_bound_kept(void **state)
{
	struct carve_manifests *m = load("cluster", NULL);
	const char *q = "\"kueue.x-k8s.io/queue-name\": \"lq\"";
	const char *held_node[2] = {"train-0", "train-0"};
	const int held_gpu[2] = {2, 3};
	struct carve_plan *p;
	bool warned = false;
	size_t i;

	(void)state;
	add_pod(m, "ns-a", "gone", q, "\"carve.dev/devices\": \"gpu=2\", \"carve.dev/flavors\": "
		"\"cpu=old,memory=old,nvidia.com/gpu=old\"", "train-0", "1", "1", 0);
	add_pod(m, "ns-a", "noflavors", q, "\"carve.dev/devices\": \"gpu=3\"", "train-0", "1",
		"1", 0);
	add_pod(m, "ns-a", "elsewhere", q, "\"carve.dev/devices\": \"gpu=0\", "
		"\"carve.dev/flavors\": \"cpu=any,memory=any,nvidia.com/gpu=any\"", "nowhere-0",
		"1", "1", 0);
	for (i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "new-%zu", i);
		add_pod(m, "ns-a", name, q, "", NULL, "1", "1", 1);
	}
	p = plan_of(m, CARVE_QUEUES_CARVE);
	assert_int_equal(p->nreleases, 0);
	assert_int_equal(p->nvictims, 0);
	assert_int_equal(p->nbinds, 4);
	distinct_gpus(p, held_node, held_gpu, 2);
	for (i = 0; i < m->diags.n; i++)
		if (strstr(m->diags.v[i].msg, "ns-a/noflavors") &&
		    strstr(m->diags.v[i].msg, "charge no quota"))
			warned = true;
	assert_true(warned);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* [e2] A carve-bound pod that is no workload (no queue label) holds
 * exactly the devices its annotation names, not any GPU of the kind. */
static void test_bound_exact(void **state)
{
	struct carve_manifests *m = load("cluster", NULL);
	const char *q = "\"kueue.x-k8s.io/queue-name\": \"lq\"";
	const char *held_node[2] = {"train-0", "train-0"};
	const int held_gpu[2] = {2, 3};
	struct carve_plan *p;
	size_t i;

	(void)state;
	add_pod(m, "ns-a", "nq-0", "", "\"carve.dev/devices\": \"gpu=2\"", "train-0", "1", "1", 0);
	add_pod(m, "ns-a", "nq-1", "", "\"carve.dev/devices\": \"gpu=3\"", "train-0", "1", "1", 0);
	for (i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "new-%zu", i);
		add_pod(m, "ns-a", name, q, "", NULL, "1", "1", 1);
	}
	p = plan_of(m, CARVE_QUEUES_CARVE);
	assert_int_equal(p->nreleases, 0);
	assert_int_equal(p->nbinds, 4);
	distinct_gpus(p, held_node, held_gpu, 2);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* [e7] A bound pod being deleted holds its devices outside its gang; the
 * gang's replacement pod is bound elsewhere, and a pod past the gang's
 * declared size stays pending with a clear message. */
static void test_deleting_and_extra(void **state)
{
	struct carve_manifests *m = load("cluster", NULL);
	const char *lab = "\"kueue.x-k8s.io/queue-name\": \"lq\", "
			  "\"kueue.x-k8s.io/pod-group-name\": \"g\"";
	const char *held_node[2] = {"train-0", "train-0"};
	const int held_gpu[2] = {0, 1};
	struct carve_plan *p;
	const struct carve_plan_pending *x;

	(void)state;
	add_pod(m, "ns-a", "g-0", lab, "\"kueue.x-k8s.io/pod-group-total-count\": \"2\", "
		"\"carve.dev/devices\": \"gpu=0\", \"carve.dev/flavors\": "
		"\"cpu=any,memory=any,nvidia.com/gpu=any\"", "train-0", "1", "1", 0);
	meta_extra = ", \"deletionTimestamp\": \"2026-01-01T00:00:30Z\"";
	add_pod(m, "ns-a", "g-1", lab, "\"kueue.x-k8s.io/pod-group-total-count\": \"2\", "
		"\"carve.dev/devices\": \"gpu=1\", \"carve.dev/flavors\": "
		"\"cpu=any,memory=any,nvidia.com/gpu=any\"", "train-0", "1", "1", 0);
	add_pod(m, "ns-a", "g-2", lab, "\"kueue.x-k8s.io/pod-group-total-count\": \"2\"", NULL,
		"1", "1", 0);
	add_pod(m, "ns-a", "g-3", lab, "\"kueue.x-k8s.io/pod-group-total-count\": \"2\"", NULL,
		"1", "1", 0);
	p = plan_of(m, CARVE_QUEUES_CARVE);
	assert_int_equal(p->nreleases, 0);
	assert_int_equal(p->nbinds, 1);
	assert_string_equal(p->binds[0].pod.name, "g-2");
	distinct_gpus(p, held_node, held_gpu, 2);
	assert_int_equal(p->npending, 1);
	x = pending_of(p, "g-3");
	assert_non_null(x);
	assert_non_null(strstr(x->message, "declares 2 pods"));
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gang_whole),
		cmocka_unit_test(test_mig_slots),
		cmocka_unit_test(test_mig_dynamic),
		cmocka_unit_test(test_notebook_replicas),
		cmocka_unit_test(test_fraction),
		cmocka_unit_test(test_over_quota),
		cmocka_unit_test(test_preemption),
		cmocka_unit_test(test_foreign_pods_hold),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_halfbound_completed),
		cmocka_unit_test(test_halfbound_released),
		cmocka_unit_test(test_queues_none),
		cmocka_unit_test(test_impossible_request),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_volcano_podgroups),
		cmocka_unit_test(test_bad_objects),
		cmocka_unit_test(test_starvation),
		cmocka_unit_test(test_until_quiet),
		cmocka_unit_test(test_filling_message),
		cmocka_unit_test(test_distinct_keys),
		cmocka_unit_test(test_bound_kept),
		cmocka_unit_test(test_bound_exact),
		cmocka_unit_test(test_deleting_and_extra),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
