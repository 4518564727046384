/*
 * place_cache.c - the placer's decision cache: per recent request shape,
 * every node's score and a tournament tree of the winners, so a pod of a
 * shape seen before is placed in O(changed nodes x log n) instead of a
 * scan of every node (docs/internals/PLACEMENT.md, "Performance").
 *
 * Why it is exact.  For a policy marked `cacheable` the chooser and the
 * score of node n read only n's own state (place_int.h), static facts and
 * the request, never the RNG or another node.  So a node's score changes
 * only when that node's state does, and every such change goes through
 * account() (apply, release, retake; a Dynamic MIG repartition is part of
 * apply on that node), which logs the node (carve__cache_touch).  Anything
 * else a score may read (the mix, the MIG wants, Dynamic MIG on/off) drops
 * every slot (carve__cache_invalidate).  A slot holds the score a scan
 * would compute for each node (NaN: not feasible, never chosen) and, per
 * group of CARVE__FAN entries of a level, the one that wins: higher score,
 * then lower p->rank, exactly carve__place_pod()'s rule (place_pod.c), which
 * is a strict total order; its maximum does not depend on the order a scan
 * visits the nodes.
 * The root is the node a full scan would pick.
 *
 * Slots are keyed by the request's full content (every field and string
 * that feasibility, the choice and the score can read), serialised into
 * CARVE__KEY_MAX bytes; a request that does not fit is not cached.  The
 * change log is a ring of CARVE__CHG_CAP node ids with a running count; a
 * slot that fell further behind than the ring is rebuilt.  Least recently
 * used slots are reused.
 *
 * Gang-local trees.  A gang group tried in a topology domain borrows the
 * least recently used slot as a tree over the domain's nodes (map[]): built
 * once, then only the leaf of the pod just placed is re-scored, since
 * nothing but the group's own placements changes the state meanwhile.  The
 * borrowed slot stays invalid until carve__cache_get() takes it again.
 *
 * Ownership: everything is allocated by carve__cache_init() (placer
 * create) and freed by carve__cache_free(); using the cache allocates
 * nothing.  No clock, no RNG.
 */
#include <string.h>

#include "place_int.h"

#define NONE UINT32_MAX

/* ---- request keys ------------------------------------------------------------ */

struct kbuf {
	unsigned char *b;
	size_t n;
	bool over;
};

static void put(struct kbuf *k, const void *v, size_t n)
{
	if (k->over || k->n + n > CARVE__KEY_MAX) {
		k->over = true;
		return;
	}
	memcpy(k->b + k->n, v, n);
	k->n += n;
}

static void put_u64(struct kbuf *k, uint64_t v)
{
	put(k, &v, sizeof(v));
}

/* NULL and "" differ: NULL is length all-ones. */
static void put_str(struct kbuf *k, const char *s)
{
	uint64_t len = s ? strlen(s) : UINT64_MAX;

	put_u64(k, len);
	if (s)
		put(k, s, (size_t)len);
}

/* The request's content into buf; its length, or 0 when it does not fit. */
static size_t req_key(const struct carve_pod_req *r, unsigned char *buf)
{
	struct kbuf k = {buf, 0, false};
	size_t i, j, v;

	put_u64(&k, (uint64_t)r->cpu_milli);
	put_u64(&k, (uint64_t)r->memory_milli);
	put_u64(&k, (uint64_t)r->gpu);
	put_u64(&k, (uint64_t)(int64_t)r->count);
	put_u64(&k, (uint64_t)(int64_t)r->milli);
	put_u64(&k, r->mem_mib);
	put_str(&k, r->gpu == CARVE_GREQ_MIG ? r->mig_profile : NULL);
	put_u64(&k, r->nmodels);
	for (i = 0; i < r->nmodels; i++)
		put_str(&k, r->models[i]);
	put_u64(&k, r->nselector);
	for (i = 0; i < r->nselector; i++) {
		put_str(&k, r->selector[i].key);
		put_str(&k, r->selector[i].value);
	}
	put_u64(&k, r->nterms);
	for (i = 0; i < r->nterms; i++) {
		const struct carve_match_term *t = &r->terms[i];

		put_u64(&k, t->n);
		for (j = 0; j < t->n; j++) {
			const struct carve_match_expr *e = &t->exprs[j];

			put_str(&k, e->key);
			put_str(&k, e->op);
			put_u64(&k, e->nvalues);
			for (v = 0; v < e->nvalues; v++)
				put_str(&k, e->values[v]);
		}
	}
	put_u64(&k, r->ntolerations);
	for (i = 0; i < r->ntolerations; i++) {
		put_str(&k, r->tolerations[i].key);
		put_str(&k, r->tolerations[i].op);
		put_str(&k, r->tolerations[i].value);
		put_str(&k, r->tolerations[i].effect);
	}
	return k.over ? 0 : k.n;
}

/* ---- the tournament tree ------------------------------------------------------- */

/* Leaves of a slot: the nodes (map NULL, nleaf = nnodes), or for a
 * gang-local tree the candidates map[0 .. nleaf); scores are per leaf. */
static uint32_t leaf_node(const struct carve__slot *s, uint32_t x)
{
	return s->map ? s->map[x] : x;
}

/* Leaf a beats leaf b: a feasible, and b not, or a higher score, or equal
 * and a lower rank. */
static bool beats(const struct carve_placer *p, const struct carve__slot *s, uint32_t a,
		  uint32_t b)
{
	const double *sc = s->score;

	if (a == NONE || sc[a] != sc[a])
		return false;
	if (b == NONE || sc[b] != sc[b])
		return true;
	return sc[a] > sc[b] ||
	       (sc[a] == sc[b] && p->rank[leaf_node(s, a)] < p->rank[leaf_node(s, b)]);
}

/* Entry i of level l (l >= 1) from its children (nchild of them in use). */
static void fix(const struct carve_placer *p, struct carve__slot *s, uint32_t l, uint32_t i,
		uint32_t nchild)
{
	uint32_t first = i * CARVE__FAN, end = first + CARVE__FAN, best = NONE, k, x;
	const uint32_t *child = l == 1 ? NULL : s->win + p->lvl_off[l - 1];

	if (end > nchild)
		end = nchild;
	for (k = first; k < end; k++) {
		x = child ? child[k] : k;
		if (beats(p, s, x, best))
			best = x;
	}
	s->win[p->lvl_off[l] + i] = best;
}

/* Leaf x's score changed: its path to the root. */
static void fix_path(const struct carve_placer *p, struct carve__slot *s, uint32_t x)
{
	uint32_t l, i = x, nchild = s->nleaf;

	for (l = 1; l < p->nlvl; l++) {
		i /= CARVE__FAN;
		fix(p, s, l, i, nchild);
		nchild = (nchild + CARVE__FAN - 1) / CARVE__FAN;
	}
}

/* Every level from the leaves' scores. */
static void build_tree(struct carve_placer *p, struct carve__slot *s)
{
	uint32_t l, i, nchild = s->nleaf, cnt;

	for (l = 1; l < p->nlvl; l++) {
		cnt = (nchild + CARVE__FAN - 1) / CARVE__FAN;
		for (i = 0; i < cnt; i++)
			fix(p, s, l, i, nchild);
		nchild = cnt;
	}
}

static void rebuild(struct carve_placer *p, struct carve__slot *s, const struct carve_pod_req *req)
{
	uint32_t n;

	s->map = NULL;
	s->nleaf = (uint32_t)p->nnodes;
	for (n = 0; n < p->nnodes; n++)
		s->score[n] = carve__node_eval(p, req, n);
	build_tree(p, s);
	s->seq = p->chg_seq;
	s->epoch = p->cache_epoch;
	s->valid = true;
}

/* The root's leaf, or NONE when no leaf is feasible. */
static uint32_t root(const struct carve_placer *p, const struct carve__slot *s)
{
	uint32_t x = s->nleaf ? s->win[p->lvl_off[p->nlvl - 1]] : NONE;

	return x != NONE && s->score[x] == s->score[x] ? x : NONE;
}

/* ---- public to the placer ------------------------------------------------------ */

int carve__cache_init(struct carve_placer *p)
{
	uint32_t l, n = (uint32_t)p->nnodes, total = 0;
	size_t i, ns;

	if (!n)
		return 0;
	/* Levels: 0 the nodes, then ceil(prev / FAN) each, down to one. */
	p->lvl_n[0] = n;
	for (l = 1; p->lvl_n[l - 1] > 1 || l == 1; l++) {
		if (l >= CARVE__MAX_LVL)
			return CARVE_ENOMEM;
		p->lvl_n[l] = (p->lvl_n[l - 1] + CARVE__FAN - 1) / CARVE__FAN;
		p->lvl_off[l] = total;
		total += p->lvl_n[l];
	}
	p->nlvl = l;
	ns = CARVE__SLOT_BYTES / ((size_t)n * sizeof(double) + (size_t)total * sizeof(uint32_t));
	ns = ns < CARVE__SLOTS_MIN ? CARVE__SLOTS_MIN : ns > CARVE__SLOTS_MAX ? CARVE__SLOTS_MAX : ns;
	p->slots = carve_calloc(ns, sizeof(*p->slots));
	p->chg = carve_calloc(CARVE__CHG_CAP, sizeof(*p->chg));
	if (!p->slots || !p->chg)
		return CARVE_ENOMEM;
	p->nslots = ns;
	for (i = 0; i < p->nslots; i++) {
		p->slots[i].score = carve_calloc(n, sizeof(double));
		p->slots[i].win = carve_calloc(total, sizeof(uint32_t));
		if (!p->slots[i].score || !p->slots[i].win)
			return CARVE_ENOMEM;
	}
	return 0;
}

void carve__cache_free(struct carve_placer *p)
{
	size_t i;

	for (i = 0; p->slots && i < p->nslots; i++) {
		carve_free(p->slots[i].score);
		carve_free(p->slots[i].win);
	}
	carve_free(p->slots);
	carve_free(p->chg);
}

void carve__cache_touch(struct carve_placer *p, uint32_t node)
{
	if (p->chg)
		p->chg[p->chg_seq++ % CARVE__CHG_CAP] = node;
}

void carve__cache_invalidate(struct carve_placer *p)
{
	p->cache_epoch++;
}

struct carve__slot *carve__cache_get(struct carve_placer *p, const struct carve_pod_req *req)
{
	struct carve__slot *s, *lru = NULL;
	size_t len, i;

	if (!p->nslots || !p->pol->cacheable)
		return NULL;
	len = req_key(req, p->keybuf);
	if (!len)
		return NULL;
	p->stamp++;
	for (i = 0; i < p->nslots; i++) {
		s = &p->slots[i];
		if (s->valid && s->keylen == len && !memcmp(s->key, p->keybuf, len)) {
			s->used = p->stamp;
			return s;
		}
		if (!lru || (lru->valid && (!s->valid || s->used < lru->used)))
			lru = s;
	}
	if (!lru)
		return NULL;
	s = lru;
	memcpy(s->key, p->keybuf, len);
	s->keylen = (uint16_t)len;
	s->used = p->stamp;
	s->valid = false;
	s->map = NULL; /* a cache slot again, should it have been borrowed */
	return s;
}

uint32_t carve__cache_best(struct carve_placer *p, struct carve__slot *s,
			   const struct carve_pod_req *req)
{
	uint64_t q;
	uint32_t n, last = NONE;

	if (!s->valid || s->epoch != p->cache_epoch || p->chg_seq - s->seq > CARVE__CHG_CAP) {
		rebuild(p, s, req);
	} else {
		for (q = s->seq; q < p->chg_seq; q++) {
			n = p->chg[q % CARVE__CHG_CAP];
			if (n == last)
				continue;
			last = n;
			s->score[n] = carve__node_eval(p, req, n);
			fix_path(p, s, n);
		}
		s->seq = p->chg_seq;
	}
	return root(p, s);
}

struct carve__slot *carve__cache_local(struct carve_placer *p, const struct carve_pod_req *req,
				       const uint32_t *cands, size_t ncands)
{
	struct carve__slot *s = NULL;
	uint32_t x;
	size_t i;

	if (!p->nslots || !p->pol->cacheable || ncands > p->nnodes)
		return NULL;
	for (i = 0; i < p->nslots; i++)
		if (!s || (s->valid && (!p->slots[i].valid || p->slots[i].used < s->used)))
			s = &p->slots[i];
	s->valid = false;
	s->keylen = 0;
	s->map = cands;
	s->nleaf = (uint32_t)ncands;
	for (x = 0; x < s->nleaf; x++)
		s->score[x] = carve__node_eval(p, req, cands[x]);
	build_tree(p, s);
	return s;
}

uint32_t carve__cache_local_best(struct carve_placer *p, const struct carve__slot *s)
{
	return root(p, s);
}

void carve__cache_local_changed(struct carve_placer *p, struct carve__slot *s,
				const struct carve_pod_req *req, uint32_t x)
{
	s->score[x] = carve__node_eval(p, req, s->map[x]);
	fix_path(p, s, x);
}
