/*
 * mocknvml.c - a stand-in libnvidia-ml.so.1 for tests: answers every NVML
 * function carve uses (src/node/nvml_decl.h) from a JSON description of a
 * node, CARVE_MOCK_NVML=path.json (format: docs/internals/NVML.md).  MIG
 * GPU/compute instances are created and destroyed with the real placement
 * rules of carve's MIG table (src/core/mig.c and mig_profiles.c are
 * compiled in), and when CARVE_MOCK_NVML_STATE names a file the changed
 * description is written there after every change and read from there
 * (when it exists) at nvmlInit_v2, so one process's MIG apply is what the
 * next process discovers.  Injected errors: "errors": {"<function>": code}
 * at the top or in a GPU, or {"code": c, "after": n} to fail after n
 * successful calls.  Xids: a GPU's "xids" list, handed out one event at a
 * time by nvmlEventSetWait_v2.
 *
 * Handles are tagged integers (kind, GPU index, GI id, CI id), never
 * pointers into the JSON, so they stay valid while the JSON changes.  Not
 * thread-safe beyond what carve's single lock gives it.  Built with
 * MOCK_NO_OPTIONAL it lacks three optional functions, with MOCK_NO_REQUIRED
 * it lacks nvmlDeviceGetMemoryInfo (tests of missing symbols).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "carve/mig.h"
#include "nvml_decl.h"

#define EXPORT __attribute__((visibility("default")))
#define MIB (1024ULL * 1024ULL)

/* The prototypes carve resolves: the mock must match them exactly. */
#define PROTO(name, args) nvmlReturn_t name args;
ND_NVML_FUNCS(PROTO, PROTO)
#undef PROTO
const char *nvmlErrorString(nvmlReturn_t r);
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t d, unsigned int profile,
						  nvmlGpuInstanceProfileInfo_v2_t *info);

enum kind { K_GPU = 1, K_MIGDEV, K_GI, K_CI };

static json_t *root;
static int init_count;

/* ---- handles ---- */

static void *mk(enum kind k, unsigned gpu, unsigned gi, unsigned ci)
{
	return (void *)(uintptr_t)(((uintptr_t)k << 28) | (gpu << 16) | ((gi & 0xff) << 8) |
				   (ci & 0xff));
}

/* Decodes a handle of kind k: its GPU object (and instance when asked). */
static json_t *gpu_of(const void *h, enum kind k, unsigned *gpu, json_t **inst)
{
	uintptr_t v = (uintptr_t)h;
	unsigned g = (unsigned)(v >> 16) & 0xfff, gi = (unsigned)(v >> 8) & 0xff, i;
	json_t *gp, *in;

	if (!root || (v >> 28) != (uintptr_t)k)
		return NULL;
	gp = json_array_get(json_object_get(root, "gpus"), g);
	if (!gp)
		return NULL;
	if (gpu)
		*gpu = g;
	if (inst) {
		*inst = NULL;
		json_array_foreach(json_object_get(gp, "instances"), i, in)
			if (json_integer_value(json_object_get(in, "gi")) == gi)
				*inst = in;
		if (!*inst)
			return NULL;
	}
	return gp;
}

static unsigned handle_ci(const void *h)
{
	return (unsigned)(uintptr_t)h & 0xff;
}

/* ---- description helpers ---- */

static long long num(json_t *o, const char *k, long long def)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? json_integer_value(v) : def;
}

static int ci_of(json_t *inst)
{
	json_t *v = json_object_get(inst, "ci");

	return json_is_integer(v) ? (int)json_integer_value(v) : -1;
}

/* The injected error for fn: the GPU's own, then the node's; 0 none. */
static nvmlReturn_t injected(const char *fn, json_t *gpu)
{
	json_t *lists[2] = {gpu ? json_object_get(gpu, "errors") : NULL,
			    root ? json_object_get(root, "errors") : NULL};
	int i;

	for (i = 0; i < 2; i++) {
		json_t *e = json_object_get(lists[i], fn);
		long long after;

		if (json_is_integer(e))
			return (nvmlReturn_t)json_integer_value(e);
		if (!json_is_object(e))
			continue;
		after = num(e, "after", 0);
		if (after > 0) {
			json_object_set_new(e, "after", json_integer(after - 1));
			return 0;
		}
		return (nvmlReturn_t)num(e, "code", NVML_ERROR_UNKNOWN);
	}
	return 0;
}

#define INJECT(gp)                                                   \
	do {                                                         \
		nvmlReturn_t r_ = injected(__func__, (gp));          \
		if (r_)                                              \
			return r_;                                   \
	} while (0)

static nvmlReturn_t save(void)
{
	const char *p = getenv("CARVE_MOCK_NVML_STATE");
	char tmp[4096];

	if (!p || !*p)
		return NVML_SUCCESS;
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", p, (int)getpid());
	if (json_dump_file(root, tmp, JSON_INDENT(1)) || rename(tmp, p))
		return NVML_ERROR_UNKNOWN;
	return NVML_SUCCESS;
}

static const struct carve_mig_model *model_of(json_t *gp)
{
	return carve_mig_model_find(json_string_value(json_object_get(gp, "name")));
}

static bool mig_enabled(json_t *gp)
{
	json_t *m = json_object_get(gp, "mig");

	return json_is_array(m) && json_integer_value(json_array_get(m, 0)) == 1;
}

static const struct carve_mig_profile *profile_named(const struct carve_mig_model *mm,
						     const char *name)
{
	int p = mm && name ? carve_mig_profile_find(mm, name) : -1;

	return p < 0 ? NULL : &mm->profiles[p];
}

/* MiB of a profile: the table's, or its share of the GPU's memory when
 * the table does not know it. */
static unsigned long long profile_mib(json_t *gp, const struct carve_mig_profile *p)
{
	const struct carve_mig_model *mm = model_of(gp);

	if (p->memory_mib || !mm)
		return p->memory_mib;
	return (unsigned long long)num(gp, "memory_mib", 0) / mm->mem_slices * p->mem_slices;
}

static const struct carve_mig_profile *inst_profile(json_t *gp, json_t *in)
{
	return profile_named(model_of(gp), json_string_value(json_object_get(in, "profile")));
}

/* ---- init, system ---- */

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	const char *state = getenv("CARVE_MOCK_NVML_STATE");
	const char *desc = getenv("CARVE_MOCK_NVML");
	json_error_t je;
	nvmlReturn_t r;

	if (init_count++ > 0)
		return NVML_SUCCESS;
	if (state && *state && access(state, R_OK) == 0)
		desc = state;
	if (!desc || !*desc) {
		init_count = 0;
		return NVML_ERROR_DRIVER_NOT_LOADED;
	}
	root = json_load_file(desc, 0, &je);
	if (!root) {
		fprintf(stderr, "mocknvml: %s:%d: %s\n", desc, je.line, je.text);
		init_count = 0;
		return NVML_ERROR_UNKNOWN;
	}
	r = injected(__func__, NULL);
	if (r) {
		json_decref(root);
		root = NULL;
		init_count = 0;
	}
	return r;
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
	if (init_count == 0)
		return NVML_ERROR_UNINITIALIZED;
	if (--init_count == 0) {
		json_decref(root);
		root = NULL;
	}
	return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_TIMEOUT: return "Timeout";
	case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	case NVML_ERROR_IN_USE: return "In use by another client";
	case NVML_ERROR_INSUFFICIENT_RESOURCES: return "Insufficient Resources";
	default: return "Unknown Error";
	}
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
	const char *s = json_string_value(json_object_get(root, "driver_version"));

	INJECT(NULL);
	if (!s || strlen(s) >= len)
		return s ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_ERROR_UNKNOWN;
	strcpy(v, s);
	return NVML_SUCCESS;
}

#ifndef MOCK_NO_OPTIONAL
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	INJECT(NULL);
	*v = (int)num(root, "cuda_version", 0);
	return *v ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	if (!root)
		return NVML_ERROR_UNINITIALIZED;
	INJECT(NULL);
	*n = (unsigned)json_array_size(json_object_get(root, "gpus"));
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (!root)
		return NVML_ERROR_UNINITIALIZED;
	INJECT(NULL);
	if (i >= json_array_size(json_object_get(root, "gpus")))
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = mk(K_GPU, i, 0, 0);
	return NVML_SUCCESS;
}

/* ---- per GPU ---- */

/* GPU of a GPU handle, or of a MIG device handle (then *inst is set). */
static json_t *any_dev(nvmlDevice_t d, unsigned *g, json_t **inst)
{
	json_t *gp = gpu_of(d, K_GPU, g, NULL);

	*inst = NULL;
	return gp ? gp : gpu_of(d, K_MIGDEV, g, inst);
}

static nvmlReturn_t copy_str(const char *s, char *out, unsigned len)
{
	if (!s)
		return NVML_ERROR_NOT_SUPPORTED;
	if (strlen(s) >= len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(out, s);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *s, unsigned int len)
{
	json_t *in, *gp = any_dev(d, NULL, &in);

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	return copy_str(json_string_value(json_object_get(in ? in : gp, "uuid")), s, len);
}

/* A MIG device is named "<GPU name> MIG <profile>", as the driver names it. */
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned int len)
{
	json_t *in, *gp = any_dev(d, NULL, &in);
	char buf[256];

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	if (!in)
		return copy_str(json_string_value(json_object_get(gp, "name")), s, len);
	snprintf(buf, sizeof(buf), "%s MIG %s", json_string_value(json_object_get(gp, "name")),
		 json_string_value(json_object_get(in, "profile")));
	return copy_str(buf, s, len);
}

/* Reads integer field k of a GPU handle's object into *v (int or unsigned). */
#define GPU_FIELD(fn, key, type)                                              \
	EXPORT nvmlReturn_t fn(nvmlDevice_t d, type *v)                       \
	{                                                                     \
		json_t *gp = gpu_of(d, K_GPU, NULL, NULL), *x;                \
		if (!gp)                                                      \
			return NVML_ERROR_INVALID_ARGUMENT;                   \
		INJECT(gp);                                                   \
		x = json_object_get(gp, key);                                 \
		if (!json_is_integer(x))                                      \
			return NVML_ERROR_NOT_SUPPORTED;                      \
		*v = (type)json_integer_value(x);                             \
		return NVML_SUCCESS;                                          \
	}

GPU_FIELD(nvmlDeviceGetMinorNumber, "minor", unsigned int)
GPU_FIELD(nvmlDeviceGetArchitecture, "arch", unsigned int)
GPU_FIELD(nvmlDeviceGetPowerUsage, "power_mw", unsigned int)
#ifndef MOCK_NO_OPTIONAL
GPU_FIELD(nvmlDeviceGetNumaNodeId, "numa", unsigned int)
GPU_FIELD(nvmlDeviceGetTotalEnergyConsumption, "energy_mj", unsigned long long)
#endif

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	json_t *gp = gpu_of(d, K_GPU, NULL, NULL);
	const char *id;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	id = json_string_value(json_object_get(gp, "pci_bus_id"));
	if (!id || strlen(id) >= sizeof(p->busId))
		return NVML_ERROR_NOT_SUPPORTED;
	memset(p, 0, sizeof(*p));
	strcpy(p->busId, id);
	p->pciDeviceId = (unsigned)num(gp, "pci_device_id", 0);
	return NVML_SUCCESS;
}

/* Sum of the memory of the processes in (gi, ci), or on the GPU (gi -1). */
static __attribute__((unused)) unsigned long long procs_mib(json_t *gp, long long gi)
{
	unsigned long long sum = 0;
	json_t *p;
	size_t i;

	json_array_foreach(json_object_get(gp, "processes"), i, p)
		if (gi < 0 || num(p, "gi", -1) == gi)
			sum += (unsigned long long)num(p, "used_mib", 0);
	return sum;
}

#ifndef MOCK_NO_REQUIRED
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	json_t *in, *gp = any_dev(d, NULL, &in);
	unsigned long long tot, used;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	if (in) {
		const struct carve_mig_profile *p = inst_profile(gp, in);

		tot = (unsigned long long)num(in, "memory_mib", p ? (long long)profile_mib(gp, p) : 0);
		used = procs_mib(gp, num(in, "gi", 0));
	} else {
		tot = (unsigned long long)num(gp, "memory_mib", 0);
		used = (unsigned long long)num(gp, "memory_used_mib", (long long)procs_mib(gp, -1));
	}
	m->total = tot * MIB;
	m->used = used * MIB;
	m->free = used > tot ? 0 : (tot - used) * MIB;
	return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *maj, int *min)
{
	json_t *gp = gpu_of(d, K_GPU, NULL, NULL), *cc;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	cc = json_object_get(gp, "cc");
	if (json_array_size(cc) != 2)
		return NVML_ERROR_NOT_SUPPORTED;
	*maj = (int)json_integer_value(json_array_get(cc, 0));
	*min = (int)json_integer_value(json_array_get(cc, 1));
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur, unsigned int *pend)
{
	json_t *gp = gpu_of(d, K_GPU, NULL, NULL), *m;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	m = json_object_get(gp, "mig");
	if (json_array_size(m) != 2)
		return NVML_ERROR_NOT_SUPPORTED;
	*cur = (unsigned)json_integer_value(json_array_get(m, 0));
	*pend = (unsigned)json_integer_value(json_array_get(m, 1));
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	json_t *gp = gpu_of(d, K_GPU, NULL, NULL), *a;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	a = json_object_get(gp, "util");
	if (json_array_size(a) != 2)
		return NVML_ERROR_NOT_SUPPORTED;
	u->gpu = (unsigned)json_integer_value(json_array_get(a, 0));
	u->memory = (unsigned)json_integer_value(json_array_get(a, 1));
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *c)
{
	json_t *gp = gpu_of(d, K_GPU, NULL, NULL);

	if (!gp || sensor != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	if (!json_is_integer(json_object_get(gp, "temp")))
		return NVML_ERROR_NOT_SUPPORTED;
	*c = (unsigned)num(gp, "temp", 0);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
	json_t *gp = gpu_of(d, K_GPU, NULL, NULL);
	const char *k = type == NVML_CLOCK_SM ? "sm_clock" : type == NVML_CLOCK_MEM ? "mem_clock"
										    : NULL;

	if (!gp || !k)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	if (!json_is_integer(json_object_get(gp, k)))
		return NVML_ERROR_NOT_SUPPORTED;
	*mhz = (unsigned)num(gp, k, 0);
	return NVML_SUCCESS;
}

static nvmlReturn_t procs(nvmlDevice_t d, unsigned *n, nvmlProcessInfo_t *v, bool graphics)
{
	json_t *in, *gp = any_dev(d, NULL, &in), *p;
	unsigned k = 0, room = *n;
	size_t i;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	json_array_foreach(json_object_get(gp, "processes"), i, p) {
		if (json_is_true(json_object_get(p, "graphics")) != graphics)
			continue;
		if (in && num(p, "gi", -1) != num(in, "gi", -2))
			continue;
		if (k < room && v) {
			v[k].pid = (unsigned)num(p, "pid", 0);
			v[k].usedGpuMemory = json_is_integer(json_object_get(p, "used_mib"))
						     ? (unsigned long long)num(p, "used_mib", 0) * MIB
						     : NVML_VALUE_NOT_AVAILABLE;
			v[k].gpuInstanceId = (unsigned)num(p, "gi", 0xFFFFFFFFll);
			v[k].computeInstanceId = (unsigned)num(p, "ci", 0xFFFFFFFFll);
		}
		k++;
	}
	*n = k;
	return k > room || (k && !v) ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n,
							    nvmlProcessInfo_t *p)
{
	json_t *in, *gp = any_dev(d, NULL, &in);

	INJECT(gp);
	return procs(d, n, p, false);
}

EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *n,
							     nvmlProcessInfo_t *p)
{
	json_t *in, *gp = any_dev(d, NULL, &in);

	INJECT(gp);
	return procs(d, n, p, true);
}

/* ---- MIG devices ---- */

EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *n)
{
	json_t *gp = gpu_of(d, K_GPU, NULL, NULL);
	const struct carve_mig_model *mm;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	mm = model_of(gp);
	*n = mm && mig_enabled(gp) ? mm->max_instances : 0;
	return mm ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int idx,
							nvmlDevice_t *m)
{
	unsigned g, k = 0;
	json_t *gp = gpu_of(d, K_GPU, &g, NULL), *in;
	size_t i;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	json_array_foreach(json_object_get(gp, "instances"), i, in) {
		if (ci_of(in) < 0)
			continue;
		if (k++ == idx) {
			*m = mk(K_MIGDEV, g, (unsigned)num(in, "gi", 0), (unsigned)ci_of(in));
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t m, unsigned int *id)
{
	json_t *in, *gp = gpu_of(m, K_MIGDEV, NULL, &in);

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	*id = (unsigned)num(in, "gi", 0);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t m, unsigned int *id)
{
	json_t *in, *gp = gpu_of(m, K_MIGDEV, NULL, &in);

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	*id = (unsigned)ci_of(in);
	return NVML_SUCCESS;
}

/* SMs per compute slice: 16 on Hopper (132 SMs), 14 on the others (A100: 98 in 7). */
static unsigned sms_per_slice(json_t *gp)
{
	return num(gp, "arch", 0) >= NVML_DEVICE_ARCH_HOPPER ? 16 : 14;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t d, unsigned int profile,
							 nvmlGpuInstanceProfileInfo_v2_t *info)
{
	json_t *gp = gpu_of(d, K_GPU, NULL, NULL);
	const struct carve_mig_model *mm;
	const struct carve_mig_profile *p;

	if (!gp || info->version != nvmlGpuInstanceProfileInfo_v2)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	mm = model_of(gp);
	if (!mm || !json_is_array(json_object_get(gp, "mig")))
		return NVML_ERROR_NOT_SUPPORTED;
	if (profile >= NVML_GPU_INSTANCE_PROFILE_COUNT_MAX)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (profile >= mm->nprofiles || mm->profiles[profile].nvml_id == 0xff)
		return NVML_ERROR_NOT_SUPPORTED;
	p = &mm->profiles[profile];
	memset(info, 0, sizeof(*info));
	info->version = nvmlGpuInstanceProfileInfo_v2;
	info->id = p->nvml_id;
	info->sliceCount = p->compute;
	info->instanceCount = p->max_count;
	info->multiprocessorCount = p->compute * sms_per_slice(gp);
	info->memorySizeMB = profile_mib(gp, p);
	snprintf(info->name, sizeof(info->name), "MIG %s", p->name);
	return NVML_SUCCESS;
}

static const struct carve_mig_profile *profile_by_id(const struct carve_mig_model *mm,
						     unsigned id)
{
	int i;

	for (i = 0; mm && i < mm->nprofiles; i++)
		if (mm->profiles[i].nvml_id == id)
			return &mm->profiles[i];
	return NULL;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t d, unsigned int profileId,
					      nvmlGpuInstance_t *v, unsigned int *n)
{
	unsigned g, k = 0;
	json_t *gp = gpu_of(d, K_GPU, &g, NULL), *in;
	const struct carve_mig_profile *want;
	size_t i;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	if (!mig_enabled(gp))
		return NVML_ERROR_NOT_SUPPORTED;
	want = profile_by_id(model_of(gp), profileId);
	if (!want)
		return NVML_ERROR_INVALID_ARGUMENT;
	json_array_foreach(json_object_get(gp, "instances"), i, in)
		if (inst_profile(gp, in) == want)
			v[k++] = mk(K_GI, g, (unsigned)num(in, "gi", 0), 0);
	*n = k;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t d, unsigned int id,
						 nvmlGpuInstance_t *gi)
{
	unsigned g;
	json_t *gp = gpu_of(d, K_GPU, &g, NULL), *in;
	size_t i;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	json_array_foreach(json_object_get(gp, "instances"), i, in)
		if (num(in, "gi", -1) == id) {
			*gi = mk(K_GI, g, id, 0);
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t *info)
{
	unsigned g;
	json_t *in, *gp = gpu_of(gi, K_GI, &g, &in);
	const struct carve_mig_profile *p;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	p = inst_profile(gp, in);
	memset(info, 0, sizeof(*info));
	info->device = mk(K_GPU, g, 0, 0);
	info->id = (unsigned)num(in, "gi", 0);
	info->profileId = p ? p->nvml_id : 0;
	info->placement.start = (unsigned)num(in, "start", 0);
	info->placement.size = p ? p->mem_slices : 0;
	return NVML_SUCCESS;
}

/* The MIG table's layout of the GPU's instances; false when one is not in it. */
static bool table_layout(json_t *gp, const struct carve_mig_model *mm, struct carve_mig_layout *l)
{
	json_t *in;
	size_t i;

	memset(l, 0, sizeof(*l));
	json_array_foreach(json_object_get(gp, "instances"), i, in) {
		int p = carve_mig_profile_find(mm, json_string_value(json_object_get(in, "profile")));

		if (p < 0 || l->n == CARVE_MIG_MAX_INST)
			return false;
		l->inst[l->n].profile = (uint8_t)p;
		l->inst[l->n].start = (uint8_t)num(in, "start", 0);
		l->n++;
	}
	return true;
}

EXPORT nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t d, unsigned int profileId,
							     const nvmlGpuInstancePlacement_t *pl,
							     nvmlGpuInstance_t *gi)
{
	unsigned g, id, k;
	json_t *gp = gpu_of(d, K_GPU, &g, NULL), *in, *ins;
	const struct carve_mig_model *mm;
	const struct carve_mig_profile *p;
	struct carve_mig_layout l;
	char uuid[96];
	bool legal = false, used;
	size_t i;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	if (!mig_enabled(gp))
		return NVML_ERROR_NOT_SUPPORTED;
	mm = model_of(gp);
	p = profile_by_id(mm, profileId);
	if (!p || !pl || pl->size != p->mem_slices)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (k = 0; k < p->nstarts; k++)
		legal |= p->starts[k] == pl->start;
	if (!legal)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!table_layout(gp, mm, &l) ||
	    carve_mig_layout_add(mm, &l, (int)(p - mm->profiles), (int)pl->start))
		return NVML_ERROR_INSUFFICIENT_RESOURCES;
	ins = json_object_get(gp, "instances");
	if (!ins) {
		ins = json_array();
		json_object_set_new(gp, "instances", ins);
	}
	for (id = 1;; id++) { /* the lowest free GPU instance id */
		used = false;
		json_array_foreach(ins, i, in)
			used |= num(in, "gi", -1) == id;
		if (!used)
			break;
	}
	snprintf(uuid, sizeof(uuid), "MIG-%08x-%04x-%04x-%04x-%012x", 0xca7e0000u | g, id,
		 pl->start, profileId, (unsigned)num(root, "created", 0) + 1);
	json_object_set_new(root, "created", json_integer(num(root, "created", 0) + 1));
	json_array_append_new(ins, json_pack("{s:s, s:I, s:I, s:I, s:s}", "profile", p->name,
					     "start", (json_int_t)pl->start, "gi", (json_int_t)id,
					     "ci", (json_int_t)-1, "uuid", uuid));
	*gi = mk(K_GI, g, id, 0);
	return save();
}

EXPORT nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gi)
{
	json_t *in, *gp = gpu_of(gi, K_GI, NULL, &in), *ins;
	size_t i;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	if (ci_of(in) >= 0) /* compute instances must go first */
		return NVML_ERROR_IN_USE;
	ins = json_object_get(gp, "instances");
	for (i = 0; i < json_array_size(ins); i++)
		if (json_array_get(ins, i) == in)
			json_array_remove(ins, i);
	return save();
}

/* Compute-instance profile value p spans this many slices (nvml.h's
 * NVML_COMPUTE_INSTANCE_PROFILE_{1,2,3,4,7,8,6}_SLICE order). */
static unsigned ci_slices(unsigned p)
{
	static const unsigned s[] = {1, 2, 3, 4, 7, 8, 6};

	return p < sizeof(s) / sizeof(s[0]) ? s[p] : 0;
}

EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfoV(
	nvmlGpuInstance_t gi, unsigned int profile, unsigned int eng,
	nvmlComputeInstanceProfileInfo_v2_t *info)
{
	json_t *in, *gp = gpu_of(gi, K_GI, NULL, &in);
	const struct carve_mig_profile *p;

	if (!gp || info->version != nvmlComputeInstanceProfileInfo_v2 || eng != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	p = inst_profile(gp, in);
	if (profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT_MAX)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!p || !ci_slices(profile) || ci_slices(profile) > p->compute)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(info, 0, sizeof(*info));
	info->version = nvmlComputeInstanceProfileInfo_v2;
	info->id = profile;
	info->sliceCount = ci_slices(profile);
	info->instanceCount = p->compute / ci_slices(profile);
	info->multiprocessorCount = ci_slices(profile) * sms_per_slice(gp);
	snprintf(info->name, sizeof(info->name), "MIG %uc.%s", ci_slices(profile), p->name);
	return NVML_SUCCESS;
}

/* The compute instance of an instance is always of its full profile here. */
static unsigned full_ci(const struct carve_mig_profile *p)
{
	unsigned k;

	for (k = 0; k < 7; k++)
		if (ci_slices(k) == p->compute)
			return k;
	return 0;
}

EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gi, unsigned int profileId,
						       nvmlComputeInstance_t *v, unsigned int *n)
{
	unsigned g;
	json_t *in, *gp = gpu_of(gi, K_GI, &g, &in);
	const struct carve_mig_profile *p;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	p = inst_profile(gp, in);
	*n = 0;
	if (p && ci_of(in) >= 0 && profileId == full_ci(p)) {
		v[0] = mk(K_CI, g, (unsigned)num(in, "gi", 0), (unsigned)ci_of(in));
		*n = 1;
	}
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gi, unsigned int profileId,
							 nvmlComputeInstance_t *ci)
{
	unsigned g;
	json_t *in, *gp = gpu_of(gi, K_GI, &g, &in);
	const struct carve_mig_profile *p;

	if (!gp)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	p = inst_profile(gp, in);
	if (!p || profileId != full_ci(p))
		return NVML_ERROR_NOT_SUPPORTED; /* the mock makes full-size ones only */
	if (ci_of(in) >= 0)
		return NVML_ERROR_INSUFFICIENT_RESOURCES;
	json_object_set_new(in, "ci", json_integer(0));
	*ci = mk(K_CI, g, (unsigned)num(in, "gi", 0), 0);
	return save();
}

EXPORT nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t ci)
{
	json_t *in, *gp = gpu_of(ci, K_CI, NULL, &in), *p;
	size_t i;

	if (!gp || ci_of(in) != (int)handle_ci(ci))
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	json_array_foreach(json_object_get(gp, "processes"), i, p)
		if (num(p, "gi", -1) == num(in, "gi", -2))
			return NVML_ERROR_IN_USE;
	json_object_set_new(in, "ci", json_integer(-1));
	return save();
}

/* ---- events ---- */

struct nvmlEventSet_st {
	unsigned long long mask[64];
};

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *s)
{
	INJECT(NULL);
	*s = calloc(1, sizeof(**s));
	return *s ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t s)
{
	free(s);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
					     nvmlEventSet_t s)
{
	unsigned g;
	json_t *gp = gpu_of(d, K_GPU, &g, NULL);

	if (!gp || !s || g >= 64)
		return NVML_ERROR_INVALID_ARGUMENT;
	INJECT(gp);
	s->mask[g] |= types;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t s, nvmlEventData_t *e, unsigned int ms)
{
	json_t *gp;
	size_t g;

	INJECT(NULL);
	json_array_foreach(json_object_get(root, "gpus"), g, gp) {
		json_t *x = json_object_get(gp, "xids");

		if (g >= 64 || !(s->mask[g] & nvmlEventTypeXidCriticalError) || !json_array_size(x))
			continue;
		memset(e, 0, sizeof(*e));
		e->device = mk(K_GPU, (unsigned)g, 0, 0);
		e->eventType = nvmlEventTypeXidCriticalError;
		e->eventData = (unsigned long long)json_integer_value(json_array_get(x, 0));
		e->gpuInstanceId = e->computeInstanceId = 0xFFFFFFFFu;
		json_array_remove(x, 0);
		return NVML_SUCCESS;
	}
	usleep((ms > 100 ? 100 : ms) * 1000u);
	return NVML_ERROR_TIMEOUT;
}
