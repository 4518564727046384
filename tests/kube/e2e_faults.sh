#!/usr/bin/env bash
# End to end: watch drops, compaction (410 Expired, relists), 429s with
# Retry-After and 500s in the middle of a run change nothing in the
# outcome.  The same scenario runs twice against a fresh fake API server:
# once clean, once with the faults injected (/fake/faults) between the
# first batch of pods and the second; both runs end with the same pods
# bound to the same nodes and devices, every gang whole, no device
# assigned twice.  Usage: e2e_faults.sh CARVE_BINARY SOURCE_DIR
set -u
CARVE=$1
cd "$2" || exit 1
if ! command -v kubectl >/dev/null; then
	echo "e2e_faults.sh: SKIP: kubectl is not installed"
	exit 0
fi
. tests/kube/kubeenv.sh
. tests/kube/e2e_env.sh
tmp=$(mktemp -d) || exit 1
trap 'sched_stop; fake_stop; rm -rf "$tmp"' EXIT

{
	pod team-a g1-0 research nvidia.com/gpu 2 g1 2
	pod team-a g1-1 research nvidia.com/gpu 2 g1 2
	pod team-b m-0 prod nvidia.com/mig-3g.40gb 1 m 2
	pod team-b m-1 prod nvidia.com/mig-3g.40gb 1 m 2
} >"$tmp/batch1.yaml"
{
	pod team-a g2-0 research nvidia.com/gpu 2 g2 2
	pod team-a g2-1 research nvidia.com/gpu 2 g2 2
	pod team-b n-0 dev nvidia.com/gpu 1 n 2
	pod team-b n-1 dev nvidia.com/gpu 1 n 2
} >"$tmp/batch2.yaml"
all1=(team-a/g1-0 team-a/g1-1 team-b/m-0 team-b/m-1)
all2=(team-a/g2-0 team-a/g2-1 team-b/n-0 team-b/n-1)

run() { # NAME FAULTS(0|1): the outcome in $tmp/NAME.out
	local name=$1 faults=$2
	fake_start --max-seconds 120 || return 1
	kc apply --validate=false -f tests/data/kube/crds.yaml >/dev/null &&
		kc apply --validate=false -f tests/data/kube/cluster.yaml >/dev/null &&
		kc apply --validate=false -f "$tmp/batch1.yaml" >/dev/null
	check "$name: objects applied" $?
	sched_start "$tmp/$name.log" --leader-elect=false --metrics-addr 127.0.0.1:0 -v
	lib wait-bound "${all1[@]}" --timeout 40
	check "$name: first batch bound" $?
	if [ "$faults" = 1 ]; then
		fake_fault '{"drop_watch_after": 1}' >/dev/null &&
			fake_fault '{"compact": true}' >/dev/null &&
			fake_fault '{"throttle": 2, "retry_after": 1, "fail_500": 2, "match": "/binding"}' >/dev/null
		check "$name: faults injected" $?
	fi
	kc apply --validate=false -f "$tmp/batch2.yaml" >/dev/null
	check "$name: second batch applied" $?
	lib wait-bound "${all2[@]}" --timeout 60
	check "$name: second batch bound" $?
	lib show >"$tmp/$name.out"
	lib gangs >/dev/null
	check "$name: every gang whole" $?
	lib check-devices >/dev/null
	check "$name: no device assigned twice" $?
	fake_get /fake/stats >"$tmp/$name.stats"
	if [ "$faults" = 1 ]; then
		port=$(sed -n 's/.*serving \/metrics.* on port \([0-9]*\).*/\1/p' "$tmp/$name.log" | head -1)
		/usr/bin/python3 -c 'import sys, urllib.request; print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())' "$port" >"$tmp/metrics"
		grep '^carve_watch_restarts_total' "$tmp/metrics" | head -3
		grep -q '^carve_watch_restarts_total{kind="Pod",reason="expired"} [1-9]' "$tmp/metrics"
		check "$name: the relist of pods is counted in carve_watch_restarts_total" $?
	fi
	sched_stop
	check "$name: SIGTERM exit 0" $([ "$SCHED_RC" = 0 ] && echo 0 || echo 1)
	fake_stop
}

run clean 0
run faults 1
cat "$tmp/faults.out"
diff "$tmp/clean.out" "$tmp/faults.out"
check "the same outcome with and without faults" $?
# the faulty run really lost its watches: more pod watches than the clean one
watches() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"]["watch"].get("pods", 0))' "$1"; }
c=$(watches "$tmp/clean.stats") f=$(watches "$tmp/faults.stats")
echo "pod watches: clean $c, with faults $f"
check "the faults made the scheduler relist (pods watched $f times vs $c)" $([ "$f" -gt "$c" ] && echo 0 || echo 1)
[ "$fail" -eq 0 ] || { echo "--- faults log"; tail -30 "$tmp/faults.log"; }
finish
