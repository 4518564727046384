/*
 * match.c - Kubernetes label, node-affinity and taint/toleration matching
 * (include/carve/match.h has the rules and their sources).
 *
 * The one copy of these rules in carve: the placer (per node class, so
 * this is not on a per-pod path) and the admission engine's flavor
 * matching call it.  No allocation, no state; a label lookup is a linear
 * scan, as carve_node_label() does.
 */
#include <string.h>

#include "carve/match.h"

static bool str_eq(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

static bool empty(const char *s)
{
	return !s || !*s;
}

struct carve_labels carve_labels_of(const struct carve_label *v, size_t n)
{
	struct carve_labels l = {v, n, NULL, NULL};

	return l;
}

const char *carve_labels_get(const struct carve_labels *l, const char *key)
{
	size_t i;

	if (!key)
		return NULL;
	if (l->get)
		return l->get(l->obj, key);
	for (i = 0; i < l->n; i++)
		if (l->v[i].key && !strcmp(l->v[i].key, key))
			return l->v[i].value;
	return NULL;
}

bool carve_match_parse_int(const char *s, int64_t *out)
{
	uint64_t v = 0, lim = (uint64_t)INT64_MAX;
	bool neg = false;

	if (!s)
		return false;
	if (*s == '+' || *s == '-') {
		neg = *s == '-';
		s++;
	}
	if (neg)
		lim++; /* -9223372036854775808 */
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (d > 9 || v > (lim - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* ---- label requirements ---- */

enum op { OP_BAD, OP_IN, OP_NOTIN, OP_EXISTS, OP_DOESNOTEXIST, OP_GT, OP_LT };

static enum op op_of(const char *op)
{
	static const char *const names[] = {
		[OP_IN] = "In", [OP_NOTIN] = "NotIn", [OP_EXISTS] = "Exists",
		[OP_DOESNOTEXIST] = "DoesNotExist", [OP_GT] = "Gt", [OP_LT] = "Lt",
	};
	int i;

	for (i = OP_IN; op && i <= OP_LT; i++)
		if (!strcmp(op, names[i]))
			return (enum op)i;
	return OP_BAD;
}

/* labels.NewRequirement's checks, for an operator already known. */
static bool valid(const struct carve_match_expr *e, enum op op)
{
	int64_t x;

	if (empty(e->key) || (e->nvalues && !e->values))
		return false;
	switch (op) {
	case OP_IN:
	case OP_NOTIN:
		return e->nvalues > 0;
	case OP_EXISTS:
	case OP_DOESNOTEXIST:
		return e->nvalues == 0;
	case OP_GT:
	case OP_LT:
		return e->nvalues == 1 && carve_match_parse_int(e->values[0], &x);
	default:
		return false;
	}
}

bool carve_match_expr_valid(const struct carve_match_expr *e)
{
	return e && valid(e, op_of(e->op));
}

static bool in_values(const struct carve_match_expr *e, const char *v)
{
	size_t i;

	for (i = 0; i < e->nvalues; i++)
		if (str_eq(e->values[i], v))
			return true;
	return false;
}

/* Requirement.Matches for label value v (NULL: missing). */
static bool expr_on(const struct carve_match_expr *e, enum op op, const char *v)
{
	int64_t x, y;

	switch (op) {
	case OP_IN:
		return v && in_values(e, v);
	case OP_NOTIN:
		return !v || !in_values(e, v);
	case OP_EXISTS:
		return v != NULL;
	case OP_DOESNOTEXIST:
		return v == NULL;
	case OP_GT:
	case OP_LT:
		if (!v || !carve_match_parse_int(v, &x) ||
		    !carve_match_parse_int(e->values[0], &y))
			return false;
		return op == OP_GT ? x > y : x < y;
	default:
		return false;
	}
}

bool carve_match_expr(const struct carve_labels *l, const struct carve_match_expr *e)
{
	enum op op = op_of(e->op);

	if (!valid(e, op))
		return false;
	return expr_on(e, op, carve_labels_get(l, e->key));
}

bool carve_match_terms(const struct carve_labels *l, const struct carve_match_term *terms,
		       size_t n, enum carve_match_mode mode)
{
	size_t t, i;

	for (t = 0; t < n; t++) {
		const struct carve_match_term *term = &terms[t];
		size_t checked = 0;
		bool all = true;

		for (i = 0; i < term->n && all; i++) {
			const struct carve_match_expr *e = &term->exprs[i];
			const char *v = carve_labels_get(l, e->key);
			enum op op;

			if (mode == CARVE_MATCH_OWN_KEYS && !v)
				continue; /* not the flavor's business */
			checked++;
			op = op_of(e->op);
			all = valid(e, op) && expr_on(e, op, v);
		}
		/* Kubernetes: an empty term matches nothing.  Kueue: a term
		 * with nothing left to check drops the affinity: a match. */
		if (all && (checked || mode == CARVE_MATCH_OWN_KEYS))
			return true;
	}
	return false;
}

/* ---- label selectors ---- */

bool carve_match_label(const struct carve_labels *l, const char *key, const char *value)
{
	const char *v = carve_labels_get(l, key);

	return v && str_eq(v, value);
}

bool carve_match_selector(const struct carve_labels *l, const struct carve_label *sel, size_t n,
			  enum carve_match_mode mode, size_t *bad)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *v = carve_labels_get(l, sel[i].key);

		if (!v && mode == CARVE_MATCH_OWN_KEYS)
			continue;
		if (!v || !str_eq(v, sel[i].value)) {
			if (bad)
				*bad = i;
			return false;
		}
	}
	return true;
}

bool carve_match_label_selector(const struct carve_labels *l, const struct carve_label *labels,
				size_t nlabels, const struct carve_match_expr *exprs, size_t nexprs)
{
	size_t i;

	if (!carve_match_selector(l, labels, nlabels, CARVE_MATCH_ALL_KEYS, NULL))
		return false;
	for (i = 0; i < nexprs; i++) {
		enum op op = op_of(exprs[i].op);

		if (op == OP_GT || op == OP_LT || !carve_match_expr(l, &exprs[i]))
			return false;
	}
	return true;
}

/* ---- taints and tolerations ---- */

bool carve_taint_blocks(const struct carve_taint_spec *taint)
{
	const char *e = taint->effect;

	return e && (!strcmp(e, "NoSchedule") || !strcmp(e, "NoExecute"));
}

bool carve_tolerates(const struct carve_toleration_spec *tol, const struct carve_taint_spec *taint)
{
	bool exists = tol->op && !strcmp(tol->op, "Exists");
	bool equal = empty(tol->op) || !strcmp(tol->op, "Equal");

	/* ValidateTolerations: these never reach Kubernetes' matcher. */
	if ((exists && !empty(tol->value)) || (empty(tol->key) && !exists))
		return false;
	if (!empty(tol->effect) && !str_eq(tol->effect, taint->effect))
		return false;
	if (!empty(tol->key) && !str_eq(tol->key, taint->key))
		return false;
	if (exists)
		return true;
	return equal && str_eq(tol->value, taint->value);
}

bool carve_tolerations_tolerate(const struct carve_toleration_spec *tols, size_t n,
				const struct carve_taint_spec *taint)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (carve_tolerates(&tols[i], taint))
			return true;
	return false;
}

const struct carve_taint_spec *carve_untolerated_taint(const struct carve_taint_spec *taints,
						       size_t ntaints,
						       const struct carve_toleration_spec *tols,
						       size_t ntols)
{
	size_t i;

	for (i = 0; i < ntaints; i++)
		if (carve_taint_blocks(&taints[i]) &&
		    !carve_tolerations_tolerate(tols, ntols, &taints[i]))
			return &taints[i];
	return NULL;
}
