#!/bin/bash
# HTJ2K (ht=1, ISO/IEC 15444-15) codestreams decoded by everyone: random configurations
# (seeded; the seed is printed, J2KC_TEST_SEED=N replays one) of size (odd ones too), 1-4
# components, depth 8-16, levels 0-5, code-block sizes, precincts, layers, lossless / 9/7 at
# full rate / 9/7 and 5/3 under a byte budget. Each codestream goes through j2kc-check and is
# decoded by every decoder present: OpenJPEG (opj_decompress), OpenJPH (ojph_expand) and
# FFmpeg 7.1's native decoder (the built one, $BUILD/ffmpeg/ffmpeg, or J2KC_FFMPEG; Debian's
# 5.1 has no HT decoder). Lossless: exact. Lossy: every decoder within 0.1 dB of OpenJPEG
# below 60 dB (the float 9/7 inverses differ by 1 LSB at most, which above 60 dB moves the
# PSNR more), OpenJPEG above the floor below. Budgets: never over. Grok (grk_decompress)
# decodes the streams without refinement segments (lossless, full rate, cleanup-only 9/7)
# like OpenJPEG; it fails on refinement segments and on 5/3 sets above plane 0
# (doc/open-work.md), and where it alone differs from OpenJPEG and OpenJPH (which agree) the
# case's line says so instead of failing. A missing decoder is a skip line with the reason.
#   tests/ht.sh [BUILD_DIR]
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
J2KC=$BUILD/bin/j2kc
CHECK=$BUILD/bin/j2kc-check
T=$BUILD/testtools
[ -x "$J2KC" ] || { echo "skip ht: $J2KC not built"; exit 77; }
t_build_helpers "$BUILD" && [ -x "$T/cmp" ] && [ -x "$T/gen" ] ||
    { echo "skip ht: cannot build tests/gen helpers (cmp, gen)"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# Lossy floors (dB, worst component), set below what was measured (bench/results/
# ht-plane-choice.md, "tests/ht.sh's thresholds"): FLOOR under a byte budget of 1 to 4 bits per
# sample (tiny frames at 0 levels are the lowest: a handful of all-or-nothing code-blocks), where
# a broken block coder decodes to noise (below 10 dB) or not at all; FULL at full rate (no
# budget: the 9/7 quantiser alone). Each budget case prints Part 1's PSNR beside its own.
FLOOR=12
FULL=40
FF=${J2KC_FFMPEG:-$BUILD/ffmpeg/ffmpeg}
[ -x "$FF" ] || FF=
HAVE_OPJ=0 HAVE_OJPH=0 HAVE_GRK=0
t_have opj_decompress && HAVE_OPJ=1
t_have ojph_expand && HAVE_OJPH=1
t_have grk_decompress && HAVE_GRK=1
[ $HAVE_OPJ = 1 ] || echo "skip ht/opj: opj_decompress missing (libopenjp2-tools)"
[ $HAVE_OJPH = 1 ] || echo "skip ht/ojph: ojph_expand missing (openjph-tools)"
[ $HAVE_GRK = 1 ] || echo "skip ht/grk: grk_decompress missing (grokj2k-tools; cleanup-only streams only)"
[ -n "$FF" ] || echo "skip ht/ffmpeg: no FFmpeg 7.1 build ($BUILD/ffmpeg/ffmpeg; make ffmpeg) and J2KC_FFMPEG unset"

SEED=${J2KC_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "# ht.sh: seed $SEED (J2KC_TEST_SEED=$SEED replays it)"
RANDOM=$SEED
# pick VAR VALUE...: one of the values into VAR, drawn in this shell (a command substitution's
# subshell would reseed RANDOM, and the seed would not replay the cases)
pick() { local -n out=$1; shift; local a=("$@"); out=${a[RANDOM % ${#a[@]}]}; }

# psnr_min CMP_LINE: the worst component's PSNR ("inf" when exact)
psnr_min() { sed -n 's/.* min \([^ ]*\).*/\1/p' <<< "$1"; }
# differs P REF: whether a decoder's PSNR P is more than 0.1 dB from OpenJPEG's REF, below
# 60 dB (above it the float 9/7 inverses' 1-LSB differences move the PSNR more)
differs() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != b && (a < 60 || b < 60) && (a - b > 0.1 || b - a > 0.1)) }'; }

N=${J2KC_HT_CASES:-20}
for i in $(seq 1 "$N"); do
    w=$(( 9 + RANDOM % 190 )) h=$(( 7 + RANDOM % 140 ))
    pick comps 1 1 2 3 3 4; pick depth 8 8 10 12 16 9 14
    lv=$(( RANDOM % 6 ))
    pick cb 64x64 32x32 16x16 64x32 32x16 128x32 4x4 8x64
    pick mode lossless lossless full bytes bytes bytes53
    args=(--levels $lv --cblk $cb --set ht=1 -q)
    if [ $(( RANDOM % 3 )) = 0 ]; then pick prec 64x64 32x32 128x128; args+=(--prec "$prec"); fi
    if [ $(( RANDOM % 3 )) = 0 ]; then pick order lrcp rlcp rpcl pcrl cprl; args+=(--order "$order"); fi
    samples=$(( w * h * comps ))
    budget= co=
    case $mode in
        lossless) args+=(--lossless) ;;
        full) ;;
        bytes|bytes53)
            # 1 to 4 bits per sample
            budget=$(( samples * (1 + RANDOM % 4) / 8 + 400 ))
            args+=(--bytes $budget)
            [ $mode = bytes53 ] && args+=(--set transform=53)
            [ $(( RANDOM % 2 )) = 0 ] && args+=(--layers $(( 1 + RANDOM % 4 )))
            # cleanup passes only (ht_refine=0; without a budget every set is at plane 0 and
            # has no refinement anyway)
            [ $(( RANDOM % 3 )) = 0 ] && args+=(--ht-refine 0) && co=" cleanup-only" ;;
    esac
    name="ht/$i ${w}x$h c$comps d$depth L$lv cb$cb $mode$co${budget:+ $budget B}"
    d=$W/$i
    mkdir -p "$d"
    "$T/gen" -o "$d/src_0.pgx" --size ${w}x$h --depth $depth --comps $comps --seed $(( SEED + i )) ||
        { t_fail "$name" "gen failed"; continue; }
    out=$d/a.j2k
    if ! "$J2KC" -i "$d/src_0.pgx" -o "$out" "${args[@]}" > "$d/enc.log" 2>&1; then
        t_fail "$name" "j2kc ${args[*]}: $(head -2 "$d/enc.log" | tr '\n' ' ')"; continue
    fi
    problems= details= ojph_ok=0
    size=$(stat -c %s "$out")
    [ -n "$budget" ] && [ "$size" -gt "$budget" ] && problems="$problems; $size bytes over the budget $budget"
    chk=$("$CHECK" "$out" 2>&1) || problems="$problems; j2kc-check: $(echo "$chk" | head -2 | tr '\n' ' ')"
    cmpmode=(--exact)
    [ $mode = lossless ] || cmpmode=()
    ref=
    # OpenJPEG 2.5.0 stops at such streams ("segment too long": after a cleanup-only layer its
    # t2.c reads the next layer's SigProp+MagRef as two segments, B.10.7 makes them one) and
    # Debian's OpenJPH 0.9.0 decodes only the first layer (its issue 89); FFmpeg 7.1 decodes
    # every layer (to the one-layer PSNR, measured), so with layers only FFmpeg is compared.
    multi=0
    [[ " ${args[*]} " == *" --layers "[2-9]* ]] && multi=1 && details="$details (layers: FFmpeg only)"
    if [ $HAVE_OPJ = 1 ] && [ $multi = 0 ]; then
        if opj_decompress -i "$out" -o "$d/opj.pgx" > "$d/opj.log" 2>&1 && [ -f "$d/opj_0.pgx" ]; then
            if r=$("$T/cmp" "$d/src_0.pgx" "$d/opj_0.pgx" "${cmpmode[@]}" 2>&1); then
                ref=$(psnr_min "$r")
                details="$details opj $ref"
                [ $mode = full ] && awk -v p="$ref" -v f=$FULL 'BEGIN { exit !(p != "inf" && p + 0 < f) }' &&
                    problems="$problems; opj PSNR $ref dB at full rate, below $FULL"
                [ -n "$budget" ] && awk -v p="$ref" -v f=$FLOOR 'BEGIN { exit !(p + 0 < f) }' &&
                    problems="$problems; opj PSNR $ref dB below the floor $FLOOR"
                if [ -n "$budget" ]; then
                    p1=
                    a1=()
                    # the same with Part 1's coder (which takes no ht_refine)
                    skip=0
                    for a in "${args[@]}"; do
                        [ $skip = 1 ] && { skip=0; continue; }
                        [ "$a" = --ht-refine ] && { skip=1; continue; }
                        [ "$a" = ht=1 ] && a=ht=0
                        a1+=("$a")
                    done
                    if "$J2KC" -i "$d/src_0.pgx" -o "$d/p1.j2k" "${a1[@]}" > /dev/null 2>&1 &&
                       opj_decompress -i "$d/p1.j2k" -o "$d/p1.pgx" > /dev/null 2>&1; then
                        p1=$(psnr_min "$("$T/cmp" "$d/src_0.pgx" "$d/p1_0.pgx" 2>&1)")
                        details="$details (Part 1: $p1)"
                    fi
                fi
            else
                problems="$problems; opj: $r"
            fi
        else
            problems="$problems; opj_decompress failed: $(grep -m1 -i error "$d/opj.log")"
        fi
    fi
    # OpenJPH and FFmpeg write PNM for 1 and 3 components
    pnm=
    [ $comps = 1 ] && pnm=pgm
    [ $comps = 3 ] && pnm=ppm
    # OpenJPH 0.9.0 also decodes wrong (lossless too, where OpenJPEG and FFmpeg are exact) when
    # the lowest resolution is empty in one direction (11x9 at 5 levels): open
    tiny=0
    [ $(( w >> lv )) = 0 ] || [ $(( h >> lv )) = 0 ] && tiny=1
    [ $tiny = 1 ] && [ -n "$pnm" ] && details="$details ojph n/a (empty lowest resolution)"
    if [ $HAVE_OJPH = 1 ] && [ -n "$pnm" ] && [ $multi = 0 ] && [ $tiny = 0 ]; then
        if ! ojph_expand -i "$out" -o "$d/ojph.$pnm" > "$d/ojph.log" 2>&1 &&
           [[ " ${args[*]} " == *" --prec "* ]]; then
            # OpenJPH 0.9.0 (Debian 12) rejects some precinct partitions that OpenJPEG and
            # FFmpeg decode exactly (lossless too): open, doc/open-work.md
            details="$details ojph n/a (precincts: OpenJPH 0.9.0 fails, open)"
        elif [ -s "$d/ojph.$pnm" ] && ! grep -qi error "$d/ojph.log"; then
            if r=$("$T/cmp" "$d/src_0.pgx" "$d/ojph.$pnm" "${cmpmode[@]}" 2>&1); then
                p=$(psnr_min "$r"); details="$details ojph $p" ojph_ok=1
                [ -n "$ref" ] && differs "$p" "$ref" &&
                    problems="$problems; ojph $p dB vs opj $ref"
            else
                problems="$problems; ojph: $r"
            fi
        else
            problems="$problems; ojph_expand failed: $(grep -m1 -i error "$d/ojph.log")"
        fi
    fi
    grk_bad=
    # Grok: the streams without refinement segments (lossless, full rate, cleanup-only 9/7);
    # not 5/3 sets above plane 0, which it decodes wrong (doc/open-work.md)
    if [ $HAVE_GRK = 1 ] && [ -n "$pnm" ] && [ $multi = 0 ] &&
       { [ $mode = lossless ] || [ $mode = full ] || { [ -n "$co" ] && [ $mode = bytes ]; }; }; then
        if grk_decompress -i "$out" -o "$d/grk.$pnm" > "$d/grk.log" 2>&1 && [ -s "$d/grk.$pnm" ]; then
            if r=$("$T/cmp" "$d/src_0.pgx" "$d/grk.$pnm" "${cmpmode[@]}" 2>&1); then
                p=$(psnr_min "$r"); details="$details grk $p"
                [ -n "$ref" ] && differs "$p" "$ref" &&
                    grk_bad="grk $p dB vs opj $ref"
            else
                grk_bad="grk: $r"
            fi
        else
            grk_bad="grk_decompress failed: $(grep -m1 -i error "$d/grk.log")"
        fi
        # Grok alone against OpenJPEG and OpenJPH agreeing with each other: Grok's (it has
        # known HT defects, doc/open-work.md), said on the case's line; else ours, a failure
        if [ -n "$grk_bad" ]; then
            if [ -n "$ref" ] && [ "$ojph_ok" = 1 ] && [[ "$problems" != *ojph* ]]; then
                details="$details (Grok alone differs: $grk_bad)"
            else problems="$problems; $grk_bad"; fi
        fi
    fi
    if [ -n "$FF" ] && [ -n "$pnm" ]; then
        pf=gray; [ $comps = 3 ] && pf=rgb24
        [ $depth -gt 8 ] && { pf=gray16le; [ $comps = 3 ] && pf=rgb48le; }
        if "$FF" -nostdin -v error -y -i "$out" -f rawvideo -pix_fmt $pf "$d/ff.raw" > "$d/ff.log" 2>&1 && [ ! -s "$d/ff.log" ]; then
            if r=$("$T/cmp" "$d/src_0.pgx" "$d/ff.raw" --raw-dec ${w}x$h:$pf "${cmpmode[@]}" 2>&1); then
                p=$(psnr_min "$r"); details="$details ff $p"
                [ $multi = 1 ] && [ -n "$budget" ] && awk -v p="$p" -v f=$FLOOR 'BEGIN { exit !(p + 0 < f) }' &&
                    problems="$problems; ffmpeg PSNR $p dB below the floor $FLOOR"
                [ -n "$ref" ] && differs "$p" "$ref" &&
                    problems="$problems; ffmpeg $p dB vs opj $ref"
            else
                problems="$problems; ffmpeg: $r"
            fi
        else
            problems="$problems; ffmpeg failed: $(head -1 "$d/ff.log")"
        fi
    fi
    if [ -n "$problems" ]; then
        t_fail "$name" "${problems#; } (j2kc ${args[*]})"
    else
        t_ok "$name" "$size B,${details}"
    fi
done

# Near the full rate: the plane chooser must not give up whole bit-planes of some blocks to
# fill the budget (it chooses among exactly coded truncation points, ref/ht_plane.c; choosing
# on cleanup bytes alone did). A 256x192 8-bit RGB frame at 98 % and 95 % of its full-rate HT
# size: each within NEAR dB of the full-rate PSNR, and 98 % not below 95 %.
NEAR=4
if [ $HAVE_OPJ = 1 ]; then
    "$T/gen" -o "$W/n.ppm" --size 256x192 --depth 8 --comps 3 --seed "$SEED"
    if "$J2KC" -i "$W/n.ppm" -o "$W/nf.j2k" --ht -q && opj_decompress -i "$W/nf.j2k" -o "$W/nf.ppm" > /dev/null 2>&1; then
        full=$(stat -c %s "$W/nf.j2k")
        pf=$(psnr_min "$("$T/cmp" "$W/n.ppm" "$W/nf.ppm" 2>&1)")
        res= prev=
        for pct in 95 98; do
            b=$(( full * pct / 100 ))
            if "$J2KC" -i "$W/n.ppm" -o "$W/n$pct.j2k" --ht --bytes $b -q &&
               opj_decompress -i "$W/n$pct.j2k" -o "$W/n$pct.ppm" > /dev/null 2>&1; then
                p=$(psnr_min "$("$T/cmp" "$W/n.ppm" "$W/n$pct.ppm" 2>&1)")
                res="$res $pct%: $p"
                awk -v p="$p" -v f="$pf" -v n=$NEAR 'BEGIN { exit !(p + n < f) }' &&
                    res="$res (more than $NEAR dB below full rate)"
                [ -n "$prev" ] && awk -v p="$p" -v q="$prev" 'BEGIN { exit !(p + 0.1 < q) }' &&
                    res="$res (below 95 %)"
                prev=$p
            else
                res="$res $pct%: encode or decode failed (below)"
            fi
        done
        if [[ "$res" == *"("* ]]; then
            t_fail "ht/near-full" "full rate $full B $pf dB,$res"
        else
            t_ok "ht/near-full" "full rate $full B $pf dB,$res"
        fi
    else
        t_fail "ht/near-full" "full-rate encode or decode failed"
    fi
else
    echo "skip ht/near-full: opj_decompress missing (libopenjp2-tools)"
fi

# Cleanup passes only (ht_refine=0, for decoders that read no refinement pass: nvJPEG2000's):
# a frame of one code-block (one component, 0 levels, 64x64) at budgets from 20 to 80 % of its
# full-rate size, coded with and without the refinement passes; the packet header (B.10), read
# by the Python below, gives the block's zero bit-planes and pass count: without refinement
# always 1 pass, some of them above plane 0 (fewer zero bit-planes than at full rate: with HT
# the field is M_b - 1 - p for a cleanup at plane p, ref/ht_ref.h); with
# refinement 3 passes somewhere (rate control may keep a cleanup alone). Every cleanup-only
# stream within its budget, passing j2kc-check and decoding with every decoder present.
zp_of() {   # zp_of FILE: "ZERO_PLANES PASSES" of the first packet's first code-block
    python3 - "$1" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
i = 2                                   # after SOC: marker segments up to SOD
while (d[i] << 8 | d[i + 1]) != 0xFF93:
    i += 2 + (d[i + 2] << 8 | d[i + 3])
pos, cur, left, prev = i + 2, 0, 0, 0
def bit():                              # B.10.1: MSB first, 7 bits after an 0xFF
    global pos, cur, left, prev
    if left == 0:
        left = 7 if prev == 0xFF else 8
        cur = prev = d[pos]
        pos += 1
    left -= 1
    return (cur >> left) & 1
def bits(n):
    v = 0
    for _ in range(n):
        v = v << 1 | bit()
    return v
assert bit() == 1, "empty packet"
assert bit() == 1, "code-block not included"   # inclusion tag tree of one node, layer 0
z = 0
while bit() == 0:                       # zero bit-planes: a tag tree of one node
    z += 1
if bit() == 0:
    n = 1
elif bit() == 0:
    n = 2
else:                                   # Table B.4: 11xx (3-5), 1111 xxxxx (6-36), 1111 11111 x7
    v = bits(2)
    if v < 3:
        n = 3 + v
    else:
        v = bits(5)
        n = 6 + v if v < 31 else 37 + bits(7)
print(z, n)
PY
}
if t_have python3; then
    "$T/gen" -o "$W/co.pgm" --size 64x64 --depth 12 --comps 1 --seed "$SEED"
    co_args=(--levels 0 --cblk 64x64 --ht -q)
    if "$J2KC" -i "$W/co.pgm" -o "$W/cof.j2k" "${co_args[@]}" && zf=$(zp_of "$W/cof.j2k"); then
        full=$(stat -c %s "$W/cof.j2k") zf=${zf% *}
        res="full rate $full B, $zf zero planes;" bad= above=0 three=0
        for pct in 20 35 50 65 80; do
            b=$(( full * pct / 100 ))
            if ! "$J2KC" -i "$W/co.pgm" -o "$W/co3.j2k" "${co_args[@]}" --bytes $b ||
               ! "$J2KC" -i "$W/co.pgm" -o "$W/co1.j2k" "${co_args[@]}" --bytes $b --ht-refine 0; then
                bad="$bad; $pct %: encode failed"; continue
            fi
            zp3=$(zp_of "$W/co3.j2k" 2>&1) zp1=$(zp_of "$W/co1.j2k" 2>&1)
            res="$res $pct %: ($zp3) / ($zp1)"
            [ "${zp3#* }" = 3 ] && three=$(( three + 1 ))
            [ "${zp1#* }" = 1 ] || bad="$bad; $pct %: ht_refine=0 gave (zero planes, passes) ($zp1)"
            [ "${zp1% *}" -lt "$zf" ] 2> /dev/null && above=$(( above + 1 ))
            [ "$(stat -c %s "$W/co1.j2k")" -le $b ] || bad="$bad; $pct %: over the budget"
            "$CHECK" -q "$W/co1.j2k" > /dev/null 2>&1 || bad="$bad; $pct %: j2kc-check: $("$CHECK" "$W/co1.j2k" 2>&1 | head -1)"
            if [ $HAVE_OPJ = 1 ] && ! { opj_decompress -i "$W/co1.j2k" -o "$W/co1o.pgm" > /dev/null 2>&1 &&
                                       "$T/cmp" "$W/co.pgm" "$W/co1o.pgm" --psnr $FLOOR > /dev/null 2>&1; }; then
                bad="$bad; $pct %: opj decode failed or below $FLOOR dB"
            fi
            if [ $HAVE_OJPH = 1 ] && ! { ojph_expand -i "$W/co1.j2k" -o "$W/co1j.pgm" > /dev/null 2>&1 &&
                                        "$T/cmp" "$W/co.pgm" "$W/co1j.pgm" --psnr $FLOOR > /dev/null 2>&1; }; then
                bad="$bad; $pct %: ojph decode failed or below $FLOOR dB"
            fi
            # Grok reads cleanup-only blocks (not refinement segments: doc/open-work.md): the
            # samples OpenJPEG decodes, exactly
            if [ $HAVE_GRK = 1 ] && ! { grk_decompress -i "$W/co1.j2k" -o "$W/co1g.pgm" > /dev/null 2>&1 &&
                                       "$T/cmp" "$W/co.pgm" "$W/co1g.pgm" --psnr $FLOOR > /dev/null 2>&1 &&
                                       { [ $HAVE_OPJ = 0 ] || "$T/cmp" "$W/co1o.pgm" "$W/co1g.pgm" --exact > /dev/null 2>&1; }; }; then
                bad="$bad; $pct %: grk decode failed, below $FLOOR dB or not OpenJPEG's samples"
            fi
            if [ -n "$FF" ] && ! { "$FF" -nostdin -v error -y -i "$W/co1.j2k" -f rawvideo -pix_fmt gray16le "$W/co1f.raw" > /dev/null 2>&1 &&
                                   "$T/cmp" "$W/co.pgm" "$W/co1f.raw" --raw-dec 64x64:gray16le --psnr $FLOOR > /dev/null 2>&1; }; then
                bad="$bad; $pct %: ffmpeg decode failed or below $FLOOR dB"
            fi
        done
        [ $three -gt 0 ] || bad="$bad; no budget gave 3 passes with refinement"
        [ $above -gt 0 ] || bad="$bad; no cleanup-only set above plane 0"
        if [ -n "$bad" ]; then t_fail "ht/cleanup-only" "${bad#; } ($res)"; else t_ok "ht/cleanup-only" "$res (zero planes, passes) with / without refinement"; fi
    else
        t_fail "ht/cleanup-only" "full-rate encode failed or its packet header unreadable"
    fi
else
    echo "skip ht/cleanup-only: python3 missing (reads the packet header)"
fi

# j2kc-check's Part-15 rules (T.814 A.2, A.3): each mutation of a valid HT stream must be
# reported under its rule. CAP: bytes 8-9 are Ccap15 (after Pcap); SIZ bytes 4-5 are Rsiz.
"$T/gen" -o "$W/k.ppm" --size 40x24 --depth 12 --comps 3 --seed 2
if "$J2KC" -i "$W/k.ppm" -o "$W/k.j2k" --ht --bytes 2000 -q && "$CHECK" -q "$W/k.j2k"; then
    ccap=$(od -An -tx1 -j $(( $(od -An -tu2 --endian=big -j 4 -N 2 "$W/k.j2k") + 12 )) -N 2 "$W/k.j2k" | tr -d ' ')
    c=$(( 16#$ccap ))
    for m in "HT.Rsiz set16 FF51 4 0" "HT.Ccap15 set16 FF50 8 $(( c & ~0x20 ))" \
             "HT.Ccap15 set16 FF50 8 $(( c | 0x8000 ))" "HT.MAGB set16 FF50 8 $(( c & ~0x1f ))" \
             "HT.CAP delete FF50"; do
        set -- $m
        rule=$1; shift
        "$T/mutate" "$W/k.j2k" "$W/km.j2k" "$@" > /dev/null 2>&1 || { t_fail "ht/check $rule $*" "mutate failed"; continue; }
        out=$("$CHECK" "$W/km.j2k" 2>&1)
        if grep -q "$rule" <<< "$out"; then
            t_ok "ht/check $rule ($*)"
        else
            t_fail "ht/check $rule ($*)" "not reported: $(head -2 <<< "$out" | tr '\n' ' ')"
        fi
    done
else
    t_fail "ht/check" "the reference HT stream does not pass j2kc-check"
fi

# refusals: DCI with HT, HT with another code-block style, backend=cuda
"$T/gen" -o "$W/r.ppm" --size 64x48 --depth 12 --comps 3 --seed 1
for bad in "--profile dci2k --fps 24" "--bypass" "--quality 40"; do
    rm -f "$W/r.j2k"
    # shellcheck disable=SC2086
    "$J2KC" -i "$W/r.ppm" -o "$W/r.j2k" --set ht=1 $bad -q > "$W/r.log" 2>&1
    rc=$?
    if t_crashed $rc; then
        t_fail "ht/refuse $bad" "crashed ($rc)"
    elif [ $rc = 0 ] || [ -e "$W/r.j2k" ]; then
        t_fail "ht/refuse $bad" "accepted (rc $rc) or wrote a file"
    else
        t_ok "ht/refuse $bad" "$(head -1 "$W/r.log" | cut -c1-100)"
    fi
done
exit $(( ${T_FAILED:-0} > 0 ))
