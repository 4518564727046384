#!/usr/bin/env bash
# End to end: binds are never held up by pending pods' status writes.
# 150 pods that cannot fit wait (each owed a PodScheduled=False condition
# and a FailedScheduling event: 300 writes) while the scheduler runs at
# --qps 5; a gang that fits, created afterwards, is bound within 20 s
# (the writes alone take a minute at that rate), /healthz answers 200 the
# whole time, and the pending pods get their condition all the same.
# Usage: e2e_qps.sh CARVE_BINARY SOURCE_DIR
set -u
CARVE=$1
cd "$2" || exit 1
if ! command -v kubectl >/dev/null; then
	echo "e2e_qps.sh: SKIP: kubectl is not installed"
	exit 0
fi
. tests/kube/kubeenv.sh
. tests/kube/e2e_env.sh
tmp=$(mktemp -d) || exit 1
trap 'sched_stop; fake_stop; rm -rf "$tmp"' EXIT

for i in $(seq 0 149); do
	pod team-b big-$i dev nvidia.com/gpu 64
done >"$tmp/big.yaml"
{
	pod team-a g-0 research nvidia.com/gpu 2 g 2
	pod team-a g-1 research nvidia.com/gpu 2 g 2
} >"$tmp/gang.yaml"

fake_start --max-seconds 120 || exit 1
kc apply --validate=false -f tests/data/kube/crds.yaml >/dev/null &&
	kc apply --validate=false -f tests/data/kube/cluster.yaml >/dev/null &&
	kc apply --validate=false -f "$tmp/big.yaml" >/dev/null
check "objects applied" $?
sched_start "$tmp/sched.log" --leader-elect=false --metrics-addr 127.0.0.1:0 --qps 5 --burst 5
unsched() { # how many pods of team-b have PodScheduled=False
	kc get pods -n team-b -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].status}{"\n"}{end}' |
		grep -c False
}
n=0
for _ in $(seq 1 60); do
	n=$(unsched)
	[ "$n" -ge 1 ] && break
	sleep 0.5
done
check "pending pods get PodScheduled=False ($n so far)" $([ "$n" -ge 1 ] && echo 0 || echo 1)
port=$(sed -n 's/.*serving \/metrics.* on port \([0-9]*\).*/\1/p' "$tmp/sched.log" | head -1)
# /healthz every half second while the writes drain and the gang comes
/usr/bin/python3 - "$port" >"$tmp/health" 2>&1 <<'PY' &
import sys, time, urllib.request, urllib.error
bad = 0
for _ in range(40):
    try:
        urllib.request.urlopen("http://127.0.0.1:%s/healthz" % sys.argv[1], timeout=2).read()
    except urllib.error.HTTPError as e:
        bad += 1
        print("healthz", e.code)
    except OSError as e:
        bad += 1
        print("healthz", e)
    time.sleep(0.5)
print("unhealthy", bad)
PY
hpid=$!
t0=$(date +%s)
kc apply --validate=false -f "$tmp/gang.yaml" >/dev/null
check "gang applied" $?
lib wait-bound team-a/g-0 team-a/g-1 --timeout 20
ck=$?; check "the gang bound while status writes wait (in $(($(date +%s) - t0)) s)" $ck
wait "$hpid"
cat "$tmp/health"
grep -q '^unhealthy 0$' "$tmp/health"
check "/healthz stayed 200" $?
[ "$fail" -eq 0 ] || { echo "--- scheduler log"; tail -30 "$tmp/sched.log"; }
finish
