#!/usr/bin/python3
"""e2e_lib.py - what the scheduler's end-to-end tests (tests/kube/e2e_*.sh)
ask the fake API server: Python's standard library only, plain HTTP or the
test CA, against FAKE_URL / FAKE_CA from tests/kube/kubeenv.sh.

  e2e_lib.py wait-bound NS/NAME... [--timeout S]  until every pod is bound
  e2e_lib.py wait-gone NS/NAME... [--timeout S]   until every pod is deleted
  e2e_lib.py wait-cond NS/NAME TYPE STATUS [--timeout S]
  e2e_lib.py cond NS/NAME TYPE       "status|reason|message" of a condition
  e2e_lib.py show                    "ns/name node devices" per bound pod, sorted
  e2e_lib.py check-devices           no device assigned twice (exit 1 if so)
  e2e_lib.py gangs                   every carve gang bound whole or not at
                                     all (kueue.x-k8s.io/pod-group-name)
  e2e_lib.py count-bound [PREFIX]    bound pods (whose ns/name starts with PREFIX)
  e2e_lib.py lease NS NAME           the Lease's holderIdentity
  e2e_lib.py status KIND-PATH        an object's .status as JSON (path after /apis/)
  e2e_lib.py events NS/NAME          "type reason note" of the pod's events

The devices check reads carve.dev/devices (docs/kubernetes.md): on one GPU
of one node a whole-GPU entry excludes every other entry, a MIG instance
(profile@start) and a time-slice replica number appear once, fractions add
up to at most 1000 milli.
"""
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request

URL = os.environ.get("FAKE_URL", "")
CA = os.environ.get("FAKE_CA", "")
CTX = ssl.create_default_context(cafile=CA) if CA else None


def get(path):
    req = urllib.request.Request(URL + path)
    try:
        with urllib.request.urlopen(req, context=CTX, timeout=10) as r:
            return json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise


def pods():
    return (get("/api/v1/pods") or {}).get("items", [])


def key(p):
    m = p["metadata"]
    return m.get("namespace", "") + "/" + m["name"]


def node(p):
    return (p.get("spec") or {}).get("nodeName") or ""


def ann(p, k):
    return ((p["metadata"].get("annotations")) or {}).get(k, "")


def by_key():
    return {key(p): p for p in pods()}


def deadline_of(args):
    t = 60.0
    if "--timeout" in args:
        i = args.index("--timeout")
        t = float(args[i + 1])
        del args[i:i + 2]
    return time.monotonic() + t


def wait(args, ok, what):
    end = deadline_of(args)
    while True:
        cur = by_key()
        missing = [k for k in args if not ok(cur.get(k))]
        if not missing:
            return 0
        if time.monotonic() > end:
            print("timeout waiting for %s: %s" % (what, " ".join(missing)))
            show()
            return 1
        time.sleep(0.2)


def cond_of(p, typ):
    for c in ((p or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == typ:
            return c
    return None


def show():
    for k, p in sorted(by_key().items()):
        if node(p):
            print(k, node(p), ann(p, "carve.dev/devices"))
    return 0


def parse_devices(s):
    out = []
    for ent in s.split(";"):
        kv = dict(x.split("=", 1) for x in ent.split(","))
        out.append(kv)
    return out


def check_devices():
    use = {}
    bad = []
    n = 0
    for k, p in sorted(by_key().items()):
        d = ann(p, "carve.dev/devices")
        if not node(p) or not d:
            continue
        n += 1
        for e in parse_devices(d):
            use.setdefault((node(p), e["gpu"]), []).append((k, e))
    for (nd, g), ents in sorted(use.items()):
        whole = [k for k, e in ents if not ({"mig", "replica", "milli"} & set(e))]
        if whole and len(ents) > 1:
            bad.append("%s gpu %s: whole GPU of %s shared with %s" %
                       (nd, g, whole[0], [k for k, _ in ents if k != whole[0]]))
        for field in ("mig", "replica"):
            seen = {}
            for k, e in ents:
                if field in e:
                    if e[field] in seen:
                        bad.append("%s gpu %s: %s %s given to %s and %s" %
                                   (nd, g, field, e[field], seen[e[field]], k))
                    seen[e[field]] = k
        milli = sum(int(e["milli"]) for _, e in ents if "milli" in e)
        if milli > 1000:
            bad.append("%s gpu %s: fractions add up to %d milli" % (nd, g, milli))
    for b in bad:
        print("DOUBLE ASSIGNMENT:", b)
    print("devices: %d bound carve pods, %d conflicts" % (n, len(bad)))
    return 1 if bad else 0


def gangs():
    groups = {}
    for k, p in by_key().items():
        g = ((p["metadata"].get("labels")) or {}).get("kueue.x-k8s.io/pod-group-name")
        if g and (p.get("spec") or {}).get("schedulerName") == "carve":
            groups.setdefault(p["metadata"].get("namespace", "") + "/" + g, []).append(p)
    bad = 0
    for g, ps in sorted(groups.items()):
        total = int(ann(ps[0], "kueue.x-k8s.io/pod-group-total-count") or len(ps))
        b = sum(1 for p in ps if node(p))
        state = "whole" if b == total else "none" if b == 0 else "HALF-BOUND"
        if state == "HALF-BOUND":
            bad = 1
        print("gang %s: %d of %d bound: %s" % (g, b, total, state))
    return bad


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "wait-bound":
        return wait(args, lambda p: p is not None and node(p), "bindings")
    if cmd == "wait-gone":
        return wait(args, lambda p: p is None, "deletions")
    if cmd == "wait-cond":
        end = deadline_of(args)
        k, typ, st = args
        while True:
            c = cond_of(by_key().get(k), typ)
            if c and c.get("status") == st:
                return 0
            if time.monotonic() > end:
                print("timeout waiting for %s %s=%s (now %s)" % (k, typ, st, c))
                return 1
            time.sleep(0.2)
    if cmd == "cond":
        c = cond_of(by_key().get(args[0]), args[1]) or {}
        print("%s|%s|%s" % (c.get("status", ""), c.get("reason", ""), c.get("message", "")))
        return 0
    if cmd == "show":
        return show()
    if cmd == "check-devices":
        return check_devices()
    if cmd == "gangs":
        return gangs()
    if cmd == "count-bound":
        pre = args[0] if args else ""
        print(sum(1 for k, p in by_key().items() if node(p) and k.startswith(pre)))
        return 0
    if cmd == "lease":
        o = get("/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s" % (args[0], args[1]))
        print(((o or {}).get("spec") or {}).get("holderIdentity") or "")
        return 0
    if cmd == "status":
        o = get("/apis/" + args[0])
        print(json.dumps((o or {}).get("status") or {}, sort_keys=True))
        return 0
    if cmd == "events":
        ns, name = args[0].split("/", 1)
        evs = (get("/apis/events.k8s.io/v1/namespaces/%s/events" % ns) or {}).get("items", [])
        for e in evs:
            r = e.get("regarding") or {}
            if r.get("name") == name:
                print(e.get("type"), e.get("reason"), e.get("note"))
        return 0
    print("e2e_lib.py: unknown command " + cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
