"""Issue 17's findings, each reproduced and now answered right: strict JSON
(UTF-8, no NUL, no duplicate keys) on jobs, enrollment and results; an
answered 414 for a thousand query arguments; 401 before the body; the
flag forms of docs/daemon.md; store files 0600 and a data folder made with its
parents; the long-poll cap (204 + Retry-After); the header deadline; the
limits in /metrics."""
import json
import os
import re
import socket
import stat
import tempfile
import shutil
import time
import urllib.parse

from harness import LOADLABD, SOURCE_DIR, Daemon, run_tests, sqlite_only

GOOD_JOB = (b'{"name":"NAME","family":"pe","generator":{"dlls":2,"exports":3},'
            b'"variants":["default"]}')


def address(d):
    u = urllib.parse.urlparse(d.url)
    return u.hostname, u.port


def raw(d, data, timeout=10, source=None):
    """Sends DATA on a fresh connection and reads until the server closes
    or a whole answer is in; returns (status, headers text, body bytes)."""
    s = socket.create_connection(address(d), timeout=timeout,
                                 source_address=(source, 0) if source else None)
    try:
        s.sendall(data)
        got = b""
        while True:
            head, sep, body = got.partition(b"\r\n\r\n")
            if sep:
                m = re.search(rb"content-length: *(\d+)", head, re.I)
                if m and len(body) >= int(m.group(1)):
                    break
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    finally:
        s.close()
    head, _, body = got.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head else 0
    return status, head.decode(errors="replace"), body


def post(d, path, body, token):
    return raw(d, b"POST %s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
               % (path.encode(), token.encode(), len(body), body))


def assert_refused(answer, words):
    status, _, body = answer
    assert status == 400, answer
    err = json.loads(body)["error"]
    assert err["code"] == "malformed", err
    assert words in err["message"], err


def job_count(d):
    return len(d.api("GET", "/api/v1/jobs?limit=200", token=d.admin_token).json()["jobs"])


def test_strict_json_on_jobs_enrollment_and_results():
    with Daemon() as d:
        tok = d.admin_token
        assert_refused(post(d, "/api/v1/jobs", GOOD_JOB.replace(b"NAME", b"bad\xff"), tok),
                       "UTF-8 (byte offset 12)")
        assert_refused(post(d, "/api/v1/jobs", GOOD_JOB.replace(b"NAME", b"visible\\u0000hidden"),
                            tok), "\\u0000")
        assert_refused(post(d, "/api/v1/jobs", GOOD_JOB.replace(b'"family"', b'"name":"x","family"'),
                            tok), "Duplicate key 'name'")
        assert job_count(d) == 0
        status, _, body = post(d, "/api/v1/jobs", GOOD_JOB.replace(b"NAME", b"caf\xc3\xa9"), tok)
        assert status == 201, body

        enroll = b'{"name":"a","facts":{"os":"win10","os":"winxp"},"labels":{}}'
        assert_refused(post(d, "/api/v1/agents/enroll", enroll, d.enroll_token), "Duplicate key 'os'")
        assert_refused(post(d, "/api/v1/agents/enroll",
                            b'{"name":"a","facts":{"os":"w\\u0000x"}}', d.enroll_token), "\\u0000")
        assert_refused(post(d, "/api/v1/agents/enroll",
                            b'{"name":"a","facts":{"cpu":"\xc0\xaf"}}', d.enroll_token), "UTF-8")
        agents = d.api("GET", "/api/v1/agents", token=tok)
        assert agents.status == 200 and agents.json()["agents"] == [], agents

        _, agent = d.enroll("a", {"os": "win10"})
        lease = d.api("POST", "/api/v1/lease", {"wait": 0}, token=agent)
        assert lease.status == 200, lease
        tid, att = lease.json()["task_id"], lease.json()["attempt"]
        result = (b'{"attempt":%d,"facts":{"os":"win10"},"variants":[{"name":"default",'
                  b'"warm":{"samples_us":[1,2,3],"samples_us":[9]}}]}' % att)
        assert_refused(post(d, "/api/v1/tasks/%d/result" % tid, result, agent),
                       "Duplicate key 'samples_us'")
        job = d.api("GET", "/api/v1/jobs", token=tok)
        assert job.status == 200
        json.loads(job.body.decode("utf-8"))  # every listing stays strict JSON
        assert all(t.get("result_id") is None
                   for j in job.json()["jobs"] for t in d.api(
                       "GET", "/api/v1/jobs/%d" % j["id"], token=tok).json()["tasks"])


def test_thousand_query_arguments_get_an_answer():
    with Daemon() as d:
        query = "&".join("a%d=%d" % (i, i) for i in range(1000))
        start = time.time()
        status, head, body = raw(d, b"GET /api/v1/jobs?%s HTTP/1.1\r\nHost: t\r\n"
                                    b"Authorization: Bearer %s\r\n\r\n"
                                 % (query.encode(), d.admin_token.encode()))
        assert status == 414, (status, head, body)
        assert json.loads(body)["error"]["code"] == "uri_too_long"
        assert time.time() - start < 5
        status, _, body = raw(d, b"GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: %s\r\n\r\n"
                              % (b"a" * 40000))
        assert status == 431, (status, body)
        ok = d.api("GET", "/api/v1/jobs?limit=5&state=queued", token=d.admin_token)
        assert ok.status == 200, ok
        metrics = d.api("GET", "/metrics").body.decode()
        assert "loadlab_http_query_refused_total 1" in metrics, metrics


def test_unauthenticated_large_post_refused_before_the_body():
    with Daemon() as d:
        s = socket.create_connection(address(d), timeout=10)
        s.sendall(b"POST /api/v1/tasks/1/result HTTP/1.1\r\nHost: t\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (4 << 20))
        s.sendall(b"{" + b" " * 1000)  # the start of a 4 MiB body, then nothing
        answer = s.recv(65536)
        s.close()
        assert answer.startswith(b"HTTP/1.1 401"), answer
        for path, token in (("/api/v1/jobs", "wrong"), ("/api/v1/jobs", d.enroll_token)):
            s = socket.create_connection(address(d), timeout=10)
            s.sendall(b"POST %s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                      b"Content-Length: 60000\r\n\r\n{" % (path.encode(), token.encode()))
            answer = s.recv(65536)
            s.close()
            assert answer.startswith(b"HTTP/1.1 401") or answer.startswith(b"HTTP/1.1 403"), answer
        # A small request without a body keeps its connection for the next.
        s = socket.create_connection(address(d), timeout=10)
        for _ in range(2):
            s.sendall(b"GET /api/v1/jobs HTTP/1.1\r\nHost: t\r\n\r\n")
            answer = s.recv(65536)
            assert answer.startswith(b"HTTP/1.1 401"), answer
        s.close()


def readme_flags():
    """(flag, example value) from the loadlabd usage block of docs/daemon.md."""
    with open(os.path.join(SOURCE_DIR, "docs", "daemon.md")) as f:
        text = f.read()
    block = text.split("## Usage", 1)[1].split("```", 2)[1]
    flags = []
    for m in re.finditer(r"--([a-z-]+)(?:[ =]([^\]\s]+))?", block):
        flags.append((m.group(1), m.group(2)))
    return flags


def value_for(name, example, tmp):
    """A value to start the daemon with; docs/daemon.md's example when it runs."""
    if name in ("data-dir",):
        return os.path.join(tmp, "d")
    if name == "db":
        return os.path.join(tmp, "other.db")
    if name == "config":
        path = os.path.join(tmp, "c.conf")
        with open(path, "w") as f:
            f.write("max-wait = 30\n")
        return path
    if name in ("tls-cert", "tls-key"):
        return None  # needs a certificate; unit/server/test_config covers both forms
    if name == "listen":
        return "127.0.0.1:0"
    if name == "agent-dir":
        path = os.path.join(tmp, "agent-builds")
        os.makedirs(path, exist_ok=True)
        return path
    if example and "|" in example:
        return example.split("|")[-1]
    return example


def test_every_readme_flag_form_starts_the_daemon():
    flags = readme_flags()
    names = [n for n, _ in flags]
    for expected in ("public-metrics", "max-connections", "max-long-polls", "header-timeout",
                     "per-ip-limit", "connection-timeout", "log-format"):
        assert expected in names, names
    tmp = tempfile.mkdtemp(prefix="loadlabd-flags-")
    try:
        # One daemon's data folder (on PostgreSQL its database) for every
        # form: each start after the first opens the store it left.
        d = Daemon(data_dir=tempfile.mkdtemp(dir=tmp))
        for name, example in flags:
            value = value_for(name, example, tmp)
            if value is None and example is not None:
                continue
            forms = [["--" + name]] if value is None else [["--" + name, value],
                                                          ["--%s=%s" % (name, value)]]
            for form in forms:
                d.extra_args = form
                d.start()
                try:
                    assert d.api("GET", "/healthz").status == 200
                    if name == "public-metrics":
                        r = d.api("GET", "/metrics")
                        assert r.status == 401, (form, r)
                finally:
                    d.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@sqlite_only
def test_store_files_0600_and_data_dir_made_with_parents():
    tmp = tempfile.mkdtemp(prefix="loadlabd-files-")
    try:
        data = os.path.join(tmp, "a", "b", "c")
        d = Daemon(data_dir=data)
        d.log_path = os.path.join(tmp, "loadlabd.log")  # not in DATA_DIR: the daemon makes it
        with d:
            d.submit({"name": "x", "family": "pe", "generator": {"dlls": 2, "exports": 3},
                      "variants": ["default"]})
            for sub in ("a", "a/b", "a/b/c"):
                mode = stat.S_IMODE(os.stat(os.path.join(tmp, sub)).st_mode)
                assert mode == 0o700, (sub, oct(mode))
            names = [n for n in os.listdir(data) if n.startswith("loadlab.db")]
            assert "loadlab.db" in names and "loadlab.db-wal" in names, names
            for n in names + ["admin.token", "enroll.token"]:
                mode = stat.S_IMODE(os.stat(os.path.join(data, n)).st_mode)
                assert mode == 0o600, (n, oct(mode))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_long_polls_beyond_the_cap_answered_at_once():
    with Daemon(["--max-long-polls", "3"]) as d:
        tokens = [d.enroll("a%d" % i, {"os": "win10"})[1] for i in range(5)]
        socks = []
        for tok in tokens[:3]:
            s = socket.create_connection(address(d), timeout=10)
            body = b'{"wait":30}'
            s.sendall(b"POST /api/v1/lease HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
                      b"Content-Length: %d\r\n\r\n%s" % (tok.encode(), len(body), body))
            socks.append(s)
        time.sleep(0.5)
        start = time.time()
        r = d.api("POST", "/api/v1/lease", {"wait": 30}, token=tokens[3])
        # At once, not after its 30 s wait (room for a loaded machine).
        assert r.status == 204 and time.time() - start < 10, r
        assert r.headers.get("Retry-After") == "5", r.headers
        assert d.api("GET", "/healthz").status == 200
        metrics = d.api("GET", "/metrics").body.decode()
        assert "loadlab_long_polls 3" in metrics and "loadlab_long_polls_limit 3" in metrics
        assert "loadlab_long_polls_refused_total 1" in metrics, metrics
        # A job submitted now is leased by one of the parked polls.
        d.submit({"name": "x", "family": "pe", "generator": {"dlls": 2, "exports": 3},
                  "variants": ["default"]})
        granted = 0
        for s in socks:
            s.settimeout(5)
            try:
                granted += s.recv(65536).startswith(b"HTTP/1.1 200")
            except socket.timeout:
                pass
            s.close()
        assert granted == 1, granted
        assert "long_poll_limit_reached" in d.read_log()


def test_dribbled_headers_are_cut_at_the_header_deadline():
    with Daemon(["--header-timeout", "1"]) as d:
        s = socket.create_connection(address(d), timeout=10)
        s.sendall(b"GET /healthz HTTP/1.1\r\n")
        start = time.time()
        closed = False
        while time.time() - start < 9:
            try:
                s.sendall(b"X-Slow: 1\r\n")
            except OSError:
                closed = True
                break
            s.settimeout(0.3)
            try:
                if s.recv(1024) == b"":
                    closed = True
                    break
            except socket.timeout:
                pass
        s.close()
        assert closed and time.time() - start < 10, time.time() - start
        time.sleep(0.2)
        metrics = d.api("GET", "/metrics").body.decode()
        assert re.search(r"loadlab_http_header_timeouts_total [1-9]", metrics), metrics
        assert "header_timeout" in d.read_log()


def test_capacity_logged_at_start():
    with Daemon(["--max-connections", "500"]) as d:
        log = d.read_log()
        assert re.search(r"capacity .*connections=500 long_polls=438", log), log
        metrics = d.api("GET", "/metrics").body.decode()
        assert "loadlab_http_connections_limit 500" in metrics


run_tests(globals())
