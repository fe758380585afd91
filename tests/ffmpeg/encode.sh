#!/bin/bash
# End-to-end encodes with -c:v jpeg2000_cuda through the built ffmpeg: image sequences, MXF,
# pipes, draining, pts, determinism, and decoding back with FFmpeg (ours and the system's 5.1)
# and OpenJPEG/Grok. Lossless cases compare decoded frames with the source frame by frame.
#   tests/ffmpeg/encode.sh [BUILD_DIR]
. "$(dirname "$0")/common.inc"
ff_require

W=176 H=144 N=10
S=$WORK/src
mkdir -p "$S"
# Sources: testsrc2 converted once, then read as rawvideo so every encode sees the same bytes.
for fmt in yuv420p yuv422p10le gbrp rgb24 gray12le xyz12le; do
    ff -f lavfi -i "testsrc2=s=${W}x$H:r=25" -frames:v $N -vf format=$fmt -f rawvideo "$S/$fmt.raw" ||
        { fail "source-$fmt" "$(last_err)"; finish; }
done
raw() { echo "-f rawvideo -pixel_format $1 -video_size ${W}x$H -framerate 25 -i $S/$1.raw"; }
src_hashes() { "$FFMPEG" -nostdin -v error $(raw "$1") -f framemd5 - | frame_hashes; }

# -- image sequence, reversible 5/3: N files, each a bare codestream, decoded losslessly
t=sequence-lossless
mkdir -p "$WORK/seq"
if ff $(raw yuv420p) -c:v jpeg2000_cuda -pred dwt53 "$WORK/seq/%06d.j2c"; then
    n=$(ls "$WORK/seq" | wc -l)
    soc=$(for f in "$WORK"/seq/*.j2c; do head -c 4 "$f" | od -An -tx1 | tr -d ' \n'; echo; done | sort -u)
    dec=$("$FFMPEG" -nostdin -v error -i "$WORK/seq/%06d.j2c" -f framemd5 - | frame_hashes)
    if [ "$n" != $N ]; then fail $t "$n files for $N frames"
    elif [ "$soc" != ff4fff51 ]; then fail $t "files do not start with SOC+SIZ ($soc)"
    elif [ "$dec" != "$(src_hashes yuv420p)" ]; then fail $t "decoded frames differ from the source"
    else ok $t "$N x 000001.j2c.., SOC+SIZ, bit-exact"; fi
else
    fail $t "$(last_err)"
fi

# -- the system FFmpeg 5.1 (native decoder) reads the same files bit-exactly
t=sequence-system-ffmpeg
if ! have ffmpeg || [ "$(command -v ffmpeg)" = "$FFMPEG" ]; then skip $t "no system ffmpeg"
elif [ ! -f "$WORK/seq/000001.j2c" ]; then fail $t "no sequence to decode"
else
    dec=$(ffmpeg -nostdin -v error -i "$WORK/seq/%06d.j2c" -pix_fmt yuv420p -f framemd5 - | frame_hashes)
    [ "$dec" = "$(src_hashes yuv420p)" ] && ok $t || fail $t "system ffmpeg decodes differently"
fi

# -- OpenJPEG and Grok: RGB 5/3 (RCT) lossless; opj/grk write PPM = rgb24 samples
t=openjpeg-rgb-lossless
mkdir -p "$WORK/rgb"
if ff $(raw rgb24) -c:v jpeg2000_cuda -pred dwt53 "$WORK/rgb/%03d.j2c"; then
    for tool in opj grk; do
        have ${tool}_decompress || { skip $t-$tool "${tool}_decompress missing"; continue; }
        bad=0
        for f in "$WORK"/rgb/0*.j2c; do
            i=$(basename "$f" .j2c)
            ${tool}_decompress -i "$f" -o "$WORK/rgb/$tool$i.ppm" >/dev/null 2>&1 || { bad=1; break; }
            # compare the samples (headers may differ in white space)
            fsize=$((W * H * 3))
            cmp -s <(tail -c $fsize "$WORK/rgb/$tool$i.ppm") \
                   <(tail -c +$(( (10#$i - 1) * fsize + 1 )) "$S/rgb24.raw" | head -c $fsize) || { bad=2; break; }
        done
        case $bad in
        0) ok $t-$tool "$N frames" ;;
        1) fail $t-$tool "${tool}_decompress failed on $f" ;;
        2) fail $t-$tool "$(basename "$f"): samples differ from the source" ;;
        esac
    done
else
    fail $t "$(last_err)"
fi

# -- OpenJPEG decodes 4:2:0, 4:2:2 10-bit and 12-bit grey codestreams without complaint
t=openjpeg-decodes
if have opj_decompress; then
    bad=
    for fmt in yuv420p yuv422p10le gray12le; do
        ff $(raw $fmt) -frames:v 1 -c:v jpeg2000_cuda -b:v 2M "$WORK/o-$fmt.j2c" || { bad="$bad $fmt(encode)"; continue; }
        opj_decompress -i "$WORK/o-$fmt.j2c" -o "$WORK/o-$fmt.pgx" > "$WORK/opj.log" 2>&1 &&
            ! grep -qi 'error' "$WORK/opj.log" || bad="$bad $fmt"
    done
    [ -z "$bad" ] && ok $t "yuv420p yuv422p10 gray12" || fail $t "failed:$bad"
else
    skip $t "opj_decompress missing"
fi

# -- 12-bit grey and xyz12 5/3: lossless through our decoder (grey12 comes back as gray16 <<4,
#    xyz12 as rgb48 with the same left-aligned samples, so the raw bytes must match)
for pair in gray12le:gray16le xyz12le:rgb48le; do
    fmt=${pair%%:*} out=${pair#*:}
    t=lossless-$fmt
    if ff $(raw $fmt) -c:v jpeg2000_cuda -pred dwt53 "$WORK/l-$fmt.nut"; then
        a=$("$FFMPEG" -nostdin -v error -i "$WORK/l-$fmt.nut" -pix_fmt $out -f rawvideo - | md5sum)
        b=$(if [ $fmt = gray12le ]; then
                python3 -c "
import sys, array
a = array.array('H', open('$S/$fmt.raw', 'rb').read())
sys.stdout.buffer.write(array.array('H', [v << 4 for v in a]).tobytes())" | md5sum
            else md5sum < "$S/$fmt.raw"; fi)
        [ "$a" = "$b" ] && ok $t || fail $t "decoded samples differ from the source"
    else
        fail $t "$(last_err)"
    fi
done

# -- MXF: yuv422p10 with an exact byte budget; every packet within bit_rate/fps/8, read back
t=mxf-422p10-budget
budget=$((8000000 / 25 / 8))
if ff $(raw yuv422p10le) -c:v jpeg2000_cuda -b:v 8M "$WORK/a.mxf"; then
    sizes=$("$FFPROBE" -v error -select_streams v -show_entries packet=size -of csv=p=0 "$WORK/a.mxf")
    fmt=$("$FFPROBE" -v error -select_streams v -show_entries stream=pix_fmt -of csv=p=0 "$WORK/a.mxf")
    n=$(echo "$sizes" | grep -c .)
    over=$(echo "$sizes" | awk -v b=$budget '$1 > b' | head -n 1)
    dec=$("$FFMPEG" -nostdin -v error -i "$WORK/a.mxf" -f framemd5 - | frame_hashes | grep -c .)
    if [ "$n" != $N ] || [ "$dec" != $N ]; then fail $t "$n packets, $dec decoded frames for $N"
    elif [ -n "$over" ]; then fail $t "packet of $over bytes over the $budget-byte budget"
    elif [ "$fmt" != yuv422p10le ]; then fail $t "probed as $fmt"
    else ok $t "$N packets <= $budget bytes, yuv422p10le"; fi
else
    fail $t "$(last_err)"
fi

# -- MXF with RGB: the descriptor must let readers see RGB (RGBA descriptor), lossless round trip
t=mxf-gbrp-lossless
if ff $(raw gbrp) -c:v jpeg2000_cuda -pred dwt53 "$WORK/g.mxf"; then
    dec=$("$FFMPEG" -nostdin -v error -i "$WORK/g.mxf" -pix_fmt gbrp -f framemd5 - | frame_hashes)
    if [ "$dec" != "$(src_hashes gbrp)" ]; then fail $t "decoded frames differ from the source"
    elif ! "$FFPROBE" -v error -show_streams "$WORK/g.mxf" | grep -q '^pix_fmt=\(gbrp\|rgb24\)'; then
        fail $t "not probed as RGB"
    else ok $t; fi
else
    fail $t "$(last_err)"
fi

# -- the system FFmpeg reads our MXF
t=mxf-system-ffmpeg
if have ffmpeg && [ -f "$WORK/a.mxf" ]; then
    n=$(ffmpeg -nostdin -v error -i "$WORK/a.mxf" -f framemd5 - | frame_hashes | grep -c .)
    [ "$n" = $N ] && ok $t || fail $t "system ffmpeg decoded $n of $N frames"
else
    skip $t "no system ffmpeg or no MXF"
fi

# -- pipes: raw frames in on stdin, codestreams out on stdout (image2pipe), split again by the
#    jpeg2000 parser (needs real Psot) on the reading side; bit-exact, same bytes as the files
t=pipes
if cat "$S/yuv420p.raw" |
   "$FFMPEG" -nostdin -v error -f rawvideo -pixel_format yuv420p -video_size ${W}x$H -framerate 25 -i - \
       -c:v jpeg2000_cuda -pred dwt53 -f image2pipe - 2>"$WORK/err" > "$WORK/pipe.j2k"; then
    dec=$("$FFMPEG" -nostdin -v error -f j2k_pipe -i - -f framemd5 - < "$WORK/pipe.j2k" | frame_hashes)
    if [ "$(echo "$dec" | grep -c .)" != $N ]; then fail $t "$(echo "$dec" | grep -c .) frames back from the pipe"
    elif [ "$dec" != "$(src_hashes yuv420p)" ]; then fail $t "frames differ from the source"
    elif ! cmp -s "$WORK/pipe.j2k" <(cat "$WORK"/seq/*.j2c); then fail $t "pipe bytes differ from the image files"
    else ok $t "stdin -> image2pipe -> j2k_pipe, $N frames"; fi
else
    fail $t "$(last_err)"
fi

# -- draining: fewer frames than async_depth (and exactly one frame) all come out
for case in "2 8" "1 16" "5 4"; do
    set -- $case
    t=drain-$1-of-depth-$2
    if ff $(raw yuv420p) -frames:v $1 -c:v jpeg2000_cuda -async_depth $2 "$WORK/d.nut"; then
        n=$("$FFPROBE" -v error -show_entries packet=pts -of csv=p=0 "$WORK/d.nut" | grep -c .)
        [ "$n" = $1 ] && ok $t || fail $t "$n packets for $1 frames"
    else
        fail $t "$(last_err)"
    fi
done

# -- pts/dts/duration carried through the frames in flight: irregular pts, packets as the
#    encoder returns them (framecrc: stream 0, dts, pts, duration in the encoder time base 1/25)
t=pts-preserved
if ff $(raw yuv420p) -vf "setpts=N*3+7" -fps_mode passthrough -c:v jpeg2000_cuda -async_depth 4 \
      -f framecrc "$WORK/p.crc"; then
    got=$(grep -v '^#' "$WORK/p.crc" | awk -F', *' '{ print $2 "," $3 }' | tr '\n' ' ')
    want=$(for i in $(seq 0 $((N - 1))); do echo "$((i * 3 + 7)),$((i * 3 + 7))"; done | tr '\n' ' ')
    [ "$got" = "$want" ] && ok $t "dts=pts=3N+7" || fail $t "dts,pts: $got (want $want)"
else
    fail $t "$(last_err)"
fi

t=pts-nut-ffprobe
if ff $(raw yuv420p) -vf "setpts=N*3+7" -fps_mode passthrough -c:v jpeg2000_cuda -async_depth 4 "$WORK/p.nut"; then
    got=$("$FFPROBE" -v error -show_entries packet=pts_time -of csv=p=0 "$WORK/p.nut" | tr '\n' ' ')
    want=$(for i in $(seq 0 $((N - 1))); do awk -v n=$i 'BEGIN { printf "%.6f\n", (n * 3 + 7) / 25 }'; done | tr '\n' ' ')
    [ "$got" = "$want" ] && ok $t || fail $t "pts_time: $got (want $want)"
else
    fail $t "$(last_err)"
fi

# -- determinism: async_depth and run-to-run do not change a byte
t=deterministic
if ff $(raw yuv422p10le) -c:v jpeg2000_cuda -b:v 3M -async_depth 1 -f image2pipe "$WORK/a1.j2k" &&
   ff $(raw yuv422p10le) -c:v jpeg2000_cuda -b:v 3M -async_depth 7 -f image2pipe "$WORK/a7.j2k" &&
   ff $(raw yuv422p10le) -c:v jpeg2000_cuda -b:v 3M -async_depth 7 -f image2pipe "$WORK/a7b.j2k"; then
    cmp -s "$WORK/a1.j2k" "$WORK/a7.j2k" && cmp -s "$WORK/a7.j2k" "$WORK/a7b.j2k" &&
        ok $t || fail $t "bytes differ between async_depth 1 and 7 or between runs"
else
    fail $t "$(last_err)"
fi

# -- backends: the CUDA backend must write the same bytes as the reference backend, whatever the
#    rate control (GPU machines only)
if have_gpu; then
    # 352x288 content with budgets small enough that rate control has to drop passes
    ff -f lavfi -i "testsrc2=s=352x288:r=25" -frames:v 5 -vf format=yuv420p -c:v rawvideo -f nut "$WORK/cif.nut" ||
        fail backends-source "$(last_err)"
    # the other pixel formats converted once: both backends must read the same samples (a
    # conversion per run was seen to differ between runs on a GPU machine's FFmpeg built
    # without x86 assembly)
    for pf in gbrp yuv444p; do
        ff -i "$WORK/cif.nut" -pix_fmt $pf -c:v rawvideo -f nut "$WORK/cif-$pf.nut" ||
            fail backends-source-$pf "$(last_err)"
    done
    for mode in "lossless:-pred dwt53" "budget:-b:v 3M" "budget-tight:-b:v 800k" "layers:-b:v 2M -layers 3" \
                "psnr:-psnr 42" "dci-like:-b:v 1M -prog cprl" "gbrp-budget:gbrp:-b:v 2M" \
                "imf2kr-lossless:yuv444p:-profile:v imf_2k_r" "imf2kr-budget:yuv444p:-profile:v imf_2k_r -b:v 2M"; do
        t=backends-identical-${mode%%:*}
        opts=${mode#*:}
        src=$WORK/cif.nut
        case $opts in gbrp:*|yuv444p:*) src=$WORK/cif-${opts%%:*}.nut; opts=${opts#*:} ;; esac
        if ff -i "$src" -c:v jpeg2000_cuda $opts -backend ref -f image2pipe "$WORK/b-ref.j2k" &&
           ff -i "$src" -c:v jpeg2000_cuda $opts -backend cuda -f image2pipe "$WORK/b-cuda.j2k"; then
            if cmp -s "$WORK/b-ref.j2k" "$WORK/b-cuda.j2k"; then ok $t "$opts"
            else fail $t "$opts: CUDA and reference codestreams differ ($(stat -c %s "$WORK/b-ref.j2k") vs $(stat -c %s "$WORK/b-cuda.j2k") bytes)"; fi
        else
            fail $t "$(last_err)"
        fi
    done
else
    skip backends-identical "no GPU"
fi

# -- bitexact: no COM marker (0xFF64) with +bitexact, one without it
t=bitexact-no-comment
if ff $(raw gray12le) -frames:v 1 -c:v jpeg2000_cuda -flags +bitexact "$WORK/be.j2c" &&
   ff $(raw gray12le) -frames:v 1 -c:v jpeg2000_cuda "$WORK/nbe.j2c"; then
    has_com() { od -An -tx1 -v "$1" | tr -d ' \n' | grep -q 'ff64'; }
    if has_com "$WORK/be.j2c" && grep -q Lavc "$WORK/be.j2c"; then fail $t "+bitexact stream has a version comment"
    elif ! grep -q Lavc "$WORK/nbe.j2c"; then fail $t "no encoder comment without +bitexact"
    else ok $t; fi
else
    fail $t "$(last_err)"
fi

# -- profile: -profile:v carries Rsiz; the decoder reports it back (DCI 2K on xyz12 2048x1080)
t=profile-dcinema_2k
if ff -f rawvideo -pixel_format xyz12le -video_size ${W}x$H -framerate 24 -i "$S/xyz12le.raw" -frames:v 1 \
       -vf scale=2048:1080 -c:v jpeg2000_cuda -profile:v dcinema_2k -b:v 200M "$WORK/dci.mxf"; then
    p=$("$FFPROBE" -v error -show_entries stream=profile,pix_fmt -of csv=p=0 "$WORK/dci.mxf")
    [ "$p" = "JPEG 2000 digital cinema 2K,xyz12le" ] && ok $t "MXF probes as $p" ||
        fail $t "probed profile,pix_fmt = $p"
else
    fail $t "$(last_err)"
fi

# -- qstep_rate (a -j2kc_params key): on by default under a byte budget (12-bit at 1 Mb/s: 0.53
#    bit/sample, the 9/7 steps coarser by 2 bit-planes, logged at -v verbose), qstep_rate=0 keeps
#    the full-rate steps (another QCD, other bytes), qstep_rate=1 is the default; every file decodes
t=qstep-rate-option
if ff $(raw xyz12le) -frames:v 1 -c:v jpeg2000_cuda -backend ref -b:v 1M "$WORK/qr-def.j2c" &&
   ff $(raw xyz12le) -frames:v 1 -c:v jpeg2000_cuda -backend ref -b:v 1M -j2kc_params qstep_rate=1 "$WORK/qr-on.j2c" &&
   ff $(raw xyz12le) -frames:v 1 -c:v jpeg2000_cuda -backend ref -b:v 1M -j2kc_params qstep_rate=0 "$WORK/qr-off.j2c"; then
    # debug level: qstep_try's "coded again" line is about a discarded coding (not shown at verbose)
    "$FFMPEG" -nostdin -hide_banner -loglevel debug -y $(raw xyz12le) -frames:v 1 -c:v jpeg2000_cuda -backend ref \
        -b:v 1M -f null - > "$WORK/qr.log" 2>&1
    dec_ok=1
    for f in def off; do
        "$FFMPEG" -nostdin -v error -i "$WORK/qr-$f.j2c" -f null - 2> "$WORK/qr-dec.log" && [ ! -s "$WORK/qr-dec.log" ] || dec_ok=0
    done
    if ! grep -q "qstep_rate: 9/7 steps coarsened by 2 bit-planes" "$WORK/qr.log"; then
        fail $t "no 'coarsened by 2 bit-planes' line in the log: $(grep -m1 qstep "$WORK/qr.log")"
    elif ! cmp -s "$WORK/qr-def.j2c" "$WORK/qr-on.j2c"; then fail $t "qstep_rate=1 differs from the default"
    elif cmp -s "$WORK/qr-def.j2c" "$WORK/qr-off.j2c"; then fail $t "qstep_rate=0 wrote the same bytes"
    elif [ $dec_ok = 0 ]; then fail $t "a codestream does not decode cleanly: $(head -c 200 "$WORK/qr-dec.log")"
    else ok $t "2 planes by default, full-rate steps with qstep_rate=0, both decode"; fi
else
    fail $t "$(last_err)"
fi

# -- qstep_try (a -j2kc_params key): on by default with qstep_rate (each frame first coded with
#    up to 3 bit-planes coarser, as many as its quantised coefficients predict it fills its budget
#    with, kept where it does); qstep_try=3 is the default, qstep_try=0 codes once: other bytes
#    when the predicted steps (d > 0) were kept, the same when none were predicted (d = 0) or the
#    frame was coded again (the debug log says which); every file decodes
t=qstep-try-option
if ff $(raw xyz12le) -frames:v 1 -c:v jpeg2000_cuda -backend ref -b:v 1M -j2kc_params qstep_try=3 "$WORK/qt-on.j2c" &&
   ff $(raw xyz12le) -frames:v 1 -c:v jpeg2000_cuda -backend ref -b:v 1M -j2kc_params qstep_try=0 "$WORK/qt-off.j2c"; then
    dec_ok=1
    for f in on off; do
        "$FFMPEG" -nostdin -v error -i "$WORK/qt-$f.j2c" -f null - 2> "$WORK/qt-dec.log" && [ ! -s "$WORK/qt-dec.log" ] || dec_ok=0
    done
    again=0
    grep -q "qstep_try: the frame does not fill" "$WORK/qr.log" && again=1
    d=$(sed -n 's/.*qstep_try: the frame is coded first with \([0-9]\) bit-plane.*/\1/p' "$WORK/qr.log" | head -n 1)
    once=$([ $again = 1 ] || [ "$d" = 0 ] && echo 1 || echo 0)
    if ! grep -q "qstep_try: each frame tried with 3 bit-planes more" "$WORK/qr.log"; then
        fail $t "no 'tried with 3 bit-planes more' line in the log: $(grep -m1 qstep_try "$WORK/qr.log")"
    elif [ -z "$d" ]; then fail $t "no 'coded first with N bit-planes more' line in the debug log"
    elif ! cmp -s "$WORK/qr-def.j2c" "$WORK/qt-on.j2c"; then fail $t "qstep_try=3 differs from the default"
    elif [ $once = 0 ] && cmp -s "$WORK/qr-def.j2c" "$WORK/qt-off.j2c"; then fail $t "qstep_try=0 wrote the same bytes"
    elif [ $once = 1 ] && ! cmp -s "$WORK/qr-def.j2c" "$WORK/qt-off.j2c"; then
        fail $t "$d planes predicted, $([ $again = 1 ] && echo "coded again" || echo "coded once"), yet the bytes differ from qstep_try=0"
    elif [ $dec_ok = 0 ]; then fail $t "a codestream does not decode cleanly: $(head -c 200 "$WORK/qt-dec.log")"
    else ok $t "$d of 3 planes more predicted by default ($([ $again = 1 ] && echo "coded again" ||
                { [ "$d" = 0 ] && echo "coded once" || echo kept; })), once with qstep_try=0, both decode"; fi
else
    fail $t "$(last_err)"
fi

finish
