/*
 * mig_int.h - private to libcarve-core: the MIG model table itself (defined
 * in mig_profiles.c) and the GPU-name normaliser shared by mig.c and
 * gpumodel.c.
 *
 * Invariant: carve__mig_models[CARVE__MIG_x] is the model named by its enum
 * constant, so static tables elsewhere (gpumodel.c) may point into it.
 */
#ifndef CARVE_MIG_INT_H
#define CARVE_MIG_INT_H

#include "carve/mig.h"

/* Index of each model in carve__mig_models. */
enum carve__mig_index {
	CARVE__MIG_A30_24GB,
	CARVE__MIG_A100_40GB,
	CARVE__MIG_A100_80GB,
	CARVE__MIG_H100_80GB,
	CARVE__MIG_H100_94GB,
	CARVE__MIG_H200_141GB,
	CARVE__MIG_NMODELS
};

/* nvml_id of a profile whose NVML GPU-instance profile id is not known. */
#define CARVE__MIG_NVML_ID_UNKNOWN 0xff

extern const struct carve_mig_model carve__mig_models[CARVE__MIG_NMODELS];

/* Longest GPU name the normaliser accepts (including the NUL). */
#define CARVE__GPU_NAME_MAX 128

/*
 * Normalises a GPU product name for matching: upper case; ' ' and '_' become
 * '-'; runs of '-' collapse; leading "NVIDIA-" / "TESLA-" and a trailing
 * "-SHARED" are removed.  "NVIDIA A100-SXM4-80GB" -> "A100-SXM4-80GB".
 * Returns 0, or -1 for NULL, an empty result or a name of size or more.
 */
int carve__gpu_name_normalize(const char *name, char *out, size_t size);

/* True when the normalised name has tok as one whole '-'-separated token. */
bool carve__gpu_name_has_token(const char *norm, const char *tok);

/* MIG model for an already normalised name, or NULL. */
const struct carve_mig_model *carve__mig_model_classify(const char *norm);

#endif
