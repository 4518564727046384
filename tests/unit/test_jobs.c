/*
 * test_jobs.c - carve's trace format (CSV and YAML loaders and writers),
 * openb pod lists as jobs, the seed scenario's trace generator, the
 * shipped week, manifest directory walks that leave traces out, and the
 * one directory walker (walk.h) with the one list of trace names.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "carve/jobs.h"
#include "carve/trace.h"
#include "carve/tracegen.h"
#include "testutil.h"
#include "walk.h"

#define GI (1024LL * 1024 * 1024 * 1000)

/* ---- helpers ---- */

struct fx {
	struct carve_jobs *js;
	struct carve_diags d;
	size_t skipped;
};

static void fx_init(struct fx *f)
{
	f->js = carve_jobs_create();
	assert_non_null(f->js);
	carve_diags_init(&f->d);
	f->skipped = 0;
}

static void fx_cleanup(struct fx *f)
{
	carve_diags_cleanup(&f->d);
	carve_jobs_destroy(f->js);
}

static void load_csv(struct fx *f, const char *text)
{
	assert_int_equal(carve_jobs_load_csv_buf(f->js, "t.trace.csv", text, strlen(text), &f->d,
						 &f->skipped), 0);
}

static void load_yaml(struct fx *f, const char *text)
{
	assert_int_equal(carve_jobs_load_yaml_buf(f->js, "t.trace.yaml", text, strlen(text),
						  &f->d, &f->skipped), 0);
}

/* Asserts an error at exactly line:col whose message is exactly msg. */
static void assert_diag(const struct carve_diags *d, unsigned line, unsigned col, const char *msg)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->v[i].pos.line == line && d->v[i].pos.col == col &&
		    !strcmp(d->v[i].msg, msg) && d->v[i].sev == CARVE_SEV_ERROR)
			return;
	fprintf(stderr, "expected %u:%u: error: %s; got:\n", line, col, msg);
	carve_diags_print(d, stderr);
	fail();
}

static void assert_clean(const struct carve_diags *d)
{
	if (d->n)
		carve_diags_print(d, stderr);
	assert_int_equal(d->n, 0);
}

static const struct carve_job *job(const struct carve_jobs *js, const char *name)
{
	size_t i;

	for (i = 0; i < js->n; i++)
		if (!strcmp(js->jobs[i].name, name))
			return &js->jobs[i];
	fail_msg("no job %s", name);
	return NULL;
}

static int64_t req(const struct carve_job_podset *ps, const char *name)
{
	size_t i;

	for (i = 0; i < ps->nreqs; i++)
		if (!strcmp(ps->reqs[i].name, name))
			return ps->reqs[i].milli;
	return -1;
}

/* The bytes a writer produces. */
static char *write_str(const struct carve_jobs *js, bool yaml, size_t *len)
{
	struct carve_error err = {0, ""};
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(yaml ? carve_jobs_write_yaml(js, f, &err)
			      : carve_jobs_write_csv(js, f, &err), 0);
	fclose(f);
	return buf;
}

/* ---- time spans ---- */

static void test_span(void **state)
{
	static const struct {
		const char *s;
		int64_t v;
	} good[] = {
		{"0", 0}, {"90", 90}, {"90s", 90}, {"45m", 2700}, {"2h30m", 9000},
		{"1d12h", 129600}, {"1d2h3m4s", 93784}, {"-5", -5}, {"-1h", -3600},
	};
	static const char *const bad[] = {"", "h", "1x", "1h2", "30m1h", "1h1h", "1.5h",
					  " 1", "+1", "1h ", "--1"};
	const char *why;
	int64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(carve_jobs_parse_span(good[i].s, &v, NULL), 0);
		assert_int_equal(v, good[i].v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(carve_jobs_parse_span(bad[i], &v, &why), CARVE_EPARSE);
		assert_non_null(why);
	}
	assert_int_equal(carve_jobs_parse_span("99999999999999d", &v, NULL), CARVE_ERANGE);
}

/* ---- CSV ---- */

static void test_csv_good(void **state)
{
	struct fx f;
	const struct carve_job *j;
	const struct carve_job_podset *ps;

	(void)state;
	fx_init(&f);
	load_csv(&f, "\xEF\xBB\xBF" "name,arrival,duration,namespace,queue,priority,count,"
		 "min_count,cpu,memory,gpu,gpu_resource,gpu_fraction,gpu_memory,gpu_models,"
		 "node_selector,demand,checkpoint\r\n"
		 "train,1h,2h30m,team-research,research,1000,4,2,64,512Gi,4,,,,,,0.9,true\r\n"
		 "# a comment line\n"
		 "\n"
		 "serve,90,3d,team-production,production,10000,2,,8,64Gi,1,nvidia.com/mig-3g.40gb,"
		 ",,,carve.dev/pool=production;zone=a,,no\n"
		 "frac,0,60,,,-5,,,500m,,,,0.25,10Gi,A100|V100M16,,,\n");
	assert_clean(&f.d);
	assert_int_equal(f.skipped, 0);
	assert_int_equal(f.js->n, 3);

	j = job(f.js, "train");
	assert_int_equal(j->arrival, 3600);
	assert_int_equal(j->duration, 9000);
	assert_string_equal(j->ns, "team-research");
	assert_string_equal(j->queue, "research");
	assert_int_equal(j->priority, 1000);
	assert_true(j->demand > 0.89 && j->demand < 0.91);
	assert_true(j->checkpoint);
	assert_int_equal(j->pos.line, 2);
	assert_string_equal(j->pos.file, "t.trace.csv");
	ps = &j->podsets[0];
	assert_int_equal(ps->count, 4);
	assert_int_equal(ps->min_count, 2);
	assert_int_equal(req(ps, "cpu"), 64000);
	assert_int_equal(req(ps, "memory"), 512 * GI);
	assert_int_equal(req(ps, "nvidia.com/gpu"), 4000);

	j = job(f.js, "serve");
	assert_int_equal(j->duration, 3 * 86400);
	assert_false(j->checkpoint);
	assert_true(j->demand == 1.0);
	ps = &j->podsets[0];
	assert_int_equal(ps->min_count, 2);
	assert_int_equal(req(ps, "nvidia.com/mig-3g.40gb"), 1000);
	assert_int_equal(req(ps, "nvidia.com/gpu"), -1);
	assert_int_equal(ps->nselector, 2);
	assert_string_equal(ps->selector[0].key, "carve.dev/pool");
	assert_string_equal(ps->selector[0].value, "production");
	assert_string_equal(ps->selector[1].key, "zone");

	j = job(f.js, "frac");
	assert_string_equal(j->ns, "default");
	assert_null(j->queue);
	assert_int_equal(j->priority, -5);
	ps = &j->podsets[0];
	assert_int_equal(ps->count, 1);
	assert_int_equal(ps->nreqs, 1);
	assert_int_equal(req(ps, "cpu"), 500);
	assert_int_equal(ps->gpu_milli, 250);
	assert_int_equal(ps->gpu_mem_mib, 10240);
	assert_int_equal(ps->nmodels, 2);
	assert_string_equal(ps->models[1], "V100M16");
	fx_cleanup(&f);
}

static void test_csv_bad_rows(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f);
	load_csv(&f, "name,arrival,duration,queue,count,min_count,gpu,gpu_resource,cpu,demand\n"
		 "a,0,1h,q,2,2,4,nvidia.com/gpu,8,0.9\n"
		 "b,10,-5,q,1,,1,,4,\n"
		 "c,1m,30m,q,2,3,1,,4,\n"
		 "d,2h30m,1h,q,1,,1,,4x,\n"
		 "a,5,60,q,1,,1,,1,\n"
		 "e,1d,60,q,1,,1,nvidia.com/mig-3g.40gb,1,1.5\n"
		 "f,x,60\n"
		 "g,-1,2h30,q,0,,,x,,\n"
		 "h,5,60,q,1,,1,,1,\n");
	assert_diag(&f.d, 3, 6, "duration: must be positive (got '-5')");
	assert_diag(&f.d, 4, 14, "min_count: 3 is more than count 2");
	assert_diag(&f.d, 5, 20, "cpu: malformed quantity '4x': unknown suffix");
	assert_diag(&f.d, 6, 1, "name: job \"a\" is already in the trace");
	assert_diag(&f.d, 7, 41, "demand: expected a number in (0, 1], got '1.5'");
	assert_diag(&f.d, 8, 1, "row has 3 fields, the header 10; row skipped");
	assert_diag(&f.d, 9, 3, "arrival: must not be negative (got '-1')");
	assert_diag(&f.d, 9, 6, "duration: a number after a unit needs a unit too (s, m, h, "
			"d), got '2h30'");
	assert_diag(&f.d, 9, 13, "count: 0 is out of range [1, 100000]");
	assert_diag(&f.d, 9, 17, "gpu_resource: 'x' given without a gpu count");
	assert_int_equal(f.d.nerrors, 10);
	assert_int_equal(f.skipped, 7);
	assert_int_equal(f.js->n, 2);
	assert_string_equal(f.js->jobs[0].name, "a");
	assert_string_equal(f.js->jobs[1].name, "h");
	fx_cleanup(&f);
}

static void test_csv_bad_header(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f);
	load_csv(&f, "name,arival,duration,gpus,cpu,cpu\na,1,2,3,4,5\n");
	assert_diag(&f.d, 1, 6, "header: unknown column 'arival' (did you mean 'arrival'?)");
	assert_diag(&f.d, 1, 22, "header: unknown column 'gpus' (did you mean 'gpu'?)");
	assert_diag(&f.d, 1, 31, "header: column 'cpu' appears twice");
	assert_diag(&f.d, 1, 34, "header: missing column 'arrival' (required: name, arrival, "
			"duration)");
	assert_int_equal(f.d.nerrors, 4);
	assert_int_equal(f.js->n, 0);
	assert_int_equal(f.skipped, 0);

	load_csv(&f, "");
	assert_diag(&f.d, 1, 1, "empty file (expected a header with at least name, arrival, "
			"duration)");
	fx_cleanup(&f);
}

/* ---- YAML ---- */

static void test_yaml_good(void **state)
{
	struct fx f;
	const struct carve_job *j;

	(void)state;
	fx_init(&f);
	load_yaml(&f, "apiVersion: carve.dev/v1alpha1\n"
		  "kind: Trace\n"
		  "metadata: {name: small}\n"
		  "jobs:\n"
		  "- name: train\n"
		  "  arrival: 1h\n"
		  "  duration: 10800\n"
		  "  namespace: team-research\n"
		  "  queue: research\n"
		  "  priority: 1000\n"
		  "  demand: 0.9\n"
		  "  checkpoint: true\n"
		  "  podSets:\n"
		  "  - name: launcher\n"
		  "    requests: {cpu: \"2\"}\n"
		  "  - name: workers\n"
		  "    count: 4\n"
		  "    minCount: 2\n"
		  "    requests: {cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"4\"}\n"
		  "    nodeSelector: {carve.dev/pool: training}\n"
		  "- name: nb\n"
		  "  arrival: 2h\n"
		  "  duration: 30m\n"
		  "  podSets:\n"
		  "  - gpuFraction: 0.5\n"
		  "    gpuMemory: 20Gi\n"
		  "    gpuModels: [L40S]\n"
		  "---\n"
		  "apiVersion: carve.dev/v1alpha1\n"
		  "kind: Trace\n"
		  "jobs: []\n");
	assert_clean(&f.d);
	assert_int_equal(f.js->n, 2);
	j = job(f.js, "train");
	assert_int_equal(j->arrival, 3600);
	assert_int_equal(j->duration, 10800);
	assert_int_equal(j->npodsets, 2);
	assert_string_equal(j->podsets[0].name, "launcher");
	assert_int_equal(j->podsets[0].count, 1);
	assert_int_equal(j->podsets[1].count, 4);
	assert_int_equal(j->podsets[1].min_count, 2);
	assert_int_equal(req(&j->podsets[1], "nvidia.com/gpu"), 4000);
	assert_string_equal(j->podsets[1].selector[0].value, "training");
	assert_true(j->checkpoint);
	assert_int_equal(j->pos.line, 5);
	assert_int_equal(j->pos.col, 3);
	j = job(f.js, "nb");
	assert_string_equal(j->ns, "default");
	assert_int_equal(j->podsets[0].gpu_milli, 500);
	assert_int_equal(j->podsets[0].gpu_mem_mib, 20480);
	assert_string_equal(j->podsets[0].models[0], "L40S");
	fx_cleanup(&f);
}

static void test_yaml_bad(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f);
	load_yaml(&f, "apiVersion: carve.dev/v1alpha1\n"
		  "kind: Trace\n"
		  "jobs:\n"
		  "- name: a\n"
		  "  arrival: 0\n"
		  "  duration: 3h\n"
		  "  podSets: [{count: 2, requests: {nvidia.com/gpu: \"4\"}}]\n"
		  "- name: b\n"
		  "  arrival: 10\n"
		  "  duration: -5\n"
		  "  podSets: [{count: 1}]\n"
		  "- name: c\n"
		  "  arrival: 1m\n"
		  "  duration: 30m\n"
		  "  podSets:\n"
		  "  - count: 2\n"
		  "    minCount: 3\n"
		  "- name: d\n"
		  "  arival: 5\n"
		  "  duration: 1h\n"
		  "  podSets:\n"
		  "  - requests: {cpu: 4x}\n"
		  "- name: a\n"
		  "  arrival: 5\n"
		  "  duration: 60\n"
		  "  podSets: [{count: 1}]\n"
		  "- arrival: 5\n"
		  "  duration: 60\n"
		  "  podSets: [{count: 1, gpuFraction: 1.5}]\n"
		  "- name: e\n"
		  "  arrival: 5\n"
		  "  duration: 60\n"
		  "  demand: 0\n"
		  "  podSets: []\n"
		  "- name: ok\n"
		  "  arrival: 5\n"
		  "  duration: 60\n"
		  "  podSets: [{}]\n"
		  "---\n"
		  "apiVersion: kueue.x-k8s.io/v1beta2\n"
		  "kind: Workload\n"
		  "jobs: []\n");
	assert_diag(&f.d, 10, 13, "job b: duration: must be positive (got '-5')");
	assert_diag(&f.d, 17, 15, "job c: podSets[0].minCount: 3 is more than count 2");
	assert_diag(&f.d, 18, 3, "job d: missing required field 'arrival'");
	assert_diag(&f.d, 19, 3, "job d: unknown field 'arival' (did you mean 'arrival'?)");
	assert_diag(&f.d, 22, 21, "job d: podSets[0].requests[cpu]: malformed quantity '4x': "
			"unknown suffix");
	assert_diag(&f.d, 23, 9, "job a: name: job \"a\" is already in the trace");
	assert_diag(&f.d, 27, 3, "Trace: jobs[5]: missing required field 'name'");
	assert_diag(&f.d, 29, 37, "Trace: jobs[5].podSets[0].gpuFraction: expected a share of "
			"one GPU in (0, 1) such as 0.5 or 500m, got '1.5'");
	assert_diag(&f.d, 33, 11, "job e: demand: expected a number in (0, 1], got '0'");
	assert_diag(&f.d, 34, 12, "job e: podSets: at least one podSet is needed");
	assert_diag(&f.d, 41, 7, "Trace: kind: expected Trace in a trace file, got 'Workload'; "
			"document skipped");
	assert_int_equal(f.d.nerrors, 11);
	assert_int_equal(f.skipped, 6);
	assert_int_equal(f.js->n, 2);
	assert_string_equal(f.js->jobs[1].name, "ok");
	fx_cleanup(&f);
}

/* ---- openb ---- */

/* Trace jobs become Workloads: names as the API server checks them (job
 * name a DNS-1123 subdomain, namespace a label, queue a subdomain, podSet
 * name a label), and at most 8 podSets (Kueue's limit); each at its field,
 * the job skipped. */
static void test_trace_names_and_podsets(void **state)
{
	static const char sub[] = "a lowercase RFC 1123 subdomain must consist of lower case "
				  "alphanumeric characters, '-' or '.', and must start and end "
				  "with an alphanumeric character";
	static const char lab[] = "a lowercase RFC 1123 label must consist of lower case "
				  "alphanumeric characters or '-', and must start and end with "
				  "an alphanumeric character";
	char msg[512];
	struct fx f;

	(void)state;
	fx_init(&f);
	load_csv(&f, "name,arrival,duration,namespace,queue\n"
		 "Bad_Name,0,60,,\n"
		 "a b,0,60,,\n"
		 "ok,0,60,team.a,\n"
		 "ok2,0,60,team-a,Q_1\n"
		 "fine,0,60,team-a,lq.a\n");
	snprintf(msg, sizeof(msg), "name: 'Bad_Name' is not a valid name: %s", sub);
	assert_diag(&f.d, 2, 1, msg);
	snprintf(msg, sizeof(msg), "name: 'a b' is not a valid name: %s", sub);
	assert_diag(&f.d, 3, 1, msg);
	snprintf(msg, sizeof(msg), "namespace: 'team.a' is not a valid name: %s", lab);
	assert_diag(&f.d, 4, 9, msg);
	snprintf(msg, sizeof(msg), "queue: 'Q_1' is not a valid name: %s", sub);
	assert_diag(&f.d, 5, 17, msg);
	assert_int_equal(f.skipped, 4);
	assert_non_null(job(f.js, "fine"));
	fx_cleanup(&f);

	fx_init(&f);
	load_yaml(&f, "apiVersion: carve.dev/v1alpha1\n"
		  "kind: Trace\n"
		  "jobs:\n"
		  "- name: a/b\n"
		  "  arrival: 0\n"
		  "  duration: 60\n"
		  "  podSets: [{count: 1}]\n"
		  "- name: nine\n"
		  "  arrival: 0\n"
		  "  duration: 60\n"
		  "  podSets: [{name: a}, {name: b}, {name: c}, {name: d}, {name: e}, {name: f},\n"
		  "            {name: g}, {name: h}, {name: i}]\n"
		  "- name: ps\n"
		  "  namespace: Team\n"
		  "  arrival: 0\n"
		  "  duration: 60\n"
		  "  podSets: [{name: Main}]\n"
		  "- name: eight\n"
		  "  arrival: 0\n"
		  "  duration: 60\n"
		  "  podSets: [{name: a}, {name: b}, {name: c}, {name: d}, {name: e}, {name: f},\n"
		  "            {name: g}, {name: h}]\n");
	snprintf(msg, sizeof(msg), "job a/b: name: 'a/b' is not a valid name: %s", sub);
	assert_diag(&f.d, 4, 9, msg);
	assert_diag(&f.d, 11, 12, "job nine: podSets: at most 8 podSets (Kueue's limit), got 9");
	snprintf(msg, sizeof(msg), "job ps: namespace: 'Team' is not a valid name: %s", lab);
	assert_diag(&f.d, 14, 14, msg);
	snprintf(msg, sizeof(msg), "job ps: podSets[0].name: 'Main' is not a valid name: %s", lab);
	assert_diag(&f.d, 17, 20, msg);
	assert_int_equal(f.skipped, 3);
	assert_non_null(job(f.js, "eight"));
	fx_cleanup(&f);
}

/* The trace CSV and the openb pod list refuse quotes and NUL bytes at their
 * column (quoting is not read: a quoted name kept its quotes). */
static void test_csv_quotes_and_nul(void **state)
{
	static const char text[] = "name,arrival,duration\n"
				   "\"a\",0,60\n"
				   "b,0\0,60\n"
				   "c,0,60\n";
	struct fx f;

	(void)state;
	fx_init(&f);
	assert_int_equal(carve_jobs_load_csv_buf(f.js, "t.trace.csv", text, sizeof(text) - 1, &f.d,
						 &f.skipped), 0);
	assert_diag(&f.d, 2, 1, "'\"': quoted fields are not supported (carve's CSV formats have "
		    "no quoting; a field holds no ',' or '\"'); row skipped");
	assert_diag(&f.d, 3, 4, "a NUL byte: CSV input must be text; row skipped");
	assert_int_equal(f.skipped, 2);
	assert_non_null(job(f.js, "c"));
	fx_cleanup(&f);
}

static void test_openb(void **state)
{
	static const char csv[] =
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
		"creation_time,deletion_time,scheduled_time\n"
		"p1,8000,30000,2,1000,V100M16|V100M32,LS,Running,1000,4600,1001\n"
		"p2,4000,1024,1,500,,BE,Running,1500,,1500\n"
		"p3,1000,100,0,0,,BE,Failed,2000,1900,\n"
		"p4,1000,100,0,0,,BE,Running,9000,9000,9000\n"
		"p5,1000,100,0,0,,BE,Pending,,,\n";
	struct carve_trace *t = carve_trace_create();
	const struct carve_job *j;
	struct fx f;

	(void)state;
	fx_init(&f);
	assert_non_null(t);
	assert_int_equal(carve_trace_load_openb_buf(t, "pods.csv", csv, sizeof(csv) - 1, &f.d), 0);
	assert_clean(&f.d);
	assert_int_equal(carve_jobs_from_openb(f.js, t, &f.d, &f.skipped), 0);
	assert_diag(&f.d, 4, 1, "deletion_time: 1900 is before creation_time 2000 (negative "
			"duration); row skipped");
	assert_int_equal(f.d.nerrors, 1);
	assert_int_equal(f.skipped, 1);
	assert_int_equal(f.js->n, 4);

	j = job(f.js, "p1");
	assert_int_equal(j->arrival, 0);
	assert_int_equal(j->duration, 3600);
	assert_null(j->queue);
	assert_string_equal(j->ns, "default");
	assert_int_equal(req(&j->podsets[0], "cpu"), 8000);
	assert_int_equal(req(&j->podsets[0], "memory"), 30000LL * 1024 * 1024 * 1000);
	assert_int_equal(req(&j->podsets[0], "nvidia.com/gpu"), 2000);
	assert_int_equal(j->podsets[0].gpu_milli, 0);
	assert_int_equal(j->podsets[0].nmodels, 2);
	assert_string_equal(j->podsets[0].models[1], "V100M32");
	assert_string_equal(j->pos.file, "pods.csv");
	assert_int_equal(j->pos.line, 2);

	/* No deletion: runs to the last time in the trace (9000). */
	j = job(f.js, "p2");
	assert_int_equal(j->arrival, 500);
	assert_int_equal(j->duration, 7500);
	assert_int_equal(req(&j->podsets[0], "nvidia.com/gpu"), -1);
	assert_int_equal(j->podsets[0].gpu_milli, 500);
	/* Zero-length life and a missing creation time: at least 1 s. */
	assert_int_equal(job(f.js, "p4")->duration, 1);
	assert_int_equal(job(f.js, "p5")->arrival, 0);
	assert_int_equal(job(f.js, "p5")->duration, 8000);

	/* A second conversion into the same list: every name is a duplicate. */
	assert_int_equal(carve_jobs_from_openb(f.js, t, &f.d, &f.skipped), 0);
	assert_diag(&f.d, 2, 1, "name: job \"p1\" is already in the trace");
	assert_int_equal(f.skipped, 6);
	fx_cleanup(&f);
	carve_trace_destroy(t);
}

/* A five-column openb list (no times): every job arrives at 0 and runs the
 * minimum of 1 s; gpu_spec absent means any model. */
static void test_openb_five_columns(void **state)
{
	static const char csv[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
				  "m1,8000,30000,8,1000\n"
				  "m2,4000,1024,1,250\n";
	struct carve_trace *t = carve_trace_create();
	const struct carve_job *j;
	struct fx f;

	(void)state;
	fx_init(&f);
	assert_non_null(t);
	assert_int_equal(carve_trace_load_openb_buf(t, "five.csv", csv, sizeof(csv) - 1, &f.d), 0);
	assert_clean(&f.d);
	assert_int_equal(carve_jobs_from_openb(f.js, t, &f.d, &f.skipped), 0);
	assert_clean(&f.d);
	assert_int_equal(f.js->n, 2);
	j = job(f.js, "m1");
	assert_int_equal(j->arrival, 0);
	assert_int_equal(j->duration, 1);
	assert_int_equal(req(&j->podsets[0], "nvidia.com/gpu"), 8000);
	assert_int_equal(j->podsets[0].nmodels, 0);
	j = job(f.js, "m2");
	assert_int_equal(j->arrival, 0);
	assert_int_equal(j->podsets[0].gpu_milli, 250);
	fx_cleanup(&f);
	carve_trace_destroy(t);
}

/* ---- writers ---- */

static void test_roundtrip(void **state)
{
	struct fx f, g;
	char *a, *b;
	size_t la, lb;

	(void)state;
	fx_init(&f);
	load_csv(&f, "name,arrival,duration,namespace,queue,priority,count,min_count,cpu,memory,"
		 "gpu,gpu_resource,gpu_fraction,gpu_memory,gpu_models,node_selector,demand,"
		 "checkpoint,class\n"
		 "x,1h,2h,ns,q,7,3,2,1500m,1536Mi,1,nvidia.com/mig-1g.10gb,,,,k=v,0.25,true,true\n"
		 "y,0,1,,,0,1,,,,,,0.5,8Gi,L40S|A10,,,,-\n");
	assert_clean(&f.d);
	/* classes that YAML would read as other things survive both writers */
	assert_string_equal(job(f.js, "x")->job_class, "true");
	assert_string_equal(job(f.js, "y")->job_class, "-");
	a = write_str(f.js, false, &la);
	fx_init(&g);
	load_csv(&g, a);
	assert_clean(&g.d);
	b = write_str(g.js, false, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	assert_non_null(strstr(a, "\nx,3600,7200,ns,q,7,3,2,1500m,1536Mi,1,nvidia.com/mig-1g.10gb,"
			       ",,,k=v,0.25,true,true\n"));
	free(a);
	free(b);
	fx_cleanup(&g);

	a = write_str(f.js, true, &la);
	fx_init(&g);
	load_yaml(&g, a);
	assert_clean(&g.d);
	assert_string_equal(job(g.js, "y")->job_class, "-");
	b = write_str(g.js, true, &lb);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	free(a);
	free(b);
	fx_cleanup(&g);
	fx_cleanup(&f);
}

static void test_write_csv_multi_podset(void **state)
{
	struct carve_error err = {0, ""};
	struct fx f;
	FILE *out;

	(void)state;
	fx_init(&f);
	load_yaml(&f, "apiVersion: carve.dev/v1alpha1\nkind: Trace\njobs:\n"
		  "- {name: two, arrival: 0, duration: 1, podSets: [{name: a}, {name: b}]}\n");
	assert_clean(&f.d);
	out = fopen("/dev/null", "w");
	assert_non_null(out);
	assert_int_equal(carve_jobs_write_csv(f.js, out, &err), CARVE_EINVAL);
	assert_non_null(strstr(err.text, "job two: 2 podSets"));
	fclose(out);
	fx_cleanup(&f);
}

/* ---- generator ---- */

static char *gen(uint64_t seed, int days, bool yaml, size_t *len, struct carve_jobs **keep)
{
	struct carve_error err = {0, ""};
	struct carve_jobs *js = carve_jobs_create();
	char *s;

	assert_non_null(js);
	assert_true(carve_tracegen(js, "seed", days, seed, &err) > 0);
	s = write_str(js, yaml, len);
	if (keep)
		*keep = js;
	else
		carve_jobs_destroy(js);
	return s;
}

static void test_gen_deterministic(void **state)
{
	char *a, *b, *c;
	size_t la, lb, lc;

	(void)state;
	a = gen(42, 7, false, &la, NULL);
	b = gen(42, 7, false, &lb, NULL);
	c = gen(43, 7, false, &lc, NULL);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	assert_true(la != lc || memcmp(a, c, la));
	free(a);
	free(b);
	free(c);
	a = gen(42, 2, true, &la, NULL);
	b = gen(42, 2, true, &lb, NULL);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	free(a);
	free(b);
}

static void test_gen_errors(void **state)
{
	struct carve_error err = {0, ""};
	struct carve_jobs *js = carve_jobs_create();

	(void)state;
	assert_int_equal(carve_tracegen(js, "other", 7, 1, &err), CARVE_ENOTFOUND);
	assert_int_equal(carve_tracegen(js, "seed", 0, 1, &err), CARVE_EINVAL);
	assert_int_equal(carve_tracegen(js, "seed", CARVE_TRACEGEN_MAX_DAYS + 1, 1, &err),
			 CARVE_EINVAL);
	assert_int_equal(js->n, 0);
	assert_true(carve_tracegen(js, "seed", 1, 1, &err) > 0);
	assert_int_equal(carve_tracegen(js, "seed", 1, 1, &err), CARVE_EEXISTS);
	carve_jobs_destroy(js);
}

/* Per team, over several seeds: counts in range, shapes the queues accept. */
static void test_gen_distribution(void **state)
{
	static const struct {
		const char *prefix;
		size_t lo, hi;
	} kinds[] = {
		{"research-train-", 45, 110}, {"research-eval-", 1, 15},
		{"prod-serve-", 8, 30},       {"prod-finetune-", 30, 85},
		{"dev-nb-", 1400, 2700},
	};
	uint64_t seed;
	size_t k, i;

	(void)state;
	for (seed = 1; seed <= 5; seed++) {
		struct carve_error err = {0, ""};
		struct carve_jobs *js = carve_jobs_create();
		size_t n[5] = {0};
		int64_t prev = 0;

		assert_true(carve_tracegen(js, "seed", 7, seed, &err) > 0);
		for (i = 0; i < js->n; i++) {
			const struct carve_job *j = &js->jobs[i];
			const struct carve_job_podset *ps = &j->podsets[0];

			assert_true(j->arrival >= prev);  /* sorted */
			prev = j->arrival;
			assert_true(j->arrival < 7 * 86400);
			assert_true(j->demand > 0 && j->demand <= 1);
			for (k = 0; k < 5; k++)
				if (!strncmp(j->name, kinds[k].prefix, strlen(kinds[k].prefix)))
					break;
			assert_true(k < 5);
			n[k]++;
			switch (k) {
			case 0: /* 4-16 whole H100s, 1-10 h */
				assert_string_equal(j->queue, "research");
				assert_int_equal(req(ps, "nvidia.com/gpu"), 4000);
				assert_true(ps->count >= 1 && ps->count <= 4);
				assert_true(j->duration >= 3600 && j->duration <= 36000);
				break;
			case 1: /* one or two borrowed slices */
				assert_true(ps->count <= 2);
				assert_int_equal(req(ps, "nvidia.com/mig-3g.40gb"), 1000);
				break;
			case 2: /* at most 4 x 3g.40gb; cut at the window's end */
				assert_string_equal(j->ns, "team-production");
				assert_true(ps->count <= 4);
				assert_true(j->duration > 0);
				assert_true(j->arrival + j->duration <= 7 * 86400);
				assert_true(j->demand >= 0.3 && j->demand <= 0.6);
				break;
			case 3: /* 30 min - 8 h */
				assert_true(ps->count <= 4);
				assert_true(j->checkpoint);
				assert_true(j->duration >= 1800 && j->duration <= 28800);
				break;
			case 4: /* 20 min - 2 h, at most 2 replicas */
				assert_string_equal(j->queue, "dev");
				assert_true(ps->count <= 2);
				assert_true(j->duration >= 1200 && j->duration <= 7200);
				assert_true(j->demand >= 0.1 && j->demand <= 0.3);
				break;
			}
		}
		/* The serving fleet stays within its budget: 8 x 3g.40gb, 4 x 1g.10gb. */
		for (i = 0; i < js->n; i++) {
			int64_t t = js->jobs[i].arrival, g3 = 0, g1 = 0;
			size_t m;

			if (strncmp(js->jobs[i].name, "prod-serve-", 11))
				continue;
			for (m = 0; m < js->n; m++) {
				const struct carve_job *x = &js->jobs[m];

				if (strncmp(x->name, "prod-serve-", 11) || x->arrival > t ||
				    x->arrival + x->duration <= t)
					continue;
				if (req(&x->podsets[0], "nvidia.com/mig-3g.40gb") == 1000)
					g3 += x->podsets[0].count;
				if (req(&x->podsets[0], "nvidia.com/mig-1g.10gb") == 1000)
					g1 += x->podsets[0].count;
			}
			assert_true(g3 <= 8 && g1 <= 4);
			assert_true(g3 + g1 > 0);
		}
		for (k = 0; k < 5; k++) {
			if (n[k] < kinds[k].lo || n[k] > kinds[k].hi)
				fail_msg("seed %llu: %zu %s jobs, expected %zu..%zu",
					 (unsigned long long)seed, n[k], kinds[k].prefix,
					 kinds[k].lo, kinds[k].hi);
		}
		carve_jobs_destroy(js);
	}
}

/* Notebooks follow working hours: most arrive on weekdays 8-20. */
static void test_gen_diurnal(void **state)
{
	struct carve_jobs *js;
	size_t len, i, work = 0, all = 0;
	char *s = gen(7, 7, false, &len, &js);

	(void)state;
	for (i = 0; i < js->n; i++) {
		int64_t t = js->jobs[i].arrival, h = t % 86400 / 3600;

		if (strncmp(js->jobs[i].name, "dev-nb-", 7))
			continue;
		all++;
		work += t / 86400 < 5 && h >= 8 && h < 20;
	}
	assert_true(work * 10 > all * 8);
	free(s);
	carve_jobs_destroy(js);
}

/* ---- the shipped week and the manifest walk ---- */

static char *source_path(const char *rel)
{
	const char *src = getenv("CARVE_SOURCE_DIR");
	static char buf[4096];

	if (!src)
		return NULL;
	snprintf(buf, sizeof(buf), "%s/%s", src, rel);
	return buf;
}

static void test_shipped_week(void **state)
{
	const char *dir = source_path("examples/seed-scenario");
	char path[4200], *file, *fresh;
	size_t lf, ln;
	struct fx f;

	(void)state;
	if (!dir)
		skip();
	fx_init(&f);
	snprintf(path, sizeof(path), "%s/week.trace.csv", dir);
	assert_int_equal(carve_jobs_load_path(f.js, path, &f.d, &f.skipped), 0);
	assert_clean(&f.d);
	assert_true(f.js->n > 1000);
	fx_cleanup(&f);

	/* The directory form finds the same trace. */
	fx_init(&f);
	assert_int_equal(carve_jobs_load_path(f.js, dir, &f.d, &f.skipped), 0);
	assert_clean(&f.d);
	assert_true(f.js->n > 1000);
	fx_cleanup(&f);

	/* It is what examples/seed-scenario/README.md says made it. */
	file = tu_read_file(path, &lf);
	assert_non_null(file);
	fresh = gen(1, 7, false, &ln, NULL);
	assert_int_equal(lf, ln);
	assert_memory_equal(file, fresh, lf);
	free(file);
	free(fresh);
}

static void test_manifest_walk_skips_traces(void **state)
{
	const char *dir = source_path("examples/seed-scenario");
	struct carve_manifests *m;
	char tmpl[] = "/tmp/carve-jobs-XXXXXX", p[256];
	FILE *out;
	struct fx f;

	(void)state;
	if (dir) {
		m = carve_manifests_create();
		assert_int_equal(carve_manifests_load_path(m, dir), 0);
		assert_clean(&m->diags);
		carve_manifests_destroy(m);
	}
	/* Broken traces beside a manifest: the walk does not see them. */
	assert_non_null(mkdtemp(tmpl));
	snprintf(p, sizeof(p), "%s/bad.trace.csv", tmpl);
	out = fopen(p, "w");
	fputs("not,a,manifest\n", out);
	fclose(out);
	snprintf(p, sizeof(p), "%s/bad.trace.yaml", tmpl);
	out = fopen(p, "w");
	fputs("kind: Nonsense\n", out);
	fclose(out);
	snprintf(p, sizeof(p), "%s/flavor.yaml", tmpl);
	out = fopen(p, "w");
	fputs("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
	      "metadata: {name: default}\n", out);
	fclose(out);
	m = carve_manifests_create();
	assert_int_equal(carve_manifests_load_path(m, tmpl), 0);
	assert_clean(&m->diags);
	assert_int_equal(m->ndocs, 1);
	carve_manifests_destroy(m);

	/* The trace walk sees exactly those two, and only them. */
	fx_init(&f);
	assert_int_equal(carve_jobs_load_path(f.js, tmpl, &f.d, &f.skipped), 0);
	assert_int_equal(f.js->n, 0);
	assert_true(f.d.nerrors >= 2);
	assert_true(carve_diags_find(&f.d, "unknown column 'not'") >= 0);
	assert_true(carve_diags_find(&f.d, "expected Trace in a trace file") >= 0);
	assert_true(carve_diags_find(&f.d, "flavor") < 0);
	fx_cleanup(&f);

	snprintf(p, sizeof(p), "%s/bad.trace.csv", tmpl);
	unlink(p);
	snprintf(p, sizeof(p), "%s/bad.trace.yaml", tmpl);
	unlink(p);
	snprintf(p, sizeof(p), "%s/flavor.yaml", tmpl);
	unlink(p);
	rmdir(tmpl);
}

/* The one directory walker (walk.h) and the one list of trace names. */
static void touch(const char *dir, const char *name)
{
	char p[512];
	FILE *out;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	out = fopen(p, "w");
	assert_non_null(out);
	fclose(out);
}

static void test_walk_and_trace_names(void **state)
{
	static const char *const files[] = {"b.yaml", "a.trace.yml", ".hidden.trace.csv",
					    "c.trace.csv", "a.csv"};
	char tmpl[] = "/tmp/carve-walk-XXXXXX", p[512], slash[300];
	struct carve_diags d;
	char **names;
	size_t n, i;

	(void)state;
	assert_true(carve_jobs_is_trace_name("x.trace.csv"));
	assert_true(carve_jobs_is_trace_name("dir/x.trace.yaml"));
	assert_true(carve_jobs_is_trace_name("x.trace.yml"));
	assert_false(carve_jobs_is_trace_name(".trace.csv"));
	assert_false(carve_jobs_is_trace_name("x.trace.json"));
	assert_false(carve_jobs_is_trace_name("trace.csv"));
	assert_false(carve_jobs_is_trace_name("x.csv"));

	assert_non_null(mkdtemp(tmpl));
	assert_false(carve_jobs_dir_has_trace(tmpl));
	touch(tmpl, ".hidden.trace.csv");
	assert_false(carve_jobs_dir_has_trace(tmpl));
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (files[i][0] != '.')
			touch(tmpl, files[i]);
	snprintf(p, sizeof(p), "%s/sub", tmpl);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_true(carve_jobs_dir_has_trace(tmpl));
	assert_false(carve_jobs_dir_has_trace(p));
	assert_false(carve_jobs_dir_has_trace("/nonexistent/carve-walk"));

	/* everything not hidden, sorted, subdirectories listed */
	carve_diags_init(&d);
	assert_int_equal(carve__walk_dir(&d, tmpl, NULL, &names, &n), 0);
	assert_int_equal(n, 5);
	snprintf(p, sizeof(p), "%s/a.csv", tmpl);
	assert_string_equal(names[0], p);
	snprintf(p, sizeof(p), "%s/a.trace.yml", tmpl);
	assert_string_equal(names[1], p);
	snprintf(p, sizeof(p), "%s/sub", tmpl);
	assert_string_equal(names[4], p);
	carve__walk_free(names, n);
	/* a filter, and a trailing '/' on the directory */
	snprintf(slash, sizeof(slash), "%s/", tmpl);
	assert_int_equal(carve__walk_dir(&d, slash, carve_jobs_is_trace_name, &names, &n), 0);
	assert_int_equal(n, 2);
	snprintf(p, sizeof(p), "%s/a.trace.yml", tmpl);
	assert_string_equal(names[0], p);
	snprintf(p, sizeof(p), "%s/c.trace.csv", tmpl);
	assert_string_equal(names[1], p);
	carve__walk_free(names, n);
	assert_int_equal(d.n, 0);
	/* a directory that cannot be opened: reported, nothing returned */
	assert_int_equal(carve__walk_dir(&d, "/nonexistent/carve-walk", NULL, &names, &n),
			 CARVE_EIO);
	assert_null(names);
	assert_int_equal(n, 0);
	assert_true(carve_diags_find(&d, "cannot open directory /nonexistent/carve-walk: ") >= 0);
	carve__walk_free(NULL, 0);
	carve_diags_cleanup(&d);

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", tmpl, files[i]);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/sub", tmpl);
	rmdir(p);
	rmdir(tmpl);
}

static void test_load_path_errors(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f);
	assert_int_equal(carve_jobs_load_path(f.js, "/nonexistent/x.trace.csv", &f.d, NULL),
			 CARVE_EIO);
	assert_true(carve_diags_find(&f.d, "cannot open /nonexistent/x.trace.csv") >= 0);
	assert_int_equal(carve_jobs_load_path(f.js, "/dev/null", &f.d, NULL), CARVE_EIO);
	assert_true(carve_diags_find(&f.d, "not a trace file") >= 0);
	assert_int_equal(carve_jobs_load_csv(NULL, "x", &f.d, NULL), CARVE_EINVAL);
	fx_cleanup(&f);
}

/* ---- allocation failures (as test_oom.c does for manifests) ---- */

static long countdown = -1; /* allocations left before failing; -1 = never */
static long failures;

static void *fail_malloc(size_t n)
{
	if (countdown == 0) {
		failures++;
		return NULL;
	}
	if (countdown > 0)
		countdown--;
	return malloc(n);
}

static void *fail_realloc(void *p, size_t n)
{
	if (countdown == 0) {
		failures++;
		return NULL;
	}
	if (countdown > 0)
		countdown--;
	return realloc(p, n);
}

static const struct carve_allocator failing = {fail_malloc, fail_realloc, free};

static void torture_once(void)
{
	static const char csv[] = "name,arrival,duration,cpu,gpu,gpu_models,node_selector\n"
				  "a,0,1h,1,1,A|B,k=v\nb,5,60,2,,,\nb,6,60,x,,,\n";
	static const char yaml[] = "apiVersion: carve.dev/v1alpha1\nkind: Trace\njobs:\n"
				   "- {name: y, arrival: 1, duration: 2, podSets: [{count: 2, "
				   "requests: {cpu: 1}, nodeSelector: {a: b}, gpuModels: [m]}]}\n"
				   "- {name: z, arrival: 1, duration: -2, podSets: [{}]}\n";
	static const char openb[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,"
				    "pod_phase,creation_time,deletion_time,scheduled_time\n"
				    "o,1,1,1,500,V100,LS,Running,5,9,6\n";
	struct carve_error err = {0, ""};
	struct carve_jobs *js = carve_jobs_create();
	struct carve_trace *t = carve_trace_create();
	struct carve_diags d;
	FILE *out;

	carve_diags_init(&d);
	if (js && t) {
		carve_jobs_load_csv_buf(js, "t.csv", csv, sizeof(csv) - 1, &d, NULL);
		carve_jobs_load_yaml_buf(js, "t.yaml", yaml, sizeof(yaml) - 1, &d, NULL);
		carve_trace_load_openb_buf(t, "o.csv", openb, sizeof(openb) - 1, &d);
		carve_jobs_from_openb(js, t, &d, NULL);
		carve_tracegen(js, "seed", 1, 3, &err);
		out = fopen("/dev/null", "w");
		if (out) {
			carve_jobs_write_yaml(js, out, &err);
			fclose(out);
		}
		carve_diags_sort(&d);
	}
	carve_diags_cleanup(&d);
	carve_trace_destroy(t);
	carve_jobs_destroy(js);
}

static void test_torture(void **state)
{
	long n;

	(void)state;
	carve_set_allocator(&failing);
	for (n = 0; n < 100000; n++) {
		failures = 0;
		countdown = n;
		torture_once();
		if (!failures)
			break;
	}
	countdown = -1;
	carve_set_allocator(NULL);
	assert_true(n > 10);
	assert_true(n < 100000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_span),
		cmocka_unit_test(test_csv_good),
		cmocka_unit_test(test_csv_bad_rows),
		cmocka_unit_test(test_csv_bad_header),
		cmocka_unit_test(test_yaml_good),
		cmocka_unit_test(test_yaml_bad),
		cmocka_unit_test(test_trace_names_and_podsets),
		cmocka_unit_test(test_csv_quotes_and_nul),
		cmocka_unit_test(test_openb),
		cmocka_unit_test(test_openb_five_columns),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_write_csv_multi_podset),
		cmocka_unit_test(test_gen_deterministic),
		cmocka_unit_test(test_gen_errors),
		cmocka_unit_test(test_gen_distribution),
		cmocka_unit_test(test_gen_diurnal),
		cmocka_unit_test(test_shipped_week),
		cmocka_unit_test(test_manifest_walk_skips_traces),
		cmocka_unit_test(test_walk_and_trace_names),
		cmocka_unit_test(test_load_path_errors),
		cmocka_unit_test(test_torture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
