/*
 * jobs_load.c - carve's trace files (docs/trace-format.md) and openb pod
 * lists into the job list of include/carve/jobs.h: time spans, the helpers
 * the CSV (jobs_csv.c) and YAML (jobs_yaml.c) loaders share, files and
 * directories (the one list of trace file extensions), and openb tasks as
 * single-pod jobs.
 *
 * Every loader builds one struct carve_job at a time in a scratch arena
 * that dies with the file, and hands it to carve_jobs_add(), which copies
 * it and checks the list's invariants in one place.  A job is kept only
 * when nothing about it was reported: each loader compares the error count
 * of the diagnostics before and after decoding a job.
 *
 * Ownership: file names that positions borrow are copied into the list's
 * arena (carve__jobs_keep_name), so they live as long as the jobs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "carve/jobs.h"
#include "carve/quantity.h"
#include "carve/resource.h"
#include "jobs_int.h"
#include "readfile.h"
#include "walk.h"

#define MAX_FILE_BYTES (1024u << 20)
#define MAX_SPAN CARVE_JOBS_MAX_SPAN

/* ---- time spans ---- */

int carve_jobs_parse_span(const char *s, int64_t *out, const char **why)
{
	static const char units[] = "dhms";
	static const int64_t mult[] = {86400, 3600, 60, 1};
	const char *p = s;
	int64_t total = 0;
	bool neg = false;
	int last = -1;

	if (!s || !*s) {
		if (why)
			*why = "empty time span";
		return CARVE_EPARSE;
	}
	if (*p == '-') {
		neg = true;
		p++;
	}
	do {
		int64_t v = 0;
		const char *u;
		int k;

		if (*p < '0' || *p > '9') {
			if (why)
				*why = "expected seconds or a span like 90, 45m, 2h30m, 1d";
			return CARVE_EPARSE;
		}
		for (; *p >= '0' && *p <= '9'; p++) {
			v = v * 10 + (*p - '0');
			if (v > MAX_SPAN)
				goto range;
		}
		if (!*p) {
			if (last >= 0 && last < 3) {
				/* "2h30" is ambiguous: a unit is needed after the first. */
				if (why)
					*why = "a number after a unit needs a unit too (s, m, h, d)";
				return CARVE_EPARSE;
			}
			k = 3;
		} else {
			u = strchr(units, *p);
			if (!u) {
				if (why)
					*why = "unknown unit (expected s, m, h or d)";
				return CARVE_EPARSE;
			}
			k = (int)(u - units);
			p++;
		}
		if (k <= last) {
			if (why)
				*why = "units must go from largest to smallest, each once (1d2h30m)";
			return CARVE_EPARSE;
		}
		last = k;
		total += v * mult[k];
		if (total > MAX_SPAN)
			goto range;
	} while (*p);
	*out = neg ? -total : total;
	return 0;
range:
	if (why)
		*why = "longer than 100 years";
	return CARVE_ERANGE;
}

/* ---- shared by the CSV, YAML and openb loaders (jobs_int.h) ---- */

const char *carve__jobs_keep_name(struct carve_jobs *js, const char *name)
{
	return carve_arena_strdup(carve__jobs_arena(js), name ? name : "(trace)");
}

bool carve__jobs_parse_demand(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s)
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !(v > 0.0 && v <= 1.0))
		return false;
	*out = v;
	return true;
}

bool carve__jobs_parse_fraction(const char *s, int32_t *out)
{
	int64_t m;

	if (carve_qty_parse(s, &m, NULL) || m < 1 || m > 999)
		return false;
	*out = (int32_t)m;
	return true;
}

bool carve__jobs_bytes_to_mib(int64_t milli, uint32_t *out)
{
	int64_t mib;

	if (milli < 0)
		return false;
	mib = milli / CARVE__MIB_MILLI + (milli % CARVE__MIB_MILLI != 0);
	if (mib > UINT32_MAX)
		return false;
	*out = (uint32_t)mib;
	return true;
}

int carve__jobs_add_reported(struct carve_jobs *js, const struct carve_job *j,
			     struct carve_diags *d, struct carve_pos pos, const char *prefix,
			     size_t *skipped)
{
	struct carve_error err = {0, ""};
	int rc = carve_jobs_add(js, j, &err);

	if (rc >= 0)
		return 0;
	carve_diag_error(d, pos, "%s%s", prefix, err.text);
	if (skipped)
		(*skipped)++;
	return rc == CARVE_ENOMEM ? rc : 0;
}

/* ---- files and directories ---- */

typedef int (*load_buf_fn)(struct carve_jobs *, const char *, const char *, size_t,
			   struct carve_diags *, size_t *);

static int load_file(struct carve_jobs *js, const char *path, struct carve_diags *d,
		     size_t *skipped, load_buf_fn fn)
{
	char *buf;
	size_t len;
	int rc;

	if (!js || !path || !d)
		return CARVE_EINVAL;
	rc = carve__read_file(d, path, MAX_FILE_BYTES, &buf, &len);
	if (rc)
		return rc;
	rc = fn(js, path, buf, len, d, skipped);
	carve_free(buf);
	return rc;
}

int carve_jobs_load_csv(struct carve_jobs *js, const char *path, struct carve_diags *d,
			size_t *skipped)
{
	return load_file(js, path, d, skipped, carve_jobs_load_csv_buf);
}

int carve_jobs_load_yaml(struct carve_jobs *js, const char *path, struct carve_diags *d,
			 size_t *skipped)
{
	return load_file(js, path, d, skipped, carve_jobs_load_yaml_buf);
}

/* The one list of carve's trace file extensions. */
static const char *const trace_exts[] = {".trace.csv", ".trace.yaml", ".trace.yml"};

bool carve_jobs_is_trace_name(const char *path)
{
	size_t i;

	for (i = 0; i < sizeof(trace_exts) / sizeof(trace_exts[0]); i++)
		if (carve__has_ext(path, trace_exts[i]))
			return true;
	return false;
}

bool carve_jobs_dir_has_trace(const char *dir)
{
	struct carve_diags d;
	char **names;
	size_t n = 0;
	bool found;

	carve_diags_init(&d);
	found = false;
	if (!carve__walk_dir(&d, dir, carve_jobs_is_trace_name, &names, &n)) {
		found = n > 0;
		carve__walk_free(names, n);
	}
	carve_diags_cleanup(&d);
	return found;
}

/* An openb pod list as `carve simulate` reads it: one single-pod job per
 * row (carve_jobs_from_openb), positions on a name js keeps. */
static int load_openb(struct carve_jobs *js, const char *path, struct carve_diags *d,
		      size_t *skipped)
{
	const char *file = carve__jobs_keep_name(js, path);
	struct carve_trace *t = carve_trace_create();
	char *buf = NULL;
	size_t len;
	int rc;

	if (!file || !t) {
		carve_trace_destroy(t);
		return CARVE_ENOMEM;
	}
	rc = carve__read_file(d, path, MAX_FILE_BYTES, &buf, &len);
	if (!rc)
		rc = carve__trace_load_openb_kept(t, file, buf, len, d);
	if (!rc)
		rc = carve_jobs_from_openb(js, t, d, skipped);
	carve_free(buf);
	carve_trace_destroy(t);
	return rc;
}

static int load_one(struct carve_jobs *js, const char *path, struct carve_diags *d,
		    size_t *skipped)
{
	if (carve__has_ext(path, ".csv") && carve_trace_is_openb(path))
		return load_openb(js, path, d, skipped);
	if (carve__has_ext(path, ".csv"))
		return carve_jobs_load_csv(js, path, d, skipped);
	if (carve__has_ext(path, ".yaml") || carve__has_ext(path, ".yml"))
		return carve_jobs_load_yaml(js, path, d, skipped);
	carve_diag_error(d, (struct carve_pos){carve__jobs_keep_name(js, path), 0, 0},
			 "not a trace file: expected a .csv, .yaml or .yml name");
	return CARVE_EIO;
}

int carve_jobs_load_path(struct carve_jobs *js, const char *path, struct carve_diags *d,
			 size_t *skipped)
{
	char **names;
	size_t n, i;
	struct stat st;
	int rc;

	if (!js || !path || !d)
		return CARVE_EINVAL;
	if (stat(path, &st)) {
		carve_diag_error(d, (struct carve_pos){0}, "cannot open %s: %s", path,
				 strerror(errno));
		return CARVE_EIO;
	}
	if (!S_ISDIR(st.st_mode))
		return load_one(js, path, d, skipped);
	rc = carve__walk_dir(d, path, carve_jobs_is_trace_name, &names, &n);
	if (rc)
		return rc;
	for (i = 0; i < n && rc != CARVE_ENOMEM; i++) {
		int r = load_one(js, names[i], d, skipped);

		if (r && !rc)
			rc = r;
	}
	carve__walk_free(names, n);
	return rc;
}

/* ---- openb ---- */

int carve_jobs_from_openb(struct carve_jobs *js, const struct carve_trace *t,
			  struct carve_diags *d, size_t *skipped)
{
	int64_t first = INT64_MAX, last = 0;
	size_t i;
	int rc;

	if (!js || !t || !d)
		return CARVE_EINVAL;
	for (i = 0; i < t->n; i++) {
		const struct carve_task *k = &t->tasks[i];

		if (k->creation_time >= 0 && k->creation_time < first)
			first = k->creation_time;
		if (k->creation_time > last)
			last = k->creation_time;
		if (k->deletion_time > last)
			last = k->deletion_time;
		if (k->scheduled_time > last)
			last = k->scheduled_time;
	}
	if (first == INT64_MAX)
		first = 0;
	for (i = 0; i < t->n; i++) {
		const struct carve_task *k = &t->tasks[i];
		int64_t c = k->creation_time >= 0 ? k->creation_time : first;
		struct carve_job_podset ps;
		struct carve_req reqs[3];
		struct carve_job j;

		if (k->deletion_time >= 0 && k->deletion_time < c) {
			carve_diag_error(d, k->pos, "deletion_time: %lld is before creation_time "
					 "%lld (negative duration); row skipped",
					 (long long)k->deletion_time, (long long)c);
			if (skipped)
				(*skipped)++;
			continue;
		}
		memset(&j, 0, sizeof(j));
		memset(&ps, 0, sizeof(ps));
		j.name = k->name;
		j.arrival = c - first;
		j.duration = (k->deletion_time >= 0 ? k->deletion_time : last) - c;
		if (j.duration < 1)
			j.duration = 1;
		j.pos = k->pos;
		reqs[0] = (struct carve_req){CARVE_RES_NAME_CPU, k->cpu_milli};
		reqs[1] = (struct carve_req){CARVE_RES_NAME_MEMORY,
					      k->memory_mib * CARVE__MIB_MILLI};
		ps.nreqs = 2;
		if (k->num_gpu > 0 && k->gpu_milli >= 1000)
			reqs[ps.nreqs++] = (struct carve_req){CARVE_RES_NAME_GPU,
							      (int64_t)k->num_gpu * 1000};
		else if (k->num_gpu > 0)
			ps.gpu_milli = k->gpu_milli;
		ps.reqs = reqs;
		ps.count = 1;
		ps.nmodels = k->nmodels;
		ps.models = k->models;
		j.npodsets = 1;
		j.podsets = &ps;
		rc = carve__jobs_add_reported(js, &j, d, k->pos, "", skipped);
		if (rc)
			return rc;
	}
	return 0;
}
