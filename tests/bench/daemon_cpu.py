"""What the Python benchmarks measure of a running loadlabd (a harness
Daemon): its CPU time, and waiting until it has nothing left to do."""
import os
import time

# Under this much CPU time over IDLE_WINDOW_S seconds (5 % of a core), the
# daemon is idle (its summarizer has nothing left to do).
IDLE_WINDOW_S = 0.5
IDLE_CPU_S = 0.025


def cpu_seconds(d):
    """The daemon's user + system CPU time so far (/proc/PID/stat)."""
    with open("/proc/%d/stat" % d.proc.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_idle(d, limit):
    """Until the daemon uses under 5 % of a core over half a second, at
    most LIMIT seconds: the time waited."""
    start = time.perf_counter()
    while time.perf_counter() - start < limit:
        c0 = cpu_seconds(d)
        time.sleep(IDLE_WINDOW_S)
        if cpu_seconds(d) - c0 < IDLE_CPU_S:
            break
    return time.perf_counter() - start
