#!/usr/bin/python3
"""Report and compare latency on a large store (not part of `make test`).

    /usr/bin/python3 tests/bench/bench_reports.py [--rounds R] [BUILD_DIR]

Two jobs of 1,000 tasks (each_agent over 1,000 agents) x 8 variants x 30
warm samples, posted over HTTP as this agent posts them (`warm.round_sizes`,
`warm.noise`, the empty program's `floor.warm`: so compare computes the
over-floor figures of every row; `--rounds R` splits the samples into R
rounds, default 1 as the agent's default `measure.warm.rounds`, so the rows
are per sample; 3 or more makes them rows in rounds) (their summaries are computed in the
background as they arrive), then about 100,000 more stored results (filler
rows written straight into the SQLite file while the daemon is stopped),
then reports and compare, each timed against GET /api/v1/jobs/{id} of the
same job as the floor: the first report computes its 1,000 summaries (the
two jobs' results renumbered after the filler, so that the summarizer,
which queues the 65,536 oldest results without a summary, does not make
them meanwhile); the later requests wait until the summarizer is idle,
so that the daemon's CPU time printed is the request's; the first compare
computes compare's data (no summarizer made it) and caches it, the later
ones read it. Then the summarizer's rate alone, counted in the store's
file: summaries, then compare's data, which it makes after them. Prints
BENCH lines for bench_table.py (`make bench`).
"""
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
ROUNDS = 1
if len(sys.argv) > 2 and sys.argv[1] == "--rounds":
    ROUNDS = int(sys.argv[2])
    del sys.argv[1:3]
if len(sys.argv) > 1:
    os.environ["LOADLAB_BUILD_DIR"] = os.path.abspath(sys.argv[1])
from harness import Daemon, request  # noqa: E402
from daemon_cpu import cpu_seconds, wait_idle  # noqa: E402

AGENTS = 1000
VARIANTS = ["default", "rebase", "bind", "ordinal", "ordinal+rebase", "ordinal+bind", "reorder",
            "no-rebase"]
FILLER = 100000
MOVED = 10 ** 7  # the two jobs' result ids while reports are timed (below)
RUNS = 30


def round_sizes(n):
    """The agent's split of N runs into ROUNDS rounds (the first rounds
    take one more)."""
    return [n // ROUNDS + (1 if r < n % ROUNDS else 0) for r in range(ROUNDS)]


def warm(rng, center):
    return {"runs": RUNS, "samples_us": [round(center + rng.gauss(0, 5), 1) for _ in range(RUNS)],
            "round_sizes": round_sizes(RUNS),
            "noise": {"other_cpu_pct": round(rng.uniform(0, 20), 1),
                      "max_other_cpu_pct": round(rng.uniform(20, 40), 1), "disk_ios": 0,
                      "flagged": 0, "retaken": 0}}


def post_results(d, tokens, seed):
    errors = []

    def work(chunk):
        rng = random.Random(seed * 7919 + len(chunk))
        for token in chunk:
            lease = request(d.url + "/api/v1/lease", "POST", {}, token).json()
            body = {"attempt": lease["attempt"], "facts": {"os": "bench"},
                    "variants": [{"name": v, "valid": True, "warm": warm(rng, 1000 + 10 * i)}
                                 for i, v in enumerate(VARIANTS)],
                    "floor": {"warm": warm(rng, 600)}}
            r = request(d.url + "/api/v1/tasks/%d/result" % lease["task_id"], "POST", body, token)
            if r.status != 200:
                errors.append(r)
    chunks = [tokens[i::16] for i in range(16)]
    threads = [threading.Thread(target=work, args=(c,)) for c in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


def metric(d, name):
    for line in d.api("GET", "/metrics").body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError("no metric " + name)


PROFILE = os.environ.get("LOADLAB_BENCH_PERF")  # a folder: perf record of each phase
# A folder: the compare answers (compare.json, compare_floor_ratio.json) and
# the store after them (loadlab.db), to diff two builds' answers byte for
# byte and time them again on the same data (tests/bench/README.md, pass 7).
SAVE = os.environ.get("LOADLAB_BENCH_SAVE")


def profiled(d, name):
    """perf record -g of the daemon until stop() when LOADLAB_BENCH_PERF
    names a folder (the profile of the benchmark's README)."""
    class Stop:
        def __init__(self):
            self.proc = None
            if PROFILE:
                self.proc = subprocess.Popen(
                    ["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-p",
                     str(d.proc.pid), "-o", os.path.join(PROFILE, name + ".data")],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.5)

        def stop(self):
            if self.proc:
                self.proc.send_signal(signal.SIGINT)
                self.proc.wait()
    return Stop()


def timed(d, path, repeat=1):
    """The best wall time of REPEAT requests, the body's size, and the
    daemon's CPU time for that request: on a busy machine the CPU time
    moves less than the wall time (10 ms ticks)."""
    best = None
    for _ in range(repeat):
        cpu0 = cpu_seconds(d)
        start = time.perf_counter()
        r = d.api("GET", path, token=d.admin_token, timeout=300)
        elapsed = time.perf_counter() - start
        cpu = cpu_seconds(d) - cpu0
        assert r.status == 200, r
        if best is None or elapsed < best[0]:
            best = (elapsed, cpu)
    timed.cpu = best[1]
    timed.body = r.body
    return best[0], len(r.body)


def main():
    d = Daemon(["--threads", "16", "--per-ip-limit", "2000"]).start()
    try:
        start = time.time()
        tokens = []
        for i in range(AGENTS):
            tokens.append(d.enroll("bench%04d" % i, {"os": "bench"})[1])
        job = {"name": "bench", "family": "pe", "generator": {"dlls": 10, "exports": 100},
               "variants": VARIANTS, "matrix": {"each_agent": {}}}
        base = d.submit(job)["id"]
        post_results(d, tokens, 1)
        cand = d.submit(job)["id"]
        post_results(d, tokens, 2)
        posted = time.time()
        print("setup: %d agents, 2 jobs of %d tasks x %d variants x %d samples in %d round(s), "
              "with floors, in %.1f s" % (AGENTS, AGENTS, len(VARIANTS), RUNS, ROUNDS, posted - start))
        while "loadlab_summaries_pending 0\n" not in d.api("GET", "/metrics").body.decode():
            time.sleep(0.1)
        print("background summaries done %.1f s after the last result" % (time.time() - posted))
        data_dir = d.data_dir
        d.stop()
        db = sqlite3.connect(os.path.join(data_dir, "loadlab.db"))
        body = json.dumps({"attempt": 1, "facts": {}, "variants": [
            {"name": "default", "warm": {"samples_us": [1000.0] * 30}}]})
        db.executemany("INSERT INTO results (task_id, attempt, agent_id, body, created_at) "
                       "VALUES (?, ?, 1, ?, 0)",
                       ((10 ** 9 + i, 1, body) for i in range(FILLER)))
        db.commit()
        # The first report below computes every summary itself (as after a
        # summarizer queue overflow), the later ones read them cached: the
        # two jobs' results are renumbered after the filler, so that the
        # summarizer's queue (the 65,536 oldest results without a summary)
        # holds filler only and does not race the report.
        db.execute("DELETE FROM result_summaries")
        db.execute("UPDATE results SET id = id + ? WHERE id <= ?", (MOVED, 2 * AGENTS))
        db.commit()
        stored = db.execute("SELECT count(*) FROM results").fetchone()[0]
        db.close()
        d.start()
        samples = 2 * AGENTS * len(VARIANTS) * 30
        print("store: %d results; the two jobs hold %d samples" % (stored, samples))
        floor, size = timed(d, "/api/v1/jobs/%d" % base, 3)
        print("floor: GET /api/v1/jobs/%d (1000 tasks)      %8.1f ms  (%d bytes)"
              % (base, floor * 1000, size))
        p = profiled(d, "report_on_demand")
        first, size = timed(d, "/api/v1/jobs/%d/report" % base)
        p.stop()
        print("report, summaries computed on demand   %8.1f ms  (%d bytes)  ratio %.1f  cpu %.0f ms"
              % (first * 1000, size, first / floor, timed.cpu * 1000))
        # The rest is timed once the summarizer is idle (it summarizes the
        # filler and makes compare's data in the background), so that the
        # daemon's CPU time is the request's.
        timed(d, "/api/v1/jobs/%d/report" % cand)  # the candidate's summaries, untimed
        print("summarizer idle after %.1f s more" % wait_idle(d, 180))
        cached, size = timed(d, "/api/v1/jobs/%d/report" % base, 3)
        print("report, cached summaries               %8.1f ms  (%d bytes)  ratio %.1f  cpu %.0f ms"
              % (cached * 1000, size, cached / floor, timed.cpu * 1000))
        md, size = timed(d, "/api/v1/jobs/%d/report?format=md" % base, 3)
        print("report as Markdown                     %8.1f ms  (%d bytes)  ratio %.1f"
              % (md * 1000, size, md / floor))
        # Compare's data is not cached yet (the summarizer never queued
        # these results): the first compare computes it and caches it.
        first_cmp, size = timed(d, "/api/v1/compare?baseline=%d&candidate=%d" % (base, cand))
        print("compare, its data computed and cached   %8.1f ms  (%d bytes)  ratio %.1f  cpu %.0f ms"
              % (first_cmp * 1000, size, first_cmp / floor, timed.cpu * 1000))
        wait_idle(d, 180)  # the store's checkpoint after that write
        p = profiled(d, "compare")
        cmp, size = timed(d, "/api/v1/compare?baseline=%d&candidate=%d" % (base, cand), 3)
        p.stop()
        cmp_body = timed.body
        print("compare (%d rows, %d samples)         %8.1f ms  (%d bytes)  ratio %.1f  cpu %.0f ms"
              % (AGENTS * len(VARIANTS), samples, cmp * 1000, size, cmp / floor, timed.cpu * 1000))
        # The metric floor-ratio computes one more interval per row (from
        # the over-floor draws: cached ranks, or drawn again with rounds).
        ratio_cmp, size = timed(d, "/api/v1/compare?baseline=%d&candidate=%d&metric=floor-ratio"
                                % (base, cand), 3)
        ratio_body = timed.body
        print("compare --metric floor-ratio            %8.1f ms  (%d bytes)  ratio %.1f  cpu %.0f ms"
              % (ratio_cmp * 1000, size, ratio_cmp / floor, timed.cpu * 1000))
        print("BENCH report_on_demand %.1f ms %.1f %.2f figure<=1000" % (first * 1000, floor * 1000,
                                                                      first / floor))
        print("BENCH report_cached %.1f ms %.1f %.2f -" % (cached * 1000, floor * 1000, cached / floor))
        print("BENCH compare_1000x8 %.1f ms %.1f %.2f figure<=200" % (cmp * 1000, floor * 1000,
                                                                    cmp / floor))
        print("BENCH compare_1000x8_floor_ratio %.1f ms %.1f %.2f figure<=200" % (
            ratio_cmp * 1000, floor * 1000, ratio_cmp / floor))
        # The summarizer alone: every summary dropped again, the daemon
        # restarted; it queues the unsummarized results, oldest (the two
        # jobs' 8-variant results) first. Its rate over a few seconds.
        d.stop()
        if SAVE:
            os.makedirs(SAVE, exist_ok=True)
            for name, body in (("compare.json", cmp_body), ("compare_floor_ratio.json", ratio_body)):
                with open(os.path.join(SAVE, name), "wb") as f:
                    f.write(body)
            shutil.copyfile(os.path.join(data_dir, "loadlab.db"), os.path.join(SAVE, "loadlab.db"))
        db = sqlite3.connect(os.path.join(data_dir, "loadlab.db"))
        db.execute("DELETE FROM result_summaries")
        db.execute("UPDATE results SET id = id - ? WHERE id > ?", (MOVED, MOVED))
        db.commit()
        db.close()
        # Timed from the daemon's answering until the two jobs' 2,000
        # results (the first in its queue; the filler's 1-variant results
        # after them would inflate the rate) have their summaries in the
        # store's file, counted there. Under LOADLAB_BENCH_PERF perf's
        # start counts against the rate.
        d.start()
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(data_dir, "loadlab.db"), uri=True)

        def made(column):
            return db.execute("SELECT count(*) FROM result_summaries WHERE %s IS NOT NULL"
                              " AND result_id <= ?" % column, (2 * AGENTS,)).fetchone()[0]
        t0, c0 = time.perf_counter(), cpu_seconds(d)
        done0 = done = made("body")
        p = profiled(d, "summarizer")
        while done < 2 * AGENTS and time.perf_counter() - t0 < 60:
            time.sleep(0.01)
            done = made("body")
        t1, c1 = time.perf_counter(), cpu_seconds(d)
        p.stop()
        rate = (done - done0) / (t1 - t0)
        print("summarizer: %.0f results/s (8 variants x 30 samples each), %.0f per CPU second"
              " (%d made before the timing began)"
              % (rate, (done - done0) / max(c1 - c0, 0.01), done0))
        print("BENCH summarizer %.0f results/s - - figure>=2000" % rate)
        # Compare's data comes after every queued summary (summary.h): the
        # two jobs' results (the first in its queue) timed from the moment
        # no summary waits (before this pass it was made with the summary).
        while metric(d, "loadlab_summaries_pending") > 0 and time.perf_counter() - t0 < 180:
            time.sleep(0.05)
        t2, c2, n = time.perf_counter(), cpu_seconds(d), 0
        while n < 2 * AGENTS and time.perf_counter() - t2 < 120:
            time.sleep(0.05)
            n = made("compare")
        t3, c3 = time.perf_counter(), cpu_seconds(d)
        db.close()
        print("compare data after the summaries: %.0f results/s, %.0f per CPU second"
              % (n / (t3 - t2), n / max(c3 - c2, 0.01)))
    finally:
        d.close()


main()
