#!/usr/bin/python3
"""The load timer through `loadlab-agent time` (agent/measure.h).

- /bin/true: --json gives RUNS samples, and the summary agrees with them
  (min, median, mean and p90 recomputed here; the CIs hold the median and
  the minimum; outlier indexes point into the samples); the method records
  priority (asked and read back), CPU, clock and resolution.
- a program that sleeps 50 ms measures at least 50 ms (and under 1 s);
- a program that exits 1 fails the measurement: exit 1, message names it;
  with --reruns a failed start is run again and listed, warm or cold (a
  cold run after a new eviction: it reads from storage again);
- a hung program (sleep 100) with --timeout 300 is killed: exit 1 within
  seconds, message says so, and no such process is left;
- --cold on a program built here with gcc that reads a 4 MiB file given as
  argument (and with --file): before every cold run nothing of either file
  is resident (the method says the eviction worked and was checked), after
  it both files have resident pages, read_bytes is at least the file's
  size, and the warm run right after reads 0 bytes from storage;
- under Wine (failing without /usr/lib/wine/wine64 or mingw): a tiny .exe
  timed as `time --json -- /usr/lib/wine/wine64 Z:\\...\\tiny.exe` in a
  private prefix gives its samples, and --cold says its counters are the
  wine64 process's, taken from the Linux side.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import kill_processes_under, pids_where, run_tests  # noqa: E402

BUILD = os.environ.get("LOADLAB_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
AGENT = os.path.join(BUILD, "agent", "loadlab-agent")
WINE64 = "/usr/lib/wine/wine64"
WINESERVER = "/usr/lib/wine/wineserver"
MINGW = shutil.which("x86_64-w64-mingw32-gcc")


def agent_time(args, timeout=120):
    return subprocess.run([AGENT, "time"] + args, capture_output=True, text=True, timeout=timeout)


def quantile(xs, q):
    """Type 7 (R's default), as stats.h."""
    s = sorted(xs)
    h = (len(s) - 1) * q
    lo = int(h)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def test_true_summary_matches_samples():
    r = agent_time(["--json", "--runs", "20", "--warmup", "2", "--", "/bin/true"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    xs = out["samples_us"]
    assert len(xs) == 20 and out["runs"] == 20 and out["warmup"] == 2, out
    assert all(x > 0 for x in xs), xs
    assert close(out["min_us"], min(xs)), (out["min_us"], min(xs))
    assert close(out["median_us"], statistics.median(xs)), (out["median_us"], statistics.median(xs))
    assert close(out["mean_us"], statistics.fmean(xs))
    assert close(out["p90_us"], quantile(xs, 0.9))
    med = statistics.median(xs)
    assert close(out["mad_us"], statistics.median([abs(x - med) for x in xs]))
    lo, hi = out["ci_median_us"]
    assert lo <= out["median_us"] <= hi, out
    lo, hi = out["ci_min_us"]
    assert close(lo, min(xs)) and lo <= hi, out
    assert all(0 <= i < len(xs) for i in out["outliers"]), out["outliers"]
    m = out["method"]
    assert m["kind"] == "warm" and m["clock"] == "CLOCK_MONOTONIC" and m["timer_resolution_ns"] > 0, m
    assert m["priority"] and m["priority_read_back"] and m["runs"] == 20, m
    if m["realtime"]:  # root with two CPUs or more: FIFO, pinned
        assert m["priority_read_back"].startswith("SCHED_FIFO") and m["cpu"] is not None, m
    # The agent's own scheduling is back to normal afterwards: it exited;
    # a readable summary works too.
    r = agent_time(["--runs", "3", "--warmup", "0", "--", "true"])
    assert r.returncode == 0 and "median" in r.stdout and "priority" in r.stdout, r


def test_sleeping_program_measures_its_sleep():
    r = agent_time(["--json", "--runs", "3", "--warmup", "0", "--", "/bin/sleep", "0.05"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert len(out["samples_us"]) == 3
    assert out["min_us"] >= 50000 and out["median_us"] < 1000000, out


def test_failing_program_is_an_error():
    r = agent_time(["--json", "--runs", "3", "--", "/bin/false"])
    assert r.returncode == 1, r
    assert "exited with 1" in r.stderr and "/bin/false" in r.stderr, r.stderr
    assert r.stdout == "", r.stdout
    r = agent_time(["--runs", "1", "--", "/nonexistent/program"])
    assert r.returncode == 1 and "Cannot start" in r.stderr, r
    r = agent_time(["--runs", "0", "--", "/bin/true"])
    assert r.returncode == 2, r


def sleepers(arg):
    return pids_where("cmdline", lambda argv: len(argv) >= 2 and argv[0].endswith(b"sleep")
                      and argv[1] == arg.encode())


def test_hung_program_is_killed():
    arg = "100.%d" % os.getpid()  # unique to this test run
    start = time.monotonic()
    r = agent_time(["--runs", "1", "--warmup", "0", "--timeout", "300", "--", "/bin/sleep", arg], timeout=60)
    elapsed = time.monotonic() - start
    assert r.returncode == 1, r
    assert "killed" in r.stderr and "300 ms" in r.stderr, r.stderr
    # Killed at 300 ms, not after the program's 100 s (a bound with room
    # for a loaded machine, not a timing goal).
    assert elapsed < 45, elapsed
    left = sleepers(arg)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "still running: %s" % left


READER = r"""
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	static char block[1 << 16];
	long long total = 0;
	ssize_t n;
	int fd = argc > 1 ? open(argv[1], O_RDONLY) : -1;
	if (fd < 0)
		return 3;
	while ((n = read(fd, block, sizeof(block))) > 0)
		total += n;
	close(fd);
	return total == 4 << 20 ? 0 : 4;
}
"""


def test_cold_run_reads_from_storage_and_warm_does_not():
    # On the build's file system (the page cache of tmpfs cannot be dropped).
    work = tempfile.mkdtemp(prefix="measure-cold-", dir=BUILD)
    try:
        src, prog, data = (os.path.join(work, n) for n in ("reader.c", "reader", "data.bin"))
        with open(src, "w") as f:
            f.write(READER)
        subprocess.run(["gcc", "-O2", "-o", prog, src], check=True)
        with open(data, "wb") as f:
            f.write(os.urandom(4 << 20))
        r = agent_time(["--json", "--cold", "--runs", "3", "--file", data, "--", prog, data])
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        m = out["method"]
        assert m["kind"] == "cold" and m["cold"] is True and m["eviction_verified"] is True, m
        assert "posix_fadvise" in m["eviction"] and "/proc/PID/io" in m["counters"], m
        assert out["cold"] is True and out["cold_runs"] == [True] * 3, out
        assert out["resident_before_pages"] == [0, 0, 0], out["resident_before_pages"]
        assert len(out["samples_us"]) == 3 and all(x > 0 for x in out["samples_us"])
        for b in out["read_bytes"]:
            assert b >= 4 << 20, out["read_bytes"]
        assert all(x > 0 for x in out["page_faults"]), out["page_faults"]
        names = [mod["name"] for mod in out["modules"]]
        assert names == [prog, data], names
        for mod in out["modules"]:
            assert mod["pages"] > 0 and all(p > 0 for p in mod["resident_pages"]), mod
        data_module = out["modules"][1]
        assert all(p == data_module["pages"] for p in data_module["resident_pages"]), data_module
        warm = out["warm_check"]
        assert len(warm["samples_us"]) == 3 and warm["read_bytes"] == [0, 0, 0], warm
        # The readable form says the same.
        r = agent_time(["--cold", "--runs", "1", "--file", data, "--", prog, data])
        assert r.returncode == 0 and "cold: yes" in r.stdout, r
    finally:
        shutil.rmtree(work, ignore_errors=True)


TINY_EXE = "int main(void) { return 0; }\n"


def test_wine_program_measured_from_the_linux_side():
    # Wine and mingw-w64 are installed by scripts/install-deps.sh: missing
    # is a failure, never a pass.
    assert os.path.exists(WINE64), "FAIL: %s not found; scripts/install-deps.sh installs wine64" % WINE64
    assert MINGW, "FAIL: x86_64-w64-mingw32-gcc not found; scripts/install-deps.sh installs mingw-w64"
    work = tempfile.mkdtemp(prefix="measure-wine-", dir=BUILD)
    prefix = os.path.join(work, "prefix")
    env = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=")
    server = None
    try:
        src, exe = os.path.join(work, "tiny.c"), os.path.join(work, "tiny.exe")
        with open(src, "w") as f:
            f.write(TINY_EXE)
        subprocess.run([MINGW, "-O2", "-o", exe, src], check=True)
        os.makedirs(prefix)
        server = subprocess.Popen([WINESERVER, "-f", "-p"], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        time.sleep(0.5)
        for attempt in range(2):  # wineboot is flaky on a busy machine
            boot = subprocess.run([WINE64, "wineboot", "-i"], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, timeout=300)
            if boot.returncode == 0:
                break
        win_exe = "Z:" + exe.replace("/", "\\")

        def run(args, name):
            path = os.path.join(work, name + ".out")
            with open(path, "wb") as log:
                code = subprocess.run([AGENT, "time"] + args, stdin=subprocess.DEVNULL, stdout=log,
                                      stderr=subprocess.STDOUT, env=env, timeout=300).returncode
            with open(path) as f:
                return code, f.read()

        code, text = run(["--json", "--runs", "3", "--warmup", "1", "--", WINE64, win_exe], "warm")
        assert code == 0, text
        out = json.loads(text)
        assert len(out["samples_us"]) == 3 and out["min_us"] > 0, out
        assert out["argv"] == [WINE64, win_exe], out["argv"]
        code, text = run(["--json", "--cold", "--runs", "1", "--file", exe, "--", WINE64, win_exe], "cold")
        assert code == 0, text
        out = json.loads(text)
        assert "wine64 process" in out["method"]["counters"], out["method"]
        assert len(out["samples_us"]) == 1 and out["page_faults"][0] > 0, out
        assert out["modules"][1]["name"] == exe, out["modules"]
        # Whether it was cold is stated, never assumed: wine64 itself stays
        # mapped by the prefix's services, so it may not be.
        assert isinstance(out["cold"], bool) and (out["cold"] or out["note"]), out
    finally:
        if server:
            subprocess.run([WINESERVER, "-k"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=env, timeout=60)
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        kill_processes_under(prefix)
        shutil.rmtree(work, ignore_errors=True)



def test_reruns_run_a_failed_start_again_and_list_it():
    """--reruns: a program that fails its first start is run again, and the
    rerun is listed; without reruns the same program fails the measurement."""
    work = tempfile.mkdtemp(prefix="loadlab-reruns-")
    try:
        marker = os.path.join(work, "started-once")
        script = "test -e %s || { touch %s; exit 3; }" % (marker, marker)
        r = subprocess.run([AGENT, "time", "--json", "--runs", "3", "--warmup", "0", "--reruns", "2",
                            "--", "/bin/sh", "-c", script], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert len(out["samples_us"]) == 3, out
        assert out["reruns"] == [{"program": out["reruns"][0]["program"], "run": 1, "phase": "timed",
                                  "exit_code": 3}], out
        os.unlink(marker)
        r = subprocess.run([AGENT, "time", "--json", "--runs", "3", "--warmup", "0",
                            "--", "/bin/sh", "-c", script], capture_output=True, text=True, timeout=120)
        assert r.returncode == 1 and "exited with 3" in r.stderr, (r.returncode, r.stderr)
        r = subprocess.run([AGENT, "time", "--reruns", "11", "--", "/bin/true"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "--reruns" in r.stderr, r
    finally:
        shutil.rmtree(work, ignore_errors=True)


# Appends to argv[2]/starts the pages of argv[1] resident when it starts
# (mincore), reads argv[1] whole, then by marker files in argv[2]: the
# first start exits 3, the second 0, the third 4, every later one 0.
FAILS_BY_MARKER = r"""
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
static int first_time(const char *dir, const char *name)
{
	char path[4096];
	int fd;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (access(path, F_OK) == 0)
		return 0;
	if ((fd = open(path, O_CREAT | O_WRONLY, 0644)) >= 0)
		close(fd);
	return 1;
}
int main(int argc, char **argv)
{
	static char block[1 << 16];
	static unsigned char pages[1 << 16];
	char path[4096];
	struct stat st;
	long resident = 0, page = sysconf(_SC_PAGESIZE);
	void *map;
	FILE *log;
	int fd = argc > 2 ? open(argv[1], O_RDONLY) : -1;
	if (fd < 0 || fstat(fd, &st) < 0 || (st.st_size + page - 1) / page > (long)sizeof(pages))
		return 9;
	map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED || mincore(map, st.st_size, pages) < 0)
		return 9;
	for (long i = 0; i < (st.st_size + page - 1) / page; i++)
		resident += pages[i] & 1;
	munmap(map, st.st_size);
	snprintf(path, sizeof(path), "%s/starts", argv[2]);
	if (!(log = fopen(path, "a")) || fprintf(log, "%ld\n", resident) < 0 || fclose(log) != 0)
		return 9;
	while (read(fd, block, sizeof(block)) > 0)
		;
	close(fd);
	if (first_time(argv[2], "first"))
		return 3;
	if (first_time(argv[2], "second"))
		return 0;
	if (first_time(argv[2], "third"))
		return 4;
	return 0;
}
"""


def test_cold_reruns_evict_again_and_list_each():
    """--cold --reruns: a cold run whose program exits non-zero is taken
    again after a new eviction (it reads its file from storage again), a
    failed warm check is taken again, and both are listed; without reruns
    the first failure fails the measurement."""
    # On the build's file system (the page cache of tmpfs cannot be dropped).
    work = tempfile.mkdtemp(prefix="measure-cold-reruns-", dir=BUILD)
    try:
        src, prog, data = (os.path.join(work, n) for n in ("fails.c", "fails", "data.bin"))
        markers = os.path.join(work, "markers")
        os.mkdir(markers)
        with open(src, "w") as f:
            f.write(FAILS_BY_MARKER)
        subprocess.run(["gcc", "-O2", "-o", prog, src], check=True)
        with open(data, "wb") as f:
            f.write(os.urandom(4 << 20))
        args = ["--json", "--cold", "--runs", "2", "--file", data]
        r = agent_time(args + ["--reruns", "2", "--", prog, data, markers])
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        name = out["reruns"][0]["program"] if out["reruns"] else None
        assert out["reruns"] == [{"program": name, "run": 1, "phase": "cold", "exit_code": 3},
                                 {"program": name, "run": 1, "phase": "warm check", "exit_code": 4}], out
        assert sorted(os.listdir(markers)) == ["first", "second", "starts", "third"]
        # The first four starts, in order: the failed cold run, its retake,
        # the failed warm check, its retake (a retake for noise comes only
        # after a whole run). The retaken cold run found nothing of the file
        # resident (evicted again, though the failed start had read it all);
        # the warm checks found it all.
        with open(os.path.join(markers, "starts")) as f:
            starts = [int(line) for line in f]
        pages = (4 << 20) // os.sysconf("SC_PAGESIZE")
        assert starts[:4] == [0, 0, pages, pages], starts
        assert out["cold"] is True and out["cold_runs"] == [True, True], out
        assert out["resident_before_pages"] == [0, 0], out["resident_before_pages"]
        assert len(out["samples_us"]) == 2 and len(out["warm_check"]["samples_us"]) == 2, out
        shutil.rmtree(markers)
        os.mkdir(markers)
        r = agent_time(args + ["--", prog, data, markers])
        assert r.returncode == 1 and "exited with 3 in cold run 1" in r.stderr, (r.returncode, r.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    run_tests(globals())
