/*
 * miglayout.c - the MIG layout annotations' text (carve/miglayout.h):
 * strict parser and the formatter of the same text.  No allocation; the
 * parser never reads past the terminating NUL.
 */
#include <stdio.h>
#include <string.h>

#include "carve/miglayout.h"

static bool prof_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '+';
}

/* Decimal digits at *p, at most max; advances *p.  -1 when none or too big. */
static int num(const char **p, int max)
{
	const char *s = *p;
	long v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	if (*s == '0' && s[1] >= '0' && s[1] <= '9')
		return -1; /* no leading zeros: one spelling per number */
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (*s - '0');
		if (v > max)
			return -1;
		s++;
	}
	*p = s;
	return (int)v;
}

static bool valid_profile(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n >= sizeof(((struct carve_mig_at *)0)->profile))
		return false;
	for (i = 0; i < n; i++)
		if (!prof_char(s[i]))
			return false;
	return true;
}

int carve_miglayout_parse(const char *s, struct carve_gpu_mig *out, int max,
			  struct carve_error *err)
{
	const char *p = s;
	int n = 0, entry = 0, k;

	if (!s || !*s)
		return 0;
	for (;;) {
		struct carve_gpu_mig g;
		int gpu;

		entry++;
		memset(&g, 0, sizeof(g));
		gpu = num(&p, CARVE_MIGLAYOUT_MAX_GPUS - 1);
		if (gpu < 0)
			return carve_errorf(err, CARVE_EPARSE, "GPU entry %d: expected a GPU index "
					    "0..%d at its start", entry, CARVE_MIGLAYOUT_MAX_GPUS - 1);
		if (*p != '=')
			return carve_errorf(err, CARVE_EPARSE, "GPU entry %d: expected '=' after "
					    "GPU index %d", entry, gpu);
		p++;
		for (k = 0; k < n; k++)
			if (out[k].gpu == gpu)
				return carve_errorf(err, CARVE_EPARSE, "GPU entry %d: GPU %d is "
						    "given twice", entry, gpu);
		g.gpu = gpu;
		while (*p && *p != ';') {
			size_t len = 0;
			int start;

			if (g.n == CARVE_MIG_MAX_INST)
				return carve_errorf(err, CARVE_EFULL, "GPU entry %d: more than %d "
						    "MIG instances on GPU %d", entry,
						    CARVE_MIG_MAX_INST, gpu);
			while (prof_char(p[len]))
				len++;
			if (!len || len >= sizeof(g.v[0].profile))
				return carve_errorf(err, CARVE_EPARSE, "GPU entry %d, instance %d: "
						    "expected a MIG profile such as 3g.40gb "
						    "(letters, digits, '.', '+'; at most %zu bytes)",
						    entry, g.n + 1, sizeof(g.v[0].profile) - 1);
			memcpy(g.v[g.n].profile, p, len);
			g.v[g.n].profile[len] = '\0';
			p += len;
			if (*p != '@')
				return carve_errorf(err, CARVE_EPARSE, "GPU entry %d, instance %d "
						    "(%s): expected '@<start>' after the profile",
						    entry, g.n + 1, g.v[g.n].profile);
			p++;
			start = num(&p, 31);
			if (start < 0)
				return carve_errorf(err, CARVE_EPARSE, "GPU entry %d, instance %d "
						    "(%s): expected a start slice 0..31 after '@'",
						    entry, g.n + 1, g.v[g.n].profile);
			g.v[g.n++].start = start;
			if (*p == ',') {
				p++;
				if (!*p || *p == ';')
					return carve_errorf(err, CARVE_EPARSE, "GPU entry %d: "
							    "nothing after ','", entry);
			} else if (*p && *p != ';') {
				return carve_errorf(err, CARVE_EPARSE, "GPU entry %d, instance %d: "
						    "unexpected '%c' (instances are separated by "
						    "',', GPUs by ';')", entry, g.n,
						    (*p >= 32 && *p < 127) ? *p : '?');
			}
		}
		if (n == max)
			return carve_errorf(err, CARVE_EFULL, "more than %d GPU entries", max);
		out[n++] = g;
		if (!*p)
			return n;
		p++; /* ';' */
		if (!*p)
			return carve_errorf(err, CARVE_EPARSE, "GPU entry %d: nothing after ';'",
					    entry + 1);
	}
}

int carve_miglayout_format(const struct carve_gpu_mig *l, int n, char *buf, size_t size)
{
	size_t len = 0;
	int i, k, j, w;

	if (!size)
		return CARVE_ERANGE;
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		if (l[i].gpu < 0 || l[i].gpu >= CARVE_MIGLAYOUT_MAX_GPUS || l[i].n < 0 ||
		    l[i].n > CARVE_MIG_MAX_INST)
			return CARVE_EINVAL;
		for (j = 0; j < i; j++)
			if (l[j].gpu == l[i].gpu)
				return CARVE_EINVAL;
		w = snprintf(buf + len, size - len, "%s%d=", i ? ";" : "", l[i].gpu);
		if (w < 0 || (size_t)w >= size - len)
			return CARVE_ERANGE;
		len += (size_t)w;
		for (k = 0; k < l[i].n; k++) {
			if (!valid_profile(l[i].v[k].profile) || l[i].v[k].start < 0 ||
			    l[i].v[k].start > 31)
				return CARVE_EINVAL;
			w = snprintf(buf + len, size - len, "%s%s@%d", k ? "," : "",
				     l[i].v[k].profile, l[i].v[k].start);
			if (w < 0 || (size_t)w >= size - len)
				return CARVE_ERANGE;
			len += (size_t)w;
		}
	}
	return (int)len;
}
