#!/bin/sh
# gpu-check.sh - on a machine with an NVIDIA GPU and driver: carve's NVML
# discovery (carve-nvml-dump, the code the node agent runs) compared with
# nvidia-smi on the same machine: GPU count, driver and CUDA versions, and
# per GPU its UUID, name, minor number, PCI bus id, memory, MIG mode
# (current, pending) and MIG devices (GPU/compute instance ids, profile,
# UUID, memory).  READ-ONLY: it only queries; it never changes MIG mode,
# MIG layouts or anything else.
#
#   scripts/gpu-check.sh [--dump PATH] [--lib PATH] [--build DIR]
#
# --dump: a carve-nvml-dump binary (then neither cmake nor a compiler is
# needed on this machine); otherwise DIR/tests/carve-nvml-dump, built with
# cmake in DIR (default build) when missing.  --lib: the NVML library to
# load (default: libnvidia-ml.so.1 as the loader finds it).
# Exit 0 all equal, 1 a difference (each printed), 2 usage, 77 no
# nvidia-smi or no GPU here.  $PYTHON: the python3 to use (default python3).
set -eu

dump= lib= build=build
while [ $# -gt 0 ]; do
	case "$1" in
	--dump) dump=$2; shift 2 ;;
	--lib) lib=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	*) echo "usage: $0 [--dump PATH] [--lib PATH] [--build DIR]" >&2; exit 2 ;;
	esac
done

if ! command -v nvidia-smi >/dev/null 2>&1; then
	echo "gpu-check: nvidia-smi not found: not a GPU machine (skipped)"; exit 77
fi
if [ -z "$dump" ]; then
	dump=$build/tests/carve-nvml-dump
	if [ ! -x "$dump" ]; then
		command -v cmake >/dev/null 2>&1 || {
			echo "gpu-check: no $dump and no cmake: pass --dump PATH" >&2; exit 2; }
		cmake -S "$(dirname "$0")/.." -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
		cmake --build "$build" --target carve-nvml-dump -j2 >/dev/null
	fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
if [ -n "$lib" ]; then
	"$dump" --lib "$lib" >"$tmp/carve.json"
else
	"$dump" >"$tmp/carve.json"
fi
"$dump" ${lib:+--lib "$lib"} --mig-current >"$tmp/current.txt"
nvidia-smi -q -x >"$tmp/smi.xml"
nvidia-smi -L >"$tmp/smi-L.txt"

"${PYTHON:-python3}" - "$tmp/carve.json" "$tmp/smi.xml" "$tmp/smi-L.txt" "$tmp/current.txt" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET

carve = json.load(open(sys.argv[1]))
smi = ET.parse(sys.argv[2]).getroot()
listing = open(sys.argv[3]).read()
current = open(sys.argv[4]).read().strip()
bad = 0

def check(what, got, want):
    global bad
    ok = got == want
    bad += not ok
    print("%-4s %s: carve %r, nvidia-smi %r" % ("ok" if ok else "FAIL", what, got, want))

def mib(text):
    m = re.match(r"\s*(\d+)\s*MiB", text or "")
    return int(m.group(1)) if m else None

def mode(text):
    return {"Enabled": 1, "Disabled": 0}.get((text or "").strip())

xgpus = smi.findall("gpu")
if not xgpus:
    print("gpu-check: nvidia-smi lists no GPU (skipped)")
    sys.exit(77)
check("GPU count", len(carve["gpus"]), len(xgpus))
check("driver version", carve["driver_version"], smi.findtext("driver_version"))
if carve["cuda_major"] is not None:
    check("CUDA version", "%d.%d" % (carve["cuda_major"], carve["cuda_minor"]),
          smi.findtext("cuda_version"))

# nvidia-smi -L: "GPU 0: NAME (UUID: GPU-...)" then "  MIG 1g.10gb Device 0: (UUID: MIG-...)"
migs_L, cur = {}, None
for line in listing.splitlines():
    m = re.match(r"GPU \d+: .*\(UUID: (GPU-[^)]+)\)", line)
    if m:
        cur = m.group(1)
        migs_L[cur] = []
        continue
    m = re.match(r"\s+MIG (\S+)\s+Device\s+\d+: \(UUID: (MIG-[^)]+)\)", line)
    if m and cur:
        migs_L[cur].append((m.group(1), m.group(2)))

by_uuid = {g["uuid"]: g for g in carve["gpus"]}
for x in xgpus:
    uuid = x.findtext("uuid")
    g = by_uuid.get(uuid)
    check("GPU %s found" % uuid, g is not None, True)
    if g is None:
        continue
    w = "GPU %d" % g["index"]
    check(w + " name", g["name"], x.findtext("product_name"))
    check(w + " minor", g["minor"], int(x.findtext("minor_number", "-1")))
    check(w + " PCI bus id", (g["pci_bus_id"] or "").upper(), x.get("id", "").upper())
    check(w + " memory MiB", g["memory_total"] // 2**20, mib(x.findtext("fb_memory_usage/total")))
    mm = x.find("mig_mode")
    if mm is not None and mode(mm.findtext("current_mig")) is not None:
        check(w + " MIG mode current", g["mig_current"], mode(mm.findtext("current_mig")))
        check(w + " MIG mode pending", g["mig_pending"], mode(mm.findtext("pending_mig")))
    xm = [(int(d.findtext("gpu_instance_id")), int(d.findtext("compute_instance_id")))
          for d in x.findall("mig_devices/mig_device")]
    check(w + " MIG devices (GI, CI)", sorted((m["gi_id"], m["ci_id"]) for m in g["mig"]),
          sorted(xm))
    for d in x.findall("mig_devices/mig_device"):
        gi = int(d.findtext("gpu_instance_id"))
        mine = [m for m in g["mig"] if m["gi_id"] == gi]
        if mine and mine[0]["memory_total"] is not None:
            check(w + " MIG GI %d memory MiB" % gi, mine[0]["memory_total"] // 2**20,
                  mib(d.findtext("fb_memory_usage/total")))
    check(w + " MIG (profile, UUID)", sorted((m["profile"], m["uuid"]) for m in g["mig"]),
          sorted(migs_L.get(uuid, [])))
print("carve.dev/mig-current: %r" % current)
print("gpu-check: %s" % ("all equal" if not bad else "%d difference(s)" % bad))
sys.exit(1 if bad else 0)
PY
