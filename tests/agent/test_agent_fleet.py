"""The Linux loadlab-agent as a fleet member against a real loadlabd.

Enrollment and its stored token, facts and labels, --once on a job, the
agent's own bounds check, the server stopping mid-task, the agent killed
mid-task, SIGTERM, cancellation and a refused token.

The jobs are of the elf family, run natively: what is asserted here is the
fleet side (agent/fleet/: lease, heartbeat, progress, spool, report), which
every family reaches through the same pipeline_run() and progress() calls
(agent/family/pipeline.h). So the test needs no Wine and takes no "wine"
lock. The pe family's own cancellation under Wine (no process of the
task's prefix left) is tests/agent/test_pe_pipeline.py's; a pe job through
the daemon and --once agents under Wine is test_column_report.py's.
"""
import json
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

AGENT = os.path.join(harness.BUILD_DIR, "agent", "loadlab-agent")

# An elf job small enough to finish in a few seconds natively.
TINY_JOB = harness.tiny_job("agent-tiny", "elf", 2)

# An elf job that takes long enough to be interrupted: every timed run of
# its variant waits SLOW_DELAY_US in its first library's _init (the
# known-effect wait, docs/rest-bodies.md, "delay_us"), so its warm phase
# lasts at least runs x SLOW_DELAY_US (10 s) whatever the machine's speed,
# with progress reported after every pass as for any job. No run is taken
# again for noise (it judges no timing).
SLOW_DELAY_US = 100000
SLOW_JOB = {
    "name": "agent-slow",
    "family": "elf",
    "generator": {"dlls": 8, "exports": 50},
    "variants": [{"name": "slow", "preset": "default", "delay_us": SLOW_DELAY_US}],
    "measure": {"warm": {"runs": int(os.environ.get("LOADLAB_TEST_SLOW_RUNS", "100")),
                         "warmup": 0}, "noise": harness.NO_NOISE_RETAKES},
}



class Agent:
    """A loadlab-agent process with its own data folder and log file."""

    def __init__(self, daemon, data_dir=None, extra=(), server=None):
        self.own_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="loadlab-agent-test-")
        self.log_path = os.path.join(self.data_dir, "agent-%d.log" % time.monotonic_ns())
        args = [AGENT, "--server", server or daemon.url, "--data-dir", self.data_dir,
                "--log-format", "json"]
        if daemon.enroll_token:
            args += ["--enroll-token", daemon.enroll_token]
        self.log = open(self.log_path, "wb")
        env = dict(os.environ)
        self.proc = subprocess.Popen(args + list(extra), stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log, env=env)

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout)
        finally:
            self.log.flush()

    def events(self):
        return harness.json_lines(self.log_path)

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the agent did not stop within %ds:\n%s" % (timeout, self.log_text()))
        finally:
            self.log.close()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        # A killed agent cannot stop the Wine services of its task's prefix.
        harness.kill_processes_under(self.data_dir)
        for marker in harness.SANITIZER_MARKERS:
            assert marker not in self.log_text(), self.log_text()[-4000:]
        if self.own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def wait_for(what, fn, timeout=60, interval=0.2):
    return harness.wait_for(what, fn, timeout=timeout, interval=interval)


def job_tasks(daemon, job_id):
    r = daemon.api("GET", "/api/v1/jobs/%d" % job_id, token=daemon.admin_token)
    assert r.status == 200, r
    return r.json()["tasks"]


def submit_and_start(daemon, spec):
    """Submits the job SPEC to DAEMON and starts an --once agent: (job, agent)."""
    job = daemon.submit(spec)
    return job, Agent(daemon, extra=["--once"])


def wait_for_progress(daemon, job):
    """Waits until the first task of JOB reports a phase: it is running."""
    wait_for("progress", lambda: job_tasks(daemon, job["id"])[0]["phase"], timeout=300)


results_of = harness.results_of


def agent_facts(work_dir):
    out = subprocess.run([AGENT, "facts", "--work-dir", work_dir], check=True,
                         capture_output=True, timeout=60)
    return json.loads(out.stdout)


def test_enroll_keeps_token_reports_facts_and_labels():
    with harness.Daemon() as d:
        a = Agent(d, extra=["--name", "lab-01", "--labels", "room=b12,disk_group=fast"])
        try:
            agents = wait_for("enrollment", lambda: d.api("GET", "/api/v1/agents",
                                                          token=d.admin_token).json()["agents"])
            assert len(agents) == 1, agents
            agent = agents[0]
            assert agent["name"] == "lab-01"
            assert agent["labels"] == {"room": "b12", "disk_group": "fast"}, agent["labels"]
            assert agent["facts"] == agent_facts(os.path.join(a.data_dir, "work")), agent["facts"]
            path = os.path.join(a.data_dir, "agent.json")
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
            with open(path) as f:
                identity = json.load(f)
            assert identity["id"] == agent["id"] and identity["token"].startswith("llagt_")
            # SIGTERM while idle (in a long poll): a clean, prompt stop.
            start = time.time()
            assert a.stop() == 0
            assert time.time() - start < 5
            # A restart uses the stored token: no second enrollment, even
            # without an enrollment token.
            d.enroll_token, enroll_token = None, d.enroll_token
            b = Agent(d, data_dir=a.data_dir)
            wait_for("the restarted agent's lease", lambda: any(
                e.get("event") == "agent_started" for e in b.events()))
            assert b.stop() == 0
            d.enroll_token = enroll_token
            agents = d.api("GET", "/api/v1/agents", token=d.admin_token).json()["agents"]
            assert [x["id"] for x in agents] == [agent["id"]], agents
        finally:
            a.close()


def test_once_runs_a_task_and_posts_its_result():
    with harness.Daemon() as d:
        job, a = submit_and_start(d, TINY_JOB)
        try:
            code = a.wait(600)
            assert code == 0, a.log_text()
            task = job_tasks(d, job["id"])[0]
            assert task["state"] == "done", task
            results = results_of(d, task["id"])
            assert len(results) == 1
            attempt, body = results[0]
            assert body["attempt"] == attempt == task["attempt"]
            assert body["variants"] and body["variants"][0]["name"] == "default"
            assert body["facts"]["runner"] in ("wine", "native")
            assert body["family"] == "elf" and body["runner"] == "native", body.get("runner")
            # Delivered: nothing left in the spool, the work folder removed.
            assert not os.listdir(os.path.join(a.data_dir, "spool"))
            assert not os.listdir(os.path.join(a.data_dir, "work"))
        finally:
            a.close()


def test_run_refuses_a_job_out_of_bounds():
    tmp = tempfile.mkdtemp(prefix="loadlab-agent-run-")
    try:
        path = os.path.join(tmp, "job.json")
        with open(path, "w") as f:
            json.dump(dict(TINY_JOB, generator={"dlls": 1000, "exports": 2}), f)
        out = subprocess.run([AGENT, "run", path], capture_output=True, timeout=60)
        assert out.returncode == 2, out
        lines = out.stderr.decode().strip().splitlines()
        assert len(lines) == 1 and "dlls" in lines[0], lines
        assert out.stdout == b""
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def restartable_daemon():
    """A daemon on a port of its own, which it listens on again when
    started again: the agents find it after a restart."""
    return harness.Daemon(["--listen", "127.0.0.1:%d" % harness.free_port()])


def test_server_restart_mid_task_delivers_once():
    with restartable_daemon() as d:
        job, a = submit_and_start(d, SLOW_JOB)
        try:
            wait_for_progress(d, job)
            d.stop()
            time.sleep(3)  # heartbeats and progress fail meanwhile
            d.start()
            code = a.wait(900)
            assert code == 0, a.log_text()
            task = job_tasks(d, job["id"])[0]
            assert task["state"] == "done", task
            assert len(results_of(d, task["id"])) == 1
            delivered = [e for e in a.events() if e.get("event") == "result_delivered"]
            assert len(delivered) == 1, a.log_text()
            assert not os.listdir(os.path.join(a.data_dir, "spool"))
        finally:
            a.close()


def test_spooled_result_is_delivered_on_start():
    """A result finished while the server was unreachable and the agent
    was stopped: the next start delivers it before leasing."""
    with restartable_daemon() as d:
        job, a = submit_and_start(d, TINY_JOB)
        b = None
        try:
            wait_for_progress(d, job)
            d.stop()
            spool = os.path.join(a.data_dir, "spool")
            wait_for("a spooled result", lambda: os.path.isdir(spool) and os.listdir(spool), timeout=600)
            assert a.stop() == 1  # stopped before the server took the result
            assert len(os.listdir(spool)) == 1
            d.start()
            b = Agent(d, data_dir=a.data_dir, extra=["--once"])
            wait_for("delivery", lambda: not os.listdir(spool), timeout=120)
            task = job_tasks(d, job["id"])[0]
            assert task["state"] == "done", task
            assert len(results_of(d, task["id"])) == 1
            assert b.stop() in (0, 1)
        finally:
            if b:
                b.close()
            a.close()


def test_killed_agent_task_is_leased_again():
    with harness.Daemon(["--lease-seconds", "2"]) as d:
        job, a = submit_and_start(d, SLOW_JOB)
        b = None
        try:
            wait_for_progress(d, job)
            a.stop(signal.SIGKILL)
            first = job_tasks(d, job["id"])[0]
            assert first["state"] == "leased" and first["attempt"] == 1, first
            wait_for("the lease to expire", lambda: job_tasks(d, job["id"])[0]["state"] == "queued",
                     timeout=30)
            # Another agent takes the task again as attempt 2.
            b = Agent(d, extra=["--once"])
            wait_for("the second lease", lambda: job_tasks(d, job["id"])[0]["attempt"] == 2,
                     timeout=60)
            assert b.stop() == 1  # stopped mid-task: reported back, exit 1
        finally:
            if b:
                b.close()
            a.close()


def test_sigterm_mid_task_gives_the_task_back():
    with harness.Daemon() as d:
        job, a = submit_and_start(d, SLOW_JOB)
        try:
            wait_for_progress(d, job)
            start = time.time()
            assert a.stop(timeout=60) == 1
            assert time.time() - start < 30
            task = job_tasks(d, job["id"])[0]
            assert task["state"] == "queued", task
            assert "stopped" in (task["last_error"] or ""), task
            assert results_of(d, task["id"]) == []
        finally:
            a.close()


def test_cancel_mid_task_stops_and_posts_nothing():
    with harness.Daemon(["--lease-seconds", "3"]) as d:
        job, a = submit_and_start(d, SLOW_JOB)
        try:
            wait_for_progress(d, job)
            r = d.api("POST", "/api/v1/jobs/%d/cancel" % job["id"], token=d.admin_token)
            assert r.status == 200, r
            code = a.wait(60)
            assert code == 1, a.log_text()
            abandoned = [e for e in a.events() if e.get("event") == "task_abandoned"]
            assert abandoned and "cancelled" in abandoned[0].get("reason", ""), a.log_text()
            task = job_tasks(d, job["id"])[0]
            assert task["state"] == "cancelled", task
            assert results_of(d, task["id"]) == []
            assert not any(e.get("event") in ("failure_reported", "result_delivered")
                           for e in a.events()), a.log_text()
        finally:
            a.close()


def test_refused_token_exits_with_a_clear_message():
    with harness.Daemon() as d:
        data_dir = tempfile.mkdtemp(prefix="loadlab-agent-test-")
        try:
            with open(os.path.join(data_dir, "agent.json"), "w") as f:
                json.dump({"id": 1, "token": "llagt_" + "0" * 64}, f)
            a = Agent(d, data_dir=data_dir)
            code = a.wait(60)
            assert code == 2
            last = a.log_text().strip().splitlines()[-1]
            assert last.startswith("loadlab-agent: ") and "token" in last, last
            a.close()
        finally:
            shutil.rmtree(data_dir, ignore_errors=True)


def test_no_enrollment_token_is_a_usage_error():
    with harness.Daemon() as d:
        d.enroll_token = None
        a = Agent(d)
        try:
            assert a.wait(30) == 2
            assert "--enroll-token" in a.log_text()
        finally:
            a.close()


if __name__ == "__main__":
    harness.run_tests(globals())
