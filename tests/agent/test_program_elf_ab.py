"""Two builds of a Linux program in one job (issue 31, docs/program-elf.md,
"Two builds in one job"): zlib's minigzip from Debian's source package,
built natively by build_zlib_native.sh (cached in the build tree) with
its lib/libz.so.1, and a second build of the library from the same
objects with one constructor more that spins 5 ms before main
(OUTDIR/slow/libz.so.1). minigzip links to the soname only, so the
candidate is the same minigzip with the slower lib/libz.so.1.

Submitted as one A/B job with `loadlab submit --program-dir BASE
--program-dir CAND` (the CLI sees the ELF exes and makes the job an ELF
program's) to a real loadlabd and run natively by the real Linux agent:
every variant of each build verified and timed in the same shuffled
passes; `loadlab compare --job ID` (GET /api/v1/compare?job=ID) names
exactly the file that changed, by path and digest, finds the candidate
slower paired by pass, and exits 1 at --max-regression 2. The same build
given twice (A/A) names no changed file; its verdict is noise, printed,
and only its exit code's range (0 or 1) is asserted. A build folder
without an ELF exe is refused by the CLI before anything is uploaded, and
the daemon keeps no job."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
import program_jobs  # noqa: E402
from schemacheck import validate  # noqa: E402

ZLIB_DIR = os.path.join(harness.BUILD_DIR, "tests", "program-elf-zlib")
VARIANTS = ["as-built", "bind-now"]
RUNS = int(os.environ.get("LOADLAB_AB_RUNS", "30"))
PROGRAM = {"exe": "minigzip", "args": ["-c", "data.txt"], "until": "exit", "timeout_s": 60}


def build():
    return program_jobs.build_cached("build_zlib_native.sh", ZLIB_DIR, 900)


def copy_build(tmp, name, libz):
    """The program in TMP/NAME: minigzip, data.txt and LIBZ as lib/libz.so.1."""
    folder = os.path.join(tmp, name)
    os.makedirs(os.path.join(folder, "lib"))
    for f in ("minigzip", "data.txt"):
        shutil.copy(os.path.join(build(), f), folder)
    shutil.copy(os.path.join(build(), libz), os.path.join(folder, "lib", "libz.so.1"))
    return folder


def cli(d, *args):
    return subprocess.run([program_jobs.LOADLAB] + list(args), capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, LOADLAB_SERVER=d.url, LOADLAB_TOKEN=d.admin_token))


def submit_ab(d, tmp, name, dirs, program=PROGRAM):
    """`loadlab submit JOB --program-dir A --program-dir B`: the result."""
    job_path = os.path.join(tmp, name + ".json")
    with open(job_path, "w") as f:
        json.dump({"name": name, "family": "program", "program": program, "variants": VARIANTS,
                   "measure": {"warm": {"runs": RUNS, "warmup": 2}, "cold": {"runs": 1}}}, f)
    args = ["submit", job_path]
    for folder in dirs:
        args += ["--program-dir", folder]
    return cli(d, *args)


def job_id_of(r, dirs):
    assert r.returncode == 0, r
    assert r.stdout.count("program: ") == dirs, r.stdout
    return int(r.stdout.split("job ", 1)[1].split(":")[0])


def compare_job(d, job_id, max_regression):
    """`loadlab compare --job JOB_ID`: exit code, the JSON comparison, the table."""
    r = cli(d, "compare", "--job", str(job_id), "--max-regression", str(max_regression), "--format", "json")
    assert r.returncode in (0, 1), r
    table = cli(d, "compare", "--job", str(job_id), "--max-regression", str(max_regression))
    assert table.returncode == r.returncode, (r, table)
    return r.returncode, json.loads(r.stdout), table.stdout


def sha(path):
    with open(path, "rb") as f:
        return "sha256:" + hashlib.sha256(f.read()).hexdigest()


def test_two_builds_paired_by_pass():
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-elf-ab-") as tmp:
        base = copy_build(tmp, "base", os.path.join("lib", "libz.so.1"))
        cand = copy_build(tmp, "cand", os.path.join("slow", "libz.so.1"))
        data_dir = os.path.join(tmp, "agent")
        os.makedirs(data_dir)

        job_id = job_id_of(submit_ab(d, tmp, "zlib-elf-ab", [base, cand]), 2)
        job = d.job(job_id)
        program = job["spec"]["program"]
        assert program["format"] == "elf", program
        assert [b["label"] for b in program["builds"]] == ["base", "candidate"], program
        assert job["spec"]["matrix"] == {"cells": {"os": ["linux"]}}, job["spec"]["matrix"]
        result = program_jobs.run_job(d, data_dir, job_id, "elf-ab-agent")
        validate("result.json", result)
        names = ["%s:%s" % (b, v) for b in ("base", "candidate") for v in VARIANTS]
        variants = {v["name"]: v for v in result["variants"]}
        assert list(variants) == names, list(variants)
        for name, v in variants.items():
            assert v["valid"], (name, v.get("invalid_reason"))
            assert v["build"] == name.split(":")[0] and v["preset"] == name.split(":")[1], v
            assert v["changes"] and v["cannot_show"], v
            assert len(v["warm"]["samples_us"]) == RUNS, v["warm"]
            # each build's own library, from its own folder
            libz = [m for m in v["verify"]["modules"] if m.get("file") == "lib/libz.so.1"]
            assert len(libz) == 1 and libz[0]["from_program_folder"], v["verify"]["modules"]
            files = {f["name"]: f["sha256"] for f in v["files"]}
            folder = base if v["build"] == "base" else cand
            assert "sha256:" + files["lib/libz.so.1"] == sha(os.path.join(folder, "lib", "libz.so.1")), files
        # the result names each build's files and digests
        builds = {b["label"]: b for b in result["program"]["builds"]}
        assert set(builds) == {"base", "candidate"}, result["program"]
        for label, folder in (("base", base), ("candidate", cand)):
            files = {f["path"]: f["sha256"] for f in builds[label]["files"]}
            assert files == {p: sha(os.path.join(folder, p)) for p in ("minigzip", "data.txt", "lib/libz.so.1")}
            assert {f["file"] for f in builds[label]["elf"]} == {"minigzip", "lib/libz.so.1"}, builds[label]

        code, ab, table = compare_job(d, job_id, 2)
        validate("ab_compare.json", ab)
        print(table)
        (changes,) = ab["files"]
        assert changes["build"] == "candidate" and changes["base"] == "base", changes
        assert changes["same_files"] is False and changes["added"] == [] and changes["removed"] == [], changes
        assert [c["path"] for c in changes["changed"]] == ["lib/libz.so.1"], changes
        assert changes["changed"][0]["baseline_sha256"] == sha(os.path.join(base, "lib", "libz.so.1"))
        assert changes["changed"][0]["candidate_sha256"] == sha(os.path.join(cand, "lib", "libz.so.1"))
        assert changes["unchanged"] == 2, changes
        assert "lib/libz.so.1" in table and "1 files changed, 0 added, 0 removed, 2 unchanged" in table, table
        rows = {r["variant"]: r for r in ab["rows"]}
        assert set(rows) == set(VARIANTS), rows
        for row in rows.values():
            print("A/B %s: ratio %.4f [%.4f, %.4f] p=%.2g pairs=%d base %.0f us candidate %.0f us %s" % (
                row["variant"], row["ratio"], row["ci_low"], row["ci_high"], row["p_value"], row["pairs"],
                row["base_median_us"], row["candidate_median_us"], row["status"]))
        row = rows["as-built"]
        assert row["pairs"] == RUNS and row["build"] == "candidate" and row["base"] == "base", row
        assert row["status"] == "slower" and row["ci_low"] > 1 and row["regression"], row
        assert code == 1 and ab["verdict"] == "regression", ab

        # A/A: the base given twice
        aa_id = job_id_of(submit_ab(d, tmp, "zlib-elf-aa", [base, base]), 2)
        program_jobs.run_job(d, data_dir, aa_id, "elf-ab-agent")
        code, aa, table = compare_job(d, aa_id, 2)
        validate("ab_compare.json", aa)
        (changes,) = aa["files"]
        assert changes["same_files"] is True and changes["changed"] == [] and changes["unchanged"] == 3, changes
        assert "the same files (3, the same hashes)" in table, table
        assert [r["variant"] for r in aa["rows"]] == VARIANTS, aa["rows"]
        for row in aa["rows"]:
            assert row["build"] == "candidate" and row["base"] == "base", row
            print("A/A %s: ratio %s [%s, %s] %s; verdict %s, exit %d (noise: not gated)" % (
                row["variant"], row.get("ratio"), row.get("ci_low"), row.get("ci_high"), row["status"],
                aa["verdict"], code))


def test_a_build_without_an_elf_exe_is_refused():
    with harness.Daemon() as d, tempfile.TemporaryDirectory(prefix="loadlab-elf-ab-") as tmp:
        base = copy_build(tmp, "base", os.path.join("lib", "libz.so.1"))
        script = os.path.join(tmp, "script")
        os.makedirs(script)
        with open(os.path.join(script, "minigzip"), "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        empty = os.path.join(tmp, "other")
        os.makedirs(empty)
        with open(os.path.join(empty, "data.txt"), "w") as f:
            f.write("no program here\n")
        cases = [
            ([base, script], PROGRAM, "--program-dir %s: its exe minigzip is not an ELF file" % script,
             "the exe of --program-dir %s is an ELF file" % base),
            ([script, base], dict(PROGRAM, format="elf"), "--program-dir %s: its exe minigzip" % script,
             "the job says \"format\": \"elf\""),
            ([base, empty], PROGRAM, "--program-dir %s: its exe minigzip is not an ELF file" % empty,
             "every build of an ELF program job is an ELF program"),
        ]
        for dirs, program, words, more in cases:
            r = submit_ab(d, tmp, "bad", dirs, program=program)
            assert r.returncode == 2, r
            assert words in r.stderr and more in r.stderr and "nothing was uploaded" in r.stderr, r.stderr
            assert "program: " not in r.stdout, r.stdout
        assert d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"] == []
        digest = sha(os.path.join(base, "lib", "libz.so.1"))[len("sha256:"):]
        assert d.api("HEAD", "/api/v1/blobs/" + digest, token=d.admin_token).status == 404


if __name__ == "__main__":
    test_a_build_without_an_elf_exe_is_refused()
    test_two_builds_paired_by_pass()
    print("ok")
