"""loadlab-agent.exe as a Windows service under Wine keeps updates off
(docs/agent.md, "Signed builds"; issue 37): an agent installs only a build
signed by the lab's release key, and the Windows agent has no Ed25519 to
check one with (neither CryptoAPI nor CNG offer it; it links no
OpenSSL). Given the release key in its data folder and a new build
signed with it, the service says "off" and why (GET /api/v1/agents,
agent_update; update_disabled in its log), downloads nothing, runs
nothing new and keeps its digest, and still takes tasks. The agent runs
from a copy in the test's folder; the prefix is test_agent_service's (one
services.exe).
"""
import hashlib
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_agent_service import NAME, ServiceWine, sc, state_of  # noqa: E402
from test_agent_windows import WINE64, WIN64_EXE  # noqa: E402

# The Linux agent of this build tree makes the key and signs.
LINUX_AGENT = os.path.join(harness.BUILD_DIR, "agent", "loadlab-agent")
BUILD_NAME = "loadlab-agent-windows-x86_64.exe"

TINY_PE = harness.tiny_job("update-service-tiny", "pe", 2)

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


def test_service_keeps_updates_off_under_wine():
    assert os.path.exists(WIN64_EXE), "%s is missing: build build-win64" % WIN64_EXE
    with open(WIN64_EXE, "rb") as f:
        original = f.read()
    old_sha = hashlib.sha256(original).hexdigest()
    with ServiceWine() as wine:
        builds = os.path.join(wine.tmp, "builds")
        bin_dir = os.path.join(wine.tmp, "bin")
        key_dir = os.path.join(wine.tmp, "release-key")
        data_dir = os.path.join(wine.tmp, "data")
        os.makedirs(builds)
        os.makedirs(bin_dir)
        os.makedirs(data_dir)
        exe = os.path.join(bin_dir, "loadlab-agent.exe")
        shutil.copy2(WIN64_EXE, exe)
        subprocess.run([LINUX_AGENT, "release-key", "new", "--out", key_dir], check=True, timeout=60)
        shutil.copy(os.path.join(key_dir, "release-keys.pub"), data_dir)
        new_sha = put_build(builds, original + b"\0loadlab update test, build 2\n" * 4)
        subprocess.run([LINUX_AGENT, "release-sign", os.path.join(key_dir, "release.key"),
                        os.path.join(builds, BUILD_NAME)], check=True, timeout=60)
        with harness.Daemon(["--agent-dir", builds]) as d:
            log_path = os.path.join(data_dir, "agent.log")
            token_file = os.path.join(wine.tmp, "enroll.token")
            with open(token_file, "w") as f:
                f.write(d.enroll_token + "\n")

            def agent():
                agents = d.api("GET", "/api/v1/agents", token=d.admin_token).json()["agents"]
                return agents[0] if agents else {}

            def names():
                return [e.get("event") for e in events(log_path)]

            listed = d.api("GET", "/api/v1/agent-builds", token=d.admin_token).json()
            assert listed["builds"][0]["sha256"] == new_sha and listed["builds"][0]["signature"], listed

            code, out = run_exe(wine, exe, [
                "service", "install", "--server", d.url, "--data-dir", wine.windows_path(data_dir),
                "--enroll-token-file", wine.windows_path(token_file), "--name", "wine-update",
                "--log-format", "json", "--update-check-seconds", "1"], "install")
            assert code == 0, (code, out)
            harness.wait_for("registered", lambda: state_of(wine) == "STOPPED", 30, interval=0.5)
            code, out = sc(wine, "start", NAME)
            assert code == 0, (code, out)
            try:
                harness.wait_for("the service to say its updates are off",
                                 lambda: (agent().get("agent_update") or {}).get("state") == "off",
                                 timeout=300, interval=1)
            except AssertionError:
                with open(log_path, "rb") as f:
                    raise AssertionError("%s; agent.log:\n%s" % (
                        agent(), f.read().decode(errors="replace")[-8000:]))
            assert "Ed25519" in agent()["agent_update"]["reason"], agent()
            assert agent()["agent_sha256"] == old_sha, agent()
            job = d.submit(TINY_PE)
            harness.wait_for("job %d to end" % job["id"],
                             lambda: d.job(job["id"])["state"] in ("done", "failed"),
                             timeout=600, interval=1)
            assert d.job(job["id"])["state"] == "done", d.job(job["id"])
            time.sleep(5)  # five more checks
            assert "update_disabled" in names(), names()
            for event in ("update_found", "update_installed", "service_restarting"):
                assert event not in names(), (event, names())
            assert sha256_of(exe) == old_sha and agent()["agent_sha256"] == old_sha
            assert not os.path.exists(os.path.join(data_dir, "update", "new.exe"))
            assert state_of(wine) == "RUNNING"

            code, out = sc(wine, "stop", NAME)
            harness.wait_for("stopped", lambda: state_of(wine) == "STOPPED", 120, interval=0.5)
            code, out = run_exe(wine, exe, ["service", "uninstall"], "uninstall")
            assert code == 0, (code, out)


if __name__ == "__main__":
    harness.run_tests(globals())
