/*
 * agent_pods.c - the pods bound to this node, read as the device plugin
 * and the exporter need them (agent_int.h): a pod's carve.dev/devices
 * annotation (include/carve/devices.h) checked against the node's
 * snapshot, so a binding the node cannot honour becomes an Event on the
 * pod (CarveDevicesInvalid, CarveDeviceUnknown) instead of a guess.
 *
 * Pure: reads the pod's JSON and the snapshot, writes into the caller's
 * structs; strings stay borrowed from the pod.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent_int.h"
#include "carve/kube.h"

static const char *str_at(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int refuse(struct nd_refusal *r, const char *reason, const char *fmt, const char *a,
		  const char *b)
{
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
	snprintf(r->note, sizeof(r->note), fmt, a, b);
	return CARVE_EINVAL;
}

/* creationTimestamp ("2026-12-04T10:00:00Z") in ns, 0 when absent or bad. */
static int64_t created_ns(const json_t *meta)
{
	const char *t = str_at(meta, "creationTimestamp");
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!t || sscanf(t, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			 &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000000000LL;
}

/* The MIG device of g at profile@start, or NULL. */
static const struct nd_mig *mig_at(const struct nd_gpu *g, const char *profile, int start)
{
	size_t i;

	for (i = 0; i < g->nmig; i++)
		if ((int)g->mig[i].start == start && !strcmp(g->mig[i].profile, profile))
			return &g->mig[i];
	return NULL;
}

/* Checks one entry against the snapshot; fills r when it does not hold. */
static int check_dev(const struct carve_devref *d, int i, const struct nd_snapshot *s,
		     struct nd_refusal *r)
{
	const struct nd_gpu *g = nd_gpu_by_index(s, d->gpu);
	const struct nd_mig *m = NULL;
	char what[64], have[160];

	snprintf(what, sizeof(what), "entry %d: GPU %d", i + 1, d->gpu);
	if (!g) {
		snprintf(have, sizeof(have), "the node has %zu GPU(s)", s->ngpus);
		return refuse(r, "CarveDeviceUnknown", "carve.dev/devices %s: no such GPU (%s)",
			      what, have);
	}
	if (d->mig_profile[0]) {
		if (g->mig_current != 1)
			return refuse(r, "CarveDeviceUnknown",
				      "carve.dev/devices %s: MIG is not enabled on it%s", what, "");
		if (!(m = mig_at(g, d->mig_profile, d->mig_start))) {
			snprintf(have, sizeof(have), "%s@%d", d->mig_profile, d->mig_start);
			return refuse(r, "CarveDeviceUnknown",
				      "carve.dev/devices %s: no MIG device %s on it", what, have);
		}
	} else if (g->mig_current == 1) {
		return refuse(r, "CarveDeviceUnknown",
			      "carve.dev/devices %s: MIG is enabled on it; the entry names no MIG "
			      "device%s", what, "");
	}
	if (d->uuid[0] && strcmp(d->uuid, m ? m->uuid : g->uuid))
		return refuse(r, "CarveDeviceUnknown",
			      "carve.dev/devices %s: UUID %s is not this node's", what, d->uuid);
	return 0;
}

int nd_pod_binding(const json_t *pod, const char *node, const struct nd_snapshot *s,
		   struct nd_binding *b, struct nd_refusal *r)
{
	const json_t *meta = json_object_get(pod, "metadata");
	const char *on = str_at(json_object_get(pod, "spec"), "nodeName");
	const char *phase = str_at(json_object_get(pod, "status"), "phase");
	const char *ann = str_at(json_object_get(meta, "annotations"), CARVE_DEVICES_ANNOTATION);
	struct carve_error err = {0, ""};
	int n, i, rc;

	if (!on || strcmp(on, node) || !ann)
		return 0;
	if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
		return 0;
	memset(b, 0, sizeof(*b));
	b->ns = carve_kube_ns(pod);
	b->name = carve_kube_name(pod);
	b->uid = carve_kube_uid(pod);
	b->created_ns = created_ns(meta);
	n = carve_devices_parse(ann, b->dev, CARVE_DEVREF_MAX, &err);
	if (n < 0)
		return refuse(r, "CarveDevicesInvalid", "carve.dev/devices '%.200s': %s", ann,
			      err.text);
	for (i = 0; i < n; i++)
		if ((rc = check_dev(&b->dev[i], i, s, r)))
			return rc;
	b->ndev = n;
	return 1;
}

size_t nd_pod_owners(const json_t *pod, const struct nd_binding *b, const struct nd_snapshot *s,
		     struct nd_owner *out, size_t max)
{
	const json_t *labels = json_object_get(json_object_get(pod, "metadata"), "labels");
	const json_t *ctrs = json_object_get(json_object_get(pod, "spec"), "containers");
	const char *queue = str_at(labels, "kueue.x-k8s.io/queue-name");
	const char *team = str_at(labels, "carve.dev/team");
	const char *ctr = json_array_size(ctrs) == 1 ? str_at(json_array_get(ctrs, 0), "name") : NULL;
	size_t n = 0;
	int i;

	for (i = 0; i < b->ndev && n < max; i++) {
		const struct carve_devref *d = &b->dev[i];
		const struct nd_gpu *g = nd_gpu_by_index(s, d->gpu);
		const struct nd_mig *m = g && d->mig_profile[0] ? mig_at(g, d->mig_profile,
									 d->mig_start) : NULL;
		struct nd_owner *o = &out[n++];

		memset(o, 0, sizeof(*o));
		o->gpu = (unsigned)d->gpu;
		o->gi_id = m ? (int)m->gi_id : -1;
		o->ns = b->ns;
		o->pod = b->name;
		o->container = ctr ? ctr : "";
		o->queue = queue ? queue : "";
		o->team = team ? team : b->ns;
		o->mem_mib = d->milli ? d->mem_mib : 0;
		o->uid = b->uid;
	}
	return n;
}

bool nd_cgroup_pod_uid(const char *text, char uid[37])
{
	const char *p;

	for (p = strstr(text, "pod"); p; p = strstr(p + 1, "pod")) {
		const char *q = p + 3;
		int i;

		for (i = 0; i < 36; i++) {
			char c = q[i];
			bool dash = i == 8 || i == 13 || i == 18 || i == 23;

			if (dash ? (c != '-' && c != '_')
				 : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
				break;
			uid[i] = dash ? '-' : c;
		}
		if (i == 36 && (q[36] == '/' || q[36] == '.' || q[36] == '\n' || !q[36])) {
			uid[36] = 0;
			return true;
		}
	}
	return false;
}
