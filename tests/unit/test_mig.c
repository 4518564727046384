/*
 * test_mig.c - MIG geometry and GPU model table: table invariants, legal and
 * illegal layouts (with exact error text), free starts, fit counts,
 * layout_from_counts (checked exhaustively against brute force on every
 * model) and name lookup.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/gpumodel.h"
#include "carve/mig.h"

/* ---- helpers ------------------------------------------------------------ */

static const struct carve_mig_model *model(const char *name)
{
	const struct carve_mig_model *m = carve_mig_model_find(name);

	assert_non_null(m);
	assert_string_equal(m->name, name);
	return m;
}

static int prof(const struct carve_mig_model *m, const char *name)
{
	int p = carve_mig_profile_find(m, name);

	if (p < 0)
		fail_msg("%s has no profile %s", m->name, name);
	return p;
}

/*
 * Layout from a spec "3g.40gb@0 2g.20gb@4 1g.10gb@6"; profile names that
 * are not in the model fail the test.
 */
static struct carve_mig_layout layout(const struct carve_mig_model *m,
				      const char *spec)
{
	struct carve_mig_layout l = {0};
	char buf[256], *tok, *save = NULL, *at;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		at = strchr(tok, '@');
		assert_non_null(at);
		*at = '\0';
		assert_true(l.n < CARVE_MIG_MAX_INST);
		l.inst[l.n].profile = (uint8_t)prof(m, tok);
		l.inst[l.n].start = (uint8_t)atoi(at + 1);
		l.n++;
	}
	return l;
}

static void assert_legal(const struct carve_mig_model *m, const char *spec)
{
	struct carve_mig_layout l = layout(m, spec);
	struct carve_error err = {0};

	if (carve_mig_layout_check(m, &l, &err) != 0)
		fail_msg("%s: '%s' should be legal: %s", m->name, spec, err.text);
}

static void assert_illegal(const struct carve_mig_model *m, const char *spec,
			   const char *text)
{
	struct carve_mig_layout l = layout(m, spec);
	struct carve_error err = {0};

	assert_int_equal(carve_mig_layout_check(m, &l, &err), CARVE_EINVAL);
	assert_int_equal(err.code, CARVE_EINVAL);
	if (text)
		assert_string_equal(err.text, text);
	else
		assert_true(err.text[0] != '\0');
}

/* The layout as "name@start ..." in its own order. */
static const char *show(const struct carve_mig_model *m,
			const struct carve_mig_layout *l)
{
	static char buf[256];
	int i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < l->n; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%s@%d",
				i ? " " : "", m->profiles[l->inst[i].profile].name,
				l->inst[i].start);
	return buf;
}

/* counts from "1g.10gb:2,2g.20gb:1" */
static void counts_of(const struct carve_mig_model *m, const char *spec,
		      int *counts)
{
	char buf[256], *tok, *save = NULL, *colon;

	memset(counts, 0, sizeof(int) * m->nprofiles);
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		colon = strchr(tok, ':');
		assert_non_null(colon);
		*colon = '\0';
		counts[prof(m, tok)] = atoi(colon + 1);
	}
}

static int from_counts(const struct carve_mig_model *m, const char *spec,
		       struct carve_mig_layout *out, struct carve_error *err)
{
	int counts[16];

	assert_true(m->nprofiles <= 16);
	counts_of(m, spec, counts);
	return carve_mig_layout_from_counts(m, counts, out, err);
}

static int full_profile(const struct carve_mig_model *m)
{
	int p;

	for (p = 0; p < m->nprofiles; p++)
		if (m->profiles[p].mem_slices == m->mem_slices &&
		    m->profiles[p].compute == m->compute_slices)
			return p;
	fail_msg("%s has no full-GPU profile", m->name);
	return -1;
}

/* ---- table -------------------------------------------------------------- */

static void test_table_invariants(void **state)
{
	int i, p, q, k;

	(void)state;
	assert_int_equal(carve_mig_model_count(), 6);
	assert_null(carve_mig_model_at(-1));
	assert_null(carve_mig_model_at(carve_mig_model_count()));
	for (i = 0; i < carve_mig_model_count(); i++) {
		const struct carve_mig_model *m = carve_mig_model_at(i);

		assert_non_null(m);
		assert_ptr_equal(carve_mig_model_find(m->name), m);
		assert_true(m->mem_slices <= 32);
		assert_true(m->max_instances <= CARVE_MIG_MAX_INST);
		assert_true(m->nprofiles > 0 && m->nprofiles <= 16);
		if (strncmp(m->name, "A30", 3) == 0) {
			assert_int_equal(m->mem_slices, 4);
			assert_int_equal(m->compute_slices, 4);
			assert_int_equal(m->max_instances, 4);
		} else {
			assert_int_equal(m->mem_slices, 8);
			assert_int_equal(m->compute_slices, 7);
			assert_int_equal(m->max_instances, 7);
		}
		for (p = 0; p < m->nprofiles; p++) {
			const struct carve_mig_profile *pr = &m->profiles[p];
			size_t len = strlen(pr->name);

			assert_int_equal(carve_mig_profile_find(m, pr->name), p);
			assert_true(pr->compute >= 1 &&
				    pr->compute <= m->compute_slices);
			assert_true(pr->max_count >= 1);
			assert_true(pr->nstarts >= 1 &&
				    pr->nstarts <= CARVE_MIG_MAX_STARTS);
			assert_int_equal(pr->media, len > 3 &&
				strcmp(pr->name + len - 3, "+me") == 0);
			if (pr->media)
				assert_int_equal(pr->max_count, 1);
			for (k = 0; k < pr->nstarts; k++) {
				assert_true(k == 0 ||
					    pr->starts[k] > pr->starts[k - 1]);
				assert_true(pr->starts[k] + pr->mem_slices <=
					    m->mem_slices);
				/* aligned: fit_count's greedy relies on it */
				assert_int_equal(pr->starts[k] % pr->mem_slices, 0);
			}
			for (q = 0; q < p; q++)
				assert_string_not_equal(m->profiles[q].name,
							pr->name);
		}
	}
	assert_int_equal(carve_mig_profile_find(model("A100-80GB"), "3g.20gb"), -1);
	assert_int_equal(carve_mig_profile_find(NULL, "3g.20gb"), -1);
	assert_int_equal(carve_mig_profile_find(model("A100-80GB"), NULL), -1);
}

static void test_table_facts(void **state)
{
	const struct carve_mig_model *m;
	const struct carve_mig_profile *p;

	(void)state;
	/* A100-40GB 1g.10gb: placement size 2 although the table says 1/8 */
	m = model("A100-40GB");
	p = &m->profiles[prof(m, "1g.10gb")];
	assert_int_equal(p->nvml_id, 15);
	assert_int_equal(p->mem_slices, 2);
	assert_int_equal(p->max_count, 4);
	p = &m->profiles[prof(m, "1g.5gb")];
	assert_int_equal(p->nvml_id, 19);
	assert_int_equal(p->memory_mib, 4864);

	m = model("A100-80GB");
	p = &m->profiles[prof(m, "3g.40gb")];
	assert_int_equal(p->nvml_id, 9);
	assert_int_equal(p->compute, 3);
	assert_int_equal(p->mem_slices, 4);
	assert_int_equal(p->nstarts, 2);
	assert_int_equal(p->starts[0], 0);
	assert_int_equal(p->starts[1], 4);
	assert_int_equal(p->memory_mib, 40192);
	assert_int_equal(m->profiles[prof(m, "1g.10gb+me")].nvml_id, 20);
	assert_int_equal(m->profiles[prof(m, "7g.80gb")].nvml_id, 0);
	assert_int_equal(m->profiles[prof(m, "7g.80gb")].memory_mib, 80384);

	m = model("H100-94GB");
	prof(m, "1g.12gb");
	prof(m, "1g.12gb+me");
	prof(m, "1g.24gb");
	prof(m, "2g.24gb");
	prof(m, "3g.47gb");
	prof(m, "4g.47gb");
	prof(m, "7g.94gb");

	m = model("H200-141GB");
	assert_int_equal(m->profiles[prof(m, "1g.35gb")].mem_slices, 2);
	assert_int_equal(m->profiles[prof(m, "7g.141gb")].nvml_id, 0);

	m = model("A30-24GB");
	assert_int_equal(m->profiles[prof(m, "1g.6gb")].nvml_id, 14);
	assert_int_equal(m->profiles[prof(m, "1g.6gb+me")].nvml_id, 21);
	assert_int_equal(m->profiles[prof(m, "2g.12gb")].nvml_id, 5);
	assert_int_equal(m->profiles[prof(m, "2g.12gb+me")].nvml_id, 0xff);
	assert_int_equal(m->profiles[prof(m, "4g.24gb")].nvml_id, 0);
}

/* ---- check -------------------------------------------------------------- */

static void test_full_gpu_every_model(void **state)
{
	struct carve_mig_layout l = {0}, out;
	struct carve_error err = {0};
	int i, p, q, counts[16];

	(void)state;
	for (i = 0; i < carve_mig_model_count(); i++) {
		const struct carve_mig_model *m = carve_mig_model_at(i);

		p = full_profile(m);
		l.n = 1;
		l.inst[0].profile = (uint8_t)p;
		l.inst[0].start = 0;
		if (carve_mig_layout_check(m, &l, &err) != 0)
			fail_msg("%s: full profile: %s", m->name, err.text);
		assert_int_equal(carve_mig_layout_mask(m, &l),
				 (1u << m->mem_slices) - 1);
		for (q = 0; q < m->nprofiles; q++)
			assert_int_equal(carve_mig_fit_count(m, &l, q), 0);
		memset(counts, 0, sizeof(counts));
		counts[p] = 1;
		assert_int_equal(carve_mig_layout_from_counts(m, counts, &out,
							      &err), 0);
		assert_int_equal(out.n, 1);
		assert_int_equal(out.inst[0].start, 0);
		/* and the full GPU alone cannot start anywhere but 0 */
		l.inst[0].start = 1;
		assert_int_equal(carve_mig_layout_check(m, &l, NULL),
				 CARVE_EINVAL);
	}
}

static void test_legal_layouts(void **state)
{
	const struct carve_mig_model *m = model("A100-80GB");
	struct carve_mig_layout empty = {0};

	(void)state;
	assert_int_equal(carve_mig_layout_check(m, &empty, NULL), 0);
	assert_legal(m, "3g.40gb@0 3g.40gb@4");
	assert_legal(m, "3g.40gb@4 3g.40gb@0");
	assert_legal(m, "3g.40gb@0 2g.20gb@4 1g.10gb@6");
	assert_legal(m, "4g.40gb@0 3g.40gb@4");
	assert_legal(m, "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 "
			"1g.10gb@5 1g.10gb@6");
	assert_legal(m, "1g.20gb@0 1g.20gb@2 1g.20gb@4 1g.20gb@6");
	assert_legal(m, "2g.20gb@0 2g.20gb@2 2g.20gb@4 1g.20gb@6");
	assert_legal(m, "2g.20gb@0 1g.10gb@2 1g.10gb@3 3g.40gb@4");
	assert_legal(m, "1g.10gb+me@3 1g.10gb@0 3g.40gb@4");
	assert_legal(m, "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 "
			"1g.10gb@5 1g.20gb@6");

	m = model("A30-24GB");
	assert_legal(m, "2g.12gb@0 2g.12gb@2");
	assert_legal(m, "1g.6gb@0 1g.6gb@1 1g.6gb@2 1g.6gb@3");
	assert_legal(m, "1g.6gb+me@0 1g.6gb@1 2g.12gb@2");
	assert_legal(m, "4g.24gb@0");

	assert_legal(model("A100-40GB"), "1g.10gb@0 1g.10gb@2 1g.10gb@4 1g.10gb@6");
	assert_legal(model("H200-141GB"), "3g.71gb@0 2g.35gb@4 1g.18gb@6");
	assert_legal(model("H100-94GB"), "4g.47gb@0 3g.47gb@4");
}

static void test_illegal_layouts(void **state)
{
	const struct carve_mig_model *m = model("A100-80GB");
	struct carve_mig_layout l;

	(void)state;
	assert_illegal(m, "3g.40gb@2",
		       "3g.40gb cannot start at memory slice 2 (legal: 0, 4)");
	assert_illegal(m, "1g.10gb@7",
		       "1g.10gb cannot start at memory slice 7 (legal: 0, 1, 2, 3, 4, 5, 6)");
	assert_illegal(m, "2g.20gb@6",
		       "2g.20gb cannot start at memory slice 6 (legal: 0, 2, 4)");
	assert_illegal(m, "4g.40gb@4",
		       "4g.40gb cannot start at memory slice 4 (legal: 0)");
	assert_illegal(m, "3g.40gb@0 1g.10gb@3",
		       "1g.10gb at slice 3 overlaps 3g.40gb at slice 0");
	assert_illegal(m, "1g.10gb@6 1g.20gb@6",
		       "1g.20gb at slice 6 overlaps 1g.10gb at slice 6");
	assert_illegal(m, "3g.40gb@0 3g.40gb@4 3g.40gb@0",
		       "3 instances of 3g.40gb exceed its maximum of 2");
	assert_illegal(m, "1g.20gb@0 1g.20gb@2 1g.20gb@4 1g.20gb@6 1g.20gb@6",
		       "5 instances of 1g.20gb exceed its maximum of 4");
	assert_illegal(m, "1g.10gb+me@0 1g.10gb+me@1",
		       "2 instances of 1g.10gb+me exceed its maximum of 1");
	assert_illegal(m, "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 "
			  "1g.10gb@5 1g.10gb@6 1g.10gb@6",
		       "8 instances exceed the GPU's maximum of 7");
	assert_illegal(m, "4g.40gb@0 3g.40gb@4 1g.10gb@6",
		       "instances use 8 compute slices, more than the GPU's 7");
	/* the seed question: 2 x 3g.40gb fill all 8 memory slices */
	assert_illegal(m, "3g.40gb@0 3g.40gb@4 1g.10gb@6",
		       "1g.10gb at slice 6 overlaps 3g.40gb at slice 4");

	l = layout(m, "3g.40gb@0");
	l.inst[0].profile = 7;
	{
		struct carve_error err = {0};

		assert_int_equal(carve_mig_layout_check(m, &l, &err), CARVE_EINVAL);
		assert_string_equal(err.text,
			"unknown profile index 7 at instance 0 (A100-80GB has 7 profiles)");
	}
	l.n = CARVE_MIG_MAX_INST + 1;
	assert_int_equal(carve_mig_layout_check(m, &l, NULL), CARVE_EINVAL);
	assert_int_equal(carve_mig_layout_check(NULL, &l, NULL), CARVE_EINVAL);
	assert_int_equal(carve_mig_layout_check(m, NULL, NULL), CARVE_EINVAL);

	/* two different media profiles on A30 */
	assert_illegal(model("A30-24GB"), "1g.6gb+me@0 2g.12gb+me@2",
		       "more than one media-extension (+me) instance");
	assert_illegal(model("A30-24GB"), "1g.6gb@0 1g.6gb@1 1g.6gb@2 1g.6gb@3 1g.6gb@3",
		       "5 instances exceed the GPU's maximum of 4");
	assert_illegal(model("A30-24GB"), "2g.12gb@1", NULL);
	assert_illegal(model("A100-40GB"), "1g.10gb@1",
		       "1g.10gb cannot start at memory slice 1 (legal: 0, 2, 4, 6)");
}

static void test_layout_mask(void **state)
{
	const struct carve_mig_model *m = model("A100-80GB");
	struct carve_mig_layout l = layout(m, "3g.40gb@4 1g.20gb@0 1g.10gb@2");

	(void)state;
	assert_int_equal(carve_mig_layout_mask(m, &l), 0xf7);
	l = layout(model("A30-24GB"), "2g.12gb@2");
	assert_int_equal(carve_mig_layout_mask(model("A30-24GB"), &l), 0xc);
	assert_int_equal(carve_mig_layout_mask(NULL, &l), 0);
	assert_int_equal(carve_mig_layout_mask(m, NULL), 0);
}

/* ---- free starts, fit, add ---------------------------------------------- */

static void assert_starts(const struct carve_mig_model *m, const char *spec,
			  const char *pname, const char *want)
{
	struct carve_mig_layout l = layout(m, spec);
	uint8_t starts[CARVE_MIG_MAX_STARTS];
	char got[64];
	int i, n, len = 0;

	n = carve_mig_free_starts(m, &l, prof(m, pname), starts,
				  CARVE_MIG_MAX_STARTS);
	got[0] = '\0';
	for (i = 0; i < n; i++)
		len += snprintf(got + len, sizeof(got) - len, "%s%d",
				i ? "," : "", starts[i]);
	assert_string_equal(got, want);
}

static void test_free_starts(void **state)
{
	const struct carve_mig_model *m = model("A100-80GB");
	struct carve_mig_layout l = {0};
	uint8_t two[2];

	(void)state;
	assert_starts(m, "", "1g.10gb", "0,1,2,3,4,5,6");
	assert_starts(m, "", "1g.20gb", "0,2,4,6");
	assert_starts(m, "", "2g.20gb", "0,2,4");
	assert_starts(m, "", "3g.40gb", "0,4");
	assert_starts(m, "", "7g.80gb", "0");
	assert_starts(m, "3g.40gb@0", "1g.10gb", "4,5,6");
	assert_starts(m, "3g.40gb@0", "3g.40gb", "4");
	assert_starts(m, "3g.40gb@0", "4g.40gb", "");
	assert_starts(m, "3g.40gb@0", "1g.20gb", "4,6");
	assert_starts(m, "3g.40gb@4", "4g.40gb", "0");
	/* slice 7 is free, but no 1g may start there */
	assert_starts(m, "4g.40gb@0 2g.20gb@4 1g.10gb@6", "1g.10gb", "");
	/* media: one +me at most */
	assert_starts(m, "1g.10gb+me@0", "1g.10gb+me", "");
	assert_starts(m, "3g.40gb@0 3g.40gb@4", "1g.10gb", "");
	/* on an illegal layout nothing is free */
	assert_starts(m, "3g.40gb@0 1g.10gb@1", "1g.10gb", "");

	/* count exceeds max: only the first max written */
	assert_int_equal(carve_mig_free_starts(m, &l, prof(m, "1g.10gb"), two, 2), 7);
	assert_int_equal(two[0], 0);
	assert_int_equal(two[1], 1);
	assert_int_equal(carve_mig_free_starts(m, &l, prof(m, "1g.10gb"), NULL, 0), 7);
	assert_int_equal(carve_mig_free_starts(m, &l, -1, NULL, 0), 0);
	assert_int_equal(carve_mig_free_starts(m, &l, 7, NULL, 0), 0);
}

static void test_fit_count(void **state)
{
	const struct carve_mig_model *m = model("A100-80GB");
	struct carve_mig_layout l = {0};

	(void)state;
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "1g.10gb")), 7);
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "1g.10gb+me")), 1);
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "1g.20gb")), 4);
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "2g.20gb")), 3);
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "3g.40gb")), 2);
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "4g.40gb")), 1);
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "7g.80gb")), 1);

	l = layout(m, "3g.40gb@0");
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "1g.10gb")), 3);
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "2g.20gb")), 1);
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "3g.40gb")), 1);
	/* fit does not change the layout */
	assert_int_equal(l.n, 1);

	/* the seed question: after 2 x 3g.40gb, no 1g.10gb fits */
	l = layout(m, "3g.40gb@0 3g.40gb@4");
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "1g.10gb")), 0);

	/* 6 x 1g.10gb leave slices 6-7: one more of either 1g */
	l = layout(m, "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 1g.10gb@5");
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "1g.20gb")), 1);
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "1g.10gb")), 1);
	/* 2g.20gb: its starts 0, 2, 4 are taken */
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "2g.20gb")), 0);
	/* 1g.20gb: three placed, the fourth (and last) at 6 */
	l = layout(m, "1g.20gb@0 1g.20gb@2 1g.20gb@4");
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "1g.20gb")), 1);

	m = model("A30-24GB");
	l.n = 0;
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "1g.6gb")), 4);
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "2g.12gb")), 2);
	assert_int_equal(carve_mig_fit_count(m, &l, prof(m, "4g.24gb")), 1);
	assert_int_equal(carve_mig_fit_count(m, &l, -1), 0);
	assert_int_equal(carve_mig_fit_count(NULL, &l, 0), 0);
}

static void test_layout_add(void **state)
{
	const struct carve_mig_model *m = model("A100-80GB");
	struct carve_mig_layout l = {0}, bad;
	int p3 = prof(m, "3g.40gb"), p1 = prof(m, "1g.10gb");

	(void)state;
	assert_int_equal(carve_mig_layout_add(m, &l, p3, 2), CARVE_ENOFIT);
	assert_int_equal(carve_mig_layout_add(m, &l, p3, 0), 0);
	assert_int_equal(carve_mig_layout_add(m, &l, p1, 3), CARVE_ENOFIT);
	assert_int_equal(carve_mig_layout_add(m, &l, p1, 7), CARVE_ENOFIT);
	assert_int_equal(carve_mig_layout_add(m, &l, p1, -1), CARVE_ENOFIT);
	assert_int_equal(carve_mig_layout_add(m, &l, p1, 1000), CARVE_ENOFIT);
	assert_int_equal(carve_mig_layout_add(m, &l, p3, 4), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(carve_mig_layout_add(m, &l, p1, 6), CARVE_ENOFIT);
	assert_int_equal(l.n, 2);
	assert_int_equal(carve_mig_layout_add(m, &l, 7, 0), CARVE_EINVAL);
	assert_int_equal(carve_mig_layout_add(m, &l, -1, 0), CARVE_EINVAL);
	bad = layout(m, "3g.40gb@0 1g.10gb@1");
	assert_int_equal(carve_mig_layout_add(m, &bad, p1, 6), CARVE_EINVAL);
	assert_int_equal(bad.n, 2);
}

/* ---- from counts -------------------------------------------------------- */

static void assert_counts(const struct carve_mig_model *m, const char *spec,
			  const char *want)
{
	struct carve_mig_layout out;
	struct carve_error err = {0};

	if (from_counts(m, spec, &out, &err) != 0)
		fail_msg("%s %s: %s", m->name, spec, err.text);
	assert_int_equal(carve_mig_layout_check(m, &out, NULL), 0);
	assert_string_equal(show(m, &out), want);
}

static void assert_counts_fail(const struct carve_mig_model *m,
			       const char *spec, const char *text)
{
	struct carve_mig_layout out = {.n = 99};
	struct carve_error err = {0};

	assert_int_equal(from_counts(m, spec, &out, &err), CARVE_EINVAL);
	assert_string_equal(err.text, text);
	assert_int_equal(out.n, 99); /* untouched on failure */
}

static void test_from_counts(void **state)
{
	const struct carve_mig_model *m = model("A100-80GB");
	struct carve_mig_layout out;
	int counts[16] = {0};

	(void)state;
	/* mig-parted all-balanced: needs backtracking (3g@0 leaves 1g no room) */
	assert_counts(m, "1g.10gb:2,2g.20gb:1,3g.40gb:1",
		      "2g.20gb@0 1g.10gb@2 1g.10gb@3 3g.40gb@4");
	assert_counts(m, "3g.40gb:2", "3g.40gb@0 3g.40gb@4");
	assert_counts(m, "3g.40gb:1,4g.40gb:1", "4g.40gb@0 3g.40gb@4");
	assert_counts(m, "1g.10gb:7", "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 "
				      "1g.10gb@4 1g.10gb@5 1g.10gb@6");
	assert_counts(m, "1g.10gb:6,1g.20gb:1",
		      "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 "
		      "1g.10gb@5 1g.20gb@6");
	assert_counts(m, "1g.10gb:0", "");
	assert_counts(m, "7g.80gb:1", "7g.80gb@0");
	assert_counts(model("A100-40GB"), "1g.5gb:2,2g.10gb:1,3g.20gb:1",
		      "2g.10gb@0 1g.5gb@2 1g.5gb@3 3g.20gb@4");
	assert_counts(model("A100-40GB"), "1g.10gb:4",
		      "1g.10gb@0 1g.10gb@2 1g.10gb@4 1g.10gb@6");
	assert_counts(model("H100-80GB"), "1g.10gb:2,2g.20gb:1,3g.40gb:1",
		      "2g.20gb@0 1g.10gb@2 1g.10gb@3 3g.40gb@4");
	assert_counts(model("H200-141GB"), "1g.18gb:2,2g.35gb:1,3g.71gb:1",
		      "2g.35gb@0 1g.18gb@2 1g.18gb@3 3g.71gb@4");
	assert_counts(model("A30-24GB"), "1g.6gb:2,2g.12gb:1",
		      "2g.12gb@0 1g.6gb@2 1g.6gb@3");
	assert_counts(model("A30-24GB"), "2g.12gb:2", "2g.12gb@0 2g.12gb@2");
	assert_counts(model("A30-24GB"), "1g.6gb:4",
		      "1g.6gb@0 1g.6gb@1 1g.6gb@2 1g.6gb@3");

	assert_counts_fail(m, "3g.40gb:2,4g.40gb:1",
			   "no legal placement for 3g.40gb:2, 4g.40gb:1 on A100-80GB");
	/* the seed question */
	assert_counts_fail(m, "3g.40gb:2,1g.10gb:1",
			   "no legal placement for 1g.10gb:1, 3g.40gb:2 on A100-80GB");
	assert_counts_fail(m, "1g.10gb+me:1,3g.40gb:2",
			   "no legal placement for 1g.10gb+me:1, 3g.40gb:2 on A100-80GB");
	assert_counts_fail(m, "3g.40gb:3",
			   "3 instances of 3g.40gb exceed its maximum of 2");
	assert_counts_fail(m, "1g.10gb:7,1g.20gb:1",
			   "8 instances exceed the GPU's maximum of 7");
	assert_counts_fail(m, "1g.10gb:-1", "negative count -1 of 1g.10gb");
	assert_counts_fail(model("A30-24GB"), "1g.6gb+me:1,2g.12gb+me:1",
			   "more than one media-extension (+me) instance");
	assert_counts_fail(m, "1g.10gb:6,2g.20gb:1",
			   "no legal placement for 1g.10gb:6, 2g.20gb:1 on A100-80GB");

	assert_int_equal(carve_mig_layout_from_counts(NULL, counts, &out, NULL),
			 CARVE_EINVAL);
	assert_int_equal(carve_mig_layout_from_counts(m, NULL, &out, NULL),
			 CARVE_EINVAL);
	assert_int_equal(carve_mig_layout_from_counts(m, counts, NULL, NULL),
			 CARVE_EINVAL);
}

/*
 * Brute force over every legal layout of every model: from_counts succeeds
 * exactly for the count vectors some legal layout has, fit_count equals the
 * most instances a search can add, and free_starts lists exactly the starts
 * that layout_check accepts.
 */
struct brute {
	const struct carve_mig_model *m;
	bool reachable[16384];
	int radix[16];
	int nlayouts;
};

static int encode(const struct brute *b, const int *counts)
{
	int p, code = 0;

	for (p = b->m->nprofiles - 1; p >= 0; p--)
		code = code * b->radix[p] + counts[p];
	return code;
}

static int most_of(const struct carve_mig_model *m,
		   const struct carve_mig_layout *l, int p, int from)
{
	const struct carve_mig_profile *pr = &m->profiles[p];
	int k, v, best = 0;

	if (l->n >= CARVE_MIG_MAX_INST)
		return 0;
	for (k = from; k < pr->nstarts; k++) {
		struct carve_mig_layout t = *l;

		t.inst[t.n].profile = (uint8_t)p;
		t.inst[t.n].start = pr->starts[k];
		t.n++;
		if (carve_mig_layout_check(m, &t, NULL) != 0)
			continue;
		v = 1 + most_of(m, &t, p, k + 1);
		if (v > best)
			best = v;
	}
	return best;
}

static void visit(struct brute *b, const struct carve_mig_layout *l,
		  int from_p, int from_s)
{
	const struct carve_mig_model *m = b->m;
	int counts[16] = {0}, i, p, k, n;
	uint8_t starts[CARVE_MIG_MAX_STARTS];

	b->nlayouts++;
	for (i = 0; i < l->n; i++)
		counts[l->inst[i].profile]++;
	b->reachable[encode(b, counts)] = true;

	for (p = 0; p < m->nprofiles; p++) {
		const struct carve_mig_profile *pr = &m->profiles[p];
		int want = 0;

		n = carve_mig_free_starts(m, l, p, starts, CARVE_MIG_MAX_STARTS);
		for (k = 0; k < pr->nstarts; k++) {
			struct carve_mig_layout t = *l;

			if (t.n >= CARVE_MIG_MAX_INST)
				break;
			t.inst[t.n].profile = (uint8_t)p;
			t.inst[t.n].start = pr->starts[k];
			t.n++;
			if (carve_mig_layout_check(m, &t, NULL) == 0) {
				assert_true(want < n);
				assert_int_equal(starts[want], pr->starts[k]);
				want++;
			}
		}
		assert_int_equal(n, want);
		assert_int_equal(carve_mig_fit_count(m, l, p), most_of(m, l, p, 0));
	}

	/* children: add (p, start) pairs in increasing order */
	for (p = from_p; p < m->nprofiles; p++) {
		const struct carve_mig_profile *pr = &m->profiles[p];

		for (k = p == from_p ? from_s : 0; k < pr->nstarts; k++) {
			struct carve_mig_layout t = *l;

			if (carve_mig_layout_add(m, &t, p, pr->starts[k]) == 0)
				visit(b, &t, p, k + 1);
		}
	}
}

static void test_brute_force_every_model(void **state)
{
	static struct brute b;
	struct carve_mig_layout empty = {0}, out;
	int i, p, code, total, counts[16];

	(void)state;
	for (i = 0; i < carve_mig_model_count(); i++) {
		memset(&b, 0, sizeof(b));
		b.m = carve_mig_model_at(i);
		total = 1;
		for (p = 0; p < b.m->nprofiles; p++) {
			b.radix[p] = b.m->profiles[p].max_count + 1;
			total *= b.radix[p];
		}
		assert_true(total <= (int)sizeof(b.reachable));
		visit(&b, &empty, 0, 0);
		assert_true(b.nlayouts > 10);

		for (code = 0; code < total; code++) {
			int c = code, rc;

			for (p = 0; p < b.m->nprofiles; p++) {
				counts[p] = c % b.radix[p];
				c /= b.radix[p];
			}
			rc = carve_mig_layout_from_counts(b.m, counts, &out, NULL);
			if (b.reachable[code]) {
				assert_int_equal(rc, 0);
				assert_int_equal(carve_mig_layout_check(b.m, &out, NULL), 0);
				memset(counts, 0, sizeof(counts));
				for (p = 0; p < out.n; p++)
					counts[out.inst[p].profile]++;
				assert_int_equal(encode(&b, counts), code);
			} else {
				assert_int_equal(rc, CARVE_EINVAL);
			}
		}
	}
}

/* ---- names -------------------------------------------------------------- */

static void assert_mig_name(const char *name, const char *want)
{
	const struct carve_mig_model *m = carve_mig_model_find(name);

	if (!name)
		name = "(null)";
	if (!want) {
		if (m)
			fail_msg("'%s' should not be a MIG model, got %s", name, m->name);
		return;
	}
	if (!m)
		fail_msg("'%s' should be %s, got NULL", name, want);
	assert_string_equal(m->name, want);
}

static void test_mig_model_find(void **state)
{
	(void)state;
	assert_mig_name("A100-80GB", "A100-80GB");
	assert_mig_name("a100-80gb", "A100-80GB");
	assert_mig_name("NVIDIA-A100-SXM4-40GB", "A100-40GB");
	assert_mig_name("NVIDIA-A100-PCIE-40GB", "A100-40GB");
	assert_mig_name("NVIDIA A100-SXM4-80GB", "A100-80GB");
	assert_mig_name("NVIDIA-A100-80GB-PCIe", "A100-80GB");
	assert_mig_name("NVIDIA A100 80GB PCIe", "A100-80GB");
	assert_mig_name("NVIDIA-A100-SXM4-80GB-SHARED", "A100-80GB");
	assert_mig_name("NVIDIA-H100-80GB-HBM3", "H100-80GB");
	assert_mig_name("NVIDIA H100 80GB HBM3", "H100-80GB");
	assert_mig_name("NVIDIA-H100-PCIe", "H100-80GB");
	assert_mig_name("NVIDIA-H100-NVL", "H100-94GB");
	assert_mig_name("nvidia_h100_nvl", "H100-94GB");
	assert_mig_name("H100-94GB", "H100-94GB");
	assert_mig_name("NVIDIA-H200", "H200-141GB");
	assert_mig_name("NVIDIA-H200-NVL", "H200-141GB");
	assert_mig_name("NVIDIA H200", "H200-141GB");
	assert_mig_name("NVIDIA-H200-SHARED", "H200-141GB");
	assert_mig_name("NVIDIA-A30", "A30-24GB");
	assert_mig_name("A30-24GB", "A30-24GB");

	assert_mig_name("NVIDIA-L40S", NULL);
	assert_mig_name("Tesla-T4", NULL);
	assert_mig_name("NVIDIA-A10", NULL);
	assert_mig_name("NVIDIA-RTX-A3000", NULL);
	assert_mig_name("NVIDIA-GH200-480GB", NULL);
	assert_mig_name("NVIDIA-H100-96GB", NULL);
	assert_mig_name("NVIDIA", NULL);
	assert_mig_name("NVIDIA-", NULL);
	assert_mig_name("-SHARED", NULL);
	assert_mig_name("", NULL);
	assert_mig_name(NULL, NULL);
	{
		char longname[300];

		memset(longname, 'A', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		memcpy(longname, "A100-", 5);
		assert_mig_name(longname, NULL);
	}
}

static void assert_gpu(const char *name, const char *want, const char *family,
		       uint32_t mib, bool mig)
{
	const struct carve_gpu_model *g = carve_gpu_model_find(name);

	if (!g)
		fail_msg("'%s' should be %s, got NULL", name, want);
	assert_string_equal(g->name, want);
	assert_string_equal(g->family, family);
	assert_int_equal(g->memory_mib, mib);
	assert_int_equal(g->mig != NULL, mig);
}

/* A size the card does not come in is not guessed: "A100-80G" used to
 * match A100-40GB. */
static void test_model_size_tokens(void **state)
{
	(void)state;
	assert_null(carve_gpu_model_find("A100-80G"));
	assert_null(carve_gpu_model_find("NVIDIA-A100-48GB"));
	assert_null(carve_gpu_model_find("H100-80G"));
	assert_null(carve_mig_model_find("NVIDIA-H100-96GB"));
	assert_string_equal(carve_gpu_model_find("NVIDIA-A100-PCIE")->name, "A100-40GB");
	assert_string_equal(carve_gpu_model_find("NVIDIA-A100-PCIE-40GB")->name, "A100-40GB");
	assert_string_equal(carve_gpu_model_find("NVIDIA-A100-80GB-PCIe")->name, "A100-80GB");
	assert_string_equal(carve_gpu_model_find("NVIDIA-H100-PCIe")->name, "H100-80GB");
}

static void test_gpu_model_find(void **state)
{
	int i;

	(void)state;
	assert_gpu("NVIDIA-L40S", "L40S", "ada-lovelace", 46068, false);
	assert_gpu("NVIDIA-L40S-SHARED", "L40S", "ada-lovelace", 46068, false);
	assert_gpu("NVIDIA L40S", "L40S", "ada-lovelace", 46068, false);
	assert_gpu("NVIDIA-L40", "L40", "ada-lovelace", 49152, false);
	assert_gpu("NVIDIA-L4", "L4", "ada-lovelace", 23034, false);
	assert_gpu("Tesla-T4", "T4", "turing", 15360, false);
	assert_gpu("T4", "T4", "turing", 15360, false);
	assert_gpu("NVIDIA-A10", "A10", "ampere", 23028, false);
	assert_gpu("A10", "A10", "ampere", 23028, false);
	assert_gpu("NVIDIA-A10G", "A10G", "ampere", 24576, false);
	assert_gpu("NVIDIA-RTX-A6000", "RTX-A6000", "ampere", 49152, false);
	assert_gpu("Tesla-V100-SXM2-16GB", "V100-16GB", "volta", 16384, false);
	assert_gpu("Tesla-V100-SXM2-32GB", "V100-32GB", "volta", 32768, false);
	assert_gpu("Tesla V100-PCIE-32GB", "V100-32GB", "volta", 32768, false);
	assert_gpu("V100M16", "V100-16GB", "volta", 16384, false);
	assert_gpu("V100M32", "V100-32GB", "volta", 32768, false);
	assert_gpu("P100", "P100-16GB", "pascal", 16384, false);
	assert_gpu("Tesla-P100-PCIE-16GB", "P100-16GB", "pascal", 16384, false);
	assert_gpu("G2", "G2", "", 0, false);
	assert_gpu("G3", "G3", "", 0, false);
	assert_gpu("NVIDIA-A100-SXM4-80GB", "A100-80GB", "ampere", 81920, true);
	assert_gpu("NVIDIA-A100-SXM4-40GB", "A100-40GB", "ampere", 40960, true);
	assert_gpu("NVIDIA-H100-80GB-HBM3", "H100-80GB", "hopper", 81559, true);
	assert_gpu("NVIDIA-H100-NVL", "H100-94GB", "hopper", 96256, true);
	assert_gpu("NVIDIA-H200", "H200-141GB", "hopper", 143771, true);
	assert_gpu("NVIDIA-A30", "A30-24GB", "ampere", 24576, true);

	assert_ptr_equal(carve_gpu_model_find("NVIDIA-A100-SXM4-80GB")->mig,
			 carve_mig_model_find("A100-80GB"));
	assert_null(carve_gpu_model_find("NVIDIA-GeForce-RTX-4090"));
	assert_null(carve_gpu_model_find("Tesla-P100-PCIE-12GB"));
	assert_null(carve_gpu_model_find("NVIDIA-RTX-A3000"));
	assert_null(carve_gpu_model_find(""));
	assert_null(carve_gpu_model_find(NULL));
	assert_null(carve_gpu_model_at(-1));
	assert_null(carve_gpu_model_at(carve_gpu_model_count()));

	/* every canonical name finds itself; mig points at the same name */
	for (i = 0; i < carve_gpu_model_count(); i++) {
		const struct carve_gpu_model *g = carve_gpu_model_at(i);

		assert_ptr_equal(carve_gpu_model_find(g->name), g);
		if (g->mig)
			assert_string_equal(g->mig->name, g->name);
	}
	/* every MIG model has a GPU model */
	for (i = 0; i < carve_mig_model_count(); i++) {
		const struct carve_mig_model *m = carve_mig_model_at(i);

		assert_ptr_equal(carve_gpu_model_find(m->name)->mig, m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_invariants),
		cmocka_unit_test(test_table_facts),
		cmocka_unit_test(test_full_gpu_every_model),
		cmocka_unit_test(test_legal_layouts),
		cmocka_unit_test(test_illegal_layouts),
		cmocka_unit_test(test_layout_mask),
		cmocka_unit_test(test_free_starts),
		cmocka_unit_test(test_fit_count),
		cmocka_unit_test(test_layout_add),
		cmocka_unit_test(test_from_counts),
		cmocka_unit_test(test_brute_force_every_model),
		cmocka_unit_test(test_mig_model_find),
		cmocka_unit_test(test_gpu_model_find),
		cmocka_unit_test(test_model_size_tokens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
