"""A series' retention of raw samples (docs/operations.md, "Bounded
growth"): past retain_points the results' raw samples are dropped, the
summaries and compare data kept, so the reports and compare answers of
every point stay the same; the jobs of an open alert keep theirs; a
compaction makes the store's file smaller (a full one too, with writes
going on after it); /metrics shows its size."""
import os
import random
import sqlite3

from harness import Daemon, run_tests, wait_for
from schemacheck import validate
from series_helpers import FACTS, JOB

SERIES = "ret/nightly"
RUNS = 4000  # samples per variant and result: the raw part of a result
AGENTS = 3


def play_all(d, tokens, rng, shift):
    for token in tokens:
        lease = wait_for("a lease", lambda: d.api("POST", "/api/v1/lease", {}, token=token).json())
        variants = [{"name": name, "valid": True,
                     "warm": {"runs": RUNS,
                              "samples_us": [round(base * shift + rng.gauss(0, 5), 1)
                                             for _ in range(RUNS)]}}
                    for name, base in (("default", 1000), ("rebase", 1100))]
        r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"],
                  {"attempt": lease["attempt"], "facts": FACTS, "variants": variants}, token=token)
        assert r.status == 200, r


def metric(d, name):
    for line in d.api("GET", "/metrics").body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError("no metric " + name)


def answers(d, jobs):
    """Every job's report and every neighbour pair's comparison, as text."""
    out = {}
    for job in jobs:
        r = d.api("GET", "/api/v1/jobs/%d/report" % job, token=d.admin_token)
        assert r.status == 200, r
        out["report", job] = r.body
    for a, b in zip(jobs, jobs[1:]):
        r = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d" % (a, b), token=d.admin_token)
        assert r.status == 200, r
        out["compare", a, b] = r.body
    return out


def test_retention_drops_raw_samples_keeps_answers_and_compaction_shrinks_the_file():
    rng = random.Random(30)
    with Daemon(["--schedule-tick-ms", "100"]) as d:
        tokens = [d.enroll("a%d" % i, FACTS)[1] for i in range(AGENTS)]
        jobs = []
        # r1 fast, r2 20 % slower (opens an alert: r1 and r2 keep their
        # samples while it is open), then r3..r6 like r2.
        for i, shift in enumerate((1.0, 1.2, 1.2, 1.2, 1.2, 1.2)):
            jobs.append(d.submit(dict(JOB, series=SERIES, revision="r%d" % (i + 1),
                                      matrix={"each_agent": {}}))["id"])
            play_all(d, tokens, rng, shift)
        alert = wait_for("the alert", lambda: [
            a for a in d.api("GET", "/api/v1/alerts", token=d.admin_token).json()["alerts"]
            if a["series"] == SERIES])[0]
        assert alert["job_id"] == jobs[1] and alert["baseline_id"] == jobs[0], alert
        wait_for("summaries", lambda: metric(d, "loadlab_summaries_pending") == 0)
        # Every job's regression check recorded: the last one's baseline
        # (r5) is kept, and a check still to come would move it.
        wait_for("the series checks", lambda: int(d.store_sql(
            "SELECT count(*) FROM series_checks WHERE job_id IN (%s)" % ",".join(map(str, jobs[1:])))
            [0][0]) == len(jobs) - 1)
        before = answers(d, jobs)
        db = os.path.join(d.data_dir, "loadlab.db")

        # Bad retention values: 400, nothing changed.
        for body in ({"retain_points": -1}, {"retain_points": 1.5}, {"retain_days": "7"},
                     {"retain_days": 36501}, {"retain_points": 10000001}):
            r = d.api("PUT", "/api/v1/series/" + SERIES, body, token=d.admin_token)
            assert r.status == 400, (body, r)
        r = d.api("PUT", "/api/v1/series/" + SERIES, {"retain_points": 2}, token=d.admin_token)
        assert r.status == 200 and r.json()["retain_points"] == 2 and r.json()["retain_days"] == 0, r
        validate("series_settings.json", r.json())
        listed = d.api("GET", "/api/v1/series", token=d.admin_token).json()
        validate("series_list.json", listed)

        size_before = metric(d, "loadlab_store_bytes")
        r = d.api("POST", "/api/v1/admin/compact", {}, token=d.admin_token)
        assert r.status == 200, r
        out = r.json()
        # Jobs 3 and 4 (r3, r4) are past the newest 2 and hold no open
        # alert: their results lose their raw samples.
        assert out["pruned_results"] == 2 * AGENTS, out
        assert out["bytes_after"] < out["bytes_before"], out
        assert os.path.getsize(db) == out["bytes_after"]
        assert metric(d, "loadlab_store_bytes") < size_before
        print("    store %d -> %d bytes after pruning %d results"
              % (out["bytes_before"], out["bytes_after"], out["pruned_results"]))

        conn = sqlite3.connect(db)
        rows = conn.execute("SELECT t.job_id, r.id, r.pruned_at IS NOT NULL FROM results r"
                            " JOIN tasks t ON t.id = r.task_id").fetchall()
        conn.close()
        for job_id, result_id, pruned in rows:
            body = d.api("GET", "/api/v1/results/%d" % result_id, token=d.admin_token).json()
            expect = job_id in (jobs[2], jobs[3])
            assert bool(pruned) == expect, (job_id, pruned)
            samples = [v["warm"].get("samples_us") for v in body["variants"]]
            if expect:
                assert body["raw_samples"] == "dropped" and samples == [None, None], body.keys()
            else:
                validate("result.json", body)
                assert "raw_samples" not in body and all(len(s) == RUNS for s in samples)

        # Every report and comparison is what it was.
        after = answers(d, jobs)
        for key in before:
            assert after[key] == before[key], key

        # A second pass has nothing left to drop; a full one (VACUUM, run
        # alone by the writer) also gives back the room freed inside pages.
        r = d.api("POST", "/api/v1/admin/compact", {}, token=d.admin_token)
        assert r.status == 200 and r.json()["pruned_results"] == 0, r
        for body in ({"full": "yes"}, {"fast": True}):
            r = d.api("POST", "/api/v1/admin/compact", body, token=d.admin_token)
            assert r.status == 400, (body, r)
        r = d.api("POST", "/api/v1/admin/compact", {"full": True}, token=d.admin_token)
        assert r.status == 200 and r.json()["bytes_after"] <= out["bytes_after"], r
        assert os.path.getsize(db) == r.json()["bytes_after"]
        assert answers(d, jobs) == before
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
        d.submit(dict(JOB, series=SERIES, revision="r7"))  # writes go on after it
        # Only an admin compacts.
        user = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": "u"}, token=d.admin_token)
        r = d.api("POST", "/api/v1/admin/compact", {}, token=user.json()["token"])
        assert r.status == 403, r


def test_retain_days_drops_the_samples_of_older_jobs_only():
    rng = random.Random(31)
    with Daemon(["--schedule-tick-ms", "100"]) as d:
        tokens = [d.enroll("a%d" % i, FACTS)[1] for i in range(2)]
        jobs = []
        for i in range(3):
            jobs.append(d.submit(dict(JOB, series="ret/days", revision="r%d" % i,
                                      matrix={"each_agent": {}}))["id"])
            play_all(d, tokens, rng, 1.0)
        wait_for("summaries", lambda: metric(d, "loadlab_summaries_pending") == 0)
        wait_for("checks", lambda: len(d.api("GET", "/api/v1/series/ret%2Fdays",
                                             token=d.admin_token).json()["jobs"]) == 3)
        before = answers(d, jobs)
        r = d.api("PUT", "/api/v1/series/ret%2Fdays", {"retain_days": 1}, token=d.admin_token)
        assert r.status == 200 and r.json()["retain_days"] == 1, r
        # Nothing is a day old yet.
        assert d.api("POST", "/api/v1/admin/compact", {}, token=d.admin_token).json()["pruned_results"] == 0
        # The first job made two days ago (the store's clock is the wall clock).
        d.stop()
        conn = sqlite3.connect(os.path.join(d.data_dir, "loadlab.db"))
        conn.execute("UPDATE jobs SET created_at = created_at - 2 * 86400000 WHERE id = ?", (jobs[0],))
        conn.commit()
        conn.close()
        d.start()
        r = d.api("POST", "/api/v1/admin/compact", {}, token=d.admin_token)
        assert r.status == 200 and r.json()["pruned_results"] == 2, r
        conn = sqlite3.connect(os.path.join(d.data_dir, "loadlab.db"))
        pruned = conn.execute("SELECT DISTINCT t.job_id FROM results r JOIN tasks t ON t.id = r.task_id"
                              " WHERE r.pruned_at IS NOT NULL").fetchall()
        conn.close()
        assert pruned == [(jobs[0],)], pruned
        assert answers(d, jobs) == before


run_tests(globals())
