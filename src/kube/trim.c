/*
 * trim.c - kube_trim (trim.h): keeps of a stored object only what carve
 * reads, so the scheduler holds 50,000 pods in little memory.  The lists
 * of fields dropped follow the pod loader (src/io/load_pod.c), which
 * accepts them unread; the PodScheduled condition stays because act.c
 * compares the condition it would write with the one the pod has.
 */
#include <string.h>

#include "trim.h"

static const char *const container_drop[] = {
	"env", "envFrom", "command", "args", "workingDir", "volumeMounts", "volumeDevices",
	"imagePullPolicy", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
	"terminationMessagePath", "terminationMessagePolicy", NULL,
};

static void trim_containers(json_t *list)
{
	json_t *c;
	size_t i, k;

	json_array_foreach(list, i, c)
		for (k = 0; container_drop[k]; k++)
			json_object_del(c, container_drop[k]);
}

static void trim_status(json_t *pod)
{
	json_t *st = json_object_get(pod, "status"), *keep, *conds, *c, *kc = NULL;
	size_t i;

	if (!json_is_object(st))
		return;
	keep = json_object();
	if (!keep)
		return;
	if (json_object_get(st, "phase"))
		json_object_set(keep, "phase", json_object_get(st, "phase"));
	if (json_object_get(st, "nominatedNodeName"))
		json_object_set(keep, "nominatedNodeName", json_object_get(st, "nominatedNodeName"));
	conds = json_object_get(st, "conditions");
	json_array_foreach(conds, i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t && !strcmp(t, "PodScheduled")) {
			kc = json_array();
			if (kc)
				json_array_append(kc, c);
			break;
		}
	}
	if (kc)
		json_object_set_new(keep, "conditions", kc);
	json_object_set_new(pod, "status", keep);
}

void kube_trim(json_t *obj, bool pod)
{
	json_t *spec;

	if (!json_is_object(obj))
		return;
	json_object_del(json_object_get(obj, "metadata"), "managedFields");
	if (!pod)
		return;
	spec = json_object_get(obj, "spec");
	if (json_is_object(spec)) {
		trim_containers(json_object_get(spec, "containers"));
		trim_containers(json_object_get(spec, "initContainers"));
		json_object_del(spec, "volumes");
		json_object_del(spec, "imagePullSecrets");
	}
	trim_status(obj);
}

bool kube_nvidia_configmap(const json_t *cm)
{
	const char *k, *v;
	json_t *val;

	json_object_foreach(json_object_get((json_t *)cm, "data"), k, val) {
		v = json_string_value(val);
		if (v && (!strncmp(v, "version:", 8) || strstr(v, "\nversion:") ||
			  strstr(v, "mig-configs:")))
			return true;
	}
	return false;
}
