#!/usr/bin/python3
"""Coverage of the intervals across jobs (issue 23): are the intervals
honest? A measurement, not a test (docs/statistics.md, "Intervals across
jobs"; DESIGN.md, "Trusting a verdict").

    bench_intervals.py [BUILD_DIR] [--jobs N] [--skip-wine] [--skip-native]

A real loadlabd (127.0.0.1, port 0, tests/integration/harness.py) and one
real Linux loadlab-agent; the same calibration job (`loadlab calibrate
--agent NAME --wait`, three variants waiting 0, X and 2X us) repeated N
times (default 20) on that agent, natively (elf, 200 us, 100 runs in 4
rounds) and under Wine (pe, 1 ms, 100 runs in 4 rounds; the agent's own
private WINEPREFIX, WINEDEBUG=-all and wineserver, stopped by the agent;
whatever is left under its data folder is ended by PID at the end). For
each family it prints:

- coverage: how many 95 % intervals of the recovered cost contain the
  injected X, within-job ("ci_us") and with the between-job term: the
  daemon's ("interval_us", tau from the agent's calibrations before it, so
  only jobs with 3 or more before count) and leave-one-out (tau from the
  other N - 1 jobs, computed here by the same DerSimonian-Laird formula);
- A/A: the share of compare rows called significant among all pairs of
  those jobs, through GET /api/v1/compare with its default metric (each
  row's interval within-job or widened, as the daemon says), and beside
  it the same pairs with ?intervals=within-job and by the old default
  (the median, within-job);

with the goals beside them: coverage >= 90 %, A/A false positives <= 5 %,
and BENCH lines for bench_table.py. About 25 minutes here on a loaded
2-core machine (a Wine job of 200 runs took 125-150 s there, 100 runs
about half; the native jobs some 15-20 s each).
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
if args:
    os.environ.setdefault("LOADLAB_BUILD_DIR", os.path.abspath(args[0]))
os.environ.setdefault("LOADLAB_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..")))
import harness  # noqa: E402

Z95 = 1.959963984540054
JOBS = 20
for i, a in enumerate(sys.argv):
    if a == "--jobs":
        JOBS = int(sys.argv[i + 1])
PLANS = []
if "--skip-native" not in sys.argv:
    PLANS.append(("elf", 200, 100, 4))
if "--skip-wine" not in sys.argv:
    PLANS.append(("pe", 1000, 100, 4))
COVERAGE_GOAL = 90.0
FALSE_POSITIVE_GOAL = 5.0


def cli(d, *a, timeout=900):
    p = subprocess.run([harness.LOADLAB, "--server", d.url, "--token", d.admin_token] + list(a),
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def agent_named(d, name):
    r = d.api("GET", "/api/v1/agents", token=d.admin_token)
    assert r.status == 200, r
    return {a["name"]: a for a in r.json()["agents"]}.get(name)


def dl_tau2(values, variances):
    """DerSimonian-Laird's tau^2 (one group), as stats_between_variance()."""
    w = [1 / v for v in variances]
    mean = sum(a * b for a, b in zip(w, values)) / sum(w)
    q = sum(a * (b - mean) ** 2 for a, b in zip(w, values))
    c = sum(w) - sum(a * a for a in w) / sum(w)
    return max(0.0, (q - (len(values) - 1)) / c) if c > 0 else 0.0


def variance_of(ci):
    return max(((ci[1] - ci[0]) / (2 * Z95)) ** 2, 0.01)


def widened(value, ci, tau2):
    lo = value - math.sqrt(max(value - ci[0], 0) ** 2 + Z95 * Z95 * tau2)
    hi = value + math.sqrt(max(ci[1] - value, 0) ** 2 + Z95 * Z95 * tau2)
    return lo, hi


def pct(n, total):
    return 100.0 * n / total if total else float("nan")


def verdict(value, goal, at_least):
    if value != value:
        return "-"
    return "met" if (value >= goal if at_least else value <= goal) else "not met"


def run_family(d, agent_name, family, delay, runs, rounds):
    cals, job_ids = [], []
    started = time.time()
    for i in range(JOBS):
        code, out, err = cli(d, "calibrate", "--agent", agent_name, "--family", family, "--delay-us",
                             str(delay), "--runs", str(runs), "--rounds", str(rounds), "--wait")
        m = re.match(r"job (\d+):", out)
        if code != 0 or not m:
            print("%s job %d failed: %s %s" % (family, i + 1, out[-500:], err[-500:]), flush=True)
            continue
        job_id = int(m.group(1))
        cal = None
        for _ in range(40):
            cal = (agent_named(d, agent_name) or {}).get("last_calibration")
            if cal and cal.get("job_id") == job_id:
                break
            time.sleep(0.25)
        if not cal or cal.get("job_id") != job_id or not cal.get("ci_us"):
            print("%s job %d: no calibration recorded" % (family, job_id), flush=True)
            continue
        job_ids.append(job_id)
        cals.append(cal)
        print("%s job %d (%d/%d, %.0f s): recovered %.1f us of %d, within-job [%.1f, %.1f], %s [%.1f, %.1f]"
              % (family, job_id, i + 1, JOBS, time.time() - started, cal["recovered_us"], delay,
                 cal["ci_us"][0], cal["ci_us"][1], cal["interval_scope"], cal["interval_us"][0],
                 cal["interval_us"][1]), flush=True)
    n = len(cals)
    within = sum(c["ci_us"][0] <= delay <= c["ci_us"][1] for c in cals)
    daemon = [c for c in cals if c["interval_scope"] == "within-and-between-jobs"]
    daemon_in = sum(c["interval_us"][0] <= delay <= c["interval_us"][1] for c in daemon)
    loo_in = 0
    for i, c in enumerate(cals):
        others = [x for j, x in enumerate(cals) if j != i]
        tau2 = dl_tau2([x["recovered_us"] for x in others], [variance_of(x["ci_us"]) for x in others]) \
            if len(others) >= 3 else 0.0
        lo, hi = widened(c["recovered_us"], c["ci_us"], tau2)
        loo_in += lo <= delay <= hi
    tau_all = math.sqrt(dl_tau2([x["recovered_us"] for x in cals], [variance_of(x["ci_us"]) for x in cals])) \
        if n >= 3 else float("nan")
    # A/A: every pair of the repeated jobs, the daemon's default metric;
    # beside it the same pairs within-job, and by the old default (the
    # median, within-job).
    rows = {"within-job": [0, 0], "within-and-between-jobs": [0, 0]}
    others = {"&intervals=within-job": [0, 0], "&metric=median&intervals=within-job": [0, 0]}
    metrics = {}
    for a in range(len(job_ids)):
        for b in range(a + 1, len(job_ids)):
            for query in [""] + list(others):
                r = harness.request(d.url + "/api/v1/compare?baseline=%d&candidate=%d%s"
                                    % (job_ids[a], job_ids[b], query), token=d.admin_token, timeout=120)
                assert r.status == 200, r
                for row in r.json()["rows"]:
                    if row["status"] == "not_comparable":
                        continue
                    if query:
                        others[query][0] += 1
                        others[query][1] += bool(row["significant"])
                        continue
                    scope = row["interval_scope"]
                    rows[scope][0] += 1
                    rows[scope][1] += bool(row["significant"])
                    metrics[row["metric"]] = metrics.get(row["metric"], 0) + 1
    total = rows["within-job"][0] + rows["within-and-between-jobs"][0]
    called = rows["within-job"][1] + rows["within-and-between-jobs"][1]
    return {"family": family, "delay": delay, "runs": runs, "rounds": rounds, "n": n,
            "within": within, "daemon_n": len(daemon), "daemon_in": daemon_in, "loo_in": loo_in,
            "tau_all": tau_all, "rows": rows, "total": total, "called": called, "metrics": metrics,
            "within_only": others["&intervals=within-job"],
            "old_default": others["&metric=median&intervals=within-job"],
            "seconds": time.time() - started,
            "mean_recovered": sum(c["recovered_us"] for c in cals) / n if n else float("nan")}


def table(results):
    print()
    print("Intervals across jobs: coverage and A/A false positives (%s UTC, %d cores)"
          % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), os.cpu_count()))
    print("%-34s %-22s %-18s %-8s" % ("figure", "value", "goal", "verdict"))
    for r in results:
        head = "%s, %d us, %d runs in %d rounds, %d jobs (%.0f s): mean recovered %.1f us, tau %.1f us" % (
            r["family"], r["delay"], r["runs"], r["rounds"], r["n"], r["seconds"], r["mean_recovered"],
            r["tau_all"])
        print(head)
        lines = [
            ("coverage, within-job", r["within"], r["n"], COVERAGE_GOAL, True),
            ("coverage, + between (daemon)", r["daemon_in"], r["daemon_n"], COVERAGE_GOAL, True),
            ("coverage, + between (leave-one-out)", r["loo_in"], r["n"], COVERAGE_GOAL, True),
            ("A/A called, all rows", r["called"], r["total"], FALSE_POSITIVE_GOAL, False),
            ("A/A called, within-job rows", r["rows"]["within-job"][1], r["rows"]["within-job"][0],
             FALSE_POSITIVE_GOAL, False),
            ("A/A called, widened rows", r["rows"]["within-and-between-jobs"][1],
             r["rows"]["within-and-between-jobs"][0], FALSE_POSITIVE_GOAL, False),
            ("A/A called, default, within-job", r["within_only"][1], r["within_only"][0],
             FALSE_POSITIVE_GOAL, False),
            ("A/A called, median within-job (old)", r["old_default"][1], r["old_default"][0],
             FALSE_POSITIVE_GOAL, False),
        ]
        for name, k, total, goal, at_least in lines:
            value = pct(k, total)
            print("  %-36s %4d of %-4d %6.1f %%   %s %4.1f %%   %s" % (
                name, k, total, value, ">=" if at_least else "<=", goal, verdict(value, goal, at_least)))
        print("  rows judged by: %s" % ", ".join("%s %d" % kv for kv in sorted(r["metrics"].items())))
    for r in results:
        tag = r["family"]
        for name, k, total, goal, key in (
                ("coverage_within_job", r["within"], r["n"], COVERAGE_GOAL, "figure>="),
                ("coverage_between_daemon", r["daemon_in"], r["daemon_n"], COVERAGE_GOAL, "figure>="),
                ("coverage_between_loo", r["loo_in"], r["n"], COVERAGE_GOAL, "figure>="),
                ("aa_false_positive", r["called"], r["total"], FALSE_POSITIVE_GOAL, "figure<=")):
            value = pct(k, total)
            print("BENCH intervals_%s_%s %s %% - - %s%g" % (tag, name, "-" if value != value else "%.1f" % value,
                                                              key, goal))


def main():
    results = []
    d = harness.Daemon().start()
    data_dir = tempfile.mkdtemp(prefix="bench-intervals-")
    log = open(os.path.join(data_dir, "agent.log"), "wb")
    env = dict(os.environ, WINEDEBUG="-all")
    agent = subprocess.Popen([harness.AGENT, "--server", d.url, "--enroll-token", d.enroll_token,
                              "--data-dir", os.path.join(data_dir, "data"), "--name", "bench-intervals"],
                             stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
    try:
        harness.wait_for("the agent to enroll", lambda: agent_named(d, "bench-intervals"), timeout=60)
        for family, delay, runs, rounds in PLANS:
            results.append(run_family(d, "bench-intervals", family, delay, runs, rounds))
            table(results[-1:])
    finally:
        harness.stop_process(agent, 60)
        log.close()
        harness.kill_processes_under(data_dir)
        shutil.rmtree(data_dir, ignore_errors=True)
        d.close()
    table(results)


main()
