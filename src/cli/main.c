/*
 * main.c - `carve`: finds the subcommand in one table and runs it.
 * Subcommands live in cmd_<name>.c and parse their own options.  Standard
 * output is closed here after every subcommand, and a failed write to it
 * means exit 1 with a message (output.c), whatever the subcommand returned.
 */
#include <stdio.h>
#include <string.h>

#include "carve/carve.h"
#include "cli.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"validate", cmd_validate, "check manifests and explain the inventory and quotas"},
	{"admit", cmd_admit, "run the admission engine: what gets quota, what is preempted"},
	{"simulate", cmd_simulate, "replay a job trace (carve vs. kube-default), or the FGD fill experiment"},
	{"report", cmd_report, "write the HTML report of a simulation result (JSON file)"},
	{"trace", cmd_trace, "generate synthetic workload traces and check trace files"},
	{"scheduler", cmd_scheduler, "run as a Kubernetes scheduler: watch, admit, place, bind"},
	{"webhook", cmd_webhook, "serve the admission policy as a Kubernetes admission webhook"},
	{"node", cmd_node, "run the node agent: GPU discovery, labels, device plugin, MIG, metrics"},
	{NULL, NULL, NULL},
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: carve <command> [options]\n\ncommands:\n");
	for (i = 0; commands[i].name; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "  %-10s %s\n", "version", "print the version");
	fprintf(out, "\nRun 'carve <command> --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return CARVE_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return cli_stdout_close("help", CARVE_EXIT_OK);
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("carve %s\n", CARVE_VERSION);
		return cli_stdout_close("version", CARVE_EXIT_OK);
	}
	for (i = 0; commands[i].name; i++)
		if (!strcmp(argv[1], commands[i].name))
			return cli_stdout_close(commands[i].name,
						commands[i].run(argc - 1, argv + 1));
	fprintf(stderr, "carve: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return CARVE_EXIT_USAGE;
}
