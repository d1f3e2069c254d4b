#!/bin/sh
# Builds the Windows libraries the agent links, for one architecture:
#
#   scripts/build-windows-deps.sh x86_64|i686 [PREFIX_ROOT]
#
# Debian's own source packages of curl and cJSON (apt-get source, with a
# deb-src entry added from the existing deb entry when apt knows no
# source of them; apt-get update only then) are
# cross-compiled with mingw-w64 (curl's lib/ by its own lib/Makefile.mk,
# without configure) into PREFIX_ROOT/ARCH/prefix (default
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
mkdir -p "$out/src" "$prefix/lib/pkgconfig" "$prefix/include/cjson"
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

# libcurl: Schannel, static, HTTP and HTTPS only. Built with curl's own
# lib/Makefile.mk (GCC-like toolchains, no configure: configure's hundreds
# of test programs took most of the time) and lib/config-win32.h. CFG
# names what is on: Schannel, SSPI (NTLM, Kerberos, SPNEGO) and IPv6; DNS
# is resolved in a thread (config-win32.h's default, "AsynchDNS"). Every
# other protocol is switched off as configure's --disable-* did, and alt-svc
# with them; nothing else (zlib, brotli, zstd, idn, psl, ssh, nghttp2) is
# named, so nothing else is linked. What configure found on mingw-w64 and
# config-win32.h does not say is named in $curl_found: snprintf (mprintf's
# floating point), variadic macros (curl_log.h), C11 atomics (the i686
# build's thread-safe curl_global_init: XP has no SRWLOCK) and OS (the
# host triplet curl_version_info reports). CURL_STATICLIB, as configure's
# static build: without it curl's functions are marked dllexport, and every
# .exe linking libcurl.a would export them.
# Only lib/ and include/ are built and installed (not the curl tool).
curl_disable=""
for off in ALTSVC DICT FILE FTP GOPHER IMAP LDAP LDAPS MQTT POP3 RTSP SMB SMTP TELNET TFTP; do
    curl_disable="$curl_disable -DCURL_DISABLE_$off"
done
curl_found="-DHAVE_SNPRINTF -DHAVE_VARIADIC_MACROS_C99 -DHAVE_VARIADIC_MACROS_GCC"
curl_found="$curl_found -DHAVE_ATOMIC -DHAVE_STDATOMIC_H -DOS=\\\"$host\\\""
jobs=$(nproc 2>/dev/null || echo 2)
# Makefile.mk appends to CPPFLAGS and CFLAGS, so they are given in the
# environment (a command-line value would replace its own flags).
mkdir -p "$curl_src/lib/$host" "$prefix/include/curl"
( cd "$curl_src/lib" &&
  env CC=gcc AR=ar CPPFLAGS="-DCURL_STATICLIB $winnt $curl_disable $curl_found" CFLAGS="-O2" \
      make -f Makefile.mk -j "$jobs" CROSSPREFIX="$host-" TRIPLET="$host" CFG=-schannel-sspi-ipv6 libcurl.a ) \
    >"$out/make.log" 2>&1 || { echo "$0: curl build failed; see $out/make.log" >&2; exit 1; }
cp "$curl_src/lib/libcurl.a" "$prefix/lib/libcurl.a"
cp "$curl_src"/include/curl/*.h "$prefix/include/curl/"
# Libs names the Windows libraries too: the agent's CMake links what
# pkg-config --libs says, and libcurl.a is static. advapi32 and crypt32:
# CryptoAPI (random numbers, hashes, Schannel's certificates); bcrypt:
# BCryptGenRandom (Vista and later; unused at _WIN32_WINNT 0x0501);
# ws2_32: sockets. SSPI's secur32.dll is loaded at run time.
curl_syslibs="-lbcrypt -ladvapi32 -lcrypt32 -lws2_32"
cat >"$prefix/lib/pkgconfig/libcurl.pc" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include
supported_protocols="HTTP HTTPS"
supported_features="AsynchDNS HSTS HTTPS-proxy IPv6 Kerberos Largefile NTLM SPNEGO SSL SSPI UnixSockets threadsafe"

Name: libcurl
URL: https://curl.se/
Description: libcurl, static, Schannel, HTTP and HTTPS only, for $host
Version: $(sed -n 's/^#define LIBCURL_VERSION "\(.*\)"$/\1/p' "$curl_src/include/curl/curlver.h")
Libs: -L\${libdir} -lcurl $curl_syslibs
Libs.private: $curl_syslibs
Cflags: -I\${includedir} -DCURL_STATICLIB
PC
if [ -n "$cached" ]; then
    # Into the cache whole or not at all: copied beside it, then renamed.
    mkdir -p "$cache/$key" && rm -rf "$cached.new.$$" && mkdir "$cached.new.$$" &&
        cp -R "$prefix" "$cached.new.$$/prefix" && rm -rf "$cached" && mv "$cached.new.$$" "$cached" ||
        rm -rf "$cached.new.$$"
fi
echo "build-windows-deps: $arch done in $(( $(date +%s) - start )) s, prefix $prefix"
