#!/bin/sh
# build_zlib_native.sh OUTDIR - a real Linux program this project did not
# write, shipped with the shared library it loads from its own folder, for
# test_program_elf.py: zlib from Debian's source package (`apt-get source
# zlib`, as build_zlib_mingw.sh), built natively with gcc into
# OUTDIR/minigzip (zlib's test/minigzip.c) and OUTDIR/lib/libz.so.1 (the
# library's objects, -fPIC, linked -shared with the soname libz.so.1, as
# upstream's Makefile links libz.so), the program linked against it with
# RUNPATH $ORIGIN/lib, so the loader takes the program's copy before the
# system's /lib/x86_64-linux-gnu/libz.so.1 of the same soname. Also
# OUTDIR/data.txt, a file for it to compress (zlib's own README).
#
# And a second build of the library for test_program_elf_ab.py:
# OUTDIR/slow/libz.so.1, the same objects linked the same way with one
# object more, a constructor that spins for 5 ms on the monotonic clock
# (a startup cost the loader pays before main, as a library's static
# initializers would). minigzip links to the soname only, so the same
# minigzip runs with either: the two builds differ in lib/libz.so.1 alone.
#
# Cached: an OUTDIR that already holds the files is left as it is. Exit 0
# when built.
set -eu
out=$1
cc=${CC:-gcc}
. "$(dirname "$0")/zlib_source.sh"
zlib_start loadlab-zlib-native "$out/minigzip" "$out/lib/libz.so.1" "$out/data.txt" "$out/slow/libz.so.1"
mkdir -p "$out/lib"
zlib_objects "$work" "$src" -O2 -fPIC -DHAVE_UNISTD_H -DHAVE_STDARG_H -D_LARGEFILE64_SOURCE=1
objs=$zlib_objs
# shellcheck disable=SC2086
"$cc" -O2 -shared -Wl,-soname,libz.so.1 -o "$out/lib/libz.so.1" $objs
# shellcheck disable=SC2016
"$cc" -O2 -DHAVE_UNISTD_H -I"$src" -o "$out/minigzip" "$src/test/minigzip.c" "$out/lib/libz.so.1" \
	-Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib'
cat >"$work/slow_start.c" <<'EOF'
#include <time.h>

/* 5 ms of work before main: the candidate's startup cost. */
__attribute__((constructor)) static void slow_start(void)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 5000000L);
}
EOF
"$cc" -O2 -fPIC -c -o "$work/slow_start.o" "$work/slow_start.c"
mkdir -p "$out/slow"
# shellcheck disable=SC2086
"$cc" -O2 -shared -Wl,-soname,libz.so.1 -o "$out/slow/libz.so.1" $objs "$work/slow_start.o"
cp "$src/README" "$out/data.txt"
test -x "$out/minigzip"
