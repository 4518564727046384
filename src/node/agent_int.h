/*
 * agent_int.h - the node agent's own parts over the snapshot (node_int.h),
 * private to src/node:
 *   labels.c      GPU Feature Discovery's node labels from a snapshot
 *   exporter.c    dcgm-exporter's metrics (text format 0.0.4) from a snapshot
 *   agent_pods.c  pods bound here -> device-plugin bindings and refusals
 *   agent_mig.c   the Node's carve.dev/mig-layout -> what may be applied
 *   agent.c       the loop (carve node)
 * Every function here is pure (no I/O, no clock) except the loop's; their
 * outputs are owned by the caller and freed as each says.
 */
#ifndef CARVE_NODE_AGENT_INT_H
#define CARVE_NODE_AGENT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "carve/carve.h"
#include "node_int.h"

/* ---- labels (labels.c, docs/node.md "Labels") ---- */

struct nd_label_opts {
	const char *mig_strategy; /* "none" (NULL), "single" or "mixed" */
	const char *machine;      /* DMI product name, NULL: no gpu.machine */
	int replicas;             /* time-slicing replicas per GPU; <= 1: none */
	int64_t timestamp;        /* unix seconds for gfd.timestamp; 0: left out */
};

/*
 * Appends the labels GFD would put on a node with snapshot s to out
 * (sorted by key).  A node without GPUs gets no labels.  Returns 0;
 * CARVE_EINVAL for an unknown strategy or a driver version that is not
 * X.Y[.Z] (err names it); CARVE_ENOMEM.
 */
int nd_labels(const struct nd_snapshot *s, const struct nd_label_opts *o, struct nd_kvs *out,
	      struct carve_error *err);
/* The labels as Node Feature Discovery's features.d file: "key=value\n"
 * per label.  A new string (free) or NULL when out of memory. */
char *nd_labels_features(const struct nd_kvs *l);
/* A Node merge patch body setting labels l and removing (null) the keys of
 * old not in l.  A new string (free) or NULL when out of memory. */
char *nd_labels_patch(const struct nd_kvs *l, const struct nd_kvs *old);

/* ---- metrics (exporter.c, docs/node.md "Metrics") ---- */

/* What carve knows about the pod holding a device (agent_pods.c). */
struct nd_owner {
	unsigned gpu;          /* GPU index */
	int gi_id;             /* the MIG device's GPU instance, -1 whole GPU */
	const char *ns, *pod, *container; /* container "" when unknown */
	const char *queue, *team;         /* "" when unknown */
	int64_t mem_mib;       /* a fraction's memory cap, 0 none */
	const unsigned *pids;  /* the pod's processes on the GPU (their
				* memory is the tenant's use); may be NULL */
	size_t npids;
	const char *uid;       /* the pod's uid, NULL unknown */
};

struct nd_export_opts {
	const char *hostname;
	const struct nd_owner *owners; /* borrowed */
	size_t nowners;
};

/*
 * Renders the snapshot as dcgm-exporter would, plus carve_* series, in
 * the Prometheus text format 0.0.4.  A new NUL-terminated string (carve_free),
 * its length in *len, or NULL when out of memory.
 */
char *nd_export(const struct nd_snapshot *s, const struct nd_export_opts *o, size_t *len);

/* ---- pods bound here (agent_pods.c, docs/node.md "Pods and events") ---- */

#include <jansson.h>

#include "dp.h"

/* Why a pod's or a node's request was refused: an Event's reason
 * ("CarveDevicesInvalid") and note. */
struct nd_refusal {
	char reason[40];
	char note[512];
};

/*
 * The binding of pod (a v1 Pod as the API returns it) when carve bound it
 * to node `node` with a carve.dev/devices annotation and it has not
 * finished.  b's strings point into pod (borrowed while pod lives).
 * Returns 1 with *b filled; 0 when the pod is none of this node's carve
 * pods; CARVE_EINVAL with *r filled when the annotation does not parse
 * (CarveDevicesInvalid) or names a device snapshot s lacks: a GPU index,
 * a UUID, a MIG device (CarveDeviceUnknown).
 */
int nd_pod_binding(const json_t *pod, const char *node, const struct nd_snapshot *s,
		   struct nd_binding *b, struct nd_refusal *r);

/*
 * The owners (exporter.c) of binding b's devices: one per device entry,
 * at most max written into out, with the pod's queue (its
 * kueue.x-k8s.io/queue-name label) and team (its carve.dev/team label,
 * else its namespace), strings borrowed from pod.  Returns how many.
 */
size_t nd_pod_owners(const json_t *pod, const struct nd_binding *b, const struct nd_snapshot *s,
		     struct nd_owner *out, size_t max);

/*
 * The pod uid in the text of a /proc/<pid>/cgroup file: the kubelet's
 * "pod<uid>" path element, with the cgroupfs driver's '-' or the systemd
 * driver's '_' ("kubepods-burstable-pod1234_abcd.slice").  Writes it with
 * '-' into uid (37 bytes) and returns true, false when there is none.
 */
bool nd_cgroup_pod_uid(const char *text, char uid[37]);

/* ---- MIG layouts wanted (agent_mig.c, docs/node.md "MIG layouts") ---- */

enum nd_mig_action {
	ND_MIG_SAME,    /* the GPU already holds the layout */
	ND_MIG_APPLY,   /* change it (nd_mig_apply) */
	ND_MIG_BUSY,    /* a changing instance runs a process or serves a pod */
	ND_MIG_INVALID  /* not a layout this GPU can hold */
};

struct nd_mig_step {
	enum nd_mig_action action;
	struct nd_mig_layout want;
	char why[400];  /* BUSY, INVALID: the reason, naming GPU and instance */
};

struct nd_mig_plan {
	size_t n;
	struct nd_mig_step step[64];
};

/*
 * What to do for each GPU entry of the carve.dev/mig-layout annotation
 * `text`, given the snapshot and the pods bound to this node.  Returns 0
 * with *out filled (one step per GPU entry, in the annotation's order),
 * or CARVE_EPARSE when the annotation does not parse (err says where).
 */
int nd_mig_plan(const char *text, const struct nd_snapshot *s, const struct nd_binding *b,
		size_t nb, struct nd_mig_plan *out, struct carve_error *err);


struct carve_mf_migconfig;

/*
 * The carve.dev/mig-layout text that mig-parted config c asks of this
 * node's GPUs: for each entry, the GPUs it selects (devices: all, a list of
 * indexes, or device-filter PCI ids matched against each GPU's model) get
 * the layout of its mig-devices counts (carve_mig_layout_from_counts).
 * Returns the text's length; CARVE_EINVAL when an entry selects a GPU whose
 * model is not in the MIG table, asks for mig-enabled: false on a GPU with
 * MIG on (carve never changes MIG mode), or counts no layout holds (err
 * names the entry and GPU); CARVE_ERANGE when buf is too small.
 */
int nd_migparted_layout(const struct carve_mf_migconfig *c, const struct nd_snapshot *s,
			char *buf, size_t size, struct carve_error *err);

/* ---- the loop (agent.c) ---- */

struct nd_agent_opts {
	const char *node_name;     /* required unless standalone */
	const char *kubeconfig, *context; /* NULL: client-go's rules */
	const char *nvml_lib;      /* NULL: libnvidia-ml.so.1 */
	const char *metrics_listen;/* ":9400"; NULL or "" : no server */
	const char *dp_dir;        /* NULL or "": no device plugin */
	const char *features_file; /* NULL: labels patched on the Node */
	const char *mig_strategy;  /* GFD's: none, single, mixed */
	const char *machine_file;  /* DMI product name file */
	const char *domain;        /* device-plugin resource prefix */
	int interval_s;            /* snapshot period */
	int shares;                /* shares per shared GPU */
	bool cdi, standalone, verbose;
	int max_seconds;           /* 0: until SIGTERM/SIGINT */
};

/*
 * Runs the agent until SIGTERM/SIGINT (or max_seconds): NVML snapshots
 * every interval, labels, the device plugin with the pods bound here,
 * MIG layouts, metrics.  Returns 0 when stopped on request, or a carve
 * error code with err set when it cannot start (no NVML, no cluster
 * configuration, a port in use, a device-plugin directory it cannot use).
 */
int nd_agent_run(const struct nd_agent_opts *o, struct carve_error *err);

#endif
