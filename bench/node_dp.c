/*
 * node_dp.c - carve-bench-dp: the latency of the device plugin's Allocate
 * (src/node/dp*.c) through the real gRPC path on a unix socket, as the
 * kubelet sees it: request packed, sent over the socket, matched to a
 * binding, answer packed and read back.  Target: <= 1 ms (issue 16).
 *
 * The node: 8 GPUs with MIG on, 7 1g.10gb devices each (56 MIG devices),
 * one pod bound per MIG device, plus `--pods` extra bindings on devices
 * the node lacks (to measure matching over a long binding list).  No
 * kubelet is needed: the plugin serves its socket whether or not it is
 * registered.  bench/README.md, "carve-bench-dp".
 *
 * Usage: carve-bench-dp [--calls N] [--pods N] [--json FILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deviceplugin/v1beta1/api.pb-c.h"
#include "dp.h"
#include "dpgrpc.h"

#define NGPU 8
#define NMIG 7

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static char uuids[NGPU][64], miguuids[NGPU][NMIG][64];
	static struct nd_mig migs[NGPU][NMIG];
	struct nd_gpu g[NGPU];
	struct nd_snapshot snap = {.driver_version = "550.54.15", .ngpus = NGPU, .gpus = g};
	struct nd_dp_opts o = {.domain = "carve.dev", .cdi = true};
	struct nd_binding *b;
	struct carve_error err;
	struct dpg_client *c;
	struct nd_dp *dp;
	char dir[] = "/tmp/carve-bench-dp-XXXXXX", sock[256];
	const char *json = NULL;
	int calls = 20000, extra = 1000, i, k, nb, fails = 0;
	double *lat, sum = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pods") && i + 1 < argc)
			extra = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else {
			fprintf(stderr, "usage: carve-bench-dp [--calls N] [--pods N] [--json FILE]\n");
			return 2;
		}
	}
	if (calls < 1 || extra < 0) {
		fprintf(stderr, "carve-bench-dp: --calls must be >= 1, --pods >= 0\n");
		return 2;
	}
	if (!mkdtemp(dir)) {
		perror("carve-bench-dp: mkdtemp");
		return 1;
	}
	memset(g, 0, sizeof(g));
	nb = NGPU * NMIG + extra;
	b = calloc((size_t)nb, sizeof(*b));
	lat = calloc((size_t)calls, sizeof(*lat));
	if (!b || !lat)
		return 1;
	for (i = 0; i < NGPU; i++) {
		snprintf(uuids[i], sizeof(uuids[i]), "GPU-%08d-0000-0000-0000-000000000000", i);
		g[i].index = (unsigned)i;
		g[i].uuid = uuids[i];
		g[i].numa_node = i / 4;
		g[i].mig_current = 1;
		g[i].healthy = true;
		g[i].nmig = NMIG;
		g[i].mig = migs[i];
		for (k = 0; k < NMIG; k++) {
			snprintf(miguuids[i][k], sizeof(miguuids[i][k]),
				 "MIG-%08d-%04d-0000-0000-000000000000", i, k);
			migs[i][k].uuid = miguuids[i][k];
			migs[i][k].profile = "1g.10gb";
			migs[i][k].start = (unsigned)k;
			migs[i][k].size = 1;
			b[i * NMIG + k].ndev = 1;
			b[i * NMIG + k].dev[0] = (struct carve_devref){
				.gpu = i, .mig_start = k, .replica = -1};
			snprintf(b[i * NMIG + k].dev[0].mig_profile, 32, "1g.10gb");
		}
	}
	for (i = 0; i < nb; i++) {
		char *name = malloc(32);

		if (!name)
			return 1;
		snprintf(name, 32, "pod-%d", i);
		b[i].ns = "bench";
		b[i].name = name;
		b[i].uid = name;
		b[i].created_ns = i;
		if (i >= NGPU * NMIG) {        /* bound to GPUs this node lacks */
			b[i].ndev = 1;
			b[i].dev[0] = (struct carve_devref){.gpu = 40 + i % 20, .mig_start = -1,
							    .replica = -1};
		}
	}
	o.dir = dir;
	dp = nd_dp_start(&o, &snap, &err);
	if (!dp) {
		fprintf(stderr, "carve-bench-dp: %s\n", err.text);
		return 1;
	}
	nd_dp_set_bindings(dp, b, (size_t)nb);
	snprintf(sock, sizeof(sock), "%s/carve-mig-1g.10gb.sock", dir);
	if (dpg_client_open(sock, &c, &err)) {
		fprintf(stderr, "carve-bench-dp: %s\n", err.text);
		return 1;
	}
	for (i = -200; i < calls; i++) {       /* 200 warm-up calls */
		int gi = (i + 200) % (NGPU * NMIG);
		char *id = miguuids[gi / NMIG][gi % NMIG];
		V1beta1__AllocateRequest r = V1BETA1__ALLOCATE_REQUEST__INIT;
		V1beta1__ContainerAllocateRequest cr = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
		V1beta1__ContainerAllocateRequest *crp = &cr;
		V1beta1__AllocateResponse *resp;
		uint8_t buf[256], *out = NULL;
		size_t n, outn = 0;
		double t0, t1;

		cr.n_devices_ids = 1;
		cr.devices_ids = &id;
		r.n_container_requests = 1;
		r.container_requests = &crp;
		t0 = now_us();
		n = v1beta1__allocate_request__pack(&r, buf);
		if (dpg_client_call(c, "/v1beta1.DevicePlugin/Allocate", buf, n, 5000, &out, &outn,
				    &err)) {
			fails++;
			if (fails == 1)
				fprintf(stderr, "carve-bench-dp: %s\n", err.text);
			continue;
		}
		resp = v1beta1__allocate_response__unpack(NULL, outn, out);
		t1 = now_us();
		if (!resp || resp->n_container_responses != 1)
			fails++;
		if (resp)
			v1beta1__allocate_response__free_unpacked(resp, NULL);
		free(out);
		if (i >= 0) {
			lat[i] = t1 - t0;
			sum += lat[i];
		}
	}
	dpg_client_close(c);
	nd_dp_stop(dp);
	rmdir(dir);
	qsort(lat, (size_t)calls, sizeof(*lat), cmp_double);
	printf("carve-bench-dp: Allocate through gRPC on a unix socket\n");
	printf("  node: %d GPUs x %d MIG 1g.10gb, %d bindings (%d on other GPUs)\n", NGPU, NMIG,
	       nb, extra);
	printf("  calls: %d, failed: %d\n", calls, fails);
	printf("  latency us: mean %.1f  p50 %.1f  p99 %.1f  max %.1f  (target <= 1000)\n",
	       sum / calls, lat[calls / 2], lat[(size_t)(calls * 0.99)], lat[calls - 1]);
	if (json) {
		FILE *f = fopen(json, "w");

		if (!f) {
			perror(json);
			return 1;
		}
		fprintf(f, "{\"calls\": %d, \"failed\": %d, \"bindings\": %d, \"mean_us\": %.1f, "
			"\"p50_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f}\n", calls, fails, nb,
			sum / calls, lat[calls / 2], lat[(size_t)(calls * 0.99)], lat[calls - 1]);
		fclose(f);
	}
	for (i = 0; i < nb; i++)
		free((char *)b[i].name);
	free(b);
	free(lat);
	return fails ? 1 : 0;
}
