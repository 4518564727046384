/*
 * gpumodel.c - the static table of known GPU models (name, family, memory,
 * MIG geometry) and name lookup for canonical, GFD, NVML and Alibaba openb
 * names.
 *
 * Invariant: a model's mig pointer is the carve__mig_models entry of the
 * same canonical name, or NULL for a card without MIG.  Memory is what NVML
 * reports where a source gave it, else the nominal GiB x 1024 (marked), else
 * 0.  Names are matched after carve__gpu_name_normalize() (mig_int.h).
 */
#include <string.h>

#include "carve/gpumodel.h"
#include "mig_int.h"

#define MIG(i) (&carve__mig_models[CARVE__MIG_##i])

static const struct carve_gpu_model models[] = {
	/* MIG-capable; memory from GFD's nvidia.com/gpu.memory label */
	{"A30-24GB", "ampere", 24576, MIG(A30_24GB)},        /* nominal */
	{"A100-40GB", "ampere", 40960, MIG(A100_40GB)},
	{"A100-80GB", "ampere", 81920, MIG(A100_80GB)},
	{"H100-80GB", "hopper", 81559, MIG(H100_80GB)},
	{"H100-94GB", "hopper", 96256, MIG(H100_94GB)},      /* nominal */
	{"H200-141GB", "hopper", 143771, MIG(H200_141GB)},
	/* no MIG */
	{"L40S", "ada-lovelace", 46068, NULL},
	{"L40", "ada-lovelace", 49152, NULL},                /* nominal */
	{"L4", "ada-lovelace", 23034, NULL},
	{"A10", "ampere", 23028, NULL},
	{"A10G", "ampere", 24576, NULL},                     /* nominal */
	{"RTX-A6000", "ampere", 49152, NULL},                /* nominal */
	{"T4", "turing", 15360, NULL},
	{"V100-16GB", "volta", 16384, NULL},                 /* nominal */
	{"V100-32GB", "volta", 32768, NULL},                 /* nominal */
	{"P100-16GB", "pascal", 16384, NULL},                /* nominal */
	/* Alibaba openb codes whose real model is not disclosed */
	{"G1", "", 0, NULL},
	{"G2", "", 0, NULL},
	{"G3", "", 0, NULL},
};

#define NMODELS ((int)(sizeof(models) / sizeof(models[0])))

/* Normalised names that are not the canonical one (openb codes). */
static const struct {
	const char *alias;
	const char *name;
} aliases[] = {
	{"V100M16", "V100-16GB"},
	{"V100M32", "V100-32GB"},
	{"P100", "P100-16GB"},
};

int carve_gpu_model_count(void)
{
	return NMODELS;
}

const struct carve_gpu_model *carve_gpu_model_at(int i)
{
	if (i < 0 || i >= NMODELS)
		return NULL;
	return &models[i];
}

static const struct carve_gpu_model *by_name(const char *name)
{
	int i;

	for (i = 0; i < NMODELS; i++)
		if (strcmp(models[i].name, name) == 0)
			return &models[i];
	return NULL;
}

static const struct carve_gpu_model *by_mig(const struct carve_mig_model *mig)
{
	int i;

	for (i = 0; i < NMODELS; i++)
		if (models[i].mig == mig)
			return &models[i];
	return NULL;
}

/* Token rules for product names ("L40S", "V100-SXM2-32GB", "RTX-A6000"). */
static const struct carve_gpu_model *by_tokens(const char *norm)
{
#define HAS(t) carve__gpu_name_has_token(norm, (t))
	static const char *const single[] = {"L40S", "L40", "L4", "A10G",
					     "A10", "T4"};
	size_t i;

	for (i = 0; i < sizeof(single) / sizeof(single[0]); i++)
		if (HAS(single[i]))
			return by_name(single[i]);
	if (HAS("A6000"))
		return by_name("RTX-A6000");
	if (HAS("V100"))
		return by_name(HAS("32GB") ? "V100-32GB" : "V100-16GB");
	/* a P100 without a size token is the 16GB card; 12GB is not listed */
	if (HAS("P100") && !HAS("12GB"))
		return by_name("P100-16GB");
	return NULL;
#undef HAS
}

const struct carve_gpu_model *carve_gpu_model_find(const char *name)
{
	char norm[CARVE__GPU_NAME_MAX];
	const struct carve_gpu_model *g;
	const struct carve_mig_model *mig;
	size_t i;

	if (carve__gpu_name_normalize(name, norm, sizeof(norm)) != 0)
		return NULL;
	g = by_name(norm);
	if (g)
		return g;
	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(norm, aliases[i].alias) == 0)
			return by_name(aliases[i].name);
	mig = carve__mig_model_classify(norm);
	if (mig)
		return by_mig(mig);
	return by_tokens(norm);
}
