/*
 * admq.c - admission-engine generators shared by figures 2, 3, 5 and 7:
 * one-resource ClusterQueues in cohorts, and single-podSet workloads,
 * built through the public spec structs (carve/admit.h) as any driver
 * would.  Names are printed into caller buffers; the engine copies them.
 */
#include <stdio.h>
#include <string.h>

#include "admq.h"

int admq_flavor(struct carve_adm *a, const char *name)
{
	struct carve_flavor_spec f = {.name = name};
	struct carve_error err;

	if (carve_adm_add_flavor(a, &f, &err)) {
		fprintf(stderr, "carve-bench: flavor %s: %s\n", name, err.text);
		return -1;
	}
	return 0;
}

int admq_cq(struct carve_adm *a, const struct admq_cq *q)
{
	const char *res[1] = {q->resource};
	const char *fl[1] = {q->flavor};
	struct carve_fquota fq = {
		.present = true,
		.nominal = q->nominal,
		.borrowing_limit = q->borrowing_limit,
		.has_borrowing_limit = q->borrowing_limit >= 0,
	};
	struct carve_rgroup_spec g = {1, res, 1, fl, &fq};
	struct carve_cq_spec s = {
		.name = q->name,
		.cohort = q->cohort,
		.strategy = CARVE_BEST_EFFORT_FIFO,
		.ngroups = 1,
		.groups = &g,
		.within_cq = q->within_cq,
		.reclaim = q->reclaim,
		.fair_weight_milli = 1000,
	};
	struct carve_error err;

	if (carve_adm_add_cq(a, &s, &err)) {
		fprintf(stderr, "carve-bench: ClusterQueue %s: %s\n", q->name, err.text);
		return -1;
	}
	return 0;
}

int admq_finalize(struct carve_adm *a)
{
	struct carve_error err;

	if (carve_adm_finalize(a, &err)) {
		fprintf(stderr, "carve-bench: finalize: %s\n", err.text);
		return -1;
	}
	return 0;
}

int admq_workload(struct carve_adm *a, const struct admq_wl *w)
{
	struct carve_req req = {w->resource, w->milli};
	struct carve_podset_spec ps = {
		.name = "main",
		.count = w->count,
		.min_count = w->count,
		.nreqs = 1,
		.reqs = &req,
	};
	struct carve_label asg = {w->resource, w->flavor};
	struct carve_ps_admission adm = {"main", w->count, 1, &asg};
	struct carve_wl_spec s = {
		.key = w->key,
		.cq = w->cq,
		.priority = w->priority,
		.created = w->created,
		.has_created = true,
		.npodsets = 1,
		.podsets = &ps,
		.admitted = w->admitted,
		.admitted_at = w->created,
		.has_admitted_at = w->admitted,
		.nadmission = w->admitted ? 1 : 0,
		.admission = w->admitted ? &adm : NULL,
	};
	struct carve_error err;
	int id = carve_adm_add_workload(a, &s, &err);

	if (id < 0)
		fprintf(stderr, "carve-bench: workload %s: %s\n", w->key, err.text);
	return id;
}

struct carve_adm *admq_cohorts(size_t ncqs, size_t ncohorts, int64_t nominal,
			       int64_t borrowing_limit)
{
	struct carve_adm *a = carve_adm_create();
	char name[32], cohort[32];
	size_t i;

	if (!a) {
		fprintf(stderr, "carve-bench: out of memory\n");
		return NULL;
	}
	if (admq_flavor(a, ADMQ_FLAVOR))
		goto fail;
	for (i = 0; i < ncqs; i++) {
		struct admq_cq q = {
			.name = name,
			.cohort = cohort,
			.resource = ADMQ_RESOURCE,
			.flavor = ADMQ_FLAVOR,
			.nominal = nominal,
			.borrowing_limit = borrowing_limit,
			.within_cq = CARVE_WCQ_LOWER,
			.reclaim = CARVE_RECLAIM_ANY,
		};

		snprintf(name, sizeof(name), "cq-%04zu", i);
		snprintf(cohort, sizeof(cohort), "cohort-%03zu", i % ncohorts);
		if (admq_cq(a, &q))
			goto fail;
	}
	if (admq_finalize(a))
		goto fail;
	return a;
fail:
	carve_adm_destroy(a);
	return NULL;
}
