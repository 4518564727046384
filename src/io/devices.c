/*
 * devices.c - the `carve.dev/devices` annotation (include/carve/devices.h):
 * a strict parser and the formatter that writes what the parser reads.
 *
 * Invariants: one set of rules (check_entry) judges a parsed entry and an
 * entry about to be written, so carve_devices_format never writes text
 * that carve_devices_parse refuses, and parse(format(d)) == d.  Beyond the
 * header's rules: numbers are plain decimal (no sign, no leading zero, no
 * space); a UUID is 1..95 of [A-Za-z0-9._:/-] (NVIDIA's "GPU-<uuid>" and
 * "MIG-<uuid>" forms, and the older "MIG-GPU-<uuid>/<gi>/<ci>"); a MIG
 * profile is 1..31 of [a-z0-9.+] ("3g.40gb", "1g.10gb+me") with a start
 * slot 0..7 (a GPU has 8 memory slices, docs/mig.md); a replica is
 * 0..CARVE_TIMESLICE_MAX_REPLICAS-1; mem is given only with milli, 1 MiB or
 * more; two entries may not name the same device (the same GPU whole or
 * by fraction twice, or with anything else; the same MIG start or the
 * same replica of one GPU twice).
 */
#include <stdio.h>
#include <string.h>

#include "carve/cluster.h"
#include "carve/devices.h"

#define GPU_MAX 63
#define MIG_START_MAX 7

enum key { K_GPU, K_UUID, K_MIG, K_REPLICA, K_MILLI, K_MEM, K_N };

static const char *const key_names[K_N] = {"gpu", "uuid", "mig", "replica", "milli", "mem"};

static bool uuid_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == ':' || c == '/' || c == '-';
}

static bool profile_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '+';
}

/* A plain decimal in [0, max] from s[0..n); false otherwise. */
static bool number(const char *s, size_t n, long long max, long long *out)
{
	long long x = 0;
	size_t i;

	if (!n || n > 19 || (n > 1 && s[0] == '0'))
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		x = x * 10 + (s[i] - '0');
		if (x > max)
			return false;
	}
	*out = x;
	return true;
}

/* The rules an entry must meet once its keys are read (entry is 1-based). */
static int check_entry(const struct carve_devref *d, int entry, struct carve_error *err)
{
	int kinds = (d->mig_profile[0] != '\0') + (d->replica >= 0) + (d->milli > 0);
	size_t i, n;

	if (d->gpu < 0 || d->gpu > GPU_MAX)
		return carve_errorf(err, CARVE_EPARSE, "entry %d: gpu %d is not in 0..%d", entry,
				    d->gpu, GPU_MAX);
	n = strnlen(d->uuid, sizeof(d->uuid));
	if (n == sizeof(d->uuid))
		return carve_errorf(err, CARVE_EPARSE, "entry %d: uuid is longer than %zu "
				    "characters", entry, sizeof(d->uuid) - 1);
	for (i = 0; i < n; i++)
		if (!uuid_char(d->uuid[i]))
			return carve_errorf(err, CARVE_EPARSE, "entry %d: uuid has a character "
					    "other than letters, digits and ._:/-", entry);
	if (kinds > 1)
		return carve_errorf(err, CARVE_EPARSE, "entry %d: at most one of mig, replica, "
				    "milli", entry);
	if (d->mig_profile[0]) {
		n = strnlen(d->mig_profile, sizeof(d->mig_profile));
		if (n == sizeof(d->mig_profile))
			return carve_errorf(err, CARVE_EPARSE, "entry %d: mig profile is longer "
					    "than %zu characters", entry, sizeof(d->mig_profile) - 1);
		for (i = 0; i < n; i++)
			if (!profile_char(d->mig_profile[i]))
				return carve_errorf(err, CARVE_EPARSE, "entry %d: mig profile "
						    "'%s' has a character other than a-z, 0-9, "
						    "'.', '+'", entry, d->mig_profile);
		if (d->mig_start < 0 || d->mig_start > MIG_START_MAX)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: mig start %d is not in "
					    "0..%d", entry, d->mig_start, MIG_START_MAX);
	} else if (d->mig_start != -1) {
		return carve_errorf(err, CARVE_EPARSE, "entry %d: mig start without a profile",
				    entry);
	}
	if (d->replica < -1 || d->replica >= CARVE_TIMESLICE_MAX_REPLICAS)
		return carve_errorf(err, CARVE_EPARSE, "entry %d: replica %d is not in 0..%d",
				    entry, d->replica, CARVE_TIMESLICE_MAX_REPLICAS - 1);
	if (d->milli < 0 || d->milli > 1000)
		return carve_errorf(err, CARVE_EPARSE, "entry %d: milli %d is not in 1..1000",
				    entry, d->milli);
	if (d->mem_mib && !d->milli)
		return carve_errorf(err, CARVE_EPARSE, "entry %d: mem is only for a fraction "
				    "(milli)", entry);
	return 0;
}

/* Whether entries a and b name the same device (header comment). */
static bool same_device(const struct carve_devref *a, const struct carve_devref *b)
{
	bool a_part = a->mig_profile[0] || a->replica >= 0;
	bool b_part = b->mig_profile[0] || b->replica >= 0;

	if (a->gpu != b->gpu)
		return false;
	if (!a_part || !b_part)
		return true; /* whole or fraction beside anything on that GPU */
	if (a->mig_profile[0] && b->mig_profile[0])
		return a->mig_start == b->mig_start;
	if (a->replica >= 0 && b->replica >= 0)
		return a->replica == b->replica;
	return true; /* a MIG instance and a replica of one GPU */
}

static int check_all(const struct carve_devref *d, int n, struct carve_error *err)
{
	int i, j, rc;

	for (i = 0; i < n; i++) {
		rc = check_entry(&d[i], i + 1, err);
		if (rc)
			return rc;
		for (j = 0; j < i; j++)
			if (same_device(&d[j], &d[i]))
				return carve_errorf(err, CARVE_EPARSE, "entry %d: GPU %d is already "
						    "named by entry %d", i + 1, d[i].gpu, j + 1);
	}
	return 0;
}

/* One key=value of entry `entry` into d; *last is the last key read. */
static int parse_kv(const char *s, size_t len, int entry, int *last, struct carve_devref *d,
		    struct carve_error *err)
{
	const char *eq = memchr(s, '=', len), *v;
	size_t klen, vlen;
	long long x;
	int k;

	if (!eq)
		return carve_errorf(err, CARVE_EPARSE, "entry %d: '%.*s' is not key=value", entry,
				    (int)(len > 40 ? 40 : len), s);
	klen = (size_t)(eq - s);
	v = eq + 1;
	vlen = len - klen - 1;
	for (k = 0; k < K_N; k++)
		if (strlen(key_names[k]) == klen && !memcmp(key_names[k], s, klen))
			break;
	if (k == K_N)
		return carve_errorf(err, CARVE_EPARSE, "entry %d: unknown key '%.*s' (keys: gpu, "
				    "uuid, mig, replica, milli, mem)", entry,
				    (int)(klen > 40 ? 40 : klen), s);
	if (*last == k)
		return carve_errorf(err, CARVE_EPARSE, "entry %d: key '%s' given twice", entry,
				    key_names[k]);
	if (*last > k || (*last == -1 && k != K_GPU))
		return carve_errorf(err, CARVE_EPARSE, "entry %d: key '%s' out of order (gpu "
				    "first, then uuid, mig, replica, milli, mem)", entry,
				    key_names[k]);
	*last = k;
	if (!vlen)
		return carve_errorf(err, CARVE_EPARSE, "entry %d: key '%s' has an empty value",
				    entry, key_names[k]);
	switch (k) {
	case K_GPU:
		if (!number(v, vlen, GPU_MAX, &x))
			return carve_errorf(err, CARVE_EPARSE, "entry %d: key 'gpu': '%.*s' is not "
					    "a GPU index 0..%d", entry, (int)(vlen > 20 ? 20 : vlen),
					    v, GPU_MAX);
		d->gpu = (int)x;
		break;
	case K_UUID:
		if (vlen >= sizeof(d->uuid))
			return carve_errorf(err, CARVE_EPARSE, "entry %d: key 'uuid': longer than "
					    "%zu characters", entry, sizeof(d->uuid) - 1);
		memcpy(d->uuid, v, vlen);
		d->uuid[vlen] = '\0';
		break;
	case K_MIG: {
		const char *at = memchr(v, '@', vlen);
		size_t plen = at ? (size_t)(at - v) : vlen;

		if (!at || !plen)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: key 'mig': '%.*s' is not "
					    "<profile>@<start>", entry, (int)(vlen > 40 ? 40 : vlen),
					    v);
		if (plen >= sizeof(d->mig_profile))
			return carve_errorf(err, CARVE_EPARSE, "entry %d: key 'mig': profile longer "
					    "than %zu characters", entry, sizeof(d->mig_profile) - 1);
		if (!number(at + 1, vlen - plen - 1, MIG_START_MAX, &x))
			return carve_errorf(err, CARVE_EPARSE, "entry %d: key 'mig': start '%.*s' "
					    "is not a slot 0..%d", entry,
					    (int)(vlen - plen - 1 > 20 ? 20 : vlen - plen - 1), at + 1,
					    MIG_START_MAX);
		memcpy(d->mig_profile, v, plen);
		d->mig_profile[plen] = '\0';
		d->mig_start = (int)x;
		break;
	}
	case K_REPLICA:
		if (!number(v, vlen, CARVE_TIMESLICE_MAX_REPLICAS - 1, &x))
			return carve_errorf(err, CARVE_EPARSE, "entry %d: key 'replica': '%.*s' is "
					    "not a replica number 0..%d", entry,
					    (int)(vlen > 20 ? 20 : vlen), v,
					    CARVE_TIMESLICE_MAX_REPLICAS - 1);
		d->replica = (int)x;
		break;
	case K_MILLI:
		if (!number(v, vlen, 1000, &x) || x < 1)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: key 'milli': '%.*s' is not "
					    "1..1000", entry, (int)(vlen > 20 ? 20 : vlen), v);
		d->milli = (int)x;
		break;
	default: /* K_MEM */
		if (!number(v, vlen, UINT32_MAX, &x) || x < 1)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: key 'mem': '%.*s' is not "
					    "a size in MiB 1..%u", entry, (int)(vlen > 20 ? 20 : vlen),
					    v, UINT32_MAX);
		d->mem_mib = (uint32_t)x;
		break;
	}
	return 0;
}

int carve_devices_parse(const char *s, struct carve_devref *out, int max,
			struct carve_error *err)
{
	int n = 0, rc;

	if (!s || !out || max < 1)
		return carve_errorf(err, CARVE_EINVAL, "no text or no room");
	if (!*s)
		return carve_errorf(err, CARVE_EPARSE, "empty: at least one entry (gpu=<index>)");
	for (;;) {
		const char *end = strchr(s, ';'), *p;
		struct carve_devref d;
		int last = -1;

		if (!end)
			end = s + strlen(s);
		if (end == s)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: empty", n + 1);
		if (n == max)
			return carve_errorf(err, CARVE_EFULL, "more than %d entries", max);
		memset(&d, 0, sizeof(d));
		d.mig_start = -1;
		d.replica = -1;
		for (p = s; p < end;) {
			const char *comma = memchr(p, ',', (size_t)(end - p));
			const char *kend = comma ? comma : end;

			if (kend == p)
				return carve_errorf(err, CARVE_EPARSE, "entry %d: empty key=value",
						    n + 1);
			rc = parse_kv(p, (size_t)(kend - p), n + 1, &last, &d, err);
			if (rc)
				return rc;
			p = comma ? comma + 1 : end;
			if (comma && p == end)
				return carve_errorf(err, CARVE_EPARSE, "entry %d: trailing ','",
						    n + 1);
		}
		out[n++] = d;
		if (!*end)
			break;
		s = end + 1;
		if (!*s)
			return carve_errorf(err, CARVE_EPARSE, "entry %d: empty (trailing ';')",
					    n + 1);
	}
	rc = check_all(out, n, err);
	return rc ? rc : n;
}

int carve_devices_format(const struct carve_devref *d, int n, char *buf, size_t size)
{
	size_t len = 0;
	int i, w;

	if (!d || !buf || n < 1 || n > CARVE_DEVREF_MAX || check_all(d, n, NULL))
		return CARVE_EINVAL;
	if (size)
		buf[0] = '\0';
	for (i = 0; i < n; i++) {
		char one[256];

		w = snprintf(one, sizeof(one), "%sgpu=%d", i ? ";" : "", d[i].gpu);
		if (d[i].uuid[0])
			w += snprintf(one + w, sizeof(one) - (size_t)w, ",uuid=%s", d[i].uuid);
		if (d[i].mig_profile[0])
			w += snprintf(one + w, sizeof(one) - (size_t)w, ",mig=%s@%d",
				      d[i].mig_profile, d[i].mig_start);
		if (d[i].replica >= 0)
			w += snprintf(one + w, sizeof(one) - (size_t)w, ",replica=%d", d[i].replica);
		if (d[i].milli > 0)
			w += snprintf(one + w, sizeof(one) - (size_t)w, ",milli=%d", d[i].milli);
		if (d[i].mem_mib)
			w += snprintf(one + w, sizeof(one) - (size_t)w, ",mem=%u",
				      (unsigned)d[i].mem_mib);
		if (len + (size_t)w >= size)
			return CARVE_ERANGE;
		memcpy(buf + len, one, (size_t)w + 1);
		len += (size_t)w;
	}
	return (int)len;
}
