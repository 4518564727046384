/*
 * cluster.c - nodes and GPUs (see include/carve/cluster.h).
 *
 * Storage: nodes[] and gpus[] are flat growable arrays; every string and
 * label/taint array of a node is copied into the cluster's arena, so a
 * spec may be freed right after carve_cluster_add_node().  Adding is
 * all-or-nothing: everything is validated and copied before the counts move.
 * Names are indexed by an open-addressing hash table (node id + 1; 0 is a
 * free slot), at most half full, so lookups by name are O(1) on average.
 *
 * Memory: strings are interned (one arena copy per distinct string, found
 * through a second open-addressing set, at most half full; when that set
 * cannot grow, strings are simply copied), so a GPU model or a label that
 * thousands of nodes share is stored once; nodes[] and gpus[] grow by a
 * quarter at a time, so at most a fifth of them is slack.
 */
#include <limits.h>
#include <string.h>

#include "carve/arena.h"
#include "carve/cluster.h"

struct carve_cluster {
	struct carve_arena arena;
	struct carve_node *nodes;
	size_t nnodes, capnodes;
	struct carve_gpu *gpus;
	size_t ngpus, capgpus;
	uint32_t *ht;   /* name index: node id + 1, 0 = free */
	size_t htcap;   /* power of two, 0 before the first node */
	const char **st; /* interned strings (in the arena); NULL = free */
	size_t stcap, stn; /* stcap a power of two, 0 before the first string */
};

const char *carve_sharing_name(enum carve_sharing s)
{
	switch (s) {
	case CARVE_SHARE_EXCLUSIVE:
		return "exclusive";
	case CARVE_SHARE_MIG:
		return "mig";
	case CARVE_SHARE_TIMESLICE:
		return "timeslice";
	case CARVE_SHARE_FRACTION:
		return "fraction";
	}
	return "?";
}

struct carve_cluster *carve_cluster_create(void)
{
	struct carve_cluster *c = carve_calloc(1, sizeof(*c));

	if (c)
		carve_arena_init(&c->arena);
	return c;
}

void carve_cluster_destroy(struct carve_cluster *c)
{
	if (!c)
		return;
	carve_arena_cleanup(&c->arena);
	carve_free(c->nodes);
	carve_free(c->gpus);
	carve_free(c->ht);
	carve_free(c->st);
	carve_free(c);
}

static int reserve(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c += c / 4;
	p = carve_realloc(*arr, c * size);
	if (!p)
		return CARVE_ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

static size_t name_hash(const char *s)
{
	size_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void ht_put(uint32_t *ht, size_t cap, const char *name, uint32_t id)
{
	size_t i;

	for (i = name_hash(name) & (cap - 1); ht[i]; i = (i + 1) & (cap - 1))
		;
	ht[i] = id + 1;
}

/* Room in the index for `need` nodes; rehashing keeps the same contents, so
 * a later failure of add_node leaves the cluster as it was. */
static int ht_reserve(struct carve_cluster *c, size_t need)
{
	size_t cap = c->htcap ? c->htcap : 64, i;
	uint32_t *ht;

	while (need * 2 > cap)
		cap *= 2;
	if (cap == c->htcap)
		return 0;
	ht = carve_calloc(cap, sizeof(*ht));
	if (!ht)
		return CARVE_ENOMEM;
	for (i = 0; i < c->nnodes; i++)
		ht_put(ht, cap, c->nodes[i].name, (uint32_t)i);
	carve_free(c->ht);
	c->ht = ht;
	c->htcap = cap;
	return 0;
}

static int check_gpu(const struct carve_node_spec *s, size_t i, struct carve_error *err)
{
	const struct carve_gpu_spec *g = &s->gpus[i];
	struct carve_error e;

	switch (g->sharing) {
	case CARVE_SHARE_MIG:
		if (!g->mig_model)
			return carve_errorf(err, CARVE_EINVAL,
					    "node %s GPU %zu: MIG on a GPU model without MIG (%s)",
					    s->name, i, g->model ? g->model : "unknown");
		if (carve_mig_layout_check(g->mig_model, &g->mig, &e))
			return carve_errorf(err, CARVE_EINVAL, "node %s GPU %zu: %s",
					    s->name, i, e.text);
		break;
	case CARVE_SHARE_TIMESLICE:
		if (g->replicas < 1)
			return carve_errorf(err, CARVE_EINVAL,
					    "node %s GPU %zu: time-slicing needs at least 1 replica",
					    s->name, i);
		if (g->replicas > CARVE_TIMESLICE_MAX_REPLICAS)
			return carve_errorf(err, CARVE_EINVAL,
					    "node %s GPU %zu: time-slicing allows at most %d replicas",
					    s->name, i, CARVE_TIMESLICE_MAX_REPLICAS);
		break;
	case CARVE_SHARE_EXCLUSIVE:
	case CARVE_SHARE_FRACTION:
		break;
	default:
		return carve_errorf(err, CARVE_EINVAL, "node %s GPU %zu: unknown sharing mode",
				    s->name, i);
	}
	return 0;
}

/* Room in the string set for one more; false when it cannot grow. */
static bool st_reserve(struct carve_cluster *c)
{
	size_t cap = c->stcap ? c->stcap * 2 : 256, i, j;
	const char **st;

	if ((c->stn + 1) * 2 <= c->stcap)
		return true;
	st = carve_calloc(cap, sizeof(*st));
	if (!st)
		return false;
	for (i = 0; i < c->stcap; i++) {
		if (!c->st[i])
			continue;
		for (j = name_hash(c->st[i]) & (cap - 1); st[j]; j = (j + 1) & (cap - 1))
			;
		st[j] = c->st[i];
	}
	carve_free(c->st);
	c->st = st;
	c->stcap = cap;
	return true;
}

/* s in the arena: the interned copy when there is one (intern false: a
 * plain copy, for strings unique to one node or GPU such as names). */
static const char *cp_in(struct carve_cluster *c, const char *s, bool intern, bool *oom)
{
	const char *p;
	size_t i = 0;
	bool set;

	if (!s)
		return NULL;
	set = intern && st_reserve(c);
	if (set) {
		for (i = name_hash(s) & (c->stcap - 1); c->st[i]; i = (i + 1) & (c->stcap - 1))
			if (!strcmp(c->st[i], s))
				return c->st[i];
	}
	p = carve_arena_strdup(&c->arena, s);
	if (!p)
		*oom = true;
	else if (set) {
		c->st[i] = p;
		c->stn++;
	}
	return p;
}

static const char *cp(struct carve_cluster *c, const char *s, bool *oom)
{
	return cp_in(c, s, true, oom);
}

int carve_cluster_add_node(struct carve_cluster *c, const struct carve_node_spec *s,
			   struct carve_error *err)
{
	struct carve_node *n;
	struct carve_label *labels = NULL;
	struct carve_taint_spec *taints = NULL;
	bool oom = false;
	size_t i;
	int rc;

	if (!s->name || !*s->name)
		return carve_errorf(err, CARVE_EINVAL, "node without a name");
	if (carve_cluster_find_node(c, s->name) >= 0)
		return carve_errorf(err, CARVE_EEXISTS, "node %s is defined twice", s->name);
	if (s->ngpus > UINT16_MAX)
		return carve_errorf(err, CARVE_EINVAL, "node %s: %zu GPUs is too many", s->name,
				    s->ngpus);
	for (i = 0; i < s->ngpus; i++)
		if ((rc = check_gpu(s, i, err)))
			return rc;
	if (c->nnodes >= INT_MAX)
		return carve_errorf(err, CARVE_EINVAL, "too many nodes");
	if (reserve((void **)&c->nodes, &c->capnodes, c->nnodes + 1, sizeof(*c->nodes)) ||
	    reserve((void **)&c->gpus, &c->capgpus, c->ngpus + s->ngpus, sizeof(*c->gpus)) ||
	    ht_reserve(c, c->nnodes + 1))
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	if (s->nlabels) {
		labels = carve_arena_alloc(&c->arena, s->nlabels * sizeof(*labels));
		oom |= !labels;
		for (i = 0; labels && i < s->nlabels; i++) {
			labels[i].key = cp(c, s->labels[i].key, &oom);
			labels[i].value = cp(c, s->labels[i].value, &oom);
		}
	}
	if (s->ntaints) {
		taints = carve_arena_alloc(&c->arena, s->ntaints * sizeof(*taints));
		oom |= !taints;
		for (i = 0; taints && i < s->ntaints; i++) {
			taints[i].key = cp(c, s->taints[i].key, &oom);
			taints[i].value = cp(c, s->taints[i].value, &oom);
			taints[i].effect = cp(c, s->taints[i].effect, &oom);
		}
	}
	n = &c->nodes[c->nnodes];
	memset(n, 0, sizeof(*n));
	n->id = (uint32_t)c->nnodes;
	n->name = cp_in(c, s->name, false, &oom);
	n->pool = cp(c, s->pool, &oom);
	n->block = cp(c, s->block, &oom);
	n->rack = cp(c, s->rack, &oom);
	n->nlabels = s->nlabels;
	n->labels = labels;
	n->ntaints = s->ntaints;
	n->taints = taints;
	n->cpu_milli = s->cpu_milli;
	n->memory_milli = s->memory_milli;
	n->pods = s->pods;
	n->gpu_first = (uint32_t)c->ngpus;
	n->ngpus = (uint32_t)s->ngpus;
	n->pos = s->pos;
	for (i = 0; i < s->ngpus; i++) {
		const struct carve_gpu_spec *gs = &s->gpus[i];
		struct carve_gpu *g = &c->gpus[c->ngpus + i];

		memset(g, 0, sizeof(*g));
		g->node = n->id;
		g->index = (uint16_t)i;
		g->sharing = gs->sharing;
		g->replicas = gs->sharing == CARVE_SHARE_TIMESLICE ? gs->replicas : 1;
		g->fail_gt_one = gs->sharing == CARVE_SHARE_TIMESLICE && gs->fail_gt_one;
		g->memory_mib = gs->memory_mib;
		g->model = cp(c, gs->model, &oom);
		g->uuid = cp_in(c, gs->uuid, false, &oom);
		if (gs->sharing == CARVE_SHARE_MIG) {
			g->mig_model = gs->mig_model;
			g->mig = gs->mig;
		}
	}
	if (oom)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	ht_put(c->ht, c->htcap, n->name, n->id);
	c->ngpus += s->ngpus;
	return (int)c->nnodes++;
}

size_t carve_cluster_node_count(const struct carve_cluster *c)
{
	return c->nnodes;
}

size_t carve_cluster_gpu_count(const struct carve_cluster *c)
{
	return c->ngpus;
}

const struct carve_node *carve_cluster_node(const struct carve_cluster *c, uint32_t id)
{
	return id < c->nnodes ? &c->nodes[id] : NULL;
}

const struct carve_gpu *carve_cluster_gpu(const struct carve_cluster *c, uint32_t id)
{
	return id < c->ngpus ? &c->gpus[id] : NULL;
}

int carve_cluster_find_node(const struct carve_cluster *c, const char *name)
{
	size_t i, mask = c->htcap - 1;

	if (!c->htcap)
		return CARVE_ENOTFOUND;
	for (i = name_hash(name) & mask; c->ht[i]; i = (i + 1) & mask)
		if (!strcmp(c->nodes[c->ht[i] - 1].name, name))
			return (int)(c->ht[i] - 1);
	return CARVE_ENOTFOUND;
}

const char *carve_node_label(const struct carve_node *n, const char *key)
{
	size_t i;

	for (i = 0; i < n->nlabels; i++)
		if (!strcmp(n->labels[i].key, key))
			return n->labels[i].value;
	return NULL;
}

unsigned carve_gpu_units(const struct carve_gpu *g)
{
	switch (g->sharing) {
	case CARVE_SHARE_MIG:
		return g->mig.n;
	case CARVE_SHARE_TIMESLICE:
		return g->replicas;
	default:
		return 1;
	}
}
