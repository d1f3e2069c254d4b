"""What the agent tests share to wait for an agent they started."""


def wait_agent(proc, log_path, timeout, cleanup=None):
    """Waits up to TIMEOUT s for the agent process PROC (a Popen); one still
    running then is killed and reaped (and subprocess.TimeoutExpired
    raised), and CLEANUP() runs when given, whatever happened. Returns
    (exit code, the text of its log LOG_PATH)."""
    try:
        code = proc.wait(timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if cleanup:
            cleanup()
    with open(log_path, "rb") as f:
        return code, f.read().decode(errors="replace")
