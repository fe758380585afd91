#!/bin/bash
# MXF track files from ffmpeg -c:v jpeg2000_cuda, judged by outside readers:
#  - tests/gen/klvdump.c (our own KLV reader, always): KLV structure (no short-form BER length,
#    nothing running past its set), the picture coding label, the JPEG 2000 subdescriptor items
#    (Rsiz, CodingStyleDefault, QuantizationDefault, J2CLayout), the colour labels, FrameLayout,
#    AspectRatio; the essence elements it extracts must equal the codestreams the same ffmpeg
#    command writes as .j2c images.
#  - asdcplib (tools/asdcplib-build.sh; skipped without its source tarball): asdcp-info and
#    asdcp-unwrap for the D-Cinema files (SMPTE ST 429-4), as-02-info and as-02-unwrap for IMF
#    and broadcast (SMPTE ST 2067-5); extracted codestreams must equal the encoder's.
#  - mediainfo (Debian; skipped when missing): format profile, compression mode, scan type.
#  - FFmpeg decodes every file back; reversible profiles bit-exact against the source frames.
# Frames are small in number (DCI sizes are fixed): the whole script takes a few minutes.
#   tests/ffmpeg/mxf.sh [BUILD_DIR]
. "$(dirname "$0")/common.inc"
ff_require

klv_build
# The reader must itself catch what asdcplib rejects: a partition pack key with a short-form
# BER length.
printf '\006\016\053\064\002\005\001\001\015\001\002\001\001\002\004\000\020' > "$WORK/short-ber.mxf"
head -c 16 /dev/zero >> "$WORK/short-ber.mxf"
if ! "$KLV" "$WORK/short-ber.mxf" >/dev/null 2>"$WORK/klv.err" && grep -q 'short-form BER' "$WORK/klv.err"; then
    ok klvdump/short-ber "rejected: $(cat "$WORK/klv.err")"
else
    fail klvdump/short-ber "a short-form BER length was not reported"
fi

asdcp_tools asdcp-info
have mediainfo || skip mediainfo "mediainfo not installed (Debian: mediainfo; tests/install-deps.sh): mediainfo checks skipped"

# Item ULs (SMPTE ST 377-1, ST 422), as 32 hex digits; '..' stands for the version byte.
UL_CODING=060e2b34010101..0401060100000000     # PictureEssenceCoding
UL_RSIZ=060e2b34010101..0401060301000000       # JPEG2000PictureSubDescriptor Rsiz
UL_CSD=060e2b34010101..040106030c000000        # CodingStyleDefault
UL_QCD=060e2b34010101..040106030d000000        # QuantizationDefault
UL_J2CLAYOUT=060e2b34010101..040106030e000000  # J2CLayout
UL_LAYOUT=060e2b34010101..0401030104000000     # FrameLayout
UL_ASPECT=060e2b34010101..0401010101000000     # AspectRatio
UL_EQUATIONS=060e2b34010101..0401020101030100  # CodingEquations
UL_PRIMARIES=060e2b34010101..0401020101060100  # ColorPrimaries
UL_TRC=060e2b34010101..0401020101010200        # TransferCharacteristic
UL_PIXLAYOUT=060e2b34010101..0401050306000000  # RGBA PixelLayout
UL_SAMPLE_RATE=060e2b34010101..0406010100000000 # SampleRate (descriptor)
UL_EDIT_RATE=060e2b34010101..0530040500000000  # EditRate (tracks)
UL_INDEX_RATE=060e2b34010101..0530040600000000 # IndexEditRate
UL_STORED_H=060e2b34010101..0401050201000000   # StoredHeight
UL_SAMPLED_H=060e2b34010101..0401050107000000  # SampledHeight
UL_DISPLAY_H=060e2b34010101..040105010b000000  # DisplayHeight
UL_LINEMAP=060e2b34010101..0401030205000000    # VideoLineMap
UL_DOMINANCE=060e2b34010101..0401030106000000  # FieldDominance
UL_YSIZ=060e2b34010101..0401060303000000       # JPEG2000PictureSubDescriptor Ysiz
UL_CONTAINER=060e2b34010101..0601010401020000  # EssenceContainer (descriptor)
UL_EC_BATCH=060e2b34010101..0102021002010000   # EssenceContainers (preface)
UL_RGBA_KEY=060e2b34025301010d01010101012900   # RGBA descriptor set key
UL_CDCI_KEY=060e2b34025301010d01010101012800   # CDCI descriptor set key

# JPEG 2000 essence container labels (SMPTE ST 422:2019): byte 15 is the content kind.
EC_FU=060e2b34040101070d010301020c0100  # FU: frame wrapping, picture structure undefined
EC_P1=060e2b340401010d0d010301020c0600  # P1: progressive frames
EC_I1=060e2b340401010d0d010301020c0300  # I1: interlaced frames, one field per KLV
EC_I2=060e2b340401010d0d010301020c0400  # I2: interlaced frames, both fields in one KLV
UL_CONTAINER_DUR=060e2b34010101..0406010200000000 # ContainerDuration
UL_DURATION=060e2b34010101..0702020101030000   # Duration (sequences, source clips, timecode)
UL_INDEX_DUR=060e2b34010101..0702020101020000  # IndexDuration
UL_INDEX_ENTRIES=060e2b34010101..0404040205000000 # IndexEntryArray

# item DUMP UL: the value(s) of an item (hex)
item() { awk -v re="^$2\$" '$1 == "I" && $2 ~ re { print $3 }' "$1"; }
# has_key DUMP KEY: whether a set with this key is present
has_key() { awk -v k="$2" '$1 == "K" && $2 == k { f = 1 } END { exit !f }' "$1"; }

# containers DUMP: every essence container label of the file, one a line, each prefixed with
# where it is: descriptor (EssenceContainer), preface (EssenceContainers batch, after its count
# and item size), partition (each partition pack's batch)
containers() {
    item "$1" "$UL_CONTAINER" | sed 's/^/descriptor /'
    item "$1" "$UL_EC_BATCH" | cut -c17- | fold -w 32 | sed 's/^/preface /'
    awk '$1 == "E" { print "partition " $2 }' "$1"
}
# content_kind DUMP NAME LABEL LABEL_NAME: one check line: the descriptor, the preface and at
# least two partition packs (header, footer) carry LABEL, and no other label is present
content_kind() {
    local seen
    seen=$(containers "$1")
    if [ -z "$(echo "$seen" | awk -v l="$3" '$2 != l')" ] &&
       echo "$seen" | grep -q '^descriptor ' && echo "$seen" | grep -q '^preface ' &&
       [ "$(echo "$seen" | grep -c '^partition ')" -ge 2 ]; then
        ok $2/content-kind "$4 ($3): descriptor, preface, $(echo "$seen" | grep -c '^partition ') partition packs"
    else
        fail $2/content-kind "expected $4 ($3) everywhere, found: $(echo "$seen" | sort | uniq -c | tr -s ' \n' ' ')"
    fi
}

# rates DUMP FPS: whether the descriptor's SampleRate, every track's EditRate and the index's
# IndexEditRate are FPS/1 (and each is present)
rates() {
    local exp
    exp=$(printf '%08x00000001' "$2")
    for u in "$UL_SAMPLE_RATE" "$UL_EDIT_RATE" "$UL_INDEX_RATE"; do
        [ "$(item "$1" "$u" | sort -u)" = "$exp" ] || return 1
    done
}
rates_seen() {
    echo "SampleRate $(item "$1" "$UL_SAMPLE_RATE" | sort -u | tr '\n' ' ')EditRate" \
         "$(item "$1" "$UL_EDIT_RATE" | sort -u | tr '\n' ' ')IndexEditRate $(item "$1" "$UL_INDEX_RATE" | sort -u | tr '\n' ' ')"
}

# Picture coding label ...03.01.pp.ll of the JPEG 2000 profile with Rsiz $1 (independent of the
# muxer's table: SMPTE ST 422 / asdcplib MDD.cpp).
coding_ul() {
    local rsiz=$(( $1 )) p m sl ll i
    local maxsub=(0 1 1 1 2 3 4 5 6 7 8 9)
    if [ $rsiz = 3 ] || [ $rsiz = 4 ]; then printf '060e2b34040101090401020203010%d%02x\n' 1 $rsiz; return; fi
    p=$(( rsiz >> 8 )); m=$(( rsiz & 15 )); sl=$(( (rsiz >> 4) & 15 ))
    if [ $p -ge 1 ] && [ $p -le 3 ]; then printf '060e2b340401010d04010202030101%02x\n' $(( 0x10 + m )); return; fi
    ll=0
    if [ $m -gt 0 ]; then
        ll=$(( 2 + sl )); for ((i = 1; i < m; i++)); do ll=$(( ll + maxsub[i] + 1 )); done
    fi
    printf '060e2b340401010d04010202030 1%02x%02x\n' $(( p - 2 )) $ll | tr -d ' '
}

# Source frames: testsrc2 without a sample aspect ratio, through rawvideo (as a raw file would be).
# src NAME W H RATE FRAMES PIX_FMT [FIELD_MODE]: writes $WORK/NAME.raw
src() {
    "$FFMPEG" -nostdin -hide_banner -loglevel error -y -f lavfi \
        -i "testsrc2=s=$2x$3:r=$4" -frames:v "$5" -pix_fmt "$6" -f rawvideo "$WORK/$1.raw" 2>"$WORK/err"
}

# run_case NAME FMT W H RATE FRAMES PIX_FMT "ENC_OPTS" PROFILE LOSSLESS SCAN DESC JUDGE
#   FMT: mxf | mxf_opatom; PROFILE: the Rsiz profile asked for (3, 4, or 0xPP00: the encoder
#   chooses the levels, read back from the codestream); DESC: RGBA-X (X'Y'Z') | RGBA-R (RGB) |
#   CDCI; JUDGE: dci (asdcp-info / asdcp-unwrap) | imf (as-02-info / as-02-unwrap)
run_case() {
    local n=$1 fmt=$2 w=$3 h=$4 rate=$5 frames=$6 pix=$7 opts=$8 profile=$9 lossless=${10}
    local scan=${11} desc=${12} judge=${13}
    local in=(-f rawvideo -pix_fmt "$pix" -s "${w}x$h" -framerate "$rate" -i "$WORK/src-$n.raw")
    local out=$WORK/$n.mxf dump=$WORK/$n.klv v exp i f nfr
    src "src-$n" "$w" "$h" "$rate" "$frames" "$pix" || { fail $n "source: $(last_err)"; return; }
    # shellcheck disable=SC2086
    if ! ff "${in[@]}" -c:v jpeg2000_cuda $opts -f "$fmt" "$out"; then
        fail $n "ffmpeg -f $fmt failed: $(last_err)"; return
    fi
    mkdir -p "$WORK/$n.j2c" "$WORK/$n.x"
    # shellcheck disable=SC2086
    if ! ff "${in[@]}" -c:v jpeg2000_cuda $opts -f image2 "$WORK/$n.j2c/%06d.j2c"; then
        fail $n "ffmpeg -f image2 failed: $(last_err)"; return
    fi
    nfr=$(ls "$WORK/$n.j2c" | wc -l)
    [ "$nfr" = "$frames" ] || { fail $n "$nfr codestreams for $frames frames"; return; }
    # Rsiz of the codestreams (SIZ follows SOC: bytes 6-7)
    local rsiz
    rsiz=0x$(od -An -v -tx1 -j6 -N2 "$WORK/$n.j2c/000001.j2c" | tr -d ' \n')
    LAST_RSIZ=$rsiz
    if [ $(( profile )) -lt 256 ] && [ $(( rsiz )) != $(( profile )) ] ||
       [ $(( profile )) -ge 256 ] && [ $(( rsiz & 0xff00 )) != $(( profile )) ]; then
        fail $n "codestream Rsiz $rsiz, profile $profile asked for"; return
    fi

    # --- our KLV reader: structure, labels, subdescriptor, essence
    if ! "$KLV" -x "$WORK/$n.x/" "$out" > "$dump" 2>"$WORK/klv.err"; then
        fail $n/klv "$(cat "$WORK/klv.err")"; return
    fi
    ok $n/klv "long-form BER lengths throughout"
    exp=$(coding_ul "$rsiz")
    v=$(item "$dump" "$UL_CODING" | sort -u)
    [ "$v" = "$exp" ] && ok $n/coding-ul "$v" || fail $n/coding-ul "PictureEssenceCoding $v, expected $exp (Rsiz $rsiz)"
    v=$(item "$dump" "$UL_RSIZ")
    [ "$v" = "$(printf %04x $(( rsiz )))" ] && ok $n/rsiz "$v" || fail $n/rsiz "subdescriptor Rsiz '$v', expected $(printf %04x $(( rsiz )))"
    # CodingStyleDefault / QuantizationDefault: the main header COD / QCD of the first codestream
    # (marker segment bodies without marker and length).
    local cod qcd
    cod=$(od -An -v -tx1 "$WORK/$n.j2c/000001.j2c" | tr -d ' \n' | grep -o 'ff52[0-9a-f]*' | head -c 4000)
    local lcod=$(( 16#${cod:4:4} ))
    cod=${cod:8:$(( (lcod - 2) * 2 ))}
    qcd=$(od -An -v -tx1 "$WORK/$n.j2c/000001.j2c" | tr -d ' \n' | grep -o 'ff5c[0-9a-f]*' | head -c 4000)
    local lqcd=$(( 16#${qcd:4:4} ))
    qcd=${qcd:8:$(( (lqcd - 2) * 2 ))}
    [ -n "$cod" ] && [ "$(item "$dump" "$UL_CSD")" = "$cod" ] && ok $n/coding-style-default ||
        fail $n/coding-style-default "'$(item "$dump" "$UL_CSD")', COD body '$cod'"
    [ -n "$qcd" ] && [ "$(item "$dump" "$UL_QCD")" = "$qcd" ] && ok $n/quantization-default ||
        fail $n/quantization-default "'$(item "$dump" "$UL_QCD")', QCD body '$qcd'"
    v=$(item "$dump" "$UL_J2CLAYOUT")
    case $desc in
    RGBA-X) exp=d8..d9..da..00000000000000000000 ;;
    RGBA-R) exp=52..47..42..00000000000000000000 ;;
    CDCI)   exp=59..55..56..00000000000000000000 ;;
    esac
    [[ $v =~ ^$exp$ ]] && ok $n/j2clayout "$v" || fail $n/j2clayout "'$v', expected $exp"
    case $desc in
    RGBA-*) has_key "$dump" "$UL_RGBA_KEY" && ! has_key "$dump" "$UL_CDCI_KEY" && ok $n/descriptor "RGBA" ||
                fail $n/descriptor "no RGBA descriptor (or a CDCI one)" ;;
    CDCI)   has_key "$dump" "$UL_CDCI_KEY" && ! has_key "$dump" "$UL_RGBA_KEY" && ok $n/descriptor "CDCI" ||
                fail $n/descriptor "no CDCI descriptor (or an RGBA one)" ;;
    esac
    if [ $desc = RGBA-X ]; then
        # X'Y'Z' (SMPTE ST 428-1): DCDM primaries and transfer, no coding equations
        v="$(item "$dump" "$UL_PRIMARIES")/$(item "$dump" "$UL_TRC")/$(item "$dump" "$UL_EQUATIONS")"
        [[ $v =~ ^060e2b34040101..0401010103050000/060e2b34040101..0401010101070000/$ ]] &&
            ok $n/colour "DCDM primaries, ST 428 transfer, no coding equations" ||
            fail $n/colour "primaries/transfer/equations: $v"
    fi
    v=$(item "$dump" "$UL_ASPECT")
    exp=$(awk -v w=$w -v h=$h 'function g(a, b) { return b ? g(b, a % b) : a }
        BEGIN { d = g(w, h); printf "%08x%08x\n", w / d, h / d }')
    [ "$v" = "$exp" ] && ok $n/aspect-ratio "$v" || fail $n/aspect-ratio "AspectRatio $v, expected $exp ($w:$h)"
    v=$(item "$dump" "$UL_LAYOUT")
    [ "$v" = 00 ] && ok $n/frame-layout "full frame" || fail $n/frame-layout "FrameLayout '$v'"
    # Content kind of the essence container: D-Cinema keeps FU (asdcplib's AS-DCP writer, SMPTE
    # ST 429-4); IMF (ST 2067-21: validators match it against FrameLayout) and broadcast profiles
    # say P1, as asdcplib's AS-02 writer does for progressive pictures.
    if [ $(( rsiz )) = 3 ] || [ $(( rsiz )) = 4 ]; then
        content_kind "$dump" $n $EC_FU FU
    else
        content_kind "$dump" $n $EC_P1 P1
    fi
    # every edit rate of the file (tracks, index) and the descriptor's sample rate: the stream's
    rates "$dump" "$rate" && ok $n/rates "$rate/1 throughout" || fail $n/rates "$(rates_seen "$dump")"
    i=0
    for f in "$WORK/$n.j2c"/*.j2c; do
        cmp -s "$f" "$(printf '%s/%06d.j2c' "$WORK/$n.x" $i)" || { fail $n/essence "element $i differs from the encoder's codestream"; i=-1; break; }
        i=$((i + 1))
    done
    [ $i = "$frames" ] && ok $n/essence "$frames elements byte-identical to the .j2c output"

    # --- asdcplib
    if [ -n "$ASDCP" ]; then
        local info unwrap iopts
        # as-02-info checks the bit rate against a table that only knows the broadcast labels
        # (IMF ones read as 0 Mb/s): -t lifts its limit; asdcp-info keeps the DCI 250 Mb/s.
        if [ $judge = dci ]; then info=asdcp-info; unwrap=asdcp-unwrap; iopts="-d -c"
        else info=as-02-info; unwrap=as-02-unwrap; iopts="-d -c -t 100000"; fi
        # shellcheck disable=SC2086
        if "$ASDCP/$info" $iopts "$out" > "$WORK/$n.info" 2>&1; then
            ok $n/$info
        else
            fail $n/$info "$(grep -v '^ ' "$WORK/$n.info" | head -n 3 | tr '\n' ' ')"
        fi
        grep -Eq "essence type is JPEG 2000 pictures, \($frames edit units?\)" "$WORK/$n.info" &&
            grep -Eq "EditRate: $rate/1|SampleRate = $rate/1" "$WORK/$n.info" &&
            grep -Eq "StoredWidth: $w|StoredWidth = $w" "$WORK/$n.info" &&
            grep -Eq "StoredHeight: $h|StoredHeight = $h" "$WORK/$n.info" &&
            ok $n/$info-describes "JPEG 2000, ${w}x$h, $rate/1, $frames edit units" ||
            fail $n/$info-describes "$(grep -E 'essence type|EditRate|SampleRate|StoredWidth|StoredHeight' "$WORK/$n.info" | tr -s ' \n' ' ')"
        mkdir -p "$WORK/$n.u"
        if (cd "$WORK/$n.u" && "$ASDCP/$unwrap" "$out" f > "$WORK/$n.unwrap" 2>&1); then
            i=0
            for f in "$WORK/$n.j2c"/*.j2c; do
                cmp -s "$f" "$(printf '%s/f%06d.j2c' "$WORK/$n.u" $i)" || { fail $n/$unwrap "frame $i differs (or missing: $(ls "$WORK/$n.u" | head -n 3 | tr '\n' ' '))"; i=-1; break; }
                i=$((i + 1))
            done
            [ $i = "$frames" ] && ok $n/$unwrap "$frames codestreams byte-identical"
        else
            fail $n/$unwrap "$(head -n 3 "$WORK/$n.unwrap" | tr '\n' ' ')"
        fi
    fi

    # --- mediainfo
    if have mediainfo; then
        local mi
        mi=$(mediainfo --Inform='Video;%Format%|%Format_Profile%|%Compression_Mode%|%ScanType%' "$out" 2>&1)
        # Compression mode: Lossless exactly when the profile is reversible and unbounded
        # (mediainfo leaves it empty or says Lossy otherwise); a format profile is always named.
        local mode_ok=0
        if [ "$lossless" = 1 ]; then [[ $mi == *"|Lossless|"* ]] && mode_ok=1
        else [[ $mi != *"Lossless"* ]] && mode_ok=1; fi
        if [[ $mi == "JPEG 2000|"?* ]] && [[ $mi != "JPEG 2000||"* ]] && [ $mode_ok = 1 ] &&
           [[ $mi == *"|$scan" ]]; then
            ok $n/mediainfo "$mi"
        else
            fail $n/mediainfo "'$mi' (expected JPEG 2000|profile|$([ "$lossless" = 1 ] && echo Lossless || echo 'not Lossless')|$scan)"
        fi
    fi

    # --- FFmpeg reads it back
    if ! "$FFMPEG" -nostdin -hide_banner -loglevel error -i "$out" -f framemd5 "$WORK/$n.dec.md5" 2>"$WORK/err"; then
        fail $n/decode "$(last_err)"
    else
        if [ $desc = CDCI ]; then
            # a CDCI descriptor says Y'CbCr, 4:4:4 included (the codestream alone does not)
            v=$("$FFPROBE" -v error -select_streams v:0 -show_entries stream=pix_fmt -of csv=p=0 "$out")
            [[ $v == yuv* ]] && ok $n/ycbcr "$v" || fail $n/ycbcr "decoded as $v, not Y'CbCr"
        fi
        v=$(grep -vc '^#' "$WORK/$n.dec.md5")
        if [ "$v" != "$frames" ]; then
            fail $n/decode "$v frames decoded, $frames written"
        elif [ -s "$WORK/err" ]; then
            # e.g. frame-wrapped OP-Atom taken for clip-wrapped: "partial file?" at the end
            fail $n/decode "errors while reading: $(last_err)"
        else
            ok $n/decode "$frames frames, no errors"
        fi
        if [ "$lossless" = 1 ]; then
            local dpix
            dpix=$("$FFPROBE" -v error -select_streams v:0 -show_entries stream=pix_fmt -of csv=p=0 "$out")
            "$FFMPEG" -nostdin -hide_banner -loglevel error -i "$out" -pix_fmt "$pix" -f framemd5 "$WORK/$n.dec2.md5" 2>"$WORK/err"
            "$FFMPEG" -nostdin -hide_banner -loglevel error "${in[@]}" -f framemd5 "$WORK/$n.src.md5" 2>>"$WORK/err"
            if [ "$(frame_hashes < "$WORK/$n.dec2.md5")" = "$(frame_hashes < "$WORK/$n.src.md5")" ]; then
                ok $n/lossless "decoded frames equal the source ($dpix)"
            else
                fail $n/lossless "decoded frames ($dpix -> $pix) differ from the source"
            fi
        fi
    fi
}

# Bitrate budgets stay inside the DCI limits (250 Mb/s: 1,302,083 bytes per frame at 24 fps).
# The source is generated in the coded pixel format, so lossless files compare bit-exact.
# Frame counts: asdcp-info 2.13.3 divides by (duration - 2) and as-02-info by (duration - 1)
# in their bit-rate summaries (integer division by zero, SIGFPE): D-Cinema files get 3 frames
# (1 for 4K, where the unsigned difference wraps), IMF and broadcast files at least 2.
DCI="-b:v 200M"
#        name          fmt        w    h    fps frames pix         encoder options               profile lossless scan  desc   judge
run_case dci2k-24      mxf_opatom 2048 1080 24 3 xyz12le     "$DCI -profile:v dcinema_2k"      3      0 Progressive RGBA-X dci
run_case dci2k-24-op1a mxf        2048 1080 24 2 xyz12le     "$DCI -profile:v dcinema_2k"      3      0 Progressive RGBA-X imf
run_case dci2k-48      mxf_opatom 2048 1080 48 3 xyz12le     "$DCI -profile:v dcinema_2k"      3      0 Progressive RGBA-X dci
run_case dci4k-24      mxf_opatom 4096 2160 24 1 xyz12le     "$DCI -profile:v dcinema_4k"      4      0 Progressive RGBA-X dci
run_case imf2k         mxf        1920 1080 24 2 yuv422p10le "-b:v 200M -profile:v imf_2k"     0x0400 0 Progressive CDCI   imf
rsiz24=$LAST_RSIZ
# 60 fps: more samples per second than IMF main level 1 allows, so a higher level (another
# Rsiz and picture coding label) than at 24 fps; the descriptor follows the stream
run_case imf2k-60      mxf        1920 1080 60 2 yuv422p10le "-b:v 400M -profile:v imf_2k"     0x0400 0 Progressive CDCI   imf
if [ $(( LAST_RSIZ & 15 )) -gt $(( rsiz24 & 15 )) ]; then
    ok imf2k-60/level "main level $(( LAST_RSIZ & 15 )) at 60 fps, $(( rsiz24 & 15 )) at 24 fps"
else
    fail imf2k-60/level "main level $(( LAST_RSIZ & 15 )) at 60 fps, not above 24 fps's $(( rsiz24 & 15 ))"
fi
run_case imf2k-r       mxf        1920 1080 24 2 gbrp12le    "-profile:v imf_2k_r"             0x0700 1 Progressive RGBA-R imf
run_case imf4k         mxf        3840 2160 24 2 yuv422p10le "-b:v 400M -profile:v imf_4k"     0x0500 0 Progressive CDCI   imf
run_case imf4k-r       mxf        3840 2160 24 2 yuv422p10le "-profile:v imf_4k_r"             0x0800 1 Progressive CDCI   imf
run_case bcast         mxf        1920 1080 25 2 yuv422p10le "-b:v 100M -profile:v broadcast"  0x0100 0 Progressive CDCI   imf
run_case bcast-multi4  mxf        1920 1080 25 2 yuv422p10le "-b:v 200M -profile:v 0x0204"     0x0200 0 Progressive CDCI   imf
run_case bcast-r7      mxf        1920 1080 25 2 yuv444p10le "-profile:v 0x0307"               0x0300 1 Progressive CDCI   imf

# A codestream without a profile (Rsiz 0): the muxer's FU label, as for any JPEG 2000 in MXF.
n=noprofile
if src src-$n 352 288 25 2 yuv422p10le &&
   ff -f rawvideo -pix_fmt yuv422p10le -s 352x288 -framerate 25 -i "$WORK/src-$n.raw" \
       -c:v jpeg2000_cuda -b:v 4M -f mxf "$WORK/$n.mxf" &&
   "$KLV" "$WORK/$n.mxf" > "$WORK/$n.klv" 2>"$WORK/klv.err"; then
    v=$(item "$WORK/$n.klv" "$UL_RSIZ")
    [ "$v" = 0000 ] && ok $n/rsiz "$v" || fail $n/rsiz "subdescriptor Rsiz '$v', expected 0000"
    content_kind "$WORK/$n.klv" $n $EC_FU FU
else
    fail $n "$(last_err) $(cat "$WORK/klv.err" 2>/dev/null)"
fi

# ---- interlaced sources: two field codestreams per edit unit ---------------------------------

# SMPTE ST 422 wraps field-based JPEG 2000 as FrameLayout SeparateFields, field 1 (the top
# field) first, FieldDominance saying which field is displayed first. Broadcast files put both
# fields of a frame in one KLV, the edit unit (I2); IMF track files (SMPTE ST 2067-21) each field
# in a KLV of its own that is an edit unit of its own (I1), as asdcplib's as-02-wrap -i writes:
# edit rate, sample rate and index at the field rate, an index entry per field, durations in
# fields. The codestreams must equal what the j2kc CLI writes for each field alone.
J2KC=$BUILD/bin/j2kc
[ -x "$J2KC" ] || skip fields/j2kc "$J2KC not built (make B=$BUILD): field codestreams not compared"
if have mxf2raw; then
    BMX=1
else
    BMX=
    skip fields/bmx "bmx (mxf2raw) is not packaged for Debian 12 nor on PyPI: its field extraction is not checked; asdcplib and klvdump extract the edit units"
fi

# fields_of FILE DIR: splits an edit unit into DIR/1.j2c and DIR/2.j2c at the boundary EOC|SOC|SIZ
# (ff d9 ff 4f ff 51: the marker codes ff 90..ff ff never occur inside coded data, ISO/IEC
# 15444-1 Annex A.1)
fields_of() {
    local off
    off=$(LC_ALL=C grep -obUaP '\xff\xd9\xff\x4f\xff\x51' "$1" | cut -d: -f1)
    [ -n "$off" ] && [ "$(echo "$off" | wc -l)" = 1 ] || return 1
    mkdir -p "$2"
    head -c $(( off + 2 )) "$1" > "$2/1.j2c"
    tail -c +$(( off + 3 )) "$1" > "$2/2.j2c"
}

# index_offsets DUMP: the stream offsets of the IndexEntryArray's entries (SMPTE ST 377-1
# 11.2.5: count, entry size, then per entry TemporalOffset, KeyFrameOffset, Flags, StreamOffset),
# in decimal, one a line
index_offsets() {
    local a
    a=$(item "$1" "$UL_INDEX_ENTRIES" | head -n 1)
    [ -n "$a" ] || return
    awk -v a="$a" 'function hex(s,  v, i) { v = 0; for (i = 1; i <= length(s); i++)
                                              v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
                                          return v }
        BEGIN { n = hex(substr(a, 1, 8)); sz = hex(substr(a, 9, 8))
                for (i = 0; i < n; i++) print hex(substr(a, 17 + 2 * i * sz + 6, 16)) }'
}
# element_offsets DUMP: where each picture element starts in the essence container (the body
# offsets an index points at), from the element lengths: elements one after the other, 16-byte
# key and 4-byte BER length each, no fill between (the track file layout of both writers)
element_offsets() {
    awk '$1 == "K" && $2 ~ /^060e2b34010201010d01030115/ { print o + 0; o += 20 + $3 }' "$1"
}
# track_items DUMP: "KIND EditRate VALUE" for each track and "KIND Duration VALUE" for each
# sequence and component, KIND the data definition (picture, timecode, other) of the track's
# sequence or of the set itself (a Track set comes before its Sequence: ST 377-1 header
# metadata as both writers order it), one a line
track_items() {
    awk 'function kind(d) {
             if (d ~ /0103020201000000$/) return "picture"
             if (d ~ /0103020101000000$/) return "timecode"
             return "other" }
         function flush() { if (dur != "" && dd != "") print kind(dd), "Duration", dur }
         $1 == "K" { flush(); dd = ""; dur = ""; next }
         $1 == "I" && $2 ~ /^060e2b34010101..0407010000000000$/ {
             dd = $3; if (rate != "") { print kind(dd), "EditRate", rate; rate = "" } }
         $1 == "I" && $2 ~ /^060e2b34010101..0530040500000000$/ { rate = $3 }
         $1 == "I" && $2 ~ /^060e2b34010101..0702020101030000$/ { dur = $3 }
         END { flush() }' "$1"
}
# i1_items DUMP: the items in which two I1 files are compared, one line each (the picture
# track's: asdcplib writes no timecode track)
i1_items() {
    local u
    for u in SAMPLE_RATE INDEX_RATE CONTAINER_DUR INDEX_DUR LAYOUT STORED_H LINEMAP CONTAINER \
             $I1_DOMINANCE; do
        eval "echo \"$u \$(item \"\$1\" \"\$UL_$u\" | sort -u | tr -s ' \\n' ' ')\""
    done
    track_items "$1" | grep '^picture ' | sort -u
    echo "index $(index_offsets "$1" | tr '\n' ' ')"
    echo "elements $(element_offsets "$1" | tr '\n' ' ')"
}

# run_fields NAME FIELD_MODE PIX "ENC_OPTS" "J2KC_OPTS" LOSSLESS KIND: 1080i25, two frames, each
# coded as two 1920x540 field codestreams; J2KC_OPTS are the library parameters ENC_OPTS stand
# for (at the field rate, 50/1), for j2kc to code each field alone; KIND: I1 | I2.
run_fields() {
    local n=$1 mode=$2 pix=$3 opts=$4 jopts=$5 lossless=$6 kind=$7
    local w=1920 h=1080 fh=540 rate=25 frames=2 ec per eur eus
    local in=(-f rawvideo -pix_fmt "$pix" -s "${w}x$h" -framerate "$rate" -i "$WORK/src-$n.raw")
    local out=$WORK/$n.mxf dump=$WORK/$n.klv v exp i f dom order fsz
    src "src-$n" $w $h $rate $frames "$pix" || { fail $n "source: $(last_err)"; return; }
    # shellcheck disable=SC2086
    if ! ff "${in[@]}" -vf setparams=field_mode=$mode -c:v jpeg2000_cuda -flags:v +bitexact \
            $opts -f mxf "$out"; then
        fail $n "ffmpeg -f mxf failed: $(last_err)"; return
    fi
    mkdir -p "$WORK/$n.x"
    if ! "$KLV" -x "$WORK/$n.x/" "$out" > "$dump" 2>"$WORK/klv.err"; then
        fail $n/klv "$(cat "$WORK/klv.err")"; return
    fi
    ok $n/klv "long-form BER lengths throughout"

    # --- descriptor: SeparateFields, a field's height (stored, sampled, displayed, Ysiz), the
    # line map of 1080i (SMPTE ST 274: fields from lines 21 and 584), field 1 (tff) or field 2
    # (bff) displayed first, ST 422's container label of KIND (byte 15: 03 or 04), the edit rate
    [ $mode = tff ] && dom=01 || dom=02
    v="$(item "$dump" "$UL_LAYOUT") $(item "$dump" "$UL_STORED_H") $(item "$dump" "$UL_SAMPLED_H") $(item "$dump" "$UL_DISPLAY_H") $(item "$dump" "$UL_YSIZ")"
    exp="01 $(printf '%08x %08x %08x %08x' $fh $fh $fh $fh)"
    [ "$v" = "$exp" ] && ok $n/separate-fields "FrameLayout, StoredHeight, SampledHeight, DisplayHeight, Ysiz: $v" ||
        fail $n/separate-fields "'$v', expected '$exp'"
    v=$(item "$dump" "$UL_LINEMAP")
    [ "$v" = 00000002000000040000001500000248 ] && ok $n/video-line-map "21, 584" ||
        fail $n/video-line-map "VideoLineMap '$v', expected 2 x 4 bytes: 21, 584"
    v=$(item "$dump" "$UL_DOMINANCE")
    [ "$v" = $dom ] && ok $n/field-dominance "$v ($mode)" || fail $n/field-dominance "'$v', expected $dom ($mode)"
    # per: elements (and edit units) per frame; eur: the edit rate; eus: what an edit unit is
    if [ $kind = I1 ]; then ec=$EC_I1 per=2 eur=$(( 2 * rate )) eus=field
    else ec=$EC_I2 per=1 eur=$rate eus=frame; fi
    content_kind "$dump" $n $ec $kind
    # SampleRate, IndexEditRate and the picture tracks' EditRate are the edit rate; the timecode
    # tracks keep the frame rate of their timecode (RoundedTimecodeBase)
    exp=$(printf 'S %08x00000001 I %08x00000001 picture %08x00000001 timecode %08x00000001' $eur $eur $eur $rate)
    v="S $(item "$dump" "$UL_SAMPLE_RATE" | sort -u | tr '\n' ' ')I $(item "$dump" "$UL_INDEX_RATE" | sort -u | tr '\n' ' ')$(track_items "$dump" | awk '$2 == "EditRate" { print $1, $3 }' | sort -u | tr '\n' ' ')"
    [ "$v" = "$exp " ] && ok $n/rates "$eur/1 throughout (timecode $rate/1): the edit unit is the $eus" ||
        fail $n/rates "'$v', expected '$exp'"
    # ContainerDuration, the picture track's Durations (sequences, clips) and the IndexDuration
    # count edit units, the timecode track's Durations frames
    exp="$(printf '%016x %016x %016x timecode %016x' $(( per * frames )) $(( per * frames )) $(( per * frames )) $frames)"
    v="$(item "$dump" "$UL_CONTAINER_DUR" | sort -u) $(track_items "$dump" | awk '$1 == "picture" && $2 == "Duration" { print $3 }' | sort -u | tr '\n' ' ')$(item "$dump" "$UL_INDEX_DUR" | sort -u) timecode $(track_items "$dump" | awk '$1 == "timecode" && $2 == "Duration" { print $3 }' | sort -u)"
    [ "$v" = "$exp" ] && ok $n/durations "$(( per * frames )) edit units ($eus) for $frames frames, timecode $frames" ||
        fail $n/durations "ContainerDuration, picture Durations, IndexDuration, timecode Durations: '$v', expected '$exp'"
    # one index entry per element, at the element
    v=$(index_offsets "$dump" | tr '\n' ' ')
    [ -n "$v" ] && [ "$v" = "$(element_offsets "$dump" | tr '\n' ' ')" ] &&
        ok $n/index "an entry per element ($kind), at its offset: $v" ||
        fail $n/index "index offsets '$v', elements at '$(element_offsets "$dump" | tr '\n' ' ')'"

    # --- essence: field 1's codestream then field 2's (I2: in one element, I1: in two), equal to
    # j2kc's coding of that field (every other line of the source frame) alone
    v=$(ls "$WORK/$n.x" | wc -l)
    [ "$v" = $(( per * frames )) ] && ok $n/elements "$v elements for $frames frames ($kind)" ||
        fail $n/elements "$v elements for $frames frames ($kind: $per per frame)"
    if [ -x "$J2KC" ]; then
        "$FFMPEG" -nostdin -v error -y "${in[@]}" -vf field=top -f rawvideo "$WORK/$n.f1.raw" 2>"$WORK/err" &&
        "$FFMPEG" -nostdin -v error -y "${in[@]}" -vf field=bottom -f rawvideo "$WORK/$n.f2.raw" 2>>"$WORK/err" ||
            { fail $n/fields "field sources: $(last_err)"; return; }
        fsz=$(( $(stat -c %s "$WORK/$n.f1.raw") / frames ))
        for ((i = 0; i < frames; i++)); do
            if [ $kind = I1 ]; then
                mkdir -p "$WORK/$n.fx$i"
                cp "$(printf '%s/%06d.j2c' "$WORK/$n.x" $(( 2 * i )))" "$WORK/$n.fx$i/1.j2c"
                cp "$(printf '%s/%06d.j2c' "$WORK/$n.x" $(( 2 * i + 1 )))" "$WORK/$n.fx$i/2.j2c"
            else
                f=$(printf '%s/%06d.j2c' "$WORK/$n.x" $i)
                fields_of "$f" "$WORK/$n.fx$i" || { fail $n/fields "edit unit $i does not split into two codestreams"; i=-1; break; }
            fi
            for fld in 1 2; do
                dd if="$WORK/$n.f$fld.raw" of="$WORK/$n.in.raw" bs=$fsz skip=$i count=1 2>/dev/null
                # shellcheck disable=SC2086
                "$J2KC" -q -i "$WORK/$n.in.raw" --raw ${w}x$fh:$pix --fps $(( 2 * rate )) $jopts \
                    -o "$WORK/$n.fx$i/cli$fld.j2c" 2>"$WORK/err" ||
                    { fail $n/fields "j2kc: $(last_err)"; i=-1; break 2; }
                cmp -s "$WORK/$n.fx$i/$fld.j2c" "$WORK/$n.fx$i/cli$fld.j2c" ||
                    { fail $n/fields "edit unit $i, field $fld differs from j2kc's coding of that field"; i=-1; break 2; }
            done
        done
        [ $i = $frames ] && ok $n/fields "$frames frames = field 1 + field 2 codestreams, each equal to j2kc's"
    fi

    # --- asdcplib: as-02-info describes fields, as-02-unwrap extracts one element per edit unit
    # (index entry): both fields of each frame, in one element (I2) or in two (I1)
    if [ -n "$ASDCP" ]; then
        if "$ASDCP/as-02-info" -d -c -t 100000 "$out" > "$WORK/$n.info" 2>&1; then
            ok $n/as-02-info
        else
            fail $n/as-02-info "$(grep -v '^ ' "$WORK/$n.info" | head -n 3 | tr '\n' ' ')"
        fi
        grep -Eq "essence type is JPEG 2000 pictures, \($(( per * frames )) edit units\)" "$WORK/$n.info" &&
            grep -Eq "SampleRate = $eur/1$" "$WORK/$n.info" &&
            grep -Eq "FrameLayout = 1$" "$WORK/$n.info" && grep -Eq "StoredHeight = $fh$" "$WORK/$n.info" &&
            grep -Eq "FieldDominance = $(( dom ))$" "$WORK/$n.info" &&
            grep -Eq "VideoLineMap = 21,584$" "$WORK/$n.info" &&
            ok $n/as-02-info-describes "$(( per * frames )) edit units at $eur/1, FrameLayout 1, StoredHeight $fh, FieldDominance $(( dom ))" ||
            fail $n/as-02-info-describes "$(grep -E 'essence type|SampleRate|FrameLayout|StoredHeight|FieldDominance|VideoLineMap' "$WORK/$n.info" | tr -s ' \n' ' ')"
        mkdir -p "$WORK/$n.u"
        if (cd "$WORK/$n.u" && "$ASDCP/as-02-unwrap" "$out" f > "$WORK/$n.unwrap" 2>&1); then
            for ((i = 0; i < per * frames; i++)); do
                cmp -s "$(printf '%s/%06d.j2c' "$WORK/$n.x" $i)" "$(printf '%s/f%06d.j2c' "$WORK/$n.u" $i)" ||
                    { fail $n/as-02-unwrap "edit unit $i differs (or missing: $(ls "$WORK/$n.u" | head -n 3 | tr '\n' ' '))"; i=-1; break; }
            done
            v=$(ls "$WORK/$n.u" | wc -l)
            if [ $i = $(( per * frames )) ] && [ "$v" = $i ]; then
                ok $n/as-02-unwrap "$v edit units, both fields of $frames frames, byte-identical"
            elif [ $i != -1 ]; then
                fail $n/as-02-unwrap "$v files for $(( per * frames )) edit units"
            fi
        else
            fail $n/as-02-unwrap "$(head -n 3 "$WORK/$n.unwrap" | tr '\n' ' ')"
        fi
        [ $kind = I1 ] && asdcplib_i1 $n $mode
    fi
    if [ -n "$BMX" ]; then
        if mxf2raw --info "$out" > "$WORK/$n.bmx" 2>&1; then ok $n/mxf2raw
        else fail $n/mxf2raw "$(head -n 3 "$WORK/$n.bmx" | tr '\n' ' ')"; fi
    fi

    # --- mediainfo: interlaced, in the right order, at the frame rate, the frame count
    if have mediainfo; then
        [ $mode = tff ] && order=TFF || order=BFF
        v=$(mediainfo --Inform='Video;%ScanType%|%ScanOrder%|%Height%|%FrameRate%|%FrameCount%' "$out" 2>&1)
        exp="Interlaced|$order|$h|$rate.000|$frames"
        [ "$v" = "$exp" ] && ok $n/mediainfo "$v" || fail $n/mediainfo "'$v', expected $exp"
        # the timecode tracks (material and source package) end at the last frame
        v=$(mediainfo --Inform='Other;%TimeCode_LastFrame%|' "$out" 2>&1)
        exp=$(printf '00:00:00:%02d|00:00:00:%02d|' $(( frames - 1 )) $(( frames - 1 )))
        [ "$v" = "$exp" ] && ok $n/mediainfo-timecode "last frame: $v" ||
            fail $n/mediainfo-timecode "last frame '$v', expected '$exp'"
    fi

    # --- FFmpeg reads interlaced frames back: full height, field order, frame rate, frame flags
    [ $mode = tff ] && order=tt || order=tb
    v=$("$FFPROBE" -v error -select_streams v:0 -show_entries stream=width,height,field_order,r_frame_rate -of csv=p=0 "$out" 2>&1)
    [ "$v" = "$w,$h,$order,$rate/1" ] && ok $n/probe "$v" || fail $n/probe "'$v', expected $w,$h,$order,$rate/1"
    v=$("$FFPROBE" -v error -select_streams v:0 -show_entries frame=interlaced_frame,top_field_first -of csv=p=0 "$out" 2>&1 | sort | uniq -c | tr -s ' ')
    [ $mode = tff ] && exp=" $frames 1,1" || exp=" $frames 1,0"
    [ "$v" = "$exp" ] && ok $n/frame-flags "interlaced, top_field_first=$([ $mode = tff ] && echo 1 || echo 0) on every frame" ||
        fail $n/frame-flags "'$v', expected '$exp' (count interlaced,top_field_first)"
    if [ "$lossless" = 1 ]; then
        "$FFMPEG" -nostdin -hide_banner -loglevel error -i "$out" -pix_fmt "$pix" -f framemd5 "$WORK/$n.dec.md5" 2>"$WORK/err"
        "$FFMPEG" -nostdin -hide_banner -loglevel error "${in[@]}" -f framemd5 "$WORK/$n.src.md5" 2>>"$WORK/err"
        if [ -s "$WORK/err" ]; then
            fail $n/lossless "errors while decoding: $(last_err)"
        elif [ "$(frame_hashes < "$WORK/$n.dec.md5")" = "$(frame_hashes < "$WORK/$n.src.md5")" ] &&
             [ "$(frame_hashes < "$WORK/$n.dec.md5" | wc -l)" = $frames ]; then
            ok $n/lossless "$frames decoded frames equal the source frames"
        else
            fail $n/lossless "decoded frames differ from the source frames"
        fi
    else
        "$FFMPEG" -nostdin -hide_banner -loglevel error -i "$out" -f framemd5 "$WORK/$n.dec.md5" 2>"$WORK/err"
        v=$(frame_hashes < "$WORK/$n.dec.md5" | wc -l)
        [ "$v" = $frames ] && [ ! -s "$WORK/err" ] && ok $n/decode "$frames frames, no errors" ||
            fail $n/decode "$v frames decoded: $(last_err)"
    fi
    # --- seeking to the second frame (I1: to the edit unit of its field 1) gives that frame on
    "$FFMPEG" -nostdin -v error -i "$out" -pix_fmt "$pix" -f framemd5 "$WORK/$n.all.md5" 2>"$WORK/err"
    "$FFMPEG" -nostdin -v error -ss "$(awk -v r=$rate 'BEGIN { printf "%.3f", 1 / r }')" -i "$out" \
        -pix_fmt "$pix" -f framemd5 "$WORK/$n.seek.md5" 2>>"$WORK/err"
    v=$(frame_hashes < "$WORK/$n.seek.md5")
    if [ ! -s "$WORK/err" ] && [ -n "$v" ] &&
       [ "$v" = "$(frame_hashes < "$WORK/$n.all.md5" | tail -n +2)" ]; then
        ok $n/seek "-ss 1/$rate s: frames 2-$frames, as decoded from the start"
    else
        fail $n/seek "-ss 1/$rate s gave $(echo "$v" | grep -c .) frame(s), not frames 2-$frames: $(last_err)"
    fi
}

# asdcplib_i1 NAME FIELD_MODE: the field codestreams of NAME's I1 file, wrapped by asdcplib
# (as-02-wrap -i, at the field rate: SMPTE ST 2067-21 files have a SampleRate of twice the
# frame rate), must give the same items as ours (i1_items; FieldDominance only for tff:
# as-02-wrap -F writes 0 or 1, not bff's 2), and FFmpeg must read asdcplib's file as ours: the
# same frame size, frame rate and decoded frames, top field first (as-02-wrap's FieldDominance).
asdcplib_i1() {
    local n=$1 mode=$2 ref=$WORK/$1.asdcplib.mxf v exp I1_DOMINANCE=
    [ $mode = tff ] && I1_DOMINANCE=DOMINANCE
    rm -f "$ref"
    if ! "$ASDCP/as-02-wrap" -i -F 1 -l 21,584 -J -r 50/1 "$WORK/$n.x/" "$ref" > "$WORK/$n.wrap" 2>&1; then
        fail $n/asdcplib-i1 "as-02-wrap -i: $(head -n 3 "$WORK/$n.wrap" | tr '\n' ' ')"; return
    fi
    if ! "$KLV" "$ref" > "$WORK/$n.asdcplib.klv" 2>"$WORK/klv.err"; then
        fail $n/asdcplib-i1 "$(cat "$WORK/klv.err")"; return
    fi
    i1_items "$WORK/$n.klv" > "$WORK/$n.items"
    i1_items "$WORK/$n.asdcplib.klv" > "$WORK/$n.asdcplib.items"
    if cmp -s "$WORK/$n.items" "$WORK/$n.asdcplib.items"; then
        ok $n/asdcplib-i1 "as-02-wrap -i's file and ours agree: $(awk '{ print $1 == "picture" ? $1 " " $2 : $1 }' "$WORK/$n.items" | tr '\n' ' ')"
    else
        fail $n/asdcplib-i1 "differs from as-02-wrap -i's: $(diff "$WORK/$n.asdcplib.items" "$WORK/$n.items" | grep '^[<>]' | tr -s ' \n' ' ')"
    fi
    v=$("$FFPROBE" -v error -select_streams v:0 -show_entries stream=width,height,field_order,r_frame_rate -of csv=p=0 "$ref" 2>&1)
    "$FFMPEG" -nostdin -hide_banner -loglevel warning -i "$ref" -f framemd5 "$WORK/$n.asdcplib.md5" 2>"$WORK/err"
    "$FFMPEG" -nostdin -hide_banner -loglevel warning -i "$WORK/$n.mxf" -f framemd5 "$WORK/$n.ours.md5" 2>>"$WORK/err"
    exp="$("$FFPROBE" -v error -select_streams v:0 -show_entries stream=width,height,field_order,r_frame_rate -of csv=p=0 "$WORK/$n.mxf" 2>&1 | sed 's/,tb,/,tt,/')"
    if [ -s "$WORK/err" ]; then
        fail $n/asdcplib-i1-read "FFmpeg: $(last_err)"
    elif [ "$v" = "$exp" ] &&
         [ "$(frame_hashes < "$WORK/$n.asdcplib.md5" | wc -l)" = 2 ] &&
         [ "$(frame_hashes < "$WORK/$n.asdcplib.md5")" = "$(frame_hashes < "$WORK/$n.ours.md5")" ]; then
        ok $n/asdcplib-i1-read "FFmpeg reads as-02-wrap -i's file as ours: $v, the same 2 frames"
    else
        fail $n/asdcplib-i1-read "asdcplib's file: '$v' (expected '$exp'), $(frame_hashes < "$WORK/$n.asdcplib.md5" | wc -l) frames, equal to ours: $(cmp -s <(frame_hashes < "$WORK/$n.asdcplib.md5") <(frame_hashes < "$WORK/$n.ours.md5") && echo yes || echo no)"
    fi
}

#          name         mode pix          encoder options                 j2kc options (per field)                                lossless kind
run_fields i-bcast-tff  tff  yuv422p10le "-profile:v 0x0307"              "--profile broadcast_multi_r --mainlevel 7 --lossless --mct 0" 1 I2
run_fields i-bcast-bff  bff  yuv422p10le "-profile:v 0x0307"              "--profile broadcast_multi_r --mainlevel 7 --lossless --mct 0" 1 I2
run_fields i-imf-r-tff  tff  yuv422p10le "-profile:v imf_2k_r"            "--profile imf2k_r --lossless --mct 0"                        1 I1
run_fields i-imf-bff    bff  yuv422p10le "-b:v 200M -profile:v imf_2k"    "--profile imf2k --bytes 500000 --mct 0"                      0 I1

# An I1 frame whose second field element has another key (its element number changed): the
# demuxer warns and returns field 1 alone (then the stray element, as the file's only track
# takes any element); no crash.
n=i1-lone-field
if [ -f "$WORK/i-imf-r-tff.mxf" ]; then
    cp "$WORK/i-imf-r-tff.mxf" "$WORK/$n.mxf"
    off=$(LC_ALL=C grep -obUaP '\x06\x0e\x2b\x34\x01\x02\x01\x01\x0d\x01\x03\x01\x15\x01\x08' \
          "$WORK/$n.mxf" | sed -n 2p | cut -d: -f1)
    if [ -z "$off" ]; then
        fail $n "no second essence element in i-imf-r-tff.mxf"
    else
        printf '\011' | dd of="$WORK/$n.mxf" bs=1 seek=$(( off + 15 )) conv=notrunc 2>/dev/null
        "$FFMPEG" -nostdin -hide_banner -loglevel warning -i "$WORK/$n.mxf" -f framemd5 "$WORK/$n.md5" 2>"$WORK/err"
        rc=$?
        if signalled $rc; then
            fail $n "crashed: $(last_err)"
        elif grep -q 'has no second field element' "$WORK/err"; then
            ok $n "$(grep -m 1 'no second field' "$WORK/err" | sed 's/^\[[^]]*\] //'), $(grep -vc '^#' "$WORK/$n.md5") frame(s) decoded, exit $rc"
        else
            fail $n "no warning: $(last_err)"
        fi
    fi
else
    skip $n "i-imf-r-tff.mxf not written"
fi

# OP-Atom of one interlaced frame: one element, one edit unit; FFmpeg reads it whole (not
# through the parser, which would split the two fields), back to the source frame
for fo in tff bff; do
    n=i-opatom-1-$fo
    src "src-$n" 1920 1080 25 1 yuv422p10le
    if ! ff -f rawvideo -pix_fmt yuv422p10le -s 1920x1080 -framerate 25 -i "$WORK/src-$n.raw" \
            -vf setparams=field_mode=$fo -c:v jpeg2000_cuda -profile:v 0x0307 -f mxf_opatom "$WORK/$n.mxf"; then
        fail $n "ffmpeg -f mxf_opatom failed: $(last_err)"; continue
    fi
    "$FFMPEG" -nostdin -v error -i "$WORK/$n.mxf" -f framemd5 "$WORK/$n.dec.md5" 2>"$WORK/err"
    "$FFMPEG" -nostdin -v error -f rawvideo -pix_fmt yuv422p10le -s 1920x1080 -i "$WORK/src-$n.raw" \
        -f framemd5 "$WORK/$n.src.md5" 2>>"$WORK/err"
    v=$("$FFPROBE" -v error -show_entries stream=height,field_order -of csv=p=0 "$WORK/$n.mxf" 2>&1)
    [ $fo = tff ] && exp=1080,tt || exp=1080,tb
    if [ -s "$WORK/err" ]; then
        fail $n "errors: $(last_err)"
    elif [ "$v" = "$exp" ] && [ "$(frame_hashes < "$WORK/$n.dec.md5")" = "$(frame_hashes < "$WORK/$n.src.md5")" ]; then
        ok $n "1 frame, $v, equal to the source"
    else
        fail $n "'$v' (expected $exp), $(frame_hashes < "$WORK/$n.dec.md5" | wc -l) decoded frames, equal to the source: $(cmp -s <(frame_hashes < "$WORK/$n.dec.md5") <(frame_hashes < "$WORK/$n.src.md5") && echo yes || echo no)"
    fi
done

# ---- what the muxer refuses ----------------------------------------------------------------

# refused NAME "why" PARTIAL FFMPEG_ARGS...: ffmpeg must fail and say why (a line matching the
# regex); with PARTIAL 0 it must leave no MXF essence behind (an empty file or none). A stream
# found wrong at its second packet (PARTIAL 1) keeps what was written before.
refused() {
    local n=$1 why=$2 partial=$3
    shift 3
    rm -f "$WORK/$n.mxf"
    if ff "$@" "$WORK/$n.mxf"; then
        fail $n "accepted"
    elif signalled $?; then
        fail $n "crashed: $(last_err)"
    elif ! grep -Eq "$why" "$WORK/err"; then
        fail $n "no clear message (/$why/): $(last_err)"
    elif [ "$partial" = 0 ] && [ -s "$WORK/$n.mxf" ] && "$KLV" "$WORK/$n.mxf" 2>/dev/null | grep -q '^K 060e2b34010201010d010301'; then
        fail $n "essence written anyway"
    else
        ok $n "$(grep -E -m 1 "$why" "$WORK/err" | sed 's/^\[[^]]*\] //')"
    fi
}
# Interlaced frames where fields cannot be carried: a D-Cinema profile (progressive only: the
# encoder refuses), no profile (one progressive picture per frame, which MXF would mislabel:
# the muxer refuses), MOV (no standard way to hold two codestreams per sample: refused).
src src-i 1920 1080 25 1 yuv422p10le
IN_I=(-f rawvideo -pix_fmt yuv422p10le -s 1920x1080 -framerate 25 -i "$WORK/src-i.raw")
for fo in tff bff; do
    refused interlaced-dci-$fo "D-Cinema profiles code progressive frames only" 0 -f rawvideo \
        -pix_fmt xyz12le -s 2048x1080 -framerate 24 -i /dev/zero -frames:v 1 \
        -vf setparams=field_mode=$fo -c:v jpeg2000_cuda -b:v 200M -profile:v dcinema_2k -f mxf
    refused interlaced-noprofile-$fo "does not hold two field codestreams" 0 "${IN_I[@]}" \
        -vf setparams=field_mode=$fo -c:v jpeg2000_cuda -f mxf
done
rm -f "$WORK/i.mov"
if ff "${IN_I[@]}" -vf setparams=field_mode=tff -c:v jpeg2000_cuda -profile:v 0x0307 "$WORK/i.mov"; then
    fail interlaced-mov "accepted"
elif grep -q "two field codestreams per frame.*use MXF" "$WORK/err"; then
    ok interlaced-mov "$(grep -m 1 'use MXF' "$WORK/err" | sed 's/^\[[^]]*\] //')"
else
    fail interlaced-mov "no clear message: $(last_err)"
fi

# The field geometry is fixed when the encoder opens (from the first frame in ffmpeg): interlaced
# frames after a progressive first one are coded as pictures, with a warning
t=interlaced-later
if "$FFMPEG" -nostdin -hide_banner -loglevel warning -y -f lavfi -i testsrc2=s=64x96:r=25:d=0.04 \
        -f lavfi -i testsrc2=s=64x96:r=25:d=0.08 -filter_complex \
        "[0]setparams=field_mode=prog[a];[1]setparams=field_mode=tff[b];[a][b]concat,format=yuv422p10le" \
        -c:v jpeg2000_cuda -profile:v 0x0307 -f mxf "$WORK/$t.mxf" 2>"$WORK/err"; then
    v=$("$FFPROBE" -v error -show_entries stream=field_order,height -of csv=p=0 "$WORK/$t.mxf")
    if grep -q "Interlaced frames coded as progressive pictures" "$WORK/err" && [ "$v" = 96,progressive ]; then
        ok $t "$(grep -m 1 'Interlaced frames' "$WORK/err" | sed 's/^\[[^]]*\] //')"
    else
        fail $t "'$v', expected 96,progressive, and the warning: $(last_err)"
    fi
else
    fail $t "$(last_err)"
fi

# ... nor image files (one codestream each): refused, nothing written
rm -f "$WORK"/i-img*.j2c
if ff "${IN_I[@]}" -vf setparams=field_mode=tff -c:v jpeg2000_cuda -profile:v 0x0307 "$WORK/i-img%03d.j2c"; then
    fail interlaced-image2 "accepted"
elif grep -q "image file holds one: use MXF" "$WORK/err" && ! ls "$WORK"/i-img*.j2c >/dev/null 2>&1; then
    ok interlaced-image2 "$(grep -m 1 'use MXF' "$WORK/err" | sed 's/^\[[^]]*\] //')"
else
    fail interlaced-image2 "no clear message, or files written: $(last_err)"
fi

# Field pairs from elsewhere (-c copy, -field_order tt): two codestreams of different sizes, or
# a truncated second one, in a packet are refused by the muxer; the decoder refuses a second
# field whose SIZ (here Ysiz) differs from the first one's, with a message and no crash.
"$FFMPEG" -nostdin -hide_banner -loglevel error -y -f lavfi -i testsrc2=s=64x48 -frames:v 1 \
    -c:v jpeg2000_cuda "$WORK/f64.j2c" 2>"$WORK/err" &&
"$FFMPEG" -nostdin -hide_banner -loglevel error -y -f lavfi -i testsrc2=s=80x48 -frames:v 1 \
    -c:v jpeg2000_cuda "$WORK/f80.j2c" 2>>"$WORK/err" || fail field-pairs "sources: $(last_err)"
mkdir -p "$WORK/pair-sizes" "$WORK/pair-cut"
cat "$WORK/f64.j2c" "$WORK/f80.j2c" > "$WORK/pair-sizes/000001.j2c"
cat "$WORK/f64.j2c" > "$WORK/pair-cut/000001.j2c"
head -c 100 "$WORK/f64.j2c" >> "$WORK/pair-cut/000001.j2c"
for p in sizes cut; do
    refused field-pair-$p "does not hold two field codestreams of the same size" 0 -f image2 \
        -framerate 25 -i "$WORK/pair-$p/%06d.j2c" -c copy -field_order tt -f mxf
done
if ff -f rawvideo -pix_fmt yuv422p10le -s 64x96 -framerate 25 -i /dev/zero -frames:v 1 \
        -vf setparams=field_mode=tff -c:v jpeg2000_cuda -profile:v 0x0307 -f mxf "$WORK/f2.mxf"; then
    off=$(LC_ALL=C grep -obUaP '\xff\xd9\xff\x4f\xff\x51' "$WORK/f2.mxf" | head -n 1 | cut -d: -f1)
    # field 2's Ysiz (SOC + 12) from 48 to 32 lines
    printf '\000\000\000\040' | dd of="$WORK/f2.mxf" bs=1 seek=$(( off + 14 )) conv=notrunc 2>/dev/null
    "$FFMPEG" -nostdin -hide_banner -loglevel error -i "$WORK/f2.mxf" -f null - 2>"$WORK/err"
    rc=$?
    if signalled $rc; then
        fail decode-field-sizes "crashed: $(last_err)"
    elif grep -q "second field's codestream differs" "$WORK/err"; then
        ok decode-field-sizes "$(grep -m 1 'second field' "$WORK/err" | sed 's/^\[[^]]*\] //')"
    else
        fail decode-field-sizes "no clear message: $(last_err)"
    fi
else
    fail decode-field-sizes "source: $(last_err)"
fi

# CUDA frames, interlaced (GPU only): each field read from the device frame (a line's offset,
# twice the pitch) must give the codestreams the reference backend writes from system memory.
# Both encodes read one file in the format coded: swscale's yuv422p10le -> yuv420p conversion
# does not give the same bytes in every run on every host (bench/results/history.md, bugs found
# on the GPU), so converting inside each encode's filter graph would compare two pictures.
if have_gpu; then
    packets() { "$FFMPEG" -nostdin -v error -i "$1" -c copy -f framemd5 - | frame_hashes; }
    for f in yuv420p yuv444p16le; do
        t=fields-cuda-frames-$f
        IN_F=(-f rawvideo -pix_fmt $f -s 1920x1080 -framerate 25 -i "$WORK/src-i-$f.raw")
        if ! ff "${IN_I[@]}" -pix_fmt $f -f rawvideo "$WORK/src-i-$f.raw"; then
            fail $t "the conversion to $f failed: $(last_err)"
        elif ! ff "${IN_F[@]}" -vf setparams=field_mode=tff -c:v jpeg2000_cuda -backend ref \
                -bits_per_raw_sample 10 -profile:v 0x0307 -f mxf "$WORK/$t-sw.mxf"; then
            fail $t "the reference backend's encode failed: $(last_err)"
        elif ! ff -init_hw_device cuda=gpu -filter_hw_device gpu "${IN_F[@]}" \
                -vf setparams=field_mode=tff,hwupload_cuda -c:v jpeg2000_cuda \
                -bits_per_raw_sample 10 -profile:v 0x0307 -f mxf "$WORK/$t-hw.mxf"; then
            fail $t "$(last_err)"
        elif [ "$(packets "$WORK/$t-hw.mxf")" = "$(packets "$WORK/$t-sw.mxf")" ]; then
            ok $t "the reference backend's field codestreams, from CUDA frames"
        else
            fail $t "field codestreams differ from the reference backend's"
        fi
    done
else
    skip fields-cuda-frames "no GPU (CUDA frames coded as fields)"
fi

# -bits_per_raw_sample on CUDA frames (patch 0020, libavcodec/encode.c): checked against the
# frames' software format, not the depth-0 hardware format, so it reaches the encoder: the
# codestream's Ssiz (component 0: SIZ byte 42, depth - 1) is 10-bit from CUDA frames of 16-bit
# samples, as from the same frames in system memory, and no "not possible" warning is printed.
if have_gpu; then
    t=cuda-frames-bits-per-raw-sample
    ssiz() { od -An -tx1 -j42 -N1 "$1" | tr -d ' \n'; }
    if ! ff -f lavfi -i testsrc2=s=256x128 -frames:v 1 -vf format=yuv444p16le -c:v jpeg2000_cuda \
            -backend ref -bits_per_raw_sample 10 -f image2 "$WORK/$t-sw.j2c"; then
        fail $t "system memory: $(last_err)"
    elif ! "$FFMPEG" -nostdin -hide_banner -loglevel warning -y -init_hw_device cuda=gpu \
            -filter_hw_device gpu -f lavfi -i testsrc2=s=256x128 -frames:v 1 \
            -vf format=yuv444p16le,hwupload_cuda -c:v jpeg2000_cuda -bits_per_raw_sample 10 \
            -f image2 "$WORK/$t-hw.j2c" 2>"$WORK/err"; then
        fail $t "CUDA frames: $(last_err)"
    elif grep -q 'not possible with the specified pixel formats depth' "$WORK/err"; then
        fail $t "$(grep -m 1 'not possible' "$WORK/err")"
    elif [ "$(ssiz "$WORK/$t-hw.j2c")" = 09 ] && [ "$(ssiz "$WORK/$t-sw.j2c")" = 09 ]; then
        ok $t "Ssiz 09 (10-bit) from CUDA frames and from system memory"
    else
        fail $t "Ssiz $(ssiz "$WORK/$t-hw.j2c") from CUDA frames, $(ssiz "$WORK/$t-sw.j2c") from system memory (09 expected: 10-bit)"
    fi
else
    skip cuda-frames-bits-per-raw-sample "no GPU (-bits_per_raw_sample on CUDA frames)"
fi

# A profile for MXF track files into MOV/MP4: written, with a warning (the encoder cannot see
# the container; the muxer sees the profile)
for c in "dci-mov dcinema_2k xyz12le 2048x1080 mov D-Cinema" "imf-mp4 imf_2k yuv422p10le 1920x1080 mp4 IMF"; do
    set -- $c
    rm -f "$WORK/$1.$5"
    if ! "$FFMPEG" -nostdin -hide_banner -loglevel warning -y -f rawvideo -pix_fmt $3 -s $4 \
            -framerate 24 -i /dev/zero -frames:v 1 -c:v jpeg2000_cuda -b:v 200M -profile:v $2 \
            "$WORK/$1.$5" 2>"$WORK/err"; then
        fail profile-container/$1 "not written: $(last_err)"
    elif ! grep -q "JPEG 2000 of an\? $6 profile in $5" "$WORK/err"; then
        fail profile-container/$1 "no warning: $(last_err)"
    elif [ "$("$FFPROBE" -v error -show_entries stream=codec_name -of csv=p=0 "$WORK/$1.$5")" != jpeg2000 ]; then
        fail profile-container/$1 "the file does not read back as JPEG 2000"
    else
        ok profile-container/$1 "$(grep -m 1 "$6 profile" "$WORK/err" | sed 's/^\[[^]]*\] //')"
    fi
done
# ... and a profile that fits: no warning
if "$FFMPEG" -nostdin -hide_banner -loglevel warning -y -f rawvideo -pix_fmt yuv422p10le \
        -s 1920x1080 -framerate 25 -i /dev/zero -frames:v 1 -c:v jpeg2000_cuda -b:v 100M \
        -profile:v broadcast "$WORK/bcast.mov" 2>"$WORK/err" && ! grep -q "profile in" "$WORK/err"; then
    ok profile-container/broadcast-mov "no warning"
else
    fail profile-container/broadcast-mov "$(last_err)"
fi
# Codestreams copied in: an Rsiz without a picture coding label (a Part 2 codestream), and
# codestreams of two sizes in one track.
"$FFMPEG" -nostdin -hide_banner -loglevel error -y -f lavfi -i testsrc2=s=64x48 -frames:v 1 \
    -c:v jpeg2000_cuda "$WORK/small.j2c" 2>"$WORK/err" &&
"$FFMPEG" -nostdin -hide_banner -loglevel error -y -f lavfi -i testsrc2=s=80x48 -frames:v 1 \
    -c:v jpeg2000_cuda "$WORK/wide.j2c" 2>>"$WORK/err" || fail refusals "sources: $(last_err)"
mkdir -p "$WORK/part2" "$WORK/mixed"
cp "$WORK/small.j2c" "$WORK/part2/000001.j2c"
printf '\200\000' | dd of="$WORK/part2/000001.j2c" bs=1 seek=6 conv=notrunc 2>/dev/null
refused rsiz-part2 "no picture coding label" 0 -f image2 -framerate 24 -i "$WORK/part2/%06d.j2c" -c copy -f mxf
cp "$WORK/small.j2c" "$WORK/mixed/000001.j2c"
cp "$WORK/wide.j2c" "$WORK/mixed/000002.j2c"
refused mixed-sizes "differs from the first" 1 -f image2 -framerate 24 -i "$WORK/mixed/%06d.j2c" -c copy -f mxf
finish
