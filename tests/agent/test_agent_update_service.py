"""loadlab-agent.exe as a Windows service under Wine updates itself
(docs/agent.md, "Updates"): between two tasks it takes the new build that
loadlabd --agent-dir serves (build-win64's agent with bytes appended after
its last section, an overlay Windows ignores: another digest, no second
compile), the service stops, the previous copy's watcher starts it again,
and the service runs the new digest; bytes that are not a program fail
their trial and are never installed; an .exe that passes the trial but
is no service (it exits at once) is installed, fails to start, and the
watcher puts the previous copy back and starts it. The agent runs from a
copy in the test's folder; the prefix is test_agent_service's (one
services.exe).
"""
import hashlib
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_agent_service import NAME, ServiceWine, sc, state_of  # noqa: E402
from test_agent_windows import WINE64, WIN64_EXE  # noqa: E402

BUILD_NAME = "loadlab-agent-windows-x86_64.exe"

TINY_PE = {
    "name": "update-service-tiny",
    "family": "pe",
    "generator": {"dlls": 2, "exports": 2},
    "variants": ["default"],
    "measure": {"warm": {"runs": 3, "warmup": 0}},
}

# Says it is ready to a trial, then ends: no service control dispatcher.
NOT_A_SERVICE = r"""
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "update-trial") == 0) {
		puts("loadlab-agent update-trial ok fake");
		return 0;
	}
	return 1;
}
"""

events = harness.json_lines


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def put_build(folder, data):
    path = os.path.join(folder, BUILD_NAME)
    with open(path + ".tmp", "wb") as f:
        f.write(data)
    os.rename(path + ".tmp", path)
    return hashlib.sha256(data).hexdigest()


def run_exe(wine, exe, args, name, timeout=180):
    path = os.path.join(wine.tmp, name + ".log")
    with open(path, "wb") as log:
        code = subprocess.run([WINE64, exe] + args, stdin=subprocess.DEVNULL, stdout=log,
                              stderr=log, env=wine.env, cwd=wine.tmp, timeout=timeout).returncode
    with open(path, "rb") as f:
        return code, f.read().decode(errors="replace")


def test_service_updates_itself_and_rolls_back_under_wine():
    assert os.path.exists(WIN64_EXE), "%s is missing: build build-win64" % WIN64_EXE
    with open(WIN64_EXE, "rb") as f:
        original = f.read()
    old_sha = hashlib.sha256(original).hexdigest()
    with ServiceWine() as wine:
        builds = os.path.join(wine.tmp, "builds")
        bin_dir = os.path.join(wine.tmp, "bin")
        os.makedirs(builds)
        os.makedirs(bin_dir)
        exe = os.path.join(bin_dir, "loadlab-agent.exe")
        previous = os.path.join(bin_dir, "loadlab-agent.previous.exe")
        shutil.copy2(WIN64_EXE, exe)
        put_build(builds, original)
        with harness.Daemon(["--agent-dir", builds]) as d:
            data_dir = os.path.join(wine.tmp, "data")
            log_path = os.path.join(data_dir, "agent.log")
            token_file = os.path.join(wine.tmp, "enroll.token")
            with open(token_file, "w") as f:
                f.write(d.enroll_token + "\n")

            def agent():
                agents = d.api("GET", "/api/v1/agents", token=d.admin_token).json()["agents"]
                return agents[0] if agents else {}

            def wait_digest(sha, timeout=300):
                try:
                    harness.wait_for("the service to report %s" % sha[:12],
                                     lambda: agent().get("agent_sha256") == sha,
                                     timeout=timeout, interval=1)
                except AssertionError:
                    with open(log_path, "rb") as f:
                        raise AssertionError("no %s; agent.log:\n%s" % (
                            sha, f.read().decode(errors="replace")[-8000:]))

            def run_job():
                job = d.submit(TINY_PE)
                harness.wait_for("job %d to end" % job["id"],
                                 lambda: d.job(job["id"])["state"] in ("done", "failed"),
                                 timeout=600, interval=1)
                assert d.job(job["id"])["state"] == "done", d.job(job["id"])

            def names():
                return [e.get("event") for e in events(log_path)]

            def rescan():
                r = d.api("POST", "/api/v1/agent-builds/rescan", token=d.admin_token)
                assert r.status == 200, r

            code, out = run_exe(wine, exe, [
                "service", "install", "--server", d.url, "--data-dir", wine.windows_path(data_dir),
                "--enroll-token-file", wine.windows_path(token_file), "--name", "wine-update",
                "--log-format", "json", "--update-check-seconds", "1",
                "--update-confirm-seconds", "90"], "install")
            assert code == 0, (code, out)
            harness.wait_for("registered", lambda: state_of(wine) == "STOPPED", 30, interval=0.5)
            code, out = sc(wine, "start", NAME)
            assert code == 0, (code, out)
            wait_digest(old_sha)
            assert agent()["agent_version"], agent()
            run_job()

            # The new build: an overlay after the last section.
            new_sha = put_build(builds, original + b"\0loadlab update test, build 2\n" * 4)
            rescan()
            wait_digest(new_sha)
            assert sha256_of(exe) == new_sha and sha256_of(previous) == old_sha
            for event in ("update_installed", "service_restarting", "service_update_watch",
                          "service_restarted", "update_confirmed"):
                assert event in names(), (event, names())
            assert state_of(wine) == "RUNNING"
            run_job()  # the second task, by the new digest

            # Not a program: its trial fails, nothing is installed.
            junk_sha = put_build(builds, b"MZ but not a program\n" * 64)
            rescan()
            harness.wait_for("the junk build refused", lambda: any(
                e.get("event") == "update_refused" and e.get("sha256") == junk_sha
                for e in events(log_path)), 120, interval=1)
            assert sha256_of(exe) == new_sha and state_of(wine) == "RUNNING"

            # Passes its trial, is installed, is no service: put back.
            source = os.path.join(wine.tmp, "not_a_service.c")
            fake = os.path.join(wine.tmp, "not_a_service.exe")
            with open(source, "w") as f:
                f.write(NOT_A_SERVICE)
            subprocess.run(["x86_64-w64-mingw32-gcc", "-O1", "-s", "-o", fake, source], check=True,
                           timeout=120)
            with open(fake, "rb") as f:
                fake_sha = put_build(builds, f.read())
            rescan()
            harness.wait_for("the fake rolled back", lambda: any(
                e.get("event") == "update_rolled_back" and e.get("sha256") == fake_sha
                for e in events(log_path)), 400, interval=1)
            harness.wait_for("the previous copy in place", lambda: sha256_of(exe) == new_sha, 60)
            harness.wait_for("the service running again", lambda: state_of(wine) == "RUNNING", 120)
            with open(os.path.join(data_dir, "update", "refused.json")) as f:
                refused = f.read()
            assert fake_sha in refused and junk_sha in refused, refused
            run_job()  # the previous copy works
            assert agent()["agent_sha256"] == new_sha

            code, out = sc(wine, "stop", NAME)
            harness.wait_for("stopped", lambda: state_of(wine) == "STOPPED", 120, interval=0.5)
            code, out = run_exe(wine, exe, ["service", "uninstall"], "uninstall")
            assert code == 0, (code, out)


if __name__ == "__main__":
    harness.run_tests(globals())
