#!/bin/bash
# node_e2e.sh CARVE SRCDIR NVML - the node agent end to end with the
# scheduler: the fake API server (tests/kube/fakeapi.py, on 127.0.0.1), the
# real `carve scheduler --mig-dynamic`, the real `carve node` over the mock
# libnvidia-ml.so.1 NVML, and the fake kubelet (tests/node/fake_kubelet.py)
# on a temporary device-plugin directory.  The checks are in node_e2e.py;
# this script only owns the fake API server's life (it stops on exit).
set -u
CARVE=$1 SRC=$2 NVML=$3
. "$SRC/tests/kube/kubeenv.sh"
fake_start --max-seconds 150 || exit 1
trap 'fake_stop' EXIT
/usr/bin/python3 "$SRC/tests/node/node_e2e.py" "$CARVE" "$NVML"
