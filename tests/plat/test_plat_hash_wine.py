#!/usr/bin/python3
"""plat_sha256()/plat_file_sha256() on Windows: CryptoAPI, under Wine.

tests/unit/common/test_hash.c (the POSIX unit test, OpenSSL) is built with
mingw-w64 for x86_64 against the Windows backend of the platform layer
(common/src/plat/*_win32.c and the shared plat.c), at the XP API level
(_WIN32_WINNT 0x0501) of the 32-bit agent, and run in a private Wine
prefix. Its report goes to files, not pipes. The test FAILS (never skips)
when the compiler or Wine is missing.

Usage: test_plat_hash_wine.py SOURCE_DIR GCC WINE64 WINESERVER WORKDIR
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import wine_template  # noqa: E402

# The Windows backend and what it needs; nothing from agent/.
SOURCES = ["tests/unit/common/test_hash.c", "common/src/err.c", "common/src/clock.c",
           "common/src/plat/plat.c", "common/src/plat/plat_win32.c", "common/src/plat/plat_fs_win32.c",
           "common/src/plat/plat_hash_win32.c", "common/src/plat/plat_clock_win32.c"]


def need(path, what):
    if not path or path.endswith("-NOTFOUND") or not os.path.exists(path):
        sys.exit(f"FAIL: {what} not found ({path}); scripts/install-deps.sh installs it")


def main():
    source, gcc, wine64, wineserver, work = sys.argv[1:6]
    need(gcc, "x86_64-w64-mingw32-gcc")
    need(wine64, "wine64")
    need(wineserver, "wineserver")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    exe = os.path.join(work, "test_hash.exe")
    cmd = [gcc, "-std=gnu11", "-O1", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
           "-D_GNU_SOURCE", "-D_POSIX_C_SOURCE=200809L", "-D_WIN32_WINNT=0x0501", "-DWINVER=0x0501",
           "-I", os.path.join(source, "common/include"), "-I", os.path.join(source, "tests/unit"),
           "-o", exe] + [os.path.join(source, s) for s in SOURCES] + ["-static", "-ladvapi32"]
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: building test_hash.exe exited {r.returncode}\n{r.stdout}\n{r.stderr}")

    env = dict(os.environ, WINEPREFIX=os.path.join(work, "prefix"), **wine_template.ENV)
    os.makedirs(env["WINEPREFIX"])
    copied = wine_template.copy_to(env["WINEPREFIX"])
    server = subprocess.Popen([wineserver, "-f", "-p"], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not copied:
            subprocess.run([wine64, "wineboot", "-i"], env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        out, err = os.path.join(work, "out.txt"), os.path.join(work, "err.txt")
        r = subprocess.run([wine64, exe, out, err], env=env, cwd=work, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        report = open(out).read() if os.path.exists(out) else ""
        failures = open(err).read() if os.path.exists(err) else ""
    finally:
        # `wineserver -k` ends this prefix's Wine processes; then our
        # server, by its PID, exits.
        subprocess.run([wineserver, "-k"], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()

    print(report + failures)
    words = report.split()
    # "N passed, 0 failed": every vector was checked, none differed.
    if r.returncode != 0 or len(words) < 4 or words[2] != "0" or int(words[0]) < 20:
        sys.exit(f"FAIL: test_hash.exe under Wine exited {r.returncode}: {report!r} {failures!r}")
    print("ok: SHA-256 vectors through CryptoAPI under Wine")


if __name__ == "__main__":
    main()
