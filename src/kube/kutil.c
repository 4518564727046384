/*
 * kutil.c - the small helpers every Kubernetes driver needs (kube.h):
 * an object's namespace, name, uid and resourceVersion, RFC 3339 times
 * with microseconds as the API writes them, and URL query escaping.
 * No state; every function is safe from any thread.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "carve/kube.h"

static const char *meta_str(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(json_object_get(obj, "metadata"), key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *carve_kube_ns(const json_t *obj)
{
	return meta_str(obj, "namespace");
}

const char *carve_kube_name(const json_t *obj)
{
	return meta_str(obj, "name");
}

const char *carve_kube_uid(const json_t *obj)
{
	return meta_str(obj, "uid");
}

const char *carve_kube_rv(const json_t *obj)
{
	return meta_str(obj, "resourceVersion");
}

char *carve_kube_time(int64_t unix_ns, char *buf, size_t size)
{
	time_t s = (time_t)(unix_ns / 1000000000);
	long us = (long)((unix_ns % 1000000000) / 1000);
	struct tm tm;
	char day[32];

	if (us < 0) {
		us += 1000000;
		s--;
	}
	if (!gmtime_r(&s, &tm) || !strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(day, sizeof(day), "1970-01-01T00:00:00");
	snprintf(buf, size, "%s.%06ldZ", day, us);
	return buf;
}

char *carve_kube_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s), i, o = 0;
	char *out = carve_malloc(3 * n + 1);

	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return out;
}
