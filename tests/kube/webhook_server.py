#!/usr/bin/python3
"""webhook_server.py CARVE: `carve webhook` over real HTTPS on 127.0.0.1.

Makes a test CA and a serving certificate with openssl, starts the
webhook (--no-cluster, an ephemeral port read from its log), and sends
requests with ssl/http.client as the API server would: reviews answered
with the uid echoed, bad bodies (not JSON, wrong apiVersion, no
request.uid: 400 Status), wrong method (405), unknown path (404), wrong
Content-Type (415), 10 MB bodies with and without Content-Length (413), a
slow client (closed after --timeout while others are served), a
certificate rotation (the new certificate served without a restart), a
bounded concurrent keep-alive load (every request answered); the server
still answers at the end and stops on SIGTERM with status 0.
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

CARVE = sys.argv[1]
TIMEOUT_S = 2
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILS.append(what)


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def make_ca(d):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.crt", "-days", "1", "-subj", "/CN=carve-test-ca")


def make_cert(d, name, cn):
    """A serving certificate for 127.0.0.1 signed by the test CA: (crt, key)."""
    with open(f"{d}/ext", "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{d}/{name}.key", "-out", f"{d}/{name}.csr", "-subj", f"/CN={cn}")
    openssl("x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/ca.crt", "-CAkey", f"{d}/ca.key",
            "-CAcreateserial", "-out", f"{d}/{name}.crt", "-days", "1", "-extfile", f"{d}/ext")
    return f"{d}/{name}.crt", f"{d}/{name}.key"


def review(uid="705ab4f5-6393-11e8-b7cc-42010a800002", obj=None, api="admission.k8s.io/v1"):
    """An AdmissionReview as the API server sends it (dryRun, userInfo, oldObject)."""
    obj = obj or {"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "p", "namespace": "team-a"},
                  "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    return {"apiVersion": api, "kind": "AdmissionReview",
            "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
                        "resource": {"group": "", "version": "v1", "resource": "pods"},
                        "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
                        "requestResource": {"group": "", "version": "v1", "resource": "pods"},
                        "name": "p", "namespace": "team-a", "operation": "CREATE",
                        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
                        "object": obj, "oldObject": None, "dryRun": False,
                        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}}


class Client:
    def __init__(self, port, ctx):
        self.port, self.ctx = port, ctx
        self.conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=20)

    def req(self, method, path, body=None, ctype="application/json", headers=None):
        h = dict(headers or {})
        if body is not None and ctype:
            h["Content-Type"] = ctype
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.conn.request(method, path, body=body, headers=h)
        r = self.conn.getresponse()
        data = r.read()
        return r.status, r.getheader("Content-Type") or "", data

    def close(self):
        self.conn.close()


def jbody(data):
    try:
        return json.loads(data)
    except ValueError:
        return None


def cli_checks(d):
    """The command line: --help lists every flag, usage errors exit 2, the
    offline review answers and exits 0/1."""
    def run(*args, stdin=None):
        p = subprocess.run([CARVE, "webhook", *args], input=stdin, capture_output=True, timeout=30)
        return p.returncode, p.stdout.decode(), p.stderr.decode()
    rc, out, _ = run("--help")
    flags = ["--listen", "--cert", "--key", "--policy", "--kubeconfig", "--context", "--in-cluster",
             "--no-cluster", "--threads", "--timeout", "--reload-ms", "--debounce-ms", "--qps",
             "--burst", "--insecure-http", "--max-seconds", "--verbose", "--mutate", "review FILE"]
    missing = [f for f in flags if f not in out]
    check(rc == 0 and not missing, "carve webhook --help lists every flag %s" % (missing or ""))
    for args, what in ((["--no-cluster"], "no --cert/--key"),
                       (["--threads", "0", "--insecure-http"], "--threads 0"),
                       (["--listen", "8443", "--insecure-http"], "--listen without a colon"),
                       (["--insecure-http", "--cert", "x"], "--insecure-http with --cert"),
                       (["--mutate", "--insecure-http"], "--mutate outside review"),
                       (["review"], "review without FILE"),
                       (["review", "--threads", "2", "x"], "review with a server flag")):
        rc, _, err = run(*args)
        check(rc == 2 and "carve webhook" in err, "usage error exits 2: %s (%s)" % (what, err.strip()[:70]))
    rc, _, err = run("review", f"{d}/does-not-exist.json")
    check(rc == 1 and "does-not-exist.json" in err, "review of a missing file: exit 1 naming it")
    rc, out, _ = run("review", "-", stdin=b"{not json")
    check(rc == 1 and (jbody(out.encode()) or {}).get("kind") == "Status", "review of not JSON: Status, exit 1")
    rc, out, _ = run("review", "-", stdin=json.dumps(review("offline-1")).encode())
    j = jbody(out.encode()) or {}
    check(rc in (0, 1) and j.get("response", {}).get("uid") == "offline-1" and
          rc == (0 if j["response"].get("allowed") else 1), "offline review: uid echoed, exit by allowed")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    rc, _, err = run("--insecure-http", "--no-cluster", "--listen", "127.0.0.1:%d" % busy.getsockname()[1],
                     "--max-seconds", "5")
    busy.close()
    check(rc == 1 and "cannot listen" in err, "an address in use: exit 1 (%s)" % err.strip()[-60:])
    rc, _, err = run("--cert", f"{d}/nope.crt", "--key", f"{d}/nope.key", "--no-cluster")
    check(rc == 1 and "nope.crt" in err, "a missing certificate file: exit 1 naming it")


def main():
    d = tempfile.mkdtemp(prefix="carve-wh-")
    proc = None
    try:
        cli_checks(d)
        make_ca(d)
        crt, key = make_cert(d, "s1", "carve-webhook-1")
        shutil.copy(crt, f"{d}/tls.crt")
        shutil.copy(key, f"{d}/tls.key")
        log = open(f"{d}/log", "w+")
        proc = subprocess.Popen([CARVE, "webhook", "--listen", "127.0.0.1:0", "--cert", f"{d}/tls.crt",
                                 "--key", f"{d}/tls.key", "--no-cluster", "--threads", "2",
                                 "--timeout", str(TIMEOUT_S), "--reload-ms", "100",
                                 "--max-seconds", "170"], stderr=log)
        port = None
        for _ in range(100):
            log.seek(0)
            m = re.search(r"serving HTTPS on port (\d+)", log.read())
            if m:
                port = int(m.group(1))
                break
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        check(port is not None, "server started and said its port")
        if port is None:
            log.seek(0)
            print(log.read())
            return
        ctx = ssl.create_default_context(cafile=f"{d}/ca.crt")

        c = Client(port, ctx)
        # probes
        st, _, body = c.req("GET", "/healthz")
        check(st == 200 and body == b"ok\n", "GET /healthz 200")
        st, _, _ = c.req("GET", "/readyz")
        check(st == 200, "GET /readyz 200 (no cluster: ready at once)")
        st, ct, body = c.req("GET", "/metrics")
        check(st == 200 and b"carve_webhook_reviews_total" in body, "GET /metrics")

        # good reviews, both paths, keep-alive on one connection
        for path in ("/validate", "/mutate"):
            uid = f"uid-{path[1:]}-1"
            st, ct, body = c.req("POST", path, review(uid))
            j = jbody(body)
            ok = (st == 200 and ct.startswith("application/json") and j is not None and
                  j.get("apiVersion") == "admission.k8s.io/v1" and j.get("kind") == "AdmissionReview" and
                  j["response"].get("uid") == uid and isinstance(j["response"].get("allowed"), bool))
            check(ok, f"POST {path}: AdmissionReview answered, uid echoed")
        st, _, body = c.req("POST", "/validate", review("u-ct"), ctype="application/json; charset=utf-8")
        check(st == 200, "Content-Type with parameters accepted")

        # bad bodies: 400 with a Status, the connection still used after
        for name, payload in (("not JSON", b"{not json"),
                              ("wrong apiVersion", review(api="admission.k8s.io/v1beta1")),
                              ("missing request.uid", {"apiVersion": "admission.k8s.io/v1",
                                                       "kind": "AdmissionReview", "request": {}}),
                              ("empty body", b"")):
            st, _, body = c.req("POST", "/validate", payload)
            j = jbody(body)
            check(st == 400 and j is not None and j.get("kind") == "Status" and j.get("message"),
                  f"{name}: 400 with a Status naming it ({j.get('message') if j else body[:80]!r})")
        st, _, _ = c.req("POST", "/validate", review("after-bad"))
        check(st == 200, "same keep-alive connection still served after bad bodies")

        # wrong method, path, content type
        st, _, body = c.req("GET", "/validate")
        check(st == 405 and jbody(body)["code"] == 405, "GET /validate: 405")
        st, _, _ = c.req("PUT", "/mutate", review())
        check(st == 405, "PUT /mutate: 405")
        st, _, _ = c.req("POST", "/healthz", b"{}")
        check(st == 405, "POST /healthz: 405")
        st, _, body = c.req("POST", "/nope", review())
        check(st == 404 and jbody(body)["code"] == 404, "unknown path: 404")
        c.close()
        c = Client(port, ctx)
        st, _, body = c.req("POST", "/validate", json.dumps(review()).encode(), ctype="text/plain")
        check(st == 415, "Content-Type text/plain: 415")
        c.close()
        c = Client(port, ctx)
        st, _, body = c.req("POST", "/validate", json.dumps(review()).encode(), ctype=None)
        check(st == 415, "no Content-Type: 415")
        c.close()

        # 10 MB bodies: with Content-Length (refused before reading), chunked (refused at the cap)
        # (raw: http.client writes the whole body before reading, and the
        # server answers and closes as soon as the headers are in)
        s10 = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                              server_hostname="127.0.0.1")
        s10.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 10000000\r\n\r\n" + b" " * 65536)
        head = b""
        try:
            while b"\r\n\r\n" not in head:
                more = s10.recv(4096)
                if not more:
                    break
                head += more
        except (ConnectionError, ssl.SSLError, OSError):
            pass
        s10.close()
        line = head.split(b"\r\n")[0]
        check(b" 413 " in line, f"10 MB body with Content-Length: 413 before the body ({line!r})")

        def chunks():
            for _ in range(100):
                yield b"0," * 50000 + b"\n"
        c = Client(port, ctx)
        try:
            c.conn.request("POST", "/mutate", body=chunks(), encode_chunked=True,
                           headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
            r = c.conn.getresponse()
            st = r.status
            r.read()
        except (ConnectionError, ssl.SSLError, http.client.HTTPException, BrokenPipeError):
            st = "closed"
        check(st in (413, "closed"), f"10 MB chunked body: 413 or closed at the cap (got {st})")
        c.close()

        # slow clients: one stalls in its headers, one in its body; others are served meanwhile
        def raw():
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            return ctx.wrap_socket(s, server_hostname="127.0.0.1")
        slow1 = raw()
        slow1.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\n")
        slow2 = raw()
        slow2.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 1000\r\n\r\n{\"apiVersion\":")
        t0 = time.monotonic()
        c = Client(port, ctx)
        st, _, _ = c.req("POST", "/validate", review("during-slow"))
        check(st == 200 and time.monotonic() - t0 < 1.5, "others served while clients stall")
        c.close()

        def closed_within(s, limit):
            s.settimeout(limit)
            try:
                data = s.recv(4096)
                while data and b"\r\n\r\n" not in data:
                    more = s.recv(4096)
                    if not more:
                        break
                    data += more
                return True, data
            except (socket.timeout, TimeoutError):
                return False, b""
            except (ConnectionError, ssl.SSLError, OSError):
                return True, b""
        ok1, data1 = closed_within(slow1, TIMEOUT_S + 4)
        ok2, data2 = closed_within(slow2, TIMEOUT_S + 4)
        check(ok1, f"stalled headers: connection closed after --timeout ({time.monotonic() - t0:.1f} s)")
        line2 = data2.split(b"\r\n")[0]
        check(ok2 and (not data2 or b" 408 " in line2),
              f"stalled body: closed or 408 after --timeout ({line2!r})")
        slow1.close()
        slow2.close()

        # certificate rotation: rewrite the files in place (as kubelet swaps a Secret)
        def served_cert():
            s = raw()
            der = s.getpeercert(binary_form=True)
            s.close()
            return der
        first = served_cert()
        crt2, key2 = make_cert(d, "s2", "carve-webhook-2")
        shutil.copy(key2, f"{d}/tls.key.new")
        shutil.copy(crt2, f"{d}/tls.crt.new")
        os.rename(f"{d}/tls.key.new", f"{d}/tls.key")
        os.rename(f"{d}/tls.crt.new", f"{d}/tls.crt")
        want = ssl.PEM_cert_to_DER_cert(open(crt2).read())
        got = None
        for _ in range(50):
            got = served_cert()
            if got == want:
                break
            time.sleep(0.1)
        check(first != want and got == want, "rotated certificate served without a restart")
        # a broken pair (a key for another certificate) is refused; the good one stays
        shutil.copy(key, f"{d}/tls.key")
        time.sleep(0.5)
        check(served_cert() == want, "a mismatched key is refused; the last good pair still served")
        shutil.copy(key2, f"{d}/tls.key")

        # bounded concurrent keep-alive load
        nthreads, per = 8, 150
        answered = [0] * nthreads
        errors = []

        def worker(i):
            cl = Client(port, ctx)
            try:
                for n in range(per):
                    uid = f"load-{i}-{n}"
                    st, _, body = cl.req("POST", "/validate" if n % 2 else "/mutate", review(uid))
                    j = jbody(body)
                    if st == 200 and j and j["response"]["uid"] == uid:
                        answered[i] += 1
                    else:
                        errors.append((st, body[:100]))
            except Exception as e:  # noqa: BLE001 - reported as a failure below
                errors.append(repr(e))
            finally:
                cl.close()
        t0 = time.monotonic()
        ths = [threading.Thread(target=worker, args=(i,)) for i in range(nthreads)]
        for t in ths:
            t.start()
        for t in ths:
            t.join(90)
        dt = time.monotonic() - t0
        check(sum(answered) == nthreads * per and not errors,
              f"load: {sum(answered)}/{nthreads * per} answered in {dt:.1f} s "
              f"({sum(answered) / dt:.0f}/s over {nthreads} keep-alive connections) {errors[:3]}")

        c = Client(port, ctx)
        st, _, body = c.req("POST", "/validate", review("at-the-end"))
        check(st == 200 and jbody(body)["response"]["uid"] == "at-the-end", "still serving at the end")
        st, _, body = c.req("GET", "/metrics")
        m = re.search(rb'carve_webhook_rejected_total\{code="413"\} (\d+)', body)
        check(m is not None and int(m.group(1)) >= 1, "metrics count the 413s")
        c.close()

        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(15)
        except subprocess.TimeoutExpired:
            rc = None
        check(rc == 0, f"SIGTERM: stopped with status 0 (got {rc})")
        log.seek(0)
        text = log.read()
        check("certificate reloaded" in text, "the log says the certificate was reloaded")
        check("certificate not reloaded" in text, "the log says why a bad pair was refused")
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(d, ignore_errors=True)
    if FAILS:
        print(f"{len(FAILS)} failed")
        sys.exit(1)
    print("all passed")


if __name__ == "__main__":
    main()
