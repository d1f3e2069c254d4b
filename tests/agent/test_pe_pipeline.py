#!/usr/bin/python3
"""The `pe` pipeline end to end under Wine, through pipeline_run().

Runs tests/agent/pipeline_driver (pipeline_run() on a job file, no fleet
side) on the column's job with a small generator (10 DLLs x 20 exports x 2
globals) and every variant: default, rebase, bind, ordinal,
ordinal+rebase, ordinal+bind, reorder, no-rebase; 3 warm runs. Asserts:

- the result validates against schemas/result.json (with "attempt": 1);
- every variant is valid, has files with a 64-digit sha256 and a size;
- default and ordinal: all DLLs but one relocated by the loader;
  rebase, bind, ordinal+*, reorder: none;
- every import holds what GetProcAddress returns;
- ordinal variants: every import of the DLLs by ordinal (in the file and
  at run time) and no names exported; the others: all by name;
- bind variants: a bound import directory naming every DLL, each with the
  timestamp of the DLL file, the file's IAT equal to what the loader
  resolved; and the fact that Wine's loader did not use it;
- reorder: in every DLL the traced startup functions are first in .text,
  contiguous and in trace order, and the trace is not in link order;
- relocations: at least dlls * exports * globals in the DLLs;
- valid variants and the floor have warm samples (runs of them).

Also checks one claim against the file itself: the sha256 of the first
variant's main.exe; and the MSVC command generation (`pipeline_driver
--msvc JOB.json`, no MSVC needed): per variant, one cl and one link per DLL
and for the program; the by-name or NONAME .def as the imports knob says;
/BASE:0x10000000 and /DYNAMICBASE:NO for fixed bases and neither for
`toolchain`; /ORDER:@file (and cl /Gy) exactly for trace order; the
program linked against every DLL's import library. Finally, a task
cancelled when verify starts fails promptly with a "cancelled" message and
leaves no process of its own wineserver behind.

Usage: test_pe_pipeline.py PIPELINE_DRIVER WORK_DIR
"""
import hashlib
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import schemacheck  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pe_checks  # noqa: E402

DLLS = 10
EXPORTS, GLOBALS, RUNS, VARIANTS = pe_checks.EXPORTS, pe_checks.GLOBALS, pe_checks.RUNS, pe_checks.VARIANTS
JOB = pe_checks.column_job("pietrek-2000-small", DLLS, 1)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def check_msvc(driver, job_path):
    r = subprocess.run([driver, "--msvc", job_path], capture_output=True, text=True, timeout=30)
    if not check(r.returncode == 0, f"--msvc exited {r.returncode}: {r.stderr}"):
        return
    commands = json.loads(r.stdout)
    check(sorted(commands) == sorted(VARIANTS), f"msvc variants {sorted(commands)}")
    knobs = {"default": ("same", "name", "link"), "rebase": ("unique", "name", "link"),
             "bind": ("unique", "name", "link"), "ordinal": ("same", "ordinal", "link"),
             "ordinal+rebase": ("unique", "ordinal", "link"), "ordinal+bind": ("unique", "ordinal", "link"),
             "reorder": ("unique", "name", "trace"), "no-rebase": ("toolchain", "name", "link")}
    for name, cmds in commands.items():
        bases, imports, order = knobs[name]
        cl = [c for c in cmds if c[0] == "cl"]
        links = [c for c in cmds if c[0] == "link"]
        check(len(cl) == DLLS + 1 and len(links) == DLLS + 1, f"msvc {name}: {len(cl)} cl, {len(links)} link")
        for i, c in enumerate(links[:DLLS]):
            want_def = f"/DEF:S\\lt{i}{'_ordinal' if imports == 'ordinal' else ''}.def"
            check(want_def in c and "/DLL" in c, f"msvc {name}: {c}")
            check(("/BASE:0x10000000" in c and "/DYNAMICBASE:NO" in c) == (bases != "toolchain") and
                  (bases != "toolchain" or not any(a.startswith("/BASE") for a in c)), f"msvc {name}: bases {c}")
            check(any(a.startswith("/ORDER:@") for a in c) == (order == "trace"), f"msvc {name}: order {c}")
        check(all(("/Gy" in c) == (order == "trace") for c in cl[:DLLS]), f"msvc {name}: /Gy")
        exe = links[-1]
        check("/OUT:O\\main.exe" in exe and all(f"O\\lt{i}.lib" in exe for i in range(DLLS)),
              f"msvc {name}: program link {exe}")


def check_cancel(driver, job_path, work):
    task_dir = os.path.join(work, "cancelled")
    os.makedirs(task_dir)
    r = subprocess.run([driver, job_path, task_dir, os.path.join(work, "cancelled.json"), "2"],
                       capture_output=True, text=True, timeout=280,
                       env=dict(os.environ, LOADLAB_TEST_CANCEL_AT="verify"))
    check(r.returncode == 1 and "cancelled" in r.stderr and
          not os.path.exists(os.path.join(work, "cancelled.json")),
          f"cancel: exit {r.returncode}, {r.stderr[-500:]}")
    prefix = os.path.join(task_dir, "wineprefix")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        check(f"WINEPREFIX={prefix}".encode() not in env, f"cancel: process {pid} of the task still runs")


def main():
    driver, work = pe_checks.driver_and_work(sys.argv)
    started = time.monotonic()
    result, task_dir, job_path = pe_checks.run_driver(driver, work, "task", JOB, 280)
    elapsed = time.monotonic() - started

    schemacheck.validate("result.json", dict(result, attempt=1))
    # Everything the pipeline builds stays in its work folder: the link
    # sets are below it, never at the file system's root.
    check(os.path.isdir(os.path.join(task_dir, "sets")) and not os.path.exists("/sets"),
          "the link sets are not inside the work folder")
    for failure in pe_checks.verification_failures(result, VARIANTS, DLLS, EXPORTS, GLOBALS, RUNS):
        check(False, failure)
    by_name = {v["name"]: v for v in result["variants"]}
    floor = result.get("floor", {}).get("warm", {})

    # The result's hash is the file's.
    v0 = os.path.join(task_dir, "v", "00", "main.exe")
    digest = hashlib.sha256(open(v0, "rb").read()).hexdigest()
    listed = [f["sha256"] for f in by_name[VARIANTS[0]]["files"] if f["name"] == "main.exe"]
    check(listed == [digest], f"main.exe sha256 {listed} != {digest}")

    check_msvc(driver, job_path)
    check_cancel(driver, job_path, work)

    mins = {n: v.get("warm", {}).get("min_us") for n, v in by_name.items()}
    print(f"pipeline: {elapsed:.1f} s, phases {result.get('phases_ms')}")
    print(f"fastest of {RUNS} (us): floor {floor.get('min_us')}, " +
          ", ".join(f"{n} {mins[n]}" for n in VARIANTS))
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
