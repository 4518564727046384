/*
 * result.c - the engine's decisions -> the `carve admit` result: JSON
 * (docs/admit-json.md) and the table, always in workload-key order.  The
 * table prints every cell escaped (carve_fputs_esc) and aligns columns on
 * the escaped width: a name from the input cannot add a row or a terminal
 * sequence.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge_int.h"

/* ---- results ---- */

enum decision { D_NONE = 0, D_ADMITTED, D_PREEMPTED, D_PENDING, D_RUNNING };

static const char *const decision_names[] = {"", "admitted", "preempted", "pending", "running"};

/*
 * Marked victims are preempted even though they still hold quota; an
 * engine admission that stands is admitted (also after an earlier
 * eviction); an admission given in the input that stands is running.
 */
static enum decision decide(const struct carve_wl_status *s)
{
	if (s->marked)
		return D_PREEMPTED;
	if (s->state == CARVE_WL_ADMITTED)
		return s->admitted_by_engine ? D_ADMITTED : D_RUNNING;
	if (s->evicted)
		return D_PREEMPTED;
	if (s->state == CARVE_WL_PENDING)
		return D_PENDING;
	return D_NONE;
}

static const char *pending_reason(const struct carve_wl_status *s)
{
	return s->pending_reason == CARVE_PEND_NONE ? carve_pending_reason_name(CARVE_PEND_NOFIT)
						    : carve_pending_reason_name(s->pending_reason);
}

static const char *preemptor_key(const struct carve_admission *ad, const struct carve_wl_status *s)
{
	const struct carve_wl_status *p = carve_adm_status(ad->adm, s->preemptor);

	return p && p->key ? p->key : "";
}

struct row {
	uint32_t id;
	const struct carve_wl_status *s;
};

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	return strcmp(a->s->key, b->s->key);
}

/* Every workload with a status, sorted by key; *n rows (carve_free them). */
static struct row *sorted_rows(const struct carve_admission *ad, size_t *n)
{
	size_t cnt = carve_adm_workload_count(ad->adm), i, k = 0;
	struct row *v = carve_malloc((cnt ? cnt : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (i = 0; i < cnt; i++) {
		const struct carve_wl_status *s = carve_adm_status(ad->adm, (uint32_t)i);

		if (s && s->key) {
			v[k].id = (uint32_t)i;
			v[k++].s = s;
		}
	}
	qsort(v, k, sizeof(*v), row_cmp);
	*n = k;
	return v;
}

/* Sets o[key] = v, taking v; false (v released) on failure. */
static bool jset(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0;
}

static bool jstr(json_t *o, const char *key, const char *s)
{
	return jset(o, key, json_string(s ? s : ""));
}

/* One GPU a pod got: {"index", "uuid"?, "mig" | "replica" | "milli"}.  MIG
 * instances are named in the placer's layout (it may have repartitioned). */
static json_t *dev_json(const struct carve_admission *ad, const struct carve_cluster *c,
			const struct carve_dev *d)
{
	const struct carve_gpu *g = carve_cluster_gpu(c, d->gpu);
	const struct carve_mig_layout *l = carve_placer_mig_layout(ad->placer, d->gpu);
	json_t *o = json_object();
	bool ok = o && g && jset(o, "index", json_integer(g->index));

	if (ok && g->uuid && *g->uuid)
		ok = jstr(o, "uuid", g->uuid);
	if (ok && d->mig >= 0 && g->mig_model && l && d->mig < l->n) {
		const struct carve_mig_instance *in = &l->inst[d->mig];
		json_t *mg = json_object();

		ok = mg && jstr(mg, "profile", g->mig_model->profiles[in->profile].name) &&
		     jset(mg, "start", json_integer(in->start));
		if (ok)
			ok = jset(o, "mig", mg);
		else
			json_decref(mg);
	} else if (ok && d->replica >= 0) {
		ok = jset(o, "replica", json_integer(d->replica));
	} else if (ok && d->milli > 0 && d->milli < 1000) {
		ok = jset(o, "milli", json_integer(d->milli));
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* "pods": [{"node", "gpus": [...]}, ...], one per pod of a placed podSet. */
static json_t *pods_json(const struct carve_admission *ad, const struct carve_ps_result *p)
{
	const struct carve_cluster *c = ad->inv ? ad->inv->cluster : NULL;
	json_t *arr = json_array();
	size_t i;
	int d;

	for (i = 0; arr && c && i < p->npods; i++) {
		const struct carve_pod_place *pl = &p->pods[i];
		const struct carve_node *n = carve_cluster_node(c, pl->node);
		json_t *pod = json_object(), *gpus = json_array();
		bool ok = pod && gpus && n && jstr(pod, "node", n->name);

		for (d = 0; ok && d < pl->ndevs; d++)
			ok = json_array_append_new(gpus, dev_json(ad, c, &pl->devs[d])) == 0;
		if (ok)
			ok = jset(pod, "gpus", gpus);
		else
			json_decref(gpus);
		if (!ok || json_array_append_new(arr, pod)) {
			if (!ok)
				json_decref(pod);
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *podsets_json(const struct carve_admission *ad, const struct carve_wl_status *s)
{
	json_t *arr = json_array();
	size_t i, j;

	for (i = 0; arr && i < s->npodsets; i++) {
		const struct carve_ps_result *p = &s->podsets[i];
		json_t *ps = json_object(), *fl = json_object(), *use = json_object();
		bool ok = ps && fl && use;
		char q[64];

		for (j = 0; ok && j < p->n; j++) {
			ok = jstr(fl, p->resources[j], p->flavors[j]);
			if (ok && p->usage) {
				if (carve_res_kind(p->resources[j], NULL) == CARVE_RK_MEMORY)
					carve_qty_format_bytes(p->usage[j], q, sizeof(q));
				else
					carve_qty_format(p->usage[j], q, sizeof(q));
				ok = jstr(use, p->resources[j], q);
			}
		}
		ok = ok && jstr(ps, "name", p->name) && jset(ps, "count", json_integer(p->count));
		if (ok) {
			ok = jset(ps, "flavors", fl); /* takes fl */
			ok = jset(ps, "usage", use) && ok; /* takes use */
		} else {
			json_decref(fl);
			json_decref(use);
		}
		if (ok && ad->placer && p->npods)
			ok = jset(ps, "pods", pods_json(ad, p));
		if (!ok) {
			json_decref(ps);
			json_decref(arr);
			return NULL;
		}
		if (json_array_append_new(arr, ps)) { /* takes ps */
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *entry_json(const struct carve_admission *ad, const struct carve_wl_status *s,
			  enum decision d)
{
	json_t *e = json_object();
	bool ok;

	if (!e)
		return NULL;
	ok = jstr(e, "workload", s->key);
	switch (d) {
	case D_ADMITTED:
		ok = ok && jstr(e, "clusterQueue", s->cq) && jset(e, "podSets", podsets_json(ad, s)) &&
		     jset(e, "borrowing", json_boolean(s->borrowing));
		if (ok && s->message && *s->message)
			ok = jstr(e, "message", s->message);
		break;
	case D_PREEMPTED:
		ok = ok && jstr(e, "preemptor", preemptor_key(ad, s)) &&
		     jstr(e, "reason", carve_preempt_reason_name(s->preempt_reason));
		break;
	default:
		ok = ok && jstr(e, "reason", pending_reason(s)) && jstr(e, "message", s->message);
		break;
	}
	if (!ok) {
		json_decref(e);
		return NULL;
	}
	return e;
}

/* ["3g.40gb@0", ...]: a layout's instances as profile@start. */
static json_t *layout_json(const struct carve_mig_model *m, const struct carve_mig_layout *l)
{
	json_t *arr = json_array();
	char buf[64];
	unsigned i;

	for (i = 0; arr && i < l->n; i++) {
		snprintf(buf, sizeof(buf), "%s@%u", m->profiles[l->inst[i].profile].name,
			 (unsigned)l->inst[i].start);
		if (json_array_append_new(arr, json_string(buf))) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* "repartitions": [{"node", "gpu", "from", "to"}, ...], the placer's log in order. */
static json_t *repartitions_json(const struct carve_admission *ad)
{
	const struct carve_cluster *c = ad->inv->cluster;
	const struct carve_repartition *r;
	size_t n = carve_placer_repartitions(ad->placer, &r), i;
	json_t *arr = json_array();

	for (i = 0; arr && i < n; i++) {
		const struct carve_gpu *g = carve_cluster_gpu(c, r[i].gpu);
		json_t *o = json_object();
		bool ok = o && jstr(o, "node", carve_cluster_node(c, g->node)->name) &&
			  jset(o, "gpu", json_integer(g->index)) &&
			  jset(o, "from", layout_json(g->mig_model, &r[i].from)) &&
			  jset(o, "to", layout_json(g->mig_model, &r[i].to));

		if (!ok || json_array_append_new(arr, o)) {
			if (!ok)
				json_decref(o);
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *carve_admission_result_json(const struct carve_admission *ad)
{
	static const char *const lists[] = {"admitted", "preempted", "pending"};
	static const enum decision kinds[] = {D_ADMITTED, D_PREEMPTED, D_PENDING};
	json_t *root = json_object(), *arr[3];
	struct row *rows;
	size_t n = 0, i, k;

	rows = root ? sorted_rows(ad, &n) : NULL;
	if (!rows)
		goto fail;
	for (k = 0; k < 3; k++)
		if (!jset(root, lists[k], arr[k] = json_array()))
			goto fail;
	for (i = 0; i < n; i++) {
		enum decision d = decide(rows[i].s);

		for (k = 0; k < 3; k++)
			if (kinds[k] == d && json_array_append_new(arr[k], entry_json(ad, rows[i].s, d)))
				goto fail;
	}
	if (ad->mig_dynamic && ad->placer && !jset(root, "repartitions", repartitions_json(ad)))
		goto fail;
	carve_free(rows);
	return root;
fail:
	carve_free(rows);
	json_decref(root);
	return NULL;
}

/* ---- table ---- */

struct sbuf {
	char *s;
	size_t n, cap;
	bool nomem;
};

static void sb_put(struct sbuf *b, const char *s)
{
	size_t l = strlen(s);

	if (b->nomem)
		return;
	if (b->n + l + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		char *p;

		while (cap < b->n + l + 1)
			cap *= 2;
		p = carve_realloc(b->s, cap);
		if (!p) {
			b->nomem = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, l + 1);
	b->n += l;
}

/* Placed pods of a podSet: " @node-a(2),node-b", nodes in first-use order,
 * with the pod count when more than one. */
static void nodes_cell(struct sbuf *b, const struct carve_admission *ad,
		       const struct carve_ps_result *p)
{
	const struct carve_cluster *c = ad->inv ? ad->inv->cluster : NULL;
	size_t i, j, k;
	char num[32];

	if (!c || !p->npods)
		return;
	sb_put(b, " @");
	for (i = 0, k = 0; i < p->npods; i++) {
		size_t cnt = 0;

		for (j = 0; j < i && p->pods[j].node != p->pods[i].node; j++)
			;
		if (j < i)
			continue; /* listed already */
		for (j = i; j < p->npods; j++)
			cnt += p->pods[j].node == p->pods[i].node;
		if (k++)
			sb_put(b, ",");
		sb_put(b, carve_cluster_node(c, p->pods[i].node)->name);
		if (cnt > 1) {
			snprintf(num, sizeof(num), "(%zu)", cnt);
			sb_put(b, num);
		}
	}
}

/* "cpu=default,nvidia.com/gpu=h100"; several podSets: "driver:cpu=a;worker:cpu=b";
 * placed pods follow each podSet (nodes_cell). */
static void flavors_cell(struct sbuf *b, const struct carve_admission *ad,
			 const struct carve_wl_status *s)
{
	size_t i, j;

	for (i = 0; i < s->npodsets; i++) {
		const struct carve_ps_result *p = &s->podsets[i];

		if (i)
			sb_put(b, ";");
		if (s->npodsets > 1) {
			sb_put(b, p->name);
			sb_put(b, ":");
		}
		for (j = 0; j < p->n; j++) {
			if (j)
				sb_put(b, ",");
			sb_put(b, p->resources[j]);
			sb_put(b, "=");
			sb_put(b, p->flavors[j]);
		}
		nodes_cell(b, ad, p);
	}
	if (!b->n)
		sb_put(b, "-");
}

static void reason_cell(struct sbuf *b, const struct carve_admission *ad,
			const struct carve_wl_status *s, enum decision d)
{
	switch (d) {
	case D_PREEMPTED:
		sb_put(b, carve_preempt_reason_name(s->preempt_reason));
		sb_put(b, " by ");
		sb_put(b, preemptor_key(ad, s));
		break;
	case D_PENDING:
		sb_put(b, pending_reason(s));
		if (s->message && *s->message) {
			sb_put(b, ": ");
			sb_put(b, s->message);
		}
		break;
	case D_ADMITTED:
		sb_put(b, s->borrowing ? "borrowing" : "-");
		break;
	default:
		sb_put(b, "-");
		break;
	}
}

struct cells {
	const char *key, *cq, *decision;
	struct sbuf flavors, reason;
};

/* A column's width: the widest cell as printed (escaped). */
static int width(size_t a, const char *s)
{
	size_t l = carve_esc_len(s);

	return (int)(l > a ? l : a);
}

static void print_layout(const struct carve_mig_model *m, const struct carve_mig_layout *l,
			 FILE *out)
{
	unsigned i;

	if (!l->n)
		fputs("-", out);
	for (i = 0; i < l->n; i++)
		fprintf(out, "%s%s@%u", i ? "," : "", m->profiles[l->inst[i].profile].name,
			(unsigned)l->inst[i].start);
}

/* "repartition NODE GPU I: FROM -> TO", one line per log entry. */
static void print_repartitions(const struct carve_admission *ad, FILE *out)
{
	const struct carve_cluster *c = ad->inv->cluster;
	const struct carve_repartition *r;
	size_t n = carve_placer_repartitions(ad->placer, &r), i;

	for (i = 0; i < n; i++) {
		const struct carve_gpu *g = carve_cluster_gpu(c, r[i].gpu);

		fputs("repartition ", out);
		carve_fputs_esc(carve_cluster_node(c, g->node)->name, out);
		fprintf(out, " GPU %u: ", (unsigned)g->index);
		print_layout(g->mig_model, &r[i].from, out);
		fputs(" -> ", out);
		print_layout(g->mig_model, &r[i].to, out);
		fputs("\n", out);
	}
}

int carve_admission_print_table(const struct carve_admission *ad, FILE *out)
{
	struct row *rows;
	struct cells *c = NULL;
	size_t n = 0, i, k = 0;
	int wk = 8, wq = 5, wd = 8, wf = 7, rc = 0;

	rows = sorted_rows(ad, &n);
	if (!rows)
		return CARVE_ENOMEM;
	c = carve_calloc(n ? n : 1, sizeof(*c));
	if (!c) {
		carve_free(rows);
		return CARVE_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const struct carve_wl_status *s = rows[i].s;
		enum decision d = decide(s);

		if (d == D_NONE)
			continue;
		c[k].key = s->key;
		c[k].cq = s->cq ? s->cq : "-";
		c[k].decision = decision_names[d];
		flavors_cell(&c[k].flavors, ad, s);
		reason_cell(&c[k].reason, ad, s, d);
		if (c[k].flavors.nomem || c[k].reason.nomem)
			rc = CARVE_ENOMEM;
		k++;
	}
	for (i = 0; i < k && !rc; i++) {
		wk = width((size_t)wk, c[i].key);
		wq = width((size_t)wq, c[i].cq);
		wd = width((size_t)wd, c[i].decision);
		wf = width((size_t)wf, c[i].flavors.s);
	}
	if (!rc) {
		fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", wk, "WORKLOAD", wq, "QUEUE", wd,
			"DECISION", wf, "FLAVORS", "REASON");
		for (i = 0; i < k; i++) {
			carve_fputs_esc_pad(c[i].key, wk, out);
			fputs("  ", out);
			carve_fputs_esc_pad(c[i].cq, wq, out);
			fputs("  ", out);
			carve_fputs_esc_pad(c[i].decision, wd, out);
			fputs("  ", out);
			carve_fputs_esc_pad(c[i].flavors.s, wf, out);
			fputs("  ", out);
			carve_fputs_esc(c[i].reason.s, out);
			fputc('\n', out);
		}
		if (ad->mig_dynamic && ad->placer)
			print_repartitions(ad, out);
	}
	for (i = 0; i < k; i++) {
		carve_free(c[i].flavors.s);
		carve_free(c[i].reason.s);
	}
	carve_free(c);
	carve_free(rows);
	return rc;
}

