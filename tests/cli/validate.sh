#!/usr/bin/env bash
# End-to-end tests of `carve validate`, curl-style: each
# tests/data/validate/NAME.yaml is validated and its output must equal
# NAME.expected byte for byte (file:line:col: severity: message, sorted).
# Also checks exit codes (0 clean, 1 errors, 2 usage) and --explain on the
# seed scenario.  Usage: validate.sh CARVE_BINARY SOURCE_DIR
set -u
carve=$1
src=$2
cd "$src" || exit 1
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

for y in tests/data/validate/*.yaml; do
	exp=${y%.yaml}.expected
	out=$("$carve" validate "$y" 2>/dev/null)
	rc=$?
	if diff -u "$exp" <(printf '%s\n' "$out") >/dev/null; then
		check "$y output" 0
	else
		diff -u "$exp" <(printf '%s\n' "$out")
		check "$y output" 1
	fi
	if grep -q ': error: ' "$exp"; then want=1; else want=0; fi
	[ "$rc" -eq "$want" ]
	check "$y exit code $rc (want $want)" $?
done

# The seed scenario is clean and explains the expected capacity.
out=$("$carve" validate examples/seed-scenario 2>&1)
check "seed scenario exits 0" $?
[ -z "$(printf '%s' "$out" | grep -E ': (error|warning): ')" ]
check "seed scenario has no diagnostics" $?
explain=$("$carve" validate --explain examples/seed-scenario 2>/dev/null)
for want in "schedulable: 16 nvidia.com/gpu (whole GPUs)" \
	"schedulable: 14 nvidia.com/mig-3g.40gb (MIG instances)" \
	"schedulable: 6 nvidia.com/mig-1g.10gb (MIG instances)" \
	"schedulable: 48 nvidia.com/gpu (time-slice replicas, no memory isolation)" \
	"GPUs: 16 x H100-80GB, exclusive" "ClusterQueue research (cohort gpu-org)"; do
	printf '%s\n' "$explain" | grep -qF -- "$want"
	check "explain shows '$want'" $?
done

# Usage errors exit 2; a missing file is an error (exit 1).
"$carve" validate >/dev/null 2>&1
[ $? -eq 2 ]
check "no path: exit 2" $?
"$carve" validate --bogus x >/dev/null 2>&1
[ $? -eq 2 ]
check "bad option: exit 2" $?
"$carve" frobnicate >/dev/null 2>&1
[ $? -eq 2 ]
check "unknown command: exit 2" $?
out=$("$carve" validate does-not-exist.yaml 2>/dev/null)
[ $? -eq 1 ] && printf '%s' "$out" | grep -q "cannot open does-not-exist.yaml"
check "missing file: exit 1 with a message" $?

# A ConfigMap of 200,000 device-plugin configs reads in about linear time
# (positions of embedded values and the duplicate check were quadratic:
# more than 20 s before); 60 s leaves room for a slow sanitizer build.
big=$(mktemp)
awk 'BEGIN { print "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: x}\ndata:";
	for (i = 0; i < 200000; i++)
		printf "  k%d: |\n    version: v1\n    sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}\n", i }' >"$big.yaml"
timeout 60 "$carve" validate "$big.yaml" >/dev/null 2>&1
check "200,000-key ConfigMap validates within 60 s" $?
rm -f "$big" "$big.yaml"

# ---- output that cannot lie ------------------------------------------------------
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Raw control bytes and invalid UTF-8 from a CSV, a newline and an ESC from
# a YAML key: echoed escaped, never raw.
printf 'sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1024,x\033[31m\377,V100M16\n' >"$tmp/nodes.csv"
out=$("$carve" validate "$tmp/nodes.csv" 2>/dev/null)
[ "$out" = "$tmp/nodes.csv:2:14: error: node CSV: gpu: expected a non-negative integer, got 'x\x1B[31m\xFF'" ]
check "CSV control bytes and invalid UTF-8 escaped (got: $out)" $?
printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a}\nspec: {"bad\\e[31m\\nINJ": 1}\n' >"$tmp/key.yaml"
out=$("$carve" validate "$tmp/key.yaml" 2>/dev/null)
[ "$out" = "$tmp/key.yaml:4:8: error: ResourceFlavor a: spec: unknown field 'bad\x1B[31m\nINJ'" ]
check "YAML newline and ESC escaped (got: $out)" $?

# --explain: names from the input escaped whether they are accepted (the
# explanation) or refused (a diagnostic).
sed 's/^  name: training$/  name: "train\\nINJECTED pool\\e[31m"/' examples/seed-scenario/nodes.yaml \
	>"$tmp/nodes.yaml"
"$carve" validate --explain "$tmp/nodes.yaml" examples/seed-scenario/queues.yaml \
	examples/seed-scenario/mig-parted.yaml >"$tmp/out" 2>&1
! grep -q $'\e' "$tmp/out" && ! grep -q '^INJECTED' "$tmp/out" &&
	grep -qF 'train\nINJECTED pool\x1B[31m' "$tmp/out"
check "--explain: an injected pool name is printed escaped" $?

# Standard input as one YAML stream, named <stdin>.
for f in examples/seed-scenario/*.yaml; do echo ---; cat "$f"; done >"$tmp/all.yaml"
"$carve" validate - <"$tmp/all.yaml" >"$tmp/out" 2>"$tmp/err"
check "validate - (standard input): exit 0" $?
grep -q '^carve validate: 21 documents, 0 errors' "$tmp/err"
ok=$?   # before the message runs commands of its own
check "validate -: the seed scenario's 21 documents (got: $(cat "$tmp/err"))" $ok
"$carve" validate - <"$tmp/key.yaml" >"$tmp/out" 2>/dev/null
grep -q "^<stdin>:4:8: error: ResourceFlavor a: spec: unknown field" "$tmp/out"
check "validate -: diagnostics name <stdin>" $?

# More than 256 paths: no limit.
mkdir "$tmp/many"
for i in $(seq 300); do
	printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f%d}\n' \
		"$i" >"$tmp/many/f$i.yaml"
done
"$carve" validate "$tmp"/many/*.yaml >/dev/null 2>"$tmp/err"
ok=$?   # before the message runs commands of its own
check "300 paths: exit 0 (got: $(cat "$tmp/err"))" $ok
grep -q '^carve validate: 300 documents, 0 errors' "$tmp/err"
check "300 paths: all read" $?

# A failed write to standard output: exit 1 with a message.
if [ -w /dev/full ]; then
	"$carve" validate --explain examples/seed-scenario >/dev/full 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] && grep -q '^carve validate: cannot write output: No space left on device$' \
		"$tmp/err"
	check "validate --explain >/dev/full: exit 1 with a message (rc $rc)" $?
	"$carve" validate --help >/dev/full 2>"$tmp/err"
	check "validate --help >/dev/full: exit 1" $(($? == 1 ? 0 : 1))
fi

tmp_amp=$(mktemp)
# Ten NodePools of 100,000 nodes in 2 KB: the inventory holds at most
# 100,000 nodes, so the rest are refused at once (it took 4 s and 1.4 GB).
timeout 20 "$carve" validate "$src/tests/fuzz/crashes/manifest_yaml/timeout-nodepool-amplification.yaml" \
	>"$tmp_amp" 2>&1
grep -q "more nodes would make the inventory larger than 100000 nodes; the pool is skipped" "$tmp_amp"
check "node total bounded: pools past 100,000 nodes refused, quickly" $?
rm -f "$tmp_amp"


# NVIDIA's default mig-parted config and the job kinds beside the queues
# (tests/data/migparted, tests/data/jobs): clean, or warnings only.
"$carve" validate "$src/tests/data/migparted/config-default.yaml" >"$tmp/out" 2>&1
check "NVIDIA's default mig-parted config validates clean" $?
"$carve" validate "$src/tests/data/jobs" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q ", 0 errors, 9 warnings$" "$tmp/out" &&
	[ "$(grep -c 'is not read by carve; document skipped$' "$tmp/out")" -eq 5 ]
check "kinds carve does not read are warnings, each once (rc $rc)" $?
grep -q "^$src/tests/data/jobs/badrefs.yaml:9:5: warning: Job default/lost: label kueue.x-k8s.io/queue-name names LocalQueue 'no-such-queue', which does not exist in namespace default; it is not queued$" "$tmp/out" &&
	grep -q "badrefs.yaml:25:5: warning: Job default/unranked: label kueue.x-k8s.io/priority-class names 'no-such-class'" "$tmp/out"
check "validate warns at a Job's queue label naming no LocalQueue, as admit does" $?

echo "validate.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
