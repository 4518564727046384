/*
 * fuzz_report.c - the HTML report (carve/report.h) from a result JSON, as
 * `carve report` reads it (jansson, flags 0), rendered into memory.
 * Property checked: the page has no script, whatever the JSON holds (every
 * string taken from it is escaped), i.e. no "<script" in any case.
 */
#include <ctype.h>
#include <jansson.h>
#include <string.h>

#include "fuzz.h"

#include "carve/report.h"

static bool has_script(const char *html, size_t n)
{
	static const char tag[] = "<script";
	size_t i, k;

	for (i = 0; i + sizeof(tag) - 1 <= n; i++) {
		for (k = 0; k < sizeof(tag) - 1; k++)
			if (tolower((unsigned char)html[i + k]) != tag[k])
				break;
		if (k == sizeof(tag) - 1)
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct carve_error err = {0};
	json_error_t jerr;
	json_t *root = json_loadb((const char *)data, size, 0, &jerr);
	char *html = NULL;
	size_t n = 0;
	FILE *f;

	if (!root)
		return 0;
	f = open_memstream(&html, &n);
	if (!f)
		abort();
	carve_report_html(f, root, size & 1 ? "<script>title</script>" : NULL, &err);
	if (fclose(f))
		abort();
	if (has_script(html, n))
		fuzz_fail("the page has a <script");
	free(html);
	json_decref(root);
	return 0;
}
