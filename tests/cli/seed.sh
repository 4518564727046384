#!/usr/bin/env bash
# The README's main command on the shipped seed week: `carve simulate
# examples/seed-scenario --compare exclusive,device-plugin,kueue` prints
# carve beside the three baselines ({"settings", "runs"} with -o json, the
# same JSON twice), carve completes every job of the week, and carve is no
# worse than the "before" stack (exclusive) on research gang first-time
# success, dev wait to first GPU (p50) and effective utilisation, and no
# worse than any baseline on first-time success overall.  The table
# carries one column per model and the settings.
# Usage: seed.sh CARVE_BINARY SOURCE_DIR
set -u
carve=$1
src=$2
cd "$src" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

main=(simulate examples/seed-scenario --compare exclusive,device-plugin,kueue)
"$carve" "${main[@]}" -o json >"$tmp/out.json" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "FAIL: carve simulate exited $rc"
	cat "$tmp/err"
	exit 1
fi
"$carve" "${main[@]}" -o json >"$tmp/again.json" 2>/dev/null
"$carve" "${main[@]}" >"$tmp/table.txt" 2>/dev/null
python3 - "$tmp/out.json" "$tmp/again.json" "$tmp/table.txt" <<'PY'
import json
import re
import sys

d = json.load(open(sys.argv[1]))
fails = []


def check(name, ok):
    if not ok:
        fails.append(name)


check("same JSON twice", open(sys.argv[1]).read() == open(sys.argv[2]).read())
models = ["carve", "exclusive", "device-plugin", "kueue"]
check("{settings, runs}", list(d) == ["settings", "runs"])
check("one run per model, carve first (%s)" % list(d.get("runs", {})),
      list(d.get("runs", {})) == models)
if not fails:
    s = d["settings"]
    check("settings (%s)" % s,
          s["trace"] == "examples/seed-scenario" and s["manifests"] == ["examples/seed-scenario"]
          and s["models"] == models and s["until_s"] is None and s["mig"] == "static"
          and s["window"]["end_s"] > s["window"]["start_s"])
    runs = d["runs"]
    c, b = runs["carve"], runs["exclusive"]
    jobs = c["jobs"]
    check("carve completes every job (%s)" % jobs,
          jobs["completed"] == jobs["total"] and jobs["total"] > 0)
    bq, cq = b["queues"]["research"], c["queues"]["research"]
    check("research first-time success: carve %s >= exclusive %s"
          % (cq["first_time_success_pct"], bq["first_time_success_pct"]),
          cq["first_time_success_pct"] is not None
          and (bq["first_time_success_pct"] is None
               or cq["first_time_success_pct"] >= bq["first_time_success_pct"]))
    bw, cw = b["wait_first_gpu_s"]["dev"]["p50"], c["wait_first_gpu_s"]["dev"]["p50"]
    check("dev wait p50: carve %s <= exclusive %s" % (cw, bw), cw <= bw)
    bu, cu = b["effective_utilisation_pct"], c["effective_utilisation_pct"]
    check("effective utilisation: carve %s >= exclusive %s" % (cu, bu), cu >= bu)
    for m in models[1:]:
        f = runs[m]["first_time_success_pct"]
        check("first-time success: carve %s >= %s %s" % (c["first_time_success_pct"], m, f),
              f is None or c["first_time_success_pct"] >= f)
table = open(sys.argv[3]).read()
check("table header: the four models and the difference column",
      re.search(r"^ *carve +exclusive +device-plugin +kueue +carve vs the best baseline$",
                table, re.M) is not None)
check("table: settings at the top", table.startswith("Trace         examples/seed-scenario\n"))
check("table: effective utilisation in words, one decimal",
      re.search(r"^Effective GPU utilisation +\d+\.\d % +\d+\.\d %", table, re.M) is not None)
for f in fails:
    print("FAIL: " + f)
print("%d checks failed" % len(fails))
sys.exit(1 if fails else 0)
PY
