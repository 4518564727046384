/*
 * gpumodel.h - known GPU models: canonical name, memory, architecture
 * family, whether the card supports MIG (and its MIG geometry), and the
 * product names that GPU Feature Discovery and NVML report for it.
 *
 * Static, read-only table (src/core/gpumodel.c) with sources in
 * docs/internals/MIG.md.  Lookups are case-insensitive and accept the
 * canonical name ("H100-80GB", "L40S", "T4"), GFD's sanitised product label
 * ("NVIDIA-H100-80GB-HBM3", "Tesla-T4", "NVIDIA-L40S", "...-SHARED" suffix
 * ignored) and NVML's name ("NVIDIA H100 80GB HBM3").  Alibaba openb model
 * codes (G2, G3, V100M16, ...) are also listed, with what is known of them.
 */
#ifndef CARVE_GPUMODEL_H
#define CARVE_GPUMODEL_H

#include "carve/mig.h"

struct carve_gpu_model {
	const char *name;        /* canonical, e.g. "A100-80GB" */
	const char *family;      /* "ampere", "hopper", "ada-lovelace", "turing", "volta", "pascal", "" */
	uint32_t memory_mib;     /* total memory as NVML reports it; 0 when unknown */
	const struct carve_mig_model *mig; /* NULL: no MIG on this card */
};

int carve_gpu_model_count(void);
const struct carve_gpu_model *carve_gpu_model_at(int i);

/* Model for a canonical, GFD or NVML name; NULL when unknown. */
const struct carve_gpu_model *carve_gpu_model_find(const char *name);

#endif
