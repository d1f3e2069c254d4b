# zlib_source.sh - sourced by build_zlib_mingw.sh and build_zlib_ab_mingw.sh:
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

# The library's objects, compiled at -O3 into WORK/NAME.o from SRC; their
# paths in $zlib_objs.
zlib_objects() {
	zlib_objs=""
	for f in adler32 compress crc32 deflate gzclose gzlib gzread gzwrite infback inffast inflate inftrees \
		trees uncompr zutil; do
		"$cc" -O3 -Wall -c -o "$1/$f.o" "$2/$f.c"
		zlib_objs="$zlib_objs $1/$f.o"
	done
}
