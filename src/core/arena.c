/*
 * arena.c - bump allocator (include/carve/arena.h).  Chunks are at least
 * 16 KiB; a request larger than that gets a chunk of its own.
 */
#include <string.h>

#include "carve/arena.h"

#define CHUNK_MIN (16u * 1024u)
#define ALIGN 16u

struct carve_arena_chunk {
	struct carve_arena_chunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

void carve_arena_init(struct carve_arena *a)
{
	a->head = NULL;
	a->total = 0;
}

void carve_arena_cleanup(struct carve_arena *a)
{
	struct carve_arena_chunk *c, *next;

	if (!a)
		return;
	for (c = a->head; c; c = next) {
		next = c->next;
		carve_free(c);
	}
	a->head = NULL;
	a->total = 0;
}

void *carve_arena_alloc(struct carve_arena *a, size_t size)
{
	struct carve_arena_chunk *c = a->head;
	size_t need = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	void *p;

	if (size > SIZE_MAX / 2)
		return NULL;
	if (!need)
		need = ALIGN;
	if (!c || c->size - c->used < need) {
		size_t csize = need > CHUNK_MIN ? need : CHUNK_MIN;

		c = carve_malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->size = csize;
		c->used = 0;
		if (a->head && need > CHUNK_MIN) {
			/* A big one-off: keep the current chunk in front for small ones. */
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	p = c->data + c->used;
	c->used += need;
	a->total += need;
	memset(p, 0, need);
	return p;
}

char *carve_arena_strndup(struct carve_arena *a, const char *s, size_t n)
{
	char *p = carve_arena_alloc(a, n + 1);

	if (p) {
		if (n) /* s may be NULL when n is 0 */
			memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

char *carve_arena_strdup(struct carve_arena *a, const char *s)
{
	return s ? carve_arena_strndup(a, s, strlen(s)) : NULL;
}

void *carve_arena_grow(struct carve_arena *a, void *old, size_t n, size_t cap, size_t size)
{
	void *p;

	if (size && cap > SIZE_MAX / size)
		return NULL;
	p = carve_arena_alloc(a, cap * size);
	if (p && old && n)
		memcpy(p, old, n * size);
	return p;
}
