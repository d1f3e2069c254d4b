"""`make run`'s script, scripts/run-lab.sh: the daemon and a local agent.

Started as a terminal would start it (its own process group, SIGINT at its
default), on 127.0.0.1:0 with a private DATA_DIR: it prints where the
dashboard and tokens are and a command to try; the local agent enrolls
with the enrollment token and is online, and runs the ELF example
(schemas/examples/elf-relocations.json, at 2 libraries) to the end,
natively. Ctrl-C (SIGINT to the whole process group, as a terminal sends
it) stops both processes; LOCAL_AGENT=0 starts the daemon alone. No pe
job runs here, so no Wine starts.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from harness import BUILD_DIR, SOURCE_DIR, load_example, request, run_tests

SCRIPT = os.path.join(SOURCE_DIR, "scripts", "run-lab.sh")
# The ELF example, small: the local agent builds, verifies and times it.
ELF_JOB = dict(load_example("elf-relocations.json"), generator={"dlls": 2, "exports": 20},
               variants=["default", "symbolic"], measure={"warm": {"runs": 3, "warmup": 1}})


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose (its parent, the script, reaps it).
    with open("/proc/%d/stat" % pid) as f:
        return f.read().split(")")[-1].split()[0] != "Z"


class Lab:
    def __init__(self, local_agent=True):
        self.data_dir = tempfile.mkdtemp(prefix="loadlab-run-lab-")
        env = dict(os.environ, BUILD_DIR=BUILD_DIR, LISTEN="127.0.0.1:0",
                   DATA_DIR=self.data_dir, LOCAL_AGENT="1" if local_agent else "0")
        # A terminal's foreground job: SIGINT at its default, own group.
        self.proc = subprocess.Popen(
            ["bash", SCRIPT], cwd=SOURCE_DIR, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.banner = ""
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            assert line, "run-lab.sh ended early: %r" % self.banner
            self.banner += line
            if line.startswith("Ctrl-C stops both"):
                break
        m = re.search(r"loadlabd \(pid (\d+)\) serves (http://\S+)", self.banner)
        assert m, self.banner
        self.daemon_pid, self.url = int(m.group(1)), m.group(2)
        m = re.search(r"local agent   pid (\d+)", self.banner)
        self.agent_pid = int(m.group(1)) if m else None
        with open(os.path.join(self.data_dir, "admin.token")) as f:
            self.admin = f.read().strip()

    def agents(self):
        r = request(self.url + "/api/v1/agents", token=self.admin)
        assert r.status == 200, r
        return r.json()["agents"]

    def run_elf_job(self):
        """Submits ELF_JOB and waits (60 s) for the local agent to finish it."""
        r = request(self.url + "/api/v1/jobs", "POST", ELF_JOB, token=self.admin)
        assert r.status == 201, r
        job_id = r.json()["id"]
        deadline = time.time() + 60
        while time.time() < deadline:
            job = request(self.url + "/api/v1/jobs/%d" % job_id, token=self.admin).json()
            if job["state"] in ("done", "failed", "cancelled"):
                break
            time.sleep(0.3)
        assert job["state"] == "done", job
        [task] = job["tasks"]
        result = request(self.url + "/api/v1/results/%d" % task["result_id"], token=self.admin).json()
        assert result["family"] == "elf" and result["runner"] == "native", result.get("family")
        for v in result["variants"]:
            assert v["valid"] is True and len(v["warm"]["samples_us"]) == 3, (v["name"], v.get("invalid_reason"))

    def ctrl_c(self):
        os.killpg(self.proc.pid, signal.SIGINT)
        out, _ = self.proc.communicate(timeout=60)
        return out

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid in (self.daemon_pid, self.agent_pid):
            if pid and alive(pid):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.data_dir, ignore_errors=True)


def test_make_run_starts_the_daemon_and_an_enrolled_agent_and_ctrl_c_stops_both():
    lab = Lab()
    try:
        assert "dashboard     %s/" % lab.url in lab.banner, lab.banner
        assert os.path.join(lab.data_dir, "admin.token") in lab.banner, lab.banner
        assert "submit schemas/examples/quickstart.json --wait" in lab.banner, lab.banner
        assert "LOADLAB_SERVER=%s" % lab.url in lab.banner, lab.banner
        assert lab.agent_pid and alive(lab.agent_pid) and alive(lab.daemon_pid), lab.banner
        deadline = time.time() + 30
        while time.time() < deadline and not lab.agents():
            time.sleep(0.2)
        [agent] = lab.agents()
        assert agent["state"] == "online" and agent["facts"]["os"] == "linux", agent
        # The agent writes its credentials after the daemon has enrolled it,
        # so the file may come a moment after the agent is listed.
        creds = os.path.join(lab.data_dir, "agent", "agent.json")
        deadline = time.time() + 10
        while time.time() < deadline and not os.path.exists(creds):
            time.sleep(0.1)
        assert os.path.exists(creds), os.listdir(lab.data_dir)
        lab.run_elf_job()
        out = lab.ctrl_c()
        assert lab.proc.returncode == 0, (lab.proc.returncode, out)
        # The agent is stopped first, while the daemon still listens.
        assert out.index("stopping loadlab-agent") < out.index("stopping loadlabd"), out
        assert not alive(lab.agent_pid) and not alive(lab.daemon_pid), out
        with open(os.path.join(lab.data_dir, "agent.log")) as f:
            assert "agent_stopped" in f.read()
        with open(os.path.join(lab.data_dir, "loadlabd.log")) as f:
            assert "stopped" in f.read()
    finally:
        lab.close()


def test_local_agent_0_starts_the_daemon_alone():
    lab = Lab(local_agent=False)
    try:
        assert "not started (LOCAL_AGENT=0)" in lab.banner, lab.banner
        assert lab.agent_pid is None
        time.sleep(1)
        assert lab.agents() == []
        out = lab.ctrl_c()
        assert lab.proc.returncode == 0 and not alive(lab.daemon_pid), out
    finally:
        lab.close()


run_tests(globals())
