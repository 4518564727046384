/*
 * admit_check.c - carve_adm_check(): every invariant of the admission
 * engine, recomputed from scratch and compared with what the engine keeps
 * (admit_int.h states them):
 *
 *   - quota: each ClusterQueue's usage per fr is the sum of its admitted
 *     (and marked) workloads' charges, each charge recomputed from the
 *     admission (count x per-pod request of every request given a flavor);
 *     each cohort's usage is the sum over its children of what they use
 *     beyond their guaranteed quota, up to the roots; every charge and
 *     every such sum fits in int64 milli-units (usage is exact, never
 *     clamped);
 *   - admitted lists: every admitted workload is in its queue's list once,
 *     at its qpos, with a victim record that matches it; nothing else is;
 *   - pending heaps: every pending workload is in its queue's heap (or,
 *     set aside, in its aside list) exactly once; no admitted workload is
 *     in either; each heap entry's numbers match its workload and heap
 *     order holds; a queue's claimant is one of its pending workloads;
 *   - marked victims: only admitted workloads are marked, each is on the
 *     engine's marked list, and its preemptor is a workload;
 *   - indexes: the by-key and by-name maps find every workload, queue and
 *     interned message under its own id, and hold nothing else.
 * Read only; allocates scratch (freed before it returns).  Outside a cycle
 * only: during one, heads waiting for preemption hold usage of their own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admit_int.h"

static const char *cq_name(const void *ctx, uint32_t id)
{
	return ((const struct carve_adm *)ctx)->cat.cqs[id].spec.name;
}

static const char *wl_name(const void *ctx, uint32_t id)
{
	return ((const struct carve_adm *)ctx)->cat.wls[id].spec.key;
}

static const char *msg_name(const void *ctx, uint32_t id)
{
	return ((const struct carve_adm *)ctx)->ix.msgs[id];
}

static const char *fr_text(const struct carve_adm *a, int fr, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", a->cat.flavors[a->qt.fr_flavor[fr]].spec.name,
		 carve_resreg_name(a->cat.res, a->qt.fr_res[fr]));
	return buf;
}

/* The charge of admitted workload w, recomputed into want (nfr entries,
 * zeroed by the caller); CARVE_EINVAL when its stored charge differs. */
static int check_charge(const struct carve_adm *a, const struct wl *w, int64_t *want,
			struct carve_error *err)
{
	const struct assignment *as = &w->adm;
	char b[160];
	size_t i;
	int p, r, fr;

	if (!as->count || !as->use)
		return carve_errorf(err, CARVE_EINVAL, "workload %s: admitted without an "
				    "assignment", w->spec.key);
	for (p = 0; p < w->npodsets; p++)
		for (r = 0; r < w->ps[p].nreqs; r++) {
			int fl = as->flavor[p * CARVE_RES_MAX + r];
			int64_t c;

			fr = fl >= 0 ? carve__fr_id(a, fl, w->ps[p].res[r]) : -1;
			if (fr < 0)
				continue;
			if (__builtin_mul_overflow((int64_t)as->count[p], w->ps[p].milli[r], &c) ||
			    __builtin_add_overflow(want[fr], c, &want[fr]))
				return carve_errorf(err, CARVE_EINVAL, "workload %s: its charge of "
						    "%s overflows int64 milli-units", w->spec.key,
						    fr_text(a, fr, b, sizeof(b)));
		}
	for (i = 0; i < as->nuse; i++) {
		fr = as->use[i].fr;
		if (fr < 0)
			continue;
		if (fr >= a->qt.nfr)
			return carve_errorf(err, CARVE_EINVAL, "workload %s: charges unknown fr %d",
					    w->spec.key, fr);
		want[fr] -= as->use[i].q;
	}
	for (fr = 0; fr < a->qt.nfr; fr++)
		if (want[fr]) {
			return carve_errorf(err, CARVE_EINVAL, "workload %s: charges %s differently "
					    "from its admission (off by %lld milli)", w->spec.key,
					    fr_text(a, fr, b, sizeof(b)), (long long)-want[fr]);
		}
	return 0;
}

/* The usage the admitted workloads make does not fit in int64 milli-units:
 * the engine must have refused or not admitted one of them. */
static int usage_overflow(const struct carve_adm *a, int node, int fr, struct carve_error *err)
{
	char b[160];

	return carve_errorf(err, CARVE_EINVAL, "%s %s: the usage of %s its admitted workloads "
			    "make overflows int64 milli-units",
			    a->qt.nodes[node].is_cq ? "ClusterQueue" : "Cohort",
			    a->qt.nodes[node].name, fr_text(a, fr, b, sizeof(b)));
}

/* Usage per node and fr as the admitted workloads make it, compared with
 * the tree's. */
static int check_usage(const struct carve_adm *a, int64_t *use, int64_t *tmp,
		       struct carve_error *err)
{
	size_t i, nfr = (size_t)a->qt.nfr;
	int depth, maxdepth = 0, fr, rc;

	for (i = 0; i < a->cat.nwls; i++) {
		const struct wl *w = &a->cat.wls[i];
		int node;

		if (w->state != CARVE_WL_ADMITTED)
			continue;
		memset(tmp, 0, nfr * sizeof(*tmp));
		if ((rc = check_charge(a, w, tmp, err)))
			return rc;
		node = a->cat.cqs[w->cq].node;
		for (size_t k = 0; k < w->adm.nuse; k++) {
			int64_t *u;

			if (w->adm.use[k].fr < 0)
				continue;
			u = &use[(size_t)node * nfr + (size_t)w->adm.use[k].fr];
			if (__builtin_add_overflow(*u, w->adm.use[k].q, u))
				return usage_overflow(a, node, w->adm.use[k].fr, err);
		}
	}
	for (i = 0; i < a->qt.nnodes; i++)
		if (a->qt.nodes[i].depth > maxdepth)
			maxdepth = a->qt.nodes[i].depth;
	/* Children before parents: what a child uses beyond its guaranteed
	 * quota counts at its parent. */
	for (depth = maxdepth; depth > 0; depth--)
		for (i = 0; i < a->qt.nnodes; i++) {
			const struct qnode *n = &a->qt.nodes[i];

			if (n->depth != depth || n->parent < 0)
				continue;
			for (fr = 0; fr < a->qt.nfr; fr++) {
				int64_t g = carve__qt_guaranteed(a, (int)i, fr);
				int64_t u = use[i * nfr + (size_t)fr];
				int64_t *pu = &use[(size_t)n->parent * nfr + (size_t)fr];

				if (__builtin_add_overflow(*pu, u > g ? u - g : 0, pu))
					return usage_overflow(a, n->parent, fr, err);
			}
		}
	for (i = 0; i < a->qt.nnodes; i++)
		for (fr = 0; fr < a->qt.nfr; fr++)
			if (a->qt.nodes[i].usage[fr] != use[i * nfr + (size_t)fr]) {
				char b[160];

				return carve_errorf(err, CARVE_EINVAL, "%s %s: usage of %s is %lld "
						    "milli, its admitted workloads make %lld",
						    a->qt.nodes[i].is_cq ? "ClusterQueue" : "Cohort",
						    a->qt.nodes[i].name, fr_text(a, fr, b, sizeof(b)),
						    (long long)a->qt.nodes[i].usage[fr],
						    (long long)use[i * nfr + (size_t)fr]);
			}
	return 0;
}

/* Each queue's admitted list and victim records. */
static int check_admitted(const struct carve_adm *a, struct carve_error *err)
{
	size_t q, i, nlisted = 0, nadm = 0;

	for (q = 0; q < a->cat.ncqs; q++) {
		const struct cq *c = &a->cat.cqs[q];

		if (c->nwls > c->capwls)
			return carve_errorf(err, CARVE_EINVAL, "ClusterQueue %s: %zu admitted in "
					    "room for %zu", c->spec.name, c->nwls, c->capwls);
		for (i = 0; i < c->nwls; i++) {
			uint32_t id = c->wls[i];
			const struct wl *w;
			const struct vrec *r = &c->vr[i];

			if (id >= a->cat.nwls)
				return carve_errorf(err, CARVE_EINVAL, "ClusterQueue %s: admitted "
						    "list holds bad id %u", c->spec.name, id);
			w = &a->cat.wls[id];
			if (w->state != CARVE_WL_ADMITTED || w->cq != (int)q || w->qpos != i)
				return carve_errorf(err, CARVE_EINVAL, "ClusterQueue %s: admitted "
						    "list holds %s (state %d, queue %d, qpos %u) at "
						    "%zu", c->spec.name, w->spec.key, w->state, w->cq,
						    w->qpos, i);
			if (r->mask != carve__wl_frmask(a, w) || r->priority != w->spec.priority ||
			    r->has_at != w->has_admitted_at ||
			    (r->has_at && r->at != w->admitted_at) ||
			    r->rank != (id < a->ix.nranked ? a->ix.krank[id] : UINT32_MAX))
				return carve_errorf(err, CARVE_EINVAL, "workload %s: its victim record "
						    "does not match it", w->spec.key);
		}
		nlisted += c->nwls;
	}
	for (i = 0; i < a->cat.nwls; i++)
		nadm += a->cat.wls[i].state == CARVE_WL_ADMITTED;
	if (nadm != nlisted)
		return carve_errorf(err, CARVE_EINVAL, "%zu admitted workloads but %zu in the "
				    "admitted lists", nadm, nlisted);
	return 0;
}

/* Each queue's pending heap and set-aside list; seen counts, per workload,
 * the places it is found (nwls entries, zeroed by the caller). */
static int check_pending(const struct carve_adm *a, uint32_t *seen, struct carve_error *err)
{
	size_t q, i;

	for (q = 0; q < a->cat.ncqs; q++) {
		const struct cq *c = &a->cat.cqs[q];

		if (c->npend > c->cappend || c->naside > c->capaside)
			return carve_errorf(err, CARVE_EINVAL, "ClusterQueue %s: pending lists "
					    "beyond their room", c->spec.name);
		for (i = 0; i < c->npend; i++) {
			const struct pqent *e = &c->pend[i];
			const struct wl *w;

			if (e->id >= a->cat.nwls)
				return carve_errorf(err, CARVE_EINVAL, "ClusterQueue %s: heap holds "
						    "bad id %u", c->spec.name, e->id);
			w = &a->cat.wls[e->id];
			if (w->cq != (int)q || e->priority != w->spec.priority ||
			    e->created != (w->spec.has_created ? w->spec.created : INT64_MIN))
				return carve_errorf(err, CARVE_EINVAL, "ClusterQueue %s: heap entry "
						    "of %s does not match it", c->spec.name,
						    w->spec.key);
			if (i > 0 && carve__wl_queue_cmp(w, &a->cat.wls[c->pend[(i - 1) / 2].id]) < 0)
				return carve_errorf(err, CARVE_EINVAL, "ClusterQueue %s: heap order "
						    "broken at %s", c->spec.name, w->spec.key);
			if (w->state == CARVE_WL_PENDING && w->inadmissible)
				return carve_errorf(err, CARVE_EINVAL, "workload %s: set aside but "
						    "in its heap", w->spec.key);
			seen[e->id]++;
		}
		for (i = 0; i < c->naside; i++) {
			uint32_t id = c->aside[i];

			if (id >= a->cat.nwls || a->cat.wls[id].cq != (int)q)
				return carve_errorf(err, CARVE_EINVAL, "ClusterQueue %s: set-aside "
						    "list holds a workload of another queue",
						    c->spec.name);
			if (a->cat.wls[id].state == CARVE_WL_PENDING &&
			    !a->cat.wls[id].inadmissible)
				return carve_errorf(err, CARVE_EINVAL, "workload %s: in the set-aside "
						    "list but not set aside",
						    a->cat.wls[id].spec.key);
			seen[id]++;
		}
		if (c->claim >= 0 && ((size_t)c->claim >= a->cat.nwls ||
				      a->cat.wls[c->claim].cq != (int)q))
			return carve_errorf(err, CARVE_EINVAL, "ClusterQueue %s: claimant %d is "
					    "not one of its workloads", c->spec.name, c->claim);
	}
	for (i = 0; i < a->cat.nwls; i++) {
		const struct wl *w = &a->cat.wls[i];

		if (w->state == CARVE_WL_PENDING && seen[i] != 1)
			return carve_errorf(err, CARVE_EINVAL, "workload %s: pending, found %u "
					    "times in its queue's heap and set-aside list",
					    w->spec.key, seen[i]);
		if (w->state == CARVE_WL_ADMITTED && seen[i])
			return carve_errorf(err, CARVE_EINVAL, "workload %s: admitted and pending "
					    "at once", w->spec.key);
	}
	return 0;
}

/* Marked victims: admitted, on the marked list, with a preemptor. */
static int check_marked(const struct carve_adm *a, uint32_t *seen, struct carve_error *err)
{
	size_t i;

	memset(seen, 0, (a->cat.nwls ? a->cat.nwls : 1) * sizeof(*seen));
	for (i = 0; i < a->sched.nmarked; i++) {
		if (a->sched.marked[i] >= a->cat.nwls)
			return carve_errorf(err, CARVE_EINVAL, "marked list holds bad id %u",
					    a->sched.marked[i]);
		seen[a->sched.marked[i]] = 1;
	}
	for (i = 0; i < a->cat.nwls; i++) {
		const struct wl *w = &a->cat.wls[i];

		if (!w->marked)
			continue;
		if (w->state != CARVE_WL_ADMITTED)
			return carve_errorf(err, CARVE_EINVAL, "workload %s: marked for preemption "
					    "but not admitted", w->spec.key);
		if (!seen[i])
			return carve_errorf(err, CARVE_EINVAL, "workload %s: marked but not on the "
					    "marked list", w->spec.key);
		if (w->preemptor >= a->cat.nwls)
			return carve_errorf(err, CARVE_EINVAL, "workload %s: marked by bad "
					    "preemptor %u", w->spec.key, w->preemptor);
	}
	return 0;
}

/* The hash maps find every object under its own id, and hold only them. */
static int check_indexes(const struct carve_adm *a, struct carve_error *err)
{
	size_t i;

	if (a->ix.wlmap.n != a->cat.nwls || a->ix.cqmap.n != a->cat.ncqs ||
	    a->ix.msgmap.n != a->ix.nmsgs)
		return carve_errorf(err, CARVE_EINVAL, "index sizes (%zu workloads, %zu queues, "
				    "%zu messages) differ from the objects (%zu, %zu, %zu)",
				    a->ix.wlmap.n, a->ix.cqmap.n, a->ix.msgmap.n, a->cat.nwls,
				    a->cat.ncqs, a->ix.nmsgs);
	for (i = 0; i < a->cat.nwls; i++)
		if (carve__idmap_find(&a->ix.wlmap, a->cat.wls[i].spec.key, wl_name, a) != (int)i)
			return carve_errorf(err, CARVE_EINVAL, "workload %s is not found by its "
					    "key", a->cat.wls[i].spec.key);
	for (i = 0; i < a->cat.ncqs; i++)
		if (carve__idmap_find(&a->ix.cqmap, a->cat.cqs[i].spec.name, cq_name, a) != (int)i)
			return carve_errorf(err, CARVE_EINVAL, "ClusterQueue %s is not found by "
					    "its name", a->cat.cqs[i].spec.name);
	for (i = 0; i < a->ix.nmsgs; i++)
		if (carve__idmap_find(&a->ix.msgmap, a->ix.msgs[i], msg_name, a) != (int)i)
			return carve_errorf(err, CARVE_EINVAL, "interned message %zu is not found",
					    i);
	return 0;
}

int carve_adm_check(const struct carve_adm *a, struct carve_error *err)
{
	size_t nn = a->qt.nnodes * (size_t)a->qt.nfr;
	int64_t *use = NULL, *tmp = NULL;
	uint32_t *seen = NULL;
	int rc;

	if (!a->cat.finalized)
		return 0; /* no quota tree and no workloads yet */
	use = carve_calloc(nn ? nn : 1, sizeof(*use));
	tmp = carve_calloc(a->qt.nfr ? (size_t)a->qt.nfr : 1, sizeof(*tmp));
	seen = carve_calloc(a->cat.nwls ? a->cat.nwls : 1, sizeof(*seen));
	if (!use || !tmp || !seen) {
		rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = check_indexes(a, err)) || (rc = check_admitted(a, err)) ||
	    (rc = check_pending(a, seen, err)) || (rc = check_marked(a, seen, err)) ||
	    (rc = check_usage(a, use, tmp, err)))
		goto out;
out:
	carve_free(use);
	carve_free(tmp);
	carve_free(seen);
	return rc;
}
