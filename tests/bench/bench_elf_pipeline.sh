#!/bin/bash
# The elf pipeline's overhead (issue 13), not part of `make test`:
#   tests/bench/bench_elf_pipeline.sh [BUILD_DIR] [DLLS] [EXPORTS] [ROUNDS]
#                                     (defaults: build 10 100 3)
# Runs a DLLS x EXPORTS job with all eight elf presets through
# `loadlab-agent run` (one warm run, no warm-up: the point is the
# pipeline, not the timer) and measures its wall time; then, in the same
# run, a bare parallel build of the same sources with make -j$(nproc): every
# library compiled (-fPIC, -fvisibility=hidden, trace-ordered), and each
# variant's libraries and program linked with its flags. ROUNDS rounds of
# both, alternating, so that the machine's load hits both alike; prints
# each round, the fastest of each and their ratio (aim: at most 1.3), and
# a BENCH line (tests/bench/README.md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
dlls=${2:-10}
exports=${3:-100}
rounds=${4:-3}
agent="$build/agent/loadlab-agent"
work=$(mktemp -d /tmp/loadlab-bench-elf-XXXXXX)
trap 'rm -rf "$work"' EXIT

# Runs the command, its stderr appended to $log; prints "WALL CPU" (seconds;
# CPU is user + system of the command and everything it started, which
# other work on the machine disturbs less than the wall time).
timed() {
    /usr/bin/python3 - "$@" <<'PY'
import resource, subprocess, sys, time
log = open(sys.argv[1], "ab")
start = time.monotonic()
subprocess.run(sys.argv[2:], check=True, stdout=subprocess.DEVNULL, stderr=log)
wall = time.monotonic() - start
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f %.3f" % (wall, r.ru_utime + r.ru_stime))
PY
}

cat >"$work/job.json" <<JOB
{"name": "bench-elf", "family": "elf", "generator": {"dlls": $dlls, "exports": $exports},
 "variants": ["default", "now", "relr", "hidden", "symbolic", "symbolic+relr", "reorder", "sysv-hash"],
 "measure": {"warm": {"runs": 1, "warmup": 0}}}
JOB
pipeline_times=$(timed "$work/run.log" "$agent" run "$work/job.json" --out "$work/result.json" --keep)
kept=$(sed -n 's/.*work folder kept: //p' "$work/run.log")
trap 'rm -rf "$work" "$kept"' EXIT

# The bare build: the same sources, the same flags, no verification.
bare="$work/bare"
mkdir -p "$bare"
cp "$kept"/src/*.c "$bare/"
/usr/bin/python3 - "$bare" "$dlls" <<'PY'
import sys
bare, n = sys.argv[1], int(sys.argv[2])
variants = {"default": [], "now": ["-Wl,-z,now"], "relr": ["-Wl,-z,pack-relative-relocs"],
            "hidden": [], "symbolic": ["-Wl,-Bsymbolic"],
            "symbolic+relr": ["-Wl,-Bsymbolic", "-Wl,-z,pack-relative-relocs"],
            "reorder": [], "sysv-hash": ["-Wl,--hash-style=sysv"]}
sets = {"link": ("", "-fPIC"), "hidden": ("", "-fPIC -fvisibility=hidden"), "order": ("_order", "-fPIC")}
rules, all_targets = [], []
for s, (suffix, flags) in sets.items():
    for i in range(n):
        rules.append("%s/lt%d.o: lt%d%s.c\n\tmkdir -p %s && gcc -O1 -c $< -o $@ %s\n" % (s, i, i, suffix, s, flags))
rules.append("main.o: main.c\n\tgcc -O1 -c $< -o $@\n")
for v, flags in variants.items():
    s = "hidden" if v == "hidden" else "order" if v == "reorder" else "link"
    d = "v-" + v.replace("+", "-")
    libs = []
    for i in range(n):
        t = "%s/liblt%d.so" % (d, i)
        rules.append("%s: %s/lt%d.o\n\tmkdir -p %s && gcc -shared -nostdlib -o $@ $< %s\n" % (t, s, i, d, " ".join(flags)))
        libs.append(t)
    main_flags = [f for f in flags if "Bsymbolic" not in f]
    rules.append("%s/main: main.o %s\n\tgcc -o $@ main.o -L%s -Wl,-rpath,'$$ORIGIN' %s %s\n"
                 % (d, " ".join(libs), d, " ".join("-llt%d" % i for i in range(n)), " ".join(main_flags)))
    all_targets.append(d + "/main")
open(bare + "/Makefile", "w").write("all: %s\n\n%s" % (" ".join(all_targets), "\n".join(rules)))
PY
bare_times=""
for round in $(seq 1 "$rounds"); do
    if [ "$round" -gt 1 ]; then
        pipeline_times="$pipeline_times $(timed "$work/run.log" "$agent" run "$work/job.json" \
            --out "$work/result-$round.json")"
    fi
    find "$bare" -mindepth 1 -type d -exec rm -rf {} + && rm -f "$bare"/*.o
    bare_times="$bare_times $(timed "$work/make.log" make -s -C "$bare" -j"$(nproc)")"
done

/usr/bin/python3 - "$pipeline_times" "$bare_times" "$work/result.json" "$dlls" "$exports" <<'PY'
import json, sys
pipeline_all, bare_all = [list(map(float, a.split())) for a in sys.argv[1:3]]
pipeline, bare = pipeline_all[0::2], bare_all[0::2]
pipeline_cpu, bare_cpu = pipeline_all[1::2], bare_all[1::2]
result = json.load(open(sys.argv[3]))
valid = sum(v["valid"] for v in result["variants"])
print("elf pipeline benchmark: %s x %s, %d variants (%d valid)" % (sys.argv[4], sys.argv[5],
      len(result["variants"]), valid))
print("phases_ms (round 1): %s" % json.dumps(result["phases_ms"]))
for r, (p, b, pc, bc) in enumerate(zip(pipeline, bare, pipeline_cpu, bare_cpu), 1):
    print("round %d: pipeline %6.2f s (CPU %5.2f s), bare %6.2f s (CPU %5.2f s), ratio %.2f (CPU %.2f)"
          % (r, p, pc, b, bc, p / b, pc / bc))
ratio = min(pipeline) / min(bare)
print("CPU time pipeline / bare %8.2f   (fastest of each)" % (min(pipeline_cpu) / min(bare_cpu)))
print("pipeline wall time       %8.2f s (fastest of %d)" % (min(pipeline), len(pipeline)))
print("bare parallel build      %8.2f s (fastest of %d)" % (min(bare), len(bare)))
print("ratio pipeline / bare    %8.2f   (aim: <= 1.3)" % ratio)
print("BENCH elf_pipeline_%sx%s %.2f s %.2f %.2f ratio<=1.3" % (sys.argv[4], sys.argv[5], min(pipeline),
                                                               min(bare), ratio))
PY
