/*
 * cmd_simulate.c - `carve simulate`: usage, the options of both modes and
 * the dispatch to one of them:
 *
 *   --mode replay (default): `carve simulate -f MANIFESTS... --trace FILE
 *   [--compare exclusive,device-plugin,kueue | --baseline MODEL] ...`
 *   replays a job trace (or, with --seeds, several generated ones) in
 *   virtual time (cmd_simulate_replay.c, table: src/sim/table.c).
 *
 *   --mode fill: `--nodes NODES.csv --trace PODS.csv [--policy P[,P...]]
 *   [--seeds 42-51]` runs the FGD paper's fill experiment
 *   (cmd_simulate_fill.c).
 *
 * Invariants: a usage error is found here, before anything is loaded
 * (exit 2); what the modes share is declared in cli.h.  Progress goes to
 * stderr once a run takes longer than a second; simulate_now_s, here, is
 * the only clock `carve simulate` reads, for that progress alone.
 * Ownership: option values point into argv; the seed list is static.
 * A model list (--compare, --baseline) names each model once; the
 * deprecated "kube-default" is read as device-plugin with a warning.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "carve/place.h"
#include "carve/fill.h"
#include "carve/tracegen.h"
#include "cli.h"

#define MAX_SEEDS 10000
#define MAX_POLICIES 32

static const char *const paper_policies =
	"random,dotprod,gpuclustering,gpupacking,bestfit,fgd";

static void usage(FILE *out)
{
	size_t col;
	int i;

	fprintf(out,
		"usage: carve simulate [-f] MANIFESTS... --trace FILE [--compare MODELS |\n"
		"                      --baseline MODELS] [--policy P] [--seed N] [--until T]\n"
		"                      [--mig static|dynamic] [--mig-delay T] [--gang-timeout T]\n"
		"                      [--skip-invalid] [--workloads [--workload-duration T]]\n"
		"                      [--report OUT.html] [-o json|table]\n"
		"       carve simulate DIR            (manifests and DIR/*.trace.csv or *.trace.yaml)\n"
		"       carve simulate DIR --compare exclusive,device-plugin,kueue\n"
		"       carve simulate MANIFESTS... --seeds 1-10 [--scenario seed] [--days 7] ...\n"
		"       carve simulate --mode fill --nodes NODES.csv --trace PODS.csv\n"
		"                      [--policy P[,P...]] [--seeds LIST] [-o json|table]\n"
		"\n"
		"--mode replay (the default) replays a job trace in virtual time: arrivals,\n"
		"admission cycles, preemptions (a preempted job restarts, keeping its progress\n"
		"only with checkpointing) and completions, through carve's admission engine\n"
		"and placer, and prints allocation, utilisation, waits, quota use, preemptions\n"
		"and fragmentation (docs/simulator.md).\n"
		"\n"
		"  -f, --file PATH    manifests: YAML file, node CSV or directory (repeatable;\n"
		"                     plain arguments are manifests too)\n"
		"  --trace PATH       the job trace: carve's CSV or YAML trace format\n"
		"                     (docs/trace-format.md), a directory of *.trace.csv /\n"
		"                     *.trace.yaml, or an openb pod CSV (one job per row)\n"
		"  --compare MODELS   run carve and beside it each baseline model of the\n"
		"                     comma-separated list: exclusive (stock stack, every GPU\n"
		"                     whole), device-plugin (stock stack with the device\n"
		"                     plugin's MIG layouts and time-slicing), kueue (Kueue\n"
		"                     admission, kube-scheduler placement); kube-default is a\n"
		"                     deprecated name of device-plugin\n"
		"  --baseline MODELS  run only those baseline models, not carve\n"
		"  --policy P         carve's placement policy (default binpack)\n"
		"  --seed N           placer seed (default 42)\n"
		"  --until T          stop at virtual time T (seconds, or with s/m/h/d)\n"
		"  --mig MODE         static (default) or dynamic MIG repartitioning\n"
		"  --mig-delay T      --mig dynamic: how long a repartition takes (default 60s)\n"
		"  --gang-timeout T   baseline gang timeout (default 30m)\n"
		"  --skip-invalid     skip jobs with an unknown queue or a pod no node fits\n"
		"                     (their count on stderr) instead of failing\n"
		"  --workloads        start from the manifests' Kueue Workloads and Volcano\n"
		"                     PodGroups: admitted ones hold their quota and devices\n"
		"                     from the start, pending ones join the trace at time 0\n"
		"                     (carve only; the trace may then be left out)\n"
		"  --workload-duration T\n"
		"                     how long each pending Workload's job runs (default 1h)\n"
		"  --report FILE      also write the HTML report (docs/report.md) to FILE\n"
		"  --seeds LIST       replay one generated trace per seed (N, A-B or a comma-\n"
		"                     separated mix) instead of --trace, and report the median\n"
		"                     and the min-max spread of every figure\n"
		"  --scenario NAME    --seeds: the generator's scenario (default seed)\n"
		"  --days N           --seeds: days per generated trace (default 7)\n"
		"\n"
		"JSON: {\"settings\": {...}, \"runs\": {\"carve\": RUN, \"exclusive\": RUN, ...}};\n"
		"with --seeds each RUN is {\"median\", \"min\", \"max\", \"per_seed\"}.\n"
		"\n"
		"--mode fill runs the fill experiment of the FGD paper (Weng et al., USENIX\n"
		"ATC '23; docs/fgd-results.md) on an openb cluster and trace: per seed the\n"
		"tasks are sorted by name, shuffled, resampled up to 1.3x the GPU capacity and\n"
		"submitted one by one to an empty cluster (nothing departs; a task no node\n"
		"takes is dropped).  It prints the unallocated GPU %% at arrived workload\n"
		"%d, %d, ..., %d %% of capacity: median, min and max over the seeds (JSON), or\n"
		"the medians as a table.\n"
		"\n"
		"  --nodes PATH       openb node CSV (sn,cpu_milli,memory_mib,gpu,model); the\n"
		"                     paper uses openb_node_list_gpu_node.csv\n"
		"  --trace PATH       openb pod CSV (openb_pod_list_*.csv)\n"
		"  --policy LIST      comma-separated placement policies (default the paper's\n"
		"                     %s)\n"
		"                     from:",
		SIMULATE_PCT_FIRST, SIMULATE_PCT_FIRST + SIMULATE_PCT_STEP, SIMULATE_PCT_LAST,
		paper_policies);
	for (i = 0, col = 26; i < carve_policy_count(); i++) {
		const char *name = carve_policy_name(i);

		if (i && col + strlen(name) + 2 > 79) {
			fprintf(out, ",\n%26s", "");
			col = 26;
		} else if (i) {
			fputc(',', out);
			col++;
		}
		col += fprintf(out, " %s", name);
	}
	fprintf(out,
		"\n"
		"  --seeds LIST       seeds: N, A-B or a comma-separated mix (default 42-51)\n"
		"  -o, --output FMT   table (default) or json\n"
		"  -h, --help         this help\n"
		"\n"
		"Fill prints one JSON object per policy ({\"policy\", \"seeds\",\n"
		"\"unallocated_gpu_pct\": {\"50\": {\"median\", \"min\", \"max\"}, ...}}), an array\n"
		"of them for several.\n"
		"Exit status: 0 ok, 1 errors in the input (or an interrupted replay, whose\n"
		"partial report is printed), 2 usage error.\n");
}

/* ---- options ------------------------------------------------------------------ */

static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
	char buf[32];
	char *end;
	unsigned long long v;

	if (!len || len >= sizeof(buf) || s[0] < '0' || s[0] > '9')
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* "42-51", "7", "1,5-6": into seeds[]; false on a malformed list. */
static bool parse_seeds(const char *s, uint64_t *seeds, size_t *n)
{
	*n = 0;
	while (*s) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		const char *dash = memchr(s, '-', len);
		uint64_t a, b;

		if (dash) {
			if (!parse_u64(s, (size_t)(dash - s), &a) ||
			    !parse_u64(dash + 1, len - (size_t)(dash - s) - 1, &b) || b < a)
				return false;
		} else if (!parse_u64(s, len, &a)) {
			return false;
		} else {
			b = a;
		}
		for (;; a++) {
			if (*n == MAX_SEEDS)
				return false;
			seeds[(*n)++] = a;
			if (a == b)
				break;
		}
		if (!comma)
			break;
		s = comma + 1;
		if (!*s)
			return false;
	}
	return *n > 0;
}

static bool known_policy(const char *name)
{
	int i;

	for (i = 0; i < carve_policy_count(); i++)
		if (!strcmp(carve_policy_name(i), name))
			return true;
	return false;
}

/* Splits list (modified in place) at commas into names[]. */
static bool parse_policies(char *list, const char **names, size_t *n)
{
	char *save = NULL, *tok;

	*n = 0;
	if (!*list || list[strlen(list) - 1] == ',')
		return false;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_POLICIES) {
			fprintf(stderr, "carve simulate: more than %d policies\n", MAX_POLICIES);
			return false;
		}
		if (!known_policy(tok)) {
			fprintf(stderr, "carve simulate: unknown policy '%s'\n", tok);
			return false;
		}
		names[(*n)++] = tok;
	}
	return *n > 0;
}

/*
 * A model list (--compare, --baseline: "exclusive,device-plugin,kueue")
 * into ro->baselines, in order.  Each item is a baseline name
 * (carve_sim_sched_parse); "kube-default" is the deprecated name of
 * device-plugin and gets a warning.  An empty item, an unknown name,
 * "carve" or a model named twice is a usage error naming the item.
 */
static bool parse_models(const char *opt, const char *list, struct simulate_replay_opts *ro)
{
	const char *s = list;

	ro->nbaselines = 0;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s), i;
		enum carve_sim_sched m = CARVE_SIM_CARVE;
		char name[32];
		int rc;

		if (!len || len >= sizeof(name)) {
			fprintf(stderr, "carve simulate: --%s wants a comma-separated list of "
				"exclusive, device-plugin, kueue, not '", opt);
			carve_fputs_esc(list, stderr);
			fprintf(stderr, "'%s\n", len ? "" : " (an empty item)");
			return false;
		}
		memcpy(name, s, len);
		name[len] = '\0';
		rc = carve_sim_sched_parse(name, &m);
		if (rc < 0 || m == CARVE_SIM_CARVE) {
			fprintf(stderr, "carve simulate: --%s: ", opt);
			if (rc < 0) {
				fputs("unknown model '", stderr);
				carve_fputs_esc(name, stderr);
				fputs("'", stderr);
			} else {
				fputs("'carve' is not a baseline (--compare always runs carve)",
				      stderr);
			}
			fputs(" (models: exclusive, device-plugin, kueue)\n", stderr);
			return false;
		}
		if (rc == 1)
			fprintf(stderr, "carve simulate: warning: '%s' is deprecated: it now names "
				"the %s model (stock kube-scheduler with the device plugin serving "
				"the manifests' MIG layouts and time-slicing); say %s\n", name,
				carve_sim_sched_name(m), carve_sim_sched_name(m));
		for (i = 0; i < ro->nbaselines; i++)
			if (ro->baselines[i] == m) {
				fprintf(stderr, "carve simulate: --%s: model '%s' is given twice%s\n",
					opt, carve_sim_sched_name(m),
					rc == 1 ? " (kube-default names device-plugin)" : "");
				return false;
			}
		ro->baselines[ro->nbaselines++] = m;
		if (!comma)
			return true;
		s = comma + 1;
	}
}

double simulate_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A time option (--until, --gang-timeout, --workload-duration): the trace
 * format's span ("90", "45m", "2h30m", "7d"; carve_jobs_parse_span), not
 * negative, at most 100 years like every span carve reads, and above 0
 * when positive is set.  Reports "--NAME wants ..." and returns false.
 */
static bool time_option(const char *name, const char *arg, bool positive, int64_t *out)
{
	const char *why = NULL;
	int64_t v;

	if (carve_jobs_parse_span(arg, &v, &why))
		;
	else if (v < 0)
		why = "a time must not be negative";
	else if (positive && v == 0)
		why = "it must be above 0";
	else {
		*out = v;
		return true;
	}
	fprintf(stderr, "carve simulate: --%s wants a duration (90, 90s, 15m, 2h30m, 7d; at most "
		"100 years), not '", name);
	carve_fputs_esc(arg, stderr);
	fprintf(stderr, "': %s\n", why ? why : "malformed");
	return false;
}

int cmd_simulate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"mode", required_argument, NULL, 'm'},
		{"nodes", required_argument, NULL, 'n'},
		{"trace", required_argument, NULL, 't'},
		{"policy", required_argument, NULL, 'p'},
		{"seeds", required_argument, NULL, 's'},
		{"seed", required_argument, NULL, 'S'},
		{"file", required_argument, NULL, 'f'},
		{"baseline", required_argument, NULL, 'B'},
		{"compare", required_argument, NULL, 'C'},
		{"until", required_argument, NULL, 'U'},
		{"mig", required_argument, NULL, 'M'},
		{"gang-timeout", required_argument, NULL, 'G'},
		{"mig-delay", required_argument, NULL, 'L'},
		{"scenario", required_argument, NULL, 'c'},
		{"days", required_argument, NULL, 'd'},
		{"skip-invalid", no_argument, NULL, 'K'},
		{"workloads", no_argument, NULL, 'W'},
		{"workload-duration", required_argument, NULL, 'D'},
		{"report", required_argument, NULL, 'R'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static uint64_t seeds[MAX_SEEDS];
	char polbuf[512];
	const char *pols[MAX_POLICIES];
	const char *mode = "replay", *nodes = NULL, *trace = NULL, *policy = NULL;
	char **files;
	size_t nseeds, npol, nfiles = 0;
	struct simulate_replay_opts ro;
	bool table = true, seeds_given = false, baseline = false, compare = false;
	bool days_given = false;
	uint64_t seed = 0, days;
	int c, rc;

	memset(&ro, 0, sizeof(ro));
	ro.until = -1;
	ro.carve = true;
	ro.scenario = "seed";
	ro.days = 7;
	files = carve_calloc((size_t)argc + 1, sizeof(*files));
	if (!files) {
		fprintf(stderr, "carve simulate: out of memory\n");
		return CARVE_EXIT_FAIL;
	}
	nseeds = 10;
	for (c = 0; c < 10; c++)
		seeds[c] = 42 + (uint64_t)c;
	optind = 1;
	rc = -1;
	while (rc < 0 && (c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mode = optarg;
			break;
		case 'n':
			nodes = optarg;
			break;
		case 't':
			trace = optarg;
			break;
		case 'p':
			policy = optarg;
			break;
		case 'f':
			files[nfiles++] = optarg;
			break;
		case 's':
			if (!parse_seeds(optarg, seeds, &nseeds)) {
				fprintf(stderr, "carve simulate: --seeds wants N, A-B (A <= B) or a "
					"comma-separated list of them, at most %d seeds, not '%s'\n",
					MAX_SEEDS, optarg);
				rc = CARVE_EXIT_USAGE;
			}
			seeds_given = true;
			break;
		case 'S':
			if (!parse_u64(optarg, strlen(optarg), &seed)) {
				fprintf(stderr, "carve simulate: --seed wants a number, not '%s'\n",
					optarg);
				rc = CARVE_EXIT_USAGE;
			}
			ro.sim.seed = seed;
			ro.sim.has_seed = true;
			break;
		case 'B':
		case 'C':
			if (!parse_models(c == 'B' ? "baseline" : "compare", optarg, &ro))
				rc = CARVE_EXIT_USAGE;
			if (c == 'B')
				baseline = true;
			else
				compare = true;
			break;
		case 'L':
			if (!time_option("mig-delay", optarg, false, &ro.sim.mig_delay))
				rc = CARVE_EXIT_USAGE;
			ro.sim.has_mig_delay = true;
			break;
		case 'c':
			ro.scenario = optarg;
			break;
		case 'd':
			if (!parse_u64(optarg, strlen(optarg), &days) || days < 1 ||
			    days > CARVE_TRACEGEN_MAX_DAYS) {
				fprintf(stderr, "carve simulate: --days wants a whole number of days "
					"from 1 to %d, not '", CARVE_TRACEGEN_MAX_DAYS);
				carve_fputs_esc(optarg, stderr);
				fputs("'\n", stderr);
				rc = CARVE_EXIT_USAGE;
			} else {
				ro.days = (int)days;
			}
			days_given = true;
			break;
		case 'U':
		case 'G':
			if (!time_option(c == 'U' ? "until" : "gang-timeout", optarg, c == 'G',
					 c == 'U' ? &ro.until : &ro.sim.gang_timeout))
				rc = CARVE_EXIT_USAGE;
			break;
		case 'M':
			if (!strcmp(optarg, "dynamic")) {
				ro.sim.mig_dynamic = true;
			} else if (!strcmp(optarg, "static")) {
				ro.sim.mig_dynamic = false;
			} else {
				fprintf(stderr, "carve simulate: --mig wants static or dynamic, not "
					"'%s'\n", optarg);
				rc = CARVE_EXIT_USAGE;
			}
			break;
		case 'K':
			ro.sim.skip_invalid = true;
			break;
		case 'W':
			ro.sim.workloads = true;
			break;
		case 'D':
			if (!time_option("workload-duration", optarg, true,
					 &ro.sim.workload_duration))
				rc = CARVE_EXIT_USAGE;
			break;
		case 'R':
			ro.report = optarg;
			break;
		case 'o':
			if (!strcmp(optarg, "json")) {
				table = false;
			} else if (!strcmp(optarg, "table")) {
				table = true;
			} else {
				fprintf(stderr, "carve simulate: unknown output format '%s' "
					"(expected json or table)\n", optarg);
				rc = CARVE_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			rc = CARVE_EXIT_OK;
			break;
		default:
			usage(stderr);
			rc = CARVE_EXIT_USAGE;
			break;
		}
	}
	if (rc >= 0)
		goto out;
	rc = CARVE_EXIT_USAGE;
	if (!strcmp(mode, "replay")) {
		while (optind < argc)
			files[nfiles++] = argv[optind++];
		if (baseline && compare) {
			fprintf(stderr, "carve simulate: --baseline and --compare exclude each other\n");
			goto out;
		}
		ro.carve = !baseline;
		if (ro.sim.has_mig_delay && !ro.sim.mig_dynamic) {
			fprintf(stderr, "carve simulate: --mig-delay is the repartition delay of "
				"--mig dynamic; static MIG layouts never repartition\n");
			goto out;
		}
		if ((days_given || strcmp(ro.scenario, "seed")) && !seeds_given) {
			fprintf(stderr, "carve simulate: --scenario and --days describe the traces "
				"--seeds generates; give --seeds too\n");
			goto out;
		}
		if (seeds_given) {
			const char *const *sc;

			for (sc = carve_tracegen_scenarios; *sc && strcmp(*sc, ro.scenario); sc++)
				;
			if (!*sc) {
				fprintf(stderr, "carve simulate: --scenario: unknown scenario '");
				carve_fputs_esc(ro.scenario, stderr);
				fprintf(stderr, "' (");
				for (sc = carve_tracegen_scenarios; *sc; sc++)
					fprintf(stderr, "%s%s", sc == carve_tracegen_scenarios ? "" :
						", ", *sc);
				fprintf(stderr, ")\n");
				goto out;
			}
			if (trace) {
				fprintf(stderr, "carve simulate: --seeds replays generated traces; "
					"it cannot be given with --trace\n");
				goto out;
			}
			if (ro.sim.workloads) {
				fprintf(stderr, "carve simulate: --seeds replays generated traces; "
					"it cannot be given with --workloads\n");
				goto out;
			}
			ro.seeds = seeds;
			ro.nseeds = nseeds;
		}
		if (!nfiles) {
			fprintf(stderr, "carve simulate: no manifests (-f PATH or DIR)\n");
			usage(stderr);
			goto out;
		}
		if (policy && !known_policy(policy)) {
			fprintf(stderr, "carve simulate: unknown policy '%s'\n", policy);
			goto out;
		}
		ro.sim.policy = policy;
		ro.table = table;
		rc = simulate_replay(files, nfiles, trace, &ro);
		goto out;
	}
	if (strcmp(mode, "fill")) {
		fprintf(stderr, "carve simulate: unknown mode '%s' (replay or fill)\n", mode);
		goto out;
	}
	if (optind < argc || nfiles) {
		fprintf(stderr, "carve simulate: --mode fill takes no manifests ('%s')\n",
			nfiles ? files[0] : argv[optind]);
		usage(stderr);
		goto out;
	}
	if (!nodes || !trace) {
		fprintf(stderr, "carve simulate: --mode fill needs --nodes and --trace\n");
		usage(stderr);
		goto out;
	}
	if (!policy)
		policy = paper_policies;
	if (strlen(policy) >= sizeof(polbuf)) {
		fprintf(stderr, "carve simulate: --policy list too long\n");
		goto out;
	}
	strcpy(polbuf, policy);
	if (!parse_policies(polbuf, pols, &npol)) {
		fprintf(stderr, "carve simulate: --policy wants a comma-separated list of: ");
		for (c = 0; c < carve_policy_count(); c++)
			fprintf(stderr, "%s%s", c ? ", " : "", carve_policy_name(c));
		fprintf(stderr, "\n");
		goto out;
	}
	{
		struct carve_error err = {0};

		if (carve_fill_check_policies(pols, npol, &err)) {
			fprintf(stderr, "carve simulate: --policy: %s\n", err.text);
			goto out;
		}
	}
	rc = simulate_fill(nodes, trace, pols, npol, seeds, nseeds, table);
out:
	carve_free(files);
	return rc;
}
