/*
 * cmd_admit.c - `carve admit [-f] PATH... [-o json|table] [--cycles N] [--fair-sharing]
 *                [--policy NAME] [--seed N] [--mig static|dynamic]`.
 *
 * Loads every path like `carve validate` (without its cross-object lints),
 * hands the Kueue objects to the admission engine, runs exactly N cycles
 * (evicting marked victims between cycles, not after the last, so the last
 * cycle's victims show as preempted) or, without --cycles, until a cycle
 * decides nothing (at most 1000), and prints the decisions on stdout.
 * With nodes in the input, admission also places pods (--policy, --seed,
 * --mig: Dynamic MIG, include/carve/place.h).
 * Diagnostics go to stderr; any error means exit 1 and no result.  "-"
 * reads standard input (input.c); any number of paths.  A failed write to
 * standard output is reported and means exit 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/admission.h"
#include "carve/place.h"
#include "cli.h"

#define MAX_CYCLES 1000

static void usage(FILE *out)
{
	fprintf(out,
		"usage: carve admit [-f] PATH... [-o json|table] [--cycles N] [--fair-sharing]\n"
		"                   [--policy NAME] [--seed N] [--mig static|dynamic]\n"
		"\n"
		"Reads Kueue manifests (ResourceFlavors, Cohorts, ClusterQueues, LocalQueues,\n"
		"(Workload)PriorityClasses, Workloads), Volcano Queues and PodGroups and KAI\n"
		"Queues (docs/volcano-kai.md) from files or directories, runs the admission\n"
		"engine and prints which workloads it admits (with flavors), which it preempts\n"
		"and why the rest stay pending (docs/admit-json.md).\n"
		"\n"
		"  -f, --file PATH    a file or directory to read (repeatable; bare PATHs too;\n"
		"                     - reads standard input as one YAML stream)\n"
		"  -o, --output FMT   json (default) or table\n"
		"  -c, --cycles N     run exactly N scheduling cycles (1..%d); default: run\n"
		"                     until a cycle decides nothing (at most %d cycles)\n"
		"      --fair-sharing order heads and preempt by weighted dominant resource\n"
		"                     share within cohorts (docs/admission.md); a Kueue\n"
		"                     Configuration in the input can turn it on too\n"
		"      --policy NAME  placement policy when the input has nodes (default\n"
		"                     binpack): a workload is admitted only when all its\n"
		"                     pods get a node and devices\n"
		"      --seed N       placement RNG seed (default 42)\n"
		"      --mig MODE     static (default): MIG GPUs keep their layouts;\n"
		"                     dynamic: the placer may repartition an idle MIG GPU\n"
		"                     for a pod's MIG profile (reported as repartitions)\n"
		"  -h, --help         this help\n"
		"\n"
		"Exit status: 0 ok, 1 errors in the input, 2 usage error.\n",
		MAX_CYCLES, MAX_CYCLES);
}

/* N of --cycles: a whole number 1..MAX_CYCLES, nothing else. */
static bool parse_cycles(const char *s, int *out)
{
	char *end;
	long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > MAX_CYCLES)
		return false;
	*out = (int)v;
	return true;
}

static int run_cycles(struct carve_admission *ad, int cycles)
{
	int i;

	if (cycles <= 0)
		return carve_adm_run(ad->adm, ad->now, MAX_CYCLES) < 0 ? CARVE_ENOMEM : 0;
	for (i = 0; i < cycles; i++) {
		if (i && carve_adm_evict_marked(ad->adm) < 0)
			return CARVE_ENOMEM;
		if (carve_adm_cycle(ad->adm, ad->now) < 0)
			return CARVE_ENOMEM;
	}
	return 0;
}

static int print_json(const struct carve_admission *ad)
{
	json_t *j = carve_admission_result_json(ad);
	int rc;

	if (!j)
		return CARVE_ENOMEM;
	rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (rc && !ferror(stdout))
		return CARVE_ENOMEM; /* a failed write is reported by the caller */
	fputc('\n', stdout);
	return 0;
}

/* --policy: one of the built-in placement policies. */
static bool policy_known(const char *name)
{
	int i;

	for (i = 0; i < carve_policy_count(); i++)
		if (!strcmp(carve_policy_name(i), name))
			return true;
	return false;
}

static void list_policies(FILE *out)
{
	int i;

	for (i = 0; i < carve_policy_count(); i++)
		fprintf(out, "%s%s", i ? ", " : "", carve_policy_name(i));
	fputc('\n', out);
}

/* --seed: a whole number 0 .. 2^64-1. */
static bool parse_seed(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = (uint64_t)v;
	return true;
}

/* Loads, builds, runs and prints; the exit code. */
static int admit(const char *const *paths, size_t npaths, bool table, int cycles,
		 bool fair_sharing, const struct carve_admission_opts *opts)
{
	struct carve_manifests *m = carve_manifests_create();
	struct carve_admission *ad = NULL;
	int rc = CARVE_EXIT_OK;
	size_t i;

	if (!m) {
		fprintf(stderr, "carve admit: out of memory\n");
		return CARVE_EXIT_FAIL;
	}
	m->names_warn = true; /* decide anyway; validate is the strict one */
	for (i = 0; i < npaths; i++)
		if (cli_manifests_load(m, paths[i]) == CARVE_ENOMEM)
			break;
	if (!m->diags.nerrors)
		ad = carve_admission_build_opts(m, opts);
	carve_diags_sort(&m->diags);
	carve_diags_print(&m->diags, stderr);
	if (m->diags.nerrors || !ad) {
		fprintf(stderr, "carve admit: %zu error%s in the input; nothing admitted\n",
			m->diags.nerrors, m->diags.nerrors == 1 ? "" : "s");
		rc = CARVE_EXIT_FAIL;
		goto out;
	}
	if (fair_sharing) /* on; without the flag a Kueue Configuration in the input decides */
		carve_adm_set_fair_sharing(ad->adm, true);
	if (run_cycles(ad, cycles) || (table ? carve_admission_print_table(ad, stdout)
					     : print_json(ad))) {
		fprintf(stderr, "carve admit: out of memory\n");
		rc = CARVE_EXIT_FAIL;
	}
	if (!cli_stdout_ok("admit"))
		rc = CARVE_EXIT_FAIL;
out:
	carve_admission_destroy(ad);
	carve_manifests_destroy(m);
	return rc;
}

int cmd_admit(int argc, char **argv)
{
	static const struct option opts[] = {
		{"file", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"cycles", required_argument, NULL, 'c'},
		{"fair-sharing", no_argument, NULL, 'F'},
		{"policy", required_argument, NULL, 'P'},
		{"seed", required_argument, NULL, 'S'},
		{"mig", required_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char **paths;
	size_t npaths = 0;
	bool table = false, fair_sharing = false;
	int c, cycles = 0, rc;
	struct carve_admission_opts aopts;

	memset(&aopts, 0, sizeof(aopts));
	/* Every argument is at most one path: no fixed limit. */
	paths = carve_calloc((size_t)argc + 1, sizeof(*paths));
	if (!paths) {
		fprintf(stderr, "carve admit: out of memory\n");
		return CARVE_EXIT_FAIL;
	}

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			paths[npaths++] = optarg;
			break;
		case 'o':
			if (!strcmp(optarg, "json")) {
				table = false;
			} else if (!strcmp(optarg, "table")) {
				table = true;
			} else {
				fprintf(stderr, "carve admit: unknown output format '%s' "
					"(expected json or table)\n", optarg);
				rc = CARVE_EXIT_USAGE;
				goto out;
			}
			break;
		case 'c':
			if (!parse_cycles(optarg, &cycles)) {
				fprintf(stderr, "carve admit: --cycles wants a whole number from 1 "
					"to %d, not '%s'\n", MAX_CYCLES, optarg);
				rc = CARVE_EXIT_USAGE;
				goto out;
			}
			break;
		case 'F':
			fair_sharing = true;
			break;
		case 'P':
			if (!policy_known(optarg)) {
				fprintf(stderr, "carve admit: unknown policy '%s'; valid policies: ",
					optarg);
				list_policies(stderr);
				rc = CARVE_EXIT_USAGE;
				goto out;
			}
			aopts.policy = optarg;
			break;
		case 'S':
			if (!parse_seed(optarg, &aopts.seed)) {
				fprintf(stderr, "carve admit: --seed wants a whole number, not '%s'\n",
					optarg);
				rc = CARVE_EXIT_USAGE;
				goto out;
			}
			aopts.has_seed = true;
			break;
		case 'M':
			if (!strcmp(optarg, "static") || !strcmp(optarg, "dynamic")) {
				aopts.mig_dynamic = !strcmp(optarg, "dynamic");
			} else {
				fprintf(stderr, "carve admit: --mig wants static or dynamic, not "
					"'%s'\n", optarg);
				rc = CARVE_EXIT_USAGE;
				goto out;
			}
			break;
		case 'h':
			usage(stdout);
			rc = CARVE_EXIT_OK;
			goto out;
		default:
			usage(stderr);
			rc = CARVE_EXIT_USAGE;
			goto out;
		}
	}
	for (; optind < argc; optind++)
		paths[npaths++] = argv[optind];
	if (!npaths) {
		fprintf(stderr, "carve admit: no PATH given\n");
		usage(stderr);
		rc = CARVE_EXIT_USAGE;
		goto out;
	}
	rc = admit(paths, npaths, table, cycles, fair_sharing, &aopts);
out:
	carve_free(paths);
	return rc;
}
