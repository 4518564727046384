#!/usr/bin/env bash
# carve webhook called by the fake API server (tests/kube/fakeapi.py calls
# the registered admission webhooks on create): the shipped webhook
# configurations (deploy/overlays/webhook) applied with kubectl,
# scripts/webhook-certs.sh run against the fake (Secret, both caBundles),
# carve webhook serving that certificate; `kubectl apply` of a pod that
# breaks a rule is refused with exactly the message `carve webhook review`
# gives offline for it, a good pod is stored with exactly the patch the
# offline /mutate review returns applied; kube-system is never sent to the
# webhook; with the webhook down, failurePolicy Fail refuses creates.  A
# second webhook watching the fake becomes ready once its context is built.
# Usage: e2e_webhook.sh CARVE_BINARY SOURCE_DIR.  Exit 77 without kubectl.
set -u
CARVE=$1
cd "$2" || exit 1
command -v kubectl >/dev/null 2>&1 || { echo "SKIP: no kubectl"; exit 77; }
. tests/kube/kubeenv.sh
. tests/kube/e2e_env.sh
tmp=$(mktemp -d)
WH_PID=
WH2_PID=
trap '[ -n "$WH_PID" ] && kill "$WH_PID" 2>/dev/null; [ -n "$WH2_PID" ] && kill "$WH2_PID" 2>/dev/null; fake_stop; [ -n "${KEEP_TMP:-}" ] && echo "kept $tmp" >&2 || rm -rf "$tmp"' EXIT
py=/usr/bin/python3
port=$($py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fake_start --max-seconds 170 --webhook-service "carve-system/carve-webhook=127.0.0.1:$port" || exit 1

# The shipped configurations, and the namespaces they name.
kubectl kustomize deploy/overlays/webhook >"$tmp/all.yaml"
$py - "$tmp/all.yaml" >"$tmp/hooks.yaml" <<'PY'
import sys
docs = open(sys.argv[1]).read().split("\n---\n")
print("\n---\n".join(d for d in docs if "kind: ValidatingWebhookConfiguration" in d
                     or "kind: MutatingWebhookConfiguration" in d or "\nkind: Namespace" in d
                     or d.startswith("kind: Namespace") or "kind: Namespace\n" in d))
PY
kc apply --validate=false -f "$tmp/hooks.yaml" >/dev/null
check "webhook configurations applied" $?
kc create namespace team-a >/dev/null
check "namespace team-a" $?

scripts/webhook-certs.sh --out "$tmp/certs" >"$tmp/certs.log" 2>&1
check "webhook-certs.sh against the API server" $?
kc get validatingwebhookconfiguration carve-webhook -o jsonpath='{.webhooks[*].clientConfig.caBundle}' |
	grep -q "$(base64 -w0 <"$tmp/certs/ca.crt" | cut -c1-40)"
check "caBundle patched into the validating configuration" $?
n=$(kc get mutatingwebhookconfiguration carve-webhook -o jsonpath='{range .webhooks[*]}{.clientConfig.caBundle}{"\n"}{end}' | grep -c .)
check "caBundle patched into the mutating configuration ($n)" $((n == 1 ? 0 : 1))
kc -n carve-system get secret carve-webhook-tls >/dev/null
check "Secret carve-webhook-tls written" $?

# With the webhook down: failurePolicy Fail.
pod_yaml() { # name, with a GPU model selector (1) or not (0)
	cat <<P
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: team-a
  labels:
    app: e2e
    kueue.x-k8s.io/queue-name: team-a
spec:
  schedulerName: carve
P
	[ "$2" = 1 ] && printf '  nodeSelector:\n    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n'
	cat <<P
  containers:
  - name: main
    image: registry.example/app:1
    resources:
      requests: {"nvidia.com/gpu": "1", "cpu": "1"}
      limits: {"nvidia.com/gpu": "1", "cpu": "1"}
P
}
pod_yaml down 1 >"$tmp/down.yaml"
out=$(kc apply --validate=false -f "$tmp/down.yaml" 2>&1)
rc=$?
[ "$rc" -ne 0 ] && grep -q 'failed calling webhook' <<<"$out"
ck=$?; check "webhook down: create refused (failurePolicy Fail): $(head -c 160 <<<"$out")" $ck
kc -n kube-system apply --validate=false -f <(sed 's/namespace: team-a/namespace: kube-system/' "$tmp/down.yaml") >/dev/null 2>&1
check "webhook down: kube-system not sent to the webhook" $?

"$CARVE" webhook --listen "127.0.0.1:$port" --cert "$tmp/certs/tls.crt" --key "$tmp/certs/tls.key" \
	--no-cluster --max-seconds 150 -v 2>"$tmp/wh.log" &
WH_PID=$!
for _ in $(seq 100); do grep -q 'serving HTTPS' "$tmp/wh.log" && break; sleep 0.05; done

# An AdmissionReview of a pod file as the fake sends it, for the offline review.
review_of() { # pod yaml file -> review JSON
	kubectl annotate --local -f "$1" -o json carve.dev/x=1 | $py -c '
import json, sys
o = json.load(sys.stdin)
o["metadata"]["annotations"].pop("carve.dev/x")
if not o["metadata"]["annotations"]:
    del o["metadata"]["annotations"]
g = {"group": "", "version": "v1", "kind": "Pod"}
r = {"group": "", "version": "v1", "resource": "pods"}
print(json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
    "uid": "offline", "kind": g, "resource": r, "requestKind": g, "requestResource": r,
    "name": o["metadata"]["name"], "namespace": "team-a", "operation": "CREATE",
    "userInfo": {"username": "fake-admin"}, "object": o, "oldObject": None, "dryRun": False}}))'
}

# A pod breaking a rule (no GPU model selector): refused with the offline
# review's message, or, where the policy only warns, stored with its warning.
pod_yaml bad 0 >"$tmp/bad.yaml"
review_of "$tmp/bad.yaml" >"$tmp/bad.json"
"$CARVE" webhook review "$tmp/bad.json" >"$tmp/bad.out" 2>/dev/null
denied=$?
{ read -r msg; read -r warn; } < <($py -c '
import json, sys
r = json.load(open(sys.argv[1]))["response"]
m = ((r.get("status") or {}).get("message") or "").splitlines()
w = (r.get("warnings") or [""])[0].splitlines()
print(m[0] if m else "")
print(w[0] if w else "")' "$tmp/bad.out")
check "offline review denies or warns about the bad pod" $([ "$denied" -eq 1 ] || [ -n "$warn" ]; echo $?)
out=$(kc apply --validate=false -f "$tmp/bad.yaml" 2>&1)
rc=$?
if [ "$denied" -eq 1 ]; then
	[ "$rc" -ne 0 ] && [ -n "$msg" ] &&
		grep -qF 'admission webhook "workloads.validate.carve.dev" denied the request:' <<<"$out" &&
		grep -qF -- "$msg" <<<"$out"
	ck=$?; check "bad pod refused with carve's message: $(head -c 200 <<<"$out")" $ck
	kc -n team-a get pod bad >/dev/null 2>&1
	check "bad pod not stored" $((1 - $?))
else
	[ "$rc" -eq 0 ] && grep -qF -- "Warning: $warn" <<<"$out"
	ck=$?; check "bad pod stored with carve's warning: $(head -c 200 <<<"$out")" $ck
fi

# A good pod: stored with the offline /mutate patch applied.
pod_yaml good 1 >"$tmp/good.yaml"
review_of "$tmp/good.yaml" >"$tmp/good.json"
"$CARVE" webhook review --mutate "$tmp/good.json" >"$tmp/good.out" 2>/dev/null
check "offline review allows the good pod" $?
kc apply --validate=false -f "$tmp/good.yaml" >"$tmp/apply.out" 2>&1
ck=$?; check "good pod created: $(head -c 200 "$tmp/apply.out")" $ck
kc -n team-a get pod good -o json >"$tmp/stored.json"
$py - "$tmp/good.json" "$tmp/good.out" "$tmp/stored.json" <<'PY'
import base64, json, sys
sys.path.insert(0, "tests/kube")
from fakeapi import json_patch
review = json.load(open(sys.argv[1]))
resp = json.load(open(sys.argv[2]))["response"]
stored = json.load(open(sys.argv[3]))
want = review["request"]["object"]
if resp.get("patch"):
    want = json_patch(want, json.loads(base64.b64decode(resp["patch"])))
bad = []
for part in ("spec",):
    for k, v in want.get(part, {}).items():
        if stored.get(part, {}).get(k) != v and k not in ("containers",):
            bad.append("%s.%s: stored %r, want %r" % (part, k, stored[part].get(k), v))
    for i, c in enumerate(want["spec"]["containers"]):
        if stored["spec"]["containers"][i].get("resources") != c.get("resources"):
            bad.append("containers[%d].resources" % i)
for k, v in (want["metadata"].get("labels") or {}).items():
    if (stored["metadata"].get("labels") or {}).get(k) != v:
        bad.append("label %s" % k)
for k, v in (want["metadata"].get("annotations") or {}).items():
    if (stored["metadata"].get("annotations") or {}).get(k) != v:
        bad.append("annotation %s" % k)
print("patch ops: %d; %s" % (len(json.loads(base64.b64decode(resp["patch"]))) if resp.get("patch") else 0,
                            bad or "stored pod carries the patch"))
sys.exit(1 if bad else 0)
PY
check "good pod stored with the webhook's patch" $?
grep -q '/validate 200' "$tmp/wh.log" && grep -q '/mutate 200' "$tmp/wh.log"
check "the webhook logged both reviews" $?

# A webhook with the cluster context from the fake: ready once built.
"$CARVE" webhook --listen 127.0.0.1:0 --insecure-http --kubeconfig "$KUBECONFIG" \
	--debounce-ms 50 --max-seconds 60 2>"$tmp/wh2.log" &
WH2_PID=$!
ready=1
for _ in $(seq 150); do
	p2=$(sed -n 's/.*serving plain HTTP on port \([0-9]*\).*/\1/p' "$tmp/wh2.log")
	if [ -n "$p2" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$p2/readyz")" = 200 ]; then
		ready=0
		break
	fi
	sleep 0.1
done
check "webhook with a cluster context: /readyz 200 once its reflectors listed" $ready
kill "$WH2_PID" 2>/dev/null
wait "$WH2_PID"
check "context webhook stopped with status 0" $?
WH2_PID=
kill "$WH_PID" 2>/dev/null
wait "$WH_PID"
check "webhook stopped with status 0" $?
WH_PID=
finish
