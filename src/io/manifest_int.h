/*
 * manifest_int.h - private layout of a manifest set, shared by the io
 * files that append to it (manifest.c, csv.c).  The arena owns every
 * string, array and YAML tree of the set.
 */
#ifndef CARVE_MANIFEST_INT_H
#define CARVE_MANIFEST_INT_H

#include "carve/arena.h"
#include "carve/manifest.h"

struct carve_manifests_int {
	struct carve_arena arena;
};

#endif
