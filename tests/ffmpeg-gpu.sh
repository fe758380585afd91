#!/bin/bash
# FFmpeg on a GPU machine (CI has no GPU): builds FFmpeg 7.1 with jpeg2000_cuda against the CUDA
# build in BUILD_DIR, runs tests/ffmpeg/*.sh there (CUDA frames included), then a 4K DCI encode
# through ffmpeg with the CUDA backend, decoded back, and the zero-copy CUDA-frames path.
# Needs the FFmpeg sources cached in .deps/ffmpeg-src (tools/ffmpeg-build.sh fetches them on a
# machine with network; carry the folder to a GPU machine without one).
# Usage: tests/ffmpeg-gpu.sh BUILD_DIR [OUT_DIR]
set -u
B=${1:-build}
# one CUDA hardware queue per frame in flight, which the library recommends and leaves to the
# application (doc/ffmpeg.md); kept when the caller set it
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-8}
OUT=${2:-${OUT:-$B/ffmpeg-gpu}}
mkdir -p "$OUT"
fail=0
JOBS=$(nproc) tools/ffmpeg-build.sh "$B" > "$OUT/ffbuild.log" 2>&1 || { tail -n 30 "$OUT/ffbuild.log"; exit 1; }
FF=$B/ffmpeg/ffmpeg
for s in $(ls tests/ffmpeg/*.sh | xargs -n1 basename | sed 's/\.sh$//'); do
    JOBS=$(nproc) timeout 300 bash tests/ffmpeg/$s.sh "$B" > "$OUT/t-$s.log" 2>&1
    rc=$?
    echo "== tests/ffmpeg/$s.sh: exit $rc, $(grep -c '^ok' "$OUT/t-$s.log") ok, $(grep -c '^FAIL' "$OUT/t-$s.log") FAIL, $(grep -c '^skip' "$OUT/t-$s.log") skip"
    grep -E '^(FAIL|skip)' "$OUT/t-$s.log" | head -n 10
    [ $rc = 0 ] || [ $rc = 77 ] || fail=1
done

echo "== 4K DCI through ffmpeg, CUDA backend (48 frames, testsrc2 -> xyz12le)"
T=/tmp/ffgpu; rm -rf $T; mkdir -p $T/j2c
t0=$(date +%s.%N)
"$FF" -hide_banner -loglevel warning -y -f lavfi -i testsrc2=s=4096x2160:r=24:d=2 -vf format=xyz12le \
    -c:v jpeg2000_cuda -backend cuda -profile:v dcinema_4k -b:v 250M -r 24 -f mxf $T/dci4k.mxf || fail=1
t1=$(date +%s.%N)
"$FF" -hide_banner -loglevel error -y -i $T/dci4k.mxf -c:v copy -f image2 $T/j2c/%06d.j2c || fail=1
n=$(ls $T/j2c | wc -l)
"$B/bin/j2kc-check" --fps 24 $T/j2c/*.j2c > $OUT/check4k.log || { echo "FAIL j2kc-check"; fail=1; }
max=$(for f in $T/j2c/*.j2c; do stat -c %s "$f"; done | sort -n | tail -n 1)
# decoded back by FFmpeg's native decoder: every frame, compared with the source frames (the
# minimal build has no psnr filter: framemd5 of both is compared for the count, and a
# sample-wise PSNR is computed on one frame from raw decodes)
dec=$("$FF" -hide_banner -v error -i $T/dci4k.mxf -f framemd5 - 2>&1 | grep -vc '^#')
echo "decoded back by FFmpeg: $dec frames"
[ "$dec" = 48 ] || { echo "FAIL decode back: $dec frames"; fail=1; }
"$FF" -hide_banner -v error -y -i $T/dci4k.mxf -frames:v 1 -f rawvideo -pix_fmt xyz12le $T/dec1.raw || fail=1
"$FF" -hide_banner -v error -y -f lavfi -i testsrc2=s=4096x2160:r=24:d=2 -vf format=xyz12le -frames:v 1 \
    -f rawvideo $T/src1.raw || fail=1
psnr=$(python3 -c "
import numpy as np
a = np.fromfile('$T/dec1.raw', '<u2').astype(float); b = np.fromfile('$T/src1.raw', '<u2').astype(float)
m = ((a - b) ** 2).mean(); print('%.2f' % (10 * np.log10(65535.0 ** 2 / m)) if m else 'inf')" 2>/dev/null)
fps=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", n / (b - a) }')
echo "frames $n, largest $max bytes (limit 1302083), PSNR (frame 1, 16-bit container) ${psnr:-n/a} dB, $fps fps wall (ffmpeg incl. testsrc2 and xyz conversion)"

echo "== zero copy: hwupload_cuda frames vs system-memory frames (same bytes expected)"
"$FF" -hide_banner -loglevel warning -y -f lavfi -i testsrc2=s=1920x1080:r=24:d=1 -vf format=yuv420p \
    -c:v jpeg2000_cuda -backend cuda -b:v 200M -f image2 $T/sys_%03d.j2c || fail=1
"$FF" -hide_banner -loglevel warning -y -init_hw_device cuda=gpu:0 -filter_hw_device gpu -f lavfi \
    -i testsrc2=s=1920x1080:r=24:d=1 -vf format=yuv420p,hwupload -c:v jpeg2000_cuda -b:v 200M \
    -f image2 $T/hw_%03d.j2c || fail=1
same=0 total=0
for f in $T/sys_*.j2c; do
    total=$((total + 1)); cmp -s "$f" "${f/sys_/hw_}" && same=$((same + 1))
done
echo "cuda frames: $same of $total codestreams identical to the system-memory path"
[ "$same" = "$total" ] && [ "$total" -gt 0 ] || fail=1
[ $fail = 0 ] && echo "ffmpeg-gpu: all ok" || echo "ffmpeg-gpu: FAILURES"
exit $fail
