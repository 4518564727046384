/*
 * node.c - carve-bench-node: the node agent's own CPU per operation
 * (docs/node.md, bench/README.md "carve-bench-node"), on snapshots built
 * in C (tests/node/snapshots.h), so no GPU and no NVML are needed:
 *   scrape  one /metrics body (nd_export) at 8 GPUs x 7 MIG devices with
 *           a pod on every MIG device (target: <= 1 ms of CPU)
 *   labels  GFD's label set of the same node (nd_labels, mixed strategy)
 * Each figure is the median of `rounds` rounds of `iters` calls, in
 * process CPU time (CLOCK_PROCESS_CPUTIME_ID).  Output: one JSON object.
 * Usage: carve-bench-node [--quick]; exit 1 when the full run misses the
 * scrape target (--quick, for ctest, does not judge time).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_int.h"
#include "../tests/node/snapshots.h"

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");
	int rounds = quick ? 3 : 9, iters = quick ? 50 : 1000, r, i;
	double scrape[9], labels[9];
	struct nd_owner ow[56];
	unsigned pids[56];
	struct nd_export_opts eo = {"gpu-node-0", ow, 56};
	struct nd_label_opts lo = {"mixed", "DGX A100", 0, 0};
	struct nd_snapshot s;
	size_t len = 0, nlabels = 0;
	char ns[56][16], pod[56][32];

	snap_a100_56(&s);
	for (i = 0; i < 56; i++) {
		snprintf(ns[i], sizeof(ns[i]), "team-%d", i % 4);
		snprintf(pod[i], sizeof(pod[i]), "train-%d", i);
		pids[i] = 1000 + (unsigned)(i / 7) * 10 + (unsigned)(i % 7);
		ow[i] = (struct nd_owner){(unsigned)(i / 7), 7 + i % 7, ns[i], pod[i], "main",
					  "research", ns[i], 9856, &pids[i], 1, NULL};
	}
	for (r = 0; r < rounds; r++) {
		double t0 = cpu_s();

		for (i = 0; i < iters; i++) {
			char *text = nd_export(&s, &eo, &len);

			if (!text)
				return 1;
			carve_free(text);
		}
		scrape[r] = (cpu_s() - t0) / iters;
		t0 = cpu_s();
		for (i = 0; i < iters; i++) {
			struct nd_kvs l = {0};
			struct carve_error err = {0, ""};

			if (nd_labels(&s, &lo, &l, &err))
				return 1;
			nlabels = l.n;
			nd_kvs_free(&l);
		}
		labels[r] = (cpu_s() - t0) / iters;
	}
	qsort(scrape, (size_t)rounds, sizeof(double), cmp_d);
	qsort(labels, (size_t)rounds, sizeof(double), cmp_d);
	printf("{\"gpus\": 8, \"mig_devices\": 56, \"scrape_bytes\": %zu, "
	       "\"scrape_cpu_us\": %.1f, \"scrape_target_us\": 1000, \"labels\": %zu, "
	       "\"labels_cpu_us\": %.1f, \"rounds\": %d, \"iters\": %d}\n",
	       len, scrape[rounds / 2] * 1e6, nlabels, labels[rounds / 2] * 1e6, rounds, iters);
	snap_free(&s);
	return quick || scrape[rounds / 2] <= 1e-3 ? 0 : 1;
}
