#!/usr/bin/python3
"""fake_pyclient.py: holds the fake API server (tests/kube/fakeapi.py) to
Kubernetes' behaviour through Debian's python3-kubernetes client: list with
paging, watch in order from a resourceVersion, bookmarks, 410 Expired after
compaction (HTTP and in-stream), selectors on lists and watches, binding and
its 409s, the status subresource with conditions merged by type, Leases with
stale resourceVersions, injected faults, bad requests, TLS with a bearer token.

Exit 0 when every check passes, 1 otherwise, 77 (skipped) when the
kubernetes package cannot be imported.  Starts and stops its own servers.
"""

import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

try:
    import kubernetes
    from kubernetes import client, watch
    from kubernetes.client.rest import ApiException
except ImportError as e:
    print("SKIP: python3-kubernetes not importable: %s" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
FAILS = []
PASSES = [0]


def check(name, cond, detail=""):
    if cond:
        PASSES[0] += 1
    else:
        FAILS.append(name)
        print("FAIL: %s %s" % (name, detail))


class Fake:
    def __init__(self, *args):
        self.dir = tempfile.mkdtemp(prefix="carve-fakepy.")
        pf = os.path.join(self.dir, "port")
        self.proc = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "fakeapi.py"),
                                      "--port-file", pf, "--max-seconds", "60"] + list(args))
        for _ in range(150):
            if os.path.exists(pf):
                break
            if self.proc.poll() is not None:
                raise SystemExit("fakeapi.py exited with %s" % self.proc.returncode)
            time.sleep(0.1)
        with open(pf) as f:
            self.port = int(f.read())
        self.tls = "--tls-dir" in args
        self.url = "%s://127.0.0.1:%d" % ("https" if self.tls else "http", self.port)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)
        subprocess.run(["rm", "-rf", self.dir])

    def raw(self, method, path, body=None, ctype="application/json", headers=None, ca=None):
        """(status, parsed JSON body) of one request."""
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        h = {"Content-Type": ctype}
        h.update(headers or {})
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=h)
        ctx = ssl.create_default_context(cafile=ca) if ca else None
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
                return r.status, json.loads(r.read() or b"null"), _hdrs(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null"), _hdrs(e.headers)

    def api(self, token=None):
        cfg = client.Configuration()
        cfg.host = self.url
        if self.tls:
            cfg.ssl_ca_cert = os.path.join(self.dir, "tls", "ca.crt")
        if token:
            cfg.api_key = {"authorization": "Bearer " + token}
        return client.ApiClient(cfg)


def _hdrs(h):
    """Headers as a dict, repeated ones joined with ", "."""
    return {k: ", ".join(h.get_all(k)) for k in set(h.keys())}


def pod(name, labels=None, sched="carve"):
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name, labels=labels or {}),
                        spec=client.V1PodSpec(scheduler_name=sched, containers=[
                            client.V1Container(name="c", image="busybox")]))


def expect_status(name, fn, code):
    try:
        fn()
    except ApiException as e:
        check(name, e.status == code, "got %s: %s" % (e.status, e.body))
        return e
    check(name, False, "no error, wanted %d" % code)
    return None


def raw_watch_lines(core, ns, rv, secs, out, **kw):
    """Read a watch stream's events into out (a list) until it ends."""
    resp = core.list_namespaced_pod(ns, watch=True, resource_version=rv,
                                    timeout_seconds=secs, _preload_content=False, **kw)
    try:
        for line in _lines(resp):
            out.append(json.loads(line))
    except Exception as e:  # a dropped connection ends the stream
        out.append({"type": "CLOSED", "error": str(e)})
    finally:
        resp.release_conn()


def _lines(resp):
    buf = b""
    for chunk in resp.stream(1024):
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line.strip():
                yield line


def main():
    fake = Fake("--bookmark-seconds", "0.3", "--history", "50")
    try:
        run_plain(fake)
    finally:
        fake.stop()
    tdir = tempfile.mkdtemp(prefix="carve-fakepy-tls.")
    tfake = Fake("--tls-dir", tdir, "--token", "s3cret")
    try:
        run_tls(tfake, tdir)
    finally:
        tfake.stop()
        subprocess.run(["rm", "-rf", tdir])
    gfake = Fake("--pod-grace", "0.5")
    try:
        run_grace(gfake)
    finally:
        gfake.stop()
    run_lifetime()
    print("fake_pyclient: %d passed, %d failed (python3-kubernetes %s)"
          % (PASSES[0], len(FAILS), kubernetes.__version__))
    return 1 if FAILS else 0


def run_plain(fake):
    api = fake.api()
    core = client.CoreV1Api(api)
    coord = client.CoordinationV1Api(api)
    ns = "t1"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))

    # ---- list with paging: a consistent snapshot across pages
    for i in range(25):
        core.create_namespaced_config_map(ns, client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="cm-%02d" % i, labels={"i": str(i % 3)}),
            data={"k": str(i)}))
    page = core.list_namespaced_config_map(ns, limit=10)
    names, rvs, pages = [c.metadata.name for c in page.items], {page.metadata.resource_version}, 1
    core.create_namespaced_config_map(ns, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="cm-zz")))
    while page.metadata._continue:
        page = core.list_namespaced_config_map(ns, limit=10, _continue=page.metadata._continue)
        names += [c.metadata.name for c in page.items]
        rvs.add(page.metadata.resource_version)
        pages += 1
    check("paging: 3 pages", pages == 3, pages)
    check("paging: every item once, in order", names == ["cm-%02d" % i for i in range(25)], names)
    check("paging: one resourceVersion for the whole list", len(rvs) == 1, rvs)
    full = core.list_namespaced_config_map(ns)
    check("list: later create seen by a new list", len(full.items) == 26)
    check("list: rv is the newest", int(full.metadata.resource_version) > int(rvs.pop()))
    sel = core.list_namespaced_config_map(ns, label_selector="i in (0,2),i!=2")
    check("labelSelector in/!=", len(sel.items) == 9, len(sel.items))
    sel = core.list_namespaced_config_map(ns, label_selector="!i")
    check("labelSelector !key", [c.metadata.name for c in sel.items] == ["cm-zz"])
    sel = core.list_namespaced_config_map(ns, label_selector="i notin (0),i")
    check("labelSelector notin + exists", len(sel.items) == 16, len(sel.items))
    expect_status("labelSelector malformed -> 400",
                  lambda: core.list_namespaced_config_map(ns, label_selector="a in (b"), 400)
    expect_status("fieldSelector unsupported -> 400",
                  lambda: core.list_namespaced_pod(ns, field_selector="spec.foo=x"), 400)

    # ---- watch from a resourceVersion: ADDED, MODIFIED, DELETED in order
    rv = core.list_namespaced_pod(ns).metadata.resource_version
    core.create_namespaced_pod(ns, pod("w1", {"app": "x"}))
    core.patch_namespaced_pod("w1", ns, {"metadata": {"labels": {"step": "2"}}})
    core.delete_namespaced_pod("w1", ns)
    got = []
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, ns, resource_version=rv, timeout_seconds=5):
        got.append((ev["type"], ev["object"].metadata.name,
                    int(ev["object"].metadata.resource_version)))
        if ev["type"] == "DELETED":
            w.stop()
    check("watch: ADDED, MODIFIED, DELETED in order",
          [g[0] for g in got] == ["ADDED", "MODIFIED", "DELETED"], got)
    check("watch: resourceVersions increase", [g[2] for g in got] == sorted(g[2] for g in got)
          and len({g[2] for g in got}) == 3, got)
    check("watch: the deleted object carries the deletion's rv",
          got and got[-1][2] > int(rv) + 2, got)

    # ---- watch with a selector: leaving it is DELETED, entering ADDED
    rv = core.list_namespaced_pod(ns).metadata.resource_version
    core.create_namespaced_pod(ns, pod("s1", {"tier": "a"}))
    core.patch_namespaced_pod("s1", ns, {"metadata": {"labels": {"tier": "b"}}})
    core.patch_namespaced_pod("s1", ns, {"metadata": {"labels": {"tier": "a"}}})
    got = []
    for ev in w.stream(core.list_namespaced_pod, ns, resource_version=rv, timeout_seconds=2,
                       label_selector="tier=a"):
        got.append(ev["type"])
        if len(got) == 3:
            w.stop()
    check("watch selector: ADDED, DELETED on leaving, ADDED on entering",
          got == ["ADDED", "DELETED", "ADDED"], got)

    # ---- bookmarks (every 0.3 s here) carry only metadata.resourceVersion
    out = []
    raw_watch_lines(core, ns, core.list_namespaced_pod(ns).metadata.resource_version, 1, out,
                    allow_watch_bookmarks=True)
    bms = [e for e in out if e.get("type") == "BOOKMARK"]
    check("bookmark: seen within 1 s", len(bms) >= 1, out)
    check("bookmark: only metadata.resourceVersion",
          bms and set(bms[0]["object"]["metadata"]) == {"resourceVersion"}, bms[:1])
    out = []
    raw_watch_lines(core, ns, core.list_namespaced_pod(ns).metadata.resource_version, 1, out)
    check("no bookmark unless asked", not any(e.get("type") == "BOOKMARK" for e in out), out)

    # ---- "0" starts with the current state as ADDED
    out = []
    raw_watch_lines(core, ns, "0", 1, out)
    check("watch rv=0: current state as ADDED",
          [(e["type"], e["object"]["metadata"]["name"]) for e in out] == [("ADDED", "s1")], out)

    # ---- watch-list: the state as ADDED, then the initial-events-end bookmark
    # (python3-kubernetes 22 has no send_initial_events: plain urllib here)
    with urllib.request.urlopen(fake.url + "/api/v1/namespaces/%s/pods?watch=1&"
                                "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&"
                                "allowWatchBookmarks=true&timeoutSeconds=1" % ns, timeout=10) as r:
        out = [json.loads(line) for line in r.read().splitlines() if line.strip()]
    kinds = [e["type"] for e in out]
    check("watch-list: ADDED then the initial-events-end BOOKMARK",
          kinds[:2] == ["ADDED", "BOOKMARK"] and
          out[1]["object"]["metadata"].get("annotations") == {"k8s.io/initial-events-end": "true"},
          out[:3])
    st, body, _ = fake.raw("GET", "/api/v1/namespaces/%s/pods?watch=1&sendInitialEvents=true"
                           "&allowWatchBookmarks=true" % ns)
    check("watch-list without resourceVersionMatch -> 422", st == 422, body)

    # ---- 410 Expired: in the stream for a running watch, then as HTTP status
    old_rv = core.list_namespaced_pod(ns).metadata.resource_version
    out = []
    t = threading.Thread(target=raw_watch_lines, args=(core, ns, old_rv, 5, out))
    t.start()
    time.sleep(0.5)
    core.create_namespaced_pod(ns, pod("before-compact"))
    st, body, _ = fake.raw("POST", "/fake/faults", {"compact": True})
    check("faults: compact accepted", st == 200, body)
    t.join(6)
    errs = [e for e in out if e.get("type") == "ERROR"]
    check("compact: running watch gets ERROR 410 Expired",
          errs and errs[0]["object"]["code"] == 410 and errs[0]["object"]["reason"] == "Expired",
          out)
    core.create_namespaced_pod(ns, pod("after-compact"))
    e = expect_status("compact: watch from an old rv -> HTTP 410",
                      lambda: core.list_namespaced_pod(ns, watch=True, resource_version=old_rv,
                                                       _preload_content=False), 410)
    check("410 body is a Status with reason Expired",
          e is not None and json.loads(e.body).get("reason") == "Expired")
    # the history bound (50 events here): a watch that far back is 410 too
    rv = core.list_namespaced_pod(ns).metadata.resource_version
    for i in range(60):
        core.patch_namespaced_config_map("cm-00", ns, {"data": {"k": str(i)}})
    expect_status("history bound: 60 events later -> 410",
                  lambda: core.list_namespaced_pod(ns, watch=True, resource_version=rv,
                                                   _preload_content=False), 410)

    # ---- watch events cut across chunks still arrive whole and in order
    rv = core.list_namespaced_pod(ns).metadata.resource_version
    fake.raw("POST", "/fake/faults", {"split_chunks": True})
    for i in range(5):
        core.create_namespaced_pod(ns, pod("split-%d" % i))
    got = []
    for ev in w.stream(core.list_namespaced_pod, ns, resource_version=rv, timeout_seconds=3):
        got.append(ev["object"].metadata.name)
        if len(got) == 5:
            w.stop()
    fake.raw("POST", "/fake/faults", {"reset": True})
    check("split_chunks: every event whole, in order", got == ["split-%d" % i for i in range(5)],
          got)

    # ---- drop a watch after N events
    rv = core.list_namespaced_pod(ns).metadata.resource_version
    fake.raw("POST", "/fake/faults", {"drop_watch_after": 2})
    for i in range(4):
        core.create_namespaced_config_map(ns, client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="drop-%d" % i)))
    out = []
    resp = core.list_namespaced_config_map(ns, watch=True, resource_version=rv,
                                           timeout_seconds=3, _preload_content=False)
    t0 = time.monotonic()
    try:
        for line in _lines(resp):
            out.append(json.loads(line))
    except Exception:
        pass
    check("drop_watch_after 2: two events then the connection closes",
          len(out) == 2 and time.monotonic() - t0 < 2, (len(out), time.monotonic() - t0))

    # ---- binding
    core.create_namespaced_pod(ns, pod("b1"))
    p = core.read_namespaced_pod("b1", ns)
    check("pod defaults: phase Pending, priority 0",
          p.status.phase == "Pending" and p.spec.priority == 0)
    st, body, _ = fake.raw("POST", "/api/v1/namespaces/%s/pods" % ns, {
        "metadata": {"name": "st"}, "spec": {"containers": [{"name": "c", "image": "i"}],
                                             "priorityClassName": "system-node-critical"},
        "status": {"phase": "Running"}})
    check("pod create: status is the server's, priority from the class",
          st == 201 and body["status"] == {"phase": "Pending"} and
          body["spec"]["priority"] == 2000001000, body)
    st, body, _ = fake.raw("POST", "/api/v1/namespaces/%s/pods" % ns, {
        "metadata": {"name": "st2"}, "spec": {"containers": [{"name": "c", "image": "i"}],
                                              "priorityClassName": "nope"}})
    check("pod naming a missing PriorityClass -> 403", st == 403, body)
    body = client.V1Binding(
        metadata=client.V1ObjectMeta(name="b1", uid=p.metadata.uid,
                                     annotations={"carve.dev/devices": "gpu=0"}),
        target=client.V1ObjectReference(api_version="v1", kind="Node", name="n1"))
    r = core.create_namespaced_pod_binding("b1", ns, body, _preload_content=False)
    check("bind: 201", r.status == 201, r.status)
    check("bind: answers a Status Success", json.loads(r.data).get("status") == "Success")
    p2 = core.read_namespaced_pod("b1", ns)
    check("bind: nodeName set", p2.spec.node_name == "n1")
    check("bind: annotations merged",
          (p2.metadata.annotations or {}).get("carve.dev/devices") == "gpu=0")
    conds = {c.type: c.status for c in p2.status.conditions or []}
    check("bind: PodScheduled=True", conds.get("PodScheduled") == "True", conds)
    check("bind: phase stays Pending", p2.status.phase == "Pending")
    expect_status("bind again -> 409",
                  lambda: core.create_namespaced_pod_binding("b1", ns, body,
                                                             _preload_content=False), 409)
    core.create_namespaced_pod(ns, pod("b2"))
    wrong = client.V1Binding(metadata=client.V1ObjectMeta(name="b2", uid="not-the-uid"),
                             target=client.V1ObjectReference(kind="Node", name="n1"))
    expect_status("bind with a stale uid -> 409",
                  lambda: core.create_namespaced_pod_binding("b2", ns, wrong,
                                                             _preload_content=False), 409)
    core.create_namespaced_pod(ns, {"metadata": {"name": "b3"}, "spec": {
        "schedulingGates": [{"name": "g"}], "containers": [{"name": "c", "image": "i"}]}})
    expect_status("bind a gated pod -> 409",
                  lambda: core.create_namespaced_pod_binding(
                      "b3", ns, client.V1Binding(metadata=client.V1ObjectMeta(name="b3"),
                                                 target=client.V1ObjectReference(name="n1")),
                      _preload_content=False), 409)
    expect_status("pod spec.nodeName through an update -> 422",
                  lambda: core.patch_namespaced_pod("b2", ns, {"spec": {"nodeName": "n1"}}), 422)
    fs = core.list_namespaced_pod(ns, field_selector="spec.nodeName=")
    check("fieldSelector spec.nodeName= lists unbound pods only",
          "b1" not in [x.metadata.name for x in fs.items] and
          "b2" in [x.metadata.name for x in fs.items])
    fs = core.list_pod_for_all_namespaces(field_selector="status.phase!=Succeeded,"
                                          "status.phase!=Failed,spec.nodeName=n1")
    check("fieldSelector phase != and nodeName", [x.metadata.name for x in fs.items] == ["b1"])

    # ---- status subresource: conditions merged by type, spec untouched
    core.patch_namespaced_pod_status("b2", ns, {"status": {"conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": "0/1 nodes"}]}})
    core.patch_namespaced_pod_status("b2", ns, {"status": {"conditions": [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}],
        "nominatedNodeName": "n2"}, "metadata": {"labels": {"ignored": "yes"}}})
    p = core.read_namespaced_pod("b2", ns)
    conds = {c.type: (c.status, c.reason) for c in p.status.conditions or []}
    check("status patch: conditions merged by type",
          conds == {"PodScheduled": ("False", "Unschedulable"),
                    "DisruptionTarget": ("True", "PreemptionByScheduler")}, conds)
    check("status patch: nominatedNodeName", p.status.nominated_node_name == "n2")
    check("status patch: metadata untouched", "ignored" not in (p.metadata.labels or {}))
    core.patch_namespaced_pod("b2", ns, {"status": {"phase": "Running"},
                                         "metadata": {"labels": {"l": "1"}}})
    p = core.read_namespaced_pod("b2", ns)
    check("main patch: status ignored", p.status.phase == "Pending")
    check("main patch: labels applied", (p.metadata.labels or {}).get("l") == "1")

    # ---- events.k8s.io/v1 and core v1 Events are one store
    evapi = client.EventsV1Api(api)
    p = core.read_namespaced_pod("b2", ns)
    evapi.create_namespaced_event(ns, {
        "metadata": {"name": "b2.1"}, "eventTime": "2026-12-03T17:00:00.000000Z",
        "reportingController": "carve.dev/scheduler", "reportingInstance": "carve-0",
        "action": "Scheduling", "reason": "FailedScheduling", "type": "Warning",
        "note": "no room", "regarding": {"apiVersion": "v1", "kind": "Pod", "name": "b2",
                                         "namespace": ns, "uid": p.metadata.uid}})
    evs = core.list_namespaced_event(ns, field_selector="involvedObject.uid=" + p.metadata.uid)
    check("events: events.k8s.io Event listed as core v1 with message",
          [(e.reason, e.message, e.reporting_component) for e in evs.items] ==
          [("FailedScheduling", "no room", "carve.dev/scheduler")],
          [(e.reason, e.message) for e in evs.items])
    evs = evapi.list_namespaced_event(ns, field_selector="regarding.name=b2")
    check("events: events.k8s.io list by regarding.name",
          [e.note for e in evs.items] == ["no room"])

    # ---- leases: PUT with a stale resourceVersion is 409
    lease = client.V1Lease(metadata=client.V1ObjectMeta(name="carve"),
                           spec=client.V1LeaseSpec(holder_identity="a",
                                                   lease_duration_seconds=15))
    coord.create_namespaced_lease(ns, lease)
    l1 = coord.read_namespaced_lease("carve", ns)
    l1.spec.holder_identity = "b"
    l2 = coord.replace_namespaced_lease("carve", ns, l1)
    check("lease update: new rv", l2.metadata.resource_version != l1.metadata.resource_version)
    l1.spec.holder_identity = "c"
    expect_status("lease update with a stale rv -> 409",
                  lambda: coord.replace_namespaced_lease("carve", ns, l1), 409)
    check("lease: the winner's record stays",
          coord.read_namespaced_lease("carve", ns).spec.holder_identity == "b")

    # ---- faults: 429 with Retry-After, 500, 409 on the next write
    fake.raw("POST", "/fake/faults", {"throttle": 1, "retry_after": 2})
    st, body, hdr = fake.raw("GET", "/api/v1/namespaces/" + ns)
    check("throttle -> 429 TooManyRequests", st == 429 and body.get("reason") == "TooManyRequests",
          body)
    check("429 carries Retry-After", hdr.get("Retry-After") == "2", hdr)
    check("throttle is used up", core.read_namespace(ns).metadata.name == ns)
    # urllib3 under the client honours Retry-After by itself
    fake.raw("POST", "/fake/faults", {"throttle": 1, "retry_after": 1})
    t0 = time.monotonic()
    check("client retries a 429 after Retry-After",
          core.read_namespace(ns).metadata.name == ns and time.monotonic() - t0 >= 0.9)
    fake.raw("POST", "/fake/faults", {"fail_500": 1})
    expect_status("fail_500 -> 500", lambda: core.read_namespace(ns), 500)
    fake.raw("POST", "/fake/faults", {"conflict_next_writes": 1})
    expect_status("conflict_next_writes -> 409 on a patch",
                  lambda: core.patch_namespaced_pod("b2", ns, {"metadata": {"labels": {"x": "1"}}}),
                  409)
    core.patch_namespaced_pod("b2", ns, {"metadata": {"labels": {"x": "1"}}})
    st, body, _ = fake.raw("POST", "/fake/faults", {"nonsense": 1})
    check("faults: unknown field -> 400", st == 400, body)

    # ---- bad requests get Status objects naming the problem
    st, body, _ = fake.raw("POST", "/api/v1/namespaces/%s/pods" % ns, b"{not json")
    check("malformed JSON -> 400 Status", st == 400 and body.get("kind") == "Status", body)
    st, body, _ = fake.raw("POST", "/api/v1/namespaces/%s/configmaps" % ns, {"metadata": {}})
    check("no name -> 422", st == 422 and body.get("reason") == "Invalid", body)
    st, body, _ = fake.raw("POST", "/api/v1/namespaces/%s/configmaps" % ns,
                           {"metadata": {"name": "Bad_Name"}})
    check("bad name -> 422 naming metadata.name",
          st == 422 and "metadata.name" in body.get("message", ""), body)
    st, body, _ = fake.raw("POST", "/api/v1/namespaces/%s/pods" % ns,
                           {"metadata": {"name": "noimg"},
                            "spec": {"containers": [{"name": "c"}]}})
    check("pod without image -> 422 naming the field",
          st == 422 and "spec.containers[0].image" in body.get("message", ""), body)
    st, body, _ = fake.raw("POST", "/api/v1/namespaces/nope/configmaps", {"metadata": {"name": "a"}})
    check("missing namespace -> 404", st == 404 and body.get("reason") == "NotFound", body)
    st, body, _ = fake.raw("POST", "/api/v1/namespaces/%s/configmaps" % ns,
                           {"metadata": {"name": "cm-01"}})
    check("duplicate -> 409 AlreadyExists", st == 409 and body.get("reason") == "AlreadyExists")
    st, body, _ = fake.raw("GET", "/apis/nope.dev/v1/things")
    check("unknown resource -> 404", st == 404)
    st, body, _ = fake.raw("PATCH", "/api/v1/namespaces/%s/pods/b2" % ns, {"a": 1},
                           ctype="application/apply-patch+yaml")
    check("server-side apply -> 415", st == 415, body)
    st, body, _ = fake.raw("PATCH", "/api/v1/namespaces/%s/configmaps/cm-01" % ns,
                           [{"op": "add", "path": "/data/j", "value": "v"},
                            {"op": "test", "path": "/data/k", "value": "1"}],
                           ctype="application/json-patch+json")
    check("json patch add+test", st == 200 and body["data"] == {"k": "1", "j": "v"}, body)
    st, body, _ = fake.raw("DELETE", "/api/v1/namespaces/%s/pods/b2" % ns,
                           {"preconditions": {"uid": "other"}})
    check("delete with a stale uid precondition -> 409", st == 409, body)

    # ---- a CRD: its kind served, unknown fields pruned as kube-apiserver does
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition({
        "metadata": {"name": "gadgets.example.carve.dev"},
        "spec": {"group": "example.carve.dev", "scope": "Namespaced",
                 "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                   "spec": {"type": "object", "properties": {
                                       "size": {"type": "integer"},
                                       "parts": {"type": "array", "items": {
                                           "type": "object",
                                           "properties": {"name": {"type": "string"}}}},
                                       "free": {"type": "object",
                                                "x-kubernetes-preserve-unknown-fields": True}}},
                                   "status": {"type": "object", "properties": {
                                       "ready": {"type": "boolean"}}}}}}}]}})
    crd = ext.read_custom_resource_definition("gadgets.example.carve.dev")
    check("crd: Established", any(c.type == "Established" and c.status == "True"
                                  for c in crd.status.conditions or []))
    co = client.CustomObjectsApi(api)
    path = "/apis/example.carve.dev/v1/namespaces/%s/gadgets" % ns
    st, body, hdr = fake.raw("POST", path, {
        "apiVersion": "example.carve.dev/v1", "kind": "Gadget", "metadata": {"name": "g1"},
        "spec": {"size": 3, "sise": 4, "parts": [{"name": "a", "nmae": "b"}],
                 "free": {"any": [1]}}, "status": {"ready": True}})
    check("crd: create 201", st == 201, body)
    check("crd: unknown fields pruned, declared and preserved kept",
          body.get("spec") == {"size": 3, "parts": [{"name": "a"}], "free": {"any": [1]}}, body)
    check("crd: warnings name the pruned fields",
          'spec.sise' in str(hdr.get("Warning")) and "spec.parts[0].nmae" in str(hdr.get("Warning")),
          hdr)
    check("crd: status ignored on create of a kind with /status", "status" not in body, body)
    st, body, _ = fake.raw("POST", path + "?fieldValidation=Strict", {
        "apiVersion": "example.carve.dev/v1", "kind": "Gadget", "metadata": {"name": "g2"},
        "spec": {"sise": 4}})
    check("crd: fieldValidation=Strict -> 400 naming the field",
          st == 400 and 'unknown field "spec.sise"' in body.get("message", ""), body)
    co.patch_namespaced_custom_object_status("example.carve.dev", "v1", ns, "gadgets", "g1",
                                             {"status": {"ready": True, "bogus": 1}})
    g = co.get_namespaced_custom_object("example.carve.dev", "v1", ns, "gadgets", "g1")
    check("crd: status subresource pruned too", g.get("status") == {"ready": True}, g)
    lst = co.list_namespaced_custom_object("example.carve.dev", "v1", ns, "gadgets")
    check("crd: list items carry apiVersion and kind",
          lst["items"][0].get("kind") == "Gadget" and lst["kind"] == "GadgetList", lst)
    ext.delete_custom_resource_definition("gadgets.example.carve.dev")
    st, body, _ = fake.raw("GET", path)
    check("crd deleted: its kind is gone (404)", st == 404, body)

    # ---- concurrent binds of one pod: exactly one wins
    core.create_namespaced_pod(ns, pod("race"))
    uid = core.read_namespaced_pod("race", ns).metadata.uid
    codes = []

    def bind_race(node):
        st, _, _ = fake.raw("POST", "/api/v1/namespaces/%s/pods/race/binding" % ns, {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "race", "uid": uid},
            "target": {"kind": "Node", "name": node}})
        codes.append(st)
    ts = [threading.Thread(target=bind_race, args=("n%d" % i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check("8 concurrent binds: one 201, seven 409",
          sorted(codes) == [201] + [409] * 7, codes)

    # ---- odd requests: 4xx Status answers, never a 5xx, the server lives on
    base = "/api/v1/namespaces/%s" % ns
    odd = [("GET", base + "/pods?limit=x", None, "application/json"),
           ("GET", base + "/pods?continue=garbage", None, "application/json"),
           ("GET", base + "/pods?watch=1&resourceVersion=abc", None, "application/json"),
           ("GET", base + "/pods?labelSelector=a%20in%20b", None, "application/json"),
           ("PATCH", base + "/pods/b1", b"[1,2]", "application/merge-patch+json"),
           ("PATCH", base + "/pods/b1", b'[{"op":"remove","path":"/nope/x"}]',
            "application/json-patch+json"),
           ("PATCH", base + "/pods/b1", b'[{"op":"move","path":"/a"}]',
            "application/json-patch+json"),
           ("PATCH", base + "/pods/b1", b"{}", "text/plain"),
           ("PUT", base + "/pods/b1", b'{"metadata":{"name":"other"}}', "application/json"),
           ("PUT", base + "/pods/b1", b'"str"', "application/json"),
           ("POST", base + "/pods", b'{"metadata":"x"}', "application/json"),
           ("POST", base + "/pods", b'{"kind":"Node","metadata":{"name":"k"}}',
            "application/json"),
           ("POST", base + "/pods/b1/binding", b'{"target":{}}', "application/json"),
           ("POST", base + "/pods/b1/binding", b'{"metadata":{"name":"zz"},"target":{"name":"n"}}',
            "application/json"),
           ("POST", base + "/pods/nope/binding", b'{"target":{"name":"n"}}', "application/json"),
           ("DELETE", base + "/pods/nope", None, "application/json"),
           ("POST", "/api/v1/nodes/x/status", b"{}", "application/json"),
           ("GET", "/api/v2/pods", None, "application/json"),
           ("POST", base + "/pods", b"k8s\x00\x0a\x02", "application/vnd.kubernetes.protobuf")]
    bad = []
    for m, path, body, ct in odd:
        st, b, _ = fake.raw(m, path, body, ctype=ct)
        if not (400 <= st < 500 and isinstance(b, dict) and b.get("kind") == "Status"):
            bad.append((m, path, st, b))
    check("odd requests: all 4xx Status objects", not bad, bad)
    check("odd requests: the server still answers", core.read_namespace(ns).metadata.name == ns)

    # ---- bulk load for benchmarks
    st, body, _ = fake.raw("POST", "/fake/load", [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bulk-%d" % i},
         "status": {"allocatable": {"nvidia.com/gpu": "8"}}} for i in range(3)] +
        [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bulk", "namespace": ns}}])
    check("load: 4 created", st == 200 and body.get("created") == 4, body)
    check("load: nodes keep their status",
          core.read_node("bulk-1").status.allocatable == {"nvidia.com/gpu": "8"})
    st, body, _ = fake.raw("POST", "/fake/load", [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bulk-9"}},
        {"apiVersion": "v1", "kind": "Nope", "metadata": {"name": "x"}}])
    check("load: an unknown kind -> 400 naming the item",
          st == 400 and "item 1" in body.get("message", ""), body)

    st, stats, _ = fake.raw("GET", "/fake/stats")
    check("stats: binds counted", stats["requests"].get("bind", {}).get("pods/binding", 0) >= 4,
          stats)
    st, state, _ = fake.raw("GET", "/fake/state")
    check("state: pods listed", any(p["metadata"]["name"] == "b1"
                                     for p in state["objects"].get("pods", [])))


def run_tls(fake, tdir):
    for f in ("ca.crt", "server.crt", "server.key", "client.crt", "client.key"):
        check("tls: %s created" % f, os.path.exists(os.path.join(tdir, f)))
    cfg = client.Configuration()
    cfg.host = fake.url
    cfg.ssl_ca_cert = os.path.join(tdir, "ca.crt")
    cfg.api_key = {"authorization": "Bearer s3cret"}
    core = client.CoreV1Api(client.ApiClient(cfg))
    names = [n.metadata.name for n in core.list_namespace().items]
    check("tls+token: list namespaces", "default" in names, names)
    cfg2 = client.Configuration()
    cfg2.host = fake.url
    cfg2.ssl_ca_cert = os.path.join(tdir, "ca.crt")
    cfg2.api_key = {"authorization": "Bearer wrong"}
    expect_status("tls: wrong token -> 401",
                  lambda: client.CoreV1Api(client.ApiClient(cfg2)).list_namespace(), 401)
    cfg3 = client.Configuration()
    cfg3.host = fake.url
    cfg3.ssl_ca_cert = os.path.join(tdir, "ca.crt")
    cfg3.cert_file = os.path.join(tdir, "client.crt")
    cfg3.key_file = os.path.join(tdir, "client.key")
    names = [n.metadata.name for n in client.CoreV1Api(client.ApiClient(cfg3)).list_namespace().items]
    check("tls: client certificate accepted instead of the token", "default" in names)
    st, body, _ = fake.raw("GET", "/api/v1/namespaces", ca=os.path.join(tdir, "ca.crt"))
    check("tls: no credentials -> 401 Status", st == 401 and body.get("reason") == "Unauthorized")


def run_grace(fake):
    """--pod-grace: a bound pod deleted with a grace period stays marked."""
    core = client.CoreV1Api(fake.api())
    ns = "default"
    for n in ("g1", "g2"):
        core.create_namespaced_pod(ns, pod(n))
    uid = core.read_namespaced_pod("g1", ns).metadata.uid
    b = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "g1", "uid": uid},
         "target": {"kind": "Node", "name": "n1"}}
    st, _, _ = fake.raw("POST", "/api/v1/namespaces/default/pods/g1/binding", b)
    rv = core.list_namespaced_pod(ns).metadata.resource_version
    t0 = time.monotonic()
    d = core.delete_namespaced_pod("g1", ns, grace_period_seconds=30)
    check("grace: the delete answers the pod marked for deletion",
          d.metadata.deletion_timestamp is not None and d.metadata.deletion_grace_period_seconds == 30)
    check("grace: still there while terminating",
          core.read_namespaced_pod("g1", ns).metadata.deletion_timestamp is not None)
    st, body, _ = fake.raw("POST", "/api/v1/namespaces/default/pods/g1/binding", b)
    check("grace: binding a terminating pod -> 409", st == 409, body)
    core.delete_namespaced_pod("g2", ns, grace_period_seconds=30)
    expect_status("grace: an unbound pod goes at once",
                  lambda: core.read_namespaced_pod("g2", ns), 404)
    got = []
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, ns, resource_version=rv, timeout_seconds=3):
        got.append((ev["type"], ev["object"].metadata.name))
        if ev["type"] == "DELETED" and ev["object"].metadata.name == "g1":
            w.stop()
    check("grace: MODIFIED (marked), then DELETED after --pod-grace",
          got == [("MODIFIED", "g1"), ("DELETED", "g2"), ("DELETED", "g1")] and
          time.monotonic() - t0 >= 0.45, (got, time.monotonic() - t0))


def gone_within(pid, secs):
    t0 = time.monotonic()
    while time.monotonic() - t0 < secs:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def run_lifetime():
    """The fake stops by itself: its parent dying, --max-seconds, SIGTERM."""
    d = tempfile.mkdtemp(prefix="carve-fakepy-life.")
    fake = os.path.join(HERE, "fakeapi.py")
    # a parent shell that starts the fake, prints its pid and dies
    sh = subprocess.run(["/bin/sh", "-c", '/usr/bin/python3 "$0" --port-file "$1" & echo $!; '
                         'while [ ! -s "$1" ]; do sleep 0.05; done', fake,
                         os.path.join(d, "p1")], capture_output=True, text=True, timeout=20)
    pid = int(sh.stdout.split()[0])
    check("lifetime: exits when its parent dies", gone_within(pid, 3))
    p = subprocess.Popen(["/usr/bin/python3", fake, "--port-file", os.path.join(d, "p2"),
                          "--max-seconds", "0.5"], stderr=subprocess.DEVNULL)
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        p.kill()
    check("lifetime: exits after --max-seconds", p.returncode == 0)
    p = subprocess.Popen(["/usr/bin/python3", fake, "--port-file", os.path.join(d, "p3"),
                          "--history", "0"], stderr=subprocess.DEVNULL)
    check("usage: --history 0 refused", p.wait(5) == 2)
    subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    sys.exit(main())
