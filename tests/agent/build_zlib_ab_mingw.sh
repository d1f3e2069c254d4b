#!/bin/sh
# build_zlib_ab_mingw.sh OUTDIR - two builds of one real program that
# differ by a startup cost, for test_program_ab.py: zlib's test program
# test/example.c from Debian's source package (`apt-get source zlib`, as
# build_zlib_mingw.sh fetches it), cross-built with mingw-w64 at -O3 twice:
#   OUTDIR/static/example.exe     zlib's objects linked into the exe
#   OUTDIR/dll/example.exe        linked against zlib1.dll, beside it in
#   OUTDIR/dll/zlib1.dll          OUTDIR/dll (win32/Makefile.gcc's recipe)
# The second build loads one DLL more at startup (mapped, relocated where
# its base is taken, its imports resolved): the startup cost the A/B job
# must find. Cached: an OUTDIR that holds the three files is left as it
# is. Exit 0 when built.
set -eu
out=$1
cc=${CC_MINGW:-x86_64-w64-mingw32-gcc}
. "$(dirname "$0")/zlib_source.sh"
zlib_start loadlab-zlib-ab "$out/static/example.exe" "$out/dll/example.exe" "$out/dll/zlib1.dll"
mkdir -p "$out/static" "$out/dll"
zlib_objects "$work" "$src" -O3 -Wall
zlib_dll "$out/dll"
(cd "$out/dll" && "$cc" -O3 -Wall -I"$src" -o example.exe "$src/test/example.c" "$work/libz.dll.a")
# shellcheck disable=SC2086
(cd "$out/static" && "$cc" -O3 -Wall -I"$src" -o example.exe "$src/test/example.c" $zlib_objs)
test -f "$out/static/example.exe" && test -f "$out/dll/example.exe"
