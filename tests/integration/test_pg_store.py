"""The PostgreSQL store (server/store/pg) on a cluster of this test's own
(pg_cluster.py): what only it has. A database that goes away answers
503 with Retry-After and the daemon recovers by itself; several daemons
share one database (one migration, no task leased twice, a stale holder
gets 409 from any replica); the URI's forms and the pool's option."""
import os
import subprocess
import threading

import pg_cluster
from harness import LOADLABD, Daemon, park_lease, run_tests, wait_for

JOB = {"name": "pg", "family": "pe", "generator": {"dlls": 2, "exports": 3}, "variants": ["default"]}


def cluster():
    return pg_cluster.shared()


def pg_daemon(database=None, scheme="postgresql", extra=()):
    c = cluster()
    uri = c.uri(database or c.create_database())
    if scheme != "postgresql":
        uri = scheme + uri[len("postgresql"):]
    return Daemon(extra_args=["--db", uri] + list(extra))


def result_body(attempt):
    return {"attempt": attempt, "facts": {"os": "win10"},
            "variants": [{"name": "default", "warm": {"samples_us": [1000, 1010, 990]}}]}


def test_outage_answers_503_with_retry_after_then_recovers():
    c = cluster()
    with pg_daemon() as d:
        assert d.api("GET", "/api/v1/jobs", token=d.admin_token).status == 200
        c._run([os.path.join(pg_cluster.PG_BIN, "pg_ctl"), "-D", c.data, "-m", "fast", "-w", "stop"])
        try:
            for path in ("/api/v1/jobs", "/api/v1/agents"):
                r = d.api("GET", path, token=d.admin_token, timeout=30)
                assert r.status == 503, r
                assert r.headers.get("Retry-After") == "5", r.headers
            r = d.api("POST", "/api/v1/jobs", JOB, token=d.admin_token, timeout=30)
            assert r.status == 503, r
            assert d.proc.poll() is None  # no crash
        finally:
            c.restart()
        # Back by itself, once its backoff has passed.
        wait_for("the daemon to reach the database again",
                 lambda: d.api("GET", "/api/v1/jobs", token=d.admin_token).status == 200, timeout=30)
        r = d.api("POST", "/api/v1/jobs", JOB, token=d.admin_token)
        assert r.status in (200, 201), r


def test_two_replicas_share_one_database():
    c = cluster()
    db = c.create_database()
    a = pg_daemon(db)
    b = pg_daemon(db)
    # Started at once: one migrates under the advisory lock, the other waits.
    threads = [threading.Thread(target=x.start) for x in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert c.psql(db, "SELECT version FROM schema_version") == [["15"]]
        # A replica that found no admin token made one (both may, started
        # at once); the tokens work on both.
        # Each kind is made by whichever replica found none: the admin
        # token may be one's and the enrollment token the other's.
        made = [x for x in (a, b) if x.admin_token]
        enrolls = [x.enroll_token for x in (a, b) if x.enroll_token]
        assert made and enrolls, [(x.admin_token, x.enroll_token) for x in (a, b)]
        for x in (a, b):
            x.admin_token, x.enroll_token = made[0].admin_token, enrolls[0]
            assert x.api("GET", "/api/v1/jobs", token=x.admin_token).status == 200
        agents = [(a if i % 2 else b).enroll("agent-%d" % i, {"os": "win10"}) for i in range(6)]
        jobs = [a.api("POST", "/api/v1/jobs", JOB, token=a.admin_token).json()["id"] for _ in range(4)]
        jobs += [b.api("POST", "/api/v1/jobs", JOB, token=b.admin_token).json()["id"] for _ in range(4)]
        leases, lock = [], threading.Lock()

        def poll(i, tok):
            d = (a, b)[i % 2]
            while True:
                r = d.api("POST", "/api/v1/lease", {"wait": 0}, token=tok)
                if r.status != 200:
                    assert r.status == 204, r
                    return
                with lock:
                    leases.append((i, r.json()))

        pollers = [threading.Thread(target=poll, args=(i, tok)) for i, (_, tok) in enumerate(agents)]
        for t in pollers:
            t.start()
        for t in pollers:
            t.join()
        task_ids = [lease["task_id"] for _, lease in leases]
        assert len(task_ids) == len(set(task_ids)) == len(jobs), sorted(task_ids)
        # A result through the other replica than the lease's; its replay
        # through the first gets the same answer.
        i, lease = leases[0]
        tok = agents[i][1]
        first, other = (a, b)[i % 2], (b, a)[i % 2]
        r1 = other.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], result_body(lease["attempt"]),
                       token=tok)
        assert r1.status == 200, r1
        r2 = first.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], result_body(lease["attempt"]),
                       token=tok)
        assert r2.status == 200 and r2.body == r1.body, (r1, r2)
        assert first.job(lease["job_id"])["state"] == "done"
        # A stale attempt is refused by either replica.
        for d in (a, b):
            r = d.api("POST", "/api/v1/tasks/%d/progress" % leases[1][1]["task_id"],
                      {"attempt": leases[1][1]["attempt"] + 1, "phase": "warm", "percent": 5},
                      token=agents[leases[1][0]][1])
            assert r.status == 409, r
    finally:
        a.close()
        b.close()


def test_long_poll_on_one_replica_is_woken_by_a_job_through_another():
    c = cluster()
    db = c.create_database()
    with pg_daemon(db) as a:
        b = pg_daemon(db)
        b.start()
        try:
            b.admin_token, b.enroll_token = a.admin_token, a.enroll_token
            _, tok = b.enroll("parked", {"os": "win10"})
            poll, answers = park_lease(b, tok, 30)
            job = a.submit(JOB)
            poll.join(60)
            # Leased within its wait (30 s): B's tick saw the ready task in
            # the shared database (about once a second).
            assert answers and answers[0].status == 200, answers
            assert answers[0].json()["job_id"] == job["id"]
        finally:
            b.close()


def test_concurrent_results_of_one_job_finish_it():
    # Each write runs on its own connection, at once with the others: the
    # job's state is refreshed under its row's lock, so the last result
    # of its tasks, whichever thread has it, sees all of them done.
    with pg_daemon() as d:
        agents = [d.enroll("each-%d" % i, {"os": "win10"}) for i in range(8)]
        job = d.submit(dict(JOB, matrix={"each_agent": {"os": ["win10"]}}))
        assert job["task_count"] == 8, job
        leases = [d.api("POST", "/api/v1/lease", {"wait": 0}, token=tok).json() for _, tok in agents]
        answers = []
        threads = [threading.Thread(target=lambda l=l, tok=tok: answers.append(
            d.api("POST", "/api/v1/tasks/%d/result" % l["task_id"], result_body(l["attempt"]), token=tok)))
            for l, (_, tok) in zip(leases, agents)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [a.status for a in answers] == [200] * 8, answers
        assert d.job(job["id"])["state"] == "done"


def test_uri_forms_and_bad_pool_size():
    c = cluster()
    db = c.create_database()
    with pg_daemon(db, scheme="postgres") as d:
        assert d.api("GET", "/api/v1/jobs", token=d.admin_token).status == 200
    uri = c.uri(db) + "&pool_size=2"
    with Daemon(extra_args=["--db", uri]) as d:
        assert d.api("GET", "/healthz").status == 200
    for bad in ("0", "65", "x"):
        p = subprocess.run([LOADLABD, "--listen", "127.0.0.1:0", "--data-dir", "/nonexistent-x",
                            "--db", c.uri(db) + "&pool_size=" + bad],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        assert p.returncode != 0
        assert b"pool_size" in p.stderr, p.stderr


run_tests(globals())
