/*
 * test_cluster.c - the cluster model: adding nodes copies the spec, ids are
 * dense, bad GPUs are refused without side effects, units per sharing mode,
 * the time-slice replica cap, lookups by name through the hash index.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "carve/cluster.h"

static void add_and_view(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_label labels[] = {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}};
	struct carve_gpu_spec gpus[2];
	struct carve_node_spec s;
	struct carve_error err;
	const struct carve_mig_model *mm = carve_mig_model_find("A100-80GB");
	char *name = strdup("node-0");
	const struct carve_node *n;
	const struct carve_gpu *g;
	int p3 = carve_mig_profile_find(mm, "3g.40gb");

	(void)state;
	assert_non_null(c);
	memset(gpus, 0, sizeof(gpus));
	gpus[0].model = "A100-80GB";
	gpus[0].sharing = CARVE_SHARE_MIG;
	gpus[0].mig_model = mm;
	assert_int_equal(carve_mig_layout_add(mm, &gpus[0].mig, p3, 0), 0);
	assert_int_equal(carve_mig_layout_add(mm, &gpus[0].mig, p3, 4), 0);
	gpus[1].model = "A100-80GB";
	gpus[1].sharing = CARVE_SHARE_TIMESLICE;
	gpus[1].replicas = 4;
	memset(&s, 0, sizeof(s));
	s.name = name;
	s.labels = labels;
	s.nlabels = 1;
	s.gpus = gpus;
	s.ngpus = 2;
	s.cpu_milli = 64000;
	assert_int_equal(carve_cluster_add_node(c, &s, &err), 0);
	free(name); /* the cluster keeps its own copy */
	n = carve_cluster_node(c, 0);
	assert_string_equal(n->name, "node-0");
	assert_string_equal(carve_node_label(n, "nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-80GB");
	assert_null(carve_node_label(n, "missing"));
	assert_int_equal(n->ngpus, 2);
	g = carve_cluster_gpu(c, n->gpu_first);
	assert_int_equal(carve_gpu_units(g), 2);
	assert_int_equal(carve_gpu_units(carve_cluster_gpu(c, n->gpu_first + 1)), 4);
	assert_int_equal(carve_cluster_find_node(c, "node-0"), 0);
	assert_int_equal(carve_cluster_find_node(c, "nope"), CARVE_ENOTFOUND);
	assert_null(carve_cluster_node(c, 1));

	/* Same name again: refused, nothing added. */
	s.name = "node-0";
	assert_int_equal(carve_cluster_add_node(c, &s, &err), CARVE_EEXISTS);
	assert_int_equal(carve_cluster_node_count(c), 1);
	carve_cluster_destroy(c);
}

static void bad_gpus_refused(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	const struct carve_mig_model *mm = carve_mig_model_find("H100-80GB");
	struct carve_gpu_spec g;
	struct carve_node_spec s;
	struct carve_error err;

	(void)state;
	memset(&g, 0, sizeof(g));
	memset(&s, 0, sizeof(s));
	s.name = "n";
	s.gpus = &g;
	s.ngpus = 1;

	g.sharing = CARVE_SHARE_MIG; /* no MIG model: an L40S, say */
	g.model = "L40S";
	assert_int_equal(carve_cluster_add_node(c, &s, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "MIG on a GPU model without MIG (L40S)"));

	g.mig_model = mm; /* overlapping instances */
	g.mig.n = 2;
	g.mig.inst[0].profile = (uint8_t)carve_mig_profile_find(mm, "3g.40gb");
	g.mig.inst[0].start = 0;
	g.mig.inst[1].profile = (uint8_t)carve_mig_profile_find(mm, "1g.10gb");
	g.mig.inst[1].start = 2;
	assert_int_equal(carve_cluster_add_node(c, &s, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "overlaps"));

	memset(&g, 0, sizeof(g));
	g.sharing = CARVE_SHARE_TIMESLICE; /* zero replicas */
	assert_int_equal(carve_cluster_add_node(c, &s, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "at least 1 replica"));

	/* Replicas are 32-bit now (no silent uint16 wrap): 65536 is refused by
	 * the cap, not read as 0; the cap itself is fine. */
	g.replicas = 65536;
	assert_int_equal(carve_cluster_add_node(c, &s, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "at most 1024 replicas"));
	g.replicas = CARVE_TIMESLICE_MAX_REPLICAS;
	s.name = "ts";
	assert_int_equal(carve_cluster_add_node(c, &s, &err), 0);
	assert_int_equal(carve_gpu_units(carve_cluster_gpu(c, 0)), 1024);
	carve_cluster_destroy(c);
	c = carve_cluster_create();

	s.name = "";
	assert_int_equal(carve_cluster_add_node(c, &s, &err), CARVE_EINVAL);
	assert_int_equal(carve_cluster_node_count(c), 0);
	assert_int_equal(carve_cluster_gpu_count(c), 0);
	carve_cluster_destroy(c);
	carve_cluster_destroy(NULL);
}

static void many_nodes_dense_ids(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[8];
	struct carve_node_spec s;
	char name[32];
	int i;

	(void)state;
	memset(g, 0, sizeof(g));
	memset(&s, 0, sizeof(s));
	s.gpus = g;
	s.ngpus = 8;
	s.name = name;
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(carve_cluster_add_node(c, &s, NULL), i);
	}
	assert_int_equal(carve_cluster_gpu_count(c), 4000);
	assert_int_equal(carve_cluster_node(c, 499)->gpu_first, 499 * 8);
	assert_int_equal(carve_cluster_gpu(c, 3999)->node, 499);
	assert_int_equal(carve_cluster_gpu(c, 3999)->index, 7);
	assert_string_equal(carve_sharing_name(CARVE_SHARE_FRACTION), "fraction");
	carve_cluster_destroy(c);
}

static void find_by_name_hashed(void **state)
{
	/* Enough nodes to grow the name index several times; every name is
	 * found at its id, a duplicate is refused and leaves nothing behind,
	 * and a failed add does not poison the index. */
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g;
	struct carve_node_spec s;
	struct carve_error err;
	char name[32];
	int i;

	(void)state;
	memset(&g, 0, sizeof(g));
	memset(&s, 0, sizeof(s));
	s.name = name;
	assert_int_equal(carve_cluster_find_node(c, "n0"), CARVE_ENOTFOUND);
	for (i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(carve_cluster_add_node(c, &s, NULL), i);
	}
	for (i = 0; i < 20000; i += 997) {
		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(carve_cluster_find_node(c, name), i);
	}
	assert_int_equal(carve_cluster_find_node(c, "n20000"), CARVE_ENOTFOUND);
	snprintf(name, sizeof(name), "n123");
	assert_int_equal(carve_cluster_add_node(c, &s, &err), CARVE_EEXISTS);
	assert_non_null(strstr(err.text, "node n123 is defined twice"));
	s.name = "bad";
	s.gpus = &g;
	s.ngpus = 1;
	g.sharing = CARVE_SHARE_TIMESLICE; /* 0 replicas: refused */
	assert_int_equal(carve_cluster_add_node(c, &s, &err), CARVE_EINVAL);
	assert_int_equal(carve_cluster_find_node(c, "bad"), CARVE_ENOTFOUND);
	assert_int_equal(carve_cluster_node_count(c), 20000);
	g.replicas = 2;
	assert_int_equal(carve_cluster_add_node(c, &s, &err), 20000);
	assert_int_equal(carve_cluster_find_node(c, "bad"), 20000);
	carve_cluster_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_and_view),
		cmocka_unit_test(bad_gpus_refused),
		cmocka_unit_test(many_nodes_dense_ids),
		cmocka_unit_test(find_by_name_hashed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
