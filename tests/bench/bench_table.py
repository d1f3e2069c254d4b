#!/usr/bin/python3
"""Collects the machine-readable lines of the benchmarks into one table.

    bench_table.py [FILE...]     (default: standard input)

Every benchmark under tests/bench/ prints, besides its own report, lines

    BENCH name figure unit reference ratio goal

figure and reference are numbers ("-" when there is no reference), ratio
is figure / reference or the like ("-" when none), goal is "-" or one of
ratio>=X, ratio<=X, figure>=X, figure<=X. Prints: what, figure,
reference, ratio, goal, met (yes / NO / -), one row a line, in order of
appearance, and exits 1 when a goal is not met.
"""
import sys


def met(goal, figure, ratio):
    if goal == "-":
        return "-"
    for op in (">=", "<="):
        if op in goal:
            key, bound = goal.split(op)
            value = ratio if key == "ratio" else figure
            if value == "-":
                return "NO"
            ok = float(value) >= float(bound) if op == ">=" else float(value) <= float(bound)
            return "yes" if ok else "NO"
    return "?"


def number(text):
    if text == "-":
        return text
    v = float(text)
    return "%.3g" % v if abs(v) < 10 else "{:,.0f}".format(v)


def main():
    rows = []
    sources = [open(p) for p in sys.argv[1:]] or [sys.stdin]
    for f in sources:
        for line in f:
            fields = line.split()
            if len(fields) == 7 and fields[0] == "BENCH":
                _, name, figure, unit, reference, ratio, goal = fields
                rows.append((name, "%s %s" % (number(figure), unit), number(reference), number(ratio),
                             goal, met(goal, figure, ratio)))
    header = ("what", "figure", "reference", "ratio", "goal", "met")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(6)]
    for r in [header] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return 1 if any(r[5] == "NO" for r in rows) else 0


sys.exit(main())
