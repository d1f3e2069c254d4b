"""Helpers shared by the PE toolkit's Python test drivers (stdlib only)."""
import json
import os
import subprocess
import sys


def need(path, what):
    """Fails the test (never skips) when a tool the deps script installs is missing."""
    if not path or path.endswith("NOTFOUND") or not os.path.exists(path):
        sys.exit(f"FAIL: {what} not found ({path}); scripts/install-deps.sh installs it")
    return path


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, cmd))} exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def dump(loadlab, path):
    return json.loads(run([loadlab, "pe", "dump", "--json", path]))


def mask_header(data, d):
    """The bytes of an image with TimeDateStamp and CheckSum zeroed."""
    b = bytearray(data)
    nt = int.from_bytes(b[0x3c:0x40], "little")
    b[nt + 8:nt + 12] = b"\0" * 4
    b[nt + 24 + 64:nt + 24 + 68] = b"\0" * 4
    return bytes(b)
