#!/bin/sh
# Builds FFmpeg 7.1.x as users meet it -- FFmpeg's default configuration: every native decoder,
# encoder, demuxer, muxer, parser, bitstream filter and filter, x86 assembly when nasm is
# installed, zlib -- plus the jpeg2000_cuda encoder linked statically against the j2kcuda library
# of BUILD_DIR. LGPL: no --enable-gpl, no external libraries beyond zlib.
#
#   tools/ffmpeg-build.sh BUILD_DIR        (what `make ffmpeg` runs; BUILD_DIR defaults to build)
#
# Results: BUILD_DIR/ffmpeg is a complete FFmpeg object directory (ffmpeg, ffprobe, the static
# libraries, `make fate-...` works there) and BUILD_DIR/ffmpeg-src the patched source tree.
#
# 1. Fetches the upstream tarballs of Debian trixie's ffmpeg (any 7.1.x) and nv-codec-headers
#    (12.1.x) SOURCE packages with apt-get, using the Debian mirror this machine is already
#    configured for, and private apt state (the system apt configuration is never touched).
#    apt checks every tarball against the signed Sources index. Downloads are kept in
#    J2KC_DEPS_DIR (default .deps, ignored by git), so reruns need no network.
# 2. The compiled tree lives in a cache outside the clone,
#      ${J2KC_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/j2kcuda}/ffmpeg-<version>-<base>-<key>/
#    <key> covers the tarballs, the patch series, the configure flags, the compiler and the
#    library's link flags (a CUDA build of j2kcuda links the CUDA runtime: such clones have
#    entries of their own); <base> the same without the patch series. A missing entry is seeded
#    from the newest complete entry of the same <base>: only the files the new patch series
#    changes are rewritten (configure keeps config.h when it does not change), so a patch change
#    recompiles the touched files only; without a seed it is a cold build. Nothing in the
#    configuration names a path of the clone: the source is reached through the object
#    directory's relative `src` link and j2kcuda through its relative `j2kc-prefix`
#    directory, so an entry can be copied and reused by any clone.
# 3. BUILD_DIR/ffmpeg is a copy of the entry's object directory (made again when the entry
#    changes); this clone's libj2kcuda.a and j2kcuda.h are copied into its j2kc-prefix and
#    ffmpeg/ffprobe are relinked on every run, so the programs always carry this clone's library.
#
# Robustness: one build at a time per cache (flock); an entry counts only once its `complete`
# stamp is written; an interrupted build resumes after the most recently written objects are
# removed; an entry that fails to build is rebuilt cold once; a BUILD_DIR/ffmpeg that fails to
# link is copied again, and if the fresh copy fails too, the entry is rebuilt cold.
#
# Environment: J2KC_DEPS_DIR (download cache), J2KC_CACHE_DIR (build cache), JOBS (make -j,
#              default 2), J2KC_FFMPEG_EXTRA (extra FFmpeg configure flags; part of the key),
#              J2KC_FFMPEG_KEEP (complete cache entries kept, default 3).
set -eu

die() { echo "ffmpeg-build: $*" >&2; exit 1; }
log() { echo "ffmpeg-build: $*"; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-build}
mkdir -p "$B"
B=$(cd "$B" && pwd)
DEPS=${J2KC_DEPS_DIR:-$ROOT/.deps}/ffmpeg-src
CACHE=${J2KC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/j2kcuda}
JOBS=${JOBS:-2}
KEEP=${J2KC_FFMPEG_KEEP:-3}
PATCHES=$(ls "$ROOT"/libavcodec-patch/*.patch 2>/dev/null || true)

[ -f "$B/lib/libj2kcuda.a" ] && [ -f "$B/lib/pkgconfig/j2kcuda.pc" ] ||
    die "$B/lib/libj2kcuda.a missing: run 'make B=$B' first"
command -v flock >/dev/null 2>&1 || die "flock (util-linux) is needed"

# ---- 1. sources ------------------------------------------------------------------------

# Prints the first Debian archive URI configured on this machine (deb822 .sources files first,
# then one-line .list files); security mirrors do not carry trixie main.
find_mirror() {
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk '$1 == "deb" || $1 == "deb-src" {
                 for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) { print $i; break } }' "$f"
    done
}

have_tarballs() {
    ls "$DEPS"/ffmpeg_7.1*.orig.tar.* >/dev/null 2>&1 &&
    ls "$DEPS"/nv-codec-headers_12.1*.orig.tar.* >/dev/null 2>&1
}

fetch_sources() {
    mirror=$(find_mirror | grep -v -- '-security' | grep -v '/debian-ports' | head -n 1)
    [ -n "$mirror" ] || die "no Debian mirror found in /etc/apt/sources.list{,.d}"
    apt_dir=$DEPS/apt
    rm -rf "$apt_dir"
    mkdir -p "$apt_dir/parts" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
    cat > "$apt_dir/parts/trixie-src.sources" <<EOF
Types: deb-src
URIs: $mirror
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    # Private state: only our deb-src entry, our own lists and cache; the download sandbox
    # user cannot write into a root-owned private directory, so downloads run as ourselves.
    set -- -q -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt_dir/parts" \
        -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" \
        -o Dir::State::status=/dev/null -o APT::Sandbox::User="$(id -un)" \
        -o Debug::NoLocking=true
    log "fetching the trixie Sources index (deb-src from the configured mirror)"
    apt-get "$@" update
    (cd "$DEPS" && apt-get "$@" source --download-only --tar-only ffmpeg nv-codec-headers)
    rm -rf "$apt_dir"
}

mkdir -p "$DEPS"
if ! have_tarballs; then
    fetch_sources
    have_tarballs || die "apt did not deliver ffmpeg 7.1.x and nv-codec-headers 12.1.x tarballs"
fi
ff_tar=$(ls "$DEPS"/ffmpeg_7.1*.orig.tar.* | sort -V | tail -n 1)
nv_tar=$(ls "$DEPS"/nv-codec-headers_12.1*.orig.tar.* | sort -V | tail -n 1)
ff_ver=$(basename "$ff_tar" | sed 's/^ffmpeg_\(.*\)\.orig\.tar\..*$/\1/')
log "FFmpeg $ff_ver, $(basename "$nv_tar")"

# ---- 2. configuration and cache key ------------------------------------------------------

# FFmpeg's default configuration. Left out: documentation, ffplay (SDL), debug symbols (half
# the build time and 4x the object size), and autodetection of external libraries (a build
# must not change with what happens to be installed); zlib is enabled explicitly (PNG, TIFF
# deflate, OpenEXR zip, Matroska/MOV compressed headers), and so is NVDEC (-hwaccel cuda:
# decoding into CUDA frames for the zero-copy path; like the CUDA hwcontext it opens the
# driver at run time through nv-codec-headers). j2kcuda is linked statically
# (--pkg-config-flags=--static pulls in its Libs.private).
FLAGS="--disable-doc --disable-ffplay --disable-debug --disable-autodetect --enable-zlib
 --enable-libj2kcuda --enable-ffnvcodec --enable-cuda --enable-nvdec --pkg-config-flags=--static"
if command -v nasm >/dev/null 2>&1; then
    asm=nasm
else
    # FFmpeg without its x86 assembly decodes H.264/HEVC/ProRes several times slower; the
    # Debian package nasm (tests/install-deps.sh installs it) turns it on.
    log "NOTICE: nasm not installed: building without x86 assembly (slower decoders)"
    FLAGS="$FLAGS --disable-x86asm"
    asm=none
fi
FLAGS=$(echo $FLAGS ${J2KC_FFMPEG_EXTRA:-})

# The library's Libs.private (CUDA runtime or not) ends up in FFmpeg's link lines.
pc_private=$(sed -n 's/^Libs.private: *//p' "$B/lib/pkgconfig/j2kcuda.pc")
ff_sum=$(sha256sum "$ff_tar" | cut -c1-16)
nv_sum=$(sha256sum "$nv_tar" | cut -c1-16)
hash16() { sha256sum | cut -c1-16; }
base=$( (echo "$(basename "$ff_tar") $ff_sum $(basename "$nv_tar") $nv_sum"; echo "$FLAGS"
         echo "$pc_private"; ${CC:-cc} --version | head -n 1; echo "$asm") | hash16)
key=$( (echo "$base"; cat $PATCHES /dev/null) | hash16)
NAME=ffmpeg-$ff_ver-$(echo "$base" | cut -c1-8)-$(echo "$key" | cut -c1-8)
ENTRY=$CACHE/$NAME

# ---- helpers ---------------------------------------------------------------------------------

cp_if_changed() { cmp -s "$1" "$2" || cp "$1" "$2"; }

# fill_prefix OBJ: this clone's j2kcuda (static library, header, .pc) and nv-codec-headers in
# OBJ/j2kc-prefix. The .pc files name it relatively, so the paths in FFmpeg's config.mak and
# dependency files hold for every copy of the object directory (compilers run in OBJ).
fill_prefix() {
    p=$1/j2kc-prefix
    mkdir -p "$p/include" "$p/lib/pkgconfig"
    cp_if_changed "$ROOT/j2kcuda/include/j2kcuda.h" "$p/include/j2kcuda.h"
    cp_if_changed "$B/lib/libj2kcuda.a" "$p/lib/libj2kcuda.a"
    sed -e 's|^prefix=.*|prefix=j2kc-prefix|' -e 's|^libdir=.*|libdir=${prefix}/lib|' \
        -e 's|^includedir=.*|includedir=${prefix}/include|' \
        "$B/lib/pkgconfig/j2kcuda.pc" > "$p/lib/pkgconfig/j2kcuda.pc.new"
    cp_if_changed "$p/lib/pkgconfig/j2kcuda.pc.new" "$p/lib/pkgconfig/j2kcuda.pc"
    rm -f "$p/lib/pkgconfig/j2kcuda.pc.new"
    if [ ! -f "$p/lib/pkgconfig/ffnvcodec.pc" ]; then
        # headers and ffnvcodec.pc only (the CUDA hwcontext opens libcuda at run time)
        t=$(mktemp -d "$1/nvch.XXXXXX")
        tar -xf "$nv_tar" -C "$t" --strip-components=1
        make -s -C "$t" PREFIX=j2kc-prefix DESTDIR="$1/" install >/dev/null
        rm -rf "$t"
    fi
}

# unpack_patched DIR: the tarball unpacked into DIR with the patch series applied.
unpack_patched() {
    mkdir -p "$1"
    tar -xf "$ff_tar" -C "$1" --strip-components=1
    # A throwaway repository of its own: inside another work tree, git apply would resolve the
    # paths against that tree and silently skip them.
    git -C "$1" init -q
    for p in $PATCHES; do
        # Check the whole patch before touching anything, then apply it.
        (cd "$1" && git apply --check "$p") || die "patch does not apply to FFmpeg $ff_ver: $p"
        (cd "$1" && git apply "$p")
    done
    rm -rf "$1/.git"
}

# sync_tree NEW OLD: makes OLD's content equal to NEW's, rewriting only the files that differ
# (the others keep their times, so make leaves their objects alone).
sync_tree() {
    LC_ALL=C diff -rq "$1" "$2" | while read -r line; do
        case "$line" in
        "Files $1/"*" and $2/"*" differ")
            f=${line#"Files $1/"}; f=${f%%" and $2/"*}
            cp -p "$1/$f" "$2/$f"; echo "  changed $f" ;;
        "Only in $1"*)
            d=${line#"Only in $1"}; d=${d%%": "*}; n=${line#*": "}
            cp -pR "$1$d/$n" "$2$d/"; echo "  added ${d#/}${d:+/}$n" ;;
        "Only in $2"*)
            d=${line#"Only in $2"}; d=${d%%": "*}; n=${line#*": "}
            rm -rf "${2:?}$d/$n"; echo "  removed ${d#/}${d:+/}$n" ;;
        esac
    done
}

configure_obj() {   # configure_obj OBJ
    log "configuring $1 (log: $1/ffbuild/config.log)"
    # configure looks for documentation tools even with --disable-doc and records them in
    # config.h; every change of config.h recompiles all of FFmpeg, so installing texinfo or
    # rsync on the machine must not change it: configure sees them as absent.
    hide=$1/ffbuild/j2kc-hide
    mkdir -p "$hide"
    for t in makeinfo texi2html rsync; do
        printf '#!/bin/sh\nexit 127\n' > "$hide/$t"
        chmod +x "$hide/$t"
    done
    # shellcheck disable=SC2086
    (cd "$1" && PATH=$hide:$PATH PKG_CONFIG_PATH=j2kc-prefix/lib/pkgconfig ./src/configure $FLAGS \
        >configure.out 2>&1) || {
        tail -n 30 "$1/configure.out"; tail -n 40 "$1/ffbuild/config.log" 2>/dev/null
        return 1; }
}

make_obj() {        # make_obj OBJ TARGETS...: make, its log in OBJ/build.log
    o=$1; shift
    make -C "$o" -j"$JOBS" "$@" >"$o/build.log" 2>&1 || {
        grep -E 'error|Error' "$o/build.log" | head -n 20; tail -n 20 "$o/build.log"
        echo "ffmpeg-build: FFmpeg build failed (log: $o/build.log)" >&2
        return 1; }
    # the encoder wrapper of the patch series compiles without warnings
    grep -A3 'libj2kcudaenc.c.*warning' "$o/build.log" || true
}

# build_entry: makes $ENTRY complete (resumed, seeded or cold).
build_entry() {
    [ -f "$ENTRY/complete" ] && return 0
    if [ -f "$ENTRY/configured" ]; then
        # An interrupted make: objects written in the last minute before it stopped may be
        # truncated; remove them (make deletes its current targets on SIGINT/SIGTERM, not on
        # SIGKILL or power loss).
        log "resuming the interrupted build of $NAME"
        newest=$(find "$ENTRY/obj" -name '*.o' -printf '%T@\n' | sort -n | tail -n 1 | cut -d. -f1)
        if [ -n "$newest" ]; then
            find "$ENTRY/obj" \( -name '*.o' -o -name '*.d' -o -name '*.a' \) \
                -newermt "@$((newest - 60))" -exec rm -f {} +
        fi
    else
        rm -rf "$ENTRY"
        mkdir -p "$ENTRY"
        seed=
        [ -n "${COLD:-}" ] || seed=$(ls -td "$CACHE"/ffmpeg-"$ff_ver"-"$(echo "$base" | cut -c1-8)"-*/complete 2>/dev/null |
               head -n 1 || true)
        seed=${seed%/complete}
        if [ -n "$seed" ]; then
            log "new patch series: seeding $NAME from $(basename "$seed")"
            cp -a "$seed/src" "$seed/obj" "$ENTRY/"
            unpack_patched "$ENTRY/new"
            # (the FATE references copied in below are not part of the series: not listed)
            sync_tree "$ENTRY/new" "$ENTRY/src" | grep -v '^  [a-z]* tests/ref/' || true
            rm -rf "$ENTRY/new"
        else
            log "cold build of $NAME in $CACHE ($(echo $PATCHES | wc -w) patches; JOBS=$JOBS)"
            unpack_patched "$ENTRY/src"
            mkdir -p "$ENTRY/obj"
            ln -s ../src "$ENTRY/obj/src"
        fi
        fill_prefix "$ENTRY/obj"
        configure_obj "$ENTRY/obj" || return 1
        touch "$ENTRY/configured"
    fi
    fill_prefix "$ENTRY/obj"
    start=$(date +%s)
    make_obj "$ENTRY/obj" all || return 1
    log "compiled $NAME in $(( $(date +%s) - start )) s"
    touch "$ENTRY/complete"
}

# install_clone: BUILD_DIR/ffmpeg as a copy of the entry's object directory, with this clone's
# j2kcuda, ffmpeg and ffprobe relinked.
install_clone() {
    O=$B/ffmpeg
    if [ "$(cat "$O/.j2kc-entry" 2>/dev/null)" != "$NAME" ] || [ ! -f "$O/ffbuild/config.mak" ]; then
        log "copying $NAME into $O"
        rm -rf "$O" "$O.new" "$B/ffmpeg-src" "$B/ffnvcodec"
        cp -a "$ENTRY/obj" "$O.new"
        rm -f "$O.new/src"
        ln -s "$ENTRY/src" "$O.new/src"
        echo "$NAME" > "$O.new/.j2kc-entry"
        mv "$O.new" "$O"
    fi
    ln -sfn "$ENTRY/src" "$B/ffmpeg-src"
    fill_prefix "$O"
    rm -f "$O/ffmpeg" "$O/ffmpeg_g" "$O/ffprobe" "$O/ffprobe_g"
    make_obj "$O" ffmpeg ffprobe || return 1
    "$O/ffmpeg" -hide_banner -h encoder=jpeg2000_cuda >/dev/null 2>&1 || {
        echo "ffmpeg-build: the built ffmpeg lacks jpeg2000_cuda" >&2; return 1; }
}

# ---- 3. build --------------------------------------------------------------------------------

mkdir -p "$CACHE"
exec 9>"$CACHE/ffmpeg.lock"
if ! flock -n 9; then
    log "waiting for another FFmpeg build using $CACHE"
    flock 9
fi
if [ -f "$ENTRY/complete" ]; then
    log "cached: $ENTRY"
fi
if ! build_entry; then
    # a resumed or seeded entry that does not build: once more from scratch
    log "rebuilding $NAME from scratch"
    rm -rf "$ENTRY"
    COLD=1
    build_entry || die "FFmpeg build failed"
fi
if ! install_clone; then
    log "copying $NAME into $B/ffmpeg again"
    rm -rf "$B/ffmpeg"
    if ! install_clone; then
        # the copy of a fresh entry does not link: the entry is damaged
        log "the cache entry $NAME is damaged: rebuilding it from scratch"
        rm -rf "$ENTRY" "$B/ffmpeg"
        COLD=1
        { build_entry && install_clone; } || die "FFmpeg build failed"
    fi
fi
touch "$ENTRY/complete"     # the time of last use, for the clean-up below

# Keeps the KEEP most recently used complete entries (and the current one); drops the rest,
# and incomplete entries other than the current one.
ls -td "$CACHE"/ffmpeg-7.1*/ 2>/dev/null | while read -r e; do
    e=${e%/}
    [ "$e" = "$ENTRY" ] && continue
    if [ ! -f "$e/complete" ]; then rm -rf "$e"; continue; fi
    KEEP=$((KEEP - 1))
    [ "$KEEP" -gt 0 ] || { log "removing old cache entry $(basename "$e")"; rm -rf "$e"; }
done

# FATE references live in this repository (fate-refs/fate, fate-refs/vsynth: the same layout as
# tests/ref; tests/ffmpeg/fate.sh GEN=1 regenerates them).
for d in fate vsynth; do
    for r in "$ROOT/fate-refs/$d"/*; do
        [ -f "$r" ] || continue
        mkdir -p "$ENTRY/src/tests/ref/$d"
        cp_if_changed "$r" "$ENTRY/src/tests/ref/$d/$(basename "$r")"
    done
done
flock -u 9

log "built $B/ffmpeg/ffmpeg and ffprobe (FFmpeg $ff_ver, cache $ENTRY)"
cat <<EOF

For your own FFmpeg with this encoder: j2kcuda's .pc on PKG_CONFIG_PATH, nv-codec-headers >= 12.1
installed for CUDA frames (GPL builds too: --enable-gpl needs no --enable-nonfree):
  PKG_CONFIG_PATH=$B/lib/pkgconfig ./configure --enable-libj2kcuda --enable-ffnvcodec --enable-cuda ...
EOF
