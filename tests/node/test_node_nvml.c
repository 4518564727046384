/*
 * test_node_nvml.c - src/node/nvml*.c and miglayout.c against the mock
 * libnvidia-ml.so.1 (tests/node/mocknvml.c), loaded through dlopen as the
 * driver's would be.  CARVE_MOCK_DIR names the folder of the mock's
 * variants, CARVE_NODE_DATA the fixtures (the JSON files of tests/node).  Every test
 * that changes MIG instances works on a copy (CARVE_MOCK_NVML_STATE in a
 * temporary folder), never on a fixture.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "node_int.h"

#define MIB (1024LL * 1024LL)

static char tmpdir[256];
static char statefile[512];

static const char *env_or(const char *k, const char *def)
{
	const char *v = getenv(k);

	return v && *v ? v : def;
}

static const char *lib(const char *variant)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/%s/libnvidia-ml.so.1",
		 env_or("CARVE_MOCK_DIR", "build/tests/node"), variant);
	return buf;
}

static const char *fixture(const char *name)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/%s", env_or("CARVE_NODE_DATA", "tests/node"), name);
	return buf;
}

/* Uses fixture `name` as the node, with no shared state. */
static void use(const char *name)
{
	setenv("CARVE_MOCK_NVML", fixture(name), 1);
	unsetenv("CARVE_MOCK_NVML_STATE");
}

/* Uses fixture `name` with a fresh state file (MIG changes persist there). */
static void use_state(const char *name)
{
	use(name);
	snprintf(statefile, sizeof(statefile), "%s/state.json", tmpdir);
	unlink(statefile);
	setenv("CARVE_MOCK_NVML_STATE", statefile, 1);
}

/* Writes fixture `name` changed by `edit` to a temporary file and uses it. */
static void use_edited(const char *name, void (*edit)(json_t *root))
{
	static char path[512];
	json_t *root = json_load_file(fixture(name), 0, NULL);

	assert_non_null(root);
	edit(root);
	snprintf(path, sizeof(path), "%s/edited.json", tmpdir);
	assert_int_equal(json_dump_file(root, path, 0), 0);
	json_decref(root);
	use_state(name);
	setenv("CARVE_MOCK_NVML", path, 1);
}

static struct nd_nvml *open_ok(void)
{
	struct carve_error err = {0, ""};
	struct nd_nvml *n = NULL;
	int rc = nd_nvml_open(lib("mocknvml"), &n, &err);

	if (rc)
		fail_msg("nd_nvml_open: %s", err.text);
	return n;
}

static void snap_ok(struct nd_nvml *n, struct nd_snapshot *s)
{
	struct carve_error err = {0, ""};

	if (nd_nvml_snapshot(n, s, &err))
		fail_msg("nd_nvml_snapshot: %s", err.text);
}

/* Opens, snapshots and closes: what a separate discovery process sees. */
static void discover(struct nd_snapshot *s)
{
	struct nd_nvml *n = open_ok();

	snap_ok(n, s);
	nd_nvml_close(n);
}

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/carve-nvml-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- discovery ---- */

static void t_open_count(void **state)
{
	struct nd_snapshot s;

	use("h100x8.json");
	discover(&s);
	assert_int_equal(s.ngpus, 8);
	assert_string_equal(s.driver_version, "550.54.15");
	assert_int_equal(s.cuda_major, 12);
	assert_int_equal(s.cuda_minor, 4);
	nd_snapshot_free(&s);
}

static void t_gpu_fields(void **state)
{
	struct nd_snapshot s;
	const struct nd_gpu *g;

	use("h100x8.json");
	discover(&s);
	g = &s.gpus[5];
	assert_int_equal(g->index, 5);
	assert_int_equal(g->minor, 5);
	assert_string_equal(g->uuid, "GPU-c0de0005-1111-2222-3333-000000000005");
	assert_string_equal(g->name, "NVIDIA H100 80GB HBM3");
	assert_string_equal(g->pci_bus_id, "00000000:68:00.0");
	assert_int_equal(g->mem_total, 81559 * MIB);
	assert_int_equal(g->mem_free, 81559 * MIB);
	assert_int_equal(g->cc_major, 9);
	assert_int_equal(g->cc_minor, 0);
	assert_int_equal(g->arch, 9);
	assert_int_equal(g->numa_node, 1);
	assert_int_equal(g->mig_current, 0);
	assert_int_equal(g->mig_pending, 0);
	assert_int_equal(g->util_gpu, 50);
	assert_int_equal(g->util_mem, 25);
	assert_int_equal(g->power_mw, 75000);
	assert_int_equal(g->energy_mj, 123456794);
	assert_int_equal(g->temp_c, 35);
	assert_int_equal(g->sm_clock, 1980);
	assert_int_equal(g->mem_clock, 2619);
	assert_true(g->healthy);
	assert_int_equal(g->nmig, 0);
	nd_snapshot_free(&s);
}

static void t_processes(void **state)
{
	struct nd_snapshot s;

	use("h100x8.json");
	discover(&s);
	assert_int_equal(s.gpus[0].nproc, 0);
	assert_int_equal(s.gpus[1].nproc, 1);
	assert_int_equal(s.gpus[1].proc[0].pid, 4242);
	assert_int_equal(s.gpus[1].proc[0].mem_used, 1024 * MIB);
	assert_int_equal(s.gpus[1].proc[0].gi_id, -1);
	assert_int_equal(s.gpus[1].mem_used, 1024 * MIB);
	/* compute and graphics lists together */
	assert_int_equal(s.gpus[2].nproc, 2);
	assert_int_equal(s.gpus[2].proc[0].pid, 5151);
	assert_int_equal(s.gpus[2].proc[1].pid, 5152);
	nd_snapshot_free(&s);
}

static void t_mig_devices(void **state)
{
	struct nd_snapshot s;
	const struct nd_gpu *g;
	size_t i;

	use("h100x8_mig7.json");
	discover(&s);
	assert_int_equal(s.ngpus, 8);
	g = &s.gpus[0];
	assert_int_equal(g->mig_current, 1);
	assert_int_equal(g->nmig, 7);
	for (i = 0; i < 7; i++) {
		assert_string_equal(g->mig[i].profile, "1g.10gb");
		assert_int_equal(g->mig[i].start, i);
		assert_int_equal(g->mig[i].size, 1);
		assert_int_equal(g->mig[i].gi_id, 7 + i);
		assert_int_equal(g->mig[i].ci_id, 0);
		assert_int_equal(g->mig[i].gi_profile_id, 19);
		assert_int_equal(g->mig[i].mem_total, 81559 / 8 * MIB);
		assert_non_null(strstr(g->mig[i].uuid, "MIG-d0000000"));
	}
	assert_int_equal(g->mig[2].mem_used, 3000 * MIB);
	assert_int_equal(g->nproc, 1);
	assert_int_equal(g->proc[0].gi_id, 9);
	assert_int_equal(g->proc[0].ci_id, 0);
	nd_snapshot_free(&s);
}

static void t_a100_profiles(void **state)
{
	struct nd_snapshot s;
	const struct nd_gpu *g;

	use("a100.json");
	discover(&s);
	g = &s.gpus[0];
	assert_int_equal(g->nmig, 2);
	assert_string_equal(g->mig[0].profile, "3g.40gb");
	assert_int_equal(g->mig[0].gi_profile_id, 9);
	assert_int_equal(g->mig[0].size, 4);
	assert_int_equal(g->mig[0].mem_total, 40192 * MIB);
	assert_int_equal(g->mig[0].sm_count, 42);
	assert_string_equal(g->mig[1].profile, "2g.20gb");
	assert_int_equal(g->mig[1].start, 4);
	assert_int_equal(g->mig[1].gi_id, 5);
	nd_snapshot_free(&s);
}

static void no_gi_permission(json_t *root)
{
	json_t *g = json_array_get(json_object_get(root, "gpus"), 0);

	json_object_set_new(g, "errors", json_pack("{s:i}", "nvmlDeviceGetGpuInstanceById", 4));
}

/* Without the (privileged) GPU-instance calls, the profile comes from the
 * MIG device's name and the placement is unknown. */
static void t_mig_without_gi_calls(void **state)
{
	struct nd_snapshot s;
	char buf[256];

	use_edited("a100.json", no_gi_permission);
	discover(&s);
	assert_int_equal(s.gpus[0].nmig, 2);
	assert_string_equal(s.gpus[0].mig[0].profile, "3g.40gb");
	assert_int_equal(s.gpus[0].mig[0].start, UINT_MAX);
	assert_int_equal(s.gpus[0].mig[0].gi_id, 1);
	assert_int_equal(nd_miglayout_current(&s, buf, sizeof(buf)), CARVE_EINVAL);
	nd_snapshot_free(&s);
}

static void t_missing_library(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_nvml *n = (struct nd_nvml *)1;

	assert_int_equal(nd_nvml_open("/nonexistent/libnvidia-ml.so.1", &n, &err),
			 CARVE_ENOTFOUND);
	assert_null(n);
	assert_non_null(strstr(err.text, "NVML not found"));
	assert_non_null(strstr(err.text, "NVIDIA driver"));
}

static void t_env_library(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_nvml *n = NULL;

	use("a100.json");
	setenv("CARVE_NVML_LIB", lib("mocknvml"), 1);
	assert_int_equal(nd_nvml_open(NULL, &n, &err), 0);
	nd_nvml_close(n);
	setenv("CARVE_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	assert_int_equal(nd_nvml_open(NULL, &n, &err), CARVE_ENOTFOUND);
	unsetenv("CARVE_NVML_LIB");
}

static void t_missing_required(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_nvml *n = NULL;

	use("a100.json");
	assert_int_equal(nd_nvml_open(lib("mocknvml_noreq"), &n, &err), CARVE_EIO);
	assert_null(n);
	assert_non_null(strstr(err.text, "nvmlDeviceGetMemoryInfo"));
}

static void t_missing_optional(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_nvml *n = NULL;
	struct nd_snapshot s;
	char *js;

	use("a100.json");
	assert_int_equal(nd_nvml_open(lib("mocknvml_noopt"), &n, &err), 0);
	snap_ok(n, &s);
	assert_int_equal(s.cuda_major, -1);
	assert_int_equal(s.cuda_minor, -1);
	assert_int_equal(s.gpus[0].numa_node, -1);
	assert_int_equal(s.gpus[0].energy_mj, -1);
	assert_int_equal(s.gpus[0].power_mw, 70000); /* the rest is there */
	js = nd_snapshot_json(&s, false);
	assert_non_null(strstr(js, "\"numa_node\":null"));
	assert_non_null(strstr(js, "\"cuda_major\":null"));
	free(js);
	nd_snapshot_free(&s);
	nd_nvml_close(n);
}

static void t_init_fails(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_nvml *n = NULL;

	unsetenv("CARVE_MOCK_NVML");
	unsetenv("CARVE_MOCK_NVML_STATE");
	assert_int_equal(nd_nvml_open(lib("mocknvml"), &n, &err), CARVE_EIO);
	assert_non_null(strstr(err.text, "nvmlInit_v2"));
	assert_non_null(strstr(err.text, "Driver Not Loaded"));
}

static void init_no_permission(json_t *root)
{
	json_object_set_new(root, "errors", json_pack("{s:i}", "nvmlInit_v2", 4));
}

static void t_init_injected(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_nvml *n = NULL;

	use_edited("h100x8.json", init_no_permission);
	assert_int_equal(nd_nvml_open(lib("mocknvml"), &n, &err), CARVE_EIO);
	assert_null(n);
	assert_string_equal(err.text, "nvmlInit_v2: Insufficient Permissions");
}

static void t_injected_optional(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_nvml *n;

	use("errors.json");
	n = open_ok();
	/* GPU 1 loses its memory query: the snapshot fails, naming it. */
	assert_int_equal(nd_nvml_snapshot(n, &s, &err), CARVE_EIO);
	assert_non_null(strstr(err.text, "GPU 1"));
	assert_non_null(strstr(err.text, "nvmlDeviceGetMemoryInfo"));
	assert_non_null(strstr(err.text, "GPU is lost"));
	assert_int_equal(s.ngpus, 0);
	nd_nvml_close(n);
}

static void drop_gpu1(json_t *root)
{
	json_array_remove(json_object_get(root, "gpus"), 1);
}

static void t_injected_unknown_fields(void **state)
{
	struct nd_snapshot s;

	use_edited("errors.json", drop_gpu1);
	discover(&s);
	assert_int_equal(s.ngpus, 1);
	assert_int_equal(s.gpus[0].power_mw, -1); /* NOT_SUPPORTED for the node */
	assert_int_equal(s.gpus[0].temp_c, -1);
	assert_int_equal(s.gpus[0].sm_clock, -1); /* NO_PERMISSION */
	assert_int_equal(s.gpus[0].util_gpu, 0);  /* others still answer */
	nd_snapshot_free(&s);
}

static void t_xid_unhealthy(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_nvml *n;

	use("a100.json");
	n = open_ok();
	snap_ok(n, &s);
	assert_true(s.gpus[0].healthy);
	nd_snapshot_free(&s);
	assert_int_equal(nd_nvml_poll_events(n, 10, &err), 2);
	assert_int_equal(nd_nvml_poll_events(n, 10, &err), 0); /* drained */
	snap_ok(n, &s);
	assert_int_equal(s.gpus[0].xid_count, 2);
	assert_int_equal(s.gpus[0].last_xid, 79);
	assert_false(s.gpus[0].healthy);
	nd_snapshot_free(&s);
	nd_nvml_close(n);
}

static void app_xid_only(json_t *root)
{
	json_t *g = json_array_get(json_object_get(root, "gpus"), 0);

	json_object_set_new(g, "xids", json_pack("[i, i]", 13, 43));
}

static void t_xid_application_healthy(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_nvml *n;

	use_edited("a100.json", app_xid_only);
	n = open_ok();
	assert_int_equal(nd_nvml_poll_events(n, 10, &err), 2);
	snap_ok(n, &s);
	assert_int_equal(s.gpus[0].xid_count, 2);
	assert_int_equal(s.gpus[0].last_xid, 43);
	assert_true(s.gpus[0].healthy);
	nd_snapshot_free(&s);
	nd_nvml_close(n);
}

static void t_xid_table(void **state)
{
	static const unsigned crit[] = {48, 62, 63, 64, 74, 79, 92, 94, 95};
	size_t i;

	for (i = 0; i < sizeof(crit) / sizeof(crit[0]); i++)
		assert_true(nd_xid_critical(crit[i]));
	assert_false(nd_xid_critical(13));
	assert_false(nd_xid_critical(31));
	assert_false(nd_xid_critical(0));
}

/* ---- MIG apply ---- */

static int apply_text(struct nd_nvml *n, const char *text, struct carve_error *err)
{
	struct nd_mig_layout l[8];
	int k = nd_miglayout_parse(text, l, 8, err), i, rc;

	assert_true(k > 0);
	for (i = 0; i < k; i++)
		if ((rc = nd_mig_apply(n, &l[i], err)))
			return rc;
	return 0;
}

static void current(const struct nd_snapshot *s, char *buf, size_t size)
{
	assert_true(nd_miglayout_current(s, buf, size) >= 0);
}

static void t_apply_success(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_nvml *n;
	char buf[2048];

	use_state("h100x8_mig7.json");
	n = open_ok();
	if (apply_text(n, "3=3g.40gb@0,3g.40gb@4", &err))
		fail_msg("apply: %s", err.text);
	nd_nvml_close(n);
	discover(&s); /* a separate discovery reads the state file */
	assert_int_equal(s.gpus[3].nmig, 2);
	assert_string_equal(s.gpus[3].mig[0].profile, "3g.40gb");
	assert_int_equal(s.gpus[3].mig[1].start, 4);
	assert_int_equal(s.gpus[3].mig[1].size, 4);
	assert_int_equal(s.gpus[2].nmig, 7);
	current(&s, buf, sizeof(buf));
	assert_non_null(strstr(buf, ";3=3g.40gb@0,3g.40gb@4;4=1g.10gb@0,"));
	nd_snapshot_free(&s);
}

/* A separate process (carve-nvml-dump) sees what an apply here changed. */
static void t_apply_then_other_process(void **state)
{
	const char *dump = getenv("CARVE_NVML_DUMP");
	struct carve_error err = {0, ""};
	struct nd_nvml *n;
	char cmd[1200], out[4096] = "";
	size_t len;
	FILE *p;

	if (!dump)
		skip();
	use_state("a100.json");
	n = open_ok();
	if (apply_text(n, "0=4g.40gb@0,1g.10gb@4,1g.10gb@5", &err))
		fail_msg("apply: %s", err.text);
	nd_nvml_close(n);
	snprintf(cmd, sizeof(cmd), "'%s' --lib '%s' --mig-current", dump, lib("mocknvml"));
	p = popen(cmd, "r");
	assert_non_null(p);
	len = fread(out, 1, sizeof(out) - 1, p);
	out[len] = 0;
	assert_int_equal(pclose(p), 0);
	assert_string_equal(out, "0=4g.40gb@0,1g.10gb@4,1g.10gb@5\n");
}

static void t_apply_keeps_unchanged(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_nvml *n;

	use_state("h100x8_mig7.json");
	n = open_ok();
	if (apply_text(n, "4=1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,3g.40gb@4", &err))
		fail_msg("apply: %s", err.text);
	snap_ok(n, &s);
	assert_int_equal(s.gpus[4].nmig, 5);
	assert_int_equal(s.gpus[4].mig[0].gi_id, 7); /* kept, not re-created */
	assert_int_equal(s.gpus[4].mig[3].gi_id, 10);
	assert_string_equal(s.gpus[4].mig[3].uuid, "MIG-d0000004-aaaa-bbbb-cccc-000000000003");
	assert_string_equal(s.gpus[4].mig[4].profile, "3g.40gb");
	nd_snapshot_free(&s);
	nd_nvml_close(n);
}

static void assert_untouched(struct nd_nvml *n, unsigned gpu)
{
	struct nd_snapshot s;

	snap_ok(n, &s);
	assert_int_equal(s.gpus[gpu].nmig, 7);
	assert_string_equal(s.gpus[gpu].mig[6].profile, "1g.10gb");
	nd_snapshot_free(&s);
	assert_int_equal(access(statefile, F_OK), -1); /* nothing was written */
}

static void t_apply_illegal_start(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_nvml *n;

	use_state("h100x8_mig7.json");
	n = open_ok();
	assert_int_equal(apply_text(n, "1=3g.40gb@2", &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "GPU 1"));
	assert_non_null(strstr(err.text, "cannot start"));
	assert_untouched(n, 1);
	nd_nvml_close(n);
}

static void t_apply_overlap_and_profile(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_nvml *n;

	use_state("h100x8_mig7.json");
	n = open_ok();
	assert_int_equal(apply_text(n, "2=4g.40gb@0,1g.10gb@3", &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "overlaps"));
	assert_int_equal(apply_text(n, "2=5g.50gb@0", &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "5g.50gb does not exist"));
	assert_int_equal(apply_text(n, "9=1g.10gb@0", &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "no such GPU"));
	assert_untouched(n, 2);
	nd_nvml_close(n);
}

static void t_apply_busy(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_nvml *n;

	use_state("h100x8_mig7.json");
	n = open_ok();
	/* pid 777 runs in 1g.10gb@2 (GI 9) on GPU 0 */
	assert_int_equal(apply_text(n, "0=4g.40gb@0,1g.10gb@4", &err), CARVE_EBUSY);
	assert_non_null(strstr(err.text, "process 777"));
	assert_non_null(strstr(err.text, "1g.10gb@2"));
	assert_untouched(n, 0);
	/* A layout that keeps that instance may change the others. */
	if (apply_text(n, "0=1g.10gb@2,3g.40gb@4", &err))
		fail_msg("apply: %s", err.text);
	snap_ok(n, &s);
	assert_int_equal(s.gpus[0].nmig, 2);
	assert_int_equal(s.gpus[0].mig[0].gi_id, 9);
	nd_snapshot_free(&s);
	nd_nvml_close(n);
}

static void fail_second_create(json_t *root)
{
	json_t *g = json_array_get(json_object_get(root, "gpus"), 5);

	json_object_set_new(g, "errors",
			    json_pack("{s:{s:i, s:i}}", "nvmlDeviceCreateGpuInstanceWithPlacement",
				      "code", 23, "after", 1));
}

static void t_apply_partial_failure(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_nvml *n;

	use_edited("h100x8_mig7.json", fail_second_create);
	n = open_ok();
	assert_int_equal(apply_text(n, "5=3g.40gb@0,3g.40gb@4", &err), CARVE_EIO);
	assert_non_null(strstr(err.text, "GPU 5: creating 3g.40gb@4: Insufficient Resources"));
	assert_non_null(strstr(err.text, "destroyed 1g.10gb@0"));
	assert_non_null(strstr(err.text, "created 3g.40gb@0"));
	snap_ok(n, &s);
	assert_int_equal(s.gpus[5].nmig, 1);
	nd_snapshot_free(&s);
	nd_nvml_close(n);
}

static void t_apply_not_mig(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_nvml *n;

	use_state("h100x8.json");
	n = open_ok();
	assert_int_equal(apply_text(n, "0=7g.80gb@0", &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "MIG mode is not enabled"));
	nd_nvml_close(n);
}

static void t_apply_empty(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_snapshot s;
	struct nd_nvml *n;
	char buf[2048];

	use_state("a100.json");
	n = open_ok();
	if (apply_text(n, "0=", &err))
		fail_msg("apply: %s", err.text);
	snap_ok(n, &s);
	assert_int_equal(s.gpus[0].nmig, 0);
	current(&s, buf, sizeof(buf));
	assert_string_equal(buf, "0=");
	nd_snapshot_free(&s);
	nd_nvml_close(n);
}

/* ---- layouts ---- */

static void t_layout_parse(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_mig_layout l[4];

	assert_int_equal(nd_miglayout_parse("0=3g.40gb@0,3g.40gb@4;2=", l, 4, &err), 2);
	assert_int_equal(l[0].gpu, 0);
	assert_int_equal(l[0].n, 2);
	assert_string_equal(l[0].v[1].profile, "3g.40gb");
	assert_int_equal(l[0].v[1].start, 4);
	assert_int_equal(l[1].gpu, 2);
	assert_int_equal(l[1].n, 0);
	assert_int_equal(nd_miglayout_parse("0=3g.40gb", l, 4, &err), CARVE_EPARSE);
	assert_int_equal(nd_miglayout_parse("0=;1=;2=", l, 2, &err), CARVE_EFULL);
}

static void t_layout_check(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_mig_layout l[2];
	struct nd_snapshot s;

	use("h100x8_mig7.json");
	discover(&s);
	assert_int_equal(nd_miglayout_parse("0=7g.80gb@0;1=2g.20gb@0,2g.20gb@2", l, 2, &err), 2);
	assert_int_equal(nd_miglayout_check(&s, l, 2, &err), 0);
	assert_int_equal(nd_miglayout_parse("1=2g.20gb@1", l, 2, &err), 1);
	assert_int_equal(nd_miglayout_check(&s, l, 1, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "GPU 1: illegal MIG layout"));
	nd_snapshot_free(&s);
	use("h100x8.json");
	discover(&s);
	assert_int_equal(nd_miglayout_parse("0=7g.80gb@0", l, 2, &err), 1);
	assert_int_equal(nd_miglayout_check(&s, l, 1, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "not enabled"));
	nd_snapshot_free(&s);
}

static void t_current_text(void **state)
{
	struct nd_snapshot s;
	char buf[2048], small[8];

	use("a100.json");
	discover(&s);
	current(&s, buf, sizeof(buf));
	assert_string_equal(buf, "0=3g.40gb@0,2g.20gb@4");
	assert_int_equal(nd_miglayout_current(&s, small, sizeof(small)), CARVE_ERANGE);
	nd_snapshot_free(&s);
	use("h100x8.json");
	discover(&s);
	current(&s, buf, sizeof(buf));
	assert_string_equal(buf, ""); /* no GPU has MIG on */
	nd_snapshot_free(&s);
}

static const char migparted_yaml[] =
	"version: v1\n"
	"mig-configs:\n"
	"  all-3g:\n"
	"    - devices: all\n"
	"      mig-enabled: true\n"
	"      mig-devices:\n"
	"        \"3g.40gb\": 2\n"
	"  custom:\n"
	"    - devices: [0]\n"
	"      mig-enabled: true\n"
	"      mig-devices: {\"1g.10gb\": 2, \"2g.20gb\": 1, \"3g.40gb\": 1}\n"
	"    - devices: [1]\n"
	"      mig-enabled: false\n"
	"  toomany:\n"
	"    - devices: all\n"
	"      mig-enabled: true\n"
	"      mig-devices: {\"4g.40gb\": 1, \"3g.40gb\": 2}\n"
	"  first:\n"
	"    - devices: [0]\n"
	"      mig-enabled: false\n"
	"    - devices: all\n"
	"      mig-enabled: true\n"
	"      mig-devices: {\"7g.80gb\": 1}\n"
	"  a100only:\n"
	"    - device-filter: [\"0x20B210DE\"]\n"
	"      devices: all\n"
	"      mig-enabled: true\n"
	"      mig-devices: {\"3g.40gb\": 2}\n";

static void t_migparted(void **state)
{
	struct carve_error err = {0, ""};
	struct nd_mig_layout l[8];
	struct nd_snapshot s;
	char path[600];
	FILE *f;
	int k;

	snprintf(path, sizeof(path), "%s/mig.yaml", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(migparted_yaml, f);
	fclose(f);
	use("h100x8_mig7.json");
	discover(&s);
	k = nd_miglayout_migparted(path, "all-3g", &s, l, 8, &err);
	if (k < 0)
		fail_msg("%s", err.text);
	assert_int_equal(k, 8);
	assert_int_equal(l[7].gpu, 7);
	assert_int_equal(l[7].n, 2);
	assert_int_equal(l[7].v[1].start, 4);
	assert_int_equal(nd_miglayout_check(&s, l, (size_t)k, &err), 0);
	k = nd_miglayout_migparted(path, "custom", &s, l, 8, &err);
	assert_int_equal(k, 1);
	assert_int_equal(l[0].gpu, 0);
	assert_int_equal(l[0].n, 4);
	assert_int_equal(l[0].v[0].start, 0); /* listed by start */
	assert_true(l[0].v[1].start > l[0].v[0].start);
	assert_int_equal(nd_miglayout_check(&s, l, 1, &err), 0);
	/* the first entry naming a GPU decides for it, even to leave MIG off */
	assert_int_equal(nd_miglayout_migparted(path, "first", &s, l, 8, &err), 7);
	assert_int_equal(l[0].gpu, 1);
	assert_string_equal(l[0].v[0].profile, "7g.80gb");
	/* a device-filter for another model: no GPU here */
	assert_int_equal(nd_miglayout_migparted(path, "a100only", &s, l, 8, &err), 0);
	assert_int_equal(nd_miglayout_migparted(path, "toomany", &s, l, 8, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "toomany"));
	assert_int_equal(nd_miglayout_migparted(path, "nope", &s, l, 8, &err), CARVE_ENOTFOUND);
	assert_non_null(strstr(err.text, "nope"));
	assert_int_equal(nd_miglayout_migparted("/nonexistent.yaml", "x", &s, l, 8, &err),
			 CARVE_EIO);
	nd_snapshot_free(&s);
}

static void t_snapshot_json(void **state)
{
	struct nd_snapshot s;
	json_t *root, *g;
	char *js;

	use("h100x8_mig7.json");
	discover(&s);
	js = nd_snapshot_json(&s, false);
	assert_non_null(js);
	root = json_loads(js, 0, NULL);
	assert_non_null(root);
	assert_int_equal(json_array_size(json_object_get(root, "gpus")), 8);
	g = json_array_get(json_object_get(root, "gpus"), 0);
	assert_int_equal(json_array_size(json_object_get(g, "mig")), 7);
	assert_string_equal(json_string_value(json_object_get(g, "uuid")), s.gpus[0].uuid);
	assert_int_equal(json_integer_value(json_object_get(g, "mig_current")), 1);
	json_decref(root);
	free(js);
	nd_snapshot_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_open_count),
		cmocka_unit_test(t_gpu_fields),
		cmocka_unit_test(t_processes),
		cmocka_unit_test(t_mig_devices),
		cmocka_unit_test(t_a100_profiles),
		cmocka_unit_test(t_mig_without_gi_calls),
		cmocka_unit_test(t_missing_library),
		cmocka_unit_test(t_env_library),
		cmocka_unit_test(t_missing_required),
		cmocka_unit_test(t_missing_optional),
		cmocka_unit_test(t_init_fails),
		cmocka_unit_test(t_init_injected),
		cmocka_unit_test(t_injected_optional),
		cmocka_unit_test(t_injected_unknown_fields),
		cmocka_unit_test(t_xid_unhealthy),
		cmocka_unit_test(t_xid_application_healthy),
		cmocka_unit_test(t_xid_table),
		cmocka_unit_test(t_apply_success),
		cmocka_unit_test(t_apply_then_other_process),
		cmocka_unit_test(t_apply_keeps_unchanged),
		cmocka_unit_test(t_apply_illegal_start),
		cmocka_unit_test(t_apply_overlap_and_profile),
		cmocka_unit_test(t_apply_busy),
		cmocka_unit_test(t_apply_partial_failure),
		cmocka_unit_test(t_apply_not_mig),
		cmocka_unit_test(t_apply_empty),
		cmocka_unit_test(t_layout_parse),
		cmocka_unit_test(t_layout_check),
		cmocka_unit_test(t_current_text),
		cmocka_unit_test(t_migparted),
		cmocka_unit_test(t_snapshot_json),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
