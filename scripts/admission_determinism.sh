#!/bin/sh
# admission_determinism.sh - `carve admit` output, byte for byte, on every
# example manifest set and every Kueue conformance case, under each option
# that changes how the engine runs (cycles, fair sharing, placement policy,
# Dynamic MIG, table output).
#
#   scripts/admission_determinism.sh CARVE            run twice, must match
#   scripts/admission_determinism.sh CARVE REF_CARVE  must match REF_CARVE
#
# Prints the digest of all the output and exits 0 when identical, 1 with a
# diff of the first difference otherwise.  Used to show that a change to the
# engine (docs/internals/ADMISSION-PERF.md) changes no decision: build the
# old tree as REF_CARVE.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 CARVE [REF_CARVE]" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
conf="${CARVE_CONFORMANCE:-$here/tests/conformance/kueue}"
if [ ! -d "$conf" ]; then
	echo "$0: no conformance cases at $conf" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

inputs() {
	for d in "$here"/examples/*/; do
		echo "$d"
	done
	for f in "$here"/examples/*/*.yaml; do
		echo "$f"
	done
	for f in "$conf"/*.yaml; do
		echo "$f"
	done
}

# run BIN OUT: every input under every option set, into one file.
run() {
	: > "$2"
	inputs | while read -r in; do
		for opts in "" "-o table" "--cycles 1" "--cycles 2" "--cycles 3" \
			"--fair-sharing" "--fair-sharing --cycles 2" "--policy spread" \
			"--policy fgd --seed 7" "--mig dynamic"; do
			echo "=== ${in#"$here"/} $opts" >> "$2"
			# shellcheck disable=SC2086
			"$1" admit $opts "$in" >> "$2" 2>&1 || echo "exit $?" >> "$2"
		done
	done
}

run "$1" "$tmp/a"
if [ $# -eq 2 ]; then
	run "$2" "$tmp/b"
else
	run "$1" "$tmp/b"
fi
if cmp -s "$tmp/a" "$tmp/b"; then
	echo "identical: $(wc -l < "$tmp/a") lines, sha256 $(sha256sum < "$tmp/a" | cut -c1-16)"
	exit 0
fi
echo "DIFFERENT" >&2
diff "$tmp/b" "$tmp/a" | head -40 >&2
exit 1
