"""A PostgreSQL cluster of the tests' own: initdb in a temporary folder,
the server started by pg_ctl on a Unix socket in that folder (no TCP
port: listen_addresses=''), stopped by its PID at the end. Never a
system cluster.

initdb and postgres refuse to run as root: as root, the cluster belongs
to the system user loadlab-test (created here when missing, no home, no
shell) and its commands run through runuser. Trust authentication on
the socket, which only the folder's owner (and root) can reach.

One cluster per test process (shared()), one database per daemon
(create_database()); stopped at exit.

initdb runs once per build tree (LOADLAB_BUILD_DIR/pg-template, made by
the first test that needs it, the others waiting on its lock): every
cluster then starts from a copy of that data folder (about 0.3 s of CPU
against initdb's 1.5, for each of the 40-odd tests that start one).
Outside a build tree (LOADLAB_BUILD_DIR unset) each cluster runs initdb.
"""
import atexit
import fcntl
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

PG_BIN = os.environ.get("LOADLAB_PG_BIN", "/usr/lib/postgresql/15/bin")
TEST_USER = "loadlab-test"
SUPERUSER = "loadlab"


def _ensure_user():
    """The unprivileged user the cluster runs as, when we are root."""
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                        "--shell", "/usr/sbin/nologin", TEST_USER], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        return pwd.getpwnam(TEST_USER)


INITDB_ARGS = ["-U", SUPERUSER, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"]


def _template(as_user):
    """The data folder initdb made once for this build tree, made now when
    missing (a second caller waits for the first); None outside one."""
    build = os.environ.get("LOADLAB_BUILD_DIR")
    if not build or not os.path.isdir(build):
        return None
    template = os.path.join(build, "pg-template")
    with open(template + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.isdir(os.path.join(template, "data")):
            new = tempfile.mkdtemp(prefix="pg-template-new-", dir=build)
            if as_user:
                user = _ensure_user()
                os.chown(new, user.pw_uid, user.pw_gid)
            os.chmod(new, 0o700)
            made = subprocess.run(as_user + [os.path.join(PG_BIN, "initdb"), "-D", os.path.join(new, "data")] +
                                  INITDB_ARGS, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT)
            if made.returncode != 0:  # e.g. a build tree the cluster's user cannot reach: initdb each time
                shutil.rmtree(new, ignore_errors=True)
                return None
            shutil.rmtree(template, ignore_errors=True)
            os.rename(new, template)
    return os.path.join(template, "data")


class Cluster:
    def __init__(self, fsync=False):
        # fsync off (the default): the tests kill daemons, never the
        # machine. On for a benchmark of durable writes (bench_pg.py).
        self.fsync = fsync
        self.dir = tempfile.mkdtemp(prefix="loadlab-pg-")
        self.data = os.path.join(self.dir, "data")
        self.socket_dir = self.dir
        self.as_user = []
        if os.geteuid() == 0:
            user = _ensure_user()
            os.chown(self.dir, user.pw_uid, user.pw_gid)
            self.as_user = ["runuser", "-u", TEST_USER, "--"]
        os.chmod(self.dir, 0o700)
        self.pid = None
        self.databases = 0

    def _run(self, args, **kw):
        return subprocess.run(self.as_user + args, check=True, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)

    def start(self):
        template = _template(self.as_user)
        if template:  # its owner and modes kept (cp -a, as root or as that owner)
            subprocess.run(["cp", "-a", template, self.data], check=True)
        else:
            self._run([os.path.join(PG_BIN, "initdb"), "-D", self.data] + INITDB_ARGS)
        self._run([os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-l",
                   os.path.join(self.dir, "server.log"), "-o", self.options(), "-w", "-t", "60", "start"])
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            self.pid = int(f.readline())
        atexit.register(self.stop)
        return self

    def options(self):
        return "-k %s -c listen_addresses='' -c fsync=%s -c max_connections=400" % (
            self.socket_dir, "on" if self.fsync else "off")

    def uri(self, database):
        """libpq's URI of DATABASE on this cluster's socket."""
        return "postgresql:///%s?host=%s&user=%s" % (database, self.socket_dir, SUPERUSER)

    def psql(self, database, sql):
        """Runs SQL on DATABASE; its rows as lists of texts."""
        p = subprocess.run([os.path.join(PG_BIN, "psql"), "-X", "-q", "-A", "-t", "-F", "\x1f",
                            "-v", "ON_ERROR_STOP=1", "-h", self.socket_dir, "-U", SUPERUSER,
                            "-d", database, "-c", sql],
                           check=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        out = p.stdout.decode()
        return [line.split("\x1f") for line in out.split("\n") if line]

    def create_database(self):
        """A new empty database; its name."""
        self.databases += 1
        name = "loadlab_%d_%d" % (os.getpid(), self.databases)
        self.psql("postgres", "CREATE DATABASE %s" % name)
        return name

    def stop(self):
        if self.pid is None:
            return
        try:
            self._run([os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-m", "fast", "-w",
                       "-t", "30", "stop"])
        except subprocess.CalledProcessError:
            pass
        try:  # still there: the postmaster by its PID
            os.kill(self.pid, signal.SIGQUIT)
            time.sleep(0.5)
        except ProcessLookupError:
            pass
        self.pid = None
        shutil.rmtree(self.dir, ignore_errors=True)

    def restart(self):
        """Stops the server (fast) and starts it again on the same data."""
        self._run([os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-l",
                   os.path.join(self.dir, "server.log"), "-o", self.options(), "-m", "fast", "-w",
                   "-t", "60", "restart"])
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            self.pid = int(f.readline())


_shared = None


def shared():
    """This process's cluster, started on first use."""
    global _shared
    if _shared is None:
        _shared = Cluster().start()
    return _shared
