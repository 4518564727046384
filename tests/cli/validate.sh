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

echo "validate.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
