#!/bin/bash
# The licence of an FFmpeg with jpeg2000_cuda (issue 31, points 3 and 5): the encoder is free to
# ship in GPL and LGPL builds alike.
#  - configure: FFmpeg 7.1 with the patch series, configured in scratch directories with
#    `--enable-gpl --enable-libj2kcuda --enable-ffnvcodec --enable-cuda` (no --enable-nonfree),
#    exits 0 with CONFIG_GPL 1, CONFIG_NONFREE 0, CONFIG_LIBJ2KCUDA 1 and the encoder enabled;
#    the same without --enable-gpl (LGPL) too. An external library that FFmpeg's configure lists
#    as nonfree (EXTERNAL_LIBRARY_NONFREE_LIST) makes the GPL configure die, one listed as GPL
#    the LGPL one; a dependency on a nonfree component (cuda_nvcc, cuda_sdk) leaves the encoder
#    disabled. FFmpeg's link line (EXTRALIBS of ffbuild/config.mak) names no CUDA library.
#  - the ffmpeg of BUILD_DIR/ffmpeg (a static link of the library): `ldd` lists no libcuda,
#    libcudart or libnv*, no cu* driver symbol is imported, and it has the jpeg2000_cuda
#    encoder. Only meaningful for a library built with CUDA; skipped otherwise.
#   tests/ffmpeg/license.sh [BUILD_DIR]
# Reuses the patched source tree tools/ffmpeg-build.sh made (BUILD_DIR/ffmpeg-src, a link into
# its cache; only read: configure runs out of tree). J2KC_LICENSE_FFSRC names another source
# tree (a scratch copy with an edited configure, to see the configure checks fail).
. "$(dirname "$0")/common.inc"
ff_require

SRC=${J2KC_LICENSE_FFSRC:-$BUILD/ffmpeg-src}
PREFIX=$BUILD/ffmpeg/j2kc-prefix      # nv-codec-headers' ffnvcodec.pc (relative: j2kc-prefix)
LIB=$BUILD/lib/libj2kcuda.a

# ---- configure, GPL and LGPL ---------------------------------------------------------------

# What issue 31 names, plus what keeps configure quick and independent of the machine's
# libraries; --pkg-config-flags=--static as tools/ffmpeg-build.sh links the library.
ISSUE_FLAGS=(--enable-libj2kcuda --enable-ffnvcodec --enable-cuda)
QUICK_FLAGS=(--disable-autodetect --disable-doc --disable-programs --disable-x86asm
             --pkg-config-flags=--static)

# configure_ff DIR FLAGS...: FFmpeg's configure in the scratch object directory DIR; its exit
# status in DIR/rc, its output in DIR/configure.out, its run time in DIR/secs.
configure_ff() {
    local d=$1 t0 rc
    shift
    mkdir -p "$d"
    ln -s "$PREFIX" "$d/j2kc-prefix"
    t0=$(date +%s)
    (cd "$d" && PKG_CONFIG_PATH=$BUILD/lib/pkgconfig:j2kc-prefix/lib/pkgconfig \
        "$SRC/configure" "$@" "${QUICK_FLAGS[@]}" > configure.out 2>&1)
    rc=$?
    echo $(( $(date +%s) - t0 )) > "$d/secs"
    echo $rc > "$d/rc"
}

# config_is DIR NAME VALUE: whether DIR's config.h or config_components.h defines NAME as VALUE.
config_is() {
    cat "$1/config.h" "$1/config_components.h" 2>/dev/null | grep -qx "#define $2 $3"
}

# check_config TEST DIR GPL: the result of configure_ff in DIR (GPL: 1 or 0).
check_config() {
    local t=$1 d=$2 gpl=$3 why='' n v libs
    if [ "$(cat "$d/rc")" != 0 ]; then
        why=$(grep -m 2 -iE 'error|nonfree|gpl' "$d/configure.out" | paste -sd ' ')
        fail "$t" "configure exited $(cat "$d/rc"): $why"
        return
    fi
    for nv in "CONFIG_GPL $gpl" "CONFIG_NONFREE 0" "CONFIG_LIBJ2KCUDA 1" \
              "CONFIG_JPEG2000_CUDA_ENCODER 1" "CONFIG_FFNVCODEC 1" "CONFIG_CUDA 1"; do
        n=${nv% *} v=${nv#* }
        config_is "$d" "$n" "$v" || why="$why $n is not $v;"
    done
    libs=$(grep '^EXTRALIBS' "$d/ffbuild/config.mak" 2>/dev/null |
           grep -oE -e '-l(cuda|cudart|nv)[^ ]*' | sort -u | paste -sd ' ')
    [ -n "$libs" ] && why="$why FFmpeg links $libs;"
    if [ -n "$why" ]; then
        why=${why# }; fail "$t" "${why%;}"
    else
        ok "$t" "$(sed -n 's/^License: //p' "$d/configure.out"), no --enable-nonfree, $(
            cat "$d/secs") s"
    fi
}

if [ ! -x "$SRC/configure" ]; then
    # the link into tools/ffmpeg-build.sh's cache outlives an entry the cache dropped
    skip configure-gpl "no patched FFmpeg source at $SRC (make ffmpeg B=$BUILD makes it again)"
    skip configure-lgpl "no patched FFmpeg source at $SRC"
elif [ ! -f "$BUILD/lib/pkgconfig/j2kcuda.pc" ] ||
     [ ! -f "$PREFIX/lib/pkgconfig/ffnvcodec.pc" ]; then
    fail configure "j2kcuda.pc or ffnvcodec.pc missing ($BUILD/lib/pkgconfig, $PREFIX/...)"
elif ! have pkg-config; then
    skip configure-gpl "no pkg-config (FFmpeg's configure finds libj2kcuda with it)"
    skip configure-lgpl "no pkg-config"
else
    # the two runs at once: most of configure is one shell process each
    configure_ff "$WORK/gpl" --enable-gpl "${ISSUE_FLAGS[@]}" &
    configure_ff "$WORK/lgpl" "${ISSUE_FLAGS[@]}" &
    wait
    check_config configure-gpl "$WORK/gpl" 1
    check_config configure-lgpl "$WORK/lgpl" 0
fi

# ---- the ffmpeg binary -----------------------------------------------------------------------

if ! have ldd || ! have nm || ! have ar; then
    skip ldd "no ldd, nm or ar (binutils)"
elif ! ar t "$LIB" | grep -qx 'cuda_code.o'; then
    # cuda_code.o: the embedded kernels, in the library only when it is built with CUDA
    skip ldd "the library in $BUILD was built without CUDA (HAVE_CUDA=0): nothing to check"
else
    linked=$(ldd "$FFMPEG" | grep -E 'libcuda|libcudart|libnv' | awk '{print $1}' | paste -sd ' ')
    imported=$(nm -D --undefined-only "$FFMPEG" | awk '{print $NF}' | grep -E '^cu[A-Z]' |
               paste -sd ' ')
    if [ -n "$linked" ]; then
        fail ldd "$FFMPEG links $linked"
    elif [ -n "$imported" ]; then
        fail ldd "$FFMPEG imports CUDA driver symbols: $imported"
    else
        ok ldd "no CUDA library in ldd of ffmpeg, no cu* symbol imported"
    fi
fi
"$FFMPEG" -hide_banner -h encoder=jpeg2000_cuda > "$WORK/help" 2>&1
if grep -q '^Encoder jpeg2000_cuda' "$WORK/help"; then
    ok encoder "ffmpeg -h encoder=jpeg2000_cuda"
else
    fail encoder "ffmpeg has no jpeg2000_cuda encoder: $(head -n 2 "$WORK/help" | tr '\n' ' ')"
fi
finish
