/*
 * test_load_kueue.c - unit tests of the Kueue loaders (load_kueue.c,
 * load_workload.c): the conformance manifests load without a single
 * diagnostic, v1beta1 and v1beta2 spellings both load, every field lands
 * in its struct, and bad input is reported at its exact line and column
 * with a useful message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ---- helpers ---- */

static const struct carve_mf_quota *quota(const struct carve_mf_rgroup *g, const char *flavor,
					  const char *res)
{
	size_t i, j;

	for (i = 0; i < g->nflavors; i++) {
		if (strcmp(g->flavors[i].flavor, flavor))
			continue;
		for (j = 0; j < g->flavors[i].n; j++)
			if (!strcmp(g->flavors[i].v[j].resource, res))
				return &g->flavors[i].v[j];
	}
	return NULL;
}

static const char *kv(const struct carve_kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return l->v[i].value;
	return NULL;
}

static int64_t req(const struct carve_reslist *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return l->v[i].milli;
	return -1;
}

static const struct carve_mf_workload *find_wl(const struct carve_manifests *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nworkloads; i++)
		if (!strcmp(m->workloads[i].meta.name, name))
			return &m->workloads[i];
	return NULL;
}

/* ---- conformance manifests ---- */

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_conformance_clean(void **state)
{
	char dir[4096], path[4400];
	char *names[512];
	size_t n = 0, i;
	struct dirent *de;
	DIR *d;

	(void)state;
	tu_source_path(dir, sizeof(dir), "tests/conformance/kueue");
	d = opendir(dir);
	if (!d)
		fail_msg("cannot open %s: the conformance cases ship in the tree", dir);
	while ((de = readdir(d)) && n < 512) {
		size_t len = strlen(de->d_name);

		if (len > 5 && !strcmp(de->d_name + len - 5, ".yaml"))
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), by_name);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		struct carve_manifests *m = carve_manifests_create();
		size_t len = 0, k;
		char *buf;

		assert_non_null(m);
		m->names_warn = true; /* as carve admit reads them */
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		buf = tu_read_file(path, &len);
		assert_non_null(buf);
		assert_int_equal(carve_manifests_load_yaml(m, path, buf, len), 0);
		/* clean, but for names Kueue's own tests use and the API server
		 * would refuse (warned, objects kept) */
		for (k = 0; k < m->diags.n; k++)
			if (!strstr(m->diags.v[k].msg, "the API server would refuse it")) {
				fprintf(stderr, "%s:\n", names[i]);
				tu_assert_clean(m);
			}
		/* Every case has queues and workloads, and all of them loaded. */
		assert_true(m->ncqs > 0);
		assert_true(m->nworkloads > 0);
		assert_int_equal(m->ndocs, m->nflavors + m->ncqs + m->ncohorts + m->nlqs +
					   m->nwpcs + m->nworkloads);
		free(buf);
		free(names[i]);
		carve_manifests_destroy(m);
	}
}

/* 001-single-cq-full, field by field. */
static void test_conformance_001_fields(void **state)
{
	const struct carve_mf_workload *w;
	const struct carve_mf_cq *cq;
	struct carve_manifests *m;
	char path[4096];
	size_t len = 0;
	char *buf;

	(void)state;
	tu_source_path(path, sizeof(path), "tests/conformance/kueue/001-single-cq-full.yaml");
	buf = tu_read_file(path, &len);
	if (!buf)
		fail_msg("cannot read %s", path);
	m = carve_manifests_create();
	assert_int_equal(carve_manifests_load_yaml(m, path, buf, len), 0);
	tu_assert_clean(m);
	cq = carve_mf_find_cq(m, "sales");
	assert_non_null(cq);
	assert_null(cq->cohort);
	assert_int_equal(cq->strategy, CARVE_STRICT_FIFO);
	assert_true(cq->has_namespace_selector);
	assert_int_equal(cq->ngroups, 1);
	assert_int_equal(quota(&cq->groups[0], "default", "cpu")->nominal, 50000);
	assert_true(quota(&cq->groups[0], "default", "cpu")->has_borrowing_limit);
	assert_int_equal(quota(&cq->groups[0], "default", "cpu")->borrowing_limit, 0);
	assert_int_equal(cq->when_can_borrow, CARVE_FUNG_MAY_STOP);
	assert_int_equal(cq->when_can_preempt, CARVE_FUNG_TRY_NEXT);
	assert_non_null(carve_mf_find_lq(m, "sales", "main"));
	w = find_wl(m, "assigned");
	assert_non_null(w);
	assert_string_equal(w->admitted_cq, "sales");
	assert_int_equal(w->nassign, 1);
	assert_int_equal(w->assign[0].count, 40);
	assert_string_equal(kv(&w->assign[0].flavors, "cpu"), "default");
	w = find_wl(m, "new");
	assert_non_null(w);
	assert_null(w->admitted_cq);
	assert_string_equal(w->queue_name, "main");
	assert_int_equal(w->podsets[0].count, 11);
	assert_int_equal(req(&w->podsets[0].spec.requests, "cpu"), 1000);
	free(buf);
	carve_manifests_destroy(m);
}

/* ---- v1beta2, every field ---- */

static const char full_v1beta2[] =
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: ResourceFlavor\n"
	"metadata: {name: h100}\n"
	"spec:\n"
	"  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
	"  nodeTaints: [{key: gpu, value: \"true\", effect: NoSchedule}]\n"
	"  tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]\n"
	"  topologyName: default\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: ClusterQueue\n"
	"metadata: {name: team-a-cq}\n"
	"spec:\n"
	"  namespaceSelector: {}\n"
	"  cohortName: gpu-org\n"
	"  queueingStrategy: BestEffortFIFO\n"
	"  stopPolicy: Hold\n"
	"  resourceGroups:\n"
	"  - coveredResources: [cpu, memory, nvidia.com/gpu]\n"
	"    flavors:\n"
	"    - name: h100\n"
	"      resources:\n"
	"      - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 8, lendingLimit: 4}\n"
	"      - {name: cpu, nominalQuota: 96}\n"
	"      - {name: memory, nominalQuota: 1Ti}\n"
	"  preemption:\n"
	"    withinClusterQueue: LowerOrNewerEqualPriority\n"
	"    reclaimWithinCohort: Any\n"
	"    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}\n"
	"  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: MayStopSearch,\n"
	"                      preference: PreemptionOverBorrowing}\n"
	"  fairSharing: {weight: \"2\"}\n"
	"  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}\n"
	"  admissionChecksStrategy: {admissionChecks: [{name: prov-req, onFlavors: [h100]}]}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: LocalQueue\n"
	"metadata: {namespace: team-a, name: team-a-queue}\n"
	"spec: {clusterQueue: team-a-cq, stopPolicy: None, fairSharing: {weight: \"1\"}}\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: WorkloadPriorityClass\n"
	"metadata: {name: prod}\n"
	"value: 10000\n"
	"description: \"production\"\n"
	"---\n"
	"apiVersion: scheduling.k8s.io/v1\n"
	"kind: PriorityClass\n"
	"metadata: {name: high}\n"
	"value: 1000000\n"
	"globalDefault: false\n"
	"preemptionPolicy: Never\n"
	"description: \"high\"\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: Cohort\n"
	"metadata: {name: gpu-org}\n"
	"spec:\n"
	"  parentName: root\n"
	"  fairSharing: {weight: \"0.75\"}\n"
	"  resourceGroups:\n"
	"  - coveredResources: [nvidia.com/gpu]\n"
	"    flavors:\n"
	"    - name: h100\n"
	"      resources:\n"
	"      - name: nvidia.com/gpu\n"
	"        nominalQuota: 16\n"
	"---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\n"
	"kind: Topology\n"
	"metadata: {name: default}\n"
	"spec: {levels: [{nodeLabel: cloud.provider.com/topology-block}, {nodeLabel: kubernetes.io/hostname}]}\n"
	"---\n"
	"apiVersion: kai.scheduler/v1alpha1\n"
	"kind: Topology\n"
	"metadata: {name: kai}\n"
	"spec:\n"
	"  levels:\n"
	"  - nodeLabel: kubernetes.io/hostname\n";

static void test_v1beta2_all_fields(void **state)
{
	struct carve_manifests *m = tu_load(full_v1beta2);
	const struct carve_mf_quota *q;
	const struct carve_mf_flavor *f;
	const struct carve_mf_cohort *co;
	const struct carve_mf_cq *cq;
	const struct carve_mf_localqueue *lq;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->ndocs, 8);

	f = carve_mf_find_flavor(m, "h100");
	assert_non_null(f);
	assert_string_equal(kv(&f->node_labels, "nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
	assert_int_equal(f->ntaints, 1);
	assert_string_equal(f->node_taints[0].effect, "NoSchedule");
	assert_int_equal(f->ntolerations, 1);
	assert_string_equal(f->tolerations[0].op, "Exists");
	assert_string_equal(f->topology_name, "default");
	assert_int_equal(f->topology_pos.line, 8); /* topologyName: default */
	assert_int_equal(f->topology_pos.col, 17);
	{
		const struct carve_mf_topology *t = carve_mf_find_topology(m, "default");

		assert_non_null(t);
		assert_int_equal(t->nlevels, 2);
		assert_string_equal(t->levels[0], "cloud.provider.com/topology-block");
		assert_string_equal(t->levels[1], "kubernetes.io/hostname");
		t = carve_mf_find_topology(m, "kai");
		assert_non_null(t);
		assert_int_equal(t->nlevels, 1);
		assert_int_equal(m->ntopologies, 2);
	}

	cq = carve_mf_find_cq(m, "team-a-cq");
	assert_non_null(cq);
	assert_null(cq->meta.ns);
	assert_string_equal(cq->cohort, "gpu-org");
	assert_int_equal(cq->cohort_pos.line, 15);
	assert_int_equal(cq->cohort_pos.col, 15);
	assert_true(cq->has_namespace_selector);
	assert_int_equal(cq->strategy, CARVE_BEST_EFFORT_FIFO);
	assert_int_equal(cq->stop_policy, CARVE_STOP_HOLD);
	assert_int_equal(cq->ngroups, 1);
	assert_int_equal(cq->groups[0].ncovered, 3);
	assert_string_equal(cq->groups[0].covered[2], "nvidia.com/gpu");
	assert_int_equal(cq->groups[0].nflavors, 1);
	assert_string_equal(cq->groups[0].flavors[0].flavor, "h100");
	assert_int_equal(cq->groups[0].flavors[0].pos.line, 21);
	assert_int_equal(cq->groups[0].flavors[0].pos.col, 13);
	q = quota(&cq->groups[0], "h100", "nvidia.com/gpu");
	assert_non_null(q);
	assert_int_equal(q->nominal, 8000);
	assert_true(q->has_borrowing_limit);
	assert_int_equal(q->borrowing_limit, 8000);
	assert_true(q->has_lending_limit);
	assert_int_equal(q->lending_limit, 4000);
	assert_int_equal(q->pos.line, 23);
	assert_int_equal(q->pos.col, 16);
	assert_int_equal(q->nominal_pos.line, 23);
	assert_int_equal(q->nominal_pos.col, 46);
	assert_int_equal(q->borrowing_pos.col, 65);
	assert_int_equal(q->lending_pos.col, 82);
	q = quota(&cq->groups[0], "h100", "memory");
	assert_int_equal(q->nominal, 1099511627776000LL);
	assert_false(q->has_borrowing_limit);
	assert_false(q->has_lending_limit);
	assert_int_equal(cq->within_cq, CARVE_WCQ_LOWER_OR_NEWER_EQUAL);
	assert_int_equal(cq->reclaim, CARVE_RECLAIM_ANY);
	assert_int_equal(cq->bwc, CARVE_BWC_LOWER);
	assert_true(cq->has_bwc_threshold);
	assert_int_equal(cq->bwc_max_priority, 100);
	assert_int_equal(cq->when_can_borrow, CARVE_FUNG_TRY_NEXT);
	assert_int_equal(cq->when_can_preempt, CARVE_FUNG_MAY_STOP);
	assert_true(cq->preempt_over_borrow);
	assert_int_equal(cq->fair_weight_milli, 2000);

	lq = carve_mf_find_lq(m, "team-a", "team-a-queue");
	assert_non_null(lq);
	assert_string_equal(lq->cluster_queue, "team-a-cq");

	assert_int_equal(m->nwpcs, 2);
	assert_string_equal(m->wpcs[0].meta.name, "prod");
	assert_int_equal(m->wpcs[0].value, 10000);
	assert_string_equal(m->wpcs[0].description, "production");
	assert_string_equal(m->wpcs[1].meta.kind, "PriorityClass");
	assert_int_equal(m->wpcs[1].value, 1000000);

	co = carve_mf_find_cohort(m, "gpu-org");
	assert_non_null(co);
	assert_string_equal(co->parent, "root");
	assert_int_equal(co->fair_weight_milli, 750);
	assert_int_equal(co->ngroups, 1);
	assert_int_equal(quota(&co->groups[0], "h100", "nvidia.com/gpu")->nominal, 16000);
	carve_manifests_destroy(m);
}

/* Defaults: no spec details at all. */
static void test_cq_defaults(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: ClusterQueue\n"
					    "metadata: {name: bare}\n"
					    "---\n"
					    "apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: Cohort\n"
					    "metadata: {name: root}\n"
					    "spec: {}\n");
	const struct carve_mf_cq *cq;

	(void)state;
	tu_assert_clean(m);
	cq = carve_mf_find_cq(m, "bare");
	assert_non_null(cq);
	assert_null(cq->cohort);
	assert_false(cq->has_namespace_selector);
	assert_int_equal(cq->strategy, CARVE_BEST_EFFORT_FIFO);
	assert_int_equal(cq->stop_policy, CARVE_STOP_NONE);
	assert_int_equal(cq->within_cq, CARVE_WCQ_NEVER);
	assert_int_equal(cq->reclaim, CARVE_RECLAIM_NEVER);
	assert_int_equal(cq->bwc, CARVE_BWC_NEVER);
	assert_false(cq->has_bwc_threshold);
	assert_int_equal(cq->when_can_borrow, CARVE_FUNG_MAY_STOP);
	assert_int_equal(cq->when_can_preempt, CARVE_FUNG_TRY_NEXT);
	assert_int_equal(cq->fair_weight_milli, 1000);
	assert_int_equal(cq->ngroups, 0);
	assert_null(carve_mf_find_cohort(m, "root")->parent);
	assert_int_equal(carve_mf_find_cohort(m, "root")->fair_weight_milli, 1000);
	carve_manifests_destroy(m);
}

/* ---- v1beta1 ---- */

static void test_v1beta1_cohort_and_borrow(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: kueue.x-k8s.io/v1beta1\n"
					    "kind: ClusterQueue\n"
					    "metadata:\n"
					    "  name: old\n"
					    "spec:\n"
					    "  cohort: org\n"
					    "  admissionChecks: [prov]\n"
					    "  flavorFungibility:\n"
					    "    whenCanBorrow: Borrow\n"
					    "    whenCanPreempt: Preempt\n"
					    "  resourceGroups:\n"
					    "  - coveredResources: [cpu]\n"
					    "    flavors:\n"
					    "    - name: default\n"
					    "      resources:\n"
					    "      - name: cpu\n"
					    "        nominalQuota: 500m\n"
					    "---\n"
					    "apiVersion: kueue.x-k8s.io/v1beta1\n"
					    "kind: Workload\n"
					    "metadata: {name: w, namespace: ns}\n"
					    "spec:\n"
					    "  priorityClassName: prod\n"
					    "  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass\n"
					    "  priority: 5\n"
					    "  podSets:\n"
					    "  - template:\n"
					    "      spec:\n"
					    "        containers: [{name: c}]\n");
	const struct carve_mf_cq *cq;
	const struct carve_mf_workload *w;

	(void)state;
	tu_assert_clean(m);
	cq = carve_mf_find_cq(m, "old");
	assert_non_null(cq);
	assert_string_equal(cq->cohort, "org");
	assert_int_equal(cq->cohort_pos.line, 6);
	assert_int_equal(cq->cohort_pos.col, 11);
	assert_int_equal(cq->when_can_borrow, CARVE_FUNG_MAY_STOP);
	assert_int_equal(cq->when_can_preempt, CARVE_FUNG_MAY_STOP);
	assert_int_equal(quota(&cq->groups[0], "default", "cpu")->nominal, 500);
	w = find_wl(m, "w");
	assert_non_null(w);
	assert_string_equal(w->priority_class, "prod");
	assert_true(w->has_priority);
	assert_int_equal(w->priority, 5);
	assert_string_equal(w->podsets[0].name, "main");
	assert_int_equal(w->podsets[0].count, 1);
	carve_manifests_destroy(m);
}

/* A spelling of the other version still loads, with a warning. */
static void test_other_version_spelling_warns(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: ClusterQueue\n"
					    "metadata: {name: mixed}\n"
					    "spec:\n"
					    "  cohort: org\n"
					    "  flavorFungibility: {whenCanBorrow: Borrow}\n");
	const struct carve_mf_cq *cq;

	(void)state;
	tu_assert_warning(m, 5, 11, "'cohort' is a kueue.x-k8s.io/v1beta1 field; "
				    "kueue.x-k8s.io/v1beta2 calls it 'cohortName'");
	tu_assert_warning(m, 6, 38, "'Borrow' is the kueue.x-k8s.io/v1beta1 value");
	assert_int_equal(m->diags.nerrors, 0);
	cq = carve_mf_find_cq(m, "mixed");
	assert_non_null(cq);
	assert_string_equal(cq->cohort, "org");
	carve_manifests_destroy(m);
}

/* ---- bad input, exact positions ---- */

static const char cq_head[] =
	"apiVersion: kueue.x-k8s.io/v1beta2\n" /* 1 */
	"kind: ClusterQueue\n"                /* 2 */
	"metadata:\n"                         /* 3 */
	"  name: cq\n"                        /* 4 */
	"spec:\n"                             /* 5 */
	"  resourceGroups:\n"                 /* 6 */
	"  - coveredResources: [cpu, memory]\n" /* 7 */
	"    flavors:\n"                      /* 8 */
	"    - name: default\n"               /* 9 */
	"      resources:\n";                 /* 10 */

static struct carve_manifests *load_cq_with(const char *resources)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s%s", cq_head, resources);
	return tu_load(buf);
}

static void test_unknown_field_suggests(void **state)
{
	struct carve_manifests *m = load_cq_with("      - name: cpu\n"       /* 11 */
						 "        nominalQuotas: 10\n" /* 12 */
						 "      - name: memory\n"    /* 13 */
						 "        nominalQuota: 1Gi\n");
	const struct carve_mf_cq *cq;

	(void)state;
	tu_assert_error(m, 12, 9,
			"ClusterQueue cq: spec.resourceGroups[0].flavors[0].resources[0]: "
			"unknown field 'nominalQuotas' (did you mean 'nominalQuota'?)");
	tu_assert_error(m, 11, 9, "missing required field 'nominalQuota'");
	assert_int_equal(m->diags.nerrors, 2);
	/* The queue loads; the quota without a nominalQuota does not. */
	cq = carve_mf_find_cq(m, "cq");
	assert_non_null(cq);
	assert_null(quota(&cq->groups[0], "default", "cpu"));
	assert_non_null(quota(&cq->groups[0], "default", "memory"));
	carve_manifests_destroy(m);
}

static void test_malformed_quantity(void **state)
{
	struct carve_manifests *m = load_cq_with("      - name: cpu\n"
						 "        nominalQuota: 10\n"
						 "      - name: memory\n"
						 "        nominalQuota: 10Gx\n");

	(void)state;
	tu_assert_error(m, 14, 23, "spec.resourceGroups[0].flavors[0].resources[1].nominalQuota: "
				   "malformed quantity '10Gx'");
	assert_int_equal(m->diags.nerrors, 1);
	assert_null(quota(&carve_mf_find_cq(m, "cq")->groups[0], "default", "memory"));
	carve_manifests_destroy(m);
}

static void test_negative_quota(void **state)
{
	struct carve_manifests *m = load_cq_with("      - name: cpu\n"
						 "        nominalQuota: 10\n"
						 "        borrowingLimit: -2\n"
						 "        lendingLimit: \"-1\"\n");

	(void)state;
	tu_assert_error(m, 13, 25, "borrowingLimit: quantity '-2' must not be negative");
	tu_assert_error(m, 14, 23, "lendingLimit: quantity '-1' must not be negative");
	assert_int_equal(m->diags.nerrors, 2);
	carve_manifests_destroy(m);
}

static void test_resource_not_covered(void **state)
{
	struct carve_manifests *m = load_cq_with("      - name: cpu\n"
						 "        nominalQuota: 10\n"
						 "      - name: nvidia.com/gpu\n"
						 "        nominalQuota: 8\n"
						 "      - name: cpu\n"
						 "        nominalQuota: 1\n");
	const struct carve_mf_cq *cq;

	(void)state;
	tu_assert_error(m, 13, 15, "resources[1]: resource 'nvidia.com/gpu' is not in the "
				   "group's coveredResources");
	tu_assert_error(m, 15, 15, "resources[2]: resource 'cpu' is listed twice");
	assert_int_equal(m->diags.nerrors, 2);
	cq = carve_mf_find_cq(m, "cq");
	assert_int_equal(cq->groups[0].flavors[0].n, 1);
	assert_int_equal(quota(&cq->groups[0], "default", "cpu")->nominal, 10000);
	carve_manifests_destroy(m);
}

static void test_group_duplicates(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: ClusterQueue\n"
					    "metadata: {name: cq}\n"
					    "spec:\n"
					    "  resourceGroups:\n"
					    "  - flavors:\n" /* flavors before coveredResources */
					    "    - name: a\n"
					    "      resources: [{name: cpu, nominalQuota: 1}]\n"
					    "    coveredResources: [cpu]\n"
					    "  - coveredResources: [cpu, gpu]\n"
					    "    flavors:\n"
					    "    - name: a\n"
					    "      resources: [{name: gpu, nominalQuota: 1}]\n");

	(void)state;
	tu_assert_error(m, 10, 24, "resource 'cpu' is already covered by resourceGroups[0]");
	tu_assert_error(m, 12, 13, "flavor 'a' is already in resourceGroups[0]");
	assert_int_equal(m->diags.nerrors, 2);
	assert_int_equal(carve_mf_find_cq(m, "cq")->groups[0].flavors[0].n, 1);
	carve_manifests_destroy(m);
}

static void test_bad_enum_suggests(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: ClusterQueue\n"
					    "metadata: {name: cq}\n"
					    "spec:\n"
					    "  preemption:\n"
					    "    withinClusterQueue: LowerPriorty\n"
					    "  queueingStrategy: FIFO\n");

	(void)state;
	tu_assert_error(m, 6, 25, "ClusterQueue cq: spec.preemption.withinClusterQueue: "
				  "unknown value 'LowerPriorty' (did you mean 'LowerPriority'? "
				  "expected one of: Never, LowerPriority, LowerOrNewerEqualPriority)");
	tu_assert_error(m, 7, 21, "unknown value 'FIFO'");
	assert_int_equal(carve_mf_find_cq(m, "cq")->within_cq, CARVE_WCQ_NEVER);
	carve_manifests_destroy(m);
}

static void test_wpc_missing_value(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: WorkloadPriorityClass\n"
					    "metadata: {name: prod}\n"
					    "description: no value\n"
					    "---\n"
					    "apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: WorkloadPriorityClass\n"
					    "metadata: {name: p2}\n"
					    "spec: {value: 3}\n"
					    "value: 3\n");

	(void)state;
	tu_assert_error(m, 1, 1, "WorkloadPriorityClass prod: missing required field 'value'");
	tu_assert_error(m, 9, 1, "WorkloadPriorityClass p2: unknown field 'spec'");
	assert_int_equal(m->diags.nerrors, 2);
	assert_int_equal(m->nwpcs, 1);
	assert_string_equal(m->wpcs[0].meta.name, "p2");
	carve_manifests_destroy(m);
}

static void test_lq_missing_cq(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: LocalQueue\n"
					    "metadata: {name: lq, namespace: team}\n"
					    "spec:\n"
					    "  stopPolicy: None\n"
					    "---\n"
					    "apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: LocalQueue\n"
					    "metadata: {name: lq2}\n");

	(void)state;
	tu_assert_error(m, 5, 3, "LocalQueue lq: spec: missing required field 'clusterQueue'");
	tu_assert_error(m, 7, 1, "LocalQueue lq2: missing required field 'spec'");
	assert_int_equal(m->diags.nerrors, 2);
	assert_int_equal(m->nlqs, 0);
	carve_manifests_destroy(m);
}

static const char wl_tmpl[] =
	"apiVersion: kueue.x-k8s.io/v1beta2\n" /* 1 */
	"kind: Workload\n"                    /* 2 */
	"metadata: {name: w, namespace: ns}\n" /* 3 */
	"spec:\n"                             /* 4 */
	"  queueName: q\n"                    /* 5 */
	"  podSets:\n"                        /* 6 */
	"  - name: main\n"                    /* 7 */
	"    count: %s\n"                     /* 8 */
	"    template:\n"                     /* 9 */
	"      spec:\n"                       /* 10 */
	"        containers: [{name: c, resources: {requests: {cpu: 1}}}]\n";

static void test_workload_bad_count(void **state)
{
	const char *bad[] = {"-1", "many", "3000000000"};
	const char *msg[] = {"-1 is out of range [0, 2147483647]",
			     "expected an integer, got 'many'",
			     "3000000000 is out of range"};
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		char buf[1024];
		struct carve_manifests *m;

		snprintf(buf, sizeof(buf), wl_tmpl, bad[i]);
		m = tu_load(buf);
		tu_assert_error(m, 8, 12, "Workload w: spec.podSets[0].count: ");
		tu_assert_error(m, 8, 12, msg[i]);
		assert_int_equal(m->diags.nerrors, 1);
		assert_int_equal(m->nworkloads, 0);
		carve_manifests_destroy(m);
	}
}

static void test_workload_fields(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: kueue.x-k8s.io/v1beta2\n"
		"kind: Workload\n"
		"metadata:\n"
		"  name: w\n"
		"  namespace: ns\n"
		"  creationTimestamp: '2026-01-01T00:00:10Z'\n"
		"spec:\n"
		"  queueName: q\n"
		"  active: false\n"
		"  priority: 100\n"
		"  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: prod}\n"
		"  maximumExecutionTimeSeconds: 600\n"
		"  podSets:\n"
		"  - name: driver\n"
		"    template:\n"
		"      metadata: {labels: {app: x}}\n"
		"      spec:\n"
		"        containers: [{name: c, resources: {requests: {cpu: 2}}}]\n"
		"  - name: workers\n"
		"    count: 4\n"
		"    minCount: 2\n"
		"    topologyRequest: {required: rack}\n"
		"    template:\n"
		"      spec:\n"
		"        nodeSelector: {type: spot}\n"
		"        containers:\n"
		"        - name: c\n"
		"          resources: {limits: {nvidia.com/gpu: 1}}\n"
		"status:\n"
		"  conditions: [{type: QuotaReserved, status: 'True'}]\n"
		"  admission:\n"
		"    clusterQueue: cq\n"
		"    podSetAssignments:\n"
		"    - name: driver\n"
		"      flavors: {cpu: default}\n"
		"      resourceUsage: {cpu: 2}\n"
		"    - name: workers\n"
		"      count: 3\n"
		"      flavors: {nvidia.com/gpu: a100}\n");
	const struct carve_mf_workload *w;

	(void)state;
	tu_assert_clean(m);
	w = find_wl(m, "w");
	assert_non_null(w);
	assert_string_equal(w->meta.ns, "ns");
	assert_true(w->meta.has_created);
	assert_false(w->active);
	assert_true(w->has_priority);
	assert_int_equal(w->priority, 100);
	assert_string_equal(w->priority_class, "prod");
	assert_int_equal(w->npodsets, 2);
	assert_string_equal(w->podsets[0].name, "driver");
	assert_int_equal(w->podsets[0].count, 1);
	assert_string_equal(kv(&w->podsets[0].spec.labels, "app"), "x");
	assert_int_equal(w->podsets[1].count, 4);
	assert_true(w->podsets[1].has_min_count);
	assert_int_equal(w->podsets[1].min_count, 2);
	assert_int_equal(w->podsets[1].count_pos.line, 20);
	assert_int_equal(w->podsets[1].count_pos.col, 12);
	assert_string_equal(kv(&w->podsets[1].spec.node_selector, "type"), "spot");
	/* limit defaults the request */
	assert_int_equal(req(&w->podsets[1].spec.requests, "nvidia.com/gpu"), 1000);
	assert_string_equal(w->admitted_cq, "cq");
	assert_int_equal(w->admission_pos.line, 32);
	assert_int_equal(w->nassign, 2);
	assert_int_equal(w->assign[0].count, 1); /* from the podSet */
	assert_string_equal(kv(&w->assign[0].flavors, "cpu"), "default");
	assert_int_equal(w->assign[1].count, 3);
	assert_string_equal(kv(&w->assign[1].flavors, "nvidia.com/gpu"), "a100");
	carve_manifests_destroy(m);
}

static void test_workload_bad_assignment(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: Workload\n"
					    "metadata: {name: w}\n"
					    "spec:\n"
					    "  podSets:\n"
					    "  - count: 2\n"
					    "    minCount: 3\n"
					    "    template: {spec: {containers: [{name: c}]}}\n"
					    "---\n"
					    "apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: Workload\n"
					    "metadata: {name: w2}\n"
					    "spec:\n"
					    "  podSets: [{name: a, template: {spec: {containers: [{name: c}]}}}]\n"
					    "status:\n"
					    "  admission:\n"
					    "    podSetAssignments:\n"
					    "    - name: b\n"
					    "      count: 1\n");

	(void)state;
	tu_assert_error(m, 7, 15, "spec.podSets[0]: minCount 3 must not exceed count 2");
	tu_assert_error(m, 17, 5, "status.admission: missing required field 'clusterQueue'");
	tu_assert_error(m, 18, 7, "podSetAssignment 'b' names no podSet of spec.podSets");
	assert_int_equal(m->diags.nerrors, 3);
	assert_int_equal(m->nworkloads, 0);
	carve_manifests_destroy(m);
}

/* A bad document is reported; the documents around it still load. */
static void test_bad_document_does_not_stop_next(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: ResourceFlavor\n"
					    "metadata: {name: a}\n"
					    "spec: {nodeLabel: {x: y}}\n"
					    "---\n"
					    "apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: WorkloadPriorityClass\n"
					    "metadata: {name: nope}\n"
					    "---\n"
					    "apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: LocalQueue\n"
					    "metadata: {name: lq}\n"
					    "spec: {clusterQueue: cq}\n"
					    "---\n"
					    "apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: ClusterQueue\n"
					    "metadata: {name: cq}\n"
					    "spec: {cohortName: org}\n");

	(void)state;
	tu_assert_error(m, 4, 8, "ResourceFlavor a: spec: unknown field 'nodeLabel' "
				 "(did you mean 'nodeLabels'?)");
	tu_assert_error(m, 6, 1, "missing required field 'value'");
	assert_int_equal(m->diags.nerrors, 2);
	assert_int_equal(m->ndocs, 4);
	assert_int_equal(m->nflavors, 1);
	assert_int_equal(m->nwpcs, 0);
	assert_int_equal(m->nlqs, 1);
	assert_string_equal(m->lqs[0].meta.ns, "default");
	assert_int_equal(m->ncqs, 1);
	assert_string_equal(m->cqs[0].cohort, "org");
	carve_manifests_destroy(m);
}

static void test_unknown_top_level_and_metadata(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: ClusterQueue\n"
					    "metadata: {name: cq}\n"
					    "sepc: {}\n"
					    "---\n"
					    "apiVersion: kueue.x-k8s.io/v1beta2\n"
					    "kind: Cohort\n"
					    "spec: {}\n");

	(void)state;
	tu_assert_error(m, 4, 1, "ClusterQueue cq: unknown field 'sepc' (did you mean 'spec'?)");
	tu_assert_error(m, 6, 1, "Cohort: missing required field 'metadata'");
	assert_int_equal(m->ncqs, 1);
	assert_int_equal(m->ncohorts, 0);
	carve_manifests_destroy(m);
}

/* Object names as the API server checks them: a DNS-1123 subdomain for
 * every kind, a label for namespaces and podSet names, Kueue's references
 * (queueName, clusterQueue) subdomains; at the field, the object skipped. */
static void test_names_dns1123(void **state)
{
	static const char sub[] = "a lowercase RFC 1123 subdomain must consist of lower case "
				  "alphanumeric characters, '-' or '.', and must start and end "
				  "with an alphanumeric character";
	static const char lab[] = "a lowercase RFC 1123 label must consist of lower case "
				  "alphanumeric characters or '-', and must start and end with "
				  "an alphanumeric character";
	char msg[512];
	struct carve_manifests *m = tu_load(
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
		"metadata: {name: Bad_Name}\nspec: {clusterQueue: cq}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
		"metadata: {name: a b}\nspec: {clusterQueue: cq}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
		"metadata: {name: a/b}\nspec: {clusterQueue: cq}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
		"metadata: {name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}\nspec: {clusterQueue: cq}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
		"metadata: {name: lq, namespace: team.a}\nspec: {clusterQueue: cq}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
		"metadata: {name: lq2}\nspec: {clusterQueue: CQ}\n"
		"---\napiVersion: v1\nkind: Node\nmetadata: {name: Node_1}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
		"metadata: {name: w1}\n"
		"spec:\n  queueName: Q\n  podSets:\n"
		"  - name: Main\n    count: 1\n    template: {spec: {containers: [{name: c}]}}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
		"metadata: {name: good.lq, namespace: team-a}\nspec: {clusterQueue: cq.x}\n");

	(void)state;
	snprintf(msg, sizeof(msg), "LocalQueue: metadata.name: 'Bad_Name' is not a valid name: %s", sub);
	tu_assert_error(m, 3, 18, msg);
	snprintf(msg, sizeof(msg), "LocalQueue: metadata.name: 'a b' is not a valid name: %s", sub);
	tu_assert_error(m, 8, 18, msg);
	snprintf(msg, sizeof(msg), "LocalQueue: metadata.name: 'a/b' is not a valid name: %s", sub);
	tu_assert_error(m, 13, 18, msg);
	tu_assert_error(m, 18, 18, "LocalQueue: metadata.name: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' "
			"is not a valid name: must be no more than 253 characters (got 300)");
	snprintf(msg, sizeof(msg), "LocalQueue: metadata.namespace: 'team.a' is not a valid name: %s",
		 lab);
	tu_assert_error(m, 23, 33, msg);
	snprintf(msg, sizeof(msg), "LocalQueue lq2: spec.clusterQueue: 'CQ' is not a valid name: %s",
		 sub);
	tu_assert_error(m, 29, 22, msg);
	snprintf(msg, sizeof(msg), "Node: metadata.name: 'Node_1' is not a valid name: %s", sub);
	tu_assert_error(m, 33, 18, msg);
	snprintf(msg, sizeof(msg), "Workload w1: spec.queueName: 'Q' is not a valid name: %s", sub);
	tu_assert_error(m, 39, 14, msg);
	snprintf(msg, sizeof(msg), "Workload w1: spec.podSets[0].name: 'Main' is not a valid name: %s",
		 lab);
	tu_assert_error(m, 41, 11, msg);
	assert_int_equal(m->diags.nerrors, 9);
	assert_int_equal(m->nlqs, 1);
	assert_string_equal(m->lqs[0].meta.name, "good.lq");
	assert_int_equal(m->nnodes, 0);
	assert_int_equal(m->nworkloads, 0);
	carve_manifests_destroy(m);
}

/* Kueue's Workload CRD: spec.podSets has maxItems 8.  40,000 podSets are
 * refused at the field before any is decoded. */
static void test_workload_podsets_max(void **state)
{
	size_t n = 40000, i, len;
	const char *head = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
			   "metadata: {name: w}\nspec:\n  podSets:\n";
	const char *item = "  - {name: p, template: {spec: {containers: [{name: c}]}}}\n";
	char *y = malloc(strlen(head) + n * strlen(item) + 1);
	struct carve_manifests *m;

	(void)state;
	assert_non_null(y);
	strcpy(y, head);
	len = strlen(head);
	for (i = 0; i < n; i++) {
		memcpy(y + len, item, strlen(item));
		len += strlen(item);
	}
	y[len] = '\0';
	m = tu_load(y);
	tu_assert_error(m, 6, 3, "Workload w: spec.podSets: at most 8 podSets (Kueue's limit), "
			"got 40000");
	assert_int_equal(m->diags.nerrors, 1);
	assert_int_equal(m->nworkloads, 0);
	carve_manifests_destroy(m);
	free(y);
}

static void test_topology_checks(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: kueue.x-k8s.io/v1beta1\n"
					    "kind: Topology\n"
					    "metadata: {name: t}\n"
					    "spec:\n"
					    "  levels:\n"
					    "  - nodeLabel: rack\n"
					    "  - nodeLabel: rack\n"
					    "  - nodelabel: host\n"
					    "---\n"
					    "apiVersion: kueue.x-k8s.io/v1alpha1\n"
					    "kind: Topology\n"
					    "metadata: {name: t2}\n"
					    "spec: {levels: []}\n");

	(void)state;
	tu_assert_error(m, 7, 5, "Topology t: spec.levels[1]: node label 'rack' is listed twice");
	tu_assert_error(m, 8, 5, "unknown field 'nodelabel' (did you mean 'nodeLabel'?)");
	tu_assert_error(m, 8, 5, "missing required field 'nodeLabel'");
	tu_assert_error(m, 13, 16, "a Topology needs at least one level");
	assert_int_equal(m->diags.nerrors, 4);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conformance_clean),
		cmocka_unit_test(test_conformance_001_fields),
		cmocka_unit_test(test_v1beta2_all_fields),
		cmocka_unit_test(test_cq_defaults),
		cmocka_unit_test(test_v1beta1_cohort_and_borrow),
		cmocka_unit_test(test_other_version_spelling_warns),
		cmocka_unit_test(test_unknown_field_suggests),
		cmocka_unit_test(test_malformed_quantity),
		cmocka_unit_test(test_negative_quota),
		cmocka_unit_test(test_resource_not_covered),
		cmocka_unit_test(test_group_duplicates),
		cmocka_unit_test(test_bad_enum_suggests),
		cmocka_unit_test(test_wpc_missing_value),
		cmocka_unit_test(test_lq_missing_cq),
		cmocka_unit_test(test_workload_bad_count),
		cmocka_unit_test(test_workload_fields),
		cmocka_unit_test(test_workload_bad_assignment),
		cmocka_unit_test(test_bad_document_does_not_stop_next),
		cmocka_unit_test(test_unknown_top_level_and_metadata),
		cmocka_unit_test(test_topology_checks),
		cmocka_unit_test(test_names_dns1123),
		cmocka_unit_test(test_workload_podsets_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
