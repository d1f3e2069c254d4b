#!/bin/sh
# zlib_source.sh WORK - zlib's sources from Debian's source package
# (`apt-get source --download-only zlib`) extracted into WORK/src, for
# build_zlib_mingw.sh and build_zlib_native.sh.
#
# The archive may not serve every version apt-cache lists (this machine's
# mirror had 1:1.2.13.dfsg-1 but not the security update's files): each
# listed version is tried in turn. Exit 0 when WORK/src holds them.
set -eu
work=$1
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
