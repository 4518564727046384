#!/usr/bin/python3
"""fake_random.py: random requests against the fake API server
(tests/kube/fakeapi.py): every method on paths of built-in kinds, a CRD and
its objects, subresources, watches and selectors, with bodies that are half
plausible objects and half random JSON, under every patch content type.
Each answer must be a status below 500 (bad input is the client's fault and
must be told so with a 4xx Status), and the server must stay up.

  fake_random.py [REQUESTS [SEED]]   (defaults 1500 and 1; exit 0 ok, 1 not)
"""

import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NS = "/api/v1/namespaces/default"
PATHS = [NS + "/pods", NS + "/pods/p1", NS + "/pods/p1/status", NS + "/pods/p1/binding",
         "/api/v1/nodes", "/api/v1/nodes/n1", "/api/v1/nodes/n1/status",
         "/apis/batch/v1/namespaces/default/jobs", "/apis/batch/v1/namespaces/default/jobs/j1",
         "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
         "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ws.x.dev",
         "/apis/x.dev/v1/ws", "/apis/x.dev/v1/ws/w1", "/apis/x.dev/v1/ws/w1/status",
         "/api/v1/namespaces", "/api/v1/namespaces/ns1", NS + "/configmaps",
         "/api/v1/namespaces/ns1/configmaps", "/apis/events.k8s.io/v1/namespaces/default/events",
         "/apis/events.k8s.io/v1/namespaces/default/events/e1",
         "/apis/coordination.k8s.io/v1/namespaces/default/leases/l1"]
KEYS = ["metadata", "spec", "status", "target", "name", "uid", "finalizers", "containers",
        "versions", "group", "names", "scope", "parallelism", "suspend", "template", "labels",
        "annotations", "resourceVersion", "apiVersion", "kind", "$patch", "conditions",
        "regarding", "note", "preconditions", "generateName", "schedulingGates", "nodeName"]
VALUES = [None, 1, -1, "x", "", [], {}, True, {"a": None}, [{"op": "add", "path": "/x", "value": 1}],
          {"name": "n1"}, [{"name": "c", "image": "i"}]]
QUERIES = ["", "?watch=1&timeoutSeconds=0.2", "?labelSelector=a%3Db", "?labelSelector=a%20in%20(",
           "?fieldSelector=metadata.name%3Dp1", "?limit=1", "?gracePeriodSeconds=0",
           "?watch=true&resourceVersion=1&timeoutSeconds=0.1", "?continue=x"]
CTYPES = ["application/json", "application/merge-patch+json",
          "application/strategic-merge-patch+json", "application/json-patch+json"]
CRD = {"metadata": {"name": "ws.x.dev"},
       "spec": {"group": "x.dev", "scope": "Cluster", "names": {"plural": "ws", "kind": "W"},
                "versions": [{"name": "v1", "served": True, "storage": True,
                              "subresources": {"status": {}},
                              "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                  "spec": {"type": "object"}}}}}]}}


def rnd(rng, depth=0):
    if depth > 2 or rng.random() < 0.4:
        return rng.choice(VALUES)
    return {rng.choice(KEYS): rnd(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def body_for(rng, path):
    r = rng.random()
    name = path.rsplit("/", 1)[-1]
    if r < 0.2:
        return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    if r < 0.3:
        return CRD
    if r < 0.4:
        return {"metadata": {"name": name}, "spec": {"parallelism": 2, "template": {
            "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    return rnd(rng)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    d = tempfile.mkdtemp(prefix="carve-fakerand.")
    pf = os.path.join(d, "port")
    err = open(os.path.join(d, "stderr"), "w+")
    proc = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "fakeapi.py"), "--port-file",
                             pf, "--max-seconds", "120", "--controllers", "job",
                             "--pod-grace", "0.2"], stderr=err)
    for _ in range(150):
        if os.path.exists(pf):
            break
        time.sleep(0.1)
    port = int(open(pf).read())
    bad = []
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        for _ in range(n):
            m = rng.choice(["GET", "POST", "PUT", "PATCH", "DELETE"])
            path = rng.choice(PATHS) + rng.choice(QUERIES)
            data = json.dumps(body_for(rng, path.split("?")[0]))
            ct = rng.choice(CTYPES)
            try:
                conn.request(m, path, body=data, headers={"Content-Type": ct})
                r = conn.getresponse()
                out = r.read()
                if r.status >= 500:
                    bad.append((m, path, ct, data[:300], r.status, out[:300]))
                if r.getheader("Connection", "").lower() == "close" or r.will_close:
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            except (OSError, http.client.HTTPException) as e:
                bad.append((m, path, ct, data[:300], "no answer", str(e)))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.close()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/version")
        alive = conn.getresponse().status == 200
    finally:
        proc.terminate()
        proc.wait(5)
    for b in bad[:10]:
        print("FAIL: %s %s (%s) body %s -> %s %s" % b)
    if bad:
        err.seek(0)
        print(err.read()[-4000:])
    print("fake_random: %d requests, %d answered 5xx or not at all, server %s"
          % (n, len(bad), "alive" if alive else "DEAD"))
    subprocess.run(["rm", "-rf", d])
    return 0 if not bad and alive else 1


if __name__ == "__main__":
    sys.exit(main())
