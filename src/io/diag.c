/*
 * diag.c - the diagnostics list (see include/carve/diag.h).
 *
 * Invariant: nerrors/nwarnings count every diagnostic ever added, including
 * those dropped for lack of memory or suppressed over the list's limit, so
 * exit codes stay right.  Printing escapes what came from an input
 * (carve_fputs_esc): a message cannot add a line or a terminal sequence.
 */
#include <stdarg.h>
#include <stdbool.h>
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

void carve_diags_clear(struct carve_diags *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		carve_free(d->v[i].msg);
	d->n = 0;
	d->nerrors = d->nwarnings = 0;
	d->dropped = d->suppressed = 0;
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
	d->v[d->n].rule = NULL;
	d->n++;
}

void carve_diags_tag(struct carve_diags *d, size_t from, const char *rule)
{
	size_t i;

	for (i = from; i < d->n; i++)
		if (!d->v[i].rule)
			d->v[i].rule = rule;
}

const char *carve_diag_rule(const struct carve_diag *x)
{
	return x->rule ? x->rule : "other";
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

/* ---- printing text from inputs ---------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when s[0] does
 * not start one (overlong forms, surrogates and code points past U+10FFFF
 * are invalid); *cp is its code point. */
static size_t utf8_seq(const unsigned char *s, unsigned long *cp)
{
	unsigned char c = s[0];
	size_t n, i;
	unsigned long v;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf))
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	*cp = v;
	return n;
}

/* Code points printed as escapes though valid: controls, bidirectional
 * controls, line and paragraph separators. */
static bool cp_unsafe(unsigned long cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/*
 * The next piece of s as printed: copied (a safe character) or escaped.
 * Writes at most 16 bytes to buf (not terminated), their count to *len;
 * returns the bytes of s consumed (0 at the end of s).
 */
static size_t esc_next(const unsigned char *s, char *buf, size_t *len)
{
	static const char hex[] = "0123456789ABCDEF";
	unsigned long cp;
	size_t n, i;

	if (!*s) {
		*len = 0;
		return 0;
	}
	n = utf8_seq(s, &cp);
	if (n && !cp_unsafe(cp)) {
		memcpy(buf, s, n);
		*len = n;
		return n;
	}
	if (n == 1 && (cp == '\n' || cp == '\t' || cp == '\r')) {
		buf[0] = '\\';
		buf[1] = cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r';
		*len = 2;
		return 1;
	}
	if (!n)
		n = 1; /* a byte outside valid UTF-8: escaped alone */
	for (i = 0; i < n; i++) {
		buf[4 * i] = '\\';
		buf[4 * i + 1] = 'x';
		buf[4 * i + 2] = hex[s[i] >> 4];
		buf[4 * i + 3] = hex[s[i] & 15];
	}
	*len = 4 * n;
	return n;
}

void carve_fputs_esc(const char *s, FILE *out)
{
	const unsigned char *p = (const unsigned char *)s;
	char buf[16];
	size_t len, n;

	while ((n = esc_next(p, buf, &len))) {
		fwrite(buf, 1, len, out);
		p += n;
	}
}

size_t carve_esc_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char buf[16];
	size_t len, n, total = 0;

	while ((n = esc_next(p, buf, &len))) {
		total += len;
		p += n;
	}
	return total;
}

void carve_fputs_esc_pad(const char *s, int width, FILE *out)
{
	size_t len = carve_esc_len(s);

	carve_fputs_esc(s, out);
	for (; width > 0 && len < (size_t)width; len++)
		fputc(' ', out);
}

void carve_diags_print(const struct carve_diags *d, FILE *out)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct carve_diag *g = &d->v[i];

		if (g->pos.file) {
			carve_fputs_esc(g->pos.file, out);
			if (g->pos.line)
				fprintf(out, ":%u:%u", (unsigned)g->pos.line, (unsigned)g->pos.col);
			fprintf(out, ": %s: ", sev_name(g->sev));
		} else {
			fprintf(out, "carve: %s: ", sev_name(g->sev));
		}
		carve_fputs_esc(g->msg, out);
		fputc('\n', out);
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
