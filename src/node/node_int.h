/*
 * node_int.h - the node agent's parts inside src/node (private prefix
 * nd_), and the snapshot they share:
 *   nvml.c      libnvidia-ml.so.1 through dlopen with carve's own
 *               declarations: discovery into a struct nd_snapshot, Xid
 *               and health events, MIG changes (nd_mig_apply)
 *   miglayout.c the wanted MIG layout of a GPU: parsing the node
 *               annotation and mig-parted configs, checking it against
 *               the MIG table (src/core), planning the changes
 *   labels.c    GPU Feature Discovery's labels from a snapshot
 *   exporter.c  dcgm-exporter's metrics from a snapshot (text format)
 *   dp*.c       the kubelet device plugin (v1beta1, gRPC C core behind
 *               one transport file, protobuf-c messages)
 *   agent.c     the loop: API client, node labels and annotations,
 *               pods bound here, devices handed to containers
 *   nutil.c     small helpers every file shares (key/value lists)
 *
 * A snapshot is plain data: it owns every string and array in it and is
 * freed by nd_snapshot_free(); it is never changed after it is taken, so
 * one snapshot may be read by several threads at once.  Sizes are bytes,
 * clocks MHz, power milliwatts, energy millijoules, temperatures
 * degrees C; -1 (or UINT*_MAX where unsigned) means "NVML did not say"
 * (NVML_ERROR_NOT_SUPPORTED and the like): the labels and metrics leave
 * such values out rather than print a made-up one.
 */
#ifndef CARVE_NODE_INT_H
#define CARVE_NODE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "carve/carve.h"

/* ---- key/value lists (nutil.c) ---- */

struct nd_kv {
	char *key, *value;
};

struct nd_kvs {
	size_t n, cap;
	struct nd_kv *v;
};

/* Appends a copy of key and value (value formatted like printf).  Returns
 * 0 or CARVE_ENOMEM (the list is unchanged then). */
int nd_kvs_addf(struct nd_kvs *l, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The value of key, or NULL. */
const char *nd_kvs_get(const struct nd_kvs *l, const char *key);
/* Sorts by key (strcmp). */
void nd_kvs_sort(struct nd_kvs *l);
void nd_kvs_free(struct nd_kvs *l);

/* ---- the snapshot (nvml.c fills it) ---- */

/* One MIG device: a GPU instance with one compute instance over it. */
struct nd_mig {
	char *uuid;            /* "MIG-..." */
	char *profile;         /* "1g.10gb", "1g.10gb+me" as nvidia-smi names it */
	unsigned gi_id, ci_id; /* GPU and compute instance ids */
	unsigned gi_profile_id;/* NVML_GPU_INSTANCE_PROFILE_* of the instance */
	unsigned start, size;  /* placement: first memory slice, slices */
	unsigned sm_count;     /* multiprocessors, 0 unknown */
	int64_t mem_total, mem_used; /* bytes, -1 unknown */
};

/* A process running on a GPU (or on one of its MIG devices). */
struct nd_proc {
	unsigned pid;
	int64_t mem_used;      /* bytes, -1 unknown */
	int gi_id, ci_id;      /* the MIG device it runs in, -1 for the whole GPU */
};

struct nd_gpu {
	unsigned index, minor;
	char *uuid;            /* "GPU-..." */
	char *name;            /* "NVIDIA H100 80GB HBM3" */
	char *pci_bus_id;      /* "00000000:3B:00.0" */
	int64_t mem_total, mem_used, mem_free; /* bytes */
	int cc_major, cc_minor;/* CUDA compute capability, -1 unknown */
	unsigned arch;         /* NVML_DEVICE_ARCH_* value, 0 unknown */
	int numa_node;         /* -1 unknown */
	int mig_current, mig_pending; /* 1 enabled, 0 disabled, -1 not capable */
	int util_gpu, util_mem;       /* percent, -1 unknown */
	int64_t power_mw, energy_mj;  /* -1 unknown */
	int temp_c, mem_temp_c;       /* -1 unknown */
	int sm_clock, mem_clock;      /* MHz, -1 unknown */
	uint64_t xid_count;    /* Xid events seen since the agent started */
	unsigned last_xid;     /* the last Xid code, 0 none */
	bool healthy;          /* false after a critical Xid (docs/node.md) */
	size_t nmig;
	struct nd_mig *mig;    /* by (start, gi_id) */
	size_t nproc;
	struct nd_proc *proc;
};

struct nd_snapshot {
	char *driver_version;  /* "550.54.15" */
	int cuda_major, cuda_minor; /* nvmlSystemGetCudaDriverVersion_v2, -1 unknown */
	size_t ngpus;
	struct nd_gpu *gpus;   /* by index */
};

void nd_snapshot_free(struct nd_snapshot *s);
/* The GPU of s with NVML index `index` (borrowed from s), or NULL. */
const struct nd_gpu *nd_gpu_by_index(const struct nd_snapshot *s, int index);

/* ---- NVML (nvml.c) ---- */

struct nd_nvml;

/*
 * dlopen()s path (NULL: "libnvidia-ml.so.1", found the way the dynamic
 * loader finds it), resolves every function carve uses and calls
 * nvmlInit_v2.  Returns 0; CARVE_ENOTFOUND when the library cannot be
 * loaded (err: "NVML not found: <dlerror>; is the NVIDIA driver
 * installed?"), CARVE_EIO when a required symbol is missing or init fails
 * (err names the function and nvmlErrorString's text), CARVE_ENOMEM.
 */
int nd_nvml_open(const char *path, struct nd_nvml **out, struct carve_error *err);
/* nvmlShutdown, dlclose, free.  NULL is a no-op. */
void nd_nvml_close(struct nd_nvml *n);
/*
 * Takes a snapshot of the node.  Xid counters and health come from the
 * events nd_nvml_poll_events() has seen.  Returns 0, CARVE_EIO (err names
 * the GPU and the call), CARVE_ENOMEM; *out holds nothing on error.
 * Thread-safe against nd_nvml_poll_events and nd_mig_apply (one lock).
 */
int nd_nvml_snapshot(struct nd_nvml *n, struct nd_snapshot *out, struct carve_error *err);
/* Waits up to timeout_ms for Xid events (nvmlEventSetWait_v2) and counts
 * them per GPU.  Returns the number of events seen, or a negative carve
 * error code. */
int nd_nvml_poll_events(struct nd_nvml *n, int timeout_ms, struct carve_error *err);

/* ---- MIG layouts (miglayout.c, applied by nvml.c) ---- */

/* One MIG device wanted on a GPU: a profile at a placement start. */
struct nd_mig_want {
	char profile[32];      /* "3g.40gb" */
	unsigned start;        /* first memory slice */
};

/* The layout wanted for one GPU. */
struct nd_mig_layout {
	unsigned gpu;          /* index */
	size_t n;
	struct nd_mig_want v[8];
};

/*
 * Makes GPU `gpu` hold exactly the MIG devices of `want`: destroys the
 * compute and GPU instances that are not wanted (refusing, CARVE_EBUSY,
 * when any of them runs a process), then creates the wanted GPU
 * instances at their placements and one compute instance each.  MIG mode
 * is never changed (CARVE_EINVAL when it is not enabled).  Illegal
 * layouts (a profile the GPU lacks, a start it does not allow, overlaps)
 * are CARVE_EINVAL before anything changes.  On a failure half-way, err
 * says what was done and what failed.  Returns 0 or a carve error code.
 */
int nd_mig_apply(struct nd_nvml *n, const struct nd_mig_layout *want, struct carve_error *err);

/* ---- additions: Xid health, the snapshot as JSON, layouts (nvml.c,
 * snapjson.c, miglayout.c) ---- */

/* True for the Xids that mark a GPU unhealthy (list and source in nvml.c). */
bool nd_xid_critical(unsigned xid);

/*
 * The snapshot as one JSON object (docs/internals/NVML.md), pretty-printed
 * when `pretty`.  Returns a malloc'd string the caller frees, or NULL when
 * out of memory.
 */
char *nd_snapshot_json(const struct nd_snapshot *s, bool pretty);

/*
 * The layouts of a carve.dev/mig-layout annotation (miglayout.h's text
 * form) into out (room for max GPUs).  Returns how many GPUs, or
 * CARVE_EPARSE / CARVE_EFULL with err naming the entry.
 */
int nd_miglayout_parse(const char *text, struct nd_mig_layout *out, size_t max,
		       struct carve_error *err);

/*
 * The layouts mig-parted config `config` of the file at path asks for the
 * GPUs of snapshot s (an entry's devices and device-filter, its
 * mig-devices counts placed as the MIG table places them).  GPUs the
 * config leaves with MIG disabled get no entry.  Returns how many, or
 * CARVE_EIO (file), CARVE_EPARSE (diagnostics in the file), CARVE_ENOTFOUND
 * (no such config), CARVE_EINVAL (a count with no legal layout, a GPU not
 * in the MIG table); err says which.
 */
int nd_miglayout_migparted(const char *path, const char *config, const struct nd_snapshot *s,
			   struct nd_mig_layout *out, size_t max, struct carve_error *err);

/*
 * Checks wanted layouts against a snapshot before anything is applied:
 * the GPU exists, has MIG enabled and is in the MIG table, and the layout
 * is legal on it.  Returns 0 or CARVE_EINVAL naming the GPU and rule.
 */
int nd_miglayout_check(const struct nd_snapshot *s, const struct nd_mig_layout *l, size_t n,
		       struct carve_error *err);

/*
 * The carve.dev/mig-current text for s: every MIG-enabled GPU with its
 * GPU instances (profile@start, by start).  Returns the length,
 * CARVE_ERANGE when buf (size bytes) is too small, CARVE_EINVAL when the
 * snapshot lacks an instance's placement or profile (NVML refused them).
 */
int nd_miglayout_current(const struct nd_snapshot *s, char *buf, size_t size);

#endif
