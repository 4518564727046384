/*
 * dp_harness.c - runs the node agent's device plugin (src/node/dp.h) over
 * a node built here, for tests/node/dp_kubelet_test.py, which plays the
 * kubelet.  No NVML: the snapshot below stands for three GPUs:
 *   0  GPU-00000000-0000-0000-0000-000000000000, NUMA 0, whole
 *   1  GPU-11111111-..., NUMA 1, MIG on: 3g.40gb@0, 1g.10gb@4, 1g.10gb@5,
 *      1g.10gb+me@6 (UUIDs MIG-1-3g-0, MIG-1-1g-4, MIG-1-1g-5, MIG-1-1gme-6)
 *   2  GPU-22222222-..., NUMA unknown, whole
 *
 * Usage: dp_harness DIR [--shares N] [--cdi]
 * Commands on stdin, one a line, each answered "ok" or "error: ..." on
 * stdout:
 *   bind NS NAME UID CREATED ANNOTATION   add a pod bound here
 *   unhealthy INDEX | healthy INDEX       GPU health, as an Xid would
 *   migoff                                MIG disabled on GPU 1 (its MIG
 *                                         devices gone, the GPU whole)
 *   quit
 * A refused Allocate prints "refused NS/NAME: REASON" ("-/-" without a
 * near pod).  The plugin logs on stderr.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/devices.h"
#include "dp.h"

#define NGPU 3

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

static void on_refuse(void *arg, const char *ns, const char *name, const char *reason)
{
	pthread_mutex_lock(&out_mu);
	printf("refused %s/%s: %s\n", ns ? ns : "-", name ? name : "-", reason);
	fflush(stdout);
	pthread_mutex_unlock(&out_mu);
}

static void answer(const char *fmt, const char *arg)
{
	pthread_mutex_lock(&out_mu);
	printf(fmt, arg);
	fflush(stdout);
	pthread_mutex_unlock(&out_mu);
}

static struct nd_mig migs[4] = {
	{.uuid = "MIG-1-3g-0", .profile = "3g.40gb", .start = 0, .size = 4},
	{.uuid = "MIG-1-1g-4", .profile = "1g.10gb", .start = 4, .size = 1},
	{.uuid = "MIG-1-1g-5", .profile = "1g.10gb", .start = 5, .size = 1},
	{.uuid = "MIG-1-1gme-6", .profile = "1g.10gb+me", .start = 6, .size = 1},
};

static void node(struct nd_gpu *g, struct nd_snapshot *s)
{
	static char *uuids[NGPU] = {"GPU-00000000-0000-0000-0000-000000000000",
				    "GPU-11111111-1111-1111-1111-111111111111",
				    "GPU-22222222-2222-2222-2222-222222222222"};
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < NGPU; i++) {
		memset(&g[i], 0, sizeof(g[i]));
		g[i].index = (unsigned)i;
		g[i].uuid = uuids[i];
		g[i].name = "NVIDIA A100-SXM4-80GB";
		g[i].numa_node = i == 2 ? -1 : i;
		g[i].mig_current = i == 1 ? 1 : 0;
		g[i].healthy = true;
	}
	g[1].nmig = 4;
	g[1].mig = migs;
	s->driver_version = "550.54.15";
	s->ngpus = NGPU;
	s->gpus = g;
}

int main(int argc, char **argv)
{
	struct nd_dp_opts o = {.domain = "carve.dev", .on_refuse = on_refuse};
	struct nd_binding *b = NULL;
	size_t nb = 0;
	struct nd_gpu g[NGPU];
	struct nd_snapshot snap;
	struct carve_error err;
	struct nd_dp *dp;
	char line[4096];
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: dp_harness DIR [--shares N] [--cdi]\n");
		return 2;
	}
	o.dir = argv[1];
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--shares") && i + 1 < argc)
			o.shares = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cdi"))
			o.cdi = true;
		else {
			fprintf(stderr, "dp_harness: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	node(g, &snap);
	dp = nd_dp_start(&o, &snap, &err);
	if (!dp) {
		fprintf(stderr, "dp_harness: %s\n", err.text);
		return 1;
	}
	answer("%s\n", "ready");
	while (fgets(line, sizeof(line), stdin)) {
		char ns[256], name[256], uid[256], ann[2048];
		long long created;
		int idx;

		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "quit"))
			break;
		if (sscanf(line, "bind %255s %255s %255s %lld %2047s", ns, name, uid, &created,
			   ann) == 5) {
			struct nd_binding *nbv = realloc(b, (nb + 1) * sizeof(*b));
			int n;

			if (!nbv)
				return 1;
			b = nbv;
			memset(&b[nb], 0, sizeof(b[nb]));
			n = carve_devices_parse(ann, b[nb].dev, CARVE_DEVREF_MAX, &err);
			if (n < 0) {
				answer("error: %s\n", err.text);
				continue;
			}
			b[nb].ndev = n;
			b[nb].ns = strdup(ns);
			b[nb].name = strdup(name);
			b[nb].uid = strdup(uid);
			b[nb].created_ns = created;
			nb++;
			nd_dp_set_bindings(dp, b, nb);
			answer("%s\n", "ok");
		} else if (sscanf(line, "unhealthy %d", &idx) == 1 && idx >= 0 && idx < NGPU) {
			g[idx].healthy = false;
			nd_dp_update(dp, &snap);
			answer("%s\n", "ok");
		} else if (sscanf(line, "healthy %d", &idx) == 1 && idx >= 0 && idx < NGPU) {
			g[idx].healthy = true;
			nd_dp_update(dp, &snap);
			answer("%s\n", "ok");
		} else if (!strcmp(line, "migoff")) {
			g[1].mig_current = 0;
			g[1].nmig = 0;
			g[1].mig = NULL;
			nd_dp_update(dp, &snap);
			answer("%s\n", "ok");
		} else {
			answer("error: unknown command \"%s\"\n", line);
		}
	}
	nd_dp_stop(dp);
	for (i = 0; i < (int)nb; i++) {
		free((char *)b[i].ns);
		free((char *)b[i].name);
		free((char *)b[i].uid);
	}
	free(b);
	return 0;
}
