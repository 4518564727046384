/*
 * report.h - one self-contained HTML page from a simulation result: inline
 * CSS and SVG charts, no script, no network (docs/report.md).
 *
 * The input is the simulator's result JSON, {"settings": {...}, "runs":
 * {"carve": <run>, "exclusive": <run>, ...}} (a run of several seeds being
 * {"median", "min", "max", "per_seed"}), or one of the older shapes: one
 * run
 *   {"mode", "policy", "seed", "horizon_s", "gpu_allocation_pct", ...,
 *    "wait_first_gpu_s", "quota", "queues", "series", "wait_cdf"}
 * or a comparison {"baseline": <run>, "carve": <run>}.  Any field may be
 * missing or null, numbers may be integers or reals: the page shows what
 * exists and says "no data" where a chart or a value has none.  A field of
 * the wrong type is an error (carve_report_check).
 *
 * Every string taken from the JSON (queue and pool names, policy, mode) is
 * HTML-escaped.  Each chart is an <svg class="chart" data-chart="KIND">;
 * each of its data elements (a line, a stacked area, a CDF step line, a
 * group of bars) has class "series", data-series="NAME" and
 * data-points="N", the number of data points it draws, so a test can check
 * that the charts carry data.
 */
#ifndef CARVE_REPORT_H
#define CARVE_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "carve/carve.h"

/*
 * Checks that result has a shape the report can draw: {"settings", "runs"},
 * a run object or a {"baseline", "carve"} object, and every field the report reads (see
 * docs/report.md) missing, null or of its type: numbers, arrays of numbers
 * or of [seconds, fraction] pairs, objects of those.  Returns 0, or
 * CARVE_EINVAL with err->text naming the first offending field by its JSON
 * path: "carve.queues.research.nominal: expected a number, got string"
 * (a key that is not [A-Za-z0-9_-]+ is written ["key"]).  Keys the report
 * does not read are not checked.
 */
int carve_report_check(const json_t *result, struct carve_error *err);

/*
 * Writes the HTML page for result to out.  title is the page's heading
 * (NULL: "carve simulation report"); it is escaped.  Borrows everything.
 *
 * Returns 0; CARVE_EINVAL when carve_report_check refuses result (err
 * says why; nothing is written);
 * CARVE_ENOMEM; CARVE_EIO when writing to out failed (part of the page may
 * have been written).
 */
int carve_report_html(FILE *out, const json_t *result, const char *title,
		      struct carve_error *err);

/*
 * Writes result ({"settings", "runs"} as `carve simulate -o json` prints
 * it; a seeded run's median with a min-max row under each figure) to out
 * as the plain-text table `carve simulate` prints: the settings, one column
 * per model, carve against the best baseline, the figures in words through
 * include/carve/format.h (docs/simulator.md, "The table").  A figure no run
 * has is left out; names from the JSON are escaped (carve_fputs_esc).
 * Returns 0, CARVE_EINVAL when result has no "runs" object (nothing
 * written), or CARVE_EIO when a write failed.
 */
int carve_report_table(FILE *out, const json_t *result);

#endif
