"""The known-effect self-test's machinery (issue 12; its precision is a
lab check since issue 23): `loadlab-agent calibrate` runs a job of three
variants whose first library's entry point waits 0, X and 2X
microseconds, through the whole pipeline, and reports the cost recovered
(common/src/calibration.c: paired by pass, the median of per-pass
differences, when the samples pair, as the agent's own do).

What is asserted holds on any machine of this kind, busy or quiet: the
JSON's shape and its arithmetic (each figure inside its own interval, the
ratio the figure over the injected cost, "within_tolerance" agreeing with
the figures), the runner and the noise source, the pooling of
consecutive jobs past 1,000 runs, and bad arguments refused. Whether the
cost recovered is within +-10 % is a timing judged against a goal: a
fresh machine of this kind read 71.9 % of 200 us under Wine where another
read 100-103 % (issue 23), so it is measured by `make lab-check`
(tests/lab/lab_calibrate.py) on a quiet machine, not gated on here.

- natively with the elf family: 200 us with 60 runs in 3 rounds;
- natively, over a job's 1,000 runs: calibrate takes consecutive jobs and
  pools their passes (the JSON's runs, rounds and jobs count what was
  pooled);
- under Wine with the pe family (failing without wine64 or mingw): 1 ms
  with 60 runs in 3 rounds, the wineserver measured beside the programs.
Run under the machine's Wine lock (ctest's RESOURCE_LOCK wine)."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402

WINE64 = "/usr/lib/wine/wine64"
TOLERANCE = 0.10


def calibrate(args):
    return harness.agent_calibrate(args, 900)


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


def test_elf_native():
    r, text = calibrate(["--family", "elf", "--delay-us", "200", "--runs", "60", "--rounds", "3"])
    check_shape(r, "elf", 200, 60, 3)
    assert r["runner"] == "native", r
    assert "injected" in text and "recovered" in text and "paired by pass" in text, text


def test_elf_native_pooled_jobs():
    # Over 1,000 runs calibrate takes consecutive jobs and pools their
    # passes: 1,100 runs in 4 rounds are two jobs of 550 runs in 2 rounds.
    r, text = calibrate(["--family", "elf", "--delay-us", "400", "--runs", "1100", "--rounds", "4"])
    check_shape(r, "elf", 400, 1100, 4, jobs=2)
    assert "1100 runs in 4 rounds (2 jobs)" in text, text


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
    r, text = calibrate(["--family", "pe", "--delay-us", "1000", "--runs", "60", "--rounds", "3"])
    check_shape(r, "pe", 1000, 60, 3)
    assert r["runner"] == "wine", r
    # The wineserver measured beside the programs, its CPU ours.
    assert "companion" in r["measurement_noise"]["source"], r["measurement_noise"]


harness.run_tests(globals())
