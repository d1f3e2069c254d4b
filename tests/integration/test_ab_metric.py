"""An A/B job judged on a run counter (issue 40, "Compare on any recorded
figure"): GET /api/v1/compare?job=ID&metric=cpu|faults|instructions pairs
the builds' run counters by pass as it pairs their times (report_ab.c).

One real daemon, one ELF A/B job of two builds ("base", "changed") whose
result is posted with warm.run_counters: the changed build's time per pass
is the base's within 0.2 % noise either way, its CPU time 5 % more in
every pass, its faults the same, and no run counted instructions (no PMU).
So:
  - metric=cpu (REST and `loadlab compare --job ID --metric cpu`) finds
    the changed build slower, "metric": "cpu", exit code 1;
  - metric=faults finds no change; metric=instructions gives the row
    "not counted: <the agent's reason>" and no verdict;
  - the default (and metric=auto) answers the time verdict as before:
    "paired-ratio", no significant change;
  - median/min/over-floor/floor-ratio are refused with a 400 (they compare
    two jobs only);
  - every judged row has detectable_pct from its interval, and
    require_power=1 with a threshold below it says "underpowered";
  - `loadlab compare --job ID` passes --metric: exit 1 for cpu, 2 (no
    row judged) for instructions, 2 (the server's 400) for median.
"""
import hashlib
import math
import random
import subprocess

from harness import LOADLAB, Daemon, run_tests
from schemacheck import validate

PASSES = 40
NO_PMU = "no PMU: perf_event_open(PERF_COUNT_HW_INSTRUCTIONS) says ENOENT"


def warm(times, cpu, faults):
    return {"runs": len(times), "samples_us": times,
            "run_counters": {"counters": ["cpu_user_us", "cpu_system_us", "minor_faults", "major_faults"],
                             "not_counted": {"instructions": NO_PMU, "cycles": NO_PMU},
                             "cpu_user_us": [round(c * 0.7, 1) for c in cpu],
                             "cpu_system_us": [round(c * 0.3, 1) for c in cpu],
                             "minor_faults": faults, "major_faults": [0] * len(times)}}


def result_body(attempt):
    rng = random.Random(40)
    base_t = [round(1000 + rng.gauss(0, 40), 1) for _ in range(PASSES)]
    cand_t = [round(t * (1 + rng.uniform(-0.002, 0.002)), 1) for t in base_t]
    base_c = [round(t * 0.8 + rng.gauss(0, 5), 1) for t in base_t]
    cand_c = [round(c * 1.05 + rng.gauss(0, 1), 1) for c in base_c]
    faults = [300 + rng.randrange(0, 3) for _ in range(PASSES)]
    return {"attempt": attempt, "facts": {"os": "linux"},
            "variants": [{"name": "base:as-built", "build": "base", "preset": "as-built", "valid": True,
                          "warm": warm(base_t, base_c, faults)},
                         {"name": "changed:as-built", "build": "changed", "preset": "as-built", "valid": True,
                          "warm": warm(cand_t, cand_c, list(faults))}],
            "floor": {"warm": warm([round(500 + rng.gauss(0, 20), 1) for _ in range(PASSES)],
                                   [round(400 + rng.gauss(0, 5), 1) for _ in range(PASSES)], faults)}}


def ab_job(d):
    exe = b"\x7fELF a program"
    digest = hashlib.sha256(exe).hexdigest()
    r = d.api("PUT", "/api/v1/blobs/" + digest, exe, token=d.admin_token,
              headers={"Content-Type": "application/octet-stream"})
    assert r.status in (200, 201), r
    token = d.enroll("box", {"os": "linux", "arch": "x86_64"})[1]
    job = d.submit({"name": "ab-metric", "family": "program", "variants": ["as-built"],
                    "matrix": {"each_agent": {}}, "measure": {"warm": {"runs": PASSES}},
                    "program": {"format": "elf", "builds": [
                        {"label": label, "files": {"app": "sha256:" + digest}, "exe": "app"}
                        for label in ("base", "changed")]}})
    lease = d.api("POST", "/api/v1/lease", {}, token=token).json()
    r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], result_body(lease["attempt"]), token=token)
    assert r.status == 200, r
    return job["id"]


def ab(d, job, query=""):
    r = d.api("GET", "/api/v1/compare?job=%d%s" % (job, query), token=d.admin_token)
    assert r.status == 200, (query, r, r.body)
    doc = r.json()
    validate("ab_compare.json", doc)
    assert len(doc["rows"]) == 1, doc
    return doc, doc["rows"][0]


def detectable(low, high):
    """docs/statistics.md, "What a row could have seen" (the per-sample rule)."""
    z, z80, least = 1.959963984540054, 0.8416212335729143, math.log(1.01)
    se = (math.log(high) - math.log(low)) / (2 * z)
    return 100 * (math.exp(max(z * se, least) + z80 * se) - 1)


def test_ab_metric():
    d = Daemon().start()
    try:
        job = ab_job(d)
        # The time: unchanged, and the default answers as before.
        time_doc, time_row = ab(d, job)
        assert time_doc["metric"] == "paired-ratio", time_doc
        assert time_row["status"] == "no_significant_change", time_row
        assert "base_median_us" in time_row and "unit" not in time_row, time_row
        auto_doc, _ = ab(d, job, "&metric=auto")
        assert auto_doc["rows"] == time_doc["rows"], (auto_doc, time_doc)
        # CPU: 5 % more in every pass.
        doc, row = ab(d, job, "&metric=cpu")
        assert doc["metric"] == "cpu", doc
        assert row["status"] == "slower" and row["regression"], row
        assert row["unit"] == "cpu_us" and 4 < row["change_pct"] < 6, row
        assert doc["verdict"] == "regression", doc
        assert abs(row["detectable_pct"] - detectable(row["ci_low"], row["ci_high"])) < 0.02, row
        assert row["floor_ratio"]["ratio"] > 1.03, row
        # Faults: the same in both builds.
        doc, row = ab(d, job, "&metric=faults")
        assert doc["metric"] == "faults" and row["status"] == "no_significant_change", row
        # Instructions: no PMU, said, no verdict, never a zero.
        doc, row = ab(d, job, "&metric=instructions")
        assert row["status"] == "not_comparable" and not row["regression"], row
        assert row["reason"] == "not counted: %s (instructions, build base)" % NO_PMU, row
        assert "ratio" not in row and doc["verdict"] == "not_comparable", doc
        # Time metrics of two jobs' compare: refused, saying why.
        for metric in ("median", "min", "over-floor", "floor-ratio"):
            r = d.api("GET", "/api/v1/compare?job=%d&metric=%s" % (job, metric), token=d.admin_token)
            assert r.status == 400 and "paired by pass" in r.json()["error"]["message"], (metric, r.body)
        # What a row could have seen, and --require-power.
        doc, row = ab(d, job, "&metric=faults&max_regression=0.1&require_power=1")
        assert row["underpowered"] and row["detectable_pct"] > 0.1, row
        assert row["detectable_note"] == "this row could only see changes above %.1f %%" % row["detectable_pct"]
        assert doc["verdict"] == "underpowered" and doc["power"] == {"required": True, "underpowered_rows": 1}
        doc, row = ab(d, job, "&metric=faults&max_regression=50")
        assert "underpowered" not in row and doc["verdict"] == "ok", doc
        # The CLI: the gate's exit code follows the counter.
        base = [LOADLAB, "--server", d.url, "--token", d.admin_token, "compare", "--job", str(job)]
        p = subprocess.run(base + ["--metric", "cpu"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 1 and "slower" in p.stdout, (p.returncode, p.stdout, p.stderr)
        p = subprocess.run(base, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
        p = subprocess.run(base + ["--metric", "instructions"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "not counted: " + NO_PMU in p.stdout, (p.returncode, p.stdout, p.stderr)
        assert "judged by: instructions" in p.stdout, p.stdout
        p = subprocess.run(base + ["--metric", "median"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "paired by pass" in p.stderr, (p.returncode, p.stdout, p.stderr)
        print("loadlab compare --job %d --metric cpu:\n%s" % (job, subprocess.run(
            base + ["--metric", "cpu"], capture_output=True, text=True, timeout=60).stdout))
    finally:
        d.stop()


if __name__ == "__main__":
    run_tests(globals())
