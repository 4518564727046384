#!/usr/bin/python3
"""sched_e2e.py - the measuring half of bench/sched_e2e.sh (python3 stdlib).

Subcommands (URLs are http://127.0.0.1:PORT; every answer on stdout is one
JSON object; errors on stderr with a non-zero exit):

  load FAKE FILE
      POST FILE (a v1 List) to FAKE/fake/load; prints created and seconds.
  wait METRICS N TIMEOUT PID
      polls METRICS/metrics every 0.2 s until carve_binds_total{result=
      "success"} >= N; prints the seconds from the call to that (the
      counter is published as binds are answered or, in a long act step,
      when it ends: so first_bind_s is when the first batch showed), the counter, carve_api_* and carve_cycle_duration_seconds
      figures, and PID's CPU seconds (utime + stime) and peak RSS (VmHWM);
      then waits until PID is quiet (< 5 % CPU over 1 s) and prints the
      same again (quiet_s, quiet, quiet_metrics).
  gang FAKE METRICS FILE N TIMEOUT
      reads the success counter (B), POSTs FILE to FAKE/fake/load, then
      polls METRICS every 2 ms until the counter reaches B + N; prints the
      milliseconds from the load's answer to the poll that saw it (the
      last bind answered, so one round trip and one poll late at most).
  proc PID
      PID's CPU seconds and VmHWM/VmRSS in KiB.
  ceiling FAKE N THREADS
      the fake's own ceiling: loads N bare pods in namespace ceiling (the
      namespace too), binds them from THREADS keep-alive connections as
      fast as answers come back; prints binds/s and the fake's answers.
"""
import http.client
import json
import os
import sys
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")


def die(msg):
    sys.stderr.write("sched_e2e.py: %s\n" % msg)
    sys.exit(1)


def hostport(url):
    if not url.startswith("http://"):
        die("expected http://HOST:PORT, got %r" % url)
    h, _, p = url[len("http://"):].rstrip("/").partition(":")
    return h, int(p)


def request(url, method, path, body=None, timeout=600):
    h, p = hostport(url)
    c = http.client.HTTPConnection(h, p, timeout=timeout)
    try:
        c.request(method, path, body=body,
                  headers={"Content-Type": "application/json"} if body is not None else {})
        r = c.getresponse()
        data = r.read()
        return r.status, data
    finally:
        c.close()


def proc(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            # fields after the command (which may hold spaces) in parentheses
            rest = f.read().rsplit(")", 1)[1].split()
        cpu = (int(rest[11]) + int(rest[12])) / TICK   # utime, stime: fields 14, 15
        st = {}
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmHWM", "VmRSS"):
                    st[k] = int(v.split()[0])
    except (OSError, IndexError, ValueError) as e:
        die("cannot read /proc/%d: %s" % (pid, e))
    return {"cpu_s": cpu, "vmhwm_kib": st.get("VmHWM"), "vmrss_kib": st.get("VmRSS")}


def metrics(url):
    """carve's /metrics as {name{labels}: value} for the series we read."""
    st, data = request(url, "GET", "/metrics", timeout=30)
    if st != 200:
        die("GET %s/metrics: %d" % (url, st))
    out = {}
    for line in data.decode().splitlines():
        if line.startswith("#") or not line.startswith(("carve_binds_total", "carve_api_",
                                                        "carve_cycle_duration_seconds_sum",
                                                        "carve_cycle_duration_seconds_count",
                                                        "carve_bind_duration_seconds_sum",
                                                        "carve_bind_duration_seconds_count")):
            continue
        k, _, v = line.rpartition(" ")
        try:
            out[k] = float(v)
        except ValueError:
            pass
    return out


def binds(m):
    return m.get('carve_binds_total{result="success"}', 0.0)


def cmd_load(fake, path):
    with open(path, "rb") as f:
        body = f.read()
    t0 = time.monotonic()
    st, data = request(fake, "POST", "/fake/load", body)
    dt = time.monotonic() - t0
    if st != 200:
        die("load %s: %d %s" % (path, st, data[:300].decode(errors="replace")))
    ans = json.loads(data)
    print(json.dumps({"created": ans.get("created"), "seconds": round(dt, 3), "bytes": len(body)}))


def cmd_wait(murl, n, timeout, pid):
    t0 = time.monotonic()
    m = {}
    first = None
    while True:
        try:
            m = metrics(murl)
        except OSError:
            m = {}          # not serving yet
        if first is None and binds(m) > 0:
            first = time.monotonic() - t0
        if binds(m) >= n:
            break
        if time.monotonic() - t0 > timeout:
            die("timeout: %d of %d pods bound after %.0f s" % (binds(m), n, timeout))
        time.sleep(0.2)
    out = {"seconds": round(time.monotonic() - t0, 3),
           "first_bind_s": round(first if first is not None else 0, 3), "metrics": m}
    out.update(proc(pid))
    # then until the scheduler is quiet (under 5 % of a CPU over a second:
    # the watch events of its binds handled, the cycle reported), at most
    # 120 s; its metrics then (the loop publishes the client's counters
    # between cycles, so the snapshot above may predate the last cycle's)
    last = proc(pid)["cpu_s"]
    while time.monotonic() - t0 < timeout:
        time.sleep(1.0)
        now = proc(pid)["cpu_s"]
        if now - last < 0.05:
            break
        last = now
    out["quiet_s"] = round(time.monotonic() - t0, 3)
    out["quiet"] = proc(pid)
    out["quiet_metrics"] = metrics(murl)
    print(json.dumps(out))


def cmd_gang(fake, murl, path, n, timeout):
    with open(path, "rb") as f:
        body = f.read()
    h, p = hostport(murl)
    c = http.client.HTTPConnection(h, p, timeout=30)

    def count():
        c.request("GET", "/metrics")
        r = c.getresponse()
        data = r.read()
        for line in data.decode().splitlines():
            if line.startswith('carve_binds_total{result="success"}'):
                return float(line.rpartition(" ")[2])
        return 0.0

    base = count()
    t_send = time.monotonic()
    st, data = request(fake, "POST", "/fake/load", body)
    t0 = time.monotonic()
    if st != 200:
        die("load %s: %d %s" % (path, st, data[:300].decode(errors="replace")))
    polls = 0
    while True:
        v = count()
        polls += 1
        if v >= base + n:
            break
        if time.monotonic() - t0 > timeout:
            die("timeout: %d of %d gang pods bound" % (v - base, n))
        time.sleep(0.002)
    t1 = time.monotonic()
    c.close()
    print(json.dumps({"ms_from_load_answer": round((t1 - t0) * 1e3, 1),
                      "load_ms": round((t0 - t_send) * 1e3, 1), "polls": polls}))


def cmd_ceiling(fake, n, threads):
    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ceiling"}}]
    for i in range(n):
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "c-%06d" % i, "namespace": "ceiling"},
                      "spec": {"schedulerName": "nobody",
                               "containers": [{"name": "main", "image": "registry.example/x:1"}]}})
    st, data = request(fake, "POST", "/fake/load", json.dumps({"items": items}).encode())
    if st != 200:
        die("ceiling load: %d %s" % (st, data[:300]))
    h, p = hostport(fake)
    codes = {}
    lock = threading.Lock()

    def worker(k):
        c = http.client.HTTPConnection(h, p, timeout=60)
        mine = {}
        for i in range(k, n, threads):
            name = "c-%06d" % i
            b = json.dumps({"apiVersion": "v1", "kind": "Binding",
                            "metadata": {"name": name, "namespace": "ceiling"},
                            "target": {"apiVersion": "v1", "kind": "Node", "name": "node-00000"}})
            c.request("POST", "/api/v1/namespaces/ceiling/pods/%s/binding" % name, body=b,
                      headers={"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            mine[r.status] = mine.get(r.status, 0) + 1
        c.close()
        with lock:
            for s, v in mine.items():
                codes[s] = codes.get(s, 0) + v

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    dt = time.monotonic() - t0
    print(json.dumps({"binds": n, "threads": threads, "seconds": round(dt, 3),
                      "binds_per_s": round(n / dt, 1), "codes": {str(k): v for k, v in codes.items()}}))


def main(a):
    try:
        if a[:1] == ["load"] and len(a) == 3:
            return cmd_load(a[1], a[2])
        if a[:1] == ["wait"] and len(a) == 5:
            return cmd_wait(a[1], int(a[2]), float(a[3]), int(a[4]))
        if a[:1] == ["gang"] and len(a) == 6:
            return cmd_gang(a[1], a[2], a[3], int(a[4]), float(a[5]))
        if a[:1] == ["proc"] and len(a) == 2:
            return print(json.dumps(proc(int(a[1]))))
        if a[:1] == ["ceiling"] and len(a) == 4:
            return cmd_ceiling(a[1], int(a[2]), int(a[3]))
    except (OSError, ValueError, http.client.HTTPException) as e:
        die("%s: %s" % (a[0], e))
    die("usage: sched_e2e.py load|wait|gang|proc|ceiling ... (see the file's header)")


if __name__ == "__main__":
    main(sys.argv[1:])
