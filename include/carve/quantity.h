/*
 * quantity.h - Kubernetes resource quantities ("100m", "1.5", "10Gi", "1e3").
 *
 * A quantity is held as an int64 count of milli-units: "1" is 1000, "100m" is
 * 100, "1Ki" is 1024000.  Parsing follows Kubernetes's resource.Quantity
 * grammar (k8s.io/apimachinery/pkg/api/resource):
 *
 *   <quantity>  ::= <signedNumber><suffix>
 *   <suffix>    ::= <binarySI> | <decimalExponent> | <decimalSI>
 *   <binarySI>  ::= Ki | Mi | Gi | Ti | Pi | Ei
 *   <decimalSI> ::= n | u | m | "" | k | M | G | T | P | E
 *   <decimalExponent> ::= "e" <signedInt> | "E" <signedInt>
 *   <signedNumber> ::= [+-]? ( <digits> | <digits> "." <digits>? | "." <digits> )
 *
 * so "5.", ".5", "1.5E-2" and "500000n" are accepted; "E" alone is exa, "E3"
 * an exponent.  Case matters ("1gi", "1K" are unknown suffixes), and nothing
 * may follow the suffix.  Digit strings of any length and exponents of any
 * size are evaluated exactly (no floating point).
 *
 * Rounding: the result is the mathematical ceiling of the value in
 * milli-units, so "0.1m" is 1 milli, as with Kubernetes's MilliValue().  For
 * negative values this rounds toward zero ("-0.1m" is 0, "-1.9m" is -1),
 * whereas Kubernetes rounds the magnitude up ("-0.1m" is -1 there); requests
 * and capacities cannot be negative, so the difference rarely matters.  The whole int64 range is accepted ("-9223372036854775808m"
 * included); values whose ceiling does not fit are rejected, not clamped.
 */
#ifndef CARVE_QUANTITY_H
#define CARVE_QUANTITY_H

#include "carve/carve.h"

/* Largest value representable, in milli-units (INT64_MAX). */
#define CARVE_QTY_MAX INT64_MAX

/*
 * Parses s (NUL-terminated, no surrounding spaces) into *milli.
 * Returns 0, or CARVE_EPARSE for malformed text, CARVE_ERANGE when the value
 * does not fit in int64 milli-units, CARVE_EINVAL when s or milli is NULL.
 * On error *milli is untouched and, when why is not NULL, *why points at a
 * static, human-readable reason: "empty quantity", "contains whitespace",
 * "expected a number", "more than one decimal point", "unknown suffix",
 * "malformed exponent", "value overflows int64 milli-units", "null argument".
 */
int carve_qty_parse(const char *s, int64_t *milli, const char **why);

/*
 * Writes the canonical text of a milli quantity into buf (NUL-terminated,
 * truncated to size): whole values print without suffix ("4"), others with
 * "m" ("1500m").  Returns the number of characters the full text needs
 * (snprintf semantics).
 */
int carve_qty_format(int64_t milli, char *buf, size_t size);

/*
 * Same as carve_qty_format but for byte counts: picks the largest binary
 * suffix that divides the value exactly ("80Gi", "1536Mi", "100").  A value
 * that is not a whole number of units falls back to carve_qty_format.
 * Both formats parse back to the same milli value.
 */
int carve_qty_format_bytes(int64_t milli, char *buf, size_t size);

/* Whole units, rounded up (ceiling): carve_qty_value(1500) == 2,
 * carve_qty_value(-1500) == -1. */
int64_t carve_qty_value(int64_t milli);

/*
 * Saturating arithmetic for sums and products of quantities, the one home
 * of it in carve: the exact a + b (a * b) when it fits in int64; otherwise
 * INT64_MAX when the true result is above the range and INT64_MIN when
 * below (a * b by sign: INT64_MIN * -1 is INT64_MAX).  Never fails, no
 * undefined behaviour for any operands; commutative.
 */
static inline int64_t carve_qty_sat_add(int64_t a, int64_t b)
{
	/* inline: the admission engine's quota sums call it in its hottest loops */
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

static inline int64_t carve_qty_sat_mul(int64_t a, int64_t b)
{
	int64_t r;

	if (!__builtin_mul_overflow(a, b, &r))
		return r;
	return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

#endif
