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

enum carve_res_wellknown {
	CARVE_RES_CPU = 0,    /* "cpu" */
	CARVE_RES_MEMORY = 1, /* "memory" */
	CARVE_RES_PODS = 2,   /* "pods" */
	CARVE_RES_GPU = 3,    /* "nvidia.com/gpu" */
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

/* True when name is a MIG resource ("nvidia.com/mig-3g.40gb"); *profile then
 * points at the profile part inside name ("3g.40gb"). */
bool carve_res_is_mig(const char *name, const char **profile);

/* Vector helpers.  add/sub return CARVE_ERANGE on int64 overflow and leave
 * dst unchanged in that case. */
void carve_resvec_zero(struct carve_resvec *v);
int carve_resvec_add(struct carve_resvec *dst, const struct carve_resvec *a);
int carve_resvec_sub(struct carve_resvec *dst, const struct carve_resvec *a);
/* True when every component of a is <= the same component of b. */
bool carve_resvec_le(const struct carve_resvec *a, const struct carve_resvec *b, int n);

#endif
