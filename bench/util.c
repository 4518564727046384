/*
 * util.c - clocks, quantiles, the counting allocator and table printing
 * for carve-bench (random numbers come from include/carve/rng.h).
 *
 * The counting allocator puts a 16-byte header (the requested size) in
 * front of every block, so free() knows what it gives back; the live total
 * is the sum of requested sizes, not malloc's own overhead.  It must be
 * installed before the first carve_* allocation (a block from another
 * allocator has no header) and is process-global, like carve's hook.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

/* ---- clocks ---- */

static double ts_s(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double bench_now(const struct bench_opts *o)
{
	return ts_s(o->wall ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID);
}

const char *bench_clock_name(const struct bench_opts *o)
{
	return o->wall ? "wall time (CLOCK_MONOTONIC)" : "CPU time of the process";
}

/* ---- samples ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

double bench_quantile(uint64_t *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)(q * (double)(n - 1) + 0.5);
	return (double)v[i < n ? i : n - 1];
}

/* ---- counting allocator ---- */

#define HDR 16

static int64_t live;

static void *c_malloc(size_t size)
{
	unsigned char *p = malloc(size + HDR);

	if (!p)
		return NULL;
	memcpy(p, &size, sizeof(size));
	live += (int64_t)size;
	return p + HDR;
}

static void c_free(void *ptr)
{
	unsigned char *p;
	size_t size;

	if (!ptr)
		return;
	p = (unsigned char *)ptr - HDR;
	memcpy(&size, p, sizeof(size));
	live -= (int64_t)size;
	free(p);
}

static void *c_realloc(void *ptr, size_t size)
{
	unsigned char *p, *q;
	size_t old;

	if (!ptr)
		return c_malloc(size);
	p = (unsigned char *)ptr - HDR;
	memcpy(&old, p, sizeof(old));
	q = realloc(p, size + HDR);
	if (!q)
		return NULL;
	memcpy(q, &size, sizeof(size));
	live += (int64_t)size - (int64_t)old;
	return q + HDR;
}

void bench_alloc_install(void)
{
	static const struct carve_allocator a = {c_malloc, c_realloc, c_free};

	carve_set_allocator(&a);
}

int64_t bench_alloc_live(void)
{
	return live;
}

/* ---- tables ---- */

void bench_title(const char *fig, const char *what)
{
	printf("\n== %s: %s\n", fig, what);
}

void bench_row(const char *label, double v, const char *unit)
{
	if (isnan(v))
		printf("  %-46s %14s  %s\n", label, "-", unit);
	else if (fabs(v) >= 100 || v == floor(v))
		printf("  %-46s %14.0f  %s\n", label, v, unit);
	else
		printf("  %-46s %14.3f  %s\n", label, v, unit);
}

void bench_note(const char *fmt, ...)
{
	va_list ap;

	printf("  ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}
