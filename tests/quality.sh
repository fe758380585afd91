#!/bin/bash
# Quality against the peers at the same byte count.
#
# Lossy: j2kc encodes (the DCI 2K profile on the DCI frames, --bytes with the same layout on
# the rest: 9/7, ICT, 5 levels, 32x32 code-blocks, CPRL, precincts 128 at r0 and 256 above);
# then opj_compress and grk_compress encode the same source with the same layout, their -r
# ratio iterated until their codestream is the same size as ours or at most 0.2% larger.
# Every codestream is decoded by opj_decompress and compared with the source (tests/gen/cmp:
# per-component PSNR, peak 2^depth - 1). The figure compared is the PSNR over all components
# (mean of the components' squared errors: what PCRD-opt minimises); per-component values are
# printed too. Asserted: ours >= min(OpenJPEG, Grok) - 0.05 dB.
# Lossless: j2kc --lossless vs opj_compress's default (5/3, RCT) with the same levels and
# code-blocks: bit-exact decode, and ours at most 1% larger.
#
# Content: generated (tests/gen/gen.c: 12-bit and 8-bit, 1280x720, two rates each); when
# ../shared/corpus exists, its two DCI X'Y'Z' frames (bar_interior, stem_wedding; these are
# decodes of third-party DCI codestreams) and hdr_room (Debian libjxl-testdata, 16-bit PNG,
# through ffmpeg); they are skipped with a message when it is absent.
#
#   tests/quality.sh [BUILD_DIR]       one "ok/FAIL/skip NAME (figures)" line per case
#   (J2KC_CORPUS=DIR: the real content from DIR instead of ../shared/corpus)
# Exit: 0 all passed, 1 a case failed, 77 ("SKIP: reason") a tool is missing.
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
J2KC="$BUILD/bin/j2kc"
T="$BUILD/testtools"
T_FAILED=0

for t in opj_compress opj_decompress grk_compress; do
    t_have $t || { echo "SKIP: $t missing (tests/install-deps.sh installs it)"; exit 77; }
done
[ -x "$J2KC" ] || { echo "SKIP: $J2KC not built (make B=$(basename "$BUILD"))"; exit 77; }
t_build_helpers "$BUILD" && [ -x "$T/cmp" ] && [ -x "$T/gen" ] ||
    { echo "SKIP: cannot build tests/gen helpers (cmp, gen)"; exit 77; }

W=$(mktemp -d "${TMPDIR:-/tmp}/j2kc-quality.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
CORPUS=${J2KC_CORPUS:-$(t_corpus)}   # J2KC_CORPUS overrides ../shared/corpus

PSNR_TOL=0.05          # dB below the weaker peer that we still accept
SIZE_WIN=0.002         # peers: same size as ours, or at most this fraction larger
LOSSLESS_MAX=1.01      # ours / OpenJPEG, lossless
STOP_TOL=0.01          # dB that tier-1's early stop may cost against coding every pass
QRATE_TOL=0.05         # dB that qstep_rate's coarser steps may cost against the full-rate ones
QTRY_TOL=0.02          # dB that qstep_try's kept steps may cost against qstep_rate's

# PSNR over all components from a cmp line ("PSNR c0 X c1 Y ... min ..."): 10 log10(peak^2 /
# mean of the components' MSE). Equal-size components only (4:4:4 here).
psnr_all() {
    awk '{ n = 0; s = 0
           for (i = 1; i <= NF; i++) if ($i ~ /^c[0-9]+$/) { n++; if ($(i + 1) != "inf") s += 10 ^ (-$(i + 1) / 10) }
           if (!n) print "nan"; else if (s == 0) print "inf"; else printf "%.3f\n", -10 * log(s / n) / log(10) }'
}

# decode_psnr SRC CODESTREAM: decodes with OpenJPEG; sets CMP (the cmp line) and ALL.
decode_psnr() {
    local src=$1 cs=$2 ext=${1##*.}
    CMP= ALL=nan
    rm -f "$W/dec.$ext"
    opj_decompress -i "$cs" -o "$W/dec.$ext" > "$W/dec.log" 2>&1 || { CMP="opj_decompress failed"; return 1; }
    CMP=$("$T/cmp" "$src" "$W/dec.$ext" 2>&1)
    ALL=$(echo "$CMP" | psnr_all)
}

size_of() { stat -c %s "$1"; }

# Peer layout flags (same codestream layout as ours; both tools accept these spellings).
PEER_LOSSY="-I -n 6 -b 32,32 -p CPRL -c [256,256],[256,256],[256,256],[256,256],[256,256],[128,128]"

# match_peer TOOL SRC OUT TARGET_BYTES RAW_BITS: runs TOOL (opj_compress/grk_compress) with
# PEER_LOSSY -r R, iterating R (secant in log size) until TARGET <= size <= TARGET (1 + SIZE_WIN);
# keeps the closest codestream at or above TARGET (else the largest below it) in OUT and sets
# PEER_R, PEER_BYTES, PEER_TRIES. RAW_BITS: width * height * components * depth.
match_peer() {
    local tool=$1 src=$2 out=$3 target=$4 raw=$5
    local r s best_s=0 best_r= try cand="$W/peer.j2k" hi
    hi=$(awk -v t="$target" -v w="$SIZE_WIN" 'BEGIN { printf "%d", t * (1 + w) }')
    r=$(awk -v raw="$raw" -v t="$target" 'BEGIN { printf "%.6f", raw / 8 / t }')
    PEER_TRIES=0
    for try in 1 2 3 4 5 6 7 8; do
        PEER_TRIES=$try
        rm -f "$cand"
        # shellcheck disable=SC2086
        $tool -i "$src" -o "$cand" $PEER_LOSSY -r "$r" > "$W/peer.log" 2>&1 || break
        [ -f "$cand" ] || break
        s=$(size_of "$cand")
        # keep the best: the smallest at or above the target, else the largest below it
        if { [ "$s" -ge "$target" ] && { [ "$best_s" -lt "$target" ] || [ "$s" -lt "$best_s" ]; }; } ||
           { [ "$s" -lt "$target" ] && [ "$best_s" -lt "$target" ] && [ "$s" -gt "$best_s" ]; }; then
            best_s=$s best_r=$r
            cp "$cand" "$out"
        fi
        [ "$s" -ge "$target" ] && [ "$s" -le "$hi" ] && break
        # aim at the middle of the window; size ~ 1/R
        r=$(awk -v r="$r" -v s="$s" -v t="$target" -v w="$SIZE_WIN" 'BEGIN { printf "%.6f", r * s / (t * (1 + w / 2)) }')
    done
    PEER_R=$best_r PEER_BYTES=$best_s
    [ "$best_s" -gt 0 ]
}

# lossy_case NAME SRC RAW_BITS J2KC_OPTIONS...: ours, then both peers at our size.
lossy_case() {
    local name=$1 src=$2 raw=$3; shift 3
    local ours_b ours_all ours_cmp line p best_peer=inf note=
    if ! "$J2KC" -i "$src" -o "$W/ours.j2c" -q "$@" > "$W/ours.log" 2>&1; then
        t_fail "quality/$name" "j2kc $* failed: $(head -c 300 "$W/ours.log")"
        return
    fi
    ours_b=$(size_of "$W/ours.j2c")
    decode_psnr "$src" "$W/ours.j2c" || { t_fail "quality/$name" "ours: $CMP"; return; }
    ours_all=$ALL ours_cmp=$CMP
    echo "    $name: ours   $ours_b B  PSNR all $ours_all  ($ours_cmp)  [j2kc $*]"
    line="ours $ours_b B $ours_all dB"
    for p in opj grk; do
        if ! match_peer "${p}_compress" "$src" "$W/$p.j2k" "$ours_b" "$raw"; then
            t_fail "quality/$name" "$p: no codestream (log: $(head -c 200 "$W/peer.log"))"
            return
        fi
        decode_psnr "$src" "$W/$p.j2k" || { t_fail "quality/$name" "$p: $CMP"; return; }
        echo "    $name: $p    $PEER_BYTES B  PSNR all $ALL  ($CMP)  [-r $PEER_R, $PEER_TRIES tries]"
        [ "$PEER_BYTES" -lt "$ours_b" ] && note="$note; $p ended below our size"
        line="$line, $p $PEER_BYTES B $ALL dB"
        best_peer=$(awk -v a="$best_peer" -v b="$ALL" 'BEGIN { if (a == "inf" || b + 0 < a + 0) print b; else print a }')
    done
    if awk -v o="$ours_all" -v m="$best_peer" -v t="$PSNR_TOL" 'BEGIN { exit !(o == "inf" || o + 0 >= m - t) }'; then
        t_ok "quality/$name" "$line$note"
    else
        t_fail "quality/$name" "ours $ours_all dB < min(opj, grk) $best_peer - $PSNR_TOL dB ($line$note)"
    fi
}

# lossless_case NAME SRC LEVELS CBLK(WxH)
lossless_case() {
    local name=$1 src=$2 lv=$3 cb=$4
    local ob pb
    if ! "$J2KC" -i "$src" -o "$W/ours.j2c" -q --lossless --levels "$lv" --cblk "$cb" > "$W/ours.log" 2>&1; then
        t_fail "quality/$name" "j2kc --lossless failed: $(head -c 300 "$W/ours.log")"
        return
    fi
    if ! opj_compress -i "$src" -o "$W/opj.j2k" -n $((lv + 1)) -b "${cb/x/,}" > "$W/peer.log" 2>&1; then
        t_fail "quality/$name" "opj_compress failed: $(head -c 300 "$W/peer.log")"
        return
    fi
    ob=$(size_of "$W/ours.j2c") pb=$(size_of "$W/opj.j2k")
    decode_psnr "$src" "$W/ours.j2c"
    local ours_cmp=$CMP
    echo "    $name: ours $ob B ($ours_cmp); opj $pb B; ratio $(awk -v a="$ob" -v b="$pb" 'BEGIN { printf "%.5f", a / b }')"
    case "$ours_cmp" in
        *"maxdiff 0"*) ;;
        *) t_fail "quality/$name" "ours is not lossless: $ours_cmp"; return ;;
    esac
    if awk -v a="$ob" -v b="$pb" -v m="$LOSSLESS_MAX" 'BEGIN { exit !(a <= b * m) }'; then
        t_ok "quality/$name" "ours $ob B, opj $pb B"
    else
        t_fail "quality/$name" "ours $ob B > $LOSSLESS_MAX x opj $pb B"
    fi
}

LAYOUT="--levels 5 --cblk 32x32 --order cprl --prec 128x128,256x256"

# ---- generated content ---------------------------------------------------------------------
"$T/gen" -o "$W/gen12.ppm" --size 1280x720 --depth 12 --seed 7 || { t_fail quality/gen "gen failed"; exit 1; }
"$T/gen" -o "$W/gen8.ppm" --size 1280x720 --depth 8 --seed 3 --noise 0.01 || { t_fail quality/gen "gen failed"; exit 1; }
RAW12=$((1280 * 720 * 3 * 12)) RAW8=$((1280 * 720 * 3 * 8))
# 400000 B = 1.16 bit/sample (DCI 2K at 24 fps: 1.61), 150000 B = 0.43 bit/sample
lossy_case gen12_400k "$W/gen12.ppm" $RAW12 $LAYOUT --bytes 400000
lossy_case gen12_150k "$W/gen12.ppm" $RAW12 $LAYOUT --bytes 150000
lossy_case gen8_400k "$W/gen8.ppm" $RAW8 $LAYOUT --bytes 400000
lossy_case gen8_150k "$W/gen8.ppm" $RAW8 $LAYOUT --bytes 150000
lossless_case gen12_lossless "$W/gen12.ppm" 5 32x32

# onoff_case NAME KEY TOL ON OFF LOGLINE SRC J2KC_OPTIONS...: an encoder rule that is on by
# default (ON, e.g. "early stop") against --set KEY=0 (OFF), both decoded by OpenJPEG: at most
# TOL dB lost. LOGLINE, when not empty, must appear in j2kc -v's log of the default encode
# (else the rule did not act and nothing was compared).
onoff_case() {
    local name=$1 key=$2 tol=$3 on_l=$4 off_l=$5 logline=$6 src=$7 off on ob fb; shift 7
    if ! "$J2KC" -i "$src" -o "$W/off.j2c" -q "$@" --set "$key=0" > "$W/ours.log" 2>&1 ||
       ! "$J2KC" -i "$src" -o "$W/on.j2c" -v "$@" > "$W/ours.log" 2>&1; then
        t_fail "quality/$name" "j2kc $* failed: $(head -c 300 "$W/ours.log")"
        return
    fi
    if [ -n "$logline" ] && ! grep -q "$logline" "$W/ours.log"; then
        t_fail "quality/$name" "expected '$logline' in the log: $(grep "$key" "$W/ours.log" || echo "no $key line")"
        return
    fi
    decode_psnr "$src" "$W/off.j2c" || { t_fail "quality/$name" "$off_l: $CMP"; return; }
    off=$ALL
    decode_psnr "$src" "$W/on.j2c" || { t_fail "quality/$name" "$on_l: $CMP"; return; }
    on=$ALL
    ob=$(size_of "$W/on.j2c") fb=$(size_of "$W/off.j2c")
    if awk -v s="$on" -v f="$off" -v t="$tol" 'BEGIN { exit !(s + 0 >= f - t) }'; then
        t_ok "quality/$name" "$on_l $ob B $on dB, $off_l $fb B $off dB"
    else
        t_fail "quality/$name" "$on_l $ob B $on dB < $off_l $fb B $off dB - $tol dB"
    fi
}
# tier-1's early stop (on below 1 bit/sample) against coding every pass (t1_stop=0)
stop_case() { local name=$1; shift; onoff_case "$name" t1_stop "$STOP_TOL" "early stop" "every pass" "" "$@" --set t1_stop=1; }
stop_case t1stop_gen12_150k "$W/gen12.ppm" $LAYOUT --bytes 150000
stop_case t1stop_gen8_150k "$W/gen8.ppm" $LAYOUT --bytes 150000
stop_case t1stop_gen8_60k "$W/gen8.ppm" $LAYOUT --bytes 60000
# Near-black noisy frames (one code value plus uniform noise of +-4 codes, seed 5): the LL
# band's coefficients all sit near one value, so a refinement pass can raise their distortion
# and a later one recover it, the dip the early stop must not stop in (t1_stop.h,
# j2ki_t1s_decide's rules 2 and 3). Without them the two LL blocks of component 0 (43 passes)
# stop after 10, where coding every pass keeps 30 to 39 of them: 18.9 and 21.0 dB lost.
for v in 340 380; do
    "$T/gen" -o "$W/dark$v.ppm" --size 1280x720 --depth 12 --seed 5 --flat $v --noise 0.001 ||
        { t_fail "quality/t1stop_dark$v" "gen failed"; continue; }
    stop_case "t1stop_dark${v}_seed5_250k" "$W/dark$v.ppm" $LAYOUT --bytes 250000
    rm -f "$W/dark$v.ppm"
done

# qstep_rate's steps, coarser by K bit-planes for the budget (j2ki_quant_rate_planes), against
# the full-rate steps (qstep_rate=0); the log must show K planes
qrate_case() {
    local name=$1 k=$2; shift 2
    onoff_case "$name" qstep_rate "$QRATE_TOL" "steps coarser by $k planes" "full-rate steps" \
        "qstep_rate: 9/7 steps coarsened by $k bit-plane" "$@"
}
# qstep_try (quant_ref.c, j2ki_quant_predict): each frame first coded with steps coarser by the
# d planes more (0..qstep_try) that its quantised integers predict it fills its budget with,
# kept where it does, else coded again with qstep_rate's; against qstep_try=0 at most QTRY_TOL dB
# lost. EXPECT: "D kept" (d = D predicted, the frame filled), "D again" (D predicted, the frame
# did not fill: coded again, the bytes of qstep_try=0) or "0 once" (none predicted: coded once,
# the bytes of qstep_try=0). The d in the log (j2kc -v) must be D: a changed estimate or
# constant C (quant.h) shows here as well as in the unit test.
qtry_case() {
    local name=$1 want="$2 $3" d got; shift 3
    onoff_case "$name" qstep_try "$QTRY_TOL" "tried steps" "qstep_rate's steps" "qstep_try: each frame tried" "$@"
    d=$(sed -n 's/.*qstep_try: the frame is coded first with \([0-9]\) bit-plane.*/\1/p' "$W/ours.log" | head -n 1)
    if grep -q "qstep_try: the frame does not fill" "$W/ours.log"; then got=again
    elif [ "$d" = 0 ]; then got=once
    else got=kept; fi
    if [ "$d $got" != "$want" ]; then
        t_fail "quality/${name}_path" "expected $want, got ${d:-no d} $got"
    elif [ "$got" != kept ] && ! cmp -s "$W/on.j2c" "$W/off.j2c"; then
        t_fail "quality/${name}_path" "$d $got, yet not the bytes of qstep_try=0"
    else
        t_ok "quality/${name}_path" "$d planes more predicted, $got"
    fi
}
qtry_case qtry_gen12_400k 3 kept "$W/gen12.ppm" $LAYOUT --bytes 400000
qtry_case qtry_gen8_60k 3 kept "$W/gen8.ppm" $LAYOUT --bytes 60000
# the estimate overrates this frame at 2 planes more: it fills with 1 (qstep_try=1), not with 2
qtry_case qtry_gen8_400k 2 again "$W/gen8.ppm" $LAYOUT --bytes 400000
qtry_case qtry_gen8_1000k 0 once "$W/gen8.ppm" $LAYOUT --bytes 1000000

# smooth content goes deepest: generated without noise, generated at 320x180 and upscaled 4x
# (bicubic, by ffmpeg) as upscaled masters are, and ffmpeg's testsrc2 pattern at 4096x2160;
# the rule was fitted on a 4x upscale and on testsrc2 (quant_ref.c)
"$T/gen" -o "$W/smooth12.ppm" --size 1280x720 --depth 12 --seed 5 --noise 0 || { t_fail quality/gen "gen failed"; exit 1; }
qrate_case qrate_smooth12_207k 2 "$W/smooth12.ppm" $LAYOUT --bytes 207360
qtry_case qtry_smooth12_207k 3 kept "$W/smooth12.ppm" $LAYOUT --bytes 207360
qrate_case qrate_gen12_300k 1 "$W/gen12.ppm" $LAYOUT --bytes 300000
qrate_case qrate_gen12_150k 3 "$W/gen12.ppm" $LAYOUT --bytes 150000
qrate_case qrate_gen8_60k 1 "$W/gen8.ppm" $LAYOUT --bytes 60000
if t_have ffmpeg; then
    "$T/gen" -o "$W/g320.ppm" --size 320x180 --depth 12 --seed 11 || { t_fail quality/gen "gen failed"; exit 1; }
    if ffmpeg -v error -y -i "$W/g320.ppm" -vf scale=1280:720:flags=bicubic -pix_fmt rgb48be -f image2 -c:v ppm "$W/up.ppm"; then
        # 16-bit (ffmpeg's rgb48), 1280x720x3: 76,032 B = 0.22 bit/sample (K = 5) .. 311,040 B = 0.9 (K = 1)
        qrate_case qrate_upscale4x_76k 5 "$W/up.ppm" $LAYOUT --bytes 76032
        qrate_case qrate_upscale4x_90k 4 "$W/up.ppm" $LAYOUT --bytes 89856
        qrate_case qrate_upscale4x_130k 3 "$W/up.ppm" $LAYOUT --bytes 130291
        qrate_case qrate_upscale4x_207k 2 "$W/up.ppm" $LAYOUT --bytes 207360
        qrate_case qrate_upscale4x_311k 1 "$W/up.ppm" $LAYOUT --bytes 311040
        qtry_case qtry_upscale4x_553k 3 kept "$W/up.ppm" $LAYOUT --bytes 553000
    else
        t_fail quality/qrate_upscale4x "ffmpeg could not upscale"
    fi
    if ffmpeg -v error -y -f lavfi -i testsrc2=s=4096x2160:r=24:d=1 -frames:v 1 -pix_fmt rgb48be -f image2 -c:v ppm "$W/ts.ppm"; then
        # 4K DCI's budget at 250 Mb/s, 24 fps (0.39 bit/sample, K = 3), and 0.3 bit/sample (K = 4)
        qrate_case qrate_testsrc2_4k_1302k 3 "$W/ts.ppm" $LAYOUT --bytes 1302083
        qrate_case qrate_testsrc2_4k_995k 4 "$W/ts.ppm" $LAYOUT --bytes 995328
        # testsrc2 does not fill 4K DCI's budget with 2 planes more (K = 5): none is predicted
        # (coded once); at 0.3 bit/sample the most (3, of which its bands take 1: K = 4) fill
        qtry_case qtry_testsrc2_4k_1302k 0 once "$W/ts.ppm" $LAYOUT --bytes 1302083
        qtry_case qtry_testsrc2_4k_995k 3 kept "$W/ts.ppm" $LAYOUT --bytes 995328
        rm -f "$W/ts.ppm"
    else
        t_fail quality/qrate_testsrc2 "ffmpeg could not make testsrc2"
    fi
else
    t_skip quality/qrate_upscale4x "ffmpeg absent"
fi

# ---- real content (../shared/corpus) --------------------------------------------------------
if [ -d "$CORPUS" ]; then
    for f in bar_interior_1998x1080_xyz12 stem_wedding_2048x857_xyz12; do
        if [ ! -f "$CORPUS/$f.ppm.xz" ] || ! t_have xz; then
            t_skip "quality/$f" "$CORPUS/$f.ppm.xz or xz absent"
            continue
        fi
        xz -dc "$CORPUS/$f.ppm.xz" > "$W/$f.ppm" || { t_fail "quality/$f" "xz failed"; continue; }
        wh=${f#*_*_} wh=${wh%%_*}
        raw=$(( ${wh%x*} * ${wh#*x} * 3 * 12 ))
        lossy_case "${f%%_*}_dci2k" "$W/$f.ppm" $raw --profile dci2k --fps 24
        [ "$f" = bar_interior_1998x1080_xyz12 ] && lossless_case "${f%%_*}_lossless" "$W/$f.ppm" 5 32x32
        rm -f "$W/$f.ppm"
    done
    if [ -f "$CORPUS/hdr_room_676x449_16bit.png" ] && t_have ffmpeg; then
        if ffmpeg -v error -y -i "$CORPUS/hdr_room_676x449_16bit.png" -pix_fmt rgb48be -f image2 -c:v ppm "$W/room.ppm"; then
            lossy_case hdr_room16_100k "$W/room.ppm" $((676 * 449 * 3 * 16)) $LAYOUT --bytes 100000
        else
            t_fail quality/hdr_room "ffmpeg could not convert the PNG"
        fi
    else
        t_skip quality/hdr_room "hdr_room_676x449_16bit.png or ffmpeg absent"
    fi
else
    t_skip quality/corpus "$CORPUS absent: DCI frames and hdr_room not tested"
fi

[ "$T_FAILED" = 0 ] || exit 1
exit 0
