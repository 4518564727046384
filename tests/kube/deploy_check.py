#!/usr/bin/python3
"""deploy_check.py - checks a rendering of carve's kustomize manifests
(deploy/ or deploy/overlays/kueue) read as concatenated JSON documents on
stdin (`kubectl kustomize DIR | kubectl annotate --local -f - -o json ...`),
and optionally validates example objects against the rendered CRDs.

Usage: deploy_check.py base|kueue|node-agent [EXAMPLE.json ...]
Prints one line per problem ("deploy: <object>: <what>") and exits 1 when
there is any, 0 when the rendering is what docs/kubernetes.md promises.
Standard library only (Debian's /usr/bin/python3).
"""
import json
import re
import sys

problems = []


def bad(obj, what):
    problems.append("deploy: %s: %s" % (obj, what))


def load_stream(text):
    dec = json.JSONDecoder()
    out, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        doc, i = dec.raw_decode(text, i)
        if doc.get("kind") == "List":
            out.extend(doc.get("items", []))
        else:
            out.append(doc)


def key(o):
    md = o.get("metadata", {})
    ns = md.get("namespace")
    return "%s %s" % (o.get("kind"), (ns + "/" if ns else "") + md.get("name", "?"))


NS = "carve-system"
CARVE_KINDS = {  # plural -> (kind, scope, has status)
    "resourceflavors": ("ResourceFlavor", "Cluster", False),
    "clusterqueues": ("ClusterQueue", "Cluster", True),
    "localqueues": ("LocalQueue", "Namespaced", True),
    "cohorts": ("Cohort", "Cluster", True),
    "workloadpriorityclasses": ("WorkloadPriorityClass", "Cluster", False),
}


def expected_rules(queue_group):
    """(group, resource) -> verbs: exactly what carve scheduler uses."""
    r = {
        ("", "pods"): {"get", "list", "watch", "delete"},
        ("", "pods/binding"): {"create"},
        ("", "pods/status"): {"patch", "update"},
        ("", "nodes"): {"get", "list", "watch", "patch"},  # patch: --mig-dynamic layouts
        ("", "events"): {"create", "patch"},
        ("events.k8s.io", "events"): {"create", "patch"},
        ("", "configmaps"): {"list", "watch"},
        ("scheduling.k8s.io", "priorityclasses"): {"list", "watch"},
    }
    for p in CARVE_KINDS:
        r[(queue_group, p)] = {"get", "list", "watch"}
    for p in ("clusterqueues", "localqueues", "cohorts"):
        r[(queue_group, p + "/status")] = {"update", "patch"}
    for g in ("scheduling.volcano.sh", "scheduling.run.ai", "scheduling.x-k8s.io"):
        r[(g, "podgroups")] = {"get", "list", "watch"}
        r[(g, "podgroups/status")] = {"update", "patch"}
    for g in ("scheduling.volcano.sh", "scheduling.run.ai"):
        r[(g, "queues")] = {"get", "list", "watch"}
    return r


def rules_of(o):
    got = {}
    for i, rule in enumerate(o.get("rules", [])):
        for field in ("apiGroups", "resources", "verbs", "resourceNames"):
            if "*" in rule.get(field, []):
                bad(key(o), "rule %d has a wildcard in %s" % (i, field))
        if rule.get("nonResourceURLs"):
            bad(key(o), "rule %d names nonResourceURLs" % i)
        for g in rule.get("apiGroups", []):
            for res in rule.get("resources", []):
                got.setdefault((g, res), set()).update(rule.get("verbs", []))
    return got


def compare_rules(o, want):
    got = rules_of(o)
    for k in sorted(set(got) | set(want)):
        g = got.get(k, set())
        w = want.get(k, set())
        if g != w:
            bad(key(o), "group '%s' resource %s: verbs %s, want %s"
                % (k[0], k[1], sorted(g), sorted(w)))


def check_deployment(o, mode):
    spec = o.get("spec", {})
    if spec.get("replicas") != 2:
        bad(key(o), "replicas %r, want 2" % spec.get("replicas"))
    pod = spec.get("template", {}).get("spec", {})
    labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
    sel = spec.get("selector", {}).get("matchLabels", {})
    if not sel or any(labels.get(k) != v for k, v in sel.items()):
        bad(key(o), "selector %r does not match the pod labels %r" % (sel, labels))
    if pod.get("serviceAccountName") != "carve-scheduler":
        bad(key(o), "serviceAccountName %r" % pod.get("serviceAccountName"))
    if pod.get("schedulerName") not in (None, "default-scheduler"):
        bad(key(o), "the scheduler's own pods must be placed by kube-scheduler")
    psc = pod.get("securityContext", {})
    if psc.get("runAsNonRoot") is not True:
        bad(key(o), "pod securityContext.runAsNonRoot is not true")
    cs = pod.get("containers", [])
    if len(cs) != 1:
        bad(key(o), "%d containers, want 1" % len(cs))
        return
    c = cs[0]
    argv = c.get("command", []) + c.get("args", [])
    if argv[:2] != ["carve", "scheduler"]:
        bad(key(o), "command %r, want carve scheduler" % argv[:2])
    want_q = "--queues=" + ("kueue" if mode == "kueue" else "carve")
    for a in (want_q, "--leader-elect=true"):
        if a not in argv:
            bad(key(o), "argument %s missing" % a)
    if sum(1 for a in argv if a.startswith("--queues")) != 1:
        bad(key(o), "--queues given %d times" % sum(1 for a in argv if a.startswith("--queues")))
    ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
    maddr = [a for a in argv if a.startswith("--metrics-addr=")]
    if "metrics" not in ports:
        bad(key(o), "no container port named metrics")
    elif len(maddr) != 1 or not maddr[0].endswith(":%d" % ports["metrics"]):
        bad(key(o), "--metrics-addr %r does not listen on the metrics port %d"
            % (maddr, ports["metrics"]))
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        h = c.get(probe, {}).get("httpGet", {})
        if h.get("path") != path or h.get("port") not in ("metrics", ports.get("metrics")):
            bad(key(o), "%s %r, want GET %s on the metrics port" % (probe, h, path))
    res = c.get("resources", {})
    for part in ("requests", "limits"):
        for r in ("cpu", "memory"):
            if r not in res.get(part, {}):
                bad(key(o), "resources.%s.%s missing" % (part, r))
    sc = c.get("securityContext", {})
    if sc.get("readOnlyRootFilesystem") is not True:
        bad(key(o), "readOnlyRootFilesystem is not true")
    if sc.get("allowPrivilegeEscalation") is not False:
        bad(key(o), "allowPrivilegeEscalation is not false")
    if "ALL" not in sc.get("capabilities", {}).get("drop", []):
        bad(key(o), "capabilities are not all dropped")
    img = c.get("image", "")
    if "placeholder" not in img:
        bad(key(o), "image %r: the base ships a documented placeholder" % img)


def walk_schema(crd, s, path):
    """A structural schema: every node typed (or int-or-string/preserve)."""
    if not isinstance(s, dict):
        bad(crd, "%s: not a schema" % path)
        return
    if "type" not in s and not s.get("x-kubernetes-int-or-string") \
            and not s.get("x-kubernetes-preserve-unknown-fields"):
        bad(crd, "%s: no type" % path)
    t = s.get("type")
    if t not in (None, "object", "array", "string", "integer", "number", "boolean"):
        bad(crd, "%s: unknown type %r" % (path, t))
    for k, sub in s.get("properties", {}).items():
        walk_schema(crd, sub, path + "." + k)
    for r in s.get("required", []):
        if r not in s.get("properties", {}):
            bad(crd, "%s: required %s is not a property" % (path, r))
    if "items" in s:
        walk_schema(crd, s["items"], path + "[]")
    elif t == "array":
        bad(crd, "%s: array without items" % path)
    ap = s.get("additionalProperties")
    if isinstance(ap, dict):
        walk_schema(crd, ap, path + "{}")
    if "enum" in s and "default" in s and s["default"] not in s["enum"]:
        bad(crd, "%s: default %r not in enum" % (path, s["default"]))


def check_crd(o):
    name = key(o)
    spec = o.get("spec", {})
    plural = spec.get("names", {}).get("plural")
    if spec.get("group") != "carve.dev" or plural not in CARVE_KINDS:
        bad(name, "not one of carve's queue kinds")
        return None
    kind, scope, status = CARVE_KINDS[plural]
    if spec["names"].get("kind") != kind or spec.get("scope") != scope:
        bad(name, "kind %r scope %r, want %s %s" % (spec["names"].get("kind"),
                                                  spec.get("scope"), kind, scope))
    vs = spec.get("versions", [])
    if [v.get("name") for v in vs] != ["v1alpha1"]:
        bad(name, "versions %r, want v1alpha1" % [v.get("name") for v in vs])
        return None
    v = vs[0]
    if not (v.get("served") and v.get("storage")):
        bad(name, "v1alpha1 not served and stored")
    schema = v.get("schema", {}).get("openAPIV3Schema")
    if not schema:
        bad(name, "no openAPIV3Schema")
        return None
    walk_schema(name, schema, kind)
    props = schema.get("properties", {})
    top = "value" if kind == "WorkloadPriorityClass" else "spec"
    if top not in props:
        bad(name, "schema has no %s" % top)
    if status != ("status" in v.get("subresources", {})):
        bad(name, "status subresource %s, want %s" % (not status, status))
    if status != ("status" in props):
        bad(name, "status schema present: %s, want %s" % ("status" in props, status))
    if kind == "ClusterQueue":
        cols = {c["name"]: c for c in v.get("additionalPrinterColumns", [])}
        for col, path in (("Cohort", ".spec.cohortName"),
                          ("Pending Workloads", ".status.pendingWorkloads"),
                          ("Admitted Workloads", ".status.admittedWorkloads")):
            c = cols.get(col)
            if not c or c.get("jsonPath") != path or c.get("priority", 0) != 0:
                bad(name, "printer column %s (%s) not shown by default" % (col, path))
        sp = props["spec"]["properties"]
        facts = [  # Kueue v1beta2 clusterqueue_types.go
            (sp["queueingStrategy"].get("enum"), ["StrictFIFO", "BestEffortFIFO"]),
            (sp["queueingStrategy"].get("default"), "BestEffortFIFO"),
            (sp["resourceGroups"].get("maxItems"), 16),
            (sp["preemption"]["properties"]["withinClusterQueue"].get("enum"),
             ["Never", "LowerPriority", "LowerOrNewerEqualPriority"]),
            (sp["preemption"]["properties"]["reclaimWithinCohort"].get("enum"),
             ["Never", "LowerPriority", "Any"]),
            (sp["resourceGroups"]["items"]["properties"]["flavors"]["items"]
             ["properties"]["resources"]["items"].get("required"), ["name", "nominalQuota"]),
            (sp["stopPolicy"].get("enum"), ["None", "Hold", "HoldAndDrain"]),
        ]
        for i, (got, want) in enumerate(facts):
            if got != want:
                bad(name, "Kueue fact %d: %r, want %r" % (i, got, want))
    return kind, schema


QTY = re.compile(r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                 r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")


def validate(where, s, v):
    """The subset of OpenAPI v3 validation the API server applies that the
    examples can break: types, enums, required, unknown fields (pruned by
    the server, so an error here), limits, patterns."""
    if s.get("x-kubernetes-int-or-string"):
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            bad(where, "want an integer or a string, got %r" % (v,))
        elif isinstance(v, str) and "pattern" in s and not re.search(s["pattern"], v):
            bad(where, "%r is not a quantity" % v)
        return
    t = s.get("type")
    ok = {"object": dict, "array": list, "string": str, "boolean": bool}.get(t)
    if t == "integer":
        if isinstance(v, bool) or not isinstance(v, int):
            bad(where, "want an integer, got %r" % (v,))
            return
    elif ok and not isinstance(v, ok):
        bad(where, "want %s, got %r" % (t, v))
        return
    if "enum" in s and v not in s["enum"]:
        bad(where, "%r not one of %s" % (v, s["enum"]))
    if t == "string":
        if "maxLength" in s and len(v) > s["maxLength"]:
            bad(where, "longer than %d" % s["maxLength"])
        if "pattern" in s and not re.search(s["pattern"], v):
            bad(where, "%r does not match %s" % (v, s["pattern"]))
    if t == "integer" and "minimum" in s and v < s["minimum"]:
        bad(where, "%d below %d" % (v, s["minimum"]))
    if t == "array":
        if "maxItems" in s and len(v) > s["maxItems"]:
            bad(where, "more than %d items" % s["maxItems"])
        if "minItems" in s and len(v) < s["minItems"]:
            bad(where, "fewer than %d items" % s["minItems"])
        for i, x in enumerate(v):
            validate("%s[%d]" % (where, i), s.get("items", {}), x)
    if t == "object":
        for r in s.get("required", []):
            if r not in v:
                bad(where, "required field %s missing" % r)
        props = s.get("properties")
        ap = s.get("additionalProperties")
        if "maxProperties" in s and len(v) > s["maxProperties"]:
            bad(where, "more than %d entries" % s["maxProperties"])
        for k, x in v.items():
            if props is not None and k in props:
                if props[k] == {"type": "object"} and k == "metadata":
                    continue
                validate(where + "." + k, props[k], x)
            elif isinstance(ap, dict):
                validate("%s[%s]" % (where, k), ap, x)
            elif props is not None and not s.get("x-kubernetes-preserve-unknown-fields"):
                bad(where, "unknown field %s" % k)


# ---- deploy/overlays/node-agent: the node agent's objects (docs/node.md) ----
NODE_AGENT_RULES = {("", "nodes"): {"get", "patch"}, ("", "pods"): {"list", "watch"},
                    ("events.k8s.io", "events"): {"create"}}


def check_node_agent(objs):
    """The node agent's DaemonSet, RBAC and Service in the overlay's rendering
    (the base's objects are checked by mode base)."""
    by = {key(o): o for o in objs}
    names = ["ServiceAccount %s/carve-node-agent" % NS, "ClusterRole carve-node-agent",
             "ClusterRoleBinding carve-node-agent", "DaemonSet %s/carve-node-agent" % NS,
             "Service %s/carve-node-agent-metrics" % NS, "Deployment %s/carve-scheduler" % NS]
    for n in names:
        if n not in by:
            bad(n, "missing")
    if "ClusterRole carve-node-agent" in by:
        compare_rules(by["ClusterRole carve-node-agent"], NODE_AGENT_RULES)
    crb = by.get("ClusterRoleBinding carve-node-agent", {})
    if crb and crb.get("subjects") != [{"kind": "ServiceAccount", "name": "carve-node-agent",
                                        "namespace": NS}]:
        bad(key(crb), "subjects %r" % crb.get("subjects"))
    ds = by.get("DaemonSet %s/carve-node-agent" % NS)
    if not ds:
        return
    spec = ds.get("spec", {}).get("template", {}).get("spec", {})
    if spec.get("runtimeClassName") != "nvidia":
        bad(key(ds), "runtimeClassName %r, want nvidia" % spec.get("runtimeClassName"))
    if spec.get("hostPID") is not True:
        bad(key(ds), "hostPID is not true: NVML's process ids could not be read")
    if spec.get("serviceAccountName") != "carve-node-agent":
        bad(key(ds), "serviceAccountName %r" % spec.get("serviceAccountName"))
    if not any(t.get("key") == "nvidia.com/gpu" for t in spec.get("tolerations", [])):
        bad(key(ds), "no toleration for nvidia.com/gpu")
    if not spec.get("nodeSelector"):
        bad(key(ds), "no nodeSelector: it would run on nodes without GPUs")
    paths = {v.get("name"): v.get("hostPath", {}).get("path") for v in spec.get("volumes", [])}
    for want in ("/var/lib/kubelet/device-plugins",
                 "/etc/kubernetes/node-feature-discovery/features.d"):
        if want not in paths.values():
            bad(key(ds), "no hostPath volume %s" % want)
    ctrs = spec.get("containers", [])
    if len(ctrs) != 1:
        bad(key(ds), "%d containers, want 1" % len(ctrs))
        return
    c = ctrs[0]
    args = c.get("args", [])
    if args[:1] != ["node"]:
        bad(key(ds), "args %r do not start with node" % args)
    env = {e.get("name"): e for e in c.get("env", [])}
    if env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get(
            "fieldPath") != "spec.nodeName":
        bad(key(ds), "NODE_NAME is not spec.nodeName")
    if [p.get("containerPort") for p in c.get("ports", [])] != [9400]:
        bad(key(ds), "ports %r, want 9400 (dcgm-exporter's)" % c.get("ports"))
    mounts = {m.get("name"): m.get("mountPath") for m in c.get("volumeMounts", [])}
    for name, path in paths.items():
        if mounts.get(name) != path:
            bad(key(ds), "volume %s mounted at %r, want %s" % (name, mounts.get(name), path))
    if c.get("livenessProbe", {}).get("httpGet", {}).get("path") != "/healthz":
        bad(key(ds), "livenessProbe is not /healthz")
    svc = by.get("Service %s/carve-node-agent-metrics" % NS, {})
    labels = ds["spec"]["template"].get("metadata", {}).get("labels", {})
    sel = svc.get("spec", {}).get("selector", {})
    if svc and (not sel or any(labels.get(a) != b for a, b in sel.items())):
        bad(key(svc), "selector %r does not select the agent's pods" % sel)
    for p in problems:
        print(p)
    return 1 if problems else 0


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "base"
    objs = load_stream(sys.stdin.read())
    if mode == "node-agent":
        return check_node_agent(objs)
    by = {}
    for o in objs:
        by.setdefault(key(o), o)
    want_queue_group = "kueue.x-k8s.io" if mode == "kueue" else "carve.dev"
    need = ["Namespace " + NS, "ServiceAccount %s/carve-scheduler" % NS,
            "ClusterRole carve-scheduler", "ClusterRoleBinding carve-scheduler",
            "Role %s/carve-scheduler-leader-election" % NS,
            "RoleBinding %s/carve-scheduler-leader-election" % NS,
            "Deployment %s/carve-scheduler" % NS,
            "Service %s/carve-scheduler-metrics" % NS]
    crds = ["CustomResourceDefinition %s.carve.dev" % p for p in CARVE_KINDS]
    if mode == "base":
        need += crds
    for n in need:
        if n not in by:
            bad(n, "missing")
    for n in by:
        if n not in need:
            bad(n, "not expected in the %s rendering" % mode)
    for o in objs:
        md = o.get("metadata", {})
        if o.get("kind") in ("ServiceAccount", "Role", "RoleBinding", "Deployment",
                             "Service") and md.get("namespace") != NS:
            bad(key(o), "namespace %r, want %s" % (md.get("namespace"), NS))
    schemas = {}
    for o in objs:
        k = o.get("kind")
        if k == "ClusterRole":
            compare_rules(o, expected_rules(want_queue_group))
        elif k == "Role":
            compare_rules(o, {("coordination.k8s.io", "leases"): {"get", "create", "update"}})
        elif k in ("ClusterRoleBinding", "RoleBinding"):
            subj = o.get("subjects", [])
            if subj != [{"kind": "ServiceAccount", "name": "carve-scheduler", "namespace": NS}]:
                bad(key(o), "subjects %r" % subj)
            if o.get("roleRef", {}).get("name") not in (o["metadata"]["name"],):
                bad(key(o), "roleRef %r" % o.get("roleRef"))
        elif k == "Deployment":
            check_deployment(o, mode)
        elif k == "Service":
            d = by.get("Deployment %s/carve-scheduler" % NS, {})
            pl = d.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
            sel = o.get("spec", {}).get("selector", {})
            if not sel or any(pl.get(a) != b for a, b in sel.items()):
                bad(key(o), "selector %r does not select the scheduler's pods" % sel)
            if [p.get("targetPort") for p in o["spec"].get("ports", [])] != ["metrics"]:
                bad(key(o), "does not target the metrics port")
        elif k == "CustomResourceDefinition":
            r = check_crd(o)
            if r:
                schemas[r[0]] = r[1]
    for path in sys.argv[2:]:
        with open(path) as f:
            for o in load_stream(f.read()):
                if not o.get("apiVersion", "").startswith("carve.dev/"):
                    continue
                kind = o.get("kind")
                if o.get("apiVersion") != "carve.dev/v1alpha1" or kind not in schemas:
                    bad("%s %s" % (path, key(o)), "no CRD serves %s" % o.get("apiVersion"))
                    continue
                validate("%s %s" % (path, key(o)), schemas[kind], o)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
