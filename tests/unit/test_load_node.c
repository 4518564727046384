/*
 * test_load_node.c - v1 Node, carve.dev/v1alpha1 NodePool and the openb
 * node CSV: the openb trace files (data/openb) load clean with the right
 * counts, NodePool good shapes and every local check with its
 * exact line, column and message, CSV header/field/row errors.
 */
#include "testutil.h"

/* ---- helpers ---- */

static struct carve_manifests *load_csv(const char *text)
{
	struct carve_manifests *m = carve_manifests_create();

	assert_non_null(m);
	assert_int_equal(carve_manifests_load_csv(m, "n.csv", text, strlen(text)), 0);
	return m;
}

/* Loads data/openb/<file> of the source tree; fails when it cannot. */
static struct carve_manifests *load_openb(const char *file)
{
	struct carve_manifests *m;
	char rel[256], path[4096];

	snprintf(rel, sizeof(rel), "data/openb/%s", file);
	tu_source_path(path, sizeof(path), rel);
	m = carve_manifests_create();
	assert_non_null(m);
	if (carve_manifests_load_path(m, path) != 0) {
		tu_dump(m);
		fail_msg("cannot load %s", path);
	}
	return m;
}

static const struct carve_resq *res(const struct carve_reslist *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	fail_msg("no resource %s", name);
	return NULL;
}

static const char *label(const struct carve_kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return l->v[i].value;
	return NULL;
}

#define MI (1024LL * 1024 * 1000) /* 1Mi in milli-bytes */

/* ---- openb ---- */

static void openb_yaml(void **state)
{
	struct carve_manifests *m = load_openb("openb_node_list_gpu_node.yaml");
	const struct carve_mf_node *n;
	size_t i, gpus = 0;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->nnodes, 1213);
	assert_int_equal(m->ndocs, 1213);
	n = &m->nodes[0];
	assert_string_equal(n->meta.name, "openb-node-0000");
	assert_null(n->meta.ns);
	assert_string_equal(label(&n->meta.labels, "alibabacloud.com/gpu-card-model"), "P100");
	assert_int_equal(res(&n->capacity, "cpu")->milli, 64000);
	assert_int_equal(res(&n->capacity, "memory")->milli, 262144 * MI);
	assert_int_equal(res(&n->allocatable, "pods")->milli, 1001000);
	assert_int_equal(res(&n->allocatable, "alibabacloud.com/gpu-milli")->milli, 2000000);
	assert_int_equal(n->meta.pos.line, 1);
	for (i = 0; i < m->nnodes; i++)
		gpus += (size_t)(res(&m->nodes[i].capacity, "alibabacloud.com/gpu-count")->milli / 1000);
	assert_int_equal(gpus, 6212);
	carve_manifests_destroy(m);
}

static void openb_csv_gpu(void **state)
{
	struct carve_manifests *m = load_openb("openb_node_list_gpu_node.csv");
	size_t i, gpus = 0;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->ncsvnodes, 1213);
	assert_string_equal(m->csvnodes[0].name, "openb-node-0000");
	assert_int_equal(m->csvnodes[0].cpu_milli, 64000);
	assert_int_equal(m->csvnodes[0].memory_mib, 262144);
	assert_int_equal(m->csvnodes[0].gpus, 2);
	assert_string_equal(m->csvnodes[0].model, "P100");
	assert_int_equal(m->csvnodes[0].pos.line, 2);
	assert_int_equal(m->csvnodes[1212].pos.line, 1214);
	for (i = 0; i < m->ncsvnodes; i++)
		gpus += (size_t)m->csvnodes[i].gpus;
	assert_int_equal(gpus, 6212);
	carve_manifests_destroy(m);
}

static void openb_csv_all(void **state)
{
	struct carve_manifests *m = load_openb("openb_node_list_all_node.csv");
	size_t i, cpu_only = 0, gpus = 0;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->ncsvnodes, 1523);
	for (i = 0; i < m->ncsvnodes; i++) {
		gpus += (size_t)m->csvnodes[i].gpus;
		if (!m->csvnodes[i].gpus) {
			cpu_only++;
			assert_string_equal(m->csvnodes[i].model, "");
		}
	}
	assert_int_equal(cpu_only, 310);
	assert_int_equal(gpus, 6212);
	carve_manifests_destroy(m);
}

/* ---- Node ---- */

static void node_full(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\n"
		"kind: Node\n"
		"metadata:\n"
		"  name: gpu-1\n"
		"  labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
		"  uid: 1234\n"
		"spec:\n"
		"  podCIDR: 10.0.0.0/24\n"
		"  providerID: aws:///i-1\n"
		"  unschedulable: true\n"
		"  taints:\n"
		"  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n"
		"status:\n"
		"  capacity: {cpu: '96', memory: 1Ti, nvidia.com/gpu: 8}\n"
		"  allocatable: {cpu: 95500m, nvidia.com/gpu: '8'}\n"
		"  conditions: [{type: Ready, status: 'True'}]\n"
		"  nodeInfo: {kubeletVersion: v1.30.1}\n"
		"  addresses: [{type: InternalIP, address: 10.0.0.1}]\n"
		"  images: []\n"
		"  daemonEndpoints: {kubeletEndpoint: {Port: 10250}}\n");
	const struct carve_mf_node *n;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->nnodes, 1);
	n = &m->nodes[0];
	assert_string_equal(n->meta.kind, "Node");
	assert_true(n->unschedulable);
	assert_int_equal(n->ntaints, 1);
	assert_string_equal(n->taints[0].key, "nvidia.com/gpu");
	assert_string_equal(n->taints[0].value, "present");
	assert_string_equal(n->taints[0].effect, "NoSchedule");
	assert_int_equal(n->capacity.n, 3);
	assert_int_equal(res(&n->capacity, "cpu")->milli, 96000);
	assert_int_equal(res(&n->capacity, "memory")->milli, 1024 * 1024 * MI);
	assert_int_equal(res(&n->capacity, "nvidia.com/gpu")->pos.line, 14);
	assert_int_equal(res(&n->capacity, "nvidia.com/gpu")->pos.col, 38);
	assert_int_equal(res(&n->allocatable, "cpu")->milli, 95500);
	carve_manifests_destroy(m);
}

static void node_bad(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\n"
		"kind: Node\n"
		"metadata: {name: n1}\n"
		"spec:\n"
		"  unschedulable: maybe\n"
		"  taint: []\n"
		"status:\n"
		"  capacity: {cpu: -4, memory: 1Gi}\n"
		"  allocatable: {cpu: 4x}\n"
		"---\n"
		"apiVersion: v1\n"
		"kind: Node\n"
		"metadata: {labels: {a: b}}\n");

	(void)state;
	tu_assert_error(m, 5, 18, "Node n1: spec.unschedulable: expected true or false, got 'maybe'");
	tu_assert_error(m, 6, 3, "Node n1: spec: unknown field 'taint' (did you mean 'taints'?)");
	tu_assert_error(m, 8, 19, "Node n1: status.capacity[cpu]: quantity '-4' must not be negative");
	tu_assert_error(m, 9, 22, "status.allocatable[cpu]: malformed quantity '4x'");
	tu_assert_error(m, 13, 11, "missing required field 'name'");
	/* the first node is kept with what was valid; the nameless one is not */
	assert_int_equal(m->nnodes, 1);
	assert_int_equal(m->nodes[0].capacity.n, 1);
	assert_string_equal(m->nodes[0].capacity.v[0].name, "memory");
	assert_int_equal(m->diags.nerrors, 5);
	carve_manifests_destroy(m);
}

/* ---- NodePool: good ---- */

static void pool_exclusive(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: a100}\n"
		"spec:\n"
		"  count: 4\n"
		"  gpu: {model: NVIDIA-A100-SXM4-80GB, count: 8}\n"
		"  cpu: '128'\n"
		"  memory: 2Ti\n"
		"  pods: 110\n"
		"  labels: {zone: a, tier: train}\n"
		"  taints: [{key: nvidia.com/gpu, effect: NoSchedule}]\n"
		"  topology: {block: b1, rack: r7}\n");
	const struct carve_mf_nodepool *p;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npools, 1);
	p = &m->pools[0];
	assert_string_equal(p->meta.kind, "NodePool");
	assert_int_equal(p->count, 4);
	assert_int_equal(p->count_pos.line, 5);
	assert_int_equal(p->count_pos.col, 10);
	assert_string_equal(p->name_prefix, "a100-");
	assert_string_equal(p->gpu_model, "NVIDIA-A100-SXM4-80GB");
	assert_int_equal(p->gpu_model_pos.line, 6);
	assert_int_equal(p->gpu_model_pos.col, 16);
	assert_int_equal(p->gpus_per_node, 8);
	assert_int_equal(p->gpu_memory_mib, 0);
	assert_int_equal(p->sharing, CARVE_SHARE_EXCLUSIVE);
	assert_int_equal(p->nmig, 0);
	assert_null(p->mig_config);
	assert_int_equal(p->timeslice.replicas, 0);
	assert_int_equal(p->cpu_milli, 128000);
	assert_int_equal(p->memory_milli, 2LL * 1024 * 1024 * MI);
	assert_int_equal(p->pods, 110);
	assert_int_equal(p->labels.n, 2);
	assert_string_equal(label(&p->labels, "tier"), "train");
	assert_int_equal(p->ntaints, 1);
	assert_string_equal(p->block, "b1");
	assert_string_equal(p->rack, "r7");
	carve_manifests_destroy(m);
}

static void pool_cpu_only(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: cpu}\n"
		"spec: {count: 2, namePrefix: c, cpu: 64, gpu: {count: 0}}\n");

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npools, 1);
	assert_string_equal(m->pools[0].name_prefix, "c");
	assert_null(m->pools[0].gpu_model);
	assert_int_equal(m->pools[0].gpus_per_node, 0);
	carve_manifests_destroy(m);
}

static void pool_mig_layout(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: h100-mig}\n"
		"spec:\n"
		"  count: 2\n"
		"  namePrefix: hm-\n"
		"  gpu: {model: H100-80GB, count: 8, memory: 80Gi}\n"
		"  sharing:\n"
		"    mode: mig\n"
		"    mig:\n"
		"      layout: {\"3g.40gb\": 2, \"1g.10gb\": 1}\n");
	const struct carve_mf_nodepool *p;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npools, 1);
	p = &m->pools[0];
	assert_string_equal(p->name_prefix, "hm-");
	assert_int_equal(p->gpu_memory_mib, 81920);
	assert_int_equal(p->sharing, CARVE_SHARE_MIG);
	assert_int_equal(p->sharing_pos.line, 9);
	assert_int_equal(p->sharing_pos.col, 11);
	assert_int_equal(p->nmig, 2);
	assert_string_equal(p->mig[0].profile, "3g.40gb");
	assert_int_equal(p->mig[0].count, 2);
	assert_int_equal(p->mig[0].pos.line, 11);
	assert_int_equal(p->mig[0].pos.col, 16);
	assert_string_equal(p->mig[1].profile, "1g.10gb");
	assert_int_equal(p->mig[1].count, 1);
	assert_int_equal(p->mig[1].pos.col, 30);
	assert_int_equal(p->mig_pos.line, 11);
	assert_int_equal(p->mig_pos.col, 15);
	assert_null(p->mig_config);
	carve_manifests_destroy(m);
}

static void pool_mig_config(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: a100-mig}\n"
		"spec:\n"
		"  count: 3\n"
		"  gpu: {model: A100-40GB, count: 8}\n"
		"  sharing: {mode: mig, mig: {config: all-1g.5gb}}\n");
	const struct carve_mf_nodepool *p;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npools, 1);
	p = &m->pools[0];
	assert_int_equal(p->sharing, CARVE_SHARE_MIG);
	assert_string_equal(p->mig_config, "all-1g.5gb");
	assert_int_equal(p->mig_pos.line, 7);
	assert_int_equal(p->mig_pos.col, 38);
	assert_int_equal(p->nmig, 0);
	carve_manifests_destroy(m);
}

static void pool_timeslice(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: t4}\n"
		"spec:\n"
		"  count: 10\n"
		"  gpu: {model: Tesla-T4, count: 1}\n"
		"  sharing:\n"
		"    mode: timeslice\n"
		"    timeSlicing: {replicas: 4, renameByDefault: true, failRequestsGreaterThanOne: true}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: l4}\n"
		"spec: {count: 1, gpu: {model: L4, count: 2}, sharing: {mode: fraction}}\n");
	const struct carve_mf_nodepool *p;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npools, 2);
	p = &m->pools[0];
	assert_int_equal(p->sharing, CARVE_SHARE_TIMESLICE);
	assert_int_equal(p->timeslice.replicas, 4);
	assert_true(p->timeslice.rename_by_default);
	assert_true(p->timeslice.fail_requests_gt_one);
	assert_int_equal(p->timeslice.replicas_pos.line, 9);
	assert_int_equal(p->timeslice.replicas_pos.col, 29);
	assert_int_equal(m->pools[1].sharing, CARVE_SHARE_FRACTION);
	carve_manifests_destroy(m);
}

/* ---- NodePool: bad ---- */

static void pool_unknown_field(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: p}\n"
		"spec:\n"
		"  count: 1\n"
		"  namePrefx: x-\n"
		"  gpu: {model: H100-80GB, count: 8, memroy: 80Gi}\n"
		"  sharing: {mode: timeslise}\n");

	(void)state;
	tu_assert_error(m, 6, 3, "NodePool p: spec: unknown field 'namePrefx' (did you mean 'namePrefix'?)");
	tu_assert_error(m, 7, 37, "NodePool p: spec.gpu: unknown field 'memroy' (did you mean 'memory'?)");
	tu_assert_error(m, 8, 19, "NodePool p: spec.sharing.mode: unknown value 'timeslise' (did you mean 'timeslice'?");
	assert_int_equal(m->diags.n, 3);
	/* unknown fields are skipped; the pool itself is fine */
	assert_int_equal(m->npools, 1);
	assert_string_equal(m->pools[0].name_prefix, "p-");
	carve_manifests_destroy(m);
}

static void pool_replicas_zero(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: ts}\n"
		"spec:\n"
		"  count: 1\n"
		"  gpu: {model: T4, count: 1}\n"
		"  sharing:\n"
		"    mode: timeslice\n"
		"    timeSlicing:\n"
		"      replicas: 0\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: ts2}\n"
		"spec: {count: 1, sharing: {mode: timeslice, timeSlicing: {replicas: two}}}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: ts3}\n"
		"spec: {count: 1, sharing: {mode: timeslice}}\n");

	(void)state;
	tu_assert_error(m, 10, 17,
			"NodePool ts: spec.sharing.timeSlicing.replicas: replicas must be at least 1");
	tu_assert_error(m, 15, 69,
			"NodePool ts2: spec.sharing.timeSlicing.replicas: expected an integer, got 'two'");
	tu_assert_error(m, 20, 34,
			"NodePool ts3: spec.sharing: mode timeslice needs sharing.timeSlicing.replicas");
	assert_int_equal(m->diags.n, 3);
	assert_int_equal(m->npools, 0);
	carve_manifests_destroy(m);
}

static void pool_unknown_profile(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: mig}\n"
		"spec:\n"
		"  count: 1\n"
		"  sharing:\n"
		"    mode: mig\n"
		"    mig:\n"
		"      layout:\n"
		"        3g.40gb: 1\n"
		"        2g.20g: 1\n"
		"        9g.99gb: 1\n"
		"  gpu: {model: NVIDIA-H100-80GB-HBM3, count: 8}\n");

	(void)state;
	tu_assert_error(m, 11, 9,
			"NodePool mig: spec.sharing.mig.layout: unknown MIG profile '2g.20g' for H100-80GB "
			"(did you mean '2g.20gb'?)");
	tu_assert_error(m, 12, 9,
			"NodePool mig: spec.sharing.mig.layout: unknown MIG profile '9g.99gb' for H100-80GB "
			"(profiles: 1g.10gb, ");
	assert_int_equal(m->diags.n, 2);
	/* a layout with a wrong profile is not a layout: the pool is dropped */
	assert_int_equal(m->npools, 0);
	carve_manifests_destroy(m);
}

static void pool_mig_on_exclusive(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: ex}\n"
		"spec:\n"
		"  count: 1\n"
		"  gpu: {model: A100-80GB, count: 8}\n"
		"  sharing:\n"
		"    mig: {layout: {7g.80gb: 1}}\n"
		"    timeSlicing: {replicas: 2}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: m}\n"
		"spec:\n"
		"  count: 1\n"
		"  gpu: {model: A100-80GB, count: 8}\n"
		"  sharing: {mode: mig}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: both}\n"
		"spec:\n"
		"  count: 1\n"
		"  gpu: {model: A100-80GB, count: 8}\n"
		"  sharing: {mode: mig, mig: {layout: {7g.80gb: 1}, config: all-7g}}\n");

	(void)state;
	tu_assert_error(m, 8, 5,
			"NodePool ex: spec.sharing: mig settings need mode: mig (mode is exclusive); ignored");
	tu_assert_error(m, 9, 5,
			"NodePool ex: spec.sharing: timeSlicing settings need mode: timeslice "
			"(mode is exclusive); ignored");
	tu_assert_error(m, 17, 19,
			"NodePool m: spec.sharing: mode mig needs sharing.mig.layout, sharing.mig.config or sharing.mig.placements");
	tu_assert_error(m, 25, 60, "NodePool both: spec.sharing: set either mig.layout or mig.config");
	assert_int_equal(m->diags.n, 4);
	/* ex is kept as an exclusive pool without the stray settings; both keeps its layout */
	assert_int_equal(m->npools, 2);
	assert_string_equal(m->pools[0].meta.name, "ex");
	assert_int_equal(m->pools[0].sharing, CARVE_SHARE_EXCLUSIVE);
	assert_int_equal(m->pools[0].nmig, 0);
	assert_int_equal(m->pools[0].timeslice.replicas, 0);
	assert_string_equal(m->pools[1].meta.name, "both");
	assert_int_equal(m->pools[1].nmig, 1);
	assert_null(m->pools[1].mig_config);
	carve_manifests_destroy(m);
}

static void pool_missing_count(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: nc}\n"
		"spec:\n"
		"  gpu: {model: H100-80GB, count: 8}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: zero}\n"
		"spec: {count: 0}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: nospec}\n");

	(void)state;
	tu_assert_error(m, 5, 3, "NodePool nc: spec: missing required field 'count'");
	tu_assert_error(m, 10, 15, "NodePool zero: spec.count: 0 is out of range [1, 100000]");
	tu_assert_error(m, 12, 1, "NodePool nospec: missing required field 'spec'");
	assert_int_equal(m->diags.n, 3);
	assert_int_equal(m->npools, 0);
	carve_manifests_destroy(m);
}

/* spec.count's error gives its own range even for a value past INT_MAX;
 * gpu.count past 64 is an error at spec.gpu.count, the pool skipped. */
static void pool_count_bounds(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: big}\n"
		"spec: {count: 9223372036854775807, gpu: {model: H100-80GB, count: 8}}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: wide}\n"
		"spec:\n"
		"  count: 2\n"
		"  gpu: {model: H100-80GB, count: 65}\n");

	(void)state;
	tu_assert_error(m, 4, 15, "NodePool big: spec.count: 9223372036854775807 is out of range "
			"[1, 100000]");
	tu_assert_error(m, 11, 34, "NodePool wide: spec.gpu.count: 65 GPUs per node is more than 64");
	assert_int_equal(m->diags.n, 2);
	assert_int_equal(m->npools, 0);
	carve_manifests_destroy(m);
}

static void pool_gpu_checks(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: g}\n"
		"spec:\n"
		"  count: 1\n"
		"  gpu: {model: L40X, count: 8}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: nomodel}\n"
		"spec:\n"
		"  count: 1\n"
		"  gpu: {count: 4, memory: '81920'}\n"
		"---\n"
		"apiVersion: carve.dev/v1alpha1\n"
		"kind: NodePool\n"
		"metadata: {name: neg}\n"
		"spec: {count: 1, gpu: {model: L4, count: -1}, cpu: -2}\n");

	(void)state;
	tu_assert_warning(m, 6, 16,
			  "NodePool g: spec.gpu: unknown GPU model 'L40X' (did you mean 'L40S'?)");
	tu_assert_error(m, 13, 8,
			"NodePool nomodel: spec.gpu: missing required field 'model' (required when count > 0)");
	tu_assert_error(m, 13, 27, "NodePool nomodel: spec.gpu.memory: GPU memory '81920' is less than 1Mi");
	tu_assert_error(m, 18, 42, "NodePool neg: spec.gpu.count: count must not be negative, got -1");
	tu_assert_error(m, 18, 52, "NodePool neg: spec.cpu: quantity '-2' must not be negative");
	assert_int_equal(m->diags.n, 5);
	assert_int_equal(m->diags.nwarnings, 1);
	/* a warning or a bad optional field does not drop a pool; GPUs without a model do */
	assert_int_equal(m->npools, 2);
	assert_string_equal(m->pools[0].gpu_model, "L40X");
	carve_manifests_destroy(m);
}

/* ---- CSV ---- */

/* A NUL byte would cut a field short and a quote would stay in it: both are
 * errors at their column, the row skipped (csvsplit.h: quoting is not read);
 * an unknown model draws the NodePool's warning. */
static void csv_nul_quotes_models(void **state)
{
	static const char text[] = "sn,cpu_milli,memory_mib,gpu,model\n"
				   "n0,1000,1024,1,V100M16\n"
				   "n\0x,1000,1024,1,V100M16\n"
				   "\"n2\",1000,1024,1,V100M16\n"
				   "n3,1000,1024,2,L40X\n";
	struct carve_manifests *m = carve_manifests_create();

	(void)state;
	assert_non_null(m);
	assert_int_equal(carve_manifests_load_csv(m, "n.csv", text, sizeof(text) - 1), 0);
	tu_assert_error(m, 3, 2, "node CSV: a NUL byte: CSV input must be text; row skipped");
	tu_assert_error(m, 4, 1, "node CSV: '\"': quoted fields are not supported (carve's CSV "
			"formats have no quoting; a field holds no ',' or '\"'); row skipped");
	tu_assert_warning(m, 5, 16, "node CSV: unknown GPU model 'L40X' (did you mean 'L40S'?)");
	assert_int_equal(m->diags.n, 3);
	assert_int_equal(m->ncsvnodes, 2);
	carve_manifests_destroy(m);
}

/* nvidia.com/gpu "0.5" in a Node's allocatable was rounded up to one GPU:
 * device counts are whole numbers, an error at the resource, the Node skipped. */
static void node_fractional_devices(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
		"status:\n  allocatable: {cpu: \"8\", nvidia.com/gpu: \"0.5\"}\n"
		"---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
		"status:\n  capacity: {nvidia.com/mig-1g.10gb: 1500m, memory: 0.5Gi}\n"
		"---\napiVersion: v1\nkind: Node\nmetadata: {name: n3}\n"
		"status:\n  allocatable: {cpu: 500m, nvidia.com/gpu: \"2\"}\n");

	(void)state;
	tu_assert_error(m, 5, 27, "Node n1: status.allocatable[nvidia.com/gpu]: 0.500 is not a whole "
			"number: device counts are whole numbers");
	tu_assert_error(m, 11, 14, "Node n2: status.capacity[nvidia.com/mig-1g.10gb]: 1.500 is not a "
			"whole number: device counts are whole numbers");
	assert_int_equal(m->diags.n, 2);
	assert_int_equal(m->nnodes, 1);
	assert_string_equal(m->nodes[0].meta.name, "n3");
	carve_manifests_destroy(m);
}

static void csv_good(void **state)
{
	struct carve_manifests *m = load_csv("sn,cpu_milli,memory_mib,gpu,model\r\n"
					     "n0,96000,393216,8,G2\r\n"
					     "\r\n"
					     "n1,32000,131072,0,\r\n");

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->ncsvnodes, 2);
	assert_string_equal(m->csvnodes[0].name, "n0");
	assert_int_equal(m->csvnodes[0].cpu_milli, 96000);
	assert_int_equal(m->csvnodes[0].memory_mib, 393216);
	assert_int_equal(m->csvnodes[0].gpus, 8);
	assert_string_equal(m->csvnodes[0].model, "G2");
	assert_string_equal(m->csvnodes[1].model, "");
	assert_int_equal(m->csvnodes[1].pos.line, 4);
	assert_string_equal(m->csvnodes[1].pos.file, "n.csv");
	carve_manifests_destroy(m);
}

static void csv_bad_header(void **state)
{
	struct carve_manifests *m = load_csv("sn,cpu_milli,memory_mib,gpus,model\n"
					     "n0,96000,393216,8,G2\n");

	(void)state;
	tu_assert_error(m, 1, 25, "node CSV: header: unexpected column 'gpus' where 'gpu' belongs");
	assert_int_equal(m->diags.n, 1);
	assert_int_equal(m->ncsvnodes, 0);
	carve_manifests_destroy(m);

	m = load_csv("sn,cpu_milli,memory_mib,gpu\nn0,1,1,1\n");
	tu_assert_error(m, 1, 28, "header: missing column 'model'");
	carve_manifests_destroy(m);

	m = load_csv("sn,cpu_milli,memory_mib,gpu,model,zone\n");
	tu_assert_error(m, 1, 35, "header: unexpected column 'zone' after 'model'");
	carve_manifests_destroy(m);

	m = load_csv("");
	tu_assert_error(m, 1, 1, "empty file");
	carve_manifests_destroy(m);
}

static void csv_bad_rows(void **state)
{
	struct carve_manifests *m = load_csv("sn,cpu_milli,memory_mib,gpu,model\n"
					     "n0,96000,393216,8,G2\n"
					     "n1,96000,393216,x,G2\n"
					     "n2,96000\n"
					     "n3,-5,1.5,1,T4\n"
					     "n4,1,1,1,T4,extra\n"
					     ",1,1,99999999999,T4\n"
					     "n5,32000,131072,2,T4\n");

	(void)state;
	tu_assert_error(m, 3, 17, "node CSV: gpu: expected a non-negative integer, got 'x'");
	tu_assert_error(m, 4, 1, "row has 2 fields, expected 5");
	tu_assert_error(m, 5, 4, "cpu_milli: expected a non-negative integer, got '-5'");
	tu_assert_error(m, 5, 7, "memory_mib: expected a non-negative integer, got '1.5'");
	tu_assert_error(m, 6, 13, "row has 6 fields, expected 5");
	tu_assert_error(m, 7, 1, "sn: empty node name");
	tu_assert_error(m, 7, 6, "gpu: 99999999999 is too large");
	assert_int_equal(m->diags.n, 7);
	assert_int_equal(m->ncsvnodes, 2);
	assert_string_equal(m->csvnodes[0].name, "n0");
	assert_string_equal(m->csvnodes[1].name, "n5");
	assert_int_equal(m->csvnodes[1].pos.line, 8);
	carve_manifests_destroy(m);
}

static void pool_limits(void **state)
{
	/* count at most 100000; replicas at most 1024; node names at most 253. */
	char prefix[260], text[2048];
	struct carve_manifests *m;

	(void)state;
	memset(prefix, 'x', 250);
	prefix[250] = '\0';
	snprintf(text, sizeof(text),
		 "apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: big}\n"
		 "spec: {count: 100001}\n"
		 "---\n"
		 "apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: ts}\n"
		 "spec:\n  count: 1\n  gpu: {model: L40S, count: 2}\n"
		 "  sharing: {mode: timeslice, timeSlicing: {replicas: 65536}}\n"
		 "---\n"
		 "apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: long}\n"
		 "spec:\n  count: 10000\n  namePrefix: %s\n"
		 "---\n"
		 "apiVersion: carve.dev/v1alpha1\nkind: NodePool\nmetadata: {name: fits}\n"
		 "spec:\n  count: 1000\n  namePrefix: %.*s\n"
		 "  sharing: {mode: timeslice, timeSlicing: {replicas: 1024}}\n"
		 "  gpu: {model: L40S, count: 1}\n", prefix, 250, prefix);
	m = tu_load(text);
	tu_assert_error(m, 4, 15, "NodePool big: spec.count: 100001 is out of range "
			"[1, 100000]");
	tu_assert_error(m, 12, 54, "NodePool ts: spec.sharing.timeSlicing.replicas: replicas "
			"must be at most 1024");
	tu_assert_error(m, 19, 15, "NodePool long: spec.namePrefix: node names "
			"<namePrefix><index> would be 254 characters, above Kubernetes' 253");
	assert_int_equal(m->diags.n, 3);
	/* 250 + 3 digits = 253: the longest legal name. */
	assert_int_equal(m->npools, 1);
	assert_string_equal(m->pools[0].meta.name, "fits");
	assert_int_equal(m->pools[0].timeslice.replicas, 1024);
	carve_manifests_destroy(m);
}

static void csv_memory_and_model(void **state)
{
	/* memory_mib * 2^20 * 1000 must fit int64; gpu > 0 without a model
	 * keeps the GPUs as model "unknown". */
	struct carve_manifests *m = load_csv("sn,cpu_milli,memory_mib,gpu,model\n"
					     "n0,1000,8796093022,0,\n"
					     "n1,1000,8796093023,0,\n"
					     "n2,1000,1000,4,\n"
					     "c1,1000,1000,0,\n");

	(void)state;
	tu_assert_error(m, 3, 9, "node CSV: memory_mib: 8796093023 is too large (at most "
			"8796093022)");
	tu_assert_warning(m, 4, 16, "node CSV: gpu 4 but no model; GPUs kept as model 'unknown'");
	assert_int_equal(m->diags.n, 2);
	assert_int_equal(m->ncsvnodes, 3);
	assert_int_equal(m->csvnodes[0].memory_mib, 8796093022);
	assert_string_equal(m->csvnodes[1].model, "unknown");
	assert_int_equal(m->csvnodes[1].gpus, 4);
	assert_string_equal(m->csvnodes[2].model, "");
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(openb_yaml),
		cmocka_unit_test(openb_csv_gpu),
		cmocka_unit_test(openb_csv_all),
		cmocka_unit_test(node_full),
		cmocka_unit_test(node_bad),
		cmocka_unit_test(pool_exclusive),
		cmocka_unit_test(pool_cpu_only),
		cmocka_unit_test(pool_mig_layout),
		cmocka_unit_test(pool_mig_config),
		cmocka_unit_test(pool_timeslice),
		cmocka_unit_test(pool_unknown_field),
		cmocka_unit_test(pool_replicas_zero),
		cmocka_unit_test(pool_unknown_profile),
		cmocka_unit_test(pool_mig_on_exclusive),
		cmocka_unit_test(pool_missing_count),
		cmocka_unit_test(pool_count_bounds),
		cmocka_unit_test(pool_gpu_checks),
		cmocka_unit_test(csv_nul_quotes_models),
		cmocka_unit_test(node_fractional_devices),
		cmocka_unit_test(csv_good),
		cmocka_unit_test(csv_bad_header),
		cmocka_unit_test(csv_bad_rows),
		cmocka_unit_test(csv_memory_and_model),
		cmocka_unit_test(pool_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
