/*
 * fuzz_trace_yaml.c - carve's trace format as YAML (docs/trace-format.md):
 * carve_jobs_load_yaml_buf, then the checks of fuzz_trace.h (the jobs'
 * invariants, the CSV and YAML writers' round trip).
 */
#include "fuzz_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return ft_fuzz_one(data, size, true);
}
