/*
 * test_load_nvidia.c - NVIDIA device-plugin configs and mig-parted configs,
 * bare and inside a ConfigMap: what is kept, and that a bad field inside a
 * block scalar is reported at its exact line and column in the outer file
 * (auto-detected and explicit indentation, CRLF), and inside a quoted value
 * at the value's start.
 */
#include "testutil.h"

static struct carve_manifests *load_named(const char *name, const char *yaml)
{
	struct carve_manifests *m = carve_manifests_create();

	assert_non_null(m);
	assert_int_equal(carve_manifests_load_yaml(m, name, yaml, strlen(yaml)), 0);
	return m;
}

static const struct carve_mf_dpconfig *dp(const struct carve_manifests *m, const char *name)
{
	const struct carve_mf_dpconfig *c = carve_mf_find_dpconfig(m, name);

	if (!c) {
		tu_dump(m);
		fail_msg("no device-plugin config %s", name);
	}
	return c;
}

static const struct carve_mf_migconfig *mig(const struct carve_manifests *m, const char *name)
{
	const struct carve_mf_migconfig *c = carve_mf_find_migconfig(m, name);

	if (!c) {
		tu_dump(m);
		fail_msg("no mig-parted config %s", name);
	}
	return c;
}

/* ---- device-plugin config, bare ---- */

static void dp_bare(void **state)
{
	struct carve_manifests *m = load_named("cfg/ts-config.yaml",
		"version: v1\n"
		"flags:\n"
		"  migStrategy: mixed\n"
		"  failOnInitError: true\n"
		"  nvidiaDriverRoot: /run/nvidia/driver\n"
		"  gdsEnabled: false\n"
		"  mofedEnabled: false\n"
		"  useNodeFeatureAPI: true\n"
		"  deviceDiscoveryStrategy: auto\n"
		"  plugin:\n"
		"    passDeviceSpecs: false\n"
		"    deviceListStrategy: [envvar, cdi-cri]\n"
		"    deviceIDStrategy: uuid\n"
		"    containerDriverRoot: /driver-root\n"
		"    sharedDevicesAllocationPolicy: packed\n"
		"  gfd: {oneshot: false, noTimestamp: true, sleepInterval: 60s}\n"
		"resources:\n"
		"  gpus: [{pattern: '*A100*', name: a100}]\n"
		"  mig: [{pattern: '1g.10gb', name: mig-small}]\n"
		"sharing:\n"
		"  timeSlicing:\n"
		"    renameByDefault: true\n"
		"    failRequestsGreaterThanOne: true\n"
		"    resources:\n"
		"    - name: nvidia.com/gpu\n"
		"      replicas: 4\n"
		"      devices: [0, '1', GPU-8d9f4f4e-0000-0000-0000-000000000000]\n"
		"    - name: nvidia.com/mig-1g.10gb\n"
		"      rename: nvidia.com/mig-1g.10gb.ts\n"
		"      replicas: 2\n"
		"      devices: all\n");
	const struct carve_mf_dpconfig *c;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->ndpconfigs, 1);
	c = dp(m, "ts-config");
	assert_string_equal(c->mig_strategy, "mixed");
	assert_true(c->rename_by_default);
	assert_true(c->fail_requests_gt_one);
	assert_int_equal(c->pos.line, 1);
	assert_int_equal(c->nts, 2);
	assert_string_equal(c->ts[0].name, "nvidia.com/gpu");
	assert_null(c->ts[0].rename);
	assert_int_equal(c->ts[0].replicas, 4);
	assert_int_equal(c->ts[0].pos.line, 25);
	assert_int_equal(c->ts[0].pos.col, 7);
	assert_int_equal(c->ts[0].replicas_pos.line, 26);
	assert_int_equal(c->ts[0].replicas_pos.col, 17);
	assert_string_equal(c->ts[1].name, "nvidia.com/mig-1g.10gb");
	assert_string_equal(c->ts[1].rename, "nvidia.com/mig-1g.10gb.ts");
	assert_int_equal(c->ts[1].replicas, 2);
	carve_manifests_destroy(m);
}

static void dp_mps_only(void **state)
{
	struct carve_manifests *m = load_named("mps.yml",
		"version: v1\n"
		"sharing:\n"
		"  mps:\n"
		"    resources: [{name: nvidia.com/gpu, replicas: 10}]\n");
	const struct carve_mf_dpconfig *c;

	(void)state;
	tu_assert_clean(m);
	c = dp(m, "mps");
	assert_null(c->mig_strategy);
	/* MPS shares are modelled as replicas; one share per container */
	assert_true(c->mps);
	assert_true(c->fail_requests_gt_one);
	assert_int_equal(c->nts, 1);
	assert_string_equal(c->ts[0].name, "nvidia.com/gpu");
	assert_int_equal(c->ts[0].replicas, 10);
	carve_manifests_destroy(m);
}

static void dp_mps_mig_refused(void **state)
{
	struct carve_manifests *m = load_named("mps.yml",
		"version: v1\n"
		"sharing:\n"
		"  mps:\n"
		"    resources: [{name: nvidia.com/mig-1g.10gb, replicas: 2}]\n");

	(void)state;
	tu_assert_error(m, 4, 17, "sharing: mps: nvidia.com/mig-1g.10gb: MIG devices cannot be "
			"shared with MPS");
	assert_int_equal(dp(m, "mps")->nts, 0);
	carve_manifests_destroy(m);
}

static void dp_bad(void **state)
{
	struct carve_manifests *m = load_named("bad.yaml",
		"version: v1\n"
		"flags:\n"
		"  migStrategy: mixd\n"
		"  failOnInitErorr: true\n"
		"  plugin: {passDeviceSpecs: maybe}\n"
		"sharing:\n"
		"  timeSlicing:\n"
		"    resources:\n"
		"    - name: nvidia.com/gpu\n"
		"      replicas: 0\n"
		"    - name: nvidia.com/mig-1g.10gb\n"
		"    - {name: nvidia.com/mig-2g.20gb, replicas: 3, devices: some}\n"
		"    - {name: nvidia.com/mig-3g.40gb, replicas: 2}\n");
	const struct carve_mf_dpconfig *c;

	(void)state;
	tu_assert_error(m, 3, 16,
			"device-plugin config bad: flags.migStrategy: unknown value 'mixd' (did you mean 'mixed'?");
	tu_assert_error(m, 4, 3,
			"device-plugin config bad: flags: unknown field 'failOnInitErorr' "
			"(did you mean 'failOnInitError'?)");
	tu_assert_error(m, 5, 29, "flags.plugin.passDeviceSpecs: expected true or false, got 'maybe'");
	tu_assert_error(m, 10, 17,
			"device-plugin config bad: sharing.timeSlicing.resources[0].replicas: "
			"replicas must be at least 1");
	tu_assert_error(m, 11, 7,
			"sharing.timeSlicing.resources[1]: missing required field 'replicas'");
	tu_assert_error(m, 12, 60,
			"sharing.timeSlicing.resources[2].devices: expected all, a device count or a "
			"list of devices, got 'some'");
	assert_int_equal(m->diags.n, 6);
	/* bad resources are dropped; the rest of the config is kept */
	c = dp(m, "bad");
	assert_null(c->mig_strategy);
	assert_int_equal(c->nts, 2);
	assert_string_equal(c->ts[0].name, "nvidia.com/mig-2g.20gb");
	assert_string_equal(c->ts[1].name, "nvidia.com/mig-3g.40gb");
	carve_manifests_destroy(m);
}

static void dp_version(void **state)
{
	struct carve_manifests *m = load_named("v2.yaml",
		"version: v2\n"
		"sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}\n");

	(void)state;
	tu_assert_error(m, 1, 10,
			"device-plugin config v2: version: unsupported version 'v2' (expected v1)");
	assert_int_equal(m->diags.n, 1);
	assert_int_equal(m->ndpconfigs, 0);
	carve_manifests_destroy(m);
}

/* ---- ConfigMap ---- */

static const char cm_text[] =
	"apiVersion: v1\n"                                            /* 1 */
	"kind: ConfigMap\n"                                           /* 2 */
	"metadata:\n"                                                 /* 3 */
	"  name: device-plugin-configs\n"                             /* 4 */
	"  namespace: gpu-operator\n"                                 /* 5 */
	"data:\n"                                                     /* 6 */
	"  a100-ts: |\n"                                              /* 7 */
	"    version: v1\n"                                           /* 8 */
	"    flags:\n"                                                /* 9 */
	"      migStrategy: mixed\n"                                  /* 10 */
	"    sharing:\n"                                              /* 11 */
	"      timeSlicing:\n"                                        /* 12 */
	"        renameByDefault: true\n"                             /* 13 */
	"        resources:\n"                                        /* 14 */
	"        - name: nvidia.com/gpu\n"                            /* 15 */
	"          replicas: 0\n"                                     /* 16 */
	"        - name: nvidia.com/mig-1g.10gb\n"                    /* 17 */
	"          replicas: 2\n"                                     /* 18 */
	"          rennme: nvidia.com/mig-1g.10gb.shared\n"           /* 19 */
	"  h100.yaml: |2-\n"                                          /* 20 */
	"\n"                                                          /* 21 */
	"      version: v1\n"                                         /* 22 */
	"      sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 7}]}}\n" /* 23 */
	"  notes.txt: just some text\n"                               /* 24 */
	"  script.sh: |\n"                                            /* 25 */
	"    #!/bin/sh\n"                                             /* 26 */
	"    echo done: ok\n"                                         /* 27 */
	"binaryData:\n"                                               /* 28 */
	"  blob: aGVsbG8=\n";                                         /* 29 */

static void cm_dpconfig(void **state)
{
	struct carve_manifests *m = tu_load(cm_text);
	const struct carve_mf_dpconfig *c;

	(void)state;
	tu_assert_error(m, 16, 21,
			"device-plugin config a100-ts: sharing.timeSlicing.resources[0].replicas: "
			"replicas must be at least 1");
	tu_assert_error(m, 19, 11,
			"device-plugin config a100-ts: sharing.timeSlicing.resources[1]: "
			"unknown field 'rennme' (did you mean 'rename'?)");
	tu_assert_warning(m, 24, 3,
			  "ConfigMap device-plugin-configs: data key 'notes.txt' is neither a "
			  "device-plugin nor a mig-parted config; skipped");
	tu_assert_warning(m, 25, 3, "data key 'script.sh' is neither");
	assert_int_equal(m->diags.n, 4);
	assert_int_equal(m->ndocs, 1);
	assert_int_equal(m->ndpconfigs, 2);
	c = dp(m, "a100-ts");
	assert_string_equal(c->mig_strategy, "mixed");
	assert_true(c->rename_by_default);
	assert_int_equal(c->pos.line, 8);
	assert_int_equal(c->pos.col, 5);
	assert_int_equal(c->nts, 1);
	assert_string_equal(c->ts[0].name, "nvidia.com/mig-1g.10gb");
	assert_int_equal(c->ts[0].pos.line, 17);
	assert_int_equal(c->ts[0].pos.col, 11);
	assert_int_equal(c->ts[0].replicas_pos.line, 18);
	assert_int_equal(c->ts[0].replicas_pos.col, 21);
	/* the key is the config name, verbatim; explicit indentation indicator */
	c = dp(m, "h100.yaml");
	assert_int_equal(c->pos.line, 22);
	assert_int_equal(c->pos.col, 7);
	assert_int_equal(c->nts, 1);
	assert_int_equal(c->ts[0].replicas, 7);
	assert_int_equal(c->ts[0].replicas_pos.line, 23);
	assert_int_equal(c->ts[0].replicas_pos.col, 76);
	assert_int_equal(c->ts[0].pos.col, 43);
	carve_manifests_destroy(m);
}

static void cm_crlf_and_syntax(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\r\n"
		"kind: ConfigMap\r\n"
		"metadata: {name: cm, namespace: gpu-operator}\r\n"
		"data:\r\n"
		"  ts: |+ # keep\r\n"
		"\r\n"
		"     version: v1\r\n"
		"     sharing:\r\n"
		"       timeSlicing:\r\n"
		"         resources: [{name: nvidia.com/gpu, replicas: -1}]\r\n"
		"  broken: |\r\n"
		"    version: v1\r\n"
		"    sharing: {timeSlicing: [\r\n");

	(void)state;
	tu_assert_error(m, 10, 55, "device-plugin config ts: sharing.timeSlicing.resources[0].replicas: "
			"replicas must be at least 1");
	tu_assert_error(m, 14, 5, "YAML syntax error");
	assert_int_equal(m->diags.n, 2);
	assert_int_equal(m->ndpconfigs, 1);
	assert_int_equal(dp(m, "ts")->nts, 0);
	carve_manifests_destroy(m);
}

static void cm_bad_shapes(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\n"
		"kind: ConfigMap\n"
		"metadata: {name: cm}\n"
		"data:\n"
		"  nested: {version: v1}\n"
		"immutable: true\n"
		"dta: {}\n"
		"---\n"
		"apiVersion: v1\n"
		"kind: ConfigMap\n"
		"metadata: {name: cm2}\n"
		"data: [a]\n");

	(void)state;
	tu_assert_error(m, 5, 11,
			"ConfigMap cm: data key 'nested': expected a string, got a mapping");
	tu_assert_error(m, 7, 1, "ConfigMap cm: unknown field 'dta' (did you mean 'data'?)");
	tu_assert_error(m, 12, 7, "ConfigMap cm2: data: expected a mapping, got a list");
	assert_int_equal(m->diags.n, 3);
	assert_int_equal(m->ndpconfigs, 0);
	carve_manifests_destroy(m);
}

static void cm_migparted(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\n"                                        /* 1 */
		"kind: ConfigMap\n"                                       /* 2 */
		"metadata: {name: default-mig-parted-config}\n"           /* 3 */
		"data:\n"                                                 /* 4 */
		"  config.yaml: |\n"                                      /* 5 */
		"    version: v1\n"                                       /* 6 */
		"    mig-configs:\n"                                      /* 7 */
		"      all-1g.10gb:\n"                                    /* 8 */
		"      - devices: all\n"                                  /* 9 */
		"        mig-enabled: true\n"                             /* 10 */
		"        mig-devices:\n"                                  /* 11 */
		"          \"1g.10gb\": 7\n"                              /* 12 */
		"      bad:\n"                                            /* 13 */
		"      - devices: all\n"                                  /* 14 */
		"        mig-enabled: true\n"                             /* 15 */
		"        mig-devices: {\"1g.10gb\": many}\n");            /* 16 */
	const struct carve_mf_migconfig *c;

	(void)state;
	tu_assert_error(m, 16, 34,
			"mig-parted config config.yaml: mig-configs.bad[0].mig-devices[1g.10gb]: "
			"expected an integer, got 'many'");
	assert_int_equal(m->diags.n, 1);
	assert_int_equal(m->nmigconfigs, 1);
	c = mig(m, "all-1g.10gb");
	assert_int_equal(c->pos.line, 8);
	assert_int_equal(c->pos.col, 7);
	assert_int_equal(c->n, 1);
	assert_true(c->v[0].all_devices);
	assert_true(c->v[0].mig_enabled);
	assert_int_equal(c->v[0].ncounts, 1);
	assert_string_equal(c->v[0].counts[0].profile, "1g.10gb");
	assert_int_equal(c->v[0].counts[0].count, 7);
	assert_int_equal(c->v[0].counts[0].pos.line, 12);
	assert_int_equal(c->v[0].counts[0].pos.col, 11);
	carve_manifests_destroy(m);
}

/* ---- mig-parted config, bare ---- */

static void mp_bare(void **state)
{
	struct carve_manifests *m = load_named("mig.yaml",
		"version: v1\n"
		"mig-configs:\n"
		"  all-disabled:\n"
		"  - devices: all\n"
		"    mig-enabled: false\n"
		"  all-balanced:\n"
		"  - device-filter: [\"0x233010DE\", \"0x233110DE\"]\n"
		"    devices: all\n"
		"    mig-enabled: true\n"
		"    mig-devices: {\"1g.10gb\": 2, \"2g.20gb\": 1, \"3g.40gb\": 1}\n"
		"  custom:\n"
		"  - {devices: [0, 1], mig-enabled: false}\n"
		"  - {devices: [2], device-filter: \"0x20B210DE\", mig-enabled: true,\n"
		"     mig-devices: {\"1g.10gb\": 7, \"7g.80gb\": 0}}\n"
		"  empty-ok:\n"
		"  - {devices: all, mig-enabled: true, mig-devices: {}}\n");
	const struct carve_mf_migconfig *c;
	const struct carve_mf_migdevice *d;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->nmigconfigs, 4);
	c = mig(m, "all-disabled");
	assert_int_equal(c->n, 1);
	assert_true(c->v[0].all_devices);
	assert_false(c->v[0].mig_enabled);
	assert_int_equal(c->v[0].ncounts, 0);

	c = mig(m, "all-balanced");
	d = &c->v[0];
	assert_int_equal(d->nfilters, 2);
	assert_string_equal(d->device_filter[1], "0x233110DE");
	assert_true(d->all_devices);
	assert_int_equal(d->ndevices, 0);
	assert_int_equal(d->ncounts, 3);
	assert_string_equal(d->counts[2].profile, "3g.40gb");
	assert_int_equal(d->counts[2].count, 1);
	assert_int_equal(d->counts[2].pos.line, 10);
	assert_int_equal(d->counts[2].pos.col, 47);
	assert_int_equal(d->pos.line, 7);
	assert_int_equal(d->pos.col, 5);

	c = mig(m, "custom");
	assert_int_equal(c->n, 2);
	assert_false(c->v[0].all_devices);
	assert_int_equal(c->v[0].ndevices, 2);
	assert_int_equal(c->v[0].devices[0], 0);
	assert_int_equal(c->v[0].devices[1], 1);
	d = &c->v[1];
	assert_int_equal(d->ndevices, 1);
	assert_int_equal(d->devices[0], 2);
	assert_int_equal(d->nfilters, 1);
	assert_string_equal(d->device_filter[0], "0x20B210DE");
	assert_int_equal(d->ncounts, 2);
	assert_int_equal(d->counts[1].count, 0);

	c = mig(m, "empty-ok");
	assert_int_equal(c->v[0].ncounts, 0);
	carve_manifests_destroy(m);
}

static void mp_bad(void **state)
{
	struct carve_manifests *m = load_named("mig.yaml",
		"version: v1\n"
		"mig-configs:\n"
		"  good: [{devices: all, mig-enabled: false}]\n"
		"  b1:\n"
		"  - {devices: some, mig-enabled: true, mig-devices: {}}\n"
		"  b2: []\n"
		"  b3:\n"
		"  - {devices: all, mig-enabled: false, mig-devices: {\"1g.10gb\": 1}}\n"
		"  b4:\n"
		"  - {devices: [0, -1], mig-enabled: true}\n"
		"  b5:\n"
		"  - {devices: all, mig-enabled: true, mig-devices: {\"1g.10gb\": -2}, mig-enable: true}\n"
		"  b6:\n"
		"  - {mig-enabled: true, mig-devices: {}}\n");

	(void)state;
	tu_assert_error(m, 5, 15,
			"mig-parted config: mig-configs.b1[0].devices: expected all or a list of GPU "
			"indices, got 'some'");
	tu_assert_error(m, 6, 7, "mig-configs.b2: a config needs at least one entry");
	tu_assert_error(m, 8, 40,
			"mig-configs.b3[0]: mig-devices must be empty when mig-enabled is false");
	tu_assert_error(m, 10, 19, "mig-configs.b4[0].devices[1]: -1 is out of range");
	tu_assert_error(m, 10, 5,
			"mig-configs.b4[0]: missing required field 'mig-devices' (required when "
			"mig-enabled is true)");
	tu_assert_error(m, 12, 64,
			"mig-configs.b5[0].mig-devices[1g.10gb]: count must not be negative, got -2");
	tu_assert_error(m, 12, 69,
			"mig-configs.b5[0]: unknown field 'mig-enable' (did you mean 'mig-enabled'?)");
	tu_assert_error(m, 14, 5, "mig-configs.b6[0]: missing required field 'devices'");
	assert_int_equal(m->diags.n, 8);
	/* a config with any error is dropped whole */
	assert_int_equal(m->nmigconfigs, 1);
	assert_string_equal(m->migconfigs[0].name, "good");
	carve_manifests_destroy(m);
}

static void mp_version(void **state)
{
	struct carve_manifests *m = load_named("mig.yaml",
		"version: v2\n"
		"mig-configs: {a: [{devices: all, mig-enabled: false}]}\n"
		"---\n"
		"version: v1\n"
		"mig-configs: {}\n");

	(void)state;
	tu_assert_error(m, 1, 10, "mig-parted config: version: unsupported version 'v2' (expected v1)");
	tu_assert_error(m, 5, 14,
			"mig-parted config: mig-configs: expected a mapping of config names to lists, "
			"got an empty mapping");
	assert_int_equal(m->diags.n, 2);
	assert_int_equal(m->nmigconfigs, 0);
	carve_manifests_destroy(m);
}

static void cm_quoted_values(void **state)
{
	/* Escapes move text around in quoted values: every problem inside one
	 * is reported at the value's start, never past the end of the file. */
	struct carve_manifests *m = tu_load(
		"apiVersion: v1\nkind: ConfigMap\n"
		"metadata: {name: cm, namespace: gpu-operator}\n"
		"data:\n"
		"  quoted: \"version: v1\\nsharing:\\n  timeSlicing:\\n    resources:\\n"
		"    - name: nvidia.com/gpu\\n      replicas: 0\\n\"\n"
		"  big: \"version: v1\\nsharing: {timeSlicing: {resources: "
		"[{name: nvidia.com/gpu, replicas: 2000}]}}\"\n"
		"  bad: 'version: v1\n\n    sharing: {timeSlicing: ['\n");

	(void)state;
	tu_assert_error(m, 5, 11, "device-plugin config quoted: sharing.timeSlicing.resources[0]."
			"replicas: replicas must be at least 1");
	tu_assert_error(m, 6, 8, "device-plugin config big: sharing.timeSlicing.resources[0]."
			"replicas: replicas must be at most 1024");
	tu_assert_error(m, 7, 8, "YAML syntax error");
	assert_int_equal(m->diags.n, 3);
	assert_int_equal(dp(m, "quoted")->pos.line, 5);
	assert_int_equal(dp(m, "quoted")->pos.col, 11);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dp_bare),
		cmocka_unit_test(dp_mps_only),
		cmocka_unit_test(dp_mps_mig_refused),
		cmocka_unit_test(dp_bad),
		cmocka_unit_test(dp_version),
		cmocka_unit_test(cm_dpconfig),
		cmocka_unit_test(cm_crlf_and_syntax),
		cmocka_unit_test(cm_bad_shapes),
		cmocka_unit_test(cm_migparted),
		cmocka_unit_test(mp_bare),
		cmocka_unit_test(mp_bad),
		cmocka_unit_test(mp_version),
		cmocka_unit_test(cm_quoted_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
