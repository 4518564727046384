/*
 * quantity.c - parse and format Kubernetes resource quantities as int64
 * milli-units.
 *
 * Invariants: parsing never overflows a C integer (every step is checked
 * against the int64 bound, digit strings of any length are fine); the result
 * is the exact mathematical ceiling of the written value in milli-units, or
 * CARVE_ERANGE when that ceiling does not fit in int64.  The parser is a
 * two-pass affair: a syntax pass that only records where the digits, point
 * and suffix are, then an exact evaluation over those digits (no floating
 * point, no 128-bit integers).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "carve/quantity.h"

/* Digits kept after the scaled decimal point; must be >= the largest binary
 * exponent (60) for the floor of frac * 2^b to be exact (see qty_eval). */
#define QTY_FRAC_DIGITS 64

/* Exponents saturate here; anything this large over- or underflows anyway,
 * and the bound keeps the position arithmetic far from int64 limits. */
#define QTY_EXP_LIMIT ((int64_t)1 << 40)

static const char WHY_EMPTY[] = "empty quantity";
static const char WHY_SPACE[] = "contains whitespace";
static const char WHY_NUMBER[] = "expected a number";
static const char WHY_POINTS[] = "more than one decimal point";
static const char WHY_SUFFIX[] = "unknown suffix";
static const char WHY_EXP[] = "malformed exponent";
static const char WHY_RANGE[] = "value overflows int64 milli-units";

/* What the syntax pass found. */
struct qty_text {
	bool neg;
	const char *ip;    /* integer digits */
	size_t ilen;
	const char *fp;    /* fraction digits (after '.') */
	size_t flen;
	int64_t exp10;     /* decimal exponent of the suffix, saturated */
	unsigned int exp2; /* binary exponent of the suffix: 0, 10, ..., 60 */
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	       c == '\r';
}

static size_t span_digits(const char *s)
{
	size_t n = 0;

	while (is_digit(s[n]))
		n++;
	return n;
}

/* "[+-]?[0-9]+" with nothing after it, saturated to +-QTY_EXP_LIMIT. */
static bool parse_exponent(const char *s, int64_t *out)
{
	bool neg = false;
	int64_t e = 0;
	size_t n;

	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	n = span_digits(s);
	if (n == 0 || s[n] != '\0')
		return false;
	for (; n; n--, s++)
		if (e < QTY_EXP_LIMIT)
			e = e * 10 + (*s - '0');
	if (e > QTY_EXP_LIMIT)
		e = QTY_EXP_LIMIT;
	*out = neg ? -e : e;
	return true;
}

static const struct {
	const char *name;
	int exp10;
	unsigned int exp2;
} qty_suffixes[] = {
	{"", 0, 0},
	{"n", -9, 0}, {"u", -6, 0}, {"m", -3, 0},
	{"k", 3, 0}, {"M", 6, 0}, {"G", 9, 0},
	{"T", 12, 0}, {"P", 15, 0}, {"E", 18, 0},
	{"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30},
	{"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
};

/* Syntax pass: fills t or returns the static reason for rejecting s. */
static const char *qty_scan(const char *s, struct qty_text *t)
{
	const char *p;
	size_t i;

	if (*s == '\0')
		return WHY_EMPTY;
	for (p = s; *p; p++)
		if (is_space(*p))
			return WHY_SPACE;

	memset(t, 0, sizeof(*t));
	p = s;
	if (*p == '+' || *p == '-')
		t->neg = *p++ == '-';
	t->ip = p;
	t->ilen = span_digits(p);
	p += t->ilen;
	t->fp = p;
	if (*p == '.') {
		t->fp = ++p;
		t->flen = span_digits(p);
		p += t->flen;
	}
	if (t->ilen == 0 && t->flen == 0)
		return WHY_NUMBER;
	if (*p == '.')
		return WHY_POINTS;

	for (i = 0; i < sizeof(qty_suffixes) / sizeof(qty_suffixes[0]); i++) {
		if (strcmp(p, qty_suffixes[i].name) == 0) {
			t->exp10 = qty_suffixes[i].exp10;
			t->exp2 = qty_suffixes[i].exp2;
			return NULL;
		}
	}
	/* Not a plain suffix: "e<int>" / "E<int>" ("E" and "Ei" matched above). */
	if ((p[0] == 'e' || p[0] == 'E') &&
	    (p[1] == '\0' || p[1] == '+' || p[1] == '-' || is_digit(p[1])))
		return parse_exponent(p + 1, &t->exp10) ? NULL : WHY_EXP;
	return WHY_SUFFIX;
}

/* k-th digit of the integer digits followed by the fraction digits. */
static int qty_digit(const struct qty_text *t, int64_t k)
{
	size_t u = (size_t)k;

	return u < t->ilen ? t->ip[u] - '0' : t->fp[u - t->ilen] - '0';
}

/*
 * Evaluation pass.  Let S be all the digits (integer then fraction) without
 * leading zeros and scaled so that the point sits after `point` digits of S
 * (milli-units: 3 more than the written position, plus the decimal exponent).
 * Then value = (H + F) * 2^exp2 with H the integer part and F in [0, 1).
 *
 * The floor of F * 2^exp2 only needs the first QTY_FRAC_DIGITS digits of F:
 * any multiple of 2^-exp2 has at most exp2 <= 60 fraction digits, so
 * truncating F to 64 digits cannot step below one of them.  We double that
 * 64-digit decimal fraction exp2 times, shifting carries into the integer.
 * The value is exact iff the doubled fraction and the ignored tail are zero.
 *
 * On success *floor_mag holds floor(|value|) (<= bound) and *inexact whether
 * |value| has a fractional part.  Returns false when floor(|value|) > bound.
 */
static bool qty_eval(const struct qty_text *t, uint64_t bound,
		     uint64_t *floor_mag, bool *inexact)
{
	unsigned char frac[QTY_FRAC_DIGITS];
	int64_t ndig = (int64_t)(t->ilen + t->flen);
	int64_t lz = 0, point, k;
	uint64_t m = 0;
	unsigned int i;
	int j;

	while (lz < ndig && qty_digit(t, lz) == 0)
		lz++;
	*inexact = false;
	if (lz == ndig) { /* zero, whatever the exponent */
		*floor_mag = 0;
		return true;
	}
	/*
	 * Digit positions are relative to the first significant digit.
	 * |ilen|, |exp10| < 2^41, so none of this can overflow int64.
	 */
	ndig -= lz;
	point = (int64_t)t->ilen - lz + t->exp10 + 3;

	/* The leading digit is non-zero: 20+ integer digits are >= 10^19. */
	if (point > 19)
		return false;
	for (k = 0; k < point; k++) {
		int d = k < ndig ? qty_digit(t, lz + k) : 0;

		if (m > (bound - (uint64_t)d) / 10)
			return false;
		m = m * 10 + (uint64_t)d;
	}

	for (j = 0; j < QTY_FRAC_DIGITS; j++) {
		k = point + j;
		frac[j] = (unsigned char)(k >= 0 && k < ndig ?
					  qty_digit(t, lz + k) : 0);
	}
	/* Digits past the ones kept: the value is inexact if any is non-zero. */
	for (k = point + QTY_FRAC_DIGITS > 0 ? point + QTY_FRAC_DIGITS : 0;
	     k < ndig && !*inexact; k++)
		*inexact = qty_digit(t, lz + k) != 0;

	for (i = 0; i < t->exp2; i++) {
		int carry = 0;

		for (j = QTY_FRAC_DIGITS - 1; j >= 0; j--) {
			int d = frac[j] * 2 + carry;

			frac[j] = (unsigned char)(d % 10);
			carry = d / 10;
		}
		if (m > (bound - (uint64_t)carry) / 2)
			return false;
		m = m * 2 + (uint64_t)carry;
	}
	for (j = 0; j < QTY_FRAC_DIGITS && !*inexact; j++)
		*inexact = frac[j] != 0;

	*floor_mag = m;
	return true;
}

int carve_qty_parse(const char *s, int64_t *milli, const char **why)
{
	struct qty_text t;
	const char *reason;
	uint64_t bound, mag;
	bool inexact;

	if (!s || !milli) {
		if (why)
			*why = "null argument";
		return CARVE_EINVAL;
	}
	reason = qty_scan(s, &t);
	if (reason) {
		if (why)
			*why = reason;
		return CARVE_EPARSE;
	}

	/* ceil(-x) == -floor(x), so a negative may reach |INT64_MIN|. */
	bound = t.neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	if (!qty_eval(&t, bound, &mag, &inexact) ||
	    (!t.neg && inexact && mag == bound)) {
		if (why)
			*why = WHY_RANGE;
		return CARVE_ERANGE;
	}

	if (!t.neg)
		*milli = (int64_t)(mag + inexact);
	else if (mag == (uint64_t)INT64_MAX + 1)
		*milli = INT64_MIN;
	else
		*milli = -(int64_t)mag;
	return 0;
}

int carve_qty_format(int64_t milli, char *buf, size_t size)
{
	if (milli % 1000 == 0)
		return snprintf(buf, size, "%" PRId64, milli / 1000);
	return snprintf(buf, size, "%" PRId64 "m", milli);
}

int carve_qty_format_bytes(int64_t milli, char *buf, size_t size)
{
	static const char *const sfx[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	int64_t units;
	int i;

	if (milli % 1000 != 0)
		return carve_qty_format(milli, buf, size);
	units = milli / 1000;
	for (i = 5; i >= 0 && units != 0; i--) {
		int64_t div = (int64_t)1 << (10 * (i + 1));

		if (units % div == 0)
			return snprintf(buf, size, "%" PRId64 "%s", units / div,
					sfx[i]);
	}
	return snprintf(buf, size, "%" PRId64, units);
}

int64_t carve_qty_value(int64_t milli)
{
	/* C division truncates toward zero, which is already the ceiling for
	 * negative values; positive remainders need one more. */
	return milli / 1000 + (milli % 1000 > 0);
}
