"""The same elf job run several times on one machine gives the same figures
(issue 13, "How it will be checked"; a lab check since issue 23, `make
lab-check`: its goals judge timings, so it prints them beside its figures): a small job (10 x 100, four presets,
80 runs in 10 rounds) submitted four times to a real loadlabd and run, one
after the other, by one real Linux agent natively; `loadlab compare` (the
real CLI) of each pair at --max-regression 2 finds no significant change
in at least 95 % of the rows (issue 12's standard for the same check: at
most 1 of the 24), and every pair without such a row exits 0.

Why not "none of them": each row is judged at 95 %, and identical jobs on
this VM differ by a per-job shift that rounds inside one job cannot see
(0.6-1.2 % SD of the floor ratio between jobs idle, 0.7-2.3 % under a
toggling load, 5-6 % apart at worst). Measured, 1 row in 100 of unchanged
jobs is called a change, more under host load; three jobs' 12 rows with
none allowed failed two clean-clone CI runs in a row (a -3 % and a +3.3 %
row), four jobs' 24 rows with one allowed fail only when two rows move
(docs/statistics.md, "Where the interval alone decides").

A fifth job with four times the libraries is the control:
the same compare must call it slower, so the test cannot pass by a metric
that sees nothing. Every comparison's rows are printed, so a failure shows
which variant moved and by how much.

The gate judges `--metric floor-ratio` (each side's median over the empty
program's measured in the same run; LOADLAB_TEST_METRIC chooses another):
on this project's shared VMs whole runs shift with the host by up to 45 %,
idle or not, floor and variants alike, and only that ratio cancels it
(docs/statistics.md, "Idle is not enough on these VMs"). The failure
message gives the share of all CPU time that processes other than the
agent (and what it started) took while the jobs ran."""
import itertools
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
from labagent import LabAgent  # noqa: E402
from labgoal import figure  # noqa: E402
from schemacheck import validate  # noqa: E402

PRESETS = ["default", "now", "symbolic", "symbolic+relr"]
RUNS = 80
# Taken in 10 rounds, so that compare resamples rounds, not samples: a shift
# that a whole round shares (the machine busy for a moment) widens the
# interval instead of being called a change (docs/statistics.md). With 5
# rounds of 8 the interval's own width varies so much from job to job that
# an unlucky narrow one let a 2-5 % difference between identical jobs
# through (a clean-clone CI failed so: "default" -3 % "faster"). 10 rounds
# of 8 called 4 of 224 rows of unchanged jobs a change by the old rule,
# and 0 now that the whole interval must clear the 1 % least effect
# (docs/statistics.md, "Where the interval alone decides").
ROUNDS = 10
JOB = dict(harness.load_example("elf-relocations.json"), name="elf-repeat",
           generator={"dlls": 10, "exports": 100}, variants=PRESETS,
           measure={"warm": {"runs": RUNS, "warmup": 3, "rounds": ROUNDS}})
REPEATS = 4
# At least 95 % of the rows without a significant change.
MAX_MOVED = 1
METRIC = os.environ.get("LOADLAB_TEST_METRIC", "floor-ratio")
# The row fields METRIC judges: change, interval's low and high end.
JUDGED = {"floor-ratio": ("floor_ratio_change_pct", "floor_ratio_ci_low", "floor_ratio_ci_high"),
          "over-floor": ("over_floor_change_pct", "over_floor_ratio_ci_low", "over_floor_ratio_ci_high"),
          "min": ("min_change_pct", "min_ratio_ci_low", "min_ratio_ci_high"),
          "median": ("change_pct", "ratio_ci_low", "ratio_ci_high")}[METRIC]


def process_ticks(pid):
    """Ticks PID and its waited-for children used (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15])


def cpu_ticks():
    """(busy, total) ticks of all CPUs so far (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def compare(d, base, cand):
    """`loadlab compare BASE CAND --max-regression 2 --format json`: exit code and parsed rows."""
    env = dict(os.environ, LOADLAB_SERVER=d.url, LOADLAB_TOKEN=d.admin_token)
    p = subprocess.run([harness.LOADLAB, "compare", str(base), str(cand), "--max-regression", "2", "--metric", METRIC,
                        "--format", "json"], capture_output=True, text=True, timeout=60, env=env)
    return p.returncode, p.stdout, p.stderr


def test_three_runs_of_one_job_show_no_significant_change():
    with harness.Daemon() as d:
        ids = [d.submit(JOB)["id"] for _ in range(REPEATS)]
        # The control: four times the libraries, a change the same metric
        # must see (twice was +34 to +60 %, not always beyond floor-ratio's
        # interval on this VM).
        bigger = d.submit(dict(JOB, name="elf-repeat-bigger", generator={"dlls": 40, "exports": 100}))["id"]
        busy0, total0 = cpu_ticks()
        with LabAgent(d, "elf-repeat") as agent:
            def all_done():
                states = [d.job(i)["state"] for i in ids + [bigger]]
                assert not set(states) & {"failed", "cancelled"}, states
                return all(s == "done" for s in states)
            harness.wait_for("five elf jobs done", all_done, timeout=900, interval=0.5)
            busy1, total1 = cpu_ticks()
            own = process_ticks(agent.proc.pid)
            busy = "other processes took %.0f %% of all CPU time while the jobs ran; load average %s" % (
                100.0 * (busy1 - busy0 - own) / max(1, total1 - total0), open("/proc/loadavg").read().strip())
            print(busy)
        for job_id in ids:
            job = d.job(job_id)
            result = d.api("GET", "/api/v1/results/%d" % job["tasks"][0]["result_id"],
                           token=d.admin_token).json()
            assert all(v["valid"] for v in result["variants"]), [v.get("invalid_reason")
                                                                 for v in result["variants"]]
            assert all(len(v["warm"]["samples_us"]) == RUNS for v in result["variants"])
            print("job %d: floor median %.1f us, %s" % (job_id, result["floor"]["warm"]["summary"]["median_us"],
                  ", ".join("%s %.1f" % (v["name"], v["warm"]["summary"]["median_us"]) for v in result["variants"])))
        moved, total = [], 0
        for base, cand in itertools.combinations(ids, 2):
            code, out, err = compare(d, base, cand)
            assert code in (0, 1) and out, (busy, base, cand, code, err, out)
            comparison = json.loads(out)
            validate("compare.json", comparison)
            rows = comparison["rows"]
            assert sorted(r["variant"] for r in rows) == sorted(PRESETS), rows
            pair_moved = []
            for r in rows:
                change, low, high = (r[k] for k in JUDGED)
                print("job %d -> %d  %-14s %-22s %s %+6.2f %%  CI %.4f-%.4f" % (
                    base, cand, r["variant"], r["status"], JUDGED[0], change, low, high))
                total += 1
                if r["status"] != "no_significant_change" or r.get("significant"):
                    pair_moved.append((base, cand, r["variant"], r["status"], change))
            # A pair with no row moved is no regression: exit 0, verdict ok.
            if not pair_moved:
                # Logic, not timing: no row moved is no regression.
                assert code == 0 and comparison["verdict"] == "ok", (busy, base, cand, code, comparison)
            moved += pair_moved
        print("rows called a change: %d of %d" % (len(moved), total))
        assert total == len(PRESETS) * REPEATS * (REPEATS - 1) // 2, total
        figure("elf_repeat_aa_rows_called", len(moved), "of_%d" % total, "figure<=%d" % MAX_MOVED)
        print("rows called a change: %s (%s)" % (moved, busy))
        # The same metric is not blind: a job with four times the libraries
        # is a regression beyond 2 % (exit 1), most of its rows slower.
        code, out, err = compare(d, ids[0], bigger)
        rows = {r["variant"]: r for r in json.loads(out)["rows"]} if out else {}
        print("bigger: " + ", ".join("%s %s %+.1f %%" % (n, r["status"], r.get("floor_ratio_change_pct", 0))
                                     for n, r in sorted(rows.items())))
        assert code in (0, 1), (busy, code, err, out)
        figure("elf_repeat_control_exit_code", code, "code", "figure>=1")
        figure("elf_repeat_control_rows_slower", sum(r["status"] == "slower" and r["regression"]
                                                     for r in rows.values()), "of_4", "figure>=3")


harness.run_tests(globals())
