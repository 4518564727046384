/*
 * test_admit_place.c - placement atomic with admission (admit.h,
 * carve_adm_set_placer; admission.c builds the placer when the input has
 * nodes): a gang whose quota fits but whose pods cannot all be placed
 * (whole GPUs, MIG instances, GPU fractions) stays pending NoFit and holds
 * neither quota nor devices; placeable gangs get nodes and exact devices;
 * nvidia.com/gpu means replicas on time-sliced pools; flavor nodeLabels
 * keep pods in their pool; and a seeded property test over random pools
 * and workloads checks the placer's invariants, pods == counts and quota
 * usage == the sum of admitted requests after every cycle.
 */
#include "testutil.h"

#include <jansson.h>

#include "carve/admission.h"
#include "carve/inventory.h"
#include "carve/place.h"

/* ---- YAML builders ---- */

struct buf {
	char s[32768];
	size_t n;
};

static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
	va_end(ap);
	assert_true(k >= 0 && (size_t)k < sizeof(b->s) - b->n);
	b->n += (size_t)k;
}

/* A NodePool named name with label pool=name; sharing is a flow map. */
static void pool(struct buf *b, const char *name, int count, const char *model, int gpus,
		 const char *sharing)
{
	put(b, "apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: %s}\n"
	       "spec: {count: %d, namePrefix: %s-, gpu: {model: %s, count: %d}, sharing: %s,"
	       " cpu: \"64\", memory: 512Gi, labels: {pool: %s}}\n---\n",
	    name, count, name, model, gpus, sharing, name);
}

static void flavor(struct buf *b, const char *name, const char *pool_label)
{
	put(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: %s}\n"
	       "spec: {nodeLabels: {pool: %s}}\n---\n", name, pool_label);
}

/* ClusterQueue cq (LocalQueue ns/cq) over [cpu, res] with one flavor. */
static void queue(struct buf *b, const char *cq, const char *cohort, const char *res,
		  const char *flv, const char *quota)
{
	put(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: %s}\n"
	       "spec:\n  namespaceSelector: {}\n", cq);
	if (cohort)
		put(b, "  cohortName: %s\n", cohort);
	put(b, "  resourceGroups:\n  - coveredResources: [cpu%s%s]\n    flavors:\n"
	       "    - name: %s\n      resources:\n      - {name: cpu, nominalQuota: \"1000\"}\n",
	    res ? ", " : "", res ? res : "", flv);
	if (res)
		put(b, "      - {name: %s, nominalQuota: \"%s\"}\n", res, quota);
	put(b, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
	       "metadata: {namespace: ns, name: %s}\nspec: {clusterQueue: %s}\n---\n", cq, cq);
}

/* A Workload ns/name of count pods, each cpu 1 plus res: per (res NULL:
 * none), with a gpu-fraction annotation when frac. */
static void workload(struct buf *b, const char *name, const char *cq, int sec, int count,
		     const char *res, int per, const char *frac)
{
	put(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
	       "metadata: {name: %s, namespace: ns, creationTimestamp: \"2026-01-01T00:%02d:%02dZ\"}\n"
	       "spec:\n  queueName: %s\n  podSets:\n  - name: main\n    count: %d\n"
	       "    template:\n", name, sec / 60, sec % 60, cq, count);
	if (frac)
		put(b, "      metadata: {annotations: {gpu-fraction: \"%s\"}}\n", frac);
	put(b, "      spec:\n        containers:\n        - name: c\n"
	       "          resources: {requests: {cpu: \"1\"");
	if (res)
		put(b, ", %s: \"%d\"", res, per);
	put(b, "}}\n---\n");
}

/* ---- running ---- */

struct run {
	struct carve_manifests *m;
	struct carve_admission *ad;
};

static struct run build_yaml(const struct buf *b)
{
	struct run r;

	r.m = tu_load(b->s);
	r.ad = carve_admission_build(r.m);
	assert_non_null(r.ad);
	if (r.m->diags.nerrors)
		tu_dump(r.m);
	assert_int_equal(r.m->diags.nerrors, 0);
	assert_non_null(r.ad->placer);
	return r;
}

/* The admission engine's own invariants (quota usage, heaps, indexes). */
static void check_engine(const struct run *r)
{
	struct carve_error err;

	if (carve_adm_check(r->ad->adm, &err))
		fail_msg("carve_adm_check: %s", err.text);
}

static struct run run_yaml(const struct buf *b)
{
	struct run r = build_yaml(b);

	assert_true(carve_adm_run(r.ad->adm, r.ad->now, 100) > 0);
	check_engine(&r);
	return r;
}

static void run_free(struct run *r)
{
	carve_admission_destroy(r->ad);
	carve_manifests_destroy(r->m);
}

static const struct carve_wl_status *st(const struct run *r, const char *key)
{
	int id = carve_adm_find_workload(r->ad->adm, key);

	assert_true(id >= 0);
	return carve_adm_status(r->ad->adm, (uint32_t)id);
}

static void check_placer(const struct run *r)
{
	struct carve_error err;

	if (carve_placer_check(r->ad->placer, &err))
		fail_msg("carve_placer_check: %s", err.text);
}

/* GPU units free over the whole cluster. */
static int free_units(const struct run *r)
{
	size_t g, n = carve_cluster_gpu_count(r->ad->inv->cluster);
	int sum = 0;

	for (g = 0; g < n; g++)
		sum += carve_placer_gpu_free_units(r->ad->placer, (uint32_t)g);
	return sum;
}

static void expect_nofit(const struct run *r, const char *key)
{
	const struct carve_wl_status *s = st(r, key);

	assert_int_equal(s->state, CARVE_WL_PENDING);
	assert_int_equal(s->pending_reason, CARVE_PEND_NOFIT);
	if (!strstr(s->message, "quota fits but no placement"))
		fail_msg("%s: message '%s'", key, s->message);
}

static const char *node_of(const struct run *r, const struct carve_pod_place *pl)
{
	return carve_cluster_node(r->ad->inv->cluster, pl->node)->name;
}

/* ---- tests ---- */

/* 2 nodes x 4 GPUs, quota 16: 3 pods x 4 GPUs fit the quota, not the nodes. */
static void whole_gang_nofit(void **state)
{
	struct buf b = {.n = 0};
	struct run r;
	const struct carve_wl_status *s;

	(void)state;
	pool(&b, "a", 2, "H100-80GB", 4, "{mode: exclusive}");
	flavor(&b, "f-a", "a");
	queue(&b, "cq", NULL, "nvidia.com/gpu", "f-a", "16");
	workload(&b, "big", "cq", 1, 3, "nvidia.com/gpu", 4, NULL);
	r = build_yaml(&b);
	carve_adm_run(r.ad->adm, r.ad->now, 100);
	expect_nofit(&r, "ns/big");
	assert_non_null(strstr(st(&r, "ns/big")->message, "pod 3 of 3"));
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "f-a", "nvidia.com/gpu"), 0);
	assert_int_equal(free_units(&r), 8);
	check_placer(&r);
	run_free(&r);

	/* A smaller gang behind it takes the nodes (BestEffortFIFO). */
	workload(&b, "small", "cq", 2, 2, "nvidia.com/gpu", 4, NULL);
	r = run_yaml(&b);
	/* big is NoFit again: now for quota (8 + 12 > 16). */
	assert_int_equal(st(&r, "ns/big")->state, CARVE_WL_PENDING);
	assert_int_equal(st(&r, "ns/big")->pending_reason, CARVE_PEND_NOFIT);
	s = st(&r, "ns/small");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_int_equal(s->npodsets, 1);
	assert_int_equal(s->podsets[0].npods, 2);
	assert_string_not_equal(node_of(&r, &s->podsets[0].pods[0]),
				node_of(&r, &s->podsets[0].pods[1]));
	assert_int_equal(s->podsets[0].pods[0].ndevs, 4);
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "f-a", "nvidia.com/gpu"), 8000);
	assert_int_equal(free_units(&r), 0);
	check_placer(&r);
	/* Finishing gives the devices back. */
	assert_int_equal(carve_adm_finish(r.ad->adm, (uint32_t)carve_adm_find_workload(
							     r.ad->adm, "ns/small")), 0);
	assert_int_equal(free_units(&r), 8);
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "f-a", "nvidia.com/gpu"), 0);
	check_placer(&r);
	run_free(&r);
}

/* 2 nodes x 1 A100 with 2 x 3g.40gb: 4 instances; quota 8. */
static void mig_gang_nofit(void **state)
{
	struct buf b = {.n = 0};
	struct run r;
	const struct carve_wl_status *s;
	json_t *j, *pods, *mig;
	size_t i;

	(void)state;
	pool(&b, "m", 2, "A100-80GB", 1, "{mode: mig, mig: {layout: {\"3g.40gb\": 2}}}");
	flavor(&b, "f-m", "m");
	queue(&b, "cq", NULL, "nvidia.com/mig-3g.40gb", "f-m", "8");
	workload(&b, "big", "cq", 1, 5, "nvidia.com/mig-3g.40gb", 1, NULL);
	workload(&b, "fits", "cq", 2, 3, "nvidia.com/mig-3g.40gb", 1, NULL);
	r = run_yaml(&b);
	expect_nofit(&r, "ns/big");
	s = st(&r, "ns/fits");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_int_equal(s->podsets[0].npods, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(s->podsets[0].pods[i].ndevs, 1);
		assert_true(s->podsets[0].pods[i].devs[0].mig >= 0);
	}
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "f-m", "nvidia.com/mig-3g.40gb"),
			 3000);
	assert_int_equal(free_units(&r), 1); /* big holds none of the 4 instances */
	check_placer(&r);
	j = carve_admission_result_json(r.ad);
	assert_non_null(j);
	pods = json_object_get(json_array_get(json_object_get(json_array_get(
		json_object_get(j, "admitted"), 0), "podSets"), 0), "pods");
	assert_int_equal(json_array_size(pods), 3);
	mig = json_object_get(json_array_get(json_object_get(json_array_get(pods, 0), "gpus"), 0),
			      "mig");
	assert_string_equal(json_string_value(json_object_get(mig, "profile")), "3g.40gb");
	assert_non_null(json_object_get(mig, "start"));
	assert_non_null(json_object_get(json_array_get(pods, 0), "node"));
	json_decref(j);
	run_free(&r);
}

/* 1 node x 2 fractional L4: five halves do not fit, four do. */
static void fraction_gang_nofit(void **state)
{
	struct buf b = {.n = 0};
	struct run r;
	const struct carve_wl_status *s;
	json_t *j, *gpu;
	size_t i;

	(void)state;
	pool(&b, "fr", 1, "L4", 2, "{mode: fraction}");
	flavor(&b, "f-fr", "fr");
	queue(&b, "cq", NULL, NULL, "f-fr", NULL);
	workload(&b, "big", "cq", 1, 5, NULL, 0, "0.5");
	workload(&b, "fits", "cq", 2, 4, NULL, 0, "0.5");
	r = run_yaml(&b);
	expect_nofit(&r, "ns/big");
	s = st(&r, "ns/fits");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_int_equal(s->podsets[0].npods, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(s->podsets[0].pods[i].devs[0].milli, 500);
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "f-fr", "cpu"), 4000);
	assert_int_equal(carve_placer_gpu_free_milli(r.ad->placer, 0), 0);
	assert_int_equal(carve_placer_gpu_free_milli(r.ad->placer, 1), 0);
	check_placer(&r);
	j = carve_admission_result_json(r.ad);
	gpu = json_array_get(json_object_get(json_array_get(json_object_get(json_array_get(
		json_object_get(json_array_get(json_object_get(j, "admitted"), 0), "podSets"), 0),
		"pods"), 0), "gpus"), 0);
	assert_int_equal(json_integer_value(json_object_get(gpu, "milli")), 500);
	assert_null(json_object_get(gpu, "mig"));
	json_decref(j);
	run_free(&r);
}

/* nvidia.com/gpu on a time-sliced pool means replicas. */
static void timeslice_replicas(void **state)
{
	struct buf b = {.n = 0};
	struct run r;
	const struct carve_wl_status *s;
	size_t i;

	(void)state;
	pool(&b, "ts", 1, "L40S", 1, "{mode: timeslice, timeSlicing: {replicas: 4}}");
	flavor(&b, "f-ts", "ts");
	queue(&b, "cq", NULL, "nvidia.com/gpu", "f-ts", "8");
	workload(&b, "nb", "cq", 1, 4, "nvidia.com/gpu", 1, NULL);
	workload(&b, "more", "cq", 2, 1, "nvidia.com/gpu", 1, NULL);
	r = run_yaml(&b);
	s = st(&r, "ns/nb");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	for (i = 0; i < 4; i++) {
		assert_int_equal(s->podsets[0].pods[i].ndevs, 1);
		assert_int_equal(s->podsets[0].pods[i].devs[0].replica, (int)i);
	}
	expect_nofit(&r, "ns/more");
	check_placer(&r);
	run_free(&r);
}

/* failRequestsGreaterThanOne on the seed-like dev pool: a pod asking for
 * two replicas finds no GPU (NoFit, and the message says why); one replica
 * is admitted. */
static void timeslice_fail_gt_one(void **state)
{
	struct buf b = {.n = 0};
	struct run r;
	const struct carve_wl_status *s;

	(void)state;
	pool(&b, "dev", 6, "L40S", 1, "{mode: timeslice, timeSlicing: {replicas: 8, "
	     "renameByDefault: false, failRequestsGreaterThanOne: true}}");
	flavor(&b, "f-dev", "dev");
	queue(&b, "cq", NULL, "nvidia.com/gpu", "f-dev", "48");
	workload(&b, "two", "cq", 1, 1, "nvidia.com/gpu", 2, NULL);
	workload(&b, "one", "cq", 2, 1, "nvidia.com/gpu", 1, NULL);
	r = run_yaml(&b);
	assert_true(carve_cluster_gpu(r.ad->inv->cluster, 0)->fail_gt_one);
	expect_nofit(&r, "ns/two");
	s = st(&r, "ns/two");
	if (!strstr(s->message, "failRequestsGreaterThanOne"))
		fail_msg("message '%s'", s->message);
	s = st(&r, "ns/one");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_int_equal(s->podsets[0].npods, 1);
	assert_int_equal(s->podsets[0].pods[0].ndevs, 1);
	assert_true(s->podsets[0].pods[0].devs[0].replica >= 0);
	check_placer(&r);
	run_free(&r);
}

/* ---- topology (Kueue TAS annotations) ---- */

/* NodePool rack (2 nodes x 4 GPUs, label pool=gpu) in block b1. */
/* 1-based line and column of the first `needle` in b after `after`. */
static void pos_of(const struct buf *b, const char *after, const char *needle, unsigned *line,
		   unsigned *col)
{
	const char *a = strstr(b->s, after), *p, *q;

	assert_non_null(a);
	p = strstr(a, needle);
	assert_non_null(p);
	*line = 1;
	for (q = b->s; q < p; q++)
		if (*q == '\n')
			(*line)++;
	for (q = p; q > b->s && q[-1] != '\n'; q--)
		;
	*col = (unsigned)(p - q) + 1;
}

static void rack_pool(struct buf *b, const char *rack)
{
	put(b, "apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: %s}\n"
	       "spec: {count: 2, namePrefix: %s-, gpu: {model: H100, count: 4},"
	       " cpu: \"64\", memory: 512Gi, labels: {pool: gpu},"
	       " topology: {block: b1, rack: %s}}\n---\n", rack, rack, rack);
}

/* count pods x per GPUs, on node host when set, else with a topology
 * annotation (kind "required"/"preferred", level a label key) when set. */
static void tas_workload(struct buf *b, const char *name, int sec, int count, int per,
			 const char *host, const char *kind, const char *level)
{
	put(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
	       "metadata: {name: %s, namespace: ns, creationTimestamp: \"2026-01-01T00:00:%02dZ\"}\n"
	       "spec:\n  queueName: cq\n  podSets:\n  - name: main\n    count: %d\n"
	       "    template:\n", name, sec, count);
	if (kind)
		put(b, "      metadata: {annotations: {kueue.x-k8s.io/podset-%s-topology: %s}}\n",
		    kind, level);
	put(b, "      spec:\n");
	if (host)
		put(b, "        nodeSelector: {kubernetes.io/hostname: %s}\n", host);
	put(b, "        containers:\n        - name: c\n"
	       "          resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"%d\"}}\n---\n", per);
}

#define RACK "cloud.provider.com/topology-rack"

/* Two racks of 2 nodes x 4 GPUs; fillers half-use ra-0 (and rb-0 when
 * both), then gangs of 4 pods x 2 GPUs in the order given. */
static struct run tas_run(bool both, const char *const *kinds, size_t nk)
{
	struct buf b = {.n = 0};
	size_t i;

	rack_pool(&b, "ra");
	rack_pool(&b, "rb");
	flavor(&b, "f", "gpu");
	queue(&b, "cq", NULL, "nvidia.com/gpu", "f", "64");
	tas_workload(&b, "fill-a", 0, 1, 2, "ra-0", NULL, NULL);
	if (both)
		tas_workload(&b, "fill-b", 1, 1, 2, "rb-0", NULL, NULL);
	for (i = 0; i < nk; i++)
		tas_workload(&b, kinds[i], 10 + (int)i, 4, 2, NULL, kinds[i], RACK);
	return run_yaml(&b);
}

/* The racks the pods of key's podSet 0 are on: bit 0 ra, bit 1 rb. */
static int racks_of(const struct run *r, const char *key)
{
	const struct carve_wl_status *s = st(r, key);
	int m = 0;
	size_t i;

	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_int_equal(s->podsets[0].npods, 4);
	for (i = 0; i < 4; i++)
		m |= !strncmp(node_of(r, &s->podsets[0].pods[i]), "ra-", 3) ? 1 : 2;
	return m;
}

static void topology_required_preferred(void **state)
{
	static const char *const req[] = {"required"}, *const both[] = {"required", "preferred"};
	struct run r;
	const struct carve_wl_status *s;

	(void)state;
	/* Rack rb is free: the required gang stays inside it. */
	r = tas_run(false, req, 1);
	assert_int_equal(racks_of(&r, "ns/required"), 2);
	check_placer(&r);
	run_free(&r);
	/* 6 GPUs free per rack: required is NoFit (nothing held), preferred
	 * spreads over both racks. */
	r = tas_run(true, both, 2);
	expect_nofit(&r, "ns/required");
	s = st(&r, "ns/required");
	if (!strstr(s->message, "within one " RACK))
		fail_msg("message '%s'", s->message);
	assert_true(!s->podsets || !s->podsets[0].npods);
	assert_int_equal(racks_of(&r, "ns/preferred"), 3);
	assert_int_equal(free_units(&r), 16 - 4 - 8);
	check_placer(&r);
	run_free(&r);
}

/* An annotation naming a label that is not a topology level of the
 * queue's flavors: an error at the annotation, that workload is not
 * queued, the others are. */
static void topology_unknown_level(void **state)
{
	struct buf b = {.n = 0};
	struct carve_manifests *m;
	struct carve_admission *ad;
	unsigned line, col;

	(void)state;
	rack_pool(&b, "ra");
	rack_pool(&b, "rb");
	flavor(&b, "f", "gpu");
	queue(&b, "cq", NULL, "nvidia.com/gpu", "f", "64");
	tas_workload(&b, "odd", 0, 4, 2, NULL, "required", "example.com/zone");
	tas_workload(&b, "fine", 1, 4, 2, NULL, "required", RACK);
	m = tu_load(b.s);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	assert_int_equal(m->diags.nerrors, 1);
	pos_of(&b, "name: odd", "kueue.x-k8s.io/podset-required-topology", &line, &col);
	tu_assert_error(m, line, col, "Workload ns/odd podSet main: annotation "
			"kueue.x-k8s.io/podset-required-topology 'example.com/zone' is not a topology "
			"level of ClusterQueue cq's flavors (cloud.provider.com/topology-block, "
			RACK ", kubernetes.io/hostname); not admitted");
	assert_true(carve_adm_find_workload(ad->adm, "ns/odd") < 0);
	assert_true(carve_adm_run(ad->adm, ad->now, 100) > 0);
	assert_int_equal(carve_adm_status(ad->adm, (uint32_t)carve_adm_find_workload(
		ad->adm, "ns/fine"))->state, CARVE_WL_ADMITTED);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

/* A pool of 2 nodes x 4 GPUs in zone `zone` (label example.com/zone). */
static void zone_pool(struct buf *b, const char *zone)
{
	put(b, "apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: %s}\n"
	       "spec: {count: 2, namePrefix: %s-, gpu: {model: H100, count: 4},"
	       " cpu: \"64\", memory: 512Gi, labels: {pool: gpu, example.com/zone: %s}}\n---\n",
	    zone, zone, zone);
}

#define ZONE "example.com/zone"

/*
 * A ResourceFlavor naming a Kueue Topology (levels zone, host): the
 * annotations name its levels, placement keeps a required gang in one
 * zone; a default level is then an error (the queue's only flavor has
 * the Topology); with a second flavor without Topology it is accepted,
 * and a gang that gets the Topology flavor is NoFit saying why.
 */
static void topology_from_kueue_object(void **state)
{
	struct buf b = {.n = 0};
	struct carve_manifests *m;
	struct carve_admission *ad;
	const struct carve_wl_status *s;
	struct run r;
	unsigned line, col;
	size_t i;

	(void)state;
	zone_pool(&b, "za");
	zone_pool(&b, "zb");
	put(&b, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {name: zones}\n"
		"spec: {levels: [{nodeLabel: " ZONE "}, {nodeLabel: kubernetes.io/hostname}]}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: f}\nspec: {nodeLabels: {pool: gpu}, topologyName: zones}\n---\n");
	queue(&b, "cq", NULL, "nvidia.com/gpu", "f", "64");
	tas_workload(&b, "fill", 0, 1, 2, "za-0", NULL, NULL);
	tas_workload(&b, "zoned", 1, 4, 2, NULL, "required", ZONE);
	r = run_yaml(&b);
	s = st(&r, "ns/zoned");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	for (i = 0; i < 4; i++) /* za has 6 GPUs free, zb 8 */
		assert_int_equal(strncmp(node_of(&r, &s->podsets[0].pods[i]), "zb-", 3), 0);
	check_placer(&r);
	run_free(&r);

	/* A default level is not a level of Topology zones. */
	tas_workload(&b, "racked", 2, 1, 1, NULL, "preferred", RACK);
	m = tu_load(b.s);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	assert_int_equal(m->diags.nerrors, 1);
	pos_of(&b, "name: racked", "kueue.x-k8s.io/podset-preferred-topology", &line, &col);
	tu_assert_error(m, line, col, "Workload ns/racked podSet main: annotation "
			"kueue.x-k8s.io/podset-preferred-topology '" RACK "' is not a topology level "
			"of ClusterQueue cq's flavors (" ZONE ", kubernetes.io/hostname)");
	assert_true(carve_adm_find_workload(ad->adm, "ns/racked") < 0);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);

	/* A topologyName naming no Topology: an error at that field. */
	b.n = 0;
	zone_pool(&b, "za");
	put(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: f}\nspec: {nodeLabels: {pool: gpu}, topologyName: nope}\n---\n");
	queue(&b, "cq", NULL, "nvidia.com/gpu", "f", "64");
	m = tu_load(b.s);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	pos_of(&b, "name: f", "nope", &line, &col);
	tu_assert_error(m, line, col, "ResourceFlavor f: topologyName 'nope' names no Topology");
	assert_int_equal(m->diags.nerrors, 1);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);

	/* With a second flavor without Topology the rack level is accepted;
	 * the gang gets flavor f (first, quota fits), whose Topology lacks it. */
	b.n = 0;
	zone_pool(&b, "za");
	put(&b, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {name: zones}\n"
		"spec: {levels: [{nodeLabel: " ZONE "}, {nodeLabel: kubernetes.io/hostname}]}\n"
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
		"metadata: {name: f}\nspec: {nodeLabels: {pool: gpu}, topologyName: zones}\n---\n");
	flavor(&b, "plain", "gpu");
	put(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
		"spec:\n  namespaceSelector: {}\n  resourceGroups:\n"
		"  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n"
		"    - name: f\n      resources:\n      - {name: cpu, nominalQuota: \"100\"}\n"
		"      - {name: nvidia.com/gpu, nominalQuota: \"64\"}\n"
		"    - name: plain\n      resources:\n      - {name: cpu, nominalQuota: \"100\"}\n"
		"      - {name: nvidia.com/gpu, nominalQuota: \"64\"}\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: cq}\nspec: {clusterQueue: cq}\n---\n");
	tas_workload(&b, "racked", 2, 1, 1, NULL, "required", RACK);
	r = run_yaml(&b);
	s = st(&r, "ns/racked");
	assert_int_equal(s->state, CARVE_WL_PENDING);
	if (!strstr(s->message, "podSet main: topology level " RACK " is not a level of the "
			"Topology of flavor f"))
		fail_msg("message '%s'", s->message);
	assert_int_equal(free_units(&r), 8);
	check_placer(&r);
	run_free(&r);
}

/*
 * Requests no GPU can serve: an unknown MIG profile, a fraction above 1, a
 * gpu-memory above the largest GPU.  Each is an error naming the field at
 * its position; those workloads never reach the engine, the others are
 * admitted.
 */
static void impossible_requests(void **state)
{
	struct buf b = {.n = 0};
	struct carve_manifests *m;
	struct carve_admission *ad;
	unsigned line, col;

	(void)state;
	pool(&b, "m", 1, "A100-80GB", 1, "{mode: mig, mig: {layout: {\"3g.40gb\": 2}}}");
	pool(&b, "fr", 1, "A100-80GB", 1, "{mode: fraction}");
	put(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n"
		"---\n");
	queue(&b, "cq", NULL, "nvidia.com/mig-3g.40gb", "f", "8");
	workload(&b, "badmig", "cq", 1, 1, "nvidia.com/mig-5g.99gb", 1, NULL);
	workload(&b, "badfrac", "cq", 2, 1, NULL, 0, "1.5");
	workload(&b, "badmem", "cq", 3, 1, NULL, 0, "0.5");
	/* badmem also asks for 200000 MiB: more than the 81920 of an A100-80GB */
	{
		static const char ins[] = "gpu-memory: \"200000\", ";
		char *a = strstr(strstr(b.s, "name: badmem"), "{gpu-fraction") + 1;

		memmove(a + strlen(ins), a, strlen(a) + 1);
		memcpy(a, ins, strlen(ins));
		b.n += strlen(ins);
	}
	workload(&b, "okmig", "cq", 4, 2, "nvidia.com/mig-3g.40gb", 1, NULL);
	workload(&b, "okfrac", "cq", 5, 1, NULL, 0, "0.5");
	m = tu_load(b.s);
	tu_assert_clean(m);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	assert_int_equal(m->diags.nerrors, 3);
	pos_of(&b, "name: badmig", "nvidia.com/mig-5g.99gb", &line, &col);
	tu_assert_error(m, line, col, "Workload ns/badmig podSet main: resource "
			"nvidia.com/mig-5g.99gb: no GPU model offers MIG profile '5g.99gb'");
	pos_of(&b, "name: badfrac", "gpu-fraction", &line, &col);
	tu_assert_error(m, line, col, "Workload ns/badfrac podSet main: annotation gpu-fraction "
			"'1.5' is not a number above 0 and below 1");
	pos_of(&b, "name: badmem", "gpu-memory", &line, &col);
	tu_assert_error(m, line, col, "Workload ns/badmem podSet main: annotation gpu-memory "
			"200000 MiB is more than any GPU has (largest: A100-80GB, 81920 MiB)");
	assert_true(carve_adm_find_workload(ad->adm, "ns/badmig") < 0);
	assert_true(carve_adm_find_workload(ad->adm, "ns/badfrac") < 0);
	assert_true(carve_adm_find_workload(ad->adm, "ns/badmem") < 0);
	assert_true(carve_adm_run(ad->adm, ad->now, 100) > 0);
	assert_int_equal(carve_adm_status(ad->adm, (uint32_t)carve_adm_find_workload(
		ad->adm, "ns/okmig"))->state, CARVE_WL_ADMITTED);
	assert_int_equal(carve_adm_status(ad->adm, (uint32_t)carve_adm_find_workload(
		ad->adm, "ns/okfrac"))->state, CARVE_WL_ADMITTED);
	assert_int_equal(carve_adm_cq_usage(ad->adm, "cq", "f", "nvidia.com/mig-3g.40gb"), 2000);
	assert_int_equal(carve_adm_cq_usage(ad->adm, "cq", "f", "cpu"), 3000);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

/* ---- the next flavor when placement fails ---- */

/* ClusterQueue cq over cpu and nvidia.com/gpu with flavors fa then fb,
 * `gpus` nominal each, and whenCanBorrow as given (NULL: default). */
static void two_flavor_queue(struct buf *b, int gpus, const char *when_borrow)
{
	int f;

	put(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
	       "spec:\n  namespaceSelector: {}\n");
	if (when_borrow)
		put(b, "  flavorFungibility: {whenCanBorrow: %s}\n", when_borrow);
	put(b, "  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n");
	for (f = 0; f < 2; f++)
		put(b, "    - name: f%c\n      resources:\n      - {name: cpu, nominalQuota: \"100\"}\n"
		       "      - {name: nvidia.com/gpu, nominalQuota: \"%d\"}\n", "ab"[f], gpus);
	put(b, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
	       "metadata: {namespace: ns, name: cq}\nspec: {clusterQueue: cq}\n---\n");
}

/*
 * Flavor fa (one node of 4 GPUs) has the quota for 2 pods x 4 GPUs but not
 * the nodes; fb (one node of 8) has both: the gang goes to fb, charged
 * there only.  When neither flavor's nodes can hold it, it is NoFit naming
 * both flavors, holding nothing.
 */
static void next_flavor_on_placement(void **state)
{
	struct buf b = {.n = 0};
	const struct carve_wl_status *s;
	struct run r;
	size_t i, j;

	(void)state;
	pool(&b, "a", 1, "H100-80GB", 4, "{mode: exclusive}");
	pool(&b, "b", 1, "H100-80GB", 8, "{mode: exclusive}");
	flavor(&b, "fa", "a");
	flavor(&b, "fb", "b");
	two_flavor_queue(&b, 16, NULL);
	workload(&b, "gang", "cq", 1, 2, "nvidia.com/gpu", 4, NULL);
	r = run_yaml(&b);
	s = st(&r, "ns/gang");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	for (i = 0; i < s->podsets[0].n; i++)
		assert_string_equal(s->podsets[0].flavors[i], "fb");
	for (i = 0; i < 2; i++)
		assert_string_equal(node_of(&r, &s->podsets[0].pods[i]), "b-0");
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "fa", "nvidia.com/gpu"), 0);
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "fb", "nvidia.com/gpu"), 8000);
	check_placer(&r);
	run_free(&r);

	/* 3 pods x 4 GPUs: fa's node holds 1, fb's 2. */
	for (j = 0; j < 2; j++) {
		b.n = 0;
		pool(&b, "a", 1, "H100-80GB", 4, "{mode: exclusive}");
		pool(&b, "b", 1, "H100-80GB", 8, "{mode: exclusive}");
		flavor(&b, "fa", "a");
		flavor(&b, "fb", "b");
		two_flavor_queue(&b, 16, j ? "MayStopSearch" : "TryNextFlavor");
		workload(&b, "huge", "cq", 1, 3, "nvidia.com/gpu", 4, NULL);
		r = run_yaml(&b);
		expect_nofit(&r, "ns/huge");
		if (!strstr(st(&r, "ns/huge")->message, "(flavors tried for placement: fa, fb)"))
			fail_msg("message '%s'", st(&r, "ns/huge")->message);
		assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "fa", "nvidia.com/gpu"), 0);
		assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "fb", "nvidia.com/gpu"), 0);
		assert_int_equal(free_units(&r), 12);
		check_placer(&r);
		run_free(&r);
	}
}

/* ---- preemption to make room on the nodes ---- */

/* A Workload of 1 pod x gpus GPUs at priority prio, already admitted on
 * flavor f when admitted (status.admission), else pending. */
static void cq_workload(struct buf *b, const char *cq, const char *name, int sec, int prio,
			int gpus, bool admitted)
{
	put(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
	       "metadata: {name: %s, namespace: ns, creationTimestamp: \"2026-01-01T00:00:%02dZ\"}\n"
	       "spec:\n  queueName: %s\n  priority: %d\n  podSets:\n  - name: main\n    count: 1\n"
	       "    template:\n      spec:\n        containers:\n        - name: c\n"
	       "          resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"%d\"}}\n",
	    name, sec, cq, prio, gpus);
	if (admitted)
		put(b, "status:\n  admission:\n    clusterQueue: %s\n    podSetAssignments:\n"
		       "    - {name: main, count: 1, flavors: {cpu: f, nvidia.com/gpu: f}}\n", cq);
	put(b, "---\n");
}

static void prio_workload(struct buf *b, const char *name, int sec, int prio, int gpus,
			  bool admitted)
{
	cq_workload(b, "cq", name, sec, prio, gpus, admitted);
}

/* Inserts text before the first `before` in b. */
static void insert_before(struct buf *b, const char *before, const char *text)
{
	char *q = strstr(b->s, before);
	size_t k = strlen(text);

	assert_non_null(q);
	assert_true(b->n + k < sizeof(b->s));
	memmove(q + k, q, strlen(q) + 1);
	memcpy(q, text, k);
	b->n += k;
}

/*
 * One node of 4 GPUs holds low0 (priority 0, 1 GPU) and low1 (priority 1,
 * 3 GPUs); high (priority 10, 3 GPUs) fits the quota, not the node.
 * Releasing lowest priority first, low0 alone is not enough and low1
 * makes room; low0 is then given back (minimal set): only low1 is
 * preempted, and high is placed once it is evicted.
 */
static void preempt_for_nodes(void **state)
{
	struct buf b = {.n = 0};
	const struct carve_wl_status *s;
	struct run r;

	(void)state;
	pool(&b, "a", 1, "H100-80GB", 4, "{mode: exclusive}");
	flavor(&b, "f", "a");
	queue(&b, "cq", NULL, "nvidia.com/gpu", "f", "100");
	insert_before(&b, "  resourceGroups:", "  preemption: {withinClusterQueue: LowerPriority}\n");
	prio_workload(&b, "low0", 1, 0, 1, true);
	prio_workload(&b, "low1", 2, 1, 3, true);
	prio_workload(&b, "high", 3, 10, 3, false);
	r = build_yaml(&b);
	assert_int_equal(st(&r, "ns/low0")->podsets[0].npods, 1);
	assert_int_equal(st(&r, "ns/low1")->podsets[0].npods, 1);
	assert_true(carve_adm_cycle(r.ad->adm, r.ad->now) >= 0);
	s = st(&r, "ns/high");
	assert_int_equal(s->state, CARVE_WL_PENDING);
	assert_int_equal(s->pending_reason, CARVE_PEND_PREEMPTION_ISSUED);
	if (!strstr(s->message, "waiting for 1 preempted workload(s) to release their nodes"))
		fail_msg("message '%s'", s->message);
	s = st(&r, "ns/low1");
	assert_true(s->marked);
	assert_int_equal(s->preempt_reason, CARVE_PREEMPT_IN_CQ);
	assert_int_equal(s->preemptor, (uint32_t)carve_adm_find_workload(r.ad->adm, "ns/high"));
	assert_false(st(&r, "ns/low0")->marked);
	assert_int_equal(free_units(&r), 0); /* victims hold their GPUs until evicted */
	check_placer(&r);
	assert_true(carve_adm_evict_marked(r.ad->adm) >= 0);
	assert_true(carve_adm_cycle(r.ad->adm, r.ad->now) >= 0);
	assert_int_equal(st(&r, "ns/high")->state, CARVE_WL_ADMITTED);
	assert_int_equal(st(&r, "ns/high")->podsets[0].npods, 1);
	assert_int_equal(st(&r, "ns/low0")->state, CARVE_WL_ADMITTED);
	assert_int_equal(st(&r, "ns/low1")->state, CARVE_WL_PENDING);
	assert_int_equal(free_units(&r), 0);
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "f", "nvidia.com/gpu"), 4000);
	check_placer(&r);
	run_free(&r);

	/* Cohort: cqa (nominal 8, reclaimWithinCohort: Any) lends 4 to cqb,
	 * whose borrower fills the node; cqa's quota fits its 4 GPUs, the
	 * node does not: the borrower is reclaimed, though it outranks it. */
	b.n = 0;
	pool(&b, "a", 1, "H100-80GB", 4, "{mode: exclusive}");
	flavor(&b, "f", "a");
	queue(&b, "cqa", "co", "nvidia.com/gpu", "f", "8");
	insert_before(&b, "  resourceGroups:", "  preemption: {reclaimWithinCohort: Any}\n");
	queue(&b, "cqb", "co", "nvidia.com/gpu", "f", "0");
	cq_workload(&b, "cqb", "borrower", 1, 50, 4, true);
	cq_workload(&b, "cqa", "owner", 2, 0, 4, false);
	r = build_yaml(&b);
	assert_true(carve_adm_cycle(r.ad->adm, r.ad->now) >= 0);
	assert_int_equal(st(&r, "ns/owner")->pending_reason, CARVE_PEND_PREEMPTION_ISSUED);
	s = st(&r, "ns/borrower");
	assert_true(s->marked);
	assert_int_equal(s->preempt_reason, CARVE_PREEMPT_RECLAIM);
	check_placer(&r);
	assert_true(carve_adm_evict_marked(r.ad->adm) >= 0);
	assert_true(carve_adm_cycle(r.ad->adm, r.ad->now) >= 0);
	assert_int_equal(st(&r, "ns/owner")->state, CARVE_WL_ADMITTED);
	check_placer(&r);
	run_free(&r);

	/* Same node, but the running workloads outrank it: nothing to
	 * preempt, high stays NoFit and nothing is marked. */
	b.n = 0;
	pool(&b, "a", 1, "H100-80GB", 4, "{mode: exclusive}");
	flavor(&b, "f", "a");
	queue(&b, "cq", NULL, "nvidia.com/gpu", "f", "100");
	prio_workload(&b, "low0", 1, 20, 1, true);
	prio_workload(&b, "low1", 2, 20, 3, true);
	prio_workload(&b, "high", 3, 10, 3, false);
	r = run_yaml(&b);
	expect_nofit(&r, "ns/high");
	assert_false(st(&r, "ns/low0")->marked);
	assert_false(st(&r, "ns/low1")->marked);
	check_placer(&r);
	run_free(&r);
}

/*
 * fa's node is too small; fb would need preemption (its quota is used by
 * a lower-priority workload) and whenCanPreempt: MayStopSearch stops the
 * search there; fc fits.  The flavor needing preemption is skipped as
 * well and the gang lands on fc, preempting nothing.
 */
static void next_flavor_skips_preempting(void **state)
{
	struct buf b = {.n = 0};
	const struct carve_wl_status *s;
	struct run r;
	int f;

	(void)state;
	pool(&b, "a", 1, "H100-80GB", 4, "{mode: exclusive}");
	pool(&b, "b", 2, "H100-80GB", 8, "{mode: exclusive}");
	pool(&b, "c", 1, "H100-80GB", 8, "{mode: exclusive}");
	flavor(&b, "fa", "a");
	flavor(&b, "fb", "b");
	flavor(&b, "fc", "c");
	put(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
		"spec:\n  namespaceSelector: {}\n"
		"  preemption: {withinClusterQueue: LowerPriority}\n"
		"  flavorFungibility: {whenCanPreempt: MayStopSearch}\n"
		"  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n");
	for (f = 0; f < 3; f++)
		put(&b, "    - name: f%c\n      resources:\n      - {name: cpu, nominalQuota: \"100\"}\n"
			"      - {name: nvidia.com/gpu, nominalQuota: \"16\"}\n", "abc"[f]);
	put(&b, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
		"metadata: {namespace: ns, name: cq}\nspec: {clusterQueue: cq}\n---\n"
		"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
		"metadata: {name: holder, namespace: ns, creationTimestamp: \"2026-01-01T00:00:01Z\"}\n"
		"spec:\n  queueName: cq\n  priority: 0\n  podSets:\n  - name: main\n    count: 2\n"
		"    template:\n      spec:\n        containers:\n        - name: c\n"
		"          resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"8\"}}\n"
		"status:\n  admission:\n    clusterQueue: cq\n    podSetAssignments:\n"
		"    - {name: main, count: 2, flavors: {cpu: fb, nvidia.com/gpu: fb}}\n---\n");
	put(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
		"metadata: {name: gang, namespace: ns, creationTimestamp: \"2026-01-01T00:00:02Z\"}\n"
		"spec:\n  queueName: cq\n  priority: 10\n  podSets:\n  - name: main\n    count: 2\n"
		"    template:\n      spec:\n        containers:\n        - name: c\n"
		"          resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"4\"}}\n---\n");
	r = build_yaml(&b);
	assert_true(carve_adm_cycle(r.ad->adm, r.ad->now) >= 0);
	s = st(&r, "ns/gang");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_string_equal(node_of(&r, &s->podsets[0].pods[0]), "c-0");
	assert_string_equal(node_of(&r, &s->podsets[0].pods[1]), "c-0");
	assert_false(st(&r, "ns/holder")->marked);
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "fc", "nvidia.com/gpu"), 8000);
	check_placer(&r);
	run_free(&r);
}

/* ---- MIG quota in physical slices ---- */

/* ClusterQueue cq over cpu, two MIG profiles and the slice resources in
 * `slices` (a flow-sequence fragment), one flavor, generous counts. */
static void slice_queue(struct buf *b, const char *flv, const char *profs[2], const char *slices,
			int mem_nominal, int cmp_nominal)
{
	put(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
	       "spec:\n  namespaceSelector: {}\n  resourceGroups:\n"
	       "  - coveredResources: [cpu, nvidia.com/mig-%s, nvidia.com/mig-%s, %s]\n"
	       "    flavors:\n    - name: %s\n      resources:\n"
	       "      - {name: cpu, nominalQuota: \"1000\"}\n"
	       "      - {name: nvidia.com/mig-%s, nominalQuota: \"100\"}\n"
	       "      - {name: nvidia.com/mig-%s, nominalQuota: \"100\"}\n",
	    profs[0], profs[1], slices, flv, profs[0], profs[1]);
	if (strstr(slices, "memory"))
		put(b, "      - {name: carve.dev/mig-memory-slices, nominalQuota: \"%d\"}\n",
		    mem_nominal);
	if (strstr(slices, "compute"))
		put(b, "      - {name: carve.dev/mig-compute-slices, nominalQuota: \"%d\"}\n",
		    cmp_nominal);
	put(b, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
	       "metadata: {namespace: ns, name: cq}\nspec: {clusterQueue: cq}\n---\n");
}

/*
 * mig-memory-slices nominal 8 on A100-80GB: one 7g.80gb (8 slices) or
 * eight 1g.10gb (1 each), whichever comes first, never both; the charge
 * shows in the JSON usage.  The flavor has no gpu.product label and
 * 1g.10gb has other slices on an A100-40GB, so its model comes from the
 * nodes the flavor selects.
 */
static void mig_slices_quota(void **state)
{
	static const char *profs[2] = {"1g.10gb", "7g.80gb"};
	int order;

	(void)state;
	for (order = 0; order < 2; order++) {
		struct buf b = {.n = 0};
		struct run r;
		json_t *j, *ps;

		pool(&b, "m", 1, "A100-80GB", 2, "{mode: mig, mig: {layout: {\"1g.10gb\": 7}}}");
		pool(&b, "w", 1, "A100-80GB", 1, "{mode: mig, mig: {layout: {\"7g.80gb\": 1}}}");
		put(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
			"metadata: {name: f}\n---\n");
		slice_queue(&b, "f", profs, "carve.dev/mig-memory-slices", 8, 0);
		workload(&b, "big", "cq", order ? 2 : 1, 1, "nvidia.com/mig-7g.80gb", 1, NULL);
		workload(&b, "small", "cq", order ? 1 : 2, 8, "nvidia.com/mig-1g.10gb", 1, NULL);
		r = run_yaml(&b);
		assert_int_equal(st(&r, order ? "ns/small" : "ns/big")->state, CARVE_WL_ADMITTED);
		assert_int_equal(st(&r, order ? "ns/big" : "ns/small")->state, CARVE_WL_PENDING);
		assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "f",
						    "carve.dev/mig-memory-slices"), 8000);
		assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "f",
						    order ? "nvidia.com/mig-1g.10gb"
							  : "nvidia.com/mig-7g.80gb"),
				 order ? 8000 : 1000);
		check_placer(&r);
		j = carve_admission_result_json(r.ad);
		assert_non_null(j);
		ps = json_array_get(json_object_get(json_array_get(json_object_get(j, "admitted"), 0),
						    "podSets"), 0);
		assert_string_equal(json_string_value(json_object_get(json_object_get(
					    ps, "usage"), "carve.dev/mig-memory-slices")), "8");
		assert_string_equal(json_string_value(json_object_get(json_object_get(
					    ps, "flavors"), "carve.dev/mig-memory-slices")), "f");
		json_decref(j);
		run_free(&r);
	}
}

/* Quota only (no nodes): the model from the flavor's gpu.product label, or
 * from a profile whose slices are the same on every model; else an error. */
static void mig_slices_model(void **state)
{
	static const char *profs[2] = {"1g.10gb", "7g.80gb"};
	struct buf b = {.n = 0};
	struct carve_manifests *m;
	struct carve_admission *ad;
	unsigned line, col;

	(void)state;
	/* A100-40GB: a 1g.10gb takes 2 memory slices and 1 compute slice. */
	put(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a40}\n"
		"spec: {nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB}}\n---\n");
	slice_queue(&b, "a40", profs,
		    "carve.dev/mig-memory-slices, carve.dev/mig-compute-slices", 8, 7);
	workload(&b, "four", "cq", 1, 4, "nvidia.com/mig-1g.10gb", 1, NULL);
	workload(&b, "one", "cq", 2, 1, "nvidia.com/mig-1g.10gb", 1, NULL);
	m = tu_load(b.s);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	assert_int_equal(m->diags.nerrors, 0);
	assert_true(carve_adm_run(ad->adm, ad->now, 100) > 0);
	assert_int_equal(carve_adm_status(ad->adm, (uint32_t)carve_adm_find_workload(
		ad->adm, "ns/four"))->state, CARVE_WL_ADMITTED);
	assert_int_equal(carve_adm_status(ad->adm, (uint32_t)carve_adm_find_workload(
		ad->adm, "ns/one"))->state, CARVE_WL_PENDING);
	assert_int_equal(carve_adm_cq_usage(ad->adm, "cq", "a40", "carve.dev/mig-memory-slices"),
			 8000);
	assert_int_equal(carve_adm_cq_usage(ad->adm, "cq", "a40", "carve.dev/mig-compute-slices"),
			 4000);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);

	/* No label, no nodes: 7g.80gb is 8 + 7 slices wherever it exists; the
	 * 1g.10gb is not (A100-40GB vs A100-80GB), an error at the request. */
	b.n = 0;
	put(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: any}\n"
		"---\n");
	slice_queue(&b, "any", profs,
		    "carve.dev/mig-memory-slices, carve.dev/mig-compute-slices", 8, 7);
	workload(&b, "whole", "cq", 1, 1, "nvidia.com/mig-7g.80gb", 1, NULL);
	workload(&b, "unsure", "cq", 2, 1, "nvidia.com/mig-1g.10gb", 1, NULL);
	m = tu_load(b.s);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	assert_int_equal(m->diags.nerrors, 1);
	pos_of(&b, "name: unsure", "nvidia.com/mig-1g.10gb", &line, &col);
	tu_assert_error(m, line, col, "Workload ns/unsure podSet main: resource "
			"nvidia.com/mig-1g.10gb: ClusterQueue cq charges MIG slices, but");
	assert_true(carve_adm_find_workload(ad->adm, "ns/unsure") < 0);
	assert_true(carve_adm_run(ad->adm, ad->now, 100) > 0);
	assert_int_equal(carve_adm_cq_usage(ad->adm, "cq", "any", "carve.dev/mig-memory-slices"),
			 8000);
	assert_int_equal(carve_adm_cq_usage(ad->adm, "cq", "any", "carve.dev/mig-compute-slices"),
			 7000);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

/* ---- mixed Dynamic MIG layouts ---- */

/*
 * --mig dynamic with two idle A100-80GB (7g.80gb each): one 3g.40gb pod
 * and three 1g.10gb pods pending.  The first repartition takes the
 * 3g.40gb and fills the rest with the wanted 1g.10gb (4 fit beside it),
 * so both workloads share GPU 0 and GPU 1 is left alone; without the mix
 * GPU 0 would become 2 x 3g.40gb and GPU 1 7 x 1g.10gb.
 */
static void mig_dynamic_mixed(void **state)
{
	static const char *profs[2] = {"1g.10gb", "3g.40gb"};
	struct carve_admission_opts o = {.mig_dynamic = true};
	const struct carve_repartition *rp;
	const struct carve_mig_layout *l;
	const struct carve_mig_model *mm;
	struct buf b = {.n = 0};
	struct carve_manifests *m;
	struct carve_admission *ad;
	struct carve_error err;
	unsigned i;

	(void)state;
	pool(&b, "m", 1, "A100-80GB", 2, "{mode: mig, mig: {layout: {\"7g.80gb\": 1}}}");
	put(&b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n"
		"---\n");
	slice_queue(&b, "f", profs, "carve.dev/mig-compute-slices", 0, 100);
	workload(&b, "three", "cq", 1, 1, "nvidia.com/mig-3g.40gb", 1, NULL);
	workload(&b, "ones", "cq", 2, 3, "nvidia.com/mig-1g.10gb", 1, NULL);
	m = tu_load(b.s);
	ad = carve_admission_build_opts(m, &o);
	assert_non_null(ad);
	assert_int_equal(m->diags.nerrors, 0);
	assert_true(carve_adm_run(ad->adm, ad->now, 100) > 0);
	assert_int_equal(carve_adm_status(ad->adm, (uint32_t)carve_adm_find_workload(
		ad->adm, "ns/three"))->state, CARVE_WL_ADMITTED);
	assert_int_equal(carve_adm_status(ad->adm, (uint32_t)carve_adm_find_workload(
		ad->adm, "ns/ones"))->state, CARVE_WL_ADMITTED);
	assert_int_equal(carve_placer_repartitions(ad->placer, &rp), 1);
	assert_int_equal(rp[0].gpu, 0);
	mm = carve_mig_model_find("A100-80GB");
	l = carve_placer_mig_layout(ad->placer, 0);
	assert_int_equal(l->n, 5);
	for (i = 0; i < 4; i++) {
		assert_string_equal(mm->profiles[l->inst[i].profile].name, "1g.10gb");
		assert_int_equal(l->inst[i].start, i);
	}
	assert_string_equal(mm->profiles[l->inst[4].profile].name, "3g.40gb");
	assert_int_equal(l->inst[4].start, 4);
	assert_int_equal(carve_placer_gpu_free_units(ad->placer, 0), 1); /* one 1g.10gb */
	assert_int_equal(carve_placer_mig_layout(ad->placer, 1)->n, 1);
	if (carve_placer_check(ad->placer, &err))
		fail_msg("carve_placer_check: %s", err.text);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

/* A flavor's nodeLabels keep its pods in its pool, even with room elsewhere. */
static void flavor_labels_restrict(void **state)
{
	struct buf b = {.n = 0};
	struct run r;
	const struct carve_wl_status *s;

	(void)state;
	pool(&b, "a", 1, "H100-80GB", 4, "{mode: exclusive}");
	pool(&b, "b", 1, "H100-80GB", 4, "{mode: exclusive}");
	flavor(&b, "f-b", "b");
	queue(&b, "cq", NULL, "nvidia.com/gpu", "f-b", "8");
	workload(&b, "one", "cq", 1, 1, "nvidia.com/gpu", 4, NULL);
	workload(&b, "two", "cq", 2, 1, "nvidia.com/gpu", 4, NULL);
	r = run_yaml(&b);
	s = st(&r, "ns/one");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_string_equal(node_of(&r, &s->podsets[0].pods[0]), "b-0");
	expect_nofit(&r, "ns/two");
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq", "f-b", "nvidia.com/gpu"), 4000);
	check_placer(&r);
	run_free(&r);
}

/* ---- property: random pools and workloads ---- */

static uint64_t prng;

static uint32_t rnd(uint32_t n)
{
	uint64_t z = (prng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (uint32_t)(z % n);
}

#define PR_NRES 4
static const char *const pr_res[PR_NRES] = {"cpu", "nvidia.com/gpu", "nvidia.com/mig-3g.40gb",
					    "nvidia.com/mig-1g.10gb"};

struct pr_wl {
	char key[32];
	int cq, count;
	int64_t milli[PR_NRES]; /* per pod */
};

static void pr_pool(struct buf *b, int i)
{
	static const char *const sharing[] = {
		"{mode: exclusive}",
		"{mode: mig, mig: {layout: {\"3g.40gb\": 2}}}",
		"{mode: mig, mig: {layout: {\"1g.10gb\": 7}}}",
		"{mode: timeslice, timeSlicing: {replicas: 3}}",
		"{mode: fraction}",
	};
	static const char *const model[] = {"H100-80GB", "A100-80GB", "A100-80GB", "L40S", "L4"};
	char name[16];
	int mode = (int)rnd(5);

	snprintf(name, sizeof(name), "p%d", i);
	pool(b, name, 1 + (int)rnd(3), model[mode], mode == 1 || mode == 2 ? 1 : 1 + (int)rnd(3),
	     sharing[mode]);
	snprintf(name, sizeof(name), "f%d", i);
	put(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: %s}\n"
	       "spec: {nodeLabels: {pool: p%d}}\n---\n", name, i);
}

static void pr_cq(struct buf *b, int q, int npools)
{
	int f, r;

	put(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q%d}\n"
	       "spec:\n  namespaceSelector: {}\n  cohortName: co\n", q);
	if (q == 0)
		put(b, "  preemption: {reclaimWithinCohort: Any}\n");
	put(b, "  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu, "
	       "nvidia.com/mig-3g.40gb, nvidia.com/mig-1g.10gb]\n    flavors:\n");
	for (f = 0; f < npools; f++) {
		put(b, "    - name: f%d\n      resources:\n", f);
		for (r = 0; r < PR_NRES; r++)
			put(b, "      - {name: %s, nominalQuota: \"%d\"}\n", pr_res[r],
			    r ? (int)rnd(8) : 1000);
	}
	put(b, "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
	       "metadata: {namespace: ns, name: q%d}\nspec: {clusterQueue: q%d}\n---\n", q, q);
}

static void pr_workload(struct buf *b, struct pr_wl *w, int i)
{
	static const char *const fr[] = {"0.25", "0.5"};
	int kind = (int)rnd(5), per = 1;

	memset(w, 0, sizeof(*w));
	snprintf(w->key, sizeof(w->key), "ns/w%d", i);
	w->cq = (int)rnd(2);
	w->count = 1 + (int)rnd(3);
	w->milli[0] = 1000;
	put(b, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n"
	       "metadata: {name: w%d, namespace: ns, creationTimestamp: \"2026-01-01T00:00:%02dZ\"}\n"
	       "spec:\n  queueName: q%d\n  podSets:\n  - name: main\n    count: %d\n"
	       "    template:\n", i, i % 60, w->cq, w->count);
	if (kind == 4)
		put(b, "      metadata: {annotations: {gpu-fraction: \"%s\"}}\n", fr[rnd(2)]);
	put(b, "      spec:\n        containers:\n        - name: c\n"
	       "          resources: {requests: {cpu: \"1\"");
	if (kind >= 1 && kind <= 3) {
		per = kind == 1 ? 1 + (int)rnd(2) : 1;
		put(b, ", %s: \"%d\"", pr_res[kind], per);
		w->milli[kind] = per * 1000;
	}
	put(b, "}}\n---\n");
}


/* ---- admitted workloads holding exact placements (carve_wl_spec.places) ---- */

/* The id of the first node whose name starts with prefix. */
static uint32_t node_id(const struct run *r, const char *prefix)
{
	size_t i, n = carve_cluster_node_count(r->ad->inv->cluster);

	for (i = 0; i < n; i++)
		if (!strncmp(carve_cluster_node(r->ad->inv->cluster, (uint32_t)i)->name, prefix,
			     strlen(prefix)))
			return (uint32_t)i;
	fail_msg("no node %s*", prefix);
	return 0;
}

/* GPU k of node id (cluster-wide GPU id). */
static uint32_t gpu_of(const struct run *r, uint32_t node, uint32_t k)
{
	return carve_cluster_node(r->ad->inv->cluster, node)->gpu_first + k;
}

/* One pod's placement: node, then (gpu, mig, replica, milli) per device. */
static struct carve_pod_place one_place(uint32_t node, int ndevs, const struct carve_dev *d)
{
	struct carve_pod_place pl;

	memset(&pl, 0, sizeof(pl));
	pl.node = node;
	pl.ndevs = ndevs;
	if (ndevs)
		memcpy(pl.devs, d, (size_t)ndevs * sizeof(*d));
	pl.cpu_milli = 1000;
	return pl;
}

static struct carve_pod_place none_place(void)
{
	struct carve_pod_place pl;

	memset(&pl, 0, sizeof(pl));
	pl.node = CARVE_PLACE_NONE;
	return pl;
}

/* Adds admitted workload ns/name of count pods (cpu 1, res: per each, or
 * a gpu fraction of frac_milli) on flavor flv of cq, holding places. */
static int add_placed(struct run *r, const char *name, const char *cq, const char *flv,
		      const char *res, int per, int frac_milli, int count,
		      const struct carve_pod_place *places, size_t nplaces, bool admitted)
{
	char key[64];
	struct carve_req reqs[2] = {{"cpu", 1000}, {res, (int64_t)per * 1000}};
	struct carve_label fl[2] = {{"cpu", flv}, {res, flv}};
	struct carve_podset_spec ps;
	struct carve_ps_admission psa;
	struct carve_wl_spec w;
	struct carve_error err = {0, ""};
	int id;

	snprintf(key, sizeof(key), "ns/%s", name);
	memset(&ps, 0, sizeof(ps));
	ps.name = "main";
	ps.count = count;
	ps.min_count = count;
	ps.nreqs = res ? 2 : 1;
	ps.reqs = reqs;
	ps.gpu_milli = frac_milli;
	psa.podset = "main";
	psa.count = count;
	psa.n = res ? 2 : 1;
	psa.flavors = fl;
	memset(&w, 0, sizeof(w));
	w.key = key;
	w.cq = cq;
	w.admitted = admitted;
	w.nadmission = 1;
	w.admission = &psa;
	w.npodsets = 1;
	w.podsets = &ps;
	w.nplaces = nplaces;
	w.places = places;
	id = carve_adm_add_workload(r->ad->adm, &w, &err);
	if (id < 0 && !strstr(err.text, "placements"))
		fail_msg("add %s: %s", key, err.text);
	return id;
}

/* The sandbox for the tests below: a node of each sharing mode, a
 * ClusterQueue (and flavor) over each, no workloads. */
static struct run places_cluster(void)
{
	struct buf b = {.n = 0};
	struct run r;

	pool(&b, "x", 1, "H100-80GB", 4, "{mode: exclusive}");
	pool(&b, "m", 1, "A100-80GB", 1, "{mode: mig, mig: {layout: {\"3g.40gb\": 2}}}");
	pool(&b, "ts", 1, "L40S", 1, "{mode: timeslice, timeSlicing: {replicas: 4}}");
	pool(&b, "fr", 1, "L4", 2, "{mode: fraction}");
	flavor(&b, "f-x", "x");
	flavor(&b, "f-m", "m");
	flavor(&b, "f-ts", "ts");
	flavor(&b, "f-fr", "fr");
	queue(&b, "cq-x", NULL, "nvidia.com/gpu", "f-x", "16");
	queue(&b, "cq-m", NULL, "nvidia.com/mig-3g.40gb", "f-m", "4");
	queue(&b, "cq-ts", NULL, "nvidia.com/gpu", "f-ts", "8");
	queue(&b, "cq-fr", NULL, NULL, "f-fr", NULL);
	r = build_yaml(&b);
	return r;
}

static void expect_pods(const struct run *r, const char *key, const struct carve_pod_place *want,
			size_t n)
{
	const struct carve_wl_status *s = st(r, key);
	size_t i;
	int k;

	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_int_equal(s->podsets[0].npods, n);
	for (i = 0; i < n; i++) {
		const struct carve_pod_place *got = &s->podsets[0].pods[i];

		assert_int_equal(got->node, want[i].node);
		assert_int_equal(got->ndevs, want[i].ndevs);
		for (k = 0; k < got->ndevs; k++) {
			assert_int_equal(got->devs[k].gpu, want[i].devs[k].gpu);
			assert_int_equal(got->devs[k].mig, want[i].devs[k].mig);
			assert_int_equal(got->devs[k].replica, want[i].devs[k].replica);
			assert_int_equal(got->devs[k].milli, want[i].devs[k].milli);
		}
	}
}

/* Each kind of device kept exactly: a whole GPU (the last, not the one
 * the policy would pick), a MIG instance (the second slot), a time-slice
 * replica (number 2), a fraction (of the second GPU). */
static void places_exact(void **state)
{
	struct run r = places_cluster();
	uint32_t nx = node_id(&r, "x-"), nm = node_id(&r, "m-"), nt = node_id(&r, "ts-");
	uint32_t nf = node_id(&r, "fr-");
	struct carve_dev whole = {gpu_of(&r, nx, 3), -1, -1, 0};
	struct carve_dev mig = {gpu_of(&r, nm, 0), 1, -1, 0};
	struct carve_dev rep = {gpu_of(&r, nt, 0), -1, 2, 0};
	struct carve_dev frac = {gpu_of(&r, nf, 1), -1, -1, 500};
	struct carve_pod_place p[4];

	(void)state;
	p[0] = one_place(nx, 1, &whole);
	p[1] = one_place(nm, 1, &mig);
	p[2] = one_place(nt, 1, &rep);
	p[3] = one_place(nf, 1, &frac);
	assert_true(add_placed(&r, "whole", "cq-x", "f-x", "nvidia.com/gpu", 1, 0, 1, &p[0], 1,
			       true) >= 0);
	assert_true(add_placed(&r, "mig", "cq-m", "f-m", "nvidia.com/mig-3g.40gb", 1, 0, 1, &p[1],
			       1, true) >= 0);
	assert_true(add_placed(&r, "rep", "cq-ts", "f-ts", "nvidia.com/gpu", 1, 0, 1, &p[2], 1,
			       true) >= 0);
	assert_true(add_placed(&r, "frac", "cq-fr", "f-fr", NULL, 0, 500, 1, &p[3], 1, true) >= 0);
	expect_pods(&r, "ns/whole", &p[0], 1);
	expect_pods(&r, "ns/mig", &p[1], 1);
	expect_pods(&r, "ns/rep", &p[2], 1);
	expect_pods(&r, "ns/frac", &p[3], 1);
	assert_int_equal(carve_placer_gpu_free_units(r.ad->placer, whole.gpu), 0);
	assert_int_equal(carve_placer_gpu_free_units(r.ad->placer, gpu_of(&r, nx, 0)), 1);
	assert_int_equal(carve_placer_gpu_free_units(r.ad->placer, mig.gpu), 1);
	assert_int_equal(carve_placer_gpu_free_units(r.ad->placer, rep.gpu), 3);
	assert_int_equal(carve_placer_gpu_free_milli(r.ad->placer, frac.gpu), 500);
	assert_int_equal(carve_placer_gpu_free_milli(r.ad->placer, gpu_of(&r, nf, 0)), 1000);
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq-x", "f-x", "nvidia.com/gpu"), 1000);
	check_engine(&r);
	check_placer(&r);
	/* Finishing gives exactly those back. */
	assert_int_equal(carve_adm_finish(r.ad->adm, (uint32_t)carve_adm_find_workload(
							     r.ad->adm, "ns/mig")), 0);
	assert_int_equal(carve_placer_gpu_free_units(r.ad->placer, mig.gpu), 2);
	check_engine(&r);
	check_placer(&r);
	run_free(&r);
}

/* Two workloads naming the same device: the second stays admitted (its
 * quota held) without a placement, says why, and holds no device. */
static void places_same_device(void **state)
{
	struct run r = places_cluster();
	uint32_t nx = node_id(&r, "x-"), nt = node_id(&r, "ts-");
	struct carve_dev d = {gpu_of(&r, nx, 2), -1, -1, 0};
	struct carve_dev rep = {gpu_of(&r, nt, 0), -1, 1, 0};
	struct carve_pod_place p = one_place(nx, 1, &d), q = one_place(nt, 1, &rep);
	const struct carve_wl_status *s;

	(void)state;
	assert_true(add_placed(&r, "first", "cq-x", "f-x", "nvidia.com/gpu", 1, 0, 1, &p, 1,
			       true) >= 0);
	assert_true(add_placed(&r, "second", "cq-x", "f-x", "nvidia.com/gpu", 1, 0, 1, &p, 1,
			       true) >= 0);
	expect_pods(&r, "ns/first", &p, 1);
	s = st(&r, "ns/second");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_int_equal(s->podsets[0].npods, 0);
	if (!strstr(s->message, "admitted without a placement (podSet main pod 1 holds devices "
			"that are not free"))
		fail_msg("message '%s'", s->message);
	assert_int_equal(free_units(&r), 3 + 2 + 4 + 2);
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq-x", "f-x", "nvidia.com/gpu"), 2000);
	/* The same replica twice too; another replica of that GPU is fine. */
	assert_true(add_placed(&r, "r1", "cq-ts", "f-ts", "nvidia.com/gpu", 1, 0, 1, &q, 1,
			       true) >= 0);
	assert_true(add_placed(&r, "r2", "cq-ts", "f-ts", "nvidia.com/gpu", 1, 0, 1, &q, 1,
			       true) >= 0);
	assert_int_equal(st(&r, "ns/r2")->podsets[0].npods, 0);
	q.devs[0].replica = 3;
	assert_true(add_placed(&r, "r3", "cq-ts", "f-ts", "nvidia.com/gpu", 1, 0, 1, &q, 1,
			       true) >= 0);
	expect_pods(&r, "ns/r3", &q, 1);
	assert_int_equal(carve_placer_gpu_free_units(r.ad->placer, rep.gpu), 2);
	check_engine(&r);
	check_placer(&r);
	run_free(&r);
}

/* A gang of 3 (one GPU each) with one pod bound: the two others are
 * placed around it, in pod order, on other GPUs. */
static void places_half_gang_completed(void **state)
{
	struct run r = places_cluster();
	uint32_t nx = node_id(&r, "x-");
	struct carve_dev d = {gpu_of(&r, nx, 1), -1, -1, 0};
	struct carve_pod_place p[3];
	const struct carve_wl_status *s;

	(void)state;
	p[0] = none_place();
	p[1] = one_place(nx, 1, &d);
	p[2] = none_place();
	assert_true(add_placed(&r, "gang", "cq-x", "f-x", "nvidia.com/gpu", 1, 0, 3, p, 3,
			       true) >= 0);
	s = st(&r, "ns/gang");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_int_equal(s->podsets[0].npods, 3);
	assert_int_equal(s->podsets[0].pods[1].devs[0].gpu, d.gpu);
	assert_int_equal(s->podsets[0].pods[0].node, nx);
	assert_int_equal(s->podsets[0].pods[2].node, nx);
	assert_int_not_equal(s->podsets[0].pods[0].devs[0].gpu, d.gpu);
	assert_int_not_equal(s->podsets[0].pods[2].devs[0].gpu, d.gpu);
	assert_int_not_equal(s->podsets[0].pods[0].devs[0].gpu, s->podsets[0].pods[2].devs[0].gpu);
	assert_int_equal(carve_placer_gpu_free_units(r.ad->placer, gpu_of(&r, nx, 0)) +
			 carve_placer_gpu_free_units(r.ad->placer, gpu_of(&r, nx, 1)) +
			 carve_placer_gpu_free_units(r.ad->placer, gpu_of(&r, nx, 2)) +
			 carve_placer_gpu_free_units(r.ad->placer, gpu_of(&r, nx, 3)), 1);
	check_engine(&r);
	check_placer(&r);
	assert_int_equal(carve_adm_finish(r.ad->adm, (uint32_t)carve_adm_find_workload(
							     r.ad->adm, "ns/gang")), 0);
	assert_int_equal(free_units(&r), 4 + 2 + 4 + 2);
	check_placer(&r);
	run_free(&r);
}

/* A gang of 3 x 2 GPUs with one pod bound on GPUs 0 and 1: the two
 * others need 4 GPUs, 2 are left.  Admitted without a placement, its
 * bound pod's GPUs not held either. */
static void places_half_gang_stuck(void **state)
{
	struct run r = places_cluster();
	uint32_t nx = node_id(&r, "x-");
	struct carve_dev d[2] = {{gpu_of(&r, nx, 0), -1, -1, 0}, {gpu_of(&r, nx, 1), -1, -1, 0}};
	struct carve_pod_place p[3];
	const struct carve_wl_status *s;

	(void)state;
	p[0] = one_place(nx, 2, d);
	p[1] = none_place();
	p[2] = none_place();
	assert_true(add_placed(&r, "gang", "cq-x", "f-x", "nvidia.com/gpu", 2, 0, 3, p, 3,
			       true) >= 0);
	s = st(&r, "ns/gang");
	assert_int_equal(s->state, CARVE_WL_ADMITTED);
	assert_int_equal(s->podsets[0].npods, 0);
	if (!strstr(s->message, "admitted without a placement (quota fits but no placement"))
		fail_msg("message '%s'", s->message);
	assert_int_equal(free_units(&r), 4 + 2 + 4 + 2);
	assert_int_equal(carve_adm_cq_usage(r.ad->adm, "cq-x", "f-x", "nvidia.com/gpu"), 6000);
	check_engine(&r);
	check_placer(&r);
	run_free(&r);
}

/* Bad lists: not one place per admitted pod, places for a pending
 * workload, a device on a GPU of another node. */
static void places_bad(void **state)
{
	struct run r = places_cluster();
	uint32_t nx = node_id(&r, "x-"), nm = node_id(&r, "m-");
	struct carve_dev d = {gpu_of(&r, nx, 0), -1, -1, 0};
	struct carve_pod_place p[2];

	(void)state;
	p[0] = one_place(nx, 1, &d);
	p[1] = none_place();
	assert_int_equal(add_placed(&r, "short", "cq-x", "f-x", "nvidia.com/gpu", 1, 0, 3, p, 2,
				    true), CARVE_EINVAL);
	assert_int_equal(add_placed(&r, "pending", "cq-x", "f-x", "nvidia.com/gpu", 1, 0, 2, p, 2,
				    false), CARVE_EINVAL);
	assert_true(carve_adm_find_workload(r.ad->adm, "ns/short") < 0);
	assert_int_equal(free_units(&r), 4 + 2 + 4 + 2);
	p[0] = one_place(nm, 1, &d); /* GPU of node x, on node m */
	assert_true(add_placed(&r, "astray", "cq-x", "f-x", "nvidia.com/gpu", 1, 0, 1, p, 1,
			       true) >= 0);
	assert_int_equal(st(&r, "ns/astray")->podsets[0].npods, 0);
	assert_non_null(strstr(st(&r, "ns/astray")->message, "podSet main pod 1 names a node or "
			       "GPU the cluster does not have (or a GPU of another node)"));
	assert_int_equal(free_units(&r), 4 + 2 + 4 + 2);
	check_engine(&r);
	check_placer(&r);
	run_free(&r);
}

/* After a cycle: the placer and the engine are sound, admitted gangs are
 * placed whole, and each queue's usage is what its admitted workloads
 * request. */
static void pr_check(const struct run *r, const struct pr_wl *w, size_t nw, int npools)
{
	int64_t want[2][8][PR_NRES];
	size_t i, k;
	int q, f, res;

	check_placer(r);
	check_engine(r);
	memset(want, 0, sizeof(want));
	for (i = 0; i < nw; i++) {
		const struct carve_wl_status *s = st(r, w[i].key);
		const struct carve_ps_result *ps;

		if (s->state != CARVE_WL_ADMITTED)
			continue;
		assert_int_equal(s->npodsets, 1);
		ps = &s->podsets[0];
		if (ps->npods != (size_t)ps->count)
			fail_msg("%s: %zu pods for count %d", w[i].key, ps->npods, ps->count);
		for (k = 0; k < ps->n; k++) {
			for (res = 0; res < PR_NRES && strcmp(pr_res[res], ps->resources[k]); res++)
				;
			assert_true(res < PR_NRES);
			f = atoi(ps->flavors[k] + 1);
			want[w[i].cq][f][res] += (int64_t)ps->count * w[i].milli[res];
		}
	}
	for (q = 0; q < 2; q++)
		for (f = 0; f < npools; f++)
			for (res = 0; res < PR_NRES; res++) {
				char cq[16], fl[16];

				snprintf(cq, sizeof(cq), "q%d", q);
				snprintf(fl, sizeof(fl), "f%d", f);
				if (carve_adm_cq_usage(r->ad->adm, cq, fl, pr_res[res]) !=
				    want[q][f][res])
					fail_msg("%s/%s/%s: usage %lld, admitted %lld", cq, fl,
						 pr_res[res],
						 (long long)carve_adm_cq_usage(r->ad->adm, cq, fl,
									       pr_res[res]),
						 (long long)want[q][f][res]);
			}
}

static void property_random(void **state)
{
	int trial, admitted = 0, placement_nofit = 0;

	(void)state;
	prng = 20261202;
	for (trial = 0; trial < 150; trial++) {
		static struct buf b;
		struct pr_wl w[12];
		struct run r;
		int npools = 1 + (int)rnd(3), nw = 4 + (int)rnd(9), i, c, units0;

		b.n = 0;
		for (i = 0; i < npools; i++)
			pr_pool(&b, i);
		pr_cq(&b, 0, npools);
		pr_cq(&b, 1, npools);
		for (i = 0; i < nw; i++)
			pr_workload(&b, &w[i], i);
		r = build_yaml(&b);
		units0 = free_units(&r);
		for (c = 0; c < 8; c++) {
			if (c)
				carve_adm_evict_marked(r.ad->adm);
			assert_true(carve_adm_cycle(r.ad->adm, r.ad->now + c) >= 0);
			pr_check(&r, w, (size_t)nw, npools);
			/* Finish one admitted workload, sometimes. */
			for (i = 0; i < nw && rnd(2); i++) {
				const struct carve_wl_status *s = st(&r, w[i].key);

				if (s->state == CARVE_WL_ADMITTED && !s->marked) {
					admitted++;
					assert_int_equal(carve_adm_finish(r.ad->adm,
						(uint32_t)carve_adm_find_workload(r.ad->adm,
										  w[i].key)), 0);
					break;
				}
			}
			for (i = 0; i < nw; i++)
				if (strstr(st(&r, w[i].key)->message, "no placement"))
					placement_nofit++;
			pr_check(&r, w, (size_t)nw, npools);
		}
		/* Finishing everything gives every device back. */
		for (i = 0; i < nw; i++)
			if (st(&r, w[i].key)->state != CARVE_WL_FINISHED)
				carve_adm_finish(r.ad->adm,
						 (uint32_t)carve_adm_find_workload(r.ad->adm, w[i].key));
		assert_int_equal(free_units(&r), units0);
		check_placer(&r);
		run_free(&r);
	}
	print_message("finished %d admitted workloads; %d placement NoFits seen\n", admitted, placement_nofit);
	/* Both outcomes were exercised. */
	assert_true(admitted > 20);
	assert_true(placement_nofit > 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_gang_nofit),
		cmocka_unit_test(mig_gang_nofit),
		cmocka_unit_test(fraction_gang_nofit),
		cmocka_unit_test(timeslice_replicas),
		cmocka_unit_test(timeslice_fail_gt_one),
		cmocka_unit_test(topology_required_preferred),
		cmocka_unit_test(topology_unknown_level),
		cmocka_unit_test(topology_from_kueue_object),
		cmocka_unit_test(flavor_labels_restrict),
		cmocka_unit_test(impossible_requests),
		cmocka_unit_test(mig_dynamic_mixed),
		cmocka_unit_test(preempt_for_nodes),
		cmocka_unit_test(next_flavor_on_placement),
		cmocka_unit_test(next_flavor_skips_preempting),
		cmocka_unit_test(mig_slices_quota),
		cmocka_unit_test(mig_slices_model),
		cmocka_unit_test(places_exact),
		cmocka_unit_test(places_same_device),
		cmocka_unit_test(places_half_gang_completed),
		cmocka_unit_test(places_half_gang_stuck),
		cmocka_unit_test(places_bad),
		cmocka_unit_test(property_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
