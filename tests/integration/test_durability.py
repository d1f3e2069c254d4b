"""kill -9 of the daemon while results are being posted loses no result that
got a 2xx, and the store passes PRAGMA integrity_check after restart."""
import os
import signal
import sqlite3
import threading
import time

from harness import TEST_STORE, Daemon, request, run_tests, start_threads, wait_count

JOBS = 120
AGENTS = 8


def test_kill_9_loses_no_acknowledged_result():
    d = Daemon().start()
    try:
        for i in range(JOBS):
            d.submit({"name": "d%d" % i, "family": "pe", "generator": {"dlls": 1, "exports": 1},
                      "variants": ["default"]})
        tokens = [d.enroll("agent%d" % i)[1] for i in range(AGENTS)]
        acknowledged = []
        lock = threading.Lock()
        stop = threading.Event()
        url = d.url

        def agent(token):
            while not stop.is_set():
                try:
                    r = request(url + "/api/v1/lease", "POST", {}, token, timeout=5)
                    if r.status != 200:
                        return
                    t = r.json()
                    body = {"attempt": t["attempt"], "facts": {"os": "test"},
                            "variants": [{"name": "default", "warm": {"samples_us": [1, 2, 3]}}]}
                    r = request(url + "/api/v1/tasks/%d/result" % t["task_id"], "POST", body,
                                token, timeout=5)
                    if r.status == 200:
                        with lock:
                            acknowledged.append((t["job_id"], t["task_id"], r.json()["result_id"]))
                except OSError:
                    return  # the daemon is gone

        threads = start_threads(agent, tokens)
        # Kill it in the middle of the stream of results.
        wait_count(acknowledged, lock, JOBS // 3, time.time() + 30)
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait()
        stop.set()
        for th in threads:
            th.join(10)
        d.proc.stdout.close()
        d.log.close()
        d.proc = None
        assert JOBS // 3 <= len(acknowledged) < JOBS, len(acknowledged)

        if TEST_STORE == "sqlite":
            db = os.path.join(d.data_dir, "loadlab.db")
            conn = sqlite3.connect(db)
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            conn.close()

        d.start()
        for job_id, task_id, result_id in acknowledged:
            job = d.api("GET", "/api/v1/jobs/%d" % job_id, token=d.admin_token).json()
            task = job["tasks"][0]
            assert task["id"] == task_id and task["state"] == "done", job
            assert task["result_id"] == result_id, job
            assert job["state"] == "done"
        d.stop()
        if TEST_STORE == "sqlite":
            conn = sqlite3.connect(db)
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            conn.close()
        stored = int(d.store_sql("SELECT count(*) FROM results")[0][0])
        assert stored >= len(acknowledged)  # a commit may land without its answer
    finally:
        d.close()


run_tests(globals())
