/*
 * carve.h - umbrella header of libcarve: version, error codes, source
 * positions and the allocator hook.
 *
 * Ownership rule for the whole API (stated once, here):
 *   - Pointer arguments are borrowed for the duration of the call; a callee
 *     copies what it keeps.  Any exception says "Takes ownership" at the
 *     function.
 *   - A returned `const T *` is a view, valid until the next mutating call on
 *     its owner.  A returned non-const pointer belongs to the caller, who frees
 *     it with the paired _destroy() (or carve_free()).  _destroy(NULL) is a
 *     no-op.
 *   - Actions return 0 or a negative CARVE_E* code; constructors return NULL
 *     and fill the optional struct carve_error; predicates return bool.
 */
#ifndef CARVE_CARVE_H
#define CARVE_CARVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CARVE_VERSION "0.1.0"

/* One table for every error code: name and message. */
#define CARVE_ERR_MAP(XX)                                  \
	XX(NOMEM, "out of memory")                         \
	XX(INVAL, "invalid argument")                      \
	XX(NOTFOUND, "no such object")                     \
	XX(EXISTS, "object already exists")                \
	XX(RANGE, "value out of range")                    \
	XX(NOFIT, "request does not fit")                  \
	XX(QUOTA, "quota exceeded")                        \
	XX(PARSE, "malformed input")                       \
	XX(IO, "I/O or storage failure")                   \
	XX(FULL, "capacity of a fixed table exhausted")    \
	XX(BUSY, "resource in use")

enum carve__err_index {
	CARVE__ERRIDX_BASE = 0,
#define XX(name, msg) CARVE__ERRIDX_##name,
	CARVE_ERR_MAP(XX)
#undef XX
	CARVE__ERRIDX_END
};

/* CARVE_OK is 0; every error is negative: CARVE_ENOMEM = -1, CARVE_EINVAL = -2, ... */
enum carve_err {
	CARVE_OK = 0,
#define XX(name, msg) CARVE_E##name = -CARVE__ERRIDX_##name,
	CARVE_ERR_MAP(XX)
#undef XX
};

/* Message for a code ("out of memory"); "unknown error" for anything else. */
const char *carve_strerror(int code);
/* Symbolic name for a code ("ENOMEM"); "EUNKNOWN" for anything else. */
const char *carve_err_name(int code);

/* Optional detail for a failed call.  Callers may pass NULL. */
struct carve_error {
	int code;
	char text[256];
};

/* Fills err (when not NULL) with code and a printf-style message; returns code. */
int carve_errorf(struct carve_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/*
 * A position in an input file, 1-based.  `file` is borrowed from whoever
 * loaded the input (the manifest set interns file names for its lifetime).
 * line == 0 means "no position" (an object built from code, not a file).
 */
struct carve_pos {
	const char *file;
	uint32_t line;
	uint32_t col;
};

/* Allocator hook: every allocation of libcarve goes through these. */
struct carve_allocator {
	void *(*malloc_fn)(size_t size);
	void *(*realloc_fn)(void *ptr, size_t size);
	void (*free_fn)(void *ptr);
};
/* Replaces the allocator; NULL restores libc's.  Not thread-safe: call first. */
void carve_set_allocator(const struct carve_allocator *a);
void *carve_malloc(size_t size);
void *carve_calloc(size_t n, size_t size);
void *carve_realloc(void *ptr, size_t size);
void carve_free(void *ptr);
/* Copy of s (NULL for NULL or on allocation failure); free with carve_free. */
char *carve_strdup(const char *s);

#endif
