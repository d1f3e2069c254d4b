"""Automatic bisection of a program series (issue 29, docs/bisect.md): 16
revisions of a tiny Linux program, built with the C compiler here, each
revision's bytes its own (-DREVISION=N), and from revision r11 on 20 ms of
busy startup work (clock_gettime). Every revision is a program job of
series "startup" (an ELF program: docs/program-elf.md; the blobs stay
stored); the bad one runs once on the Linux agent, natively, so the
bisection knows its agent and its cell (os=linux, which an ELF program
job gets). Then `loadlab bisect startup --good r00 --bad r15`: the daemon
runs two-build A/B jobs pinned to that agent, really measured by it (the
agent is started for each step's task), and names r11 as the culprit in
at most 6 steps, each step's job linked and measured the way the
series' jobs are (their noise retakes and warmup), its effect with an
interval. The
daemon is stopped and started again after the second step: the bisection
goes on from its stored document. A second bisection is cancelled (its
step's job with it); bad requests are refused and store nothing.

What is asserted is the daemon's bisection (server/schedules/bisect*.c),
which reads the revisions' manifests and the A/B verdict whatever the
program's format: the programs are native, so the test needs no Wine and
takes no "wine" lock. A/B program jobs under Wine are test_program_ab.py's."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "agent"))
import harness  # noqa: E402
import program_jobs  # noqa: E402
from schemacheck import validate  # noqa: E402

CC = os.environ.get("CC", "cc")
REVISIONS = 16
CULPRIT = 11
SOURCE = r"""
#include <time.h>
/* revision REVISION; SLOW: 20 ms of startup work */
volatile int revision = REVISION;
int main(void)
{
#ifdef SLOW
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec) < 20000000LL);
#endif
	return revision < 0;
}
"""


# How the series' jobs are measured; each step's job measures the same way
# (its runs are the bisection's): no run taken again for noise, one warmup
# run. The steps' verdicts are a 20 ms effect against a program of about a
# millisecond, far above a busy machine's noise, so the retakes (a 200 ms
# pause each, up to 10 per program and step) would buy nothing here.
SERIES_MEASURE = {"warm": {"runs": 5, "warmup": 1}, "noise": harness.NO_NOISE_RETAKES}


def build_revisions(tmp):
    src = os.path.join(tmp, "app.c")
    with open(src, "w") as f:
        f.write(SOURCE)
    folders = []
    for i in range(REVISIONS):
        folder = os.path.join(tmp, "r%02d" % i)
        os.makedirs(folder)
        args = [CC, "-O2", "-DREVISION=%d" % i] + (["-DSLOW"] if i >= CULPRIT else []) + \
            ["-o", os.path.join(folder, "app"), src]
        subprocess.run(args, check=True, timeout=120)
        folders.append(folder)
    return folders


def cli(d, *args, timeout=120):
    return subprocess.run([program_jobs.LOADLAB] + list(args), capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, LOADLAB_SERVER=d.url, LOADLAB_TOKEN=d.admin_token))


def submit_revision(d, tmp, folder, revision):
    job_path = os.path.join(tmp, revision + ".json")
    with open(job_path, "w") as f:
        json.dump({"name": "startup-" + revision, "family": "program", "series": "startup",
                   "revision": revision, "program": {"exe": "app"}, "variants": ["as-built"],
                   "measure": SERIES_MEASURE}, f)
    r = cli(d, "submit", job_path, "--program-dir", folder)
    assert r.returncode == 0, r
    return int(r.stdout.split("job ", 1)[1].split(":")[0])


def queued_job(d):
    jobs = d.api("GET", "/api/v1/jobs?state=queued", token=d.admin_token).json()["jobs"]
    return jobs[0]["id"] if jobs else None


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), keys
    return dict(pairs)


def bisection(d, bid):
    """GET /api/v1/bisections/BID, strict JSON (no key twice, no NaN)."""
    r = d.api("GET", "/api/v1/bisections/%d" % bid, token=d.admin_token)
    assert r.status == 200, r
    return json.loads(r.body, object_pairs_hook=no_duplicates,
                      parse_constant=lambda c: (_ for _ in ()).throw(AssertionError(c)))


def run_steps(d, data_dir, bid, until_judged=None, timeout=1500):
    """Runs the agent for each queued step until bisection BID ends (or
    UNTIL_JUDGED steps are judged): its document."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        b = bisection(d, bid)
        judged = sum(1 for s in b["steps"] if s.get("judged"))
        if b["state"] != "running" or (until_judged and judged >= until_judged):
            return b
        if queued_job(d):
            code, log = program_jobs.run_agent_once(d.url, data_dir, d.enroll_token, "bisect-agent")
            assert code == 0, log[-3000:]
        else:
            time.sleep(0.5)
    raise AssertionError("bisection %d did not end: %r" % (bid, bisection(d, bid)))


def test_bisect_names_the_culprit_and_survives_a_restart():
    with tempfile.TemporaryDirectory(prefix="loadlab-bisect-") as tmp:
        folders = build_revisions(tmp)
        d = harness.Daemon(extra_args=["--schedule-tick-ms", "200"]).start()
        try:
            data_dir = os.path.join(tmp, "agent")
            os.makedirs(data_dir)
            ids = [submit_revision(d, tmp, f, "r%02d" % i) for i, f in enumerate(folders)]
            for job_id in ids[:-1]:  # kept for their manifests, not run
                assert d.api("POST", "/api/v1/jobs/%d/cancel" % job_id, {}, token=d.admin_token).status == 200
            code, log = program_jobs.run_agent_once(d.url, data_dir, d.enroll_token, "bisect-agent")
            assert code == 0, log[-3000:]

            # refused, nothing stored
            for body, status in [({"good": "r15", "bad": "r00"}, 400), ({"good": "r00", "bad": "nope"}, 404),
                                 ({"good": "r00", "bad": "r15", "extra": 1}, 400),
                                 ({"good": "r00", "bad": "r15", "variant": "bind"}, 400)]:
                r = d.api("POST", "/api/v1/series/startup/bisect", body, token=d.admin_token)
                assert r.status == status, (body, r)
            assert d.api("GET", "/api/v1/bisections/1", token=d.admin_token).status == 404
            assert d.api("POST", "/api/v1/series/none/bisect", {"good": "a", "bad": "b"},
                         token=d.admin_token).status == 404

            r = cli(d, "bisect", "startup", "--good", "r00", "--bad", "r15")
            assert r.returncode == 0, r
            bid = int(r.stdout.split("bisection ", 1)[1].split(":")[0])
            b = bisection(d, bid)
            validate("bisection.json", b)
            assert b["agent"] == "bisect-agent" and b["cell"] == "os=linux" and len(b["revisions"]) == 16, b

            b = run_steps(d, data_dir, bid, until_judged=2)
            assert b["state"] == "running", b
            d.stop()
            d.start()  # the same data folder: the bisection goes on from the store
            b = run_steps(d, data_dir, bid)
            for s in b["steps"]:
                print("step %d %s %s: runs %d ratio %.4f [%.4f, %.4f] %s" % (
                    s["step"], s["kind"], s["candidate"], s["runs"], s.get("ratio", 0), s.get("ci_low", 0),
                    s.get("ci_high", 0), s.get("verdict")))
            assert b["state"] == "done", b
            validate("bisection.json", b)
            assert b["result"]["culprit"] == "r%02d" % CULPRIT and b["result"]["last_good"] == "r%02d" % (
                CULPRIT - 1), b["result"]
            assert b["result"]["steps"] <= 6, b["result"]
            effect = b["result"]["effect"]
            assert effect["ci_low"] > 1 and effect["ratio"] >= effect["ci_low"], effect
            for s in b["steps"]:
                job = d.api("GET", "/api/v1/jobs/%d" % s["job_id"], token=d.admin_token).json()
                assert job["state"] == "done" and job["spec"]["program"]["builds"][0]["label"] == "base", job
                measure = job["spec"]["measure"]
                assert measure.get("noise") == SERIES_MEASURE["noise"], measure
                assert measure["warm"]["runs"] == s["runs"] and measure["warm"]["warmup"] == 1, measure
            r = cli(d, "bisect", "status", str(bid))
            assert r.returncode == 0 and "culprit: r%02d" % CULPRIT in r.stdout, r

            # a second one, cancelled with its step's job
            r = d.api("POST", "/api/v1/series/startup/bisect", {"good": "r00", "bad": "r15"},
                      token=d.admin_token)
            assert r.status == 201, r
            bid2 = r.json()["id"]
            harness.wait_for("the first step's job", lambda: bisection(d, bid2)["steps"], timeout=30)
            r = cli(d, "bisect", "cancel", str(bid2))
            assert r.returncode == 0 and "cancelled" in r.stdout, r
            b2 = bisection(d, bid2)
            assert b2["state"] == "cancelled", b2
            job = d.api("GET", "/api/v1/jobs/%d" % b2["steps"][0]["job_id"], token=d.admin_token).json()
            assert job["state"] == "cancelled", job
            assert d.api("POST", "/api/v1/bisections/%d/cancel" % bid2, {}, token=d.admin_token).status == 409
        finally:
            d.close()


if __name__ == "__main__":
    test_bisect_names_the_culprit_and_survives_a_restart()
