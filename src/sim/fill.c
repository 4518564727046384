/*
 * fill.c - the FGD paper's fill experiment (include/carve/fill.h), as
 * ../shared/reference/fgd.md section 6 describes the simulator's runs:
 *
 *   1. typical task types of the whole task list (once, at create);
 *   2. per run, a generator seeded with the run's seed: the tasks sorted by
 *      name, then shuffled (Fisher-Yates);
 *   3. "workload tuning": while the running GPU request stays within
 *      tune_ratio x capacity, draw a task uniformly (with replacement) from
 *      the original list and append a clone; stop at the first draw that
 *      would exceed it.  The check adds the draw's per-GPU milli, not its
 *      total (the simulator's quirk, kept: multi-GPU clones can overshoot
 *      by a few GPUs).  A list already above the target loses uniformly
 *      drawn tasks until it is not;
 *   4. a fresh placer (its tie-break order seeded from the same generator)
 *      with the typical types as its mix; tasks submitted one by one, a task
 *      no node takes is dropped;
 *   5. after each submission: arrived GPU milli (every submitted task's
 *      request, dropped ones included), allocated GPU milli (capacity minus
 *      what the placer has free) and the cluster fragmentation F, binned by
 *      arrived % of capacity.
 *
 * The random generator is splitmix64 (carve_splitmix64; Go's math/rand
 * sequence is not reproduced: compare distributions over seeds, fgd.md
 * section 8).
 *
 * Ownership: the fill borrows cluster and tasks; it owns the mapped
 * requests, the mix and per-run scratch (the tuned order grows to the
 * longest run's length and is kept).  A run allocates its placer, its
 * bucket sums and its result; submitting a task allocates nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "carve/fill.h"
#include "carve/frag.h"
#include "carve/gpumodel.h"
#include "carve/place.h"
#include "carve/quantity.h"
#include "carve/rng.h"

#define DEF_RATIO 1.3
#define DEF_PCT 95.0
/* The simulator's allocatable pods per node. */
#define NODE_PODS 1001
#define MIB_MILLI (1024LL * 1024 * 1000)

struct carve_fill {
	const struct carve_cluster *c;
	const struct carve_task *tasks;
	size_t n;
	struct carve_pod_req *reqs;   /* per task */
	int64_t *gmilli;              /* per task: num_gpu * gpu_milli */
	size_t *byname;               /* task indices sorted by name */
	size_t ntypes;
	struct carve_pod_req *types;  /* the mix: typical types' requests */
	double *prob;
	size_t *type_task;
	int64_t cap;                  /* GPU capacity, milli */
	int64_t total;                /* the list's GPU request, milli */
	double ratio;
	/* per-run scratch */
	size_t *order, norder, caporder;
	int64_t *nfree;               /* per node: free GPU milli */
	double *fnode;                /* per node: F_n */
};

/* ---- generator: splitmix64 (include/carve/rng.h) ---------------------------------- */

/* Uniform in [0, n), n > 0. */
static size_t below(uint64_t *x, size_t n)
{
	return (size_t)carve_splitmix64_below(x, n);
}

/* MiB as milli-bytes, saturating (the loaders keep it in range anyway). */
static int64_t mib_milli(int64_t mib)
{
	return carve_qty_sat_mul(mib, MIB_MILLI);
}

/* ---- the cluster ---------------------------------------------------------------- */

struct carve_cluster *carve_fill_cluster_csv(const struct carve_mf_csvnode *rows, size_t n,
					     struct carve_error *err)
{
	struct carve_cluster *c = carve_cluster_create();
	struct carve_gpu_spec *g = NULL;
	size_t i, maxg = 0;
	int k;

	for (i = 0; i < n; i++) {
		/* The bound and message of carve validate (carve/manifest.h). */
		if (rows[i].gpus > CARVE_NODE_MAX_GPUS) {
			carve_errorf(err, CARVE_EINVAL, "node %s: %d GPUs per node is more than %d",
				     rows[i].name, rows[i].gpus, CARVE_NODE_MAX_GPUS);
			carve_cluster_destroy(c);
			return NULL;
		}
		if (rows[i].gpus > 0 && (size_t)rows[i].gpus > maxg)
			maxg = (size_t)rows[i].gpus;
	}
	g = carve_calloc(maxg + 1, sizeof(*g));
	if (!c || !g) {
		carve_errorf(err, CARVE_ENOMEM, "out of memory");
		goto out_fail;
	}
	for (i = 0; i < n; i++) {
		const struct carve_mf_csvnode *r = &rows[i];
		const struct carve_gpu_model *gm = r->gpus > 0 ? carve_gpu_model_find(r->model) : NULL;
		struct carve_node_spec s;

		memset(&s, 0, sizeof(s));
		s.name = r->name;
		s.pos = r->pos;
		s.cpu_milli = r->cpu_milli;
		s.memory_milli = mib_milli(r->memory_mib);
		s.pods = NODE_PODS;
		s.ngpus = r->gpus > 0 ? (size_t)r->gpus : 0;
		s.gpus = g;
		for (k = 0; k < r->gpus; k++) {
			memset(&g[k], 0, sizeof(g[k]));
			g[k].model = gm ? gm->name : r->model;
			g[k].memory_mib = gm ? gm->memory_mib : 0;
			g[k].sharing = CARVE_SHARE_FRACTION;
		}
		if (carve_cluster_add_node(c, &s, err) < 0)
			goto out_fail;
	}
	carve_free(g);
	return c;
out_fail:
	carve_free(g);
	carve_cluster_destroy(c);
	return NULL;
}

/* ---- create ------------------------------------------------------------------------ */

struct named {
	const char *name;
	size_t idx;
};

static int cmp_name(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	return r ? r : (x->idx > y->idx) - (x->idx < y->idx);
}

/* f->byname: task indices by name (then position). */
static int sort_by_name(struct carve_fill *f)
{
	struct named *v = carve_calloc(f->n, sizeof(*v));
	size_t i;

	if (!v)
		return CARVE_ENOMEM;
	for (i = 0; i < f->n; i++) {
		v[i].name = f->tasks[i].name ? f->tasks[i].name : "";
		v[i].idx = i;
	}
	qsort(v, f->n, sizeof(*v), cmp_name);
	for (i = 0; i < f->n; i++)
		f->byname[i] = v[i].idx;
	carve_free(v);
	return 0;
}

static int map_task(const struct carve_task *t, struct carve_pod_req *r, struct carve_error *err)
{
	memset(r, 0, sizeof(*r));
	if (t->cpu_milli < 0 || t->memory_mib < 0 || t->num_gpu < 0 ||
	    t->num_gpu > CARVE_POD_MAX_GPUS || t->gpu_milli < 0 || t->gpu_milli > 1000 ||
	    (t->num_gpu > 0 && t->gpu_milli == 0))
		return carve_errorf(err, CARVE_EINVAL, "task %s: a request carve cannot place",
				    t->name ? t->name : "(unnamed)");
	r->cpu_milli = t->cpu_milli;
	r->memory_milli = mib_milli(t->memory_mib);
	if (t->num_gpu == 0) {
		r->gpu = CARVE_GREQ_NONE;
	} else if (t->num_gpu == 1 && t->gpu_milli < 1000) {
		r->gpu = CARVE_GREQ_FRACTION;
		r->milli = t->gpu_milli;
	} else {
		r->gpu = CARVE_GREQ_WHOLE;
		r->count = t->num_gpu;
	}
	r->nmodels = t->nmodels;
	r->models = t->models;
	return 0;
}

/* The typical task types of the whole list become the mix. */
static int make_types(struct carve_fill *f, double pct)
{
	struct carve_frag_task_key *keys = carve_calloc(f->n, sizeof(*keys));
	struct carve_frag_typical *typ = carve_calloc(f->n, sizeof(*typ));
	long kept;
	size_t i;
	int rc = CARVE_ENOMEM;

	if (!keys || !typ)
		goto out;
	for (i = 0; i < f->n; i++) {
		keys[i].cpu_milli = f->tasks[i].cpu_milli;
		keys[i].gpu_milli = f->tasks[i].gpu_milli;
		keys[i].num_gpu = f->tasks[i].num_gpu;
		keys[i].spec = f->tasks[i].gpu_spec;
	}
	kept = carve_frag_typical_types(keys, f->n, pct, typ);
	if (kept < 0)
		goto out;
	f->ntypes = (size_t)kept;
	f->types = carve_calloc(f->ntypes + 1, sizeof(*f->types));
	f->prob = carve_calloc(f->ntypes + 1, sizeof(*f->prob));
	f->type_task = carve_calloc(f->ntypes + 1, sizeof(*f->type_task));
	if (!f->types || !f->prob || !f->type_task)
		goto out;
	for (i = 0; i < f->ntypes; i++) {
		f->types[i] = f->reqs[typ[i].task];
		f->types[i].memory_milli = 0; /* not part of a type */
		f->prob[i] = typ[i].prob;
		f->type_task[i] = typ[i].task;
	}
	rc = 0;
out:
	carve_free(keys);
	carve_free(typ);
	return rc;
}

struct carve_fill *carve_fill_create(const struct carve_cluster *c, const struct carve_task *tasks,
				     size_t ntasks, const struct carve_fill_config *cfg,
				     struct carve_error *err)
{
	struct carve_fill *f;
	double pct = cfg && cfg->typical_pct > 0 ? cfg->typical_pct : DEF_PCT;
	size_t i, nn;
	uint32_t g;

	if (!c || !ntasks || !tasks) {
		carve_errorf(err, CARVE_EINVAL, "no cluster or no tasks");
		return NULL;
	}
	f = carve_calloc(1, sizeof(*f));
	if (!f)
		goto out_nomem;
	f->c = c;
	f->tasks = tasks;
	f->n = ntasks;
	f->ratio = cfg && cfg->tune_ratio > 0 ? cfg->tune_ratio : DEF_RATIO;
	for (g = 0; g < carve_cluster_gpu_count(c); g++)
		f->cap += carve_cluster_gpu(c, g)->sharing == CARVE_SHARE_MIG &&
				  !carve_cluster_gpu(c, g)->mig.n ? 0 : 1000;
	if (!f->cap) {
		carve_errorf(err, CARVE_EINVAL, "the cluster has no GPUs");
		goto out_fail;
	}
	nn = carve_cluster_node_count(c);
	f->reqs = carve_calloc(ntasks, sizeof(*f->reqs));
	f->gmilli = carve_calloc(ntasks, sizeof(*f->gmilli));
	f->byname = carve_calloc(ntasks, sizeof(*f->byname));
	f->nfree = carve_calloc(nn + 1, sizeof(*f->nfree));
	f->fnode = carve_calloc(nn + 1, sizeof(*f->fnode));
	if (!f->reqs || !f->gmilli || !f->byname || !f->nfree || !f->fnode)
		goto out_nomem;
	for (i = 0; i < ntasks; i++) {
		if (map_task(&tasks[i], &f->reqs[i], err))
			goto out_fail;
		f->gmilli[i] = (int64_t)tasks[i].num_gpu * tasks[i].gpu_milli;
		f->total += f->gmilli[i];
	}
	if (!f->total) {
		carve_errorf(err, CARVE_EINVAL, "no task requests a GPU");
		goto out_fail;
	}
	if (sort_by_name(f) || make_types(f, pct))
		goto out_nomem;
	return f;
out_nomem:
	carve_errorf(err, CARVE_ENOMEM, "out of memory");
out_fail:
	carve_fill_destroy(f);
	return NULL;
}

void carve_fill_destroy(struct carve_fill *f)
{
	if (!f)
		return;
	carve_free(f->reqs);
	carve_free(f->gmilli);
	carve_free(f->byname);
	carve_free(f->types);
	carve_free(f->prob);
	carve_free(f->type_task);
	carve_free(f->order);
	carve_free(f->nfree);
	carve_free(f->fnode);
	carve_free(f);
}

size_t carve_fill_ntypes(const struct carve_fill *f)
{
	return f ? f->ntypes : 0;
}

bool carve_fill_type(const struct carve_fill *f, size_t i, size_t *task, double *prob)
{
	if (!f || i >= f->ntypes)
		return false;
	if (task)
		*task = f->type_task[i];
	if (prob)
		*prob = f->prob[i];
	return true;
}

void carve_fill_result_cleanup(struct carve_fill_result *r)
{
	if (!r)
		return;
	carve_free(r->have);
	carve_free(r->unalloc_pct);
	carve_free(r->frag_pct);
	memset(r, 0, sizeof(*r));
}

/* ---- one run ---------------------------------------------------------------------- */

static int push(struct carve_fill *f, size_t task)
{
	if (f->norder == f->caporder) {
		size_t cap = f->caporder ? f->caporder * 2 : f->n + 1024;
		size_t *nv = carve_realloc(f->order, cap * sizeof(*nv));

		if (!nv)
			return CARVE_ENOMEM;
		f->order = nv;
		f->caporder = cap;
	}
	f->order[f->norder++] = task;
	return 0;
}

/* Steps 2-3: the shuffled, tuned submission order in f->order; returns the
 * GPU milli it requests in all, or CARVE_ENOMEM. */
static int64_t make_order(struct carve_fill *f, uint64_t *rng)
{
	double target = f->ratio * (double)f->cap;
	int64_t total = f->total;
	size_t i, guard;

	f->norder = 0;
	for (i = 0; i < f->n; i++)
		if (push(f, f->byname[i]))
			return CARVE_ENOMEM;
	for (i = f->n; i > 1; i--) {
		size_t j = below(rng, i), t = f->order[i - 1];

		f->order[i - 1] = f->order[j];
		f->order[j] = t;
	}
	if ((double)total < target) {
		/* Each draw that passes adds a clone; CPU-only draws add no GPU
		 * request, so bound the loop for a list of almost only those. */
		for (guard = 0; guard < 1000 * f->n + 1000000; guard++) {
			size_t k = below(rng, f->n);

			if ((double)(total + f->tasks[k].gpu_milli) > target)
				break;
			total += f->gmilli[k];
			if (push(f, k))
				return CARVE_ENOMEM;
		}
	} else {
		while ((double)total > target && f->norder) {
			size_t k = below(rng, f->norder);

			total -= f->gmilli[f->order[k]];
			memmove(&f->order[k], &f->order[k + 1],
				(f->norder - k - 1) * sizeof(*f->order));
			f->norder--;
		}
	}
	return total;
}

/* Round half to even (Python's round(x, 0)), for x >= 0. */
static size_t bucket_of(double x)
{
	size_t b = (size_t)x;
	double d = x - (double)b;

	if (d > 0.5 || (d == 0.5 && (b & 1)))
		b++;
	return b;
}

struct sums {
	size_t nb;
	double *u, *fr;
	size_t *cnt;
};

static void sums_free(struct sums *s)
{
	carve_free(s->u);
	carve_free(s->fr);
	carve_free(s->cnt);
}

/* Bucket means into out (the simulator's analysis: an empty bucket takes the
 * events of its neighbours). */
static int finish(const struct sums *s, struct carve_fill_result *out)
{
	size_t b;

	out->nbuckets = s->nb;
	out->have = carve_calloc(s->nb, sizeof(*out->have));
	out->unalloc_pct = carve_calloc(s->nb, sizeof(*out->unalloc_pct));
	out->frag_pct = carve_calloc(s->nb, sizeof(*out->frag_pct));
	if (!out->have || !out->unalloc_pct || !out->frag_pct)
		return CARVE_ENOMEM;
	for (b = 0; b < s->nb; b++) {
		size_t lo = b ? b - 1 : 0, hi = b + 1 < s->nb ? b + 1 : b, i, n = 0;
		double u = 0, fr = 0;

		if (s->cnt[b])
			lo = hi = b;
		for (i = lo; i <= hi; i++) {
			n += s->cnt[i];
			u += s->u[i];
			fr += s->fr[i];
		}
		if (!n)
			continue;
		out->have[b] = true;
		out->unalloc_pct[b] = u / (double)n;
		out->frag_pct[b] = fr / (double)n;
	}
	return 0;
}

/* Steps 4-5 on a fresh placer. */
static int submit_all(struct carve_fill *f, struct carve_placer *p, struct sums *s,
		      struct carve_fill_result *out)
{
	double cap = (double)f->cap, frag = 0;
	int64_t arrived = 0, alloc = 0;
	struct carve_pod_place pl;
	size_t i, nn = carve_cluster_node_count(f->c);
	int rc;

	for (i = 0; i < nn; i++) {
		f->nfree[i] = carve_placer_node_gpu_free_milli(p, (uint32_t)i);
		f->fnode[i] = carve_frag_node(p, (uint32_t)i);
		frag += f->fnode[i];
	}
	for (i = 0; i < f->norder; i++) {
		size_t t = f->order[i], b;
		struct carve_pod_group grp = {&f->reqs[t], 1};
		double pct;

		arrived += f->gmilli[t];
		rc = carve_placer_place(p, &grp, 1, NULL, &pl);
		if (rc == 0) {
			int64_t nf = carve_placer_node_gpu_free_milli(p, pl.node);
			double fn = carve_frag_node(p, pl.node);

			alloc += f->nfree[pl.node] - nf;
			f->nfree[pl.node] = nf;
			frag += fn - f->fnode[pl.node];
			f->fnode[pl.node] = fn;
			out->placed++;
		} else if (rc == CARVE_ENOFIT) {
			out->dropped++;
		} else {
			return rc;
		}
		out->submitted++;
		pct = 100.0 * (double)arrived / cap;
		b = bucket_of(pct);
		if (b >= s->nb)
			b = s->nb - 1; /* cannot happen: sized for the whole order */
		s->cnt[b]++;
		s->u[b] += 100.0 - 100.0 * (double)alloc / cap;
		s->fr[b] += 100.0 * frag / cap;
	}
	out->final_arrived_pct = 100.0 * (double)arrived / cap;
	return 0;
}

int carve_fill_run(struct carve_fill *f, const char *policy, uint64_t seed,
		   struct carve_fill_result *out, struct carve_error *err)
{
	struct carve_placer *p = NULL;
	struct sums s;
	uint64_t rng = seed;
	int64_t total;
	int rc;

	if (!f || !out)
		return carve_errorf(err, CARVE_EINVAL, "no fill or no result");
	carve_fill_result_cleanup(out);
	memset(&s, 0, sizeof(s));
	total = make_order(f, &rng);
	if (total < 0)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	p = carve_placer_create(f->c, policy, carve_splitmix64(&rng), err);
	if (!p)
		return err ? err->code : CARVE_EINVAL;
	rc = carve_placer_set_mix(p, f->types, f->prob, f->ntypes);
	if (rc)
		goto out;
	s.nb = (size_t)(100.0 * (double)total / (double)f->cap) + 3;
	s.u = carve_calloc(s.nb, sizeof(*s.u));
	s.fr = carve_calloc(s.nb, sizeof(*s.fr));
	s.cnt = carve_calloc(s.nb, sizeof(*s.cnt));
	rc = CARVE_ENOMEM;
	if (!s.u || !s.fr || !s.cnt)
		goto out;
	out->ntypes = f->ntypes;
	rc = submit_all(f, p, &s, out);
	if (!rc)
		rc = finish(&s, out);
out:
	sums_free(&s);
	carve_placer_destroy(p);
	if (rc) {
		carve_fill_result_cleanup(out);
		return carve_errorf(err, rc, "%s", rc == CARVE_ENOMEM ? "out of memory"
								     : "a task carve cannot place");
	}
	return 0;
}

/* ---- policies ------------------------------------------------------------------------ */

int carve_fill_check_policies(const char *const *pols, size_t n, struct carve_error *err)
{
	size_t i, k;

	if (!n)
		return carve_errorf(err, CARVE_EINVAL, "no policy given");
	for (i = 0; i < n; i++) {
		if (!pols[i] || !*pols[i])
			return carve_errorf(err, CARVE_EINVAL, "policy %zu is empty", i + 1);
		for (k = 0; k < i; k++)
			if (!strcmp(pols[i], pols[k]))
				return carve_errorf(err, CARVE_EINVAL, "policy '%s' is given twice "
						    "(each policy is run once per seed)", pols[i]);
	}
	return 0;
}
