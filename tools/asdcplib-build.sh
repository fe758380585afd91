#!/bin/sh
# Builds asdcplib's command-line tools (asdcp-info, asdcp-unwrap, asdcp-wrap, as-02-info,
# as-02-unwrap, as-02-wrap, klvwalk) once from a source tarball and caches them outside the
# clone; the MXF tests use them as an outside judge of the track files FFmpeg writes, and
# as-02-wrap's files as references.
#
#   tools/asdcplib-build.sh [TARBALL]
#
# Prints the directory holding the tools as its last line of stdout. Exit status 0: built or
# cached; 2: no tarball (the callers skip); 1: the build failed.
#
# TARBALL defaults to $J2KC_ASDCPLIB_TARBALL, else the newest asdcplib-*.tar.* in
# ${J2KC_SHARED:-<repository>/../shared}/third_party. asdcplib is BSD-licensed and builds with
# CMake and OpenSSL (Debian: cmake libssl-dev); WITHOUT_XML leaves out Xerces, which only the
# IMF/DCP XML tools need. The tools are linked statically against asdcplib's own libraries so
# that the cached directory can move.
#
# Cache: ${J2KC_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/j2kcuda}/asdcplib-<first 16 hex digits of the
# tarball's SHA-256>/bin. Concurrent callers serialize on a lock file (flock); the build goes
# to a temporary directory next to the cache entry, which is renamed into place when complete,
# so a reader never sees a half-built entry.
set -eu

die() { echo "asdcplib-build: $*" >&2; exit 1; }
log() { echo "asdcplib-build: $*" >&2; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOLS="asdcp-info asdcp-unwrap asdcp-wrap as-02-info as-02-unwrap as-02-wrap klvwalk"

tar=${1:-${J2KC_ASDCPLIB_TARBALL:-}}
if [ -z "$tar" ]; then
    shared=${J2KC_SHARED:-$ROOT/../shared}
    tar=$(ls "$shared"/third_party/asdcplib-*.tar.* 2>/dev/null | sort -V | tail -n 1 || true)
fi
if [ -z "$tar" ] || [ ! -f "$tar" ]; then
    log "no asdcplib source tarball (set J2KC_ASDCPLIB_TARBALL or J2KC_SHARED)"
    exit 2
fi

hash=$(sha256sum "$tar" | cut -c1-16)
cache=${J2KC_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/j2kcuda}
entry=$cache/asdcplib-$hash
mkdir -p "$cache"

have_all() {
    for t in $TOOLS; do [ -x "$1/bin/$t" ] || return 1; done
}

if ! have_all "$entry"; then
    for c in cmake c++ make; do
        command -v "$c" >/dev/null 2>&1 || die "$c not found (Debian: cmake g++ make libssl-dev)"
    done
    exec 9>"$cache/asdcplib-$hash.lock"
    flock 9
    # Another caller may have finished the build while we waited for the lock.
    if ! have_all "$entry"; then
        tmp=$(mktemp -d "$cache/.asdcplib-$hash.XXXXXX")
        trap 'rm -rf "$tmp"' EXIT
        log "building $(basename "$tar") in $tmp (a few minutes, once)"
        mkdir -p "$tmp/src" "$tmp/build" "$tmp/entry/bin"
        tar -xf "$tar" -C "$tmp/src" --strip-components=1
        (cd "$tmp/build" &&
         cmake "$tmp/src" -DWITHOUT_XML=ON -DBUILD_SHARED_LIBS=OFF \
               -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.log" 2>&1) || {
            tail -n 30 "$tmp/cmake.log" >&2; die "cmake failed (Debian: cmake g++ libssl-dev)"; }
        # shellcheck disable=SC2086
        make -C "$tmp/build" -j"${JOBS:-2}" $TOOLS >"$tmp/make.log" 2>&1 || {
            grep -E 'error' "$tmp/make.log" | head -n 20 >&2; die "make failed"; }
        for t in $TOOLS; do
            cp "$tmp/build/src/$t" "$tmp/entry/bin/" || die "$t was not built"
        done
        echo "$(basename "$tar") sha256:$(sha256sum "$tar" | cut -d' ' -f1)" > "$tmp/entry/SOURCE"
        rm -rf "$entry"
        mv "$tmp/entry" "$entry"
        rm -rf "$tmp"
        trap - EXIT
        log "installed $entry/bin"
    fi
    exec 9>&-
fi
echo "$entry/bin"
