/*
 * dp.h - the kubelet device plugin (v1beta1) of the node agent, private
 * to src/node (prefix nd_dp_), docs/node.md "Device plugin".
 *
 * One plugin per resource name carve serves on this node (whole GPUs,
 * one per MIG profile present, shared GPUs), each on its own unix socket
 * in the kubelet's device-plugin directory, registered with the kubelet's
 * Registration service there and registered again whenever the kubelet
 * restarts (its socket is recreated).  Device IDs: a GPU's UUID, a MIG
 * device's UUID, "<GPU UUID>::<n>" for the n-th share of a shared GPU.
 *
 * Allocate is not told which pod it serves: the plugin matches each
 * container request to a pod bound to this node whose carve.dev/devices
 * annotation names those devices (nd_dp_set_bindings), returns exactly
 * them, and refuses, with the reason given to on_refuse, a request it
 * cannot match rather than guess.  gRPC (the C core) stays behind
 * dpgrpc.c; messages are protobuf-c code generated from proto/.
 * Names, IDs, matching rules and what Allocate answers:
 * docs/internals/device-plugin.md.
 *
 * Threads: the plugin serves from its own threads; nd_dp_update and
 * nd_dp_set_bindings may be called from any thread (they copy what they
 * are given).
 */
#ifndef CARVE_NODE_DP_H
#define CARVE_NODE_DP_H

#include <stdbool.h>
#include <stddef.h>

#include "carve/carve.h"
#include "carve/devices.h"
#include "node_int.h"

/* A pod bound to this node by carve, with the devices it was given. */
struct nd_binding {
	const char *ns, *name, *uid;
	int ndev;
	struct carve_devref dev[CARVE_DEVREF_MAX]; /* parsed carve.dev/devices */
	int64_t created_ns;    /* for ordering candidates: oldest first */
};

struct nd_dp_opts {
	const char *dir;       /* the kubelet's device-plugin directory
				* (/var/lib/kubelet/device-plugins); holds
				* kubelet.sock */
	const char *domain;    /* resource name prefix: "carve.dev" serves
				* carve.dev/gpu, carve.dev/mig-<profile>,
				* carve.dev/gpu.shared */
	int shares;            /* shares advertised per shared GPU (0: none served) */
	bool cdi;              /* answer CDI device names (nvidia.com/gpu=<uuid>)
				* besides NVIDIA_VISIBLE_DEVICES */
	/* Told when a request is refused: the pod when one was a near match
	 * (else ns and name NULL) and the reason, for an Event.  May be NULL;
	 * called from a plugin thread. */
	void (*on_refuse)(void *arg, const char *ns, const char *name, const char *reason);
	void *arg;
};

struct nd_dp;

/*
 * Creates the plugins for the devices of snap and starts serving and
 * registering (registration is retried in the background while the
 * kubelet is not there).  Returns NULL with err set when the directory
 * cannot be used or out of memory.
 */
struct nd_dp *nd_dp_start(const struct nd_dp_opts *o, const struct nd_snapshot *snap,
			  struct carve_error *err);
/* New devices or health: ListAndWatch streams send the new list; plugins
 * for resource names that appeared or vanished are started or stopped. */
void nd_dp_update(struct nd_dp *dp, const struct nd_snapshot *snap);
/* The pods bound to this node now (replaces the previous set). */
void nd_dp_set_bindings(struct nd_dp *dp, const struct nd_binding *b, size_t n);
/* Stops serving, removes its sockets, frees. */
void nd_dp_stop(struct nd_dp *dp);

#endif
