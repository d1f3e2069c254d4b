"""What a lab check prints: one line per figure it measured, beside its
goal, in the benchmarks' format (tests/bench/bench_table.py reads them):

    BENCH name figure unit - - goal

A lab check never asserts its goal: it measures, prints, and goes on, so
that one missed goal still shows every other figure. `make lab-check`
(tests/lab/run_lab_checks.sh) collects the lines into one table and exits
1 when a goal is not met. What the checks do assert is what holds on any
machine (the JSON's shape, the exit codes): a failed assertion is a broken
check, not a noisy machine."""
import math


def figure(name, value, unit, goal):
    """Prints NAME's VALUE (a number, in UNIT) and its GOAL ("figure>=X",
    "figure<=X"). A value that is not a finite number is printed as a
    missed goal ("-")."""
    ok = isinstance(value, (int, float)) and math.isfinite(value)
    print("BENCH %s %s %s - - %s" % (name, ("%.6g" % value) if ok else "-", unit, goal), flush=True)

