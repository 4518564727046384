/*
 * test_diag.c - the diagnostics list (src/io/diag.c): clearing frees what it
 * kept and keeps the list usable; printing escapes what came from an input
 * (control characters, invalid UTF-8, bidirectional controls) so that a
 * message cannot forge a line or steer a terminal; padded cells count the
 * escaped width.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve/diag.h"

/* What f wrote to a memory stream, for comparisons; the caller frees it. */
static char *printed(void (*f)(const void *, FILE *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	f(arg, out);
	assert_int_equal(fclose(out), 0);
	return buf;
}

static void put_esc(const void *s, FILE *out)
{
	carve_fputs_esc(s, out);
}

static void assert_esc(const char *in, const char *want)
{
	char *got = printed(put_esc, in);

	assert_string_equal(got, want);
	assert_int_equal(carve_esc_len(in), strlen(want));
	free(got);
}

static void escapes_controls_and_invalid_utf8(void **state)
{
	(void)state;
	assert_esc("plain name-1.2", "plain name-1.2");
	assert_esc("w\nINJECTED admitted\x1b[31m", "w\\nINJECTED admitted\\x1B[31m");
	assert_esc("a\tb\rc\x7f\x01", "a\\tb\\rc\\x7F\\x01");
	assert_esc("back\\slash", "back\\slash");
	/* Valid UTF-8 is kept. */
	assert_esc("gr\xc3\xbc\xc3\x9f \xe2\x86\x92 \xf0\x9f\x9a\x80", "gr\xc3\xbc\xc3\x9f \xe2\x86\x92 \xf0\x9f\x9a\x80");
	/* Invalid bytes, one escape each: a lone continuation, a cut sequence,
	 * an overlong form, a surrogate, past U+10FFFF. */
	assert_esc("x\x80y", "x\\x80y");
	assert_esc("\xe2\x86", "\\xE2\\x86");
	assert_esc("\xc0\xaf", "\\xC0\\xAF");
	assert_esc("\xed\xa0\x80", "\\xED\\xA0\\x80");
	assert_esc("\xf4\x90\x80\x80", "\\xF4\\x90\\x80\\x80");
	/* C1 controls (8-bit CSI), bidirectional overrides and U+2028 are
	 * valid UTF-8 but escaped whole. */
	assert_esc("\xc2\x9b" "31m", "\\xC2\\x9B31m");
	assert_esc("a\xe2\x80\xae" "b", "a\\xE2\\x80\\xAEb");
	assert_esc("a\xe2\x81\xa6" "b", "a\\xE2\\x81\\xA6b");
	assert_esc("\xe2\x80\xa8", "\\xE2\\x80\\xA8");
	assert_esc("", "");
}

static void put_pad(const void *s, FILE *out)
{
	carve_fputs_esc_pad(s, 8, out);
	fputc('|', out);
}

static void pad_counts_the_escaped_width(void **state)
{
	char *got;

	(void)state;
	got = printed(put_pad, "a\nb");
	assert_string_equal(got, "a\\nb    |");
	free(got);
	got = printed(put_pad, "longer than 8");
	assert_string_equal(got, "longer than 8|");
	free(got);
}

static void put_diags(const void *d, FILE *out)
{
	carve_diags_print(d, out);
}

static void print_escapes_file_and_message(void **state)
{
	struct carve_diags d;
	struct carve_pos pos = {"evil\nfile.yaml", 3, 7};
	char *got;

	(void)state;
	carve_diags_init(&d);
	carve_diag_error(&d, pos, "Workload '%s' unknown", "w\nINJECTED admitted\x1b[31m");
	carve_diag_warn(&d, (struct carve_pos){0}, "bad byte \xff here");
	got = printed(put_diags, &d);
	assert_string_equal(got,
			    "evil\\nfile.yaml:3:7: error: Workload 'w\\nINJECTED admitted\\x1B[31m' "
			    "unknown\n"
			    "carve: warning: bad byte \\xFF here\n");
	free(got);
	carve_diags_cleanup(&d);
}

static void clear_frees_and_keeps_the_list_usable(void **state)
{
	struct carve_diags d;
	int i;

	(void)state;
	carve_diags_init(&d);
	d.max = 3;
	for (i = 0; i < 5; i++)
		carve_diag_warn(&d, (struct carve_pos){0}, "warning %d", i);
	carve_diag_error(&d, (struct carve_pos){0}, "an error");
	assert_int_equal(d.n, 3);
	assert_int_equal(d.suppressed, 3);
	carve_diags_clear(&d);
	assert_int_equal(d.n, 0);
	assert_int_equal(d.nerrors, 0);
	assert_int_equal(d.nwarnings, 0);
	assert_int_equal(d.suppressed, 0);
	assert_int_equal(d.max, 3);
	carve_diag_error(&d, (struct carve_pos){0}, "later");
	assert_int_equal(d.n, 1);
	assert_int_equal(d.nerrors, 1);
	assert_int_equal(carve_diags_find(&d, "later"), 0);
	carve_diags_cleanup(&d); /* LeakSanitizer: nothing of the cleared ones left */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escapes_controls_and_invalid_utf8),
		cmocka_unit_test(pad_counts_the_escaped_width),
		cmocka_unit_test(print_escapes_file_and_message),
		cmocka_unit_test(clear_frees_and_keeps_the_list_usable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
