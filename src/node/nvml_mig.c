/*
 * nvml_mig.c - nd_mig_apply: makes one GPU hold exactly a wanted MIG
 * layout through NVML.  Order: check the layout against the MIG table
 * (src/core) and the GPU's own profiles, list the GPU instances there are,
 * keep the ones wanted as they are (same profile, same start), refuse when
 * one to destroy runs a process, then destroy (compute instances first,
 * then GPU instances), then create (GPU instance at its placement, then
 * one compute instance spanning it).  Nothing changes before every check
 * has passed; a failure half-way names what was already done.  MIG mode is
 * never changed here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "carve/mig.h"
#include "nvml_int.h"

#define MAX_GI 16

/* A GPU instance there is now. */
struct cur_gi {
	nvmlGpuInstance_t h;
	nvmlGpuInstanceInfo_t info;
	const struct nd_gi_profile *prof;
	bool keep;
};

/* What was done so far, for the error of a failure half-way. */
struct done {
	char text[160];
	size_t len;
};

static void done_add(struct done *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void done_add(struct done *d, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (d->len >= sizeof(d->text) - 1)
		return;
	if (d->len)
		d->text[d->len++] = ',', d->text[d->len] = 0;
	va_start(ap, fmt);
	k = vsnprintf(d->text + d->len, sizeof(d->text) - d->len, fmt, ap);
	va_end(ap);
	d->len = k < 0 ? d->len : d->len + (size_t)k;
	if (d->len >= sizeof(d->text))
		d->len = sizeof(d->text) - 1;
}

static int fail(struct carve_error *err, int code, const struct done *d, unsigned gpu,
		const char *what, const char *why)
{
	return carve_errorf(err, code, "GPU %u: %s: %s; done before the failure: %s", gpu, what,
			    why, d->len ? d->text : "nothing");
}

static const struct nd_gi_profile *prof_by_name(const struct nd_gi_profile *v, int n,
						const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/* Checks the layout against the MIG table of the GPU's model and the
 * profiles the GPU offers.  Returns 0 or CARVE_EINVAL. */
static int check_want(const struct nd_mig_layout *want, const char *gpu_name,
		      const struct nd_gi_profile *prof, int np, struct carve_error *err)
{
	const struct carve_mig_model *mm = carve_mig_model_find(gpu_name);
	struct carve_mig_layout l;
	struct carve_error e;
	size_t i;

	if (!mm)
		return carve_errorf(err, CARVE_EINVAL, "GPU %u: %s is not in carve's MIG table",
				    want->gpu, gpu_name);
	if (want->n > CARVE_MIG_MAX_INST || want->n > sizeof(want->v) / sizeof(want->v[0]))
		return carve_errorf(err, CARVE_EINVAL, "GPU %u: %zu MIG devices asked; at most %d",
				    want->gpu, want->n, CARVE_MIG_MAX_INST);
	memset(&l, 0, sizeof(l));
	for (i = 0; i < want->n; i++) {
		int p = carve_mig_profile_find(mm, want->v[i].profile);

		if (p < 0)
			return carve_errorf(err, CARVE_EINVAL, "GPU %u: MIG profile %s does not exist "
					    "on %s", want->gpu, want->v[i].profile, mm->name);
		if (!prof_by_name(prof, np, want->v[i].profile))
			return carve_errorf(err, CARVE_EINVAL, "GPU %u: the driver offers no MIG "
					    "profile %s", want->gpu, want->v[i].profile);
		if (want->v[i].start > 255)
			return carve_errorf(err, CARVE_EINVAL, "GPU %u: %s at slice %u: no such slice",
					    want->gpu, want->v[i].profile, want->v[i].start);
		l.inst[l.n].profile = (uint8_t)p;
		l.inst[l.n].start = (uint8_t)want->v[i].start;
		l.n++;
	}
	if (carve_mig_layout_check(mm, &l, &e))
		return carve_errorf(err, CARVE_EINVAL, "GPU %u: illegal MIG layout for %s: %s",
				    want->gpu, mm->name, e.text);
	return 0;
}

/* Lists the GPU instances of every profile.  Returns how many, or a
 * negative carve code. */
static int list_gis(struct nd_nvml *n, nvmlDevice_t d, const struct nd_gi_profile *prof, int np,
		    struct cur_gi *out, unsigned gpu, struct carve_error *err)
{
	int k = 0, p;

	for (p = 0; p < np; p++) {
		nvmlGpuInstance_t v[MAX_GI];
		unsigned cnt = MAX_GI, i;
		nvmlReturn_t r = n->f.nvmlDeviceGetGpuInstances(d, prof[p].id, v, &cnt);

		if (r != NVML_SUCCESS)
			return carve_errorf(err, CARVE_EIO, "GPU %u: nvmlDeviceGetGpuInstances(%s): %s",
					    gpu, prof[p].name, nd_nvml_errstr(n, r));
		for (i = 0; i < cnt && k < MAX_GI; i++, k++) {
			out[k].h = v[i];
			out[k].prof = &prof[p];
			out[k].keep = false;
			r = n->f.nvmlGpuInstanceGetInfo(v[i], &out[k].info);
			if (r != NVML_SUCCESS)
				return carve_errorf(err, CARVE_EIO, "GPU %u: nvmlGpuInstanceGetInfo: %s",
						    gpu, nd_nvml_errstr(n, r));
		}
	}
	return k;
}

/* The compute-instance profile spanning all of gi's compute slices. */
static bool full_ci_profile(struct nd_nvml *n, nvmlGpuInstance_t gi, unsigned slices,
			    unsigned *id)
{
	unsigned p, best = 0;
	bool found = false;

	for (p = 0; p < NVML_COMPUTE_INSTANCE_PROFILE_COUNT_MAX; p++) {
		nvmlComputeInstanceProfileInfo_v2_t info;

		memset(&info, 0, sizeof(info));
		info.version = nvmlComputeInstanceProfileInfo_v2;
		if (n->f.nvmlGpuInstanceGetComputeInstanceProfileInfoV(
			    gi, p, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info) != NVML_SUCCESS)
			continue;
		if (info.sliceCount <= slices && (!found || info.sliceCount > best)) {
			best = info.sliceCount;
			*id = info.id;
			found = true;
		}
	}
	return found;
}

/* Destroys every compute instance of gi; returns how many there were, or
 * -1 with *r set on a failure. */
static int destroy_cis(struct nd_nvml *n, nvmlGpuInstance_t gi, nvmlReturn_t *r, bool dry)
{
	unsigned p;
	int total = 0;

	for (p = 0; p < NVML_COMPUTE_INSTANCE_PROFILE_COUNT_MAX; p++) {
		nvmlComputeInstanceProfileInfo_v2_t info;
		nvmlComputeInstance_t v[MAX_GI];
		unsigned cnt = MAX_GI, i;

		memset(&info, 0, sizeof(info));
		info.version = nvmlComputeInstanceProfileInfo_v2;
		if (n->f.nvmlGpuInstanceGetComputeInstanceProfileInfoV(
			    gi, p, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &info) != NVML_SUCCESS)
			continue;
		if (n->f.nvmlGpuInstanceGetComputeInstances(gi, info.id, v, &cnt) != NVML_SUCCESS)
			continue;
		for (i = 0; i < cnt; i++) {
			total++;
			if (!dry && (*r = n->f.nvmlComputeInstanceDestroy(v[i])) != NVML_SUCCESS)
				return -1;
		}
	}
	return total;
}

/* CARVE_EBUSY when a process runs in an instance that is to go. */
static int check_busy(struct nd_nvml *n, nvmlDevice_t d, const struct cur_gi *gi, int ngi,
		      unsigned gpu, struct carve_error *err)
{
	nvmlReturn_t (*fns[2])(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *) = {
		n->f.nvmlDeviceGetComputeRunningProcesses_v3,
		n->f.nvmlDeviceGetGraphicsRunningProcesses_v3,
	};
	int f, k;

	for (f = 0; f < 2; f++) {
		nvmlProcessInfo_t v[256];
		unsigned cnt = 256, i;
		nvmlReturn_t r;

		if (!fns[f])
			continue;
		r = fns[f](d, &cnt, v);
		if (r == NVML_ERROR_NOT_SUPPORTED)
			continue;
		if (r != NVML_SUCCESS)
			return carve_errorf(err, CARVE_EIO, "GPU %u: cannot list its processes (%s); "
					    "MIG layout left as it is", gpu, nd_nvml_errstr(n, r));
		for (i = 0; i < cnt; i++)
			for (k = 0; k < ngi; k++)
				if (!gi[k].keep && v[i].gpuInstanceId == gi[k].info.id)
					return carve_errorf(
						err, CARVE_EBUSY,
						"GPU %u: process %u runs in MIG instance %s@%u (GI %u), "
						"which the layout removes; nothing changed",
						gpu, v[i].pid, gi[k].prof->name,
						gi[k].info.placement.start, gi[k].info.id);
	}
	return 0;
}

static bool has_mig_api(const struct nd_nvml *n)
{
	return n->f.nvmlDeviceGetMigMode && n->f.nvmlDeviceGetGpuInstanceProfileInfoV &&
	       n->f.nvmlDeviceGetGpuInstances && n->f.nvmlGpuInstanceGetInfo &&
	       n->f.nvmlDeviceCreateGpuInstanceWithPlacement && n->f.nvmlGpuInstanceDestroy &&
	       n->f.nvmlGpuInstanceGetComputeInstanceProfileInfoV &&
	       n->f.nvmlGpuInstanceGetComputeInstances &&
	       n->f.nvmlGpuInstanceCreateComputeInstance && n->f.nvmlComputeInstanceDestroy;
}

/* The work of nd_mig_apply, under the lock. */
static int apply(struct nd_nvml *n, const struct nd_mig_layout *want, struct carve_error *err)
{
	struct nd_gi_profile prof[NVML_GPU_INSTANCE_PROFILE_COUNT_MAX];
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	bool wanted_kept[8] = {false};
	struct cur_gi gi[MAX_GI];
	struct done done = {"", 0};
	unsigned gpu = want->gpu, cur, pend;
	nvmlDevice_t d;
	nvmlReturn_t r;
	int np, ngi, k, rc;
	size_t w;

	if (gpu >= n->ndev)
		return carve_errorf(err, CARVE_EINVAL, "GPU %u: no such GPU (the node has %u)", gpu,
				    n->ndev);
	d = n->dev[gpu];
	if (!has_mig_api(n))
		return carve_errorf(err, CARVE_EINVAL, "GPU %u: the NVML library lacks the MIG "
				    "functions (driver older than R510?)", gpu);
	if ((r = n->f.nvmlDeviceGetName(d, name, sizeof(name))) != NVML_SUCCESS)
		return carve_errorf(err, CARVE_EIO, "GPU %u: nvmlDeviceGetName: %s", gpu,
				    nd_nvml_errstr(n, r));
	r = n->f.nvmlDeviceGetMigMode(d, &cur, &pend);
	if (r != NVML_SUCCESS || cur != NVML_DEVICE_MIG_ENABLE)
		return carve_errorf(err, CARVE_EINVAL, "GPU %u (%s): MIG mode is not enabled%s%s",
				    gpu, name, r != NVML_SUCCESS ? ": " : "",
				    r != NVML_SUCCESS ? nd_nvml_errstr(n, r) : "");
	np = nd_gi_profiles(n, d, name, prof, NVML_GPU_INSTANCE_PROFILE_COUNT_MAX);
	if ((rc = check_want(want, name, prof, np, err)))
		return rc;
	ngi = list_gis(n, d, prof, np, gi, gpu, err);
	if (ngi < 0)
		return ngi;
	for (k = 0; k < ngi; k++)
		for (w = 0; w < want->n && !gi[k].keep; w++)
			if (!wanted_kept[w] && gi[k].info.placement.start == want->v[w].start &&
			    !strcmp(gi[k].prof->name, want->v[w].profile))
				gi[k].keep = wanted_kept[w] = true;
	if ((rc = check_busy(n, d, gi, ngi, gpu, err)))
		return rc;

	for (k = 0; k < ngi; k++) {
		char what[96];

		if (gi[k].keep)
			continue;
		snprintf(what, sizeof(what), "destroying %s@%u (GI %u)", gi[k].prof->name,
			 gi[k].info.placement.start, gi[k].info.id);
		if (destroy_cis(n, gi[k].h, &r, false) < 0)
			return fail(err, CARVE_EIO, &done, gpu, what, nd_nvml_errstr(n, r));
		if ((r = n->f.nvmlGpuInstanceDestroy(gi[k].h)) != NVML_SUCCESS)
			return fail(err, r == NVML_ERROR_IN_USE ? CARVE_EBUSY : CARVE_EIO, &done, gpu,
				    what, nd_nvml_errstr(n, r));
		done_add(&done, "destroyed %s@%u", gi[k].prof->name, gi[k].info.placement.start);
	}
	/* Kept instances without a compute instance get one. */
	for (k = 0; k < ngi; k++) {
		nvmlComputeInstance_t ci;
		unsigned cid;

		if (!gi[k].keep || destroy_cis(n, gi[k].h, &r, true) > 0)
			continue;
		if (!full_ci_profile(n, gi[k].h, gi[k].prof->slices, &cid))
			return fail(err, CARVE_EIO, &done, gpu, "compute instance", "no profile fits");
		if ((r = n->f.nvmlGpuInstanceCreateComputeInstance(gi[k].h, cid, &ci)) != NVML_SUCCESS)
			return fail(err, CARVE_EIO, &done, gpu, "nvmlGpuInstanceCreateComputeInstance",
				    nd_nvml_errstr(n, r));
		done_add(&done, "compute instance in %s@%u", gi[k].prof->name,
			 gi[k].info.placement.start);
	}
	for (w = 0; w < want->n; w++) {
		const struct nd_gi_profile *p = prof_by_name(prof, np, want->v[w].profile);
		nvmlGpuInstancePlacement_t pl = {want->v[w].start, p->mem_slices};
		nvmlGpuInstance_t h;
		nvmlComputeInstance_t ci;
		unsigned cid;
		char what[96];

		if (wanted_kept[w])
			continue;
		snprintf(what, sizeof(what), "creating %s@%u", p->name, pl.start);
		r = n->f.nvmlDeviceCreateGpuInstanceWithPlacement(d, p->id, &pl, &h);
		if (r != NVML_SUCCESS)
			return fail(err, CARVE_EIO, &done, gpu, what, nd_nvml_errstr(n, r));
		if (!full_ci_profile(n, h, p->slices, &cid)) {
			done_add(&done, "created GPU instance %s@%u", p->name, pl.start);
			return fail(err, CARVE_EIO, &done, gpu, "its compute instance",
				    "no compute-instance profile fits");
		}
		r = n->f.nvmlGpuInstanceCreateComputeInstance(h, cid, &ci);
		if (r != NVML_SUCCESS) {
			done_add(&done, "created GPU instance %s@%u", p->name, pl.start);
			return fail(err, CARVE_EIO, &done, gpu, "its compute instance",
				    nd_nvml_errstr(n, r));
		}
		done_add(&done, "created %s@%u", p->name, pl.start);
	}
	return 0;
}

int nd_mig_apply(struct nd_nvml *n, const struct nd_mig_layout *want, struct carve_error *err)
{
	int rc;

	pthread_mutex_lock(&n->mu);
	rc = apply(n, want, err);
	pthread_mutex_unlock(&n->mu);
	return rc;
}
