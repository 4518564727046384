#!/usr/bin/env bash
# run.sh [-t SECONDS] [-j N] BUILD [TARGET...] - runs the fuzz targets built
# in BUILD (cmake -DCARVE_FUZZ=ON ...; cmake --build BUILD --target fuzz) for
# SECONDS each (default 20), N at a time (default 1); no TARGET: all of them.
#
# Each target fuzzes BUILD/fuzz/corpus/<target> (kept between runs; new
# inputs land there) seeded from BUILD/fuzz/seeds/<target>, with its
# dictionary from tests/fuzz/dict.  Crashes, leaks, timeouts and OOMs land
# in BUILD/fuzz/crashes/<target>/, the log in BUILD/fuzz/logs/<target>.log.
# A finding listed in tests/fuzz/known.txt (a reader bug reported, not yet
# fixed) is noted and the target resumes for the time left; any other one
# fails the run.  Prints one line per target: executions, coverage, result.
# Exit status: 0 no new finding, 1 a new finding, 2 usage.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
secs=20
jobs=1
while getopts t:j: o; do
	case $o in
	t) secs=$OPTARG ;;
	j) jobs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
	echo "usage: run.sh [-t SECONDS] [-j N] BUILD [TARGET...]" >&2
	exit 2
fi
dir=$(cd "$1" && pwd)/fuzz
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=(manifest_yaml node_csv openb_pod trace_csv trace_yaml report bridge_equiv devices)
fi

# Per target: the dictionary, and options.  Every input is at most 64 KiB
# (what a manifest or trace file of a few hundred objects takes); an input
# running 10 s or past 2 GiB is a finding (a timeout or an OOM), not noise.
dict_of() {
	case $1 in
	bridge_equiv) echo manifest_yaml ;;
	node_csv) echo openb_pod ;;
	*) echo "$1" ;;
	esac
}
opts=(-max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)

# known TARGET LOG: true when LOG's finding is listed in known.txt.
known() {
	local t=$1 log=$2 kt pat
	while IFS=$'\t' read -r kt pat _; do
		case $kt in '' | '#'*) continue ;; esac
		[ "$kt" = "$t" ] || continue
		grep -qF -- "$pat" "$log" && return 0
	done <"$here/known.txt"
	return 1
}

# one TARGET: fuzzes it for secs, resuming after known findings; writes
# the summary line to logs/TARGET.sum and fails on a new finding.
one() {
	local t=$1 bin=$dir/fuzz_$1 log=$dir/logs/$1.log
	local start now left rc execs=0 n knowns=0 cov unit
	if [ ! -x "$bin" ]; then
		echo "fuzz_$t: not built (cmake --build BUILD --target fuzz)" >"$dir/logs/$t.sum"
		return 1
	fi
	mkdir -p "$dir/corpus/$t" "$dir/crashes/$t" "$dir/seeds/$t"
	: >"$log"
	start=$(date +%s)
	left=$secs
	while [ "$left" -gt 0 ]; do
		"$bin" "${opts[@]}" -max_total_time="$left" \
			-dict="$here/dict/$(dict_of "$t").dict" \
			-artifact_prefix="$dir/crashes/$t/" \
			"$dir/corpus/$t" "$dir/seeds/$t" >>"$log" 2>&1
		rc=$?
		n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
		execs=$((execs + ${n:-0}))
		[ $rc -eq 0 ] && break
		unit=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -1)
		if ! known "$t" "$log" || [ $knowns -ge 50 ]; then
			echo "fuzz_$t: FINDING (exit $rc): ${unit:-see $log}" >"$dir/logs/$t.sum"
			grep -E 'ERROR|SUMMARY|runtime error|property broken' "$log" | tail -4 \
				>>"$dir/logs/$t.sum"
			return 1
		fi
		knowns=$((knowns + 1))
		rm -f "$unit"
		echo "== known finding (tests/fuzz/known.txt), resuming" >>"$log"
		now=$(date +%s)
		left=$((secs - (now - start)))
	done
	cov=$(grep -E '^#[0-9]+[[:space:]].*cov: ' "$log" | tail -1 |
		sed -E 's/.*(cov: [0-9]+ ft: [0-9]+ corp: [0-9]+\/[0-9a-zA-Z]+).*/\1/')
	printf 'fuzz_%s: ok, %s s, %s execs, %s, corpus dir %s files%s\n' "$t" \
		$(($(date +%s) - start)) "$execs" "${cov:-cov: ?}" \
		"$(find "$dir/corpus/$t" -type f | wc -l)" \
		"$([ $knowns -gt 0 ] && echo ", $knowns known finding(s) hit")" >"$dir/logs/$t.sum"
}

mkdir -p "$dir/logs"
fail=0
i=0
pids=()
for t in "${targets[@]}"; do
	one "$t" &
	pids+=($!)
	i=$((i + 1))
	if [ $((i % jobs)) -eq 0 ]; then
		for p in "${pids[@]}"; do wait "$p" || fail=1; done
		pids=()
	fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
for t in "${targets[@]}"; do cat "$dir/logs/$t.sum"; done
exit $fail
