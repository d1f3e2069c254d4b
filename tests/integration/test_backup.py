"""loadlabd backup and restore (docs/operations.md): a backup taken while
200 agents post results restores to a store that passes PRAGMA
integrity_check and holds every result acknowledged before the backup
began, with its blobs; a damaged backup or an occupied target is refused
and changes nothing."""
import hashlib
import os
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time

from harness import LOADLABD, Daemon, request, run_tests, start_threads, wait_count

AGENTS = 200
JOBS = 12  # each one task per agent: 2,400 results


def run(*args):
    return subprocess.run([LOADLABD] + list(args), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300)


def put_blob(d, content):
    hex_name = hashlib.sha256(content).hexdigest()
    r = d.api("PUT", "/api/v1/blobs/" + hex_name, content, token=d.admin_token,
              headers={"Content-Type": "application/octet-stream"})
    assert r.status in (200, 201), r
    return hex_name


def blob_file(root, hex_name):
    return os.path.join(root, hex_name[:2], hex_name[2:])


def test_backup_during_200_agents_restores_every_acknowledged_result():
    work = tempfile.mkdtemp(prefix="loadlab-backup-")
    d = Daemon().start()
    try:
        blobs = [put_blob(d, b"blob %d\n" % i * 1000) for i in range(3)]
        tokens = [d.enroll("agent%d" % i)[1] for i in range(AGENTS)]
        for i in range(JOBS):
            d.submit({"name": "b%d" % i, "family": "pe", "generator": {"dlls": 1, "exports": 1},
                      "variants": ["default"], "matrix": {"each_agent": {}}})
        acknowledged = []  # (time the 200 arrived, task id, result id)
        refused = []
        lock = threading.Lock()
        stop = threading.Event()

        def agent(token):
            while not stop.is_set():
                r = request(d.url + "/api/v1/lease", "POST", {"wait": 0}, token, timeout=60)
                if r.status != 200:
                    return
                t = r.json()
                body = {"attempt": t["attempt"], "facts": {"os": "test"},
                        "variants": [{"name": "default",
                                      "warm": {"samples_us": [100 + t["task_id"] % 7, 101, 102]}}]}
                r = request(d.url + "/api/v1/tasks/%d/result" % t["task_id"], "POST", body, token,
                            timeout=60)
                with lock:
                    if r.status == 200:
                        acknowledged.append((time.monotonic(), t["task_id"], r.json()["result_id"]))
                    else:
                        refused.append(r)

        threads = start_threads(agent, tokens)
        deadline = time.time() + 120
        wait_count(acknowledged, lock, 300, deadline)
        backup = os.path.join(work, "loadlab-backup.db")
        began = time.monotonic()
        with lock:
            before = [(task, result) for when, task, result in acknowledged if when < began]
        out = run("backup", "--data-dir", d.data_dir, "--to", backup)
        wait_count(acknowledged, lock, len(before) + 101, deadline)  # the stream goes on after the backup
        stop.set()
        for th in threads:
            th.join(120)
        assert out.returncode == 0, out.stderr
        assert "integrity_check ok" in out.stdout and "blobs: 3 copied" in out.stdout, out.stdout
        assert not refused, refused[:3]
        assert len(before) >= 300 and len(acknowledged) > len(before) + 100, len(acknowledged)
        print("    %d results acknowledged before the backup, %d after it began"
              % (len(before), len(acknowledged) - len(before)))

        # The backup file alone is a store that passes the check.
        conn = sqlite3.connect(backup)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        conn.close()
        assert not os.path.exists(backup + ".partial")

        # Restored into a new folder: every result acknowledged before the
        # backup began, the same bytes; the blobs with their digests.
        target = os.path.join(work, "restored")
        out = run("restore", "--from", backup, "--data-dir", target)
        assert out.returncode == 0, out.stderr
        assert "integrity_check ok" in out.stdout and "blobs: 3 copied" in out.stdout, out.stdout
        db = os.path.join(target, "loadlab.db")
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = dict(conn.execute("SELECT id, task_id FROM results").fetchall())
        conn.close()
        for task_id, result_id in before:
            assert stored.get(result_id) == task_id, (task_id, result_id)
        for hex_name in blobs:
            with open(blob_file(os.path.join(target, "blobs"), hex_name), "rb") as f:
                assert hashlib.sha256(f.read()).hexdigest() == hex_name

        # The restored store runs: its reports are the original's.
        result_id = before[0][1]
        original = d.api("GET", "/api/v1/results/%d" % result_id, token=d.admin_token)
        with open(os.path.join(d.data_dir, "admin.token")) as f:
            admin = f.read().strip()
        shutil.copy(os.path.join(d.data_dir, "admin.token"), os.path.join(target, "admin.token"))
        d.stop()
        r2 = Daemon(data_dir=target).start()
        try:
            copy = r2.api("GET", "/api/v1/results/%d" % result_id, token=admin)
            assert copy.status == 200 and copy.body == original.body, (copy, original)
            r = r2.api("HEAD", "/api/v1/blobs/" + blobs[0], token=admin)
            assert r.status == 200, r
        finally:
            r2.stop()
    finally:
        d.close()
        shutil.rmtree(work, ignore_errors=True)


def test_bad_backups_and_targets_change_nothing():
    work = tempfile.mkdtemp(prefix="loadlab-backup-")
    d = Daemon().start()
    try:
        hex_name = put_blob(d, b"some program bytes\n" * 100)
        backup = os.path.join(work, "b.db")
        assert run("backup", "--data-dir", d.data_dir, "--to", backup).returncode == 0

        # An existing file is never replaced.
        out = run("backup", "--data-dir", d.data_dir, "--to", backup)
        assert out.returncode == 1 and "exists already" in out.stderr, out
        # Bad arguments: exit 2, nothing written.
        for args in (["backup"], ["backup", "--to"], ["backup", "--to", backup + "2", "--x", "1"],
                     ["restore", "--from", backup]):
            out = run(*args)
            assert out.returncode == 2 and "usage:" in out.stderr, (args, out)
        assert not os.path.exists(backup + "2")

        # A target folder that holds a store already: refused, untouched.
        out = run("restore", "--from", backup, "--data-dir", d.data_dir)
        assert out.returncode == 1 and "exists already" in out.stderr, out

        # A damaged blob: the restore fails and leaves no store behind.
        with open(blob_file(backup + ".blobs", hex_name), "r+b") as f:
            f.write(b"X")
        target = os.path.join(work, "r1")
        out = run("restore", "--from", backup, "--data-dir", target)
        assert out.returncode == 1 and "damaged" in out.stderr, out
        assert not os.path.exists(os.path.join(target, "loadlab.db"))

        # A damaged store file: refused before anything is written.
        broken = os.path.join(work, "broken.db")
        with open(backup, "rb") as f:
            data = bytearray(f.read())
        data[4096:] = b"\xff" * (len(data) - 4096)  # every page after the first
        with open(broken, "wb") as f:
            f.write(data)
        target = os.path.join(work, "r2")
        out = run("restore", "--from", broken, "--data-dir", target)
        assert out.returncode == 1, out
        assert not os.path.exists(os.path.join(target, "loadlab.db"))
        # Not a store at all.
        with open(broken, "wb") as f:
            f.write(b"not a database" * 100)
        out = run("restore", "--from", broken, "--data-dir", target)
        assert out.returncode == 1 and not os.path.exists(os.path.join(target, "loadlab.db")), out
    finally:
        d.close()
        shutil.rmtree(work, ignore_errors=True)


run_tests(globals())
