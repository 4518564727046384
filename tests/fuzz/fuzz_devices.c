/*
 * fuzz_devices.c - the carve.dev/devices annotation (carve/devices.h),
 * and the MIG layout annotations (carve/miglayout.h) on the same input.
 * Properties checked: a parse succeeds with 1..CARVE_DEVREF_MAX entries or
 * fails with CARVE_EPARSE/CARVE_EFULL and a message; every entry parsed
 * holds the header's ranges; formatting what was parsed succeeds and gives
 * the input back byte for byte (the text form is canonical: one order of
 * keys, plain decimals), and a buffer one byte short gives CARVE_ERANGE.
 */
#include <string.h>

#include "fuzz.h"

#include "carve/devices.h"
#include "carve/miglayout.h"

/* The MIG layout text: parses to 0..64 GPU entries in range or fails with
 * a message; format(parse(s)) == s; one byte short is CARVE_ERANGE. */
static void check_miglayout(const char *s)
{
	static struct carve_gpu_mig l[CARVE_MIGLAYOUT_MAX_GPUS];
	struct carve_error err = {0, ""};
	char out[CARVE_MIGLAYOUT_MAX_GPUS * 8 * 40];
	int n = carve_miglayout_parse(s, l, CARVE_MIGLAYOUT_MAX_GPUS, &err), w, i;

	if (n < 0) {
		if ((n != CARVE_EPARSE && n != CARVE_EFULL) || !err.text[0])
			fuzz_fail("miglayout parse failed with %d and message '%s'", n, err.text);
		return;
	}
	for (i = 0; i < n; i++)
		if (l[i].gpu < 0 || l[i].gpu >= CARVE_MIGLAYOUT_MAX_GPUS || l[i].n < 0 ||
		    l[i].n > CARVE_MIG_MAX_INST)
			fuzz_fail("miglayout entry %d out of range", i);
	w = carve_miglayout_format(l, n, out, sizeof(out));
	if (w < 0 || (size_t)w != strlen(s) || strcmp(out, s))
		fuzz_fail("miglayout format(parse(s)) != s: %d '%s'", w, w < 0 ? "" : out);
	if (w > 0 && carve_miglayout_format(l, n, out, (size_t)w) != CARVE_ERANGE)
		fuzz_fail("miglayout: a buffer one byte short was not CARVE_ERANGE");
}

static void check_ref(const struct carve_devref *r)
{
	int kinds = (r->mig_profile[0] != '\0') + (r->replica >= 0) + (r->milli > 0);

	if (r->gpu < 0 || r->gpu > 63 || kinds > 1 || r->milli < 0 || r->milli > 1000 ||
	    (r->mig_profile[0] ? r->mig_start < 0 || r->mig_start > 7 : r->mig_start != -1) ||
	    r->replica < -1 || (r->mem_mib && !r->milli) ||
	    !memchr(r->uuid, '\0', sizeof(r->uuid)) ||
	    !memchr(r->mig_profile, '\0', sizeof(r->mig_profile)))
		fuzz_fail("entry out of the header's ranges (gpu %d)", r->gpu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct carve_devref refs[CARVE_DEVREF_MAX];
	struct carve_error err = {0, ""};
	char *s, out[4096];
	int n, w, i;

	if (size > 2048)
		return 0;
	s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	check_miglayout(s);
	n = carve_devices_parse(s, refs, CARVE_DEVREF_MAX, &err);
	if (n < 0) {
		if ((n != CARVE_EPARSE && n != CARVE_EFULL) || !err.text[0])
			fuzz_fail("parse failed with %d and message '%s'", n, err.text);
		free(s);
		return 0;
	}
	if (n < 1 || n > CARVE_DEVREF_MAX)
		fuzz_fail("parse returned %d entries", n);
	for (i = 0; i < n; i++)
		check_ref(&refs[i]);
	w = carve_devices_format(refs, n, out, sizeof(out));
	if (w < 0)
		fuzz_fail("format of a parsed annotation failed: %d", w);
	if ((size_t)w != strlen(s) || strcmp(out, s))
		fuzz_fail("format(parse(s)) != s: '%s'", out);
	if (carve_devices_format(refs, n, out, (size_t)w) != CARVE_ERANGE)
		fuzz_fail("a buffer one byte short was not CARVE_ERANGE");
	free(s);
	return 0;
}
