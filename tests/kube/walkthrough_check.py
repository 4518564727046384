#!/usr/bin/python3
"""walkthrough_check.py - the end state of examples/kubernetes/README.md's
walk-through, checked from `kubectl get pods -A -o json`, the ClusterQueues
and the events.k8s.io events (three JSON files).

Usage: walkthrough_check.py PODS.json CQS.json EVENTS.json
Prints one line per problem and exits 1 when there is any.  Standard
library only.
"""
import json
import re
import sys

problems = []


def bad(what):
    problems.append("walkthrough: " + what)


ENTRY = re.compile(r"^gpu=(\d+)(,uuid=[^,;]+)?(,mig=([0-9a-z.+]+)@(\d+)|,replica=(\d+)|,milli=(\d+))?(,mem=\d+)?$")


def devices(pod):
    """[(gpu, kind, detail)] from carve.dev/devices, or None when absent."""
    v = pod["metadata"].get("annotations", {}).get("carve.dev/devices")
    if v is None:
        return None
    out = []
    for i, e in enumerate(v.split(";")):
        m = ENTRY.match(e)
        if not m:
            bad("%s: carve.dev/devices entry %d %r does not parse" % (name(pod), i + 1, e))
            continue
        gpu = int(m.group(1))
        if m.group(4):
            out.append((gpu, "mig", (m.group(4), int(m.group(5)))))
        elif m.group(6):
            out.append((gpu, "replica", int(m.group(6))))
        elif m.group(7):
            out.append((gpu, "milli", int(m.group(7))))
        else:
            out.append((gpu, "whole", None))
    return out


def name(pod):
    return "%s/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"])


def cond(pod, t):
    for c in pod.get("status", {}).get("conditions", []) or []:
        if c.get("type") == t:
            return c
    return None


def main():
    pods = json.load(open(sys.argv[1]))["items"]
    cqs = {c["metadata"]["name"]: c for c in json.load(open(sys.argv[2]))["items"]}
    events = json.load(open(sys.argv[3]))["items"]
    bound = [p for p in pods if p.get("spec", {}).get("nodeName")]

    # No device is given out twice: a whole GPU to one pod only, a MIG
    # start slot once per GPU, a replica number once per GPU.
    seen = {}
    for p in bound:
        node = p["spec"]["nodeName"]
        ds = devices(p)
        if ds is None:
            bad("%s is bound to %s without carve.dev/devices" % (name(p), node))
            continue
        for gpu, kind, detail in ds:
            for k in ((node, gpu, "whole"), (node, gpu, kind, detail)):
                if k in seen and (kind == "whole" or k[2] != "whole"):
                    bad("%s and %s share %r" % (seen[k], name(p), k))
            if kind != "whole" and (node, gpu, "whole") in seen:
                bad("%s uses GPU %d of %s which %s holds whole"
                    % (name(p), gpu, node, seen[(node, gpu, "whole")]))
            seen[(node, gpu, kind, detail)] = name(p)
            if kind == "whole":
                seen[(node, gpu, "whole")] = name(p)
            else:
                seen.setdefault((node, gpu, "shared"), name(p))
        for gpu, kind, detail in ds:
            if kind == "whole" and (node, gpu, "shared") in seen:
                bad("%s holds GPU %d of %s whole, which %s shares"
                    % (name(p), gpu, node, seen[(node, gpu, "shared")]))

    def group(pred):
        return [p for p in pods if pred(p)]

    def job(p, j):
        return p["metadata"].get("labels", {}).get("batch.kubernetes.io/job-name") == j

    # Step 2: the gang whole, 4 pods per training node, 4 distinct GPUs each.
    gang = group(lambda p: job(p, "llama-pretrain"))
    per = {}
    for p in gang:
        n = p["spec"].get("nodeName")
        if not n:
            bad("%s (gang llama-pretrain) is not bound" % name(p))
            continue
        ds = devices(p) or []
        per.setdefault(n, set()).update(g for g, k, _ in ds if k == "whole")
        if not n.startswith("train-") or len(ds) != 1 or ds[0][1] != "whole":
            bad("%s on %s with %r: want one whole H100 on a train- node" % (name(p), n, ds))
    if len(gang) != 16 or sorted(per) != ["train-%d" % i for i in range(4)] or \
            any(v != {0, 1, 2, 3} for v in per.values()):
        bad("llama-pretrain: %d pods, GPUs per node %r; want 16 pods, GPUs 0-3 on each of "
            "train-0..3" % (len(gang), {k: sorted(v) for k, v in per.items()}))

    # Step 3: MIG instances at legal start slots, notebooks on replicas.
    for prefix, nodes, profile, starts in (("llama-serve-", "prod-", "3g.40gb", (0, 4)),
                                           ("embed-", "prod-small-", "1g.10gb", (4, 5, 6)),
                                           ("mistral-serve-", "prod-", "3g.40gb", (0, 4))):
        ps = group(lambda p: p["metadata"]["name"].startswith(prefix))
        if len(ps) != (2 if prefix == "embed-" else 4):
            bad("%d %s pods" % (len(ps), prefix))
        for p in ps:
            n = p["spec"].get("nodeName") or ""
            ds = devices(p) or []
            if not n.startswith(nodes) or len(ds) != 1 or ds[0][1] != "mig" or \
                    ds[0][2][0] != profile or ds[0][2][1] not in starts:
                bad("%s on %r with %r: want one %s instance starting at %s on a %s node"
                    % (name(p), n, ds, profile, starts, nodes))
    nb = group(lambda p: p["metadata"]["name"].startswith("notebook-"))
    if len(nb) != 6:
        bad("%d notebooks, want 6" % len(nb))
    for p in nb:
        n = p["spec"].get("nodeName") or ""
        ds = devices(p) or []
        if not n.startswith("dev-") or len(ds) != 1 or ds[0][1] != "replica" or \
                not 0 <= ds[0][2] < 8:
            bad("%s on %r with %r: want one replica (0-7) of a dev- node's L40S" % (name(p), n, ds))

    # Step 5: the job over quota waits, saying why.
    oq = group(lambda p: job(p, "pretrain-13b"))
    if len(oq) != 8:
        bad("%d pretrain-13b pods, want 8" % len(oq))
    for p in oq:
        c = cond(p, "PodScheduled") or {}
        if p["spec"].get("nodeName") or c.get("status") != "False" or \
                c.get("reason") != "Unschedulable" or not c.get("message"):
            bad("%s: bound to %r, PodScheduled %r: want pending, False, Unschedulable, a message"
                % (name(p), p["spec"].get("nodeName"), c))
    fs = [e for e in events if e.get("reason") == "FailedScheduling" and
          e.get("regarding", {}).get("name", "").startswith("pretrain-13b-")]
    if not fs:
        bad("no FailedScheduling event on a pretrain-13b pod")

    # Step 6: eval-sweep preempted whole (no pod of it holds a device now),
    # with Preempted events; mistral bound (checked above).
    for p in group(lambda p: job(p, "eval-sweep")):
        if p["spec"].get("nodeName"):
            bad("%s still bound to %s after production reclaimed" % (name(p), p["spec"]["nodeName"]))
    pre = [e for e in events if e.get("reason") == "Preempted" and
           e.get("regarding", {}).get("name", "").startswith("eval-sweep-")]
    if len(pre) < 8:
        bad("%d Preempted events on eval-sweep pods, want 8" % len(pre))

    # The queues' status as `kubectl get clusterqueues` shows it.
    st = {n: c.get("status", {}) for n, c in cqs.items()}
    want = {"research": (1, 1), "production": (0, 7), "dev": (0, 6)}
    for n, (pending, admitted) in want.items():
        got = (st.get(n, {}).get("pendingWorkloads"), st.get(n, {}).get("admittedWorkloads"))
        if got != (pending, admitted):
            bad("ClusterQueue %s pending/admitted %r, want %r" % (n, got, (pending, admitted)))

    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
