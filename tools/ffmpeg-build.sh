#!/bin/sh
# Builds FFmpeg 7.1.x with the jpeg2000_cuda encoder against the j2kcuda library in BUILD_DIR.
#
#   tools/ffmpeg-build.sh BUILD_DIR        (what `make ffmpeg` runs; BUILD_DIR defaults to build)
#
# 1. Fetches the upstream tarballs of Debian trixie's ffmpeg (any 7.1.x) and nv-codec-headers
#    (12.1.x) SOURCE packages with apt-get, using the Debian mirror this machine is already
#    configured for, and private apt state (the system apt configuration is never touched).
#    apt checks every tarball against the signed Sources index. Downloads are cached in
#    .deps/ffmpeg-src (ignored by git), so reruns need no network.
# 2. Unpacks FFmpeg into BUILD_DIR/ffmpeg-src, applies libavcodec-patch/*.patch, copies the
#    FATE references from fate-refs/ and installs nv-codec-headers into BUILD_DIR/ffnvcodec.
# 3. Configures a minimal FFmpeg (what the encoder and its tests need) out of tree in
#    BUILD_DIR/ffmpeg and builds BUILD_DIR/ffmpeg/ffmpeg and ffprobe.
#
# Environment: J2KC_DEPS_DIR (download cache), JOBS (make -j, default 2),
#              J2KC_FFMPEG_EXTRA (extra FFmpeg configure flags).
set -eu

die() { echo "ffmpeg-build: $*" >&2; exit 1; }
log() { echo "ffmpeg-build: $*"; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-build}
mkdir -p "$B"
B=$(cd "$B" && pwd)
DEPS=${J2KC_DEPS_DIR:-$ROOT/.deps}/ffmpeg-src
JOBS=${JOBS:-2}
PATCHES=$(ls "$ROOT"/libavcodec-patch/*.patch 2>/dev/null || true)

[ -f "$B/lib/pkgconfig/j2kcuda.pc" ] || die "$B/lib/pkgconfig/j2kcuda.pc missing: run 'make B=$B' first"
# The shared library's soname is libj2kcuda.so.0; the build directory has only libj2kcuda.so.
if [ -f "$B/lib/libj2kcuda.so" ]; then
    soname=$(objdump -p "$B/lib/libj2kcuda.so" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
    [ -z "$soname" ] || [ -e "$B/lib/$soname" ] || ln -s libj2kcuda.so "$B/lib/$soname"
fi

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

# ---- 2. unpack and patch -----------------------------------------------------------------

# nv-codec-headers: headers and ffnvcodec.pc only (the CUDA hwcontext opens libcuda at run time).
if [ ! -f "$B/ffnvcodec/lib/pkgconfig/ffnvcodec.pc" ]; then
    rm -rf "$B/nvch"
    mkdir -p "$B/nvch"
    tar -xf "$nv_tar" -C "$B/nvch" --strip-components=1
    make -s -C "$B/nvch" PREFIX="$B/ffnvcodec" install >/dev/null
    rm -rf "$B/nvch"
fi

SRC=$B/ffmpeg-src
stamp=$( (echo "$ff_tar"; cat $PATCHES /dev/null) | cksum | cut -d' ' -f1)
if [ "$(cat "$SRC/.j2kc-stamp" 2>/dev/null)" != "$stamp" ]; then
    log "unpacking $(basename "$ff_tar") into $SRC and applying $(echo $PATCHES | wc -w) patches"
    rm -rf "$SRC"
    mkdir -p "$SRC"
    tar -xf "$ff_tar" -C "$SRC" --strip-components=1
    # A throwaway repository of its own: inside another work tree, git apply would resolve the
    # paths against that tree and silently skip them.
    git -C "$SRC" init -q
    for p in $PATCHES; do
        # Check the whole patch before touching anything, then apply it.
        (cd "$SRC" && git apply --check "$p") || die "patch does not apply to FFmpeg $ff_ver: $p"
        (cd "$SRC" && git apply "$p")
        log "applied $(basename "$p")"
    done
    echo "$stamp" > "$SRC/.j2kc-stamp"
fi
# FATE references live in this repository (fate-refs/fate, fate-refs/vsynth: the same layout as
# tests/ref; tests/ffmpeg/fate.sh GEN=1 regenerates them).
for d in fate vsynth; do
    for r in "$ROOT/fate-refs/$d"/*; do
        [ -f "$r" ] || continue
        mkdir -p "$SRC/tests/ref/$d"
        cmp -s "$r" "$SRC/tests/ref/$d/$(basename "$r")" || cp "$r" "$SRC/tests/ref/$d/"
    done
done

# ---- 3. configure and build --------------------------------------------------------------

COMMON_FLAGS="--enable-libj2kcuda --enable-ffnvcodec --enable-cuda"
MIN_FLAGS="--disable-everything --disable-doc --disable-ffplay --disable-x86asm --disable-autodetect
 --disable-debug --enable-ffmpeg --enable-ffprobe
 --enable-protocol=file,pipe,fd,md5 --enable-indev=lavfi
 --enable-demuxer=rawvideo,image2,image2pipe,image_j2k_pipe,mxf,avi,nut,mov,framecrc
 --enable-muxer=rawvideo,image2,image2pipe,mxf,mxf_opatom,avi,nut,mov,framemd5,md5,framecrc,crc,null
 --enable-decoder=rawvideo,jpeg2000,pgmyuv,wrapped_avframe,pcm_s16le
 --enable-encoder=rawvideo,jpeg2000,jpeg2000_cuda,wrapped_avframe,pgmyuv,pcm_s16le
 --enable-parser=jpeg2000
 --enable-filter=testsrc,testsrc2,scale,format,null,setpts,fps,trim,hwupload_cuda,hwdownload,hwupload,split,select,setparams
 --enable-bsf=null"
FLAGS="$MIN_FLAGS $COMMON_FLAGS ${J2KC_FFMPEG_EXTRA:-}
 --extra-ldflags=-Wl,-rpath,$B/lib"

OBJ=$B/ffmpeg
mkdir -p "$OBJ"
export PKG_CONFIG_PATH="$B/lib/pkgconfig:$B/ffnvcodec/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
cfg_stamp=$( (echo "$stamp"; echo $FLAGS; cat "$B/lib/pkgconfig/j2kcuda.pc") | cksum | cut -d' ' -f1)
if [ "$(cat "$OBJ/.j2kc-cfg" 2>/dev/null)" != "$cfg_stamp" ] || [ ! -f "$OBJ/config.mak" ]; then
    log "configuring (log: $OBJ/ffbuild/config.log)"
    # shellcheck disable=SC2086
    (cd "$OBJ" && "$SRC/configure" $FLAGS >"$OBJ/configure.out" 2>&1) || {
        tail -n 30 "$OBJ/configure.out"; tail -n 40 "$OBJ/ffbuild/config.log" 2>/dev/null
        die "FFmpeg configure failed"; }
    echo "$cfg_stamp" > "$OBJ/.j2kc-cfg"
fi
log "building in $OBJ (make -j$JOBS)"
make -C "$OBJ" -j"$JOBS" ffmpeg ffprobe >"$OBJ/build.log" 2>&1 || {
    grep -E 'error|Error' "$OBJ/build.log" | head -n 20; tail -n 20 "$OBJ/build.log"
    die "FFmpeg build failed (log: $OBJ/build.log)"; }
grep -A3 'libj2kcudaenc.c.*warning' "$OBJ/build.log" || true
"$OBJ/ffmpeg" -hide_banner -h encoder=jpeg2000_cuda >/dev/null || die "built ffmpeg lacks jpeg2000_cuda"
log "built $OBJ/ffmpeg and $OBJ/ffprobe (FFmpeg $ff_ver)"
cat <<EOF

For a complete FFmpeg with this encoder (j2kcuda's .pc on PKG_CONFIG_PATH, and nv-codec-headers
>= 12.1 for CUDA frames; add --enable-nonfree only together with --enable-gpl):
  PKG_CONFIG_PATH=$B/lib/pkgconfig:$B/ffnvcodec/lib/pkgconfig \\
  ./configure --enable-libj2kcuda --enable-ffnvcodec --enable-cuda [--enable-gpl --enable-nonfree] ...
EOF
