#!/bin/sh
# Installs what `make check` needs from Debian when it is missing and we are root; otherwise
# lists what is missing and carries on (the tests needing it then FAIL and say why).
#   decoders:  opj_decompress (libopenjp2-tools), grk_decompress (grokj2k-tools),
#              ojph_expand (openjph-tools: HTJ2K, tests/ht.sh),
#              ffmpeg + ffprobe (ffmpeg)
#   tools:     xz (xz-utils), cc (gcc), opj_compress/grk_compress (same packages as above),
#              clang (clang; libFuzzer), openjpeg.h (libopenjp2-7-dev; the encode fuzz target)
#   FFmpeg build (tools/ffmpeg-build.sh): nasm (x86 assembly), zlib.h (zlib1g-dev), pkg-config
#   MXF tests: mediainfo (mediainfo); asdcplib's build (tools/asdcplib-build.sh): cmake, c++
#              (g++), OpenSSL headers (libssl-dev)
#   scaling.sh: GNU parallel (parallel)
missing_cmds=
missing_pkgs=
need() {    # need COMMAND PACKAGE
    if ! command -v "$1" >/dev/null 2>&1; then
        missing_cmds="$missing_cmds $1"
        case " $missing_pkgs " in *" $2 "*) ;; *) missing_pkgs="$missing_pkgs $2" ;; esac
    fi
}
need opj_decompress libopenjp2-tools
need opj_compress   libopenjp2-tools
need grk_decompress grokj2k-tools
need grk_compress   grokj2k-tools
need ffmpeg         ffmpeg
need ffprobe        ffmpeg
need ojph_expand    openjph-tools
need xz             xz-utils
need cc             gcc
need nasm           nasm
need pkg-config     pkg-config
[ -f /usr/include/zlib.h ] || { missing_cmds="$missing_cmds zlib.h"; missing_pkgs="$missing_pkgs zlib1g-dev"; }
need mediainfo      mediainfo
need cmake          cmake
need c++            g++
need parallel       parallel
if [ ! -f /usr/include/openssl/evp.h ]; then
    missing_cmds="$missing_cmds openssl/evp.h"
    missing_pkgs="$missing_pkgs libssl-dev"
fi
need clang          clang              # the fuzz targets (libFuzzer)
# the fuzz target of whole encodes decodes with OpenJPEG's library
[ -f /usr/include/openjpeg-2.5/openjpeg.h ] || pkg-config --exists libopenjp2 2>/dev/null || {
    missing_cmds="$missing_cmds openjpeg.h"; missing_pkgs="$missing_pkgs libopenjp2-7-dev"; }

if [ -z "$missing_cmds" ]; then
    echo "install-deps: all test tools present"
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: installing$missing_pkgs (missing:$missing_cmds)"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y --no-install-recommends $missing_pkgs; then
        apt-get update && apt-get install -y --no-install-recommends $missing_pkgs ||
            echo "install-deps: WARNING: could not install$missing_pkgs; the tests that need them will fail"
    fi
else
    echo "install-deps: WARNING: missing$missing_cmds (Debian packages:$missing_pkgs);"
    echo "install-deps: not root, not installing: the tests that need them will FAIL"
fi
exit 0
