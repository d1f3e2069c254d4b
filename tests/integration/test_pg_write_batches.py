"""Issue 38: the PostgreSQL writer's batches (server/store/pg/pg_write.c,
pg_pipeline.c) between replicas and when one of their statements fails.

1. Results of two jobs posted at once through two replicas (each agent
   posts both at once, one replica's agents job 1's a moment first, the
   other's job 2's), never
   deadlock: each batch refreshes its jobs' states just before its commit,
   the jobs' rows locked in id order (db_before_commit()). Before, each
   result locked its job's row as it came, and the two replicas' batches
   locked the two jobs in opposite orders (PostgreSQL's deadlocks counter
   grew; each deadlock cost deadlock_timeout, 1 s). Every result is
   stored once and every job ends done.
2. A write whose queued statement fails changes nothing, and in a batch
   fails only for itself: a trigger makes the result's UPDATE of its
   attempt (a statement the pipeline queues without waiting, its failure
   seen at the next read or the COMMIT) fail for one task; that result
   is refused (503) and leaves its task leased with no result row, while
   the results posted with it in the same batches are stored. Once the
   trigger is gone the same result is stored.
"""
import threading
import time

from harness import run_tests
from test_pg_speed import AGENTS, job_body, replicas, result_body

ROUNDS = 4
LONG_LEASES = ["--lease-seconds", "600"]


def deadlocks(d):
    return int(d.sql("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")[0][0])


def lease_both(d, token):
    """Leases the agent's two tasks (job 1's, then job 2's): {job_id: lease}."""
    leases = {}
    for _ in range(2):
        r = d.api("POST", "/api/v1/lease", {"wait": 5}, token=token)
        assert r.status == 200, r
        leases[r.json()["job_id"]] = r.json()
    return leases


def test_results_of_two_jobs_through_two_replicas_never_deadlock():
    a, b = replicas(2, LONG_LEASES)
    try:
        agents = [(a if i % 2 == 0 else b, a.enroll("a%d" % i, {"os": "win10", "g": "v%d" % i}))
                  for i in range(AGENTS)]
        before = deadlocks(a)
        for round_ in range(ROUNDS):
            jobs = [a.submit(job_body("r%d-j%d" % (round_, k)))["id"] for k in range(2)]
            leases = [lease_both(d, token) for d, (_, token) in agents]
            errors, start = [], threading.Barrier(2 * AGENTS)

            def report(index, job_id):
                d, (_, token) = agents[index]
                lease = leases[index][job_id]
                start.wait()
                if job_id != (jobs[0] if d is a else jobs[1]):
                    time.sleep(0.005)  # job 1's first on A, job 2's first on B
                r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], result_body(lease["attempt"]),
                          token=token)
                if r.status != 200:
                    errors.append(r)

            threads = [threading.Thread(target=report, args=(i, job_id)) for i in range(AGENTS) for job_id in jobs]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            assert not errors, errors[:3]
            for job_id in jobs:
                assert a.job(job_id)["state"] == "done"
                assert b.job(job_id)["state"] == "done"
        rows = a.sql("SELECT count(*), count(DISTINCT task_id) FROM results")
        assert rows == [[str(2 * AGENTS * ROUNDS)] * 2], rows
        found = deadlocks(a) - before
        print("%d rounds of %d results through two replicas: %d deadlocks (asserted 0)" %
              (ROUNDS, 2 * AGENTS, found), flush=True)
        assert found == 0, found
    finally:
        a.close()
        b.close()


def test_a_queued_statement_that_fails_fails_its_write_alone():
    (d,) = replicas(1, LONG_LEASES)
    try:
        agents = [d.enroll("a%d" % i, {"os": "win10", "g": "v%d" % i}) for i in range(AGENTS)]
        job_id = d.submit(job_body("failing"))["id"]
        leases = []
        for _, token in agents:
            r = d.api("POST", "/api/v1/lease", {"wait": 5}, token=token)
            assert r.status == 200, r
            leases.append(r.json())
        doomed = leases[AGENTS // 2]["task_id"]
        d.sql("CREATE FUNCTION refuse_attempt() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
              " IF NEW.task_id = %d AND NEW.outcome = 'done' THEN RAISE EXCEPTION 'refused by the test'; END IF;"
              " RETURN NEW; END $$" % doomed)
        d.sql("CREATE TRIGGER refuse_attempt BEFORE UPDATE ON task_attempts FOR EACH ROW"
              " EXECUTE FUNCTION refuse_attempt()")
        answers, start = {}, threading.Barrier(AGENTS)

        def report(index):
            lease, token = leases[index], agents[index][1]
            start.wait()
            answers[lease["task_id"]] = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"],
                                              result_body(lease["attempt"]), token=token)

        threads = [threading.Thread(target=report, args=(i,)) for i in range(AGENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert answers[doomed].status == 503, answers[doomed]
        assert all(r.status == 200 for task_id, r in answers.items() if task_id != doomed), answers
        rows = d.sql("SELECT t.id, t.state, count(r.id) FROM tasks t LEFT JOIN results r ON r.task_id = t.id"
                     " WHERE t.job_id = %d GROUP BY t.id, t.state ORDER BY t.id" % job_id)
        for task_id, state, results in rows:
            expected = ["leased", "0"] if int(task_id) == doomed else ["done", "1"]
            assert [state, results] == expected, (task_id, state, results)
        assert d.sql("SELECT outcome IS NULL FROM task_attempts WHERE task_id = %d" % doomed) == [["t"]]
        assert d.job(job_id)["state"] == "running"

        d.sql("DROP TRIGGER refuse_attempt ON task_attempts")
        lease = leases[AGENTS // 2]
        r = d.api("POST", "/api/v1/tasks/%d/result" % doomed, result_body(lease["attempt"]),
                  token=agents[AGENTS // 2][1])
        assert r.status == 200, r
        assert d.job(job_id)["state"] == "done"
    finally:
        d.close()


if __name__ == "__main__":
    run_tests(globals())
