#!/bin/bash
# loadlab as a new user and a CI job would drive it: curl against a real
# loadlabd, then `loadlab compare` gating a build by its exit code.
# Reaches compare's exit codes 0 (no regression), 1 (a regression beyond
# the threshold) and 2 (an error: nothing comparable, or a bad job id).
set -u
BUILD="${LOADLAB_BUILD_DIR:?}"
SRC="${LOADLAB_SOURCE_DIR:?}"
WORK=$(mktemp -d /tmp/loadlab-ci-gate-XXXXXX)
passed=0
failed=0
DAEMON_PID=

cleanup() {
    [ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

check() { # check NAME COMMAND... : counts a pass when the command succeeds
    local name=$1; shift
    if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
}

# The fake agents below are no builders: each builds its own (docs/builds.md).
"$BUILD/server/loadlabd" --listen 127.0.0.1:0 --data-dir "$WORK/data" --each-agent-build >"$WORK/out" 2>"$WORK/log" &
DAEMON_PID=$!
for _ in $(seq 100); do grep -q "listening on" "$WORK/out" && break; sleep 0.1; done
URL=$(sed -n 's/.*listening on //p' "$WORK/out")
ADMIN=$(cat "$WORK/data/admin.token")
ENROLL=$(cat "$WORK/data/enroll.token")

api() { # api METHOD PATH TOKEN [BODY] -> body on stdout; status in $WORK/status
    curl -s -o "$WORK/body" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $3" \
         -H 'Content-Type: application/json' ${4:+--data "$4"} "$URL$2" >"$WORK/status"
    cat "$WORK/body"
}
field() { # field NAME < JSON : a top-level number or string, without a JSON tool
    sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p" | head -n 1
}

# Three jobs of the column's experiment with one cell each; a fake agent
# posts 30 warm samples per variant: the candidate's default is 10 % slower.
samples() { # samples CENTER -> 30 numbers around CENTER (deterministic)
    local out="" i
    for i in $(seq 0 29); do out="$out${out:+,}$(( $1 + (i * 7) % 11 - 5 ))"; done
    echo "$out"
}
run_job() { # run_job NAME DEFAULT_CENTER -> job id
    local job agent token lease task attempt
    job=$(api POST /api/v1/jobs "$ADMIN" "{\"name\":\"$1\",\"family\":\"pe\",\"generator\":{\"dlls\":10,\"exports\":100},\"variants\":[\"default\",\"rebase\"]}" | field id)
    agent=$(api POST /api/v1/agents/enroll "$ENROLL" "{\"name\":\"ci-$1\",\"facts\":{\"os\":\"win10\"}}")
    token=$(echo "$agent" | field token)
    lease=$(api POST /api/v1/lease "$token" '{}')
    task=$(echo "$lease" | field task_id)
    attempt=$(echo "$lease" | field attempt)
    api POST "/api/v1/tasks/$task/result" "$token" "{\"attempt\":$attempt,\"facts\":{\"os\":\"win10\"},\"variants\":[{\"name\":\"default\",\"warm\":{\"samples_us\":[$(samples "$2")]}},{\"name\":\"rebase\",\"warm\":{\"samples_us\":[$(samples 1000)]}}]}" >/dev/null
    echo "$job"
}
BASE=$(run_job base 1000)
SAME=$(run_job same 1000)
SLOWER=$(run_job slower 1100)
OTHER=$(api POST /api/v1/jobs "$ADMIN" '{"name":"other","family":"pe","generator":{"dlls":3,"exports":3},"variants":["default"]}' | field id)

check "submit answered 201" test "$(cat "$WORK/status")" = 201
check "four jobs" test -n "$BASE" -a -n "$SAME" -a -n "$SLOWER" -a -n "$OTHER"

gate() { # the CI step: exit code of loadlab compare
    LOADLAB_SERVER="$URL" LOADLAB_TOKEN="$ADMIN" "$BUILD/cli/loadlab" compare "$@" >"$WORK/gate.out" 2>"$WORK/gate.err"
}
gate "$BASE" "$SAME" --max-regression 5;   code=$?; check "no regression: exit 0" test "$code" = 0
gate "$BASE" "$SLOWER" --max-regression 5; code=$?; check "10 % slower beyond 5 %: exit 1" test "$code" = 1
check "the table names the regression" grep -q "regression" "$WORK/gate.out"
gate "$BASE" "$SLOWER" --max-regression 15; code=$?; check "10 % slower within 15 %: exit 0" test "$code" = 0
gate "$BASE" "$OTHER";                      code=$?; check "different generators, no result yet: exit 2" test "$code" = 2
check "the generators' difference is printed" grep -q "The jobs' generators differ" "$WORK/gate.out"
gate "$BASE" 999999;                        code=$?; check "unknown job: exit 2" test "$code" = 2
check "one line on stderr" test "$(wc -l <"$WORK/gate.err")" = 1
# The same gate with the Markdown a pull request would show.
gate "$BASE" "$SLOWER" --max-regression 5 --format md; code=$?
check "markdown gate exits 1" test "$code" = 1
check "markdown table" grep -q "^| variant | cell |" "$WORK/gate.out"

# The same gate on a real program: Lua 5.4 from Debian's source package,
# cross-built with mingw-w64 (tests/agent/build_lua_mingw.sh, cached in the
# build tree), in two builds of one product folder submitted with
# --program-dir and run by the Linux agent under Wine. The candidate
# ships plugins its bin/main.lua loads at start (bin/plugin1..2.dll, one
# blob uploaded once: 16 MiB of pointers, 2 Mi base relocations, asking
# for the exe's own base so the loader must relocate all of it): the kind
# of regression large new DLLs bring, about 30 ms each on every start
# here, well above what two agent runs on a busy machine differ by (one
# 600 KB DLL more, or one plugin, was within that noise), yet well under
# the 1,000 % that --max-regression allows at most (about 6x the 12 ms of
# Lua alone; four plugins came near 11x, too close to it). One variant
# (as-built), 7 warm runs: the agent runs take under a minute under the
# "wine" lock.
api POST "/api/v1/jobs/$OTHER/cancel" "$ADMIN" '{}' >/dev/null
LUA="$BUILD/tests/program-lua"
check "lua built" sh "$SRC/tests/agent/build_lua_mingw.sh" "$LUA"
printf '\t.data\n\t.globl table\ntable:\n\t.rept 2097152\n\t.quad table\n\t.endr\n' >"$WORK/plugin.s"
check "plugin built" x86_64-w64-mingw32-gcc -shared -nostdlib -nostartfiles -Wl,--image-base,0x140000000 \
    -o "$WORK/plugin.dll" "$WORK/plugin.s"
for build in 1.0 1.1; do
    mkdir -p "$WORK/lua-$build/bin"
    cp "$LUA/bin/lua.exe" "$LUA/bin/lua54.dll" "$WORK/lua-$build/bin/"
done
echo 'print("lua-app 1.0")' >"$WORK/lua-1.0/bin/main.lua"
for n in 1 2; do cp "$WORK/plugin.dll" "$WORK/lua-1.1/bin/plugin$n.dll"; done
echo 'for n = 1, 2 do assert(package.loadlib("bin/plugin" .. n .. ".dll", "*")) end' >"$WORK/lua-1.1/bin/main.lua"
cat >"$WORK/lua-job.json" <<'JOB'
{"name": "lua-app", "family": "program",
 "program": {"exe": "bin/lua.exe", "args": ["bin/main.lua"], "until": "exit", "timeout_s": 60},
 "variants": ["as-built"], "measure": {"warm": {"runs": 7, "warmup": 1}}}
JOB
submit_program() { # submit_program DIR -> job id; runs it with the agent
    LOADLAB_SERVER="$URL" LOADLAB_TOKEN="$ADMIN" "$BUILD/cli/loadlab" submit "$WORK/lua-job.json" \
        --program-dir "$1" >"$WORK/submit.out" 2>>"$WORK/submit.err" || return 1
    sed -n 's/^job \([0-9]*\):.*/\1/p' "$WORK/submit.out"
    "$BUILD/agent/loadlab-agent" --server "$URL" --enroll-token "$ENROLL" --data-dir "$WORK/agent" \
        --name ci-wine --once >>"$WORK/agent.log" 2>&1 </dev/null
}
LUA_BASE=$(submit_program "$WORK/lua-1.0")
LUA_CAND=$(submit_program "$WORK/lua-1.1")
check "both Lua jobs done" test "$(api GET "/api/v1/jobs/$LUA_BASE" "$ADMIN" | field state)" = done -a \
    "$(api GET "/api/v1/jobs/$LUA_CAND" "$ADMIN" | field state)" = done
gate "$LUA_BASE" "$LUA_CAND" --max-regression 5; code=$?
check "a large plugin beyond 5 %: exit 1" test "$code" = 1
check "the changed files are named" grep -q "^bin/plugin2.dll  *added " "$WORK/gate.out"
check "... and the script that loads it" grep -q "^bin/main.lua  *changed " "$WORK/gate.out"
gate "$LUA_BASE" "$LUA_CAND" --max-regression 1000; code=$?
check "the same within 1000 %: exit 0" test "$code" = 0
gate "$LUA_BASE" "$LUA_CAND" --format json; code=$?
check "json names the files" grep -q '"added":\[{"path":"bin/plugin1.dll"' "$WORK/gate.out"
gate "$LUA_CAND" "$LUA_BASE" --max-regression 5; code=$?
check "the plugins taken out again: exit 0" test "$code" = 0
check "... and named as removed" grep -q "^bin/plugin1.dll  *removed  *[0-9a-f]\{12\} *$" "$WORK/gate.out"
gate "$LUA_CAND" "$LUA_BASE" --max-regression 5 --format markdown; code=$?
check "... in the Markdown too" grep -q "| bin/plugin1.dll | removed | [0-9a-f]\{12\} |  |" "$WORK/gate.out"
gate "$LUA_BASE" "$LUA_BASE"; code=$?
check "a job against itself: the same program" grep -q "the same program" "$WORK/gate.out"
[ "$failed" = 0 ] || { tail -n 30 "$WORK/agent.log" "$WORK/submit.err" "$WORK/gate.out"; }

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
