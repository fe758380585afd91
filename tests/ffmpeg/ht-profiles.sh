#!/bin/bash
# HTJ2K through ffmpeg -c:v jpeg2000_cuda: -profile:v imf_ht / imf_ht_r (IMF App 2E's
# APP2.HT.IRV / APP2.HT.REV, SMPTE ST 2067-21:2023 Annex I), -profile:v htj2k and -ht 1.
#  - the codestreams: Rsiz 0x4000, HT code-blocks, and j2kc-check --profile imf_ht[_r] passes;
#    FFmpeg decodes them back, imf_ht_r bit-exact against the source frames;
#  - MXF (IMF track files, OP1a): tests/gen/klvdump.c reads the HTJ2K picture coding label
#    (asdcplib's MDD.cpp: HTJ2KPictureCodingSchemeGeneric, 06.0e.2b.34.04.01.01.0d.04.01.02.02.
#    03.01.08.01), the J2KExtendedCapabilities item (Pcap and the Ccap values, equal to the
#    codestream's CAP marker), Rsiz 0x4000 and the P1 content kind; the essence equals the .j2c
#    output; asdcplib's as-02-info and as-02-unwrap (tools/asdcplib-build.sh; skipped without
#    its source tarball) read the file and extract the same codestreams; mediainfo (when
#    installed) names a JPEG 2000 format; FFmpeg decodes every frame on one thread (patch 0033);
#  - interlaced under imf_ht_r: an I1 IMF track file of field codestreams, each imf_ht_r;
#  - refusals: HT with a D-Cinema or Part 1 IMF profile, -ht 0 with an HT profile, -psnr with HT,
#    HT code-blocks the profile forbids: an error, exit non-zero, no output file.
#   tests/ffmpeg/ht-profiles.sh [BUILD_DIR]
. "$(dirname "$0")/common.inc"
ff_require

CHECK=$BUILD/bin/j2kc-check
[ -x "$CHECK" ] || { fail j2kc-check "$CHECK not built"; finish; }
klv_build
asdcp_tools as-02-info
have mediainfo || skip mediainfo "mediainfo not installed (Debian: mediainfo): mediainfo checks skipped"

# item ULs as 32 hex digits ('..': the version byte), and the labels expected
UL_CODING=060e2b34010101..0401060100000000   # PictureEssenceCoding
UL_RSIZ=060e2b34010101..0401060301000000     # JPEG2000PictureSubDescriptor Rsiz
UL_EXTCAP=060e2b34010101..040106030f000000   # J2KExtendedCapabilities (SMPTE ST 422:2019)
UL_CONTAINER=060e2b34010101..0601010401020000
HTJ2K_UL=060e2b340401010d0401020203010801    # HTJ2KPictureCodingSchemeGeneric
EC_P1=060e2b340401010d0d010301020c0600        # P1: progressive frames
item() { awk -v re="^$2\$" '$1 == "I" && $2 ~ re { print $3 }' "$1"; }

W=96 H=64 FRAMES=3
"$FFMPEG" -nostdin -hide_banner -loglevel error -y -f lavfi -i "testsrc2=s=${W}x$H:r=24" \
    -frames:v $FRAMES -pix_fmt rgb48le -f rawvideo "$WORK/src.raw" 2>"$WORK/err" ||
    { fail source "$(last_err)"; finish; }
IN=(-f rawvideo -pix_fmt rgb48le -s ${W}x$H -framerate 24 -i "$WORK/src.raw")

# run_case NAME "ENC_OPTS" CHECK_PROFILE LOSSLESS
run_case() {
    local n=$1 opts=$2 prof=$3 lossless=$4 out=$WORK/$1.mxf dump=$WORK/$1.klv v exp i f
    mkdir -p "$WORK/$n.j2c" "$WORK/$n.x" "$WORK/$n.u"
    # shellcheck disable=SC2086
    if ! ff "${IN[@]}" -c:v jpeg2000_cuda $opts -pix_fmt gbrp12le -f image2 "$WORK/$n.j2c/%06d.j2c"; then
        fail $n "ffmpeg -f image2 failed: $(last_err)"; return
    fi
    f=$WORK/$n.j2c/000001.j2c
    v=$(od -An -v -tx1 -j6 -N2 "$f" | tr -d ' \n')
    [ "$v" = 4000 ] && ok $n/rsiz "0x$v" || fail $n/rsiz "codestream Rsiz 0x$v, 0x4000 expected"
    if [ -n "$prof" ]; then
        "$CHECK" --profile $prof "$WORK/$n.j2c"/*.j2c > "$WORK/$n.chk" 2>&1 && ok $n/j2kc-check "$prof" ||
            fail $n/j2kc-check "$(grep -v ': ok ' "$WORK/$n.chk" | head -n 2 | tr '\n' ' ')"
    else
        "$CHECK" "$WORK/$n.j2c"/*.j2c > "$WORK/$n.chk" 2>&1 && ok $n/j2kc-check "HTJ2K" ||
            fail $n/j2kc-check "$(head -n 2 "$WORK/$n.chk" | tr '\n' ' ')"
    fi
    # decoded back: lossless bit-exact against the source frames (gbrp12le both ways)
    # one decoder thread: FFmpeg 7.1 dropped every HT codestream after the first of a context
    # (patch 0033); frame threads hid it, as each thread context decodes its first one
    if "$FFMPEG" -nostdin -hide_banner -loglevel error -threads 1 -i "$WORK/$n.j2c/%06d.j2c" \
         -pix_fmt gbrp12le -f framemd5 "$WORK/$n.dec.md5" 2>"$WORK/err" && [ ! -s "$WORK/err" ]; then
        if [ "$lossless" = 1 ]; then
            "$FFMPEG" -nostdin -hide_banner -loglevel error "${IN[@]}" -pix_fmt gbrp12le -f framemd5 \
                "$WORK/src.md5" 2>/dev/null
            [ "$(frame_hashes < "$WORK/$n.dec.md5")" = "$(frame_hashes < "$WORK/src.md5")" ] &&
                ok $n/decode "$FRAMES frames bit-exact" || fail $n/decode "decoded frames differ from the source"
        else
            [ "$(grep -vc '^#' "$WORK/$n.dec.md5")" = $FRAMES ] && ok $n/decode "$FRAMES frames" ||
                fail $n/decode "$(grep -vc '^#' "$WORK/$n.dec.md5") frames decoded"
        fi
    else
        fail $n/decode "$(last_err)"
    fi

    # --- MXF
    # shellcheck disable=SC2086
    if ! ff "${IN[@]}" -c:v jpeg2000_cuda $opts -pix_fmt gbrp12le -f mxf "$out"; then
        fail $n/mxf "ffmpeg -f mxf failed: $(last_err)"; return
    fi
    if ! "$KLV" -x "$WORK/$n.x/" "$out" > "$dump" 2>"$WORK/klv.err"; then
        fail $n/klv "$(cat "$WORK/klv.err")"; return
    fi
    v=$(item "$dump" "$UL_CODING" | sort -u)
    [ "$v" = $HTJ2K_UL ] && ok $n/coding-ul "$v" || fail $n/coding-ul "PictureEssenceCoding '$v', $HTJ2K_UL expected"
    v=$(item "$dump" "$UL_RSIZ")
    [ "$v" = 4000 ] && ok $n/mxf-rsiz "$v" || fail $n/mxf-rsiz "subdescriptor Rsiz '$v'"
    # CAP marker body (Pcap, Ccap...) of the codestream against the item: Pcap, count, 2, Ccaps
    local cap pcap lcap ccaps
    cap=$(od -An -v -tx1 "$f" | tr -d ' \n' | grep -o 'ff50[0-9a-f]*' | head -c 200)
    lcap=$(( 16#${cap:4:4} ))
    pcap=${cap:8:8}
    ccaps=${cap:16:$(( (lcap - 6) * 2 ))}
    exp=$pcap$(printf '%08x' $(( (lcap - 6) / 2 )))00000002$ccaps
    v=$(item "$dump" "$UL_EXTCAP")
    [ -n "$pcap" ] && [ "$v" = "$exp" ] && ok $n/extended-capabilities "$v" ||
        fail $n/extended-capabilities "J2KExtendedCapabilities '$v', expected $exp (CAP $pcap $ccaps)"
    v=$(item "$dump" "$UL_CONTAINER" | sort -u)
    [ "$v" = $EC_P1 ] && ok $n/content-kind "P1" || fail $n/content-kind "EssenceContainer '$v', P1 expected"
    i=0
    for f in "$WORK/$n.j2c"/*.j2c; do
        cmp -s "$f" "$(printf '%s/%06d.j2c' "$WORK/$n.x" $i)" || { fail $n/essence "element $i differs"; i=-1; break; }
        i=$((i + 1))
    done
    [ $i = $FRAMES ] && ok $n/essence "$FRAMES elements byte-identical to the .j2c output"
    if [ -n "$ASDCP" ]; then
        if "$ASDCP/as-02-info" -d -c -t 100000 "$out" > "$WORK/$n.info" 2>&1 &&
           grep -q "essence type is JPEG 2000 pictures" "$WORK/$n.info"; then
            ok $n/as-02-info "$(grep -m1 -i 'ExtendedCapabilities\|Pcap' "$WORK/$n.info" | tr -s ' ')"
        else
            fail $n/as-02-info "$(grep -v '^ ' "$WORK/$n.info" | head -n 3 | tr '\n' ' ')"
        fi
        grep -qi "J2KExtendedCapabilities" "$WORK/$n.info" && ok $n/as-02-info-extcap ||
            fail $n/as-02-info-extcap "as-02-info -d lists no J2KExtendedCapabilities"
        if (cd "$WORK/$n.u" && "$ASDCP/as-02-unwrap" "$out" f > "$WORK/$n.unwrap" 2>&1); then
            i=0
            for f in "$WORK/$n.j2c"/*.j2c; do
                cmp -s "$f" "$(printf '%s/f%06d.j2c' "$WORK/$n.u" $i)" || { fail $n/as-02-unwrap "frame $i differs"; i=-1; break; }
                i=$((i + 1))
            done
            [ $i = $FRAMES ] && ok $n/as-02-unwrap "$FRAMES codestreams byte-identical"
        else
            fail $n/as-02-unwrap "$(head -n 3 "$WORK/$n.unwrap" | tr '\n' ' ')"
        fi
    fi
    if "$FFMPEG" -nostdin -hide_banner -loglevel error -threads 1 -i "$out" -f framemd5 \
         "$WORK/$n.mxf.md5" 2>"$WORK/err" && [ ! -s "$WORK/err" ] &&
       [ "$(grep -vc '^#' "$WORK/$n.mxf.md5")" = $FRAMES ]; then
        ok $n/mxf-decode "$FRAMES frames, one thread"
    else
        fail $n/mxf-decode "$(grep -vc '^#' "$WORK/$n.mxf.md5" 2>/dev/null) frames: $(last_err)"
    fi
    if have mediainfo; then
        v=$(mediainfo --Inform='Video;%Format%' "$out" 2>&1)
        [[ $v == "JPEG 2000"* ]] && ok $n/mediainfo "$v" || fail $n/mediainfo "format '$v'"
    fi
}

run_case imf_ht   "-profile:v imf_ht -b:v 2M" imf_ht 0
run_case imf_ht_r "-profile:v imf_ht_r" imf_ht_r 1
run_case htj2k    "-profile:v htj2k -b:v 2M" "" 0
run_case ht-1     "-ht 1" "" 0

# Interlaced under imf_ht_r: fields coded as codestreams of their own, an IMF track file with
# a KLV and an edit unit per field (SMPTE ST 422 I1), FrameLayout SeparateFields; each field a
# valid imf_ht_r codestream; FFmpeg decodes the frames back (two fields each) on one thread
UL_LAYOUT=060e2b34010101..0401030104000000
EC_I1=060e2b340401010d0d010301020c0300
n=fields
mkdir -p "$WORK/$n.x" "$WORK/$n.u"
if ff -f lavfi -i "testsrc2=s=${W}x$H:r=25" -frames:v 2 -vf setparams=field_mode=tff -pix_fmt yuv422p10le \
      -c:v jpeg2000_cuda -profile:v imf_ht_r -f mxf "$WORK/$n.mxf" &&
   "$KLV" -x "$WORK/$n.x/" "$WORK/$n.mxf" > "$WORK/$n.klv" 2>"$WORK/klv.err"; then
    v="$(item "$WORK/$n.klv" "$UL_LAYOUT" | sort -u)/$(item "$WORK/$n.klv" "$UL_CONTAINER" | sort -u)"
    [ "$v" = "01/$EC_I1" ] && ok $n/layout "SeparateFields, I1" || fail $n/layout "FrameLayout/container '$v', 01/$EC_I1 expected"
    i=0
    for f in "$WORK/$n.x"/*; do
        "$CHECK" --profile imf_ht_r "$f" > /dev/null 2>&1 || { fail $n/j2kc-check "element $i: $("$CHECK" --profile imf_ht_r "$f" | head -n 1)"; i=-1; break; }
        i=$((i + 1))
    done
    [ $i = 4 ] && ok $n/j2kc-check "4 field codestreams, imf_ht_r" || { [ $i -ge 0 ] && fail $n/j2kc-check "$i elements, 4 fields expected"; }
    if "$FFMPEG" -nostdin -hide_banner -loglevel error -threads 1 -i "$WORK/$n.mxf" -f framemd5 "$WORK/$n.md5" 2>"$WORK/err" &&
       [ ! -s "$WORK/err" ] && [ "$(grep -vc '^#' "$WORK/$n.md5")" = 2 ]; then
        ok $n/decode "2 frames of 2 fields"
    else
        fail $n/decode "$(grep -vc '^#' "$WORK/$n.md5" 2>/dev/null) frames: $(last_err)"
    fi
    if [ -n "$ASDCP" ]; then
        "$ASDCP/as-02-info" -d -c -t 100000 "$WORK/$n.mxf" > "$WORK/$n.info" 2>&1
        grep -q "JPEG 2000 pictures, (4 edit units)" "$WORK/$n.info" && ok $n/as-02-info "4 edit units (fields)" ||
            fail $n/as-02-info "$(grep -m1 'essence type' "$WORK/$n.info")"
    fi
else
    fail $n "ffmpeg -f mxf or klvdump failed: $(last_err) $(cat "$WORK/klv.err" 2>/dev/null)"
fi

# refuse NAME "ENC_OPTS": ffmpeg must fail with a message, no crash, no output file
refuse() {
    local n=$1 opts=$2 rc
    rm -f "$WORK/r.j2c"
    # shellcheck disable=SC2086
    ff "${IN[@]}" -frames:v 1 -c:v jpeg2000_cuda $opts -f image2 -update 1 "$WORK/r.j2c"
    rc=$?
    if [ $rc = 0 ]; then fail refuse-$n "accepted"
    elif signalled $rc; then fail refuse-$n "killed by a signal ($rc)"
    elif [ -s "$WORK/r.j2c" ]; then fail refuse-$n "output written"
    elif [ ! -s "$WORK/err" ]; then fail refuse-$n "no message"
    else ok refuse-$n "$(last_err)"; fi
}
refuse ht-dcinema "-ht 1 -profile:v dcinema_2k -pix_fmt xyz12le"
refuse ht-imf_2k "-ht 1 -profile:v imf_2k"
refuse imf_ht-ht-0 "-profile:v imf_ht -ht 0 -b:v 2M"
refuse imf_ht-psnr "-profile:v imf_ht -psnr 40"
refuse imf_ht-cblk-16 "-profile:v imf_ht -b:v 2M -cblk_width 16"
refuse imf_ht-cprl "-profile:v imf_ht -b:v 2M -prog cprl"
refuse imf_ht_r-dwt97 "-profile:v imf_ht_r -pred dwt97"
refuse profile-0x14001 "-profile:v 0x14001"
finish
