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
if [ -f "$out/static/example.exe" ] && [ -f "$out/dll/example.exe" ] && [ -f "$out/dll/zlib1.dll" ]; then
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/loadlab-zlib-ab-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! (cd "$work" && apt-get source --download-only zlib >"$work/apt.log" 2>&1); then
	for version in $(apt-cache showsrc zlib | sed -n 's/^Version: //p' | sort -u); do
		(cd "$work" && apt-get source --download-only "zlib=$version" >>"$work/apt.log" 2>&1) && break
	done
fi
orig=$(ls "$work"/zlib_*.orig.tar.* 2>/dev/null | head -n 1)
if [ -z "$orig" ]; then
	echo "$0: apt-get source zlib failed (is there a deb-src entry?):" >&2
	tail -n 5 "$work/apt.log" >&2
	exit 1
fi
mkdir "$work/src"
tar -xf "$orig" -C "$work/src" --strip-components=1
src="$work/src"
mkdir -p "$out/static" "$out/dll"
objs=""
for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate inftrees \
	trees uncompr zutil; do
	"$cc" -O3 -Wall -c -o "$work/$f.o" "$src/$f.c"
	objs="$objs $work/$f.o"
done
# shellcheck disable=SC2086
(cd "$out/dll" && "$cc" -O3 -Wall -shared -Wl,--out-implib,"$work/libz.dll.a" -o zlib1.dll $objs)
(cd "$out/dll" && "$cc" -O3 -Wall -I"$src" -o example.exe "$src/test/example.c" "$work/libz.dll.a")
# shellcheck disable=SC2086
(cd "$out/static" && "$cc" -O3 -Wall -I"$src" -o example.exe "$src/test/example.c" $objs)
test -f "$out/static/example.exe" && test -f "$out/dll/example.exe"
