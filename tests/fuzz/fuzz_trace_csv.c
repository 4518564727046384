/*
 * fuzz_trace_csv.c - carve's trace format as CSV (docs/trace-format.md):
 * carve_jobs_load_csv_buf, then the checks of fuzz_trace.h (the jobs'
 * invariants, the CSV and YAML writers' round trip).
 */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct carve_jobs *js = carve_jobs_create();
	struct carve_diags d;
	size_t skipped = 0;

	if (!js)
		return 0;
	carve_diags_init(&d);
	if (!carve_jobs_load_csv_buf(js, "fuzz.trace.csv", (const char *)data, size,
				     &d, &skipped))
		ft_check(js, &d, fuzz_is_text(data, size));
	carve_diags_cleanup(&d);
	carve_jobs_destroy(js);
	return 0;
}
