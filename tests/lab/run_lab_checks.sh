#!/bin/bash
# `make lab-check`: the checks of precision and noise, which judge timings
# against goals and so belong on a quiet machine, never in `make test`
# (tests/lab/README.md). Runs every tests/lab/lab_*.py against BUILD_DIR,
# one after another (each needs the machine to itself), each report in
# OUT_DIR/NAME.log, then one table of their figures and goals
# (tests/bench/bench_table.py); exits 1 when a check broke or a goal was
# missed. The Wine ones run under the machine-wide Wine lock.
#
#   tests/lab/run_lab_checks.sh [BUILD_DIR] [OUT_DIR] [CHECK...]
#
# CHECK names (lab_calibrate, ...) run only those. A check with a Wine
# mode of its own (lab_sensitivity.py --wine) is also listed as
# NAME_wine, which runs NAME.py --wine.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$source_dir/build}" && pwd)
out=${2:-$build/lab-check}
shift 2 2>/dev/null || shift $#
mkdir -p "$out"
lock=/tmp/loadlab-wine.lock
export LOADLAB_SOURCE_DIR="$source_dir" LOADLAB_BUILD_DIR="$build"
export PYTHONPATH="$source_dir/tests/integration:$here"

checks=("$@")
if [ ${#checks[@]} -eq 0 ]; then
    for f in "$here"/lab_*.py; do
        checks+=("$(basename "$f" .py)")
    done
    checks+=(lab_sensitivity_wine)
fi
logs=()
broken=0
for name in "${checks[@]}"; do
    script="$here/$name.py"
    mode=()
    if [ ! -f "$script" ] && [ "${name%_wine}" != "$name" ]; then
        script="$here/${name%_wine}.py"
        mode=(--wine)
    fi
    [ -f "$script" ] || { echo "lab-check: no check $name ($script)" >&2; exit 2; }
    logs+=("$out/$name.log")
    echo "lab-check: $name ..." >&2
    start=$(date +%s)
    if ! flock "$lock" /usr/bin/python3 -B "$script" "${mode[@]}" >"$out/$name.log" 2>&1; then
        echo "lab-check: $name broke (an assertion that holds on any machine failed), see $out/$name.log" >&2
        echo "BENCH $name-broke - - - - figure>=1" >>"$out/$name.log"
        broken=1
    fi
    echo "lab-check: $name took $(( $(date +%s) - start )) s" >&2
done

echo
echo "loadlab lab checks, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
    "$(date -u +%Y-%m-%dT%H:%MZ) (logs in $out)"
/usr/bin/python3 "$source_dir/tests/bench/bench_table.py" "${logs[@]}"
table=$?
[ $broken -eq 0 ] && [ $table -eq 0 ]
