"""Signed agent builds (docs/agent.md, "Signed builds"; issue 37): an agent
installs only a build signed by the lab's release key in its data folder
(DATA_DIR/release-keys.pub), never runs anything before the signature is
checked, and tells the server why it refused (GET /api/v1/agents,
"agent_update"). Five agents, each from its own copy of loadlab-agent,
against two real daemons at once:

- "good" has the key the daemon's build is signed with: installs it;
- "other" has another key: refuses it, "not signed by" in agent_update;
- "keyless" has no key: updates off, says so, downloads nothing;
- "proxied" has the right key but talks through a proxy that rewrites
  the list to name a shell script (which would create a marker file) and
  serves it, first unsigned, then with the real build's signature: the
  marker never appears and nothing is installed;
- "unsigned" has the key; its daemon's build has no .sig: refused.

The agent-builds list shows an anonymous reader the folder's name, not
the daemon's path; the admin sees the path.
"""
import hashlib
import http.client
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
import test_agent_fleet  # noqa: E402

AGENT = test_agent_fleet.AGENT
BUILD_NAME = "loadlab-agent-linux-x86_64"


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def release(*args):
    """loadlab-agent release-key / release-sign, checked."""
    p = subprocess.run([AGENT] + list(args), capture_output=True, timeout=60)
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p.stdout.decode()


class RewritingProxy:
    """The party on the path: forwards everything to UPSTREAM, but answers
    the agent-builds list with the wanted Linux build replaced by SCRIPT
    (its size and digest; "signature" as self.signature says) and serves
    SCRIPT as that build's bytes."""

    def __init__(self, upstream, script):
        self.upstream = urllib.parse.urlsplit(upstream)
        self.script = script
        self.signature = None  # None: no signature in the list
        self.served_script = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                proxy.forward(self)

            do_POST = do_PUT = do_DELETE = do_GET

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]

    def forward(self, h):
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else None
        if h.command == "GET" and h.path == "/api/v1/agent-builds/linux/x86_64":
            self.served_script += 1
            self.reply(h, 200, "application/octet-stream", self.script)
            return
        c = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=90)
        headers = {k: v for k, v in h.headers.items() if k.lower() in ("authorization", "content-type")}
        c.request(h.command, h.path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        c.close()
        if h.command == "GET" and h.path == "/api/v1/agent-builds" and r.status == 200:
            listed = json.loads(data)
            for b in listed["builds"]:
                if b["os"] == "linux" and b["wanted"]:
                    b["sha256"] = hashlib.sha256(self.script).hexdigest()
                    b["size"] = len(self.script)
                    b["signature"] = self.signature
            data = json.dumps(listed).encode()
        self.reply(h, r.status, r.getheader("Content-Type") or "application/json", data)

    @staticmethod
    def reply(h, status, content_type, data):
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Fleet:
    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="loadlab-signed-test-")
        self.agents = {}
        self.daemons = []
        self.proxies = []

    def daemon(self, builds, extra=()):
        d = harness.Daemon(extra_args=["--agent-dir", builds] + list(extra))
        self.daemons.append(d)
        return d.start()

    def agent(self, name, daemon, keys=None, server=None):
        """An agent NAME from its own copy of loadlab-agent; KEYS: the
        public key file copied into its data folder."""
        folder = os.path.join(self.root, name)
        data_dir = os.path.join(folder, "data")
        os.makedirs(data_dir)
        exe = os.path.join(folder, "loadlab-agent")
        shutil.copy2(AGENT, exe)
        if keys:
            shutil.copy(keys, os.path.join(data_dir, "release-keys.pub"))
        test_agent_fleet.AGENT = exe
        try:
            a = test_agent_fleet.Agent(daemon, data_dir=data_dir, server=server,
                                       extra=["--name", name, "--update-check-seconds", "1"])
        finally:
            test_agent_fleet.AGENT = AGENT
        a.exe = exe
        a.daemon = daemon
        self.agents[name] = a
        return a

    def doc(self, name):
        a = self.agents[name]
        r = a.daemon.api("GET", "/api/v1/agents", token=a.daemon.admin_token)
        assert r.status == 200, r
        return next((x for x in r.json()["agents"] if x["name"] == name), None)

    def wait_update(self, name, state, timeout=60):
        def said():
            doc = self.doc(name)
            return doc if doc and (doc.get("agent_update") or {}).get("state") == state else None
        try:
            return harness.wait_for("%s to say agent_update %s" % (name, state), said, timeout=timeout,
                                    interval=0.3)
        except AssertionError:
            raise AssertionError("%s: %s\n%s" % (name, self.doc(name), self.agents[name].log_text()[-4000:]))

    def events(self, name, event):
        return [e for e in self.agents[name].events() if e.get("event") == event]

    def close(self):
        for a in self.agents.values():
            try:
                a.close()
            except AssertionError:
                raise
        for p in self.proxies:
            p.close()
        for d in self.daemons:
            d.close()
        shutil.rmtree(self.root, ignore_errors=True)


def put_build(folder, data):
    path = os.path.join(folder, BUILD_NAME)
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, 0o755)
    return path, hashlib.sha256(data).hexdigest()


def test_only_builds_signed_by_the_agents_key_are_installed():
    fleet = Fleet()
    try:
        root = fleet.root
        release("release-key", "new", "--out", os.path.join(root, "lab-key"))
        release("release-key", "new", "--out", os.path.join(root, "other-key"))
        lab_keys = os.path.join(root, "lab-key", "release-keys.pub")
        other_keys = os.path.join(root, "other-key", "release-keys.pub")
        assert os.stat(os.path.join(root, "lab-key", "release.key")).st_mode & 0o077 == 0
        with open(lab_keys) as f:
            public_line = [line for line in f if line.startswith("loadlab-release-key ")][0]
        assert release("release-key", "public", os.path.join(root, "lab-key", "release.key")) == public_line
        # A key pair is never overwritten.
        p = subprocess.run([AGENT, "release-key", "new", "--out", os.path.join(root, "lab-key")],
                           capture_output=True)
        assert p.returncode == 2 and b"exists already" in p.stderr, p
        with open(lab_keys) as f:
            assert public_line in f.read()
        with open(AGENT, "rb") as f:
            original = f.read()
        old_sha = hashlib.sha256(original).hexdigest()

        # Daemon 1: a new build signed with the lab's key.
        signed_dir = os.path.join(root, "signed-builds")
        os.makedirs(signed_dir)
        path, new_sha = put_build(signed_dir, original + b"\0signed build 2\n")
        release("release-sign", os.path.join(root, "lab-key", "release.key"), path)
        assert "good signature" in release("release-sign", "--check", lab_keys, path)
        p = subprocess.run([AGENT, "release-sign", "--check", other_keys, path], capture_output=True)
        assert p.returncode == 1 and b"BAD" in p.stdout, p
        signed = fleet.daemon(signed_dir)
        # Daemon 2: a new build without a .sig; anonymous reads allowed.
        unsigned_dir = os.path.join(root, "unsigned-builds")
        os.makedirs(unsigned_dir)
        _, unsigned_sha = put_build(unsigned_dir, original + b"\0unsigned build\n")
        unsigned = fleet.daemon(unsigned_dir, ["--public-read"])

        # The list: the signature served with the build; the folder's path
        # for the admin only.
        listed = signed.api("GET", "/api/v1/agent-builds", token=signed.admin_token).json()
        [build] = listed["builds"]
        with open(path + ".sig") as f:
            assert build["signature"] == f.read().split()[2], build
        assert listed["dir"] == signed_dir, listed
        r = unsigned.api("GET", "/api/v1/agent-builds")
        assert r.status == 200, r
        assert r.json()["dir"] == "unsigned-builds" and root.encode() not in r.body, r.json()
        assert r.json()["builds"][0]["signature"] is None and r.json()["builds"][0]["file"] == BUILD_NAME

        # The proxy's script: it would leave MARKER if anything ran it.
        marker = os.path.join(root, "marker")
        script = ("#!/bin/sh\ntouch '%s'\necho 'loadlab-agent update-trial ok evil'\n" % marker).encode()
        proxy = RewritingProxy(signed.url, script)
        fleet.proxies.append(proxy)

        fleet.agent("good", signed, lab_keys)
        fleet.agent("other", signed, other_keys)
        fleet.agent("keyless", signed)
        fleet.agent("proxied", signed, lab_keys, server=proxy.url)
        fleet.agent("unsigned", unsigned, lab_keys)

        # (b) Signed by the lab's key: installed, as before.
        harness.wait_for("good to run the signed build",
                         lambda: (fleet.doc("good") or {}).get("agent_sha256") == new_sha, timeout=60,
                         interval=0.3)
        assert sha256_of(fleet.agents["good"].exe) == new_sha
        assert fleet.wait_update("good", "on")["agent_update"]["sha256"] is None

        # (c) Signed by another key: refused, the reason in the agent list.
        doc = fleet.wait_update("other", "refused")
        assert doc["agent_update"]["sha256"] == new_sha, doc
        assert "not signed by any of the 1 release key" in doc["agent_update"]["reason"], doc
        assert doc["agent_sha256"] == old_sha, doc

        # (e) No key: updates off, said in the log and to the server.
        doc = fleet.wait_update("keyless", "off")
        assert "release-keys.pub" in doc["agent_update"]["reason"], doc
        assert fleet.events("keyless", "update_disabled"), fleet.agents["keyless"].log_text()

        # (d) Unsigned: refused.
        doc = fleet.wait_update("unsigned", "refused")
        assert doc["agent_update"]["sha256"] == unsigned_sha, doc
        assert "not signed" in doc["agent_update"]["reason"], doc

        # (a) The rewritten list, unsigned, then with the real build's
        # signature (good, but for other bytes): refused both times.
        script_sha = hashlib.sha256(script).hexdigest()
        doc = fleet.wait_update("proxied", "refused")
        assert doc["agent_update"]["sha256"] == script_sha, doc
        assert "not signed" in doc["agent_update"]["reason"], doc
        proxy.signature = build["signature"]
        harness.wait_for("proxied to refuse the borrowed signature",
                         lambda: "not signed by any" in fleet.doc("proxied")["agent_update"]["reason"],
                         timeout=60, interval=0.3)

        # Nothing that was refused was installed, downloaded or run.
        for name in ("other", "keyless", "proxied", "unsigned"):
            assert sha256_of(fleet.agents[name].exe) == old_sha, name
            assert not fleet.events(name, "update_found"), (name, fleet.agents[name].log_text())
            assert not os.path.exists(os.path.join(fleet.agents[name].data_dir, "update", "new")), name
            assert fleet.agents[name].proc.poll() is None, name
        assert proxy.served_script == 0
        assert not os.path.exists(marker)
        assert not fleet.events("keyless", "update_refused")
    finally:
        fleet.close()


if __name__ == "__main__":
    harness.run_tests(globals())
