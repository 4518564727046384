/*
 * report.c - the simulation report: one self-contained HTML page with
 * inline CSS and inline SVG charts drawn here (include/carve/report.h,
 * docs/report.md).
 *
 * Invariants: nothing on the page refers to anything outside it (no URL, no
 * script, no font or image to load), and every string that comes from the
 * JSON goes through esc() before it is written.  The JSON is only read,
 * never trusted: its shape is checked first (carve_report_check: a field of
 * the wrong type is refused with its JSON path); a missing or null field or
 * an array shorter than the time axis draws less, never fails.  Names keep the JSON's order
 * (jansson keeps insertion order); in a comparison a queue or pool present
 * only in the second run comes after those of the first, and both runs'
 * charts share their y and x scales.
 *
 * Ownership: borrows the result and the stream; the one allocation is the
 * stacked-area scratch of quota_area(), freed before it returns.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "carve/format.h"
#include "carve/report.h"

#define MAX_POINTS 4000   /* a longer series is drawn with a stride */
#define MAX_TICKS 20

/* Chart geometry, in SVG user units (the SVG scales to its box). */
#define CW 600.0
#define PLOT_L 58.0
#define PLOT_R 16.0
#define PLOT_T 14.0
#define PLOT_H 200.0
#define AXIS_H 42.0
#define LEGEND_ROW 18.0
#define LEGEND_PER_ROW 4

static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

/* ---- JSON access: NULL / false for anything missing or mistyped --------- */

static const json_t *obj(const json_t *o, const char *key)
{
	const json_t *v = o ? json_object_get(o, key) : NULL;

	return json_is_object(v) ? v : NULL;
}

static const json_t *arr(const json_t *o, const char *key)
{
	const json_t *v = o ? json_object_get(o, key) : NULL;

	return json_is_array(v) ? v : NULL;
}

static bool numval(const json_t *v, double *out)
{
	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return isfinite(*out);
}

static bool num(const json_t *o, const char *key, double *out)
{
	return o && numval(json_object_get(o, key), out);
}

/* ---- output helpers ----------------------------------------------------- */

/* Writes s with the five HTML-special characters as entities. */
static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* A duration and a plain number, as the table of `carve simulate` writes
 * them (include/carve/format.h). */
static void fmt_dur(char *buf, size_t n, double s)
{
	carve_fmt(buf, n, CARVE_UNIT_SEC, s);
}

/* Axis ticks: integers without decimals, others with up to two, huge ones
 * in exponent form. */
static void fmt_num(char *buf, size_t n, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, n, "%.0f", v);
	else if (fabs(v) >= 1e15)
		snprintf(buf, n, "%.3g", v);
	else
		snprintf(buf, n, "%.2f", v);
}

/* ---- axes --------------------------------------------------------------- */

/* A step of 1, 2 or 5 x 10^k giving about `want` intervals over span. */
static double nice_step(double span, int want)
{
	double raw = span / want, mag = pow(10, floor(log10(raw))), r = raw / mag;

	if (r <= 1)
		return mag;
	if (r <= 2)
		return 2 * mag;
	if (r <= 5)
		return 5 * mag;
	return 10 * mag;
}

/* The time axis unit for a span of seconds. */
static void time_unit(double span, double *div, const char **label)
{
	if (span > 2 * 86400) {
		*div = 86400;
		*label = "time (days)";
	} else if (span > 2 * 3600) {
		*div = 3600;
		*label = "time (hours)";
	} else if (span > 120) {
		*div = 60;
		*label = "time (minutes)";
	} else {
		*div = 1;
		*label = "time (seconds)";
	}
}

/*
 * One plot area.  x is linear over [xlo, xhi] or, with xlog, over
 * log10(1 + x) (wait times: 0 s up to days in one axis).
 */
struct plot {
	FILE *f;
	double xlo, xhi, ylo, yhi;
	bool xlog;
	double pw;   /* plot width */
};

static double xs(double x) { return log10(1 + (x > 0 ? x : 0)); }

/* Keeps a coordinate printable: extreme values draw off the chart, not as
 * 300-digit numbers the SVG parser rejects. */
static double clamp(double v)
{
	return v > 1e6 ? 1e6 : v < -1e6 ? -1e6 : v;
}

static double px(const struct plot *p, double x)
{
	double lo = p->xlog ? xs(p->xlo) : p->xlo, hi = p->xlog ? xs(p->xhi) : p->xhi;
	double v = p->xlog ? xs(x) : x;

	return clamp(PLOT_L + (v - lo) / (hi - lo) * p->pw);
}

static double py(const struct plot *p, double y)
{
	return clamp(PLOT_T + PLOT_H - (y - p->ylo) / (p->yhi - p->ylo) * PLOT_H);
}

static int legend_rows(int n)
{
	return n <= 0 ? 0 : (n + LEGEND_PER_ROW - 1) / LEGEND_PER_ROW;
}

/* Opens a chart: figure, caption, svg, grid, y ticks and axis labels. */
static void plot_open(struct plot *p, const char *kind, const char *caption,
		      const char *name, int nlegend, const char *xlabel, const char *ylabel)
{
	FILE *f = p->f;
	double h = PLOT_T + PLOT_H + AXIS_H + legend_rows(nlegend) * LEGEND_ROW + 6;
	double step, y, y0;
	int i;

	if (!(p->xhi > p->xlo))
		p->xhi = p->xlo + 1;
	if (!(p->yhi > p->ylo))
		p->yhi = p->ylo + 1;
	p->pw = CW - PLOT_L - PLOT_R;
	fputs("<figure class=\"chart-box\"><figcaption>", f);
	esc(f, caption);
	if (name) {
		fputs(" &mdash; ", f);
		esc(f, name);
	}
	fprintf(f, "</figcaption>\n<svg class=\"chart\" data-chart=\"%s\" "
		"xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
		"role=\"img\">\n", kind, CW, h);
	step = nice_step(p->yhi - p->ylo, 5);
	/* At most MAX_TICKS: a step below the values' precision never advances. */
	y0 = ceil(p->ylo / step) * step;
	for (i = 0; i < MAX_TICKS; i++) {
		char b[32];

		y = y0 + i * step;
		if (y > p->yhi + step * 1e-9)
			break;

		fmt_num(b, sizeof(b), fabs(y) < step * 1e-9 ? 0 : y);
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			PLOT_L, PLOT_L + p->pw, py(p, y), py(p, y), PLOT_L - 5, py(p, y) + 4, b);
	}
	fprintf(f, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
		"<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
		PLOT_L, PLOT_L + p->pw, PLOT_T + PLOT_H, PLOT_T + PLOT_H,
		PLOT_L, PLOT_L, PLOT_T, PLOT_T + PLOT_H);
	fprintf(f, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
		PLOT_L + p->pw / 2, PLOT_T + PLOT_H + 36, xlabel);
	fprintf(f, "<text class=\"label\" transform=\"translate(14 %.1f) rotate(-90)\" "
		"text-anchor=\"middle\">%s</text>\n", PLOT_T + PLOT_H / 2, ylabel);
}

/* x ticks of a linear axis, labels divided by div. */
static void xticks_linear(const struct plot *p, double div)
{
	double step = nice_step((p->xhi - p->xlo) / div, 6), x0 = ceil(p->xlo / div / step) * step, x;
	int i;

	for (i = 0; i < MAX_TICKS; i++) {
		char b[32];
		double X;

		x = x0 + i * step;
		if (x > p->xhi / div + step * 1e-9)
			break;
		X = px(p, x * div);

		fmt_num(b, sizeof(b), fabs(x) < step * 1e-9 ? 0 : x);
		fprintf(p->f, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			X, X, PLOT_T + PLOT_H, PLOT_T + PLOT_H + 4, X, PLOT_T + PLOT_H + 17, b);
	}
}

/* x ticks of the wait axis: 0, 10 s, 1 min, 10 min, 1 h, 6 h, 1 d, 1 w. */
static void xticks_wait(const struct plot *p)
{
	static const struct { double s; const char *l; } t[] = {
		{0, "0"}, {10, "10 s"}, {60, "1 min"}, {600, "10 min"}, {3600, "1 h"},
		{21600, "6 h"}, {86400, "1 d"}, {604800, "1 w"}, {2592000, "30 d"},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]) && t[i].s <= p->xhi; i++) {
		double X = px(p, t[i].s);

		fprintf(p->f, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
			X, X, PLOT_T + PLOT_H, PLOT_T + PLOT_H + 4, X, PLOT_T + PLOT_H + 17, t[i].l);
	}
}

/* Legend entry i (dashed: a line swatch instead of a block). */
static void legend(const struct plot *p, int i, const char *name, const char *colour,
		   bool dashed)
{
	double x = PLOT_L + (i % LEGEND_PER_ROW) * (p->pw / LEGEND_PER_ROW);
	double y = PLOT_T + PLOT_H + AXIS_H + (i / LEGEND_PER_ROW) * LEGEND_ROW + 4;

	if (dashed)
		fprintf(p->f, "<line class=\"nominal\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
			"y2=\"%.1f\"/>", x, x + 12, y + 6, y + 6);
	else
		fprintf(p->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" "
			"fill=\"%s\"/>", x, y, colour);
	fprintf(p->f, "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">", x + 16, y + 10);
	esc(p->f, name);
	fputs("</text>\n", p->f);
}

static void plot_close(FILE *f)
{
	fputs("</svg></figure>\n", f);
}

static void nodata(FILE *f, const char *caption, const char *name)
{
	fputs("<figure class=\"chart-box\"><figcaption>", f);
	esc(f, caption);
	if (name) {
		fputs(" &mdash; ", f);
		esc(f, name);
	}
	fputs("</figcaption><p class=\"nodata\">no data</p></figure>\n", f);
}

/* Opens a series element and its tooltip. */
static void series_open(FILE *f, const char *elem, const char *name, int npoints)
{
	fprintf(f, "<%s class=\"series\" data-series=\"", elem);
	esc(f, name);
	fprintf(f, "\" data-points=\"%d\"", npoints);
}

/* Points of a (t, v) pair of arrays that are both numbers. */
static int count_pairs(const json_t *ts, const json_t *vs)
{
	size_t i, n = json_array_size(ts) < json_array_size(vs) ?
		json_array_size(ts) : json_array_size(vs);
	int c = 0;
	double a, b;

	for (i = 0; i < n; i++)
		c += numval(json_array_get(ts, i), &a) && numval(json_array_get(vs, i), &b);
	return c;
}

static size_t stride_for(size_t n)
{
	return n > MAX_POINTS ? (n + MAX_POINTS - 1) / MAX_POINTS : 1;
}

/* A polyline over (ts[i], vs[i]); a null or missing value breaks the line. */
static void line_series(const struct plot *p, const json_t *ts, const json_t *vs,
			const char *name, const char *colour, bool dashed)
{
	size_t i, n = json_array_size(ts) < json_array_size(vs) ?
		json_array_size(ts) : json_array_size(vs), step = stride_for(n);
	int drawn = 0;
	bool pen = false;
	double t, v;

	for (i = 0; i < n; i += step)
		drawn += numval(json_array_get(ts, i), &t) && numval(json_array_get(vs, i), &v);
	if (!drawn)   /* an empty d="" is a console error in some browsers */
		return;
	series_open(p->f, "path", name, drawn);
	fprintf(p->f, " fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s d=\"", colour,
		dashed ? " stroke-dasharray=\"5 3\"" : "");
	for (i = 0; i < n; i += step) {
		if (!numval(json_array_get(ts, i), &t) || !numval(json_array_get(vs, i), &v)) {
			pen = false;
			continue;
		}
		fprintf(p->f, "%s%.1f %.1f", pen ? " L" : " M", px(p, t), py(p, v));
		pen = true;
	}
	fputs("\"><title>", p->f);
	esc(p->f, name);
	fprintf(p->f, " (%d points)</title></path>\n", drawn);
}

/* Smallest and largest number of an array; false when it has none. */
static bool array_range(const json_t *a, double *lo, double *hi)
{
	size_t i;
	bool any = false;
	double v;

	for (i = 0; i < json_array_size(a); i++) {
		if (!numval(json_array_get(a, i), &v))
			continue;
		if (!any || v < *lo)
			*lo = v;
		if (!any || v > *hi)
			*hi = v;
		any = true;
	}
	return any;
}

/* ---- chart: allocation and utilisation per pool ------------------------- */

/* The time axis every run's time charts share, and the window's end. */
struct taxis {
	double lo, hi;  /* hi < lo: no run has a time axis */
	double end;     /* the trace's end (window end_s); NAN when unknown */
};

/* Sets p's x range to the shared time axis; false when ts has no times. */
static bool time_range(struct plot *p, const json_t *ts, const struct taxis *ax)
{
	if (!array_range(ts, &p->xlo, &p->xhi))
		return false;
	if (ax && ax->hi >= ax->lo) {
		p->xlo = ax->lo;
		p->xhi = ax->hi;
	}
	return true;
}

/* A dashed vertical line at the trace's end, labelled; not a series. */
static void window_end(const struct plot *p, const struct taxis *ax)
{
	double X;

	if (!ax || !isfinite(ax->end) || ax->end < p->xlo || ax->end > p->xhi)
		return;
	X = px(p, ax->end);
	fprintf(p->f, "<line class=\"window-end\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
		"y2=\"%.1f\"><title>the trace's end (window end)</title></line>"
		"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">trace end</text>\n",
		X, X, PLOT_T, PLOT_T + PLOT_H, X - 3, PLOT_T + 10);
}

static void pool_chart(FILE *f, const json_t *ts, const char *pool, const json_t *pd,
		       const struct taxis *ax)
{
	const json_t *alloc = arr(pd, "allocation_pct"), *util = arr(pd, "utilisation_pct");
	struct plot p = {.f = f, .ylo = 0, .yhi = 100};
	double div, lo = 0, hi = 0;
	const char *xlabel;

	if (!time_range(&p, ts, ax) ||
	    (count_pairs(ts, alloc) == 0 && count_pairs(ts, util) == 0)) {
		nodata(f, "Allocation and utilisation", pool);
		return;
	}
	if (array_range(alloc, &lo, &hi) && hi > p.yhi)
		p.yhi = hi;
	if (array_range(util, &lo, &hi) && hi > p.yhi)
		p.yhi = hi;
	time_unit(p.xhi - p.xlo, &div, &xlabel);
	plot_open(&p, "pool", "Allocation and utilisation", pool, 2, xlabel, "% of pool GPUs");
	xticks_linear(&p, div);
	line_series(&p, ts, alloc, "allocation %", palette[0], false);
	line_series(&p, ts, util, "utilisation %", palette[1], false);
	window_end(&p, ax);
	legend(&p, 0, "allocation %", palette[0], false);
	legend(&p, 1, "utilisation %", palette[1], false);
	plot_close(f);
}

/* ---- chart: quota use per queue, stacked, against nominal --------------- */

/* A queue's nominal quota: from "quota", else from "queues". */
static bool nominal_of(const json_t *run, const char *q, double *v)
{
	return num(obj(obj(run, "quota"), q), "nominal", v) ||
	       num(obj(obj(run, "queues"), q), "nominal", v);
}

/* Sum of the nominal quotas of the queues in used (0 when none has one). */
static double nominal_total(const json_t *run, const json_t *used)
{
	const char *q;
	const json_t *v;
	double sum = 0, n;

	json_object_foreach((json_t *)used, q, v)
		if (nominal_of(run, q, &n))
			sum += n;
	return sum;
}

/* Largest stacked total of series.quota_used, or -1 when nothing is drawn. */
static double quota_area_max(const json_t *run)
{
	const json_t *s = obj(run, "series"), *ts = arr(s, "t_s"), *used = obj(s, "quota_used");
	const char *q;
	const json_t *v;
	size_t i;
	double best = -1, tot, x, t;
	bool any = false;

	json_object_foreach((json_t *)used, q, v)
		any |= count_pairs(ts, v) > 0;
	if (!any)
		return -1;
	for (i = 0; i < json_array_size(ts); i++) {
		if (!numval(json_array_get(ts, i), &t))
			continue;
		tot = 0;
		json_object_foreach((json_t *)used, q, v)
			if (json_is_array(v) && numval(json_array_get(v, i), &x) && x > 0)
				tot += x;
		if (tot > best)
			best = tot;
	}
	tot = nominal_total(run, used);
	return tot > best ? tot : best;
}

/*
 * Stacked areas of series.quota_used, one band per queue in the JSON's
 * order (a missing or negative value counts 0 in the stack), and a dashed
 * line at the sum of their nominal quotas.
 */
static int quota_area(FILE *f, const json_t *run, double ymax, const struct taxis *ax)
{
	const json_t *s = obj(run, "series"), *ts = arr(s, "t_s"), *used = obj(s, "quota_used");
	const char *q;
	const json_t *v;
	size_t i, n = json_array_size(ts), step = stride_for(n);
	double *base, div, nom, t, x;
	const char *xlabel;
	struct plot p = {.f = f, .ylo = 0, .yhi = ymax * 1.05};
	int k = 0, nq = 0;
	bool first;

	if (ymax < 0 || !time_range(&p, ts, ax)) {
		nodata(f, "Quota use per queue (stacked) against nominal", NULL);
		return 0;
	}
	base = carve_calloc(n ? n : 1, sizeof(*base));
	if (!base)
		return CARVE_ENOMEM;
	nom = nominal_total(run, used);
	json_object_foreach((json_t *)used, q, v)
		nq++;
	time_unit(p.xhi - p.xlo, &div, &xlabel);
	plot_open(&p, "quota", "Quota use per queue (stacked) against nominal", NULL,
		  nq + (nom > 0), xlabel, "GPUs");
	xticks_linear(&p, div);
	json_object_foreach((json_t *)used, q, v) {
		const char *colour = palette[k % NPALETTE];
		size_t top = 0;

		for (i = 0; i < n; i += step)
			top += numval(json_array_get(ts, i), &t);
		legend(&p, k++, q, colour, false);
		if (!top)
			continue;
		series_open(f, "path", q, count_pairs(ts, v));
		fprintf(f, " fill=\"%s\" fill-opacity=\"0.75\" stroke=\"%s\" d=\"", colour, colour);
		first = true;
		for (i = 0; i < n; i += step) {     /* top edge, left to right */
			if (!numval(json_array_get(ts, i), &t))
				continue;
			x = json_is_array(v) && numval(json_array_get(v, i), &x) && x > 0 ? x : 0;
			fprintf(f, "%s%.1f %.1f", first ? "M" : " L", px(&p, t), py(&p, base[i] + x));
			first = false;
		}
		for (i = (n - 1) / step * step + 1; i-- > 0;) {  /* bottom edge back */
			if (i % step || !numval(json_array_get(ts, i), &t))
				continue;
			fprintf(f, " L%.1f %.1f", px(&p, t), py(&p, base[i]));
		}
		fputs(" Z\"><title>", f);
		esc(f, q);
		fputs("</title></path>\n", f);
		for (i = 0; i < n; i++)
			if (json_is_array(v) && numval(json_array_get(v, i), &x) && x > 0)
				base[i] += x;
	}
	if (nom > 0) {
		char b[32], label[64];

		fmt_num(b, sizeof(b), nom);
		snprintf(label, sizeof(label), "nominal total (%s)", b);
		fprintf(f, "<line class=\"nominal\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\">"
			"<title>%s</title></line>\n", PLOT_L, PLOT_L + p.pw, py(&p, nom), py(&p, nom),
			label);
		legend(&p, k, label, NULL, true);
	}
	window_end(&p, ax);
	plot_close(f);
	carve_free(base);
	return 0;
}

/* Largest of used_avg and nominal over the queues of "quota"; -1 if none. */
static double quota_bar_max(const json_t *run)
{
	const char *q;
	const json_t *v;
	double best = -1, x;

	json_object_foreach((json_t *)obj(run, "quota"), q, v) {
		if (num(v, "used_avg", &x) && x > best)
			best = x;
		if (num(v, "nominal", &x) && x > best)
			best = x;
	}
	return best;
}

/*
 * One bar per queue of "quota": used_avg, with its borrowed_avg part (the
 * use above nominal) stacked on top in a lighter shade, and a tick at the
 * queue's nominal quota.
 */
static void quota_bars(FILE *f, const json_t *run, double ymax)
{
	const json_t *quota = obj(run, "quota"), *v;
	const char *q;
	struct plot p = {.f = f, .ylo = 0, .yhi = ymax * 1.1, .xlo = 0, .xhi = 1};
	size_t nq = json_object_size(quota), k = 0;
	double slot, bw;

	if (ymax <= 0 || !nq) {
		nodata(f, "Average quota use per queue against nominal", NULL);
		return;
	}
	plot_open(&p, "quota-avg", "Average quota use per queue against nominal", NULL, 3,
		  "queue", "GPUs");
	slot = p.pw / (double)nq;
	bw = slot * 0.5;
	json_object_foreach((json_t *)quota, q, v) {
		double used = 0, bor = 0, nom = 0, x0 = PLOT_L + slot * (double)k + (slot - bw) / 2;
		bool hu = num(v, "used_avg", &used), hb = num(v, "borrowed_avg", &bor);
		bool hn = num(v, "nominal", &nom);
		double own = hb && bor > 0 ? (used - bor > 0 ? used - bor : 0) : used;

		series_open(f, "g", q, hu + hb + hn);
		fputs(">", f);
		if (hu && used > 0) {
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"/>", x0, py(&p, own), bw, py(&p, 0) - py(&p, own),
				palette[0]);
			if (hb && bor > 0)
				fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
					"fill=\"%s\"/>", x0, py(&p, used), bw,
					py(&p, own) - py(&p, used), palette[1]);
		}
		if (hn)
			fprintf(f, "<line class=\"nominal\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
				"y2=\"%.1f\"/>", x0 - 6, x0 + bw + 6, py(&p, nom), py(&p, nom));
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
			x0 + bw / 2, PLOT_T + PLOT_H + 17);
		esc(f, q);
		fputs("</text><title>", f);
		esc(f, q);
		fputs("</title></g>\n", f);
		k++;
	}
	legend(&p, 0, "used within nominal", palette[0], false);
	legend(&p, 1, "borrowed", palette[1], false);
	legend(&p, 2, "nominal", NULL, true);
	plot_close(f);
}

/* ---- chart: wait-time CDF per queue ------------------------------------- */

/* A CDF point [seconds, fraction]; false if it is not two numbers. */
static bool cdf_point(const json_t *pt, double *x, double *y)
{
	return json_array_size(pt) >= 2 && numval(json_array_get(pt, 0), x) &&
	       numval(json_array_get(pt, 1), y);
}

static int cdf_points(const json_t *a)
{
	size_t i;
	int c = 0;
	double x, y;

	for (i = 0; i < json_array_size(a); i++)
		c += cdf_point(json_array_get(a, i), &x, &y);
	return c;
}

/* Largest wait of any CDF point; -1 when there is none. */
static double wait_max(const json_t *run)
{
	const char *q;
	const json_t *v;
	size_t i;
	double best = -1, x, y;

	json_object_foreach((json_t *)obj(run, "wait_cdf"), q, v)
		for (i = 0; i < json_array_size(v); i++)
			if (cdf_point(json_array_get(v, i), &x, &y) && x > best)
				best = x;
	return best;
}

/* Step lines of wait_cdf, one per queue, on a log10(1 + s) axis. */
static void wait_cdf(FILE *f, const json_t *run, double xmax)
{
	const json_t *cdf = obj(run, "wait_cdf"), *v;
	const char *q;
	struct plot p = {.f = f, .xlo = 0, .xhi = xmax, .ylo = 0, .yhi = 1, .xlog = true};
	int k = 0, nq = 0;
	size_t i;
	double x, y;

	json_object_foreach((json_t *)cdf, q, v)
		nq += cdf_points(v) > 0;
	if (xmax < 0 || !nq) {
		nodata(f, "Wait for the first GPU: CDF per queue", NULL);
		return;
	}
	if (p.xhi < 60)
		p.xhi = 60;
	plot_open(&p, "wait-cdf", "Wait for the first GPU: CDF per queue", NULL, nq,
		  "wait (log scale)", "fraction of jobs");
	xticks_wait(&p);
	json_object_foreach((json_t *)cdf, q, v) {
		const char *colour = palette[k % NPALETTE];
		double last = 0;
		bool first = true;
		int np = cdf_points(v);

		if (!np)
			continue;
		series_open(f, "path", q, np);
		fprintf(f, " fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" d=\"", colour);
		for (i = 0; i < json_array_size(v); i++) {
			if (!cdf_point(json_array_get(v, i), &x, &y))
				continue;
			if (first)
				fprintf(f, "M%.1f %.1f", px(&p, x), py(&p, 0));
			else
				fprintf(f, " H%.1f", px(&p, x));
			fprintf(f, " V%.1f", py(&p, y));
			last = y;
			first = false;
		}
		fprintf(f, " H%.1f\"><title>", px(&p, p.xhi));
		esc(f, q);
		fprintf(f, " (%d points, last %.2f)</title></path>\n", np, last);
		legend(&p, k, q, colour, false);
		k++;
	}
	plot_close(f);
}

/* ---- tables ------------------------------------------------------------- */

/* ---- the runs of a result ------------------------------------------------- */

#define MAX_RUNS 8

/*
 * The runs a page shows, in the result's order: one run; the old
 * comparison {"baseline", "carve"}; or {"settings", "runs": {NAME: run}},
 * where a run of several seeds ({"median", "min", "max", "per_seed"}) shows
 * its median in the tables with the min-max under it, and the first seed's
 * run in the charts.
 */
struct rset {
	size_t n;
	const char *name[MAX_RUNS];
	const json_t *run[MAX_RUNS];    /* tables: the run, or the median; NULL none */
	const json_t *chart[MAX_RUNS];  /* charts: the run, or the first seed's */
	const json_t *lo[MAX_RUNS];     /* seeded: min and max; NULL otherwise */
	const json_t *hi[MAX_RUNS];
	size_t nseeds;
	int carve;                      /* index of carve, -1 none */
	bool named;                     /* runs carry names (not a lone run) */
	const json_t *settings;         /* NULL: none */
};

/* A figure of a run: key, optional sub-key, label, unit, which way is
 * better (+1 higher, -1 lower, 0 neither), and whether the row is shown
 * only when some run has it (keys newer runs have). */
struct metric {
	const char *key, *sub, *label;
	enum carve_unit unit;
	int better;
	bool optional;
};

static const struct metric headline[] = {
	{"gpu_allocation_pct", NULL, "GPU allocation", CARVE_UNIT_PCT, 0, false},
	{"effective_utilisation_pct", NULL, "effective GPU utilisation", CARVE_UNIT_PCT, +1, false},
	{"first_time_success_pct", NULL, "first-time success", CARVE_UNIT_PCT, +1, false},
	{"fragmentation_pct", NULL, "fragmentation", CARVE_UNIT_PCT, -1, false},
	{"preemptions", NULL, "preemptions", CARVE_UNIT_COUNT, -1, false},
	{"gpu_hours_per_job", NULL, "GPU-hours per job", CARVE_UNIT_GPUH, -1, false},
	{"gang_timeouts", NULL, "gang timeouts", CARVE_UNIT_COUNT, -1, true},
	{"gpu_hours", "held", "GPU-hours held", CARVE_UNIT_GPUH, -1, true},
	{"gpu_hours", "useful", "GPU-hours of useful work", CARVE_UNIT_GPUH, +1, true},
	{"gpu_hours", "asked", "GPU-hours the trace asks", CARVE_UNIT_GPUH, 0, true},
	{"mig", "repartitions", "MIG repartitions", CARVE_UNIT_COUNT, 0, true},
};
#define NHEADLINE (sizeof(headline) / sizeof(headline[0]))

static const struct metric endline[] = {
	{"makespan_s", NULL, "makespan (last job done)", CARVE_UNIT_SEC, -1, true},
	{"horizon_s", NULL, "run length (time reached)", CARVE_UNIT_SEC, 0, true},
	{"backlog", "jobs_waiting", "jobs waiting at the window's end", CARVE_UNIT_COUNT, -1, true},
	{"backlog", "jobs_running", "jobs running at the window's end", CARVE_UNIT_COUNT, 0, true},
	{"backlog", "gpu_hours_left", "GPU-hours of work left at the end", CARVE_UNIT_GPUH, -1,
	 true},
};
#define NENDLINE (sizeof(endline) / sizeof(endline[0]))

static bool mvalue(const json_t *run, const struct metric *m, double *v)
{
	return m->sub ? num(obj(run, m->key), m->sub, v) : num(run, m->key, v);
}

static void value_text(FILE *f, enum carve_unit u, double v)
{
	char b[CARVE_FMT_LEN];

	fputs(carve_fmt(b, sizeof(b), u, v), f);
}

/* A value cell; with seeds the min-max under it; marked censored (a wait
 * with jobs still waiting at the end, counted up to it). */
static void value_cell(FILE *f, bool have, enum carve_unit u, double v, bool spread, double lo,
		       double hi, bool censored)
{
	char b[CARVE_FMT_LEN];

	if (!have) {
		fputs("<td class=\"nodata\">no data</td>", f);
		return;
	}
	fputs("<td class=\"num\">", f);
	value_text(f, u, v);
	if (censored)
		fputs("<span class=\"censored\" title=\"includes jobs still waiting at the "
		      "window's end, counted up to it\"> *</span>", f);
	if (spread)
		fprintf(f, "<br><span class=\"spread\">%s</span>",
			carve_fmt_range(b, sizeof(b), u, lo, hi));
	fputs("</td>", f);
}

/*
 * The difference cell: carve minus the baseline it is compared with, in
 * percentage points (pp) for percentages, otherwise with the change
 * relative to the baseline; green where carve is better, red where worse.
 * With one baseline that one; with several the best of them on this row
 * (by its direction), named; none for a row without a direction.
 */
static void diff_cell(FILE *f, const struct rset *r, const double *v, const bool *have,
		      enum carve_unit u, int better)
{
	char buf[CARVE_FMT_LEN];
	const char *cls = "same";
	int best = -1;
	size_t i;
	double d;

	for (i = 0; i < r->n; i++) {
		if ((int)i == r->carve || !have[i])
			continue;
		if (r->n == 2 || (better && (best < 0 || (better > 0 ? v[i] > v[best] :
							     v[i] < v[best]))))
			best = (int)i;
	}
	if (r->carve < 0 || best < 0 || !have[r->carve]) {
		fputs("<td class=\"nodata\">&ndash;</td>", f);
		return;
	}
	d = v[r->carve] - v[best];
	if (better && d != 0)
		cls = (d > 0) == (better > 0) ? "better" : "worse";
	fprintf(f, "<td class=\"num %s\">%s", cls,
		carve_fmt_diff(buf, sizeof(buf), u, v[best], v[r->carve], true));
	if (r->n > 2) {
		fputs(" vs ", f);
		esc(f, r->name[best]);
	}
	fputs("</td>", f);
}

/* The column headings of a table after its first columns. */
static void run_heads(FILE *f, const struct rset *r)
{
	size_t i;

	if (!r->named) {
		fputs("<th>value</th>", f);
		return;
	}
	for (i = 0; i < r->n; i++) {
		fputs("<th>", f);
		esc(f, r->name[i]);
		fputs("</th>", f);
	}
	if (r->carve >= 0 && r->n > 1)
		fputs(r->n == 2 ? "<th>difference</th>" : "<th>carve vs the best baseline</th>", f);
}

/* Reads one figure from every run (and its spread), via get. */
typedef bool (*getter)(const json_t *run, const char *name, const void *what, double *v);

static bool any_has(const struct rset *r, getter get, const char *name, const void *what)
{
	size_t i;
	double v;

	for (i = 0; i < r->n; i++)
		if (get(r->run[i], name, what, &v))
			return true;
	return false;
}

/* The cells of one figure: a value per run and the difference.  cens:
 * the censored count of the run's wait object, or NULL. */
static void figure_cells(FILE *f, const struct rset *r, getter get, const char *name,
			 const void *what, enum carve_unit u, int better,
			 double (*cens)(const json_t *, const char *, const void *), bool *marked)
{
	double v[MAX_RUNS], lo = 0, hi = 0;
	bool have[MAX_RUNS];
	size_t i;

	for (i = 0; i < r->n; i++) {
		bool c, spread;

		have[i] = get(r->run[i], name, what, &v[i]);
		spread = r->lo[i] && get(r->lo[i], name, what, &lo) && get(r->hi[i], name, what, &hi);
		c = have[i] && cens && cens(r->run[i], name, what) > 0;
		*marked |= c;
		if (!have[i] && what == (const void *)&endline[0] &&
		    json_is_null(json_object_get(r->run[i], "makespan_s")))
			fputs("<td class=\"num\">not all done</td>", f);  /* null: some job never did */
		else
			value_cell(f, have[i], u, v[i], spread, lo, hi, c);
	}
	if (r->carve >= 0 && r->n > 1)
		diff_cell(f, r, v, have, u, better);
}

static bool get_metric(const json_t *run, const char *name, const void *what, double *v)
{
	(void)name;
	return mvalue(run, what, v);
}

/* A per-queue value: wait_first_gpu_s.q.pXX, wait_all_pods_s.q.pXX,
 * quota.q.FIELD or queues.q.FIELD. */
struct qfield {
	const char *group, *field, *label;
	enum carve_unit unit;
	int better;
	bool optional;
};

static const struct qfield qfields[] = {
	{"queues", "nominal", "nominal quota", CARVE_UNIT_NUM, 0, false},
	{"queues", "jobs_completed", "jobs completed", CARVE_UNIT_COUNT, +1, false},
	{"quota", "used_avg", "quota used (avg)", CARVE_UNIT_NUM, 0, false},
	{"quota", "borrowed_avg", "borrowed (avg)", CARVE_UNIT_NUM, 0, false},
	{"wait_first_gpu_s", "p50", "wait to first GPU p50", CARVE_UNIT_SEC, -1, false},
	{"wait_first_gpu_s", "p95", "wait to first GPU p95", CARVE_UNIT_SEC, -1, false},
	{"wait_first_gpu_s", "p99", "wait to first GPU p99", CARVE_UNIT_SEC, -1, false},
	{"wait_all_pods_s", "p50", "wait until every pod runs p50", CARVE_UNIT_SEC, -1, true},
	{"wait_all_pods_s", "p95", "wait until every pod runs p95", CARVE_UNIT_SEC, -1, true},
	{"wait_first_gpu_s", "censored", "still waiting at the end", CARVE_UNIT_COUNT, -1, true},
};
#define NQFIELDS (sizeof(qfields) / sizeof(qfields[0]))

static bool qvalue(const json_t *run, const char *q, const void *what, double *v)
{
	const struct qfield *qf = what;

	if (!strcmp(qf->field, "nominal"))
		return nominal_of(run, q, v);
	return num(obj(obj(run, qf->group), q), qf->field, v);
}

static double qcensored(const json_t *run, const char *q, const void *what)
{
	const struct qfield *qf = what;
	double c = 0;

	if (qf->unit != CARVE_UNIT_SEC || !num(obj(obj(run, qf->group), q), "censored", &c))
		return 0;
	return c;
}

/* A per-class value: classes.c.FIELD, or classes.c.WAIT.FIELD for the
 * waits (group names the wait object). */
static const struct qfield cfields[] = {
	{"classes", "jobs_completed", "jobs completed", CARVE_UNIT_COUNT, +1, false},
	{"classes", "first_time_success_pct", "first-time success", CARVE_UNIT_PCT, +1, false},
	{"wait_first_gpu_s", "p50", "wait to first GPU p50", CARVE_UNIT_SEC, -1, false},
	{"wait_first_gpu_s", "p95", "wait to first GPU p95", CARVE_UNIT_SEC, -1, false},
	{"wait_all_pods_s", "p50", "wait until every pod runs p50", CARVE_UNIT_SEC, -1, true},
	{"classes", "gpu_hours_per_job", "GPU-hours per job", CARVE_UNIT_GPUH, -1, false},
};
#define NCFIELDS (sizeof(cfields) / sizeof(cfields[0]))

static const json_t *cobj(const json_t *run, const char *c, const struct qfield *cf)
{
	const json_t *co = obj(obj(run, "classes"), c);

	return strcmp(cf->group, "classes") ? obj(co, cf->group) : co;
}

static bool cvalue(const json_t *run, const char *c, const void *what, double *v)
{
	return num(cobj(run, c, what), ((const struct qfield *)what)->field, v);
}

static double ccensored(const json_t *run, const char *c, const void *what)
{
	const struct qfield *cf = what;
	double n = 0;

	if (cf->unit != CARVE_UNIT_SEC || !num(cobj(run, c, cf), "censored", &n))
		return 0;
	return n;
}

/* A block of rows for one queue or class: the fields some run has (the
 * optional ones only then), the name spanning them. */
static void name_rows(FILE *f, const struct rset *r, const char *name, const struct qfield *fs,
		      size_t nf, getter get, double (*cens)(const json_t *, const char *,
							    const void *), bool *marked)
{
	size_t c, shown = 0, k = 0;

	for (c = 0; c < nf; c++)
		shown += !fs[c].optional || any_has(r, get, name, &fs[c]);
	for (c = 0; c < nf; c++) {
		if (fs[c].optional && !any_has(r, get, name, &fs[c]))
			continue;
		fputs("<tr>", f);
		if (k++ == 0) {
			fprintf(f, "<th rowspan=\"%zu\">", shown);
			esc(f, name);
			fputs("</th>", f);
		}
		fprintf(f, "<td>%s</td>", fs[c].label);
		figure_cells(f, r, get, name, &fs[c], fs[c].unit, fs[c].better, cens, marked);
		fputs("</tr>\n", f);
	}
}

/* The per-queue objects of a run; the tables list their queues, first seen first. */
static const char *const queue_keys[] = {"queues", "quota", "wait_first_gpu_s", "wait_cdf"};
#define NQUEUE_KEYS (sizeof(queue_keys) / sizeof(queue_keys[0]))

/* True when q appeared in runs[0..r-1] or in an earlier key of runs[r]. */
static bool queue_seen(const struct rset *rs, size_t r, size_t key, const char *q)
{
	size_t i, j;

	for (i = 0; i <= r; i++)
		for (j = 0; j < (i == r ? key : NQUEUE_KEYS); j++)
			if (obj(rs->run[i], queue_keys[j]) &&
			    json_object_get(obj(rs->run[i], queue_keys[j]), q))
				return true;
	return false;
}

static size_t ncols(const struct rset *r)
{
	return !r->named ? 1 : r->n + (r->carve >= 0 && r->n > 1);
}

/* The per-class table (traces with a class column), classes first seen
 * first across the runs; nothing when no run has classes. */
static void class_table(FILE *f, const struct rset *r, bool *marked)
{
	size_t i, k;
	bool head = false;
	const char *name;
	const json_t *v;

	for (i = 0; i < r->n; i++)
		json_object_foreach((json_t *)obj(r->run[i], "classes"), name, v) {
			bool seen = false;

			for (k = 0; k < i; k++)
				seen |= obj(obj(r->run[k], "classes"), name) != NULL;
			if (seen)
				continue;
			if (!head) {
				fputs("<h2>Per job class</h2>\n<table class=\"classes\"><thead><tr>"
				      "<th>class</th><th>metric</th>", f);
				run_heads(f, r);
				fputs("</tr></thead><tbody>\n", f);
				head = true;
			}
			name_rows(f, r, name, cfields, NCFIELDS, cvalue, ccensored, marked);
		}
	if (head)
		fputs("</tbody></table>\n", f);
}

static void run_caption(FILE *f, const json_t *run)
{
	static const char *const keys[] = {"mode", "policy", "seed"};
	const json_t *v;
	size_t i;
	double h;
	char b[CARVE_FMT_LEN];

	fputs("<p class=\"meta\">", f);
	for (i = 0; i < 3; i++) {
		v = json_object_get(run, keys[i]);
		fprintf(f, "%s%s: ", i ? " &middot; " : "", keys[i]);
		if (json_is_string(v))
			esc(f, json_string_value(v));
		else if (numval(v, &h))
			fprintf(f, "%.0f", h);
		else
			fputs("<span class=\"nodata\">no data</span>", f);
	}
	fputs(" &middot; horizon: ", f);
	if (num(run, "horizon_s", &h)) {
		fmt_dur(b, sizeof(b), h);
		fputs(b, f);
	} else {
		fputs("<span class=\"nodata\">no data</span>", f);
	}
	fputs("</p>\n", f);
}

/* One settings row: a string or number value, escaped; an array of them
 * joined; nothing when the key is missing. */
static void setting_row(FILE *f, const char *label, const json_t *v, enum carve_unit u)
{
	const json_t *e;
	size_t i;
	double x;

	if (!v)
		return;
	fprintf(f, "<tr><th>%s</th><td>", label);
	if (json_is_string(v))
		esc(f, json_string_value(v));
	else if (numval(v, &x))
		value_text(f, u, x);
	else if (json_is_array(v))
		json_array_foreach((json_t *)v, i, e) {
			if (i)
				fputs(", ", f);
			if (json_is_string(e))
				esc(f, json_string_value(e));
			else if (numval(e, &x))
				fprintf(f, "%.0f", x);
		}
	else if (json_is_null(v))
		fputs("none", f);
	fputs("</td></tr>\n", f);
}

/* The settings the result records (docs/simulator.md, "Settings"). */
static void settings_table(FILE *f, const json_t *s)
{
	const json_t *tr = json_object_get(s, "trace"), *w = obj(s, "window");
	double a, b;

	fputs("<h2>Settings</h2>\n<table class=\"settings\"><tbody>\n", f);
	if (json_is_object(tr)) {
		fputs("<tr><th>trace</th><td>generated: scenario ", f);
		if (json_is_string(json_object_get(tr, "generated")))
			esc(f, json_string_value(json_object_get(tr, "generated")));
		if (num(tr, "days", &a))
			fprintf(f, ", %.0f days", a);
		fprintf(f, ", %zu seeds</td></tr>\n", json_array_size(arr(tr, "seeds")));
		setting_row(f, "seeds", arr(tr, "seeds"), CARVE_UNIT_COUNT);
	} else {
		setting_row(f, "trace", tr, CARVE_UNIT_NUM);
	}
	setting_row(f, "manifests", json_object_get(s, "manifests"), CARVE_UNIT_NUM);
	setting_row(f, "models", json_object_get(s, "models"), CARVE_UNIT_NUM);
	setting_row(f, "placement policy", json_object_get(s, "policy"), CARVE_UNIT_NUM);
	setting_row(f, "placer seed", json_object_get(s, "seed"), CARVE_UNIT_COUNT);
	setting_row(f, "MIG", json_object_get(s, "mig"), CARVE_UNIT_NUM);
	setting_row(f, "MIG repartition delay", json_object_get(s, "mig_delay_s"), CARVE_UNIT_SEC);
	setting_row(f, "gang timeout (baselines)", json_object_get(s, "gang_timeout_s"),
		    CARVE_UNIT_SEC);
	setting_row(f, "--until", json_object_get(s, "until_s"), CARVE_UNIT_SEC);
	if (w && num(w, "start_s", &a) && num(w, "end_s", &b)) {
		char x[CARVE_FMT_LEN], y[CARVE_FMT_LEN];

		fprintf(f, "<tr><th>window</th><td>%s to %s (", carve_fmt(x, sizeof(x),
			CARVE_UNIT_SEC, a), carve_fmt(y, sizeof(y), CARVE_UNIT_SEC, b));
		if (json_is_string(json_object_get(w, "from")) &&
		    !strcmp(json_string_value(json_object_get(w, "from")), "until"))
			fputs("--until", f);
		else
			fputs("the trace's span", f);
		fputs(")</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

/*
 * The metric tables: headline metrics, makespan and backlog, then per
 * queue and per class; one column per run and the difference column.
 */
static void tables(FILE *f, const struct rset *r)
{
	size_t m, i, j;
	bool any = false, marked = false;
	const char *q;
	const json_t *v;

	fputs("<h2>Summary</h2>\n<table class=\"metrics\"><thead><tr><th>metric</th>", f);
	run_heads(f, r);
	fputs("</tr></thead><tbody>\n", f);
	for (m = 0; m < NHEADLINE + NENDLINE; m++) {
		const struct metric *mt = m < NHEADLINE ? &headline[m] : &endline[m - NHEADLINE];

		if (mt->optional && !any_has(r, get_metric, NULL, mt))
			continue;
		if (m == NHEADLINE)
			fprintf(f, "<tr><th class=\"block\" colspan=\"%zu\">makespan and backlog "
				"(after the window)</th></tr>\n", ncols(r) + 1);
		fprintf(f, "<tr><th>%s</th>", mt->label);
		figure_cells(f, r, get_metric, NULL, mt, mt->unit, mt->better, NULL, &marked);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);

	fputs("<h2>Per queue</h2>\n<table class=\"queues\"><thead><tr><th>queue</th><th>metric</th>",
	      f);
	run_heads(f, r);
	fputs("</tr></thead><tbody>\n", f);
	for (i = 0; i < r->n; i++)
		for (j = 0; j < NQUEUE_KEYS; j++)
			json_object_foreach((json_t *)obj(r->run[i], queue_keys[j]), q, v) {
				if (queue_seen(r, i, j, q))
					continue;
				any = true;
				name_rows(f, r, q, qfields, NQFIELDS, qvalue, qcensored, &marked);
			}
	if (!any)
		fprintf(f, "<tr><td class=\"nodata\" colspan=\"%zu\">no data</td></tr>\n",
			ncols(r) + 2);
	fputs("</tbody></table>\n", f);
	class_table(f, r, &marked);
	if (marked)
		fputs("<p class=\"meta\">* the wait includes jobs still waiting at the window's "
		      "end, counted up to it (censored): the true wait is longer.</p>\n", f);
}

/* ---- the page ----------------------------------------------------------- */

static const char css[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;"
	"color:#222;background:#fff;max-width:1400px}"
	"h1{font-size:1.5em;margin:0 0 4px}h2{font-size:1.15em;margin:28px 0 8px;"
	"border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:1.05em;margin:12px 0}"
	".meta{color:#555;margin:2px 0 10px}"
	"table{border-collapse:collapse;font-size:0.9em}"
	"th,td{border:1px solid #ddd;padding:4px 10px;text-align:left}"
	"thead th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}"
	".nodata{color:#999;font-style:italic}.better{color:#1a7f37}.worse{color:#c62828}"
	".runs{display:grid;gap:24px}.runs.two{grid-template-columns:1fr 1fr}"
	".charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(480px,1fr));gap:16px}"
	".runs.two .charts{grid-template-columns:1fr}"
	"figure{margin:0;border:1px solid #e3e3e3;border-radius:4px;padding:8px}"
	"figcaption{font-weight:600;font-size:0.9em;margin-bottom:4px}"
	"svg.chart{width:100%;height:auto;display:block}"
	"svg .grid{stroke:#eee}svg .axis{stroke:#888}"
	"svg .tick,svg .legend{font-size:11px;fill:#444}svg .label{font-size:12px;fill:#222}"
	"svg .nominal{stroke:#000;stroke-width:1.5;stroke-dasharray:6 3}"
	"svg .window-end{stroke:#c62828;stroke-width:1.2;stroke-dasharray:4 3}"
	".spread{color:#777;font-size:0.85em}.censored{color:#c62828}"
	"th.block{background:#fafafa;font-style:italic}"
	"footer{margin-top:32px;color:#888;font-size:0.8em}";

/* The charts of one run; the y scales and the time axis shared across runs. */
struct scales {
	double quota_area, quota_bar, wait;
	struct taxis t;
};

/* The window's end of a run: its own "window", else the settings'. */
static double window_end_of(const json_t *run, const json_t *settings)
{
	double e;

	if (num(obj(run, "window"), "end_s", &e) || num(obj(settings, "window"), "end_s", &e))
		return e;
	return NAN;
}

static void widen(struct scales *s, const json_t *run, const json_t *settings)
{
	double v, lo, hi;

	if ((v = quota_area_max(run)) > s->quota_area)
		s->quota_area = v;
	if ((v = quota_bar_max(run)) > s->quota_bar)
		s->quota_bar = v;
	if ((v = wait_max(run)) > s->wait)
		s->wait = v;
	if (array_range(arr(obj(run, "series"), "t_s"), &lo, &hi)) {
		if (s->t.hi < s->t.lo) {
			s->t.lo = lo;
			s->t.hi = hi;
		}
		if (lo < s->t.lo)
			s->t.lo = lo;
		if (hi > s->t.hi)
			s->t.hi = hi;
	}
	v = window_end_of(run, settings);
	if (isfinite(v) && s->t.hi >= s->t.lo && v > s->t.hi)
		s->t.hi = v;   /* a run stopped before the trace's end still shows it */
}

static int run_charts(FILE *f, const json_t *run, const char *heading, const char *note,
		      const json_t *settings, const struct scales *sc)
{
	const json_t *s = obj(run, "series"), *pools = obj(s, "pools"), *pd;
	struct taxis ax = sc->t;
	const char *pool;
	int rc;

	ax.end = window_end_of(run, settings);
	fputs("<section class=\"run\">\n", f);
	if (heading) {
		fputs("<h3>", f);
		esc(f, heading);
		if (note)
			fprintf(f, " <span class=\"spread\">(%s)</span>", note);
		fputs("</h3>\n", f);
		run_caption(f, run);
	}
	fputs("<div class=\"charts\">\n", f);
	if (!json_object_size(pools))
		nodata(f, "Allocation and utilisation", "pools");
	json_object_foreach((json_t *)pools, pool, pd)
		pool_chart(f, arr(s, "t_s"), pool, json_is_object(pd) ? pd : NULL, &ax);
	rc = quota_area(f, run, sc->quota_area, &ax);
	if (rc)
		return rc;
	quota_bars(f, run, sc->quota_bar);
	wait_cdf(f, run, sc->wait);
	fputs("</div>\n</section>\n", f);
	return 0;
}

/* ---- the result's shape ---------------------------------------------------- */

/*
 * What the report reads, as a schema: every field it looks at and the type
 * it wants.  Any field may be missing or null; anything else of the wrong
 * type is an error naming its JSON path, so a result of the wrong shape is
 * refused rather than drawn as an empty page.  Keys not listed are ignored.
 */
enum shape {
	SH_NUM,    /* a number */
	SH_NAME,   /* a string or a number (mode, policy, seed) */
	SH_NUMS,   /* an array of numbers (nulls break a line) */
	SH_PAIRS,  /* an array of [seconds, fraction] pairs */
	SH_OBJ,    /* an object with the fields in sub (NULL key ends them) */
	SH_MAP,    /* an object whose every value has the shape sub[0] */
};

struct field {
	const char *key;
	enum shape shape;
	const struct field *sub;
};

static const struct field f_wait3[] = {
	{"p50", SH_NUM, NULL}, {"p95", SH_NUM, NULL}, {"p99", SH_NUM, NULL},
	{"censored", SH_NUM, NULL}, {NULL, 0, NULL},
};
static const struct field f_quota[] = {
	{"nominal", SH_NUM, NULL}, {"used_avg", SH_NUM, NULL}, {"borrowed_avg", SH_NUM, NULL},
	{NULL, 0, NULL},
};
static const struct field f_queue[] = {
	{"nominal", SH_NUM, NULL}, {"jobs_completed", SH_NUM, NULL}, {NULL, 0, NULL},
};
static const struct field f_class[] = {
	{"jobs_completed", SH_NUM, NULL}, {"first_time_success_pct", SH_NUM, NULL},
	{"gpu_hours_per_job", SH_NUM, NULL}, {"wait_first_gpu_s", SH_OBJ, f_wait3},
	{"wait_all_pods_s", SH_OBJ, f_wait3}, {NULL, 0, NULL},
};
static const struct field f_pool[] = {
	{"allocation_pct", SH_NUMS, NULL}, {"utilisation_pct", SH_NUMS, NULL}, {NULL, 0, NULL},
};
static const struct field v_wait = {NULL, SH_OBJ, f_wait3};
static const struct field v_quota = {NULL, SH_OBJ, f_quota};
static const struct field v_queue = {NULL, SH_OBJ, f_queue};
static const struct field v_class = {NULL, SH_OBJ, f_class};
static const struct field v_pool = {NULL, SH_OBJ, f_pool};
static const struct field v_nums = {NULL, SH_NUMS, NULL};
static const struct field v_pairs = {NULL, SH_PAIRS, NULL};
static const struct field f_wait[] = {
	{"p50", SH_NUM, NULL}, {"p95", SH_NUM, NULL}, {"p99", SH_NUM, NULL},
	{"censored", SH_NUM, NULL}, {NULL, 0, NULL},
};
static const struct field v_waitc = {NULL, SH_OBJ, f_wait};
static const struct field f_window[] = {
	{"start_s", SH_NUM, NULL}, {"end_s", SH_NUM, NULL}, {"from", SH_NAME, NULL},
	{NULL, 0, NULL},
};
static const struct field f_gpuh[] = {
	{"held", SH_NUM, NULL}, {"useful", SH_NUM, NULL}, {"asked", SH_NUM, NULL},
	{NULL, 0, NULL},
};
static const struct field f_backlog[] = {
	{"jobs_waiting", SH_NUM, NULL}, {"jobs_running", SH_NUM, NULL},
	{"gpu_hours_left", SH_NUM, NULL}, {NULL, 0, NULL},
};
static const struct field f_mig[] = {
	{"repartitions", SH_NUM, NULL}, {NULL, 0, NULL},
};
static const struct field f_settings[] = {
	{"policy", SH_NAME, NULL}, {"seed", SH_NAME, NULL}, {"mig", SH_NAME, NULL},
	{"mig_delay_s", SH_NUM, NULL}, {"gang_timeout_s", SH_NUM, NULL},
	{"until_s", SH_NUM, NULL}, {"window", SH_OBJ, f_window}, {NULL, 0, NULL},
};
static const struct field f_series[] = {
	{"t_s", SH_NUMS, NULL}, {"pools", SH_MAP, &v_pool}, {"quota_used", SH_MAP, &v_nums},
	{NULL, 0, NULL},
};
static const struct field f_run[] = {
	{"mode", SH_NAME, NULL}, {"policy", SH_NAME, NULL}, {"seed", SH_NAME, NULL},
	{"horizon_s", SH_NUM, NULL}, {"gpu_allocation_pct", SH_NUM, NULL},
	{"effective_utilisation_pct", SH_NUM, NULL}, {"first_time_success_pct", SH_NUM, NULL},
	{"fragmentation_pct", SH_NUM, NULL}, {"preemptions", SH_NUM, NULL},
	{"gpu_hours_per_job", SH_NUM, NULL}, {"wait_first_gpu_s", SH_MAP, &v_wait},
	{"quota", SH_MAP, &v_quota}, {"queues", SH_MAP, &v_queue}, {"classes", SH_MAP, &v_class},
	{"series", SH_OBJ, f_series}, {"wait_cdf", SH_MAP, &v_pairs},
	{"window", SH_OBJ, f_window}, {"makespan_s", SH_NUM, NULL}, {"gang_timeouts", SH_NUM, NULL},
	{"gpu_hours", SH_OBJ, f_gpuh}, {"backlog", SH_OBJ, f_backlog}, {"mig", SH_OBJ, f_mig},
	{"wait_all_pods_s", SH_MAP, &v_waitc}, {NULL, 0, NULL},
};

/* The JSON path of the value being checked: "carve.queues.research.nominal". */
struct jpath {
	char s[160];
	size_t n;
};

static size_t jpath_key(struct jpath *p, const char *key)
{
	size_t n = p->n, i;
	bool plain = *key != '\0';

	for (i = 0; key[i] && plain; i++)
		plain = (key[i] >= 'a' && key[i] <= 'z') || (key[i] >= 'A' && key[i] <= 'Z') ||
			(key[i] >= '0' && key[i] <= '9') || key[i] == '_' || key[i] == '-';
	if (n < sizeof(p->s) && plain)
		p->n += (size_t)snprintf(p->s + n, sizeof(p->s) - n, "%s%s", n ? "." : "", key);
	else if (n < sizeof(p->s))
		p->n += (size_t)snprintf(p->s + n, sizeof(p->s) - n, "[\"%s\"]", key);
	if (p->n >= sizeof(p->s))
		p->n = sizeof(p->s) - 1;
	return n;
}

static size_t jpath_index(struct jpath *p, size_t i)
{
	size_t n = p->n;

	if (n < sizeof(p->s))
		p->n += (size_t)snprintf(p->s + n, sizeof(p->s) - n, "[%zu]", i);
	if (p->n >= sizeof(p->s))
		p->n = sizeof(p->s) - 1;
	return n;
}

static void jpath_back(struct jpath *p, size_t n)
{
	p->n = n;
	p->s[n] = '\0';
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER:
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

static int wrong(struct carve_error *err, const struct jpath *p, const char *want,
		 const json_t *v)
{
	return carve_errorf(err, CARVE_EINVAL, "%s: expected %s, got %s", p->n ? p->s : "(root)",
			    want, type_name(v));
}

static int check_shape(const json_t *v, const struct field *f, struct jpath *p,
		       struct carve_error *err);

/* Each element of the array a: a number, or a [number, number] pair. */
static int check_elems(const json_t *a, bool pairs, struct jpath *p, struct carve_error *err)
{
	const json_t *e;
	size_t i, n;
	int rc = 0;

	json_array_foreach((json_t *)a, i, e) {
		if (json_is_null(e))
			continue;
		n = jpath_index(p, i);
		if (!pairs && !json_is_number(e))
			rc = wrong(err, p, "a number", e);
		else if (pairs && (!json_is_array(e) || json_array_size(e) != 2))
			rc = wrong(err, p, "a [seconds, fraction] pair", e);
		else if (pairs && !json_is_number(json_array_get(e, 0)))
			rc = (jpath_index(p, 0), wrong(err, p, "a number", json_array_get(e, 0)));
		else if (pairs && !json_is_number(json_array_get(e, 1)))
			rc = (jpath_index(p, 1), wrong(err, p, "a number", json_array_get(e, 1)));
		jpath_back(p, n);
		if (rc)
			return rc;
	}
	return 0;
}

static int check_shape(const json_t *v, const struct field *f, struct jpath *p,
		       struct carve_error *err)
{
	const struct field *sf;
	const json_t *x;
	const char *key;
	size_t n;
	int rc = 0;

	if (!v || json_is_null(v))
		return 0;
	switch (f->shape) {
	case SH_NUM:
		return json_is_number(v) ? 0 : wrong(err, p, "a number", v);
	case SH_NAME:
		return json_is_number(v) || json_is_string(v) ? 0
			: wrong(err, p, "a string or a number", v);
	case SH_NUMS:
	case SH_PAIRS:
		if (!json_is_array(v))
			return wrong(err, p, f->shape == SH_NUMS ? "an array of numbers"
				     : "an array of [seconds, fraction] pairs", v);
		return check_elems(v, f->shape == SH_PAIRS, p, err);
	case SH_OBJ:
		if (!json_is_object(v))
			return wrong(err, p, "an object", v);
		for (sf = f->sub; sf->key && !rc; sf++) {
			n = jpath_key(p, sf->key);
			rc = check_shape(json_object_get(v, sf->key), sf, p, err);
			jpath_back(p, n);
		}
		return rc;
	case SH_MAP:
		if (!json_is_object(v))
			return wrong(err, p, "an object", v);
		json_object_foreach((json_t *)v, key, x) {
			n = jpath_key(p, key);
			rc = check_shape(x, f->sub, p, err);
			jpath_back(p, n);
			if (rc)
				return rc;
		}
		return 0;
	}
	return 0;
}

static const char *const run_keys[] = {
	"mode", "policy", "seed", "horizon_s", "gpu_allocation_pct", "effective_utilisation_pct",
	"first_time_success_pct", "fragmentation_pct", "preemptions", "gpu_hours_per_job",
	"wait_first_gpu_s", "quota", "queues", "series", "wait_cdf", "classes", "scheduler",
	"jobs", "gang_timeouts", "window", "makespan_s", "backlog", "gpu_hours", "mig",
	"wait_all_pods_s",
};

/* A run object: an object with at least one key a run has. */
static bool is_run(const json_t *v)
{
	size_t i;

	if (!json_is_object(v))
		return false;
	for (i = 0; i < sizeof(run_keys) / sizeof(run_keys[0]); i++)
		if (json_object_get(v, run_keys[i]))
			return true;
	return false;
}

/* Adds one named run of the new shape to r: a run, or a seeded run whose
 * median the tables show.  Returns 0 or CARVE_EINVAL (err says why). */
static int add_run(struct rset *r, const char *name, const json_t *v, struct carve_error *err)
{
	const json_t *med = obj(v, "median");

	if (r->n == MAX_RUNS)
		return carve_errorf(err, CARVE_EINVAL, "runs: more than %d runs", MAX_RUNS);
	r->name[r->n] = name;
	if (med) {
		r->run[r->n] = med;
		r->lo[r->n] = obj(v, "min");
		r->hi[r->n] = obj(v, "max");
		r->chart[r->n] = json_array_get(arr(v, "per_seed"), 0);
		if (!is_run(r->chart[r->n]))
			r->chart[r->n] = med;
		if (!r->lo[r->n] || !r->hi[r->n])
			r->lo[r->n] = r->hi[r->n] = NULL;
		r->nseeds = json_array_size(arr(v, "per_seed"));
	} else if (is_run(v)) {
		r->run[r->n] = r->chart[r->n] = v;
	} else if (v && !json_is_null(v)) {
		return carve_errorf(err, CARVE_EINVAL, "runs.%s is not a run object (got %s)",
				    name, type_name(v));
	}
	if (!strcmp(name, "carve"))
		r->carve = (int)r->n;
	r->n++;
	return 0;
}

/* The runs of result (see struct rset); 0, or CARVE_EINVAL when it is of
 * no known shape (err says why). */
static int runs_of(const json_t *result, struct rset *r, struct carve_error *err)
{
	const json_t *runs, *v;
	const char *name;
	size_t i;
	int rc;

	memset(r, 0, sizeof(*r));
	r->carve = -1;
	if (!json_is_object(result))
		return carve_errorf(err, CARVE_EINVAL, "the result is not a JSON object");
	runs = json_object_get(result, "runs");
	if (runs) {
		if (!json_is_object(runs))
			return carve_errorf(err, CARVE_EINVAL, "runs: expected an object, got %s",
					    type_name(runs));
		r->settings = obj(result, "settings");
		r->named = true;
		json_object_foreach((json_t *)runs, name, v)
			if ((rc = add_run(r, name, v, err)) != 0)
				return rc;
		for (i = 0; i < r->n; i++)
			if (r->run[i])
				return 0;
		return carve_errorf(err, CARVE_EINVAL, "\"runs\" holds no run object");
	}
	if (json_object_get(result, "baseline") || json_object_get(result, "carve")) {
		static const char *const names[] = {"baseline", "carve"};

		for (i = 0; i < 2; i++) {
			v = json_object_get(result, names[i]);
			if (!is_run(v) && !json_is_null(v) && v)
				return carve_errorf(err, CARVE_EINVAL, "\"%s\" is not a run object "
						    "(got %s)", names[i], type_name(v));
			r->name[i] = names[i];
			r->run[i] = r->chart[i] = is_run(v) ? v : NULL;
		}
		r->n = 2;
		r->carve = 1;
		r->named = true;
		if (!r->run[0] && !r->run[1])
			return carve_errorf(err, CARVE_EINVAL, "a comparison needs a \"baseline\" "
					    "or a \"carve\" run object");
		return 0;
	}
	if (is_run(result)) {
		r->n = 1;
		r->name[0] = "run";
		r->run[0] = r->chart[0] = result;
		return 0;
	}
	return carve_errorf(err, CARVE_EINVAL, "the result is neither a run (mode, policy, "
			    "series, ...), nor {\"settings\", \"runs\"}, nor {\"baseline\", \"carve\"}");
}

int carve_report_check(const json_t *result, struct carve_error *err)
{
	static const struct field run = {NULL, SH_OBJ, f_run};
	static const struct field settings = {NULL, SH_OBJ, f_settings};
	static const char *const parts[] = {"median", "min", "max"};
	struct jpath p = {"", 0};
	const json_t *runs, *v, *e;
	struct rset r;
	const char *name;
	size_t n, k, i;
	int rc = runs_of(result, &r, err);

	if (rc)
		return rc;
	runs = json_object_get(result, "runs");
	if (!runs && r.n == 1)
		return check_shape(result, &run, &p, err);
	if (!runs) {
		for (i = 0; i < 2; i++) {
			n = jpath_key(&p, r.name[i]);
			rc = check_shape(json_object_get(result, r.name[i]), &run, &p, err);
			jpath_back(&p, n);
			if (rc)
				return rc;
		}
		return 0;
	}
	n = jpath_key(&p, "settings");
	rc = check_shape(json_object_get(result, "settings"), &settings, &p, err);
	jpath_back(&p, n);
	if (rc)
		return rc;
	n = jpath_key(&p, "runs");
	json_object_foreach((json_t *)runs, name, v) {
		size_t m = jpath_key(&p, name);

		if (!obj(v, "median")) {
			rc = check_shape(v, &run, &p, err);
		} else {
			for (k = 0; k < 3 && !rc; k++) {
				size_t l = jpath_key(&p, parts[k]);

				rc = check_shape(json_object_get(v, parts[k]), &run, &p, err);
				jpath_back(&p, l);
			}
			if (!rc && arr(v, "per_seed")) {
				size_t l = jpath_key(&p, "per_seed");

				json_array_foreach(arr(v, "per_seed"), i, e) {
					size_t o = jpath_index(&p, i);

					rc = check_shape(e, &run, &p, err);
					jpath_back(&p, o);
					if (rc)
						break;
				}
				jpath_back(&p, l);
			}
		}
		jpath_back(&p, m);
		if (rc)
			return rc;
	}
	jpath_back(&p, n);
	return 0;
}

int carve_report_html(FILE *out, const json_t *result, const char *title,
		      struct carve_error *err)
{
	struct scales sc = {-1, -1, -1, {0, -1, NAN}};
	struct rset r;
	size_t i;
	int rc;

	rc = carve_report_check(result, err);
	if (rc)
		return rc;
	runs_of(result, &r, err);
	for (i = 0; i < r.n; i++)
		if (r.chart[i])
			widen(&sc, r.chart[i], r.settings);
	if (!title)
		title = "carve simulation report";

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>", out);
	esc(out, title);
	fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", css);
	esc(out, title);
	fputs("</h1>\n", out);
	if (!r.named)
		run_caption(out, r.run[0]);
	else if (r.carve >= 0 && r.n == 2)
		fprintf(out, "<p class=\"meta\">comparison: difference = carve &minus; %s "
			"(pp: percentage points)</p>\n", r.carve ? "baseline" : "the other run");
	else if (r.carve >= 0 && r.n > 2)
		fputs("<p class=\"meta\">comparison: each figure's difference is carve &minus; "
		      "the best baseline on that figure, named (pp: percentage points)</p>\n", out);
	if (r.nseeds)
		fprintf(out, "<p class=\"meta\">%zu seeds: each figure is the median, the min&ndash;"
			"max under it; the charts show the first seed's run</p>\n", r.nseeds);
	if (r.settings)
		settings_table(out, r.settings);
	tables(out, &r);
	fputs("<h2>Charts</h2>\n", out);
	fprintf(out, "<div class=\"runs%s\">\n", r.n >= 2 ? " two" : "");
	for (i = 0; i < r.n; i++) {
		if (!r.chart[i])
			continue;
		rc = run_charts(out, r.chart[i], r.named ? r.name[i] : NULL,
				r.nseeds ? "first seed" : NULL, r.settings, &sc);
		if (rc)
			return carve_errorf(err, rc, "report: out of memory");
	}
	fprintf(out, "</div>\n<footer>carve %s &middot; self-contained report: no script, "
		"no external resources</footer>\n</body>\n</html>\n", CARVE_VERSION);
	if (ferror(out) || fflush(out))
		return carve_errorf(err, CARVE_EIO, "report: write failed");
	return 0;
}
