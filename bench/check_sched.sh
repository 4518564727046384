#!/bin/sh
# check_sched.sh BENCH OUTDIR - runs carve-bench-sched at a small size and
# checks that it bound every pod (its exit status says so) and that the
# JSON holds every figure as a number.  Timings are never judged here.
set -u
bench=$1
out=$2/bench_sched.json
mkdir -p "$2" || exit 1
rm -f "$out"
"$bench" --nodes 100 --pods 1000 --gang 20 --out "$out" >/dev/null || { echo "carve-bench-sched failed"; exit 1; }
fail=0
for k in sched_us_per_bound_pod sched_binds sched_parse_s sched_add_json_s sched_plan_s sched_act_s \
	gang_last_pod_ms gang_last_pod_empty_ms bytes_per_pod_rss drain_us_per_bound_pod drain_plan_s \
	yaml_baseline_load_s json_load_s; do
	if ! grep -Eq "^  \"$k\": -?[0-9][0-9.e+-]*,?\$" "$out"; then
		echo "missing or not a number: $k"
		fail=1
	fi
done
grep -Eq '^  "sched_binds": 1000,?$' "$out" || { echo "expected 1000 pods bound"; fail=1; }
exit $fail
