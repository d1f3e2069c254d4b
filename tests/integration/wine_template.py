"""The booted Wine prefix that the Wine tests copy instead of booting their
own: `wineboot -i` takes 10 to 40 s on two busy cores, a copy a few.

`wine_template.py PATH` makes PATH, once per build tree: the ctest fixture
wine/template (tests/CMakeLists.txt), which gives every test under the
"wine" lock LOADLAB_WINE_TEMPLATE=PATH. The Linux agent's runner copies
that prefix into each task's own (agent/runner/runner.h); the tests' own
prefixes call copy_to(). Each copy is a private prefix with its own
wineserver, as a booted one was: Wine keys a server by the prefix
folder's device and inode, and `cp -a` copies the registry files, which
wineserver rewrites in place.
"""
import fcntl
import os
import shutil
import subprocess
import sys
import time

import harness

WINE64 = "/usr/lib/wine/wine64"
WINESERVER = "/usr/lib/wine/wineserver"
# Those of the agent's runner (RUNNER_BASE_DLL_OVERRIDES): no Mono or
# Gecko installer dialogs while the prefix boots.
ENV = {"WINEDEBUG": "-all", "WINEDLLOVERRIDES": "mscoree,mshtml="}


def path():
    """The template this test was given (LOADLAB_WINE_TEMPLATE), or None."""
    return os.environ.get("LOADLAB_WINE_TEMPLATE") or None


def copy_to(prefix):
    """Copies the template into PREFIX (made if missing) and returns True,
    or returns False when this test was given none (run by hand outside
    ctest): the caller then boots PREFIX itself."""
    template = path()
    if not template:
        return False
    os.makedirs(prefix, exist_ok=True)
    subprocess.run(["cp", "-a", os.path.join(template, "."), prefix], check=True)
    return True


def boot(prefix):
    """`wineboot -i` in PREFIX under its own wineserver, then `wineserver -k`,
    which saves the registry; nothing of PREFIX is left running."""
    env = dict(os.environ, WINEPREFIX=prefix, **ENV)
    server = subprocess.Popen([WINESERVER, "-f", "-p"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        time.sleep(0.5)
        for attempt in range(3):  # wineboot fails now and then on a busy machine
            code = subprocess.run([WINE64, "wineboot", "-i"], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                  timeout=300).returncode
            if code == 0:
                break
            time.sleep(1 + attempt)
        assert code == 0, "FAIL: wineboot -i in %s exited with %d three times" % (prefix, code)
        subprocess.run([WINESERVER, "-k"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=env, timeout=60)
        server.wait(30)
        assert os.path.exists(os.path.join(prefix, "system.reg")), "FAIL: %s has no registry" % prefix
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(30)
        harness.kill_processes_under(prefix)


def make(template):
    """Makes TEMPLATE unless it is there; a second caller waits for the first."""
    with open(template + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isdir(template):
            return
        new = template + ".new"
        shutil.rmtree(new, ignore_errors=True)
        os.makedirs(new)
        boot(new)
        os.rename(new, template)


if __name__ == "__main__":
    make(os.path.abspath(sys.argv[1]))
    print("ok: %s" % sys.argv[1])
