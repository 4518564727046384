/*
 * test_devices.c - unit tests of devices.c: the carve.dev/devices
 * annotation.  Every form of the header's examples parses to the right
 * entries and formats back to the same text; every rule has a bad input
 * with its exact message; the formatter refuses what the parser would and
 * reports a short buffer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "carve/devices.h"

/* Parses s, asserts n entries, and that formatting gives s back. */
static void roundtrip(const char *s, int n, struct carve_devref *out)
{
	struct carve_error err = {0, ""};
	char buf[4096];
	int rc = carve_devices_parse(s, out, CARVE_DEVREF_MAX, &err);

	if (rc != n)
		fail_msg("parse '%s': %d (%s), expected %d", s, rc, err.text, n);
	rc = carve_devices_format(out, n, buf, sizeof(buf));
	assert_int_equal(rc, (int)strlen(s));
	assert_string_equal(buf, s);
}

static void bad(const char *s, int code, const char *msg)
{
	struct carve_devref d[CARVE_DEVREF_MAX];
	struct carve_error err = {0, ""};
	int rc = carve_devices_parse(s, d, CARVE_DEVREF_MAX, &err);

	if (rc != code || !strstr(err.text, msg))
		fail_msg("parse '%s': %d '%s'; expected %d containing '%s'", s, rc, err.text, code,
			 msg);
}

static struct carve_devref ref(int gpu)
{
	struct carve_devref d;

	memset(&d, 0, sizeof(d));
	d.gpu = gpu;
	d.mig_start = -1;
	d.replica = -1;
	return d;
}

static void test_forms(void **state)
{
	struct carve_devref d[CARVE_DEVREF_MAX];

	(void)state;
	roundtrip("gpu=0;gpu=1", 2, d);
	assert_int_equal(d[0].gpu, 0);
	assert_int_equal(d[1].gpu, 1);
	assert_int_equal(d[1].mig_start, -1);
	assert_int_equal(d[1].replica, -1);
	assert_int_equal(d[1].milli, 0);
	assert_string_equal(d[1].uuid, "");
	roundtrip("gpu=2,mig=3g.40gb@4", 1, d);
	assert_int_equal(d[0].gpu, 2);
	assert_string_equal(d[0].mig_profile, "3g.40gb");
	assert_int_equal(d[0].mig_start, 4);
	roundtrip("gpu=1,replica=3", 1, d);
	assert_int_equal(d[0].replica, 3);
	roundtrip("gpu=0,milli=500,mem=20480", 1, d);
	assert_int_equal(d[0].milli, 500);
	assert_int_equal(d[0].mem_mib, 20480);
	roundtrip("gpu=63,uuid=GPU-8f6e1c2a-3b4d-4e5f-9a0b-1c2d3e4f5a6b", 1, d);
	assert_int_equal(d[0].gpu, 63);
	assert_string_equal(d[0].uuid, "GPU-8f6e1c2a-3b4d-4e5f-9a0b-1c2d3e4f5a6b");
	roundtrip("gpu=3,uuid=MIG-GPU-8f6e1c2a/7/0,mig=1g.10gb+me@0;gpu=3,mig=1g.10gb@1", 2, d);
	assert_string_equal(d[0].mig_profile, "1g.10gb+me");
	assert_int_equal(d[1].mig_start, 1);
	roundtrip("gpu=0,milli=1000", 1, d);
	roundtrip("gpu=5,replica=1023;gpu=5,replica=0", 2, d);
	roundtrip("gpu=0,mig=7g.80gb@0", 1, d);
	roundtrip("gpu=0,mig=1g.10gb@7", 1, d);
	roundtrip("gpu=0,milli=1,mem=4294967295", 1, d);
}

static void test_full_table(void **state)
{
	struct carve_devref d[CARVE_DEVREF_MAX + 1];
	char s[512];
	size_t len = 0;
	int i;

	(void)state;
	for (i = 0; i < CARVE_DEVREF_MAX; i++)
		len += (size_t)snprintf(s + len, sizeof(s) - len, "%sgpu=%d", i ? ";" : "", i);
	roundtrip(s, CARVE_DEVREF_MAX, d);
	snprintf(s + len, sizeof(s) - len, ";gpu=%d", CARVE_DEVREF_MAX);
	bad(s, CARVE_EFULL, "more than 16 entries");
	/* A smaller table: max is the caller's. */
	assert_int_equal(carve_devices_parse("gpu=0;gpu=1", d, 1, NULL), CARVE_EFULL);
	assert_int_equal(carve_devices_parse("gpu=0", d, 1, NULL), 1);
	assert_int_equal(carve_devices_parse(NULL, d, 1, NULL), CARVE_EINVAL);
	assert_int_equal(carve_devices_parse("gpu=0", NULL, 1, NULL), CARVE_EINVAL);
	assert_int_equal(carve_devices_parse("gpu=0", d, 0, NULL), CARVE_EINVAL);
}

static void test_bad_structure(void **state)
{
	(void)state;
	bad("", CARVE_EPARSE, "empty: at least one entry");
	bad(";", CARVE_EPARSE, "entry 1: empty");
	bad("gpu=0;", CARVE_EPARSE, "entry 2: empty (trailing ';')");
	bad("gpu=0;;gpu=1", CARVE_EPARSE, "entry 2: empty");
	bad("gpu=0,", CARVE_EPARSE, "entry 1: trailing ','");
	bad("gpu=0,,replica=1", CARVE_EPARSE, "entry 1: empty key=value");
	bad("gpu", CARVE_EPARSE, "entry 1: 'gpu' is not key=value");
	bad("gpu=", CARVE_EPARSE, "entry 1: key 'gpu' has an empty value");
	bad("gpu=0;replica=1", CARVE_EPARSE, "entry 2: key 'replica' out of order (gpu first");
	bad("uuid=GPU-1,gpu=0", CARVE_EPARSE, "entry 1: key 'uuid' out of order");
	bad("gpu=0,milli=5,replica=1", CARVE_EPARSE, "entry 1: key 'replica' out of order");
	bad("gpu=0,gpu=1", CARVE_EPARSE, "entry 1: key 'gpu' given twice");
	bad("gpu=0,replica=1,replica=2", CARVE_EPARSE, "key 'replica' given twice");
	bad("gpu=0,core=1", CARVE_EPARSE, "entry 1: unknown key 'core' (keys: gpu, uuid");
	bad("GPU=0", CARVE_EPARSE, "unknown key 'GPU'");
	bad(" gpu=0", CARVE_EPARSE, "unknown key ' gpu'");
	bad("gpu=0 ", CARVE_EPARSE, "key 'gpu': '0 ' is not a GPU index 0..63");
	bad("gpu=0\n", CARVE_EPARSE, "is not a GPU index");
}

static void test_bad_numbers(void **state)
{
	(void)state;
	bad("gpu=64", CARVE_EPARSE, "entry 1: key 'gpu': '64' is not a GPU index 0..63");
	bad("gpu=-1", CARVE_EPARSE, "'-1' is not a GPU index");
	bad("gpu=+1", CARVE_EPARSE, "'+1' is not a GPU index");
	bad("gpu=01", CARVE_EPARSE, "'01' is not a GPU index");
	bad("gpu=1x", CARVE_EPARSE, "'1x' is not a GPU index");
	bad("gpu=99999999999999999999999", CARVE_EPARSE, "is not a GPU index");
	bad("gpu=0,replica=1024", CARVE_EPARSE, "key 'replica': '1024' is not a replica number "
	    "0..1023");
	bad("gpu=0,replica=a", CARVE_EPARSE, "key 'replica'");
	bad("gpu=0,milli=0", CARVE_EPARSE, "key 'milli': '0' is not 1..1000");
	bad("gpu=0,milli=1001", CARVE_EPARSE, "key 'milli': '1001' is not 1..1000");
	bad("gpu=0,milli=0.5", CARVE_EPARSE, "key 'milli'");
	bad("gpu=0,milli=5,mem=0", CARVE_EPARSE, "key 'mem': '0' is not a size in MiB");
	bad("gpu=0,milli=5,mem=4294967296", CARVE_EPARSE, "key 'mem'");
	bad("gpu=0,milli=5,mem=20Gi", CARVE_EPARSE, "key 'mem': '20Gi'");
}

static void test_bad_mig_uuid(void **state)
{
	char s[256];

	(void)state;
	bad("gpu=0,mig=3g.40gb", CARVE_EPARSE, "key 'mig': '3g.40gb' is not <profile>@<start>");
	bad("gpu=0,mig=@1", CARVE_EPARSE, "is not <profile>@<start>");
	bad("gpu=0,mig=3g.40gb@8", CARVE_EPARSE, "key 'mig': start '8' is not a slot 0..7");
	bad("gpu=0,mig=3g.40gb@", CARVE_EPARSE, "start '' is not a slot");
	bad("gpu=0,mig=3g.40gb@1@2", CARVE_EPARSE, "start '1@2'");
	bad("gpu=0,mig=3G.40GB@0", CARVE_EPARSE, "mig profile '3G.40GB' has a character");
	bad("gpu=0,mig=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@0", CARVE_EPARSE,
	    "profile longer than 31 characters");
	bad("gpu=0,uuid=GPU 1", CARVE_EPARSE, "uuid has a character other than");
	bad("gpu=0,uuid=a=b", CARVE_EPARSE, "uuid has a character other than");
	memset(s, 0, sizeof(s));
	strcpy(s, "gpu=0,uuid=");
	memset(s + strlen(s), 'a', 96);
	bad(s, CARVE_EPARSE, "key 'uuid': longer than 95 characters");
}

static void test_bad_combinations(void **state)
{
	(void)state;
	bad("gpu=0,mig=1g.10gb@0,replica=1", CARVE_EPARSE, "entry 1: at most one of mig, replica, milli");
	bad("gpu=0,replica=1,milli=500", CARVE_EPARSE, "at most one of mig, replica, milli");
	bad("gpu=0,mig=1g.10gb@0,milli=500", CARVE_EPARSE, "at most one of");
	bad("gpu=0,mem=1024", CARVE_EPARSE, "entry 1: mem is only for a fraction (milli)");
	bad("gpu=0,replica=1,mem=1024", CARVE_EPARSE, "mem is only for a fraction");
	/* The same device twice. */
	bad("gpu=0;gpu=0", CARVE_EPARSE, "entry 2: GPU 0 is already named by entry 1");
	bad("gpu=1;gpu=0;gpu=1,milli=5", CARVE_EPARSE, "entry 3: GPU 1 is already named by entry 1");
	bad("gpu=0,mig=1g.10gb@2;gpu=0,mig=2g.20gb@2", CARVE_EPARSE, "entry 2: GPU 0 is already");
	bad("gpu=0,replica=2;gpu=0,replica=2", CARVE_EPARSE, "entry 2: GPU 0 is already");
	bad("gpu=0,replica=2;gpu=0,mig=1g.10gb@0", CARVE_EPARSE, "entry 2: GPU 0 is already");
	bad("gpu=0,mig=1g.10gb@0;gpu=0", CARVE_EPARSE, "entry 2: GPU 0 is already");
}

static void test_format(void **state)
{
	struct carve_devref d[3] = {ref(0), ref(1), ref(2)};
	char buf[64];

	(void)state;
	d[1].replica = 2;
	strcpy(d[2].mig_profile, "2g.20gb");
	d[2].mig_start = 4;
	strcpy(d[2].uuid, "MIG-abc");
	assert_int_equal(carve_devices_format(d, 3, buf, sizeof(buf)), 54);
	assert_string_equal(buf, "gpu=0;gpu=1,replica=2;gpu=2,uuid=MIG-abc,mig=2g.20gb@4");
	/* Exactly the room, then one byte short. */
	assert_int_equal(carve_devices_format(d, 3, buf, 55), 54);
	assert_int_equal(carve_devices_format(d, 3, buf, 54), CARVE_ERANGE);
	assert_int_equal(carve_devices_format(d, 1, buf, 5), CARVE_ERANGE);
	assert_int_equal(carve_devices_format(d, 1, buf, 6), 5);
	/* Entries that break the rules. */
	assert_int_equal(carve_devices_format(d, 0, buf, sizeof(buf)), CARVE_EINVAL);
	assert_int_equal(carve_devices_format(d, CARVE_DEVREF_MAX + 1, buf, sizeof(buf)),
			 CARVE_EINVAL);
	assert_int_equal(carve_devices_format(NULL, 1, buf, sizeof(buf)), CARVE_EINVAL);
	d[0].gpu = 64;
	assert_int_equal(carve_devices_format(d, 1, buf, sizeof(buf)), CARVE_EINVAL);
	d[0] = ref(0);
	d[0].milli = 1001;
	assert_int_equal(carve_devices_format(d, 1, buf, sizeof(buf)), CARVE_EINVAL);
	d[0] = ref(0);
	d[0].mem_mib = 5;
	assert_int_equal(carve_devices_format(d, 1, buf, sizeof(buf)), CARVE_EINVAL);
	d[0] = ref(0);
	d[0].replica = 1;
	d[0].milli = 10;
	assert_int_equal(carve_devices_format(d, 1, buf, sizeof(buf)), CARVE_EINVAL);
	d[0] = ref(0);
	d[0].mig_start = 2; /* a start without a profile */
	assert_int_equal(carve_devices_format(d, 1, buf, sizeof(buf)), CARVE_EINVAL);
	d[0] = ref(0);
	strcpy(d[0].mig_profile, "1g.10gb");
	assert_int_equal(carve_devices_format(d, 1, buf, sizeof(buf)), CARVE_EINVAL);
	d[0].mig_start = 0;
	assert_int_equal(carve_devices_format(d, 1, buf, sizeof(buf)), 19);
	strcpy(d[0].uuid, "GPU;1");
	assert_int_equal(carve_devices_format(d, 1, buf, sizeof(buf)), CARVE_EINVAL);
	memset(d[0].uuid, 'a', sizeof(d[0].uuid)); /* no terminator */
	assert_int_equal(carve_devices_format(d, 1, buf, sizeof(buf)), CARVE_EINVAL);
	d[0] = ref(3);
	d[1] = ref(3);
	assert_int_equal(carve_devices_format(d, 2, buf, sizeof(buf)), CARVE_EINVAL);
	d[1].replica = 0;
	d[0].replica = 1;
	assert_int_equal(carve_devices_format(d, 2, buf, sizeof(buf)), 31);
	assert_string_equal(buf, "gpu=3,replica=1;gpu=3,replica=0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forms),
		cmocka_unit_test(test_full_table),
		cmocka_unit_test(test_bad_structure),
		cmocka_unit_test(test_bad_numbers),
		cmocka_unit_test(test_bad_mig_uuid),
		cmocka_unit_test(test_bad_combinations),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
