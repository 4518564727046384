/*
 * admission.c - the bridge's build: manifests -> inventory, placer and
 * admission engine (queues.c, workloads.c), and the result's life cycle (see include/carve/admission.h, docs/admit-json.md).
 *
 * Invariants: the engine only ever sees what the manifests say (no clock:
 * cycles run at the latest timestamp of the input); every object the engine
 * or the bridge refuses is reported once in m->diags at its position and
 * skipped; spec arrays handed to the engine live in a scratch arena that
 * dies with the build; results are always listed in workload-key order so
 * the same input prints the same bytes.  Volcano and KAI queues are
 * translated into ClusterQueues and Cohorts of the same engine, PodGroups
 * into workloads (docs/volcano-kai.md, "Mapping onto carve's quota model").
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge_int.h"

/* n zeroed elements of size from the scratch arena; NULL for n == 0 too. */
void *br_scratch(struct bld *b, size_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	if (n > SIZE_MAX / size) {
		b->nomem = true;
		return NULL;
	}
	p = carve_arena_alloc(&b->a, n * size);
	if (!p)
		b->nomem = true;
	return p;
}

struct carve_pos br_meta_pos(const struct carve_meta *meta)
{
	return meta->name_pos.line ? meta->name_pos : meta->pos;
}

/* "ns/name" for namespaced objects, "name" otherwise (scratch). */
const char *br_obj_name(struct bld *b, const struct carve_meta *meta)
{
	size_t nl, sl;
	char *s;

	if (!meta->ns)
		return meta->name;
	nl = strlen(meta->ns);
	sl = strlen(meta->name);
	s = br_scratch(b, nl + sl + 2, 1);
	if (!s)
		return meta->name;
	memcpy(s, meta->ns, nl);
	s[nl] = '/';
	memcpy(s + nl + 1, meta->name, sl + 1);
	return s;
}

/* Reports an engine refusal of one object: the engine's text, prefixed
 * with "<Kind> <name>: " unless the text already names the object. */
void br_refused(struct bld *b, const struct carve_meta *meta, struct carve_pos pos, int rc,
		    const struct carve_error *err)
{
	const char *name = br_obj_name(b, meta);
	const char *why = err->code && err->text[0] ? err->text : carve_strerror(rc);
	size_t n0;

	if (rc == CARVE_ENOMEM) {
		b->nomem = true;
		return;
	}
	n0 = b->diags->n;
	if (strstr(why, name))
		carve_diag_error(b->diags, pos, "%s", why);
	else
		carve_diag_error(b->diags, pos, "%s %s: %s", meta->kind, name, why);
	if (rc == CARVE_EEXISTS)
		carve_diags_tag(b->diags, n0, "duplicate");
}

const char *br_fmt(struct bld *b, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = n >= 0 ? br_scratch(b, (size_t)n + 1, 1) : NULL;
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* ---- small conversions ---- */

const struct carve_label *br_conv_kv(struct bld *b, const struct carve_kvlist *l)
{
	struct carve_label *v = br_scratch(b, l->n, sizeof(*v));
	size_t i;

	for (i = 0; v && i < l->n; i++) {
		v[i].key = l->v[i].key;
		v[i].value = l->v[i].value;
	}
	return v;
}

const struct carve_toleration_spec *br_conv_tols(struct bld *b, size_t n,
						     const struct carve_toleration *t)
{
	struct carve_toleration_spec *v = br_scratch(b, n, sizeof(*v));
	size_t i;

	for (i = 0; v && i < n; i++) {
		v[i].key = t[i].key;
		v[i].op = t[i].op;
		v[i].value = t[i].value;
		v[i].effect = t[i].effect;
	}
	return v;
}

/* ---- build ---- */

/* The latest timestamp of the input: the engine's clock. */
static int64_t latest_time(const struct carve_manifests *m)
{
	int64_t t = 0;
	size_t i;

	for (i = 0; i < m->nworkloads; i++) {
		const struct carve_mf_workload *w = &m->workloads[i];

		if (w->meta.has_created && w->meta.created > t)
			t = w->meta.created;
		if (w->has_quota_reserved_at && w->quota_reserved_at > t)
			t = w->quota_reserved_at;
	}
	for (i = 0; i < m->npodgroups; i++)
		if (m->podgroups[i].meta.has_created && m->podgroups[i].meta.created > t)
			t = m->podgroups[i].meta.created;
	return t;
}


/* Nodes in the input: the inventory and a placer over it, set on the engine. */
static void add_placer(struct bld *b)
{
	struct carve_manifests *m = b->m;
	struct carve_error err = {0};
	struct carve_pos none = {NULL, 0, 0};
	const char *policy = b->opts && b->opts->policy ? b->opts->policy : "binpack";
	uint64_t seed = b->opts && b->opts->has_seed ? b->opts->seed : 42;

	if (!m->nnodes && !m->npools && !m->ncsvnodes)
		return;
	b->ad->inv = carve_inventory_build(m);
	if (!b->ad->inv) {
		b->nomem = true;
		return;
	}
	b->ad->placer = carve_placer_create(b->ad->inv->cluster, policy, seed, &err);
	if (!b->ad->placer) {
		if (err.code == CARVE_ENOMEM || !err.code)
			b->nomem = true;
		else
			carve_diag_error(&m->diags, none, "placement: %s", err.text);
		return;
	}
	b->ad->mig_dynamic = b->opts && b->opts->mig_dynamic;
	carve_placer_set_mig_dynamic(b->ad->placer, b->ad->mig_dynamic);
	if (carve_adm_set_placer(b->ad->adm, b->ad->placer, b->ad->inv->cluster))
		b->nomem = true; /* cannot happen: finalized, no workloads yet */
}

/*
 * Dynamic MIG: the MIG profiles the pending (not yet admitted) Workloads
 * ask for, weighted by pods x instances, go to the placer, so a
 * repartitioned GPU is filled with what the queue wants
 * (carve_placer_set_mig_wants).
 */
static void set_mig_wants(struct bld *b)
{
	const char **names;
	double *wt;
	size_t i, j, k, n = 0;

	names = br_scratch(b, 64, sizeof(*names));
	wt = br_scratch(b, 64, sizeof(*wt));
	if (!names || !wt)
		return;
	for (i = 0; i < b->m->nworkloads; i++) {
		const struct carve_mf_workload *w = &b->m->workloads[i];

		if (w->admitted_cq || !w->active)
			continue;
		for (j = 0; j < w->npodsets; j++) {
			const struct carve_reslist *rl = &w->podsets[j].spec.requests;

			for (k = 0; k < rl->n; k++) {
				const char *prof;
				size_t t;

				if (carve_res_kind(rl->v[k].name, &prof) != CARVE_RK_MIG ||
				    rl->v[k].milli <= 0)
					continue;
				for (t = 0; t < n && strcmp(names[t], prof); t++)
					;
				if (t == n) {
					if (n == 64)
						continue;
					names[n] = prof;
					wt[n++] = 0;
				}
				wt[t] += (double)w->podsets[j].count * (double)rl->v[k].milli / 1000.0;
			}
		}
	}
	if (carve_placer_set_mig_wants(b->ad->placer, names, wt, n) == CARVE_ENOMEM)
		b->nomem = true;
}

/*
 * The fair-sharing settings of a Kueue Configuration in the input (at most
 * one; load_kueue_config.c): fairSharing.enable turns fair sharing on (the
 * CLI's --fair-sharing turns it on as well; nothing on the command line
 * turns it off), the strategies and the two fair-sharing feature gates
 * are set as given.  Without a Configuration the engine keeps its
 * defaults (off; both strategies; both gates on).
 */
static void apply_kueue_config(struct bld *b)
{
	const struct carve_mf_kueue_config *c;
	enum carve_fs_strategy st[2];
	size_t i;

	if (!b->m->nkueue_configs)
		return;
	c = &b->m->kueue_configs[0];
	if (c->fair_sharing)
		carve_adm_set_fair_sharing(b->ad->adm, true);
	if (c->nstrategies) {
		for (i = 0; i < c->nstrategies && i < 2; i++)
			st[i] = c->strategies[i] == CARVE_MF_FS_LE_FINAL_SHARE ?
					CARVE_FS_LE_FINAL_SHARE : CARVE_FS_LT_INITIAL_SHARE;
		if (carve_adm_set_fair_strategies(b->ad->adm, st, c->nstrategies) < 0)
			carve_diag_error(b->diags, c->strategies_pos,
					 "Configuration: fairSharing.preemptionStrategies: a "
					 "combination the engine refuses");
	}
	if (c->gate_preempt_within_nominal >= 0)
		carve_adm_set_fair_gate(b->ad->adm, CARVE_GATE_PREEMPT_WITHIN_NOMINAL,
					c->gate_preempt_within_nominal);
	if (c->gate_prioritize_non_borrowing >= 0)
		carve_adm_set_fair_gate(b->ad->adm, CARVE_GATE_PRIORITIZE_NON_BORROWING,
					c->gate_prioritize_non_borrowing);
}

/* The place-only flavor and ClusterQueue (struct carve_admission_opts). */
static void add_place_only(struct bld *b)
{
	const struct carve_admission_opts *o = b->opts;
	struct carve_pos none = {NULL, 0, 0};
	struct carve_flavor_spec f;
	struct carve_rgroup_spec g;
	struct carve_cq_spec q;
	struct carve_fquota *quota;
	struct carve_error err = {0};
	size_t i;
	int rc;

	if (!o || !o->place_only)
		return;
	quota = br_scratch(b, o->nplace_only_res + 1, sizeof(*quota));
	if (!quota)
		return;
	for (i = 0; i < o->nplace_only_res; i++) {
		memset(&quota[i], 0, sizeof(quota[i]));
		quota[i].present = true;
		quota[i].nominal = CARVE_PLACE_ONLY_QUOTA;
	}
	memset(&f, 0, sizeof(f));
	f.name = o->place_only;
	memset(&g, 0, sizeof(g));
	g.nres = o->nplace_only_res;
	g.resources = o->place_only_res;
	g.nflavors = 1;
	g.flavors = &f.name;
	g.quota = quota;
	memset(&q, 0, sizeof(q));
	q.name = o->place_only;
	q.ngroups = o->nplace_only_res ? 1 : 0;
	q.groups = &g;
	rc = carve_adm_add_flavor(b->ad->adm, &f, &err);
	if (!rc)
		rc = carve_adm_add_cq(b->ad->adm, &q, &err);
	if (rc == CARVE_ENOMEM)
		b->nomem = true;
	else if (rc < 0)
		carve_diag_error(b->diags, none, "place-only queue %s: %s", o->place_only,
				 err.code && err.text[0] ? err.text : carve_strerror(rc));
}

static void build(struct bld *b)
{
	struct carve_error err = {0};
	size_t i;
	int rc;

	apply_kueue_config(b);
	br_add_flavors(b);
	br_add_cohorts(b);
	br_add_cqs(b);
	if (!b->nomem)
		br_add_xqueues(b);
	if (!b->nomem)
		add_place_only(b);
	if (b->nomem)
		return;
	rc = carve_adm_finalize(b->ad->adm, &err);
	if (rc == CARVE_ENOMEM) {
		b->nomem = true;
		return;
	}
	if (rc < 0) {
		struct carve_pos none = {NULL, 0, 0};

		carve_diag_error(b->diags, none, "the quota tree cannot be built: %s",
				 err.code && err.text[0] ? err.text : carve_strerror(rc));
		return;
	}
	b->ad->finalized = true;
	if (b->opts && b->opts->queues_only) {
		/* what admit says of Jobs' and pods' queue labels, said here too
		 * (listed in ad->derived, added to no engine) */
		if (!b->nomem)
			br_add_jobs(b);
		return;
	}
	add_placer(b);
	if (b->opts && b->opts->no_workloads)
		return;
	for (i = 0; i < b->m->nworkloads && !b->nomem; i++)
		if (!b->opts || !b->opts->admitted_only || b->m->workloads[i].admitted_cq)
			br_add_workload(b, &b->m->workloads[i]);
	if (b->m->npodgroups) {
		b->ad->pg_queued = carve_calloc(b->m->npodgroups, sizeof(*b->ad->pg_queued));
		if (!b->ad->pg_queued)
			b->nomem = true;
	}
	for (i = 0; i < b->m->npodgroups && !b->nomem; i++)
		br_add_podgroup(b, &b->m->podgroups[i]);
	if (!b->nomem)
		br_add_jobs(b); /* admitted_only: listed in ad->derived, not added */
	if (b->ad->placer && b->ad->mig_dynamic && !b->nomem)
		set_mig_wants(b);
}

struct carve_admission *carve_admission_build(struct carve_manifests *m)
{
	return carve_admission_build_opts(m, NULL);
}

struct carve_admission *carve_admission_build_opts(struct carve_manifests *m,
						   const struct carve_admission_opts *o)
{
	struct carve_pos none = {NULL, 0, 0};
	struct bld b;

	memset(&b, 0, sizeof(b));
	b.m = m;
	b.diags = o && o->diags ? o->diags : &m->diags;
	b.opts = o;
	carve_arena_init(&b.a);
	b.ad = carve_calloc(1, sizeof(*b.ad));
	if (b.ad) {
		b.ad->m = m;
		b.ad->adm = carve_adm_create();
		b.ad->jobs = carve_calloc(1, sizeof(*b.ad->jobs));
		if (b.ad->jobs)
			carve_arena_init(b.ad->jobs);
	}
	b.flavor_ok = m->nflavors ? carve_calloc(m->nflavors, sizeof(*b.flavor_ok)) : NULL;
	if (!b.ad || !b.ad->adm || !b.ad->jobs || (m->nflavors && !b.flavor_ok))
		b.nomem = true;
	else
		build(&b);
	carve_free(b.flavor_ok);
	carve_arena_cleanup(&b.a);
	if (b.nomem) {
		carve_diag_error(&m->diags, none, "out of memory building the admission engine");
		carve_admission_destroy(b.ad);
		return NULL;
	}
	b.ad->now = latest_time(m);
	return b.ad;
}

void carve_admission_destroy(struct carve_admission *ad)
{
	if (!ad)
		return;
	carve_adm_destroy(ad->adm);      /* before the placer it borrows */
	carve_placer_destroy(ad->placer);
	carve_inventory_destroy(ad->inv);
	carve_free(ad->wl);
	carve_free(ad->pg);
	carve_free(ad->pg_queued);
	carve_free(ad->derived);
	if (ad->jobs)
		carve_arena_cleanup(ad->jobs);
	carve_free(ad->jobs);
	carve_free(ad);
}

const struct carve_mf_workload *carve_admission_workload(const struct carve_admission *ad,
							 uint32_t wl)
{
	return ad && wl < ad->nwl ? ad->wl[wl] : NULL;
}

const struct carve_mf_podgroup *carve_admission_podgroup(const struct carve_admission *ad,
							 uint32_t wl)
{
	return ad && wl < ad->nwl ? ad->pg[wl] : NULL;
}

