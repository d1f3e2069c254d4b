# apt helpers for the setup scripts (sourced by scripts/install-deps.sh and
# scripts/build-windows-deps.sh; POSIX sh).
#
#   apt_sudo                     "sudo" when not root, else empty
#   apt_update_retrying          apt-get update, tried LOADLAB_APT_TRIES times
#                                (default 3) LOADLAB_APT_PAUSE seconds apart
#                                (default 10). Returns 0 when an update went
#                                through whole; otherwise prints what failed
#                                (apt's E:/W: lines about indexes) and
#                                returns 1. apt keeps every index it could
#                                fetch, so a caller may go on with the lists
#                                apt has and fail later only on a package it
#                                needs and cannot get.
#   apt_install_quiet PKG...     apt-get install -y of PKG..., its output in
#                                $APT_LOG; 0 when installed.
#   apt_why_not PKG              the lines of $APT_LOG that say why PKG was
#                                not installed (the lines naming it, such as
#                                its unmet dependencies, then apt's E:
#                                lines), at most 6.
#
# The apt commands are taken from PATH (apt-get, dpkg, dpkg-query), so a
# test can stand in for them (tests/scripts/test_install_deps.py).

APT_LOG=${APT_LOG:-${TMPDIR:-/tmp}/loadlab-apt.$$.log}

apt_sudo() {
    if [ "$(id -u)" -eq 0 ]; then echo ""; else echo "sudo"; fi
}

apt_update_retrying() {
    _apt_tries=${LOADLAB_APT_TRIES:-3}
    _apt_pause=${LOADLAB_APT_PAUSE:-10}
    _apt_try=1
    while :; do
        if $(apt_sudo) apt-get update -q >"$APT_LOG" 2>&1; then
            return 0
        fi
        [ "$_apt_try" -ge "$_apt_tries" ] && break
        echo "apt: apt-get update failed (try $_apt_try of $_apt_tries); again in $_apt_pause s" >&2
        sleep "$_apt_pause"
        _apt_try=$((_apt_try + 1))
    done
    echo "apt: apt-get update failed $_apt_tries times; going on with the package lists apt has. apt said:" >&2
    grep -E '^(E|W|Err):' "$APT_LOG" | head -n 8 | sed -e 's/^/apt:   /' >&2
    return 1
}

apt_install_quiet() {
    DEBIAN_FRONTEND=noninteractive $(apt_sudo) apt-get install -y -q --no-install-recommends "$@" \
        >"$APT_LOG" 2>&1
}

apt_why_not() {
    _apt_name=${1%%:*}
    # (each grep may find nothing: callers run under set -e)
    { grep -F " $_apt_name" "$APT_LOG" | grep -vE '^(E:|Reading|Building|Get:|Selecting|Preparing|Unpacking|Setting up)' || true
      grep -E '^E:' "$APT_LOG" || true; } |
        sed -e 's/^ *//' |
        awk '!seen[$0]++' | head -n 6
}
