/*
 * loaders.h - one function per manifest kind, called by manifest.c's kind
 * table with the document root (a mapping) and a struct ld whose kind and
 * api_version are set.  Each loader checks its top-level fields with
 * ld_fields, fills one struct, and appends it to the set only when the
 * object is usable (it has a name and its required fields); every problem
 * is reported through ld.
 */
#ifndef CARVE_LOADERS_H
#define CARVE_LOADERS_H

#include "decode.h"

/* load_node.c */
void load_node(struct ld *ld, const struct ynode *doc);
void load_nodepool(struct ld *ld, const struct ynode *doc);
/* Warns at pos when model is not a known GPU model (with a "did you mean"):
 * the one warning of every node source (NodePool gpu.model, node CSV). */
void ld_gpu_model_note(struct ld *ld, struct carve_pos pos, const char *model);

/* load_kueue.c: Kueue's quota objects, and what every Kueue loader shares */
#define LD_KUEUE_V1BETA1 "kueue.x-k8s.io/v1beta1"
#define LD_KUEUE_V1BETA2 "kueue.x-k8s.io/v1beta2"
/* carve's queue kinds: Kueue v1beta2's schema in carve's group. */
#define LD_CARVE_V1ALPHA1 "carve.dev/v1alpha1"
/* A name-like string that must not be empty. */
bool ld_name_str(struct ld *ld, const struct ynode *v, const char **out);
/* Warns when `field` exists only in API version `only_in` and the object
 * is of another version, which calls it `instead`. */
void ld_version_note(struct ld *ld, const struct ynode *v, const char *field,
		     const char *only_in, const char *instead);
void load_flavor(struct ld *ld, const struct ynode *doc);
void load_cq(struct ld *ld, const struct ynode *doc);
void load_cohort(struct ld *ld, const struct ynode *doc);
void load_lq(struct ld *ld, const struct ynode *doc);
void load_wpc(struct ld *ld, const struct ynode *doc);         /* WorkloadPriorityClass and PriorityClass */
void load_topology(struct ld *ld, const struct ynode *doc);    /* Kueue/KAI Topology: levels kept */

/* load_kueue_config.c: Kueue's controller Configuration (fair sharing) */
void load_kueue_config(struct ld *ld, const struct ynode *doc);

/* load_workload.c */
void load_workload(struct ld *ld, const struct ynode *doc);

/* load_volcano.c: Volcano Queue/PodGroup, KAI Queue/PodGroup */
void load_vcqueue(struct ld *ld, const struct ynode *doc);
void load_podgroup(struct ld *ld, const struct ynode *doc);
void load_kaiqueue(struct ld *ld, const struct ynode *doc);
void load_kaipodgroup(struct ld *ld, const struct ynode *doc);
/* scheduling.x-k8s.io/v1alpha1 PodGroup (coscheduling plugin): minMember */
void load_cospodgroup(struct ld *ld, const struct ynode *doc);

/* load_pod.c */
void load_pod(struct ld *ld, const struct ynode *doc);
void load_job(struct ld *ld, const struct ynode *doc);
/* A PodSpec (containers, initContainers, nodeSelector, affinity,
 * tolerations, schedulerName, priorityClassName ...) into out, computing
 * the effective pod requests/limits as Kubernetes does: the sum over
 * containers, raised to the largest init container's. */
void ld_podspec(struct ld *ld, const struct ynode *spec, struct carve_podspec *out);
/* A PodTemplateSpec {metadata: {labels, annotations}, spec: PodSpec}. */
void ld_podtemplate(struct ld *ld, const struct ynode *tmpl, struct carve_podspec *out);
/* A batch/v1 JobSpec: its pod template into out, parallelism and
 * completions defaulted as the API does.  False when it has no template
 * (reported) or is null. */
bool ld_jobspec(struct ld *ld, const struct ynode *spec, int32_t *parallelism,
		int32_t *completions, struct carve_podspec *out);

/* load_jobs.c: JobSet (jobset.x-k8s.io) and Volcano Job (batch.volcano.sh) */
void load_jobset(struct ld *ld, const struct ynode *doc);
void load_vcjob(struct ld *ld, const struct ynode *doc);

/* load_nvidia.c: device-plugin config, mig-parted config, ConfigMap */
void load_configmap(struct ld *ld, const struct ynode *doc);
/* A bare device-plugin config document (version: v1, flags/sharing/resources). */
void load_dpconfig(struct ld *ld, const struct ynode *doc, const char *name);
/* A bare mig-parted config document (version: v1, mig-configs). */
void load_migparted(struct ld *ld, const struct ynode *doc);

#endif
