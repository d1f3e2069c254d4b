#!/usr/bin/python3
"""How cost grows with work (issue 16, not part of `make test`).

    /usr/bin/python3 tests/bench/bench_growth.py [BUILD_DIR]

32 agents; the queue grows from 32 to 320, 3,200 and 32,000 queued tasks
(1x, 10x, 100x, 1,000x: jobs of 32 tasks, one per agent), and at each size
this measures, median of several: a lease (POST /api/v1/lease and the
result that completes it, by 16 agents in turn), a job submission
(32 tasks), and the report of a 32-task job with results, while the store
holds every task so far. Prints a table and BENCH lines: each figure's
ratio to the 1x figure (goal for the lease: the same cost at 1,000x, ratio
at most 2).
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
if len(sys.argv) > 1:
    os.environ["LOADLAB_BUILD_DIR"] = os.path.abspath(sys.argv[1])
from harness import Daemon  # noqa: E402

AGENTS = 32
JOB = {"name": "growth", "family": "pe", "generator": {"dlls": 1, "exports": 1},
       "variants": ["default"], "matrix": {"each_agent": {}}}
RESULT = {"facts": {"os": "bench"},
          "variants": [{"name": "default", "warm": {"samples_us": [1000 + i for i in range(30)]}}]}


def ms(f):
    start = time.perf_counter()
    f()
    return (time.perf_counter() - start) * 1000


def lease_and_result(d, token):
    lease = d.api("POST", "/api/v1/lease", {}, token=token)
    assert lease.status == 200, lease
    lease = lease.json()
    r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"],
              dict(RESULT, attempt=lease["attempt"]), token=token)
    assert r.status == 200, r


def queued_tasks(d):
    for line in d.api("GET", "/metrics").body.decode().splitlines():
        if line.startswith('loadlab_tasks{state="queued"} '):
            return int(line.split()[1])
    return -1


def main():
    d = Daemon(["--threads", "8"]).start()
    rows = []
    try:
        tokens = [d.enroll("grow%02d" % i, {"os": "bench"})[1] for i in range(AGENTS)]
        # A finished job to report on at every size.
        report_job = d.submit(JOB)["id"]
        for t in tokens:
            lease_and_result(d, t)
        jobs = 0
        for scale in (1, 10, 100, 1000):
            while jobs < scale:
                d.submit(JOB)
                jobs += 1
            leases = []
            for i in range(16):
                start = time.perf_counter()
                lease_and_result(d, tokens[i % AGENTS])
                leases.append((time.perf_counter() - start) * 1000)
            submits = [ms(lambda: d.submit(JOB)) for _ in range(5)]
            jobs += 5
            reports = [ms(lambda: d.api("GET", "/api/v1/jobs/%d/report" % report_job,
                                        token=d.admin_token)) for _ in range(5)]
            queued = queued_tasks(d)
            rows.append((scale, queued, statistics.median(leases), statistics.median(submits),
                         statistics.median(reports)))
            print("%5dx  %7d queued  lease+result %7.2f ms  submit %7.2f ms  report %7.2f ms"
                  % rows[-1], flush=True)
    finally:
        d.close()
    base = rows[0]
    print("\n%-6s %8s %16s %16s %16s" % ("scale", "queued", "lease+result ms", "submit ms", "report ms"))
    for scale, queued, lease, submit, report in rows:
        print("%-6s %8d %9.2f (%4.2fx) %9.2f (%4.2fx) %9.2f (%4.2fx)"
              % ("%dx" % scale, queued, lease, lease / base[2], submit, submit / base[3], report,
                 report / base[4]))
    last = rows[-1]
    print("BENCH lease_at_1000x %.2f ms %.2f %.2f ratio<=2" % (last[2], base[2], last[2] / base[2]))
    print("BENCH submit_at_1000x %.2f ms %.2f %.2f -" % (last[3], base[3], last[3] / base[3]))
    print("BENCH report_at_1000x %.2f ms %.2f %.2f -" % (last[4], base[4], last[4] / base[4]))


main()
