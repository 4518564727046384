/*
 * miglayout.h - the MIG layout annotations on a Node (docs/node.md, "MIG
 * layouts"), the text the scheduler and the node agent exchange:
 *   carve.dev/mig-layout   the layout the scheduler wants (Dynamic MIG);
 *                          written by the scheduler, applied by the agent
 *   carve.dev/mig-current  the layout the GPUs have now, exactly (GPU
 *                          instances at their placements); written by the
 *                          agent after every discovery, read by the
 *                          scheduler's inventory before anything else
 *   carve.dev/mig-status   the agent's progress and failures, free text
 * Text form of the first two: GPU entries separated by ';', each
 * `<index>=<instances>`, instances separated by ',', each
 * `<profile>@<start>` (start: the first memory slice, as NVML's placement
 * start); an empty instance list means MIG on and no instances:
 *   "0=3g.40gb@0,3g.40gb@4;1=1g.10gb@0,1g.10gb@1;2="
 * GPU indexes 0..63, each at most once; at most CARVE_MIG_MAX_INST
 * instances per GPU; profiles are names of at most 31 bytes made of
 * [a-z0-9.+] ("1g.10gb+me").  Whether a layout is legal on a model is the
 * MIG table's business (mig.h), not the parser's.  Parsing is strict.
 */
#ifndef CARVE_MIGLAYOUT_H
#define CARVE_MIGLAYOUT_H

#include <stddef.h>

#include "carve/carve.h"
#include "carve/mig.h"

#define CARVE_MIG_LAYOUT_ANNOTATION "carve.dev/mig-layout"
#define CARVE_MIG_CURRENT_ANNOTATION "carve.dev/mig-current"
#define CARVE_MIG_STATUS_ANNOTATION "carve.dev/mig-status"
#define CARVE_MIGLAYOUT_MAX_GPUS 64

struct carve_mig_at {
	char profile[32];
	int start;
};

/* The MIG devices of one GPU. */
struct carve_gpu_mig {
	int gpu;
	int n;
	struct carve_mig_at v[CARVE_MIG_MAX_INST];
};

/*
 * Parses s into out (room for max GPU entries).  Returns the number of GPU
 * entries (0 for ""), or CARVE_EPARSE with err naming the GPU entry
 * (1-based), the item and what is wrong; CARVE_EFULL for more than max
 * entries or more than CARVE_MIG_MAX_INST instances on one GPU.
 */
int carve_miglayout_parse(const char *s, struct carve_gpu_mig *out, int max,
			  struct carve_error *err);

/*
 * Writes n GPU entries in the text form into buf (size bytes,
 * NUL-terminated), GPUs in the order given, instances in the order given.
 * Returns the length, CARVE_ERANGE when buf is too small, CARVE_EINVAL for
 * an entry the parser would refuse.
 */
int carve_miglayout_format(const struct carve_gpu_mig *l, int n, char *buf, size_t size);

#endif
