/*
 * diag.c - the diagnostics list (see include/carve/diag.h).
 *
 * Invariant: nerrors/nwarnings count every diagnostic ever added, including
 * those dropped for lack of memory or suppressed over the list's limit, so
 * exit codes stay right.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "carve/diag.h"

void carve_diags_init(struct carve_diags *d)
{
	memset(d, 0, sizeof(*d));
}

void carve_diags_cleanup(struct carve_diags *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->n; i++)
		carve_free(d->v[i].msg);
	carve_free(d->v);
	memset(d, 0, sizeof(*d));
}

static void vdiag(struct carve_diags *d, enum carve_severity sev,
		  struct carve_pos pos, const char *fmt, va_list ap)
{
	char buf[1024];
	struct carve_diag *nv;

	if (sev == CARVE_SEV_ERROR)
		d->nerrors++;
	else if (sev == CARVE_SEV_WARNING)
		d->nwarnings++;
	if (d->max && d->n >= d->max) {
		d->suppressed++;
		return;
	}
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;

		nv = carve_realloc(d->v, cap * sizeof(*nv));
		if (!nv) {
			d->dropped++;
			return;
		}
		d->v = nv;
		d->cap = cap;
	}
	d->v[d->n].msg = carve_strdup(buf);
	if (!d->v[d->n].msg) {
		d->dropped++;
		return;
	}
	d->v[d->n].sev = sev;
	d->v[d->n].pos = pos;
	d->n++;
}

void carve_diag(struct carve_diags *d, enum carve_severity sev,
		struct carve_pos pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(d, sev, pos, fmt, ap);
	va_end(ap);
}

void carve_diag_error(struct carve_diags *d, struct carve_pos pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(d, CARVE_SEV_ERROR, pos, fmt, ap);
	va_end(ap);
}

void carve_diag_warn(struct carve_diags *d, struct carve_pos pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(d, CARVE_SEV_WARNING, pos, fmt, ap);
	va_end(ap);
}

static int pos_cmp(const struct carve_diag *a, const struct carve_diag *b)
{
	const char *fa = a->pos.file ? a->pos.file : "";
	const char *fb = b->pos.file ? b->pos.file : "";
	int c = strcmp(fa, fb);

	if (c)
		return c;
	if (a->pos.line != b->pos.line)
		return a->pos.line < b->pos.line ? -1 : 1;
	if (a->pos.col != b->pos.col)
		return a->pos.col < b->pos.col ? -1 : 1;
	return 0;
}

/* Merges the sorted runs v[lo, mid) and v[mid, hi) through tmp; taking
 * from the left run on ties keeps the sort stable. */
static void merge(struct carve_diag *v, struct carve_diag *tmp, size_t lo, size_t mid,
		  size_t hi)
{
	size_t i = lo, j = mid, k = lo;

	while (i < mid && j < hi)
		tmp[k++] = pos_cmp(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
	while (i < mid)
		tmp[k++] = v[i++];
	while (j < hi)
		tmp[k++] = v[j++];
	memcpy(v + lo, tmp + lo, (hi - lo) * sizeof(*v));
}

void carve_diags_sort(struct carve_diags *d)
{
	struct carve_diag *tmp;
	size_t i, j, w;

	if (d->n < 2)
		return;
	tmp = carve_malloc(d->n * sizeof(*tmp));
	if (!tmp) {
		/* No memory for the merge: insertion sort, stable too. */
		for (i = 1; i < d->n; i++) {
			struct carve_diag x = d->v[i];

			for (j = i; j > 0 && pos_cmp(&d->v[j - 1], &x) > 0; j--)
				d->v[j] = d->v[j - 1];
			d->v[j] = x;
		}
		return;
	}
	/* Bottom-up merge sort: O(n log n), stable. */
	for (w = 1; w < d->n; w *= 2)
		for (i = 0; i + w < d->n; i += 2 * w)
			merge(d->v, tmp, i, i + w, i + 2 * w < d->n ? i + 2 * w : d->n);
	carve_free(tmp);
}

static const char *sev_name(enum carve_severity s)
{
	switch (s) {
	case CARVE_SEV_ERROR:
		return "error";
	case CARVE_SEV_WARNING:
		return "warning";
	default:
		return "note";
	}
}

void carve_diags_print(const struct carve_diags *d, FILE *out)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct carve_diag *g = &d->v[i];

		if (g->pos.file && g->pos.line)
			fprintf(out, "%s:%u:%u: %s: %s\n", g->pos.file,
				(unsigned)g->pos.line, (unsigned)g->pos.col,
				sev_name(g->sev), g->msg);
		else if (g->pos.file)
			fprintf(out, "%s: %s: %s\n", g->pos.file, sev_name(g->sev), g->msg);
		else
			fprintf(out, "carve: %s: %s\n", sev_name(g->sev), g->msg);
	}
	if (d->dropped)
		fprintf(out, "carve: error: %zu further diagnostics lost (out of memory)\n",
			d->dropped);
	if (d->suppressed)
		fprintf(out, "carve: note: %zu further diagnostics not shown\n", d->suppressed);
}

long carve_diags_find(const struct carve_diags *d, const char *needle)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (strstr(d->v[i].msg, needle))
			return (long)i;
	return -1;
}
