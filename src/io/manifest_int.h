/*
 * manifest_int.h - private layout of a manifest set, shared by the io
 * files that append to it (manifest.c, csv.c).  The arena owns every
 * string, array and YAML tree of the set.
 */
#ifndef CARVE_MANIFEST_INT_H
#define CARVE_MANIFEST_INT_H

#include "carve/arena.h"
#include "carve/manifest.h"
#include "ytree.h"

struct carve_manifests_int {
	struct carve_arena arena;
};

/*
 * One document's root node (a YAML document or an API object converted to
 * a tree), dispatched by kind through the kind table (manifest.c).  file
 * is the display name of its positions, interned in the set's arena by the
 * caller; scalar texts the loaders keep must live in that arena too, the
 * nodes need only outlive the call.
 */
void carve__manifests_load_root(struct carve_manifests *m, const char *file,
				const struct ynode *root);

#endif
