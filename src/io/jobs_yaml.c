/*
 * jobs_yaml.c - carve's YAML trace (docs/trace-format.md, kind: Trace)
 * into the job list: each document's jobs and their podSets through the
 * decoder's field tables (decode.h), so unknown fields get a "did you mean"
 * and every message names the job and the field path.
 *
 * Invariants: a job is kept only when nothing about it was reported (the
 * error count before and after it); a document of another kind is reported
 * and skipped, the rest of the file still loads.  Ownership: the YAML tree
 * and decoded strings live in a scratch arena that dies with the file;
 * carve_jobs_add copies what it keeps, and the file name positions borrow
 * lives in the list's arena (carve__jobs_keep_name).
 */
#include <string.h>

#include "carve/jobs.h"
#include "decode.h"
#include "jobs_int.h"
#include "ytree.h"

#define MAX_PODSETS LD_MAX_PODSETS

struct ypodset {
	struct carve_job_podset ps;
	struct carve_pos count_pos, min_pos;
	bool has_min;
};

struct yjob {
	struct carve_job j;
	struct ypodset ps[MAX_PODSETS];
	size_t nps;
	struct carve_pos name_pos;
};

static bool y_span(struct ld *ld, const struct ynode *v, int64_t *out)
{
	const char *why = NULL;

	if (v->kind != YN_SCALAR) {
		ld_error(ld, v->pos, "expected seconds or a span like 2h30m, got %s",
			 ytree_kind_name(v));
		return false;
	}
	if (carve_jobs_parse_span(v->str, out, &why)) {
		ld_error(ld, v->pos, "%s, got '%s'", why, v->str);
		return false;
	}
	return true;
}

static void f_name(struct ld *ld, const struct ynode *v, void *o)
{
	struct yjob *y = o;

	/* A job becomes a Workload of that name: a DNS-1123 subdomain. */
	if (ld_str(ld, v, &y->j.name) && !*y->j.name)
		ld_error(ld, v->pos, "empty job name");
	else if (y->j.name)
		ld_dns_check(ld, v->pos, y->j.name, LD_DNS_SUBDOMAIN);
	y->name_pos = v->pos;
}

static void f_arrival(struct ld *ld, const struct ynode *v, void *o)
{
	struct yjob *y = o;

	if (y_span(ld, v, &y->j.arrival) && y->j.arrival < 0)
		ld_error(ld, v->pos, "must not be negative (got '%s')", v->str);
}

static void f_duration(struct ld *ld, const struct ynode *v, void *o)
{
	struct yjob *y = o;

	if (y_span(ld, v, &y->j.duration) && y->j.duration <= 0)
		ld_error(ld, v->pos, "must be positive (got '%s')", v->str);
}

static void f_ns(struct ld *ld, const struct ynode *v, void *o)
{
	const char **ns = &((struct yjob *)o)->j.ns;

	if (ld_str(ld, v, ns) && **ns)
		ld_dns_check(ld, v->pos, *ns, LD_DNS_LABEL); /* a namespace: a DNS-1123 label */
}

static void f_queue(struct ld *ld, const struct ynode *v, void *o)
{
	const char **q = &((struct yjob *)o)->j.queue;

	if (ld_str(ld, v, q) && **q)
		ld_dns_check(ld, v->pos, *q, LD_DNS_SUBDOMAIN); /* a LocalQueue's name */
}

static void f_priority(struct ld *ld, const struct ynode *v, void *o)
{
	ld_i32(ld, v, INT32_MIN, INT32_MAX, &((struct yjob *)o)->j.priority);
}

static void f_demand(struct ld *ld, const struct ynode *v, void *o)
{
	if (v->kind != YN_SCALAR ||
	    !carve__jobs_parse_demand(v->str, &((struct yjob *)o)->j.demand))
		ld_error(ld, v->pos, "expected a number in (0, 1], got %s%s%s",
			 v->kind == YN_SCALAR ? "'" : "",
			 v->kind == YN_SCALAR ? v->str : ytree_kind_name(v),
			 v->kind == YN_SCALAR ? "'" : "");
}

static void f_checkpoint(struct ld *ld, const struct ynode *v, void *o)
{
	ld_bool(ld, v, &((struct yjob *)o)->j.checkpoint);
}

static void f_class(struct ld *ld, const struct ynode *v, void *o)
{
	const char **c = &((struct yjob *)o)->j.job_class;

	if (ld_str(ld, v, c) && !carve__job_class_ok(*c)) {
		ld_error(ld, v->pos, "expected 1-63 letters, digits, '-', '_' or '.', got '%s'",
			 *c);
		*c = NULL;
	}
}

static void f_ps_name(struct ld *ld, const struct ynode *v, void *o)
{
	const char **n = &((struct ypodset *)o)->ps.name;

	if (ld_str(ld, v, n))
		ld_dns_check(ld, v->pos, *n, LD_DNS_LABEL); /* Kueue's PodSetReference */
}

static void f_ps_count(struct ld *ld, const struct ynode *v, void *o)
{
	struct ypodset *y = o;

	ld_i32(ld, v, 1, CARVE__JOBS_MAX_COUNT, &y->ps.count);
	y->count_pos = v->pos;
}

static void f_ps_min(struct ld *ld, const struct ynode *v, void *o)
{
	struct ypodset *y = o;

	y->has_min = ld_i32(ld, v, 1, CARVE__JOBS_MAX_COUNT, &y->ps.min_count);
	y->min_pos = v->pos;
}

static void f_ps_requests(struct ld *ld, const struct ynode *v, void *o)
{
	struct ypodset *y = o;
	struct carve_reslist rl;
	struct carve_req *reqs;
	size_t i;

	if (!ld_resmap_nonneg(ld, v, &rl) || !rl.n)
		return;
	reqs = carve_arena_alloc(ld->a, rl.n * sizeof(*reqs));
	if (!reqs) {
		ld_error(ld, v->pos, "out of memory");
		return;
	}
	for (i = 0; i < rl.n; i++) {
		reqs[i].name = rl.v[i].name;
		reqs[i].milli = rl.v[i].milli;
	}
	y->ps.reqs = reqs;
	y->ps.nreqs = rl.n;
}

static void f_ps_fraction(struct ld *ld, const struct ynode *v, void *o)
{
	if (v->kind != YN_SCALAR ||
	    !carve__jobs_parse_fraction(v->str, &((struct ypodset *)o)->ps.gpu_milli))
		ld_error(ld, v->pos, "expected a share of one GPU in (0, 1) such as 0.5 or 500m, "
			 "got %s%s%s", v->kind == YN_SCALAR ? "'" : "",
			 v->kind == YN_SCALAR ? v->str : ytree_kind_name(v),
			 v->kind == YN_SCALAR ? "'" : "");
}

static void f_ps_gmem(struct ld *ld, const struct ynode *v, void *o)
{
	int64_t m;

	if (ld_qty_nonneg(ld, v, &m) &&
	    !carve__jobs_bytes_to_mib(m, &((struct ypodset *)o)->ps.gpu_mem_mib))
		ld_error(ld, v->pos, "'%s' is too large", v->str);
}

static void f_ps_models(struct ld *ld, const struct ynode *v, void *o)
{
	struct ypodset *y = o;
	const char **s;

	if (ld_strlist(ld, v, &s, &y->ps.nmodels, NULL))
		y->ps.models = s;
}

static void f_ps_selector(struct ld *ld, const struct ynode *v, void *o)
{
	struct ypodset *y = o;
	struct carve_kvlist kv;
	struct carve_label *sel;
	size_t i;

	if (!ld_kvmap(ld, v, &kv) || !kv.n)
		return;
	sel = carve_arena_alloc(ld->a, kv.n * sizeof(*sel));
	if (!sel) {
		ld_error(ld, v->pos, "out of memory");
		return;
	}
	for (i = 0; i < kv.n; i++) {
		sel[i].key = kv.v[i].key;
		sel[i].value = kv.v[i].value;
	}
	y->ps.selector = sel;
	y->ps.nselector = kv.n;
}

static const struct ld_field podset_fields[] = {
	{"name", f_ps_name, 0},
	{"count", f_ps_count, 0},
	{"minCount", f_ps_min, 0},
	{"requests", f_ps_requests, 0},
	{"gpuFraction", f_ps_fraction, 0},
	{"gpuMemory", f_ps_gmem, 0},
	{"gpuModels", f_ps_models, 0},
	{"nodeSelector", f_ps_selector, 0},
	{NULL, NULL, 0},
};

static void y_podset(struct ld *ld, const struct ynode *item, size_t i, void *o)
{
	struct yjob *y = o;
	struct ypodset *ps;

	if (i >= MAX_PODSETS)
		return; /* reported at the list */
	ps = &y->ps[y->nps++];
	ps->ps.count = 1;
	ps->count_pos = item->pos;
	ld_fields(ld, item, podset_fields, ps);
	if (ps->has_min && ps->ps.min_count > ps->ps.count) {
		size_t old = ld_push(ld, ".minCount");

		ld_error(ld, ps->min_pos, "%d is more than count %d", (int)ps->ps.min_count,
			 (int)ps->ps.count);
		ld_pop(ld, old);
	}
}

static void f_podsets(struct ld *ld, const struct ynode *v, void *o)
{
	struct yjob *y = o;

	/* The bound of a Kueue Workload's podSets (decode.h), checked before
	 * any is read. */
	if (v->kind == YN_SEQ && v->n > MAX_PODSETS) {
		ld_error(ld, v->pos, "at most %d podSets (Kueue's limit), got %zu", MAX_PODSETS,
			 v->n);
		return;
	}
	if (!ld_list(ld, v, y_podset, o))
		return;
	if (!y->nps)
		ld_error(ld, v->pos, "at least one podSet is needed");
}

static const struct ld_field job_fields[] = {
	{"name", f_name, LD_REQUIRED},
	{"arrival", f_arrival, LD_REQUIRED},
	{"duration", f_duration, LD_REQUIRED},
	{"namespace", f_ns, 0},
	{"queue", f_queue, 0},
	{"priority", f_priority, 0},
	{"demand", f_demand, 0},
	{"checkpoint", f_checkpoint, 0},
	{"class", f_class, 0},
	{"podSets", f_podsets, LD_REQUIRED},
	{NULL, NULL, 0},
};

struct ytrace {
	struct carve_jobs *js;
	size_t *skipped;
	int rc;
};

static void y_job(struct ld *ld, const struct ynode *item, size_t i, void *o)
{
	struct ytrace *t = o;
	struct carve_job_podset ps[MAX_PODSETS];
	size_t e0 = ld->d->nerrors, k, oldlen = ld->pathlen;
	const char *okind = ld->kind;
	char oldpath[LD_PATH_MAX];
	const struct ynode *nm = ytree_get(item, "name");
	struct yjob y;

	if (t->rc)
		return;
	memset(&y, 0, sizeof(y));
	memcpy(oldpath, ld->path, sizeof(oldpath));
	/* Messages name the job when it has a name: "job x: duration: ...". */
	ld->kind = "job";
	if (nm && nm->kind == YN_SCALAR && *nm->str) {
		ld->name = nm->str;
		ld_pop(ld, 0);
	} else {
		ld->kind = "Trace";
	}
	y.j.pos = item->pos;
	y.name_pos = item->pos;
	ld_fields(ld, item, job_fields, &y);
	if (ld->d->nerrors == e0) {
		for (k = 0; k < y.nps; k++)
			ps[k] = y.ps[k].ps;
		y.j.npodsets = y.nps;
		y.j.podsets = ps;
		struct carve_error err = {0, ""};
		int rc = carve_jobs_add(t->js, &y.j, &err);

		if (rc < 0) {
			ld_pop(ld, 0);
			ld_error(ld, y.name_pos, "%s", err.text);
			if (t->skipped)
				(*t->skipped)++;
			if (rc == CARVE_ENOMEM)
				t->rc = rc;
		}
	} else if (t->skipped) {
		(*t->skipped)++;
	}
	(void)i;
	ld->kind = okind;
	ld->name = NULL;
	memcpy(ld->path, oldpath, sizeof(oldpath));
	ld->pathlen = oldlen;
}

static void f_jobs(struct ld *ld, const struct ynode *v, void *o)
{
	ld_list(ld, v, y_job, o);
}

static void f_api(struct ld *ld, const struct ynode *v, void *o)
{
	const char *s;

	(void)o;
	if (ld_str(ld, v, &s) && strcmp(s, "carve.dev/v1alpha1"))
		ld_error(ld, v->pos, "expected carve.dev/v1alpha1, got '%s'", s);
}

static void f_kind(struct ld *ld, const struct ynode *v, void *o)
{
	(void)ld, (void)v, (void)o; /* checked before the fields */
}

static const struct ld_field trace_fields[] = {
	{"apiVersion", f_api, LD_REQUIRED},
	{"kind", f_kind, LD_REQUIRED},
	{"metadata", NULL, 0},
	{"jobs", f_jobs, LD_REQUIRED},
	{NULL, NULL, 0},
};

static void y_doc(struct ld *ld, const struct ydoc *doc, struct ytrace *t)
{
	const struct ynode *root = doc->root, *kind;

	ld->kind = "Trace";
	ld->name = NULL;
	ld_pop(ld, 0);
	if (!root || ytree_is_null(root))
		return;
	if (root->kind != YN_MAP) {
		carve_diag_error(ld->d, root->pos, "expected a Trace mapping (apiVersion: "
				 "carve.dev/v1alpha1, kind: Trace, jobs: [...]), got %s",
				 ytree_kind_name(root));
		return;
	}
	kind = ytree_get(root, "kind");
	if (kind && (kind->kind != YN_SCALAR || strcmp(kind->str, "Trace"))) {
		carve_diag_error(ld->d, kind->pos, "Trace: kind: expected Trace in a trace file, "
				 "got '%s'; document skipped",
				 kind->kind == YN_SCALAR ? kind->str : ytree_kind_name(kind));
		return;
	}
	ld_fields(ld, root, trace_fields, t);
}

int carve_jobs_load_yaml_buf(struct carve_jobs *js, const char *name, const char *buf,
			     size_t len, struct carve_diags *d, size_t *skipped)
{
	struct carve_arena a;
	struct ytrace t = {js, skipped, 0};
	struct ydocs docs;
	struct ld ld;
	size_t i;
	int rc;

	if (!js || !d || (len && !buf))
		return CARVE_EINVAL;
	memset(&ld, 0, sizeof(ld));
	ld.file = carve__jobs_keep_name(js, name);
	if (!ld.file)
		return CARVE_ENOMEM;
	carve_arena_init(&a);
	ld.a = &a;
	ld.d = d;
	ld.buf = buf;
	ld.buflen = len;
	rc = ytree_parse(&a, ld.file, buf, len, 0, 0, d, &docs);
	if (rc != CARVE_ENOMEM) {
		for (i = 0; i < docs.n && !t.rc; i++)
			y_doc(&ld, &docs.v[i], &t);
		rc = t.rc;
	}
	carve_arena_cleanup(&a);
	return rc == CARVE_ENOMEM ? rc : 0;
}
