/*
 * snapshots.h - node snapshots built in C for the node agent's tests and
 * benchmark (labels, metrics): the shapes of real nodes with the values
 * NVML reports on them (names as nvidia-smi prints them, memory in bytes).
 * Each snap_* fills *s with allocated strings and arrays; free with
 * nd_snapshot_free() (nvml.c) or snap_free() below, which does the same
 * without needing nvml.c.
 */
#ifndef CARVE_TESTS_NODE_SNAPSHOTS_H
#define CARVE_TESTS_NODE_SNAPSHOTS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_int.h"

#define SNAP_MIB (1024LL * 1024)

static char *snap_strf(const char *fmt, unsigned a)
{
	char buf[128];

	snprintf(buf, sizeof(buf), fmt, a);
	return strdup(buf);
}

static void snap_gpu(struct nd_gpu *g, unsigned i, const char *name, long long mib, int ccmaj,
		     int ccmin, int mig)
{
	memset(g, 0, sizeof(*g));
	g->index = i;
	g->minor = i;
	g->uuid = snap_strf("GPU-5e1f0c2a-0000-4000-8000-00000000000%u", i);
	g->name = strdup(name);
	g->pci_bus_id = snap_strf("00000000:%02X:00.0", 0x18 + i * 0x10);
	g->mem_total = mib * SNAP_MIB;
	g->mem_used = (long long)(i + 1) * 1024 * SNAP_MIB;
	g->mem_free = g->mem_total - g->mem_used;
	g->cc_major = ccmaj;
	g->cc_minor = ccmin;
	g->numa_node = i < 4 ? 0 : 1;
	g->mig_current = g->mig_pending = mig;
	g->util_gpu = (int)(10 * i % 100);
	g->util_mem = (int)(5 * i % 100);
	g->power_mw = 250000 + i * 1500;
	g->energy_mj = 123456789LL + i;
	g->temp_c = 40 + (int)i;
	g->mem_temp_c = 50 + (int)i;
	g->sm_clock = 1980;
	g->mem_clock = 2619;
	g->healthy = true;
}

static void snap_mig(struct nd_gpu *g, const char *profile, unsigned gi, unsigned start,
		     unsigned size, unsigned sms, long long mib)
{
	struct nd_mig *m;

	g->mig = realloc(g->mig, (g->nmig + 1) * sizeof(*g->mig));
	m = &g->mig[g->nmig++];
	memset(m, 0, sizeof(*m));
	m->uuid = snap_strf("MIG-7c3a9e10-0000-4000-8000-0000000000%02u", g->index * 10 + gi);
	m->profile = strdup(profile);
	m->gi_id = gi;
	m->ci_id = 0;
	m->start = start;
	m->size = size;
	m->sm_count = sms;
	m->mem_total = mib * SNAP_MIB;
	m->mem_used = 13 * SNAP_MIB;
}

static void snap_proc(struct nd_gpu *g, unsigned pid, long long mib, int gi)
{
	g->proc = realloc(g->proc, (g->nproc + 1) * sizeof(*g->proc));
	g->proc[g->nproc].pid = pid;
	g->proc[g->nproc].mem_used = mib * SNAP_MIB;
	g->proc[g->nproc].gi_id = gi;
	g->proc[g->nproc++].ci_id = gi < 0 ? -1 : 0;
}

static void snap_init(struct nd_snapshot *s, size_t n, const char *driver, int cmaj, int cmin)
{
	memset(s, 0, sizeof(*s));
	s->driver_version = strdup(driver);
	s->cuda_major = cmaj;
	s->cuda_minor = cmin;
	s->ngpus = n;
	s->gpus = calloc(n, sizeof(*s->gpus));
}

/* 8 × H100 SXM5 80GB, MIG capable and off (DGX H100). */
static void snap_h100x8(struct nd_snapshot *s)
{
	unsigned i;

	snap_init(s, 8, "550.54.15", 12, 4);
	for (i = 0; i < 8; i++)
		snap_gpu(&s->gpus[i], i, "NVIDIA H100 80GB HBM3", 81559, 9, 0, 0);
	snap_proc(&s->gpus[0], 4242, 1024, -1);
}

/* 2 × A100 SXM4 80GB with MIG on: GPU 0 3g.40gb@0 + 2g.20gb@4 +
 * 1g.10gb@6, GPU 1 seven 1g.10gb (legal layouts of the A100 MIG table). */
static void snap_a100_mixed(struct nd_snapshot *s)
{
	unsigned i;

	snap_init(s, 2, "535.129.03", 12, 2);
	snap_gpu(&s->gpus[0], 0, "NVIDIA A100-SXM4-80GB", 81920, 8, 0, 1);
	snap_gpu(&s->gpus[1], 1, "NVIDIA A100-SXM4-80GB", 81920, 8, 0, 1);
	snap_mig(&s->gpus[0], "3g.40gb", 2, 0, 4, 42, 40192);
	snap_mig(&s->gpus[0], "2g.20gb", 3, 4, 2, 28, 19968);
	snap_mig(&s->gpus[0], "1g.10gb", 9, 6, 1, 14, 9856);
	for (i = 0; i < 7; i++)
		snap_mig(&s->gpus[1], "1g.10gb", 7 + i, i, 1, 14, 9856);
	snap_proc(&s->gpus[0], 777, 2048, 2);
}

/* 1 × Tesla T4 (no MIG), an older driver without a revision. */
static void snap_t4(struct nd_snapshot *s)
{
	snap_init(s, 1, "470.82", 11, 4);
	snap_gpu(&s->gpus[0], 0, "Tesla T4", 15360, 7, 5, -1);
	s->gpus[0].mem_temp_c = -1; /* T4: no memory temperature */
	s->gpus[0].energy_mj = -1;
}

/* 8 GPUs × 7 MIG devices (the benchmark's size). */
static void snap_a100_56(struct nd_snapshot *s)
{
	unsigned i, j;

	snap_init(s, 8, "550.54.15", 12, 4);
	for (i = 0; i < 8; i++) {
		snap_gpu(&s->gpus[i], i, "NVIDIA A100-SXM4-80GB", 81920, 8, 0, 1);
		for (j = 0; j < 7; j++) {
			snap_mig(&s->gpus[i], "1g.10gb", 7 + j, j, 1, 14, 9856);
			snap_proc(&s->gpus[i], 1000 + i * 10 + j, 512, (int)(7 + j));
		}
	}
}

static void snap_free(struct nd_snapshot *s)
{
	size_t i, j;

	for (i = 0; i < s->ngpus; i++) {
		struct nd_gpu *g = &s->gpus[i];

		for (j = 0; j < g->nmig; j++) {
			free(g->mig[j].uuid);
			free(g->mig[j].profile);
		}
		free(g->mig);
		free(g->proc);
		free(g->uuid);
		free(g->name);
		free(g->pci_bus_id);
	}
	free(s->gpus);
	free(s->driver_version);
	memset(s, 0, sizeof(*s));
}

#endif
