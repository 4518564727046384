/*
 * fig_memory.c - figure 7: memory at the scale of figure 1.  Bytes are
 * what carve holds through its allocator hook (bench_alloc_live: requested
 * sizes, so malloc's own overhead is not counted), measured as the change
 * in live bytes around building the objects.
 *
 * Per node and per GPU: the mixed cluster of figure 1 and a binpack placer
 * over it, built twice with the same nodes, once with 8 and once with 16
 * GPUs a node; the difference divided by the extra GPUs is the cost of a
 * GPU, and what remains of the 8-GPU build divided by the nodes is the
 * cost of a node (labels, names, topology, node state).  Per pending
 * workload: figure 2's engine (1,000 ClusterQueues in 50 cohorts) before
 * and after adding 100,000 pending single-pod workloads.
 */
#include <stdio.h>

#include "admq.h"

struct build_bytes {
	int64_t cluster, placer;
};

static int build(size_t nnodes, unsigned ngpus, struct build_bytes *out)
{
	int64_t b0 = bench_alloc_live(), b1;
	struct carve_cluster *c = bench_mixed_cluster(nnodes, ngpus);
	struct carve_placer *p;
	struct carve_error err;

	if (!c)
		return -1;
	b1 = bench_alloc_live();
	p = carve_placer_create(c, "binpack", 42, &err);
	if (!p) {
		fprintf(stderr, "carve-bench: memory: %s\n", err.text);
		carve_cluster_destroy(c);
		return -1;
	}
	out->cluster = b1 - b0;
	out->placer = bench_alloc_live() - b1;
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
	return 0;
}

static int pending(size_t ncqs, size_t ncoh, size_t nwl, double *per)
{
	struct carve_adm *a = admq_cohorts(ncqs, ncoh, 20000, 40000);
	char key[48], cq[32];
	int64_t b0;
	size_t i;
	int rc = -1;

	if (!a)
		return -1;
	b0 = bench_alloc_live();
	for (i = 0; i < nwl; i++) {
		struct admq_wl w = {key, cq, ADMQ_RESOURCE, ADMQ_FLAVOR, 1000, 1, (int32_t)(i % 4),
				    (int64_t)i, false};

		snprintf(key, sizeof(key), "team-%04zu/job-%06zu", i % ncqs, i);
		snprintf(cq, sizeof(cq), "cq-%04zu", i % ncqs);
		if (admq_workload(a, &w) < 0)
			goto out;
	}
	*per = (double)(bench_alloc_live() - b0) / (double)nwl;
	rc = 0;
out:
	carve_adm_destroy(a);
	return rc;
}

int bench_fig_memory(const struct bench_opts *o, struct bench_results *r)
{
	size_t n = o->quick ? 200 : 10000, nwl = o->quick ? 2000 : 100000;
	struct build_bytes b8, b16;
	double per_gpu, per_node, per_pend;

	if (build(n, 8, &b8) || build(n, 16, &b16) ||
	    pending(o->quick ? 40 : 1000, o->quick ? 4 : 50, nwl, &per_pend))
		return -1;
	per_gpu = (double)((b16.cluster + b16.placer) - (b8.cluster + b8.placer)) / (double)(n * 8);
	per_node = ((double)(b8.cluster + b8.placer) - per_gpu * (double)(n * 8)) / (double)n;
	bench_title("7 memory", "bytes held through carve's allocator hook");
	bench_note("%zu nodes of 8 GPUs (and of 16, for the per-GPU slope); %zu pending workloads",
		   n, nwl);
	bench_row("cluster + placer, 8 GPUs a node", (double)(b8.cluster + b8.placer), "B");
	bench_row("  of which cluster", (double)b8.cluster, "B");
	bench_row("  of which placer", (double)b8.placer, "B");
	bench_row("per node", per_node, "B");
	bench_row("per GPU", per_gpu, "B");
	bench_row("  cluster part per GPU", (double)(b16.cluster - b8.cluster) / (double)(n * 8),
		  "B");
	bench_row("  placer part per GPU", (double)(b16.placer - b8.placer) / (double)(n * 8), "B");
	bench_row("per pending workload (admission engine)", per_pend, "B");
	r->bytes_per_node = per_node;
	r->bytes_per_gpu = per_gpu;
	r->bytes_per_pending = per_pend;
	return 0;
}
