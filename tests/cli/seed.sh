#!/usr/bin/env bash
# The README's main command on the shipped seed week: `carve simulate
# examples/seed-scenario --compare kube-default -o json` prints both
# columns, carve completes every job of the week, and carve is no worse than
# the stock-stack baseline on research gang first-time success, dev wait to
# first GPU (p50) and effective utilisation.  Usage: seed.sh CARVE_BINARY SOURCE_DIR
set -u
carve=$1
src=$2
cd "$src" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

"$carve" simulate examples/seed-scenario --compare kube-default -o json >"$tmp/out.json" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ]; then
	echo "FAIL: carve simulate exited $rc"
	cat "$tmp/err"
	exit 1
fi
python3 - "$tmp/out.json" <<'PY'
import json
import sys

d = json.load(open(sys.argv[1]))
fails = []


def check(name, ok):
    if not ok:
        fails.append(name)


check("both columns", "baseline" in d and "carve" in d)
if not fails:
    b, c = d["baseline"], d["carve"]
    jobs = c["jobs"]
    check("carve completes every job (%s)" % jobs,
          jobs["completed"] == jobs["total"] and jobs["total"] > 0)
    bq, cq = b["queues"]["research"], c["queues"]["research"]
    check("research first-time success: carve %s >= baseline %s"
          % (cq["first_time_success_pct"], bq["first_time_success_pct"]),
          cq["first_time_success_pct"] is not None
          and (bq["first_time_success_pct"] is None
               or cq["first_time_success_pct"] >= bq["first_time_success_pct"]))
    bw, cw = b["wait_first_gpu_s"]["dev"]["p50"], c["wait_first_gpu_s"]["dev"]["p50"]
    check("dev wait p50: carve %s <= baseline %s" % (cw, bw), cw <= bw)
    bu, cu = b["effective_utilisation_pct"], c["effective_utilisation_pct"]
    check("effective utilisation: carve %s >= baseline %s" % (cu, bu), cu >= bu)
for f in fails:
    print("FAIL: " + f)
print("%d checks failed" % len(fails))
sys.exit(1 if fails else 0)
PY
