"""What a pe result's per-variant verification must show, shared by the
pipeline's own test, the Windows agent's and the end-to-end column test:
under `default` all DLLs but one relocated, under `rebase` and `bind`
none; under `ordinal` every import by ordinal and no names exported; under
`bind` a valid bound directory whose timestamps match the DLLs; under
`reorder` the traced startup functions contiguous at the start of `.text`
in trace order; files hashed; valid variants and the floor timed. And
how those tests drive tests/agent/pipeline_driver: its command line and
a job run through it; and print_work(), what one task cost."""
import json
import os
import shutil
import subprocess
import sys


# The column's job with a small generator (test_pe_pipeline.py,
# test_agent_windows.py, test_pe_run.py): every variant, EXPORTS exports
# and GLOBALS globals per function in each DLL, RUNS warm runs.
EXPORTS, GLOBALS, RUNS = 20, 2, 3
VARIANTS = ["default", "rebase", "bind", "ordinal", "ordinal+rebase", "ordinal+bind", "reorder", "no-rebase"]


def column_job(name, dlls, warmup):
    """The column's job NAME with DLLS generated DLLs and WARMUP untimed
    runs; no retakes (harness.NO_NOISE_RETAKES: it judges no timing)."""
    return {"name": name, "family": "pe",
            "generator": {"dlls": dlls, "exports": EXPORTS, "globals_per_function": GLOBALS},
            "variants": VARIANTS, "measure": {"warm": {"runs": RUNS, "warmup": warmup}, "noise": {"max_retakes": 0}}}


def driver_and_work(argv):
    """(PIPELINE_DRIVER, WORK_DIR) of ARGV, WORK_DIR made anew; exits with
    FAIL when the driver is not built."""
    driver, work = argv[1:3]
    if not os.path.exists(driver):
        sys.exit(f"FAIL: {driver} not built")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return driver, work


def run_driver(driver, work, name, job, timeout):
    """JOB through the driver in the folder WORK/NAME (its job file
    WORK/NAME.json): (result, the folder, the job file). Exits with FAIL
    when the driver fails."""
    job_path = os.path.join(work, name + ".json")
    out_path = os.path.join(work, name + "-result.json")
    with open(job_path, "w") as f:
        json.dump(job, f)
    task_dir = os.path.join(work, name)
    os.makedirs(task_dir)
    r = subprocess.run([driver, job_path, task_dir, out_path, "2"], capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode != 0:
        sys.exit(f"FAIL: pipeline_driver ({name}) exited {r.returncode}\n{r.stderr[-3000:]}")
    with open(out_path) as f:
        return json.load(f), task_dir, job_path


def verification_failures(result, variants, dlls, exports, globals_per_function, runs):
    """The list of what RESULT gets wrong (empty: nothing) for a job of
    VARIANTS with the given generator and warm RUNS, run under Wine."""
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
        return cond

    check(result.get("family") == "pe" and result.get("runner") == "wine",
          "family/runner: %s/%s" % (result.get("family"), result.get("runner")))
    by_name = {v["name"]: v for v in result.get("variants", [])}
    check(sorted(by_name) == sorted(variants), "variants %s" % sorted(by_name))
    total = dlls * exports
    for name, v in by_name.items():
        vf = v.get("verify", {})
        imports = vf.get("imports", {})
        if not check(v.get("valid") is True, "%s: invalid: %s" % (name, v.get("invalid_reason"))):
            continue
        files = v.get("files", [])
        check(len(files) == dlls + 1 and all(len(f.get("sha256", "")) == 64 and f.get("size", 0) > 0
                                             for f in files), "%s: files %s" % (name, files))
        check(vf.get("dlls_loaded") == dlls, "%s: loaded %s" % (name, vf.get("dlls_loaded")))
        relocated = vf.get("dlls_relocated")
        if v["knobs"]["bases"] == "same":
            check(relocated == dlls - 1, "%s: %s DLLs relocated, expected %d" % (name, relocated, dlls - 1))
        elif v["knobs"]["bases"] == "unique":
            check(relocated == 0, "%s: %s DLLs relocated, expected 0" % (name, relocated))
        check(imports.get("total") == total and imports.get("resolved_ok") == total,
              "%s: imports %s" % (name, imports))
        if v["knobs"]["imports"] == "ordinal":
            check(imports.get("by_ordinal") == total and imports.get("file_by_ordinal") == total,
                  "%s: not every import by ordinal: %s" % (name, imports))
            check(vf.get("named_exports") == 0, "%s: named exports %s" % (name, vf.get("named_exports")))
        else:
            check(imports.get("by_name") == total and imports.get("file_by_name") == total,
                  "%s: not every import by name: %s" % (name, imports))
            check(vf.get("named_exports") == total, "%s: named exports %s" % (name, vf.get("named_exports")))
        binding = vf.get("binding", {})
        if v["knobs"]["bind"]:
            ours = [m for m in binding.get("modules", []) if m["name"].lower().startswith("lt")]
            check(binding.get("present") and binding.get("valid") and len(ours) == dlls and
                  all(m["timestamp_matches"] and m["timestamp"] == m["file_timestamp"] for m in ours),
                  "%s: binding %s" % (name, binding))
            check(binding.get("iat_checked") == total and binding.get("iat_wrong") == 0,
                  "%s: bound IAT %s" % (name, binding))
            check(binding.get("loader_used_binding") is False, "%s: Wine cannot have used the binding" % name)
        else:
            check(binding.get("present") is False, "%s: unexpected binding %s" % (name, binding))
        check(vf.get("relocations", 0) >= dlls * exports * globals_per_function,
              "%s: relocations %s" % (name, vf.get("relocations")))
        if v["knobs"]["order"] == "trace":
            order = vf.get("order", {})
            traced = order.get("dlls", [])
            check(order.get("dlls_in_trace_order") == dlls and len(traced) == dlls and
                  all(d["at_start_of_text"] and d["contiguous"] and d["in_trace_order"] and d["traced"]
                      for d in traced), "%s: order %s" % (name, order))
            # The startup scenario calls functions last-first: a trace in
            # link order would prove nothing.
            check(any([int(t.split("_f")[1]) for t in d["traced"]] !=
                      sorted(int(t.split("_f")[1]) for t in d["traced"]) for d in traced),
                  "%s: the trace is in link order" % name)
        warm = v.get("warm", {})
        check(len(warm.get("samples_us", [])) == runs and warm.get("min_us", 0) > 0,
              "%s: warm %s" % (name, warm))
    floor = result.get("floor", {}).get("warm", {})
    check(len(floor.get("samples_us", [])) == runs and floor.get("min_us", 0) > 0, "floor %s" % floor)
    return failures


def print_work(result):
    """What one task cost: its phases and its timed runs (noisy runs are
    taken again by the agent, docs/rest-bodies.md, "Noise")."""
    taken = retaken = 0
    for item in result["variants"] + [result["floor"]]:
        for kind in ("warm", "cold"):
            m = item.get(kind) or {}
            taken += len(m.get("samples_us", [])) + (m.get("noise") or {}).get("retaken", 0)
            retaken += (m.get("noise") or {}).get("retaken", 0)
    print("cell %s: phases_ms %s; %d timed runs (%d of them retaken for noise)"
          % (result["cell"], result["phases_ms"], taken, retaken), flush=True)
