#!/usr/bin/env python3
"""Remakes the upgrade fixture of tests/integration/test_upgrade.py: a
store written by the loadlabd of an earlier commit (default 0846900, the
release before the retention schema), with what its reports said then.

    python3 tests/integration/data/make_upgrade_fixture.py [COMMIT]

Checks COMMIT out in a temporary git worktree, builds only its loadlabd
(the dashboard's npm packages are borrowed from this tree's web/), runs it
on 127.0.0.1:0 with known tokens, plays three agents over REST through two
series of jobs (one alert, series settings, a cancelled job), and writes:

    tests/integration/data/store-COMMIT.db            the store (VACUUM INTO: one file)
    tests/integration/data/store-COMMIT.reports.json  its reports and a comparison, as that loadlabd sent them

then removes the worktree. Needs git, cmake, a C toolchain (the project's
build dependencies), about two minutes on two cores."""
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
ADMIN = "lladm_upgradefixtureadmintoken0000000000000000000000"
ENROLL = "llenr_upgradefixtureenrolltoken000000000000000000000"


def build(commit, work):
    tree = os.path.join(work, "src")
    subprocess.run(["git", "-C", SOURCE, "worktree", "add", "--detach", tree, commit], check=True)
    os.symlink(os.path.join(SOURCE, "web", "node_modules"), os.path.join(tree, "web", "node_modules"))
    out = os.path.join(work, "build")
    subprocess.run(["cmake", "-S", tree, "-B", out, "-DCMAKE_BUILD_TYPE=Release"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", out, "-j2", "--target", "loadlabd"], check=True,
                   stdout=subprocess.DEVNULL)
    return tree, out


def play(d, tokens, rng, shift, samples=30):
    for token in tokens:
        lease = d.api("POST", "/api/v1/lease", {"wait": 5}, token=token).json()
        variants = [{"name": name, "valid": True,
                     "warm": {"runs": samples,
                              "samples_us": [round(base * shift + rng.gauss(0, 5), 1) for _ in range(samples)]}}
                    for name, base in (("default", 1000), ("rebase", 1100))]
        r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"],
                  {"attempt": lease["attempt"], "facts": {"os": "winxp", "disk": "ssd"},
                   "variants": variants}, token=token)
        assert r.status == 200, r


def make(commit, build_dir):
    os.environ["LOADLAB_BUILD_DIR"] = build_dir
    sys.path.insert(0, os.path.join(SOURCE, "tests", "integration"))
    from harness import Daemon, wait_for  # the harness of this tree, the binary of COMMIT

    rng = random.Random(2026)
    d = Daemon(["--schedule-tick-ms", "100"], env={"LOADLAB_ADMIN_TOKEN": ADMIN, "LOADLAB_ENROLL_TOKEN": ENROLL})
    d.start()
    d.admin_token, d.enroll_token = ADMIN, ENROLL
    try:
        tokens = [d.enroll("lab-%d" % i, {"os": "winxp", "disk": "ssd"})[1] for i in range(3)]
        job = {"family": "pe", "generator": {"dlls": 2, "exports": 10}, "variants": ["default", "rebase"],
               "matrix": {"each_agent": {}}}
        jobs = []
        for series, shifts in (("fixture/nightly", (1.0, 1.0, 1.25)), ("fixture/ci", (1.0, 0.98))):
            for i, shift in enumerate(shifts):
                jobs.append(d.submit(dict(job, name="%s-%d" % (series, i), series=series,
                                          revision="r%d" % i), token=ADMIN)["id"])
                play(d, tokens, rng, shift)
        r = d.api("PUT", "/api/v1/series/fixture%2Fci", {"threshold_pct": 3}, token=ADMIN)
        assert r.status == 200, r
        cancelled = d.submit(dict(job, name="cancelled"), token=ADMIN)["id"]
        assert d.api("POST", "/api/v1/jobs/%d/cancel" % cancelled, {}, token=ADMIN).status == 200
        wait_for("the alert", lambda: d.api("GET", "/api/v1/alerts", token=ADMIN).json()["alerts"], timeout=30)
        wait_for("summaries", lambda: "loadlab_summaries_pending 0\n" in d.api("GET", "/metrics").body.decode())
        reports = {"jobs": {}, "compare": {}, "alerts": None, "series": {}}
        for job_id in jobs + [cancelled]:
            r = d.api("GET", "/api/v1/jobs/%d/report" % job_id, token=ADMIN)
            assert r.status == 200, r
            reports["jobs"][str(job_id)] = r.json()
        for a, b in zip(jobs, jobs[1:]):
            r = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d" % (a, b), token=ADMIN)
            assert r.status == 200, r
            reports["compare"]["%d-%d" % (a, b)] = r.json()
        reports["alerts"] = d.api("GET", "/api/v1/alerts", token=ADMIN).json()
        for series in ("fixture%2Fnightly", "fixture%2Fci"):
            reports["series"][series] = d.api("GET", "/api/v1/series/" + series, token=ADMIN).json()
    finally:
        d.stop()
    target = os.path.join(HERE, "store-%s.db" % commit)
    if os.path.exists(target):
        os.unlink(target)
    conn = sqlite3.connect(os.path.join(d.data_dir, "loadlab.db"))
    conn.execute("VACUUM INTO ?", (target,))
    conn.close()
    with open(os.path.join(HERE, "store-%s.reports.json" % commit), "w") as f:
        json.dump(reports, f, indent=1, sort_keys=True)
        f.write("\n")
    shutil.rmtree(d.data_dir, ignore_errors=True)
    print("wrote", target)


def main():
    commit = sys.argv[1] if len(sys.argv) > 1 else "0846900"
    work = tempfile.mkdtemp(prefix="loadlab-fixture-")
    tree = None
    try:
        tree, build_dir = build(commit, work)
        make(commit, build_dir)
    finally:
        if tree:
            subprocess.run(["git", "-C", SOURCE, "worktree", "remove", "--force", tree], check=False)
        shutil.rmtree(work, ignore_errors=True)


main()
