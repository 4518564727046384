#!/usr/bin/env bash
# The kustomize manifests of deploy/ render and hold what docs/kubernetes.md
# promises: `kubectl kustomize deploy` and `deploy/overlays/kueue` are turned
# into JSON offline (`kubectl annotate --local -o json`, no server) and
# checked by tests/kube/deploy_check.py (every object, two replicas, probes,
# exactly the RBAC verbs the scheduler uses and no wildcard, every CRD with
# a structural schema and Kueue v1beta2's facts, the overlay without carve.dev
# CRDs); the carve.dev objects of examples/kubernetes are validated against
# the rendered CRDs; tampered renderings must be refused.
# Every file of examples/kubernetes also loads cleanly with `carve validate`.
# Usage: deploy.sh SOURCE_DIR CARVE_BINARY.  Exit 77 (skipped) without kubectl.
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
trap 'rm -rf "$tmp"' EXIT
export KUBECONFIG=/dev/null
fail=0
pass=0

check() { # name, condition result
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
	else
		echo "FAIL: $1"
		fail=$((fail + 1))
	fi
}
tojson() { # YAML file -> concatenated JSON documents, offline
	kubectl annotate --local -f "$1" -o json carve.dev/rendered=1
}

kubectl kustomize deploy >"$tmp/base.yaml"
check "kubectl kustomize deploy" $?
kubectl kustomize deploy/overlays/kueue >"$tmp/kueue.yaml"
check "kubectl kustomize deploy/overlays/kueue" $?
tojson "$tmp/base.yaml" >"$tmp/base.json"
check "base to JSON" $?
tojson "$tmp/kueue.yaml" >"$tmp/kueue.json"
check "overlay to JSON" $?

ex=()
for f in examples/kubernetes/*.yaml; do
	[ -e "$f" ] || continue
	tojson "$f" >"$tmp/ex-$(basename "$f" .yaml).json"
	check "$f to JSON" $?
	ex+=("$tmp/ex-$(basename "$f" .yaml).json")
done
[ "${#ex[@]}" -gt 0 ]
check "examples/kubernetes has manifests" $?

out=$("$py" tests/kube/deploy_check.py base "${ex[@]}" <"$tmp/base.json")
rc=$?
[ -z "$out" ] || echo "$out"
check "base rendering and examples pass" $rc
out=$("$py" tests/kube/deploy_check.py kueue <"$tmp/kueue.json")
rc=$?
[ -z "$out" ] || echo "$out"
check "kueue overlay passes" $rc
grep -q 'group: carve.dev' "$tmp/kueue.yaml"
check "kueue overlay has no carve.dev CRD or rule" $((1 - $?))

# The checker must refuse what is wrong: each tampered input must fail with
# the problem named.
refuse() { # name, mode, expected message, file
	local out rc
	out=$("$py" tests/kube/deploy_check.py "$2" <"$4")
	rc=$?
	if [ "$rc" -eq 1 ] && grep -qF -- "$3" <<<"$out"; then
		check "$1 refused" 0
	else
		echo "$out"
		check "$1 refused (rc $rc, want a line with '$3')" 1
	fi
}
tamper() { # sed expression -> $tmp/t.json from the base rendering
	sed "$1" "$tmp/base.yaml" >"$tmp/t.yaml" && tojson "$tmp/t.yaml" >"$tmp/t.json"
}
tamper 's/^  replicas: 2$/  replicas: 1/'
refuse "one replica" base "replicas 1, want 2" "$tmp/t.json"
tamper '0,/^  - delete$/s//  - "*"/'
refuse "a wildcard verb" base "has a wildcard in verbs" "$tmp/t.json"
tamper '0,/^  - pods\/binding$/s//  - pods\/exec/'
refuse "a verb on a resource the scheduler does not use" base "resource pods/exec" "$tmp/t.json"
tamper '/readinessProbe:/,/path: \/readyz/s/\/readyz/\/healthz/'
refuse "readiness on /healthz" base "readinessProbe" "$tmp/t.json"
tamper '0,/openAPIV3Schema:/s//openAPIV3SchemaX:/'
refuse "a CRD without schema" base "no openAPIV3Schema" "$tmp/t.json"
tamper 's/^                  type: object$/                  typo: object/'
refuse "an untyped schema node" base "no type" "$tmp/t.json"
tamper 's/readOnlyRootFilesystem: true/readOnlyRootFilesystem: false/'
refuse "a writable root filesystem" base "readOnlyRootFilesystem" "$tmp/t.json"
refuse "the base rendering as the overlay" kueue "not expected in the kueue rendering" "$tmp/base.json"
refuse "the overlay rendering as the base" base "clusterqueues.carve.dev: missing" "$tmp/kueue.json"

# Example objects that break the CRDs' schemas are refused, naming the field.
cat >"$tmp/bad.yaml" <<'Y'
apiVersion: carve.dev/v1alpha1
kind: ClusterQueue
metadata:
  name: bad
spec:
  queueingStrategy: Strict
  cohortname: gpu-org
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - name: nvidia.com/gpu
        nominalQuota: lots
Y
tojson "$tmp/bad.yaml" >"$tmp/bad.json"
out=$("$py" tests/kube/deploy_check.py base "$tmp/bad.json" <"$tmp/base.json")
rc=$?
for want in "spec.queueingStrategy: 'Strict' not one of" "spec: unknown field cohortname" \
	"nominalQuota: 'lots' is not a quantity"; do
	[ "$rc" -eq 1 ] && grep -qF -- "$want" <<<"$out"
	check "bad example: $want" $?
done

# The examples load without errors in carve itself, at every step of the
# walk-through: files 00..N together are what the cluster holds after step N.
set --
for f in examples/kubernetes/*.yaml; do
	set -- "$@" "$f"
	out=$("$carve" validate "$@" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] || grep -q ': error: ' <<<"$out"; then
		echo "$out"
		check "carve validate up to $f (exit $rc)" 1
	else
		check "carve validate up to $f" 0
	fi
done

# deploy/overlays/node-agent: the base plus the node agent's DaemonSet,
# RBAC and Service (docs/node.md, "Running it"), and a tampered copy refused.
kubectl kustomize deploy/overlays/node-agent >"$tmp/na.yaml"
check "kubectl kustomize deploy/overlays/node-agent" $?
tojson "$tmp/na.yaml" >"$tmp/na.json"
out=$("$py" tests/kube/deploy_check.py node-agent <"$tmp/na.json")
rc=$?
[ -z "$out" ] || echo "$out"
check "node-agent overlay passes" $rc
sed 's/runtimeClassName: nvidia/runtimeClassName: runc/' "$tmp/na.yaml" >"$tmp/nat.yaml" &&
	tojson "$tmp/nat.yaml" >"$tmp/nat.json"
refuse "a node agent without the nvidia runtime class" node-agent "runtimeClassName" "$tmp/nat.json"
sed 's|path: /var/lib/kubelet/device-plugins|path: /var/lib/kubelet/plugins|' "$tmp/na.yaml" >"$tmp/nat.yaml" &&
	tojson "$tmp/nat.yaml" >"$tmp/nat.json"
refuse "a node agent without the device-plugin directory" node-agent \
	"no hostPath volume /var/lib/kubelet/device-plugins" "$tmp/nat.json"

echo "deploy: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
