/*
 * format.c - figures as people read them (include/carve/format.h): counts,
 * percentages, durations, GPU-hours, differences and ranges, for the
 * simulator's table and the HTML report alike.
 *
 * Invariants: every output fits CARVE_FMT_LEN; a value that is not finite
 * is "-"; rounding happens once, here, so a table and a report of the same
 * result print the same text.  No allocation, no locale (the grouping
 * separator is always ',').
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "carve/format.h"

/* A non-negative integer with ',' every three digits. */
static void grouped(char *buf, size_t n, double v)
{
	char digits[40];
	size_t len, i, o = 0;

	snprintf(digits, sizeof(digits), "%.0f", v);
	len = strlen(digits);
	for (i = 0; i < len && o + 1 < n; i++) {
		if (i && (len - i) % 3 == 0 && o + 2 < n)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	if (n)
		buf[o < n ? o : n - 1] = '\0';
}

/* |s| seconds, no sign. */
static void duration(char *buf, size_t n, double s)
{
	double r = round(s);

	if (r < 60) {
		snprintf(buf, n, "%.0f s", r);
	} else if (r < 3600) {
		long m = (long)(r / 60), sec = (long)r % 60;

		if (sec)
			snprintf(buf, n, "%ldm %lds", m, sec);
		else
			snprintf(buf, n, "%ldm", m);
	} else if (r < 48 * 3600) {
		long mins = (long)round(r / 60), h = mins / 60, m = mins % 60;

		if (m)
			snprintf(buf, n, "%ldh %ldm", h, m);
		else
			snprintf(buf, n, "%ldh", h);
	} else if (r < 1e6 * 86400) {
		snprintf(buf, n, "%.1f d", r / 86400);
	} else {
		snprintf(buf, n, "%.3g d", r / 86400);
	}
}

/* |v| in unit u, no sign. */
static void magnitude(char *buf, size_t n, enum carve_unit u, double a)
{
	switch (u) {
	case CARVE_UNIT_COUNT:
		if (a < 1e15)
			grouped(buf, n, round(a));
		else
			snprintf(buf, n, "%.3g", a);
		break;
	case CARVE_UNIT_PCT:
		snprintf(buf, n, "%.1f %%", a);
		break;
	case CARVE_UNIT_SEC:
		duration(buf, n, a);
		break;
	case CARVE_UNIT_GPUH:
	case CARVE_UNIT_NUM:
		if (a >= 1e15)
			snprintf(buf, n, "%.3g", a);
		else if (a >= 100 || (u == CARVE_UNIT_NUM && a == floor(a)))
			grouped(buf, n, round(a));
		else if (a >= 10 && u == CARVE_UNIT_GPUH)
			snprintf(buf, n, "%.1f", a);
		else
			snprintf(buf, n, "%.2f", a);
		break;
	}
}

/* True when v reads as zero in unit u (no "-0"). */
static bool reads_zero(enum carve_unit u, double v)
{
	char b[CARVE_FMT_LEN], z[CARVE_FMT_LEN];

	magnitude(b, sizeof(b), u, fabs(v));
	magnitude(z, sizeof(z), u, 0);
	return !strcmp(b, z);
}

char *carve_fmt(char *buf, size_t n, enum carve_unit u, double v)
{
	if (!n)
		return buf;
	if (!isfinite(v)) {
		snprintf(buf, n, "-");
		return buf;
	}
	if (v < 0 && !reads_zero(u, v)) {
		buf[0] = '-';
		if (n > 1)
			magnitude(buf + 1, n - 1, u, -v);
	} else {
		magnitude(buf, n, u, fabs(v));
	}
	return buf;
}

char *carve_fmt_diff(char *buf, size_t n, enum carve_unit u, double base, double v, bool rel)
{
	double d = v - base;
	char m[CARVE_FMT_LEN], r[CARVE_FMT_LEN] = "";
	const char *sign = reads_zero(u, d) ? "" : d < 0 ? "-" : "+";

	if (!n)
		return buf;
	if (!isfinite(d)) {
		snprintf(buf, n, "-");
		return buf;
	}
	magnitude(m, sizeof(m), u, fabs(d));
	if (u == CARVE_UNIT_PCT) {
		/* percentage points: "+1.1 pp" */
		snprintf(m, sizeof(m), "%.1f pp", fabs(d));
		if (!strcmp(m, "0.0 pp"))
			sign = "";
	} else if (rel && base != 0 && *sign) {
		snprintf(r, sizeof(r), " (%+.1f %%)", d / fabs(base) * 100);
	}
	snprintf(buf, n, "%s%s%s", sign, m, r);
	return buf;
}

char *carve_fmt_range(char *buf, size_t n, enum carve_unit u, double lo, double hi)
{
	char a[CARVE_FMT_LEN], b[CARVE_FMT_LEN];

	carve_fmt(a, sizeof(a), u, lo);
	carve_fmt(b, sizeof(b), u, hi);
	if (!strcmp(a, b))
		snprintf(buf, n, "%s", a);
	else if (u == CARVE_UNIT_PCT && isfinite(lo) && isfinite(hi))  /* "30.4–45.3 %" */
		snprintf(buf, n, "%.1f\xe2\x80\x93%s", lo, b);
	else
		snprintf(buf, n, "%s\xe2\x80\x93%s", a, b);
	return buf;
}
