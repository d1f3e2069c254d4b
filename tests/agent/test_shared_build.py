"""A shared build end to end (docs/builds.md): a real loadlabd, a real
Linux agent with mingw-w64 and gcc (the builder) and real agents that have
no compiler (started with a PATH that holds none: their facts list no
toolchain) measuring what it built.

- The column's job (pietrek-2000, small) over two cells: the builder's and
  a measuring agent's. Every variant is verified and timed in both cells;
  each result names the build task; unbound variants ran identical files
  in both cells; bound ones differ from the build only in main.exe, which
  binding wrote, and the report says so.
- A blob altered in the daemon's store after the build: the measuring
  agent refuses it (hash mismatch), nothing is timed.
- The elf example with one builder and two measuring agents that run the
  same bytes.
"""
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
from agent_wait import wait_agent  # noqa: E402
from schemacheck import validate  # noqa: E402

AGENT = harness.AGENT

PE_JOB = dict(harness.load_example("pietrek-2000.json"),
              generator={"dlls": 4, "exports": 12, "globals_per_function": 1},
              variants=["default", "rebase", "bind", "ordinal", "ordinal+bind", "reorder"],
              measure={"warm": {"runs": 3, "warmup": 1}, "noise": harness.NO_NOISE_RETAKES},
              matrix={"cells": {"bench": ["builder", "lab"]}})

ELF_JOB = dict(harness.load_example("local/elf-relocations.json"),
               generator={"dlls": 3, "exports": 20},
               variants=["default", "relr", "symbolic"],
               measure={"warm": {"runs": 3, "warmup": 1}, "noise": harness.NO_NOISE_RETAKES},
               matrix={"cells": {"bench": ["m1", "m2"]}})


class Agent:
    """A loadlab-agent process in its own data folder; NO_COMPILER: its
    PATH is an empty folder, so it finds no toolchain. BUILDER (default:
    the agents that have a compiler): once it has enrolled, the admin
    marks it a builder, the only agents that lease builds (docs/builds.md)."""

    def __init__(self, d, name, label, no_compiler, once=True, path_first=None, builder=None):
        self.data_dir = tempfile.mkdtemp(prefix="loadlab-shared-")
        env = dict(os.environ)
        if path_first:  # a folder searched before the PATH
            env["PATH"] = path_first + os.pathsep + env["PATH"]
        if no_compiler:
            empty = os.path.join(self.data_dir, "empty-path")
            os.mkdir(empty)
            env["PATH"] = empty
        self.log = open(os.path.join(self.data_dir, "agent.log"), "wb")
        self.proc = subprocess.Popen(
            [AGENT, "--server", d.url, "--enroll-token", d.enroll_token, "--data-dir", self.data_dir,
             "--name", name, "--labels", "bench=" + label] + (["--once"] if once else []),
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, env=env)
        if builder if builder is not None else not no_compiler:
            d.mark_builder_named(name)

    def text(self):
        with open(os.path.join(self.data_dir, "agent.log"), "rb") as f:
            return f.read().decode(errors="replace")

    def wait(self, timeout=900):
        code = self.proc.wait(timeout)
        self.log.close()
        return code

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.log.closed:
            self.log.close()
        harness.kill_processes_under(self.data_dir)
        subprocess.run(["rm", "-rf", self.data_dir])


def wait_measurer(d, job_id, proc, log_path, builder, timeout=1500):
    """Waits for the measuring agent PROC (a Popen, its log LOG_PATH) to
    exit 0, stops BUILDER (an Agent) whatever happened: the done job."""
    try:
        code, text = wait_agent(proc, log_path, timeout)
    finally:
        builder.close()
    assert code == 0, text[-4000:]
    job = d.job(job_id)
    assert job["state"] == "done", job
    return job


def results_by_cell(d, job):
    out = {}
    for t in job["tasks"]:
        rows = harness.results_of(d, t["id"])
        assert len(rows) == 1, (t, rows)
        out[t["cell"]["bench"]] = rows[0][1]
    return out


def digests(variant):
    return {f["name"]: f["sha256"] for f in variant["files"]}


def test_column_job_built_once_and_measured_in_both_cells():
    with harness.Daemon(shared_build=True) as d:
        job_id = d.submit(PE_JOB)["id"]
        agents = [Agent(d, "builder", "builder", False), Agent(d, "lab", "lab", True)]
        try:
            for a in agents:
                assert a.wait() == 0, a.text()[-3000:]
        finally:
            for a in agents:
                a.close()
        job = d.job(job_id)
        assert job["state"] == "done", job
        assert len(job["builds"]) == 1 and job["builds"][0]["state"] == "done", job
        build = job["builds"][0]
        built = harness.results_of(d, build["id"])[0][1]
        assert built["kind"] == "build" and built["toolchain"]["kind"] == "mingw-w64", built
        assert "x86_64-w64-mingw32-gcc" in built["facts"]["toolchains"], built["facts"]
        results = results_by_cell(d, job)
        assert results["lab"]["facts"]["toolchains"] == [], results["lab"]["facts"]
        for cell, r in results.items():
            validate("result.json", r)
            assert r["build_task"] == {"id": build["id"], "builder": "builder"}, (cell, r["build_task"])
            assert r["toolchain"] == built["toolchain"], cell
            for v in r["variants"]:
                assert v["valid"], (cell, v["name"], v.get("invalid_reason"))
                assert v["warm"]["summary"]["n"] == 3 if "summary" in v["warm"] else True, v["warm"]
        built_files = {v["name"]: digests(v) for v in built["variants"]}
        for name in PE_JOB["variants"]:
            a, b = ([v for v in results[c]["variants"] if v["name"] == name][0] for c in ("builder", "lab"))
            if name.endswith("bind"):
                # Binding wrote main.exe on each machine; every other file is the build's.
                for v in (a, b):
                    assert not v["shipped"]["identical"], v["shipped"]
                    assert [(f["name"], f["by"]) for f in v["shipped"]["local_files"]] == \
                        [("main.exe", "bind")], v["shipped"]
                    assert v["shipped"]["local_files"][0]["built_sha256"] == built_files[name]["main.exe"]
                same = {k: x for k, x in digests(a).items() if k != "main.exe"}
                assert same == {k: x for k, x in digests(b).items() if k != "main.exe"}, name
                assert same == {k: x for k, x in built_files[name].items() if k != "main.exe"}, name
            else:
                assert digests(a) == digests(b) == built_files[name], name
                assert a["shipped"] == b["shipped"] == {"identical": True, "local_files": []}, name
        report = d.api("GET", "/api/v1/jobs/%d/report" % job_id, token=d.admin_token).json()
        validate("report.json", report)
        bytes_rows = {row["variant"]: row for row in report["shipped"]}
        assert bytes_rows["default"]["identical"] is True, report["shipped"]
        assert bytes_rows["bind"]["identical"] is False, report["shipped"]
        assert bytes_rows["bind"]["local_files"] == ["main.exe"], report["shipped"]


def test_a_blob_altered_in_the_store_is_refused():
    with harness.Daemon(shared_build=True) as d:
        job_id = d.submit(dict(PE_JOB, matrix={"cells": {"bench": ["lab"]}}))["id"]
        enroll_lab_machine(d)
        # The test is the builder: one blob for every file.
        _, builder = d.enroll_builder("builder", {"arch": "x86_64", "toolchains": ["x86_64-w64-mingw32-gcc"]})
        lease = d.api("POST", "/api/v1/lease", {"wait": 0}, token=builder).json()
        assert lease["kind"] == "build", lease
        data = b"MZ" + b"\0" * 200
        hexdigest = hashlib.sha256(data).hexdigest()
        assert d.api("PUT", "/api/v1/blobs/" + hexdigest, data, token=builder).status == 201
        names = ["lt%d.dll" % i for i in range(4)] + ["main.exe"]
        files = [{"name": n, "sha256": hexdigest, "size": len(data)} for n in names]
        body = {"attempt": lease["attempt"], "facts": {}, "kind": "build",
                "variants": [{"name": n, "files": files} for n in PE_JOB["variants"]],
                "floor": {"name": "empty.exe",
                          "files": [{"name": "empty.exe", "sha256": hexdigest, "size": len(data)}]}}
        r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], body, token=builder)
        assert r.status == 200, r
        path = os.path.join(d.data_dir, "blobs", hexdigest[:2], hexdigest[2:])
        os.chmod(path, 0o600)
        with open(path, "r+b") as f:
            f.write(b"XX")
        lab = Agent(d, "lab", "lab", True)
        try:
            assert lab.wait() == 1, lab.text()[-3000:]
        finally:
            lab.close()
        job = d.job(job_id)
        task = job["tasks"][0]
        assert "hash mismatch" in task["last_error"], task
        assert task["result_id"] is None, task
        assert harness.results_of(d, task["id"]) == []


def test_elf_job_one_builder_two_measurers_same_bytes():
    with harness.Daemon(shared_build=True) as d:
        job_id = d.submit(ELF_JOB)["id"]
        builder = Agent(d, "builder", "none", False, once=False)
        agents = [Agent(d, "m1", "m1", True), Agent(d, "m2", "m2", True)]
        try:
            for a in agents:
                assert a.wait() == 0, a.text()[-3000:]
        finally:
            for a in agents + [builder]:
                a.close()
        job = d.job(job_id)
        assert job["state"] == "done", job
        build = job["builds"][0]
        assert build["target"] == {"family": "elf", "architecture": "x86_64", "toolchain": "gcc+ld"}
        results = results_by_cell(d, job)
        for cell, r in results.items():
            assert r["facts"]["toolchain"] == [], r["facts"]
            assert r["build_task"]["id"] == build["id"] and r["build_task"]["builder"] == "builder"
            for v in r["variants"]:
                assert v["valid"], (cell, v["name"], v.get("invalid_reason"))
                assert v["shipped"] == {"identical": True, "local_files": []}, v["shipped"]
        for name in ELF_JOB["variants"]:
            a, b = ([v for v in results[c]["variants"] if v["name"] == name][0] for c in ("m1", "m2"))
            assert digests(a) == digests(b), name


def enroll_lab_machine(d, facts=None, labels=None):
    """A lab machine that could measure the job's cell, enrolled but never
    polling: without one the build is held (docs/builds.md, "Who builds"),
    since nobody would run what it builds."""
    d.enroll("lab-machine", facts or {"os": "winxp", "arch": "x86_64"}, labels or {"bench": "lab"})


def test_a_builder_killed_mid_build_leaves_the_build_to_another():
    """A real builder killed (SIGKILL) while it holds the build: its lease
    expires, a second builder builds (attempt 2) and measures the cell; the
    job finishes, the build has one result and is not built again."""
    with harness.Daemon(["--lease-seconds", "3"], shared_build=True) as d:
        job_id = d.submit(dict(PE_JOB, name="killed-builder", variants=["default", "rebase"],
                               matrix={"cells": {"bench": ["lab"]}}))["id"]
        enroll_lab_machine(d)
        first = Agent(d, "builder1", "none", False, once=False)
        try:
            harness.wait_for("the first builder's lease", lambda: d.job(job_id)["builds"][0]["state"] == "leased",
                             timeout=300, interval=0.05)
            first.proc.kill()
            first.proc.wait()
        finally:
            first.close()
        assert d.job(job_id)["builds"][0]["state"] != "done", d.job(job_id)["builds"]
        second = Agent(d, "builder2", "lab", False)
        try:
            assert second.wait(1200) == 0, second.text()[-3000:]
        finally:
            second.close()
        job = d.job(job_id)
        assert job["state"] == "done", job
        (build,) = job["builds"]
        assert build["state"] == "done" and build["attempt"] == 2, build
        assert len(harness.results_of(d, build["id"])) == 1, build
        (result,) = results_by_cell(d, job).values()
        assert result["build_task"] == {"id": build["id"], "builder": "builder2"}, result["build_task"]
        assert all(v["valid"] for v in result["variants"]), result["variants"]


BROKEN_GCC = """#!/bin/sh
case "$1" in
-dumpmachine) echo x86_64-w64-mingw32 ;;
--version) echo "x86_64-w64-mingw32-gcc (broken) 0" ;;
*) echo "lt0.c:3:1: error: expected ';' before '}' token" >&2; exit 1 ;;
esac
"""


def test_a_failed_build_fails_the_job_once_with_the_builders_log():
    """A real builder whose compiler fails (an x86_64-w64-mingw32-gcc
    first in its PATH that answers -dumpmachine and --version and fails
    every compile): the build is dead after one attempt, the job fails
    once, and the cell says why with the compiler's own line."""
    with harness.Daemon(shared_build=True) as d, tempfile.TemporaryDirectory(prefix="broken-gcc-") as tmp:
        gcc = os.path.join(tmp, "x86_64-w64-mingw32-gcc")
        with open(gcc, "w") as f:
            f.write(BROKEN_GCC)
        os.chmod(gcc, 0o755)
        job_id = d.submit(dict(PE_JOB, name="broken-build", matrix={"cells": {"bench": ["lab"]}}))["id"]
        enroll_lab_machine(d)
        builder = Agent(d, "builder", "none", False, once=False, path_first=tmp)
        try:
            job = harness.wait_for("the job failed", lambda: (lambda j: j if j["state"] == "failed" else None)(
                d.job(job_id)), timeout=600, interval=0.5)
        finally:
            builder.close()
        (build,) = job["builds"]
        assert build["state"] == "dead" and build["attempt"] == 1, build
        assert "expected ';' before '}' token" in build["last_error"], build
        (task,) = job["tasks"]
        assert task["state"] == "dead" and task["attempt"] == 0, task
        assert task["last_error"].startswith("Build task %d failed: " % build["id"]), task
        assert "expected ';' before '}' token" in task["last_error"], task


X86_JOB = dict(PE_JOB, name="x86-build", variants=["default", "rebase", "bind", "ordinal"],
               matrix={"cells": {"arch": ["i686"]}})


def built_blob(d, sha256):
    return os.path.join(d.data_dir, "blobs", sha256[:2], sha256[2:])


def test_builder_makes_i686_variants_for_the_xp_class_agent():
    """An i686 (XP-class) cell: the Linux builder builds it with
    i686-w64-mingw32-gcc (the daemon's build target says so) and ships
    PE32 files for machine i386, as the PE reader (loadlab pe dump, the
    toolkit the probe's checks share) reads them; the build names its
    toolchain and version. No agent here measures the cell (test_xp_agent.py
    does, where wine32 is installed): an XP-class machine is only enrolled,
    so that the build is wanted."""
    with harness.Daemon(shared_build=True) as d:
        job_id = d.submit(X86_JOB)["id"]
        enroll_lab_machine(d, {"os": "winxp", "arch": "i686"}, {})
        builder = Agent(d, "builder", "none", False, once=False)
        try:
            harness.wait_for("the i686 build", lambda: d.job(job_id)["builds"][0]["state"] in ("done", "dead"),
                             timeout=900, interval=1)
        finally:
            builder.close()
        (build,) = d.job(job_id)["builds"]
        assert build["state"] == "done", (build, builder.text()[-3000:])
        assert build["target"] == {"family": "pe", "architecture": "i686", "toolchain": "i686-w64-mingw32-gcc"}
        built = harness.results_of(d, build["id"])[0][1]
        assert built["toolchain"]["target"] == "i686-w64-mingw32", built["toolchain"]
        assert built["toolchain"]["version"].startswith("i686-w64-mingw32-gcc"), built["toolchain"]
        assert [v["name"] for v in built["variants"]] == X86_JOB["variants"], built["variants"]
        for v in built["variants"] + [built["floor"]]:
            for f in v["files"]:
                path = built_blob(d, f["sha256"])
                with open(path, "rb") as blob:
                    assert hashlib.sha256(blob.read()).hexdigest() == f["sha256"], f
                r = subprocess.run([harness.LOADLAB, "pe", "dump", "--json", path], capture_output=True,
                                   text=True, timeout=60)
                assert r.returncode == 0, r.stderr
                dump = json.loads(r.stdout)
                assert dump["format"] == "PE32" and dump["machine"] == 0x14c, (v["name"], f["name"], dump)


if __name__ == "__main__":
    harness.run_tests(globals())
