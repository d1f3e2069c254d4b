"""Bisections and revisions have owners (issue 37, docs/bisect.md
"Owners and limits", docs/series.md "Owners"). Alice's series "app" holds
three revisions of a program (blobs really uploaded, jobs really
submitted); an agent "lab-1" is enrolled. Bob, another user, gets 403 and
changes nothing when he starts a bisection of her series, cancels hers,
or adds a revision to her series (as a job or as a schedule's job); the
admin may. A bisection's "agent" is an enrolled agent's name (control
characters, an unknown name and a name too long refused with 400, nothing
stored). One token has at most 4 bisections running: of ten started at
once exactly the ones up to the cap are made, the others get 409
too_many_bisections naming the limit, and a cancelled one frees a place.
No agent runs here: the checks are all made before any step runs."""
import hashlib
import threading

from harness import Daemon, run_tests

SERIES = "app"
CAP = 4  # BISECT_MAX_RUNNING_PER_CREATOR


def sha(data):
    return hashlib.sha256(data).hexdigest()


def user(d, name):
    r = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": name}, token=d.admin_token)
    assert r.status == 201, r
    return r.json()["token"]


def revision_job(d, token, series, revision):
    data = ("MZ build of %s %s" % (series, revision)).encode()
    r = d.api("PUT", "/api/v1/blobs/" + sha(data), data, token=token,
              headers={"Content-Type": "application/octet-stream"})
    assert r.status in (200, 201), r
    return {"name": "%s-%s" % (series, revision), "family": "program", "series": series,
            "revision": revision, "program": {"files": {"app.exe": "sha256:" + sha(data)}, "exe": "app.exe"},
            "variants": ["as-built"], "measure": {"warm": {"runs": 5, "warmup": 1}}}


def lab(d):
    """Alice's series of three revisions, Bob's token, agent lab-1."""
    alice, bob = user(d, "alice"), user(d, "bob")
    for rev in ("r1", "r2", "r3"):
        r = d.api("POST", "/api/v1/jobs", revision_job(d, alice, SERIES, rev), token=alice)
        assert r.status == 201, r
    d.enroll("lab-1", {"os": "win10"})
    return alice, bob


def bisect(d, token, series=SERIES, **extra):
    body = {"good": "r1", "bad": "r3", "agent": "lab-1"}
    body.update(extra)
    return d.api("POST", "/api/v1/series/%s/bisect" % series, body, token=token)


def bisection_count(d):
    return int(d.store_sql("SELECT count(*) FROM bisections")[0][0])


def test_only_the_series_owner_bisects_and_only_the_creator_cancels():
    with Daemon() as d:
        alice, bob = lab(d)
        r = bisect(d, bob)
        assert r.status == 403 and r.json()["error"]["code"] == "forbidden", r
        assert "user:alice" in r.json()["error"]["message"], r
        assert bisection_count(d) == 0
        r = bisect(d, alice)
        assert r.status == 201, r
        bisection = r.json()
        assert bisection["created_by"] == "user:alice" and bisection["agent"] == "lab-1", bisection
        path = "/api/v1/bisections/%d" % bisection["id"]
        r = d.api("POST", path + "/cancel", {}, token=bob)
        assert r.status == 403 and "user:alice" in r.json()["error"]["message"], r
        assert d.api("GET", path, token=bob).json()["state"] == "running"
        # Anyone who may read reads it; its creator cancels it.
        r = d.api("POST", path + "/cancel", {}, token=alice)
        assert r.status == 200 and r.json()["state"] == "cancelled", r
        # The admin may do both.
        r = bisect(d, d.admin_token)
        assert r.status == 201, r
        r = d.api("POST", "/api/v1/bisections/%d/cancel" % r.json()["id"], {}, token=d.admin_token)
        assert r.status == 200 and r.json()["state"] == "cancelled", r


def test_only_the_series_owner_adds_revisions():
    with Daemon() as d:
        alice, bob = lab(d)
        before = len(d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"])
        r = d.api("POST", "/api/v1/jobs", revision_job(d, bob, SERIES, "r5"), token=bob)
        assert r.status == 403 and "user:alice" in r.json()["error"]["message"], r
        # ... nor through a schedule, made or changed
        schedule = {"series": SERIES, "interval_s": 3600, "enabled": False,
                    "job": revision_job(d, bob, SERIES, "r5")}
        r = d.api("POST", "/api/v1/schedules", schedule, token=bob)
        assert r.status == 403, r
        own = dict(schedule, series="bobs", job=revision_job(d, bob, "bobs", "b1"))
        r = d.api("POST", "/api/v1/schedules", own, token=bob)
        assert r.status == 201, r
        assert len(d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"]) == before
        # His own series, and the admin on hers, are fine.
        r = d.api("POST", "/api/v1/jobs", revision_job(d, bob, "bobs", "b1"), token=bob)
        assert r.status == 201, r
        r = d.api("POST", "/api/v1/jobs", revision_job(d, d.admin_token, SERIES, "r4"), token=d.admin_token)
        assert r.status == 201, r
        # Alice's next bisection sees her revisions and the admin's, never Bob's.
        r = bisect(d, alice, bad="r4")
        assert r.status == 201, r
        assert [x["revision"] for x in r.json()["revisions"]] == ["r1", "r2", "r3", "r4"], r.json()


def test_agent_is_an_enrolled_agents_name():
    with Daemon() as d:
        alice, _ = lab(d)
        for agent, words in (("lab\u0001-1", "control character"), ("lab-1\n", "control character"),
                             ("ghost", "No agent named 'ghost'"), ("x" * 65, "1 to 64")):
            r = bisect(d, alice, agent=agent)
            assert r.status == 400, (agent, r)
            assert words in r.json()["error"]["message"], (agent, r)
        assert bisection_count(d) == 0
        # Enrollment refuses such a name too (the same rule).
        r = d.api("POST", "/api/v1/agents/enroll", {"name": "lab\u001b[31m"}, token=d.enroll_token)
        assert r.status == 400, r


def test_running_bisections_are_capped_per_token():
    with Daemon() as d:
        alice, _ = lab(d)
        answers = []
        threads = [threading.Thread(target=lambda: answers.append(bisect(d, alice))) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        made = [r for r in answers if r.status == 201]
        refused = [r for r in answers if r.status != 201]
        assert len(made) == CAP, answers
        for r in refused:
            assert r.status == 409 and r.json()["error"]["code"] == "too_many_bisections", r
            assert "BISECT_MAX_RUNNING_PER_CREATOR" in r.json()["error"]["message"], r
        assert bisection_count(d) == CAP
        # Another token has its own count; a cancelled one frees a place.
        assert bisect(d, d.admin_token).status == 201
        r = d.api("POST", "/api/v1/bisections/%d/cancel" % made[0].json()["id"], {}, token=alice)
        assert r.status == 200, r
        assert bisect(d, alice).status == 201
        assert bisect(d, alice).status == 409


if __name__ == "__main__":
    run_tests(globals())
