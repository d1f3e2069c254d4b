#!/usr/bin/python3
"""No compiler on the lab machine for churn and the program family (issue 25):
the helper programs ship inside the agent (agent/programs/programs.h).

Each agent runs with a PATH that holds no program at all (an empty folder:
no gcc, no mingw-w64), and every program that it and everything it
started ran is recorded from outside. No compiler, assembler or linker
(gcc, cc, cc1, as, ld, collect2, clang, any *-w64-mingw32-*) may appear;
the Windows helpers must (the trace is real), and each task finishes.

Churn runs under `strace -f -e trace=execve,execveat`, which records
failed tries too. A program job cannot: under strace its debug probe
(the Windows debug API through Wine) saw the program's exe and ntdll.dll
and no debug event after them, so every variant failed verification (most
likely Wine's server attaching to the debuggee with ptrace, which a
process allows one tracer only). Its execs are taken
from the kernel's sched:sched_process_exec tracepoint by `perf trace`
(which follows every child it starts, without ptrace), in a private mount
namespace where tracefs is mounted for it (root only).

- the Linux agent: `churn --wine` (sets none and user32) and a program job
  (Lua, as test_program_family.py, checked the same way) through a real
  loadlabd under Wine; the result's facts list no toolchain, its helpers
  are the agent's own (the SHA-256 of the build's embedded programs);
- the Windows x64 agent (build-win64) under Wine: `churn` and the same
  program job. Wine's drive Z: would still show it the host's mingw-w64
  (/usr/bin is Z:\\usr\\bin): the trace shows it never ran it.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from agent_wait import wait_agent  # noqa: E402
from schemacheck import validate  # noqa: E402
import test_agent_windows as win  # noqa: E402
import program_jobs  # noqa: E402
import test_program_family as prog  # noqa: E402

STRACE = "/usr/bin/strace"
PERF = "/usr/bin/perf"
# A program job starts wine64 (and its preloader) for the probe and for
# each timed run of every variant and the floor: far more than this.
PROGRAM_JOB_EXECS = 40
UNSHARE = "/usr/bin/unshare"
# Compilers, assemblers and linkers by file name (after a target prefix
# such as x86_64-linux-gnu- and a version suffix such as -12 are cut).
TOOLS = {"gcc", "g++", "cc", "c89", "c99", "c++", "cpp", "cc1", "cc1plus", "collect2", "as", "ld",
         "ld.bfd", "ld.gold", "ld.lld", "lld", "clang", "clang++", "cl", "tcc", "windres", "dlltool"}
EXEC = re.compile(r'^(\d+)\s+(?:<\.\.\. )?execve(?:at)?\((?:[^,]*, )?"((?:[^"\\]|\\.)*)"')
PERF_EXEC = re.compile(r'sched:sched_process_exec\(filename: "((?:[^"\\]|\\.)*)", pid: \d+ \(([^)]*)\)')
HELPERS_LINUX = os.path.join(harness.BUILD_DIR, "agent", "programs", "x86_64")
HELPERS_WIN64 = os.path.join(os.path.dirname(os.path.dirname(win.WIN64_EXE)), "agent", "programs", "x86_64")


def is_compiler(path):
    base = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if base.endswith(".exe"):
        base = base[:-4]
    if "mingw" in base or "-w64-" in base:
        return True
    base = re.sub(r"^[a-z0-9_]+-(linux-gnu|pc-linux-gnu)-", "", base)
    base = re.sub(r"-\d+(\.\d+)*(-win32|-posix)?$", "", base)
    return base in TOOLS


def traced(cmd, trace):
    """CMD run under strace -f, every exec (tried or done) into TRACE."""
    return [STRACE, "-f", "--seccomp-bpf", "-qq", "-s", "256", "-e", "trace=execve,execveat", "-o", trace] + cmd


def exec_traced(cmd, trace, path):
    """CMD run under perf trace, every exec done (sched_process_exec) into
    TRACE, with PATH as its PATH (perf puts its own folder, /usr/bin, before
    the PATH it was given)."""
    assert os.geteuid() == 0, "FAIL: perf trace needs tracefs mounted, which needs root"
    script = ('/bin/mount -t tracefs nodev /sys/kernel/tracing && exec %s trace --no-syscalls '
              '-e sched:sched_process_exec -o "$0" -- "$@"' % PERF)
    return [UNSHARE, "-m", "--propagation", "private", "/bin/sh", "-c", script, trace, "/usr/bin/env",
            "PATH=" + path] + cmd


def execs_of(trace):
    """(every path exec'd or tried, the whole trace's text), from strace's
    or perf's output."""
    with open(trace, errors="replace") as f:
        text = f.read()
    paths = [m.group(2) for m in map(EXEC.match, text.splitlines()) if m]
    # perf: the file and the process's new name (its first 15 characters).
    for m in filter(None, map(PERF_EXEC.search, text.splitlines())):
        paths += [m.group(1), m.group(2)]
    return paths, text


def check_no_compiler(trace, helpers, min_execs=3):
    """No compiler in TRACE, which has at least MIN_EXECS execs and every
    name of HELPERS (perf records the exec'd file only: wine64, not the
    Windows program it loads)."""
    paths, text = execs_of(trace)
    assert len(paths) >= min_execs, text[:3000]
    compilers = sorted({p for p in paths if is_compiler(p)})
    assert not compilers, "compilers started: %s" % compilers
    for name in helpers:
        assert name in text, "%s never ran: %s" % (name, sorted(set(paths)))
    print("  %d names of programs started, none a compiler; %s among them" % (len(paths), ", ".join(helpers)))


def empty_path(tmp):
    folder = os.path.join(tmp, "empty-path")
    os.makedirs(folder, exist_ok=True)
    return folder


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def check_helpers(record, folder, names):
    """RECORD (the result's programs) are NAMES, as the build made them in FOLDER."""
    by_name = {p["name"]: p for p in record}
    assert set(by_name) == set(names), record
    for name, p in by_name.items():
        assert p["arch"] == "x86_64" and p["built"] == "with the agent" and "mingw32" in p["compiler"], p
        assert p["sha256"] == sha256_of(os.path.join(folder, name)), (p, folder)
        assert p["size"] == os.path.getsize(os.path.join(folder, name)), p


def check_program_result(result, folder):
    prog.check_result(result)
    validate("result.json", result)
    assert "toolchain" not in result, result["toolchain"]
    helpers = result["helpers"]
    assert "built with it" in helpers["source"], helpers
    check_helpers(helpers["programs"], folder, ["debug_probe.exe", "empty_program.exe"])


def test_linux_agent_churn_without_compiler():
    with tempfile.TemporaryDirectory(prefix="loadlab-nocc-churn-") as tmp:
        work, trace = os.path.join(tmp, "work"), os.path.join(tmp, "trace")
        env = dict(os.environ, PATH=empty_path(tmp))
        try:
            r = subprocess.run(traced([harness.AGENT, "churn", "--wine", "--processes", "5", "--dll-set",
                                       "none,user32", "--json", "--work-dir", work], trace),
                               capture_output=True, text=True, env=env, timeout=600)
        finally:
            left = harness.kill_processes_under(work)
        assert r.returncode == 0, r.stderr[-3000:]
        assert left == 0, "%d processes of the prefix were left" % left
        results = json.loads(r.stdout)
        assert [x["dll_set"] for x in results] == ["none", "user32"], results
        for x in results:
            assert x["processes"] == 5 and x["create_us"] > 0 and x["destroy_us"] > 0, x
            check_helpers(x["method"]["programs"], HELPERS_LINUX, ["churn_parent.exe", "churn_child.exe"])
        check_no_compiler(trace, ["churn_parent.exe", "churn_child.exe"])


def test_linux_agent_program_job_without_compiler():
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-nocc-program-") as tmp:
        folder = prog.program_folder(tmp)
        data_dir, trace = os.path.join(tmp, "agent"), os.path.join(tmp, "trace")
        os.makedirs(data_dir)
        job = prog.submit(d, folder, tmp, "lua-no-compiler")
        log_path = os.path.join(tmp, "agent.log")
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                exec_traced([program_jobs.AGENT, "--server", d.url, "--enroll-token", d.enroll_token, "--data-dir",
                        data_dir, "--name", "no-compiler", "--once"], trace, empty_path(tmp)),
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=dict(os.environ, PATH=empty_path(tmp)))
        code, text = wait_agent(proc, log_path, 900, lambda: harness.kill_processes_under(data_dir))
        assert code == 0, text[-4000:]
        result = prog.result_of(d, job)
        # Nothing in PATH: the agent's facts list no toolchain at all.
        assert result["facts"]["toolchains"] == [] and result["facts"]["toolchain"] == [], result["facts"]
        check_program_result(result, HELPERS_LINUX)
        check_no_compiler(trace, [win.WINE64], PROGRAM_JOB_EXECS)


def windows_churn(wine, tmp, env, wrap=lambda cmd: cmd):
    """churn, the Windows agent's own (natively, as Windows sees it), run
    as WRAP(its traced command line) with ENV: 5 processes, the helpers the
    agent carries, no compiler in the trace."""
    work, trace = os.path.join(wine.tmp, "churn"), os.path.join(tmp, "churn.trace")
    out = os.path.join(wine.tmp, "churn.out")
    with open(out, "wb") as f:
        r = subprocess.run(wrap(traced([win.WINE64, win.WIN64_EXE, "churn", "--processes", "5", "--dll-set",
                                        "none", "--json", "--work-dir", wine.windows_path(work)], trace)),
                           stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=env,
                           cwd=wine.tmp, timeout=600)
    with open(out, errors="replace") as f:
        text = f.read()
    assert r.returncode == 0, text[-3000:]
    (x,) = json.loads(text[text.index("["):text.rindex("]") + 1])
    assert x["processes"] == 5 and x["create_us"] > 0 and x["method"]["runner"] == "wine", x
    check_helpers(x["method"]["programs"], HELPERS_WIN64, ["churn_parent.exe", "churn_child.exe"])
    check_no_compiler(trace, ["churn_parent.exe", "churn_child.exe"])


def test_windows_agent_without_compiler():
    assert os.path.exists(win.WIN64_EXE), "%s is missing: run make windows" % win.WIN64_EXE
    with win.Wine() as wine, harness.Daemon() as d, \
            tempfile.TemporaryDirectory(prefix="loadlab-nocc-win-") as tmp:
        env = dict(wine.env, PATH=empty_path(tmp))
        windows_churn(wine, tmp, env)
        # The program job, leased from the daemon.
        folder = prog.program_folder(tmp)
        job = prog.submit(d, folder, tmp, "lua-win-no-compiler")
        data_dir, trace = os.path.join(wine.tmp, "data"), os.path.join(tmp, "program.trace")
        log_path = os.path.join(tmp, "agent.log")
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                exec_traced([win.WINE64, win.WIN64_EXE, "--server", d.url, "--enroll-token", d.enroll_token,
                        "--data-dir", wine.windows_path(data_dir), "--name", "wine-no-compiler", "--once"],
                       trace, env["PATH"]),
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, cwd=wine.tmp)
        code, text = wait_agent(proc, log_path, 900)
        assert code == 0, text[-4000:]
        result = prog.result_of(d, job)
        assert result["facts"]["os"].startswith("win") and result["facts"]["runner"] == "wine", result["facts"]
        check_program_result(result, HELPERS_WIN64)
        check_no_compiler(trace, [win.WINE64], PROGRAM_JOB_EXECS)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    harness.run_tests(globals())
