"""compare on the run counters and every row's detectable change (issue 40),
through a real daemon and the real CLI.

Results are posted as one agent would write them (60 runs in 3 rounds per
variant and the floor, with warm.run_counters: CPU time, minor and major
page faults per run, instructions not counted for want of a PMU):

- `--metric faults` finds rebase's 1,900 more page faults per run (+16 %)
  and nothing on default; the row is judged per pass over the floor's
  faults (x floor) and its counts are shown beside its times;
- `--metric cpu` judges the CPU time, unchanged here;
- `--metric instructions` gives every row "not counted: <the agent's
  reason>" and no verdict (the CLI exits 2: nothing could be judged);
  a result without run counters says so under `--metric cpu`;
- every comparable row has "detectable_pct", the formula of
  docs/statistics.md on the interval the verdict used; rows whose
  detectable change is above --max-regression say "this row could only
  see changes above X %" in the JSON, the table and the Markdown;
  `--require-power` fails the gate on them (exit 1, verdict
  "underpowered"), and not without it;
- the job report's warm cells say what their star could see
  (detectable_pct against the baseline);
- a bad metric or require_power is a 400 naming it.
"""
import json
import math
import random
import subprocess

from harness import LOADLAB, Daemon, run_tests
from schemacheck import validate

VARIANTS = ["default", "rebase"]
RUNS, ROUNDS = 60, 3
NO_PMU = "no PMU: perf_event_open(PERF_COUNT_HW_INSTRUCTIONS) says ENOENT"


def series(rng, center, sd, n=RUNS):
    return [max(1.0, round(center + rng.gauss(0, sd), 1)) for _ in range(n)]


def program(rng, time_us, faults, counters=True):
    """One program's warm: times with 4 % noise, CPU time following them,
    faults nearly constant."""
    times = series(rng, time_us, time_us * 0.04)
    warm = {"runs": RUNS, "samples_us": times, "round_sizes": [RUNS // ROUNDS] * ROUNDS}
    if counters:
        warm["run_counters"] = {
            "counters": ["cpu_user_us", "cpu_system_us", "page_faults", "minor_faults", "major_faults"],
            "not_counted": {"instructions": NO_PMU, "cycles": NO_PMU,
                            "voluntary_switches": "not kept", "involuntary_switches": "not kept"},
            "cpu_user_us": [round(t * 0.6, 1) for t in times],
            "cpu_system_us": [round(t * 0.3 + rng.gauss(0, 2), 1) for t in times],
            "minor_faults": [faults + rng.randrange(-3, 4) for _ in times],
            "major_faults": [0] * RUNS,
        }
        warm["run_counters"]["page_faults"] = list(warm["run_counters"]["minor_faults"])
    return warm


def result(rng, side, counters=True):
    extra = 1900 if side == 1 else 0
    variants = [{"name": "default", "valid": True, "warm": program(rng, 1000, 10000, counters)},
                {"name": "rebase", "valid": True, "warm": program(rng, 1100, 12000 + extra, counters)}]
    return {"facts": {"os": "metric", "cpu_model": "cpu"}, "variants": variants,
            "floor": {"warm": program(rng, 500, 3000, counters)}}


def play(d, token, side, counters=True):
    rng = random.Random(40 + side)
    job = d.submit({"name": "metric-%d" % side, "family": "pe", "generator": {"dlls": 2, "exports": 10},
                    "variants": VARIANTS, "matrix": {"each_agent": {}}})["id"]
    lease = d.api("POST", "/api/v1/lease", {}, token=token).json()
    r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"],
              dict(result(rng, side, counters), attempt=lease["attempt"]), token=token)
    assert r.status == 200, r
    return job


def compare(d, base, cand, query=""):
    r = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d%s" % (base, cand, query), token=d.admin_token)
    assert r.status == 200, r
    validate("compare.json", r.json())
    return r.json()


def cli(d, *args):
    return subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token, "compare"] + list(args),
                          capture_output=True, text=True, timeout=60)


def detectable(low, high, per_sample):
    """docs/statistics.md, "What a row could have seen"."""
    z, z80, least = 1.959963984540054, 0.8416212335729143, math.log(1.01)
    se = (math.log(high) - math.log(low)) / (2 * z)
    reach = max(z * se, least) if per_sample else least + z * se
    return 100 * (math.exp(reach + z80 * se) - 1)


def check_power(doc):
    """Every comparable row's detectable change, and its words."""
    for row in doc["rows"]:
        if row["status"] == "not_comparable":
            assert "detectable_pct" not in row, row
            continue
        j = row["judged"]
        want = detectable(row["interval_low"], row["interval_high"], j["p_value"] is not None)
        assert abs(row["detectable_pct"] - want) < 0.02, (row, want)
        # a row that found a change saw it: never underpowered
        under = row["detectable_pct"] > doc["max_regression_pct"] and row["status"] == "no_significant_change"
        assert row.get("underpowered", False) == under, row
        if under:
            assert row["detectable_note"] == "this row could only see changes above %.1f %%" % (
                row["detectable_pct"]), row
        else:
            assert "detectable_note" not in row, row
    assert doc["power"]["underpowered_rows"] == sum(1 for r in doc["rows"] if r.get("underpowered")), doc


def test_counters_and_power():
    d = Daemon().start()
    try:
        _, token = d.enroll("agent", {"os": "metric"})
        base, cand, old = play(d, token, 0), play(d, token, 1), play(d, token, 2, counters=False)

        # faults: rebase +1,900 per run found, default unchanged
        doc = compare(d, base, cand, "&metric=faults&max_regression=2")
        rows = {r["variant"]: r for r in doc["rows"]}
        assert doc["metric"] == "faults" and doc["verdict"] == "regression", doc
        assert rows["rebase"]["status"] == "slower" and rows["rebase"]["regression"], rows["rebase"]
        assert rows["default"]["status"] == "no_significant_change", rows["default"]
        for row in rows.values():
            assert row["metric"] == "faults" and row["faults_paired"] is True, row
            assert row["judged"]["unit"] == "x_floor", row
        assert 14 < rows["rebase"]["faults_change_pct"] < 18, rows["rebase"]
        counted = rows["rebase"]["counters"]
        assert abs(counted["faults"]["delta"] - 1900) <= 10, counted
        assert "cpu_us" in counted and "baseline" in counted["cpu_us"], counted
        assert counted["instructions"] == {"not_counted": NO_PMU + " (instructions, baseline)"}, counted
        check_power(doc)
        assert not rows["rebase"].get("underpowered"), rows["rebase"]  # counts are quiet
        r = cli(d, str(base), str(cand), "--metric", "faults", "--max-regression", "2")
        assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
        assert "COUNTS (CONTEXT)" in r.stdout and "+1,9" in r.stdout and "faults (+" in r.stdout, r.stdout
        line = next(x for x in r.stdout.splitlines() if x.startswith("rebase "))
        assert "slower (regression)" in line and "x floor" in line, line

        # cpu: judged the same way, unchanged here
        doc = compare(d, base, cand, "&metric=cpu&max_regression=50")
        assert doc["verdict"] == "ok", doc
        for row in doc["rows"]:
            assert row["metric"] == "cpu" and row["cpu_paired"] is True, row
            assert row["status"] == "no_significant_change", row
        check_power(doc)
        assert doc["power"]["underpowered_rows"] == 0, doc
        assert cli(d, str(base), str(cand), "--metric", "cpu", "--max-regression", "50").returncode == 0

        # instructions: not counted, no verdict, never a zero
        doc = compare(d, base, cand, "&metric=instructions")
        assert doc["verdict"] == "not_comparable", doc
        for row in doc["rows"]:
            assert row["status"] == "not_comparable" and not row["regression"], row
            assert row["reason"] == "not counted: %s (instructions, baseline)" % NO_PMU, row
            assert "judged" not in row and "instructions_ratio" not in row, row
        r = cli(d, str(base), str(cand), "--metric", "instructions")
        assert r.returncode == 2 and "not counted: no PMU" in r.stdout, (r.returncode, r.stdout, r.stderr)
        md = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d&metric=instructions&format=md"
                   % (base, cand), token=d.admin_token).body.decode()
        assert "| not counted: no PMU" in md, md

        # a result from before the counters: said, not zero
        doc = compare(d, old, cand, "&metric=cpu")
        for row in doc["rows"]:
            assert row["reason"].startswith("not counted: the baseline's result has no run counters"), row
        assert all("counters" not in r for r in compare(d, old, old)["rows"])

        # the default metric: time's spread, what each row could see
        doc = compare(d, base, cand, "&max_regression=2")
        assert doc["metric"] == "auto" and doc["verdict"] == "ok", doc
        check_power(doc)
        assert doc["power"] == {"level": 0.95, "power": 0.8, "required": False,
                                "underpowered_rows": 2}, doc["power"]
        notes = [r["detectable_note"] for r in doc["rows"]]
        r = cli(d, str(base), str(cand), "--max-regression", "2")
        assert r.returncode == 0, (r.returncode, r.stderr)
        for note in notes:
            assert note in r.stdout, (note, r.stdout)
        assert "2 rows could not see a change of 2.0 %" in r.stdout, r.stdout
        md = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d&max_regression=2&format=md"
                   % (base, cand), token=d.admin_token).body.decode()
        for note in notes:
            assert note in md, md
        r = cli(d, str(base), str(cand), "--max-regression", "2", "--require-power")
        assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
        assert r.stdout.startswith("loadlab compare: underpowered\n"), r.stdout[:300]
        assert "--require-power asks that every row could" in r.stderr, r.stderr
        doc = compare(d, base, cand, "&max_regression=2&require_power=1")
        assert doc["verdict"] == "underpowered" and doc["power"]["required"] is True, doc
        # a threshold every row can see: power required and met
        doc = compare(d, base, cand, "&max_regression=50&require_power=1")
        assert doc["verdict"] == "ok" and doc["power"]["underpowered_rows"] == 0, doc
        r = cli(d, str(base), str(cand), "--max-regression", "50", "--require-power", "--format", "json")
        assert r.returncode == 0 and json.loads(r.stdout)["verdict"] == "ok", (r.returncode, r.stderr)

        # the job report's warm cells: what their star could see
        report = d.api("GET", "/api/v1/jobs/%d/report" % cand, token=d.admin_token).json()
        cells = [c for v in report["warm"]["variants"] if v["variant"] == "rebase" for c in v["cells"]]
        assert cells, report["warm"]
        for c in cells:
            want = detectable(c["ratio_ci_low"], c["ratio_ci_high"], True)
            assert abs(c["detectable_pct"] - want) < 0.02, (c, want)

        # bad input: a 400 naming it, nothing judged
        for query, words in (("&metric=cycles", "metric must be"), ("&require_power=yes", "require_power")):
            r = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d%s" % (base, cand, query),
                      token=d.admin_token)
            assert r.status == 400 and words in r.body.decode(), r
        r = cli(d, str(base), str(cand), "--metric", "cycles")
        assert r.returncode == 2 and "--metric must be" in r.stderr, (r.returncode, r.stderr)
    finally:
        d.close()


run_tests(globals())
