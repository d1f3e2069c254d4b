#!/bin/bash
# `make bench`: runs every benchmark under tests/bench/ against BUILD_DIR
# and prints one table of their BENCH lines (bench_table.py): what,
# figure, reference, ratio, goal, met. Each benchmark's own report goes to
# OUT_DIR/NAME.log. The Wine ones run under the machine-wide Wine lock.
# Not part of `make test`; takes a few minutes (bench_intervals about 25
# more: 20 calibration jobs natively and 20 under Wine).
#
#   tests/bench/run_benches.sh [BUILD_DIR] [OUT_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
out=${2:-$build/bench}
mkdir -p "$out"
lock=/tmp/loadlab-wine.lock

names=()
run() {
    local name=$1
    shift
    names+=("$out/$name.log")
    echo "bench: $name ..." >&2
    if ! "$@" >"$out/$name.log" 2>&1; then
        echo "bench: $name failed, see $out/$name.log" >&2
        echo "BENCH $name-failed - - - - figure>=1" >>"$out/$name.log"
    fi
}

run bench_server "$build/tests/bench/bench_server" "$build/server/loadlabd" 32 5
run bench_pg /usr/bin/python3 "$here/bench_pg.py" "$build" 32 5
run bench_reports /usr/bin/python3 "$here/bench_reports.py" "$build"
run bench_ab_compare /usr/bin/python3 "$here/bench_ab_compare.py" "$build"
run bench_growth /usr/bin/python3 "$here/bench_growth.py" "$build"
run bench_year /usr/bin/python3 "$here/bench_year.py" "$build"
run bench_fleet /usr/bin/python3 "$here/bench_fleet.py" "$build" --agents 1000
run bench_pe_rebase "$build/tests/bench/bench_pe_rebase"
run bench_elf_pipeline "$here/bench_elf_pipeline.sh" "$build"
run bench_timer flock "$lock" "$here/bench_timer.sh" "$build" 200
run bench_churn flock "$lock" "$here/bench_churn.sh" "$build" 1000
run bench_shared_build flock "$lock" /usr/bin/python3 "$here/bench_shared_build.py" "$build"
run bench_intervals flock "$lock" /usr/bin/python3 "$here/bench_intervals.py" "$build"

echo
echo "loadlab benchmarks, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ) (logs in $out)"
/usr/bin/python3 "$here/bench_table.py" "${names[@]}"
