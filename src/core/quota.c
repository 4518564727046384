/*
 * quota.c - the quota tree: ClusterQueues and Cohorts, per (flavor,
 * resource) nominal quota, borrowing and lending limits, and usage.
 *
 * The arithmetic is Kueue's hierarchical one:
 *   guaranteed(n)  = subtree(n) - lendingLimit(n)   (0 without a limit):
 *                    the part of n's quota nobody else may use;
 *   subtree(n)     = nominal(n) + sum over children c of (subtree(c) - guaranteed(c));
 *   usage(cohort)  = sum over children c of max(0, usage(c) - guaranteed(c));
 *   available(n)   = subtree - usage at a root; else
 *                    max(0, guaranteed - usage) + available(parent), the
 *                    parent part capped by borrowingLimit;
 *   potential(n)   = the same ignoring usage: the most n could ever get.
 * Invariant: usage of every cohort equals that formula over its children
 * at all times; carve__qt_add_usage() keeps it so by walking up from the queue.
 */
#include <string.h>

#include "admit_int.h"
#include "carve/quantity.h"

/* carve_qty_sat_add with an unlimited operand absorbing: QTY_INF (=
 * INT64_MAX, what the saturating add clamps to) plus anything, even a
 * negative, stays unlimited. */
int64_t carve__sat_add(int64_t x, int64_t y)
{
	if (x == QTY_INF || y == QTY_INF)
		return QTY_INF;
	return carve_qty_sat_add(x, y);
}

static int64_t max64(int64_t x, int64_t y)
{
	return x > y ? x : y;
}

static int64_t min64(int64_t x, int64_t y)
{
	return x < y ? x : y;
}

int carve__fr_id(const struct carve_adm *a, int flavor, int res)
{
	if (flavor < 0 || res < 0 || (size_t)flavor >= a->cat.nflavors || res >= CARVE_RES_MAX)
		return -1;
	return a->qt.fr_of[flavor * CARVE_RES_MAX + res];
}

int64_t carve__qt_guaranteed(const struct carve_adm *a, int node, int fr)
{
	const struct qnode *n = &a->qt.nodes[node];

	if (n->llimit[fr] == QTY_INF)
		return 0;
	return max64(0, n->subtree[fr] - n->llimit[fr]);
}

/*
 * What node may still take of fr: Kueue's available quota, and never more
 * than would take node's usage past INT64_MAX milli.  What node takes
 * beyond its guaranteed quota reaches its parent and is at most the
 * parent's available, so the cap at every level keeps every usage of the
 * tree in range (carve__qt_can_add).
 */
int64_t carve__qt_available(const struct carve_adm *a, int node, int fr)
{
	const struct qnode *n = &a->qt.nodes[node];
	int64_t g, local, pav;

	if (n->parent < 0)
		return n->subtree[fr] - n->usage[fr];
	g = carve__qt_guaranteed(a, node, fr);
	local = max64(0, g - n->usage[fr]);
	pav = carve__qt_available(a, n->parent, fr);
	if (n->blimit[fr] != QTY_INF) {
		int64_t stored = n->subtree[fr] - g;
		int64_t used = max64(0, n->usage[fr] - g);

		pav = min64(carve__sat_add(stored - used, n->blimit[fr]), pav);
	}
	return min64(carve_qty_sat_add(local, pav), INT64_MAX - n->usage[fr]);
}

int64_t carve__qt_potential(const struct carve_adm *a, int node, int fr)
{
	const struct qnode *n = &a->qt.nodes[node];
	int64_t av;

	if (n->parent < 0)
		return n->subtree[fr];
	av = carve__sat_add(carve__qt_guaranteed(a, node, fr), carve__qt_potential(a, n->parent, fr));
	if (n->blimit[fr] != QTY_INF)
		av = min64(av, carve__sat_add(n->subtree[fr], n->blimit[fr]));
	return av;
}

bool carve__qt_borrowing_with(const struct carve_adm *a, int node, int fr, int64_t val)
{
	const struct qnode *n = &a->qt.nodes[node];

	return carve__sat_add(n->usage[fr], val) > n->subtree[fr];
}

bool carve__qt_borrowing(const struct carve_adm *a, int node, int fr)
{
	return carve__qt_borrowing_with(a, node, fr, 0);
}

/* Quota of node not visible to its parent that usage leaves free:
 * max(0, guaranteed - usage) (Kueue's LocalAvailable). */
static int64_t local_available(const struct carve_adm *a, int node, int fr)
{
	return max64(0, carve__qt_guaranteed(a, node, fr) - a->qt.nodes[node].usage[fr]);
}

/*
 * The lowest subtree that holds val more of fr for node (Kueue's
 * FindHeightOfLowestSubtreeThatFits): node itself when it does not borrow
 * (or is a root); else the first ancestor whose subtree takes what its
 * children's guaranteed quota leaves of the request (without borrowing
 * itself); the root when none does.
 */
int carve__qt_fit_subtree(const struct carve_adm *a, int node, int fr, int64_t val)
{
	int64_t remaining;

	if (a->qt.nodes[node].parent < 0 || !carve__qt_borrowing_with(a, node, fr, val))
		return node;
	remaining = val - local_available(a, node, fr);
	for (node = a->qt.nodes[node].parent; a->qt.nodes[node].parent >= 0;
	     node = a->qt.nodes[node].parent) {
		if (!carve__qt_borrowing_with(a, node, fr, remaining))
			return node;
		remaining -= local_available(a, node, fr);
	}
	return node;
}

/*
 * Borrowing level of a request of val (Kueue's Assignment.Borrowing): 0
 * when it fits in the node's own quota, else the height of the lowest
 * subtree that holds it (carve__qt_fit_subtree; a height is the distance to the
 * deepest leaf below), so borrowing from a nearer, smaller subtree is a
 * lower level than borrowing from one that spans more of the tree.
 */
int carve__qt_borrow_level(const struct carve_adm *a, int node, int fr, int64_t val)
{
	int n = carve__qt_fit_subtree(a, node, fr, val);

	return n == node ? 0 : a->qt.nodes[n].height;
}

/*
 * Whether adding delta (>= 0) to node's usage of fr keeps every usage on
 * the way up within INT64_MAX: the walk carve__qt_add_usage makes, without
 * writing.
 */
bool carve__qt_can_add(const struct carve_adm *a, int node, int fr, int64_t delta)
{
	while (node >= 0 && delta > 0) {
		const struct qnode *n = &a->qt.nodes[node];
		int64_t g = carve__qt_guaranteed(a, node, fr);
		int64_t before = max64(0, n->usage[fr] - g);

		if (delta > INT64_MAX - n->usage[fr])
			return false;
		delta = max64(0, n->usage[fr] + delta - g) - before;
		node = n->parent;
	}
	return true;
}

bool carve__qt_can_charge(const struct carve_adm *a, int node, const struct frq *use, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (use[i].fr >= 0 && !carve__qt_can_add(a, node, use[i].fr, use[i].q))
			return false;
	return true;
}

int64_t carve__qt_headroom(const struct carve_adm *a, int node, int fr)
{
	int64_t h = INT64_MAX;

	for (; node >= 0; node = a->qt.nodes[node].parent)
		h = min64(h, INT64_MAX - a->qt.nodes[node].usage[fr]);
	return h;
}

/* Usage stays exact: callers add only what carve__qt_can_add allows (the
 * engine refuses or does not admit the rest), and take back what they
 * added. */
void carve__qt_add_usage(struct carve_adm *a, int node, int fr, int64_t delta)
{
	while (node >= 0 && delta) {
		struct qnode *n = &a->qt.nodes[node];
		int64_t g = carve__qt_guaranteed(a, node, fr);
		int64_t before = max64(0, n->usage[fr] - g);
		int64_t after;

		n->usage[fr] += delta;
		after = max64(0, n->usage[fr] - g);
		delta = after - before;
		node = n->parent;
	}
}

int carve__qt_root(const struct carve_adm *a, int node)
{
	return a->qt.nodes[node].root;
}

bool carve__qt_fits(const struct carve_adm *a, int node, const struct frq *use, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (use[i].fr >= 0 && use[i].q > carve__qt_available(a, node, use[i].fr))
			return false;
		else if (use[i].fr < 0 && use[i].q > 0)
			return false;
	return true;
}

/* ---- building ---- */

static int add_fr(struct carve_adm *a, int flavor, int res)
{
	int *slot = &a->qt.fr_of[flavor * CARVE_RES_MAX + res];

	if (*slot < 0)
		*slot = a->qt.nfr++;
	return *slot;
}

static int find_flavor(const struct carve_adm *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->cat.nflavors; i++)
		if (!strcmp(a->cat.flavors[i].spec.name, name))
			return (int)i;
	return -1;
}

/* Assigns fr ids for every (flavor, resource) a node lists. */
static int collect_frs(struct carve_adm *a, const struct qnode *n, struct carve_error *err)
{
	size_t g, f, r;

	for (g = 0; g < n->ngroups; g++) {
		const struct carve_rgroup_spec *gs = &n->groups[g];

		for (f = 0; f < gs->nflavors; f++) {
			int fl = find_flavor(a, gs->flavors[f]);

			if (fl < 0)
				return carve_errorf(err, CARVE_EINVAL,
						    "%s %s: flavor '%s' is not defined",
						    n->is_cq ? "ClusterQueue" : "Cohort", n->name,
						    gs->flavors[f]);
			for (r = 0; r < gs->nres; r++) {
				int id = carve_resreg_intern(a->cat.res, gs->resources[r]);

				if (id < 0)
					return carve_errorf(err, id, "%s: too many distinct resources",
							    gs->resources[r]);
				add_fr(a, fl, id);
			}
		}
	}
	return 0;
}

static int alloc_node_arrays(struct carve_adm *a, struct qnode *n)
{
	int64_t **arrs[] = {&n->nominal, &n->blimit, &n->llimit, &n->subtree, &n->usage};
	size_t i;
	int k, nfr = a->qt.nfr ? a->qt.nfr : 1;

	for (i = 0; i < sizeof(arrs) / sizeof(arrs[0]); i++) {
		*arrs[i] = carve_arena_alloc(&a->arena, (size_t)nfr * sizeof(int64_t));
		if (!*arrs[i])
			return CARVE_ENOMEM;
	}
	for (k = 0; k < nfr; k++) {
		n->blimit[k] = QTY_INF;
		n->llimit[k] = QTY_INF;
	}
	return 0;
}

static void fill_quota(struct carve_adm *a, struct qnode *n)
{
	size_t g, f, r;

	for (g = 0; g < n->ngroups; g++) {
		const struct carve_rgroup_spec *gs = &n->groups[g];

		for (f = 0; f < gs->nflavors; f++) {
			int fl = find_flavor(a, gs->flavors[f]);

			for (r = 0; r < gs->nres; r++) {
				const struct carve_fquota *q = &gs->quota[f * gs->nres + r];
				int fr = carve__fr_id(a, fl, carve_resreg_find(a->cat.res, gs->resources[r]));

				if (fr < 0 || !q->present)
					continue;
				n->nominal[fr] = q->nominal;
				if (q->has_borrowing_limit)
					n->blimit[fr] = q->borrowing_limit;
				if (q->has_lending_limit)
					n->llimit[fr] = q->lending_limit;
			}
		}
	}
}

static int find_node(const struct carve_adm *a, const char *name, bool cq)
{
	size_t i;

	for (i = 0; i < a->qt.nnodes; i++)
		if (a->qt.nodes[i].is_cq == cq && !strcmp(a->qt.nodes[i].name, name))
			return (int)i;
	return -1;
}

/* Node for cohort `name`, created implicitly when only named. */
static int cohort_node(struct carve_adm *a, const char *name)
{
	int i = find_node(a, name, false);
	struct qnode *n;

	if (i >= 0)
		return i;
	if (a->qt.nnodes == a->qt.capnodes) {
		size_t c = a->qt.capnodes ? a->qt.capnodes * 2 : 16;
		struct qnode *v = carve_realloc(a->qt.nodes, c * sizeof(*v));

		if (!v)
			return CARVE_ENOMEM;
		a->qt.nodes = v;
		a->qt.capnodes = c;
	}
	n = &a->qt.nodes[a->qt.nnodes];
	memset(n, 0, sizeof(*n));
	n->name = carve_arena_strdup(&a->arena, name);
	if (!n->name)
		return CARVE_ENOMEM;
	n->cq = -1;
	n->parent = -1;
	n->fair_weight_milli = 1000;
	return (int)a->qt.nnodes++;
}

/* Subtree quotas bottom-up: children before parents (by depth, deepest first). */
static void compute_subtrees(struct carve_adm *a)
{
	int maxdepth = 0, d, fr;
	size_t i;

	for (i = 0; i < a->qt.nnodes; i++)
		if (a->qt.nodes[i].depth > maxdepth)
			maxdepth = a->qt.nodes[i].depth;
	for (i = 0; i < a->qt.nnodes; i++)
		for (fr = 0; fr < a->qt.nfr; fr++)
			a->qt.nodes[i].subtree[fr] = a->qt.nodes[i].nominal[fr];
	for (d = maxdepth; d > 0; d--)
		for (i = 0; i < a->qt.nnodes; i++) {
			struct qnode *n = &a->qt.nodes[i];

			if (n->depth != d || n->parent < 0)
				continue;
			for (fr = 0; fr < a->qt.nfr; fr++)
				a->qt.nodes[n->parent].subtree[fr] =
					carve__sat_add(a->qt.nodes[n->parent].subtree[fr],
						n->subtree[fr] - carve__qt_guaranteed(a, (int)i, fr));
		}
}

/* Heights (distance to the deepest leaf): 0 for a ClusterQueue or an empty
 * cohort, 1 for a cohort of ClusterQueues only, one more than its highest
 * child cohort otherwise.  Children before parents (deepest first). */
static void compute_heights(struct carve_adm *a)
{
	int maxdepth = 0, d;
	size_t i;

	for (i = 0; i < a->qt.nnodes; i++) {
		a->qt.nodes[i].height = 0;
		if (a->qt.nodes[i].depth > maxdepth)
			maxdepth = a->qt.nodes[i].depth;
	}
	for (d = maxdepth; d > 0; d--)
		for (i = 0; i < a->qt.nnodes; i++) {
			const struct qnode *n = &a->qt.nodes[i];
			struct qnode *p;

			if (n->depth != d || n->parent < 0)
				continue;
			p = &a->qt.nodes[n->parent];
			if (p->height < n->height + 1)
				p->height = n->height + 1;
		}
}

int carve__qt_finalize(struct carve_adm *a, struct carve_error *err)
{
	size_t i, ncq_nodes = a->qt.nnodes;
	int rc;

	a->qt.fr_of = carve_arena_alloc(&a->arena, (a->cat.nflavors ? a->cat.nflavors : 1) *
						  CARVE_RES_MAX * sizeof(int));
	if (!a->qt.fr_of)
		return CARVE_ENOMEM;
	for (i = 0; i < a->cat.nflavors * CARVE_RES_MAX; i++)
		a->qt.fr_of[i] = -1;
	/* Implicit cohorts named by queues or as parents. */
	for (i = 0; i < a->cat.ncqs; i++)
		if (a->cat.cqs[i].spec.cohort) {
			rc = cohort_node(a, a->cat.cqs[i].spec.cohort);
			if (rc < 0)
				return carve_errorf(err, rc, "out of memory");
		}
	for (i = 0; i < a->qt.nnodes; i++)
		if (!a->qt.nodes[i].is_cq && a->qt.nodes[i].parent_name) {
			rc = cohort_node(a, a->qt.nodes[i].parent_name);
			if (rc < 0)
				return carve_errorf(err, rc, "out of memory");
		}
	(void)ncq_nodes;
	for (i = 0; i < a->qt.nnodes; i++) {
		struct qnode *n = &a->qt.nodes[i];
		const char *pname = n->is_cq ? a->cat.cqs[n->cq].spec.cohort : n->parent_name;

		n->parent = pname ? find_node(a, pname, false) : -1;
		if ((rc = collect_frs(a, n, err)))
			return rc;
	}
	/* Depths, refusing cycles. */
	for (i = 0; i < a->qt.nnodes; i++) {
		int d = 0, cur = (int)i;

		while (a->qt.nodes[cur].parent >= 0) {
			cur = a->qt.nodes[cur].parent;
			if (++d > (int)a->qt.nnodes)
				return carve_errorf(err, CARVE_EINVAL,
						    "cohort %s is part of a parent cycle",
						    a->qt.nodes[cur].name);
		}
		a->qt.nodes[i].depth = d;
		a->qt.nodes[i].root = cur;
	}
	/* Each root's ClusterQueues, for victim search within a cohort tree. */
	a->qt.root_cqs = carve_arena_alloc(&a->arena, (a->cat.ncqs ? a->cat.ncqs : 1) * sizeof(int));
	if (!a->qt.root_cqs)
		return CARVE_ENOMEM;
	for (i = 0; i < a->cat.ncqs; i++)
		a->qt.nodes[a->qt.nodes[a->cat.cqs[i].node].root].rcq_n++;
	{
		int off = 0;

		for (i = 0; i < a->qt.nnodes; i++) {
			a->qt.nodes[i].rcq_first = off;
			off += a->qt.nodes[i].rcq_n;
			a->qt.nodes[i].rcq_n = 0;
		}
	}
	for (i = 0; i < a->cat.ncqs; i++) {
		struct qnode *r = &a->qt.nodes[a->qt.nodes[a->cat.cqs[i].node].root];

		a->qt.root_cqs[r->rcq_first + r->rcq_n++] = (int)i;
	}
	a->qt.fr_flavor = carve_arena_alloc(&a->arena, (size_t)(a->qt.nfr ? a->qt.nfr : 1) * sizeof(int));
	a->qt.fr_res = carve_arena_alloc(&a->arena, (size_t)(a->qt.nfr ? a->qt.nfr : 1) * sizeof(int));
	if (!a->qt.fr_flavor || !a->qt.fr_res)
		return CARVE_ENOMEM;
	for (i = 0; i < a->cat.nflavors * CARVE_RES_MAX; i++)
		if (a->qt.fr_of[i] >= 0) {
			a->qt.fr_flavor[a->qt.fr_of[i]] = (int)(i / CARVE_RES_MAX);
			a->qt.fr_res[a->qt.fr_of[i]] = (int)(i % CARVE_RES_MAX);
		}
	for (i = 0; i < a->qt.nnodes; i++) {
		if (alloc_node_arrays(a, &a->qt.nodes[i]))
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
		fill_quota(a, &a->qt.nodes[i]);
	}
	compute_subtrees(a);
	compute_heights(a);
	return 0;
}

/*
 * Fair-sharing share of node (a queue or cohort) at its current usage, as
 * Kueue computes a node's dominant resource share (pkg/cache/scheduler/
 * fair_sharing.go, dominantResourceShare and calculateLendable): for each
 * resource, what the node uses beyond its subtree quota, summed over
 * flavors, relative to what its parent could at most hold of that resource
 * (carve__qt_potential, summed over flavors), in thousandths; the largest
 * ratio, divided by the weight: unrounded in weighted (what shares are
 * compared by, as Kueue's CompareDRS compares PreciseWeightedShare) and
 * rounded up in value (Kueue's roundedWeightedShare; 0 iff the share is 0).
 * A root's share is 0.  Weight 0: value INT64_MAX when the node borrows
 * anything, 0 when it does not; ratio is the unweighted ratio, the
 * tie-break between two infinite shares.
 */
struct carve_share carve__qt_share(const struct carve_adm *a, int node)
{
	const struct qnode *n = &a->qt.nodes[node];
	int64_t borrowed[CARVE_RES_MAX] = {0}, lendable[CARVE_RES_MAX] = {0};
	struct carve_share sh = {0, 0.0, false, 0.0};
	int fr, r;

	if (n->parent < 0)
		return sh;
	for (fr = 0; fr < a->qt.nfr; fr++) {
		int64_t b = n->usage[fr] - n->subtree[fr];

		if (b > 0) {
			borrowed[a->qt.fr_res[fr]] = carve_qty_sat_add(borrowed[a->qt.fr_res[fr]], b);
			sh.borrowing = true;
		}
	}
	if (!sh.borrowing)
		return sh;
	for (fr = 0; fr < a->qt.nfr; fr++)
		if (borrowed[a->qt.fr_res[fr]] > 0)
			lendable[a->qt.fr_res[fr]] = carve__sat_add(lendable[a->qt.fr_res[fr]],
							carve__qt_potential(a, n->parent, fr));
	for (r = 0; r < CARVE_RES_MAX; r++)
		if (borrowed[r] > 0 && lendable[r] > 0 && lendable[r] != QTY_INF) {
			double ratio = (double)borrowed[r] * 1000.0 / (double)lendable[r];

			if (ratio > sh.ratio)
				sh.ratio = ratio;
		}
	if (n->fair_weight_milli <= 0) {
		sh.value = INT64_MAX;
	} else {
		double w = sh.ratio * 1000.0 / (double)n->fair_weight_milli;

		sh.weighted = w;
		sh.value = w >= 9.2e18 ? INT64_MAX - 1 : (int64_t)w;
		if (sh.value < INT64_MAX - 1 && (double)sh.value < w)
			sh.value++; /* rounded up */
	}
	return sh;
}

/* Kueue's CompareDRS: an infinite share above every finite one, two
 * infinite shares by their unweighted ratio, finite ones by the exact
 * weighted ratio (not the rounded thousandths). */
int carve__share_cmp(const struct carve_share *x, const struct carve_share *y)
{
	if ((x->value == INT64_MAX) != (y->value == INT64_MAX))
		return x->value == INT64_MAX ? 1 : -1;
	if (x->value == INT64_MAX)
		return (x->ratio > y->ratio) - (x->ratio < y->ratio);
	return (x->weighted > y->weighted) - (x->weighted < y->weighted);
}

/* Whether node uses more than its subtree quota of any fr of use with q > 0
 * (Kueue's DRS.IsBorrowingOn). */
bool carve__qt_borrowing_on(const struct carve_adm *a, int node, const struct frq *use, size_t nuse)
{
	size_t i;

	for (i = 0; i < nuse; i++)
		if (use[i].fr >= 0 && use[i].q > 0 && carve__qt_borrowing(a, node, use[i].fr))
			return true;
	return false;
}

/* Charges (sign +1) or releases (-1) use at node: the usage simulations
 * of fair sharing (charged by carve__qt_charge_checked first). */
void carve__qt_charge(struct carve_adm *a, int node, const struct frq *use, size_t nuse, int sign)
{
	size_t i;

	for (i = 0; i < nuse; i++)
		if (use[i].fr >= 0 && use[i].q)
			carve__qt_add_usage(a, node, use[i].fr, sign * use[i].q);
}

/* Charges use at node when all of it can be (carve__qt_can_add); whether
 * it did.  Kept apart from carve__qt_can_charge, which the classical
 * paths inline. */
bool carve__qt_charge_checked(struct carve_adm *a, int node, const struct frq *use, size_t nuse)
{
	size_t i;

	for (i = 0; i < nuse; i++)
		if (use[i].fr >= 0 && !carve__qt_can_add(a, node, use[i].fr, use[i].q))
			return false;
	carve__qt_charge(a, node, use, nuse, +1);
	return true;
}
