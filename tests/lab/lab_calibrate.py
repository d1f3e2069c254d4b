"""The known-effect self-test's precision (issue 12's goal, a lab check
since issue 23): `loadlab-agent calibrate` recovers an injected cost
within +-10 %.

- natively with the elf family: 200 us and 1 ms (and their 2X) with 150
  runs in 3 rounds, and 400 us over 1,100 runs pooled from two jobs;
- under Wine with the pe family: 1 ms with 300 runs in 3 rounds, and
  200 us with Wine's defaults (3,000 runs in 15 rounds, three jobs).

Each recovered cost prints its error, |recovered / injected - 1| in per
cent, against the goal of at most 10, and whether the injected cost lies
in the job's 95 % interval (a within-job interval: issue 23 found it too
narrow across jobs under Wine, see docs/statistics.md). Measured before:
100.5..103.4 % in 11 of 11 Wine calibrations at 200 us on one machine of
this kind, 71.9 % on a fresh one (issue 23); that is why this is a
measurement on a quiet machine and not a test. What holds on any machine
(the JSON's shape, the pooling, the arguments) is tests/agent/
test_calibrate.py's, in `make test`."""
import os

import harness
from labgoal import figure

GOAL = "figure<=10"
WINE64 = "/usr/lib/wine/wine64"


def measure(label, args):
    r, _ = harness.agent_calibrate(args, 1800)
    for x in r["recovered"]:
        lo, hi = x["ci_us"]
        name = "calibrate_%s_%dus" % (label, x["injected_us"])
        figure(name + "_error", 100 * abs(x["ratio"] - 1), "%", GOAL)
        print("%s: recovered %.1f us of %d (%.1f %%), 95 %% interval %.1f..%.1f us%s; %d runs in %d rounds, %d job(s)"
              % (name, x["recovered_us"], x["injected_us"], 100 * x["ratio"], lo, hi,
                 "" if lo <= x["injected_us"] <= hi else " (excludes the injected cost)",
                 r["runs"], r["rounds"], r["jobs"]), flush=True)


def test_elf_native():
    for delay in (200, 1000):
        measure("elf_native", ["--family", "elf", "--delay-us", str(delay), "--runs", "150", "--rounds", "3"])
    measure("elf_native_pooled", ["--family", "elf", "--delay-us", "400", "--runs", "1100", "--rounds", "4"])


def test_pe_under_wine():
    assert os.path.exists(WINE64), "%s not found; scripts/install-deps.sh installs wine64" % WINE64
    measure("pe_wine", ["--family", "pe", "--delay-us", "1000", "--runs", "300", "--rounds", "3"])
    measure("pe_wine_default", ["--family", "pe", "--delay-us", "200"])


if __name__ == "__main__":
    harness.run_tests(globals())
