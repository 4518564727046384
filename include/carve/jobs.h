/*
 * jobs.h - workload traces for the replay simulator: jobs that arrive at a
 * time, wait in a queue, run for a duration once every pod has a place,
 * and leave.
 *
 * A job is what a team submits: one Kueue Workload (or Volcano PodGroup),
 * with podSets of identical pods.  carve's own trace format (CSV and YAML,
 * docs/trace-format.md) describes jobs directly; openb pod lists become
 * one single-pod job per row (carve_jobs_from_openb).
 *
 * Ownership: a struct carve_jobs owns its job array and everything the jobs
 * point to (strings, podSets, requests, selectors) in one arena, plus the
 * file names their positions borrow: keep it alive while diagnostics that
 * came from it are printed.  carve_jobs_add() copies its argument.  Loading
 * appends, so several files may feed one list; jobs keep the order they
 * were added in (the simulator sorts by arrival, ties by that order).
 *
 * Invariants of every job in a list: name non-empty and unique in its
 * namespace (as Kubernetes names objects);
 * job_class NULL or 1-63 letters, digits, '-', '_' or '.'; arrival >= 0; duration > 0; 0 < demand <= 1; npodsets >= 1; each podSet
 * has count >= 1 and 1 <= min_count <= count; requests are per pod, in
 * milli-units (carve/quantity.h), non-negative, resource names as
 * Kubernetes spells them ("nvidia.com/gpu", "nvidia.com/mig-3g.40gb",
 * "cpu", "memory").
 */
#ifndef CARVE_JOBS_H
#define CARVE_JOBS_H

#include <stdio.h>

#include "carve/admit.h"
#include "carve/diag.h"
#include "carve/trace.h"

struct carve_job_podset {
	const char *name;               /* unique within the job ("main" when one) */
	int32_t count;
	int32_t min_count;              /* partial admission floor; == count when none */
	size_t nreqs;
	const struct carve_req *reqs;   /* per pod */
	int32_t gpu_milli;              /* fraction of one GPU per pod, 1..999; 0 none */
	uint32_t gpu_mem_mib;           /* GPU memory per pod for a fraction; 0 none */
	size_t nmodels;                 /* allowed GPU models (openb gpu_spec); 0 any */
	const char *const *models;
	size_t nselector;
	const struct carve_label *selector; /* nodeSelector */
	const char *topology_level;     /* Kueue TAS level label key; NULL none */
	bool topology_required;
	size_t nterms;
	const struct carve_match_term *terms; /* required node affinity (OR of ANDs) */
	size_t ntolerations;
	const struct carve_toleration_spec *tolerations;
};

struct carve_job {
	const char *name;               /* unique in its namespace */
	const char *ns;                 /* namespace; "default" when not given */
	const char *queue;              /* LocalQueue name in ns; NULL: the trace gives none */
	const char *cluster_queue;      /* the queue itself, cluster-wide (a Volcano or KAI
					 * queue as its PodGroup names it); wins over queue */
	int32_t priority;
	int64_t arrival;                /* seconds from the start of the trace */
	/* Queue-order time (the engine's creation time): created when
	 * has_created (a workload that existed before it arrived), else the
	 * arrival; created_unknown: none at all, older than any that has one
	 * (a Workload without creationTimestamp). */
	int64_t created;
	bool has_created, created_unknown;
	int64_t duration;               /* seconds of running once every pod has a place */
	double demand;                  /* GPU work actually done, as a fraction of the
					 * devices allocated (0, 1]; 1 when not given */
	bool checkpoint;                /* a preempted job keeps its progress */
	const char *job_class;          /* what kind of work ("training", "inference"),
					 * for per-class metrics; NULL none */
	size_t npodsets;
	const struct carve_job_podset *podsets;
	struct carve_pos pos;           /* where the job was read (file NULL: made in memory) */
};

struct carve_jobs {
	size_t n;
	struct carve_job *jobs;
	struct carve_jobs_int *priv;    /* arena, capacity, name index */
};

/* An empty list; NULL on allocation failure. */
struct carve_jobs *carve_jobs_create(void);
void carve_jobs_destroy(struct carve_jobs *js);

/*
 * Appends a deep copy of j (strings, podSets, requests, selectors, models).
 * NULL ns becomes "default", demand 0 becomes 1, min_count 0 becomes count,
 * a NULL podSet name becomes "main" (or "ps<i>" beyond the first).  Returns
 * the job's index (>= 0), CARVE_EEXISTS (a job of that name is in the
 * list), CARVE_EINVAL (an invariant above does not hold; err says which
 * field) or CARVE_ENOMEM.
 */
int carve_jobs_add(struct carve_jobs *js, const struct carve_job *j, struct carve_error *err);

/* ---- carve's own trace format (docs/trace-format.md) ---- */

/* The longest time span anything reads (100 years, in seconds): trace
 * arrivals and durations, and the one bound for the CLI's time options
 * (--until, --gang-timeout, --workload-duration; docs/limits.md). */
#define CARVE_JOBS_MAX_SPAN (100LL * 365 * 86400)

/*
 * Parses a time span: a whole number of seconds ("90"), or one or more
 * groups of digits with a unit s, m, h or d, largest first, each unit at
 * most once ("45m", "2h30m", "1d12h").  A leading '-' is read (so callers
 * can say "must not be negative") but no other sign, space or fraction.
 * Returns 0, CARVE_EPARSE or CARVE_ERANGE (beyond 100 years); on error
 * *out is untouched and *why (when not NULL) points at a static reason.
 */
int carve_jobs_parse_span(const char *s, int64_t *out, const char **why);

/*
 * Loaders.  Each appends to js the jobs of one file and reports every bad
 * row or field in d gcc-style, "file:line:col: error: <field>: <message>",
 * at the field's position (a CSV column, a YAML key or value).  A job with
 * any error is skipped and counted in *skipped (when not NULL; it is
 * added to, not reset); every other job is kept.  A file that cannot be
 * read, or a CSV whose header is bad (a missing required column, an
 * unknown one: "did you mean"), loads nothing and counts nothing skipped.
 * Return 0 when the file could be read (even with diagnostics), CARVE_EIO
 * (reported in d), CARVE_EINVAL (a NULL argument) or CARVE_ENOMEM.
 * Positions borrow a copy of path that js owns.
 */
int carve_jobs_load_csv(struct carve_jobs *js, const char *path, struct carve_diags *d,
			size_t *skipped);
int carve_jobs_load_yaml(struct carve_jobs *js, const char *path, struct carve_diags *d,
			 size_t *skipped);
/* The same from memory; name is the display file name. */
int carve_jobs_load_csv_buf(struct carve_jobs *js, const char *name, const char *buf,
			    size_t len, struct carve_diags *d, size_t *skipped);
int carve_jobs_load_yaml_buf(struct carve_jobs *js, const char *name, const char *buf,
			     size_t len, struct carve_diags *d, size_t *skipped);

/*
 * True when the name (or path) is a carve trace file's: it ends in
 * ".trace.csv", ".trace.yaml" or ".trace.yml" (the one list of trace
 * extensions).  These are the files carve_jobs_load_path reads from a
 * directory and the manifest walk (carve/manifest.h) leaves out.
 */
bool carve_jobs_is_trace_name(const char *path);

/*
 * True when directory dir directly holds a file whose name
 * carve_jobs_is_trace_name accepts (hidden names excepted, as
 * carve_jobs_load_path skips them); false when it holds none or cannot be
 * read.  Allocates only temporarily.
 */
bool carve_jobs_dir_has_trace(const char *dir);

/*
 * A file by its extension (.csv: CSV; .yaml, .yml: YAML; anything else is
 * reported in d and returns CARVE_EIO), or a directory: every "*.trace.csv",
 * "*.trace.yaml" and "*.trace.yml" directly in it (not hidden), in name order
 * (subdirectories are not entered; the manifest walk of carve/manifest.h
 * skips exactly these files).  Returns as the loaders do, the first error
 * of the files when several fail; the first CARVE_ENOMEM stops.
 */
int carve_jobs_load_path(struct carve_jobs *js, const char *path, struct carve_diags *d,
			 size_t *skipped);

/*
 * One single-pod job per openb task of t: name as in the trace, namespace
 * "default", no queue, priority 0, demand 1, no checkpoint; arrival =
 * creation_time minus the earliest creation_time in t (a task without one
 * arrives at 0); duration = deletion_time - creation_time, or, without a
 * deletion time, the last time anywhere in t minus creation_time; at least
 * 1 s either way.  Requests: cpu (cpu_milli), memory (memory_mib MiB), and
 * nvidia.com/gpu = num_gpu for whole GPUs, or gpu_milli < 1000 as the
 * podSet's gpu_milli (a fraction of one GPU, num_gpu 1); models from
 * gpu_spec.  A task whose deletion_time is before its creation_time, or
 * that cannot be added (a duplicate name), is reported at its row and
 * counted in *skipped.  Positions borrow t's file names: keep t alive while
 * js's positions are used.  Returns 0, CARVE_EINVAL or CARVE_ENOMEM.
 */
int carve_jobs_from_openb(struct carve_jobs *js, const struct carve_trace *t,
			  struct carve_diags *d, size_t *skipped);

/*
 * Writers: js in carve's trace format, so that the loaders read back the
 * same jobs (names, times, requests, fractions, models, selectors).  CSV
 * holds one podSet per job: a job with several gives CARVE_EINVAL (err
 * names it) before anything is written.  Returns 0, CARVE_EINVAL or
 * CARVE_EIO (a write failed).
 */
int carve_jobs_write_csv(const struct carve_jobs *js, FILE *out, struct carve_error *err);
int carve_jobs_write_yaml(const struct carve_jobs *js, FILE *out, struct carve_error *err);

#endif
