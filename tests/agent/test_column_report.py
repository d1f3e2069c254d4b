"""The column's job end to end: a real loadlabd, two real Linux agents
running the pe pipeline under Wine, warm and cold, and the report. Every
cell of the table is filled with figures or explained, never blank; each
result validates against the schema and says where its counters came from;
the Markdown report and the CLI agree; comparing the job with itself is not
a regression."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
from schemacheck import validate  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pe_checks  # noqa: E402

AGENT = harness.AGENT

# The column's experiment (schemas/examples/pietrek-2000.json) at a size
# that runs in seconds, with all eight pe presets, over two cells that two
# labelled agents serve. Nothing here judges a difference between two
# variants (that is a lab check), so 3 warm runs (report cells of n 3,
# each with its change and significance) and 2 cold ones are enough.
WARM_RUNS = 3
COLD_RUNS = 2
JOB = dict(harness.load_example("pietrek-2000.json"),
           generator={"dlls": 6, "exports": 20, "globals_per_function": 2},
           variants=["default", "rebase", "bind", "ordinal", "ordinal+rebase", "ordinal+bind",
                     "reorder", "no-rebase"],
           measure={"warm": {"runs": WARM_RUNS, "warmup": 1}, "cold": {"runs": COLD_RUNS},
                    "noise": harness.NO_NOISE_RETAKES},
           matrix={"cells": {"bench": ["a", "b"]}})


def run_agents(d, job_id):
    agents = []
    try:
        for label in ("a", "b"):
            data_dir = tempfile.mkdtemp(prefix="loadlab-column-")
            log = open(os.path.join(data_dir, "agent.log"), "wb")
            proc = subprocess.Popen(
                [AGENT, "--server", d.url, "--enroll-token", d.enroll_token, "--data-dir", data_dir,
                 "--name", "column-" + label, "--labels", "bench=" + label, "--once"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            agents.append((proc, log, data_dir))
        for proc, log, data_dir in agents:
            code = proc.wait(600)
            log.close()
            with open(os.path.join(data_dir, "agent.log"), "rb") as f:
                text = f.read().decode(errors="replace")
            assert code == 0, text[-3000:]
    finally:
        for proc, log, data_dir in agents:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            harness.kill_processes_under(data_dir)
            subprocess.run(["rm", "-rf", data_dir])


def test_column_job_end_to_end():
    with harness.Daemon() as d:
        job_id = d.submit(JOB)["id"]
        run_agents(d, job_id)
        job = d.api("GET", "/api/v1/jobs/%d" % job_id, token=d.admin_token).json()
        assert job["state"] == "done", job
        r = d.api("GET", "/api/v1/jobs/%d/report" % job_id, token=d.admin_token)
        assert r.status == 200, r
        report = r.json()
        validate("report.json", report)
        assert [c["key"] for c in report["cells"]] == ["bench=a", "bench=b"]
        assert [row["variant"] for row in report["warm"]["variants"]] == JOB["variants"]
        for row in report["warm"]["variants"]:
            for cell in row["cells"]:
                # Filled, or explained: never a blank cell.
                if cell["status"] == "ok":
                    assert cell["n"] == WARM_RUNS and 0 < cell["min_us"] <= cell["median_us"], cell
                    if row["variant"] != "default":
                        assert "change_pct" in cell and "significant" in cell, cell
                else:
                    assert cell["status"] == "invalid" and cell["reason"], cell
        ok = sum(c["status"] == "ok" for row in report["warm"]["variants"] for c in row["cells"])
        assert ok >= 2 * 7, report  # the pipeline proves every preset under Wine
        assert report["findings"] and all(f.endswith(".") for f in report["findings"])
        for c in report["cells"]:
            assert c["facts"]["runner"] == "wine", c
        # Cold runs: counted from the Linux side (the wine64 process), and said so.
        assert report["cold"] is not None and report["cold"]["baseline"] == "rebase"
        for row in report["cold"]["variants"]:
            for cell in row["cells"]:
                assert cell["status"] in ("ok", "invalid"), cell
                if cell["status"] == "ok":
                    assert cell["n"] == COLD_RUNS and cell["mean_us"] > 0 and "page_faults_mean" in cell, cell
        for task in job["tasks"]:
            result = d.api("GET", "/api/v1/results/%d" % task["result_id"], token=d.admin_token).json()
            validate("result.json", result)
            # What the loader did, as the column's variants claim it.
            gen = JOB["generator"]
            failures = pe_checks.verification_failures(result, JOB["variants"], gen["dlls"], gen["exports"],
                                                       gen["globals_per_function"], JOB["measure"]["warm"]["runs"])
            assert not failures, failures
            cold = result["measurement"]["cold"]
            assert "wine64" in cold["counters"] and cold["counters_reliable"] in (True, False), cold
            warm = result["measurement"]["warm"]
            assert warm["runs"] == WARM_RUNS and warm["priority_read_back"], warm
            assert len(result["floor"]["warm"]["samples_us"]) == WARM_RUNS
            pe_checks.print_work(result)
        md = d.api("GET", "/api/v1/jobs/%d/report?format=md" % job_id, token=d.admin_token)
        out = subprocess.run([harness.LOADLAB, "--server", d.url, "--token", d.admin_token,
                              "report", str(job_id), "--format", "md"], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0 and out.stdout.strip() == md.body.decode().strip()
        # A job against itself: nothing can be slower than itself.
        out = subprocess.run([harness.LOADLAB, "--server", d.url, "--token", d.admin_token,
                              "compare", str(job_id), str(job_id), "--format", "json"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, (out.stdout[-2000:], out.stderr)


def test_churn_job_end_to_end():
    """The termination study's job through the daemon and one Linux agent:
    50 processes under Wine per DLL set, in the report's churn table."""
    job = dict(harness.load_example("churn.json"), matrix={"cells": {"bench": ["a"]}},
               measure={"churn": {"processes": 50, "dll_sets": ["none", "user32"]}})
    with harness.Daemon() as d:
        job_id = d.submit(job)["id"]
        harness.run_agent_once(d, "loadlab-churn-", ["--labels", "bench=a"])
        report = d.api("GET", "/api/v1/jobs/%d/report" % job_id, token=d.admin_token).json()
        validate("report.json", report)
        rows = report["churn"]["rows"]
        assert [r["dll_set"] for r in rows] == ["none", "user32"], rows
        for row in rows:
            assert row["processes"] == 50 and row["create_us_per_process"] > 0, row
            # The probe timed at least one call into the window manager,
            # which takes time (a result without the figure reads as 0).
            assert row["destroy_us_per_process"] > 0 and row["blocked_max_ms"] > 0, row


harness.run_tests(globals())
