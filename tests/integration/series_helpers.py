"""What the series, alert and webhook tests share: the job of a series, a
hook served here on 127.0.0.1 that records what it is sent, and playing an
agent that posts a result (optionally slower) for the next leased task."""
import http.server
import json
import threading

from harness import wait_for

JOB = {"name": "nightly", "family": "pe", "generator": {"dlls": 2, "exports": 10},
       "variants": ["default", "rebase"]}
FACTS = {"os": "winxp", "disk": "ssd", "cpu_model": "lab cpu", "runner": "wine"}


class Hook(http.server.BaseHTTPRequestHandler):
    received = []

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        Hook.received.append(json.loads(self.rfile.read(n)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def serve_hook():
    """A fresh Hook on 127.0.0.1:0, served in a thread; shutdown() it."""
    Hook.received = []
    server = http.server.HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def play(d, token, rng, shift=1.0):
    lease = wait_for("a lease", lambda: d.api("POST", "/api/v1/lease", {}, token=token).json())
    variants = [{"name": "default", "valid": True,
                 "warm": {"runs": 30, "samples_us": [round(1000 + rng.gauss(0, 5), 1) for _ in range(30)]}},
                {"name": "rebase", "valid": True,
                 "warm": {"runs": 30, "samples_us": [round(1100 * shift + rng.gauss(0, 5), 1) for _ in range(30)]}}]
    r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"],
              {"attempt": lease["attempt"], "facts": FACTS, "variants": variants}, token=token)
    assert r.status == 200, r


def open_alert(d, agent_token, rng, series, user_token):
    """Two jobs of SERIES submitted by USER_TOKEN, the second 20 % slower:
    returns the alert it opens."""
    for rev, shift in (("r1", 1.0), ("r2", 1.2)):
        d.submit(dict(JOB, series=series, revision=rev), token=user_token)
        play(d, agent_token, rng, shift)
    return wait_for("the alert of " + series, lambda: [
        a for a in d.api("GET", "/api/v1/alerts", token=d.admin_token).json()["alerts"] if a["series"] == series])[0]
