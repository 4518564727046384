/*
 * inventory_carve.c - v1 Nodes whose GPUs are served under carve's own
 * device names (carve.dev/gpu, carve.dev/gpu.shared, carve.dev/mig-<profile>,
 * registered by carve's node agent) instead of, or beside, NVIDIA's.
 *
 * The node builder reads NVIDIA's names; a Node advertising only carve's
 * is read through a view of its resources with each carve name spelled as
 * its nvidia.com twin, and a Node advertising both is read from NVIDIA's
 * names alone (both plugins hand the same devices, so counting both would
 * count each GPU twice).  Once built, the node advertises what it really
 * serves: carve's names, or both families, and carries the label
 * CARVE_DEVICE_NAMES_LABEL ("carve", "nvidia", "both"), by which the
 * bridge keeps a pod on nodes that serve the names it asks for
 * (workloads.c).  A NodePool says what it serves by that label, which
 * its nodes then carry (br_pool_names_fam).
 *
 * Ownership: every name and array made here lives in the inventory's
 * arena, like the other names the inventory holds.
 */
#include <string.h>

#include "carve/resource.h"
#include "bridge_int.h"
#include "inventory_int.h"

/* Which families rl advertises devices under (a positive quantity). */
static unsigned families_of(const struct carve_reslist *rl)
{
	unsigned fam = 0;
	size_t i;

	for (i = 0; i < rl->n; i++)
		if (rl->v[i].milli > 0)
			fam |= BR_FAM_BIT(carve_res_family(rl->v[i].name));
	return fam & (BR_FAM_NVIDIA | BR_FAM_CARVE);
}

/* A copy of rl in the arena with carve's device names dropped (drop) or
 * spelled as their nvidia.com twins, NVIDIA's own (all zero) then left out;
 * false when out of memory. */
static bool nvidia_view(struct carve_inventory *inv, const struct carve_reslist *rl, bool drop,
			struct carve_reslist *out)
{
	struct carve_resq *v;
	char twin[256];
	size_t i, n = 0;

	out->n = 0;
	out->v = NULL;
	if (!rl->n)
		return true;
	v = carve_arena_alloc(&inv->priv->arena, rl->n * sizeof(*v));
	if (!v)
		return false;
	for (i = 0; i < rl->n; i++) {
		enum carve_res_family f = carve_res_family(rl->v[i].name);

		if (!drop && f == CARVE_RF_NVIDIA)
			continue; /* zero (else both families): would shadow the twin */
		v[n] = rl->v[i];
		if (f == CARVE_RF_CARVE) {
			if (drop || carve_res_twin(rl->v[i].name, CARVE_RF_NVIDIA, twin,
						   sizeof(twin)))
				continue;
			v[n].name = carve_arena_strdup(&inv->priv->arena, twin);
			if (!v[n].name)
				return false;
		}
		n++;
	}
	out->n = n;
	out->v = v;
	return true;
}

unsigned br_node_view(struct carve_inventory *inv, const struct carve_mf_node *n,
		      struct carve_mf_node *view)
{
	unsigned fam = families_of(n->allocatable.n ? &n->allocatable : &n->capacity);
	bool drop = fam & BR_FAM_NVIDIA;

	*view = *n;
	if (!(fam & BR_FAM_CARVE))
		return fam;
	if (!nvidia_view(inv, &n->allocatable, drop, &view->allocatable) ||
	    !nvidia_view(inv, &n->capacity, drop, &view->capacity)) {
		inv->priv->oom = true;
		*view = *n;
	}
	return fam;
}

void br_nb_device_names(struct carve_inventory *inv, struct nb *b, unsigned fam,
			bool had_label)
{
	char twin[256];
	size_t i, n = b->nres;

	if (fam & BR_FAM_CARVE)
		inv->priv->carve_nodes++;
	if (fam == BR_FAM_CARVE || fam == (BR_FAM_CARVE | BR_FAM_NVIDIA)) {
		for (i = 0; i < n; i++) {
			const char *name;

			if (carve_res_twin(b->res[i].name, CARVE_RF_CARVE, twin, sizeof(twin)))
				continue; /* not a device name */
			name = carve_arena_strdup(&inv->priv->arena, twin);
			if (!name) {
				inv->priv->oom = true;
				return;
			}
			if (b->res[i].sharing == CARVE_SHARE_TIMESLICE &&
			    carve_res_kind(name, NULL) == CARVE_RK_GPU_WHOLE)
				name = CARVE_RES_NAME_CARVE_GPU_SHARED; /* never a whole GPU */
			if (fam == BR_FAM_CARVE) {
				b->res[i].name = name;
			} else if (b->nres < BR_MAX_NODE_RES) {
				b->res[b->nres] = b->res[i];
				b->res[b->nres++].name = name;
			}
		}
	}
	if (fam == BR_FAM_CARVE)
		br_nb_set_label(b, CARVE_DEVICE_NAMES_LABEL, "carve");
	else if (fam == (BR_FAM_CARVE | BR_FAM_NVIDIA))
		br_nb_set_label(b, CARVE_DEVICE_NAMES_LABEL, "both");
	else if (fam == BR_FAM_NVIDIA && had_label)
		br_nb_set_label(b, CARVE_DEVICE_NAMES_LABEL, "nvidia");
}

size_t br_inv_carve_nodes(const struct carve_inventory *inv)
{
	return inv && inv->priv ? inv->priv->carve_nodes : 0;
}

bool br_pool_names_fam(struct carve_manifests *m, const char *who,
		       const struct carve_kvlist *labels, unsigned *fam)
{
	struct carve_pos pos;
	const char *v = br_kv_get(labels, CARVE_DEVICE_NAMES_LABEL, &pos);

	*fam = 0;
	if (!v || !strcmp(v, "nvidia"))
		return true;
	if (!strcmp(v, "carve"))
		*fam = BR_FAM_CARVE;
	else if (!strcmp(v, "both"))
		*fam = BR_FAM_CARVE | BR_FAM_NVIDIA;
	else
		carve_diag_error(&m->diags, pos, "%s: label %s is '%s'; it must be carve, nvidia "
				 "or both; the pool is skipped", who, CARVE_DEVICE_NAMES_LABEL, v);
	return *fam != 0;
}
