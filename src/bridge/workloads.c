/*
 * workloads.c - every source of workloads -> engine workloads: Kueue
 * Workloads, Volcano and KAI PodGroups, Jobs, JobSets and pods that Kueue
 * or KAI queue, Volcano Jobs (each first made a Workload, as the queueing
 * system makes one), and trace jobs, through one podSet conversion (MIG
 * slice charges, KAI fractions, topology levels, GPU models).  Part of the
 * bridge build (bridge_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge_int.h"
#include "carve/jobs.h"
#include "carve/match.h"

/* ---- workloads ---- */

/* Value of a (Workload)PriorityClass; WorkloadPriorityClass wins a tie. */
static bool priority_value(const struct carve_manifests *m, const char *name, int32_t *out)
{
	const struct carve_mf_priorityclass *hit = NULL;
	size_t i;

	for (i = 0; i < m->nwpcs; i++) {
		const struct carve_mf_priorityclass *p = &m->wpcs[i];

		if (strcmp(p->meta.name, name))
			continue;
		if (!hit || (!strcmp(p->meta.kind, "WorkloadPriorityClass") &&
			     strcmp(hit->meta.kind, "WorkloadPriorityClass")))
			hit = p;
	}
	if (hit)
		*out = hit->value;
	return hit != NULL;
}

static const struct carve_match_term *conv_terms(struct bld *b, size_t n,
						 const struct carve_nodeterm *t)
{
	struct carve_match_term *v = br_scratch(b, n, sizeof(*v));
	size_t i, j;

	for (i = 0; v && i < n; i++) {
		struct carve_match_expr *e = br_scratch(b, t[i].n, sizeof(*e));

		for (j = 0; e && j < t[i].n; j++) {
			e[j].key = t[i].v[j].key;
			e[j].op = t[i].v[j].op;
			e[j].nvalues = t[i].v[j].nvalues;
			e[j].values = (const char *const *)t[i].v[j].values;
		}
		v[i].n = t[i].n;
		v[i].exprs = e;
	}
	return v;
}

/* A podSet template annotation, or NULL. */
static const struct carve_kv *annotation(const struct carve_podspec *sp, const char *key)
{
	size_t i;

	for (i = 0; i < sp->annotations.n; i++)
		if (sp->annotations.v[i].key && !strcmp(sp->annotations.v[i].key, key))
			return &sp->annotations.v[i];
	return NULL;
}

/* The most memory (MiB) any GPU of the inventory has; 0 without nodes. */
static uint32_t largest_gpu_mib(const struct bld *b, const char **model)
{
	const struct carve_cluster *c;
	uint32_t best = 0;
	size_t g, n;

	*model = NULL;
	if (!b->ad->inv)
		return 0;
	c = b->ad->inv->cluster;
	n = carve_cluster_gpu_count(c);
	for (g = 0; g < n; g++) {
		const struct carve_gpu *gpu = carve_cluster_gpu(c, (uint32_t)g);

		if (gpu->memory_mib > best) {
			best = gpu->memory_mib;
			*model = gpu->model;
		}
	}
	return best;
}

/*
 * KAI-style fractional GPU annotations: "gpu-fraction" (0 < f < 1, to
 * milli) and "gpu-memory" (whole MiB) into src.  A malformed value is an
 * error at the annotation; false then: the workload must not be queued.
 * Whether the memory exists on some GPU is br_podset_spec()'s check.
 */
static bool gpu_share(struct bld *b, const struct carve_podspec *sp, const char *wl,
		      const char *ps, struct br_podset *src)
{
	const struct carve_kv *f = annotation(sp, "gpu-fraction");
	const struct carve_kv *mem = annotation(sp, "gpu-memory");
	bool ok = true;
	char *end;

	if (f && f->value) {
		double x = strtod(f->value, &end);
		long milli = x > 0 && x < 1 ? (long)(x * 1000.0 + 0.5) : 0;

		if (end == f->value || *end || !(x > 0 && x < 1) || milli < 1 || milli > 999) {
			carve_diag_error(b->diags, f->pos, "%s podSet %s: annotation "
					 "gpu-fraction '%s' is not a number above 0 and below 1 "
					 "(whole GPUs are requested as nvidia.com/gpu); not admitted",
					 wl, ps, f->value);
			ok = false;
		} else {
			src->gpu_milli = (int32_t)milli;
			src->share_pos = f->pos;
		}
	}
	if (mem && mem->value) {
		unsigned long long x = strtoull(mem->value, &end, 10);

		if (end == mem->value || *end || *mem->value == '-' || x < 1 || x > UINT32_MAX) {
			carve_diag_error(b->diags, mem->pos, "%s podSet %s: annotation "
					 "gpu-memory '%s' is not a whole number of MiB; not admitted",
					 wl, ps, mem->value);
			ok = false;
		} else {
			src->gpu_mem_mib = (uint32_t)x;
			src->mem_pos = mem->pos;
		}
	}
	return ok;
}

/* The GPU memory of a fraction must exist on some GPU (when the input
 * has nodes); an error at the request otherwise. */
static bool share_fits(struct bld *b, const char *what, const struct br_podset *src)
{
	const char *model;
	uint32_t most;

	if (!src->gpu_mem_mib)
		return true;
	most = largest_gpu_mib(b, &model);
	if (!most || src->gpu_mem_mib <= most)
		return true;
	carve_diag_error(b->diags, src->mem_pos.line ? src->mem_pos : src->pos,
			 "%s podSet %s: %s %u MiB is more than any GPU has (largest: %s, %u MiB); "
			 "not admitted", what, src->name, src->mem_what ? src->mem_what : "gpu-memory",
			 src->gpu_mem_mib, model ? model : "?", most);
	return false;
}

/* Where request j of src was written: its own position, else the podSet's. */
static struct carve_pos req_pos(const struct br_podset *src, size_t j)
{
	return src->req_pos && src->req_pos[j].line ? src->req_pos[j] : src->pos;
}

/*
 * Every nvidia.com/mig-<profile> (or carve.dev/mig-<profile>) request names
 * a profile some GPU model of the MIG table (mig_profiles.c) offers, and
 * every name in carve's device domain is one of carve's device names
 * (carve_res_check_name); a bad one is an error at the request and false:
 * the workload must not be queued.
 */
static bool mig_known(struct bld *b, const char *what, const struct br_podset *src)
{
	bool ok = true;
	size_t j;

	for (j = 0; j < src->nreqs; j++) {
		const struct carve_req *r = &src->reqs[j];
		const char *prof;
		struct carve_error err;
		int k;

		if (carve_res_check_name(r->name, &err)) {
			carve_diag_error(b->diags, req_pos(src, j), "%s podSet %s: %s; not admitted",
					 what, src->name, err.text);
			ok = false;
			continue;
		}
		if (carve_res_kind(r->name, &prof) != CARVE_RK_MIG || r->milli <= 0)
			continue;
		for (k = 0; k < carve_mig_model_count(); k++)
			if (carve_mig_profile_find(carve_mig_model_at(k), prof) >= 0)
				break;
		if (k < carve_mig_model_count())
			continue;
		carve_diag_error(b->diags, req_pos(src, j), "%s podSet %s: resource %s: no GPU "
				 "model offers MIG profile '%s'; not admitted", what, src->name,
				 r->name, prof);
		ok = false;
	}
	return ok;
}

/* True when level is one of the n levels lv. */
static bool has_level(const char *const *lv, size_t n, const char *level)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(lv[i], level))
			return true;
	return false;
}

/*
 * True when level is a topology level of some flavor of ClusterQueue
 * cqname: the levels of the Topology its topologyName names, or the default
 * levels (carve_topology_levels) for a flavor without one (and when the
 * queue is unknown).  The levels it could use go to `levels` for messages.
 */
static bool cq_has_level(struct bld *b, const char *cqname, const char *level, char *levels,
			 size_t size)
{
	const struct carve_mf_cq *cq = cqname ? carve_mf_find_cq(b->m, cqname) : NULL;
	bool found = false, dflt = !cq;
	size_t g, f, k, used = 0;

	levels[0] = '\0';
	for (g = 0; cq && g < cq->ngroups; g++)
		for (f = 0; f < cq->groups[g].nflavors; f++) {
			const struct carve_mf_flavor *fl =
				carve_mf_find_flavor(b->m, cq->groups[g].flavors[f].flavor);
			const struct carve_mf_topology *t = fl && fl->topology_name
				? carve_mf_find_topology(b->m, fl->topology_name) : NULL;

			if (!t) {
				dflt = true;
				continue;
			}
			if (has_level(t->levels, t->nlevels, level))
				found = true;
			for (k = 0; k < t->nlevels && used < size; k++)
				used += (size_t)snprintf(levels + used, size - used, "%s%s",
							 used ? ", " : "", t->levels[k]);
		}
	if (dflt) {
		if (has_level(carve_topology_levels, CARVE_TOPOLOGY_NLEVELS, level))
			found = true;
		for (k = 0; k < CARVE_TOPOLOGY_NLEVELS && used < size; k++)
			used += (size_t)snprintf(levels + used, size - used, "%s%s",
						 used ? ", " : "", carve_topology_levels[k]);
	}
	return found;
}

/*
 * Kueue TAS annotations: "kueue.x-k8s.io/podset-required-topology" (wins
 * when both are set) or "-preferred-topology", naming the node label of a
 * topology level.  Both are read into src (the level check against the
 * queue's flavors is topology_ok()).
 */
static void podset_topology(const struct carve_podspec *sp, struct br_podset *src)
{
	static const char *const keys[2] = {"kueue.x-k8s.io/podset-required-topology",
					    "kueue.x-k8s.io/podset-preferred-topology"};
	static const char *const whats[2] = {
		"annotation kueue.x-k8s.io/podset-required-topology",
		"annotation kueue.x-k8s.io/podset-preferred-topology"};
	int i;

	for (i = 0; i < 2; i++) {
		const struct carve_kv *t = annotation(sp, keys[i]);

		if (!t || !t->value)
			continue;
		src->topo[i].level = t->value;
		src->topo[i].what = whats[i];
		src->topo[i].pos = t->pos;
	}
}

/*
 * Each topology level src names must be a level of ClusterQueue cq's
 * flavors (a Kueue Topology's levels, or the default ones); another label
 * is an error at the annotation (or field).  The required one wins when
 * both are set.  False when the workload must not be queued.
 */
static bool topology_ok(struct bld *b, const char *what, const struct br_podset *src,
			const char *cq, struct carve_podset_spec *v)
{
	bool ok = true;
	int i;

	for (i = 0; i < 2; i++) {
		const struct br_topo *t = &src->topo[i];
		char levels[512];

		if (!t->level)
			continue;
		if (!cq_has_level(b, cq, t->level, levels, sizeof(levels))) {
			carve_diag_error(b->diags, t->pos.line ? t->pos : src->pos,
					 "%s podSet %s: %s '%s' is not a topology level of "
					 "ClusterQueue %s's flavors (%s); not admitted", what,
					 src->name, t->what, t->level, cq ? cq : "?", levels);
			ok = false;
			continue;
		}
		if (v->topology_level)
			continue; /* required already set */
		v->topology_level = t->level;
		v->topology_required = i == 0;
	}
	return ok;
}

/* ---- MIG quota in physical slices (docs/admission.md) ---- */


/* Slices of one instance of a profile: memory and compute (SM) slices. */
struct slices {
	int mem, cmp;
	const char *model; /* where they came from (messages) */
};

static bool cq_covers(const struct carve_mf_cq *cq, const char *res)
{
	size_t g, c;

	for (g = 0; g < cq->ngroups; g++)
		for (c = 0; c < cq->groups[g].ncovered; c++)
			if (cq->groups[g].covered[c] && !strcmp(cq->groups[g].covered[c], res))
				return true;
	return false;
}

/* Adds model's slices for prof to *acc; false when they disagree with
 * what *acc holds (acc->mem == 0: empty). */
static bool slices_add(struct slices *acc, const struct carve_mig_model *model, const char *prof)
{
	int k = carve_mig_profile_find(model, prof);

	if (k < 0)
		return true; /* this model does not offer it */
	if (!acc->mem) {
		acc->mem = model->profiles[k].mem_slices;
		acc->cmp = model->profiles[k].compute;
		acc->model = model->name;
		return true;
	}
	return acc->mem == model->profiles[k].mem_slices && acc->cmp == model->profiles[k].compute;
}

/* Whether node n carries every label of want (a flavor's nodeLabels). */
static bool labels_match(const struct carve_node *n, const struct carve_kvlist *want)
{
	struct carve_labels l = carve_labels_of(n->labels, n->nlabels);
	size_t i;

	for (i = 0; i < want->n; i++)
		if (!want->v[i].value || !carve_match_label(&l, want->v[i].key, want->v[i].value))
			return false;
	return true;
}

/*
 * The slices of prof on the GPUs flavor f stands for, into *out (mem 0:
 * f stands for no GPU offering it).  The model is f's
 * nvidia.com/gpu.product nodeLabel when set; else, when every model of the
 * MIG table that offers prof gives it the same slices, those; else the
 * MIG GPUs of the nodes f selects.  False when that is ambiguous.
 */
static bool flavor_slices(const struct bld *b, const struct carve_mf_flavor *f, const char *prof,
			  struct slices *out)
{
	const struct carve_cluster *c;
	size_t i, n;
	int k;

	memset(out, 0, sizeof(*out));
	for (i = 0; f && i < f->node_labels.n; i++)
		if (!strcmp(f->node_labels.v[i].key, "nvidia.com/gpu.product")) {
			const struct carve_mig_model *model =
				carve_mig_model_find(f->node_labels.v[i].value);

			if (model)
				slices_add(out, model, prof);
			return true;
		}
	for (k = 0; k < carve_mig_model_count(); k++)
		if (!slices_add(out, carve_mig_model_at(k), prof))
			break;
	if (k == carve_mig_model_count())
		return true;
	memset(out, 0, sizeof(*out));
	if (!b->ad->inv)
		return false;
	c = b->ad->inv->cluster;
	n = carve_cluster_node_count(c);
	for (i = 0; i < n; i++) {
		const struct carve_node *node = carve_cluster_node(c, (uint32_t)i);
		uint32_t g;

		if (f && !labels_match(node, &f->node_labels))
			continue;
		for (g = node->gpu_first; g < node->gpu_first + node->ngpus; g++) {
			const struct carve_gpu *gpu = carve_cluster_gpu(c, g);

			if (gpu->mig_model && !slices_add(out, gpu->mig_model, prof))
				return false;
		}
	}
	return true;
}

/*
 * The slices one prof instance is charged in ClusterQueue cq: those of
 * every flavor of the resource groups covering nvidia.com/mig-<prof> (or,
 * when none does, the slice resources), which must agree.  False, with the
 * models that disagree in *why, when they do not.
 */
static bool cq_slices(const struct bld *b, const struct carve_mf_cq *cq, const char *res,
		      const char *prof, struct slices *out, char *why, size_t whysz)
{
	const char *key = cq_covers(cq, res) ? res : NULL;
	size_t g, c, f;

	memset(out, 0, sizeof(*out));
	for (g = 0; g < cq->ngroups; g++) {
		bool in = false;

		for (c = 0; c < cq->groups[g].ncovered; c++) {
			const char *cov = cq->groups[g].covered[c];

			if (cov && (key ? !strcmp(cov, key)
					: !strcmp(cov, CARVE_RES_NAME_MIG_MEMORY_SLICES) ||
						  !strcmp(cov, CARVE_RES_NAME_MIG_COMPUTE_SLICES)))
				in = true;
		}
		for (f = 0; in && f < cq->groups[g].nflavors; f++) {
			const char *fname = cq->groups[g].flavors[f].flavor;
			struct slices one;

			if (!flavor_slices(b, carve_mf_find_flavor(b->m, fname), prof, &one)) {
				snprintf(why, whysz, "the nodes of flavor %s have GPU models that "
					 "give it different slices", fname);
				return false;
			}
			if (!one.mem)
				continue;
			if (!out->mem) {
				*out = one;
			} else if (out->mem != one.mem || out->cmp != one.cmp) {
				snprintf(why, whysz, "its flavors stand for GPU models that give it "
					 "different slices (%s: %d memory, %d compute; %s: %d, %d)",
					 out->model, out->mem, out->cmp, one.model, one.mem, one.cmp);
				return false;
			}
		}
	}
	if (!out->mem)
		snprintf(why, whysz, "none of its flavors stands for a GPU model that offers it");
	return out->mem > 0;
}

/*
 * When the workload's ClusterQueue covers carve.dev/mig-memory-slices or
 * carve.dev/mig-compute-slices, every nvidia.com/mig-<profile> request of
 * the podSet also asks for its instances' slices of those (the engine sums
 * a resource named twice).  Returns the requests to use (v itself when
 * nothing is added); false in *ok when a profile's slices cannot be told
 * (reported at the request).
 */
static const struct carve_req *mig_slice_reqs(struct bld *b, const char *cqname,
					      const char *what, const struct br_podset *src,
					      size_t *n, bool *ok)
{
	const struct carve_mf_cq *cq = cqname ? carve_mf_find_cq(b->m, cqname) : NULL;
	const struct carve_req *v = src->reqs;
	int64_t mem = 0, cmp = 0;
	struct carve_req *out;
	bool want_mem, want_cmp;
	size_t j, k;

	*n = src->nreqs;
	if (!cq)
		return v;
	want_mem = cq_covers(cq, CARVE_RES_NAME_MIG_MEMORY_SLICES);
	want_cmp = cq_covers(cq, CARVE_RES_NAME_MIG_COMPUTE_SLICES);
	if (!want_mem && !want_cmp)
		return v;
	for (j = 0; j < src->nreqs; j++) {
		const struct carve_req *r = &src->reqs[j];
		struct slices sl;
		const char *prof;
		char why[256];

		if (carve_res_kind(r->name, &prof) != CARVE_RK_MIG || r->milli <= 0)
			continue;
		if (!cq_slices(b, cq, r->name, prof, &sl, why, sizeof(why))) {
			carve_diag_error(b->diags, req_pos(src, j), "%s podSet %s: resource "
					 "%s: ClusterQueue %s charges MIG slices, but %s (set "
					 "nvidia.com/gpu.product in the flavor's nodeLabels); "
					 "not admitted", what, src->name, r->name, cq->meta.name, why);
			*ok = false;
			continue;
		}
		mem = carve_qty_sat_add(mem, carve_qty_sat_mul(r->milli, sl.mem));
		cmp = carve_qty_sat_add(cmp, carve_qty_sat_mul(r->milli, sl.cmp));
	}
	if (!mem)
		return v;
	out = br_scratch(b, *n + 2, sizeof(*out));
	if (!out)
		return v;
	for (k = 0; k < *n; k++)
		out[k] = v[k];
	if (want_mem) {
		out[k].name = CARVE_RES_NAME_MIG_MEMORY_SLICES;
		out[k++].milli = mem;
	}
	if (want_cmp) {
		out[k].name = CARVE_RES_NAME_MIG_COMPUTE_SLICES;
		out[k++].milli = cmp;
	}
	*n = k;
	return out;
}

/* GPU model label keys a trace job's models are matched against: openb's
 * and GPU Feature Discovery's (docs/trace-format.md). */
static const char *const model_keys[2] = {"alibabacloud.com/gpu-card-model",
					  "nvidia.com/gpu.product"};

/* Values of CARVE_DEVICE_NAMES_LABEL a pod may land on: one asking carve's
 * device names only on nodes serving them; one asking NVIDIA's names, once
 * some node serves carve's, off the nodes that serve carve's alone. */
static const char *const names_carve[] = {"carve", "both"};
static const char *const names_not_nvidia[] = {"carve"};

/*
 * The device-name family filter of src in *e: false when src needs none
 * (no GPU device request, or NVIDIA's names while no node serves carve's).
 */
static bool family_expr(const struct bld *b, const struct br_podset *src,
			struct carve_match_expr *e)
{
	unsigned fam = 0;
	size_t j;

	for (j = 0; j < src->nreqs; j++)
		if (src->reqs[j].milli > 0)
			fam |= 1u << carve_res_family(src->reqs[j].name);
	e->key = CARVE_DEVICE_NAMES_LABEL;
	if (fam & (1u << CARVE_RF_CARVE)) {
		e->op = "In";
		e->nvalues = 2;
		e->values = names_carve;
		return true;
	}
	if ((fam & (1u << CARVE_RF_NVIDIA)) && b->ad && br_inv_carve_nodes(b->ad->inv)) {
		e->op = "NotIn";
		e->nvalues = 1;
		e->values = names_not_nvidia;
		return true;
	}
	return false;
}

/*
 * The required node affinity of src: its own terms, each ANDed with "the
 * GPU model is one of src->models" under either model label key (terms
 * are ORed, so every term is written once per key) and with the
 * device-name family filter (family_expr).  src's own terms when it names
 * no models and needs no filter.
 */
static bool model_terms(struct bld *b, const struct br_podset *src, struct carve_podset_spec *v)
{
	size_t nt = src->nterms ? src->nterms : 1, nk = src->nmodels ? 2 : 1, t, k, i = 0;
	struct carve_match_term *terms;
	struct carve_match_expr fe;
	bool fam = family_expr(b, src, &fe);

	v->nterms = src->nterms;
	v->terms = src->terms;
	if (!src->nmodels && !fam)
		return true;
	terms = br_scratch(b, nt * nk, sizeof(*terms));
	if (!terms)
		return false;
	for (t = 0; t < nt; t++)
		for (k = 0; k < nk; k++) {
			size_t own = src->nterms ? src->terms[t].n : 0, x = own;
			struct carve_match_expr *e = br_scratch(b, own + 2, sizeof(*e));

			if (!e)
				return false;
			if (own)
				memcpy(e, src->terms[t].exprs, own * sizeof(*e));
			if (src->nmodels) {
				e[x].key = model_keys[k];
				e[x].op = "In";
				e[x].nvalues = src->nmodels;
				e[x++].values = src->models;
			}
			if (fam)
				e[x++] = fe;
			terms[i].n = x;
			terms[i++].exprs = e;
		}
	v->nterms = i;
	v->terms = terms;
	return true;
}

bool br_podset_spec(struct bld *b, const char *what, const char *cq, const struct br_podset *src,
		    struct carve_podset_spec *v)
{
	bool ok = mig_known(b, what, src);

	memset(v, 0, sizeof(*v));
	v->name = src->name;
	v->count = src->count;
	v->min_count = src->min_count ? src->min_count : src->count;
	v->nreqs = src->nreqs;
	v->reqs = src->reqs;
	if (ok)
		v->reqs = mig_slice_reqs(b, cq, what, src, &v->nreqs, &ok);
	v->nselector = src->nselector;
	v->selector = src->selector;
	v->ntolerations = src->ntolerations;
	v->tolerations = src->tolerations;
	v->gpu_milli = src->gpu_milli;
	v->gpu_mem_mib = src->gpu_mem_mib;
	if (!share_fits(b, what, src))
		ok = false;
	if (!model_terms(b, src, v))
		ok = false;
	if (!topology_ok(b, what, src, cq, v))
		ok = false;
	return ok;
}

/*
 * Podset i of Workload w as the one conversion's input: requests with their
 * positions, nodeSelector, required affinity, tolerations, the Kueue
 * topology and KAI fraction annotations (arrays from b's arena).  False
 * when an annotation is malformed (reported, prefixed by what).
 */
static bool workload_podset(struct bld *b, const struct carve_mf_workload *w, size_t i,
			    const char *what, struct br_podset *src)
{
	const struct carve_mf_podset *ps = &w->podsets[i];
	const struct carve_podspec *sp = &ps->spec;
	struct carve_req *reqs = br_scratch(b, sp->requests.n, sizeof(*reqs));
	struct carve_pos *pos = br_scratch(b, sp->requests.n, sizeof(*pos));
	size_t j;

	memset(src, 0, sizeof(*src));
	for (j = 0; reqs && pos && j < sp->requests.n; j++) {
		reqs[j].name = sp->requests.v[j].name;
		reqs[j].milli = sp->requests.v[j].milli;
		pos[j] = sp->requests.v[j].pos;
	}
	src->name = ps->name;
	src->pos = ps->pos.line ? ps->pos : br_meta_pos(&w->meta);
	src->count = ps->count;
	src->min_count = ps->has_min_count ? ps->min_count : ps->count;
	src->nreqs = reqs && pos ? sp->requests.n : 0;
	src->reqs = reqs;
	src->req_pos = pos;
	src->nselector = sp->node_selector.n;
	src->selector = br_conv_kv(b, &sp->node_selector);
	src->nterms = sp->nterms;
	src->terms = conv_terms(b, sp->nterms, sp->terms);
	src->ntolerations = sp->ntolerations;
	src->tolerations = br_conv_tols(b, sp->ntolerations, sp->tolerations);
	src->mem_what = "annotation gpu-memory";
	podset_topology(sp, src);
	return gpu_share(b, sp, what, ps->name, src);
}

/* The podSets of w for the engine; *bad is set when one of them asks for
 * something no GPU can give (reported; the workload must be skipped). */
static const struct carve_podset_spec *conv_podsets(struct bld *b,
						    const struct carve_mf_workload *w,
						    const char *cq, bool *bad)
{
	const char *what = br_fmt(b, "%s %s", w->meta.kind, br_obj_name(b, &w->meta));
	struct carve_podset_spec *v = br_scratch(b, w->npodsets, sizeof(*v));
	size_t i;

	for (i = 0; v && what && i < w->npodsets; i++) {
		struct br_podset src;

		if (!workload_podset(b, w, i, what, &src))
			*bad = true;
		if (!br_podset_spec(b, what, cq, &src, &v[i]))
			*bad = true;
	}
	return v;
}

static const struct carve_ps_admission *conv_admission(struct bld *b,
						       const struct carve_mf_workload *w)
{
	struct carve_ps_admission *v = br_scratch(b, w->nassign, sizeof(*v));
	size_t i;

	for (i = 0; v && i < w->nassign; i++) {
		v[i].podset = w->assign[i].name;
		v[i].count = w->assign[i].count;
		v[i].n = w->assign[i].flavors.n;
		v[i].flavors = br_conv_kv(b, &w->assign[i].flavors);
	}
	return v;
}

/* Records that engine id came from w or pg (the other is NULL). */
static bool map_workload(struct bld *b, int id, const struct carve_mf_workload *w,
			 const struct carve_mf_podgroup *pg)
{
	struct carve_admission *ad = b->ad;
	size_t need = (size_t)id + 1;

	if (need > ad->nwl) {
		const struct carve_mf_workload **v = carve_realloc(ad->wl, need * sizeof(*v));
		const struct carve_mf_podgroup **p;

		if (v)
			ad->wl = v;
		p = v ? carve_realloc(ad->pg, need * sizeof(*p)) : NULL;
		if (!p) {
			b->nomem = true;
			return false;
		}
		ad->pg = p;
		memset(ad->wl + ad->nwl, 0, (need - ad->nwl) * sizeof(*ad->wl));
		memset(ad->pg + ad->nwl, 0, (need - ad->nwl) * sizeof(*ad->pg));
		ad->nwl = need;
	}
	ad->wl[id] = w;
	ad->pg[id] = pg;
	return true;
}

/*
 * Resolves the ClusterQueue of w: its admission's, or spec.queueName ->
 * LocalQueue -> ClusterQueue.  NULL when it is not queued (reported when
 * that is a problem); *lq is the LocalQueue used, if any.
 */
static const char *resolve_cq(struct bld *b, const struct carve_mf_workload *w,
			      const char *direct, const struct carve_mf_localqueue **lq)
{
	const char *key = br_obj_name(b, &w->meta);

	*lq = NULL;
	if (direct)
		return direct;
	if (w->admitted_cq)
		return w->admitted_cq;
	if (!w->active)
		return NULL; /* deactivated: Kueue does not queue it */
	if (!w->queue_name) {
		carve_diag_warn(b->diags, br_meta_pos(&w->meta),
				"Workload %s has no spec.queueName; it is not queued", key);
		return NULL;
	}
	*lq = carve_mf_find_lq(b->m, w->meta.ns, w->queue_name);
	if (!*lq) {
		carve_diag_error(b->diags, w->queue_pos,
				 "%s %s: LocalQueue '%s' does not exist in namespace %s",
				 w->meta.kind, key, w->queue_name, w->meta.ns);
		return NULL;
	}
	return (*lq)->cluster_queue;
}

/* w into the engine, in ClusterQueue `direct` (a Volcano or KAI queue) or,
 * when NULL, where its admission or LocalQueue says; pc_only: its
 * priority class is a scheduling.k8s.io PriorityClass. */
static void add_wl(struct bld *b, const struct carve_mf_workload *w, const char *direct,
		   bool pc_only);

void br_add_workload(struct bld *b, const struct carve_mf_workload *w)
{
	add_wl(b, w, NULL, false);
}

static bool pc_value(const struct carve_manifests *m, const char *name, int32_t *out);

static void add_wl(struct bld *b, const struct carve_mf_workload *w, const char *direct,
		   bool pc_only)
{
	const struct carve_mf_localqueue *lq;
	struct carve_wl_spec s;
	struct carve_error err = {0};
	struct carve_pos qpos;
	bool bad = false;
	int rc;

	memset(&s, 0, sizeof(s));
	s.key = br_obj_name(b, &w->meta);
	s.cq = resolve_cq(b, w, direct, &lq);
	if (!s.cq)
		return;
	if (w->has_priority) {
		s.priority = w->priority;
	} else if (w->priority_class &&
		   !(pc_only ? pc_value(b->m, w->priority_class, &s.priority)
			     : priority_value(b->m, w->priority_class, &s.priority))) {
		carve_diag_warn(b->diags, br_meta_pos(&w->meta),
				"%s %s: priority class '%s' is not defined; using priority 0",
				w->meta.kind, s.key, w->priority_class);
	}
	s.created = w->meta.created;
	s.has_created = w->meta.has_created;
	s.npodsets = w->npodsets;
	s.podsets = conv_podsets(b, w, s.cq, &bad);
	if (bad)
		return;
	if (w->admitted_cq) {
		s.admitted = true;
		s.admitted_at = w->quota_reserved_at;
		s.has_admitted_at = w->has_quota_reserved_at;
		s.nadmission = w->nassign;
		s.admission = conv_admission(b, w);
	}
	if (b->nomem)
		return;
	rc = carve_adm_add_workload(b->ad->adm, &s, &err);
	if (rc >= 0) {
		map_workload(b, rc, w, NULL);
		return;
	}
	qpos = lq ? w->queue_pos : w->admission_pos;
	if (!qpos.line)
		qpos = br_meta_pos(&w->meta);
	if (rc == CARVE_ENOTFOUND && lq)
		carve_diag_error(b->diags, qpos,
				 "%s %s: ClusterQueue '%s' (of LocalQueue %s/%s) is not defined",
				 w->meta.kind, s.key, s.cq, lq->meta.ns, lq->meta.name);
	else if (rc == CARVE_ENOTFOUND)
		carve_diag_error(b->diags, qpos,
				 "%s %s: admitted to ClusterQueue '%s', which is not defined",
				 w->meta.kind, s.key, s.cq);
	else
		br_refused(b, &w->meta, br_meta_pos(&w->meta), rc, &err);
}

/* Value of a scheduling.k8s.io PriorityClass. */
static bool pc_value(const struct carve_manifests *m, const char *name, int32_t *out)
{
	size_t i;

	for (i = 0; i < m->nwpcs; i++) {
		const struct carve_mf_priorityclass *p = &m->wpcs[i];

		if (!strcmp(p->meta.kind, "PriorityClass") && !strcmp(p->meta.name, name)) {
			*out = p->value;
			return true;
		}
	}
	return false;
}

/*
 * When no Volcano Queue of the input has a capability, deserved or
 * guarantee (only weights, like Volcano's own queue "default"), the
 * queues are shared by the proportion plugin: weights over the whole
 * cluster, which carve does not model (it models the capacity plugin,
 * where such a queue may still borrow from its cohort).  True, with a
 * warning at pos naming the object, for a queue of such an input; its
 * workloads are not queued.
 */
static bool weight_only(struct bld *b, const struct family *f, const struct xq *q,
			struct carve_pos pos, const char *kind, const char *key)
{
	const struct carve_mf_vcqueue *v;
	size_t i;

	if (f != &b->vc || q->is_root || q < f->q || q >= f->q + b->m->nvcqueues)
		return false;
	v = &b->m->vcqueues[q - f->q]; /* queues.c: one xq per Queue, in order */
	if (q->meta != &v->meta)
		return false;
	if (v->capability.n || v->deserved.n || v->guarantee.n)
		return false;
	for (i = 0; i < b->m->nvcqueues; i++) {
		const struct carve_mf_vcqueue *o = &b->m->vcqueues[i];

		if (o->capability.n || o->deserved.n || o->guarantee.n)
			return false; /* capacity plugin: this queue may borrow */
	}
	carve_diag_warn(b->diags, pos, "%s %s: Volcano Queue '%s' has no capability, deserved "
			"or guarantee, only a weight (the proportion plugin); carve models the "
			"capacity plugin only, so it is not queued", kind, key, q->meta->name);
	return true;
}

/* The queue a PodGroup can be admitted in, or NULL (reported when that is
 * the PodGroup's problem rather than its queue's). */
static const struct xq *pg_queue(struct bld *b, const struct carve_mf_podgroup *pg,
				 const char *key)
{
	int qi = br_fam_find(&b->vc, pg->queue);
	const struct xq *q = qi >= 0 ? &b->vc.q[qi] : NULL;

	if (!q) {
		carve_diag_warn(b->diags, pg->queue_pos,
				"PodGroup %s: Volcano Queue '%s' is not defined; it is not queued", key,
				pg->queue);
		return NULL;
	}
	if (q->is_parent && !q->skip) {
		carve_diag_warn(b->diags, pg->queue_pos,
				"PodGroup %s: Queue '%s' is a parent queue (Volcano runs PodGroups "
				"in leaf queues only); it is not queued", key, pg->queue);
		return NULL;
	}
	if (weight_only(b, &b->vc, q, pg->queue_pos, "PodGroup", key))
		return NULL;
	return q->added ? q : NULL;
}

/*
 * One pod's share of a PodGroup's total: rounded up to a millicore for cpu
 * and to a whole unit (a byte, a GPU) for everything else, as Kubernetes
 * accepts only whole extended resources.
 */
static int64_t per_pod(const char *res, int64_t total, int32_t count)
{
	int64_t unit = carve_res_kind(res, NULL) == CARVE_RK_CPU ? 1 : 1000;
	int64_t units = total / unit + (total % unit != 0);
	int64_t each = units / count + (units % count != 0);

	return each > INT64_MAX / unit ? INT64_MAX : each * unit;
}

/* Whether pg is the coscheduling plugin's (scheduling.x-k8s.io). */
static bool is_cos_pg(const struct carve_mf_podgroup *pg)
{
	return pg->meta.api_version && !strncmp(pg->meta.api_version, "scheduling.x-k8s.io/", 20);
}

/* Whether pg is queued as a workload at all (a warning when it is not and
 * that is its own business); its queue then. */
static const struct xq *pg_queued(struct bld *b, const struct carve_mf_podgroup *pg,
				  const char *key)
{
	if (!br_is_volcano_pg(pg)) {
		carve_diag_warn(b->diags, br_meta_pos(&pg->meta),
				"PodGroup %s: %s PodGroups carry no resource requests; it is not "
				"queued", key, is_cos_pg(pg) ? "coscheduling" : "KAI");
		return NULL;
	}
	if (pg->phase && !strcmp(pg->phase, "Completed"))
		return NULL;
	if (!pg_queue(b, pg, key))
		return NULL;
	if (!pg->min_resources.n) {
		carve_diag_warn(b->diags, br_meta_pos(&pg->meta),
				"PodGroup %s has no minResources, so carve cannot tell what it "
				"requests; it is not queued", key);
		return NULL;
	}
	return pg_queue(b, pg, key);
}

/* One pod's requests of pg: minResources / count, rounded up (scratch). */
static struct carve_req *pg_reqs(struct bld *b, const struct carve_mf_podgroup *pg,
				 int32_t count)
{
	struct carve_req *reqs = br_scratch(b, pg->min_resources.n, sizeof(*reqs));
	size_t k;

	for (k = 0; reqs && k < pg->min_resources.n; k++) {
		reqs[k].name = pg->min_resources.v[k].name;
		reqs[k].milli = per_pod(reqs[k].name, pg->min_resources.v[k].milli, count);
	}
	return reqs;
}

/*
 * A Volcano PodGroup as a workload: one podSet "pods" of max(minMember, 1)
 * pods, each asking minResources / count rounded up; status.phase Running
 * means admitted (flavor "volcano" for everything), Completed means gone.
 */
void br_add_podgroup(struct bld *b, const struct carve_mf_podgroup *pg)
{
	struct br_podset src;
	const char *what;
	const char *key = br_obj_name(b, &pg->meta);
	struct carve_podset_spec ps;
	struct carve_ps_admission psa;
	struct carve_wl_spec s;
	struct carve_error err = {0};
	struct carve_req *reqs;
	struct carve_label *fl;
	size_t k, n = pg->min_resources.n;
	int32_t count = pg->min_member > 0 ? pg->min_member : 1;
	int rc;

	if (!pg_queued(b, pg, key))
		return;
	if (b->ad->pg_queued)
		b->ad->pg_queued[pg - b->m->podgroups] = true;
	if (b->opts && b->opts->admitted_only && !(pg->phase && !strcmp(pg->phase, "Running")))
		return; /* the caller's to add (carve_admission_podgroup_job) */
	reqs = pg_reqs(b, pg, count);
	fl = br_scratch(b, n, sizeof(*fl));
	if (b->nomem)
		return;
	for (k = 0; k < n; k++) {
		fl[k].key = reqs[k].name;
		fl[k].value = b->vc.flavor;
	}
	memset(&src, 0, sizeof(src));
	src.name = "pods";
	src.pos = br_meta_pos(&pg->meta);
	src.count = src.min_count = count;
	src.nreqs = n;
	src.reqs = reqs;
	what = br_fmt(b, "PodGroup %s", key);
	if (!what)
		return;
	if (!br_podset_spec(b, what, pg->queue, &src, &ps))
		return; /* reported */
	memset(&s, 0, sizeof(s));
	s.key = key;
	s.cq = pg->queue;
	if (pg->priority_class && !pc_value(b->m, pg->priority_class, &s.priority))
		carve_diag_warn(b->diags, br_meta_pos(&pg->meta),
				"PodGroup %s: PriorityClass '%s' is not defined; using priority 0",
				key, pg->priority_class);
	s.created = pg->meta.created;
	s.has_created = pg->meta.has_created;
	s.npodsets = 1;
	s.podsets = &ps;
	if (pg->phase && !strcmp(pg->phase, "Running")) {
		psa.podset = ps.name;
		psa.count = count;
		psa.n = n;
		psa.flavors = fl;
		s.admitted = true;
		s.nadmission = 1;
		s.admission = &psa;
	}
	rc = carve_adm_add_workload(b->ad->adm, &s, &err);
	if (rc >= 0)
		map_workload(b, rc, NULL, pg);
	else
		br_refused(b, &pg->meta, br_meta_pos(&pg->meta), rc, &err);
}



/* ---- trace jobs ---- */

/* Diagnostics of own into d (when not NULL); the first error into err.
 * Returns 0 when own has no error, else CARVE_EINVAL. */
static int own_diags(struct carve_diags *own, struct carve_diags *d, struct carve_error *err)
{
	size_t i, first = own->n;

	for (i = 0; i < own->n; i++) {
		if (own->v[i].sev == CARVE_SEV_ERROR && first == own->n)
			first = i;
		if (d)
			carve_diag(d, own->v[i].sev, own->v[i].pos, "%s", own->v[i].msg);
	}
	if (first == own->n)
		return 0;
	return carve_errorf(err, CARVE_EINVAL, "%s", own->v[first].msg);
}

/* The ClusterQueue of job j, or NULL with the reason in err. */
static const char *job_cq(const struct carve_manifests *m, const struct carve_job *j,
			  struct carve_error *err)
{
	const struct carve_mf_localqueue *lq;

	if (j->cluster_queue)
		return j->cluster_queue; /* the engine refuses an unknown one */
	if (!j->queue) {
		if (m->ncqs == 1)
			return m->cqs[0].meta.name;
		carve_errorf(err, CARVE_EINVAL, "job %s names no queue and the manifests have %zu "
			     "ClusterQueues (a job without a queue needs exactly one)", j->name,
			     m->ncqs);
		return NULL;
	}
	lq = carve_mf_find_lq(m, j->ns, j->queue);
	if (!lq) {
		carve_errorf(err, CARVE_EINVAL, "job %s: no LocalQueue %s/%s", j->name, j->ns,
			     j->queue);
		return NULL;
	}
	if (!carve_mf_find_cq(m, lq->cluster_queue)) {
		carve_errorf(err, CARVE_EINVAL, "job %s: LocalQueue %s/%s names unknown "
			     "ClusterQueue %s", j->name, j->ns, j->queue, lq->cluster_queue);
		return NULL;
	}
	return lq->cluster_queue;
}

/* A trace job's podSet as the one conversion's input. */
static void job_podset(const struct carve_job *j, const struct carve_job_podset *q,
		       struct br_podset *src)
{
	memset(src, 0, sizeof(*src));
	src->name = q->name;
	src->pos = j->pos;
	src->count = q->count;
	src->min_count = q->min_count;
	src->nreqs = q->nreqs;
	src->reqs = q->reqs;
	src->nselector = q->nselector;
	src->selector = q->selector;
	src->nterms = q->nterms;
	src->terms = q->terms;
	src->ntolerations = q->ntolerations;
	src->tolerations = q->tolerations;
	src->gpu_milli = q->gpu_milli;
	src->gpu_mem_mib = q->gpu_mem_mib;
	src->mem_what = "gpu_memory";
	src->nmodels = q->nmodels;
	src->models = q->models;
	if (q->topology_level) {
		src->topo[q->topology_required ? 0 : 1].level = q->topology_level;
		src->topo[q->topology_required ? 0 : 1].what = q->topology_required
			? "required topology level" : "preferred topology level";
	}
}

/*
 * A build context for one conversion outside the build (a job, or a
 * Workload or PodGroup as a job): it allocates from ad's job arena, which
 * lives until carve_admission_destroy(), and reports into own.
 * job_bld_done() gives the arena back to ad and own's problems to d (when
 * not NULL), the first error to err; returns 0, CARVE_EINVAL or
 * CARVE_ENOMEM.  Nothing may allocate from ad->jobs between the two.
 */
static void job_bld(struct bld *b, struct carve_admission *ad, struct carve_diags *own)
{
	carve_diags_init(own);
	memset(b, 0, sizeof(*b));
	b->m = ad->m;
	b->ad = ad;
	b->diags = own;
	b->a = *ad->jobs;
}

static int job_bld_done(struct bld *b, struct carve_diags *own, struct carve_diags *d,
			struct carve_error *err)
{
	int rc;

	*b->ad->jobs = b->a;
	if (b->nomem || own->dropped)
		rc = carve_errorf(err, CARVE_ENOMEM, "out of memory");
	else
		rc = own_diags(own, d, err);
	carve_diags_cleanup(own);
	return rc;
}

int carve_admission_job(struct carve_admission *ad, const struct carve_job *j,
			struct carve_wl_spec *out, struct carve_diags *d, struct carve_error *err)
{
	struct carve_diags own;
	struct carve_podset_spec *v;
	const char *what;
	struct bld b;
	size_t p;
	bool ok = true;
	int rc;

	memset(out, 0, sizeof(*out));
	out->cq = job_cq(ad->m, j, err);
	if (!out->cq) {
		if (d)
			carve_diag_error(d, j->pos, "%s", err->text);
		return CARVE_EINVAL;
	}
	job_bld(&b, ad, &own);
	out->key = br_fmt(&b, "%s/%s", j->ns, j->name);
	what = br_fmt(&b, "job %s", j->name);
	v = br_scratch(&b, j->npodsets, sizeof(*v));
	for (p = 0; v && what && p < j->npodsets; p++) {
		struct br_podset src;

		job_podset(j, &j->podsets[p], &src);
		if (!br_podset_spec(&b, what, out->cq, &src, &v[p]))
			ok = false;
	}
	out->priority = j->priority;
	out->created = j->has_created ? j->created
				      : carve_qty_sat_add(ad->job_epoch, j->arrival);
	out->has_created = j->has_created || !j->created_unknown;
	out->npodsets = j->npodsets;
	out->podsets = v;
	rc = job_bld_done(&b, &own, d, err);
	if (!rc && !ok)
		rc = carve_errorf(err, CARVE_EINVAL, "job %s is not queued", j->name);
	return rc;
}

/* w as a trace job; direct: the queue it names directly (cluster_queue),
 * NULL: its LocalQueue; pc_only: its priority class is a PriorityClass. */
static int workload_job(struct carve_admission *ad, const struct carve_mf_workload *w,
			const char *direct, bool pc_only, struct carve_job *out,
			struct carve_diags *d, struct carve_error *err)
{
	struct carve_job_podset *v;
	struct carve_diags own;
	const char *what;
	struct bld b;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!w->active || (!w->queue_name && !direct))
		return carve_errorf(err, CARVE_ENOTFOUND, "Workload %s is not queued",
				    w->meta.name);
	job_bld(&b, ad, &own);
	what = br_fmt(&b, "Workload %s", br_obj_name(&b, &w->meta));
	v = br_scratch(&b, w->npodsets, sizeof(*v));
	for (i = 0; v && what && i < w->npodsets; i++) {
		struct br_podset src;

		workload_podset(&b, w, i, what, &src); /* a bad annotation: in own */
		v[i].name = src.name;
		v[i].count = src.count;
		v[i].min_count = src.min_count;
		v[i].nreqs = src.nreqs;
		v[i].reqs = src.reqs;
		v[i].gpu_milli = src.gpu_milli;
		v[i].gpu_mem_mib = src.gpu_mem_mib;
		v[i].nselector = src.nselector;
		v[i].selector = src.selector;
		v[i].nterms = src.nterms;
		v[i].terms = src.terms;
		v[i].ntolerations = src.ntolerations;
		v[i].tolerations = src.tolerations;
		v[i].topology_level = src.topo[0].level ? src.topo[0].level : src.topo[1].level;
		v[i].topology_required = src.topo[0].level != NULL;
	}
	out->name = w->meta.name;
	out->ns = w->meta.ns;
	if (direct)
		out->cluster_queue = direct;
	else
		out->queue = w->queue_name;
	if (w->has_priority)
		out->priority = w->priority;
	else if (w->priority_class && pc_only)
		pc_value(ad->m, w->priority_class, &out->priority);
	else if (w->priority_class)
		priority_value(ad->m, w->priority_class, &out->priority);
	out->has_created = w->meta.has_created;
	out->created = w->meta.created;
	out->created_unknown = !w->meta.has_created;
	out->npodsets = w->npodsets;
	out->podsets = v;
	out->pos = br_meta_pos(&w->meta);
	return job_bld_done(&b, &own, d, err);
}

int carve_admission_workload_job(struct carve_admission *ad, const struct carve_mf_workload *w,
				 struct carve_job *out, struct carve_diags *d,
				 struct carve_error *err)
{
	return workload_job(ad, w, NULL, false, out, d, err);
}

int carve_admission_derived_job(struct carve_admission *ad, size_t i, struct carve_job *out,
				struct carve_diags *d, struct carve_error *err)
{
	if (i >= ad->nderived)
		return carve_errorf(err, CARVE_EINVAL, "no derived workload %zu", i);
	return workload_job(ad, ad->derived[i].w, ad->derived[i].cq, ad->derived[i].pc_only, out,
			    d, err);
}

int carve_admission_podgroup_job(struct carve_admission *ad, const struct carve_mf_podgroup *pg,
				 struct carve_job *out, struct carve_diags *d,
				 struct carve_error *err)
{
	int32_t count = pg->min_member > 0 ? pg->min_member : 1;
	struct carve_job_podset *ps;
	struct carve_diags own;
	struct bld b;

	memset(out, 0, sizeof(*out));
	if (!ad->pg_queued || pg < ad->m->podgroups ||
	    pg >= ad->m->podgroups + ad->m->npodgroups || !ad->pg_queued[pg - ad->m->podgroups])
		return carve_errorf(err, CARVE_ENOTFOUND, "PodGroup %s is not queued",
				    pg->meta.name);
	job_bld(&b, ad, &own);
	ps = br_scratch(&b, 1, sizeof(*ps));
	if (ps) {
		ps->name = "pods";
		ps->count = ps->min_count = count;
		ps->nreqs = pg->min_resources.n;
		ps->reqs = pg_reqs(&b, pg, count);
	}
	out->name = pg->meta.name;
	out->ns = pg->meta.ns;
	out->cluster_queue = pg->queue;
	if (pg->priority_class)
		pc_value(ad->m, pg->priority_class, &out->priority);
	out->has_created = pg->meta.has_created;
	out->created = pg->meta.created;
	out->created_unknown = !pg->meta.has_created;
	out->npodsets = 1;
	out->podsets = ps;
	out->pos = br_meta_pos(&pg->meta);
	return job_bld_done(&b, &own, d, err);
}

/* ---- Jobs, Pods, JobSets and Volcano Jobs as workloads ---- */

/*
 * Label and annotation names (facts, with their sources):
 * - kueue.x-k8s.io/queue-name (label): the LocalQueue of a Job, JobSet or
 *   plain Pod; objects without it are not Kueue's and are skipped
 *   silently.  kueue.x-k8s.io/priority-class (label): a
 *   WorkloadPriorityClass.  kueue.x-k8s.io/job-min-parallelism
 *   (annotation on a batch/v1 Job): partial admission, the podSet's
 *   minCount.  Kueue site docs: concepts/workload, tasks/run/jobs,
 *   concepts/workload_priority_class, and its partial-admission KEP.
 * - kueue.x-k8s.io/pod-group-name (label) and
 *   kueue.x-k8s.io/pod-group-total-count (annotation): a Kueue plain pod
 *   group (Kueue site: tasks/run/plain_pods).
 * - kai.scheduler/queue (label) and pod-group-name (annotation): a KAI
 *   pod and its group (KAI-Scheduler docs: quickstart, pod-grouper).
 * - scheduling.k8s.io/group-name (annotation): a pod of a Volcano
 *   PodGroup (volcano-sh/apis pkg/apis/scheduling/v1beta1/labels.go); the
 *   PodGroup is the workload then, so such pods are not added again.
 * Kueue's Job podSet is "main" with min(parallelism, completions) pods
 * (its batch/v1 Job integration); a JobSet's podSets are its
 * replicatedJobs, each replicas x that count.
 */
/* Kueue's Workload CRD: at most 8 podSets (spec.podSets maxItems). */
#define LD_MAX_PODSETS_BR 8
#define KQ_QUEUE "kueue.x-k8s.io/queue-name"
#define KQ_PRIO "kueue.x-k8s.io/priority-class"
#define KQ_MINPAR "kueue.x-k8s.io/job-min-parallelism"
#define KQ_GROUP "kueue.x-k8s.io/pod-group-name"
#define KQ_TOTAL "kueue.x-k8s.io/pod-group-total-count"
#define KAI_QUEUE "kai.scheduler/queue"
#define KAI_GROUP "pod-group-name"
/* The coscheduling plugin's pod label (kubernetes-sigs/scheduler-plugins,
 * pkg/coscheduling README). */
#define COS_GROUP "scheduling.x-k8s.io/pod-group"
#define VC_GROUP "scheduling.k8s.io/group-name"

static const struct carve_kv *kv_find(const struct carve_kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].key && !strcmp(l->v[i].key, key))
			return &l->v[i];
	return NULL;
}

/* A workload that lives as long as ad (ad's job arena), for a Job, Pod
 * group, JobSet or Volcano Job; NULL (b->nomem) when out of memory. */
static struct carve_mf_workload *derived(struct bld *b, const struct carve_meta *meta,
					 size_t npodsets)
{
	struct carve_mf_workload *w = carve_arena_alloc(b->ad->jobs, sizeof(*w));
	struct carve_mf_podset *ps = carve_arena_alloc(b->ad->jobs, npodsets * sizeof(*ps) + 1);

	if (!w || !ps) {
		b->nomem = true;
		return NULL;
	}
	memset(w, 0, sizeof(*w));
	memset(ps, 0, npodsets * sizeof(*ps));
	w->meta = *meta;
	w->active = true;
	w->podsets = ps;
	w->npodsets = npodsets;
	return w;
}

/*
 * A workload made from a Job, JobSet, pod or Volcano Job: listed in
 * ad->derived (what `simulate --workloads` turns into jobs) and, unless the
 * build adds admitted objects only (none of these is admitted) or queues
 * only (carve validate), added to the engine as a Workload would be.
 */
static void add_derived(struct bld *b, const struct carve_mf_workload *w, const char *direct,
			bool pc_only)
{
	struct carve_admission *ad = b->ad;

	if ((ad->nderived & (ad->nderived - 1)) == 0) {
		size_t cap = ad->nderived ? 2 * ad->nderived : 4;
		void *v = carve_realloc(ad->derived, cap * sizeof(*ad->derived));

		if (!v) {
			b->nomem = true;
			return;
		}
		ad->derived = v;
	}
	ad->derived[ad->nderived].w = w;
	ad->derived[ad->nderived].cq = direct;
	ad->derived[ad->nderived].pc_only = pc_only;
	ad->nderived++;
	if (!b->opts || (!b->opts->admitted_only && !b->opts->queues_only))
		add_wl(b, w, direct, pc_only);
}

/* A whole number in [lo, hi] from an annotation value; false otherwise. */
static bool kv_int(const struct carve_kv *kv, long lo, long hi, int32_t *out)
{
	char *end;
	long x;

	if (!kv || !kv->value || !*kv->value)
		return false;
	x = strtol(kv->value, &end, 10);
	if (*end || x < lo || x > hi)
		return false;
	*out = (int32_t)x;
	return true;
}

/*
 * The Kueue queue and priority of a workload from object meta's labels:
 * false when it has no queue label (not Kueue's: skipped silently).  A
 * LocalQueue or WorkloadPriorityClass that does not exist is a warning at
 * the label (the workload is then not queued, or gets priority 0).
 */
static bool kueue_labels(struct bld *b, const struct carve_meta *meta, const char *key,
			 const char *pod_prio, struct carve_mf_workload *w)
{
	const struct carve_kv *q = kv_find(&meta->labels, KQ_QUEUE);
	const struct carve_kv *p = kv_find(&meta->labels, KQ_PRIO);

	if (!q || !q->value || !*q->value)
		return false;
	if (!carve_mf_find_lq(b->m, meta->ns, q->value)) {
		size_t n0 = b->diags->n;

		carve_diag_warn(b->diags, q->pos, "%s %s: label %s names LocalQueue '%s', which "
				"does not exist in namespace %s; it is not queued", meta->kind, key,
				KQ_QUEUE, q->value, meta->ns);
		carve_diags_tag(b->diags, n0, "queue-label");
		return false;
	}
	w->queue_name = q->value;
	w->queue_pos = q->pos;
	if (p && p->value) {
		int32_t v;

		if (priority_value(b->m, p->value, &v)) {
			w->priority = v;
			w->has_priority = true;
		} else {
			carve_diag_warn(b->diags, p->pos, "%s %s: label %s names '%s', which is not "
					"defined; using priority 0", meta->kind, key, KQ_PRIO,
					p->value);
		}
	} else if (pod_prio) {
		w->priority_class = pod_prio; /* the pods' PriorityClass */
	}
	return true;
}

/* The queue and priority kueue_labels() read, into the derived workload w. */
static void queue_fields(struct carve_mf_workload *w, const struct carve_mf_workload *labels)
{
	w->queue_name = labels->queue_name;
	w->queue_pos = labels->queue_pos;
	w->priority = labels->priority;
	w->has_priority = labels->has_priority;
	w->priority_class = labels->priority_class;
}

/* Kueue's pod count of a Job spec: parallelism, or completions when fewer. */
static int32_t job_pod_count(int32_t parallelism, int32_t completions)
{
	return completions < parallelism ? completions : parallelism;
}

static void add_job(struct bld *b, const struct carve_mf_job *j)
{
	const char *key = br_obj_name(b, &j->meta);
	const struct carve_kv *mp;
	struct carve_mf_workload *w;
	struct carve_mf_workload tmp;

	memset(&tmp, 0, sizeof(tmp));
	if (!kueue_labels(b, &j->meta, key, j->spec.priority_class, &tmp))
		return;
	w = derived(b, &j->meta, 1);
	if (!w)
		return;
	queue_fields(w, &tmp);
	w->podsets[0].name = "main";
	w->podsets[0].count = job_pod_count(j->parallelism, j->completions);
	w->podsets[0].spec = j->spec;
	w->podsets[0].pos = j->spec.pos.line ? j->spec.pos : j->meta.pos;
	w->podsets[0].count_pos = j->parallelism_pos;
	mp = kv_find(&j->meta.annotations, KQ_MINPAR);
	if (mp) {
		int32_t min;

		if (kv_int(mp, 1, w->podsets[0].count, &min)) {
			w->podsets[0].min_count = min;
			w->podsets[0].has_min_count = true;
		} else {
			carve_diag_warn(b->diags, mp->pos, "Job %s: annotation %s '%s' is not a "
					"whole number from 1 to the Job's %d pods; ignored", key,
					KQ_MINPAR, mp->value ? mp->value : "", w->podsets[0].count);
		}
	}
	if (!w->podsets[0].count)
		return; /* parallelism 0: no pods to admit */
	add_derived(b, w, NULL, false);
}

static void add_jobset(struct bld *b, const struct carve_mf_jobset *js)
{
	const char *key = br_obj_name(b, &js->meta);
	struct carve_mf_workload tmp, *w;
	size_t i;

	memset(&tmp, 0, sizeof(tmp));
	if (!kueue_labels(b, &js->meta, key, NULL, &tmp))
		return;
	if (js->n > LD_MAX_PODSETS_BR) {
		carve_diag_error(b->diags, js->meta.pos, "JobSet %s has %zu replicatedJobs; a "
				 "Kueue Workload holds at most %d podSets; not queued", key, js->n,
				 LD_MAX_PODSETS_BR);
		return;
	}
	w = derived(b, &js->meta, js->n);
	if (!w)
		return;
	w->queue_name = tmp.queue_name;
	w->queue_pos = tmp.queue_pos;
	w->priority = tmp.priority;
	w->has_priority = tmp.has_priority;
	for (i = 0; i < js->n; i++) {
		const struct carve_mf_rjob *r = &js->v[i];
		int64_t n = (int64_t)r->replicas * job_pod_count(r->parallelism, r->completions);

		w->podsets[i].name = r->name;
		w->podsets[i].count = n > INT32_MAX ? INT32_MAX : (int32_t)n;
		w->podsets[i].spec = r->spec;
		w->podsets[i].pos = r->pos;
		w->podsets[i].count_pos = r->pos;
		if (!w->priority_class && !w->has_priority)
			w->priority_class = r->spec.priority_class;
	}
	add_derived(b, w, NULL, false);
}

/* Whether queue `name` of family f runs workloads: a warning at pos
 * naming the object when it is not defined or is a parent queue. */
static bool fam_runs(struct bld *b, const struct family *f, const char *name,
		     struct carve_pos pos, const char *kind, const char *key)
{
	int qi = br_fam_find(f, name);
	const struct xq *q = qi >= 0 ? &f->q[qi] : NULL;

	if (!q) {
		carve_diag_warn(b->diags, pos, "%s %s: %s '%s' is not defined; it is not queued",
				kind, key, f->what, name);
		return false;
	}
	if (q->is_parent && !q->skip) {
		carve_diag_warn(b->diags, pos, "%s %s: %s '%s' is a parent queue (only leaf "
				"queues run workloads); it is not queued", kind, key, f->what, name);
		return false;
	}
	if (weight_only(b, f, q, pos, kind, key))
		return false;
	return q->added;
}

/* Whether two pods ask for the same resources (one podSet of a group). */
static bool same_requests(const struct carve_podspec *a, const struct carve_podspec *c)
{
	size_t i, j;

	if (a->requests.n != c->requests.n)
		return false;
	for (i = 0; i < a->requests.n; i++) {
		for (j = 0; j < c->requests.n; j++)
			if (!strcmp(a->requests.v[i].name, c->requests.v[j].name) &&
			    a->requests.v[i].milli == c->requests.v[j].milli)
				break;
		if (j == c->requests.n)
			return false;
	}
	return true;
}

/* The group a pod belongs to under `flavour` (Kueue or KAI), or NULL:
 * Kueue's label or KAI's annotation, else the coscheduling label
 * (*cos set then, when cos is not NULL). */
static const char *pod_group_cos(const struct carve_mf_pod *p, bool kai, bool *cos)
{
	const struct carve_kv *g = kai ? kv_find(&p->meta.annotations, KAI_GROUP)
				       : kv_find(&p->meta.labels, KQ_GROUP);

	if (cos)
		*cos = false;
	if (g && g->value && *g->value)
		return g->value;
	g = kv_find(&p->meta.labels, COS_GROUP);
	if (g && g->value && *g->value) {
		if (cos)
			*cos = true;
		return g->value;
	}
	return NULL;
}


/* Whether pod p is queued by Kueue (else by KAI). */
static bool pod_is_kueue(const struct carve_mf_pod *p)
{
	return kv_find(&p->meta.labels, KQ_QUEUE) != NULL;
}

static bool same_ns(const char *a, const char *c)
{
	return (!a && !c) || (a && c && !strcmp(a, c));
}

/*
 * Pod groups in linear time: one hash table (open addressing, FNV-1a) keyed
 * by (kind of group, namespace, group name).  A Kueue pod (queue label)
 * belongs to the Kueue group of its kueue.x-k8s.io/pod-group-name label;
 * another pod to the KAI group of its pod-group-name annotation; each
 * group lists its members in input order (next[]) and names its first
 * queued member (a Kueue pod, or a KAI pod with the kai.scheduler/queue
 * label): the group is added once, from that pod.  KAI PodGroups (not
 * Volcano's) sit in the same table under their own kind, listed in input
 * order (pg_next[]).  Pods not waiting (pod_waiting) are in no group.
 */
#define NONE ((size_t)-1)

enum gkind { GK_KUEUE, GK_KAI, GK_KUEUE_COS, GK_KAI_COS, GK_KAI_PG, GK_COS_PG };

struct pg_entry {
	enum gkind kind;
	const char *ns, *name;  /* ns may be NULL */
	size_t first, last;     /* members (pods or PodGroups), input order */
	size_t queued;          /* first queued member pod, or NONE */
};

struct pod_groups {
	size_t cap, n;          /* table slots (a power of two), entries */
	size_t *slot;           /* entry index + 1, 0 empty */
	struct pg_entry *e;
	size_t *of;             /* per pod: its entry, or NONE */
	size_t *next;           /* per pod: next member of its group, or NONE */
	size_t *pg_next;        /* per PodGroup: next of the same key, or NONE */
};

static uint64_t pg_hash(enum gkind k, const char *ns, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)k;
	const char *s;

	for (s = ns ? ns : ""; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	h = (h ^ 0xffu) * 1099511628211ull; /* a byte no name holds between the two */
	for (s = name; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The slot of key (its entry, or the empty slot where it goes). */
static size_t pg_slot(const struct pod_groups *g, enum gkind k, const char *ns, const char *name)
{
	size_t i = (size_t)pg_hash(k, ns, name) & (g->cap - 1);

	for (;; i = (i + 1) & (g->cap - 1)) {
		const struct pg_entry *e;

		if (!g->slot[i])
			return i;
		e = &g->e[g->slot[i] - 1];
		if (e->kind == k && same_ns(e->ns, ns) && !strcmp(e->name, name))
			return i;
	}
}

static size_t pg_find(const struct pod_groups *g, enum gkind k, const char *ns, const char *name)
{
	size_t i = pg_slot(g, k, ns, name);

	return g->slot[i] ? g->slot[i] - 1 : NONE;
}

/* Appends member m to the entry of key (made when new); its index. */
static size_t pg_add(struct pod_groups *g, enum gkind k, const char *ns, const char *name,
		     size_t m, size_t *next)
{
	size_t i = pg_slot(g, k, ns, name), e;

	if (!g->slot[i]) {
		e = g->n++;
		g->e[e] = (struct pg_entry){k, ns, name, m, m, NONE};
		g->slot[i] = e + 1;
	} else {
		e = g->slot[i] - 1;
		next[g->e[e].last] = m;
		g->e[e].last = m;
	}
	next[m] = NONE;
	return e;
}

/*
 * Whether pod p waits to be scheduled: not bound to a node (by anyone),
 * not finished (phase Succeeded or Failed) and not being deleted.  Only
 * those become workloads (a scheduler reads bound pods on its own).
 */
static bool pod_waiting(const struct carve_mf_pod *p)
{
	return !p->node_name && !p->deleting &&
	       !(p->phase && (!strcmp(p->phase, "Succeeded") || !strcmp(p->phase, "Failed")));
}

static void pg_free(struct pod_groups *g)
{
	carve_free(g->slot);
	carve_free(g->e);
	carve_free(g->of);
	carve_free(g->next);
	carve_free(g->pg_next);
	memset(g, 0, sizeof(*g));
}

/* Builds the table over b's pods and KAI PodGroups; false on ENOMEM. */
static bool pg_build(struct bld *b, struct pod_groups *g)
{
	size_t np = b->m->npods, ng = b->m->npodgroups, i;

	memset(g, 0, sizeof(*g));
	for (g->cap = 16; g->cap < 2 * (np + ng); g->cap *= 2)
		;
	g->slot = carve_calloc(g->cap, sizeof(*g->slot));
	g->e = carve_malloc((np + ng + 1) * sizeof(*g->e));
	g->of = carve_malloc((np + 1) * sizeof(*g->of));
	g->next = carve_malloc((np + 1) * sizeof(*g->next));
	g->pg_next = carve_malloc((ng + 1) * sizeof(*g->pg_next));
	if (!g->slot || !g->e || !g->of || !g->next || !g->pg_next) {
		pg_free(g);
		return false;
	}
	for (i = 0; i < np; i++) {
		const struct carve_mf_pod *p = &b->m->pods[i];
		bool kai = !pod_is_kueue(p), cos;
		const char *name = pod_waiting(p) ? pod_group_cos(p, kai, &cos) : NULL;
		enum gkind k = kai ? (cos ? GK_KAI_COS : GK_KAI) : (cos ? GK_KUEUE_COS : GK_KUEUE);
		size_t e;

		g->of[i] = NONE;
		if (!name)
			continue;
		e = pg_add(g, k, p->meta.ns, name, i, g->next);
		g->of[i] = e;
		if (g->e[e].queued == NONE && (!kai || kv_find(&p->meta.labels, KAI_QUEUE)))
			g->e[e].queued = i;
	}
	for (i = 0; i < ng; i++) {
		const struct carve_mf_podgroup *pg = &b->m->podgroups[i];

		g->pg_next[i] = NONE;
		if (!br_is_volcano_pg(pg))
			pg_add(g, is_cos_pg(pg) ? GK_COS_PG : GK_KAI_PG, pg->meta.ns, pg->meta.name,
			       i, g->pg_next);
	}
	return true;
}

/*
 * Pod i (queued by Kueue or KAI) with the other pods of its group, as one
 * workload: a podSet per distinct request (in order of first use, at most
 * 8), counting its pods.  A Kueue group waits for
 * kueue.x-k8s.io/pod-group-total-count pods; a KAI group's gang is its
 * PodGroup's minMember when that PodGroup is in the input.  Called for
 * the first queued pod of each group only (first_of_group).
 */
static void add_pod(struct bld *b, size_t i, const struct pod_groups *pgs)
{
	const struct carve_mf_pod *p = &b->m->pods[i];
	bool kai = !pod_is_kueue(p), cos;
	const char *group = pod_group_cos(p, kai, &cos);
	const char *key = br_obj_name(b, &p->meta);
	struct carve_mf_workload tmp, *w;
	const struct carve_mf_pod *members[LD_MAX_PODSETS_BR];
	int32_t counts[LD_MAX_PODSETS_BR];
	size_t nroles = 0, k, r, npods = 0;
	struct carve_meta meta = p->meta;
	const char *queue = NULL;
	int32_t cos_min = 0;

	memset(&tmp, 0, sizeof(tmp));
	if (!kai) {
		if (!kueue_labels(b, &p->meta, key, p->spec.priority_class, &tmp))
			return;
	} else {
		const struct carve_kv *q = kv_find(&p->meta.labels, KAI_QUEUE);

		if (!q || !q->value || !*q->value ||
		    !fam_runs(b, &b->kai, q->value, q->pos, "Pod", key))
			return;
		queue = q->value;
		tmp.priority_class = p->spec.priority_class;
	}
	/* from the input's first pod: members before pod i (not queued
	 * themselves) count as those after it do */
	for (k = group ? pgs->e[pgs->of[i]].first : i; k != NONE;
	     k = group ? pgs->next[k] : NONE) {
		const struct carve_mf_pod *o = &b->m->pods[k];

		npods++;
		for (r = 0; r < nroles; r++)
			if (same_requests(&members[r]->spec, &o->spec))
				break;
		if (r == nroles) {
			if (nroles == LD_MAX_PODSETS_BR) {
				carve_diag_error(b->diags, br_meta_pos(&o->meta), "Pod group %s: "
						 "more than %d different pod requests; not queued",
						 group, LD_MAX_PODSETS_BR);
				return;
			}
			members[nroles] = o;
			counts[nroles++] = 0;
		}
		counts[r]++;
	}
	if (group) {
		meta.name = group;
		meta.generated = false;
		meta.kind = "Pod group";
		key = br_obj_name(b, &meta);
	}
	if (group && cos) {
		/* the coscheduling PodGroup of that name gives the gang's
		 * minMember: the group waits for that many pods */
		size_t e = pg_find(pgs, GK_COS_PG, p->meta.ns, group);
		int32_t min = e != NONE ? b->m->podgroups[pgs->e[e].first].min_member : 0;

		if (min > 0 && npods < (size_t)min) {
			carve_diag_warn(b->diags, br_meta_pos(&p->meta), "Pod group %s: PodGroup "
					"minMember is %d but the input has %zu of its pods; it is "
					"not queued until they exist", key, (int)min, npods);
			return;
		}
		if (min > 0 && nroles == 1 && (size_t)min < npods)
			cos_min = min;
	} else if (group && !kai) {
		const struct carve_kv *t = kv_find(&p->meta.annotations, KQ_TOTAL);
		int32_t total;

		if (!kv_int(t, 1, INT32_MAX, &total)) {
			carve_diag_warn(b->diags, t ? t->pos : br_meta_pos(&p->meta), "Pod group %s: "
					"annotation %s is %s (a whole number of pods is needed); it "
					"is not queued", key, KQ_TOTAL, t ? "not a whole number" : "missing");
			return;
		}
		if ((size_t)total != npods) {
			carve_diag_warn(b->diags, t->pos, "Pod group %s: %s is %d but the input has "
					"%zu of its pods; Kueue admits the group once all of them "
					"exist, so it is not queued", key, KQ_TOTAL, (int)total, npods);
			return;
		}
	}
	w = derived(b, &meta, nroles);
	if (!w)
		return;
	queue_fields(w, &tmp);
	for (r = 0; r < nroles; r++) {
		w->podsets[r].name = nroles == 1 ? "main" : br_fmt(b, "role%zu", r);
		if (w->podsets[r].name && nroles > 1)
			w->podsets[r].name = carve_arena_strndup(b->ad->jobs, w->podsets[r].name,
								  strlen(w->podsets[r].name));
		if (!w->podsets[r].name) {
			b->nomem = true;
			return;
		}
		w->podsets[r].count = counts[r];
		w->podsets[r].spec = members[r]->spec;
		w->podsets[r].pos = br_meta_pos(&members[r]->meta);
		w->podsets[r].count_pos = w->podsets[r].pos;
	}
	if (cos_min > 0) {
		w->podsets[0].min_count = cos_min;
		w->podsets[0].has_min_count = true;
	}
	if (kai && group && !cos && nroles == 1) {
		/* the KAI PodGroup of that name gives the gang's minMember */
		size_t e = pg_find(pgs, GK_KAI_PG, p->meta.ns, group);

		for (k = e != NONE ? pgs->e[e].first : NONE; k != NONE; k = pgs->pg_next[k]) {
			const struct carve_mf_podgroup *pg = &b->m->podgroups[k];

			if (pg->min_member > 0 && pg->min_member < w->podsets[0].count) {
				w->podsets[0].min_count = pg->min_member;
				w->podsets[0].has_min_count = true;
			}
		}
	}
	add_derived(b, w, queue, kai);
}

/*
 * A Volcano Job (batch.volcano.sh) in its Volcano Queue: a podSet per
 * task of `replicas` pods.  The gang, as Volcano's admission webhook and
 * gang plugin make it (volcano-sh/volcano, pkg/webhooks/admission/jobs/mutate:
 * patchDefaultMinAvailable and mutateSpec; pkg/scheduler/api/job_info.go
 * CheckTaskValid): a task's minAvailable defaults to its replicas; the
 * Job's minAvailable, when unset or 0, to the sum of its tasks'; each
 * task's own figure is enforced only when the Job's is at least their
 * sum.  So: one task, the Job's figure (or the task's, or replicas);
 * several tasks with the Job's figure unset, 0 or equal to the sum, each
 * task's own (exact); several tasks with any other Job figure have no
 * per-podSet form: each task's own, with a warning.
 */
static void add_vcjob(struct bld *b, const struct carve_mf_vcjob *j)
{
	const char *key = br_obj_name(b, &j->meta);
	struct carve_mf_workload *w;
	int64_t sum = 0;
	size_t t;

	if (!fam_runs(b, &b->vc, j->queue, j->queue_pos, "Volcano Job", key))
		return;
	if (j->ntasks > LD_MAX_PODSETS_BR) {
		carve_diag_error(b->diags, j->meta.pos, "Volcano Job %s has %zu tasks; carve "
				 "models at most %d; not queued", key, j->ntasks, LD_MAX_PODSETS_BR);
		return;
	}
	w = derived(b, &j->meta, j->ntasks);
	if (!w)
		return;
	w->meta.kind = "Volcano Job";
	w->priority_class = j->priority_class;
	for (t = 0; t < j->ntasks; t++) {
		const struct carve_mf_vctask *k = &j->tasks[t];
		int32_t min = k->has_min_available ? k->min_available : k->replicas;

		sum += min;
		if (j->ntasks == 1 && j->has_min_available && j->min_available > 0)
			min = j->min_available;
		w->podsets[t].name = k->name;
		w->podsets[t].count = k->replicas;
		w->podsets[t].spec = k->spec;
		w->podsets[t].pos = k->pos;
		w->podsets[t].count_pos = k->pos;
		if (min > 0 && min < k->replicas) {
			w->podsets[t].min_count = min;
			w->podsets[t].has_min_count = true;
		}
	}
	if (j->ntasks > 1 && j->has_min_available && j->min_available > 0 &&
	    j->min_available != sum)
		carve_diag_warn(b->diags, j->meta.pos, "Volcano Job %s: minAvailable %d across "
				"tasks differs from the sum of its tasks' minAvailable (%lld); carve "
				"gangs each task on its own minAvailable", key, (int)j->min_available,
				(long long)sum);
	for (t = 0; t < w->npodsets; t++)
		if (w->podsets[t].count > 0)
			break;
	if (t == w->npodsets)
		return; /* no replicas at all */
	add_derived(b, w, j->queue, true);
}

void br_add_jobs(struct bld *b)
{
	struct pod_groups pgs;
	size_t i;

	memset(&pgs, 0, sizeof(pgs));
	for (i = 0; i < b->m->njobs && !b->nomem; i++)
		add_job(b, &b->m->jobs[i]);
	for (i = 0; i < b->m->njobsets && !b->nomem; i++)
		add_jobset(b, &b->m->jobsets[i]);
	if (b->m->npods && !b->nomem && !pg_build(b, &pgs))
		b->nomem = true;
	for (i = 0; i < b->m->npods && !b->nomem; i++) {
		const struct carve_mf_pod *p = &b->m->pods[i];

		if (!pod_is_kueue(p) && !kv_find(&p->meta.labels, KAI_QUEUE))
			continue; /* neither Kueue's nor KAI's (a Volcano group's pods are its PodGroup) */
		if (!pod_waiting(p))
			continue; /* bound, finished or going: not waiting */
		/* a group is added once, from its first queued pod */
		if (pgs.of[i] == NONE || pgs.e[pgs.of[i]].queued == i)
			add_pod(b, i, &pgs);
	}
	pg_free(&pgs);
	for (i = 0; i < b->m->nvcjobs && !b->nomem; i++)
		add_vcjob(b, &b->m->vcjobs[i]);
}
