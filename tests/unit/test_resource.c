/*
 * test_resource.c - unit tests of the resource registry (well-known ids,
 * interning, capacity, allocation failure), the name table (carve_res_kind,
 * carve_res_is_mig, carve_res_greq) and the
 * resource-vector helpers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/place.h"
#include "carve/resource.h"

/* Allocator that fails every allocation once `fail_after` more succeed. */
static int fail_after = -1;

static void *failing_malloc(size_t size)
{
	if (fail_after == 0)
		return NULL;
	if (fail_after > 0)
		fail_after--;
	return malloc(size);
}

static void *failing_realloc(void *p, size_t size)
{
	if (fail_after == 0)
		return NULL;
	if (fail_after > 0)
		fail_after--;
	return realloc(p, size);
}

static const struct carve_allocator failing = {
	failing_malloc, failing_realloc, free
};

static int setup_reg(void **state)
{
	*state = carve_resreg_create();
	return *state ? 0 : -1;
}

static int teardown_reg(void **state)
{
	carve_resreg_destroy(*state);
	carve_set_allocator(NULL);
	fail_after = -1;
	return 0;
}

static void test_wellknown(void **state)
{
	struct carve_resreg *r = *state;
	static const struct {
		int id;
		const char *name;
	} wk[] = {
		{CARVE_RES_CPU, "cpu"},
		{CARVE_RES_MEMORY, "memory"},
		{CARVE_RES_PODS, "pods"},
		{CARVE_RES_GPU, "nvidia.com/gpu"},
	};
	size_t i;

	assert_int_equal(CARVE_RES_CPU, 0);
	assert_int_equal(CARVE_RES_MEMORY, 1);
	assert_int_equal(CARVE_RES_PODS, 2);
	assert_int_equal(CARVE_RES_GPU, 3);
	assert_int_equal(carve_resreg_count(r), CARVE_RES_NWELLKNOWN);
	for (i = 0; i < sizeof(wk) / sizeof(wk[0]); i++) {
		assert_int_equal(carve_resreg_find(r, wk[i].name), wk[i].id);
		assert_int_equal(carve_resreg_intern(r, wk[i].name), wk[i].id);
		assert_string_equal(carve_resreg_name(r, wk[i].id), wk[i].name);
	}
	assert_int_equal(carve_resreg_count(r), CARVE_RES_NWELLKNOWN);
}

static void test_intern_idempotent(void **state)
{
	struct carve_resreg *r = *state;
	char name[32] = "example.com/foo";
	int id;

	assert_int_equal(carve_resreg_find(r, name), CARVE_ENOTFOUND);
	id = carve_resreg_intern(r, name);
	assert_int_equal(id, CARVE_RES_NWELLKNOWN);
	assert_int_equal(carve_resreg_intern(r, name), id);
	assert_int_equal(carve_resreg_intern(r, "example.com/foo"), id);
	assert_int_equal(carve_resreg_find(r, name), id);
	assert_int_equal(carve_resreg_count(r), CARVE_RES_NWELLKNOWN + 1);

	/* The registry keeps its own copy. */
	strcpy(name, "example.com/bar");
	assert_string_equal(carve_resreg_name(r, id), "example.com/foo");
	assert_int_equal(carve_resreg_intern(r, name), id + 1);
	assert_string_equal(carve_resreg_name(r, id + 1), "example.com/bar");

	/* Names are case-sensitive and compared whole. */
	assert_int_equal(carve_resreg_find(r, "CPU"), CARVE_ENOTFOUND);
	assert_int_equal(carve_resreg_find(r, "cp"), CARVE_ENOTFOUND);
	assert_int_equal(carve_resreg_find(r, "cpus"), CARVE_ENOTFOUND);
}

static void test_invalid(void **state)
{
	struct carve_resreg *r = *state;

	assert_int_equal(carve_resreg_intern(r, ""), CARVE_EINVAL);
	assert_int_equal(carve_resreg_intern(r, NULL), CARVE_EINVAL);
	assert_int_equal(carve_resreg_find(r, ""), CARVE_ENOTFOUND);
	assert_int_equal(carve_resreg_find(r, NULL), CARVE_ENOTFOUND);
	assert_int_equal(carve_resreg_find(r, "example.com/none"),
			 CARVE_ENOTFOUND);
	assert_null(carve_resreg_name(r, -1));
	assert_null(carve_resreg_name(r, carve_resreg_count(r)));
	assert_null(carve_resreg_name(r, CARVE_RES_MAX));
	assert_int_equal(carve_resreg_count(r), CARVE_RES_NWELLKNOWN);
	carve_resreg_destroy(NULL);
}

static void test_full(void **state)
{
	struct carve_resreg *r = *state;
	char name[48];
	int i;

	for (i = CARVE_RES_NWELLKNOWN; i < CARVE_RES_MAX; i++) {
		snprintf(name, sizeof(name), "example.com/r%d", i);
		assert_int_equal(carve_resreg_intern(r, name), i);
	}
	assert_int_equal(carve_resreg_count(r), CARVE_RES_MAX);
	assert_int_equal(carve_resreg_intern(r, "example.com/one-too-many"),
			 CARVE_EFULL);
	assert_int_equal(carve_resreg_find(r, "example.com/one-too-many"),
			 CARVE_ENOTFOUND);
	/* Known names still resolve when full. */
	assert_int_equal(carve_resreg_intern(r, "example.com/r63"), 63);
	assert_int_equal(carve_resreg_intern(r, "memory"), CARVE_RES_MEMORY);
	assert_string_equal(carve_resreg_name(r, CARVE_RES_MAX - 1),
			    "example.com/r63");
	assert_int_equal(carve_resreg_count(r), CARVE_RES_MAX);
}

static void test_nomem(void **state)
{
	struct carve_resreg *r = *state;
	int n;

	carve_set_allocator(&failing);
	fail_after = 0;
	assert_int_equal(carve_resreg_intern(r, "example.com/x"), CARVE_ENOMEM);
	assert_int_equal(carve_resreg_count(r), CARVE_RES_NWELLKNOWN);
	assert_int_equal(carve_resreg_find(r, "example.com/x"), CARVE_ENOTFOUND);
	/* Existing names need no allocation. */
	assert_int_equal(carve_resreg_intern(r, "pods"), CARVE_RES_PODS);

	/* create fails cleanly at every allocation (ASan checks for leaks). */
	for (n = 0; n <= CARVE_RES_NWELLKNOWN; n++) {
		fail_after = n;
		assert_null(carve_resreg_create());
	}
	fail_after = n;
	r = carve_resreg_create();
	assert_non_null(r);
	carve_resreg_destroy(r);

	fail_after = -1;
	assert_int_equal(carve_resreg_intern(*state, "example.com/x"),
			 CARVE_RES_NWELLKNOWN);
}

static void test_is_mig(void **state)
{
	static const struct {
		const char *name;
		bool mig;
		const char *profile;
	} c[] = {
		{"nvidia.com/mig-3g.40gb", true, "3g.40gb"},
		{"nvidia.com/mig-1g.10gb", true, "1g.10gb"},
		{"nvidia.com/mig-1g.10gb+me", true, "1g.10gb+me"},
		{"nvidia.com/mig-7g.80gb", true, "7g.80gb"},
		{"nvidia.com/mig-x", true, "x"},
		{"nvidia.com/mig-", false, NULL},
		{"nvidia.com/mig", false, NULL},
		{"nvidia.com/gpu", false, NULL},
		{"nvidia.com/migx3g.40gb", false, NULL},
		{"mig-3g.40gb", false, NULL},
		{"NVIDIA.com/mig-3g.40gb", false, NULL},
		{"example.com/nvidia.com/mig-3g.40gb", false, NULL},
		{"", false, NULL},
	};
	const char *profile;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		profile = "untouched";
		if (carve_res_is_mig(c[i].name, &profile) != c[i].mig)
			fail_msg("\"%s\": want %d", c[i].name, c[i].mig);
		if (c[i].mig) {
			assert_string_equal(profile, c[i].profile);
			/* a view into name, not a copy */
			assert_ptr_equal(profile, c[i].name + strlen(c[i].name) -
							  strlen(c[i].profile));
		} else {
			assert_string_equal(profile, "untouched");
		}
		assert_int_equal(carve_res_is_mig(c[i].name, NULL), c[i].mig);
	}
	assert_false(carve_res_is_mig(NULL, &profile));
}

/* The name table: every name carve gives a meaning to, and look-alikes. */
static void test_kind(void **state)
{
	static const struct {
		const char *name;
		enum carve_res_kind kind;
		const char *profile; /* CARVE_RK_MIG */
		bool device;
		const char *word;
	} c[] = {
		{CARVE_RES_NAME_CPU, CARVE_RK_CPU, NULL, false, "cpu"},
		{CARVE_RES_NAME_MEMORY, CARVE_RK_MEMORY, NULL, false, "memory"},
		{CARVE_RES_NAME_PODS, CARVE_RK_PODS, NULL, false, "pods"},
		{CARVE_RES_NAME_GPU, CARVE_RK_GPU, NULL, true, "gpu"},
		{CARVE_RES_NAME_GPU_SHARED, CARVE_RK_REPLICA, NULL, true, "replica"},
		{CARVE_RES_NAME_MIG_PREFIX "3g.40gb", CARVE_RK_MIG, "3g.40gb", true, "mig"},
		{"nvidia.com/mig-1g.5gb+me", CARVE_RK_MIG, "1g.5gb+me", true, "mig"},
		{CARVE_RES_NAME_MIG_MEMORY_SLICES, CARVE_RK_MIG_MEMORY_SLICES, NULL, false,
		 "mig-memory-slices"},
		{CARVE_RES_NAME_MIG_COMPUTE_SLICES, CARVE_RK_MIG_COMPUTE_SLICES, NULL, false,
		 "mig-compute-slices"},
		{"nvidia.com/mig-", CARVE_RK_OTHER, NULL, false, "other"},
		{"nvidia.com/gpu.product", CARVE_RK_OTHER, NULL, false, "other"},
		{"nvidia.com/gpus", CARVE_RK_OTHER, NULL, false, "other"},
		{"nvidia.com/gpu.shared-x", CARVE_RK_OTHER, NULL, false, "other"},
		{"carve.dev/mig-memory-slice", CARVE_RK_OTHER, NULL, false, "other"},
		{"amd.com/gpu", CARVE_RK_OTHER, NULL, false, "other"},
		{"cpus", CARVE_RK_OTHER, NULL, false, "other"},
		{"ephemeral-storage", CARVE_RK_OTHER, NULL, false, "other"},
		{"", CARVE_RK_OTHER, NULL, false, "other"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		const char *profile = "untouched";
		enum carve_res_kind k = carve_res_kind(c[i].name, &profile);

		if (k != c[i].kind)
			fail_msg("\"%s\": kind %d, want %d", c[i].name, k, c[i].kind);
		assert_string_equal(profile, c[i].profile ? c[i].profile : "untouched");
		assert_int_equal(carve_res_kind(c[i].name, NULL), c[i].kind);
		assert_int_equal(carve_res_is_gpu_device(c[i].name), c[i].device);
		assert_string_equal(carve_res_kind_name(k), c[i].word);
	}
	assert_int_equal(carve_res_kind(NULL, NULL), CARVE_RK_OTHER);
	assert_false(carve_res_is_gpu_device(NULL));
}

/* The well-known ids are the table's names. */
static void test_wellknown_names(void **state)
{
	struct carve_resreg *r = *state;

	assert_string_equal(carve_resreg_name(r, CARVE_RES_CPU), CARVE_RES_NAME_CPU);
	assert_string_equal(carve_resreg_name(r, CARVE_RES_MEMORY), CARVE_RES_NAME_MEMORY);
	assert_string_equal(carve_resreg_name(r, CARVE_RES_PODS), CARVE_RES_NAME_PODS);
	assert_string_equal(carve_resreg_name(r, CARVE_RES_GPU), CARVE_RES_NAME_GPU);
}

/* Resource kinds to the placer's GPU requests. */
static void test_greq(void **state)
{
	static const struct {
		enum carve_res_kind kind;
		enum carve_gpu_req greq;
	} c[] = {
		{CARVE_RK_OTHER, CARVE_GREQ_NONE},
		{CARVE_RK_CPU, CARVE_GREQ_NONE},
		{CARVE_RK_MEMORY, CARVE_GREQ_NONE},
		{CARVE_RK_PODS, CARVE_GREQ_NONE},
		{CARVE_RK_GPU, CARVE_GREQ_GPU},
		{CARVE_RK_REPLICA, CARVE_GREQ_REPLICA},
		{CARVE_RK_MIG, CARVE_GREQ_MIG},
		{CARVE_RK_MIG_MEMORY_SLICES, CARVE_GREQ_NONE},
		{CARVE_RK_MIG_COMPUTE_SLICES, CARVE_GREQ_NONE},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		assert_int_equal(carve_res_greq(c[i].kind), c[i].greq);
}

static void test_resvec_basic(void **state)
{
	struct carve_resvec a, b, zero;
	int i;

	(void)state;
	memset(&a, 0xa5, sizeof(a));
	carve_resvec_zero(&a);
	memset(&zero, 0, sizeof(zero));
	assert_memory_equal(&a, &zero, sizeof(a));

	for (i = 0; i < CARVE_RES_MAX; i++) {
		a.v[i] = i * 1000;
		b.v[i] = -i;
	}
	assert_int_equal(carve_resvec_add(&a, &b), 0);
	for (i = 0; i < CARVE_RES_MAX; i++)
		assert_int_equal(a.v[i], i * 999);
	assert_int_equal(carve_resvec_sub(&a, &b), 0);
	for (i = 0; i < CARVE_RES_MAX; i++)
		assert_int_equal(a.v[i], i * 1000);

	/* dst may alias the operand */
	assert_int_equal(carve_resvec_add(&a, &a), 0);
	assert_int_equal(a.v[5], 10000);
	assert_int_equal(carve_resvec_sub(&a, &a), 0);
	assert_memory_equal(&a, &zero, sizeof(a));
}

static void test_resvec_overflow(void **state)
{
	struct carve_resvec a, b, saved;

	(void)state;
	carve_resvec_zero(&a);
	carve_resvec_zero(&b);
	a.v[0] = 7;
	a.v[CARVE_RES_MAX - 1] = INT64_MAX;
	b.v[0] = 1;
	b.v[CARVE_RES_MAX - 1] = 1;
	saved = a;
	/* the overflow is in the last slot: the first must not be updated */
	assert_int_equal(carve_resvec_add(&a, &b), CARVE_ERANGE);
	assert_memory_equal(&a, &saved, sizeof(a));

	a.v[CARVE_RES_MAX - 1] = INT64_MIN;
	saved = a;
	assert_int_equal(carve_resvec_sub(&a, &b), CARVE_ERANGE);
	assert_memory_equal(&a, &saved, sizeof(a));

	/* 0 - INT64_MIN overflows too */
	carve_resvec_zero(&a);
	carve_resvec_zero(&b);
	b.v[3] = INT64_MIN;
	saved = a;
	assert_int_equal(carve_resvec_sub(&a, &b), CARVE_ERANGE);
	assert_memory_equal(&a, &saved, sizeof(a));

	/* exactly reaching the bounds is fine */
	carve_resvec_zero(&a);
	carve_resvec_zero(&b);
	a.v[1] = INT64_MAX - 5;
	b.v[1] = 5;
	a.v[2] = INT64_MIN + 5;
	b.v[2] = -5;
	assert_int_equal(carve_resvec_add(&a, &b), 0);
	assert_int_equal(a.v[1], INT64_MAX);
	assert_int_equal(a.v[2], INT64_MIN);
}

static void test_resvec_le(void **state)
{
	struct carve_resvec a, b;

	(void)state;
	carve_resvec_zero(&a);
	carve_resvec_zero(&b);
	assert_true(carve_resvec_le(&a, &b, CARVE_RES_MAX));
	a.v[0] = 1000;
	b.v[0] = 1000;
	a.v[1] = -5;
	assert_true(carve_resvec_le(&a, &b, CARVE_RES_MAX));
	a.v[0] = 1001;
	assert_false(carve_resvec_le(&a, &b, CARVE_RES_MAX));
	assert_false(carve_resvec_le(&a, &b, 1));
	assert_true(carve_resvec_le(&a, &b, 0));
	assert_false(carve_resvec_le(&b, &a, CARVE_RES_MAX)); /* b.v[1] > a.v[1] */
	a.v[0] = 0;
	/* only the first n components count */
	a.v[10] = 1;
	assert_true(carve_resvec_le(&a, &b, 10));
	assert_false(carve_resvec_le(&a, &b, 11));
	/* n beyond the vector is clamped */
	assert_false(carve_resvec_le(&a, &b, CARVE_RES_MAX + 100));
	a.v[10] = 0;
	a.v[CARVE_RES_MAX - 1] = INT64_MAX;
	b.v[CARVE_RES_MAX - 1] = INT64_MAX;
	assert_true(carve_resvec_le(&a, &b, CARVE_RES_MAX + 100));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_wellknown, setup_reg, teardown_reg),
		cmocka_unit_test_setup_teardown(test_intern_idempotent, setup_reg, teardown_reg),
		cmocka_unit_test_setup_teardown(test_invalid, setup_reg, teardown_reg),
		cmocka_unit_test_setup_teardown(test_full, setup_reg, teardown_reg),
		cmocka_unit_test_setup_teardown(test_nomem, setup_reg, teardown_reg),
		cmocka_unit_test(test_is_mig),
		cmocka_unit_test(test_kind),
		cmocka_unit_test_setup_teardown(test_wellknown_names, setup_reg, teardown_reg),
		cmocka_unit_test(test_greq),
		cmocka_unit_test(test_resvec_basic),
		cmocka_unit_test(test_resvec_overflow),
		cmocka_unit_test(test_resvec_le),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
