/*
 * main.c - carve-bench: runs the figures of issue 6 (all, or the ones
 * named), prints a table per figure and, with --out FILE, writes one flat
 * JSON object with the 12 result keys (a key whose figure did not run is
 * null).
 *
 *   carve-bench [--quick] [--wall|--cpu-time] [--out FILE] [--openb DIR]
 *               [--sweep-seeds N] [FIGURE...]
 *   FIGURE: place admit kueue gang reclaim openb memory
 *
 * Exit codes: 0 ok, 1 a figure failed, 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifndef CARVE_BENCH_OPENB
#define CARVE_BENCH_OPENB "data/openb"
#endif

static const struct {
	const char *name;
	int (*fn)(const struct bench_opts *, struct bench_results *);
	const char *what;
} figs[] = {
	{"place", bench_fig_place, "placement at 10,000 nodes, binpack and fgd"},
	{"admit", bench_fig_admit, "admission: 1,000 ClusterQueues, 100,000 pending"},
	{"kueue", bench_fig_kueue, "Kueue's perf shape: 15,000 workloads over 30 CQs"},
	{"gang", bench_fig_gang, "20 gangs x 500 pods on 5,000 nodes"},
	{"reclaim", bench_fig_reclaim, "reclaim on 500 nodes full of low-priority jobs"},
	{"openb", bench_fig_openb, "openb FGD fill run and the full sweep"},
	{"memory", bench_fig_memory, "bytes per node, GPU, pending workload"},
};
#define NFIGS (sizeof(figs) / sizeof(figs[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: carve-bench [--quick] [--wall|--cpu-time] [--out FILE] "
		   "[--openb DIR] [--sweep-seeds N] [FIGURE...]\n"
		   "  --quick          small sizes (CI)\n"
		   "  --cpu-time       totals in CPU time of the process (the default)\n"
		   "  --wall           totals in wall time (CLOCK_MONOTONIC)\n"
		   "  --out FILE       the 12 result keys as one flat JSON object\n"
		   "  --openb DIR      openb CSVs (default %s)\n"
		   "  --sweep-seeds N  openb sweep: seeds run per (policy, trace), 1..10;\n"
		   "                   fewer than 10 is extrapolated to 10 and says so\n"
		   "figures (default all):\n",
		CARVE_BENCH_OPENB);
	for (i = 0; i < NFIGS; i++)
		fprintf(f, "  %-8s %s\n", figs[i].name, figs[i].what);
}

static int write_json(const char *path, const struct bench_results *r)
{
	FILE *f = fopen(path, "w");
	bool first = true;

	if (!f) {
		fprintf(stderr, "carve-bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "{");
#define XX(k)                                                           \
	do {                                                            \
		fprintf(f, "%s\n  \"%s\": ", first ? "" : ",", #k);     \
		if (isfinite(r->k))                                     \
			fprintf(f, "%.6g", r->k);                       \
		else                                                    \
			fprintf(f, "null");                             \
		first = false;                                          \
	} while (0);
	BENCH_KEYS(XX)
#undef XX
	fprintf(f, "\n}\n");
	if (fclose(f)) {
		fprintf(stderr, "carve-bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {.openb_dir = CARVE_BENCH_OPENB, .sweep_seeds = 10};
	struct bench_results r;
	bool want[NFIGS] = {false}, any = false;
	const char *out = NULL;
	size_t k;
	int i, rc = 0;

	bench_alloc_install();
#define XX(key) r.key = NAN;
	BENCH_KEYS(XX)
#undef XX
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--quick")) {
			o.quick = true;
		} else if (!strcmp(a, "--wall")) {
			o.wall = true;
		} else if (!strcmp(a, "--cpu-time")) {
			o.wall = false;
		} else if (!strcmp(a, "--out") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(a, "--openb") && i + 1 < argc) {
			o.openb_dir = argv[++i];
		} else if (!strcmp(a, "--sweep-seeds") && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);

			if (*end || v < 1 || v > 10) {
				fprintf(stderr, "carve-bench: --sweep-seeds takes 1..10\n");
				return 2;
			}
			o.sweep_seeds = (int)v;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else {
			for (k = 0; k < NFIGS; k++)
				if (!strcmp(a, figs[k].name))
					break;
			if (k == NFIGS) {
				fprintf(stderr, "carve-bench: unknown argument '%s'\n", a);
				usage(stderr);
				return 2;
			}
			want[k] = any = true;
		}
	}
	printf("carve-bench %s%s, totals on %s\n", CARVE_VERSION, o.quick ? " (quick sizes)" : "",
	       bench_clock_name(&o));
	for (k = 0; k < NFIGS; k++) {
		if (any && !want[k])
			continue;
		fflush(stdout);
		if (figs[k].fn(&o, &r)) {
			fprintf(stderr, "carve-bench: figure %s failed\n", figs[k].name);
			rc = 1;
		}
		fflush(stdout);
	}
	if (out && write_json(out, &r))
		rc = 1;
	return rc;
}
