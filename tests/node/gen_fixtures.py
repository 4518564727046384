#!/usr/bin/python3
"""Writes the mock NVML node descriptions of tests/node (format:
docs/internals/NVML.md).  Run from the repository root; the JSON files are
committed, this script says how they were made."""
import json

def gpu(i, name, mib, cc, arch, pci_dev, mig=None):
    g = {"uuid": "GPU-%08x-1111-2222-3333-%012x" % (0xc0de0000 + i, i), "name": name,
         "minor": i, "pci_bus_id": "00000000:%02X:00.0" % (0x18 + 0x10 * i),
         "pci_device_id": pci_dev, "memory_mib": mib, "cc": cc, "arch": arch,
         "numa": i // 4, "util": [10 * i % 100, 5 * i % 100], "power_mw": 70000 + 1000 * i,
         "energy_mj": 123456789 + i, "temp": 30 + i, "sm_clock": 1980, "mem_clock": 2619,
         "processes": []}
    if mig is not None:
        g["mig"] = mig
    return g

def dump(name, d):
    with open("tests/node/" + name, "w") as f:
        json.dump(d, f, indent=1)
        f.write("\n")

H100 = ("NVIDIA H100 80GB HBM3", 81559, [9, 0], 9, 0x233010DE)
node = {"driver_version": "550.54.15", "cuda_version": 12040,
        "gpus": [gpu(i, *H100, mig=[0, 0]) for i in range(8)]}
node["gpus"][1]["processes"] = [{"pid": 4242, "used_mib": 1024}]
node["gpus"][2]["processes"] = [{"pid": 5151, "used_mib": 2048},
                                {"pid": 5152, "used_mib": 512, "graphics": True}]
dump("h100x8.json", node)

mig = {"driver_version": "550.54.15", "cuda_version": 12040,
       "gpus": [gpu(i, *H100, mig=[1, 1]) for i in range(8)]}
for i, g in enumerate(mig["gpus"]):
    g["instances"] = [{"profile": "1g.10gb", "start": s, "gi": 7 + s, "ci": 0,
                       "uuid": "MIG-%08x-aaaa-bbbb-cccc-%012x" % (0xd0000000 + i, s)}
                      for s in range(7)]
mig["gpus"][0]["processes"] = [{"pid": 777, "used_mib": 3000, "gi": 9, "ci": 0}]
dump("h100x8_mig7.json", mig)

a100 = {"driver_version": "535.104.05", "cuda_version": 12020,
        "gpus": [gpu(0, "NVIDIA A100-SXM4-80GB", 81920, [8, 0], 7, 0x20B210DE, mig=[1, 1])]}
a100["gpus"][0]["instances"] = [
    {"profile": "3g.40gb", "start": 0, "gi": 1, "ci": 0, "memory_mib": 40192,
     "uuid": "MIG-a1000000-0000-0000-0000-000000000001"},
    {"profile": "2g.20gb", "start": 4, "gi": 5, "ci": 0, "memory_mib": 19968,
     "uuid": "MIG-a1000000-0000-0000-0000-000000000005"}]
a100["gpus"][0]["xids"] = [13, 79]
dump("a100.json", a100)

bad = {"driver_version": "550.54.15", "cuda_version": 12040,
       "errors": {"nvmlDeviceGetPowerUsage": 3},
       "gpus": [gpu(i, *H100, mig=[1, 1]) for i in range(2)]}
bad["gpus"][0]["errors"] = {"nvmlDeviceGetTemperature": 3, "nvmlDeviceGetClockInfo": 4}
bad["gpus"][1]["errors"] = {"nvmlDeviceGetMemoryInfo": 15}
dump("errors.json", bad)
