#!/usr/bin/python3
"""The column's job on two agents: one shared build against each agent
building (docs/builds.md).

    bench_shared_build.py [BUILD_DIR]

A real loadlabd and two Linux agents with mingw-w64 (so either can build)
run schemas/examples/pietrek-2000.json, small (tests/agent/
test_shared_build.py's settings: 4 DLLs x 12 exports, six variants, three
warm runs) over two cells, one per agent, under Wine: first with the
default shared build (one agent builds, both measure its bytes), then with
`"build": "each-agent"` (each agent builds its own). The wall time is from
submit until both agents have posted (each runs with --once). Prints both,
and the BENCH line: shared over each-agent (below 1: the shared build
saved time). No goal: on two cores the two each-agent builds run side by
side, so the saving is the second build's CPU, not its wall time; a lab of
many cells saves one build per cell. Runs under the Wine lock (make bench).
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "build"))
os.environ.setdefault("LOADLAB_BUILD_DIR", BUILD)
os.environ.setdefault("LOADLAB_SOURCE_DIR", os.path.abspath(os.path.join(HERE, "..", "..")))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "agent"))
import harness  # noqa: E402
import test_shared_build as shared  # noqa: E402

JOB = dict(shared.PE_JOB, name="bench-shared-build", matrix={"cells": {"bench": ["a", "b"]}})


def run(build):
    """Wall seconds of JOB with BUILD ("shared" or "each-agent") on two
    agents, and the job as the daemon tells it."""
    with harness.Daemon(shared_build=True) as d:
        start = time.monotonic()
        job_id = d.submit(dict(JOB, build=build))["id"]
        agents = [shared.Agent(d, name, name, False) for name in ("a", "b")]
        try:
            for a in agents:
                assert a.wait(1800) == 0, a.text()[-3000:]
        finally:
            for a in agents:
                a.close()
        wall = time.monotonic() - start
        job = d.job(job_id)
        assert job["state"] == "done", job
        return wall, job


def main():
    shared_s, job = run("shared")
    assert len(job["builds"]) == 1, job
    each_s, job = run("each-agent")
    assert not job.get("builds"), job
    print("column's job (4 DLLs x 12 exports, %d variants, 3 warm runs), two cells, two Linux agents "
          "under Wine:" % len(JOB["variants"]))
    print("  shared build (one agent builds, both measure): %.1f s" % shared_s)
    print("  each agent builds its own:                      %.1f s" % each_s)
    print("BENCH shared_build_wall_vs_each_agent %.1f s %.1f %.3f -" % (shared_s, each_s, shared_s / each_s))


if __name__ == "__main__":
    main()
