"""Shared helpers for loadlab's integration tests.

Starts a real loadlabd from this build tree on 127.0.0.1 with port 0, in a
private data directory, and talks to it over real HTTP with the standard
library. Every test file is a plain script: it calls run_tests(globals())
at the bottom, which runs each test_* function and prints
"N passed, N failed".
"""
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request

from schemacheck import validate

SOURCE_DIR = os.environ.get("LOADLAB_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD_DIR = os.environ.get("LOADLAB_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
LOADLABD = os.path.join(BUILD_DIR, "server", "loadlabd")
LOADLAB = os.path.join(BUILD_DIR, "cli", "loadlab")
AGENT = os.path.join(BUILD_DIR, "agent", "loadlab-agent")
SCHEMAS = os.path.join(SOURCE_DIR, "schemas")
EXAMPLES = os.path.join(SCHEMAS, "examples")

# A job's "measure.noise" for tests that judge no timing: keep runs during
# which the machine was busy (flagged, not retaken). make test keeps both
# cores busy, so with the agent's default nearly every run would be taken
# again after a 200 ms pause, up to 10 times per program.
NO_NOISE_RETAKES = {"max_retakes": 0}


def tiny_job(name, family, dlls):
    """A job of FAMILY small enough to finish in a few seconds: DLLS
    generated DLLs of 2 exports, the default variant only, 3 warm runs
    without warmup, no retakes (it judges no timing)."""
    return {"name": name, "family": family, "generator": {"dlls": dlls, "exports": 2},
            "variants": ["default"],
            "measure": {"warm": {"runs": 3, "warmup": 0}, "noise": NO_NOISE_RETAKES}}

# LOADLAB_TEST_STORE=postgresql: every Daemon's store is a database of its
# own in one PostgreSQL cluster of this process (pg_cluster.py), one per
# data folder, so that a daemon started again on it finds its store.
TEST_STORE = os.environ.get("LOADLAB_TEST_STORE", "sqlite")
_PG_DATABASES = {}


def sqlite_only(fn):
    """Marks a test of SQLite's own files, which run_tests() passes over
    on PostgreSQL."""
    fn.sqlite_only = True
    return fn


SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body) if self.body else None

    def __repr__(self):
        return "Response(%d, %r)" % (self.status, self.body[:300])


def request(url, method="GET", body=None, token=None, headers=None, timeout=30):
    """One HTTP request; returns a Response for every status (no raising)."""
    data = None
    hdrs = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, (bytes, bytearray)) else json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    if token:
        hdrs["Authorization"] = "Bearer " + token
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Response(r.status, dict(r.headers), r.read())
    except urllib.error.HTTPError as e:
        return Response(e.code, dict(e.headers), e.read())


class Daemon:
    """A loadlabd process on 127.0.0.1:0 with its own data directory.

    extra_args are passed on the command line; env adds to the environment.
    The admin and enrollment tokens are read from the files the daemon
    writes on first start. Unless shared_build, a pe or elf job that does
    not say "build" builds on each agent (--each-agent-build): most tests
    play agents over REST and do not play a builder (docs/builds.md); the
    tests of shared builds (tests/agent/test_shared_build.py) pass
    shared_build=True.
    """

    def __init__(self, extra_args=(), env=None, data_dir=None, shared_build=False):
        self.own_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="loadlabd-test-")
        self.extra_args = list(extra_args) + ([] if shared_build else ["--each-agent-build"])
        self.env = dict(os.environ, **(env or {}))
        self.proc = None
        self.url = None
        self.log_path = os.path.join(self.data_dir, "loadlabd.log")

    def pg_database(self):
        """The PostgreSQL database of this daemon (LOADLAB_TEST_STORE)."""
        import pg_cluster
        key = os.path.abspath(self.data_dir)
        if key not in _PG_DATABASES:
            _PG_DATABASES[key] = pg_cluster.shared().create_database()
        return _PG_DATABASES[key]

    def store_args(self):
        if TEST_STORE != "postgresql" or any(a == "--db" or a.startswith("--db=") for a in self.extra_args):
            return []
        import pg_cluster
        return ["--db", pg_cluster.shared().uri(self.pg_database())]

    def store_sql(self, sql):
        """SQL run on this daemon's store (SQLite's file or PostgreSQL's
        database); its rows (PostgreSQL: as texts)."""
        if TEST_STORE == "postgresql":
            import pg_cluster
            return pg_cluster.shared().psql(self.pg_database(), sql)
        db = sqlite3.connect(os.path.join(self.data_dir, "loadlab.db"))
        try:
            rows = db.execute(sql).fetchall()
            db.commit()
        finally:
            db.close()
        return rows

    def start(self, timeout=30):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [LOADLABD, "--listen", "127.0.0.1:0", "--data-dir", self.data_dir] + self.store_args() +
            self.extra_args,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.log, env=self.env)
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = self.proc.stdout.readline().decode()
            if not line:
                raise RuntimeError("loadlabd exited early; log:\n" + self.read_log())
            if "listening on " in line:
                self.url = line.split("listening on ", 1)[1].strip()
                break
        if not self.url:
            raise RuntimeError("loadlabd did not report its URL")
        self.admin_token = self.read_token("admin.token")
        self.enroll_token = self.read_token("enroll.token")
        return self

    def read_token(self, name):
        path = os.path.join(self.data_dir, name)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return f.read().strip()

    def read_log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def api(self, method, path, body=None, token=None, **kw):
        return request(self.url + path, method, body, token, **kw)

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Stops the daemon with SIG and returns its exit code. Raises when
        the daemon's log holds a sanitizer report (the ASan+UBSan build)."""
        if not self.proc:
            return None
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.proc.stdout.close()
        self.log.close()
        self.proc = None
        log = self.read_log()
        for marker in SANITIZER_MARKERS:
            if marker in log:
                raise AssertionError("loadlabd reported '%s':\n%s" % (marker, log[-4000:]))
        return code

    def restart_without_summaries(self):
        """Stops the daemon, deletes every cached result summary from its
        store and starts it again: its summarizer then queues the stored
        results that have none, oldest first, and reports compute what
        they need on demand."""
        self.stop()
        self.store_sql("DELETE FROM result_summaries")
        return self.start()

    def close(self):
        self.stop()
        if self.own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # Conveniences over the REST API.

    def enroll(self, name, facts=None, labels=None):
        r = self.api("POST", "/api/v1/agents/enroll",
                     {"name": name, "facts": facts or {}, "labels": labels or {}},
                     token=self.enroll_token)
        assert r.status == 201, r
        return r.json()["id"], r.json()["token"]

    def mark_builder(self, agent_id, builder=True):
        """Marks agent AGENT_ID a builder (or unmarks it) with the admin
        token: only a marked agent leases build tasks (docs/builds.md).
        Returns the agent as the PATCH answers it."""
        r = self.api("PATCH", "/api/v1/agents/%d" % agent_id, {"builder": builder},
                     token=self.admin_token)
        assert r.status == 200 and r.json()["builder"] is builder, r
        return r.json()

    def enroll_builder(self, name, facts=None, labels=None):
        """enroll(), then mark_builder(): an agent played over REST that
        builds."""
        agent_id, token = self.enroll(name, facts, labels)
        self.mark_builder(agent_id)
        return agent_id, token

    def mark_builder_named(self, name, timeout=60.0):
        """Waits for a real agent (a loadlab-agent process) named NAME to
        enroll itself, then marks it a builder; returns its id. A builder
        that leased before it was marked got no build: the mark wakes its
        parked lease request."""
        def enrolled():
            agents = self.api("GET", "/api/v1/agents", token=self.admin_token).json()["agents"]
            return next((a["id"] for a in agents if a["name"] == name), None)

        agent_id = wait_for("agent %s enrolled" % name, enrolled, timeout=timeout, interval=0.1)
        self.mark_builder(agent_id)
        return agent_id

    def submit(self, job, token=None):
        r = self.api("POST", "/api/v1/jobs", job, token=token or self.admin_token)
        assert r.status == 201, r
        return r.json()

    def job(self, job_id):
        """GET /api/v1/jobs/ID as the admin: 200 and valid against job.json."""
        r = self.api("GET", "/api/v1/jobs/%d" % job_id, token=self.admin_token)
        assert r.status == 200, r
        validate("job.json", r.json())
        return r.json()


def pids_where(proc_file, match):
    """PIDs of the live processes, this one aside, whose /proc/PID/PROC_FILE
    ("environ", "cmdline"), split at its NUL bytes, MATCH accepts."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/%s" % (pid, proc_file), "rb") as f:
                fields = f.read().split(b"\0")
        except OSError:
            continue
        if match(fields):
            pids.append(int(pid))
    return pids


def kill_processes_under(path):
    """Kills, by PID, every process whose WINEPREFIX lies under PATH: the
    Wine services (services.exe, winedevice.exe, ...) that a test's Wine
    prefix started and that outlive a killed agent or wineserver. Returns
    how many were killed."""
    path = os.path.abspath(path)

    def under(env):
        for entry in env:
            if entry.startswith(b"WINEPREFIX="):
                prefix = os.path.abspath(entry[11:].decode(errors="replace"))
                return prefix == path or prefix.startswith(path + os.sep)
        return False

    killed = 0
    for pid in pids_where("environ", under):
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except OSError:
            pass
    return killed


def free_port():
    """A TCP port of 127.0.0.1 that nothing listens on now (bound and
    closed again): for a server that must be unreachable, or one started
    later on a known port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class BackgroundThread:
    """A context manager around SELF.thread: started on entry; on exit
    SELF.halt() asks it to end, and it is joined."""

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.halt()
        self.thread.join(60)


def start_threads(target, items):
    """One thread per item of ITEMS running TARGET(item), all started: the list."""
    threads = [threading.Thread(target=target, args=(item,)) for item in items]
    for th in threads:
        th.start()
    return threads


def wait_count(items, lock, count, deadline):
    """Waits until the list ITEMS, read under LOCK, holds COUNT items or
    time.time() passes DEADLINE: its length then."""
    while True:
        with lock:
            n = len(items)
        if n >= count or time.time() >= deadline:
            return n
        time.sleep(0.01)


def park_lease(daemon, token, wait):
    """A lease long-poll of TOKEN (its "wait" WAIT seconds) from a thread,
    returned once DAEMON's /metrics count it parked: (the thread, the list
    that gets its answer)."""
    answers = []
    poll = threading.Thread(target=lambda: answers.append(
        daemon.api("POST", "/api/v1/lease", {"wait": wait}, token=token, timeout=60)))
    poll.start()
    wait_for("the poll to park", lambda: "loadlab_long_polls 1" in daemon.api("GET", "/metrics").body.decode())
    return poll, answers


def run_agent_once(daemon, prefix, args=()):
    """Runs loadlab-agent --once against DAEMON (enrolling with its token)
    in a new data directory named after PREFIX, with ARGS before --once;
    asserts it exits 0 within 600 s (its stderr's end as the message), then
    kills what Wine left under the directory and removes it."""
    data_dir = tempfile.mkdtemp(prefix=prefix)
    try:
        r = subprocess.run([AGENT, "--server", daemon.url, "--enroll-token", daemon.enroll_token,
                            "--data-dir", data_dir] + list(args) + ["--once"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
        assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    finally:
        kill_processes_under(data_dir)
        subprocess.run(["rm", "-rf", data_dir])


def stop_process(proc, timeout):
    """Ends PROC (a Popen we started): SIGTERM, then SIGKILL after TIMEOUT
    seconds; waits for it either way."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def agent_calibrate(args, timeout):
    """`loadlab-agent calibrate --out FILE ARGS`, which must exit 0 within
    TIMEOUT seconds: its JSON and its stdout (printed as well)."""
    with tempfile.TemporaryDirectory(prefix="loadlab-calibrate-") as tmp:
        out = os.path.join(tmp, "calibration.json")
        p = subprocess.run([AGENT, "calibrate", "--out", out] + list(args), capture_output=True, text=True,
                           timeout=timeout)
        assert p.returncode == 0, p.stderr
        with open(out) as f:
            report = json.load(f)
    print(p.stdout, end="", flush=True)
    return report, p.stdout


def results_of(daemon, task_id):
    """The results stored for TASK_ID, as (attempt, parsed body) pairs, read
    from DAEMON's database opened read-only."""
    if TEST_STORE == "postgresql":
        rows = daemon.store_sql("SELECT attempt, body FROM results WHERE task_id = %d" % int(task_id))
        return [(int(a), json.loads(b)) for a, b in rows]
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(daemon.data_dir, "loadlab.db"), uri=True)
    try:
        rows = db.execute("SELECT attempt, body FROM results WHERE task_id = ?", (task_id,)).fetchall()
    finally:
        db.close()
    return [(a, json.loads(b)) for a, b in rows]


def wait_for(what, fn, timeout=15.0, interval=0.1):
    """FN's first truthy value, called every INTERVAL seconds; an
    AssertionError "timed out waiting for WHAT" after TIMEOUT seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("timed out waiting for " + what)


def json_lines(path):
    """The lines of the log file at PATH, each parsed as JSON; a line that is
    not JSON as {"event": "text", "line": ...}; [] when there is no file."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, "rb") as f:
        for line in f.read().decode(errors="replace").splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                out.append({"event": "text", "line": line})
    return out


def load_example(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        return json.load(f)


def run_tests(namespace):
    """Runs every test_* function of a module and exits with its verdict."""
    tests = [(n, f) for n, f in sorted(namespace.items())
             if n.startswith("test_") and callable(f)]
    only = sys.argv[1:]
    passed = failed = 0
    for name, fn in tests:
        if only and name not in only:
            continue
        if TEST_STORE != "sqlite" and getattr(fn, "sqlite_only", False):
            print("skip %s (SQLite's files)" % name, flush=True)
            continue
        start = time.time()
        try:
            fn()
            passed += 1
            print("ok   %s (%.1fs)" % (name, time.time() - start), flush=True)
        except Exception:
            failed += 1
            print("FAIL %s" % name, flush=True)
            traceback.print_exc()
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed or not passed else 0)
