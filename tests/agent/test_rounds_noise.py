"""Rounds, noise and adaptive runs (issue 12), through `loadlab-agent run`
natively with the elf family: a small real job with measure.warm.rounds 3
and runs "auto", and cold rounds, checked against schemas/result.json and
for consistency (round sizes that add up to the samples, noise fields,
auto's figures); and a CPU-bound process that this test starts (and ends,
by PID) during a job, whose runs must be flagged and taken again."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
from schemacheck import validate  # noqa: E402

GEN = {"dlls": 3, "exports": 20}
THRESHOLD = 25  # MEASURE_NOISE_THRESHOLD_PCT
MAX_RETAKES = 10  # MEASURE_NOISE_MAX_RETAKES


def run_job(job, tmp):
    path = os.path.join(tmp, "job.json")
    out = os.path.join(tmp, "result.json")
    with open(path, "w") as f:
        json.dump(job, f)
    p = subprocess.run([harness.AGENT, "run", path, "--out", out], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        result = json.load(f)
    # The fleet side adds the attempt before it posts.
    validate("result.json", dict(result, attempt=1))
    return result


def programs(result):
    return [(v["name"], v) for v in result["variants"]] + [("(floor)", result["floor"])]


def check_noise(noise, runs):
    for key in ("other_cpu_pct", "max_other_cpu_pct", "disk_ios", "flagged", "retaken"):
        assert key in noise, noise
    assert noise["other_cpu_pct"] is not None and noise["other_cpu_pct"] >= 0, noise
    assert noise["max_other_cpu_pct"] >= noise["other_cpu_pct"], noise
    assert noise["disk_ios"] is not None and noise["disk_ios"] >= 0, noise
    assert 0 <= noise["retaken"] <= min(noise["flagged"], MAX_RETAKES), noise
    # A retake replaces a run: the flagged runs kept are at most the runs.
    assert noise["flagged"] - noise["retaken"] <= runs, noise


def test_rounds_auto_and_noise_fields():
    job = {"name": "rounds", "family": "elf", "generator": GEN, "variants": ["default", "now"],
           "measure": {"warm": {"runs": "auto", "rounds": 3, "warmup": 1, "max_runs": 60,
                                "precision": 0.5},
                       "cold": {"runs": 4, "rounds": 3}}}
    with tempfile.TemporaryDirectory(prefix="loadlab-rounds-") as tmp:
        result = run_job(job, tmp)
    noise = result["measurement"]["noise"]
    assert noise["source"].startswith("linux /proc/stat"), noise
    assert noise["threshold_other_cpu_pct"] == THRESHOLD and noise["max_retakes"] == MAX_RETAKES, noise
    assert result["measurement"]["warm"]["rounds"] == 3 and result["measurement"]["warm"]["auto"] is True
    # Rounds 500 ms apart unless the job says otherwise.
    assert result["measurement"]["warm"]["round_gap_ms"] == 500, result["measurement"]["warm"]
    assert result["measurement"]["cold"]["round_gap_ms"] == 500, result["measurement"]["cold"]
    taken = set()
    for name, p in programs(result):
        warm, cold = p["warm"], p["cold"]
        sizes = warm["round_sizes"]
        # Sweeps of 3 rounds, 10 runs a sweep (4 + 3 + 3), up to the cap.
        assert len(sizes) % 3 == 0 and sum(sizes) == len(warm["samples_us"]) == warm["runs"], (name, sizes)
        assert all(s >= 1 for s in sizes), sizes
        assert sizes[:3] == [4, 3, 3], sizes
        a = warm["auto"]
        assert a["precision"] == 0.5 and a["max_runs"] == 60 and a["runs_taken"] == warm["runs"], a
        # Whole sweeps of 10 runs, until a 50 % interval is reached
        # (usually after the first sweep) or up to the cap. Whether it is
        # reached depends on how noisy the machine is: either way the
        # figures must agree with it.
        assert a["runs_taken"] in (10, 20, 30, 40, 50, 60), a
        assert a["reached"] is True or a["runs_taken"] == 60, a
        check_noise(warm["noise"], warm["runs"])
        taken.add(a["runs_taken"])
        # Cold: 4 runs in rounds of 2, 1, 1, every per-run array that long.
        assert cold["round_sizes"] == [2, 1, 1], cold["round_sizes"]
        for key in ("samples_us", "page_faults", "read_bytes", "cold_runs"):
            assert len(cold[key]) == 4, (name, key)
        check_noise(cold["noise"], 4)
    assert len(taken) == 1, taken  # every program the same number of runs


def test_fixed_runs_split_across_rounds():
    """11 runs in 4 rounds, 3 s apart (measure.warm.round_gap_ms): the
    three pauses make the run take at least 9 s, where the default 500 ms
    pauses and the runs themselves take a few seconds."""
    job = {"name": "split", "family": "elf", "generator": GEN, "variants": ["default"],
           "measure": {"warm": {"runs": 11, "rounds": 4, "warmup": 0, "round_gap_ms": 3000}}}
    with tempfile.TemporaryDirectory(prefix="loadlab-rounds-") as tmp:
        start = time.monotonic()
        result = run_job(job, tmp)
        took = time.monotonic() - start
    assert result["measurement"]["warm"]["round_gap_ms"] == 3000, result["measurement"]["warm"]
    assert took >= 9, took
    for name, p in programs(result):
        assert p["warm"]["round_sizes"] == [3, 3, 3, 2], (name, p["warm"]["round_sizes"])
        assert len(p["warm"]["samples_us"]) == 11 and "auto" not in p["warm"]
    # 11 passes listed, each with every program once.
    assert len(result["measurement"]["warm_order"]) == 11


def test_busy_cpu_is_flagged_and_retaken():
    """Two processes spinning (one per core: whatever CPU the agent pins
    itself to, the other is busy) during the whole job: its runs are
    flagged, and taken again up to the bound."""
    spin = "import time\nend = time.time() + 300\nwhile time.time() < end:\n    pass\n"
    spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
    try:
        job = {"name": "busy", "family": "elf", "generator": GEN, "variants": ["default"],
               "measure": {"warm": {"runs": 20, "rounds": 2, "warmup": 1}}}
        with tempfile.TemporaryDirectory(prefix="loadlab-busy-") as tmp:
            result = run_job(job, tmp)
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    for name, p in programs(result):
        noise = p["warm"]["noise"]
        check_noise(noise, 20)
        assert noise["flagged"] > 0 and noise["retaken"] == MAX_RETAKES, (name, noise)
        assert noise["max_other_cpu_pct"] > THRESHOLD, (name, noise)
        assert len(p["warm"]["samples_us"]) == 20, name


harness.run_tests(globals())
