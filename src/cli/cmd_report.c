/*
 * cmd_report.c - `carve report RESULT.json [-o OUT.html] [--title TEXT]`.
 *
 * Turns a simulation result saved as JSON (one run, or {"baseline",
 * "carve"}) into the self-contained HTML report of src/sim/report.c, without
 * running the simulator; `carve simulate --report` calls the same function.
 * RESULT.json may be "-" for standard input; without -o (or with -o -) the
 * page goes to standard output.  A page that could not be written completely
 * is removed.  Exit codes: 0 ok, 1 unreadable or unusable JSON or a write
 * failure, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "carve/report.h"
#include "cli.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: carve report RESULT.json [-o OUT.html] [--title TEXT]\n"
		"\n"
		"Writes one self-contained HTML page (inline CSS and SVG, no script, no\n"
		"network) from a simulation result: headline metrics, per-queue table,\n"
		"allocation and utilisation per pool over time, quota use per queue\n"
		"against nominal, wait-time CDF per queue; for {\"baseline\", \"carve\"}\n"
		"results a side-by-side table with the differences.  See docs/report.md.\n"
		"\n"
		"  RESULT.json        the result JSON (- for standard input)\n"
		"  -o, --output PATH  the HTML file (default standard output)\n"
		"  -t, --title TEXT   the page heading (default \"carve simulation report\")\n"
		"  -h, --help         this help\n");
}

static int write_report(const json_t *root, const char *path, const char *title)
{
	struct carve_error err = {0};
	bool to_stdout = !path || !strcmp(path, "-");
	FILE *out = to_stdout ? stdout : fopen(path, "w");
	int rc;

	if (!out) {
		fprintf(stderr, "carve report: %s: %s\n", path, strerror(errno));
		return CARVE_EXIT_FAIL;
	}
	rc = carve_report_html(out, root, title, &err);
	if (!to_stdout && fclose(out) && !rc)
		rc = carve_errorf(&err, CARVE_EIO, "report: write failed");
	if (!rc)
		return CARVE_EXIT_OK;
	fprintf(stderr, "carve report: %s%s%s\n", to_stdout ? "" : path, to_stdout ? "" : ": ",
		err.text);
	if (!to_stdout)
		remove(path);
	return CARVE_EXIT_FAIL;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"title", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *outpath = NULL, *title = NULL, *in;
	json_error_t jerr;
	json_t *root;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			outpath = optarg;
			break;
		case 't':
			title = optarg;
			break;
		case 'h':
			usage(stdout);
			return CARVE_EXIT_OK;
		default:
			usage(stderr);
			return CARVE_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "carve report: %s\n", optind >= argc ?
			"missing RESULT.json" : "expected one RESULT.json");
		usage(stderr);
		return CARVE_EXIT_USAGE;
	}
	in = argv[optind];
	root = strcmp(in, "-") ? json_load_file(in, 0, &jerr) : json_loadf(stdin, 0, &jerr);
	if (!root) {
		fprintf(stderr, "carve report: %s:%d:%d: %s\n", strcmp(in, "-") ? in : "<stdin>",
			jerr.line, jerr.column, jerr.text);
		return CARVE_EXIT_FAIL;
	}
	rc = write_report(root, outpath, title);
	json_decref(root);
	return rc;
}
