#!/usr/bin/env bash
# sched_e2e.sh - issue 14's scheduler figures against the fake API server
# on loopback (tests/kube/fakeapi.py), end to end: carve-bench-sched's
# objects (bench/kgen.c: nodes, ConfigMaps, queue objects, pending pods)
# loaded through /fake/load, then `carve scheduler` started and timed until
# every pod is bound; then a gang loaded on the full cluster and timed to
# its last bind; then the fake's own bind ceiling from a tight client loop.
#
#   bench/sched_e2e.sh [--quick] [--nodes N] [--pods N] [--gang N]
#                      [--qps Q] [--burst B] [--out FILE] [--build DIR]
#
# Defaults: 5,000 nodes, 50,000 pods, a 500-pod gang, --qps 5000 --burst
# 10000 (high, so the client's rate limiter does not hide the server);
# --quick: 200 nodes, 2,000 pods, a 50-pod gang.  Both processes run under
# `nice -n 10`.  Needs kubectl (for the CRDs); exits 77 without it.  The
# measuring is bench/sched_e2e.py's.  Exit codes: 0 ok, 1 a step failed,
# 2 usage, 77 skipped.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build
nodes=5000 pods=50000 gang=500 qps=5000 burst=10000 out= quick=0
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 nodes=200 pods=2000 gang=50 ;;
	--nodes) nodes=$2; shift ;;
	--pods) pods=$2; shift ;;
	--gang) gang=$2; shift ;;
	--qps) qps=$2; shift ;;
	--burst) burst=$2; shift ;;
	--out) out=$2; shift ;;
	--build) build=$2; shift ;;
	*) echo "usage: sched_e2e.sh [--quick] [--nodes N] [--pods N] [--gang N] [--qps Q] [--burst B] [--out FILE] [--build DIR]" >&2
	   exit 2 ;;
	esac
	shift
done
CARVE=$build/carve
BENCH=$build/bench/carve-bench-sched
PY="/usr/bin/python3 $src/bench/sched_e2e.py"
for f in "$CARVE" "$BENCH"; do
	[ -x "$f" ] || { echo "sched_e2e.sh: $f is not built" >&2; exit 1; }
done
if ! command -v kubectl >/dev/null; then
	echo "sched_e2e.sh: SKIP: kubectl is not installed"
	exit 77
fi
. "$src/tests/kube/kubeenv.sh"
tmp=$(mktemp -d) || exit 1
SCHED_PID=
cleanup() {
	[ -n "$SCHED_PID" ] && kill -TERM "$SCHED_PID" 2>/dev/null && wait "$SCHED_PID" 2>/dev/null
	fake_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "sched_e2e.sh: $*" >&2; [ -s "$tmp/sched.log" ] && tail -20 "$tmp/sched.log" >&2; exit 1; }

echo "sched_e2e: $nodes nodes, $pods pods, a $gang-pod gang; --qps $qps --burst $burst; load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
"$BENCH" --nodes "$nodes" --pods "$pods" --gang "$gang" --emit-json "$tmp/objs.json" \
	--emit-gang "$tmp/gang.json" || fail "carve-bench-sched --emit-json failed"

# history large enough that the scheduler's watch never falls behind it
fake_start --max-seconds 1200 --history $((pods * 4 + 100000)) || fail "the fake did not start"
renice -n 10 -p "$FAKE_PID" >/dev/null
kubectl --request-timeout=60s apply --validate=false -f "$src/tests/data/kube/crds.yaml" >/dev/null ||
	fail "CRDs not applied"
load=$($PY load "$FAKE_URL" "$tmp/objs.json") || fail "/fake/load failed"
echo "loaded: $load"

mport=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
fake0=$($PY proc "$FAKE_PID") || fail "no /proc for the fake"
nice -n 10 "$CARVE" scheduler --leader-elect=false --metrics-addr "127.0.0.1:$mport" \
	--qps "$qps" --burst "$burst" --max-seconds 1100 2>"$tmp/sched.log" &
SCHED_PID=$!
tmo=$((pods / 20 + 120))
wait_js=$($PY wait "http://127.0.0.1:$mport" "$pods" "$tmo" "$SCHED_PID") || fail "not every pod was bound"
fake1=$($PY proc "$FAKE_PID")
gang_js=$($PY gang "$FAKE_URL" "http://127.0.0.1:$mport" "$tmp/gang.json" "$gang" 120) || fail "the gang was not bound"
sched_end=$($PY proc "$SCHED_PID")
kill -TERM "$SCHED_PID"
wait "$SCHED_PID"
rc=$?
SCHED_PID=
[ "$rc" -eq 0 ] || fail "carve scheduler exited $rc"
echo "the scheduler's cycles that did something (its log, the first 12):"
grep -E ' cycle [0-9]+:' "$tmp/sched.log" | head -n 12 | cut -c1-400
ceil_n=$((pods / 5 < 2000 ? 2000 : pods / 5))
[ "$ceil_n" -gt 10000 ] && ceil_n=10000
ceil_js=$($PY ceiling "$FAKE_URL" "$ceil_n" 8) || fail "the ceiling run failed"

/usr/bin/python3 - "$pods" "$gang" "$wait_js" "$gang_js" "$fake0" "$fake1" "$sched_end" "$ceil_js" "$load" "${out:-}" <<'EOF'
import json, sys
pods, gang = int(sys.argv[1]), int(sys.argv[2])
w, g, f0, f1, se, c, ld = (json.loads(a) for a in sys.argv[3:10])
out = sys.argv[10]
m = w["metrics"]
q = w["quiet_metrics"]
wall = w["seconds"]
server = q.get('carve_api_wait_seconds_total{on="server"}')
limiter = q.get('carve_api_wait_seconds_total{on="rate_limiter"}')
fake_cpu = f1["cpu_s"] - f0["cpu_s"]
r = {
    "pods": pods, "wall_s": wall, "binds_per_s": round(pods / wall, 1),
    "sched_cpu_s": w["cpu_s"], "sched_cpu_us_per_bound_pod": round(w["cpu_s"] / pods * 1e6, 1),
    "sched_cpu_share_of_wall": round(w["cpu_s"] / wall, 3),
    "quiet_s": w["quiet_s"], "sched_cpu_s_quiet": w["quiet"]["cpu_s"],
    "sched_cpu_us_per_bound_pod_quiet": round(w["quiet"]["cpu_s"] / pods * 1e6, 1),
    "fake_cpu_s": round(fake_cpu, 2), "fake_cpu_share_of_wall": round(fake_cpu / w["quiet_s"], 3),
    "api_requests": sum(v for k, v in q.items() if k.startswith("carve_api_requests_total")),
    "api_server_wait_s": server, "api_rate_limiter_wait_s": limiter,
    "api_requests_in_flight_avg": None if server is None else round(server / w["quiet_s"], 2),
    "bind_round_trip_ms_avg": round(q["carve_bind_duration_seconds_sum"] / q["carve_bind_duration_seconds_count"] * 1e3, 2)
        if q.get("carve_bind_duration_seconds_count") else None,
    "cycles": q.get("carve_cycle_duration_seconds_count"),
    "cycle_s_sum": q.get("carve_cycle_duration_seconds_sum"),
    "vmhwm_kib_bound": w["quiet"]["vmhwm_kib"], "bytes_per_pod_vmhwm": round(w["quiet"]["vmhwm_kib"] * 1024 / pods),
    "vmhwm_kib_end": se["vmhwm_kib"], "bytes_per_pod_vmhwm_end": round(se["vmhwm_kib"] * 1024 / (pods + gang)),
    "gang": gang, "gang_ms_load_answer_to_last_bind": g["ms_from_load_answer"], "gang_load_ms": g["load_ms"],
    "fake_bind_ceiling_per_s": c["binds_per_s"], "fake_ceiling_codes": c["codes"],
    "fake_load_s": ld["seconds"],
}
for k, v in r.items():
    print("  %-36s %s" % (k, v))
missing = [k for k, v in r.items() if v is None]
if missing:
    sys.exit("sched_e2e.sh: figures missing: %s" % ", ".join(missing))
if c["codes"] != {"201": c["binds"]}:
    sys.exit("sched_e2e.sh: the ceiling run had answers other than 201")
if out:
    with open(out, "w") as f:
        json.dump(r, f, indent=1)
        f.write("\n")
EOF
