/*
 * mig.c - MIG geometry: model lookup by name, layout legality, free
 * placements, fit counts and layout construction from per-profile counts.
 *
 * A layout is a caller-owned value; nothing here allocates or keeps state.
 * Every function that adds an instance goes through can_add(), which assumes
 * the layout it extends is legal, so callers check the layout once first.
 * The rules and the order in which layout_check reports them are described
 * in docs/internals/MIG.md.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "mig_int.h"

/* ---- names -------------------------------------------------------------- */

static bool strip_prefix(char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n) != 0 || s[n] == '\0')
		return false;
	memmove(s, s + n, strlen(s + n) + 1);
	return true;
}

static void strip_suffix(char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	if (n > k && strcmp(s + n - k, suffix) == 0)
		s[n - k] = '\0';
}

int carve__gpu_name_normalize(const char *name, char *out, size_t size)
{
	size_t n = 0;
	const char *c;

	if (!name || !out || size == 0)
		return -1;
	for (c = name; *c; c++) {
		char ch = (char)toupper((unsigned char)*c);

		if (ch == ' ' || ch == '_' || ch == '\t')
			ch = '-';
		if (ch == '-' && (n == 0 || out[n - 1] == '-'))
			continue;
		if (n + 1 >= size)
			return -1;
		out[n++] = ch;
	}
	while (n > 0 && out[n - 1] == '-')
		n--;
	out[n] = '\0';
	strip_prefix(out, "NVIDIA-");
	strip_prefix(out, "TESLA-");
	strip_suffix(out, "-SHARED");
	return out[0] ? 0 : -1;
}

bool carve__gpu_name_has_token(const char *norm, const char *tok)
{
	size_t k = strlen(tok);
	const char *p = norm;

	while (*p) {
		size_t len = strcspn(p, "-");

		if (len == k && strncmp(p, tok, k) == 0)
			return true;
		p += len;
		if (*p == '-')
			p++;
	}
	return false;
}

/* The first '-'-separated token of the form <digits>G or <digits>GB, copied
 * into buf ("" when none).  Used to refuse sizes a model does not come in. */
static const char *size_token(const char *norm, char *buf, size_t size)
{
	const char *p = norm;

	buf[0] = '\0';
	while (*p) {
		const char *end = strchr(p, '-');
		size_t len = end ? (size_t)(end - p) : strlen(p), d = 0;

		while (d < len && p[d] >= '0' && p[d] <= '9')
			d++;
		if (d > 0 && d < len && p[d] == 'G' &&
		    (d + 1 == len || (d + 2 == len && p[d + 1] == 'B')) && len < size) {
			memcpy(buf, p, len);
			buf[len] = '\0';
			return buf;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return buf;
}

const struct carve_mig_model *carve__mig_model_classify(const char *norm)
{
	char sz[16];
	const struct carve_mig_model *t = carve__mig_models;
	int i;

	for (i = 0; i < CARVE__MIG_NMODELS; i++)
		if (strcmp(norm, t[i].name) == 0)
			return &t[i];
	if (carve__gpu_name_has_token(norm, "A30"))
		return &t[CARVE__MIG_A30_24GB];
	size_token(norm, sz, sizeof(sz));
	if (carve__gpu_name_has_token(norm, "A100")) {
		/* No size token: the original 40GB card.  A size the A100 does
		 * not come in ("A100-80G", "A100-48GB") is not guessed. */
		if (!strcmp(sz, "80GB"))
			return &t[CARVE__MIG_A100_80GB];
		if (!*sz || !strcmp(sz, "40GB"))
			return &t[CARVE__MIG_A100_40GB];
		return NULL;
	}
	if (carve__gpu_name_has_token(norm, "H100")) {
		if (carve__gpu_name_has_token(norm, "NVL") ||
		    carve__gpu_name_has_token(norm, "94GB"))
			return &t[CARVE__MIG_H100_94GB];
		/* H100 96GB (GH200-class) has other profiles: not in the table */
		if (*sz && strcmp(sz, "80GB"))
			return NULL;
		return &t[CARVE__MIG_H100_80GB];
	}
	if (carve__gpu_name_has_token(norm, "H200"))
		return &t[CARVE__MIG_H200_141GB];
	return NULL;
}

int carve_mig_model_count(void)
{
	return CARVE__MIG_NMODELS;
}

const struct carve_mig_model *carve_mig_model_at(int i)
{
	if (i < 0 || i >= CARVE__MIG_NMODELS)
		return NULL;
	return &carve__mig_models[i];
}

const struct carve_mig_model *carve_mig_model_find(const char *name)
{
	char norm[CARVE__GPU_NAME_MAX];

	if (carve__gpu_name_normalize(name, norm, sizeof(norm)) != 0)
		return NULL;
	return carve__mig_model_classify(norm);
}

/* Profile name p spelled as name: the same, or with each '+' written '.'
 * (Kubernetes resource names cannot hold '+': "1g.10gb.me"). */
static bool profile_name_eq(const char *p, const char *name)
{
	for (; *p && *name; p++, name++)
		if (*p != *name && !(*p == '+' && *name == '.'))
			return false;
	return !*p && !*name;
}

int carve_mig_profile_find(const struct carve_mig_model *m, const char *name)
{
	int i;

	if (!m || !name)
		return -1;
	for (i = 0; i < m->nprofiles; i++)
		if (profile_name_eq(m->profiles[i].name, name))
			return i;
	return -1;
}

/* ---- legality ----------------------------------------------------------- */

static uint32_t span(const struct carve_mig_model *m, int p, int start)
{
	int size = m->profiles[p].mem_slices;

	if (start < 0 || start + size > m->mem_slices)
		return 0;
	return ((1u << size) - 1) << start;
}

static bool start_legal(const struct carve_mig_profile *prof, int start)
{
	int i;

	for (i = 0; i < prof->nstarts; i++)
		if (prof->starts[i] == start)
			return true;
	return false;
}

uint32_t carve_mig_layout_mask(const struct carve_mig_model *m,
			       const struct carve_mig_layout *l)
{
	uint32_t mask = 0;
	int i;

	if (!m || !l)
		return 0;
	for (i = 0; i < l->n && i < CARVE_MIG_MAX_INST; i++)
		if (l->inst[i].profile < m->nprofiles)
			mask |= span(m, l->inst[i].profile, l->inst[i].start);
	return mask;
}

static int count_of(const struct carve_mig_layout *l, int p)
{
	int i, c = 0;

	for (i = 0; i < l->n; i++)
		c += l->inst[i].profile == p;
	return c;
}

static int check_counts(const struct carve_mig_model *m,
			const struct carve_mig_layout *l,
			struct carve_error *err)
{
	int p, c, media = 0, compute = 0;

	for (p = 0; p < m->nprofiles; p++) {
		const struct carve_mig_profile *prof = &m->profiles[p];

		c = count_of(l, p);
		if (c > prof->max_count)
			return carve_errorf(err, CARVE_EINVAL,
				"%d instances of %s exceed its maximum of %d",
				c, prof->name, prof->max_count);
		if (prof->media)
			media += c;
		compute += c * prof->compute;
	}
	if (media > 1)
		return carve_errorf(err, CARVE_EINVAL,
			"more than one media-extension (+me) instance");
	if (compute > m->compute_slices)
		return carve_errorf(err, CARVE_EINVAL,
			"instances use %d compute slices, more than the GPU's %d",
			compute, m->compute_slices);
	return 0;
}

static int check_positions(const struct carve_mig_model *m,
			   const struct carve_mig_layout *l,
			   struct carve_error *err)
{
	char legal[64];
	int i, j, k, len;

	for (i = 0; i < l->n; i++) {
		const struct carve_mig_profile *prof =
			&m->profiles[l->inst[i].profile];

		if (start_legal(prof, l->inst[i].start))
			continue;
		legal[0] = '\0';
		for (k = 0, len = 0; k < prof->nstarts; k++)
			len += snprintf(legal + len, sizeof(legal) - len,
					"%s%d", k ? ", " : "", prof->starts[k]);
		return carve_errorf(err, CARVE_EINVAL,
			"%s cannot start at memory slice %d (legal: %s)",
			prof->name, l->inst[i].start, legal);
	}
	for (i = 1; i < l->n; i++) {
		const struct carve_mig_instance *a = &l->inst[i];

		for (j = 0; j < i; j++) {
			const struct carve_mig_instance *b = &l->inst[j];

			if (!(span(m, a->profile, a->start) &
			      span(m, b->profile, b->start)))
				continue;
			return carve_errorf(err, CARVE_EINVAL,
				"%s at slice %d overlaps %s at slice %d",
				m->profiles[a->profile].name, a->start,
				m->profiles[b->profile].name, b->start);
		}
	}
	return 0;
}

int carve_mig_layout_check(const struct carve_mig_model *m,
			   const struct carve_mig_layout *l,
			   struct carve_error *err)
{
	int i, rc;

	if (!m || !l)
		return carve_errorf(err, CARVE_EINVAL, "no MIG model or layout");
	if (l->n > m->max_instances || l->n > CARVE_MIG_MAX_INST)
		return carve_errorf(err, CARVE_EINVAL,
			"%d instances exceed the GPU's maximum of %d",
			l->n, m->max_instances);
	for (i = 0; i < l->n; i++)
		if (l->inst[i].profile >= m->nprofiles)
			return carve_errorf(err, CARVE_EINVAL,
				"unknown profile index %d at instance %d (%s has %d profiles)",
				l->inst[i].profile, i, m->name, m->nprofiles);
	rc = check_counts(m, l, err);
	if (rc)
		return rc;
	return check_positions(m, l, err);
}

/*
 * Whether one more instance of p at start keeps the legal layout l legal:
 * the same rules as layout_check, tested incrementally.
 */
static bool can_add(const struct carve_mig_model *m,
		    const struct carve_mig_layout *l, int p, int start)
{
	const struct carve_mig_profile *prof = &m->profiles[p];
	int i, compute = prof->compute;

	if (l->n >= m->max_instances || l->n >= CARVE_MIG_MAX_INST)
		return false;
	if (!start_legal(prof, start) ||
	    (carve_mig_layout_mask(m, l) & span(m, p, start)))
		return false;
	if (count_of(l, p) >= prof->max_count)
		return false;
	for (i = 0; i < l->n; i++) {
		const struct carve_mig_profile *o =
			&m->profiles[l->inst[i].profile];

		if (prof->media && o->media)
			return false;
		compute += o->compute;
	}
	return compute <= m->compute_slices;
}

static void push(struct carve_mig_layout *l, int p, int start)
{
	l->inst[l->n].profile = (uint8_t)p;
	l->inst[l->n].start = (uint8_t)start;
	l->n++;
}

static bool usable(const struct carve_mig_model *m,
		   const struct carve_mig_layout *l, int p)
{
	return m && l && p >= 0 && p < m->nprofiles &&
	       carve_mig_layout_check(m, l, NULL) == 0;
}

int carve_mig_free_starts(const struct carve_mig_model *m,
			  const struct carve_mig_layout *l, int p,
			  uint8_t *starts, int max)
{
	const struct carve_mig_profile *prof;
	int i, n = 0;

	if (!usable(m, l, p))
		return 0;
	prof = &m->profiles[p];
	for (i = 0; i < prof->nstarts; i++) {
		if (!can_add(m, l, p, prof->starts[i]))
			continue;
		if (starts && n < max)
			starts[n] = prof->starts[i];
		n++;
	}
	return n;
}

/*
 * Greedy, earliest start first.  Optimal for a single profile: its
 * placements are aligned to its size, so any two are disjoint or equal.
 */
int carve_mig_fit_count(const struct carve_mig_model *m,
			const struct carve_mig_layout *l, int p)
{
	struct carve_mig_layout tmp;
	const struct carve_mig_profile *prof;
	int i, n = 0;

	if (!usable(m, l, p))
		return 0;
	tmp = *l;
	prof = &m->profiles[p];
	for (i = 0; i < prof->nstarts; i++) {
		if (!can_add(m, &tmp, p, prof->starts[i]))
			continue;
		push(&tmp, p, prof->starts[i]);
		n++;
	}
	return n;
}

int carve_mig_layout_add(const struct carve_mig_model *m,
			 struct carve_mig_layout *l, int p, int start)
{
	if (!usable(m, l, p))
		return CARVE_EINVAL;
	if (!can_add(m, l, p, start))
		return CARVE_ENOFIT;
	push(l, p, start);
	return 0;
}

/* ---- construction from counts ------------------------------------------ */

/* Larger first: more memory slices, then more compute, then table order. */
static bool placed_before(const struct carve_mig_model *m, int a, int b)
{
	const struct carve_mig_profile *pa = &m->profiles[a], *pb = &m->profiles[b];

	if (pa->mem_slices != pb->mem_slices)
		return pa->mem_slices > pb->mem_slices;
	if (pa->compute != pb->compute)
		return pa->compute > pb->compute;
	return a < b;
}

/*
 * Places items[k..n) on top of l, each at its lowest legal free start,
 * undoing and trying the next start when a later item finds no room.
 * Equal profiles are consecutive in items; each starts after the previous
 * one so that no arrangement is tried twice.
 */
static bool place(const struct carve_mig_model *m, const uint8_t *items,
		  int n, int k, struct carve_mig_layout *l)
{
	const struct carve_mig_profile *prof;
	int i, p, min = 0;

	if (k == n)
		return true;
	p = items[k];
	prof = &m->profiles[p];
	if (k > 0 && items[k - 1] == p)
		min = l->inst[l->n - 1].start + 1;
	for (i = 0; i < prof->nstarts; i++) {
		if (prof->starts[i] < min || !can_add(m, l, p, prof->starts[i]))
			continue;
		push(l, p, prof->starts[i]);
		if (place(m, items, n, k + 1, l))
			return true;
		l->n--;
	}
	return false;
}

static void sort_by_start(struct carve_mig_layout *l)
{
	int i, j;

	for (i = 1; i < l->n; i++) {
		struct carve_mig_instance x = l->inst[i];

		for (j = i; j > 0 && l->inst[j - 1].start > x.start; j--)
			l->inst[j] = l->inst[j - 1];
		l->inst[j] = x;
	}
}

static int no_placement(const struct carve_mig_model *m, const int *counts,
			struct carve_error *err)
{
	char list[160];
	int p, len = 0;

	list[0] = '\0';
	for (p = 0; p < m->nprofiles; p++) {
		if (!counts[p] || len >= (int)sizeof(list))
			continue;
		len += snprintf(list + len, sizeof(list) - len, "%s%s:%d",
				len ? ", " : "", m->profiles[p].name, counts[p]);
	}
	return carve_errorf(err, CARVE_EINVAL, "no legal placement for %s on %s",
			    list, m->name);
}

int carve_mig_layout_from_counts(const struct carve_mig_model *m,
				 const int *counts, struct carve_mig_layout *out,
				 struct carve_error *err)
{
	struct carve_mig_layout l = {0};
	uint8_t items[CARVE_MIG_MAX_INST] = {0};
	int p, i, j, n = 0, media = 0;

	if (!m || !counts || !out)
		return carve_errorf(err, CARVE_EINVAL, "no MIG model, counts or layout");
	for (p = 0; p < m->nprofiles; p++) {
		const struct carve_mig_profile *prof = &m->profiles[p];

		if (counts[p] < 0)
			return carve_errorf(err, CARVE_EINVAL,
				"negative count %d of %s", counts[p], prof->name);
		if (counts[p] > prof->max_count)
			return carve_errorf(err, CARVE_EINVAL,
				"%d instances of %s exceed its maximum of %d",
				counts[p], prof->name, prof->max_count);
		n += counts[p];
		media += prof->media ? counts[p] : 0;
	}
	if (n > m->max_instances || n > CARVE_MIG_MAX_INST)
		return carve_errorf(err, CARVE_EINVAL,
			"%d instances exceed the GPU's maximum of %d",
			n, m->max_instances);
	if (media > 1)
		return carve_errorf(err, CARVE_EINVAL,
			"more than one media-extension (+me) instance");

	/* items: one entry per instance, in placement order */
	n = 0;
	for (p = 0; p < m->nprofiles; p++) {
		for (i = 0; i < counts[p]; i++) {
			for (j = n; j > 0 && placed_before(m, p, items[j - 1]); j--)
				items[j] = items[j - 1];
			items[j] = (uint8_t)p;
			n++;
		}
	}
	if (!place(m, items, n, 0, &l))
		return no_placement(m, counts, err);
	sort_by_start(&l);
	*out = l;
	return 0;
}
