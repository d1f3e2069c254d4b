"""Blobs against a real loadlabd: PUT streamed and hashed, HEAD, GET; wrong
hashes, limits, quota, bad names and missing tokens change nothing; memory
stays flat on a 200 MiB upload; a kill -9 mid-upload leaves nothing; the
retention sweep; `loadlab submit --program-dir`; hostile manifests."""
import hashlib
import json
import os
import signal
import subprocess
import tempfile
import time

from blob_upload import raw_put, read_answer
from harness import LOADLAB, Daemon, load_example, run_tests, wait_for
from schemacheck import validate

BLOBS = "/api/v1/blobs/"


def sha(data):
    return hashlib.sha256(data).hexdigest()


def put(d, data, name=None, token=None, headers=None):
    return d.api("PUT", BLOBS + (name or sha(data)), data, token=token or d.admin_token,
                 headers=dict({"Content-Type": "application/octet-stream"}, **(headers or {})))


def stored_files(d):
    """Every file under DATA_DIR/blobs (tmp/ included), relative."""
    out = []
    for root, _, files in os.walk(os.path.join(d.data_dir, "blobs")):
        out += [os.path.relpath(os.path.join(root, f), d.data_dir) for f in files]
    return sorted(out)


def program_job(files, exe="bin/app.exe", **extra):
    program = {"files": files, "exe": exe}
    program.update(extra)
    return {"name": "prog", "family": "program", "program": program,
            "variants": ["as-built", "rebase", "bind", "aslr-off"]}


def test_round_trip():
    with Daemon() as d:
        data = os.urandom(300000)
        r = put(d, data)
        assert r.status == 201, r
        validate("blob_stored.json", r.json())
        assert r.json() == {"sha256": sha(data), "size": len(data), "created": True}
        path = os.path.join(d.data_dir, "blobs", sha(data)[:2], sha(data)[2:])
        mtime = os.stat(path).st_mtime_ns
        r = put(d, data)
        assert r.status == 200 and r.json()["created"] is False, r
        assert os.stat(path).st_ino and stored_files(d) == [os.path.relpath(path, d.data_dir)]
        r = d.api("HEAD", BLOBS + sha(data), token=d.admin_token)
        assert r.status == 200 and int(r.headers["Content-Length"]) == len(data), r
        r = d.api("GET", BLOBS + sha(data), token=d.admin_token)
        assert r.status == 200 and r.body == data
        assert r.headers["Content-Type"] == "application/octet-stream"
        assert os.stat(path).st_mtime_ns >= mtime
        # Agents read and ask; one that holds no build task may not upload
        # (a builder's uploads: test_builds.py).
        _, agent = d.enroll("a1")
        assert d.api("HEAD", BLOBS + sha(data), token=agent).status == 200
        assert d.api("GET", BLOBS + sha(data), token=agent).body == data
        r = put(d, b"agent", token=agent)
        assert r.status == 403 and "holds a build task" in r.json()["error"]["message"], r
        assert d.api("HEAD", BLOBS + sha(b"agent"), token=d.admin_token).status == 404
        # Absent, and the empty blob.
        assert d.api("HEAD", BLOBS + sha(b"nope"), token=d.admin_token).status == 404
        r = d.api("GET", BLOBS + sha(b"nope"), token=d.admin_token)
        assert r.status == 404 and r.json()["error"]["code"] == "not_found"
        assert put(d, b"").status == 201
        assert d.api("GET", BLOBS + sha(b""), token=d.admin_token).body == b""


def test_wrong_hash_and_bad_names_leave_nothing():
    # An idle connection is ended after 5 s (default 120): the upload cut
    # short below is dropped by then at the latest.
    with Daemon(["--connection-timeout", "5"]) as d:
        data = os.urandom(100000)
        for chunked in (False, True):
            hdrs = {"Transfer-Encoding": "chunked"} if chunked else {}
            if chunked:
                s = raw_put(d, sha(b"other"), 0, b"%x\r\n" % len(data) + data + b"\r\n0\r\n\r\n",
                            chunked=True)
                assert read_answer(s) == 400
                s.close()
            else:
                r = put(d, data, name=sha(b"other"), headers=hdrs)
                assert r.status == 400 and r.json()["error"]["code"] == "hash_mismatch", r
                validate("error.json", r.json())
        assert stored_files(d) == []
        assert d.api("HEAD", BLOBS + sha(b"other"), token=d.admin_token).status == 404
        for name in (sha(data).upper(), sha(data)[:63], sha(data) + "0", "../" + sha(data)[3:],
                     "x" * 64, sha(data) + "/x"):
            r = put(d, data, name=name)
            assert r.status in (400, 404), (name, r)
        assert stored_files(d) == []
        # A body shorter than its Content-Length (the client goes away).
        s = raw_put(d, sha(data), len(data), data[:1000])
        s.close()
        # The daemon sees the close when libmicrohttpd polls the socket
        # again (under ASan on a loaded machine once not within 15 s), at
        # the latest when the idle timeout ends the connection; its start
        # of the upload (the temporary file) may come late too, so nothing
        # must be stored for a whole second in a row.
        deadline = time.monotonic() + 30
        empty_since = None
        while time.monotonic() < deadline:
            if stored_files(d):
                empty_since = None
            elif empty_since is None:
                empty_since = time.monotonic()
            elif time.monotonic() - empty_since >= 1.0:
                break
            time.sleep(0.05)
        assert stored_files(d) == []


def test_size_limit_and_quota():
    with Daemon(["--blob-max-bytes", "100000", "--blob-quota-bytes", "250000"]) as d:
        big = os.urandom(100001)
        r = put(d, big)
        assert r.status == 413 and r.json()["error"]["code"] == "too_large", r
        s = raw_put(d, sha(big), 0, b"%x\r\n" % len(big) + big + b"\r\n0\r\n\r\n", chunked=True)
        assert read_answer(s) == 413
        s.close()
        assert stored_files(d) == []
        a, b, c = (os.urandom(100000) for _ in range(3))
        assert put(d, a).status == 201 and put(d, b).status == 201
        r = put(d, c)
        assert r.status == 507 and r.json()["error"]["code"] == "insufficient_storage", r
        validate("error.json", r.json())
        s = raw_put(d, sha(c), 0, b"%x\r\n" % len(c) + c + b"\r\n0\r\n\r\n", chunked=True)
        assert read_answer(s) == 507
        s.close()
        assert len(stored_files(d)) == 2
        assert put(d, a).status == 200  # present already: no new space needed


def test_unauthenticated_stores_nothing():
    with Daemon() as d:
        data = b"secret"
        for token in (None, "nope", "lladm_" + "0" * 64):
            hdrs = {"Authorization": "Bearer " + token} if token else {}
            r = d.api("PUT", BLOBS + sha(data), data, headers=hdrs)
            assert r.status == 401, r
        assert d.api("HEAD", BLOBS + sha(data)).status == 401
        assert d.api("GET", BLOBS + sha(data)).status == 401
        assert stored_files(d) == []


def rss_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError(key)


def test_200_mib_upload_keeps_memory_flat():
    with Daemon() as d:
        size = 200 << 20
        block = os.urandom(1 << 20)
        h = hashlib.sha256()
        for _ in range(200):
            h.update(block)
        put(d, b"warm-up")
        before = rss_kib(d.proc.pid, "VmHWM")
        s = raw_put(d, h.hexdigest(), size, b"")
        for _ in range(200):
            s.sendall(block)
        assert read_answer(s) == 201
        s.close()
        after = rss_kib(d.proc.pid, "VmHWM")
        grew = (after - before) / 1024.0
        print("200 MiB upload: VmHWM %d KiB -> %d KiB (+%.1f MiB), VmRSS %d KiB" %
              (before, after, grew, rss_kib(d.proc.pid, "VmRSS")))
        assert grew < 32, grew
        r = d.api("HEAD", BLOBS + h.hexdigest(), token=d.admin_token)
        assert int(r.headers["Content-Length"]) == size


def test_kill_during_upload_leaves_nothing():
    d = Daemon().start()
    try:
        data = os.urandom(4 << 20)
        s = raw_put(d, sha(data), len(data), data[:len(data) // 2])
        deadline = time.time() + 10
        while time.time() < deadline and not os.listdir(os.path.join(d.data_dir, "blobs", "tmp")):
            time.sleep(0.05)
        assert os.listdir(os.path.join(d.data_dir, "blobs", "tmp")), "no temporary file seen"
        d.stop(signal.SIGKILL)
        s.close()
        d.start()
        assert d.api("HEAD", BLOBS + sha(data), token=d.admin_token).status == 404
        assert stored_files(d) == [], stored_files(d)
        assert put(d, data).status == 201
    finally:
        d.close()


def test_retention_sweep_keeps_referenced_blobs():
    with Daemon(["--blob-retention-s", "1", "--blob-sweep-interval-s", "1"]) as d:
        kept, dropped = b"MZ program", b"unreferenced"
        assert put(d, kept).status == 201 and put(d, dropped).status == 201
        d.submit(program_job({"bin/app.exe": "sha256:" + sha(kept)}))
        # Unused for over a second, then swept within the next second or two.
        time.sleep(3.5)
        assert d.api("HEAD", BLOBS + sha(dropped), token=d.admin_token).status == 404
        assert d.api("HEAD", BLOBS + sha(kept), token=d.admin_token).status == 200
        assert "blob_removed" in d.read_log()


def test_schedule_checks_and_keeps_its_blobs():
    with Daemon(["--blob-retention-s", "1", "--blob-sweep-interval-s", "1"]) as d:
        kept, dropped = b"MZ scheduled", b"unreferenced"
        job = program_job({"bin/app.exe": "sha256:" + sha(kept)})
        schedule = {"series": "nightly", "interval_s": 86400, "job": job}
        # Its files not uploaded: refused, naming them, and nothing made.
        r = d.api("POST", "/api/v1/schedules", schedule, token=d.admin_token)
        assert r.status == 400 and r.json()["error"]["code"] == "missing_blobs", r
        assert r.json()["error"]["missing"] == [sha(kept)], r.json()
        assert d.api("GET", "/api/v1/schedules", token=d.admin_token).json()["schedules"] == []
        assert put(d, kept).status == 201 and put(d, dropped).status == 201
        r = d.api("POST", "/api/v1/schedules", schedule, token=d.admin_token)
        assert r.status == 201, r
        # A change to a job whose files are not uploaded is refused too.
        other = program_job({"bin/app.exe": "sha256:" + sha(b"never")})
        r = d.api("PATCH", "/api/v1/schedules/%d" % r.json()["id"], {"job": other},
                  token=d.admin_token)
        assert r.status == 400 and r.json()["error"]["code"] == "missing_blobs", r
        # No job names the blob yet, the schedule does: the sweep keeps it.
        time.sleep(3.5)
        assert d.api("HEAD", BLOBS + sha(dropped), token=d.admin_token).status == 404
        assert d.api("HEAD", BLOBS + sha(kept), token=d.admin_token).status == 200


def test_ab_job_files_survive_sweeps():
    """Issue 38 item 1: every file of both builds of a queued A/B job (and of
    a schedule's A/B job) outlives sweeps at retention 0, on both stores;
    an unreferenced blob is swept."""
    with Daemon(["--blob-retention-s", "0", "--blob-sweep-interval-s", "1"]) as d:
        base, candidate, helper, scheduled, dropped = (
            b"\x7fELF base", b"\x7fELF candidate", b"libhelper.so", b"\x7fELF scheduled", b"unreferenced")

        def uploaded_then(blobs, method, path, body):
            """PUTs BLOBS then sends the request that references them, again
            when a sweep came between the two (retention 0: a blob nothing
            names yet may go at any sweep; the daemon then answers
            missing_blobs). Its answer."""
            for _ in range(5):
                for data in blobs:
                    assert put(d, data).status == 201
                r = d.api(method, path, body, token=d.admin_token)
                if r.status != 400 or r.json()["error"]["code"] != "missing_blobs":
                    return r
            return r

        assert put(d, dropped).status == 201
        builds = [{"label": "base", "files": {"app": "sha256:" + sha(base),
                                               "lib/libhelper.so": "sha256:" + sha(helper)}, "exe": "app"},
                  {"label": "candidate", "files": {"app": "sha256:" + sha(candidate),
                                                    "lib/libhelper.so": "sha256:" + sha(helper)}, "exe": "app"}]
        job = {"name": "ab", "family": "program", "variants": ["as-built"],
               "program": {"builds": builds, "format": "elf"}}
        r = uploaded_then((base, candidate, helper), "POST", "/api/v1/jobs", job)
        assert r.status == 201, r
        created = r.json()
        assert d.job(created["id"])["state"] == "queued"
        assert "files" not in d.job(created["id"])["spec"]["program"]  # normalized: builds only
        sched_builds = [dict(builds[0], files={"app": "sha256:" + sha(scheduled)}), builds[1]]
        r = uploaded_then((scheduled,), "POST", "/api/v1/schedules",
                          {"series": "nightly-ab", "interval_s": 86400,
                           "job": dict(job, program={"builds": sched_builds, "format": "elf"})})
        assert r.status == 201, r
        # The sweeper runs every second; a blob unused for 0 s and named by
        # no job goes at the first one.
        wait_for("the unreferenced blob swept",
                 lambda: d.api("HEAD", BLOBS + sha(dropped), token=d.admin_token).status == 404)
        time.sleep(3.5)  # several more sweeps
        for data in (base, candidate, helper, scheduled):
            r = d.api("HEAD", BLOBS + sha(data), token=d.admin_token)
            assert r.status == 200, (data, r)


def run_cli(d, *args):
    env = dict(os.environ, LOADLAB_SERVER=d.url, LOADLAB_TOKEN=d.admin_token)
    return subprocess.run([LOADLAB] + list(args), capture_output=True, text=True, env=env,
                          timeout=120)


def test_submit_program_dir():
    with Daemon() as d, tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "build")
        os.makedirs(os.path.join(folder, "bin", "plugins"))
        files = {"bin/app.exe": b"MZ app " * 1000, "bin/core.dll": b"MZ core",
                 "bin/plugins/p.dll": b"MZ plugin", "README.txt": b"hello"}
        for rel, data in files.items():
            with open(os.path.join(folder, rel), "wb") as f:
                f.write(data)
        os.symlink("core.dll", os.path.join(folder, "bin", "alias.dll"))
        job_path = os.path.join(tmp, "job.json")
        with open(job_path, "w") as f:
            json.dump({"name": "mine", "family": "program",
                       "program": {"exe": "bin/app.exe", "args": ["--selftest"]},
                       "variants": ["as-built", "rebase"]}, f)
        r = run_cli(d, "submit", job_path, "--program-dir", folder)
        assert r.returncode == 0, r
        assert "program: 5 files, 4 uploaded" in r.stdout, r.stdout  # alias.dll = core.dll
        job_id = int(r.stdout.split("job ", 1)[1].split(":")[0])
        spec = d.api("GET", "/api/v1/jobs/%d" % job_id, token=d.admin_token).json()["spec"]
        files["bin/alias.dll"] = files["bin/core.dll"]
        assert spec["program"]["files"] == {k: "sha256:" + sha(v) for k, v in files.items()}
        assert spec["program"]["exe"] == "bin/app.exe"
        assert spec["program"]["args"] == ["--selftest"]
        # The same folder again, named from the job file this time: nothing uploaded.
        with open(job_path, "w") as f:
            json.dump({"name": "mine", "program": {"dir": "build", "exe": "bin/app.exe"},
                       "variants": ["bind"]}, f)
        r = run_cli(d, "submit", job_path)
        assert r.returncode == 0, r
        assert "program: 5 files, 0 uploaded (0 bytes)" in r.stdout, r.stdout
        # A link leading out of the folder is refused, nothing submitted.
        os.symlink("/etc/hostname", os.path.join(folder, "bin", "out.dll"))
        jobs = len(d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"])
        r = run_cli(d, "submit", job_path)
        assert r.returncode == 2 and "leads out of the program folder" in r.stderr, r
        assert len(d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"]) == jobs


def test_hostile_manifests_are_refused():
    with Daemon() as d:
        exe = b"MZ exe"
        assert put(d, exe).status == 201
        ref = "sha256:" + sha(exe)
        good = program_job({"bin/app.exe": ref})
        r = d.api("POST", "/api/v1/jobs", good, token=d.admin_token)
        assert r.status == 201, r
        good_id = r.json()["id"]
        before = d.api("GET", "/api/v1/jobs", token=d.admin_token).json()
        hostile = {
            "../evil.dll": "'.' or '..'", "bin/../../evil.dll": "'.' or '..'",
            "C:/Windows/evil.dll": "':'", "c:evil.dll": "':'",
            "\\\\server\\share\\evil.dll": "leading", "//server/share/evil.dll": "leading",
            "/etc/evil.dll": "leading", "bin\\evil.dll": "backslash",
            "CON": "device", "bin/nul.txt": "device", "Com1.dll": "device", "lpt9": "device",
            "aux .dll": "device", "bin/evil.dll.": "dot or a space", "bin/evil ": "dot or a space",
            "bin//evil.dll": "empty", "bin/evil\x01.dll": "control", "a" * 261: "260",
            "bin/e*.dll": "forbids",
        }
        for path, rule in hostile.items():
            job = program_job({"bin/app.exe": ref, path: ref})
            r = d.api("POST", "/api/v1/jobs", job, token=d.admin_token)
            assert r.status == 400, (path, r)
            assert rule in r.json()["error"]["message"], (path, r.json())
            validate("error.json", r.json())
        collisions = [{"bin/app.exe": ref, "BIN/App.EXE": ref},
                      {"bin/app.exe": ref, "bin/\u00c4.dll": ref, "bin/\u00e4.dll": ref},
                      {"bin/app.exe": ref, "\u041c/x.dll": ref, "\u043c/X.dll": ref},
                      {"bin/app.exe": ref, "bin": ref}]
        for files in collisions:
            r = d.api("POST", "/api/v1/jobs", program_job(files), token=d.admin_token)
            assert r.status == 400, (files, r)
        for job in (program_job({"bin/app.dll": ref}, exe="bin/app.dll"),
                    program_job({"bin/app.exe": ref}, exe="bin/other.exe"),
                    program_job({"bin/app.exe": "sha256:" + "A" * 64}),
                    program_job({"bin/app.exe": ref}, until="later"),
                    program_job({"bin/app.exe": ref}, timeout_s=0),
                    program_job({"bin/app.exe": ref}, args=["x"] * 65),
                    dict(program_job({"bin/app.exe": ref}), variants=["default"]),
                    dict(program_job({"bin/app.exe": ref}), generator={"dlls": 1, "exports": 1})):
            r = d.api("POST", "/api/v1/jobs", job, token=d.admin_token)
            assert r.status == 400, (job, r)
        # Files that were never uploaded.
        missing = "sha256:" + sha(b"never uploaded")
        r = d.api("POST", "/api/v1/jobs", program_job({"bin/app.exe": ref, "x.dll": missing}),
                  token=d.admin_token)
        assert r.status == 400 and r.json()["error"]["code"] == "missing_blobs", r
        assert r.json()["error"]["missing"] == [sha(b"never uploaded")]
        validate("error.json", r.json())
        assert d.api("GET", "/api/v1/jobs", token=d.admin_token).json() == before
        # The normalized section, as the agent will get it.
        spec = d.api("GET", "/api/v1/jobs/%d" % good_id,
                     token=d.admin_token).json()["spec"]
        assert spec["program"] == {"files": {"bin/app.exe": ref}, "exe": "bin/app.exe",
                                   "args": [], "until": "exit", "timeout_s": 60}
        assert [v["name"] for v in spec["variants"]] == ["as-built", "rebase", "bind", "aslr-off"]
        assert spec["variants"][2] == {"name": "bind", "bases": "unique", "bind": True,
                                       "aslr": "off"}
        assert "generator" not in spec


def test_program_files_add_up_to_a_cap():
    # One 100 kB blob under 30 paths is 3 MB of files: over a 2 MB cap,
    # though the blob store holds it once.
    with Daemon(["--program-max-bytes", str(2000000)]) as d:
        data = os.urandom(100000)
        assert put(d, data).status == 201
        ref = "sha256:" + sha(data)
        before = d.api("GET", "/api/v1/jobs", token=d.admin_token).json()
        files = {"bin/app.exe": ref}
        files.update({"bin/d%02d.dll" % i: ref for i in range(29)})
        r = d.api("POST", "/api/v1/jobs", program_job(files), token=d.admin_token)
        assert r.status == 413 and r.json()["error"]["code"] == "program_too_large", r
        assert "3000000 bytes" in r.json()["error"]["message"], r.json()
        validate("error.json", r.json())
        assert d.api("GET", "/api/v1/jobs", token=d.admin_token).json() == before
        # At the cap it is taken.
        files = {"bin/app.exe": ref}
        files.update({"bin/d%02d.dll" % i: ref for i in range(19)})
        r = d.api("POST", "/api/v1/jobs", program_job(files), token=d.admin_token)
        assert r.status == 201, r


def test_manifest_of_4096_files_fits_the_job_body_limit():
    # The documented most files, with 100-byte paths: about 720 KB of body.
    with Daemon() as d:
        data = b"MZ one file"
        assert put(d, data).status == 201
        ref = "sha256:" + sha(data)
        files = {"bin/app.exe": ref}
        files.update({"lib/%s/f%04d.dll" % ("x" * 86, i): ref for i in range(4095)})
        job = program_job(files)
        assert len(json.dumps(job)) > 700000
        r = d.api("POST", "/api/v1/jobs", job, token=d.admin_token)
        assert r.status == 201, r
        # One more file is over the manifest's limit, not the body's.
        files["bin/one-more.dll"] = ref
        r = d.api("POST", "/api/v1/jobs", program_job(files), token=d.admin_token)
        assert r.status == 400 and "4096" in r.json()["error"]["message"], r


def test_submit_refuses_a_manifest_over_the_body_limit_before_uploading():
    # 4,000 files with 230-byte paths: about 1.2 MB of manifest.
    with Daemon() as d, tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "build")
        deep = os.path.join(folder, "d" * 100, "e" * 100)
        os.makedirs(deep)
        for i in range(4000):
            with open(os.path.join(deep, "file-%04d-%s.dll" % (i, "f" * 10)), "wb") as f:
                f.write(b"MZ %d" % i)
        with open(os.path.join(folder, "app.exe"), "wb") as f:
            f.write(b"MZ app")
        job_path = os.path.join(tmp, "job.json")
        with open(job_path, "w") as f:
            json.dump({"name": "big", "family": "program", "program": {"exe": "app.exe"},
                       "variants": ["as-built"]}, f)
        r = run_cli(d, "submit", job_path, "--program-dir", folder)
        assert r.returncode == 2, r
        assert "more than the 1048576 a job may have" in r.stderr and "nothing was uploaded" in r.stderr, r
        assert stored_files(d) == []


def test_program_example_names_its_missing_blobs():
    with Daemon() as d:
        job = load_example("program-ci.json")
        validate("job_submit.json", job)
        r = d.api("POST", "/api/v1/jobs", job, token=d.admin_token)
        assert r.status == 400 and r.json()["error"]["code"] == "missing_blobs", r
        assert sorted(r.json()["error"]["missing"]) == sorted(
            v[7:] for v in job["program"]["files"].values())


run_tests(globals())
