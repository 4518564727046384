/*
 * nutil.c - key/value lists for the node agent (node_int.h): labels,
 * environment variables, annotations.  A list owns copies of its keys
 * and values.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_int.h"

int nd_kvs_addf(struct nd_kvs *l, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *k, *v;
	int len;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct nd_kv *nv = realloc(l->v, cap * sizeof(*nv));

		if (!nv)
			return CARVE_ENOMEM;
		l->v = nv;
		l->cap = cap;
	}
	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0)
		return CARVE_EINVAL;
	k = strdup(key);
	v = malloc((size_t)len + 1);
	if (!k || !v) {
		free(k);
		free(v);
		return CARVE_ENOMEM;
	}
	va_start(ap, fmt);
	vsnprintf(v, (size_t)len + 1, fmt, ap);
	va_end(ap);
	l->v[l->n].key = k;
	l->v[l->n++].value = v;
	return 0;
}

const char *nd_kvs_get(const struct nd_kvs *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return l->v[i].value;
	return NULL;
}

static int kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct nd_kv *)a)->key, ((const struct nd_kv *)b)->key);
}

void nd_kvs_sort(struct nd_kvs *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), kv_cmp);
}

void nd_kvs_free(struct nd_kvs *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].value);
	}
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

const struct nd_gpu *nd_gpu_by_index(const struct nd_snapshot *s, int index)
{
	size_t i;

	for (i = 0; i < s->ngpus; i++)
		if ((int)s->gpus[i].index == index)
			return &s->gpus[i];
	return NULL;
}
