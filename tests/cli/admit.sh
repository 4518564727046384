#!/usr/bin/env bash
# End-to-end tests of `carve admit`: a small scenario written to a temp
# directory (one ClusterQueue, a fit, a no-fit, a priority preemption) run
# with -o json and -o table, exactly one cycle vs. until stable; exit codes
# (0 ok, 1 bad input with file:line:col on stderr, 2 usage), --cycles,
# --policy and --seed parsing, placement on the seed scenario, and
# --mig dynamic (repartitioning an idle MIG GPU).  Usage: admit.sh CARVE_BINARY SOURCE_DIR
set -u
carve=$1
src=$2
cd "$src" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
pass=0

check() { # name, condition result
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
	else
		echo "FAIL: $1"
		fail=$((fail + 1))
	fi
}

# decision WORKLOAD TABLE: the DECISION column of that workload's row.
decision() {
	printf '%s\n' "$2" | awk -v w="$1" '$1 == w { print $3 }'
}

cat >"$tmp/ok.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: default
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - name: cpu
        nominalQuota: 8
  preemption:
    withinClusterQueue: LowerPriority
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: ns
  name: q
spec:
  clusterQueue: team
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  namespace: ns
  name: low
spec:
  queueName: q
  priority: 0
  podSets:
  - name: main
    count: 4
    template:
      spec:
        containers:
        - name: c
          resources:
            requests:
              cpu: 1
status:
  admission:
    clusterQueue: team
    podSetAssignments:
    - name: main
      count: 4
      flavors:
        cpu: default
  conditions:
  - type: QuotaReserved
    status: 'True'
    reason: QuotaReserved
    lastTransitionTime: '2026-01-01T00:00:00Z'
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  namespace: ns
  name: high
  creationTimestamp: '2026-01-01T00:01:00Z'
spec:
  queueName: q
  priority: 100
  podSets:
  - name: main
    count: 8
    template:
      spec:
        containers:
        - name: c
          resources:
            requests:
              cpu: 1
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  namespace: ns
  name: huge
  creationTimestamp: '2026-01-01T00:02:00Z'
spec:
  queueName: q
  priority: 0
  podSets:
  - name: main
    count: 100
    template:
      spec:
        containers:
        - name: c
          resources:
            requests:
              cpu: 1
EOF

# One cycle: high preempts low and waits; huge never fits.
out=$("$carve" admit --cycles 1 -o table "$tmp/ok.yaml" 2>"$tmp/err")
check "one cycle: exit 0" $?
[ "$(decision ns/low "$out")" = preempted ]
check "one cycle: low is preempted" $?
[ "$(decision ns/high "$out")" = pending ] && printf '%s\n' "$out" | grep -q 'PreemptionIssued'
check "one cycle: high waits with PreemptionIssued" $?
[ "$(decision ns/huge "$out")" = pending ] && printf '%s\n' "$out" | grep -q 'NoFit'
check "one cycle: huge is pending NoFit" $?
printf '%s\n' "$out" | head -1 | grep -qE '^WORKLOAD +QUEUE +DECISION +FLAVORS +REASON$'
check "table has a header" $?

# Until stable: low is evicted, high is admitted with its flavor.
out=$("$carve" admit -o table -f "$tmp/ok.yaml" 2>/dev/null)
check "until stable: exit 0" $?
[ "$(decision ns/high "$out")" = admitted ] && printf '%s\n' "$out" | grep -q 'cpu=default'
check "until stable: high is admitted on default" $?
[ "$(decision ns/low "$out")" = preempted ]
check "until stable: low is preempted" $?

# JSON: the three lists, deterministic bytes.
json=$("$carve" admit --cycles 1 "$tmp/ok.yaml" 2>/dev/null)
check "json: exit 0" $?
for key in '"admitted"' '"preempted"' '"pending"' '"preemptor": "ns/high"' \
	'"reason": "InClusterQueue"' '"reason": "PreemptionIssued"' '"reason": "NoFit"'; do
	printf '%s\n' "$json" | grep -qF -- "$key"
	check "json has $key" $?
done
[ "$json" = "$("$carve" admit --cycles 1 -o json "$tmp/ok.yaml" 2>/dev/null)" ]
check "json is deterministic" $?
json=$("$carve" admit --cycles 2 "$tmp/ok.yaml" 2>/dev/null)
printf '%s\n' "$json" | tr -d ' \n' | grep -qF '"admitted":[{"workload":"ns/high","clusterQueue":"team"'
check "two cycles: high admitted" $?

# Bad input: an unknown LocalQueue is an error at its position; exit 1
# (ns/low is admitted already: its admission names the ClusterQueue).
sed 's/queueName: q$/queueName: nope/' "$tmp/ok.yaml" >"$tmp/bad.yaml"
line=$(grep -n 'queueName: nope' "$tmp/bad.yaml" | sed -n 2p | cut -d: -f1)
"$carve" admit "$tmp/bad.yaml" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ]
check "unknown LocalQueue: exit 1" $?
grep -qE "bad\.yaml:$line:14: error: Workload ns/high: LocalQueue 'nope' does not exist" "$tmp/err"
check "unknown LocalQueue: file:line:col on stderr" $?
[ ! -s "$tmp/out" ]
check "bad input: nothing on stdout" $?

# A loader error (unknown field) is reported gcc-style too; exit 1.
sed 's/^  priority: 100$/  priorty: 100/' "$tmp/ok.yaml" >"$tmp/typo.yaml"
"$carve" admit -o table "$tmp/typo.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -qE "typo\.yaml:[0-9]+:[0-9]+: error: .*priorty" "$tmp/err"
check "unknown field: exit 1 with position" $?
"$carve" admit does-not-exist.yaml >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "does-not-exist.yaml" "$tmp/err"
check "missing file: exit 1 with a message" $?

# Input errors the engine cares about: each exits 1 and names file:line:col.
bad_input() { # name, sed expression, message pattern
	sed "$2" "$tmp/ok.yaml" >"$tmp/in.yaml"
	"$carve" admit "$tmp/in.yaml" >"$tmp/out" 2>"$tmp/err"
	[ $? -eq 1 ] && grep -qE "in\.yaml:[0-9]+:[0-9]+: error: .*$3" "$tmp/err" &&
		[ ! -s "$tmp/out" ]
	check "$1: exit 1 with file:line:col" $?
}
bad_input "negative quota" 's/nominalQuota: 8$/nominalQuota: "-8"/' "must not be negative"
bad_input "overflowing quantity" 's/nominalQuota: 8$/nominalQuota: 99999999999999999999/' \
	"malformed quantity"
bad_input "workload without podSets" \
	'$a ---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {namespace: ns, name: empty}\nspec: {queueName: q, podSets: []}' \
	"needs at least one podSet"

# Quantities beyond int64 milli-units (docs/admission.md, "At the edges of
# int64"): 2 x 5e15 cpu used to wrap negative and be admitted into a 1-cpu
# queue; it is an input error naming the workload, podSet and resource.
range_queue() { # the 1-cpu queue
	cat <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 1}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: ns, name: q}
spec: {clusterQueue: team}
EOF
}
range_wl() { # name, count, cpu, admitted (yes/no)
	printf -- '---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\n'
	printf 'metadata: {namespace: ns, name: %s}\nspec:\n  queueName: q\n  podSets:\n' "$1"
	printf '  - name: main\n    count: %s\n    template:\n      spec:\n        containers:\n' "$2"
	printf '        - name: c\n          resources: {requests: {cpu: "%s"}}\n' "$3"
	if [ "$4" = yes ]; then
		printf 'status:\n  admission:\n    clusterQueue: team\n    podSetAssignments:\n'
		printf '    - {name: main, count: %s, flavors: {cpu: default}}\n' "$2"
	fi
}
{ range_queue; range_wl big 2 5000000000000000 no; } >"$tmp/range.yaml"
"$carve" admit -o table "$tmp/range.yaml" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && [ ! -s "$tmp/out" ] &&
	grep -qF "range.yaml:24:33: error: workload ns/big podSet main: 2 pods x 5000000000000000 cpu overflows the largest quantity carve holds (9223372036854775807m)" "$tmp/err"
check "count x request beyond int64: exit 1, an error at the workload" $?
# Given as admitted, three 4e15-cpu workloads would take the queue's usage
# past INT64_MAX and make a 1-cpu workload fit: the third is refused, and
# the small one stays pending.
{
	range_queue
	for w in a b c; do range_wl $w 1 4000000000000000 yes; done
	range_wl small 1 1 no
} >"$tmp/given.yaml"
"$carve" admit -o table "$tmp/given.yaml" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] && [ "$(grep -c 'error:' "$tmp/err")" -eq 1 ] &&
	grep -qF "given.yaml:62:33: error: workload ns/c: admitted, it would take the usage of default/cpu in ClusterQueue team or its cohorts past the largest quantity carve holds (9223372036854775807m)" "$tmp/err"
check "usage beyond int64 by workloads given as admitted: the third is refused" $?

# Usage errors exit 2.
usage() { # name, args...
	local name=$1
	shift
	"$carve" admit "$@" >/dev/null 2>&1
	[ $? -eq 2 ]
	check "usage: $name: exit 2" $?
}
usage "no path"
usage "bad option" --bogus "$tmp/ok.yaml"
usage "bad format" -o xml "$tmp/ok.yaml"
usage "cycles 0" --cycles 0 "$tmp/ok.yaml"
usage "cycles -1" --cycles -1 "$tmp/ok.yaml"
usage "cycles abc" --cycles abc "$tmp/ok.yaml"
usage "cycles 1x" --cycles 1x "$tmp/ok.yaml"
usage "cycles empty" --cycles "" "$tmp/ok.yaml"
usage "cycles too many" --cycles 1001 "$tmp/ok.yaml"
usage "cycles overflow" --cycles 99999999999999999999 "$tmp/ok.yaml"
usage "cycles without value" "$tmp/ok.yaml" --cycles
"$carve" admit --help >/dev/null 2>&1
check "help: exit 0" $?

# The Volcano example (docs/volcano-kai.md): queues and PodGroups admit.
"$carve" admit examples/volcano -o table >/dev/null 2>&1
check "examples/volcano: exit 0" $?

# The seed scenario: research borrows production's idle MIG slices and
# production takes them back by preemption.
seed=$("$carve" admit -o json examples/seed-scenario 2>/dev/null)
check "seed: exit 0" $?
printf '%s' "$seed" | python3 -c '
import json, sys
r = json.load(sys.stdin)
adm = {a["workload"]: a for a in r["admitted"]}
pre = {p["workload"]: p for p in r["preempted"]}
assert adm["team-research/ablation"]["borrowing"] is True
assert adm["team-research/ablation"]["podSets"][0]["flavors"]["nvidia.com/mig-3g.40gb"] == "a100-mig"
assert "team-production/serving-mistral" in adm
p = pre["team-research/eval-sweep"]
assert p["preemptor"] == "team-production/serving-mistral" and p["reason"] == "InCohortReclamation"
'
check "seed: research borrows production MIG, production reclaims it" $?

# The seed has NodePools, so admission places: every admitted pod has a node
# and one 3g.40gb MIG instance, and no two pods share an instance.
printf '%s' "$seed" | python3 -c '
import json, sys
r = json.load(sys.stdin)
seen = set()
for a in r["admitted"]:
    for ps in a["podSets"]:
        assert len(ps["pods"]) == ps["count"], a["workload"]
        for pod in ps["pods"]:
            assert pod["node"].startswith("prod-"), pod
            (g,) = pod["gpus"]
            assert g["mig"]["profile"] == "3g.40gb", g
            k = (pod["node"], g["index"], g["mig"]["start"])
            assert k not in seen, k
            seen.add(k)
'
check "seed: admitted pods placed on distinct MIG instances" $?

"$carve" admit --policy nope examples/seed-scenario >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "binpack" "$tmp/err"
check "--policy: unknown name is a usage error listing the policies" $?
"$carve" admit --seed x examples/seed-scenario >/dev/null 2>&1
[ $? -eq 2 ]
check "--seed: not a number is a usage error" $?
"$carve" admit --policy spread --seed 7 -o table examples/seed-scenario >/dev/null 2>&1
check "--policy spread --seed 7: exit 0" $?

# --mig dynamic: a NodePool of idle 2 x 3g.40gb A100s and a workload asking
# for 1g.10gb instances.  Static: no instance exists, pending; dynamic: one
# GPU is repartitioned to 7 x 1g.10gb and reported.
mkdir -p "$tmp/dyn"
cat >"$tmp/dyn/dyn.yaml" <<'EOF'
apiVersion: carve.dev/v1alpha1
kind: NodePool
metadata:
  name: mig
spec:
  count: 2
  gpu: {model: A100-80GB, count: 2}
  sharing:
    mode: mig
    mig:
      layout: {"3g.40gb": 2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: mig
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/mig-1g.10gb]
    flavors:
    - name: mig
      resources:
      - name: cpu
        nominalQuota: 8
      - name: nvidia.com/mig-1g.10gb
        nominalQuota: 8
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: ns
  name: q
spec:
  clusterQueue: team
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  namespace: ns
  name: small
spec:
  queueName: q
  podSets:
  - name: main
    count: 2
    template:
      spec:
        containers:
        - name: c
          resources:
            requests:
              cpu: 1
              nvidia.com/mig-1g.10gb: 2
EOF
st=$("$carve" admit -o json "$tmp/dyn" 2>"$tmp/err")
check "--mig static (default): exit 0" $?
printf '%s' "$st" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert [p["workload"] for p in r["pending"]] == ["ns/small"], r
assert "repartitions" not in r, r
'
check "--mig static: a 1g.10gb pod does not fit 3g.40gb layouts" $?
dyn=$("$carve" admit --mig dynamic -o json "$tmp/dyn" 2>"$tmp/err")
check "--mig dynamic: exit 0" $?
printf '%s' "$dyn" | python3 -c '
import json, sys
r = json.load(sys.stdin)
(a,) = r["admitted"]
assert a["workload"] == "ns/small", a
(rp,) = r["repartitions"]
assert rp["gpu"] == 0 and rp["from"] == ["3g.40gb@0", "3g.40gb@4"], rp
assert rp["to"] == ["1g.10gb@%d" % i for i in range(7)], rp
seen = set()
for pod in a["podSets"][0]["pods"]:
    assert pod["node"] == rp["node"], pod
    for g in pod["gpus"]:
        assert g["index"] == 0 and g["mig"]["profile"] == "1g.10gb", g
        assert g["mig"]["start"] not in seen
        seen.add(g["mig"]["start"])
assert len(seen) == 4
'
check "--mig dynamic: admitted after a reported repartition to 7 x 1g.10gb" $?
"$carve" admit --mig dynamic -o table "$tmp/dyn" 2>/dev/null |
	grep -q "^repartition .* GPU 0: 3g.40gb@0,3g.40gb@4 -> 1g.10gb@0,"
check "--mig dynamic -o table: a line per repartition" $?
# Requests no GPU can serve are errors at the field's file:line:col; the
# workload is skipped (test_admit_place impossible_requests shows the others
# are still admitted), and like any input error: exit 1, nothing on stdout.
impossible() { # name, sed expression, field text, message pattern
	sed "$2" "$tmp/dyn/dyn.yaml" >"$tmp/imp.yaml"
	local ln col
	ln=$(grep -n -F "$3" "$tmp/imp.yaml" | head -1 | cut -d: -f1)
	col=$(sed -n "${ln}p" "$tmp/imp.yaml" | awk -v f="$3" '{ print index($0, f) }')
	"$carve" admit "$tmp/imp.yaml" >"$tmp/out" 2>"$tmp/err"
	[ $? -eq 1 ] && [ ! -s "$tmp/out" ] &&
		grep -qE "imp\.yaml:$ln:$col: error: Workload ns/small podSet main: $4" "$tmp/err"
	check "$1: exit 1, error at file:line:col naming the field" $?
}
impossible "MIG profile no model offers" 's/mig-1g.10gb: 2$/mig-5g.99gb: 2/' \
	"nvidia.com/mig-5g.99gb" "resource nvidia.com/mig-5g.99gb: no GPU model offers MIG profile '5g.99gb'"
impossible "gpu-fraction above 1" \
	's/^    template:$/&\n      metadata: {annotations: {gpu-fraction: "1.5"}}/' \
	"gpu-fraction" "annotation gpu-fraction '1.5' is not a number above 0 and below 1"
impossible "gpu-fraction far out of range" \
	's/^    template:$/&\n      metadata: {annotations: {gpu-fraction: "1e300"}}/' \
	"gpu-fraction" "annotation gpu-fraction '1e300' is not a number above 0 and below 1"
impossible "gpu-memory above the largest GPU" \
	's/^    template:$/&\n      metadata: {annotations: {gpu-fraction: "0.5", gpu-memory: "200000"}}/' \
	"gpu-memory" "annotation gpu-memory 200000 MiB is more than any GPU has \(largest: A100-80GB, 81920 MiB\)"

# MIG quota in physical slices: the queue covers carve.dev/mig-memory-slices
# (nominal 8); each 1g.10gb on an A100-80GB is 1 slice, charged per pod and
# shown in the podSet's usage.
sed -e 's|coveredResources: \[cpu, nvidia.com/mig-1g.10gb\]|coveredResources: [cpu, nvidia.com/mig-1g.10gb, carve.dev/mig-memory-slices]|' \
	-e '/^      - name: nvidia.com\/mig-1g.10gb$/{n;s|$|\n      - name: carve.dev/mig-memory-slices\n        nominalQuota: 8|}' \
	"$tmp/dyn/dyn.yaml" >"$tmp/slices.yaml"
sl=$("$carve" admit --mig dynamic -o json "$tmp/slices.yaml" 2>"$tmp/err")
check "mig-memory-slices: exit 0" $?
printf '%s' "$sl" | python3 -c '
import json, sys
r = json.load(sys.stdin)
(a,) = r["admitted"]
ps = a["podSets"][0]
assert ps["usage"]["carve.dev/mig-memory-slices"] == "4", ps
assert ps["usage"]["nvidia.com/mig-1g.10gb"] == "4", ps
assert ps["flavors"]["carve.dev/mig-memory-slices"] == "mig", ps
'
check "mig-memory-slices: charged per pod, shown in usage" $?

# A preemptor keeps its claim: in a BestEffortFIFO queue, "small" reclaims
# the slot "borrower" borrows while an older head ("big") cannot fit even
# with it; the eviction gives "big" another try, and "borrower" must not
# take the slot back in that cycle, over and over.  small is admitted,
# borrower stays preempted, and the run is stable.
cat >"$tmp/claim.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: research}
spec:
  cohortName: org
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - {name: nvidia.com/gpu, nominalQuota: "0", borrowingLimit: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: production}
spec:
  cohortName: org
  namespaceSelector: {}
  queueingStrategy: BestEffortFIFO
  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources:
      - {name: nvidia.com/gpu, nominalQuota: "3"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: r, name: research}
spec: {clusterQueue: research}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: p, name: production}
spec: {clusterQueue: production}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {namespace: p, name: running, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  queueName: production
  priority: 1000
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          resources: {requests: {nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}
status:
  admission:
    clusterQueue: production
    podSetAssignments:
    - name: main
      flavors: {nvidia.com/gpu: default}
      resourceUsage: {nvidia.com/gpu: "2"}
      count: 1
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {namespace: r, name: borrower, creationTimestamp: "2026-01-01T00:00:01Z"}
spec:
  queueName: research
  priority: 1000
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
status:
  admission:
    clusterQueue: research
    podSetAssignments:
    - name: main
      flavors: {nvidia.com/gpu: default}
      resourceUsage: {nvidia.com/gpu: "1"}
      count: 1
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {namespace: p, name: big, creationTimestamp: "2026-01-01T00:00:02Z"}
spec:
  queueName: production
  priority: 1000
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          resources: {requests: {nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {namespace: p, name: small, creationTimestamp: "2026-01-01T00:00:03Z"}
spec:
  queueName: production
  priority: 1000
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
EOF
cl=$("$carve" admit -o table "$tmp/claim.yaml" 2>"$tmp/err")
check "preemptor claim: exit 0" $?
[ "$(decision p/small "$cl")" = admitted ] && [ "$(decision r/borrower "$cl")" = preempted ] &&
	[ "$(decision p/big "$cl")" = pending ]
check "preemptor claim: small admitted, borrower preempted, big pending" $?

"$carve" admit --mig sometimes "$tmp/dyn" >/dev/null 2>&1
[ $? -eq 2 ]
check "--mig: a bad mode is a usage error" $?

# ---- output that cannot lie ------------------------------------------------------

# A workload whose name carries a newline and an ANSI escape: nothing from
# the input reaches the terminal raw, and no forged row appears, whether
# the name is refused (the diagnostic escapes it) or admitted (the table
# does).
sed 's/^  name: huge$/  name: "w\\nINJECTED admitted\\e[31m"/' "$tmp/ok.yaml" >"$tmp/inject.yaml"
"$carve" admit -o table "$tmp/inject.yaml" >"$tmp/out" 2>"$tmp/err"
! grep -q $'\e' "$tmp/out" "$tmp/err" && ! grep -q '^INJECTED' "$tmp/out" "$tmp/err"
check "injected name: no raw escape, no forged row" $?
grep -qF 'w\nINJECTED admitted\x1B[31m' "$tmp/out" "$tmp/err"
check "injected name: printed escaped" $?

# Standard input as one YAML stream, named <stdin> in diagnostics.
"$carve" admit -o table - <"$tmp/ok.yaml" >"$tmp/out" 2>"$tmp/err"
check "admit - (standard input): exit 0" $?
[ "$(decision ns/high "$(cat "$tmp/out")")" = admitted ]
check "admit -: the same decisions" $?
"$carve" admit - <"$tmp/bad.yaml" >/dev/null 2>"$tmp/err"
grep -qE "^<stdin>:[0-9]+:14: error: Workload ns/high: LocalQueue 'nope'" "$tmp/err"
check "admit -: diagnostics name <stdin>" $?


# Jobs, JobSets, pods and Volcano Jobs as workloads (tests/data/jobs).
J=tests/data/jobs
"$carve" admit -o json $J/single-clusterqueue.yaml $J/sample-job.yaml >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] && grep -q '"workload": "default/sample-job-\*"' "$tmp/out" &&
	grep -q '"count": 3' "$tmp/out" && grep -q '"memory": "600Mi"' "$tmp/out" &&
	! grep -q '"pending": \[$' "$tmp/out"
check "Kueue single-ClusterQueue setup admits its sample Job (rc $rc)" $?
"$carve" admit -o table $J/single-clusterqueue.yaml $J/kinds.yaml $J/badrefs.yaml >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && [ "$(decision default/listed "$(cat "$tmp/out")")" = admitted ] &&
	[ "$(decision default/unranked "$(cat "$tmp/out")")" = admitted ] &&
	! grep -q not-kueues "$tmp/out" "$tmp/err" && ! grep -q 'default/lost ' "$tmp/out"
check "kinds carve does not read never stop admit; a List's Job is admitted (rc $rc)" $?
grep -q "^$J/kinds.yaml:5:7: warning: kind CronJob (batch.volcano.sh/v1alpha1) is not read by carve; document skipped$" "$tmp/err" &&
	grep -q "^$J/kinds.yaml:28:9: warning: kind Service (v1) is not read" "$tmp/err" &&
	[ "$(grep -c 'is not read by carve' "$tmp/err")" -eq 5 ] && ! grep -q error "$tmp/err"
check "one warning per skipped kind, at file:line, with its apiVersion" $?
grep -q "^$J/badrefs.yaml:9:5: warning: Job default/lost: label kueue.x-k8s.io/queue-name names LocalQueue 'no-such-queue'" "$tmp/err" &&
	grep -q "^$J/badrefs.yaml:25:5: warning: Job default/unranked: label kueue.x-k8s.io/priority-class names 'no-such-class'" "$tmp/err"
check "a missing LocalQueue or priority class is a warning at its label" $?
"$carve" admit -o json $J/single-clusterqueue.yaml $J/groups.yaml $J/volcano-kai.yaml >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && grep -q '"workload": "default/js"' "$tmp/out" && grep -q '"workload": "default/g"' "$tmp/out" &&
	grep -q '"workload": "default/mpi"' "$tmp/out" && grep -q '"workload": "default/kai-0"' "$tmp/out" &&
	grep -q '"cpu": "4"' "$tmp/out" && ! grep -q '"workload": "default/h"' "$tmp/out"
check "JobSet, pod group, Volcano Job and KAI pod admitted (rc $rc)" $?
grep -q "groups.yaml:65:17: warning: Pod group default/h: kueue.x-k8s.io/pod-group-total-count is 3 but the input has 1" "$tmp/err" &&
	grep -q "volcano-kai.yaml:36:10: warning: Volcano Job default/nowhere: Volcano Queue 'missing' is not defined" "$tmp/err"
check "an incomplete pod group and an unknown Volcano queue are warned about" $?

"$carve" admit -o table $J/volcano-weight.yaml >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c "only a weight (the proportion plugin); carve models the capacity plugin only" "$tmp/err")" -eq 2 ] &&
	! grep -q 'd/pg' "$tmp/out"
check "a weight-only Volcano Queue is refused with a message naming the proportion plugin (rc $rc)" $?

# Volcano Job gangs: a task's minAvailable (default replicas), the Job's
# default the sum of its tasks'; partial admission shows the gang's size.
"$carve" admit -o json tests/data/gangs/volcano-min.yaml >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && tr -d ' \n' <"$tmp/out" >"$tmp/flat" &&
	grep -q '"workload":"default/one-task","clusterQueue":"small","podSets":\[{"name":"w","count":2,' "$tmp/flat" &&
	grep -q '"workload":"default/two-tasks","clusterQueue":"three","podSets":\[{"name":"m","count":1,.*{"name":"w","count":2,' "$tmp/flat"
check "a Volcano Job's gang: one task's own minAvailable, several tasks' sum (rc $rc)" $?
grep -q "^tests/data/gangs/volcano-min.yaml:58:1: warning: Volcano Job other/odd: minAvailable 1 across tasks differs from the sum of its tasks' minAvailable (2)" "$tmp/err" &&
	[ "$(wc -l <"$tmp/err")" -eq 1 ]
check "a Job-wide minAvailable other than its tasks' sum is warned about" $?

# A KAI group whose first pod has no queue label is queued from its first labelled pod.
"$carve" admit -o json tests/data/gangs/kai-group.yaml >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && tr -d ' \n' <"$tmp/out" | grep -q '"workload":"default/grp","clusterQueue":"ml","podSets":\[{"name":"main","count":3,'
check "a KAI group led by an unlabelled pod is still queued, with all its pods (rc $rc)" $?

# More than 256 paths: no limit.
mkdir "$tmp/many"
for i in $(seq 300); do
	printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f%d}\n' \
		"$i" >"$tmp/many/f$i.yaml"
done
"$carve" admit "$tmp/ok.yaml" "$tmp"/many/*.yaml >/dev/null 2>"$tmp/err"
ok=$?   # before the message runs commands of its own
check "301 paths: exit 0 (got: $(head -1 "$tmp/err"))" $ok

# A failed write to standard output is an error with a message.
if [ -w /dev/full ]; then
	for fmt in json table; do
		"$carve" admit -o $fmt "$tmp/ok.yaml" >/dev/full 2>"$tmp/err"
		rc=$?
		[ $rc -eq 1 ] && grep -q '^carve admit: cannot write output: No space left on device$' \
			"$tmp/err"
		check "admit -o $fmt >/dev/full: exit 1 with a message (rc $rc)" $?
	done
fi

echo "admit.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
