#!/bin/sh
# Installs the Debian packages listed in scripts/debian-packages.txt that are
# not installed yet. Runs apt-get update only when something is missing.
# Uses sudo when not root. Safe to run again: does nothing when all is there.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
list="$here/debian-packages.txt"
missing=""
for pkg in $(sed -e 's/#.*//' "$list"); do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    case "$status" in
        *"ok installed") ;;
        *) missing="$missing $pkg" ;;
    esac
done
# Node.js and npm build the dashboard's chart bundle and drive the browser
# tests. Machines here carry a Node.js of their own (with npm); Debian's
# packages stand in only where there is none, so as not to fight it.
if ! command -v npm >/dev/null 2>&1; then
    missing="$missing nodejs npm"
fi
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
# A package of another architecture (wine32:i386, for the XP-class agent
# under Wine) needs that architecture added to dpkg first.
for arch in $(printf '%s\n' $missing | sed -n 's/^[^:]*:\([a-z0-9]*\)$/\1/p' | sort -u); do
    if ! dpkg --print-foreign-architectures | grep -qx "$arch" &&
       [ "$arch" != "$(dpkg --print-architecture)" ]; then
        $sudo dpkg --add-architecture "$arch"
    fi
done
$sudo apt-get update -q
# shellcheck disable=SC2086
$sudo apt-get install -y -q --no-install-recommends $missing
