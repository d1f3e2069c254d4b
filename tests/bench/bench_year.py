#!/usr/bin/python3
"""A year of a lab (issue 30, not part of `make test`).

    /usr/bin/python3 tests/bench/bench_year.py [BUILD_DIR] [--days N]

First the store's cost per stored thing: bytes per result of an 8-variant
job with 30 warm runs per variant (its summary and compare data included),
and the disk bytes per blob (4 KiB and 1 MiB files; the store holds no
row per blob). Then a year of a 100-agent nightly matrix: one job a day in
one series (2 variants, 30 runs, one task per agent), and at day 2, 30,
90, 180 and 365 (or N) the latency, median of 3, of the newest job's
report, its comparison with the day before (with the between-job term
from the series' history, the default, and within-job only), and the
series; then the
growth of the store and what a retention of 30 points and a compaction
return. Prints a table and BENCH lines: each figure's ratio to day 30.
"""
import os
import hashlib
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
if args:
    os.environ["LOADLAB_BUILD_DIR"] = os.path.abspath(args[0])
from harness import Daemon, request, wait_for  # noqa: E402

DAYS = int(sys.argv[sys.argv.index("--days") + 1]) if "--days" in sys.argv else 365
AGENTS = 100
SERIES = "bench/nightly"
EIGHT = ["default", "rebase", "bind", "ordinal", "ordinal+rebase", "ordinal+bind", "reorder", "no-rebase"]


def ms(f):
    start = time.perf_counter()
    f()
    return (time.perf_counter() - start) * 1000


def metric(d, name):
    for line in d.api("GET", "/metrics").body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return -1


def result(attempt, names, day):
    return {"attempt": attempt, "facts": {"os": "bench"},
            "variants": [{"name": n, "valid": True,
                          "warm": {"runs": 30, "samples_us": [1000 + 10 * k + (i * 7 + day) % 13
                                                              for i in range(30)]}}
                         for k, n in enumerate(names)]}


def run_job(d, tokens, job, names, day):
    """Submits JOB and plays every agent's task, 16 at a time."""
    d.submit(job)
    unclaimed = list(tokens)
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not unclaimed:
                    return
                token = unclaimed.pop()
            lease = request(d.url + "/api/v1/lease", "POST", {}, token, timeout=60)
            assert lease.status == 200, lease
            t = lease.json()
            r = request(d.url + "/api/v1/tasks/%d/result" % t["task_id"], "POST",
                        result(t["attempt"], names, day), token, timeout=60)
            assert r.status == 200, r

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


def settle(d):
    wait_for("summaries", lambda: metric(d, "loadlab_summaries_pending") == 0, timeout=3600, interval=0.5)


def store_bytes(d):
    settle(d)
    return metric(d, "loadlab_store_bytes")


def cost_per_thing(d, tokens):
    before = store_bytes(d)
    run_job(d, tokens, {"name": "eight", "family": "pe", "generator": {"dlls": 2, "exports": 10},
                        "variants": EIGHT, "matrix": {"each_agent": {}}}, EIGHT, 0)
    for job in d.api("GET", "/api/v1/jobs?limit=1", token=d.admin_token).json()["jobs"]:
        d.api("GET", "/api/v1/jobs/%d/report" % job["id"], token=d.admin_token)  # compare data cached
    per_result = (store_bytes(d) - before) / AGENTS
    sizes = {}
    for size in (4096, 1 << 20):
        used = 0
        for i in range(20):
            content = (b"%d-%d-" % (size, i)) * (size // 8)
            content = content[:size]
            name = hashlib.sha256(content).hexdigest()
            r = d.api("PUT", "/api/v1/blobs/" + name, content, token=d.admin_token,
                      headers={"Content-Type": "application/octet-stream"})
            assert r.status == 201, r
            used += os.stat(os.path.join(d.data_dir, "blobs", name[:2], name[2:])).st_blocks * 512
        sizes[size] = used / 20
    return per_result, sizes


def main():
    d = Daemon(["--threads", "8"]).start()
    rows = []
    try:
        tokens = [d.enroll("lab%03d" % i, {"os": "bench"})[1] for i in range(AGENTS)]
        per_result, blob_bytes = cost_per_thing(d, tokens)
        print("store bytes per result (8 variants x 30 runs, summary and compare data): %.0f" % per_result)
        for size, used in blob_bytes.items():
            print("disk bytes per blob of %d bytes: %.0f (the store: none)" % (size, used))
        checkpoints = [c for c in (2, 30, 90, 180, 365) if c <= DAYS] + ([DAYS] if DAYS not in (2, 30, 90, 180, 365) else [])
        names = ["default", "rebase"]
        ids = []
        for day in range(1, DAYS + 1):
            run_job(d, tokens, {"name": "night%d" % day, "family": "pe", "series": SERIES,
                                "revision": "d%d" % day, "generator": {"dlls": 2, "exports": 10},
                                "variants": names, "matrix": {"each_agent": {}}}, names, day)
            ids.append(d.api("GET", "/api/v1/jobs?limit=1", token=d.admin_token).json()["jobs"][0]["id"])
            if day not in checkpoints:
                continue
            size = store_bytes(d)
            report = statistics.median(ms(lambda: d.api("GET", "/api/v1/jobs/%d/report" % ids[-1],
                                                        token=d.admin_token, timeout=3600)) for _ in range(3))
            query = "/api/v1/compare?baseline=%d&candidate=%d" % (ids[-2], ids[-1])
            compare = statistics.median(ms(lambda: d.api("GET", query, token=d.admin_token, timeout=3600))
                                        for _ in range(3))
            within = statistics.median(ms(lambda: d.api("GET", query + "&intervals=within-job",
                                                        token=d.admin_token, timeout=3600)) for _ in range(3))
            series = statistics.median(ms(lambda: d.api("GET", "/api/v1/series/bench%2Fnightly",
                                                        token=d.admin_token, timeout=3600)) for _ in range(3))
            rows.append((day, day * AGENTS, size / 1e6, report, compare, series, within))
            print("day %3d  %6d results  store %7.1f MB  report %7.2f ms  compare %7.2f ms  series %7.2f ms"
                  "  compare within-job %7.2f ms" % rows[-1], flush=True)
        d.api("PUT", "/api/v1/series/bench%2Fnightly", {"retain_points": 30}, token=d.admin_token)
        compact = d.api("POST", "/api/v1/admin/compact", {}, token=d.admin_token, timeout=3600).json()
        print("retain_points 30 + compaction: %d results pruned, store %.1f -> %.1f MB"
              % (compact["pruned_results"], compact["bytes_before"] / 1e6, compact["bytes_after"] / 1e6))
        start = time.perf_counter()
        full = d.api("POST", "/api/v1/admin/compact", {"full": True}, token=d.admin_token, timeout=3600).json()
        print("full compaction (VACUUM): store %.1f -> %.1f MB in %.1f s"
              % (full["bytes_before"] / 1e6, full["bytes_after"] / 1e6, time.perf_counter() - start))
    finally:
        d.close()
    base = rows[1] if len(rows) > 1 else rows[0]
    print("\n%-5s %8s %9s %16s %16s %16s %16s" % ("day", "results", "store MB", "report ms", "compare ms",
                                                   "series ms", "within-job ms"))
    for day, n, size, report, compare, series, within in rows:
        print("%-5d %8d %9.1f %9.2f (%4.2fx) %9.2f (%4.2fx) %9.2f (%4.2fx) %9.2f (%4.2fx)"
              % (day, n, size, report, report / base[3], compare, compare / base[4], series,
                 series / base[5], within, within / base[6]))
    last = rows[-1]
    print("BENCH store_bytes_per_result_8x30 %.0f B - - -" % per_result)
    print("BENCH year_report_day%d %.2f ms %.2f %.2f -" % (last[0], last[3], base[3], last[3] / base[3]))
    print("BENCH year_compare_day%d %.2f ms %.2f %.2f -" % (last[0], last[4], base[4], last[4] / base[4]))
    print("BENCH year_series_day%d %.2f ms %.2f %.2f -" % (last[0], last[5], base[5], last[5] / base[5]))
    print("BENCH year_compare_within_job_day%d %.2f ms %.2f %.2f -" % (last[0], last[6], base[6],
                                                                        last[6] / base[6]))


main()
