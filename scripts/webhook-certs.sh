#!/usr/bin/env bash
# webhook-certs.sh - the certificate of carve webhook without cert-manager
# (docs/webhook.md, "Deploying"): makes a CA and a serving certificate for
# the Service's DNS names with openssl, stores them in the Secret
# carve-webhook-tls, and patches the CA into clientConfig.caBundle of every
# webhook of the ValidatingWebhookConfiguration and the
# MutatingWebhookConfiguration named carve-webhook.
#
# Usage: scripts/webhook-certs.sh [--namespace NS] [--service NAME]
#                                 [--days N] [--out DIR] [--no-apply]
#   --out DIR     keep ca.crt, tls.crt, tls.key in DIR (default: a
#                 temporary directory, removed at the end)
#   --no-apply    only write the files (needs --out); no kubectl call
# Run again to rotate: a new CA and certificate; the pods read the new
# files when kubelet updates the Secret's volume (about a minute).
set -euo pipefail

ns=carve-system
svc=carve-webhook
days=365
out=
apply=1
while [ $# -gt 0 ]; do
	case $1 in
	--namespace) ns=$2; shift 2 ;;
	--service) svc=$2; shift 2 ;;
	--days) days=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--no-apply) apply=0; shift ;;
	-h | --help) sed -n '2,16p' "$0"; exit 0 ;;
	*) echo "webhook-certs.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
case $days in '' | *[!0-9]*) echo "webhook-certs.sh: --days '$days': expected a whole number" >&2; exit 2 ;; esac
if [ "$apply" -eq 0 ] && [ -z "$out" ]; then
	echo "webhook-certs.sh: --no-apply needs --out DIR" >&2
	exit 2
fi
if [ -z "$out" ]; then
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
umask 077

# The names the API server uses to reach the Service (the serving
# certificate must hold the one it dials: NAME.NS.svc).
sans="DNS:$svc,DNS:$svc.$ns,DNS:$svc.$ns.svc,DNS:$svc.$ns.svc.cluster.local"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
	-subj "/CN=$svc-ca" -keyout "$out/ca.key" -out "$out/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	-subj "/CN=$svc.$ns.svc" -keyout "$out/tls.key" -out "$out/tls.csr" 2>/dev/null
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' \
	"$sans" >"$out/ext.cnf"
openssl x509 -req -in "$out/tls.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
	-days "$days" -extfile "$out/ext.cnf" -out "$out/tls.crt" 2>/dev/null
openssl verify -CAfile "$out/ca.crt" "$out/tls.crt" >/dev/null
rm -f "$out/tls.csr" "$out/ext.cnf" "$out/ca.srl"
echo "webhook-certs.sh: certificate for $sans in $out" >&2
[ "$apply" -eq 1 ] || exit 0

# (kubectl itself writes the Secret: schema validation adds nothing)
kubectl -n "$ns" create secret tls carve-webhook-tls --cert="$out/tls.crt" --key="$out/tls.key" \
	--dry-run=client -o yaml | kubectl apply --validate=false -f -
ca=$(base64 -w0 <"$out/ca.crt")
for kind in validatingwebhookconfiguration mutatingwebhookconfiguration; do
	n=$(kubectl get "$kind" carve-webhook -o jsonpath='{range .webhooks[*]}x{end}')
	patch="["
	for ((i = 0; i < ${#n}; i++)); do
		[ "$i" -eq 0 ] || patch+=","
		patch+="{\"op\":\"add\",\"path\":\"/webhooks/$i/clientConfig/caBundle\",\"value\":\"$ca\"}"
	done
	patch+="]"
	kubectl patch "$kind" carve-webhook --type=json -p "$patch"
done
echo "webhook-certs.sh: Secret $ns/carve-webhook-tls and both caBundles set" >&2
