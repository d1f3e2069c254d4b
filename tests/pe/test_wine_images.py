#!/usr/bin/python3
"""Every PE file of the wine64 package is read without error by
`loadlab pe dump --json`, and its import and export lists agree with
`x86_64-w64-mingw32-objdump -p`.

Usage: test_wine_images.py LOADLAB OBJDUMP [--only LIST] DIR...
With --only, the images named in the file LIST (one NAME a line, as
DIR's last folder/NAME; # starts a comment) and no other: the sanitizer
build's copy reads wine_images_sanitize.txt, the few images that reach
every line of our code the whole set reaches (gcov; the list's header
says how it was made), since ASan's start-up alone costs about 0.1 s of
CPU a process. Every image it names must exist.
Imports compared: per DLL (in order), each function's name and hint, or
its ordinal. Exports compared: every non-empty slot's ordinal and RVA (or
forwarder string), and the name pointer table (name -> ordinal).
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys


def parse_objdump(text):
    imports, exports, names, forwarders = [], {}, {}, {}
    base = None
    section = None
    for line in text.splitlines():
        if line.startswith("The Import Tables"):
            section = "imports"
            continue
        if line.startswith("There is an export table") or line.startswith("The Export Tables"):
            section = "exports"
            continue
        m = re.match(r"^Export Address Table -- Ordinal Base (\d+)", line)
        if m:
            base = int(m.group(1))
            section = "eat"
            continue
        if line.startswith("[Ordinal/Name Pointer] Table"):
            section = "names"
            continue
        if section == "imports":
            m = re.match(r"^\tDLL Name: (.*)$", line)
            if m:
                imports.append({"dll": m.group(1), "functions": []})
                continue
            if line.startswith("\tvma:") or not imports:
                continue
            m = re.match(r"^\t([0-9a-f]+)\t\s+([0-9a-f]+)\s+<none>\s*$", line)
            if m:
                imports[-1]["functions"].append(("ordinal", int(m.group(2), 16)))
                continue
            m = re.match(r"^\t([0-9a-f]+)\t\s+(\d+)\s+(\S+)", line)
            if m:
                imports[-1]["functions"].append(("name", m.group(3), int(m.group(2))))
                continue
            if line.strip() == "" or line.startswith(" "):
                continue
            section = None
        elif section == "eat":
            m = re.match(r"^\t\[\s*(\d+)\] \+base\[\s*(\d+)\] ([0-9a-f]+) (Export|Forwarder) RVA(?: -- (.*))?$", line)
            if m:
                ordinal, rva = int(m.group(2)), int(m.group(3), 16)
                if rva:
                    exports[ordinal] = rva
                if m.group(4) == "Forwarder":
                    forwarders[ordinal] = m.group(5)
            elif line.strip():
                section = None
        elif section == "names":
            m = re.match(r"^\t\[\s*(\d+)\] (.*)$", line)
            if m:
                names.setdefault(m.group(2), int(m.group(1)) + (base or 0))
            elif line.strip():
                section = None
    return imports, exports, names, forwarders


def ours(dump):
    imports = []
    for m in dump["imports"]:
        fns = []
        for f in m["functions"]:
            if "ordinal" in f:
                fns.append(("ordinal", f["ordinal"]))
            elif "name" in f:
                fns.append(("name", f["name"], f["hint"]))
            else:
                fns.append(("bound",))
        imports.append({"dll": m["dll"], "functions": fns})
    exports, forwarders, names = {}, {}, {}
    for e in dump["exports"]["functions"]:
        exports[e["ordinal"]] = e["rva"]
        if "forwarder" in e:
            forwarders[e["ordinal"]] = e["forwarder"]
    # The name pointer table: each name to the ordinal of its slot.
    for n in dump["exports"]["names"]:
        names.setdefault(n["name"], n["ordinal"])
    return imports, exports, names, forwarders


def check(loadlab, objdump, path):
    r = subprocess.run([loadlab, "pe", "dump", "--json", path], capture_output=True, text=True)
    if r.returncode != 0:
        return f"{path}: loadlab failed ({r.returncode}): {r.stderr.strip()}"
    dump = json.loads(r.stdout)
    o = subprocess.run([objdump, "-p", path], capture_output=True, text=True, errors="replace")
    if o.returncode != 0:
        return f"{path}: objdump failed: {o.stderr.strip()}"
    want_imp, want_exp, want_names, want_fwd = parse_objdump(o.stdout)
    got_imp, got_exp, got_names, got_fwd = ours(dump)
    problems = []
    if [m["dll"] for m in got_imp] != [m["dll"] for m in want_imp]:
        problems.append(f"import DLLs differ: {[m['dll'] for m in got_imp]} vs {[m['dll'] for m in want_imp]}")
    else:
        for g, w in zip(got_imp, want_imp):
            if g["functions"] != w["functions"]:
                diff = [(a, b) for a, b in zip(g["functions"], w["functions"]) if a != b][:3]
                problems.append(f"imports of {g['dll']} differ ({len(g['functions'])} vs {len(w['functions'])}): {diff}")
    if got_exp != want_exp:
        keys = sorted(set(got_exp) ^ set(want_exp))[:5]
        problems.append(f"export slots differ (ours {len(got_exp)}, objdump {len(want_exp)}; e.g. {keys})")
    if got_fwd != want_fwd:
        problems.append("export forwarders differ")
    if got_names != want_names:
        diff = [(n, got_names.get(n), want_names.get(n)) for n in set(got_names) | set(want_names)
                if got_names.get(n) != want_names.get(n)][:3]
        problems.append(f"export names differ: {diff}")
    if problems:
        return f"{path}: " + "; ".join(problems)
    counts = (len(got_imp), sum(len(m["functions"]) for m in got_imp), len(got_exp))
    return counts


def main():
    loadlab, objdump, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    only = None
    if dirs[:1] == ["--only"]:
        with open(dirs[1]) as f:
            only = [line.split("#", 1)[0].strip() for line in f]
        only = [name for name in only if name]
        dirs = dirs[2:]
    files = []
    for d in dirs:
        if not os.path.isdir(d):
            print(f"missing folder {d} (package wine64)")
            return 1
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if os.path.isfile(p) and (only is None or os.path.join(os.path.basename(d), name) in only):
                files.append(p)
    if only is not None:
        found = {os.path.join(os.path.basename(os.path.dirname(p)), os.path.basename(p)) for p in files}
        missing = sorted(set(only) - found)
        if missing:
            print(f"FAIL images of the list missing (another wine64?): {missing}")
            return 1
    failures, modules, functions, exports = [], 0, 0, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for result in pool.map(lambda p: check(loadlab, objdump, p), files):
            if isinstance(result, str):
                failures.append(result)
            else:
                modules += result[0]
                functions += result[1]
                exports += result[2]
    for f in failures[:30]:
        print("FAIL", f)
    print(f"{len(files)} images, {len(failures)} failures; compared {modules} import descriptors, "
          f"{functions} imported functions, {exports} export slots")
    if only is None and len(files) < 100:
        print("expected hundreds of images")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
