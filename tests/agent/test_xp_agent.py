#!/usr/bin/python3
"""The XP-class agent (build-win32's i686 loadlab-agent.exe) under Wine's
32-bit support (Debian's wine32:i386, scripts/debian-packages.txt): a real
loadlabd, the Linux builder, and the XP-class agent measuring an i686 cell
of the column's job (small, test_shared_build.X86_JOB) from the shared
build: its facts say i686 under Wine, every variant is verified by the
probe and timed, and its result names the build task.

Where wine32 cannot run (/usr/lib/wine/wine missing, or a kernel that
runs no 32-bit x86 program: this project's VMs answer "Exec format error"
for every i386 ELF, /lib/ld-linux.so.2 itself) the test says why and exits
77, which ctest reports as skipped, not passed.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from schemacheck import validate  # noqa: E402
import test_agent_windows as win  # noqa: E402
import test_shared_build as shared  # noqa: E402

WINE32 = "/usr/lib/wine/wine"
SKIP = 77


def test_xp_agent_measures_an_i686_cell_under_wine32():
    assert os.path.exists(win.WIN32_EXE), "%s is missing: run make windows" % win.WIN32_EXE
    with win.Wine() as wine, harness.Daemon(shared_build=True) as d:
        job_id = d.submit(dict(shared.X86_JOB, name="xp-agent"))["id"]
        builder = shared.Agent(d, "builder", "none", False, once=False)
        data_dir = os.path.join(wine.tmp, "data")
        log_path = os.path.join(wine.tmp, "xp.log")
        try:
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    [WINE32, win.WIN32_EXE, "--server", d.url, "--enroll-token", d.enroll_token, "--data-dir",
                     wine.windows_path(data_dir), "--name", "xp", "--once"],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=wine.env, cwd=wine.tmp)
        except BaseException:
            builder.close()
            raise
        job = shared.wait_measurer(d, job_id, proc, log_path, builder)
        (build,) = job["builds"]
        assert build["target"]["architecture"] == "i686", build
        (task,) = job["tasks"]
        (row,) = harness.results_of(d, task["id"])
        result = row[1]
        validate("result.json", result)
        assert result["facts"]["arch"] == "i686" and result["facts"]["runner"] == "wine", result["facts"]
        assert result["build_task"] == {"id": build["id"], "builder": "builder"}, result["build_task"]
        assert [v["name"] for v in result["variants"]] == shared.X86_JOB["variants"], result["variants"]
        for v in result["variants"]:
            assert v["valid"], (v["name"], v.get("invalid_reason"))
            assert v["warm"]["summary"]["n"] == 3, (v["name"], v["warm"])


def wine32_missing():
    """Why wine32 cannot run here, or None when `wine --version` runs."""
    if not os.path.exists(WINE32):
        return "%s is missing (Debian's wine32:i386 is not installed)" % WINE32
    try:
        r = subprocess.run([WINE32, "--version"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=120)
    except OSError as e:  # ENOEXEC: the kernel runs no i386 program
        return "%s cannot be started: %s" % (WINE32, e)
    return None if r.returncode == 0 else "%s --version exited with %d: %s" % (WINE32, r.returncode,
                                                                             r.stderr.strip()[-300:])


if __name__ == "__main__":
    reason = wine32_missing()
    if reason:
        print("skip: " + reason)
        sys.exit(SKIP)
    harness.run_tests(globals())
