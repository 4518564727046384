/*
 * bench.h - shared by the carve-bench figures: clocks, sample statistics,
 * the counting allocator, the result keys and the scenario generators.
 *
 * Clocks are read here, never in the engine (src/core).  Every figure is
 * taken on the run's clock: CPU time of the process by default (the
 * machine is shared, and a figure is one core's work), wall time with
 * --wall.  Latency samples use the same clock; a CPU-time read is a system
 * call, so the place figure prints what a pair of reads costs.
 *
 * Every figure fills some of the 12 result keys (NAN: not measured in this
 * run) and prints its own table.  Generators are deterministic (seeded
 * splitmix64 of include/carve/rng.h), so two runs build the same clusters
 * and workloads.
 * Ownership: generated clusters and engines belong to the caller, who
 * destroys them with the carve_*_destroy of their type.
 */
#ifndef CARVE_BENCH_H
#define CARVE_BENCH_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "carve/admit.h"
#include "carve/cluster.h"
#include "carve/place.h"
#include "carve/rng.h"

/* ---- the result keys (issue 6), in the order written ---- */

#define BENCH_KEYS(XX)                \
	XX(place_binpack_per_s)       \
	XX(place_binpack_p99_us)      \
	XX(place_fgd_per_s)           \
	XX(admit_per_s)               \
	XX(kueue_baseline_s)          \
	XX(gang500_ms)                \
	XX(reclaim_ms)                \
	XX(openb_fgd_run_s)           \
	XX(openb_sweep_s)             \
	XX(bytes_per_node)            \
	XX(bytes_per_gpu)             \
	XX(bytes_per_pending)

struct bench_results {
#define XX(k) double k;
	BENCH_KEYS(XX)
#undef XX
};

/* How a figure runs: sizes, clock, inputs. */
struct bench_opts {
	bool quick;            /* CI sizes */
	bool wall;             /* totals on CLOCK_MONOTONIC instead of CPU time */
	const char *openb_dir; /* openb CSVs (openb_node_list_gpu_node.csv, openb_pod_list_*.csv) */
	int sweep_seeds;       /* openb sweep: seeds actually run per (policy, trace); 0 = 10 */
};

/* ---- clocks ---- */

/* Seconds on the run's clock (CPU time of the process, or monotonic). */
double bench_now(const struct bench_opts *o);
const char *bench_clock_name(const struct bench_opts *o);

/* ---- samples ---- */

/* q-quantile (0..1) of n samples (sorted in place); 0 for n == 0. */
double bench_quantile(uint64_t *v, size_t n, double q);

/* ---- allocation accounting (carve_set_allocator) ---- */

/* Installs the counting allocator; call before any carve_* allocation. */
void bench_alloc_install(void);
/* Bytes currently held through carve_malloc (requested sizes). */
int64_t bench_alloc_live(void);

/* ---- generators (gen.c) ---- */

/*
 * The mixed cluster of figures 1 and 7: nnodes nodes of gpus_per_node GPUs
 * in four pools, by node id modulo 10: 0-3 exclusive H100-80GB, 4-5 MIG
 * A100-80GB (each GPU 1x3g.40gb + 4x1g.10gb), 6-7 time-sliced L40S (4
 * replicas), 8-9 fractional L4; blocks of 320 nodes, racks of 32.
 * NULL with a message on stderr on failure.
 */
struct carve_cluster *bench_mixed_cluster(size_t nnodes, unsigned gpus_per_node);

/* The pending single-pod mix of figure 1 (what each pool serves). */
#define BENCH_NPODTYPES 8
extern const struct carve_pod_req bench_pod_types[BENCH_NPODTYPES];
extern const double bench_pod_prob[BENCH_NPODTYPES];
/* Type of the i-th pending pod (seeded draw from bench_pod_prob). */
int bench_pod_type(uint64_t *state);

/* An exclusive cluster of nnodes nodes x gpus GPUs (model H100-80GB). */
struct carve_cluster *bench_exclusive_cluster(size_t nnodes, unsigned gpus);

/* ---- figures ---- */

int bench_fig_place(const struct bench_opts *o, struct bench_results *r);
int bench_fig_admit(const struct bench_opts *o, struct bench_results *r);
int bench_fig_kueue(const struct bench_opts *o, struct bench_results *r);
int bench_fig_gang(const struct bench_opts *o, struct bench_results *r);
int bench_fig_reclaim(const struct bench_opts *o, struct bench_results *r);
int bench_fig_openb(const struct bench_opts *o, struct bench_results *r);
int bench_fig_memory(const struct bench_opts *o, struct bench_results *r);

/* Table helpers: a title line and "  label  value  unit" rows. */
void bench_title(const char *fig, const char *what);
void bench_row(const char *label, double v, const char *unit);
void bench_note(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

#endif
