#!/usr/bin/env bash
# The webhook's manifests and certificate script (docs/webhook.md,
# "Deploying"): deploy/overlays/webhook and webhook-cert-manager render
# offline with kubectl and pass tests/kube/webhook_deploy_check.py;
# tampered renderings are refused; the base still renders without the
# webhook; scripts/webhook-certs.sh --no-apply makes a CA and a serving
# certificate for the Service's names, which carve webhook then serves and
# a client verifies under that CA for carve-webhook.carve-system.svc.
# Usage: webhook_deploy.sh SOURCE_DIR CARVE_BINARY.  Exit 77 without kubectl.
set -u
src=$1
carve=$2
cd "$src" || exit 1
py=/usr/bin/python3
if ! command -v kubectl >/dev/null 2>&1; then
	echo "SKIP: no kubectl on this machine"
	exit 77
fi
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
export KUBECONFIG=/dev/null
fail=0
pass=0
check() { # name, status
	if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else echo "FAIL: $1"; fail=$((fail + 1)); fi
}
tojson() { kubectl annotate --local -f "$1" -o json carve.dev/rendered=1; }

for o in webhook webhook-cert-manager; do
	kubectl kustomize "deploy/overlays/$o" >"$tmp/$o.yaml"
	check "kubectl kustomize deploy/overlays/$o" $?
	tojson "$tmp/$o.yaml" >"$tmp/$o.json"
	check "$o to JSON" $?
done
out=$("$py" tests/kube/webhook_deploy_check.py script <"$tmp/webhook.json")
rc=$?; [ -z "$out" ] || echo "$out"; check "overlays/webhook passes" $rc
out=$("$py" tests/kube/webhook_deploy_check.py cert-manager <"$tmp/webhook-cert-manager.json")
rc=$?; [ -z "$out" ] || echo "$out"; check "overlays/webhook-cert-manager passes" $rc
kubectl kustomize deploy | grep -q 'kind: ValidatingWebhookConfiguration'
check "the base has no webhook" $((1 - $?))

refuse() { # name, mode, expected message, sed expression on the script overlay
	local out rc
	sed "$4" "$tmp/webhook.yaml" >"$tmp/t.yaml" && tojson "$tmp/t.yaml" >"$tmp/t.json"
	out=$("$py" tests/kube/webhook_deploy_check.py "$2" <"$tmp/t.json")
	rc=$?
	if [ "$rc" -eq 1 ] && grep -qF -- "$3" <<<"$out"; then
		check "$1 refused" 0
	else
		echo "$out"
		check "$1 refused (rc $rc, want '$3')" 1
	fi
}
refuse "no failurePolicy" script "failurePolicy not set" '0,/failurePolicy: Fail/{/failurePolicy: Fail/d}'
refuse "kube-system not excluded" script "does not exclude kube-system" '0,/- kube-system/s//- other/'
refuse "side effects" script "sideEffects" '0,/sideEffects: None/s//sideEffects: Some/'
refuse "no pod rule" script "no rule for pods" 's/- pods$/- podtemplates/'
refuse "a write verb" script "beyond get/list/watch" '/^  name: carve-webhook$/,/^---/s/- watch$/- patch/'
refuse "the script overlay as cert-manager's" cert-manager "inject-ca-from" 's/^x//'

# The certificate script, offline, and the certificate it makes served.
scripts/webhook-certs.sh --no-apply --out "$tmp/certs" 2>/dev/null
check "webhook-certs.sh --no-apply" $?
openssl verify -CAfile "$tmp/certs/ca.crt" "$tmp/certs/tls.crt" >/dev/null 2>&1
check "serving certificate verifies under the CA" $?
openssl x509 -in "$tmp/certs/tls.crt" -noout -ext subjectAltName 2>/dev/null |
	grep -q 'DNS:carve-webhook.carve-system.svc,'
check "serving certificate names carve-webhook.carve-system.svc" $?
scripts/webhook-certs.sh --no-apply >/dev/null 2>&1
check "--no-apply without --out is a usage error" $(($? == 2 ? 0 : 1))
"$carve" webhook --listen 127.0.0.1:0 --cert "$tmp/certs/tls.crt" --key "$tmp/certs/tls.key" \
	--no-cluster --max-seconds 60 2>"$tmp/log" &
pid=$!
port=
for _ in $(seq 100); do
	port=$(sed -n 's/.*serving HTTPS on port \([0-9]*\).*/\1/p' "$tmp/log")
	[ -n "$port" ] && break
	sleep 0.05
done
"$py" - "$port" "$tmp/certs/ca.crt" <<'PY'
import http.client, socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[2])
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5),
                    server_hostname="carve-webhook.carve-system.svc")
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: carve-webhook.carve-system.svc\r\nConnection: close\r\n\r\n")
data = s.recv(1000)
sys.exit(0 if data.startswith(b"HTTP/1.1 200") else 1)
PY
check "carve webhook serves the script's certificate for the Service name" $?
kill "$pid" 2>/dev/null
wait "$pid"
check "carve webhook stopped on SIGTERM with status 0" $?
pid=

echo "webhook deploy: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
