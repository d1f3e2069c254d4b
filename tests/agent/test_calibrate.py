"""The known-effect self-test (issue 12): `loadlab-agent calibrate` runs a
job of three variants whose first library's entry point waits 0, X and 2X
microseconds, through the whole pipeline, and reports the cost recovered
(common/src/calibration.c: paired by pass, the median of per-pass
differences, when the samples pair, as the agent's own do).

- natively with the elf family: 200 us and 1 ms (and their 2X, 400 us and
  2 ms) are recovered within +-10 % with 150 runs in 3 rounds (the
  defaults). Measured on the 2-core development VM with other helpers
  keeping both cores busy (other CPU up to 200 %): 200 us 97.6..106.1 % in
  22 of 22 runs of 150 (and 97.2..107.6 % in 10 of 10 of 60), 1 ms
  99.3..102.3 % in 25 of 25 (docs/agent.md, "Calibration"). Before the
  pairing, 200 us ranged 99.6..117 % and only 400 us and more were
  asserted; the 2X cost above the X cost, the JSON's shape, "paired" and
  the noise fields;
- natively, over a job's 1,000 runs: calibrate takes consecutive jobs and
  pools their passes (the JSON's runs, rounds and jobs count what was
  pooled);
- under Wine with the pe family (failing without wine64 or mingw): 1 ms
  with 300 runs in 3 rounds (and 2 ms) within +-10 %; 200 us (and 400
  us) within +-10 % with Wine's defaults, 3,000 runs in 15 rounds taken
  as three jobs. A start under Wine jitters by some 170 us that pairing by
  pass cannot remove, so 1,000 runs leave the recovered cost a standard
  error of 7-13 us; with them 200 us read 96.3..118.9 % in twelve
  calibrations on a noisy day (9 within +-10 %), 95.8..107 % in eight on
  a quiet one. 3,000 runs read 100.5..103.4 % in 11 of 11 calibrations,
  two of them beside a memory-bound process on the other CPU
  (docs/agent.md, "Calibration"). Before the wineserver ran on the agent's CPU while it
  measures (plat_measure_companion) and every variant read the clock in
  its DllMain, 0 included, 150 runs gave intervals of +-500 us and more.
  The noise source names the server, whose CPU counts as the agent's own.
Run under the machine's Wine lock (ctest's RESOURCE_LOCK wine)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402

WINE64 = "/usr/lib/wine/wine64"
TOLERANCE = 0.10


def calibrate(args):
    with tempfile.TemporaryDirectory(prefix="loadlab-calibrate-test-") as tmp:
        out = os.path.join(tmp, "calibration.json")
        p = subprocess.run([harness.AGENT, "calibrate", "--out", out] + args, capture_output=True, text=True,
                           timeout=900)
        assert p.returncode == 0, p.stderr
        with open(out) as f:
            report = json.load(f)
    print(p.stdout, end="", flush=True)
    return report, p.stdout


def check_shape(r, family, delay, runs, rounds, jobs=1):
    assert r["family"] == family and r["delay_us"] == delay, r
    # runs and rounds are counted in the samples the figures came from
    # (pooled over the jobs when there are several).
    assert r["runs"] == runs and r["rounds"] == rounds and r["jobs"] == jobs, r
    assert [x["injected_us"] for x in r["recovered"]] == [delay, 2 * delay], r["recovered"]
    for x in r["recovered"]:
        lo, hi = x["ci_us"]
        assert lo <= x["recovered_us"] <= hi, x
        assert abs(x["ratio"] - x["recovered_us"] / x["injected_us"]) < 1e-9, x
    assert set(r["medians_us"]) == {"d0", "d%d" % delay, "d%d" % (2 * delay)}, r["medians_us"]
    for name, noise in r["noise"].items():
        assert noise["other_cpu_pct"] is None or noise["other_cpu_pct"] >= 0, (name, noise)
        assert 0 <= noise["retaken"] <= noise["flagged"], (name, noise)
    assert r["measurement_noise"]["source"], r["measurement_noise"]
    assert r["paired"] is True, r  # the agent's own samples always pair by pass
    assert r["tolerance"] == TOLERANCE
    within = all(abs(x["recovered_us"] - x["injected_us"]) <= TOLERANCE * x["injected_us"]
                 for x in r["recovered"])
    assert r["within_tolerance"] == within, r


def test_elf_native_200us_and_1ms():
    for delay in (200, 1000):
        r, text = calibrate(["--family", "elf", "--delay-us", str(delay), "--runs", "150", "--rounds", "3"])
        check_shape(r, "elf", delay, 150, 3)
        assert r["runner"] == "native", r
        assert "injected" in text and "recovered" in text and "paired by pass" in text, text
        x, x2 = r["recovered"]
        assert x2["recovered_us"] > x["recovered_us"] > 0, r["recovered"]
        # Within 10 % from 200 us on (the module docstring), and so agreed.
        for got in r["recovered"]:
            assert abs(got["ratio"] - 1) <= TOLERANCE, got
        assert r["within_tolerance"], r


def test_elf_native_pooled_jobs():
    # Over 1,000 runs calibrate takes consecutive jobs and pools their
    # passes: 1,100 runs in 4 rounds are two jobs of 550 runs in 2 rounds.
    r, text = calibrate(["--family", "elf", "--delay-us", "400", "--runs", "1100", "--rounds", "4"])
    check_shape(r, "elf", 400, 1100, 4, jobs=2)
    assert "1100 runs in 4 rounds (2 jobs)" in text, text
    for got in r["recovered"]:
        assert abs(got["ratio"] - 1) <= TOLERANCE, got


def test_bad_arguments():
    for args in (["--delay-us", "0"], ["--delay-us", "50001"], ["--family", "program"], ["--runs", "0"],
                 ["--runs", "5001"], ["--rounds", "21"], ["--rounds", "101"], ["--runs", "2", "--rounds", "3"],
                 ["--runs", "2500", "--rounds", "2"], ["--runs", "2000", "--rounds", "41"], ["--delay-us"],
                 ["--what", "1"]):
        p = subprocess.run([harness.AGENT, "calibrate"] + args, capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert "calibrate" in p.stderr, p.stderr


def test_pe_under_wine():
    assert os.path.exists(WINE64), "FAIL: %s not found; scripts/install-deps.sh installs wine64" % WINE64
    assert shutil.which("x86_64-w64-mingw32-gcc"), "FAIL: no mingw-w64 compiler"
    # (X, options, runs, rounds, jobs): 1 ms with 300 runs in 3 rounds;
    # 200 us with Wine's defaults, 3,000 runs in 15 rounds, taken as three
    # jobs (the module docstring says why).
    for delay, given, runs, rounds, jobs in ((1000, ["--runs", "300", "--rounds", "3"], 300, 3, 1),
                                             (200, [], 3000, 15, 3)):
        r, text = calibrate(["--family", "pe", "--delay-us", str(delay)] + given)
        check_shape(r, "pe", delay, runs, rounds, jobs)
        assert r["runner"] == "wine", r
        # The wineserver measured beside the programs, its CPU ours.
        assert "companion" in r["measurement_noise"]["source"], r["measurement_noise"]
        print("pe under Wine: recovered %s" % ", ".join(
            "%.1f us of %d (%.1f %%)" % (x["recovered_us"], x["injected_us"], 100 * x["ratio"])
            for x in r["recovered"]), flush=True)
        for got in r["recovered"]:
            assert abs(got["ratio"] - 1) <= TOLERANCE, got
        assert r["within_tolerance"], r


harness.run_tests(globals())
