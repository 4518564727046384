"""A fake kubelet for carve's device plugin tests (Debian's python3-grpcio).

It serves the kubelet's side of the device plugin API v1beta1
(k8s.io/kubelet pkg/apis/deviceplugin/v1beta1, proto/deviceplugin/v1beta1/
api.proto in this repository): Registration.Register on <dir>/kubelet.sock,
and calls the plugins' DevicePlugin methods the way the kubelet does.
Messages are encoded and decoded by hand (protobuf wire format: varints and
length-delimited fields), with no generated code, so the test also checks
carve's field numbers.

restart() removes and recreates the socket (a kubelet restart); garbage
makes Register answer bytes that are not a v1beta1.Empty.
"""

import os
import threading
from concurrent import futures

import grpc

# ---- protobuf wire format ----


def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(num, data):
    """A length-delimited field (string, bytes, message)."""
    if isinstance(data, str):
        data = data.encode()
    return _varint(num << 3 | 2) + _varint(len(data)) + data


def field_varint(num, n):
    return _varint(num << 3) + _varint(n)


def decode(buf):
    """The fields of a message: list of (number, value); value is an int for
    varints, bytes for length-delimited fields.  Raises ValueError."""
    out, i = [], 0

    def rd():
        nonlocal i
        shift = n = 0
        while True:
            if i >= len(buf):
                raise ValueError("truncated varint")
            b = buf[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n

    while i < len(buf):
        key = rd()
        num, wt = key >> 3, key & 7
        if wt == 0:
            out.append((num, rd()))
        elif wt == 2:
            ln = rd()
            if i + ln > len(buf):
                raise ValueError("truncated field")
            out.append((num, bytes(buf[i:i + ln])))
            i += ln
        else:
            raise ValueError("wire type %d not used by v1beta1" % wt)
    return out


def fields(buf, num):
    return [v for n, v in decode(buf) if n == num]


def one(buf, num, default=None):
    v = fields(buf, num)
    return v[-1] if v else default

# ---- v1beta1 messages ----


def register_request(buf):
    opts = one(buf, 4, b"")
    return {
        "version": one(buf, 1, b"").decode(),
        "endpoint": one(buf, 2, b"").decode(),
        "resource_name": one(buf, 3, b"").decode(),
        "pre_start_required": bool(one(opts, 1, 0)),
        "get_preferred_allocation_available": bool(one(opts, 2, 0)),
    }


def list_and_watch_response(buf):
    devs = []
    for d in fields(buf, 1):
        topo = one(d, 3)
        numa = [one(n, 1, 0) for n in fields(topo, 1)] if topo is not None else None
        devs.append({"ID": one(d, 1, b"").decode(),
                     "health": one(d, 2, b"").decode(), "numa": numa})
    return devs


def allocate_request(containers):
    return b"".join(field_bytes(1, b"".join(field_bytes(1, i) for i in ids))
                    for ids in containers)


def allocate_response(buf):
    out = []
    for c in fields(buf, 1):
        envs = {one(e, 1, b"").decode(): one(e, 2, b"").decode() for e in fields(c, 1)}
        cdi = [one(d, 1, b"").decode() for d in fields(c, 5)]
        out.append({"envs": envs, "cdi": cdi,
                    "mounts": fields(c, 2), "devices": fields(c, 3)})
    return out


def preferred_request(containers):
    """containers: list of (available, must_include, size)."""
    body = b""
    for avail, must, size in containers:
        c = b"".join(field_bytes(1, a) for a in avail)
        c += b"".join(field_bytes(2, m) for m in must)
        c += field_varint(3, size)
        body += field_bytes(1, c)
    return body


def preferred_response(buf):
    return [[i.decode() for i in fields(c, 1)] for c in fields(buf, 1)]


def options_response(buf):
    return {"pre_start_required": bool(one(buf, 1, 0)),
            "get_preferred_allocation_available": bool(one(buf, 2, 0))}

# ---- the kubelet ----


class FakeKubelet:
    def __init__(self, directory):
        self.dir = directory
        self.sock = os.path.join(directory, "kubelet.sock")
        self.registrations = []
        self.garbage = False
        self.lock = threading.Lock()
        self.server = None

    def _register(self, request, context):
        try:
            r = register_request(request)
        except ValueError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(e))
        with self.lock:
            self.registrations.append(r)
            if self.garbage:
                return b"\xff\xff\xff\xff"
        return b""

    def start(self):
        handler = grpc.method_handlers_generic_handler("v1beta1.Registration", {
            "Register": grpc.unary_unary_rpc_method_handler(self._register)})
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers((handler,))
        self.server.add_insecure_port("unix:" + self.sock)
        self.server.start()

    def stop(self):
        if self.server:
            self.server.stop(0).wait()
            self.server = None
        if os.path.exists(self.sock):
            os.unlink(self.sock)

    def restart(self):
        """What a kubelet restart does to the directory: its socket goes
        away with the plugins' ones, and a new one appears."""
        self.stop()
        for name in os.listdir(self.dir):
            if name.endswith(".sock"):
                os.unlink(os.path.join(self.dir, name))
        self.start()

    def resources(self):
        with self.lock:
            return [r["resource_name"] for r in self.registrations]

    # calls to a plugin, as the kubelet makes them

    def _channel(self, endpoint):
        return grpc.insecure_channel("unix:" + os.path.join(self.dir, endpoint))

    def call(self, endpoint, method, body, timeout=5):
        with self._channel(endpoint) as ch:
            return ch.unary_unary("/v1beta1.DevicePlugin/" + method)(body, timeout=timeout)

    def options(self, endpoint):
        return options_response(self.call(endpoint, "GetDevicePluginOptions", b""))

    def allocate(self, endpoint, containers):
        return allocate_response(self.call(endpoint, "Allocate",
                                           allocate_request(containers)))

    def preferred(self, endpoint, containers):
        return preferred_response(self.call(endpoint, "GetPreferredAllocation",
                                            preferred_request(containers)))

    def watch(self, endpoint, timeout=10):
        """A ListAndWatch stream: (channel, iterator of device lists)."""
        ch = self._channel(endpoint)
        it = ch.unary_stream("/v1beta1.DevicePlugin/ListAndWatch")(b"", timeout=timeout)
        return ch, (list_and_watch_response(m) for m in it)
