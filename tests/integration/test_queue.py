"""The daemon's queue, driven over real HTTP as a user and agents would.

Matrix expansion, matching, long-poll lease, heartbeats, progress, results,
replay and stale attempts, lease expiry, retries and dead tasks,
cancellation, each_agent jobs, priorities, the job state following its
tasks, and ELF program jobs routed to Linux agents. Responses are checked against the JSON Schemas in schemas/.
"""
import hashlib
import threading
import time

from harness import Daemon, load_example, run_tests
from schemacheck import validate

WIN10_SSD = {"os": "win10", "disk": "ssd", "arch": "x86_64", "cores": 2}
WINXP_HDD = {"os": "winxp", "disk": "hdd", "arch": "x86"}


def lease(d, token, wait=0):
    r = d.api("POST", "/api/v1/lease", {"wait": wait}, token=token, timeout=wait + 30)
    assert r.status in (200, 204), r
    if r.status == 200:
        validate("lease.json", r.json())
        return r.json()
    assert r.body == b"", r
    return None


def result_body(attempt, name="default"):
    return {"attempt": attempt, "facts": {"os": "win10"},
            "variants": [{"name": name, "warm": {"samples_us": [1000, 1010, 990]}}]}


def test_matrix_expands_and_agents_lease_only_matching_cells():
    with Daemon() as d:
        created = d.submit(load_example("pietrek-2000.json"))
        validate("job_created.json", created)
        assert created["task_count"] == 4 and created["state"] == "queued"
        _, t10 = d.enroll("win10-ssd", WIN10_SSD)
        _, txp = d.enroll("xp-hdd", WINXP_HDD)
        _, tlinux = d.enroll("linux", {"os": "linux", "disk": "nvme"})
        a = lease(d, t10)
        assert a["cell"] == {"os": "win10", "disk": "ssd"}, a
        assert [v["name"] for v in a["job"]["variants"]] == \
            ["default", "rebase", "bind", "ordinal", "ordinal+rebase", "ordinal+bind"]
        assert a["job"]["variants"][2] == {"name": "bind", "bases": "unique", "bind": True,
                                           "imports": "name", "order": "link"}
        assert lease(d, t10) is None  # the only win10/ssd cell is taken
        b = lease(d, txp)
        assert b["cell"] == {"os": "winxp", "disk": "hdd"}
        assert lease(d, tlinux) is None
        # A label can stand in for a fact: make the linux box an "hdd win10".
        lid = [x for x in d.api("GET", "/api/v1/agents", token=d.admin_token).json()["agents"]
               if x["name"] == "linux"][0]["id"]
        r = d.api("PATCH", "/api/v1/agents/%d" % lid, {"labels": {"os": "win10", "disk": "hdd"}},
                  token=d.admin_token)
        assert r.status == 200, r
        validate("agent.json", r.json())
        c = lease(d, tlinux)
        assert c["cell"] == {"os": "win10", "disk": "hdd"}
        j = d.job(created["id"])
        assert j["state"] == "running" and j["tasks_by_state"]["leased"] == 3
        r = d.api("GET", "/api/v1/agents", token=d.admin_token)
        validate("agent_list.json", r.json())
        holders = {x["name"]: x["current_task"] for x in r.json()["agents"]}
        assert holders["win10-ssd"] == a["task_id"] and holders["xp-hdd"] == b["task_id"]


def test_progress_results_replay_and_job_done():
    with Daemon() as d:
        created = d.submit({"name": "one", "family": "pe", "generator": {"dlls": 2, "exports": 3},
                            "variants": ["default", "rebase"]})
        assert created["task_count"] == 1
        aid, tok = d.enroll("a", WIN10_SSD)
        t = lease(d, tok)
        tid, att = t["task_id"], t["attempt"]
        assert att == 1
        for phase, pct in (("generate", 10), ("build", 40), ("warm", 90)):
            r = d.api("POST", "/api/v1/tasks/%d/progress" % tid,
                      {"attempt": att, "phase": phase, "percent": pct}, token=tok)
            assert r.status == 200, r
            validate("progress.json", r.json())
        task = d.job(created["id"])["tasks"][0]
        assert task["phase"] == "warm" and task["percent"] == 90 and task["agent_id"] == aid
        r1 = d.api("POST", "/api/v1/tasks/%d/result" % tid, result_body(att), token=tok)
        assert r1.status == 200, r1
        validate("result_accepted.json", r1.json())
        r2 = d.api("POST", "/api/v1/tasks/%d/result" % tid, result_body(att), token=tok)
        assert r2.status == 200 and r2.body == r1.body, (r1, r2)  # a replay: the same answer
        j = d.job(created["id"])
        assert j["state"] == "done" and j["tasks"][0]["state"] == "done"
        assert j["tasks"][0]["result_id"] == r1.json()["result_id"]
        metrics = d.api("GET", "/metrics").body.decode()
        assert "loadlab_results_stored 1\n" in metrics, metrics  # one row for two posts
        assert "loadlab_results_ingested_total 1\n" in metrics
        # Progress after done is a stale attempt.
        r = d.api("POST", "/api/v1/tasks/%d/progress" % tid,
                  {"attempt": att, "phase": "report", "percent": 100}, token=tok)
        assert r.status == 409 and r.json()["error"]["code"] == "stale_attempt", r


def test_expired_lease_goes_back_and_stale_attempt_gets_409():
    with Daemon(["--lease-seconds", "1", "--max-attempts", "3"]) as d:
        created = d.submit({"name": "exp", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                            "variants": ["default"]})
        _, dead_agent = d.enroll("killed", WIN10_SSD)
        _, live_agent = d.enroll("alive", WIN10_SSD)
        first = lease(d, dead_agent)
        assert first["attempt"] == 1
        assert lease(d, live_agent) is None
        # The first agent goes silent; its lease expires and the task is
        # leased again, as attempt 2, by a long-polling agent.
        start = time.time()
        second = lease(d, live_agent, wait=10)
        assert second is not None and second["task_id"] == first["task_id"], second
        assert second["attempt"] == 2
        assert time.time() - start < 8
        # The killed agent comes back with its old attempt: 409, nothing stored.
        r = d.api("POST", "/api/v1/tasks/%d/result" % first["task_id"], result_body(1),
                  token=dead_agent)
        assert r.status == 409 and r.json()["error"]["code"] == "stale_attempt", r
        validate("error.json", r.json())
        r = d.api("POST", "/api/v1/tasks/%d/result" % first["task_id"], result_body(2),
                  token=live_agent)
        assert r.status == 200, r
        assert d.job(created["id"])["state"] == "done"
        metrics = d.api("GET", "/metrics").body.decode()
        assert "loadlab_leases_expired_total 1\n" in metrics
        assert "loadlab_results_stored 1\n" in metrics


def test_heartbeats_keep_a_lease_alive():
    with Daemon(["--lease-seconds", "1"]) as d:
        d.submit({"name": "hb", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                  "variants": ["default"]})
        aid, tok = d.enroll("a", WIN10_SSD)
        _, other = d.enroll("b", WIN10_SSD)
        t = lease(d, tok)
        for _ in range(6):
            time.sleep(0.5)
            r = d.api("POST", "/api/v1/agents/%d/heartbeat" % aid, {}, token=tok)
            assert r.status == 200, r
            validate("heartbeat.json", r.json())
            assert [x["task_id"] for x in r.json()["tasks"]] == [t["task_id"]]
            assert r.json()["tasks"][0]["cancelled"] is False
        assert lease(d, other) is None  # 3 s later, still held


def test_failures_retry_with_backoff_then_die():
    with Daemon(["--max-attempts", "2", "--retry-backoff", "1"]) as d:
        created = d.submit({"name": "f", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                            "variants": ["default"]})
        _, tok = d.enroll("a", WIN10_SSD)
        t = lease(d, tok)
        r = d.api("POST", "/api/v1/tasks/%d/fail" % t["task_id"],
                  {"attempt": 1, "reason": "mingw crashed"}, token=tok)
        assert r.status == 200, r
        validate("fail.json", r.json())
        assert r.json()["state"] == "queued" and r.json()["retry_at"]
        assert lease(d, tok) is None  # backing off
        j = d.job(created["id"])
        assert j["tasks"][0]["last_error"] == "mingw crashed" and j["tasks"][0]["retry_at"]
        t2 = lease(d, tok, wait=5)
        assert t2 and t2["attempt"] == 2
        r = d.api("POST", "/api/v1/tasks/%d/fail" % t["task_id"],
                  {"attempt": 2, "reason": "again"}, token=tok)
        assert r.json()["state"] == "dead" and r.json()["retry_at"] is None, r
        j = d.job(created["id"])
        assert j["state"] == "failed" and j["tasks"][0]["state"] == "dead"


def test_cancel_stops_leasing_and_tells_the_holder():
    with Daemon() as d:
        created = d.submit({"name": "c", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                            "variants": ["default"], "matrix": {"cells": {"n": ["1", "2"]}}})
        aid, tok = d.enroll("a", {"n": "1"})
        _, tok2 = d.enroll("b", {"n": "2"})
        t = lease(d, tok)
        r = d.api("POST", "/api/v1/jobs/%d/cancel" % created["id"], token=d.admin_token)
        assert r.status == 200 and r.json()["state"] == "cancelled", r
        validate("job_summary.json", r.json())
        assert lease(d, tok2) is None
        hb = d.api("POST", "/api/v1/agents/%d/heartbeat" % aid, None, token=tok).json()
        assert hb["tasks"] == [{"task_id": t["task_id"], "attempt": 1, "state": "cancelled",
                                "cancelled": True, "lease_expires_at": None}], hb
        hb = d.api("POST", "/api/v1/agents/%d/heartbeat" % aid, None, token=tok).json()
        assert hb["tasks"] == [], hb  # told once
        r = d.api("POST", "/api/v1/tasks/%d/result" % t["task_id"], result_body(1), token=tok)
        assert r.status == 409 and r.json()["error"]["code"] == "task_cancelled", r
        r = d.api("POST", "/api/v1/jobs/%d/cancel" % created["id"], token=d.admin_token)
        assert r.status == 409, r
        assert d.job(created["id"])["tasks_by_state"]["cancelled"] == 2


def test_each_agent_and_priority():
    with Daemon() as d:
        _, ta = d.enroll("a", {"os": "linux"})
        _, tb = d.enroll("b", {"os": "win10"})
        _, tc = d.enroll("c", {"os": "win10"})
        r = d.api("POST", "/api/v1/jobs", {"name": "e", "family": "elf",
                                           "generator": {"dlls": 1, "exports": 1},
                                           "variants": ["default", "now"],
                                           "matrix": {"each_agent": {"os": ["win10"]}}},
                  token=d.admin_token)
        assert r.status == 201 and r.json()["task_count"] == 2, r
        assert lease(d, ta) is None
        low = d.submit({"name": "low", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                        "variants": ["default"], "priority": -5})
        high = d.submit({"name": "high", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                         "variants": ["default"], "priority": 50})
        assert lease(d, ta)["job_id"] == high["id"]
        assert lease(d, ta)["job_id"] == low["id"]
        got = lease(d, tb)
        assert got["cell"] == {"agent": "b"} and got["job"]["family"] == "elf"
        assert lease(d, tb) is None  # its one pinned task is taken
        assert lease(d, tc)["cell"] == {"agent": "c"}
        r = d.api("POST", "/api/v1/jobs", {"name": "none", "family": "pe",
                                           "generator": {"dlls": 1, "exports": 1},
                                           "variants": ["default"],
                                           "matrix": {"each_agent": {"os": ["beos"]}}},
                  token=d.admin_token)
        assert r.status == 400 and "each_agent" in r.json()["error"]["message"], r


def test_long_poll_wakes_on_submit_and_quarantine_blocks():
    with Daemon() as d:
        aid, tok = d.enroll("a", WIN10_SSD)
        got = {}

        def poll():
            got["lease"] = lease(d, tok, wait=20)
            got["at"] = time.time()

        th = threading.Thread(target=poll)
        th.start()
        time.sleep(1.0)
        submitted = time.time()
        created = d.submit({"name": "w", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                            "variants": ["default"]})
        th.join(25)
        assert got["lease"] and got["lease"]["job_id"] == created["id"]
        # Woken by the submit, not at the end of its 20 s wait.
        assert got["at"] - submitted < 10, got["at"] - submitted
        # Quarantine: nothing is leased, even with work queued.
        d.submit({"name": "q", "family": "pe", "generator": {"dlls": 1, "exports": 1},
                  "variants": ["default"]})
        r = d.api("PATCH", "/api/v1/agents/%d" % aid, {"quarantined": True}, token=d.admin_token)
        assert r.json()["state"] == "quarantined", r
        assert lease(d, tok, wait=1) is None
        d.api("PATCH", "/api/v1/agents/%d" % aid, {"quarantined": False}, token=d.admin_token)
        assert lease(d, tok) is not None


def test_job_list_paging_and_filter():
    with Daemon() as d:
        ids = [d.submit({"name": "j%d" % i, "family": "pe", "generator": {"dlls": 1, "exports": 1},
                         "variants": ["default"]})["id"] for i in range(5)]
        r = d.api("GET", "/api/v1/jobs?limit=2", token=d.admin_token)
        validate("job_list.json", r.json())
        assert [j["id"] for j in r.json()["jobs"]] == ids[::-1][:2]
        nxt = r.json()["next_before"]
        r = d.api("GET", "/api/v1/jobs?limit=2&before=%d" % nxt, token=d.admin_token)
        assert [j["id"] for j in r.json()["jobs"]] == ids[::-1][2:4]
        d.api("POST", "/api/v1/jobs/%d/cancel" % ids[0], token=d.admin_token)
        r = d.api("GET", "/api/v1/jobs?state=cancelled", token=d.admin_token)
        assert [j["id"] for j in r.json()["jobs"]] == [ids[0]]
        assert r.json()["next_before"] is None
        assert d.api("GET", "/api/v1/jobs?state=bogus", token=d.admin_token).status == 400


def test_elf_program_jobs_lease_only_to_linux_agents():
    """An ELF program job whose matrix names no os runs on Linux agents
    only (docs/program-elf.md, "Which agents run it"): its normalized
    matrix gets os [linux], a Windows agent (os win10 in its facts) is never
    leased its task, in cells or each_agent, while a matrix that names os
    keeps the user's choice."""
    with Daemon() as d:
        exe = b"\x7fELF a program"
        digest = hashlib.sha256(exe).hexdigest()
        r = d.api("PUT", "/api/v1/blobs/" + digest, exe, token=d.admin_token,
                  headers={"Content-Type": "application/octet-stream"})
        assert r.status in (200, 201), r
        _, twin = d.enroll("win-box", WIN10_SSD)
        elf = {"name": "elf", "family": "program", "variants": ["as-built"],
               "program": {"files": {"app": "sha256:" + digest}, "exe": "app", "format": "elf"}}
        created = d.submit(elf)
        assert created["warnings"] == ["1 task: no agent has os=linux"], created
        assert d.job(created["id"])["spec"]["matrix"] == {"cells": {"os": ["linux"]}}
        assert lease(d, twin) is None
        # two builds in one job go the same way
        builds = {"builds": [{"label": "base", "files": {"app": "sha256:" + digest}, "exe": "app"},
                             {"label": "candidate", "files": {"app": "sha256:" + digest}, "exe": "app"}],
                  "format": "elf"}
        ab = d.submit(dict(elf, name="elf-ab", program=builds))
        assert d.job(ab["id"])["spec"]["matrix"] == {"cells": {"os": ["linux"]}}
        assert lease(d, twin) is None
        _, tlinux = d.enroll("linux-box", {"os": "linux", "arch": "x86_64"})
        each = d.submit(dict(elf, name="elf-each", matrix={"each_agent": {"agent": ["win-box", "linux-box"]}}))
        assert each["task_count"] == 1, each
        assert d.job(each["id"])["spec"]["matrix"] == {
            "each_agent": {"agent": ["win-box", "linux-box"], "os": ["linux"]}}
        assert lease(d, twin) is None
        got = {}
        for _ in range(3):
            t = lease(d, tlinux)
            got[t["job_id"]] = t["cell"]
        assert got == {created["id"]: {"os": "linux"}, ab["id"]: {"os": "linux"},
                       each["id"]: {"agent": "linux-box"}}, got
        assert lease(d, tlinux) is None
        # a matrix that names os is the user's: kept as it is
        named = d.submit(dict(elf, name="elf-named", matrix={"cells": {"os": ["win10"]}}))
        assert d.job(named["id"])["spec"]["matrix"] == {"cells": {"os": ["win10"]}}
        assert lease(d, twin)["job_id"] == named["id"]
        # a PE program job names no os and gets none
        pe = d.submit({"name": "pe", "family": "program", "variants": ["as-built"],
                       "program": {"files": {"app.exe": "sha256:" + digest}, "exe": "app.exe"}})
        assert d.job(pe["id"])["spec"]["matrix"] == {"cells": {}}
        # an ELF job's matrix of 8 keys without os has no room for it
        full = {"k%d" % i: ["v"] for i in range(8)}
        r = d.api("POST", "/api/v1/jobs", dict(elf, name="full", matrix={"cells": full}), token=d.admin_token)
        assert r.status == 400 and "at most 7 keys" in r.json()["error"]["message"], r


run_tests(globals())
