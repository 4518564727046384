/*
 * test_kueue_config.c - the Kueue Configuration reader
 * (load_kueue_config.c) and what the bridge does with it: both API
 * versions, the fields carve models type-checked at their line and
 * column, every other field accepted unread, one Configuration per input,
 * and fair sharing, strategies and gates reaching the engine.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "testutil.h"

#include "carve/admission.h"

static void test_v1beta1_fields(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: config.kueue.x-k8s.io/v1beta1\n"
		"kind: Configuration\n"
		"namespace: kueue-system\n"
		"health:\n"
		"  healthProbeBindAddress: :8081\n"
		"waitForPodsReady: {enable: true, timeout: 5m}\n"
		"fairSharing:\n"
		"  enable: true\n"
		"  preemptionStrategies: [LessThanInitialShare]\n"
		"featureGates:\n"
		"  FairSharingPreemptWithinNominal: false\n"
		"  TopologyAwareScheduling: true\n");
	const struct carve_mf_kueue_config *c;

	(void)state;
	tu_assert_clean(m);
	assert_int_equal(m->nkueue_configs, 1);
	c = &m->kueue_configs[0];
	assert_true(c->fair_sharing);
	assert_int_equal(c->nstrategies, 1);
	assert_int_equal(c->strategies[0], CARVE_MF_FS_LT_INITIAL_SHARE);
	assert_int_equal(c->gate_preempt_within_nominal, 0);
	assert_int_equal(c->gate_prioritize_non_borrowing, -1);
	carve_manifests_destroy(m);
}

static void test_enable_by_version(void **state)
{
	struct carve_manifests *m;

	(void)state;
	/* v1beta1: fairSharing without enable is off */
	m = tu_load("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
		    "fairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare]\n");
	tu_assert_clean(m);
	assert_false(m->kueue_configs[0].fair_sharing);
	carve_manifests_destroy(m);
	/* v1beta2: the section turns it on; Disabled turns it off */
	m = tu_load("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
		    "fairSharing: {}\n");
	tu_assert_clean(m);
	assert_true(m->kueue_configs[0].fair_sharing);
	assert_int_equal(m->kueue_configs[0].nstrategies, 0);
	carve_manifests_destroy(m);
	m = tu_load("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
		    "fairSharing:\n  enable: Disabled\n");
	tu_assert_clean(m);
	assert_false(m->kueue_configs[0].fair_sharing);
	carve_manifests_destroy(m);
	/* no fairSharing at all: off */
	m = tu_load("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
		    "manageJobsWithoutQueueName: true\n");
	tu_assert_clean(m);
	assert_false(m->kueue_configs[0].fair_sharing);
	carve_manifests_destroy(m);
}

static void test_bad_fields(void **state)
{
	struct carve_manifests *m = tu_load(
		"apiVersion: config.kueue.x-k8s.io/v1beta1\n"
		"kind: Configuration\n"
		"fairSharing:\n"
		"  enable: maybe\n"
		"  preemptionStrategies: [LessThanFinalShare]\n"
		"  weight: 2\n"
		"featureGates:\n"
		"  FairSharingPrioritizeNonBorrowing: sometimes\n"
		"---\n"
		"apiVersion: config.kueue.x-k8s.io/v1beta1\n"
		"kind: Configuration\n"
		"fairSharing:\n"
		"  preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]\n"
		"---\n"
		"apiVersion: config.kueue.x-k8s.io/v1beta1\n"
		"kind: Configuration\n"
		"fairSharing:\n"
		"  preemptionStrategies: {a: b}\n"
		"featureGates: [FairSharingPreemptWithinNominal]\n");

	(void)state;
	tu_assert_error(m, 4, 11, "Configuration: fairSharing.enable: expected true or false, got 'maybe'");
	tu_assert_error(m, 5, 26, "unknown value 'LessThanFinalShare'");
	tu_assert_error(m, 6, 3, "weight");
	tu_assert_error(m, 8, 38, "featureGates.FairSharingPrioritizeNonBorrowing: expected true or false");
	tu_assert_error(m, 11, 7, "a second Kueue Configuration (the first is at t.yaml:2)");
	tu_assert_error(m, 16, 7, "a second Kueue Configuration");
	assert_int_equal(m->nkueue_configs, 1);
	carve_manifests_destroy(m);

	/* the order rule and the shapes, each in a Configuration of its own */
	m = tu_load("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
		    "fairSharing:\n"
		    "  preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]\n");
	tu_assert_error(m, 4, 25, "two strategies must be LessThanOrEqualToFinalShare then "
				  "LessThanInitialShare");
	carve_manifests_destroy(m);
	m = tu_load("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
		    "fairSharing:\n  preemptionStrategies: []\n"
		    "featureGates: [FairSharingPreemptWithinNominal]\n");
	tu_assert_error(m, 4, 25, "must list at least one strategy");
	tu_assert_error(m, 5, 15, "featureGates: expected a mapping of feature gate names");
	carve_manifests_destroy(m);
	m = tu_load("apiVersion: config.kueue.x-k8s.io/v1alpha1\nkind: Configuration\n");
	tu_assert_error(m, 1, 13, "Configuration: unsupported apiVersion");
	carve_manifests_destroy(m);
}

/* A minimal cohort for the bridge tests. */
static const char *const queues =
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
	"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: a}\n"
	"spec:\n  cohortName: c\n  resourceGroups:\n  - coveredResources: [cpu]\n"
	"    flavors:\n    - name: f\n      resources:\n      - {name: cpu, nominalQuota: '1'}\n";

static struct carve_admission *build(const char *config, struct carve_manifests **mp)
{
	char buf[4096];
	struct carve_manifests *m;
	struct carve_admission *ad;

	snprintf(buf, sizeof(buf), "%s%s", queues, config);
	m = tu_load(buf);
	tu_assert_clean(m);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	tu_assert_clean(m);
	*mp = m;
	return ad;
}

static void test_bridge(void **state)
{
	struct carve_manifests *m;
	struct carve_admission *ad;

	(void)state;
	ad = build("", &m);
	assert_false(carve_adm_fair_sharing(ad->adm)); /* no Configuration: off */
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
	ad = build("---\napiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
		   "fairSharing: {enable: true}\n", &m);
	assert_true(carve_adm_fair_sharing(ad->adm));
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
	ad = build("---\napiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
		   "fairSharing: {enable: false}\n", &m);
	assert_false(carve_adm_fair_sharing(ad->adm));
	/* --fair-sharing (carve admit) turns it on over a Configuration's false */
	carve_adm_set_fair_sharing(ad->adm, true);
	assert_true(carve_adm_fair_sharing(ad->adm));
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

static void test_engine_strategies(void **state)
{
	struct carve_adm *a = carve_adm_create();
	enum carve_fs_strategy both[2] = {CARVE_FS_LE_FINAL_SHARE, CARVE_FS_LT_INITIAL_SHARE};
	enum carve_fs_strategy wrong[2] = {CARVE_FS_LT_INITIAL_SHARE, CARVE_FS_LE_FINAL_SHARE};

	(void)state;
	assert_non_null(a);
	assert_int_equal(carve_adm_set_fair_strategies(a, both, 2), 0);
	assert_int_equal(carve_adm_set_fair_strategies(a, both + 1, 1), 0);
	assert_int_equal(carve_adm_set_fair_strategies(a, wrong, 2), CARVE_EINVAL);
	assert_int_equal(carve_adm_set_fair_strategies(a, both, 0), CARVE_EINVAL);
	assert_int_equal(carve_adm_set_fair_strategies(a, both, 3), CARVE_EINVAL);
	carve_adm_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1beta1_fields),
		cmocka_unit_test(test_enable_by_version),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_bridge),
		cmocka_unit_test(test_engine_strategies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
