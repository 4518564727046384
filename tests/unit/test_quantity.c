/*
 * test_quantity.c - unit tests of carve_qty_*: Kubernetes's documented
 * examples, every suffix, ceiling rounding, int64 bounds, malformed input and
 * format round trips.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/quantity.h"

#define SENTINEL ((int64_t)0x5a5a5a5a5a5a5a5a)

struct ok_case {
	const char *in;
	int64_t milli;
};

struct err_case {
	const char *in;
	const char *why; /* expected reason, or NULL for "any" */
};

static int64_t parse_ok(const char *s)
{
	int64_t v = SENTINEL;
	const char *why = NULL;
	int rc = carve_qty_parse(s, &v, &why);

	if (rc != 0)
		fail_msg("\"%s\": rc %d (%s)", s, rc, why ? why : "?");
	return v;
}

static void check_ok_table(const struct ok_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int64_t got = parse_ok(c[i].in);

		if (got != c[i].milli)
			fail_msg("\"%s\": got %lld, want %lld", c[i].in,
				 (long long)got, (long long)c[i].milli);
	}
}

static void check_err_table(const struct err_case *c, size_t n, int code)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int64_t v = SENTINEL;
		const char *why = NULL;
		int rc = carve_qty_parse(c[i].in, &v, &why);

		if (rc != code)
			fail_msg("\"%s\": rc %d, want %d", c[i].in, rc, code);
		if (!why || !*why)
			fail_msg("\"%s\": no reason", c[i].in);
		if (c[i].why && strcmp(why, c[i].why) != 0)
			fail_msg("\"%s\": reason \"%s\", want \"%s\"", c[i].in,
				 why, c[i].why);
		if (v != SENTINEL)
			fail_msg("\"%s\": output written on error", c[i].in);
		/* why == NULL must be accepted too. */
		assert_int_equal(carve_qty_parse(c[i].in, &v, NULL), code);
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define KI ((int64_t)1024)
#define MI (KI * KI)
#define GI (MI * KI)
#define TI (GI * KI)
#define PI_ (TI * KI)

/* "Resource Management for Pods and Containers": these all mean about the
 * same memory; and 0.1 cpu is 100m. */
static void test_k8s_docs_memory(void **state)
{
	static const struct ok_case c[] = {
		{"128974848", 128974848000LL},
		{"129e6", 129000000000LL},
		{"129M", 129000000000LL},
		{"128974848000m", 128974848000LL},
		{"123Mi", 123 * MI * 1000},
	};

	(void)state;
	check_ok_table(c, N(c));
	/* 123Mi is exactly 128974848 bytes. */
	assert_int_equal(parse_ok("123Mi"), parse_ok("128974848"));
	assert_int_equal(parse_ok("129e6"), parse_ok("129M"));
	assert_int_equal(parse_ok("0.1"), parse_ok("100m"));
	assert_int_equal(parse_ok("0.1"), 100);
	assert_int_equal(parse_ok("0.5"), 500);
	assert_int_equal(parse_ok("1"), 1000);
}

/* resource.Quantity godoc: "1.5" serialises as "1500m", "1.5Gi" as "1536Mi". */
static void test_k8s_godoc_serialisation(void **state)
{
	char buf[64];

	(void)state;
	carve_qty_format(parse_ok("1.5"), buf, sizeof(buf));
	assert_string_equal(buf, "1500m");
	carve_qty_format_bytes(parse_ok("1.5Gi"), buf, sizeof(buf));
	assert_string_equal(buf, "1536Mi");
}

static void test_suffixes(void **state)
{
	static const struct ok_case c[] = {
		{"1", 1000},
		{"100m", 100},
		{"1m", 1},
		{"1k", 1000000},
		{"5k", 5000000},
		{"1M", 1000000000LL},
		{"1G", 1000000000000LL},
		{"1T", 1000000000000000LL},
		{"1P", 1000000000000000000LL},
		{"9P", 9000000000000000000LL},
		{"1Ki", KI * 1000},
		{"2Mi", 2 * MI * 1000},
		{"10Gi", 10 * GI * 1000},
		{"1Ti", TI * 1000},
		{"1Pi", PI_ * 1000},
		{"8Pi", 8 * PI_ * 1000},
		{"0Ei", 0},
		{"0E", 0},
		/* nano and micro: Kubernetes accepts them (metrics use "n"). */
		{"1000000n", 1},
		{"1000u", 1},
		{"1500u", 2},
		{"1n", 1},
		{"1u", 1},
	};

	(void)state;
	check_ok_table(c, N(c));
}

static void test_numbers_and_exponents(void **state)
{
	static const struct ok_case c[] = {
		{"0", 0},
		{"-0", 0},
		{"+0", 0},
		{"000", 0},
		{"0.0", 0},
		{"1.5", 1500},
		{"+1", 1000},
		{"-1", -1000},
		{"-1.5", -1500},
		{"5.", 5000},
		{".5", 500},
		{"+.5", 500},
		{"-.5", -500},
		{"5.k", 5000000},
		{".5Ki", 512000},
		{"0.125Ki", 128000},
		{"1e3", 1000000},
		{"1E3", 1000000},
		{"1e+3", 1000000},
		{"1e0", 1000},
		{"1e-3", 1},
		{"1.5E-2", 15},
		{"1.5e2", 150000},
		{"12.5e-1", 1250},
		{"-2e2", -200000},
		{"00000000000000000000000000000000001", 1000},
		{"1.000000000000000000000000000000000000", 1000},
		{"1000000000000000000000000000000e-30", 1000},
		{"0.000000000000000000000000000001e30", 1000},
		{"0e999999999999999999999999", 0},
		{"0.000e-999999999999999999999", 0},
	};

	(void)state;
	check_ok_table(c, N(c));
}

/* Sub-milli precision rounds to the mathematical ceiling. */
static void test_rounding(void **state)
{
	static const struct ok_case c[] = {
		{"0.1m", 1},
		{"0.0001m", 1},
		{"1.0001", 1001},
		{"1.5m", 2},
		{"2.0000m", 2},
		{"1.9999m", 2},
		{"1e-300", 1},
		{"1e-999999999999999999999", 1},
		{"0.0000000000000000000000000000001", 1},
		{"1.000000000000000000000000000000000000000000000000000000000000000000000000000001",
		 1001},
		/* ceiling of a negative value moves toward zero */
		{"-0.1m", 0},
		{"-1.9m", -1},
		{"-1.0001", -1000},
		{"-1e-300", 0},
		/* binary suffixes with fractions: exact where exact */
		{"0.0009765625Ki", 1000},       /* 2^-10 Ki = 1 */
		{"0.0000009765625Ki", 1},       /* 1 milli, exactly */
		{"0.00000097656250001Ki", 2},   /* a hair over 1 milli */
		{"0.00000097656249999Ki", 1},   /* a hair under */
		{"0.0001Ki", 103},              /* 102.4 */
		{"0.001Ki", 1024},
		{"0.3Mi", 314572800},           /* 314572.8 units, exact milli */
	};

	(void)state;
	check_ok_table(c, N(c));
}

/* 0.1Ei = 2^60 / 10 units = 115292150460684697.6 units: overflows milli. */
static void test_fraction_of_exa(void **state)
{
	int64_t v = SENTINEL;

	(void)state;
	assert_int_equal(carve_qty_parse("0.1Ei", &v, NULL), CARVE_ERANGE);
	/* 2^-60 Ei = 1 unit; 2^-70 Ei = 2^-10 units -> ceil 1 milli. */
	assert_int_equal(parse_ok("0.000000000000000000867361737988403547205962240695953369140625Ei"),
			 1000);
	assert_int_equal(parse_ok("0.000000000000000000000847032947254300339068322500679641962051391601562500Ei"),
			 1);
	/* 2^-70 Ei plus a trailing 1 far beyond 64 fraction digits */
	assert_int_equal(parse_ok("0.00000000000000000000084703294725430033906832250067964196205139160156250000000000000000000000000000000000000000001Ei"),
			 1);
	/* 1000 * 2^-70 Ei = 1000 * 2^-10 units: not a whole milli, ceil 977 */
	assert_int_equal(parse_ok("0.000000000000000000847032947254300339068322500679641962051391601562500Ei"),
			 977);
}

static void test_int64_bounds(void **state)
{
	static const struct ok_case c[] = {
		{"9223372036854775807m", INT64_MAX},
		{"9223372036854775.807", INT64_MAX},
		{"9223372036854775806.5m", INT64_MAX},
		{"9.223372036854775807e15", INT64_MAX},
		{"-9223372036854775807m", -INT64_MAX},
		{"-9223372036854775808m", INT64_MIN},
		{"-9223372036854775.808", INT64_MIN},
		{"-9223372036854775808.9m", INT64_MIN}, /* ceil */
		{"0000000000000000000000009223372036854775807m", INT64_MAX},
	};

	(void)state;
	check_ok_table(c, N(c));
}

static void test_overflow(void **state)
{
	static const char *const why = "value overflows int64 milli-units";
	static const struct err_case c[] = {
		{"1Ei", why},   /* 2^60 * 1000 > 2^63 */
		{"8Ei", why},
		{"-1Ei", why},
		{"1E", why},    /* 10^21 milli */
		{"10P", why},
		{"9Pi", why},
		{"9223372036854775808m", why},
		{"9223372036854775807.1m", why}, /* ceil is INT64_MAX + 1 */
		{"9223372036854775.8071", why},
		{"-9223372036854775809m", why},
		{"-9223372036854775809.5m", why},
		{"10000000000000000000000000000000000000000", why},
		{"1e300", why},
		{"1e16", why},
		{"1e999999999999999999999999", why},
		{"-1e999999999999999999999999", why},
		{"123456789012345678901234567890m", why},
		{"0.1Ei", why},
		{"18446744073709551616m", why},  /* 2^64: no wrap-around */
		{"18446744073709551617m", why},
	};

	(void)state;
	check_err_table(c, N(c), CARVE_ERANGE);
}

static void test_malformed(void **state)
{
	static const struct err_case c[] = {
		{"", "empty quantity"},
		{" 1", "contains whitespace"},
		{"1 ", "contains whitespace"},
		{"1 Gi", "contains whitespace"},
		{"\t1", "contains whitespace"},
		{"1\n", "contains whitespace"},
		{"1.2.3", "more than one decimal point"},
		{"1..2", "more than one decimal point"},
		{"1.5.", "more than one decimal point"},
		{"Ki", "expected a number"},
		{"--1", "expected a number"},
		{"+-1", "expected a number"},
		{"-+1", "expected a number"},
		{"-", "expected a number"},
		{"+", "expected a number"},
		{".", "expected a number"},
		{"-.", "expected a number"},
		{".Ki", "expected a number"},
		{"abc", "expected a number"},
		{"e3", "expected a number"},
		{"1KiB", "unknown suffix"},
		{"1gi", "unknown suffix"},
		{"1K", "unknown suffix"},
		{"1x", "unknown suffix"},
		{"1Gx", "unknown suffix"},
		{"1mm", "unknown suffix"},
		{"1m1", "unknown suffix"},
		{"1i", "unknown suffix"},
		{"1Mi3", "unknown suffix"},
		{"1Eix", "unknown suffix"},
		{"1ex", "unknown suffix"},
		{"0x10", "unknown suffix"},
		{"1,000", "unknown suffix"},
		{"1_000", "unknown suffix"},
		{"1e", "malformed exponent"},
		{"1E+", "malformed exponent"},
		{"1e-", "malformed exponent"},
		{"1e3.5", "malformed exponent"},
		{"1e3Ki", "malformed exponent"},
		{"1e+-3", "malformed exponent"},
		{"1e--3", "malformed exponent"},
		{"1.e", "malformed exponent"},
		{"1e3 ", "contains whitespace"},
		{"1\xc2\xa0", "unknown suffix"}, /* UTF-8 no-break space */
		{"\xef\xbc\x91", "expected a number"}, /* fullwidth digit one */
	};

	(void)state;
	check_err_table(c, N(c), CARVE_EPARSE);
}

static void test_null_arguments(void **state)
{
	int64_t v = SENTINEL;
	const char *why = NULL;

	(void)state;
	assert_int_equal(carve_qty_parse(NULL, &v, &why), CARVE_EINVAL);
	assert_non_null(why);
	assert_int_equal(v, SENTINEL);
	assert_int_equal(carve_qty_parse("1", NULL, NULL), CARVE_EINVAL);
}

/* A digit string far longer than any fixed buffer. */
static void test_long_digit_strings(void **state)
{
	size_t n = 100000;
	char *s = malloc(n + 8);
	int64_t v = SENTINEL;

	(void)state;
	assert_non_null(s);

	/* 0.000...001: rounds up to 1 milli */
	memset(s, '0', n);
	s[1] = '.';
	s[n - 1] = '1';
	s[n] = '\0';
	assert_int_equal(parse_ok(s), 1);

	/* 1.000...000 with n zeros: exact */
	s[0] = '1';
	s[n - 1] = '0';
	assert_int_equal(parse_ok(s), 1000);

	/* 100...000 (n digits): overflows */
	s[1] = '0';
	assert_int_equal(carve_qty_parse(s, &v, NULL), CARVE_ERANGE);
	assert_int_equal(v, SENTINEL);

	/* 1000...000e-(n-1) == 1 */
	snprintf(s + n, 8, "e-%zu", n - 1);
	assert_int_equal(parse_ok(s), 1000);
	free(s);
}

static void test_format(void **state)
{
	static const struct {
		int64_t milli;
		const char *text;
	} c[] = {
		{0, "0"},
		{4000, "4"},
		{1500, "1500m"},
		{1, "1m"},
		{-1500, "-1500m"},
		{-2000, "-2"},
		{999, "999m"},
		{INT64_MAX, "9223372036854775807m"},
		{INT64_MIN, "-9223372036854775808m"},
		{9223372036854775000LL, "9223372036854775"},
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < N(c); i++) {
		int n = carve_qty_format(c[i].milli, buf, sizeof(buf));

		assert_string_equal(buf, c[i].text);
		assert_int_equal(n, (int)strlen(c[i].text));
	}
	/* snprintf semantics: truncation and size 0 */
	assert_int_equal(carve_qty_format(1500, buf, 3), 5);
	assert_string_equal(buf, "15");
	assert_int_equal(carve_qty_format(1500, NULL, 0), 5);
}

static void test_format_bytes(void **state)
{
	static const struct {
		int64_t milli;
		const char *text;
	} c[] = {
		{0, "0"},
		{100000, "100"},
		{1024000, "1Ki"},
		{1536000, "1536"},
		{2048000, "2Ki"},
		{1536 * MI * 1000, "1536Mi"},
		{80 * GI * 1000, "80Gi"},
		{-GI * 1000, "-1Gi"},
		{3 * TI * 1000, "3Ti"},
		{8 * PI_ * 1000, "8Pi"},
		{(PI_ + 1) * 1000, "1125899906842625"},
		{1500, "1500m"},      /* not whole: plain format */
		{-1, "-1m"},
		{INT64_MAX, "9223372036854775807m"},
		{INT64_MIN, "-9223372036854775808m"},
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < N(c); i++) {
		int n = carve_qty_format_bytes(c[i].milli, buf, sizeof(buf));

		assert_string_equal(buf, c[i].text);
		assert_int_equal(n, (int)strlen(c[i].text));
	}
	assert_int_equal(carve_qty_format_bytes(80 * GI * 1000, NULL, 0), 4);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	/* xorshift64 */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void round_trip(int64_t milli)
{
	char buf[64];
	int64_t back;

	carve_qty_format(milli, buf, sizeof(buf));
	back = parse_ok(buf);
	if (back != milli)
		fail_msg("format %lld -> \"%s\" -> %lld", (long long)milli, buf,
			 (long long)back);
	carve_qty_format_bytes(milli, buf, sizeof(buf));
	back = parse_ok(buf);
	if (back != milli)
		fail_msg("format_bytes %lld -> \"%s\" -> %lld",
			 (long long)milli, buf, (long long)back);
}

static void test_round_trip(void **state)
{
	static const int64_t fixed[] = {
		0, 1, -1, 999, 1000, 1001, 1500, -1500, 1024000, 1023000,
		80 * GI * 1000, 8 * PI_ * 1000, INT64_MAX, INT64_MIN,
		INT64_MAX - 999, INT64_MIN + 808,
	};
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < N(fixed); i++)
		round_trip(fixed[i]);
	for (k = 0; k < 20000; k++) {
		int64_t v = (int64_t)rng();

		round_trip(v);
		round_trip(v / 1000 * 1000);             /* whole units */
		round_trip((v >> 20) / 1024 * 1024000);  /* Ki multiples */
		/* small multiples of 2^(20..50) units: Mi, Gi, Ti, Pi */
		round_trip((v % 8) * ((int64_t)1000 << (20 + k % 31)));
	}
	/* and text -> value -> text for canonical strings */
	{
		static const char *const canon[] = {
			"0", "1", "100m", "1500m", "-2", "9223372036854775807m",
		};
		char buf[64];

		for (i = 0; i < N(canon); i++) {
			carve_qty_format(parse_ok(canon[i]), buf, sizeof(buf));
			assert_string_equal(buf, canon[i]);
		}
	}
}

static void test_value(void **state)
{
	(void)state;
	assert_int_equal(carve_qty_value(0), 0);
	assert_int_equal(carve_qty_value(1), 1);
	assert_int_equal(carve_qty_value(999), 1);
	assert_int_equal(carve_qty_value(1000), 1);
	assert_int_equal(carve_qty_value(1500), 2);
	assert_int_equal(carve_qty_value(-1), 0);
	assert_int_equal(carve_qty_value(-1000), -1);
	assert_int_equal(carve_qty_value(-1500), -1);
	assert_int_equal(carve_qty_value(INT64_MAX), 9223372036854776LL);
	assert_int_equal(carve_qty_value(INT64_MIN), -9223372036854775LL);
	assert_int_equal(carve_qty_value(parse_ok("123Mi")), 128974848);
	assert_int_equal(carve_qty_value(parse_ok("100m")), 1);
}

static void test_saturating(void **state)
{
	(void)state;
	assert_int_equal(carve_qty_sat_add(1, 2), 3);
	assert_int_equal(carve_qty_sat_add(INT64_MAX, 1), INT64_MAX);
	assert_int_equal(carve_qty_sat_add(INT64_MIN, -1), INT64_MIN);
	assert_int_equal(carve_qty_sat_add(INT64_MAX, INT64_MIN), -1);
	assert_int_equal(carve_qty_sat_mul(3, -4), -12);
	assert_int_equal(carve_qty_sat_mul(2147483647, 9000000000000000000LL), INT64_MAX);
	assert_int_equal(carve_qty_sat_mul(-2, INT64_MAX), INT64_MIN);
	assert_int_equal(carve_qty_sat_mul(INT64_MIN, -1), INT64_MAX);
	assert_int_equal(carve_qty_sat_mul(0, INT64_MIN), 0);
}

/* The edges of the saturating helpers: zero, the int64 bounds, signs. */
static void test_saturating_edges(void **state)
{
	static const struct {
		int64_t a, b, sum, prod;
	} cases[] = {
		{0, 0, 0, 0},
		{INT64_MAX, 0, INT64_MAX, 0},
		{INT64_MIN, 0, INT64_MIN, 0},
		{INT64_MAX, 1, INT64_MAX, INT64_MAX},
		{INT64_MAX - 1, 1, INT64_MAX, INT64_MAX - 1},
		{INT64_MAX, -1, INT64_MAX - 1, -INT64_MAX},
		{INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX},
		{INT64_MIN, INT64_MIN, INT64_MIN, INT64_MAX},
		{INT64_MIN, 1, INT64_MIN + 1, INT64_MIN},
		{INT64_MIN, -1, INT64_MIN, INT64_MAX},
		{INT64_MIN, INT64_MAX, -1, INT64_MIN},
		{INT64_MAX, 2, INT64_MAX, INT64_MAX},
		{INT64_MIN, 2, INT64_MIN + 2, INT64_MIN},
		{-INT64_MAX, -2, INT64_MIN, INT64_MAX},
		{-5, 3, -2, -15},
		{-3, -4, -7, 12},
		{3037000499LL, 3037000499LL, 6074000998LL, 9223372030926249001LL},
		{3037000500LL, 3037000500LL, 6074001000LL, INT64_MAX},
		{-3037000500LL, 3037000500LL, 0, INT64_MIN},
		{-3037000500LL, -3037000500LL, -6074001000LL, INT64_MAX},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t a = cases[i].a, b = cases[i].b;

		if (carve_qty_sat_add(a, b) != cases[i].sum || carve_qty_sat_add(b, a) != cases[i].sum)
			fail_msg("case %zu: sat_add(%" PRId64 ", %" PRId64 ") = %" PRId64 ", want %" PRId64,
				 i, a, b, carve_qty_sat_add(a, b), cases[i].sum);
		if (carve_qty_sat_mul(a, b) != cases[i].prod ||
		    carve_qty_sat_mul(b, a) != cases[i].prod)
			fail_msg("case %zu: sat_mul(%" PRId64 ", %" PRId64 ") = %" PRId64 ", want %" PRId64,
				 i, a, b, carve_qty_sat_mul(a, b), cases[i].prod);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_k8s_docs_memory),
		cmocka_unit_test(test_k8s_godoc_serialisation),
		cmocka_unit_test(test_suffixes),
		cmocka_unit_test(test_numbers_and_exponents),
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_fraction_of_exa),
		cmocka_unit_test(test_int64_bounds),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_null_arguments),
		cmocka_unit_test(test_long_digit_strings),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_format_bytes),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_saturating),
		cmocka_unit_test(test_saturating_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
