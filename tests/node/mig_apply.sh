#!/bin/bash
# mig_apply.sh CARVE DUMP MOCKLIB SRCDIR - `carve node mig-apply` (a
# mig-parted config applied once) against the mock libnvidia-ml.so.1:
# 8 x H100 with MIG on, seven 1g.10gb each, a process in GPU 0's first
# instance (tests/node/h100x8_mig7.json).  The mock keeps its state in a
# file, so what one process changes the next one discovers
# (carve-nvml-dump --mig-current).  Checks --dry-run changes nothing, an
# apply changes every idle GPU and refuses the busy one (exit 1), a second
# apply finds the idle GPUs as asked, and bad names and a MIG-mode change
# are refused with their messages.
set -u
CARVE=$1 DUMP=$2 LIB=$3 SRC=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CARVE_MOCK_NVML=$SRC/tests/node/h100x8_mig7.json CARVE_MOCK_NVML_STATE=$tmp/state.json
CFG=$SRC/tests/data/migparted/config-default.yaml
pass=0 fail=0
check() { # name, status
	if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else echo "FAIL: $1"; fail=$((fail + 1)); fi
}
seven="1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,1g.10gb@4,1g.10gb@5,1g.10gb@6"
current() { "$DUMP" --lib "$LIB" --mig-current; }

before=$(current)
case "$before" in "0=$seven;1=$seven;"*) ok=0 ;; *) ok=1 ;; esac
check "mock starts with seven 1g.10gb per GPU: $before" $ok

"$CARVE" node mig-apply --config "$CFG" --name all-3g.40gb --nvml-lib "$LIB" --dry-run >"$tmp/dry.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q '^GPU 0: not changed: ' "$tmp/dry.out" &&
	[ "$(grep -c 'would be changed' "$tmp/dry.out")" -eq 7 ]
ck=$?; check "dry run: 7 GPUs would change, GPU 0 busy (rc $rc): $(head -c 300 "$tmp/dry.out")" $ck
[ "$(current)" = "$before" ]
check "dry run changed nothing" $?

"$CARVE" node mig-apply --config "$CFG" --name all-3g.40gb --nvml-lib "$LIB" >"$tmp/apply.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && [ "$(grep -c ': applied$' "$tmp/apply.out")" -eq 7 ] &&
	grep -q '^GPU 0: not changed: ' "$tmp/apply.out"
ck=$?; check "apply: 7 GPUs applied, busy GPU 0 refused (rc $rc): $(head -c 300 "$tmp/apply.out")" $ck
after=$(current)
want="0=$seven"
for g in 1 2 3 4 5 6 7; do want="$want;$g=3g.40gb@0,3g.40gb@4"; done
[ "$after" = "$want" ]
check "carve.dev/mig-current after the apply: $after" $?

"$CARVE" node mig-apply --config "$CFG" --name all-3g.40gb --nvml-lib "$LIB" >"$tmp/again.out" 2>&1
[ "$(grep -c 'already as asked' "$tmp/again.out")" -eq 7 ] && [ "$(current)" = "$want" ]
ck=$?; check "second apply: the idle GPUs already as asked: $(head -c 300 "$tmp/again.out")" $ck

"$CARVE" node mig-apply --config "$CFG" --name no-such-config --nvml-lib "$LIB" >"$tmp/bad.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "has no mig-configs entry named 'no-such-config'" "$tmp/bad.out"
ck=$?; check "unknown config name refused (rc $rc): $(head -c 200 "$tmp/bad.out")" $ck

"$CARVE" node mig-apply --config "$CFG" --name all-disabled --nvml-lib "$LIB" >"$tmp/off.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "never changes MIG mode" "$tmp/off.out" && [ "$(current)" = "$want" ]
ck=$?; check "turning MIG off refused, nothing changed (rc $rc): $(head -c 200 "$tmp/off.out")" $ck

"$CARVE" node mig-apply --config "$tmp/missing.yaml" --name all-3g.40gb --nvml-lib "$LIB" >"$tmp/nofile.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "missing.yaml" "$tmp/nofile.out"
ck=$?; check "missing config file named (rc $rc): $(head -c 200 "$tmp/nofile.out")" $ck

"$CARVE" node mig-apply --name all-3g.40gb >"$tmp/usage.out" 2>&1
[ $? -eq 2 ]
check "mig-apply without --config is a usage error" $?

echo "mig_apply.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
