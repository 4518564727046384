/*
 * nvml.c - NVML through dlopen: loading libnvidia-ml.so.1 and resolving
 * the functions of nvml_decl.h, discovery into a struct nd_snapshot, Xid
 * events and health.  MIG changes are in nvml_mig.c.
 *
 * Rules: a missing library or required function is an error with a
 * sentence, never a crash; a missing optional function, or one that
 * answers NOT_SUPPORTED (or any error) for an optional field, leaves that
 * field at -1 (UINT_MAX for unsigned ones, "" for the PCI bus id and a
 * MIG device's profile).  The
 * snapshot owns its strings; on error nothing is left allocated.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/mig.h"
#include "nvml_int.h"

/*
 * Xids that make a GPU unhealthy: the hardware and driver faults of
 * NVIDIA's "XID Errors" table (docs.nvidia.com/deploy/xid-errors/):
 * 48 double-bit ECC error, 62 internal micro-controller halt, 63 ECC page
 * retirement or row-remapping recording event, 64 ECC page retirement or
 * row-remapper failure, 74 NVLink error, 79 GPU has fallen off the bus,
 * 92 high single-bit ECC error rate, 94 contained ECC error, 95
 * uncontained ECC error.  Application faults (13, 31, 43, 45, 68, 109),
 * which NVIDIA's device plugin also skips, are counted but leave the GPU
 * healthy.
 */
static const unsigned critical_xids[] = {48, 62, 63, 64, 74, 79, 92, 94, 95};

bool nd_xid_critical(unsigned xid)
{
	size_t i;

	for (i = 0; i < sizeof(critical_xids) / sizeof(critical_xids[0]); i++)
		if (critical_xids[i] == xid)
			return true;
	return false;
}

const char *nd_nvml_errstr(const struct nd_nvml *n, nvmlReturn_t r)
{
	static __thread char buf[32];
	const char *s = n->error_string ? n->error_string(r) : NULL;

	if (s && *s)
		return s;
	snprintf(buf, sizeof(buf), "error %d", r);
	return buf;
}

/* ---- open / close ---- */

/* Resolves every function; returns 0 or CARVE_EIO naming the first
 * missing required one. */
static int resolve(struct nd_nvml *n, const char *lib, struct carve_error *err)
{
	*(void **)&n->error_string = dlsym(n->dl, "nvmlErrorString");
	if (!n->error_string)
		return carve_errorf(err, CARVE_EIO, "NVML library %s lacks nvmlErrorString", lib);
#define ND_REQ(name, args)                                                            \
	*(void **)&n->f.name = dlsym(n->dl, #name);                                   \
	if (!n->f.name)                                                               \
		return carve_errorf(err, CARVE_EIO,                                   \
				    "NVML library %s lacks " #name " (driver too old?)", lib);
#define ND_OPT(name, args) *(void **)&n->f.name = dlsym(n->dl, #name);
	ND_NVML_FUNCS(ND_REQ, ND_OPT)
#undef ND_REQ
#undef ND_OPT
	return 0;
}

int nd_nvml_open(const char *path, struct nd_nvml **out, struct carve_error *err)
{
	const char *lib = path ? path : getenv("CARVE_NVML_LIB");
	struct nd_nvml *n;
	nvmlReturn_t r;
	unsigned i;
	int rc;

	*out = NULL;
	if (!lib || !*lib)
		lib = "libnvidia-ml.so.1";
	n = calloc(1, sizeof(*n));
	if (!n)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	pthread_mutex_init(&n->mu, NULL);
	n->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl) {
		rc = carve_errorf(err, CARVE_ENOTFOUND,
				  "NVML not found: %s; is the NVIDIA driver installed?", dlerror());
		goto out_free;
	}
	rc = resolve(n, lib, err);
	if (rc)
		goto out_close;
	r = n->f.nvmlInit_v2();
	if (r != NVML_SUCCESS) {
		rc = carve_errorf(err, CARVE_EIO, "nvmlInit_v2: %s", nd_nvml_errstr(n, r));
		goto out_close;
	}
	r = n->f.nvmlDeviceGetCount_v2(&n->ndev);
	if (r != NVML_SUCCESS) {
		rc = carve_errorf(err, CARVE_EIO, "nvmlDeviceGetCount_v2: %s", nd_nvml_errstr(n, r));
		goto out_shutdown;
	}
	if (n->ndev > ND_NVML_MAX_GPUS) {
		rc = carve_errorf(err, CARVE_EIO, "NVML reports %u GPUs; carve handles at most %d",
				  n->ndev, ND_NVML_MAX_GPUS);
		goto out_shutdown;
	}
	for (i = 0; i < n->ndev; i++) {
		r = n->f.nvmlDeviceGetHandleByIndex_v2(i, &n->dev[i]);
		if (r != NVML_SUCCESS) {
			rc = carve_errorf(err, CARVE_EIO, "GPU %u: nvmlDeviceGetHandleByIndex_v2: %s",
					  i, nd_nvml_errstr(n, r));
			goto out_shutdown;
		}
	}
	*out = n;
	return 0;

out_shutdown:
	n->f.nvmlShutdown();
out_close:
	dlclose(n->dl);
out_free:
	pthread_mutex_destroy(&n->mu);
	free(n);
	return rc;
}

void nd_nvml_close(struct nd_nvml *n)
{
	if (!n)
		return;
	if (n->events && n->f.nvmlEventSetFree)
		n->f.nvmlEventSetFree(n->events);
	n->f.nvmlShutdown();
	dlclose(n->dl);
	pthread_mutex_destroy(&n->mu);
	free(n);
}

/* ---- GPU-instance profiles ---- */

int nd_gi_profiles(const struct nd_nvml *n, nvmlDevice_t d, const char *gpu_name,
		   struct nd_gi_profile *out, int max)
{
	const struct carve_mig_model *mm = carve_mig_model_find(gpu_name);
	unsigned p;
	int k = 0;

	if (!n->f.nvmlDeviceGetGpuInstanceProfileInfoV)
		return 0;
	for (p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT_MAX && k < max; p++) {
		nvmlGpuInstanceProfileInfo_v2_t info;
		struct nd_gi_profile *o = &out[k];
		const char *nm;
		int i;

		memset(&info, 0, sizeof(info));
		info.version = nvmlGpuInstanceProfileInfo_v2;
		if (n->f.nvmlDeviceGetGpuInstanceProfileInfoV(d, p, &info) != NVML_SUCCESS)
			continue;
		memset(o, 0, sizeof(*o));
		o->id = info.id;
		o->slices = info.sliceCount;
		o->sm_count = info.multiprocessorCount;
		o->mem_mib = info.memorySizeMB;
		info.name[sizeof(info.name) - 1] = 0;
		nm = info.name;
		if (!strncmp(nm, "MIG ", 4))
			nm += 4;
		if (strlen(nm) >= sizeof(o->name))
			continue; /* no MIG profile name is this long: not one carve knows */
		memcpy(o->name, nm, strlen(nm) + 1);
		/* Without a name, the MIG table knows the id on this model. */
		for (i = 0; mm && !o->name[0] && i < mm->nprofiles; i++)
			if (mm->profiles[i].nvml_id == info.id)
				snprintf(o->name, sizeof(o->name), "%s", mm->profiles[i].name);
		i = mm ? carve_mig_profile_find(mm, o->name) : -1;
		if (i >= 0)
			o->mem_slices = mm->profiles[i].mem_slices;
		k++;
	}
	return k;
}

static const struct nd_gi_profile *profile_by_id(const struct nd_gi_profile *v, int n,
						 unsigned id)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i].id == id)
			return &v[i];
	return NULL;
}

/* ---- snapshot ---- */

void nd_snapshot_free(struct nd_snapshot *s)
{
	size_t g, i;

	if (!s)
		return;
	for (g = 0; g < s->ngpus; g++) {
		struct nd_gpu *gp = &s->gpus[g];

		for (i = 0; i < gp->nmig; i++) {
			free(gp->mig[i].uuid);
			free(gp->mig[i].profile);
		}
		free(gp->mig);
		free(gp->proc);
		free(gp->uuid);
		free(gp->name);
		free(gp->pci_bus_id);
	}
	free(s->gpus);
	free(s->driver_version);
	memset(s, 0, sizeof(*s));
}

/* Calls an optional function when it is there; true when it answered. */
#define OPT_CALL(n, fn, ...) ((n)->f.fn && (n)->f.fn(__VA_ARGS__) == NVML_SUCCESS)

static void gpu_metrics(struct nd_nvml *n, nvmlDevice_t d, struct nd_gpu *g)
{
	nvmlUtilization_t u;
	nvmlPciInfo_t pci;
	unsigned v, cur, pend;
	unsigned long long e;
	int maj, min;

	g->minor = OPT_CALL(n, nvmlDeviceGetMinorNumber, d, &v) ? v : UINT_MAX;
	memset(&pci, 0, sizeof(pci));
	if (OPT_CALL(n, nvmlDeviceGetPciInfo_v3, d, &pci)) {
		pci.busId[sizeof(pci.busId) - 1] = 0;
		g->pci_bus_id = strdup(pci.busId);
	} else {
		g->pci_bus_id = strdup("");
	}
	g->cc_major = g->cc_minor = -1;
	if (OPT_CALL(n, nvmlDeviceGetCudaComputeCapability, d, &maj, &min)) {
		g->cc_major = maj;
		g->cc_minor = min;
	}
	g->arch = OPT_CALL(n, nvmlDeviceGetArchitecture, d, &v) ? v : 0;
	g->numa_node = OPT_CALL(n, nvmlDeviceGetNumaNodeId, d, &v) ? (int)v : -1;
	g->mig_current = g->mig_pending = -1;
	if (OPT_CALL(n, nvmlDeviceGetMigMode, d, &cur, &pend)) {
		g->mig_current = cur == NVML_DEVICE_MIG_ENABLE;
		g->mig_pending = pend == NVML_DEVICE_MIG_ENABLE;
	}
	g->util_gpu = g->util_mem = -1;
	if (OPT_CALL(n, nvmlDeviceGetUtilizationRates, d, &u)) {
		g->util_gpu = (int)u.gpu;
		g->util_mem = (int)u.memory;
	}
	g->power_mw = OPT_CALL(n, nvmlDeviceGetPowerUsage, d, &v) ? (int64_t)v : -1;
	g->energy_mj = OPT_CALL(n, nvmlDeviceGetTotalEnergyConsumption, d, &e) ? (int64_t)e : -1;
	g->temp_c = OPT_CALL(n, nvmlDeviceGetTemperature, d, NVML_TEMPERATURE_GPU, &v) ? (int)v : -1;
	g->mem_temp_c = -1; /* NVML has no stable call for it: left out */
	g->sm_clock = OPT_CALL(n, nvmlDeviceGetClockInfo, d, NVML_CLOCK_SM, &v) ? (int)v : -1;
	g->mem_clock = OPT_CALL(n, nvmlDeviceGetClockInfo, d, NVML_CLOCK_MEM, &v) ? (int)v : -1;
}

typedef nvmlReturn_t (*proc_fn)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);

/* Appends the processes of one list (compute or graphics), skipping ones
 * already listed.  Returns 0 or CARVE_ENOMEM. */
static int add_procs(proc_fn fn, nvmlDevice_t d, struct nd_gpu *g)
{
	nvmlProcessInfo_t *v = NULL;
	unsigned cnt = 0, i;
	size_t k;
	nvmlReturn_t r;
	int tries;

	if (!fn)
		return 0;
	for (tries = 0; tries < 4; tries++) {
		unsigned want = cnt;

		r = fn(d, &cnt, v);
		if (r == NVML_SUCCESS)
			break;
		if (r != NVML_ERROR_INSUFFICIENT_SIZE) {
			free(v);
			return 0; /* not supported or no permission: no process list */
		}
		free(v);
		cnt = (cnt > want ? cnt : want) + 8; /* room for ones starting meanwhile */
		v = calloc(cnt, sizeof(*v));
		if (!v)
			return CARVE_ENOMEM;
	}
	if (r != NVML_SUCCESS) {
		free(v);
		return 0;
	}
	for (i = 0; i < cnt; i++) {
		struct nd_proc p = {
			.pid = v[i].pid,
			.mem_used = v[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE
					    ? -1 : (int64_t)v[i].usedGpuMemory,
			.gi_id = v[i].gpuInstanceId == 0xFFFFFFFFu ? -1 : (int)v[i].gpuInstanceId,
			.ci_id = v[i].computeInstanceId == 0xFFFFFFFFu ? -1 : (int)v[i].computeInstanceId,
		};
		struct nd_proc *np;
		bool dup = false;

		for (k = 0; k < g->nproc && !dup; k++)
			dup = g->proc[k].pid == p.pid && g->proc[k].gi_id == p.gi_id &&
			      g->proc[k].ci_id == p.ci_id;
		if (dup)
			continue;
		np = realloc(g->proc, (g->nproc + 1) * sizeof(*np));
		if (!np) {
			free(v);
			return CARVE_ENOMEM;
		}
		g->proc = np;
		g->proc[g->nproc++] = p;
	}
	free(v);
	return 0;
}

static int mig_cmp(const void *a, const void *b)
{
	const struct nd_mig *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->gi_id < y->gi_id ? -1 : x->gi_id > y->gi_id;
}

/*
 * The profile of MIG device md from its name, which the driver gives as
 * "<GPU name> MIG <profile>" ("NVIDIA H100 80GB HBM3 MIG 1g.10gb"): the
 * way left when the GPU-instance calls are refused (they may need root).
 * Returns a static buffer, "" when the name does not say.
 */
static const char *mig_name_profile(struct nd_nvml *n, nvmlDevice_t md)
{
	static __thread char prof[32];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	const char *p;

	prof[0] = 0;
	if (n->f.nvmlDeviceGetName(md, name, sizeof(name)) != NVML_SUCCESS)
		return prof;
	name[sizeof(name) - 1] = 0;
	p = strstr(name, " MIG ");
	if (p && strlen(p + 5) < sizeof(prof) && !strchr(p + 5, ' '))
		memcpy(prof, p + 5, strlen(p + 5) + 1);
	return prof;
}

/* The MIG devices of a MIG-enabled GPU.  Returns 0, CARVE_EIO, CARVE_ENOMEM. */
static int gpu_migs(struct nd_nvml *n, nvmlDevice_t d, struct nd_gpu *g,
		    struct carve_error *err)
{
	struct nd_gi_profile prof[NVML_GPU_INSTANCE_PROFILE_COUNT_MAX];
	unsigned max = 0, i;
	int np;

	if (!OPT_CALL(n, nvmlDeviceGetMaxMigDeviceCount, d, &max) ||
	    !n->f.nvmlDeviceGetMigDeviceHandleByIndex || !n->f.nvmlDeviceGetGpuInstanceId ||
	    !n->f.nvmlDeviceGetComputeInstanceId)
		return 0;
	np = nd_gi_profiles(n, d, g->name, prof, NVML_GPU_INSTANCE_PROFILE_COUNT_MAX);
	g->mig = calloc(max ? max : 1, sizeof(*g->mig));
	if (!g->mig)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	for (i = 0; i < max; i++) {
		struct nd_mig *m = &g->mig[g->nmig];
		char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
		const struct nd_gi_profile *pp = NULL;
		nvmlGpuInstance_t gi;
		nvmlGpuInstanceInfo_t info;
		nvmlMemory_t mem;
		nvmlDevice_t md;
		nvmlReturn_t r;
		size_t k;

		r = n->f.nvmlDeviceGetMigDeviceHandleByIndex(d, i, &md);
		if (r == NVML_ERROR_NOT_FOUND || r == NVML_ERROR_INVALID_ARGUMENT)
			continue; /* no MIG device at this index */
		if (r != NVML_SUCCESS)
			return carve_errorf(err, CARVE_EIO,
					    "GPU %u: nvmlDeviceGetMigDeviceHandleByIndex(%u): %s",
					    g->index, i, nd_nvml_errstr(n, r));
		if ((r = n->f.nvmlDeviceGetGpuInstanceId(md, &m->gi_id)) != NVML_SUCCESS ||
		    (r = n->f.nvmlDeviceGetComputeInstanceId(md, &m->ci_id)) != NVML_SUCCESS)
			return carve_errorf(err, CARVE_EIO, "GPU %u MIG device %u: instance ids: %s",
					    g->index, i, nd_nvml_errstr(n, r));
		if ((r = n->f.nvmlDeviceGetUUID(md, uuid, sizeof(uuid))) != NVML_SUCCESS)
			return carve_errorf(err, CARVE_EIO, "GPU %u MIG device %u: nvmlDeviceGetUUID: %s",
					    g->index, i, nd_nvml_errstr(n, r));
		m->mem_total = m->mem_used = -1;
		if (n->f.nvmlDeviceGetMemoryInfo(md, &mem) == NVML_SUCCESS) {
			m->mem_total = (int64_t)mem.total;
			m->mem_used = (int64_t)mem.used;
		}
		memset(&info, 0, sizeof(info));
		m->gi_profile_id = m->start = m->size = UINT_MAX;
		if (OPT_CALL(n, nvmlDeviceGetGpuInstanceById, d, m->gi_id, &gi) &&
		    OPT_CALL(n, nvmlGpuInstanceGetInfo, gi, &info)) {
			m->gi_profile_id = info.profileId;
			m->start = info.placement.start;
			m->size = info.placement.size;
			pp = profile_by_id(prof, np, info.profileId);
		}
		m->sm_count = pp ? pp->sm_count : 0;
		m->uuid = strdup(uuid);
		m->profile = strdup(pp ? pp->name : mig_name_profile(n, md));
		g->nmig++;
		if (!m->uuid || !m->profile)
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
		for (k = 0; k + 1 < g->nmig; k++)
			if (g->mig[k].gi_id == m->gi_id && g->mig[k].ci_id == m->ci_id)
				return carve_errorf(err, CARVE_EIO, "GPU %u: MIG devices %zu and %u "
						    "have the same instance ids %u/%u", g->index,
						    k, i, m->gi_id, m->ci_id);
	}
	qsort(g->mig, g->nmig, sizeof(*g->mig), mig_cmp);
	return 0;
}

static int gpu_snapshot(struct nd_nvml *n, unsigned i, struct nd_gpu *g, struct carve_error *err)
{
	char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	nvmlDevice_t d = n->dev[i];
	nvmlMemory_t mem;
	nvmlReturn_t r;
	int rc;

	g->index = i;
	if ((r = n->f.nvmlDeviceGetUUID(d, buf, sizeof(buf))) != NVML_SUCCESS)
		return carve_errorf(err, CARVE_EIO, "GPU %u: nvmlDeviceGetUUID: %s", i,
				    nd_nvml_errstr(n, r));
	g->uuid = strdup(buf);
	if ((r = n->f.nvmlDeviceGetName(d, buf, sizeof(buf))) != NVML_SUCCESS)
		return carve_errorf(err, CARVE_EIO, "GPU %u (%s): nvmlDeviceGetName: %s", i,
				    g->uuid ? g->uuid : "?", nd_nvml_errstr(n, r));
	g->name = strdup(buf);
	if ((r = n->f.nvmlDeviceGetMemoryInfo(d, &mem)) != NVML_SUCCESS)
		return carve_errorf(err, CARVE_EIO, "GPU %u (%s): nvmlDeviceGetMemoryInfo: %s", i,
				    g->uuid ? g->uuid : "?", nd_nvml_errstr(n, r));
	g->mem_total = (int64_t)mem.total;
	g->mem_used = (int64_t)mem.used;
	g->mem_free = (int64_t)mem.free;
	gpu_metrics(n, d, g);
	if (!g->uuid || !g->name || !g->pci_bus_id)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	if (add_procs(n->f.nvmlDeviceGetComputeRunningProcesses_v3, d, g) ||
	    add_procs(n->f.nvmlDeviceGetGraphicsRunningProcesses_v3, d, g))
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	if (g->mig_current == 1 && (rc = gpu_migs(n, d, g, err)))
		return rc;
	g->xid_count = n->xid_count[i];
	g->last_xid = n->last_xid[i];
	g->healthy = !n->unhealthy[i];
	return 0;
}

int nd_nvml_snapshot(struct nd_nvml *n, struct nd_snapshot *out, struct carve_error *err)
{
	char ver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "";
	nvmlReturn_t r;
	unsigned i;
	int cuda, rc = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&n->mu);
	if ((r = n->f.nvmlSystemGetDriverVersion(ver, sizeof(ver))) != NVML_SUCCESS) {
		rc = carve_errorf(err, CARVE_EIO, "nvmlSystemGetDriverVersion: %s",
				  nd_nvml_errstr(n, r));
		goto out;
	}
	out->driver_version = strdup(ver);
	out->cuda_major = out->cuda_minor = -1;
	if (OPT_CALL(n, nvmlSystemGetCudaDriverVersion_v2, &cuda)) {
		out->cuda_major = cuda / 1000; /* 12040 is CUDA 12.4 */
		out->cuda_minor = cuda % 1000 / 10;
	}
	out->gpus = calloc(n->ndev ? n->ndev : 1, sizeof(*out->gpus));
	if (!out->driver_version || !out->gpus) {
		rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n->ndev && !rc; i++) {
		out->ngpus++;
		rc = gpu_snapshot(n, i, &out->gpus[i], err);
	}
out:
	pthread_mutex_unlock(&n->mu);
	if (rc)
		nd_snapshot_free(out);
	return rc;
}

/* ---- events ---- */

/* Creates the event set and registers every GPU for Xids (once).  GPUs
 * that do not support the events are left out.  Returns 0 or CARVE_EIO. */
static int events_setup(struct nd_nvml *n, struct carve_error *err)
{
	nvmlReturn_t r;
	unsigned i;

	if (n->events_tried)
		return n->events ? 0 : carve_errorf(err, CARVE_EIO, "NVML events are not available");
	n->events_tried = true;
	if (!n->f.nvmlEventSetCreate || !n->f.nvmlDeviceRegisterEvents || !n->f.nvmlEventSetWait_v2)
		return carve_errorf(err, CARVE_EIO, "NVML events are not available "
				    "(nvmlEventSetCreate/nvmlEventSetWait_v2 missing)");
	if ((r = n->f.nvmlEventSetCreate(&n->events)) != NVML_SUCCESS) {
		n->events = NULL;
		return carve_errorf(err, CARVE_EIO, "nvmlEventSetCreate: %s", nd_nvml_errstr(n, r));
	}
	for (i = 0; i < n->ndev; i++) {
		r = n->f.nvmlDeviceRegisterEvents(n->dev[i], nvmlEventTypeXidCriticalError, n->events);
		if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED)
			return carve_errorf(err, CARVE_EIO, "GPU %u: nvmlDeviceRegisterEvents: %s", i,
					    nd_nvml_errstr(n, r));
	}
	return 0;
}

int nd_nvml_poll_events(struct nd_nvml *n, int timeout_ms, struct carve_error *err)
{
	unsigned wait = timeout_ms > 0 ? (unsigned)timeout_ms : 0;
	int seen = 0, rc;

	pthread_mutex_lock(&n->mu);
	rc = events_setup(n, err);
	pthread_mutex_unlock(&n->mu);
	if (rc)
		return rc;
	for (;;) {
		nvmlEventData_t ev;
		nvmlReturn_t r;
		unsigned i;

		memset(&ev, 0, sizeof(ev));
		/* Waits without the lock: snapshots go on meanwhile. */
		r = n->f.nvmlEventSetWait_v2(n->events, &ev, wait);
		if (r == NVML_ERROR_TIMEOUT)
			return seen;
		if (r != NVML_SUCCESS)
			return seen ? seen
				    : carve_errorf(err, CARVE_EIO, "nvmlEventSetWait_v2: %s",
						   nd_nvml_errstr(n, r));
		wait = 0; /* drain what is queued, then return */
		if (!(ev.eventType & nvmlEventTypeXidCriticalError))
			continue;
		pthread_mutex_lock(&n->mu);
		for (i = 0; i < n->ndev; i++) {
			if (n->dev[i] != ev.device)
				continue;
			n->xid_count[i]++;
			n->last_xid[i] = (unsigned)ev.eventData;
			if (nd_xid_critical((unsigned)ev.eventData))
				n->unhealthy[i] = true;
			seen++;
		}
		pthread_mutex_unlock(&n->mu);
	}
}
