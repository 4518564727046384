/*
 * test_conformance.c - the conformance cases: for every
 * tests/conformance/kueue/NNN-name.yaml (the Kueue cases) and
 * tests/conformance/carve-fair-sharing/NNN-name.yaml (fair-sharing cases
 * written by this project; each turns fair sharing on with a Kueue
 * Configuration document) (read in place), load it,
 * build the engine, run exactly one cycle, and compare the result JSON
 * (built by carve_admission_result_json, as `carve admit` prints it) with
 * NNN-name.expected.json as sets: admitted by workload (clusterQueue and
 * podSets name/count/flavors; other fields only when the expectation has
 * them), preempted by (workload, preemptor, reason), pending by
 * (workload, reason).  One line per difference; fails if any case fails.
 */
#include <dirent.h>

#include "testutil.h"

#include "carve/admission.h"

#define CASE_DIR "tests/conformance/kueue"
#define FS_CASE_DIR "tests/conformance/carve-fair-sharing"
#define MAX_CASES 4096

static const char *const lists[] = {"admitted", "preempted", "pending"};

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* Compact one-line form of v (caller frees), never NULL. */
static char *dump(const json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	return s ? s : strdup("(nothing)");
}

static const char *wl_of(const json_t *e)
{
	const char *s = json_string_value(json_object_get(e, "workload"));

	return s ? s : "";
}

/* The entry of workload w in list arr, or NULL. */
static json_t *find_wl(const json_t *arr, const char *w)
{
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e)
		if (!strcmp(wl_of(e), w))
			return e;
	return NULL;
}

/* Every field of the expected object is in got with an equal value. */
static bool fields_match(const json_t *exp, const json_t *got)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)exp, key, v)
		if (!json_equal(v, json_object_get(got, key)))
			return false;
	return true;
}

/* podSets as a set by name; each expected podSet's fields must match. */
static bool podsets_match(const json_t *exp, const json_t *got)
{
	size_t i, j;
	json_t *e, *g;

	if (!json_is_array(exp) || !json_is_array(got) || json_array_size(exp) != json_array_size(got))
		return false;
	json_array_foreach(exp, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		bool found = false;

		json_array_foreach(got, j, g)
			if (name && json_equal(json_object_get(g, "name"), json_object_get(e, "name"))) {
				found = fields_match(e, g);
				break;
			}
		if (!found)
			return false;
	}
	return true;
}

static bool entry_match(const json_t *exp, const json_t *got)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)exp, key, v) {
		json_t *g = json_object_get(got, key);

		if (!strcmp(key, "podSets") ? !podsets_match(v, g) : !json_equal(v, g))
			return false;
	}
	return true;
}

/* Carve's entry for workload w in any list, and that list's name. */
static json_t *find_any(const json_t *got, const char *w, const char **list)
{
	json_t *e;
	size_t k;

	for (k = 0; k < 3; k++)
		if ((e = find_wl(json_object_get(got, lists[k]), w))) {
			*list = lists[k];
			return e;
		}
	*list = "no list";
	return NULL;
}

/* Compares one list; prints a line per difference; true when equal. */
static bool compare_list(const char *name, const char *list, const json_t *exp, const json_t *got)
{
	const json_t *ea = json_object_get(exp, list), *ga = json_object_get(got, list);
	bool ok = true;
	size_t i;
	json_t *e;

	json_array_foreach(ea, i, e) {
		json_t *g = find_wl(ga, wl_of(e));
		char *se = dump(e), *sg;

		if (!g) {
			const char *in;

			g = find_any(got, wl_of(e), &in);
			sg = g ? dump(g) : NULL;
			printf("  %s: %s: missing %s (carve: %s%s%s)\n", name, list, se, in,
			       sg ? " " : "", sg ? sg : "");
			free(sg);
			ok = false;
		} else if (!entry_match(e, g)) {
			sg = dump(g);
			printf("  %s: %s: expected %s, carve %s\n", name, list, se, sg);
			free(sg);
			ok = false;
		}
		free(se);
	}
	json_array_foreach(ga, i, e)
		if (!find_wl(ea, wl_of(e))) {
			char *sg = dump(e);

			printf("  %s: %s: unexpected %s\n", name, list, sg);
			free(sg);
			ok = false;
		}
	return ok;
}

/* Runs one case; true when it passes. */
static bool run_case(const char *dir, const char *file)
{
	char path[4096], exp_path[4096], name[256];
	struct carve_manifests *m;
	struct carve_admission *ad = NULL;
	json_t *exp = NULL, *got = NULL;
	json_error_t jerr;
	bool ok = false;
	size_t k;

	if ((size_t)snprintf(name, sizeof(name), "%.*s", (int)(strlen(file) - 5), file) >=
		    sizeof(name) ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path) ||
	    (size_t)snprintf(exp_path, sizeof(exp_path), "%s/%s.expected.json", dir, name) >=
		    sizeof(exp_path)) {
		printf("  %s: path too long\n", file);
		return false;
	}
	exp = json_load_file(exp_path, 0, &jerr);
	if (!exp) {
		printf("  %s: cannot read %s: %s\n", name, exp_path, jerr.text);
		return false;
	}
	m = carve_manifests_create();
	assert_non_null(m);
	m->names_warn = true; /* as carve admit reads them */
	carve_manifests_load_path(m, path);
	if (!m->diags.nerrors)
		ad = carve_admission_build(m);
	if (m->diags.nerrors || !ad) {
		printf("  %s: the input has errors:\n", name);
		carve_diags_sort(&m->diags);
		carve_diags_print(&m->diags, stdout);
		goto out;
	}
	if (carve_adm_cycle(ad->adm, ad->now) < 0) {
		printf("  %s: carve_adm_cycle failed\n", name);
		goto out;
	}
	got = carve_admission_result_json(ad);
	assert_non_null(got);
	ok = true;
	for (k = 0; k < 3; k++)
		if (!compare_list(name, lists[k], exp, got))
			ok = false;
out:
	json_decref(got);
	json_decref(exp);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
	return ok;
}

/* Runs every case of the directory at source path rel; all must pass. */
static void run_dir(const char *rel)
{
	char dir[4096];
	char *names[MAX_CASES];
	size_t n = 0, pass = 0, i;
	struct dirent *de;
	DIR *d = NULL;

	tu_source_path(dir, sizeof(dir), rel);
	d = opendir(dir);
	if (!d)
		fail_msg("cannot open %s: the conformance cases ship in the tree", dir);
	while ((de = readdir(d)) && n < MAX_CASES)
		if (ends_with(de->d_name, ".yaml") && de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), str_cmp);
	for (i = 0; i < n; i++) {
		if (run_case(dir, names[i]))
			pass++;
		else
			printf("FAIL %s\n", names[i]);
		free(names[i]);
	}
	printf("%zu/%zu conformance cases pass (%s)\n", pass, n, rel);
	fflush(stdout);
	assert_true(n > 0);
	assert_int_equal(pass, n);
}

static void test_kueue_conformance(void **state)
{
	(void)state;
	run_dir(CASE_DIR);
}

static void test_fair_sharing_conformance(void **state)
{
	(void)state;
	run_dir(FS_CASE_DIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kueue_conformance),
		cmocka_unit_test(test_fair_sharing_conformance),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
