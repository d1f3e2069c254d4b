"""Every mutating route refuses missing, malformed, unknown, revoked, wrong-kind
and other agents' tokens; tokens are made and revoked by the admin; the
token files are written as API.md says; a series and a schedule are changed,
run or deleted only by their owner or an admin, and only they read a
series' webhook URL."""
import hashlib
import os
import stat

from harness import Daemon, run_tests
from schemacheck import validate

JOB = {"name": "a", "family": "pe", "generator": {"dlls": 1, "exports": 1}, "variants": ["default"]}

# (method, path template, body, the kind of token that may call it)
MUTATING = [
    ("POST", "/api/v1/jobs", JOB, "user"),
    ("POST", "/api/v1/jobs/{job}/cancel", {}, "user"),
    ("POST", "/api/v1/agents/enroll", {"name": "x", "facts": {}, "labels": {}}, "enroll"),
    ("PATCH", "/api/v1/agents/{agent}", {"labels": {"room": "b"}}, "admin"),
    ("POST", "/api/v1/agents/{agent}/heartbeat", {}, "agent"),
    ("POST", "/api/v1/lease", {"wait": 0}, "agent"),
    ("POST", "/api/v1/tasks/{task}/progress", {"attempt": 1, "phase": "build", "percent": 5}, "agent"),
    ("POST", "/api/v1/tasks/{task}/result", {"attempt": 1, "facts": {}, "variants": []}, "agent"),
    ("POST", "/api/v1/tasks/{task}/fail", {"attempt": 1, "reason": "x"}, "agent"),
    ("POST", "/api/v1/tokens", {"kind": "user", "name": "x"}, "admin"),
    ("DELETE", "/api/v1/tokens/{token}", None, "admin"),
    # (an agent that holds a build task may upload too: test_builds.py)
    ("PUT", "/api/v1/blobs/" + hashlib.sha256(b"blob").hexdigest(), b"blob", "user"),
    ("PUT", "/api/v1/series/m", {"threshold_pct": 9}, "user"),
    ("POST", "/api/v1/schedules", {"series": "m", "interval_s": 60, "job": JOB}, "user"),
    ("PATCH", "/api/v1/schedules/{schedule}", {"enabled": False}, "user"),
    ("POST", "/api/v1/schedules/{schedule}/run", {}, "user"),
    ("DELETE", "/api/v1/schedules/{schedule}", None, "user"),
    ("POST", "/api/v1/alerts/1/ack", {}, "user"),
]


def state_snapshot(d):
    """Everything a refused request must leave unchanged."""
    jobs = d.api("GET", "/api/v1/jobs", token=d.admin_token).json()
    agents = d.api("GET", "/api/v1/agents", token=d.admin_token).json()
    tokens = d.api("GET", "/api/v1/tokens", token=d.admin_token).json()
    for a in agents["agents"]:
        a.pop("last_seen")
        a.pop("state")
    for j in jobs["jobs"]:
        j.pop("updated_at")
    series = d.api("GET", "/api/v1/series", token=d.admin_token).json()
    schedules = d.api("GET", "/api/v1/schedules", token=d.admin_token).json()
    return jobs, agents, tokens, series, schedules


def test_every_mutating_route_refuses_bad_tokens():
    with Daemon() as d:
        job_id = d.submit(JOB)["id"]
        agent_id, agent_token = d.enroll("holder", {"os": "win10"})
        other_id, other_token = d.enroll("other", {"os": "win10"})
        task = d.api("POST", "/api/v1/lease", {}, token=agent_token).json()
        r = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": "alice"}, token=d.admin_token)
        assert r.status == 201, r
        validate("token_created.json", r.json())
        user_token, user_token_id = r.json()["token"], r.json()["id"]
        r = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": "revoked"}, token=d.admin_token)
        revoked_token = r.json()["token"]
        r = d.api("DELETE", "/api/v1/tokens/%d" % r.json()["id"], token=d.admin_token)
        assert r.status == 200 and r.json() == {"id": r.json()["id"], "revoked": True}, r
        validate("token_revoked.json", r.json())
        r = d.api("POST", "/api/v1/schedules", {"series": "m", "interval_s": 3600, "job": JOB, "enabled": False},
                  token=d.admin_token)
        assert r.status == 201, r
        ids = {"job": job_id, "agent": agent_id, "task": task["task_id"], "token": user_token_id,
               "schedule": r.json()["id"]}
        good = {"admin": d.admin_token, "user": user_token, "enroll": d.enroll_token,
                "agent": agent_token}

        before = state_snapshot(d)
        for method, template, body, kind in MUTATING:
            path = template.format(**ids)
            bad = [(None, 401), ("not a token!", 401), ("lladm_" + "0" * 64, 401),
                   (revoked_token, 401)]
            for k, tok in good.items():
                allowed = k == kind or (kind == "user" and k == "admin") or \
                    (kind == "enroll" and k == "admin")
                if not allowed:
                    bad.append((tok, 403))
            if "{agent}" in template or "{task}" in template:
                bad.append((other_token, 403))  # another agent's task or heartbeat
            for tok, status in bad:
                r = d.api(method, path, body, token=tok)
                assert r.status == status, (method, path, tok and tok[:8], r)
                validate("error.json", r.json())
                if tok == d.enroll_token:  # the article agrees with the kind
                    assert r.json()["error"]["message"] == "An enroll token may not use this route.", r.json()
            # A malformed Authorization header, not Bearer.
            r = d.api(method, path, body, headers={"Authorization": "Basic Zm9vOmJhcg=="})
            assert r.status == 401, r
        assert state_snapshot(d) == before
        blob = "/api/v1/blobs/" + hashlib.sha256(b"blob").hexdigest()
        assert d.api("HEAD", blob, token=d.admin_token).status == 404
        assert not [f for _, _, fs in os.walk(os.path.join(d.data_dir, "blobs")) for f in fs]
        # Blob reads: users and agents; enrollment tokens may not.
        assert d.api("HEAD", blob, token=agent_token).status == 404
        assert d.api("HEAD", blob, token=d.enroll_token).status == 403
        assert d.api("GET", blob).status == 401

        # Reads need a user token unless public reads are on.
        assert d.api("GET", "/api/v1/jobs").status == 401
        assert d.api("GET", "/api/v1/jobs", token=agent_token).status == 403
        assert d.api("GET", "/api/v1/jobs", token=user_token).status == 200
        # The holder itself may post; a user may cancel; the admin may revoke the user.
        r = d.api("POST", "/api/v1/tasks/%d/progress" % task["task_id"],
                  {"attempt": 1, "phase": "build", "percent": 5}, token=agent_token)
        assert r.status == 200, r
        r = d.api("GET", "/api/v1/tokens", token=d.admin_token)
        validate("token_list.json", r.json())
        assert "token" not in str(r.json()["tokens"][0].keys())
        assert d.api("DELETE", "/api/v1/tokens/%d" % user_token_id, token=d.admin_token).status == 200
        assert d.api("GET", "/api/v1/jobs", token=user_token).status == 401


def test_token_files_and_env_tokens():
    with Daemon() as d:
        for name in ("admin.token", "enroll.token"):
            path = os.path.join(d.data_dir, name)
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert d.admin_token.startswith("lladm_") and len(d.admin_token) == 6 + 64
        log = d.read_log()
        assert d.admin_token not in log and d.enroll_token not in log
        assert "admin.token" in log
        data_dir = d.data_dir
        first_admin = d.admin_token
        d.stop()
        # A restart keeps the tokens it made.
        d2 = Daemon(data_dir=data_dir).start()
        try:
            assert d2.admin_token == first_admin
            assert d2.api("GET", "/api/v1/jobs", token=first_admin).status == 200
        finally:
            d2.stop()
    env = {"LOADLAB_ADMIN_TOKEN": "my-admin-token-0123456789",
           "LOADLAB_ENROLL_TOKEN": "my-enroll-token-0123456789"}
    with Daemon(env=env) as d:
        assert d.admin_token is None  # nothing written when the tokens are given
        assert d.api("GET", "/api/v1/jobs", token=env["LOADLAB_ADMIN_TOKEN"]).status == 200
        r = d.api("POST", "/api/v1/agents/enroll", {"name": "e"}, token=env["LOADLAB_ENROLL_TOKEN"])
        assert r.status == 201, r
        validate("agent_enrolled.json", r.json())


def user(d, name):
    r = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": name}, token=d.admin_token)
    assert r.status == 201, r
    return r.json()["token"]


def forbidden(r, owner):
    assert r.status == 403, r
    validate("error.json", r.json())
    assert r.json()["error"]["message"].endswith(
        " belongs to %s: only its owner or an admin may change it." % owner), r.json()


def test_owners():
    with Daemon(["--public-read"]) as d:
        alice, bob = user(d, "alice"), user(d, "bob")
        hook = "https://hooks.example.com/alice-secret"
        r = d.api("PUT", "/api/v1/series/own/a", {"threshold_pct": 10, "webhook_url": hook}, token=alice)
        assert r.status == 200 and r.json()["owner"] == "user:alice", r
        d.submit(dict(JOB, series="own/a"), token=alice)
        # another user changes nothing; the admin may, the owner stays
        before = d.api("GET", "/api/v1/series", token=d.admin_token).json()
        for body in ({"threshold_pct": 50}, {"webhook_url": "https://evil.example.com/"}, {"webhook_url": None}):
            forbidden(d.api("PUT", "/api/v1/series/own/a", body, token=bob), "user:alice")
        assert d.api("GET", "/api/v1/series", token=d.admin_token).json() == before
        r = d.api("PUT", "/api/v1/series/own/a", {"threshold_pct": 12}, token=d.admin_token)
        assert r.status == 200 and r.json()["owner"] == "user:alice" and r.json()["webhook_url"] == hook, r
        # the URL: the owner and admins read it; another user and anonymous readers do not
        for token, sees in ((alice, hook), (d.admin_token, hook), (bob, None), (None, None)):
            listed = d.api("GET", "/api/v1/series", token=token).json()["series"]
            assert [(s["name"], s["webhook_url"], s["owner"]) for s in listed] == [("own/a", sees, "user:alice")], (token, listed)
            got = d.api("GET", "/api/v1/series/own/a", token=token)
            assert got.status == 200 and got.json()["webhook_url"] == sees and got.json()["owner"] == "user:alice", got
            validate("series.json", got.json())
            assert hook not in got.body.decode() or sees
        # a series is its first job's submitter's before anyone sets it
        d.submit(dict(JOB, series="own/b"), token=bob)
        forbidden(d.api("PUT", "/api/v1/series/own/b", {"threshold_pct": 7}, token=alice), "user:bob")
        assert d.api("PUT", "/api/v1/series/own/b", {"threshold_pct": 7}, token=bob).status == 200

        # a schedule is its creator's
        r = d.api("POST", "/api/v1/schedules", {"series": "own/a", "interval_s": 3600, "job": JOB}, token=alice)
        assert r.status == 201 and r.json()["created_by"] == "user:alice", r
        sid = r.json()["id"]
        path = "/api/v1/schedules/%d" % sid
        before = d.api("GET", path, token=alice).json()
        forbidden(d.api("PATCH", path, {"interval_s": 60}, token=bob), "user:alice")
        forbidden(d.api("POST", path + "/run", {}, token=bob), "user:alice")
        forbidden(d.api("DELETE", path, token=bob), "user:alice")
        assert d.api("GET", path, token=alice).json() == before
        assert len(d.api("GET", "/api/v1/jobs", token=d.admin_token).json()["jobs"]) == 2
        assert d.api("PATCH", path, {"interval_s": 120}, token=alice).status == 200
        r = d.api("POST", path + "/run", {}, token=d.admin_token)
        assert r.status == 201, r
        assert d.api("PATCH", path, {"enabled": False}, token=d.admin_token).status == 200
        assert d.api("DELETE", path, token=alice).status == 200
        # a schedule's job makes its series its creator's
        r = d.api("POST", "/api/v1/schedules", {"series": "own/c", "interval_s": 3600, "job": JOB}, token=bob)
        assert d.api("POST", "/api/v1/schedules/%d/run" % r.json()["id"], {}, token=bob).status == 201
        forbidden(d.api("PUT", "/api/v1/series/own/c", {"threshold_pct": 7}, token=alice), "user:bob")

        # an admin gives a series and a schedule to a team: each user token of the team owns them
        r = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": "carol", "team": "perf"}, token=d.admin_token)
        assert r.status == 201 and r.json()["team"] == "perf", r
        validate("token_created.json", r.json())
        carol = r.json()["token"]
        for body in ({"kind": "enroll", "name": "e", "team": "perf"}, {"kind": "user", "name": "e", "team": "a b"},
                     {"kind": "user", "name": "e", "team": ""}):
            assert d.api("POST", "/api/v1/tokens", body, token=d.admin_token).status == 400, body
        listed = d.api("GET", "/api/v1/tokens", token=d.admin_token).json()
        validate("token_list.json", listed)
        assert [t["team"] for t in listed["tokens"] if t["name"] in ("alice", "carol")] == [None, "perf"], listed
        forbidden(d.api("PUT", "/api/v1/series/own/a", {"threshold_pct": 9}, token=carol), "user:alice")
        r = d.api("PUT", "/api/v1/series/own/a", {"owner": "team:perf"}, token=alice)
        assert r.status == 403 and r.json()["error"]["message"] == "Only an admin names an owner.", r
        for bad in ("perf", "team:", "team:a b", "boss:x", 7):
            assert d.api("PUT", "/api/v1/series/own/a", {"owner": bad}, token=d.admin_token).status == 400, bad
        r = d.api("PUT", "/api/v1/series/own/a", {"owner": "team:perf"}, token=d.admin_token)
        assert r.status == 200 and r.json()["owner"] == "team:perf", r
        assert d.api("PUT", "/api/v1/series/own/a", {"threshold_pct": 9}, token=carol).status == 200
        assert d.api("GET", "/api/v1/series/own/a", token=carol).json()["webhook_url"] == hook
        forbidden(d.api("PUT", "/api/v1/series/own/a", {"threshold_pct": 8}, token=alice), "team:perf")
        r = d.api("POST", "/api/v1/schedules", {"series": "own/a", "interval_s": 3600, "job": JOB}, token=alice)
        path = "/api/v1/schedules/%d" % r.json()["id"]
        assert r.json()["owner"] == "user:alice", r
        assert d.api("PATCH", path, {"owner": "team:perf"}, token=alice).status == 403
        r = d.api("PATCH", path, {"owner": "team:perf"}, token=d.admin_token)
        assert r.status == 200 and r.json()["owner"] == "team:perf" and r.json()["created_by"] == "user:alice", r
        validate("schedule.json", r.json())
        assert d.api("PATCH", path, {"enabled": False}, token=carol).status == 200
        forbidden(d.api("DELETE", path, token=alice), "team:perf")
        forbidden(d.api("POST", path + "/run", {}, token=bob), "team:perf")
        assert d.api("DELETE", path, token=carol).status == 200


def test_public_read():
    with Daemon(["--public-read"]) as d:
        assert d.api("GET", "/api/v1/jobs").status == 200
        assert d.api("GET", "/api/v1/agents").status == 200
        assert d.api("POST", "/api/v1/jobs", JOB).status == 401
        assert d.api("GET", "/api/v1/tokens").status == 401


run_tests(globals())
