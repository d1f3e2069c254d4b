#!/bin/bash
# `make install DESTDIR=... PREFIX=...` from this build: the layout
# (binaries, units with the installed paths, settings files and their
# modes, schemas, examples), a second install keeping an edited settings
# file, and `systemd-analyze verify` accepting the installed units.
#
# systemd-analyze verify checks that ExecStart= names an executable, so it
# must see the installed tree as the root: --root=DESTDIR, with the host's
# own units (sysinit.target, basic.target, ...) copied beside ours, since
# verify loads the default dependencies of a service from that root too,
# and the units named by their path inside the root, in a directory of
# systemd's search path (PREFIX=/usr here).
set -u
BUILD="${LOADLAB_BUILD_DIR:?}"
SRC="${LOADLAB_SOURCE_DIR:?}"
DEST=$(mktemp -d /tmp/loadlab-install-XXXXXX)
passed=0
failed=0
trap 'rm -rf "$DEST"' EXIT

check() { # check NAME COMMAND... : counts a pass when the command succeeds
    local name=$1; shift
    if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
}
mode() { stat -c %a "$1"; }

# make install must not build: it installs what BUILD holds.
make -s -C "$SRC" install DESTDIR="$DEST" PREFIX=/opt/loadlab BUILD_DIR="$BUILD" >"$DEST.out" 2>&1
rc=$?
cat "$DEST.out"; rm -f "$DEST.out"
check "make install exits 0" test "$rc" -eq 0

P=$DEST/opt/loadlab
for b in loadlabd loadlab loadlab-agent; do
    check "bin/$b is executable" test -x "$P/bin/$b"
done
check "installed loadlabd is this build's" cmp -s "$P/bin/loadlabd" "$BUILD/server/loadlabd"
for u in loadlabd loadlab-agent; do
    unit=$P/lib/systemd/system/$u.service
    check "$u.service installed" test -f "$unit"
    check "$u.service runs the installed binary" grep -q "^ExecStart=/opt/loadlab/bin/$u" "$unit"
    check "$u.service has no placeholder left" bash -c "! grep -q '@[A-Z]*@' '$unit'"
    for option in NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes DynamicUser=yes; do
        check "$u.service sets $option" grep -q "^$option\$" "$unit"
    done
    check "$u.service has a StateDirectory" grep -q "^StateDirectory=loadlab" "$unit"
done
check "settings in PREFIX/etc when PREFIX is not /usr" test -f "$P/etc/loadlab/loadlabd.env"
check "the units read PREFIX/etc" grep -q "^EnvironmentFile=-/opt/loadlab/etc/loadlab/loadlabd.env" \
    "$P/lib/systemd/system/loadlabd.service"
check "agent.env (the enrollment token) is 0600" test "$(mode "$P/etc/loadlab/agent.env")" = 600
check "schemas installed" test -f "$P/share/loadlab/schemas/job_submit.json"
check "every example installed" diff -r "$SRC/schemas/examples" "$P/share/loadlab/examples"
check "the quick start installed" test -f "$P/share/loadlab/examples/quickstart.json"

# Again, over an edited settings file: the edit stays.
echo "LOADLAB_SERVER=http://lab:8080" >"$P/etc/loadlab/agent.env"
make -s -C "$SRC" install DESTDIR="$DEST" PREFIX=/opt/loadlab BUILD_DIR="$BUILD" >/dev/null 2>&1
check "a second install keeps the operator's agent.env" \
    grep -qx "LOADLAB_SERVER=http://lab:8080" "$P/etc/loadlab/agent.env"

# PREFIX=/usr puts settings in /etc.
make -s -C "$SRC" install DESTDIR="$DEST/usr-prefix" PREFIX=/usr BUILD_DIR="$BUILD" >/dev/null 2>&1
check "PREFIX=/usr: settings in /etc" test -f "$DEST/usr-prefix/etc/loadlab/agent.env"
check "PREFIX=/usr: units read /etc" grep -q "^EnvironmentFile=/etc/loadlab/agent.env" \
    "$DEST/usr-prefix/usr/lib/systemd/system/loadlab-agent.service"

# An install without a build is refused, not half done.
make -s -C "$SRC" install DESTDIR="$DEST/none" BUILD_DIR="$DEST/no-build" >/dev/null 2>&1
check "make install without a build fails" test $? -ne 0
check "... and installs nothing" test ! -e "$DEST/none"

if command -v systemd-analyze >/dev/null; then
    # The PREFIX=/usr install, whose units sit in a directory of systemd's
    # search path (one under /opt is "not found" with --root).
    R=$DEST/usr-prefix
    cp -an /usr/lib/systemd/system/. "$R/usr/lib/systemd/system/"
    out=$(systemd-analyze verify --root="$R" /usr/lib/systemd/system/loadlabd.service \
        /usr/lib/systemd/system/loadlab-agent.service 2>&1)
    rc=$?
    [ -n "$out" ] && echo "$out"
    check "systemd-analyze verify accepts the units" test "$rc" -eq 0
    check "... without a warning" test -z "$out"
    # The check can fail: a unit naming a binary that is not there.
    sed 's|^ExecStart=/usr/bin/loadlabd|ExecStart=/usr/bin/missing|' \
        "$R/usr/lib/systemd/system/loadlabd.service" >"$R/usr/lib/systemd/system/broken.service"
    out=$(systemd-analyze verify --root="$R" /usr/lib/systemd/system/broken.service 2>&1)
    rc=$?
    check "systemd-analyze verify refuses a unit whose binary is missing" test "$rc" -ne 0
    check "... naming it" grep -q "/usr/bin/missing is not executable" <<<"$out"
else
    echo "FAIL systemd-analyze is not installed: the units were not verified"
    failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
