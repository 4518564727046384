/*
 * cmd_scheduler.c - `carve scheduler [flags]`: runs carve as a Kubernetes
 * scheduler (docs/kubernetes.md).  Parses and checks the flags, then hands
 * over to the loop in src/kube/sched.c, which runs until SIGTERM,
 * --max-seconds or the loss of leadership.
 * Exit status: 0 stopped on request, 1 a failure (no cluster configuration,
 * a bad address, leadership lost), 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/place.h"
#include "cli.h"
#include "sched.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: carve scheduler [--kubeconfig FILE] [--context NAME] [--scheduler-name NAME]\n"
		"                       [--queues carve|kueue|none] [--policy NAME] [--seed N]\n"
		"                       [--leader-elect=true|false] [--lease-namespace NS]\n"
		"                       [--lease-name NAME] [--identity ID] [--qps N] [--burst N]\n"
		"                       [--metrics-addr ADDR] [--mig-dynamic] [--max-seconds N] [-v]\n"
		"\n"
		"Runs carve as a Kubernetes scheduler beside kube-scheduler: pods with\n"
		"spec.schedulerName NAME are admitted against the queues' quotas and bound,\n"
		"whole gangs at once, to exact devices (the carve.dev/devices annotation);\n"
		"pods left pending get PodScheduled=False with the reason and a\n"
		"FailedScheduling event (docs/kubernetes.md).\n"
		"\n"
		"  --kubeconfig FILE      the kubeconfig to use; default $KUBECONFIG, then the\n"
		"                         in-cluster service account, then ~/.kube/config\n"
		"  --context NAME         the kubeconfig context (default: current-context)\n"
		"  --scheduler-name NAME  the spec.schedulerName carve serves (default carve)\n"
		"  --queues MODE          carve (default): carve.dev/v1alpha1 ResourceFlavors,\n"
		"                         ClusterQueues, LocalQueues, Cohorts,\n"
		"                         WorkloadPriorityClasses; kueue: the same kinds of\n"
		"                         kueue.x-k8s.io/v1beta2 (Kueue's CRDs without its\n"
		"                         controller); none: place only, no quota (behind a\n"
		"                         Kueue that already admitted the pods)\n"
		"  --policy NAME          placement policy (default binpack): binpack, spread,\n"
		"                         bestfit, dotprod, gpupacking, gpuclustering, random, fgd\n"
		"  --seed N               placement RNG seed (default 42)\n"
		"  --leader-elect BOOL    true (default): run as one of a pair, acting only\n"
		"                         while holding a coordination.k8s.io/v1 Lease (15 s\n"
		"                         lease, 10 s renew deadline, 2 s retry); false: act\n"
		"                         alone, at once\n"
		"  --lease-namespace NS   the Lease's namespace (default: the kubeconfig\n"
		"                         context's, in-cluster the pod's)\n"
		"  --lease-name NAME      the Lease's name (default carve-scheduler)\n"
		"  --identity ID          this candidate's name in the Lease (default\n"
		"                         HOSTNAME_RANDOM)\n"
		"  --qps N                client-side request rate limit, per second (default\n"
		"                         50; 0: none)\n"
		"  --burst N              requests allowed at once above the rate (default 100)\n"
		"  --metrics-addr ADDR    serve /metrics, /healthz, /readyz on HOST:PORT\n"
		"                         (default 127.0.0.1:10259); :PORT listens on every\n"
		"                         interface; 0 turns the server off\n"
		"  --mig-dynamic          Dynamic MIG: give idle MIG GPUs the layout pending\n"
		"                         pods need; the node agent (carve node) applies it\n"
		"                         from the node's carve.dev/mig-layout annotation and\n"
		"                         the pods are bound once carve.dev/mig-current shows\n"
		"                         it (docs/node.md)\n"
		"  --max-seconds N        stop (exit 0) after N seconds (for tests)\n"
		"  -v, --verbose          log every cycle, not only those that acted\n"
		"  -h, --help             this help\n"
		"\n"
		"Stops on SIGTERM or SIGINT (exit 0, the Lease released).  Exit status: 0\n"
		"stopped on request, 1 failure (no cluster configuration, an address that\n"
		"cannot be served, leadership lost: the Deployment restarts it), 2 usage\n"
		"error.\n");
}

enum {
	OPT_KUBECONFIG = 256, OPT_CONTEXT, OPT_NAME, OPT_QUEUES, OPT_POLICY, OPT_SEED,
	OPT_ELECT, OPT_LEASE_NS, OPT_LEASE_NAME, OPT_IDENTITY, OPT_QPS, OPT_BURST,
	OPT_METRICS, OPT_MAX_SECONDS, OPT_MIG_DYNAMIC
};

static const struct option long_opts[] = {
	{"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
	{"context", required_argument, NULL, OPT_CONTEXT},
	{"mig-dynamic", no_argument, NULL, OPT_MIG_DYNAMIC},
	{"scheduler-name", required_argument, NULL, OPT_NAME},
	{"queues", required_argument, NULL, OPT_QUEUES},
	{"policy", required_argument, NULL, OPT_POLICY},
	{"seed", required_argument, NULL, OPT_SEED},
	{"leader-elect", required_argument, NULL, OPT_ELECT},
	{"lease-namespace", required_argument, NULL, OPT_LEASE_NS},
	{"lease-name", required_argument, NULL, OPT_LEASE_NAME},
	{"identity", required_argument, NULL, OPT_IDENTITY},
	{"qps", required_argument, NULL, OPT_QPS},
	{"burst", required_argument, NULL, OPT_BURST},
	{"metrics-addr", required_argument, NULL, OPT_METRICS},
	{"max-seconds", required_argument, NULL, OPT_MAX_SECONDS},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static bool parse_qps(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s || *s == ' ' || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v >= 0 && v <= 1e6))
		return false;
	*out = v;
	return true;
}

/* A Kubernetes name: DNS-1123 subdomain (lowercase alphanumerics, '-',
 * '.', starting and ending alphanumeric, at most 253). */
static bool dns_name(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n > 253)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];
		bool an = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!an && c != '-' && c != '.')
			return false;
		if (!an && (i == 0 || i == n - 1))
			return false;
	}
	return true;
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

int cmd_scheduler(int argc, char **argv)
{
	struct sched_opts o = {
		.scheduler_name = "carve",
		.queues = CARVE_QUEUES_CARVE,
		.seed = 42,
		.leader_elect = true,
		.lease_name = "carve-scheduler",
		.qps = 50,
		.burst = 100,
		.metrics_addr = "127.0.0.1:10259",
	};
	long v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_KUBECONFIG:
			o.kubeconfig = optarg;
			break;
		case OPT_CONTEXT:
			o.context = optarg;
			break;
		case OPT_NAME:
			if (!dns_name(optarg))
				return cli_bad_flag("scheduler", "--scheduler-name", optarg,
					   "not a valid scheduler name (lowercase DNS-1123 subdomain)");
			o.scheduler_name = optarg;
			break;
		case OPT_QUEUES:
			if (!strcmp(optarg, "carve"))
				o.queues = CARVE_QUEUES_CARVE;
			else if (!strcmp(optarg, "kueue"))
				o.queues = CARVE_QUEUES_KUEUE;
			else if (!strcmp(optarg, "none"))
				o.queues = CARVE_QUEUES_NONE;
			else
				return cli_bad_flag("scheduler", "--queues", optarg, "expected carve, kueue or none");
			break;
		case OPT_POLICY:
			if (!policy_known(optarg))
				return cli_bad_flag("scheduler", "--policy", optarg, "unknown placement policy (see --help)");
			o.policy = optarg;
			break;
		case OPT_SEED:
			if (!cli_parse_long(optarg, 0, 0x7fffffffL, &v))
				return cli_bad_flag("scheduler", "--seed", optarg, "expected a whole number 0..2147483647");
			o.seed = (uint64_t)v;
			break;
		case OPT_ELECT:
			if (!strcmp(optarg, "true"))
				o.leader_elect = true;
			else if (!strcmp(optarg, "false"))
				o.leader_elect = false;
			else
				return cli_bad_flag("scheduler", "--leader-elect", optarg, "expected true or false");
			break;
		case OPT_LEASE_NS:
			if (!dns_name(optarg) || strchr(optarg, '.') || strlen(optarg) > 63)
				return cli_bad_flag("scheduler", "--lease-namespace", optarg, "not a namespace name");
			o.lease_ns = optarg;
			break;
		case OPT_LEASE_NAME:
			if (!dns_name(optarg))
				return cli_bad_flag("scheduler", "--lease-name", optarg, "not a Lease name");
			o.lease_name = optarg;
			break;
		case OPT_IDENTITY:
			if (!*optarg || strlen(optarg) > 253)
				return cli_bad_flag("scheduler", "--identity", optarg, "expected 1..253 characters");
			o.identity = optarg;
			break;
		case OPT_QPS:
			if (!parse_qps(optarg, &o.qps))
				return cli_bad_flag("scheduler", "--qps", optarg, "expected a number 0..1000000");
			break;
		case OPT_BURST:
			if (!cli_parse_long(optarg, 1, 1000000, &v))
				return cli_bad_flag("scheduler", "--burst", optarg, "expected a whole number 1..1000000");
			o.burst = (int)v;
			break;
		case OPT_METRICS:
			if (!*optarg)
				return cli_bad_flag("scheduler", "--metrics-addr", optarg, "expected HOST:PORT, :PORT or 0");
			o.metrics_addr = optarg;
			break;
		case OPT_MAX_SECONDS:
			if (!cli_parse_long(optarg, 1, 31L * 24 * 3600, &v))
				return cli_bad_flag("scheduler", "--max-seconds", optarg, "expected a whole number of seconds >= 1");
			o.max_seconds = (int)v;
			break;
		case 'v':
			o.verbose = true;
			break;
		case OPT_MIG_DYNAMIC:
			o.mig_dynamic = true;
			break;
		case 'h':
			usage(stdout);
			return CARVE_EXIT_OK;
		case ':':
			cli_errorf("scheduler", "%s needs a value", argv[optind - 1]);
			usage(stderr);
			return CARVE_EXIT_USAGE;
		default:
			cli_errorf("scheduler", "unknown option '%s'", argv[optind - 1]);
			usage(stderr);
			return CARVE_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_errorf("scheduler", "unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return CARVE_EXIT_USAGE;
	}
	fflush(stdout);
	return sched_run(&o) ? CARVE_EXIT_FAIL : CARVE_EXIT_OK;
}
