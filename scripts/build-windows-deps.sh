#!/bin/sh
# Builds the Windows libraries the agent links, for one architecture:
#
#   scripts/build-windows-deps.sh x86_64|i686 [PREFIX_ROOT]
#
# Debian's own source packages of curl and cJSON (apt-get source, with a
# deb-src entry added from the existing deb entry when apt knows no
# source of them; apt-get update only then) are
# cross-compiled with mingw-w64 into PREFIX_ROOT/ARCH/prefix (default
# build/windows-deps/ARCH/prefix): a static libcurl with Schannel and only
# HTTP/HTTPS, and a static cJSON, each with a pkg-config file. i686 is
# built with -D_WIN32_WINNT=0x0501 so that it imports nothing Windows XP
# lacks. Does nothing when both libraries are already installed there.
set -eu

usage() { echo "usage: $0 x86_64|i686 [PREFIX_ROOT]" >&2; exit 2; }
[ $# -ge 1 ] || usage
arch=$1
case "$arch" in
    x86_64) winnt="" ;;
    i686) winnt="-D_WIN32_WINNT=0x0501" ;;
    *) usage ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
top=${2:-$root/build/windows-deps}
out=$top/$arch
prefix=$out/prefix
host=$arch-w64-mingw32

if [ -f "$prefix/lib/libcurl.a" ] && [ -f "$prefix/lib/libcjson.a" ] &&
   [ -f "$prefix/lib/pkgconfig/libcurl.pc" ] && [ -f "$prefix/lib/pkgconfig/libcjson.pc" ]; then
    exit 0
fi
command -v "$host-gcc" >/dev/null || { echo "$0: $host-gcc not found (install mingw-w64)" >&2; exit 1; }
command -v dpkg-source >/dev/null || { echo "$0: dpkg-source not found (install dpkg-dev)" >&2; exit 1; }

. "$here/lib/apt.sh"
sudo=$(apt_sudo)

# The two architectures may be built at once (make windows): the deb-src
# entry, apt's lists and the source download are done by one at a time.
exec 9>"${TMPDIR:-/tmp}/loadlab-windows-deps.lock"
flock 9

# apt-get source needs a deb-src entry and its index. When apt already
# knows the two source packages, nothing is asked of the network.
# Otherwise a deb-src entry is made from the Debian deb entry (when there
# is none) and apt-get update runs (retried; an index that still fails,
# such as another architecture's, is only a warning: apt-get source below
# says so if the sources' own index is the one missing).
if ! apt-get source --print-uris -q curl cjson >/dev/null 2>&1; then
    if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        src_list=/etc/apt/sources.list.d/loadlab-deb-src.sources
        if [ -f /etc/apt/sources.list.d/debian.sources ]; then
            sed -e 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
                $sudo tee "$src_list" >/dev/null
        else
            grep -hE '^deb .*debian' /etc/apt/sources.list | sed -e 's/^deb /deb-src /' |
                $sudo tee /etc/apt/sources.list.d/loadlab-deb-src.list >/dev/null
        fi
    fi
    apt_update_retrying || echo "build-windows-deps: going on; apt-get source needs only the deb-src index" >&2
    rm -f "$APT_LOG"
fi

# A machine-wide cache of the built libraries, so that every clean clone
# does not build curl again: keyed by the architecture, the source
# packages apt would fetch (their .dsc names, versions included) and this
# script's own text. LOADLAB_WINDOWS_DEPS_CACHE names its folder (default
# ~/.cache/loadlab/windows-deps); 0 turns it off. A hit is copied into
# PREFIX, its pkg-config files pointed at PREFIX.
cache=${LOADLAB_WINDOWS_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loadlab/windows-deps}
cached=""
if [ "$cache" != 0 ]; then
    sources=$(apt-get source --print-uris -q curl cjson 2>/dev/null | awk '/\.dsc/ {print $2}' | sort | tr '\n' ' ')
    if [ -n "$sources" ]; then
        key=$({ echo "$arch $sources"; cat "$0"; } | sha256sum | cut -c1-16)
        cached=$cache/$key/$arch
    fi
fi
if [ -n "$cached" ] && [ -f "$cached/prefix/lib/libcurl.a" ] && [ -f "$cached/prefix/lib/libcjson.a" ] &&
   [ -f "$cached/prefix/lib/pkgconfig/libcurl.pc" ] && [ -f "$cached/prefix/lib/pkgconfig/libcjson.pc" ]; then
    flock -u 9
    rm -rf "$prefix"
    mkdir -p "$(dirname "$prefix")"
    cp -R "$cached/prefix" "$prefix"
    sed -i -e "s|^prefix=.*|prefix=$prefix|" "$prefix/lib/pkgconfig/libcurl.pc" "$prefix/lib/pkgconfig/libcjson.pc"
    echo "build-windows-deps: $arch from the cache ($cached), prefix $prefix"
    exit 0
fi

start=$(date +%s)
rm -rf "$out/src" "$out/build-curl"
mkdir -p "$out/src" "$out/build-curl" "$prefix/lib/pkgconfig" "$prefix/include/cjson"
(cd "$out/src" && apt-get source -q curl cjson >"$out/apt-source.log" 2>&1) ||
    { echo "$0: apt-get source failed; see $out/apt-source.log" >&2; exit 1; }
flock -u 9
curl_src=$(find "$out/src" -maxdepth 1 -type d -name 'curl-*' | head -n 1)
cjson_src=$(find "$out/src" -maxdepth 1 -type d -name 'cjson-*' | head -n 1)
[ -n "$curl_src" ] && [ -n "$cjson_src" ] || { echo "$0: sources not unpacked in $out/src" >&2; exit 1; }

# cJSON: one file; compiled directly, as its CMake build would.
"$host-gcc" -std=c89 -O2 $winnt -c "$cjson_src/cJSON.c" -o "$out/cJSON.o"
rm -f "$prefix/lib/libcjson.a"
"$host-ar" rcs "$prefix/lib/libcjson.a" "$out/cJSON.o"
cp "$cjson_src/cJSON.h" "$prefix/include/cjson/cJSON.h"
cat >"$prefix/lib/pkgconfig/libcjson.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: libcjson
Description: cJSON, static, for $host
Version: $(basename "$cjson_src" | sed -e 's/^cjson-//')
Libs: -L\${libdir} -lcjson
Cflags: -I\${includedir}
PC

# libcurl: Schannel, static, HTTP and HTTPS only; only lib/ and include/
# are built and installed (not the curl tool, not the manual).
cd "$out/build-curl"
"$curl_src/configure" -q --host="$host" --prefix="$prefix" \
    CPPFLAGS="$winnt" CFLAGS="-O2" \
    --disable-shared --enable-static --with-schannel --disable-pthreads \
    --without-libpsl --without-brotli --without-zstd --without-zlib \
    --without-libidn2 --without-librtmp --without-libssh2 --without-libssh \
    --without-nghttp2 --without-ngtcp2 --without-nghttp3 --without-quiche \
    --without-msh3 --without-hyper --without-libgsasl \
    --disable-ftp --disable-file --disable-ldap --disable-ldaps --disable-rtsp \
    --disable-dict --disable-telnet --disable-tftp --disable-pop3 --disable-imap \
    --disable-smb --disable-smtp --disable-gopher --disable-mqtt \
    --disable-manual --disable-alt-svc >"$out/configure.log" 2>&1 ||
    { echo "$0: curl configure failed; see $out/configure.log" >&2; exit 1; }
jobs=$(nproc 2>/dev/null || echo 2)
{ make -C lib -j "$jobs" && make -C lib install && make -C include install &&
  make install-pkgconfigDATA; } >"$out/make.log" 2>&1 ||
    { echo "$0: curl build failed; see $out/make.log" >&2; exit 1; }
if [ -n "$cached" ]; then
    # Into the cache whole or not at all: copied beside it, then renamed.
    mkdir -p "$cache/$key" && rm -rf "$cached.new.$$" && mkdir "$cached.new.$$" &&
        cp -R "$prefix" "$cached.new.$$/prefix" && rm -rf "$cached" && mv "$cached.new.$$" "$cached" ||
        rm -rf "$cached.new.$$"
fi
echo "build-windows-deps: $arch done in $(( $(date +%s) - start )) s, prefix $prefix"
