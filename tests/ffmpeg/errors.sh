#!/bin/bash
# Bad input to -c:v jpeg2000_cuda: each case must fail with a clear message naming the problem,
# a normal error exit (no crash, no hang) and no output that looks good (the file is absent,
# empty, or at least not readable as a complete stream).
#   tests/ffmpeg/errors.sh [BUILD_DIR]
. "$(dirname "$0")/common.inc"
ff_require

W=64 H=48
"$FFMPEG" -nostdin -v error -f lavfi -i "testsrc2=s=${W}x$H:r=25" -frames:v 5 -pix_fmt yuv420p \
    -f rawvideo "$WORK/src.raw" || { fail source "cannot make the test source"; finish; }
SRC="-f rawvideo -pixel_format yuv420p -video_size ${W}x$H -framerate 25 -i $WORK/src.raw"
"$FFMPEG" -nostdin -v error -f lavfi -i "testsrc2=s=${W}x$H:r=25" -frames:v 2 -pix_fmt yuv444p \
    -f rawvideo "$WORK/src444.raw" || { fail source "cannot make the 4:4:4 test source"; finish; }
SRC444="-f rawvideo -pixel_format yuv444p -video_size ${W}x$H -framerate 25 -i $WORK/src444.raw"

# expect_error NAME 'MESSAGE REGEX' OUTPUT FFMPEG-ARGS...: runs ffmpeg (under timeout), wants a
# non-zero exit that is not a signal, the message in stderr, and no usable OUTPUT.
expect_error() {
    local t=$1 re=$2 out=$3 rc
    shift 3
    rm -f "$out"
    timeout 60 "$FFMPEG" -nostdin -hide_banner -y "$@" "$out" > "$WORK/out" 2> "$WORK/err"
    rc=$?
    if [ $rc = 124 ]; then fail $t "hung (killed after 60 s)"; return; fi
    if signalled $rc; then fail $t "crashed (exit $rc)"; return; fi
    if [ $rc = 0 ]; then fail $t "ffmpeg succeeded"; return; fi
    if ! grep -Eq -e "$re" "$WORK/err"; then
        fail $t "no message matching /$re/: $(grep -m 2 -i 'error\|jpeg2000' "$WORK/err" | tr '\n' ' ')"
        return
    fi
    if [ -s "$out" ] && "$FFPROBE" -v error -count_packets -show_entries stream=nb_read_packets \
           -of csv=p=0 "$out" 2>/dev/null | grep -q '^[1-9]'; then
        fail $t "left a readable output file ($(stat -c %s "$out") bytes)"
        return
    fi
    ok $t "$(grep -Em 1 -e "$re" "$WORK/err" | sed 's/^\[[^]]*\] //')"
}

O=$WORK/out.mxf

# Pixel formats. The ffmpeg CLI converts unsupported formats itself (with a warning naming both
# formats); without automatic conversion filters it must refuse cleanly. The encoder's own check
# (software formats: api.sh; CUDA frames of an unsupported layout: below, on GPU machines) lists
# the supported formats.
YUV410="-f rawvideo -pixel_format yuv410p -video_size ${W}x$H -framerate 25 -i $WORK/src410.raw"
head -c $((W * H * 9 / 8 * 5)) /dev/zero > "$WORK/src410.raw"
expect_error pix_fmt-no-conversion 'do not have a common format' $O $YUV410 -noauto_conversion_filters \
    -c:v jpeg2000_cuda -f mxf
t=pix_fmt-auto-selected
if "$FFMPEG" -nostdin -hide_banner -y $YUV410 -c:v jpeg2000_cuda -pix_fmt yuv410p "$WORK/as.mxf" 2> "$WORK/err" &&
   grep -q "Incompatible pixel format 'yuv410p' for codec 'jpeg2000_cuda', auto-selecting format" "$WORK/err"; then
    ok $t "$(grep -o "auto-selecting format '[a-z0-9]*'" "$WORK/err")"
else
    fail $t "no auto-selection warning or the encode failed: $(last_err)"
fi
if have_gpu; then
    expect_error cuda-frames-yuva420p 'CUDA frames of yuva420p are not supported' $O $SRC \
        -vf format=yuva420p,hwupload_cuda -c:v jpeg2000_cuda
    grep -q 'Supported CUDA frame formats: ' "$WORK/err" || fail cuda-frames-yuva420p-list "no list of the supported formats"
fi

# Errors name the options the user typed (-b:v, -psnr, -profile:v, -cblk_width, ...), the value
# and what is allowed, in ffmpeg's words rather than the library's parameter names.
expect_error conflict-bitrate-psnr '-psnr cannot be combined with -b:v' $O $SRC -c:v jpeg2000_cuda -b:v 10M -psnr 40
expect_error conflict-maxrate-psnr '-psnr cannot be combined with -maxrate' $O $SRC -c:v jpeg2000_cuda -maxrate 10M -psnr 40
expect_error conflict-layer-rates-psnr '-psnr cannot be combined with -layer_rates' $O $SRC -c:v jpeg2000_cuda -layer_rates 100,20 -psnr 40
expect_error psnr-with-imf '-psnr is not supported with -profile:v imf_2k' $O $SRC444 -c:v jpeg2000_cuda -profile:v imf_2k -psnr 40
# -psnr's range is the library's quality key's, (0, 200] dB, checked by AVOption: an error naming
# the range, not a silent clip
expect_error psnr-above-range "Value 200.5[0-9]* for parameter 'psnr' out of range \[0 - 200\]" $O $SRC -c:v jpeg2000_cuda -psnr 200.5
expect_error psnr-negative "Value -3.0* for parameter 'psnr' out of range \[0 - 200\]" $O $SRC -c:v jpeg2000_cuda -psnr -3
# -q:v selects a quantizer scale JPEG 2000 does not have: refused, naming -psnr (alone, and with a
# rate target, where it must not be mistaken for a conflict between two quality settings)
expect_error qscale-refused '-q:v is not supported: .*-psnr' $O $SRC -c:v jpeg2000_cuda -q:v 5
expect_error qscale-refused-with-bitrate '-q:v is not supported: .*-psnr' $O $SRC -c:v jpeg2000_cuda -b:v 10M -q:v 5
# -bypass is Part 1's lazy mode, a boolean: other bit-plane counts are -j2kc_params bypass=N
expect_error bypass-not-a-count 'Unable to parse option value "4" as boolean' $O $SRC -c:v jpeg2000_cuda -bypass 4
expect_error conflict-layers 'layers=2 conflicts with 3 layer_rates' $O $SRC -c:v jpeg2000_cuda -layers 2 -layer_rates 100,20,5
expect_error conflict-maxrate 'exceeds -maxrate' $O $SRC -c:v jpeg2000_cuda -b:v 20M -maxrate 10M
expect_error layer-rates-order 'decreasing' $O $SRC -c:v jpeg2000_cuda -layer_rates 5,20
expect_error budget-below-header 'smaller than the main header' $O $SRC -c:v jpeg2000_cuda -b:v 1000
expect_error profile-unknown 'Invalid -profile:v 0x1234: use a name listed by' $O $SRC -c:v jpeg2000_cuda -profile:v 0x1234
expect_error profile-unknown-name "Unable to parse option value \"cinema8k\"" $O $SRC -c:v jpeg2000_cuda -profile:v cinema8k
expect_error profile-dci-8bit 'DCI 2K' $O $SRC -c:v jpeg2000_cuda -profile:v dcinema_2k -b:v 100M
expect_error cblk-not-pow2 'Invalid -cblk_width 48: code-block sides are powers of two from 4 to 1024' $O $SRC -c:v jpeg2000_cuda -cblk_width 48
expect_error cblk-too-small 'Invalid -cblk_height 2: ' $O $SRC -c:v jpeg2000_cuda -cblk_height 2
expect_error cblk-too-many-samples 'Invalid code-block size 128x64 .*at most 4096 samples' $O $SRC -c:v jpeg2000_cuda -cblk_width 128
expect_error j2kc-params-unknown-key 'Invalid -j2kc_params entry no_such_key=1' $O $SRC -c:v jpeg2000_cuda -j2kc_params no_such_key=1
expect_error j2kc-params-bad-value 'Invalid -j2kc_params entry qstep_try=9' $O $SRC -c:v jpeg2000_cuda -j2kc_params qstep_try=9
expect_error profile-imf-subsampling 'IMF 2K reversible' $O $SRC -c:v jpeg2000_cuda -profile:v imf_2k_r
# A lossless IMF frame larger than the sublevel the profile value fixes (0x0712: sublevel 1,
# main level 2; at 10000 fps sublevel 1's 200 Mbit/s is 2500 bytes a frame) fails, naming the
# sublevel and the -b:v that fits.
# Seeded noise, so that the lossless frame is far above 2500 bytes whatever the content.
SEED=${J2KC_TEST_SEED:-20261127}
echo "# errors: noise seed $SEED"
python3 -c "import random, sys; random.seed($SEED); sys.stdout.buffer.write(bytes(random.getrandbits(8) for _ in range($W * $H * 3)))" \
    > "$WORK/noise444.raw"
SRC444_FAST="-f rawvideo -pixel_format yuv444p -video_size ${W}x$H -framerate 10000 -i $WORK/noise444.raw"
expect_error imf-lossless-over-sublevel 'exceeds IMF sublevel 1 \(200 Mbit/s\).*-b:v 200M or less' "$WORK/o.nut" \
    $SRC444_FAST -c:v jpeg2000_cuda -profile:v 0x0712

# Device selection. Without CUDA in the library both must say so; on a machine with one GPU
# -gpu 7 must name the missing device, and backend=cuda must fail only without a usable GPU.
if have_gpu; then
    expect_error gpu-7 'device|GPU|gpu' $O $SRC -c:v jpeg2000_cuda -gpu 7
    skip backend-cuda-no-gpu "a GPU is present"
else
    expect_error gpu-7 'built without CUDA|no usable GPU|device|-gpu naming devices selects the CUDA backend' $O $SRC -c:v jpeg2000_cuda -gpu 7
    expect_error backend-cuda-no-gpu 'built without CUDA|no usable GPU|no CUDA device|no NVIDIA driver' $O $SRC -c:v jpeg2000_cuda -backend cuda
fi

finish
