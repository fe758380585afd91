#!/bin/sh
# frames.sh SRC_DIR OUT_DIR: makes the benchmark frames in OUT_DIR from the compact sources that
# tools/fetch-peers.sh put in SRC_DIR (.dev/frames); see bench/README.md, "Frames".
#   dci4k_*  4096x2160 DCI X'Y'Z' 12-bit 4:4:4 PPM      (painting, bench/mkframes.py 4k)
#   imf4k_*  4096x2160 Y'CbCr 10-bit 4:2:2 planar LE    (painting, bench/mkframes.py 4k)
#   dci2k_*  1998x1080 DCI X'Y'Z' 12-bit PPM            (X_4 decoded by opj_decompress, else painting)
#   grain_*  2048x857  DCI X'Y'Z' 12-bit PPM, film grain (X_5 StEM decoded, else painting + grain)
# Prepared frames SRC_DIR/<name>.{ppm,yuv}.xz, when present, are used as they are.
# Environment: PEERS (folder with bin/ and lib/ from fetch-peers.sh; else tools on PATH),
#              PYTHON (a python3 with numpy; else the first python3 on PATH that has it).
#
# frames.sh --classes CLASS NB SRC_DIR OUT_DIR: the NB frames of one content class
# (bench/classes.py) in OUT_DIR, from the photographs and the console font in SRC_DIR.
set -eu
MODE=frames
if [ "${1:-}" = --classes ]; then
    MODE=classes CLASS=$2 NB=$3
    shift 3
fi
SRC=$(cd "$1" && pwd)
OUT=$2
mkdir -p "$OUT"

if [ -n "${PEERS:-}" ] && [ -x "$PEERS/bin/opj_decompress" ]; then
    OPJ_DEC="env LD_LIBRARY_PATH=$PEERS/lib $PEERS/bin/opj_decompress"
    DJPEG="env LD_LIBRARY_PATH=$PEERS/lib $PEERS/bin/djpeg"
else
    OPJ_DEC=opj_decompress
    DJPEG=djpeg
fi
if [ -z "${PYTHON:-}" ]; then
    for p in python3 /usr/bin/python3 /opt/torch/.venv/bin/python3; do
        if "$p" -c 'import numpy' >/dev/null 2>&1; then PYTHON=$p; break; fi
    done
fi

if [ $MODE = classes ]; then
    [ -n "${PYTHON:-}" ] || { echo "frames: no python3 with numpy" >&2; exit 1; }
    mkdir -p "$OUT/src"
    for p in Aqua Garden LadyBird TwoWings YellowFlower Wood; do
        case $CLASS in noise|flat|cg|text) break ;; esac
        [ -f "$SRC/$p.jpg" ] || { echo "frames: $SRC/$p.jpg missing (run tools/fetch-peers.sh)" >&2; exit 1; }
        $DJPEG -pnm -outfile "$OUT/src/$p.ppm" "$SRC/$p.jpg"
    done
    font=$SRC/Uni2-Terminus32x16.psf.gz
    [ "$CLASS" != text ] || [ -f "$font" ] || { echo "frames: $font missing (run tools/fetch-peers.sh)" >&2; exit 1; }
    "$PYTHON" "$(dirname "$0")/classes.py" --frames "$NB" --only "$CLASS" "$OUT/src" "$font" "$OUT" > /dev/null
    rm -rf "$OUT/src"
    # the checksums were made with 12 frames a class (the photographs' pans depend on NB)
    if [ "$NB" = 12 ] && [ -f "$SRC/SHA256SUMS-classes" ] && grep -q " ${CLASS}_" "$SRC/SHA256SUMS-classes"; then
        if (cd "$OUT" && grep " ${CLASS}_" "$SRC/SHA256SUMS-classes" | sha256sum --quiet -c - >/dev/null 2>&1); then
            echo "frames: $CLASS: sha256 match SHA256SUMS-classes"
        else
            echo "frames: WARNING: $CLASS frames differ from SHA256SUMS-classes (other numpy/libm?)"
        fi
    fi
    ls "$OUT" | grep -c "^${CLASS}_" | sed "s/^/frames: $CLASS: /; s/$/ frames/"
    exit 0
fi

for f in "$SRC"/*.ppm.xz "$SRC"/*.yuv.xz; do
    [ -f "$f" ] || continue
    b=$(basename "$f" .xz)
    [ -f "$OUT/$b" ] || { echo "frames: $b (prepared)"; xz -dc "$f" > "$OUT/$b"; }
done

have() { ls "$OUT"/$1 >/dev/null 2>&1; }

painting=$SRC/Elephants_5640x3172.jpg
if ! have 'dci4k_*' || { ! have 'dci2k_*' && [ ! -f "$SRC/X_4_2K_24_185_CBR_WB_000.j2k" ]; }; then
    [ -f "$painting" ] || { echo "frames: $painting missing (run tools/fetch-peers.sh)" >&2; exit 1; }
    [ -n "${PYTHON:-}" ] || { echo "frames: no python3 with numpy" >&2; exit 1; }
    $DJPEG -pnm -outfile "$OUT/painting8.ppm" "$painting"
fi
if ! have 'dci4k_*'; then
    echo "frames: 4K frames from the painting (mkframes.py 4k)"
    "$PYTHON" "$(dirname "$0")/mkframes.py" 4k "$OUT/painting8.ppm" "$OUT"
fi
if [ -f "$SRC/X_4_2K_24_185_CBR_WB_000.j2k" ]; then
    have 'dci2k_*' || { echo "frames: 2K frame from X_4 (opj_decompress)";
        $OPJ_DEC -quiet -i "$SRC/X_4_2K_24_185_CBR_WB_000.j2k" -o "$OUT/dci2k_bar_1998x1080_xyz12.ppm" >/dev/null; }
    [ -f "$SRC/X_5_2K_24_235_CBR_STEM24_000.j2k" ] && { have 'grain_*' || { echo "frames: grain frame from X_5 (opj_decompress)";
        $OPJ_DEC -quiet -i "$SRC/X_5_2K_24_235_CBR_STEM24_000.j2k" -o "$OUT/grain_stem_2048x857_xyz12.ppm" >/dev/null; }; }
fi
if ! have 'dci2k_*' || ! have 'grain_*'; then
    echo "frames: 2K and grain frames from the painting (mkframes.py 2k)"
    "$PYTHON" "$(dirname "$0")/mkframes.py" 2k "$OUT/painting8.ppm" "$OUT"
fi
rm -f "$OUT/painting8.ppm"
if [ -f "$SRC/SHA256SUMS" ]; then
    if (cd "$OUT" && sha256sum --quiet -c "$SRC/SHA256SUMS" 2>/dev/null); then
        echo "frames: sha256 match the frames made by fetch-peers.sh"
    else
        echo "frames: WARNING: frames differ from those made by fetch-peers.sh (other numpy/libm?)"
    fi
fi
ls -l "$OUT"
