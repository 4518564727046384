/*
 * test_kube_metrics.c - the scheduler's metrics and HTTP endpoints
 * (src/kube/metrics.c, src/kube/serve.c).  Every exposition is parsed
 * back by a small parser of the text format 0.0.4 written here (HELP and
 * TYPE lines, names, labels with escapes, values) and checked: label
 * values survive any bytes, histograms are cumulative with +Inf equal to
 * _count, a plan's queue gauges replace the previous plan's.  The server
 * is asked with libcurl on 127.0.0.1 (ephemeral port): 200/404/405/500/
 * 503, HEAD, and scrapes from four threads while a fifth updates, every
 * scrape seeing whole batches.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "metrics.h"
#include "serve.h"

/* ---- a parser of the text format, for checking ---- */

struct sample {
	char name[128];
	int nl;
	char lname[6][32];
	char lval[6][256];
	double v;
};

struct expo {
	int ns, nfam;
	struct sample *s;
	char fam[64][128], type[64][16];
	bool help[64];
};

/* The value of label name in s, or NULL. */
static const char *lab(const struct sample *s, const char *name)
{
	for (int i = 0; i < s->nl; i++)
		if (!strcmp(s->lname[i], name))
			return s->lval[i];
	return NULL;
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

/* Parses one sample line; fails the test on a malformed one. */
static void parse_sample(const char *p, struct sample *s)
{
	int n = 0;
	char *end;

	memset(s, 0, sizeof(*s));
	assert_true(name_char(*p, true));
	while (name_char(*p, n == 0)) {
		assert_true(n < 127);
		s->name[n++] = *p++;
	}
	if (*p == '{') {
		p++;
		while (*p != '}') {
			int k = 0, o = 0;
			assert_true(s->nl < 6);
			while (name_char(*p, k == 0))
				s->lname[s->nl][k++] = *p++;
			assert_true(k > 0);
			assert_int_equal(*p++, '=');
			assert_int_equal(*p++, '"');
			while (*p != '"') {
				char c = *p++;
				assert_true(c != '\0' && c != '\n');
				if (c == '\\') {
					c = *p++;
					assert_true(c == '\\' || c == '"' || c == 'n');
					c = c == 'n' ? '\n' : c;
				}
				assert_true(o < 255);
				s->lval[s->nl][o++] = c;
			}
			p++;
			s->nl++;
			if (*p == ',')
				p++;
			else
				assert_int_equal(*p, '}');
		}
		p++;
	}
	assert_int_equal(*p++, ' ');
	s->v = strtod(p, &end);
	assert_true(end > p);
	assert_int_equal(*end, '\0');
}

/* Parses a whole exposition; families must be announced by HELP then TYPE
 * before their samples, and each sample belongs to the last family. */
static void parse(const char *text, struct expo *e)
{
	char *copy = strdup(text), *save = NULL;
	int cap = 64;

	memset(e, 0, sizeof(*e));
	e->s = calloc((size_t)cap, sizeof(*e->s));
	assert_non_null(copy);
	assert_true(strlen(text) == 0 || text[strlen(text) - 1] == '\n');
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, "# HELP ", 7)) {
			assert_true(e->nfam < 64);
			size_t n = strcspn(l + 7, " ");
			memcpy(e->fam[e->nfam], l + 7, n);
			e->fam[e->nfam][n] = '\0';
			e->help[e->nfam++] = true;
			continue;
		}
		if (!strncmp(l, "# TYPE ", 7)) {
			char name[128], type[16];
			assert_int_equal(sscanf(l + 7, "%127s %15s", name, type), 2);
			assert_true(e->nfam > 0);
			assert_string_equal(name, e->fam[e->nfam - 1]);
			assert_true(!strcmp(type, "counter") || !strcmp(type, "gauge") ||
				    !strcmp(type, "histogram"));
			strcpy(e->type[e->nfam - 1], type);
			continue;
		}
		assert_true(l[0] != '#');
		if (e->ns == cap) {
			cap *= 2;
			e->s = realloc(e->s, (size_t)cap * sizeof(*e->s));
			assert_non_null(e->s);
		}
		parse_sample(l, &e->s[e->ns]);
		/* the sample belongs to the family announced last */
		const char *fam = e->fam[e->nfam - 1];
		size_t fl = strlen(fam);
		assert_true(e->nfam > 0);
		assert_memory_equal(e->s[e->ns].name, fam, fl);
		if (!strcmp(e->type[e->nfam - 1], "histogram"))
			assert_true(!strcmp(e->s[e->ns].name + fl, "_bucket") ||
				    !strcmp(e->s[e->ns].name + fl, "_sum") ||
				    !strcmp(e->s[e->ns].name + fl, "_count"));
		else
			assert_int_equal(e->s[e->ns].name[fl], '\0');
		e->ns++;
	}
	free(copy);
}

static void expo_free(struct expo *e)
{
	free(e->s);
}

/* The sample named name whose labels (pairs, NULL-terminated) all match;
 * NULL when none. */
static const struct sample *find(const struct expo *e, const char *name, ...)
{
	for (int i = 0; i < e->ns; i++) {
		va_list ap;
		const char *k;
		bool ok = !strcmp(e->s[i].name, name);
		va_start(ap, name);
		while (ok && (k = va_arg(ap, const char *))) {
			const char *v = va_arg(ap, const char *), *got = lab(&e->s[i], k);
			ok = got && !strcmp(got, v);
		}
		va_end(ap);
		if (ok)
			return &e->s[i];
	}
	return NULL;
}

static double val(const struct expo *e, const char *name, const char *k1, const char *v1, const char *k2,
		  const char *v2)
{
	const struct sample *s = k2 ? find(e, name, k1, v1, k2, v2, NULL)
				    : k1 ? find(e, name, k1, v1, NULL) : find(e, name, NULL);
	assert_non_null(s);
	return s->v;
}

/* Every histogram in e: per series, buckets ascending in le with counts
 * not decreasing, the last le="+Inf" equal to _count. */
static void check_histograms(const struct expo *e)
{
	for (int i = 0; i < e->ns; i++) {
		const struct sample *s = &e->s[i];
		size_t nl = strlen(s->name);
		if (nl < 7 || strcmp(s->name + nl - 7, "_bucket"))
			continue;
		const char *le = lab(s, "le");
		assert_non_null(le);
		if (strcmp(le, "+Inf"))
			continue;
		/* walk back over this series' buckets */
		double above = s->v, le_above = INFINITY;
		for (int j = i - 1; j >= 0 && !strcmp(e->s[j].name, s->name) && e->s[j].nl == s->nl; j--) {
			bool same = true;
			for (int k = 0; k < s->nl; k++)
				if (strcmp(s->lname[k], "le") && strcmp(s->lval[k], e->s[j].lval[k]))
					same = false;
			if (!same)
				break;
			double lev = strtod(lab(&e->s[j], "le"), NULL);
			assert_true(e->s[j].v <= above);
			assert_true(lev < le_above);
			above = e->s[j].v;
			le_above = lev;
		}
		/* _sum and _count follow */
		assert_true(i + 2 < e->ns);
		assert_true(strstr(e->s[i + 1].name, "_sum") != NULL);
		assert_true(strstr(e->s[i + 2].name, "_count") != NULL);
		assert_true(e->s[i + 2].v == s->v);
	}
}

static char *render(struct kube_registry *r)
{
	size_t len = 0;
	char *t = kube_registry_render(r, &len);

	assert_non_null(t);
	assert_int_equal(strlen(t), len);
	return t;
}

/* ---- the registry ---- */

static void rejects_bad_families(void **state)
{
	static const double b2[] = { 1, 1 }, bnan[] = { NAN };
	struct kube_registry *r = kube_registry_create();
	struct carve_error err = { 0 };
	struct kube_mdesc ok = { "x_total", "help", KUBE_COUNTER, { "a", "b" }, NULL, 0 };
	struct kube_mdesc d;

	(void)state;
	assert_int_equal(kube_registry_add(r, &ok, &err), 0);
	assert_int_equal(kube_registry_add(r, &ok, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "x_total: registered twice"));
	d = (struct kube_mdesc){ "9bad", "h", KUBE_GAUGE, { NULL }, NULL, 0 };
	assert_int_equal(kube_registry_add(r, &d, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "\"9bad\": not a valid metric name"));
	d = (struct kube_mdesc){ "has-dash", "h", KUBE_GAUGE, { NULL }, NULL, 0 };
	assert_int_equal(kube_registry_add(r, &d, &err), CARVE_EINVAL);
	d = (struct kube_mdesc){ "g", "h", KUBE_GAUGE, { "le" }, NULL, 0 };
	assert_int_equal(kube_registry_add(r, &d, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "label 1 \"le\""));
	d = (struct kube_mdesc){ "g", "h", KUBE_GAUGE, { "a", "b:c" }, NULL, 0 };
	assert_int_equal(kube_registry_add(r, &d, &err), CARVE_EINVAL);
	d = (struct kube_mdesc){ "g", "h", KUBE_GAUGE, { "a", "a" }, NULL, 0 };
	assert_int_equal(kube_registry_add(r, &d, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "label a repeated"));
	d = (struct kube_mdesc){ "h", "h", KUBE_HISTOGRAM, { NULL }, NULL, 0 };
	assert_int_equal(kube_registry_add(r, &d, &err), CARVE_EINVAL);
	d = (struct kube_mdesc){ "h", "h", KUBE_HISTOGRAM, { NULL }, b2, 2 };
	assert_int_equal(kube_registry_add(r, &d, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "bucket 2"));
	d = (struct kube_mdesc){ "h", "h", KUBE_HISTOGRAM, { NULL }, bnan, 1 };
	assert_int_equal(kube_registry_add(r, &d, &err), CARVE_EINVAL);
	d = (struct kube_mdesc){ "g", "h", KUBE_GAUGE, { NULL }, NULL, 0 };
	assert_int_equal(kube_registry_add(r, &d, &err), 1);
	kube_registry_destroy(r);
}

static void updates_by_type(void **state)
{
	static const double b[] = { 1, 5 };
	struct kube_registry *r = kube_registry_create();
	struct kube_mdesc c = { "c_total", "c", KUBE_COUNTER, { "k" }, NULL, 0 };
	struct kube_mdesc g = { "g", "g", KUBE_GAUGE, { NULL }, NULL, 0 };
	struct kube_mdesc h = { "h_seconds", "h", KUBE_HISTOGRAM, { NULL }, b, 2 };
	const char *a[] = { "a" };

	(void)state;
	assert_int_equal(kube_registry_add(r, &c, NULL), 0);
	assert_int_equal(kube_registry_add(r, &g, NULL), 1);
	assert_int_equal(kube_registry_add(r, &h, NULL), 2);
	assert_true(isnan(kube_metric_get(r, 0, a)));
	assert_int_equal(kube_metric_add(r, 0, a, 2), 0);
	assert_int_equal(kube_metric_add(r, 0, a, -1), CARVE_ERANGE);
	assert_int_equal(kube_metric_set(r, 0, a, 1), CARVE_ERANGE);
	assert_int_equal(kube_metric_set(r, 0, a, 7), 0);
	assert_true(kube_metric_get(r, 0, a) == 7);
	assert_int_equal(kube_metric_observe(r, 0, a, 1), CARVE_EINVAL);
	assert_int_equal(kube_metric_add(r, 1, NULL, -3.5), 0);
	assert_int_equal(kube_metric_set(r, 1, NULL, NAN), CARVE_EINVAL);
	assert_true(kube_metric_get(r, 1, NULL) == -3.5);
	assert_int_equal(kube_metric_set(r, 2, NULL, 1), CARVE_EINVAL);
	assert_int_equal(kube_metric_observe(r, 2, NULL, 0.5), 0);
	assert_int_equal(kube_metric_observe(r, 2, NULL, 1), 0); /* le is inclusive */
	assert_int_equal(kube_metric_observe(r, 2, NULL, 3), 0);
	assert_int_equal(kube_metric_observe(r, 2, NULL, 99), 0);
	assert_true(kube_metric_get(r, 2, NULL) == 4);
	assert_int_equal(kube_metric_add(r, 7, NULL, 1), CARVE_EINVAL);
	assert_int_equal(kube_metric_reset(r, 7), CARVE_EINVAL);

	char *t = render(r);
	struct expo e;
	parse(t, &e);
	assert_int_equal(e.nfam, 3);
	assert_true(val(&e, "c_total", "k", "a", NULL, NULL) == 7);
	assert_true(val(&e, "g", NULL, NULL, NULL, NULL) == -3.5);
	assert_true(val(&e, "h_seconds_bucket", "le", "1", NULL, NULL) == 2);
	assert_true(val(&e, "h_seconds_bucket", "le", "5", NULL, NULL) == 3);
	assert_true(val(&e, "h_seconds_bucket", "le", "+Inf", NULL, NULL) == 4);
	assert_true(val(&e, "h_seconds_sum", NULL, NULL, NULL, NULL) == 103.5);
	assert_true(val(&e, "h_seconds_count", NULL, NULL, NULL, NULL) == 4);
	check_histograms(&e);
	/* the exact text of a histogram series, as Prometheus writes it */
	assert_non_null(strstr(t, "# TYPE h_seconds histogram\nh_seconds_bucket{le=\"1\"} 2\n"
				  "h_seconds_bucket{le=\"5\"} 3\nh_seconds_bucket{le=\"+Inf\"} 4\n"
				  "h_seconds_sum 103.5\nh_seconds_count 4\n"));
	expo_free(&e);
	free(t);

	assert_int_equal(kube_metric_reset(r, 0), 0);
	assert_true(isnan(kube_metric_get(r, 0, a)));
	t = render(r);
	assert_non_null(strstr(t, "# TYPE c_total counter\n# HELP g"));
	free(t);
	kube_registry_destroy(r);
}

static void escapes_label_values_and_help(void **state)
{
	static const char *nasty[] = { "quote\"d", "back\\slash", "new\nline", "", "a,b=c}{",
				       "gr\xc3\xbc\xc3\x9f" };
	struct kube_registry *r = kube_registry_create();
	struct kube_mdesc d = { "odd", "line one\nback\\slash \"kept\"", KUBE_GAUGE, { "v", "w" }, NULL, 0 };
	struct expo e;
	char *t;

	(void)state;
	assert_int_equal(kube_registry_add(r, &d, NULL), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(kube_metric_set(r, 0, (const char *[]){ nasty[i], "x" }, i), 0);
	assert_int_equal(kube_metric_set(r, 0, (const char *[]){ NULL, "y" }, 9), 0);
	t = render(r);
	assert_non_null(strstr(t, "# HELP odd line one\\nback\\\\slash \"kept\"\n"));
	assert_non_null(strstr(t, "odd{v=\"quote\\\"d\",w=\"x\"} 0\n"));
	assert_non_null(strstr(t, "odd{v=\"new\\nline\",w=\"x\"} 2\n"));
	parse(t, &e);
	assert_int_equal(e.ns, 7);
	for (int i = 0; i < 6; i++) {
		/* order of first creation, values read back unescaped */
		assert_string_equal(lab(&e.s[i], "v"), nasty[i]);
		assert_true(e.s[i].v == i);
	}
	assert_string_equal(lab(&e.s[6], "v"), "");
	expo_free(&e);
	free(t);
	kube_registry_destroy(r);
}

static void values_read_back_exactly(void **state)
{
	static const double vs[] = { 0.1, 1e-9, 123456789012345.0, 1.0 / 3.0, -0.0, INFINITY, -INFINITY };
	struct kube_registry *r = kube_registry_create();
	struct kube_mdesc d = { "v", "v", KUBE_GAUGE, { "i" }, NULL, 0 };
	struct expo e;
	char *t;

	(void)state;
	assert_int_equal(kube_registry_add(r, &d, NULL), 0);
	for (int i = 0; i < 7; i++) {
		char k[16];
		snprintf(k, sizeof(k), "%d", i);
		assert_int_equal(kube_metric_set(r, 0, (const char *[]){ k }, vs[i]), 0);
	}
	t = render(r);
	assert_non_null(strstr(t, "v{i=\"0\"} 0.1\n"));
	assert_non_null(strstr(t, "v{i=\"5\"} +Inf\n"));
	parse(t, &e);
	for (int i = 0; i < 7; i++)
		assert_true(e.s[i].v == vs[i]);
	expo_free(&e);
	free(t);
	kube_registry_destroy(r);
}

static void many_series_are_found_by_hash(void **state)
{
	struct kube_registry *r = kube_metrics_create();

	(void)state;
	assert_non_null(r);
	kube_metrics_gpus_begin(r);
	for (int n = 0; n < 2000; n++)
		for (int g = 0; g < 8; g++) {
			char node[32];
			snprintf(node, sizeof(node), "node-%04d", n);
			assert_int_equal(kube_metrics_gpu_add(r, node, g, g < 4 ? "prod" : "dev", 0.25), 0);
			if (g == 0)
				assert_int_equal(kube_metrics_gpu_add(r, node, g, "prod", 0.5), 0);
		}
	assert_int_equal(kube_metrics_gpu_add(r, "n", 0, "q", -1), CARVE_EINVAL);
	kube_metrics_gpus_commit(r);
	assert_true(kube_metric_get(r, KM_GPU_ALLOCATED, (const char *[]){ "node-1999", "0", "prod" }) == 0.75);
	assert_true(kube_metric_get(r, KM_GPU_ALLOCATED, (const char *[]){ "node-0007", "5", "dev" }) == 0.25);
	assert_true(isnan(kube_metric_get(r, KM_GPU_ALLOCATED, (const char *[]){ "node-0007", "5", "prod" })));
	/* a new batch replaces the old one */
	kube_metrics_gpus_begin(r);
	assert_int_equal(kube_metrics_gpu_add(r, "n1", 3, "", 1), 0);
	kube_metrics_gpus_commit(r);
	assert_true(isnan(kube_metric_get(r, KM_GPU_ALLOCATED, (const char *[]){ "node-1999", "0", "prod" })));
	char *t = render(r);
	assert_non_null(strstr(t, "carve_gpu_allocated{node=\"n1\",gpu=\"3\",queue=\"\"} 1\n"));
	free(t);
	kube_registry_destroy(r);
}

/* ---- the scheduler's metric set ---- */

static const char *const all_names[KM__COUNT] = {
	"kueue_pending_workloads", "kueue_reserving_active_workloads", "kueue_admitted_active_workloads",
	"kueue_quota_reserved_workloads_total", "kueue_admitted_workloads_total",
	"kueue_evicted_workloads_total", "kueue_preempted_workloads_total",
	"kueue_admission_wait_time_seconds", "kueue_admission_attempts_total",
	"kueue_admission_attempt_duration_seconds", "kueue_cluster_queue_status",
	"kueue_cluster_queue_resource_usage", "kueue_cluster_queue_nominal_quota",
	"kueue_cluster_queue_borrowing_limit", "kueue_cluster_queue_lending_limit",
	"carve_bind_duration_seconds", "carve_binds_total", "carve_cycle_duration_seconds",
	"carve_watch_restarts_total", "carve_api_requests_total", "carve_api_wait_seconds_total", "carve_gpu_allocated",
	"carve_leader",
};

static void metric_set_has_every_family(void **state)
{
	struct kube_registry *r = kube_metrics_create();
	struct expo e;
	char *t;

	(void)state;
	t = render(r);
	parse(t, &e);
	assert_int_equal(e.nfam, KM__COUNT);
	for (int i = 0; i < KM__COUNT; i++) {
		assert_string_equal(e.fam[i], all_names[i]);
		assert_true(e.help[i]);
	}
	assert_string_equal(e.type[KM_ADMISSION_WAIT], "histogram");
	assert_string_equal(e.type[KM_PENDING_WORKLOADS], "gauge");
	assert_string_equal(e.type[KM_PREEMPTED_TOTAL], "counter");
	/* only carve_leader has a series before anything happened */
	assert_int_equal(e.ns, 1);
	assert_true(val(&e, "carve_leader", NULL, NULL, NULL, NULL) == 0);
	expo_free(&e);
	free(t);

	/* Kueue's admission wait buckets: 1, then 2.5 doubling (14 in all) */
	assert_int_equal(kube_metrics_admitted(r, "prod", 3.0), 0);
	assert_int_equal(kube_metrics_admitted(r, "prod", 20000), 0);
	assert_int_equal(kube_metrics_bind(r, "success", 0.002), 0);
	assert_int_equal(kube_metrics_bind(r, "conflict", 0.004), 0);
	assert_int_equal(kube_metrics_preempted(r, "prod", "InCohortReclamation", "dev"), 0);
	assert_int_equal(kube_metrics_watch_restart(r, "Pod", "expired"), 0);
	assert_int_equal(kube_metrics_leader(r, true), 0);
	struct carve_kube_stats st = { .by_class = { 1, 0, 40, 0, 2, 3 },
				       .server_ns = 1500000000,
				       .throttled_ns = 250000000 };
	assert_int_equal(kube_metrics_api(r, &st), 0);
	st.by_class[2] = 39; /* a cumulative counter going back is refused */
	assert_int_equal(kube_metrics_api(r, &st), CARVE_ERANGE);
	t = render(r);
	parse(t, &e);
	check_histograms(&e);
	assert_true(val(&e, "kueue_admission_wait_time_seconds_bucket", "cluster_queue", "prod", "le", "1") == 0);
	assert_true(val(&e, "kueue_admission_wait_time_seconds_bucket", "cluster_queue", "prod", "le", "5") == 1);
	assert_true(val(&e, "kueue_admission_wait_time_seconds_bucket", "cluster_queue", "prod", "le", "10240") ==
		    1);
	assert_true(val(&e, "kueue_admission_wait_time_seconds_bucket", "cluster_queue", "prod", "le", "+Inf") ==
		    2);
	assert_true(val(&e, "kueue_admitted_workloads_total", "cluster_queue", "prod", NULL, NULL) == 2);
	assert_true(val(&e, "kueue_quota_reserved_workloads_total", "cluster_queue", "prod", NULL, NULL) == 2);
	assert_true(val(&e, "carve_binds_total", "result", "conflict", NULL, NULL) == 1);
	assert_true(val(&e, "carve_bind_duration_seconds_count", NULL, NULL, NULL, NULL) == 2);
	assert_true(val(&e, "kueue_preempted_workloads_total", "preempting_cluster_queue", "prod", "reason",
			"InCohortReclamation") == 1);
	assert_true(val(&e, "kueue_evicted_workloads_total", "cluster_queue", "dev", "reason", "Preempted") == 1);
	assert_true(val(&e, "carve_watch_restarts_total", "kind", "Pod", "reason", "expired") == 1);
	assert_true(val(&e, "carve_api_requests_total", "code_class", "2xx", NULL, NULL) == 40);
	assert_true(val(&e, "carve_api_requests_total", "code_class", "error", NULL, NULL) == 1);
	assert_true(val(&e, "carve_api_wait_seconds_total", "on", "server", NULL, NULL) == 1.5);
	assert_true(val(&e, "carve_api_wait_seconds_total", "on", "rate_limiter", NULL, NULL) == 0.25);
	assert_true(val(&e, "carve_leader", NULL, NULL, NULL, NULL) == 1);
	expo_free(&e);
	free(t);
	kube_registry_destroy(r);
}

static void plan_sets_queue_gauges(void **state)
{
	struct kube_registry *r = kube_metrics_create();
	struct carve_plan_usage u1[] = {
		{ "a100", "nvidia.com/gpu", 6000, 2000, 4000 },
		{ "a100", "cpu", 1500, 0, 64000 },
	};
	struct carve_plan_usage u2[] = { { "h100", "memory", 1024000, 0, 2048000 } };
	struct carve_plan_cq cqs[] = {
		{ "prod", "org", 3, 2, 2, u1 },
		{ "dev", NULL, 0, 1, 1, u2 },
	};
	struct carve_plan_gang g = { "ns/job", "prod", 0, 1 };
	struct carve_plan p = { .ngangs = 1, .gangs = &g, .ncqs = 2, .cqs = cqs };
	struct expo e;
	char *t;

	(void)state;
	assert_int_equal(kube_metrics_plan(r, &p, 0.003), 0);
	assert_int_equal(kube_metrics_limits(r, "org", "prod", "a100", "nvidia.com/gpu", 2, -1), 0);
	t = render(r);
	parse(t, &e);
	check_histograms(&e);
	assert_true(val(&e, "kueue_pending_workloads", "cluster_queue", "prod", "status", "inadmissible") == 3);
	assert_true(val(&e, "kueue_pending_workloads", "cluster_queue", "prod", "status", "active") == 0);
	assert_true(val(&e, "kueue_admitted_active_workloads", "cluster_queue", "prod", NULL, NULL) == 2);
	assert_true(val(&e, "kueue_reserving_active_workloads", "cluster_queue", "dev", NULL, NULL) == 1);
	assert_true(val(&e, "kueue_cluster_queue_status", "cluster_queue", "dev", "status", "active") == 1);
	assert_true(val(&e, "kueue_cluster_queue_status", "cluster_queue", "dev", "status", "pending") == 0);
	const struct sample *s = find(&e, "kueue_cluster_queue_resource_usage", "cluster_queue", "prod", "resource",
				      "nvidia.com/gpu", NULL);
	assert_non_null(s);
	assert_true(s->v == 6);
	assert_string_equal(lab(s, "cohort"), "org");
	assert_string_equal(lab(s, "flavor"), "a100");
	assert_true(val(&e, "kueue_cluster_queue_resource_usage", "cluster_queue", "prod", "resource", "cpu") == 1.5);
	assert_true(val(&e, "kueue_cluster_queue_nominal_quota", "cluster_queue", "dev", "resource", "memory") ==
		    2048);
	assert_string_equal(lab(find(&e, "kueue_cluster_queue_nominal_quota", "cluster_queue", "dev", NULL),
				"cohort"),
			    "");
	assert_true(val(&e, "kueue_cluster_queue_borrowing_limit", "cluster_queue", "prod", NULL, NULL) == 2);
	assert_null(find(&e, "kueue_cluster_queue_lending_limit", NULL));
	assert_true(val(&e, "kueue_admission_attempts_total", "result", "success", NULL, NULL) == 1);
	assert_true(val(&e, "kueue_admission_attempt_duration_seconds_count", "result", "success", NULL, NULL) == 1);
	assert_true(val(&e, "carve_cycle_duration_seconds_count", NULL, NULL, NULL, NULL) == 1);
	assert_true(val(&e, "carve_cycle_duration_seconds_sum", NULL, NULL, NULL, NULL) == 0.003);
	expo_free(&e);
	free(t);

	/* the next plan has no "dev" and admits nothing: dev's series go,
	 * the attempt counts as inadmissible */
	p.ngangs = 0;
	p.ncqs = 1;
	assert_int_equal(kube_metrics_plan(r, &p, 0.5), 0);
	t = render(r);
	parse(t, &e);
	assert_null(find(&e, "kueue_admitted_active_workloads", "cluster_queue", "dev", NULL));
	assert_null(find(&e, "kueue_cluster_queue_nominal_quota", "cluster_queue", "dev", NULL));
	assert_null(find(&e, "kueue_cluster_queue_borrowing_limit", NULL));
	assert_non_null(find(&e, "kueue_admitted_active_workloads", "cluster_queue", "prod", NULL));
	assert_true(val(&e, "kueue_admission_attempts_total", "result", "inadmissible", NULL, NULL) == 1);
	assert_true(val(&e, "kueue_admission_attempts_total", "result", "success", NULL, NULL) == 1);
	assert_true(val(&e, "carve_cycle_duration_seconds_count", NULL, NULL, NULL, NULL) == 2);
	expo_free(&e);
	free(t);

	/* nothing pending and nothing admitted: no attempt counted */
	cqs[0].pending = 0;
	assert_int_equal(kube_metrics_plan(r, &p, 0.1), 0);
	assert_true(kube_metric_get(r, KM_ADMISSION_ATTEMPTS, (const char *[]){ "inadmissible" }) == 1);
	kube_registry_destroy(r);
}

/* ---- the server ---- */

struct reply {
	long code;
	char *body;
	size_t len;
	char ctype[128];
	char allow[64];
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct reply *r = ctx;
	char *nb = realloc(r->body, r->len + size * n + 1);

	if (!nb)
		return 0;
	memcpy(nb + r->len, p, size * n);
	r->body = nb;
	r->len += size * n;
	r->body[r->len] = '\0';
	return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	struct reply *r = ctx;
	size_t l = size * n;

	if (l > 14 && !strncasecmp(p, "Content-Type: ", 14))
		snprintf(r->ctype, sizeof(r->ctype), "%.*s", (int)(l - 16), p + 14);
	if (l > 7 && !strncasecmp(p, "Allow: ", 7))
		snprintf(r->allow, sizeof(r->allow), "%.*s", (int)(l - 9), p + 7);
	return l;
}

/* One request to 127.0.0.1:port; the caller frees reply.body. */
static struct reply ask(int port, const char *method, const char *path)
{
	struct reply r = { 0 };
	char url[128];
	CURL *c = curl_easy_init();

	assert_non_null(c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (!strcmp(method, "POST"))
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "x=1");
	else if (strcmp(method, "GET"))
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.code);
	curl_easy_cleanup(c);
	return r;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void server_answers(void **state)
{
	struct kube_registry *m = kube_metrics_create();
	struct kube_serve_opts o = { .addr = "127.0.0.1:0", .metrics = m, .stale_ms = 1000 };
	struct carve_error err = { 0 };
	struct kube_server *s = kube_serve_start(&o, &err);
	struct reply r;
	int port;

	(void)state;
	assert_non_null(s);
	port = kube_serve_port(s);
	assert_true(port > 0 && port < 65536);

	r = ask(port, "GET", "/metrics");
	assert_int_equal(r.code, 200);
	assert_string_equal(r.ctype, KUBE_METRICS_CONTENT_TYPE);
	assert_non_null(strstr(r.body, "# TYPE kueue_pending_workloads gauge\n"));
	free(r.body);

	r = ask(port, "HEAD", "/metrics");
	assert_int_equal(r.code, 200);
	assert_null(r.body);

	kube_serve_heartbeat(s);
	r = ask(port, "GET", "/healthz");
	assert_int_equal(r.code, 200);
	assert_string_equal(r.body, "ok\n");
	free(r.body);

	r = ask(port, "GET", "/readyz");
	assert_int_equal(r.code, 503);
	free(r.body);
	kube_serve_set_ready(s, true);
	r = ask(port, "GET", "/readyz");
	assert_int_equal(r.code, 200);
	free(r.body);

	r = ask(port, "GET", "/nothing");
	assert_int_equal(r.code, 404);
	free(r.body);
	r = ask(port, "GET", "/metrics/");
	assert_int_equal(r.code, 404);
	free(r.body);

	r = ask(port, "POST", "/metrics");
	assert_int_equal(r.code, 405);
	assert_string_equal(r.allow, "GET, HEAD");
	free(r.body);
	r = ask(port, "DELETE", "/healthz");
	assert_int_equal(r.code, 405);
	free(r.body);

	/* no heartbeat for longer than stale_ms: 500, then fine again */
	sleep_ms(1100);
	r = ask(port, "GET", "/healthz");
	assert_int_equal(r.code, 500);
	assert_non_null(strstr(r.body, "stale: no heartbeat for"));
	free(r.body);
	kube_serve_heartbeat(s);
	r = ask(port, "GET", "/healthz");
	assert_int_equal(r.code, 200);
	free(r.body);

	/* the port is taken now */
	char addr[32];
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	struct kube_serve_opts o2 = { .addr = addr, .metrics = m, .stale_ms = 0 };
	assert_null(kube_serve_start(&o2, &err));
	assert_int_equal(err.code, CARVE_EIO);
	assert_non_null(strstr(err.text, addr));

	kube_serve_stop(s);
	kube_registry_destroy(m);

	/* without a registry, /metrics is not served */
	struct kube_serve_opts o3 = { .addr = "localhost:0", .metrics = NULL, .stale_ms = 0 };
	s = kube_serve_start(&o3, &err);
	assert_non_null(s);
	r = ask(kube_serve_port(s), "GET", "/metrics");
	assert_int_equal(r.code, 404);
	free(r.body);
	kube_serve_stop(s);
	kube_serve_stop(NULL);
}

static void bad_addresses(void **state)
{
	static const char *bad[] = { "nohost", "1.2.3.4:99999", "host.example:80", "127.0.0.1:",
				     "127.0.0.1:8x", ":-1", "1.2.3:80" };
	struct carve_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kube_serve_opts o = { .addr = bad[i], .metrics = NULL, .stale_ms = 0 };
		memset(&err, 0, sizeof(err));
		assert_null(kube_serve_start(&o, &err));
		assert_int_equal(err.code, CARVE_EINVAL);
		assert_non_null(strstr(err.text, bad[i]));
	}
	struct kube_serve_opts o = { .addr = NULL, .metrics = NULL, .stale_ms = 0 };
	assert_null(kube_serve_start(&o, &err));
}

/* ---- scrapes while updating ---- */

#define SHARES 64

struct race {
	struct kube_registry *m;
	int port;
	atomic_bool stop;
	int scrapes;
};

static void *updater(void *ctx)
{
	struct race *rc = ctx;

	for (int round = 0; !atomic_load(&rc->stop); round++) {
		/* every batch: SHARES GPUs on a rotating set of nodes, each
		 * 0.5 + 0.5; a scrape must always see the whole batch */
		kube_metrics_gpus_begin(rc->m);
		for (int i = 0; i < SHARES; i++) {
			char node[32];
			snprintf(node, sizeof(node), "n%d", (round + i) % 97);
			kube_metrics_gpu_add(rc->m, node, i, "q", 0.5);
			kube_metrics_gpu_add(rc->m, node, i, "q", 0.5);
		}
		kube_metrics_gpus_commit(rc->m);
		kube_metrics_bind(rc->m, "success", 0.001 * (round % 50));
		kube_metrics_watch_restart(rc->m, round % 2 ? "Pod" : "Node", "closed");
	}
	return NULL;
}

static void *scraper(void *ctx)
{
	struct race *rc = ctx;

	for (int i = 0; i < 25; i++) {
		struct reply r = ask(rc->port, "GET", "/metrics");
		struct expo e;
		double total = 0;
		int gpus = 0;
		assert_int_equal(r.code, 200);
		parse(r.body, &e);
		check_histograms(&e);
		for (int j = 0; j < e.ns; j++)
			if (!strcmp(e.s[j].name, "carve_gpu_allocated")) {
				total += e.s[j].v;
				gpus++;
				assert_true(e.s[j].v == 1);
			}
		assert_true(gpus == 0 || gpus == SHARES);
		assert_true(total == gpus);
		expo_free(&e);
		free(r.body);
		__atomic_add_fetch(&rc->scrapes, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void concurrent_scrapes(void **state)
{
	struct race rc = { .m = kube_metrics_create() };
	struct kube_serve_opts o = { .addr = "127.0.0.1:0", .metrics = rc.m, .stale_ms = 0 };
	struct kube_server *s = kube_serve_start(&o, NULL);
	pthread_t up, sc[4];

	(void)state;
	assert_non_null(s);
	rc.port = kube_serve_port(s);
	atomic_store(&rc.stop, false);
	assert_int_equal(pthread_create(&up, NULL, updater, &rc), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&sc[i], NULL, scraper, &rc), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(sc[i], NULL);
	atomic_store(&rc.stop, true);
	pthread_join(up, NULL);
	assert_int_equal(rc.scrapes, 100);
	assert_true(kube_metric_get(rc.m, KM_BIND_DURATION, NULL) > 0);
	kube_serve_stop(s);
	kube_registry_destroy(rc.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rejects_bad_families),
		cmocka_unit_test(updates_by_type),
		cmocka_unit_test(escapes_label_values_and_help),
		cmocka_unit_test(values_read_back_exactly),
		cmocka_unit_test(many_series_are_found_by_hash),
		cmocka_unit_test(metric_set_has_every_family),
		cmocka_unit_test(plan_sets_queue_gauges),
		cmocka_unit_test(server_answers),
		cmocka_unit_test(bad_addresses),
		cmocka_unit_test(concurrent_scrapes),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
