/*
 * jobs_int.h - what the job list's loaders (jobs_load.c) need of the list
 * itself (jobs.c): its arena, for the file names positions borrow, and the
 * rule for a job class.
 */
#ifndef CARVE_JOBS_INT_H
#define CARVE_JOBS_INT_H

#include <stdbool.h>

#include "carve/arena.h"
#include "carve/jobs.h"

/* The list's arena: what is allocated there lives as long as js. */
struct carve_arena *carve__jobs_arena(struct carve_jobs *js);

/* s is a valid job class: 1-63 letters, digits, '-', '_' or '.'. */
bool carve__job_class_ok(const char *s);

#endif
