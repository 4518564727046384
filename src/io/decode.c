/*
 * decode.c - YAML node to struct helpers (see decode.h).
 *
 * Invariant: a helper that returns false has reported exactly one
 * diagnostic for that value and written nothing to its output.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/quantity.h"
#include "decode.h"

size_t ld_push(struct ld *ld, const char *fmt, ...)
{
	size_t old = ld->pathlen;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(ld->path + ld->pathlen, sizeof(ld->path) - ld->pathlen, fmt, ap);
	va_end(ap);
	if (n > 0) {
		ld->pathlen += (size_t)n;
		if (ld->pathlen >= sizeof(ld->path))
			ld->pathlen = sizeof(ld->path) - 1;
	}
	return old;
}

void ld_pop(struct ld *ld, size_t old)
{
	ld->pathlen = old;
	ld->path[old] = '\0';
}

static void vreport(struct ld *ld, enum carve_severity sev, struct carve_pos pos,
		    const char *fmt, va_list ap)
{
	char msg[768];
	const char *path = ld->path[0] == '.' ? ld->path + 1 : ld->path;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (ld->name && *path)
		carve_diag(ld->d, sev, pos, "%s %s: %s: %s", ld->kind, ld->name, path, msg);
	else if (ld->name)
		carve_diag(ld->d, sev, pos, "%s %s: %s", ld->kind, ld->name, msg);
	else if (*path)
		carve_diag(ld->d, sev, pos, "%s: %s: %s", ld->kind, path, msg);
	else
		carve_diag(ld->d, sev, pos, "%s: %s", ld->kind, msg);
}

void ld_error(struct ld *ld, struct carve_pos pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ld, CARVE_SEV_ERROR, pos, fmt, ap);
	va_end(ap);
}

void ld_warn(struct ld *ld, struct carve_pos pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ld, CARVE_SEV_WARNING, pos, fmt, ap);
	va_end(ap);
}

const char *ld_strdup(struct ld *ld, const char *s)
{
	const char *p = carve_arena_strdup(ld->a, s);

	if (!p && s)
		carve_diag_error(ld->d, (struct carve_pos){ld->file, 0, 0}, "out of memory");
	return p;
}

void *ld_append(struct ld *ld, void **arr, size_t *n, size_t *cap, size_t size)
{
	char *base;

	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 1; /* most lists hold one or two */
		void *v = carve_arena_grow(ld->a, *arr, *n, c, size);

		if (!v) {
			carve_diag_error(ld->d, (struct carve_pos){ld->file, 0, 0},
					 "out of memory");
			return NULL;
		}
		*arr = v;
		*cap = c;
	}
	base = *arr;
	memset(base + *n * size, 0, size);
	return base + (*n)++ * size;
}

/* ---- suggestions ---- */

static size_t lev(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[64];

	if (la >= 63 || lb >= 63)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t prev = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) !=
				      tolower((unsigned char)b[j - 1]);
			size_t best = prev + cost;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

const char *ld_suggest(const char *s, const char *const *names, size_t n)
{
	size_t i, best = (size_t)-1, limit = strlen(s) / 3;
	const char *pick = NULL;

	if (limit < 2)
		limit = 2;
	for (i = 0; i < n; i++) {
		size_t dist = lev(s, names[i]);

		if (dist < best) {
			best = dist;
			pick = names[i];
		}
	}
	return best <= limit ? pick : NULL;
}

/* ---- mappings and lists ---- */

/*
 * True when the current path is an object's top-level status or below it:
 * the API server writes status, and newer servers add fields there (e.g.
 * Node status.declaredFeatures, Kubernetes 1.35), so an unknown field under
 * status is accepted and ignored rather than an error.
 */
static bool under_status(const struct ld *ld)
{
	return !strncmp(ld->path, ".status", 7) &&
	       (ld->path[7] == '\0' || ld->path[7] == '.' || ld->path[7] == '[');
}

bool ld_fields(struct ld *ld, const struct ynode *map, const struct ld_field *fields, void *obj)
{
	const char *names[64];
	size_t nf = 0, i, j;

	const struct ynode *at = map;

	if (!map || ytree_is_null(map))
		map = NULL;
	if (map && map->kind != YN_MAP) {
		ld_error(ld, map->pos, "expected a mapping, got %s", ytree_kind_name(map));
		return false;
	}
	for (j = 0; fields[j].name; j++)
		if (nf < 64)
			names[nf++] = fields[j].name;
	for (i = 0; map && i < map->n; i++) {
		const struct ypair *p = &map->pairs[i];

		for (j = 0; fields[j].name; j++)
			if (!strcmp(fields[j].name, p->key->str))
				break;
		if (!fields[j].name) {
			const char *s;

			if (under_status(ld))
				continue; /* server-written: any field is accepted */
			s = ld_suggest(p->key->str, names, nf);

			if (s)
				ld_error(ld, p->key->pos, "unknown field '%s' (did you mean '%s'?)",
					 p->key->str, s);
			else
				ld_error(ld, p->key->pos, "unknown field '%s'", p->key->str);
			continue;
		}
		if (fields[j].fn) {
			size_t old = ld_push(ld, ".%s", fields[j].name);

			fields[j].fn(ld, p->val, obj);
			ld_pop(ld, old);
		}
	}
	for (j = 0; fields[j].name; j++) {
		if (!(fields[j].flags & LD_REQUIRED))
			continue;
		if (!ytree_get(map, fields[j].name) || ytree_is_null(ytree_get(map, fields[j].name))) {
			struct carve_pos pos = at ? at->pos : (struct carve_pos){ld->file, 0, 0};

			ld_error(ld, pos, "missing required field '%s'", fields[j].name);
		}
	}
	return true;
}

bool ld_list(struct ld *ld, const struct ynode *val,
	     void (*fn)(struct ld *ld, const struct ynode *item, size_t i, void *obj), void *obj)
{
	size_t i;

	if (ytree_is_null(val))
		return true;
	if (val->kind != YN_SEQ) {
		ld_error(ld, val->pos, "expected a list, got %s", ytree_kind_name(val));
		return false;
	}
	for (i = 0; i < val->n; i++) {
		size_t old = ld_push(ld, "[%zu]", i);

		fn(ld, val->items[i], i, obj);
		ld_pop(ld, old);
	}
	return true;
}

/* ---- scalars ---- */

static bool want_scalar(struct ld *ld, const struct ynode *v, const char *what)
{
	if (!v || v->kind != YN_SCALAR) {
		ld_error(ld, v ? v->pos : (struct carve_pos){ld->file, 0, 0},
			 "expected %s, got %s", what, ytree_kind_name(v));
		return false;
	}
	return true;
}

bool ld_str(struct ld *ld, const struct ynode *v, const char **out)
{
	if (v && ytree_is_null(v))
		return false; /* null means unset: nothing to report */
	if (!want_scalar(ld, v, "a string"))
		return false;
	*out = v->str;  /* lives in the same arena as the tree */
	return true;
}

bool ld_int(struct ld *ld, const struct ynode *v, int64_t min, int64_t max, int64_t *out)
{
	const char *s;
	char *end;
	long long x;

	if (!want_scalar(ld, v, "an integer"))
		return false;
	s = v->str;
	if (!*s || isspace((unsigned char)*s)) {
		ld_error(ld, v->pos, "expected an integer, got '%s'", s);
		return false;
	}
	errno = 0;
	x = strtoll(s, &end, 10);
	if (*end) {
		ld_error(ld, v->pos, "expected an integer, got '%s'", s);
		return false;
	}
	if (errno == ERANGE || x < min || x > max) {
		ld_error(ld, v->pos, "%s is out of range [%lld, %lld]", s,
			 (long long)min, (long long)max);
		return false;
	}
	*out = x;
	return true;
}

bool ld_i32(struct ld *ld, const struct ynode *v, int32_t min, int32_t max, int32_t *out)
{
	int64_t x;

	if (!ld_int(ld, v, min, max, &x))
		return false;
	*out = (int32_t)x;
	return true;
}

bool ld_bool(struct ld *ld, const struct ynode *v, bool *out)
{
	/* YAML 1.1 spellings too: kubectl's parser reads yes/on/y as true. */
	static const char *const t[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
					"on", "On", "ON", "y", "Y"};
	static const char *const f[] = {"false", "False", "FALSE", "no", "No", "NO",
					"off", "Off", "OFF", "n", "N"};
	size_t i;

	if (!want_scalar(ld, v, "true or false"))
		return false;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (!strcmp(v->str, t[i])) {
			*out = true;
			return true;
		}
		if (!strcmp(v->str, f[i])) {
			*out = false;
			return true;
		}
	}
	ld_error(ld, v->pos, "expected true or false, got '%s'", v->str);
	return false;
}

bool ld_qty(struct ld *ld, const struct ynode *v, int64_t *milli)
{
	const char *why = NULL;
	int64_t x;

	if (!want_scalar(ld, v, "a quantity"))
		return false;
	if (carve_qty_parse(v->str, &x, &why)) {
		ld_error(ld, v->pos, "malformed quantity '%s': %s", v->str,
			 why ? why : "invalid");
		return false;
	}
	*milli = x;
	return true;
}

bool ld_qty_nonneg(struct ld *ld, const struct ynode *v, int64_t *milli)
{
	int64_t x;

	if (!ld_qty(ld, v, &x))
		return false;
	if (x < 0) {
		ld_error(ld, v->pos, "quantity '%s' must not be negative", v->str);
		return false;
	}
	*milli = x;
	return true;
}

bool ld_enum(struct ld *ld, const struct ynode *v, const char *const *names, int *out)
{
	char list[256];
	size_t n, i, len = 0;
	const char *s;

	if (!want_scalar(ld, v, "a string"))
		return false;
	for (n = 0; names[n]; n++)
		if (!strcmp(names[n], v->str)) {
			*out = (int)n;
			return true;
		}
	list[0] = '\0';
	for (i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					i ? ", " : "", names[i]);
	s = ld_suggest(v->str, names, n);
	if (s)
		ld_error(ld, v->pos, "unknown value '%s' (did you mean '%s'? expected one of: %s)",
			 v->str, s, list);
	else
		ld_error(ld, v->pos, "unknown value '%s' (expected one of: %s)", v->str, list);
	return false;
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	/* Howard Hinnant's algorithm: days since 1970-01-01. */
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + (int64_t)doe - 719468;
}

bool ld_time(struct ld *ld, const struct ynode *v, int64_t *out)
{
	int y, mo, d, h, mi, s, n = 0, oh = 0, om = 0;
	const char *p;

	if (!want_scalar(ld, v, "a timestamp"))
		return false;
	if (sscanf(v->str, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 ||
	    mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		goto bad;
	p = v->str + n;
	if (*p == '.') {
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'Z' && !p[1]) {
		/* UTC */
	} else if ((*p == '+' || *p == '-') && sscanf(p + 1, "%2d:%2d", &oh, &om) == 2 &&
		   strlen(p) == 6) {
		if (*p == '-') {
			oh = -oh;
			om = -om;
		}
	} else {
		goto bad;
	}
	*out = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + s -
	       (oh * 3600 + om * 60);
	return true;
bad:
	ld_error(ld, v->pos, "malformed timestamp '%s' (expected RFC 3339, e.g. 2026-01-01T00:00:00Z)",
		 v->str);
	return false;
}

/* ---- collections ---- */

bool ld_kvmap(struct ld *ld, const struct ynode *v, struct carve_kvlist *out)
{
	size_t i, cap = 0;
	struct carve_kvlist kv = {0, NULL};

	if (ytree_is_null(v)) {
		*out = kv;
		return true;
	}
	if (v->kind != YN_MAP) {
		ld_error(ld, v->pos, "expected a mapping, got %s", ytree_kind_name(v));
		return false;
	}
	for (i = 0; i < v->n; i++) {
		const struct ypair *p = &v->pairs[i];
		struct carve_kv *e;

		if (p->val->kind != YN_SCALAR) {
			ld_error(ld, p->val->pos, "value of '%s' must be a string, got %s",
				 p->key->str, ytree_kind_name(p->val));
			continue;
		}
		e = LD_APPEND(ld, kv.v, kv.n, cap);
		if (!e)
			return false;
		e->key = p->key->str;
		e->value = p->val->str;
		e->pos = p->key->pos;
	}
	*out = kv;
	return true;
}

static bool resmap(struct ld *ld, const struct ynode *v, struct carve_reslist *out, bool nonneg)
{
	size_t i, cap = 0;
	struct carve_reslist rl = {0, NULL};

	if (ytree_is_null(v)) {
		*out = rl;
		return true;
	}
	if (v->kind != YN_MAP) {
		ld_error(ld, v->pos, "expected a mapping of resource names to quantities, got %s",
			 ytree_kind_name(v));
		return false;
	}
	for (i = 0; i < v->n; i++) {
		const struct ypair *p = &v->pairs[i];
		size_t old = ld_push(ld, "[%s]", p->key->str);
		int64_t q;

		if (nonneg ? ld_qty_nonneg(ld, p->val, &q) : ld_qty(ld, p->val, &q)) {
			struct carve_resq *e = LD_APPEND(ld, rl.v, rl.n, cap);

			if (e) {
				e->name = p->key->str;
				e->milli = q;
				e->pos = p->key->pos;
			}
		}
		ld_pop(ld, old);
	}
	*out = rl;
	return true;
}

bool ld_resmap(struct ld *ld, const struct ynode *v, struct carve_reslist *out)
{
	return resmap(ld, v, out, false);
}

bool ld_resmap_nonneg(struct ld *ld, const struct ynode *v, struct carve_reslist *out)
{
	return resmap(ld, v, out, true);
}

bool ld_strlist(struct ld *ld, const struct ynode *v, const char ***out, size_t *n,
		struct carve_pos **pos)
{
	size_t i;
	const char **s;
	struct carve_pos *p = NULL;

	if (ytree_is_null(v)) {
		*out = NULL;
		*n = 0;
		if (pos)
			*pos = NULL;
		return true;
	}
	if (v->kind != YN_SEQ) {
		ld_error(ld, v->pos, "expected a list of strings, got %s", ytree_kind_name(v));
		return false;
	}
	s = carve_arena_alloc(ld->a, (v->n ? v->n : 1) * sizeof(*s));
	if (pos)
		p = carve_arena_alloc(ld->a, (v->n ? v->n : 1) * sizeof(*p));
	if (!s || (pos && !p)) {
		carve_diag_error(ld->d, v->pos, "out of memory");
		return false;
	}
	*n = 0;
	for (i = 0; i < v->n; i++) {
		size_t old = ld_push(ld, "[%zu]", i);

		if (ld_str(ld, v->items[i], &s[*n])) {
			if (p)
				p[*n] = v->items[i]->pos;
			(*n)++;
		}
		ld_pop(ld, old);
	}
	*out = s;
	if (pos)
		*pos = p;
	return true;
}

static const char *const taint_effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};

static void f_taint_key(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct carve_taint *)o)->key);
}
static void f_taint_value(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct carve_taint *)o)->value);
}
static void f_taint_effect(struct ld *ld, const struct ynode *v, void *o)
{
	int e;

	if (ld_enum(ld, v, taint_effects, &e))
		((struct carve_taint *)o)->effect = taint_effects[e];
}

static const struct ld_field taint_fields[] = {
	{"key", f_taint_key, LD_REQUIRED},
	{"value", f_taint_value, 0},
	{"effect", f_taint_effect, LD_REQUIRED},
	{"timeAdded", NULL, 0},
	{NULL, NULL, 0},
};

struct tlist {
	void *v;
	size_t n, cap;
};

static void one_taint(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct tlist *l = obj;
	struct carve_taint t = {0};

	t.pos = item->pos;
	if (!ld_fields(ld, item, taint_fields, &t) || !t.key || !t.effect)
		return;
	struct carve_taint *e = ld_append(ld, &l->v, &l->n, &l->cap, sizeof(*e));
	if (e)
		*e = t;
}

bool ld_taints(struct ld *ld, const struct ynode *v, struct carve_taint **out, size_t *n)
{
	struct tlist l = {0};

	if (!ld_list(ld, v, one_taint, &l))
		return false;
	*out = l.v;
	*n = l.n;
	return true;
}

static const char *const tol_ops[] = {"Equal", "Exists", NULL};

static void f_tol_key(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct carve_toleration *)o)->key);
}
static void f_tol_value(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct carve_toleration *)o)->value);
}
static void f_tol_op(struct ld *ld, const struct ynode *v, void *o)
{
	int e;

	if (ld_enum(ld, v, tol_ops, &e))
		((struct carve_toleration *)o)->op = tol_ops[e];
}
static void f_tol_effect(struct ld *ld, const struct ynode *v, void *o)
{
	int e;

	if (ytree_is_null(v) || (v->kind == YN_SCALAR && !*v->str))
		return; /* empty effect matches every effect */
	if (ld_enum(ld, v, taint_effects, &e))
		((struct carve_toleration *)o)->effect = taint_effects[e];
}

static const struct ld_field tol_fields[] = {
	{"key", f_tol_key, 0},
	{"operator", f_tol_op, 0},
	{"value", f_tol_value, 0},
	{"effect", f_tol_effect, 0},
	{"tolerationSeconds", NULL, 0},
	{NULL, NULL, 0},
};

static void one_tol(struct ld *ld, const struct ynode *item, size_t i, void *obj)
{
	struct tlist *l = obj;
	struct carve_toleration t = {0};

	t.pos = item->pos;
	t.op = "Equal";
	if (!ld_fields(ld, item, tol_fields, &t))
		return;
	if (!strcmp(t.op, "Exists") && t.value) {
		ld_error(ld, item->pos, "a toleration with operator Exists must not have a value");
		return;
	}
	if (!t.key && strcmp(t.op, "Exists")) {
		ld_error(ld, item->pos, "a toleration without a key must use operator Exists");
		return;
	}
	struct carve_toleration *e = ld_append(ld, &l->v, &l->n, &l->cap, sizeof(*e));
	if (e)
		*e = t;
}

bool ld_tolerations(struct ld *ld, const struct ynode *v, struct carve_toleration **out, size_t *n)
{
	struct tlist l = {0};

	if (!ld_list(ld, v, one_tol, &l))
		return false;
	*out = l.v;
	*n = l.n;
	return true;
}

/* ---- Kubernetes names ---- */

/*
 * The API server's rules (k8s.io/apimachinery pkg/util/validation,
 * IsDNS1123Subdomain and IsDNS1123Label; "Object Names and IDs" in the
 * Kubernetes docs): a subdomain is at most 253 characters of [a-z0-9-.],
 * each dot-separated part starting and ending with [a-z0-9]; a label is at
 * most 63 characters of [a-z0-9-], starting and ending with [a-z0-9].
 */
static bool alnum_lower(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

const char *ld_dns_problem(const char *s, enum ld_name_rule rule, char *buf, size_t n)
{
	size_t len = strlen(s), max = rule == LD_DNS_LABEL ? 63 : 253, i;
	bool ok = len > 0;

	for (i = 0; ok && i < len; i++) {
		char c = s[i];
		bool edge = i == 0 || i == len - 1 ||
			    (rule == LD_DNS_SUBDOMAIN && (s[i - 1] == '.' || s[i + 1] == '.'));

		if (alnum_lower(c))
			continue;
		if (edge || (c != '-' && (c != '.' || rule != LD_DNS_SUBDOMAIN)))
			ok = false;
	}
	if (!len)
		snprintf(buf, n, "must not be empty");
	else if (!ok && rule == LD_DNS_LABEL)
		snprintf(buf, n, "'%.*s%s' is not a valid name: a lowercase RFC 1123 label must "
			 "consist of lower case alphanumeric characters or '-', and must start "
			 "and end with an alphanumeric character", len > 64 ? 64 : (int)len, s,
			 len > 64 ? "..." : "");
	else if (!ok)
		snprintf(buf, n, "'%.*s%s' is not a valid name: a lowercase RFC 1123 subdomain "
			 "must consist of lower case alphanumeric characters, '-' or '.', and "
			 "must start and end with an alphanumeric character",
			 len > 64 ? 64 : (int)len, s, len > 64 ? "..." : "");
	else if (len > max)
		snprintf(buf, n, "'%.32s...' is not a valid name: must be no more than %zu "
			 "characters (got %zu)", s, max, len);
	else
		return NULL;
	return buf;
}

bool ld_dns_check(struct ld *ld, struct carve_pos pos, const char *s, enum ld_name_rule rule)
{
	char why[320];

	if (!ld_dns_problem(s, rule, why, sizeof(why)))
		return true;
	if (ld->m && ld->m->names_warn) {
		ld_warn(ld, pos, "%s (the API server would refuse it)", why);
		return true;
	}
	ld_error(ld, pos, "%s", why);
	return false;
}

bool ld_dns_name(struct ld *ld, const struct ynode *v, enum ld_name_rule rule, const char **out)
{
	const char *s;

	if (!ld_str(ld, v, &s))
		return false;
	if (!ld_dns_check(ld, v->pos, s, rule))
		return false;
	*out = s;
	return true;
}

/* ---- metadata ---- */

static void f_meta_name(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_meta *m = o;

	if (ld_str(ld, v, &m->name)) {
		m->name_pos = v->pos;
		if (!*m->name)
			ld_error(ld, v->pos, "name must not be empty");
	}
}
static void f_meta_ns(struct ld *ld, const struct ynode *v, void *o)
{
	ld_str(ld, v, &((struct carve_meta *)o)->ns);
}
static void f_meta_labels(struct ld *ld, const struct ynode *v, void *o)
{
	ld_kvmap(ld, v, &((struct carve_meta *)o)->labels);
}
static void f_meta_annots(struct ld *ld, const struct ynode *v, void *o)
{
	ld_kvmap(ld, v, &((struct carve_meta *)o)->annotations);
}
static void f_meta_created(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_meta *m = o;

	if (ytree_is_null(v))
		return;
	if (ld_time(ld, v, &m->created))
		m->has_created = true;
}

static const struct ld_field meta_fields[] = {
	{"name", f_meta_name, 0},
	{"namespace", f_meta_ns, 0},
	{"labels", f_meta_labels, 0},
	{"annotations", f_meta_annots, 0},
	{"creationTimestamp", f_meta_created, 0},
	{"generateName", NULL, 0},
	{"uid", NULL, 0},
	{"resourceVersion", NULL, 0},
	{"generation", NULL, 0},
	{"finalizers", NULL, 0},
	{"ownerReferences", NULL, 0},
	{"managedFields", NULL, 0},
	{"deletionTimestamp", NULL, 0},
	{"deletionGracePeriodSeconds", NULL, 0},
	{"selfLink", NULL, 0},
	{NULL, NULL, 0},
};

/*
 * Every kind carve reads names its objects with a DNS-1123 subdomain: the
 * API server's ValidateObjectMeta with NameIsDNSSubdomain for Node, Pod,
 * Job, ConfigMap and PriorityClass, and for every custom resource (Kueue,
 * Volcano, KAI, carve's NodePool).  A namespace is a DNS-1123 label
 * (ValidateNamespaceName).  A generateName is checked as a prefix: a
 * trailing '-' is allowed there (the API server masks it).
 */
static bool meta_names_ok(struct ld *ld, const struct carve_meta *meta,
			  const struct ynode *md, const struct ynode *gen, bool namespaced)
{
	size_t old;
	bool ok = true;

	ld->name = NULL; /* the message quotes the bad name itself */
	if (meta->generated) {
		size_t n = strlen(gen->str);
		char *prefix = carve_arena_strndup(ld->a, gen->str, n);

		if (!prefix)
			return false;
		if (n > 1 && prefix[n - 1] == '-')
			prefix[n - 1] = 'a';
		old = ld_push(ld, "metadata.generateName");
		ok = ld_dns_check(ld, gen->pos, prefix, LD_DNS_SUBDOMAIN);
		ld_pop(ld, old);
	} else {
		old = ld_push(ld, "metadata.name");
		ok = ld_dns_check(ld, meta->name_pos, meta->name, LD_DNS_SUBDOMAIN);
		ld_pop(ld, old);
	}
	if (meta->ns && namespaced) {
		const struct ynode *ns = ytree_get(md, "namespace");

		old = ld_push(ld, "metadata.namespace");
		if (!ld_dns_check(ld, ns ? ns->pos : meta->pos, meta->ns, LD_DNS_LABEL))
			ok = false;
		ld_pop(ld, old);
	}
	return ok;
}

static void metadata(struct ld *ld, const struct ynode *doc, struct carve_meta *meta,
		     bool namespaced, bool generate)
{
	const struct ynode *md = ytree_get(doc, "metadata");
	const struct ynode *nm = ytree_get(md, "name"), *gen = ytree_get(md, "generateName");
	char *gname = NULL;
	size_t old;

	meta->pos = doc->pos;
	meta->api_version = ld->api_version;
	meta->kind = ld->kind;
	if (!md || ytree_is_null(md)) {
		ld_error(ld, doc->pos, "missing required field 'metadata'");
		return;
	}
	if (generate && !nm && gen && gen->kind == YN_SCALAR && *gen->str) {
		size_t n = strlen(gen->str);

		gname = carve_arena_alloc(ld->a, n + 2);
		if (!gname) {
			carve_diag_error(ld->d, md->pos, "out of memory");
			return;
		}
		memcpy(gname, gen->str, n);
		gname[n] = '*';
	}
	/* Name the object in errors about its other metadata fields too. */
	if (nm && nm->kind == YN_SCALAR && !ytree_is_null(nm) && *nm->str)
		ld->name = nm->str;
	else if (gname)
		ld->name = gname;
	old = ld_push(ld, "metadata");
	ld_fields(ld, md, meta_fields, meta);
	ld_pop(ld, old);
	if (!meta->name && gname) {
		meta->name = gname;
		meta->name_pos = gen->pos;
		meta->generated = true;
	}
	if (!meta->name) {
		ld_error(ld, md->pos, "metadata: missing required field 'name'");
		return;
	}
	/* A name the API server would refuse: reported at the field, and the
	 * object skipped (its loader appends nothing without a name). */
	if (!*meta->name || !meta_names_ok(ld, meta, md, gen, namespaced)) {
		meta->name = NULL;
		return;
	}
	ld->name = meta->name;
	if (namespaced && !meta->ns)
		meta->ns = "default";
	if (!namespaced && meta->ns) {
		ld_warn(ld, md->pos, "metadata.namespace is ignored: %s is cluster-scoped", ld->kind);
		meta->ns = NULL;
	}
}

void ld_metadata(struct ld *ld, const struct ynode *doc, struct carve_meta *meta, bool namespaced)
{
	metadata(ld, doc, meta, namespaced, false);
}

void ld_metadata_gen(struct ld *ld, const struct ynode *doc, struct carve_meta *meta,
		     bool namespaced)
{
	metadata(ld, doc, meta, namespaced, true);
}
