/*
 * util.c - the error table, carve_errorf and the allocator hook.
 *
 * The allocator is process-global and set once before any other call; every
 * allocation in libcarve goes through carve_malloc/carve_realloc/carve_free so
 * tests can fail the Nth allocation.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/carve.h"

static const char *const err_msgs[] = {
#define XX(name, msg) msg,
	CARVE_ERR_MAP(XX)
#undef XX
};

static const char *const err_names[] = {
#define XX(name, msg) "E" #name,
	CARVE_ERR_MAP(XX)
#undef XX
};

const char *carve_strerror(int code)
{
	if (code == 0)
		return "success";
	if (code < 0 && -code < CARVE__ERRIDX_END)
		return err_msgs[-code - 1];
	return "unknown error";
}

const char *carve_err_name(int code)
{
	if (code == 0)
		return "OK";
	if (code < 0 && -code < CARVE__ERRIDX_END)
		return err_names[-code - 1];
	return "EUNKNOWN";
}

int carve_errorf(struct carve_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->text, sizeof(err->text), fmt, ap);
		va_end(ap);
	}
	return code;
}

static struct carve_allocator alloc = {malloc, realloc, free};

void carve_set_allocator(const struct carve_allocator *a)
{
	if (a)
		alloc = *a;
	else
		alloc = (struct carve_allocator){malloc, realloc, free};
}

void *carve_malloc(size_t size)
{
	return alloc.malloc_fn(size ? size : 1);
}

void *carve_calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = carve_malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void *carve_realloc(void *ptr, size_t size)
{
	return alloc.realloc_fn(ptr, size ? size : 1);
}

void carve_free(void *ptr)
{
	if (ptr)
		alloc.free_fn(ptr);
}

char *carve_strdup(const char *s)
{
	size_t n;
	char *p;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	p = carve_malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}
