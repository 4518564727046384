# e2e_env.sh: sourced by tests/kube/e2e_*.sh after kubeenv.sh: what every
# end-to-end test of `carve scheduler` shares.
#   check NAME RESULT       count a check (RESULT 0 = pass)
#   lib ARGS...             tests/kube/e2e_lib.py against the fake
#   pod NS NAME QUEUE RESOURCE COUNT [GROUP TOTAL]
#                           a carve pod's YAML on stdout (schedulerName carve,
#                           the queue label unless QUEUE is "", a kueue pod
#                           group when GROUP is given)
#   sched_start LOG ARGS... starts `carve scheduler` in the background on the
#                           fake (SCHED_PID), stderr to LOG
#   sched_stop              SIGTERM and wait; its exit code in SCHED_RC
#   finish                  prints the tally, returns non-zero on any failure
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fail=0
pass=0

check() {
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
	else
		echo "FAIL: $1"
		fail=$((fail + 1))
	fi
}

lib() { /usr/bin/python3 "$E2E_DIR/e2e_lib.py" "$@"; }

kc() { kubectl --request-timeout=20s "$@"; }

pod() {
	local ns=$1 name=$2 queue=$3 res=$4 count=$5 group=${6:-} total=${7:-}
	cat <<POD
---
apiVersion: v1
kind: Pod
metadata:
  name: $name
  namespace: $ns
  labels:
    carve.dev/test: e2e
POD
	[ -n "$queue" ] && printf '    kueue.x-k8s.io/queue-name: "%s"\n' "$queue"
	[ -n "$group" ] && printf '    kueue.x-k8s.io/pod-group-name: "%s"\n  annotations:\n    kueue.x-k8s.io/pod-group-total-count: "%s"\n' "$group" "$total"
	cat <<POD
spec:
  schedulerName: carve
  terminationGracePeriodSeconds: 5
  containers:
  - name: main
    image: registry.example/app:1
    resources:
      requests: {"$res": "$count"}
      limits: {"$res": "$count"}
POD
}

sched_start() {
	local log=$1
	shift
	"$CARVE" scheduler "$@" 2>"$log" &
	SCHED_PID=$!
}

sched_stop() {
	SCHED_RC=
	[ -n "${SCHED_PID:-}" ] || return 0
	kill -TERM "$SCHED_PID" 2>/dev/null
	wait "$SCHED_PID"
	SCHED_RC=$?
	SCHED_PID=
}

finish() {
	echo "$(basename "$0"): $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
