/*
 * validate.c - cross-object checks and lints (see include/carve/validate.h).
 *
 * Errors: duplicates, Kueue references (LocalQueue -> ClusterQueue,
 * ClusterQueue -> ResourceFlavor, Workload admission), quota arithmetic
 * (lendingLimit above nominalQuota, limits without a cohort), cohort
 * cycles.  Warnings: lints on Pod, Job and Workload templates, and node
 * pools or flavors that mix MIG and time-slicing under one resource name.
 * Reads the manifests and the inventory; writes only diagnostics.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/match.h"
#include "carve/quantity.h"
#include "carve/resource.h"
#include "carve/validate.h"
#include "bridge_int.h"
#include "decode.h"

#define QBUF 32

static const char *fmt_qty(int64_t milli, char *buf)
{
	carve_qty_format(milli, buf, QBUF);
	return buf;
}

static const char *kv_get(const struct carve_kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return l->v[i].value;
	return NULL;
}

static bool same_ns(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* ---- duplicates ---- */

struct dent {
	const struct carve_meta *m;
	size_t i;
};

static int cmp_opt(const char *a, const char *b)
{
	if (a && b)
		return strcmp(a, b);
	return (a != NULL) - (b != NULL); /* NULL (cluster-scoped) first */
}

/* By (kind, namespace, name), then load order: a run of equal objects
 * starts with the first one loaded. */
static int dent_cmp(const void *pa, const void *pb)
{
	const struct dent *a = pa, *b = pb;
	int c = strcmp(a->m->kind, b->m->kind);

	if (!c)
		c = cmp_opt(a->m->ns, b->m->ns);
	if (!c)
		c = strcmp(a->m->name, b->m->name);
	if (!c)
		c = a->i < b->i ? -1 : a->i > b->i;
	return c;
}

/* Sorts, then reports every object equal to the one before it in its run:
 * O(n log n).  Generated names (generateName) are never duplicates. */
static void dup_check(struct carve_manifests *m, const struct carve_meta *(*get)(const void *, size_t),
		      const void *arr, size_t n)
{
	struct dent *v;
	size_t i, k = 0, first = 0;

	if (n < 2)
		return;
	v = carve_malloc(n * sizeof(*v));
	if (!v) {
		carve_diag_error(&m->diags, (struct carve_pos){0},
				 "out of memory checking for duplicates");
		return;
	}
	for (i = 0; i < n; i++) {
		const struct carve_meta *mt = get(arr, i);

		if (!mt->generated)
			v[k++] = (struct dent){mt, i};
	}
	qsort(v, k, sizeof(*v), dent_cmp);
	for (i = 1; i < k; i++) {
		const struct carve_meta *a = v[first].m, *b = v[i].m;

		if (strcmp(a->name, b->name) || cmp_opt(a->ns, b->ns) || strcmp(a->kind, b->kind)) {
			first = i;
			continue;
		}
		carve_diag_error(&m->diags, b->name_pos.line ? b->name_pos : b->pos,
				 "%s %s%s%s is defined twice (first at %s:%u)", b->kind,
				 b->ns ? b->ns : "", b->ns ? "/" : "", b->name,
				 a->pos.file ? a->pos.file : "?", (unsigned)a->pos.line);
	}
	carve_free(v);
}

/* A named config (device-plugin or mig-parted) of index i. */
struct named {
	const char *name;
	size_t i;
};

static int named_cmp(const void *x, const void *y)
{
	const struct named *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	return c ? c : (a->i > b->i) - (a->i < b->i);
}

/*
 * Reports every config whose name an earlier one (by index) already has,
 * against the earliest: sorted by (name, index), O(n log n), so a ConfigMap
 * with many keys is checked as fast as it is read.
 */
static void config_dups(struct carve_manifests *m, const char *what,
			const char *(*name)(const struct carve_manifests *, size_t),
			struct carve_pos (*pos)(const struct carve_manifests *, size_t), size_t n)
{
	struct named *v;
	size_t i, first = 0;

	if (n < 2)
		return;
	v = carve_malloc(n * sizeof(*v));
	if (!v) {
		carve_diag_error(&m->diags, (struct carve_pos){0},
				 "out of memory checking for duplicates");
		return;
	}
	for (i = 0; i < n; i++)
		v[i] = (struct named){name(m, i), i};
	qsort(v, n, sizeof(*v), named_cmp);
	for (i = 1; i < n; i++) {
		struct carve_pos p0;

		if (strcmp(v[first].name, v[i].name)) {
			first = i;
			continue;
		}
		p0 = pos(m, v[first].i);
		carve_diag_error(&m->diags, pos(m, v[i].i), "%s '%s' is defined twice (first at "
				 "%s:%u)", what, v[i].name, p0.file, (unsigned)p0.line);
	}
	carve_free(v);
}

static const char *dp_name(const struct carve_manifests *m, size_t i)
{
	return m->dpconfigs[i].name;
}

static struct carve_pos dp_pos(const struct carve_manifests *m, size_t i)
{
	return m->dpconfigs[i].pos;
}

static const char *mig_name(const struct carve_manifests *m, size_t i)
{
	return m->migconfigs[i].name;
}

static struct carve_pos mig_pos(const struct carve_manifests *m, size_t i)
{
	return m->migconfigs[i].pos;
}

#define META_GETTER(fn, type)                                   \
	static const struct carve_meta *fn(const void *a, size_t i) \
	{                                                           \
		return &((const type *)a)[i].meta;                  \
	}
META_GETTER(g_flavor, struct carve_mf_flavor)
META_GETTER(g_cq, struct carve_mf_cq)
META_GETTER(g_cohort, struct carve_mf_cohort)
META_GETTER(g_lq, struct carve_mf_localqueue)
META_GETTER(g_wpc, struct carve_mf_priorityclass)
META_GETTER(g_wl, struct carve_mf_workload)
META_GETTER(g_vcq, struct carve_mf_vcqueue)
META_GETTER(g_pg, struct carve_mf_podgroup)
META_GETTER(g_kaiq, struct carve_mf_kaiqueue)
META_GETTER(g_pod, struct carve_mf_pod)
META_GETTER(g_job, struct carve_mf_job)
META_GETTER(g_pool, struct carve_mf_nodepool)

static void check_duplicates(struct carve_manifests *m)
{
	dup_check(m, g_flavor, m->flavors, m->nflavors);
	dup_check(m, g_cq, m->cqs, m->ncqs);
	dup_check(m, g_cohort, m->cohorts, m->ncohorts);
	dup_check(m, g_lq, m->lqs, m->nlqs);
	dup_check(m, g_wpc, m->wpcs, m->nwpcs);
	dup_check(m, g_wl, m->workloads, m->nworkloads);
	dup_check(m, g_vcq, m->vcqueues, m->nvcqueues);
	dup_check(m, g_pg, m->podgroups, m->npodgroups);
	dup_check(m, g_kaiq, m->kaiqueues, m->nkaiqueues);
	dup_check(m, g_pod, m->pods, m->npods);
	dup_check(m, g_job, m->jobs, m->njobs);
	dup_check(m, g_pool, m->pools, m->npools);
	config_dups(m, "device-plugin config", dp_name, dp_pos, m->ndpconfigs);
	config_dups(m, "mig-parted config", mig_name, mig_pos, m->nmigconfigs);
}

/* ---- Kueue quota ---- */

static const char *suggest_flavor(const struct carve_manifests *m, const char *name)
{
	const char *names[256];
	size_t i, n = 0;

	for (i = 0; i < m->nflavors && n < 256; i++)
		names[n++] = m->flavors[i].meta.name;
	return ld_suggest(name, names, n);
}

/* Checks shared by ClusterQueue and Cohort resource groups. */
static void check_groups(struct carve_manifests *m, const char *kind, const char *name,
			 const struct carve_mf_rgroup *g, size_t ng, const char *cohort)
{
	char a[QBUF], b[QBUF];
	size_t i, j, k, i2, j2;

	for (i = 0; i < ng; i++) {
		for (j = 0; j < g[i].ncovered; j++)
			for (i2 = 0; i2 <= i; i2++)
				for (j2 = 0; j2 < (i2 == i ? j : g[i2].ncovered); j2++)
					if (!strcmp(g[i].covered[j], g[i2].covered[j2]))
						carve_diag_error(&m->diags, g[i].covered_pos[j],
								 "%s %s: resource %s is covered by two "
								 "resource groups", kind, name,
								 g[i].covered[j]);
		for (j = 0; j < g[i].nflavors; j++) {
			const struct carve_mf_flavorquotas *fq = &g[i].flavors[j];

			if (!carve_mf_find_flavor(m, fq->flavor)) {
				const char *s = suggest_flavor(m, fq->flavor);
				size_t n0 = m->diags.n;

				carve_diag_error(&m->diags, fq->pos,
						 "%s %s: flavor '%s' is not defined by any "
						 "ResourceFlavor%s%s%s", kind, name, fq->flavor,
						 s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
				carve_diags_tag(&m->diags, n0, "flavor-ref");
			}
			for (i2 = 0; i2 <= i; i2++)
				for (j2 = 0; j2 < (i2 == i ? j : g[i2].nflavors); j2++)
					if (!strcmp(fq->flavor, g[i2].flavors[j2].flavor))
						carve_diag_error(&m->diags, fq->pos,
								 "%s %s: flavor %s is listed twice",
								 kind, name, fq->flavor);
			for (k = 0; k < g[i].ncovered && !fq->incomplete; k++) {
				size_t r;

				for (r = 0; r < fq->n; r++)
					if (!strcmp(fq->v[r].resource, g[i].covered[k]))
						break;
				if (r == fq->n)
					carve_diag_error(&m->diags, fq->pos,
							 "%s %s: flavor %s has no quota for covered "
							 "resource %s", kind, name, fq->flavor,
							 g[i].covered[k]);
			}
			for (k = 0; k < fq->n; k++) {
				const struct carve_mf_quota *q = &fq->v[k];
				size_t n0 = m->diags.n;

				if (q->has_lending_limit && q->lending_limit > q->nominal)
					carve_diag_error(&m->diags, q->lending_pos,
							 "%s %s: lendingLimit %s for %s/%s is above "
							 "its nominalQuota %s", kind, name,
							 fmt_qty(q->lending_limit, a), fq->flavor,
							 q->resource, fmt_qty(q->nominal, b));
				carve_diags_tag(&m->diags, n0, "lending-limit");
				if (!cohort && q->has_borrowing_limit)
					carve_diag_error(&m->diags, q->borrowing_pos,
							 "%s %s: borrowingLimit for %s/%s needs a "
							 "cohort, but the %s is in none", kind, name,
							 fq->flavor, q->resource, kind);
				if (!cohort && q->has_lending_limit)
					carve_diag_error(&m->diags, q->lending_pos,
							 "%s %s: lendingLimit for %s/%s needs a "
							 "cohort, but the %s is in none", kind, name,
							 fq->flavor, q->resource, kind);
			}
		}
	}
}

/* ---- carve.dev/max-per-workload: "res=qty[,res=qty...]" on a ClusterQueue ---- */

#define CAP_ANNOTATION "carve.dev/max-per-workload"
#define MAX_CAPS 16

struct wcap {
	char res[128];
	int64_t milli;
};

/* Parses cq's cap annotation into caps; reports malformed entries when
 * report is set.  Returns how many caps were read. */
static size_t parse_caps(struct carve_manifests *m, const struct carve_mf_cq *cq,
			 struct wcap *caps, bool report)
{
	const struct carve_kv *kv = NULL;
	const char *p;
	size_t i, n = 0;

	for (i = 0; i < cq->meta.annotations.n; i++)
		if (!strcmp(cq->meta.annotations.v[i].key, CAP_ANNOTATION))
			kv = &cq->meta.annotations.v[i];
	if (!kv)
		return 0;
	for (p = kv->value; *p && n < MAX_CAPS;) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char item[160], *why_q;

		const char *why = NULL;

		snprintf(item, sizeof(item), "%.*s", (int)(len < 159 ? len : 159), p);
		p += len + (end ? 1 : 0);
		eq = strchr(item, '=');
		if (!eq || eq == item || (size_t)(eq - item) >= sizeof(caps[n].res)) {
			if (report)
				carve_diag_error(&m->diags, kv->pos,
						 "ClusterQueue %s: %s entry '%s' is not resource=quantity",
						 cq->meta.name, CAP_ANNOTATION, item);
			continue;
		}
		why_q = item + (eq - item);
		*why_q = '\0';
		if (carve_qty_parse(why_q + 1, &caps[n].milli, &why) || caps[n].milli < 0) {
			if (report)
				carve_diag_error(&m->diags, kv->pos,
						 "ClusterQueue %s: %s: malformed quantity '%s' for %s: %s",
						 cq->meta.name, CAP_ANNOTATION, why_q + 1, item,
						 why ? why : "must not be negative");
			continue;
		}
		memcpy(caps[n].res, item, (size_t)(eq - item) + 1);
		n++;
	}
	return n;
}

/* Pods of a Job running at once, as Kueue counts them:
 * min(parallelism, completions) (completions defaults to parallelism). */
static int32_t job_pods(const struct carve_mf_job *j)
{
	return j->completions < j->parallelism ? j->completions : j->parallelism;
}

static int64_t podspec_res(const struct carve_podspec *ps, const char *name)
{
	const struct carve_reslist *rl = ps->requests.n ? &ps->requests : &ps->limits;
	size_t i;

	for (i = 0; i < rl->n; i++)
		if (!strcmp(rl->v[i].name, name))
			return rl->v[i].milli;
	return 0;
}

/* Warns when a workload routed to a capped ClusterQueue asks for more. */
static void check_cap(struct carve_manifests *m, const char *what, const char *ns,
		      const char *queue, const struct carve_podspec *const *specs,
		      const int64_t *counts, size_t n, struct carve_pos pos)
{
	const struct carve_mf_localqueue *lq;
	const struct carve_mf_cq *cq;
	struct wcap caps[MAX_CAPS];
	size_t nc, c, i;
	char a[QBUF], b[QBUF];

	if (!queue || !(lq = carve_mf_find_lq(m, ns, queue)) ||
	    !(cq = carve_mf_find_cq(m, lq->cluster_queue)))
		return;
	nc = parse_caps(m, cq, caps, false);
	for (c = 0; c < nc; c++) {
		int64_t total = 0;

		/* Saturating: count 2^31 pods of 9P each must not wrap around. */
		for (i = 0; i < n; i++)
			total = carve_qty_sat_add(total, carve_qty_sat_mul(counts[i],
						podspec_res(specs[i], caps[c].res)));
		if (total > caps[c].milli)
			carve_diag_warn(&m->diags, pos,
					"%s asks for %s %s in total, above ClusterQueue %s's "
					"per-workload cap of %s (%s)", what, fmt_qty(total, a),
					caps[c].res, cq->meta.name, fmt_qty(caps[c].milli, b),
					CAP_ANNOTATION);
	}
}

static void check_caps(struct carve_manifests *m)
{
	const struct carve_podspec *specs[64];
	int64_t counts[64];
	char what[512];
	size_t i, p;

	for (i = 0; i < m->nworkloads; i++) {
		const struct carve_mf_workload *w = &m->workloads[i];

		for (p = 0; p < w->npodsets && p < 64; p++) {
			specs[p] = &w->podsets[p].spec;
			counts[p] = w->podsets[p].count;
		}
		snprintf(what, sizeof(what), "Workload %s/%s", w->meta.ns, w->meta.name);
		check_cap(m, what, w->meta.ns, w->queue_name, specs, counts, p, w->meta.pos);
	}
	for (i = 0; i < m->njobs; i++) {
		const struct carve_mf_job *j = &m->jobs[i];

		specs[0] = &j->spec;
		counts[0] = job_pods(j);
		snprintf(what, sizeof(what), "Job %s/%s", j->meta.ns, j->meta.name);
		check_cap(m, what, j->meta.ns, kv_get(&j->meta.labels, "kueue.x-k8s.io/queue-name"),
			  specs, counts, 1, j->meta.pos);
	}
}

static void check_cqs(struct carve_manifests *m)
{
	struct wcap caps[MAX_CAPS];
	size_t i;

	for (i = 0; i < m->ncqs; i++) {
		const struct carve_mf_cq *cq = &m->cqs[i];

		check_groups(m, "ClusterQueue", cq->meta.name, cq->groups, cq->ngroups, cq->cohort);
		parse_caps(m, cq, caps, true);
	}
	for (i = 0; i < m->ncohorts; i++) {
		const struct carve_mf_cohort *co = &m->cohorts[i];

		/* A root cohort may hold quota but has nobody to lend to or borrow from
		 * above it: its limits only make sense with a parent. */
		check_groups(m, "Cohort", co->meta.name, co->groups, co->ngroups, co->parent);
	}
}

static const char *suggest_cq(const struct carve_manifests *m, const char *name)
{
	const char *names[256];
	size_t i, n = 0;

	for (i = 0; i < m->ncqs && n < 256; i++)
		names[n++] = m->cqs[i].meta.name;
	return ld_suggest(name, names, n);
}

static void check_lqs(struct carve_manifests *m)
{
	size_t i;

	for (i = 0; i < m->nlqs; i++) {
		const struct carve_mf_localqueue *lq = &m->lqs[i];
		const char *s;

		if (carve_mf_find_cq(m, lq->cluster_queue))
			continue;
		s = suggest_cq(m, lq->cluster_queue);
		carve_diag_error(&m->diags, lq->cq_pos,
				 "LocalQueue %s/%s: ClusterQueue '%s' is not defined%s%s%s",
				 lq->meta.ns, lq->meta.name, lq->cluster_queue,
				 s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
	}
}

static bool find_priority(const struct carve_manifests *m, const char *name)
{
	size_t i;

	for (i = 0; i < m->nwpcs; i++)
		if (!strcmp(m->wpcs[i].meta.name, name))
			return true;
	return false;
}

static void check_workloads(struct carve_manifests *m)
{
	size_t i, j, k;

	for (i = 0; i < m->nworkloads; i++) {
		const struct carve_mf_workload *w = &m->workloads[i];

		if (!w->npodsets)
			carve_diag_error(&m->diags, w->meta.pos, "Workload %s/%s has no podSets",
					 w->meta.ns, w->meta.name);
		if (w->queue_name && !carve_mf_find_lq(m, w->meta.ns, w->queue_name))
			carve_diag_warn(&m->diags, w->queue_pos,
					"Workload %s/%s: LocalQueue '%s' does not exist in namespace "
					"%s; the workload stays pending", w->meta.ns, w->meta.name,
					w->queue_name, w->meta.ns);
		if (w->priority_class && !find_priority(m, w->priority_class))
			carve_diag_warn(&m->diags, w->meta.pos,
					"Workload %s/%s: priority class '%s' is not defined",
					w->meta.ns, w->meta.name, w->priority_class);
		if (!w->admitted_cq)
			continue;
		if (!carve_mf_find_cq(m, w->admitted_cq))
			carve_diag_error(&m->diags, w->admission_pos,
					 "Workload %s/%s: admitted to ClusterQueue '%s', which is not "
					 "defined", w->meta.ns, w->meta.name, w->admitted_cq);
		for (j = 0; j < w->nassign; j++)
			for (k = 0; k < w->assign[j].flavors.n; k++) {
				const struct carve_kv *f = &w->assign[j].flavors.v[k];

				if (!carve_mf_find_flavor(m, f->value))
					carve_diag_error(&m->diags, f->pos,
							 "Workload %s/%s: admission assigns flavor '%s', "
							 "which is not defined", w->meta.ns, w->meta.name,
							 f->value);
			}
	}
}

static void check_queues(struct carve_manifests *m)
{
	size_t i, j;

	for (i = 0; i < m->npodgroups; i++) {
		const struct carve_mf_podgroup *pg = &m->podgroups[i];

		if (!pg->queue || !strcmp(pg->queue, "default") ||
		    strncmp(pg->meta.api_version, "scheduling.volcano.sh/", 22))
			continue;
		for (j = 0; j < m->nvcqueues; j++)
			if (!strcmp(m->vcqueues[j].meta.name, pg->queue))
				break;
		if (j == m->nvcqueues)
			carve_diag_warn(&m->diags, pg->queue_pos,
					"PodGroup %s/%s: Volcano Queue '%s' is not defined",
					pg->meta.ns, pg->meta.name, pg->queue);
	}
}

/* Whether d already says something at least as severe at x's place (the
 * same problem, perhaps in other words; for an object read from the API,
 * whose positions have no line, under the same rule id), or x's very
 * message anywhere. */
static bool has_diag(const struct carve_diags *d, const struct carve_diag *x)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct carve_diag *y = &d->v[i];

		if (!strcmp(y->msg, x->msg))
			return true;
		if (x->pos.line && y->sev >= x->sev && y->pos.line == x->pos.line &&
		    y->pos.col == x->pos.col && y->pos.file && x->pos.file &&
		    !strcmp(y->pos.file, x->pos.file))
			return true;
		/* an API object has no lines: the same rule on the same object */
		if (!x->pos.line && x->rule && y->rule && !strcmp(x->rule, y->rule) &&
		    y->sev >= x->sev && y->pos.file && x->pos.file &&
		    !strcmp(y->pos.file, x->pos.file))
			return true;
	}
	return false;
}

/*
 * The queue objects as the admission build reads them: everything `carve
 * admit` reports about flavors, Cohorts, ClusterQueues and Volcano/KAI
 * queues (their translation, parent links and cycles, Cohorts' included,
 * quota the engine refuses) is reported here too, from the same code; what the checks
 * above already said at the same place is not repeated.
 */
static void check_as_admitted(struct carve_manifests *m)
{
	struct carve_admission_opts o;
	struct carve_admission *ad;
	struct carve_diags d;
	size_t i;

	carve_diags_init(&d);
	memset(&o, 0, sizeof(o));
	o.queues_only = true;
	o.diags = &d;
	ad = carve_admission_build_opts(m, &o);
	for (i = 0; i < d.n; i++)
		if (!has_diag(&m->diags, &d.v[i])) {
			size_t n0 = m->diags.n;

			carve_diag(&m->diags, d.v[i].sev, d.v[i].pos, "%s", d.v[i].msg);
			carve_diags_tag(&m->diags, n0, d.v[i].rule ? d.v[i].rule : "quota");
		}
	carve_admission_destroy(ad);
	carve_diags_cleanup(&d);
}

/* ---- template lints ---- */

static bool node_has_labels(const struct carve_node *nd, const struct carve_kvlist *sel);

static bool is_gpu_resource(const char *name)
{
	return !strncmp(name, "nvidia.com/", 11) || !strcmp(name, "amd.com/gpu") ||
	       !strncmp(name, "alibabacloud.com/gpu", 20) ||
	       carve_res_family(name) == CARVE_RF_CARVE;
}

static bool is_mig_resource(const char *name)
{
	return carve_res_is_mig(name, NULL);
}

static const char *const gpu_label_keys[] = {
	"nvidia.com/gpu.product", "nvidia.com/gpu.family", "nvidia.com/gpu.memory",
	"nvidia.com/gpu.machine", "nvidia.com/gpu.sharing-strategy", "nvidia.com/mig.strategy",
	"nvidia.com/mig.config", "nvidia.com/gpu.replicas", "nvidia.com/device-plugin.config",
	"nvidia.com/gpu.compute.major", "alibabacloud.com/gpu-card-model", "carve.dev/pool",
	"cloud.google.com/gke-accelerator", "node.kubernetes.io/instance-type", NULL,
};

static bool is_gpu_label(const char *key)
{
	size_t i;

	for (i = 0; gpu_label_keys[i]; i++)
		if (!strcmp(key, gpu_label_keys[i]))
			return true;
	return false;
}

/* A template being linted. */
struct tmpl {
	const char *what;      /* "Pod ns/x", "Job ns/x", "Workload ns/x podSet main" */
	const char *ns;
	const char *queue;     /* Kueue LocalQueue name, or NULL */
	const struct carve_podspec *spec;
	int64_t pods;
};

static bool pod_wants_gpu(const struct carve_podspec *ps, bool *only_mig)
{
	size_t i;
	bool any = false;

	*only_mig = true;
	for (i = 0; i < ps->requests.n; i++)
		if (is_gpu_resource(ps->requests.v[i].name) && ps->requests.v[i].milli > 0) {
			any = true;
			if (!is_mig_resource(ps->requests.v[i].name))
				*only_mig = false;
		}
	for (i = 0; i < ps->limits.n; i++)
		if (is_gpu_resource(ps->limits.v[i].name) && ps->limits.v[i].milli > 0) {
			any = true;
			if (!is_mig_resource(ps->limits.v[i].name))
				*only_mig = false;
		}
	if (kv_get(&ps->annotations, "gpu-fraction") || kv_get(&ps->annotations, "gpu-memory")) {
		any = true;
		*only_mig = false;
	}
	return any;
}

/* True when the template's Kueue queue leads to flavors with node labels
 * for its GPU resources: Kueue then injects the selector at admission. */
static bool kueue_injects_selector(const struct carve_manifests *m, const struct tmpl *t)
{
	const struct carve_mf_localqueue *lq;
	const struct carve_mf_cq *cq;
	size_t g, f;

	if (!t->queue || !(lq = carve_mf_find_lq(m, t->ns, t->queue)) ||
	    !(cq = carve_mf_find_cq(m, lq->cluster_queue)))
		return false;
	for (g = 0; g < cq->ngroups; g++) {
		bool covers_gpu = false;
		size_t c;

		for (c = 0; c < cq->groups[g].ncovered; c++)
			covers_gpu |= is_gpu_resource(cq->groups[g].covered[c]);
		if (!covers_gpu)
			continue;
		for (f = 0; f < cq->groups[g].nflavors; f++) {
			const struct carve_mf_flavor *fl =
				carve_mf_find_flavor(m, cq->groups[g].flavors[f].flavor);

			if (!fl || !fl->node_labels.n)
				return false;
		}
		return cq->groups[g].nflavors > 0;
	}
	return false;
}

static void lint_limits(struct carve_manifests *m, const struct tmpl *t)
{
	const struct carve_podspec *ps = t->spec;
	size_t c, i, j;
	char a[QBUF], b[QBUF];

	for (c = 0; c < ps->ncontainers + ps->ninit; c++) {
		const struct carve_container *ct = c < ps->ncontainers ? &ps->containers[c] :
									  &ps->init[c - ps->ncontainers];

		for (i = 0; i < ct->requests.n; i++) {
			const struct carve_resq *rq = &ct->requests.v[i];

			if (!is_gpu_resource(rq->name))
				continue;
			for (j = 0; j < ct->limits.n; j++)
				if (!strcmp(ct->limits.v[j].name, rq->name))
					break;
			if (j == ct->limits.n)
				carve_diag_warn(&m->diags, rq->pos,
						"%s: container %s requests %s %s without a limit; "
						"GPU resources need limits equal to requests",
						t->what, ct->name ? ct->name : "?", fmt_qty(rq->milli, a),
						rq->name);
			else if (ct->limits.v[j].milli != rq->milli)
				carve_diag_warn(&m->diags, rq->pos,
						"%s: container %s requests %s %s but its limit is %s; "
						"GPU resources need limits equal to requests",
						t->what, ct->name ? ct->name : "?", fmt_qty(rq->milli, a),
						rq->name, fmt_qty(ct->limits.v[j].milli, b));
		}
	}
}

static void lint_selector(struct carve_manifests *m, const struct tmpl *t)
{
	const struct carve_podspec *ps = t->spec;
	bool only_mig;
	size_t i, j, k;

	if (!pod_wants_gpu(ps, &only_mig) || only_mig)
		return; /* a MIG resource already names the sharing mode */
	for (i = 0; i < ps->node_selector.n; i++)
		if (is_gpu_label(ps->node_selector.v[i].key))
			return;
	for (i = 0; i < ps->nterms; i++)
		for (j = 0; j < ps->terms[i].n; j++)
			if (is_gpu_label(ps->terms[i].v[j].key))
				return;
	if (kueue_injects_selector(m, t))
		return;
	(void)k;
	carve_diag_warn(&m->diags, ps->pos,
			"%s requests GPUs but selects no GPU model or sharing mode "
			"(no nodeSelector or required affinity on nvidia.com/gpu.product or "
			"similar): it may land on any GPU, shared or not", t->what);
}

/* Per (GPU resource name, nodeSelector), the most any selected node lets
 * one pod have, and whether any node is selected: computed once by a scan
 * over every node, then shared by every template with the same pair. */
#define FIT_CACHE 64

struct fitcache {
	size_t n;
	struct {
		const char *name;
		const struct carve_kvlist *sel;
		int64_t best;
		bool any;
	} v[FIT_CACHE];
};

static bool same_selector(const struct carve_kvlist *a, const struct carve_kvlist *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->v[i].key, b->v[i].key) || strcmp(a->v[i].value, b->v[i].value))
			return false;
	return true;
}

static void fit_best(struct fitcache *fc, const struct carve_inventory *inv, const char *name,
		     const struct carve_kvlist *sel, int64_t *best, bool *any)
{
	size_t nn = carve_cluster_node_count(inv->cluster), i;
	uint32_t id;

	for (i = 0; i < fc->n; i++)
		if (!strcmp(fc->v[i].name, name) && same_selector(fc->v[i].sel, sel)) {
			*best = fc->v[i].best;
			*any = fc->v[i].any;
			return;
		}
	*best = 0;
	*any = false;
	for (id = 0; id < nn; id++) {
		int64_t maxpp = 0;

		if (!node_has_labels(carve_cluster_node(inv->cluster, id), sel))
			continue;
		*any = true;
		carve_inventory_node_res(inv, id, name, &maxpp);
		if (maxpp > *best)
			*best = maxpp;
	}
	if (fc->n == FIT_CACHE)
		return; /* full: later pairs are scanned each time */
	fc->v[fc->n].name = name;
	fc->v[fc->n].sel = sel;
	fc->v[fc->n].best = *best;
	fc->v[fc->n++].any = *any;
}

static void lint_fit(struct carve_manifests *m, const struct tmpl *t,
		     const struct carve_inventory *inv, struct fitcache *fc)
{
	const struct carve_podspec *ps = t->spec;
	const struct carve_reslist *rl = ps->requests.n ? &ps->requests : &ps->limits;
	size_t i;
	char a[QBUF], b[QBUF];

	for (i = 0; i < rl->n; i++) {
		const struct carve_resq *rq = &rl->v[i];
		int64_t best, want = carve_qty_value(rq->milli);
		bool any_selected;

		if (!is_gpu_resource(rq->name) || want <= 0)
			continue;
		fit_best(fc, inv, rq->name, &ps->node_selector, &best, &any_selected);
		if (best >= want)
			continue;
		if (!any_selected && ps->node_selector.n)
			carve_diag_warn(&m->diags, rq->pos,
					"%s: no node matches its nodeSelector, so its %s %s can never "
					"be placed", t->what, fmt_qty(rq->milli, a), rq->name);
		else if (best == 0)
			carve_diag_warn(&m->diags, rq->pos,
					"%s: a pod requests %s %s but no node offers %s", t->what,
					fmt_qty(rq->milli, a), rq->name, rq->name);
		else
			carve_diag_warn(&m->diags, rq->pos,
					"%s: a pod requests %s %s but no node can give one pod more "
					"than %s", t->what, fmt_qty(rq->milli, a), rq->name,
					fmt_qty(best * 1000, b));
	}
}

static bool podgroup_gangs(const struct carve_manifests *m, const char *ns, const char *name)
{
	size_t i;

	for (i = 0; i < m->npodgroups; i++)
		if (!strcmp(m->podgroups[i].meta.name, name) &&
		    same_ns(m->podgroups[i].meta.ns, ns))
			return m->podgroups[i].min_member > 1;
	return false;
}

static void lint_gang(struct carve_manifests *m, const struct carve_mf_job *j)
{
	const char *g;
	bool only_mig;

	if (job_pods(j) <= 1 || !pod_wants_gpu(&j->spec, &only_mig))
		return;
	if (kv_get(&j->meta.labels, "kueue.x-k8s.io/queue-name") ||
	    kv_get(&j->spec.labels, "kueue.x-k8s.io/queue-name"))
		return; /* Kueue admits the Job's pods as one workload */
	g = kv_get(&j->spec.annotations, "scheduling.k8s.io/group-name");
	if (!g)
		g = kv_get(&j->spec.labels, "scheduling.x-k8s.io/pod-group");
	if (!g)
		g = kv_get(&j->spec.labels, "pod-group.scheduling.sigs.k8s.io");
	if (g && podgroup_gangs(m, j->meta.ns, g))
		return;
	carve_diag_warn(&m->diags, j->parallelism_pos.line ? j->parallelism_pos : j->meta.pos,
			"Job %s/%s: %d pods request GPUs but nothing gangs them (no Kueue "
			"queue-name label, no PodGroup with minMember > 1): some may start and hold "
			"GPUs idle while the rest wait", j->meta.ns, j->meta.name, job_pods(j));
}

/*
 * A KAI fraction ("gpu-fraction" / "gpu-memory" annotation) needs a GPU
 * that takes fractions: one that no MIG layout or time-slicing divides, in
 * a pool that does not opt out (sharing mode exclusive), on a node its
 * nodeSelector allows.  Warns at the annotation when there is none.
 */
static void lint_fraction(struct carve_manifests *m, const struct tmpl *t,
			  const struct carve_inventory *inv)
{
	const struct carve_podspec *ps = t->spec;
	const struct carve_kv *a = NULL;
	size_t i, nn = carve_cluster_node_count(inv->cluster);
	uint32_t id, g;
	bool selected = false;

	for (i = 0; i < ps->annotations.n && !a; i++)
		if (!strcmp(ps->annotations.v[i].key, "gpu-fraction") ||
		    !strcmp(ps->annotations.v[i].key, "gpu-memory"))
			a = &ps->annotations.v[i];
	if (!a)
		return;
	for (id = 0; id < nn; id++) {
		const struct carve_node *n = carve_cluster_node(inv->cluster, id);

		if (!node_has_labels(n, &ps->node_selector))
			continue;
		selected = true;
		for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++)
			if (carve_cluster_gpu(inv->cluster, g)->sharing == CARVE_SHARE_FRACTION)
				return;
	}
	carve_diag_warn(&m->diags, a->pos, "%s: annotation %s asks for a GPU fraction, but no "
			"GPU%s takes fractions (each is divided by MIG or time-slicing, or in a "
			"pool whose sharing mode is exclusive), so its pods can never be placed",
			t->what, a->key, selected && ps->node_selector.n ? " its nodeSelector allows"
			: !selected && ps->node_selector.n ? " (no node matches its nodeSelector)" : "");
}

/*
 * Multi-pod GPU Jobs (distributed training) should say how close their pods must be: Kueue's
 * topology-aware scheduling reads the pod template annotations
 * kueue.x-k8s.io/podset-required-topology, podset-preferred-topology and
 * podset-unconstrained-topology (kueue.sigs.k8s.io, "Topology Aware
 * Scheduling").  Warns when Job t runs more than one GPU pod with none of
 * them.  Serving replicas (Pods, Workloads) need no closeness: not checked.
 */
static void lint_topology(struct carve_manifests *m, const struct tmpl *t)
{
	const struct carve_podspec *ps = t->spec;
	bool only_mig;

	if (t->pods <= 1 || !pod_wants_gpu(ps, &only_mig))
		return;
	if (kv_get(&ps->annotations, "kueue.x-k8s.io/podset-required-topology") ||
	    kv_get(&ps->annotations, "kueue.x-k8s.io/podset-preferred-topology") ||
	    kv_get(&ps->annotations, "kueue.x-k8s.io/podset-unconstrained-topology"))
		return;
	carve_diag_warn(&m->diags, ps->pos,
			"%s: %lld pods request GPUs but state no topology intent (no "
			"kueue.x-k8s.io/podset-required-topology or podset-preferred-topology "
			"annotation): they may be spread over distant nodes", t->what,
			(long long)t->pods);
}

/* Names in carve's device domain that are none of carve's device names
 * (carve_res_check_name): an error at the request or limit. */
static void lint_names(struct carve_manifests *m, const struct tmpl *t)
{
	const struct carve_reslist *l[2] = {&t->spec->requests, &t->spec->limits};
	struct carve_error err;
	size_t k, i, j;

	for (k = 0; k < 2; k++)
		for (i = 0; i < l[k]->n; i++) {
			if (!carve_res_check_name(l[k]->v[i].name, &err))
				continue;
			for (j = 0; k && j < l[0]->n; j++)
				if (!strcmp(l[0]->v[j].name, l[k]->v[i].name))
					break;
			if (k && j < l[0]->n)
				continue; /* reported at the request */
			carve_diag_error(&m->diags, l[k]->v[i].pos, "%s: %s", t->what, err.text);
		}
}

static void lint_template(struct carve_manifests *m, const struct tmpl *t,
			  const struct carve_inventory *inv, struct fitcache *fc)
{
	size_t n0 = m->diags.n;

	lint_names(m, t);
	carve_diags_tag(&m->diags, n0, "invalid");
	lint_limits(m, t);
	carve_diags_tag(&m->diags, n0, "gpu-limits");
	lint_selector(m, t);
	carve_diags_tag(&m->diags, n0, "gpu-selector");
	if (inv && carve_cluster_node_count(inv->cluster)) {
		lint_fit(m, t, inv, fc);
		carve_diags_tag(&m->diags, n0, "fit");
		lint_fraction(m, t, inv);
		carve_diags_tag(&m->diags, n0, "fraction");
	}
}

static void lint_templates(struct carve_manifests *m, const struct carve_inventory *inv)
{
	struct fitcache fc = {0};
	char what[512];
	struct tmpl t;
	size_t i, p, n0;

	for (i = 0; i < m->npods; i++) {
		const struct carve_mf_pod *pod = &m->pods[i];

		snprintf(what, sizeof(what), "Pod %s/%s", pod->meta.ns, pod->meta.name);
		t = (struct tmpl){what, pod->meta.ns,
				  kv_get(&pod->meta.labels, "kueue.x-k8s.io/queue-name"), &pod->spec, 1};
		lint_template(m, &t, inv, &fc);
	}
	for (i = 0; i < m->njobs; i++) {
		const struct carve_mf_job *j = &m->jobs[i];
		const char *q = kv_get(&j->meta.labels, "kueue.x-k8s.io/queue-name");

		snprintf(what, sizeof(what), "Job %s/%s", j->meta.ns, j->meta.name);
		t = (struct tmpl){what, j->meta.ns, q, &j->spec, job_pods(j)};
		lint_template(m, &t, inv, &fc);
		n0 = m->diags.n;
		lint_gang(m, j);
		carve_diags_tag(&m->diags, n0, "gang");
		lint_topology(m, &t);
		carve_diags_tag(&m->diags, n0, "topology");
	}
	for (i = 0; i < m->nworkloads; i++) {
		const struct carve_mf_workload *w = &m->workloads[i];

		for (p = 0; p < w->npodsets; p++) {
			snprintf(what, sizeof(what), "Workload %s/%s podSet %s", w->meta.ns,
				 w->meta.name, w->podsets[p].name ? w->podsets[p].name : "?");
			t = (struct tmpl){what, w->meta.ns, w->queue_name, &w->podsets[p].spec,
					  w->podsets[p].count};
			lint_template(m, &t, inv, &fc);
		}
	}
}

/* ---- MIG and time-slicing under one name ---- */

static bool node_has_labels(const struct carve_node *nd, const struct carve_kvlist *sel)
{
	struct carve_labels nl = carve_labels_of(nd->labels, nd->nlabels);
	size_t s;

	for (s = 0; sel && s < sel->n; s++)
		if (!carve_match_label(&nl, sel->v[s].key, sel->v[s].value))
			return false;
	return true;
}

static void name_set_add(const char **set, size_t *n, size_t cap, const char *name)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(set[i], name))
			return;
	if (*n < cap)
		set[(*n)++] = name;
}

/* Over nodes [first, first+n) (only those carrying every label of sel when
 * sel != NULL), finds a resource name advertised both by MIG instances and
 * by time-slice replicas, or by MIG instances that are time-sliced too. */
static const char *mixed_name(const struct carve_inventory *inv, uint32_t first, uint32_t n,
			      const struct carve_kvlist *sel)
{
	const char *mig[64], *ts[64];
	size_t nmig = 0, nts = 0, i, j;
	uint32_t id, k;

	for (id = first; id < first + n; id++) {
		if (!node_has_labels(carve_cluster_node(inv->cluster, id), sel))
			continue;
		for (k = 0; k < inv->node_nres[id]; k++) {
			const struct carve_inv_resource *r = &inv->res[inv->node_res_first[id] + k];

			if (r->mig_timesliced)
				return r->name;
			if (r->sharing == CARVE_SHARE_MIG)
				name_set_add(mig, &nmig, 64, r->name);
			else if (r->sharing == CARVE_SHARE_TIMESLICE)
				name_set_add(ts, &nts, 64, r->name);
		}
	}
	for (i = 0; i < nmig; i++)
		for (j = 0; j < nts; j++)
			if (!strcmp(mig[i], ts[j]))
				return mig[i];
	return NULL;
}

static void lint_mixing(struct carve_manifests *m, const struct carve_inventory *inv)
{
	size_t i;
	const char *name;

	for (i = 0; i < inv->npools; i++) {
		const struct carve_inv_pool *p = &inv->pools[i];

		name = mixed_name(inv, p->node_first, p->nnodes, NULL);
		if (name)
			carve_diag_warn(&m->diags, p->pos,
					"pool %s mixes MIG instances and time-sliced replicas under "
					"one resource name, %s: a pod cannot tell an isolated MIG "
					"instance from a shared replica", p->name, name);
	}
	for (i = 0; i < m->nflavors; i++) {
		const struct carve_mf_flavor *f = &m->flavors[i];

		if (!f->node_labels.n)
			continue;
		name = mixed_name(inv, 0, (uint32_t)carve_cluster_node_count(inv->cluster),
				  &f->node_labels);
		if (name)
			carve_diag_warn(&m->diags, f->meta.pos,
					"ResourceFlavor %s selects nodes that offer %s both as MIG "
					"instances and as time-sliced replicas", f->meta.name, name);
	}
}

/* Every diagnostic carries a rule id (carve_diag_rule, docs/webhook.md):
 * set where one check says several things, else by the check below. */
void carve_validate(struct carve_manifests *m, const struct carve_inventory *inv)
{
	struct carve_diags *d = &m->diags;
	size_t n0 = d->n;

	carve_diags_tag(d, 0, "invalid"); /* what the loaders said */
	check_duplicates(m);
	carve_diags_tag(d, n0, "duplicate");
	n0 = d->n;
	check_cqs(m);
	carve_diags_tag(d, n0, "quota");
	n0 = d->n;
	check_lqs(m);
	check_workloads(m);
	check_queues(m);
	carve_diags_tag(d, n0, "queue-ref");
	n0 = d->n;
	check_as_admitted(m);
	check_caps(m);
	carve_diags_tag(d, n0, "quota");
	n0 = d->n;
	lint_templates(m, inv);
	carve_diags_tag(d, n0, "lint");
	n0 = d->n;
	if (inv)
		lint_mixing(m, inv);
	carve_diags_tag(d, n0, "mig-timeslice-mix");
}
