/*
 * mig.h - MIG geometry: per GPU model, every GPU-instance profile with its
 * compute (SM) slices, memory slices, legal start slots and maximum count,
 * and the functions that decide whether a layout is legal and what still fits.
 *
 * The table is static and read-only (src/core/mig_profiles.c); its facts and
 * their sources are in docs/internals/MIG.md.  A layout is a small value
 * (no allocation): up to CARVE_MIG_MAX_INST instances, each a profile index
 * into its model's profile array plus a start memory slice.  An instance
 * occupies memory slices [start, start + profile->mem_slices).
 */
#ifndef CARVE_MIG_H
#define CARVE_MIG_H

#include "carve/carve.h"

#define CARVE_MIG_MAX_INST 8   /* no model allows more than 7 GPU instances */
#define CARVE_MIG_MAX_STARTS 8

struct carve_mig_profile {
	const char *name;      /* "3g.40gb", "1g.10gb+me" */
	uint8_t nvml_id;       /* NVML GPU-instance profile id (19, 20, 15, 14, 9, 5, 0 ...); 0xff when unknown */
	uint8_t compute;       /* SM slices ("g" count) */
	uint8_t mem_slices;    /* memory slices occupied (placement size) */
	uint8_t max_count;     /* most instances of this profile on one GPU */
	bool media;            /* a "+me" profile: at most one per GPU */
	uint8_t nstarts;
	uint8_t starts[CARVE_MIG_MAX_STARTS]; /* legal start memory slices, ascending */
	uint32_t memory_mib;   /* NVML-reported instance memory, 0 when unknown */
};

struct carve_mig_model {
	const char *name;          /* canonical: "A100-80GB", "H100-94GB", ... */
	uint8_t mem_slices;        /* 8, or 4 on A30 */
	uint8_t compute_slices;    /* 7, or 4 on A30 */
	uint8_t max_instances;     /* 7, or 4 on A30 */
	uint8_t nprofiles;
	const struct carve_mig_profile *profiles;
};

struct carve_mig_instance {
	uint8_t profile; /* index into model->profiles */
	uint8_t start;   /* first memory slice */
};

struct carve_mig_layout {
	uint8_t n;
	struct carve_mig_instance inst[CARVE_MIG_MAX_INST];
};

/* Number of MIG-capable models in the table, and the i-th (NULL past the end). */
int carve_mig_model_count(void);
const struct carve_mig_model *carve_mig_model_at(int i);

/*
 * Model for a name: the canonical name ("A100-80GB"), or a GFD/NVML product
 * name ("NVIDIA-A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA-H200",
 * "NVIDIA-H100-NVL" -> H100-94GB).  Case-insensitive; ' ' and '_' match '-';
 * a "-SHARED" suffix is ignored.  NULL when the model is unknown or has no
 * MIG ("NVIDIA-L40S", "Tesla-T4").
 */
const struct carve_mig_model *carve_mig_model_find(const char *name);

/*
 * Whether PCI id `id` ("0x20B210DE", as mig-parted's device-filter writes
 * it; any case, "0x" optional) is a card of model m: 1 yes, 0 no, -1 when
 * id is not 8 hexadecimal digits (device id, vendor id).
 */
int carve_mig_model_pci_match(const struct carve_mig_model *m, const char *id);

/* Index of profile `name` in model ("3g.40gb"), or -1.  Exact match, except
 * that a '+' of the profile may be spelled '.' ("1g.10gb.me" is 1g.10gb+me),
 * as in Kubernetes resource names, which cannot hold '+'. */
int carve_mig_profile_find(const struct carve_mig_model *m, const char *name);

/* Bit i set when memory slice i is used by the layout. */
uint32_t carve_mig_layout_mask(const struct carve_mig_model *m,
			       const struct carve_mig_layout *l);

/*
 * Checks every rule, in this order: total instances <= max_instances,
 * profile indices valid, per-profile max_count, at most one media profile,
 * total compute <= compute_slices, each start legal for its profile, no
 * overlapping memory slices.  (Counts come before positions: they cannot be
 * fixed by moving instances.)  Returns 0, or CARVE_EINVAL with a sentence in
 * err naming the first broken rule ("3g.40gb cannot start at memory slice 2
 * (legal: 0, 4)", "1g.10gb at slice 3 overlaps 3g.40gb at slice 0").
 */
int carve_mig_layout_check(const struct carve_mig_model *m,
			   const struct carve_mig_layout *l,
			   struct carve_error *err);

/*
 * Builds a legal layout holding counts[i] instances of profile i (counts has
 * m->nprofiles entries), as mig-parted's `mig-devices: {"3g.40gb": 2}` asks.
 * Instances are placed largest first (memory slices, then compute) at the
 * lowest legal start, backtracking when a choice blocks a later profile, so
 * the result is deterministic; out lists them by ascending start.  The search
 * is complete: it fails only when no legal layout has these counts.
 * Returns 0, or CARVE_EINVAL (err says why: a negative count, a count over
 * max_count or max_instances, two media profiles, or "no legal placement for
 * 3g.40gb:2, 4g.40gb:1 on A100-80GB"); out is untouched on failure.
 */
int carve_mig_layout_from_counts(const struct carve_mig_model *m,
				 const int *counts, struct carve_mig_layout *out,
				 struct carve_error *err);

/*
 * Free placements of profile p on top of layout l: writes up to max start
 * slices into starts (ascending) and returns how many there are in total
 * (may exceed max; starts may be NULL when max is 0).  A start is free when
 * the instance would leave the layout legal.  0 when p is out of range or l
 * itself is not legal.
 */
int carve_mig_free_starts(const struct carve_mig_model *m,
			  const struct carve_mig_layout *l, int p,
			  uint8_t *starts, int max);

/*
 * How many more instances of profile p fit on top of l, all rules applied
 * (0 when p is out of range or l is not legal).  l is not changed.
 */
int carve_mig_fit_count(const struct carve_mig_model *m,
			const struct carve_mig_layout *l, int p);

/*
 * Adds one instance (p at start) at the end of l when that keeps the layout
 * legal.  Returns 0, CARVE_ENOFIT when it does not fit there (l unchanged),
 * CARVE_EINVAL for a bad p or when l is not legal to begin with.
 */
int carve_mig_layout_add(const struct carve_mig_model *m,
			 struct carve_mig_layout *l, int p, int start);

#endif
