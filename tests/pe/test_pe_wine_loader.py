#!/usr/bin/python3
"""The rebaser and binder against a real loader (Wine, x86_64).

A program with ten DLLs that all want 0x10000000 (dynamic base off) is
built with mingw. Each DLL exports functions that read their values
through tables of absolute pointers, and a table of absolute function
pointers, so it has base relocations; half the functions are exported
NONAME and imported by ordinal. The program calls every function directly
and through the tables, and writes to a file: each DLL's load address, the
results, and for every import of its own IAT (walked in memory) what
GetProcAddress returns.

1. as linked: the program works, and at least nine DLLs were relocated;
2. after `loadlab pe rebase --batch`: every DLL loads at its new preferred
   base, and the program works;
3. after `loadlab pe bind --path <wine dlls>`: every IAT entry in the file
   equals what GetProcAddress resolves, for every module loaded at its
   preferred base (all ten DLLs at least), and the program works;
4. after rebasing one DLL again (the binding is now stale): the program
   works and that DLL loads at its newest base.

Usage: test_pe_wine_loader.py LOADLAB GCC WINE64 WINESERVER WINE_DLL_DIR WORKDIR
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pe_testlib as t  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import wine_template  # noqa: E402

NDLLS, NFUNCS = 10, 16
SAME = ["-O1", "-Wl,--disable-dynamicbase,--disable-high-entropy-va,--disable-auto-image-base"]


def dll_source(i):
    vals = ", ".join(str(i * 1000 + j) for j in range(NFUNCS))
    ptrs = ", ".join(f"&values[{j}]" for j in range(NFUNCS))
    funcs = "\n".join(f"int f{i}_{j}(void) {{ return *pointers[{j}] + *pointers[({j} + 1) % {NFUNCS}] - values[({j} + 1) % {NFUNCS}]; }}"
                      for j in range(NFUNCS))
    table = ", ".join(f"f{i}_{j}" for j in range(NFUNCS))
    return (f"static int values[{NFUNCS}] = {{{vals}}};\n"
            f"int *const pointers[{NFUNCS}] = {{{ptrs}}};\n{funcs}\n"
            f"int (*const table{i}[{NFUNCS}])(void) = {{{table}}};\n")


def dll_def(i):
    lines = [f"LIBRARY lt{i}.dll", "EXPORTS"]
    for j in range(NFUNCS):
        lines.append(f"  f{i}_{j} @{j + 1}" + (" NONAME" if j % 2 else ""))
    lines.append(f"  table{i} @{NFUNCS + 1} DATA")
    return "\n".join(lines) + "\n"


EXE_HEAD = r"""
#include <windows.h>
#include <stdio.h>
#include <string.h>

static FILE *out;

/* Every import of this program: what the loader put in the IAT and what
 * GetProcAddress resolves, with the module's load address. */
static void walk_imports(void)
{
	BYTE *base = (BYTE *)GetModuleHandleA(NULL);
	IMAGE_NT_HEADERS *nt = (IMAGE_NT_HEADERS *)(base + ((IMAGE_DOS_HEADER *)base)->e_lfanew);
	IMAGE_DATA_DIRECTORY *d = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT];
	IMAGE_IMPORT_DESCRIPTOR *imp = (IMAGE_IMPORT_DESCRIPTOR *)(base + d->VirtualAddress);

	for (; imp->Name; imp++) {
		const char *dll = (const char *)(base + imp->Name);
		HMODULE h = GetModuleHandleA(dll);
		IMAGE_THUNK_DATA *names = (IMAGE_THUNK_DATA *)(base + imp->OriginalFirstThunk);
		IMAGE_THUNK_DATA *iat = (IMAGE_THUNK_DATA *)(base + imp->FirstThunk);

		fprintf(out, "module %s %p\n", dll, (void *)h);
		for (; names->u1.AddressOfData; names++, iat++) {
			FARPROC p;
			char what[300];

			if (IMAGE_SNAP_BY_ORDINAL(names->u1.Ordinal)) {
				WORD ord = (WORD)IMAGE_ORDINAL(names->u1.Ordinal);
				p = GetProcAddress(h, MAKEINTRESOURCEA(ord));
				snprintf(what, sizeof(what), "#%u", ord);
			} else {
				IMAGE_IMPORT_BY_NAME *n = (IMAGE_IMPORT_BY_NAME *)(base + names->u1.AddressOfData);
				p = GetProcAddress(h, (const char *)n->Name);
				snprintf(what, sizeof(what), "%s", (const char *)n->Name);
			}
			fprintf(out, "import %s %s %p %p\n", dll, what, (void *)p, (void *)iat->u1.Function);
		}
	}
}
"""


def exe_source():
    decls, calls = [], []
    for i in range(NDLLS):
        decls.append(f"extern int (*const table{i}[{NFUNCS}])(void);")
        for j in range(NFUNCS):
            decls.append(f"int f{i}_{j}(void);")
            calls.append(f"\tcheck(f{i}_{j}(), table{i}[{j}](), {i * 1000 + j});")
    mods = "\n".join(f'\tfprintf(out, "base lt{i}.dll %p\\n", (void *)GetModuleHandleA("lt{i}.dll"));'
                     for i in range(NDLLS))
    return (EXE_HEAD + "\n".join(decls) + r"""
static int good, bad;
static void check(int direct, int via_table, int want)
{
	if (direct == want && via_table == want)
		good++;
	else
		bad++, fprintf(out, "wrong %d %d want %d\n", direct, via_table, want);
}

int main(int argc, char **argv)
{
	if (argc < 2 || !(out = fopen(argv[1], "w")))
		return 2;
""" + mods + "\n" + "\n".join(calls) + r"""
	walk_imports();
	fprintf(out, "calls %d good %d bad\n", good, bad);
	fclose(out);
	return bad ? 1 : 0;
}
""")


class Wine:
    """A private prefix and a wineserver this test starts and stops by PID."""

    def __init__(self, wine64, wineserver, work):
        self.wine64 = wine64
        self.wineserver = wineserver
        self.env = dict(os.environ, WINEPREFIX=os.path.join(work, "prefix"), **wine_template.ENV)
        os.makedirs(self.env["WINEPREFIX"], exist_ok=True)
        copied = wine_template.copy_to(self.env["WINEPREFIX"])
        self.server = subprocess.Popen([wineserver, "-f", "-p"], env=self.env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not copied:
            subprocess.run([wine64, "wineboot", "-i"], env=self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)

    def run(self, exe, out):
        if os.path.exists(out):
            os.unlink(out)
        r = subprocess.run([self.wine64, exe, out], env=self.env, cwd=os.path.dirname(exe),
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=120)
        text = open(out).read() if os.path.exists(out) else ""
        return r.returncode, text

    def stop(self):
        # `wineserver -k` ends this prefix's Wine processes (services,
        # winedevice, ...), which outlive a server that is merely
        # terminated; then our server, by its PID, exits.
        subprocess.run([self.wineserver, "-k"], env=self.env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        try:
            self.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.server.terminate()
            try:
                self.server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()


def parse(text):
    bases, modules, imports, summary = {}, {}, [], None
    for line in text.splitlines():
        w = line.split()
        if w[0] == "base":
            bases[w[1].lower()] = int(w[2], 16)
        elif w[0] == "module":
            modules[w[1].lower()] = int(w[2], 16)
        elif w[0] == "import":
            imports.append((w[1].lower(), w[2], int(w[3], 16), int(w[4], 16)))
        elif w[0] == "calls":
            summary = (int(w[1]), int(w[3]))
    return bases, modules, imports, summary


def works(rc, text, failures, stage):
    summary = parse(text)[3]
    if rc != 0 or summary != (NDLLS * NFUNCS, 0):
        failures.append(f"{stage}: program exit {rc}, calls/bad {summary}")
        return False
    return True


def main():
    loadlab, gcc, wine64, wineserver, wine_dlls, work = sys.argv[1:7]
    t.need(loadlab, "loadlab")
    t.need(gcc, "x86_64-w64-mingw32-gcc")
    t.need(wine64, "wine64")
    t.need(wineserver, "wineserver")
    shutil.rmtree(work, ignore_errors=True)
    src = os.path.join(work, "src")
    os.makedirs(src)
    for i in range(NDLLS):
        with open(os.path.join(src, f"lt{i}.c"), "w") as f:
            f.write(dll_source(i))
        with open(os.path.join(src, f"lt{i}.def"), "w") as f:
            f.write(dll_def(i))
        t.run([gcc, "-shared", "-o", os.path.join(src, f"lt{i}.dll"), os.path.join(src, f"lt{i}.c"),
               os.path.join(src, f"lt{i}.def"), "-Wl,--image-base=0x10000000,--enable-reloc-section",
               f"-Wl,--out-implib,{os.path.join(src, f'liblt{i}.a')}"] + SAME)
    with open(os.path.join(src, "prog.c"), "w") as f:
        f.write(exe_source())
    t.run([gcc, "-o", os.path.join(src, "prog.exe"), os.path.join(src, "prog.c")] +
          [os.path.join(src, f"liblt{i}.a") for i in range(NDLLS)] + SAME)
    dlls = [f"lt{i}.dll" for i in range(NDLLS)]

    def stage(name):
        d = os.path.join(work, name)
        os.makedirs(d)
        for n in dlls + ["prog.exe"]:
            shutil.copy(os.path.join(src, n), d)
        return d

    failures = []
    for n in dlls:
        j = t.dump(loadlab, os.path.join(src, n))
        if j["image_base"] != "0x10000000" or j["relocations"]["types"].get("DIR64", 0) < 2 * NFUNCS:
            failures.append(f"{n}: base {j['image_base']}, relocations {j['relocations']}")

    wine = Wine(wine64, wineserver, work)
    try:
        # 1. As linked: all at 0x10000000, the loader relocates nine.
        d = stage("same")
        rc, text = wine.run(os.path.join(d, "prog.exe"), os.path.join(d, "out.txt"))
        if works(rc, text, failures, "as linked"):
            bases = parse(text)[0]
            moved = sum(1 for n in dlls if bases.get(n) != 0x10000000)
            if moved < NDLLS - 1:
                failures.append(f"as linked: only {moved} DLLs relocated: {bases}")
            print(f"as linked: works, {moved} of {NDLLS} DLLs relocated by the loader")

        # 2. Rebased: each DLL at its new preferred base.
        d = stage("rebased")
        t.run([loadlab, "pe", "rebase", "--batch", "0x60000000"] + [os.path.join(d, n) for n in dlls])
        preferred = {n: int(t.dump(loadlab, os.path.join(d, n))["image_base"], 16) for n in dlls}
        rc, text = wine.run(os.path.join(d, "prog.exe"), os.path.join(d, "out.txt"))
        if works(rc, text, failures, "rebased"):
            bases = parse(text)[0]
            wrong = {n: hex(bases.get(n, 0)) for n in dlls if bases.get(n) != preferred[n]}
            if wrong:
                failures.append(f"rebased: DLLs not at their new preferred bases: {wrong}")
            else:
                print(f"rebased: works, all {NDLLS} DLLs at their new bases "
                      f"{hex(min(preferred.values()))}..{hex(max(preferred.values()))}")

        # 3. Bound: the file's IAT equals what the loader resolves.
        out = t.run([loadlab, "pe", "bind", "--path", wine_dlls, os.path.join(d, "prog.exe")])
        image = t.dump(loadlab, os.path.join(d, "prog.exe"))
        file_iat = {}
        for m in image["imports"]:
            for fn in m["functions"]:
                key = fn.get("name") or f"#{fn['ordinal']}"
                file_iat[(m["dll"].lower(), key)] = (int(fn["iat_value"], 16), m["timestamp"])
        rc, text = wine.run(os.path.join(d, "prog.exe"), os.path.join(d, "out.txt"))
        compared, skipped = 0, set()
        if works(rc, text, failures, "bound"):
            bases, modules, imports, _ = parse(text)
            pref = {}
            for dll in modules:
                path = os.path.join(d, dll) if os.path.exists(os.path.join(d, dll)) else os.path.join(wine_dlls, dll)
                pref[dll] = int(t.dump(loadlab, path)["image_base"], 16) if os.path.exists(path) else None
            for dll, what, resolved, loader_iat in imports:
                value, ts = file_iat[(dll, what)]
                if modules[dll] != pref[dll]:
                    skipped.add(dll)
                    continue
                if ts != 0xffffffff or value != resolved:
                    failures.append(f"bound: {dll}!{what}: file IAT {value:#x} (descriptor {ts:#x}), "
                                    f"GetProcAddress {resolved:#x}")
                compared += 1
            ours = sum(1 for dll, *_ in imports if dll.startswith("lt"))
            if ours != NDLLS * (NFUNCS + 1) or any(n in skipped for n in dlls):
                failures.append(f"bound: our DLLs' imports not all compared ({ours}, skipped {skipped})")
            print(f"bound ({out.strip()}): {compared} IAT entries equal GetProcAddress; "
                  f"modules not at their preferred base, not compared: {sorted(skipped) or 'none'}")

        # 4. Stale: lt3.dll rebased after binding.
        t.run([loadlab, "pe", "rebase", "--base", "0x70000000", os.path.join(d, "lt3.dll")])
        rc, text = wine.run(os.path.join(d, "prog.exe"), os.path.join(d, "out.txt"))
        if works(rc, text, failures, "stale binding"):
            bases = parse(text)[0]
            if bases.get("lt3.dll") != 0x70000000:
                failures.append(f"stale binding: lt3.dll at {bases.get('lt3.dll', 0):#x}")
            bound = {b["dll"].lower(): b["timestamp"] for b in image["bound_imports"]}
            if bound.get("lt3.dll") == t.dump(loadlab, os.path.join(d, "lt3.dll"))["timestamp"]:
                failures.append("stale binding: lt3.dll's timestamp did not change")
            print("stale binding: works, lt3.dll at 0x70000000")
    finally:
        wine.stop()
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
