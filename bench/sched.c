/*
 * sched.c - carve-bench-sched: the scheduler's own work per bound pod,
 * on the path `carve scheduler` takes (src/kube/sched.c, act.c), without
 * an API server: the objects' JSON text as a watch delivers it, parsed
 * (json_loads) and held as the stores hold them, a manifest set rebuilt
 * from every stored object (carve_manifests_add_json), the plan
 * (carve_plan_build), then per bind the Binding body built as act.c
 * builds it and written out as it goes on the wire (json_dumps), and a
 * 201 answer parsed.  Issue 14's figures:
 *
 *   1. CPU per bound pod, 5,000 nodes and 50,000 pending pods, all bound
 *      in one cycle (target <= 50 us), with each stage's share;
 *   2. the time from a 500-pod gang's last pod arriving to its last
 *      Binding body ready, on the cluster left by figure 1 (50,000 pods
 *      bound) and on an empty one (target <= 50 ms plus round trips);
 *   3. memory per pod held: peak RSS over the run minus RSS before the
 *      first pod was parsed, divided by the pods held (target <= 2 KiB).
 *
 * A baseline in the same process: the same objects read as one YAML
 * stream (carve_manifests_load_yaml, the path of `carve admit`), then the
 * same plan, so the JSON path's cost is seen beside the file path's.
 *
 *   carve-bench-sched [--quick] [--wall] [--count-bytes] [--nodes N]
 *                     [--pods N] [--gang N] [--out FILE]
 *                     [--emit-json FILE] [--emit-gang FILE]
 *
 * --emit-json writes the objects instead of measuring (for
 * bench/sched_e2e.sh, which loads them into the fake API server): a v1
 * List of the four namespaces, the cluster and the pending pods, without
 * resourceVersion and uid (a create must not set them); --emit-gang a
 * List of figure 2's gang (--gang pods named big-train-K).
 * Exit codes: 0 ok, 1 a step failed (or bound fewer pods than asked),
 * 2 usage.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include <jansson.h>

#include "bench.h"
#include "carve/manifest.h"
#include "carve/plan.h"
#include "kgen.h"

/* A cycle cap no plan reaches: one plan binds everything that fits. */
#define ALL_CYCLES 1000000

/* Bytes jansson holds (requested sizes), counted like carve's allocator. */
static int64_t json_live;

static void *jmalloc(size_t n)
{
	char *p = malloc(n + 16);

	if (!p)
		return NULL;
	memcpy(p, &n, sizeof(n));
	json_live += (int64_t)n;
	return p + 16;
}

static void jfree(void *q)
{
	size_t n;

	if (!q)
		return;
	memcpy(&n, (char *)q - 16, sizeof(n));
	json_live -= (int64_t)n;
	free((char *)q - 16);
}

static bool counting; /* jmalloc/jfree installed */

/* Frees what json_dumps returned, with the allocator jansson used. */
static void dumps_free(char *t)
{
	if (counting)
		jfree(t);
	else
		free(t);
}

struct held {
	json_t **obj;            /* the stores: every object, parsed */
	size_t n, cap;
};

static int hold(struct held *h, json_t *o)
{
	if (!o)
		return -1;
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 1024;
		json_t **no = realloc(h->obj, cap * sizeof(*no));
		if (!no)
			return -1;
		h->obj = no;
		h->cap = cap;
	}
	h->obj[h->n++] = o;
	return 0;
}

static void held_free(struct held *h)
{
	for (size_t i = 0; i < h->n; i++)
		json_decref(h->obj[i]);
	free(h->obj);
	memset(h, 0, sizeof(*h));
}

/* VmRSS or VmHWM of this process in bytes; 0 when unreadable. */
static double proc_kib(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double v = 0;
	size_t kl = strlen(key);

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtod(line + kl + 1, NULL) * 1024;
			break;
		}
	fclose(f);
	return v;
}

/* Resets VmHWM to the current RSS (Linux >= 4.0), so the next peak is this run's. */
static void reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (f) {
		fputs("5", f);
		fclose(f);
	}
}

static double bench_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *meta_str(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(json_object_get(o, "metadata"), k));

	return v ? v : "";
}

/* Every stored object into a fresh manifest set, as sched.c does each
 * cycle; source "Kind ns/name".  NULL on failure. */
static struct carve_manifests *rebuild(const struct held *h)
{
	struct carve_manifests *m = carve_manifests_create();
	char src[400];

	if (!m)
		return NULL;
	for (size_t i = 0; i < h->n; i++) {
		const json_t *o = h->obj[i];
		const char *ns = meta_str(o, "namespace");
		snprintf(src, sizeof(src), "%s %s%s%s", json_string_value(json_object_get(o, "kind")), ns,
			 *ns ? "/" : "", meta_str(o, "name"));
		if (carve_manifests_add_json(m, src, o)) {
			carve_manifests_destroy(m);
			return NULL;
		}
	}
	return m;
}

/* The Binding act.c sends for b, as text on the wire; NULL when out of memory. */
static char *binding_text(const struct carve_plan_bind *b)
{
	json_t *ann = json_object(), *body;
	char *t;

	if (!ann)
		return NULL;
	json_object_set_new(ann, "carve.dev/devices", json_string(b->devices ? b->devices : ""));
	if (b->flavors && *b->flavors)
		json_object_set_new(ann, "carve.dev/flavors", json_string(b->flavors));
	body = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:o}, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind",
			 "Binding", "metadata", "name", b->pod.name, "namespace", b->pod.ns, "uid",
			 b->pod.uid ? b->pod.uid : "", "annotations", ann, "target", "apiVersion", "v1",
			 "kind", "Node", "name", b->node);
	if (!body)
		return NULL;
	t = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	return t;
}

/* What the API server answers a Binding (201 Created). */
static const char created[] =
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\",\"code\":201}";

/* The store's index: "ns/name" -> position in held. */
static int index_put(json_t *ix, const json_t *o, size_t pos)
{
	char key[400];

	snprintf(key, sizeof(key), "%s/%s", meta_str(o, "namespace"), meta_str(o, "name"));
	return json_object_set_new(ix, key, json_integer((json_int_t)pos));
}

/*
 * Carries out a plan's binds as act.c does, minus the network: body and
 * path built, the answer parsed, the stored pod replaced by its bound form.
 * Returns the binds done, or -1.
 */
static long act(const struct carve_plan *p, struct held *h, json_t *ix, size_t *wire_bytes)
{
	char path[600], key[400];

	for (size_t i = 0; i < p->nbinds; i++) {
		const struct carve_plan_bind *b = &p->binds[i];
		char *t = binding_text(b);
		json_t *ans, *pos, *bound;
		if (!t)
			return -1;
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/binding", b->pod.ns, b->pod.name);
		*wire_bytes += strlen(t) + strlen(path);
		dumps_free(t);
		ans = json_loads(created, 0, NULL);
		if (!ans || json_integer_value(json_object_get(ans, "code")) != 201)
			return -1;
		json_decref(ans);
		snprintf(key, sizeof(key), "%s/%s", b->pod.ns, b->pod.name);
		pos = json_object_get(ix, key);
		if (!pos)
			return -1;
		size_t at = (size_t)json_integer_value(pos);
		bound = kgen_bound(h->obj[at], b->node, b->devices ? b->devices : "", b->flavors);
		if (!bound)
			return -1;
		json_decref(h->obj[at]);
		h->obj[at] = bound;
	}
	return (long)p->nbinds;
}

struct texts {
	char **t;
	size_t n;
};

static int texts_add(struct texts *x, json_t *o)
{
	char *t;

	if (!o)
		return -1;
	t = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!t)
		return -1;
	x->t[x->n++] = t;
	return 0;
}

static void texts_free(struct texts *x)
{
	for (size_t i = 0; i < x->n; i++)
		dumps_free(x->t[i]);
	free(x->t);
}

/* Parses texts [from, to) into the stores; -1 on a parse failure. */
static int parse_into(const struct texts *x, size_t from, size_t to, struct held *h, json_t *ix)
{
	for (size_t i = from; i < to; i++) {
		json_error_t e;
		json_t *o = json_loads(x->t[i], 0, &e);
		if (!o) {
			fprintf(stderr, "carve-bench-sched: object %zu: %s\n", i, e.text);
			return -1;
		}
		if (index_put(ix, o, h->n) || hold(h, o))
			return -1;
	}
	return 0;
}

/* max_cycles 0: the plan's default, as the driver runs it. */
static struct carve_plan *plan(struct carve_manifests *m, int max_cycles)
{
	struct carve_plan_opts po = { .scheduler_name = "carve", .queues = CARVE_QUEUES_CARVE,
				      .policy = "binpack", .seed = 1, .now = 1796300000,
				      .max_cycles = max_cycles };
	struct carve_plan *p = NULL;
	struct carve_error err = { 0 };

	if (carve_plan_build(m, &po, NULL, &p, &err)) {
		fprintf(stderr, "carve-bench-sched: plan: %s\n", err.text);
		return NULL;
	}
	return p;
}

struct opts {
	struct bench_opts b;
	struct kgen_opts k;
	int gang;                 /* figure 2's gang size */
	const char *out;
	const char *emit, *emit_gang; /* --emit-json, --emit-gang */
	bool count_bytes;         /* count carve's and jansson's bytes (costs time and RSS) */
};

struct figs {
	double us_per_pod, binds, parse_s, add_s, plan_s, act_s, total_s, wall_s, wire_bytes;
	double gang_ms, gang_add_ms, gang_plan_ms, gang_act_ms, gang_empty_ms;
	double rss_per_pod, rss_delta, carve_per_pod, json_per_pod, rss_held_per_pod;
	double drain_us_per_pod, drain_binds, drain_plan_s;
	int cycles, drain_plans;
	double yaml_load_s, json_load_s, yaml_plan_s;
	int diags;
};

/* Figure 1 (and 3): one plan over every object, all cycles it takes to
 * bind every pod. */
static int fig_cycle(const struct opts *o, const struct texts *x, size_t ncluster, struct held *h, json_t *ix,
		     struct figs *f)
{
	double rss0, t0, t1, t2, t3, t4, w0;
	int64_t live0, jlive0;
	struct carve_manifests *m;
	struct carve_plan *p;
	size_t wire = 0;
	long nb;

	/* the cluster's objects are held before the pods arrive */
	if (parse_into(x, 0, ncluster, h, ix))
		return -1;
	reset_peak();
	rss0 = proc_kib("VmRSS");
	live0 = bench_alloc_live();
	jlive0 = json_live;
	w0 = bench_wall();
	t0 = bench_now(&o->b);
	if (parse_into(x, ncluster, x->n, h, ix))
		return -1;
	t1 = bench_now(&o->b);
	f->json_per_pod = (double)(json_live - jlive0) / (double)o->k.pods;
	if (!(m = rebuild(h)))
		return -1;
	t2 = bench_now(&o->b);
	if (!(p = plan(m, ALL_CYCLES))) {
		carve_manifests_destroy(m);
		return -1;
	}
	t3 = bench_now(&o->b);
	f->carve_per_pod = (double)(bench_alloc_live() - live0) / (double)o->k.pods;
	f->cycles = p->cycles;
	nb = act(p, h, ix, &wire);
	t4 = bench_now(&o->b);
	f->wall_s = bench_wall() - w0;
	f->diags = (int)m->diags.n;
	f->rss_delta = proc_kib("VmHWM") - rss0;
	f->rss_per_pod = f->rss_delta / (double)o->k.pods;
	f->binds = (double)nb;
	f->parse_s = t1 - t0;
	f->add_s = t2 - t1;
	f->plan_s = t3 - t2;
	f->act_s = t4 - t3;
	f->total_s = t4 - t0;
	f->us_per_pod = nb > 0 ? f->total_s / (double)nb * 1e6 : NAN;
	f->wire_bytes = (double)wire;
	if (f->diags)
		carve_diags_print(&m->diags, stderr);
	carve_plan_free(p);
	carve_manifests_destroy(m);
	/* what stays between cycles: the stores (freed pages given back first) */
	malloc_trim(0);
	f->rss_held_per_pod = (proc_kib("VmRSS") - rss0) / (double)o->k.pods;
	return nb < 0 ? -1 : 0;
}

/*
 * Figure 1b: as the driver runs today: every cycle rebuilds the manifest
 * set from the stores and plans with the default cycle cap; up to
 * max_plans plans (or until a plan binds nothing).  Per bound pod: the
 * whole CPU (first parse included) over the pods bound.
 */
static int fig_drain(const struct opts *o, const struct texts *x, size_t ncluster, int max_plans, struct figs *f)
{
	struct held h = { 0 };
	json_t *ix = json_object();
	double t0, total;
	long binds = 0;
	int plans = 0, rc = -1;
	size_t wire = 0;

	if (!ix || parse_into(x, 0, ncluster, &h, ix))
		goto out;
	t0 = bench_now(&o->b);
	if (parse_into(x, ncluster, x->n, &h, ix))
		goto out;
	while (plans < max_plans) {
		struct carve_manifests *m = rebuild(&h);
		struct carve_plan *p = m ? plan(m, 0) : NULL;
		long nb = p ? act(p, &h, ix, &wire) : -1;
		carve_plan_free(p);
		carve_manifests_destroy(m);
		if (nb < 0)
			goto out;
		plans++;
		binds += nb;
		if (!nb || (size_t)binds >= o->k.pods)
			break;
	}
	total = bench_now(&o->b) - t0;
	f->drain_plans = plans;
	f->drain_binds = (double)binds;
	f->drain_us_per_pod = binds ? total / (double)binds * 1e6 : NAN;
	f->drain_plan_s = total / plans;
	rc = 0;
out:
	held_free(&h);
	json_decref(ix);
	return rc;
}

/*
 * Figure 2: a gang of o->gang pods; all but the last are held (and a
 * cycle has left them pending); then the last pod's text arrives: parse,
 * store, rebuild, plan, bodies.  Returns the ms, or NAN on failure.
 */
static double gang_cycle(const struct opts *o, struct held *h, json_t *ix, const char *name, double *add_ms,
			 double *plan_ms, double *act_ms)
{
	struct carve_manifests *m;
	struct carve_plan *p;
	char *last;
	double t0, t1, t2, t3;
	size_t wire = 0, before = h->n;
	long nb;

	for (int k = 0; k < o->gang - 1; k++) {
		json_t *pod = kgen_gang_pod(&o->k, name, o->gang, k);
		if (!pod || index_put(ix, pod, h->n) || hold(h, pod))
			return NAN;
	}
	/* the cycle before the last pod: the gang is incomplete, nothing binds */
	if (!(m = rebuild(h)) || !(p = plan(m, 0)))
		return NAN;
	nb = (long)p->nbinds;
	carve_plan_free(p);
	carve_manifests_destroy(m);
	if (nb) {
		fprintf(stderr, "carve-bench-sched: %ld binds before the gang was whole\n", nb);
		return NAN;
	}
	json_t *lp = kgen_gang_pod(&o->k, name, o->gang, o->gang - 1);
	last = lp ? json_dumps(lp, JSON_COMPACT) : NULL;
	json_decref(lp);
	if (!last)
		return NAN;

	t0 = bench_now(&o->b);
	json_t *pod = json_loads(last, 0, NULL);
	if (!pod || index_put(ix, pod, h->n) || hold(h, pod))
		return NAN;
	if (!(m = rebuild(h)))
		return NAN;
	t1 = bench_now(&o->b);
	if (!(p = plan(m, 0)))
		return NAN;
	t2 = bench_now(&o->b);
	nb = act(p, h, ix, &wire);
	t3 = bench_now(&o->b);
	dumps_free(last);
	carve_plan_free(p);
	carve_manifests_destroy(m);
	if (nb != o->gang) {
		fprintf(stderr, "carve-bench-sched: gang %s: %ld of %d pods bound (%zu objects held)\n", name, nb,
			o->gang, before);
		return NAN;
	}
	*add_ms = (t1 - t0) * 1e3;
	*plan_ms = (t2 - t1) * 1e3;
	*act_ms = (t3 - t2) * 1e3;
	return (t3 - t0) * 1e3;
}

/* Baseline: the same objects as one YAML stream, the path of `carve admit`. */
static int fig_yaml(const struct opts *o, const struct texts *x, struct figs *f)
{
	size_t len = 0, at = 0;
	char *buf;
	struct carve_manifests *m;
	struct carve_plan *p;
	struct held h = { 0 };
	json_t *ix = json_object();
	double t0, t1, t2;

	for (size_t i = 0; i < x->n; i++)
		len += strlen(x->t[i]) + 5;
	if (!(buf = malloc(len + 1)) || !ix)
		return -1;
	for (size_t i = 0; i < x->n; i++)
		at += (size_t)sprintf(buf + at, "---\n%s\n", x->t[i]);
	/* JSON path, timed alone: parse + add_json */
	t0 = bench_now(&o->b);
	if (parse_into(x, 0, x->n, &h, ix) || !(m = rebuild(&h)))
		return -1;
	f->json_load_s = bench_now(&o->b) - t0;
	carve_manifests_destroy(m);
	held_free(&h);
	json_decref(ix);
	t0 = bench_now(&o->b);
	m = carve_manifests_create();
	if (!m || carve_manifests_load_yaml(m, "objects.yaml", buf, at))
		return -1;
	t1 = bench_now(&o->b);
	p = plan(m, ALL_CYCLES);
	t2 = bench_now(&o->b);
	free(buf);
	f->yaml_load_s = t1 - t0;
	f->yaml_plan_s = t2 - t1;
	if (!p) {
		carve_manifests_destroy(m);
		return -1;
	}
	if ((double)p->nbinds != f->binds)
		bench_note("YAML path bound %zu pods, the JSON path %.0f", p->nbinds, f->binds);
	carve_plan_free(p);
	carve_manifests_destroy(m);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: carve-bench-sched [--quick] [--wall] [--count-bytes] [--nodes N] [--pods N] [--gang N]\n"
		   "                         [--out FILE]\n"
		   "  --quick     500 nodes, 5,000 pods, a 50-pod gang (CI)\n"
		   "  --wall      time on CLOCK_MONOTONIC instead of the process's CPU time\n"
		   "  --count-bytes  count the bytes carve and jansson hold (a header per block:\n"
		   "              slower, and RSS grows; the default run measures without)\n"
		   "  --nodes N   nodes, a multiple of 10 (default 5000)\n"
		   "  --pods N    pending pods (default 50000)\n"
		   "  --gang N    figure 2's gang size (default 500)\n"
		   "  --out FILE  the figures as one flat JSON object\n"
		   "  --emit-json FILE  write the namespaces, cluster and pending pods as a v1 List\n"
		   "              for an API server and exit (bench/sched_e2e.sh)\n"
		   "  --emit-gang FILE  write the --gang pods of figure 2 as a v1 List and exit\n");
}

static int parse_size(const char *s, size_t min, size_t max, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (!*s || *end || v < min || v > max)
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	size_t v;

	o->k = (struct kgen_opts){ 5000, 50000, 8, "carve" };
	o->gang = 500;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--quick")) {
			o->b.quick = true;
			o->k.nodes = 500;
			o->k.pods = 5000;
			o->gang = 50;
		} else if (!strcmp(a, "--count-bytes")) {
			o->count_bytes = true;
		} else if (!strcmp(a, "--wall")) {
			o->b.wall = true;
		} else if (!strcmp(a, "--cpu-time")) {
			o->b.wall = false;
		} else if (!strcmp(a, "--nodes") && next && !parse_size(next, 10, 100000, &v) && v % 10 == 0) {
			o->k.nodes = v;
			i++;
		} else if (!strcmp(a, "--pods") && next && !parse_size(next, 10, 1000000, &v)) {
			o->k.pods = v;
			i++;
		} else if (!strcmp(a, "--gang") && next && !parse_size(next, 2, 10000, &v)) {
			o->gang = (int)v;
			i++;
		} else if (!strcmp(a, "--emit-json") && next) {
			o->emit = next;
			i++;
		} else if (!strcmp(a, "--emit-gang") && next) {
			o->emit_gang = next;
			i++;
		} else if (!strcmp(a, "--out") && next) {
			o->out = next;
			i++;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else {
			fprintf(stderr, "carve-bench-sched: bad argument '%s'\n", a);
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

static int write_out(const char *path, const struct figs *f)
{
	static const char *const names[] = {
		"sched_us_per_bound_pod", "sched_binds", "sched_parse_s", "sched_add_json_s", "sched_plan_s",
		"sched_act_s", "gang_last_pod_ms", "gang_last_pod_empty_ms", "bytes_per_pod_rss",
		"bytes_per_pod_json", "bytes_per_pod_carve", "bytes_per_pod_between_cycles", "drain_us_per_bound_pod", "drain_plan_s",
		"yaml_baseline_load_s", "json_load_s",
	};
	const double v[] = { f->us_per_pod, f->binds, f->parse_s, f->add_s, f->plan_s, f->act_s, f->gang_ms,
			     f->gang_empty_ms, f->rss_per_pod, f->json_per_pod, f->carve_per_pod, f->rss_held_per_pod,
			     f->drain_us_per_pod, f->drain_plan_s, f->yaml_load_s, f->json_load_s };
	FILE *out = fopen(path, "w");

	if (!out)
		return -1;
	fprintf(out, "{");
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		fprintf(out, "%s\n  \"%s\": ", i ? "," : "", names[i]);
		if (isnan(v[i]))
			fprintf(out, "null");
		else
			fprintf(out, "%.6g", v[i]);
	}
	fprintf(out, "\n}\n");
	return fclose(out) ? -1 : 0;
}

/* An object as a create sends it: the server's fields dropped. */
static json_t *for_create(json_t *o)
{
	json_t *md = json_object_get(o, "metadata");

	json_object_del(md, "resourceVersion");
	json_object_del(md, "uid");
	json_object_del(md, "creationTimestamp");
	json_object_del(o, "status");
	return o;
}

/* Nodes keep their status (capacity, allocatable): a create may set it. */
static int list_add(json_t *items, json_t *o)
{
	const char *kind;

	if (!o)
		return -1;
	kind = json_string_value(json_object_get(o, "kind"));
	bool node = kind && !strcmp(kind, "Node");
	if (node) {
		json_t *md = json_object_get(o, "metadata");
		json_object_del(md, "resourceVersion");
		json_object_del(md, "uid");
	} else {
		for_create(o);
	}
	return json_array_append_new(items, o);
}

/* Writes items as a v1 List to path; consumes items.  0, or -1 with a message. */
static int write_list(const char *path, json_t *items)
{
	json_t *l = json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "List", "items", items);

	if (!l || json_dump_file(l, path, JSON_COMPACT)) {
		fprintf(stderr, "carve-bench-sched: cannot write %s\n", path);
		json_decref(l);
		return -1;
	}
	json_decref(l);
	return 0;
}

static int emit(const struct opts *o)
{
	static const char *const ns[] = { "gpu-operator", "team-research", "team-production", "team-dev" };
	json_t *items, *cluster, *v;
	size_t i;

	if (o->emit) {
		if (!(items = json_array()) || !(cluster = kgen_cluster(&o->k)))
			goto oom;
		for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
			if (list_add(items, json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
						      "Namespace", "metadata", "name", ns[i])))
				goto oom;
		json_array_foreach(cluster, i, v)
			if (list_add(items, json_incref(v)))
				goto oom;
		json_decref(cluster);
		for (i = 0; i < o->k.pods; i++)
			if (list_add(items, kgen_pod(&o->k, i)))
				goto oom;
		if (write_list(o->emit, items))
			return 1;
	}
	if (o->emit_gang) {
		if (!(items = json_array()))
			goto oom;
		for (int k = 0; k < o->gang; k++)
			if (list_add(items, kgen_gang_pod(&o->k, "big-train", o->gang, k)))
				goto oom;
		if (write_list(o->emit_gang, items))
			return 1;
	}
	return 0;
oom:
	fprintf(stderr, "carve-bench-sched: out of memory\n");
	return 1;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct texts x = { 0 };
	struct held h = { 0 };
	struct figs f;
	json_t *cluster, *ix = NULL, *v;
	size_t ncluster, i;
	int rc = 1;
	double *const nan_fields[] = {&f.us_per_pod, &f.binds, &f.parse_s, &f.add_s, &f.plan_s, &f.act_s, &f.total_s, &f.wall_s, &f.wire_bytes, &f.gang_ms, &f.gang_add_ms, &f.gang_plan_ms, &f.gang_act_ms, &f.gang_empty_ms, &f.rss_per_pod, &f.rss_delta, &f.carve_per_pod, &f.json_per_pod, &f.rss_held_per_pod, &f.drain_us_per_pod, &f.drain_binds, &f.drain_plan_s, &f.yaml_load_s, &f.json_load_s, &f.yaml_plan_s};

	memset(&f, 0, sizeof(f));
	for (i = 0; i < sizeof(nan_fields) / sizeof(nan_fields[0]); i++)
		*nan_fields[i] = NAN;
	if (parse_args(argc, argv, &o))
		return 2;
	if (o.emit || o.emit_gang)
		return emit(&o);
	if (o.count_bytes) {
		bench_alloc_install();
		json_set_alloc_funcs(jmalloc, jfree);
		counting = true;
	}
	/* what the API server would send: every object's JSON text */
	if (!(cluster = kgen_cluster(&o.k)))
		goto oom;
	ncluster = json_array_size(cluster);
	if (!(x.t = calloc(ncluster + o.k.pods, sizeof(char *))))
		goto oom;
	json_array_foreach(cluster, i, v)
		if (texts_add(&x, json_incref(v)))
			goto oom;
	json_decref(cluster);
	for (i = 0; i < o.k.pods; i++)
		if (texts_add(&x, kgen_pod(&o.k, i)))
			goto oom;

	printf("carve-bench-sched: %zu nodes, %zu pending pods (training gangs of %d, MIG inference, "
	       "notebooks), a %d-pod gang; clock: %s\n",
	       o.k.nodes, o.k.pods, o.k.gang_size, o.gang, bench_clock_name(&o.b));
	if (!(ix = json_object()))
		goto oom;
	if (fig_cycle(&o, &x, ncluster, &h, ix, &f)) {
		fprintf(stderr, "carve-bench-sched: the cycle failed\n");
		goto out;
	}
	bench_title("1", "one plan binding every pending pod: parsed, planned, bodies built (CPU per bound pod)");
	bench_row("pods bound", f.binds, "of the pending pods");
	bench_row("per bound pod, end to end", f.us_per_pod, "us (target <= 50)");
	bench_row("  parse the watch text (json_loads)", f.parse_s / f.binds * 1e6, "us");
	bench_row("  manifest set (carve_manifests_add_json)", f.add_s / f.binds * 1e6, "us");
	bench_row("  plan (carve_plan_build)", f.plan_s / f.binds * 1e6, "us");
	bench_row("  bind bodies, answers, store", f.act_s / f.binds * 1e6, "us");
	bench_row("engine cycles in the plan", f.cycles, "(max_cycles unlimited)");
	bench_row("cycle total", f.total_s, "s");
	bench_row("cycle, wall", f.wall_s, "s");
	bench_row("pods per second of scheduler CPU", 1e6 / f.us_per_pod, "/s (kube-scheduler CI floor 270/s)");
	bench_row("bytes sent per bind (body + path)", f.wire_bytes / f.binds, "B");
	if (f.diags)
		bench_note("%d diagnostics from the objects (printed on stderr)", f.diags);

	bench_title("3", "memory per pod held");
	bench_row("peak RSS over the cycle - RSS before", f.rss_delta / 1048576.0, "MiB");
	bench_row("per pod held (RSS)", f.rss_per_pod, "B (target <= 2048)");
	bench_row("between cycles: the stores alone (RSS)", f.rss_held_per_pod, "B per pod");
	if (o.count_bytes) {
		bench_row("  the stores' JSON (jansson, requested)", f.json_per_pod, "B");
		bench_row("  carve's manifest set + plan (allocator)", f.carve_per_pod, "B");
	} else {
		f.json_per_pod = f.carve_per_pod = NAN;
		bench_note("(--count-bytes splits it: the stores' JSON, carve's manifest set and plan)");
	}

	/* three gangs one after the other on the cluster figure 1 filled: the median */
	double ms[3], a[3], p[3], s[3];
	int k, med = 0;
	for (k = 0; k < 3; k++) {
		char name[32];
		snprintf(name, sizeof(name), "big-train-%d", k);
		ms[k] = gang_cycle(&o, &h, ix, name, &a[k], &p[k], &s[k]);
		if (isnan(ms[k]))
			break;
	}
	if (k == 3) {
		for (k = 0; k < 3; k++)
			if ((ms[k] >= ms[(k + 1) % 3]) + (ms[k] >= ms[(k + 2) % 3]) == 1)
				med = k;
		f.gang_ms = ms[med];
		f.gang_add_ms = a[med];
		f.gang_plan_ms = p[med];
		f.gang_act_ms = s[med];
	}
	held_free(&h);
	json_decref(ix);
	/* the same gang on an empty cluster */
	if (!(ix = json_object()) || parse_into(&x, 0, ncluster, &h, ix))
		goto oom;
	f.gang_empty_ms = gang_cycle(&o, &h, ix, "big-train", &a[0], &p[0], &s[0]);
	held_free(&h);
	json_decref(ix);
	ix = NULL;
	bench_title("2", "a gang's last pod arriving -> its last Binding body ready (median of 3)");
	bench_row("with every pod of figure 1 bound", f.gang_ms, "ms (target <= 50 + round trips)");
	bench_row("  parse, store, rebuild the manifest set", f.gang_add_ms, "ms");
	bench_row("  plan", f.gang_plan_ms, "ms");
	bench_row("  bind bodies", f.gang_act_ms, "ms");
	bench_row("on the empty cluster", f.gang_empty_ms, "ms");

	if (fig_drain(&o, &x, ncluster, o.b.quick ? 1000 : 4, &f) == 0) {
		bench_title("1b", "as the driver plans today: default cycle cap, manifest set rebuilt per plan");
		bench_row("plans run", f.drain_plans, o.b.quick ? "(until every pod bound)" : "(the first 4)");
		bench_row("pods bound by them", f.drain_binds, "");
		bench_row("per bound pod, end to end", f.drain_us_per_pod, "us (target <= 50)");
		bench_row("per plan (rebuild + plan + bodies)", f.drain_plan_s, "s");
	}

	if (fig_yaml(&o, &x, &f) == 0) {
		bench_title("B", "baseline in this process: the same objects as a YAML stream (carve admit's path)");
		bench_row("JSON path: parse + add_json", f.json_load_s, "s");
		bench_row("YAML path: carve_manifests_load_yaml", f.yaml_load_s, "s");
		bench_row("JSON / YAML", f.json_load_s / f.yaml_load_s, "x");
		bench_row("plan from the YAML set", f.yaml_plan_s, "s");
	}
	if (o.out && write_out(o.out, &f)) {
		fprintf(stderr, "carve-bench-sched: cannot write %s\n", o.out);
		goto out;
	}
	rc = isnan(f.gang_ms) || isnan(f.gang_empty_ms) || isnan(f.drain_us_per_pod) || f.binds < (double)o.k.pods ? 1 : 0;
	if (f.binds < (double)o.k.pods)
		fprintf(stderr, "carve-bench-sched: bound %.0f of %zu pods\n", f.binds, o.k.pods);
	goto out;
oom:
	fprintf(stderr, "carve-bench-sched: out of memory\n");
out:
	json_decref(ix);
	texts_free(&x);
	held_free(&h);
	return rc;
}
