/*
 * cmd_validate.c - `carve validate [-f] PATH... [--explain]`.
 *
 * Loads every path (files or directories), builds the inventory, runs the
 * cross-object checks, and prints every diagnostic gcc-style on stdout,
 * sorted by file, line and column, then a one-line summary on stderr.
 * --explain also prints the effective inventory and quotas.  "-" reads
 * standard input (input.c); any number of paths.  Everything printed that
 * came from the input is escaped (carve_fputs_esc).  Exit 0 when there is
 * no error (warnings allowed), 1 otherwise (a failed write to standard
 * output too), 2 on usage errors.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "carve/carve.h"
#include "carve/inventory.h"
#include "carve/manifest.h"
#include "carve/validate.h"
#include "cli.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: carve validate [-f] PATH... [--explain] [-q]\n"
		"\n"
		"Reads Kubernetes-shaped manifests (Nodes, carve NodePools, Kueue, Volcano,\n"
		"KAI, Pods/Jobs, device-plugin and mig-parted configs) and openb node CSVs;\n"
		"PATH may be a file or a directory (read recursively).  Reports every\n"
		"problem as file:line:col: error|warning: message.\n"
		"\n"
		"  -f, --file PATH   a file or directory to read (repeatable; bare PATHs too;\n"
		"                    - reads standard input as one YAML stream)\n"
		"  -e, --explain     print the effective inventory and quotas\n"
		"  -q, --quiet       print errors only, no warnings\n"
		"  -h, --help        this help\n"
		"\n"
		"Exit status: 0 no errors, 1 errors found, 2 usage error.\n");
}

int cmd_validate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"file", required_argument, NULL, 'f'},
		{"explain", no_argument, NULL, 'e'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char **paths;
	size_t npaths = 0, i;
	bool explain = false, quiet = false;
	struct carve_manifests *m;
	struct carve_inventory *inv = NULL;
	int c, rc = CARVE_EXIT_OK;

	/* Every argument is at most one path: no fixed limit. */
	paths = carve_calloc((size_t)argc + 1, sizeof(*paths));
	if (!paths) {
		fprintf(stderr, "carve validate: out of memory\n");
		return CARVE_EXIT_FAIL;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:eqh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			paths[npaths++] = optarg;
			break;
		case 'e':
			explain = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			rc = CARVE_EXIT_OK;
			goto out_paths;
		default:
			usage(stderr);
			rc = CARVE_EXIT_USAGE;
			goto out_paths;
		}
	}
	for (; optind < argc; optind++)
		paths[npaths++] = argv[optind];
	if (!npaths) {
		fprintf(stderr, "carve validate: no PATH given\n");
		usage(stderr);
		rc = CARVE_EXIT_USAGE;
		goto out_paths;
	}
	m = carve_manifests_create();
	if (!m) {
		fprintf(stderr, "carve validate: out of memory\n");
		rc = CARVE_EXIT_FAIL;
		goto out_paths;
	}
	for (i = 0; i < npaths; i++)
		if (cli_manifests_load(m, paths[i]) == CARVE_ENOMEM)
			break;
	inv = carve_inventory_build(m);
	carve_validate(m, inv);
	carve_diags_sort(&m->diags);
	if (quiet) {
		size_t j = 0;

		for (i = 0; i < m->diags.n; i++)
			if (m->diags.v[i].sev == CARVE_SEV_ERROR)
				m->diags.v[j++] = m->diags.v[i];
			else
				carve_free(m->diags.v[i].msg);
		m->diags.n = j;
	}
	carve_diags_print(&m->diags, stdout);
	if (explain && inv) {
		if (m->diags.n)
			fputc('\n', stdout);
		carve_inventory_explain(inv, m, stdout);
	}
	if (!cli_stdout_ok("validate"))
		rc = CARVE_EXIT_FAIL;
	fprintf(stderr, "carve validate: %zu document%s, %zu error%s, %zu warning%s\n", m->ndocs,
		m->ndocs == 1 ? "" : "s", m->diags.nerrors, m->diags.nerrors == 1 ? "" : "s",
		m->diags.nwarnings, m->diags.nwarnings == 1 ? "" : "s");
	if (m->diags.nerrors)
		rc = CARVE_EXIT_FAIL;
	carve_inventory_destroy(inv);
	carve_manifests_destroy(m);
out_paths:
	carve_free(paths);
	return rc;
}
