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
 * whether it stays within its nominal quota.  The tree is left exactly as
 * found.
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

/* Share of the queue of candidate i's workload, -1 when nothing is left to take there. */
static int64_t cand_cq_share(struct carve_adm *a, const uint32_t *cands, size_t n,
			     const bool *gone, int cq)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!gone[i] && a->cat.wls[cands[i]].cq == cq)
			return carve__qt_drs(a, a->cat.cqs[cq].node, NULL, 0, +1);
	return -1;
}

/*
 * Fair-sharing preemption (Kueue's fairPreemptions with its default
 * strategies).  Queues are visited highest dominant share first.  From
 * another queue a workload is taken when the preemptor's share after
 * admission would not exceed that queue's share after losing it (or the
 * victim is below the borrowWithinCohort threshold); what fails that rule
 * may still go in a second pass when the preemptor's share stays below the
 * queue's current share.  Its own queue's workloads go in candidate order.
 */
static int fair(struct carve_adm *a, struct wl *w, const struct frq *use, size_t nuse,
		const int *need, int nneed, const uint32_t *cands, size_t n,
		const int32_t *below_prio, struct target *out)
{
	bool *gone = carve_calloc(n ? n : 1, sizeof(*gone));
	bool *retry = carve_calloc(n ? n : 1, sizeof(*retry));
	int pnode = a->cat.cqs[w->cq].node;
	int64_t pshare = carve__qt_drs(a, pnode, use, nuse, +1);
	size_t nt = 0, i;
	bool fits = false;

	if (!gone || !retry)
		goto out;
	while (!fits) {
		int best_cq = -1;
		int64_t best = -1;
		bool took = false;

		for (i = 0; i < n; i++) {
			int cq = a->cat.wls[cands[i]].cq;
			int64_t sh;

			if (gone[i] || retry[i])
				continue;
			sh = cand_cq_share(a, cands, n, gone, cq);
			if (sh > best) {
				best = sh;
				best_cq = cq;
			}
		}
		if (best_cq < 0)
			break;
		for (i = 0; i < n && !took; i++) {
			struct wl *v = &a->cat.wls[cands[i]];
			bool below;

			if (gone[i] || retry[i] || v->cq != best_cq)
				continue;
			if (best_cq == w->cq) {
				out[nt].reason = CARVE_PREEMPT_IN_CQ;
			} else {
				below = below_prio && v->spec.priority < *below_prio;
				if (!below && pshare > carve__qt_drs(a, a->cat.cqs[v->cq].node, v->adm.use,
							       v->adm.nuse, -1)) {
					retry[i] = true;
					continue;
				}
				out[nt].reason = below ? CARVE_PREEMPT_RECLAIM_WHILE_BORROWING :
							 CARVE_PREEMPT_FAIR_SHARING;
			}
			carve__wl_charge(a, v, -1);
			gone[i] = true;
			out[nt++].wl = cands[i];
			took = true;
			fits = wl_fits(a, w, use, nuse, true);
			pshare = carve__qt_drs(a, pnode, use, nuse, +1);
			if (best_cq != w->cq && !cq_borrowing(a, best_cq, need, nneed))
				for (size_t j = 0; j < n; j++)
					if (a->cat.wls[cands[j]].cq == best_cq && !gone[j])
						retry[j] = true;
		}
	}
	/* Second strategy: the preemptor's share stays below the queue's. */
	for (i = 0; i < n && !fits; i++) {
		struct wl *v = &a->cat.wls[cands[i]];

		if (gone[i] || !retry[i] || v->cq == w->cq ||
		    !cq_borrowing(a, v->cq, need, nneed))
			continue;
		if (pshare >= carve__qt_drs(a, a->cat.cqs[v->cq].node, NULL, 0, +1))
			continue;
		carve__wl_charge(a, v, -1);
		gone[i] = true;
		out[nt].wl = cands[i];
		out[nt++].reason = CARVE_PREEMPT_FAIR_SHARING;
		fits = wl_fits(a, w, use, nuse, true);
	}
out:
	if (!fits) {
		for (i = 0; i < nt; i++)
			carve__wl_charge(a, &a->cat.wls[out[i].wl], +1);
		nt = 0;
	} else {
		nt = (size_t)fill_back(a, w, use, nuse, out, nt, true);
	}
	carve_free(gone);
	carve_free(retry);
	return (int)nt;
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
		int32_t thr = w->spec.priority;

		if (q->spec.has_bwc_threshold && q->spec.bwc_max_priority < thr)
			thr = q->spec.bwc_max_priority + 1;
		for (i = 0; i < n; i++)
			cands[i] = lz_id(&all, i);
		r = fair(a, w, use, nuse, need, nneed, cands, n,
			 q->spec.bwc == CARVE_BWC_LOWER ? &thr : NULL, targets);
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
