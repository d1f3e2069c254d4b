"""The Linux loadlab-agent against a hostile or broken server.

The server here is a fake written in Python (http.server on 127.0.0.1,
port 0) that answers each route as a test says: immediate 204s to every
lease (with and without Retry-After), an enroll answer whose token is not a
token, 200 leases that are not tasks, and leases whose task ids and jobs
try to reach outside the agent's work folder. The agent trusts nothing the
server sends (DESIGN.md): it backs off, refuses before writing, and logs a
reason for every malformed answer (docs/agent.md, "Backoff" and "What the
agent refuses").
"""
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402

AGENT = os.path.join(harness.BUILD_DIR, "agent", "loadlab-agent")
GOOD_TOKEN = "llagt_" + "ab" * 32


class FakeServer(harness.BackgroundThread):
    """ANSWER(method, path, body) -> (status, headers, body bytes); every
    request is recorded as (monotonic time, method, path, body)."""

    def __init__(self, answer):
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_one(self, method):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                server.requests.append((time.monotonic(), method, self.path, body))
                status, headers, out = answer(method, self.path, body)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if status != 204:
                    self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                if status != 204:
                    self.wfile.write(out)

            def do_POST(self):
                self.handle_one("POST")

            def do_GET(self):
                self.handle_one("GET")

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def halt(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def paths(self, path):
        return [r for r in self.requests if r[2] == path]


def wait_until(condition, timeout, interval=0.1):
    """Polls CONDITION until it holds or TIMEOUT seconds pass; the caller
    asserts what it needs afterwards."""
    deadline = time.time() + timeout
    while time.time() < deadline and not condition():
        time.sleep(interval)


def json_answer(status, obj, headers=None):
    return status, dict(headers or {}, **{"Content-Type": "application/json"}), \
        json.dumps(obj).encode()


class Agent:
    """The agent in a sandbox: ROOT holds its data folder (two levels down)
    and its log, so a write anywhere else under ROOT is seen."""

    def __init__(self, url, enrolled=True, extra=()):
        self.root = tempfile.mkdtemp(prefix="loadlab-hostile-")
        self.data_dir = os.path.join(self.root, "a", "data")
        os.makedirs(self.data_dir)
        if enrolled:
            with open(os.path.join(self.data_dir, "agent.json"), "w") as f:
                json.dump({"id": 5, "token": GOOD_TOKEN}, f)
        self.log_path = os.path.join(self.root, "agent.log")
        self.log = open(self.log_path, "wb")
        args = [AGENT, "--server", url, "--data-dir", self.data_dir, "--log-format", "json",
                "--enroll-token", "llenr_" + "0" * 64] + list(extra)
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=self.log)

    def text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def events(self, name=None):
        out = []
        for line in self.text().splitlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if name is None or e.get("event") == name:
                out.append(e)
        return out

    def stop(self, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout)
        self.log.close()
        return code

    def files(self):
        """Every path under ROOT, relative to it, the log aside."""
        out = set()
        for base, dirs, names in os.walk(self.root):
            for n in dirs + names:
                out.add(os.path.relpath(os.path.join(base, n), self.root))
        out.discard("agent.log")
        return out

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self.log.closed:
            self.log.close()
        for marker in harness.SANITIZER_MARKERS:
            assert marker not in self.text(), self.text()[-4000:]
        shutil.rmtree(self.root, ignore_errors=True)


def immediate_204s_are_backed_off():
    """A server that answers every lease at once with 204 (as a full
    loadlabd would without its Retry-After) is not polled in a loop."""
    with FakeServer(lambda m, p, b: (204, {}, b"")) as s:
        a = Agent(s.url)
        try:
            time.sleep(5)
            polls = len(s.paths("/api/v1/lease"))
            assert a.stop() == 0, a.text()
            # 0.5 s doubling with +-25 % jitter: about 4 polls in 5 s
            # (it was thousands a second).
            assert 2 <= polls < 20, (polls, a.text())
            times = [r[0] for r in s.paths("/api/v1/lease")]
            gaps = [b - a_ for a_, b in zip(times, times[1:])]
            assert all(g >= 0.3 for g in gaps), gaps
            # The delay grows: the last gap is longer than the first.
            assert gaps[-1] > gaps[0], gaps
            assert a.events("agent_stopped"), a.text()
        finally:
            a.close()


def retry_after_is_honoured():
    """A 204 with Retry-After: 3 (loadlabd's answer when its long polls are
    all taken) is followed by at least 3 s of quiet."""
    with FakeServer(lambda m, p, b: (204, {"Retry-After": "3"}, b"")) as s:
        a = Agent(s.url)
        try:
            time.sleep(7)
            assert a.stop() == 0, a.text()
            times = [r[0] for r in s.paths("/api/v1/lease")]
            assert 2 <= len(times) <= 3, (times, a.text())
            gaps = [b - a_ for a_, b in zip(times, times[1:])]
            assert all(g >= 2.9 for g in gaps), gaps
        finally:
            a.close()


def a_full_long_poll_is_not_backed_off():
    """A 204 after most of the wait is the normal idle answer: the agent
    polls again at once (the backoff is for answers cut short)."""
    def answer(m, p, b):
        if p == "/api/v1/lease":
            time.sleep(10.5)  # more than half of the agent's 20 s wait
        return 204, {}, b""

    with FakeServer(answer) as s:
        a = Agent(s.url)
        try:
            wait_until(lambda: len(s.paths("/api/v1/lease")) >= 2, 30)
            times = [r[0] for r in s.paths("/api/v1/lease")]
            assert len(times) >= 2, a.text()
            assert times[1] - times[0] < 11.0, times  # 10.5 s of poll, no added delay
        finally:
            a.stop()
            a.close()


def test_backoff_short_204s_retry_after_and_full_long_polls():
    """The three backoff checks above at once, each with its own fake
    server and agent: they wait on the agent's delays (5, 7 and 21 s), not
    on the CPU, and every assertion of each is its own."""
    failures = []

    def run(check):
        try:
            check()
        except Exception:  # reported below with its traceback
            failures.append((check.__name__, traceback.format_exc()))

    checks = [immediate_204s_are_backed_off, retry_after_is_honoured, a_full_long_poll_is_not_backed_off]
    for th in harness.start_threads(run, checks):
        th.join()
    assert not failures, "\n".join("%s:\n%s" % f for f in failures)


HOSTILE_ENROLLS = [
    ("control characters", {"id": 3, "token": "llagt_" + "0" * 60 + "\x1b[2J"}),
    ("a newline", {"id": 3, "token": "llagt_" + "0" * 63 + "\n"}),
    ("too long", {"id": 3, "token": "llagt_" + "0" * 65}),
    ("not an agent token", {"id": 3, "token": "../../../etc/passwd"}),
    ("no id", {"token": GOOD_TOKEN}),
]


def test_hostile_enroll_answer_is_refused_before_anything_is_written():
    for what, body in HOSTILE_ENROLLS + [("not JSON", None)]:
        def answer(m, p, b, body=body):
            if p == "/api/v1/agents/enroll":
                if body is None:
                    return 201, {"Content-Type": "text/html"}, b"<html>\x07hello</html>"
                return json_answer(201, body)
            return 204, {}, b""

        with FakeServer(answer) as s:
            a = Agent(s.url, enrolled=False)
            try:
                code = a.proc.wait(60)
                a.log.close()
                text = a.text()
                assert code == 2, (what, code, text)
                assert not os.path.exists(os.path.join(a.data_dir, "agent.json")), what
                assert not s.paths("/api/v1/lease"), what
                last = text.strip().splitlines()[-1]
                assert last.startswith("loadlab-agent: The server's answer to the enrollment"), \
                    (what, last)
                assert "nothing was saved" in last, (what, last)
                expected = ("not a JSON object" if body is None else
                            "no agent id" if "id" not in body else "llagt_ and 64 hex digits")
                assert expected in last, (what, last)
                # The message is one printable line: no escape reached the terminal.
                assert "\x1b" not in text and "\x07" not in text, (what, repr(text))
            finally:
                a.close()


def test_non_task_lease_is_logged_with_its_reason():
    answers = [
        (200, {"Content-Type": "text/html"}, b"<html>oops</html>"),
        json_answer(200, {"hello": "world"}),
        json_answer(200, {"task_id": "../../7", "attempt": 1}),
    ]

    def answer(m, p, b):
        if p == "/api/v1/lease":
            n = len(s.paths(p)) - 1
            return answers[n] if n < len(answers) else (204, {}, b"")
        return json_answer(404, {"error": {"code": "not_found", "message": "no"}})

    with FakeServer(answer) as s:
        a = Agent(s.url)
        try:
            wait_until(lambda: len(a.events("lease_malformed")) >= 3, 20)
            events = a.events("lease_malformed")
            assert len(events) >= 3, a.text()
            reasons = [e["reason"] for e in events]
            assert "(HTTP 200) is not a JSON object: <html>oops</html>" in reasons[0], reasons
            assert "(HTTP 200) has no task_id" in reasons[1], reasons
            assert "has no task_id" in reasons[2] and "../../7" in reasons[2], reasons
            assert not a.events("server_unreachable"), a.text()
            # Nothing was run or reported for them.
            assert not [r for r in s.requests if r[2].startswith("/api/v1/tasks/")], s.requests
            assert a.stop() == 0
            assert a.files() <= {"a", "a/data", "a/data/agent.json", "a/data/work",
                                 "a/data/spool"}, a.files()
        finally:
            a.close()


# Leases that try to make the agent write, name or run something outside
# its work folder. The agent keeps only integer ids for paths, and
# job_spec_normalize() checks the job as the server should have.
HOSTILE_JOBS = [
    ("family as a path", {"name": "x", "family": "../../../../bin/sh",
                          "generator": {"dlls": 1, "exports": 1}, "variants": ["default"]}),
    ("a command field", {"name": "x", "family": "pe", "command": "touch /tmp/loadlab-owned",
                         "generator": {"dlls": 1, "exports": 1}, "variants": ["default"]}),
    ("variant with a path and unknown knob",
     {"name": "../../../../escape", "family": "pe", "generator": {"dlls": 1, "exports": 1},
      "variants": [{"name": "../../../../escape", "bases": "same", "output": "/tmp/escape"}]}),
    ("out of bounds", {"name": "big", "family": "pe",
                       "generator": {"dlls": 100000, "exports": 4096}, "variants": ["default"]}),
    ("name with control characters", {"name": "\x1b]0;owned\x07", "family": "pe",
                                      "generator": {"dlls": 1, "exports": 1},
                                      "variants": ["default"]}),
]


# The leases go to three agents at once, each with its own server, so that
# no agent's backoff (0.5 s doubling to 30 s) grows past a few seconds: one
# agent given all eight spent about 90 s waiting.
LEASE_GROUPS = 3


def test_hostile_lease_job_is_refused_and_nothing_is_written_outside():
    leases = [{"task_id": 100 + i, "attempt": 1, "heartbeat_seconds": 5, "cell": {"x": "../.."},
               "job": dict(job, id=9)} for i, (_, job) in enumerate(HOSTILE_JOBS)]
    leases += [{"task_id": -1, "attempt": 1, "job": HOSTILE_JOBS[0][1]},
               {"task_id": 1e300, "attempt": 1, "job": HOSTILE_JOBS[0][1]},
               {"task_id": 7, "attempt": "../../x", "job": HOSTILE_JOBS[0][1]}]
    groups = [leases[k::LEASE_GROUPS] for k in range(LEASE_GROUPS)]

    def answerer(mine, server):
        def answer(m, p, b):
            if p == "/api/v1/lease":
                n = len(server[0].paths(p)) - 1
                return json_answer(200, mine[n]) if n < len(mine) else (204, {}, b"")
            if p.endswith("/fail"):
                return json_answer(200, {"state": "failed"})
            return json_answer(404, {"error": {"code": "not_found", "message": "no"}})
        return answer

    before = set(os.listdir("/tmp"))
    servers, agents = [], []
    try:
        for mine in groups:
            holder = []
            s = FakeServer(answerer(mine, holder)).__enter__()
            holder.append(s)
            servers.append(s)
            agents.append(Agent(s.url))
        # Backed off after each refusal: 0.5 s doubling.
        for s, mine in zip(servers, groups):
            wait_until(lambda: len(s.paths("/api/v1/lease")) > len(mine), 60, interval=0.2)
        fails, malformed = {}, 0
        for s, a, mine in zip(servers, agents, groups):
            assert len(s.paths("/api/v1/lease")) > len(mine), a.text()
            assert a.stop() == 0, a.text()
            fails.update({r[2]: json.loads(r[3]) for r in s.requests if r[2].endswith("/fail")})
            malformed += len(a.events("lease_malformed"))
        for i, (what, _) in enumerate(HOSTILE_JOBS):
            body = fails.get("/api/v1/tasks/%d/fail" % (100 + i))
            assert body, (what, fails)
            assert body["retryable"] is False and body["attempt"] == 1, (what, body)
            assert body["reason"].startswith("The agent refused the job: "), (what, body)
        assert "family" in fails["/api/v1/tasks/100/fail"]["reason"]
        assert "output" in fails["/api/v1/tasks/102/fail"]["reason"]
        assert "command" in fails["/api/v1/tasks/101/fail"]["reason"]
        assert "dlls" in fails["/api/v1/tasks/103/fail"]["reason"]
        assert "control characters" in fails["/api/v1/tasks/104/fail"]["reason"]
        # The three leases with bad ids: logged, nothing posted for them.
        assert len(fails) == len(HOSTILE_JOBS), fails
        assert malformed == 3, [a.text() for a in agents]
        for s, a, mine in zip(servers, agents, groups):
            # Nothing was written but the agent's own files: its work
            # folder is empty, no task folder was made.
            files = a.files()
            assert files <= {"a", "a/data", "a/data/agent.json", "a/data/work",
                             "a/data/spool"}, files
            assert not os.listdir(os.path.join(a.data_dir, "work"))
            assert "\x1b" not in a.text() and "\x07" not in a.text()
            # Refused tasks are backed off too: 0.5 s, then 1 s (+-25 %)
            # between an agent's first three leases.
            times = [r[0] for r in s.paths("/api/v1/lease")]
            assert times[2] - times[0] > 1.0, times
        # Nothing new in /tmp.
        new = {n for n in set(os.listdir("/tmp")) - before if "escape" in n or "owned" in n}
        assert not new, new
    finally:
        for a in agents:
            a.close()
        for s in servers:
            s.__exit__(None, None, None)


if __name__ == "__main__":
    harness.run_tests(globals())
