/*
 * jobs_int.h - what the job list's loaders need of the list itself (jobs.c:
 * its arena, for the file names positions borrow, and the rule for a job
 * class), and what the loaders share (jobs_load.c, used by jobs_csv.c and
 * jobs_yaml.c): limits, value parsers, and adding a job with its failure
 * reported.  Cross-file names start with carve__jobs_ / CARVE__.
 */
#ifndef CARVE_JOBS_INT_H
#define CARVE_JOBS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "carve/arena.h"
#include "carve/jobs.h"
#include "carve/trace.h"

/* Most pods in one podSet (count, min_count). */
#define CARVE__JOBS_MAX_COUNT 100000
/* Milli-units of one MiB. */
#define CARVE__MIB_MILLI (1024LL * 1024 * 1000)

/* The list's arena: what is allocated there lives as long as js. */
struct carve_arena *carve__jobs_arena(struct carve_jobs *js);

/* s is a valid job class: 1-63 letters, digits, '-', '_' or '.'. */
bool carve__job_class_ok(const char *s);

/* jobs_load.c: shared by the CSV, YAML and openb loaders. */

/* name (NULL: "(trace)") copied into js's arena, for positions to borrow;
 * NULL when out of memory. */
const char *carve__jobs_keep_name(struct carve_jobs *js, const char *name);
/* A job's demand: a number in (0, 1]. */
bool carve__jobs_parse_demand(const char *s, double *out);
/* Milli of one GPU: "0.5", "500m", 1..999. */
bool carve__jobs_parse_fraction(const char *s, int32_t *out);
/* Bytes quantity to whole MiB, rounded up; false when negative or too big. */
bool carve__jobs_bytes_to_mib(int64_t milli, uint32_t *out);
/*
 * Adds j.  Reports a failure at pos (the name's position) with the list's
 * message and counts the job as skipped.  Returns CARVE_ENOMEM, else 0.
 */
int carve__jobs_add_reported(struct carve_jobs *js, const struct carve_job *j,
			     struct carve_diags *d, struct carve_pos pos, const char *prefix,
			     size_t *skipped);

/* trace_openb.c: an openb pod list from memory whose positions borrow file,
 * a name the caller keeps alive (carve__jobs_keep_name), so jobs made from
 * the tasks outlive t.  As carve_trace_load_openb_buf otherwise. */
int carve__trace_load_openb_kept(struct carve_trace *t, const char *file, const char *buf,
				 size_t len, struct carve_diags *d);

#endif
