/*
 * resource.c - the resource-name registry, the one table of what each
 * resource name means (carve_res_kind: cpu, memory, pods, whole GPU, time-
 * slice replica, MIG profile by prefix, carve's MIG slice quotas), and
 * resource-vector arithmetic.
 *
 * Invariants: a registry holds at most CARVE_RES_MAX distinct names, each an
 * owned copy; ids are the dense indices 0..count-1 in interning order and
 * never change, and the first CARVE_RES_NWELLKNOWN are the well-known names
 * in enum order.  Lookup is a linear scan: 64 short names fit in a few cache
 * lines, and hot code uses the well-known constants anyway.  Vector add/sub
 * compute into a temporary so that dst is untouched on overflow.
 */
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
} restab[] = {
#define ROW(n, p, k, w) {n, sizeof(n) - 1, p, k, w}
	ROW(CARVE_RES_NAME_CPU, false, CARVE_RK_CPU, "cpu"),
	ROW(CARVE_RES_NAME_MEMORY, false, CARVE_RK_MEMORY, "memory"),
	ROW(CARVE_RES_NAME_PODS, false, CARVE_RK_PODS, "pods"),
	ROW(CARVE_RES_NAME_GPU, false, CARVE_RK_GPU, "gpu"),
	ROW(CARVE_RES_NAME_GPU_SHARED, false, CARVE_RK_REPLICA, "replica"),
	ROW(CARVE_RES_NAME_MIG_PREFIX, true, CARVE_RK_MIG, "mig"),
	ROW(CARVE_RES_NAME_MIG_MEMORY_SLICES, false, CARVE_RK_MIG_MEMORY_SLICES,
	    "mig-memory-slices"),
	ROW(CARVE_RES_NAME_MIG_COMPUTE_SLICES, false, CARVE_RK_MIG_COMPUTE_SLICES,
	    "mig-compute-slices"),
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

enum carve_res_kind carve_res_kind(const char *name, const char **mig_profile)
{
	size_t i;

	if (!name)
		return CARVE_RK_OTHER;
	for (i = 0; i < NRESTAB; i++) {
		const struct restab *t = &restab[i];

		if (t->prefix ? strncmp(name, t->name, t->len) || !name[t->len]
			      : strcmp(name, t->name))
			continue;
		if (t->kind == CARVE_RK_MIG && mig_profile)
			*mig_profile = name + t->len;
		return t->kind;
	}
	return CARVE_RK_OTHER;
}

bool carve_res_is_mig(const char *name, const char **profile)
{
	return carve_res_kind(name, profile) == CARVE_RK_MIG;
}

bool carve_res_is_gpu_device(const char *name)
{
	enum carve_res_kind k = carve_res_kind(name, NULL);

	return k == CARVE_RK_GPU || k == CARVE_RK_REPLICA || k == CARVE_RK_MIG;
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
