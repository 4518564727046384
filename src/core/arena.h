/*
 * arena.h - a bump allocator for objects that live and die together (a
 * loaded manifest set, a parsed YAML file).
 *
 * Memory comes in chunks from carve_malloc; nothing is freed before
 * carve_arena_cleanup, which frees everything at once.  Allocations are
 * aligned for any scalar type.  Not thread-safe.
 */
#ifndef CARVE_ARENA_H
#define CARVE_ARENA_H

#include "carve/carve.h"

struct carve_arena_chunk;

struct carve_arena {
	struct carve_arena_chunk *head;
	size_t total; /* bytes handed out, for memory accounting */
};

void carve_arena_init(struct carve_arena *a);
void carve_arena_cleanup(struct carve_arena *a);
/* size bytes, zeroed; NULL on allocation failure. */
void *carve_arena_alloc(struct carve_arena *a, size_t size);
/* Copy of s (n bytes, then a NUL) in the arena; NULL on failure. */
char *carve_arena_strndup(struct carve_arena *a, const char *s, size_t n);
char *carve_arena_strdup(struct carve_arena *a, const char *s);
/* Grows an arena array: returns a copy of old (n elements of size) with room
 * for cap elements, or NULL.  The old block is abandoned (freed with the arena). */
void *carve_arena_grow(struct carve_arena *a, void *old, size_t n, size_t cap, size_t size);

#endif
