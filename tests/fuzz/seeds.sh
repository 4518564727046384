#!/bin/sh
# seeds.sh SRC OUT - fills OUT/<target>/ with the seed inputs of each fuzz
# target: the small files kept in tests/fuzz/corpus/<target>/ plus the
# examples and test data of the tree, and the first lines of the openb
# files (data/openb is megabytes; a head is what the readers need).
# Files larger than 64 KiB (the targets' -max_len) are left out.  OUT is
# emptied first; the build runs this (target fuzz_seeds).
set -eu
src=$1
out=$2
rm -rf "$out"
mkdir -p "$out"

# put TARGET FILE...: copies each regular file under a name unique in TARGET.
put() {
	t=$1
	shift
	mkdir -p "$out/$t"
	for f in "$@"; do
		[ -f "$f" ] || continue
		[ "$(wc -c <"$f")" -le 65536 ] || continue
		cp "$f" "$out/$t/$(printf '%s' "${f#"$src"/}" | tr '/' '_')"
	done
}
# head TARGET LINES FILE...: the first LINES lines of each file.
head_of() {
	t=$1
	n=$2
	shift 2
	mkdir -p "$out/$t"
	for f in "$@"; do
		[ -f "$f" ] || continue
		head -n "$n" "$f" >"$out/$t/head$n-$(basename "$f")"
	done
}

for t in manifest_yaml bridge_equiv; do
	put "$t" "$src"/tests/fuzz/corpus/manifest_yaml/* "$src"/examples/*/*.yaml \
		"$src"/tests/data/validate/*.yaml "$src"/tests/conformance/kueue/*.yaml
done
# a few whole Nodes of the openb cluster as v1 YAML
head_of manifest_yaml 200 "$src"/data/openb/openb_node_list_gpu_node.yaml
put node_csv "$src"/tests/fuzz/corpus/node_csv/*
head_of node_csv 40 "$src"/data/openb/openb_node_list_all_node.csv \
	"$src"/data/openb/openb_node_list_gpu_node.csv
put openb_pod "$src"/tests/fuzz/corpus/openb_pod/*
head_of openb_pod 40 "$src"/data/openb/openb_pod_list_default.csv \
	"$src"/data/openb/openb_pod_list_gpushare20.csv "$src"/data/openb/openb_pod_list_cpu050.csv
put trace_csv "$src"/tests/fuzz/corpus/trace_csv/*
head_of trace_csv 40 "$src"/examples/seed-scenario/week.trace.csv
put trace_yaml "$src"/tests/fuzz/corpus/trace_yaml/*
put report "$src"/tests/fuzz/corpus/report/* "$src"/tests/data/report/*.json
put devices "$src"/tests/fuzz/corpus/devices/*
put review "$src"/tests/fuzz/corpus/review/*
