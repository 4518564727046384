/*
 * jobs.c - the job list of include/carve/jobs.h: creation, deep copies into
 * the list's arena, and the invariants every job in a list keeps.
 *
 * Ownership: the job array is one carve_realloc'd block; everything a job
 * points to lives in the list's arena.  Both go with carve_jobs_destroy().
 * Names are checked for uniqueness with a linear-probing hash of the
 * names' offsets into the job array.
 * File loaders (CSV, YAML, openb) build a struct carve_job on the stack and
 * call carve_jobs_add(), so the invariants are checked in one place.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/arena.h"
#include "carve/jobs.h"
#include "jobs_int.h"

struct carve_jobs_int {
	struct carve_arena arena;
	size_t cap;
	size_t hcap;          /* power of two, 0 before the first add */
	uint32_t *hash;       /* job index + 1, 0 = empty */
};

struct carve_jobs *carve_jobs_create(void)
{
	struct carve_jobs *js = carve_malloc(sizeof(*js));

	if (!js)
		return NULL;
	memset(js, 0, sizeof(*js));
	js->priv = carve_malloc(sizeof(*js->priv));
	if (!js->priv) {
		carve_free(js);
		return NULL;
	}
	memset(js->priv, 0, sizeof(*js->priv));
	carve_arena_init(&js->priv->arena);
	return js;
}

void carve_jobs_destroy(struct carve_jobs *js)
{
	if (!js)
		return;
	carve_arena_cleanup(&js->priv->arena);
	carve_free(js->priv->hash);
	carve_free(js->priv);
	carve_free(js->jobs);
	carve_free(js);
}

struct carve_arena *carve__jobs_arena(struct carve_jobs *js)
{
	return &js->priv->arena;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* A job's identity, as Kubernetes names objects: its name within its
 * namespace (NULL or empty: "default"). */
static const char *ns_of(const char *ns)
{
	return ns && *ns ? ns : "default";
}

static uint64_t hash_job(const char *ns, const char *name)
{
	return hash_str(name) ^ (hash_str(ns_of(ns)) * 31);
}

/* Index of the job named name in namespace ns, or -1. */
static long find(const struct carve_jobs *js, const char *ns, const char *name)
{
	const struct carve_jobs_int *p = js->priv;
	size_t i;

	if (!p->hcap)
		return -1;
	for (i = hash_job(ns, name) & (p->hcap - 1); p->hash[i]; i = (i + 1) & (p->hcap - 1)) {
		const struct carve_job *j = &js->jobs[p->hash[i] - 1];

		if (!strcmp(j->name, name) && !strcmp(j->ns, ns_of(ns)))
			return (long)p->hash[i] - 1;
	}
	return -1;
}

static int rehash(struct carve_jobs *js, size_t hcap)
{
	struct carve_jobs_int *p = js->priv;
	uint32_t *h = carve_malloc(hcap * sizeof(*h));
	size_t k;

	if (!h)
		return CARVE_ENOMEM;
	memset(h, 0, hcap * sizeof(*h));
	for (k = 0; k < js->n; k++) {
		size_t i = hash_job(js->jobs[k].ns, js->jobs[k].name) & (hcap - 1);

		while (h[i])
			i = (i + 1) & (hcap - 1);
		h[i] = (uint32_t)k + 1;
	}
	carve_free(p->hash);
	p->hash = h;
	p->hcap = hcap;
	return 0;
}

static const char *dup(struct carve_arena *a, const char *s, bool *oom)
{
	char *c;

	if (!s)
		return NULL;
	c = carve_arena_strdup(a, s);
	if (!c)
		*oom = true;
	return c;
}

static void *dup_mem(struct carve_arena *a, const void *src, size_t n, size_t size, bool *oom)
{
	void *c;

	if (!n)
		return NULL;
	c = carve_arena_alloc(a, n * size);
	if (!c) {
		*oom = true;
		return NULL;
	}
	memcpy(c, src, n * size);
	return c;
}

bool carve__job_class_ok(const char *s)
{
	size_t n;

	for (n = 0; s[n]; n++)
		if (!isalnum((unsigned char)s[n]) && s[n] != '-' && s[n] != '_' && s[n] != '.')
			return false;
	return n >= 1 && n <= 63;
}

static int check(const struct carve_job *j, struct carve_error *err)
{
	size_t i, k;

	if (!j->name || !*j->name)
		return carve_errorf(err, CARVE_EINVAL, "name: must not be empty");
	if (j->job_class && !carve__job_class_ok(j->job_class))
		return carve_errorf(err, CARVE_EINVAL, "class: '%s' is not 1-63 letters, digits, "
				    "'-', '_' or '.'", j->job_class);
	if (j->arrival < 0)
		return carve_errorf(err, CARVE_EINVAL, "arrival: must not be negative (got %lld)",
				    (long long)j->arrival);
	if (j->duration <= 0)
		return carve_errorf(err, CARVE_EINVAL, "duration: must be positive (got %lld)",
				    (long long)j->duration);
	if (!(j->demand >= 0.0 && j->demand <= 1.0) || isnan(j->demand))
		return carve_errorf(err, CARVE_EINVAL, "demand: must be in (0, 1] (got %g)",
				    j->demand);
	if (!j->npodsets || !j->podsets)
		return carve_errorf(err, CARVE_EINVAL, "podSets: at least one is needed");
	if (j->npodsets > 8)
		return carve_errorf(err, CARVE_EINVAL, "podSets: at most 8 (got %zu)", j->npodsets);
	for (i = 0; i < j->npodsets; i++) {
		const struct carve_job_podset *ps = &j->podsets[i];

		if (ps->count < 1)
			return carve_errorf(err, CARVE_EINVAL, "podSets[%zu].count: must be at least 1 "
					    "(got %d)", i, (int)ps->count);
		if (ps->min_count < 0 || ps->min_count > ps->count)
			return carve_errorf(err, CARVE_EINVAL, "podSets[%zu].minCount: must be in 1..%d "
					    "(got %d)", i, (int)ps->count, (int)ps->min_count);
		if (ps->gpu_milli < 0 || ps->gpu_milli > 999)
			return carve_errorf(err, CARVE_EINVAL, "podSets[%zu].gpuFraction: must be below "
					    "one GPU (got %d milli)", i, (int)ps->gpu_milli);
		if (ps->nreqs && !ps->reqs)
			return carve_errorf(err, CARVE_EINVAL, "podSets[%zu].requests: missing", i);
		for (k = 0; k < ps->nreqs; k++) {
			if (!ps->reqs[k].name || !*ps->reqs[k].name)
				return carve_errorf(err, CARVE_EINVAL, "podSets[%zu].requests: empty "
						    "resource name", i);
			if (ps->reqs[k].milli < 0)
				return carve_errorf(err, CARVE_EINVAL, "podSets[%zu].requests.%s: must "
						    "not be negative", i, ps->reqs[k].name);
		}
		for (k = 0; k < i; k++)
			if (ps->name && j->podsets[k].name && !strcmp(ps->name, j->podsets[k].name))
				return carve_errorf(err, CARVE_EINVAL, "podSets[%zu].name: \"%s\" is "
						    "used twice", i, ps->name);
	}
	return 0;
}

/* Deep copy of n node-affinity terms into a. */
static const struct carve_match_term *dup_terms(struct carve_arena *a,
						const struct carve_match_term *t, size_t n, bool *oom)
{
	struct carve_match_term *v = dup_mem(a, t, n, sizeof(*v), oom);
	size_t i, k, x;

	for (i = 0; v && i < n; i++) {
		struct carve_match_expr *e = dup_mem(a, t[i].exprs, t[i].n, sizeof(*e), oom);

		for (k = 0; e && k < t[i].n; k++) {
			const char **vals = dup_mem(a, e[k].values, e[k].nvalues, sizeof(*vals), oom);

			e[k].key = dup(a, e[k].key, oom);
			e[k].op = dup(a, e[k].op, oom);
			for (x = 0; vals && x < e[k].nvalues; x++)
				vals[x] = dup(a, e[k].values[x], oom);
			e[k].values = vals;
		}
		v[i].exprs = e;
	}
	return v;
}

/* Deep copy of n tolerations into a. */
static const struct carve_toleration_spec *dup_tols(struct carve_arena *a,
						    const struct carve_toleration_spec *t,
						    size_t n, bool *oom)
{
	struct carve_toleration_spec *v = dup_mem(a, t, n, sizeof(*v), oom);
	size_t i;

	for (i = 0; v && i < n; i++) {
		v[i].key = dup(a, t[i].key, oom);
		v[i].op = dup(a, t[i].op, oom);
		v[i].value = dup(a, t[i].value, oom);
		v[i].effect = dup(a, t[i].effect, oom);
	}
	return v;
}

int carve_jobs_add(struct carve_jobs *js, const struct carve_job *j, struct carve_error *err)
{
	struct carve_jobs_int *p = js->priv;
	struct carve_arena *a = &p->arena;
	struct carve_job_podset *ps;
	struct carve_job *c;
	bool oom = false;
	size_t i, k;
	int rc;

	if ((rc = check(j, err)))
		return rc;
	if (find(js, j->ns, j->name) >= 0)
		return carve_errorf(err, CARVE_EEXISTS, "name: job \"%s\" is already in the trace",
				    j->name);
	if (js->n >= UINT32_MAX - 1)
		return carve_errorf(err, CARVE_EFULL, "too many jobs");
	if (js->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct carve_job *v = carve_realloc(js->jobs, cap * sizeof(*v));

		if (!v)
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
		js->jobs = v;
		p->cap = cap;
	}
	if ((js->n + 1) * 2 > p->hcap && rehash(js, p->hcap ? 2 * p->hcap : 128))
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");

	c = &js->jobs[js->n];
	*c = *j;
	c->name = dup(a, j->name, &oom);
	c->ns = dup(a, j->ns && *j->ns ? j->ns : "default", &oom);
	c->queue = dup(a, j->queue, &oom);
	c->cluster_queue = dup(a, j->cluster_queue, &oom);
	c->job_class = dup(a, j->job_class, &oom);
	if (c->demand == 0.0)
		c->demand = 1.0;
	ps = dup_mem(a, j->podsets, j->npodsets, sizeof(*ps), &oom);
	c->podsets = ps;
	for (i = 0; ps && i < j->npodsets; i++) {
		const struct carve_job_podset *s = &j->podsets[i];
		struct carve_req *reqs;
		struct carve_label *sel;
		const char **models;

		if (s->name) {
			ps[i].name = dup(a, s->name, &oom);
		} else {
			char buf[24];

			snprintf(buf, sizeof(buf), i ? "ps%zu" : "main", i);
			ps[i].name = dup(a, buf, &oom);
		}
		if (!ps[i].min_count)
			ps[i].min_count = ps[i].count;
		reqs = dup_mem(a, s->reqs, s->nreqs, sizeof(*reqs), &oom);
		for (k = 0; reqs && k < s->nreqs; k++)
			reqs[k].name = dup(a, s->reqs[k].name, &oom);
		ps[i].reqs = reqs;
		sel = dup_mem(a, s->selector, s->nselector, sizeof(*sel), &oom);
		for (k = 0; sel && k < s->nselector; k++) {
			sel[k].key = dup(a, s->selector[k].key, &oom);
			sel[k].value = dup(a, s->selector[k].value, &oom);
		}
		ps[i].selector = sel;
		models = dup_mem(a, s->models, s->nmodels, sizeof(*models), &oom);
		for (k = 0; models && k < s->nmodels; k++)
			models[k] = dup(a, s->models[k], &oom);
		ps[i].models = models;
		ps[i].topology_level = dup(a, s->topology_level, &oom);
		ps[i].terms = dup_terms(a, s->terms, s->nterms, &oom);
		ps[i].tolerations = dup_tols(a, s->tolerations, s->ntolerations, &oom);
	}
	if (oom)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");

	/* Only now is the job visible. */
	{
		size_t h = hash_job(c->ns, c->name) & (p->hcap - 1);

		while (p->hash[h])
			h = (h + 1) & (p->hcap - 1);
		p->hash[h] = (uint32_t)js->n + 1;
	}
	return (int)js->n++;
}
