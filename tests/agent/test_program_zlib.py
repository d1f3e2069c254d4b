r"""The program family with a DLL whose name Wine also ships (issue 23):
zlib from Debian's source package, cross-built with mingw-w64 into
zlib1.dll and example_d.exe, which imports it (build_zlib_mingw.sh, cached
in the build tree), submitted with `loadlab submit --program-dir` to a real
loadlabd and run by the Linux agent under Wine with a private WINEPREFIX.

Wine 8 has a builtin zlib1.dll and, by default, loads it instead of the
file beside the exe. Seen by hand with this job before the agent set
WINEDLLOVERRIDES (commit ea9baa1): in all four variants the probe saw
zlib1.dll at \??\Z:\usr\lib\x86_64-linux-gnu\wine\x86_64-windows\zlib1.dll,
base 0x241b90000. zlib's own zlib1.dll, linked as Makefile.gcc links it,
has that same automatic ImageBase, so `as-built` and `aslr-off` passed
verification and were timed with Wine's zlib; `rebase` and `bind` were
invalid with "zlib1.dll: the probe read base 0x241b90000 from its file, the
toolkit 0x60000000." (the issue's message), caught only because the old
check matched a module to a manifest file by the end of its path, so the
builtin counted as the program's zlib1.dll.

With the agent's `zlib1=n,b` override the program's own file is loaded:
every variant is verified and timed, the probe records where each module
came from, and zlib1.dll came from the variant's folder. The reason a
variant gets when a manifest DLL comes from elsewhere: a second job ships
zlib1.dll in lib/, where no loader looks, so Wine takes its builtin even
with the override, and the variant is invalid with the builtin's path and
why (tests/unit/agent/test_program_modules.c has the judgement's cases).
A Windows agent under Wine cannot give its programs the variable (Wine 8
resets WINEDLLOVERRIDES in every process a Windows program starts;
docs/program-family.md): it writes the prefix's DllOverrides key instead,
which test_program_zlib_windows.py checks; this test runs the Linux agent.
No assertion on timings."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
import program_jobs  # noqa: E402
from schemacheck import validate  # noqa: E402

ZLIB_DIR = os.path.join(harness.BUILD_DIR, "tests", "program-zlib")
# The program's folder is build_zlib_mingw.sh's bin/: the exe and its DLL
# side by side at the top of the manifest, as a Windows product ships.
EXE = "example_d.exe"
VARIANTS = program_jobs.VARIANTS


def build_zlib():
    return program_jobs.build_cached("build_zlib_mingw.sh", ZLIB_DIR, 900)


def submit(d, folder, tmp, name, variants=VARIANTS):
    program = {"exe": EXE, "args": [], "until": "exit", "timeout_s": 60}
    return program_jobs.submit_program(d, folder, tmp, name, program, variants)


result_of = program_jobs.result_of


def folder_of(path):
    """The folder of a Windows path, lower case, '\\'-separated."""
    return path.replace("/", "\\").rsplit("\\", 1)[0].lower()


def test_zlib_loads_its_own_dll():
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-zlib-") as tmp:
        folder = os.path.join(tmp, "zlib")
        shutil.copytree(os.path.join(build_zlib(), "bin"), folder)
        data_dir = os.path.join(tmp, "agent")
        os.makedirs(data_dir)
        job_id = submit(d, folder, tmp, "zlib")
        result = program_jobs.run_job(d, data_dir, job_id, "zlib-test")
        validate("result.json", result)
        assert result["runner"] == "wine", result.get("runner")
        overrides = result["program"]["dll_overrides"]
        assert overrides["applied"] is True and overrides["names"] == ["zlib1"], overrides
        assert overrides["left_out"] == [], overrides
        assert "zlib1=n,b" in overrides["variable"] and "mscoree,mshtml=" in overrides["variable"], overrides
        variants = {v["name"]: v for v in result["variants"]}
        assert list(variants) == VARIANTS
        reasons = [(n, v.get("invalid_reason")) for n, v in variants.items() if not v["valid"]]
        assert not reasons, reasons
        for name, v in variants.items():
            verify = v["verify"]
            assert verify["ended"] == "exit" and verify["exit_code"] == 0, verify
            modules = verify["modules"]
            exe = next(m for m in modules if m.get("file") == EXE)
            (zlib,) = [m for m in modules if m["name"].lower() == "zlib1.dll"]
            # The program's own zlib1.dll, from the variant's own folder
            # (the exe's), not Wine's from system32.
            assert zlib["program_file"] and zlib["file"] == "zlib1.dll", zlib
            assert zlib["from_program_folder"] is True, zlib
            assert folder_of(zlib["path"]) == folder_of(exe["path"]), (zlib, exe)
            assert "system32" not in zlib["path"].lower(), zlib
            # System DLLs are recorded, and fine where they are.
            kernel32 = next(m for m in modules if m["name"].lower() == "kernel32.dll")
            assert not kernel32["program_file"] and kernel32["path"], kernel32
            assert verify["dlls_loaded"] == 1, verify
            if v["knobs"]["bases"] == "unique":
                assert zlib["preferred"] == "0x60000000" and not zlib["relocated"], zlib
            assert len(v["warm"]["samples_us"]) == program_jobs.WARM_RUNS, v["warm"]
            assert len(v["cold"]["samples_us"]) == 1, v["cold"]
        assert len(result["floor"]["warm"]["samples_us"]) == program_jobs.WARM_RUNS

        # The program's zlib1.dll in a subfolder, where the loader does not
        # look: Wine takes its builtin despite the override (n,b: native
        # not found, then builtin), and the variant is invalid, naming it.
        moved = os.path.join(tmp, "moved")
        os.makedirs(os.path.join(moved, "lib"))
        shutil.copy(os.path.join(folder, EXE), moved)
        shutil.copy(os.path.join(folder, "zlib1.dll"), os.path.join(moved, "lib"))
        job_id = submit(d, moved, tmp, "zlib-moved", variants=["as-built"])
        result = program_jobs.run_job(d, data_dir, job_id, "zlib-test")
        validate("result.json", result)
        assert result["program"]["dll_overrides"]["names"] == ["zlib1"], result["program"]
        (v,) = result["variants"]
        assert not v["valid"] and "warm" not in v, v
        reason = v["invalid_reason"]
        assert reason.startswith("zlib1.dll was loaded from ") and "(a Wine builtin" in reason, reason
        assert reason.endswith("not from the program's folder."), reason
        (zlib,) = [m for m in v["verify"]["modules"] if m["name"].lower() == "zlib1.dll"]
        assert zlib["instead_of"] == "lib/zlib1.dll" and not zlib["from_program_folder"], zlib
        assert "zlib1=n,b" in reason and v["verify"]["dlls_loaded_elsewhere"] == 1, reason
        assert zlib["path"].replace("\\??\\", "", 1) in reason, (zlib, reason)


if __name__ == "__main__":
    harness.run_tests(dict(globals()))
