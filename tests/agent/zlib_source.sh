# shellcheck shell=sh
# zlib_source.sh - sourced by build_zlib_mingw.sh, build_zlib_ab_mingw.sh
# and build_zlib_native.sh (each sets $cc, the compiler the functions
# below use; they set $work and $src for the script).
# shellcheck disable=SC2034,SC2154
#
# zlib_start NAME FILE...: the build's cache and its work folder. When
# every FILE is there the script exits 0 (an OUTDIR that holds them is
# left as it is); else a work folder "$work" (${TMPDIR:-/tmp}/NAME-XXXXXX,
# removed when the script exits) holding Debian's zlib source in "$src".
zlib_start() {
	name=$1
	shift
	missing=0
	for f in "$@"; do
		[ -f "$f" ] || missing=1
	done
	[ $missing -eq 1 ] || exit 0
	work=$(mktemp -d "${TMPDIR:-/tmp}/$name-XXXXXX")
	trap 'rm -rf "$work"' EXIT
	zlib_source "$work"
	src="$work/src"
}

# zlib_source WORK unpacks Debian's zlib source package (`apt-get source
# --download-only zlib`) into WORK/src. The archive may not serve every
# version apt-cache lists (this machine's mirror had 1:1.2.13.dfsg-1 but
# not the security update's files): each listed version is tried in turn.
# Returns 1 with the apt log's tail on stderr when none could be fetched.
zlib_source() {
	if ! (cd "$1" && apt-get source --download-only zlib >"$1/apt.log" 2>&1); then
		for version in $(apt-cache showsrc zlib | sed -n 's/^Version: //p' | sort -u); do
			(cd "$1" && apt-get source --download-only "zlib=$version" >>"$1/apt.log" 2>&1) && break
		done
	fi
	orig=$(ls "$1"/zlib_*.orig.tar.* 2>/dev/null | head -n 1)
	if [ -z "$orig" ]; then
		echo "apt-get source zlib failed (is there a deb-src entry?):" >&2
		tail -n 5 "$1/apt.log" >&2
		return 1
	fi
	mkdir "$1/src"
	tar -xf "$orig" -C "$1/src" --strip-components=1
}

# zlib_objects WORK SRC CFLAGS...: the library's objects, compiled with
# $cc and CFLAGS into WORK/NAME.o from SRC; their paths in $zlib_objs.
zlib_objects() {
	objdir=$1
	srcdir=$2
	shift 2
	zlib_objs=""
	for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate inftrees \
		trees uncompr zutil; do
		"$cc" "$@" -c -o "$objdir/$f.o" "$srcdir/$f.c"
		zlib_objs="$zlib_objs $objdir/$f.o"
	done
}

# zlib_dll DIR: zlib1.dll linked in DIR from $zlib_objs at -O3, under its
# bare name as win32/Makefile.gcc links it (ld's automatic image base is a
# hash of the output name as given), its import library $work/libz.dll.a.
zlib_dll() {
	# shellcheck disable=SC2086
	(cd "$1" && "$cc" -O3 -Wall -shared -Wl,--out-implib,"$work/libz.dll.a" -o zlib1.dll $zlib_objs)
}
