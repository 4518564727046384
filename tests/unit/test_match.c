/*
 * test_match.c - Kubernetes matching semantics (include/carve/match.h),
 * table by table: each node-affinity operator with the label present and
 * missing, several values, Gt/Lt with non-integer labels or values and the
 * wrong number of values; empty and ORed terms; Kueue's own-keys mode;
 * nodeSelector and label selectors; tolerations (Equal, Exists, empty key,
 * empty effect, NoExecute, PreferNoSchedule, value mismatch, taints without
 * an effect, refused tolerations); integer parsing as strconv.ParseInt.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "carve/match.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The node every expression case is matched against. */
static const struct carve_label node_labels[] = {
	{"zone", "a"},
	{"gpu", "h100"},
	{"cores", "64"},
	{"name", "x64"},
	{"empty", ""},
};

static struct carve_labels node(void)
{
	return carve_labels_of(node_labels, N(node_labels));
}

static const char *const v_a[] = {"a"};
static const char *const v_b[] = {"b"};
static const char *const v_ab[] = {"b", "a"};
static const char *const v_32[] = {"32"};
static const char *const v_64[] = {"64"};
static const char *const v_128[] = {"128"};
static const char *const v_3264[] = {"32", "64"};
static const char *const v_x[] = {"x"};
static const char *const v_neg[] = {"-1"};
static const char *const v_plus[] = {"+63"};
static const char *const v_big[] = {"9223372036854775808"};
static const char *const v_empty[] = {""};

struct expr_case {
	const char *what;
	struct carve_match_expr e;
	bool want;
};

static void expressions(void **state)
{
	static const struct expr_case cases[] = {
		{"In, present, value listed", {"zone", "In", 1, v_a}, true},
		{"In, present, value not listed", {"zone", "In", 1, v_b}, false},
		{"In, several values, one listed", {"zone", "In", 2, v_ab}, true},
		{"In, label missing", {"rack", "In", 1, v_a}, false},
		{"In, no values (malformed)", {"zone", "In", 0, NULL}, false},
		{"In, empty value against empty label", {"empty", "In", 1, v_empty}, true},
		{"NotIn, present, value listed", {"zone", "NotIn", 1, v_a}, false},
		{"NotIn, present, value not listed", {"zone", "NotIn", 1, v_b}, true},
		{"NotIn, several values, one listed", {"zone", "NotIn", 2, v_ab}, false},
		{"NotIn, label missing", {"rack", "NotIn", 1, v_a}, true},
		{"NotIn, no values (malformed)", {"rack", "NotIn", 0, NULL}, false},
		{"Exists, present", {"zone", "Exists", 0, NULL}, true},
		{"Exists, present with empty value", {"empty", "Exists", 0, NULL}, true},
		{"Exists, missing", {"rack", "Exists", 0, NULL}, false},
		{"Exists with a value (malformed)", {"zone", "Exists", 1, v_a}, false},
		{"DoesNotExist, present", {"zone", "DoesNotExist", 0, NULL}, false},
		{"DoesNotExist, missing", {"rack", "DoesNotExist", 0, NULL}, true},
		{"DoesNotExist with a value (malformed)", {"rack", "DoesNotExist", 1, v_a}, false},
		{"Gt, label greater", {"cores", "Gt", 1, v_32}, true},
		{"Gt, label equal", {"cores", "Gt", 1, v_64}, false},
		{"Gt, label smaller", {"cores", "Gt", 1, v_128}, false},
		{"Gt, negative value", {"cores", "Gt", 1, v_neg}, true},
		{"Gt, signed value", {"cores", "Gt", 1, v_plus}, true},
		{"Gt, label missing", {"rack", "Gt", 1, v_32}, false},
		{"Gt, non-integer label", {"name", "Gt", 1, v_32}, false},
		{"Gt, non-integer label (letters)", {"gpu", "Gt", 1, v_32}, false},
		{"Gt, non-integer value", {"cores", "Gt", 1, v_x}, false},
		{"Lt, value beyond int64", {"cores", "Lt", 1, v_big}, false},
		{"Gt, empty label", {"empty", "Gt", 1, v_neg}, false},
		{"Gt, zero values", {"cores", "Gt", 0, NULL}, false},
		{"Gt, two values", {"cores", "Gt", 2, v_3264}, false},
		{"Lt, label smaller", {"cores", "Lt", 1, v_128}, true},
		{"Lt, label equal", {"cores", "Lt", 1, v_64}, false},
		{"Lt, label greater", {"cores", "Lt", 1, v_32}, false},
		{"Lt, non-integer label", {"name", "Lt", 1, v_128}, false},
		{"Lt, non-integer value", {"cores", "Lt", 1, v_x}, false},
		{"Lt, two values", {"cores", "Lt", 2, v_3264}, false},
		{"Lt, label missing", {"rack", "Lt", 1, v_128}, false},
		{"unknown operator", {"zone", "Equals", 1, v_a}, false},
		{"no operator", {"zone", NULL, 1, v_a}, false},
		{"no key", {NULL, "DoesNotExist", 0, NULL}, false},
	};
	struct carve_labels l = node();
	size_t i;

	(void)state;
	for (i = 0; i < N(cases); i++) {
		bool got = carve_match_expr(&l, &cases[i].e);

		if (got != cases[i].want)
			fail_msg("%s: got %d, want %d", cases[i].what, got, cases[i].want);
	}
}

static void parse_int(void **state)
{
	static const struct {
		const char *s;
		bool ok;
		int64_t v;
	} cases[] = {
		{"0", true, 0},
		{"42", true, 42},
		{"-42", true, -42},
		{"+7", true, 7},
		{"007", true, 7},
		{"9223372036854775807", true, INT64_MAX},
		{"-9223372036854775808", true, INT64_MIN},
		{"9223372036854775808", false, 0},
		{"-9223372036854775809", false, 0},
		{"", false, 0},
		{"-", false, 0},
		{" 1", false, 0},
		{"1 ", false, 0},
		{"1.5", false, 0},
		{"1e3", false, 0},
		{"0x10", false, 0},
		{"1_000", false, 0},
	};
	size_t i;

	(void)state;
	assert_false(carve_match_parse_int(NULL, NULL));
	for (i = 0; i < N(cases); i++) {
		int64_t v = -12345;
		bool ok = carve_match_parse_int(cases[i].s, &v);

		if (ok != cases[i].ok || (ok && v != cases[i].v))
			fail_msg("\"%s\": got %d/%lld", cases[i].s, ok, (long long)v);
	}
}

/* Expressions the term cases combine. */
static const struct carve_match_expr zone_a = {"zone", "In", 1, v_a};
static const struct carve_match_expr zone_b = {"zone", "In", 1, v_b};
static const struct carve_match_expr has_gpu = {"gpu", "Exists", 0, NULL};
static const struct carve_match_expr rack_b = {"rack", "In", 1, v_b};
static const struct carve_match_expr no_rack = {"rack", "DoesNotExist", 0, NULL};
static const struct carve_match_expr bad_gt = {"cores", "Gt", 0, NULL};

static void terms(void **state)
{
	const struct carve_match_expr and_ok[] = {zone_a, has_gpu, no_rack};
	const struct carve_match_expr and_bad[] = {zone_a, has_gpu, zone_b};
	const struct carve_match_expr malformed[] = {zone_a, bad_gt};
	const struct carve_match_expr foreign[] = {rack_b};
	const struct carve_match_expr own_and_foreign[] = {zone_a, rack_b};
	const struct carve_match_expr own_bad_and_foreign[] = {zone_b, rack_b};
	const struct carve_match_term t_and_ok = {N(and_ok), and_ok};
	const struct carve_match_term t_and_bad = {N(and_bad), and_bad};
	const struct carve_match_term t_malformed = {N(malformed), malformed};
	const struct carve_match_term t_empty = {0, NULL};
	const struct carve_match_term t_foreign = {N(foreign), foreign};
	const struct carve_match_term t_own_foreign = {N(own_and_foreign), own_and_foreign};
	const struct carve_match_term t_own_bad = {N(own_bad_and_foreign), own_bad_and_foreign};
	const struct {
		const char *what;
		struct carve_match_term t[2];
		size_t n;
		bool all_keys, own_keys;
	} cases[] = {
		{"no terms", {{0, NULL}}, 0, false, false},
		{"one term, expressions ANDed, all hold", {t_and_ok}, 1, true, true},
		{"one term, one expression fails", {t_and_bad}, 1, false, false},
		{"terms ORed: second holds", {t_and_bad, t_and_ok}, 2, true, true},
		{"terms ORed: none holds", {t_and_bad, t_own_bad}, 2, false, false},
		{"empty term", {t_empty}, 1, false, true},
		{"empty term ORed with a holding one", {t_empty, t_and_ok}, 2, true, true},
		{"malformed expression fails its term", {t_malformed}, 1, false, false},
		{"malformed term ORed with a holding one", {t_malformed, t_and_ok}, 2, true, true},
		{"term on a key the labels lack", {t_foreign}, 1, false, true},
		{"own key holds, foreign key skipped", {t_own_foreign}, 1, false, true},
		{"own key fails, foreign key skipped", {t_own_bad}, 1, false, false},
	};
	struct carve_labels l = node();
	size_t i;

	(void)state;
	for (i = 0; i < N(cases); i++) {
		bool all = carve_match_terms(&l, cases[i].t, cases[i].n, CARVE_MATCH_ALL_KEYS);
		bool own = carve_match_terms(&l, cases[i].t, cases[i].n, CARVE_MATCH_OWN_KEYS);

		if (all != cases[i].all_keys || own != cases[i].own_keys)
			fail_msg("%s: got %d/%d, want %d/%d", cases[i].what, all, own,
				 cases[i].all_keys, cases[i].own_keys);
	}
}

static void selectors(void **state)
{
	const struct carve_label ok[] = {{"zone", "a"}, {"gpu", "h100"}};
	const struct carve_label wrong[] = {{"zone", "a"}, {"gpu", "a100"}};
	const struct carve_label missing[] = {{"zone", "a"}, {"rack", "r1"}};
	const struct carve_label empty_value[] = {{"empty", ""}};
	const struct carve_label null_value[] = {{"empty", NULL}};
	struct carve_labels l = node();
	size_t bad = 99;

	(void)state;
	assert_true(carve_match_selector(&l, NULL, 0, CARVE_MATCH_ALL_KEYS, &bad));
	assert_true(carve_match_selector(&l, ok, N(ok), CARVE_MATCH_ALL_KEYS, &bad));
	assert_false(carve_match_selector(&l, wrong, N(wrong), CARVE_MATCH_ALL_KEYS, &bad));
	assert_int_equal(bad, 1);
	assert_false(carve_match_selector(&l, wrong, N(wrong), CARVE_MATCH_OWN_KEYS, NULL));
	bad = 99;
	assert_false(carve_match_selector(&l, missing, N(missing), CARVE_MATCH_ALL_KEYS, &bad));
	assert_int_equal(bad, 1);
	assert_true(carve_match_selector(&l, missing, N(missing), CARVE_MATCH_OWN_KEYS, NULL));
	assert_true(carve_match_selector(&l, empty_value, 1, CARVE_MATCH_ALL_KEYS, NULL));
	assert_true(carve_match_selector(&l, null_value, 1, CARVE_MATCH_ALL_KEYS, NULL));
	assert_true(carve_match_label(&l, "gpu", "h100"));
	assert_false(carve_match_label(&l, "gpu", "h10"));
	assert_false(carve_match_label(&l, "rack", NULL));
	assert_null(carve_labels_get(&l, NULL));
	assert_string_equal(carve_labels_get(&l, "cores"), "64");
}

static void label_selectors(void **state)
{
	const struct carve_label ml[] = {{"zone", "a"}};
	const struct carve_label ml_bad[] = {{"zone", "b"}};
	const struct carve_match_expr in[] = {zone_a, has_gpu, no_rack};
	const struct carve_match_expr gt[] = {{"cores", "Gt", 1, v_32}};
	struct carve_labels l = node();

	(void)state;
	assert_true(carve_match_label_selector(&l, NULL, 0, NULL, 0));
	assert_true(carve_match_label_selector(&l, ml, 1, in, N(in)));
	assert_false(carve_match_label_selector(&l, ml_bad, 1, in, N(in)));
	assert_false(carve_match_label_selector(&l, ml, 1, &zone_b, 1));
	/* Gt/Lt are node-affinity operators only. */
	assert_true(carve_match_expr(&l, &gt[0]));
	assert_false(carve_match_label_selector(&l, NULL, 0, gt, 1));
}

/* A label store that is not an array: every key "k<digit>" has value
 * "<digit>". */
static const char *digits(const void *obj, const char *key)
{
	static const char *const v[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};

	(void)obj;
	if (key[0] == 'k' && key[1] >= '0' && key[1] <= '9' && !key[2])
		return v[key[1] - '0'];
	return NULL;
}

static void label_callback(void **state)
{
	struct carve_labels l = {NULL, 0, digits, NULL};
	const struct carve_match_expr e[] = {{"k7", "Gt", 1, (const char *const[]){"6"}},
					     {"k1", "NotIn", 1, v_b},
					     {"zz", "DoesNotExist", 0, NULL}};
	const struct carve_match_term t = {N(e), e};

	(void)state;
	assert_true(carve_match_terms(&l, &t, 1, CARVE_MATCH_ALL_KEYS));
	assert_true(carve_match_label(&l, "k3", "3"));
	assert_false(carve_match_label(&l, "k3", "4"));
}

struct tol_case {
	const char *what;
	struct carve_toleration_spec tol;
	struct carve_taint_spec taint;
	bool want;
};

static void tolerations(void **state)
{
	static const struct tol_case cases[] = {
		{"Equal, key value effect equal", {"k", "Equal", "v", "NoSchedule"},
		 {"k", "v", "NoSchedule"}, true},
		{"no operator means Equal", {"k", NULL, "v", "NoSchedule"},
		 {"k", "v", "NoSchedule"}, true},
		{"empty operator means Equal", {"k", "", "v", NULL}, {"k", "v", "NoSchedule"}, true},
		{"Equal, value mismatch", {"k", "Equal", "w", "NoSchedule"},
		 {"k", "v", "NoSchedule"}, false},
		{"Equal, no value vs a value", {"k", "Equal", NULL, NULL}, {"k", "v", "NoSchedule"},
		 false},
		{"Equal, no value vs no value", {"k", "Equal", NULL, NULL},
		 {"k", NULL, "NoSchedule"}, true},
		{"Equal, empty value vs no value", {"k", "Equal", "", NULL},
		 {"k", NULL, "NoSchedule"}, true},
		{"key mismatch", {"k", "Equal", "v", NULL}, {"j", "v", "NoSchedule"}, false},
		{"Exists ignores the value", {"k", "Exists", NULL, NULL}, {"k", "v", "NoSchedule"},
		 true},
		{"Exists, key mismatch", {"k", "Exists", NULL, NULL}, {"j", "v", "NoSchedule"},
		 false},
		{"empty key with Exists matches every taint", {NULL, "Exists", NULL, NULL},
		 {"j", "v", "NoExecute"}, true},
		{"empty key with Exists, empty string key", {"", "Exists", NULL, NULL},
		 {"j", "v", "NoSchedule"}, true},
		{"empty key with Exists and an effect: that effect only",
		 {NULL, "Exists", NULL, "NoSchedule"}, {"j", "v", "NoExecute"}, false},
		{"empty effect matches NoSchedule", {"k", "Equal", "v", NULL},
		 {"k", "v", "NoSchedule"}, true},
		{"empty effect matches NoExecute", {"k", "Exists", NULL, ""},
		 {"k", "v", "NoExecute"}, true},
		{"effect mismatch", {"k", "Equal", "v", "NoSchedule"}, {"k", "v", "NoExecute"},
		 false},
		{"NoExecute tolerated by NoExecute", {"k", "Exists", NULL, "NoExecute"},
		 {"k", "v", "NoExecute"}, true},
		{"effect-naming toleration vs taint without effect",
		 {"k", "Equal", "v", "NoSchedule"}, {"k", "v", NULL}, false},
		{"effect-less toleration vs taint without effect", {"k", "Equal", "v", NULL},
		 {"k", "v", NULL}, true},
		{"refused: Exists with a value", {"k", "Exists", "v", NULL},
		 {"k", "v", "NoSchedule"}, false},
		{"refused: empty key with Equal", {NULL, "Equal", "v", NULL},
		 {"k", "v", "NoSchedule"}, false},
		{"refused: all empty", {NULL, NULL, NULL, NULL}, {"k", NULL, "NoSchedule"}, false},
		{"unknown operator", {"k", "Gt", "1", NULL}, {"k", "2", "NoSchedule"}, false},
	};
	size_t i;

	(void)state;
	for (i = 0; i < N(cases); i++) {
		bool got = carve_tolerates(&cases[i].tol, &cases[i].taint);

		if (got != cases[i].want)
			fail_msg("%s: got %d, want %d", cases[i].what, got, cases[i].want);
	}
}

static void taints(void **state)
{
	const struct carve_taint_spec ns = {"team", "ml", "NoSchedule"};
	const struct carve_taint_spec ne = {"gpu", NULL, "NoExecute"};
	const struct carve_taint_spec pns = {"soft", "x", "PreferNoSchedule"};
	const struct carve_taint_spec none = {"bare", "x", NULL};
	const struct carve_taint_spec blank = {"blank", "x", ""};
	const struct carve_taint_spec all[] = {pns, none, blank, ns, ne};
	const struct carve_toleration_spec team = {"team", "Equal", "ml", "NoSchedule"};
	const struct carve_toleration_spec gpu = {"gpu", "Exists", NULL, NULL};
	const struct carve_toleration_spec both[] = {team, gpu};
	const struct carve_toleration_spec any = {NULL, "Exists", NULL, NULL};

	(void)state;
	assert_true(carve_taint_blocks(&ns));
	assert_true(carve_taint_blocks(&ne));
	assert_false(carve_taint_blocks(&pns));
	assert_false(carve_taint_blocks(&none));
	assert_false(carve_taint_blocks(&blank));
	/* PreferNoSchedule and effect-less taints never block; the first
	 * blocking untolerated one is reported. */
	assert_ptr_equal(carve_untolerated_taint(all, N(all), NULL, 0), &all[3]);
	assert_ptr_equal(carve_untolerated_taint(all, N(all), &team, 1), &all[4]);
	assert_null(carve_untolerated_taint(all, N(all), both, N(both)));
	assert_null(carve_untolerated_taint(all, N(all), &any, 1));
	assert_null(carve_untolerated_taint(all, 3, NULL, 0));
	assert_null(carve_untolerated_taint(NULL, 0, NULL, 0));
	assert_true(carve_tolerations_tolerate(both, N(both), &ne));
	assert_false(carve_tolerations_tolerate(both, 1, &ne));
	assert_false(carve_tolerations_tolerate(NULL, 0, &ne));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(expressions),
		cmocka_unit_test(parse_int),
		cmocka_unit_test(terms),
		cmocka_unit_test(selectors),
		cmocka_unit_test(label_selectors),
		cmocka_unit_test(label_callback),
		cmocka_unit_test(tolerations),
		cmocka_unit_test(taints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
