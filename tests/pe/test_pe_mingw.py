#!/usr/bin/python3
"""The PE toolkit on mingw-built images, PE32 (i686) and PE32+ (x86_64),
without running them:

- ld's checksum equals ours for every built image;
- imports and exports agree with objdump -p (test_wine_images.check);
- a DLL linked at 0x10000000 and rebased by `loadlab pe rebase` to
  0x20000000 is byte-identical to the same DLL linked at 0x20000000 but for
  TimeDateStamp and CheckSum: every relocation applied as the linker would;
- batch rebasing gives each DLL its own 64 KiB-aligned base;
- an executable without relocations is refused (exit 2, one line);
- binding an executable writes into its IAT the DLL's base plus the RVA
  objdump lists for each export, by name and by ordinal, and names the DLL
  in the bound import directory.

Usage: test_pe_mingw.py LOADLAB OBJDUMP GCC_X86_64 GCC_I686 WORKDIR
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pe_testlib as t  # noqa: E402
import test_wine_images  # noqa: E402

DLL_C = r"""
static int values[8] = {11, 22, 33, 44, 55, 66, 77, 88};
int *const pointers[8] = {&values[0], &values[1], &values[2], &values[3],
                          &values[4], &values[5], &values[6], &values[7]};
int get(int i) { return *pointers[i & 7]; }
int twice(int i) { return 2 * get(i); }
int (*const table[2])(int) = {get, twice};
"""
DLL_DEF = "EXPORTS\n  get @1\n  twice @2 NONAME\n  table @3 DATA\n  pointers @4 DATA\n"
EXE_C = r"""
int get(int); int twice(int);
int main(void) { return get(1) + twice(2) == 22 + 66 ? 0 : 1; }
"""
COMMON = ["-Wl,--disable-dynamicbase,--disable-auto-image-base", "-Wl,--no-insert-timestamp", "-s", "-O1"]
FLAGS = {"x86_64": COMMON + ["-Wl,--disable-high-entropy-va"], "i686": COMMON}


def build(gcc, work, arch):
    FIXED = FLAGS[arch]
    d = os.path.join(work, arch)
    os.makedirs(d)
    for name, text in (("m.c", DLL_C), ("m.def", DLL_DEF), ("e.c", EXE_C)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    # The same DLL linked at two bases (same file name: the name is in its
    # export directory).
    for base in ("0x20000000", "0x10000000"):
        sub = os.path.join(d, base)
        os.makedirs(sub)
        t.run([gcc, "-shared", "-o", os.path.join(sub, "m.dll"), os.path.join(d, "m.c"),
               os.path.join(d, "m.def"), f"-Wl,--image-base={base},--enable-reloc-section",
               f"-Wl,--out-implib,{os.path.join(d, 'libm.a')}"] + FIXED)
        shutil.copy(os.path.join(sub, "m.dll"), os.path.join(d, f"m_{base}.dll"))
    shutil.copy(os.path.join(d, "m_0x10000000.dll"), os.path.join(d, "m.dll"))
    t.run([gcc, "-o", os.path.join(d, "e.exe"), os.path.join(d, "e.c"), os.path.join(d, "libm.a"),
           "-Wl,--disable-reloc-section"] + FIXED)
    return d


def main():
    loadlab, objdump, gcc64, gcc32, work = sys.argv[1:6]
    for tool, what in ((loadlab, "loadlab"), (objdump, "x86_64-w64-mingw32-objdump"),
                       (gcc64, "x86_64-w64-mingw32-gcc"), (gcc32, "i686-w64-mingw32-gcc")):
        t.need(tool, what)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []
    for arch, gcc in (("x86_64", gcc64), ("i686", gcc32)):
        d = build(gcc, work, arch)
        images = [os.path.join(d, n) for n in ("m.dll", "m_0x20000000.dll", "e.exe")]
        for p in images:
            j = t.dump(loadlab, p)
            if j["checksum"] != j["checksum_computed"] or j["checksum"] == 0:
                failures.append(f"{p}: ld's checksum {j['checksum']:#x}, ours {j['checksum_computed']:#x}")
            r = test_wine_images.check(loadlab, objdump, p)
            if isinstance(r, str):
                failures.append(r)
        j = t.dump(loadlab, images[0])
        if j["format"] != ("PE32+" if arch == "x86_64" else "PE32") or j["relocations"]["count"] < 8:
            failures.append(f"{arch}: unexpected format or too few relocations: {j['format']} {j['relocations']}")

        # Rebase equals relinking at the new base.
        rebased = os.path.join(d, "rebased.dll")
        shutil.copy(images[0], rebased)
        out = t.run([loadlab, "pe", "rebase", "--base", "0x20000000", rebased])
        if "0x10000000 -> 0x20000000" not in out:
            failures.append(f"{arch}: rebase said {out!r}")
        a = open(rebased, "rb").read()
        b = open(images[1], "rb").read()
        if t.mask_header(a, 0) != t.mask_header(b, 0):
            diff = [i for i in range(min(len(a), len(b))) if a[i] != b[i]][:8]
            failures.append(f"{arch}: rebased DLL differs from the one linked at 0x20000000 at {diff}")
        j = t.dump(loadlab, rebased)
        if j["checksum"] != j["checksum_computed"] or j["image_base"] != "0x20000000":
            failures.append(f"{arch}: rebased header wrong: {j['image_base']} {j['checksum']:#x}")

        # Batch: three copies, top-down from 0x70000000.
        copies = []
        for i in range(3):
            c = os.path.join(d, f"batch{i}.dll")
            shutil.copy(images[0], c)
            copies.append(c)
        t.run([loadlab, "pe", "rebase", "--batch", "0x70000000", "--down"] + copies)
        spans = []
        for c in copies:
            j = t.dump(loadlab, c)
            base = int(j["image_base"], 16)
            spans.append((base, base + j["size_of_image"]))
            if base % 0x10000 or base + j["size_of_image"] > 0x70000000:
                failures.append(f"{arch}: batch base {base:#x} not aligned or above the top")
        spans.sort()
        if any(spans[i][1] > spans[i + 1][0] for i in range(len(spans) - 1)):
            failures.append(f"{arch}: batch bases overlap: {spans}")

        # An executable without relocations cannot be rebased.
        exe_copy = os.path.join(d, "e_copy.exe")
        shutil.copy(images[2], exe_copy)
        before = open(exe_copy, "rb").read()
        r = subprocess.run([loadlab, "pe", "rebase", "--base", "0x20000000", exe_copy], capture_output=True, text=True)
        if r.returncode != 2 or "stripped" not in r.stderr or len(r.stderr.strip().splitlines()) != 1 \
                or open(exe_copy, "rb").read() != before:
            failures.append(f"{arch}: rebasing a relocation-less exe: rc {r.returncode}, {r.stderr!r}")
        # A malformed image: exit 2 and one line.
        bad = os.path.join(d, "bad.dll")
        with open(bad, "wb") as f:
            f.write(open(images[0], "rb").read()[:300])
        r = subprocess.run([loadlab, "pe", "dump", bad], capture_output=True, text=True)
        if r.returncode != 2 or len(r.stderr.strip().splitlines()) != 1:
            failures.append(f"{arch}: truncated image: rc {r.returncode}, {r.stderr!r}")

        # Bind: against m.dll in the exe's folder (system DLLs not given,
        # so their descriptors stay unbound).
        bound = os.path.join(d, "e.exe")
        out = t.run([loadlab, "pe", "bind", bound])
        j = t.dump(loadlab, bound)
        dll = t.dump(loadlab, images[0])
        base = int(dll["image_base"], 16)
        want_exp = test_wine_images.parse_objdump(t.run([objdump, "-p", images[0]]))[1]
        names = {n["name"]: n["ordinal"] for n in dll["exports"]["names"]}
        m = [x for x in j["imports"] if x["dll"].lower() == "m.dll"]
        if not m or m[0]["timestamp"] != 0xffffffff:
            failures.append(f"{arch}: m.dll descriptor not bound: {out}")
        else:
            seen_ordinal = False
            for fn in m[0]["functions"]:
                ordinal = fn["ordinal"] if "ordinal" in fn else names[fn["name"]]
                seen_ordinal |= "ordinal" in fn
                if int(fn["iat_value"], 16) != base + want_exp[ordinal]:
                    failures.append(f"{arch}: IAT of {fn} is {fn['iat_value']}, want {base + want_exp[ordinal]:#x}")
            if not seen_ordinal:
                failures.append(f"{arch}: no import by ordinal (NONAME) to check")
        if [b["dll"].lower() for b in j["bound_imports"]] != ["m.dll"] or j["checksum"] != j["checksum_computed"]:
            failures.append(f"{arch}: bound import directory {j['bound_imports']}")
        print(f"{arch}: checked checksum, objdump agreement, rebase, batch, refusal, bind")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
