#!/usr/bin/env python3
"""The file-level call graph of the C programs, from their object files,
and its loops.

A file A calls a file B when A's object file leaves a symbol undefined
(nm --undefined-only) that B's object file defines (nm --defined-only):
a call, or a table that names a function or data of B. Two files that
reach each other that way, directly or through others, are one loop: a
driver and its stages calling each other, which STYLE.md asks to undo by
moving what both use below both. Includes cannot show it (a file may
declare what it calls).

The graph is made per program, from the objects that are linked into it:
loadlabd (server/ and common/), loadlab-agent (agent/ and common/) and
loadlab (cli/, rest_client/ and common/), so that a name defined in two
programs (each program's main) is resolved in the one it is linked into.

Usage: call_graph.py BUILD_DIR [--print]
Prints every loop as the files in it and one cycle through them; exits 1
when there is one (no loop is allowed), 2 when the objects are missing
(build first). --print also prints every file's callees.
"""
import os
import subprocess
import sys

# The objects of each program: (build subfolder, target) pairs, and the
# source folder their paths are relative to.
PROGRAMS = {
    "loadlabd": [("server", "loadlab_server"), ("server", "loadlabd"), ("common", "loadlab_common")],
    "loadlab-agent": [("agent", "loadlab_agent_core"), ("agent", "loadlab-agent"),
                      ("common", "loadlab_common")],
    "loadlab": [("cli", "loadlab_cli"), ("cli", "loadlab"), ("rest_client", "loadlab_rest_client"), ("common", "loadlab_common")],
}


def objects(build, part, target):
    """(source path, object path) of TARGET's objects, source relative to the
    tree: the objects its link line names (link.txt), not every object left
    in the folder (a moved file's old object stays there)."""
    top = os.path.join(build, part, "CMakeFiles", target + ".dir")
    try:
        words = open(os.path.join(top, "link.txt")).read().split()
    except OSError:
        return []
    prefix = "CMakeFiles/" + target + ".dir/"
    found = []
    for word in words:
        if word.startswith(prefix) and word.endswith(".c.o"):
            rel = word[len(prefix): -len(".o")]
            # Generated sources (the embedded dashboard, programs) sit in
            # the build tree; cmake names them by their path there.
            rel = rel.replace("__/", "../")
            found.append((os.path.normpath(os.path.join(part, rel)), os.path.join(build, part, word)))
    return found


_symbols = {}


def load_symbols(paths):
    """Reads the global symbols of every object of PATHS not read yet, with
    one nm for them all: {path: (defined, undefined)}."""
    todo = [p for p in paths if p not in _symbols]
    for p in todo:
        _symbols[p] = (set(), set())
    if not todo:
        return
    out = subprocess.run(["nm", "-P", "-A"] + todo, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        where, _, rest = line.partition(": ")
        fields = rest.split()
        if where not in _symbols or len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        defined, undefined = _symbols[where]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper() and kind != "N":
            defined.add(name)


def symbols(path):
    """(defined, undefined) global symbol names of object PATH."""
    load_symbols([path])
    return _symbols[path]


def graph(build, members):
    files = []
    for part, target in members:
        files += objects(build, part, target)
    owner, needs = {}, {}
    load_symbols([path for _, path in files])
    for source, path in files:
        defined, undefined = symbols(path)
        needs[source] = undefined
        for name in defined:
            owner.setdefault(name, source)
    edges = {source: set() for source, _ in files}
    for source, undefined in needs.items():
        for name in undefined:
            callee = owner.get(name)
            if callee and callee != source:
                edges[source].add(callee)
    return edges


def loops(edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(edges[node]):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def cycle(edges, component):
    """One cycle through the first file of COMPONENT, inside it (BFS back to it)."""
    start, inside = component[0], set(component)
    previous, queue = {start: None}, [start]
    while queue:
        node = queue.pop(0)
        for dep in sorted(edges[node]):
            if dep == start:
                path = [node]
                while previous[path[-1]] is not None:
                    path.append(previous[path[-1]])
                return list(reversed(path)) + [start]
            if dep in inside and dep not in previous:
                previous[dep] = node
                queue.append(dep)
    return component


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    build = sys.argv[1]
    printing = "--print" in sys.argv[2:]
    seen, failed, programs = set(), False, 0
    for program, members in PROGRAMS.items():
        edges = graph(build, members)
        if not edges:
            continue
        programs += 1
        if printing:
            for source in sorted(edges):
                print(f"{program}: {source} -> {' '.join(sorted(edges[source])) or '-'}")
        for component in loops(edges):
            key = tuple(component)
            if key in seen:
                continue
            seen.add(key)
            failed = True
            print(f"loop of {len(component)} files: "
                  f"{' -> '.join(cycle(edges, component))}")
            print(f"  in it: {' '.join(component)}")
    if programs == 0:
        print(f"no object files under {build} (build first)")
        return 2
    if not failed:
        print(f"no loop of files in the call graphs of {programs} programs")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
