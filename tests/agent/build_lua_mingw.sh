#!/bin/sh
# build_lua_mingw.sh OUTDIR - a real Windows program this project did not
# write, for the program family's test (test_program_family.py): Lua 5.4
# from Debian's source package (`apt-get source lua5.4`), cross-built with
# mingw-w64 into OUTDIR/bin/lua.exe and its own DLL OUTDIR/bin/lua54.dll
# (as upstream's `make mingw` does: the core and libraries in the DLL,
# built with LUA_BUILD_AS_DLL; the interpreter imports it). Cached: an
# OUTDIR that already holds both is left as it is. Exit 0 when built.
set -eu
out=$1
cc=${CC_MINGW:-x86_64-w64-mingw32-gcc}
if [ -f "$out/bin/lua.exe" ] && [ -f "$out/bin/lua54.dll" ]; then
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/loadlab-lua-XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source --download-only lua5.4 >/dev/null 2>&1 ||
	(cd "$work" && apt-get source lua5.4 >/dev/null 2>&1))
orig=$(ls "$work"/lua5.4_*.orig.tar.* | head -n 1)
mkdir "$work/src"
tar -xf "$orig" -C "$work/src" --strip-components=1
src="$work/src/src"
core=""
for f in "$src"/*.c; do
	case "$(basename "$f")" in
	lua.c | luac.c | onelua.c) ;;
	*) core="$core $f" ;;
	esac
done
mkdir -p "$out/bin"
# shellcheck disable=SC2086
"$cc" -O2 -std=gnu99 -DLUA_COMPAT_5_3 -DLUA_BUILD_AS_DLL -shared -o "$out/bin/lua54.dll" $core
"$cc" -O2 -std=gnu99 -DLUA_COMPAT_5_3 -o "$out/bin/lua.exe" "$src/lua.c" "$out/bin/lua54.dll"
test -f "$out/bin/lua.exe"
