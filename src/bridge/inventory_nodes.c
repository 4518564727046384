/*
 * inventory_nodes.c - the inventory's node sources expanded into nodes:
 * NodePools (count nodes of one shape, GFD-style labels, MIG, time-slicing
 * or fractions as the pool's sharing says), v1 Nodes grouped into pools
 * (carve.dev/pool, else GPU product and sharing mode) and built from their
 * labels and status, and openb CSV node lists (one pool per file).
 *
 * Invariants: every node is built in the shared struct nb (br_nb_reset
 * first) and enters the cluster only through br_nb_commit, so nodes of one
 * pool get consecutive ids; a bad value is reported at its manifest
 * position and the node keeps a safe shape.  Ownership: as inventory.c;
 * nothing here allocates except the grouping tables of br_build_nodes,
 * freed before it returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/gpumodel.h"
#include "carve/inventory.h"
#include "carve/miglayout.h"
#include "carve/quantity.h"
#include "carve/resource.h"
#include "inventory_int.h"

#define MAX_GPU_MEMORY_MIB (1LL << 31)

/* ---- NodePools ---- */

void br_build_pool(struct carve_inventory *inv, struct carve_manifests *m,
		   const struct carve_mf_nodepool *np, struct nb *b)
{
	const struct carve_gpu_model *gm = np->gpu_model ? carve_gpu_model_find(np->gpu_model) : NULL;
	const char *model = gm ? gm->name : np->gpu_model;
	const char *prefix = np->name_prefix;
	struct carve_inv_pool *pl;
	char who[300];
	int ngpus = np->gpus_per_node, i;
	size_t k;
	bool mig_ok = false;
	struct carve_mig_layout l;
	const char *ts_name = NULL;
	const char *product = np->gpu_model;
	unsigned names_fam; /* served device names, from its labels (BR_FAM_*) */

	snprintf(who, sizeof(who), "NodePool %s", np->meta.name);
	if (!br_pool_names_fam(m, who, &np->labels, &names_fam))
		return;
	if (np->count > 0 &&
	    carve_cluster_node_count(inv->cluster) + (size_t)np->count > BR_MAX_NODES) {
		carve_diag_error(&m->diags, np->count_pos, "%s: %d more nodes would make the "
				 "inventory larger than %d nodes; the pool is skipped", who,
				 np->count, BR_MAX_NODES);
		return;
	}
	if (ngpus > BR_MAX_NODE_GPUS) {
		carve_diag_error(&m->diags, np->count_pos, "%s: %d GPUs per node is more than %d",
				 who, ngpus, BR_MAX_NODE_GPUS);
		return;
	}
	if (np->sharing == CARVE_SHARE_MIG && ngpus > 0) {
		if (!gm || !gm->mig) {
			carve_diag_error(&m->diags, np->sharing_pos,
					 "%s: MIG is not available on %s; use exclusive, timeslice "
					 "or fraction sharing", who, model ? model : "an unknown GPU model");
		} else if (np->nplace) {
			mig_ok = br_mig_layout_from_placements(m, gm->mig, np->place, np->nplace,
								       who, &l);
		} else if (np->nmig) {
			mig_ok = br_mig_layout_from_counts(&m->diags, gm->mig, np->mig, np->nmig,
							   np->mig_pos, who, &l);
		} else if (np->mig_config) {
			mig_ok = true; /* applied per node below */
		}
	}
	if (np->sharing == CARVE_SHARE_TIMESLICE)
		ts_name = np->timeslice.rename_by_default ? CARVE_RES_NAME_GPU_SHARED : CARVE_RES_NAME_GPU;
	if (np->gpu_model && np->sharing == CARVE_SHARE_TIMESLICE &&
	    !np->timeslice.rename_by_default)
		product = br_inv_fmt(inv, "%s%s", np->gpu_model, "-SHARED");
	pl = br_new_pool(inv, np->meta.name, "NodePool", np->meta.pos);
	if (!pl)
		return;
	for (i = 0; i < np->count; i++) {
		br_nb_reset(b);
		if ((size_t)snprintf(b->name, sizeof(b->name), "%s%d", prefix ? prefix : "", i) >=
		    sizeof(b->name)) {
			/* The loader refuses such prefixes; never build a cut name. */
			carve_diag_error(&m->diags, np->meta.pos, "%s: node name %s%d is longer "
					 "than %zu characters", who, prefix ? prefix : "", i,
					 sizeof(b->name) - 1);
			return;
		}
		b->spec.name = b->name;
		b->spec.pool = np->meta.name;
		b->spec.pos = np->meta.pos;
		b->spec.cpu_milli = np->cpu_milli;
		b->spec.memory_milli = np->memory_milli;
		b->spec.pods = np->pods ? np->pods : 110;
		b->spec.block = np->block;
		b->spec.rack = np->rack;
		br_nb_set_taints(b, np->taints, np->ntaints);
		br_nb_set_label(b, "kubernetes.io/hostname", b->name);
		br_nb_set_label(b, "carve.dev/pool", np->meta.name);
		if (np->block)
			br_nb_set_label(b, "cloud.provider.com/topology-block", np->block);
		if (np->rack)
			br_nb_set_label(b, "cloud.provider.com/topology-rack", np->rack);
		br_nb_init_gpus(b, ngpus, gm, model,
				np->gpu_memory_mib > 0 ? (uint32_t)np->gpu_memory_mib : 0);
		if (ngpus > 0 && model) {
			snprintf(b->numbuf[0], sizeof(b->numbuf[0]), "%d", ngpus);
			/* GFD labels the product as written, with -SHARED appended
			 * when time-slicing does not rename the resource. */
			br_nb_set_label(b, "nvidia.com/gpu.product", product);
			br_nb_set_label(b, "nvidia.com/gpu.count", b->numbuf[0]);
			if (b->gpus[0].memory_mib) {
				snprintf(b->numbuf[1], sizeof(b->numbuf[1]), "%u",
					 (unsigned)b->gpus[0].memory_mib);
				br_nb_set_label(b, "nvidia.com/gpu.memory", b->numbuf[1]);
			}
		}
		if (mig_ok && (np->nmig || np->nplace)) {
			for (k = 0; k < (size_t)ngpus; k++) {
				b->gpus[k].sharing = CARVE_SHARE_MIG;
				b->gpus[k].mig_model = gm->mig;
				b->gpus[k].mig = l;
			}
		} else if (mig_ok && np->mig_config) {
			/* Every node gets the same result: report for the first only. */
			struct carve_diags quiet;

			carve_diags_init(&quiet);
			if (!br_apply_migconfig(m, i ? &quiet : &m->diags, b, gm->mig, np->mig_config,
						np->mig_pos, who))
				mig_ok = false; /* later nodes stay exclusive */
			carve_diags_cleanup(&quiet);
		} else if (np->sharing == CARVE_SHARE_TIMESLICE && np->timeslice.replicas >= 1) {
			for (k = 0; k < (size_t)ngpus; k++) {
				b->gpus[k].sharing = CARVE_SHARE_TIMESLICE;
				b->gpus[k].replicas = (uint32_t)np->timeslice.replicas;
				b->gpus[k].fail_gt_one = np->timeslice.fail_requests_gt_one;
			}
		} else if (np->sharing == CARVE_SHARE_FRACTION) {
			for (k = 0; k < (size_t)ngpus; k++)
				b->gpus[k].sharing = CARVE_SHARE_FRACTION;
		}
		if (np->sharing == CARVE_SHARE_MIG && mig_ok)
			br_nb_set_label(b, "nvidia.com/mig.strategy", "mixed");
		if (np->sharing == CARVE_SHARE_TIMESLICE)
			br_nb_set_label(b, "nvidia.com/gpu.sharing-strategy", "time-slicing");
		for (k = 0; k < np->labels.n; k++)
			br_nb_set_label(b, np->labels.v[k].key, np->labels.v[k].value);
		if (np->sharing != CARVE_SHARE_EXCLUSIVE || !np->sharing_pos.line)
			br_nb_share_whole_gpus(b);
		br_nb_advertise(inv, b, ts_name, np->timeslice.fail_requests_gt_one);
		if (names_fam)
			br_nb_device_names(inv, b, names_fam, true);
		if (br_nb_commit(inv, m, b) >= 0)
			pl->nnodes++;
	}
}

/* ---- v1 Nodes ---- */

/* Whether node n has a taint of that key already. */
static bool has_taint(const struct carve_mf_node *n, const char *key)
{
	size_t i;

	for (i = 0; i < n->ntaints; i++)
		if (n->taints[i].key && !strcmp(n->taints[i].key, key))
			return true;
	return false;
}

/* GPU product of a node: GFD label (minus -SHARED and a single-strategy
 * -MIG-<profile> suffix), else the openb card-model label.  The profile
 * points into buf, past the trimmed -SHARED. */
static const char *node_product(const struct carve_mf_node *n, char *buf, size_t size,
				const char **single_profile)
{
	const char *p = br_kv_get(&n->meta.labels, "nvidia.com/gpu.product", NULL);
	char *cut;

	*single_profile = NULL;
	if (!p)
		return br_kv_get(&n->meta.labels, "alibabacloud.com/gpu-card-model", NULL);
	snprintf(buf, size, "%s", p);
	cut = strstr(buf, "-SHARED");
	if (cut && !cut[7])
		*cut = '\0';
	cut = strstr(buf, "-MIG-");
	if (cut) {
		*single_profile = cut + 5;
		*cut = '\0';
	}
	return buf;
}

struct nodeinfo {
	const char *pool;
	char key[160];
};

static void node_pool_key(const struct carve_mf_node *n, struct nodeinfo *ni)
{
	const char *pool = br_kv_get(&n->meta.labels, "carve.dev/pool", NULL);
	const char *single;
	char prod[128];
	const char *model;
	const char *mode = "whole", *strategy, *opt;

	if (pool) {
		snprintf(ni->key, sizeof(ni->key), "%s", pool);
		return;
	}
	model = node_product(n, prod, sizeof(prod), &single);
	strategy = br_kv_get(&n->meta.labels, "nvidia.com/mig.strategy", NULL);
	if (br_kv_get(&n->meta.labels, "nvidia.com/mig.config", NULL) || single ||
	    (strategy && strcmp(strategy, "none")) ||
	    br_kv_get(&n->meta.annotations, CARVE_MIG_CURRENT_ANNOTATION, NULL))
		mode = "mig";
	else if (br_kv_get(&n->meta.labels, "nvidia.com/device-plugin.config", NULL))
		mode = "shared";
	else if (br_kv_get(&n->meta.labels, "alibabacloud.com/gpu-card-model", NULL))
		mode = "fraction";
	else if ((opt = br_kv_get(&n->meta.labels, "carve.dev/sharing-mode", NULL)) &&
		 !strcmp(opt, "exclusive"))
		mode = "exclusive"; /* opted out of fractions: a pool of its own */
	snprintf(ni->key, sizeof(ni->key), "nodes/%s/%s", model ? model : "cpu", mode);
}

/*
 * A count in a node label: decimal digits only, at most max.  Absent: false.
 * A bad value is a warning at the label, naming what is used instead, and
 * false, so the caller falls back.
 */
static bool label_num(struct carve_manifests *m, const char *who, const struct carve_mf_node *n,
		      const char *key, int64_t max, const char *fallback, int64_t *out)
{
	struct carve_pos pos;
	const char *v = br_kv_get(&n->meta.labels, key, &pos), *s;
	bool digits = v && *v;
	int64_t x = 0;

	if (!v)
		return false;
	for (s = v; *s && digits; s++) {
		if (*s < '0' || *s > '9')
			digits = false;
		else if (x <= max)
			x = x * 10 + (*s - '0');
	}
	if (!digits) {
		carve_diag_warn(&m->diags, pos, "%s: %s: '%s' is not a number; using %s", who, key,
				v, fallback);
		return false;
	}
	if (x > max) {
		carve_diag_warn(&m->diags, pos, "%s: %s: '%s' is out of range (0 to %lld); using %s",
				who, key, v, (long long)max, fallback);
		return false;
	}
	*out = x;
	return true;
}

static void build_node(struct carve_inventory *inv, struct carve_manifests *m,
		       const struct carve_mf_node *node, struct nb *b)
{
	struct carve_mf_node view; /* node read through NVIDIA's names */
	unsigned fam = br_node_view(inv, node, &view);
	bool had_names = br_kv_get(&node->meta.labels, CARVE_DEVICE_NAMES_LABEL, NULL) != NULL;
	const struct carve_mf_node *n = &view;
	const struct carve_reslist *rl = n->allocatable.n ? &n->allocatable : &n->capacity;
	char prod[128];
	const char *single = NULL, *model, *v, *ts_name = NULL;
	const struct carve_gpu_model *gm;
	const struct carve_mf_dpconfig *dp = NULL;
	struct carve_pos lpos, cfg_pos = {0}, cur_pos;
	const char *cfg = NULL, *cur;
	int64_t ngpus = 0, x;
	uint32_t mem = 0;
	bool found, fail_gt_one = false;
	size_t i;
	char who[300];

	snprintf(who, sizeof(who), "Node %s", n->meta.name);
	br_nb_reset(b);
	b->spec.name = n->meta.name;
	b->spec.pos = n->meta.pos;
	b->spec.cpu_milli = br_res_get(rl, CARVE_RES_NAME_CPU, NULL);
	b->spec.memory_milli = br_res_get(rl, CARVE_RES_NAME_MEMORY, NULL);
	b->spec.pods = carve_qty_value(br_res_get(rl, CARVE_RES_NAME_PODS, &found));
	if (!found)
		b->spec.pods = 110;
	for (i = 0; i < n->meta.labels.n; i++) /* unique: duplicate keys are YAML errors */
		br_nb_add_label(b, n->meta.labels.v[i].key, n->meta.labels.v[i].value);
	br_nb_set_taints(b, n->taints, n->ntaints);
	/* A cordoned node (spec.unschedulable) carries the taint
	 * node.kubernetes.io/unschedulable:NoSchedule, which Kubernetes' node
	 * lifecycle controller adds (kubernetes.io docs, "Taints and
	 * Tolerations": taint nodes by condition). */
	if (n->unschedulable && !has_taint(n, "node.kubernetes.io/unschedulable") &&
	    br_nb_grow(b, (void **)&b->taints, &b->captaints, b->spec.ntaints + 1,
		       sizeof(*b->taints))) {
		b->taints[b->spec.ntaints].key = "node.kubernetes.io/unschedulable";
		b->taints[b->spec.ntaints].value = NULL;
		b->taints[b->spec.ntaints].effect = "NoSchedule";
		b->spec.taints = b->taints;
		b->spec.ntaints++;
	}
	b->spec.block = br_kv_get(&n->meta.labels, "cloud.provider.com/topology-block", NULL);
	b->spec.rack = br_kv_get(&n->meta.labels, "cloud.provider.com/topology-rack", NULL);

	model = node_product(n, prod, sizeof(prod), &single);
	gm = model ? carve_gpu_model_find(model) : NULL;
	/* A label that is not a count is reported and the next source used. */
	if (!single && label_num(m, who, n, "nvidia.com/gpu.count", BR_MAX_NODE_GPUS,
				 "status.allocatable", &x))
		ngpus = x;
	else if (label_num(m, who, n, "alibabacloud.com/gpu-count", BR_MAX_NODE_GPUS,
			   "status.allocatable", &x))
		ngpus = x;
	else if (br_res_get(rl, "alibabacloud.com/gpu-count", &found), found)
		ngpus = carve_qty_value(br_res_get(rl, "alibabacloud.com/gpu-count", NULL));
	else if (!single)
		ngpus = carve_qty_value(br_res_get(rl, CARVE_RES_NAME_GPU, NULL));
	if (!single && label_num(m, who, n, "nvidia.com/gpu.memory", MAX_GPU_MEMORY_MIB,
				 "the model's memory", &x))
		mem = (uint32_t)x;
	if (single && gm && gm->mig) {
		/* Single strategy: nvidia.com/gpu counts MIG devices of one profile. */
		int p = carve_mig_profile_find(gm->mig, single);
		int64_t inst = carve_qty_value(br_res_get(rl, CARVE_RES_NAME_GPU, NULL));
		struct carve_mig_layout empty = {0};
		int per = p >= 0 ? carve_mig_fit_count(gm->mig, &empty, p) : 0;

		if (p < 0 || per <= 0) {
			carve_diag_error(&m->diags, n->meta.pos, "%s: MIG profile %s (from "
					 "nvidia.com/gpu.product) does not exist on %s", who,
					 single, gm->mig->name);
		} else {
			int64_t g;

			ngpus = (inst + per - 1) / per;
			if (ngpus > BR_MAX_NODE_GPUS)
				ngpus = BR_MAX_NODE_GPUS;
			br_nb_init_gpus(b, (int)ngpus, gm, model, 0);
			for (g = 0; g < ngpus && inst > 0; g++) {
				int c = inst < per ? (int)inst : per, k;

				b->gpus[g].sharing = CARVE_SHARE_MIG;
				b->gpus[g].mig_model = gm->mig;
				for (k = 0; k < c; k++) {
					uint8_t st;

					carve_mig_free_starts(gm->mig, &b->gpus[g].mig, p, &st, 1);
					carve_mig_layout_add(gm->mig, &b->gpus[g].mig, p, st);
				}
				inst -= c;
			}
			br_nb_advertise(inv, b, NULL, false);
			/* Single strategy advertises the instances as nvidia.com/gpu. */
			for (i = 0; i < b->nres; i++)
				if (b->res[i].sharing == CARVE_SHARE_MIG)
					b->res[i].name = CARVE_RES_NAME_GPU;
			goto commit;
		}
	}
	if (ngpus < 0 || ngpus > BR_MAX_NODE_GPUS) {
		carve_diag_error(&m->diags, n->meta.pos, "%s: %lld GPUs is not supported (at most %d)",
				 who, (long long)ngpus, BR_MAX_NODE_GPUS);
		ngpus = 0;
	}
	br_nb_init_gpus(b, (int)ngpus, gm, model, mem);
	cur = ngpus ? br_kv_get(&n->meta.annotations, CARVE_MIG_CURRENT_ANNOTATION, &cur_pos) : NULL;
	if (cur && (!gm || !gm->mig)) {
		carve_diag_error(&m->diags, cur_pos, "%s: annotation %s is set but MIG is not "
				 "available on %s", who, CARVE_MIG_CURRENT_ANNOTATION,
				 model ? model : "an unknown GPU model");
	} else if (cur && br_mig_from_current(m, b, cur, cur_pos, gm->mig, who)) {
		/* the node agent's exact layout wins over configs and counts */
	} else if (ngpus && (v = br_kv_get(&n->meta.labels, "nvidia.com/mig.config", &lpos)) &&
	    strcmp(v, "all-disabled")) {
		if (!gm || !gm->mig)
			carve_diag_error(&m->diags, lpos, "%s: nvidia.com/mig.config=%s but MIG is "
					 "not available on %s", who, v,
					 model ? model : "an unknown GPU model");
		else if (br_node_migconfig(inv, m, b, gm->mig, v, lpos, n->meta.name, who)) {
			cfg = v;
			cfg_pos = lpos;
		}
	} else if (ngpus && gm && gm->mig) {
		br_mig_from_resources(m, b, n, gm->mig);
	}
	if (gm && !gm->mig)
		br_mig_on_non_mig(m, who, rl, gm);
	if ((v = br_kv_get(&n->meta.labels, "nvidia.com/device-plugin.config", &lpos))) {
		dp = carve_mf_find_dpconfig(m, v);
		if (!dp)
			carve_diag_warn(&m->diags, lpos, "%s: device-plugin config '%s' is not "
					"defined in the inputs; its sharing settings are unknown",
					who, v);
		else
			br_apply_dpconfig(inv, m, b, dp, &ts_name, &fail_gt_one);
	}
	v = br_kv_get(&n->meta.labels, "carve.dev/sharing-mode", NULL);
	if (!v || strcmp(v, "exclusive"))
		br_nb_share_whole_gpus(b);
	br_nb_advertise(inv, b, ts_name, fail_gt_one);
	br_mark_mig_timesliced(b, dp);
	if (cfg)
		br_check_mig_alloc(m, who, b, rl, cfg, cfg_pos);
commit:
	br_nb_device_names(inv, b, fam, had_names);
	if (br_nb_commit(inv, m, b) >= 0)
		inv->pools[inv->npools - 1].nnodes++;
}

static size_t key_hash(const char *s)
{
	size_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/*
 * Groups Nodes by pool key, pools in order of each key's first Node and
 * Nodes in file order within a pool.  Keys are looked up in a hash table
 * (slot: first Node of the group + 1), so grouping is linear.
 */
void br_build_nodes(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b)
{
	struct nodeinfo *keys;
	size_t *next, *last, *ht, cap = 16, i, j, h;

	if (!m->nnodes)
		return;
	while (cap < 2 * m->nnodes)
		cap *= 2;
	keys = carve_calloc(m->nnodes, sizeof(*keys));
	next = carve_calloc(m->nnodes, sizeof(*next)); /* next Node of the group + 1 */
	last = carve_calloc(m->nnodes, sizeof(*last)); /* for a group's first: its last */
	ht = carve_calloc(cap, sizeof(*ht));
	if (!keys || !next || !last || !ht) {
		inv->priv->oom = true;
		goto out;
	}
	for (i = 0; i < m->nnodes; i++) {
		node_pool_key(&m->nodes[i], &keys[i]);
		for (h = key_hash(keys[i].key) & (cap - 1); ht[h]; h = (h + 1) & (cap - 1))
			if (!strcmp(keys[ht[h] - 1].key, keys[i].key))
				break;
		if (!ht[h]) {
			ht[h] = i + 1;
			last[i] = i;
			continue;
		}
		j = ht[h] - 1;
		next[last[j]] = i + 1;
		last[j] = i;
	}
	for (i = 0; i < m->nnodes; i++) {
		h = key_hash(keys[i].key) & (cap - 1);
		while (strcmp(keys[ht[h] - 1].key, keys[i].key))
			h = (h + 1) & (cap - 1);
		if (ht[h] - 1 != i)
			continue; /* not the first of its group: built with it */
		if (!br_new_pool(inv, keys[i].key, "Node", m->nodes[i].meta.pos))
			goto out;
		for (j = i + 1; j; j = next[j - 1])
			build_node(inv, m, &m->nodes[j - 1], b);
	}
	br_report_migbad(inv, m, b);
out:
	carve_free(keys);
	carve_free(next);
	carve_free(last);
	carve_free(ht);
}

/* ---- openb CSV ---- */

void br_build_csv(struct carve_inventory *inv, struct carve_manifests *m, struct nb *b)
{
	const char *file = NULL;
	size_t i;
	int k;

	for (i = 0; i < m->ncsvnodes; i++) {
		const struct carve_mf_csvnode *c = &m->csvnodes[i];
		const struct carve_gpu_model *gm;

		if (!file || strcmp(file, c->pos.file)) {
			file = c->pos.file;
			if (!br_new_pool(inv, file, "openb CSV", c->pos))
				return;
		}
		br_nb_reset(b);
		b->spec.name = c->name;
		b->spec.pool = inv->pools[inv->npools - 1].name;
		b->spec.pos = c->pos;
		b->spec.cpu_milli = c->cpu_milli;
		/* csv.c keeps memory_mib small enough; saturate all the same. */
		b->spec.memory_milli = carve_qty_sat_mul(c->memory_mib, 1024LL * 1024 * 1000);
		b->spec.pods = 110;
		br_nb_set_label(b, "kubernetes.io/hostname", c->name);
		if (c->gpus > 0 && c->model && *c->model) {
			if (c->gpus > BR_MAX_NODE_GPUS) {
				carve_diag_error(&m->diags, c->pos, "node %s: %d GPUs is more than %d",
						 c->name, c->gpus, BR_MAX_NODE_GPUS);
				continue;
			}
			gm = carve_gpu_model_find(c->model);
			br_nb_init_gpus(b, c->gpus, gm, c->model, 0);
			for (k = 0; k < c->gpus; k++)
				b->gpus[k].sharing = CARVE_SHARE_FRACTION;
			br_nb_set_label(b, "alibabacloud.com/gpu-card-model", c->model);
		}
		br_nb_advertise(inv, b, NULL, false);
		if (br_nb_commit(inv, m, b) >= 0)
			inv->pools[inv->npools - 1].nnodes++;
	}
}
