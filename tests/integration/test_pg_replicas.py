"""Issue 28's multi-replica checks: three loadlabd replicas on one
PostgreSQL database (a cluster of this test's own, pg_cluster.py), a
fleet of simulated agents over REST spread across them.

1. AGENTS agents (500; LOADLAB_PG_AGENTS to scale) do TASKS tasks (2,000:
   125 jobs of 16 cells, submitted through the three replicas; issue 28's
   figures): every task
   ends done with one result and never two attempts at once (read from
   task_attempts and results), every acknowledged result is stored; a
   long-poll parked on one replica is leased a task submitted through
   another (woken by LISTEN/NOTIFY, test_pg_notify.py; the delay is
   printed, asserted < 5 s only, as the machine may be loaded); a schedule made due once
   creates one job across the three replicas.
2. kill -9 of one replica in the middle of a fleet of FAILURE_AGENTS
   (160) doing FAILURE_TASKS (640): its agents go on with the others,
   nothing acknowledged is lost, the leases it held expire (short
   --lease-seconds) and are leased again, every task ends done.
3. A PostgreSQL restart in the middle of such a fleet (stop, probe, start): each replica
   answers 503 with Retry-After meanwhile, recovers by itself, nothing
   acknowledged is lost, every task ends done.

The simulated agent: long-polls POST /api/v1/lease on its replica,
heartbeats, posts a minimal valid result (0.1..0.3 s of "work" before
each). On a connection error it moves to the next replica; even-numbered
agents replay the request they were making there (a result's replay is
idempotent), odd-numbered ones drop the task they held (its lease must
expire and be leased again). On 503 it waits 0.3 s and retries.
"""
import http.client
import json
import os
import random
import re
import signal
import threading
import time

import pg_cluster
from harness import Daemon, run_tests, wait_for

AGENTS = int(os.environ.get("LOADLAB_PG_AGENTS", "500"))
GROUPS = 16  # cells per job: agent i has the fact g = "v<i % 16>"
JOBS = int(os.environ.get("LOADLAB_PG_TASKS", "2000")) // GROUPS
# The fleet of the kill -9 and the PostgreSQL restart: what they assert
# (every agent of the killed replica moves, results acknowledged by the
# others, dropped leases expire and are leased again, 503 meanwhile,
# nothing acknowledged lost, every task done once) holds at any size with
# work left after the third; the scale is asserted by the first test.
FAILURE_AGENTS = min(AGENTS, 160)
FAILURE_JOBS = min(JOBS, 640 // GROUPS)
REPLICAS = 3
LEASE_SECONDS = 6


def job_body(name, values=None):
    return {"name": name, "family": "pe", "generator": {"dlls": 2, "exports": 3}, "variants": ["default"],
            "matrix": {"cells": {"g": values or ["v%d" % k for k in range(GROUPS)]}}}


def result_body(attempt):
    return {"attempt": attempt, "facts": {"os": "win10"},
            "variants": [{"name": "default", "warm": {"samples_us": [1000, 1010, 990]}}]}


class Replicas:
    """Three daemons on one new database; the admin and enrollment tokens
    of the one that made them, on all three."""

    def __init__(self, extra=()):
        self.cluster = pg_cluster.shared()
        self.db = self.cluster.create_database()
        uri = self.cluster.uri(self.db)
        args = ["--db", uri, "--lease-seconds", str(LEASE_SECONDS), "--max-attempts", "20",
                "--retry-backoff", "0", "--per-ip-limit", "5000", "--schedule-tick-ms", "100",
                "--max-wait", "60"] + list(extra)
        self.daemons = [Daemon(extra_args=args) for _ in range(REPLICAS)]
        self.daemons[0].start()  # migrates; the others find the schema
        for d in self.daemons[1:]:
            d.start()
        made = [d for d in self.daemons if d.admin_token][0]
        for d in self.daemons:
            d.admin_token, d.enroll_token = made.admin_token, made.enroll_token
        self.alive = [True] * REPLICAS

    def sql(self, q):
        return self.cluster.psql(self.db, q)

    def close(self):
        for d in self.daemons:
            if d.proc:
                d.close()

    def kill(self, k):
        """kill -9 of replica K, by its PID."""
        d = self.daemons[k]
        self.alive[k] = False
        os.kill(d.proc.pid, signal.SIGKILL)
        d.proc.wait()
        d.proc.stdout.close()
        d.log.close()
        d.proc = None


def host_port(url):
    h, p = url.split("//")[1].split(":")
    return h, int(p)


class Agent(threading.Thread):
    def __init__(self, fleet, i, agent_id, token):
        super().__init__(daemon=True)
        self.fleet, self.i, self.agent_id, self.token = fleet, i, agent_id, token
        self.home = i % REPLICAS
        self.conn = None
        self.acked = []      # (task_id, attempt, result_id) answered 2xx
        self.dropped = []    # (task_id, attempt) given up on a lost replica
        self.replica_errors = 0
        self.moved_acks = 0  # results acknowledged by a replica other than its first
        self.errors = []

    def call(self, method, path, body, timeout):
        """One request on this agent's replica: (status, headers, parsed
        body). Raises OSError/HTTPException on a connection error."""
        if self.conn is None:
            h, p = host_port(self.fleet.r.daemons[self.home].url)
            self.conn = http.client.HTTPConnection(h, p, timeout=timeout)
        self.conn.timeout = timeout
        if self.conn.sock:
            self.conn.sock.settimeout(timeout)
        data = json.dumps(body).encode()
        try:
            self.conn.request(method, path, data, {"Content-Type": "application/json",
                                                   "Authorization": "Bearer " + self.token})
            r = self.conn.getresponse()
            raw = r.read()
        except Exception:
            self.conn.close()
            self.conn = None
            raise
        if r.getheader("Connection", "").lower() == "close":
            self.conn.close()
            self.conn = None
        return r.status, r, (json.loads(raw) if raw else None)

    def move(self):
        """To the next live replica after a connection error."""
        self.replica_errors += 1
        for step in range(1, REPLICAS + 1):
            k = (self.home + step) % REPLICAS
            if self.fleet.r.alive[k]:
                self.home = k
                return
        time.sleep(0.2)

    def request(self, method, path, body, timeout=30, replay=True):
        """The request until it has an answer other than 503; None when the
        replica was lost and REPLAY is false."""
        while not self.fleet.stop.is_set():
            try:
                try:
                    status, r, doc = self.call(method, path, body, timeout)
                except (OSError, http.client.HTTPException):
                    # A kept-alive connection the replica closed: once more
                    # on a new one before the replica counts as lost.
                    status, r, doc = self.call(method, path, body, timeout)
            except (OSError, http.client.HTTPException):
                self.move()
                if not replay:
                    return None
                continue
            if status == 503:
                self.fleet.saw_503(r)
                time.sleep(0.3)
                continue
            return status, doc
        return None

    def run(self):
        replay = self.i % 2 == 0
        try:
            while not self.fleet.stop.is_set():
                got = self.request("POST", "/api/v1/lease", {"wait": 2}, timeout=40)
                if got is None or got[0] == 204:
                    continue
                status, lease = got
                if status != 200:
                    self.errors.append(("lease", status, lease))
                    time.sleep(0.5)
                    continue
                self.fleet.leased(self, lease)
                tid, att = lease["task_id"], lease["attempt"]
                time.sleep(random.uniform(0.1, 0.3))  # the run's work
                hb = self.request("POST", "/api/v1/agents/%d/heartbeat" % self.agent_id, {}, replay=replay)
                if hb is None:
                    self.dropped.append((tid, att))
                    continue
                time.sleep(random.uniform(0.1, 0.3))
                res = self.request("POST", "/api/v1/tasks/%d/result" % tid, result_body(att), replay=replay)
                if res is None:
                    self.dropped.append((tid, att))
                    continue
                status, doc = res
                if 200 <= status < 300:
                    self.acked.append((tid, att, doc["result_id"]))
                    self.fleet.acknowledged()
                    if self.home != self.i % REPLICAS:
                        self.moved_acks += 1
                elif status != 409:  # 409: its lease expired meanwhile, another has the task
                    self.errors.append(("result", status, doc))
        except Exception as e:  # a bug of the test: reported, not hidden
            self.errors.append(("exception", repr(e)))


class Fleet:
    def __init__(self, replicas, agents, jobs):
        self.r = replicas
        self.agent_count, self.job_count = agents, jobs
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.leases = 0
        # Results acknowledged so far; THIRD is set at a third of the tasks
        # (counted here, in the agents' threads: a store query polled from
        # the test's thread was seen 1,993 of 2,000 tasks late).
        self.acks, self.acks_target, self.third = 0, 0, threading.Event()
        self.at_third = None  # called with the count of acks when THIRD is set
        self.retry_after = set()
        self.agents = []

    def saw_503(self, r):
        with self.lock:
            self.retry_after.add(r.getheader("Retry-After"))

    def acknowledged(self):
        with self.lock:
            self.acks += 1
            n = self.acks
            first = self.acks_target and n == self.acks_target
        if first:
            # In this agent's thread, at once: the test's own thread, one
            # of 500, was seen to wake from THIRD only once every task was
            # done (a kill -9 then found no work left).
            if self.at_third:
                self.at_third(n)
            self.third.set()

    def leased(self, agent, lease):
        with self.lock:
            self.leases += 1

    def enroll(self):
        lock = threading.Lock()
        unclaimed = list(range(self.agent_count))

        def worker():
            while True:
                with lock:
                    if not unclaimed:
                        return
                    i = unclaimed.pop()
                d = self.r.daemons[i % REPLICAS]
                aid, tok = d.enroll("fleet-%d" % i, {"os": "win10", "g": "v%d" % (i % GROUPS)})
                with lock:
                    self.agents.append(Agent(self, i, aid, tok))

        threads = [threading.Thread(target=worker) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(self.agents) == self.agent_count

    def submit_jobs(self):
        ids = []
        for j in range(self.job_count):
            d = self.r.daemons[j % REPLICAS]
            if not self.r.alive[j % REPLICAS]:
                d = self.r.daemons[0]
            ids.append(d.submit(job_body("fleet-%d" % j))["id"])
        return ids

    def start(self):
        for a in self.agents:
            a.start()

    def done_count(self, jobs):
        rows = self.r.sql("SELECT count(*) FROM tasks WHERE state = 'done' AND job_id BETWEEN %d AND %d"
                          % (min(jobs), max(jobs)))
        return int(rows[0][0])

    def finish(self, jobs, timeout):
        total = len(jobs) * GROUPS
        wait_for("all %d tasks done" % total, lambda: self.done_count(jobs) == total, timeout=timeout,
                 interval=0.25)
        self.stop.set()
        for a in self.agents:
            a.join(60)
        errors = [e for a in self.agents for e in a.errors]
        assert not errors, errors[:10]

    def check_store(self, jobs):
        """Every task done with one result, of its last attempt; attempts
        never overlap; every acknowledged result stored."""
        lo, hi = min(jobs), max(jobs)
        total = len(jobs) * GROUPS
        rows = self.r.sql("SELECT t.id, t.state, t.attempt, count(r.id), min(r.attempt) FROM tasks t "
                          "LEFT JOIN results r ON r.task_id = t.id WHERE t.job_id BETWEEN %d AND %d "
                          "GROUP BY t.id, t.state, t.attempt" % (lo, hi))
        assert len(rows) == total, len(rows)
        bad = [r for r in rows if r[1] != "done" or r[3] != "1" or r[2] != r[4]]
        assert not bad, bad[:10]
        attempts = {}
        for tid, att, leased, ended, outcome in self.r.sql(
                "SELECT a.task_id, a.attempt, a.leased_at, a.ended_at, coalesce(a.outcome, '') "
                "FROM task_attempts a JOIN tasks t ON t.id = a.task_id WHERE t.job_id BETWEEN %d AND %d "
                "ORDER BY a.task_id, a.attempt" % (lo, hi)):
            attempts.setdefault(int(tid), []).append((int(att), int(leased), int(ended) if ended else None,
                                                      outcome))
        overlaps = []
        for tid, seq in attempts.items():
            assert [a[0] for a in seq] == list(range(1, len(seq) + 1)), (tid, seq)
            for prev, nxt in zip(seq, seq[1:]):
                if prev[2] is None or nxt[1] < prev[2]:
                    overlaps.append((tid, seq))
            assert seq[-1][3] == "done", (tid, seq)
        assert not overlaps, overlaps[:10]
        acked = [x for a in self.agents for x in a.acked]
        stored = {(int(t), int(a), int(i)) for t, a, i in self.r.sql(
            "SELECT r.task_id, r.attempt, r.id FROM results r JOIN tasks t ON t.id = r.task_id "
            "WHERE t.job_id BETWEEN %d AND %d" % (lo, hi))}
        lost = [x for x in acked if x not in stored]
        assert not lost, lost[:10]
        # Each task's result acknowledged to its agent, but for a dropped
        # lease whose result a lost replica stored before its answer.
        dropped = sum(len(a.dropped) for a in self.agents)
        assert total - dropped <= len(set(acked)) <= total, (len(set(acked)), total, dropped)
        return attempts


def run_fleet(replicas, middle=None, timeout=900, at_third=None, agents=AGENTS, jobs=JOBS):
    """Enrolls the fleet of AGENTS, submits JOBS jobs (through the three replicas),
    starts the agents; AT_THIRD(acks) in the agent's thread whose result
    made a third of the tasks acknowledged, then MIDDLE(fleet, jobs) in
    this one; checks the store."""
    fleet = Fleet(replicas, agents, jobs)
    fleet.at_third = at_third
    t0 = time.time()
    fleet.enroll()
    print("enrolled %d agents in %.1fs" % (agents, time.time() - t0), flush=True)
    t0 = time.time()
    jobs = fleet.submit_jobs()
    print("submitted %d jobs (%d tasks) in %.1fs" % (len(jobs), len(jobs) * GROUPS, time.time() - t0), flush=True)
    t0 = time.time()
    fleet.acks_target = len(jobs) * GROUPS // 3
    fleet.start()
    if middle:
        assert fleet.third.wait(timeout), "timed out waiting for a third of the tasks done"
        middle(fleet, jobs)
    fleet.finish(jobs, timeout)
    print("%d tasks done in %.1fs, %d leases" % (len(jobs) * GROUPS, time.time() - t0, fleet.leases),
          flush=True)
    return fleet, jobs, fleet.check_store(jobs)


def wake_delay(r, parked_on, submit_on, value):
    """Seconds from a job's submission through SUBMIT_ON to the lease of a
    long-poll parked on PARKED_ON."""
    b, a = r.daemons[parked_on], r.daemons[submit_on]
    _, tok = b.enroll("parked-" + value, {"os": "win10", "g": value})
    answers = []

    def poll():
        answers.append(b.api("POST", "/api/v1/lease", {"wait": 30}, token=tok, timeout=60))
        answers.append(time.time())

    def parked():
        m = re.search(r"^loadlab_long_polls (\d+)", b.api("GET", "/metrics").body.decode(), re.M)
        return int(m.group(1))

    before = parked()
    t = threading.Thread(target=poll)
    t.start()
    wait_for("the poll to park", lambda: parked() == before + 1)
    job = a.submit(job_body("wake-" + value, [value]))
    submitted = time.time()
    t.join(60)
    assert answers and answers[0].status == 200, answers
    assert answers[0].json()["job_id"] == job["id"]
    lease = answers[0].json()
    r2 = b.api("POST", "/api/v1/tasks/%d/result" % lease["task_id"], result_body(lease["attempt"]), token=tok)
    assert r2.status == 200, r2
    return answers[1] - submitted


def test_three_replicas_fleet_once_each_wakeup_schedule():
    r = Replicas()
    try:
        delays = [wake_delay(r, (k + 1) % REPLICAS, k, "wake%d" % k) for k in range(REPLICAS)]
        print("cross-replica wake-up delays: %s s (issue: within 1 s; asserted < 5 s)" %
              ", ".join("%.2f" % x for x in delays), flush=True)
        assert max(delays) < 5, delays
        fleet, jobs, attempts = run_fleet(r)
        spread = [sum(1 for a in fleet.agents if a.acked and a.i % REPLICAS == k) for k in range(REPLICAS)]
        print("agents with results, by home replica: %s" % spread, flush=True)
        # A schedule made due once: one job across the three replicas.
        s = r.daemons[1].api("POST", "/api/v1/schedules",
                             {"series": "once", "interval_s": 86400, "job": job_body("sched", ["none"])},
                             token=r.daemons[1].admin_token)
        assert s.status == 201, s
        sid = s.json()["id"]
        due = int(r.sql("SELECT next_due FROM schedules WHERE id = %d" % sid)[0][0])
        now = due - 86400 * (1000 if due > 10 ** 11 else 1)  # made at about now; the unit of next_due
        r.sql("UPDATE schedules SET next_due = %d WHERE id = %d" % (now, sid))
        wait_for("the schedule to fire", lambda: r.sql(
            "SELECT count(*) FROM jobs WHERE submitted_by = 'schedule:%d'" % sid) != [["0"]], timeout=30)
        time.sleep(1)  # 10 ticks of each replica (--schedule-tick-ms 100)
        assert r.sql("SELECT count(*) FROM jobs WHERE submitted_by = 'schedule:%d'" % sid) == [["1"]]
        runs = r.sql("SELECT count(*) FROM schedule_runs WHERE schedule_id = %d AND job_id IS NOT NULL" % sid)
        assert runs == [["1"]], runs
    finally:
        r.close()


def test_kill_9_of_one_replica_in_the_middle():
    r = Replicas()
    killed = {}

    def at_third(acks):
        r.kill(2)
        killed["acks"] = acks

    def middle(fleet, jobs):
        print("killed replica 2 (kill -9) at %d results acknowledged; %d tasks done, %d leased a moment later" % (
            killed["acks"], fleet.done_count(jobs),
            int(r.sql("SELECT count(*) FROM tasks WHERE state = 'leased'")[0][0])), flush=True)

    try:
        fleet, jobs, attempts = run_fleet(r, middle, at_third=at_third, agents=FAILURE_AGENTS, jobs=FAILURE_JOBS)
        moved = sum(1 for a in fleet.agents if a.i % REPLICAS == 2 and a.home != 2)
        homed = sum(1 for a in fleet.agents if a.i % REPLICAS == 2)
        print("agents of replica 2 that moved: %d of %d" % (moved, homed), flush=True)
        assert moved == homed
        late = sum(a.moved_acks for a in fleet.agents if a.i % REPLICAS == 2)
        print("results of replica 2's agents acknowledged by the others: %d" % late, flush=True)
        assert late > 0
        dropped = [x for a in fleet.agents for x in a.dropped]
        expired = [(t, seq) for t, seq in attempts.items() if any(s[3] == "expired" for s in seq)]
        print("leases dropped with the replica: %d; tasks with an expired attempt: %d" % (len(dropped), len(expired)),
              flush=True)
        outcomes = {s[3] for seq in attempts.values() for s in seq}
        # Every dropped lease was leased again later (and the task is done).
        for tid, att in dropped:
            if attempts[tid][-1][0] == att:  # its result was stored before the replica died
                continue
            assert attempts[tid][att - 1][3] == "expired", (tid, att, attempts[tid], outcomes)
            assert len(attempts[tid]) > att, (tid, att, attempts[tid])
    finally:
        r.close()


def test_postgresql_restart_in_the_middle():
    r = Replicas()
    seen = {}

    def middle(fleet, jobs):
        c = r.cluster
        seen["at_done"] = fleet.done_count(jobs)
        c._run([os.path.join(pg_cluster.PG_BIN, "pg_ctl"), "-D", c.data, "-m", "fast", "-w", "stop"])
        try:
            for d in r.daemons:
                got = d.api("GET", "/api/v1/jobs", token=d.admin_token, timeout=30)
                assert got.status == 503, got
                assert got.headers.get("Retry-After"), got.headers
                seen.setdefault("retry_after", set()).add(got.headers["Retry-After"])
        finally:
            c.restart()
        t0 = time.time()
        for d in r.daemons:
            wait_for("the replica to recover", lambda: d.api("GET", "/api/v1/jobs", token=d.admin_token).status == 200,
                     timeout=60)
        print("PostgreSQL restarted at %d tasks done; replicas answered 503 (Retry-After %s); "
              "all three back %.1fs after the start" % (seen["at_done"], seen["retry_after"], time.time() - t0),
              flush=True)

    try:
        fleet, jobs, attempts = run_fleet(r, middle, agents=FAILURE_AGENTS, jobs=FAILURE_JOBS)
        print("agents saw 503 with Retry-After %s" % fleet.retry_after, flush=True)
        assert all(d.proc.poll() is None for d in r.daemons)
    finally:
        r.close()


run_tests(globals())
