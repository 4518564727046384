/*
 * admit_cycle.c - one Kueue-style scheduling cycle of the admission
 * engine, as named phases (carve_adm_cycle at the end of the file):
 *
 *   1. snapshot   cycle_begin: the cycle's time, set-aside workloads back
 *                 in their heaps when something changed, buffers;
 *   2. nominate   every ClusterQueue's head gets its flavor assignment and
 *                 victims (or a partial admission), all against the state
 *                 at the start of the cycle;
 *   3. order      lower borrowing level first, then queue order (fair
 *                 sharing: Kueue's tournament down the cohort tree,
 *                 rerun as usage moves);
 *   4. admit or preempt, head by head: one still fitting (its victims and
 *                 every victim marked earlier removed) is admitted (placed
 *                 as one gang with a placer) or has its victims marked, and
 *                 its usage counts for the heads after it; one that no
 *                 longer fits is SkippedInCycle;
 *   5. requeue    what waiting heads held is given back; the pending
 *                 workloads that were not heads are "waiting behind the
 *                 head".
 * Then carve_adm_evict_marked (the driver evicts the victims) and
 * carve_adm_run (cycles until nothing changes).
 *
 * Invariants: outside a cycle the quota tree holds exactly the usage of
 * admitted (and marked) workloads (carve_adm_check); during one, heads
 * waiting for preemption also hold what they reserve (entry.held), given
 * back in phase 5 or on an early exit.  A marked workload keeps its quota
 * until evicted.  Nothing per cycle is proportional to the number of
 * workloads (docs/internals/ADMISSION-PERF.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit_int.h"

/* One head of the cycle: its assignment, victims and what it holds.  The
 * buffers are carve_malloc'd and freed at the end of the cycle. */
struct entry {
	uint32_t wl;
	struct assignment as;
	struct assign_result res;
	struct target *targets;
	int ntargets;
	struct frq *held;   /* usage reserved for the rest of the cycle */
	size_t nheld;
};

static int entry_cmp(const struct entry *x, const struct entry *y, const struct carve_adm *a)
{
	int bx = x->res.borrow_level, by = y->res.borrow_level;

	if (bx != by)
		return bx < by ? -1 : 1;
	return carve__wl_queue_cmp(&a->cat.wls[x->wl], &a->cat.wls[y->wl]);
}

static const struct carve_adm *eord;

static int entry_qcmp(const void *x, const void *y)
{
	return entry_cmp(*(struct entry *const *)x, *(struct entry *const *)y, eord);
}

/* entry_cmp is a total order (workload keys are unique), so any sort gives
 * the one order; the entries stay in place, e points to them in order. */
static void sort_entries(struct entry **e, size_t n, const struct carve_adm *a)
{
	eord = a;
	qsort(e, n, sizeof(*e), entry_qcmp);
	eord = NULL;
}

/*
 * Fair-sharing admission order, Kueue's tournament
 * (pkg/scheduler/fair_sharing_iterator.go, runTournament and
 * entryComparer): moves to position i the next head to process.  The
 * heads of the cohort tree of e[i]'s queue compete (a queue without a
 * cohort's head is simply next): at each cohort, bottom up, the nominees
 * of its children (a queue's head, or a child cohort's winner) are
 * compared by the child's share with the nominee's usage added at its
 * queue: first a child not borrowing on a (flavor, resource) the nominee
 * requests (default-on gate FairSharingPrioritizeNonBorrowing), then the
 * lower share, then queue order (higher priority, older).  Shares are
 * recomputed at every call, as usage moves.  Returns 0 or CARVE_ENOMEM.
 */
struct tkey {
	struct carve_share sh;
	bool borrowing;
};

static bool tour_less(const struct carve_adm *a, const struct entry *x, const struct tkey *kx,
		      const struct entry *y, const struct tkey *ky)
{
	int c;

	if (!a->fs.no_non_borrowing && kx->borrowing != ky->borrowing)
		return !kx->borrowing;
	if ((c = carve__share_cmp(&kx->sh, &ky->sh)))
		return c < 0;
	return carve__wl_queue_cmp(&a->cat.wls[x->wl], &a->cat.wls[y->wl]) < 0;
}

CARVE__COLD static int pick_fairest(struct carve_adm *a, struct entry **e, size_t i, size_t n)
{
	const struct qnode *nodes = a->qt.nodes;
	int root = nodes[a->cat.cqs[a->cat.wls[e[i]->wl].cq].node].root, maxd = 0, win = -1;
	size_t j, m = 0, alive;
	size_t *idx;
	int *rep;
	struct tkey *keys;

	if (nodes[a->cat.cqs[a->cat.wls[e[i]->wl].cq].node].parent < 0)
		return 0;
	for (j = i; j < n; j++) {
		int node = a->cat.cqs[a->cat.wls[e[j]->wl].cq].node;

		if (nodes[node].root == root && nodes[node].depth > maxd)
			maxd = nodes[node].depth;
	}
	idx = carve_malloc((n - i) * sizeof(*idx));
	rep = carve_malloc((n - i) * sizeof(*rep));
	keys = carve_malloc((n - i) * (size_t)maxd * sizeof(*keys));
	if (!idx || !rep || !keys) {
		carve_free(idx);
		carve_free(rep);
		carve_free(keys);
		return CARVE_ENOMEM;
	}
	for (j = i; j < n; j++) {
		int node = a->cat.cqs[a->cat.wls[e[j]->wl].cq].node, x, k = 0;
		const struct frq *use = e[j]->as.use;
		size_t nuse = e[j]->as.nuse;
		bool can = carve__qt_charge_checked(a, node, use, nuse);
		struct tkey *kk = &keys[m * (size_t)maxd];

		if (nodes[node].root != root)
			continue;
		for (x = node; nodes[x].parent >= 0; x = nodes[x].parent, k++) {
			if (can) {
				kk[k].sh = carve__qt_share(a, x);
				kk[k].borrowing = carve__qt_borrowing_on(a, x, use, nuse);
			} else { /* its usage cannot even be counted: last */
				kk[k].sh = (struct carve_share){INT64_MAX, 1e300, true, 0.0};
				kk[k].borrowing = true;
			}
		}
		if (can)
			carve__qt_charge(a, node, use, nuse, -1);
		idx[m] = j;
		rep[m++] = node;
	}
	/* Bottom up: the deepest nominee's parent cohort decides among its
	 * children's nominees (all at that depth then). */
	for (alive = m; alive > 1;) {
		size_t d = 0, l;
		int c, best = -1;
		const struct tkey *kb = NULL;

		for (l = 0; l < m; l++)
			if (rep[l] >= 0 && nodes[rep[l]].depth > (int)d)
				d = (size_t)nodes[rep[l]].depth;
		for (l = 0; l < m && !(rep[l] >= 0 && nodes[rep[l]].depth == (int)d); l++)
			;
		c = nodes[rep[l]].parent;
		for (l = 0; l < m; l++) {
			const struct tkey *kl;

			if (rep[l] < 0 || nodes[rep[l]].parent != c)
				continue;
			kl = &keys[l * (size_t)maxd +
				   (size_t)(nodes[a->cat.cqs[a->cat.wls[e[idx[l]]->wl].cq].node].depth -
					    nodes[rep[l]].depth)];
			if (best < 0 || tour_less(a, e[idx[l]], kl, e[idx[best]], kb)) {
				if (best >= 0) {
					rep[best] = -1;
					alive--;
				}
				best = (int)l;
				kb = kl;
			} else {
				rep[l] = -1;
				alive--;
			}
		}
		rep[best] = c;
	}
	for (j = 0; j < m; j++)
		if (rep[j] >= 0)
			win = (int)idx[j];
	if (win > (int)i) {
		struct entry *x = e[win];

		memmove(&e[i + 1], &e[i], ((size_t)win - i) * sizeof(*e));
		e[i] = x;
	}
	carve_free(idx);
	carve_free(rep);
	carve_free(keys);
	return 0;
}

/* The head of queue q: its first pending workload in queue order, skipping
 * those set aside (BestEffortFIFO) until something changes. */
static int head_of(struct carve_adm *a, int q)
{
	struct cq *c = &a->cat.cqs[q];

	/* A workload that preempted keeps its claim on what it freed: when the
	 * eviction gives set-aside workloads another chance (BestEffortFIFO),
	 * an older head must not take its place for a cycle while the victims
	 * take their quota back by borrowing, over and over. */
	if (c->claim >= 0) {
		const struct wl *w = &a->cat.wls[c->claim];

		/* only while its last decision was to wait for its victims: a
		 * claimant that no longer fits (set aside, or a StrictFIFO head
		 * with NoFit) or was skipped queues like any other */
		if (w->state == CARVE_WL_PENDING && !w->inadmissible &&
		    w->pending_reason == CARVE_PEND_PREEMPTION_ISSUED)
			return c->claim;
		c->claim = -1;
	}
	return carve__pq_top(a, c);
}

/* Removes (sign -1) or restores (+1) the usage of those of a set of
 * workloads that are in the cohort tree of root: what carve__qt_fits at a node of
 * that tree sees (other trees' usage never reaches it). */
static void charge_tree(struct carve_adm *a, const uint32_t *ids, size_t n, int sign, int root)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct wl *v = &a->cat.wls[ids[i]];

		if (a->qt.nodes[a->cat.cqs[v->cq].node].root == root)
			carve__wl_charge(a, v, sign);
	}
}

/*
 * Whether as fits at node with the marked workloads' usage removed (in
 * its cohort tree); with charge, also whether it can be charged now, while
 * they still hold their usage: usage must stay within int64 milli-units
 * until the driver evicts them.  Only with quotas near that limit does
 * that ever refuse, and the head is then admitted once they are gone.
 */
static bool fits_without(struct carve_adm *a, int node, const struct assignment *as,
			 const uint32_t *marked, size_t nmarked, bool charge)
{
	int root = carve__qt_root(a, node);
	bool fits;

	charge_tree(a, marked, nmarked, -1, root);
	fits = carve__qt_fits(a, node, as->use, as->nuse);
	charge_tree(a, marked, nmarked, +1, root);
	return fits && (!charge || carve__qt_can_charge(a, node, as->use, as->nuse));
}

static void set_pending(struct carve_adm *a, struct wl *w, enum carve_pending_reason r,
			const char *msg, int cycle)
{
	char buf[512];

	if (strnlen(msg, sizeof(buf)) == sizeof(buf)) {
		/* the length a status message always had */
		snprintf(buf, sizeof(buf), "%s", msg);
		msg = buf;
	}
	w->waiting = false;
	w->pending_reason = r;
	w->message = carve__adm_intern(a, msg);
	w->cycle = cycle;
}

/*
 * What a head waiting for preemption holds for the rest of the cycle: its
 * whole request when it has victims; with none, only what its queue could
 * still take (up to nominal, or nominal + borrowingLimit when it borrows),
 * so it does not starve while borrowers elsewhere still get the rest.
 * Never more than keeps every usage within int64 milli-units (marked
 * victims still hold theirs).
 */
static int hold(struct carve_adm *a, struct entry *e, int node, bool stuck)
{
	const struct qnode *n = &a->qt.nodes[node];
	size_t i;

	e->held = carve_malloc((e->as.nuse ? e->as.nuse : 1) * sizeof(*e->held));
	if (!e->held)
		return CARVE_ENOMEM;
	e->nheld = 0;
	for (i = 0; i < e->as.nuse; i++) {
		int fr = e->as.use[i].fr;
		int64_t want = e->as.use[i].q, r = want;

		if (fr < 0)
			continue;
		if (stuck && e->res.borrowing && n->blimit[fr] != QTY_INF)
			r = carve__sat_add(n->nominal[fr], n->blimit[fr]) - n->usage[fr];
		else if (stuck && !e->res.borrowing)
			r = n->nominal[fr] - n->usage[fr];
		if (r > want)
			r = want;
		if (r > 0 && !carve__qt_can_add(a, node, fr, r))
			r = carve__qt_headroom(a, node, fr); /* what the tree can count */
		if (r <= 0)
			continue;
		e->held[e->nheld].fr = fr;
		e->held[e->nheld++].q = r;
		carve__qt_add_usage(a, node, fr, r);
	}
	return 0;
}

static void admit_entry(struct carve_adm *a, struct entry *e)
{
	struct wl *w = &a->cat.wls[e->wl];

	carve__assignment_free(&w->adm);
	w->adm = e->as;
	carve_free(w->psr); /* the status view's podSets are this admission's now */
	w->psr = NULL;
	memset(&e->as, 0, sizeof(e->as));
	w->state = CARVE_WL_ADMITTED;
	w->admitted_by_engine = true;
	w->borrowing = e->res.borrowing;
	w->waiting = false;
	w->pending_reason = CARVE_PEND_NONE;
	w->message = "";
	w->cycle = a->sched.cycle;
	w->admitted_at = a->sched.now; /* the cycle's time */
	w->has_admitted_at = true;
	carve__cq_del_pending(a, e->wl);
	w->inadmissible = false;
	carve__cq_add_wl(a, &a->cat.cqs[w->cq], e->wl);
	carve__wl_charge(a, w, +1);
}

/*
 * Marks in skip the flavors as chose in resource groups that offer another
 * flavor, naming them in tried (", "-joined); false when none was new.
 */
static bool skip_chosen(const struct carve_adm *a, const struct wl *w,
			const struct assignment *as, bool *skip, char *tried, size_t size)
{
	const struct cq *q = &a->cat.cqs[w->cq];
	bool added = false;
	int p, r;

	for (p = 0; p < w->npodsets; p++)
		for (r = 0; r < w->ps[p].nreqs; r++) {
			int fl = as->flavor[p * CARVE_RES_MAX + r], g = q->group_of[w->ps[p].res[r]];
			size_t len = strlen(tried);

			if (fl < 0 || g < 0 || q->groups[g].nflv < 2 || skip[fl])
				continue;
			skip[fl] = true;
			added = true;
			snprintf(tried + len, size - len, "%s%s", len ? ", " : "",
				 a->cat.flavors[fl].spec.name);
		}
	return added;
}

/*
 * A head whose quota fits under e->as but whose gang cannot be placed on
 * the nodes of its flavors: as Kueue's TAS does, such a flavor does not
 * fit, so the next flavors of the same resource groups are tried (in the
 * queue's order, flavorFungibility choosing among the rest) with the same
 * counts.  An alternative must fit its quota without preemption (marked
 * victims removed); one that would need preemption is skipped as well.  On success e->as and e->res are the placed
 * assignment and 0 is returned; else CARVE_ENOFIT (why gets the flavors
 * tried appended) or CARVE_ENOMEM.
 */
static int place_next_flavor(struct carve_adm *a, struct entry *e, const uint32_t *marked,
			     size_t nmarked, char *why, size_t whysize)
{
	struct wl *w = &a->cat.wls[e->wl];
	int node = a->cat.cqs[w->cq].node, rc = CARVE_ENOFIT;
	bool *skip = carve_calloc(a->cat.nflavors ? a->cat.nflavors : 1, sizeof(*skip));
	struct assignment cur;
	struct assign_result cres;
	const struct assignment *failed = &e->as;
	char tried[256] = "";

	if (!skip)
		return CARVE_ENOMEM;
	memset(&cur, 0, sizeof(cur));
	while (skip_chosen(a, w, failed, skip, tried, sizeof(tried))) {
		struct assignment nx;
		char why2[400];
		int prc;

		if (carve__assign_flavors_skip(a, w, e->as.count, skip, &nx, &cres) == CARVE_ENOMEM) {
			rc = CARVE_ENOMEM;
			break;
		}
		carve__assignment_free(&cur);
		cur = nx;
		failed = &cur;
		if (cres.mode != GM_FIT)
			continue; /* needs preemption there: skip it too */
		if (!fits_without(a, node, &cur, marked, nmarked, true))
			continue;
		prc = carve__place_wl(a, w, &cur, why2, sizeof(why2));
		if (prc == CARVE_ENOMEM) {
			rc = CARVE_ENOMEM;
			break;
		}
		if (prc == 0) {
			carve__assignment_free(&e->as);
			e->as = cur;
			e->res = cres;
			memset(&cur, 0, sizeof(cur));
			rc = 0;
			break;
		}
	}
	carve__assignment_free(&cur);
	carve_free(skip);
	if (rc == CARVE_ENOFIT && strchr(tried, ',')) {
		size_t len = strlen(why);

		snprintf(why + len, whysize - len, " (flavors tried for placement: %s)", tried);
	}
	return rc;
}

/* A head that cannot be admitted: under BestEffortFIFO the next workload
 * of its queue gets its turn until something changes. */
static void set_aside(struct carve_adm *a, struct wl *w)
{
	if (a->cat.cqs[w->cq].spec.strategy != CARVE_BEST_EFFORT_FIFO || w->inadmissible)
		return;
	carve__pq_remove(a, &a->cat.cqs[w->cq], (uint32_t)(w - a->cat.wls));
	carve__aside_push(a, &a->cat.cqs[w->cq], (uint32_t)(w - a->cat.wls));
	w->inadmissible = true;
	a->sched.set_aside++;
}

static bool in_set(const int *v, int n, int x)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/*
 * The victims the preemption oracle already found for e's assignment, when
 * victim search would find the same: same needs (as a set), the same
 * usage of every needed (flavor, resource), and every other one it uses
 * fitting now without borrowing, so that it fits at every step of any
 * search (taking victims only frees quota and lowers the queue's usage)
 * and every fit test answers as for the oracle's usage.  Not with fair
 * sharing (it weighs the whole usage).  NULL: search again.
 */
static const struct ocache *oracle_reuse(const struct carve_adm *a, const struct wl *w,
					 const struct entry *e)
{
	int node = a->cat.cqs[w->cq].node, s, k;
	size_t i, j;

	if (a->sched.fair_sharing)
		return NULL;
	for (s = 0; s < a->cyc.nocache; s++) {
		const struct ocache *c = &a->cyc.ocache[s];
		bool ok = c->nneed == e->res.nneed;

		for (k = 0; ok && k < c->nneed; k++)
			ok = in_set(e->res.need, e->res.nneed, c->need[k]) &&
			     in_set(c->need, c->nneed, e->res.need[k]);
		for (i = 0; ok && i < e->as.nuse; i++) {
			const struct frq *u = &e->as.use[i];

			if (u->fr < 0)
				continue;
			if (in_set(c->need, c->nneed, u->fr)) {
				for (j = 0; j < c->nuse && c->use[j].fr != u->fr; j++)
					;
				ok = j < c->nuse && c->use[j].q == u->q;
			} else {
				ok = u->q <= carve__qt_available(a, node, u->fr) &&
				     !carve__qt_borrowing_with(a, node, u->fr, u->q);
			}
		}
		for (j = 0; ok && j < c->nuse; j++) { /* nothing the oracle used is missing */
			for (i = 0; i < e->as.nuse && e->as.use[i].fr != c->use[j].fr; i++)
				;
			ok = i < e->as.nuse;
		}
		if (ok)
			return c;
	}
	return NULL;
}

/* Assignment (and victims when it needs preemption) for counts (NULL: full). */
static int evaluate(struct carve_adm *a, struct wl *w, const int32_t *counts, struct entry *e)
{
	carve__assignment_free(&e->as);
	e->ntargets = 0;
	if (carve__assign_flavors(a, w, counts, &e->as, &e->res) == CARVE_ENOMEM)
		return CARVE_ENOMEM;
	if (e->res.mode == GM_PREEMPT || e->res.mode == GM_RECLAIM) {
		const struct ocache *c = oracle_reuse(a, w, e);
		int n;

		if (c) {
			n = (int)c->ntargets;
			if (n)
				memcpy(a->cyc.scratch_targets, c->targets, c->ntargets * sizeof(*c->targets));
		} else {
			n = carve__preempt_targets(a, w, e->as.use, e->as.nuse, e->res.need, e->res.nneed,
					    a->cyc.scratch_targets);
		}

		if (n > 0) {
			struct target *t = carve_realloc(e->targets, (size_t)n * sizeof(*t));

			if (!t)
				return CARVE_ENOMEM;
			memcpy(t, a->cyc.scratch_targets, (size_t)n * sizeof(*t));
			e->targets = t;
		}
		e->ntargets = n;
	}
	return 0;
}

/* Room for every workload in the buffers preemption works in. */
static int ensure_scratch(struct carve_adm *a)
{
	size_t cap = a->cat.nwls ? a->cat.nwls : 1;
	void *t, *c;

	if (a->cyc.capscratch >= cap)
		return 0;
	t = carve_realloc(a->cyc.scratch_targets, cap * sizeof(*a->cyc.scratch_targets));
	if (t)
		a->cyc.scratch_targets = t;
	c = carve_realloc(a->cyc.scratch_cands, cap * sizeof(*a->cyc.scratch_cands));
	if (c)
		a->cyc.scratch_cands = c;
	if (!t || !c)
		return CARVE_ENOMEM;
	a->cyc.capscratch = cap;
	return 0;
}

static int id_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* The marked workloads, in id order (finished ones dropped from the list). */
static void marked_settle(struct carve_adm *a)
{
	size_t i, n = 0;

	for (i = 0; i < a->sched.nmarked; i++)
		if (a->cat.wls[a->sched.marked[i]].marked)
			a->sched.marked[n++] = a->sched.marked[i];
	a->sched.nmarked = n;
	if (n > 1)
		qsort(a->sched.marked, n, sizeof(*a->sched.marked), id_cmp);
}

/* slack * d / total rounded down, for 0 <= slack <= total and 0 <= d <=
 * total: at most slack, exact even where the product leaves int64 (up to
 * 64 podSets of 2^31 pods). */
static int32_t share(int64_t slack, int64_t d, int64_t total)
{
	int64_t prod;

	if (!__builtin_mul_overflow(slack, d, &prod))
		return (int32_t)(prod / total);
	return (int32_t)((unsigned __int128)slack * (uint64_t)d / (uint64_t)total);
}

/*
 * Partial admission: podSets with minCount below count may shrink.  The
 * total reduction d (0 .. sum of count - minCount) is spread over the
 * podSets in proportion to their slack; the smallest d that fits (or
 * finds victims) wins, found by bisection as Kueue's PodSetReducer does.
 * Leaves e holding the best assignment found, or the full one.
 */
static int partial_search(struct carve_adm *a, struct wl *w, struct entry *e)
{
	int32_t counts[64];
	int64_t total = 0, lo = 0, hi, best = -1;
	int p;

	if (w->npodsets > 64)
		return 0;
	for (p = 0; p < w->npodsets; p++)
		total += w->ps[p].spec.count - w->ps[p].spec.min_count;
	if (total <= 0)
		return 0;
	hi = total;
	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2;

		for (p = 0; p < w->npodsets; p++)
			counts[p] = w->ps[p].spec.count -
				    share(w->ps[p].spec.count - w->ps[p].spec.min_count, mid, total);
		if (evaluate(a, w, counts, e))
			return CARVE_ENOMEM;
		if (e->res.mode == GM_FIT || e->ntargets > 0) {
			best = mid;
			hi = mid - 1;
		} else {
			lo = mid + 1;
		}
	}
	if (best < 0)
		return evaluate(a, w, NULL, e);
	for (p = 0; p < w->npodsets; p++)
		counts[p] = w->ps[p].spec.count -
			    share(w->ps[p].spec.count - w->ps[p].spec.min_count, best, total);
	return evaluate(a, w, counts, e);
}

/* ---- the cycle, phase by phase ---- */

/*
 * What one cycle carries from phase to phase.  ents and ord are the
 * engine's (cyc.ents, cyc.ord); marked is this cycle's own list of every
 * marked workload (those of earlier cycles first, in id order, then this
 * cycle's as they are marked), carve_malloc'd and freed at the end.
 */
struct cycle {
	struct entry *ents, **ord;
	size_t nents;
	uint32_t *marked;
	size_t nmarked, capmarked;
	int decisions;
};

/*
 * Phase 1, snapshot: a new cycle at time now.  When something changed,
 * BestEffortFIFO's set-aside workloads get another chance (Kueue requeues
 * its inadmissible workloads); the marked list is settled and copied; the
 * per-cycle buffers are made.  CARVE_ENOMEM leaves cy safe to clean up.
 */
static int cycle_begin(struct carve_adm *a, int64_t now, struct cycle *cy)
{
	size_t q;
	int *skip_cohort;

	a->sched.cycle++;
	a->sched.now = now;
	a->sched.set_aside = 0;
	if (a->sched.changed) {
		for (q = 0; q < a->cat.ncqs; q++) {
			struct cq *c = &a->cat.cqs[q];

			while (c->naside) {
				uint32_t id = c->aside[--c->naside];

				if (a->cat.wls[id].state != CARVE_WL_PENDING)
					continue; /* finished while set aside */
				a->cat.wls[id].inadmissible = false;
				carve__pq_push(a, c, id);
				carve__visit_add(a, id);
			}
		}
		a->sched.changed = false;
	}
	marked_settle(a);
	cy->capmarked = a->sched.nmarked + 16;
	/* One entry per queue at most; kept between cycles. */
	if (!a->cyc.ents)
		a->cyc.ents = carve_malloc((a->cat.ncqs ? a->cat.ncqs : 1) * sizeof(struct entry));
	if (!a->cyc.ord)
		a->cyc.ord = carve_malloc((a->cat.ncqs ? a->cat.ncqs : 1) * sizeof(*a->cyc.ord));
	cy->ents = a->cyc.ents;
	cy->ord = a->cyc.ord;
	cy->marked = carve_malloc(cy->capmarked * sizeof(*cy->marked));
	if (!a->cyc.skip_cohort)
		a->cyc.skip_cohort = carve_malloc((a->qt.nnodes ? a->qt.nnodes : 1) * sizeof(int));
	skip_cohort = a->cyc.skip_cohort;
	if (skip_cohort)
		memset(skip_cohort, 0, (a->qt.nnodes ? a->qt.nnodes : 1) * sizeof(int));
	if (!cy->ents || !cy->ord || !cy->marked || !skip_cohort || ensure_scratch(a))
		return CARVE_ENOMEM;
	if (a->sched.nmarked)
		memcpy(cy->marked, a->sched.marked, a->sched.nmarked * sizeof(*cy->marked));
	cy->nmarked = a->sched.nmarked;
	return 0;
}

/*
 * Phase 2, nominate: every running ClusterQueue's head gets its flavor
 * assignment and, when it needs preemption, its victims, all against the
 * state at the start of the cycle; one that neither fits nor finds victims
 * tries partial admission.  Each head becomes one entry.
 */
static int nominate(struct carve_adm *a, struct cycle *cy)
{
	size_t q;

	for (q = 0; q < a->cat.ncqs; q++) {
		struct entry *e;
		struct wl *w;
		int h;

		if (a->cat.cqs[q].spec.stop != CARVE_STOP_NONE)
			continue;
		h = head_of(a, (int)q);
		if (h < 0)
			continue;
		w = &a->cat.wls[h];
		e = &cy->ents[cy->nents++];
		memset(&e->as, 0, sizeof(e->as)); /* e->res is set by evaluate */
		e->targets = NULL;
		e->ntargets = 0;
		e->held = NULL;
		e->nheld = 0;
		e->wl = (uint32_t)h;
		carve__visit_add(a, (uint32_t)h); /* touched now; "waiting" again when not a head */
		if (carve__cq_reserve_admitted(&a->cat.cqs[q])) /* it may be admitted */
			return CARVE_ENOMEM;
		if (evaluate(a, w, NULL, e))
			return CARVE_ENOMEM;
		if (e->res.mode != GM_FIT && e->ntargets == 0 && partial_search(a, w, e))
			return CARVE_ENOMEM;
	}
	return 0;
}

/* Phase 3, order: lower borrowing level, then queue order (entry_cmp).
 * With fair sharing the order is refined as entries are processed. */
static void order_entries(struct carve_adm *a, struct cycle *cy)
{
	size_t i;

	for (i = 0; i < cy->nents; i++)
		cy->ord[i] = &cy->ents[i];
	sort_entries(cy->ord, cy->nents, a);
}

/* cyc.skip_cohort[root]: what the heads of a cohort tree preempted. */
enum { SKIP_NONE = 0, SKIP_PREEMPTED, SKIP_BORROWED };

/* Whether a victim of e was already marked by another head in this cycle. */
static bool targets_overlap(const struct carve_adm *a, const struct entry *e)
{
	int k;

	for (k = 0; k < e->ntargets; k++) {
		const struct wl *v = &a->cat.wls[e->targets[k].wl];

		if (v->marked && v->cycle == a->sched.cycle)
			return true;
	}
	return false;
}

/*
 * A head that cannot go ahead in this cycle for a reason known before its
 * fit is tested: NoFit; needs preemption without victims (set aside, and
 * holding what its queue could still take unless reclaimWithinCohort is
 * Any); or it needs preemption and a victim of it was marked earlier in
 * the cycle, or another head of its cohort tree issued preemptions and
 * one of the two borrows (SkippedInCycle).  Several heads of one cohort
 * preempt in the same cycle when their victims are disjoint and none of
 * them borrows.
 * Returns 1 when e is done for the cycle, 0 to go on, CARVE_ENOMEM.
 */
static int entry_blocked(struct carve_adm *a, struct entry *e)
{
	struct wl *w = &a->cat.wls[e->wl];
	int node = a->cat.cqs[w->cq].node, root = carve__qt_root(a, node);
	bool in_cohort = a->qt.nodes[node].parent >= 0;

	if (e->res.mode == GM_NOFIT) {
		set_pending(a, w, CARVE_PEND_NOFIT, e->res.why, a->sched.cycle);
		set_aside(a, w);
		return 1;
	}
	if (e->res.mode != GM_FIT && e->ntargets == 0) {
		set_pending(a, w, CARVE_PEND_NOFIT, e->res.why[0] ? e->res.why :
			    "needs preemption, but no workload can be preempted for it",
			    a->sched.cycle);
		set_aside(a, w);
		if (a->cat.cqs[w->cq].spec.reclaim != CARVE_RECLAIM_ANY && hold(a, e, node, true))
			return CARVE_ENOMEM;
		return 1;
	}
	if (e->res.mode != GM_FIT && targets_overlap(a, e)) {
		set_pending(a, w, CARVE_PEND_SKIPPED, "its preemption targets overlap those of "
			    "another workload processed in this cycle", a->sched.cycle);
		return 1;
	}
	if (e->res.mode != GM_FIT && in_cohort && a->cyc.skip_cohort[root] &&
	    (e->res.borrowing || a->cyc.skip_cohort[root] == SKIP_BORROWED)) {
		set_pending(a, w, CARVE_PEND_SKIPPED, "another workload in the cohort issued "
			    "preemptions in this cycle", a->sched.cycle);
		return 1;
	}
	return 0;
}

/* Whether e still fits now, with its victims and every victim marked
 * earlier removed (in its cohort tree); 0/1, or CARVE_ENOMEM. */
static int entry_fits(struct carve_adm *a, struct cycle *cy, struct entry *e)
{
	struct wl *w = &a->cat.wls[e->wl];
	int node = a->cat.cqs[w->cq].node;
	size_t k, nsim;

	if (carve__adm_reserve((void **)&cy->marked, &cy->capmarked, cy->nmarked + (size_t)e->ntargets,
			sizeof(*cy->marked)))
		return CARVE_ENOMEM;
	nsim = cy->nmarked;
	for (k = 0; k < (size_t)e->ntargets; k++)
		if (!a->cat.wls[e->targets[k].wl].marked)
			cy->marked[nsim++] = e->targets[k].wl;
	/* admitted now (charged in full) when it needs no victims */
	return fits_without(a, node, &e->as, cy->marked, nsim, e->res.mode == GM_FIT);
}

/*
 * A head that fits its quota without preemption: admitted, after its gang
 * is placed when there is a placer (trying the next flavors, then victims
 * on the nodes).  Returns 1 when admitted or NoFit for placement, 0 when
 * it now needs victims on the nodes (e->targets set, *for_nodes true),
 * CARVE_ENOMEM.
 */
static int admit_or_place(struct carve_adm *a, struct cycle *cy, struct entry *e, bool *for_nodes)
{
	struct wl *w = &a->cat.wls[e->wl];

	*for_nodes = false;
	if (a->cat.placer) {
		char why[400];
		int prc, nv = 0;

		why[0] = '\0';
		prc = carve__place_wl(a, w, &e->as, why, sizeof(why));
		if (prc == CARVE_ENOFIT)
			prc = place_next_flavor(a, e, cy->marked, cy->nmarked, why, sizeof(why));
		if (prc == CARVE_ENOFIT)
			nv = carve__place_victims(a, w, &e->as, &e->targets);
		if (prc == CARVE_ENOMEM || nv < 0)
			return CARVE_ENOMEM;
		if (nv > 0) {
			e->ntargets = nv;
			*for_nodes = true;
			return 0;
		}
		if (prc) {
			set_pending(a, w, CARVE_PEND_NOFIT, why, a->sched.cycle);
			set_aside(a, w);
			return 1;
		}
	}
	admit_entry(a, e);
	cy->decisions++;
	return 1;
}

/*
 * e's victims are marked (each once) for eviction by the driver; the head
 * becomes its queue's claimant, waits with PreemptionIssued and holds its
 * request for the rest of the cycle; its cohort tree notes that it
 * preempted, and whether while borrowing.  0 or CARVE_ENOMEM.
 */
static int issue_preemptions(struct carve_adm *a, struct cycle *cy, struct entry *e,
			     bool for_nodes)
{
	struct wl *w = &a->cat.wls[e->wl];
	int node = a->cat.cqs[w->cq].node, root = carve__qt_root(a, node);
	char msg[128];
	size_t k;

	if (carve__adm_reserve((void **)&cy->marked, &cy->capmarked, cy->nmarked + (size_t)e->ntargets,
			sizeof(*cy->marked)) ||
	    carve__adm_reserve((void **)&a->sched.marked, &a->sched.capmarked,
			a->sched.nmarked + (size_t)e->ntargets, sizeof(*a->sched.marked)))
		return CARVE_ENOMEM;
	for (k = 0; k < (size_t)e->ntargets; k++) {
		struct wl *v = &a->cat.wls[e->targets[k].wl];

		if (v->marked)
			continue;
		a->sched.marked[a->sched.nmarked++] = e->targets[k].wl;
		v->marked = true;
		v->preemptor = e->wl;
		v->preempt_reason = e->targets[k].reason;
		v->cycle = a->sched.cycle;
		cy->marked[cy->nmarked++] = e->targets[k].wl;
		cy->decisions++;
	}
	if (a->qt.nodes[node].parent >= 0 && a->cyc.skip_cohort[root] != SKIP_BORROWED)
		a->cyc.skip_cohort[root] = e->res.borrowing ? SKIP_BORROWED : SKIP_PREEMPTED;
	a->cat.cqs[w->cq].claim = (int)e->wl;
	snprintf(msg, sizeof(msg), "waiting for %d preempted workload(s) to release "
		 "their %s", e->ntargets, for_nodes ? "nodes" : "quota");
	set_pending(a, w, CARVE_PEND_PREEMPTION_ISSUED, msg, a->sched.cycle);
	return hold(a, e, node, false);
}

/*
 * Phase 4, admit or preempt: entries in order (with fair sharing, the
 * winner of pick_fairest's tournament goes next, rerun as usage moves).  A head still fitting is admitted or has
 * its victims marked, and its usage counts for the heads after it; one
 * that no longer fits is SkippedInCycle.
 */
static int process_entries(struct carve_adm *a, struct cycle *cy)
{
	size_t i;

	for (i = 0; i < cy->nents; i++) {
		struct entry *e;
		bool for_nodes = false;
		int rc;

		if (a->sched.fair_sharing && (rc = pick_fairest(a, cy->ord, i, cy->nents)))
			return rc;
		e = cy->ord[i];
		if ((rc = entry_blocked(a, e)))
			goto next;
		rc = entry_fits(a, cy, e);
		if (rc == 0) {
			set_pending(a, &a->cat.wls[e->wl], CARVE_PEND_SKIPPED, "no longer fits after "
				    "another workload was processed in this cycle", a->sched.cycle);
			continue;
		}
		if (rc < 0)
			return rc;
		if (e->res.mode == GM_FIT && (rc = admit_or_place(a, cy, e, &for_nodes)))
			goto next;
		rc = issue_preemptions(a, cy, e, for_nodes);
next:
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Phase 5a: what waiting heads held during the cycle is given back. */
static void release_holds(struct carve_adm *a, struct cycle *cy)
{
	size_t i, k;

	for (i = 0; i < cy->nents; i++) {
		struct entry *e = &cy->ents[i];
		int node = a->cat.cqs[a->cat.wls[e->wl].cq].node;

		for (k = 0; k < e->nheld; k++)
			carve__qt_add_usage(a, node, e->held[k].fr, -e->held[k].q);
		e->nheld = 0;
	}
}

/*
 * Phase 5b, requeue: pending workloads that were not heads this cycle are
 * "waiting behind the head" (or their queue is stopped) as of this cycle;
 * those set aside keep the reason they were set aside for.  Only workloads
 * on the visit list can newly become so: every other pending one already
 * is (w->waiting, whose status names the last cycle), or is set aside.
 */
static void settle_waiting(struct carve_adm *a)
{
	size_t i, n = 0;

	for (i = 0; i < a->sched.nvisit; i++) {
		uint32_t id = a->sched.visit[i];
		struct wl *w = &a->cat.wls[id];

		if (w->state == CARVE_WL_PENDING && w->cycle == a->sched.cycle && !w->inadmissible) {
			a->sched.visit[n++] = id; /* a head now: maybe waiting after the next */
			continue;
		}
		w->in_visit = false;
		if (w->state == CARVE_WL_PENDING && w->cycle != a->sched.cycle && !w->inadmissible)
			w->waiting = true;
	}
	a->sched.nvisit = n;
	a->sched.cycle_done = a->sched.cycle;
}

/* The entries' buffers, and on an early exit anything still held. */
static void cycle_end(struct carve_adm *a, struct cycle *cy)
{
	size_t i, k;

	for (i = 0; cy->ents && i < cy->nents; i++) {
		struct entry *e = &cy->ents[i];

		for (k = 0; k < e->nheld; k++)
			carve__qt_add_usage(a, a->cat.cqs[a->cat.wls[e->wl].cq].node, e->held[k].fr,
				     -e->held[k].q);
		carve_free(e->held);
		carve__assignment_free(&e->as);
		carve_free(e->targets);
	}
	carve_free(cy->marked);
}

int carve_adm_cycle(struct carve_adm *a, int64_t now)
{
	struct cycle cy;
	int rc;

	if (!a->cat.finalized)
		return CARVE_EINVAL;
	memset(&cy, 0, sizeof(cy));
	if ((rc = cycle_begin(a, now, &cy)) || (rc = nominate(a, &cy)))
		goto out;
	order_entries(a, &cy);
	if ((rc = process_entries(a, &cy)))
		goto out;
	release_holds(a, &cy);
	settle_waiting(a);
	if (cy.decisions)
		a->sched.changed = true;
	rc = cy.decisions;
out:
	cycle_end(a, &cy);
	return rc;
}

int carve_adm_last_set_aside(const struct carve_adm *a)
{
	return a->sched.set_aside;
}

/* ---- between cycles ---- */

int carve_adm_evict_marked(struct carve_adm *a)
{
	size_t j;
	int n = 0;

	marked_settle(a); /* in id order, as a scan of every workload would go */
	for (j = 0; j < a->sched.nmarked; j++) {
		uint32_t i = a->sched.marked[j];
		struct wl *w = &a->cat.wls[i];

		carve__wl_charge(a, w, -1);
		carve__cq_del_wl(a, &a->cat.cqs[w->cq], (uint32_t)i);
		carve__assignment_free(&w->adm);
		carve_free(w->psr);
		w->psr = NULL;
		carve__unplace_wl(a, w);
		w->marked = false;
		w->evicted = true;
		w->state = CARVE_WL_PENDING;
		/* Kueue's default requeuing timestamp is the eviction: the
		 * workload goes behind everything already waiting. */
		w->spec.created = a->sched.now;
		w->spec.has_created = true;
		w->admitted_by_engine = false;
		w->pending_reason = CARVE_PEND_NONE;
		carve__cq_add_pending(a, i); /* after its new timestamp: the heap orders by it */
		carve__visit_add(a, i);
		n++;
	}
	a->sched.nmarked = 0;
	if (n)
		a->sched.changed = true;
	return n;
}

int carve_adm_run(struct carve_adm *a, int64_t now, int max_cycles)
{
	int c, rc;

	for (c = 0; c < max_cycles; c++) {
		if (c)
			carve_adm_evict_marked(a);
		rc = carve_adm_cycle(a, now);
		if (rc < 0)
			return rc;
		/* Stable: nothing decided and no queue has a new head to try. */
		if (rc == 0 && !a->sched.set_aside) {
			c++;
			break;
		}
	}
	return c;
}

