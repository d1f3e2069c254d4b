"""A full disk loses nothing acknowledged (docs/operations.md): the data
folder on a 64 MiB tmpfs of its own is filled while agents post results;
every refused write gets 507 storage_full with Retry-After, reads and
/healthz (saying "storage full") keep answering, no acknowledged result is
lost, and once space is freed new results are accepted without a restart.
Needs root (mount); without it the test says so and fails."""
import hashlib
import os
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time

from harness import Daemon, request, run_tests, wait_for

AGENTS = 8
JOBS = 60  # one task per agent each: 480 tasks, more than the disk holds


def result_body(attempt, task_id):
    # About 14 KB of JSON: the disk fills within a few thousand results.
    return {"attempt": attempt, "facts": {"os": "test"},
            "variants": [{"name": "default",
                          "warm": {"samples_us": [1000 + (task_id * 7 + i) % 97 for i in range(2000)]}}]}


def is_storage_full(r):
    try:
        code = r.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return False
    return r.status == 507 and code == "storage_full" and r.headers.get("Retry-After") == "30"


def fill(path):
    """Writes PATH until the file system refuses (ENOSPC)."""
    chunk = b"\0" * (1 << 16)
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError as e:
            assert e.errno == 28, e  # ENOSPC


def test_full_disk_refuses_writes_with_507_and_recovers_when_freed():
    assert os.geteuid() == 0, "mounting a tmpfs needs root"
    work = tempfile.mkdtemp(prefix="loadlab-full-")
    mount = os.path.join(work, "mnt")
    os.mkdir(mount)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m,mode=0700", "tmpfs", mount], check=True)
    d = None
    try:
        data_dir = os.path.join(mount, "data")
        d = Daemon(["--min-free-bytes", str(2 << 20), "--lease-seconds", "3600"], data_dir=data_dir)
        d.log_path = os.path.join(work, "loadlabd.log")  # the log is not on the full disk
        d.start()
        tokens = [d.enroll("agent%d" % i)[1] for i in range(AGENTS)]
        jobs = [d.submit({"name": "f%d" % i, "family": "pe", "generator": {"dlls": 1, "exports": 1},
                          "variants": ["default"], "matrix": {"each_agent": {}}})["id"]
                for i in range(JOBS)]
        acknowledged = {}  # result id -> task id
        refused = []       # every answer to a write that was not a success
        resets = []        # connections reset before an answer (tried again)
        lock = threading.Lock()
        stop = threading.Event()

        def agent(token):
            # A connection the daemon reset is tried again, as a real agent
            # does (its spool); every answer is judged below.
            while not stop.is_set():
                try:
                    agent_loop(token)
                    return
                except (ConnectionError, OSError) as e:
                    with lock:
                        resets.append(repr(e))
                    time.sleep(0.2)

        def agent_loop(token):
            pending = None
            while not stop.is_set():
                if pending is None:
                    r = request(d.url + "/api/v1/lease", "POST", {"wait": 0}, token, timeout=60)
                    if r.status == 204:
                        time.sleep(0.2)
                        continue
                    if r.status != 200:
                        with lock:
                            refused.append(("lease", r))
                        time.sleep(0.2)
                        continue
                    t = r.json()
                    pending = (t["task_id"], result_body(t["attempt"], t["task_id"]))
                r = request(d.url + "/api/v1/tasks/%d/result" % pending[0], "POST", pending[1], token,
                            timeout=60)
                with lock:
                    if r.status == 200:
                        acknowledged[r.json()["result_id"]] = pending[0]
                        pending = None
                    else:
                        refused.append(("result", r))
                if pending is not None:
                    time.sleep(0.2)  # kept, as an agent keeps it in its spool, and sent again

        threads = [threading.Thread(target=agent, args=(t,)) for t in tokens]
        for th in threads:
            th.start()
        wait_for("results before the disk fills", lambda: len(acknowledged) >= 40, timeout=120)

        # The disk fills during the stream.
        filler = os.path.join(mount, "filler")
        fill(filler)
        wait_for("results refused", lambda: sum(1 for k, _ in refused if k == "result") >= 5,
                 timeout=120)
        with lock:
            acked_while_full = dict(acknowledged)

        # Every write now: 507 storage_full; reads and /healthz answer.
        r = d.api("GET", "/healthz")
        assert r.status == 503 and r.json()["store"] == "storage full" and r.json()["disk"] == "full", r
        content = b"x" * 10000
        r = d.api("PUT", "/api/v1/blobs/" + hashlib.sha256(content).hexdigest(), content,
                  token=d.admin_token, headers={"Content-Type": "application/octet-stream"})
        assert is_storage_full(r), r
        r = d.api("POST", "/api/v1/jobs", {"name": "late", "family": "pe",
                                           "generator": {"dlls": 1, "exports": 1},
                                           "variants": ["default"]}, token=d.admin_token)
        assert is_storage_full(r), r
        some_result = next(iter(acked_while_full))
        assert d.api("GET", "/api/v1/results/%d" % some_result, token=d.admin_token).status == 200
        assert d.api("GET", "/api/v1/jobs/%d" % jobs[0], token=d.admin_token).status == 200
        assert d.api("GET", "/api/v1/jobs/%d/report" % jobs[0], token=d.admin_token).status == 200
        metrics = d.api("GET", "/metrics").body.decode()
        assert "loadlab_storage_full_refusals_total 0\n" not in metrics
        assert d.proc.poll() is None

        # Space freed: the daemon takes writes again, without a restart.
        os.unlink(filler)
        wait_for("/healthz ok", lambda: d.api("GET", "/healthz").status == 200, timeout=60)
        wait_for("new results accepted", lambda: len(acknowledged) >= len(acked_while_full) + 40,
                 timeout=120)
        r = d.api("POST", "/api/v1/jobs", {"name": "later", "family": "pe",
                                           "generator": {"dlls": 1, "exports": 1},
                                           "variants": ["default"]}, token=d.admin_token)
        assert r.status == 201, r
        stop.set()
        for th in threads:
            th.join(120)

        with lock:
            bad = [(kind, r) for kind, r in refused if not is_storage_full(r)]
            assert not bad, bad[:5]
            print("    %d results acknowledged, %d writes refused with 507 storage_full, %d connections reset"
                  % (len(acknowledged), len(refused), len(resets)))
        assert d.stop() == 0
        conn = sqlite3.connect(os.path.join(data_dir, "loadlab.db"))
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = dict(conn.execute("SELECT id, task_id FROM results").fetchall())
        conn.close()
        for result_id, task_id in acknowledged.items():
            assert stored.get(result_id) == task_id, (result_id, task_id)
    finally:
        if d:
            d.stop()
        subprocess.run(["umount", mount], check=False)
        shutil.rmtree(work, ignore_errors=True)


run_tests(globals())
