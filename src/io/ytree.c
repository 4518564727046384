/*
 * ytree.c - builds struct ydoc trees from libyaml events (see ytree.h).
 *
 * A small explicit stack holds the open collections; children are gathered
 * in growable arena arrays and fixed when the collection ends.  Anchors are
 * remembered per document, as YAML scopes them.
 */
#include <string.h>
#include <yaml.h>

#include "ytree.h"

#define MAX_DEPTH 256

struct frame {
	struct ynode *node;
	size_t cap;
	struct ynode *pending_key; /* map: key waiting for its value */
};

struct anchor {
	const char *name;
	struct ynode *node;
};

struct builder {
	struct carve_arena *a;
	const char *file;
	uint32_t line_off, col_off;
	struct carve_diags *d;
	struct frame stack[MAX_DEPTH];
	int depth;
	struct anchor *anchors;
	size_t nanchors, capanchors;
	struct ynode *root;
};

static struct carve_pos mark_pos(const struct builder *b, yaml_mark_t m)
{
	struct carve_pos p = {b->file, (uint32_t)m.line + 1 + b->line_off,
			      (uint32_t)m.column + 1 + b->col_off};
	return p;
}

static int add_anchor(struct builder *b, const yaml_char_t *name, struct ynode *n)
{
	if (!name)
		return 0;
	if (b->nanchors == b->capanchors) {
		size_t cap = b->capanchors ? b->capanchors * 2 : 8;
		struct anchor *v = carve_arena_grow(b->a, b->anchors, b->nanchors,
						    cap, sizeof(*v));
		if (!v)
			return CARVE_ENOMEM;
		b->anchors = v;
		b->capanchors = cap;
	}
	b->anchors[b->nanchors].name = carve_arena_strdup(b->a, (const char *)name);
	if (!b->anchors[b->nanchors].name)
		return CARVE_ENOMEM;
	b->anchors[b->nanchors++].node = n;
	return 0;
}

static struct ynode *find_anchor(struct builder *b, const char *name)
{
	size_t i;

	for (i = b->nanchors; i > 0; i--)
		if (!strcmp(b->anchors[i - 1].name, name))
			return b->anchors[i - 1].node;
	return NULL;
}

/* Attaches a finished node to the open collection (or makes it the root). */
static int attach(struct builder *b, struct ynode *n)
{
	struct frame *f;
	struct ynode *p;

	if (b->depth == 0) {
		b->root = n;
		return 0;
	}
	f = &b->stack[b->depth - 1];
	p = f->node;
	if (p->kind == YN_MAP && !f->pending_key) {
		if (n->kind != YN_SCALAR) {
			/* Report, then pair the value with an empty placeholder key. */
			carve_diag_error(b->d, n->pos, "mapping keys must be plain strings");
			n = carve_arena_alloc(b->a, sizeof(*n));
			if (!n)
				return CARVE_ENOMEM;
			n->kind = YN_SCALAR;
			n->str = "";
		}
		f->pending_key = n;
		return 0;
	}
	if (p->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 4;
		void *v;

		if (p->kind == YN_MAP) {
			v = carve_arena_grow(b->a, p->pairs, p->n, cap, sizeof(*p->pairs));
			if (!v)
				return CARVE_ENOMEM;
			p->pairs = v;
		} else {
			v = carve_arena_grow(b->a, p->items, p->n, cap, sizeof(*p->items));
			if (!v)
				return CARVE_ENOMEM;
			p->items = v;
		}
		f->cap = cap;
	}
	if (p->kind == YN_MAP) {
		size_t i;

		for (i = 0; i < p->n; i++) {
			if (!strcmp(p->pairs[i].key->str, f->pending_key->str)) {
				carve_diag_error(b->d, f->pending_key->pos,
						 "duplicate key '%s' (first at line %u)",
						 f->pending_key->str,
						 (unsigned)p->pairs[i].key->pos.line);
				f->pending_key = NULL;
				return 0;
			}
		}
		p->pairs[p->n].key = f->pending_key;
		p->pairs[p->n].val = n;
		f->pending_key = NULL;
	} else {
		p->items[p->n] = n;
	}
	p->n++;
	return 0;
}

static struct ynode *new_node(struct builder *b, enum ynode_kind k, yaml_mark_t m)
{
	struct ynode *n = carve_arena_alloc(b->a, sizeof(*n));

	if (n) {
		n->kind = k;
		n->pos = mark_pos(b, m);
	}
	return n;
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
	struct ynode *n;
	int rc;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		n = new_node(b, YN_SCALAR, ev->start_mark);
		if (!n)
			return CARVE_ENOMEM;
		n->str = carve_arena_strndup(b->a, (const char *)ev->data.scalar.value,
					     ev->data.scalar.length);
		if (!n->str)
			return CARVE_ENOMEM;
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if ((rc = add_anchor(b, ev->data.scalar.anchor, n)))
			return rc;
		return attach(b, n);
	case YAML_ALIAS_EVENT:
		n = find_anchor(b, (const char *)ev->data.alias.anchor);
		if (!n) {
			carve_diag_error(b->d, mark_pos(b, ev->start_mark),
					 "unknown alias '*%s'", ev->data.alias.anchor);
			return 0;
		}
		return attach(b, n);
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		if (b->depth == MAX_DEPTH) {
			carve_diag_error(b->d, mark_pos(b, ev->start_mark),
					 "nesting deeper than %d levels", MAX_DEPTH);
			return CARVE_EPARSE;
		}
		n = new_node(b, ev->type == YAML_MAPPING_START_EVENT ? YN_MAP : YN_SEQ,
			     ev->start_mark);
		if (!n)
			return CARVE_ENOMEM;
		if ((rc = add_anchor(b, ev->type == YAML_MAPPING_START_EVENT ?
					  ev->data.mapping_start.anchor :
					  ev->data.sequence_start.anchor, n)))
			return rc;
		b->stack[b->depth].node = n;
		b->stack[b->depth].cap = 0;
		b->stack[b->depth].pending_key = NULL;
		b->depth++;
		return 0;
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		n = b->stack[--b->depth].node;
		return attach(b, n);
	default:
		return 0;
	}
}

static int add_doc(struct builder *b, struct ydocs *out, size_t *cap, struct carve_pos pos)
{
	if (out->n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		struct ydoc *v = carve_arena_grow(b->a, out->v, out->n, c, sizeof(*v));

		if (!v)
			return CARVE_ENOMEM;
		out->v = v;
		*cap = c;
	}
	out->v[out->n].root = b->root;
	out->v[out->n].pos = pos;
	out->n++;
	return 0;
}

int ytree_parse(struct carve_arena *a, const char *file, const char *buf,
		size_t len, uint32_t line_off, uint32_t col_off,
		struct carve_diags *d, struct ydocs *out)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	struct builder b;
	struct carve_pos docpos = {file, 1, 1};
	size_t cap = 0;
	int rc = 0;

	memset(&b, 0, sizeof(b));
	b.a = a;
	b.file = file;
	b.line_off = line_off;
	b.col_off = col_off;
	b.d = d;
	out->n = 0;
	out->v = NULL;
	if (!yaml_parser_initialize(&parser))
		return CARVE_ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	for (;;) {
		if (!yaml_parser_parse(&parser, &ev)) {
			struct carve_pos p = mark_pos(&b, parser.problem_mark);

			if (parser.error == YAML_MEMORY_ERROR) {
				rc = CARVE_ENOMEM;
			} else {
				carve_diag_error(d, p, "YAML syntax error: %s%s%s",
						 parser.problem ? parser.problem : "unknown",
						 parser.context ? " " : "",
						 parser.context ? parser.context : "");
				rc = CARVE_EPARSE;
			}
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT) {
			b.root = NULL;
			b.depth = 0;
			b.nanchors = 0;
			docpos = mark_pos(&b, ev.start_mark);
		} else if (ev.type == YAML_DOCUMENT_END_EVENT) {
			rc = add_doc(&b, out, &cap, docpos);
		} else {
			rc = on_event(&b, &ev);
		}
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		yaml_event_delete(&ev);
		if (rc)
			break;
	}
	yaml_parser_delete(&parser);
	return rc;
}

const struct ynode *ytree_get(const struct ynode *m, const char *key)
{
	size_t i;

	if (!m || m->kind != YN_MAP)
		return NULL;
	for (i = 0; i < m->n; i++)
		if (!strcmp(m->pairs[i].key->str, key))
			return m->pairs[i].val;
	return NULL;
}

bool ytree_is_null(const struct ynode *n)
{
	if (!n)
		return true;
	if (n->kind != YN_SCALAR || !n->plain)
		return false;
	return !strcmp(n->str, "") || !strcmp(n->str, "~") || !strcmp(n->str, "null") ||
	       !strcmp(n->str, "Null") || !strcmp(n->str, "NULL");
}

const char *ytree_kind_name(const struct ynode *n)
{
	if (ytree_is_null(n))
		return "null";
	switch (n->kind) {
	case YN_MAP:
		return "a mapping";
	case YN_SEQ:
		return "a list";
	default:
		return "a string";
	}
}
