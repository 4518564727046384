/*
 * cmd_simulate_replay.c - `carve simulate --mode replay` (the default):
 * manifests and a job trace (carve's trace format, a directory of traces
 * or an openb pod CSV; with --seeds one generated trace per seed) replayed
 * in virtual time through the admission engine and the baseline models
 * asked for (src/sim/replay.c, docs/simulator.md), with progress on stderr
 * (fraction of the window, time left); the result {"settings", "runs"}
 * printed as JSON or a table (src/sim/table.c), and the HTML report
 * on request.
 *
 * Invariants: input problems are printed gcc-style on stderr and nothing
 * is simulated (exit 1).  SIGINT stops the replay at the next event time
 * and the partial report is printed (exit 1); the handler is installed
 * only while the replay runs.  Runs are in the order carve, then the
 * baselines as listed; a seeded run aggregates the seeds' runs number by
 * number (median, min, max) and keeps them all.  Ownership:
 * simulate_replay owns the manifests, jobs, trace and result objects it
 * makes and frees them all; paths and options are borrowed.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "carve/format.h"
#include "carve/jobs.h"
#include "carve/report.h"
#include "carve/sim.h"
#include "carve/trace.h"
#include "carve/tracegen.h"
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

/*
 * The window a run covers, as the CLI can know it before the run: from the
 * first arrival to the end of the trace's span (the latest arrival plus
 * duration), or to --until when given.  For progress, and for the
 * settings when the run object has no "window" of its own.
 */
struct window {
	int64_t start, end;
	bool known, until;
};

static struct window window_of(const struct carve_jobs *js, const struct simulate_replay_opts *ro)
{
	struct window w = {0, 0, false, false};
	size_t i;

	for (i = 0; i < js->n; i++) {
		const struct carve_job *j = &js->jobs[i];
		int64_t e = j->arrival > CARVE_SIM_TIME_MAX - j->duration ? CARVE_SIM_TIME_MAX :
			j->arrival + j->duration;

		if (!w.known || j->arrival < w.start)
			w.start = j->arrival;
		if (!w.known || e > w.end)
			w.end = e;
		w.known = true;
	}
	if (!w.known && ro->sim.workloads) {   /* pending Workloads arrive at 0 */
		w.end = ro->sim.workload_duration ? ro->sim.workload_duration : 3600;
		w.known = true;
	}
	if (ro->until >= 0) {
		w.end = ro->until;
		w.until = w.known = true;
	}
	return w;
}

/* A progress line: the fraction of the window done and an estimate of the
 * time left at the pace so far; past the window's end, the backlog. */
static void progress(const char *who, const struct carve_sim *s, const struct window *w,
		     double elapsed)
{
	int64_t now = carve_sim_now(s);
	char a[CARVE_FMT_LEN], b[CARVE_FMT_LEN], c[CARVE_FMT_LEN];

	fprintf(stderr, "carve simulate: %s: ", who);
	if (w->known && w->end > w->start && now < w->end) {
		double f = now <= w->start ? 0 : (double)(now - w->start) / (double)(w->end - w->start);

		carve_fmt(a, sizeof(a), CARVE_UNIT_SEC, (double)now);
		carve_fmt(b, sizeof(b), CARVE_UNIT_SEC, (double)w->end);
		carve_fmt(c, sizeof(c), CARVE_UNIT_SEC, f > 0 ? elapsed * (1 - f) / f : NAN);
		fprintf(stderr, "%.1f %% of the window (t = %s of %s), %.1f s so far, about %s "
			"left\n", f * 100, a, b, elapsed, f > 0 ? c : "?");
	} else {
		carve_fmt(a, sizeof(a), CARVE_UNIT_SEC, (double)now);
		fprintf(stderr, "past the window's end (t = %s): serving the backlog, %zu jobs "
			"left, %.1f s so far\n", a, carve_sim_jobs_left(s), elapsed);
	}
}

/* Runs one simulation to its end (or SIGINT) with progress on stderr;
 * returns the result object, NULL on failure (reported). */
static json_t *replay_one(struct carve_manifests *m, const struct carve_jobs *js,
			  const struct simulate_replay_opts *ro, enum carve_sim_sched sched,
			  const char *who)
{
	struct carve_sim_opts o = ro->sim;
	struct window w = window_of(js, ro);
	struct carve_error err;
	struct carve_sim *s;
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
			progress(who, s, &w, last - t0);
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

/* The models of ro in output order: carve first (unless --baseline), then
 * the baselines as listed.  Returns how many. */
static size_t models_of(const struct simulate_replay_opts *ro, enum carve_sim_sched *out)
{
	size_t n = 0, i;

	if (ro->carve)
		out[n++] = CARVE_SIM_CARVE;
	for (i = 0; i < ro->nbaselines; i++)
		out[n++] = ro->baselines[i];
	return n;
}

/*
 * Runs every model over js into runs[] (NULL-initialised by the caller);
 * a model not started because of SIGINT gets {"mode", "scheduler",
 * "interrupted_before_start": true}.  who_prefix ("seed 3/10: ") goes
 * before each model's name in messages.  Returns 0, or -1 (reported).
 */
static int run_models(struct carve_manifests *m, const struct carve_jobs *js,
		      const struct simulate_replay_opts *ro, const char *who_prefix,
		      json_t **runs)
{
	enum carve_sim_sched models[CARVE_SIM_NSCHED];
	size_t n = models_of(ro, models), i;
	char who[64];

	for (i = 0; i < n; i++) {
		snprintf(who, sizeof(who), "%s%s", who_prefix, carve_sim_sched_name(models[i]));
		if (interrupted)
			runs[i] = json_pack("{s:s, s:s, s:b}", "mode", "replay", "scheduler",
					    carve_sim_sched_name(models[i]),
					    "interrupted_before_start", 1);
		else
			runs[i] = replay_one(m, js, ro, models[i], who);
		if (!runs[i])
			return -1;
	}
	return 0;
}

/* ---- --seeds: median and spread over several runs ------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

enum agg { AGG_MEDIAN, AGG_MIN, AGG_MAX };

/* A number as JSON: an integer when it is whole and in range. */
static json_t *jnumber(double v)
{
	if (v == floor(v) && fabs(v) < 9e15)
		return json_integer((json_int_t)v);
	return json_real(round(v * 1e4) / 1e4);
}

/*
 * The run-shaped aggregate of vals[0..n-1] (the same field of every
 * seed's run): numbers become their median (the mean of the middle two
 * for an even count), min or max over the seeds that have a number there
 * (null when none has); objects are aggregated key by key (keys in first-
 * seen order over the seeds); strings and booleans are the first seed's;
 * arrays (series, CDFs) are left out: they are per seed only.  With
 * null_inf (a key whose null means "never", not "no data": makespan_s,
 * some job never completed), a seed's null ranks above every number:
 * the min is the least number, the max null when any seed has null, the
 * median null when it falls on (or, for an even count, averages) a null.
 * tmp holds n doubles.  NULL when the field has nothing to aggregate.
 */
static json_t *aggregate(json_t *const *vals, size_t n, enum agg how, double *tmp, bool null_inf)
{
	json_t *first = NULL, *o, **sub;
	size_t i, k = 0, ninf = 0;
	bool any_obj = false;

	for (i = 0; i < n; i++) {
		if (vals[i] && json_is_null(vals[i]) && null_inf)
			ninf++;
		if (!vals[i] || json_is_null(vals[i]))
			continue;
		if (!first)
			first = vals[i];
		if (json_is_number(vals[i]))
			tmp[k++] = json_number_value(vals[i]);
		any_obj |= json_is_object(vals[i]);
	}
	if (!first)
		return json_null();
	if (json_is_array(first))
		return NULL;
	if (json_is_number(first)) {
		size_t m = k + ninf; /* ranks k..m-1 are the nulls (+infinity) */

		qsort(tmp, k, sizeof(*tmp), cmp_double);
		if (how == AGG_MIN)
			return jnumber(tmp[0]);
		if (how == AGG_MAX)
			return ninf ? json_null() : jnumber(tmp[k - 1]);
		if (m % 2)
			return m / 2 < k ? jnumber(tmp[m / 2]) : json_null();
		return m / 2 < k ? jnumber((tmp[m / 2 - 1] + tmp[m / 2]) / 2) : json_null();
	}
	if (!any_obj)
		return json_incref(first);
	o = json_object();
	sub = carve_calloc(n, sizeof(*sub));
	if (!o || !sub) {
		carve_free(sub);
		json_decref(o);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		const char *key;
		json_t *v;

		json_object_foreach(json_is_object(vals[i]) ? vals[i] : NULL, key, v) {
			json_t *a;
			size_t j;

			(void)v;
			if (json_object_get(o, key))
				continue;
			for (j = 0; j < n; j++)
				sub[j] = json_is_object(vals[j]) ? json_object_get(vals[j], key) : NULL;
			a = aggregate(sub, n, how, tmp, !strcmp(key, "makespan_s"));
			if (a && json_object_set_new(o, key, a))
				goto fail;
		}
	}
	carve_free(sub);
	return o;
fail:
	carve_free(sub);
	json_decref(o);
	return NULL;
}

/* {"median", "min", "max", "per_seed"} of one model's runs, one per seed;
 * the aggregates leave out "series" and "wait_cdf" (no median of a time
 * series taken at different times). */
static json_t *seeded_run(json_t *const *per_seed, size_t n)
{
	double *tmp = carve_calloc(n ? n : 1, sizeof(*tmp));
	json_t *o = json_object(), *arr = json_array();
	static const char *const names[] = {"median", "min", "max"};
	size_t i;

	if (!tmp || !o || !arr)
		goto fail;
	for (i = 0; i < 3; i++) {
		json_t *a = aggregate(per_seed, n, (enum agg)i, tmp, false);

		if (!a || json_object_set_new(o, names[i], a))
			goto fail;
		json_object_del(a, "series");   /* time series and CDFs: per seed only */
		json_object_del(a, "wait_cdf");
	}
	for (i = 0; i < n; i++)
		if (json_array_append(arr, per_seed[i]))
			goto fail;
	if (json_object_set_new(o, "per_seed", arr))
		goto fail_o;
	carve_free(tmp);
	return o;
fail:
	json_decref(arr);
fail_o:
	json_decref(o);
	carve_free(tmp);
	return NULL;
}

/* ---- the result: settings and runs ---------------------------------------------------- */

/* The settings object (docs/simulator.md, "Settings"). */
static json_t *settings_of(char *const *paths, size_t npaths, const char *trace,
			   const struct simulate_replay_opts *ro, const struct window *w,
			   json_t *carve_window)
{
	enum carve_sim_sched models[CARVE_SIM_NSCHED];
	size_t n = models_of(ro, models), i;
	json_t *s = json_object(), *man = json_array(), *mods = json_array(), *tr, *win;
	int bad = !s || !man || !mods;

	for (i = 0; i < npaths && !bad; i++)
		bad |= json_array_append_new(man, json_string(paths[i]));
	for (i = 0; i < n && !bad; i++)
		bad |= json_array_append_new(mods, json_string(carve_sim_sched_name(models[i])));
	if (ro->nseeds) {
		json_t *seeds = json_array();

		for (i = 0; seeds && i < ro->nseeds; i++)
			bad |= json_array_append_new(seeds, json_integer((json_int_t)ro->seeds[i]));
		tr = json_pack("{s:s, s:i, s:o*}", "generated", ro->scenario, "days", ro->days,
			       "seeds", seeds);
	} else {
		tr = trace ? json_string(trace) : json_null();
	}
	if (carve_window && json_is_object(carve_window))
		win = json_incref(carve_window);
	else if (w && w->known)
		win = json_pack("{s:I, s:I, s:s}", "start_s", (json_int_t)w->start, "end_s",
				(json_int_t)w->end, "from", w->until ? "until" : "trace");
	else
		win = json_null();
	bad |= !tr || !win;
	if (!bad)
		bad = json_object_set_new(s, "trace", tr) ||
		      json_object_set(s, "manifests", man) ||
		      json_object_set_new(s, "policy",
					  json_string(ro->sim.policy ? ro->sim.policy : "binpack")) ||
		      json_object_set_new(s, "mig",
					  json_string(ro->sim.mig_dynamic ? "dynamic" : "static")) ||
		      json_object_set_new(s, "mig_delay_s", json_integer(
			      ro->sim.has_mig_delay ? ro->sim.mig_delay : 60)) ||
		      json_object_set_new(s, "gang_timeout_s", json_integer(
			      ro->sim.gang_timeout ? ro->sim.gang_timeout : 1800)) ||
		      json_object_set_new(s, "until_s", ro->until >= 0 ?
					  json_integer(ro->until) : json_null()) ||
		      json_object_set_new(s, "seed", json_integer(
			      (json_int_t)(ro->sim.has_seed ? ro->sim.seed : 42))) ||
		      json_object_set(s, "models", mods) ||
		      json_object_set_new(s, "window", win);
	else {
		json_decref(tr);
		json_decref(win);
	}
	if (!bad && ro->sim.workloads)
		bad = json_object_set_new(s, "workloads", json_true()) ||
		      json_object_set_new(s, "workload_duration_s", json_integer(
			      ro->sim.workload_duration ? ro->sim.workload_duration : 3600));
	json_decref(man);
	json_decref(mods);
	if (bad) {
		json_decref(s);
		return NULL;
	}
	return s;
}

/* {"settings": settings, "runs": {name: run, ...}}, taking runs[] (n of
 * them, in models_of order); NULL on allocation failure. */
static json_t *result_of(json_t *settings, const struct simulate_replay_opts *ro, json_t **runs)
{
	enum carve_sim_sched models[CARVE_SIM_NSCHED];
	size_t n = models_of(ro, models), i;
	json_t *root = json_object(), *r = json_object();

	if (!root || !r || json_object_set_new(root, "settings", settings))
		goto fail;
	settings = NULL;
	for (i = 0; i < n; i++)
		if (json_object_set(r, carve_sim_sched_name(models[i]), runs[i]))
			goto fail;
	if (json_object_set_new(root, "runs", r))
		goto fail_root;
	return root;
fail:
	json_decref(r);
fail_root:
	json_decref(root);
	json_decref(settings);
	return NULL;
}

/* Manifests from each path (the manifest walk leaves trace files out); a
 * directory that holds trace files is the trace too when --trace is not
 * given (the first such directory). */
static int load_inputs(struct carve_manifests *m, char *const *paths, size_t n,
		       const char **trace)
{
	/* trace NULL: the trace is generated (--seeds); no directory is one */
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		struct stat st;

		if (trace && !*trace && !stat(paths[i], &st) && S_ISDIR(st.st_mode) &&
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

/* The trace, manifests' warnings and the Workload note: shared by both
 * ways of replaying.  Returns 0 to go on, or an exit code. */
static int check_inputs(struct carve_manifests *m)
{
	if (m->diags.nerrors) {
		carve_diags_sort(&m->diags);
		carve_diags_print(&m->diags, stderr);
		fprintf(stderr, "carve simulate: %zu error%s in the input; nothing simulated\n",
			m->diags.nerrors, m->diags.nerrors == 1 ? "" : "s");
		return CARVE_EXIT_FAIL;
	}
	carve_diags_sort(&m->diags);
	carve_diags_print(&m->diags, stderr); /* warnings */
	carve_diags_clear(&m->diags);         /* printed: later prints show new ones only */
	return 0;
}

/*
 * --seeds: one generated trace per seed (carve_tracegen, the scenario and
 * days of ro), every model over each; runs[i] becomes model i's
 * {"median", "min", "max", "per_seed"}.  *w is the first seed's window.
 * Returns 0, or an exit code (reported).
 */
static int replay_seeds(struct carve_manifests *m, const struct simulate_replay_opts *ro,
			json_t **runs, struct window *w)
{
	enum carve_sim_sched models[CARVE_SIM_NSCHED];
	size_t nm = models_of(ro, models), i, k, done = 0;
	json_t **per = carve_calloc(nm * ro->nseeds + 1, sizeof(*per));
	int rc = CARVE_EXIT_FAIL;

	if (!per) {
		fprintf(stderr, "carve simulate: out of memory\n");
		return rc;
	}
	for (k = 0; k < ro->nseeds && !interrupted; k++) {
		struct carve_jobs *js = carve_jobs_create();
		json_t *one[CARVE_SIM_NSCHED] = {NULL};
		struct carve_error err = {0};
		char who[40];

		if (!js || carve_tracegen(js, ro->scenario, ro->days, ro->seeds[k], &err) < 0) {
			cli_errorf("simulate", "--seeds %llu: %s", (unsigned long long)ro->seeds[k],
				   js ? err.text : "out of memory");
			carve_jobs_destroy(js);
			goto out;
		}
		if (k == 0)
			*w = window_of(js, ro);
		snprintf(who, sizeof(who), "seed %llu (%zu/%zu): ",
			 (unsigned long long)ro->seeds[k], k + 1, ro->nseeds);
		if (run_models(m, js, ro, who, one)) {
			for (i = 0; i < nm; i++)
				json_decref(one[i]);
			carve_jobs_destroy(js);
			goto out;
		}
		carve_jobs_destroy(js);
		for (i = 0; i < nm; i++)
			per[i * ro->nseeds + k] = one[i];
		done++;
	}
	for (i = 0; i < nm; i++) {
		runs[i] = seeded_run(per + i * ro->nseeds, done);
		if (!runs[i]) {
			fprintf(stderr, "carve simulate: out of memory\n");
			goto out;
		}
	}
	rc = 0;
out:
	for (i = 0; i < nm * ro->nseeds; i++)
		json_decref(per[i]);
	carve_free(per);
	return rc;
}

int simulate_replay(char *const *paths, size_t npaths, const char *trace,
		    const struct simulate_replay_opts *ro)
{
	struct carve_manifests *m = carve_manifests_create();
	struct carve_jobs *js = carve_jobs_create();
	struct carve_trace *t = carve_trace_create();
	json_t *runs[CARVE_SIM_NSCHED] = {NULL}, *root = NULL, *settings;
	enum carve_sim_sched models[CARVE_SIM_NSCHED];
	struct window w = {0, 0, false, false};
	struct sigaction sa, old;
	size_t skipped = 0, n = models_of(ro, models), i;
	int rc = CARVE_EXIT_FAIL;

	if (m)
		m->names_warn = true; /* decide anyway; validate is the strict one */
	if (!m || !js || !t || load_inputs(m, paths, npaths, ro->nseeds ? NULL : &trace))
		goto out_nomem;
	if (!trace && !ro->sim.workloads && !ro->nseeds) {
		fprintf(stderr, "carve simulate: no trace (--trace FILE, or a DIR holding *.trace.csv or *.trace.yaml, --seeds, or --workloads)\n");
		rc = CARVE_EXIT_USAGE;
		goto out;
	}
	if (ro->sim.workloads && ro->nbaselines) {
		fprintf(stderr, "carve simulate: --workloads runs carve only: the baseline "
			"models cannot start from admitted Workloads\n");
		rc = CARVE_EXIT_USAGE;
		goto out;
	}
	if (trace && load_trace(js, t, trace, &m->diags, &skipped) == CARVE_ENOMEM)
		goto out_nomem;
	if (!m->diags.nerrors && !js->n && trace)
		carve_diag_error(&m->diags, (struct carve_pos){0}, "%s: no jobs", trace);
	if ((rc = check_inputs(m)) != 0)
		goto out;
	rc = CARVE_EXIT_FAIL;
	if (m->nworkloads + m->npodgroups && !ro->sim.workloads)
		fprintf(stderr, "carve simulate: left out %zu Workload/PodGroup object%s of the "
			"manifests: the trace is the workload (--workloads adds them)\n", m->nworkloads + m->npodgroups,
			m->nworkloads + m->npodgroups == 1 ? "" : "s");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	interrupted = 0;
	if (ro->nseeds) {
		if (replay_seeds(m, ro, runs, &w))
			goto out_sig;
	} else {
		w = window_of(js, ro);
		if (run_models(m, js, ro, "", runs))
			goto out_sig;
	}
	settings = settings_of(paths, npaths, trace, ro, ro->nseeds ? NULL : &w,
			       ro->nseeds ? NULL : json_object_get(runs[0], "window"));
	root = settings ? result_of(settings, ro, runs) : NULL;
	if (!root)
		goto out_sig_nomem;
	rc = interrupted ? CARVE_EXIT_FAIL : CARVE_EXIT_OK;
	if (ro->table) {
		carve_report_table(stdout, root);  /* a failed write: cli_stdout_ok below */
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
out_sig_nomem:
	sigaction(SIGINT, &old, NULL);
out_nomem:
	fprintf(stderr, "carve simulate: out of memory\n");
	rc = CARVE_EXIT_FAIL;
out:
	json_decref(root);
	for (i = 0; i < n; i++)
		json_decref(runs[i]);
	carve_jobs_destroy(js);
	carve_trace_destroy(t);
	carve_manifests_destroy(m);
	return rc;
}
