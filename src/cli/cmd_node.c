/*
 * cmd_node.c - `carve node`: the node agent (docs/node.md), a DaemonSet on
 * every GPU node, run by src/node/agent.c; and its one-shot subcommands:
 *   carve node labels     print the node's GFD labels (features.d text)
 *   carve node metrics    print one dcgm-exporter scrape
 *   carve node mig-apply  apply a mig-parted config once (never changes
 *                         MIG mode, never touches a GPU in use)
 * Exit status: 0 done (or stopped on request), 1 a failure (no NVML, no
 * cluster configuration, a port in use, a layout refused), 2 usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_int.h"
#include "carve/manifest.h"
#include "cli.h"

static void usage(FILE *out)
{
	fputs("usage: carve node [--node-name NAME] [--kubeconfig FILE] [--context NAME]\n"
	      "                  [--nvml-lib PATH] [--metrics-listen ADDR] [--device-plugin-dir DIR]\n"
	      "                  [--resource-domain DOMAIN] [--shares N] [--cdi]\n"
	      "                  [--features-file FILE] [--mig-strategy none|single|mixed]\n"
	      "                  [--machine-type-file FILE] [--interval SECONDS] [--standalone]\n"
	      "                  [--max-seconds N] [-v]\n"
	      "       carve node labels [--nvml-lib PATH] [--mig-strategy S] [--machine-type-file FILE]\n"
	      "                         [--replicas N]\n"
	      "       carve node metrics [--nvml-lib PATH] [--node-name NAME]\n"
	      "       carve node mig-apply --config FILE --name NAME [--nvml-lib PATH] [--dry-run]\n"
	      "\n"
	      "The node agent: discovers the GPUs through NVML, labels the node as GPU Feature\n"
	      "Discovery does, serves the kubelet device plugin that hands each pod exactly the\n"
	      "devices carve's scheduler chose (carve.dev/devices), applies the MIG layouts the\n"
	      "scheduler writes (carve.dev/mig-layout) and exports dcgm-exporter metrics.\n"
	      "\n"
	      "  --node-name NAME         this Node (default $NODE_NAME; the DaemonSet sets it\n"
	      "                           from spec.nodeName)\n"
	      "  --kubeconfig FILE        cluster configuration (default: $KUBECONFIG, then the\n"
	      "                           in-cluster service account, then ~/.kube/config)\n"
	      "  --context NAME           kubeconfig context (default: its current-context)\n"
	      "  --nvml-lib PATH          NVML library (default libnvidia-ml.so.1 via the loader)\n"
	      "  --metrics-listen ADDR    /metrics, /healthz, /readyz on HOST:PORT or :PORT\n"
	      "                           (default :9400; \"\" for none)\n"
	      "  --device-plugin-dir DIR  the kubelet's device-plugin directory (default\n"
	      "                           /var/lib/kubelet/device-plugins; \"\" for no plugin)\n"
	      "  --resource-domain D      resource names D/gpu, D/mig-<profile>, D/gpu.shared\n"
	      "                           (default carve.dev)\n"
	      "  --shares N               shares advertised per shared GPU (default 0: none)\n"
	      "  --cdi                    answer CDI device names besides NVIDIA_VISIBLE_DEVICES\n"
	      "  --features-file FILE     write the labels to Node Feature Discovery's features.d\n"
	      "                           file instead of patching the Node\n"
	      "  --mig-strategy S         GFD's MIG strategy for labels: none, single, mixed\n"
	      "                           (default mixed)\n"
	      "  --machine-type-file FILE gpu.machine from this file (default\n"
	      "                           /sys/class/dmi/id/product_name)\n"
	      "  --interval SECONDS       NVML snapshot period (default 10)\n"
	      "  --standalone             no cluster: labels to --features-file, metrics, the\n"
	      "                           device plugin with no bindings (it refuses every request)\n"
	      "  --max-seconds N          stop after N seconds (tests)\n"
	      "  -v                       log more\n"
	      "  -h, --help               this text\n"
	      "\n"
	      "Exit status: 0 stopped on request, 1 a failure (NVML not found, no cluster\n"
	      "configuration, an address in use), 2 usage error.\n",
	      out);
}

enum {
	OPT_NODE = 256, OPT_KUBECONFIG, OPT_CONTEXT, OPT_NVML, OPT_METRICS, OPT_DPDIR, OPT_DOMAIN,
	OPT_SHARES, OPT_CDI, OPT_FEATURES, OPT_STRATEGY, OPT_MACHINE, OPT_INTERVAL, OPT_STANDALONE,
	OPT_MAX_SECONDS, OPT_REPLICAS, OPT_CONFIG, OPT_NAME, OPT_DRY_RUN
};

static const struct option long_opts[] = {
	{"node-name", required_argument, NULL, OPT_NODE},
	{"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
	{"context", required_argument, NULL, OPT_CONTEXT},
	{"nvml-lib", required_argument, NULL, OPT_NVML},
	{"metrics-listen", required_argument, NULL, OPT_METRICS},
	{"device-plugin-dir", required_argument, NULL, OPT_DPDIR},
	{"resource-domain", required_argument, NULL, OPT_DOMAIN},
	{"shares", required_argument, NULL, OPT_SHARES},
	{"cdi", no_argument, NULL, OPT_CDI},
	{"features-file", required_argument, NULL, OPT_FEATURES},
	{"mig-strategy", required_argument, NULL, OPT_STRATEGY},
	{"machine-type-file", required_argument, NULL, OPT_MACHINE},
	{"interval", required_argument, NULL, OPT_INTERVAL},
	{"standalone", no_argument, NULL, OPT_STANDALONE},
	{"max-seconds", required_argument, NULL, OPT_MAX_SECONDS},
	{"replicas", required_argument, NULL, OPT_REPLICAS},
	{"config", required_argument, NULL, OPT_CONFIG},
	{"name", required_argument, NULL, OPT_NAME},
	{"dry-run", no_argument, NULL, OPT_DRY_RUN},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static bool parse_int(const char *s, long lo, long hi, int *out)
{
	long v;

	if (!cli_parse_long(s, lo, hi, &v))
		return false;
	*out = (int)v;
	return true;
}

/* One snapshot through NVML; prints the error and returns non-zero. */
static int snapshot(const char *lib, struct nd_nvml **n, struct nd_snapshot *s)
{
	struct carve_error err = {0, ""};

	if (nd_nvml_open(lib, n, &err) || nd_nvml_snapshot(*n, s, &err)) {
		cli_errorf("node", "%s", err.text);
		nd_nvml_close(*n);
		*n = NULL;
		return CARVE_EXIT_FAIL;
	}
	return 0;
}

static int run_labels(const struct nd_agent_opts *o, int replicas)
{
	struct nd_label_opts lo = {o->mig_strategy, NULL, replicas, (int64_t)time(NULL)};
	struct carve_error err = {0, ""};
	struct nd_nvml *n = NULL;
	struct nd_snapshot s;
	struct nd_kvs l = {0};
	char machine[256] = "", *text;
	FILE *f;
	int rc;

	if ((rc = snapshot(o->nvml_lib, &n, &s)))
		return rc;
	if ((f = fopen(o->machine_file, "r"))) {
		size_t len = fread(machine, 1, sizeof(machine) - 1, f);

		fclose(f);
		machine[len] = 0;
		machine[strcspn(machine, "\n")] = 0;
		lo.machine = machine[0] ? machine : NULL;
	}
	rc = nd_labels(&s, &lo, &l, &err);
	if (rc) {
		cli_errorf("node", "labels: %s", err.text);
	} else if ((text = nd_labels_features(&l))) {
		fputs(text, stdout);
		free(text);
	}
	nd_kvs_free(&l);
	nd_snapshot_free(&s);
	nd_nvml_close(n);
	return rc ? CARVE_EXIT_FAIL : (cli_stdout_ok("node") ? CARVE_EXIT_OK : CARVE_EXIT_FAIL);
}

static int run_metrics(const struct nd_agent_opts *o)
{
	struct nd_export_opts eo = {o->node_name, NULL, 0};
	struct nd_nvml *n = NULL;
	struct nd_snapshot s;
	char *text;
	size_t len;
	int rc;

	if ((rc = snapshot(o->nvml_lib, &n, &s)))
		return rc;
	if ((text = nd_export(&s, &eo, &len))) {
		fwrite(text, 1, len, stdout);
		carve_free(text);
	}
	nd_snapshot_free(&s);
	nd_nvml_close(n);
	if (!text) {
		cli_errorf("node", "metrics: out of memory");
		return CARVE_EXIT_FAIL;
	}
	return cli_stdout_ok("node") ? CARVE_EXIT_OK : CARVE_EXIT_FAIL;
}

static int run_mig_apply(const struct nd_agent_opts *o, const char *config, const char *name,
			 bool dry)
{
	struct carve_manifests *m = carve_manifests_create();
	const struct carve_mf_migconfig *c;
	struct carve_error err = {0, ""};
	struct nd_nvml *n = NULL;
	struct nd_snapshot s;
	struct nd_mig_plan plan;
	char text[4096];
	int rc = CARVE_EXIT_FAIL;
	size_t i;

	if (!m || cli_manifests_load(m, config)) {
		if (m)
			carve_diags_print(&m->diags, stderr);
		carve_manifests_destroy(m);
		return CARVE_EXIT_FAIL;
	}
	carve_diags_print(&m->diags, stderr);
	if (!(c = carve_mf_find_migconfig(m, name))) {
		cli_errorf("node", "mig-apply: %s has no mig-configs entry named '%s'", config, name);
		carve_manifests_destroy(m);
		return CARVE_EXIT_FAIL;
	}
	if (snapshot(o->nvml_lib, &n, &s)) {
		carve_manifests_destroy(m);
		return CARVE_EXIT_FAIL;
	}
	if (nd_migparted_layout(c, &s, text, sizeof(text), &err) < 0 ||
	    nd_mig_plan(text, &s, NULL, 0, &plan, &err)) {
		cli_errorf("node", "mig-apply: %s", err.text);
		goto out;
	}
	printf("layout %s: %s\n", name, text[0] ? text : "(no MIG GPU selected)");
	rc = CARVE_EXIT_OK;
	for (i = 0; i < plan.n; i++) {
		struct nd_mig_step *st = &plan.step[i];

		switch (st->action) {
		case ND_MIG_SAME:
			printf("GPU %u: already as asked\n", st->want.gpu);
			break;
		case ND_MIG_INVALID:
		case ND_MIG_BUSY:
			printf("GPU %u: not changed: %s\n", st->want.gpu, st->why);
			rc = CARVE_EXIT_FAIL;
			break;
		case ND_MIG_APPLY:
			if (dry) {
				printf("GPU %u: would be changed\n", st->want.gpu);
			} else if (nd_mig_apply(n, &st->want, &err)) {
				printf("GPU %u: failed: %s\n", st->want.gpu, err.text);
				rc = CARVE_EXIT_FAIL;
			} else {
				printf("GPU %u: applied\n", st->want.gpu);
			}
			break;
		}
	}
out:
	nd_snapshot_free(&s);
	nd_nvml_close(n);
	carve_manifests_destroy(m);
	return rc;
}

int cmd_node(int argc, char **argv)
{
	struct nd_agent_opts o = {
		.node_name = getenv("NODE_NAME"),
		.metrics_listen = ":9400",
		.dp_dir = "/var/lib/kubelet/device-plugins",
		.mig_strategy = "mixed",
		.machine_file = "/sys/class/dmi/id/product_name",
		.domain = "carve.dev",
		.interval_s = 10,
	};
	const char *sub = NULL, *config = NULL, *name = NULL;
	struct carve_error err = {0, ""};
	int c, replicas = 0;
	bool dry = false;

	if (argc > 1 && argv[1][0] != '-') {
		sub = argv[1];
		if (strcmp(sub, "labels") && strcmp(sub, "metrics") && strcmp(sub, "mig-apply")) {
			cli_errorf("node", "unknown subcommand '%s' (labels, metrics, mig-apply)", sub);
			usage(stderr);
			return CARVE_EXIT_USAGE;
		}
		argc--;
		argv++;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_NODE: o.node_name = optarg; break;
		case OPT_KUBECONFIG: o.kubeconfig = optarg; break;
		case OPT_CONTEXT: o.context = optarg; break;
		case OPT_NVML: o.nvml_lib = optarg; break;
		case OPT_METRICS: o.metrics_listen = optarg; break;
		case OPT_DPDIR: o.dp_dir = optarg; break;
		case OPT_DOMAIN:
			if (!*optarg || strchr(optarg, '/'))
				return cli_bad_flag("node", "--resource-domain", optarg, "expected a DNS domain");
			o.domain = optarg;
			break;
		case OPT_SHARES:
			if (!parse_int(optarg, 0, 64, &o.shares))
				return cli_bad_flag("node", "--shares", optarg, "expected a whole number 0..64");
			break;
		case OPT_CDI: o.cdi = true; break;
		case OPT_FEATURES: o.features_file = optarg; break;
		case OPT_STRATEGY:
			if (strcmp(optarg, "none") && strcmp(optarg, "single") && strcmp(optarg, "mixed"))
				return cli_bad_flag("node", "--mig-strategy", optarg, "expected none, single or mixed");
			o.mig_strategy = optarg;
			break;
		case OPT_MACHINE: o.machine_file = optarg; break;
		case OPT_INTERVAL:
			if (!parse_int(optarg, 1, 3600, &o.interval_s))
				return cli_bad_flag("node", "--interval", optarg, "expected whole seconds 1..3600");
			break;
		case OPT_STANDALONE: o.standalone = true; break;
		case OPT_MAX_SECONDS:
			if (!parse_int(optarg, 1, 31 * 24 * 3600, &o.max_seconds))
				return cli_bad_flag("node", "--max-seconds", optarg, "expected whole seconds >= 1");
			break;
		case OPT_REPLICAS:
			if (!parse_int(optarg, 0, 1024, &replicas))
				return cli_bad_flag("node", "--replicas", optarg, "expected a whole number 0..1024");
			break;
		case OPT_CONFIG: config = optarg; break;
		case OPT_NAME: name = optarg; break;
		case OPT_DRY_RUN: dry = true; break;
		case 'v': o.verbose = true; break;
		case 'h':
			usage(stdout);
			return CARVE_EXIT_OK;
		case ':':
			cli_errorf("node", "%s needs a value", argv[optind - 1]);
			usage(stderr);
			return CARVE_EXIT_USAGE;
		default:
			cli_errorf("node", "unknown option '%s'", argv[optind - 1]);
			usage(stderr);
			return CARVE_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_errorf("node", "unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return CARVE_EXIT_USAGE;
	}
	if (sub && !strcmp(sub, "labels"))
		return run_labels(&o, replicas);
	if (sub && !strcmp(sub, "metrics"))
		return run_metrics(&o);
	if (sub) {
		if (!config || !name) {
			cli_errorf("node", "mig-apply needs --config FILE and --name NAME");
			return CARVE_EXIT_USAGE;
		}
		return run_mig_apply(&o, config, name, dry);
	}
	if (!o.standalone && (!o.node_name || !*o.node_name)) {
		cli_errorf("node", "no node name: pass --node-name or set NODE_NAME (or --standalone)");
		return CARVE_EXIT_USAGE;
	}
	if (o.standalone && !o.node_name)
		o.node_name = "";
	fflush(stdout);
	if (nd_agent_run(&o, &err)) {
		cli_errorf("node", "%s", err.text);
		return CARVE_EXIT_FAIL;
	}
	return CARVE_EXIT_OK;
}
