/*
 * test_devnames.c - carve's own device resource names (carve.dev/gpu,
 * carve.dev/gpu.shared, carve.dev/mig-<profile> with "+me" spelled ".me"):
 * what each name means in the one resource table, bad spellings refused
 * with a message that says how to write them, Nodes advertising them
 * built into the inventory, and pods placed only on nodes that serve the
 * names they ask for, by the scheduler's plan and by `carve admit`.
 * Fixtures: tests/data/devnames/ (nodes.yaml, then one file of pods).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "carve/admission.h"
#include "carve/devices.h"
#include "carve/inventory.h"
#include "carve/mig.h"
#include "carve/place.h"
#include "carve/plan.h"
#include "carve/resource.h"

/* 2026-01-01T00:01:00Z: a minute after the fixtures' pods were created. */
#define NOW 1767225660

static struct carve_manifests *load(const char *first, ...)
{
	const char *dir = getenv("CARVE_TEST_DATA");
	struct carve_manifests *m = carve_manifests_create();
	const char *f;
	va_list ap;
	char path[1024];

	assert_non_null(dir);
	assert_non_null(m);
	va_start(ap, first);
	for (f = first; f; f = va_arg(ap, const char *)) {
		snprintf(path, sizeof(path), "%s/devnames/%s.yaml", dir, f);
		assert_int_equal(carve_manifests_load_path(m, path), 0);
	}
	va_end(ap);
	return m;
}

static void no_errors(const struct carve_manifests *m)
{
	if (m->diags.nerrors)
		carve_diags_print(&m->diags, stderr);
	assert_int_equal(m->diags.nerrors, 0);
}

static struct carve_plan *plan_of(struct carve_manifests *m)
{
	struct carve_plan_opts o;
	struct carve_plan *p = NULL;
	struct carve_error err = {0};

	memset(&o, 0, sizeof(o));
	o.queues = CARVE_QUEUES_NONE;
	o.now = NOW;
	assert_int_equal(carve_plan_build(m, &o, NULL, &p, &err), 0);
	assert_non_null(p);
	return p;
}

static const struct carve_plan_bind *bind_of(const struct carve_plan *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->nbinds; i++)
		if (!strcmp(p->binds[i].pod.name, name))
			return &p->binds[i];
	return NULL;
}

static bool pending(const struct carve_plan *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->npending; i++)
		if (!strcmp(p->pending[i].pod.name, name))
			return true;
	return false;
}

/* The node pod name was bound to; fails when it was not bound. */
static const char *node_of(const struct carve_plan *p, const char *name)
{
	const struct carve_plan_bind *b = bind_of(p, name);

	if (!b)
		fail_msg("pod %s was not bound", name);
	return b->node;
}

static bool one_of(const char *s, const char *a, const char *b)
{
	return !strcmp(s, a) || (b && !strcmp(s, b));
}

/* ---- the resource table ---- */

static void test_kinds(void **state)
{
	static const struct {
		const char *name;
		enum carve_res_kind kind;
		enum carve_res_family fam;
		const char *prof;
		const char *twin; /* in the other family; NULL none */
	} cases[] = {
		{"carve.dev/gpu", CARVE_RK_GPU_WHOLE, CARVE_RF_CARVE, NULL, "nvidia.com/gpu"},
		{"carve.dev/gpu.shared", CARVE_RK_REPLICA, CARVE_RF_CARVE, NULL,
		 "nvidia.com/gpu.shared"},
		{"carve.dev/mig-1g.10gb", CARVE_RK_MIG, CARVE_RF_CARVE, "1g.10gb",
		 "nvidia.com/mig-1g.10gb"},
		{"carve.dev/mig-1g.10gb.me", CARVE_RK_MIG, CARVE_RF_CARVE, "1g.10gb.me",
		 "nvidia.com/mig-1g.10gb.me"},
		{"nvidia.com/gpu", CARVE_RK_GPU, CARVE_RF_NVIDIA, NULL, "carve.dev/gpu"},
		{"nvidia.com/gpu.shared", CARVE_RK_REPLICA, CARVE_RF_NVIDIA, NULL,
		 "carve.dev/gpu.shared"},
		{"nvidia.com/mig-1g.10gb+me", CARVE_RK_MIG, CARVE_RF_NVIDIA, "1g.10gb+me",
		 "carve.dev/mig-1g.10gb.me"},
		{"carve.dev/mig-memory-slices", CARVE_RK_MIG_MEMORY_SLICES, CARVE_RF_NONE, NULL, NULL},
		{"carve.dev/mig-compute-slices", CARVE_RK_MIG_COMPUTE_SLICES, CARVE_RF_NONE, NULL,
		 NULL},
		{"carve.dev/mig-1g.10gb+me", CARVE_RK_OTHER, CARVE_RF_NONE, NULL, NULL},
		{"carve.dev/gpus", CARVE_RK_OTHER, CARVE_RF_NONE, NULL, NULL},
		{"carve.dev/mig-", CARVE_RK_OTHER, CARVE_RF_NONE, NULL, NULL},
		{"cpu", CARVE_RK_CPU, CARVE_RF_NONE, NULL, NULL},
	};
	size_t i;
	char buf[128];

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *prof = NULL;
		enum carve_res_family other = cases[i].fam == CARVE_RF_CARVE ? CARVE_RF_NVIDIA
									: CARVE_RF_CARVE;

		assert_int_equal(carve_res_kind(cases[i].name, &prof), cases[i].kind);
		assert_int_equal(carve_res_family(cases[i].name), cases[i].fam);
		if (cases[i].prof)
			assert_string_equal(prof, cases[i].prof);
		else
			assert_null(prof);
		if (cases[i].twin) {
			assert_int_equal(carve_res_twin(cases[i].name, other, buf, sizeof(buf)), 0);
			assert_string_equal(buf, cases[i].twin);
		} else {
			assert_int_equal(carve_res_twin(cases[i].name, other, buf, sizeof(buf)),
					 CARVE_EINVAL);
		}
	}
	assert_true(carve_res_is_gpu_device("carve.dev/gpu"));
	assert_true(carve_res_is_gpu_device("carve.dev/mig-3g.40gb"));
	assert_false(carve_res_is_gpu_device("carve.dev/mig-memory-slices"));
	assert_int_equal(carve_res_greq(carve_res_kind("carve.dev/gpu", NULL)), CARVE_GREQ_WHOLE);
	assert_int_equal(carve_res_twin("carve.dev/mig-1g.10gb.me", CARVE_RF_NVIDIA, buf, 10),
			 CARVE_ERANGE);
}

/* A profile's '+' may be spelled '.'; nothing else is loosened. */
static void test_profile_find(void **state)
{
	const struct carve_mig_model *mm = carve_mig_model_find("NVIDIA-A100-SXM4-80GB");
	int p;

	(void)state;
	assert_non_null(mm);
	p = carve_mig_profile_find(mm, "1g.10gb+me");
	assert_true(p >= 0);
	assert_int_equal(carve_mig_profile_find(mm, "1g.10gb.me"), p);
	assert_true(carve_mig_profile_find(mm, "1g.10gb") != p);
	assert_int_equal(carve_mig_profile_find(mm, "1g.10gb.m"), -1);
	assert_int_equal(carve_mig_profile_find(mm, "1g+10gb"), -1);
	assert_int_equal(carve_mig_profile_find(mm, "1g.10gb.me.me"), -1);
}

static void expect_msg(const char *name, const char *want)
{
	struct carve_error err = {0};

	assert_int_equal(carve_res_check_name(name, &err), CARVE_EINVAL);
	if (!strstr(err.text, want))
		fail_msg("%s: message \"%s\" lacks \"%s\"", name, err.text, want);
}

static void test_bad_spellings(void **state)
{
	struct carve_error err = {0};

	(void)state;
	expect_msg("carve.dev/mig-1g.10gb+me", "spell the profile's '+me' as '.me' "
		   "(carve.dev/mig-1g.10gb.me)");
	expect_msg("carve.dev/gpus", "resource carve.dev/gpus is not one of carve's device names");
	expect_msg("carve.dev/gpu.share", "carve.dev/gpu.shared");
	expect_msg("carve.dev/mig-1x.foo", "'1x.foo' is not a MIG profile name");
	assert_int_equal(carve_res_check_name("carve.dev/gpu", &err), 0);
	assert_int_equal(carve_res_check_name("carve.dev/gpu.shared", &err), 0);
	assert_int_equal(carve_res_check_name("carve.dev/mig-2g.20gb", &err), 0);
	assert_int_equal(carve_res_check_name("carve.dev/mig-memory-slices", &err), 0);
	assert_int_equal(carve_res_check_name("example.com/gpus", &err), 0);
	assert_int_equal(carve_res_check_name("nvidia.com/gpu", &err), 0);
}

/* ---- the inventory ---- */

static int node_id(const struct carve_inventory *inv, const char *name)
{
	int id = carve_cluster_find_node(inv->cluster, name);

	assert_true(id >= 0);
	return id;
}

static void test_inventory(void **state)
{
	struct carve_manifests *m = load("nodes", NULL);
	struct carve_inventory *inv;
	const struct carve_node *n;
	int64_t pp;
	int id;

	(void)state;
	inv = carve_inventory_build(m);
	assert_non_null(inv);
	no_errors(m);

	id = node_id(inv, "cv-0"); /* no gpu.count label: counted from carve.dev/gpu */
	n = carve_cluster_node(inv->cluster, (uint32_t)id);
	assert_int_equal(n->ngpus, 2);
	assert_string_equal(carve_node_label(n, CARVE_DEVICE_NAMES_LABEL), "carve");
	assert_int_equal(carve_inventory_node_res(inv, (uint32_t)id, "carve.dev/gpu", &pp), 2);
	assert_int_equal(carve_inventory_node_res(inv, (uint32_t)id, "nvidia.com/gpu", &pp), 0);

	id = node_id(inv, "both-0");
	n = carve_cluster_node(inv->cluster, (uint32_t)id);
	assert_int_equal(n->ngpus, 2); /* the same GPUs under two names: not 4 */
	assert_string_equal(carve_node_label(n, CARVE_DEVICE_NAMES_LABEL), "both");
	assert_int_equal(carve_inventory_node_res(inv, (uint32_t)id, "carve.dev/gpu", &pp), 2);
	assert_int_equal(carve_inventory_node_res(inv, (uint32_t)id, "nvidia.com/gpu", &pp), 2);

	id = node_id(inv, "nv-0");
	n = carve_cluster_node(inv->cluster, (uint32_t)id);
	assert_null(carve_node_label(n, CARVE_DEVICE_NAMES_LABEL));
	assert_int_equal(carve_inventory_node_res(inv, (uint32_t)id, "nvidia.com/gpu", &pp), 2);

	id = node_id(inv, "cmig-0");
	n = carve_cluster_node(inv->cluster, (uint32_t)id);
	assert_int_equal(n->ngpus, 1);
	assert_int_equal(carve_cluster_gpu(inv->cluster, n->gpu_first)->sharing, CARVE_SHARE_MIG);
	assert_int_equal(carve_inventory_node_res(inv, (uint32_t)id, "carve.dev/mig-1g.10gb", &pp),
			 6);
	assert_int_equal(carve_inventory_node_res(inv, (uint32_t)id, "carve.dev/mig-1g.10gb.me",
						  &pp), 1);
	assert_int_equal(carve_inventory_node_res(inv, (uint32_t)id, "nvidia.com/mig-1g.10gb",
						  &pp), 0);

	id = node_id(inv, "nvmig-0"); /* NVIDIA's names with ".me" read too */
	n = carve_cluster_node(inv->cluster, (uint32_t)id);
	assert_int_equal(carve_cluster_gpu(inv->cluster, n->gpu_first)->sharing, CARVE_SHARE_MIG);
	assert_int_equal(carve_inventory_node_res(inv, (uint32_t)id, "nvidia.com/mig-1g.10gb+me",
						  &pp), 1);
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
}

/* ---- placement by the scheduler's plan ---- */

/* carve.dev pods land on carve-serving nodes only; nv-0 stays idle. */
static void test_carve_only(void **state)
{
	struct carve_manifests *m = load("nodes", "carve", NULL);
	struct carve_plan *p = plan_of(m);

	(void)state;
	no_errors(m);
	assert_int_equal(p->nbinds, 2);
	assert_true(one_of(node_of(p, "c-0"), "cv-0", "both-0"));
	assert_true(one_of(node_of(p, "c-1"), "cv-0", "both-0"));
	assert_string_not_equal(node_of(p, "c-0"), node_of(p, "c-1"));
	assert_true(pending(p, "c-2"));
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* nvidia.com pods keep off carve-only nodes: they take nv-0 and both-0,
 * and of the carve.dev pods one gets cv-0, the other waits. */
static void test_mixed(void **state)
{
	struct carve_manifests *m = load("nodes", "mixed", NULL);
	struct carve_plan *p = plan_of(m);
	struct carve_devref d[CARVE_DEVREF_MAX];
	struct carve_error err = {0};
	const char *c0, *c1;

	(void)state;
	no_errors(m);
	assert_true(one_of(node_of(p, "n-0"), "nv-0", "both-0"));
	assert_true(one_of(node_of(p, "n-1"), "nv-0", "both-0"));
	assert_string_not_equal(node_of(p, "n-0"), node_of(p, "n-1"));
	c0 = bind_of(p, "c-0") ? "c-0" : "c-1";
	c1 = c0[2] == '0' ? "c-1" : "c-0";
	assert_string_equal(node_of(p, c0), "cv-0");
	assert_true(pending(p, c1));
	/* whole GPUs: two devices, no MIG, replica or fraction */
	assert_int_equal(carve_devices_parse(bind_of(p, c0)->devices, d, CARVE_DEVREF_MAX, &err),
			 2);
	assert_int_equal(d[0].mig_start, -1);
	assert_int_equal(d[0].replica, -1);
	assert_int_equal(d[1].milli, 0);
	assert_int_not_equal(d[0].gpu, d[1].gpu);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* 1g.10gb+me spelled .me under both families: each pod on its family's
 * MIG node (the second carve.dev pod waits rather than take NVIDIA's
 * instance), and the carve.dev/devices annotations name the same instance. */
static void test_mig_me(void **state)
{
	struct carve_manifests *m = load("nodes", "mig", NULL);
	struct carve_plan *p = plan_of(m);
	struct carve_devref a[CARVE_DEVREF_MAX], b[CARVE_DEVREF_MAX];
	struct carve_error err = {0};

	(void)state;
	no_errors(m);
	assert_string_equal(node_of(p, "m-carve"), "cmig-0");
	assert_string_equal(node_of(p, "m-nv"), "nvmig-0");
	assert_true(pending(p, "m-carve-2")); /* one +me per GPU; nvmig-0's is NVIDIA's */
	assert_int_equal(carve_devices_parse(bind_of(p, "m-carve")->devices, a, CARVE_DEVREF_MAX,
					     &err), 1);
	assert_int_equal(carve_devices_parse(bind_of(p, "m-nv")->devices, b, CARVE_DEVREF_MAX,
					     &err), 1);
	assert_string_equal(a[0].mig_profile, "1g.10gb+me");
	assert_string_equal(a[0].mig_profile, b[0].mig_profile);
	assert_int_equal(a[0].gpu, b[0].gpu);
	assert_int_equal(a[0].mig_start, b[0].mig_start);
	assert_true(a[0].mig_start >= 0);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* A NodePool labelled carve.dev/device-names: carve serves carve's names
 * only; the unlabelled pool NVIDIA's. */
static void test_pools(void **state)
{
	struct carve_manifests *m = load("pools", "poolpods", NULL);
	struct carve_plan *p = plan_of(m);

	(void)state;
	no_errors(m);
	assert_string_equal(node_of(p, "n-0"), "npool-0");
	assert_true(one_of(node_of(p, bind_of(p, "c-0") ? "c-0" : "c-1"), "cpool-0", NULL));
	assert_int_equal(p->nbinds, 2);
	assert_true(pending(p, "c-0") || pending(p, "c-1"));
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* No node serves carve's names: a carve.dev pod waits, and says why. */
static void test_no_carve_nodes(void **state)
{
	struct carve_manifests *m = load("npool", "carve", NULL);
	struct carve_plan *p = plan_of(m);
	size_t i;

	(void)state;
	no_errors(m);
	assert_int_equal(p->nbinds, 0);
	assert_int_equal(p->npending, 3);
	for (i = 0; i < p->npending; i++)
		if (!strstr(p->pending[i].message, "keeps it on nodes serving the device names "
			    "it asks for (carve.dev/device-names)"))
			fail_msg("pending message: %s", p->pending[i].message);
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

static bool has_diag(const struct carve_manifests *m, const char *a, const char *b)
{
	size_t i;

	for (i = 0; i < m->diags.n; i++)
		if (strstr(m->diags.v[i].msg, a) && strstr(m->diags.v[i].msg, b))
			return true;
	return false;
}

/* Misspelled names: an error naming the pod and the resource; not bound. */
static void test_bad_pods(void **state)
{
	struct carve_manifests *m = load("nodes", "bad", NULL);
	struct carve_plan *p = plan_of(m);

	(void)state;
	assert_int_equal(p->nbinds, 0);
	if (!has_diag(m, "bad-plus", "spell the profile's '+me' as '.me'") ||
	    !has_diag(m, "bad-name", "carve.dev/gpus is not one of carve's device names") ||
	    !has_diag(m, "bad-prof", "'1x.foo' is not a MIG profile name")) {
		carve_diags_print(&m->diags, stderr);
		fail();
	}
	carve_plan_free(p);
	carve_manifests_destroy(m);
}

/* ---- carve admit ---- */

static const char *pod_node(json_t *res, size_t wl, size_t pod)
{
	json_t *w = json_array_get(json_object_get(res, "admitted"), wl);
	json_t *ps = json_array_get(json_object_get(w, "podSets"), 0);
	json_t *pd = json_array_get(json_object_get(ps, "pods"), pod);

	assert_non_null(pd);
	return json_string_value(json_object_get(pd, "node"));
}

static void test_admit_json(void **state)
{
	struct carve_manifests *m = load("nodes", "admit", NULL);
	struct carve_admission *ad;
	json_t *res, *adm, *w;
	const char *a, *b;
	int i;

	(void)state;
	no_errors(m);
	ad = carve_admission_build(m);
	assert_non_null(ad);
	no_errors(m);
	for (i = 0; i < 3; i++) /* one head per ClusterQueue and cycle */
		assert_true(carve_adm_cycle(ad->adm, ad->now) >= 0);
	res = carve_admission_result_json(ad);
	assert_non_null(res);
	adm = json_object_get(res, "admitted");
	if (json_array_size(adm) != 2) {
		char *s = json_dumps(res, JSON_INDENT(1));

		fprintf(stderr, "%s\n", s);
		free(s);
		fail();
	}
	w = json_array_get(adm, 0);
	assert_string_equal(json_string_value(json_object_get(w, "workload")), "ns/wl-carve");
	assert_string_equal(json_string_value(json_object_get(json_object_get(
				    json_array_get(json_object_get(w, "podSets"), 0), "flavors"),
				    "carve.dev/gpu")), "default");
	a = pod_node(res, 0, 0);
	b = pod_node(res, 0, 1);
	assert_true(one_of(a, "cv-0", "both-0"));
	assert_true(one_of(b, "cv-0", "both-0"));
	assert_string_not_equal(a, b);
	assert_string_equal(json_string_value(json_object_get(json_array_get(adm, 1), "workload")),
			    "ns/wl-nvidia");
	assert_string_equal(pod_node(res, 1, 0), "nv-0");
	json_decref(res);
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_profile_find),
		cmocka_unit_test(test_bad_spellings),
		cmocka_unit_test(test_inventory),
		cmocka_unit_test(test_carve_only),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_mig_me),
		cmocka_unit_test(test_pools),
		cmocka_unit_test(test_no_carve_nodes),
		cmocka_unit_test(test_bad_pods),
		cmocka_unit_test(test_admit_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
