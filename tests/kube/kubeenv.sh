# kubeenv.sh: sourced by carve's Kubernetes shell tests to run the fake API
# server (tests/kube/fakeapi.py) for the length of one test.
#
#   . tests/kube/kubeenv.sh
#   fake_start [fakeapi.py args: --tls-dir D --token T --history N ...]
#   kubectl get nodes            # KUBECONFIG points at the fake
#   fake_fault '{"throttle": 2}' # POST /fake/faults
#   fake_get /fake/state         # GET a path, body on stdout
#   fake_req PATCH /api/v1/nodes/n1 '{"spec":{}}' application/merge-patch+json
#   fake_stop
#
# fake_start exports FAKE_PORT, FAKE_URL, FAKE_PID, FAKE_TOKEN, FAKE_CA,
# FAKE_DIR (a temporary directory removed by fake_stop; the server's stderr
# is FAKE_DIR/stderr) and KUBECONFIG (FAKE_DIR/kubeconfig: the server, the
# test CA or plain http, the bearer token when --token is given, else the
# test client certificate over TLS).  The server listens on 127.0.0.1 only
# and exits by itself when this shell dies or after --max-seconds (default
# 600).  Returns non-zero with a message on stderr when the server does not
# come up within 15 s.

FAKE_PY=${FAKE_PY:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/fakeapi.py}

fake_start() {
	local tls="" token="" a prev=""
	for a in "$@"; do
		case $prev in
		--tls-dir) tls=$a ;;
		--token) token=$a ;;
		esac
		case $a in
		--tls-dir=*) tls=${a#--tls-dir=} ;;
		--token=*) token=${a#--token=} ;;
		esac
		prev=$a
	done
	FAKE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/carve-fake.XXXXXX") || return 1
	/usr/bin/python3 "$FAKE_PY" --port-file "$FAKE_DIR/port" "$@" \
		2>"$FAKE_DIR/stderr" &
	FAKE_PID=$!
	local i
	for i in $(seq 1 150); do
		[ -s "$FAKE_DIR/port" ] && break
		if ! kill -0 "$FAKE_PID" 2>/dev/null; then
			echo "fake_start: fakeapi.py exited:" >&2
			cat "$FAKE_DIR/stderr" >&2
			return 1
		fi
		sleep 0.1
	done
	if [ ! -s "$FAKE_DIR/port" ]; then
		echo "fake_start: fakeapi.py did not write its port within 15 s" >&2
		fake_stop
		return 1
	fi
	FAKE_PORT=$(cat "$FAKE_DIR/port")
	local scheme=http cluster user
	[ -n "$tls" ] && scheme=https
	FAKE_URL=$scheme://127.0.0.1:$FAKE_PORT
	if [ -n "$tls" ]; then
		tls=$(cd "$tls" && pwd)
		FAKE_CA=$tls/ca.crt
		cluster="    certificate-authority: $tls/ca.crt"
	else
		FAKE_CA=
		cluster="    insecure-skip-tls-verify: false"
	fi
	if [ -n "$token" ]; then
		user="    token: $token"
	elif [ -n "$tls" ]; then
		user="    client-certificate: $tls/client.crt
    client-key: $tls/client.key"
	else
		user="    {}"
	fi
	cat >"$FAKE_DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: $FAKE_URL
$cluster
users:
- name: fake
  user:
$user
contexts:
- name: fake
  context:
    cluster: fake
    user: fake
    namespace: default
current-context: fake
EOF
	KUBECONFIG=$FAKE_DIR/kubeconfig
	FAKE_TOKEN=$token
	export FAKE_PORT FAKE_URL FAKE_PID FAKE_DIR FAKE_CA FAKE_TOKEN KUBECONFIG
}

fake_stop() {
	if [ -n "${FAKE_PID:-}" ]; then
		kill "$FAKE_PID" 2>/dev/null
		wait "$FAKE_PID" 2>/dev/null
	fi
	[ -n "${FAKE_DIR:-}" ] && rm -rf "$FAKE_DIR"
	FAKE_PID= FAKE_DIR=
}

# fake_req METHOD PATH [BODY [CONTENT-TYPE]]: one request to the fake (with
# the token when there is one); the body on stdout, non-zero unless 2xx.
fake_req() {
	/usr/bin/python3 - "$FAKE_URL" "${FAKE_CA:-}" "${FAKE_TOKEN:-}" "$@" <<'PYEOF'
import ssl, sys, urllib.request, urllib.error
url, ca, token, method, path = sys.argv[1:6]
body = sys.argv[6].encode() if len(sys.argv) > 6 else None
ctype = sys.argv[7] if len(sys.argv) > 7 else "application/json"
ctx = ssl.create_default_context(cafile=ca) if ca else None
hdrs = {"Content-Type": ctype}
if token:
    hdrs["Authorization"] = "Bearer " + token
req = urllib.request.Request(url + path, data=body, method=method, headers=hdrs)
try:
    with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
        sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    sys.stdout.write(e.read().decode())
    sys.exit(1)
PYEOF
}

fake_fault() { fake_req POST /fake/faults "$1"; }
fake_get() { fake_req GET "$1"; }
