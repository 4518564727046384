/*
 * resource.h - resource names interned to small integer ids, and fixed-size
 * resource vectors indexed by those ids.
 *
 * A registry owns copies of the names it interns.  Ids are dense, start at 0,
 * and never change for the life of the registry.  The well-known names below
 * always have the ids given, so hot code may use the constants directly.
 * A vector holds CARVE_RES_MAX int64 milli-quantities; a registry refuses to
 * intern more names than that (CARVE_EFULL).
 */
#ifndef CARVE_RESOURCE_H
#define CARVE_RESOURCE_H

#include "carve/carve.h"

#define CARVE_RES_MAX 64

/*
 * The resource names carve gives a meaning to.  Spell them through these
 * macros (a MIG resource is CARVE_RES_NAME_MIG_PREFIX followed by the
 * profile, e.g. CARVE_RES_NAME_MIG_PREFIX "3g.40gb") and ask carve_res_kind()
 * what a name means; resource.c holds the one table behind both.
 */
#define CARVE_RES_NAME_CPU "cpu"
#define CARVE_RES_NAME_MEMORY "memory"
#define CARVE_RES_NAME_PODS "pods"
#define CARVE_RES_NAME_GPU "nvidia.com/gpu"
#define CARVE_RES_NAME_GPU_SHARED "nvidia.com/gpu.shared"
#define CARVE_RES_NAME_MIG_PREFIX "nvidia.com/mig-"
#define CARVE_RES_NAME_MIG_MEMORY_SLICES "carve.dev/mig-memory-slices"
#define CARVE_RES_NAME_MIG_COMPUTE_SLICES "carve.dev/mig-compute-slices"
/*
 * carve's own device names, served by the node agent's device plugin
 * beside (or instead of) NVIDIA's: a whole GPU, a shared (time-slice)
 * replica, and one MIG instance per profile.  Kubernetes resource names
 * cannot hold '+', so a profile's "+me" is spelled ".me" here
 * ("carve.dev/mig-1g.10gb.me"); carve_mig_profile_find accepts both.
 */
#define CARVE_RES_NAME_CARVE_GPU "carve.dev/gpu"
#define CARVE_RES_NAME_CARVE_GPU_SHARED "carve.dev/gpu.shared"
#define CARVE_RES_NAME_CARVE_MIG_PREFIX "carve.dev/mig-"
/* Node label the inventory sets from the device names a Node advertises
 * (carve_res_family): "carve", "nvidia" or "both". */
#define CARVE_DEVICE_NAMES_LABEL "carve.dev/device-names"

/* What a resource name means (carve_res_kind). */
enum carve_res_kind {
	CARVE_RK_OTHER = 0,         /* anything else: quota only */
	CARVE_RK_CPU,               /* cpu */
	CARVE_RK_MEMORY,            /* memory */
	CARVE_RK_PODS,              /* pods */
	CARVE_RK_GPU,               /* nvidia.com/gpu: a whole GPU, or a time-slice
				     * replica on a node whose device plugin
				     * time-slices without renaming */
	CARVE_RK_REPLICA,           /* nvidia.com/gpu.shared: a time-slice replica
				     * (renameByDefault); a name a device-plugin
				     * config renames to is one too, but only the
				     * inventory knows such names */
	CARVE_RK_MIG,               /* nvidia.com/mig-<profile>: one MIG instance */
	CARVE_RK_MIG_MEMORY_SLICES, /* carve.dev/mig-memory-slices: carve's quota
				     * of MIG memory slices */
	CARVE_RK_MIG_COMPUTE_SLICES, /* carve.dev/mig-compute-slices: its quota of
				     * MIG compute slices */
	CARVE_RK_GPU_WHOLE          /* carve.dev/gpu: a whole GPU, never a
				     * replica (shared GPUs are
				     * carve.dev/gpu.shared) */
};

/*
 * Who serves a device resource name: NVIDIA's device plugin
 * (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*) or carve's
 * node agent (carve.dev/gpu, carve.dev/gpu.shared, carve.dev/mig-*).
 * Names of one device in both families are twins (carve_res_twin).
 */
enum carve_res_family {
	CARVE_RF_NONE = 0, /* not a GPU device name */
	CARVE_RF_NVIDIA,
	CARVE_RF_CARVE
};

enum carve_res_wellknown {
	CARVE_RES_CPU = 0,    /* CARVE_RES_NAME_CPU */
	CARVE_RES_MEMORY = 1, /* CARVE_RES_NAME_MEMORY */
	CARVE_RES_PODS = 2,   /* CARVE_RES_NAME_PODS */
	CARVE_RES_GPU = 3,    /* CARVE_RES_NAME_GPU */
	CARVE_RES_NWELLKNOWN = 4
};

struct carve_resreg;

struct carve_resvec {
	int64_t v[CARVE_RES_MAX];
};

/* New registry holding the well-known names; NULL on allocation failure. */
struct carve_resreg *carve_resreg_create(void);
void carve_resreg_destroy(struct carve_resreg *r);

/*
 * Id of name, interning it when new.  Returns the id (>= 0), CARVE_EFULL when
 * the registry already holds CARVE_RES_MAX names, CARVE_EINVAL for an empty
 * name, CARVE_ENOMEM.
 */
int carve_resreg_intern(struct carve_resreg *r, const char *name);
/* Id of name, or CARVE_ENOTFOUND; never interns. */
int carve_resreg_find(const struct carve_resreg *r, const char *name);
/* Name of id (view owned by the registry), or NULL for an unknown id. */
const char *carve_resreg_name(const struct carve_resreg *r, int id);
/* Number of interned names. */
int carve_resreg_count(const struct carve_resreg *r);

/*
 * What resource name means.  For CARVE_RK_MIG, *mig_profile (when
 * mig_profile is not NULL) points at the profile part inside name
 * ("3g.40gb"); it is left alone otherwise.  "nvidia.com/mig-" alone (no
 * profile) and NULL are CARVE_RK_OTHER; so is a carve.dev/mig- name whose
 * profile does not start "<digits>g." (carve.dev/mig-memory-slices and
 * carve.dev/mig-compute-slices have their own kinds).
 */
enum carve_res_kind carve_res_kind(const char *name, const char **mig_profile);

/* True when name is a MIG resource ("nvidia.com/mig-3g.40gb"); *profile then
 * points at the profile part inside name ("3g.40gb"). */
bool carve_res_is_mig(const char *name, const char **profile);

/* True when name is a GPU device resource: nvidia.com/gpu, nvidia.com/gpu.shared,
 * nvidia.com/mig-<profile> or their carve.dev twins (CARVE_RK_GPU, _REPLICA,
 * _MIG, _GPU_WHOLE). */
bool carve_res_is_gpu_device(const char *name);

/* Family of a GPU device name (CARVE_RF_NONE for every other name). */
enum carve_res_family carve_res_family(const char *name);

/* "nvidia" or "carve" (the CARVE_DEVICE_NAMES_LABEL values), "none". */
const char *carve_res_family_name(enum carve_res_family f);

/*
 * The twin of device name in family to, written into buf (size bytes):
 * nvidia.com/gpu <-> carve.dev/gpu, nvidia.com/gpu.shared <->
 * carve.dev/gpu.shared, nvidia.com/mig-P <-> carve.dev/mig-P' where P' is
 * P with "+me" spelled ".me" (toward nvidia.com the profile is copied as it
 * is; carve_mig_profile_find reads both spellings).  A name already in
 * family to is copied.  Returns 0, CARVE_EINVAL when name is not a device
 * name (or to is CARVE_RF_NONE), CARVE_ERANGE when buf is too small.
 */
int carve_res_twin(const char *name, enum carve_res_family to, char *buf, size_t size);

/*
 * Checks a requested resource name in carve's device domain: a name that
 * starts "carve.dev/gpu" or "carve.dev/mig-" must be one of carve's device
 * names (or a MIG slice quota).  Returns 0 for every other name and for
 * good ones; CARVE_EINVAL with err saying what is wrong and how to spell it
 * ("carve.dev/mig-1g.10gb+me": '+' cannot appear in a resource name).
 */
int carve_res_check_name(const char *name, struct carve_error *err);

/* Short lower-case word for a kind ("gpu", "mig", ...), for messages. */
const char *carve_res_kind_name(enum carve_res_kind kind);

/* Vector helpers.  add/sub return CARVE_ERANGE on int64 overflow and leave
 * dst unchanged in that case. */
void carve_resvec_zero(struct carve_resvec *v);
int carve_resvec_add(struct carve_resvec *dst, const struct carve_resvec *a);
int carve_resvec_sub(struct carve_resvec *dst, const struct carve_resvec *a);
/* True when every component of a is <= the same component of b. */
bool carve_resvec_le(const struct carve_resvec *a, const struct carve_resvec *b, int n);

#endif
