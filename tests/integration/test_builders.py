"""Builders the admin names (issue 37 item 2, docs/builds.md "Who builds"):
an agent that enrolls claiming every toolchain is never leased a build
until an admin marks it a builder; only an admin token sets the mark
(403 for a user or an agent, 400 in an enrollment body, and no fact an
agent reports sets it); once marked it is leased the build, and the job
and its report name it. `loadlab agents` shows the mark and sets it. Runs
on SQLite and on PostgreSQL (LOADLAB_TEST_STORE=postgresql)."""
import subprocess

from harness import LOADLAB, Daemon, run_tests
from schemacheck import validate

# What the rogue agent of the probe claimed: every compiler the daemon asks for.
ROGUE = {"os": "linux", "arch": "x86_64", "builder": True,
         "toolchains": ["x86_64-w64-mingw32-gcc", "i686-w64-mingw32-gcc"],
         "toolchain": ["gcc+ld", "gcc+lld", "clang+ld", "clang+lld"]}
PE = {"name": "pe", "family": "pe", "generator": {"dlls": 1, "exports": 2}, "variants": ["default"],
      "matrix": {"cells": {"os": ["linux"]}}, "build": "shared"}
ELF = {"name": "elf", "family": "elf", "generator": {"dlls": 1, "exports": 2}, "variants": ["default"],
       "matrix": {"cells": {"os": ["linux"]}}, "build": "shared"}


def lease(d, token):
    r = d.api("POST", "/api/v1/lease", {"wait": 0}, token=token)
    assert r.status in (200, 204), r
    return r.json() if r.status == 200 else None


def agent(d, agent_id):
    r = d.api("GET", "/api/v1/agents/%d" % agent_id, token=d.admin_token)
    assert r.status == 200, r
    validate("agent.json", r.json())
    return r.json()


def cli(d, *args):
    return subprocess.run([LOADLAB, "--server", d.url, "--token", d.admin_token] + list(args),
                          capture_output=True, text=True, timeout=60)


def test_a_rogue_agent_gets_no_build_until_an_admin_marks_it():
    with Daemon(shared_build=True) as d:
        pe, elf = d.submit(PE)["id"], d.submit(ELF)["id"]
        # An enrollment body cannot make a builder: refused, nothing enrolled.
        r = d.api("POST", "/api/v1/agents/enroll", {"name": "rogue", "facts": ROGUE, "builder": True},
                  token=d.enroll_token)
        assert r.status == 400 and "builder" in r.json()["error"]["message"], r
        assert d.api("GET", "/api/v1/agents", token=d.admin_token).json()["agents"] == []
        rogue_id, rogue = d.enroll("rogue", ROGUE)
        assert agent(d, rogue_id)["builder"] is False  # its fact "builder" is only a fact
        # Every toolchain listed, yet no build: the probe's reproduction refused.
        for _ in range(3):
            assert lease(d, rogue) is None
        for job_id in (pe, elf):
            build = d.job(job_id)["builds"][0]
            assert build["state"] == "queued" and build["agent_id"] is None and build["builder"] is None, build
            assert build["waiting"]["reason"].startswith("agent rogue can build ") and \
                "but is not marked as a builder (an admin marks it: loadlab agents --builder %d)" % rogue_id in \
                build["waiting"]["reason"], build
        # Only an admin token sets the mark.
        r = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": "alice"}, token=d.admin_token)
        user = r.json()["token"]
        for token in (user, rogue):
            r = d.api("PATCH", "/api/v1/agents/%d" % rogue_id, {"builder": True}, token=token)
            assert r.status == 403 and r.json()["error"]["code"] == "forbidden", r
        r = d.api("PATCH", "/api/v1/agents/%d" % rogue_id, {"builder": True})
        assert r.status == 401, r
        for bad in ({"builder": "yes"}, {"builder": None}, {"builder": 1}):
            r = d.api("PATCH", "/api/v1/agents/%d" % rogue_id, bad, token=d.admin_token)
            assert r.status == 400, (bad, r)
        r = d.api("PATCH", "/api/v1/agents/%d" % rogue_id, {"builder": True, "quarantined": "no"},
                  token=d.admin_token)
        assert r.status == 400, r  # a bad body changes nothing, the good half neither
        assert agent(d, rogue_id)["builder"] is False
        assert lease(d, rogue) is None
        # The admin marks it: it is leased the builds, and the job names it.
        marked = d.mark_builder(rogue_id)
        validate("agent.json", marked)
        assert marked["labels"] == {} and marked["state"] == "online", marked
        listed = d.api("GET", "/api/v1/agents", token=d.admin_token).json()
        validate("agent_list.json", listed)
        assert [a["builder"] for a in listed["agents"]] == [True]
        first = lease(d, rogue)
        assert first["kind"] == "build" and first["job_id"] == pe, first
        build = d.job(pe)["builds"][0]
        assert build["agent_id"] == rogue_id and build["builder"] == "rogue", build
        validate("job.json", d.job(pe))
        # Unmarked again: the next build waits, and says why.
        assert d.mark_builder(rogue_id, False)["builder"] is False
        assert lease(d, rogue) is None
        assert "not marked as a builder" in d.job(elf)["builds"][0]["waiting"]["reason"]
        # Labels and quarantine leave the mark as it is.
        d.mark_builder(rogue_id)
        r = d.api("PATCH", "/api/v1/agents/%d" % rogue_id, {"labels": {"rack": "a"}}, token=d.admin_token)
        assert r.status == 200 and r.json()["builder"] is True and r.json()["labels"] == {"rack": "a"}, r
        r = d.api("PATCH", "/api/v1/agents/%d" % rogue_id, {"quarantined": True}, token=d.admin_token)
        assert r.status == 200 and r.json()["builder"] is True and r.json()["state"] == "quarantined", r
        assert lease(d, rogue) is None  # a quarantined builder builds nothing
        r = d.api("PATCH", "/api/v1/agents/%d" % rogue_id, {"quarantined": False}, token=d.admin_token)
        second = lease(d, rogue)
        assert second["kind"] == "build" and second["job_id"] == elf, second
        r = d.api("PATCH", "/api/v1/agents/999", {"builder": True}, token=d.admin_token)
        assert r.status == 404, r


def test_loadlab_agents_shows_and_sets_the_mark():
    with Daemon(shared_build=True) as d:
        d.submit(PE)
        one, one_token = d.enroll("lab-linux", ROGUE)
        d.enroll("twin", {"os": "winxp"})
        d.enroll("twin", {"os": "winxp"})
        p = cli(d, "agents")
        assert p.returncode == 0, p.stderr
        header, row = p.stdout.splitlines()[0], p.stdout.splitlines()[1]
        column = header.index("BUILDER")
        assert header.index("STATE") < column < header.index("LAST SEEN"), header
        assert row[column:].split()[0] == "-", p.stdout
        p = cli(d, "agents", "--builder", "lab-linux")
        assert p.returncode == 0 and p.stdout == \
            "agent %d (lab-linux) is a builder: it may lease build tasks\n" % one, (p.stdout, p.stderr)
        assert agent(d, one)["builder"] is True
        assert lease(d, one_token)["kind"] == "build"
        p = cli(d, "agents")
        assert p.stdout.splitlines()[1][column:].split()[0] == "yes", p.stdout
        p = cli(d, "agents", "--no-builder", str(one))
        assert p.returncode == 0 and p.stdout == "agent %d (lab-linux) is no longer a builder\n" % one, p
        assert agent(d, one)["builder"] is False
        # Names that are not one agent's, and a user's token: one clear line, nothing changed.
        for args, message in ((("--builder", "twin"), "2 agents are named 'twin'"),
                              (("--builder", "nobody"), "No agent is named or numbered 'nobody'"),
                              (("--builder", "lab-linux", "--no-builder", "lab-linux"), "once"),
                              (("--builder", "lab-linux", "--wide"), "--wide lists")):
            p = cli(d, "agents", *args)
            assert p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1, (args, p)
            assert message in p.stderr, (args, p.stderr)
        user = d.api("POST", "/api/v1/tokens", {"kind": "user", "name": "alice"}, token=d.admin_token).json()
        p = subprocess.run([LOADLAB, "--server", d.url, "--token", user["token"], "agents", "--builder",
                            "lab-linux"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "HTTP 403 forbidden" in p.stderr, p
        assert [a["builder"] for a in d.api("GET", "/api/v1/agents", token=d.admin_token).json()["agents"]] == \
            [False, False, False]


run_tests(globals())
