/*
 * webhook.c - carve-bench-webhook: what one admission review costs
 * (bench/README.md, "carve-bench-webhook").
 *
 *   1. review only: wh_review() on a recorded pod AdmissionReview in a
 *      loop on this thread, CPU time per review;
 *   2. over HTTPS: the webhook server (src/kube/webhook.c, one worker
 *      thread, the same code as `carve webhook`) in a child process pinned
 *      to one core, N client threads on the other cores, each a
 *      keep-alive TLS connection (GnuTLS) sending POST /validate back to
 *      back for --seconds; reviews/s, the server's CPU seconds (from
 *      /proc/PID/stat) and so reviews per server CPU second, and the
 *      latency percentiles seen by the clients (send to last byte).
 *
 * The serving certificate is made with openssl in a temporary directory.
 * Usage: carve-bench-webhook [--clients N] [--seconds S] [--cpu C]
 *                            [--certs DIR] [--plain] [--json]
 * (--certs: use DIR/tls.crt, self-signed for localhost, and DIR/tls.key
 * instead of running openssl)
 * Exit 0 after printing the figures, 1 when a request failed.
 */

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "carve/diag.h"
#include "whserver.h"

static const char REVIEW[] =
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
	"\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\","
	"\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
	"\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
	"\"requestKind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
	"\"requestResource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
	"\"name\":\"train-0\",\"namespace\":\"team-a\",\"operation\":\"CREATE\","
	"\"userInfo\":{\"username\":\"system:serviceaccount:kube-system:job-controller\","
	"\"uid\":\"2b1c0f5e-1111-4a4a-9d9d-3c3c3c3c3c3c\",\"groups\":[\"system:serviceaccounts\","
	"\"system:serviceaccounts:kube-system\",\"system:authenticated\"]},"
	"\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"train-0\","
	"\"namespace\":\"team-a\",\"labels\":{\"app\":\"train\",\"batch.kubernetes.io/job-name\":"
	"\"train\",\"kueue.x-k8s.io/queue-name\":\"team-a\"},\"ownerReferences\":[{\"apiVersion\":"
	"\"batch/v1\",\"kind\":\"Job\",\"name\":\"train\",\"uid\":\"9f7e6d5c-2222-4b4b-8e8e-"
	"4d4d4d4d4d4d\",\"controller\":true}]},\"spec\":{\"schedulerName\":\"carve\","
	"\"nodeSelector\":{\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\"},"
	"\"containers\":[{\"name\":\"trainer\",\"image\":\"registry.example.com/train:1.4\","
	"\"command\":[\"torchrun\",\"--nproc-per-node=8\",\"train.py\"],\"resources\":{"
	"\"requests\":{\"cpu\":\"32\",\"memory\":\"256Gi\",\"nvidia.com/gpu\":\"8\"},"
	"\"limits\":{\"memory\":\"256Gi\",\"nvidia.com/gpu\":\"8\"}},\"volumeMounts\":[{"
	"\"name\":\"data\",\"mountPath\":\"/data\"}]}],\"volumes\":[{\"name\":\"data\","
	"\"persistentVolumeClaim\":{\"claimName\":\"team-a-data\"}}],\"restartPolicy\":"
	"\"Never\",\"tolerations\":[{\"key\":\"nvidia.com/gpu\",\"operator\":\"Exists\","
	"\"effect\":\"NoSchedule\"}]}},\"oldObject\":null,\"dryRun\":false,\"options\":{"
	"\"apiVersion\":\"meta.k8s.io/v1\",\"kind\":\"CreateOptions\"}}}";

static double now_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The embedded policy, or NULL after saying why. */
static struct wh_policy *default_policy(void)
{
	struct carve_diags d;
	struct wh_policy *p = NULL;

	carve_diags_init(&d);
	if (wh_policy_load(NULL, &p, &d))
		carve_diags_print(&d, stderr);
	carve_diags_cleanup(&d);
	return p;
}

/* ---- the server child ---- */

static pid_t start_server(const char *dir, int cpu, bool plain, int *port)
{
	int fds[2];
	pid_t pid;
	char cert[512], key[512];

	if (pipe(fds))
		return -1;
	if ((pid = fork()) != 0) {
		close(fds[1]);
		if (pid < 0 || read(fds[0], port, sizeof(*port)) != (ssize_t)sizeof(*port) || *port <= 0)
			pid = -1;
		close(fds[0]);
		return pid;
	}
	{
		struct carve_error err = {0};
		struct wh_server_opts o = {.listen = "127.0.0.1:0", .threads = 1};
		struct wh_tls *tls = NULL;
		struct wh_policy *pol = NULL;
		struct wh_server *s;
		cpu_set_t set;
		sigset_t sigs;
		int sig, p = -1;

		close(fds[0]);
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			fprintf(stderr, "carve-bench-webhook: cannot pin the server to CPU %d\n", cpu);
		sigemptyset(&sigs);
		sigaddset(&sigs, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &sigs, NULL);
		snprintf(cert, sizeof(cert), "%s/tls.crt", dir);
		snprintf(key, sizeof(key), "%s/tls.key", dir);
		if (!(pol = default_policy()) || (!plain && !(tls = wh_tls_create(cert, key, &err)))) {
			fprintf(stderr, "carve-bench-webhook: server setup: %s\n", err.text);
			_exit(1);
		}
		o.tls = tls;
		o.policy = pol;
		if (!(s = wh_server_start(&o, &err))) {
			fprintf(stderr, "carve-bench-webhook: %s\n", err.text);
			if (write(fds[1], &p, sizeof(p)) < 0)
				_exit(1);
			_exit(1);
		}
		wh_server_set_ready(s, true);
		p = wh_server_port(s);
		if (write(fds[1], &p, sizeof(p)) != (ssize_t)sizeof(p))
			_exit(1);
		close(fds[1]);
		sigwait(&sigs, &sig);
		wh_server_stop(s, 0);
		wh_tls_destroy(tls);
		wh_policy_free(pol);
		_exit(0);
	}
}

/* utime + stime of pid in seconds. */
static double proc_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return 0;
	/* after ") ": state(3) ... utime is field 14, stime 15 */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* ---- the clients ---- */

struct client {
	pthread_t th;
	int port;
	bool plain;
	const char *ca;
	double end, warm;
	double *lat;          /* seconds, after the warm-up */
	size_t n, cap;
	uint64_t done, failed;
	char why[160];
};

struct conn {
	int fd;
	gnutls_session_t s;
	gnutls_certificate_credentials_t cred;
};

static ssize_t conn_send(struct conn *c, const char *p, size_t n)
{
	return c->s ? gnutls_record_send(c->s, p, n) : send(c->fd, p, n, MSG_NOSIGNAL);
}

static ssize_t conn_recv(struct conn *c, char *p, size_t n)
{
	ssize_t r;

	if (!c->s)
		return recv(c->fd, p, n, 0);
	do
		r = gnutls_record_recv(c->s, p, n);
	while (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED);
	return r;
}

static int conn_open(struct conn *c, int port, bool plain, const char *ca, char *why, size_t wsz)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1, rc;

	memset(c, 0, sizeof(*c));
	if ((c->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(why, wsz, "connect: %s", strerror(errno));
		return -1;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (plain)
		return 0;
	gnutls_certificate_allocate_credentials(&c->cred);
	gnutls_certificate_set_x509_trust_file(c->cred, ca, GNUTLS_X509_FMT_PEM);
	gnutls_init(&c->s, GNUTLS_CLIENT);
	gnutls_set_default_priority(c->s);
	gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, c->cred);
	gnutls_server_name_set(c->s, GNUTLS_NAME_DNS, "localhost", strlen("localhost"));
	gnutls_session_set_verify_cert(c->s, "localhost", 0);
	gnutls_transport_set_int(c->s, c->fd);
	do
		rc = gnutls_handshake(c->s);
	while (rc < 0 && !gnutls_error_is_fatal(rc));
	if (rc < 0) {
		snprintf(why, wsz, "TLS handshake: %s", gnutls_strerror(rc));
		return -1;
	}
	return 0;
}

static void conn_close(struct conn *c)
{
	if (c->s) {
		gnutls_bye(c->s, GNUTLS_SHUT_WR);
		gnutls_deinit(c->s);
	}
	if (c->cred)
		gnutls_certificate_free_credentials(c->cred);
	if (c->fd >= 0)
		close(c->fd);
}

/* One request and its answer.  Returns the HTTP status or -1. */
static int one_request(struct conn *c, const char *req, size_t reqlen, char *buf, size_t cap)
{
	size_t have = 0, off = 0, need = 0;
	char *hdr_end, *cl;
	ssize_t r;
	int status;

	while (off < reqlen) {
		if ((r = conn_send(c, req + off, reqlen - off)) <= 0)
			return -1;
		off += (size_t)r;
	}
	for (;;) {
		if (have == cap - 1 || (r = conn_recv(c, buf + have, cap - 1 - have)) <= 0)
			return -1;
		have += (size_t)r;
		buf[have] = '\0';
		if (!need && (hdr_end = strstr(buf, "\r\n\r\n"))) {
			if (!(cl = strcasestr(buf, "\r\nContent-Length:")))
				return -1;
			need = (size_t)(hdr_end + 4 - buf) + strtoul(cl + 17, NULL, 10);
		}
		if (need && have >= need)
			break;
	}
	if (sscanf(buf, "HTTP/1.1 %d", &status) != 1)
		return -1;
	return status;
}

static void *client_main(void *arg)
{
	struct client *cl = arg;
	struct conn c;
	char req[8192], *buf = malloc(65536);
	int n = snprintf(req, sizeof(req),
			 "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
			 "Accept: application/json\r\nContent-Length: %zu\r\n\r\n%s",
			 strlen(REVIEW), REVIEW);

	if (!buf || conn_open(&c, cl->port, cl->plain, cl->ca, cl->why, sizeof(cl->why))) {
		cl->failed++;
		free(buf);
		return NULL;
	}
	for (;;) {
		double t0 = now_s(CLOCK_MONOTONIC), t1;
		int st;

		if (t0 >= cl->end)
			break;
		st = one_request(&c, req, (size_t)n, buf, 65536);
		t1 = now_s(CLOCK_MONOTONIC);
		if (st != 200) {
			cl->failed++;
			snprintf(cl->why, sizeof(cl->why), "status %d", st);
			break;
		}
		if (t0 < cl->warm)
			continue;
		cl->done++;
		if (cl->n == cl->cap) {
			size_t cap = cl->cap ? cl->cap * 2 : 65536;
			double *l = realloc(cl->lat, cap * sizeof(*l));

			if (!l)
				break;
			cl->lat = l;
			cl->cap = cap;
		}
		cl->lat[cl->n++] = t1 - t0;
	}
	conn_close(&c);
	free(buf);
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ---- main ---- */

static double review_only(int n)
{
	double t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
	struct wh_policy *pol = NULL;
	int i;

	if (!(pol = default_policy()))
		return -1;
	for (i = 0; i < n; i++) {
		char *out = NULL;
		size_t len;

		if (wh_review(pol, NULL, false, REVIEW, strlen(REVIEW), &out, &len, NULL) != 200) {
			free(out);
			wh_policy_free(pol);
			return -1;
		}
		free(out);
	}
	wh_policy_free(pol);
	return (now_s(CLOCK_THREAD_CPUTIME_ID) - t0) / n;
}

int main(int argc, char **argv)
{
	int nclients = 8, cpu = 0, port = 0, i;
	double seconds = 5, warm = 0.5, cpu0, cpu1, t0, t1, wall;
	bool plain = false, json = false;
	const char *certs = NULL; /* a directory with tls.crt (self-signed for localhost) and tls.key */
	char dir[] = "/tmp/carve-bench-wh-XXXXXX", cmd[2048], ca[600];
	struct client *cl;
	double *all, per_review;
	size_t total = 0, k;
	uint64_t failed = 0;
	pid_t pid;
	cpu_set_t set;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--clients") && i + 1 < argc)
			nclients = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--certs") && i + 1 < argc)
			certs = argv[++i];
		else if (!strcmp(argv[i], "--plain"))
			plain = true;
		else if (!strcmp(argv[i], "--json"))
			json = true;
		else {
			fprintf(stderr, "usage: carve-bench-webhook [--clients N] [--seconds S] [--cpu C] "
					"[--certs DIR] [--plain] [--json]\n");
			return 2;
		}
	}
	if (nclients < 1 || nclients > 1024 || !(seconds > 0) || cpu < 0 || cpu >= ncpu) {
		fprintf(stderr, "carve-bench-webhook: --clients 1..1024, --seconds > 0, --cpu 0..%ld\n",
			ncpu - 1);
		return 2;
	}
	per_review = review_only(20000);
	if (per_review < 0) {
		fprintf(stderr, "carve-bench-webhook: the recorded review is not answered with 200\n");
		return 1;
	}
	if (!mkdtemp(dir))
		return 1;
	if (certs) {
		snprintf(cmd, sizeof(cmd), "cp %s/tls.crt %s/tls.key %s/", certs, certs, dir);
		if (system(cmd)) {
			fprintf(stderr, "carve-bench-webhook: cannot copy %s/tls.crt and tls.key\n", certs);
			return 1;
		}
	}
	snprintf(cmd, sizeof(cmd),
		 "cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		 "-days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost "
		 "-keyout tls.key -out tls.crt 2>/dev/null",
		 dir);
	if (!plain && !certs && system(cmd)) {
		fprintf(stderr, "carve-bench-webhook: openssl failed\n");
		return 1;
	}
	snprintf(ca, sizeof(ca), "%s/tls.crt", dir);
	if ((pid = start_server(dir, cpu, plain, &port)) < 0) {
		fprintf(stderr, "carve-bench-webhook: the server did not start\n");
		return 1;
	}
	/* clients off the server's core when there is another */
	if (ncpu > 1) {
		CPU_ZERO(&set);
		for (i = 0; i < ncpu; i++)
			if (i != cpu)
				CPU_SET(i, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	cl = calloc((size_t)nclients, sizeof(*cl));
	t0 = now_s(CLOCK_MONOTONIC);
	for (i = 0; i < nclients; i++) {
		cl[i].port = port;
		cl[i].plain = plain;
		cl[i].ca = ca;
		cl[i].warm = t0 + warm;
		cl[i].end = t0 + warm + seconds;
		pthread_create(&cl[i].th, NULL, client_main, &cl[i]);
	}
	while (now_s(CLOCK_MONOTONIC) < t0 + warm)
		usleep(1000);
	cpu0 = proc_cpu_s(pid);
	t1 = now_s(CLOCK_MONOTONIC);
	for (i = 0; i < nclients; i++)
		pthread_join(cl[i].th, NULL);
	wall = now_s(CLOCK_MONOTONIC) - t1;
	cpu1 = proc_cpu_s(pid);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "carve-bench-webhook: could not remove %s\n", dir);
	for (i = 0; i < nclients; i++) {
		total += cl[i].n;
		failed += cl[i].failed;
		if (cl[i].failed)
			fprintf(stderr, "carve-bench-webhook: client %d: %s\n", i, cl[i].why);
	}
	all = malloc((total ? total : 1) * sizeof(*all));
	for (k = 0, i = 0; i < nclients; i++) {
		memcpy(all + k, cl[i].lat, cl[i].n * sizeof(*all));
		k += cl[i].n;
		free(cl[i].lat);
	}
	qsort(all, total, sizeof(*all), cmp_d);
#define PCT(p) (total ? all[(size_t)((double)(total - 1) * (p))] * 1e3 : 0)
	if (json)
		printf("{\"transport\":\"%s\",\"clients\":%d,\"seconds\":%.2f,\"reviews\":%zu,"
		       "\"failed\":%llu,\"reviews_per_s\":%.0f,\"server_cpu_s\":%.3f,"
		       "\"reviews_per_server_cpu_s\":%.0f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
		       "\"max_ms\":%.3f,\"review_only_us\":%.2f,\"cpus\":%ld}\n",
		       plain ? "http" : "https", nclients, wall, total, (unsigned long long)failed,
		       total / wall, cpu1 - cpu0, cpu1 > cpu0 ? total / (cpu1 - cpu0) : 0, PCT(0.5),
		       PCT(0.99), PCT(1.0), per_review * 1e6, ncpu);
	else
		printf("carve-bench-webhook: %s, %d keep-alive clients, server on CPU %d (1 worker)\n"
		       "  review only (wh_review):   %.2f us CPU per review\n"
		       "  reviews answered:          %zu in %.2f s = %.0f reviews/s (%llu failed)\n"
		       "  server CPU:                %.3f s = %.0f reviews per server CPU second\n"
		       "  latency (client):          p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
		       plain ? "plain HTTP" : "HTTPS (TLS 1.3, GnuTLS)", nclients, cpu, per_review * 1e6,
		       total, wall, total / wall, (unsigned long long)failed, cpu1 - cpu0,
		       cpu1 > cpu0 ? total / (cpu1 - cpu0) : 0, PCT(0.5), PCT(0.99), PCT(1.0));
	free(all);
	free(cl);
	return failed ? 1 : 0;
}
