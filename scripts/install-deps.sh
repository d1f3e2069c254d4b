#!/bin/sh
# Installs the Debian packages of scripts/debian-packages.txt that are not
# installed yet:
#
#   scripts/install-deps.sh run    what `make run` needs (the "run" lines)
#   scripts/install-deps.sh test   everything (`make test`, `make build`) [default]
#
# Does nothing, and calls no apt command, when all is there. Otherwise:
# - a package of another architecture (wine32:i386) gets its architecture
#   added to dpkg first;
# - apt-get update is tried 3 times, 10 s apart (LOADLAB_APT_TRIES,
#   LOADLAB_APT_PAUSE); when one index still fails (a mirror in sync), the
#   script goes on with the package lists apt has (scripts/lib/apt.sh);
# - the required packages are installed together; when that fails, each
#   alone, and the script exits 1 naming every required package that could
#   not be installed and what apt said;
# - each optional package is installed alone; one that cannot be gets one
#   line saying what will not be built or tested, and the script goes on
#   (exit 0); an architecture added only for optional packages none of
#   which could be installed is removed again, so that its index cannot
#   break the next apt-get update.
# Uses sudo when not root. The apt commands come from PATH.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
list=${LOADLAB_PACKAGE_LIST:-$here/debian-packages.txt}
scope=${1:-test}
case "$scope" in
    run | test) ;;
    *) echo "usage: $0 [run|test]" >&2; exit 2 ;;
esac
. "$here/lib/apt.sh"

say() { printf 'install-deps: %s\n' "$*"; }

installed() {
    case "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" in
        *"ok installed") return 0 ;;
        *) return 1 ;;
    esac
}

# The list's lines in scope: NAME NEED WHAT (FOR dropped).
entries=$(sed -e 's/#.*//' "$list" | awk -v scope="$scope" '
    NF >= 3 {
        if ($2 != "run" && $2 != "test") { print "bad FOR \"" $2 "\" for " $1 > "/dev/stderr"; exit 1 }
        if ($3 != "required" && $3 != "optional") { print "bad NEED \"" $3 "\" for " $1 > "/dev/stderr"; exit 1 }
        if (scope == "test" || $2 == "run") {
            what = ""
            for (i = 4; i <= NF; i++) what = what (i > 4 ? " " : "") $i
            print $1 "\t" $3 "\t" what
        }
        next
    }
    NF > 0 { print "a line needs PACKAGE FOR NEED: " $0 > "/dev/stderr"; exit 1 }')

missing_required=""
missing_optional=""
tab=$(printf '\t')
while IFS="$tab" read -r pkg need what; do
    [ -n "$pkg" ] || continue
    installed "$pkg" && continue
    if [ "$need" = required ]; then
        missing_required="$missing_required $pkg"
    else
        missing_optional="$missing_optional $pkg"
    fi
done <<EOF
$entries
EOF
# Node.js and npm build the dashboard's chart bundle and drive the browser
# tests. Machines here carry a Node.js of their own (with npm); Debian's
# packages stand in only where there is none, so as not to fight it.
if ! command -v npm >/dev/null 2>&1; then
    missing_required="$missing_required nodejs npm"
fi
[ -z "$missing_required$missing_optional" ] && exit 0
say "installing:$missing_required$missing_optional"
sudo=$(apt_sudo)
trap 'rm -f "$APT_LOG"' EXIT

# Architectures to add (wine32:i386), and which of them only optional
# packages need.
added_arches=""
for arch in $(printf '%s\n' $missing_required $missing_optional | sed -n 's/^[^:]*:\([a-z0-9]*\)$/\1/p' | sort -u); do
    if [ "$arch" != "$(dpkg --print-architecture)" ] &&
        ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
        $sudo dpkg --add-architecture "$arch"
        added_arches="$added_arches $arch"
    fi
done

apt_update_retrying || true

failed_required=""
if [ -n "$missing_required" ]; then
    # shellcheck disable=SC2086
    if ! apt_install_quiet $missing_required; then
        # Which of them cannot be installed: each alone.
        for pkg in $missing_required; do
            installed "$pkg" && continue
            apt_install_quiet "$pkg" && continue
            failed_required="$failed_required $pkg"
            say "required package $pkg cannot be installed; apt said:" >&2
            apt_why_not "$pkg" | sed -e 's/^/install-deps:   /' >&2
        done
    fi
fi

for pkg in $missing_optional; do
    apt_install_quiet "$pkg" && continue
    what=$(printf '%s\n' "$entries" | awk -F "$tab" -v p="$pkg" '$1 == p { print $3 }')
    say "optional package $pkg cannot be installed ($(apt_why_not "$pkg" | head -n 1)): $what"
done

# An architecture added for packages none of which is installed now goes
# again (nothing of it is installed, so dpkg lets it go).
for arch in $added_arches; do
    kept=""
    for pkg in $missing_required $missing_optional; do
        case "$pkg" in *:"$arch") installed "$pkg" && kept=1 ;; esac
    done
    if [ -z "$kept" ]; then
        if $sudo dpkg --remove-architecture "$arch"; then
            say "removed the $arch architecture again (nothing of it could be installed)"
        else
            say "could not remove the $arch architecture again (dpkg --remove-architecture $arch)" >&2
        fi
    fi
done

if [ -n "$failed_required" ]; then
    say "cannot go on: required package(s)$failed_required not installed (see apt's words above)" >&2
    exit 1
fi
exit 0
