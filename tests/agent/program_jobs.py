"""What the program family's agent tests share: a program built once per
build tree, the Linux agent run for one task, a program job submitted with
`loadlab submit --program-dir`, and its result read back."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
from agent_wait import wait_agent  # noqa: E402

AGENT = os.path.join(harness.BUILD_DIR, "agent", "loadlab-agent")
LOADLAB = os.path.join(harness.BUILD_DIR, "cli", "loadlab")
HERE = os.path.dirname(os.path.abspath(__file__))
# The variants a program job of these tests asks for, and its warm runs.
VARIANTS = ["as-built", "rebase", "bind", "aslr-off"]
WARM_RUNS = 3


def build_cached(script, folder, timeout):
    """Runs tests/agent/SCRIPT FOLDER (it keeps what it built there): FOLDER."""
    r = subprocess.run(["sh", os.path.join(HERE, script), folder], capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return folder


def run_agent_once(url, data_dir, enroll_token, name, timeout=900):
    """The Linux agent NAME enrolled with ENROLL_TOKEN, run for one task:
    its exit code (agent_wait.wait_agent)."""
    log_path = os.path.join(data_dir, "agent.log")
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [AGENT, "--server", url, "--enroll-token", enroll_token, "--data-dir", data_dir,
             "--name", name, "--once"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    return wait_agent(proc, log_path, timeout, lambda: harness.kill_processes_under(data_dir))


def submit_program(d, folder, tmp, name, program, variants=VARIANTS, warm_runs=WARM_RUNS):
    """Job NAME of the program family (PROGRAM its "program" member) on the
    files of FOLDER, submitted by the admin: its id."""
    job_path = os.path.join(tmp, name + ".json")
    with open(job_path, "w") as f:
        json.dump({"name": name, "family": "program", "program": program, "variants": variants,
                   "measure": {"warm": {"runs": warm_runs, "warmup": 1}, "cold": {"runs": 1},
                               "noise": harness.NO_NOISE_RETAKES}}, f)
    env = dict(os.environ, LOADLAB_SERVER=d.url, LOADLAB_TOKEN=d.admin_token)
    r = subprocess.run([LOADLAB, "submit", job_path, "--program-dir", folder], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r
    return int(r.stdout.split("job ", 1)[1].split(":")[0])


def result_of(d, job_id):
    """The result of done job JOB_ID's one task."""
    job = d.api("GET", "/api/v1/jobs/%d" % job_id, token=d.admin_token).json()
    assert job["state"] == "done", job
    (task,) = job["tasks"]
    return d.api("GET", "/api/v1/results/%d" % task["result_id"], token=d.admin_token).json()


def run_job(d, data_dir, job_id, agent_name):
    """The Linux agent AGENT_NAME run for one task, which must exit 0:
    job JOB_ID's result."""
    code, log = run_agent_once(d.url, data_dir, d.enroll_token, agent_name)
    assert code == 0, log[-4000:]
    return result_of(d, job_id)
