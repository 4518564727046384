/*
 * tracegen.h - synthetic workload traces for the replay simulator.
 *
 * A generator fills a job list (carve/jobs.h) with the arrivals of a
 * scenario's teams over a number of days.  Everything is drawn from one
 * seeded PRNG (xoshiro256** seeded through splitmix64; no rand(), no
 * clock), one independent stream per arrival process, so the same
 * scenario, days and seed give the same jobs in the same order, and
 * written out (carve_jobs_write_csv/yaml) the same bytes.
 *
 * Scenarios: "seed", the three teams of examples/seed-scenario
 * (docs/seed-trace.md has every distribution and parameter).
 */
#ifndef CARVE_TRACEGEN_H
#define CARVE_TRACEGEN_H

#include "carve/jobs.h"

/* Most days one trace may span. */
#define CARVE_TRACEGEN_MAX_DAYS 366

/*
 * Appends the scenario's jobs for days days (day 0 starts on a Monday at
 * 00:00; arrivals are seconds from then) to js, sorted by arrival then
 * name.  Returns the number of jobs added (>= 0), or CARVE_ENOTFOUND (no
 * such scenario), CARVE_EINVAL (days outside 1..CARVE_TRACEGEN_MAX_DAYS, a
 * NULL argument), CARVE_EEXISTS (js already holds a job of a generated
 * name) or CARVE_ENOMEM; err says which.  On error js may hold some of the
 * jobs.
 */
int carve_tracegen(struct carve_jobs *js, const char *scenario, int days, uint64_t seed,
		   struct carve_error *err);

/* The scenario names carve_tracegen() accepts, NULL-terminated. */
extern const char *const carve_tracegen_scenarios[];

#endif
