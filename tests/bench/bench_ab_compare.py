#!/usr/bin/python3
"""An A/B job's compare and report on a large result (issue 37, item 5;
not part of `make test`).

    /usr/bin/python3 tests/bench/bench_ab_compare.py [BUILD_DIR] [--before LOADLABD]

One ELF A/B job of 4 builds x 3 presets whose one result holds 20,000
passes per variant and for the floor (the probe's job), posted over HTTP as
an agent posts it; once the summarizer is idle: the first compare?job=
(computed), the same again (the report cache's answer), the job's report,
then four anonymous compares and the report at once on a fresh daemon of
the same store (nothing cached) while /healthz is polled every 100 ms: the
wall time and the slowest /healthz. With --before, the same on another
loadlabd (the code before the change): the ratios, and whether the two
gave the same answers byte for byte. Prints BENCH lines for
bench_table.py (`make bench`).
"""
import hashlib
import json
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
BEFORE = None
if "--before" in sys.argv:
    i = sys.argv.index("--before")
    BEFORE = os.path.abspath(sys.argv[i + 1])
    del sys.argv[i:i + 2]
if len(sys.argv) > 1:
    os.environ["LOADLAB_BUILD_DIR"] = os.path.abspath(sys.argv[1])
import harness  # noqa: E402
from harness import Daemon, request  # noqa: E402
from daemon_cpu import cpu_seconds, wait_idle  # noqa: E402

PASSES = 20000
LABELS = ["base", "b1", "b2", "b3"]
PRESETS = ["as-built", "bind-now", "pagein"]


def make_job(d):
    exe = b"\x7fELF a program"
    digest = hashlib.sha256(exe).hexdigest()
    d.api("PUT", "/api/v1/blobs/" + digest, exe, token=d.admin_token,
          headers={"Content-Type": "application/octet-stream"})
    _, token = d.enroll("box", {"os": "linux", "arch": "x86_64"})
    job = d.submit({"name": "ab-bench", "family": "program", "variants": PRESETS,
                    "measure": {"warm": {"runs": 1000}},
                    "program": {"format": "elf", "builds": [
                        {"label": label, "files": {"app": "sha256:" + digest}, "exe": "app"}
                        for label in LABELS]}})["id"]
    lease = d.api("POST", "/api/v1/lease", {}, token=token).json()
    rng = random.Random(37)
    variants = [{"name": "%s:%s" % (label, preset), "build": label, "preset": preset, "valid": True,
                 "warm": {"runs": PASSES,
                          "samples_us": [round(1000 + 4 * i + j + rng.gauss(0, 8), 1)
                                         for _ in range(PASSES)]}}
                for i, label in enumerate(LABELS) for j, preset in enumerate(PRESETS)]
    body = {"attempt": lease["attempt"], "facts": {"os": "linux"}, "variants": variants,
            "floor": {"warm": {"runs": PASSES,
                               "samples_us": [round(600 + rng.gauss(0, 8), 1) for _ in range(PASSES)]}}}
    r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"],
              json.dumps(body, separators=(",", ":")).encode(), token=token,
              headers={"Content-Type": "application/json"}, timeout=120)
    assert r.status == 200, r
    return job


def timed(d, path):
    start = time.perf_counter()
    r = d.api("GET", path, timeout=600)
    assert r.status == 200, r
    return time.perf_counter() - start, r.body


def under_load(d, paths):
    """PATHS at once while /healthz is polled: (wall s, slowest /healthz s)."""
    health, stop = [], threading.Event()

    def poll():
        while not stop.is_set():
            t = time.perf_counter()
            request(d.url + "/healthz", timeout=600)
            health.append(time.perf_counter() - t)
            stop.wait(0.1)

    def one(path):
        r = d.api("GET", path, timeout=600)
        assert r.status == 200, r
    poller = threading.Thread(target=poll)
    poller.start()
    start = time.perf_counter()
    threads = [threading.Thread(target=one, args=(p,)) for p in paths]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    stop.set()
    poller.join()
    return wall, max(health)


def run(loadlabd, data_dir):
    """The figures of one daemon binary on a store made here."""
    harness.LOADLABD = loadlabd
    out = {}
    with Daemon(extra_args=["--public-read"], data_dir=data_dir) as d:
        job = make_job(d)
        wait_idle(d, 300)
        compare, report = "/api/v1/compare?job=%d" % job, "/api/v1/jobs/%d/report" % job
        c0 = cpu_seconds(d)
        out["compare"], out["compare_body"] = timed(d, compare)
        out["compare_cpu"] = cpu_seconds(d) - c0
        out["compare_again"], _ = timed(d, compare)
        out["report"], out["report_body"] = timed(d, report)
    with Daemon(extra_args=["--public-read"], data_dir=data_dir) as d:
        wait_idle(d, 300)
        out["load_wall"], out["healthz_max"] = under_load(d, [compare] * 4 + [report])
    return out


def main():
    import tempfile
    figures = {}
    for name, binary in [("after", harness.LOADLABD)] + ([("before", BEFORE)] if BEFORE else []):
        with tempfile.TemporaryDirectory(prefix="loadlab-bench-ab-") as tmp:
            figures[name] = run(binary, tmp)
        f = figures[name]
        print("%-6s compare %.2f s (cpu %.2f s), again %.3f s, report %.2f s; four compares and the report "
              "at once %.2f s, slowest /healthz %.3f s" % (name, f["compare"], f["compare_cpu"],
                                                           f["compare_again"], f["report"],
                                                           f["load_wall"], f["healthz_max"]))
    a = figures["after"]
    b = figures.get("before")
    if b:
        same = a["compare_body"] == b["compare_body"] and a["report_body"] == b["report_body"]
        print("answers byte for byte the same before and after: %s" % ("yes" if same else "NO"))
        print("BENCH ab_compare_same_answers %d - - - figure>=1" % same)
    for key, goal in [("compare", "ratio<=0.5"), ("compare_again", "ratio<=0.1"), ("report", "ratio<=0.5"),
                      ("load_wall", "ratio<=0.5")]:
        ref = b[key] if b else None
        print("BENCH ab_%s %.1f ms %s %s %s" % (key, a[key] * 1000, "%.1f" % (ref * 1000) if ref else "-",
                                               "%.3f" % (a[key] / ref) if ref else "-", goal if ref else "-"))
    print("BENCH ab_healthz_under_load %.1f ms %s %s figure<=1000" % (
        a["healthz_max"] * 1000, "%.1f" % (b["healthz_max"] * 1000) if b else "-",
        "%.3f" % (a["healthz_max"] / b["healthz_max"]) if b else "-"))


main()
