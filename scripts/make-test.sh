#!/bin/sh
# `make test`: every phase in order, each one timed, then a table of the
# phases' wall times (also written to BUILD_DIR/test-phases.txt, which
# .ci/run prints again at its end).
#
#   BUILD_DIR ASAN_DIR JOBS   from the Makefile (build, build-asan, nproc)
#
# Phases:
#   packages           scripts/install-deps.sh test
#   windows libraries  scripts/build-windows-deps.sh, both architectures at once
#   builds             the plain and the Windows builds side by side, then
#                      the ASan+UBSan build
#   tests              ctest in the plain build and, beside it, the
#                      sanitizer build's tests (label "sanitize"), each
#                      ctest with its share of the cores (see below)
# The first phase that fails stops the run (its status is make test's).
set -u
BUILD_DIR=${BUILD_DIR:-build}
ASAN_DIR=${ASAN_DIR:-build-asan}
JOBS=${JOBS:-$(nproc)}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
phases=""
status=0

# phase NAME COMMAND...: runs COMMAND, records NAME's wall time.
phase() {
    name=$1
    shift
    started=$(date +%s)
    echo "make test: $name" >&2
    "$@"
    rc=$?
    took=$(($(date +%s) - started))
    phases="$phases$(printf '%-20s %6d s%s' "$name" "$took" "$([ $rc -eq 0 ] || echo "  (exit $rc)")")
"
    return $rc
}

report() {
    mkdir -p "$BUILD_DIR"
    {
        echo "make test phases (wall time):"
        printf '%s' "$phases"
    } | tee "$BUILD_DIR/test-phases.txt" >&2
}

windows_libraries() {
    scripts/build-windows-deps.sh x86_64 &
    x64=$!
    scripts/build-windows-deps.sh i686
    x86=$?
    wait $x64 && [ $x86 -eq 0 ]
}

builds() {
    make --no-print-directory -j2 BUILD_DIR="$BUILD_DIR" JOBS="$JOBS" build-only windows-only &&
        make --no-print-directory ASAN_DIR="$ASAN_DIR" JOBS="$JOBS" asan-only
}

tests() {
    (cd "$BUILD_DIR" && ctest --output-on-failure -j "$JOBS") &&
        (cd "$ASAN_DIR" && ctest --output-on-failure -j "$JOBS" -L sanitize)
}

run_all() {
    phase packages scripts/install-deps.sh test &&
        phase "windows libraries" windows_libraries &&
        phase builds builds &&
        phase tests tests
}

run_all || status=$?
report
exit $status
