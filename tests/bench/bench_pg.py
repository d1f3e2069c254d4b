#!/usr/bin/env python3
"""lease+heartbeat+result round trips and durable result ingestion on
PostgreSQL, one replica and three on one database, next to SQLite, each
against the hello-world floor of the same bench_server run (issue 28).

bench_server (tests/bench/bench_server.c) is run three times: as is
(SQLite, the daemon it starts), and with LOADLAB_BENCH_URLS naming one,
then three loadlabd replicas started here on one database of a
PostgreSQL cluster of this process (tests/integration/pg_cluster.py; its
agents spread over the replicas, agent i on replica i mod 3). Each run
measures its own floor first. The cluster runs with fsync on (the
tests' clusters have it off), so its results are durable as SQLite's
with synchronous=FULL. Its BENCH lines come out renamed
round_trips_sqlite, round_trips_pg1, round_trips_pg3 (and
durable_ingestion_*).

Then issue 38's goals, figures of this same run: round_trips_pg1_vs_sqlite
(ratio>=0.8), round_trips_pg3_vs_sqlite (ratio>=1.0) and
durable_ingestion_pg{1,3}_vs_fsync (the one-fsync-a-row loop of the
same bench_server run, ratio>=1).

Usage: bench_pg.py [BUILD_DIR] [AGENTS=32] [SECONDS=5]. Exits 1 when a
run fails.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
if len(sys.argv) > 1:
    os.environ["LOADLAB_BUILD_DIR"] = os.path.abspath(sys.argv[1])
AGENTS = sys.argv[2] if len(sys.argv) > 2 else "32"
SECONDS = sys.argv[3] if len(sys.argv) > 3 else "5"
import pg_cluster  # noqa: E402
from harness import BUILD_DIR, LOADLABD, Daemon  # noqa: E402

BENCH_SERVER = os.path.join(BUILD_DIR, "tests", "bench", "bench_server")
KEPT = ("round_trips", "durable_ingestion")


def run(label, env=None):
    p = subprocess.run([BENCH_SERVER, LOADLABD, AGENTS, SECONDS], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, env=dict(os.environ, **(env or {})), timeout=900)
    print("== %s\n%s" % (label, p.stdout), end="", flush=True)
    if p.returncode != 0:
        print("bench_server failed (%d): %s" % (p.returncode, p.stderr[-2000:]), flush=True)
        return None
    lines = []
    for line in p.stdout.splitlines():
        fields = line.split()
        if len(fields) == 7 and fields[0] == "BENCH" and fields[1] in KEPT:
            fields[1] += "_" + label
            lines.append(" ".join(fields))
    return lines


_cluster = None


def replicas(count):
    global _cluster
    if _cluster is None:  # fsync on: the ingestion is durable, as SQLite's
        _cluster = pg_cluster.Cluster(fsync=True).start()
    c = _cluster
    uri = c.uri(c.create_database())
    args = ["--db", uri, "--per-ip-limit", "1000", "--lease-seconds", "600"]
    daemons = [Daemon(extra_args=args).start()]
    daemons += [Daemon(extra_args=args).start() for _ in range(count - 1)]
    return daemons


def goals(lines):
    """Issue 38's ratios: PostgreSQL's round trips against SQLite's of this
    run, its durable ingestion against the one-fsync-a-row loop."""
    by_name = {line.split()[1]: line.split() for line in lines}
    out = []
    sqlite = by_name.get("round_trips_sqlite")
    for count, goal in ((1, 0.8), (3, 1.0)):
        pg = by_name.get("round_trips_pg%d" % count)
        if sqlite and pg:
            out.append("BENCH round_trips_pg%d_vs_sqlite %s requests/s %s %.4f ratio>=%.1f" %
                       (count, pg[2], sqlite[2], float(pg[2]) / float(sqlite[2]), goal))
        ingestion = by_name.get("durable_ingestion_pg%d" % count)
        if ingestion:
            out.append("BENCH durable_ingestion_pg%d_vs_fsync %s results/s %s %s ratio>=1" %
                       (count, ingestion[2], ingestion[4], ingestion[5]))
    return out


def main():
    out = []
    failed = False
    got = run("sqlite")
    failed |= got is None
    out += got or []
    for count in (1, 3):
        daemons = replicas(count)
        try:
            got = run("pg%d" % count, {"LOADLAB_BENCH_URLS": ",".join(d.url for d in daemons),
                                       "LOADLAB_BENCH_DATA_DIR": daemons[0].data_dir})
        finally:
            for d in daemons:
                d.close()
        failed |= got is None
        out += got or []
    out += goals(out)
    print()
    for line in out:
        print(line)
    return 1 if failed else 0


sys.exit(main())
