/*
 * fuzz.h - what the libFuzzer targets of tests/fuzz share: the entry
 * point's prototype, a sink for output nobody reads, and the one way a
 * target reports a broken property (a message, then abort(), which
 * libFuzzer records as a crash with the input that caused it).
 *
 * Every target takes the fuzzer's bytes as one file's text, exactly as a
 * reader's _buf entry point gets it: not NUL-terminated, so ASan sees any
 * read past the length.  Header-only, one target a file (docs/fuzzing.md).
 */
#ifndef CARVE_FUZZ_H
#define CARVE_FUZZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* /dev/null, opened once: printers run in full but write nowhere. */
static inline FILE *fuzz_sink(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	if (!f)
		abort();
	return f;
}

/*
 * True when CARVE_FUZZ_STRICT is set in the environment: the guards that
 * step around known findings (docs/fuzzing.md) are off, so the reproducers
 * of tests/fuzz/crashes fail again.
 */
static inline int fuzz_strict(void)
{
	static int strict = -1;

	if (strict < 0)
		strict = getenv("CARVE_FUZZ_STRICT") != NULL;
	return strict;
}

/*
 * True when the bytes are text: UTF-8 (shortest form) of characters YAML
 * calls printable (tab, LF, CR, U+0020-U+007E, U+0085, U+00A0-U+D7FF,
 * U+E000-U+FFFD, U+10000-U+10FFFF), so any of them can be written to a
 * YAML file and read back.  The CSV readers keep any byte of a field (known
 * finding F3, docs/fuzzing.md), so properties that hold for text only are
 * checked on text only; drop the guard with the fix.  Under
 * fuzz_strict() every input is text.
 */
static inline int fuzz_is_text(const uint8_t *p, size_t n)
{
	size_t i = 0, k, more;
	uint32_t c, min;

	if (fuzz_strict())
		return 1;
	while (i < n) {
		c = p[i++];
		if (c < 0x80)
			more = 0, min = 0;
		else if (c >= 0xc0 && c <= 0xdf)
			more = 1, min = 0x80, c &= 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			more = 2, min = 0x800, c &= 0x0f;
		else if (c >= 0xf0 && c <= 0xf7)
			more = 3, min = 0x10000, c &= 0x07;
		else
			return 0;
		if (n - i < more)
			return 0;
		for (k = 0; k < more; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			c = c << 6 | (p[i + k] & 0x3f);
		}
		i += more;
		if (c < min || !(c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0x7e) ||
				 c == 0x85 || (c >= 0xa0 && c <= 0xd7ff) ||
				 (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff)))
			return 0;
	}
	return 1;
}

/* A property the reader promises does not hold for this input. */
static inline void fuzz_fail(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2), noreturn))
#endif
	;
static inline void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fuzz: property broken: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

#endif
