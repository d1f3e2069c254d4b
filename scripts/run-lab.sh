#!/bin/bash
# The lab on one machine (`make run`): loadlabd and one local loadlab-agent.
#
#   scripts/run-lab.sh          (the Makefile passes these from its variables)
#     BUILD_DIR    where loadlabd and loadlab-agent were built   (build)
#     LISTEN       the daemon's address                          (127.0.0.1:8080)
#     DATA_DIR     the daemon's data: SQLite, tokens             (./var)
#     LOCAL_AGENT  1: start a local agent too, 0: the daemon alone (1);
#                  the local agent is marked a builder with the admin
#                  token, so that it builds the lab's pe and elf jobs
#                  (docs/builds.md, "Who builds")
#     AGENT_DIR    the local agent's data: identity, spool, work (DATA_DIR/agent)
#     BUILD_FIRST  1: configure BUILD_DIR and build its three binaries first,
#                  quietly (0); the tests are make test's
#     JOBS         parallel build jobs for BUILD_FIRST              (nproc)
#
# With BUILD_FIRST=1 the build's output goes to BUILD_DIR/run-lab-build.log
# and the terminal gets one line before and one after (the tail of the log
# when it fails), so that `make run` shows only what this script says.
#
# Logs go to files beside each other, DATA_DIR/loadlabd.log and
# DATA_DIR/agent.log (appended); this terminal gets only what the script
# says. Ctrl-C (SIGINT) or SIGTERM stops the agent first, by its PID, so
# that it gives back the task it holds (a retryable failure: the task is
# queued again) to a daemon that still listens, then the daemon; each gets
# 30 s before SIGKILL. Both run in sessions of their own (setsid), so that
# the terminal's Ctrl-C reaches only this script and the order holds. When
# either process ends on its own, the other is stopped the same way and
# the script exits 1.
set -u

BUILD_DIR=${BUILD_DIR:-build}
LISTEN=${LISTEN:-127.0.0.1:8080}
DATA_DIR=${DATA_DIR:-$PWD/var}
LOCAL_AGENT=${LOCAL_AGENT:-1}
AGENT_DIR=${AGENT_DIR:-$DATA_DIR/agent}
BUILD_FIRST=${BUILD_FIRST:-0}
JOBS=${JOBS:-$(nproc)}
STOP_GRACE_SECONDS=30

daemon_log=$DATA_DIR/loadlabd.log
agent_log=$DATA_DIR/agent.log
daemon_pid=""
agent_pid=""

say() { printf 'run-lab: %s\n' "$*"; }

# Sends SIGTERM to PID, waits up to STOP_GRACE_SECONDS, then SIGKILL.
stop_process() {
    local pid=$1 name=$2 waited=0
    [ -n "$pid" ] || return 0
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    say "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $((STOP_GRACE_SECONDS * 10)) ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        say "$name did not stop in ${STOP_GRACE_SECONDS} s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    say "$name stopped"
}

stop_all() {
    trap '' INT TERM
    stop_process "$agent_pid" loadlab-agent
    stop_process "$daemon_pid" loadlabd
}

on_signal() {
    stop_all
    exit 0
}

# Marks the local agent a builder (only an admin's mark lets an agent build,
# docs/builds.md) once it has enrolled: its id is in AGENT_DIR/agent.json,
# written after the daemon enrolled it. Tries for 60 s; says so and goes on
# when it cannot (the agent then measures, and builds nothing).
mark_local_builder() {
    local id="" tries=0 out
    while [ "$tries" -lt 600 ]; do
        kill -0 "$agent_pid" 2>/dev/null || return 1
        id=$(sed -n 's/.*"id"[[:space:]]*:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$AGENT_DIR/agent.json" 2>/dev/null | head -n 1)
        if [ -n "$id" ] && out=$("$BUILD_DIR/cli/loadlab" --server "$url" --token "$(cat "$DATA_DIR/admin.token")" \
            agents --builder "$id" 2>&1); then
            return 0
        fi
        sleep 0.1
        tries=$((tries + 1))
    done
    say "could not mark the local agent a builder: ${out:-it did not enroll}" >&2
    return 1
}

# Configures and builds BUILD_DIR with its output in a log; 0 when built.
build_quietly() {
    local log=$BUILD_DIR/run-lab-build.log started=$SECONDS native=() type=()
    mkdir -p "$BUILD_DIR" || return 2
    # A folder configured before keeps its build type (make asan's, say).
    [ -f "$BUILD_DIR/CMakeCache.txt" ] || type=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
    say "building into $BUILD_DIR (log: $log)"
    # make's sub-makes print every directory they enter, unless told not to
    # (a Ninja build folder takes no such flag).
    [ ! -f "$BUILD_DIR/build.ninja" ] && native=(-- --no-print-directory)
    if ! { cmake -S . -B "$BUILD_DIR" "${type[@]}" &&
        cmake --build "$BUILD_DIR" -j "$JOBS" --target loadlabd loadlab-agent loadlab "${native[@]}"; } >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        say "the build failed; the whole log: $log" >&2
        return 2
    fi
    say "built in $((SECONDS - started)) s"
}

if [ "$BUILD_FIRST" = 1 ]; then
    build_quietly || exit 2
fi

for binary in "$BUILD_DIR/server/loadlabd" "$BUILD_DIR/agent/loadlab-agent" "$BUILD_DIR/cli/loadlab"; do
    if [ ! -x "$binary" ]; then
        say "$binary is not built (run make build)" >&2
        exit 2
    fi
done
mkdir -p "$DATA_DIR" || exit 2
DATA_DIR=$(cd "$DATA_DIR" && pwd)
case "$AGENT_DIR" in /*) ;; *) AGENT_DIR=$PWD/$AGENT_DIR ;; esac
daemon_log=$DATA_DIR/loadlabd.log
agent_log=$DATA_DIR/agent.log

trap on_signal INT TERM

# The daemon prints "listening on URL" on stdout once it serves: read it
# from the part of the log this run wrote (LISTEN may name port 0).
log_start=$(($(stat -c %s "$daemon_log" 2>/dev/null || echo 0) + 1))
setsid "$BUILD_DIR/server/loadlabd" --listen "$LISTEN" --data-dir "$DATA_DIR" </dev/null >>"$daemon_log" 2>&1 &
daemon_pid=$!
url=""
for _ in $(seq 1 300); do
    url=$(tail -c +"$log_start" "$daemon_log" | sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' | head -n 1)
    [ -n "$url" ] && break
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
        wait "$daemon_pid"
        say "loadlabd exited with status $? before it served; its log, $daemon_log:" >&2
        tail -n 20 "$daemon_log" >&2
        exit 1
    fi
    sleep 0.1
done
if [ -z "$url" ]; then
    say "loadlabd did not say where it listens in 30 s; see $daemon_log" >&2
    stop_all
    exit 1
fi

if [ "$LOCAL_AGENT" != 0 ]; then
    mkdir -p "$AGENT_DIR" || { stop_all; exit 2; }
    # Enrolls with the enrollment token on its first start, then keeps its
    # own token in AGENT_DIR/agent.json.
    setsid "$BUILD_DIR/agent/loadlab-agent" --server "$url" --enroll-token-file "$DATA_DIR/enroll.token" \
        --data-dir "$AGENT_DIR" </dev/null >>"$agent_log" 2>&1 &
    agent_pid=$!
    mark_local_builder
fi

server_env=""
[ "$url" = "http://127.0.0.1:8080" ] || server_env="LOADLAB_SERVER=$url "
cat <<EOF
run-lab: loadlabd (pid $daemon_pid) serves $url
  dashboard     $url/   (paste the admin token when it asks)
  admin token   $DATA_DIR/admin.token
  enroll token  $DATA_DIR/enroll.token
  daemon log    $daemon_log
EOF
if [ -n "$agent_pid" ]; then
    cat <<EOF
  local agent   pid $agent_pid, data in $AGENT_DIR, log $agent_log (a builder: it builds and measures)
EOF
else
    echo "  local agent   not started (LOCAL_AGENT=0)"
fi
cat <<EOF
Try, in another terminal:
  export ${server_env}LOADLAB_TOKEN=\$(cat $DATA_DIR/admin.token)
  $BUILD_DIR/cli/loadlab submit schemas/examples/quickstart.json --wait
  (the other studies' local forms: schemas/examples/local/, README "Quick start")
Ctrl-C stops both.
EOF

# Until a signal, or until one of the two ends on its own.
while :; do
    if ! kill -0 "$daemon_pid" 2>/dev/null; then
        say "loadlabd ended on its own; see $daemon_log" >&2
        stop_all
        exit 1
    fi
    if [ -n "$agent_pid" ] && ! kill -0 "$agent_pid" 2>/dev/null; then
        say "loadlab-agent ended on its own; see $agent_log" >&2
        stop_all
        exit 1
    fi
    sleep 1 &
    wait $!
done
