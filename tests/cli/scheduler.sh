#!/usr/bin/env bash
# Tests of `carve scheduler`'s command line, no cluster needed: --help
# names every flag, bad flag values are usage errors (exit 2) naming the
# flag and the value, and a process with no cluster configuration anywhere
# stops at once with exit 1 and a clear reason.  The scheduler against a
# cluster is tested in tests/kube/e2e_*.sh.
# Usage: scheduler.sh CARVE_BINARY SOURCE_DIR
set -u
carve=$1
src=$2
cd "$src" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
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

# --help: exit 0, every flag named
out=$("$carve" scheduler --help)
check "--help exits 0" $?
for f in --kubeconfig --context --scheduler-name --queues --policy --seed --leader-elect \
	--lease-namespace --lease-name --identity --qps --burst --metrics-addr --max-seconds; do
	printf '%s\n' "$out" | grep -q -- "$f"
	check "--help names $f" $?
done
"$carve" --help | grep -q '^  scheduler '
check "carve --help lists scheduler" $?

# usage errors: exit 2, the flag and the value named
usage_err() { # name, expected text, args...
	local name=$1 want=$2
	shift 2
	"$carve" scheduler "$@" >"$tmp/out" 2>"$tmp/err"
	check "$name: exit 2" $([ $? -eq 2 ] && echo 0 || echo 1)
	grep -q -- "$want" "$tmp/err"
	check "$name: says $want" $?
	[ ! -s "$tmp/out" ]
	check "$name: nothing on stdout" $?
}
usage_err "bad --queues" "--queues 'volcano'" --queues volcano
usage_err "bad --leader-elect" "--leader-elect 'yes'" --leader-elect yes
usage_err "bad --policy" "--policy 'best'" --policy best
usage_err "bad --qps" "--qps '-1'" --qps -1
usage_err "bad --burst" "--burst '0'" --burst 0
usage_err "bad --max-seconds" "--max-seconds '1.5'" --max-seconds 1.5
usage_err "bad --scheduler-name" "--scheduler-name 'Carve'" --scheduler-name Carve
usage_err "bad --lease-name" "--lease-name 'a_b'" --lease-name a_b
usage_err "missing value" "needs a value" --queues
usage_err "unknown flag" "unknown option '--nope'" --nope
usage_err "stray argument" "unexpected argument 'extra'" extra

# no configuration anywhere: exit 1 at once, the reason said
mkdir -p "$tmp/home"
env -u KUBERNETES_SERVICE_HOST HOME="$tmp/home" KUBECONFIG="$tmp/missing" \
	timeout 20 "$carve" scheduler --metrics-addr 0 --max-seconds 5 >"$tmp/out" 2>"$tmp/err"
check "no configuration: exit 1" $([ $? -eq 1 ] && echo 0 || echo 1)
grep -q 'no cluster configuration' "$tmp/err"
check "no configuration: says so" $?

# a kubeconfig naming a context it lacks: exit 1, the file named
cat >"$tmp/kc" <<'KC'
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: http://127.0.0.1:1
contexts:
- name: x
  context: {cluster: c, user: u}
users:
- name: u
  user: {token: t}
current-context: x
KC
timeout 20 "$carve" scheduler --kubeconfig "$tmp/kc" --context nope --metrics-addr 0 \
	--max-seconds 5 >"$tmp/out" 2>"$tmp/err"
check "missing context: exit 1" $([ $? -eq 1 ] && echo 0 || echo 1)
grep -q "$tmp/kc" "$tmp/err"
check "missing context: names the file" $?

echo "scheduler.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
