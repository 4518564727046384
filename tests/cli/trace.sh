#!/usr/bin/env bash
# End-to-end tests of `carve trace`: generate writes a trace that `trace
# check` loads back with no diagnostics, in CSV and YAML, the same bytes for
# the same seed; usage errors exit 2, bad traces exit 1 with
# file:line:col on stderr; `carve validate` on a scenario folder ignores
# its traces.  Usage: trace.sh CARVE_BINARY SOURCE_DIR
set -u
carve=$1
src=$2
cd "$src" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
pass=0

check() { # name, condition result
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
	else
		echo "FAIL: $1"
		fail=$((fail + 1))
	fi
}

# exit_is NAME WANT COMMAND...: the command's exit status is WANT.
exit_is() {
	local name=$1 want=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ "$rc" -eq "$want" ]
	check "$name (exit $rc, want $want)" $?
}

exit_is "generate csv" 0 "$carve" trace generate --scenario seed --days 2 --seed 5 -o "$tmp/a.trace.csv"
exit_is "generate csv to stdout" 0 "$carve" trace generate --days 2 --seed 5
cmp -s "$tmp/out" "$tmp/a.trace.csv"
check "stdout and -o write the same bytes" $?
head -1 "$tmp/a.trace.csv" | grep -q '^name,arrival,duration,'
check "csv header" $?
exit_is "check csv" 0 "$carve" trace check "$tmp/a.trace.csv"
grep -q "jobs loaded, 0 skipped, 0 errors" "$tmp/err"
check "csv loads back clean" $?

exit_is "generate yaml by extension" 0 "$carve" trace generate --days 2 --seed 5 -o "$tmp/b.trace.yaml"
head -2 "$tmp/b.trace.yaml" | grep -q '^kind: Trace$'
check "yaml kind" $?
exit_is "check yaml" 0 "$carve" trace check "$tmp/b.trace.yaml"
n_csv=$(($(wc -l <"$tmp/a.trace.csv") - 1))
grep -q "^carve trace check: $n_csv jobs loaded, 0 skipped, 0 errors$" "$tmp/err"
check "yaml holds the same $n_csv jobs" $?
exit_is "generate --format yaml" 0 "$carve" trace generate --days 2 --seed 5 --format yaml -o "$tmp/c.txt"
cmp -s "$tmp/b.trace.yaml" "$tmp/c.txt"
check "--format yaml = .yaml extension" $?

"$carve" trace generate --days 2 --seed 5 -o "$tmp/d.csv"
cmp -s "$tmp/a.trace.csv" "$tmp/d.csv"
check "same seed, same bytes" $?
"$carve" trace generate --days 2 --seed 6 -o "$tmp/e.csv"
! cmp -s "$tmp/a.trace.csv" "$tmp/e.csv"
check "other seed, other bytes" $?

mkdir "$tmp/dir"
cp "$tmp/a.trace.csv" "$tmp/dir/"
cp "$tmp/e.csv" "$tmp/dir/"  # not *.trace.csv: left out
exit_is "check a directory" 0 "$carve" trace check "$tmp/dir"
grep -q "^carve trace check: $n_csv jobs loaded, 0 skipped, 0 errors$" "$tmp/err"
check "a directory loads its *.trace.* files only" $?
# a.trace.csv and b.trace.yaml hold the same names: the second are duplicates.
exit_is "check a directory (duplicates)" 1 "$carve" trace check "$tmp"
grep -q "b.trace.yaml:[0-9]*:[0-9]*: error: job .*: name: job .* is already in the trace" "$tmp/err"
check "duplicates across files are named" $?

# Usage errors: 2.
exit_is "no subcommand" 2 "$carve" trace
exit_is "unknown subcommand" 2 "$carve" trace frobnicate
exit_is "unknown scenario" 2 "$carve" trace generate --scenario nope
exit_is "days 0" 2 "$carve" trace generate --days 0
exit_is "days text" 2 "$carve" trace generate --days week
exit_is "bad seed" 2 "$carve" trace generate --seed -1
exit_is "bad format" 2 "$carve" trace generate --format json
exit_is "unknown option" 2 "$carve" trace generate --bogus
exit_is "extra argument" 2 "$carve" trace generate extra
exit_is "check without path" 2 "$carve" trace check
exit_is "help" 0 "$carve" trace generate --help
exit_is "unwritable output" 1 "$carve" trace generate -o "$tmp/no/such/dir.csv"

# A bad trace: exit 1, positions on stderr.
printf 'name,arrival,duration\nok,0,60\nbad,0,-5\n' >"$tmp/bad.csv"
exit_is "check bad csv" 1 "$carve" trace check "$tmp/bad.csv"
grep -q "^$tmp/bad.csv:3:7: error: duration: must be positive (got '-5')$" "$tmp/err"
check "bad csv position" $?
grep -q "1 job loaded, 1 skipped, 1 error$" "$tmp/err"
check "bad csv summary" $?

# Job classes: a bad one is named at its column (CSV) or value (YAML); good
# ones survive the round trip through trace generate's writers.
printf 'name,arrival,duration,class\nok,0,60,training\nbad,0,60,web server\n' >"$tmp/cls.csv"
exit_is "check bad class csv" 1 "$carve" trace check "$tmp/cls.csv"
grep -q "^$tmp/cls.csv:3:10: error: class: expected 1-63 letters, digits, '-', '_' or '.', got 'web server'$" "$tmp/err"
check "bad class csv position" $?
printf 'apiVersion: carve.dev/v1alpha1\nkind: Trace\njobs:\n- name: a\n  arrival: 0\n  duration: 60\n  class: "x/y"\n  podSets: [{count: 1}]\n' >"$tmp/cls.yaml"
exit_is "check bad class yaml" 1 "$carve" trace check "$tmp/cls.yaml"
grep -q "^$tmp/cls.yaml:7:10: error: job a: class: expected 1-63 letters, digits, '-', '_' or '.', got 'x/y'$" "$tmp/err"
check "bad class yaml position" $?

# The shipped week loads clean, and validate ignores it.
exit_is "check shipped week" 0 "$carve" trace check examples/seed-scenario
grep -q " 0 skipped, 0 errors$" "$tmp/err"
check "shipped week clean" $?
exit_is "validate seed scenario" 0 "$carve" validate examples/seed-scenario
[ ! -s "$tmp/out" ] && grep -q "0 errors, 0 warnings" "$tmp/err"
check "validate ignores the trace" $?

# A FIFO named like a trace must not block a directory walk: it is skipped
# with a warning, by `trace check` and `simulate` alike.
mkdir "$tmp/fifo" && mkfifo "$tmp/fifo/x.trace.csv" && cp "$src/examples/seed-scenario/queues.yaml" "$tmp/fifo/"
timeout 20 "$carve" trace check "$tmp/fifo" >/dev/null 2>"$tmp/err"
check "trace check DIR with a FIFO ends (exit 0)" $?
grep -q "x.trace.csv: not a regular file" "$tmp/err"
check "the FIFO is named in a warning" $?
timeout 20 "$carve" simulate "$tmp/fifo" >/dev/null 2>"$tmp/err"
check "simulate DIR with a FIFO ends (no trace: exit 2)" $(($? != 2))

# ---- output that cannot destroy -------------------------------------------------

# -o replaces a file whole (mode kept, no temporary file left), writes a
# device directly and never removes it; a failed write to standard output
# is reported.
printf 'old\n' >"$tmp/keep.csv"
chmod 600 "$tmp/keep.csv"
exit_is "generate over an existing file" 0 "$carve" trace generate --days 1 -o "$tmp/keep.csv"
[ "$(stat -c %a "$tmp/keep.csv")" = 600 ] && head -1 "$tmp/keep.csv" | grep -q '^name,arrival,'
check "replaced file keeps its mode (600)" $?
[ -z "$(find "$tmp" -maxdepth 1 -name '.carve-*')" ]
check "no temporary file left" $?
if mknod "$tmp/full" c 1 7 2>/dev/null; then
	exit_is "generate to a full device" 1 "$carve" trace generate --days 1 -o "$tmp/full"
	[ -c "$tmp/full" ] &&
		grep -q "^carve trace generate: cannot write $tmp/full: No space left on device$" "$tmp/err"
	check "the device node is left in place, the failure said" $?
else
	echo "SKIP: mknod not permitted: the device-node check"
fi
if [ -w /dev/full ]; then
	"$carve" trace generate --days 1 >/dev/full 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] &&
		grep -q '^carve trace generate: cannot write output: No space left on device$' "$tmp/err"
	check "generate >/dev/full: exit 1 with a message (rc $rc)" $?
fi
# An openb pod list is read by `trace check` as `simulate` reads it (one
# single-pod job a row), not as carve's CSV trace; a pod name twice is an
# error at the row.
exit_is "check openb pod list" 0 "$carve" trace check data/openb/openb_pod_list_default.csv
grep -q "jobs loaded, 0 skipped, 0 errors$" "$tmp/err" && ! grep -q "unknown column" "$tmp/err"
check "openb pod list read like simulate" $?
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\np0,1000,1024,1,500\n' >"$tmp/pods.csv"
exit_is "check openb duplicate pod" 1 "$carve" trace check "$tmp/pods.csv"
grep -q "^$tmp/pods.csv:3:1: error: name: pod 'p0' is already at line 2; row skipped$" "$tmp/err"
check "openb duplicate pod at the row" $?

echo "trace.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
