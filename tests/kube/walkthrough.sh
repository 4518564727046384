#!/usr/bin/env bash
# examples/kubernetes/README.md, run as written: its ```sh blocks, in order,
# against the fake API server (tests/kube/fakeapi.py, started by the README's
# own commands) with carve scheduler; then the end state is checked by
# tests/kube/walkthrough_check.py (the gang bound whole, MIG instances at
# legal slots, notebooks on replicas, no device given twice, the job over
# quota pending with its reason, the borrower preempted, queue status).
# Only the binary's path, the scheduler's log and its metrics port are this
# run's own (several builds' tests may run at once).
# Usage: walkthrough.sh SOURCE_DIR CARVE_BINARY.  Exit 77 (skipped) without
# kubectl, or on a branch whose carve has no scheduler command yet.
set -u
src=$1
carve=$2
cd "$src" || exit 1
py=/usr/bin/python3
if ! command -v kubectl >/dev/null 2>&1; then
	echo "SKIP: no kubectl on this machine"
	exit 77
fi
if ! "$carve" scheduler --help >/dev/null 2>&1; then
	echo "SKIP: this build of carve has no scheduler command"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The README's shell blocks, one script.
"$py" - examples/kubernetes/README.md >"$tmp/blocks.sh" <<'PY'
import sys
inside = False
for line in open(sys.argv[1]):
    if line.rstrip() == "```sh":
        inside = True
    elif line.rstrip() == "```":
        inside = False
    elif inside:
        sys.stdout.write(line)
PY
if ! grep -q 'carve scheduler' "$tmp/blocks.sh" || ! grep -q 'fake_start' "$tmp/blocks.sh"; then
	echo "FAIL: the README's blocks do not start the fake and the scheduler"
	exit 1
fi
sed -e "s#\./build/carve #$carve #g" -e "s#/tmp/carve-scheduler.log#$tmp/scheduler.log#g" \
	-e "s#127.0.0.1:10259#127.0.0.1:$port#g" "$tmp/blocks.sh" >"$tmp/steps.sh"

# One shell runs the steps (each must succeed) and then saves the end state;
# the fake and the scheduler die with it.
cat >"$tmp/run.sh" <<EOF
set -e
trap 'kill \$(jobs -p) 2>/dev/null || true' EXIT
set -o pipefail
echo "+ the README's steps"
$(cat "$tmp/steps.sh")
echo "+ the end state"
sleep 2
kubectl get pods -A -o json >"$tmp/pods.json"
kubectl get clusterqueues -o json >"$tmp/cqs.json"
kubectl get events.events.k8s.io -A -o json >"$tmp/events.json"
kill "\$sched"
wait "\$sched" 2>/dev/null || true
fake_stop
EOF
if ! timeout 300 bash "$tmp/run.sh" >"$tmp/run.out" 2>&1; then
	cat "$tmp/run.out"
	echo "--- scheduler log (tail)"
	tail -40 "$tmp/scheduler.log" 2>/dev/null
	echo "FAIL: the walk-through did not run as written"
	exit 1
fi
if ! "$py" tests/kube/walkthrough_check.py "$tmp/pods.json" "$tmp/cqs.json" "$tmp/events.json"; then
	cat "$tmp/run.out"
	echo "--- scheduler log (tail)"
	tail -40 "$tmp/scheduler.log" 2>/dev/null
	echo "FAIL: the walk-through's outcome"
	exit 1
fi
# The checker must see what is wrong: the same end state with one device
# given twice, and with a gang pod unbound, is refused.
"$py" - "$tmp/pods.json" "$tmp/twice.json" "$tmp/half.json" <<'PY'
import json, sys
pods = json.load(open(sys.argv[1]))
nb = [p for p in pods["items"] if p["metadata"]["name"].startswith("notebook-")]
nb[1]["spec"]["nodeName"] = nb[0]["spec"]["nodeName"]
nb[1]["metadata"]["annotations"]["carve.dev/devices"] = nb[0]["metadata"]["annotations"]["carve.dev/devices"]
json.dump(pods, open(sys.argv[2], "w"))
pods = json.load(open(sys.argv[1]))
g = [p for p in pods["items"] if p["metadata"]["name"].startswith("llama-pretrain-")]
del g[0]["spec"]["nodeName"]
json.dump(pods, open(sys.argv[3], "w"))
PY
for t in twice:share half:"is not bound"; do
	out=$("$py" tests/kube/walkthrough_check.py "$tmp/${t%%:*}.json" "$tmp/cqs.json" "$tmp/events.json")
	if [ $? -ne 1 ] || ! grep -q -- "${t#*:}" <<<"$out"; then
		echo "$out"
		echo "FAIL: the checker did not refuse the tampered state '${t%%:*}'"
		exit 1
	fi
done
echo "walkthrough: every step ran, the outcome is the README's"
