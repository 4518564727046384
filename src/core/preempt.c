/*
 * preempt.c - choosing victims, as Kueue's classical preemption does.
 *
 * Candidates: admitted workloads using a (flavor, resource) the preemptor
 * needs, from its own queue per withinClusterQueue (lower priority; or
 * equal priority and newer with LowerOrNewerEqualPriority) and, per
 * reclaimWithinCohort, from other queues of the cohort tree that are
 * borrowing that resource.  Order: already marked, other queues before
 * the own, lower priority, most recently admitted, then key.  Victims are
 * taken in that order until the preemptor fits, skipping other queues'
 * workloads once their queue no longer borrows; then every victim but the
 * last is given back when the preemptor still fits without it.  Whether
 * the preemptor may keep borrowing depends on borrowWithinCohort and on
 * whether it stays within its nominal quota.  With fair sharing on, victims
 * come from Kueue's fair-sharing preemption instead (fair(), below).  The
 * tree is left exactly as found.
 */
#include <stdlib.h>
#include <string.h>

#include "admit_int.h"

static bool uses_any(const struct carve_adm *a, const struct wl *w, const int *need, int nneed)
{
	size_t i;
	int k;

	for (i = 0; i < w->adm.nuse; i++)
		for (k = 0; k < nneed; k++)
			if (w->adm.use[i].fr == need[k] && w->adm.use[i].q > 0)
				return true;
	(void)a;
	return false;
}

static bool cq_borrowing(const struct carve_adm *a, int cq, const int *need, int nneed)
{
	int k;

	for (k = 0; k < nneed; k++)
		if (carve__qt_borrowing(a, a->cat.cqs[cq].node, need[k]))
			return true;
	return false;
}

/* The preemptor's queue uses less than its nominal quota of every needed
 * fr (Kueue's queueUnderNominalInResourcesNeedingPreemption). */
static bool under_nominal(const struct carve_adm *a, const struct wl *w, const int *need,
			  int nneed)
{
	int node = a->cat.cqs[w->cq].node, k;

	for (k = 0; k < nneed; k++)
		if (a->qt.nodes[node].usage[need[k]] >= a->qt.nodes[node].nominal[need[k]])
			return false;
	return true;
}

/* Timestamps in queue order: no creation time = oldest. */
static bool created_after(const struct wl *x, const struct wl *y)
{
	if (!x->spec.has_created)
		return false;
	if (!y->spec.has_created)
		return true;
	return x->spec.created > y->spec.created;
}

/* Candidate order: already marked first, other queues before the own,
 * lower priority, with an admission time before without, more recently
 * admitted, then key.  As numbers: k (the first four), then at, then the
 * key or its rank (admit_index.c). */
struct ckey {
	uint64_t k;
	int64_t at;
	const char *key;
	uint32_t id, rank;
};

static int ckey_cmp(const void *pa, const void *pb)
{
	const struct ckey *x = pa, *y = pb;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	if (x->at != y->at)
		return x->at > y->at ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* The same with key ranks (admit_index.c) in place of the keys. */
static inline bool ckey_rank_less(const struct ckey *x, const struct ckey *y)
{
	if (x->k != y->k)
		return x->k < y->k;
	if (x->at != y->at)
		return x->at > y->at;
	return x->rank < y->rank;
}

/* Hoare partition of v[0..n), n > 12, around the median of three: returns
 * j with v[0..j] before v[j+1..n) (ranks are unique: one order). */
static size_t ckey_partition(struct ckey *v, size_t n)
{
	size_t i = 0, j = n - 1, m = n / 2;
	struct ckey p, t;

	if (ckey_rank_less(&v[m], &v[0])) {
		t = v[m]; v[m] = v[0]; v[0] = t;
	}
	if (ckey_rank_less(&v[n - 1], &v[m])) {
		t = v[m]; v[m] = v[n - 1]; v[n - 1] = t;
		if (ckey_rank_less(&v[m], &v[0])) {
			t = v[m]; v[m] = v[0]; v[0] = t;
		}
	}
	p = v[m];
	for (;;) {
		while (ckey_rank_less(&v[i], &p))
			i++;
		while (ckey_rank_less(&p, &v[j]))
			j--;
		if (i >= j)
			break;
		t = v[i]; v[i] = v[j]; v[j] = t;
		i++;
		j--;
	}
	return j;
}

static void ckey_insertion_sort(struct ckey *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct ckey x = v[i];
		size_t j = i;

		for (; j > 0 && ckey_rank_less(&x, &v[j - 1]); j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Sorts by ckey_rank_less, inlined. */
static void ckey_rank_sort(struct ckey *v, size_t n)
{
	while (n > 12) {
		size_t j = ckey_partition(v, n);

		/* recurse into the smaller part */
		if (j + 1 < n - j - 1) {
			ckey_rank_sort(v, j + 1);
			v += j + 1;
			n -= j + 1;
		} else {
			ckey_rank_sort(v + j + 1, n - j - 1);
			n = j + 1;
		}
	}
	ckey_insertion_sort(v, n);
}

/* Puts the k first (in order) of v[0..n) into v[0..k), in any order. */
static void ckey_select(struct ckey *v, size_t n, size_t k)
{
	while (n > 12 && k > 0 && k < n) {
		size_t j = ckey_partition(v, n);

		if (k <= j + 1) {
			n = j + 1;
		} else {
			v += j + 1;
			k -= j + 1;
			n -= j + 1;
		}
	}
	if (k > 0 && k < n)
		ckey_insertion_sort(v, n);
}

/*
 * Candidates in order, sorted only as far as they are asked for: minimal
 * preemption usually stops after a few.  k[0..done) is sorted and comes
 * before the rest.
 */
struct lz {
	struct ckey *k;
	size_t n, done;
};

static uint32_t lz_id(struct lz *c, size_t i)
{
	if (i >= c->done) {
		size_t want = c->done * 2 > i + 8 ? c->done * 2 : i + 8;

		if (want > c->n)
			want = c->n;
		ckey_select(c->k + c->done, c->n - c->done, want - c->done);
		ckey_rank_sort(c->k + c->done, want - c->done);
		c->done = want;
	}
	return c->k[i].id;
}

/* The sort numbers of candidate id, the i-th admitted workload of queue
 * o, for a preemptor in queue cq. */
static void ckey_set(const struct carve_adm *a, struct ckey *k, const struct cq *o, size_t i,
		     int cq)
{
	const struct vrec *r = &o->vr[i];
	uint32_t id = o->wls[i];
	bool marked = a->sched.nmarked && a->cat.wls[id].marked; /* none marked: no need to look */

	k->k = (uint64_t)!marked << 34 | (uint64_t)(o - a->cat.cqs == cq) << 33 |
	       (uint64_t)((uint32_t)r->priority ^ 0x80000000u) << 1 | (uint64_t)!r->has_at;
	k->at = r->at;
	k->key = NULL;
	k->id = id;
	k->rank = r->rank;
}

/* Ranks (or, when there are none for them, keys) for the n candidates of
 * ks; whether ranked. */
static bool prepare_keys(struct carve_adm *a, struct ckey *ks, size_t n, uint32_t *ids)
{
	size_t i;
	bool ranked;

	for (i = 0; i < n && ks[i].rank != UINT32_MAX; i++)
		;
	if (i == n)
		return true; /* every one ranked (ranks kept beside the admitted lists) */
	for (i = 0; i < n; i++)
		ids[i] = ks[i].id;
	ranked = carve__krank_ready(a, ids, n);
	for (i = 0; i < n; i++) {
		if (ranked)
			ks[i].rank = a->ix.krank[ks[i].id];
		else
			ks[i].key = a->cat.wls[ks[i].id].spec.key;
	}
	return ranked;
}

/* Room in the key scratch for every admitted workload of w's cohort tree,
 * twice. */
static int keys_room(struct carve_adm *a, const struct wl *w)
{
	int root = carve__qt_root(a, a->cat.cqs[w->cq].node), k;
	size_t n = a->cat.cqs[w->cq].nwls;

	for (k = 0; k < a->qt.nodes[root].rcq_n; k++)
		n += a->cat.cqs[a->qt.root_cqs[a->qt.nodes[root].rcq_first + k]].nwls;
	n *= 2; /* the candidates, then those of w's own queue */
	if (n > a->cyc.capkeys) {
		size_t cap = n > 2 * a->cyc.capkeys ? n : 2 * a->cyc.capkeys;
		void *v = carve_realloc(a->cyc.scratch_keys, cap * sizeof(struct ckey));

		if (!v)
			return CARVE_ENOMEM;
		a->cyc.scratch_keys = v;
		a->cyc.capkeys = cap;
	}
	return 0;
}

/* The candidates, into ks with their sort numbers (room: keys_room). */
static size_t find_candidates(const struct carve_adm *a, const struct wl *w, const int *need,
			      int nneed, struct ckey *ks)
{
	const struct cq *q = &a->cat.cqs[w->cq];
	int node = q->node, root = carve__qt_root(a, node);
	size_t n = 0, i;
	uint64_t nm = 0;
	bool slow = a->qt.nfr > 64; /* masks hold no information: test usage */
	int k;

	for (k = 0; k < nneed && !slow; k++)
		if (need[k] >= 0)
			nm |= (uint64_t)1 << need[k];
	if (slow)
		nm = ~(uint64_t)0;
	if (q->spec.within_cq != CARVE_WCQ_NEVER)
		for (i = 0; i < q->nwls; i++) {
			const struct vrec *r = &q->vr[i];

			if (!(r->mask & nm))
				continue; /* uses none of them */
			if (r->priority > w->spec.priority)
				continue;
			if (r->priority == w->spec.priority &&
			    !(q->spec.within_cq == CARVE_WCQ_LOWER_OR_NEWER_EQUAL &&
			      created_after(&a->cat.wls[q->wls[i]], w)))
				continue;
			if (slow && !uses_any(a, &a->cat.wls[q->wls[i]], need, nneed))
				continue;
			ckey_set(a, &ks[n++], q, i, w->cq);
		}
	if (a->qt.nodes[node].parent < 0 || q->spec.reclaim == CARVE_RECLAIM_NEVER)
		return n;
	for (k = 0; k < a->qt.nodes[root].rcq_n; k++) {
		int c = a->qt.root_cqs[a->qt.nodes[root].rcq_first + k];
		const struct cq *o = &a->cat.cqs[c];

		if (c == w->cq || o->spec.not_reclaimable)
			continue;
		if (!cq_borrowing(a, c, need, nneed))
			continue;
		for (i = 0; i < o->nwls; i++) {
			const struct vrec *r = &o->vr[i];

			if (!(r->mask & nm))
				continue;
			if (q->spec.reclaim == CARVE_RECLAIM_LOWER && r->priority >= w->spec.priority)
				continue;
			if (slow && !uses_any(a, &a->cat.wls[o->wls[i]], need, nneed))
				continue;
			ckey_set(a, &ks[n++], o, i, w->cq);
		}
	}
	return n;
}

static bool wl_fits(const struct carve_adm *a, const struct wl *w, const struct frq *use,
		    size_t nuse, bool allow_borrowing)
{
	int node = a->cat.cqs[w->cq].node;
	size_t i;

	for (i = 0; i < nuse; i++) {
		if (use[i].fr < 0)
			continue;
		if (!allow_borrowing && carve__qt_borrowing_with(a, node, use[i].fr, use[i].q))
			return false;
		if (use[i].q > carve__qt_available(a, node, use[i].fr))
			return false;
	}
	return true;
}

static int fill_back(struct carve_adm *a, struct wl *w, const struct frq *use, size_t nuse,
		     struct target *out, size_t n, bool allow_borrowing);

/*
 * Kueue's minimalPreemptions.  below_prio: when not NULL, victims from
 * other queues with priority >= *below_prio forbid borrowing.
 */
static int minimal(struct carve_adm *a, struct wl *w, const struct frq *use, size_t nuse,
		   const int *need, int nneed, struct lz *cands,
		   bool allow_borrowing, const int32_t *below_prio, struct target *out)
{
	size_t i, n = 0;
	bool fits = false;

	for (i = 0; i < cands->n; i++) {
		uint32_t id = lz_id(cands, i);
		struct wl *v = &a->cat.wls[id];
		enum carve_preempt_reason reason = CARVE_PREEMPT_IN_CQ;

		if (v->cq != w->cq) {
			if (!cq_borrowing(a, v->cq, need, nneed))
				continue;
			reason = CARVE_PREEMPT_RECLAIM;
			if (below_prio) {
				if (v->spec.priority >= *below_prio)
					allow_borrowing = false;
				else
					reason = CARVE_PREEMPT_RECLAIM_WHILE_BORROWING;
			}
		}
		carve__wl_charge(a, v, -1);
		out[n].wl = id;
		out[n++].reason = reason;
		if (wl_fits(a, w, use, nuse, allow_borrowing)) {
			fits = true;
			break;
		}
	}
	if (!fits) {
		for (i = 0; i < n; i++)
			carve__wl_charge(a, &a->cat.wls[out[i].wl], +1);
		return 0;
	}
	/* Give back victims that turn out not to be needed, newest choice first
	 * (skipping the last one taken, which made it fit). */
	return fill_back(a, w, use, nuse, out, n, allow_borrowing);
}

/* Gives back every victim but those still needed (reverse order, the last
 * one taken stays) and restores the tree; returns how many remain. */
static int fill_back(struct carve_adm *a, struct wl *w, const struct frq *use, size_t nuse,
		     struct target *out, size_t n, bool allow_borrowing)
{
	int k;
	size_t i;

	for (k = (int)n - 2; k >= 0; k--) {
		carve__wl_charge(a, &a->cat.wls[out[k].wl], +1);
		if (wl_fits(a, w, use, nuse, allow_borrowing)) {
			memmove(&out[k], &out[k + 1], (n - (size_t)k - 1) * sizeof(*out));
			n--;
		} else {
			carve__wl_charge(a, &a->cat.wls[out[k].wl], -1);
		}
	}
	for (i = 0; i < n; i++)
		carve__wl_charge(a, &a->cat.wls[out[i].wl], +1);
	return (int)n;
}

/*
 * Fair-sharing preemption, as Kueue's fair preemption does it
 * (pkg/scheduler/preemption/fair_strategy.go, fairsharing/ordering.go,
 * fairsharing/least_common_ancestor.go, fairsharing/strategy.go):
 *
 *   - The preemptor's usage is charged to the tree while shares are
 *     computed (not while fits are tested).
 *   - Target queues come from a walk down the cohort tree (fs_next): at
 *     each cohort the child with the highest share, a cohort winning ties
 *     against a queue; a queue with share 0 (other than the preemptor's)
 *     or no candidates left, and a cohort with share 0 off the
 *     preemptor's path, are pruned.
 *   - From the preemptor's own queue a workload is taken in candidate
 *     order (InClusterQueue).  When the preemptor's queue stays within its
 *     nominal quota of every resource needing preemption (default-on gate
 *     FairSharingPreemptWithinNominal), a workload of another queue is
 *     taken without a share test (InCohortReclamation).  Otherwise the
 *     shares compared are those of the two "almost least common
 *     ancestors": the preemptor's and the target's ancestors just below
 *     their lowest common cohort.  The first strategy decides workload by
 *     workload (LessThanOrEqualToFinalShare: preemptor's share after
 *     admission <= the target's after losing it; LessThanInitialShare:
 *     < the target's before); one taken, the walk starts again; one
 *     refused is kept for the second strategy, which takes at most the
 *     first such workload of each queue when the preemptor's share is
 *     below the target's (InCohortFairSharing).
 *   - Victims are taken until the preemptor fits (borrowing allowed),
 *     then those not needed are given back (fill_back).
 * borrowWithinCohort plays no part.
 */
enum { FS_AVAIL, FS_TAKEN, FS_RETRY, FS_DONE };

struct fctx {
	struct carve_adm *a;
	struct wl *w;
	const struct frq *use;
	size_t nuse;
	int pnode;            /* the preemptor's queue node */
	const uint32_t *cands;
	size_t n;
	uint8_t *st;          /* per candidate: FS_* */
	uint8_t want;         /* the state the current pass takes from */
	int *byq;             /* candidate indices grouped by queue, in candidate order */
	int *qstart, *qpos;   /* per queue: its part of byq, and the next one to look at */
	bool *onpath;         /* per node: an ancestor of the preemptor's queue */
	bool *pruned;         /* per node */
	struct target *out;
	size_t nt;
	bool fits;
};

/* The queue's next candidate for this pass, or -1 (pos left on it). */
static int fs_peek(struct fctx *f, int cq)
{
	while (f->qpos[cq] < f->qstart[cq + 1] && f->st[f->byq[f->qpos[cq]]] != f->want)
		f->qpos[cq]++;
	return f->qpos[cq] < f->qstart[cq + 1] ? f->byq[f->qpos[cq]] : -1;
}

static int fs_pop(struct fctx *f, int cq)
{
	int i = fs_peek(f, cq);

	if (i >= 0)
		f->qpos[cq]++;
	return i;
}

/* Kueue's TargetClusterQueueOrdering.nextTarget below cohort node c: a
 * queue id, or -1 when this step only pruned. */
static int fs_next(struct fctx *f, int c)
{
	struct carve_adm *a = f->a;
	struct carve_share sq = {0, 0.0, false, 0.0}, sc = {0, 0.0, false, 0.0};
	int best_q = -1, best_c = -1;
	size_t i;

	for (i = 0; i < a->qt.nnodes; i++) {
		const struct qnode *n = &a->qt.nodes[i];
		struct carve_share sh;

		if (n->parent != c || f->pruned[i])
			continue;
		sh = carve__qt_share(a, (int)i);
		if (n->is_cq) {
			if ((sh.value == 0 && (int)i != f->pnode) || fs_peek(f, n->cq) < 0)
				f->pruned[i] = true;
			else if (best_q < 0 || carve__share_cmp(&sh, &sq) >= 0) {
				sq = sh;
				best_q = n->cq;
			}
		} else {
			if (sh.value == 0 && !f->onpath[i])
				f->pruned[i] = true;
			else if (best_c < 0 || carve__share_cmp(&sh, &sc) >= 0) {
				sc = sh;
				best_c = (int)i;
			}
		}
	}
	if (best_q < 0 && best_c < 0) {
		f->pruned[c] = true;
		return -1;
	}
	if (best_c >= 0 && (best_q < 0 || carve__share_cmp(&sc, &sq) >= 0))
		return fs_next(f, best_c);
	return best_q;
}

/* The preemptor's and queue cq's ancestors just below their lowest common
 * cohort (each may be the queue itself). */
static void fs_almost_lca(const struct fctx *f, int cq, int *pa, int *ta)
{
	const struct qnode *nodes = f->a->qt.nodes;
	int prev = f->a->cat.cqs[cq].node, cur = nodes[prev].parent, p = f->pnode;

	while (cur >= 0 && !f->onpath[cur]) {
		prev = cur;
		cur = nodes[cur].parent;
	}
	*ta = prev;
	while (nodes[p].parent >= 0 && nodes[p].parent != cur)
		p = nodes[p].parent;
	*pa = p;
}

/* Takes candidate i as a victim and tests whether the preemptor fits now
 * (its own usage left out of the tree for the test). */
static void fs_take(struct fctx *f, int i, enum carve_preempt_reason reason)
{
	struct wl *v = &f->a->cat.wls[f->cands[i]];

	carve__wl_charge(f->a, v, -1);
	f->st[i] = FS_TAKEN;
	f->out[f->nt].wl = f->cands[i];
	f->out[f->nt++].reason = reason;
	carve__qt_charge(f->a, f->pnode, f->use, f->nuse, -1);
	f->fits = wl_fits(f->a, f->w, f->use, f->nuse, true);
	carve__qt_charge(f->a, f->pnode, f->use, f->nuse, +1);
}

static bool fs_passes(enum carve_fs_strategy s, const struct carve_share *pnew,
		      const struct carve_share *told, const struct carve_share *tnew)
{
	if (s == CARVE_FS_LE_FINAL_SHARE)
		return carve__share_cmp(pnew, tnew) <= 0;
	return carve__share_cmp(pnew, told) < 0;
}

/* The first strategy (Kueue's iterateWithFirstFsStrategy). */
static void fs_first(struct fctx *f, enum carve_fs_strategy strat, const int *need, int nneed)
{
	struct carve_adm *a = f->a;
	int root = carve__qt_root(a, f->pnode), k;
	bool within = !a->fs.no_within_nominal;

	/* the preemptor's usage is charged: within nominal = not borrowing */
	for (k = 0; k < nneed; k++)
		if (need[k] >= 0 && carve__qt_borrowing(a, f->pnode, need[k]))
			within = false;
	while (!f->fits && !f->pruned[root]) {
		int t = fs_next(f, root), pa, ta, i;
		struct carve_share pnew, told;

		if (t < 0)
			continue;
		if (t == f->w->cq) {
			fs_take(f, fs_pop(f, t), CARVE_PREEMPT_IN_CQ);
			continue;
		}
		if (within) {
			fs_take(f, fs_pop(f, t), CARVE_PREEMPT_RECLAIM);
			continue;
		}
		fs_almost_lca(f, t, &pa, &ta);
		pnew = carve__qt_share(a, pa);
		told = carve__qt_share(a, ta);
		while ((i = fs_pop(f, t)) >= 0) {
			struct wl *v = &a->cat.wls[f->cands[i]];
			struct carve_share tnew;

			carve__wl_charge(a, v, -1);
			tnew = carve__qt_share(a, ta);
			carve__wl_charge(a, v, +1);
			if (fs_passes(strat, &pnew, &told, &tnew)) {
				fs_take(f, i, CARVE_PREEMPT_FAIR_SHARING);
				break; /* the shares moved: walk again */
			}
			f->st[i] = FS_RETRY;
		}
	}
}

/* The second strategy, LessThanInitialShare, over the workloads the first
 * refused: at most the first of each queue (Kueue's
 * iterateWithSecondFsStrategy). */
static void fs_second(struct fctx *f)
{
	struct carve_adm *a = f->a;
	int root = carve__qt_root(a, f->pnode);
	size_t q;

	memset(f->pruned, 0, a->qt.nnodes * sizeof(*f->pruned));
	for (q = 0; q < a->cat.ncqs; q++)
		f->qpos[q] = f->qstart[q];
	f->want = FS_RETRY;
	while (!f->fits && !f->pruned[root]) {
		int t = fs_next(f, root), pa, ta, i;
		struct carve_share pnew, told;

		if (t < 0)
			continue;
		fs_almost_lca(f, t, &pa, &ta);
		pnew = carve__qt_share(a, pa);
		told = carve__qt_share(a, ta);
		i = fs_pop(f, t);
		if (carve__share_cmp(&pnew, &told) < 0)
			fs_take(f, i, CARVE_PREEMPT_FAIR_SHARING);
		else
			f->st[i] = FS_DONE;
		f->pruned[a->cat.cqs[t].node] = true;
	}
}

CARVE__COLD static int fair(struct carve_adm *a, struct wl *w, const struct frq *use, size_t nuse,
		const int *need, int nneed, const uint32_t *cands, size_t n, struct target *out)
{
	struct fctx f = {0};
	size_t i, ncq = a->cat.ncqs;
	int p, rc = 0;

	f.a = a;
	f.w = w;
	f.use = use;
	f.nuse = nuse;
	f.pnode = a->cat.cqs[w->cq].node;
	f.cands = cands;
	f.n = n;
	f.out = out;
	f.want = FS_AVAIL;
	f.st = carve_calloc(n ? n : 1, sizeof(*f.st));
	f.byq = carve_calloc(n ? n : 1, sizeof(*f.byq));
	f.qstart = carve_calloc(ncq + 1, sizeof(*f.qstart));
	f.qpos = carve_calloc(ncq + 1, sizeof(*f.qpos));
	f.onpath = carve_calloc(a->qt.nnodes, sizeof(*f.onpath));
	f.pruned = carve_calloc(a->qt.nnodes, sizeof(*f.pruned));
	if (!f.st || !f.byq || !f.qstart || !f.qpos || !f.onpath || !f.pruned)
		goto out;
	if (!carve__qt_charge_checked(a, f.pnode, use, nuse))
		goto out; /* its usage cannot even be counted */
	/* candidates by queue, keeping their order (a counting sort) */
	for (i = 0; i < n; i++)
		f.qstart[a->cat.wls[cands[i]].cq + 1]++;
	for (i = 0; i < ncq; i++)
		f.qstart[i + 1] += f.qstart[i];
	memcpy(f.qpos, f.qstart, (ncq + 1) * sizeof(*f.qpos));
	for (i = 0; i < n; i++)
		f.byq[f.qpos[a->cat.wls[cands[i]].cq]++] = (int)i;
	memcpy(f.qpos, f.qstart, (ncq + 1) * sizeof(*f.qpos));
	for (p = a->qt.nodes[f.pnode].parent; p >= 0; p = a->qt.nodes[p].parent)
		f.onpath[p] = true;
	fs_first(&f, a->fs.nstrategy ? (enum carve_fs_strategy)a->fs.strategy[0] :
					     CARVE_FS_LE_FINAL_SHARE, need, nneed);
	if (!f.fits && (a->fs.nstrategy == 0 || a->fs.nstrategy == 2))
		fs_second(&f);
	carve__qt_charge(a, f.pnode, use, nuse, -1);
	if (!f.fits) {
		for (i = 0; i < f.nt; i++)
			carve__wl_charge(a, &a->cat.wls[out[i].wl], +1);
	} else {
		rc = fill_back(a, w, use, nuse, out, f.nt, true);
	}
out:
	carve_free(f.st);
	carve_free(f.byq);
	carve_free(f.qstart);
	carve_free(f.qpos);
	carve_free(f.onpath);
	carve_free(f.pruned);
	return rc;
}

int carve__preempt_targets(struct carve_adm *a, struct wl *w, const struct frq *use, size_t nuse,
		    const int *need, int nneed, struct target *targets)
{
	const struct cq *q = &a->cat.cqs[w->cq];
	uint32_t *cands = a->cyc.scratch_cands; /* room for all */
	struct ckey *ks;
	struct lz all, same;
	size_t n, nsame = 0, i;
	int r = 0;

	if (keys_room(a, w))
		goto out;
	ks = a->cyc.scratch_keys;
	n = find_candidates(a, w, need, nneed, ks);
	if (!n)
		goto out;
	all.k = ks;
	all.n = n;
	all.done = 0;
	if (!prepare_keys(a, ks, n, cands)) {
		qsort(ks, n, sizeof(*ks), ckey_cmp); /* by key: all at once */
		all.done = n;
	}
	/* Own-queue candidates, in the same order, after the rest. */
	same.k = ks + n;
	same.done = 0;
	for (i = 0; i < n; i++)
		if (ks[i].k >> 33 & 1) /* in w's queue */
			same.k[nsame++] = ks[i];
	same.n = nsame;
	if (all.done == n)
		same.done = nsame; /* a subset of a sorted list, in order */
	if (nsame == n) {
		r = minimal(a, w, use, nuse, need, nneed, &all, true, NULL, targets);
		goto out;
	}
	if (a->sched.fair_sharing) {
		/* the strategies alone: borrowWithinCohort plays no part */
		for (i = 0; i < n; i++)
			cands[i] = lz_id(&all, i);
		r = fair(a, w, use, nuse, need, nneed, cands, n, targets);
		goto out;
	}
	if (q->spec.bwc == CARVE_BWC_LOWER) {
		int32_t thr = w->spec.priority;

		if (q->spec.has_bwc_threshold && q->spec.bwc_max_priority < thr)
			thr = q->spec.bwc_max_priority + 1;
		if (!under_nominal(a, w, need, nneed)) {
			size_t j = 0;

			/* nothing taken from all yet: a subset keeps the order */
			for (i = 0; i < n; i++)
				if (a->cat.wls[ks[i].id].cq == w->cq ||
				    a->cat.wls[ks[i].id].spec.priority < thr)
					ks[j++] = ks[i];
			all.n = j;
			if (all.done)
				all.done = j;
		}
		r = minimal(a, w, use, nuse, need, nneed, &all, true, &thr, targets);
		goto out;
	}
	if (under_nominal(a, w, need, nneed)) {
		r = minimal(a, w, use, nuse, need, nneed, &all, false, NULL, targets);
		if (r > 0)
			goto out;
	}
	r = minimal(a, w, use, nuse, need, nneed, &same, true, NULL, targets);
out:
	return r;
}
