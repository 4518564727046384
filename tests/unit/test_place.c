/*
 * test_place.c - placement (include/carve/place.h): each GPU sharing mode,
 * node selection (selectors, affinity, taints, models, cpu/memory/pods),
 * atomic gangs (a failed gang leaves the state bit-identical), topology,
 * release, determinism, what each policy picks on a small handmade cluster,
 * and a seeded property test over thousands of random clusters and gangs
 * checked against an independent recount of what the live placements hold.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "carve/gpumodel.h"
#include "carve/place.h"
#include "place_int.h"

/* ---- builders ---- */

static struct carve_gpu_spec g_excl(const char *model)
{
	struct carve_gpu_spec g;

	memset(&g, 0, sizeof(g));
	g.model = model;
	g.memory_mib = 16384;
	g.sharing = CARVE_SHARE_EXCLUSIVE;
	return g;
}

static struct carve_gpu_spec g_frac(const char *model, uint32_t mem)
{
	struct carve_gpu_spec g = g_excl(model);

	g.memory_mib = mem;
	g.sharing = CARVE_SHARE_FRACTION;
	return g;
}

static struct carve_gpu_spec g_ts(const char *model, uint16_t replicas)
{
	struct carve_gpu_spec g = g_excl(model);

	g.sharing = CARVE_SHARE_TIMESLICE;
	g.replicas = replicas;
	return g;
}

/* MIG GPU of model with n1 x prof1 (+ n2 x prof2). */
static struct carve_gpu_spec g_mig(const char *model, const char *prof1, int n1, const char *prof2,
				   int n2)
{
	struct carve_gpu_spec g = g_excl(model);
	int counts[16];

	memset(counts, 0, sizeof(counts));
	g.sharing = CARVE_SHARE_MIG;
	g.mig_model = carve_mig_model_find(model);
	assert_non_null(g.mig_model);
	counts[carve_mig_profile_find(g.mig_model, prof1)] += n1;
	if (prof2)
		counts[carve_mig_profile_find(g.mig_model, prof2)] += n2;
	assert_int_equal(carve_mig_layout_from_counts(g.mig_model, counts, &g.mig, NULL), 0);
	return g;
}

static int add_node_full(struct carve_cluster *c, const char *name, int64_t cpu, int64_t mem,
			 int64_t pods, size_t ngpus, const struct carve_gpu_spec *g, size_t nlabels,
			 const struct carve_label *labels, size_t ntaints,
			 const struct carve_taint_spec *taints)
{
	struct carve_node_spec s;
	int id;

	memset(&s, 0, sizeof(s));
	s.name = name;
	s.cpu_milli = cpu;
	s.memory_milli = mem;
	s.pods = pods;
	s.ngpus = ngpus;
	s.gpus = g;
	s.nlabels = nlabels;
	s.labels = labels;
	s.ntaints = ntaints;
	s.taints = taints;
	id = carve_cluster_add_node(c, &s, NULL);
	assert_true(id >= 0);
	return id;
}

static int add_node(struct carve_cluster *c, const char *name, int64_t cpu, size_t ngpus,
		    const struct carve_gpu_spec *g)
{
	return add_node_full(c, name, cpu, 0, 0, ngpus, g, 0, NULL, 0, NULL);
}

static struct carve_pod_req r_cpu(int64_t cpu)
{
	struct carve_pod_req r;

	memset(&r, 0, sizeof(r));
	r.cpu_milli = cpu;
	return r;
}

static struct carve_pod_req r_whole(int n)
{
	struct carve_pod_req r = r_cpu(1000);

	r.gpu = CARVE_GREQ_WHOLE;
	r.count = n;
	return r;
}

static struct carve_pod_req r_mig(const char *prof, int n)
{
	struct carve_pod_req r = r_cpu(1000);

	r.gpu = CARVE_GREQ_MIG;
	r.mig_profile = prof;
	r.count = n;
	return r;
}

static struct carve_pod_req r_rep(int n)
{
	struct carve_pod_req r = r_cpu(1000);

	r.gpu = CARVE_GREQ_REPLICA;
	r.count = n;
	return r;
}

static struct carve_pod_req r_frac(int milli, uint32_t mem)
{
	struct carve_pod_req r = r_cpu(1000);

	r.gpu = CARVE_GREQ_FRACTION;
	r.milli = milli;
	r.mem_mib = mem;
	return r;
}

static int place1(struct carve_placer *p, const struct carve_pod_req *r, struct carve_pod_place *out)
{
	struct carve_pod_group g = {r, 1};

	return carve_placer_place(p, &g, 1, NULL, out);
}

static void check_ok(const struct carve_placer *p)
{
	struct carve_error err;
	int rc = carve_placer_check(p, &err);

	if (rc)
		fail_msg("carve_placer_check: %s", err.text);
}

static struct carve_placer *mk(const struct carve_cluster *c, const char *policy, uint64_t seed)
{
	struct carve_error err;
	struct carve_placer *p = carve_placer_create(c, policy, seed, &err);

	if (!p)
		fail_msg("carve_placer_create: %s", err.text);
	return p;
}

/* GPU index on its node of device i of pl. */
static int gidx(const struct carve_cluster *c, const struct carve_pod_place *pl, int i)
{
	return carve_cluster_gpu(c, pl->devs[i].gpu)->index;
}

/* ---- snapshots: the whole state, bit for bit, plus every public view ---- */

struct snap {
	struct carve__node_state *nodes;
	struct carve__gpu_state *gpus;
	uint64_t *rbits;
	int64_t *cpu;
	int *milli, *units;
	struct carve_rng rng;
	struct carve_mig_layout *mig;
	size_t nreparts;
};

static struct snap snap_take(const struct carve_placer *p)
{
	struct snap s;
	size_t i;

	check_ok(p);
	s.nodes = malloc((p->nnodes + 1) * sizeof(*s.nodes));
	s.gpus = malloc((p->ngpus + 1) * sizeof(*s.gpus));
	s.rbits = malloc((p->nrbits + 1) * sizeof(*s.rbits));
	s.cpu = malloc((p->nnodes + 1) * sizeof(*s.cpu));
	s.milli = malloc((p->ngpus + 1) * sizeof(*s.milli));
	s.units = malloc((p->ngpus + 1) * sizeof(*s.units));
	s.mig = malloc((p->ngpus + 1) * sizeof(*s.mig));
	memcpy(s.mig, p->mig, p->ngpus * sizeof(*s.mig));
	s.nreparts = carve_placer_repartitions(p, NULL);
	memcpy(s.nodes, p->nodes, p->nnodes * sizeof(*s.nodes));
	memcpy(s.gpus, p->gpus, p->ngpus * sizeof(*s.gpus));
	memcpy(s.rbits, p->rbits, p->nrbits * sizeof(*s.rbits));
	s.rng = p->rng;
	for (i = 0; i < p->nnodes; i++)
		s.cpu[i] = carve_placer_free_cpu(p, (uint32_t)i);
	for (i = 0; i < p->ngpus; i++) {
		s.milli[i] = carve_placer_gpu_free_milli(p, (uint32_t)i);
		s.units[i] = carve_placer_gpu_free_units(p, (uint32_t)i);
	}
	return s;
}

static bool snap_same(const struct carve_placer *p, const struct snap *s)
{
	size_t i;
	bool same = true;

	check_ok(p);
	same &= !memcmp(s->nodes, p->nodes, p->nnodes * sizeof(*s->nodes));
	same &= !memcmp(s->gpus, p->gpus, p->ngpus * sizeof(*s->gpus));
	same &= !memcmp(s->rbits, p->rbits, p->nrbits * sizeof(*s->rbits));
	same &= !memcmp(&s->rng, &p->rng, sizeof(s->rng));
	same &= !memcmp(s->mig, p->mig, p->ngpus * sizeof(*s->mig));
	same &= s->nreparts == carve_placer_repartitions(p, NULL);
	for (i = 0; i < p->nnodes; i++)
		same &= s->cpu[i] == carve_placer_free_cpu(p, (uint32_t)i);
	for (i = 0; i < p->ngpus; i++) {
		same &= s->milli[i] == carve_placer_gpu_free_milli(p, (uint32_t)i);
		same &= s->units[i] == carve_placer_gpu_free_units(p, (uint32_t)i);
	}
	return same;
}

static void snap_free(struct snap *s)
{
	free(s->nodes);
	free(s->gpus);
	free(s->rbits);
	free(s->cpu);
	free(s->milli);
	free(s->units);
	free(s->mig);
}

/* ---- unit tests ---- */

static void policies_listed(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_error err;
	int i;

	(void)state;
	assert_int_equal(carve_policy_count(), 8);
	assert_string_equal(carve_policy_name(0), "binpack");
	assert_string_equal(carve_policy_name(7), "fgd");
	assert_null(carve_policy_name(8));
	assert_null(carve_policy_name(-1));
	for (i = 0; i < carve_policy_count(); i++) {
		struct carve_placer *p = mk(c, carve_policy_name(i), 1);

		check_ok(p);
		carve_placer_destroy(p);
	}
	assert_null(carve_placer_create(c, "tetris", 1, &err));
	assert_int_equal(err.code, CARVE_EINVAL);
	assert_non_null(strstr(err.text, "tetris"));
	assert_non_null(strstr(err.text, "gpupacking"));
	carve_placer_destroy(NULL);
	carve_cluster_destroy(c);
}

static void whole_gpus(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g4[4] = {g_excl("A100-80GB"), g_excl("A100-80GB"), g_excl("A100-80GB"),
				       g_excl("A100-80GB")};
	struct carve_gpu_spec f2[2] = {g_frac("L4", 23034), g_frac("L4", 23034)};
	struct carve_pod_req w2 = r_whole(2), w1 = r_whole(1), w3 = r_whole(3), f = r_frac(500, 0);
	struct carve_pod_place pl[4];
	struct carve_placer *p;
	int a, b;

	(void)state;
	a = add_node(c, "a", 0, 4, g4);
	b = add_node(c, "b", 0, 2, f2);
	p = mk(c, "binpack", 7);
	w2.nmodels = 1;
	w2.models = (const char *const[]){"A100-80GB"};
	assert_int_equal(place1(p, &w2, &pl[0]), 0);
	assert_int_equal(pl[0].node, a);
	assert_int_equal(pl[0].ndevs, 2);
	assert_int_equal(gidx(c, &pl[0], 0), 0); /* lowest-index free GPUs */
	assert_int_equal(gidx(c, &pl[0], 1), 1);
	assert_int_equal(pl[0].devs[0].mig, -1);
	assert_int_equal(pl[0].devs[0].replica, -1);
	assert_int_equal(pl[0].devs[0].milli, 0);
	assert_int_equal(place1(p, &w2, &pl[1]), 0);
	assert_int_equal(gidx(c, &pl[1], 0), 2);
	assert_int_equal(gidx(c, &pl[1], 1), 3);
	assert_int_equal(place1(p, &w2, &pl[2]), CARVE_ENOFIT);
	/* A whole GPU takes a fully free fractional GPU at 1000 milli ... */
	assert_int_equal(place1(p, &w1, &pl[2]), 0);
	assert_int_equal(pl[2].node, b);
	assert_int_equal(pl[2].devs[0].milli, 1000);
	assert_int_equal(carve_placer_gpu_free_milli(p, pl[2].devs[0].gpu), 0);
	assert_int_equal(carve_placer_gpu_free_units(p, pl[2].devs[0].gpu), 0);
	/* ... and no fraction fits beside it; a partly used one is not whole. */
	assert_int_equal(place1(p, &f, &pl[3]), 0);
	assert_int_equal(gidx(c, &pl[3], 0), 1);
	assert_int_equal(place1(p, &f, &pl[3]), 0);
	assert_int_equal(place1(p, &w1, &pl[3]), CARVE_ENOFIT);
	/* All GPUs of a pod on one node: 3 free GPUs overall, 2 per node at most. */
	carve_placer_release(p, &pl[1], 1);
	carve_placer_release(p, &pl[2], 1);
	assert_int_equal(place1(p, &w3, &pl[3]), CARVE_ENOFIT);
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void mig_slots(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[2] = {g_mig("A100-80GB", "3g.40gb", 2, NULL, 0),
				      g_mig("A100-80GB", "1g.10gb", 3, "2g.20gb", 2)};
	struct carve_pod_req m3 = r_mig("3g.40gb", 1), m1 = r_mig("1g.10gb", 2),
			     m2 = r_mig("2g.20gb", 2), m4 = r_mig("4g.40gb", 1);
	struct carve_pod_place pl[8];
	struct carve_placer *p;
	const struct carve_gpu *v;
	int gpu0, gpu1;
	struct snap s0;

	(void)state;
	add_node(c, "a", 0, 2, g);
	gpu0 = 0;
	gpu1 = 1;
	p = mk(c, "bestfit", 3);
	s0 = snap_take(p);
	assert_int_equal(carve_placer_gpu_free_units(p, gpu0), 2);
	assert_int_equal(carve_placer_gpu_free_units(p, gpu1), 5);
	assert_int_equal(place1(p, &m3, &pl[0]), 0);
	assert_int_equal(pl[0].devs[0].gpu, gpu0);
	assert_int_equal(pl[0].devs[0].mig, 0);
	assert_int_equal(carve_placer_gpu_free_milli(p, gpu0), 500);
	assert_int_equal(place1(p, &m3, &pl[1]), 0);
	assert_int_equal(pl[1].devs[0].mig, 1);
	assert_int_equal(carve_placer_gpu_free_units(p, gpu0), 0);
	assert_int_equal(place1(p, &m3, &pl[2]), CARVE_ENOFIT); /* exhausted */
	assert_int_equal(place1(p, &m4, &pl[2]), CARVE_ENOFIT); /* no such instance */
	/* Two 1g.10gb in one pod: two instances of the layout, in layout order. */
	v = carve_cluster_gpu(c, gpu1);
	assert_int_equal(place1(p, &m1, &pl[2]), 0);
	assert_int_equal(pl[2].ndevs, 2);
	assert_string_equal(v->mig_model->profiles[v->mig.inst[pl[2].devs[0].mig].profile].name,
			    "1g.10gb");
	assert_string_equal(v->mig_model->profiles[v->mig.inst[pl[2].devs[1].mig].profile].name,
			    "1g.10gb");
	assert_true(pl[2].devs[0].mig < pl[2].devs[1].mig);
	assert_int_equal(place1(p, &m1, &pl[3]), CARVE_ENOFIT); /* one 1g left */
	assert_int_equal(place1(p, &m2, &pl[3]), 0);
	assert_int_equal(place1(p, &m2, &pl[4]), CARVE_ENOFIT);
	assert_int_equal(carve_placer_gpu_free_units(p, gpu1), 1);
	check_ok(p);
	carve_placer_release(p, pl, 4);
	assert_true(snap_same(p, &s0));
	snap_free(&s0);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void replicas(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[2] = {g_ts("T4", 4), g_ts("T4", 4)};
	struct carve_pod_req r1 = r_rep(1), r3 = r_rep(3), w = r_whole(1), f = r_frac(100, 0);
	struct carve_pod_place pl[6];
	struct carve_placer *p;

	(void)state;
	add_node(c, "a", 0, 2, g);
	p = mk(c, "binpack", 3);
	/* Packing: the GPU with most replicas used, lowest index on ties. */
	assert_int_equal(place1(p, &r1, &pl[0]), 0);
	assert_int_equal(pl[0].devs[0].gpu, 0);
	assert_int_equal(pl[0].devs[0].replica, 0);
	assert_int_equal(place1(p, &r1, &pl[1]), 0);
	assert_int_equal(pl[1].devs[0].gpu, 0);
	assert_int_equal(pl[1].devs[0].replica, 1);
	assert_int_equal(carve_placer_gpu_free_units(p, 0), 2);
	assert_int_equal(carve_placer_gpu_free_milli(p, 0), 500);
	/* Three replicas in one pod (allowed: no failRequestsGreaterThanOne
	 * here): GPU 1 is the only one that holds all three. */
	assert_int_equal(place1(p, &r3, &pl[2]), 0);
	assert_int_equal(pl[2].ndevs, 3);
	assert_int_equal(pl[2].devs[0].gpu, 1);
	assert_int_equal(pl[2].devs[2].gpu, 1);
	assert_int_equal(pl[2].devs[2].replica, 2);
	/* Now 2 + 1 free: spread over both GPUs, most free first. */
	assert_int_equal(place1(p, &r3, &pl[3]), 0);
	assert_int_equal(pl[3].devs[0].gpu, 0);
	assert_int_equal(pl[3].devs[0].replica, 2);
	assert_int_equal(pl[3].devs[1].gpu, 0);
	assert_int_equal(pl[3].devs[2].gpu, 1);
	assert_int_equal(pl[3].devs[2].replica, 3);
	assert_int_equal(place1(p, &r1, &pl[4]), CARVE_ENOFIT);
	/* Released replica numbers are reused. */
	carve_placer_release(p, &pl[1], 1);
	assert_int_equal(place1(p, &r1, &pl[4]), 0);
	assert_int_equal(pl[4].devs[0].gpu, 0);
	assert_int_equal(pl[4].devs[0].replica, 1);
	/* Neither whole GPUs nor fractions come from a time-sliced GPU. */
	carve_placer_release(p, pl, 1);
	carve_placer_release(p, &pl[2], 3);
	assert_int_equal(place1(p, &w, &pl[5]), CARVE_ENOFIT);
	assert_int_equal(place1(p, &f, &pl[5]), CARVE_ENOFIT);
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

/* nvidia.com/gpu as the node advertises it: replicas on a time-sliced
 * node, whole GPUs on exclusive ones, never MIG. */
/* failRequestsGreaterThanOne: a time-sliced GPU with fail_gt_one serves one
 * replica per pod; a REPLICA or GPU request of 2 goes elsewhere or nowhere. */
static void replicas_fail_gt_one(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec strict[1] = {g_ts("T4", 4)}, lax[1] = {g_ts("T4", 4)};
	struct carve_pod_req r1 = r_rep(1), r2 = r_rep(2), g2 = r_rep(2);
	struct carve_pod_place pl[4];
	struct carve_placer *p;
	int a, b;

	(void)state;
	strict[0].fail_gt_one = true;
	g2.gpu = CARVE_GREQ_GPU;
	a = add_node(c, "strict", 0, 1, strict);
	assert_true(carve_cluster_gpu(c, carve_cluster_node(c, (uint32_t)a)->gpu_first)->fail_gt_one);
	p = mk(c, "binpack", 1);
	assert_int_equal(place1(p, &r2, &pl[0]), CARVE_ENOFIT);
	assert_int_equal(place1(p, &g2, &pl[0]), CARVE_ENOFIT);
	assert_int_equal(place1(p, &r1, &pl[0]), 0);
	assert_int_equal(pl[0].node, (uint32_t)a);
	check_ok(p);
	carve_placer_release(p, pl, 1);
	carve_placer_destroy(p);
	/* A second node without the flag takes the 2-replica pods. */
	b = add_node(c, "lax", 0, 1, lax);
	assert_false(carve_cluster_gpu(c, carve_cluster_node(c, (uint32_t)b)->gpu_first)->fail_gt_one);
	p = mk(c, "binpack", 1);
	assert_int_equal(place1(p, &r2, &pl[0]), 0);
	assert_int_equal(pl[0].node, (uint32_t)b);
	assert_int_equal(place1(p, &g2, &pl[1]), 0);
	assert_int_equal(pl[1].node, (uint32_t)b);
	assert_int_equal(place1(p, &r2, &pl[2]), CARVE_ENOFIT);
	assert_int_equal(place1(p, &r1, &pl[2]), 0);
	assert_int_equal(pl[2].node, (uint32_t)a);
	check_ok(p);
	carve_placer_release(p, pl, 3);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void gpu_as_advertised(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec ts[1] = {g_ts("T4", 2)}, ex[1] = {g_excl("T4")};
	struct carve_gpu_spec mg[1] = {g_mig("A100-80GB", "3g.40gb", 2, NULL, 0)};
	struct carve_pod_req r = r_whole(1);
	struct carve_pod_place pl[4];
	struct carve_placer *p;

	(void)state;
	r.gpu = CARVE_GREQ_GPU;
	add_node(c, "mig", 0, 1, mg);
	add_node(c, "ts", 0, 1, ts);
	add_node(c, "ex", 0, 1, ex);
	p = mk(c, "binpack", 1);
	assert_int_equal(place1(p, &r, &pl[0]), 0);
	assert_int_equal(place1(p, &r, &pl[1]), 0);
	assert_int_equal(place1(p, &r, &pl[2]), 0);
	assert_int_equal(place1(p, &r, &pl[3]), CARVE_ENOFIT);
	{
		int reps = 0, whole = 0, i;

		for (i = 0; i < 3; i++) {
			const char *nn = carve_cluster_node(c, pl[i].node)->name;

			assert_int_equal(pl[i].ndevs, 1);
			assert_string_not_equal(nn, "mig");
			if (!strcmp(nn, "ts")) {
				assert_true(pl[i].devs[0].replica >= 0);
				reps++;
			} else {
				assert_int_equal(pl[i].devs[0].replica, -1);
				assert_int_equal(pl[i].devs[0].mig, -1);
				whole++;
			}
		}
		assert_int_equal(reps, 2);
		assert_int_equal(whole, 1);
	}
	check_ok(p);
	carve_placer_release(p, pl, 3);
	check_ok(p);
	assert_int_equal(carve_placer_gpu_free_units(p, 1), 2);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void fractions(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[2] = {g_frac("A10", 16384), g_frac("A10", 16384)};
	struct carve_gpu_spec ex[1] = {g_excl("A10")};
	struct carve_gpu_spec unk[1] = {g_frac("A10", 0)};
	struct carve_pod_req f500 = r_frac(500, 0), f300 = r_frac(300, 0), f600 = r_frac(600, 0),
			     f200 = r_frac(200, 0), m10 = r_frac(0, 10000), both = r_frac(100, 7000);
	struct carve_pod_place pl[8];
	struct carve_placer *p;
	int a;

	(void)state;
	a = add_node(c, "a", 0, 2, g);
	add_node(c, "ex", 0, 1, ex);
	p = mk(c, "binpack", 3);
	assert_int_equal(place1(p, &f500, &pl[0]), 0);
	assert_int_equal(pl[0].node, a);
	assert_int_equal(pl[0].devs[0].gpu, 0);
	assert_int_equal(pl[0].devs[0].milli, 500);
	/* Best fit: the GPU with least free milli that fits. */
	assert_int_equal(place1(p, &f300, &pl[1]), 0);
	assert_int_equal(pl[1].devs[0].gpu, 0);
	assert_int_equal(place1(p, &f600, &pl[2]), 0);
	assert_int_equal(pl[2].devs[0].gpu, 1);
	assert_int_equal(place1(p, &f200, &pl[3]), 0);
	assert_int_equal(pl[3].devs[0].gpu, 0);
	assert_int_equal(carve_placer_gpu_free_milli(p, 0), 0);
	assert_int_equal(carve_placer_gpu_free_milli(p, 1), 400);
	/* By memory: GPU 0 has all its memory but no milli left. */
	assert_int_equal(place1(p, &m10, &pl[4]), 0);
	assert_int_equal(pl[4].devs[0].gpu, 1);
	assert_int_equal(pl[4].mem_mib, 10000);
	assert_int_equal(pl[4].devs[0].milli, 0);
	assert_int_equal(place1(p, &m10, &pl[5]), CARVE_ENOFIT);
	assert_int_equal(place1(p, &both, &pl[5]), CARVE_ENOFIT); /* 6384 MiB left */
	both.mem_mib = 6384;
	assert_int_equal(place1(p, &both, &pl[5]), 0);
	assert_int_equal(p->gpus[1].mem_used, 16384);
	check_ok(p);
	carve_placer_release(p, &pl[4], 2);
	assert_int_equal(p->gpus[1].mem_used, 0);
	/* Never on an exclusive GPU: fill node a, then nothing fits. */
	assert_int_equal(place1(p, &f600, &pl[4]), CARVE_ENOFIT);
	assert_int_equal(place1(p, &f200, &pl[4]), 0);
	assert_int_equal(place1(p, &f200, &pl[5]), 0);
	assert_int_equal(place1(p, &f200, &pl[6]), CARVE_ENOFIT);
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);

	/* A GPU of unknown memory: fractions by milli alone, memory not counted. */
	c = carve_cluster_create();
	add_node(c, "u", 0, 1, unk);
	p = mk(c, "binpack", 3);
	assert_int_equal(place1(p, &m10, &pl[0]), 0);
	assert_int_equal(pl[0].mem_mib, 0);
	assert_int_equal(place1(p, &both, &pl[1]), 0);
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void selectors_affinity_taints(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	const struct carve_label la[] = {{"zone", "a"}, {"gen", "5"}};
	const struct carve_label lb[] = {{"zone", "b"}, {"gen", "9"}, {"ssd", "yes"}};
	const struct carve_taint_spec ta[] = {{"team", "ml", "NoSchedule"},
					      {"soft", "x", "PreferNoSchedule"}};
	const struct carve_taint_spec tb[] = {{"gpu", NULL, "NoExecute"}};
	struct carve_pod_req r = r_cpu(100);
	struct carve_pod_place pl;
	struct carve_placer *p;
	int a, b, n;

	(void)state;
	a = add_node_full(c, "a", 0, 0, 0, 0, NULL, 2, la, 2, ta);
	b = add_node_full(c, "b", 0, 0, 0, 0, NULL, 3, lb, 1, tb);
	n = add_node_full(c, "plain", 0, 0, 0, 0, NULL, 0, NULL, 0, NULL);
	p = mk(c, "binpack", 3);

	/* Selector. */
	r.nselector = 1;
	r.selector = (const struct carve_label[]){{"zone", "a"}};
	r.ntolerations = 1;
	r.tolerations = (const struct carve_toleration_spec[]){{"team", "Equal", "ml", "NoSchedule"}};
	assert_int_equal(place1(p, &r, &pl), 0);
	assert_int_equal(pl.node, a);
	r.tolerations = (const struct carve_toleration_spec[]){{"team", "Equal", "cv", NULL}};
	assert_int_equal(place1(p, &r, &pl), CARVE_ENOFIT); /* value differs */
	r.tolerations = (const struct carve_toleration_spec[]){{"team", "Exists", NULL, NULL}};
	assert_int_equal(place1(p, &r, &pl), 0);
	r.tolerations = (const struct carve_toleration_spec[]){{"team", "Exists", NULL, "NoExecute"}};
	assert_int_equal(place1(p, &r, &pl), CARVE_ENOFIT); /* effect differs */
	r.tolerations = (const struct carve_toleration_spec[]){{NULL, "Exists", NULL, NULL}};
	assert_int_equal(place1(p, &r, &pl), 0);            /* tolerates everything */
	r.ntolerations = 0;
	assert_int_equal(place1(p, &r, &pl), CARVE_ENOFIT);
	r.selector = (const struct carve_label[]){{"zone", "c"}};
	r.tolerations = (const struct carve_toleration_spec[]){{NULL, "Exists", NULL, NULL}};
	r.ntolerations = 1;
	assert_int_equal(place1(p, &r, &pl), CARVE_ENOFIT);
	r.nselector = 0;

	/* Untainted pods land on the plain node only; NoExecute needs tolerating. */
	r.ntolerations = 0;
	assert_int_equal(place1(p, &r, &pl), 0);
	assert_int_equal(pl.node, n);
	r.ntolerations = 1;
	r.tolerations = (const struct carve_toleration_spec[]){{"gpu", "Exists", NULL, NULL}};

	/* Affinity: OR of terms, AND within a term. */
	{
		const char *const va[] = {"a"}, *const vb[] = {"b"}, *const v7[] = {"7"};
		const struct carve_match_expr in_b[] = {{"zone", "In", 1, vb}};
		const struct carve_match_expr notin_b_ssd[] = {{"zone", "NotIn", 1, vb},
							       {"ssd", "Exists", 0, NULL}};
		const struct carve_match_expr gt7[] = {{"gen", "Gt", 1, v7}};
		const struct carve_match_expr lt7[] = {{"gen", "Lt", 1, v7}};
		const struct carve_match_expr nossd[] = {{"ssd", "DoesNotExist", 0, NULL},
							 {"zone", "In", 1, va}};
		const struct carve_match_expr bogus[] = {{"zone", "Near", 1, va}};
		struct carve_match_term t[2];

		r.nterms = 1;
		r.terms = t;
		t[0] = (struct carve_match_term){1, in_b};
		assert_int_equal(place1(p, &r, &pl), 0);
		assert_int_equal(pl.node, b);
		t[0] = (struct carve_match_term){2, notin_b_ssd};
		assert_int_equal(place1(p, &r, &pl), CARVE_ENOFIT); /* b has ssd but is b */
		t[0] = (struct carve_match_term){1, gt7};
		assert_int_equal(place1(p, &r, &pl), 0);
		assert_int_equal(pl.node, b);
		t[0] = (struct carve_match_term){1, lt7};
		assert_int_equal(place1(p, &r, &pl), CARVE_ENOFIT); /* a: team taint */
		r.tolerations = (const struct carve_toleration_spec[]){{"team", "Exists", NULL, NULL}};
		assert_int_equal(place1(p, &r, &pl), 0);
		assert_int_equal(pl.node, a);
		t[0] = (struct carve_match_term){2, nossd};
		assert_int_equal(place1(p, &r, &pl), 0);
		assert_int_equal(pl.node, a);
		t[0] = (struct carve_match_term){1, bogus}; /* unknown operator: no match */
		assert_int_equal(place1(p, &r, &pl), CARVE_ENOFIT);
		t[0] = (struct carve_match_term){0, NULL};  /* empty term: no match */
		assert_int_equal(place1(p, &r, &pl), CARVE_ENOFIT);
		t[1] = (struct carve_match_term){1, nossd + 1};
		r.nterms = 2; /* OR: the second term matches a */
		assert_int_equal(place1(p, &r, &pl), 0);
		assert_int_equal(pl.node, a);
		r.nterms = 0;
	}
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void cpu_memory_pods(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_pod_req r = r_cpu(3000);
	struct carve_pod_place pl[8];
	struct carve_placer *p;
	int a, u;

	(void)state;
	a = add_node_full(c, "a", 8000, 10000, 3, 0, NULL, 0, NULL, 0, NULL);
	p = mk(c, "binpack", 3);
	assert_int_equal(carve_placer_free_cpu(p, a), 8000);
	assert_int_equal(place1(p, &r, &pl[0]), 0);
	assert_int_equal(place1(p, &r, &pl[1]), 0);
	assert_int_equal(carve_placer_free_cpu(p, a), 2000);
	assert_int_equal(place1(p, &r, &pl[2]), CARVE_ENOFIT); /* cpu */
	r.cpu_milli = 2000;
	r.memory_milli = 1;
	assert_int_equal(place1(p, &r, &pl[2]), 0); /* exactly full */
	r.cpu_milli = 0;
	assert_int_equal(place1(p, &r, &pl[3]), CARVE_ENOFIT); /* pods */
	carve_placer_release(p, pl, 3);
	r.memory_milli = 10001;
	assert_int_equal(place1(p, &r, &pl[0]), CARVE_ENOFIT); /* memory */
	r.memory_milli = 10000;
	assert_int_equal(place1(p, &r, &pl[0]), 0);
	carve_placer_release(p, pl, 1);
	carve_placer_destroy(p);

	/* Allocatable 0 (an inventory without cpu, memory or pods) does not constrain. */
	u = add_node(c, "unknown", 0, 0, NULL);
	p = mk(c, "binpack", 3);
	r.cpu_milli = 1000000;
	r.memory_milli = 1000000;
	assert_int_equal(place1(p, &r, &pl[0]), 0);
	assert_int_equal(pl[0].node, u);
	assert_int_equal(pl[0].cpu_milli, 1000000);
	assert_true(carve_placer_free_cpu(p, u) == INT64_MAX);
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void gpu_models(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec ga[1] = {g_excl("A100-80GB")};
	struct carve_gpu_spec gt[1] = {g_excl("T4")};
	struct carve_gpu_spec gx[1] = {g_excl("Foo-9000")};
	struct carve_pod_req r = r_whole(1), cpu = r_cpu(1);
	struct carve_pod_place pl[4];
	struct carve_placer *p;
	int a, t, x;

	(void)state;
	a = add_node(c, "a", 0, 1, ga);
	t = add_node(c, "t", 0, 1, gt);
	x = add_node(c, "x", 0, 1, gx);
	p = mk(c, "binpack", 3);
	r.nmodels = 1;
	r.models = (const char *const[]){"NVIDIA-A100-SXM4-80GB"}; /* GFD product name */
	assert_int_equal(place1(p, &r, &pl[0]), 0);
	assert_int_equal(pl[0].node, a);
	assert_int_equal(place1(p, &r, &pl[1]), CARVE_ENOFIT);
	r.nmodels = 2;
	r.models = (const char *const[]){"L4", "Tesla-T4"};
	assert_int_equal(place1(p, &r, &pl[1]), 0);
	assert_int_equal(pl[1].node, t);
	r.nmodels = 1;
	r.models = (const char *const[]){"foo 9000"}; /* unknown: normalised name */
	assert_int_equal(place1(p, &r, &pl[2]), 0);
	assert_int_equal(pl[2].node, x);
	/* CPU-only pods ignore models; a GPU pod never fits a node without GPUs. */
	cpu.nmodels = 1;
	cpu.models = (const char *const[]){"H100-80GB"};
	assert_int_equal(place1(p, &cpu, &pl[3]), 0);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

/* A gang that cannot be placed whole leaves the state bit-identical. */
static void expect_atomic_fail(struct carve_placer *p, const struct carve_pod_group *g, size_t ng,
			       const struct carve_topology *topo)
{
	struct carve_pod_place out[32];
	struct snap s = snap_take(p);

	assert_int_equal(carve_placer_place(p, g, ng, topo, out), CARVE_ENOFIT);
	assert_true(snap_same(p, &s));
	snap_free(&s);
}

static void gang_atomic(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec ex[2] = {g_excl("H100-80GB"), g_excl("H100-80GB")};
	struct carve_gpu_spec mig[1] = {g_mig("A100-80GB", "3g.40gb", 2, NULL, 0)};
	struct carve_gpu_spec fr[2] = {g_frac("L4", 23034), g_frac("L4", 23034)};
	struct carve_pod_req w2 = r_whole(2), w1 = r_whole(1), m3 = r_mig("3g.40gb", 1),
			     m1 = r_mig("1g.10gb", 1), f6 = r_frac(600, 0), c1 = r_cpu(1);
	struct carve_pod_place out[8];
	struct carve_placer *p;
	size_t i;

	(void)state;
	add_node(c, "e1", 0, 2, ex);
	add_node(c, "e2", 0, 2, ex);
	add_node(c, "m", 0, 1, mig);
	add_node(c, "f", 0, 2, fr);
	w2.nmodels = 1;
	w2.models = (const char *const[]){"H100-80GB"};
	for (i = 0; i < 3; i++) {
		const char *pol[] = {"binpack", "spread", "random"};
		struct carve_pod_group whole[] = {{&c1, 2}, {&w2, 3}};
		struct carve_pod_group whole_ok[] = {{&w2, 2}};
		struct carve_pod_group mixed[] = {{&w1, 1}, {&m3, 1}, {&m3, 1}, {&m1, 1}};
		struct carve_pod_group migs[] = {{&m3, 3}};
		struct carve_pod_group fracs[] = {{&f6, 3}};
		struct carve_pod_group fracs_ok[] = {{&f6, 2}};
		struct snap s;

		p = mk(c, pol[i], 11);
		expect_atomic_fail(p, whole, 2, NULL);
		expect_atomic_fail(p, mixed, 4, NULL);
		expect_atomic_fail(p, migs, 1, NULL);
		expect_atomic_fail(p, fracs, 1, NULL);
		/* The fitting part of each goes in whole. */
		assert_int_equal(carve_placer_place(p, whole_ok, 1, NULL, out), 0);
		assert_int_equal(out[0].ndevs, 2);
		assert_true(out[0].node != out[1].node);
		s = snap_take(p);
		assert_int_equal(carve_placer_place(p, fracs_ok, 1, NULL, out + 2), 0);
		assert_int_equal(carve_placer_place(p, mixed + 1, 2, NULL, out + 4), 0);
		expect_atomic_fail(p, whole_ok, 1, NULL);
		carve_placer_release(p, out + 2, 4);
		s.rng = p->rng; /* random drew numbers meanwhile */
		assert_true(snap_same(p, &s));
		snap_free(&s);
		carve_placer_destroy(p);
	}
	carve_cluster_destroy(c);
}

static void topology(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[2] = {g_excl("H100-80GB"), g_excl("H100-80GB")};
	const char *const levels[] = {"rack", "kubernetes.io/hostname"};
	struct carve_topology pref = {2, levels, false}, req = {2, levels, true};
	struct carve_label l[4][2] = {{{"rack", "r1"}, {"kubernetes.io/hostname", "h1"}},
				      {{"rack", "r1"}, {"kubernetes.io/hostname", "h2"}},
				      {{"rack", "r2"}, {"kubernetes.io/hostname", "h3"}},
				      {{"rack", "r2"}, {"kubernetes.io/hostname", "h4"}}};
	const char *names[4] = {"h1", "h2", "h3", "h4"};
	struct carve_pod_req w1 = r_whole(1), w2 = r_whole(2);
	struct carve_pod_group two1 = {&w1, 2}, two2 = {&w2, 2}, four1 = {&w1, 4};
	struct carve_pod_place out[8], pin[2];
	struct carve_placer *p;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		add_node_full(c, names[i], 0, 0, 0, 2, g, 2, l[i], 0, NULL);
	p = mk(c, "spread", 5);
	/* spread alone would put the two pods on two hosts; the host level keeps
	 * them on one (all hosts equally free: the first by value, h1). */
	assert_int_equal(carve_placer_place(p, &two1, 1, &pref, out), 0);
	assert_int_equal(out[0].node, 0);
	assert_int_equal(out[1].node, 0);
	/* No host holds 2 x 2 GPUs; rack r1 has 2 free GPUs, r2 has 4. */
	assert_int_equal(carve_placer_place(p, &two2, 1, &pref, out + 2), 0);
	assert_true(out[2].node >= 2 && out[3].node >= 2 && out[2].node != out[3].node);
	carve_placer_release(p, out, 4);

	/* One GPU pinned in each rack: 3 free per rack, none holds 4 pods. */
	for (i = 0; i < 2; i++) {
		struct carve_pod_req pinned = r_whole(1);

		pinned.nselector = 1;
		pinned.selector = &l[2 * i][1];
		assert_int_equal(place1(p, &pinned, &pin[i]), 0);
	}
	expect_atomic_fail(p, &four1, 1, &req);
	assert_int_equal(carve_placer_place(p, &four1, 1, &pref, out), 0); /* spreads */
	check_ok(p);
	carve_placer_release(p, out, 4);
	/* Three pods fit one rack: required is satisfied, and the tightest
	 * rack wins (equal here: r1 by value). */
	four1.count = 3;
	assert_int_equal(carve_placer_place(p, &four1, 1, &req, out), 0);
	for (i = 0; i < 3; i++)
		assert_true(out[i].node <= 1);
	/* Nodes without the label are outside every domain. */
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void topology_hostname_fallback(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[2] = {g_excl("H100-80GB"), g_excl("H100-80GB")};
	const char *const host[] = {"kubernetes.io/hostname"}, *const zone[] = {"zone"};
	struct carve_topology th = {1, host, true}, tz = {1, zone, true};
	struct carve_pod_req w1 = r_whole(1);
	struct carve_pod_group two = {&w1, 2};
	struct carve_pod_place out[2];
	struct carve_placer *p;

	(void)state;
	add_node(c, "x", 0, 2, g);
	add_node(c, "y", 0, 2, g);
	p = mk(c, "spread", 5);
	/* hostname falls back to the node name. */
	assert_int_equal(carve_placer_place(p, &two, 1, &th, out), 0);
	assert_int_equal(out[0].node, out[1].node);
	/* Required on a label no node has: nothing fits. */
	expect_atomic_fail(p, &two, 1, &tz);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void release_restores(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec a[3] = {g_excl("A10"), g_frac("A10", 23028), g_ts("A10", 3)};
	struct carve_gpu_spec m[1] = {g_mig("H100-80GB", "1g.10gb", 4, "3g.40gb", 1)};
	struct carve_pod_req reqs[] = {r_whole(1), r_frac(250, 4000), r_rep(2),
				       r_mig("1g.10gb", 2), r_mig("3g.40gb", 1), r_cpu(500)};
	struct carve_pod_place out[16];
	struct carve_placer *p;
	struct snap s0;
	size_t i, n = 0;

	(void)state;
	add_node_full(c, "a", 16000, 1000000, 20, 3, a, 0, NULL, 0, NULL);
	add_node_full(c, "m", 16000, 1000000, 20, 1, m, 0, NULL, 0, NULL);
	p = mk(c, "gpuclustering", 9);
	s0 = snap_take(p);
	for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		assert_int_equal(place1(p, &reqs[i], &out[n]), 0);
		n++;
		check_ok(p);
	}
	/* The exclusive GPU is taken and the fractional one partly used. */
	assert_int_equal(place1(p, &reqs[0], &out[n]), CARVE_ENOFIT);
	assert_int_equal(p->nodes[0].gpu_pods, 3);
	assert_int_equal(p->nodes[1].gpu_pods, 2);
	carve_placer_release(p, out, n);
	/* p->rng moved only through placement; compare state and views. */
	s0.rng = p->rng;
	assert_true(snap_same(p, &s0));
	snap_free(&s0);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

/* Release then retake gives back the exact state (every sharing mode); a
 * second retake finds its devices taken and changes nothing. */
static void retake_restores(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec a[3] = {g_excl("A10"), g_frac("A10", 23028), g_ts("A10", 3)};
	struct carve_gpu_spec m[1] = {g_mig("H100-80GB", "1g.10gb", 4, "3g.40gb", 1)};
	struct carve_pod_req reqs[] = {r_whole(1), r_frac(250, 4000), r_rep(2),
				       r_mig("1g.10gb", 2), r_mig("3g.40gb", 1), r_cpu(500)};
	struct carve_pod_place out[16];
	struct carve_placer *p;
	struct snap full;
	size_t i, n = 0;

	(void)state;
	add_node_full(c, "a", 16000, 1000000, 20, 3, a, 0, NULL, 0, NULL);
	add_node_full(c, "m", 16000, 1000000, 20, 1, m, 0, NULL, 0, NULL);
	p = mk(c, "binpack", 3);
	for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++)
		assert_int_equal(place1(p, &reqs[i], &out[n++]), 0);
	full = snap_take(p);
	carve_placer_release(p, out, n);
	check_ok(p);
	assert_int_equal(carve_placer_retake(p, out, n), 0);
	check_ok(p);
	assert_true(snap_same(p, &full));
	/* Taken already: refused, all or nothing. */
	assert_int_equal(carve_placer_retake(p, out + 2, n - 2), CARVE_EINVAL);
	assert_true(snap_same(p, &full));
	/* Half released: retaking all of them fails on the first still held. */
	carve_placer_release(p, out + n / 2, n - n / 2);
	assert_int_equal(carve_placer_retake(p, out, n), CARVE_EINVAL);
	assert_int_equal(carve_placer_retake(p, out + n / 2, n - n / 2), 0);
	assert_true(snap_same(p, &full));
	check_ok(p);
	assert_false(carve_placer_is_mig_dynamic(p));
	snap_free(&full);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

/* A small cluster and a fixed request sequence; returns a digest. */
static uint64_t run_sequence(const char *policy, uint64_t seed, struct carve_pod_place *log,
			     size_t *nlog)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec fr[4] = {g_frac("L4", 23034), g_frac("L4", 23034), g_frac("L4", 23034),
				       g_frac("L4", 23034)};
	struct carve_pod_req reqs[] = {r_frac(300, 0), r_whole(1), r_frac(700, 0), r_cpu(2000),
				       r_frac(500, 0), r_whole(2)};
	struct carve_placer *p;
	uint64_t h = 1469598103934665603ULL;
	char name[16];
	size_t i, k;
	int j;

	for (i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "n%zu", i);
		add_node(c, name, 32000, 4, fr);
	}
	p = mk(c, policy, seed);
	*nlog = 0;
	for (k = 0; k < 5; k++)
		for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
			struct carve_pod_place *pl = &log[*nlog];

			if (place1(p, &reqs[i], pl))
				continue;
			(*nlog)++;
			h = (h ^ pl->node) * 1099511628211ULL;
			for (j = 0; j < pl->ndevs; j++)
				h = (h ^ pl->devs[j].gpu) * 1099511628211ULL;
		}
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
	return h;
}

static void determinism(void **state)
{
	struct carve_pod_place a[64], b[64];
	size_t na, nb;
	int i, differ = 0;
	uint64_t s;

	(void)state;
	for (i = 0; i < carve_policy_count(); i++) {
		assert_int_equal(run_sequence(carve_policy_name(i), 42, a, &na),
				 run_sequence(carve_policy_name(i), 42, b, &nb));
		assert_int_equal(na, nb);
		assert_memory_equal(a, b, na * sizeof(a[0]));
	}
	/* Another seed changes the node order (ties) and random's draws. */
	for (s = 1; s < 6; s++)
		differ += run_sequence("random", s, a, &na) != run_sequence("random", 42, b, &nb);
	assert_true(differ > 0);
}

static void ties_by_seeded_rank(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[1] = {g_excl("T4")};
	struct carve_pod_req r = r_whole(1);
	struct carve_pod_place pl;
	uint64_t seed;
	char name[16];
	int i, seen = 0;

	(void)state;
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		add_node(c, name, 8000, 1, g);
	}
	for (seed = 0; seed < 16; seed++) {
		struct carve_placer *p = mk(c, "bestfit", seed);
		bool perm[8] = {false};

		for (i = 0; i < 8; i++) {
			assert_true(p->rank[i] < 8);
			perm[p->rank[i]] = true;
		}
		for (i = 0; i < 8; i++)
			assert_true(perm[i]);
		/* Identical empty nodes tie: the node ranked first wins, then the next. */
		assert_int_equal(place1(p, &r, &pl), 0);
		assert_int_equal(p->rank[pl.node], 0);
		seen |= 1 << pl.node;
		assert_int_equal(place1(p, &r, &pl), 0);
		assert_int_equal(p->rank[pl.node], 1);
		carve_placer_destroy(p);
	}
	assert_true(__builtin_popcount((unsigned)seen) > 1); /* the order depends on the seed */
	carve_cluster_destroy(c);
}

/* Score of policy `name` for req on node with the default GPU choice. */
static double score_of(struct carve_placer *p, const char *name, const struct carve_pod_req *req,
		       uint32_t node)
{
	struct carve__cand cand;
	int i;

	memset(&cand, 0, sizeof(cand));
	cand.node = node;
	p->any_model = true;
	if (carve__choose_default(p, req, &cand))
		return -1;
	for (i = 0; i < carve__npolicies; i++)
		if (!strcmp(carve__policies[i].name, name))
			return carve__policies[i].score(p, req, &cand);
	fail_msg("no policy %s", name);
	return -1;
}

static void policy_binpack_spread(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[2] = {g_excl("T4"), g_excl("T4")};
	const struct carve_label la[] = {{"n", "a"}}, lb[] = {{"n", "b"}};
	struct carve_pod_req pin = r_whole(1), r = r_whole(1);
	struct carve_pod_place pl[2];
	const char *pol[] = {"binpack", "spread"};
	int i, a, b;

	(void)state;
	a = add_node_full(c, "a", 8000, 0, 0, 2, g, 1, la, 0, NULL);
	b = add_node_full(c, "b", 8000, 0, 0, 2, g, 1, lb, 0, NULL);
	pin.nselector = 1;
	pin.selector = la;
	for (i = 0; i < 2; i++) {
		struct carve_placer *p = mk(c, pol[i], 1);

		assert_int_equal(place1(p, &pin, &pl[0]), 0);
		assert_int_equal(pl[0].node, a);
		/* binpack after: a = .5*2/8 + .5*1 = .625, b = .5*1/8 + .5*.5 = .3125 */
		assert_true(score_of(p, "binpack", &r, a) == 0.625);
		assert_true(score_of(p, "binpack", &r, b) == 0.3125);
		assert_int_equal(place1(p, &r, &pl[1]), 0);
		assert_int_equal(pl[1].node, i == 0 ? a : b);
		carve_placer_destroy(p);
	}
	carve_cluster_destroy(c);
}

static void policy_bestfit_dotprod(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[4] = {g_excl("T4"), g_excl("T4"), g_excl("T4"), g_excl("T4")};
	struct carve_pod_req r = r_whole(1);
	struct carve_pod_place pl;
	struct carve_placer *p;
	int a, b;

	(void)state;
	a = add_node(c, "big", 8000, 4, g);
	b = add_node(c, "small", 8000, 2, g);
	p = mk(c, "bestfit", 1);
	/* leftover big: .5*7/8 + .5*3/4 = .8125 -> 18; small: .5*7/8 + .5*1/4 -> 43 */
	assert_true(score_of(p, "bestfit", &r, a) == 18);
	assert_true(score_of(p, "bestfit", &r, b) == 43);
	assert_true(score_of(p, "fgd", &r, b) == 43); /* the stub scores as bestfit */
	assert_int_equal(place1(p, &r, &pl), 0);
	assert_int_equal(pl.node, b);
	carve_placer_destroy(p);
	p = mk(c, "dotprod", 1);
	/* big: (1, 1).(1/8, 1/4) = .375 -> 81; small: (1, .5).(1/8, 1/4) = .25 -> 87 */
	assert_true(score_of(p, "dotprod", &r, a) == 81);
	assert_true(score_of(p, "dotprod", &r, b) == 87);
	assert_int_equal(place1(p, &r, &pl), 0);
	assert_int_equal(pl.node, b);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void policy_gpupacking(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g2[2] = {g_frac("A10", 23028), g_frac("A10", 23028)};
	const struct carve_label la[] = {{"n", "a"}};
	struct carve_pod_req pin = r_frac(500, 0), f3 = r_frac(300, 0), f6 = r_frac(600, 0),
			     w2 = r_whole(2), cpu = r_cpu(1);
	struct carve_pod_place pl[4];
	struct carve_placer *p;
	int a, b, s;

	(void)state;
	a = add_node_full(c, "a", 0, 0, 0, 2, g2, 1, la, 0, NULL);
	b = add_node(c, "b", 0, 2, g2);
	s = add_node(c, "s", 0, 1, g2);
	p = mk(c, "gpupacking", 1);
	pin.nselector = 1;
	pin.selector = la;
	assert_int_equal(place1(p, &pin, &pl[0]), 0);
	/* a: fits on its used GPU (50% free) -> 100 - 50/10 = 95; idle b: 33-2 = 31;
	 * idle s: 33-1 = 32. */
	assert_true(score_of(p, "gpupacking", &f3, a) == 95);
	assert_true(score_of(p, "gpupacking", &f3, b) == 31);
	assert_true(score_of(p, "gpupacking", &f3, s) == 32);
	/* 600 needs a fully free GPU on a: 50 - 1. */
	assert_true(score_of(p, "gpupacking", &f6, a) == 49);
	assert_true(score_of(p, "gpupacking", &cpu, a) == 0);
	assert_int_equal(place1(p, &f6, &pl[1]), 0);
	assert_int_equal(pl[1].node, a);
	assert_int_equal(place1(p, &f3, &pl[2]), 0);
	assert_int_equal(pl[2].node, a);
	/* Two whole GPUs: only b holds them. */
	assert_int_equal(place1(p, &w2, &pl[3]), 0);
	assert_int_equal(pl[3].node, b);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void policy_gpuclustering(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g4[4] = {g_frac("A10", 23028), g_frac("A10", 23028),
				       g_frac("A10", 23028), g_frac("A10", 23028)};
	const struct carve_label la[] = {{"n", "a"}}, lb[] = {{"n", "b"}};
	struct carve_pod_req wa = r_whole(1), sb = r_frac(300, 0), sa = r_frac(300, 0),
			     s2 = r_frac(200, 0), w1 = r_whole(1);
	struct carve_pod_place pl[6];
	struct carve_placer *p;
	int a, b, e;

	(void)state;
	a = add_node_full(c, "a", 0, 0, 0, 4, g4, 1, la, 0, NULL);
	b = add_node_full(c, "b", 0, 0, 0, 4, g4, 1, lb, 0, NULL);
	e = add_node(c, "e", 0, 4, g4);
	p = mk(c, "gpuclustering", 1);
	wa.nselector = sa.nselector = 1;
	wa.selector = sa.selector = la;
	sb.nselector = 1;
	sb.selector = lb;
	assert_int_equal(place1(p, &wa, &pl[0]), 0);
	assert_int_equal(place1(p, &sb, &pl[1]), 0);
	/* share pod: b hosts only shares -> 75 + 25*300/4000 = 76; e idle 25;
	 * a only other classes -> 0 + 25*1000/4000 = 6. */
	assert_true(score_of(p, "gpuclustering", &s2, b) == 76);
	assert_true(score_of(p, "gpuclustering", &s2, e) == 25);
	assert_true(score_of(p, "gpuclustering", &s2, a) == 6);
	assert_int_equal(place1(p, &s2, &pl[2]), 0);
	assert_int_equal(pl[2].node, b);
	assert_int_equal(place1(p, &w1, &pl[3]), 0);
	assert_int_equal(pl[3].node, a);
	/* a now hosts both classes: 50 + 25*2300/4000 = 64 beats idle e. */
	assert_int_equal(place1(p, &sa, &pl[4]), 0);
	assert_true(score_of(p, "gpuclustering", &w1, a) == 64);
	assert_int_equal(place1(p, &w1, &pl[5]), 0);
	assert_int_equal(pl[5].node, a);
	assert_int_equal(p->nodes[a].klass[1], 3);
	assert_int_equal(p->nodes[a].klass[0], 1);
	carve_placer_release(p, pl, 6);
	assert_int_equal(p->nodes[a].gpu_pods, 0);
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void policy_random(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[4] = {g_frac("L4", 23034), g_frac("L4", 23034), g_frac("L4", 23034),
				      g_frac("L4", 23034)};
	struct carve_pod_req f = r_frac(300, 0);
	struct carve_pod_place pl;
	unsigned nodes = 0, gpus = 0;
	uint64_t seed;

	(void)state;
	add_node(c, "a", 0, 4, g);
	add_node(c, "b", 0, 4, g);
	add_node(c, "c", 0, 4, g);
	for (seed = 0; seed < 64; seed++) {
		struct carve_placer *p = mk(c, "random", seed);

		assert_int_equal(place1(p, &f, &pl), 0);
		nodes |= 1u << pl.node;
		gpus |= 1u << carve_cluster_gpu(c, pl.devs[0].gpu)->index;
		carve_placer_destroy(p);
	}
	assert_int_equal(nodes, 7);  /* every node drawn */
	assert_int_equal(gpus, 15);  /* a uniform GPU, not best fit */
	carve_cluster_destroy(c);
}

static void invalid_requests(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[1] = {g_excl("T4")};
	struct carve_pod_req bad[] = {r_whole(0), r_whole(17), r_mig(NULL, 1), r_frac(0, 0),
				      r_frac(1000, 0), r_rep(0), r_cpu(-1)};
	struct carve_pod_req ok = r_whole(1);
	struct carve_pod_group grp = {&ok, 1}, neg = {&ok, -1}, none = {&ok, 0};
	const char *const levels[] = {NULL};
	struct carve_topology topo = {1, levels, false};
	struct carve_pod_place pl;
	struct carve_placer *p;
	struct snap s;
	size_t i;

	(void)state;
	add_node(c, "a", 0, 1, g);
	p = mk(c, "binpack", 1);
	s = snap_take(p);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(place1(p, &bad[i], &pl), CARVE_EINVAL);
	bad[0] = r_whole(1);
	bad[0].nmodels = 1;
	assert_int_equal(place1(p, &bad[0], &pl), CARVE_EINVAL);
	assert_int_equal(carve_placer_place(p, NULL, 1, NULL, &pl), CARVE_EINVAL);
	assert_int_equal(carve_placer_place(p, &neg, 1, NULL, &pl), CARVE_EINVAL);
	assert_int_equal(carve_placer_place(p, &grp, 1, NULL, NULL), CARVE_EINVAL);
	assert_int_equal(carve_placer_place(p, &grp, 1, &topo, &pl), CARVE_EINVAL);
	assert_true(snap_same(p, &s));
	/* An empty gang places nothing, successfully. */
	assert_int_equal(carve_placer_place(p, &none, 1, NULL, NULL), 0);
	assert_int_equal(carve_placer_place(p, NULL, 0, NULL, NULL), 0);
	snap_free(&s);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void check_finds_corruption(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[4] = {g_frac("A10", 1000), g_ts("T4", 2),
				      g_mig("A30-24GB", "1g.6gb", 4, NULL, 0), g_excl("T4")};
	struct carve_error err;
	struct carve_placer *p;

	(void)state;
	add_node_full(c, "a", 4000, 0, 4, 4, g, 0, NULL, 0, NULL);
	p = mk(c, "binpack", 1);
	check_ok(p);
	p->gpus[0].milli_used = 1001;
	assert_int_equal(carve_placer_check(p, &err), CARVE_EINVAL);
	p->gpus[0].milli_used = 0;
	p->gpus[0].mem_used = 1001;
	assert_int_equal(carve_placer_check(p, &err), CARVE_EINVAL);
	p->gpus[0].mem_used = 0;
	p->gpus[1].rtaken = 1; /* counted but not marked */
	assert_int_equal(carve_placer_check(p, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "replicas"));
	p->gpus[1].rtaken = 0;
	p->gpus[2].mig_taken = 1u << 4; /* the A30 layout has 4 instances */
	p->nodes[0].gpus_busy = 1;
	assert_int_equal(carve_placer_check(p, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "MIG"));
	p->gpus[2].mig_taken = 0;
	p->nodes[0].gpus_busy = 0;
	p->gpus[3].milli_used = 5; /* another mode's field */
	assert_int_equal(carve_placer_check(p, &err), CARVE_EINVAL);
	p->gpus[3].milli_used = 0;
	p->nodes[0].cpu_used = 4001;
	assert_int_equal(carve_placer_check(p, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "cpu"));
	p->nodes[0].cpu_used = 0;
	p->nodes[0].gpu_pods = 1;
	assert_int_equal(carve_placer_check(p, &err), CARVE_EINVAL);
	p->nodes[0].gpu_pods = 0;
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void mix_copied(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec ga[1] = {g_excl("A100-80GB")}, gt[1] = {g_excl("T4")};
	struct carve_pod_req t[2] = {r_frac(500, 0), r_whole(1)};
	double prob[2] = {0.25, 0.75}, negp[1] = {-1};
	char *model = strdup("NVIDIA-A100-SXM4-80GB");
	const char *models[1];
	struct carve_placer *p;
	int ma, mt;

	(void)state;
	add_node(c, "a", 0, 1, ga);
	add_node(c, "t", 0, 1, gt);
	p = mk(c, "fgd", 1);
	models[0] = model;
	t[1].nmodels = 1;
	t[1].models = models;
	assert_int_equal(carve_placer_set_mix(p, t, negp, 1), CARVE_EINVAL);
	assert_int_equal(carve_placer_set_mix(p, t, prob, 2), 0);
	free(model); /* copied */
	assert_int_equal(p->mix.n, 2);
	assert_true(p->mix.prob[1] == 0.75);
	assert_string_equal(p->mix.types[1].models[0], "NVIDIA-A100-SXM4-80GB");
	ma = p->ginfo[0].model;
	mt = p->ginfo[1].model;
	assert_true(p->mix.model_ok[0 * p->nmodels + ma] && p->mix.model_ok[0 * p->nmodels + mt]);
	assert_true(p->mix.model_ok[1 * p->nmodels + ma] && !p->mix.model_ok[1 * p->nmodels + mt]);
	assert_int_equal(carve_placer_set_mix(p, NULL, NULL, 0), 0);
	assert_int_equal(p->mix.n, 0);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

/* Allocation failures: fail the n-th allocation of create and set_mix for
 * n = 0, 1, ... until none fails; each failure is clean (ASan: no leak) and
 * a failed set_mix keeps the previous mix. */
static long countdown = -1;

static void *fail_malloc(size_t n)
{
	if (countdown == 0)
		return NULL;
	if (countdown > 0)
		countdown--;
	return malloc(n);
}

static void *fail_realloc(void *ptr, size_t n)
{
	if (countdown == 0)
		return NULL;
	if (countdown > 0)
		countdown--;
	return realloc(ptr, n);
}

static void allocation_failures(void **state)
{
	static const struct carve_allocator failing = {fail_malloc, fail_realloc, free};
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[3] = {g_excl("T4"), g_ts("L4", 4), g_frac("A10", 23028)};
	struct carve_gpu_spec m[1] = {g_mig("A100-80GB", "3g.40gb", 2, NULL, 0)};
	struct carve_pod_req t[2] = {r_frac(500, 0), r_whole(1)};
	double prob[2] = {0.5, 0.5};
	struct carve_error err;
	struct carve_placer *p = NULL;
	long n;

	(void)state;
	t[1].nmodels = 1;
	t[1].models = (const char *const[]){"T4"};
	add_node(c, "a", 0, 3, g);
	add_node(c, "m", 0, 1, m);
	for (n = 0;; n++) {
		countdown = n;
		carve_set_allocator(&failing);
		p = carve_placer_create(c, "fgd", 1, &err);
		carve_set_allocator(NULL);
		if (p)
			break;
		assert_int_equal(err.code, CARVE_ENOMEM);
	}
	assert_true(n > 5);
	check_ok(p);
	assert_int_equal(carve_placer_set_mix(p, t, prob, 1), 0);
	for (n = 0;; n++) {
		int rc;

		countdown = n;
		carve_set_allocator(&failing);
		rc = carve_placer_set_mix(p, t, prob, 2);
		carve_set_allocator(NULL);
		if (!rc)
			break;
		assert_int_equal(rc, CARVE_ENOMEM);
		assert_int_equal(p->mix.n, 1);
	}
	assert_int_equal(p->mix.n, 2);
	countdown = -1;
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

/* ---- Dynamic MIG ---- */

static const char *prof_name(const struct carve_placer *p, uint32_t g, int mig)
{
	const struct carve_mig_layout *l = carve_placer_mig_layout(p, g);

	return carve_cluster_gpu(p->c, g)->mig_model->profiles[l->inst[mig].profile].name;
}

static void mig_dynamic(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[2] = {g_mig("A100-80GB", "3g.40gb", 2, NULL, 0),
				      g_mig("A100-80GB", "3g.40gb", 2, NULL, 0)};
	struct carve_pod_req m1 = r_mig("1g.10gb", 1), m3 = r_mig("3g.40gb", 1),
			     m1x3 = r_mig("1g.10gb", 3), m1x4 = r_mig("1g.10gb", 4);
	const struct carve_repartition *rp;
	struct carve_pod_place pl[4];
	struct carve_placer *p;
	int i;

	(void)state;
	add_node(c, "m", 0, 2, g);
	p = mk(c, "binpack", 1);
	/* Off (the default): no 1g.10gb instance exists. */
	assert_int_equal(place1(p, &m1, pl), CARVE_ENOFIT);
	assert_int_equal(carve_placer_repartitions(p, &rp), 0);
	/* On: GPU 0 (lowest index, idle) becomes 7 x 1g.10gb, logged. */
	assert_int_equal(carve_placer_set_mig_dynamic(p, true), 0);
	assert_int_equal(place1(p, &m1, &pl[0]), 0);
	check_ok(p);
	assert_int_equal(pl[0].devs[0].gpu, 0);
	assert_string_equal(prof_name(p, 0, pl[0].devs[0].mig), "1g.10gb");
	assert_int_equal(carve_placer_repartitions(p, &rp), 1);
	assert_int_equal(rp[0].gpu, 0);
	assert_int_equal(rp[0].from.n, 2);
	assert_int_equal(rp[0].to.n, 7);
	for (i = 0; i < 7; i++)
		assert_string_equal(prof_name(p, 0, i), "1g.10gb");
	assert_int_equal(carve_placer_gpu_free_units(p, 0), 6);
	/* Later pods use the new instances; GPU 1 stays 2 x 3g.40gb. */
	assert_int_equal(place1(p, &m1x3, &pl[1]), 0);
	assert_int_equal(pl[1].devs[2].gpu, 0);
	assert_int_equal(carve_placer_repartitions(p, NULL), 1);
	assert_int_equal(place1(p, &m3, &pl[2]), 0);
	assert_int_equal(pl[2].devs[0].gpu, 1);
	/* A busy GPU is never repartitioned: GPU 0 has 3 left, 4 do not fit. */
	assert_int_equal(place1(p, &m1x4, &pl[3]), CARVE_ENOFIT);
	check_ok(p);
	/* Giving back every pod on GPU 0 returns it to its layout, unlogged. */
	carve_placer_release(p, &pl[1], 1);
	assert_int_equal(carve_placer_repartitions(p, NULL), 1);
	carve_placer_release(p, &pl[0], 1);
	assert_int_equal(carve_placer_repartitions(p, NULL), 0);
	assert_int_equal(carve_placer_mig_layout(p, 0)->n, 2);
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static void mig_dynamic_gang_reverts(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[2] = {g_mig("A100-80GB", "3g.40gb", 2, NULL, 0),
				      g_mig("H100-80GB", "3g.40gb", 2, NULL, 0)};
	struct carve_pod_req m1 = r_mig("1g.10gb", 4), w1 = r_whole(1);
	struct carve_pod_group gang[] = {{&m1, 2}, {&w1, 1}}, ok[] = {{&m1, 3}};
	struct carve_pod_place out[4];
	struct carve_placer *p;

	(void)state;
	add_node(c, "m", 0, 2, g);
	p = mk(c, "spread", 3);
	assert_int_equal(carve_placer_set_mig_dynamic(p, true), 0);
	/* Both GPUs get repartitioned for the MIG pods, then the whole GPU
	 * finds nothing: everything goes back, nothing logged. */
	expect_atomic_fail(p, gang, 2, NULL);
	assert_int_equal(carve_placer_repartitions(p, NULL), 0);
	assert_int_equal(carve_placer_mig_layout(p, 0)->n, 2);
	assert_int_equal(carve_placer_mig_layout(p, 1)->n, 2);
	/* 12 instances needed, 14 possible: both GPUs, in index order. */
	assert_int_equal(carve_placer_place(p, ok, 1, NULL, out), 0);
	assert_int_equal(carve_placer_repartitions(p, NULL), 2);
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

/* ---- property test ---- */

/* Mixed layouts (carve_placer_set_mig_wants): the pod's instance, then
 * the wanted profiles, then the largest that fit; cleared, the old rule. */
static void mig_dynamic_wants(void **state)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec g[1] = {g_mig("A100-80GB", "7g.80gb", 1, NULL, 0)};
	struct carve_pod_req m1 = r_mig("1g.10gb", 1);
	static const char *const wants[2] = {"3g.40gb", "2g.20gb"};
	static const double w[2] = {1, 5};
	struct carve_pod_place pl[1];
	struct carve_placer *p;

	(void)state;
	add_node(c, "m", 0, 1, g);
	p = mk(c, "binpack", 1);
	assert_int_equal(carve_placer_set_mig_dynamic(p, true), 0);
	assert_int_equal(carve_placer_set_mig_wants(NULL, wants, w, 2), CARVE_EINVAL);
	assert_int_equal(carve_placer_set_mig_wants(p, NULL, w, 2), CARVE_EINVAL);
	assert_int_equal(carve_placer_set_mig_wants(p, wants, w, 2), 0);
	/* 1g.10gb, then 2g.20gb (heavier) as many as fit, then 3g.40gb. */
	assert_int_equal(place1(p, &m1, pl), 0);
	check_ok(p);
	assert_string_equal(prof_name(p, 0, pl[0].devs[0].mig), "1g.10gb");
	assert_int_equal(p->mig[0].n, 4); /* 2g.20gb@0,2,4 + 1g.10gb@6 */
	assert_string_equal(prof_name(p, 0, 0), "2g.20gb");
	assert_string_equal(prof_name(p, 0, 3), "1g.10gb");
	carve_placer_release(p, pl, 1);
	check_ok(p);
	assert_int_equal(p->mig[0].n, 1); /* back to 7g.80gb */
	assert_int_equal(carve_placer_set_mig_wants(p, NULL, NULL, 0), 0);
	assert_int_equal(place1(p, &m1, pl), 0);
	assert_int_equal(p->mig[0].n, 7);
	check_ok(p);
	carve_placer_destroy(p);
	carve_cluster_destroy(c);
}

static uint64_t prng;

static uint32_t rnd(uint32_t n)
{
	prng ^= prng << 13;
	prng ^= prng >> 7;
	prng ^= prng << 17;
	return (uint32_t)(prng % n);
}

static const char *const mig_models[] = {"A100-80GB", "A30-24GB", "H100-80GB"};
static const char *const model_names[] = {"A100-80GB", "A30-24GB", "H100-80GB", "T4", "L4"};

static struct carve_gpu_spec random_gpu(int mode, const char *model)
{
	struct carve_gpu_spec g = g_excl(model);
	int counts[16], i, tries;

	switch (mode) {
	case CARVE_SHARE_EXCLUSIVE:
		break;
	case CARVE_SHARE_FRACTION:
		g = g_frac(model, rnd(3) ? 1000 + rnd(3) * 1000 : 0);
		break;
	case CARVE_SHARE_TIMESLICE:
		g = g_ts(model, (uint16_t)(1 + rnd(rnd(8) ? 6 : 80)));
		break;
	case CARVE_SHARE_MIG:
		g.model = mig_models[rnd(3)];
		g.sharing = CARVE_SHARE_MIG;
		g.mig_model = carve_mig_model_find(g.model);
		memset(counts, 0, sizeof(counts));
		memset(&g.mig, 0, sizeof(g.mig));
		for (tries = 0; tries < 6; tries++) {
			i = (int)rnd(g.mig_model->nprofiles);
			counts[i]++;
			if (carve_mig_layout_from_counts(g.mig_model, counts, &g.mig, NULL))
				counts[i]--;
		}
		break;
	}
	return g;
}

struct world {
	struct carve_cluster *c;
	char names[8][16];
	struct carve_label labels[8][2];
	struct carve_taint_spec taint;
};

static void random_cluster(struct world *w)
{
	struct carve_gpu_spec g[6];
	int n = 1 + (int)rnd(6), i, k;

	w->c = carve_cluster_create();
	w->taint = (struct carve_taint_spec){"dedicated", "x", "NoSchedule"};
	for (i = 0; i < n; i++) {
		int ng = (int)rnd(5), mode = (int)rnd(4);
		const char *model = model_names[rnd(5)];

		for (k = 0; k < ng; k++)
			g[k] = random_gpu(rnd(6) ? mode : (int)rnd(4), model);
		snprintf(w->names[i], sizeof(w->names[i]), "n%d", i);
		w->labels[i][0] = (struct carve_label){"rack", rnd(2) ? "r0" : "r1"};
		w->labels[i][1] = (struct carve_label){"kubernetes.io/hostname", w->names[i]};
		add_node_full(w->c, w->names[i], rnd(3) ? 1000 * (1 + rnd(16)) : 0,
			      rnd(3) ? 1000 * (1 + rnd(8)) : 0, rnd(3) ? 2 + rnd(10) : 0,
			      (size_t)ng, g, rnd(4) ? 2 : 0, w->labels[i], rnd(5) ? 0 : 1, &w->taint);
	}
}

/* Profiles of A100-80GB / H100-80GB first, then A30-24GB, then rarer ones. */
static const char *const mig_profiles[] = {"1g.10gb", "2g.20gb", "3g.40gb", "1g.6gb",
					   "2g.12gb", "4g.24gb", "7g.80gb", "1g.20gb"};

static struct carve_pod_req random_req(void)
{
	struct carve_pod_req r;
	static const char *const rack0[] = {"r0"};
	static const struct carve_match_expr in_r0[] = {{"rack", "In", 1, rack0}};
	static const struct carve_match_term term = {1, in_r0};
	static const struct carve_toleration_spec tol = {"dedicated", "Exists", NULL, NULL};
	static const struct carve_label sel = {"rack", "r1"};

	switch (rnd(6)) {
	case 0:
		r = r_cpu(0);
		break;
	case 1:
		r = r_whole(1 + (int)rnd(rnd(4) ? 2 : 5));
		break;
	case 2:
		r = r_mig(mig_profiles[rnd(2) ? rnd(5) : rnd(8)], 1 + (int)rnd(rnd(3) ? 1 : 3));
		break;
	case 3:
		r = r_rep(1 + (int)rnd(3));
		break;
	default:
		r = r_frac(rnd(4) ? 1 + (int)rnd(999) : 0, 0);
		if (!r.milli || !rnd(3))
			r.mem_mib = 1 + rnd(3000);
		break;
	}
	r.cpu_milli = rnd(4) ? 250 * rnd(12) : 0;
	r.memory_milli = rnd(2) ? 500 * rnd(6) : 0;
	if (!rnd(4)) {
		r.nmodels = 1;
		r.models = &model_names[rnd(5)];
	}
	if (!rnd(6)) {
		r.nselector = 1;
		r.selector = &sel;
	}
	if (!rnd(6)) {
		r.nterms = 1;
		r.terms = &term;
	}
	if (rnd(2)) {
		r.ntolerations = 1;
		r.tolerations = &tol;
	}
	return r;
}

#define MAXLIVE 64
#define MAXPODS 24

struct live {
	size_t n;
	struct carve_pod_place pl[MAXPODS];
};

/* Recounts everything the live placements hold and compares it with the
 * placer's public views: nothing over-allocated, nothing held twice. */
static void recount(const struct carve_placer *p, const struct carve_cluster *c,
		    const struct live *lv, size_t nlive)
{
	size_t ng = carve_cluster_gpu_count(c), nn = carve_cluster_node_count(c), i, k;
	int64_t cpu[8] = {0}, pods[8] = {0};
	int milli[64] = {0}, excl[64] = {0}, mig[64] = {0}, reps[64] = {0};
	uint32_t mem[64] = {0};
	static uint8_t rep_seen[64][128];
	int j;

	memset(rep_seen, 0, sizeof(rep_seen));
	assert_true(ng <= 64 && nn <= 8);
	for (i = 0; i < nlive; i++)
		for (k = 0; k < lv[i].n; k++) {
			const struct carve_pod_place *pl = &lv[i].pl[k];

			cpu[pl->node] += pl->cpu_milli;
			pods[pl->node]++;
			for (j = 0; j < pl->ndevs; j++) {
				const struct carve_dev *d = &pl->devs[j];
				const struct carve_gpu *v = carve_cluster_gpu(c, d->gpu);

				assert_int_equal(v->node, pl->node);
				switch (v->sharing) {
				case CARVE_SHARE_EXCLUSIVE:
					excl[d->gpu]++;
					break;
				case CARVE_SHARE_MIG:
					assert_true(d->mig >= 0 &&
						    d->mig < carve_placer_mig_layout(p, d->gpu)->n);
					assert_false(mig[d->gpu] & (1 << d->mig));
					mig[d->gpu] |= 1 << d->mig;
					break;
				case CARVE_SHARE_TIMESLICE:
					assert_true(d->replica >= 0 && d->replica < (int)v->replicas);
					assert_false(rep_seen[d->gpu][d->replica]);
					rep_seen[d->gpu][d->replica] = 1;
					reps[d->gpu]++;
					break;
				case CARVE_SHARE_FRACTION:
					milli[d->gpu] += d->milli;
					if (j == 0)
						mem[d->gpu] += pl->mem_mib;
					break;
				}
			}
		}
	for (i = 0; i < nn; i++) {
		const struct carve_node *n = carve_cluster_node(c, (uint32_t)i);

		if (n->cpu_milli) {
			assert_true(cpu[i] <= n->cpu_milli);
			assert_int_equal(carve_placer_free_cpu(p, (uint32_t)i), n->cpu_milli - cpu[i]);
		}
		if (n->pods)
			assert_true(pods[i] <= n->pods);
	}
	for (i = 0; i < ng; i++) {
		const struct carve_gpu *v = carve_cluster_gpu(c, (uint32_t)i);
		int units = carve_placer_gpu_free_units(p, (uint32_t)i);

		switch (v->sharing) {
		case CARVE_SHARE_EXCLUSIVE:
			assert_true(excl[i] <= 1);
			assert_int_equal(units, 1 - excl[i]);
			break;
		case CARVE_SHARE_MIG:
			assert_int_equal(units, carve_placer_mig_layout(p, (uint32_t)i)->n -
						       __builtin_popcount((unsigned)mig[i]));
			break;
		case CARVE_SHARE_TIMESLICE:
			assert_true(reps[i] <= (int)v->replicas);
			assert_int_equal(units, v->replicas - reps[i]);
			break;
		case CARVE_SHARE_FRACTION:
			assert_true(milli[i] <= 1000);
			assert_true(mem[i] <= v->memory_mib);
			assert_int_equal(carve_placer_gpu_free_milli(p, (uint32_t)i), 1000 - milli[i]);
			break;
		}
	}
}

/* A successful gang: every pod placed with what its request asks for, on a
 * node that accepts it. */
static void verify_gang(const struct carve_placer *p, const struct carve_cluster *c,
			const struct carve_pod_group *g, size_t ng,
			const struct carve_pod_place *out, const struct carve_topology *topo)
{
	size_t gi, k = 0;
	int i, j;

	for (gi = 0; gi < ng; gi++)
		for (i = 0; i < g[gi].count; i++, k++) {
			const struct carve_pod_req *r = g[gi].req;
			const struct carve_pod_place *pl = &out[k];
			const struct carve_node *n = carve_cluster_node(c, pl->node);
			int want = r->gpu == CARVE_GREQ_NONE ? 0
				   : r->gpu == CARVE_GREQ_FRACTION ? 1 : r->count;

			assert_non_null(n);
			assert_int_equal(pl->ndevs, want);
			assert_int_equal(pl->cpu_milli, r->cpu_milli);
			if (r->nselector)
				assert_string_equal(carve_node_label(n, "rack"), "r1");
			if (r->nterms)
				assert_string_equal(carve_node_label(n, "rack"), "r0");
			if (n->ntaints)
				assert_int_equal(r->ntolerations, 1);
			if (topo && topo->required) {
				const char *r0 = carve_node_label(carve_cluster_node(c, out[0].node),
								  "rack");
				const char *rk = carve_node_label(n, "rack");

				assert_non_null(r0);
				assert_non_null(rk);
				assert_string_equal(rk, r0);
			}
			for (j = 0; j < pl->ndevs; j++) {
				const struct carve_gpu *v = carve_cluster_gpu(c, pl->devs[j].gpu);

				if (r->nmodels) {
					const struct carve_gpu_model *a = carve_gpu_model_find(v->model);
					const struct carve_gpu_model *b = carve_gpu_model_find(r->models[0]);

					assert_ptr_equal(a, b);
				}
				switch (r->gpu) {
				case CARVE_GREQ_WHOLE:
					assert_true(v->sharing == CARVE_SHARE_EXCLUSIVE ||
						    (v->sharing == CARVE_SHARE_FRACTION &&
						     pl->devs[j].milli == 1000));
					break;
				case CARVE_GREQ_MIG: {
					const struct carve_mig_layout *l =
						carve_placer_mig_layout(p, pl->devs[j].gpu);

					assert_int_equal(v->sharing, CARVE_SHARE_MIG);
					assert_string_equal(
						v->mig_model->profiles[l->inst[pl->devs[j].mig].profile].name,
						r->mig_profile);
					break;
				}
				case CARVE_GREQ_REPLICA:
					assert_int_equal(v->sharing, CARVE_SHARE_TIMESLICE);
					break;
				case CARVE_GREQ_FRACTION:
					assert_int_equal(v->sharing, CARVE_SHARE_FRACTION);
					assert_int_equal(pl->devs[j].milli, r->milli);
					break;
				default:
					fail();
				}
			}
		}
}

static void property_run(bool dynamic, int nclusters, int min_each)
{
	static struct live lv[MAXLIVE];
	const char *const levels[] = {"rack", "kubernetes.io/hostname"};
	int cluster, op, placed = 0, failed = 0;
	size_t reparts = 0;

	prng = dynamic ? 0x2545f4914f6cdd1dULL : 0x9e3779b97f4a7c15ULL;
	for (cluster = 0; cluster < nclusters; cluster++) {
		struct world w;
		struct carve_placer *p;
		size_t nlive = 0;

		random_cluster(&w);
		p = mk(w.c, carve_policy_name((int)rnd((uint32_t)carve_policy_count())), rnd(1000));
		assert_int_equal(carve_placer_set_mig_dynamic(p, dynamic), 0);
		for (op = 0; op < 24; op++) {
			if (nlive && (nlive == MAXLIVE || !rnd(3))) {
				size_t k = rnd((uint32_t)nlive);

				carve_placer_release(p, lv[k].pl, lv[k].n);
				lv[k] = lv[--nlive];
			} else {
				struct carve_pod_req reqs[3];
				struct carve_pod_group g[3];
				struct carve_topology topo = {2, levels, rnd(2) == 0};
				struct carve_topology *tp = rnd(3) ? NULL : &topo;
				size_t ng = 1 + rnd(rnd(2) ? 1 : 3), i, total = 0;
				struct snap s;
				int rc;

				for (i = 0; i < ng; i++) {
					reqs[i] = random_req();
					g[i].req = &reqs[i];
					g[i].count = 1 + (int)rnd(rnd(3) ? 2 : 8);
					total += (size_t)g[i].count;
				}
				s = snap_take(p);
				rc = carve_placer_place(p, g, ng, tp, lv[nlive].pl);
				if (rc == 0) {
					reparts += carve_placer_repartitions(p, NULL) - s.nreparts;
					verify_gang(p, w.c, g, ng, lv[nlive].pl, tp);
					lv[nlive++].n = total;
					placed++;
				} else {
					assert_int_equal(rc, CARVE_ENOFIT);
					assert_true(snap_same(p, &s));
					failed++;
				}
				snap_free(&s);
			}
			check_ok(p);
			recount(p, w.c, lv, nlive);
		}
		/* Releasing everything gives back a fresh placer's state. */
		while (nlive) {
			nlive--;
			carve_placer_release(p, lv[nlive].pl, lv[nlive].n);
		}
		{
			struct carve_placer *fresh = mk(w.c, "binpack", 0);

			assert_memory_equal(p->nodes, fresh->nodes, p->nnodes * sizeof(*p->nodes));
			assert_memory_equal(p->gpus, fresh->gpus, p->ngpus * sizeof(*p->gpus));
			assert_memory_equal(p->rbits, fresh->rbits, p->nrbits * sizeof(*p->rbits));
			assert_memory_equal(p->mig, fresh->mig, p->ngpus * sizeof(*p->mig));
			assert_int_equal(carve_placer_repartitions(p, NULL), 0);
			carve_placer_destroy(fresh);
		}
		carve_placer_destroy(p);
		carve_cluster_destroy(w.c);
	}
	/* Both outcomes were exercised plenty. */
	assert_true(placed > min_each);
	assert_true(failed > min_each);
	if (dynamic)
		assert_true(reparts > 0);
	else
		assert_int_equal(reparts, 0);
}

static void property_random_gangs(void **state)
{
	(void)state;
	property_run(false, 3000, 5000);
}

/* The same with Dynamic MIG on: carve_placer_check (layouts legal, bits
 * inside them, log consistent) holds after every step. */
static void property_random_gangs_dynamic(void **state)
{
	(void)state;
	property_run(true, 1000, 1500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(policies_listed),
		cmocka_unit_test(whole_gpus),
		cmocka_unit_test(mig_slots),
		cmocka_unit_test(replicas),
		cmocka_unit_test(replicas_fail_gt_one),
		cmocka_unit_test(gpu_as_advertised),
		cmocka_unit_test(fractions),
		cmocka_unit_test(selectors_affinity_taints),
		cmocka_unit_test(cpu_memory_pods),
		cmocka_unit_test(gpu_models),
		cmocka_unit_test(gang_atomic),
		cmocka_unit_test(topology),
		cmocka_unit_test(topology_hostname_fallback),
		cmocka_unit_test(release_restores),
		cmocka_unit_test(retake_restores),
		cmocka_unit_test(determinism),
		cmocka_unit_test(ties_by_seeded_rank),
		cmocka_unit_test(policy_binpack_spread),
		cmocka_unit_test(policy_bestfit_dotprod),
		cmocka_unit_test(policy_gpupacking),
		cmocka_unit_test(policy_gpuclustering),
		cmocka_unit_test(policy_random),
		cmocka_unit_test(invalid_requests),
		cmocka_unit_test(check_finds_corruption),
		cmocka_unit_test(mix_copied),
		cmocka_unit_test(allocation_failures),
		cmocka_unit_test(property_random_gangs),
		cmocka_unit_test(property_random_gangs_dynamic),
		cmocka_unit_test(mig_dynamic),
		cmocka_unit_test(mig_dynamic_gang_reverts),
		cmocka_unit_test(mig_dynamic_wants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
