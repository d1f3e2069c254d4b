"""The lease scan in two passes (server/store/store_lease.c): it looks at
the first STORE_LEASE_FIRST_SCAN (16) ready tasks, and only when it can
take none of them and more are ready, again up to STORE_LEASE_SCAN (500).
On both stores an agent whose only task comes after 40 ready tasks it
cannot take (cells for another fact) still leases it, and an agent that
can take none leases nothing.
"""
import pg_cluster
from harness import Daemon, run_tests

BLOCKING = 40


def job_body(name, g, h):
    return {"name": name, "family": "pe", "generator": {"dlls": 2, "exports": 3}, "variants": ["default"],
            "matrix": {"cells": {"g": g, "h": h}}}


def check(d):
    mine = d.enroll("mine", {"os": "win10", "g": "mine", "h": "x0"})[1]
    nobody = d.enroll("nobody", {"os": "win10", "g": "nothing", "h": "x0"})[1]
    others = d.submit(job_body("others", ["other%d" % k for k in range(8)], ["x%d" % k for k in range(5)]))
    assert others["task_count"] == BLOCKING, others
    wanted = d.submit(job_body("wanted", ["mine"], ["x0"]))["id"]
    r = d.api("POST", "/api/v1/lease", {"wait": 0}, token=mine)
    assert r.status == 200 and r.json()["job_id"] == wanted, r
    r = d.api("POST", "/api/v1/lease", {"wait": 0}, token=nobody)
    assert r.status == 204, r


def test_a_lease_looks_past_the_first_page_on_sqlite():
    with Daemon() as d:
        check(d)


def test_a_lease_looks_past_the_first_page_on_postgresql():
    cluster = pg_cluster.shared()
    with Daemon(extra_args=["--db", cluster.uri(cluster.create_database())]) as d:
        check(d)


if __name__ == "__main__":
    run_tests(globals())
