"""Build tasks (docs/builds.md), driven over real HTTP as a builder and
measuring agents would: a pe job gets one build per target before its
measuring tasks; only an agent an admin marked a builder and whose facts
list the toolchain leases it;
a measuring task waits for it, and says so; a failed build fails the job
once with the builder's log; an expired build is leased again and a done
one never; "each-agent" keeps building on every agent. Responses are
checked against the JSON Schemas in schemas/.
"""
import hashlib
import subprocess

from harness import LOADLAB, Daemon, run_tests, wait_for
from schemacheck import validate

BUILDER = {"os": "linux", "arch": "x86_64", "toolchains": ["x86_64-w64-mingw32-gcc"]}
LAB = {"os": "winxp", "arch": "x86_64", "toolchains": []}
JOB = {"name": "shared", "family": "pe", "generator": {"dlls": 2, "exports": 3},
       "variants": ["default", "bind"], "matrix": {"cells": {"os": ["winxp", "linux"]}}}


def status(d, job_id):
    p = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token, "status", str(job_id)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def lease(d, token):
    r = d.api("POST", "/api/v1/lease", {"wait": 0}, token=token)
    assert r.status in (200, 204), r
    if r.status == 204:
        return None
    validate("lease.json", r.json())
    return r.json()


def waiting_reasons(d, job_id):
    job = d.job(job_id)
    return [t["waiting"]["reason"] for t in job["tasks"] if t["waiting"]], job


def build_result(d, token, attempt):
    """A build's result with one uploaded blob per file, as a builder posts it."""
    data = b"MZ built once"
    hexdigest = hashlib.sha256(data).hexdigest()
    r = d.api("PUT", "/api/v1/blobs/" + hexdigest, data, token=token)
    assert r.status in (200, 201), r
    files = [{"name": "main.exe", "sha256": hexdigest, "size": len(data)}]
    return {"attempt": attempt, "facts": BUILDER, "kind": "build", "family": "pe",
            "variants": [{"name": "default", "files": files}, {"name": "bind", "files": files}],
            "floor": {"name": "empty.exe", "files": files}, "log": ""}


def test_one_build_before_the_cells_and_its_waiting_reasons():
    with Daemon(shared_build=True) as d:
        created = d.submit(JOB)
        assert created["task_count"] == 2, created
        job_id = created["id"]
        _, lab = d.enroll("xp1", LAB, {"os": "winxp"})
        reasons, job = waiting_reasons(d, job_id)
        assert len(job["builds"]) == 1, job
        build = job["builds"][0]
        assert build["target"] == {"family": "pe", "architecture": "x86_64",
                                   "toolchain": "x86_64-w64-mingw32-gcc"}, build
        assert all(t["build_task"] == build["id"] for t in job["tasks"]), job
        # No agent has the compiler: the build says why, and so do the cells.
        assert build["waiting"]["reason"] == \
            "no agent can build pe for x86_64: needs x86_64-w64-mingw32-gcc", build
        assert reasons[0] == "no agent can build pe for x86_64: needs x86_64-w64-mingw32-gcc", reasons
        # The cell no enrolled agent can measure says that first (the
        # build would not help it); the other waits for the build.
        xp_task, linux_task = [t["id"] for t in job["tasks"]]
        text = status(d, job_id)
        assert "waiting: task %d: no agent can build pe for x86_64: needs x86_64-w64-mingw32-gcc\n" % xp_task \
            in text, text
        assert "waiting: task %d: no agent has os=linux\n" % linux_task in text, text
        assert lease(d, lab) is None  # the lab machine cannot build, nor measure yet
        builder_id, builder = d.enroll("builder", BUILDER, {"os": "linux"})
        # Its facts list the compiler, but no admin marked it a builder.
        unmarked = ("agent builder can build pe for x86_64 but is not marked as a builder"
                    " (an admin marks it: loadlab agents --builder %d)" % builder_id)
        assert d.job(job_id)["builds"][0]["waiting"]["reason"] == unmarked
        assert lease(d, builder) is None
        d.mark_builder(builder_id)
        # Only an agent that holds a build task uploads.
        blob = "/api/v1/blobs/" + hashlib.sha256(b"MZ built once").hexdigest()
        for token in (lab, builder):
            r = d.api("PUT", blob, b"MZ built once", token=token)
            assert r.status == 403 and r.json()["error"]["code"] == "forbidden", r
        b = lease(d, builder)
        assert b["kind"] == "build" and b["task_id"] == build["id"], b
        assert b["target"] == build["target"] and b["cell"] == build["target"], b
        reasons, _ = waiting_reasons(d, job_id)
        assert reasons == ["waiting for build %d on builder" % build["id"]] * 2, reasons
        assert "waiting for build %d on builder" % build["id"] in status(d, job_id)
        assert lease(d, lab) is None and lease(d, builder) is None
        r = d.api("POST", "/api/v1/tasks/%d/result" % b["task_id"], build_result(d, builder, b["attempt"]),
                  token=builder)
        assert r.status == 200, r
        r = d.api("PUT", blob, b"MZ built once", token=builder)  # its build is done
        assert r.status == 403, r
        # Done: the cells are leasable, each with the build's result.
        m = lease(d, lab)
        assert m["kind"] == "measure" and m["cell"] == {"os": "winxp"}, m
        assert m["build"]["task_id"] == build["id"] and m["build"]["builder"] == "builder", m
        assert [v["name"] for v in m["build"]["result"]["variants"]] == ["default", "bind"], m
        m2 = lease(d, builder)
        assert m2["cell"] == {"os": "linux"} and m2["build"]["task_id"] == build["id"], m2
        # A measuring task that fails is retried; the build is not.
        r = d.api("POST", "/api/v1/tasks/%d/fail" % m["task_id"],
                  {"attempt": 1, "reason": "probe failed", "retryable": True}, token=lab)
        assert r.status == 200, r
        job = d.job(job_id)
        assert job["builds"][0]["state"] == "done" and job["builds"][0]["attempt"] == 1, job
        # The build's blobs are referenced while the job runs.
        assert job["state"] == "running"


def measured(lease, built, bound_digest):
    """A measuring result of LEASE that ran BUILT's files, main.exe of
    "bind" rewritten to BOUND_DIGEST (as binding does), as an agent posts it."""
    variants = []
    for v in built["variants"]:
        files = [dict(f) for f in v["files"]]
        local = []
        if v["name"] == "bind":
            local = [{"name": "main.exe", "built_sha256": files[0]["sha256"], "sha256": bound_digest,
                      "by": "bind"}]
            files[0]["sha256"] = bound_digest
        variants.append({"name": v["name"], "valid": True, "files": files,
                         "warm": {"samples_us": [1000, 1010, 990]},
                         "shipped": {"identical": not local, "local_files": local}})
    return {"attempt": lease["attempt"], "facts": LAB, "family": "pe", "variants": variants,
            "build_task": {"id": lease["build"]["task_id"], "builder": lease["build"]["builder"]},
            "toolchain": TOOLCHAIN}


TOOLCHAIN = {"kind": "mingw-w64", "target": "x86_64-w64-mingw32", "compiler": "/usr/bin/x86_64-w64-mingw32-gcc",
             "version": "x86_64-w64-mingw32-gcc (GCC) 12-posix"}


def cli(d, *args):
    p = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token] + list(args),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def check_shipped_renderings(d, job_id, build_id):
    """The shared build in the report's and compare's text, Markdown and CSV."""
    built = "built once by build task %d on builder (%s) for os=winxp, os=linux" % (build_id, TOOLCHAIN["version"])
    lines = ["default: identical files in 2 cells",
             "bind: written on each machine (bind): main.exe; differing between cells: main.exe"]
    md = d.api("GET", "/api/v1/jobs/%d/report?format=md" % job_id, token=d.admin_token).body.decode()
    section = md[md.index("## Same bytes in every cell"):]
    for line in [built] + lines:
        assert "- " + line + "\n" in section, section
    table = cli(d, "report", str(job_id))
    for line in [built] + lines:
        assert "  " + line + "\n" in table[table.index("Same bytes in every cell"):], table
    csv = d.api("GET", "/api/v1/jobs/%d/report?format=csv" % job_id, token=d.admin_token).body.decode()
    rows = csv.split("\r\n")
    assert rows[0].endswith(",x_floor,identical,differing_files,local_files"), rows[0]
    assert all(r.count(",") == rows[0].count(",") for r in rows if r and not r.startswith('"shipped"')), rows
    assert '"shipped","bind",' in csv and csv.count('"shipped"') == 2, csv
    (bind,) = [r for r in rows if r.startswith('"shipped","bind"')]
    assert bind.endswith(',false,"main.exe","main.exe"') and bind.count(",") == rows[0].count(","), bind
    q = "/api/v1/compare?baseline=%d&candidate=%d" % (job_id, job_id)
    md = d.api("GET", q + "&format=md", token=d.admin_token).body.decode()
    assert "Baseline job %d was built once and shipped by digest:" % job_id in md, md
    for line in [built] + lines:
        assert md.count("- " + line + "\n") == 2, md  # both sides
    csv = d.api("GET", q + "&format=csv", token=d.admin_token).body.decode().split("\r\n")
    assert csv[0].endswith(",baseline_identical,candidate_identical"), csv[0]
    assert any(r.startswith('"bind",') and r.endswith(",false,false") for r in csv), csv
    assert any(r.startswith('"default",') and r.endswith(",true,true") for r in csv), csv
    text = cli(d, "compare", str(job_id), str(job_id), "--max-regression", "1000")
    assert "The candidate job %d was built once and shipped by digest:" % job_id in text, text
    for line in [built] + lines:
        assert text.count("  " + line + "\n") == 2, text


def test_a_build_nobody_can_measure_is_held():
    """A shared build whose cells no enrolled agent can measure is not
    leased (its programs would run nowhere) and says why; an agent that can
    measure one enrolls and the build goes to the builder."""
    with Daemon(shared_build=True) as d:
        builder_id, builder = d.enroll("builder", BUILDER, {"os": "linux"})
        d.mark_builder(builder_id)
        job_id = d.submit(dict(JOB, matrix={"cells": {"os": ["winxp"]}}))["id"]
        assert lease(d, builder) is None
        build = d.job(job_id)["builds"][0]
        assert build["state"] == "queued", build
        assert build["waiting"] == {"could_run": False, "reason": "held: no agent can measure what it"
                                    " builds (no agent has os=winxp)"}, build
        _, lab = d.enroll("xp1", LAB, {"os": "winxp"})
        assert d.job(job_id)["builds"][0]["waiting"]["could_run"] is True
        b = lease(d, builder)
        assert b and b["kind"] == "build" and b["task_id"] == build["id"], b


def test_report_and_compare_say_which_bytes_every_cell_ran():
    with Daemon(shared_build=True) as d:
        job_id = d.submit(JOB)["id"]
        _, lab = d.enroll("xp1", LAB, {"os": "winxp"})
        _, builder = d.enroll_builder("builder", BUILDER, {"os": "linux"})
        b = lease(d, builder)
        built = build_result(d, builder, b["attempt"])
        assert d.api("POST", "/api/v1/tasks/%d/result" % b["task_id"], built, token=builder).status == 200
        for token, digest in ((lab, "1" * 64), (builder, "2" * 64)):
            m = lease(d, token)
            r = d.api("POST", "/api/v1/tasks/%d/result" % m["task_id"], measured(m, built, digest),
                      token=token)
            assert r.status == 200, r
        assert d.job(job_id)["state"] == "done"
        report = d.api("GET", "/api/v1/jobs/%d/report" % job_id, token=d.admin_token).json()
        validate("report.json", report)
        assert report["shipped"] == [
            {"variant": "default", "cells": 2, "identical": True, "differing_files": [], "local_files": []},
            {"variant": "bind", "cells": 2, "identical": False, "differing_files": ["main.exe"],
             "local_files": ["main.exe"]}], report["shipped"]
        r = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d" % (job_id, job_id), token=d.admin_token)
        assert r.status == 200, r
        validate("compare.json", r.json())
        assert r.json()["baseline"]["shipped"] == report["shipped"], r.json()["baseline"]
        # The build's builder (the agent the store says leased it) and
        # toolchain, with its version, beside each cell; the job names it too.
        assert [(c["build_task"], c["builder"], c["toolchain"]) for c in report["cells"]] == \
            [(b["task_id"], "builder", TOOLCHAIN)] * 2, report["cells"]
        assert d.job(job_id)["builds"][0]["builder"] == "builder"
        assert [c["builder"] for c in r.json()["baseline"]["build_cells"]] == ["builder"] * 2
        assert [c["toolchain"]["version"] for c in r.json()["baseline"]["build_cells"]] == \
            [TOOLCHAIN["version"]] * 2, r.json()["baseline"]
        check_shipped_renderings(d, job_id, b["task_id"])


def test_failed_build_fails_the_job_once_with_its_log():
    with Daemon(shared_build=True) as d:
        job_id = d.submit(JOB)["id"]
        _, builder = d.enroll_builder("builder", BUILDER, {"os": "linux"})
        b = lease(d, builder)
        assert b["kind"] == "build", b
        log = "lt0.c:3: error: expected ';' before '}' token"
        r = d.api("POST", "/api/v1/tasks/%d/fail" % b["task_id"],
                  {"attempt": 1, "reason": log, "retryable": False}, token=builder)
        assert r.status == 200 and r.json()["state"] == "dead", r
        job = d.job(job_id)
        assert job["state"] == "failed", job
        assert job["builds"][0]["last_error"] == log, job
        for t in job["tasks"]:
            assert t["state"] == "dead" and t["attempt"] == 0, t
            assert t["last_error"] == "Build task %d failed: %s" % (b["task_id"], log), t
        assert lease(d, builder) is None


def test_an_expired_build_is_leased_again_and_a_done_one_never():
    with Daemon(["--lease-seconds", "1", "--max-attempts", "2"], shared_build=True) as d:
        job_id = d.submit(dict(JOB, matrix={"cells": {"os": ["linux"]}}))["id"]
        _, one = d.enroll_builder("builder1", BUILDER, {"os": "linux"})
        _, two = d.enroll_builder("builder2", BUILDER, {"os": "linux"})
        first = lease(d, one)
        assert first["kind"] == "build"

        def released():
            return lease(d, two)

        again = wait_for("the expired build leased again", released, timeout=30)
        assert again["task_id"] == first["task_id"] and again["attempt"] == 2, again
        r = d.api("POST", "/api/v1/tasks/%d/result" % again["task_id"],
                  build_result(d, two, again["attempt"]), token=two)
        assert r.status == 200, r
        m = lease(d, one)
        assert m["kind"] == "measure", m
        job = d.job(job_id)
        assert job["builds"][0]["state"] == "done" and job["builds"][0]["attempt"] == 2, job


def test_a_build_lost_past_the_capped_retries_fails_the_job():
    with Daemon(["--lease-seconds", "1", "--max-attempts", "2"], shared_build=True) as d:
        job_id = d.submit(JOB)["id"]
        _, one = d.enroll_builder("builder1", BUILDER, {"os": "linux"})
        first = lease(d, one)
        assert first["kind"] == "build" and first["attempt"] == 1, first
        again = wait_for("the expired build leased again", lambda: lease(d, one), timeout=30)
        assert again["task_id"] == first["task_id"] and again["attempt"] == 2, again
        # The second lease expires too: past --max-attempts the build is
        # dead, and so is every cell that waited for it; the job fails.
        job = wait_for("the job failed", lambda: (lambda j: j if j["state"] == "failed" else None)(d.job(job_id)),
                       timeout=30, interval=0.2)
        assert job["builds"][0]["state"] == "dead" and job["builds"][0]["attempt"] == 2, job
        assert all(t["state"] == "dead" and t["attempt"] == 0 for t in job["tasks"]), job["tasks"]
        assert all(t["last_error"].startswith("Build task %d failed" % first["task_id"]) for t in job["tasks"]), \
            job["tasks"]
        assert lease(d, one) is None


def test_each_agent_builds_and_an_unknown_architecture():
    with Daemon(shared_build=True) as d:
        created = d.submit(dict(JOB, build="each-agent"))
        job = d.job(created["id"])
        assert "builds" not in job and all("build_task" not in t for t in job["tasks"]), job
        assert job["spec"]["build"] == "each-agent"
        _, lab = d.enroll("xp1", LAB, {"os": "winxp"})
        m = lease(d, lab)
        assert m["kind"] == "measure" and "build" not in m, m
        # An x86 cell needs its own build, with its own compiler.
        job_id = d.submit(dict(JOB, matrix={"cells": {"arch": ["x86", "x86_64"]}}))["id"]
        job = d.job(job_id)
        assert sorted(b["target"]["toolchain"] for b in job["builds"]) == \
            ["i686-w64-mingw32-gcc", "x86_64-w64-mingw32-gcc"], job
        r = d.api("POST", "/api/v1/jobs", dict(JOB, matrix={"cells": {"arch": ["arm"]}}),
                  token=d.admin_token)
        assert r.status == 400 and "x86_64 or i686" in r.json()["error"]["message"], r
        r = d.api("POST", "/api/v1/jobs", dict(JOB, build="twice"), token=d.admin_token)
        assert r.status == 400 and "'build'" in r.json()["error"]["message"], r


if __name__ == "__main__":
    run_tests(globals())
