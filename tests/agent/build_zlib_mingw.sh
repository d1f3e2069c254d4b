#!/bin/sh
# build_zlib_mingw.sh OUTDIR - a real Windows program this project did not
# write and that ships a DLL under a name Wine also ships a builtin of, for
# test_program_zlib.py: zlib from Debian's source package (`apt-get source
# zlib`), cross-built with mingw-w64 into OUTDIR/bin/zlib1.dll and the two
# test programs that import it, OUTDIR/bin/example_d.exe and
# OUTDIR/bin/minigzip_d.exe.
#
# Upstream builds these with win32/Makefile.gcc, which Debian's .dfsg
# tarball leaves out (no win32/ folder at all), so its recipe is done
# here: the library's objects linked -shared into zlib1.dll (no zlib.def
# either: GNU ld exports every symbol of a DLL without dllexport), and
# test/example.c and test/minigzip.c linked against its import library,
# at -O3 as Makefile.gcc does. Linked, as there, under its bare name, the
# DLL gets ld's automatic image base for that name, 0x241b90000 with
# Debian 12's binutils: the base of Wine 8's own zlib1.dll, so a check of
# bases alone cannot tell the two apart (docs/program-family.md).
#
# The source and the library's objects come from zlib_source.sh (each
# version apt-cache lists is tried in turn). Cached: an OUTDIR that already holds
# the three files is left as it is. Exit 0 when built.
set -eu
out=$1
cc=${CC_MINGW:-x86_64-w64-mingw32-gcc}
. "$(dirname "$0")/zlib_source.sh"
zlib_start loadlab-zlib "$out/bin/zlib1.dll" "$out/bin/example_d.exe" "$out/bin/minigzip_d.exe"
mkdir -p "$out/bin"
zlib_objects "$work" "$src" -O3 -Wall
zlib_dll "$out/bin"
for p in example minigzip; do
	(cd "$out/bin" && "$cc" -O3 -Wall -I"$src" -o "${p}_d.exe" "$src/test/$p.c" "$work/libz.dll.a")
done
test -f "$out/bin/example_d.exe" && test -f "$out/bin/minigzip_d.exe"
