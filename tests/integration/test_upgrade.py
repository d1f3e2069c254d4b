"""Upgrades (docs/operations.md): a store written by the previous release
(tests/integration/data/store-0846900.db, made by that commit's loadlabd:
data/make_upgrade_fixture.py) opens under this loadlabd, migrates, passes
its integrity check and answers every report, comparison, alert list and
series as the old loadlabd did; a store from a newer loadlabd is refused
with a message naming both versions, and is left as it was."""
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile

from harness import LOADLABD, Daemon, run_tests

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
FIXTURE = os.path.join(DATA, "store-0846900.db")
ADMIN = "lladm_upgradefixtureadmintoken0000000000000000000000"
ENROLL = "llenr_upgradefixtureenrolltoken000000000000000000000"
FIXTURE_SCHEMA = 10
# The schema version this release writes (sqlite_writer.c's migrations).
CURRENT_SCHEMA = 15
# Members this release added to answers the old one gave (new settings;
# the series points' machine digest and floor median of the change points;
# compare rows' "judged", the one judge's figures, issue 39; what each
# compare row and report cell could have seen and the comparison's
# "power", issue 40).
NEW_MEMBERS = ("retain_days", "retain_points", "facts_digest", "floor_median_us", "agent_version",
               "agent_sha256", "agent_update", "judged", "detectable_pct", "underpowered",
               "detectable_note", "power")


def without_new(value):
    if isinstance(value, dict):
        return {k: without_new(v) for k, v in value.items() if k not in NEW_MEMBERS}
    if isinstance(value, list):
        return [without_new(v) for v in value]
    return value


def first_difference(got, want, path="$"):
    """Where two answers first differ, for the assertion's message."""
    if isinstance(got, dict) and isinstance(want, dict):
        for k in sorted(set(got) | set(want)):
            if k not in got or k not in want:
                return "%s.%s: %s" % (path, k, "new" if k in got else "missing")
            if got[k] != want[k]:
                return first_difference(got[k], want[k], "%s.%s" % (path, k))
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                return first_difference(g, w, "%s[%d]" % (path, i))
    return "%s: %r, was %r" % (path, str(got)[:200], str(want)[:200])


def copy_fixture():
    data_dir = tempfile.mkdtemp(prefix="loadlab-upgrade-")
    shutil.copy(FIXTURE, os.path.join(data_dir, "loadlab.db"))
    return data_dir


def test_previous_release_store_migrates_and_answers_as_before():
    with open(os.path.join(DATA, "store-0846900.reports.json")) as f:
        expected = json.load(f)
    conn = sqlite3.connect(FIXTURE)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == FIXTURE_SCHEMA
    conn.close()
    data_dir = copy_fixture()
    d = Daemon(["--schedule-tick-ms", "100"], data_dir=data_dir,
               env={"LOADLAB_ADMIN_TOKEN": ADMIN, "LOADLAB_ENROLL_TOKEN": ENROLL})
    try:
        d.start()
        log = d.read_log()
        assert "store_migrated schema_version=%d" % CURRENT_SCHEMA in log, log[-2000:]
        assert "store_vacuumed" in log, log[-2000:]  # made compactable once
        for job_id, report in expected["jobs"].items():
            r = d.api("GET", "/api/v1/jobs/%s/report" % job_id, token=ADMIN)
            assert r.status == 200, r
            got, want = without_new(r.json()), without_new(report)
            assert got == want, (job_id, first_difference(got, want))
        for pair, answer in expected["compare"].items():
            a, b = pair.split("-")
            r = d.api("GET", "/api/v1/compare?baseline=%s&candidate=%s" % (a, b), token=ADMIN)
            assert r.status == 200 and without_new(r.json()) == answer, pair
        r = d.api("GET", "/api/v1/alerts", token=ADMIN)
        assert r.json() == expected["alerts"] and expected["alerts"]["alerts"], r
        for series, answer in expected["series"].items():
            r = d.api("GET", "/api/v1/series/" + series, token=ADMIN)
            assert without_new(r.json()) == answer, series
        # The versions: the daemon's in the agents' list and /metrics, the
        # agents counted by theirs.
        version = subprocess.run([LOADLABD, "--version"], capture_output=True, text=True).stdout.split()[-1]
        listed = d.api("GET", "/api/v1/agents", token=ADMIN).json()
        assert listed["daemon_version"] == version and len(listed["agents"]) == 3, listed
        # No agent of the old store is a builder until an admin marks it
        # (schema version 15, docs/builds.md).
        assert [a["builder"] for a in listed["agents"]] == [False] * 3, listed
        metrics = d.api("GET", "/metrics").body.decode().splitlines()
        assert 'loadlab_build_info{version="%s"} 1' % version in metrics
        by_version = [int(m.split()[-1]) for m in metrics if m.startswith("loadlab_agents_by_version{")]
        assert sum(by_version) == 3, metrics
        # It goes on as a store of this release: new settings, new jobs.
        r = d.api("PUT", "/api/v1/series/fixture%2Fci", {"retain_points": 5}, token=ADMIN)
        assert r.status == 200 and r.json()["threshold_pct"] == 3, r
        d.submit({"name": "after", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                  "variants": ["default"]}, token=ADMIN)
        assert d.stop() == 0
        conn = sqlite3.connect(os.path.join(data_dir, "loadlab.db"))
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == CURRENT_SCHEMA
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        conn.close()
    finally:
        d.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def test_store_of_a_newer_release_is_refused_and_untouched():
    data_dir = copy_fixture()
    try:
        db = os.path.join(data_dir, "loadlab.db")
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA user_version = 99")
        conn.commit()
        conn.close()
        with open(db, "rb") as f:
            before = f.read()
        out = subprocess.run([LOADLABD, "--listen", "127.0.0.1:0", "--data-dir", data_dir],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        assert out.returncode == 1, out
        version = subprocess.run([LOADLABD, "--version"], capture_output=True, text=True).stdout.split()
        message = out.stderr
        assert "schema version 99" in message and "up to %d" % CURRENT_SCHEMA in message, message
        assert version and version[-1] in message, (version, message)
        with open(db, "rb") as f:
            assert f.read() == before
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


run_tests(globals())
