/*
 * trim.h - private to src/kube: what the scheduler keeps of an API object
 * (trim.c), applied before an object enters a store, the way client-go's
 * informers take a transform (SharedIndexInformer.SetTransform).
 */
#ifndef CARVE_KUBE_TRIM_H
#define CARVE_KUBE_TRIM_H

#include <stdbool.h>

#include <jansson.h>

/*
 * Drops from obj, in place, what no loader or action reads: every
 * object's metadata.managedFields; for a pod (pod true) also its
 * containers' and init containers' env, envFrom, command, args,
 * workingDir, volumeMounts, volumeDevices, image pull policy, probes and
 * lifecycle, spec.volumes and spec.imagePullSecrets, and its status but
 * for phase, nominatedNodeName and the PodScheduled condition.  What is
 * left loads into the same plan.  Never fails (an object of another shape
 * is left as it is).
 */
void kube_trim(json_t *obj, bool pod);

/*
 * Whether ConfigMap cm may hold an NVIDIA device-plugin or mig-parted
 * config (a data value with a "version:" or "mig-configs:" line): the only
 * ConfigMaps the scheduler and the webhook keep; the others (CA bundles,
 * every application's settings) are never handed to the loaders.
 */
bool kube_nvidia_configmap(const json_t *cm);

#endif
