/*
 * kgen.c - API objects for the scheduler benchmark (kgen.h).
 *
 * Label and field names as the API and NVIDIA's components write them:
 * GFD's nvidia.com/gpu.product (time-sliced cards get "-SHARED"),
 * gpu.count, gpu.memory (MiB), gpu.replicas, mig.strategy; the GPU
 * operator's nvidia.com/mig.config and nvidia.com/device-plugin.config
 * labels naming entries of the mig-parted and device-plugin ConfigMaps
 * (docs/kubernetes.md); Kueue's pod-group label and total-count
 * annotation; the carve.dev/v1alpha1 queue kinds with Kueue v1beta2's
 * spec.  Every object is built with json_pack from fixed shapes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kgen.h"

static const char *const dp_config = "version: v1\n"
				     "sharing:\n"
				     "  timeSlicing:\n"
				     "    resources:\n"
				     "    - name: nvidia.com/gpu\n"
				     "      replicas: 4\n";

static const char *const mig_config = "version: v1\n"
				      "mig-configs:\n"
				      "  prod-3g:\n"
				      "  - devices: all\n"
				      "    mig-enabled: true\n"
				      "    mig-devices:\n"
				      "      \"3g.40gb\": 2\n";

/* Adds src's keys to dst and drops src. */
static void merge(json_t *dst, json_t *src)
{
	json_object_update(dst, src);
	json_decref(src);
}

enum pool { TRAINING, PRODUCTION, DEV };

static enum pool pool_of(size_t i)
{
	size_t m = i % 10;

	return m < 4 ? TRAINING : m < 7 ? PRODUCTION : DEV;
}

static json_t *node(size_t i)
{
	char name[32], uid[48], block[24], rack[24];
	json_t *labels, *alloc, *n, *taints;

	snprintf(name, sizeof(name), "node-%05zu", i);
	snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012zx", i);
	snprintf(block, sizeof(block), "block-%zu", i / 320);
	snprintf(rack, sizeof(rack), "rack-%zu", i / 32);
	labels = json_pack("{s:s, s:s, s:s, s:s}", "kubernetes.io/hostname", name, "kubernetes.io/os",
			   "linux", "cloud.provider.com/topology-block", block,
			   "cloud.provider.com/topology-rack", rack);
	taints = json_array();
	switch (pool_of(i)) {
	case TRAINING:
		merge(labels, json_pack("{s:s, s:s, s:s, s:s}", "carve.dev/pool", "training",
						     "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3",
						     "nvidia.com/gpu.count", "8", "nvidia.com/gpu.memory",
						     "81559"));
		alloc = json_pack("{s:s, s:s, s:s, s:s}", "cpu", "192", "memory", "2Ti", "pods", "110",
				  "nvidia.com/gpu", "8");
		json_array_append_new(taints, json_pack("{s:s, s:s, s:s}", "key", "carve.dev/pool", "value",
							"training", "effect", "NoSchedule"));
		break;
	case PRODUCTION:
		merge(labels, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "carve.dev/pool",
						     "production", "nvidia.com/gpu.product",
						     "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count", "8",
						     "nvidia.com/gpu.memory", "81920", "nvidia.com/mig.strategy",
						     "mixed", "nvidia.com/mig.config", "prod-3g"));
		alloc = json_pack("{s:s, s:s, s:s, s:s, s:s}", "cpu", "128", "memory", "1Ti", "pods", "110",
				  "nvidia.com/gpu", "0", "nvidia.com/mig-3g.40gb", "16");
		break;
	default:
		merge(labels, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "carve.dev/pool",
						     "dev", "nvidia.com/gpu.product", "NVIDIA-L40S-SHARED",
						     "nvidia.com/gpu.count", "8", "nvidia.com/gpu.memory",
						     "46068", "nvidia.com/gpu.replicas", "4",
						     "nvidia.com/gpu.sharing-strategy", "time-slicing",
						     "nvidia.com/device-plugin.config", "l40s-ts"));
		alloc = json_pack("{s:s, s:s, s:s, s:s}", "cpu", "64", "memory", "512Gi", "pods", "110",
				  "nvidia.com/gpu", "32");
		break;
	}
	n = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:o}, s:{s:o}, s:{s:O, s:o}}", "apiVersion", "v1",
		      "kind", "Node", "metadata", "name", name, "uid", uid, "resourceVersion", "100",
		      "labels", labels, "spec", "taints", taints, "status", "capacity", alloc,
		      "allocatable", alloc);
	return n;
}

static json_t *configmap(const char *name, const char *key, const char *text)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind",
			 "ConfigMap", "metadata", "name", name, "namespace", "gpu-operator",
			 "resourceVersion", "10", "data", key, text);
}

static json_t *flavor(const char *name, const char *pool, bool tolerate)
{
	json_t *f = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}}}", "apiVersion", "carve.dev/v1alpha1",
			      "kind", "ResourceFlavor", "metadata", "name", name, "resourceVersion", "20",
			      "spec", "nodeLabels", "carve.dev/pool", pool);

	if (tolerate)
		json_object_set_new(json_object_get(f, "spec"), "tolerations",
				    json_pack("[{s:s, s:s, s:s, s:s}]", "key", "carve.dev/pool", "operator",
					      "Equal", "value", pool, "effect", "NoSchedule"));
	return f;
}

/* A ClusterQueue owning one flavor: cpu, memory and one GPU resource. */
static json_t *cq(const char *name, const char *flavor, const char *gpu_res, const char *gpus,
		  const char *cpu, const char *mem)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:{}, s:[{s:[s, s, s], s:[{s:s, s:["
			 "{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]}]}], s:{s:s, s:s}}}",
			 "apiVersion", "carve.dev/v1alpha1", "kind", "ClusterQueue", "metadata", "name", name,
			 "resourceVersion", "30", "spec", "cohortName", "gpu-org", "namespaceSelector",
			 "resourceGroups", "coveredResources", "cpu", "memory", gpu_res, "flavors", "name",
			 flavor, "resources", "name", "cpu", "nominalQuota", cpu, "name", "memory",
			 "nominalQuota", mem, "name", gpu_res, "nominalQuota", gpus, "preemption",
			 "withinClusterQueue", "LowerPriority", "reclaimWithinCohort", "Any");
}

static json_t *lq(const char *ns, const char *name)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s}}", "apiVersion", "carve.dev/v1alpha1",
			 "kind", "LocalQueue", "metadata", "name", name, "namespace", ns,
			 "resourceVersion", "40", "spec", "clusterQueue", name);
}

json_t *kgen_cluster(const struct kgen_opts *o)
{
	json_t *a = json_array();
	char gpus[32], cpu[32], mem[32];
	size_t per = o->nodes / 10;

	if (!a)
		return NULL;
	json_array_append_new(a, configmap("device-plugin-config", "l40s-ts", dp_config));
	json_array_append_new(a, configmap("mig-parted-config", "config.yaml", mig_config));
	json_array_append_new(a, flavor("h100", "training", true));
	json_array_append_new(a, flavor("a100-mig", "production", false));
	json_array_append_new(a, flavor("l40s", "dev", false));
	json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{}}", "apiVersion",
					   "carve.dev/v1alpha1", "kind", "Cohort", "metadata", "name",
					   "gpu-org", "resourceVersion", "25", "spec"));
	/* quotas: every pool's whole capacity */
	snprintf(gpus, sizeof(gpus), "%zu", per * 4 * 8);
	snprintf(cpu, sizeof(cpu), "%zu", per * 4 * 192);
	snprintf(mem, sizeof(mem), "%zuTi", per * 4 * 2);
	json_array_append_new(a, cq("research", "h100", "nvidia.com/gpu", gpus, cpu, mem));
	snprintf(gpus, sizeof(gpus), "%zu", per * 3 * 16);
	snprintf(cpu, sizeof(cpu), "%zu", per * 3 * 128);
	snprintf(mem, sizeof(mem), "%zuTi", per * 3);
	json_array_append_new(a, cq("production", "a100-mig", "nvidia.com/mig-3g.40gb", gpus, cpu, mem));
	snprintf(gpus, sizeof(gpus), "%zu", per * 3 * 32);
	snprintf(cpu, sizeof(cpu), "%zu", per * 3 * 64);
	snprintf(mem, sizeof(mem), "%zuGi", per * 3 * 512);
	json_array_append_new(a, cq("dev", "l40s", "nvidia.com/gpu", gpus, cpu, mem));
	json_array_append_new(a, lq("team-research", "research"));
	json_array_append_new(a, lq("team-production", "production"));
	json_array_append_new(a, lq("team-dev", "dev"));
	for (size_t i = 0; i < o->nodes; i++)
		if (json_array_append_new(a, node(i))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *pod(const struct kgen_opts *o, const char *ns, const char *name, size_t serial,
		   const char *queue, const char *cpu, const char *mem, const char *gpu_res, bool tolerate)
{
	char uid[48], ts[32];
	json_t *p, *res, *spec;

	snprintf(uid, sizeof(uid), "10000000-0000-4000-8000-%012zx", serial);
	snprintf(ts, sizeof(ts), "2026-12-03T%02zu:%02zu:%02zuZ", (serial / 3600) % 24, (serial / 60) % 60,
		 serial % 60);
	res = json_pack("{s:{s:s, s:s, s:s}, s:{s:s}}", "requests", "cpu", cpu, "memory", mem, gpu_res, "1",
			"limits", gpu_res, "1");
	spec = json_pack("{s:s, s:[{s:s, s:s, s:o}], s:s, s:s}", "schedulerName",
			 o->scheduler_name ? o->scheduler_name : "carve", "containers", "name", "main", "image",
			 "registry.example/work:1", "resources", res, "restartPolicy", "Never",
			 "serviceAccountName", "default");
	if (tolerate)
		json_object_set_new(spec, "tolerations",
				    json_pack("[{s:s, s:s, s:s, s:s}]", "key", "carve.dev/pool", "operator",
					      "Equal", "value", "training", "effect", "NoSchedule"));
	p = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:{s:s}}, s:o, s:{s:s, s:s}}", "apiVersion",
		      "v1", "kind", "Pod", "metadata", "name", name, "namespace", ns, "uid", uid,
		      "resourceVersion", "1000", "creationTimestamp", ts, "labels",
		      "kueue.x-k8s.io/queue-name", queue, "spec", spec, "status", "phase", "Pending",
		      "qosClass", "Burstable");
	return p;
}

static void in_group(json_t *p, const char *group, int total)
{
	json_t *md = json_object_get(p, "metadata");
	char n[16];

	snprintf(n, sizeof(n), "%d", total);
	json_object_set_new(json_object_get(md, "labels"), "kueue.x-k8s.io/pod-group-name", json_string(group));
	json_object_set_new(md, "annotations", json_pack("{s:s}", "kueue.x-k8s.io/pod-group-total-count", n));
}

json_t *kgen_pod(const struct kgen_opts *o, size_t i)
{
	char name[96], group[48];
	size_t gangs_pods = o->pods / 5 / (size_t)o->gang_size * (size_t)o->gang_size;
	json_t *p;

	if (i < gangs_pods) {
		size_t g = i / (size_t)o->gang_size;
		snprintf(group, sizeof(group), "train-%05zu", g);
		snprintf(name, sizeof(name), "%s-%zu", group, i % (size_t)o->gang_size);
		p = pod(o, "team-research", name, i, "research", "8", "64Gi", "nvidia.com/gpu", true);
		if (p)
			in_group(p, group, o->gang_size);
		return p;
	}
	if ((i - gangs_pods) % 2 == 0) {
		snprintf(name, sizeof(name), "infer-%06zu", i);
		return pod(o, "team-production", name, i, "production", "4", "32Gi", "nvidia.com/mig-3g.40gb",
			   false);
	}
	snprintf(name, sizeof(name), "notebook-%06zu", i);
	return pod(o, "team-dev", name, i, "dev", "2", "16Gi", "nvidia.com/gpu", false);
}

json_t *kgen_gang_pod(const struct kgen_opts *o, const char *name, int n, int k)
{
	char pn[96];
	json_t *p;

	snprintf(pn, sizeof(pn), "%s-%d", name, k);
	p = pod(o, "team-research", pn, 5000000 + (size_t)k, "research", "8", "64Gi", "nvidia.com/gpu", true);
	if (p)
		in_group(p, name, n);
	return p;
}

json_t *kgen_bound(const json_t *pod, const char *node, const char *devices, const char *flavors)
{
	json_t *p = json_deep_copy(pod), *md;

	if (!p)
		return NULL;
	md = json_object_get(p, "metadata");
	if (!json_is_object(json_object_get(md, "annotations")))
		json_object_set_new(md, "annotations", json_object());
	json_object_set_new(json_object_get(md, "annotations"), "carve.dev/devices", json_string(devices));
	if (flavors && *flavors)
		json_object_set_new(json_object_get(md, "annotations"), "carve.dev/flavors",
				    json_string(flavors));
	json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(node));
	json_object_set_new(p, "status",
			    json_pack("{s:s, s:[{s:s, s:s}]}", "phase", "Running", "conditions", "type",
				      "PodScheduled", "status", "True"));
	return p;
}
