#!/bin/sh
# The timer-floor benchmark (issue 5): how much the agent's own timer adds
# to the time of an empty static program, measured in one run against
#   - a minimal spawn-and-wait loop in C (bench_spawn_loop, vfork+execve,
#     under the agent's conditions: pinned, SCHED_FIFO, when root), and the
#     same loop with clone(CLONE_VM|CLONE_VFORK) and with posix_spawn, to
#     show which way of starting a child is cheaper here;
#   - loadlab-agent time --json --runs RUNS;
#   - hyperfine -N --runs RUNS --export-json (normal priority, as it runs).
# Prints the fastest and median run of each and the agent's ratios to the
# bare loop (aim: median <= 1.05). Not part of `make test`.
#
#   tests/bench/bench_timer.sh [BUILD_DIR] [RUNS]     (defaults: build 200)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
runs=${2:-200}
agent=$build/agent/loadlab-agent
loop=$build/tests/bench/bench_spawn_loop
for f in "$agent" "$loop"; do
    [ -x "$f" ] || { echo "bench_timer: $f is missing: build first (cmake --build $build)" >&2; exit 2; }
done
command -v hyperfine >/dev/null || { echo "bench_timer: hyperfine is missing (scripts/install-deps.sh)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-timer.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf 'int main(void){return 0;}\n' > "$work/empty.c"
gcc -static -O2 -o "$work/empty" "$work/empty.c"

realtime=""
[ "$(id -u)" -eq 0 ] && [ "$(nproc)" -ge 2 ] && realtime="--realtime"
# Warm the caches once before anything is timed.
"$loop" 20 "$work/empty" >/dev/null

vfork_line=$("$loop" $realtime --method vfork "$runs" "$work/empty")
clone_line=$("$loop" $realtime --method clone "$runs" "$work/empty")
spawn_line=$("$loop" $realtime --method posix_spawn "$runs" "$work/empty")
"$agent" time --json --runs "$runs" --warmup 5 -- "$work/empty" > "$work/agent.json"
hyperfine -N --runs "$runs" --warmup 5 --style none --export-json "$work/hyperfine.json" "$work/empty" \
    >/dev/null 2>&1

python3 - "$work" "$runs" "$realtime" "$vfork_line" "$clone_line" "$spawn_line" <<'EOF'
import json, statistics, sys
work, runs, realtime = sys.argv[1], int(sys.argv[2]), sys.argv[3]
loops = {}
for line in sys.argv[4:7]:
    f = line.split()
    loops[f[0]] = (float(f[4]), float(f[6]))
agent = json.load(open(work + "/agent.json"))
hf = json.load(open(work + "/hyperfine.json"))["results"][0]["times"]
hf_us = [t * 1e6 for t in hf]
rows = [("bare loop, vfork+execve" + (" (FIFO, pinned)" if realtime else ""), *loops["vfork"]),
        ("bare loop, clone(CLONE_VM|CLONE_VFORK)", *loops["clone"]),
        ("bare loop, posix_spawn", *loops["posix_spawn"]),
        ("loadlab-agent time (%s)" % agent["method"]["priority_read_back"], agent["min_us"], agent["median_us"]),
        ("hyperfine -N", min(hf_us), statistics.median(hf_us))]
print("empty static program, %d runs each, one run of the benchmark" % runs)
print("%-48s %12s %12s" % ("", "fastest us", "median us"))
for name, lo, med in rows:
    print("%-48s %12.1f %12.1f" % (name, lo, med))
base_min, base_med = loops["vfork"]
print("agent / bare loop: fastest %.3f, median %.3f (aim <= 1.05)" %
      (agent["min_us"] / base_min, agent["median_us"] / base_med))
print("BENCH timer_median %.1f us %.1f %.4f ratio<=1.05" %
      (agent["median_us"], base_med, agent["median_us"] / base_med))
print("BENCH posix_spawn_median %.1f us %.1f %.4f -" %
      (loops["posix_spawn"][1], base_med, loops["posix_spawn"][1] / base_med))
print("hyperfine / bare loop: fastest %.3f, median %.3f" %
      (min(hf_us) / base_min, statistics.median(hf_us) / base_med))
print("posix_spawn / vfork+execve: median %.3f; clone / vfork+execve: median %.3f" %
      (loops["posix_spawn"][1] / base_med, loops["clone"][1] / base_med))
EOF
