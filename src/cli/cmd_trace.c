/*
 * cmd_trace.c - `carve trace generate` writes a synthetic trace in carve's
 * trace format (src/sim/tracegen.c, docs/seed-trace.md); `carve trace
 * check` loads traces (docs/trace-format.md) and reports every problem
 * gcc-style, then one summary line.  -o FILE is replaced whole or left as
 * it was (output.c).  Exit codes: 0 ok, 1 failure (bad input, a write that
 * failed), 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/jobs.h"
#include "carve/tracegen.h"
#include "cli.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: carve trace generate [--scenario seed] [--days N] [--seed N]\n"
		"                            [-o FILE] [--format csv|yaml]\n"
		"       carve trace check PATH...\n"
		"\n"
		"generate writes a synthetic trace in carve's trace format (docs/trace-format.md):\n"
		"the seed scenario's three teams over N days from a Monday 00:00\n"
		"(docs/seed-trace.md).  The same scenario, days and seed give the same bytes.\n"
		"\n"
		"  --scenario NAME    seed (the default): examples/seed-scenario's teams\n"
		"  --days N           days to cover, 1..%d (default 7)\n"
		"  --seed N           PRNG seed, an unsigned 64-bit integer (default 42)\n"
		"  -o, --output FILE  write there instead of standard output\n"
		"  --format FMT       csv or yaml; default yaml when FILE ends in .yaml or\n"
		"                     .yml, csv otherwise\n"
		"  -h, --help         this help\n"
		"\n"
		"check loads trace files (.csv, .yaml, .yml) or directories (their\n"
		"*.trace.csv and *.trace.yaml files), prints every problem as\n"
		"file:line:col: error: field: message and a summary line on stderr, and exits\n"
		"1 when there was any.\n",
		CARVE_TRACEGEN_MAX_DAYS);
}

static bool ends_with(const char *s, const char *ext)
{
	size_t ls = strlen(s), le = strlen(ext);

	return ls >= le && !strcmp(s + ls - le, ext);
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno)
		return false;
	*out = v;
	return true;
}

static int generate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"scenario", required_argument, NULL, 'S'},
		{"days", required_argument, NULL, 'd'},
		{"seed", required_argument, NULL, 's'},
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *scenario = "seed", *outpath = NULL, *format = NULL;
	struct carve_error err = {0, ""};
	struct carve_jobs *js;
	uint64_t seed = 42, days = 7;
	struct cli_out out;
	int c, rc, werr;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			scenario = optarg;
			break;
		case 'd':
			if (!parse_u64(optarg, &days) || days < 1 || days > CARVE_TRACEGEN_MAX_DAYS) {
				fprintf(stderr, "carve trace generate: --days: expected 1..%d, got "
					"'%s'\n", CARVE_TRACEGEN_MAX_DAYS, optarg);
				return CARVE_EXIT_USAGE;
			}
			break;
		case 's':
			if (!parse_u64(optarg, &seed)) {
				fprintf(stderr, "carve trace generate: --seed: expected an unsigned "
					"integer, got '%s'\n", optarg);
				return CARVE_EXIT_USAGE;
			}
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'h':
			usage(stdout);
			return CARVE_EXIT_OK;
		default:
			usage(stderr);
			return CARVE_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "carve trace generate: unexpected argument '%s'\n", argv[optind]);
		return CARVE_EXIT_USAGE;
	}
	if (!format)
		format = outpath && (ends_with(outpath, ".yaml") || ends_with(outpath, ".yml"))
				 ? "yaml" : "csv";
	if (strcmp(format, "csv") && strcmp(format, "yaml")) {
		fprintf(stderr, "carve trace generate: --format: expected csv or yaml, got '%s'\n",
			format);
		return CARVE_EXIT_USAGE;
	}
	js = carve_jobs_create();
	if (!js) {
		fprintf(stderr, "carve trace generate: out of memory\n");
		return CARVE_EXIT_FAIL;
	}
	rc = carve_tracegen(js, scenario, (int)days, seed, &err);
	if (rc < 0) {
		cli_errorf("trace generate", "%s", err.text);
		carve_jobs_destroy(js);
		return rc == CARVE_ENOTFOUND || rc == CARVE_EINVAL ? CARVE_EXIT_USAGE
								    : CARVE_EXIT_FAIL;
	}
	if (cli_out_open(&out, outpath, "trace generate")) {
		carve_jobs_destroy(js);
		return CARVE_EXIT_FAIL;
	}
	rc = !strcmp(format, "csv") ? carve_jobs_write_csv(js, out.f, &err)
				    : carve_jobs_write_yaml(js, out.f, &err);
	werr = errno; /* the failed write's reason, when rc is CARVE_EIO */
	carve_jobs_destroy(js);
	if (rc && rc != CARVE_EIO) {
		cli_out_abort(&out);
		cli_errorf("trace generate", "%s", err.text);
		return CARVE_EXIT_FAIL;
	}
	/* A failed write (CARVE_EIO) is found and reported by the commit. */
	return cli_out_commit(&out, werr) || rc ? CARVE_EXIT_FAIL : CARVE_EXIT_OK;
}

static int check(int argc, char **argv)
{
	struct carve_diags d;
	struct carve_jobs *js;
	size_t skipped = 0;
	int i, rc = 0, exit_code;

	if (argc < 2) {
		fprintf(stderr, "carve trace check: expected a trace file or directory\n");
		return CARVE_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return CARVE_EXIT_OK;
	}
	js = carve_jobs_create();
	if (!js) {
		fprintf(stderr, "carve trace check: out of memory\n");
		return CARVE_EXIT_FAIL;
	}
	carve_diags_init(&d);
	for (i = 1; i < argc && rc != CARVE_ENOMEM; i++) {
		int r = carve_jobs_load_path(js, argv[i], &d, &skipped);

		if (r && !rc)
			rc = r;
	}
	carve_diags_sort(&d);
	carve_diags_print(&d, stderr);
	fprintf(stderr, "carve trace check: %zu job%s loaded, %zu skipped, %zu error%s\n", js->n,
		js->n == 1 ? "" : "s", skipped, d.nerrors, d.nerrors == 1 ? "" : "s");
	exit_code = rc || d.nerrors ? CARVE_EXIT_FAIL : CARVE_EXIT_OK;
	carve_diags_cleanup(&d);
	carve_jobs_destroy(js);
	return exit_code;
}

int cmd_trace(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CARVE_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return CARVE_EXIT_OK;
	}
	if (!strcmp(argv[1], "generate"))
		return generate(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return check(argc - 1, argv + 1);
	fprintf(stderr, "carve trace: unknown subcommand '%s' (generate, check)\n", argv[1]);
	return CARVE_EXIT_USAGE;
}
