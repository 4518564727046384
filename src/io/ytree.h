/*
 * ytree.h - YAML documents as a tree of nodes that keep their position.
 *
 * libyaml's event parser builds, per document, a tree of scalars, mappings
 * and sequences in an arena owned by the caller; every node records the
 * file, line and column (1-based) where it starts.  Aliases point at the
 * anchored node (the tree is then a DAG; nothing is copied).  A syntax error
 * ends the file: documents completed before it are kept and the error is
 * reported with libyaml's position, so nothing accepted is lost.
 *
 * Beyond libyaml:
 *   - Merge keys: a plain `<<` whose value is a mapping or a list of
 *     mappings (`<<: *base`, `<<: [*a, *b]`) adds their pairs whose keys the
 *     mapping lacks; its own keys win, then earlier mappings of the list.
 *     The `<<` pair itself is not kept.
 *   - Alias limits: an alias to a collection that contains it (a cycle) is
 *     an error and reads as null.  A document whose aliases, expanded, would
 *     stand for more than YTREE_MAX_EXPANSION nodes in all ("billion
 *     laughs") is refused with "too many alias references": the error ends
 *     the file like a syntax error.
 *   - Size limits (docs/limits.md): at most YTREE_MAX_DOCS documents in a
 *     file and YTREE_MAX_DOC_BYTES characters in one document; going past
 *     either is reported and ends the file like a syntax error.
 *   - A bad byte (NUL, a control character, invalid UTF-8) is reported at
 *     its own line and column, with its value.
 *   - A key that is not a scalar is an error; the pair is dropped.
 *   - Duplicate keys are errors; the first value is kept.
 */
#ifndef CARVE_YTREE_H
#define CARVE_YTREE_H

#include "carve/arena.h"
#include "carve/diag.h"

#define YTREE_MAX_EXPANSION 1000000
#define YTREE_MAX_DOCS 1000000
#define YTREE_MAX_DOC_BYTES (64 * 1024 * 1024)

enum ynode_kind { YN_SCALAR, YN_MAP, YN_SEQ };

struct ynode;

struct ypair {
	struct ynode *key; /* always a scalar */
	struct ynode *val;
};

struct ynode {
	enum ynode_kind kind;
	struct carve_pos pos;
	bool plain;      /* scalar written without quotes (so `null`, `~` mean null) */
	const char *str; /* YN_SCALAR: the text; "" for an empty value */
	size_t n;        /* YN_MAP: pairs; YN_SEQ: items */
	size_t weight;   /* nodes in this subtree with aliases expanded (saturating) */
	struct ypair *pairs;
	struct ynode **items;
};

struct ydoc {
	struct ynode *root; /* NULL for an empty document */
	struct carve_pos pos;
};

struct ydocs {
	size_t n;
	struct ydoc *v;
};

/*
 * Parses every document of buf (len bytes).  file is the display name (kept
 * by pointer: the caller keeps it alive as long as the tree).  line_off and
 * col_off are added to positions (for YAML embedded in another file's
 * block scalar; pass 0, 0 otherwise; col_off applies to every line).
 * Returns 0, CARVE_EPARSE after reporting a syntax error or too many alias
 * references in d (documents before it are in out), or CARVE_ENOMEM.
 */
int ytree_parse(struct carve_arena *a, const char *file, const char *buf,
		size_t len, uint32_t line_off, uint32_t col_off,
		struct carve_diags *d, struct ydocs *out);

/*
 * The same, document by document, for a caller that keeps no node: fn gets
 * each document as soon as it is complete (NULL root for an empty one);
 * once fn returns, the document's nodes are freed.  Scalar texts (->str)
 * are allocated in a and stay valid with it; node pointers do not outlive
 * the call to fn.  A non-zero return from fn stops the parse and is
 * returned.  Returns as ytree_parse otherwise.
 */
typedef int (*ytree_doc_fn)(void *ctx, const struct ydoc *doc);
int ytree_parse_each(struct carve_arena *a, const char *file, const char *buf, size_t len,
		     struct carve_diags *d, ytree_doc_fn fn, void *ctx);

/* Value for key in a mapping, or NULL (also NULL when m is not a map). */
const struct ynode *ytree_get(const struct ynode *m, const char *key);
/* True for a plain null scalar ("", "~", "null", "Null", "NULL"). */
bool ytree_is_null(const struct ynode *n);
/* "a string", "a mapping", "a list" or "null", for messages. */
const char *ytree_kind_name(const struct ynode *n);

#endif
