"""loadlab-agent.exe as a Windows service under Wine's Service Control
Manager (docs/agent.md, "Windows service").

`service install` registers it with its options, `sc start` starts it
(Wine's services.exe runs `loadlab-agent.exe service run ...`), it enrolls
with a real loadlabd and leases a job; `sc stop` mid-task ends it cleanly:
the task is given back (no lost result), its log file in the data folder
has the stop lines; `service uninstall` removes it and `sc query` fails.
The prefix and its wineserver are private (ServiceWine below); Wine
programs' output is read through files.

Why the prefix is booted its own way: on a new prefix Wine's loader runs
`wineboot --init` by itself before the command it was given, so
test_agent_windows.Wine's explicit `wineboot -i` is a second init that
starts a second services.exe beside the first (WINEDEBUG=+service,+process:
two services.exe, two plugplay.exe). The second one's auto-start of
MountMgr and Eventlog fails with error 1053 after its 10 s pipe timeout
each and holds its start lock meanwhile; `sc start` waits only 3 s for
that lock (error 1055), and a service started while two services.exe share
one registry and one set of control-pipe names did not reach ServiceMain
(error 1053). Booted with a single init, the prefix has one services.exe
and the first `sc start` works (docs/agent.md).
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_agent_windows import WINE64, WINESERVER, WIN64_EXE, Wine  # noqa: E402

NAME = "loadlab-agent"

# Long enough to be stopped in the middle: many warm runs under Wine.
SLOW_JOB = {
    "name": "service-slow",
    "family": "pe",
    "generator": {"dlls": 4, "exports": 20},
    "variants": ["default", "rebase"],
    "measure": {"warm": {"runs": 400, "warmup": 0}},
}


class ServiceWine(Wine):
    """test_agent_windows.Wine with one init, hence one services.exe."""

    # The first command in the new prefix: the loader inits the prefix
    # first (and waits for it); Wine.SESSION_START itself does nothing more.
    BOOT = Wine.SESSION_START

    def processes(self):
        """PIDs of the processes still running in this prefix, the server aside."""
        mine = ("WINEPREFIX=%s" % self.prefix).encode()
        return [pid for pid in harness.pids_where("environ", lambda env: mine in env)
                if pid != self.server.pid]

    def services_exes(self):
        return [pid for pid in self.processes() if cmdline_has(pid, b"services.exe")]


def cmdline_has(pid, what):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return what in f.read()
    except OSError:
        return False


def sc(wine, *args):
    path = os.path.join(wine.tmp, "sc.out")
    with open(path, "wb") as f:
        code = subprocess.run([WINE64, "sc"] + list(args), stdin=subprocess.DEVNULL, stdout=f,
                              stderr=f, env=wine.env, timeout=180).returncode
    with open(path, "rb") as f:
        return code, f.read().decode(errors="replace")


def state_of(wine):
    code, out = sc(wine, "query", NAME)
    for line in out.splitlines():
        if "STATE" in line:
            return line.split()[-1]
    return None if code else "?"


def wait_for(what, fn, timeout, interval=0.5):
    return harness.wait_for(what, fn, timeout=timeout, interval=interval)


events = harness.json_lines


def agent_processes(wine):
    return [pid for pid in wine.processes() if cmdline_has(pid, b"loadlab-agent")]


def test_service_install_start_stop_uninstall_under_wine():
    assert os.path.exists(WIN64_EXE), "%s is missing: build build-win64" % WIN64_EXE
    with ServiceWine() as wine, harness.Daemon(["--lease-seconds", "5"]) as d:
        # The cause of the old error 1053: more than one services.exe.
        assert len(wine.services_exes()) == 1, wine.services_exes()
        data_dir = os.path.join(wine.tmp, "data")
        token_file = os.path.join(wine.tmp, "enroll.token")
        with open(token_file, "w") as f:
            f.write(d.enroll_token + "\n")
        log_path = os.path.join(data_dir, "agent.log")

        code, out = wine.run(["service", "run"], "run-by-hand")
        # Refused at once (its message, on the console, is not always seen
        # through Wine's redirected output).
        assert code == 2, (code, out)

        code, out = wine.run(["service", "install", "--server", d.url, "--data-dir",
                              wine.windows_path(data_dir), "--enroll-token-file",
                              wine.windows_path(token_file), "--name", "wine-service",
                              "--log-format", "json"], "install")
        assert code == 0 and "installed the service " + NAME in out, (code, out)
        wait_for("the service to be registered", lambda: state_of(wine) == "STOPPED", 30)
        # Started once, no retry: a failure here is the bug this test guards.
        code, out = sc(wine, "start", NAME)
        assert code == 0, (code, out)
        wait_for("the service to run", lambda: state_of(wine) == "RUNNING", 60)
        agents = wait_for("the service's agent to enroll", lambda: d.api(
            "GET", "/api/v1/agents", token=d.admin_token).json()["agents"], 120)
        assert len(agents) == 1, agents
        assert agents[0]["name"] == "wine-service" and agents[0]["facts"]["runner"] == "wine"
        assert os.path.exists(os.path.join(data_dir, "agent.json"))
        wait_for("agent_started", lambda: [e for e in events(log_path)
                                           if e.get("event") == "agent_started"], 60)
        names = [e.get("event") for e in events(log_path)]
        assert names.index("service_started") < names.index("agent_started"), names

        # Alive: the agent keeps calling the server, which moves last_seen.
        def last_seen():
            return d.api("GET", "/api/v1/agents", token=d.admin_token).json()["agents"][0][
                "last_seen"]
        seen = last_seen()
        wait_for("last_seen to move", lambda: last_seen() != seen, 60, interval=1)

        # A task in hand when the stop comes: it is given back, not lost.
        job = d.submit(SLOW_JOB)

        def task():
            return d.api("GET", "/api/v1/jobs/%d" % job["id"], token=d.admin_token).json()["tasks"][0]
        wait_for("the task to be leased", lambda: task()["state"] == "leased", 120)
        leased = task()
        # Heartbeats: with 5 s leases the same attempt is still leased 12 s
        # later only because the service's agent extended it.
        time.sleep(12)
        t = task()
        assert t["state"] == "leased" and t["attempt"] == leased["attempt"], (leased, t)
        assert t["lease_expires_at"] != leased["lease_expires_at"], (leased, t)
        code, out = sc(wine, "stop", NAME)
        assert code == 0, out
        wait_for("the service to stop", lambda: state_of(wine) == "STOPPED", 120)
        log = events(log_path)
        names = [e.get("event") for e in log]
        assert "service_stop_requested" in names, log
        assert "agent_stopped" in names and names[-1] == "service_stopped", log
        assert log[-1]["exit_code"] == "0", log
        given_back = [e for e in log if e.get("event") == "failure_reported"]
        finished = [e for e in log if e.get("event") == "result_delivered"]
        assert given_back or finished, log
        t = task()
        if given_back:
            # Given back as retryable: queued again (or leased to no one yet).
            assert t["state"] == "queued", t
            assert "stopped" in (t["last_error"] or ""), t
        else:
            assert t["state"] == "done", t
        # No agent process is left in the prefix.
        wait_for("the agent process to exit", lambda: not agent_processes(wine), 30)

        code, out = wine.run(["service", "uninstall"], "uninstall")
        assert code == 0 and "removed the service " + NAME in out, (code, out)
        code, out = sc(wine, "query", NAME)
        assert code != 0 and "RUNNING" not in out, (code, out)
        code, out = wine.run(["service", "uninstall"], "uninstall-again")
        assert code == 2 and "no such service" in out, (code, out)


def test_service_on_linux_names_the_systemd_unit():
    agent = os.path.join(harness.BUILD_DIR, "agent", "loadlab-agent")
    data_dir = os.path.join(harness.BUILD_DIR, "service-test-%d" % os.getpid())
    out = subprocess.run([agent, "service", "install", "--server", "http://127.0.0.1:1",
                          "--data-dir", data_dir], capture_output=True, timeout=30)
    assert out.returncode == 2, out
    text = out.stderr.decode()
    assert "is for Windows" in text and "packaging/systemd/loadlab-agent.service" in text, text
    assert not os.path.exists(data_dir)


if __name__ == "__main__":
    harness.run_tests(globals())
