/*
 * test_report.c - the HTML report (src/sim/report.c): names from the JSON
 * escaped, missing and null fields drawn as "no data", fields of the wrong
 * type refused by their JSON path, the comparison
 * table, errors for inputs of neither shape and for failed writes, and the
 * data-points count of each chart's series; the {"settings", "runs"} shape
 * (settings table, one column per model, carve against the best baseline,
 * seeded medians with their spread, censored waits, the shared time axis
 * and the trace's end); and the formatting helpers every figure goes
 * through (include/carve/format.h); the plain-text table of `carve
 * simulate` (carve_report_table) from hand-written results carrying the
 * newer run keys.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/format.h"
#include "carve/report.h"

/* ---- helpers ------------------------------------------------------------ */

/* The page for json_text (rc in *rc); the caller frees it. */
static char *render(const char *json_text, const char *title, int *rc,
		    struct carve_error *err)
{
	json_error_t jerr;
	json_t *root = json_loads(json_text, 0, &jerr);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!root)
		fail_msg("bad test JSON at %d:%d: %s", jerr.line, jerr.column, jerr.text);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	*rc = carve_report_html(f, root, title, err);
	assert_int_equal(fclose(f), 0);
	json_decref(root);
	return buf;
}

static char *render_ok(const char *json_text)
{
	int rc;
	char *html = render(json_text, NULL, &rc, NULL);

	assert_int_equal(rc, 0);
	assert_non_null(strstr(html, "<!DOCTYPE html>"));
	assert_non_null(strstr(html, "</html>\n"));
	return html;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (hay = strstr(hay, needle); hay; hay = strstr(hay + 1, needle))
		n++;
	return n;
}

/* data-points of the series named name ("" when absent). */
static int points_of(const char *html, const char *name)
{
	char key[128];
	const char *p;

	snprintf(key, sizeof(key), "data-series=\"%s\" data-points=\"", name);
	p = strstr(html, key);
	return p ? atoi(p + strlen(key)) : -1;
}

/* ---- tests -------------------------------------------------------------- */

static void escapes_names_from_json(void **state)
{
	int rc;
	char *html = render(
		"{\"policy\":\"a&b\",\"quota\":{\"<script>alert(1)</script>\":"
		"{\"nominal\":4,\"used_avg\":2}},"
		"\"wait_cdf\":{\"<script>alert(1)</script>\":[[0,0.5],[10,1]]},"
		"\"series\":{\"t_s\":[0,60],\"pools\":{\"p\\\"x'\":{\"allocation_pct\":[1,2]}},"
		"\"quota_used\":{\"<script>alert(1)</script>\":[1,2]}}}",
		"<b>title</b>", &rc, NULL);

	(void)state;
	assert_int_equal(rc, 0);
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "<b>"));
	assert_non_null(strstr(html, "&lt;b&gt;title&lt;/b&gt;"));
	assert_true(count(html, "&lt;script&gt;alert(1)&lt;/script&gt;") >= 4);
	assert_non_null(strstr(html, "a&amp;b"));
	assert_non_null(strstr(html, "p&quot;x&#39;"));
	free(html);
}

static void missing_fields_say_no_data(void **state)
{
	char *html = render_ok("{\"mode\":\"replay\"}");

	(void)state;
	assert_int_equal(count(html, "class=\"series\""), 0);
	assert_true(count(html, "no data") >= 6 + 3);   /* six metrics, three charts */
	assert_non_null(strstr(html, "<title>carve simulation report</title>"));
	free(html);
}

static void null_fields_say_no_data(void **state)
{
	char *html = render_ok(
		"{\"mode\":null,\"policy\":7,\"seed\":\"x\",\"horizon_s\":null,"
		"\"gpu_allocation_pct\":null,\"preemptions\":null,"
		"\"wait_first_gpu_s\":{\"q\":null,\"r\":{\"p50\":null,\"p95\":null}},"
		"\"quota\":{\"q\":null,\"r\":{\"nominal\":null,\"used_avg\":null}},"
		"\"queues\":null,"
		"\"series\":{\"t_s\":[0,null],\"pools\":{\"p\":null,"
		"\"p2\":{\"allocation_pct\":[null],\"utilisation_pct\":null}},"
		"\"quota_used\":{\"q\":null,\"r\":[null]}},"
		"\"wait_cdf\":{\"q\":[null],\"r\":null}}");

	(void)state;
	assert_non_null(strstr(html, "no data"));
	/* Not one (time, value) pair is usable: nothing is drawn. */
	assert_int_equal(count(html, "class=\"series\""), 0);
	assert_int_equal(points_of(html, "r"), -1);
	free(html);
}

/* A field of the wrong type is refused, by its JSON path, and nothing is
 * written (a page of "no data" from a result of the wrong shape would lie). */
static void mistyped_fields_are_refused_by_path(void **state)
{
	static const struct {
		const char *json, *text;
	} cases[] = {
		{"{\"preemptions\":\"many\"}", "preemptions: expected a number, got string"},
		{"{\"policy\":true}", "policy: expected a string or a number, got boolean"},
		{"{\"queues\":[]}", "queues: expected an object, got array"},
		{"{\"quota\":{\"q\":{\"used_avg\":\"x\"}}}",
		 "quota.q.used_avg: expected a number, got string"},
		{"{\"wait_first_gpu_s\":{\"q\":7}}", "wait_first_gpu_s.q: expected an object, got number"},
		{"{\"series\":{\"t_s\":[0,null,\"x\"]}}", "series.t_s[2]: expected a number, got string"},
		{"{\"series\":{\"pools\":{\"p\":{\"utilisation_pct\":7}}}}",
		 "series.pools.p.utilisation_pct: expected an array of numbers, got number"},
		{"{\"series\":{\"quota_used\":{\"a b\":[1,{}]}}}",
		 "series.quota_used[\"a b\"][1]: expected a number, got object"},
		{"{\"wait_cdf\":{\"q\":[[0,0.5],[1]]}}",
		 "wait_cdf.q[1]: expected a [seconds, fraction] pair, got array"},
		{"{\"wait_cdf\":{\"q\":[[1,\"x\"]]}}", "wait_cdf.q[0][1]: expected a number, got string"},
		{"{\"classes\":{\"c\":{\"wait_first_gpu_s\":{\"p95\":[]}}}}",
		 "classes.c.wait_first_gpu_s.p95: expected a number, got array"},
		{"{\"baseline\":{\"mode\":\"replay\"},\"carve\":{\"queues\":{\"a\":{\"nominal\":1},"
		 "\"b\":{\"nominal\":\"16\"}}}}", "carve.queues.b.nominal: expected a number, got string"},
		{"{\"settings\":{\"gang_timeout_s\":\"30m\"},\"runs\":{\"carve\":{\"mode\":\"replay\"}}}",
		 "settings.gang_timeout_s: expected a number, got string"},
		{"{\"runs\":{\"carve\":{\"mode\":\"replay\"},\"kueue\":{\"gpu_hours\":{\"held\":\"x\"}}}}",
		 "runs.kueue.gpu_hours.held: expected a number, got string"},
		{"{\"runs\":{\"carve\":{\"median\":{\"mode\":\"replay\"},\"per_seed\":[{\"mode\":\"replay\"},"
		 "{\"makespan_s\":[]}]}}}", "runs.carve.per_seed[1].makespan_s: expected a number, got array"},
		{"{\"runs\":{\"carve\":{\"wait_all_pods_s\":{\"q\":{\"censored\":true}}}}}",
		 "runs.carve.wait_all_pods_s.q.censored: expected a number, got boolean"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct carve_error err = {0};
		int rc;
		char *html = render(cases[i].json, NULL, &rc, &err);

		assert_int_equal(rc, CARVE_EINVAL);
		assert_string_equal(err.text, cases[i].text);
		assert_true(!html || !*html);   /* nothing written */
		free(html);
	}
}

static void counts_points_per_series(void **state)
{
	char *html = render_ok(
		"{\"series\":{\"t_s\":[0,3600,7200,10800,14400],"
		"\"pools\":{\"training\":{\"allocation_pct\":[0,50,60.5,70,80],"
		"\"utilisation_pct\":[0,20,null,30,40]}},"
		"\"quota_used\":{\"research\":[0,4,5,6,7],\"dev\":[1,1]}},"
		"\"quota\":{\"research\":{\"nominal\":16,\"used_avg\":5.5,\"borrowed_avg\":0}},"
		"\"wait_cdf\":{\"cdfq\":[[0,0.1],[60,0.5],[3600,1.0]]}}");

	(void)state;
	assert_int_equal(points_of(html, "allocation %"), 5);
	assert_int_equal(points_of(html, "utilisation %"), 4);
	assert_int_equal(points_of(html, "research"), 5);     /* the area */
	assert_int_equal(points_of(html, "dev"), 2);
	assert_int_equal(points_of(html, "cdfq"), 3);
	assert_int_equal(count(html, "<svg class=\"chart\""), 4);
	assert_int_equal(count(html, "data-chart=\"pool\""), 1);
	assert_int_equal(count(html, "data-chart=\"quota\""), 1);
	assert_int_equal(count(html, "data-chart=\"quota-avg\""), 1);
	assert_int_equal(count(html, "data-chart=\"wait-cdf\""), 1);
	/* The nominal total of the stacked chart: research's 16. */
	assert_non_null(strstr(html, "nominal total (16)"));
	free(html);
}

static void long_series_are_strided(void **state)
{
	json_t *run = json_object(), *series = json_object(), *pools = json_object(),
	       *pool = json_object(), *ts = json_array(), *a = json_array();
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	int pts;

	(void)state;
	for (i = 0; i < 10000; i++) {
		json_array_append_new(ts, json_integer((json_int_t)i * 60));
		json_array_append_new(a, json_real(50.0 + (double)(i % 7)));
	}
	json_object_set_new(pool, "allocation_pct", a);
	json_object_set_new(pools, "big", pool);
	json_object_set_new(series, "t_s", ts);
	json_object_set_new(series, "pools", pools);
	json_object_set_new(run, "series", series);
	assert_int_equal(carve_report_html(f, run, NULL, NULL), 0);
	fclose(f);
	pts = points_of(buf, "allocation %");
	assert_true(pts > 0 && pts <= 4000);
	free(buf);
	json_decref(run);
}

/* Values far apart in magnitude: no endless tick loop, no huge coordinates. */
static void extreme_values_stay_drawable(void **state)
{
	char *html = render_ok(
		"{\"series\":{\"t_s\":[1e20,1.0000000000000001e20,1.0000000000000002e20],"
		"\"pools\":{\"p\":{\"allocation_pct\":[1e300,-1e300,50]}},"
		"\"quota_used\":{\"q\":[1e-300,1e300,2]}},"
		"\"wait_cdf\":{\"q\":[[-5,0],[1e300,1]]},\"preemptions\":1e300}");

	(void)state;
	assert_int_equal(points_of(html, "allocation %"), 3);
	assert_null(strstr(html, "000000000000000000000"));
	assert_true(count(html, "class=\"tick\"") < 200);
	free(html);
}

static void compare_has_side_by_side_table(void **state)
{
	char *html = render_ok(
		"{\"baseline\":{\"policy\":\"binpack\",\"gpu_allocation_pct\":71.2,"
		"\"preemptions\":11,\"wait_first_gpu_s\":{\"research\":{\"p95\":3600}}},"
		"\"carve\":{\"policy\":\"fgd\",\"gpu_allocation_pct\":77.7,\"preemptions\":4.0,"
		"\"wait_first_gpu_s\":{\"research\":{\"p95\":1800},\"dev\":{\"p95\":60}}}}");

	(void)state;
	assert_non_null(strstr(html, "<th>baseline</th><th>carve</th><th>difference</th>"));
	assert_non_null(strstr(html, "+6.5 pp"));
	assert_non_null(strstr(html, "-7 (-63.6 %)"));
	assert_non_null(strstr(html, "-30m (-50.0 %)"));
	assert_non_null(strstr(html, "<h3>baseline</h3>"));
	assert_non_null(strstr(html, "<h3>carve</h3>"));
	/* dev exists only in carve: listed once, after research. */
	assert_int_equal(count(html, ">dev</th>"), 1);
	assert_true(strstr(html, ">dev</th>") > strstr(html, ">research</th>"));
	free(html);
}

static void classes_get_their_table(void **state)
{
	char *html = render_ok(
		"{\"baseline\":{\"classes\":{\"training\":{\"jobs_completed\":4,"
		"\"wait_first_gpu_s\":{\"p50\":7200},\"gpu_hours_per_job\":20}}},"
		"\"carve\":{\"classes\":{\"training\":{\"jobs_completed\":4,"
		"\"first_time_success_pct\":100,\"wait_first_gpu_s\":{\"p50\":3600},"
		"\"gpu_hours_per_job\":15},\"<nb>\":{\"jobs_completed\":9}}}}");
	char *plain = render_ok("{\"gpu_allocation_pct\":50}");

	(void)state;
	assert_non_null(strstr(html, "<h2>Per job class</h2>"));
	assert_non_null(strstr(html, "-1h (-50.0 %)"));
	assert_non_null(strstr(html, "100.0 %"));
	/* names are escaped, each class listed once, first seen first */
	assert_int_equal(count(html, ">training</th>"), 1);
	assert_true(strstr(html, ">&lt;nb&gt;</th>") > strstr(html, ">training</th>"));
	assert_null(strstr(plain, "Per job class"));
	free(html);
	free(plain);
}

static void compare_with_one_side_missing(void **state)
{
	char *html = render_ok("{\"baseline\":null,\"carve\":{\"gpu_allocation_pct\":50}}");

	(void)state;
	assert_non_null(strstr(html, "50.0 %"));
	assert_non_null(strstr(html, "&ndash;"));
	free(html);
}

static void rejects_inputs_of_neither_shape(void **state)
{
	static const char *const bad[] = {
		"[1,2]", "\"run\"", "42", "{}", "{\"unallocated_gpu_pct\":{}}",
		"{\"baseline\":3,\"carve\":{\"mode\":\"replay\"}}", "{\"baseline\":null}",
		"{\"carve\":{}}",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct carve_error err = {0};
		json_t *root = json_loads(bad[i], JSON_DECODE_ANY, NULL);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		assert_non_null(root);
		assert_int_equal(carve_report_html(f, root, NULL, &err), CARVE_EINVAL);
		assert_int_equal(err.code, CARVE_EINVAL);
		assert_true(strlen(err.text) > 0);
		fclose(f);
		assert_int_equal(len, 0);   /* nothing written */
		free(buf);
		json_decref(root);
	}
	assert_int_equal(carve_report_html(stdout, NULL, NULL, NULL), CARVE_EINVAL);
}

static void write_failure_is_eio(void **state)
{
	struct carve_error err = {0};
	json_t *root = json_pack("{s:s}", "mode", "replay");
	FILE *f = fopen("/dev/full", "w");

	(void)state;
	if (!f) {
		json_decref(root);
		skip();
	}
	assert_int_equal(carve_report_html(f, root, NULL, &err), CARVE_EIO);
	assert_int_equal(err.code, CARVE_EIO);
	fclose(f);
	json_decref(root);
}

/* The formatting helpers: counts, percentages, durations, GPU-hours,
 * differences and ranges, as the table and the report print them. */
static void formats_figures_for_people(void **state)
{
	static const struct { enum carve_unit u; double v; const char *want; } cases[] = {
		{CARVE_UNIT_COUNT, 2134, "2,134"}, {CARVE_UNIT_COUNT, 0, "0"},
		{CARVE_UNIT_COUNT, 1234567, "1,234,567"}, {CARVE_UNIT_COUNT, 999.6, "1,000"},
		{CARVE_UNIT_COUNT, -42, "-42"},
		{CARVE_UNIT_PCT, 42.149, "42.1 %"}, {CARVE_UNIT_PCT, 100, "100.0 %"},
		{CARVE_UNIT_PCT, -0.01, "0.0 %"},
		{CARVE_UNIT_SEC, 42, "42 s"}, {CARVE_UNIT_SEC, 0, "0 s"}, {CARVE_UNIT_SEC, 60, "1m"},
		{CARVE_UNIT_SEC, 725, "12m 5s"}, {CARVE_UNIT_SEC, 15120, "4h 12m"},
		{CARVE_UNIT_SEC, 7200, "2h"}, {CARVE_UNIT_SEC, 483840, "5.6 d"},
		{CARVE_UNIT_SEC, 172799, "48h"}, {CARVE_UNIT_SEC, -90, "-1m 30s"},
		{CARVE_UNIT_GPUH, 0.754, "0.75"}, {CARVE_UNIT_GPUH, 12.54, "12.5"},
		{CARVE_UNIT_GPUH, 7394.2, "7,394"},
		{CARVE_UNIT_NUM, 16, "16"}, {CARVE_UNIT_NUM, 5.714, "5.71"},
		{CARVE_UNIT_NUM, 1.0 / 0.0, "-"},
	};
	char b[CARVE_FMT_LEN];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(carve_fmt(b, sizeof(b), cases[i].u, cases[i].v), cases[i].want);
	assert_string_equal(carve_fmt_diff(b, sizeof(b), CARVE_UNIT_PCT, 43.2, 42.1, true), "-1.1 pp");
	assert_string_equal(carve_fmt_diff(b, sizeof(b), CARVE_UNIT_PCT, 5, 5.01, true), "0.0 pp");
	assert_string_equal(carve_fmt_diff(b, sizeof(b), CARVE_UNIT_SEC, 4876, 13648, true),
			    "+2h 26m (+179.9 %)");
	assert_string_equal(carve_fmt_diff(b, sizeof(b), CARVE_UNIT_SEC, 4876, 13648, false),
			    "+2h 26m");
	assert_string_equal(carve_fmt_diff(b, sizeof(b), CARVE_UNIT_COUNT, 11, 4, true),
			    "-7 (-63.6 %)");
	assert_string_equal(carve_fmt_diff(b, sizeof(b), CARVE_UNIT_COUNT, 0, 3, true), "+3");
	assert_string_equal(carve_fmt_diff(b, sizeof(b), CARVE_UNIT_COUNT, 3, 3, true), "0");
	assert_string_equal(carve_fmt_range(b, sizeof(b), CARVE_UNIT_PCT, 40.31, 44.0),
			    "40.3\xe2\x80\x93" "44.0 %");
	assert_string_equal(carve_fmt_range(b, sizeof(b), CARVE_UNIT_SEC, 3600, 3600), "1h");
	assert_string_equal(carve_fmt_range(b, sizeof(b), CARVE_UNIT_SEC, 60, 86400 * 3),
			    "1m\xe2\x80\x93" "3.0 d");
	/* never more than the buffer */
	assert_string_equal(carve_fmt(b, 4, CARVE_UNIT_COUNT, 123456), "123");
}

/* {"settings", "runs"}: the settings table, one column per model in the
 * JSON's order, carve against the best baseline on each figure (named),
 * the new keys' rows, a censored wait marked, the trace's end marked on
 * every time chart, and a shared time axis. */
static void runs_shape_has_settings_models_and_best_baseline(void **state)
{
	char *html = render_ok(
		"{\"settings\":{\"trace\":\"week.trace.csv\",\"manifests\":[\"seed/\"],"
		"\"policy\":\"binpack\",\"mig\":\"dynamic\",\"mig_delay_s\":60,"
		"\"gang_timeout_s\":1800,\"until_s\":null,\"seed\":42,"
		"\"models\":[\"carve\",\"exclusive\",\"kueue\"],"
		"\"window\":{\"start_s\":0,\"end_s\":7200,\"from\":\"trace\"}},"
		"\"runs\":{"
		"\"carve\":{\"effective_utilisation_pct\":42.1,\"makespan_s\":9000,"
		"\"gpu_hours\":{\"held\":3119,\"useful\":2285,\"asked\":2300},"
		"\"wait_first_gpu_s\":{\"research\":{\"p50\":13648,\"censored\":2}},"
		"\"series\":{\"t_s\":[0,3600,9000],\"pools\":{\"p\":{\"allocation_pct\":[1,2,3]}}}},"
		"\"exclusive\":{\"effective_utilisation_pct\":17.8,\"makespan_s\":null,"
		"\"gpu_hours\":{\"held\":7394,\"useful\":2285,\"asked\":2300},"
		"\"wait_first_gpu_s\":{\"research\":{\"p50\":5000,\"censored\":0}},"
		"\"series\":{\"t_s\":[0,3600],\"pools\":{\"p\":{\"allocation_pct\":[1,2]}}}},"
		"\"kueue\":{\"effective_utilisation_pct\":43.2,\"makespan_s\":8000,"
		"\"gpu_hours\":{\"held\":3000,\"useful\":2285,\"asked\":2300},"
		"\"wait_first_gpu_s\":{\"research\":{\"p50\":4876}},"
		"\"series\":{\"t_s\":[0,3600,8000],\"pools\":{\"p\":{\"allocation_pct\":[1,2,3]}}}}}}");
	char *nowin = render_ok("{\"runs\":{\"carve\":{\"series\":{\"t_s\":[0,60],"
				"\"pools\":{\"p\":{\"allocation_pct\":[1,2]}}}}}}");

	(void)state;
	assert_non_null(strstr(html, "<h2>Settings</h2>"));
	assert_non_null(strstr(html, "<tr><th>trace</th><td>week.trace.csv</td></tr>"));
	assert_non_null(strstr(html, "<tr><th>MIG repartition delay</th><td>1m</td></tr>"));
	assert_non_null(strstr(html, "<tr><th>gang timeout (baselines)</th><td>30m</td></tr>"));
	assert_non_null(strstr(html, "<tr><th>window</th><td>0 s to 2h (the trace's span)"));
	assert_non_null(strstr(html, "<th>carve</th><th>exclusive</th><th>kueue</th>"
			       "<th>carve vs the best baseline</th>"));
	/* utilisation: the best baseline is kueue (43.2), carve is worse */
	assert_non_null(strstr(html, "class=\"num worse\">-1.1 pp vs kueue</td>"));
	/* GPU-hours held: lower is better, the best baseline is kueue (3,000) */
	assert_non_null(strstr(html, "<td class=\"num\">3,119</td><td class=\"num\">7,394</td>"));
	assert_non_null(strstr(html, "+119 (+4.0 %) vs kueue"));
	/* waits: carve 3h 47m is censored (2 jobs), marked with a note */
	assert_non_null(strstr(html, "3h 47m<span class=\"censored\""));
	assert_non_null(strstr(html, "counted up to it (censored)"));
	assert_non_null(strstr(html, "makespan (last job done)"));
	/* every pool and quota chart marks the trace's end; one x axis (0..9000 s) */
	assert_int_equal(count(html, "class=\"window-end\""), 3);
	assert_int_equal(count(html, "time (hours)"), 3);
	assert_non_null(strstr(html, "<h3>exclusive</h3>"));
	/* no window known: nothing marked */
	assert_null(strstr(nowin, "class=\"window-end\""));
	assert_non_null(strstr(nowin, "<th>carve</th>"));
	free(html);
	free(nowin);
}

/* A run of several seeds: the median in the cell, the min-max under it,
 * the first seed's charts. */
static void seeded_runs_show_median_and_spread(void **state)
{
	char *html = render_ok(
		"{\"settings\":{\"trace\":{\"generated\":\"seed\",\"days\":7,\"seeds\":[1,2,3]}},"
		"\"runs\":{\"carve\":{\"median\":{\"effective_utilisation_pct\":42.1},"
		"\"min\":{\"effective_utilisation_pct\":40.3},\"max\":{\"effective_utilisation_pct\":44},"
		"\"per_seed\":[{\"effective_utilisation_pct\":40.3,\"series\":{\"t_s\":[0,1],"
		"\"pools\":{\"p\":{\"allocation_pct\":[5,6]}}}},"
		"{\"effective_utilisation_pct\":42.1},{\"effective_utilisation_pct\":44}]}}}");

	(void)state;
	assert_non_null(strstr(html, "42.1 %<br><span class=\"spread\">40.3\xe2\x80\x93" "44.0 %</span>"));
	assert_non_null(strstr(html, "generated: scenario seed, 7 days, 3 seeds"));
	assert_non_null(strstr(html, "3 seeds: each figure is the median"));
	assert_non_null(strstr(html, "data-chart=\"pool\""));
	free(html);
}

/* The plain-text table of `carve simulate` (carve_report_table) for json_text. */
static char *table_of(const char *json_text, int *rc)
{
	json_error_t jerr;
	json_t *root = json_loads(json_text, 0, &jerr);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!root)
		fail_msg("bad test JSON at %d:%d: %s", jerr.line, jerr.column, jerr.text);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	*rc = carve_report_table(f, root);
	assert_int_equal(fclose(f), 0);
	json_decref(root);
	return buf;
}

/* A line of the table that starts with label, or NULL. */
static const char *line_of(const char *text, const char *label)
{
	const char *p = text;
	size_t n = strlen(label);

	while (p && *p) {
		if (!strncmp(p, label, n))
			return p;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* True when the line starting with label holds want. */
static bool row_has(const char *text, const char *label, const char *want)
{
	const char *l = line_of(text, label), *end;
	char buf[512];
	size_t n;

	if (!l)
		return false;
	end = strchr(l, '\n');
	n = end ? (size_t)(end - l) : strlen(l);
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, l, n);
	buf[n] = '\0';
	return strstr(buf, want) != NULL;
}

/* The table from a hand-written four-model result with the newer keys:
 * settings on top, carve first, the best baseline per row (by the row's
 * direction), a null makespan, a censored wait marked, counts grouped. */
static void table_shows_models_best_baseline_and_new_keys(void **state)
{
	int rc;
	char *t = table_of(
		"{\"settings\":{\"trace\":\"week.trace.csv\",\"manifests\":[\"seed/\"],"
		"\"policy\":\"binpack\",\"mig\":\"dynamic\",\"mig_delay_s\":90,"
		"\"gang_timeout_s\":1800,\"until_s\":null,\"seed\":42,"
		"\"models\":[\"carve\",\"exclusive\",\"device-plugin\",\"kueue\"],"
		"\"window\":{\"start_s\":0,\"end_s\":604800,\"from\":\"trace\"}},"
		"\"runs\":{"
		"\"carve\":{\"effective_utilisation_pct\":42.1,\"makespan_s\":645369,"
		"\"gpu_hours\":{\"held\":3119,\"useful\":2285,\"asked\":2300},"
		"\"backlog\":{\"jobs_waiting\":0,\"jobs_running\":0,\"gpu_hours_left\":0},"
		"\"jobs\":{\"total\":2134,\"completed\":2134,\"partial\":3},\"mig\":{\"repartitions\":5},"
		"\"wait_first_gpu_s\":{\"research\":{\"p50\":13648,\"censored\":0}},"
		"\"wait_all_pods_s\":{\"research\":{\"p50\":14000,\"censored\":0}}},"
		"\"exclusive\":{\"effective_utilisation_pct\":17.8,\"makespan_s\":null,"
		"\"gpu_hours\":{\"held\":7394,\"useful\":2285,\"asked\":2300},"
		"\"backlog\":{\"jobs_waiting\":684,\"jobs_running\":6,\"gpu_hours_left\":812.5},"
		"\"jobs\":{\"total\":2134,\"completed\":1450,\"partial\":0},\"mig\":{\"repartitions\":0},"
		"\"wait_first_gpu_s\":{\"research\":{\"p50\":5000,\"censored\":3}}},"
		"\"device-plugin\":{\"effective_utilisation_pct\":43.2,\"makespan_s\":634093,"
		"\"gpu_hours\":{\"held\":3400,\"useful\":2285,\"asked\":2300},"
		"\"jobs\":{\"total\":2134,\"completed\":2134},"
		"\"wait_first_gpu_s\":{\"research\":{\"p50\":4876,\"censored\":0}}},"
		"\"kueue\":{\"effective_utilisation_pct\":40,\"makespan_s\":650000,"
		"\"gpu_hours\":{\"held\":3300,\"useful\":2285,\"asked\":2300},"
		"\"jobs\":{\"total\":2134,\"completed\":2134},"
		"\"wait_first_gpu_s\":{\"research\":{\"p50\":6000}}}}}", &rc);

	(void)state;
	assert_int_equal(rc, 0);
	/* settings, a line each, at the top */
	assert_non_null(strstr(t, "Trace         week.trace.csv\n"));
	assert_non_null(strstr(t, "Window        0 s to 7.0 d (the trace's span"));
	assert_non_null(strstr(t, "MIG           dynamic, 1m 30s per repartition\n"));
	assert_non_null(strstr(t, "Gang timeout  30m (baselines)\n"));
	assert_non_null(strstr(t, "carve        exclusive    device-plugin            kueue    "
			       "carve vs the best baseline\n"));
	/* the best baseline on each row, by its direction */
	assert_true(row_has(t, "Effective GPU utilisation", "42.1 %"));
	assert_true(row_has(t, "Effective GPU utilisation", "-1.1 pp vs device-plugin"));
	assert_true(row_has(t, "GPU-hours held  ", "3,119"));
	assert_true(row_has(t, "GPU-hours held  ", "7,394"));
	assert_true(row_has(t, "GPU-hours held  ", "-181 vs kueue"));
	assert_true(row_has(t, "GPU-hours of useful work", "2,285"));
	/* no direction, no difference */
	assert_false(row_has(t, "GPU-hours the trace asks", " vs "));
	/* makespan: null reads "not all done"; the best is device-plugin's */
	assert_true(row_has(t, "Makespan (last job done)", "7.5 d"));
	assert_true(row_has(t, "Makespan (last job done)", "not all done"));
	assert_true(row_has(t, "Makespan (last job done)", "+3h 8m vs device-plugin"));
	assert_true(row_has(t, "Jobs waiting at the window's end", "684"));
	assert_true(row_has(t, "GPU-hours of work left at the end", "813"));
	assert_true(row_has(t, "Jobs completed", "1,450"));
	assert_true(row_has(t, "Jobs admitted with fewer pods", "3"));
	assert_true(row_has(t, "MIG repartitions", "5"));
	/* per queue: waits as durations, carve loses to device-plugin, the
	 * censored wait marked and explained */
	assert_non_null(strstr(t, "\nQueue research\n"));
	assert_true(row_has(t, "  Wait to first GPU, median", "3h 47m  "));
	assert_true(row_has(t, "  Wait to first GPU, median", "1h 23m *"));
	assert_true(row_has(t, "  Wait to first GPU, median", "+2h 26m vs device-plugin"));
	assert_true(row_has(t, "  Wait until every pod runs, median", "3h 53m"));
	assert_non_null(strstr(t, "* counts jobs still waiting at the window's end"));
	/* rows no run has are left out */
	assert_null(line_of(t, "Fragmentation"));
	assert_null(line_of(t, "Preemptions"));
	free(t);
}

/* Seeded runs: medians with a min-max row; one baseline: "carve vs
 * baseline", no names; not a result: CARVE_EINVAL. */
static void table_of_seeds_and_of_one_baseline(void **state)
{
	int rc;
	char *t = table_of(
		"{\"settings\":{\"trace\":{\"generated\":\"seed\",\"days\":7,\"seeds\":[1,2,3]},"
		"\"window\":null},"
		"\"runs\":{\"carve\":{\"median\":{\"effective_utilisation_pct\":42.1},"
		"\"min\":{\"effective_utilisation_pct\":40.3},\"max\":{\"effective_utilisation_pct\":44},"
		"\"per_seed\":[{},{},{}]},"
		"\"exclusive\":{\"median\":{\"effective_utilisation_pct\":17.8},"
		"\"min\":{\"effective_utilisation_pct\":17},\"max\":{\"effective_utilisation_pct\":19},"
		"\"per_seed\":[{},{},{}]}}}", &rc);
	char *bad;

	(void)state;
	assert_int_equal(rc, 0);
	assert_non_null(strstr(t, "Trace         generated: scenario seed, 7 days, 3 seeds (1 to 3)\n"));
	assert_non_null(strstr(t, "Figures are medians over 3 seeds"));
	assert_true(row_has(t, "Effective GPU utilisation", "+24.3 pp"));
	assert_false(row_has(t, "Effective GPU utilisation", " vs "));
	assert_true(row_has(t, "    min\xe2\x80\x93max over the seeds", "40.3\xe2\x80\x93" "44.0 %"));
	assert_true(row_has(t, "    min\xe2\x80\x93max over the seeds", "17.0\xe2\x80\x93" "19.0 %"));
	assert_non_null(strstr(t, "carve vs baseline\n"));
	free(t);
	bad = table_of("{\"mode\":\"replay\"}", &rc);
	assert_int_equal(rc, CARVE_EINVAL);
	free(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escapes_names_from_json),
		cmocka_unit_test(missing_fields_say_no_data),
		cmocka_unit_test(null_fields_say_no_data),
		cmocka_unit_test(mistyped_fields_are_refused_by_path),
		cmocka_unit_test(counts_points_per_series),
		cmocka_unit_test(long_series_are_strided),
		cmocka_unit_test(extreme_values_stay_drawable),
		cmocka_unit_test(compare_has_side_by_side_table),
		cmocka_unit_test(classes_get_their_table),
		cmocka_unit_test(compare_with_one_side_missing),
		cmocka_unit_test(rejects_inputs_of_neither_shape),
		cmocka_unit_test(write_failure_is_eio),
		cmocka_unit_test(formats_figures_for_people),
		cmocka_unit_test(runs_shape_has_settings_models_and_best_baseline),
		cmocka_unit_test(seeded_runs_show_median_and_spread),
		cmocka_unit_test(table_shows_models_best_baseline_and_new_keys),
		cmocka_unit_test(table_of_seeds_and_of_one_baseline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
