#!/bin/bash
# out.jp2 is a JP2 file: the image2 muxer wraps jpeg2000_cuda's bare codestreams for *.jp2
# names (jpeg2000_jp2 bitstream filter). Each file must be valid JP2 for jpylyzer, decode
# losslessly with OpenJPEG and FFmpeg (which picks RGB/YUV/grey from the colr box), while
# .j2c/.j2k images, MXF and MOV keep bare codestreams. The filter refuses damaged codestreams
# cleanly.
#   tests/ffmpeg/jp2.sh [BUILD_DIR]
# jpylyzer comes from PyPI: the one on PATH, else a venv in BUILD_DIR/jpylyzer-venv (made on
# first use); without either the validity checks say skip.
. "$(dirname "$0")/common.inc"
ff_require

W=96 H=64
S=$WORK/src
mkdir -p "$S"
for fmt in rgb24 yuv420p yuv444p gray gbrp12le; do
    ff -f lavfi -i "testsrc2=s=${W}x$H:r=25" -frames:v 2 -vf format=$fmt -f rawvideo "$S/$fmt.raw" ||
        { fail "source-$fmt" "$(last_err)"; finish; }
done
raw() { echo "-f rawvideo -pixel_format $1 -video_size ${W}x$H -framerate 25 -i $S/$1.raw"; }
head4() { od -An -tx1 -N"${2:-4}" "$1" | tr -d ' \n'; }

JPYLYZER=$(command -v jpylyzer)
if [ -z "$JPYLYZER" ]; then
    venv=$BUILD/jpylyzer-venv
    if [ ! -x "$venv/bin/jpylyzer" ]; then
        { python3 -m venv "$venv" && "$venv/bin/pip" install -q jpylyzer; } > "$WORK/venv.log" 2>&1 ||
            rm -rf "$venv"
    fi
    [ -x "$venv/bin/jpylyzer" ] && JPYLYZER=$venv/bin/jpylyzer
fi

# jp2_case NAME SRC_FMT DECODE_FMT ENUMCS OPTIONS...: one .jp2 file (-update 1) and a .jp2
# sequence: JP2 signature, colr EnumCS, jpylyzer isValid, OpenJPEG decodes it, our ffmpeg
# decodes it to the source frame (lossless)
jp2_case() {
    local name=$1 fmt=$2 dec=$3 cs=$4 t f got want
    shift 4
    t=jp2-$name
    f=$WORK/$name.jp2
    if ! ff $(raw $fmt) -frames:v 1 -c:v jpeg2000_cuda -pred dwt53 "$@" -update 1 "$f"; then
        fail $t "$(last_err)"; return
    fi
    if [ "$(head4 "$f" 12)" != 0000000c6a5020200d0a870a ]; then fail $t "no JP2 signature box: $(head4 "$f" 12)"; return; fi
    # colr box: size 15, 'colr', METH 1, PREC 0, APPROX 0, EnumCS (32 bits)
    got=$(od -An -tx1 -v "$f" | tr -d ' \n' | grep -o '0000000f636f6c72010000[0-9a-f]\{8\}' | tail -c 9)
    want=$(printf '%08x' $cs)
    if [ "$got" != "$want" ]; then fail $t "colr EnumCS $got, want $want"; return; fi
    want=$("$FFMPEG" -nostdin -v error $(raw $fmt) -frames:v 1 -f framemd5 - | frame_hashes)
    got=$("$FFMPEG" -nostdin -v error -i "$f" -pix_fmt $fmt -f framemd5 - | frame_hashes)
    if [ "$got" != "$want" ]; then fail $t "our ffmpeg decodes a different frame"; return; fi
    if [ -n "$dec" ] && [ "$("$FFPROBE" -v error -show_entries stream=pix_fmt -of csv=p=0 "$f")" != "$dec" ]; then
        fail $t "probed as $("$FFPROBE" -v error -show_entries stream=pix_fmt -of csv=p=0 "$f"), want $dec"; return
    fi
    ok $t "JP2 signature, EnumCS $cs, lossless through our ffmpeg"

    t=jp2-$name-openjpeg
    if have opj_decompress; then
        opj_decompress -i "$f" -o "$WORK/$name-opj.ppm" > "$WORK/opj.log" 2>&1 && ! grep -qi error "$WORK/opj.log" &&
            ok $t || fail $t "$(grep -im1 error "$WORK/opj.log")"
    else
        skip $t "opj_decompress missing"
    fi

    t=jp2-$name-jpylyzer
    if [ -z "$JPYLYZER" ]; then
        skip $t "jpylyzer not available (not on PATH, pip install into $BUILD/jpylyzer-venv failed)"
    elif "$JPYLYZER" "$f" > "$WORK/jpy.xml" 2>&1 && grep -q '<isValid format="jp2">True</isValid>' "$WORK/jpy.xml"; then
        ok $t "isValid jp2: True"
    else
        fail $t "jpylyzer: $(grep -o '<isValid[^<]*</isValid>' "$WORK/jpy.xml") $(grep -o '<[a-zA-Z]*>False</[a-zA-Z]*>' "$WORK/jpy.xml" | head -n 3 | tr '\n' ' ')"
    fi
}
jp2_case rgb24 rgb24 rgb24 16
jp2_case yuv420p yuv420p yuv420p 18
# bare 4:4:4 YUV codestreams decode as RGB; the JP2's sYCC colr makes it YUV again
jp2_case yuv444p yuv444p yuv444p 18
jp2_case gray gray gray 17
# 12-bit GBR: RGB, and depths equal (no bpcc box)
jp2_case gbrp12 gbrp12le "" 16

# -- a .jp2 sequence: every file is JP2
t=jp2-sequence
mkdir -p "$WORK/seq"
if ff $(raw yuv420p) -c:v jpeg2000_cuda -b:v 1M "$WORK/seq/%03d.jp2"; then
    sigs=$(for f in "$WORK"/seq/*.jp2; do head4 "$f" 8; echo; done | sort -u)
    [ "$sigs" = 0000000c6a502020 ] && ok $t "2 files, JP2 signature" || fail $t "signatures: $sigs"
else
    fail $t "$(last_err)"
fi

# -- -format jp2: the encoder's own JP2 passes the muxer unchanged (not wrapped twice)
t=jp2-encoder-format-not-wrapped-twice
if ff $(raw rgb24) -frames:v 1 -c:v jpeg2000_cuda -format jp2 -update 1 "$WORK/own.jp2" &&
   ff $(raw rgb24) -frames:v 1 -c:v jpeg2000_cuda -format jp2 -f image2pipe "$WORK/own.pipe"; then
    n=$(od -An -tx1 -v "$WORK/own.jp2" | tr -d ' \n' | grep -o '6a502020' | wc -l)
    if [ "$n" != 1 ]; then fail $t "$n signature boxes"
    elif ! cmp -s "$WORK/own.jp2" "$WORK/own.pipe"; then fail $t "the muxer changed the encoder's JP2"
    else ok $t; fi
else
    fail $t "$(last_err)"
fi

# -- bare codestreams elsewhere: .j2c, .j2k, MXF, MOV and image2pipe start with SOC+SIZ
t=bare-codestreams-elsewhere
bad=
for out in one.j2c one.j2k; do
    ff $(raw rgb24) -frames:v 1 -c:v jpeg2000_cuda -update 1 "$WORK/$out" || { bad="$bad $out(encode)"; continue; }
    [ "$(head4 "$WORK/$out")" = ff4fff51 ] || bad="$bad $out"
done
ff $(raw rgb24) -frames:v 1 -c:v jpeg2000_cuda -f image2pipe "$WORK/pipe.j2k" &&
    [ "$(head4 "$WORK/pipe.j2k")" = ff4fff51 ] || bad="$bad image2pipe"
for out in one.mxf one.mov; do
    if ff $(raw rgb24) -frames:v 1 -c:v jpeg2000_cuda "$WORK/$out"; then
        # the first packet's first bytes, from ffprobe's hex dump ("00000000: ff4f ff51 ...")
        p=$("$FFPROBE" -v error -select_streams v -show_packets -show_data "$WORK/$out" |
            grep -m 1 '^00000000:' | awk '{ print $2 $3 }')
        [ "$p" = ff4fff51 ] || bad="$bad $out($p)"
    else
        bad="$bad $out(encode)"
    fi
done
[ -z "$bad" ] && ok $t ".j2c .j2k image2pipe .mxf .mov" || fail $t "not a bare codestream:$bad"

# -- the filter on damaged input (it reads the SIZ marker segment with bytestream2): a packet
#    too short for SOC+SIZ, Csiz 0 and an Lsiz that disagrees with Csiz are refused with an
#    error and a non-zero exit; codestreams with random bytes changed in their main header
#    (seed printed; SEED=N repeats) are wrapped or refused, never a crash
bsf() {   # bsf IN OUT: ffmpeg -c:v copy through jpeg2000_jp2, -xerror: a filter error is fatal
    timeout 60 "$FFMPEG" -nostdin -hide_banner -loglevel error -xerror -y -f image2 -c:v jpeg2000 -i "$1" -c:v copy \
        -bsf:v jpeg2000_jp2 -f image2pipe "$2" 2> "$WORK/err"
}
patch_bytes() {   # patch_bytes FILE OFFSET HEX...: overwrites bytes in place
    local f=$1 off=$2
    shift 2
    printf "$(printf '\\x%s' "$@")" | dd of="$f" bs=1 seek="$off" conv=notrunc 2>/dev/null
}
if [ -s "$WORK/one.j2c" ]; then
    head -c 20 "$WORK/one.j2c" > "$WORK/short.j2c"
    cp "$WORK/one.j2c" "$WORK/csiz0.j2c"; patch_bytes "$WORK/csiz0.j2c" 40 00 00
    cp "$WORK/one.j2c" "$WORK/lsiz.j2c";  patch_bytes "$WORK/lsiz.j2c" 4 00 30
    for c in "short:neither a JPEG 2000 codestream" "csiz0:Invalid SIZ marker segment" \
             "lsiz:Invalid SIZ marker segment"; do
        n=${c%%:*} re=${c#*:} t=bsf-refuses-${c%%:*}
        bsf "$WORK/$n.j2c" "$WORK/$n.jp2"
        rc=$?
        if signalled $rc || [ $rc = 124 ]; then fail $t "exit $rc"
        elif [ $rc = 0 ]; then fail $t "accepted"
        elif ! grep -q "$re" "$WORK/err"; then fail $t "no '$re': $(last_err)"
        else ok $t "$re"; fi
    done
    t=bsf-damaged-headers
    seed=${SEED:-$(( $(date +%s) % 100000 ))}
    RANDOM=$seed
    crashed= refused=0 wrapped=0
    for ((i = 0; i < 24; i++)); do
        cp "$WORK/one.j2c" "$WORK/fz.j2c"
        for ((k = 0; k < 3; k++)); do
            patch_bytes "$WORK/fz.j2c" $(( 2 + RANDOM % 60 )) "$(printf '%02x' $(( RANDOM % 256 )))"
        done
        bsf "$WORK/fz.j2c" "$WORK/fz.jp2"
        rc=$?
        if signalled $rc || [ $rc = 124 ]; then crashed="$crashed $i($rc)"
        elif [ $rc = 0 ]; then wrapped=$((wrapped + 1))
        else refused=$((refused + 1)); fi
    done
    [ -z "$crashed" ] && ok $t "seed $seed: $wrapped wrapped, $refused refused" ||
        fail $t "seed $seed: crashed or hung:$crashed"
else
    skip bsf-damaged "no one.j2c (its encode failed above)"
fi

finish
