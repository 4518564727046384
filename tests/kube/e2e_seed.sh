#!/usr/bin/env bash
# End to end: the seed scenario of examples/kubernetes applied step by step
# with kubectl as its README walks through it, against the fake API server
# with its Job controller (pods made from Jobs) and `carve scheduler` with
# the shipped CRDs (deploy/base/crds): the training gang bound whole, the
# MIG inference pods and the notebooks bound, the over-quota job pending
# with its reason in PodScheduled, production's reclaim bound, and no device
# assigned twice at any step.  Usage: e2e_seed.sh CARVE_BINARY SOURCE_DIR
set -u
CARVE=$1
cd "$2" || exit 1
if ! command -v kubectl >/dev/null; then
	echo "e2e_seed.sh: SKIP: kubectl is not installed"
	exit 0
fi
. tests/kube/kubeenv.sh
. tests/kube/e2e_env.sh
tmp=$(mktemp -d) || exit 1
trap 'sched_stop; fake_stop; rm -rf "$tmp"' EXIT
fake_start --controllers job --max-seconds 200 || exit 1
ex=examples/kubernetes

kc apply --validate=false -f deploy/base/crds/ >/dev/null
check "CRDs applied" $?
sched_start "$tmp/sched.log" --leader-elect=false --metrics-addr 0
for f in 00-namespaces 01-gpu-configs 02-nodes 03-queues; do
	kc apply --validate=false -f $ex/$f.yaml >/dev/null
	check "$f applied" $?
done

step() { # FILE NS SELECTOR CONDITION: apply, then kubectl wait as the README does
	kc apply --validate=false -f "$ex/$1.yaml" >/dev/null
	check "$1 applied" $?
	kc wait -n "$2" --for="$4" pod $3 --timeout=60s >/dev/null
	check "$1: pods $4" $?
	lib check-devices >/dev/null
	check "$1: no device assigned twice" $?
	lib gangs >"$tmp/gangs"
	check "$1: no half-bound gang" $?
}
step 10-training-gang team-research "-l batch.kubernetes.io/job-name=llama-pretrain" condition=PodScheduled
n=$(lib count-bound team-research/llama-pretrain)
total=$(kc get pods -n team-research -l batch.kubernetes.io/job-name=llama-pretrain -o name | wc -l)
check "the training gang is bound whole ($n of $total)" $([ "$n" -gt 0 ] && [ "$n" = "$total" ] && echo 0 || echo 1)
kc apply --validate=false -f $ex/20-inference-mig.yaml >/dev/null &&
	kc apply --validate=false -f $ex/30-notebooks.yaml >/dev/null
check "MIG inference and notebooks applied" $?
kc wait -n team-production --for=condition=PodScheduled pod --all --timeout=60s >/dev/null
check "MIG inference pods bound" $?
kc wait -n team-dev --for=condition=PodScheduled pod --all --timeout=60s >/dev/null
check "notebooks bound" $?
lib show >"$tmp/show"
grep -q ' mig=[0-9a-z.]*@[0-7]' "$tmp/show" || grep -q ',mig=' "$tmp/show"
check "MIG pods carry profile@start" $?
grep -q ',replica=' "$tmp/show"
check "notebooks carry replicas" $?
lib check-devices
check "no device assigned twice" $?
step 40-research-borrows team-research "-l batch.kubernetes.io/job-name=eval-sweep" condition=PodScheduled
step 50-over-quota team-research "-l batch.kubernetes.io/job-name=pretrain-13b" condition=PodScheduled=False
kc get pods -n team-research -l batch.kubernetes.io/job-name=pretrain-13b \
	-o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].reason}{"|"}{.status.conditions[?(@.type=="PodScheduled")].message}{"\n"}{end}' >"$tmp/pending"
head -2 "$tmp/pending"
grep -q '^Unschedulable|.' "$tmp/pending"
check "the over-quota job's pods: Unschedulable with a message" $?
step 60-production-reclaims team-production "-l app=mistral-serve" condition=PodScheduled
lib check-devices
check "no device assigned twice at the end" $?
sched_stop
check "SIGTERM: exit 0 (got $SCHED_RC)" $([ "$SCHED_RC" = 0 ] && echo 0 || echo 1)
[ "$fail" -eq 0 ] || { echo "--- scheduler log"; tail -30 "$tmp/sched.log"; }
finish
