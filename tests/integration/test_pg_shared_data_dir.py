"""Issue 28: replicas on one PostgreSQL store that share one --data-dir
(its blobs/ folder). A replica that starts must not remove the temporary
file of an upload another replica is receiving (blob_files.h: each names
its files HOST+PID+START+..., and only the files of a gone process of
this host, or any file untouched for --body-timeout, are removed).
"""
import hashlib
import os
import socket
import time

import pg_cluster
from blob_upload import raw_put, read_answer
from harness import Daemon, run_tests

BLOBS = "/api/v1/blobs/"
BODY_TIMEOUT = 120


def sha(data):
    return hashlib.sha256(data).hexdigest()


def tmp_files(d):
    return sorted(os.listdir(os.path.join(d.data_dir, "blobs", "tmp")))


def test_a_replica_starting_keeps_the_others_uploads():
    cluster = pg_cluster.shared()
    args = ["--db", cluster.uri(cluster.create_database()), "--body-timeout", str(BODY_TIMEOUT)]
    a = Daemon(extra_args=args).start()
    b = Daemon(extra_args=args, data_dir=a.data_dir)
    try:
        tmp = os.path.join(a.data_dir, "blobs", "tmp")
        # Another host's files: one written just now (an upload there), one
        # untouched for longer than any body may take (a crash there).
        fresh = os.path.join(tmp, "otherhost+4242+1+" + "a" * 64 + ".Fresh1")
        stale = os.path.join(tmp, "otherhost+4243+1+" + "b" * 64 + ".Stale1")
        old_format = os.path.join(tmp, "c" * 64 + ".Old123")  # no owner: by its age only
        for path in (fresh, stale, old_format):
            with open(path, "wb") as f:
                f.write(b"partial")
        past = time.time() - BODY_TIMEOUT - 60
        os.utime(stale, (past, past))

        data = os.urandom(2 << 20)
        s = raw_put(a, sha(data), len(data), data[:len(data) // 2])
        deadline = time.time() + 10
        while time.time() < deadline and len(tmp_files(a)) < 4:
            time.sleep(0.05)
        mine = [f for f in tmp_files(a) if sha(data) in f]
        assert len(mine) == 1, tmp_files(a)
        assert mine[0].startswith("%s+%d+" % (socket.gethostname(), a.proc.pid)), mine

        b.start()  # opens the same blobs/ folder
        left = tmp_files(a)
        print("blobs/tmp after replica B's start: %s" % left, flush=True)
        assert mine[0] in left, left
        assert os.path.basename(fresh) in left, left
        assert os.path.basename(stale) not in left, left
        assert os.path.basename(old_format) in left, left  # written just now

        s.sendall(data[len(data) // 2:])
        assert read_answer(s) == 201
        s.close()
        got = b.api("HEAD", BLOBS + sha(data), token=a.admin_token)
        assert got.status == 200 and int(got.headers["Content-Length"]) == len(data), got
        assert mine[0] not in tmp_files(a), tmp_files(a)
    finally:
        if b.proc:
            b.close()
        a.close()


run_tests(globals())
