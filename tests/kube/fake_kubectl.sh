#!/usr/bin/env bash
# fake_kubectl.sh: holds the fake API server (tests/kube/fakeapi.py) to the
# kubectl on this machine: version, create -f, apply -f twice (the second a
# patch), get -o json, get -w seeing a later change, delete, a CRD then an
# object of its kind (and its /status), the Job controller, errors kubectl
# prints; over plain HTTP, then over TLS with a bearer token (and a wrong
# one).  Usage: fake_kubectl.sh SOURCE_DIR.  Exit 0 ok, 1 failure, 77 skip
# (no kubectl).
set -u
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! command -v kubectl >/dev/null 2>&1; then
	echo "SKIP: kubectl is not installed"
	exit 77
fi
. "$src/tests/kube/kubeenv.sh"
tmp=$(mktemp -d) || exit 1
trap 'fake_stop; rm -rf "$tmp"' EXIT
fail=0
pass=0
check() { # name, condition result (0 = pass)
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
	else
		echo "FAIL: $1"
		fail=$((fail + 1))
	fi
}
k() { kubectl --request-timeout=10s "$@"; }
# jget FILE EXPR: a value from a JSON file (python3 expression over `o`)
jget() { /usr/bin/python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

kubectl version --client >"$tmp/version" 2>&1
check "kubectl version --client" $?

cat >"$tmp/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  schedulerName: carve
  containers:
  - name: c
    image: busybox
    env: [{name: A, value: "1"}, {name: B, value: "2"}]
EOF
cat >"$tmp/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.carve.dev
spec:
  group: example.carve.dev
  scope: Cluster
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wdg]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
EOF
cat >"$tmp/widget.yaml" <<'EOF'
apiVersion: example.carve.dev/v1
kind: Widget
metadata:
  name: w1
spec:
  size: 3
EOF
cat >"$tmp/job.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  parallelism: 3
  completions: 3
  completionMode: Indexed
  template:
    metadata:
      labels: {kueue.x-k8s.io/queue-name: team-a}
    spec:
      schedulerName: carve
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        resources: {limits: {nvidia.com/gpu: "1"}}
EOF

# suite NAME: the kubectl checks against the fake KUBECONFIG points at
suite() {
	local n=$1
	k version >"$tmp/sv" 2>&1 && grep -q "Server Version: v1.32" "$tmp/sv"
	check "$n: kubectl version reaches the server" $?
	k get ns -o name >"$tmp/ns" 2>&1 && grep -qx namespace/default "$tmp/ns"
	check "$n: get ns lists default" $?
	k api-resources >"$tmp/ar" 2>&1 && grep -q "^pods  *po  *v1  *true  *Pod" "$tmp/ar" &&
		grep -q "^leases .*coordination.k8s.io/v1" "$tmp/ar"
	check "$n: api-resources from discovery" $?

	k create -f "$tmp/pod.yaml" --validate=false >"$tmp/out" 2>&1 && grep -q "pod/web created" "$tmp/out"
	check "$n: create -f" $?
	k create -f "$tmp/pod.yaml" --validate=false >"$tmp/out" 2>&1
	[ $? -ne 0 ] && grep -q 'AlreadyExists\|already exists' "$tmp/out"
	check "$n: create twice -> AlreadyExists" $?
	k apply -f "$tmp/pod.yaml" --validate=false >"$tmp/out" 2>&1
	check "$n: apply on a created object" $?
	sed -e 's/app: web/app: web2/' -e 's/image: busybox/image: busybox:2/' "$tmp/pod.yaml" >"$tmp/pod2.yaml"
	k apply -f "$tmp/pod2.yaml" --validate=false >"$tmp/out" 2>&1 && grep -q "pod/web configured" "$tmp/out"
	check "$n: second apply patches" $?
	k get pod web -o json >"$tmp/web.json" 2>&1
	check "$n: get -o json" $?
	k get pods -o wide >"$tmp/out" 2>&1 && head -1 "$tmp/out" | grep -q '^NAME  *READY  *STATUS  *RESTARTS  *AGE  *IP  *NODE  *NOMINATED NODE$' &&
		grep -q '^web  *0/1  *Pending  *0 ' "$tmp/out"
	check "$n: get pods prints kube-apiserver's columns (Table)" $?
	[ "$(jget "$tmp/web.json" 'o["metadata"]["labels"]["app"]')" = web2 ]
	check "$n: the patch changed the label" $?
	[ "$(jget "$tmp/web.json" '[e["value"] for e in o["spec"]["containers"][0]["env"]]')" = "['1', '2']" ] &&
		[ "$(jget "$tmp/web.json" 'o["spec"]["containers"][0]["image"]')" = busybox:2 ]
	check "$n: strategic merge changed the image, kept the container's env" $?
	sed 's/value: "2"/value: "3"/' "$tmp/pod.yaml" >"$tmp/pod3.yaml"
	k apply -f "$tmp/pod3.yaml" --validate=false >"$tmp/out" 2>&1
	[ $? -ne 0 ] && grep -q 'Forbidden: pod updates may not change fields' "$tmp/out"
	check "$n: changing a pod's env is refused as kube-apiserver does" $?
	jget "$tmp/web.json" 'o["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]' >"$tmp/la" &&
		grep -q web2 "$tmp/la"
	check "$n: last-applied annotation updated" $?
	[ "$(jget "$tmp/web.json" 'o["status"]["phase"], o["spec"]["schedulerName"]')" = "('Pending', 'carve')" ]
	check "$n: pod defaults (phase Pending, schedulerName kept)" $?

	k get pods -w --request-timeout=0 >"$tmp/watch" 2>&1 &
	local wpid=$!
	sleep 1
	k label pod web stage=two >/dev/null 2>&1
	k create configmap cm1 --from-literal=a=b >/dev/null 2>&1
	k run other --image=busybox --restart=Never >/dev/null 2>&1
	local i
	for i in $(seq 1 30); do
		grep -q '^other' "$tmp/watch" && break
		sleep 0.1
	done
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	grep -q '^other' "$tmp/watch" && [ "$(grep -c '^web' "$tmp/watch")" -ge 2 ]
	check "$n: get -w sees the later change and the new pod" $?

	k get pods -l 'app in (web2),stage' -o name >"$tmp/out" 2>&1 && [ "$(cat "$tmp/out")" = pod/web ]
	check "$n: get -l set-based selector" $?
	k get pods --field-selector spec.nodeName= -o name >"$tmp/out" 2>&1 && grep -q pod/other "$tmp/out"
	check "$n: get --field-selector" $?

	# an events.k8s.io/v1 Event (as carve writes them) shows in describe
	local uid
	uid=$(jget "$tmp/web.json" 'o["metadata"]["uid"]')
	cat >"$tmp/ev.yaml" <<EOF
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web.1, namespace: default}
eventTime: "2026-12-03T17:00:00.000000Z"
reportingController: carve.dev/scheduler
reportingInstance: carve-0
action: Scheduling
reason: FailedScheduling
type: Warning
note: "quota team-a exhausted"
regarding: {apiVersion: v1, kind: Pod, name: web, namespace: default, uid: $uid}
EOF
	k create -f "$tmp/ev.yaml" --validate=false >/dev/null 2>&1 &&
		k describe pod web >"$tmp/out" 2>&1 &&
		grep -q 'Warning  *FailedScheduling .*carve.dev/scheduler  *quota team-a exhausted' "$tmp/out"
	check "$n: events.k8s.io Event seen by describe (core v1 events)" $?

	k delete pod web >"$tmp/out" 2>&1 && grep -q 'pod "web" deleted' "$tmp/out"
	check "$n: delete" $?
	k get pod web >"$tmp/out" 2>&1
	[ $? -ne 0 ] && grep -q 'NotFound' "$tmp/out"
	check "$n: get after delete -> NotFound" $?

	k apply -f "$tmp/crd.yaml" --validate=false >"$tmp/out" 2>&1
	check "$n: apply a CRD" $?
	k apply -f "$tmp/widget.yaml" --validate=false >"$tmp/out" 2>&1 && grep -q "widget.example.carve.dev/w1 created" "$tmp/out"
	check "$n: apply an object of the CRD's kind" $?
	sed 's/size: 3/size: 4/' "$tmp/widget.yaml" >"$tmp/widget2.yaml"
	k apply -f "$tmp/widget2.yaml" --validate=false >"$tmp/out" 2>&1 && grep -q configured "$tmp/out"
	check "$n: second apply of a custom object (merge patch)" $?
	k get wdg w1 -o json >"$tmp/w1.json" 2>&1 && [ "$(jget "$tmp/w1.json" 'o["spec"]["size"], o["metadata"]["generation"]')" = "(4, 2)" ]
	check "$n: short name, spec patched, generation bumped" $?
	k patch widget w1 --subresource=status --type=merge \
		-p '{"status":{"conditions":[{"type":"Ready","status":"True"}]}}' >"$tmp/out" 2>&1 &&
		k get widget w1 -o json >"$tmp/w1.json" 2>&1 &&
		[ "$(jget "$tmp/w1.json" 'o["status"]["conditions"][0]["status"], o["metadata"]["generation"]')" = "('True', 2)" ]
	check "$n: custom status subresource" $?
	k get widgets >"$tmp/out" 2>&1 && head -1 "$tmp/out" | grep -q '^NAME  *SIZE  *READY  *AGE$' &&
		grep -q '^w1  *4  *True  *[0-9]*s$' "$tmp/out"
	check "$n: get shows the CRD's additionalPrinterColumns (Table)" $?
	k delete -f "$tmp/crd.yaml" >/dev/null 2>&1
	k get widgets >"$tmp/out" 2>&1
	[ $? -ne 0 ]
	check "$n: CRD deleted -> its kind is gone" $?

	k apply -f "$tmp/job.yaml" --validate=false >/dev/null 2>&1
	k get pods -l batch.kubernetes.io/job-name=train -o json >"$tmp/jp.json" 2>&1
	[ "$(jget "$tmp/jp.json" 'sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in o["items"])')" = "['0', '1', '2']" ] &&
		[ "$(jget "$tmp/jp.json" '{(p["spec"]["schedulerName"], p["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], p["metadata"]["ownerReferences"][0]["kind"]) for p in o["items"]}')" = "{('carve', 'team-a', 'Job')}" ]
	check "$n: --controllers job creates the Job's indexed pods from the template" $?
	k delete job train >/dev/null 2>&1
	k get pods -l batch.kubernetes.io/job-name=train -o name >"$tmp/out" 2>&1 && [ ! -s "$tmp/out" ]
	check "$n: deleting the Job deletes its pods" $?

	k create namespace "$n-ns" >/dev/null 2>&1 && k -n "$n-ns" create configmap x >/dev/null 2>&1
	check "$n: create namespace and an object in it" $?
	k -n nowhere create configmap x >"$tmp/out" 2>&1
	[ $? -ne 0 ] && grep -q 'namespaces "nowhere" not found' "$tmp/out"
	check "$n: create in a missing namespace -> NotFound naming it" $?
	k delete pod/other configmap/cm1 >/dev/null 2>&1
	check "$n: delete several" $?
}

fake_start --controllers job || exit 1
suite plain
fake_stop

fake_start --controllers job --tls-dir "$tmp/tls" --token s3cret || exit 1
case $FAKE_URL in https://*) check "tls: https URL" 0 ;; *) check "tls: https URL" 1 ;; esac
suite tls
fake_req GET /api/v1/namespaces/default >/dev/null
check "tls: fake_req carries the token" $?
fake_fault '{"latency_ms": 0}' >/dev/null
check "tls: fake_fault" $?
sed 's/token: s3cret/token: wrong/' "$KUBECONFIG" >"$tmp/bad.kubeconfig"
KUBECONFIG=$tmp/bad.kubeconfig kubectl get ns >"$tmp/out" 2>&1
[ $? -ne 0 ] && grep -qi 'unauthorized\|must be logged in' "$tmp/out"
check "tls: a wrong token is refused" $?
fake_stop

echo "fake_kubectl: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
