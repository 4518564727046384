#!/usr/bin/python3
"""node_dp_kubelet: carve's device plugin (src/node/dp*.c, run by
tests/node/dp_harness.c) against the fake kubelet (fake_kubelet.py) on a
temporary socket directory: registration, device lists, Allocate for whole
GPUs, MIG devices, shares and fractions, refusals, health, re-registration
after a kubelet restart, garbage from the kubelet.

Usage: dp_kubelet_test.py DP_HARNESS
"""

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_kubelet  # noqa: E402

G0 = "GPU-00000000-0000-0000-0000-000000000000"
G2 = "GPU-22222222-2222-2222-2222-222222222222"
RESOURCES = {
    "carve.dev/gpu": "carve-gpu.sock",
    "carve.dev/gpu.shared": "carve-gpu.shared.sock",
    "carve.dev/mig-3g.40gb": "carve-mig-3g.40gb.sock",
    "carve.dev/mig-1g.10gb": "carve-mig-1g.10gb.sock",
    "carve.dev/mig-1g.10gb.me": "carve-mig-1g.10gb.me.sock",
}
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def wait_for(pred, secs=10):
    end = time.time() + secs
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


class Harness:
    def __init__(self, binary, directory, log):
        self.p = subprocess.Popen([binary, directory, "--shares", "4", "--cdi"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=log, text=True)
        self.lines = []
        self.cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            with self.cv:
                self.lines.append(line.rstrip("\n"))
                self.cv.notify_all()

    def expect(self, pred, secs=10):
        end = time.time() + secs
        with self.cv:
            while True:
                for i, l in enumerate(self.lines):
                    if pred(l):
                        del self.lines[i]
                        return l
                left = end - time.time()
                if left <= 0:
                    return None
                self.cv.wait(left)

    def cmd(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.expect(lambda l: l == "ok" or l.startswith("error"))


def rpc_error(f):
    try:
        f()
    except grpc.RpcError as e:
        return e
    return None


def main():
    harness_bin = sys.argv[1]
    signal.alarm(100)
    tmp = tempfile.mkdtemp(prefix="carve-dp-")
    log_path = os.path.join(tmp, "plugin.log")
    log = open(log_path, "w")
    k = fake_kubelet.FakeKubelet(tmp)
    h = None
    try:
        k.start()
        h = Harness(harness_bin, tmp, log)
        check(h.expect(lambda l: l == "ready") is not None, "harness started")
        for b in ("bind default whole u1 10 gpu=0",
                  "bind default mig u2 20 gpu=1,mig=3g.40gb@0",
                  "bind default me u3 30 gpu=1,mig=1g.10gb+me@6",
                  "bind default rep u4 40 gpu=2,replica=1",
                  "bind default frac u5 50 gpu=2,milli=250,mem=10240",
                  "bind default ghost u6 60 gpu=7",
                  "bind default pair u7 70 gpu=1,mig=1g.10gb@4;gpu=1,mig=1g.10gb@5"):
            check(h.cmd(b) == "ok", b)

        # -- registration
        check(wait_for(lambda: set(RESOURCES) <= set(k.resources())),
              "every resource registered: %s" % sorted(set(k.resources())))
        for r in list(k.registrations):
            check(r["version"] == "v1beta1" and r["endpoint"] == RESOURCES[r["resource_name"]]
                  and r["get_preferred_allocation_available"] and not r["pre_start_required"],
                  "registration of %s: %s" % (r["resource_name"], r))
        check(len(k.registrations) == len(RESOURCES), "each registered once")
        check(k.options("carve-gpu.sock")["get_preferred_allocation_available"],
              "GetDevicePluginOptions: preferred allocation available")

        # -- device lists
        ch, it = k.watch("carve-gpu.sock")
        devs = next(it)
        check([(d["ID"], d["health"], d["numa"]) for d in devs] ==
              [(G0, "Healthy", [0]), (G2, "Healthy", None)], "ListAndWatch gpu: %s" % devs)
        ch2, it2 = k.watch("carve-gpu.shared.sock")
        devs2 = next(it2)
        check([d["ID"] for d in devs2] == ["%s::%d" % (g, n) for g in (G0, G2)
                                             for n in range(4)],
              "ListAndWatch gpu.shared: 4 replicas of GPUs 0 and 2")
        ch2.close()
        _, it3 = k.watch("carve-mig-1g.10gb.sock")
        devs3 = next(it3)
        check([(d["ID"], d["numa"]) for d in devs3] == [("MIG-1-1g-4", [1]), ("MIG-1-1g-5", [1])],
              "ListAndWatch mig-1g.10gb: %s" % devs3)

        # -- preferred allocation: the bound devices
        pref = k.preferred("carve-gpu.shared.sock",
                           [(["%s::%d" % (g, n) for g in (G0, G2) for n in range(4)], [], 1)])
        check(pref == [["%s::1" % G2]], "GetPreferredAllocation shared: replica 1 of GPU 2: %s"
              % pref)
        pref = k.preferred("carve-gpu.sock", [([G0, G2], [], 2)])
        check(pref == [[]], "GetPreferredAllocation: nothing bound with 2 GPUs: %s" % pref)

        # -- Allocate
        a = k.allocate("carve-gpu.sock", [[G0]])[0]
        check(a["envs"].get("NVIDIA_VISIBLE_DEVICES") == G0 and
              a["envs"].get("CARVE_POD") == "default/whole" and
              a["cdi"] == ["nvidia.com/gpu=" + G0], "Allocate whole GPU: %s" % a)
        a = k.allocate("carve-mig-3g.40gb.sock", [["MIG-1-3g-0"]])[0]
        check(a["envs"].get("NVIDIA_VISIBLE_DEVICES") == "MIG-1-3g-0" and
              a["envs"].get("CARVE_POD") == "default/mig" and
              a["cdi"] == ["nvidia.com/gpu=MIG-1-3g-0"], "Allocate MIG 3g.40gb: %s" % a)
        a = k.allocate("carve-mig-1g.10gb.me.sock", [["MIG-1-1gme-6"]])[0]
        check(a["envs"].get("CARVE_POD") == "default/me", "Allocate MIG 1g.10gb+me: %s" % a)
        a = k.allocate("carve-gpu.shared.sock", [["%s::3" % G2]])[0]
        check(a["envs"].get("NVIDIA_VISIBLE_DEVICES") == G2 and
              a["envs"].get("CARVE_POD") == "default/rep" and
              a["envs"].get("CARVE_GPU_REPLICA") == "1" and
              "CUDA_DEVICE_MEMORY_LIMIT_0" not in a["envs"],
              "Allocate shared: the oldest pod on GPU 2 first (replica): %s" % a)
        a = k.allocate("carve-gpu.shared.sock", [["%s::0" % G2]])[0]
        check(a["envs"].get("CARVE_POD") == "default/frac" and
              a["envs"].get("CUDA_DEVICE_MEMORY_LIMIT_0") == "10240m" and
              a["envs"].get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "25" and
              a["envs"].get("CARVE_GPU_MILLI") == "250",
              "Allocate fraction: then the next pod, with its memory cap and share: %s" % a)

        a = k.allocate("carve-mig-1g.10gb.sock", [["MIG-1-1g-5"], ["MIG-1-1g-4"]])
        check([c["envs"].get("NVIDIA_VISIBLE_DEVICES") for c in a] ==
              ["MIG-1-1g-5", "MIG-1-1g-4"] and
              all(c["envs"].get("CARVE_POD") == "default/pair" for c in a),
              "Allocate: two containers of one pod, one MIG device each: %s" % a)
        a = k.allocate("carve-mig-1g.10gb.sock", [["MIG-1-1g-4", "MIG-1-1g-5"]])[0]
        check(a["envs"].get("NVIDIA_VISIBLE_DEVICES") == "MIG-1-1g-4,MIG-1-1g-5",
              "Allocate: one container with both: %s" % a)

        # -- refusals
        e = rpc_error(lambda: k.allocate("carve-gpu.sock", [[G2]]))
        check(e is not None and e.code() == grpc.StatusCode.FAILED_PRECONDITION and
              "no pod bound" in e.details(), "Allocate GPU 2 whole: refused: %s" %
              (e and e.details()))
        check(h.expect(lambda l: l.startswith("refused") and "carve.dev/gpu" in l) is not None,
              "refusal reported for an event")
        e = rpc_error(lambda: k.allocate("carve-gpu.sock", [[G0, G2]]))
        check(e is not None and "pod default/whole holds some of them" in e.details(),
              "Allocate GPUs 0+2: refused, near pod named: %s" % (e and e.details()))
        check(h.expect(lambda l: l.startswith("refused default/whole:")) is not None,
              "near pod given to the refusal callback")
        e = rpc_error(lambda: k.allocate("carve-gpu.sock", [["GPU-nope"]]))
        check(e is not None and e.code() == grpc.StatusCode.INVALID_ARGUMENT and
              "is not a carve.dev/gpu device" in e.details(),
              "Allocate unknown ID: refused: %s" % (e and e.details()))

        # -- garbage from the kubelet: error, and the plugin keeps serving
        e = rpc_error(lambda: k.call("carve-gpu.sock", "Allocate", b"\xff\xff\xff"))
        check(e is not None and e.code() == grpc.StatusCode.INVALID_ARGUMENT,
              "Allocate with garbage: INVALID_ARGUMENT: %s" % (e and e.details()))
        e = rpc_error(lambda: k.call("carve-gpu.sock", "GetPreferredAllocation", b"\x0a\xff"))
        check(e is not None and e.code() == grpc.StatusCode.INVALID_ARGUMENT,
              "GetPreferredAllocation with garbage: INVALID_ARGUMENT")
        rnd = random.Random(16)
        answered = 0
        for i in range(300):
            method = rnd.choice(["Allocate", "GetPreferredAllocation", "PreStartContainer",
                                 "GetDevicePluginOptions"])
            body = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40)))
            try:
                k.call(rnd.choice(list(RESOURCES.values())), method, body)
            except grpc.RpcError as err:
                if err.code() not in (grpc.StatusCode.INVALID_ARGUMENT,
                                      grpc.StatusCode.FAILED_PRECONDITION):
                    check(False, "%s with %r: %s" % (method, body, err.code()))
                    break
            answered += 1
        check(answered == 300, "300 random requests answered (error or not)")
        a = k.allocate("carve-gpu.sock", [[G0]])[0]
        check(a["envs"].get("CARVE_POD") == "default/whole", "still serving after garbage")

        # -- health: the open stream gets the new list
        check(h.cmd("unhealthy 0") == "ok", "GPU 0 marked unhealthy")
        devs = next(it)
        check([(d["ID"], d["health"]) for d in devs] ==
              [(G0, "Unhealthy"), (G2, "Healthy")], "ListAndWatch sends GPU 0 Unhealthy")
        ch.close()

        # -- kubelet restart: registered again
        n0 = len(k.registrations)
        k.restart()
        check(wait_for(lambda: len(k.registrations) >= n0 + len(RESOURCES)),
              "re-registered after a kubelet restart (%d)" % (len(k.registrations) - n0))
        check(wait_for(lambda: all(os.path.exists(os.path.join(tmp, s))
                                   for s in RESOURCES.values())),
              "plugin sockets served again")
        _, it4 = k.watch("carve-gpu.sock")
        check([d["health"] for d in next(it4)] == ["Unhealthy", "Healthy"],
              "ListAndWatch after the restart")

        # -- a kubelet answering Register with garbage: logged, retried
        k.garbage = True
        n1 = len(k.registrations)
        k.restart()
        check(wait_for(lambda: len(k.registrations) >= n1 + len(RESOURCES)),
              "registration attempted on the garbage kubelet")
        check(wait_for(lambda: "is not a v1beta1.Empty" in open(log_path).read()),
              "garbage answer to Register logged")
        k.garbage = False
        n2 = len(k.registrations)
        check(wait_for(lambda: set(RESOURCES) <= set(r["resource_name"] for r in
                                                     k.registrations[n2:]), 15),
              "registered again once the kubelet answers properly")
        a = k.allocate("carve-gpu.sock", [[G0]])[0]
        check(a["envs"].get("CARVE_POD") == "default/whole", "serving after all that")

        # -- MIG disabled on GPU 1: its MIG plugins stop, it is a whole GPU
        _, it5 = k.watch("carve-gpu.sock")
        next(it5)
        check(h.cmd("migoff") == "ok", "MIG off on GPU 1")
        G1 = "GPU-11111111-1111-1111-1111-111111111111"
        devs = next(it5)
        check([d["ID"] for d in devs] == [G0, G1, G2], "ListAndWatch gpu gains GPU 1: %s" % devs)
        check(wait_for(lambda: not any(os.path.exists(os.path.join(tmp, s)) for s in
                                       ("carve-mig-3g.40gb.sock", "carve-mig-1g.10gb.sock",
                                        "carve-mig-1g.10gb.me.sock"))),
              "MIG plugins stopped, their sockets removed")
        e = rpc_error(lambda: k.allocate("carve-gpu.sock", [[G1]]))
        check(e is not None and "default/mig was not considered: device 1: GPU 1 has no MIG "
              "device 3g.40gb at slot 0" in e.details(),
              "a binding to a MIG device that is gone is named: %s" % (e and e.details()))

        h.p.stdin.write("quit\n")
        h.p.stdin.flush()
        rc = h.p.wait(timeout=20)
        check(rc == 0, "harness exits 0 (%s)" % rc)
        check(not any(os.path.exists(os.path.join(tmp, s)) for s in RESOURCES.values()),
              "plugin sockets removed on stop")
    finally:
        if h and h.p.poll() is None:
            h.p.kill()
        k.stop()
        log.close()
        if failures:
            print("--- plugin log ---")
            print(open(log_path).read())
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
