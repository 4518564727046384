/*
 * ytree.c - builds struct ydoc trees from libyaml events (see ytree.h).
 *
 * A small explicit stack holds the open collections; children are gathered
 * in growable arena arrays and fixed when the collection ends.  Anchors are
 * remembered per document, as YAML scopes them.  Keys of a mapping with
 * HASH_MIN pairs or more are found through an open-addressing table (arena),
 * so duplicate checks and merges stay linear in the mapping's size.  Every
 * node's weight is the size of its subtree with aliases expanded; a
 * document's aliases may add at most YTREE_MAX_EXPANSION nodes in all.
 */
#include <string.h>
#include <yaml.h>

#include "ytree.h"

#define MAX_DEPTH 256
#define HASH_MIN 32

struct frame {
	struct ynode *node;
	size_t cap;
	struct ynode *pending_key; /* map: key waiting for its value */
	bool skip_value;           /* map: the key was refused; drop its value */
	uint32_t *ht;              /* map with HASH_MIN+ pairs: pair index + 1, 0 = free */
	size_t htcap;              /* power of two */
	const struct ynode *merge_key, *merge; /* map: "<<" and its value */
};

struct anchor {
	const char *name;
	struct ynode *node;
};

struct builder {
	struct carve_arena *a;  /* scalar texts */
	struct carve_arena *na; /* nodes, their arrays, anchors (may be a) */
	const char *file;
	uint32_t line_off, col_off;
	struct carve_diags *d;
	struct frame stack[MAX_DEPTH];
	int depth;
	struct anchor *anchors;
	size_t nanchors, capanchors;
	size_t expanded; /* nodes the document's aliases stand for */
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
		struct anchor *v = carve_arena_grow(b->na, b->anchors, b->nanchors,
						    cap, sizeof(*v));
		if (!v)
			return CARVE_ENOMEM;
		b->anchors = v;
		b->capanchors = cap;
	}
	b->anchors[b->nanchors].name = carve_arena_strdup(b->na, (const char *)name);
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

static uint32_t str_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Index of key among the pairs of f's open mapping, or -1. */
static long map_find(const struct frame *f, const char *key)
{
	const struct ynode *p = f->node;
	size_t i, mask;

	if (!f->ht) {
		for (i = 0; i < p->n; i++)
			if (!strcmp(p->pairs[i].key->str, key))
				return (long)i;
		return -1;
	}
	mask = f->htcap - 1;
	for (i = str_hash(key) & mask; f->ht[i]; i = (i + 1) & mask)
		if (!strcmp(p->pairs[f->ht[i] - 1].key->str, key))
			return (long)f->ht[i] - 1;
	return -1;
}

static void ht_put(struct frame *f, size_t idx)
{
	size_t mask = f->htcap - 1, i;

	for (i = str_hash(f->node->pairs[idx].key->str) & mask; f->ht[i]; i = (i + 1) & mask)
		;
	f->ht[i] = (uint32_t)idx + 1;
}

/* Appends (key, val) to f's open mapping (room already reserved), indexing
 * it once the mapping has HASH_MIN pairs; the table stays at most half full. */
static int map_add(struct builder *b, struct frame *f, struct ynode *key, struct ynode *val)
{
	struct ynode *p = f->node;
	size_t i;

	p->pairs[p->n].key = key;
	p->pairs[p->n].val = val;
	p->n++;
	if (p->n < HASH_MIN)
		return 0;
	if (!f->ht || p->n * 2 > f->htcap) {
		size_t cap = f->htcap ? f->htcap * 2 : 4 * HASH_MIN;

		f->ht = carve_arena_alloc(b->na, cap * sizeof(*f->ht));
		if (!f->ht)
			return CARVE_ENOMEM;
		f->htcap = cap;
		for (i = 0; i < p->n; i++)
			ht_put(f, i);
		return 0;
	}
	ht_put(f, p->n - 1);
	return 0;
}

static int reserve(struct builder *b, struct frame *f)
{
	struct ynode *p = f->node;
	size_t cap = f->cap ? f->cap * 2 : 4;
	void *v;

	if (p->n < f->cap)
		return 0;
	if (p->kind == YN_MAP) {
		v = carve_arena_grow(b->na, p->pairs, p->n, cap, sizeof(*p->pairs));
		if (!v)
			return CARVE_ENOMEM;
		p->pairs = v;
	} else {
		v = carve_arena_grow(b->na, p->items, p->n, cap, sizeof(*p->items));
		if (!v)
			return CARVE_ENOMEM;
		p->items = v;
	}
	f->cap = cap;
	return 0;
}

/* True for a merge key: a plain "<<" (a quoted one is an ordinary key). */
static bool is_merge_key(const struct ynode *k)
{
	return k->plain && !strcmp(k->str, "<<");
}

/* A merge value: a mapping, or a list of mappings. */
static bool merge_ok(const struct ynode *v)
{
	size_t i;

	if (v->kind == YN_MAP)
		return true;
	if (v->kind != YN_SEQ)
		return false;
	for (i = 0; i < v->n; i++)
		if (v->items[i]->kind != YN_MAP)
			return false;
	return true;
}

/* Attaches a finished node to the open collection (or makes it the root). */
static int attach(struct builder *b, struct ynode *n)
{
	struct frame *f;
	struct ynode *p;
	long i;
	int rc;

	if (b->depth == 0) {
		b->root = n;
		return 0;
	}
	f = &b->stack[b->depth - 1];
	p = f->node;
	if (p->kind == YN_MAP && !f->pending_key) {
		if (n->kind != YN_SCALAR) {
			/* Report, then drop the pair: its value is read and discarded,
			 * so the key draws no second complaint ("unknown field"). */
			struct carve_pos kpos = n->pos;

			carve_diag_error(b->d, kpos, "mapping keys must be plain strings");
			f->skip_value = true;
			n = carve_arena_alloc(b->na, sizeof(*n));
			if (!n)
				return CARVE_ENOMEM;
			n->kind = YN_SCALAR;
			n->pos = kpos;
			n->str = "";
		}
		f->pending_key = n;
		return 0;
	}
	if (p->kind == YN_SEQ) {
		if ((rc = reserve(b, f)))
			return rc;
		p->items[p->n++] = n;
		return 0;
	}
	if (f->skip_value) {
		f->skip_value = false;
		f->pending_key = NULL;
		return 0;
	}
	if (is_merge_key(f->pending_key)) {
		if (f->merge_key) {
			carve_diag_error(b->d, f->pending_key->pos,
					 "duplicate key '<<' (first at line %u)",
					 (unsigned)f->merge_key->pos.line);
		} else if (!merge_ok(n)) {
			carve_diag_error(b->d, n->pos, "merge key '<<' needs a mapping or a list "
					 "of mappings, got %s", ytree_kind_name(n));
		} else {
			f->merge_key = f->pending_key;
			f->merge = n;
		}
		f->pending_key = NULL;
		return 0;
	}
	if ((i = map_find(f, f->pending_key->str)) >= 0) {
		carve_diag_error(b->d, f->pending_key->pos, "duplicate key '%s' (first at line %u)",
				 f->pending_key->str, (unsigned)p->pairs[i].key->pos.line);
		f->pending_key = NULL;
		return 0;
	}
	if ((rc = reserve(b, f)))
		return rc;
	rc = map_add(b, f, f->pending_key, n);
	f->pending_key = NULL;
	return rc;
}

/* Adds the pairs of one merged mapping whose keys the open mapping lacks
 * (its own keys, and earlier merged mappings, take precedence). */
static int merge_from(struct builder *b, struct frame *f, const struct ynode *src)
{
	size_t i;
	int rc;

	for (i = 0; i < src->n; i++) {
		if (map_find(f, src->pairs[i].key->str) >= 0)
			continue;
		if ((rc = reserve(b, f)) ||
		    (rc = map_add(b, f, src->pairs[i].key, src->pairs[i].val)))
			return rc;
	}
	return 0;
}

static size_t sat_addz(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* Closes the top collection: applies a merge key, fixes its weight. */
static int close_top(struct builder *b, struct ynode **out)
{
	struct frame *f = &b->stack[b->depth - 1];
	struct ynode *n = f->node;
	size_t i, w = 1;
	int rc;

	if (f->merge && f->merge->kind == YN_MAP) {
		if ((rc = merge_from(b, f, f->merge)))
			return rc;
	} else if (f->merge) {
		for (i = 0; i < f->merge->n; i++)
			if ((rc = merge_from(b, f, f->merge->items[i])))
				return rc;
	}
	if (n->kind == YN_MAP)
		for (i = 0; i < n->n; i++)
			w = sat_addz(w, sat_addz(n->pairs[i].key->weight, n->pairs[i].val->weight));
	else
		for (i = 0; i < n->n; i++)
			w = sat_addz(w, n->items[i]->weight);
	n->weight = w;
	b->depth--;
	*out = n;
	return 0;
}

/* True when n is a collection still open (an alias to it would make a cycle). */
static bool is_open(const struct builder *b, const struct ynode *n)
{
	int i;

	for (i = 0; i < b->depth; i++)
		if (b->stack[i].node == n)
			return true;
	return false;
}

static struct ynode *new_node(struct builder *b, enum ynode_kind k, yaml_mark_t m)
{
	struct ynode *n = carve_arena_alloc(b->na, sizeof(*n));

	if (n) {
		n->kind = k;
		n->pos = mark_pos(b, m);
		n->weight = 1;
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
		if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length))
			/* "\0" in a quoted scalar: C strings would cut it there */
			carve_diag_error(b->d, mark_pos(b, ev->start_mark), "a NUL character "
					 "(\\0) in a scalar is not allowed");
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if ((rc = add_anchor(b, ev->data.scalar.anchor, n)))
			return rc;
		return attach(b, n);
	case YAML_ALIAS_EVENT:
		n = find_anchor(b, (const char *)ev->data.alias.anchor);
		if (!n || is_open(b, n)) {
			if (!n)
				carve_diag_error(b->d, mark_pos(b, ev->start_mark),
						 "unknown alias '*%s'", ev->data.alias.anchor);
			else
				carve_diag_error(b->d, mark_pos(b, ev->start_mark),
						 "alias '*%s' refers to a node that contains it",
						 ev->data.alias.anchor);
			/* Stand in a null, so the mapping keeps its key/value pairing. */
			n = new_node(b, YN_SCALAR, ev->start_mark);
			if (!n)
				return CARVE_ENOMEM;
			n->str = "";
			n->plain = true;
			return attach(b, n);
		}
		b->expanded = sat_addz(b->expanded, n->weight);
		if (b->expanded > YTREE_MAX_EXPANSION) {
			carve_diag_error(b->d, mark_pos(b, ev->start_mark),
					 "too many alias references: the document would expand to "
					 "more than %d nodes", YTREE_MAX_EXPANSION);
			return CARVE_EPARSE;
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
		memset(&b->stack[b->depth], 0, sizeof(b->stack[b->depth]));
		b->stack[b->depth].node = n;
		b->depth++;
		return 0;
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		if ((rc = close_top(b, &n)))
			return rc;
		return attach(b, n);
	default:
		return 0;
	}
}

/* Where libyaml's reader stopped: it reports a bad byte (NUL, invalid
 * UTF-8) by offset only, its problem_mark left at the start.  Lines break at
 * \n, \r\n and \r; columns count characters, as libyaml's marks do. */
static struct carve_pos offset_pos(const struct builder *b, const char *buf, size_t len,
				   size_t off)
{
	uint32_t line = 0, col = 0;
	size_t i;

	if (off > len)
		off = len;
	for (i = 0; i < off; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n' || (c == '\r' && (i + 1 >= len || buf[i + 1] != '\n'))) {
			line++;
			col = 0;
		} else if (c != '\r' && (c & 0xC0) != 0x80) {
			col++;
		}
	}
	return (struct carve_pos){b->file, line + 1 + b->line_off, col + 1 + b->col_off};
}

static void report_error(struct builder *b, const yaml_parser_t *parser, const char *buf,
			 size_t len)
{
	if (parser->error == YAML_READER_ERROR) {
		struct carve_pos p = offset_pos(b, buf, len, parser->problem_offset);

		if (parser->problem_value >= 0)
			carve_diag_error(b->d, p, "YAML syntax error: %s (byte 0x%02x)",
					 parser->problem ? parser->problem : "unreadable input",
					 (unsigned)parser->problem_value & 0xFFu);
		else
			carve_diag_error(b->d, p, "YAML syntax error: %s",
					 parser->problem ? parser->problem : "unreadable input");
		return;
	}
	carve_diag_error(b->d, mark_pos(b, parser->problem_mark), "YAML syntax error: %s%s%s",
			 parser->problem ? parser->problem : "unknown",
			 parser->context ? " " : "", parser->context ? parser->context : "");
}

/* Each finished document goes to fn; returns fn's non-zero result. */
typedef int (*doc_fn)(void *ctx, struct builder *b, const struct ydoc *doc);

static int parse(struct builder *b, const char *buf, size_t len, doc_fn fn, void *ctx)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	struct carve_pos docpos = {b->file, 1, 1};
	size_t docstart = 0, ndocs = 0;
	bool doc_open = false;
	int rc = 0;

	if (!yaml_parser_initialize(&parser))
		return CARVE_ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	for (;;) {
		if (!yaml_parser_parse(&parser, &ev)) {
			if (parser.error == YAML_MEMORY_ERROR) {
				rc = CARVE_ENOMEM;
			} else {
				report_error(b, &parser, buf, len);
				rc = CARVE_EPARSE;
			}
			break;
		}
		if (doc_open && ev.end_mark.index - docstart > YTREE_MAX_DOC_BYTES) {
			carve_diag_error(b->d, docpos, "document is longer than %d characters "
					 "(the most carve reads in one document)", YTREE_MAX_DOC_BYTES);
			yaml_event_delete(&ev);
			rc = CARVE_EPARSE;
			break;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT) {
			if (ndocs == YTREE_MAX_DOCS) {
				carve_diag_error(b->d, mark_pos(b, ev.start_mark),
						 "more than %d documents in one file (the most carve "
						 "reads; split the file)", YTREE_MAX_DOCS);
				yaml_event_delete(&ev);
				rc = CARVE_EPARSE;
				break;
			}
			b->root = NULL;
			b->depth = 0;
			b->nanchors = 0;
			b->expanded = 0;
			docpos = mark_pos(b, ev.start_mark);
			docstart = ev.start_mark.index;
			doc_open = true;
		} else if (ev.type == YAML_DOCUMENT_END_EVENT) {
			struct ydoc doc = {b->root, docpos};

			doc_open = false;
			ndocs++;
			rc = fn(ctx, b, &doc);
		} else {
			rc = on_event(b, &ev);
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

static void builder_init(struct builder *b, struct carve_arena *a, struct carve_arena *na,
			 const char *file, uint32_t line_off, uint32_t col_off,
			 struct carve_diags *d)
{
	memset(b, 0, sizeof(*b));
	b->a = a;
	b->na = na;
	b->file = file;
	b->line_off = line_off;
	b->col_off = col_off;
	b->d = d;
}

struct collect {
	struct ydocs *out;
	size_t cap;
};

static int add_doc(void *ctx, struct builder *b, const struct ydoc *doc)
{
	struct collect *c = ctx;
	struct ydocs *out = c->out;

	if (out->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct ydoc *v = carve_arena_grow(b->a, out->v, out->n, cap, sizeof(*v));

		if (!v)
			return CARVE_ENOMEM;
		out->v = v;
		c->cap = cap;
	}
	out->v[out->n++] = *doc;
	return 0;
}

int ytree_parse(struct carve_arena *a, const char *file, const char *buf,
		size_t len, uint32_t line_off, uint32_t col_off,
		struct carve_diags *d, struct ydocs *out)
{
	struct builder b;
	struct collect c = {out, 0};

	builder_init(&b, a, a, file, line_off, col_off, d);
	out->n = 0;
	out->v = NULL;
	return parse(&b, buf, len, add_doc, &c);
}

struct each {
	ytree_doc_fn fn;
	void *ctx;
};

/* Hands the document over, then frees its nodes: the next document starts
 * from an empty node arena (anchors, like the nodes, were in it). */
static int each_doc(void *ctx, struct builder *b, const struct ydoc *doc)
{
	struct each *e = ctx;
	int rc = e->fn(e->ctx, doc);

	carve_arena_cleanup(b->na);
	carve_arena_init(b->na);
	b->anchors = NULL;
	b->nanchors = b->capanchors = 0;
	return rc;
}

int ytree_parse_each(struct carve_arena *a, const char *file, const char *buf, size_t len,
		     struct carve_diags *d, ytree_doc_fn fn, void *ctx)
{
	struct builder b;
	struct carve_arena nodes;
	struct each e = {fn, ctx};
	int rc;

	carve_arena_init(&nodes);
	builder_init(&b, a, &nodes, file, 0, 0, d);
	rc = parse(&b, buf, len, each_doc, &e);
	carve_arena_cleanup(&nodes);
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
