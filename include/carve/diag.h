/*
 * diag.h - diagnostics: errors and warnings tied to a position in an input
 * file, printed gcc-style ("file:line:col: error: message").
 *
 * A carve_diags list owns copies of its messages.  Adding never fails the
 * caller: on allocation failure the list counts the lost diagnostic in
 * `dropped` (and still counts an error as an error), so nothing a user must
 * see is silently lost.  A list may keep at most `max` diagnostics (0: no
 * limit): later ones are only counted in `suppressed`, so a file that
 * repeats one mistake through YAML aliases cannot flood the output, and
 * nerrors/nwarnings stay exact.  Sorting is stable by (file, line, col) and
 * O(n log n).
 */
#ifndef CARVE_DIAG_H
#define CARVE_DIAG_H

#include <stdio.h>

#include "carve/carve.h"

enum carve_severity { CARVE_SEV_NOTE, CARVE_SEV_WARNING, CARVE_SEV_ERROR };

struct carve_diag {
	enum carve_severity sev;
	struct carve_pos pos; /* file borrowed from the loader's name pool */
	char *msg;            /* owned by the list */
	const char *rule;     /* stable rule id (static string), or NULL */
};

struct carve_diags {
	size_t n, cap;
	struct carve_diag *v;
	size_t nerrors, nwarnings;
	size_t dropped;    /* diagnostics lost to allocation failure */
	size_t max;        /* most diagnostics kept; 0 = no limit */
	size_t suppressed; /* diagnostics counted but not kept (over max) */
};

/* The limit a manifest set puts on its list (carve_manifests_create). */
#define CARVE_DIAGS_MAX 1000

void carve_diags_init(struct carve_diags *d);
void carve_diags_cleanup(struct carve_diags *d);

/* Frees every diagnostic kept and zeroes the counters (errors, warnings,
 * dropped, suppressed); the list stays usable with its limit (`max`) and
 * its storage, for diagnostics that come later. */
void carve_diags_clear(struct carve_diags *d);

/* Appends one diagnostic (printf-style message, no trailing newline). */
void carve_diag(struct carve_diags *d, enum carve_severity sev,
		struct carve_pos pos, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;
void carve_diag_error(struct carve_diags *d, struct carve_pos pos, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;
void carve_diag_warn(struct carve_diags *d, struct carve_pos pos, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* Gives every diagnostic from index `from` on that has no rule id yet
 * the id rule (a static string, e.g. "flavor-ref"; docs/webhook.md lists
 * them).  Those that were not kept are not tagged. */
void carve_diags_tag(struct carve_diags *d, size_t from, const char *rule);

/* The rule id of x, or "other" when it has none. */
const char *carve_diag_rule(const struct carve_diag *x);

/* Stable sort by file name, then line, then column. */
void carve_diags_sort(struct carve_diags *d);

/* Prints every diagnostic as "file:line:col: severity: message\n"; a
 * diagnostic without a position prints "carve: severity: message".  Then,
 * when some were not kept, one line "carve: note: N further diagnostics not
 * shown".  File names and messages are printed through carve_fputs_esc, so
 * nothing read from an input can start a line or steer the terminal. */
void carve_diags_print(const struct carve_diags *d, FILE *out);

/*
 * Text from an input, made safe to print on a terminal: valid UTF-8 is
 * copied, except control characters (C0, DEL, the C1 range U+0080-U+009F),
 * the bidirectional controls (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)
 * and the line and paragraph separators (U+2028, U+2029); those, and every
 * byte that is not part of valid UTF-8, are written as escapes: "\n", "\t",
 * "\r", else "\xHH" per byte.  A backslash is copied as it is.
 *
 * carve_fputs_esc writes s to out; carve_esc_len is the number of bytes it
 * writes; carve_fputs_esc_pad writes s, then spaces up to width bytes (a
 * left-aligned table cell, "%-*s" over the escaped text).
 */
void carve_fputs_esc(const char *s, FILE *out);
size_t carve_esc_len(const char *s);
void carve_fputs_esc_pad(const char *s, int width, FILE *out);

/* Index of the first diagnostic whose message contains needle, or -1
 * (tests and tools use this). */
long carve_diags_find(const struct carve_diags *d, const char *needle);

#endif
