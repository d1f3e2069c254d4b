#!/bin/bash
# The conventions of STYLE.md that a machine can check, on the source tree:
#   - every C file follows .clang-format (clang-format --dry-run --Werror);
#   - no source file (C, and the dashboard's web/*.js) is over 800 lines
#     (a smell detector, not a budget: split a file by what it does, never
#     move code only to fit);
#   - common/ includes nothing of agent/, server/, cli/ (the shared library
#     depends on no binary), and agent/'s folders include each other in
#     one direction only;
#   - no banned function (loadlab/banned.h) is called anywhere, not even in
#     code that a compile would not see (string literals, other OS's backend);
#   - no loop of files in the call graph of any program (server/, agent/,
#     cli/, common/), read from the object files of LOADLAB_BUILD_DIR by
#     call_graph.py: two files that call each other, directly or through
#     others, share something that belongs below both.
# Exits 1 naming every file that breaks a rule.
set -u
src=${LOADLAB_SOURCE_DIR:?}
cd "$src" || exit 2
fail=0
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*' -not -path '*/node_modules/*')
[ -n "$files" ] || { echo "no C files found under $src"; exit 1; }
checked=0
# the dashboard's scripts (web/, its npm folder aside) have the same cap
webjs=$(git ls-files 'web/*.js' 2>/dev/null || find web -name '*.js' -not -path '*/node_modules/*')

for f in $files $webjs; do
    checked=$((checked + 1))
    lines=$(wc -l <"$f")
    if [ "$lines" -gt 800 ]; then
        echo "$f: $lines lines (at most 800)"
        fail=1
    fi
done

if command -v clang-format >/dev/null; then
    # shellcheck disable=SC2086
    if ! clang-format --dry-run --Werror $files 2>/tmp/loadlab-clang-format.$$; then
        grep -E '^[^ ].*: (error|warning):' /tmp/loadlab-clang-format.$$ | cut -d: -f1 | sort -u |
            sed 's/$/: not formatted as .clang-format says (clang-format -i FILE)/'
        fail=1
    fi
    rm -f /tmp/loadlab-clang-format.$$
else
    echo "clang-format is missing (scripts/debian-packages.txt installs it)"
    fail=1
fi

bad=$(grep -rlE '#include *"(\.\./)*(agent|server|cli)/' common 2>/dev/null)
if [ -n "$bad" ]; then
    echo "common/ includes a binary's header: $bad"
    fail=1
fi

# agent/'s folders (fleet, family, measure, runner, cmd, ...) include each
# other in one direction only: a cycle in the include graph between them is
# a driver and its stages calling each other.
cycle=$(python3 - <<'PY'
import os, re
root = "agent"
folders = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
edges = {d: set() for d in folders}
for d in folders:
    for dirpath, _, files in os.walk(os.path.join(root, d)):
        for name in files:
            if name.endswith((".c", ".h")):
                text = open(os.path.join(dirpath, name), errors="replace").read()
                for dep in re.findall(r'#include "([a-z_]+)/', text):
                    if dep in edges and dep != d:
                        edges[d].add(dep)
state = {}
def visit(node, path):
    state[node] = 1
    for dep in sorted(edges[node]):
        if state.get(dep) == 1:
            return path + [node, dep]
        if dep not in state:
            found = visit(dep, path + [node])
            if found:
                return found
    state[node] = 2
    return None
for d in folders:
    if d not in state:
        found = visit(d, [])
        if found:
            print(" -> ".join(found))
            break
PY
)
if [ -n "$cycle" ]; then
    echo "agent/ folders include each other in a loop: $cycle"
    fail=1
fi

banned='\b(strcpy|strcat|strncpy|sprintf|vsprintf|strtok|gmtime|localtime|ctime|asctime)[[:space:]]*\('
# shellcheck disable=SC2086
hits=$(grep -nE "$banned" $files | grep -v 'common/include/loadlab/banned.h')
if [ -n "$hits" ]; then
    echo "banned functions (common/include/loadlab/banned.h says what to use instead):"
    echo "$hits"
    fail=1
fi

build=${LOADLAB_BUILD_DIR:-}
if [ -z "$build" ]; then
    echo "LOADLAB_BUILD_DIR is not set: the call graph needs the object files"
    fail=1
elif ! graph=$(python3 "$src/tests/style/call_graph.py" "$build"); then
    echo "files that call each other in a loop (move what both use below both):"
    echo "$graph"
    fail=1
else
    echo "$graph"
fi

if [ $fail -eq 0 ]; then
    echo "1 passed, 0 failed: $checked files follow the layout and style rules"
else
    echo "0 passed, 1 failed"
fi
exit $fail
