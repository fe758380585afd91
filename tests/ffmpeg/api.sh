#!/bin/bash
# Builds tests/ffmpeg/api_test.c against the FFmpeg libraries of BUILD_DIR/ffmpeg (static, as
# `make ffmpeg` builds them) and runs it: draining, flush in flight, pts/opaque, pixel format
# check, CUDA frames (GPU machines only).
#   tests/ffmpeg/api.sh [BUILD_DIR]
. "$(dirname "$0")/common.inc"
ff_require

OBJ=$BUILD/ffmpeg
SRC=$BUILD/ffmpeg-src
extralibs() { sed -n "s/^EXTRALIBS-$1=//p" "$OBJ/ffbuild/config.mak"; }
# FFmpeg's full configuration: some decoders in libavcodec use libswresample
SWR=; [ -f "$OBJ/libswresample/libswresample.a" ] && SWR=$OBJ/libswresample/libswresample.a
# in OBJ: the library paths of FFmpeg's config.mak are relative to it (j2kc-prefix/lib)
if ! (cd "$OBJ" && ${CC:-cc} -std=c99 -O1 -Wall -I"$SRC" -I"$OBJ" -o "$WORK/api_test" "$FF_TESTS/api_test.c" \
        "$OBJ/libavcodec/libavcodec.a" $SWR "$OBJ/libavutil/libavutil.a" \
        $(extralibs avcodec) $(extralibs swresample) $(extralibs avutil)) 2> "$WORK/cc.log"; then
    fail build "api_test.c does not build: $(grep -m 3 error "$WORK/cc.log" | tr '\n' ' ')"
    finish
fi
"$WORK/api_test" 2>&1 | grep -v '^#'
rc=${PIPESTATUS[0]}
if signalled "$rc"; then fail run "api_test crashed (exit $rc)"; fi
[ "$rc" = 0 ] || FAILED=1
finish
