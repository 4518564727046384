/*
 * tracegen.c - the synthetic week of the seed scenario (include/carve/
 * tracegen.h; distributions and parameters in docs/seed-trace.md).
 *
 * Each kind of job but serving is a non-homogeneous Poisson arrival
 * process with an hourly rate that depends on the hour of day and on
 * weekday vs weekend, sampled by thinning; serving is a fleet of services
 * within a slice budget, each a chain of releases.  Each process draws
 * from its own PRNG stream (xoshiro256**, seeded by splitmix64 from the
 * seed and the process number: carve_rng_seed_stream), so tuning one
 * process leaves the others' draws unchanged.  Jobs are collected, sorted
 * by (arrival, name) and then added to the list.
 * Nothing here reads a clock or calls rand().
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/resource.h"
#include "carve/rng.h"
#include "carve/tracegen.h"

#define HOUR 3600.0
#define DAY 86400.0
#define GIB (1024LL * 1024 * 1024 * 1000)  /* milli-bytes */

const char *const carve_tracegen_scenarios[] = {"seed", NULL};

/* ---- PRNG (include/carve/rng.h) ---- */

/* Uniform in [0, 1). */
static double unif(struct carve_rng *r)
{
	return carve_rng_double(r);
}

static double unif_ab(struct carve_rng *r, double a, double b)
{
	return a + (b - a) * unif(r);
}

/* Exponential with the given mean. */
static double expo(struct carve_rng *r, double mean)
{
	return -mean * log(1.0 - unif(r));
}

/* Standard normal (Box-Muller, one value per call). */
static double normal(struct carve_rng *r)
{
	double u = 1.0 - unif(r), v = unif(r);

	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Lognormal with the given median and sigma of the log, clamped. */
static double lognorm(struct carve_rng *r, double median, double sigma, double lo, double hi)
{
	double x = median * exp(sigma * normal(r));

	return x < lo ? lo : x > hi ? hi : x;
}

/* Index drawn with the given weights (summing to about 1). */
static int pick(struct carve_rng *r, const double *w, int n)
{
	double u = unif(r);
	int i;

	for (i = 0; i < n - 1; i++) {
		if (u < w[i])
			return i;
		u -= w[i];
	}
	return n - 1;
}

/* ---- arrival processes ---- */

/* Jobs per hour at time t (seconds from Monday 00:00). */
typedef double (*rate_fn)(double t);

static bool weekend(double t)
{
	return (long)(t / DAY) % 7 >= 5;
}

static double hour_of(double t)
{
	return fmod(t, DAY) / HOUR;
}

static double rate_train(double t)
{
	double h = hour_of(t), r = h >= 9 && h < 19 ? 0.8 : 0.3;

	return weekend(t) ? 0.5 * r : r;
}

static double rate_eval(double t)
{
	double h = hour_of(t);

	return !weekend(t) && h >= 20 ? 0.3 : 0.0;
}

static double rate_finetune(double t)
{
	double h = hour_of(t);

	if (weekend(t))
		return 0.1;
	return h >= 8 && h < 20 ? 0.8 : 0.0;
}

static double rate_notebook(double t)
{
	double h = hour_of(t), r;

	if (h >= 9 && h < 18)
		r = 36.0;
	else if ((h >= 8 && h < 9) || (h >= 18 && h < 20))
		r = 12.0;
	else
		r = 1.5;
	return weekend(t) ? 0.15 * r : r;
}

/* Next arrival after t with rate fn bounded by max per hour; < 0 at end. */
static double next_arrival(struct carve_rng *r, rate_fn fn, double max, double t, double end)
{
	for (;;) {
		t += expo(r, HOUR / max);
		if (t >= end)
			return -1.0;
		if (unif(r) * max < fn(t))
			return t;
	}
}

/* ---- jobs ---- */

/* One generated job, before it goes into the list. */
struct gjob {
	char name[40];
	const char *ns, *queue;
	const char *cls;             /* job class: training, evaluation, inference, ... */
	int32_t priority;
	int64_t arrival, duration;
	double demand;
	bool checkpoint;
	int32_t count, min_count;
	const char *gres;            /* GPU resource name */
	int64_t gpus, cpu, mem;      /* per pod, milli */
};

struct gen {
	struct gjob *v;
	size_t n, cap;
	bool oom;
};

static struct gjob *gen_add(struct gen *g)
{
	struct gjob *j;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 256;
		struct gjob *nv = carve_realloc(g->v, cap * sizeof(*nv));

		if (!nv) {
			g->oom = true;
			return NULL;
		}
		g->v = nv;
		g->cap = cap;
	}
	j = &g->v[g->n++];
	memset(j, 0, sizeof(*j));
	return j;
}

static int64_t secs(double x)
{
	return (int64_t)llround(x);
}

/* Demand rounded to two decimals, so written traces stay readable. */
static double dem(double x)
{
	return round(x * 100.0) / 100.0;
}

enum stream { S_TRAIN = 1, S_EVAL, S_FLEET, S_SERVE, S_FINETUNE, S_NOTEBOOK };

/* research: distributed training gangs on the H100 pool, 4 GPUs a pod. */
static void gen_train(struct gen *g, uint64_t seed, double end)
{
	static const double wpods[] = {0.45, 0.35, 0.12, 0.08};
	struct carve_rng r;
	double t = 0.0;
	int k = 0;

	carve_rng_seed_stream(&r, seed, S_TRAIN);
	while ((t = next_arrival(&r, rate_train, 0.8, t, end)) >= 0) {
		struct gjob *j = gen_add(g);

		if (!j)
			return;
		snprintf(j->name, sizeof(j->name), "research-train-%04d", ++k);
		j->ns = "team-research";
		j->queue = "research";
		j->cls = "training";
		j->priority = 1000;
		j->arrival = secs(t);
		j->count = 1 + pick(&r, wpods, 4);
		/* Some 4-node runs are elastic: they start on 2 nodes. */
		j->min_count = j->count == 4 && unif(&r) < 0.3 ? 2 : j->count;
		j->duration = secs(lognorm(&r, 2.5 * HOUR, 0.6, HOUR, 10 * HOUR));
		j->demand = dem(unif_ab(&r, 0.85, 0.95));
		j->checkpoint = true;
		j->gres = CARVE_RES_NAME_GPU;
		j->gpus = 4000;
		j->cpu = 64000;
		j->mem = 512 * GIB;
	}
}

/* research: evaluation sweeps on borrowed production 3g.40gb slices. */
static void gen_eval(struct gen *g, uint64_t seed, double end)
{
	static const double wpods[] = {0.7, 0.3};
	static const int pods[] = {1, 2};
	struct carve_rng r;
	double t = 0.0;
	int k = 0;

	carve_rng_seed_stream(&r, seed, S_EVAL);
	while ((t = next_arrival(&r, rate_eval, 0.3, t, end)) >= 0) {
		struct gjob *j = gen_add(g);

		if (!j)
			return;
		snprintf(j->name, sizeof(j->name), "research-eval-%04d", ++k);
		j->ns = "team-research";
		j->queue = "research";
		j->cls = "evaluation";
		j->priority = 1000;
		j->arrival = secs(t);
		j->count = j->min_count = pods[pick(&r, wpods, 2)];
		j->duration = secs(lognorm(&r, HOUR, 0.5, HOUR / 3, 3 * HOUR));
		j->demand = dem(unif_ab(&r, 0.6, 0.8));
		j->checkpoint = false;
		j->gres = CARVE_RES_NAME_MIG_PREFIX "3g.40gb";
		j->gpus = 1000;
		j->cpu = 8000;
		j->mem = 64 * GIB;
	}
}

/*
 * production: the serving fleet.  Each service keeps one shape (MIG
 * profile, replicas) all week; every release of it is one job.  A release
 * runs until the next one replaces it: the next release comes after a
 * lognormal interval, moved into weekday working hours (9-17 h), and the old
 * one ends as it arrives.  The release live when the window closes is cut
 * there, so the trace holds what a week of observation sees.
 */
#define SERVE_DRAWS 8      /* services drawn for the fleet */
#define SERVE_3G_MAX 8     /* the fleet's budget of 3g.40gb slices (of 12) */
#define SERVE_1G_MAX 4     /* and of 1g.10gb slices (of 4) */

struct service {
	const char *gres;
	int32_t count;
	int64_t cpu, mem;
};

/* t itself when it falls in weekday working hours, else a uniform time in
 * the next weekday's 9-17 h. */
static double next_work(struct carve_rng *r, double t)
{
	double h = hour_of(t), day = floor(t / DAY);

	if (!weekend(t) && h >= 9 && h < 17)
		return t;
	if (h >= 9)
		day += 1;
	while ((long)day % 7 >= 5)
		day += 1;
	return day * DAY + 9 * HOUR + unif_ab(r, 0, 8 * HOUR);
}

static void serve_release(struct gen *g, const struct service *sv, struct carve_rng *r, double t,
			  double until, int *k)
{
	struct gjob *j = gen_add(g);

	if (!j)
		return;
	snprintf(j->name, sizeof(j->name), "prod-serve-%04d", ++*k);
	j->ns = "team-production";
	j->queue = "production";
	j->cls = "inference";
	j->priority = 10000;
	j->arrival = secs(t);
	j->duration = secs(until) - j->arrival;
	j->gres = sv->gres;
	j->count = j->min_count = sv->count;
	j->gpus = 1000;
	j->cpu = sv->cpu;
	j->mem = sv->mem;
	j->demand = dem(unif_ab(r, 0.3, 0.6));
	j->checkpoint = false;
}

static void gen_serve(struct gen *g, uint64_t seed, double end, int *k)
{
	static const double w3g[] = {0.4, 0.3, 0.15, 0.15};
	struct service fleet[SERVE_DRAWS];
	int i, n = 0, used3 = 0, used1 = 0;
	struct carve_rng r;

	/* The fleet's shapes; a draw that would overrun the budget is skipped. */
	carve_rng_seed_stream(&r, seed, S_FLEET);
	for (i = 0; i < SERVE_DRAWS; i++) {
		struct service sv;

		if (unif(&r) < 0.7) {
			sv.gres = CARVE_RES_NAME_MIG_PREFIX "3g.40gb";
			sv.count = 1 + pick(&r, w3g, 4);
			sv.cpu = 8000;
			sv.mem = 64 * GIB;
			if (used3 + sv.count > SERVE_3G_MAX)
				continue;
			used3 += sv.count;
		} else {
			sv.gres = CARVE_RES_NAME_MIG_PREFIX "1g.10gb";
			sv.count = unif(&r) < 0.7 ? 1 : 2;
			sv.cpu = 4000;
			sv.mem = 16 * GIB;
			if (used1 + sv.count > SERVE_1G_MAX)
				continue;
			used1 += sv.count;
		}
		fleet[n++] = sv;
	}
	/* Their releases: the first in the first half hour. */
	carve_rng_seed_stream(&r, seed, S_SERVE);
	for (i = 0; i < n; i++) {
		double t = unif_ab(&r, 0, 1800), next;

		for (;;) {
			next = next_work(&r, t + lognorm(&r, 2 * DAY, 0.5, 0.5 * DAY, 7 * DAY));
			if (next >= end) {
				serve_release(g, &fleet[i], &r, t, end, k);
				break;
			}
			serve_release(g, &fleet[i], &r, t, next, k);
			t = next;
		}
	}
}

/* production: fine-tuning runs on 3g.40gb slices. */
static void gen_finetune(struct gen *g, uint64_t seed, double end)
{
	static const double wpods[] = {0.3, 0.35, 0.1, 0.25};
	struct carve_rng r;
	double t = 0.0;
	int k = 0;

	carve_rng_seed_stream(&r, seed, S_FINETUNE);
	while ((t = next_arrival(&r, rate_finetune, 0.8, t, end)) >= 0) {
		struct gjob *j = gen_add(g);

		if (!j)
			return;
		snprintf(j->name, sizeof(j->name), "prod-finetune-%04d", ++k);
		j->ns = "team-production";
		j->queue = "production";
		j->cls = "fine-tuning";
		j->priority = 1000;
		j->arrival = secs(t);
		j->count = j->min_count = 1 + pick(&r, wpods, 4);
		j->duration = secs(lognorm(&r, 2 * HOUR, 0.6, 0.5 * HOUR, 8 * HOUR));
		j->demand = dem(unif_ab(&r, 0.8, 0.95));
		j->checkpoint = true;
		j->gres = CARVE_RES_NAME_MIG_PREFIX "3g.40gb";
		j->gpus = 1000;
		j->cpu = 8000;
		j->mem = 64 * GIB;
	}
}

/* dev: interactive notebooks on time-sliced L40S replicas. */
static void gen_notebook(struct gen *g, uint64_t seed, double end)
{
	struct carve_rng r;
	double t = 0.0;
	int k = 0;

	carve_rng_seed_stream(&r, seed, S_NOTEBOOK);
	while ((t = next_arrival(&r, rate_notebook, 36.0, t, end)) >= 0) {
		struct gjob *j = gen_add(g);

		if (!j)
			return;
		snprintf(j->name, sizeof(j->name), "dev-nb-%05d", ++k);
		j->ns = "team-dev";
		j->queue = "dev";
		j->cls = "notebook";
		j->priority = 0;
		j->arrival = secs(t);
		j->count = j->min_count = unif(&r) < 0.85 ? 1 : 2;
		j->duration = secs(lognorm(&r, 60 * 60, 0.5, 20 * 60, 2 * HOUR));
		j->demand = dem(unif_ab(&r, 0.1, 0.3));
		j->checkpoint = false;
		j->gres = CARVE_RES_NAME_GPU;
		j->gpus = 1000;
		j->cpu = 4000;
		j->mem = 32 * GIB;
	}
}

static int cmp_gjob(const void *a, const void *b)
{
	const struct gjob *x = a, *y = b;

	if (x->arrival != y->arrival)
		return x->arrival < y->arrival ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int add_all(struct carve_jobs *js, struct gen *g, struct carve_error *err)
{
	size_t i;
	int rc;

	qsort(g->v, g->n, sizeof(*g->v), cmp_gjob);
	for (i = 0; i < g->n; i++) {
		const struct gjob *x = &g->v[i];
		struct carve_req reqs[3] = {
			{CARVE_RES_NAME_CPU, x->cpu}, {CARVE_RES_NAME_MEMORY, x->mem}, {x->gres, x->gpus},
		};
		struct carve_job_podset ps;
		struct carve_job j;

		memset(&ps, 0, sizeof(ps));
		memset(&j, 0, sizeof(j));
		ps.count = x->count;
		ps.min_count = x->min_count;
		ps.nreqs = 3;
		ps.reqs = reqs;
		j.name = x->name;
		j.ns = x->ns;
		j.queue = x->queue;
		j.job_class = x->cls;
		j.priority = x->priority;
		j.arrival = x->arrival;
		j.duration = x->duration;
		j.demand = x->demand;
		j.checkpoint = x->checkpoint;
		j.npodsets = 1;
		j.podsets = &ps;
		rc = carve_jobs_add(js, &j, err);
		if (rc < 0)
			return rc;
	}
	return (int)g->n;
}

int carve_tracegen(struct carve_jobs *js, const char *scenario, int days, uint64_t seed,
		   struct carve_error *err)
{
	struct gen g = {NULL, 0, 0, false};
	double end = days * DAY;
	int k = 0, rc;

	if (!js || !scenario)
		return carve_errorf(err, CARVE_EINVAL, "no job list or no scenario");
	if (strcmp(scenario, "seed"))
		return carve_errorf(err, CARVE_ENOTFOUND, "unknown scenario '%s' (known: seed)",
				    scenario);
	if (days < 1 || days > CARVE_TRACEGEN_MAX_DAYS)
		return carve_errorf(err, CARVE_EINVAL, "days: %d is outside 1..%d", days,
				    CARVE_TRACEGEN_MAX_DAYS);
	gen_train(&g, seed, end);
	gen_eval(&g, seed, end);
	gen_serve(&g, seed, end, &k);
	gen_finetune(&g, seed, end);
	gen_notebook(&g, seed, end);
	if (g.oom)
		rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
	else
		rc = add_all(js, &g, err);
	carve_free(g.v);
	return rc;
}
