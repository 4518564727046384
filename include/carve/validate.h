/*
 * validate.h - the checks of `carve validate` that look across objects:
 * references between Kueue objects, quota arithmetic, cohort cycles,
 * duplicates, and lint warnings on Pod, Job and Workload templates against
 * the inventory.  Per-field problems are reported while loading
 * (manifest.h) and per-node ones while building the inventory
 * (inventory.h); this runs after both.
 */
#ifndef CARVE_VALIDATE_H
#define CARVE_VALIDATE_H

#include "carve/inventory.h"
#include "carve/manifest.h"

/*
 * Appends every cross-object error and lint warning to m->diags.  inv may
 * be NULL (no inventory: the checks that need nodes are skipped).
 */
void carve_validate(struct carve_manifests *m, const struct carve_inventory *inv);

#endif
