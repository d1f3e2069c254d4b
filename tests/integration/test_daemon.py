"""loadlabd as a process: flags, environment, config file, logs, health,
metrics, keep-alive, TLS, and a clean stop on SIGTERM."""
import http.client
import json
import os
import signal
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse

from harness import LOADLABD, Daemon, request, run_tests
from schemacheck import validate


def test_help_and_bad_flags():
    r = subprocess.run([LOADLABD, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "--listen" in r.stdout and "--lease-seconds" in r.stdout
    for args in (["--bogus"], ["--listen", "nowhere"], ["--lease-seconds", "0"],
                 ["--log-format", "xml"], ["--tls-cert", "/x"], ["stray"], ["--threads"]):
        r = subprocess.run([LOADLABD] + args, capture_output=True, text=True, timeout=30)
        assert r.returncode == 2, (args, r)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("loadlabd: "), (args, r.stderr)


def test_health_metrics_and_keep_alive():
    with Daemon() as d:
        r = d.api("GET", "/healthz")
        assert r.status == 200, r
        validate("health.json", r.json())
        assert r.json()["status"] == "ok"
        # Keep-alive: two requests on one connection, no "Connection: close".
        u = urllib.parse.urlparse(d.url)
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        for _ in range(2):
            c.request("GET", "/healthz")
            resp = c.getresponse()
            resp.read()
            assert resp.status == 200
            assert (resp.getheader("Connection") or "").lower() != "close"
        c.request("POST", "/api/v1/lease", body=b"{}",
                  headers={"Authorization": "Bearer " + d.admin_token})
        resp = c.getresponse()
        resp.read()
        assert resp.status == 403
        c.close()
        d.api("GET", "/api/v1/jobs", token=d.admin_token)
        needles = ('loadlab_tasks{state="queued"} 0', 'loadlab_agents{state="online"} 0',
                   "loadlab_leases_granted_total 0", "loadlab_leases_expired_total 0",
                   "loadlab_results_ingested_total 0",
                   'loadlab_http_requests_total{route="GET /healthz",code="2xx"} 3',
                   'loadlab_http_requests_total{route="POST /api/v1/lease",code="4xx"} 1',
                   'loadlab_http_request_duration_seconds_count{route="GET /api/v1/jobs"} 1')
        # A request is counted once its answer has been sent (its duration
        # includes the sending), so the client may ask for /metrics a moment
        # before its last request is in them: ask again for a few seconds.
        deadline = time.monotonic() + 5
        while True:
            m = d.api("GET", "/metrics")
            assert m.status == 200 and m.headers["Content-Type"].startswith("text/plain")
            text = m.body.decode()
            missing = [n for n in needles if n not in text]
            if not missing or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert not missing, (missing, text)
        # The dashboard page is served from the binary.
        page = d.api("GET", "/")
        assert page.status == 200 and b"<title>loadlab</title>" in page.body
        assert page.headers["Content-Type"].startswith("text/html")


def test_logs_one_line_per_request_and_state_change_as_json():
    with Daemon(["--log-format", "json"]) as d:
        d.submit({"name": "l", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                  "variants": ["default"]})
        d.api("GET", "/healthz")
        time.sleep(0.2)
        events = [json.loads(line) for line in d.read_log().splitlines() if line.startswith("{")]
        assert events and all("ts" in e and "level" in e for e in events)
        requests = [e for e in events if e["event"] == "request"]
        # A request is logged once its answer is sent, so the POST's line
        # may come after the GET's: look for the GET among them.
        assert any({"method": "GET", "path": "/healthz", "status": "200"}.items() <= e.items()
                   for e in requests), requests
        states = [e for e in events if e["event"] == "job_state"]
        assert states and states[0]["to"] == "queued"


def test_environment_and_config_file():
    tmp = tempfile.mkdtemp(prefix="loadlabd-conf-")
    conf = os.path.join(tmp, "loadlabd.conf")
    with open(conf, "w") as f:
        f.write("# a comment\nlease-seconds = 7\npublic-read = true\n")
    with Daemon(["--config", conf], env={"LOADLAB_MAX_ATTEMPTS": "9"}) as d:
        assert d.api("GET", "/api/v1/jobs").status == 200  # public-read from the file
        d.submit({"name": "c", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                  "variants": ["default"]})
        _, tok = d.enroll("a")
        lease = d.api("POST", "/api/v1/lease", {}, token=tok).json()
        assert lease["lease_seconds"] == 7, lease
    with open(conf, "w") as f:
        f.write("no-such-setting = 1\n")
    r = subprocess.run([LOADLABD, "--config", conf], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "no-such-setting" in r.stderr, r
    r = subprocess.run([LOADLABD, "--listen", "127.0.0.1:0"], capture_output=True, text=True,
                       timeout=30, env=dict(os.environ, LOADLAB_LEASE_SECONDS="abc"))
    assert r.returncode == 2 and "LOADLAB_LEASE_SECONDS" in r.stderr, r


def test_sigterm_answers_in_flight_requests_and_exits_cleanly():
    d = Daemon().start()
    try:
        d.submit({"name": "s", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                  "variants": ["default"], "matrix": {"cells": {"os": ["none"]}}})
        _, tok = d.enroll("a", {"os": "win10"})
        got = {}

        def poll():
            got["r"] = request(d.url + "/api/v1/lease", "POST", {"wait": 30}, tok, timeout=40)

        th = threading.Thread(target=poll)
        th.start()
        time.sleep(0.5)
        start = time.time()
        code = d.stop(signal.SIGTERM)
        th.join(10)
        assert code == 0, code
        assert got["r"].status == 204, got  # the long-poll was answered, not cut
        assert time.time() - start < 10
        assert "stopped" in d.read_log()
        # The store is intact and reopens.
        d.start()
        assert d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"][0]["name"] == "s"
    finally:
        d.close()


def test_tls():
    tmp = tempfile.mkdtemp(prefix="loadlabd-tls-")
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True, timeout=120)
    with Daemon(["--tls-cert", cert, "--tls-key", key]) as d:
        assert d.url.startswith("https://"), d.url
        u = urllib.parse.urlparse(d.url)
        ctx = ssl.create_default_context(cafile=cert)
        ctx.check_hostname = False
        c = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=10)
        c.request("GET", "/healthz")
        resp = c.getresponse()
        assert resp.status == 200 and json.loads(resp.read())["status"] == "ok"
        c.close()


run_tests(globals())
