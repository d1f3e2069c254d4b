"""The loadlab CLI against a real loadlabd, and the daemon's bodies against
schemas/: every response the CLI consumes is validated with schemacheck.

A test-side fake agent (plain HTTP calls: enroll, lease, heartbeat,
progress, result, fail) completes tasks so that `submit --wait` can end.
"""
import atexit
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time

import schemacheck
from harness import LOADLAB, LOADLABD, Daemon, free_port, load_example, run_tests
from schemacheck import validate

_shared = None
_tmp = tempfile.mkdtemp(prefix="loadlab-cli-test-")
atexit.register(shutil.rmtree, _tmp, True)


def shared_daemon():
    """One daemon for the tests that do not care what else is queued."""
    global _shared
    if _shared is None:
        assert os.access(LOADLABD, os.X_OK), "%s is not built" % LOADLABD
        _shared = Daemon().start()
        atexit.register(_shared.close)
    return _shared


def cli(args, d=None, token="admin", server=None, env=None, timeout=60, stdin=None):
    """Runs build/cli/loadlab with ARGS; returns (exit code, stdout, stderr).

    The global options come from D unless SERVER/TOKEN say otherwise
    (token=None: no --token). LOADLAB_SERVER/LOADLAB_TOKEN are removed from
    the environment unless ENV sets them.
    """
    argv = [LOADLAB]
    if server is None and d is not None:
        server = d.url
    if server:
        argv += ["--server", server]
    if token == "admin" and d is not None:
        token = d.admin_token
    if token and token != "admin":
        argv += ["--token", token]
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("LOADLAB_SERVER", "LOADLAB_TOKEN")}
    full_env.update(env or {})
    p = subprocess.run(argv + list(args), capture_output=True, text=True, timeout=timeout,
                       env=full_env, input=stdin)
    return p.returncode, p.stdout, p.stderr


def assert_error(result, *needles):
    """Exit 2, nothing on stdout, one line on stderr containing every needle."""
    code, out, err = result
    assert code == 2, "exit %d, stdout %r, stderr %r" % (code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1, "stderr is not one line: %r" % err
    for n in needles:
        assert n in err, "%r not in stderr %r" % (n, err)
    return err


def write_job(job):
    fd, path = tempfile.mkstemp(suffix=".json", dir=_tmp)
    with os.fdopen(fd, "w") as f:
        json.dump(job, f)
    return path


def submitted_id(out):
    m = re.match(r"job (\d+): (\d+) tasks?, (\w+)$", out.splitlines()[0])
    assert m, "unexpected submit output %r" % out
    return int(m.group(1)), int(m.group(2)), m.group(3)



def one_task_job(name, os_value, **over):
    job = {"name": name, "family": "pe", "generator": {"dlls": 2, "exports": 3},
           "variants": ["default", "rebase"], "measure": {"warm": {"runs": 3, "warmup": 1}},
           "matrix": {"cells": {"os": [os_value]}}}
    job.update(over)
    validate("job_submit.json", job)
    return job


class FakeAgent:
    """An agent made of HTTP calls; every answer is checked against schemas/."""

    def __init__(self, d, name, facts, labels=None, check_enrolled=False):
        body = {"name": name, "facts": facts, "labels": labels or {}}
        validate("agent_enroll.json", body)
        r = d.api("POST", "/api/v1/agents/enroll", body, token=d.enroll_token)
        assert r.status == 201, r
        # Only test_agents_lists_the_fleet checks the enrollment answer, so
        # that a mismatch there does not hide what the other tests check.
        if check_enrolled:
            validate("agent_enrolled.json", r.json())
        self.d, self.id, self.token = d, r.json()["id"], r.json()["token"]

    def call(self, path, body, schema, status=200):
        r = self.d.api("POST", path, body, token=self.token)
        assert r.status == status, r
        if schema:
            validate(schema, r.json())
        return r.json()

    def lease(self, wait=5):
        r = self.d.api("POST", "/api/v1/lease", {"wait": wait}, token=self.token,
                       timeout=wait + 30)
        assert r.status in (200, 204), r
        if r.status == 204:
            assert not r.body, r
            return None
        validate("lease.json", r.json())
        return r.json()

    def heartbeat(self):
        return self.call("/api/v1/agents/%d/heartbeat" % self.id, {}, "heartbeat.json")

    def progress(self, lease, phase, percent):
        body = {"attempt": lease["attempt"], "phase": phase, "percent": percent}
        validate("progress_request.json", body)
        return self.call("/api/v1/tasks/%d/progress" % lease["task_id"], body, "progress.json")

    def result(self, lease):
        body = {"attempt": lease["attempt"], "facts": {"os": "test"},
                "variants": [{"name": v["name"], "warm": {"samples_us": [100, 101, 99]}}
                             for v in lease["job"]["variants"]]}
        validate("result.json", body)
        return self.call("/api/v1/tasks/%d/result" % lease["task_id"], body,
                         "result_accepted.json")

    def fail(self, lease, retryable):
        body = {"attempt": lease["attempt"], "reason": "the fake agent gives up",
                "retryable": retryable}
        validate("fail_request.json", body)
        return self.call("/api/v1/tasks/%d/fail" % lease["task_id"], body, "fail.json")


def wait_for(proc, timeout=60):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError("loadlab did not finish; stdout %r stderr %r" % (out, err))
    return proc.returncode, out, err


def start_wait(d, job_file, *extra):
    return subprocess.Popen([LOADLAB, "--server", d.url, "--token", d.admin_token, "submit",
                             job_file, "--wait"] + list(extra), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_submitted(proc):
    """The first line of `submit --wait`: the job id."""
    line = proc.stdout.readline()
    job_id, _, _ = submitted_id(line)
    return job_id


# Without a daemon.

def test_help_and_version():
    code, out, err = cli(["--help"])
    assert code == 0 and not err, (code, err)
    for name in ("submit", "status", "jobs", "cancel", "agents", "report", "compare", "pe",
                 "--server", "--token", "LOADLAB_SERVER", "LOADLAB_TOKEN"):
        assert name in out, "%s missing from --help" % name
    for name in ("submit", "status", "jobs", "cancel", "agents", "report", "compare"):
        code, out, err = cli([name, "--help"])
        assert code == 0 and out.startswith("usage: loadlab %s" % name) and not err, (name, out)
    code, out, err = cli(["--version"])
    assert code == 0 and re.match(r"^loadlab \d+\.\d+\.\d+\n$", out), out
    code, out, err = cli([])
    assert code == 2 and "usage:" in err


def test_bad_arguments_exit_2_with_one_line():
    server = "http://127.0.0.1:%d" % free_port()
    bad = os.path.join(_tmp, "not-json.json")
    with open(bad, "w") as f:
        f.write("{not json")
    cases = [
        (["frobnicate"], "unknown command"),
        (["--colour", "jobs"], "unknown option"),
        (["--server"], "needs a value"),
        (["status"], "expects one JOB"),
        (["status", "abc"], "not a whole number"),
        (["status", "0"], "between"),
        (["cancel", "1", "2"], "expects one JOB"),
        (["jobs", "--limit", "0"], "--limit"),
        (["jobs", "--limit"], "needs a value"),
        (["jobs", "extra"], "takes no arguments"),
        (["jobs", "--bogus"], "unknown option"),
        (["report", "1", "--format", "xml"], "--format"),
        (["compare", "1"], "two job ids"),
        (["compare", "1", "2", "--max-regression", "lots"], "--max-regression"),
        (["compare", "1", "2", "--max-regression", "-5"], "--max-regression"),
        (["submit"], "one job FILE"),
        (["submit", os.path.join(_tmp, "missing.json")], "missing.json"),
        (["submit", bad], bad),
    ]
    for args, needle in cases:
        assert_error(cli(["--server", server] + args if args[0] != "--server" else args,
                         token=None), needle)
    assert_error(cli(["jobs"], server="ftp://127.0.0.1/", token=None), "http://")


def test_unreachable_server_exit_2():
    url = "http://127.0.0.1:%d" % free_port()
    for args in (["jobs"], ["status", "1"], ["agents"], ["cancel", "1"],
                 ["submit", os.path.join(schemacheck.EXAMPLES, "churn.json")],
                 ["report", "1"], ["compare", "1", "2"]):
        assert_error(cli(args, server=url, token="t"), "Cannot reach the server", url)


# Against the real daemon.

def test_daemon_health_and_error_bodies_match_schemas():
    d = shared_daemon()
    r = d.api("GET", "/healthz")
    assert r.status == 200, r
    validate("health.json", r.json())
    for method, path, token, status in (
            ("GET", "/api/v1/jobs", None, 401),
            ("GET", "/api/v1/jobs", "wrong", 401),
            ("GET", "/api/v1/jobs/999999", d.admin_token, 404),
            ("POST", "/api/v1/jobs", d.admin_token, 400)):
        r = d.api(method, path, {"name": "x"} if method == "POST" else None, token=token)
        assert r.status == status, (method, path, r)
        validate("error.json", r.json())


def test_daemon_accepts_examples_and_refuses_what_the_schema_refuses():
    d = shared_daemon()
    expected_tasks = {"pietrek-2000.json": 4, "office-cold-start.json": 2, "churn.json": 2,
                      "elf-relocations.json": 1, "quickstart.json": 1}
    for name, tasks in expected_tasks.items():
        r = d.api("POST", "/api/v1/jobs", load_example(name), token=d.admin_token)
        assert r.status == 201, (name, r)
        validate("job_created.json", r.json())
        assert r.json()["task_count"] == tasks, (name, r.json())
        job = d.job(r.json()["id"])
        assert job["spec"]["name"] == load_example(name)["name"]
        assert len(job["tasks"]) == tasks
    base = load_example("pietrek-2000.json")
    wrong = [dict(base, family="macho"), dict(base, generator={"dlls": 0, "exports": 1}),
             dict(base, generator={"dlls": 257, "exports": 1}),
             dict(base, generator={"dlls": 256, "exports": 4096}),  # product > 100000
             dict(base, colour="red"), dict(base, variants=["relr"]),
             dict(base, measure={"warm": {"runs": 0}}),
             dict(base, matrix={"cells": {"OS": ["win10"]}})]
    for job in wrong:
        r = d.api("POST", "/api/v1/jobs", job, token=d.admin_token)
        assert r.status == 400, ("accepted", job, r)
        validate("error.json", r.json())


def test_submit_prints_id_and_task_count():
    d = shared_daemon()
    code, out, err = cli(["submit", os.path.join(schemacheck.EXAMPLES, "pietrek-2000.json")], d)
    assert code == 0, (code, out, err)
    job_id, tasks, state = submitted_id(out)
    assert tasks == 4 and state == "queued", out
    job = d.job(job_id)
    assert job["name"] == "pietrek-2000" and job["task_count"] == 4
    cells = sorted((t["cell"]["os"], t["cell"]["disk"]) for t in job["tasks"])
    assert cells == [("win10", "hdd"), ("win10", "ssd"), ("winxp", "hdd"), ("winxp", "ssd")]
    # From stdin too.
    with open(os.path.join(schemacheck.EXAMPLES, "churn.json")) as f:
        code, out, err = cli(["submit", "-"], d, stdin=f.read())
    assert code == 0 and submitted_id(out)[1] == 2, (code, out, err)


def test_submit_refused_job_exits_2_with_server_message():
    d = shared_daemon()
    path = write_job(dict(load_example("pietrek-2000.json"), family="macho"))
    err = assert_error(cli(["submit", path], d), "HTTP 400")
    assert "family" in err, err


def test_jobs_lists_newest_first_and_filters():
    d = shared_daemon()
    ids = []
    for name in ("jobs-a", "jobs-b"):
        code, out, err = cli(["submit", write_job(one_task_job(name, "nowhere"))], d)
        assert code == 0, err
        ids.append(submitted_id(out)[0])
    r = d.api("GET", "/api/v1/jobs", token=d.admin_token)
    assert r.status == 200, r
    validate("job_list.json", r.json())
    listed = [j["id"] for j in r.json()["jobs"]]
    assert listed == sorted(listed, reverse=True), listed
    code, out, err = cli(["jobs"], d)
    assert code == 0, err
    rows = out.splitlines()
    assert rows[0].split()[:4] == ["ID", "NAME", "FAMILY", "STATE"], rows[0]
    first = [int(line.split()[0]) for line in rows[1:] if line.split()[0].isdigit()]
    assert first.index(ids[1]) < first.index(ids[0]), first
    assert "jobs-a" in out and "jobs-b" in out
    code, out, err = cli(["jobs", "--limit", "1"], d)
    assert code == 0 and [l.split()[0] for l in out.splitlines()[1:2]] == [str(ids[1])], out
    assert cli(["cancel", str(ids[0])], d)[0] == 0
    code, out, err = cli(["jobs", "--state", "cancelled"], d)
    assert code == 0, err
    states = {line.split()[3] for line in out.splitlines()[1:] if line.split()[0].isdigit()}
    assert states == {"cancelled"} and re.search(r"^%d\s" % ids[0], out, re.M), out
    r = d.api("GET", "/api/v1/jobs?state=cancelled&limit=1", token=d.admin_token)
    assert r.status == 200 and len(r.json()["jobs"]) == 1, r
    validate("job_list.json", r.json())
    assert_error(cli(["jobs", "--state", "sleeping"], d), "HTTP 400")


def test_status_shows_job_and_tasks():
    d = shared_daemon()
    code, out, err = cli(["submit", os.path.join(schemacheck.EXAMPLES, "pietrek-2000.json")], d)
    job_id = submitted_id(out)[0]
    job = d.job(job_id)
    code, out, err = cli(["status", str(job_id)], d)
    assert code == 0, err
    assert out.startswith("job %d pietrek-2000 (pe): queued" % job_id), out
    for cell in ("os=winxp,disk=hdd", "os=winxp,disk=ssd", "os=win10,disk=hdd",
                 "os=win10,disk=ssd"):
        assert cell in out, (cell, out)
    for task in job["tasks"]:
        assert re.search(r"^%d\s+os=" % task["id"], out, re.M), (task["id"], out)
    assert_error(cli(["status", "999999"], d), "HTTP 404", "not_found")


def test_cancel_changes_state():
    d = shared_daemon()
    code, out, err = cli(["submit", write_job(one_task_job("cancel-me", "nowhere"))], d)
    job_id = submitted_id(out)[0]
    code, out, err = cli(["cancel", str(job_id)], d)
    assert code == 0 and out == "job %d: cancelled\n" % job_id, (code, out, err)
    job = d.job(job_id)
    assert job["state"] == "cancelled", job["state"]
    assert all(t["state"] == "cancelled" for t in job["tasks"]), job["tasks"]
    assert job["tasks_by_state"]["cancelled"] == 1, job["tasks_by_state"]
    assert_error(cli(["cancel", str(job_id)], d), "HTTP 409", "conflict")
    # The cancel answer itself is a JOB_SUMMARY.
    code, out, err = cli(["submit", write_job(one_task_job("cancel-api", "nowhere"))], d)
    r = d.api("POST", "/api/v1/jobs/%d/cancel" % submitted_id(out)[0], {}, token=d.admin_token)
    assert r.status == 200, r
    validate("job_summary.json", r.json())
    assert r.json()["state"] == "cancelled"


def test_agents_lists_the_fleet():
    d = shared_daemon()
    a = FakeAgent(d, "xp-lab-1", {"os": "winxp", "disk": "hdd", "cores": 2,
                                  "toolchains": ["mingw"]}, {"rack": "north"},
                  check_enrolled=True)
    b = FakeAgent(d, "w10-lab-2", {"os": "win10", "disk": "ssd"})
    a.heartbeat()
    r = d.api("GET", "/api/v1/agents", token=d.admin_token)
    assert r.status == 200, r
    validate("agent_list.json", r.json())
    code, out, err = cli(["agents"], d)
    assert code == 0, err
    assert out.splitlines()[0].split()[:3] == ["ID", "NAME", "STATE"], out
    for agent in (a, b):
        assert re.search(r"^%d\s+%s\s" % (agent.id, "xp-lab-1" if agent is a else "w10-lab-2"),
                         out, re.M), out
    assert "rack=north" in out and "os=winxp" in out, out
    r = d.api("PATCH", "/api/v1/agents/%d" % b.id, {"quarantined": True, "labels": {"x": "y"}},
              token=d.admin_token)
    assert r.status == 200, r
    validate("agent.json", r.json())
    assert r.json()["state"] == "quarantined" and r.json()["labels"] == {"x": "y"}
    code, out, err = cli(["agents"], d)
    assert re.search(r"^%d\s+w10-lab-2\s+quarantined" % b.id, out, re.M), out


def test_submit_wait_exits_0_when_the_fake_agent_completes():
    with Daemon() as d:
        agent = FakeAgent(d, "wait-agent", {"os": "wait-os"})
        assert agent.lease(wait=0) is None
        proc = start_wait(d, write_job(one_task_job("wait-done", "wait-os")))
        job_id = wait_submitted(proc)
        lease = agent.lease(wait=10)
        assert lease and lease["job_id"] == job_id, lease
        assert [v["name"] for v in lease["job"]["variants"]] == ["default", "rebase"]
        beat = agent.heartbeat()
        assert [t["task_id"] for t in beat["tasks"]] == [lease["task_id"]], beat
        for phase, percent in (("generate", 0), ("build", 50), ("warm", 90)):
            answer = agent.progress(lease, phase, percent)
            assert answer["cancelled"] is False, answer
            time.sleep(0.6)
        job = d.job(job_id)
        task = job["tasks"][0]
        assert (task["state"], task["phase"], task["percent"]) == ("leased", "warm", 90), task
        assert task["agent_id"] == agent.id, task
        accepted = agent.result(lease)
        assert agent.result(lease) == accepted  # a replay gets the same answer
        code, out, err = wait_for(proc)
        assert code == 0, (code, out, err)
        assert not err, err
        # The progress, then the job's report: the table `loadlab report`
        # prints, after one empty line.
        progress, report = out.split("\n\n", 1)
        lines = progress.splitlines()
        assert lines[-1].startswith("job %d done: 1/1 tasks done" % job_id), out
        # Not a terminal: plain lines, each printed once.
        assert "\r" not in out and len(lines) == len(set(lines)), out
        code, table, err = cli(["report", str(job_id)], d)
        assert code == 0 and table.strip() and report == table, (report, table, err)
        job = d.job(job_id)
        assert job["state"] == "done" and job["tasks"][0]["result_id"] == accepted["result_id"]
        # --quiet: the progress only, ending on the job's last line.
        proc = start_wait(d, write_job(one_task_job("wait-quiet", "wait-os")), "--quiet")
        job_id = wait_submitted(proc)
        lease = agent.lease(wait=10)
        assert lease and lease["job_id"] == job_id, lease
        agent.result(lease)
        code, out, err = wait_for(proc)
        assert code == 0 and not err, (code, out, err)
        assert out.splitlines()[-1].startswith("job %d done: 1/1 tasks done" % job_id), out
        assert "\n\n" not in out, out
        code, out, err = cli(["submit", write_job(one_task_job("quiet-alone", "wait-os")), "--quiet"], d)
        assert code == 2 and "--quiet goes with --wait" in err, (code, out, err)


def test_submit_wait_exits_1_when_cancelled_or_failed():
    with Daemon() as d:
        proc = start_wait(d, write_job(one_task_job("wait-cancel", "nobody")))
        job_id = wait_submitted(proc)
        time.sleep(1.5)
        r = d.api("POST", "/api/v1/jobs/%d/cancel" % job_id, {}, token=d.admin_token)
        assert r.status == 200, r
        code, out, err = wait_for(proc)
        assert code == 1 and "cancelled" in out.splitlines()[-1], (code, out, err)

        agent = FakeAgent(d, "fail-agent", {"os": "fail-os"})
        proc = start_wait(d, write_job(one_task_job("wait-fail", "fail-os")))
        job_id = wait_submitted(proc)
        lease = agent.lease(wait=10)
        assert lease and lease["job_id"] == job_id, lease
        failed = agent.fail(lease, retryable=False)
        assert failed["state"] == "dead", failed
        code, out, err = wait_for(proc)
        assert code == 1 and "failed" in out.splitlines()[-1], (code, out, err)


def test_wrong_or_missing_token_exits_2_with_one_line():
    d = shared_daemon()
    for args in (["jobs"], ["agents"], ["status", "1"],
                 ["submit", os.path.join(schemacheck.EXAMPLES, "churn.json")]):
        assert_error(cli(args, d, token="lla_not-a-token"), "HTTP 401", "unauthorized")
        assert_error(cli(args, d, token=None), "HTTP 401", "LOADLAB_TOKEN")


def test_user_tokens_and_revocation():
    d = shared_daemon()
    body = {"kind": "user", "name": "ci"}
    validate("token_create.json", body)
    r = d.api("POST", "/api/v1/tokens", body, token=d.admin_token)
    assert r.status == 201, r
    validate("token_created.json", r.json())
    user = r.json()
    code, out, err = cli(["submit", write_job(one_task_job("by-user", "nowhere"))], d,
                         token=user["token"])
    assert code == 0, err
    r = d.api("GET", "/api/v1/tokens", token=d.admin_token)
    assert r.status == 200, r
    validate("token_list.json", r.json())
    r = d.api("DELETE", "/api/v1/tokens/%d" % user["id"], token=d.admin_token)
    assert r.status == 200, r
    validate("token_revoked.json", r.json())
    assert_error(cli(["jobs"], d, token=user["token"]), "HTTP 401")


def test_environment_stands_in_for_the_flags():
    d = shared_daemon()
    env = {"LOADLAB_SERVER": d.url, "LOADLAB_TOKEN": d.admin_token}
    code, out, err = cli(["jobs"], server="", token=None, env=env)
    assert code == 0 and out.startswith("ID"), (code, out, err)
    code, out, err = cli(["submit", write_job(one_task_job("by-env", "nowhere"))], server="",
                         token=None, env=env)
    assert code == 0 and submitted_id(out)[1] == 1, (code, out, err)
    # Flags win over the environment.
    unreachable = "http://127.0.0.1:%d" % free_port()
    code, out, err = cli(["jobs"], server=d.url, token=None,
                         env={"LOADLAB_SERVER": unreachable, "LOADLAB_TOKEN": d.admin_token})
    assert code == 0, err
    assert_error(cli(["jobs"], server="", token="wrong", env=env), "HTTP 401")
    assert_error(cli(["jobs"], server="", token=None,
                     env={"LOADLAB_SERVER": unreachable, "LOADLAB_TOKEN": d.admin_token}),
                 unreachable)


def test_report_and_compare():
    """The CLI prints what the server renders, and compare's exit code
    follows the verdict: here two jobs without results, so nothing is
    comparable (exit 2 after the table). tests/integration/test_reports.py
    reaches exit codes 0 and 1 with real results."""
    d = shared_daemon()
    ids = [d.submit(one_task_job("report-%d" % i, "nowhere"))["id"] for i in range(2)]
    r = d.api("GET", "/api/v1/jobs/%d/report?format=md" % ids[0], token=d.admin_token)
    code, out, err = cli(["report", str(ids[0]), "--format", "md"], d)
    assert r.status == 200 and code == 0 and out.strip() == r.body.decode().strip(), (r, code, out, err)
    assert "pending" in out
    code, out, err = cli(["report", str(ids[0])], d)  # the terminal table
    assert code == 0 and out.startswith("Job %d: report-0" % ids[0]) and "pending" in out, (code, out, err)
    r = d.api("GET", "/api/v1/compare?baseline=%d&candidate=%d&format=json" % tuple(ids),
              token=d.admin_token)
    assert r.status == 200 and r.json()["verdict"] == "not_comparable", r
    code, out, err = cli(["compare", str(ids[0]), str(ids[1]), "--max-regression", "5%"], d)
    assert code == 2 and "not comparable" in out and "could be compared" in err, (code, out, err)
    assert_error(cli(["report", "999999"], d), "not_found")
    assert_error(cli(["compare", str(ids[0]), "999999"], d), "not_found")


def test_heartbeat_tells_cancel_and_stale_attempt_is_409():
    with Daemon() as d:
        agent = FakeAgent(d, "hb-agent", {"os": "hb-os"})
        job_id = d.submit(one_task_job("hb", "hb-os"))["id"]
        lease = agent.lease(wait=10)
        assert lease and lease["job_id"] == job_id, lease
        assert lease["heartbeat_seconds"] <= lease["lease_seconds"], lease
        stale = {"attempt": lease["attempt"] + 1, "facts": {}, "variants": [{"name": "default"}]}
        r = d.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], stale, token=agent.token)
        assert r.status == 409, r
        validate("error.json", r.json())
        assert r.json()["error"]["code"] == "stale_attempt", r.json()
        code, out, err = cli(["cancel", str(job_id)], d)
        assert code == 0, err
        beat = agent.heartbeat()
        assert [(t["task_id"], t["cancelled"]) for t in beat["tasks"]] == \
            [(lease["task_id"], True)], beat
        assert agent.heartbeat()["tasks"] == [], "a cancelled task is reported once"
        r = d.api("POST", "/api/v1/tasks/%d/progress" % lease["task_id"],
                  {"attempt": lease["attempt"], "phase": "warm", "percent": 1}, token=agent.token)
        assert r.status == 409, r
        validate("error.json", r.json())


def test_submit_wait_on_a_terminal_redraws_one_line():
    """Under a pseudo-terminal (util-linux script) the progress line is
    redrawn in place with \\r and cleared to the end of the line."""
    script = shutil.which("script")
    assert script, "util-linux script is needed to give loadlab a terminal"
    with Daemon() as d:
        path = write_job(one_task_job("tty", "nobody"))
        command = " ".join(shlex.quote(a) for a in
                           [LOADLAB, "--server", d.url, "--token", d.admin_token, "submit",
                            path, "--wait"])
        proc = subprocess.Popen([script, "-qec", command, "/dev/null"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            r = d.api("GET", "/api/v1/jobs?limit=1", token=d.admin_token)
            if r.status == 200 and r.json()["jobs"]:
                break
            time.sleep(0.2)
        time.sleep(2.5)
        job_id = r.json()["jobs"][0]["id"]
        assert d.api("POST", "/api/v1/jobs/%d/cancel" % job_id, {},
                     token=d.admin_token).status == 200
        out, err = proc.communicate(timeout=60)
        text = out.decode(errors="replace")
        assert proc.returncode == 1, (proc.returncode, text, err)
        assert "\r" in text and "\x1b[K" in text, repr(text)
        assert re.search(r"\rjob %d cancelled: 0/1 tasks done, 1 cancelled\x1b\[K\r?\n" % job_id,
                         text), repr(text)


run_tests(globals())
