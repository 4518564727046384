/*
 * nvml_int.h - private to nvml.c and nvml_mig.c: the loaded library (its
 * function table), the device handles, the Xid counters, and helpers both
 * files share.  One mutex (mu) serialises snapshots, MIG changes and the
 * bookkeeping of events; the handles live as long as the struct.
 */
#ifndef CARVE_NVML_INT_H
#define CARVE_NVML_INT_H

#include <pthread.h>

#include "node_int.h"
#include "nvml_decl.h"

#define ND_NVML_MAX_GPUS 64

struct nd_nvml_fns {
#define ND_FP(name, args) nvmlReturn_t (*name) args;
	ND_NVML_FUNCS(ND_FP, ND_FP)
#undef ND_FP
};

struct nd_nvml {
	void *dl;
	pthread_mutex_t mu;
	const char *(*error_string)(nvmlReturn_t r);
	struct nd_nvml_fns f;          /* NULL entries: optional and missing */
	unsigned ndev;
	nvmlDevice_t dev[ND_NVML_MAX_GPUS];
	nvmlEventSet_t events;         /* NULL until the first poll */
	bool events_tried;
	uint64_t xid_count[ND_NVML_MAX_GPUS];
	unsigned last_xid[ND_NVML_MAX_GPUS];
	bool unhealthy[ND_NVML_MAX_GPUS];
};

/* The GPU-instance profiles a GPU offers (nvmlDeviceGetGpuInstanceProfileInfoV
 * over every profile value), with carve's name for each ("3g.40gb"). */
struct nd_gi_profile {
	unsigned id;                   /* profile id as the other calls take it */
	unsigned slices;               /* compute slices */
	unsigned mem_slices;           /* placement size, 0 unknown */
	unsigned sm_count;
	unsigned long long mem_mib;
	char name[32];
};

/* nvmlErrorString's text for r ("Not Supported"), or "error <r>". */
const char *nd_nvml_errstr(const struct nd_nvml *n, nvmlReturn_t r);

/*
 * Fills up to max profiles of GPU `d` (named gpu_name, for profiles whose
 * info carries no name).  Returns how many, 0 when the GPU has no MIG or
 * the calls are missing.
 */
int nd_gi_profiles(const struct nd_nvml *n, nvmlDevice_t d, const char *gpu_name,
		   struct nd_gi_profile *out, int max);

#endif
