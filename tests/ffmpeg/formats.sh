#!/bin/bash
# The formats users feed to `ffmpeg -c:v jpeg2000_cuda`, made by FFmpeg itself, small (64x48,
# 3 frames; DNxHD 1 frame of 1920x1080, its smallest size): image files (PPM/PGM/PAM, PGX, PNG, TIFF, DPX, OpenEXR, BMP, TGA, JPEG, JPEG 2000),
# mezzanine and camera codecs (ProRes, DNxHD/DNxHR, FFV1, v210, H.264, HEVC, MPEG-2, rawvideo,
# y4m) in mov, mp4, matroska, mxf, avi, nut, image2 sequences and pipes; every output the
# encoder serves (mxf, mxf_opatom, mov, mp4, matroska, nut, image2 .j2c/.j2k/.jp2, pipes, null,
# md5, framemd5); the filters of a mastering chain; damaged sources.
# Every encode is reversible (-pred dwt53), decoded back by our ffmpeg and compared frame by
# frame with the source read through the same filters and pixel format conversion: bit-exact;
# the first codestream of each case is also decoded by OpenJPEG when opj_decompress is there.
# H.264/HEVC samples are made with Debian's /usr/bin/ffmpeg (libx264/libx265; our build stays
# LGPL without them) and decoded by our native decoders.
#   tests/ffmpeg/formats.sh [BUILD_DIR]
. "$(dirname "$0")/common.inc"
ff_require

W=64 H=48 N=3
SYSFF=/usr/bin/ffmpeg
LAVFI="-f lavfi -i testsrc2=s=${W}x$H:r=25 -frames:v $N"

# pixfmt_of FILE/PATTERN: the pixel format our ffmpeg decodes it to.
pixfmt_of() {
    "$FFPROBE" -v error -select_streams v:0 -show_entries stream=pix_fmt -of csv=p=0 "$@" | head -n 1
}

# hashes_of INPUT_ARGS... [-- FILTER]: frame md5s of the input after FILTER, in pixel format $PF.
hashes_of() {
    local args=() vf=''
    while [ $# -gt 0 ]; do
        if [ "$1" = -- ]; then vf=$2; break; fi
        args+=("$1"); shift
    done
    "$FFMPEG" -nostdin -v error "${args[@]}" ${vf:+-vf "$vf"} -pix_fmt "$PF" -f framemd5 - |
        frame_hashes
}

# opj_check FILE.{j2c,j2k,jp2}: OpenJPEG decodes it (when installed); prints a note for ok lines.
opj_check() {
    have opj_decompress || { echo "no opj_decompress"; return 0; }
    opj_decompress -i "$1" -o "$WORK/opj.pgx" > "$WORK/opj.log" 2>&1 && ! grep -qi error "$WORK/opj.log" ||
        { echo "OPJFAIL"; return 1; }
    echo "OpenJPEG ok"
}

# encode_case NAME INPUT_ARGS... [-- FILTER]: encodes the input (5/3, lossless) into a sequence of
# .jp2 files, then checks frame count, bit-exactness and OpenJPEG decoding. JP2, not bare
# codestreams: its colr box (ISO/IEC 15444-1 I.5.3.3) tells a 4:4:4 YUV frame from an RGB one,
# which FFmpeg's decoder would otherwise take for RGB. Both sides are compared in the pixel
# format the encoder was given ($PF, from ffmpeg's output stream line): the source through the
# same filters and conversion as the encode, the decoded frames through an undithered conversion
# (the decoder gives 10/12-bit RGB and grey as 16-bit samples shifted up, exactly invertible).
encode_case() {
    local t=$1; shift
    local args=() vf='' d=$WORK/out-$t
    while [ $# -gt 0 ]; do
        if [ "$1" = -- ]; then vf=$2; break; fi
        args+=("$1"); shift
    done
    mkdir -p "$d"
    if ! "$FFMPEG" -nostdin -hide_banner -y "${args[@]}" ${vf:+-vf "$vf"} -c:v jpeg2000_cuda -pred dwt53 \
            -format jp2 "$d/%03d.jp2" 2> "$WORK/err"; then
        fail "$t" "encode: $(grep -i -m 3 'error\|invalid\|unknown\|not' "$WORK/err" | tr '\n' ' ')"; return
    fi
    local n ref dec opj
    n=$(ls "$d" | wc -l)
    PF=$(sed -n '/^Output #0/,$ s/.*Video: jpeg2000[^,]*, \([a-z0-9_]*\).*/\1/p' "$WORK/err" | head -n 1)
    [ -n "$PF" ] || { fail "$t" "no output stream line in ffmpeg's log"; return; }
    dec=$(hashes_of -i "$d/%03d.jp2" -- scale=sws_dither=none)
    ref=$(hashes_of "${args[@]}" ${vf:+-- "$vf"})
    if [ -z "$ref" ]; then fail "$t" "the source does not decode"
    elif [ "$n" != "$(echo "$ref" | wc -l)" ]; then fail "$t" "$n files for $(echo "$ref" | wc -l) frames"
    elif [ "$dec" != "$ref" ]; then fail "$t" "decoded frames ($PF) differ from the source's"
    elif ! opj=$(opj_check "$d/001.jp2"); then fail "$t" "opj_decompress fails on 001.jp2: $(head -c 200 "$WORK/opj.log")"
    else ok "$t" "$n frames, $PF, bit-exact; $opj"; fi
}

# sample NAME ARGS...: makes $WORK/NAME (file or sequence pattern) with our ffmpeg.
sample() {
    local f=$WORK/$1; shift
    ff $LAVFI "$@" "$f" || { fail "sample-$(basename "$f")" "$(last_err)"; return 1; }
}

# ---- inputs: image files (sequences through image2, the format chosen by the extension) -------
sample ppm-%02d.ppm -c:v ppm && encode_case in-ppm -i "$WORK/ppm-%02d.ppm"
sample pgm-%02d.pgm -c:v pgm -pix_fmt gray && encode_case in-pgm8 -i "$WORK/pgm-%02d.pgm"
sample pgm16-%02d.pgm -c:v pgm -pix_fmt gray16be && encode_case in-pgm16 -i "$WORK/pgm16-%02d.pgm"
sample pam-%02d.pam -c:v pam -pix_fmt rgb48be && encode_case in-pam16 -i "$WORK/pam-%02d.pam"
sample png8-%02d.png -c:v png -pix_fmt rgb24 && encode_case in-png8 -i "$WORK/png8-%02d.png"
sample png16-%02d.png -c:v png -pix_fmt rgb48be && encode_case in-png16 -i "$WORK/png16-%02d.png"
for c in raw deflate; do
    sample tif8$c-%02d.tif -c:v tiff -compression_algo $c -pix_fmt rgb24 &&
        encode_case in-tiff8-$c -i "$WORK/tif8$c-%02d.tif"
    sample tif16$c-%02d.tif -c:v tiff -compression_algo $c -pix_fmt rgb48le &&
        encode_case in-tiff16-$c -i "$WORK/tif16$c-%02d.tif"
done
for b in 10 12; do
    sample dpx$b-%02d.dpx -c:v dpx -pix_fmt gbrp${b}le && encode_case in-dpx$b -i "$WORK/dpx$b-%02d.dpx"
done
sample dpx16-%02d.dpx -c:v dpx -pix_fmt rgb48le && encode_case in-dpx16 -i "$WORK/dpx16-%02d.dpx"
# OpenEXR half floats, brought to 12-bit RGB by format (the encoder takes integer samples)
sample exr-%02d.exr -c:v exr -format half -pix_fmt gbrpf32le &&
    encode_case in-exr-half -i "$WORK/exr-%02d.exr" -- format=gbrp12le
sample bmp-%02d.bmp -c:v bmp && encode_case in-bmp -i "$WORK/bmp-%02d.bmp"
sample tga-%02d.tga -c:v targa && encode_case in-tga -i "$WORK/tga-%02d.tga"
sample jpg-%02d.jpg -c:v mjpeg -q:v 3 -pix_fmt yuvj420p && encode_case in-jpeg -i "$WORK/jpg-%02d.jpg"
sample j2k-%02d.j2k -c:v jpeg2000 -pix_fmt yuv444p && encode_case in-jpeg2000-j2k -i "$WORK/j2k-%02d.j2k"
sample jp2-%02d.jp2 -c:v jpeg2000 -format jp2 -pix_fmt rgb24 &&
    encode_case in-jpeg2000-jp2 -i "$WORK/jp2-%02d.jp2"

# PGX (ISO/IEC 15444-4's test format: one component, "PG ML +D W H" then big-endian samples):
# FFmpeg has a decoder only, so the header is written here around FFmpeg's raw samples.
for d in 8 12; do
    t=in-pgx$d
    pf=gray; [ $d = 8 ] || pf=gray12be      # 12-bit: two bytes a sample, 0..4095, big-endian
    bad=
    for i in $(seq 1 $N); do
        f=$WORK/pgx$d-$(printf %02d $i).pgx
        printf 'PG ML +%d %d %d\n' $d $W $H > "$f"
        "$FFMPEG" -nostdin -v error -f lavfi -i "testsrc2=s=${W}x$H:r=25" \
            -vf "trim=start_frame=$((i - 1)),format=$pf" -frames:v 1 -f rawvideo - >> "$f" 2>"$WORK/err" ||
            bad=1
    done
    if [ -n "$bad" ]; then fail $t "could not write the PGX samples: $(last_err)"
    else encode_case $t -f image2 -c:v pgx -i "$WORK/pgx$d-%02d.pgx"; fi
done

# ---- inputs: codecs in containers ---------------------------------------------------------
sample prores422.mov -c:v prores_ks -profile:v 2 -pix_fmt yuv422p10le &&
    encode_case in-prores422-mov -i "$WORK/prores422.mov"
sample prores4444.mov -c:v prores_ks -profile:v 4 -pix_fmt yuva444p10le &&
    encode_case in-prores4444-mov -i "$WORK/prores4444.mov"
# DNxHR takes any frame size; DNxHD only its broadcast sizes and bit rates (1080p25 at 36 Mb/s)
sample dnxhr.mov -c:v dnxhd -profile:v dnxhr_hq -pix_fmt yuv422p -s 256x144 &&
    encode_case in-dnxhr-mov -i "$WORK/dnxhr.mov"
ff -f lavfi -i "testsrc2=s=1920x1080:r=25" -frames:v 1 -c:v dnxhd -b:v 36M -pix_fmt yuv422p "$WORK/dnxhd.mxf" &&
    encode_case in-dnxhd-mxf -i "$WORK/dnxhd.mxf" || { [ -f "$WORK/dnxhd.mxf" ] || fail sample-dnxhd.mxf "$(last_err)"; }
sample ffv1.mkv -c:v ffv1 -level 3 -pix_fmt yuv422p10le && encode_case in-ffv1-mkv -i "$WORK/ffv1.mkv"
sample v210.mov -c:v v210 && encode_case in-v210-mov -i "$WORK/v210.mov"
sample mpeg2.mxf -c:v mpeg2video -q:v 2 -pix_fmt yuv422p && encode_case in-mpeg2-mxf -i "$WORK/mpeg2.mxf"
sample mpeg2.mp4 -c:v mpeg2video -q:v 2 && encode_case in-mpeg2-mp4 -i "$WORK/mpeg2.mp4"
sample raw.nut -c:v rawvideo -pix_fmt yuv422p10le && encode_case in-rawvideo-nut -i "$WORK/raw.nut"
sample raw.avi -c:v rawvideo -pix_fmt bgr24 && encode_case in-rawvideo-avi -i "$WORK/raw.avi"
sample raw.yuv -f rawvideo -pix_fmt yuv420p &&
    encode_case in-rawvideo-bare -f rawvideo -pixel_format yuv420p -video_size ${W}x$H -framerate 25 -i "$WORK/raw.yuv"
sample y4m.y4m -pix_fmt yuv422p && encode_case in-y4m -i "$WORK/y4m.y4m"

# H.264 and HEVC: made by Debian's ffmpeg (libx264, libx265), read by our native decoders
for c in h264:libx264:mp4:yuv420p hevc:libx265:mkv:yuv420p10le; do
    IFS=: read -r name enc ext pf <<< "$c"
    t=in-$name-$ext
    if ! [ -x "$SYSFF" ] || ! "$SYSFF" -hide_banner -h encoder=$enc 2>/dev/null | grep -q "^Encoder $enc "; then
        skip $t "Debian's ffmpeg with $enc missing ($SYSFF; package ffmpeg)"; continue
    fi
    quiet=; [ $enc = libx265 ] && quiet="-x265-params log-level=error"
    if "$SYSFF" -nostdin -v error -y $LAVFI -c:v $enc -pix_fmt $pf $quiet "$WORK/$name.$ext" 2>"$WORK/err"; then
        encode_case $t -i "$WORK/$name.$ext"
    else
        fail $t "Debian's ffmpeg could not make the sample: $(last_err)"
    fi
done

# pipes: an image2pipe of PNGs, a y4m stream, a nut stream on stdin
t=in-pipe-png
if [ -f "$WORK/png8-01.png" ]; then
    cat "$WORK"/png8-0[1-9].png > "$WORK/pngs.pipe"
    if "$FFMPEG" -nostdin -v error -y -f image2pipe -c:v png -i - -c:v jpeg2000_cuda -pred dwt53 \
            -f image2pipe - < "$WORK/pngs.pipe" > "$WORK/pipe.j2k" 2>"$WORK/err"; then
        PF=$(pixfmt_of -f j2k_pipe "$WORK/pipe.j2k")
        dec=$(hashes_of -f j2k_pipe -i "$WORK/pipe.j2k")
        ref=$(hashes_of -i "$WORK/png8-%02d.png")
        [ -n "$ref" ] && [ "$dec" = "$ref" ] && ok $t "PNGs on stdin, codestreams on stdout, bit-exact" ||
            fail $t "decoded frames differ (or none: $(echo "$dec" | grep -c .))"
    else
        fail $t "$(last_err)"
    fi
fi
t=in-pipe-y4m
if [ -f "$WORK/y4m.y4m" ]; then
    if "$FFMPEG" -nostdin -v error -y -i pipe:0 -c:v jpeg2000_cuda -pred dwt53 -f nut pipe:1 \
            < "$WORK/y4m.y4m" > "$WORK/pipe.nut" 2>"$WORK/err"; then
        PF=$(pixfmt_of "$WORK/pipe.nut")
        [ "$(hashes_of -i "$WORK/pipe.nut")" = "$(hashes_of -i "$WORK/y4m.y4m")" ] &&
            ok $t "y4m on stdin, nut on stdout, bit-exact" || fail $t "decoded frames differ"
    else
        fail $t "$(last_err)"
    fi
fi

# ---- outputs ------------------------------------------------------------------------------------
SRC="-f rawvideo -pixel_format yuv422p10le -video_size ${W}x$H -framerate 24 -i $WORK/src.yuv"
ff $LAVFI -pix_fmt yuv422p10le -f rawvideo "$WORK/src.yuv" || fail source "$(last_err)"
PF=yuv422p10le
SRC_HASHES=$(hashes_of $SRC)
# out_case NAME FILE MUXER_ARGS...: encodes SRC into FILE, decodes it back, bit-exact.
out_case() {
    local t=$1 f=$2; shift 2
    if ! ff $SRC -c:v jpeg2000_cuda -pred dwt53 "$@" "$f"; then fail $t "$(last_err)"; return 1; fi
    local dec
    dec=$(hashes_of -i "$f")
    if [ "$dec" != "$SRC_HASHES" ]; then fail $t "decoded frames differ from the source ($(echo "$dec" | grep -c .) frames)"; return 1; fi
    case $f in *%*) f=$(printf "$f" 1) ;; esac
    ok $t "$(stat -c %s "$f") bytes$(case $2 in *%*) echo " in $(basename "$f")" ;; esac), $N frames bit-exact"
}
out_case out-mxf "$WORK/o.mxf" -f mxf
out_case out-mxf-opatom "$WORK/o-opatom.mxf" -f mxf_opatom
out_case out-mov "$WORK/o.mov"
out_case out-mp4 "$WORK/o.mp4"
out_case out-matroska "$WORK/o.mkv"
out_case out-nut "$WORK/o.nut"
for ext in j2c j2k; do
    out_case out-image2-$ext "$WORK/o-%02d.$ext"
done
# .jp2 files: the encoder's -format jp2 wraps each codestream in the JP2 boxes (ISO/IEC 15444-1
# Annex I: the signature box first)
t=out-image2-jp2
if out_case $t-decode "$WORK/o-%02d.jp2" -format jp2; then
    sig=$(head -c 12 "$WORK/o-01.jp2" | od -An -tx1 | tr -d ' \n')
    if [ "$sig" != 0000000c6a5020200d0a870a ]; then fail $t "o-01.jp2 does not start with the JP2 signature box ($sig)"
    elif ! opj=$(opj_check "$WORK/o-01.jp2"); then fail $t "opj_decompress fails on o-01.jp2"
    else ok $t "JP2 signature box; $opj"; fi
fi
t=out-null
ff $SRC -c:v jpeg2000_cuda -b:v 1M -f null - && ok $t || fail $t "$(last_err)"
t=out-md5
if ff $SRC -c:v jpeg2000_cuda -b:v 1M -f md5 "$WORK/a.md5" && ff $SRC -c:v jpeg2000_cuda -b:v 1M -f md5 "$WORK/b.md5"; then
    grep -q '^MD5=[0-9a-f]\{32\}$' "$WORK/a.md5" && cmp -s "$WORK/a.md5" "$WORK/b.md5" &&
        ok $t "$(cat "$WORK/a.md5"), twice the same" || fail $t "unexpected or unstable: $(cat "$WORK/a.md5" "$WORK/b.md5")"
else
    fail $t "$(last_err)"
fi
t=out-framemd5
if ff $SRC -c:v jpeg2000_cuda -b:v 1M -f framemd5 "$WORK/a.framemd5"; then
    n=$(grep -vc '^#' "$WORK/a.framemd5")
    [ "$n" = $N ] && grep -q '^#codec_id 0: jpeg2000' "$WORK/a.framemd5" && ok $t "$n packets" ||
        fail $t "$n packet lines (expected $N, codec jpeg2000)"
else
    fail $t "$(last_err)"
fi

# ---- filters ------------------------------------------------------------------------------------
encode_case filter-scale $SRC -- scale=48:32
encode_case filter-format $SRC -- format=gbrp12le
encode_case filter-colorspace $SRC -- setparams=colorspace=bt470bg:color_primaries=bt470bg:color_trc=smpte170m:range=tv,colorspace=all=bt709:format=yuv422p10
encode_case filter-fps $SRC -- fps=12
encode_case filter-crop $SRC -- crop=32:24:8:8
encode_case filter-pad $SRC -- pad=80:60:8:6
encode_case filter-separatefields $SRC -- setfield=tff,separatefields
encode_case filter-setparams $SRC -- setparams=field_mode=tff:color_primaries=bt709:color_trc=bt709:colorspace=bt709:range=tv
# psnr/ssim: a lossy encode (4 bits per pixel) against its source
t=filter-psnr-ssim
if ff $SRC -c:v jpeg2000_cuda -b:v $((W * H * 24 * 4)) "$WORK/lossy.mxf" &&
   "$FFMPEG" -nostdin -hide_banner -i "$WORK/lossy.mxf" $SRC -lavfi "[0:v][1:v]psnr;[0:v][1:v]ssim" -f null - 2> "$WORK/q.log"; then
    psnr=$(sed -n 's/.*PSNR .* average:\([0-9.inf]*\).*/\1/p' "$WORK/q.log" | head -n 1)
    ssim=$(sed -n 's/.*SSIM .* All:\([0-9.]*\).*/\1/p' "$WORK/q.log" | head -n 1)
    if [ -z "$psnr" ] || [ -z "$ssim" ]; then fail $t "no PSNR/SSIM summary: $(tail -n 2 "$WORK/q.log" | tr '\n' ' ')"
    elif awk -v p="$psnr" -v s="$ssim" 'BEGIN { exit !(p >= 33 && s >= 0.95) }'; then ok $t "PSNR $psnr dB, SSIM $ssim at 4 bpp"
    else fail $t "PSNR $psnr dB / SSIM $ssim below 33 dB / 0.95 at 4 bpp"; fi
else
    fail $t "$(last_err) $(tail -n 2 "$WORK/q.log" 2>/dev/null)"
fi
t=filter-hw
missing=
for f in hwupload_cuda hwdownload hwupload scale colorspace fps setparams crop pad psnr ssim separatefields setfield format; do
    "$FFMPEG" -hide_banner -h filter=$f >/dev/null 2>&1 && "$FFMPEG" -hide_banner -h filter=$f 2>&1 | grep -q "^Filter $f" ||
        missing="$missing $f"
done
[ -z "$missing" ] && ok filters-present "every filter of the mastering chain is built in" ||
    fail filters-present "missing:$missing"
if have_gpu; then
    # CUDA frames (hwupload_cuda takes yuv444p16, not yuv422p10) and the round trip through
    # hwdownload: the same codestreams as the system-memory encode of the same samples
    HW="-init_hw_device cuda=gpu -filter_hw_device gpu"
    packets() { "$FFMPEG" -nostdin -v error -i "$1" -c copy -f framemd5 - | frame_hashes; }
    if ff $SRC -vf format=yuv444p16le -c:v jpeg2000_cuda -pred dwt53 "$WORK/sw.mxf"; then
        for c in hwupload_cuda:format=yuv444p16le,hwupload_cuda \
                 hwdownload:format=yuv444p16le,hwupload_cuda,hwdownload,format=yuv444p16le; do
            t=filter-${c%%:*}
            if ff $HW $SRC -vf "${c#*:}" -c:v jpeg2000_cuda -pred dwt53 "$WORK/$t.mxf"; then
                [ "$(packets "$WORK/$t.mxf")" = "$(packets "$WORK/sw.mxf")" ] &&
                    ok $t "${c#*:}: the system-memory encode's codestreams, lossless" ||
                    fail $t "codestreams differ from the system-memory encode's"
            else
                fail $t "$(last_err)"
            fi
        done
    else
        fail filter-hwupload_cuda "the system-memory reference encode failed: $(last_err)"
    fi
else
    skip $t "no GPU (hwupload_cuda/hwdownload need CUDA frames)"
fi

# ---- conversions and bad input --------------------------------------------------------------------
# A pixel format the encoder cannot take: FFmpeg converts it and says so
t=convert-notice
if "$FFMPEG" -nostdin -hide_banner -y $SRC -pix_fmt yuva444p -c:v jpeg2000_cuda -pred dwt53 "$WORK/conv.mxf" 2> "$WORK/err"; then
    if grep -q "Incompatible pixel format 'yuva444p' for codec 'jpeg2000_cuda'" "$WORK/err"; then
        ok $t "$(grep -o "auto-selecting format '[a-z0-9]*'" "$WORK/err")"
    else
        fail $t "no notice: $(grep -i pixel "$WORK/err" | head -n 2 | tr '\n' ' ')"
    fi
else
    fail $t "$(last_err)"
fi
# OpenEXR floats without a format filter: FFmpeg picks an integer format itself
t=convert-float
if [ -f "$WORK/exr-01.exr" ] && ff -i "$WORK/exr-%02d.exr" -c:v jpeg2000_cuda -pred dwt53 "$WORK/exr.mov"; then
    ok $t "gbrpf32le -> $(pixfmt_of "$WORK/exr.mov")"
else
    fail $t "$(last_err)"
fi

# A damaged PNG in a sequence: the PNG decoder's error, the other frames encoded and valid
t=damaged-png-sequence
mkdir -p "$WORK/dmg" "$WORK/dmg-out"
for i in 1 2 3 4; do cp "$WORK/png8-01.png" "$WORK/dmg/$i.png" 2>/dev/null; done
[ -f "$WORK/dmg/3.png" ] && head -c 200 "$WORK/png8-01.png" > "$WORK/dmg/3.png"
"$FFMPEG" -nostdin -hide_banner -y -i "$WORK/dmg/%d.png" -c:v jpeg2000_cuda -pred dwt53 "$WORK/dmg-out/%02d.j2c" 2> "$WORK/err"
rc=$?
n=$(ls "$WORK/dmg-out" | wc -l)
# FFmpeg keeps the output's frame rate constant: it may repeat the frame before the gap (dup=)
dup=$(sed -n 's/.* dup=\([0-9]*\) .*/\1/p' "$WORK/err" | tail -n 1)
PF=rgb24
good=$(for f in "$WORK"/dmg-out/*.j2c; do hashes_of -i "$f"; done | sort -u)
if signalled $rc; then fail $t "ffmpeg crashed ($rc)"
elif ! grep -qi '\[png @' "$WORK/err"; then fail $t "no PNG decoder error: $(tail -n 2 "$WORK/err" | tr '\n' ' ')"
elif [ "$n" != $((3 + ${dup:-0})) ]; then fail $t "$n codestreams for 3 intact frames (dup=${dup:-?})"
elif [ "$good" != "$(hashes_of -i "$WORK/png8-01.png")" ]; then fail $t "the encoded frames do not decode to the intact frame"
else ok $t "exit $rc, '$(grep -m 1 '\[png @' "$WORK/err" | sed 's/ @ 0x[0-9a-f]*//')', $n valid codestreams (dup=${dup:-0})"; fi

# A truncated MOV: the demuxer/decoder error, the frames before the damage in a valid MXF
t=damaged-mov
ff -f lavfi -i "testsrc2=s=${W}x$H:r=25" -frames:v 10 -c:v prores_ks -profile:v 2 "$WORK/long.mov" || fail $t "$(last_err)"
# keep the start: the moov atom is at the end by default, so move it up front first
ff -i "$WORK/long.mov" -c copy -movflags +faststart "$WORK/fast.mov"
size=$(stat -c %s "$WORK/fast.mov")
head -c $((size * 6 / 10)) "$WORK/fast.mov" > "$WORK/cut.mov"
"$FFMPEG" -nostdin -hide_banner -y -i "$WORK/cut.mov" -c:v jpeg2000_cuda -pred dwt53 "$WORK/cut.mxf" 2> "$WORK/err"
rc=$?
PF=yuv422p10le
dec=$(hashes_of -i "$WORK/cut.mxf" 2>/dev/null)
nd=$(echo "$dec" | grep -c .)
ref=$(hashes_of -i "$WORK/long.mov" | head -n "$nd")
if signalled $rc; then fail $t "ffmpeg crashed ($rc)"
elif ! grep -qiE 'error|invalid|truncat|partial' "$WORK/err"; then fail $t "no error from the source's demuxer or decoder"
elif [ "$nd" -lt 1 ] || [ "$nd" -ge 10 ]; then fail $t "$nd frames in the MXF from a 60% file of 10 frames"
elif [ "$dec" != "$ref" ]; then fail $t "the encoded frames differ from the source's first $nd"
elif ! "$FFPROBE" -v error -show_entries format=duration "$WORK/cut.mxf" > /dev/null 2> "$WORK/probe.err" || [ -s "$WORK/probe.err" ]; then
    fail $t "ffprobe complains about the MXF: $(head -n 2 "$WORK/probe.err" | tr '\n' ' ')"
else
    ok $t "exit $rc, '$(grep -m 1 -iE 'error|invalid|truncat|partial' "$WORK/err" | sed 's/ @ 0x[0-9a-f]*//' | cut -c1-70)', $nd of 10 frames valid"
fi
finish
