/*
 * explain.c - `carve validate --explain`: the effective inventory (per pool
 * its nodes, GPUs and schedulable units, then totals) and the quota model
 * (per ClusterQueue its nominal quota per flavor and what it may borrow).
 *
 * Pure reporting: reads the inventory and the manifests, writes text.
 * Aggregation uses small fixed tables (struct tally); a pool with more
 * distinct names than fit is summarised as "(and more)".  Sums of quota
 * saturate at the int64 maximum, printed as "unlimited".  Names from the
 * input (pools, models, resources, queues, cohorts, flavors, file names)
 * are printed escaped (carve_fputs_esc).
 */
#include <stdio.h>
#include <string.h>

#include "carve/diag.h"
#include "carve/inventory.h"
#include "carve/quantity.h"
#include "carve/resource.h"

#define TALLY_MAX 48

struct tally {
	size_t n;
	bool overflow;
	struct {
		const char *name;
		const char *sub;
		int64_t count;
	} v[TALLY_MAX];
};

static void tally_add(struct tally *t, const char *name, const char *sub, int64_t count)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].name, name) && !strcmp(t->v[i].sub, sub)) {
			t->v[i].count += count;
			return;
		}
	if (t->n == TALLY_MAX) {
		t->overflow = true;
		return;
	}
	t->v[t->n].name = name;
	t->v[t->n].sub = sub;
	t->v[t->n++].count = count;
}

static const char *res_kind(const struct carve_inv_resource *r)
{
	if (r->mig_timesliced)
		return "time-sliced MIG instances";
	switch (r->sharing) {
	case CARVE_SHARE_MIG:
		return "MIG instances";
	case CARVE_SHARE_TIMESLICE:
		return "time-slice replicas, no memory isolation";
	case CARVE_SHARE_FRACTION:
		return "whole GPUs, shareable by fraction";
	default:
		return "whole GPUs";
	}
}

/* "  GPUs: N x MODEL, SHARING" and "  schedulable: N NAME (KIND)", names
 * from the input escaped. */
static void print_gpus(FILE *out, long long n, const char *name, const char *sub)
{
	fprintf(out, "  GPUs: %lld x ", n);
	carve_fputs_esc(name, out);
	fputs(", ", out);
	carve_fputs_esc(sub, out);
	fputc('\n', out);
}

static void print_units(FILE *out, long long n, const char *name, const char *sub)
{
	fprintf(out, "  schedulable: %lld ", n);
	carve_fputs_esc(name, out);
	fputs(" (", out);
	carve_fputs_esc(sub, out);
	fputs(")\n", out);
}

static void explain_pool(const struct carve_inventory *inv, const struct carve_inv_pool *p,
			 FILE *out, struct tally *tot_gpus, struct tally *tot_units)
{
	struct tally gpus = {0}, units = {0};
	uint32_t id, g, k;
	size_t i;

	for (id = p->node_first; id < p->node_first + p->nnodes; id++) {
		const struct carve_node *n = carve_cluster_node(inv->cluster, id);

		for (g = 0; g < n->ngpus; g++) {
			const struct carve_gpu *gpu = carve_cluster_gpu(inv->cluster, n->gpu_first + g);

			tally_add(&gpus, gpu->model ? gpu->model : "unknown",
				  carve_sharing_name(gpu->sharing), 1);
		}
		for (k = 0; k < inv->node_nres[id]; k++) {
			const struct carve_inv_resource *r = &inv->res[inv->node_res_first[id] + k];

			tally_add(&units, r->name, res_kind(r), r->count);
		}
	}
	fputs("pool ", out);
	carve_fputs_esc(p->name, out);
	fputs(" (", out);
	carve_fputs_esc(p->origin, out);
	if (p->pos.file && p->pos.line) {
		fputs(" at ", out);
		carve_fputs_esc(p->pos.file, out);
		fprintf(out, ":%u", (unsigned)p->pos.line);
	}
	fprintf(out, "): %u node%s\n", (unsigned)p->nnodes, p->nnodes == 1 ? "" : "s");
	for (i = 0; i < gpus.n; i++) {
		print_gpus(out, (long long)gpus.v[i].count, gpus.v[i].name, gpus.v[i].sub);
		tally_add(tot_gpus, gpus.v[i].name, gpus.v[i].sub, gpus.v[i].count);
	}
	if (!gpus.n)
		fprintf(out, "  GPUs: none\n");
	for (i = 0; i < units.n; i++) {
		print_units(out, (long long)units.v[i].count, units.v[i].name, units.v[i].sub);
		tally_add(tot_units, units.v[i].name, units.v[i].sub, units.v[i].count);
	}
	if (gpus.overflow || units.overflow)
		fprintf(out, "  (and more)\n");
}

/* ---- quota ---- */

static const struct carve_mf_quota *find_quota(const struct carve_mf_rgroup *g, size_t ng,
					       const char *flavor, const char *res)
{
	size_t i, j, k;

	for (i = 0; i < ng; i++)
		for (j = 0; j < g[i].nflavors; j++) {
			if (strcmp(g[i].flavors[j].flavor, flavor))
				continue;
			for (k = 0; k < g[i].flavors[j].n; k++)
				if (!strcmp(g[i].flavors[j].v[k].resource, res))
					return &g[i].flavors[j].v[k];
		}
	return NULL;
}

/* Root of a cohort name (follows Cohort parents; stops on cycles). */
static const char *cohort_root(const struct carve_manifests *m, const char *name)
{
	size_t hops = 0;
	const struct carve_mf_cohort *c;

	while (name && (c = carve_mf_find_cohort(m, name)) && c->parent && hops++ < m->ncohorts)
		name = c->parent;
	return name;
}

static int64_t lendable(const struct carve_mf_quota *q)
{
	return q->has_lending_limit ? q->lending_limit : q->nominal;
}

/*
 * What the rest of the cohort tree can lend cq for (flavor, res): other
 * ClusterQueues' lendable quota plus the Cohort objects' own quota
 * (saturating).  Usage is ignored: this is the most it could ever borrow.
 */
static int64_t cohort_lendable(const struct carve_manifests *m, const struct carve_mf_cq *cq,
			       const char *flavor, const char *res)
{
	const char *root = cohort_root(m, cq->cohort);
	const struct carve_mf_quota *q;
	int64_t sum = 0;
	size_t i;

	for (i = 0; i < m->ncqs; i++) {
		const struct carve_mf_cq *o = &m->cqs[i];

		if (o == cq || !o->cohort || strcmp(cohort_root(m, o->cohort), root))
			continue;
		if ((q = find_quota(o->groups, o->ngroups, flavor, res)))
			sum = carve_qty_sat_add(sum, lendable(q));
	}
	for (i = 0; i < m->ncohorts; i++) {
		const struct carve_mf_cohort *c = &m->cohorts[i];

		if (strcmp(cohort_root(m, c->meta.name), root))
			continue;
		if ((q = find_quota(c->groups, c->ngroups, flavor, res)))
			sum = carve_qty_sat_add(sum, lendable(q));
	}
	return sum;
}

static void fmt_res(const char *res, int64_t milli, char *buf, size_t size)
{
	if (milli == CARVE_QTY_MAX)
		snprintf(buf, size, "unlimited"); /* a saturated sum */
	else if (carve_res_kind(res, NULL) == CARVE_RK_MEMORY)
		carve_qty_format_bytes(milli, buf, size);
	else
		carve_qty_format(milli, buf, size);
}

static void explain_cq(const struct carve_manifests *m, const struct carve_mf_cq *cq, FILE *out)
{
	size_t g, f, r;
	char a[32], b[32], c[32];

	fputs("ClusterQueue ", out);
	carve_fputs_esc(cq->meta.name, out);
	if (cq->cohort) {
		fputs(" (cohort ", out);
		carve_fputs_esc(cq->cohort, out);
		fputc(')', out);
	} else
		fprintf(out, " (no cohort: cannot borrow or lend)");
	fputc('\n', out);
	for (g = 0; g < cq->ngroups; g++)
		for (f = 0; f < cq->groups[g].nflavors; f++) {
			const struct carve_mf_flavorquotas *fq = &cq->groups[g].flavors[f];

			fputs("  flavor ", out);
			carve_fputs_esc(fq->flavor, out);
			fputs(":\n", out);
			for (r = 0; r < fq->n; r++) {
				const struct carve_mf_quota *q = &fq->v[r];
				int64_t pool = cq->cohort ? cohort_lendable(m, cq, fq->flavor,
									    q->resource) : 0;
				int64_t may = pool;

				if (q->has_borrowing_limit && q->borrowing_limit < may)
					may = q->borrowing_limit;
				fmt_res(q->resource, q->nominal, a, sizeof(a));
				fmt_res(q->resource, may, b, sizeof(b));
				fputs("    ", out);
				carve_fputs_esc_pad(q->resource, 24, out);
				fprintf(out, " nominal %-8s may borrow %-8s%s", a, b,
					strlen(b) >= 8 ? " " : "");
				if (cq->cohort && q->has_borrowing_limit) {
					fmt_res(q->resource, q->borrowing_limit, c, sizeof(c));
					fprintf(out, "(borrowingLimit %s)", c);
				} else if (cq->cohort && may) {
					fprintf(out, "(what the cohort can lend)");
				} else if (cq->cohort) {
					fputs("(no one in the cohort lends ", out);
					carve_fputs_esc(fq->flavor, out);
					fputc('/', out);
					carve_fputs_esc(q->resource, out);
					fputc(')', out);
				}
				if (q->has_lending_limit) {
					fmt_res(q->resource, q->lending_limit, c, sizeof(c));
					fprintf(out, " lends at most %s", c);
				}
				fputc('\n', out);
			}
		}
}

void carve_inventory_explain(const struct carve_inventory *inv,
			     const struct carve_manifests *m, FILE *out)
{
	struct tally tot_gpus = {0}, tot_units = {0};
	size_t i;

	fprintf(out, "Inventory: %zu nodes, %zu GPUs in %zu pool%s\n\n",
		carve_cluster_node_count(inv->cluster), carve_cluster_gpu_count(inv->cluster),
		inv->npools, inv->npools == 1 ? "" : "s");
	for (i = 0; i < inv->npools; i++)
		explain_pool(inv, &inv->pools[i], out, &tot_gpus, &tot_units);
	fprintf(out, "\nTotals\n");
	for (i = 0; i < tot_gpus.n; i++)
		print_gpus(out, (long long)tot_gpus.v[i].count, tot_gpus.v[i].name, tot_gpus.v[i].sub);
	for (i = 0; i < tot_units.n; i++)
		print_units(out, (long long)tot_units.v[i].count, tot_units.v[i].name, tot_units.v[i].sub);
	if (!m->ncqs)
		return;
	fprintf(out, "\nQuota\n");
	for (i = 0; i < m->ncqs; i++)
		explain_cq(m, &m->cqs[i], out);
}
