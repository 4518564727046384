/*
 * test_node_labels.c - labels.c against golden label files: for each node
 * snapshot of tests/node/snapshots.h (8 × H100, 2 × A100 with MIG under
 * the mixed and single strategies, 1 × T4) the labels, as the features.d
 * file, must equal tests/data/node/<name>.labels byte for byte; those
 * files hold GFD's labels for the same node (docs/node.md "Labels").  Also
 * the single strategy's MIG-INVALID case, a bad driver version, a bad
 * strategy, and the Node patch's removal of labels that went away.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "../node/snapshots.h"

static char *slurp(const char *name)
{
	const char *dir = getenv("CARVE_TEST_DATA");
	char path[1024];
	FILE *f;
	char *s;
	long n;

	snprintf(path, sizeof(path), "%s/node/%s", dir ? dir : "tests/data", name);
	if (!(f = fopen(path, "rb")))
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = malloc((size_t)n + 1);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	return s;
}

static void golden(void (*mk)(struct nd_snapshot *), const char *strategy, const char *machine,
		   const char *file)
{
	struct nd_label_opts o = {strategy, machine, 0, 1764806400};
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_kvs l = {0};
	char *text, *want;
	int rc;

	mk(&s);
	rc = nd_labels(&s, &o, &l, &err);
	if (rc)
		fail_msg("%s: %d %s", file, rc, err.text);
	text = nd_labels_features(&l);
	want = slurp(file);
	if (strcmp(text, want)) {
		fprintf(stderr, "--- got for %s:\n%s---\n", file, text);
		fail_msg("%s differs (the labels made are above)", file);
	}
	free(text);
	free(want);
	nd_kvs_free(&l);
	snap_free(&s);
}

static void test_h100(void **st)
{
	(void)st;
	golden(snap_h100x8, "none", "DGX H100", "h100x8.labels");
}

static void test_a100_mixed(void **st)
{
	(void)st;
	golden(snap_a100_mixed, "mixed", "DGX A100", "a100-mig-mixed.labels");
}

static void test_a100_single_invalid(void **st)
{
	(void)st;
	/* two profiles on the node: single cannot name one */
	golden(snap_a100_mixed, "single", "DGX A100", "a100-mig-single-invalid.labels");
}

static void test_t4(void **st)
{
	(void)st;
	golden(snap_t4, "none", "g4dn.xlarge", "t4.labels");
}

static void test_single_valid(void **st)
{
	struct nd_label_opts o = {"single", NULL, 0, 0};
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_kvs l = {0};

	(void)st;
	snap_a100_56(&s);
	assert_int_equal(nd_labels(&s, &o, &l, &err), 0);
	assert_string_equal(nd_kvs_get(&l, "nvidia.com/gpu.product"),
			    "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb");
	assert_string_equal(nd_kvs_get(&l, "nvidia.com/gpu.count"), "56");
	assert_string_equal(nd_kvs_get(&l, "nvidia.com/gpu.memory"), "9856");
	assert_string_equal(nd_kvs_get(&l, "nvidia.com/gpu.multiprocessors"), "14");
	assert_string_equal(nd_kvs_get(&l, "nvidia.com/gpu.family"), "ampere");
	assert_string_equal(nd_kvs_get(&l, "nvidia.com/mig.strategy"), "single");
	assert_null(nd_kvs_get(&l, "nvidia.com/gpu.machine"));
	assert_null(nd_kvs_get(&l, "nvidia.com/gfd.timestamp"));
	nd_kvs_free(&l);
	snap_free(&s);
}

static void test_sharing(void **st)
{
	struct nd_label_opts o = {NULL, NULL, 4, 0};
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_kvs l = {0};

	(void)st;
	snap_t4(&s);
	assert_int_equal(nd_labels(&s, &o, &l, &err), 0);
	assert_string_equal(nd_kvs_get(&l, "nvidia.com/gpu.product"), "Tesla-T4-SHARED");
	assert_string_equal(nd_kvs_get(&l, "nvidia.com/gpu.replicas"), "4");
	assert_string_equal(nd_kvs_get(&l, "nvidia.com/gpu.sharing-strategy"), "time-slicing");
	nd_kvs_free(&l);
	snap_free(&s);
}

static void test_errors(void **st)
{
	struct nd_label_opts o = {"both", NULL, 0, 0};
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_kvs l = {0};

	(void)st;
	snap_t4(&s);
	assert_int_equal(nd_labels(&s, &o, &l, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "MIG strategy 'both'"));
	o.mig_strategy = "none";
	free(s.driver_version);
	s.driver_version = strdup("550.x");
	assert_int_equal(nd_labels(&s, &o, &l, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "driver version '550.x'"));
	nd_kvs_free(&l);
	snap_free(&s);
	/* no GPUs: no labels, no error */
	snap_init(&s, 0, "550.54.15", 12, 4);
	assert_int_equal(nd_labels(&s, &o, &l, &err), 0);
	assert_int_equal(l.n, 0);
	snap_free(&s);
}

static void test_patch(void **st)
{
	struct nd_kvs now = {0}, old = {0};
	char *p;

	(void)st;
	nd_kvs_addf(&now, "nvidia.com/gpu.count", "8");
	nd_kvs_addf(&old, "nvidia.com/gpu.count", "7");
	nd_kvs_addf(&old, "nvidia.com/mig-1g.10gb.count", "7");
	p = nd_labels_patch(&now, &old);
	assert_string_equal(p, "{\"metadata\":{\"labels\":{\"nvidia.com/gpu.count\":\"8\","
			       "\"nvidia.com/mig-1g.10gb.count\":null}}}");
	free(p);
	nd_kvs_free(&now);
	nd_kvs_free(&old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_h100),
		cmocka_unit_test(test_a100_mixed),
		cmocka_unit_test(test_a100_single_invalid),
		cmocka_unit_test(test_t4),
		cmocka_unit_test(test_single_valid),
		cmocka_unit_test(test_sharing),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_patch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
