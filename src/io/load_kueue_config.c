/*
 * load_kueue_config.c - Kueue's controller Configuration document
 * (apiVersion config.kueue.x-k8s.io/v1beta1 or v1beta2, kind
 * Configuration: the file Kueue's manager reads with --config), for the
 * fields carve models:
 *
 *   fairSharing.enable                v1beta1: a bool (default false);
 *                                     v1beta2 has no such field (a
 *                                     fairSharing section turns fair sharing
 *                                     on); carve reads it in either version,
 *                                     as a bool or Enabled / Disabled
 *   fairSharing.preemptionStrategies  LessThanOrEqualToFinalShare,
 *                                     LessThanInitialShare: one of them, or
 *                                     both in that order (the combinations
 *                                     Kueue's configuration validation
 *                                     accepts, pkg/config/validation.go)
 *   featureGates                      a map of gate name to bool; carve acts
 *                                     on FairSharingPreemptWithinNominal and
 *                                     FairSharingPrioritizeNonBorrowing
 *                                     (both on by default,
 *                                     pkg/features/kube_features.go) and
 *                                     accepts the others unread
 *
 * Sources: kubernetes-sigs/kueue apis/config/v1beta1 and v1beta2
 * configuration_types.go (FairSharing, PreemptionStrategy, FeatureGates).
 * Every other top-level field (webhook, metrics, integrations,
 * waitForPodsReady ...) configures controllers carve does not model and
 * is accepted unread; the fields above are type-checked, each problem an
 * error at its field.  At most one Configuration per input: a second one
 * is an error and is not read.
 */
#include <string.h>

#include "loaders.h"

static const char *const strategy_names[] = {"LessThanOrEqualToFinalShare",
					     "LessThanInitialShare", NULL};

/* enable: a bool, or "Enabled" / "Disabled". */
static void f_enable(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_kueue_config *c = o;
	static const char *const words[] = {"Disabled", "Enabled", NULL};
	int x;

	if (ytree_is_null(v))
		return;
	if (v->kind == YN_SCALAR && (!strcmp(v->str, "Enabled") || !strcmp(v->str, "Disabled"))) {
		if (ld_enum(ld, v, words, &x))
			c->fair_sharing = x == 1;
		return;
	}
	if (v->kind == YN_SCALAR && !ld_bool(ld, v, &c->fair_sharing))
		return;
	if (v->kind != YN_SCALAR)
		ld_error(ld, v->pos, "expected true or false, got %s", ytree_kind_name(v));
}

static void strategy_item(struct ld *ld, const struct ynode *v, size_t i, void *o)
{
	struct carve_mf_kueue_config *c = o;
	int x;

	if (!ld_enum(ld, v, strategy_names, &x))
		return;
	if (i >= 2) {
		ld_error(ld, v->pos, "at most two strategies (LessThanOrEqualToFinalShare, "
				     "then LessThanInitialShare)");
		return;
	}
	c->strategies[i] = (enum carve_mf_fs_strategy)x;
	if (c->nstrategies == i)
		c->nstrategies = i + 1;
}

static void f_strategies(struct ld *ld, const struct ynode *v, void *o)
{
	struct carve_mf_kueue_config *c = o, t;

	if (ytree_is_null(v))
		return;
	memset(&t, 0, sizeof(t));
	if (!ld_list(ld, v, strategy_item, &t))
		return;
	if (t.nstrategies != v->n)
		return; /* an item was reported */
	if (t.nstrategies == 0) {
		ld_error(ld, v->pos, "must list at least one strategy");
		return;
	}
	if (t.nstrategies == 2 && (t.strategies[0] != CARVE_MF_FS_LE_FINAL_SHARE ||
				   t.strategies[1] != CARVE_MF_FS_LT_INITIAL_SHARE)) {
		ld_error(ld, v->pos, "two strategies must be LessThanOrEqualToFinalShare then "
				     "LessThanInitialShare (the combinations Kueue accepts)");
		return;
	}
	c->nstrategies = t.nstrategies;
	memcpy(c->strategies, t.strategies, sizeof(c->strategies));
	c->strategies_pos = v->pos;
}

static const struct ld_field fairsharing_fields[] = {
	{"enable", f_enable, 0},
	{"preemptionStrategies", f_strategies, 0},
	{NULL, NULL, 0},
};

/* featureGates: name -> bool; the gates carve models are kept. */
static void feature_gates(struct ld *ld, const struct ynode *v, struct carve_mf_kueue_config *c)
{
	size_t i;

	if (ytree_is_null(v))
		return;
	if (v->kind != YN_MAP) {
		ld_error(ld, v->pos, "expected a mapping of feature gate names to true or false, "
				     "got %s", ytree_kind_name(v));
		return;
	}
	for (i = 0; i < v->n; i++) {
		const char *name = v->pairs[i].key->str;
		size_t old = ld_push(ld, ".%s", name);
		bool on;

		if (ld_bool(ld, v->pairs[i].val, &on)) {
			if (!strcmp(name, "FairSharingPreemptWithinNominal"))
				c->gate_preempt_within_nominal = on;
			else if (!strcmp(name, "FairSharingPrioritizeNonBorrowing"))
				c->gate_prioritize_non_borrowing = on;
		}
		ld_pop(ld, old);
	}
}

void load_kueue_config(struct ld *ld, const struct ynode *doc)
{
	struct carve_mf_kueue_config c, *e;
	const struct ynode *fs = ytree_get(doc, "fairSharing"), *kind = ytree_get(doc, "kind");
	size_t old;

	memset(&c, 0, sizeof(c));
	c.pos = kind ? kind->pos : doc->pos;
	c.gate_preempt_within_nominal = -1;
	c.gate_prioritize_non_borrowing = -1;
	if (ld->m->nkueue_configs) {
		ld_error(ld, c.pos, "a second Kueue Configuration (the first is at %s:%u); only "
				    "one is read",
			 ld->m->kueue_configs[0].pos.file ? ld->m->kueue_configs[0].pos.file : "?",
			 (unsigned)ld->m->kueue_configs[0].pos.line);
		return;
	}
	if (fs && !ytree_is_null(fs)) {
		/* v1beta2 has no enable: the section turns fair sharing on */
		c.fair_sharing = ld->api_version && !strcmp(ld->api_version,
							    "config.kueue.x-k8s.io/v1beta2");
		old = ld_push(ld, ".fairSharing");
		ld_fields(ld, fs, fairsharing_fields, &c);
		ld_pop(ld, old);
	}
	old = ld_push(ld, ".featureGates");
	feature_gates(ld, ytree_get(doc, "featureGates"), &c);
	ld_pop(ld, old);
	e = LD_APPEND(ld, ld->m->kueue_configs, ld->m->nkueue_configs, ld->m->cap_kueue_configs);
	if (e)
		*e = c;
}
