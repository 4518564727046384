/*
 * trace.h - workload traces as plain task lists, for the simulator.
 *
 * A struct carve_trace owns its tasks and every string they point to (one
 * arena), and the file names its tasks' positions and its diagnostics
 * borrow: keep the trace alive while the diagnostics are printed.  Loading
 * appends, so several files may feed one trace.
 *
 * The openb pod list (Alibaba cluster-trace-gpu-v2023, the files and their
 * source in data/openb/README.md):
 *   name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase,
 *   creation_time,deletion_time,scheduled_time]
 * one task a row, no quoting, LF or CRLF.  The first five columns are
 * required in that order; the others are optional, in any order, and a
 * column the header lacks reads as empty in every row (gpu_spec: any
 * model; qos, pod_phase: ""; times: -1), so the five-column multi-GPU lists
 * published with the FGD simulator load too.  Every row has as many fields
 * as the header.  A bad header (a required column missing or out of place,
 * an unknown or repeated column) is reported at its column and skips the
 * file; a
 * bad row is reported gcc-style at the line and column of the bad field
 * ("file:line:col: error: num_gpu: ...") and skipped, and the other rows
 * are kept.
 */
#ifndef CARVE_TRACE_H
#define CARVE_TRACE_H

#include "carve/diag.h"

/* Most GPUs one task may ask for (carve places at most this many per pod). */
#define CARVE_TASK_MAX_GPUS 16

struct carve_task {
	const char *name;
	int64_t cpu_milli;
	int64_t memory_mib;
	int num_gpu;                 /* 0 .. CARVE_TASK_MAX_GPUS */
	int gpu_milli;               /* of each GPU: 1..1000 for a GPU task, 0 without GPUs */
	const char *gpu_spec;        /* the allowed models as written ("" = any) */
	size_t nmodels;              /* gpu_spec split on '|' as a set: */
	const char *const *models;   /* distinct names, in first-seen order */
	const char *qos;             /* as written (LS, BE, Burstable, Guaranteed) */
	const char *phase;           /* pod_phase as written */
	int64_t creation_time, deletion_time, scheduled_time; /* seconds, -1 when empty */
	struct carve_pos pos;        /* the row */
};

struct carve_trace {
	size_t n;
	struct carve_task *tasks;
	struct carve_trace_int *priv;  /* arena, capacity */
};

/* An empty trace; NULL on allocation failure. */
struct carve_trace *carve_trace_create(void);
void carve_trace_destroy(struct carve_trace *t);

/*
 * Appends the tasks of an openb pod CSV file.  Problems go to d (positions
 * borrow a file name the trace owns).  Returns 0 when the file could be
 * read (even with diagnostics), CARVE_EIO (reported in d) or CARVE_ENOMEM.
 */
int carve_trace_load_openb(struct carve_trace *t, const char *path, struct carve_diags *d);

/* The same from memory; name is the display file name. */
int carve_trace_load_openb_buf(struct carve_trace *t, const char *name, const char *buf,
			       size_t len, struct carve_diags *d);

/* True when the file at path starts with the openb pod list's header
 * ("name,cpu_milli,memory_mib,num_gpu", after an optional UTF-8 BOM): the
 * one test of `carve trace check` and `carve simulate`. */
bool carve_trace_is_openb(const char *path);

/* Total GPU request of a task, milli: num_gpu * gpu_milli. */
int64_t carve_task_gpu_milli(const struct carve_task *task);

#endif
