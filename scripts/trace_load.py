#!/usr/bin/env python3
"""Rough load check of a carve CSV trace on the seed scenario, until the
replay simulator lands: per GPU pool, a greedy minute-by-minute FIFO with
backfill (no quotas, no borrowing, no preemption, no placement: a pool is
one bag of GPU units), reporting utilisation and the share of time some job
of that pool waits.  Usage: trace_load.py TRACE.csv [DAYS]  (docs/seed-trace.md)
"""
import csv
import heapq
import sys

# Units per pool in examples/seed-scenario: 16 H100, 14 x 3g.40gb (production
# owns 12, research may borrow up to 8 of them), 6 x 1g.10gb, 48 L40S replicas.
CAP = {"research nvidia.com/gpu": 16, "nvidia.com/mig-3g.40gb": 14,
       "nvidia.com/mig-1g.10gb": 6, "dev nvidia.com/gpu": 48}


def pool(row):
    g = row["gpu_resource"]
    return f"{row['queue']} {g}" if g == "nvidia.com/gpu" else g


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    end = int(sys.argv[2] if len(sys.argv) > 2 else 7) * 86400
    minutes = end // 60
    any_wait = [False] * minutes
    for p, cap in CAP.items():
        jobs = sorted((int(r["arrival"]), int(r["duration"]),
                       int(r["count"]) * int(float(r["gpu"])))
                      for r in rows if pool(r) == p)
        free, running, queue, i, busy, waited = cap, [], [], 0, 0, 0
        for m in range(minutes):
            t = m * 60
            while running and running[0][0] <= t:
                free += heapq.heappop(running)[1]
            while i < len(jobs) and jobs[i][0] <= t:
                queue.append(jobs[i])
                i += 1
            rest = []
            for j in queue:
                if j[2] <= free:
                    free -= j[2]
                    heapq.heappush(running, (t + j[1], j[2]))
                else:
                    rest.append(j)
            queue = rest
            busy += cap - free
            if queue:
                any_wait[m] = True
                waited += 1
        print(f"{p:26s} jobs {len(jobs):5d}  utilisation {busy / (cap * minutes):.2f}"
              f"  some job waits {waited / minutes:.2f}")
    print(f"some queue waits {sum(any_wait) / minutes:.2f} of the time")


if __name__ == "__main__":
    main()
