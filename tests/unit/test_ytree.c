/*
 * test_ytree.c - the YAML tree, the decode helpers and the kind dispatcher:
 * positions, syntax errors that keep earlier documents, duplicate keys
 * (small and hashed maps), merge keys, alias cycles and the alias expansion
 * limit, non-scalar keys, unknown kinds and apiVersions, documents without
 * a kind; the diagnostics list (cap, stable sort); directories with symlink
 * loops and FIFOs.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#include "carve/arena.h"
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

/* Loads len bytes (NULs allowed) as "t.yaml". */
static struct carve_manifests *load_bytes(const char *y, size_t len)
{
	struct carve_manifests *m = carve_manifests_create();

	assert_non_null(m);
	assert_int_equal(carve_manifests_load_yaml(m, "t.yaml", y, len), 0);
	return m;
}

/* libyaml's reader gives a bad byte's offset only: the error names its own
 * line and column (characters, as libyaml's marks count), not 1:1. */
static void bad_bytes_at_their_position(void **state)
{
	static const char nul[] = "a: 1\nb: x\0y\n";
	static const char utf[] = "a: 1\r\nb:\n  c: \xc3\xa9t\xffy\n";
	struct carve_manifests *m;

	(void)state;
	m = load_bytes(nul, sizeof(nul) - 1);
	tu_assert_error(m, 2, 5, "YAML syntax error: control characters are not allowed (byte 0x00)");
	carve_manifests_destroy(m);
	m = load_bytes(utf, sizeof(utf) - 1);
	tu_assert_error(m, 3, 8, "YAML syntax error: invalid leading UTF-8 octet (byte 0xff)");
	carve_manifests_destroy(m);
}

/* More than YTREE_MAX_DOCS documents: the file ends there, with the error
 * at the first document past the bound; those before it are read. */
static void too_many_documents(void **state)
{
	size_t n = YTREE_MAX_DOCS + 1, i, len = 0;
	char *y = malloc(n * 6 + 1);
	struct carve_manifests *m;

	(void)state;
	assert_non_null(y);
	for (i = 0; i < n; i++) {
		memcpy(y + len, "--- ~\n", 6);
		len += 6;
	}
	m = load_bytes(y, len);
	tu_assert_error(m, YTREE_MAX_DOCS + 1, 1,
			"more than 1000000 documents in one file (the most carve reads; split the file)");
	assert_int_equal(m->diags.nerrors, 1);
	carve_manifests_destroy(m);
	free(y);
}

static void document_too_long(void **state)
{
	size_t n = YTREE_MAX_DOC_BYTES + 16;
	char *y = malloc(n + 1);
	struct carve_manifests *m;

	(void)state;
	assert_non_null(y);
	memcpy(y, "kind: x\n---\na: ", 15);
	memset(y + 15, 'x', n - 16);
	y[n - 1] = '\n';
	m = load_bytes(y, n);
	tu_assert_error(m, 2, 1, "document is longer than 67108864 characters "
			"(the most carve reads in one document)");
	tu_assert_error(m, 1, 1, "x: missing or empty 'apiVersion'");
	carve_manifests_destroy(m);
	free(y);
}

/* ytree_parse_each hands each document over as it ends and frees its
 * nodes; scalar texts stay in the caller's arena. */
struct seen {
	size_t n;
	const char *texts[4];
};

static int keep_text(void *ctx, const struct ydoc *doc)
{
	struct seen *s = ctx;

	if (s->n < 4)
		s->texts[s->n] = ytree_get(doc->root, "k")->str;
	s->n++;
	return 0;
}

static void parse_each_keeps_texts(void **state)
{
	const char *y = "k: one\n---\nk: &a two\nj: *a\n---\nk: three\n";
	struct carve_arena a;
	struct carve_diags d;
	struct seen s = {0};

	(void)state;
	carve_arena_init(&a);
	carve_diags_init(&d);
	assert_int_equal(ytree_parse_each(&a, "f.yaml", y, strlen(y), &d, keep_text, &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.texts[0], "one");
	assert_string_equal(s.texts[1], "two");
	assert_string_equal(s.texts[2], "three");
	assert_int_equal(d.n, 0);
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
	/* not a typo of a kind carve reads: skipped with a warning */
	tu_assert_warning(m, 6, 7, "kind Frobnicator (v1) is not read by carve; document skipped");
	assert_int_equal(m->diags.nerrors, 1);
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
			"(carve reads: kueue.x-k8s.io/v1beta1, kueue.x-k8s.io/v1beta2, "
			"carve.dev/v1alpha1)");
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

/* Parses y into a fresh arena; the caller cleans up a and d. */
static int parse(const char *y, struct carve_arena *a, struct carve_diags *d, struct ydocs *docs)
{
	carve_arena_init(a);
	carve_diags_init(d);
	return ytree_parse(a, "f.yaml", y, strlen(y), 0, 0, d, docs);
}

static void merge_keys(void **state)
{
	const char *y =
		"base: &b {name: c, image: x, port: 1}\n"   /* 1 */
		"extra: &e {port: 2, tag: t}\n"
		"m1:\n"
		"  <<: *b\n"
		"  name: d\n"                                /* 5 */
		"m2:\n"
		"  <<: [*e, *b]\n"
		"m3: {\"<<\": 1}\n"
		"m4:\n"
		"  <<: 3\n"                                  /* 10 */
		"  k: v\n";
	struct carve_arena a;
	struct carve_diags d;
	struct ydocs docs;
	const struct ynode *r, *m1, *m2;

	(void)state;
	assert_int_equal(parse(y, &a, &d, &docs), 0);
	r = docs.v[0].root;
	m1 = ytree_get(r, "m1");
	assert_int_equal(m1->n, 3); /* name (own), image, port; no '<<' pair */
	assert_string_equal(ytree_get(m1, "name")->str, "d");
	assert_string_equal(ytree_get(m1, "image")->str, "x");
	assert_null(ytree_get(m1, "<<"));
	m2 = ytree_get(r, "m2");
	assert_int_equal(m2->n, 4);
	assert_string_equal(ytree_get(m2, "port")->str, "2"); /* earlier in the list wins */
	assert_string_equal(ytree_get(m2, "name")->str, "c");
	assert_string_equal(ytree_get(ytree_get(r, "m3"), "<<")->str, "1"); /* quoted: a key */
	assert_int_equal(d.nerrors, 1);
	assert_non_null(strstr(d.v[0].msg, "merge key '<<' needs a mapping or a list of "
				"mappings, got a string"));
	assert_int_equal(d.v[0].pos.line, 10);
	assert_int_equal(ytree_get(r, "m4")->n, 1);
	carve_diags_cleanup(&d);
	carve_arena_cleanup(&a);
}

static void merge_key_in_manifest(void **state)
{
	/* A container built from an anchored one: no "unknown field '<<'". */
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
		"  - &base\n    name: c\n    image: x\n"
		"    resources: {limits: {nvidia.com/gpu: 1}}\n"
		"  - <<: *base\n    name: d\n");

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->npods, 1);
	assert_int_equal(m->pods[0].spec.ncontainers, 2);
	assert_string_equal(m->pods[0].spec.containers[1].name, "d");
	assert_int_equal(m->pods[0].spec.limits.v[0].milli, 2000);
	carve_manifests_destroy(m);
}

static void alias_cycle_and_expansion(void **state)
{
	struct carve_arena a;
	struct carve_diags d;
	struct ydocs docs;
	char *y = malloc(8192);
	size_t len = 0;
	int lvl, i;

	(void)state;
	/* An alias inside its own anchor: an error, read as null. */
	assert_int_equal(parse("a: &x [1, *x]\nb: 2\n", &a, &d, &docs), 0);
	assert_int_equal(d.nerrors, 1);
	assert_non_null(strstr(d.v[0].msg, "alias '*x' refers to a node that contains it"));
	assert_int_equal(d.v[0].pos.col, 11);
	assert_true(ytree_is_null(ytree_get(docs.v[0].root, "a")->items[1]));
	assert_string_equal(ytree_get(docs.v[0].root, "b")->str, "2"); /* pairing kept */
	carve_diags_cleanup(&d);
	carve_arena_cleanup(&a);

	/* "Billion laughs": 10 aliases per level, 7 levels = 10^7 nodes. */
	assert_non_null(y);
	len += (size_t)sprintf(y + len, "ok: 1\n---\nl0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (lvl = 1; lvl <= 7; lvl++) {
		len += (size_t)sprintf(y + len, "l%d: &a%d [", lvl, lvl);
		for (i = 0; i < 10; i++)
			len += (size_t)sprintf(y + len, "%s*a%d", i ? ", " : "", lvl - 1);
		len += (size_t)sprintf(y + len, "]\n");
	}
	assert_int_equal(parse(y, &a, &d, &docs), CARVE_EPARSE);
	assert_int_equal(docs.n, 1); /* the document before it is kept */
	assert_int_equal(d.nerrors, 1);
	assert_non_null(strstr(d.v[0].msg, "too many alias references: the document would "
				"expand to more than 1000000 nodes"));
	assert_int_equal(d.v[0].pos.line, 8); /* l5: 10 x 111111 nodes */
	carve_diags_cleanup(&d);
	carve_arena_cleanup(&a);
	free(y);
}

static void non_scalar_key_dropped(void **state)
{
	struct carve_manifests *m = tu_load("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
					    "  ? [a, b]\n  : 1\nspec:\n  containers: [{name: c}]\n");

	(void)state;
	tu_assert_error(m, 5, 5, "mapping keys must be plain strings");
	assert_int_equal(m->diags.n, 1); /* and no "unknown field ''" without a position */
	carve_manifests_destroy(m);
}

static void big_map_duplicates(void **state)
{
	/* 100 keys (hashed), a duplicate, and a merge into the big mapping. */
	char *y = malloc(4096);
	size_t len = 0;
	struct carve_arena a;
	struct carve_diags d;
	struct ydocs docs;
	const struct ynode *big, *use;
	int i;

	(void)state;
	assert_non_null(y);
	len += (size_t)sprintf(y + len, "big: &b\n");
	for (i = 0; i < 100; i++)
		len += (size_t)sprintf(y + len, "  k%d: v%d\n", i, i);
	len += (size_t)sprintf(y + len, "  k50: again\nuse:\n  k7: own\n  <<: *b\n");
	assert_int_equal(parse(y, &a, &d, &docs), 0);
	assert_int_equal(d.nerrors, 1);
	assert_non_null(strstr(d.v[0].msg, "duplicate key 'k50' (first at line 52)"));
	assert_int_equal(d.v[0].pos.line, 102);
	big = ytree_get(docs.v[0].root, "big");
	assert_int_equal(big->n, 100);
	assert_string_equal(ytree_get(big, "k50")->str, "v50");
	assert_string_equal(ytree_get(big, "k99")->str, "v99");
	use = ytree_get(docs.v[0].root, "use");
	assert_int_equal(use->n, 100);
	assert_string_equal(ytree_get(use, "k7")->str, "own");
	assert_string_equal(ytree_get(use, "k98")->str, "v98");
	carve_diags_cleanup(&d);
	carve_arena_cleanup(&a);
	free(y);
}

static void diags_cap_and_big_sort(void **state)
{
	struct carve_diags d;
	char buf[512] = {0};
	FILE *f;
	size_t i;

	(void)state;
	carve_diags_init(&d);
	d.max = 3;
	carve_diag_warn(&d, (struct carve_pos){"a.yaml", 3, 1}, "w1");
	carve_diag_error(&d, (struct carve_pos){"a.yaml", 2, 1}, "e1");
	carve_diag_warn(&d, (struct carve_pos){"a.yaml", 1, 1}, "w2");
	carve_diag_error(&d, (struct carve_pos){"a.yaml", 1, 1}, "e2");
	carve_diag_error(&d, (struct carve_pos){"a.yaml", 1, 1}, "e3");
	assert_int_equal(d.n, 3);
	assert_int_equal(d.suppressed, 2);
	assert_int_equal(d.nerrors, 3); /* counts stay exact: exit codes stay right */
	assert_int_equal(d.nwarnings, 2);
	carve_diags_sort(&d);
	f = fmemopen(buf, sizeof(buf), "w");
	assert_non_null(f);
	carve_diags_print(&d, f);
	fclose(f);
	assert_string_equal(buf, "a.yaml:1:1: warning: w2\na.yaml:2:1: error: e1\n"
				 "a.yaml:3:1: warning: w1\n"
				 "carve: note: 2 further diagnostics not shown\n");
	carve_diags_cleanup(&d);

	/* Many diagnostics, lines descending, two per position: sorted by
	 * line, and stable (insertion order kept within a position). */
	carve_diags_init(&d);
	for (i = 0; i < 20000; i++)
		carve_diag_error(&d, (struct carve_pos){"b.yaml", (uint32_t)(10000 - i / 2), 1},
				 "%zu", i % 2);
	carve_diags_sort(&d);
	for (i = 0; i < d.n; i++) {
		assert_int_equal(d.v[i].pos.line, 1 + i / 2);
		assert_string_equal(d.v[i].msg, i % 2 ? "1" : "0");
	}
	carve_diags_cleanup(&d);
}

static void manifest_set_caps_diagnostics(void **state)
{
	/* 1200 aliases of a container with an unknown field: 1200 errors
	 * counted, the first 1000 kept. */
	char *y = malloc(16384);
	struct carve_manifests *m;
	size_t len = 0;
	int i;

	(void)state;
	assert_non_null(y);
	len += (size_t)sprintf(y + len, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
			       "spec:\n  containers:\n  - &c {name: c, bogus: 1}\n");
	for (i = 1; i < 1200; i++)
		len += (size_t)sprintf(y + len, "  - *c\n");
	m = tu_load(y);
	assert_int_equal(m->diags.nerrors, 1200);
	assert_int_equal(m->diags.n, CARVE_DIAGS_MAX);
	assert_int_equal(m->diags.suppressed, 200);
	carve_manifests_destroy(m);
	free(y);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void dir_symlink_loops_and_fifo(void **state)
{
	char root[] = "/tmp/carve-test-XXXXXX", p[4][256];
	struct carve_manifests *m;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(p[0], sizeof(p[0]), "%s/sub", root);
	assert_int_equal(mkdir(p[0], 0755), 0);
	snprintf(p[1], sizeof(p[1]), "%s/sub/a.yaml", root);
	write_text(p[1], "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
			 "spec: {containers: [{name: c}]}\n");
	snprintf(p[2], sizeof(p[2]), "%s/sub/up", root);
	assert_int_equal(symlink("..", p[2]), 0);   /* back to root: read already */
	snprintf(p[3], sizeof(p[3]), "%s/sub/self", root);
	assert_int_equal(symlink(".", p[3]), 0);    /* sub itself */
	{
		char fifo[300];

		snprintf(fifo, sizeof(fifo), "%s/x.yaml", root);
		assert_int_equal(mkfifo(fifo, 0644), 0); /* reading it would block */
		m = carve_manifests_create();
		assert_int_equal(carve_manifests_load_path(m, root), 0);
		assert_int_equal(m->ndocs, 1);
		assert_int_equal(m->diags.nerrors, 0); /* no "defined twice" */
		assert_int_equal(m->diags.nwarnings, 3);
		assert_true(carve_diags_find(&m->diags, "not a regular file; skipped") >= 0);
		assert_true(carve_diags_find(&m->diags, "skipping directory already read via "
					     "another path") >= 0);
		carve_manifests_destroy(m);
		unlink(fifo);
	}
	unlink(p[3]);
	unlink(p[2]);
	unlink(p[1]);
	rmdir(p[0]);
	rmdir(root);
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
		cmocka_unit_test(merge_keys),
		cmocka_unit_test(merge_key_in_manifest),
		cmocka_unit_test(alias_cycle_and_expansion),
		cmocka_unit_test(non_scalar_key_dropped),
		cmocka_unit_test(big_map_duplicates),
		cmocka_unit_test(diags_cap_and_big_sort),
		cmocka_unit_test(manifest_set_caps_diagnostics),
		cmocka_unit_test(dir_symlink_loops_and_fifo),
		cmocka_unit_test(bad_bytes_at_their_position),
		cmocka_unit_test(too_many_documents),
		cmocka_unit_test(document_too_long),
		cmocka_unit_test(parse_each_keeps_texts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
