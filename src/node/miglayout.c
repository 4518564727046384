/*
 * miglayout.c - the MIG layout wanted on a node's GPUs, in the agent's
 * form (struct nd_mig_layout): from the carve.dev/mig-layout annotation
 * (parsed by src/io/miglayout.c), from a mig-parted config (loaded by
 * src/io/load_nvidia.c, counts placed by the MIG table's
 * carve_mig_layout_from_counts), checked against a snapshot, and the
 * carve.dev/mig-current text of a snapshot.  Pure functions over their
 * arguments; nothing here talks to NVML.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/manifest.h"
#include "carve/mig.h"
#include "carve/miglayout.h"
#include "node_int.h"

int nd_miglayout_parse(const char *text, struct nd_mig_layout *out, size_t max,
		       struct carve_error *err)
{
	struct carve_gpu_mig *l;
	int n, i, j;

	l = calloc(CARVE_MIGLAYOUT_MAX_GPUS, sizeof(*l));
	if (!l)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	n = carve_miglayout_parse(text, l, CARVE_MIGLAYOUT_MAX_GPUS, err);
	if (n >= 0 && (size_t)n > max)
		n = carve_errorf(err, CARVE_EFULL, "%s names %d GPUs; room for %zu",
				 CARVE_MIG_LAYOUT_ANNOTATION, n, max);
	for (i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].gpu = (unsigned)l[i].gpu;
		out[i].n = (size_t)l[i].n;
		for (j = 0; j < l[i].n; j++) {
			snprintf(out[i].v[j].profile, sizeof(out[i].v[j].profile), "%s",
				 l[i].v[j].profile);
			out[i].v[j].start = (unsigned)l[i].v[j].start;
		}
	}
	free(l);
	return n;
}

/* Layout of one GPU (model mm) from an nd form to the MIG table's form.
 * Returns 0 or CARVE_EINVAL. */
static int to_table(const struct carve_mig_model *mm, const struct nd_mig_layout *w,
		    struct carve_mig_layout *l, struct carve_error *err)
{
	size_t i;

	memset(l, 0, sizeof(*l));
	if (w->n > CARVE_MIG_MAX_INST)
		return carve_errorf(err, CARVE_EINVAL, "GPU %u: %zu MIG devices; at most %d",
				    w->gpu, w->n, CARVE_MIG_MAX_INST);
	for (i = 0; i < w->n; i++) {
		int p = carve_mig_profile_find(mm, w->v[i].profile);

		if (p < 0)
			return carve_errorf(err, CARVE_EINVAL, "GPU %u: MIG profile %s does not "
					    "exist on %s", w->gpu, w->v[i].profile, mm->name);
		if (w->v[i].start > 255)
			return carve_errorf(err, CARVE_EINVAL, "GPU %u: %s at slice %u: no such "
					    "slice", w->gpu, w->v[i].profile, w->v[i].start);
		l->inst[l->n].profile = (uint8_t)p;
		l->inst[l->n].start = (uint8_t)w->v[i].start;
		l->n++;
	}
	return 0;
}

int nd_miglayout_check(const struct nd_snapshot *s, const struct nd_mig_layout *l, size_t n,
		       struct carve_error *err)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		const struct nd_gpu *g = NULL;
		const struct carve_mig_model *mm;
		struct carve_mig_layout t;
		struct carve_error e;
		int rc;

		for (j = 0; j < s->ngpus; j++)
			if (s->gpus[j].index == l[i].gpu)
				g = &s->gpus[j];
		if (!g)
			return carve_errorf(err, CARVE_EINVAL, "GPU %u: no such GPU on this node "
					    "(it has %zu)", l[i].gpu, s->ngpus);
		if (g->mig_current != 1)
			return carve_errorf(err, CARVE_EINVAL, "GPU %u (%s): MIG mode is not enabled",
					    g->index, g->name);
		mm = carve_mig_model_find(g->name);
		if (!mm)
			return carve_errorf(err, CARVE_EINVAL, "GPU %u: %s is not in carve's MIG "
					    "table", g->index, g->name);
		if ((rc = to_table(mm, &l[i], &t, err)))
			return rc;
		if (carve_mig_layout_check(mm, &t, &e))
			return carve_errorf(err, CARVE_EINVAL, "GPU %u: illegal MIG layout for %s: %s",
					    g->index, mm->name, e.text);
	}
	return 0;
}

/* Whether mig-parted entry e is for GPU g (devices, and device-filter
 * when mm is given). */
static bool entry_for_gpu(const struct carve_mf_migdevice *e, const struct nd_gpu *g,
			  const struct carve_mig_model *mm)
{
	bool pick = e->all_devices, model = !e->nfilters || !mm;
	size_t i;

	for (i = 0; !pick && i < e->ndevices; i++)
		pick = e->devices[i] == (int)g->index;
	for (i = 0; !model && i < e->nfilters; i++)
		model = carve_mig_model_pci_match(mm, e->device_filter[i]) > 0;
	return pick && model;
}

/* The layout of one GPU from an entry's counts.  Returns 0 or CARVE_EINVAL. */
static int from_counts(const struct carve_mf_migdevice *e, const struct nd_gpu *g,
		       const struct carve_mig_model *mm, const char *config,
		       struct nd_mig_layout *out, struct carve_error *err)
{
	int counts[32] = {0};
	struct carve_mig_layout l;
	struct carve_error e2;
	size_t i;

	for (i = 0; i < e->ncounts; i++) {
		int p = carve_mig_profile_find(mm, e->counts[i].profile);

		if (p < 0 || p >= 32)
			return carve_errorf(err, CARVE_EINVAL, "mig-parted config %s: MIG profile %s "
					    "does not exist on %s (GPU %u)", config,
					    e->counts[i].profile, mm->name, g->index);
		counts[p] += e->counts[i].count;
	}
	if (carve_mig_layout_from_counts(mm, counts, &l, &e2))
		return carve_errorf(err, CARVE_EINVAL, "mig-parted config %s, GPU %u: %s", config,
				    g->index, e2.text);
	memset(out, 0, sizeof(*out));
	out->gpu = g->index;
	for (i = 0; i < l.n; i++) {
		snprintf(out->v[i].profile, sizeof(out->v[i].profile), "%s",
			 mm->profiles[l.inst[i].profile].name);
		out->v[i].start = l.inst[i].start;
	}
	out->n = l.n;
	return 0;
}

int nd_miglayout_migparted(const char *path, const char *config, const struct nd_snapshot *s,
			   struct nd_mig_layout *out, size_t max, struct carve_error *err)
{
	struct carve_manifests *m = carve_manifests_create();
	const struct carve_mf_migconfig *mc;
	size_t g, e, k = 0;
	int rc = 0;

	if (!m)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	if (carve_manifests_load_path(m, path)) {
		rc = carve_errorf(err, CARVE_EIO, "%s: %s", path,
				  m->diags.n ? m->diags.v[0].msg : "cannot read");
		goto out;
	}
	for (e = 0; e < m->diags.n; e++)
		if (m->diags.v[e].sev == CARVE_SEV_ERROR) {
			rc = carve_errorf(err, CARVE_EPARSE, "%s:%u: %s", path,
					  (unsigned)m->diags.v[e].pos.line, m->diags.v[e].msg);
			goto out;
		}
	mc = carve_mf_find_migconfig(m, config);
	if (!mc) {
		rc = carve_errorf(err, CARVE_ENOTFOUND, "%s: no mig-parted config named %s", path,
				  config);
		goto out;
	}
	for (g = 0; g < s->ngpus && !rc; g++) {
		const struct nd_gpu *gp = &s->gpus[g];
		const struct carve_mig_model *mm = carve_mig_model_find(gp->name);

		for (e = 0; e < mc->n && !rc; e++) {
			const struct carve_mf_migdevice *ent = &mc->v[e];

			if (!mm) {
				/* Not in the MIG table: only an unfiltered entry can
				 * name it, and it must leave MIG off. */
				if (!ent->nfilters && entry_for_gpu(ent, gp, NULL) && ent->mig_enabled)
					rc = carve_errorf(err, CARVE_EINVAL, "mig-parted config %s: "
							  "GPU %u (%s) is not in carve's MIG table",
							  config, gp->index, gp->name);
				continue;
			}
			if (!entry_for_gpu(ent, gp, mm))
				continue;
			if (ent->mig_enabled) { /* the first entry for a GPU wins */
				if (k == max)
					rc = carve_errorf(err, CARVE_EFULL, "mig-parted config %s: "
							  "more than %zu GPUs", config, max);
				else if (!(rc = from_counts(ent, gp, mm, config, &out[k], err)))
					k++;
			}
			break;
		}
	}
out:
	carve_manifests_destroy(m);
	return rc ? rc : (int)k;
}

int nd_miglayout_current(const struct nd_snapshot *s, char *buf, size_t size)
{
	struct carve_gpu_mig *l = calloc(CARVE_MIGLAYOUT_MAX_GPUS, sizeof(*l));
	size_t g, i;
	int n = 0, rc;

	if (!l)
		return CARVE_ENOMEM;
	for (g = 0; g < s->ngpus && n < CARVE_MIGLAYOUT_MAX_GPUS; g++) {
		const struct nd_gpu *gp = &s->gpus[g];

		if (gp->mig_current != 1)
			continue;
		l[n].gpu = (int)gp->index;
		for (i = 0; i < gp->nmig && l[n].n < CARVE_MIG_MAX_INST; i++) {
			struct carve_mig_at *a = &l[n].v[l[n].n];

			/* One GPU instance may hold several compute instances. */
			if (i && gp->mig[i].gi_id == gp->mig[i - 1].gi_id)
				continue;
			if (gp->mig[i].start == UINT_MAX || !gp->mig[i].profile[0]) {
				free(l);
				return CARVE_EINVAL; /* NVML did not say where it is */
			}
			snprintf(a->profile, sizeof(a->profile), "%s", gp->mig[i].profile);
			a->start = (int)gp->mig[i].start;
			l[n].n++;
		}
		n++;
	}
	rc = carve_miglayout_format(l, n, buf, size);
	free(l);
	return rc;
}
