#!/bin/sh
# Regenerates the libFuzzer dictionaries in tests/fuzz/dict/ from the
# sources: the YAML keys of every field table (ld_field) the loaders use,
# the kinds and apiVersions of manifest.c, the resource and label names the
# io and bridge code spell out, the MIG profiles, plus YAML syntax.  Run
# from anywhere; commit the result (docs/fuzzing.md).
set -eu
cd "$(dirname "$0")/../.."
out=tests/fuzz/dict

# "word" per line, sorted, one dictionary entry each.
# Backslash and quote escaped as libFuzzer reads them.
quote() { sort -u | sed -e '/^$/d' -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/.*/"&"/'; }
keys() { grep -ohE '^[[:space:]]*\{"[A-Za-z][A-Za-z0-9._/-]*",' "$@" | sed -E 's/^[[:space:]]*\{"([^"]*)".*/\1/'; }
names() {
	grep -rohE '"(nvidia\.com|carve\.dev|kueue\.x-k8s\.io|scheduling\.[a-z.]+|kai\.scheduler|batch)/[A-Za-z0-9._-]*"' \
		src/io src/bridge src/core | tr -d '"'
	grep -ohE '"[0-9]g\.[0-9]+gb[^"]*"' src/core/mig_profiles.c | tr -d '"' |
		sed 's,^,nvidia.com/mig-,'
	grep -ohE '^[[:space:]]*\{"[A-Z][A-Za-z-]*[0-9][A-Za-z0-9 -]*",' src/core/gpumodel.c |
		sed -E 's/^[[:space:]]*\{"([^"]*)".*/\1/'
}
yaml_syntax() {
	printf '%s\n' '---' '- ' ': ' '{}' '[]' '&a' '*a' '<<: *a' '!!str' '!!int' '|' '>-' \
		'null' 'true' 'false' '~' '1e3' '100m' '10Gi' '64Mi' '0.5' '-1' \
		'9223372036854775807' 'v1' 'Exists' 'Equal' 'In' 'NotIn' 'DoesNotExist' 'Gt' 'Lt' \
		'NoSchedule' 'NoExecute' 'PreferNoSchedule' 'Never' 'LowerPriority' 'Any' \
		'TryNextFlavor' 'Borrow' 'Preempt' 'mixed' 'single' 'all-disabled' 'all-1g.10gb'
}

{ keys src/io/load_*.c src/io/manifest.c; names; yaml_syntax; } | quote >"$out/manifest_yaml.dict"
{ keys src/io/jobs_load.c; names; yaml_syntax; echo Trace; } | quote >"$out/trace_yaml.dict"
{
	printf '%s\n' name arrival duration namespace queue priority count min_count cpu memory gpu \
		gpu_resource gpu_fraction gpu_memory gpu_models node_selector demand checkpoint class \
		1h 2h30m 1d12h 45m 90 true false yes no 500m 64Gi ',' ';' '=' '|' '#'
	names
} | quote >"$out/trace_csv.dict"
echo '"\xEF\xBB\xBF"' >>"$out/trace_csv.dict" # the UTF-8 BOM the CSV readers skip
{
	printf '%s\n' name cpu_milli memory_mib num_gpu gpu_milli gpu_spec qos pod_phase \
		creation_time deletion_time scheduled_time LS BE Burstable Guaranteed Running Pending \
		Succeeded Failed ',' '|' sn model gpu 1000 -1
	grep -ohE '^[[:space:]]*\{"[A-Z][A-Za-z-]*[0-9][A-Za-z0-9 -]*",' src/core/gpumodel.c |
		sed -E 's/^[[:space:]]*\{"([^"]*)".*/\1/'
} | quote >"$out/openb_pod.dict"
{
	printf '%s\n' mode policy seed null true false '{}' '[]' '":' ',' 1e308 -1e308 0.5 -0 '\u0000' '<' '&' '>'
	grep -ohE '"[a-z_][a-z_0-9]*"' src/sim/report.c | tr -d '"'
} | quote >"$out/report.dict"
echo "mkdict: $(wc -l "$out"/*.dict | tail -1)"
