/*
 * format.h - figures as people read them: the one place where the
 * simulator's table (`carve simulate`) and the HTML report (`carve
 * report`) turn a number into text, so the two always agree.
 *
 *   counts        integers with thousands grouped: "2,134"
 *   percentages   one decimal: "42.1 %"
 *   durations     "42 s", "12m 5s", "4h 12m", "5.6 d"
 *   GPU-hours     "0.75", "12.5", "7,394" (two decimals below 10, one
 *                 below 100, whole above)
 *   plain numbers two decimals, whole above 100
 *
 * A NaN or infinite value is written "-".  Every function writes at most n
 * bytes including the terminating NUL (snprintf semantics; CARVE_FMT_LEN
 * always suffices) and returns buf.  Nothing here allocates.
 */
#ifndef CARVE_FORMAT_H
#define CARVE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

/* Enough for any figure, difference or range written here. */
#define CARVE_FMT_LEN 64

enum carve_unit {
	CARVE_UNIT_COUNT,  /* a count of things: rounded to an integer */
	CARVE_UNIT_PCT,    /* a percentage */
	CARVE_UNIT_SEC,    /* a duration in seconds */
	CARVE_UNIT_GPUH,   /* GPU-hours (GPU-equivalent hours) */
	CARVE_UNIT_NUM,    /* anything else */
};

/* v in unit u. */
char *carve_fmt(char *buf, size_t n, enum carve_unit u, double v);

/*
 * The difference v - base, signed ("+1.1 pp" for percentages: percentage
 * points; "-2h 30m", "+12", "+0.17"), followed for units other than
 * percentages by the change relative to base when base is not 0:
 * "+12 (+8.0 %)".  rel false leaves the relative part out.
 */
char *carve_fmt_diff(char *buf, size_t n, enum carve_unit u, double base, double v, bool rel);

/* A range "lo–hi" (an en dash; percentages "30.4–45.3 %"), or the one
 * value when lo and hi read the same. */
char *carve_fmt_range(char *buf, size_t n, enum carve_unit u, double lo, double hi);

#endif
