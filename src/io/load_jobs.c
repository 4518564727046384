/*
 * load_jobs.c - the job kinds that carry their pods' templates beside the
 * queues: JobSet (jobset.x-k8s.io/v1alpha2, replicatedJobs of Job
 * templates) and Volcano's Job (batch.volcano.sh/v1alpha1, tasks of pod
 * templates).  Which of them are queued, and where, is the bridge's
 * business (src/bridge/workloads.c); this file only reads them.
 *
 * Invariants: every field of the released APIs is known (unused ones are
 * accepted and ignored); an object is kept only with a name and at least
 * one usable replicatedJob or task.  Field lists: JobSet's
 * api/jobset/v1alpha2/jobset_types.go (kubernetes-sigs/jobset) and
 * Volcano's pkg/apis/batch/v1alpha1/job.go (volcano-sh/apis).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "loaders.h"

/* ---- JobSet ---- */

struct rjob {
	struct carve_mf_rjob r;
	bool ok;
};

static void f_rj_name(struct ld *ld, const struct ynode *v, void *o)
{
	ld_dns_name(ld, v, LD_DNS_LABEL, &((struct rjob *)o)->r.name);
}

static void f_rj_replicas(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_i32(ld, v, 0, INT32_MAX, &((struct rjob *)o)->r.replicas);
}

static void f_jt_spec(struct ld *ld, const struct ynode *v, void *o)
{
	struct rjob *r = o;

	r->ok = ld_jobspec(ld, v, &r->r.parallelism, &r->r.completions, &r->r.spec);
}

/* A JobTemplateSpec: labels and annotations of the Job are not the pods'. */
static const struct ld_field jobtemplate_fields[] = {
	{"metadata", NULL, 0},
	{"spec", f_jt_spec, LD_REQUIRED},
	{NULL, NULL, 0},
};

static void f_rj_template(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, jobtemplate_fields, o);
}

static const struct ld_field rjob_fields[] = {
	{"name", f_rj_name, LD_REQUIRED},
	{"template", f_rj_template, LD_REQUIRED},
	{"replicas", f_rj_replicas, 0},
	{"groupName", NULL, 0},
	{"dependsOn", NULL, 0},
	{NULL, NULL, 0},
};

struct jobset {
	struct carve_mf_jobset js;
	size_t cap;
};

static void one_rjob(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct jobset *js = obj;
	struct carve_mf_rjob *e;
	struct rjob r;
	size_t k;

	(void)i;
	memset(&r, 0, sizeof(r));
	r.r.replicas = 1;
	r.r.pos = item->pos;
	if (!ld_fields(ld, item, rjob_fields, &r) || !r.r.name || !r.ok)
		return;
	for (k = 0; k < js->js.n; k++)
		if (!strcmp(js->js.v[k].name, r.r.name)) {
			ld_error(ld, item->pos, "replicatedJob '%s' is defined twice", r.r.name);
			return;
		}
	e = LD_APPEND(ld, js->js.v, js->js.n, js->cap);
	if (e)
		*e = r.r;
}

static void f_js_rjobs(struct ld *ld, const struct ynode *v, void *o)
{
	ld_list(ld, v, one_rjob, o);
}

static const struct ld_field jobset_spec_fields[] = {
	{"replicatedJobs", f_js_rjobs, LD_REQUIRED},
	{"network", NULL, 0},
	{"successPolicy", NULL, 0},
	{"failurePolicy", NULL, 0},
	{"startupPolicy", NULL, 0},
	{"suspend", NULL, 0},
	{"coordinator", NULL, 0},
	{"managedBy", NULL, 0},
	{"ttlSecondsAfterFinished", NULL, 0},
	{"volumeClaimPolicies", NULL, 0},
	{NULL, NULL, 0},
};

static void f_js_spec(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, jobset_spec_fields, o);
}

static const struct ld_field jobset_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_js_spec, LD_REQUIRED},
	{"status", NULL, 0},
	{NULL, NULL, 0},
};

void load_jobset(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_jobset *e;
	struct jobset js;

	memset(&js, 0, sizeof(js));
	ld_metadata_gen(ld, doc, &js.js.meta, true);
	ld_fields(ld, doc, jobset_fields, &js);
	if (!js.js.meta.name || !js.js.n)
		return;
	e = LD_APPEND(ld, ld->m->jobsets, ld->m->njobsets, ld->m->cap_jobsets);
	if (e)
		*e = js.js;
}

/* ---- Volcano Job ---- */

struct task {
	struct carve_mf_vctask t;
	bool has_template, has_replicas;
};

static void f_t_name(struct ld *ld, const struct ynode *v, void *o)
{
	ld_dns_name(ld, v, LD_DNS_LABEL, &((struct task *)o)->t.name);
}

static void f_t_replicas(struct ld *ld, const struct ynode *v, void *o)
{
	struct task *t = o;

	if (!ytree_is_null(v) && ld_i32(ld, v, 0, INT32_MAX, &t->t.replicas))
		t->has_replicas = true;
}

static void f_t_min(struct ld *ld, const struct ynode *v, void *o)
{
	struct task *t = o;

	if (!ytree_is_null(v) && ld_i32(ld, v, 0, INT32_MAX, &t->t.min_available))
		t->t.has_min_available = true;
}

static void f_t_template(struct ld *ld, const struct ynode *v, void *o)
{
	struct task *t = o;

	t->has_template = !ytree_is_null(v);
	ld_podtemplate(ld, v, &t->t.spec);
}

static const struct ld_field task_fields[] = {
	{"name", f_t_name, 0},
	{"replicas", f_t_replicas, 0},
	{"minAvailable", f_t_min, 0},
	{"template", f_t_template, LD_REQUIRED},
	{"policies", NULL, 0},
	{"topologyPolicy", NULL, 0},
	{"maxRetry", NULL, 0},
	{"dependsOn", NULL, 0},
	{"partitionPolicy", NULL, 0},
	{NULL, NULL, 0},
};

struct vcjob {
	struct carve_mf_vcjob j;
	size_t cap;
};

static void one_task(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct vcjob *j = obj;
	struct carve_mf_vctask *e;
	struct task t;

	memset(&t, 0, sizeof(t));
	t.t.pos = item->pos;
	if (!ld_fields(ld, item, task_fields, &t) || !t.has_template)
		return;
	if (!t.has_replicas)
		t.t.replicas = 1; /* Volcano's webhook defaults a task's replicas to 1 */
	if (!t.t.name) { /* ... and its name to "default<index>" */
		char buf[32];

		snprintf(buf, sizeof(buf), "default%zu", i);
		t.t.name = ld_strdup(ld, buf);
		if (!t.t.name)
			return;
	}
	if (t.t.has_min_available && t.t.min_available > t.t.replicas) {
		ld_error(ld, item->pos, "minAvailable %d is more than replicas %d",
			 (int)t.t.min_available, (int)t.t.replicas);
		return;
	}
	e = LD_APPEND(ld, j->j.tasks, j->j.ntasks, j->cap);
	if (e)
		*e = t.t;
}

static void f_vj_tasks(struct ld *ld, const struct ynode *v, void *o)
{
	ld_list(ld, v, one_task, o);
}

static void f_vj_min(struct ld *ld, const struct ynode *v, void *o)
{
	struct vcjob *j = o;

	if (!ytree_is_null(v) && ld_i32(ld, v, 0, INT32_MAX, &j->j.min_available))
		j->j.has_min_available = true;
}

static void f_vj_queue(struct ld *ld, const struct ynode *v, void *o)
{
	struct vcjob *j = o;

	if (!ytree_is_null(v) && ld_name_str(ld, v, &j->j.queue))
		j->j.queue_pos = v->pos;
}

static void f_vj_prio(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_str(ld, v, &((struct vcjob *)o)->j.priority_class);
}

static const struct ld_field vcjob_spec_fields[] = {
	{"tasks", f_vj_tasks, LD_REQUIRED},
	{"minAvailable", f_vj_min, 0},
	{"queue", f_vj_queue, 0},
	{"priorityClassName", f_vj_prio, 0},
	{"schedulerName", NULL, 0},
	{"volumes", NULL, 0},
	{"policies", NULL, 0},
	{"plugins", NULL, 0},
	{"runningEstimate", NULL, 0},
	{"maxRetry", NULL, 0},
	{"ttlSecondsAfterFinished", NULL, 0},
	{"minSuccess", NULL, 0},
	{"networkTopology", NULL, 0},
	{NULL, NULL, 0},
};

static void f_vj_spec(struct ld *ld, const struct ynode *v, void *o)
{
	if (!ytree_is_null(v))
		ld_fields(ld, v, vcjob_spec_fields, o);
}

static const struct ld_field vcjob_fields[] = {
	{"apiVersion", NULL, 0},
	{"kind", NULL, 0},
	{"metadata", NULL, 0},
	{"spec", f_vj_spec, LD_REQUIRED},
	{"status", NULL, 0},
	{NULL, NULL, 0},
};

void load_vcjob(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_vcjob *e;
	struct vcjob j;

	memset(&j, 0, sizeof(j));
	ld_metadata_gen(ld, doc, &j.j.meta, true);
	ld_fields(ld, doc, vcjob_fields, &j);
	if (!j.j.meta.name || !j.j.ntasks)
		return;
	if (!j.j.queue) {
		j.j.queue = "default"; /* Volcano's webhook: the queue named default */
		j.j.queue_pos = j.j.meta.pos;
	}
	e = LD_APPEND(ld, ld->m->vcjobs, ld->m->nvcjobs, ld->m->cap_vcjobs);
	if (e)
		*e = j.j;
}
