"""Webhooks against the real daemon: a webhook_url must be a strict
http(s) URL, and loopback, link-local, private and unspecified targets, in
every spelling, are refused unless --webhook-allow (flag, environment or
config file) lists them; a name that resolves to loopback is refused when
it is connected to; only the series' owner reads why a delivery failed; a
hook that accepts and never answers holds up only its own series, its
alert stays queued in the store across a restart and is delivered after
it; the outcomes are counted in /metrics."""
import os
import random
import shutil
import socket
import subprocess
import tempfile
import threading

from harness import LOADLABD, Daemon, run_tests, wait_for
from series_helpers import FACTS, Hook, open_alert, serve_hook

REFUSED = [
    "http://127.0.0.1/hook", "http://127.1.2.3:8080/", "http://2130706433/", "http://0x7f.1/",
    "http://0177.0.0.1/", "http://[::ffff:127.0.0.1]/", "http://[::1]:9/", "http://localhost/",
    "http://LocalHost./x", "http://api.localhost/", "http://169.254.169.254/latest/meta-data",
    "http://[fe80::1]/", "http://10.1.2.3/", "http://172.16.0.1/", "http://172.31.255.255/",
    "http://192.168.1.1/", "http://[fd00::1]/", "http://0.0.0.0/", "http://0/", "http://[::]/",
    "http://[::ffff:10.0.0.1]/", "http://[64:ff9b::a9fe:a9fe]/",
]
MALFORMED = [
    "ftp://hooks.example.com/", "http://", "http:///path", "http://:80/", "https://user:pw@hooks.example.com/",
    "http://@hooks.example.com/", "http://hooks example.com/", "http://hooks.example.com/a b",
    "http://hooks.example.com/\r\nX-Evil: 1", "http://hooks.example.com:0/", "http://hooks.example.com:99999/",
    "http://hooks..example.com/", "http://[::1/", "http://hooks.example.com/" + "a" * 1100, "hooks.example.com",
    "http://hooks.example.com\\@10.0.0.1/", 42,
]


def settings(d, series, token):
    return [s for s in d.api("GET", "/api/v1/series", token=token).json()["series"] if s["name"] == series]


def user(d, name):
    r = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": name}, token=d.admin_token)
    assert r.status == 201, r
    return r.json()["token"]


def test_targets_refused_unless_allowed():
    with Daemon() as d:
        alice = user(d, "alice")
        for url in REFUSED + MALFORMED:
            r = d.api("PUT", "/api/v1/series/w", {"webhook_url": url}, token=alice)
            assert r.status == 400, (url, r)
            assert r.json()["error"]["code"] == "invalid_argument", (url, r.json())
        assert "--webhook-allow" in d.api("PUT", "/api/v1/series/w", {"webhook_url": REFUSED[0]},
                                          token=alice).json()["error"]["message"]
        # nothing was stored: the series still has no settings
        d.submit({"name": "a", "family": "pe", "generator": {"dlls": 1, "exports": 1}, "variants": ["default"],
                  "series": "w"}, token=alice)
        assert settings(d, "w", alice)[0]["webhook_url"] is None
        # a public name is taken (its addresses are checked at delivery)
        for url in ("https://hooks.example.com/x?y=1", "HTTP://Hooks.Example.com:8443/a#b", "http://[2001:db8::1]/"):
            r = d.api("PUT", "/api/v1/series/w", {"webhook_url": url}, token=alice)
            assert r.status == 200 and r.json()["webhook_url"] == url, (url, r)

    # Listed by flag, environment and config file: exactly those are let through.
    folder = tempfile.mkdtemp(prefix="loadlabd-test-")
    config = os.path.join(folder, "loadlabd.conf")
    with open(config, "w") as f:
        f.write("webhook-allow = 169.254.169.254\n")
    with Daemon(["--config", config, "--webhook-allow", "127.0.0.1", "--webhook-allow", "localhost"],
                env={"LOADLAB_WEBHOOK_ALLOW": "10.0.0.0/8, fd00::/8"}) as d:
        alice = user(d, "alice")
        for url in ("http://127.0.0.1/", "http://2130706433/", "http://0x7f.1/", "http://[::ffff:127.0.0.1]/",
                    "http://localhost/", "http://169.254.169.254/", "http://10.9.8.7/", "http://[fd00::1]/"):
            r = d.api("PUT", "/api/v1/series/w", {"webhook_url": url}, token=alice)
            assert r.status == 200, (url, r)
        for url in ("http://127.0.0.2/", "http://[::1]/", "http://192.168.1.1/", "http://169.254.169.253/"):
            assert d.api("PUT", "/api/v1/series/w", {"webhook_url": url}, token=alice).status == 400, url
    # A bad entry stops the daemon at its start, saying why.
    for bad in ("10.0.0.0/33", "not a host!", "[::1]"):
        out = subprocess.run([LOADLABD, "--listen", "127.0.0.1:0", "--data-dir", folder, "--webhook-allow", bad],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode != 0 and "webhook-allow" in out.stderr, (bad, out)
    shutil.rmtree(folder, ignore_errors=True)


def loopback_name():
    """A name of this machine that resolves to loopback, other than localhost."""
    with open("/etc/hosts") as f:
        for line in f:
            fields = line.split("#")[0].split()
            if fields and fields[0].startswith("127."):
                for name in fields[1:]:
                    if "localhost" not in name:
                        return name
    name = socket.gethostname()
    assert socket.gethostbyname(name).startswith("127."), "no name of this machine resolves to loopback"
    return name


def metric(d, name):
    for line in d.api("GET", "/metrics").body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError("no metric " + name)


def test_address_checked_at_connect_and_reason_for_owner_only():
    server = serve_hook()
    try:
        with Daemon(["--schedule-tick-ms", "100"]) as d:
            alice, bob = user(d, "alice"), user(d, "bob")
            url = "http://%s:%d/hook" % (loopback_name(), server.server_port)
            r = d.api("PUT", "/api/v1/series/named", {"webhook_url": url}, token=alice)
            assert r.status == 200 and r.json()["owner"] == "user:alice", r
            _, agent = d.enroll("lab-1", FACTS)
            alert = open_alert(d, agent, random.Random(3), "named", alice)

            def status(token):
                return [a for a in d.api("GET", "/api/v1/alerts", token=token).json()["alerts"]
                        if a["id"] == alert["id"]][0]["webhook"]
            said = wait_for("the refusal", lambda: status(alice) if status(alice).startswith("failed") else None)
            assert "refused" in said and "127.0.0.1" in said and "--webhook-allow" in said, said
            assert status(d.admin_token) == said
            assert status(bob) == "failed"
            assert Hook.received == []
            assert metric(d, 'loadlab_webhook_deliveries_total{outcome="refused"}') == 1
            # others may read the alert, but only the owner (or an admin) acknowledges it
            r = d.api("POST", "/api/v1/alerts/%d/ack" % alert["id"], {}, token=bob)
            assert r.status == 403 and "user:alice" in r.json()["error"]["message"], r
            assert d.api("GET", "/api/v1/alerts?open=true", token=bob).json()["alerts"] != []
            r = d.api("POST", "/api/v1/alerts/%d/ack" % alert["id"], {}, token=alice)
            assert r.status == 200 and r.json()["acked_by"] == "user:alice", r
    finally:
        server.shutdown()


class HangingHook:
    """A listener on 127.0.0.1 that accepts and never answers while
    self.hang is set, else answers 204 and records the body."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.hang = True
        self.open = []  # connections held, not closed by the daemon
        self.received = []
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        if self.hang:
            with self.lock:
                self.open.append(conn)
            try:
                while conn.recv(4096):
                    pass
            except OSError:
                pass
            with self.lock:
                if conn in self.open:
                    self.open.remove(conn)
            return
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(4096)
        head, body = data.split(b"\r\n\r\n", 1)
        if b"expect: 100-continue" in head.lower():
            conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        length = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0]
        while len(body) < length:
            body += conn.recv(4096)
        self.received.append(body)
        conn.sendall(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        conn.close()

    def drop_held(self):
        with self.lock:
            for conn in self.open:
                conn.shutdown(socket.SHUT_RDWR)
                conn.close()
            self.open = []

    def held(self):
        with self.lock:
            return len(self.open)


def test_hanging_hook_delays_only_its_series_and_survives_restart():
    hanging, server = HangingHook(), serve_hook()
    args = ["--schedule-tick-ms", "100", "--webhook-allow", "127.0.0.1", "--webhook-timeout", "120"]
    first = d = Daemon(args).start()
    try:
        alice = user(d, "alice")
        for series, port in (("slow/a", hanging.port), ("quick/b", server.server_port)):
            r = d.api("PUT", "/api/v1/series/" + series, {"webhook_url": "http://127.0.0.1:%d/" % port},
                      token=alice)
            assert r.status == 200, r
        _, agent = d.enroll("lab-1", FACTS)
        rng = random.Random(5)
        slow = open_alert(d, agent, rng, "slow/a", alice)
        wait_for("the hanging connection", hanging.held)
        quick = open_alert(d, agent, rng, "quick/b", alice)
        got = wait_for("the other series' webhook", lambda: Hook.received)
        assert hanging.held() == 1, "the slow hook's delivery ended before the other series' arrived"
        assert got[0]["alert"]["id"] == quick["id"], got

        def status(alert):
            return [a for a in d.api("GET", "/api/v1/alerts", token=alice).json()["alerts"]
                    if a["id"] == alert["id"]][0]["webhook"]
        wait_for("delivered", lambda: status(quick) == "delivered")
        assert status(slow) == "pending", status(slow)
        assert metric(d, 'loadlab_webhook_deliveries_total{outcome="delivered"}') == 1
        assert metric(d, "loadlab_webhook_queue") == 1

        # the hook closes without an answer: tried again later, counted
        hanging.drop_held()
        wait_for("a retry", lambda: status(slow).startswith("pending: attempt 1 of 5 failed"))
        retried = metric(d, 'loadlab_webhook_deliveries_total{outcome="retried"}')
        assert retried == 1, (retried, status(slow), [l for l in d.api("GET", "/metrics").body.decode().splitlines() if "webhook" in l], [l for l in d.read_log().splitlines() if "webhook" in l])
        wait_for("the retry's connection", hanging.held)

        # a stop abandons the hanging delivery; the alert stays queued and goes out after the restart
        d.stop()
        assert hanging.received == []
        hanging.hang = False
        hanging.drop_held()
        d = Daemon(args, data_dir=first.data_dir).start()
        wait_for("the delivery after the restart", lambda: hanging.received)
        assert '"id":%d' % slow["id"] in hanging.received[0].decode(), hanging.received
        wait_for("delivered after the restart", lambda: status(slow) == "delivered")
        assert metric(d, "loadlab_webhook_queue") == 0
        assert len(Hook.received) == 1
    finally:
        d.close()
        first.close()
        server.shutdown()
        hanging.sock.close()


run_tests(globals())
