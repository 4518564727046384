/*
 * test_podreq.c - a podSet's placement request (carve_pod_req_of: the one
 * mapping from resource names to GPU device kinds) and why a pod fits no
 * node even empty (carve_pod_why_nowhere), stage by stage.
 */
#include "testutil.h"

#include "carve/cluster.h"
#include "carve/mig.h"
#include "carve/place.h"

static void test_req_kinds(void **state)
{
	static const struct carve_req whole[] = {{"cpu", 2000}, {"memory", 1000}, {"nvidia.com/gpu", 2000}};
	static const struct carve_req mig[] = {{"nvidia.com/mig-3g.40gb", 1000},
					       {"carve.dev/mig-memory-slices", 4000}};
	static const struct carve_req shared[] = {{"nvidia.com/gpu.shared", 1000}};
	static const struct carve_req two[] = {{"nvidia.com/gpu", 1000},
					       {"nvidia.com/mig-1g.10gb", 1000}};
	static const struct carve_req part[] = {{"nvidia.com/gpu", 500}};
	struct carve_podset_spec ps;
	struct carve_pod_req r;
	struct carve_error err = {0};

	(void)state;
	memset(&ps, 0, sizeof(ps));
	ps.name = "p";
	ps.nreqs = 3;
	ps.reqs = whole;
	assert_int_equal(carve_pod_req_of(&ps, &r, &err), 0);
	assert_int_equal(r.gpu, CARVE_GREQ_GPU);
	assert_int_equal(r.count, 2);
	assert_int_equal(r.cpu_milli, 2000);
	assert_int_equal(r.memory_milli, 1000);

	ps.nreqs = 2;
	ps.reqs = mig; /* the slice quota is quota only */
	assert_int_equal(carve_pod_req_of(&ps, &r, &err), 0);
	assert_int_equal(r.gpu, CARVE_GREQ_MIG);
	assert_string_equal(r.mig_profile, "3g.40gb");
	assert_int_equal(r.count, 1);

	ps.nreqs = 1;
	ps.reqs = shared;
	assert_int_equal(carve_pod_req_of(&ps, &r, &err), 0);
	assert_int_equal(r.gpu, CARVE_GREQ_REPLICA);

	ps.reqs = NULL;
	ps.nreqs = 0;
	ps.gpu_milli = 250;
	assert_int_equal(carve_pod_req_of(&ps, &r, &err), 0);
	assert_int_equal(r.gpu, CARVE_GREQ_FRACTION);
	assert_int_equal(r.milli, 250);

	/* refusals, with the reason */
	ps.gpu_milli = 0;
	ps.nreqs = 2;
	ps.reqs = two;
	assert_int_equal(carve_pod_req_of(&ps, &r, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "more than one kind of GPU device"));
	ps.nreqs = 1;
	ps.reqs = part;
	assert_int_equal(carve_pod_req_of(&ps, &r, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "whole number of devices"));
	ps.reqs = whole + 2;
	ps.gpu_milli = 500; /* a whole GPU and a fraction */
	assert_int_equal(carve_pod_req_of(&ps, &r, &err), CARVE_EINVAL);
}

/* Nodes a (one exclusive L40S), t (one time-sliced L40S, 4 replicas,
 * failRequestsGreaterThanOne), x (like a, tainted gpu=yes:NoSchedule),
 * f (two L40S that take fractions, no cpu in allocatable: unconstrained)
 * and m (one A100-80GB in MIG: 3g.40gb + 3 x 1g.10gb). */
static struct carve_cluster *cluster(void)
{
	static const struct carve_label l_a[] = {{"pool", "a"}};
	static const struct carve_label l_t[] = {{"pool", "t"}};
	static const struct carve_label l_x[] = {{"pool", "x"}};
	static const struct carve_label l_f[] = {{"pool", "f"}};
	static const struct carve_label l_m[] = {{"pool", "m"}};
	static const struct carve_taint_spec taint[] = {{"gpu", "yes", "NoSchedule"}};
	const struct carve_mig_model *a100 = carve_mig_model_find("A100-80GB");
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec ex = {0}, ts, fr[2], mig = {0};
	struct carve_node_spec s;
	int counts[16] = {0};

	assert_non_null(c);
	assert_non_null(a100);
	ex.model = "L40S";
	ex.memory_mib = 46068;
	ex.sharing = CARVE_SHARE_EXCLUSIVE;
	ts = ex;
	ts.sharing = CARVE_SHARE_TIMESLICE;
	ts.replicas = 4;
	ts.fail_gt_one = true;
	fr[0] = ex;
	fr[0].sharing = CARVE_SHARE_FRACTION;
	fr[1] = fr[0];
	mig.model = "A100-80GB";
	mig.memory_mib = 81920;
	mig.sharing = CARVE_SHARE_MIG;
	mig.mig_model = a100;
	counts[carve_mig_profile_find(a100, "3g.40gb")] = 1;
	counts[carve_mig_profile_find(a100, "1g.10gb")] = 3;
	assert_int_equal(carve_mig_layout_from_counts(a100, counts, &mig.mig, NULL), 0);
	memset(&s, 0, sizeof(s));
	s.cpu_milli = 16000;
	s.memory_milli = 64000;
	s.pods = 110;
	s.name = "a";
	s.nlabels = 1;
	s.labels = l_a;
	s.ngpus = 1;
	s.gpus = &ex;
	assert_true(carve_cluster_add_node(c, &s, NULL) >= 0);
	s.name = "t";
	s.labels = l_t;
	s.gpus = &ts;
	assert_true(carve_cluster_add_node(c, &s, NULL) >= 0);
	s.name = "x";
	s.labels = l_x;
	s.gpus = &ex;
	s.ntaints = 1;
	s.taints = taint;
	assert_true(carve_cluster_add_node(c, &s, NULL) >= 0);
	s.ntaints = 0;
	s.taints = NULL;
	s.name = "f";
	s.labels = l_f;
	s.cpu_milli = 0;
	s.ngpus = 2;
	s.gpus = fr;
	assert_true(carve_cluster_add_node(c, &s, NULL) >= 0);
	s.cpu_milli = 16000;
	s.name = "m";
	s.labels = l_m;
	s.ngpus = 1;
	s.gpus = &mig;
	assert_true(carve_cluster_add_node(c, &s, NULL) >= 0);
	return c;
}

#define WHY(c, r) carve_pod_why_nowhere((c), &(r), buf, sizeof(buf))

static void test_why_nowhere(void **state)
{
	static const struct carve_label sel_none[] = {{"pool", "nope"}};
	static const struct carve_label sel_x[] = {{"pool", "x"}};
	static const struct carve_label sel_a[] = {{"pool", "a"}};
	static const struct carve_label sel_f[] = {{"pool", "f"}};
	static const struct carve_label sel_m[] = {{"pool", "m"}};
	struct carve_cluster *c = cluster();
	struct carve_pod_req r;
	char buf[256];

	(void)state;
	memset(&r, 0, sizeof(r));
	r.gpu = CARVE_GREQ_GPU;
	r.count = 1;
	assert_null(WHY(c, r));

	/* selector, then taints */
	r.nselector = 1;
	r.selector = sel_none;
	assert_non_null(strstr(WHY(c, r), "no node matches its nodeSelector"));
	r.selector = sel_x;
	assert_non_null(strstr(WHY(c, r), "taint it does not tolerate (gpu=yes:NoSchedule)"));

	/* fractions: not on the exclusive node, yes on f; memory must exist */
	r.selector = sel_a;
	r.gpu = CARVE_GREQ_FRACTION;
	r.count = 0;
	r.milli = 500;
	assert_non_null(strstr(WHY(c, r), "takes fractions"));
	r.selector = sel_f;
	assert_null(WHY(c, r));
	r.milli = 0;
	r.mem_mib = 100000;
	assert_non_null(strstr(WHY(c, r), "has 100000 MiB"));
	r.mem_mib = 0;

	/* replicas: failRequestsGreaterThanOne refuses two per pod */
	r.nselector = 0;
	r.gpu = CARVE_GREQ_REPLICA;
	r.count = 2;
	assert_non_null(strstr(WHY(c, r), "failRequestsGreaterThanOne"));
	r.count = 1;
	assert_null(WHY(c, r));

	/* MIG: the instances the layout has count, not GPUs */
	r.gpu = CARVE_GREQ_MIG;
	r.mig_profile = "1g.10gb";
	r.count = 2;
	assert_null(WHY(c, r));
	r.count = 8; /* more than one A100 can ever hold */
	assert_non_null(strstr(WHY(c, r), "8 of the devices"));
	r.count = 1;
	r.mig_profile = "7g.80gb"; /* not in the layout: a repartition could make it */
	assert_null(WHY(c, r));
	r.nselector = 1;
	r.selector = sel_a;
	assert_non_null(strstr(WHY(c, r), "offers profile 7g.80gb"));
	r.selector = sel_m;
	r.gpu = CARVE_GREQ_GPU; /* nvidia.com/gpu is never served by a MIG GPU */
	assert_non_null(strstr(WHY(c, r), "outside MIG"));

	/* device counts for nvidia.com/gpu and whole GPUs */
	r.nselector = 0;
	r.count = 3; /* f has two GPUs, the time-sliced t serves one per pod */
	assert_non_null(strstr(WHY(c, r), "3 of the devices"));
	r.gpu = CARVE_GREQ_WHOLE;
	r.count = 2;
	assert_null(WHY(c, r)); /* f */

	/* cpu: f's allocatable 0 is no limit, so only f can take 32 cpus */
	r.count = 1;
	r.cpu_milli = 32000;
	assert_null(WHY(c, r));
	r.nselector = 1;
	r.selector = sel_a;
	assert_non_null(strstr(WHY(c, r), "cpu and memory of one pod"));
	carve_cluster_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_kinds),
		cmocka_unit_test(test_why_nowhere),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
