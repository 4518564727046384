/*
 * test_report.c - the HTML report (src/sim/report.c): names from the JSON
 * escaped, missing and null fields drawn as "no data", fields of the wrong
 * type refused by their JSON path, the comparison
 * table, errors for inputs of neither shape and for failed writes, and the
 * data-points count of each chart's series.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	assert_non_null(strstr(html, "-30.0 min (-50.0 %)"));
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
	assert_non_null(strstr(html, "-60.0 min (-50.0 %)"));
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
