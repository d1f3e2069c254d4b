"""A cache that cannot lock an agent out (issue 37, item 3; docs/agent.md,
"Disk"): a real loadlabd and a real Linux agent whose data folder is on a
64 MiB disk of its own (a tmpfs this test mounts, as root), keeping
--min-free-bytes 16 MiB free.

- One user's program job names 80 distinct 1 MiB blobs, more than the disk
  can hold above the 16 MiB kept free: its task fails once, not retried,
  with a reason that names the sizes and the limit, and the agent removes
  its work folder; the disk still has the 16 MiB free.
- Another user's one-file job then runs to done on the same agent: its
  8 MiB file fits only once the first job's cached blobs give way, least
  recently used first.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402

MIB = 1 << 20
DISK = "64m"
MIN_FREE = 16 * MIB
BLOBS = 80


def compile_elf(tmp, name, source):
    src, exe = os.path.join(tmp, name + ".c"), os.path.join(tmp, name)
    with open(src, "w") as f:
        f.write(source)
    subprocess.run(["gcc", "-O1", "-o", exe, src], check=True, timeout=120)
    return exe


def program_folder(tmp, name, exe, data_files=0):
    """A folder of bin/app (a copy of EXE) and DATA_FILES distinct 1 MiB files."""
    folder = os.path.join(tmp, name)
    os.makedirs(os.path.join(folder, "bin"))
    os.makedirs(os.path.join(folder, "data"))
    with open(exe, "rb") as f, open(os.path.join(folder, "bin", "app"), "wb") as out:
        out.write(f.read())
    os.chmod(os.path.join(folder, "bin", "app"), 0o755)
    for i in range(data_files):
        with open(os.path.join(folder, "data", "f%03d.bin" % i), "wb") as f:
            f.write(os.urandom(MIB))
    return folder


def submit(d, token, tmp, name, folder):
    job_path = os.path.join(tmp, name + ".json")
    with open(job_path, "w") as f:
        json.dump({"name": name, "family": "program",
                   "program": {"exe": "bin/app", "until": "exit", "timeout_s": 30},
                   "variants": ["as-built"], "measure": {"warm": {"runs": 1, "warmup": 0}}}, f)
    env = dict(os.environ, LOADLAB_SERVER=d.url, LOADLAB_TOKEN=token)
    r = subprocess.run([harness.LOADLAB, "submit", job_path, "--program-dir", folder], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r
    return int(r.stdout.split("job ", 1)[1].split(":")[0])


def user_token(d, name):
    r = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": name}, token=d.admin_token)
    assert r.status == 201, r
    return r.json()["token"]


def finished(d, job_id):
    job = d.job(job_id)
    return job if job["state"] in ("done", "failed", "cancelled") else None


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def test_a_job_too_big_for_the_disk_fails_alone_and_the_next_runs():
    tmp = tempfile.mkdtemp(prefix="loadlab-cache-")
    disk = os.path.join(tmp, "disk")
    os.makedirs(disk)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + DISK, "tmpfs", disk], check=True, timeout=30)
    agent = None
    try:
        with harness.Daemon() as d:
            alice, bob = user_token(d, "alice"), user_token(d, "bob")
            tiny = compile_elf(tmp, "tiny", "int main(void) { return 0; }\n")
            # 8 MiB of initialized data: the one file of the second job.
            big = compile_elf(tmp, "big", "__attribute__((used)) char pad[8 << 20] = {1};\n"
                                          "int main(void) { return pad[0] - 1; }\n")
            assert os.path.getsize(big) > 8 * MIB
            too_big = submit(d, alice, tmp, "too-big", program_folder(tmp, "many", tiny, BLOBS))

            data_dir = os.path.join(disk, "agent")
            log_path = os.path.join(tmp, "agent.log")
            started = time.time()
            with open(log_path, "ab") as log:
                agent = subprocess.Popen(
                    [harness.AGENT, "--server", d.url, "--enroll-token", d.enroll_token, "--data-dir",
                     data_dir, "--name", "small-disk", "--min-free-bytes", str(MIN_FREE)],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log)

            def agent_log():
                with open(log_path, "rb") as f:
                    return f.read().decode(errors="replace")

            job = harness.wait_for("the first job to end", lambda: finished(d, too_big), timeout=40)
            (task,) = job["tasks"]
            assert job["state"] == "failed", (job, agent_log()[-3000:])
            # Failed alone: once, not retried on this agent or any other.
            assert task["attempt"] == 1, (task, agent_log()[-3000:])
            reason = task["last_error"]
            assert "do not fit" in reason and "--min-free-bytes" in reason, reason
            assert str(MIN_FREE) in reason, reason
            assert not os.listdir(os.path.join(data_dir, "work")), os.listdir(os.path.join(data_dir, "work"))
            # The disk kept its free space; what the job fetched is cached.
            assert free_bytes(disk) >= MIN_FREE, free_bytes(disk)
            cached = [n for n in os.listdir(os.path.join(data_dir, "blobs")) if len(n) == 64]
            assert 30 < len(cached) < BLOBS, len(cached)

            next_job = submit(d, bob, tmp, "next", program_folder(tmp, "one", big))
            job = harness.wait_for("the next job to end", lambda: finished(d, next_job), timeout=40)
            assert job["state"] == "done", (job, agent_log()[-3000:])
            (task,) = job["tasks"]
            assert task["attempt"] == 1, task
            # Its 8 MiB took the place of the first job's oldest blobs.
            log = agent_log()
            assert "blob_evicted" in log, log[-3000:]
            left = [n for n in os.listdir(os.path.join(data_dir, "blobs")) if len(n) == 64]
            assert len(left) < len(cached), (len(left), len(cached))
            assert free_bytes(disk) >= MIN_FREE, free_bytes(disk)
            print("both jobs in %.1f s; %d of the first job's blobs cached, %d after the second"
                  % (time.time() - started, len(cached), len(left) - 1))
            harness.stop_process(agent, 30)
            agent = None
    finally:
        if agent:
            harness.stop_process(agent, 30)
        subprocess.run(["umount", disk], timeout=60)
        subprocess.run(["rm", "-rf", tmp], timeout=60)


if __name__ == "__main__":
    harness.run_tests(dict(globals()))
