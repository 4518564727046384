#!/usr/bin/python3
"""node_e2e: a MIG pod from the scheduler's Binding to the kubelet's Allocate.

Run by node_e2e.sh, which starts the fake API server (FAKE_URL, KUBECONFIG in
the environment).  This script starts, in a temporary directory it removes:
the fake kubelet (fake_kubelet.py) on DIR/kubelet.sock, `carve node` over the
mock NVML (a node of two A100-SXM4-80GB with MIG on: GPU 0 3g.40gb@0,
2g.20gb@4, 1g.10gb@6; GPU 1 3g.40gb@0, 3g.40gb@4, all idle) serving its device
plugins in DIR, and `carve scheduler --mig-dynamic`.  Every process it starts
is killed when it ends, pass or fail.  Checks:
  - the agent writes carve.dev/mig-current; the scheduler binds a pod asking
    carve.dev/mig-1g.10gb to the only free 1g.10gb (gpu=0,mig=1g.10gb@6);
  - the kubelet's GetPreferredAllocation names that instance, and Allocate
    returns exactly its MIG UUID in NVIDIA_VISIBLE_DEVICES;
  - an Allocate no binding matches is refused and a CarveAllocateRefused
    Event appears; garbage to Allocate is INVALID_ARGUMENT;
  - a kubelet answering Register with garbage is logged, and the agent
    registers again and keeps serving once the kubelet is sane;
  - Dynamic MIG: a second 1g.10gb pod makes the scheduler write
    carve.dev/mig-layout for the idle GPU 1, the agent applies it on the mock
    and reports it in carve.dev/mig-current, the scheduler binds the pod
    there and Allocate of the new instance returns it for that pod.

Usage: node_e2e.py CARVE NVML_LIB
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_kubelet  # noqa: E402

URL = os.environ["FAKE_URL"]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def wait_for(pred, secs=20):
    end = time.time() + secs
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    return pred()


def api(method, path, body=None, ctype="application/json"):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(URL + path, data=data, method=method,
                                 headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read().decode() or "null")
    except urllib.error.HTTPError as e:
        raise RuntimeError("%s %s: %d %s" % (method, path, e.code, e.read()[:300]))


def node_meta():
    m = api("GET", "/api/v1/nodes/node-a")["metadata"]
    return {**m.get("labels", {}), **m.get("annotations", {})}


def pod_devices(name):
    p = api("GET", "/api/v1/namespaces/team-a/pods/" + name)
    if not p.get("spec", {}).get("nodeName"):
        return None
    return p["metadata"].get("annotations", {}).get("carve.dev/devices")


def event_reasons(ns):
    return [(e.get("reason"), e.get("note", e.get("message", "")))
            for e in api("GET", "/apis/events.k8s.io/v1/namespaces/%s/events" % ns)
            .get("items", [])]


def rpc_error(fn):
    try:
        fn()
    except grpc.RpcError as e:
        return e
    return None


def uuid(gpu, gi):
    return "MIG-a1000000-0000-4000-8000-%012d" % (gpu * 100 + gi)


def gpu(i, inst):
    return {"uuid": "GPU-a1000000-0000-4000-8000-00000000000%d" % i,
            "name": "NVIDIA A100-SXM4-80GB", "minor": i,
            "pci_bus_id": "00000000:%02X:00.0" % (0x18 + 16 * i), "pci_device_id": 548540638,
            "memory_mib": 81920, "cc": [8, 0], "arch": 7, "numa": 0, "mig": [1, 1],
            "util": [0, 0], "power_mw": 90000, "energy_mj": 1000, "temp": 35,
            "sm_clock": 1410, "mem_clock": 1593, "processes": [],
            "instances": [{"profile": p, "start": st, "gi": gi, "ci": 0, "uuid": uuid(i, gi)}
                          for p, st, gi in inst]}


def pod(name, res):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "team-a"},
            "spec": {"schedulerName": "carve", "containers": [{
                "name": "main", "image": "registry.example/app:1",
                "resources": {"requests": {res: "1"}, "limits": {res: "1"}}}]}}


def latest(it):
    """The next device list of a ListAndWatch stream, as {ID: health}."""
    return {d["ID"]: d["health"] for d in next(it)}


def run(carve, nvml, tmp):
    node = {"driver_version": "535.129.03", "cuda_version": 12020, "gpus": [
        gpu(0, [("3g.40gb", 0, 2), ("2g.20gb", 4, 3), ("1g.10gb", 6, 9)]),
        gpu(1, [("3g.40gb", 0, 1), ("3g.40gb", 4, 2)])]}
    with open(os.path.join(tmp, "node.json"), "w") as f:
        json.dump(node, f)
    env = dict(os.environ, CARVE_MOCK_NVML=os.path.join(tmp, "node.json"))
    dpdir = os.path.join(tmp, "dp")
    os.mkdir(dpdir)

    # The Node as the kubelet registers it: allocatable from carve's plugins.
    api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                       "metadata": {"name": "team-a"}})
    api("POST", "/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-a", "labels": {
            "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "2",
            "nvidia.com/mig.strategy": "mixed"}},
        "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110",
                                   "carve.dev/mig-3g.40gb": "3", "carve.dev/mig-2g.20gb": "1",
                                   "carve.dev/mig-1g.10gb": "1"}}})

    k = fake_kubelet.FakeKubelet(dpdir)
    k.start()
    procs = []
    try:
        agent_log = open(os.path.join(tmp, "agent.log"), "w")
        procs.append(subprocess.Popen(
            [carve, "node", "--node-name", "node-a", "--nvml-lib", nvml,
             "--device-plugin-dir", dpdir, "--metrics-listen", "127.0.0.1:0",
             "--interval", "1", "--max-seconds", "90"],
            env=env, stderr=agent_log, stdout=subprocess.DEVNULL))
        check(wait_for(lambda: node_meta().get("carve.dev/mig-current") ==
                       "0=3g.40gb@0,2g.20gb@4,1g.10gb@6;1=3g.40gb@0,3g.40gb@4"),
              "the agent writes carve.dev/mig-current")
        check(wait_for(lambda: "carve.dev/mig-1g.10gb" in k.resources()),
              "the agent registers carve.dev/mig-1g.10gb with the kubelet: %s" % k.resources())
        sock = "carve-mig-1g.10gb.sock"
        check(wait_for(lambda: os.path.exists(os.path.join(dpdir, sock))), sock + " served")
        ch, it = k.watch(sock, timeout=60)
        devs = latest(it)
        check(devs == {uuid(0, 9): "Healthy"}, "ListAndWatch 1g.10gb: %s" % devs)

        sched_log = open(os.path.join(tmp, "sched.log"), "w")
        procs.append(subprocess.Popen(
            [carve, "scheduler", "--leader-elect=false", "--metrics-addr", "0",
             "--queues", "none", "--mig-dynamic", "-v"],
            env=env, stderr=sched_log, stdout=subprocess.DEVNULL))

        # -- static MIG: bound by the scheduler, handed over by the agent
        api("POST", "/api/v1/namespaces/team-a/pods", pod("mig-a", "carve.dev/mig-1g.10gb"))
        got = wait_for(lambda: pod_devices("mig-a"), 30)
        check(got == "gpu=0,mig=1g.10gb@6", "mig-a bound to gpu=0,mig=1g.10gb@6: %s" % got)
        pref = wait_for(lambda: k.preferred(sock, [([uuid(0, 9)], [], 1)]) == [[uuid(0, 9)]])
        check(pref, "GetPreferredAllocation names mig-a's instance")
        a = wait_for(lambda: rpc_error(lambda: k.allocate(sock, [[uuid(0, 9)]])) is None)
        a = k.allocate(sock, [[uuid(0, 9)]])[0] if a else {"envs": {}}
        check(a["envs"].get("NVIDIA_VISIBLE_DEVICES") == uuid(0, 9) and
              a["envs"].get("CARVE_POD") == "team-a/mig-a",
              "Allocate returns exactly mig-a's MIG UUID: %s" % a["envs"])

        # -- refusal: a 2g.20gb no pod is bound to
        e = rpc_error(lambda: k.allocate("carve-mig-2g.20gb.sock", [[uuid(0, 3)]]))
        check(e is not None and e.code() == grpc.StatusCode.FAILED_PRECONDITION,
              "Allocate with no binding refused: %s" % (e and e.details()))
        # No pod is near that request, so the Event is on the Node.
        check(wait_for(lambda: any(r == "CarveAllocateRefused" and "mig-2g.20gb" in n
                                   for r, n in event_reasons("default"))),
              "a CarveAllocateRefused Event on the Node: %s" % event_reasons("default"))
        check(not any(r == "CarveAllocateRefused" for r, _ in event_reasons("team-a")),
              "no refusal on team-a's pods")
        e = rpc_error(lambda: k.call(sock, "Allocate", b"\xff\xff\xff"))
        check(e is not None and e.code() == grpc.StatusCode.INVALID_ARGUMENT,
              "Allocate with garbage: INVALID_ARGUMENT: %s" % (e and e.details()))

        # -- a kubelet answering garbage: logged, the agent keeps serving
        k.garbage = True
        n1 = len(k.registrations)
        k.restart()
        check(wait_for(lambda: len(k.registrations) > n1), "registration on the garbage kubelet")
        check(wait_for(lambda: "is not a v1beta1.Empty" in
                       open(os.path.join(tmp, "agent.log")).read()),
              "garbage answer to Register logged")
        k.garbage = False
        n2 = len(k.registrations)
        check(wait_for(lambda: "carve.dev/mig-1g.10gb" in
                       [r["resource_name"] for r in k.registrations[n2:]], 30),
              "registered again once the kubelet answers properly")
        check(procs[0].poll() is None, "the agent still runs")
        a = wait_for(lambda: os.path.exists(os.path.join(dpdir, sock)) and
                     rpc_error(lambda: k.allocate(sock, [[uuid(0, 9)]])) is None)
        check(a, "Allocate of mig-a's instance after the kubelet restarts")

        # -- Dynamic MIG: no free 1g.10gb; GPU 1 is idle
        api("POST", "/api/v1/namespaces/team-a/pods", pod("mig-b", "carve.dev/mig-1g.10gb"))
        lay = wait_for(lambda: node_meta().get("carve.dev/mig-layout"), 30)
        check(lay is not None and lay.startswith("1=") and "1g.10gb" in lay,
              "the scheduler writes carve.dev/mig-layout for GPU 1: %s" % lay)
        cur = wait_for(lambda: (node_meta().get("carve.dev/mig-current") or "").endswith(
            ";" + (lay or "-")), 30)
        check(cur, "the agent applies it: carve.dev/mig-current %s" %
              node_meta().get("carve.dev/mig-current"))
        check("GPU 1: applied" in node_meta().get("carve.dev/mig-status", ""),
              "carve.dev/mig-status: %s" % node_meta().get("carve.dev/mig-status"))
        got = wait_for(lambda: pod_devices("mig-b"), 30)
        check(got is not None and got.startswith("gpu=1,mig=1g.10gb@"),
              "mig-b bound on GPU 1 once mig-current shows it: %s" % got)
        ch.close()
        _, it2 = k.watch(sock, timeout=30)
        devs = latest(it2)
        new = sorted(d for d in devs if d != uuid(0, 9))
        check(len(new) >= 1, "ListAndWatch lists GPU 1's new 1g.10gb instances: %s" % devs)
        pref = wait_for(lambda: k.preferred(sock, [(sorted(devs), [], 1)]))
        pick = pref[0][0] if pref and pref[0] else None
        check(pick in new, "GetPreferredAllocation names a new instance: %s" % pref)
        # The mock names an instance it creates MIG-ca7e000<gpu>-<gi>-<start>-...
        # (tests/node/mocknvml.c): the pick must be the slot mig-b is bound to.
        start = got.rsplit("@", 1)[-1] if got else "-"
        check(pick is not None and pick.startswith("MIG-ca7e0001-") and
              start.isdigit() and int(pick.split("-")[3], 16) == int(start),
              "the preferred instance is mig-b's slot (GPU 1, start %s): %s" % (start, pick))
        a = wait_for(lambda: pick and rpc_error(lambda: k.allocate(sock, [[pick]])) is None)
        a = k.allocate(sock, [[pick]])[0] if a else {"envs": {}}
        check(a["envs"].get("NVIDIA_VISIBLE_DEVICES") == pick and
              a["envs"].get("CARVE_POD") == "team-a/mig-b",
              "Allocate returns mig-b's new instance: %s" % a["envs"])
        others = [d for d in new if d != pick]
        if others:
            e = rpc_error(lambda: k.allocate(sock, [[others[0]]]))
            check(e is not None, "Allocate of another new instance (no binding) refused")
        check(procs[0].poll() is None and procs[1].poll() is None,
              "agent and scheduler still run")

        # -- SIGTERM: both stop with 0, the agent removes its plugin sockets
        for p, what in ((procs[0], "carve node"), (procs[1], "carve scheduler")):
            p.terminate()
            try:
                rc = p.wait(15)
            except subprocess.TimeoutExpired:
                rc = "still running"
            check(rc == 0, "%s stops on SIGTERM with 0 (got %s)" % (what, rc))
        left = sorted(n for n in os.listdir(dpdir) if n.startswith("carve-"))
        check(not left, "the agent's plugin sockets removed: %s" % left)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        k.stop()


def main():
    tmp = tempfile.mkdtemp(prefix="carve-node-e2e.")
    try:
        run(sys.argv[1], sys.argv[2], tmp)
    except Exception as e:  # a failed step is a failed test, with what ran
        check(False, "unexpected %s: %s" % (type(e).__name__, e))
    finally:
        for name in ("agent.log", "sched.log") if failures else ():
            if os.path.exists(os.path.join(tmp, name)):
                print("---- " + name, file=sys.stderr)
                with open(os.path.join(tmp, name)) as f:
                    sys.stderr.write(f.read()[-6000:])
        shutil.rmtree(tmp, ignore_errors=True)
    print("node_e2e: %s" % ("ok" if not failures else "%d failed" % len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
