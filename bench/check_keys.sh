#!/bin/sh
# check_keys.sh BENCH OUTDIR [OPENB_DIR] - runs `carve-bench --quick --out`
# and checks that the JSON holds each of the 12 keys of issue 6 with a
# number.  Timings are never judged here (CI machines vary); only that
# every figure runs at its small size and reports.
set -u
bench=$1
out=$2/bench_quick.json
mkdir -p "$2" || exit 1
rm -f "$out"
if [ $# -ge 3 ]; then
	"$bench" --quick --openb "$3" --out "$out" >/dev/null || { echo "carve-bench failed"; exit 1; }
else
	"$bench" --quick --out "$out" >/dev/null || { echo "carve-bench failed"; exit 1; }
fi
fail=0
n=0
for k in place_binpack_per_s place_binpack_p99_us place_fgd_per_s admit_per_s \
	kueue_baseline_s gang500_ms reclaim_ms openb_fgd_run_s openb_sweep_s \
	bytes_per_node bytes_per_gpu bytes_per_pending; do
	if ! grep -Eq "^  \"$k\": -?[0-9][0-9.e+-]*,?\$" "$out"; then
		echo "missing or not a number: $k"
		fail=1
	fi
done
n=$(grep -c '^  "' "$out")
if [ "$n" -ne 12 ]; then
	echo "expected 12 keys, found $n"
	fail=1
fi
[ $fail -eq 0 ] && echo "12 keys present"
exit $fail
