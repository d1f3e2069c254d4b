"""A schedule whose program's files are gone makes no job and says why
(issue 37, docs/series.md "Schedules"). Alice's schedule of a program job
(its blob really uploaded) loses the blob from the daemon's data folder.
Run by hand it answers 409 naming the missing file; fired by the clock it
fails the same way; no job is made either time, and the schedule shows
its owner the reason (last_skip) and the log a schedule_failed line. The
file uploaded again, the next run makes the job."""
import hashlib
import os
import time

from harness import Daemon, run_tests, wait_for

DATA = b"MZ scheduled build"
SHA = hashlib.sha256(DATA).hexdigest()


def put_blob(d, token):
    r = d.api("PUT", "/api/v1/blobs/" + SHA, DATA, token=token,
              headers={"Content-Type": "application/octet-stream"})
    assert r.status in (200, 201), r


def jobs(d):
    return d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"]


def test_schedule_with_missing_blobs_fails_to_fire_with_a_reason():
    with Daemon(["--schedule-tick-ms", "100"]) as d:
        r = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": "alice"}, token=d.admin_token)
        alice = r.json()["token"]
        put_blob(d, alice)
        job = {"name": "nightly", "family": "program", "variants": ["as-built"],
               "program": {"files": {"app.exe": "sha256:" + SHA}, "exe": "app.exe"}}
        r = d.api("POST", "/api/v1/schedules",
                  {"series": "nightly", "interval_s": 1, "job": job, "enabled": False}, token=alice)
        assert r.status == 201, r
        path = "/api/v1/schedules/%d" % r.json()["id"]
        os.remove(os.path.join(d.data_dir, "blobs", SHA[:2], SHA[2:]))

        # By hand: 409, naming the file; no job.
        r = d.api("POST", path + "/run", {}, token=alice)
        assert r.status == 409, r
        message = r.json()["error"]["message"]
        assert "no longer stored" in message and SHA[:12] in message, r
        assert jobs(d) == []
        skip = d.api("GET", path, token=alice).json()["last_skip"]
        assert skip and "no longer stored" in skip["reason"] and SHA[:12] in skip["reason"], skip

        # By the clock: the same, at each due time; still no job.
        first = skip["at"]
        assert d.api("PATCH", path, {"enabled": True}, token=alice).status == 200
        skip = wait_for("a timed run to fail",
                        lambda: (lambda s: s if s and s["at"] != first else None)(
                            d.api("GET", path, token=alice).json()["last_skip"]), timeout=15)
        assert "no longer stored" in skip["reason"], skip
        assert jobs(d) == []
        assert "schedule_failed" in d.read_log()

        # The file back: the next run makes the job.
        assert d.api("PATCH", path, {"enabled": False}, token=alice).status == 200
        put_blob(d, alice)
        r = d.api("POST", path + "/run", {}, token=alice)
        assert r.status == 201, r
        time.sleep(0.3)
        assert [j["id"] for j in jobs(d)] == [r.json()["job_id"]]


if __name__ == "__main__":
    run_tests(globals())
