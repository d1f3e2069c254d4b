"""The Linux agent updates itself (docs/agent.md, "Updates") against a real
loadlabd --agent-dir: between two tasks it takes the new build (the same
agent with bytes appended: another digest, no second compile), runs it
in the same process (execv) and reports its digest; a build that is not
a program, and one that exits at once, are refused by the trial and never
installed; a build that passes the trial but dies at start is rolled back
by the watcher, which starts the previous copy again; a pin holds the
fleet. Every build is signed with the lab's release key, which the agent
has in its data folder (docs/agent.md, "Signed builds";
test_agent_update_signed.py shows the others refused). Runs the agent
from a copy in a temporary folder, never the build tree's file.
"""
import hashlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
import test_agent_fleet  # noqa: E402

AGENT = test_agent_fleet.AGENT
BUILD_NAME = "loadlab-agent-linux-x86_64"

TINY_ELF = harness.tiny_job("update-tiny", "elf", 1)

# Passes the trial (prints what a trial prints) and then fails as a
# fleet member: what the watcher must roll back.
DIES_AT_START = b"""#!/bin/sh
if [ "$1" = update-trial ]; then echo "loadlab-agent update-trial ok fake"; exit 0; fi
exit 1
"""


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Lab:
    """A daemon with an agent-builds folder and an agent run from a copy."""

    def __init__(self, confirm_s=60):
        self.root = tempfile.mkdtemp(prefix="loadlab-update-test-")
        self.builds = os.path.join(self.root, "builds")
        self.bin = os.path.join(self.root, "bin")
        os.makedirs(self.builds)
        os.makedirs(self.bin)
        self.exe = os.path.join(self.bin, "loadlab-agent")
        shutil.copy2(AGENT, self.exe)
        with open(AGENT, "rb") as f:
            self.original = f.read()
        self.old_sha = hashlib.sha256(self.original).hexdigest()
        self.key_dir = os.path.join(self.root, "release-key")
        subprocess.run([AGENT, "release-key", "new", "--out", self.key_dir], check=True,
                       stdout=subprocess.DEVNULL)
        self.put_build(self.original)
        self.daemon = harness.Daemon(extra_args=["--agent-dir", self.builds])
        self.agent = None
        self.data_dir = os.path.join(self.root, "agent-data")
        try:
            self.daemon.start()
            self._start_agent(confirm_s)
        except BaseException:
            self.close()
            raise

    def _start_agent(self, confirm_s):
        os.makedirs(self.data_dir)
        shutil.copy(os.path.join(self.key_dir, "release-keys.pub"), self.data_dir)
        test_agent_fleet.AGENT = self.exe
        try:
            self.agent = test_agent_fleet.Agent(
                self.daemon, data_dir=self.data_dir,
                extra=["--update-check-seconds", "1", "--update-confirm-seconds", str(confirm_s)])
        finally:
            test_agent_fleet.AGENT = AGENT

    def put_build(self, data, name=BUILD_NAME):
        path = os.path.join(self.builds, name)
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.chmod(path + ".tmp", 0o755)
        os.rename(path + ".tmp", path)
        subprocess.run([AGENT, "release-sign", os.path.join(self.key_dir, "release.key"), path], check=True,
                       stdout=subprocess.DEVNULL)
        return hashlib.sha256(data).hexdigest()

    def rescan(self):
        r = self.daemon.api("POST", "/api/v1/agent-builds/rescan", token=self.daemon.admin_token)
        assert r.status == 200, r
        return r.json()

    def agent_doc(self):
        agents = self.daemon.api("GET", "/api/v1/agents", token=self.daemon.admin_token).json()["agents"]
        return agents[0] if agents else None

    def wait_digest(self, sha, timeout=120):
        try:
            return harness.wait_for("the agent to report %s" % sha[:12],
                                    lambda: (self.agent_doc() or {}).get("agent_sha256") == sha,
                                    timeout=timeout, interval=0.3)
        except AssertionError:
            raise AssertionError("the agent does not report %s; its log:\n%s" %
                                 (sha, self.agent.log_text()[-6000:]))

    def run_job(self):
        job = self.daemon.submit(TINY_ELF)
        harness.wait_for("job %d done" % job["id"],
                         lambda: self.daemon.job(job["id"])["state"] in ("done", "failed"),
                         timeout=300, interval=0.5)
        assert self.daemon.job(job["id"])["state"] == "done", self.daemon.job(job["id"])
        return job

    def events(self, name):
        return [e for e in self.agent.events() if e.get("event") == name]

    def agent_pids(self):
        """The agent processes run from this lab's copy (a watcher's
        restart has another PID than the one the test started)."""
        exe = self.exe.encode()
        return harness.pids_where("cmdline", lambda f: bool(f) and f[0] == exe
                                  and self.data_dir.encode() in f)

    def close(self):
        try:
            if self.agent:
                self.agent.close()
        finally:
            for pid in self.agent_pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            self.daemon.close()
            shutil.rmtree(self.root, ignore_errors=True)


def test_updates_between_tasks_and_refuses_broken_builds():
    lab = Lab()
    try:
        listed = lab.daemon.api("GET", "/api/v1/agent-builds", token=lab.daemon.admin_token).json()
        assert listed["pin"] is None, listed
        [build] = listed["builds"]
        assert (build["os"], build["arch"], build["label"]) == ("linux", "x86_64", None), build
        assert build["sha256"] == lab.old_sha and build["size"] == len(lab.original), build
        assert build["wanted"] is True and build["version"], build

        doc = lab.wait_digest(lab.old_sha) and lab.agent_doc()
        assert doc["agent_version"] == build["version"], doc
        lab.run_job()
        pid = lab.agent.proc.pid

        # A new build: the same agent with bytes appended.
        new_sha = lab.put_build(lab.original + b"\0loadlab update test, build 2\n")
        assert new_sha != lab.old_sha
        lab.rescan()
        lab.wait_digest(new_sha)
        assert sha256_of(lab.exe) == new_sha
        assert sha256_of(lab.exe + ".previous") == lab.old_sha
        assert lab.agent.proc.poll() is None and lab.agent.proc.pid == pid  # execv: same process
        assert lab.events("update_installed") and lab.events("update_confirmed"), lab.agent.log_text()
        assert not os.path.exists(os.path.join(lab.data_dir, "update", "pending.json"))
        lab.run_job()  # the second task, run by the new digest

        # Bytes that are not a program, then a program that exits at once:
        # both fail their trial and are never installed.
        for data in (b"not a program\n" * 64, b"#!/bin/sh\nexit 3\n"):
            bad_sha = lab.put_build(data)
            lab.rescan()
            harness.wait_for("update_refused for %s" % bad_sha[:12],
                             lambda: any(e.get("sha256") == bad_sha
                                         for e in lab.events("update_refused")),
                             # Checked every second even while idle: the
                             # agent's polls wait 1 s, not 20 (fleet.c).
                             timeout=15, interval=0.3)
            assert sha256_of(lab.exe) == new_sha
            assert lab.agent_doc()["agent_sha256"] == new_sha
        # Refused once, not tried again.
        time.sleep(3)
        assert len([e for e in lab.events("update_found") if e.get("to") == bad_sha]) == 1
        lab.run_job()
        assert lab.agent.proc.poll() is None
    finally:
        lab.close()


def test_a_build_that_dies_at_start_is_rolled_back():
    lab = Lab(confirm_s=20)
    try:
        lab.wait_digest(lab.old_sha)
        bad_sha = lab.put_build(DIES_AT_START)
        lab.rescan()
        # The fake passes the trial, is installed and executed: it exits 1,
        # the watcher puts the previous copy back and starts it.
        assert lab.agent.wait(120) == 1, lab.agent.log_text()
        harness.wait_for("the previous copy back in place",
                         lambda: os.path.exists(lab.exe) and sha256_of(lab.exe) == lab.old_sha,
                         timeout=60, interval=0.3)
        pids = harness.wait_for("the previous copy running again", lab.agent_pids, timeout=60)
        assert lab.agent.proc.pid not in pids
        refused = os.path.join(lab.data_dir, "update", "refused.json")
        harness.wait_for("refused.json", lambda: os.path.exists(refused), timeout=30)
        with open(refused) as f:
            assert bad_sha in f.read()
        assert not os.path.exists(os.path.join(lab.data_dir, "update", "pending.json"))
        # The previous copy works: it takes a task.
        lab.run_job()
        assert sha256_of(lab.exe) == lab.old_sha
    finally:
        lab.close()


def test_pin_holds_the_fleet():
    lab = Lab()
    try:
        lab.wait_digest(lab.old_sha)
        d = lab.daemon
        # A labelled build beside the default one is wanted only when pinned.
        labelled = lab.put_build(lab.original + b"\0build 3\n", BUILD_NAME + "-3")
        listed = lab.rescan()
        assert [b["wanted"] for b in listed["builds"]] == [True, False], listed
        # Bad pins change nothing.
        for body in ({"sha256": "XYZ"}, {"sha256": labelled, "version": "1"}, {}, {"other": 1}):
            r = d.api("PUT", "/api/v1/agent-builds/pin", body, token=d.admin_token)
            assert r.status == 400, (body, r)
        r = d.api("PUT", "/api/v1/agent-builds/pin", {"sha256": labelled}, token=d.enroll_token)
        assert r.status in (401, 403), r
        r = d.api("PUT", "/api/v1/agent-builds/pin", {"sha256": labelled}, token=d.admin_token)
        assert r.status == 200 and r.json()["pin"] == {"sha256": labelled}, r
        assert [b["wanted"] for b in r.json()["builds"]] == [False, True], r.json()
        lab.wait_digest(labelled)
        assert sha256_of(lab.exe) == labelled
        # The pin is kept in the data folder.
        assert os.path.exists(os.path.join(d.data_dir, "agent-builds-pin.json"))
        r = d.api("DELETE", "/api/v1/agent-builds/pin", token=d.admin_token)
        assert r.status == 200 and r.json()["pin"] is None, r
        lab.wait_digest(lab.old_sha)  # back to the default build
        r = d.api("GET", "/api/v1/agent-builds/windows/x86_64", token=d.admin_token)
        assert r.status == 404, r
    finally:
        lab.close()


if __name__ == "__main__":
    harness.run_tests(globals())
