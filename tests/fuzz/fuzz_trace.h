/*
 * fuzz_trace.h - what the two trace-format targets (fuzz_trace_csv.c,
 * fuzz_trace_yaml.c) check on the jobs a loader kept:
 *
 *   - each job holds the invariants of carve/jobs.h (name, class, times,
 *     demand, podSets, counts, requests);
 *   - the writers' promise: written as a trace (CSV or YAML) the list loads
 *     back without a diagnostic, to as many jobs, and writing those again
 *     gives the same bytes (write, load, write is a fixed point); checked
 *     when the input is text (fuzz_is_text).  CSV holds
 *     one podSet and one GPU resource a job; a list it cannot hold gives
 *     CARVE_EINVAL before anything is written, and is not a finding.
 */
#ifndef CARVE_FUZZ_TRACE_H
#define CARVE_FUZZ_TRACE_H

#include <stdbool.h>
#include <string.h>

#include "fuzz.h"

#include "carve/jobs.h"

static inline bool ft_class_ok(const char *c)
{
	size_t n = strlen(c), i;

	if (n < 1 || n > 63)
		return false;
	for (i = 0; i < n; i++)
		if (!((c[i] >= 'a' && c[i] <= 'z') || (c[i] >= 'A' && c[i] <= 'Z') ||
		      (c[i] >= '0' && c[i] <= '9') || c[i] == '-' || c[i] == '_' || c[i] == '.'))
			return false;
	return true;
}

static inline void ft_check_job(const struct carve_job *j)
{
	size_t p, r;

	if (!j->name || !*j->name || !j->ns)
		fuzz_fail("a job without a name or namespace");
	if (j->job_class && !ft_class_ok(j->job_class))
		fuzz_fail("job %s: class '%s'", j->name, j->job_class);
	if (j->arrival < 0 || j->duration <= 0)
		fuzz_fail("job %s: arrival %lld, duration %lld", j->name, (long long)j->arrival,
			  (long long)j->duration);
	if (!(j->demand > 0 && j->demand <= 1))
		fuzz_fail("job %s: demand %g", j->name, j->demand);
	if (j->npodsets < 1)
		fuzz_fail("job %s: no podSet", j->name);
	for (p = 0; p < j->npodsets; p++) {
		const struct carve_job_podset *ps = &j->podsets[p];

		if (ps->count < 1 || ps->min_count < 1 || ps->min_count > ps->count)
			fuzz_fail("job %s: podSet %zu count %d minCount %d", j->name, p,
				  (int)ps->count, (int)ps->min_count);
		for (r = 0; r < ps->nreqs; r++)
			if (ps->reqs[r].milli < 0 || !ps->reqs[r].name)
				fuzz_fail("job %s: podSet %zu request %zu", j->name, p, r);
	}
}

/* js written as a trace into a new buffer (free()), or NULL with *rc. */
static inline char *ft_write(const struct carve_jobs *js, bool yaml, size_t *len, int *rc)
{
	struct carve_error err = {0};
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	*rc = yaml ? carve_jobs_write_yaml(js, f, &err) : carve_jobs_write_csv(js, f, &err);
	if (fclose(f))
		abort();
	if (*rc) {
		free(buf);
		return NULL;
	}
	return buf;
}

static inline void ft_round_trip(const struct carve_jobs *js, bool yaml)
{
	const char *fmt = yaml ? "YAML" : "CSV";
	struct carve_jobs *back;
	struct carve_diags d;
	size_t n1 = 0, n2 = 0, skipped = 0;
	char *w1, *w2;
	int rc;

	back = carve_jobs_create();
	if (!back)
		return;
	carve_diags_init(&d);
	w1 = ft_write(js, yaml, &n1, &rc);
	if (!w1) {
		if (rc != CARVE_EINVAL || yaml)
			fuzz_fail("writing %s: %s", fmt, carve_strerror(rc));
		goto out;
	}
	rc = yaml ? carve_jobs_load_yaml_buf(back, "rt", w1, n1, &d, &skipped)
		  : carve_jobs_load_csv_buf(back, "rt", w1, n1, &d, &skipped);
	if (rc || d.n || skipped || back->n != js->n) {
		fprintf(stderr, "--- written %s\n%.*s\n--- loading it\n", fmt, (int)n1, w1);
		carve_diags_print(&d, stderr);
		fuzz_fail("the %s trace written does not load back: rc %d, %zu of %zu jobs, "
			  "%zu skipped", fmt, rc, back->n, js->n, skipped);
	}
	w2 = ft_write(back, yaml, &n2, &rc);
	if (!w2 || n1 != n2 || memcmp(w1, w2, n1)) {
		fprintf(stderr, "--- first\n%.*s\n--- second\n%.*s\n", (int)n1, w1,
			w2 ? (int)n2 : 0, w2 ? w2 : "");
		fuzz_fail("the %s trace written, loaded and written again differs", fmt);
	}
	free(w2);
	free(w1);
out:
	carve_diags_cleanup(&d);
	carve_jobs_destroy(back);
}

/* Both checks on what one loader kept (the round trip only when the
 * input was text: fuzz_is_text), and its diagnostics printed. */
static inline void ft_check(struct carve_jobs *js, struct carve_diags *d, bool text)
{
	size_t i;

	for (i = 0; i < js->n; i++)
		ft_check_job(&js->jobs[i]);
	if (text) {
		ft_round_trip(js, false);
		ft_round_trip(js, true);
	}
	carve_diags_sort(d);
	carve_diags_print(d, fuzz_sink());
}

/* One fuzz input through a trace loader (CSV when !yaml), then ft_check. */
static inline int ft_fuzz_one(const uint8_t *data, size_t size, bool yaml)
{
	struct carve_jobs *js = carve_jobs_create();
	struct carve_diags d;
	size_t skipped = 0;
	int rc;

	if (!js)
		return 0;
	carve_diags_init(&d);
	rc = yaml ? carve_jobs_load_yaml_buf(js, "fuzz.trace.yaml", (const char *)data, size,
					     &d, &skipped)
		  : carve_jobs_load_csv_buf(js, "fuzz.trace.csv", (const char *)data, size,
					    &d, &skipped);
	if (!rc)
		ft_check(js, &d, fuzz_is_text(data, size));
	carve_diags_cleanup(&d);
	carve_jobs_destroy(js);
	return 0;
}

#endif
