"""No password of --db in what loadlabd prints (issue 37, docs/operations.md,
"Passwords in --db"). A role of this test's own PostgreSQL cluster
(pg_cluster.py) gets a password that the cluster really asks for
(scram-sha-256 on its socket for that role). A daemon started twice on it
with the password in its --db URI (the second start's migration makes the
server send a NOTICE), one whose URI libpq cannot parse (libpq quotes a URI
it cannot parse), one with the password in the URI's query, `loadlabd
backup` and `restore` of it, and `loadlabd migrate --to` with the password: neither the daemon's whole log
file nor any output holds the password, and every line of the log is in the
log's format (a NOTICE is a "store_notice" event, not libpq's raw line)."""
import os
import re
import secrets
import subprocess
import tempfile

import pg_cluster
from harness import LOADLABD, Daemon, run_tests

ROLE = "lab_secret"
PASSWORD = "Pw-" + secrets.token_hex(12)
LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (debug|info|warn|error) [a-z_]+( |$)")

_state = {}


def database():
    """A database owned by ROLE, which logs in with PASSWORD only."""
    if "db" in _state:
        return _state["db"]
    c = pg_cluster.shared()
    db = c.create_database()
    c.psql("postgres", "CREATE ROLE %s LOGIN PASSWORD '%s'" % (ROLE, PASSWORD))
    c.psql("postgres", "ALTER DATABASE %s OWNER TO %s" % (db, ROLE))
    hba = os.path.join(c.data, "pg_hba.conf")
    with open(hba) as f:
        rules = f.read()
    with open(hba, "w") as f:
        f.write("local all %s scram-sha-256\n" % ROLE + rules)
    c._run([os.path.join(pg_cluster.PG_BIN, "pg_ctl"), "-D", c.data, "reload"])
    _state["db"] = db
    return db


def uri(password=PASSWORD, db=None):
    c = pg_cluster.shared()
    return "postgresql://%s:%s@/%s?host=%s" % (ROLE, password, db or database(), c.socket_dir)


def assert_no_password(text, where):
    assert PASSWORD not in text, "%s holds the password:\n%s" % (where, text[-3000:])


def assert_log_format(log):
    for line in log.splitlines():
        assert LINE.match(line), "a line out of the log's format: %r" % line


def test_password_is_asked_for():
    """The cluster really checks the role's password: a wrong one fails."""
    c = pg_cluster.shared()
    database()
    env = dict(os.environ, PGPASSWORD="wrong")
    p = subprocess.run([os.path.join(pg_cluster.PG_BIN, "psql"), "-X", "-h", c.socket_dir, "-U", ROLE,
                        "-d", database(), "-c", "SELECT 1"], capture_output=True, text=True, env=env)
    assert p.returncode != 0 and "password authentication failed" in p.stderr, p


def test_daemon_log_holds_no_password():
    data = tempfile.mkdtemp(prefix="loadlabd-secret-")
    d = Daemon(extra_args=["--db", uri()], data_dir=data)
    with d:
        assert d.api("GET", "/api/v1/jobs", token=d.admin_token).status == 200
    # Started again on the same database: the migration's CREATE TABLE IF
    # NOT EXISTS makes the server send a NOTICE.
    d = Daemon(extra_args=["--db", uri()], data_dir=data)
    with d:
        assert d.api("GET", "/api/v1/jobs", token=d.admin_token).status == 200
        log = d.read_log()
    assert_no_password(log, "the daemon's log")
    assert re.search(r"info started db=\"?postgresql://%s:\*\*\*@/" % ROLE, log), log
    assert "store_notice" in log and "already exists" in log, log
    assert_log_format(log)


def test_failures_print_no_password():
    data = tempfile.mkdtemp(prefix="loadlabd-secret-")
    cases = (
        uri(password=PASSWORD + "x"),                    # refused by the server
        "postgresql://%s:%s@[::1/db" % (ROLE, PASSWORD),  # libpq quotes a URI it cannot parse
        "postgresql:///%s?host=%s&user=%s&password=%s%%" % (database(), pg_cluster.shared().socket_dir,
                                                          ROLE, PASSWORD),  # a bad %-escape
    )
    for bad in cases:
        p = subprocess.run([LOADLABD, "--listen", "127.0.0.1:0", "--data-dir", data, "--db", bad],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode != 0, p
        assert_no_password(p.stdout + p.stderr, "loadlabd's output for %s" % bad)
    # backup and restore of a PostgreSQL store are refused (its own tool)
    for args in (["backup", "--to", data + "/b.db"], ["restore", "--from", data + "/b.db", "--data-dir", data]):
        p = subprocess.run([LOADLABD] + args + ["--db", uri()], capture_output=True, text=True, timeout=30)
        assert p.returncode != 0, p
        assert_no_password(p.stdout + p.stderr, "loadlabd %s's output" % args[0])
    # the URI given where a flag was expected
    p = subprocess.run([LOADLABD, uri()], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2, p
    assert_no_password(p.stdout + p.stderr, "loadlabd's usage error")


def test_migrate_prints_no_password():
    src = tempfile.mkdtemp(prefix="loadlabd-secret-")
    with Daemon(data_dir=src, extra_args=["--db", os.path.join(src, "loadlab.db")]) as d:
        assert d.api("GET", "/api/v1/jobs", token=d.admin_token).status == 200
    c = pg_cluster.shared()
    target = c.create_database()
    c.psql("postgres", "ALTER DATABASE %s OWNER TO %s" % (target, ROLE))
    for to, ok in ((uri(password="wrong-" + PASSWORD), False),
                   ("postgresql://%s:%s@[::1/x" % (ROLE, PASSWORD), False),
                   (uri(db=target), True)):
        p = subprocess.run([LOADLABD, "migrate", "--from", os.path.join(src, "loadlab.db"), "--to", to],
                           capture_output=True, text=True, timeout=120)
        assert (p.returncode == 0) == ok, p
        assert_no_password(p.stdout + p.stderr, "loadlabd migrate's output")


if __name__ == "__main__":
    run_tests(globals())
