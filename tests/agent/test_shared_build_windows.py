#!/usr/bin/python3
"""A shared build measured by the Windows agent without a compiler (issue
25's first check): a real loadlabd, the Linux agent with mingw-w64 (the
builder, which also measures its own cell) and build-win64's
loadlab-agent.exe under Wine started in a mount namespace where no
compiler, assembler or linker exists (no_compiler_ns.py: not in /usr/bin,
so not on Wine's Z: drive either; nor the compilers' folders), under
`strace -f -e trace=execve,execveat`, which records every program the
Windows agent and everything it started ran or tried.

The column's job (pietrek-2000, small, as test_shared_build.py) over the
two cells:
- the job finishes; every variant is verified and timed in both cells;
- the Windows agent's facts list no toolchain; its trace shows no compiler
  started (and wine64 running the build's main.exe: the trace is real);
- its blob cache holds every file of the build (it fetched them), and its
  result names the build task and the build's toolchain;
- unbound variants ran the build's bytes in both cells, bound ones differ
  from the build only in main.exe (bind, on each machine).

Then the program family's example (its variants, on Lua: test_program_
family.py's job) and the Windows churn (`churn`, and
schemas/examples/churn.json through the daemon with a shared build) run
on the same agent in the same namespace, traced the same way (perf trace
for the program job, whose debug probe strace would disturb:
test_no_compiler.py says why).

The three parts share one Wine prefix (a copy of the booted template) and
one daemon, one part after the other: a prefix and a daemon each cost a
start that none of the assertions needs.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from agent_wait import wait_agent  # noqa: E402
from schemacheck import validate  # noqa: E402
import no_compiler_ns  # noqa: E402
import test_agent_windows as win  # noqa: E402
import test_no_compiler as nocc  # noqa: E402
import test_program_family as prog  # noqa: E402
import test_shared_build as shared  # noqa: E402

PE_JOB = dict(shared.PE_JOB, name="shared-build-windows")


def start_windows_agent(wine, tmp, d, name, label, trace, tracer="strace"):
    """build-win64's agent with --once under Wine, in a namespace without
    compilers, its execs into TRACE; (process, log path, data folder)."""
    data_dir = os.path.join(wine.tmp, "data-" + name)
    log_path = os.path.join(tmp, name + ".log")
    scratch = tempfile.mkdtemp(prefix="ns-", dir=tmp)
    cmd = [win.WINE64, win.WIN64_EXE, "--server", d.url, "--enroll-token", d.enroll_token, "--data-dir",
           wine.windows_path(data_dir), "--name", name, "--labels", "bench=" + label, "--once"]
    env = dict(wine.env, PATH=nocc.empty_path(tmp))
    cmd = nocc.traced(cmd, trace) if tracer == "strace" else nocc.exec_traced(cmd, trace, env["PATH"])
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(no_compiler_ns.command(scratch, cmd), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=log, env=env, cwd=wine.tmp)
    return proc, log_path, data_dir


def check_fetched(data_dir, built):
    """Every file of the build BUILT is in the agent's blob cache."""
    with open(os.path.join(data_dir, "blobs", "index.json")) as f:
        cached = set(json.load(f)["blobs"])
    wanted = {f["sha256"] for v in built["variants"] + [built["floor"]] for f in v["files"]}
    assert wanted <= cached, "not fetched: %s" % sorted(wanted - cached)
    print("  the Windows agent's blob cache holds the build's %d files" % len(wanted))


def measures_the_shared_build(wine, d, tmp):
    job_id = d.submit(PE_JOB)["id"]
    trace = os.path.join(tmp, "lab.trace")
    builder = shared.Agent(d, "builder", "builder", False)
    proc, log_path, data_dir = start_windows_agent(wine, tmp, d, "lab-win", "lab", trace)
    try:
        assert builder.wait(1500) == 0, builder.text()[-3000:]
        code, text = wait_agent(proc, log_path, 1500)
        assert code == 0, text[-4000:]
    finally:
        builder.close()
    job = d.job(job_id)
    assert job["state"] == "done", job
    (build,) = job["builds"]
    assert build["state"] == "done", build
    built = harness.results_of(d, build["id"])[0][1]
    assert built["kind"] == "build" and built["toolchain"]["kind"] == "mingw-w64", built
    results = shared.results_by_cell(d, job)
    lab = results["lab"]
    assert lab["facts"]["os"].startswith("win") and lab["facts"]["runner"] == "wine", lab["facts"]
    assert lab["facts"]["toolchains"] == [] and lab["facts"]["toolchain_paths"] == [], lab["facts"]
    for cell, r in results.items():
        validate("result.json", r)
        assert r["build_task"] == {"id": build["id"], "builder": "builder"}, (cell, r["build_task"])
        assert r["toolchain"] == built["toolchain"], (cell, r["toolchain"])
        assert [v["name"] for v in r["variants"]] == PE_JOB["variants"], cell
        for v in r["variants"]:
            assert v["valid"], (cell, v["name"], v.get("invalid_reason"))
            assert v["warm"]["summary"]["n"] == 3, (cell, v["name"], v["warm"])
    built_files = {v["name"]: shared.digests(v) for v in built["variants"]}
    for name in PE_JOB["variants"]:
        a, b = ([v for v in results[c]["variants"] if v["name"] == name][0] for c in ("builder", "lab"))
        if name.endswith("bind"):
            for v in (a, b):
                assert [(f["name"], f["by"]) for f in v["shipped"]["local_files"]] == \
                    [("main.exe", "bind")], v["shipped"]
            strip = lambda files: {k: x for k, x in files.items() if k != "main.exe"}  # noqa: E731
            assert strip(shared.digests(a)) == strip(shared.digests(b)) == strip(built_files[name]), name
        else:
            assert shared.digests(a) == shared.digests(b) == built_files[name], name
    # The build names its toolchain and version, and the report says it.
    assert built["toolchain"]["version"].startswith("x86_64-w64-mingw32-gcc"), built["toolchain"]
    report = d.api("GET", "/api/v1/jobs/%d/report" % job_id, token=d.admin_token).json()
    validate("report.json", report)
    assert [c["build_task"] for c in report["cells"]] == [build["id"]] * 2, report["cells"]
    assert all(c["toolchain"] == built["toolchain"] for c in report["cells"]), report["cells"]
    md = d.api("GET", "/api/v1/jobs/%d/report?format=md" % job_id, token=d.admin_token).body.decode()
    assert "- built once by build task %d on builder (%s) for bench=builder, bench=lab\n" % (
        build["id"], built["toolchain"]["version"]) in md, md
    assert "- default: identical files in 2 cells\n" in md, md
    check_fetched(data_dir, built)
    nocc.check_no_compiler(trace, ["main.exe", win.WINE64], 10)


def runs_churn_and_a_program_job(wine, d, tmp):
    env = dict(wine.env, PATH=nocc.empty_path(tmp))
    nocc.windows_churn(wine, tmp, env, lambda cmd: no_compiler_ns.command(
        tempfile.mkdtemp(prefix="ns-", dir=tmp), cmd))
    # The program family's example, leased from the daemon.
    folder = prog.program_folder(tmp)
    job = prog.submit(d, folder, tmp, "lua-win-ns")
    trace = os.path.join(tmp, "program.trace")
    proc, log_path, data_dir = start_windows_agent(wine, tmp, d, "win-ns", "none", trace, "perf")
    code, text = wait_agent(proc, log_path, 900)
    assert code == 0, text[-4000:]
    result = prog.result_of(d, job)
    assert result["facts"]["toolchains"] == [] and result["facts"]["runner"] == "wine", result["facts"]
    nocc.check_program_result(result, nocc.HELPERS_WIN64)
    nocc.check_no_compiler(trace, [win.WINE64], nocc.PROGRAM_JOB_EXECS)
    shutil.rmtree(data_dir, ignore_errors=True)


CHURN_JOB = dict(harness.load_example("churn.json"), name="churn-shared-windows",
                 measure={"churn": {"processes": 20, "dll_sets": ["none", "user32"]}},
                 matrix={"cells": {"bench": ["lab"]}})


def runs_the_churn_example(wine, d, tmp):
    """schemas/examples/churn.json (20 processes, two DLL sets) through the
    daemon: the Linux agent builds, the Windows agent in the namespace
    runs churn with the programs it carries; no compiler in its trace."""
    job_id = d.submit(CHURN_JOB)["id"]
    trace = os.path.join(tmp, "churn.trace")
    builder = shared.Agent(d, "churn-builder", "none", False, once=False)
    proc, log_path, _ = start_windows_agent(wine, tmp, d, "lab-churn", "lab", trace)
    job = shared.wait_measurer(d, job_id, proc, log_path, builder)
    (result,) = shared.results_by_cell(d, job).values()
    validate("result.json", result)
    assert result["facts"]["toolchains"] == [] and result["facts"]["runner"] == "wine", result["facts"]
    churn = {x["dll_set"]: x for x in result["churn"]}
    assert sorted(churn) == ["none", "user32"], result["churn"]
    for x in churn.values():
        assert x["processes"] == 20 and x["create_us"] > 0, x
        nocc.check_helpers(x["method"]["programs"], nocc.HELPERS_WIN64, ["churn_parent.exe", "churn_child.exe"])
    nocc.check_no_compiler(trace, ["churn_parent.exe", "churn_child.exe"])


def test_windows_agent_without_compiler():
    """The three parts above, one after the other, in one Wine prefix
    (a copy of the booted template) and one daemon: each part's agents
    have names and data folders of their own, and each job is done
    before the next part submits its own."""
    assert os.path.exists(win.WIN64_EXE), "%s is missing: run make windows" % win.WIN64_EXE
    with win.Wine() as wine, harness.Daemon(shared_build=True) as d, \
            tempfile.TemporaryDirectory(prefix="loadlab-shared-win-") as tmp:
        for part in (measures_the_shared_build, runs_churn_and_a_program_job, runs_the_churn_example):
            start = time.time()
            part_tmp = os.path.join(tmp, part.__name__)
            os.mkdir(part_tmp)
            part(wine, d, part_tmp)
            print("  part %s: %.1f s" % (part.__name__, time.time() - start), flush=True)


if __name__ == "__main__":
    harness.run_tests(globals())
