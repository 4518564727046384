/*
 * gen.c - the clusters and pod mixes the figures run on, built through the
 * public cluster API (carve_cluster_add_node) as any driver would.
 *
 * The mixed cluster mirrors a large shared GPU fleet: by node id modulo 10,
 * 0-3 exclusive H100-80GB, 4-5 MIG A100-80GB (every GPU 1x3g.40gb +
 * 4x1g.10gb), 6-7 time-sliced L40S (4 replicas each), 8-9 fractional L4.
 * Topology: blocks of 320 nodes, racks of 32, as the node's block/rack and
 * as Kueue TAS's default level labels (cloud.provider.com/topology-*).  The pending mix asks each
 * pool for what it serves, sized so that 100,000 pods fill the 80,000 GPUs
 * of the full-size cluster to about 95 % of the exclusive pool and less of
 * the shared ones (so late decisions meet a nearly full cluster).
 * Everything is deterministic: same sizes, same cluster.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "carve/gpumodel.h"

#define GIB (1024ll * 1024 * 1024 * 1000) /* milli-bytes */

static const char *const h100[] = {"H100-80GB"};

const struct carve_pod_req bench_pod_types[BENCH_NPODTYPES] = {
	{.cpu_milli = 8000, .memory_milli = 64 * GIB, .gpu = CARVE_GREQ_WHOLE, .count = 1,
	 .nmodels = 1, .models = h100},
	{.cpu_milli = 16000, .memory_milli = 128 * GIB, .gpu = CARVE_GREQ_WHOLE, .count = 2,
	 .nmodels = 1, .models = h100},
	{.cpu_milli = 64000, .memory_milli = 512 * GIB, .gpu = CARVE_GREQ_WHOLE, .count = 8,
	 .nmodels = 1, .models = h100},
	{.cpu_milli = 2000, .memory_milli = 8 * GIB, .gpu = CARVE_GREQ_MIG, .count = 1,
	 .mig_profile = "1g.10gb"},
	{.cpu_milli = 4000, .memory_milli = 32 * GIB, .gpu = CARVE_GREQ_MIG, .count = 1,
	 .mig_profile = "3g.40gb"},
	{.cpu_milli = 2000, .memory_milli = 8 * GIB, .gpu = CARVE_GREQ_REPLICA, .count = 1},
	{.cpu_milli = 2000, .memory_milli = 8 * GIB, .gpu = CARVE_GREQ_FRACTION, .milli = 500},
	{.cpu_milli = 1000, .memory_milli = 4 * GIB, .gpu = CARVE_GREQ_FRACTION, .milli = 250},
};

const double bench_pod_prob[BENCH_NPODTYPES] = {
	0.200, 0.040, 0.004, 0.250, 0.080, 0.200, 0.120, 0.106,
};

int bench_pod_type(uint64_t *state)
{
	double u = carve_splitmix64_double(state), acc = 0;
	int i;

	for (i = 0; i < BENCH_NPODTYPES - 1; i++) {
		acc += bench_pod_prob[i];
		if (u < acc)
			return i;
	}
	return BENCH_NPODTYPES - 1;
}

/* One GPU spec per pool (index 0..3). */
static int pool_gpu(int pool, struct carve_gpu_spec *g)
{
	const struct carve_gpu_model *m;
	struct carve_error err;

	memset(g, 0, sizeof(*g));
	switch (pool) {
	case 0:
		g->model = "H100-80GB";
		g->sharing = CARVE_SHARE_EXCLUSIVE;
		break;
	case 1: {
		int counts[32] = {0};
		int p1, p3;

		g->model = "A100-80GB";
		g->sharing = CARVE_SHARE_MIG;
		g->mig_model = carve_mig_model_find("A100-80GB");
		if (!g->mig_model || g->mig_model->nprofiles > 32)
			goto bad;
		p1 = carve_mig_profile_find(g->mig_model, "1g.10gb");
		p3 = carve_mig_profile_find(g->mig_model, "3g.40gb");
		if (p1 < 0 || p3 < 0)
			goto bad;
		counts[p1] = 4;
		counts[p3] = 1;
		if (carve_mig_layout_from_counts(g->mig_model, counts, &g->mig, &err)) {
			fprintf(stderr, "carve-bench: MIG layout: %s\n", err.text);
			return -1;
		}
		break;
	}
	case 2:
		g->model = "L40S";
		g->sharing = CARVE_SHARE_TIMESLICE;
		g->replicas = 4;
		break;
	default:
		g->model = "L4";
		g->sharing = CARVE_SHARE_FRACTION;
		break;
	}
	m = carve_gpu_model_find(g->model);
	g->memory_mib = m ? m->memory_mib : 0;
	return 0;
bad:
	fprintf(stderr, "carve-bench: the MIG table lacks A100-80GB 1g.10gb/3g.40gb\n");
	return -1;
}

static const char *const pool_names[4] = {"exclusive", "mig", "timeslice", "fraction"};

static struct carve_cluster *build(size_t nnodes, unsigned ngpus, bool mixed)
{
	struct carve_gpu_spec gspec[4], gpus[CARVE_POD_MAX_GPUS * 2];
	struct carve_cluster *c;
	struct carve_error err;
	char name[32], block[24], rack[24];
	struct carve_label labels[4];
	size_t i;
	unsigned k;
	int p;

	if (ngpus > sizeof(gpus) / sizeof(gpus[0])) {
		fprintf(stderr, "carve-bench: at most %zu GPUs a node\n",
			sizeof(gpus) / sizeof(gpus[0]));
		return NULL;
	}
	for (p = 0; p < 4; p++)
		if (pool_gpu(p, &gspec[p]))
			return NULL;
	c = carve_cluster_create();
	if (!c) {
		fprintf(stderr, "carve-bench: out of memory\n");
		return NULL;
	}
	for (i = 0; i < nnodes; i++) {
		struct carve_node_spec n;
		unsigned m = (unsigned)(i % 10);

		p = !mixed ? 0 : m < 4 ? 0 : m < 6 ? 1 : m < 8 ? 2 : 3;
		for (k = 0; k < ngpus; k++)
			gpus[k] = gspec[p];
		snprintf(name, sizeof(name), "node-%06zu", i);
		snprintf(block, sizeof(block), "block-%03zu", i / 320);
		snprintf(rack, sizeof(rack), "rack-%04zu", i / 32);
		labels[0] = (struct carve_label){"nvidia.com/gpu.product", gspec[p].model};
		labels[1] = (struct carve_label){"carve.dev/pool", pool_names[p]};
		labels[2] = (struct carve_label){"cloud.provider.com/topology-block", block};
		labels[3] = (struct carve_label){"cloud.provider.com/topology-rack", rack};
		memset(&n, 0, sizeof(n));
		n.name = name;
		n.pool = pool_names[p];
		n.nlabels = 4;
		n.labels = labels;
		n.cpu_milli = 192000;
		n.memory_milli = 2048 * GIB;
		n.pods = 110;
		n.ngpus = ngpus;
		n.gpus = gpus;
		n.block = block;
		n.rack = rack;
		if (carve_cluster_add_node(c, &n, &err) < 0) {
			fprintf(stderr, "carve-bench: node %s: %s\n", name, err.text);
			carve_cluster_destroy(c);
			return NULL;
		}
	}
	return c;
}

struct carve_cluster *bench_mixed_cluster(size_t nnodes, unsigned gpus_per_node)
{
	return build(nnodes, gpus_per_node, true);
}

struct carve_cluster *bench_exclusive_cluster(size_t nnodes, unsigned gpus)
{
	return build(nnodes, gpus, false);
}
