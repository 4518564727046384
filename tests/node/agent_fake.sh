#!/bin/bash
# agent_fake.sh CARVE SRCDIR NVML - `carve node` end to end against the fake
# API server (tests/kube/fakeapi.py) with the NVML library NVML: the mock
# libnvidia-ml.so.1 built for tests, given the node below through
# CARVE_MOCK_NVML (docs/internals/NVML.md's format): 2 x A100-SXM4-80GB
# with MIG on, GPU 0 3g.40gb@0, 2g.20gb@4, 1g.10gb@6 with a process in the
# 3g.40gb; GPU 1 seven 1g.10gb.  Checks that the agent:
#  - patches GFD's labels on the Node,
#  - writes carve.dev/mig-current exactly and carve.dev/mig-status,
#  - refuses a layout that changes a busy instance (CarveMigBusy) and an
#    illegal one (CarveMigLayoutInvalid), as Events on the Node,
#  - posts CarveDeviceUnknown on a pod whose carve.dev/devices names a
#    device the node lacks,
#  - serves dcgm-exporter metrics with the bound pod on its device,
#  - then applies a layout that keeps the bound pod's instance and changes
#    the free ones on GPU 1 (carve.dev/mig-current shows it, mig-status
#    says applied),
# and keeps running through all of it.
set -u
CARVE=$1 SRC=$2 NVML=${3:-}
. "$SRC/tests/kube/kubeenv.sh"
fail() { echo "FAIL: $*" >&2; [ -n "${LOG:-}" ] && cat "$LOG" >&2; exit 1; }
fake_start || exit 1
trap 'kill $AGENT 2>/dev/null; fake_stop' EXIT
LOG=$FAKE_DIR/agent.log
# A free loopback port for /metrics (node_agent_fake and node_agent_mock may
# run at the same time, so no fixed port).
MPORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
AGENT=
/usr/bin/python3 - "$FAKE_DIR/node.json" <<'PY'
import json, sys
def gpu(i, inst, procs):
    return {"uuid": "GPU-a1000000-0000-4000-8000-00000000000%d" % i,
            "name": "NVIDIA A100-SXM4-80GB", "minor": i,
            "pci_bus_id": "00000000:%02X:00.0" % (0x18 + 16 * i), "pci_device_id": 548540638,
            "memory_mib": 81920, "cc": [8, 0], "arch": 7, "numa": 0, "mig": [1, 1],
            "util": [10, 5], "power_mw": 250000, "energy_mj": 123456789, "temp": 40,
            "sm_clock": 1410, "mem_clock": 1593, "processes": procs,
            "instances": [{"profile": p, "start": st, "gi": gi, "ci": 0,
                           "uuid": "MIG-a1000000-0000-4000-8000-%012d" % (i * 100 + gi)}
                          for p, st, gi in inst]}
node = {"driver_version": "535.129.03", "cuda_version": 12020, "gpus": [
    gpu(0, [("3g.40gb", 0, 2), ("2g.20gb", 4, 3), ("1g.10gb", 6, 9)],
        [{"pid": 777, "used_mib": 2048, "gi": 2, "ci": 0}]),
    gpu(1, [("1g.10gb", s, 7 + s) for s in range(7)], [])]}
json.dump(node, open(sys.argv[1], "w"))
PY
export CARVE_MOCK_NVML=$FAKE_DIR/node.json

fake_req POST /api/v1/nodes '{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a","annotations":{"carve.dev/mig-layout":"0=4g.40gb@0,2g.20gb@4,1g.10gb@6;1=3g.40gb@2"}}}' >/dev/null
fake_req POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}}' >/dev/null
fake_req POST /api/v1/namespaces/team-a/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"good","namespace":"team-a","labels":{"kueue.x-k8s.io/queue-name":"research"},"annotations":{"carve.dev/devices":"gpu=1,mig=1g.10gb@0"}},"spec":{"nodeName":"node-a","containers":[{"name":"main","image":"x"}]}}' >/dev/null
fake_req POST /api/v1/namespaces/team-a/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad","namespace":"team-a","annotations":{"carve.dev/devices":"gpu=7,mig=1g.10gb@0"}},"spec":{"nodeName":"node-a","containers":[{"name":"main","image":"x"}]}}' >/dev/null

"$CARVE" node --node-name node-a --nvml-lib "$NVML" --device-plugin-dir "" \
	--metrics-listen 127.0.0.1:$MPORT --interval 1 --max-seconds 30 2>"$LOG" &
AGENT=$!

node_has() {
	fake_req GET /api/v1/nodes/node-a | /usr/bin/python3 -c "
import json, sys
n = json.load(sys.stdin)['metadata']
want = sys.argv[1:]
v = {**n.get('labels', {}), **n.get('annotations', {})}
sys.exit(0 if v.get(want[0]) == want[1] else 1)" "$@"
}
wait_for() {
	local i
	for i in $(seq 1 100); do "$@" && return 0; sleep 0.1; done
	return 1
}
events() { fake_req GET "/apis/events.k8s.io/v1/namespaces/$1/events"; }

wait_for node_has nvidia.com/gpu.product NVIDIA-A100-SXM4-80GB || fail "no GFD labels on the node"
node_has nvidia.com/mig-1g.10gb.count 8 || fail "mig-1g.10gb.count"
wait_for node_has carve.dev/mig-current \
	"0=3g.40gb@0,2g.20gb@4,1g.10gb@6;1=1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,1g.10gb@4,1g.10gb@5,1g.10gb@6" \
	|| fail "carve.dev/mig-current"
wait_for sh -c "$(declare -f fake_req); $(declare -f events); events default | grep -q CarveMigBusy" \
	|| fail "no CarveMigBusy event for GPU 0 (its 3g.40gb runs a process)"
events default | grep -q CarveMigLayoutInvalid || fail "no CarveMigLayoutInvalid for 3g.40gb@2"
events team-a | grep -q CarveDeviceUnknown || fail "no CarveDeviceUnknown on team-a/bad"
events team-a | grep -q '"name": *"good"' && fail "an event on the good pod"
curl -sf http://127.0.0.1:$MPORT/metrics >"$FAKE_DIR/metrics" || fail "no /metrics"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="1",' "$FAKE_DIR/metrics" || fail "DCGM_FI_DEV_GPU_UTIL of GPU 1"
grep -q '^carve_device_pod{gpu="1",.*GPU_I_ID="7",namespace="team-a",pod="good",queue="research"' \
	"$FAKE_DIR/metrics" || fail "carve_device_pod of the good pod"
if grep -q '^DCGM_FI_DEV_FB_USED{gpu="1".*GPU_I_ID="7"' "$FAKE_DIR/metrics"; then
	grep -q '^DCGM_FI_DEV_FB_USED{gpu="1".*GPU_I_ID="7".*pod="good"' "$FAKE_DIR/metrics" \
		|| fail "the good pod's MIG device without its pod label"
fi

# A layout for GPU 1 that keeps the good pod's 1g.10gb@0 and changes free ones.
fake_req PATCH /api/v1/nodes/node-a '{"metadata":{"annotations":{"carve.dev/mig-layout":"1=1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,3g.40gb@4"}}}' \
	application/merge-patch+json >/dev/null
wait_for node_has carve.dev/mig-current \
	"0=3g.40gb@0,2g.20gb@4,1g.10gb@6;1=1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,3g.40gb@4" \
	|| fail "GPU 1's new layout in carve.dev/mig-current"
wait_for node_has carve.dev/mig-status "GPU 1: applied" || fail "carve.dev/mig-status"
# ... and one that would take the good pod's instance: refused, nothing changes.
fake_req PATCH /api/v1/nodes/node-a '{"metadata":{"annotations":{"carve.dev/mig-layout":"1=7g.80gb@0"}}}' \
	application/merge-patch+json >/dev/null
wait_for sh -c "$(declare -f fake_req); $(declare -f events); events default | grep -q 'serves pod team-a/good'" \
	|| fail "no CarveMigBusy for the good pod's instance"
node_has carve.dev/mig-current \
	"0=3g.40gb@0,2g.20gb@4,1g.10gb@6;1=1g.10gb@0,1g.10gb@1,1g.10gb@2,1g.10gb@3,3g.40gb@4" \
	|| fail "a busy GPU was changed"
kill -0 $AGENT || fail "the agent stopped"
echo "agent_fake: ok"
