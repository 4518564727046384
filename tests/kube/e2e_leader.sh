#!/usr/bin/env bash
# End to end: two `carve scheduler` replicas with leader election on one
# Lease.  The first leads; the second follows and does nothing.  The leader
# is slowed (--qps 3 --burst 1) so a 16-pod gang is bound over seconds, and
# is killed with SIGKILL in the middle of it (some pods bound, some not).
# The follower takes the Lease over within one lease duration (15 s) plus a
# margin, completes the half-bound gang (every pod bound, the gang whole),
# and no device is assigned twice.  Usage: e2e_leader.sh CARVE_BINARY SOURCE_DIR
set -u
CARVE=$1
cd "$2" || exit 1
if ! command -v kubectl >/dev/null; then
	echo "e2e_leader.sh: SKIP: kubectl is not installed"
	exit 0
fi
. tests/kube/kubeenv.sh
. tests/kube/e2e_env.sh
tmp=$(mktemp -d) || exit 1
A_PID= B_PID=
stop_all() {
	[ -n "$A_PID" ] && kill -9 "$A_PID" 2>/dev/null && wait "$A_PID" 2>/dev/null
	[ -n "$B_PID" ] && kill "$B_PID" 2>/dev/null && wait "$B_PID" 2>/dev/null
	fake_stop
	rm -rf "$tmp"
}
trap stop_all EXIT
fake_start --max-seconds 170 || exit 1

for i in 0 1 2 3; do
	cat <<N
---
apiVersion: v1
kind: Node
metadata:
  name: h100-$i
  labels:
    kubernetes.io/hostname: h100-$i
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
    nvidia.com/gpu.count: "4"
status:
  allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "4"}
N
done >"$tmp/nodes.yaml"
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n' | kc apply --validate=false -f - >/dev/null
kc apply --validate=false -f "$tmp/nodes.yaml" >/dev/null
check "nodes applied" $?

common=(--queues none --lease-namespace default --metrics-addr 0 --max-seconds 150)
"$CARVE" scheduler "${common[@]}" --identity replica-a --qps 3 --burst 1 2>"$tmp/a.log" &
A_PID=$!
for i in $(seq 1 100); do
	[ "$(lib lease default carve-scheduler)" = replica-a ] && break
	sleep 0.2
done
check "replica-a leads" $([ "$(lib lease default carve-scheduler)" = replica-a ] && echo 0 || echo 1)
"$CARVE" scheduler "${common[@]}" --identity replica-b 2>"$tmp/b.log" &
B_PID=$!
sleep 1

names=()
for i in $(seq 0 15); do
	pod team-a big-$i "" nvidia.com/gpu 1 big 16
	names+=(team-a/big-$i)
done >"$tmp/gang.yaml"
kc apply --validate=false -f "$tmp/gang.yaml" >/dev/null
check "16-pod gang applied" $?

# kill the leader once part of the gang is bound
n=0
for i in $(seq 1 300); do
	n=$(lib count-bound team-a/big-)
	[ "$n" -ge 2 ] && break
	sleep 0.1
done
kill -9 "$A_PID"
wait "$A_PID" 2>/dev/null
A_PID=
killed=$(($(date +%s%N) / 1000000))
n=$(lib count-bound team-a/big-)
echo "leader killed with $n of 16 pods bound"
check "killed in the middle of the gang ($n of 16 bound)" \
	$([ "$n" -ge 1 ] && [ "$n" -lt 16 ] && echo 0 || echo 1)
grep -q 'now leading' "$tmp/b.log"
check "the follower did not act while the leader lived" $([ $? -ne 0 ] && echo 0 || echo 1)

for i in $(seq 1 150); do
	[ "$(lib lease default carve-scheduler)" = replica-b ] && break
	sleep 0.2
done
took=$(($(date +%s%N) / 1000000 - killed))
echo "replica-b took the Lease over after ${took} ms"
check "replica-b takes over within one lease + margin (${took} ms <= 25000)" \
	$([ "$(lib lease default carve-scheduler)" = replica-b ] && [ "$took" -le 25000 ] &&
		echo 0 || echo 1)
lib wait-bound "${names[@]}" --timeout 30
check "the half-bound gang is completed by the new leader" $?
lib gangs
check "no half-bound gang" $?
lib check-devices
check "no device assigned twice" $?
lib show | awk '{print $2, $3}' | sort | uniq -d | grep . && r=1 || r=0
check "no (node, devices) pair repeated" $r

kill -TERM "$B_PID"
wait "$B_PID"
rc=$?
B_PID=
check "SIGTERM: exit 0 (got $rc)" $([ "$rc" = 0 ] && echo 0 || echo 1)
check "the Lease is released on SIGTERM" $([ -z "$(lib lease default carve-scheduler)" ] && echo 0 || echo 1)
[ "$fail" -eq 0 ] || { echo "--- a"; tail -20 "$tmp/a.log"; echo "--- b"; tail -20 "$tmp/b.log"; }
finish
