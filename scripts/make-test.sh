#!/bin/sh
# `make test`: every phase, each one timed, then a table of their wall
# times (also in BUILD_DIR/test-phases.txt, which .ci/run prints again at
# its end).
#
#   BUILD_DIR ASAN_DIR JOBS   from the Makefile (build, build-asan, nproc)
#   TEST_JOBS                 ctest's parallel level (JOBS + 1: most tests
#                             wait part of their time; those that keep a
#                             core busy take two slots, tests/test_budgets.cmake)
#
# Phases, and what runs beside what (two cores: each line keeps them busy):
#   packages            scripts/install-deps.sh test
#   then, side by side:
#     windows libraries   scripts/build-windows-deps.sh, both architectures
#     windows builds      build-win64 and build-win32 (after the libraries)
#   and
#     plain build         BUILD_DIR
#     sanitizer build     ASAN_DIR (ASan+UBSan)
#   tests               one ctest over both builds (BUILD_DIR/make-test/):
#                       every test of the plain build and the sanitizer
#                       build's tests labelled "sanitize" (named asan/...),
#                       in one queue, so that the sanitizer tests fill the
#                       core the chain of Wine tests leaves idle
#                       (tests/test_budgets.cmake orders the queue)
# The first phase that fails stops the run; its status is make test's.
set -u
BUILD_DIR=${BUILD_DIR:-build}
ASAN_DIR=${ASAN_DIR:-build-asan}
JOBS=${JOBS:-$(nproc)}
TEST_JOBS=${TEST_JOBS:-$((JOBS + 1))}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
mkdir -p "$BUILD_DIR"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
phases=$BUILD_DIR/test-phases.txt
: >"$phases.new"
run_started=$(date +%s)

# phase NAME COMMAND...: runs COMMAND, records NAME's wall time.
# Phases nest (builds runs the plain build's): the variables are local.
phase() {
    local name started rc
    name=$1
    shift
    started=$(date +%s)
    echo "make test: $name" >&2
    "$@"
    rc=$?
    printf '  %-22s %6d s%s\n' "$name" "$(($(date +%s) - started))" "$([ $rc -eq 0 ] || echo "  (exit $rc)")" \
        >>"$phases.new"
    return $rc
}

report() {
    {
        echo "make test phases (wall time; the Windows line ran beside the plain and sanitizer builds,"
        echo "and the plain and sanitizer tests in one queue; test-seconds add up both cores):"
        cat "$phases.new"
        [ -n "${test_times:-}" ] && echo "$test_times"
        printf '  %-22s %6d s\n' "all" "$(($(date +%s) - run_started))"
    } >"$phases"
    rm -f "$phases.new"
    cat "$phases" >&2
}

windows_libraries() {
    scripts/build-windows-deps.sh x86_64 &
    x64=$!
    scripts/build-windows-deps.sh i686
    x86=$?
    wait $x64 && [ $x86 -eq 0 ]
}

windows_line() {
    phase "windows libraries" windows_libraries &&
        phase "windows builds" make --no-print-directory JOBS="$JOBS" windows-only
}

linux_line() {
    phase "plain build" make --no-print-directory BUILD_DIR="$BUILD_DIR" JOBS="$JOBS" build-only &&
        phase "sanitizer build" make --no-print-directory ASAN_DIR="$ASAN_DIR" JOBS="$JOBS" asan-only
}

builds() {
    windows_line &
    win=$!
    linux_line
    linux=$?
    wait $win && [ $linux -eq 0 ]
}

# One ctest over both build trees: a folder whose CTestTestfile.cmake
# names the two.
tests() {
    asan=$(cd "$ASAN_DIR" && pwd)
    mkdir -p "$BUILD_DIR/make-test"
    printf 'subdirs("%s")\nsubdirs("%s")\n' "$BUILD_DIR" "$asan" >"$BUILD_DIR/make-test/CTestTestfile.cmake"
    log=$BUILD_DIR/make-test/ctest.log
    { (cd "$BUILD_DIR/make-test" && ctest --output-on-failure -j "$TEST_JOBS" -LE plain-only) 2>&1
      echo $? >"$log.exit"; } | tee "$log"
    # What each build's tests cost, in test-seconds (two run at once).
    test_times=$(awk '/Test +#[0-9]+: / {
            for (i = 1; i <= NF; i++) if ($i ~ /^#[0-9]+:$/) name = $(i + 1)
            for (i = 1; i <= NF; i++) if ($i == "sec") secs = $(i - 1)
            if (name ~ /^asan\//) { a += secs; an++ } else { p += secs; pn++ }
        }
        END { printf "  %-22s %6d s  (%d tests, test-seconds)\n  %-22s %6d s  (%d tests, test-seconds)", "plain tests", p, pn, "sanitizer tests", a, an }' "$log")
    [ "$(cat "$log.exit")" = 0 ]
}

phase packages scripts/install-deps.sh test &&
    phase builds builds &&
    phase tests tests
status=$?
report
exit $status
