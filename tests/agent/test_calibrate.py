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
- under Wine with the pe family (failing without wine64 or mingw): 1 ms
  with 300 runs in 3 rounds (and 2 ms) within +-10 %; 200 us with 1,000
  runs in 5 rounds (the most a job takes) within +-25 %, not +-10 %:
  measured on the idle development VM, 200 us read 96.3..118.9 % in
  twelve calibrations of 1,000 runs, 9 of them within +-10 %, 400 us
  99.1..108.2 %, 1 ms 99.5..101.0 % in 3 of 3 (docs/agent.md,
  "Calibration"). Before the wineserver ran on the agent's CPU while it
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


def check_shape(r, family, delay, runs, rounds):
    assert r["family"] == family and r["delay_us"] == delay, r
    assert r["runs"] == runs and r["rounds"] == rounds, r
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


def test_bad_arguments():
    for args in (["--delay-us", "0"], ["--delay-us", "50001"], ["--family", "program"], ["--runs", "0"],
                 ["--rounds", "21"], ["--runs", "2", "--rounds", "3"], ["--delay-us"], ["--what", "1"]):
        p = subprocess.run([harness.AGENT, "calibrate"] + args, capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert "calibrate" in p.stderr, p.stderr


def test_pe_under_wine():
    assert os.path.exists(WINE64), "FAIL: %s not found; scripts/install-deps.sh installs wine64" % WINE64
    assert shutil.which("x86_64-w64-mingw32-gcc"), "FAIL: no mingw-w64 compiler"
    # (X, runs, rounds, tolerance): the module docstring says why 200 us
    # is held to 25 % here.
    # 200 us with the defaults under Wine: 1,000 runs in 5 rounds.
    for delay, runs, rounds, tolerance in ((1000, 300, 3, TOLERANCE), (200, 1000, 5, 0.25)):
        given = ["--runs", str(runs), "--rounds", str(rounds)] if delay != 200 else []
        r, text = calibrate(["--family", "pe", "--delay-us", str(delay)] + given)
        check_shape(r, "pe", delay, runs, rounds)
        assert r["runner"] == "wine", r
        # The wineserver measured beside the programs, its CPU ours.
        assert "companion" in r["measurement_noise"]["source"], r["measurement_noise"]
        print("pe under Wine: recovered %s" % ", ".join(
            "%.1f us of %d (%.1f %%)" % (x["recovered_us"], x["injected_us"], 100 * x["ratio"])
            for x in r["recovered"]), flush=True)
        for got in r["recovered"]:
            assert abs(got["ratio"] - 1) <= tolerance, got
        assert r["within_tolerance"] or tolerance > TOLERANCE, r


harness.run_tests(globals())
