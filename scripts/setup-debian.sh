#!/bin/sh
# Installs the Debian packages carve needs to build and test. Idempotent: a
# package already present is left as it is. Run as root (or through sudo).
set -eu

# libcurl and libmicrohttpd: the Kubernetes client and servers (src/kube);
# python3-kubernetes and openssl: the fake API server tests (tests/kube).
# libgnutls28-dev: the webhook's certificate reload (libmicrohttpd's TLS is GnuTLS).
# libgrpc-dev, libprotobuf-c-dev, protobuf-c-compiler: the node agent's kubelet
# device plugin (src/node); python3-grpcio: the fake kubelet (tests/node).
# chromium and a font: tests/cli/report.sh renders the HTML report headless.
# clang and its runtime libraries (libFuzzer, sanitizers; a Recommends that
# --no-install-recommends would skip): the fuzz targets (docs/fuzzing.md).
PKGS="build-essential cmake pkg-config libyaml-dev libjansson-dev libcmocka-dev libcurl4-openssl-dev libmicrohttpd-dev libgnutls28-dev libgrpc-dev libprotobuf-c-dev protobuf-c-compiler python3-grpcio valgrind python3 python3-kubernetes openssl chromium fonts-dejavu-core clang libclang-rt-14-dev"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "setup-debian: all packages present"
	exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
