/*
 * resource.c - the resource-name registry and resource-vector arithmetic.
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

#define MIG_PREFIX "nvidia.com/mig-"

struct carve_resreg {
	int count;
	char *names[CARVE_RES_MAX];
};

static const char *const wellknown[CARVE_RES_NWELLKNOWN] = {
	[CARVE_RES_CPU] = "cpu",
	[CARVE_RES_MEMORY] = "memory",
	[CARVE_RES_PODS] = "pods",
	[CARVE_RES_GPU] = "nvidia.com/gpu",
};

struct carve_resreg *carve_resreg_create(void)
{
	struct carve_resreg *r;
	int i;

	r = carve_calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	for (i = 0; i < CARVE_RES_NWELLKNOWN; i++) {
		if (carve_resreg_intern(r, wellknown[i]) != i) {
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

bool carve_res_is_mig(const char *name, const char **profile)
{
	size_t n = sizeof(MIG_PREFIX) - 1;

	if (!name || strncmp(name, MIG_PREFIX, n) != 0 || name[n] == '\0')
		return false;
	if (profile)
		*profile = name + n;
	return true;
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
