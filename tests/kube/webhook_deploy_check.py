#!/usr/bin/python3
"""webhook_deploy_check.py - checks a rendering of deploy/overlays/webhook
or deploy/overlays/webhook-cert-manager (concatenated JSON documents on
stdin, as tests/kube/deploy.sh makes them) against docs/webhook.md,
"Deploying": both webhook configurations, each webhook with failurePolicy,
sideEffects None, a timeout, admissionReviewVersions v1, the Service path;
namespaced rules excluding kube-system and carve-system; the kinds the
webhook reviews; a read-only ClusterRole that can list and watch what the
context requires; the Deployment serving the
Secret's certificate on the Service's target port; with cert-manager, the
Certificate for the Service's DNS names and the CA injection annotation.

Usage: webhook_deploy_check.py script|cert-manager
Prints one line per problem and exits 1 when there is any.
Standard library only.
"""
import json
import sys

NS = "carve-system"
SVC = "carve-webhook"
problems = []


def bad(what):
    problems.append("webhook deploy: " + what)


def load_stream(text):
    dec = json.JSONDecoder()
    out, i = [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        doc, i = dec.raw_decode(text, i)
        out.extend(doc.get("items", []) if doc.get("kind") == "List" else [doc])


def find(objs, kind, name):
    for o in objs:
        if o.get("kind") == kind and o.get("metadata", {}).get("name") == name:
            return o
    bad("%s %s: missing" % (kind, name))
    return None


# (group, resource) each configuration must cover, and with which scope
WANT_VALIDATE = {("", "pods"), ("batch", "jobs"), ("scheduling.volcano.sh", "podgroups"),
                 ("scheduling.run.ai", "podgroups"), ("carve.dev", "localqueues"),
                 ("kueue.x-k8s.io", "localqueues"), ("carve.dev", "clusterqueues"),
                 ("kueue.x-k8s.io", "clusterqueues"), ("carve.dev", "resourceflavors"),
                 ("kueue.x-k8s.io", "resourceflavors"), ("carve.dev", "cohorts"),
                 ("kueue.x-k8s.io", "cohorts"), ("", "configmaps")}
WANT_MUTATE = {("", "pods"), ("batch", "jobs")}
# (group, resource) the ClusterRole must let the context's reflectors list
# and watch (src/kube/whctx.c, wh_ctx_resources: the required ones)
WANT_WATCH = {("", "namespaces"), ("", "nodes"), ("", "configmaps")}


def check_config(o, path, want, cert_manager):
    kind = o["kind"]
    covered = set()
    hooks = o.get("webhooks") or []
    if not hooks:
        bad("%s: no webhooks" % kind)
    for w in hooks:
        name = "%s %s" % (kind, w.get("name"))
        if w.get("failurePolicy") not in ("Fail", "Ignore"):
            bad("%s: failurePolicy not set" % name)
        if w.get("sideEffects") != "None":
            bad("%s: sideEffects %r, want None" % (name, w.get("sideEffects")))
        t = w.get("timeoutSeconds")
        if not isinstance(t, int) or not 1 <= t <= 10:
            bad("%s: timeoutSeconds %r, want 1..10" % (name, t))
        if w.get("admissionReviewVersions") != ["v1"]:
            bad("%s: admissionReviewVersions %r, want [v1]" % (name, w.get("admissionReviewVersions")))
        s = w.get("clientConfig", {}).get("service", {})
        if (s.get("name"), s.get("namespace"), s.get("path"), s.get("port")) != (SVC, NS, path, 443):
            bad("%s: clientConfig.service %r, want %s/%s:443%s" % (name, s, NS, SVC, path))
        if "caBundle" in w.get("clientConfig", {}):
            bad("%s: caBundle in the manifest (it is injected)" % name)
        namespaced = any(r.get("scope") == "Namespaced" for r in w.get("rules", []))
        if namespaced:
            excl = set()
            for e in w.get("namespaceSelector", {}).get("matchExpressions", []):
                if e.get("key") == "kubernetes.io/metadata.name" and e.get("operator") == "NotIn":
                    excl |= set(e.get("values", []))
            if not {"kube-system", NS} <= excl:
                bad("%s: namespaceSelector does not exclude kube-system and %s" % (name, NS))
        for r in w.get("rules", []):
            if r.get("scope") not in ("Namespaced", "Cluster"):
                bad("%s: a rule without scope" % name)
            if not r.get("operations") or "DELETE" in r["operations"] or "*" in r["operations"]:
                bad("%s: operations %r" % (name, r.get("operations")))
            for g in r.get("apiGroups", []):
                for res in r.get("resources", []):
                    covered.add((g, res))
    for g, r in sorted(want - covered):
        bad("%s: no rule for %s%s" % (kind, g + "/" if g else "", r))
    ann = o.get("metadata", {}).get("annotations", {}).get("cert-manager.io/inject-ca-from")
    if cert_manager and ann != "%s/%s" % (NS, SVC):
        bad("%s: annotation cert-manager.io/inject-ca-from %r, want %s/%s" % (kind, ann, NS, SVC))
    if not cert_manager and ann:
        bad("%s: cert-manager annotation in the script overlay" % kind)


def main():
    mode = sys.argv[1]
    objs = load_stream(sys.stdin.read())
    cm = mode == "cert-manager"
    v = find(objs, "ValidatingWebhookConfiguration", SVC)
    m = find(objs, "MutatingWebhookConfiguration", SVC)
    if v:
        check_config(v, "/validate", WANT_VALIDATE, cm)
    if m:
        check_config(m, "/mutate", WANT_MUTATE, cm)
        for w in m.get("webhooks", []):
            if w.get("reinvocationPolicy") not in ("Never", "IfNeeded"):
                bad("MutatingWebhookConfiguration %s: reinvocationPolicy not set" % w.get("name"))
    role = find(objs, "ClusterRole", SVC)
    if role:
        for r in role.get("rules", []):
            if set(r.get("verbs", [])) - {"get", "list", "watch"}:
                bad("ClusterRole %s: verbs %r beyond get/list/watch" % (SVC, r["verbs"]))
        can = set()
        for r in role.get("rules", []):
            if {"list", "watch"} <= set(r.get("verbs", [])):
                can |= {(g, res) for g in r.get("apiGroups", []) for res in r.get("resources", [])}
        for g, res in sorted(WANT_WATCH - can):
            bad("ClusterRole %s: no list/watch on %s%s" % (SVC, g + "/" if g else "", res))
    svc = find(objs, "Service", SVC)
    dep = find(objs, "Deployment", SVC)
    if svc and dep:
        tmpl = dep["spec"]["template"]
        labels = tmpl["metadata"].get("labels", {})
        sel = svc["spec"].get("selector", {})
        if not sel or any(labels.get(k) != val for k, val in sel.items()):
            bad("Service %s: selector %r does not select the Deployment's pods" % (SVC, sel))
        c = tmpl["spec"]["containers"][0]
        ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
        for p in svc["spec"]["ports"]:
            if p.get("port") == 443 and p.get("targetPort") not in ports:
                bad("Service %s: targetPort %r is no container port" % (SVC, p.get("targetPort")))
        args = c.get("args", [])
        mounts = {x["name"]: x["mountPath"] for x in c.get("volumeMounts", [])}
        vols = {x["name"]: x.get("secret", {}).get("secretName") for x in tmpl["spec"].get("volumes", [])}
        tls = [n for n, s in vols.items() if s == "carve-webhook-tls"]
        if not tls or tls[0] not in mounts:
            bad("Deployment %s: Secret carve-webhook-tls not mounted" % SVC)
        else:
            for f, flag in (("tls.crt", "--cert"), ("tls.key", "--key")):
                if "%s=%s/%s" % (flag, mounts[tls[0]], f) not in args:
                    bad("Deployment %s: %s is not the mounted %s" % (SVC, flag, f))
        for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
            hg = c.get(probe, {}).get("httpGet", {})
            if hg.get("path") != path or hg.get("scheme") != "HTTPS":
                bad("Deployment %s: %s is not HTTPS %s" % (SVC, probe, path))
        if dep["spec"].get("replicas", 1) < 2:
            bad("Deployment %s: fewer than 2 replicas with failurePolicy Fail" % SVC)
    find(objs, "PodDisruptionBudget", SVC)
    cert = [o for o in objs if o.get("kind") == "Certificate"]
    if cm:
        c = find(objs, "Certificate", SVC)
        if c:
            dns = set(c["spec"].get("dnsNames", []))
            if "%s.%s.svc" % (SVC, NS) not in dns:
                bad("Certificate %s: dnsNames %r lack %s.%s.svc" % (SVC, sorted(dns), SVC, NS))
            if c["spec"].get("secretName") != "carve-webhook-tls":
                bad("Certificate %s: secretName is not carve-webhook-tls" % SVC)
            iss = c["spec"].get("issuerRef", {}).get("name")
            find(objs, c["spec"].get("issuerRef", {}).get("kind", "Issuer"), iss)
    elif cert:
        bad("a Certificate in the script overlay")
    for o in objs:
        if o.get("kind") == "Deployment":
            img = o["spec"]["template"]["spec"]["containers"][0].get("image", "")
            if img == "carve":
                bad("Deployment %s: image not set (%r)" % (o["metadata"]["name"], img))
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
