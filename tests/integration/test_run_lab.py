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
    def __init__(self, local_agent=True, build_dir=BUILD_DIR, env=None):
        self.data_dir = tempfile.mkdtemp(prefix="loadlab-run-lab-")
        env = dict(os.environ, BUILD_DIR=build_dir, LISTEN="127.0.0.1:0",
                   DATA_DIR=self.data_dir, LOCAL_AGENT="1" if local_agent else "0", **(env or {}))
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
        # The script marked it a builder with the admin token (docs/builds.md)
        # before it printed the banner: it builds the ELF job below.
        assert agent["builder"] is True, agent
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


FAKE_CMAKE = """#!/bin/sh
# cmake as the test needs it: says what it was asked, then prints the noise
# of a recursive make build (or fails when FAIL_BUILD is set).
echo "$*" >>"$(dirname "$0")/calls"
for i in 1 2 3; do
    echo "gmake[2]: Entering directory '/somewhere/build'"
    echo "[ $((i * 30))%] Building C object cli/CMakeFiles/loadlab.dir/cmd_$i.c.o"
    echo "gmake[2]: Leaving directory '/somewhere/build'"
done
case "$*" in --build*) [ -z "${FAIL_BUILD:-}" ] || { echo "cmd_3.c:1: error: the fake failed"; exit 1; } ;; esac
exit 0
"""


def fake_build_dir():
    """A build folder whose binaries are this build's (symlinks) and a fake
    cmake first on PATH; returns (folder, env, calls file)."""
    root = tempfile.mkdtemp(prefix="loadlab-run-lab-build-")
    build = os.path.join(root, "build")
    for binary in ("server/loadlabd", "agent/loadlab-agent", "cli/loadlab"):
        os.makedirs(os.path.dirname(os.path.join(build, binary)), exist_ok=True)
        os.symlink(os.path.join(BUILD_DIR, binary), os.path.join(build, binary))
    os.makedirs(os.path.join(root, "bin"))
    with open(os.path.join(root, "bin", "cmake"), "w") as f:
        f.write(FAKE_CMAKE)
    os.chmod(os.path.join(root, "bin", "cmake"), 0o755)
    env = {"PATH": os.path.join(root, "bin") + ":" + os.environ["PATH"], "BUILD_FIRST": "1", "JOBS": "2"}
    return root, build, env, os.path.join(root, "bin", "calls")


def test_build_first_keeps_the_build_noise_in_a_log():
    """make run's build, as the script does it with BUILD_FIRST=1: the three
    binaries only (make run needs no test and no Windows agent), one line
    before, one after, the compiler's and make's lines in a log."""
    root, build, env, calls = fake_build_dir()
    try:
        lab = Lab(local_agent=False, build_dir=build, env=env)
        try:
            out = lab.banner
            lab.ctrl_c()
        finally:
            lab.close()
        log = os.path.join(build, "run-lab-build.log")
        assert "run-lab: building into %s (log: %s)" % (build, log) in out, out
        assert re.search(r"^run-lab: built in \d+ s$", out, re.M), out
        assert "Entering directory" not in out and "Building C object" not in out, out
        for line in out.splitlines():
            assert line.startswith(("run-lab: ", "  ", "Try, in another terminal:", "Ctrl-C stops both.")), line
        with open(log) as f:
            assert f.read().count("Entering directory") == 6
        with open(calls) as f:
            made = f.read().splitlines()
        assert made == ["-S . -B %s -DCMAKE_BUILD_TYPE=RelWithDebInfo" % build,
                        "--build %s -j 2 --target loadlabd loadlab-agent loadlab -- --no-print-directory" % build], made
        # A failed build: its log's tail, the log named, exit 2, nothing started.
        env["FAIL_BUILD"] = "1"
        p = subprocess.run(["bash", SCRIPT], cwd=SOURCE_DIR, capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, BUILD_DIR=build, LISTEN="127.0.0.1:0", DATA_DIR=os.path.join(root, "var"),
                                    LOCAL_AGENT="0", **env))
        assert p.returncode == 2, p
        assert "cmd_3.c:1: error: the fake failed" in p.stderr and "the build failed; the whole log: " + log in p.stderr, p
        assert "serves" not in p.stdout, p
    finally:
        shutil.rmtree(root, ignore_errors=True)


run_tests(globals())
