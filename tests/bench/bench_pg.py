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

With LOADLAB_BENCH_PG_PROFILE=1 the cluster loads pg_stat_statements and
each PostgreSQL run is followed by where its database's time went: the
statements by total time (calls, total and mean ms), and the database's commits, rollbacks and
deadlocks (pg_stat_database). The setup's job submissions are counted
too: read the lease, heartbeat and result statements.
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
PROFILE = os.environ.get("LOADLAB_BENCH_PG_PROFILE") == "1"


class ProfiledCluster(pg_cluster.Cluster):
    """The cluster with pg_stat_statements loaded (LOADLAB_BENCH_PG_PROFILE)."""

    def options(self):
        return super().options() + " -c shared_preload_libraries=pg_stat_statements" \
            " -c pg_stat_statements.track=all"


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
        _cluster = (ProfiledCluster if PROFILE else pg_cluster.Cluster)(fsync=True).start()
    c = _cluster
    database = c.create_database()
    if PROFILE:
        c.psql(database, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        c.psql(database, "SELECT pg_stat_statements_reset()")
    uri = c.uri(database)
    args = ["--db", uri, "--per-ip-limit", "1000", "--lease-seconds", "600"]
    daemons = [Daemon(extra_args=args).start()]
    daemons += [Daemon(extra_args=args).start() for _ in range(count - 1)]
    return daemons, database


def profile(database):
    """Prints where DATABASE's time went (LOADLAB_BENCH_PG_PROFILE)."""
    rows = _cluster.psql(database,
                         "SELECT calls, round(total_exec_time::numeric, 1), round(mean_exec_time::numeric, 3),"
                         " left(regexp_replace(query, '\\s+', ' ', 'g'), 110)"
                         " FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid"
                         " WHERE d.datname = current_database() ORDER BY total_exec_time DESC LIMIT 25")
    print("-- profile: statements by total time (calls, total ms, mean ms, text)")
    for calls, total, mean, query in rows:
        print("%9s %10s %8s  %s" % (calls, total, mean, query))
    stat = _cluster.psql(database, "SELECT xact_commit, xact_rollback, deadlocks FROM pg_stat_database"
                         " WHERE datname = current_database()")
    print("-- profile: commits %s, rollbacks %s, deadlocks %s" % tuple(stat[0]), flush=True)


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
        daemons, database = replicas(count)
        try:
            got = run("pg%d" % count, {"LOADLAB_BENCH_URLS": ",".join(d.url for d in daemons),
                                       "LOADLAB_BENCH_DATA_DIR": daemons[0].data_dir})
        finally:
            for d in daemons:
                d.close()
        if PROFILE:
            profile(database)
        failed |= got is None
        out += got or []
    out += goals(out)
    print()
    for line in out:
        print(line)
    return 1 if failed else 0


sys.exit(main())
