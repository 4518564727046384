/*
 * devices.h - the `carve.dev/devices` annotation: the exact devices the
 * scheduler chose for one pod, written on the pod through its Binding and
 * read back by a restarted scheduler and by the node agent
 * (docs/kubernetes.md, "The devices annotation").
 *
 * Text form: entries separated by ';', one per device, each a list of
 * key=value separated by ',' in this order, keys after `gpu` optional:
 *   gpu=<index>          GPU index on the node (NVML index order, as
 *                        nvidia.com/gpu.count counts them), 0..63
 *   uuid=<UUID>          the GPU's (or MIG instance's) UUID when known
 *   mig=<profile>@<start> a MIG instance: profile ("3g.40gb") and start slot
 *   replica=<n>          a time-slice replica number on that GPU
 *   milli=<m>            a fraction of the GPU, 1..1000
 *   mem=<MiB>            the GPU memory a fraction may use
 * e.g. "gpu=0;gpu=1", "gpu=2,mig=3g.40gb@4", "gpu=1,replica=3",
 * "gpu=0,milli=500,mem=20480".  At most one of mig, replica, milli per
 * entry; at most CARVE_DEVREF_MAX entries.  Parsing is strict: unknown
 * keys, duplicates, out-of-range numbers and trailing bytes are errors.
 */
#ifndef CARVE_DEVICES_H
#define CARVE_DEVICES_H

#include <stddef.h>
#include <stdint.h>

#include "carve/carve.h"

#define CARVE_DEVICES_ANNOTATION "carve.dev/devices"
#define CARVE_FLAVORS_ANNOTATION "carve.dev/flavors"
#define CARVE_DEVREF_MAX 16

struct carve_devref {
	int gpu;                 /* GPU index on the node */
	char uuid[96];           /* "" when not given */
	char mig_profile[32];    /* "" when not a MIG instance */
	int mig_start;           /* -1 when not a MIG instance */
	int replica;             /* -1 when not a replica */
	int milli;               /* 0 when not a fraction */
	uint32_t mem_mib;        /* 0 when not given */
};

/*
 * Parses s into out (room for max entries).  Returns the number of entries
 * (>= 1), or CARVE_EPARSE with err naming the entry (1-based), the key and
 * what is wrong; CARVE_EFULL for more than max entries.
 */
int carve_devices_parse(const char *s, struct carve_devref *out, int max,
			struct carve_error *err);

/*
 * Writes n entries in the text form into buf (size bytes, NUL-terminated).
 * Returns the length written, or CARVE_ERANGE when buf is too small,
 * CARVE_EINVAL for an entry that breaks the rules above.
 */
int carve_devices_format(const struct carve_devref *d, int n, char *buf, size_t size);

#endif
