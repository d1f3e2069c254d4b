"""The floor ratio unpaired (today's compare) or paired by pass (issue 12):
an offline study on real results. Not a test; run by hand.

  collect OUT.json [--pairs N] [--burn K] [--runs R] [--variants A,B]
      a real loadlabd and one real Linux agent (the build in
      LOADLAB_BUILD_DIR, default ./build); N times (default 8) the verdict
      tests' base job (elf, 10 x 100) and then its bigger twin (11 x 100),
      each with the four presets (or A,B), R (40) warm runs in 5 rounds; two CPU-bound
      processes beside base job number K (default: none). Writes every
      result's warm samples, round sizes and the floor's to OUT.json.
  analyze OUT.json [...]
      for every pair of same-job results (nothing changed: a row called a
      change is a false positive) and every (base, bigger) pair on
      `default` (a real +3-5 % change): the floor ratio's 95 % interval as
      compare computes it today (variant and floor resampled on their own,
      rounds then samples) and paired (r_k = v_k / f_k per pass k, the
      median of r, rounds then passes resampled); widths, false positive
      and detection rates; and how r_k moves within a run.

The agent's warm timer takes samples in passes (agent/measure/
measure_sample.c): pass k runs every program once, variants and floor, in a
fresh shuffle, into slot k, so v_k and f_k were taken milliseconds apart.
"""
import itertools
import json
import os
import random
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

RESAMPLES = int(os.environ.get("STUDY_RESAMPLES", "1000"))
MIN_EFFECT = 1.0  # % (REPORT_MIN_EFFECT_PCT)


def collect(out, pairs, burn_at, runs, variants):
    import harness
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab"))
    import lab_verdicts as tv

    tv.MEASURE["warm"]["runs"] = runs

    spin = "import time\nend = time.time() + 200\nwhile time.time() < end:\n    pass\n"
    burners = []
    runs = []
    with harness.Daemon() as d:
        lab = tv.Lab(d, "paired-study")
        try:
            for i in range(pairs):
                for kind, gen in (("base", tv.BASE_GEN), ("bigger", tv.BIGGER_GEN)):
                    during = None
                    if kind == "base" and i == burn_at:
                        def during(job_id):
                            burners.extend(subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2))
                    try:
                        job_id, result = lab.run(tv.job("paired-" + kind, gen, variants), during)
                    finally:
                        for p in burners:
                            p.kill()
                            p.wait()
                        burners.clear()
                    programs = {v["name"]: v["warm"] for v in result["variants"]}
                    programs["floor"] = result["floor"]["warm"]
                    runs.append({"job": job_id, "kind": kind, "burned": kind == "base" and i == burn_at,
                                 "programs": {n: {"samples_us": w["samples_us"],
                                                  "round_sizes": w.get("round_sizes"),
                                                  "flagged": w.get("noise", {}).get("flagged")}
                                              for n, w in programs.items()}})
                    print(tv.describe(job_id, result), flush=True)
            print("load average %s" % open("/proc/loadavg").read().strip())
        finally:
            lab.close()
    with open(out, "w") as f:
        json.dump(runs, f)


def rounds_of(x, sizes):
    out, at = [], 0
    for s in sizes:
        out.append(x[at:at + s])
        at += s
    return out


def draw(rounds, rng):
    """A hierarchical resample: rounds with replacement, then within each
    drawn round as many values as it holds, pooled."""
    pooled = []
    for _ in range(len(rounds)):
        r = rounds[rng.randrange(len(rounds))]
        pooled.extend(r[rng.randrange(len(r))] for _ in range(len(r)))
    return pooled


def percentile(sorted_values, q):
    h = (len(sorted_values) - 1) * q
    lo = int(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def unpaired(base, cand, variant, rng):
    """(figure, lo, hi) of (med(yv)/med(yf)) / (med(xv)/med(xf)), each of
    the four samples resampled on its own (compare's floor-ratio today)."""
    sides = []
    for run in (base, cand):
        v, f = run["programs"][variant], run["programs"]["floor"]
        sides.append((rounds_of(v["samples_us"], v["round_sizes"]), rounds_of(f["samples_us"], f["round_sizes"]),
                      statistics.median(v["samples_us"]) / statistics.median(f["samples_us"])))
    figure = sides[1][2] / sides[0][2]
    draws = []
    for _ in range(RESAMPLES):
        xv, xf, yv, yf = (statistics.median(draw(r, rng)) for r in
                          (sides[0][0], sides[0][1], sides[1][0], sides[1][1]))
        draws.append((yv / yf) / (xv / xf))
    draws.sort()
    return figure, percentile(draws, 0.025), percentile(draws, 0.975)


def pass_ratios(run, variant):
    v, f = run["programs"][variant], run["programs"]["floor"]
    return [a / b for a, b in zip(v["samples_us"], f["samples_us"])], v["round_sizes"]


def paired(base, cand, variant, rng):
    """(figure, lo, hi) of med(r_y) / med(r_x), r_k = v_k / f_k per pass,
    each side's passes resampled within its rounds."""
    (rx, sx), (ry, sy) = pass_ratios(base, variant), pass_ratios(cand, variant)
    figure = statistics.median(ry) / statistics.median(rx)
    x, y = rounds_of(rx, sx), rounds_of(ry, sy)
    draws = sorted(statistics.median(draw(y, rng)) / statistics.median(draw(x, rng)) for _ in range(RESAMPLES))
    return figure, percentile(draws, 0.025), percentile(draws, 0.975)


def paired_flat(base, cand, variant, rng):
    """paired() with the passes resampled as one sample, rounds ignored."""
    (rx, _), (ry, _) = pass_ratios(base, variant), pass_ratios(cand, variant)
    figure = statistics.median(ry) / statistics.median(rx)
    draws = sorted(statistics.median(draw([ry], rng)) / statistics.median(draw([rx], rng))
                   for _ in range(RESAMPLES))
    return figure, percentile(draws, 0.025), percentile(draws, 0.975)


def draw_indexes(sizes, rng):
    """draw() of the pass indexes, so a variant and its floor keep their pairs."""
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    out = []
    for _ in range(len(sizes)):
        r = rng.randrange(len(sizes))
        out.extend(starts[r] + rng.randrange(sizes[r]) for _ in range(sizes[r]))
    return out


def joint(base, cand, variant, rng):
    """(figure, lo, hi) of today's figure, (med(yv)/med(yf)) / (med(xv)/med(xf)),
    with each side's passes resampled together (v_k and f_k stay pairs)."""
    sides = []
    for run in (base, cand):
        v, f = run["programs"][variant], run["programs"]["floor"]
        sides.append((v["samples_us"], f["samples_us"], v["round_sizes"]))
    ratio = lambda v, f: statistics.median(v) / statistics.median(f)
    figure = ratio(*sides[1][:2]) / ratio(*sides[0][:2])
    draws = []
    for _ in range(RESAMPLES):
        rs = []
        for v, f, sizes in sides:
            idx = draw_indexes(sizes, rng)
            rs.append(ratio([v[i] for i in idx], [f[i] for i in idx]))
        draws.append(rs[1] / rs[0])
    draws.sort()
    return figure, percentile(draws, 0.025), percentile(draws, 0.975)


def significant(figure, lo, hi):
    return (lo > 1 or hi < 1) and abs(figure - 1) * 100 >= MIN_EFFECT


METHODS = (("unpaired", unpaired), ("paired", paired), ("paired-flat", paired_flat), ("joint", joint))


def judge(label, pairs, variants, rng):
    """Both methods over PAIRS of runs on VARIANTS: rows called a change,
    interval half-widths (%) and the figures."""
    stats = {}
    for name, fn in METHODS:
        called, widths, figures = 0, [], []
        for base, cand in pairs:
            for variant in variants:
                figure, lo, hi = fn(base, cand, variant, rng)
                called += significant(figure, lo, hi)
                widths.append((hi - lo) / 2 * 100)
                figures.append((figure - 1) * 100)
        rows = len(pairs) * len(variants)
        stats[name] = (called, rows)
        print("%-26s %-11s called %3d of %3d rows; half-width median %5.2f %% (%.2f-%.2f); "
              "figure %+.2f %% (%+.2f..%+.2f)" % (
                  label, name, called, rows, statistics.median(widths), min(widths), max(widths),
                  statistics.median(figures), min(figures), max(figures)))
    return stats


def drift(runs, variant):
    """How the per-pass ratio and the raw times move within each run: the
    rounds' medians relative to the run's median."""
    print("\nwithin-run drift on %s (rounds' medians / run median - 1, %%):" % variant)
    for run in runs:
        r, sizes = pass_ratios(run, variant)
        v = run["programs"][variant]["samples_us"]
        f = run["programs"]["floor"]["samples_us"]
        mr, mv, mf = statistics.median(r), statistics.median(v), statistics.median(f)
        spread = lambda xs, m: " ".join("%+5.1f" % ((statistics.median(q) / m - 1) * 100)
                                        for q in rounds_of(xs, sizes))
        # the spread of r_k against that of v_k alone: how much pairing removes
        cv = lambda xs: statistics.median(abs(a - statistics.median(xs)) for a in xs) / statistics.median(xs)
        print("  job %4s %-6s%s  v: %s | f: %s | r: %s | MAD/med v %.3f f %.3f r %.3f" % (
            run["job"], run["kind"], "*" if run["burned"] else " ", spread(v, mv), spread(f, mf),
            spread(r, mr), cv(v), cv(f), cv(r)))


def analyze(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            runs.extend(json.load(f))
    rng = random.Random(12)
    base = [r for r in runs if r["kind"] == "base"]
    bigger = [r for r in runs if r["kind"] == "bigger"]
    variants = [n for n in base[0]["programs"] if n != "floor"]
    print("%d base and %d bigger results; variants %s" % (len(base), len(bigger), variants))
    judge("same job, base pairs", list(itertools.combinations(base, 2)), variants, rng)
    judge("same job, bigger pairs", list(itertools.combinations(bigger, 2)), variants, rng)
    adjacent = [(b, c) for b, c in zip(base, bigger)]
    judge("base->bigger, adjacent", adjacent, ["default"], rng)
    judge("base->bigger, all", [(b, c) for b in base for c in bigger], ["default"], rng)
    drift(runs, "default")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "collect":
        args = sys.argv[3:]
        pairs = int(args[args.index("--pairs") + 1]) if "--pairs" in args else 8
        burn = int(args[args.index("--burn") + 1]) if "--burn" in args else -1
        runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 40
        variants = args[args.index("--variants") + 1].split(",") if "--variants" in args else None
        collect(sys.argv[2], pairs, burn, runs, variants or ["default", "now", "symbolic", "symbolic+relr"])
    elif len(sys.argv) >= 3 and sys.argv[1] == "analyze":
        analyze(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
