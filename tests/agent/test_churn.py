#!/usr/bin/python3
"""The process-churn test (agent/churn.h) through `loadlab-agent churn`.

- Linux analog, 200 processes, sets none and generated (two shared objects
  built here with gcc -shared): create_us and destroy_us > 0, processes
  == 200, "blocked" says it was not measured, and afterwards no process
  carries this run's marker (an environment variable every child
  inherits).
- A library that does not load: exit 1 with one line naming the failure,
  and no child left behind.
- Bad options (processes 0 or 6000, an unknown set, user32 without
  Windows programs): exit 2 with one clear stderr line and nothing run.
- Under Wine (--wine; failing without wine64), 50 processes, sets none,
  user32 and user32+gdi32 in one prefix, with the churn programs that
  ship inside the agent (method.programs: x86_64, size and SHA-256 as
  written to the work folder; test_no_compiler.py shows that no compiler
  runs): the
  figures are there, the probe ran in both phases, 0 < blocked_max_ms <=
  blocked_total_ms <= the destroy time (plus one call), the probe owned a window (Wine's null display driver), the
  method says wine and carries the note about Wine's implementation, and no process of the prefix is left.
  Those figures, posted as a churn job's result to a real daemon, read as
  the seed's table: each set against none (ratios), a finding per set, the
  note that Wine keeps no win32k lock on every row, in the JSON, the
  Markdown and `loadlab report`.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402

AGENT = harness.AGENT
WINE64 = "/usr/lib/wine/wine64"
MARKER = "LOADLAB_CHURN_TEST_MARKER"


def marked_processes(marker):
    """PIDs of live processes whose environment holds MARKER=marker."""
    needle = ("%s=%s" % (MARKER, marker)).encode()
    return harness.pids_where("environ", lambda env: needle in env)


def run_agent(args, marker, timeout=300):
    env = dict(os.environ)
    env[MARKER] = marker
    return subprocess.run([AGENT, "churn"] + args, capture_output=True, text=True, timeout=timeout,
                          env=env)


def stderr_lines(r):
    return [line for line in r.stderr.splitlines() if line.strip()]


def build_shared_objects(folder):
    libs = []
    for i in range(2):
        src = os.path.join(folder, "churn%d.c" % i)
        with open(src, "w") as f:
            f.write("int churn%d_table[4096] = {1};\nint churn%d_f(int x) { return x + %d; }\n" % (i, i, i))
        lib = os.path.join(folder, "libchurn%d.so" % i)
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", lib, src], check=True, timeout=60)
        libs.append(lib)
    return libs


def test_linux_none_and_generated():
    work = tempfile.mkdtemp(prefix="loadlab-churn-test-")
    marker = uuid.uuid4().hex
    try:
        libs = build_shared_objects(work)
        args = ["--processes", "200", "--dll-set", "none,generated", "--json", "--work-dir",
                os.path.join(work, "w")]
        for lib in libs:
            args += ["--lib", lib]
        r = run_agent(args, marker)
        assert r.returncode == 0, r.stderr
        results = json.loads(r.stdout)
        assert [x["dll_set"] for x in results] == ["none", "generated"], results
        for x in results:
            assert x["processes"] == 200, x
            assert x["create_us"] > 0 and x["destroy_us"] > 0, x
            assert x["waves"] == 1 and x["wave_size"] == 200, x
            assert x["blocked"] == "not measured on this platform", x
            assert "blocked_total_ms" not in x and "blocked_max_ms" not in x, x
            assert x["probe"]["measured"] is False, x
            assert x["method"]["platform"] == "linux" and x["method"]["runner"] == "native", x
            print("  linux %-10s 200 processes: create %.1f ms, destroy %.1f ms"
                  % (x["dll_set"], x["create_us"] / 1000, x["destroy_us"] / 1000))
        assert results[0]["method"]["libraries"] == [], results[0]
        assert results[1]["method"]["libraries"] == libs, results[1]
        assert marked_processes(marker) == [], "children left behind"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_linux_waves():
    marker = uuid.uuid4().hex
    r = run_agent(["--processes", "1001", "--json"], marker)
    assert r.returncode == 0, r.stderr
    x = json.loads(r.stdout)[0]
    assert x["processes"] == 1001 and x["waves"] == 2 and x["wave_size"] == 1000, x
    assert x["create_us"] > 0 and x["destroy_us"] > 0, x
    assert marked_processes(marker) == [], "children left behind"


def test_linux_library_that_does_not_load():
    work = tempfile.mkdtemp(prefix="loadlab-churn-test-")
    marker = uuid.uuid4().hex
    try:
        bad = os.path.join(work, "libbad.so")
        with open(bad, "w") as f:
            f.write("not an ELF file\n")
        r = run_agent(["--processes", "100", "--dll-set", "generated", "--lib", bad], marker)
        assert r.returncode == 1, (r.returncode, r.stderr)
        own = [line for line in stderr_lines(r) if line.startswith("loadlab-agent churn: ")]
        assert len(own) == 1 and "could not load" in own[0], r.stderr
        assert r.stdout == "", r.stdout
        assert marked_processes(marker) == [], "children left behind"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_bad_options():
    cases = [(["--processes", "0"], "1..5000"),
             (["--processes", "6000"], "1..5000"),
             (["--dll-set", "user64"], "Unknown DLL set 'user64'"),
             (["--dll-set", "generated"], "needs the libraries"),
             (["--dll-set", "user32"], "needs Windows programs"),
             (["--processes"], "missing value")]
    for args, text in cases:
        r = run_agent(args, uuid.uuid4().hex, timeout=30)
        lines = stderr_lines(r)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert len(lines) == 1 and lines[0].startswith("loadlab-agent churn: ") and text in lines[0], \
            (args, r.stderr)
        assert r.stdout == "", (args, r.stdout)


def report_of_wine_churn(results):
    """The report of a churn job whose one result holds RESULTS (the agent's
    --json output under Wine), through the real daemon and CLI."""
    with harness.Daemon() as d:
        job = d.submit(harness.load_example("local/churn.json"))
        facts = {"os": "linux", "runner": "wine"}
        _, token = d.enroll("churn-wine", facts)
        lease = d.api("POST", "/api/v1/lease", {}, token=token).json()
        assert lease["job_id"] == job["id"], lease
        r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"],
                  {"attempt": lease["attempt"], "facts": facts, "variants": [{"name": "default"}],
                   "churn": results}, token=token)
        assert r.status == 200, r
        report = d.api("GET", "/api/v1/jobs/%d/report" % job["id"], token=d.admin_token).json()
        md = d.api("GET", "/api/v1/jobs/%d/report?format=md" % job["id"], token=d.admin_token).body.decode()
        cli = subprocess.run([harness.LOADLAB, "--server", d.url, "--token", d.admin_token, "report",
                              str(job["id"])], capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0, cli.stderr
    return report, md, cli.stdout


def check_wine_churn_report(results):
    report, md, table = report_of_wine_churn(results)
    churn = report["churn"]
    assert churn["baseline"] == "none" and churn["unit"] in ("us", "ms"), churn
    assert [r["dll_set"] for r in churn["rows"]] == ["none", "user32", "user32+gdi32"], churn
    for row, x in zip(churn["rows"], results):
        assert row["runner"] == "wine" and "win32k" in row["notes"][0], row
        expected = x["destroy_us"] / results[0]["destroy_us"]
        assert abs(row["destroy_ratio"] - expected) < 0.01 * expected + 0.001, (row, expected)
    assert report["warm"]["measured"] is False
    for name in ("user32", "user32+gdi32"):
        assert any(f.startswith("%s against none on " % name) and "destroying a process took" in f
                   for f in report["findings"]), report["findings"]
    assert "## Warm load time" not in md and "- ⚠ " in md and "win32k" in md, md
    assert "Warm load time" not in table and "Process churn, %s per process" % churn["unit"] in table, table
    assert "user32 !" in table and "x)" in table and "win32k" in table, table


def test_wine_none_user32_gdi32():
    # Wine is installed by scripts/install-deps.sh: missing is a failure,
    # never a pass.
    assert os.path.exists(WINE64), "FAIL: %s not found; scripts/install-deps.sh installs wine64" % WINE64
    work = tempfile.mkdtemp(prefix="loadlab-churn-wine-")
    marker = uuid.uuid4().hex
    try:
        r = run_agent(["--wine", "--processes", "50", "--dll-set", "none,user32,user32+gdi32", "--json",
                       "--work-dir", work], marker, timeout=600)
        assert r.returncode == 0, r.stderr
        results = json.loads(r.stdout)
        assert [x["dll_set"] for x in results] == ["none", "user32", "user32+gdi32"], results
        for x in results:
            assert x["processes"] == 50 and x["waves"] == 1, x
            assert x["create_us"] > 0 and x["destroy_us"] > 0, x
            # A failed start is tried again (up to 3 tries a child) and counted.
            assert 0 <= x["start_retries"] <= 2 * 50 and isinstance(x["start_error"], int), x
            assert (x["start_retries"] == 0) == (x["start_error"] == 0), x
            # The probe ran in both phases (one call at least at each
            # phase's start), and a call into the window manager takes time.
            assert x["probe"]["create"]["calls"] >= 1 and x["probe"]["destroy"]["calls"] >= 1, x
            assert x["blocked_max_ms"] > 0, x
            # One call is part of the total; the total of the destroy phase
            # fits in it (a call that started in the phase may end after
            # it: one call's worth, plus 1 ms for the flag set just before
            # the phase's clock starts).
            assert x["blocked_max_ms"] <= x["blocked_total_ms"] + 1e-9, x
            assert x["blocked_total_ms"] <= x["destroy_us"] / 1000 + x["blocked_max_ms"] + 1, x
            assert x["probe"]["destroy"]["blocked_total_ms"] == x["blocked_total_ms"], x
            assert x["probe"]["destroy"]["blocked_max_ms"] == x["blocked_max_ms"], x
            assert x["method"]["runner"] == "wine" and x["method"]["platform"] == "wine", x
            assert "Wine" in x["method"]["note"], x
            # The null display driver lets the probe own a window. The key
            # was read back from the restarted session (up to three tries:
            # a server killed before it saved its registry loses it), and
            # the window came within the probe's 60 tries.
            assert x["method"]["wine_display_driver"] == "null", x
            assert 1 <= x["method"]["wine_display_attempts"] <= 3, x
            assert x["probe"]["window"] is True, x
            assert 1 <= x["probe"]["window_attempts"] <= 60, x
            assert isinstance(x["probe"]["window_error"], int), x
            print("  wine  %-12s 50 processes: create %.1f ms, destroy %.1f ms, "
                  "PeekMessage %d calls, blocked %.3f ms total, %.3f ms max (window %s)"
                  % (x["dll_set"], x["create_us"] / 1000, x["destroy_us"] / 1000,
                     x["probe"]["destroy"]["calls"], x["blocked_total_ms"], x["blocked_max_ms"],
                     x["probe"]["window"]))
        # The programs that ran are the agent's own, as written out.
        programs = {p["name"]: p for p in results[0]["method"]["programs"]}
        assert set(programs) == {"churn_parent.exe", "churn_child.exe"}, programs
        for name, p in programs.items():
            assert p["arch"] == "x86_64" and p["built"] == "with the agent", p
            with open(os.path.join(work, name), "rb") as f:
                data = f.read()
            assert data[:2] == b"MZ" and len(data) == p["size"], p
            assert hashlib.sha256(data).hexdigest() == p["sha256"], p
        assert all(x["method"]["programs"] == results[0]["method"]["programs"] for x in results)
        assert results[1]["method"]["libraries"] == ["user32.dll"], results[1]
        assert results[2]["method"]["libraries"] == ["user32.dll", "gdi32.dll"], results[2]
        assert marked_processes(marker) == [], "processes left behind"
        check_wine_churn_report(results)
    finally:
        left = harness.kill_processes_under(work)
        shutil.rmtree(work, ignore_errors=True)
    assert left == 0, "%d processes of the prefix were left" % left


harness.run_tests(globals())
