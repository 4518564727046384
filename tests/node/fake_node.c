/*
 * fake_node.c - carve-node-fake: `carve node` (src/cli/cmd_node.c and the
 * loop of src/node/agent.c, unchanged) over test doubles of NVML and the
 * device plugin, so the loop runs end to end against the fake API server
 * (tests/node/agent_fake.sh) on machines without a GPU and without the
 * NVML and device-plugin code linked in.
 *
 *   carve-node-fake node --nvml-lib snap:NAME ...   same flags as carve node
 *
 * NVML double: `--nvml-lib snap:h100|a100|t4|a100x56` opens the node of
 * tests/node/snapshots.h of that name; any other path fails as a missing
 * driver does.  nd_mig_apply refuses a layout when an instance it would
 * destroy runs a process (CARVE_EBUSY) and otherwise makes the GPU hold
 * exactly the wanted instances (new GPU instance ids), so later snapshots
 * show the change.  Device-plugin double: records the bindings it is
 * given and prints their count on stderr.  One lock around the state.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dp.h"
#include "snapshots.h"

struct nd_nvml {
	pthread_mutex_t mu;
	struct nd_snapshot snap;   /* the node as it is now */
};

static void copy_snap(const struct nd_snapshot *in, struct nd_snapshot *out)
{
	size_t i, j;

	*out = *in;
	out->driver_version = strdup(in->driver_version);
	out->gpus = calloc(in->ngpus ? in->ngpus : 1, sizeof(*out->gpus));
	for (i = 0; i < in->ngpus; i++) {
		struct nd_gpu *g = &out->gpus[i];

		*g = in->gpus[i];
		g->uuid = strdup(g->uuid);
		g->name = strdup(g->name);
		g->pci_bus_id = strdup(g->pci_bus_id);
		g->mig = calloc(g->nmig ? g->nmig : 1, sizeof(*g->mig));
		for (j = 0; j < g->nmig; j++) {
			g->mig[j] = in->gpus[i].mig[j];
			g->mig[j].uuid = strdup(g->mig[j].uuid);
			g->mig[j].profile = strdup(g->mig[j].profile);
		}
		g->proc = calloc(g->nproc ? g->nproc : 1, sizeof(*g->proc));
		if (g->nproc)
			memcpy(g->proc, in->gpus[i].proc, g->nproc * sizeof(*g->proc));
	}
}

void nd_snapshot_free(struct nd_snapshot *s)
{
	snap_free(s);
}

int nd_nvml_open(const char *path, struct nd_nvml **out, struct carve_error *err)
{
	const char *w = path && !strncmp(path, "snap:", 5) ? path + 5 : NULL;
	struct nd_nvml *n;

	if (!w || (strcmp(w, "h100") && strcmp(w, "a100") && strcmp(w, "t4") &&
		   strcmp(w, "a100x56")))
		return carve_errorf(err, CARVE_ENOTFOUND,
				    "NVML not found: %s: no such test node; is the NVIDIA driver installed?",
				    path ? path : "libnvidia-ml.so.1");
	if (!(n = calloc(1, sizeof(*n))))
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	pthread_mutex_init(&n->mu, NULL);
	if (!strcmp(w, "h100"))
		snap_h100x8(&n->snap);
	else if (!strcmp(w, "a100"))
		snap_a100_mixed(&n->snap);
	else if (!strcmp(w, "a100x56"))
		snap_a100_56(&n->snap);
	else
		snap_t4(&n->snap);
	*out = n;
	return 0;
}

void nd_nvml_close(struct nd_nvml *n)
{
	if (!n)
		return;
	snap_free(&n->snap);
	pthread_mutex_destroy(&n->mu);
	free(n);
}

int nd_nvml_snapshot(struct nd_nvml *n, struct nd_snapshot *out, struct carve_error *err)
{
	(void)err;
	pthread_mutex_lock(&n->mu);
	copy_snap(&n->snap, out);
	pthread_mutex_unlock(&n->mu);
	return 0;
}

int nd_nvml_poll_events(struct nd_nvml *n, int timeout_ms, struct carve_error *err)
{
	(void)n;
	(void)timeout_ms;
	(void)err;
	return 0;
}

int nd_mig_apply(struct nd_nvml *n, const struct nd_mig_layout *want, struct carve_error *err)
{
	struct nd_gpu *g = NULL;
	size_t i, j, k;
	unsigned next_gi = 1;
	int rc = 0;

	pthread_mutex_lock(&n->mu);
	for (i = 0; i < n->snap.ngpus; i++)
		if (n->snap.gpus[i].index == want->gpu)
			g = &n->snap.gpus[i];
	if (!g || g->mig_current != 1) {
		rc = carve_errorf(err, CARVE_EINVAL, "GPU %u: no such GPU or MIG not enabled",
				  want->gpu);
		goto out;
	}
	for (i = 0; i < g->nmig; i++) {
		bool kept = false;

		for (j = 0; j < want->n; j++)
			kept |= want->v[j].start == g->mig[i].start &&
				!strcmp(want->v[j].profile, g->mig[i].profile);
		for (k = 0; !kept && k < g->nproc; k++)
			if (g->proc[k].gi_id == (int)g->mig[i].gi_id) {
				rc = carve_errorf(err, CARVE_EBUSY, "GPU %u: %s@%u runs process %u",
						  g->index, g->mig[i].profile, g->mig[i].start,
						  g->proc[k].pid);
				goto out;
			}
		if (g->mig[i].gi_id >= next_gi)
			next_gi = g->mig[i].gi_id + 1;
	}
	for (i = 0; i < g->nmig; i++) {
		free(g->mig[i].uuid);
		free(g->mig[i].profile);
	}
	g->nmig = 0;
	for (j = 0; j < want->n; j++) {
		unsigned slices = (unsigned)atoi(want->v[j].profile);

		snap_mig(g, want->v[j].profile, next_gi++, want->v[j].start, slices, 14 * slices,
			 9856LL * slices);
	}
out:
	pthread_mutex_unlock(&n->mu);
	return rc;
}

struct nd_dp {
	size_t nbindings;
};

struct nd_dp *nd_dp_start(const struct nd_dp_opts *o, const struct nd_snapshot *snap,
			  struct carve_error *err)
{
	(void)o;
	(void)snap;
	(void)err;
	return calloc(1, sizeof(struct nd_dp));
}

void nd_dp_update(struct nd_dp *dp, const struct nd_snapshot *snap)
{
	(void)dp;
	(void)snap;
}

void nd_dp_set_bindings(struct nd_dp *dp, const struct nd_binding *b, size_t n)
{
	(void)b;
	if (n != dp->nbindings)
		fprintf(stderr, "fake device plugin: %zu binding(s)\n", n);
	dp->nbindings = n;
}

void nd_dp_stop(struct nd_dp *dp)
{
	free(dp);
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "node")) {
		fprintf(stderr, "usage: carve-node-fake node [carve node's flags]\n");
		return CARVE_EXIT_USAGE;
	}
	return cmd_node(argc - 1, argv + 1);
}
