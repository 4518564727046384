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

/* One node: an exclusive and a fraction-capable GPU pool, a MIG node, a
 * time-sliced node with failRequestsGreaterThanOne, a tainted node. */
static struct carve_cluster *cluster(void)
{
	static const struct carve_label l_a[] = {{"pool", "a"}};
	static const struct carve_label l_t[] = {{"pool", "t"}};
	static const struct carve_label l_x[] = {{"pool", "x"}};
	static const struct carve_taint_spec taint[] = {{"gpu", "yes", "NoSchedule"}};
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec ex = {0}, ts = {0};
	struct carve_node_spec s;

	assert_non_null(c);
	ex.model = "L40S";
	ex.memory_mib = 46068;
	ex.sharing = CARVE_SHARE_EXCLUSIVE;
	ts = ex;
	ts.sharing = CARVE_SHARE_TIMESLICE;
	ts.replicas = 4;
	ts.fail_gt_one = true;
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
	return c;
}

static void test_why_nowhere(void **state)
{
	static const struct carve_label sel_none[] = {{"pool", "nope"}};
	static const struct carve_label sel_x[] = {{"pool", "x"}};
	static const struct carve_label sel_a[] = {{"pool", "a"}};
	struct carve_cluster *c = cluster();
	struct carve_pod_req r;
	char buf[256];

	(void)state;
	memset(&r, 0, sizeof(r));
	r.gpu = CARVE_GREQ_GPU;
	r.count = 1;
	assert_null(carve_pod_why_nowhere(c, &r, buf, sizeof(buf)));

	r.nselector = 1;
	r.selector = sel_none;
	assert_non_null(strstr(carve_pod_why_nowhere(c, &r, buf, sizeof(buf)),
			       "no node matches its nodeSelector"));
	r.selector = sel_x;
	assert_non_null(strstr(carve_pod_why_nowhere(c, &r, buf, sizeof(buf)),
			       "taint it does not tolerate (gpu=yes:NoSchedule)"));

	/* fractions: only on GPUs that take them */
	r.selector = sel_a;
	r.gpu = CARVE_GREQ_FRACTION;
	r.count = 0;
	r.milli = 500;
	assert_non_null(strstr(carve_pod_why_nowhere(c, &r, buf, sizeof(buf)),
			       "takes fractions"));

	/* replicas: failRequestsGreaterThanOne refuses two per pod */
	r.nselector = 0;
	r.gpu = CARVE_GREQ_REPLICA;
	r.count = 2;
	assert_non_null(strstr(carve_pod_why_nowhere(c, &r, buf, sizeof(buf)),
			       "failRequestsGreaterThanOne"));
	r.count = 1;
	assert_null(carve_pod_why_nowhere(c, &r, buf, sizeof(buf)));

	r.gpu = CARVE_GREQ_MIG;
	r.mig_profile = "1g.10gb";
	assert_non_null(strstr(carve_pod_why_nowhere(c, &r, buf, sizeof(buf)),
			       "offers profile 1g.10gb"));

	r.gpu = CARVE_GREQ_WHOLE;
	r.count = 2; /* every node has one GPU */
	assert_non_null(strstr(carve_pod_why_nowhere(c, &r, buf, sizeof(buf)),
			       "that many devices"));
	r.count = 1;
	r.cpu_milli = 32000;
	assert_non_null(strstr(carve_pod_why_nowhere(c, &r, buf, sizeof(buf)), "cpu"));
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
