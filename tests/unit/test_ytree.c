/*
 * test_ytree.c - the YAML tree, the decode helpers and the kind dispatcher:
 * positions, syntax errors that keep earlier documents, duplicate keys,
 * unknown kinds and apiVersions, documents without a kind.
 */
#include "testutil.h"

#include "arena.h"
#include "decode.h"
#include "ytree.h"

static void positions(void **state)
{
	const char *y = "a: 1\nb:\n  c: [x, y]\n---\n- k: v\n";
	struct carve_arena a;
	struct carve_diags d;
	struct ydocs docs;
	const struct ynode *c;

	(void)state;
	carve_arena_init(&a);
	carve_diags_init(&d);
	assert_int_equal(ytree_parse(&a, "f.yaml", y, strlen(y), 0, 0, &d, &docs), 0);
	assert_int_equal(docs.n, 2);
	assert_int_equal(docs.v[0].root->kind, YN_MAP);
	c = ytree_get(ytree_get(docs.v[0].root, "b"), "c");
	assert_non_null(c);
	assert_int_equal(c->kind, YN_SEQ);
	assert_int_equal(c->pos.line, 3);
	assert_int_equal(c->pos.col, 6);
	assert_int_equal(c->items[1]->pos.col, 10);
	assert_string_equal(c->items[1]->str, "y");
	assert_int_equal(docs.v[1].root->kind, YN_SEQ);
	assert_int_equal(docs.v[1].root->items[0]->pos.line, 5);
	assert_int_equal(d.n, 0);
	carve_diags_cleanup(&d);
	carve_arena_cleanup(&a);
}

static void offsets_and_aliases(void **state)
{
	const char *y = "base: &b {x: 1}\nuse: *b\nnil: ~\nq: \"~\"\n";
	struct carve_arena a;
	struct carve_diags d;
	struct ydocs docs;

	(void)state;
	carve_arena_init(&a);
	carve_diags_init(&d);
	assert_int_equal(ytree_parse(&a, "f", y, strlen(y), 10, 4, &d, &docs), 0);
	assert_ptr_equal(ytree_get(docs.v[0].root, "base"), ytree_get(docs.v[0].root, "use"));
	assert_true(ytree_is_null(ytree_get(docs.v[0].root, "nil")));
	assert_false(ytree_is_null(ytree_get(docs.v[0].root, "q")));
	assert_int_equal(ytree_get(docs.v[0].root, "use")->pos.line, 11);
	assert_int_equal(ytree_get(docs.v[0].root, "nil")->pos.line, 13);
	assert_int_equal(ytree_get(docs.v[0].root, "nil")->pos.col, 10);
	carve_diags_cleanup(&d);
	carve_arena_cleanup(&a);
}

static void syntax_error_keeps_earlier_docs(void **state)
{
	const char *y = "a: 1\n---\nb: [1, 2\n";
	struct carve_arena a;
	struct carve_diags d;
	struct ydocs docs;

	(void)state;
	carve_arena_init(&a);
	carve_diags_init(&d);
	assert_int_equal(ytree_parse(&a, "f.yaml", y, strlen(y), 0, 0, &d, &docs), CARVE_EPARSE);
	assert_int_equal(docs.n, 1);
	assert_int_equal(d.nerrors, 1);
	assert_non_null(strstr(d.v[0].msg, "YAML syntax error"));
	assert_int_equal(d.v[0].pos.line, 4);
	carve_diags_cleanup(&d);
	carve_arena_cleanup(&a);
}

static void duplicate_key(void **state)
{
	struct carve_manifests *m = tu_load("a: 1\nb: 2\na: 3\n");

	(void)state;
	tu_assert_error(m, 3, 1, "duplicate key 'a' (first at line 1)");
	carve_manifests_destroy(m);
}

static void unknown_kind_suggests(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: kueue.x-k8s.io/v1beta2\n"
		"kind: ClusterQeue\n"
		"metadata: {name: x}\n"
		"---\n"
		"apiVersion: v1\n"
		"kind: Frobnicator\n"
		"metadata: {name: y}\n");

	(void)state;
	tu_assert_error(m, 2, 7, "unknown kind 'ClusterQeue' (did you mean 'ClusterQueue'?)");
	tu_assert_error(m, 6, 7, "unknown kind 'Frobnicator'");
	assert_int_equal(m->diags.nerrors, 2);
	carve_manifests_destroy(m);
}

static void unsupported_api_version(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: kueue.x-k8s.io/v1alpha1\n"
		"kind: ClusterQueue\n"
		"metadata: {name: x}\n");

	(void)state;
	tu_assert_error(m, 1, 13, "ClusterQueue: unsupported apiVersion 'kueue.x-k8s.io/v1alpha1' "
			"(carve reads: kueue.x-k8s.io/v1beta1, kueue.x-k8s.io/v1beta2)");
	carve_manifests_destroy(m);
}

static void foreign_kind_warns(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n");

	(void)state;
	tu_assert_warning(m, 2, 7, "kind Namespace (v1) is not read by carve; document skipped");
	assert_int_equal(m->diags.nerrors, 0);
	carve_manifests_destroy(m);
}

static void kindless_document(void **state)
{
	struct carve_manifests *m = tu_load("foo: bar\n---\n[1, 2]\n");

	(void)state;
	tu_assert_error(m, 1, 1, "document has no 'kind'");
	tu_assert_error(m, 3, 1, "expected a mapping at the top of the document, got a list");
	carve_manifests_destroy(m);
}

static void suggest(void **state)
{
	static const char *const names[] = {"nominalQuota", "borrowingLimit", "lendingLimit"};

	(void)state;
	assert_string_equal(ld_suggest("nominalQuotas", names, 3), "nominalQuota");
	assert_string_equal(ld_suggest("borowingLimit", names, 3), "borrowingLimit");
	assert_string_equal(ld_suggest("LendingLimit", names, 3), "lendingLimit");
	assert_null(ld_suggest("zzz", names, 3));
}

static void diags_sort_and_print(void **state)
{
	struct carve_diags d;
	char buf[512] = {0};
	FILE *f;

	(void)state;
	carve_diags_init(&d);
	carve_diag_warn(&d, (struct carve_pos){"b.yaml", 2, 1}, "w");
	carve_diag_error(&d, (struct carve_pos){"a.yaml", 9, 3}, "e2");
	carve_diag_error(&d, (struct carve_pos){"a.yaml", 1, 5}, "e1");
	carve_diags_sort(&d);
	f = fmemopen(buf, sizeof(buf), "w");
	assert_non_null(f);
	carve_diags_print(&d, f);
	fclose(f);
	assert_string_equal(buf, "a.yaml:1:5: error: e1\na.yaml:9:3: error: e2\n"
				 "b.yaml:2:1: warning: w\n");
	assert_int_equal(d.nerrors, 2);
	assert_int_equal(d.nwarnings, 1);
	carve_diags_cleanup(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(positions),
		cmocka_unit_test(offsets_and_aliases),
		cmocka_unit_test(syntax_error_keeps_earlier_docs),
		cmocka_unit_test(duplicate_key),
		cmocka_unit_test(unknown_kind_suggests),
		cmocka_unit_test(unsupported_api_version),
		cmocka_unit_test(foreign_kind_warns),
		cmocka_unit_test(kindless_document),
		cmocka_unit_test(suggest),
		cmocka_unit_test(diags_sort_and_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
