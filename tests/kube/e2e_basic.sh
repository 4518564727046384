#!/usr/bin/env bash
# End to end: `carve scheduler` against the fake API server, objects applied
# with kubectl (tests/data/kube: three pools, three ClusterQueues).  A gang
# of 4 pods x 2 H100 is bound whole (borrowing prod's idle quota) with a
# devices annotation per pod; two MIG pods get the two legal 3g.40gb slots;
# three notebooks get distinct time-slice replicas; a fourth notebook over
# dev's quota stays pending with PodScheduled=False, reason Unschedulable and
# the engine's words, and a FailedScheduling event; ClusterQueue status is
# written; prod reclaims its H100s: the gang gets DisruptionTarget and is
# deleted whole, prod's pod is bound; no device is ever assigned twice; a
# ClusterQueue naming a missing flavor and one with an unknown field are
# reported (the log, an InvalidObject event) and stop nothing; a pod asking
# for 64 GPUs stays pending with its reason;
# SIGTERM ends it with 0.  Usage: e2e_basic.sh CARVE_BINARY SOURCE_DIR
set -u
CARVE=$1
cd "$2" || exit 1
if ! command -v kubectl >/dev/null; then
	echo "e2e_basic.sh: SKIP: kubectl is not installed"
	exit 0
fi
. tests/kube/kubeenv.sh
. tests/kube/e2e_env.sh
tmp=$(mktemp -d) || exit 1
trap 'sched_stop; fake_stop; rm -rf "$tmp"' EXIT
fake_start --max-seconds 170 || exit 1

kc apply --validate=false -f tests/data/kube/crds.yaml >/dev/null &&
	kc apply --validate=false -f tests/data/kube/cluster.yaml >/dev/null
check "cluster and queues applied" $?
cat >"$tmp/broken.yaml" <<'Y'
apiVersion: carve.dev/v1alpha1
kind: ClusterQueue
metadata:
  name: broken
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: no-such-flavor
      resources:
      - name: nvidia.com/gpu
        nominalQuota: "1"
---
apiVersion: carve.dev/v1alpha1
kind: ClusterQueue
metadata:
  name: typo
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - name: nvidia.com/gpu
        nominalQuotaa: "1"
Y
kc apply --validate=false -f "$tmp/broken.yaml" >/dev/null
check "a broken ClusterQueue applied" $?

sched_start "$tmp/sched.log" --leader-elect=false --metrics-addr 127.0.0.1:0 -v
{
	for i in 0 1 2 3; do pod team-a train-$i research nvidia.com/gpu 2 train 4; done
	pod team-b infer-0 prod nvidia.com/mig-3g.40gb 1
	pod team-b infer-1 prod nvidia.com/mig-3g.40gb 1
	pod team-a huge-0 research nvidia.com/gpu 64
} >"$tmp/batch1.yaml"
kc apply --validate=false -f "$tmp/batch1.yaml" >/dev/null
check "gang and MIG pods applied" $?
lib wait-bound team-a/train-0 team-a/train-1 team-a/train-2 team-a/train-3 \
	team-b/infer-0 team-b/infer-1 --timeout 40
check "gang and MIG pods bound" $?
# the notebooks one by one: the fourth is over dev's quota (3 replicas)
for i in 0 1 2 3; do pod team-b nb-$i dev nvidia.com/gpu 1; done >"$tmp/nb.yaml"
kc apply --validate=false -f "$tmp/nb.yaml" >/dev/null
lib wait-bound team-b/nb-0 team-b/nb-1 team-b/nb-2 --timeout 40
check "three notebooks bound" $?
lib wait-cond team-b/nb-3 PodScheduled False --timeout 40
check "the fourth notebook has PodScheduled=False" $?
lib show >"$tmp/show1"
cat "$tmp/show1"

# the gang: whole, on H100 nodes, two GPUs each
n=$(grep -c '^team-a/train-[0-3] train-[01] gpu=[0-3];gpu=[0-3]$' "$tmp/show1")
check "gang: 4 pods on train nodes with 2 GPUs each (got $n)" $([ "$n" = 4 ] && echo 0 || echo 1)
lib gangs >"$tmp/gangs"
check "no half-bound gang" $?
# MIG pods on the legal 3g.40gb slots of the A100 (start 0 and 4)
slots=$(awk '$1 ~ /^team-b\/infer-/ {print $2, $3}' "$tmp/show1" | sort | tr '\n' ' ')
check "MIG pods on mig-0 slots @0 and @4 (got $slots)" \
	$([ "$slots" = "mig-0 gpu=0,mig=3g.40gb@0 mig-0 gpu=0,mig=3g.40gb@4 " ] && echo 0 || echo 1)
# notebooks: replicas of the L40S
n=$(grep -c '^team-b/nb-[0-2] dev-0 gpu=0,replica=[0-3]$' "$tmp/show1")
check "notebooks on dev-0 replicas (got $n)" $([ "$n" = 3 ] && echo 0 || echo 1)
lib check-devices
check "no device assigned twice" $?
# the over-quota notebook: pending with the engine's reason
c=$(lib cond team-b/nb-3 PodScheduled)
echo "nb-3 PodScheduled: $c"
case $c in False\|Unschedulable\|?*) r=0 ;; *) r=1 ;; esac
check "nb-3: PodScheduled False, Unschedulable, a message" $r
printf '%s\n' "$c" | grep -qi 'quota'
check "nb-3: the message names the quota" $?
lib events team-b/nb-3 | grep -q '^Warning FailedScheduling '
check "nb-3: a FailedScheduling event" $?
lib events team-a/train-0 | grep -q '^Normal Scheduled '
check "train-0: a Scheduled event" $?
# the flavors annotation on a bound pod
kc get pod -n team-a train-0 -o jsonpath='{.metadata.annotations.carve\.dev/flavors}' |
	grep -q 'nvidia.com/gpu=h100'
check "train-0: carve.dev/flavors names h100" $?
# queue status (Kueue's ClusterQueueStatus fields)
st=$(lib status carve.dev/v1alpha1/clusterqueues/research)
echo "research status: $st"
printf '%s' "$st" | grep -q '"admittedWorkloads": 1' &&
	printf '%s' "$st" | grep -q '"borrowed": "4"' &&
	printf '%s' "$st" | grep -q '"total": "8"'
check "ClusterQueue research: 1 admitted, 8 GPUs used, 4 borrowed" $?
st=$(lib status carve.dev/v1alpha1/clusterqueues/dev)
printf '%s' "$st" | grep -q '"pendingWorkloads": 1'
check "ClusterQueue dev: 1 pending" $?
# the broken ClusterQueue: reported, named
grep -q 'ClusterQueue broken' "$tmp/sched.log"
check "the broken ClusterQueue is reported by name" $?
# a ClusterQueue with an unknown field: reported, with an event naming the field
grep -q 'ClusterQueue typo.*nominalQuotaa' "$tmp/sched.log"
check "the unknown field of ClusterQueue typo is reported" $?
lib events default/typo | grep -q '^Warning InvalidObject .*nominalQuotaa'
check "ClusterQueue typo: an InvalidObject event naming the field" $?
# a pod asking for more than any node has: pending with the reason, others bound
c=$(lib cond team-a/huge-0 PodScheduled)
echo "huge-0 PodScheduled: $c"
case $c in False\|Unschedulable\|?*) r=0 ;; *) r=1 ;; esac
check "huge-0 (64 GPUs): PodScheduled False, Unschedulable, a message" $r
# metrics: Kueue's names
port=$(sed -n 's/.*serving \/metrics.* on port \([0-9]*\).*/\1/p' "$tmp/sched.log" | head -1)
/usr/bin/python3 - "$port" >"$tmp/metrics" <<'P'
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())
P
grep -q '^kueue_admitted_active_workloads{cluster_queue="research"} 1' "$tmp/metrics" &&
	grep -q '^carve_binds_total{result="success"} 9' "$tmp/metrics"
check "metrics: research admitted, 9 binds" $?

# prod reclaims its 4 H100s: the borrowing gang is preempted whole
pod team-b serve-0 prod nvidia.com/gpu 4 >"$tmp/serve.yaml"
kc apply --validate=false -f "$tmp/serve.yaml" >/dev/null
lib wait-gone team-a/train-0 team-a/train-1 team-a/train-2 team-a/train-3 --timeout 40
check "the borrowing gang is preempted (deleted)" $?
lib events team-a/train-0 | grep -q '^Normal Preempted '
check "train-0: a Preempted event" $?
lib wait-bound team-b/serve-0 --timeout 40
check "prod's pod is bound after the reclaim" $?
lib show >"$tmp/show2"
grep -q '^team-b/serve-0 train-[01] gpu=[0-3];gpu=[0-3];gpu=[0-3];gpu=[0-3]$' "$tmp/show2"
check "serve-0 holds 4 H100s" $?
lib check-devices
check "no device assigned twice after preemption" $?
lib cond team-b/nb-3 PodScheduled | grep -q '^False|Unschedulable|'
check "nb-3 still pending" $?

sched_stop
check "SIGTERM: exit 0 (got $SCHED_RC)" $([ "$SCHED_RC" = 0 ] && echo 0 || echo 1)
[ "$fail" -eq 0 ] || { echo "--- scheduler log"; tail -40 "$tmp/sched.log"; }
finish
