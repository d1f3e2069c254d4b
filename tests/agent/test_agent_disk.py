"""The Linux loadlab-agent's disk stays bounded whatever a job names
(docs/agent.md, "Disk"), against a fake server (Python, 127.0.0.1):

- a program job naming one blob under many paths takes that blob's space
  once: WORK/files and every variant's folder hard-link the cached blob
  instead of copying it per path and per variant;
- a job whose exe is not a PE image fails before anything runs it;
- failed work folders are kept within a budget (the 3 newest), and a task
  that would start with less free disk than --min-free-bytes first removes
  them and, when that is not enough, is refused with its reason;
- after all that, the next job on the agent runs.
"""
import hashlib
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
from agent_wait import wait_agent  # noqa: E402
import test_program_family  # noqa: E402

AGENT = os.path.join(harness.BUILD_DIR, "agent", "loadlab-agent")
PATHS = 100
BLOB_BYTES = 256 * 1024


def disk_use_of(roots):
    """Bytes of the files under ROOTS, a file with several names counted once."""
    seen, total = set(), 0
    for root in roots:
        for base, _, files in os.walk(root):
            for name in files:
                st = os.lstat(os.path.join(base, name))
                if (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    total += st.st_blocks * 512
    return total


def disk_use(root):
    return disk_use_of([root])


SHARED = test_program_family.FakeServer  # its class attributes hold the fake's state


class FakeServer(test_program_family.FakeServer):
    """test_program_family's fake (enrolls anyone, leases the next of
    LEASES once each, serves BLOBS), which at a progress report of phase
    ON_PHASE calls ON_PROGRESS() and cancels the task."""
    on_phase = None
    on_progress = None

    def do_POST(self):
        if not self.path.endswith("/progress") or not FakeServer.on_phase:
            return super().do_POST()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if json.loads(body or b"{}").get("phase") != FakeServer.on_phase:
            return self.answer(200, {})
        FakeServer.on_phase = None
        FakeServer.on_progress()
        return self.answer(200, {"cancelled": True})


def program_lease(task_id, files, exe, variants=("as-built",)):
    return {"task_id": task_id, "attempt": 1, "heartbeat_seconds": 5, "cell": {},
            "job": {"id": task_id, "name": "disk", "family": "program",
                    "program": {"files": files, "exe": exe, "args": [], "until": "exit", "timeout_s": 10},
                    "variants": list(variants), "measure": {"warm": {"runs": 1, "warmup": 0}}}}


def elf_lease(task_id):
    return {"task_id": task_id, "attempt": 1, "heartbeat_seconds": 5, "cell": {},
            "job": {"id": task_id, "name": "next", "family": "elf",
                    "generator": {"dlls": 1, "exports": 2}, "variants": ["default"],
                    "measure": {"warm": {"runs": 2, "warmup": 0}}}}


class Fake:
    def __enter__(self):
        SHARED.leases, SHARED.blobs, SHARED.outcomes = [], {}, []
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeServer)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def run_agent(url, data_dir, args=(), timeout=600):
    log_path = os.path.join(data_dir, "agent.log")
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [AGENT, "--server", url, "--enroll-token", "enroll", "--data-dir", data_dir,
             "--name", "disk-test", "--once"] + list(args),
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    return wait_agent(proc, log_path, timeout, lambda: harness.kill_processes_under(data_dir))


def tiny_exe(tmp):
    src, exe = os.path.join(tmp, "app.c"), os.path.join(tmp, "app.exe")
    with open(src, "w") as f:
        f.write("int main(void) { return 0; }\n")
    subprocess.run(["x86_64-w64-mingw32-gcc", "-O1", "-o", exe, src], check=True, timeout=120)
    with open(exe, "rb") as f:
        return f.read()


def ref_of(data):
    name = hashlib.sha256(data).hexdigest()
    SHARED.blobs[name] = data
    return "sha256:" + name


def work_folders(data_dir):
    work = os.path.join(data_dir, "work")
    return sorted(n for n in os.listdir(work) if "-" in n) if os.path.isdir(work) else []


def test_one_blob_under_many_paths_takes_its_space_once():
    with tempfile.TemporaryDirectory(prefix="loadlab-disk-") as tmp, Fake() as fake:
        data_dir = os.path.join(tmp, "agent")
        os.makedirs(data_dir)
        blob = ref_of(os.urandom(BLOB_BYTES))
        files = {"bin/app.exe": ref_of(tiny_exe(tmp))}
        files.update({"data/f%03d.bin" % i: blob for i in range(PATHS)})
        measured = []
        FakeServer.on_phase = "verify"  # every variant's folder is made by then
        work = os.path.join(data_dir, "work", "1-1")

        def measure():
            measured.append({n: disk_use(os.path.join(work, n)) for n in os.listdir(work)})
            measured[-1]["(blob cache)"] = disk_use(os.path.join(data_dir, "blobs"))
            measured[-1]["(files and variants)"] = disk_use(os.path.join(work, "files")) + \
                disk_use(os.path.join(work, "v"))
            # A link to the cache counts once across both.
            measured[-1]["(all three)"] = disk_use_of(
                [os.path.join(work, "files"), os.path.join(work, "v"), os.path.join(data_dir, "blobs")])
        FakeServer.on_progress = measure
        SHARED.leases = [program_lease(1, files, "bin/app.exe",
                                           ("as-built", "rebase", "bind", "aslr-off")),
                             elf_lease(2)]
        code, log = run_agent(fake.url, data_dir)
        assert measured, log[-3000:]
        # Copied per path and per variant it would be PATHS x 5 x 256 KiB
        # (125 MiB); linked, the blob counts once (in the cache), plus the
        # exe and the variants' rewritten copies of it.
        assert measured[0]["(all three)"] < 2 << 20, (measured, log[-2000:])
        data_copies = os.path.join(data_dir, "work", "1-1", "v")
        assert not os.path.isdir(data_copies), "a cancelled task's folder is removed"
        # The next job on that agent runs.
        code, log = run_agent(fake.url, data_dir)
        assert code == 0, log[-3000:]
        assert SHARED.outcomes and SHARED.outcomes[-1][0] == "/api/v1/tasks/2/result", \
            (SHARED.outcomes, log[-3000:])


def test_exe_that_is_no_pe_image_is_never_run():
    with tempfile.TemporaryDirectory(prefix="loadlab-disk-") as tmp, Fake() as fake:
        data_dir = os.path.join(tmp, "agent")
        os.makedirs(data_dir)
        marker = os.path.join(tmp, "ran")
        script = ("#!/bin/sh\ntouch %s\n" % marker).encode()
        SHARED.leases = [program_lease(1, {"bin/app.exe": ref_of(script)}, "bin/app.exe")]
        code, log = run_agent(fake.url, data_dir)
        assert code == 1, log[-3000:]
        assert len(SHARED.outcomes) == 1 and SHARED.outcomes[0][0].endswith("/fail")
        assert "is not a PE image" in SHARED.outcomes[0][1], SHARED.outcomes
        assert not os.path.exists(marker)


def test_failed_folders_are_kept_within_a_budget_and_give_way():
    with tempfile.TemporaryDirectory(prefix="loadlab-disk-") as tmp, Fake() as fake:
        data_dir = os.path.join(tmp, "agent")
        os.makedirs(data_dir)
        exe = ref_of(tiny_exe(tmp))
        never = "sha256:" + hashlib.sha256(b"never served").hexdigest()
        SHARED.leases = [program_lease(i, {"bin/app.exe": exe, "x.dll": never}, "bin/app.exe")
                             for i in range(1, 6)]
        for _ in range(5):
            code, log = run_agent(fake.url, data_dir)
            assert code == 1, log[-3000:]
        assert [p for p, _ in SHARED.outcomes] == ["/api/v1/tasks/%d/fail" % i for i in range(1, 6)]
        # The 3 newest failed folders are kept, the oldest went first.
        assert work_folders(data_dir) == ["3-1", "4-1", "5-1"], work_folders(data_dir)
        assert "work_removed folder=1-1" in open(os.path.join(data_dir, "agent.log")).read()
        # More free disk than there is: the failed folders give way, then the
        # task is refused with its reason and nothing is made for it.
        SHARED.leases = [elf_lease(6)]
        code, log = run_agent(fake.url, data_dir, ["--min-free-bytes", str(1 << 60)])
        assert code == 1, log[-3000:]
        path, body = SHARED.outcomes[-1]
        assert path == "/api/v1/tasks/6/fail", SHARED.outcomes
        assert "--min-free-bytes" in body and "another agent" in body, body
        assert json.loads(body).get("retryable", True) is not False, body
        assert work_folders(data_dir) == [], work_folders(data_dir)
        # The next job runs.
        SHARED.leases = [elf_lease(7)]
        code, log = run_agent(fake.url, data_dir)
        assert code == 0, log[-3000:]
        assert SHARED.outcomes[-1][0] == "/api/v1/tasks/7/result", SHARED.outcomes


if __name__ == "__main__":
    harness.run_tests(dict(globals()))
