/*
 * devices.c - the carve.dev/devices annotation text (devices.h): strict
 * parsing and writing of "gpu=<i>[,uuid=..][,mig=<p>@<s>|,replica=<n>|
 * ,milli=<m>][,mem=<MiB>]" entries joined by ';'.
 *
 * Invariants: keys appear in the documented order, each at most once; at
 * most one of mig, replica, milli per entry; what format writes, parse
 * reads back to the same entries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/devices.h"

enum { K_GPU, K_UUID, K_MIG, K_REPLICA, K_MILLI, K_MEM, K_N };
static const char *const keys[K_N] = {"gpu", "uuid", "mig", "replica", "milli", "mem"};

/* A whole decimal number in [lo, hi] of exactly len bytes. */
static bool num(const char *s, size_t len, long lo, long hi, long *out)
{
	long x = 0;
	size_t i;

	if (!len || len > 10)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		x = x * 10 + (s[i] - '0');
	}
	if (x < lo || x > hi)
		return false;
	*out = x;
	return true;
}

/* One entry s[0..len) into d; 0 or CARVE_EPARSE (err names entry e). */
static int entry(const char *s, size_t len, int e, struct carve_devref *d, struct carve_error *err)
{
	int last = -1;
	size_t at = 0;

	memset(d, 0, sizeof(*d));
	d->gpu = -1;
	d->mig_start = -1;
	d->replica = -1;
	while (at < len) {
		const char *kv = s + at, *end = memchr(kv, ',', len - at), *eq;
		size_t n = end ? (size_t)(end - kv) : len - at, kl, vl;
		const char *v;
		long x;
		int k;

		eq = memchr(kv, '=', n);
		if (!eq)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: '%.*s' is not key=value", e,
					    (int)n, kv);
		kl = (size_t)(eq - kv);
		v = eq + 1;
		vl = n - kl - 1;
		for (k = 0; k < K_N && (strlen(keys[k]) != kl || memcmp(keys[k], kv, kl)); k++)
			;
		if (k == K_N)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: unknown key '%.*s'", e,
					    (int)kl, kv);
		if (k <= last)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: key %s %s", e, keys[k],
					    k == last ? "given twice" : "out of order");
		if (last < 0 && k != K_GPU)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: gpu must come first", e);
		if ((k == K_REPLICA || k == K_MILLI) && (d->mig_profile[0] || d->replica >= 0))
			return carve_errorf(err, CARVE_EPARSE, "entry %d: %s with another of mig, "
					    "replica, milli", e, keys[k]);
		switch (k) {
		case K_GPU:
			if (!num(v, vl, 0, 63, &x))
				return carve_errorf(err, CARVE_EPARSE, "entry %d: gpu '%.*s' is not "
						    "0..63", e, (int)vl, v);
			d->gpu = (int)x;
			break;
		case K_UUID:
			if (!vl || vl >= sizeof(d->uuid) || memchr(v, ';', vl))
				return carve_errorf(err, CARVE_EPARSE, "entry %d: uuid is empty or "
						    "longer than %zu", e, sizeof(d->uuid) - 1);
			memcpy(d->uuid, v, vl);
			break;
		case K_MIG: {
			const char *at2 = memchr(v, '@', vl);
			size_t pl = at2 ? (size_t)(at2 - v) : 0;

			if (!at2 || !pl || pl >= sizeof(d->mig_profile) ||
			    !num(at2 + 1, vl - pl - 1, 0, 7, &x))
				return carve_errorf(err, CARVE_EPARSE, "entry %d: mig '%.*s' is not "
						    "<profile>@<start 0..7>", e, (int)vl, v);
			memcpy(d->mig_profile, v, pl);
			d->mig_start = (int)x;
			break;
		}
		case K_REPLICA:
			if (!num(v, vl, 0, 1023, &x))
				return carve_errorf(err, CARVE_EPARSE, "entry %d: replica '%.*s' is "
						    "not 0..1023", e, (int)vl, v);
			d->replica = (int)x;
			break;
		case K_MILLI:
			if (!num(v, vl, 1, 1000, &x))
				return carve_errorf(err, CARVE_EPARSE, "entry %d: milli '%.*s' is "
						    "not 1..1000", e, (int)vl, v);
			d->milli = (int)x;
			break;
		default:
			if (!num(v, vl, 1, 4294967295L, &x))
				return carve_errorf(err, CARVE_EPARSE, "entry %d: mem '%.*s' is not a "
						    "whole number of MiB", e, (int)vl, v);
			d->mem_mib = (uint32_t)x;
			break;
		}
		last = k;
		at += n + (end ? 1 : 0);
		if (end && at == len)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: trailing ','", e);
	}
	if (d->gpu < 0)
		return carve_errorf(err, CARVE_EPARSE, "entry %d: no gpu", e);
	return 0;
}

int carve_devices_parse(const char *s, struct carve_devref *out, int max, struct carve_error *err)
{
	size_t len = s ? strlen(s) : 0, at = 0;
	int n = 0, rc;

	if (!len)
		return carve_errorf(err, CARVE_EPARSE, "empty");
	while (at <= len) {
		const char *e = memchr(s + at, ';', len - at);
		size_t el = e ? (size_t)(e - (s + at)) : len - at;

		if (!el)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: empty", n + 1);
		if (n == max)
			return carve_errorf(err, CARVE_EFULL, "more than %d entries", max);
		rc = entry(s + at, el, n + 1, &out[n], err);
		if (rc)
			return rc;
		n++;
		at += el + 1;
		if (!e)
			break;
	}
	return n;
}

int carve_devices_format(const struct carve_devref *d, int n, char *buf, size_t size)
{
	size_t len = 0;
	int i, w;

	if (!size)
		return CARVE_ERANGE;
	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		const struct carve_devref *r = &d[i];
		int kinds = (r->mig_profile[0] != '\0') + (r->replica >= 0) + (r->milli > 0);

		if (r->gpu < 0 || r->gpu > 63 || kinds > 1 || r->milli > 1000 ||
		    (r->mig_profile[0] && (r->mig_start < 0 || r->mig_start > 7)) ||
		    r->replica > 1023 || strchr(r->uuid, ';') || strchr(r->uuid, ',') ||
		    strchr(r->mig_profile, ';') || strchr(r->mig_profile, ','))
			return CARVE_EINVAL;
		w = snprintf(buf + len, size - len, "%sgpu=%d", i ? ";" : "", r->gpu);
		if (w < 0 || (size_t)w >= size - len)
			return CARVE_ERANGE;
		len += (size_t)w;
		if (r->uuid[0])
			w = snprintf(buf + len, size - len, ",uuid=%s", r->uuid);
		else
			w = 0;
		if (w < 0 || (size_t)w >= size - len)
			return CARVE_ERANGE;
		len += (size_t)w;
		if (r->mig_profile[0])
			w = snprintf(buf + len, size - len, ",mig=%s@%d", r->mig_profile,
				     r->mig_start);
		else if (r->replica >= 0)
			w = snprintf(buf + len, size - len, ",replica=%d", r->replica);
		else if (r->milli > 0)
			w = snprintf(buf + len, size - len, ",milli=%d", r->milli);
		else
			w = 0;
		if (w < 0 || (size_t)w >= size - len)
			return CARVE_ERANGE;
		len += (size_t)w;
		if (r->mem_mib)
			w = snprintf(buf + len, size - len, ",mem=%u", (unsigned)r->mem_mib);
		else
			w = 0;
		if (w < 0 || (size_t)w >= size - len)
			return CARVE_ERANGE;
		len += (size_t)w;
	}
	return (int)len;
}
