/*
 * admit_index.c - the admission engine's indexes, so that no step of a
 * cycle scans every workload: name -> id hash maps (workloads by key,
 * ClusterQueues by name), the table of interned status messages, and each
 * ClusterQueue's pending workloads as a binary heap in queue order.
 *
 * Invariants:
 *   - An idmap holds ids only; the key of an id is asked of its owner
 *     (key_fn), so the strings are never copied twice.  Ids are never
 *     removed (workloads keep their id after they finish).
 *   - A pending workload is in exactly one of its queue's heap (pend) or
 *     its set-aside list (aside): in the heap when it may be a head, aside
 *     while BestEffortFIFO has set it aside.  A finished workload may
 *     linger in either until it surfaces (carve__pq_top) or the list is put back
 *     (never as a head).  The heap's root is the first pending workload in
 *     queue order (carve__wl_queue_cmp, a total order: keys are unique); heads
 *     leave from the root, so no workload records its heap position.
 *   - Interned messages live in the engine's arena until it is destroyed;
 *     equal texts share one copy.
 * Nothing here allocates except idmap growth (at add time) and interning a
 * message never seen before.
 */
#include <stdlib.h>
#include <string.h>

#include "admit_int.h"

static uint32_t str_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h ? h : 1;
}

void carve__idmap_free(struct idmap *m)
{
	carve_free(m->slots);
	memset(m, 0, sizeof(*m));
}

static int idmap_grow(struct idmap *m, const char *(*key_fn)(const void *, uint32_t),
		      const void *ctx)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	struct idslot *s = carve_calloc(cap, sizeof(*s));

	if (!s)
		return CARVE_ENOMEM;
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->slots[i].hash)
			continue;
		for (j = m->slots[i].hash & (cap - 1); s[j].hash; j = (j + 1) & (cap - 1))
			;
		s[j] = m->slots[i];
	}
	(void)key_fn;
	(void)ctx;
	carve_free(m->slots);
	m->slots = s;
	m->cap = cap;
	return 0;
}

int carve__idmap_find(const struct idmap *m, const char *key,
	       const char *(*key_fn)(const void *, uint32_t), const void *ctx)
{
	uint32_t h;
	size_t j;

	if (!m->cap || !key)
		return -1;
	h = str_hash(key);
	for (j = h & (m->cap - 1); m->slots[j].hash; j = (j + 1) & (m->cap - 1))
		if (m->slots[j].hash == h && !strcmp(key_fn(ctx, m->slots[j].id), key))
			return (int)m->slots[j].id;
	return -1;
}

int carve__idmap_reserve(struct idmap *m, const char *(*key_fn)(const void *, uint32_t),
		  const void *ctx)
{
	if ((m->n + 1) * 2 > m->cap)
		return idmap_grow(m, key_fn, ctx);
	return 0;
}

void carve__idmap_put(struct idmap *m, const char *key, uint32_t id)
{
	uint32_t h = str_hash(key);
	size_t j;

	for (j = h & (m->cap - 1); m->slots[j].hash; j = (j + 1) & (m->cap - 1))
		;
	m->slots[j].hash = h;
	m->slots[j].id = id;
	m->n++;
}

/* ---- interned messages ---- */

static const char *msg_key(const void *ctx, uint32_t id)
{
	return ((const struct carve_adm *)ctx)->ix.msgs[id];
}

const char *carve__adm_intern(struct carve_adm *a, const char *s)
{
	int id;
	char *c;

	if (!*s)
		return "";
	if (a->ix.last_msg && !strcmp(a->ix.last_msg, s)) /* heads in a row often share one */
		return a->ix.last_msg;
	id = carve__idmap_find(&a->ix.msgmap, s, msg_key, a);
	if (id >= 0)
		return a->ix.last_msg = a->ix.msgs[id];
	if (a->ix.nmsgs == a->ix.capmsgs) {
		size_t cap = a->ix.capmsgs ? a->ix.capmsgs * 2 : 64;
		const char **v = carve_realloc(a->ix.msgs, cap * sizeof(*v));

		if (!v)
			return "(out of memory)";
		a->ix.msgs = v;
		a->ix.capmsgs = cap;
	}
	c = carve_arena_strdup(&a->arena, s);
	if (!c || carve__idmap_reserve(&a->ix.msgmap, msg_key, a))
		return "(out of memory)";
	a->ix.msgs[a->ix.nmsgs] = c;
	carve__idmap_put(&a->ix.msgmap, c, (uint32_t)a->ix.nmsgs);
	a->ix.nmsgs++;
	return a->ix.last_msg = c;
}

/* ---- key ranks ---- */

static const struct carve_adm *rord;

static int rank_cmp(const void *x, const void *y)
{
	return strcmp(rord->cat.wls[*(const uint32_t *)x].spec.key,
		      rord->cat.wls[*(const uint32_t *)y].spec.key);
}

static size_t log2sz(size_t n)
{
	size_t l = 1;

	while (n >>= 1)
		l++;
	return l;
}

bool carve__krank_ready(struct carve_adm *a, const uint32_t *ids, size_t n)
{
	uint32_t *ord, *rk;
	size_t i;

	for (i = 0; i < n && ids[i] < a->ix.nranked; i++)
		;
	if (i == n)
		return true;
	a->ix.krank_debt += n * log2sz(n);
	if (a->ix.krank_debt < a->cat.nwls * log2sz(a->cat.nwls))
		return false;
	a->ix.krank_debt = 0;
	ord = carve_malloc((a->cat.nwls ? a->cat.nwls : 1) * sizeof(*ord));
	rk = carve_realloc(a->ix.krank, (a->cat.nwls ? a->cat.nwls : 1) * sizeof(*rk));
	if (!ord || !rk) {
		carve_free(ord);
		if (rk)
			a->ix.krank = rk;
		return false;
	}
	a->ix.krank = rk;
	for (i = 0; i < a->cat.nwls; i++)
		ord[i] = (uint32_t)i;
	rord = a;
	qsort(ord, a->cat.nwls, sizeof(*ord), rank_cmp);
	rord = NULL;
	for (i = 0; i < a->cat.nwls; i++)
		rk[ord[i]] = (uint32_t)i;
	carve_free(ord);
	a->ix.nranked = a->cat.nwls;
	for (i = 0; i < a->cat.ncqs; i++) { /* the copies beside the admitted lists */
		struct cq *q = &a->cat.cqs[i];
		size_t j;

		for (j = 0; j < q->nwls; j++)
			q->vr[j].rank = rk[q->wls[j]];
	}
	return true;
}

/* ---- queue order and the pending heap ---- */

/* Queue order: higher priority first, then older (no timestamp = oldest),
 * then key for determinism. */
int carve__wl_queue_cmp(const struct wl *x, const struct wl *y)
{
	if (x->spec.priority != y->spec.priority)
		return x->spec.priority > y->spec.priority ? -1 : 1;
	if (x->spec.has_created != y->spec.has_created)
		return x->spec.has_created ? 1 : -1;
	if (x->spec.has_created && x->spec.created != y->spec.created)
		return x->spec.created < y->spec.created ? -1 : 1;
	if (x->evicted != y->evicted)
		return x->evicted ? 1 : -1; /* requeued at that time: behind */
	return strcmp(x->spec.key, y->spec.key);
}

/* carve__wl_queue_cmp(x, y) < 0, deciding on the entries' numbers when they differ. */
static bool pq_less(const struct carve_adm *a, const struct pqent *x, const struct pqent *y)
{
	if (x->priority != y->priority)
		return x->priority > y->priority;
	if (x->created != y->created)
		return x->created < y->created;
	return carve__wl_queue_cmp(&a->cat.wls[x->id], &a->cat.wls[y->id]) < 0;
}

static void pq_up(struct carve_adm *a, struct cq *q, size_t i)
{
	struct pqent e = q->pend[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!pq_less(a, &e, &q->pend[p]))
			break;
		q->pend[i] = q->pend[p];
		i = p;
	}
	q->pend[i] = e;
}

static void pq_down(struct carve_adm *a, struct cq *q, size_t i)
{
	struct pqent e = q->pend[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= q->npend)
			break;
		if (c + 1 < q->npend && pq_less(a, &q->pend[c + 1], &q->pend[c]))
			c++;
		if (!pq_less(a, &q->pend[c], &e))
			break;
		q->pend[i] = q->pend[c];
		i = c;
	}
	q->pend[i] = e;
}

/* Room was reserved at add time (capacity: every workload of the queue).
 * Priority and creation time must not change while it is in the heap. */
void carve__pq_push(struct carve_adm *a, struct cq *q, uint32_t id)
{
	const struct wl *w = &a->cat.wls[id];
	struct pqent *e = &q->pend[q->npend++];

	e->created = w->spec.has_created ? w->spec.created : INT64_MIN;
	e->priority = w->spec.priority;
	e->id = id;
	pq_up(a, q, q->npend - 1);
}

static void pq_remove_at(struct carve_adm *a, struct cq *q, size_t i)
{
	struct pqent last = q->pend[--q->npend];

	if (i == q->npend)
		return;
	q->pend[i] = last;
	if (i > 0 && pq_less(a, &last, &q->pend[(i - 1) / 2]))
		pq_up(a, q, i);
	else
		pq_down(a, q, i);
}

/* Removes pending workload id: the root in every use the cycle makes. */
void carve__pq_remove(struct carve_adm *a, struct cq *q, uint32_t id)
{
	size_t i;

	for (i = 0; i < q->npend && q->pend[i].id != id; i++)
		;
	if (i < q->npend)
		pq_remove_at(a, q, i);
}

/* Finished workloads are left in the heap and dropped when they surface. */
int carve__pq_top(struct carve_adm *a, struct cq *q)
{
	while (q->npend && a->cat.wls[q->pend[0].id].state != CARVE_WL_PENDING)
		pq_remove_at(a, q, 0);
	return q->npend ? (int)q->pend[0].id : -1;
}

/* Set aside (BestEffortFIFO); finished ones are dropped when the list is
 * put back into the heap. */
void carve__aside_push(struct carve_adm *a, struct cq *q, uint32_t id)
{
	(void)a;
	q->aside[q->naside++] = id;
}
