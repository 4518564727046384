/*
 * arena.h - a bump allocator for objects that live and die together (a
 * loaded manifest set, a parsed YAML file).
 *
 * Memory comes in chunks from carve_malloc; nothing is freed before
 * carve_arena_cleanup, which frees everything at once.  Allocations are
 * aligned for any scalar type.  Not thread-safe.
 *
 * Ownership: the caller owns the struct carve_arena itself (usually a
 * member of the object whose parts live in it) and must call
 * carve_arena_cleanup on it exactly once; cleanup of an arena that was only
 * initialised, or of NULL, is a no-op.  Every pointer the arena hands out
 * belongs to the arena: never pass one to carve_free; it stays valid until
 * carve_arena_cleanup, and is dead after.  Pointers passed in (strings to
 * copy, an array to grow) stay the caller's and are copied.
 */
#ifndef CARVE_ARENA_H
#define CARVE_ARENA_H

#include "carve/carve.h"

struct carve_arena_chunk;

struct carve_arena {
	struct carve_arena_chunk *head;
	size_t total; /* bytes handed out, for memory accounting */
};

/* Prepares an empty arena; allocates nothing, cannot fail. */
void carve_arena_init(struct carve_arena *a);
/* Frees every block the arena handed out, at once, and leaves it empty
 * (usable again).  a may be NULL. */
void carve_arena_cleanup(struct carve_arena *a);
/* size bytes, zeroed, owned by the arena; NULL on allocation failure (or a
 * size above SIZE_MAX / 2).  A size of 0 still gives a distinct block. */
void *carve_arena_alloc(struct carve_arena *a, size_t size);
/* Copy of s (n bytes, then a NUL) in the arena; NULL on failure.  s may be
 * NULL when n is 0. */
char *carve_arena_strndup(struct carve_arena *a, const char *s, size_t n);
/* Copy of the string s in the arena; NULL when s is NULL or on failure. */
char *carve_arena_strdup(struct carve_arena *a, const char *s);
/* Grows an arena array: returns a copy of old (n elements of size) with room
 * for cap elements (the rest zeroed), or NULL on failure or overflow of
 * cap * size.  The old block is abandoned (freed with the arena) and stays
 * readable until then. */
void *carve_arena_grow(struct carve_arena *a, void *old, size_t n, size_t cap, size_t size);

#endif
