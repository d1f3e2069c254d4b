#!/usr/bin/python3
"""The reorder study can show its effect (issue 12), under Wine.

Runs tests/agent/pipeline_driver (pipeline_run() on a job file) on a small
pe job built for it: 4 DLLs x 400 functions, each function 4 KiB of code
(`function_bytes`), 5 % of them on the startup path spread over each DLL
(`startup_share`), a timed program that calls only the startup set
(`main: "startup"`), and every image linked with `file_alignment` 4096 so
that Wine maps the DLLs' sections rather than reading them whole. Variants
`rebase` and `reorder` (the same bases; only the function order differs),
5 cold runs each. Asserts:

- the result validates against schemas/result.json and records the build
  (`build.file_alignment` 4096, `wine_dll_sections` "mapped",
  `timed_path` "startup") and each variant's DLLs have file alignment 4096;
- both variants are valid; reorder's trace lists every function of each
  DLL, the 20 startup functions first, spread over at least half the DLL;
- at cold start, every run of `reorder` has fewer page faults than every
  run of `rebase`, and the medians differ by at least half the startup
  functions (4 x 20 = 80: each scattered startup function costs rebase a
  fault of its own, while reorder's are packed on 20 contiguous pages);
- the control, the same job at the linker's file alignment (512, sections
  read whole by Wine): rebase and reorder within a quarter of that margin
  of each other, and both above the mapped rebase (every page touched).

Usage: test_pe_reorder.py PIPELINE_DRIVER WORK_DIR
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import schemacheck  # noqa: E402
import pe_checks  # noqa: E402

DLLS, EXPORTS, SHARE, RUNS = 4, 400, 0.05, 5
STARTUP = round(SHARE * EXPORTS)  # per DLL
JOB = {"name": "reorder-small", "family": "pe",
       "generator": {"dlls": DLLS, "exports": EXPORTS, "globals_per_function": 1, "main": "startup",
                     "function_bytes": 4096, "startup_share": SHARE, "file_alignment": 4096},
       "variants": ["rebase", "reorder"], "measure": {"cold": {"runs": RUNS}}}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def run(driver, work, name, job):
    """The result of JOB through the driver in WORK/NAME."""
    return pe_checks.run_driver(driver, work, name, job, 270)[0]


def main():
    driver, work = pe_checks.driver_and_work(sys.argv)
    started = time.monotonic()
    result = run(driver, work, "mapped", JOB)
    # The control: the same job at the linker's file alignment, whose DLL
    # sections Wine reads whole: every page is touched either way.
    control_job = json.loads(json.dumps(JOB))
    del control_job["generator"]["file_alignment"]
    control = run(driver, work, "read", control_job)
    elapsed = time.monotonic() - started

    schemacheck.validate("result.json", dict(result, attempt=1))
    build = result.get("build", {})
    check(build.get("file_alignment") == 4096 and build.get("wine_dll_sections") == "mapped" and
          build.get("timed_path") == "startup" and build.get("function_bytes") == 4096,
          f"build record {build}")
    by_name = {v["name"]: v for v in result["variants"]}
    for name in ("rebase", "reorder"):
        v = by_name.get(name, {})
        check(v.get("valid") is True, f"{name} invalid: {v.get('invalid_reason')}")
        check(v.get("verify", {}).get("file_alignment") == 4096,
              f"{name}: DLL file alignment {v.get('verify', {}).get('file_alignment')}")
        cold = v.get("cold", {})
        check(len(cold.get("page_faults", [])) == RUNS, f"{name}: {len(cold.get('page_faults', []))} cold runs")
    # The trace run takes the whole path: every function traced, the
    # startup set first, and that set is scattered over the DLL.
    dlls = by_name.get("reorder", {}).get("verify", {}).get("order", {}).get("dlls", [])
    check(len(dlls) == DLLS, f"reorder: order of {len(dlls)} DLLs")
    for d in dlls:
        traced = [int(t.rsplit("_f", 1)[1]) for t in d.get("traced", [])]
        first = traced[:STARTUP]
        check(len(traced) == EXPORTS, f"{d.get('dll')}: {len(traced)} functions traced")
        check(len(set(first)) == STARTUP and max(first) - min(first) >= EXPORTS // 2,
              f"{d.get('dll')}: startup set {first} not {STARTUP} functions spread over the DLL")

    faults = {n: by_name[n]["cold"]["page_faults"] for n in ("rebase", "reorder") if n in by_name}
    read = {n: by_name[n]["cold"]["read_bytes"] for n in ("rebase", "reorder") if n in by_name}
    floor = result.get("floor", {}).get("cold", {}).get("page_faults", [])
    if len(faults) == 2:
        margin = statistics.median(faults["rebase"]) - statistics.median(faults["reorder"])
        check(max(faults["reorder"]) < min(faults["rebase"]),
              f"page faults overlap: rebase {faults['rebase']}, reorder {faults['reorder']}")
        check(margin >= DLLS * STARTUP / 2,
              f"median page faults differ by {margin}, less than {DLLS * STARTUP / 2}")
    check(control.get("build", {}).get("wine_dll_sections") == "read", f"control build {control.get('build')}")
    cfaults = {v["name"]: v.get("cold", {}).get("page_faults", [0]) for v in control["variants"]}
    if len(faults) == 2 and len(cfaults) == 2:
        cmargin = abs(statistics.median(cfaults["rebase"]) - statistics.median(cfaults["reorder"]))
        check(cmargin < DLLS * STARTUP / 4,
              f"read whole, rebase and reorder still differ by {cmargin} page faults: {cfaults}")
        check(min(cfaults["reorder"]) > max(faults["rebase"]),
              f"read whole ({cfaults['reorder']}) takes no more page faults than mapped ({faults['rebase']})")
    print(f"pipeline: {elapsed:.1f} s (both jobs)")
    print("control, file alignment 512: " + ", ".join(f"{n} {f}" for n, f in cfaults.items()))
    print(f"cold page faults: floor {floor}, " + ", ".join(f"{n} {f}" for n, f in faults.items()))
    print("cold read bytes: " + ", ".join(f"{n} {b}" for n, b in read.items()))
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
