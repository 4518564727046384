#!/usr/bin/env bash
# End to end: Dynamic MIG through the API.  `carve scheduler --mig-dynamic`
# against the fake API server with one A100-80GB node whose node agent
# reports two idle 3g.40gb instances (carve.dev/mig-current).  A pod asking
# for a 1g.10gb instance is not bound: the scheduler writes the layout it
# needs in the node's carve.dev/mig-layout annotation (other GPUs' wanted
# entries kept), says why the pod waits (PodScheduled=False) and records a
# MIGLayoutWanted event on the Node.  When the "agent" (this test, with a
# merge patch) reports the new layout in carve.dev/mig-current, the pod is
# bound to a 1g.10gb instance at a legal start.  Without --mig-dynamic
# nothing is written to the node.  Usage: e2e_migdyn.sh CARVE_BINARY SOURCE_DIR
set -u
CARVE=$1
cd "$2" || exit 1
if ! command -v kubectl >/dev/null; then
	echo "e2e_migdyn.sh: SKIP: kubectl is not installed"
	exit 0
fi
. tests/kube/kubeenv.sh
. tests/kube/e2e_env.sh
tmp=$(mktemp -d) || exit 1
trap 'sched_stop; fake_stop; rm -rf "$tmp"' EXIT
fake_start --max-seconds 120 || exit 1

cat >"$tmp/node.yaml" <<'Y'
apiVersion: v1
kind: Node
metadata:
  name: dyn-0
  labels:
    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
    nvidia.com/gpu.count: "1"
    nvidia.com/mig.strategy: mixed
  annotations:
    carve.dev/mig-current: "0=3g.40gb@0,3g.40gb@4"
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/mig-3g.40gb: "2"}
Y
kc create namespace ns-a >/dev/null && kc apply --validate=false -f "$tmp/node.yaml" >/dev/null
check "node applied" $?
node_ann() {
	fake_req GET /api/v1/nodes/dyn-0 | /usr/bin/python3 -c \
		'import json,sys; print(json.load(sys.stdin)["metadata"].get("annotations",{}).get(sys.argv[1],""))' "$1"
}

# Off: the pod waits, the node is left alone.
sched_start "$tmp/sched0.log" --leader-elect=false --metrics-addr 0 --queues none
pod ns-a small-0 "" nvidia.com/mig-1g.10gb 1 | kc apply --validate=false -f - >/dev/null
check "pod applied" $?
lib wait-cond ns-a/small-0 PodScheduled False --timeout 30
check "without --mig-dynamic the pod is pending" $?
check "without --mig-dynamic no layout is written" "$([ -z "$(node_ann carve.dev/mig-layout)" ] && echo 0 || echo 1)"
sched_stop

# On: the layout is asked for, the pod says what it waits for.
sched_start "$tmp/sched1.log" --leader-elect=false --metrics-addr 0 --queues none --mig-dynamic -v
for i in $(seq 1 100); do
	[ -n "$(node_ann carve.dev/mig-layout)" ] && break
	sleep 0.2
done
want=$(node_ann carve.dev/mig-layout)
check "the wanted layout is written (got '$want')" \
	"$([ "$want" = "0=1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,1g.10gb@4,1g.10gb@5,1g.10gb@6" ] && echo 0 || echo 1)"
for i in $(seq 1 50); do
	lib cond ns-a/small-0 PodScheduled | grep -q "waiting for node dyn-0 to apply a new MIG layout" && break
	sleep 0.2
done
lib cond ns-a/small-0 PodScheduled | grep -q "waiting for node dyn-0 to apply a new MIG layout on GPU 0"
check "the pod says it waits for the layout" $?
fake_req GET "/apis/events.k8s.io/v1/namespaces/default/events" | grep -q MIGLayoutWanted
check "a MIGLayoutWanted event on the Node" $?
check "not bound before the layout is applied" "$(lib count-bound ns-a/ | grep -qx 0 && echo 0 || echo 1)"

# The agent applied it.
fake_req PATCH /api/v1/nodes/dyn-0 "{\"metadata\":{\"annotations\":{\"carve.dev/mig-current\":\"$want\"}}}" \
	application/merge-patch+json >/dev/null
check "current layout reported" $?
lib wait-bound ns-a/small-0 --timeout 30
check "bound once the layout shows" $?
dev=$(lib show | awk '$1 == "ns-a/small-0" {print $3}')
check "bound to a 1g.10gb instance (got '$dev')" \
	"$(echo "$dev" | grep -Eq '^gpu=0,mig=1g\.10gb@[0-6]$' && echo 0 || echo 1)"
lib check-devices
check "no device given twice" $?
sched_stop
check "the scheduler stopped with 0 (got $SCHED_RC)" "$SCHED_RC"
finish
