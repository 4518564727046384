/*
 * podreq.c - one podSet's per-pod placement request (carve_pod_req) from
 * the engine's podSet spec: the one mapping from requested resources to
 * the GPU device a pod needs, used by the admission engine's callers
 * (the simulator's probes, the baseline, the fragmentation mix).
 *
 * Also: what static requirement keeps a pod off every node, for the
 * engine's pending messages (carve_pod_why_nowhere).
 *
 * Invariant: the request borrows every string and array from the spec;
 * nothing is allocated.  A pod asks for at most one kind of GPU device.
 */
#include <stdio.h>
#include <string.h>

#include "carve/match.h"
#include "carve/mig.h"
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

/* ---- why a pod fits no node ---- */

/* Whether req's affinity holds the bridge's device-name family filter. */
static bool names_filtered(const struct carve_pod_req *req)
{
	size_t t, e;

	for (t = 0; t < req->nterms; t++)
		for (e = 0; e < req->terms[t].n; e++)
			if (!strcmp(req->terms[t].exprs[e].key, CARVE_DEVICE_NAMES_LABEL))
				return true;
	return false;
}

/* Whether GPU g is of the kind req asks for (ignoring what is free now). */
static bool gpu_kind_ok(const struct carve_gpu *g, const struct carve_pod_req *req)
{
	switch (req->gpu) {
	case CARVE_GREQ_WHOLE:
		return g->sharing == CARVE_SHARE_EXCLUSIVE || g->sharing == CARVE_SHARE_FRACTION;
	case CARVE_GREQ_MIG:
		return g->sharing == CARVE_SHARE_MIG && g->mig_model && req->mig_profile &&
		       carve_mig_profile_find(g->mig_model, req->mig_profile) >= 0;
	case CARVE_GREQ_REPLICA:
		return g->sharing == CARVE_SHARE_TIMESLICE && !(g->fail_gt_one && req->count > 1);
	case CARVE_GREQ_FRACTION:
		return g->sharing == CARVE_SHARE_FRACTION &&
		       (!req->mem_mib || !g->memory_mib || req->mem_mib <= g->memory_mib);
	case CARVE_GREQ_GPU:
		return g->sharing != CARVE_SHARE_MIG &&
		       !(g->sharing == CARVE_SHARE_TIMESLICE && g->fail_gt_one && req->count > 1);
	default:
		return true;
	}
}

/* What is missing when no selected, tolerated node has a GPU of the kind. */
static void kind_missing(const struct carve_cluster *c, const struct carve_pod_req *req,
			 char *buf, size_t size)
{
	size_t n = carve_cluster_gpu_count(c), g;
	bool fraction = false, gt_one = false;

	for (g = 0; g < n; g++) {
		const struct carve_gpu *gpu = carve_cluster_gpu(c, (uint32_t)g);

		fraction |= gpu->sharing == CARVE_SHARE_FRACTION;
		gt_one |= gpu->sharing == CARVE_SHARE_TIMESLICE && gpu->fail_gt_one;
	}
	switch (req->gpu) {
	case CARVE_GREQ_FRACTION:
		if (fraction && req->mem_mib)
			snprintf(buf, size, "no GPU it may use that takes fractions has %u MiB",
				 req->mem_mib);
		else
			snprintf(buf, size, "no GPU it may use takes fractions (each is divided by "
				 "MIG or time-slicing, or its pool's sharing mode is exclusive)");
		break;
	case CARVE_GREQ_MIG:
		snprintf(buf, size, "no MIG GPU it may use offers profile %s",
			 req->mig_profile ? req->mig_profile : "?");
		break;
	case CARVE_GREQ_REPLICA:
		snprintf(buf, size, gt_one && req->count > 1
			 ? "time-sliced GPUs with failRequestsGreaterThanOne serve one replica per pod"
			 : "no GPU it may use is time-sliced");
		break;
	case CARVE_GREQ_GPU:
		snprintf(buf, size, gt_one && req->count > 1
			 ? "time-sliced GPUs with failRequestsGreaterThanOne serve one replica per pod"
			 : "no node it may use has a GPU outside MIG");
		break;
	default:
		snprintf(buf, size, "no node it may use has a whole GPU");
		break;
	}
}

/* How many devices of the kind req asks for GPU g can give one pod at most
 * (ignoring what is taken now): MIG instances of the profile its layout
 * has (or, with no such instance, as many as the model allows, which a
 * repartition could make), time-slice replicas, else one whole GPU. */
static int gpu_devices(const struct carve_gpu *g, const struct carve_pod_req *req)
{
	if (!gpu_kind_ok(g, req))
		return 0;
	switch (req->gpu) {
	case CARVE_GREQ_MIG: {
		int k = carve_mig_profile_find(g->mig_model, req->mig_profile), n = 0;
		uint8_t i;

		for (i = 0; i < g->mig.n; i++)
			n += g->mig.inst[i].profile == k;
		return n ? n : g->mig_model->profiles[k].max_count;
	}
	case CARVE_GREQ_REPLICA:
		return (int)g->replicas;
	case CARVE_GREQ_GPU:
		return g->sharing == CARVE_SHARE_TIMESLICE ? (int)g->replicas : 1;
	default:
		return 1;
	}
}

const char *carve_pod_why_nowhere(const struct carve_cluster *c, const struct carve_pod_req *req,
				  char *buf, size_t size)
{
	size_t nn = carve_cluster_node_count(c), i;
	size_t selected = 0, tolerated = 0, kind = 0, devices = 0, enough = 0;
	const struct carve_taint_spec *taint = NULL;

	for (i = 0; i < nn; i++) {
		const struct carve_node *n = carve_cluster_node(c, (uint32_t)i);
		struct carve_labels l = carve_labels_of(n->labels, n->nlabels);
		const struct carve_taint_spec *t;
		uint32_t g;
		int have = 0, ngpus = 0;

		if (!carve_match_selector(&l, req->selector, req->nselector, CARVE_MATCH_ALL_KEYS,
					  NULL) ||
		    (req->nterms &&
		     !carve_match_terms(&l, req->terms, req->nterms, CARVE_MATCH_ALL_KEYS)))
			continue;
		selected++;
		t = carve_untolerated_taint(n->taints, n->ntaints, req->tolerations,
					    req->ntolerations);
		if (t) {
			if (!taint)
				taint = t;
			continue;
		}
		tolerated++;
		for (g = n->gpu_first; g < n->gpu_first + n->ngpus; g++) {
			int d = gpu_devices(carve_cluster_gpu(c, g), req);

			have += d;
			ngpus += d > 0;
		}
		if (req->gpu != CARVE_GREQ_NONE && !ngpus)
			continue;
		kind++;
		if (req->gpu != CARVE_GREQ_NONE && req->gpu != CARVE_GREQ_FRACTION &&
		    have < req->count)
			continue;
		devices++;
		/* allocatable 0 is no limit, as for the placer */
		if ((n->cpu_milli > 0 && req->cpu_milli > n->cpu_milli) ||
		    (n->memory_milli > 0 && req->memory_milli > n->memory_milli))
			continue;
		enough++;
	}
	if (!selected)
		snprintf(buf, size, "no node matches its nodeSelector and required node affinity%s",
			 names_filtered(req) ? ", which keeps it on nodes serving the device names it "
			 "asks for (" CARVE_DEVICE_NAMES_LABEL ")" : "");
	else if (!tolerated)
		snprintf(buf, size, "every node it selects has a taint it does not tolerate (%s%s%s:%s)",
			 taint->key ? taint->key : "", taint->value && *taint->value ? "=" : "",
			 taint->value ? taint->value : "", taint->effect ? taint->effect : "");
	else if (!kind)
		kind_missing(c, req, buf, size);
	else if (!devices)
		snprintf(buf, size, "no node it may use has %d of the devices it asks for",
			 req->count);
	else if (!enough)
		snprintf(buf, size, "no node it may use has the cpu and memory of one pod");
	else
		return NULL;
	return buf;
}
