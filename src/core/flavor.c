/*
 * flavor.c - flavor assignment: for each podSet and each resource group of
 * its ClusterQueue, the flavor its resources get, tried in the queue's
 * order with Kueue's flavorFungibility rules.
 *
 * Per flavor the request is classified against the current quota tree:
 * FIT (fits what is available), or, when it fits what the queue could ever
 * get and may preempt (may_preempt: within nominal, reclaimable inside the
 * hierarchy, or borrowWithinCohort), one of RECLAIM (victims in other
 * queues), PREEMPT (victims only in its own queue) or NOCAND (no victim at
 * all); otherwise NOFIT.  Its borrowing level is the height of the lowest
 * cohort subtree holding it (carve__qt_borrow_level), for RECLAIM and PREEMPT
 * once the victims are gone.  The search
 * stops at a flavor that fits without borrowing, at one that fits by
 * borrowing when whenCanBorrow is MayStopSearch, or at one that needs
 * preemption (with victims) when whenCanPreempt is MayStopSearch; else the
 * best flavor seen wins: better mode first (FIT > RECLAIM > PREEMPT >
 * NOCAND), then less borrowing, then the earlier flavor; with preference
 * PreemptionOverBorrowing borrowing is compared first.  Podsets are
 * assigned in order and see the usage of earlier podsets of the same
 * workload.  The tree is left as found (the oracle removes victims only
 * for the time it measures).  Requests are exact: carve_adm_add_workload
 * refused every workload whose count x request, summed over its podSets
 * per resource, does not fit in int64 milli-units (the products below
 * saturate all the same, so no input is undefined behaviour).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit_int.h"
#include "carve/match.h"
#include "carve/quantity.h"

void carve__assignment_free(struct assignment *as)
{
	carve_free(as->use); /* the block holding all three */
	memset(as, 0, sizeof(*as));
}

int carve__assignment_alloc(struct assignment *as, const struct wl *w)
{
	size_t np = (size_t)w->npodsets, nuse = 1, p;
	int r;
	char *m;

	memset(as, 0, sizeof(*as));
	for (p = 0; p < np; p++)
		nuse += (size_t)w->ps[p].nreqs; /* distinct frs: at most one per request */
	m = carve_malloc(nuse * sizeof(struct frq) + np * CARVE_RES_MAX * sizeof(int) +
			 np * sizeof(int32_t));
	if (!m)
		return CARVE_ENOMEM;
	as->use = (struct frq *)(void *)m;
	as->flavor = (int *)(void *)(m + nuse * sizeof(struct frq));
	as->count = (int32_t *)(void *)(as->flavor + np * CARVE_RES_MAX);
	for (p = 0; p < np; p++) {
		as->count[p] = 0;
		for (r = 0; r < w->ps[p].nreqs; r++)
			as->flavor[p * CARVE_RES_MAX + (size_t)r] = -1;
	}
	return 0;
}

/* ---- node selection against a flavor's labels ---- */

/*
 * Kueue's flavor check (match.h): the podSet's nodeSelector and required
 * affinity against the flavor's nodeLabels on the flavor's own keys only
 * (CARVE_MATCH_OWN_KEYS), then the flavor's NoSchedule/NoExecute taints
 * against the podSet's and the flavor's tolerations.
 */
bool carve__flavor_matches(const struct carve_adm *a, const struct podset *ps, int flavor,
		    char *why, size_t whysize)
{
	const struct flavor *f = &a->cat.flavors[flavor];
	struct carve_labels fl = carve_labels_of(f->spec.labels, f->spec.nlabels);
	size_t i, bad = 0;

	if (!carve_match_selector(&fl, ps->spec.selector, ps->spec.nselector,
				  CARVE_MATCH_OWN_KEYS, &bad)) {
		snprintf(why, whysize, "flavor %s doesn't match node selector %s=%s",
			 f->spec.name, ps->spec.selector[bad].key, ps->spec.selector[bad].value);
		return false;
	}
	if (ps->spec.nterms &&
	    !carve_match_terms(&fl, ps->spec.terms, ps->spec.nterms, CARVE_MATCH_OWN_KEYS)) {
		snprintf(why, whysize, "flavor %s doesn't match node affinity", f->spec.name);
		return false;
	}
	for (i = 0; i < f->spec.ntaints; i++) {
		const struct carve_taint_spec *tt = &f->spec.taints[i];

		if (!carve_taint_blocks(tt) ||
		    carve_tolerations_tolerate(ps->spec.tolerations, ps->spec.ntolerations, tt) ||
		    carve_tolerations_tolerate(f->spec.tolerations, f->spec.ntolerations, tt))
			continue;
		snprintf(why, whysize, "untolerated taint %s in flavor %s", tt->key, f->spec.name);
		return false;
	}
	return true;
}

/* A quantity of resource res as Kueue prints it in messages: bytes in
 * binary units for memory ("48Gi"), else the quantity ("51", "500m"). */
static const char *qty_text(const char *res, int64_t milli, char *buf, size_t size)
{
	if (carve_res_kind(res, NULL) == CARVE_RK_MEMORY)
		carve_qty_format_bytes(milli, buf, size);
	else
		carve_qty_format(milli, buf, size);
	return buf;
}

/* ---- quota classification ---- */

struct cand {
	enum gmode mode;
	int level;
	int flavor_idx; /* position in the group's flavor list */
};

static bool preferred(const struct cand *x, const struct cand *y, bool preempt_over_borrow)
{
	/* A flavor needing preemption with nobody to preempt ranks below any
	 * flavor that can work, whatever the preference. */
	if ((x->mode == GM_NOCAND) != (y->mode == GM_NOCAND))
		return y->mode == GM_NOCAND;
	if (preempt_over_borrow) {
		if (x->level != y->level)
			return x->level < y->level;
		return x->mode > y->mode;
	}
	if (x->mode != y->mode)
		return x->mode > y->mode;
	return x->level < y->level;
}

static void use_add(struct frq *use, size_t *n, int fr, int64_t q)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (use[i].fr == fr) {
			use[i].q = carve__sat_add(use[i].q, q);
			return;
		}
	use[*n].fr = fr;
	use[(*n)++].q = q;
}

static int64_t use_get(const struct frq *use, size_t n, int fr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (use[i].fr == fr)
			return use[i].q;
	return 0;
}

/*
 * Which victims preemption would take for the frs in `need`, classified:
 * RECLAIM when any is in another queue, PREEMPT when all are in the
 * workload's own, NOCAND when there is none.
 */
static enum gmode oracle(struct carve_adm *a, struct wl *w, const struct frq *use, size_t nuse,
			 const int *need, int nneed, int *level_after)
{
	struct target *t = a->cyc.scratch_targets; /* room for every workload */
	enum gmode m = GM_NOCAND;
	int n, i, node = a->cat.cqs[w->cq].node;
	size_t k;

	n = carve__preempt_targets(a, w, use, nuse, need, nneed, t);
	/* The borrowing level once the victims are gone (Kueue's oracle
	 * returns it with the preemption possibility): a flavor that needs
	 * preemption is compared by where it would then take its quota. */
	*level_after = 0;
	if (n > 0) {
		for (i = 0; i < n; i++)
			carve__wl_charge(a, &a->cat.wls[t[i].wl], -1);
		for (k = 0; k < nuse; k++) {
			int l = carve__qt_borrow_level(a, node, use[k].fr, use[k].q);

			if (l > *level_after)
				*level_after = l;
		}
		for (i = 0; i < n; i++)
			carve__wl_charge(a, &a->cat.wls[t[i].wl], +1);
	}
	if (a->cyc.nocache < OCACHE_SLOTS && nneed <= CARVE_RES_MAX && nuse <= CARVE_RES_MAX) {
		struct ocache *c = &a->cyc.ocache[a->cyc.nocache];
		size_t want = n > 0 ? (size_t)n : 0;

		if (want > c->cap) {
			struct target *v = carve_realloc(c->targets, want * sizeof(*v));

			if (v) {
				c->targets = v;
				c->cap = want;
			}
		}
		if (want <= c->cap) { /* kept for evaluate() (admit.c) */
			memcpy(c->need, need, (size_t)nneed * sizeof(*need));
			c->nneed = nneed;
			memcpy(c->use, use, nuse * sizeof(*use));
			c->nuse = nuse;
			if (want)
				memcpy(c->targets, t, want * sizeof(*t));
			c->ntargets = want;
			a->cyc.nocache++;
		}
	}
	for (i = 0; i < n; i++) {
		if (a->cat.wls[t[i].wl].cq != w->cq) {
			m = GM_RECLAIM;
			break;
		}
		m = GM_PREEMPT;
	}
	return m;
}

static const char *res_name(const struct carve_adm *a, int id)
{
	const char *n = carve_resreg_name(a->cat.res, id);

	return n ? n : "?";
}

/*
 * Whether a request of val of fr that does not fit what is available may
 * look for victims at all (Kueue's fitsResourceQuota): when it is within
 * the queue's nominal quota; when a subtree below the root would hold it
 * (preemption may reclaim inside the hierarchy); or when the queue may
 * preempt while borrowing (borrowWithinCohort, or fair sharing with
 * reclaimWithinCohort).  Otherwise the flavor does not fit.
 */
static bool may_preempt(const struct carve_adm *a, const struct cq *q, int node, int fr,
			int64_t val)
{
	int sub;

	if (val <= a->qt.nodes[node].nominal[fr])
		return true;
	if (q->spec.bwc != CARVE_BWC_NEVER ||
	    (a->sched.fair_sharing && q->spec.reclaim != CARVE_RECLAIM_NEVER))
		return true;
	sub = carve__qt_fit_subtree(a, node, fr, val);
	return a->qt.nodes[sub].parent >= 0;
}

/*
 * Tries the flavors of group g for podset p (count pods).  On success sets
 * flavor ids in out and returns the chosen candidate; mode GM_NOFIT when no
 * flavor can ever hold it (why says so).
 */
static struct cand assign_group(struct carve_adm *a, struct wl *w, int p, int32_t count, int g,
				const bool *skip, struct assignment *out,
				struct assign_result *res)
{
	const struct cq *q = &a->cat.cqs[w->cq];
	const struct cq_group *cg = &q->groups[g];
	const struct podset *ps = &w->ps[p];
	int node = q->node, f, r;
	struct cand best = {GM_NOFIT, 0, -1};
	char why[256] = "", q1[48], q2[48];
	int best_need[CARVE_RES_MAX], best_nneed = 0, k2, level_after;

	for (f = 0; f < cg->nflv; f++) {
		int fl = cg->flv[f];
		struct cand c = {GM_FIT, 0, f};
		struct frq trial[CARVE_RES_MAX * 4];
		size_t ntrial = 0, k;
		int need[CARVE_RES_MAX], nneed = 0;
		int level_fit = 0, level_need = 0; /* of the frs that fit, that need preemption */

		if (fl < 0 || (skip && skip[fl]))
			continue;
		if (!carve__flavor_matches(a, ps, fl, why, sizeof(why)))
			continue;
		/* The workload's whole usage if this flavor were chosen. */
		for (k = 0; k < out->nuse && ntrial < CARVE_RES_MAX * 4; k++)
			trial[ntrial++] = out->use[k];
		for (r = 0; r < ps->nreqs; r++) {
			int fr, level;
			int64_t val, avail, pot;

			if (q->group_of[ps->res[r]] != g)
				continue;
			fr = carve__fr_id(a, fl, ps->res[r]);
			val = carve__sat_add(use_get(out->use, out->nuse, fr),
				      carve_qty_sat_mul(count, ps->milli[r]));
			if (fr < 0) {
				c.mode = GM_NOFIT;
				snprintf(why, sizeof(why), "insufficient quota for %s in flavor %s",
					 res_name(a, ps->res[r]), a->cat.flavors[fl].spec.name);
				break;
			}
			if (ntrial < CARVE_RES_MAX * 4)
				use_add(trial, &ntrial, fr, carve_qty_sat_mul(count, ps->milli[r]));
			avail = carve__qt_available(a, node, fr);
			pot = carve__qt_potential(a, node, fr);
			level = carve__qt_borrow_level(a, node, fr, val);
			if (val <= avail) {
				if (level > level_fit)
					level_fit = level;
			} else if (val <= pot && !may_preempt(a, q, node, fr, val)) {
				/* Kueue looks for victims only when the request fits
				 * the queue's nominal quota, when a subtree below the
				 * root could hold it, or when borrowWithinCohort (or
				 * fair sharing) lets it preempt while borrowing. */
				c.mode = GM_NOFIT;
				snprintf(why, sizeof(why), "insufficient unused quota for %s in flavor "
					 "%s, request above the nominal quota (%s > %s) and "
					 "borrowWithinCohort does not allow preemption while borrowing",
					 res_name(a, ps->res[r]), a->cat.flavors[fl].spec.name,
					 qty_text(res_name(a, ps->res[r]), val, q1, sizeof(q1)),
					 qty_text(res_name(a, ps->res[r]),
						  a->qt.nodes[node].nominal[fr], q2, sizeof(q2)));
				break;
			} else if (val <= pot) {
				if (c.mode > GM_PREEMPT)
					c.mode = GM_PREEMPT;
				need[nneed++] = fr;
				if (level > level_need)
					level_need = level;
			} else {
				c.mode = GM_NOFIT;
				snprintf(why, sizeof(why), "insufficient quota for %s in flavor %s, "
					 "request > maximum capacity (%s > %s)",
					 res_name(a, ps->res[r]), a->cat.flavors[fl].spec.name,
					 qty_text(res_name(a, ps->res[r]), val, q1, sizeof(q1)),
					 qty_text(res_name(a, ps->res[r]), pot, q2, sizeof(q2)));
				break;
			}
		}
		if (c.mode == GM_NOFIT)
			continue;
		if (c.mode == GM_PREEMPT) {
			/* The oracle looks at the resources needing preemption
			 * only, as if they were the whole request. */
			size_t j = 0;

			for (k = 0; k < ntrial; k++) {
				int n2;

				for (n2 = 0; n2 < nneed && need[n2] != trial[k].fr; n2++)
					;
				if (n2 < nneed)
					trial[j++] = trial[k];
			}
			c.mode = oracle(a, w, trial, j, need, nneed, &level_after);
			/* with victims: where the request then takes its quota;
			 * without: where it would now */
			if (c.mode != GM_NOCAND)
				level_need = level_after;
		}
		c.level = level_fit > level_need ? level_fit : level_need;
		if (best.flavor_idx < 0 || preferred(&c, &best, q->spec.preempt_over_borrow)) {
			best = c;
			best_nneed = nneed;
			memcpy(best_need, need, (size_t)nneed * sizeof(*need));
		}
		/* Stop here? */
		if (c.mode == GM_FIT && c.level == 0)
			break;
		if (c.mode == GM_FIT && q->spec.when_can_borrow == CARVE_FUNG_MAY_STOP)
			break;
		if ((c.mode == GM_PREEMPT || c.mode == GM_RECLAIM) &&
		    q->spec.when_can_preempt == CARVE_FUNG_MAY_STOP &&
		    (c.level == 0 || q->spec.when_can_borrow == CARVE_FUNG_MAY_STOP))
			break;
	}
	if (best.flavor_idx < 0) {
		if (!why[0])
			snprintf(why, sizeof(why), "no flavor of ClusterQueue %s matches podSet %s",
				 q->spec.name, ps->spec.name);
		snprintf(res->why, sizeof(res->why), "couldn't assign flavors to podSet %s: %s",
			 ps->spec.name, why);
		return best;
	}
	for (k2 = 0; k2 < best_nneed && res->nneed < 128; k2++)
		res->need[res->nneed++] = best_need[k2];
	for (r = 0; r < ps->nreqs; r++) {
		int fl = cg->flv[best.flavor_idx], fr;

		if (q->group_of[ps->res[r]] != g)
			continue;
		fr = carve__fr_id(a, fl, ps->res[r]);
		out->flavor[p * CARVE_RES_MAX + r] = fl;
		use_add(out->use, &out->nuse, fr, carve_qty_sat_mul(count, ps->milli[r]));
	}
	if (best.mode != GM_FIT && !res->why[0]) {
		struct flavor *bf = &a->cat.flavors[cg->flv[best.flavor_idx]];

		if (!bf->preempt_why) { /* made once per flavor, kept in the arena */
			snprintf(res->why, sizeof(res->why), "insufficient unused quota in flavor "
				 "%s; preemption needed", bf->spec.name);
			bf->preempt_why = carve_arena_strdup(&a->arena, res->why);
		} else {
			memcpy(res->why, bf->preempt_why, strlen(bf->preempt_why) + 1);
		}
	}
	return best;
}

int carve__assign_flavors(struct carve_adm *a, struct wl *w, const int32_t *counts,
		   struct assignment *out, struct assign_result *res)
{
	return carve__assign_flavors_skip(a, w, counts, NULL, out, res);
}

int carve__assign_flavors_skip(struct carve_adm *a, struct wl *w, const int32_t *counts,
			const bool *skip, struct assignment *out, struct assign_result *res)
{
	const struct cq *q = &a->cat.cqs[w->cq];
	int p, r, g;

	a->cyc.nocache = 0; /* oracle results are this assignment's only */
	res->mode = GM_FIT;
	res->borrow_level = 0;
	res->borrowing = false;
	res->why[0] = '\0';
	res->nneed = 0;
	if (carve__assignment_alloc(out, w))
		return CARVE_ENOMEM;
	for (p = 0; p < w->npodsets; p++) {
		const struct podset *ps = &w->ps[p];
		int32_t count = counts ? counts[p] : ps->spec.count;
		bool done[64] = {false};

		out->count[p] = count;
		for (r = 0; r < ps->nreqs; r++) {
			struct cand c;

			g = q->group_of[ps->res[r]];
			if (g < 0) {
				res->mode = GM_NOFIT;
				snprintf(res->why, sizeof(res->why), "resource %s unavailable in "
					 "ClusterQueue %s", res_name(a, ps->res[r]), q->spec.name);
				return 0;
			}
			if (g < 64 && done[g])
				continue;
			if (g < 64)
				done[g] = true;
			c = assign_group(a, w, p, count, g, skip, out, res);
			if (c.mode == GM_NOFIT) {
				res->mode = GM_NOFIT;
				return 0;
			}
			if (c.mode < res->mode)
				res->mode = c.mode;
			if (c.level > res->borrow_level)
				res->borrow_level = c.level;
		}
	}
	res->borrowing = res->borrow_level > 0;
	if (res->mode == GM_FIT)
		res->why[0] = '\0';
	return 0;
}
