"""The program family on the Windows agent: build-win64's loadlab-agent.exe
under Wine (a private prefix and a wineserver this test starts and stops by
PID, as test_agent_windows.py does) against a real loadlabd leases the job
of a real program this project did not write (Lua 5.4 from Debian's source
package, cross-built by build_lua_mingw.sh, submitted with `loadlab submit
--program-dir`), fetches its blobs over HTTP, verifies every variant under
the debug probe (as-built, rebase, bind, aslr-off) or reports it invalid
with its reason, and fills the warm and cold tables. The result is checked
as test_program_family.py checks the Linux agent's; a second job on the
same files downloads nothing."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from agent_wait import wait_agent  # noqa: E402
import test_agent_windows as win  # noqa: E402
import test_program_family as prog  # noqa: E402
from schemacheck import validate  # noqa: E402


def run_windows_agent(wine, d, data_dir, name, timeout=900):
    """The x64 agent with --once: enrolls (first time), leases, posts."""
    proc, log_path = wine.start(
        ["--server", d.url, "--enroll-token", d.enroll_token, "--data-dir",
         wine.windows_path(data_dir), "--name", "wine-program", "--once"], name)
    return wait_agent(proc, log_path, timeout)


def run_to_result(wine, d, data_dir, name, job_id):
    """run_windows_agent, which must finish JOB_ID and exit 0: the job's
    result, valid, from the Windows build itself (its facts say so) under
    Wine."""
    code, log = run_windows_agent(wine, d, data_dir, name)
    job = d.api("GET", "/api/v1/jobs/%d" % job_id, token=d.admin_token).json()
    assert job["state"] == "done", (job["tasks"][0].get("last_error"), log[-4000:])
    assert code == 0, log[-4000:]
    result = prog.result_of(d, job_id)
    validate("result.json", result)
    assert result["facts"]["os"].startswith("win") and result["facts"]["runner"] == "wine", result["facts"]
    return result


def test_windows_agent_runs_a_program_job_under_wine():
    assert os.path.exists(win.WIN64_EXE), "%s is missing: run make windows" % win.WIN64_EXE
    with win.Wine() as wine, harness.Daemon() as d, \
            tempfile.TemporaryDirectory(prefix="loadlab-program-win-") as tmp:
        folder = prog.program_folder(tmp)
        data_dir = os.path.join(wine.tmp, "data")
        first = prog.submit(d, folder, tmp, "lua-win-1", timeout_s=45)
        result = run_to_result(wine, d, data_dir, "agent-1", first)
        prog.check_result(result)
        # Wine 8 resets WINEDLLOVERRIDES in every process a Windows program
        # starts: the Windows agent writes the prefix's DllOverrides key
        # instead (issue 40; test_program_zlib_windows.py checks its effect).
        overrides = result["program"]["dll_overrides"]
        assert overrides["applied"] is True and "variable" not in overrides, overrides
        assert overrides["registry"] == r"HKCU\Software\Wine\DllOverrides", overrides
        assert overrides["names"] == ["lua54", "lua54b"] and "note" not in overrides, overrides
        # Each timed run is bounded by the job's timeout_s, not a fixed 60 s.
        for table in ("warm", "cold"):
            assert result["measurement"][table]["timeout_ms"] == 45000, result["measurement"][table]
        cache = result["program"]["blob_cache"]
        assert cache["fetched"] == 2 and cache["cached"] == 1 and cache["bytes_fetched"] > 0, cache
        # Every variant's modules carry their preferred and actual base,
        # and as built the second copy of the DLL was moved by the loader.
        as_built = next(v for v in result["variants"] if v["name"] == "as-built")
        assert as_built["verify"]["relocated"] in (["bin/lua54.dll"], ["bin/lua54b.dll"]), \
            as_built["verify"]
        r = d.api("GET", "/api/v1/jobs/%d/report" % first, token=d.admin_token)
        assert r.status == 200, r
        report = r.json()
        validate("report.json", report)
        assert report["job"]["family"] == "program" and report["job"]["program"]["exe"] == "bin/lua.exe"
        for table in ("warm", "cold"):
            rows = {row["variant"]: row for row in report[table]["variants"]}
            assert set(rows) == set(prog.VARIANTS), (table, rows)
            assert all(c["status"] == "ok" for row in rows.values() for c in row["cells"]), rows
        assert os.path.exists(os.path.join(data_dir, "blobs", "index.json"))
        # The same files again: the Windows agent's cache serves them all.
        second = prog.submit(d, folder, tmp, "lua-win-2")
        code, log = run_windows_agent(wine, d, data_dir, "agent-2")
        assert code == 0, log[-4000:]
        cache = prog.result_of(d, second)["program"]["blob_cache"]
        assert cache["fetched"] == 0 and cache["cached"] == 3 and cache["bytes_fetched"] == 0, cache
        # The two jobs compare as generated ones do: the same files, run
        # with another timeout_s (45 s, then the default 60 s).
        r = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d&max_regression=1000&format=json"
                  % (first, second), token=d.admin_token)
        assert r.status == 200, r
        comparison = r.json()
        validate("compare.json", comparison)
        assert comparison["verdict"] == "ok", comparison
        assert {row["variant"] for row in comparison["rows"]} == set(prog.VARIANTS), comparison["rows"]
        assert comparison["program"] == {"same_program": False, "settings_changed": ["timeout_s"], "files": {
            "added": [], "removed": [], "changed": [], "unchanged": 3}}, comparison["program"]
        # Delivered and cleaned up: the work folder is empty again.
        assert not os.listdir(os.path.join(data_dir, "work")), os.listdir(os.path.join(data_dir, "work"))


if __name__ == "__main__":
    harness.run_tests({"test_windows_agent_runs_a_program_job_under_wine":
                       test_windows_agent_runs_a_program_job_under_wine})
