r"""The Windows agent under Wine runs a program's own DLLs without anyone's
WINEDLLOVERRIDES (issue 40): zlib's example_d.exe and its zlib1.dll (Debian's
source, cross-built by build_zlib_mingw.sh, cached in the build tree), a
name Wine also ships as a builtin, leased by build-win64's loadlab-agent.exe
under Wine (a private prefix and wineserver, test_agent_windows.Wine) from a
real loadlabd.

Wine 8 resets WINEDLLOVERRIDES in every process a Windows program starts,
so the agent, seeing ntdll's wine_get_version, writes zlib1 = "native,builtin"
under the prefix's HKCU\Software\Wine\DllOverrides before the task and puts
back what was there after. Before the change the agent said it could not
(applied: false) and every variant was invalid with "zlib1.dll was loaded
from Z:\usr\lib\x86_64-linux-gnu\wine\x86_64-windows\zlib1.dll".

Checked: every variant verified, its zlib1.dll from the variant's own
folder; program.dll_overrides names the registry key; after the task the
key holds what it held before (a value the operator had for zlib1 is back,
an unrelated one untouched, nothing of the agent's left)."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import program_jobs  # noqa: E402
import test_agent_windows as win  # noqa: E402
import test_program_windows as prog_win  # noqa: E402
import test_program_zlib as zlib_job  # noqa: E402

KEY = r"HKCU\Software\Wine\DllOverrides"


def reg(wine, *args):
    """`reg ARGS` in WINE's prefix: its output."""
    r = subprocess.run([win.WINE64, "reg"] + list(args), capture_output=True, text=True, env=wine.env,
                       stdin=subprocess.DEVNULL, timeout=120)
    return r.returncode, r.stdout + r.stderr


def overrides_in(wine):
    """{name: data} of the prefix's DllOverrides key."""
    code, out = reg(wine, "query", KEY)
    values = {}
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[1] == "REG_SZ":
            values[parts[0].lower()] = parts[2] if len(parts) == 3 else ""
    return values


def test_windows_agent_runs_zlibs_own_dll_under_wine():
    assert os.path.exists(win.WIN64_EXE), "%s is missing: run make windows" % win.WIN64_EXE
    zlib_dir = zlib_job.build_zlib()
    with win.Wine() as wine, harness.Daemon() as d, \
            tempfile.TemporaryDirectory(prefix="loadlab-zlib-win-") as tmp:
        assert "zlib1" not in wine.env.get("WINEDLLOVERRIDES", ""), wine.env.get("WINEDLLOVERRIDES")
        # What the operator had: zlib1 builtin (the agent must put it back)
        # and a value of another DLL (never touched).
        assert reg(wine, "add", KEY, "/v", "zlib1", "/d", "builtin", "/f")[0] == 0
        assert reg(wine, "add", KEY, "/v", "otherdll", "/d", "native", "/f")[0] == 0
        before = overrides_in(wine)
        assert before.get("zlib1") == "builtin" and before.get("otherdll") == "native", before
        folder = os.path.join(tmp, "zlib")
        shutil.copytree(os.path.join(zlib_dir, "bin"), folder)
        job_id = zlib_job.submit(d, folder, tmp, "zlib-win")
        result = prog_win.run_to_result(wine, d, os.path.join(wine.tmp, "data"), "agent-1", job_id)
        overrides = result["program"]["dll_overrides"]
        assert overrides["applied"] is True and overrides["registry"] == KEY, overrides
        assert overrides["registry_value"] == "native,builtin" and overrides["names"] == ["zlib1"], \
            overrides
        assert "variable" not in overrides and "note" not in overrides, overrides
        variants = {v["name"]: v for v in result["variants"]}
        assert list(variants) == zlib_job.VARIANTS, list(variants)
        reasons = [(n, v.get("invalid_reason")) for n, v in variants.items() if not v["valid"]]
        assert not reasons, reasons
        for name, v in variants.items():
            modules = v["verify"]["modules"]
            exe = next(m for m in modules if m.get("file") == zlib_job.EXE)
            (zlib,) = [m for m in modules if m["name"].lower() == "zlib1.dll"]
            assert zlib["program_file"] and zlib["from_program_folder"] is True, (name, zlib)
            assert zlib_job.folder_of(zlib["path"]) == zlib_job.folder_of(exe["path"]), (zlib, exe)
            assert "x86_64-windows" not in zlib["path"].lower(), zlib
            assert len(v["warm"]["samples_us"]) == program_jobs.WARM_RUNS, v["warm"]
            # Under Wine the Windows counters are Wine's: none counted, each
            # named with the reason, never a zero.
            counters = v["warm"]["run_counters"]
            assert counters["counters"] == [], counters
            assert "Wine" in counters["not_counted"]["cpu_user_us"], counters
            assert "cpu_user_us" not in counters, counters
        # After the task the key holds what it held before.
        after = overrides_in(wine)
        assert after == before, (before, after)
        print("zlib1.dll from the program's folder in %d variants; registry before and after: %s"
              % (len(variants), after))


if __name__ == "__main__":
    harness.run_tests({"test_windows_agent_runs_zlibs_own_dll_under_wine":
                       test_windows_agent_runs_zlibs_own_dll_under_wine})
