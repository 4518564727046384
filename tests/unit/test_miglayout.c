/*
 * test_miglayout.c - unit tests of miglayout.c: the MIG layout
 * annotations' text.  The header's examples parse and format back to the
 * same text; every rule has a bad input with its message; the formatter
 * refuses what the parser would and reports a short buffer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "carve/miglayout.h"

static void roundtrip(const char *s, int n, struct carve_gpu_mig *out)
{
	struct carve_error err = {0, ""};
	char buf[4096];
	int rc = carve_miglayout_parse(s, out, CARVE_MIGLAYOUT_MAX_GPUS, &err);

	if (rc != n)
		fail_msg("parse '%s': %d (%s), expected %d", s, rc, err.text, n);
	rc = carve_miglayout_format(out, n, buf, sizeof(buf));
	assert_int_equal(rc, (int)strlen(s));
	assert_string_equal(buf, s);
}

static void bad(const char *s, int code, const char *msg)
{
	struct carve_gpu_mig l[4];
	struct carve_error err = {0, ""};
	int rc = carve_miglayout_parse(s, l, 4, &err);

	if (rc != code || !strstr(err.text, msg))
		fail_msg("parse '%s': %d '%s'; expected %d containing '%s'", s, rc, err.text, code,
			 msg);
}

static void test_good(void **state)
{
	struct carve_gpu_mig l[CARVE_MIGLAYOUT_MAX_GPUS];

	(void)state;
	roundtrip("0=3g.40gb@0,3g.40gb@4;1=1g.10gb@0,1g.10gb@1;2=", 3, l);
	assert_int_equal(l[0].gpu, 0);
	assert_int_equal(l[0].n, 2);
	assert_string_equal(l[0].v[1].profile, "3g.40gb");
	assert_int_equal(l[0].v[1].start, 4);
	assert_int_equal(l[2].gpu, 2);
	assert_int_equal(l[2].n, 0);
	roundtrip("", 0, l);
	roundtrip("7=1g.10gb+me@6", 1, l);
	assert_string_equal(l[0].v[0].profile, "1g.10gb+me");
	roundtrip("63=1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,1g.10gb@4,1g.10gb@5,1g.10gb@6", 1, l);
	assert_int_equal(l[0].n, 7);
}

static void test_bad(void **state)
{
	(void)state;
	bad("x=1g.10gb@0", CARVE_EPARSE, "GPU entry 1: expected a GPU index");
	bad("64=", CARVE_EPARSE, "GPU index 0..63");
	bad("01=", CARVE_EPARSE, "GPU entry 1: expected a GPU index");
	bad("0", CARVE_EPARSE, "expected '=' after GPU index 0");
	bad("0=3g.40gb", CARVE_EPARSE, "expected '@<start>'");
	bad("0=3g.40gb@", CARVE_EPARSE, "expected a start slice");
	bad("0=3g.40gb@32", CARVE_EPARSE, "expected a start slice");
	bad("0=3G.40gb@0", CARVE_EPARSE, "instance 1 (3): expected '@<start>'");
	bad("0=@0", CARVE_EPARSE, "expected a MIG profile");
	bad("0=3g.40gb@0,", CARVE_EPARSE, "nothing after ','");
	bad("0=3g.40gb@0;", CARVE_EPARSE, "GPU entry 2: nothing after ';'");
	bad("0=3g.40gb@0;0=", CARVE_EPARSE, "GPU entry 2: GPU 0 is given twice");
	bad("0=3g.40gb@0 ", CARVE_EPARSE, "unexpected ' '");
	bad("0=a@0,a@1,a@2,a@3,a@4,a@5,a@6,a@7,a@8", CARVE_EFULL, "more than 8");
	bad("0=;1=;2=;3=;4=", CARVE_EFULL, "more than 4 GPU entries");
	bad("0=abcdefghijabcdefghijabcdefghij12@0", CARVE_EPARSE, "at most 31 bytes");
}

static void test_format(void **state)
{
	struct carve_gpu_mig l[2];
	char buf[16];

	(void)state;
	memset(l, 0, sizeof(l));
	l[0].gpu = 0;
	l[0].n = 1;
	strcpy(l[0].v[0].profile, "3g.40gb");
	l[0].v[0].start = 4;
	assert_int_equal(carve_miglayout_format(l, 1, buf, sizeof(buf)), 11);
	assert_string_equal(buf, "0=3g.40gb@4");
	assert_int_equal(carve_miglayout_format(l, 1, buf, 8), CARVE_ERANGE);
	l[1] = l[0];
	assert_int_equal(carve_miglayout_format(l, 2, buf, sizeof(buf)), CARVE_EINVAL);
	l[1].gpu = 1;
	strcpy(l[1].v[0].profile, "3g 40gb");
	assert_int_equal(carve_miglayout_format(l, 2, buf, sizeof(buf)), CARVE_EINVAL);
	l[0].v[0].start = 32;
	assert_int_equal(carve_miglayout_format(l, 1, buf, sizeof(buf)), CARVE_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
