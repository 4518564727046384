/*
 * manifest_json.c - one object as the API server returns it (a jansson
 * tree) into the manifest set, through the same kind table and loaders as
 * a YAML document (carve__manifests_load_root), so the scheduler reads a
 * cluster exactly as `carve admit` reads files.
 *
 * Invariants: the JSON tree becomes a ytree whose scalars keep their text
 * as YAML would give it: numbers as written (integers in decimal, reals in
 * their shortest round-trip form), true/false/null as plain scalars (so
 * null reads as unset), strings quoted, never plain (so the string "null"
 * stays a string).  Every node's position is (source, line 0, column 0):
 * diagnostics print "SOURCE: error: ..." and name the field in their text.
 * The nodes live in a scratch arena freed before returning; scalar texts
 * live in the set's arena, where loaders may keep them.  The caller keeps
 * obj.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_int.h"

/* Deeper trees are refused (jansson's own parser stops at 2048). */
#define JSON_MAX_DEPTH 256

struct conv {
	struct carve_arena *text;  /* scalar texts: the set's arena */
	struct carve_arena *nodes; /* nodes and their arrays: scratch */
	struct carve_pos pos;
	bool too_deep;
};

static struct ynode *scalar(struct conv *c, const char *s, bool plain)
{
	struct ynode *n = carve_arena_alloc(c->nodes, sizeof(*n));

	if (!n)
		return NULL;
	memset(n, 0, sizeof(*n));
	n->kind = YN_SCALAR;
	n->pos = c->pos;
	n->plain = plain;
	n->weight = 1;
	n->str = carve_arena_strdup(c->text, s);
	return n->str ? n : NULL;
}

/* The shortest "%.*g" text of x that reads back as x. */
static void real_text(double x, char *buf, size_t size)
{
	int prec;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			return;
	}
}

static struct ynode *convert(struct conv *c, const json_t *j, int depth)
{
	struct ynode *n;
	char buf[64];
	size_t i;

	if (depth > JSON_MAX_DEPTH) {
		c->too_deep = true;
		return scalar(c, "null", true);
	}
	switch (json_typeof(j)) {
	case JSON_STRING:
		return scalar(c, json_string_value(j), false);
	case JSON_INTEGER:
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(j));
		return scalar(c, buf, true);
	case JSON_REAL:
		real_text(json_real_value(j), buf, sizeof(buf));
		return scalar(c, buf, true);
	case JSON_TRUE:
		return scalar(c, "true", true);
	case JSON_FALSE:
		return scalar(c, "false", true);
	case JSON_NULL:
		return scalar(c, "null", true);
	case JSON_OBJECT:
	case JSON_ARRAY:
		break;
	}
	n = carve_arena_alloc(c->nodes, sizeof(*n));
	if (!n)
		return NULL;
	memset(n, 0, sizeof(*n));
	n->pos = c->pos;
	n->str = "";
	n->weight = 1;
	if (json_is_array(j)) {
		n->kind = YN_SEQ;
		n->n = json_array_size(j);
		n->items = n->n ? carve_arena_alloc(c->nodes, n->n * sizeof(*n->items)) : NULL;
		if (n->n && !n->items)
			return NULL;
		for (i = 0; i < n->n; i++) {
			n->items[i] = convert(c, json_array_get(j, i), depth + 1);
			if (!n->items[i])
				return NULL;
		}
	} else {
		const char *key;
		json_t *v;

		n->kind = YN_MAP;
		n->n = json_object_size(j);
		n->pairs = n->n ? carve_arena_alloc(c->nodes, n->n * sizeof(*n->pairs)) : NULL;
		if (n->n && !n->pairs)
			return NULL;
		i = 0;
		json_object_foreach((json_t *)j, key, v) {
			if (i == n->n)
				break;
			n->pairs[i].key = scalar(c, key, false);
			n->pairs[i].val = n->pairs[i].key ? convert(c, v, depth + 1) : NULL;
			if (!n->pairs[i].val)
				return NULL;
			i++;
		}
	}
	return n;
}

int carve_manifests_add_json(struct carve_manifests *m, const char *source, const json_t *obj)
{
	struct carve_arena scratch;
	struct conv c;
	struct ynode *root;
	const char *file;

	if (!source || !*source)
		source = "(API object)";
	file = carve_arena_strdup(&m->priv->arena, source);
	if (!file)
		return CARVE_ENOMEM;
	c.pos = (struct carve_pos){file, 0, 0};
	if (!obj || !json_is_object(obj)) {
		carve_diag_error(&m->diags, c.pos, "expected a JSON object, got %s",
				 !obj ? "nothing" : json_is_array(obj) ? "a list" : "a scalar");
		return 0;
	}
	carve_arena_init(&scratch);
	c.text = &m->priv->arena;
	c.nodes = &scratch;
	c.too_deep = false;
	root = convert(&c, obj, 0);
	if (!root) {
		carve_arena_cleanup(&scratch);
		return CARVE_ENOMEM;
	}
	if (c.too_deep)
		carve_diag_error(&m->diags, c.pos, "object nested deeper than %d levels; skipped",
				 JSON_MAX_DEPTH);
	else
		carve__manifests_load_root(m, file, root);
	carve_arena_cleanup(&scratch);
	return 0;
}
