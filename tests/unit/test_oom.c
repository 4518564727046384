/*
 * test_oom.c - allocation-failure torture (in the manner of curl's -t and
 * SQLite's *fault tests): for n = 0, 1, 2, ... fail the n-th allocation while
 * loading the seed scenario, building its inventory and validating it, and
 * check that every run ends cleanly (no crash, no leak under ASan) until a
 * run needs no failure at all.
 */
#include "testutil.h"

#include "carve/inventory.h"
#include "carve/validate.h"

static long countdown = -1; /* allocations left before failing; -1 = never */
static long failures;

static void *fail_malloc(size_t n)
{
	if (countdown == 0) {
		failures++;
		return NULL;
	}
	if (countdown > 0)
		countdown--;
	return malloc(n);
}

static void *fail_realloc(void *p, size_t n)
{
	if (countdown == 0) {
		failures++;
		return NULL;
	}
	if (countdown > 0)
		countdown--;
	return realloc(p, n);
}

static const struct carve_allocator failing = {fail_malloc, fail_realloc, free};

static void run_once(const char *dir)
{
	struct carve_manifests *m = carve_manifests_create();
	struct carve_inventory *inv;

	if (!m)
		return;
	carve_manifests_load_path(m, dir);
	inv = carve_inventory_build(m);
	carve_validate(m, inv);
	carve_diags_sort(&m->diags);
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

static void torture_seed(void **state)
{
	char dir[4096];
	const char *src = getenv("CARVE_SOURCE_DIR");
	long n;

	(void)state;
	if (!src) {
		skip();
		return;
	}
	snprintf(dir, sizeof(dir), "%s/examples/seed-scenario", src);
	carve_set_allocator(&failing);
	for (n = 0; n < 100000; n++) {
		failures = 0;
		countdown = n;
		run_once(dir);
		if (!failures)
			break; /* the whole run fit in n allocations */
	}
	countdown = -1;
	carve_set_allocator(NULL);
	assert_true(n > 10);
	assert_true(n < 100000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(torture_seed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
