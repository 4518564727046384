/*
 * agent_mig.c - the MIG layout the scheduler wants (the Node's
 * carve.dev/mig-layout, include/carve/miglayout.h) turned into one step
 * per GPU, and the layout the GPUs have (carve.dev/mig-current).
 *
 * Rules (docs/node.md "MIG layouts"): a GPU entry is INVALID when the
 * node has no such GPU, MIG is not enabled on it, its model is not in the
 * MIG table or the layout breaks the table's rules (carve_mig_layout_check);
 * SAME when the GPU holds exactly these instances; BUSY when an instance
 * that would be destroyed runs a process or is held by a pod bound here
 * (or a pod holds the whole GPU); else APPLY.  Pure: no NVML, no API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "carve/mig.h"
#include "carve/manifest.h"
#include "carve/miglayout.h"

static bool wanted(const struct carve_gpu_mig *w, const struct nd_mig *m)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (w->v[i].start == (int)m->start && !strcmp(w->v[i].profile, m->profile))
			return true;
	return false;
}

/* Whether GPU g cannot change now (why says why): a changing instance
 * runs a process or a bound pod holds it (or the whole GPU). */
static bool busy(const struct nd_gpu *g, const struct carve_gpu_mig *w, const struct nd_binding *b,
		 size_t nb, char *why, size_t size)
{
	size_t i, j;
	int k;

	for (i = 0; i < g->nmig; i++) {
		const struct nd_mig *m = &g->mig[i];

		if (wanted(w, m))
			continue;
		for (j = 0; j < g->nproc; j++)
			if (g->proc[j].gi_id == (int)m->gi_id) {
				snprintf(why, size, "GPU %u: MIG device %s@%u runs process %u", g->index,
					 m->profile, m->start, g->proc[j].pid);
				return true;
			}
		for (j = 0; j < nb; j++)
			for (k = 0; k < b[j].ndev; k++)
				if (b[j].dev[k].gpu == (int)g->index &&
				    b[j].dev[k].mig_start == (int)m->start &&
				    !strcmp(b[j].dev[k].mig_profile, m->profile)) {
					snprintf(why, size, "GPU %u: MIG device %s@%u serves pod %s/%s",
						 g->index, m->profile, m->start, b[j].ns, b[j].name);
					return true;
				}
	}
	for (j = 0; j < nb; j++)
		for (k = 0; k < b[j].ndev; k++)
			if (b[j].dev[k].gpu == (int)g->index && !b[j].dev[k].mig_profile[0]) {
				snprintf(why, size, "GPU %u serves pod %s/%s", g->index, b[j].ns,
					 b[j].name);
				return true;
			}
	return false;
}

/* The step for one GPU entry. */
static void plan_gpu(const struct carve_gpu_mig *w, const struct nd_snapshot *s,
		     const struct nd_binding *b, size_t nb, struct nd_mig_step *st)
{
	const struct nd_gpu *g = nd_gpu_by_index(s, w->gpu);
	const struct carve_mig_model *model;
	struct carve_mig_layout l = {0};
	struct carve_error err = {0, ""};
	size_t i;
	int k, p;

	memset(st, 0, sizeof(*st));
	st->action = ND_MIG_INVALID;
	st->want.gpu = (unsigned)w->gpu;
	if (!g) {
		snprintf(st->why, sizeof(st->why), "GPU %d: the node has no such GPU", w->gpu);
		return;
	}
	if (g->mig_current != 1) {
		snprintf(st->why, sizeof(st->why), "GPU %d: MIG mode is not enabled", w->gpu);
		return;
	}
	if (!(model = carve_mig_model_find(g->name))) {
		snprintf(st->why, sizeof(st->why), "GPU %d: model '%s' is not in the MIG table",
			 w->gpu, g->name);
		return;
	}
	for (k = 0; k < w->n; k++) {
		if ((p = carve_mig_profile_find(model, w->v[k].profile)) < 0) {
			snprintf(st->why, sizeof(st->why), "GPU %d: %s has no MIG profile %s", w->gpu,
				 model->name, w->v[k].profile);
			return;
		}
		l.inst[l.n].profile = (uint8_t)p;
		l.inst[l.n++].start = (uint8_t)w->v[k].start;
		snprintf(st->want.v[k].profile, sizeof(st->want.v[k].profile), "%s",
			 w->v[k].profile);
		st->want.v[k].start = (unsigned)w->v[k].start;
	}
	st->want.n = (size_t)w->n;
	if (carve_mig_layout_check(model, &l, &err)) {
		snprintf(st->why, sizeof(st->why), "GPU %d: %s", w->gpu, err.text);
		return;
	}
	if (g->nmig == (size_t)w->n) {
		for (i = 0; i < g->nmig && wanted(w, &g->mig[i]); i++)
			;
		if (i == g->nmig) {
			st->action = ND_MIG_SAME;
			return;
		}
	}
	st->action = busy(g, w, b, nb, st->why, sizeof(st->why)) ? ND_MIG_BUSY : ND_MIG_APPLY;
}

int nd_mig_plan(const char *text, const struct nd_snapshot *s, const struct nd_binding *b,
		size_t nb, struct nd_mig_plan *out, struct carve_error *err)
{
	struct carve_gpu_mig w[64];
	int n, i;

	out->n = 0;
	n = carve_miglayout_parse(text, w, 64, err);
	if (n < 0)
		return n == CARVE_EFULL ? CARVE_EPARSE : n;
	for (i = 0; i < n; i++)
		plan_gpu(&w[i], s, b, nb, &out->step[out->n++]);
	return 0;
}

/* Whether entry d of a mig-parted config selects GPU g. */
static bool selects(const struct carve_mf_migdevice *d, const struct nd_gpu *g,
		    const struct carve_mig_model *model)
{
	size_t i;
	bool dev = d->all_devices || (!d->ndevices && !d->nfilters);

	for (i = 0; i < d->ndevices; i++)
		dev |= d->devices[i] == (int)g->index;
	if (!dev)
		return false;
	if (!d->nfilters)
		return true;
	for (i = 0; i < d->nfilters; i++)
		if (model && carve_mig_model_pci_match(model, d->device_filter[i]) == 1)
			return true;
	return false;
}

int nd_migparted_layout(const struct carve_mf_migconfig *c, const struct nd_snapshot *s,
			char *buf, size_t size, struct carve_error *err)
{
	struct carve_gpu_mig l[64];
	size_t i, j, k;
	int n = 0, rc;

	for (i = 0; i < s->ngpus && n < 64; i++) {
		const struct nd_gpu *g = &s->gpus[i];
		const struct carve_mig_model *model = carve_mig_model_find(g->name);

		for (j = 0; j < c->n; j++) {
			const struct carve_mf_migdevice *d = &c->v[j];
			int counts[32] = {0};
			struct carve_mig_layout lay;
			struct carve_error why = {0, ""};

			if (!selects(d, g, model))
				continue;
			if (!d->mig_enabled) {
				if (g->mig_current == 1)
					return carve_errorf(err, CARVE_EINVAL,
							    "mig-configs %s entry %zu: mig-enabled: false on GPU %u, "
							    "which has MIG on (carve never changes MIG mode)",
							    c->name, j + 1, g->index);
				break;
			}
			if (!model)
				return carve_errorf(err, CARVE_EINVAL,
						    "mig-configs %s entry %zu: GPU %u (%s) is not a MIG model",
						    c->name, j + 1, g->index, g->name);
			for (k = 0; k < d->ncounts; k++) {
				int p = carve_mig_profile_find(model, d->counts[k].profile);

				if (p < 0 || p >= 32)
					return carve_errorf(err, CARVE_EINVAL,
							    "mig-configs %s entry %zu: %s has no MIG profile %s",
							    c->name, j + 1, model->name, d->counts[k].profile);
				counts[p] += d->counts[k].count;
			}
			if ((rc = carve_mig_layout_from_counts(model, counts, &lay, &why)))
				return carve_errorf(err, rc, "mig-configs %s entry %zu, GPU %u: %s", c->name,
						    j + 1, g->index, why.text);
			l[n].gpu = (int)g->index;
			l[n].n = lay.n;
			for (k = 0; k < lay.n; k++) {
				snprintf(l[n].v[k].profile, sizeof(l[n].v[k].profile), "%s",
					 model->profiles[lay.inst[k].profile].name);
				l[n].v[k].start = lay.inst[k].start;
			}
			n++;
			break;
		}
	}
	if (!n) {
		if (!size)
			return CARVE_ERANGE;
		buf[0] = 0;
		return 0;
	}
	return carve_miglayout_format(l, n, buf, size);
}
