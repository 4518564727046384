#!/usr/bin/python3
"""fakeapi.py: a fake Kubernetes API server for carve's tests (test tool only).

Its one job: hold carve's Kubernetes client, scheduler and deploy manifests to
kube-apiserver's behaviour where they touch it, on loopback, with no cluster.
Python 3 standard library only (Debian's /usr/bin/python3).

  fakeapi.py --port-file F [--port P] [--tls-dir D] [--token T] [--history N]
             [--bookmark-seconds S] [--max-seconds S] [--controllers job]
             [--run-bound] [--pod-grace S] [--no-prune] [--verbose]

Invariants:
- one global integer resourceVersion; every write is one event with the next
  value; stored objects are never mutated in place (a write stores a new
  copy), so lists, watches and continue tokens may hold references freely;
- every error is a metav1.Status with reason and code, as kube-apiserver's;
- the server listens on 127.0.0.1 only and exits on SIGTERM, when its parent
  dies, or after --max-seconds.

What it models and what it does not: tests/kube/README.md.  Semantics follow
the Kubernetes API conventions and api-concepts documents (kubernetes.io,
"Kubernetes API Concepts": resourceVersion, watch, bookmarks, 410 Expired,
list chunking) and kube-apiserver's pod binding registry
(pkg/registry/core/pod/storage/storage.go: UID precondition, 409 when bound,
gated or deleting; nodeName, annotations, PodScheduled=True).
"""

import argparse
import base64
import json
import os
import random
import re
import signal
import socket
import ssl
import string
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch",
             "update", "watch"]


def now_rfc3339():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def dcopy(o):
    """Deep copy of a JSON value (faster than copy.deepcopy)."""
    if isinstance(o, dict):
        return {k: dcopy(v) for k, v in o.items()}
    if isinstance(o, list):
        return [dcopy(v) for v in o]
    return o


# ---------------------------------------------------------------- errors

class ApiError(Exception):
    """An answer other than success: code, reason and message as a Status."""

    def __init__(self, code, reason, message, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self):
        st = {"kind": "Status", "apiVersion": "v1", "metadata": {},
              "status": "Failure", "message": self.message,
              "reason": self.reason, "code": self.code}
        if self.details:
            st["details"] = self.details
        return st


def not_found(res, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (res.gr_name, name),
                    {"name": name, "group": res.group, "kind": res.plural})


def conflict(res, name, why):
    return ApiError(409, "Conflict",
                    'Operation cannot be fulfilled on %s "%s": %s'
                    % (res.gr_name, name, why),
                    {"name": name, "group": res.group, "kind": res.plural})


def invalid(res, name, field, why, value=None):
    msg = "%s: Invalid value: %s: %s" % (field, json.dumps(value), why) \
        if value is not None else "%s: %s" % (field, why)
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (res.kind, name, msg),
                    {"name": name, "group": res.group, "kind": res.kind,
                     "causes": [{"reason": "FieldValueInvalid", "message": msg,
                                 "field": field}]})


def bad_request(msg):
    return ApiError(400, "BadRequest", msg)


# ---------------------------------------------------------------- resources

class Res:
    """One served group/version/resource."""

    def __init__(self, group, version, plural, kind, namespaced, short=(),
                 singular=None, status=False, builtin=True, verbs=None,
                 fields=()):
        self.group, self.version, self.plural, self.kind = group, version, plural, kind
        self.namespaced = namespaced
        self.short = list(short)
        self.singular = singular or kind.lower()
        self.status = status  # has a /status subresource
        self.builtin = builtin
        self.verbs = verbs or ALL_VERBS
        self.fields = set(fields) | {"metadata.name", "metadata.namespace"}
        self.api_version = version if group == "" else group + "/" + version
        self.gr = group + "/" + plural  # storage key, shared by versions
        self.gr_name = plural if group == "" else plural + "." + group


POD_FIELDS = ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
              "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
              "status.podIP", "status.nominatedNodeName")
EVENT_FIELDS = ("involvedObject.kind", "involvedObject.namespace",
                "involvedObject.name", "involvedObject.uid",
                "involvedObject.apiVersion", "involvedObject.resourceVersion",
                "involvedObject.fieldPath", "reason", "reportingComponent",
                "source", "type")


def builtin_resources():
    r = [
        Res("", "v1", "namespaces", "Namespace", False, ["ns"], status=True,
            fields=["status.phase"],
            verbs=["create", "delete", "get", "list", "patch", "update", "watch"]),
        Res("", "v1", "nodes", "Node", False, ["no"], status=True,
            fields=["spec.unschedulable"]),
        Res("", "v1", "pods", "Pod", True, ["po"], status=True, fields=POD_FIELDS),
        Res("", "v1", "events", "Event", True, ["ev"], fields=EVENT_FIELDS),
        Res("", "v1", "configmaps", "ConfigMap", True, ["cm"]),
        Res("", "v1", "secrets", "Secret", True, [], fields=["type"]),
        Res("", "v1", "serviceaccounts", "ServiceAccount", True, ["sa"]),
        Res("", "v1", "services", "Service", True, ["svc"], status=True),
        Res("events.k8s.io", "v1", "events", "Event", True, ["ev"],
            fields=["reason", "type", "regarding.kind", "regarding.name",
                    "regarding.namespace", "regarding.uid",
                    "reportingController"]),
        Res("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ["pc"]),
        Res("coordination.k8s.io", "v1", "leases", "Lease", True),
        Res("apiextensions.k8s.io", "v1", "customresourcedefinitions",
            "CustomResourceDefinition", False, ["crd", "crds"], status=True),
        Res("batch", "v1", "jobs", "Job", True, [], status=True,
            fields=["status.successful"]),
        Res("apps", "v1", "deployments", "Deployment", True, ["deploy"], status=True),
        Res("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
        Res("rbac.authorization.k8s.io", "v1", "clusterrolebindings",
            "ClusterRoleBinding", False),
        Res("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
        Res("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
        Res("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration", False),
        Res("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration", False),
    ]
    for x in r:
        if x.group == "events.k8s.io":
            x.gr = "/events"  # one store, two representations (as kube-apiserver)
    return r


# events.k8s.io/v1 field <-> core v1 Event field (kubernetes
# pkg/apis/events/v1/conversion.go)
EV_FIELDS = (("regarding", "involvedObject"), ("related", "related"), ("note", "message"),
             ("reportingController", "reportingComponent"),
             ("reportingInstance", "reportingInstance"), ("deprecatedSource", "source"),
             ("deprecatedFirstTimestamp", "firstTimestamp"),
             ("deprecatedLastTimestamp", "lastTimestamp"), ("deprecatedCount", "count"),
             ("eventTime", "eventTime"), ("action", "action"), ("reason", "reason"),
             ("type", "type"), ("series", "series"))


def event_to_v1(core):
    """A stored (core v1) Event as events.k8s.io/v1."""
    out = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
           "metadata": core.get("metadata") or {}}
    for new, old in EV_FIELDS:
        if old in core:
            out[new] = core[old]
    return out


def event_to_core(ev):
    """An events.k8s.io/v1 Event as stored (core v1); unknown fields kept."""
    names = {new for new, _ in EV_FIELDS}
    out = {k: v for k, v in ev.items() if k not in names}
    out["apiVersion"], out["kind"] = "v1", "Event"
    for new, old in EV_FIELDS:
        if new in ev:
            out[old] = ev[new]
    return out


# ---------------------------------------------------------------- selectors

_LBL_SET = re.compile(r"^\s*(!?)([A-Za-z0-9_./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_LBL_OP = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|!=|=)\s*([A-Za-z0-9_.-]*)\s*$")
_LBL_EX = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*$")


def split_terms(s):
    """Split a selector on commas outside parentheses."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [t for t in out if t.strip()]


def parse_label_selector(s):
    """A labelSelector query string -> list of (key, op, values); 400 if bad."""
    terms = []
    for t in split_terms(s or ""):
        m = _LBL_SET.match(t)
        if m and not m.group(1):
            vals = [v.strip() for v in m.group(4).split(",") if v.strip()]
            terms.append((m.group(2), m.group(3), vals))
            continue
        m = _LBL_OP.match(t)
        if m:
            terms.append((m.group(1), "!=" if m.group(2) == "!=" else "=", [m.group(3)]))
            continue
        m = _LBL_EX.match(t)
        if m:
            terms.append((m.group(2), "!" if m.group(1) else "exists", []))
            continue
        raise bad_request("unable to parse requirement: invalid label selector: %r" % t)
    return terms


def labels_match(terms, labels):
    for key, op, vals in terms:
        have = key in labels
        v = labels.get(key)
        if op == "=" and v != vals[0]:
            return False
        if op == "!=" and have and v == vals[0]:
            return False
        if op == "in" and (not have or v not in vals):
            return False
        if op == "notin" and have and v in vals:
            return False
        if op == "exists" and not have:
            return False
        if op == "!" and have:
            return False
    return True


def parse_field_selector(s, res):
    terms = []
    for t in split_terms(s or ""):
        m = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|!=|=)\s*(.*?)\s*$", t)
        if not m:
            raise bad_request("invalid field selector: %r" % t)
        if m.group(1) not in res.fields:
            raise bad_request('field label not supported: %s' % m.group(1))
        terms.append((m.group(1), m.group(2) == "!=", m.group(3)))
    return terms


def field_value(obj, path):
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def fields_match(terms, obj):
    for path, neg, val in terms:
        if (field_value(obj, path) == val) == neg:
            return False
    return True


# ---------------------------------------------------------------- patches

SMP_KEYS = {"containers": "name", "initContainers": "name",
            "ephemeralContainers": "name", "env": "name", "ports": "containerPort",
            "volumes": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
            "conditions": "type", "imagePullSecrets": "name", "ownerReferences": "uid",
            "hostAliases": "ip", "taints": "key", "addresses": "type",
            "resourceClaims": "name", "schedulingGates": "name",
            "topologySpreadConstraints": "topologyKey"}
SMP_SETS = {"finalizers"}


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return dcopy(patch)
    res = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            res.pop(k, None)
        else:
            res[k] = merge_patch(res.get(k), v)
    return res


def _strip_directives(d):
    if not isinstance(d, dict):
        return d
    return {k: _strip_directives(v) for k, v in d.items()
            if not k.startswith("$")}


def strategic_patch(target, patch):
    """Strategic merge patch for the lists carve and kubectl touch: lists with a
    patchMergeKey (Kubernetes' struct tags, e.g. conditions by type,
    containers by name) merge by that key; `$patch: replace|delete`,
    `$deleteFromPrimitiveList/`, `$setElementOrder/` and `$retainKeys`
    directives are honoured or dropped as kube-apiserver's; other values
    behave as in a merge patch.  None means "delete this map"."""
    if not isinstance(patch, dict):
        return dcopy(patch)
    directive = patch.get("$patch")
    if directive == "replace":
        return _strip_directives(patch)
    if directive == "delete":
        return None
    res = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$setElementOrder/") or k in ("$retainKeys", "$patch"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            name = k.split("/", 1)[1]
            res[name] = [x for x in res.get(name) or [] if x not in (v or [])]
            continue
        if v is None:
            res.pop(k, None)
        elif isinstance(v, list) and k in SMP_KEYS:
            res[k] = _merge_list(res.get(k) or [], v, SMP_KEYS[k])
        elif isinstance(v, list) and k in SMP_SETS:
            cur = list(res.get(k) or [])
            res[k] = cur + [x for x in v if x not in cur]
        elif isinstance(v, dict):
            r = strategic_patch(res.get(k), v)
            if r is None:
                res.pop(k, None)
            else:
                res[k] = r
        else:
            res[k] = dcopy(v)
    return res


def _merge_list(cur, patch, key):
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [_strip_directives(p) for p in patch
                if not (isinstance(p, dict) and p.get("$patch") == "replace")]
    out = list(cur)
    for p in patch:
        if not isinstance(p, dict) or key not in p:
            out.append(dcopy(p))
            continue
        idx = next((i for i, x in enumerate(out)
                    if isinstance(x, dict) and x.get(key) == p[key]), None)
        if p.get("$patch") == "delete":
            if idx is not None:
                del out[idx]
            continue
        if idx is None:
            out.append(_strip_directives(p))
        else:
            out[idx] = strategic_patch(out[idx], p)
    return out


def _ptr(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise bad_request("json patch: invalid pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, list):
            if not p.isdigit() or int(p) >= len(cur):
                raise ApiError(422, "Invalid", "json patch: no element %r" % p)
            cur = cur[int(p)]
        elif isinstance(cur, dict) and p in cur:
            cur = cur[p]
        else:
            raise ApiError(422, "Invalid", "json patch: missing path element %r" % p)
    return cur


def json_patch(doc, ops):
    """RFC 6902 JSON patch (add, remove, replace, move, copy, test)."""
    doc = dcopy(doc)
    if not isinstance(ops, list):
        raise bad_request("json patch: the body must be a JSON array of operations")
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise bad_request("json patch: each operation needs op and path")
        if not isinstance(op["path"], str):
            raise bad_request("json patch: path must be a string")
        kind, parts = op["op"], _ptr(op["path"])
        if kind in ("move", "copy"):
            if not isinstance(op.get("from"), str):
                raise bad_request("json patch: %s needs from" % kind)
            val = dcopy(_walk(doc, _ptr(op["from"])))
            if kind == "move":
                _remove(doc, _ptr(op["from"]))
            doc = _add(doc, parts, val)
        elif kind == "add":
            doc = _add(doc, parts, dcopy(op.get("value")))
        elif kind == "remove":
            doc = _remove(doc, parts)
        elif kind == "replace":
            _walk(doc, parts)
            doc = _remove(doc, parts)
            doc = _add(doc, parts, dcopy(op.get("value")))
        elif kind == "test":
            if _walk(doc, parts) != op.get("value"):
                raise ApiError(422, "Invalid", "json patch: test failed at %s" % op["path"])
        else:
            raise bad_request("json patch: unknown op %r" % kind)
    return doc


def _add(doc, parts, val):
    if not parts:
        return val
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        if last == "-":
            parent.append(val)
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), val)
        else:
            raise ApiError(422, "Invalid", "json patch: bad index %r" % last)
    elif isinstance(parent, dict):
        parent[last] = val
    else:
        raise ApiError(422, "Invalid", "json patch: cannot add under a scalar")
    return doc


def _remove(doc, parts):
    if not parts:
        raise ApiError(422, "Invalid", "json patch: cannot remove the root")
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        del parent[int(last)]
    elif isinstance(parent, dict) and last in parent:
        del parent[last]
    else:
        raise ApiError(422, "Invalid", "json patch: nothing to remove at %r" % last)
    return doc


# ---------------------------------------------------------------- Tables

# kubectl get asks for meta.k8s.io/v1 Tables (Accept: ...;as=Table;...).  The
# columns below are kube-apiserver's printers (pkg/printers/internalversion)
# for the kinds carve's walk-throughs show, reduced to the fields the fake
# has; custom resources get Name plus the version's additionalPrinterColumns
# (JSONPath: .a.b, [N], [*], [?(@.k=="v")]), or Name and Age without them.

def human_age(ts):
    """Kubernetes' duration.HumanDuration of now - ts (RFC 3339)."""
    import calendar
    if not ts:
        return "<unknown>"
    try:
        t = calendar.timegm(time.strptime(str(ts)[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return "<invalid>"
    sec = int(time.time() - t)
    if sec < -1:
        return "<invalid>"
    sec = max(sec, 0)
    if sec < 120:
        return "%ds" % sec
    m = sec // 60
    if m < 10:
        return "%dm%ds" % (m, sec % 60) if sec % 60 else "%dm" % m
    if m < 180:
        return "%dm" % m
    h = sec // 3600
    if h < 8:
        return "%dh%dm" % (h, m % 60) if m % 60 else "%dh" % h
    if h < 48:
        return "%dh" % h
    if h < 192:
        return "%dd%dh" % (h // 24, h % 24) if h % 24 else "%dd" % (h // 24)
    if h < 24 * 365 * 2:
        return "%dd" % (h // 24)
    return "%dy" % (h // 24 // 365)


_JP_TOKEN = re.compile(r"\.([A-Za-z0-9_\-]+)|\[(\d+)\]|\[\*\]|"
                       r"\[\?\(@\.([A-Za-z0-9_.\-]+)\s*==\s*[\"']([^\"']*)[\"']\)\]")


def jsonpath_first(obj, path):
    """The first value a simple JSONPath selects, or None."""
    cur, pos, path = [obj], 0, path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    while pos < len(path):
        m = _JP_TOKEN.match(path, pos)
        if not m:
            return None
        pos = m.end()
        nxt = []
        for c in cur:
            if m.group(1) is not None and isinstance(c, dict) and m.group(1) in c:
                nxt.append(c[m.group(1)])
            elif m.group(2) is not None and isinstance(c, list) and int(m.group(2)) < len(c):
                nxt.append(c[int(m.group(2))])
            elif m.group(0) == "[*]" and isinstance(c, list):
                nxt.extend(c)
            elif m.group(3) is not None and isinstance(c, list):
                nxt.extend(x for x in c if isinstance(x, dict) and
                           str(field_value(x, m.group(3))) == m.group(4))
        cur = nxt
    return cur[0] if cur else None


def _col(name, typ="string", prio=0, fmt=""):
    return {"name": name, "type": typ, "format": fmt, "description": name, "priority": prio}


def _pod_row(o):
    spec, st = o.get("spec") or {}, o.get("status") or {}
    css = st.get("containerStatuses") or []
    ready = sum(1 for c in css if c.get("ready"))
    status = st.get("reason") or st.get("phase") or "Pending"
    if o["metadata"].get("deletionTimestamp"):
        status = "Terminating"
    return ["%d/%d" % (ready, len(spec.get("containers") or [])), status,
            sum(int(c.get("restartCount") or 0) for c in css),
            human_age(o["metadata"].get("creationTimestamp")), st.get("podIP") or "<none>",
            spec.get("nodeName") or "<none>", st.get("nominatedNodeName") or "<none>"]


def _node_row(o):
    conds = {c.get("type"): c.get("status") for c in (o.get("status") or {}).get("conditions") or []}
    status = {"True": "Ready", "False": "NotReady"}.get(conds.get("Ready"), "Unknown")
    if (o.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    roles = sorted(k.split("/", 1)[1] for k in (o["metadata"].get("labels") or {})
                   if k.startswith("node-role.kubernetes.io/"))
    return [status, ",".join(roles) or "<none>", human_age(o["metadata"].get("creationTimestamp")),
            ((o.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")]


def _event_row(o):
    inv = o.get("involvedObject") or {}
    return [human_age(o.get("lastTimestamp") or o.get("eventTime") or
                      o["metadata"].get("creationTimestamp")),
            o.get("type", ""), o.get("reason", ""),
            "%s/%s" % (str(inv.get("kind", "")).lower(), inv.get("name", "")),
            o.get("message", "")]


_AGE = lambda o: human_age(o["metadata"].get("creationTimestamp"))
TABLES = {
    "/pods": ([_col("Ready"), _col("Status"), _col("Restarts", "integer"), _col("Age"),
               _col("IP", prio=1), _col("Node", prio=1), _col("Nominated Node", prio=1)],
              _pod_row),
    "/nodes": ([_col("Status"), _col("Roles"), _col("Age"), _col("Version")], _node_row),
    "/events": ([_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"),
                 _col("Message")], _event_row),
    "/namespaces": ([_col("Status"), _col("Age")],
                    lambda o: [(o.get("status") or {}).get("phase", ""), _AGE(o)]),
    "/configmaps": ([_col("Data", "integer"), _col("Age")],
                    lambda o: [len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                               _AGE(o)]),
    "coordination.k8s.io/leases": ([_col("Holder"), _col("Age")],
                                   lambda o: [(o.get("spec") or {}).get("holderIdentity", ""),
                                              _AGE(o)]),
    "scheduling.k8s.io/priorityclasses": (
        [_col("Value", "integer"), _col("Global-Default", "boolean"), _col("Age"),
         _col("PreemptionPolicy")],
        lambda o: [o.get("value", 0), bool(o.get("globalDefault")), _AGE(o),
                   o.get("preemptionPolicy", "PreemptLowerPriority")]),
    "batch/jobs": ([_col("Completions"), _col("Age")],
                   lambda o: ["%d/%d" % ((o.get("status") or {}).get("succeeded", 0),
                                         (o.get("spec") or {}).get("completions", 1)), _AGE(o)]),
    "apiextensions.k8s.io/customresourcedefinitions": (
        [_col("Created At", fmt="date")],
        lambda o: [o["metadata"].get("creationTimestamp", "")]),
}


def _cell(v, typ):
    if v is None:
        return None
    if typ == "date":
        return human_age(v)
    if typ == "integer" and isinstance(v, (int, float)) and not isinstance(v, bool):
        return int(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    if typ == "string":
        return v if isinstance(v, str) else json.dumps(v)
    return v


def to_table(res, objs, meta, include="Metadata"):
    """A meta.k8s.io/v1 Table of objs (served forms)."""
    cols = [_col("Name", fmt="name")]
    if getattr(res, "printer_columns", None):
        pcs = res.printer_columns
        cols += [_col(c.get("name", ""), c.get("type", "string"), c.get("priority", 0),
                      c.get("format", "")) for c in pcs]
        rowf = lambda o: [_cell(jsonpath_first(o, c.get("jsonPath", "")), c.get("type", "string"))
                          for c in pcs]
    elif res.gr in TABLES and res.group != "events.k8s.io":
        cols += TABLES[res.gr][0]
        rowf = TABLES[res.gr][1]
    elif res.gr == "/events":  # events.k8s.io: the core form's columns
        cols += TABLES["/events"][0]
        rowf = lambda o: _event_row(event_to_core(o))
    else:
        cols.append(_col("Age"))
        rowf = lambda o: [_AGE(o)]
    name_last = res.gr == "/events"  # events print Name last, wide only
    if name_last:
        cols = cols[1:] + [_col("Name", prio=1, fmt="name")]
    rows = []
    for o in objs:
        name = [o["metadata"].get("name", "")]
        row = {"cells": rowf(o) + name if name_last else name + rowf(o)}
        if include == "Object":
            row["object"] = o
        elif include != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": o["metadata"]}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
            "columnDefinitions": cols, "rows": rows}


# ---------------------------------------------------------------- CRD pruning

# Per request: the fieldValidation directive and the warnings to send back.
REQ = threading.local()


def prune(v, sch, path, dropped, root=False):
    """Drop what a structural schema does not declare, as kube-apiserver
    prunes custom resources (apiextensions "structural schema" pruning):
    properties, additionalProperties, items and
    x-kubernetes-preserve-unknown-fields; apiVersion, kind and metadata are
    kept at the root and in x-kubernetes-embedded-resource objects.  The paths
    dropped are appended to dropped."""
    if not isinstance(sch, dict):
        return v
    preserve = sch.get("x-kubernetes-preserve-unknown-fields") is True
    if isinstance(v, dict):
        props = sch.get("properties") or {}
        addl = sch.get("additionalProperties")
        embedded = root or sch.get("x-kubernetes-embedded-resource") is True
        out = {}
        for k, x in v.items():
            sub = path + "." + k if path else k
            if embedded and k in ("apiVersion", "kind", "metadata"):
                out[k] = x
            elif k in props:
                out[k] = prune(x, props[k], sub, dropped)
            elif isinstance(addl, dict):
                out[k] = prune(x, addl, sub, dropped)
            elif addl is True or preserve:
                out[k] = x
            else:
                dropped.append(sub)
        return out
    if isinstance(v, list) and isinstance(sch.get("items"), dict):
        return [prune(x, sch["items"], "%s[%d]" % (path, i), dropped) for i, x in enumerate(v)]
    return v


# ---------------------------------------------------------------- protobuf bodies

# kubectl's imperative generators (create namespace, create configmap, ...)
# send Kubernetes' protobuf encoding: "k8s\0" then runtime.Unknown
# {typeMeta=1 {apiVersion=1, kind=2}, raw=2}; raw is the object with the field
# numbers of k8s.io/api's generated.proto.  The kinds below are decoded; others
# get 415.
_PB_OWNER = {1: ("kind", "str"), 3: ("name", "str"), 4: ("uid", "str"),
             5: ("apiVersion", "str"), 6: ("controller", "bool"),
             7: ("blockOwnerDeletion", "bool")}
_PB_META = {1: ("name", "str"), 2: ("generateName", "str"), 3: ("namespace", "str"),
            5: ("uid", "str"), 6: ("resourceVersion", "str"), 7: ("generation", "int"),
            11: ("labels", ("map", "str")), 12: ("annotations", ("map", "str")),
            13: ("ownerReferences", ("rep", _PB_OWNER)), 14: ("finalizers", ("rep", "str"))}
_PB_KINDS = {
    "Namespace": {1: ("metadata", _PB_META),
                  2: ("spec", {1: ("finalizers", ("rep", "str"))})},
    "ConfigMap": {1: ("metadata", _PB_META), 2: ("data", ("map", "str")),
                  3: ("binaryData", ("map", "bytes")), 4: ("immutable", "bool")},
    "Secret": {1: ("metadata", _PB_META), 2: ("data", ("map", "bytes")), 3: ("type", "str"),
               4: ("stringData", ("map", "str")), 5: ("immutable", "bool")},
    "ServiceAccount": {1: ("metadata", _PB_META),
                       3: ("imagePullSecrets", ("rep", {1: ("name", "str")})),
                       4: ("automountServiceAccountToken", "bool")},
    "PriorityClass": {1: ("metadata", _PB_META), 2: ("value", "int"),
                      3: ("globalDefault", "bool"), 4: ("description", "str"),
                      5: ("preemptionPolicy", "str")},
}


def _pb_fields(b):
    """(field number, wire type, value) of one protobuf message."""
    i = 0
    def varint():
        nonlocal i
        v = shift = 0
        while True:
            if i >= len(b):
                raise bad_request("protobuf body: truncated varint")
            c = b[i]
            i += 1
            v |= (c & 0x7f) << shift
            shift += 7
            if not c & 0x80:
                return v
    while i < len(b):
        key = varint()
        num, wt = key >> 3, key & 7
        if wt == 0:
            yield num, wt, varint()
        elif wt == 2:
            n = varint()
            if i + n > len(b):
                raise bad_request("protobuf body: truncated field %d" % num)
            yield num, wt, b[i:i + n]
            i += n
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        else:
            raise bad_request("protobuf body: wire type %d not supported" % wt)


def _pb_value(t, v):
    if t == "str":
        return v.decode()
    if t == "bytes":
        return base64.b64encode(v).decode()
    if t == "bool":
        return bool(v)
    if t == "int":
        return v - (1 << 64) if v >= 1 << 63 else v
    return _pb_msg(t, v)


def _pb_msg(schema, b):
    out = {}
    for num, wt, v in _pb_fields(b):
        if num not in schema:
            continue
        name, t = schema[num]
        if isinstance(t, tuple) and t[0] == "map":
            kv = {k: val for k, _, val in _pb_fields(v)}
            out.setdefault(name, {})[kv.get(1, b"").decode()] = _pb_value(t[1], kv.get(2, b""))
        elif isinstance(t, tuple) and t[0] == "rep":
            out.setdefault(name, []).append(_pb_value(t[1], v))
        elif v != b"" and not (t == "int" and v == 0):  # proto2 writes empty fields
            out[name] = _pb_value(t, v)
    return out


def decode_protobuf(body):
    if not body.startswith(b"k8s\x00"):
        raise bad_request("protobuf body: no k8s magic prefix")
    unk = {n: v for n, _, v in _pb_fields(body[4:])}
    tm = {n: v.decode() for n, _, v in _pb_fields(unk.get(1, b""))}
    kind = tm.get(2, "")
    if kind not in _PB_KINDS:
        raise ApiError(415, "UnsupportedMediaType",
                       "the fake API server decodes protobuf bodies of %s only; send "
                       "application/json" % ", ".join(sorted(_PB_KINDS)))
    obj = _pb_msg(_PB_KINDS[kind], unk.get(2, b""))
    obj["apiVersion"], obj["kind"] = tm.get(1, ""), kind
    return json.dumps(obj).encode()


# ---------------------------------------------------------------- the store

_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_RAND = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's generateName alphabet


def rand_suffix(n=5):
    return "".join(random.choice(_RAND) for _ in range(n))


class Store:
    """Objects per resource, the global resourceVersion and the event history."""

    def __init__(self, history):
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.rv = 0
        self.objs = {}          # gr -> {(ns, name): obj}
        self.hist = []          # [(rv, gr, type, obj, old)]
        self.hist_first = 1     # rv of hist[0]
        self.history = history
        self.compacted = 0      # events with rv <= compacted are gone
        self.epoch = 0          # bumped by each "compact" fault
        self.snapshots = {}     # continue token id -> (rv, gr, items)
        self.hooks = []         # f(res, type, obj, old) after each write

    def oldest_available(self):
        return max(self.compacted + 1, self.rv - self.history + 1, self.hist_first)

    def commit(self, res, typ, key, obj, old):
        """Store one write as the next resourceVersion and one event; the caller
        holds the lock.  obj is the new object (for DELETED, the last state)."""
        self.rv += 1
        obj = dict(obj)
        obj["metadata"] = dict(obj.get("metadata") or {})
        obj["metadata"]["resourceVersion"] = str(self.rv)
        table = self.objs.setdefault(res.gr, {})
        if typ == "DELETED":
            table.pop(key, None)
        else:
            table[key] = obj
        self.hist.append((self.rv, res.gr, typ, obj, old))
        if len(self.hist) > self.history + max(16, self.history // 4):
            drop = len(self.hist) - self.history
            del self.hist[:drop]
            self.hist_first += drop
        self.cond.notify_all()
        for h in self.hooks:
            h(res, typ, obj, old)
        return obj

    def events_after(self, pos):
        """Events with rv > pos (the caller checked availability)."""
        start = pos + 1 - self.hist_first
        return self.hist[max(start, 0):]

    def compact(self):
        with self.lock:
            self.compacted = self.rv
            self.epoch += 1
            self.hist = []
            self.hist_first = self.rv + 1
            self.snapshots.clear()
            self.cond.notify_all()


# ---------------------------------------------------------------- the server state

class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.conflict = 0
        self.throttle = 0
        self.retry_after = 1
        self.fail_500 = 0
        self.latency_ms = 0
        self.match = ""          # path substring the counted faults apply to
        self.split_chunks = False  # watch events cut across chunks
        self.endless_line = 0    # the next N watches stream one line without end
        self.drop_pending = None  # arms the next watch to open

    def take(self, name, path):
        with self.lock:
            if getattr(self, name) > 0 and self.match in path:
                setattr(self, name, getattr(self, name) - 1)
                return True
        return False


class Watch:
    def __init__(self):
        self.drop_after = None
        self.table = None  # the Res whose Table rows the events carry
        self.include = "Metadata"


class Api:
    """The API semantics: routing targets, verbs and the controllers."""

    def __init__(self, args):
        self.args = args
        self.store = Store(args.history)
        self.res = {}            # (group, version, plural) -> Res
        self.faults = Faults()
        self.watches = set()
        self.stats = {}
        self.stats_lock = threading.Lock()
        for r in builtin_resources():
            self.res[(r.group, r.version, r.plural)] = r
        self.store.hooks.append(self._crd_hook)
        if "job" in args.controllers:
            self.store.hooks.append(self._job_hook)
        with self.store.lock:
            for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
                self.create(self.res[("", "v1", "namespaces")], None,
                            {"metadata": {"name": ns}})
            # kube-apiserver's built-in priority classes
            pcs = self.res[("scheduling.k8s.io", "v1", "priorityclasses")]
            for name, val in (("system-node-critical", 2000001000),
                              ("system-cluster-critical", 2000000000)):
                self.create(pcs, None, {"metadata": {"name": name}, "value": val,
                                        "preemptionPolicy": "PreemptLowerPriority"})

    def count(self, verb, what, code):
        with self.stats_lock:
            v = self.stats.setdefault(verb, {})
            v[what] = v.get(what, 0) + 1
            c = self.stats.setdefault("codes", {})
            c[str(code)] = c.get(str(code), 0) + 1

    # ------------------------------------------------------------ lookups

    def table(self, res):
        return self.store.objs.get(res.gr, {})

    def get_obj(self, res, ns, name):
        obj = self.table(res).get((ns or "", name))
        if obj is None:
            raise not_found(res, name)
        return obj

    def out(self, res, obj):
        """An object as served under res's version."""
        if res.group == "events.k8s.io":
            return event_to_v1(obj)
        if obj.get("apiVersion") == res.api_version:
            return obj
        o = dict(obj)
        o["apiVersion"] = res.api_version
        return o

    # ------------------------------------------------------------ validation and defaults

    def check_ns(self, res, ns):
        if res.namespaced and ns is not None:
            if ("", ns) not in self.store.objs.get("/namespaces", {}):
                raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                               {"name": ns, "kind": "namespaces"})

    def validate(self, res, obj):
        md = obj["metadata"]
        name = md.get("name", "")
        if res.plural == "namespaces" and res.group == "":
            ok = _LABEL_RE.match(name) and len(name) <= 63
            what = "a lowercase RFC 1123 label"
        else:
            ok = _NAME_RE.match(name) and len(name) <= 253
            what = "a lowercase RFC 1123 subdomain"
        if res.gr in ("/events", "events.k8s.io/events", "coordination.k8s.io/leases"):
            ok = ok or re.match(r"^[A-Za-z0-9][-A-Za-z0-9_.]*$", name)
        if not ok:
            raise invalid(res, name, "metadata.name",
                          what + " must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character",
                          name)
        for f in ("labels", "annotations"):
            v = md.get(f)
            if v is not None and (not isinstance(v, dict) or
                                  not all(isinstance(x, str) for x in v.values())):
                raise invalid(res, name, "metadata." + f, "must be a map of strings")
        if res.gr == "/pods":
            spec = obj.get("spec")
            if not isinstance(spec, dict):
                raise invalid(res, name, "spec", "Required value")
            cs = spec.get("containers")
            if not isinstance(cs, list) or not cs:
                raise invalid(res, name, "spec.containers", "Required value")
            for i, c in enumerate(cs):
                if not isinstance(c, dict) or not c.get("name"):
                    raise invalid(res, name, "spec.containers[%d].name" % i, "Required value")
                if not c.get("image"):
                    raise invalid(res, name, "spec.containers[%d].image" % i, "Required value")
        if res.gr == "coordination.k8s.io/leases":
            d = (obj.get("spec") or {}).get("leaseDurationSeconds")
            if d is not None and (not isinstance(d, int) or d <= 0):
                raise invalid(res, name, "spec.leaseDurationSeconds",
                              "must be greater than 0", d)

    def default_pod(self, res, obj):
        spec = obj.setdefault("spec", {})
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("restartPolicy", "Always")
        # the Priority admission plugin: priority from the named class, or
        # the global default, or 0
        pcs = self.store.objs.get("scheduling.k8s.io/priorityclasses", {})
        pcn = spec.get("priorityClassName")
        if pcn:
            pc = pcs.get(("", pcn))
            if pc is None:
                raise ApiError(403, "Forbidden",
                               'pods "%s" is forbidden: no PriorityClass with name %s was found'
                               % (obj["metadata"].get("name", ""), pcn))
            spec["priority"] = pc.get("value", 0)
            spec.setdefault("preemptionPolicy", pc.get("preemptionPolicy",
                                                       "PreemptLowerPriority"))
        elif "priority" not in spec:
            dflt = [p for p in pcs.values() if p.get("globalDefault")]
            spec["priority"] = dflt[0].get("value", 0) if dflt else 0
            if dflt:
                spec["priorityClassName"] = dflt[0]["metadata"]["name"]
        st = obj.setdefault("status", {})
        st.setdefault("phase", "Pending")

    def check_pod_update(self, res, old, new):
        """kube-apiserver's pod update rule: spec fields other than images,
        activeDeadlineSeconds, tolerations (added) and schedulingGates
        (removed) are immutable."""
        def strip(spec):
            s = dcopy(spec or {})
            for key in ("containers", "initContainers"):
                for c in s.get(key) or []:
                    if isinstance(c, dict):
                        c.pop("image", None)
            for key in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
                s.pop(key, None)
            return s
        name = old["metadata"]["name"]
        if strip(old.get("spec")) != strip(new.get("spec")):
            raise invalid(res, name, "spec",
                          "Forbidden: pod updates may not change fields other than "
                          "`spec.containers[*].image`, `spec.initContainers[*].image`, "
                          "`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions "
                          "to existing tolerations), `spec.schedulingGates` (only removals)")
        og = [g.get("name") for g in (old.get("spec") or {}).get("schedulingGates") or []]
        ng = [g.get("name") for g in (new.get("spec") or {}).get("schedulingGates") or []]
        if any(g not in og for g in ng):
            raise invalid(res, name, "spec.schedulingGates",
                          "Forbidden: only deletion is allowed, but found new scheduling gate")

    def body_meta(self, res, ns, body):
        if not isinstance(body, dict):
            raise bad_request("the body of the request must be a JSON object")
        av, kind = body.get("apiVersion"), body.get("kind")
        if av is not None and av != res.api_version:
            raise bad_request("the API version in the data (%s) does not match the "
                              "expected API version (%s)" % (av, res.api_version))
        if kind is not None and kind != res.kind:
            raise bad_request("the kind in the data (%s) does not match the expected "
                              "kind (%s)" % (kind, res.kind))
        md = body.get("metadata")
        if md is None:
            md = {}
        if not isinstance(md, dict):
            raise bad_request("metadata must be an object")
        for f in ("name", "generateName", "namespace", "resourceVersion", "uid"):
            if f in md and md[f] is not None and not isinstance(md[f], str):
                raise ApiError(422, "Invalid", "%s: metadata.%s: Invalid value: must be a string"
                               % (res.kind, f), {"kind": res.kind, "causes": [
                                   {"reason": "FieldValueInvalid", "field": "metadata." + f,
                                    "message": "must be a string"}]})
        for f in ("labels", "annotations"):
            if f in md and md[f] is not None and not isinstance(md[f], dict):
                raise ApiError(422, "Invalid", "%s: metadata.%s: Invalid value: must be a map"
                               % (res.kind, f))
        for f in ("finalizers", "ownerReferences"):
            if f in md and md[f] is not None and not isinstance(md[f], list):
                raise ApiError(422, "Invalid", "%s: metadata.%s: Invalid value: must be a list"
                               % (res.kind, f))
        body = dict(body)
        body["metadata"] = md = dict(md)
        body["apiVersion"], body["kind"] = res.api_version, res.kind
        if res.namespaced:
            if md.get("namespace") and ns and md["namespace"] != ns:
                raise bad_request("the namespace of the provided object does not match "
                                  "the namespace sent on the request")
            md["namespace"] = ns or md.get("namespace") or "default"
        else:
            md.pop("namespace", None)
        if res.group == "events.k8s.io":
            body = event_to_core(body)
        if getattr(res, "schema", None) and not getattr(self.args, "no_prune", False):
            dropped = []
            body = prune(body, res.schema, "", dropped, root=True)
            if dropped:
                fv = getattr(REQ, "field_validation", "Warn")
                if fv == "Strict":
                    raise bad_request("strict decoding error: " + ", ".join(
                        'unknown field "%s"' % d for d in dropped))
                if fv != "Ignore":
                    REQ.warnings.extend('unknown field "%s"' % d for d in dropped)
        return body

    # ------------------------------------------------------------ verbs

    def create(self, res, ns, body):
        with self.store.lock:
            obj = self.body_meta(res, ns, body)
            md = obj["metadata"]
            if not md.get("name"):
                if md.get("generateName"):
                    for _ in range(20):
                        md["name"] = md["generateName"] + rand_suffix()
                        if (md.get("namespace", ""), md["name"]) not in self.table(res):
                            break
                else:
                    raise ApiError(422, "Invalid", "%s.%s \"\" is invalid: metadata.name: "
                                   "Required value: name or generateName is required"
                                   % (res.kind, res.group or "core"),
                                   {"kind": res.kind, "causes": [
                                       {"reason": "FieldValueRequired",
                                        "message": "Required value: name or generateName is required",
                                        "field": "metadata.name"}]})
            self.check_ns(res, md.get("namespace"))
            key = (md.get("namespace", ""), md["name"])
            if key in self.table(res):
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists'
                               % (res.gr_name, md["name"]),
                               {"name": md["name"], "group": res.group, "kind": res.plural})
            # PrepareForCreate: status is the server's on create, except for
            # nodes (kube-apiserver lets a node be created with its status)
            if res.status and res.gr != "/nodes":
                obj.pop("status", None)
            if res.gr == "/pods":
                self.default_pod(res, obj)
            if res.gr == "/namespaces":
                obj.setdefault("status", {})["phase"] = "Active"
            if res.gr == "apiextensions.k8s.io/customresourcedefinitions":
                self.check_crd(res, obj)
            self.validate(res, obj)
            for f in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
                md.pop(f, None)
            md["uid"] = str(uuid.uuid4())
            md["creationTimestamp"] = now_rfc3339()
            md["generation"] = 1
            return self.store.commit(res, "ADDED", key, obj, None)

    def _spec_changed(self, old, new):
        a = {k: v for k, v in old.items() if k not in ("metadata", "status")}
        b = {k: v for k, v in new.items() if k not in ("metadata", "status")}
        return a != b

    def update(self, res, ns, name, body, sub=None, precondition=True):
        """PUT (and the end of PATCH): new object body replaces the stored one;
        with a status subresource the main resource ignores status and the
        /status endpoint takes only status."""
        with self.store.lock:
            old = self.get_obj(res, ns, name)
            obj = self.body_meta(res, ns, body)
            md = obj["metadata"]
            if md.get("name") and md["name"] != name:
                raise bad_request("the name of the object (%s) does not match the name "
                                  "on the URL (%s)" % (md["name"], name))
            rv = md.get("resourceVersion")
            if precondition and rv not in (None, "") and rv != old["metadata"]["resourceVersion"]:
                raise conflict(res, name, "the object has been modified; please apply your "
                               "changes to the latest version and try again")
            uid = md.get("uid")
            if uid and uid != old["metadata"].get("uid"):
                raise conflict(res, name, "Precondition failed: UID in precondition: %s, "
                               "UID in object meta: %s" % (uid, old["metadata"].get("uid")))
            if sub == "status":
                new = dict(old)
                new["metadata"] = dict(old["metadata"])
                if "status" in obj:
                    new["status"] = obj["status"]
                else:
                    new.pop("status", None)
            else:
                new = obj
                if res.status:
                    if "status" in old:
                        new["status"] = old["status"]
                    else:
                        new.pop("status", None)
                nm = new["metadata"]
                for f in ("uid", "creationTimestamp", "generation", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "namespace"):
                    if f in old["metadata"]:
                        nm[f] = old["metadata"][f]
                    else:
                        nm.pop(f, None)
                nm["name"] = name
                nm["resourceVersion"] = old["metadata"]["resourceVersion"]
                if res.gr == "/pods":
                    self.check_pod_update(res, old, new)
                if self._spec_changed(old, new):
                    nm["generation"] = old["metadata"].get("generation", 1) + 1
                if res.gr == "apiextensions.k8s.io/customresourcedefinitions":
                    self.check_crd(res, new)
                    ospec, nspec = old.get("spec") or {}, new.get("spec") or {}
                    for f in ("group", "names", "scope"):
                        if (f != "names" and ospec.get(f) != nspec.get(f)) or \
                                (f == "names" and (ospec.get(f) or {}).get("plural") !=
                                 (nspec.get(f) or {}).get("plural")):
                            raise invalid(res, name, "spec." + f, "field is immutable")
                self.validate(res, new)
            if new == old:  # a no-op write keeps the resourceVersion (as etcd3's store)
                return old
            new = dict(new)
            md = new["metadata"]
            if md.get("deletionTimestamp") and not md.get("finalizers") and \
                    old["metadata"].get("finalizers"):  # the last finalizer removed
                return self.store.commit(res, "DELETED", (ns or "", name), new, old)
            return self.store.commit(res, "MODIFIED", (ns or "", name), new, old)

    def patch(self, res, ns, name, ctype, body, sub=None):
        with self.store.lock:
            old = self.get_obj(res, ns, name)
            try:
                p = json.loads(body or b"null")
            except ValueError as e:
                raise bad_request("error decoding patch: %s" % e)
            base = self.out(res, old)
            ct = (ctype or "").split(";")[0].strip()
            if ct == "application/merge-patch+json":
                new = merge_patch(base, p)
            elif ct == "application/strategic-merge-patch+json":
                if not res.builtin:
                    raise ApiError(415, "UnsupportedMediaType",
                                   "the body of the request was in an unknown format - "
                                   "accepted media types include: application/json-patch+json, "
                                   "application/merge-patch+json, application/apply-patch+yaml")
                new = strategic_patch(base, p)
            elif ct == "application/json-patch+json":
                new = json_patch(base, p)
            else:
                raise ApiError(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted "
                               "media types include: application/json-patch+json, "
                               "application/merge-patch+json, "
                               "application/strategic-merge-patch+json")
            if not isinstance(new, dict):
                raise bad_request("the patch did not produce an object")
            want = ((p.get("metadata") or {}).get("resourceVersion")
                    if isinstance(p, dict) and isinstance(p.get("metadata"), dict) else None)
            if want and want != old["metadata"]["resourceVersion"]:
                raise conflict(res, name, "the object has been modified; please apply your "
                               "changes to the latest version and try again")
            new.setdefault("metadata", {})
            if isinstance(new["metadata"], dict):
                new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            return self.update(res, ns, name, new, sub)

    def delete(self, res, ns, name, opts):
        with self.store.lock:
            old = self.get_obj(res, ns, name)
            pre = (opts or {}).get("preconditions") or {}
            if pre.get("uid") and pre["uid"] != old["metadata"].get("uid"):
                raise conflict(res, name, "Precondition failed: UID in precondition: %s, "
                               "UID in object meta: %s" % (pre["uid"], old["metadata"].get("uid")))
            if pre.get("resourceVersion") and pre["resourceVersion"] != old["metadata"]["resourceVersion"]:
                raise conflict(res, name, "Precondition failed: ResourceVersion in precondition: "
                               "%s, ResourceVersion in object meta: %s"
                               % (pre["resourceVersion"], old["metadata"]["resourceVersion"]))
            key = (ns or "", name)
            if res.gr == "/pods" and self.args.pod_grace is not None:
                done = self.graceful_pod_delete(res, key, old, opts)
                if done is not None:
                    return done, False
            if old["metadata"].get("finalizers"):
                if old["metadata"].get("deletionTimestamp"):
                    return old, False
                new = dict(old)
                new["metadata"] = dict(old["metadata"])
                new["metadata"]["deletionTimestamp"] = now_rfc3339()
                new["metadata"]["deletionGracePeriodSeconds"] = int(
                    (opts or {}).get("gracePeriodSeconds") or 0)
                return self.store.commit(res, "MODIFIED", key, new, old), False
            gone = self.store.commit(res, "DELETED", key, old, old)
            if res.gr == "/namespaces":
                for r in list(self.res.values()):
                    if r.namespaced and r.version == self.storage_version(r):
                        for k in [k for k in self.table(r) if k[0] == name]:
                            o = self.table(r)[k]
                            self.store.commit(r, "DELETED", k, o, o)
            return gone, True

    def graceful_pod_delete(self, res, key, old, opts):
        """--pod-grace S: a bound pod deleted with a grace period is marked
        (deletionTimestamp = now + grace, deletionGracePeriodSeconds) and
        removed min(grace, S) seconds later, as its kubelet would confirm;
        None when it goes at once (unbound, grace 0)."""
        g = (opts or {}).get("gracePeriodSeconds")
        if g is None:
            g = (old.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        try:
            g = int(g)
        except (TypeError, ValueError):
            raise bad_request("gracePeriodSeconds: not an integer: %r" % g)
        if not (old.get("spec") or {}).get("nodeName") or g <= 0:
            return None
        if old["metadata"].get("deletionTimestamp"):
            return old
        new = dict(old)
        new["metadata"] = dict(old["metadata"])
        new["metadata"]["deletionTimestamp"] = time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + g))
        new["metadata"]["deletionGracePeriodSeconds"] = g
        out = self.store.commit(res, "MODIFIED", key, new, old)
        uid = old["metadata"].get("uid")

        def finish():
            with self.store.lock:
                cur = self.table(res).get(key)
                if cur is not None and cur["metadata"].get("uid") == uid and \
                        not cur["metadata"].get("finalizers"):
                    self.store.commit(res, "DELETED", key, cur, cur)
        t = threading.Timer(min(g, self.args.pod_grace), finish)
        t.daemon = True
        t.start()
        return out

    def storage_version(self, r):
        """The one Res per storage key that cascades act through."""
        for x in self.res.values():
            if x.gr == r.gr:
                return x.version
        return r.version

    def bind(self, ns, name, body):
        """POST pods/NAME/binding as kube-apiserver's BindingREST.Create."""
        res = self.res[("", "v1", "pods")]
        if not isinstance(body, dict):
            raise bad_request("the body of the request must be a JSON object")
        md = body.get("metadata") or {}
        target = body.get("target") or {}
        ann = md.get("annotations") if isinstance(md, dict) else None
        if not isinstance(md, dict) or not isinstance(target, dict) or \
                (ann is not None and (not isinstance(ann, dict) or
                                      not all(isinstance(v, str) for v in ann.values()))):
            raise bad_request("Binding: metadata and target must be objects, "
                              "metadata.annotations a map of strings")
        if md.get("name") and md["name"] != name:
            raise bad_request("name in URL does not match name in Binding object")
        if not isinstance(target.get("name"), str) or not target.get("name"):
            raise ApiError(422, "Invalid", 'Binding "%s" is invalid: target.name: '
                           'Required value' % name)
        with self.store.lock:
            old = self.get_obj(res, ns, name)
            om = old["metadata"]
            if md.get("uid") and md["uid"] != om.get("uid"):
                raise conflict(res, name, "Precondition failed: UID in precondition: %s, "
                               "UID in object meta: %s" % (md["uid"], om.get("uid")))
            if om.get("deletionTimestamp"):
                raise conflict(res, name, "pod %s is being deleted, cannot be assigned to a host"
                               % name)
            spec = old.get("spec") or {}
            if spec.get("nodeName"):
                raise conflict(res, name, "pod %s is already assigned to node %s"
                               % (name, json.dumps(spec["nodeName"])))
            if spec.get("schedulingGates"):
                raise conflict(res, name, "pod %s has non-empty .spec.schedulingGates" % name)
            new = dict(old)
            new["metadata"] = dict(om)
            ann = dict(om.get("annotations") or {})
            ann.update(md.get("annotations") or {})
            if ann:
                new["metadata"]["annotations"] = ann
            new["spec"] = dict(spec)
            new["spec"]["nodeName"] = target["name"]
            st = dict(old.get("status") or {})
            st.pop("nominatedNodeName", None)
            conds = [c for c in st.get("conditions") or [] if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True",
                          "lastProbeTime": None, "lastTransitionTime": now_rfc3339()})
            st["conditions"] = conds
            if self.args.run_bound:
                st["phase"] = "Running"
                st["startTime"] = now_rfc3339()
            new["status"] = st
            self.store.commit(res, "MODIFIED", (ns, name), new, old)
        return {"kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Success", "code": 201}

    # ------------------------------------------------------------ CRDs

    def check_crd(self, res, obj):
        spec = obj.get("spec") or {}
        name = obj["metadata"].get("name", "")
        names = spec.get("names") or {}
        group = spec.get("group")
        if not group or not names.get("plural") or not names.get("kind"):
            raise invalid(res, name, "spec.group/spec.names", "Required value")
        if name != names["plural"] + "." + group:
            raise invalid(res, name, "metadata.name",
                          'must be spec.names.plural+"."+spec.group', name)
        if spec.get("scope") not in ("Namespaced", "Cluster"):
            raise invalid(res, name, "spec.scope",
                          'supported values: "Cluster", "Namespaced"', spec.get("scope"))
        vs = spec.get("versions")
        if not isinstance(vs, list) or not vs or not all(isinstance(v, dict) and v.get("name")
                                                         for v in vs):
            raise invalid(res, name, "spec.versions", "must have exactly one version marked as storage version")
        if sum(1 for v in vs if v.get("storage")) != 1:
            raise invalid(res, name, "spec.versions",
                          "must have exactly one version marked as storage version")
        for v in vs:
            if (group, v["name"], names["plural"]) in self.res and \
                    self.res[(group, v["name"], names["plural"])].builtin:
                raise invalid(res, name, "spec.group", "a built-in resource has that name", group)
        obj["status"] = {
            "acceptedNames": dict(names),
            "storedVersions": [v["name"] for v in vs if v.get("storage")],
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                 "message": "no conflicts found", "lastTransitionTime": now_rfc3339()},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted",
                 "lastTransitionTime": now_rfc3339()}]}

    def _crd_hook(self, res, typ, obj, old):
        if res.gr != "apiextensions.k8s.io/customresourcedefinitions":
            return
        for o in (old, obj if typ != "DELETED" else None):
            if not o:
                continue
            spec = o.get("spec") or {}
            for v in spec.get("versions") or []:
                k = (spec.get("group"), v.get("name"), (spec.get("names") or {}).get("plural"))
                r = self.res.get(k)
                if r is not None and not r.builtin:
                    del self.res[k]
        if typ == "DELETED":
            spec = obj.get("spec") or {}
            gr = "%s/%s" % (spec.get("group"), (spec.get("names") or {}).get("plural"))
            tab = self.store.objs.get(gr, {})
            fake = Res(spec.get("group"), "", (spec.get("names") or {}).get("plural"),
                       (spec.get("names") or {}).get("kind", ""), False, builtin=False)
            for k in list(tab):
                self.store.commit(fake, "DELETED", k, tab[k], tab[k])
            return
        spec = obj.get("spec") or {}
        names = spec.get("names") or {}
        for v in spec.get("versions") or []:
            if not v.get("served", True):
                continue
            sub = v.get("subresources") or spec.get("subresources") or {}
            r = Res(spec["group"], v["name"], names["plural"], names["kind"],
                    spec.get("scope") == "Namespaced", names.get("shortNames") or [],
                    names.get("singular"), status="status" in sub, builtin=False)
            r.categories = names.get("categories") or []
            r.schema = (v.get("schema") or {}).get("openAPIV3Schema")
            r.printer_columns = v.get("additionalPrinterColumns") or []
            self.res[(r.group, r.version, r.plural)] = r

    # ------------------------------------------------------------ the Job controller

    def _job_hook(self, res, typ, obj, old):
        """--controllers job: a Job's pods, as the job controller creates them."""
        if res.gr == "batch/jobs":
            if typ == "DELETED":
                uid = obj["metadata"].get("uid")
                pods = self.res[("", "v1", "pods")]
                for k, p in list(self.table(pods).items()):
                    if any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or []):
                        self.store.commit(pods, "DELETED", k, p, p)
                return
            self._job_sync(res, obj)

    def _job_sync(self, res, job):
        spec = job.get("spec") or {}
        if spec.get("suspend"):
            return
        md = job["metadata"]
        pods = self.res[("", "v1", "pods")]
        uid = md["uid"]
        mine = [p for p in self.table(pods).values()
                if any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or [])]
        par = spec.get("parallelism", 1)
        comp = spec.get("completions")
        want = min(par, comp) if isinstance(comp, int) else par
        if len(mine) >= want:
            return
        indexed = spec.get("completionMode") == "Indexed"
        have_idx = {p["metadata"].get("annotations", {}).get("batch.kubernetes.io/job-completion-index")
                    for p in mine}
        tmpl = spec.get("template") or {}
        tm = tmpl.get("metadata") or {}
        idx = 0
        for _ in range(want - len(mine)):
            labels = dict(tm.get("labels") or {})
            ann = dict(tm.get("annotations") or {})
            labels.update({"batch.kubernetes.io/job-name": md["name"], "job-name": md["name"],
                           "batch.kubernetes.io/controller-uid": uid, "controller-uid": uid})
            gen = md["name"] + "-"
            if indexed:
                while str(idx) in have_idx:
                    idx += 1
                have_idx.add(str(idx))
                ann["batch.kubernetes.io/job-completion-index"] = str(idx)
                labels["batch.kubernetes.io/job-completion-index"] = str(idx)
                gen = "%s-%d-" % (md["name"], idx)
            pod = {"metadata": {"generateName": gen, "labels": labels, "annotations": ann,
                                "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job",
                                                     "name": md["name"], "uid": uid,
                                                     "controller": True,
                                                     "blockOwnerDeletion": True}]},
                   "spec": dcopy(tmpl.get("spec") or {})}
            try:
                self.create(pods, md["namespace"], pod)
            except ApiError as e:
                sys.stderr.write("fakeapi: job %s/%s: pod not created: %s\n"
                                 % (md["namespace"], md["name"], e.message))
                return
        new = dict(job)
        st = dict(job.get("status") or {})
        st["active"] = want
        st.setdefault("startTime", now_rfc3339())
        new["status"] = st
        self.store.commit(res, "MODIFIED", (md["namespace"], md["name"]), new, job)


# ---------------------------------------------------------------- HTTP

def parse_path(path):
    """URL path -> (group, version, rest parts) or None for non-API paths."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        return "", parts[1], parts[2:]
    if len(parts) >= 3 and parts[0] == "apis":
        return parts[1], parts[2], parts[3:]
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "carve-fakeapi/1"
    disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls on keep-alive
    api = None  # set at start

    def setup(self):
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(10)
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError):
                self.request.close()
                raise
            self.request.settimeout(None)
        super().setup()

    def log_message(self, fmt, *a):
        if self.api.args.verbose:
            sys.stderr.write("fakeapi: %s %s\n" % (self.address_string(), fmt % a))

    # ------------------------------------------------------------ plumbing

    def read_body(self):
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            data = b""
            while True:
                line = self.rfile.readline()
                n = int(line.split(b";")[0].strip() or b"0", 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(n)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def send_json(self, code, obj, headers=None):
        data = json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        for w in getattr(REQ, "warnings", None) or []:
            self.send_header("Warning", '299 - %s' % json.dumps(w))
        self._headers_buffer.append(b"\r\n")  # headers and body in one write
        if self.command != "HEAD":
            self._headers_buffer.append(data)
        self.flush_headers()

    def send_error_status(self, e):
        self.send_json(e.code, e.status(), e.headers)

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def do_PUT(self):
        self.handle_any()

    def do_PATCH(self):
        self.handle_any()

    def do_DELETE(self):
        self.handle_any()

    def handle_any(self):
        try:
            body = self.read_body()
        except (ValueError, OSError):
            self.close_connection = True
            return
        u = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(u.query, keep_blank_values=True).items()}
        api = self.api
        REQ.field_validation = q.get("fieldValidation") or "Warn"
        REQ.warnings = []
        try:
            ct = self.headers.get("Content-Type", "")
            if body and "protobuf" in ct:
                body = decode_protobuf(body)
            elif body and "cbor" in ct:
                raise ApiError(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted "
                               "media types include: application/json, application/yaml")
            if u.path.startswith("/fake/"):
                return self.fake_endpoint(u.path, body)
            self.authenticate()
            if api.faults.latency_ms > 0:
                time.sleep(api.faults.latency_ms / 1000.0)
            if api.faults.take("throttle", u.path):
                ra = str(api.faults.retry_after)
                api.count("throttled", u.path, 429)
                raise ApiError(429, "TooManyRequests",
                               "Too many requests, please try again later.",
                               {"retryAfterSeconds": api.faults.retry_after},
                               {"Retry-After": ra})
            if api.faults.take("fail_500", u.path):
                api.count("failed", u.path, 500)
                raise ApiError(500, "InternalError",
                               "Internal error occurred: injected by the fault endpoint")
            self.route(u.path, q, body)
        except ApiError as e:
            self.send_error_status(e)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True
        except Exception as e:  # a bug in the fake: say so, keep serving
            import traceback
            traceback.print_exc()
            self.send_error_status(ApiError(500, "InternalError",
                                            "fakeapi: internal error: %r" % e))

    def authenticate(self):
        args = self.api.args
        if not args.token:
            return
        if self.headers.get("Authorization", "") == "Bearer " + args.token:
            return
        if isinstance(self.connection, ssl.SSLSocket) and self.connection.getpeercert():
            return  # a client certificate signed by the test CA
        raise ApiError(401, "Unauthorized", "Unauthorized")

    # ------------------------------------------------------------ /fake/

    def fake_endpoint(self, path, body):
        api = self.api
        if path == "/fake/faults" and self.command == "POST":
            try:
                f = json.loads(body or b"{}")
            except ValueError as e:
                raise bad_request("faults: %s" % e)
            if not isinstance(f, dict):
                raise bad_request("faults: a JSON object expected")
            known = {"drop_watch_after", "conflict_next_writes", "throttle", "retry_after",
                     "fail_500", "latency_ms", "compact", "match", "reset", "split_chunks",
                     "endless_line"}
            bad = set(f) - known
            if bad:
                raise bad_request("faults: unknown field(s) %s" % ", ".join(sorted(bad)))
            fl = api.faults
            with fl.lock:
                if f.get("reset"):
                    fl.conflict = fl.throttle = fl.fail_500 = fl.latency_ms = 0
                    fl.endless_line = 0
                    fl.match, fl.drop_pending, fl.split_chunks = "", None, False
                if "conflict_next_writes" in f:
                    fl.conflict = int(f["conflict_next_writes"])
                if "throttle" in f:
                    fl.throttle = int(f["throttle"])
                if "retry_after" in f:
                    fl.retry_after = int(f["retry_after"])
                if "fail_500" in f:
                    fl.fail_500 = int(f["fail_500"])
                if "latency_ms" in f:
                    fl.latency_ms = int(f["latency_ms"])
                if "match" in f:
                    fl.match = str(f["match"])
                if "split_chunks" in f:
                    fl.split_chunks = bool(f["split_chunks"])
                if "endless_line" in f:
                    fl.endless_line = int(f["endless_line"])
            if "drop_watch_after" in f:
                n = int(f["drop_watch_after"])
                with api.store.lock:
                    for w in api.watches:
                        w.drop_after = n
                    fl.drop_pending = n
            if f.get("compact"):
                api.store.compact()
            return self.send_json(200, {"ok": True, "watches": len(api.watches)})
        if path == "/fake/load" and self.command == "POST":
            # bulk creation for benchmarks: a JSON array or List of objects
            try:
                items = json.loads(body or b"[]")
            except ValueError as e:
                raise bad_request("load: %s" % e)
            if isinstance(items, dict):
                items = items.get("items")
            if not isinstance(items, list):
                raise bad_request("load: a JSON array or an object with items expected")
            by_kind = {(r.api_version, r.kind): r for r in api.res.values()}
            n = 0
            with api.store.lock:
                for i, o in enumerate(items):
                    r = by_kind.get((o.get("apiVersion"), o.get("kind"))) \
                        if isinstance(o, dict) else None
                    if r is None:
                        raise bad_request("load: item %d: no served kind %s %s" % (
                            i, o.get("apiVersion") if isinstance(o, dict) else None,
                            o.get("kind") if isinstance(o, dict) else None))
                    ns = ((o.get("metadata") or {}).get("namespace") or "default") \
                        if r.namespaced else None
                    try:
                        api.create(r, ns, o)
                    except ApiError as e:
                        e.message = "load: item %d (%d created before it): %s" % (i, n, e.message)
                        raise
                    n += 1
            return self.send_json(200, {"created": n, "resourceVersion": str(api.store.rv)})
        if path == "/fake/state" and self.command == "GET":
            with api.store.lock:
                out = {"resourceVersion": str(api.store.rv), "objects": {}}
                for gr, tab in api.store.objs.items():
                    if tab:
                        out["objects"][gr.lstrip("/")] = [tab[k] for k in sorted(tab)]
            return self.send_json(200, out)
        if path == "/fake/stats" and self.command == "GET":
            with api.stats_lock:
                return self.send_json(200, {"requests": dcopy(api.stats),
                                            "watches_open": len(api.watches)})
        raise ApiError(404, "NotFound", "no such test endpoint: %s %s" % (self.command, path))

    # ------------------------------------------------------------ discovery

    def discovery(self, path):
        api = self.api
        parts = [p for p in path.split("/") if p]
        if path in ("/version", "/version/"):
            return {"major": "1", "minor": "32", "gitVersion": "v1.32.0-fake",
                    "gitCommit": "0" * 40, "gitTreeState": "clean",
                    "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23",
                    "compiler": "gc", "platform": "linux/amd64"}
        if path in ("/healthz", "/readyz", "/livez"):
            return "ok"
        if parts == ["api"]:
            return {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                    "serverAddress": "127.0.0.1"}]}
        groups = {}
        for r in api.res.values():
            if r.group:
                groups.setdefault(r.group, [])
                if r.version not in groups[r.group]:
                    groups[r.group].append(r.version)

        def group_obj(g):
            vs = sorted(groups[g], key=version_rank)
            return {"name": g, "versions": [{"groupVersion": g + "/" + v, "version": v}
                                            for v in vs],
                    "preferredVersion": {"groupVersion": g + "/" + vs[0], "version": vs[0]}}
        if parts == ["apis"]:
            return {"kind": "APIGroupList", "apiVersion": "v1",
                    "groups": [group_obj(g) for g in sorted(groups)]}
        if len(parts) == 2 and parts[0] == "apis" and parts[1] in groups:
            d = group_obj(parts[1])
            d.update({"kind": "APIGroup", "apiVersion": "v1"})
            return d
        gv = None
        if len(parts) == 2 and parts[0] == "api":
            gv = ("", parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            gv = (parts[1], parts[2])
        if gv:
            rs = [r for r in api.res.values() if (r.group, r.version) == gv]
            if not rs:
                return None
            out = []
            for r in sorted(rs, key=lambda r: r.plural):
                e = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                     "kind": r.kind, "verbs": r.verbs}
                if r.short:
                    e["shortNames"] = r.short
                if getattr(r, "categories", None):
                    e["categories"] = r.categories
                out.append(e)
                if r.status:
                    out.append({"name": r.plural + "/status", "singularName": "",
                                "namespaced": r.namespaced, "kind": r.kind,
                                "verbs": ["get", "patch", "update"]})
                if r.gr == "/pods":
                    out.append({"name": "pods/binding", "singularName": "", "namespaced": True,
                                "kind": "Binding", "verbs": ["create"]})
            return {"kind": "APIResourceList", "apiVersion": "v1",
                    "groupVersion": r.api_version, "resources": out}
        return None

    # ------------------------------------------------------------ routing

    def route(self, path, q, body):
        api = self.api
        m = self.command
        pp = parse_path(path)
        if m == "GET":
            d = self.discovery(path)
            if d is not None:
                api.count("discovery", "discovery", 200)
                if isinstance(d, str):
                    data = d.encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                return self.send_json(200, d)
        if pp is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        group, version, rest = pp
        watch = q.get("watch") in ("1", "true", "True")
        if rest and rest[0] == "watch":  # the deprecated /watch/ prefix
            rest, watch = rest[1:], True
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces" and (group, version, rest[2]) in api.res \
                and api.res[(group, version, rest[2])].namespaced:
            ns, rest = rest[1], rest[2:]
        if not rest or (group, version, rest[0]) not in api.res:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        res = api.res[(group, version, rest[0])]
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if len(rest) > 3 or (res.namespaced and name is not None and ns is None):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        what = res.plural + ("/" + sub if sub else "")
        if q.get("dryRun") and m in ("POST", "PUT", "PATCH", "DELETE"):
            raise bad_request("dryRun is not supported by the fake API server (it would write)")
        if sub and not (sub == "status" and res.status) and not (sub == "binding" and res.gr == "/pods"):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if m in ("PUT", "PATCH") or (m == "POST" and sub == "binding"):
            if api.faults.take("conflict", path):
                api.count("conflicted", what, 409)
                raise conflict(res, name or "", "the object has been modified; please apply "
                               "your changes to the latest version and try again")
        if m == "GET" and name is None:
            if watch:
                api.count("watch", what, 200)
                return self.watch(res, ns, q)
            api.count("list", what, 200)
            lst = self.list(res, ns, q)
            if self.wants_table():
                objs = [api.out(res, o) if res.builtin else o for o in lst["items"]]
                if res.builtin:
                    objs = [dict(o, apiVersion=res.api_version, kind=res.kind) for o in objs]
                lst = to_table(res, objs, lst["metadata"], q.get("includeObject", "Metadata"))
            return self.send_json(200, lst)
        if m == "GET":
            api.count("get", what, 200)
            with api.store.lock:
                o = api.out(res, api.get_obj(res, ns, name))
                if self.wants_table():
                    o = to_table(res, [o], {"resourceVersion": o["metadata"]["resourceVersion"]},
                                 q.get("includeObject", "Metadata"))
                return self.send_json(200, o)
        if m == "POST" and name is None:
            api.count("create", what, 201)
            obj = api.create(res, ns, admit(api, res, ns, "CREATE", self.json_body(body)))
            return self.send_json(201, api.out(res, obj))
        if m == "POST" and sub == "binding":
            api.count("bind", what, 201)
            return self.send_json(201, api.bind(ns, name, self.json_body(body)))
        if m == "PUT" and name:
            api.count("update", what, 200)
            return self.send_json(200, api.out(res, api.update(res, ns, name,
                                                                self.json_body(body), sub)))
        if m == "PATCH" and name:
            api.count("patch", what, 200)
            return self.send_json(200, api.out(res, api.patch(
                res, ns, name, self.headers.get("Content-Type"), body, sub)))
        if m == "DELETE" and name and not sub:
            api.count("delete", what, 200)
            opts = self.json_body(body) if body.strip() else {}
            if "gracePeriodSeconds" in q:
                opts["gracePeriodSeconds"] = q["gracePeriodSeconds"]
            obj, gone = api.delete(res, ns, name, opts)
            if res.gr == "/pods" or not gone:
                return self.send_json(200, api.out(res, obj))
            return self.send_json(200, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                        "status": "Success",
                                        "details": {"name": name, "group": res.group,
                                                    "kind": res.plural,
                                                    "uid": obj["metadata"].get("uid")}})
        if m == "DELETE" and name is None and "deletecollection" in res.verbs:
            api.count("deletecollection", what, 200)
            items = self.list(res, ns, {k: v for k, v in q.items()
                                        if k in ("labelSelector", "fieldSelector")})["items"]
            opts = self.json_body(body) if body.strip() else {}
            for it in items:
                try:
                    api.delete(res, it["metadata"].get("namespace"), it["metadata"]["name"], opts)
                except ApiError:
                    pass
            return self.send_json(200, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                        "status": "Success"})
        raise ApiError(405, "MethodNotAllowed",
                       "the server does not allow this method on the requested resource")

    def json_body(self, body):
        try:
            v = json.loads(body or b"null")
        except ValueError as e:
            raise bad_request("couldn't decode the request body as JSON: %s" % e)
        if not isinstance(v, dict):
            raise bad_request("the body of the request must be a JSON object")
        return v

    # ------------------------------------------------------------ list

    def selectors(self, res, q):
        return (parse_label_selector(q.get("labelSelector")),
                parse_field_selector(q.get("fieldSelector"), res))

    def list(self, res, ns, q):
        api = self.api
        st = api.store
        lsel, fsel = self.selectors(res, q)
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise bad_request("limit: not an integer: %r" % q.get("limit"))
        cont = q.get("continue")
        with st.lock:
            if cont:
                try:
                    tok = json.loads(base64.urlsafe_b64decode(cont.encode()))
                    snap = st.snapshots[tok["id"]]
                    start = int(tok["start"])
                except (ValueError, KeyError, TypeError):
                    if st.compacted:
                        raise ApiError(410, "Expired",
                                       "The provided continue parameter is too old to display a "
                                       "consistent list result. You can start a new list without "
                                       "the continue parameter.")
                    raise bad_request("invalid continue token")
                rv, items = snap
            else:
                tab = api.table(res)
                items = [tab[k] for k in sorted(tab)]
                rv = st.rv
                start = 0
            out, i = [], start
            while i < len(items) and (limit <= 0 or len(out) < limit):
                o = items[i]
                i += 1
                if ns and o["metadata"].get("namespace") != ns:
                    continue
                if not labels_match(lsel, o["metadata"].get("labels") or {}):
                    continue
                if fsel and not fields_match(fsel, api.out(res, o)):
                    continue
                out.append(o)
            meta = {"resourceVersion": str(rv)}
            if i < len(items):
                if not cont:
                    sid = uuid.uuid4().hex
                    st.snapshots[sid] = (rv, items)
                    if len(st.snapshots) > 64:
                        st.snapshots.pop(next(iter(st.snapshots)))
                else:
                    sid = tok["id"]
                meta["continue"] = base64.urlsafe_b64encode(
                    json.dumps({"id": sid, "start": i}).encode()).decode()
                meta["remainingItemCount"] = len(items) - i
        out = [api.out(res, o) for o in out]
        if res.builtin:
            out = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in out]
        return {"kind": res.kind + "List", "apiVersion": res.api_version,
                "metadata": meta, "items": out}

    # ------------------------------------------------------------ watch

    def chunk(self, data):
        parts = [data]
        if self.api.faults.split_chunks and len(data) > 2:
            a = random.randint(1, len(data) - 1)
            b = random.randint(a, len(data))
            parts = [p for p in (data[:a], data[a:b], data[b:]) if p]
        for p in parts:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(p), p))
            self.wfile.flush()

    def watch(self, res, ns, q):
        api = self.api
        st = api.store
        lsel, fsel = self.selectors(res, q)
        rv_s = q.get("resourceVersion", "")
        bookmarks = q.get("allowWatchBookmarks") in ("1", "true", "True")
        try:
            timeout = float(q.get("timeoutSeconds") or 0)
        except ValueError:
            raise bad_request("timeoutSeconds: not a number")
        if timeout <= 0:
            timeout = 1800
        deadline = time.monotonic() + timeout

        def sel(o):
            if o is None:
                return False
            if ns and o["metadata"].get("namespace") != ns:
                return False
            return labels_match(lsel, o["metadata"].get("labels") or {}) and \
                (not fsel or fields_match(fsel, api.out(res, o)))

        # watch-list (KEP-3157): the state as ADDED events, then a BOOKMARK
        # annotated k8s.io/initial-events-end, then changes
        initial_end = q.get("sendInitialEvents") in ("true", "1", "True")
        if initial_end and (q.get("resourceVersionMatch") != "NotOlderThan" or not bookmarks):
            raise ApiError(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: "
                           "sendInitialEvents: Forbidden: sendInitialEvents is allowed only with "
                           "resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true")
        if "sendInitialEvents" in q and not initial_end and rv_s in ("", "0"):
            rv_s = str(api.store.rv)  # sendInitialEvents=false: changes only
        w = Watch()
        if self.wants_table():
            w.table, w.include = res, q.get("includeObject", "Metadata")
        initial = []
        with st.lock:
            if initial_end:
                try:
                    floor = int(rv_s or 0)
                except ValueError:
                    raise bad_request("resourceVersion: invalid value %r" % rv_s)
                if floor > st.rv:
                    raise ApiError(504, "Timeout", "Too large resource version: %d, current: %d"
                                   % (floor, st.rv))
                rv_s = ""
            if rv_s in ("", "0"):
                pos = st.rv
                tab = api.table(res)
                initial = [tab[k] for k in sorted(tab) if sel(tab[k])]
            else:
                try:
                    pos = int(rv_s)
                except ValueError:
                    raise bad_request("resourceVersion: invalid value %r" % rv_s)
                if pos + 1 < st.oldest_available():
                    raise ApiError(410, "Expired", "too old resource version: %d (%d)"
                                   % (pos, st.oldest_available() - 1))
            epoch = st.epoch
            if api.faults.drop_pending is not None:
                w.drop_after, api.faults.drop_pending = api.faults.drop_pending, None
            api.watches.add(w)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            if api.faults.take("endless_line", self.path.split("?")[0]):
                # one line that never ends (up to 1 GiB or the deadline):
                # the client must give up on it
                piece, sent = b"x" * (1 << 20), 0
                while sent < (1 << 30) and time.monotonic() < deadline:
                    self.chunk(piece)
                    sent += len(piece)
                self.close_connection = True
                return
            for o in initial:
                if not self.emit(w, "ADDED", api.out(res, o)):
                    return
            if initial_end:
                self.chunk(json.dumps({"type": "BOOKMARK", "object": {
                    "kind": res.kind, "apiVersion": res.api_version,
                    "metadata": {"resourceVersion": str(pos), "annotations": {
                        "k8s.io/initial-events-end": "true"}}}}).encode() + b"\n")
            last_bm = time.monotonic()
            while True:
                evs, err, bm = [], None, False
                with st.lock:
                    while True:
                        now = time.monotonic()
                        if st.epoch != epoch or pos + 1 < st.oldest_available():
                            err = True
                            break
                        if now >= deadline:
                            break
                        if st.rv > pos:
                            evs = st.events_after(pos)
                            pos = st.rv
                            break
                        if bookmarks and now - last_bm >= api.args.bookmark_seconds:
                            bm = True
                            break
                        wait = deadline - now
                        if bookmarks:
                            wait = min(wait, api.args.bookmark_seconds - (now - last_bm))
                        st.cond.wait(max(0.01, min(wait, 1.0)))
                if err:
                    e = ApiError(410, "Expired", "The resourceVersion for the provided watch "
                                 "is too old.")
                    self.chunk(json.dumps({"type": "ERROR", "object": e.status()}).encode() + b"\n")
                    break
                if bm:
                    last_bm = time.monotonic()
                    self.chunk(json.dumps({"type": "BOOKMARK", "object": {
                        "kind": res.kind, "apiVersion": res.api_version,
                        "metadata": {"resourceVersion": str(pos)}}}).encode() + b"\n")
                    continue
                if not evs and time.monotonic() >= deadline:
                    break
                for (erv, gr, typ, obj, old) in evs:
                    if gr != res.gr:
                        continue
                    now_in = typ != "DELETED" and sel(obj)
                    was_in = sel(old) if typ != "ADDED" else False
                    if typ == "DELETED":
                        now_in, was_in = False, sel(old)
                        out = obj
                    if now_in and was_in:
                        t, out = "MODIFIED", obj
                    elif now_in:
                        t, out = "ADDED", obj
                    elif was_in:
                        t = "DELETED"
                        out = dict(old)
                        out["metadata"] = dict(old["metadata"])
                        out["metadata"]["resourceVersion"] = str(erv)
                    else:
                        continue
                    if not self.emit(w, t, api.out(res, out)):
                        return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
        except Exception:  # a bug in the fake mid-stream: end the connection
            import traceback
            traceback.print_exc()
            self.drop()
        finally:
            with st.lock:
                api.watches.discard(w)

    def wants_table(self):
        return "as=Table" in self.headers.get("Accept", "")

    def emit(self, w, typ, obj):
        """One event; False when the stream was dropped by the fault."""
        if w.table is not None:
            obj = to_table(w.table, [obj], {"resourceVersion": obj["metadata"]["resourceVersion"]},
                           w.include)
        if w.drop_after is not None:
            if w.drop_after <= 0:
                self.drop()
                return False
            w.drop_after -= 1
        self.chunk(json.dumps({"type": typ, "object": obj},
                              separators=(",", ":")).encode() + b"\n")
        if w.drop_after == 0:
            self.drop()
            return False
        return True

    def drop(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def version_rank(v):
    """Kubernetes version priority: GA > beta > alpha, higher numbers first."""
    m = re.match(r"^v(\d+)(?:(alpha|beta)(\d+))?$", v)
    if not m:
        return (3, v)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0))


# ---------------------------------------------------------------- TLS

def ensure_tls(d):
    """D/ca.crt, D/server.crt, D/server.key (and a client pair) made with the
    openssl command when missing; CN and SANs 127.0.0.1 and localhost."""
    os.makedirs(d, exist_ok=True)
    p = lambda n: os.path.join(d, n)
    if all(os.path.exists(p(n)) for n in ("ca.crt", "server.crt", "server.key")):
        return
    def run(*a):
        subprocess.run(["openssl"] + list(a), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("req", "-x509", *ec, "-keyout", p("ca.key"), "-out", p("ca.crt"), "-days", "3650",
        "-subj", "/CN=carve-fakeapi-ca", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for who, subj, ext in (
            ("server", "/CN=127.0.0.1",
             "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
             "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"),
            ("client", "/O=system:masters/CN=carve-test",
             "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n"
             "keyUsage=critical,digitalSignature,keyEncipherment\n")):
        with open(p(who + ".ext"), "w") as f:
            f.write(ext)
        run("req", *ec, "-keyout", p(who + ".key"), "-out", p(who + ".csr"), "-subj", subj)
        run("x509", "-req", "-in", p(who + ".csr"), "-CA", p("ca.crt"), "-CAkey", p("ca.key"),
            "-CAcreateserial", "-out", p(who + ".crt"), "-days", "3650",
            "-extfile", p(who + ".ext"))
        os.unlink(p(who + ".csr"))
        os.unlink(p(who + ".ext"))


# ---------------------------------------------------------------- main

class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        if self.verbose:
            super().handle_error(request, client_address)


# ---------------------------------------------------------------- admission webhooks
# Registered Mutating/ValidatingWebhookConfigurations called on create, as
# kube-apiserver's admission chain does (kubernetes.io, "Dynamic Admission
# Control"): every mutating webhook whose rules, namespaceSelector and
# objectSelector match, in configuration-name order, its JSON Patch applied;
# then every validating one.  A denial is the webhook's status code with
# 'admission webhook "NAME" denied the request: MESSAGE'; warnings become
# Warning headers; a webhook that cannot be called fails the request
# (failurePolicy Fail, the default) or is skipped (Ignore).  clientConfig.url,
# or clientConfig.service reached at the address --webhook-service gives it,
# verified with caBundle for NAME.NS.svc.  Called before the store lock.

def _selector_match(sel, labels):
    if not sel:
        return True
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        k, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


def _rule_match(rule, res, op):
    def has(lst, v):
        return "*" in (lst or []) or v in (lst or [])
    scope = rule.get("scope", "*")
    return (has(rule.get("operations"), op) and has(rule.get("apiGroups"), res.group) and
            has(rule.get("apiVersions"), res.version) and has(rule.get("resources"), res.plural) and
            (scope == "*" or (scope == "Namespaced") == res.namespaced))


def _call_webhook(api, wh, review):
    cc = wh.get("clientConfig") or {}
    timeout = wh.get("timeoutSeconds", 10)
    if cc.get("url"):
        u = urlsplit(cc["url"])
        host, port, path, sni = u.hostname, u.port or 443, u.path or "/", u.hostname
    else:
        svc = cc.get("service") or {}
        key = "%s/%s" % (svc.get("namespace"), svc.get("name"))
        addr = dict(a.split("=", 1) for a in api.args.webhook_service).get(key)
        if not addr:
            raise OSError("service %s: no endpoints (see --webhook-service)" % key)
        host, port = addr.rsplit(":", 1)
        port, path = int(port), svc.get("path") or "/"
        sni = "%s.%s.svc" % (svc.get("name"), svc.get("namespace"))
    ca = cc.get("caBundle")
    ctx = ssl.create_default_context(cadata=base64.b64decode(ca).decode() if ca else None)
    if not ca:
        ctx.load_default_certs()
    raw = socket.create_connection((host, port), timeout=timeout)
    conn = ctx.wrap_socket(raw, server_hostname=sni)
    try:
        body = json.dumps(review).encode()
        conn.sendall(("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                      "Content-Length: %d\r\nConnection: close\r\n\r\n" % (path, sni, len(body))
                      ).encode() + body)
        data = b""
        while True:
            more = conn.recv(65536)
            if not more:
                break
            data += more
    finally:
        conn.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    if status != 200:
        raise OSError("the server responded with status %d: %s" % (status, rest[:200].decode(errors="replace")))
    resp = json.loads(rest).get("response") or {}
    if resp.get("uid") != review["request"]["uid"]:
        raise OSError("expected response.uid %r, got %r" % (review["request"]["uid"], resp.get("uid")))
    return resp


def admit(api, res, ns, op, obj):
    """obj after the admission webhooks (a new copy when mutated)."""
    cfgs = []
    with api.store.lock:
        for plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            r = api.res[("admissionregistration.k8s.io", "v1", plural)]
            cfgs.append(sorted(api.table(r).values(), key=lambda c: c["metadata"]["name"]))
        nsobj = api.table(api.res[("", "v1", "namespaces")]).get(("", ns or obj.get(
            "metadata", {}).get("namespace") or "")) if res.namespaced else None
    if not any(cfgs):
        return obj
    ns_labels = dict((nsobj or {}).get("metadata", {}).get("labels") or {})
    if nsobj:
        ns_labels["kubernetes.io/metadata.name"] = nsobj["metadata"]["name"]
    md = obj.get("metadata") or {}
    for mutating, configs in ((True, cfgs[0]), (False, cfgs[1])):
        for cfg in configs:
            for wh in cfg.get("webhooks") or []:
                if not any(_rule_match(r, res, op) for r in wh.get("rules") or []):
                    continue
                if res.namespaced and not _selector_match(wh.get("namespaceSelector"), ns_labels):
                    continue
                if not _selector_match(wh.get("objectSelector"), md.get("labels") or {}):
                    continue
                gvk = {"group": res.group, "version": res.version, "kind": res.kind}
                gvr = {"group": res.group, "version": res.version, "resource": res.plural}
                review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                          "request": {"uid": str(uuid.uuid4()), "kind": gvk, "resource": gvr,
                                      "requestKind": gvk, "requestResource": gvr,
                                      "name": md.get("name", ""), "namespace": ns or md.get("namespace"),
                                      "operation": op,
                                      "userInfo": {"username": "fake-admin",
                                                   "groups": ["system:masters", "system:authenticated"]},
                                      "object": obj, "oldObject": None, "dryRun": False,
                                      "options": {"apiVersion": "meta.k8s.io/v1",
                                                  "kind": "CreateOptions"}}}
                try:
                    resp = _call_webhook(api, wh, review)
                except (OSError, ValueError, ssl.SSLError) as e:
                    if wh.get("failurePolicy", "Fail") == "Ignore":
                        continue
                    raise ApiError(500, "InternalError", 'Internal error occurred: failed calling '
                                   'webhook "%s": %s' % (wh.get("name"), e))
                REQ.warnings.extend(resp.get("warnings") or [])
                if not resp.get("allowed"):
                    st = resp.get("status") or {}
                    code = st.get("code") or 400
                    reason = {400: "BadRequest", 403: "Forbidden", 422: "Invalid"}.get(code, "BadRequest")
                    raise ApiError(code, reason, 'admission webhook "%s" denied the request: %s'
                                   % (wh.get("name"), st.get("message", "")))
                if mutating and resp.get("patch"):
                    if resp.get("patchType") != "JSONPatch":
                        raise ApiError(500, "InternalError", 'webhook "%s": patchType %r'
                                       % (wh.get("name"), resp.get("patchType")))
                    obj = json_patch(obj, json.loads(base64.b64decode(resp["patch"])))
                    md = obj.get("metadata") or {}
    return obj


def main():
    ap = argparse.ArgumentParser(description="carve's fake Kubernetes API server (tests only)")
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tls-dir")
    ap.add_argument("--token")
    ap.add_argument("--history", type=int, default=10000)
    ap.add_argument("--bookmark-seconds", type=float, default=1.0)
    ap.add_argument("--max-seconds", type=float, default=600)
    ap.add_argument("--controllers", default="", help="comma-separated: job")
    ap.add_argument("--run-bound", action="store_true",
                    help="a bound pod's phase becomes Running at once")
    ap.add_argument("--pod-grace", type=float, metavar="S",
                    help="bound pods deleted with a grace period stay, marked, for "
                    "min(grace, S) seconds (default: every pod goes at once)")
    ap.add_argument("--no-prune", action="store_true",
                    help="keep fields a CRD's schema does not declare")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--webhook-service", action="append", default=[], metavar="NS/NAME=HOST:PORT",
                    help="where a webhook's clientConfig.service is reached (admission)")
    args = ap.parse_args()
    args.controllers = [c for c in args.controllers.split(",") if c]
    for c in args.controllers:
        if c != "job":
            ap.error("--controllers: unknown controller %r (known: job)" % c)
    if args.history < 1:
        ap.error("--history must be at least 1")
    if args.bookmark_seconds <= 0:
        ap.error("--bookmark-seconds must be positive")

    Handler.api = Api(args)
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.verbose = args.verbose
    if args.tls_dir:
        ensure_tls(args.tls_dir)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(args.tls_dir, "server.crt"),
                            os.path.join(args.tls_dir, "server.key"))
        ctx.load_verify_locations(os.path.join(args.tls_dir, "ca.crt"))
        ctx.verify_mode = ssl.CERT_OPTIONAL
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True,
                                     do_handshake_on_connect=False)

    def stop(*_):
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    parent = os.getppid()
    t0 = time.monotonic()

    def guard():
        while True:
            time.sleep(0.2)
            if os.getppid() != parent:
                os._exit(0)
            if time.monotonic() - t0 > args.max_seconds:
                sys.stderr.write("fakeapi: --max-seconds %g reached, exiting\n" % args.max_seconds)
                os._exit(0)
    threading.Thread(target=guard, daemon=True).start()

    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.replace(tmp, args.port_file)
    srv.serve_forever(poll_interval=0.2)


if __name__ == "__main__":
    main()
