"""The pe family through the agent under ASan+UBSan: `loadlab-agent run`
of a small pe job (all eight presets, 2 DLLs of 20 exports: the fewest
whose startup trace is not in link order) under Wine, from the sanitizer
build.

The pe family's agent code (agent/family/pe/: generate, build, transform,
verify, time) ran under the sanitizers only through test_agent_fleet's pe
jobs until that test moved to native elf jobs, off the Wine chain (issue
36); this test keeps that code under ASan+UBSan, and is registered in the
sanitizer build only (the plain build's pe pipeline is test_pe_pipeline's
and test_column_report's). Every variant must verify as pe_checks.py says;
the agent must exit 0 (a sanitizer report ends it with another status)
and print no sanitizer report."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import pe_checks  # noqa: E402

DLLS = 2
EXPORTS, GLOBALS, RUNS, VARIANTS = pe_checks.EXPORTS, pe_checks.GLOBALS, pe_checks.RUNS, pe_checks.VARIANTS
JOB = pe_checks.column_job("pe-run-sanitized", DLLS, 0)


def test_pe_job_runs_and_verifies_under_the_sanitizers():
    tmp = tempfile.mkdtemp(prefix="loadlab-pe-run-")
    try:
        job_path, out_path = os.path.join(tmp, "job.json"), os.path.join(tmp, "result.json")
        with open(job_path, "w") as f:
            json.dump(JOB, f)
        r = subprocess.run([harness.AGENT, "run", job_path, "--out", out_path], cwd=tmp, capture_output=True,
                           text=True, timeout=600, stdin=subprocess.DEVNULL)
        for marker in ("AddressSanitizer", "LeakSanitizer", "runtime error:"):
            assert marker not in r.stderr, r.stderr[-4000:]
        assert r.returncode == 0, r.stderr[-4000:]
        with open(out_path) as f:
            result = json.load(f)
        failures = pe_checks.verification_failures(result, VARIANTS, DLLS, EXPORTS, GLOBALS, RUNS)
        assert not failures, failures
    finally:
        harness.kill_processes_under(tmp)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    harness.run_tests(globals())
