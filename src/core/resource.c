/*
 * resource.c - the resource-name registry, the one table of what each
 * resource name means (carve_res_kind: cpu, memory, pods, whole GPU, time-
 * slice replica, MIG profile by prefix, carve's MIG slice quotas, and
 * carve's own device names with their family and twins), and
 * resource-vector arithmetic.
 *
 * Invariants: a registry holds at most CARVE_RES_MAX distinct names, each an
 * owned copy; ids are the dense indices 0..count-1 in interning order and
 * never change, and the first CARVE_RES_NWELLKNOWN are the well-known names
 * in enum order.  Lookup is a linear scan: 64 short names fit in a few cache
 * lines, and hot code uses the well-known constants anyway.  Vector add/sub
 * compute into a temporary so that dst is untouched on overflow.
 */
#include <stdio.h>
#include <string.h>

#include "carve/resource.h"

struct carve_resreg {
	int count;
	char *names[CARVE_RES_MAX];
};

/*
 * The one table of resource names carve gives a meaning to: a name (or a
 * prefix, followed by something) and its kind.  The well-known ids are the
 * first four rows, in enum carve_res_wellknown order.
 */
static const struct restab {
	const char *name;
	size_t len;
	bool prefix;
	enum carve_res_kind kind;
	const char *word;
	enum carve_res_family family;
} restab[] = {
#define ROW(n, p, k, w, f) {n, sizeof(n) - 1, p, k, w, f}
	ROW(CARVE_RES_NAME_CPU, false, CARVE_RK_CPU, "cpu", CARVE_RF_NONE),
	ROW(CARVE_RES_NAME_MEMORY, false, CARVE_RK_MEMORY, "memory", CARVE_RF_NONE),
	ROW(CARVE_RES_NAME_PODS, false, CARVE_RK_PODS, "pods", CARVE_RF_NONE),
	ROW(CARVE_RES_NAME_GPU, false, CARVE_RK_GPU, "gpu", CARVE_RF_NVIDIA),
	ROW(CARVE_RES_NAME_GPU_SHARED, false, CARVE_RK_REPLICA, "replica", CARVE_RF_NVIDIA),
	ROW(CARVE_RES_NAME_MIG_PREFIX, true, CARVE_RK_MIG, "mig", CARVE_RF_NVIDIA),
	ROW(CARVE_RES_NAME_MIG_MEMORY_SLICES, false, CARVE_RK_MIG_MEMORY_SLICES,
	    "mig-memory-slices", CARVE_RF_NONE),
	ROW(CARVE_RES_NAME_MIG_COMPUTE_SLICES, false, CARVE_RK_MIG_COMPUTE_SLICES,
	    "mig-compute-slices", CARVE_RF_NONE),
	/* carve's own names: after the slice quotas, which share the prefix */
	ROW(CARVE_RES_NAME_CARVE_GPU, false, CARVE_RK_GPU_WHOLE, "whole-gpu", CARVE_RF_CARVE),
	ROW(CARVE_RES_NAME_CARVE_GPU_SHARED, false, CARVE_RK_REPLICA, "replica", CARVE_RF_CARVE),
	ROW(CARVE_RES_NAME_CARVE_MIG_PREFIX, true, CARVE_RK_MIG, "mig", CARVE_RF_CARVE),
#undef ROW
};

#define NRESTAB (sizeof(restab) / sizeof(restab[0]))

struct carve_resreg *carve_resreg_create(void)
{
	struct carve_resreg *r;
	int i;

	r = carve_calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	for (i = 0; i < CARVE_RES_NWELLKNOWN; i++) {
		if (carve_resreg_intern(r, restab[i].name) != i) {
			carve_resreg_destroy(r);
			return NULL;
		}
	}
	return r;
}

void carve_resreg_destroy(struct carve_resreg *r)
{
	int i;

	if (!r)
		return;
	for (i = 0; i < r->count; i++)
		carve_free(r->names[i]);
	carve_free(r);
}

int carve_resreg_find(const struct carve_resreg *r, const char *name)
{
	int i;

	if (!r || !name)
		return CARVE_ENOTFOUND;
	for (i = 0; i < r->count; i++)
		if (strcmp(r->names[i], name) == 0)
			return i;
	return CARVE_ENOTFOUND;
}

int carve_resreg_intern(struct carve_resreg *r, const char *name)
{
	char *copy;
	int id;

	if (!r || !name || *name == '\0')
		return CARVE_EINVAL;
	id = carve_resreg_find(r, name);
	if (id >= 0)
		return id;
	if (r->count >= CARVE_RES_MAX)
		return CARVE_EFULL;
	copy = carve_strdup(name);
	if (!copy)
		return CARVE_ENOMEM;
	r->names[r->count] = copy;
	return r->count++;
}

const char *carve_resreg_name(const struct carve_resreg *r, int id)
{
	if (!r || id < 0 || id >= r->count)
		return NULL;
	return r->names[id];
}

int carve_resreg_count(const struct carve_resreg *r)
{
	return r ? r->count : 0;
}

/* True when p starts like a MIG profile: digits, then "g." ("1g.10gb"). */
static bool profile_shaped(const char *p)
{
	const char *d = p;

	while (*d >= '0' && *d <= '9')
		d++;
	return d > p && d[0] == 'g' && d[1] == '.';
}

/* The row name matches, or NULL.  A carve.dev MIG name must carry a
 * profile-shaped suffix (other carve.dev/mig- names are not devices). */
static const struct restab *row_of(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < NRESTAB; i++) {
		const struct restab *t = &restab[i];

		if (t->prefix ? strncmp(name, t->name, t->len) || !name[t->len]
			      : strcmp(name, t->name))
			continue;
		if (t->prefix && t->family == CARVE_RF_CARVE &&
		    (!profile_shaped(name + t->len) || strchr(name + t->len, '+')))
			return NULL;
		return t;
	}
	return NULL;
}

enum carve_res_kind carve_res_kind(const char *name, const char **mig_profile)
{
	const struct restab *t = row_of(name);

	if (!t)
		return CARVE_RK_OTHER;
	if (t->kind == CARVE_RK_MIG && mig_profile)
		*mig_profile = name + t->len;
	return t->kind;
}

enum carve_res_family carve_res_family(const char *name)
{
	const struct restab *t = row_of(name);

	return t ? t->family : CARVE_RF_NONE;
}

const char *carve_res_family_name(enum carve_res_family f)
{
	return f == CARVE_RF_NVIDIA ? "nvidia" : f == CARVE_RF_CARVE ? "carve" : "none";
}

int carve_res_twin(const char *name, enum carve_res_family to, char *buf, size_t size)
{
	const struct restab *t = row_of(name);
	const char *out = NULL, *prefix, *prof;
	size_t n, plen;
	int w;

	if (!t || t->family == CARVE_RF_NONE || to == CARVE_RF_NONE || !buf)
		return CARVE_EINVAL;
	switch (t->kind) {
	case CARVE_RK_GPU:
	case CARVE_RK_GPU_WHOLE:
		out = to == CARVE_RF_CARVE ? CARVE_RES_NAME_CARVE_GPU : CARVE_RES_NAME_GPU;
		break;
	case CARVE_RK_REPLICA:
		out = to == CARVE_RF_CARVE ? CARVE_RES_NAME_CARVE_GPU_SHARED
					   : CARVE_RES_NAME_GPU_SHARED;
		break;
	case CARVE_RK_MIG:
		break;
	default:
		return CARVE_EINVAL;
	}
	if (out) {
		w = snprintf(buf, size, "%s", out);
		return w < 0 || (size_t)w >= size ? CARVE_ERANGE : 0;
	}
	prefix = to == CARVE_RF_CARVE ? CARVE_RES_NAME_CARVE_MIG_PREFIX : CARVE_RES_NAME_MIG_PREFIX;
	prof = name + t->len;
	plen = strlen(prefix);
	if (plen + strlen(prof) + 1 > size)
		return CARVE_ERANGE;
	memcpy(buf, prefix, plen);
	for (n = 0; prof[n]; n++)
		buf[plen + n] = to == CARVE_RF_CARVE && prof[n] == '+' ? '.' : prof[n];
	buf[plen + n] = '\0';
	return 0;
}

int carve_res_check_name(const char *name, struct carve_error *err)
{
	static const char known[] = "carve's device names are " CARVE_RES_NAME_CARVE_GPU ", "
				    CARVE_RES_NAME_CARVE_GPU_SHARED " and "
				    CARVE_RES_NAME_CARVE_MIG_PREFIX "<profile>";
	const char *mig = CARVE_RES_NAME_CARVE_MIG_PREFIX, *prof, *plus;
	enum carve_res_kind k;

	if (!name || (strncmp(name, CARVE_RES_NAME_CARVE_GPU, strlen(CARVE_RES_NAME_CARVE_GPU)) &&
		      strncmp(name, mig, strlen(mig))))
		return 0;
	k = carve_res_kind(name, NULL);
	if (k != CARVE_RK_OTHER)
		return 0;
	if (strncmp(name, mig, strlen(mig)))
		return carve_errorf(err, CARVE_EINVAL, "resource %s is not one of carve's device "
				    "names (%s)", name, known);
	prof = name + strlen(mig);
	if ((plus = strchr(prof, '+')))
		return carve_errorf(err, CARVE_EINVAL, "resource %s: a resource name cannot hold "
				    "'+'; spell the profile's '+%s' as '.%s' (%s%.*s.%s)", name,
				    plus + 1, plus + 1, mig, (int)(plus - prof), prof, plus + 1);
	return carve_errorf(err, CARVE_EINVAL, "resource %s: '%s' is not a MIG profile name "
			    "(like 1g.10gb or 1g.10gb.me); %s", name, prof, known);
}

bool carve_res_is_mig(const char *name, const char **profile)
{
	return carve_res_kind(name, profile) == CARVE_RK_MIG;
}

bool carve_res_is_gpu_device(const char *name)
{
	enum carve_res_kind k = carve_res_kind(name, NULL);

	return k == CARVE_RK_GPU || k == CARVE_RK_REPLICA || k == CARVE_RK_MIG ||
	       k == CARVE_RK_GPU_WHOLE;
}

const char *carve_res_kind_name(enum carve_res_kind kind)
{
	size_t i;

	for (i = 0; i < NRESTAB; i++)
		if (restab[i].kind == kind)
			return restab[i].word;
	return "other";
}

void carve_resvec_zero(struct carve_resvec *v)
{
	memset(v, 0, sizeof(*v));
}

int carve_resvec_add(struct carve_resvec *dst, const struct carve_resvec *a)
{
	struct carve_resvec out;
	int i;

	for (i = 0; i < CARVE_RES_MAX; i++)
		if (__builtin_add_overflow(dst->v[i], a->v[i], &out.v[i]))
			return CARVE_ERANGE;
	*dst = out;
	return 0;
}

int carve_resvec_sub(struct carve_resvec *dst, const struct carve_resvec *a)
{
	struct carve_resvec out;
	int i;

	for (i = 0; i < CARVE_RES_MAX; i++)
		if (__builtin_sub_overflow(dst->v[i], a->v[i], &out.v[i]))
			return CARVE_ERANGE;
	*dst = out;
	return 0;
}

bool carve_resvec_le(const struct carve_resvec *a, const struct carve_resvec *b,
		     int n)
{
	int i;

	if (n > CARVE_RES_MAX)
		n = CARVE_RES_MAX;
	for (i = 0; i < n; i++)
		if (a->v[i] > b->v[i])
			return false;
	return true;
}
