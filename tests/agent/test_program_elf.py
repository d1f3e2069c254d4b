"""The program family for a Linux build (issue 31, docs/program-elf.md):
zlib from Debian's source package, built natively with gcc into
`minigzip` and the `lib/libz.so.1` it loads from its own folder through
RUNPATH $ORIGIN/lib (build_zlib_native.sh, cached in the build tree),
submitted with `loadlab submit --program-dir` (which sees the ELF magic and
makes the job an ELF program's) to a real loadlabd and run natively by the
real Linux agent: every variant (as-built, bind-now, pagein) verified by
the agent's LD_AUDIT library and LD_DEBUG=statistics, then timed warm and
cold; the cold table gives per-object major faults for as-built and
pagein, and the report notes what pagein against as-built answers.

Mislabelled variants are refused: the same program shipped with its
library in libs/, where its RUNPATH does not look, so the loader takes the
system's libz.so.1 (invalid, naming the file it took); and bind-now run
without LD_BIND_NOW through the test-only variable
LOADLAB_TEST_ELF_DROP_BIND_NOW=1 in the agent's environment (invalid: the
loader saw no LD_BIND_NOW and resolved relocations lazily). Bad job
sections are refused by the daemon, and a job whose format contradicts
its exe by the CLI before it uploads anything. No assertion on timings."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
import program_jobs  # noqa: E402
from agent_wait import wait_agent  # noqa: E402
from schemacheck import validate  # noqa: E402

ZLIB_DIR = os.path.join(harness.BUILD_DIR, "tests", "program-elf-zlib")
LAUNCHER = os.path.join(harness.BUILD_DIR, "agent", "programs", "linux-x86_64", "elf_launcher")
VARIANTS = ["as-built", "bind-now", "pagein"]
PROGRAM = {"exe": "minigzip", "args": ["-c", "data.txt"], "until": "exit", "timeout_s": 60}


def build_zlib():
    return program_jobs.build_cached("build_zlib_native.sh", ZLIB_DIR, 900)


def submit(d, folder, tmp, name, variants, program=PROGRAM, cold_runs=2):
    job_path = os.path.join(tmp, name + ".json")
    with open(job_path, "w") as f:
        json.dump({"name": name, "family": "program", "program": program, "variants": variants,
                   "measure": {"warm": {"runs": 3, "warmup": 1}, "cold": {"runs": cold_runs},
                               "noise": harness.NO_NOISE_RETAKES}}, f)
    env = dict(os.environ, LOADLAB_SERVER=d.url, LOADLAB_TOKEN=d.admin_token)
    r = subprocess.run([program_jobs.LOADLAB, "submit", job_path, "--program-dir", folder],
                       capture_output=True, text=True, env=env, timeout=120)
    return r


def job_id_of(r):
    assert r.returncode == 0, r
    return int(r.stdout.split("job ", 1)[1].split(":")[0])


def run_job(d, data_dir, job_id, name, env=None):
    """The Linux agent run for one task with ENV added to its environment."""
    os.makedirs(data_dir, exist_ok=True)
    log_path = os.path.join(data_dir, "agent.log")
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [program_jobs.AGENT, "--server", d.url, "--enroll-token", d.enroll_token, "--data-dir", data_dir,
             "--name", name, "--once"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=dict(os.environ, **(env or {})))
    code, log_text = wait_agent(proc, log_path, 900, lambda: harness.kill_processes_under(data_dir))
    assert code == 0, log_text[-4000:]
    return program_jobs.result_of(d, job_id)


def copy_program(tmp, name, lib_dir="lib"):
    folder = os.path.join(tmp, name)
    os.makedirs(os.path.join(folder, lib_dir))
    for f in ("minigzip", "data.txt"):
        shutil.copy(os.path.join(build_zlib(), f), folder)
    shutil.copy(os.path.join(build_zlib(), "lib", "libz.so.1"), os.path.join(folder, lib_dir))
    return folder


def modules_of(variant):
    return {m.get("file") or os.path.basename(m["path"]): m for m in variant["verify"]["modules"]}


def test_zlib_every_variant():
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-elfprog-") as tmp:
        folder = copy_program(tmp, "zlib")
        job_id = job_id_of(submit(d, folder, tmp, "zlib-elf", VARIANTS))
        job = d.api("GET", "/api/v1/jobs/%d" % job_id, token=d.admin_token).json()
        validate("job.json", job)
        spec = job["spec"]
        assert spec["program"]["format"] == "elf", spec["program"]
        assert spec["variants"][1] == {"name": "bind-now", "bind_now": True, "pagein": False}, spec
        result = run_job(d, os.path.join(tmp, "agent"), job_id, "elf-test")
        validate("result.json", result)
        assert result["runner"] == "native" and result["program"]["format"] == "elf", result["program"]
        elf = {f["file"]: f for f in result["program"]["elf"]}
        assert elf["minigzip"]["runpath"] == "$ORIGIN/lib", elf
        assert "libz.so.1" in elf["minigzip"]["needed"].split(), elf
        assert elf["lib/libz.so.1"]["shared"] and elf["lib/libz.so.1"]["soname"] == "libz.so.1", elf
        helpers = {h["name"] for h in result["helpers"]["programs"]}
        assert helpers == {"elf_audit.so", "elf_launcher", "elf_empty"}, helpers
        variants = {v["name"]: v for v in result["variants"]}
        assert list(variants) == VARIANTS
        for name, v in variants.items():
            assert v["valid"], (name, v.get("invalid_reason"))
            assert v["changes"] and v["cannot_show"], v
            mods = modules_of(v)
            # the program's own files, from its folder
            for own in ("minigzip", "lib/libz.so.1"):
                assert mods[own]["from_program_folder"], (name, mods)
                assert mods[own]["path"].startswith("/") and mods[own]["address"].startswith("0x"), mods
            assert v["verify"]["objects_from_program_folder"] == 2, v["verify"]
            assert not mods["libc.so.6"]["from_program_folder"], mods
            assert v["verify"]["exit_code"] == 0
            assert v["warm"]["summary"]["n"] == 3 and v["cold"]["summary"]["n"] == 2, v
        loader = {n: v["verify"]["loader"] for n, v in variants.items()}
        assert loader["bind-now"]["environment"] == "LD_BIND_NOW=1", loader
        assert loader["bind-now"]["lazy_after_start"] == 0, loader
        assert loader["as-built"]["environment"] == "LD_BIND_NOW unset", loader
        # minigzip calls zlib and libc through its PLT: bound at first call
        assert loader["as-built"]["lazy_after_start"] > 0, loader
        assert loader["bind-now"]["relocations_at_start"] > loader["as-built"]["relocations_at_start"], loader
        pagein = variants["pagein"]["verify"]
        assert pagein["read_chars"] >= pagein["pagein_file_bytes"] > 0, pagein
        # per-object major faults of the cold starts, as-built and pagein
        for name in ("as-built", "pagein"):
            v = variants[name]
            cold_modules = {m.get("file"): m for m in v["cold"]["modules"]}
            if not v["cold"]["cold"]:
                # eviction cannot work here (tmpfs keeps pages): the result says so
                assert v["cold"]["note"], v["cold"]
                assert any("eviction" in n for n in v.get("notes", [])), v
                continue
            for own in ("minigzip", "lib/libz.so.1"):
                m = cold_modules[own]
                assert m["major_faults"] >= 0 and len(m["major_faults_runs"]) == 3, m
            assert sum(v["major_faults"]["(all files)"]) >= 0
        if variants["pagein"]["cold"]["cold"]:
            # pagein read the library before the loader mapped it: no fault
            # needs I/O (the median of three, so one disturbed run passes)
            libz = {m.get("file"): m for m in variants["pagein"]["cold"]["modules"]}["lib/libz.so.1"]
            assert libz["major_faults"] == 0, libz
        report = d.api("GET", "/api/v1/jobs/%d/report?modules=1" % job_id, token=d.admin_token).json()
        validate("report.json", report)
        rows = {r["variant"]: r for r in report["cold"]["variants"]}
        assert set(rows) == set(VARIANTS), rows
        per_module = [m for m in report["cold"]["modules"] if m["variant"] in ("as-built", "pagein")]
        assert {m.get("file") for m in per_module} >= {"minigzip", "lib/libz.so.1"}, per_module
        notes = [n for n in report["findings"] if "pagein" in n and "office" in n]
        assert len(notes) == 1, report["findings"]
        # compare and series as for every job: the job against itself
        cmp = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d" % (job_id, job_id),
                    token=d.admin_token)
        assert cmp.status == 200, cmp
        validate("compare.json", cmp.json())
        assert cmp.json()["program"]["same_program"] is True, cmp.json()["program"]
        md = d.api("GET", "/api/v1/jobs/%d/report?format=md" % job_id, token=d.admin_token).body.decode()
        assert "the office study's question for this program" in md, md[-2000:]


def test_library_swapped_for_the_systems():
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-elfprog-") as tmp:
        folder = copy_program(tmp, "swapped", lib_dir="libs")
        job_id = job_id_of(submit(d, folder, tmp, "zlib-swapped", ["as-built", "pagein"], cold_runs=1))
        result = run_job(d, os.path.join(tmp, "agent"), job_id, "elf-swapped")
        for v in result["variants"]:
            assert v["valid"] is False, v
            assert "libz.so.1 was loaded from /" in v["invalid_reason"], v["invalid_reason"]
            assert "not from the program's folder" in v["invalid_reason"], v["invalid_reason"]
            assert "libs/libz.so.1" in v["invalid_reason"], v["invalid_reason"]
            taken = [m for m in v["verify"]["modules"] if m.get("instead_of") == "libs/libz.so.1"]
            assert len(taken) == 1 and not taken[0]["from_program_folder"], v["verify"]["modules"]
            assert "warm" not in v and "cold" not in v


def test_bind_now_without_the_environment():
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-elfprog-") as tmp:
        folder = copy_program(tmp, "zlib")
        job_id = job_id_of(submit(d, folder, tmp, "zlib-mislabelled", ["as-built", "bind-now"], cold_runs=1))
        result = run_job(d, os.path.join(tmp, "agent"), job_id, "elf-mislabelled",
                         env={"LOADLAB_TEST_ELF_DROP_BIND_NOW": "1"})
        variants = {v["name"]: v for v in result["variants"]}
        assert variants["as-built"]["valid"], variants["as-built"].get("invalid_reason")
        bind_now = variants["bind-now"]
        assert bind_now["valid"] is False, bind_now
        assert "bind-now: the loader saw LD_BIND_NOW unset" in bind_now["invalid_reason"], bind_now
        assert bind_now["verify"]["loader"]["lazy_after_start"] > 0, bind_now["verify"]["loader"]
        assert "test_note" in result["program"], result["program"]


def test_until_idle():
    """until "idle": the launcher runs the program as its child (the probe
    judges the child's objects and reads the child's statistics); minigzip
    compressing an empty stdin exits before it is idle, with its code."""
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-elfprog-") as tmp:
        folder = copy_program(tmp, "zlib")
        program = dict(PROGRAM, args=[], until="idle")
        job_id = job_id_of(submit(d, folder, tmp, "zlib-idle", ["as-built", "bind-now"], program=program,
                                  cold_runs=1))
        result = run_job(d, os.path.join(tmp, "agent"), job_id, "elf-idle")
        assert result["program"]["until"] == "idle" and result["program"]["idle_ms"] == 2000, result["program"]
        for v in result["variants"]:
            assert v["valid"], v.get("invalid_reason")
            assert modules_of(v)["lib/libz.so.1"]["from_program_folder"], v["verify"]["modules"]
            assert v["verify"]["loader"]["relocations_at_start"] > 0, v["verify"]["loader"]
            assert v["warm"]["summary"]["n"] == 3, v["warm"]


def test_cold_on_tmpfs_says_so():
    """On tmpfs no eviction can drop the program's pages: the cold figures
    say they are not cold, and the per-object faults are left out with a
    note, never made up. Skipped where /dev/shm is no tmpfs."""
    with open("/proc/mounts") as f:
        if not any(line.split()[1] == "/dev/shm" and line.split()[2] == "tmpfs" for line in f):
            print("skipped: /dev/shm is no tmpfs here")
            return
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-elfprog-") as tmp, \
            tempfile.TemporaryDirectory(prefix="loadlab-elfprog-", dir="/dev/shm") as shm:
        folder = copy_program(tmp, "zlib")
        job_id = job_id_of(submit(d, folder, tmp, "zlib-tmpfs", ["as-built", "pagein"], cold_runs=1))
        result = run_job(d, os.path.join(shm, "agent"), job_id, "elf-tmpfs")
        for v in result["variants"]:
            assert v["valid"], v.get("invalid_reason")
            assert v["cold"]["cold"] is False and v["cold"]["note"], v["cold"]
            assert "major_faults" not in v, v
            assert any("eviction" in n for n in v["notes"]), v
            assert all("major_faults" not in m for m in v["cold"]["modules"]), v["cold"]["modules"]


def test_bad_jobs_are_refused():
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-elfprog-") as tmp:
        blob = "sha256:" + "0" * 64
        base = {"name": "x", "family": "program", "variants": ["as-built"],
                "measure": {"warm": {"runs": 3}}}
        cases = [
            ({"files": {"app": blob}, "exe": "app"}, ["as-built"], "must end in .exe"),
            ({"files": {"app": blob}, "exe": "app", "format": "elf", "until": "input-idle"}, ["as-built"],
             "\"idle\""),
            ({"files": {"app": blob}, "exe": "app", "format": "elf"}, ["rebase"], "ELF program variant"),
            ({"files": {"app.exe": blob}, "exe": "app.exe"}, ["bind-now"], "program variant"),
            ({"files": {"app": blob}, "exe": "app", "format": "macho"}, ["as-built"], "program.format"),
        ]
        for program, variants, words in cases:
            r = d.api("POST", "/api/v1/jobs", dict(base, program=program, variants=variants),
                      token=d.admin_token)
            assert r.status == 400, (program, r)
            assert words in r.json()["error"]["message"], (words, r)
        jobs = d.api("GET", "/api/v1/jobs", token=d.admin_token).json()
        assert jobs["jobs"] == [], jobs
        # the CLI: a job that says pe for an ELF exe, refused before any upload
        folder = copy_program(tmp, "zlib")
        r = submit(d, folder, tmp, "contradiction", ["as-built"], program=dict(PROGRAM, format="pe"))
        assert r.returncode == 2, r
        assert "starts as an ELF file does; nothing was uploaded" in r.stderr, r.stderr
        with open(os.path.join(folder, "minigzip"), "rb") as f:
            import hashlib
            digest = hashlib.sha256(f.read()).hexdigest()
        assert d.api("HEAD", "/api/v1/blobs/" + digest, token=d.admin_token).status == 404


def test_launcher_until_idle():
    """The launcher ends a program whose mappings stopped changing, and
    passes on the code of one that exits first."""
    r = subprocess.run([LAUNCHER, "--idle-ms", "300", "--", "/bin/sleep", "600"], timeout=120)
    assert r.returncode == 0
    r = subprocess.run([LAUNCHER, "--idle-ms", "60000", "--", "/bin/sh", "-c", "exit 7"], timeout=120)
    assert r.returncode == 7
    r = subprocess.run([LAUNCHER, "--pagein", "/nonexistent", "--", "/bin/true"], timeout=60)
    assert r.returncode == 3


if __name__ == "__main__":
    test_launcher_until_idle()
    test_bad_jobs_are_refused()
    test_zlib_every_variant()
    test_library_swapped_for_the_systems()
    test_bind_now_without_the_environment()
    test_cold_on_tmpfs_says_so()
    test_until_idle()
    print("ok")
