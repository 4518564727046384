/*
 * cmd_webhook.c - `carve webhook [flags]`: serves carve's admission
 * policy as a Kubernetes admission webhook (docs/webhook.md), handing
 * over to wh_run() (src/kube/whmain.c) once the flags check out; and
 * `carve webhook review [--mutate] [--policy FILE] FILE`: one
 * AdmissionReview answered offline, the response printed.
 * Exit status: 0 stopped on request (review: allowed), 1 a failure
 * (review: denied or a bad review), 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/diag.h"
#include "cli.h"
#include "whserver.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: carve webhook [--listen ADDR] --cert FILE --key FILE [--policy FILE]\n"
		"                     [--kubeconfig FILE] [--context NAME] [--in-cluster]\n"
		"                     [--no-cluster] [--threads N] [--timeout S]\n"
		"                     [--reload-ms N] [--debounce-ms N] [--qps N] [--burst N]\n"
		"                     [--insecure-http] [--max-seconds N] [-v]\n"
		"       carve webhook review [--mutate] [--policy FILE] FILE\n"
		"\n"
		"Serves carve's admission policy (the rules of `carve validate`, and the\n"
		"mutations a namespace opts into) as an admission.k8s.io/v1 webhook over\n"
		"HTTPS: POST /validate and /mutate; GET /healthz, /readyz, /metrics\n"
		"(docs/webhook.md).\n"
		"\n"
		"  --listen ADDR        HOST:PORT or :PORT (every interface) to serve on\n"
		"                       (default :8443)\n"
		"  --cert FILE          serving certificate chain (PEM, leaf first)\n"
		"  --key FILE           its private key (PEM); both files are read again\n"
		"                       when they change (and on SIGHUP)\n"
		"  --policy FILE        the WebhookPolicy (carve.dev/v1alpha1): each rule's\n"
		"                       level and the mutations; default: the embedded one\n"
		"  --kubeconfig FILE    the kubeconfig for the cluster context (namespaces,\n"
		"                       queue objects); default $KUBECONFIG, then the\n"
		"                       in-cluster service account, then ~/.kube/config\n"
		"  --context NAME       the kubeconfig context (default: current-context)\n"
		"  --in-cluster         use the pod's service account only\n"
		"  --no-cluster         no API access: cross-object checks see no objects\n"
		"  --threads N          worker threads, each with its own epoll set\n"
		"                       (default 2)\n"
		"  --timeout S          a connection idle, or a request body not in, for S\n"
		"                       seconds is closed (default 10)\n"
		"  --reload-ms N        how often the certificate files are checked\n"
		"                       (default 1000)\n"
		"  --debounce-ms N      the context is rebuilt at most every N ms after\n"
		"                       changes (default 200)\n"
		"  --qps N              client-side API request rate limit (default 50)\n"
		"  --burst N            requests allowed at once above the rate (default 100)\n"
		"  --insecure-http      plain HTTP, no certificate (tests and benchmarks:\n"
		"                       the API server only calls HTTPS webhooks)\n"
		"  --max-seconds N      stop (exit 0) after N seconds (for tests)\n"
		"  -v, --verbose        one line per review on stderr\n"
		"  -h, --help           this help\n"
		"\n"
		"review FILE answers the AdmissionReview in FILE ('-': standard input) as\n"
		"/validate would (/mutate with --mutate), with no cluster context, and\n"
		"prints the response: exit 0 allowed, 1 denied or not a valid review.\n"
		"\n"
		"Stops on SIGTERM or SIGINT (exit 0) after the requests in flight.  Exit\n"
		"status: 0 stopped on request, 1 failure (files that do not load, an\n"
		"address in use, no cluster configuration), 2 usage error.\n");
}

enum {
	OPT_LISTEN = 256, OPT_CERT, OPT_KEY, OPT_POLICY, OPT_KUBECONFIG, OPT_CONTEXT, OPT_IN_CLUSTER,
	OPT_NO_CLUSTER, OPT_THREADS, OPT_TIMEOUT, OPT_RELOAD, OPT_DEBOUNCE, OPT_QPS, OPT_BURST,
	OPT_INSECURE, OPT_MAX_SECONDS, OPT_MUTATE
};

static const struct option long_opts[] = {
	{"listen", required_argument, NULL, OPT_LISTEN},
	{"cert", required_argument, NULL, OPT_CERT},
	{"key", required_argument, NULL, OPT_KEY},
	{"policy", required_argument, NULL, OPT_POLICY},
	{"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
	{"context", required_argument, NULL, OPT_CONTEXT},
	{"in-cluster", no_argument, NULL, OPT_IN_CLUSTER},
	{"no-cluster", no_argument, NULL, OPT_NO_CLUSTER},
	{"threads", required_argument, NULL, OPT_THREADS},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"reload-ms", required_argument, NULL, OPT_RELOAD},
	{"debounce-ms", required_argument, NULL, OPT_DEBOUNCE},
	{"qps", required_argument, NULL, OPT_QPS},
	{"burst", required_argument, NULL, OPT_BURST},
	{"insecure-http", no_argument, NULL, OPT_INSECURE},
	{"max-seconds", required_argument, NULL, OPT_MAX_SECONDS},
	{"mutate", no_argument, NULL, OPT_MUTATE},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* Reads FILE ('-': stdin) whole.  Returns the bytes (free()) or NULL after saying why. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	char *buf = NULL, *nb;
	size_t cap = 0, n = 0, got;

	if (!f) {
		cli_errorf("webhook", "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			if (cap > WH_MAX_BODY * 2 || !(nb = realloc(buf, cap))) {
				cli_errorf("webhook", "%s: larger than %zu bytes", path, WH_MAX_BODY);
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	if (buf && ferror(f)) {
		cli_errorf("webhook", "cannot read %s: %s", path, strerror(errno));
		free(buf);
		buf = NULL;
	}
	if (f != stdin)
		fclose(f);
	*len = n;
	return buf;
}

/* `carve webhook review`: argv after "review". */
static int review_offline(bool mutate, const char *policy, const char *path)
{
	struct carve_diags d;
	struct wh_policy *pol = NULL;
	struct wh_outcome o = {0};
	char *body, *out = NULL;
	size_t len = 0, outlen = 0;
	int rc, status;

	carve_diags_init(&d);
	rc = wh_policy_load(policy, &pol, &d);
	carve_diags_print(&d, stderr);
	carve_diags_cleanup(&d);
	if (rc) {
		cli_errorf("webhook", "policy %s: %s", policy ? policy : "(embedded)", carve_strerror(rc));
		return CARVE_EXIT_FAIL;
	}
	if (!(body = slurp(path, &len))) {
		wh_policy_free(pol);
		return CARVE_EXIT_FAIL;
	}
	status = wh_review(pol, NULL, mutate, body, len, &out, &outlen, &o);
	free(body);
	wh_policy_free(pol);
	if (status < 0 || !out) {
		cli_errorf("webhook", "review: %s", carve_strerror(status));
		return CARVE_EXIT_FAIL;
	}
	fwrite(out, 1, outlen, stdout);
	fputc('\n', stdout);
	free(out);
	if (status != 200)
		fprintf(stderr, "carve webhook: HTTP %d: not a valid AdmissionReview\n", status);
	return status == 200 && o.allowed ? CARVE_EXIT_OK : CARVE_EXIT_FAIL;
}

int cmd_webhook(int argc, char **argv)
{
	struct wh_opts o = {.listen = ":8443", .qps = 50, .burst = 100};
	bool review = argc > 1 && !strcmp(argv[1], "review"), mutate = false;
	long v;
	char *end;
	int c;

	if (review) {
		argc--;
		argv++;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", long_opts, NULL)) != -1) {
		if (review && c != OPT_MUTATE && c != OPT_POLICY && c != 'h' && c != ':' && c != '?') {
			cli_errorf("webhook", "review takes only --mutate and --policy (see --help)");
			return CARVE_EXIT_USAGE;
		}
		switch (c) {
		case OPT_LISTEN:
			if (!*optarg || !strchr(optarg, ':'))
				return cli_bad_flag("webhook", "--listen", optarg, "expected HOST:PORT or :PORT");
			o.listen = optarg;
			break;
		case OPT_CERT:
			o.cert = optarg;
			break;
		case OPT_KEY:
			o.key = optarg;
			break;
		case OPT_POLICY:
			o.policy = optarg;
			break;
		case OPT_KUBECONFIG:
			o.kubeconfig = optarg;
			break;
		case OPT_CONTEXT:
			o.context = optarg;
			break;
		case OPT_IN_CLUSTER:
			o.in_cluster = true;
			break;
		case OPT_NO_CLUSTER:
			o.no_cluster = true;
			break;
		case OPT_THREADS:
			if (!cli_parse_long(optarg, 1, 256, &v))
				return cli_bad_flag("webhook", "--threads", optarg, "expected a whole number 1..256");
			o.threads = (int)v;
			break;
		case OPT_TIMEOUT:
			if (!cli_parse_long(optarg, 1, 3600, &v))
				return cli_bad_flag("webhook", "--timeout", optarg, "expected seconds 1..3600");
			o.timeout_s = (int)v;
			break;
		case OPT_RELOAD:
			if (!cli_parse_long(optarg, 10, 3600000, &v))
				return cli_bad_flag("webhook", "--reload-ms", optarg, "expected milliseconds 10..3600000");
			o.reload_ms = (int)v;
			break;
		case OPT_DEBOUNCE:
			if (!cli_parse_long(optarg, 1, 600000, &v))
				return cli_bad_flag("webhook", "--debounce-ms", optarg, "expected milliseconds 1..600000");
			o.debounce_ms = (int)v;
			break;
		case OPT_QPS:
			errno = 0;
			o.qps = strtod(optarg, &end);
			if (!*optarg || *end || errno || !(o.qps >= 0 && o.qps <= 1e6))
				return cli_bad_flag("webhook", "--qps", optarg, "expected a number 0..1000000");
			break;
		case OPT_BURST:
			if (!cli_parse_long(optarg, 1, 1000000, &v))
				return cli_bad_flag("webhook", "--burst", optarg, "expected a whole number 1..1000000");
			o.burst = (int)v;
			break;
		case OPT_INSECURE:
			o.insecure_http = true;
			break;
		case OPT_MAX_SECONDS:
			if (!cli_parse_long(optarg, 1, 31L * 24 * 3600, &v))
				return cli_bad_flag("webhook", "--max-seconds", optarg, "expected a whole number of seconds >= 1");
			o.max_seconds = (int)v;
			break;
		case OPT_MUTATE:
			if (!review) {
				cli_errorf("webhook", "--mutate is an option of `carve webhook review`");
				return CARVE_EXIT_USAGE;
			}
			mutate = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return CARVE_EXIT_OK;
		case ':':
			cli_errorf("webhook", "%s needs a value", argv[optind - 1]);
			usage(stderr);
			return CARVE_EXIT_USAGE;
		default:
			cli_errorf("webhook", "unknown option '%s'", argv[optind - 1]);
			usage(stderr);
			return CARVE_EXIT_USAGE;
		}
	}
	if (review) {
		if (optind != argc - 1) {
			cli_errorf("webhook", "review takes one FILE ('-' for standard input)");
			return CARVE_EXIT_USAGE;
		}
		return review_offline(mutate, o.policy, argv[optind]);
	}
	if (optind < argc) {
		cli_errorf("webhook", "unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return CARVE_EXIT_USAGE;
	}
	if (!o.insecure_http && (!o.cert || !o.key)) {
		cli_errorf("webhook", "--cert and --key are required (or --insecure-http)");
		return CARVE_EXIT_USAGE;
	}
	if (o.insecure_http && (o.cert || o.key)) {
		cli_errorf("webhook", "--insecure-http serves no certificate: drop --cert/--key");
		return CARVE_EXIT_USAGE;
	}
	if (o.in_cluster && (o.kubeconfig || o.no_cluster)) {
		cli_errorf("webhook", "--in-cluster excludes --kubeconfig and --no-cluster");
		return CARVE_EXIT_USAGE;
	}
	fflush(stdout);
	return wh_run(&o) ? CARVE_EXIT_FAIL : CARVE_EXIT_OK;
}
