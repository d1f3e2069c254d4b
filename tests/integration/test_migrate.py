"""loadlabd migrate (docs/operations.md, "Moving a lab to PostgreSQL"): a
SQLite store made by a real daemon (agents, jobs, results, a series with
an alert, a schedule, tokens, a blob) moved into a fresh database of the
test's own PostgreSQL cluster gives the same GET answers for every job,
report, compare, series, alert, schedule and agent; the old tokens work,
new rows get new ids; a non-empty target or a source of another schema
version is refused and nothing changes; a copy that fails half way is
rolled back. The upgrade fixture's store (data/store-0846900.db), opened
once on SQLite, moves with the same answers too."""
import hashlib
import os
import random
import shutil
import sqlite3
import subprocess
import tempfile
import urllib.parse

import pg_cluster
from harness import LOADLABD, Daemon, run_tests
from series_helpers import FACTS, JOB, open_alert, play

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "store-0846900.db")
ADMIN = "lladm_upgradefixtureadmintoken0000000000000000000000"
ENROLL = "llenr_upgradefixtureenrolltoken000000000000000000000"


def run(*args):
    return subprocess.run([LOADLABD] + list(args), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300)


def copy_store(d, to, change=None):
    """The daemon's store (its WAL too) as the file TO; then the SQL
    statement CHANGE run on the copy, when given."""
    src = sqlite3.connect(os.path.join(d.data_dir, "loadlab.db"))
    dst = sqlite3.connect(to)
    src.backup(dst)
    src.close()
    if change:
        dst.execute(change)
        dst.commit()
    dst.close()


def get(d, path, token=None):
    r = d.api("GET", path, token=token or d.admin_token)
    assert r.status == 200, (path, r)
    return r.body


def answers(d, blob):
    """Every GET answer of the lab, by path."""
    out = {}
    paths = ["/api/v1/jobs", "/api/v1/series", "/api/v1/alerts",
             "/api/v1/schedules", "/api/v1/agents", "/api/v1/tokens"]
    jobs = d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"]
    for j in jobs:
        base = "/api/v1/jobs/%d" % j["id"]
        paths += [base, base + "/report", base + "/report?format=md"]
    done = sorted(j["id"] for j in jobs if j["state"] == "done")
    for a, b in zip(done, done[1:]):
        paths.append("/api/v1/compare?baseline=%d&candidate=%d" % (a, b))
    for s in d.api("GET", "/api/v1/schedules", token=d.admin_token).json()["schedules"]:
        paths.append("/api/v1/schedules/%d" % s["id"])
    for a in d.api("GET", "/api/v1/agents", token=d.admin_token).json()["agents"]:
        paths.append("/api/v1/agents/%d" % a["id"])
    for rid in d.results:
        paths.append("/api/v1/results/%d" % rid)
    for name in [x["name"] for x in d.api("GET", "/api/v1/series", token=d.admin_token).json()["series"]]:
        paths.append("/api/v1/series/" + urllib.parse.quote(name, safe=""))
    for p in paths:
        out[p] = get(d, p)
    if blob:
        out["HEAD blob"] = d.api("HEAD", "/api/v1/blobs/" + blob, token=d.admin_token).status
    return out


def result_ids(path):
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT id FROM results ORDER BY id").fetchall()]
    finally:
        conn.close()


def make_lab(d):
    rng = random.Random(28)
    r = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": "ci"}, token=d.admin_token)
    assert r.status == 201, r
    user = r.json()["token"]
    _, agent = d.enroll("m1", facts=FACTS, labels={"rack": "a"})
    d.enroll("m2", facts=FACTS)
    # The admin sets the series up and names the CI user its owner, who may
    # then add revisions to it (docs/series.md, "Owners").
    r = d.api("PUT", "/api/v1/series/perf%2Fnightly", {"threshold_pct": 5, "owner": "user:ci"},
              token=d.admin_token)
    assert r.status == 200, r
    alert = open_alert(d, agent, rng, "perf/nightly", user)
    d.submit(dict(JOB, name="third"), token=user)
    play(d, agent, rng)
    r = d.api("POST", "/api/v1/schedules", {"series": "ci/main", "interval_s": 86400, "job": JOB},
              token=d.admin_token)
    assert r.status == 201, r
    content = b"a program's bytes\n" * 50
    blob = hashlib.sha256(content).hexdigest()
    r = d.api("PUT", "/api/v1/blobs/" + blob, content, token=d.admin_token,
              headers={"Content-Type": "application/octet-stream"})
    assert r.status in (200, 201), r
    queued = d.submit(dict(JOB, name="left queued"), token=user)["id"]
    rows = sqlite3.connect(os.path.join(d.data_dir, "loadlab.db")).execute(
        "SELECT id FROM results ORDER BY id").fetchall()
    d.results = [row[0] for row in rows]
    assert len(d.results) == 3 and alert, d.results
    return user, agent, blob, queued


def test_migrate_gives_the_same_answers_on_postgresql():
    cluster = pg_cluster.shared()
    work = tempfile.mkdtemp(prefix="loadlab-migrate-")
    d = Daemon().start()
    d2 = None
    try:
        user, agent, blob, queued = make_lab(d)
        before = answers(d, blob)
        max_job = max(j["id"] for j in d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"])
        d.stop()

        db = cluster.create_database()
        uri = cluster.uri(db)
        target = os.path.join(work, "pg-data")
        os.mkdir(target, 0o700)
        out = run("migrate", "--from", os.path.join(d.data_dir, "loadlab.db"), "--to", uri,
                  "--blobs-from", os.path.join(d.data_dir, "blobs"), "--blobs-to", os.path.join(target, "blobs"))
        assert out.returncode == 0, (out.stdout, out.stderr)
        assert "counts equal" in out.stdout and "blobs: 1 copied" in out.stdout, out.stdout
        assert "MISMATCH" not in out.stdout and "migrate jobs" in out.stdout, out.stdout
        print("    " + out.stdout.strip().split("\n")[-1])
        for name in ("admin.token", "enroll.token"):
            shutil.copy(os.path.join(d.data_dir, name), os.path.join(target, name))

        d2 = Daemon(data_dir=target, extra_args=["--db", uri]).start()
        d2.results = d.results
        after = answers(d2, blob)
        assert sorted(after) == sorted(before)
        for path in before:
            assert after[path] == before[path], (path, before[path], after[path])
        print("    %d GET answers identical" % len(before))

        # The old tokens: a user lists jobs, an agent leases the queued task.
        r = d2.api("GET", "/api/v1/jobs", token=user)
        assert r.status == 200 and r.json()["jobs"], r
        r = d2.api("POST", "/api/v1/lease", {"wait": 0}, token=agent)
        assert r.status == 200 and r.json()["job"]["id"] == queued, r
        # New rows get new ids.
        new = d2.submit(dict(JOB, name="after the move"), token=user)
        assert new["id"] == max_job + 1, (new["id"], max_job)
        r = d2.api("POST", "/api/v1/tokens", {"kind": "user", "name": "new"}, token=d2.admin_token)
        assert r.status == 201, r
        d2.stop()

        # A non-empty target: refused, unchanged.
        counted = cluster.psql(db, "SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM tokens)")
        out = run("migrate", "--from", os.path.join(d.data_dir, "loadlab.db"), "--to", uri)
        assert out.returncode == 1 and "not empty" in out.stderr, (out.stdout, out.stderr)
        assert cluster.psql(db, "SELECT (SELECT count(*) FROM jobs), (SELECT count(*) FROM tokens)") == counted

        # A source of another schema version: refused, the target untouched.
        old = os.path.join(work, "old.db")
        copy_store(d, old, "PRAGMA user_version=11")
        fresh = cluster.create_database()
        out = run("migrate", "--from", old, "--to", cluster.uri(fresh))
        assert out.returncode == 1 and "schema version 11" in out.stderr, (out.stdout, out.stderr)
        assert "start loadlabd" in out.stderr, out.stderr
        assert cluster.psql(fresh, "SELECT count(*) FROM information_schema.tables"
                                   " WHERE table_schema = current_schema()") == [["0"]]
        # A copy that fails half way (a table the PostgreSQL schema lacks,
        # the last one read): rolled back, the target keeps no row; the
        # empty schema left is a valid target for the next run.
        extra = os.path.join(work, "extra.db")
        copy_store(d, extra, "CREATE TABLE not_in_postgresql (x INTEGER)")
        out = run("migrate", "--from", extra, "--to", cluster.uri(fresh))
        assert out.returncode == 1 and "no table not_in_postgresql" in out.stderr, (out.stdout, out.stderr)
        assert cluster.psql(fresh, "SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM tokens)"
                                   " + (SELECT count(*) FROM results)") == [["0"]]
        out = run("migrate", "--from", os.path.join(d.data_dir, "loadlab.db"), "--to", cluster.uri(fresh))
        assert out.returncode == 0 and "counts equal" in out.stdout, (out.stdout, out.stderr)
        assert cluster.psql(fresh, "SELECT count(*) FROM results") == [["3"]]
        # Bad arguments: exit 2.
        for args in (["migrate"], ["migrate", "--from", old], ["migrate", "--from", old, "--to", "x.db"]):
            out = run(*args)
            assert out.returncode in (1, 2) and out.stderr, (args, out)
    finally:
        if d2:
            d2.stop()
        d.close()
        shutil.rmtree(work, ignore_errors=True)


def test_migrate_of_the_upgrade_fixture_answers_as_before():
    """The store test_upgrade keeps (made by an earlier release's tests),
    opened once on SQLite (migrated to this version), then moved."""
    cluster = pg_cluster.shared()
    data_dir = tempfile.mkdtemp(prefix="loadlab-migrate-fixture-")
    target = tempfile.mkdtemp(prefix="loadlab-migrate-fixture-pg-")
    shutil.copy(FIXTURE, os.path.join(data_dir, "loadlab.db"))
    d = Daemon(data_dir=data_dir, env={"LOADLAB_ADMIN_TOKEN": ADMIN, "LOADLAB_ENROLL_TOKEN": ENROLL})
    d2 = None
    try:
        d.start()
        d.admin_token = ADMIN
        d.results = result_ids(os.path.join(data_dir, "loadlab.db"))
        before = answers(d, None)
        d.stop()
        uri = cluster.uri(cluster.create_database())
        out = run("migrate", "--from", os.path.join(data_dir, "loadlab.db"), "--to", uri)
        assert out.returncode == 0 and "counts equal" in out.stdout, (out.stdout, out.stderr)
        d2 = Daemon(data_dir=target, extra_args=["--db", uri]).start()
        d2.admin_token = ADMIN  # the fixture's, copied: the daemon made none
        assert d2.read_token("admin.token") is None
        d2.results = d.results
        after = answers(d2, None)
        assert sorted(after) == sorted(before)
        for path in before:
            assert after[path] == before[path], (path, before[path], after[path])
        print("    %d GET answers identical (%d jobs, %d results)"
              % (len(before), len([p for p in before if p.endswith("/report")]), len(d.results)))
    finally:
        if d2:
            d2.close()
        d.close()
        shutil.rmtree(data_dir, ignore_errors=True)


run_tests(globals())
