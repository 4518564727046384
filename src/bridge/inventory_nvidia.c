/*
 * inventory_nvidia.c - what NVIDIA's configs make of a node's GPUs: MIG
 * layouts from mig-parted counts, explicit placements, mig-parted configs
 * (defined in the inputs or built-in names such as all-balanced), a Node's
 * nvidia.com/mig.config label and its status.allocatable nvidia.com/mig-*
 * resources; and device-plugin time-slicing (replicas, renamed resources,
 * time-sliced MIG instances).
 *
 * Invariants: a layout is applied only when it is legal for the GPU model
 * (checked through the core's MIG geometry); what cannot be applied is
 * reported and the GPUs stay whole.  One (config, model) that draws
 * diagnostics on many Nodes is remembered (struct migbad) and reported
 * once by br_report_migbad.  Ownership: the remembered configs live in the
 * inventory's private part; names are borrowed from the manifests.
 */
#include <stdio.h>
#include <string.h>

#include "carve/inventory.h"
#include "carve/miglayout.h"
#include "carve/quantity.h"
#include "carve/resource.h"
#include "inventory_int.h"

/* ---- MIG layouts from counts, placements and mig-parted configs ---- */

/*
 * Layout for one GPU from mig-parted style counts.  Reports in d at pos and
 * returns false when a profile is unknown or no legal layout exists.
 */
bool br_mig_layout_from_counts(struct carve_diags *d, const struct carve_mig_model *mm,
			       const struct carve_migcount *c, size_t n, struct carve_pos pos,
			       const char *who, struct carve_mig_layout *out)
{
	int counts[32] = {0};
	struct carve_error err;
	size_t i;

	for (i = 0; i < n; i++) {
		int p = carve_mig_profile_find(mm, c[i].profile);

		if (p < 0) {
			carve_diag_error(d, c[i].pos, "%s: MIG profile %s does not exist on %s",
					 who, c[i].profile, mm->name);
			return false;
		}
		counts[p] += c[i].count;
	}
	if (carve_mig_layout_from_counts(mm, counts, out, &err)) {
		carve_diag_error(d, pos, "%s: illegal MIG layout for %s: %s", who,
				 mm->name, err.text);
		return false;
	}
	return true;
}

/*
 * Layout from explicit placements, checked one instance at a time so each
 * problem is reported at the placement that causes it.
 */
bool br_mig_layout_from_placements(struct carve_manifests *m, const struct carve_mig_model *mm,
				   const struct carve_migplace *pl, size_t n, const char *who,
				   struct carve_mig_layout *out)
{
	struct carve_error err;
	bool ok = true;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		struct carve_mig_layout t = *out;
		int p = carve_mig_profile_find(mm, pl[i].profile);

		if (p < 0) {
			carve_diag_error(&m->diags, pl[i].pos, "%s: MIG profile %s does not exist on %s",
					 who, pl[i].profile, mm->name);
			ok = false;
			continue;
		}
		if (t.n == CARVE_MIG_MAX_INST) {
			carve_diag_error(&m->diags, pl[i].pos, "%s: more than %d MIG instances on one GPU",
					 who, CARVE_MIG_MAX_INST);
			return false;
		}
		t.inst[t.n].profile = (uint8_t)p;
		t.inst[t.n].start = (uint8_t)pl[i].start;
		t.n++;
		if (carve_mig_layout_check(mm, &t, &err)) {
			carve_diag_error(&m->diags, pl[i].pos, "%s: illegal MIG layout for %s: %s", who,
					 mm->name, err.text);
			ok = false;
			continue;
		}
		*out = t;
	}
	return ok;
}

/* mig-parted's built-in names: all-disabled, all-<profile> (as many as fit),
 * all-balanced (per the reference's table). */
static bool builtin_migconfig(const struct carve_mig_model *mm, const char *name,
			      struct carve_mig_layout *out, bool *disabled)
{
	int counts[32] = {0};
	int p;

	*disabled = false;
	memset(out, 0, sizeof(*out));
	if (!strcmp(name, "all-disabled")) {
		*disabled = true;
		return true;
	}
	if (!strcmp(name, "all-balanced")) {
		/* 1g x2, 2g x1, 3g x1 with the model's memory sizes (mig-parted). */
		int g1 = -1, g2 = -1, g3 = -1, i;

		for (i = 0; i < mm->nprofiles; i++) {
			const struct carve_mig_profile *pr = &mm->profiles[i];

			if (pr->media)
				continue;
			if (pr->compute == 1 && pr->mem_slices == 1 && g1 < 0)
				g1 = i;
			if (pr->compute == 2 && g2 < 0)
				g2 = i;
			if (pr->compute == 3 && g3 < 0)
				g3 = i;
		}
		if (mm->mem_slices == 4) { /* A30: 1g.6gb x2, 2g.12gb x1 */
			if (g1 < 0 || g2 < 0)
				return false;
			counts[g1] = 2;
			counts[g2] = 1;
		} else {
			if (g1 < 0 || g2 < 0 || g3 < 0)
				return false;
			counts[g1] = 2;
			counts[g2] = 1;
			counts[g3] = 1;
		}
		return carve_mig_layout_from_counts(mm, counts, out, NULL) == 0;
	}
	if (strncmp(name, "all-", 4))
		return false;
	p = carve_mig_profile_find(mm, name + 4);
	if (p < 0)
		return false;
	counts[p] = carve_mig_fit_count(mm, out, p);
	return carve_mig_layout_from_counts(mm, counts, out, NULL) == 0;
}

/*
 * Whether a mig-parted entry is for cards of model mm: an entry without a
 * device-filter is for every card; one with a filter only for the cards
 * whose PCI id it lists (carve_mig_model_pci_match).  A filter that is not
 * a PCI id goes to *bad.
 */
static bool entry_for_model(const struct carve_mf_migdevice *e, const struct carve_mig_model *mm,
			    const char **bad)
{
	bool hit = false;
	size_t i;

	if (!e->nfilters)
		return true;
	for (i = 0; i < e->nfilters; i++) {
		int r = carve_mig_model_pci_match(mm, e->device_filter[i]);

		if (r < 0 && !*bad)
			*bad = e->device_filter[i];
		if (r > 0)
			hit = true;
	}
	return hit;
}

/*
 * Applies mig-parted config `name` to b's GPUs (all of model mm), reporting
 * in dg.  Returns true when at least one GPU became MIG.  An entry with a
 * device-filter applies only when it lists one of the model's PCI ids (the
 * table in mig_profiles.c, sources in docs/internals/MIG.md), whatever its
 * mig-devices; a config none of whose entries is for the model is an
 * error at pos.
 */
bool br_apply_migconfig(struct carve_manifests *m, struct carve_diags *dg, struct nb *b,
			const struct carve_mig_model *mm, const char *name,
			struct carve_pos pos, const char *who)
{
	const struct carve_mf_migconfig *mc = carve_mf_find_migconfig(m, name);
	struct carve_mig_layout l;
	bool any = false, disabled, for_model = false;
	size_t i, e, d;

	if (!mc) {
		if (!builtin_migconfig(mm, name, &l, &disabled)) {
			carve_diag_error(dg, pos,
					 "%s: mig-parted config '%s' is not defined (and is not a "
					 "built-in name such as all-balanced or all-<profile>)",
					 who, name);
			return false;
		}
		for (i = 0; i < b->spec.ngpus && !disabled; i++) {
			b->gpus[i].sharing = CARVE_SHARE_MIG;
			b->gpus[i].mig_model = mm;
			b->gpus[i].mig = l;
			any = true;
		}
		return any;
	}
	for (e = 0; e < mc->n; e++) {
		const struct carve_mf_migdevice *ent = &mc->v[e];
		const char *bad = NULL;
		bool mine = entry_for_model(ent, mm, &bad);

		if (bad)
			carve_diag_error(dg, ent->pos, "%s: mig-parted config %s: device-filter '%s' "
					 "is not a PCI id such as 0x20B210DE", who, name, bad);
		if (!mine)
			continue;
		for_model = true;
		if (!ent->mig_enabled)
			continue;
		if (!br_mig_layout_from_counts(dg, mm, ent->counts, ent->ncounts, ent->pos, who,
					       &l))
			continue;
		for (i = 0; i < b->spec.ngpus; i++) {
			bool pick = ent->all_devices;

			for (d = 0; !pick && d < ent->ndevices; d++)
				pick = ent->devices[d] == (int)i;
			if (!pick)
				continue;
			b->gpus[i].sharing = CARVE_SHARE_MIG;
			b->gpus[i].mig_model = mm;
			b->gpus[i].mig = l;
			any = true;
		}
	}
	if (!for_model)
		carve_diag_error(dg, pos, "%s: mig-parted config %s has no entry for %s "
				 "(every entry's device-filter is for another model)", who, name,
				 mm->name);
	return any;
}

/* ---- device-plugin time-slicing ---- */

/* Device-plugin time-slicing on a node: sets replicas on exclusive GPUs, or
 * marks MIG resources that are time-sliced too. */
void br_apply_dpconfig(struct carve_inventory *inv, struct carve_manifests *m,
		       struct nb *b, const struct carve_mf_dpconfig *dp,
		       const char **ts_name, bool *fail_gt_one)
{
	size_t i, k;

	*fail_gt_one = dp->fail_requests_gt_one;
	for (i = 0; i < dp->nts; i++) {
		const struct carve_mf_tsresource *r = &dp->ts[i];

		if (r->replicas < 1)
			continue;
		if (!strcmp(r->name, CARVE_RES_NAME_GPU)) {
			for (k = 0; k < b->spec.ngpus; k++) {
				if (b->gpus[k].sharing != CARVE_SHARE_EXCLUSIVE)
					continue;
				b->gpus[k].sharing = CARVE_SHARE_TIMESLICE;
				b->gpus[k].replicas = (uint32_t)r->replicas;
				b->gpus[k].fail_gt_one = dp->fail_requests_gt_one;
			}
			if (r->rename)
				*ts_name = r->rename;
			else if (dp->rename_by_default)
				*ts_name = CARVE_RES_NAME_GPU_SHARED;
		}
	}
	(void)inv;
	(void)m;
}

void br_mark_mig_timesliced(struct nb *b, const struct carve_mf_dpconfig *dp)
{
	size_t i, k;

	for (i = 0; dp && i < dp->nts; i++)
		for (k = 0; k < b->nres; k++)
			if (!strcmp(b->res[k].name, dp->ts[i].name) &&
			    b->res[k].sharing == CARVE_SHARE_MIG && dp->ts[i].replicas >= 1) {
				b->res[k].mig_timesliced = true;
				b->res[k].count *= dp->ts[i].replicas;
				b->res[k].max_per_pod = dp->fail_requests_gt_one ? 1 : b->res[k].count;
			}
}

/* ---- MIG on v1 Nodes: from resources, from nvidia.com/mig.config, checks ---- */

bool br_mig_from_current(struct carve_manifests *m, struct nb *b, const char *v,
			 struct carve_pos pos, const struct carve_mig_model *mm, const char *who)
{
	struct carve_gpu_mig l[CARVE_MIGLAYOUT_MAX_GPUS];
	struct carve_mig_layout lay[BR_MAX_NODE_GPUS];
	bool listed[BR_MAX_NODE_GPUS] = {false};
	struct carve_error err = {0, ""};
	int n = carve_miglayout_parse(v, l, CARVE_MIGLAYOUT_MAX_GPUS, &err), i, k;
	size_t g;

	if (n < 0) {
		carve_diag_error(&m->diags, pos, "%s: annotation %s: %s", who,
				 CARVE_MIG_CURRENT_ANNOTATION, err.text);
		return false;
	}
	memset(lay, 0, sizeof(lay));
	for (i = 0; i < n; i++) {
		if ((size_t)l[i].gpu >= b->spec.ngpus) {
			carve_diag_error(&m->diags, pos, "%s: annotation %s names GPU %d, but the "
					 "node has %zu GPU(s)", who, CARVE_MIG_CURRENT_ANNOTATION,
					 l[i].gpu, b->spec.ngpus);
			return false;
		}
		listed[l[i].gpu] = true;
		for (k = 0; k < l[i].n; k++) {
			int p = carve_mig_profile_find(mm, l[i].v[k].profile);

			if (p < 0 || carve_mig_layout_add(mm, &lay[l[i].gpu], p, l[i].v[k].start)) {
				carve_diag_error(&m->diags, pos, "%s: annotation %s: GPU %d: %s@%d %s "
						 "on %s", who, CARVE_MIG_CURRENT_ANNOTATION,
						 l[i].gpu, l[i].v[k].profile, l[i].v[k].start,
						 p < 0 ? "is not a MIG profile" :
						 "is not a legal placement beside the instances "
						 "before it", mm->name);
				return false;
			}
		}
	}
	for (g = 0; g < b->spec.ngpus; g++) {
		if (!listed[g])
			continue;
		b->gpus[g].sharing = CARVE_SHARE_MIG;
		b->gpus[g].mig_model = mm;
		b->gpus[g].mig = lay[g];
	}
	return true;
}

/* MIG from allocatable nvidia.com/mig-* (mixed strategy): spread the
 * instances over the GPUs, largest profiles first. */
bool br_mig_from_resources(struct carve_manifests *m, struct nb *b,
			   const struct carve_mf_node *n, const struct carve_mig_model *mm)
{
	const struct carve_reslist *rl = n->allocatable.n ? &n->allocatable : &n->capacity;
	int want[32] = {0};
	size_t i, g;
	int p;
	bool any = false;

	for (i = 0; i < rl->n; i++) {
		const char *prof;

		if (!carve_res_is_mig(rl->v[i].name, &prof))
			continue;
		p = carve_mig_profile_find(mm, prof);
		if (p < 0) {
			carve_diag_error(&m->diags, rl->v[i].pos,
					 "Node %s: %s: MIG profile %s does not exist on %s",
					 n->meta.name, rl->v[i].name, prof, mm->name);
			continue;
		}
		want[p] += (int)carve_qty_value(rl->v[i].milli);
		any = true;
	}
	if (!any)
		return false;
	for (g = 0; g < b->spec.ngpus; g++) {
		b->gpus[g].sharing = CARVE_SHARE_MIG;
		b->gpus[g].mig_model = mm;
		memset(&b->gpus[g].mig, 0, sizeof(b->gpus[g].mig));
	}
	/* Largest first, first GPU with a free legal slot. */
	for (;;) {
		int best = -1;

		for (p = 0; p < mm->nprofiles; p++)
			if (want[p] > 0 && (best < 0 ||
					    mm->profiles[p].mem_slices > mm->profiles[best].mem_slices))
				best = p;
		if (best < 0)
			break;
		for (g = 0; g < b->spec.ngpus; g++) {
			uint8_t st;

			if (carve_mig_free_starts(mm, &b->gpus[g].mig, best, &st, 1) > 0 &&
			    carve_mig_layout_add(mm, &b->gpus[g].mig, best, st) == 0)
				break;
		}
		if (g == b->spec.ngpus) {
			carve_diag_error(&m->diags, n->meta.pos,
					 "Node %s: its nvidia.com/mig-* resources do not fit on %zu %s "
					 "GPU(s) in any legal MIG layout",
					 n->meta.name, b->spec.ngpus, mm->name);
			for (g = 0; g < b->spec.ngpus; g++)
				b->gpus[g].sharing = CARVE_SHARE_EXCLUSIVE;
			return false;
		}
		want[best]--;
	}
	return true;
}

/* nvidia.com/mig-* in status.allocatable of a card without MIG: an error at
 * each such resource (the node keeps its GPUs whole). */
void br_mig_on_non_mig(struct carve_manifests *m, const char *who,
		       const struct carve_reslist *rl, const struct carve_gpu_model *gm)
{
	size_t i;

	for (i = 0; i < rl->n; i++)
		if (carve_res_is_mig(rl->v[i].name, NULL) && rl->v[i].milli > 0)
			carve_diag_error(&m->diags, rl->v[i].pos, "%s: %s: MIG is not available on %s",
					 who, rl->v[i].name, gm->name);
}

/*
 * After nvidia.com/mig.config gave the node its layout: when
 * status.allocatable lists MIG resources too and they disagree with what
 * the config gives, a warning at the label (the config is used).
 */
void br_check_mig_alloc(struct carve_manifests *m, const char *who, const struct nb *b,
			const struct carve_reslist *rl, const char *cfg, struct carve_pos pos)
{
	const char *name = NULL;
	int64_t from_cfg = 0, alloc = 0;
	size_t i, k;
	bool any = false;

	for (i = 0; i < rl->n; i++)
		any |= carve_res_is_mig(rl->v[i].name, NULL);
	if (!any)
		return; /* MIG resources not advertised (yet): nothing to compare */
	for (k = 0; k < b->nres && !name; k++)
		if (b->res[k].sharing == CARVE_SHARE_MIG &&
		    carve_qty_value(br_res_get(rl, b->res[k].name, NULL)) != b->res[k].count) {
			name = b->res[k].name;
			from_cfg = b->res[k].count;
			alloc = carve_qty_value(br_res_get(rl, name, NULL));
		}
	for (i = 0; i < rl->n && !name; i++) {
		if (!carve_res_is_mig(rl->v[i].name, NULL) || rl->v[i].milli <= 0)
			continue;
		for (k = 0; k < b->nres; k++)
			if (!strcmp(b->res[k].name, rl->v[i].name))
				break;
		if (k == b->nres) {
			name = rl->v[i].name;
			alloc = carve_qty_value(rl->v[i].milli);
		}
	}
	if (name)
		carve_diag_warn(&m->diags, pos, "%s: nvidia.com/mig.config=%s gives %lld %s but "
				"status.allocatable has %lld; using the config", who, cfg,
				(long long)from_cfg, name, (long long)alloc);
}

/*
 * A Node's nvidia.com/mig.config, applied with its diagnostics set aside:
 * a (config, model) that draws any is remembered and reported once by
 * br_report_migbad(), so N Nodes naming one bad config give one error.
 */
bool br_node_migconfig(struct carve_inventory *inv, struct carve_manifests *m,
		       struct nb *b, const struct carve_mig_model *mm, const char *cfg,
		       struct carve_pos pos, const char *node, const char *who)
{
	struct carve_inventory_int *p = inv->priv;
	struct carve_diags quiet;
	size_t i;
	bool ok;

	carve_diags_init(&quiet);
	ok = br_apply_migconfig(m, &quiet, b, mm, cfg, pos, who);
	if (quiet.nerrors || quiet.nwarnings) {
		for (i = 0; i < p->nmigbad; i++)
			if (p->migbad[i].mm == mm && !strcmp(p->migbad[i].config, cfg))
				break;
		if (i < p->nmigbad) {
			p->migbad[i].nodes++;
		} else if (br_nb_grow(b, (void **)&p->migbad, &p->capmigbad, p->nmigbad + 1,
				      sizeof(*p->migbad))) {
			p->migbad[p->nmigbad++] = (struct migbad){cfg, mm, node, pos, 1};
		}
	}
	carve_diags_cleanup(&quiet);
	return ok;
}

/* Reports each remembered (config, model) once, at its first Node's label
 * and the config's own positions, with how many Nodes use it. */
void br_report_migbad(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b)
{
	struct carve_inventory_int *p = inv->priv;
	char who[400];
	size_t i;

	for (i = 0; i < p->nmigbad; i++) {
		const struct migbad *e = &p->migbad[i];

		if (e->nodes == 1)
			snprintf(who, sizeof(who), "Node %s", e->first);
		else
			snprintf(who, sizeof(who), "Node %s (and %zu more Nodes with "
				 "nvidia.com/mig.config=%s)", e->first, e->nodes - 1, e->config);
		br_nb_reset(b);
		br_nb_init_gpus(b, 1, NULL, e->mm->name, 0);
		br_apply_migconfig(m, &m->diags, b, e->mm, e->config, e->pos, who);
	}
}
