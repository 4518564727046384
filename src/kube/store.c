/*
 * store.c - the objects of one kind by namespace and name (kube.h),
 * kept up to date by the events of a reflector.
 *
 * A jansson object is the hash map: key "ns/name" for a namespaced
 * object, "name" for a cluster-scoped one (a name never holds '/', so the
 * two cannot collide), value a reference to the object.  each() sorts the
 * keys first, so callers see a stable order.
 *
 * Invariants: every value has metadata.name; a put of an object whose
 * resourceVersion equals the stored one's changes nothing; a failed apply
 * leaves the store as it was.
 */
#include <stdlib.h>
#include <string.h>

#include "carve/kube.h"

struct carve_kube_store {
	json_t *m;
};

struct carve_kube_store *carve_kube_store_create(void)
{
	struct carve_kube_store *s = carve_calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->m = json_object();
	if (!s->m) {
		carve_free(s);
		return NULL;
	}
	return s;
}

void carve_kube_store_destroy(struct carve_kube_store *s)
{
	if (!s)
		return;
	json_decref(s->m);
	carve_free(s);
}

/* The key of ns/name into buf; NULL when it does not fit. */
static const char *make_key(const char *ns, const char *name, char *buf, size_t size)
{
	int n = ns && *ns ? snprintf(buf, size, "%s/%s", ns, name) : snprintf(buf, size, "%s", name);

	return n >= 0 && (size_t)n < size ? buf : NULL;
}

static const char *obj_key(const json_t *obj, char *buf, size_t size)
{
	const char *name = carve_kube_name(obj);

	if (!name || !*name)
		return NULL;
	return make_key(carve_kube_ns(obj), name, buf, size);
}

static bool same_rv(const json_t *a, const json_t *b)
{
	const char *ra = carve_kube_rv(a), *rb = carve_kube_rv(b);

	return ra && rb && strcmp(ra, rb) == 0;
}

/* Names are at most 253 characters, namespaces 63. */
#define KEY_MAX 512

static int no_name(struct carve_error *err, const json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));

	return carve_errorf(err, CARVE_EINVAL, "%s object without metadata.name (or one too long)",
			    kind ? kind : "an");
}

static int put(struct carve_kube_store *s, json_t *obj, struct carve_error *err)
{
	char buf[KEY_MAX];
	const char *key = obj_key(obj, buf, sizeof(buf));
	json_t *old;

	if (!key)
		return no_name(err, obj);
	old = json_object_get(s->m, key);
	if (old == obj || (old && same_rv(old, obj)))
		return 0;
	if (json_object_set(s->m, key, obj))
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	return 1;
}

static int replace(struct carve_kube_store *s, json_t *arr, struct carve_error *err)
{
	json_t *m, *it, *old;
	char buf[KEY_MAX];
	const char *key;
	bool changed;
	size_t i;

	if (!json_is_array(arr))
		return carve_errorf(err, CARVE_EINVAL, "a REPLACE event without an array");
	m = json_object();
	if (!m)
		return carve_errorf(err, CARVE_ENOMEM, "out of memory");
	json_array_foreach(arr, i, it) {
		if (!(key = obj_key(it, buf, sizeof(buf)))) {
			json_decref(m);
			return no_name(err, it);
		}
		if (json_object_set(m, key, it)) {
			json_decref(m);
			return carve_errorf(err, CARVE_ENOMEM, "out of memory");
		}
	}
	changed = json_object_size(m) != json_object_size(s->m);
	if (!changed) {
		json_object_foreach(m, key, it) {
			old = json_object_get(s->m, key);
			if (!old || (old != it && !same_rv(old, it))) {
				changed = true;
				break;
			}
		}
	}
	json_decref(s->m);
	s->m = m;
	return changed ? 1 : 0;
}

int carve_kube_store_apply(struct carve_kube_store *s, const struct carve_kube_event *ev,
			   struct carve_error *err)
{
	char buf[KEY_MAX];
	const char *key;

	switch (ev->type) {
	case CARVE_KEV_ADDED:
	case CARVE_KEV_MODIFIED:
		return put(s, ev->obj, err);
	case CARVE_KEV_DELETED:
		if (!(key = obj_key(ev->obj, buf, sizeof(buf))))
			return no_name(err, ev->obj);
		return json_object_del(s->m, key) == 0 ? 1 : 0;
	case CARVE_KEV_REPLACE:
		return replace(s, ev->obj, err);
	}
	return carve_errorf(err, CARVE_EINVAL, "unknown event type %d", (int)ev->type);
}

json_t *carve_kube_store_get(const struct carve_kube_store *s, const char *ns, const char *name)
{
	char buf[KEY_MAX];
	const char *key;

	if (!name)
		return NULL;
	key = make_key(ns, name, buf, sizeof(buf));
	return key ? json_object_get(s->m, key) : NULL;
}

int carve_kube_store_put(struct carve_kube_store *s, json_t *obj)
{
	char buf[KEY_MAX];
	const char *key = obj_key(obj, buf, sizeof(buf));

	if (!key)
		return CARVE_EINVAL;
	return json_object_set(s->m, key, obj) ? CARVE_ENOMEM : 0;
}

size_t carve_kube_store_count(const struct carve_kube_store *s)
{
	return json_object_size(s->m);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int carve_kube_store_each(const struct carve_kube_store *s,
			  int (*fn)(void *ctx, json_t *obj), void *ctx)
{
	size_t n = json_object_size(s->m), i = 0;
	const char **keys, *key;
	json_t **vals, *v;
	int rc = 0;

	if (!n)
		return 0;
	keys = carve_malloc(n * sizeof(*keys));
	vals = carve_malloc(n * sizeof(*vals));
	if (!keys || !vals) {
		carve_free(keys);
		carve_free(vals);
		return CARVE_ENOMEM;
	}
	json_object_foreach(s->m, key, v)
		keys[i++] = key;
	qsort(keys, n, sizeof(*keys), cmp_key);
	/* Hold every object, so fn may change the store as it goes. */
	for (i = 0; i < n; i++)
		vals[i] = json_incref(json_object_get(s->m, keys[i]));
	for (i = 0; i < n && !rc; i++)
		rc = fn(ctx, vals[i]);
	for (i = 0; i < n; i++)
		json_decref(vals[i]);
	carve_free(keys);
	carve_free(vals);
	return rc;
}
