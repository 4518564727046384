#!/bin/sh
# gpu_check.sh - scripts/gpu-check.sh against the mock NVML and a fake
# nvidia-smi built from the same node description: equal for the MIG and
# non-MIG fixtures, a failure (exit 1) when nvidia-smi says otherwise.
#   gpu_check.sh SOURCE_DIR CARVE_NVML_DUMP MOCK_LIB
set -u
src=$1 dump=$2 lib=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
ln -s "$src/tests/node/fake-nvidia-smi.py" "$tmp/nvidia-smi"
PATH=$tmp:$PATH
export PATH
unset CARVE_MOCK_NVML_STATE FAKE_SMI_SKEW
PYTHON=/usr/bin/python3
export PYTHON
fail=0
for f in h100x8.json h100x8_mig7.json a100.json; do
	if CARVE_MOCK_NVML=$src/tests/node/$f sh "$src/scripts/gpu-check.sh" --dump "$dump" \
		--lib "$lib" >"$tmp/out" 2>&1; then
		echo "ok: $f equal"
	else
		echo "FAIL: $f"; cat "$tmp/out"; fail=1
	fi
done
CARVE_MOCK_NVML=$src/tests/node/h100x8.json FAKE_SMI_SKEW=memory \
	sh "$src/scripts/gpu-check.sh" --dump "$dump" --lib "$lib" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "FAIL GPU 0 memory MiB" "$tmp/out"; then
	echo "ok: a memory difference is reported"
else
	echo "FAIL: skewed memory gave exit $rc"; cat "$tmp/out"; fail=1
fi
exit $fail
