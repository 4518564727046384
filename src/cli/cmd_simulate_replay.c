/*
 * cmd_simulate_replay.c - `carve simulate --mode replay` (the default):
 * manifests and a job trace (carve's trace format, a directory of traces
 * or an openb pod CSV) replayed in virtual time through the admission
 * engine and/or the kube-default baseline (src/sim/replay.c,
 * docs/simulator.md), the metrics printed as JSON or a table, and the HTML
 * report on request.
 *
 * Invariants: input problems are printed gcc-style on stderr and nothing
 * is simulated (exit 1).  SIGINT stops the replay at the next event time
 * and the partial report is printed (exit 1); the handler is installed
 * only while the replay runs.  Ownership: simulate_replay owns the
 * manifests, jobs, trace and result objects it makes and frees them all;
 * paths and options are borrowed.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "carve/jobs.h"
#include "carve/report.h"
#include "carve/sim.h"
#include "carve/trace.h"
#include "cli.h"

/* ---- replay: the trace --------------------------------------------------------------- */

/*
 * Reads the job trace at path into js; problems go to d.  The one place
 * the replay reads a trace: an openb pod CSV (recognised by its header)
 * becomes one single-pod job per row (carve_jobs_from_openb; t keeps its
 * file names alive), anything else is carve's own trace format, a file or
 * a directory of *.trace.csv / *.trace.yaml (carve_jobs_load_path,
 * docs/trace-format.md).  *skipped counts rows reported and not made into
 * jobs.  Returns 0, CARVE_EIO or CARVE_ENOMEM.
 */
static int load_trace(struct carve_jobs *js, struct carve_trace *t, const char *path,
		      struct carve_diags *d, size_t *skipped)
{
	struct stat st;
	int rc;

	*skipped = 0;
	if (stat(path, &st) || !S_ISREG(st.st_mode) || !carve_trace_is_openb(path))
		return carve_jobs_load_path(js, path, d, skipped);
	rc = carve_trace_load_openb(t, path, d);
	if (rc)
		return rc;
	rc = carve_jobs_from_openb(js, t, d, skipped);
	return rc == CARVE_ENOMEM ? rc : 0;
}

/* ---- replay: running and printing ----------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Runs one simulation to its end (or SIGINT) with progress on stderr;
 * returns the result object, NULL on failure (reported). */
static json_t *replay_one(struct carve_manifests *m, const struct carve_jobs *js,
			  const struct simulate_replay_opts *ro, enum carve_sim_sched sched)
{
	struct carve_sim_opts o = ro->sim;
	struct carve_error err;
	struct carve_sim *s;
	const char *who = sched == CARVE_SIM_EXCLUSIVE ? "kube-default" : "carve";
	double t0 = simulate_now_s(), last = t0;
	json_t *r;
	int rc;

	o.sched = sched;
	s = carve_sim_create(m, js, &o, &err);
	if (!s) {
		carve_diags_sort(&m->diags);
		carve_diags_print(&m->diags, stderr);
		cli_errorf("simulate", "%s; nothing simulated", err.text);
		return NULL;
	}
	if (carve_sim_skipped(s))
		fprintf(stderr, "carve simulate: %s: skipped %zu invalid job%s\n", who,
			carve_sim_skipped(s), carve_sim_skipped(s) == 1 ? "" : "s");
	do {
		rc = carve_sim_run_events(s, ro->until, 4096, &interrupted, &err);
		if (rc > 0 && simulate_now_s() - last > 1.0) {
			last = simulate_now_s();
			fprintf(stderr, "carve simulate: %s: t=%llds, %zu events, %zu jobs left, "
				"%.1f s\n", who, (long long)carve_sim_now(s), carve_sim_events(s),
				carve_sim_jobs_left(s), last - t0);
		}
	} while (rc > 0 && !interrupted);
	if (rc < 0) {
		cli_errorf("simulate", "%s: %s", who, err.text);
		carve_sim_destroy(s);
		return NULL;
	}
	if (interrupted)
		fprintf(stderr, "carve simulate: %s: interrupted at t=%llds; partial report\n",
			who, (long long)carve_sim_now(s));
	/* Rejections by the engine at arrival are errors too. */
	if (m->diags.nerrors) {
		carve_diags_sort(&m->diags);
		carve_diags_print(&m->diags, stderr);
	}
	r = carve_sim_result_json(s);
	carve_sim_destroy(s);
	if (!r)
		fprintf(stderr, "carve simulate: out of memory\n");
	return r;
}

/* The number at keys path[0].path[1]... (up to 4, NULL-ended) of o, or NaN. */
static double jnum(json_t *o, const char *const *path)
{
	size_t i;

	for (i = 0; i < 4 && path[i]; i++)
		o = json_object_get(o, path[i]);
	return json_is_number(o) ? json_number_value(o) : NAN;
}

static void cell(double v)
{
	if (isnan(v))
		printf("  %14s", "-");
	else
		printf("  %14.2f", v);
}

/* One row: label, then the value at the key path in each run. */
static void row_path(json_t *const *runs, size_t n, const char *label,
		     const char *const *path)
{
	size_t i;

	printf("%-36s", label); /* carve's own words: names from the input are headings */
	for (i = 0; i < n; i++)
		cell(jnum(runs[i], path));
	printf("\n");
}

#define row(runs, n, label, ...) \
	row_path((runs), (n), (label), (const char *const[]){__VA_ARGS__, NULL})

/* A heading naming a queue or class from the input: the name escaped
 * (carve_fputs_esc), so it cannot add a row or steer the terminal. */
static void heading(const char *what, const char *name)
{
	printf("\n%s ", what);
	carve_fputs_esc(name, stdout);
	putchar('\n');
}

static void print_replay_table(json_t *const *runs, const char *const *names, size_t n)
{
	json_t *quota = json_object_get(runs[0], "quota");
	json_t *classes = json_object_get(runs[0], "classes");
	const char *q;
	json_t *v;
	size_t i;

	printf("%-36s", "metric");
	for (i = 0; i < n; i++)
		printf("  %14s", names[i]);
	printf("\n");
	row(runs, n, "horizon_s", "horizon_s");
	row(runs, n, "jobs completed", "jobs", "completed");
	row(runs, n, "jobs pending at the end", "jobs", "pending");
	row(runs, n, "  of which never fit", "jobs", "never_fit");
	row(runs, n, "gpu_allocation_pct", "gpu_allocation_pct");
	row(runs, n, "effective_utilisation_pct", "effective_utilisation_pct");
	row(runs, n, "first_time_success_pct", "first_time_success_pct");
	row(runs, n, "fragmentation_pct", "fragmentation_pct");
	row(runs, n, "preemptions", "preemptions");
	row(runs, n, "gang_timeouts", "gang_timeouts");
	row(runs, n, "gpu_hours_per_job", "gpu_hours_per_job");
	json_object_foreach(quota, q, v) {
		(void)v;
		heading("queue", q);
		row(runs, n, "  first_time_success_pct", "queues", q, "first_time_success_pct");
		row(runs, n, "  gpu_hours_per_job", "queues", q, "gpu_hours_per_job");
		row(runs, n, "  wait_first_gpu_s p50", "wait_first_gpu_s", q, "p50");
		row(runs, n, "  wait_first_gpu_s p95", "wait_first_gpu_s", q, "p95");
		row(runs, n, "  wait_first_gpu_s p99", "wait_first_gpu_s", q, "p99");
		row(runs, n, "  quota nominal", "quota", q, "nominal");
		row(runs, n, "  quota used_avg", "quota", q, "used_avg");
		row(runs, n, "  quota borrowed_avg", "quota", q, "borrowed_avg");
	}
	json_object_foreach(classes, q, v) {
		heading("class", q);
		row(runs, n, "  jobs completed", "classes", q, "jobs_completed");
		if (!json_is_null(json_object_get(v, "first_time_success_pct")))
			row(runs, n, "  first_time_success_pct", "classes", q,
			    "first_time_success_pct");
		row(runs, n, "  wait_first_gpu_s p50", "classes", q, "wait_first_gpu_s", "p50");
		row(runs, n, "  wait_first_gpu_s p95", "classes", q, "wait_first_gpu_s", "p95");
		row(runs, n, "  gpu_hours_per_job", "classes", q, "gpu_hours_per_job");
	}
}

/* Manifests from each path (the manifest walk leaves trace files out); a
 * directory that holds trace files is the trace too when --trace is not
 * given (the first such directory). */
static int load_inputs(struct carve_manifests *m, char *const *paths, size_t n,
		       const char **trace)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		struct stat st;

		if (!*trace && !stat(paths[i], &st) && S_ISDIR(st.st_mode) &&
		    carve_jobs_dir_has_trace(paths[i]))
			*trace = paths[i];
		rc = carve_manifests_load_path(m, paths[i]);
		if (rc == CARVE_ENOMEM)
			return rc;
	}
	return 0;
}

/* Writes the HTML report of result to path through output.c (a file is
 * replaced whole or left as it was; a device or FIFO is written directly).
 * Returns 0, or -1 after saying why on stderr. */
static int write_report(const char *path, const json_t *result)
{
	struct carve_error err;
	struct cli_out o;
	int rc, werr;

	if (cli_out_open(&o, path, "simulate"))
		return -1;
	rc = carve_report_html(o.f, result, "carve simulate", &err);
	werr = errno; /* the failed write's reason, when rc is CARVE_EIO */
	if (rc && rc != CARVE_EIO) {
		cli_out_abort(&o);
		cli_errorf("simulate", "%s: %s", path, err.text);
		return -1;
	}
	/* A failed write (CARVE_EIO) is found and reported by the commit. */
	return cli_out_commit(&o, werr) || rc ? -1 : 0;
}

int simulate_replay(char *const *paths, size_t npaths, const char *trace,
		    const struct simulate_replay_opts *ro)
{
	struct carve_manifests *m = carve_manifests_create();
	struct carve_jobs *js = carve_jobs_create();
	struct carve_trace *t = carve_trace_create();
	json_t *runs[2] = {NULL, NULL}, *root = NULL;
	const char *names[2];
	struct sigaction sa, old;
	size_t skipped = 0, n = 0;
	int rc = CARVE_EXIT_FAIL;

	if (m)
		m->names_warn = true; /* decide anyway; validate is the strict one */
	if (!m || !js || !t || load_inputs(m, paths, npaths, &trace))
		goto out_nomem;
	if (!trace && !ro->sim.workloads) {
		fprintf(stderr, "carve simulate: no trace (--trace FILE, or a DIR holding *.trace.csv or *.trace.yaml, or --workloads)\n");
		rc = CARVE_EXIT_USAGE;
		goto out;
	}
	if (ro->sim.workloads && (ro->baseline || ro->compare)) {
		fprintf(stderr, "carve simulate: --workloads runs carve only: the stock-stack "
			"model cannot start from admitted Workloads\n");
		rc = CARVE_EXIT_USAGE;
		goto out;
	}
	if (trace && load_trace(js, t, trace, &m->diags, &skipped) == CARVE_ENOMEM)
		goto out_nomem;
	if (!m->diags.nerrors && !js->n && trace)
		carve_diag_error(&m->diags, (struct carve_pos){0}, "%s: no jobs", trace);
	if (m->diags.nerrors) {
		carve_diags_sort(&m->diags);
		carve_diags_print(&m->diags, stderr);
		fprintf(stderr, "carve simulate: %zu error%s in the input; nothing simulated\n",
			m->diags.nerrors, m->diags.nerrors == 1 ? "" : "s");
		goto out;
	}
	carve_diags_sort(&m->diags);
	carve_diags_print(&m->diags, stderr); /* warnings */
	carve_diags_clear(&m->diags);         /* printed: later prints show new ones only */
	if (m->nworkloads + m->npodgroups && !ro->sim.workloads)
		fprintf(stderr, "carve simulate: left out %zu Workload/PodGroup object%s of the "
			"manifests: the trace is the workload (--workloads adds them)\n", m->nworkloads + m->npodgroups,
			m->nworkloads + m->npodgroups == 1 ? "" : "s");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	interrupted = 0;
	if (ro->baseline || ro->compare) {
		names[n] = "kube-default";
		runs[n] = replay_one(m, js, ro, CARVE_SIM_EXCLUSIVE);
		if (!runs[n++])
			goto out_sig;
	}
	if (!ro->baseline && interrupted) {
		names[n] = "carve";
		runs[n++] = json_pack("{s:s, s:s, s:b}", "mode", "replay", "scheduler", "carve",
				      "interrupted_before_start", 1);
		if (!runs[n - 1])
			goto out_sig;
	} else if (!ro->baseline) {
		names[n] = "carve";
		runs[n] = replay_one(m, js, ro, CARVE_SIM_CARVE);
		if (!runs[n++])
			goto out_sig;
	}
	if (ro->compare) {
		root = json_object();
		if (!root || json_object_set(root, "baseline", runs[0]) ||
		    json_object_set(root, "carve", runs[1]))
			goto out_sig;
	} else {
		root = json_incref(runs[0]);
	}
	rc = interrupted ? CARVE_EXIT_FAIL : CARVE_EXIT_OK;
	if (ro->table) {
		print_replay_table(runs, names, n);
	} else if (json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
			      JSON_REAL_PRECISION(10)) && !ferror(stdout)) {
		fprintf(stderr, "carve simulate: out of memory\n");
		rc = CARVE_EXIT_FAIL;
	} else {
		fputc('\n', stdout);
	}
	if (!cli_stdout_ok("simulate"))
		rc = CARVE_EXIT_FAIL;
	if (ro->report && write_report(ro->report, root))
		rc = CARVE_EXIT_FAIL;
out_sig:
	sigaction(SIGINT, &old, NULL);
	goto out;
out_nomem:
	fprintf(stderr, "carve simulate: out of memory\n");
	rc = CARVE_EXIT_FAIL;
out:
	json_decref(root);
	json_decref(runs[0]);
	json_decref(runs[1]);
	carve_jobs_destroy(js);
	carve_trace_destroy(t);
	carve_manifests_destroy(m);
	return rc;
}
