/*
 * cmd_report.c - `carve report RESULT.json [-o OUT.html] [--title TEXT]`.
 *
 * Turns a simulation result saved as JSON (one run, or {"baseline",
 * "carve"}) into the self-contained HTML report of src/sim/report.c, without
 * running the simulator; `carve simulate --report` calls the same function.
 * RESULT.json may be "-" for standard input; without -o (or with -o -) the
 * page goes to standard output.  Errors in the result name the input file
 * (and the JSON path of a field of the wrong type); a file is replaced
 * whole or not at all, and a device or FIFO is written directly, never
 * removed (output.c).  Exit codes: 0 ok, 1 unreadable or unusable JSON or a
 * write failure, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

/* Reads the result JSON at in ("-": standard input); NULL after saying why,
 * naming the input (with line:col when jansson knows them). */
static json_t *read_result(const char *in)
{
	const char *name = strcmp(in, "-") ? in : "<stdin>";
	json_error_t jerr;
	struct stat st;
	json_t *root;
	FILE *f = stdin;

	if (strcmp(in, "-")) {
		if (!stat(in, &st) && S_ISDIR(st.st_mode)) {
			fprintf(stderr, "carve report: %s: is a directory; expected a result JSON "
				"file\n", in);
			return NULL;
		}
		f = fopen(in, "r");
		if (!f) {
			fprintf(stderr, "carve report: %s: %s\n", in, strerror(errno));
			return NULL;
		}
	}
	root = json_loadf(f, 0, &jerr);
	if (f != stdin)
		fclose(f);
	if (root)
		return root;
	if (jerr.line >= 1)
		cli_errorf("report", "%s:%d:%d: %s", name, jerr.line, jerr.column, jerr.text);
	else
		cli_errorf("report", "%s: %s", name, jerr.text);
	return NULL;
}

/* Writes the page of root to path (NULL or "-": standard output) through
 * output.c: a file is replaced whole or left as it was. */
static int write_report(const json_t *root, const char *path, const char *title)
{
	struct carve_error err = {0};
	struct cli_out o;
	int rc, werr;

	if (cli_out_open(&o, path, "report"))
		return CARVE_EXIT_FAIL;
	rc = carve_report_html(o.f, root, title, &err);
	werr = errno; /* the failed write's reason, when rc is CARVE_EIO */
	if (rc && rc != CARVE_EIO) {
		cli_out_abort(&o);
		cli_errorf("report", "%s", err.text);
		return CARVE_EXIT_FAIL;
	}
	/* A failed write (CARVE_EIO) is found and reported by the commit. */
	return cli_out_commit(&o, werr) || rc ? CARVE_EXIT_FAIL : CARVE_EXIT_OK;
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
	struct carve_error err = {0};
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
	root = read_result(in);
	if (!root)
		return CARVE_EXIT_FAIL;
	/* The shape first: an unusable result creates no output at all. */
	if (carve_report_check(root, &err)) {
		cli_errorf("report", "%s: %s", strcmp(in, "-") ? in : "<stdin>", err.text);
		json_decref(root);
		return CARVE_EXIT_FAIL;
	}
	rc = write_report(root, outpath, title);
	json_decref(root);
	return rc;
}
