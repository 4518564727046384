#!/usr/bin/python3
"""fake-nvidia-smi.py - `nvidia-smi -q -x` and `nvidia-smi -L` for a mock
NVML node (CARVE_MOCK_NVML, or CARVE_MOCK_NVML_STATE when it exists), in
the layout a real nvidia-smi (driver 580) prints, reduced to the fields
scripts/gpu-check.sh reads.  FAKE_SMI_SKEW=memory reports 1 MiB more memory
on GPU 0, so the test can see the check fail."""
import json, os, sys
from xml.sax.saxutils import escape

path = os.environ.get("CARVE_MOCK_NVML_STATE")
if not path or not os.path.exists(path):
    path = os.environ["CARVE_MOCK_NVML"]
node = json.load(open(path))
skew = os.environ.get("FAKE_SMI_SKEW", "")

# MiB of profiles whose table MiB is known (src/core/mig_profiles.c); the
# others are the mock's share of the GPU's memory.
def inst_mib(g, inst):
    slices = {"1g": 1, "2g": 2, "3g": 4, "4g": 4, "7g": 8}[inst["profile"][:2]]
    if inst["profile"] == "1g.20gb":
        slices = 2
    return inst.get("memory_mib", g["memory_mib"] // 8 * slices)

def mode(g, i):
    return "N/A" if "mig" not in g else ("Enabled" if g["mig"][i] else "Disabled")

if sys.argv[1:] == ["-L"]:
    for i, g in enumerate(node["gpus"]):
        print("GPU %d: %s (UUID: %s)" % (i, g["name"], g["uuid"]))
        cis = [x for x in g.get("instances", []) if x.get("ci", -1) >= 0]
        for k, x in enumerate(cis):
            print("  MIG %-11s Device %2d: (UUID: %s)" % (x["profile"], k, x["uuid"]))
    sys.exit(0)
if sys.argv[1:] != ["-q", "-x"]:
    sys.exit("fake-nvidia-smi: only -q -x and -L")
cuda = node.get("cuda_version", 0)
out = ['<?xml version="1.0" ?>', "<nvidia_smi_log>",
       "\t<driver_version>%s</driver_version>" % node["driver_version"],
       "\t<cuda_version>%d.%d</cuda_version>" % (cuda // 1000, cuda % 1000 // 10),
       "\t<attached_gpus>%d</attached_gpus>" % len(node["gpus"])]
for i, g in enumerate(node["gpus"]):
    mem = g["memory_mib"] + (1 if skew == "memory" and i == 0 else 0)
    out += ['\t<gpu id="%s">' % g["pci_bus_id"],
            "\t\t<product_name>%s</product_name>" % escape(g["name"]),
            "\t\t<mig_mode>", "\t\t\t<current_mig>%s</current_mig>" % mode(g, 0),
            "\t\t\t<pending_mig>%s</pending_mig>" % mode(g, 1), "\t\t</mig_mode>",
            "\t\t<mig_devices>"]
    cis = [x for x in g.get("instances", []) if x.get("ci", -1) >= 0]
    if not cis:
        out.append("\t\t\tNone")
    for k, x in enumerate(cis):
        out += ["\t\t\t<mig_device>", "\t\t\t\t<index>%d</index>" % k,
                "\t\t\t\t<gpu_instance_id>%d</gpu_instance_id>" % x["gi"],
                "\t\t\t\t<compute_instance_id>%d</compute_instance_id>" % x["ci"],
                "\t\t\t\t<fb_memory_usage>",
                "\t\t\t\t\t<total>%d MiB</total>" % inst_mib(g, x),
                "\t\t\t\t</fb_memory_usage>", "\t\t\t</mig_device>"]
    out += ["\t\t</mig_devices>", "\t\t<uuid>%s</uuid>" % g["uuid"],
            "\t\t<minor_number>%d</minor_number>" % g["minor"],
            "\t\t<fb_memory_usage>", "\t\t\t<total>%d MiB</total>" % mem,
            "\t\t</fb_memory_usage>", "\t</gpu>"]
out.append("</nvidia_smi_log>")
print("\n".join(out))
