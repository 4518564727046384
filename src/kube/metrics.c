/*
 * metrics.c - the scheduler's Prometheus metrics (metrics.h): a registry
 * of counter, gauge and histogram families rendered in the text
 * exposition format 0.0.4, then the scheduler's metric set in one table
 * and the setters the driver calls.
 *
 * Invariants: a family's series are kept in creation order (an array)
 * and found by their label values through an open-addressing hash of
 * indexes into that array (the per-GPU gauge holds one series per GPU of
 * a 5,000-node cluster); a series' key is its label values each preceded
 * by its length, so any bytes may appear in a value.  Histogram buckets
 * are stored per bucket and summed when rendered.  One recursive mutex
 * guards the whole registry.
 *
 * Format: https://prometheus.io/docs/instrumenting/exposition_formats/
 * (text format 0.0.4: HELP escapes '\' and newline, label values escape
 * '\', '"' and newline; histogram series _bucket{le} cumulative, le="+Inf"
 * equal to _count).  Kueue's names, labels and buckets:
 * kubernetes-sigs/kueue pkg/metrics/metrics.go.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

struct series {
	char *key;               /* label values, each as "<len>:<bytes>" */
	size_t keylen;
	char **values;           /* nlabels copies, for rendering */
	double value;            /* counter/gauge value, histogram sum */
	uint64_t count;          /* histogram observations */
	uint64_t *buckets;       /* histogram: nbuckets + 1 (the last +Inf) */
};

struct family {
	struct kube_mdesc d;
	int nlabels;
	struct series *s;
	size_t n, cap;
	size_t *slot;            /* hash: index + 1 into s, 0 empty */
	size_t nslot;            /* power of two, >= 2 * n */
};

struct kube_registry {
	pthread_mutex_t mu;
	struct family *f;
	size_t n, cap;
};

/* ---- the registry ---- */

struct kube_registry *kube_registry_create(void)
{
	struct kube_registry *r = carve_calloc(1, sizeof(*r));
	pthread_mutexattr_t a;

	if (!r)
		return NULL;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	if (pthread_mutex_init(&r->mu, &a)) {
		pthread_mutexattr_destroy(&a);
		carve_free(r);
		return NULL;
	}
	pthread_mutexattr_destroy(&a);
	return r;
}

static void series_free(struct series *s, int nlabels)
{
	for (int i = 0; i < nlabels; i++)
		carve_free(s->values[i]);
	carve_free(s->values);
	carve_free(s->key);
	carve_free(s->buckets);
}

static void family_clear(struct family *f)
{
	for (size_t i = 0; i < f->n; i++)
		series_free(&f->s[i], f->nlabels);
	carve_free(f->s);
	carve_free(f->slot);
	f->s = NULL;
	f->slot = NULL;
	f->n = f->cap = f->nslot = 0;
}

void kube_registry_destroy(struct kube_registry *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		family_clear(&r->f[i]);
		carve_free((void *)r->f[i].d.buckets);
	}
	carve_free(r->f);
	pthread_mutex_destroy(&r->mu);
	carve_free(r);
}

static bool name_ok(const char *s, bool colon)
{
	if (!s || !*s || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (const char *p = s; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || (colon && c == ':')))
			return false;
	}
	return strncmp(s, "__", 2) != 0;
}

static int desc_check(const struct kube_registry *r, const struct kube_mdesc *d, int *nlabels,
		      struct carve_error *err)
{
	const char *name = d && d->name ? d->name : "(null)";
	int n = 0;

	if (!d || !name_ok(d->name, true))
		return carve_errorf(err, CARVE_EINVAL, "metric \"%s\": not a valid metric name", name);
	if (d->type != KUBE_COUNTER && d->type != KUBE_GAUGE && d->type != KUBE_HISTOGRAM)
		return carve_errorf(err, CARVE_EINVAL, "metric %s: unknown type %d", name, (int)d->type);
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->f[i].d.name, name))
			return carve_errorf(err, CARVE_EINVAL, "metric %s: registered twice", name);
	while (n < KUBE_MAX_LABELS && d->labels[n]) {
		if (!name_ok(d->labels[n], false) || !strcmp(d->labels[n], "le"))
			return carve_errorf(err, CARVE_EINVAL, "metric %s: label %d \"%s\" is not a valid label name",
					    name, n + 1, d->labels[n]);
		for (int j = 0; j < n; j++)
			if (!strcmp(d->labels[j], d->labels[n]))
				return carve_errorf(err, CARVE_EINVAL, "metric %s: label %s repeated", name,
						    d->labels[n]);
		n++;
	}
	if (d->type == KUBE_HISTOGRAM) {
		if (!d->buckets || d->nbuckets < 1 || d->nbuckets > KUBE_MAX_BUCKETS)
			return carve_errorf(err, CARVE_EINVAL, "metric %s: a histogram needs 1..%d buckets",
					    name, KUBE_MAX_BUCKETS);
		for (size_t i = 0; i < d->nbuckets; i++)
			if (!isfinite(d->buckets[i]) || (i && d->buckets[i] <= d->buckets[i - 1]))
				return carve_errorf(err, CARVE_EINVAL,
						    "metric %s: bucket %zu is not finite and above the one before",
						    name, i + 1);
	}
	*nlabels = n;
	return 0;
}

int kube_registry_add(struct kube_registry *r, const struct kube_mdesc *d, struct carve_error *err)
{
	struct family *f;
	int nlabels, rc, id;

	pthread_mutex_lock(&r->mu);
	rc = desc_check(r, d, &nlabels, err);
	if (rc)
		goto out;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct family *nf = carve_realloc(r->f, cap * sizeof(*nf));
		if (!nf) {
			rc = carve_errorf(err, CARVE_ENOMEM, "metric %s: out of memory", d->name);
			goto out;
		}
		r->f = nf;
		r->cap = cap;
	}
	f = &r->f[r->n];
	memset(f, 0, sizeof(*f));
	f->d = *d;
	f->nlabels = nlabels;
	if (d->type == KUBE_HISTOGRAM) {
		double *b = carve_malloc(d->nbuckets * sizeof(*b));
		if (!b) {
			rc = carve_errorf(err, CARVE_ENOMEM, "metric %s: out of memory", d->name);
			goto out;
		}
		memcpy(b, d->buckets, d->nbuckets * sizeof(*b));
		f->d.buckets = b;
	} else {
		f->d.buckets = NULL;
		f->d.nbuckets = 0;
	}
	id = (int)r->n++;
	rc = id;
out:
	pthread_mutex_unlock(&r->mu);
	return rc;
}

/* The key of a tuple of values into a new string; NULL when out of memory. */
static char *make_key(const char *const *values, int n, size_t *len)
{
	size_t total = 0, o = 0;
	char *k;

	for (int i = 0; i < n; i++)
		total += strlen(values && values[i] ? values[i] : "") + 21;
	k = carve_malloc(total + 1);
	if (!k)
		return NULL;
	for (int i = 0; i < n; i++) {
		const char *v = values && values[i] ? values[i] : "";
		size_t l = strlen(v);
		o += (size_t)snprintf(k + o, total + 1 - o, "%zu:", l);
		memcpy(k + o, v, l);
		o += l;
	}
	k[o] = '\0';
	*len = o;
	return k;
}

static size_t hash_key(const char *k, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)k[i];
		h *= 1099511628211ull;
	}
	return (size_t)h;
}

static int rehash(struct family *f, size_t nslot)
{
	size_t *slot = carve_calloc(nslot, sizeof(*slot));

	if (!slot)
		return CARVE_ENOMEM;
	for (size_t i = 0; i < f->n; i++) {
		size_t h = hash_key(f->s[i].key, f->s[i].keylen) & (nslot - 1);
		while (slot[h])
			h = (h + 1) & (nslot - 1);
		slot[h] = i + 1;
	}
	carve_free(f->slot);
	f->slot = slot;
	f->nslot = nslot;
	return 0;
}

/* The series of these values, or NULL when missing (and create is false)
 * or out of memory. */
static struct series *find(struct family *f, const char *const *values, bool create)
{
	size_t len, h;
	char *key = make_key(values, f->nlabels, &len);
	struct series *s;

	if (!key)
		return NULL;
	if (f->nslot) {
		for (h = hash_key(key, len) & (f->nslot - 1); f->slot[h]; h = (h + 1) & (f->nslot - 1)) {
			s = &f->s[f->slot[h] - 1];
			if (s->keylen == len && !memcmp(s->key, key, len)) {
				carve_free(key);
				return s;
			}
		}
	}
	if (!create)
		goto fail;
	if ((f->n + 1) * 2 > f->nslot && rehash(f, f->nslot ? f->nslot * 2 : 16))
		goto fail;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		struct series *ns = carve_realloc(f->s, cap * sizeof(*ns));
		if (!ns)
			goto fail;
		f->s = ns;
		f->cap = cap;
	}
	s = &f->s[f->n];
	memset(s, 0, sizeof(*s));
	s->values = carve_calloc((size_t)f->nlabels + 1, sizeof(char *));
	if (!s->values)
		goto fail;
	for (int i = 0; i < f->nlabels; i++)
		if (!(s->values[i] = carve_strdup(values && values[i] ? values[i] : "")))
			goto fail_series;
	if (f->d.type == KUBE_HISTOGRAM &&
	    !(s->buckets = carve_calloc(f->d.nbuckets + 1, sizeof(*s->buckets))))
		goto fail_series;
	s->key = key;
	s->keylen = len;
	for (h = hash_key(key, len) & (f->nslot - 1); f->slot[h]; h = (h + 1) & (f->nslot - 1))
		;
	f->slot[h] = ++f->n;
	return s;
fail_series:
	s->key = NULL;
	series_free(s, f->nlabels);
fail:
	carve_free(key);
	return NULL;
}

/* Looks family id up for an update of this type (-1: counter or gauge). */
static struct family *family_for(struct kube_registry *r, int id, int type)
{
	struct family *f;

	if (id < 0 || (size_t)id >= r->n)
		return NULL;
	f = &r->f[id];
	if (type == -1 ? f->d.type == KUBE_HISTOGRAM : (int)f->d.type != type)
		return NULL;
	return f;
}

enum op { OP_SET, OP_ADD, OP_OBSERVE };

static int update(struct kube_registry *r, int id, const char *const *values, double v, enum op op)
{
	struct family *f;
	struct series *s;
	int rc = 0;

	if (isnan(v))
		return CARVE_EINVAL;
	pthread_mutex_lock(&r->mu);
	f = family_for(r, id, op == OP_OBSERVE ? KUBE_HISTOGRAM : -1);
	if (!f || (op == OP_ADD && f->d.type == KUBE_COUNTER && v < 0)) {
		rc = f ? CARVE_ERANGE : CARVE_EINVAL;
		goto out;
	}
	if (!(s = find(f, values, true))) {
		rc = CARVE_ENOMEM;
		goto out;
	}
	switch (op) {
	case OP_SET:
		if (f->d.type == KUBE_COUNTER && v < s->value)
			rc = CARVE_ERANGE;
		else
			s->value = v;
		break;
	case OP_ADD:
		s->value += v;
		break;
	case OP_OBSERVE: {
		size_t b = 0;
		while (b < f->d.nbuckets && v > f->d.buckets[b])
			b++;
		s->buckets[b]++;
		s->count++;
		s->value += v;
		break;
	}
	}
out:
	pthread_mutex_unlock(&r->mu);
	return rc;
}

int kube_metric_set(struct kube_registry *r, int id, const char *const *values, double v)
{
	return update(r, id, values, v, OP_SET);
}

int kube_metric_add(struct kube_registry *r, int id, const char *const *values, double delta)
{
	return update(r, id, values, delta, OP_ADD);
}

int kube_metric_observe(struct kube_registry *r, int id, const char *const *values, double v)
{
	return update(r, id, values, v, OP_OBSERVE);
}

int kube_metric_reset(struct kube_registry *r, int id)
{
	int rc = 0;

	pthread_mutex_lock(&r->mu);
	if (id < 0 || (size_t)id >= r->n)
		rc = CARVE_EINVAL;
	else
		family_clear(&r->f[id]);
	pthread_mutex_unlock(&r->mu);
	return rc;
}

double kube_metric_get(struct kube_registry *r, int id, const char *const *values)
{
	double v = NAN;
	struct series *s;

	pthread_mutex_lock(&r->mu);
	if (id >= 0 && (size_t)id < r->n && (s = find(&r->f[id], values, false)))
		v = r->f[id].d.type == KUBE_HISTOGRAM ? (double)s->count : s->value;
	pthread_mutex_unlock(&r->mu);
	return v;
}

void kube_registry_begin(struct kube_registry *r)
{
	pthread_mutex_lock(&r->mu);
}

void kube_registry_commit(struct kube_registry *r)
{
	pthread_mutex_unlock(&r->mu);
}

/* ---- rendering ---- */

struct buf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void put(struct buf *b, const char *s, size_t len)
{
	if (b->oom)
		return;
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *np;
		while (cap < b->n + len + 1)
			cap *= 2;
		if (!(np = carve_realloc(b->p, cap))) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* s with '\\' and newline escaped, and '"' too when quote. */
static void put_escaped(struct buf *b, const char *s, bool quote)
{
	const char *run = s;

	for (; *s; s++) {
		const char *e = *s == '\\' ? "\\\\" : *s == '\n' ? "\\n" : quote && *s == '"' ? "\\\"" : NULL;
		if (!e)
			continue;
		put(b, run, (size_t)(s - run));
		puts_(b, e);
		run = s + 1;
	}
	put(b, run, (size_t)(s - run));
}

/* A value as Prometheus writes it: the shortest text that reads back the
 * same double, "+Inf", "-Inf", "NaN". */
static void put_value(struct buf *b, double v)
{
	char t[40];

	if (isnan(v))
		snprintf(t, sizeof(t), "NaN");
	else if (isinf(v))
		snprintf(t, sizeof(t), v > 0 ? "+Inf" : "-Inf");
	else {
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(t, sizeof(t), "%.*g", prec, v);
			if (strtod(t, NULL) == v)
				break;
		}
	}
	puts_(b, t);
}

static void put_u64(struct buf *b, uint64_t v)
{
	char t[24];

	snprintf(t, sizeof(t), "%llu", (unsigned long long)v);
	puts_(b, t);
}

/* name{l1="v1",...[,le="x"]} with its suffix; le NULL for none. */
static void put_head(struct buf *b, const struct family *f, const struct series *s, const char *suffix,
		     const char *le)
{
	int n = 0;

	puts_(b, f->d.name);
	puts_(b, suffix);
	if (!f->nlabels && !le)
		return;
	puts_(b, "{");
	for (int i = 0; i < f->nlabels; i++, n++) {
		if (i)
			puts_(b, ",");
		puts_(b, f->d.labels[i]);
		puts_(b, "=\"");
		put_escaped(b, s->values[i], true);
		puts_(b, "\"");
	}
	if (le) {
		puts_(b, n ? ",le=\"" : "le=\"");
		puts_(b, le);
		puts_(b, "\"");
	}
	puts_(b, "}");
}

static void put_series(struct buf *b, const struct family *f, const struct series *s)
{
	if (f->d.type != KUBE_HISTOGRAM) {
		put_head(b, f, s, "", NULL);
		puts_(b, " ");
		put_value(b, s->value);
		puts_(b, "\n");
		return;
	}
	uint64_t cum = 0;
	for (size_t i = 0; i <= f->d.nbuckets; i++) {
		struct buf le = { 0 };
		cum += s->buckets[i];
		if (i < f->d.nbuckets)
			put_value(&le, f->d.buckets[i]);
		else
			puts_(&le, "+Inf");
		if (le.oom) {
			b->oom = true;
			return;
		}
		put_head(b, f, s, "_bucket", le.p);
		carve_free(le.p);
		puts_(b, " ");
		put_u64(b, cum);
		puts_(b, "\n");
	}
	put_head(b, f, s, "_sum", NULL);
	puts_(b, " ");
	put_value(b, s->value);
	puts_(b, "\n");
	put_head(b, f, s, "_count", NULL);
	puts_(b, " ");
	put_u64(b, s->count);
	puts_(b, "\n");
}

char *kube_registry_render(struct kube_registry *r, size_t *len)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };
	struct buf b = { 0 };

	puts_(&b, "");
	pthread_mutex_lock(&r->mu);
	for (size_t i = 0; i < r->n; i++) {
		const struct family *f = &r->f[i];
		puts_(&b, "# HELP ");
		puts_(&b, f->d.name);
		puts_(&b, " ");
		put_escaped(&b, f->d.help ? f->d.help : "", false);
		puts_(&b, "\n# TYPE ");
		puts_(&b, f->d.name);
		puts_(&b, " ");
		puts_(&b, types[f->d.type]);
		puts_(&b, "\n");
		for (size_t j = 0; j < f->n; j++)
			put_series(&b, f, &f->s[j]);
	}
	pthread_mutex_unlock(&r->mu);
	if (b.oom) {
		carve_free(b.p);
		return NULL;
	}
	if (len)
		*len = b.n;
	return b.p;
}

/* ---- the scheduler's metric set ---- */

/* Kueue's admission wait buckets: 1 s, then 2.5 s doubling 13 times
 * (generateExponentialBuckets(14) in Kueue's metrics.go). */
static const double kueue_wait_buckets[] = { 1,   2.5, 5,    10,   20,   40,   80,
					     160, 320, 640, 1280, 2560, 5120, 10240 };
/* client_golang's default buckets, which Kueue's attempt duration uses. */
static const double default_buckets[] = { .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10 };
/* carve's own latencies: 100 µs to 10 s. */
static const double fast_buckets[] = { .0001, .00025, .0005, .001, .0025, .005, .01, .025,
				       .05,   .1,     .25,   .5,   1,     2.5,  5,    10 };

#define NB(a) (sizeof(a) / sizeof((a)[0]))
#define CQRES { "cohort", "cluster_queue", "flavor", "resource" }

static const struct kube_mdesc metric_table[KM__COUNT] = {
	[KM_PENDING_WORKLOADS] = { "kueue_pending_workloads",
		"Pending workloads per ClusterQueue; status active (not yet tried) or inadmissible (tried, did not fit).",
		KUBE_GAUGE, { "cluster_queue", "status" }, NULL, 0 },
	[KM_RESERVING_ACTIVE] = { "kueue_reserving_active_workloads",
		"Workloads holding quota per ClusterQueue.", KUBE_GAUGE, { "cluster_queue" }, NULL, 0 },
	[KM_ADMITTED_ACTIVE] = { "kueue_admitted_active_workloads",
		"Admitted workloads not finished, per ClusterQueue.", KUBE_GAUGE, { "cluster_queue" }, NULL, 0 },
	[KM_QUOTA_RESERVED_TOTAL] = { "kueue_quota_reserved_workloads_total",
		"Workloads that got quota, per ClusterQueue.", KUBE_COUNTER, { "cluster_queue" }, NULL, 0 },
	[KM_ADMITTED_TOTAL] = { "kueue_admitted_workloads_total",
		"Workloads admitted (every pod bound), per ClusterQueue.", KUBE_COUNTER, { "cluster_queue" },
		NULL, 0 },
	[KM_EVICTED_TOTAL] = { "kueue_evicted_workloads_total",
		"Workloads evicted per ClusterQueue and reason (Preempted).", KUBE_COUNTER,
		{ "cluster_queue", "reason" }, NULL, 0 },
	[KM_PREEMPTED_TOTAL] = { "kueue_preempted_workloads_total",
		"Workloads preempted, per preempting ClusterQueue and reason (InClusterQueue, InCohortReclamation, ...).",
		KUBE_COUNTER, { "preempting_cluster_queue", "reason" }, NULL, 0 },
	[KM_ADMISSION_WAIT] = { "kueue_admission_wait_time_seconds",
		"Seconds from a workload's creation to its admission, per ClusterQueue.", KUBE_HISTOGRAM,
		{ "cluster_queue" }, kueue_wait_buckets, NB(kueue_wait_buckets) },
	[KM_ADMISSION_ATTEMPTS] = { "kueue_admission_attempts_total",
		"Admission attempts (scheduling cycles); result success (a workload admitted) or inadmissible.",
		KUBE_COUNTER, { "result" }, NULL, 0 },
	[KM_ADMISSION_ATTEMPT_DURATION] = { "kueue_admission_attempt_duration_seconds",
		"Seconds one admission attempt took, per result.", KUBE_HISTOGRAM, { "result" },
		default_buckets, NB(default_buckets) },
	[KM_CQ_STATUS] = { "kueue_cluster_queue_status",
		"1 for the ClusterQueue's status (pending, active, terminating), 0 for the others.", KUBE_GAUGE,
		{ "cluster_queue", "status" }, NULL, 0 },
	[KM_CQ_USAGE] = { "kueue_cluster_queue_resource_usage",
		"Quota a ClusterQueue's admitted workloads use, per flavor and resource (units).", KUBE_GAUGE,
		CQRES, NULL, 0 },
	[KM_CQ_NOMINAL] = { "kueue_cluster_queue_nominal_quota",
		"A ClusterQueue's nominal quota per flavor and resource (units).", KUBE_GAUGE, CQRES, NULL, 0 },
	[KM_CQ_BORROWING_LIMIT] = { "kueue_cluster_queue_borrowing_limit",
		"A ClusterQueue's borrowing limit per flavor and resource (units).", KUBE_GAUGE, CQRES, NULL, 0 },
	[KM_CQ_LENDING_LIMIT] = { "kueue_cluster_queue_lending_limit",
		"A ClusterQueue's lending limit per flavor and resource (units).", KUBE_GAUGE, CQRES, NULL, 0 },
	[KM_BIND_DURATION] = { "carve_bind_duration_seconds",
		"Round trip of one pods/binding request.", KUBE_HISTOGRAM, { NULL }, fast_buckets,
		NB(fast_buckets) },
	[KM_BINDS_TOTAL] = { "carve_binds_total",
		"Binding requests answered; result success, conflict (409) or error.", KUBE_COUNTER,
		{ "result" }, NULL, 0 },
	[KM_CYCLE_DURATION] = { "carve_cycle_duration_seconds",
		"Seconds one scheduling cycle (objects to plan) took.", KUBE_HISTOGRAM, { NULL },
		fast_buckets, NB(fast_buckets) },
	[KM_WATCH_RESTARTS] = { "carve_watch_restarts_total",
		"Watches started over, per kind and reason (expired, closed, error).", KUBE_COUNTER,
		{ "kind", "reason" }, NULL, 0 },
	[KM_API_REQUESTS] = { "carve_api_requests_total",
		"Requests to the API server per answer class (1xx..5xx, error: no answer).", KUBE_COUNTER,
		{ "code_class" }, NULL, 0 },
	[KM_API_WAIT] = { "carve_api_wait_seconds_total",
		"Seconds requests waited, summed over concurrent requests: on=\"server\" from sending to "
		"the answer's first bytes (a watch until its stream begins), on=\"rate_limiter\" for the "
		"client-side --qps/--burst limit.", KUBE_COUNTER, { "on" }, NULL, 0 },
	[KM_GPU_ALLOCATED] = { "carve_gpu_allocated",
		"Share of one GPU (0..1) held by pods of one ClusterQueue.", KUBE_GAUGE,
		{ "node", "gpu", "queue" }, NULL, 0 },
	[KM_LEADER] = { "carve_leader", "1 while this replica leads, else 0.", KUBE_GAUGE, { NULL }, NULL,
		0 },
};

struct kube_registry *kube_metrics_create(void)
{
	struct kube_registry *r = kube_registry_create();

	if (!r)
		return NULL;
	for (int i = 0; i < KM__COUNT; i++)
		if (kube_registry_add(r, &metric_table[i], NULL) != i)
			goto fail;
	if (kube_metrics_leader(r, false))
		goto fail;
	return r;
fail:
	kube_registry_destroy(r);
	return NULL;
}

/* Chains updates: the first error sticks. */
#define UPD(rc, call)              \
	do {                       \
		if (!(rc))         \
			(rc) = (call); \
	} while (0)

int kube_metrics_plan(struct kube_registry *r, const struct carve_plan *p, double duration_s)
{
	static const int reset[] = { KM_PENDING_WORKLOADS, KM_RESERVING_ACTIVE, KM_ADMITTED_ACTIVE,
				     KM_CQ_STATUS,         KM_CQ_USAGE,         KM_CQ_NOMINAL,
				     KM_CQ_BORROWING_LIMIT, KM_CQ_LENDING_LIMIT };
	const char *result;
	size_t pending = 0;
	int rc = 0;

	kube_registry_begin(r);
	for (size_t i = 0; i < NB(reset); i++)
		kube_metric_reset(r, reset[i]);
	for (size_t i = 0; i < p->ncqs; i++) {
		const struct carve_plan_cq *q = &p->cqs[i];
		const char *cq = q->name;
		pending += (size_t)(q->pending > 0 ? q->pending : 0);
		UPD(rc, kube_metric_set(r, KM_PENDING_WORKLOADS, (const char *[]){ cq, "active" }, 0));
		UPD(rc, kube_metric_set(r, KM_PENDING_WORKLOADS, (const char *[]){ cq, "inadmissible" },
					q->pending));
		UPD(rc, kube_metric_set(r, KM_RESERVING_ACTIVE, &cq, q->admitted));
		UPD(rc, kube_metric_set(r, KM_ADMITTED_ACTIVE, &cq, q->admitted));
		UPD(rc, kube_metric_set(r, KM_CQ_STATUS, (const char *[]){ cq, "pending" }, 0));
		UPD(rc, kube_metric_set(r, KM_CQ_STATUS, (const char *[]){ cq, "active" }, 1));
		UPD(rc, kube_metric_set(r, KM_CQ_STATUS, (const char *[]){ cq, "terminating" }, 0));
		for (size_t j = 0; j < q->nusage; j++) {
			const struct carve_plan_usage *u = &q->usage[j];
			const char *l[] = { q->cohort ? q->cohort : "", cq, u->flavor, u->resource };
			UPD(rc, kube_metric_set(r, KM_CQ_USAGE, l, (double)u->total / 1000.0));
			UPD(rc, kube_metric_set(r, KM_CQ_NOMINAL, l, (double)u->nominal / 1000.0));
		}
	}
	result = p->ngangs ? "success" : pending || p->npending ? "inadmissible" : NULL;
	if (result) {
		UPD(rc, kube_metric_add(r, KM_ADMISSION_ATTEMPTS, &result, 1));
		UPD(rc, kube_metric_observe(r, KM_ADMISSION_ATTEMPT_DURATION, &result, duration_s));
	}
	UPD(rc, kube_metric_observe(r, KM_CYCLE_DURATION, NULL, duration_s));
	kube_registry_commit(r);
	return rc;
}

int kube_metrics_limits(struct kube_registry *r, const char *cohort, const char *cq, const char *flavor,
			const char *resource, double borrowing_limit, double lending_limit)
{
	const char *l[] = { cohort ? cohort : "", cq, flavor, resource };
	int rc = 0;

	if (borrowing_limit >= 0)
		rc = kube_metric_set(r, KM_CQ_BORROWING_LIMIT, l, borrowing_limit);
	if (lending_limit >= 0)
		UPD(rc, kube_metric_set(r, KM_CQ_LENDING_LIMIT, l, lending_limit));
	return rc;
}

int kube_metrics_admitted(struct kube_registry *r, const char *cq, double wait_s)
{
	int rc = kube_metric_add(r, KM_QUOTA_RESERVED_TOTAL, &cq, 1);

	UPD(rc, kube_metric_add(r, KM_ADMITTED_TOTAL, &cq, 1));
	UPD(rc, kube_metric_observe(r, KM_ADMISSION_WAIT, &cq, wait_s < 0 ? 0 : wait_s));
	return rc;
}

int kube_metrics_bind(struct kube_registry *r, const char *result, double seconds)
{
	int rc = kube_metric_add(r, KM_BINDS_TOTAL, &result, 1);

	UPD(rc, kube_metric_observe(r, KM_BIND_DURATION, NULL, seconds < 0 ? 0 : seconds));
	return rc;
}

int kube_metrics_preempted(struct kube_registry *r, const char *preempting_cq, const char *reason,
			   const char *victim_cq)
{
	int rc = kube_metric_add(r, KM_PREEMPTED_TOTAL, (const char *[]){ preempting_cq, reason }, 1);

	UPD(rc, kube_metric_add(r, KM_EVICTED_TOTAL, (const char *[]){ victim_cq, "Preempted" }, 1));
	return rc;
}

int kube_metrics_watch_restart(struct kube_registry *r, const char *kind, const char *reason)
{
	return kube_metric_add(r, KM_WATCH_RESTARTS, (const char *[]){ kind, reason }, 1);
}

int kube_metrics_api(struct kube_registry *r, const struct carve_kube_stats *s)
{
	static const char *const cls[6] = { "error", "1xx", "2xx", "3xx", "4xx", "5xx" };
	int rc = 0;

	kube_registry_begin(r);
	for (int i = 0; i < 6; i++)
		UPD(rc, kube_metric_set(r, KM_API_REQUESTS, &cls[i], (double)s->by_class[i]));
	UPD(rc, kube_metric_set(r, KM_API_WAIT, (const char *[]){ "server" }, (double)s->server_ns / 1e9));
	UPD(rc, kube_metric_set(r, KM_API_WAIT, (const char *[]){ "rate_limiter" },
				(double)s->throttled_ns / 1e9));
	kube_registry_commit(r);
	return rc;
}

int kube_metrics_leader(struct kube_registry *r, bool leader)
{
	return kube_metric_set(r, KM_LEADER, NULL, leader ? 1 : 0);
}

void kube_metrics_gpus_begin(struct kube_registry *r)
{
	kube_registry_begin(r);
	kube_metric_reset(r, KM_GPU_ALLOCATED);
}

int kube_metrics_gpu_add(struct kube_registry *r, const char *node, int gpu, const char *queue, double share)
{
	char idx[16];

	if (!(share >= 0))
		return CARVE_EINVAL;
	snprintf(idx, sizeof(idx), "%d", gpu);
	return kube_metric_add(r, KM_GPU_ALLOCATED, (const char *[]){ node, idx, queue }, share);
}

void kube_metrics_gpus_commit(struct kube_registry *r)
{
	kube_registry_commit(r);
}
