#!/bin/sh
# `make install`: puts the built binaries, the systemd units, their
# settings files, the JSON Schemas and the example jobs in place.
#
#   DESTDIR     staging root prepended to every path ("" : the real system)
#   PREFIX      /usr/local
#   BINDIR      PREFIX/bin
#   UNITDIR     PREFIX/lib/systemd/system
#   SYSCONFDIR  /etc when PREFIX is /usr, else PREFIX/etc
#   DATADIR     PREFIX/share/loadlab        (schemas/, examples/)
#   DOCDIR      PREFIX/share/doc/loadlab
#   BUILD_DIR   where `make build` put the binaries (build)
#
# Installs from an existing build and never builds: run `make build` first.
# The units get the installed paths (@BINDIR@, @SYSCONFDIR@); the settings
# files are not overwritten when they exist, so an operator's edits stay.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr/local}
BINDIR=${BINDIR:-$PREFIX/bin}
UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system}
if [ -z "${SYSCONFDIR:-}" ]; then
    if [ "$PREFIX" = /usr ]; then SYSCONFDIR=/etc; else SYSCONFDIR=$PREFIX/etc; fi
fi
DATADIR=${DATADIR:-$PREFIX/share/loadlab}
DOCDIR=${DOCDIR:-$PREFIX/share/doc/loadlab}
BUILD_DIR=${BUILD_DIR:-$here/build}
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR=$here/$BUILD_DIR ;; esac

for binary in server/loadlabd cli/loadlab agent/loadlab-agent; do
    if [ ! -x "$BUILD_DIR/$binary" ]; then
        echo "install: $BUILD_DIR/$binary is not built (run make build)" >&2
        exit 2
    fi
done

install -d "$DESTDIR$BINDIR" "$DESTDIR$UNITDIR" "$DESTDIR$SYSCONFDIR/loadlab" \
    "$DESTDIR$DATADIR/schemas" "$DESTDIR$DATADIR/examples" "$DESTDIR$DOCDIR"
install -m 0755 "$BUILD_DIR/server/loadlabd" "$BUILD_DIR/cli/loadlab" \
    "$BUILD_DIR/agent/loadlab-agent" "$DESTDIR$BINDIR/"
for unit in loadlabd.service loadlab-agent.service; do
    sed -e "s|@BINDIR@|$BINDIR|g" -e "s|@SYSCONFDIR@|$SYSCONFDIR|g" \
        "$here/packaging/systemd/$unit" >"$DESTDIR$UNITDIR/$unit.tmp"
    chmod 0644 "$DESTDIR$UNITDIR/$unit.tmp"
    mv "$DESTDIR$UNITDIR/$unit.tmp" "$DESTDIR$UNITDIR/$unit"
done
[ -e "$DESTDIR$SYSCONFDIR/loadlab/loadlabd.env" ] ||
    install -m 0644 "$here/packaging/systemd/loadlabd.env" "$DESTDIR$SYSCONFDIR/loadlab/loadlabd.env"
[ -e "$DESTDIR$SYSCONFDIR/loadlab/agent.env" ] ||
    install -m 0600 "$here/packaging/systemd/agent.env" "$DESTDIR$SYSCONFDIR/loadlab/agent.env"
install -m 0644 "$here"/schemas/*.json "$DESTDIR$DATADIR/schemas/"
install -m 0644 "$here"/schemas/examples/*.json "$DESTDIR$DATADIR/examples/"
install -d -m 0755 "$DESTDIR$DATADIR/examples/local"
install -m 0644 "$here"/schemas/examples/local/*.json "$DESTDIR$DATADIR/examples/local/"
install -m 0644 "$here/README.md" "$DESTDIR$DOCDIR/"
install -m 0644 "$here"/docs/*.md "$DESTDIR$DOCDIR/"
echo "install: loadlab in $DESTDIR$PREFIX (units in $DESTDIR$UNITDIR, settings in $DESTDIR$SYSCONFDIR/loadlab)"
