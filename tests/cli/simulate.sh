#!/usr/bin/env bash
# End-to-end tests of `carve simulate --mode replay`: a hand-checkable
# scenario (one queue, 4 GPUs, three openb rows of known durations) as
# JSON and table, the {"settings", "runs"} shape and its settings,
# --compare lists (order, the deprecated kube-default alias and its
# warning, bad lists as usage errors naming the item), --baseline,
# --mig-delay, --seeds for replay (median/min/max/per_seed, determinism),
# determinism, --until,
# a DIR argument, invalid jobs (a pod no node fits; jobs without a queue
# and two ClusterQueues) as file:line errors or, with --skip-invalid, a
# count, usage errors, that --mode fill still runs, and openb lists with
# only the five required columns (and one missing a required column).
# Usage: simulate.sh CARVE_BINARY SOURCE_DIR
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

cat >"$tmp/m.yaml" <<'EOF'
apiVersion: carve.dev/v1alpha1
kind: NodePool
metadata: {name: h100}
spec: {count: 1, namePrefix: n-, gpu: {model: H100-80GB, count: 4}, sharing: {mode: exclusive}, cpu: "64", memory: 512Gi, labels: {pool: h100}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {pool: h100}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: "1000"}
      - {name: memory, nominalQuota: "10Ti"}
      - {name: nvidia.com/gpu, nominalQuota: "4"}
EOF
hdr=name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
# a: 2 GPUs 0..100, b: 2 GPUs 0..50, c: 4 GPUs arrives 10, waits until 100, runs to 200.
{
	echo "$hdr"
	echo "a,1000,1024,2,1000,,LS,Running,1000,1100,1000"
	echo "b,1000,1024,2,1000,,LS,Running,1000,1050,1000"
	echo "c,1000,1024,4,1000,,LS,Running,1010,1110,1010"
} >"$tmp/trace.csv"

out=$("$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" -o json 2>"$tmp/err")
check "replay exits 0" $?
printf '%s\n' "$out" | grep -q '"mode": "replay"'
check "mode replay" $?
printf '%s\n' "$out" | grep -q '"horizon_s": 200,'
check "horizon 200" $?
printf '%s\n' "$out" | grep -q '"gpu_allocation_pct": 77.2727,'
check "allocation 77.27 % in the window" $?
printf '%s\n' "$out" | grep -q '"p95": 90'
check "c waited 90 s" $?
for f in effective_utilisation_pct first_time_success_pct wait_first_gpu_s quota preemptions \
	fragmentation_pct gpu_hours_per_job series wait_cdf queues policy seed; do
	printf '%s\n' "$out" | grep -q "\"$f\":"
	check "field $f" $?
done

again=$("$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" -o json 2>/dev/null)
[ "$out" = "$again" ]
check "deterministic" $?

# jq-like checks: pyj FILE EXPR (a Python expression over d, the JSON).
pyj() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
printf '%s\n' "$out" >"$tmp/one.json"
pyj "$tmp/one.json" 'list(d) == ["settings", "runs"] and list(d["runs"]) == ["carve"]'
check "one run: {settings, runs: {carve}}" $?
pyj "$tmp/one.json" 'd["settings"] == {"trace": "'"$tmp"'/trace.csv", "manifests": ["'"$tmp"'/m.yaml"], "policy": "binpack", "mig": "static", "mig_delay_s": 60, "gang_timeout_s": 1800, "until_s": None, "seed": 42, "models": ["carve"], "window": d["runs"]["carve"].get("window", {"start_s": 0, "end_s": 110, "from": "trace"})}'
check "settings: trace, manifests, defaults, window" $?
pyj "$tmp/one.json" 'd["settings"]["window"]["end_s"] == 110 and d["settings"]["window"]["start_s"] == 0'
check "settings window: first arrival 0 to c's 10 + 100" $?

"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --compare exclusive,device-plugin,kueue \
	-o json >"$tmp/cmp.json" 2>"$tmp/err"
check "compare of three exits 0" $?
pyj "$tmp/cmp.json" 'list(d["runs"]) == ["carve", "exclusive", "device-plugin", "kueue"] and d["settings"]["models"] == list(d["runs"])'
check "compare: carve first, then the baselines as listed" $?
pyj "$tmp/cmp.json" 'd["runs"]["carve"]["scheduler"] == "carve" and all(d["runs"][m]["mode"] == "replay" for m in d["runs"])'
check "compare: every run a replay" $?
! grep -q deprecated "$tmp/err"
check "compare: no deprecation warning" $?
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --compare kueue,exclusive -o json \
	>"$tmp/cmp2.json" 2>/dev/null
pyj "$tmp/cmp2.json" 'list(d["runs"]) == ["carve", "kueue", "exclusive"]'
check "compare: any subset, in the order given" $?
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --compare kube-default -o json \
	>"$tmp/alias.json" 2>"$tmp/err"
check "deprecated alias exits 0" $?
pyj "$tmp/alias.json" 'list(d["runs"]) == ["carve", "device-plugin"]' &&
	grep -q "warning: 'kube-default' is deprecated: it now names the device-plugin model" "$tmp/err"
check "kube-default: device-plugin, with a warning on stderr" $?
for bad in "exclusive,slurm:unknown model 'slurm'" "kueue,kueue:model 'kueue' is given twice" \
	"kube-default,device-plugin:model 'device-plugin' is given twice" \
	"exclusive,:an empty item" "carve:'carve' is not a baseline" ",kueue:an empty item"; do
	list=${bad%%:*}
	want=${bad#*:}
	"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --compare "$list" >/dev/null 2>"$tmp/err"
	[ $? -eq 2 ] && grep -qF -- "$want" "$tmp/err"
	ok=$?
	check "--compare '$list': usage error saying $want (got: $(cat "$tmp/err"))" $ok
done
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --compare kueue --baseline exclusive \
	>/dev/null 2>&1
check "--compare with --baseline: usage" $(($? != 2))

"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --baseline exclusive -o json \
	>"$tmp/base.json" 2>/dev/null
pyj "$tmp/base.json" 'list(d["runs"]) == ["exclusive"] and d["settings"]["models"] == ["exclusive"]'
check "--baseline runs only that model" $?

tab=$("$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --compare exclusive 2>/dev/null)
printf '%s\n' "$tab" | grep -q '^ *carve  *exclusive  *carve vs baseline$'
check "table by default: header, carve first, a difference column" $?
printf '%s\n' "$tab" | grep -q '^GPU allocation (held)  *77.3 %  *77.3 %  *$'
check "table allocation row: one decimal, labelled in words" $?
printf '%s\n' "$tab" | grep -q '^Jobs completed  *3  *3  *0$'
check "table: counts as integers, difference 0" $?
printf '%s\n' "$tab" | grep -q '^Window  *0 s to 1m 50s (the trace'"'"'s span'
check "table: settings at the top, durations in words" $?
printf '%s\n' "$tab" | grep -q '^  Wait to first GPU, p95  *1m 30s  *'
check "table: waits as durations" $?
printf '%s\n' "$tab" | grep -q '[0-9]\.[0-9][0-9][0-9]'
check "table: no raw decimals" $(($? == 0))

# --mig-delay is --mig dynamic's repartition delay, recorded in the settings.
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --mig dynamic --mig-delay 2m -o json \
	>"$tmp/mig.json" 2>/dev/null
pyj "$tmp/mig.json" 'd["settings"]["mig"] == "dynamic" and d["settings"]["mig_delay_s"] == 120'
check "--mig-delay 2m: in the settings" $?
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --mig-delay 2m >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- '--mig-delay is the repartition delay of --mig dynamic' "$tmp/err"
check "--mig-delay without --mig dynamic: usage error" $?
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --mig dynamic --mig-delay soon \
	>/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- '--mig-delay wants a duration' "$tmp/err"
check "--mig-delay soon: usage error" $?

# The same three jobs in carve's trace format, found in DIR beside the manifests.
mkdir "$tmp/dir" && cp "$tmp/m.yaml" "$tmp/dir/"
{
	echo "name,arrival,duration,cpu,memory,gpu"
	echo "a,0,100,1,1Gi,2"
	echo "b,0,50,1,1Gi,2"
	echo "c,10,100,1,1Gi,4"
} >"$tmp/dir/jobs.trace.csv"
"$carve" simulate "$tmp/dir" -o json >"$tmp/dir.json" 2>"$tmp/err"
python3 -c 'import json, sys; a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2])); sys.exit(a["runs"] != b["runs"])' "$tmp/dir.json" "$tmp/one.json"
check "DIR argument (carve trace format): the same runs" $?
[ ! -s "$tmp/err" ]
check "DIR argument: no diagnostics" $?

# A row no node fits (8 GPUs on a 4-GPU node).
cp "$tmp/trace.csv" "$tmp/bad.csv"
echo "huge,1000,1024,8,1000,,LS,Running,1020,1120,1020" >>"$tmp/bad.csv"
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/bad.csv" >/dev/null 2>"$tmp/err"
check "no-fit exits 1" $(($? != 1))
grep -q "bad.csv:5:1: error: job huge: a pod of podSet main fits no node" "$tmp/err"
check "no-fit file:line" $?
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/bad.csv" --skip-invalid >/dev/null 2>"$tmp/err"
check "--skip-invalid exits 0" $?
grep -q "skipped 1 invalid job" "$tmp/err"
check "--skip-invalid count" $?

# Jobs without a queue and two ClusterQueues.
sed 's/name: team/name: other/' "$tmp/m.yaml" | sed -n '/kind: ClusterQueue/,$p' >"$tmp/cq2.yaml"
sed -i '1i apiVersion: kueue.x-k8s.io/v1beta2' "$tmp/cq2.yaml"
"$carve" simulate -f "$tmp/m.yaml" -f "$tmp/cq2.yaml" --trace "$tmp/trace.csv" >/dev/null 2>"$tmp/err"
check "no queue + 2 ClusterQueues exits 1" $(($? != 1))
grep -q "trace.csv:2:1: error: job a names no queue and the manifests have 2 ClusterQueues" "$tmp/err"
check "no queue error names the job" $?

# Usage errors.
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --mig sometimes >/dev/null 2>&1
check "--mig bad: usage" $(($? != 2))
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --compare slurm >/dev/null 2>&1
check "--compare bad: usage" $(($? != 2))
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --until soon >/dev/null 2>&1
check "--until bad: usage" $(($? != 2))
"$carve" simulate --trace "$tmp/trace.csv" >/dev/null 2>&1
check "no manifests: usage" $(($? != 2))

# --report writes the HTML report of the same result, with data in the charts.
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --compare exclusive,kueue \
	--report "$tmp/r.html" >/dev/null 2>/dev/null
check "--report exits 0" $?
grep -q 'data-chart="wait-cdf"' "$tmp/r.html" && grep -q 'data-points="[1-9]' "$tmp/r.html"
check "--report charts carry data" $?
grep -q '<h2>Settings</h2>' "$tmp/r.html" && grep -q '<th>carve</th><th>exclusive</th><th>kueue</th>' "$tmp/r.html" &&
	grep -q 'class="window-end"' "$tmp/r.html"
check "--report: settings, one column per model, the trace's end marked" $?
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" --report "$tmp/nodir/r.html" \
	>/dev/null 2>"$tmp/err"
check "--report unwritable exits 1" $(($? != 1))
grep -q "nodir/r.html" "$tmp/err"
check "--report unwritable names the file" $?

# --mode fill still works.
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,32000,262144,4,V100M16\nn1,32000,262144,4,V100M16\n' >"$tmp/nodes.csv"
"$carve" simulate --mode fill --nodes "$tmp/nodes.csv" --trace "$tmp/trace.csv" --policy binpack \
	--seeds 1 -o json >"$tmp/fill" 2>/dev/null
check "fill exits 0" $?
grep -q '"unallocated_gpu_pct"' "$tmp/fill"
check "fill JSON" $?

# openb pod lists with only the five required columns (the multi-GPU lists
# published with the FGD simulator): fill and replay read them, the missing
# columns as empty.
{
	echo "name,cpu_milli,memory_mib,num_gpu,gpu_milli"
	echo "f0,1000,1024,2,1000"
	echo "f1,1000,1024,1,1000"
	echo "f2,1000,1024,0,0"
} >"$tmp/five.csv"
"$carve" simulate --mode fill --nodes "$tmp/nodes.csv" --trace "$tmp/five.csv" --policy fgd,binpack \
	--seeds 1-2 -o json >"$tmp/fill5" 2>"$tmp/err"
check "fill on a five-column list exits 0" $?
grep -q '"unallocated_gpu_pct"' "$tmp/fill5" && ! grep -q error "$tmp/err"
check "fill on a five-column list: JSON, no error" $?
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/five.csv" -o json >"$tmp/replay5" 2>"$tmp/err"
check "replay on a five-column list exits 0" $?
grep -q '"mode": "replay"' "$tmp/replay5" && ! grep -q error "$tmp/err"
check "replay on a five-column list: JSON, no error" $?
# A required column missing is still an error at file:line:col naming it.
printf 'name,cpu_milli,memory_mib,num_gpu\nf0,1000,1024,1\n' >"$tmp/four.csv"
"$carve" simulate --mode fill --nodes "$tmp/nodes.csv" --trace "$tmp/four.csv" -o json \
	>/dev/null 2>"$tmp/err"
check "fill on a list without gpu_milli exits 1" $(($? != 1))
grep -q "four.csv:1:34: error: header: missing column 'gpu_milli'" "$tmp/err"
check "missing gpu_milli reported at file:1:34" $?
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/four.csv" -o json >/dev/null 2>"$tmp/err"
check "replay on a list without gpu_milli exits 1" $(($? != 1))
grep -q "four.csv:1:34: error: header: missing column 'gpu_milli'" "$tmp/err"
check "replay: missing gpu_milli reported at file:1:34" $?
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\nf0,1000,1024,1,500,T4\n' >"$tmp/long.csv"
"$carve" simulate --mode fill --nodes "$tmp/nodes.csv" --trace "$tmp/long.csv" -o json \
	>/dev/null 2>"$tmp/err"
check "a row longer than the header exits 1" $(($? != 1))
grep -q "long.csv:2:20: error: row has 6 fields, expected 5" "$tmp/err"
check "a row longer than the header reported at file:2:20" $?

# Beyond int64: on nodes of 8Pi memory, a job of 3 pods x 4Pi (more bytes
# than int64 milli-units hold) used to wrap negative, fit a 1Gi quota and
# run; it is refused, reported at its line, never scheduled.
sed -e 's/memory: 512Gi/memory: 8Pi/' -e 's/nominalQuota: "10Ti"/nominalQuota: "1Gi"/' \
	"$tmp/m.yaml" >"$tmp/pi.yaml"
printf 'name,arrival,duration,cpu,memory,gpu,count\nj,0,100,1,4Pi,1,3\n' >"$tmp/pi.trace.csv"
"$carve" simulate -f "$tmp/pi.yaml" --trace "$tmp/pi.trace.csv" -o json >"$tmp/pi.json" 2>"$tmp/err"
grep -qF "pi.trace.csv:2:1: error: job j: workload default/j podSet main: 3 pods x 4Pi memory overflows the largest quantity carve holds" "$tmp/err" &&
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["runs"]["carve"]["jobs"]; assert j["completed"] == 0 and j["rejected"] == 1, j' "$tmp/pi.json"
check "3 x 4Pi memory: refused, never run" $?
# A gang timeout as long as a time option may be (100 years; now + timeout
# used to wrap negative at the int64 end and time the gang out at once,
# again and again): never fires; the gang runs once the GPUs it waits for
# are free.  Beyond 100 years every time option is a usage error.
printf 'name,arrival,duration,cpu,memory,gpu,count\nhold,0,2d,1,1Gi,2,1\ngang,1d,100,1,1Gi,2,2\n' >"$tmp/gang.trace.csv"
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/gang.trace.csv" --baseline exclusive \
	--gang-timeout 36500d -o json >"$tmp/gang.json" 2>/dev/null
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"]["exclusive"]; assert r["gang_timeouts"] == 0 and r["horizon_s"] == 172900 and r["jobs"]["completed"] == 2, (r["gang_timeouts"], r["horizon_s"])' "$tmp/gang.json"
check "--gang-timeout of 100 years never fires" $?
for opt in until gang-timeout workload-duration mig-delay; do
	"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/gang.trace.csv" --mig dynamic --$opt 106751991167300d \
		>/dev/null 2>"$tmp/err"
	[ $? -eq 2 ] && grep -q -- "--$opt wants a duration .*at most 100 years.*longer than 100 years" "$tmp/err"
	check "--$opt beyond 100 years: usage error naming the bound" $?
done

# --seeds for replay: one generated trace per seed (the seed scenario,
# --days), every figure's median, min and max, each seed's run kept.
ex="$src/examples/seed-scenario"
sm="$ex/queues.yaml $ex/nodes.yaml $ex/mig-parted.yaml"
# shellcheck disable=SC2086
"$carve" simulate $sm --seeds 1-3 --days 1 --compare exclusive -o json >"$tmp/seeds.json" 2>"$tmp/err"
check "--seeds 1-3 --days 1 exits 0 (got: $(tail -2 "$tmp/err"))" $?
pyj "$tmp/seeds.json" 'd["settings"]["trace"] == {"generated": "seed", "days": 1, "seeds": [1, 2, 3]} and list(d["runs"]) == ["carve", "exclusive"]'
check "--seeds: settings name the generated traces" $?
pyj "$tmp/seeds.json" 'all(list(r) == ["median", "min", "max", "per_seed"] and len(r["per_seed"]) == 3 for r in d["runs"].values())'
check "--seeds: each run {median, min, max, per_seed}" $?
pyj "$tmp/seeds.json" 'all(r["median"][k] == sorted(s[k] for s in r["per_seed"])[1] and r["min"][k] == min(s[k] for s in r["per_seed"]) and r["max"][k] == max(s[k] for s in r["per_seed"]) for r in d["runs"].values() for k in ("effective_utilisation_pct", "gpu_allocation_pct", "horizon_s"))'
check "--seeds: median, min and max of the seeds' figures" $?
pyj "$tmp/seeds.json" 'd["runs"]["carve"]["median"]["jobs"]["total"] == sorted(s["jobs"]["total"] for s in d["runs"]["carve"]["per_seed"])[1] and "series" not in d["runs"]["carve"]["median"]'
check "--seeds: nested figures aggregated, series per seed only" $?
# makespan_s null (some job never completed) ranks above every number:
# the median and max are null when they fall on such a seed.
# shellcheck disable=SC2086
"$carve" simulate $sm --seeds 1-3 --days 2 --baseline exclusive -o json >"$tmp/seeds-ms.json" 2>/dev/null
pyj "$tmp/seeds-ms.json" 'all((lambda v, r: None in v and any(x is not None for x in v) and r["median"]["makespan_s"] == sorted(v, key=lambda x: (x is None, x or 0))[1] and r["max"]["makespan_s"] is None and r["min"]["makespan_s"] == min(x for x in v if x is not None))([s["makespan_s"] for s in r["per_seed"]], r) for r in d["runs"].values())'
check "--seeds: a null makespan_s (not all done) is ranked as never: median and max null" $?
# shellcheck disable=SC2086
"$carve" simulate $sm --seeds 1-3 --days 1 --compare exclusive -o json >"$tmp/seeds2.json" 2>/dev/null
cmp -s "$tmp/seeds.json" "$tmp/seeds2.json"
check "--seeds: deterministic" $?
"$carve" simulate -f "$ex/queues.yaml" -f "$ex/nodes.yaml" -f "$ex/mig-parted.yaml" --seeds 1,2 --days 1 \
	-o json >"$tmp/seeds3.json" 2>/dev/null
python3 -c 'import json, sys; a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2])); sys.exit(a["runs"]["carve"]["per_seed"][0] != b["runs"]["carve"]["per_seed"][0])' "$tmp/seeds.json" "$tmp/seeds3.json"
check "--seeds: a seed's run does not depend on the other seeds or models" $?
# shellcheck disable=SC2086
"$carve" simulate $sm --seeds 1-2 --days 1 --compare exclusive >"$tmp/seeds.txt" 2>/dev/null
grep -q 'min.max over the seeds' "$tmp/seeds.txt" && grep -q '^Trace  *generated: scenario seed, 1 days, 2 seeds (1 to 2)' "$tmp/seeds.txt"
check "--seeds table: medians with a min-max row, the generated trace named" $?
# shellcheck disable=SC2086
"$carve" simulate $sm --seeds 1 --trace "$tmp/trace.csv" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'cannot be given with --trace' "$tmp/err"
check "--seeds with --trace: usage error" $?
# shellcheck disable=SC2086
"$carve" simulate $sm --days 2 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'give --seeds too' "$tmp/err"
check "--days without --seeds: usage error" $?
# shellcheck disable=SC2086
"$carve" simulate $sm --seeds 1 --scenario nope >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "unknown scenario 'nope' (seed)" "$tmp/err"
check "--scenario unknown: usage error naming the scenarios" $?
# shellcheck disable=SC2086
"$carve" simulate $sm --seeds 1 --days 0 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--days wants a whole number of days from 1 to 366, not '0'" "$tmp/err"
check "--days 0: usage error" $?

# --workloads: the manifests' Workloads are the starting state and the jobs.
"$carve" simulate "$ex/queues.yaml" "$ex/nodes.yaml" "$ex/mig-parted.yaml" "$ex/workloads.yaml" \
	--workloads --workload-duration 30m -o json >"$tmp/wl" 2>"$tmp/err"
check "--workloads without a trace exits 0" $?
grep -q '"mode": "replay"' "$tmp/wl" && ! grep -q 'left out' "$tmp/err"
check "--workloads: a run over the Workloads, none left out" $?
"$carve" simulate "$ex/queues.yaml" "$ex/nodes.yaml" "$ex/workloads.yaml" --workloads \
	--compare kueue >/dev/null 2>"$tmp/err"
check "--workloads with --compare is a usage error" $(($? != 2))
grep -q 'cannot start from admitted Workloads' "$tmp/err"
check "--workloads with --compare says why" $?
"$carve" simulate "$ex/queues.yaml" "$ex/nodes.yaml" --workloads --workload-duration 0 \
	>/dev/null 2>"$tmp/err"
check "--workload-duration 0 is a usage error" $(($? != 2))

# A gang the baseline's model can never run (60 whole GPUs in a queue and a
# cluster with fewer) is counted as never fitting, not retried for ever:
# both sides end.
printf 'name,arrival,duration,namespace,queue,count,gpu,gpu_resource\nhuge,0,3600,team-research,research,60,1,nvidia.com/gpu\nsmall,10,600,team-research,research,1,1,nvidia.com/gpu\n' >"$tmp/gang.trace.csv"
timeout 60 "$carve" simulate "$ex/queues.yaml" "$ex/nodes.yaml" "$ex/mig-parted.yaml" \
	--trace "$tmp/gang.trace.csv" --compare exclusive -o json >"$tmp/gang" 2>"$tmp/err"
check "a gang that never fits the baseline: --compare ends (exit 0)" $?
grep -q '"never_fit": 1' "$tmp/gang"
check "the baseline counts it as never fitting" $?
# ---- output that cannot lie or destroy ----------------------------------------

# A warning from the manifests (a kind carve does not read) is printed once
# and freed (LeakSanitizer in the Asan build).
{ cat "$tmp/m.yaml"; printf -- '---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n'; } \
	>"$tmp/warn.yaml"
"$carve" simulate -f "$tmp/warn.yaml" --trace "$tmp/trace.csv" -o json >/dev/null 2>"$tmp/err"
ok=$?   # before the message runs commands of its own
check "manifest warning: exit 0, nothing leaked (got: $(tail -3 "$tmp/err"))" $ok
[ "$(grep -c 'is not read by carve' "$tmp/err")" -eq 1 ]
check "manifest warning printed once" $?

# A queue name with a newline and an ESC: the table prints it escaped,
# or the manifests refuse it with an escaped diagnostic.
sed 's/^metadata: {name: team}$/metadata: {name: "te\\nINJECTED 1\\e[31m"}/' "$tmp/m.yaml" \
	>"$tmp/inject.yaml"
"$carve" simulate -f "$tmp/inject.yaml" --trace "$tmp/trace.csv" -o table >"$tmp/out" 2>&1
! grep -q $'\e' "$tmp/out" && ! grep -q '^INJECTED' "$tmp/out" &&
	grep -qF 'te\nINJECTED 1\x1B[31m' "$tmp/out"
check "injected queue name: printed escaped" $?

# Failed writes to standard output: exit 1 with a message.
if [ -w /dev/full ]; then
	for fmt in json table; do
		"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" -o $fmt >/dev/full \
			2>"$tmp/err"
		rc=$?
		[ $rc -eq 1 ] &&
			grep -q '^carve simulate: cannot write output: No space left on device$' "$tmp/err"
		check "simulate -o $fmt >/dev/full: exit 1 with a message (rc $rc)" $?
	done
	"$carve" simulate --mode fill --nodes "$tmp/nodes.csv" --trace "$tmp/trace.csv" \
		--policy binpack --seeds 1 -o json >/dev/full 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] &&
		grep -q '^carve simulate: cannot write output: No space left on device$' "$tmp/err"
	check "simulate --mode fill >/dev/full: exit 1 with a message (rc $rc)" $?
fi

# --report: a failed write removes nothing carve did not create; a
# symlink is followed and stays; a page is replaced whole.
if mknod "$tmp/full" c 1 7 2>/dev/null; then
	"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" -o json \
		--report "$tmp/full" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] && [ -c "$tmp/full" ] &&
		grep -q "^carve simulate: cannot write $tmp/full: No space left on device$" "$tmp/err"
	check "--report to a full device: exit 1, the node is left in place (rc $rc)" $?
else
	echo "SKIP: mknod not permitted: the --report device-node check"
fi
printf 'old\n' >"$tmp/page.html"
ln -s page.html "$tmp/link.html"
"$carve" simulate -f "$tmp/m.yaml" --trace "$tmp/trace.csv" -o json \
	--report "$tmp/link.html" >/dev/null 2>"$tmp/err"
check "--report through a symlink: exit 0" $?
[ -L "$tmp/link.html" ] && grep -q '</html>' "$tmp/page.html"
check "--report through a symlink: the link stays, the file it names gets the page" $?

# A policy given twice in fill mode is a usage error, said once.
"$carve" simulate --mode fill --nodes "$tmp/nodes.csv" --trace "$tmp/five.csv" --policy fgd,fgd \
	>/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "policy 'fgd' is given twice" "$tmp/err"
check "--policy fgd,fgd: usage error" $?

echo "simulate: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
