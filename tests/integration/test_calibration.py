"""Calibration through the fleet (issue 12): `loadlab calibrate` submits the
known-effect self-test to one agent, a real Linux agent runs it natively
(elf family), and the daemon records what it recovered as the agent's
`last_calibration` in GET /api/v1/agents. Bad requests are refused with a
clear error and change nothing.

No band of recovered/injected is checked here: how close the recovered
cost comes is a timing judged against a goal, measured by `make
lab-check` (tests/lab/lab_calibrate.py) on a quiet machine, never gated
on in `make test` (issue 23). What is checked holds on any machine: the
job's shape, the record's fields and arithmetic, the CLI's line.
"""
import os
import random
import re
import shutil
import subprocess
import tempfile

from harness import AGENT, LOADLAB, Daemon, kill_processes_under, run_tests, stop_process, wait_for
from schemacheck import validate

DELAY_US = 2000

# A calibration job of 1 ms on agent lab-1, as `loadlab calibrate` makes it.
CALIBRATION_JOB = {"name": "cal", "family": "elf", "generator": {"dlls": 2, "exports": 16},
                   "variants": [{"name": "d0", "preset": "default"},
                                {"name": "d1", "preset": "default", "delay_us": 1000},
                                {"name": "d2", "preset": "default", "delay_us": 2000}],
                   "calibration": {"delay_us": 1000},
                   "matrix": {"each_agent": {"agent": ["lab-1"]}}}


def cli(d, *args, timeout=60):
    p = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token] + list(args),
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def agents(d):
    r = d.api("GET", "/api/v1/agents", token=d.admin_token)
    assert r.status == 200, r
    validate("agent_list.json", r.json())
    return {a["name"]: a for a in r.json()["agents"]}


def job_count(d):
    r = d.api("GET", "/api/v1/jobs", token=d.admin_token)
    assert r.status == 200, r
    return len(r.json()["jobs"])


def test_calibrate_one_agent_records_its_last_calibration():
    with Daemon() as d:
        # A bystander that matches everything a Linux agent does but its
        # name: the calibration must not be pinned to it.
        d.enroll("bystander", {"os": "linux"})
        data_dir = tempfile.mkdtemp(prefix="calib-agent-")
        log = open(os.path.join(data_dir, "agent.log"), "wb")
        agent = subprocess.Popen([AGENT, "--server", d.url, "--enroll-token", d.enroll_token,
                                  "--data-dir", os.path.join(data_dir, "data"),
                                  "--name", "calib-linux"],
                                 stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        try:
            wait_for("the agent to enroll", lambda: "calib-linux" in agents(d), timeout=60)
            before = agents(d)
            assert before["calib-linux"]["last_calibration"] is None, before
            code, out, err = cli(d, "calibrate", "--agent", "calib-linux", "--family", "elf",
                                 "--delay-us", str(DELAY_US), "--runs", "60", "--rounds", "4",
                                 "--wait", timeout=600)
            assert code == 0, (code, out, err)
            m = re.match(r"job (\d+): calibration of calib-linux \(2000 us\)\n", out)
            assert m, out
            job_id = int(m.group(1))
            assert "job %d: done\n" % job_id in out, out
            assert re.search(r"\n  calib-linux: injected 2000 us, recovered [0-9.]+ us", out), out

            job = d.job(job_id)
            assert job["spec"]["calibration"] == {"delay_us": DELAY_US}, job["spec"]
            assert job["spec"]["matrix"] == {"each_agent": {"agent": ["calib-linux"]}}, job["spec"]
            fleet = agents(d)
            [task] = job["tasks"]
            assert task["agent_id"] == fleet["calib-linux"]["id"], task
            assert [v.get("delay_us", 0) for v in job["spec"]["variants"]] == [0, 2000, 4000]

            cal = fleet["calib-linux"]["last_calibration"]
            validate("agent.json", fleet["calib-linux"])
            assert cal["job_id"] == job_id and cal["task_id"] == task["id"], cal
            assert cal["result_id"] == task["result_id"], (cal, task)
            assert cal["injected_us"] == DELAY_US and cal["family"] == "elf", cal
            assert cal["runner"] == "native", cal
            # The agent's passes pair every variant's samples: the CLI says so.
            assert cal["paired"] is True, cal
            assert re.search(r"; from 2X: [0-9.]+ us\), paired by pass, other CPU max", out), out
            assert abs(cal["recovered_us"] / DELAY_US - cal["ratio"]) < 1e-9, cal
            low, high = cal["ci_us"]
            assert low <= cal["recovered_us"] <= high, cal
            assert cal["runs"] == 60, cal
            assert set(cal["noise"]) == {"max_other_cpu_pct", "flagged", "retaken"}, cal
            assert cal["noise"]["retaken"] <= cal["noise"]["flagged"], cal
            assert fleet["bystander"]["last_calibration"] is None, fleet["bystander"]

            # `loadlab agents` shows it too.
            code, out, err = cli(d, "agents")
            assert code == 0, err
            line = [x for x in out.splitlines() if " calib-linux " in x][0]
            assert "2000->%.0fus %.0f%%" % (cal["recovered_us"], 100 * cal["ratio"]) in line, out
            assert re.search(r" bystander .* - ", out), out

            # GET /api/v1/agents/{id} has it.
            r = d.api("GET", "/api/v1/agents/%d" % fleet["calib-linux"]["id"],
                      token=d.admin_token)
            assert r.status == 200 and r.json()["last_calibration"] == cal, r
            validate("agent.json", r.json())
            r = d.api("GET", "/api/v1/agents/999", token=d.admin_token)
            assert r.status == 404 and r.json()["error"]["code"] == "not_found", r
        finally:
            stop_process(agent, 30)
            log.close()
            kill_processes_under(data_dir)
            shutil.rmtree(data_dir, ignore_errors=True)


def test_bad_calibrations_are_refused_and_change_nothing():
    with Daemon() as d:
        d.enroll("lab-1", {"os": "linux"})
        quarantined, _ = d.enroll("lab-q", {"os": "linux"})
        d.api("PATCH", "/api/v1/agents/%d" % quarantined, {"quarantined": True},
              token=d.admin_token)

        code, out, err = cli(d, "calibrate", "--agent", "nobody")
        assert code == 2 and out == "", (code, out, err)
        assert err == "loadlab calibrate: No agent is named or numbered 'nobody' " \
                      "(see loadlab agents).\n", err
        for bad in ("0", "50001", "12x"):
            code, out, err = cli(d, "calibrate", "--agent", "lab-1", "--delay-us", bad)
            assert code == 2 and out == "" and "--delay-us" in err, (bad, code, out, err)
        code, out, err = cli(d, "calibrate", "--family", "macho")
        assert code == 2 and "--family is elf or pe" in err, err
        code, out, err = cli(d, "calibrate", "--agent", "lab-q")
        assert code == 2 and "No enrolled, non-quarantined agent matches" in err, err
        assert job_count(d) == 0

        # The same through the API: the field's bound, the variants it needs,
        # and a pin to no agent.
        job = dict(CALIBRATION_JOB)
        for change, status, code_name, words in (
                ({"calibration": {"delay_us": 50001}}, 400, "out_of_range", "delay_us"),
                ({"calibration": {"delay_us": 1000, "x": 1}}, 400, "invalid_argument", "x"),
                ({"calibration": {"delay_us": 700}}, 400, "invalid_argument",
                 "variants with delay_us 0, 700 and 1400"),
                ({"family": "program", "program": {}}, 400, "invalid_argument", None),
                ({"matrix": {"each_agent": {"agent": ["nobody"]}}}, 400, "invalid_argument",
                 "No enrolled, non-quarantined agent matches")):
            body = dict(job, **change)
            if change.get("family") == "program":
                del body["generator"]
            r = d.api("POST", "/api/v1/jobs", body, token=d.admin_token)
            assert r.status == status, (change, r)
            validate("error.json", r.json())
            assert r.json()["error"]["code"] == code_name, (change, r.json())
            if words:
                assert words in r.json()["error"]["message"], (change, r.json())
        assert job_count(d) == 0
        assert all(a["last_calibration"] is None for a in agents(d).values())

        # The good one is accepted, pinned to lab-1 only.
        created = d.submit(job)
        [task] = d.job(created["id"])["tasks"]
        assert task["agent_id"] == agents(d)["lab-1"]["id"], task


def test_calibrate_every_agent_one_job_per_family():
    with Daemon() as d:
        d.enroll("lin-1", {"os": "linux"})
        d.enroll("win-1", {"os": "win10"})
        d.enroll("lin-2", {"os": "linux"})
        quarantined, _ = d.enroll("lin-q", {"os": "linux"})
        d.api("PATCH", "/api/v1/agents/%d" % quarantined, {"quarantined": True},
              token=d.admin_token)
        code, out, err = cli(d, "calibrate", "--delay-us", "500", "--runs", "20")
        assert code == 0, (code, out, err)
        lines = out.splitlines()
        assert len(lines) == 2, out
        m = [re.match(r"job (\d+): calibration of (.*) \(500 us\)$", line) for line in lines]
        assert all(m), out
        assert [x.group(2) for x in m] == ["lin-1 lin-2", "win-1"], out
        elf, pe = (d.job(int(x.group(1))) for x in m)
        assert elf["spec"]["family"] == "elf" and pe["spec"]["family"] == "pe", (elf, pe)
        assert elf["spec"]["matrix"] == {"each_agent": {"agent": ["lin-1", "lin-2"]}}
        assert pe["spec"]["matrix"] == {"each_agent": {"agent": ["win-1"]}}
        assert [v["name"] for v in pe["spec"]["variants"]] == ["delay-0", "delay-500", "delay-1000"]
        assert pe["spec"]["measure"]["warm"]["runs"] == 20, pe["spec"]
        fleet = agents(d)
        assert sorted(t["agent_id"] for t in elf["tasks"]) == \
            sorted([fleet["lin-1"]["id"], fleet["lin-2"]["id"]]), elf["tasks"]
        # --family forces one family for all: one job.
        code, out, err = cli(d, "calibrate", "--family", "pe")
        assert code == 0 and len(out.splitlines()) == 1, out
        assert out.endswith(": calibration of lin-1 win-1 lin-2 (1000 us)\n"), out
        # Two agents of one name: pinning goes by name, so it is refused.
        d.enroll("lin-1", {"os": "linux"})
        before = job_count(d)
        code, out, err = cli(d, "calibrate", "--agent", "lin-1")
        assert code == 2 and "2 agents are named 'lin-1'" in err, err
        assert job_count(d) == before


def test_interval_across_an_agents_calibrations():
    """Issue 23: an agent's calibration interval holds what varies between
    its calibrations of the same cost, family and runner once 3 or more came
    before it: each half widened to sqrt(h^2 + z^2 tau^2), tau^2 the
    DerSimonian-Laird estimate of the earlier ones' recovered_us (worked out
    here from what each said within-job); fewer, or another runner, leave it
    within-job. Synthetic results posted for the agent (no timing)."""
    z = 1.959963984540054
    with Daemon() as d:
        _, token = d.enroll("lab-1", {"os": "linux"})
        job = dict(CALIBRATION_JOB)
        rng = random.Random(23)
        seen = []
        for i, (shift, runner) in enumerate(((30, "native"), (-25, "native"), (60, "native"), (-5, "wine"),
                                             (10, "native"))):
            d.submit(dict(job, name="cal-%d" % i))
            lease = d.api("POST", "/api/v1/lease", {}, token=token).json()
            passes = [1000 + rng.gauss(0, 20) for _ in range(60)]

            def warm(add):
                return {"runs": 60, "round_sizes": [20, 20, 20],
                        "samples_us": [round(p + add + rng.gauss(0, 15), 1) for p in passes]}
            body = {"attempt": lease["attempt"], "facts": {"os": "linux"}, "runner": runner,
                    "variants": [{"name": "d0", "valid": True, "warm": warm(0)},
                                 {"name": "d1", "valid": True, "warm": warm(1000 + shift)},
                                 {"name": "d2", "valid": True, "warm": warm(2000 + 2 * shift)}]}
            r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], body, token=token)
            assert r.status == 200, r
            wait_for("the calibration", lambda: (agents(d)["lab-1"]["last_calibration"] or {}).get(
                "task_id") == lease["task_id"], timeout=30)
            cal = agents(d)["lab-1"]["last_calibration"]
            validate("agent.json", agents(d)["lab-1"])
            earlier = [c for c in seen if c["runner"] == runner]
            assert cal["between_jobs"]["jobs"] == len(earlier), (cal, len(earlier))
            if len(earlier) < 3:
                assert cal["interval_scope"] == "within-job" and cal["interval_us"] == cal["ci_us"], cal
                assert "sd_us" not in cal["between_jobs"], cal
            else:
                w = [1 / max(((c["ci_us"][1] - c["ci_us"][0]) / (2 * z)) ** 2, 0.01) for c in earlier]
                y = [c["recovered_us"] for c in earlier]
                mean = sum(a * b for a, b in zip(w, y)) / sum(w)
                q = sum(a * (b - mean) ** 2 for a, b in zip(w, y))
                tau2 = max(0.0, (q - (len(y) - 1)) / (sum(w) - sum(a * a for a in w) / sum(w)))
                assert tau2 > 0, (earlier, tau2)  # shifts of 30, -25 and 60 us beyond intervals of +-10
                assert cal["interval_scope"] == "within-and-between-jobs", cal
                assert abs(cal["between_jobs"]["sd_us"] - tau2 ** 0.5) < 1e-6, (cal, tau2 ** 0.5)
                x, (lo, hi) = cal["recovered_us"], cal["ci_us"]
                assert abs(cal["interval_us"][0] - (x - ((x - lo) ** 2 + z * z * tau2) ** 0.5)) < 1e-6, cal
                assert abs(cal["interval_us"][1] - (x + ((hi - x) ** 2 + z * z * tau2) ** 0.5)) < 1e-6, cal
                assert cal["interval_us"][0] < lo and cal["interval_us"][1] > hi, cal
            seen.append(cal)
        assert [c["interval_scope"] for c in seen] == ["within-job"] * 4 + ["within-and-between-jobs"], seen


run_tests(globals())
