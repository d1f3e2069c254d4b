#!/bin/bash
# The termination study at full size (not part of `make test`):
#   tests/bench/bench_churn.sh [BUILD_DIR] [PROCESSES]
# 1000 processes (default) created and destroyed, with no DLL, with user32
# and with user32+gdi32, under Wine (the Windows churn, with the PeekMessage
# probe), and on Linux with nothing loaded as the reference measured in the
# same run. Prints per-process creation and destruction times, the probe's
# blocked time, and each set's ratio to the `none` set.
set -eu
BUILD=${1:-build}
N=${2:-1000}
AGENT="$BUILD/agent/loadlab-agent"
WORK=$(mktemp -d /tmp/loadlab-bench-churn-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

echo "churn benchmark: $N processes per set, $(nproc) cores"
"$AGENT" churn --processes "$N" --dll-set none --work-dir "$WORK/linux" --json >"$WORK/linux.json"
"$AGENT" churn --processes "$N" --dll-set none,user32,user32+gdi32 --wine \
    --work-dir "$WORK/wine" --json >"$WORK/wine.json"
/usr/bin/python3 - "$WORK/linux.json" "$WORK/wine.json" <<'PY'
import json, sys
def rows(path):
    data = json.load(open(path))
    return data if isinstance(data, list) else data.get("results", [data])
linux, wine = rows(sys.argv[1]), rows(sys.argv[2])
print("%-22s %10s %14s %14s %16s %14s" % ("platform / set", "processes", "create us/proc",
      "destroy us/proc", "blocked total ms", "blocked max ms"))
def show(label, r):
    n = r["processes"]
    print("%-22s %10d %14.1f %14.1f %16s %14s" % (label, n, r["create_us"] / n, r["destroy_us"] / n,
          r.get("blocked_total_ms", "-"), r.get("blocked_max_ms", "-")))
for r in linux:
    show("linux / " + r["dll_set"], r)
base = None
for r in wine:
    show("wine / " + r["dll_set"], r)
    if r["dll_set"] == "none":
        base = r
if base:
    for r in wine:
        print("  wine %-14s creation %.2fx, destruction %.2fx of none" % (
            r["dll_set"], r["create_us"] / base["create_us"], r["destroy_us"] / base["destroy_us"]))
        if r["dll_set"] != "none":
            n, bn = r["processes"], base["processes"]
            print("BENCH churn_create_%s %.1f us/process %.1f %.3f -" % (
                r["dll_set"], r["create_us"] / n, base["create_us"] / bn,
                (r["create_us"] / n) / (base["create_us"] / bn)))
PY
