"""Jobs that say why they wait (issue 14), over real HTTP and the real CLI.

A job whose matrix names os=winxp, with only a Linux agent enrolled (its
facts those `loadlab-agent facts` reports on this machine): the 201 answer
warns, GET /api/v1/jobs/{id}, `loadlab status` and `loadlab submit --wait`
name the reason; enrolling an agent with those facts (a REST enrollment,
as an agent does) makes the reason disappear and the task lease; a
quarantined or offline matching agent is named as such.
"""
import json
import os
import subprocess
import time

from harness import BUILD_DIR, LOADLAB, Daemon, load_example, run_tests
from schemacheck import validate

AGENT = os.path.join(BUILD_DIR, "agent", "loadlab-agent")
XP = {"os": "winxp", "arch": "x86", "disk": "hdd"}


def linux_facts():
    """The facts the Linux agent of this build reports here."""
    p = subprocess.run([AGENT, "facts"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    facts = json.loads(p.stdout)
    assert facts["os"] == "linux", facts
    return facts


def xp_job(name="waits-for-xp"):
    return dict(load_example("pietrek-2000.json"), name=name,
                matrix={"cells": {"os": ["winxp"]}})


def cli(d, *args):
    p = subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token] + list(args),
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def tasks(d, job_id):
    r = d.api("GET", "/api/v1/jobs/%d" % job_id, token=d.admin_token)
    assert r.status == 200, r
    validate("job.json", r.json())
    return r.json()["tasks"]


def agent_id(d, name):
    agents = d.api("GET", "/api/v1/agents", token=d.admin_token).json()["agents"]
    return [a["id"] for a in agents if a["name"] == name][0]


def test_a_job_no_agent_matches_says_why_until_one_enrolls():
    with Daemon() as d:
        d.enroll("lab-linux", linux_facts())
        created = d.submit(xp_job())
        validate("job_created.json", created)
        assert created["task_count"] == 1 and created["state"] == "queued", created
        assert created["warnings"] == ["1 task: no agent has os=winxp"], created
        [task] = tasks(d, created["id"])
        assert task["waiting"] == {"could_run": False, "reason": "no agent has os=winxp"}, task

        code, out, err = cli(d, "status", str(created["id"]))
        assert code == 0, (out, err)
        assert "waiting: task %d: no agent has os=winxp\n" % task["id"] in out, out

        # An agent with those facts enrolls: nothing to say any more.
        _, xp_token = d.enroll("xp-1", XP)
        [task] = tasks(d, created["id"])
        assert task["waiting"] == {"could_run": True, "reason": None}, task
        code, out, err = cli(d, "status", str(created["id"]))
        assert code == 0 and "waiting" not in out, out

        # Quarantined, it is named; back in the fleet, it leases the task.
        xp_id = agent_id(d, "xp-1")
        r = d.api("PATCH", "/api/v1/agents/%d" % xp_id, {"quarantined": True}, token=d.admin_token)
        assert r.status == 200, r
        [task] = tasks(d, created["id"])
        assert task["waiting"] == {"could_run": False,
                                   "reason": "the only matching agent (xp-1) is quarantined"}, task
        d.api("PATCH", "/api/v1/agents/%d" % xp_id, {"quarantined": False}, token=d.admin_token)
        r = d.api("POST", "/api/v1/lease", {"wait": 0}, token=xp_token)
        assert r.status == 200 and r.json()["task_id"] == task["id"], r
        [task] = tasks(d, created["id"])
        assert task["state"] == "leased" and task["waiting"] is None, task

        # A job every agent can run has no warnings.
        created = d.submit(dict(xp_job("runs-anywhere"), matrix={"cells": {"os": ["linux"]}}))
        assert created["warnings"] == [], created


def test_submit_warns_and_wait_says_why_then_goes_on():
    with Daemon() as d:
        d.enroll("lab-linux", linux_facts())
        path = os.path.join(d.data_dir, "xp.json")
        with open(path, "w") as f:
            json.dump(xp_job(), f)
        p = subprocess.Popen([LOADLAB, "--server", d.url, "--token", d.admin_token, "submit",
                              path, "--wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        try:
            first = p.stdout.readline()
            assert first.startswith("job ") and first.endswith(": 1 task, queued\n"), first
            job_id = int(first.split()[1].rstrip(":"))
            line = p.stdout.readline()
            assert line == "job %d queued: 0/1 tasks done, 1 queued | waiting: no agent has " \
                           "os=winxp\n" % job_id, line
            d.enroll("xp-1", XP)
            line = p.stdout.readline()
            assert line == "job %d queued: 0/1 tasks done, 1 queued\n" % job_id, line
            r = d.api("POST", "/api/v1/jobs/%d/cancel" % job_id, {}, token=d.admin_token)
            assert r.status == 200, r
            out, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        assert p.returncode == 1, (p.returncode, out, err)
        assert err == "loadlab submit: warning: 1 task: no agent has os=winxp\n", err


def test_offline_matching_agents_are_named_with_the_time_last_seen():
    with Daemon(extra_args=["--offline-after", "1"]) as d:
        d.enroll("xp-1", XP)
        created = d.submit(xp_job())
        assert created["warnings"] == [], created
        time.sleep(2.2)
        [task] = tasks(d, created["id"])
        reason = task["waiting"]["reason"]
        assert task["waiting"]["could_run"] is False, task
        assert reason.startswith("the only matching agent (xp-1) is offline since 20"), reason
        assert reason.endswith("Z"), reason
        d.enroll("xp-2", XP)
        d.api("PATCH", "/api/v1/agents/%d" % agent_id(d, "xp-2"), {"quarantined": True},
              token=d.admin_token)
        [task] = tasks(d, created["id"])
        assert task["waiting"]["reason"].startswith("matching agents are offline since "), task
        assert task["waiting"]["reason"].endswith(" or quarantined"), task


run_tests(globals())
