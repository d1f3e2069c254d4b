#!/usr/bin/python3
"""A lab machine without a compiler, made of this one (issue 25): run as

    unshare -m --propagation private python3 no_compiler_ns.py SCRATCH -- CMD ARGS...

(root only) it hides, in its own mount namespace and nowhere else, every
compiler, assembler and linker the host has, then execs CMD:

- /usr/bin and /usr/local/bin (so also /bin, and Wine's Z:\\usr\\bin, which
  the Windows agent's facts and its host-compiler fallback look in) become
  an empty tmpfs of symbolic links, one per entry of the real folder
  (bound under SCRATCH), except the names hidden() picks: gcc, cc, as, ld,
  clang*, every *-w64-mingw32-*, nvcc, ...;
- the folders of the compilers' own programs and libraries (/usr/lib/gcc,
  /usr/lib/llvm-*, /usr/*-w64-mingw32) become an empty tmpfs.

Nothing is deleted: the namespace ends with its last process.

command(scratch, cmd) gives the command line to start CMD so.
"""
import ctypes
import glob
import os
import re
import sys

UNSHARE = "/usr/bin/unshare"
PYTHON = "/usr/bin/python3"
BIN_DIRS = ["/usr/bin", "/usr/local/bin"]
TOOL_DIRS = ["/usr/lib/gcc", "/usr/lib/gcc-cross", "/usr/x86_64-w64-mingw32", "/usr/i686-w64-mingw32"]
# By file name once a target prefix (x86_64-linux-gnu-) and a version
# suffix (-12, -12-posix) are cut.
TOOLS = {"gcc", "g++", "cc", "c89", "c99", "c++", "cpp", "cc1", "cc1plus", "collect2", "as", "ld",
         "ld.bfd", "ld.gold", "ld.lld", "lld", "lld-link", "clang", "clang++", "clang-cl", "cl", "tcc",
         "windres", "dlltool", "gfortran", "nvcc", "ptxas", "nvlink", "fatbinary", "cudafe++", "gcc-ar",
         "gcc-nm", "gcc-ranlib", "x86_64-linux-gnu-gcc"}
MS_BIND, MS_REC = 4096, 16384


def hidden(name):
    """Whether the program NAME is a compiler, assembler or linker."""
    base = name.lower()
    if any(part in base for part in ("mingw", "-w64-", "gcc", "clang", "lld")) or base.startswith(("llvm-", "ld.")):
        return True
    base = re.sub(r"^[a-z0-9_]+-(linux-gnu|pc-linux-gnu)-", "", base)
    base = re.sub(r"-\d+(\.\d+)*(-win32|-posix)?$", "", base)
    return base in TOOLS


def command(scratch, cmd):
    """The command line that runs CMD (a list) with no compiler reachable;
    SCRATCH: an empty folder of the caller's for the real folders' mounts."""
    assert os.geteuid() == 0, "FAIL: a mount namespace needs root"
    return [UNSHARE, "-m", "--propagation", "private", PYTHON, "-B", os.path.abspath(__file__), scratch,
            "--"] + cmd


def mount(libc, source, target, fstype, flags):
    if libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags, None) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, "mount %s on %s: %s" % (source, target, os.strerror(errno)))


def main(argv):
    scratch, cmd = argv[1], argv[argv.index("--") + 1:]
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    for folder in [d for pattern in TOOL_DIRS + ["/usr/lib/llvm-*"] for d in glob.glob(pattern)]:
        mount(libc, "tmpfs", folder, "tmpfs", 0)
    for i, folder in enumerate(BIN_DIRS):
        if not os.path.isdir(folder):
            continue
        real = os.path.join(scratch, "real-%d" % i)
        os.makedirs(real, exist_ok=True)
        mount(libc, folder, real, None, MS_BIND | MS_REC)
        mount(libc, "tmpfs", folder, "tmpfs", 0)
        for name in os.listdir(real):
            if not hidden(name):
                os.symlink(os.path.join(real, name), os.path.join(folder, name))
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv)
