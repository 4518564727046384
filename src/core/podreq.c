/*
 * podreq.c - one podSet's per-pod placement request (carve_pod_req) from
 * the engine's podSet spec: the one mapping from requested resources to
 * the GPU device a pod needs, used by the admission engine's callers
 * (the simulator's probes, the baseline, the fragmentation mix).
 *
 * Invariant: the request borrows every string and array from the spec;
 * nothing is allocated.  A pod asks for at most one kind of GPU device.
 */
#include <string.h>

#include "carve/place.h"
#include "carve/resource.h"

int carve_pod_req_of(const struct carve_podset_spec *ps, struct carve_pod_req *r,
		     struct carve_error *err)
{
	int kinds = 0;
	size_t k;

	memset(r, 0, sizeof(*r));
	for (k = 0; k < ps->nreqs; k++) {
		const char *name = ps->reqs[k].name, *prof = NULL;
		int64_t m = ps->reqs[k].milli;
		enum carve_res_kind rk = carve_res_kind(name, &prof);
		enum carve_gpu_req kind = carve_res_greq(rk);

		if (rk == CARVE_RK_CPU) {
			r->cpu_milli = m;
			continue;
		}
		if (rk == CARVE_RK_MEMORY) {
			r->memory_milli = m;
			continue;
		}
		if (kind == CARVE_GREQ_NONE)
			continue; /* not a device the placer knows: quota only */
		if (m <= 0)
			continue;
		kinds++;
		r->gpu = kind;
		r->mig_profile = kind == CARVE_GREQ_MIG ? prof : NULL;
		if (m % 1000 || m / 1000 > CARVE_POD_MAX_GPUS)
			return carve_errorf(err, CARVE_EINVAL, "podSet %s: %s wants a whole number "
					    "of devices from 1 to %d per pod", ps->name, name,
					    CARVE_POD_MAX_GPUS);
		r->count = (int)(m / 1000);
	}
	if (ps->gpu_milli || ps->gpu_mem_mib) {
		if (ps->gpu_milli < 0 || ps->gpu_milli > 999)
			return carve_errorf(err, CARVE_EINVAL, "podSet %s: a GPU fraction must be "
					    "above 0 and below 1", ps->name);
		r->gpu = CARVE_GREQ_FRACTION;
		r->count = 0;
		r->milli = ps->gpu_milli;
		r->mem_mib = ps->gpu_mem_mib;
		kinds++;
	}
	r->nselector = ps->nselector;
	r->selector = ps->selector;
	r->nterms = ps->nterms;
	r->terms = ps->terms;
	r->ntolerations = ps->ntolerations;
	r->tolerations = ps->tolerations;
	if (kinds > 1)
		return carve_errorf(err, CARVE_EINVAL, "podSet %s asks for more than one kind of "
				    "GPU device per pod (MIG profiles, whole, shared or fractional "
				    "GPUs); it cannot be placed", ps->name);
	return 0;
}
