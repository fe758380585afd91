#!/bin/bash
# Tests of j2kc-check itself: third-party DCI codestreams must pass (when ../shared/corpus
# exists), and codestreams that break one rule each must fail naming that rule: header
# mutations of a compliant stream (tests/gen/mutate.c) and the OpenJPEG pitfalls listed in
# profiles.md.
#   tests/checker.sh BUILD_DIR
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
CHECK="$BUILD/bin/j2kc-check"
J2KC="$BUILD/bin/j2kc"
W="$BUILD/test-work/checker"
T="$BUILD/testtools"
rm -rf "$W" && mkdir -p "$W"
T_FAILED=0

if [ ! -x "$CHECK" ]; then
    t_fail checker/build "$CHECK not built"
    exit 1
fi
t_build_helpers "$BUILD" || { t_fail checker/helpers "cannot build tests/gen helpers"; exit 1; }

# expect_pass NAME FILE [ARGS]: the checker must accept the file.
expect_pass() {
    local name=$1 file=$2; shift 2
    local out rc
    out=$("$CHECK" "$@" "$file" 2>&1); rc=$?
    if [ $rc = 0 ]; then t_ok "$name"; else t_fail "$name" "rejected (exit $rc): $(echo "$out" | head -3 | tr '\n' ' ')"; fi
}

# expect_rule NAME FILE RULE [ARGS]: the checker must exit 1 and report RULE (RULE empty:
# the file must pass; "!RULE": RULE must not be reported).
expect_rule() {
    local name=$1 file=$2 rule=$3; shift 3
    [ -z "$rule" ] && { expect_pass "$name" "$file" "$@"; return; }
    if [ "${rule#!}" != "$rule" ]; then     # "!RULE": RULE must not be reported
        local out2 rc2
        out2=$("$CHECK" "$@" "$file" 2>&1); rc2=$?
        if t_crashed $rc2 || [ $rc2 = 2 ]; then t_fail "$name" "checker exit $rc2"
        elif echo "$out2" | grep -q ": ${rule#!}: "; then t_fail "$name" "${rule#!} reported: $(echo "$out2" | grep -m1 ": ${rule#!}: ")"
        else t_ok "$name" "no ${rule#!}"; fi
        return
    fi
    local out rc
    out=$("$CHECK" "$@" "$file" 2>&1); rc=$?
    if t_crashed $rc; then
        t_fail "$name" "checker crashed (exit $rc)"
    elif [ $rc != 1 ]; then
        t_fail "$name" "exit $rc, 1 expected ($rule); output: $(echo "$out" | head -2 | tr '\n' ' ')"
    elif ! echo "$out" | grep -q ": $rule: "; then
        t_fail "$name" "rule $rule not reported; got: $(echo "$out" | head -3 | tr '\n' ' ')"
    else
        t_ok "$name" "$(echo "$out" | grep -m1 ": $rule: " | sed 's/^[^:]*: //')"
    fi
}

# ---- third-party DCI 2K codestreams ----------------------------------------------------
CORPUS=$(t_corpus)
X4="$CORPUS/X_4_2K_24_185_CBR_WB_000.j2k"
X5="$CORPUS/X_5_2K_24_235_CBR_STEM24_000.j2k"
if [ -f "$X4" ] && [ -f "$X5" ]; then
    expect_pass checker/corpus-X_4-kakadu "$X4" --fps 24
    expect_pass checker/corpus-X_5-dolby "$X5" --fps 24
    expect_pass checker/corpus-X_4-profile-dci2k "$X4" --profile dci2k
    expect_rule checker/corpus-X_4-at-48fps "$X4" DCI.frame_size --fps 48
    expect_rule checker/corpus-X_4-as-dci4k "$X4" profile.Rsiz --profile dci4k
else
    t_skip checker/corpus "no ../shared/corpus next to the repository ($CORPUS)"
fi

# ---- small third-party streams kept in tests/data (no tool needed) ----------------------------
expect_pass checker/data-grok-dci2k "$TESTS_DIR/data/grk-dci2k-128x64.j2k" --fps 24
expect_pass checker/data-grok-imf2k "$TESTS_DIR/data/grk-imf2k-128x64.j2k" --fps 24
expect_pass checker/data-grok-broadcast "$TESTS_DIR/data/grk-bc-128x64.j2k" --fps 24

# ---- a compliant base stream for the mutations -------------------------------------------
# First choice: the Kakadu stream; else Grok's -cinema2K output (compliant, guard bits 1);
# else the small Grok-made stream of tests/data; else our own encoder's dci2k output. The
# base must pass before it is mutated.
BASE=
if [ -f "$X4" ]; then
    BASE="$X4"
else
    "$T/gen" -o "$W/dci2k.ppm" --size 2048x1080 --depth 12 --seed 7
    if t_have grk_compress && grk_compress -i "$W/dci2k.ppm" -o "$W/grk2k.j2k" -w 24 >/dev/null 2>&1 &&
       "$CHECK" -q "$W/grk2k.j2k"; then
        BASE="$W/grk2k.j2k"
    elif "$CHECK" -q "$TESTS_DIR/data/grk-dci2k-128x64.j2k"; then
        BASE="$TESTS_DIR/data/grk-dci2k-128x64.j2k"
    elif [ -x "$J2KC" ] && "$J2KC" -q -i "$W/dci2k.ppm" -o "$W/ours2k.j2c" --profile dci2k --fps 24 2>/dev/null &&
         "$CHECK" -q "$W/ours2k.j2c"; then
        BASE="$W/ours2k.j2c"
    fi
fi
if [ -z "$BASE" ]; then
    t_fail checker/mutations "no compliant DCI 2K base stream (no corpus, grk_compress missing or failing, j2kc failing)"
else
    echo "# mutation base: $BASE"
    # name | mutate operation | rule expected | checker arguments
    while IFS='|' read -r name op rule args; do
        [ -n "$name" ] || continue
        if ! "$T/mutate" "$BASE" "$W/m-$name.j2k" $op 2>"$W/m-$name.err"; then
            t_fail "checker/mutation-$name" "mutate failed: $(cat "$W/m-$name.err")"
            continue
        fi
        expect_rule "checker/mutation-$name" "$W/m-$name.j2k" "$rule" $args
    done <<'EOF'
guard-bits-2|set8 FF5C 4 0x42|DCI.guard_bits|
poc-in-2k|insert-poc|DCI.POC|
missing-tlm|delete FF55|DCI.TLM|
frame-at-limit-24fps|pad-total 1302083|!DCI.frame_size|--fps 24
too-big-24fps|pad-total 1302084|DCI.frame_size|--fps 24
comp-too-big|pad-tp-to 0 1041667|DCI.comp_size|
comp-too-big-48fps|pad-tp-to 1 520834|DCI.comp_size|--fps 48
opj-1302086-bytes|pad-total 1302086|DCI.frame_size|--fps 24
precinct-128-at-r1|set8 FF52 15 0x77|precincts|
no-precincts|set8 FF52 4 0|COD.length|
cblk-64x64|set8 FF52 10 4|DCI.cblk|
cblk-64x64-b|set8 FF52 11 4|DCI.cblk|
layers-2|set16 FF52 6 2|DCI.layers|
style-bypass|set8 FF52 12 0x01|DCI.cblk_style|
style-termall|set8 FF52 12 0x04|DCI.cblk_style|
two-tile-parts|merge-tp 1|DCI.tile_parts|
rsiz-4k-levels|set16 FF51 4 4|DCI.levels|
rsiz-mismatch|set16 FF51 4 4|profile.Rsiz|--profile dci2k
rsiz-none|set16 FF51 4 0|profile.Rsiz|--profile dci2k
order-lrcp|set8 FF52 5 0|DCI.order|
mct-off|set8 FF52 8 0|DCI.mct|
reversible|set8 FF52 13 1|DCI.transform|
depth-10|set8 FF51 40 9|DCI.depth|
subsampled|set8 FF51 41 2|DCI.subsampling|
too-wide|set32 FF51 6 2049|DCI.size|
qcd-derived|set8 FF5C 4 0x21|DCI.QCD|
psot-off-by-one|psot-add 0 1|SOT.expected|
tlm-wrong|tlm-add 1 1|TLM.Ptlm|
no-eoc|truncate 2|EOC.missing|
lsiz-wrong|set16 FF51 2 40|SIZ.length|
EOF
fi

# ---- OpenJPEG / Grok pitfalls of profiles.md -----------------------------------------------
if t_have opj_compress; then
    [ -f "$W/dci2k.ppm" ] || "$T/gen" -o "$W/dci2k.ppm" --size 2048x1080 --depth 12 --seed 7
    if opj_compress -i "$W/dci2k.ppm" -o "$W/opj2k.j2k" -cinema2K 24 >/dev/null 2>&1; then
        expect_rule checker/opj-cinema2K-guard-bits "$W/opj2k.j2k" DCI.guard_bits --fps 24
    else
        t_fail checker/opj-cinema2K "opj_compress -cinema2K 24 failed"
    fi
    "$T/gen" -o "$W/imf2k.ppm" --size 1920x1080 --depth 10 --seed 9
    if opj_compress -i "$W/imf2k.ppm" -o "$W/opjimf.j2k" -IMF 2K,sublevel=1,framerate=24 >/dev/null 2>&1; then
        expect_rule checker/opj-IMF-2K-sublevel-rate "$W/opjimf.j2k" level.sublevel_rate --fps 24
    else
        t_fail checker/opj-IMF "opj_compress -IMF 2K failed"
    fi
    if [ "${J2KC_TEST_QUICK:-0}" != 1 ]; then
        "$T/gen" -o "$W/dci4k.ppm" --size 4096x2160 --depth 12 --seed 11
        if opj_compress -i "$W/dci4k.ppm" -o "$W/opj4k.j2k" -cinema4K >/dev/null 2>&1; then
            expect_rule checker/opj-cinema4K-5-levels "$W/opj4k.j2k" DCI.levels --fps 24
        else
            t_fail checker/opj-cinema4K "opj_compress -cinema4K failed"
        fi
        rm -f "$W/dci4k.ppm"
    else
        t_skip checker/opj-cinema4K "J2KC_TEST_QUICK=1"
    fi
else
    t_fail checker/opj-pitfalls "opj_compress missing (Debian libopenjp2-tools): cannot test the OpenJPEG pitfalls"
fi

# ---- IMF / broadcast / DCI 4K: Grok-made streams and their mutations ------------------------------
# Fresh 1920x1080 streams from grk_compress when installed, else the small ones of tests/data
# (then the rate rows, marked "big", are skipped: a 128x64 frame is far below every limit).
IMF_BASE= IMFR_BASE= BC_BASE= SMALL=0
if t_have grk_compress; then
    "$T/gen" -o "$W/imf2k.ppm" --size 1920x1080 --depth 10 --seed 9
    grk_compress -i "$W/imf2k.ppm" -o "$W/grk-imf2k.j2k" -z 2K,mainlevel=3,sublevel=1,framerate=24 -r 30 >/dev/null 2>&1 &&
        IMF_BASE="$W/grk-imf2k.j2k"
    grk_compress -i "$W/imf2k.ppm" -o "$W/grk-imf2kr.j2k" -z 2K_R,mainlevel=6,sublevel=4,framerate=24 >/dev/null 2>&1 &&
        IMFR_BASE="$W/grk-imf2kr.j2k"
    grk_compress -i "$W/imf2k.ppm" -o "$W/grk-bc.j2k" -U SINGLE,mainlevel=3,framerate=24 -r 30 >/dev/null 2>&1 &&
        BC_BASE="$W/grk-bc.j2k"
    [ -n "$IMF_BASE" ] && [ -n "$IMFR_BASE" ] && [ -n "$BC_BASE" ] || t_fail checker/grok-streams "grk_compress failed on IMF/broadcast"
else
    echo "# grk_compress missing: IMF/broadcast mutations on the small streams of tests/data"
    IMF_BASE="$TESTS_DIR/data/grk-imf2k-128x64.j2k" BC_BASE="$TESTS_DIR/data/grk-bc-128x64.j2k" SMALL=1
fi
if [ -n "$IMF_BASE" ]; then
    expect_pass checker/grok-imf2k "$IMF_BASE" --fps 24
    while IFS='|' read -r name op rule args big; do
        [ -n "$name" ] || continue
        if [ "$big" = big ] && [ $SMALL = 1 ]; then t_skip "checker/imf-mutation-$name" "needs the 1920x1080 Grok stream"; continue; fi
        if ! "$T/mutate" "$IMF_BASE" "$W/mi-$name.j2k" $op 2>"$W/mi-$name.err"; then
            t_fail "checker/imf-mutation-$name" "mutate failed: $(cat "$W/mi-$name.err")"
            continue
        fi
        expect_rule "checker/imf-mutation-$name" "$W/mi-$name.j2k" "$rule" $args
    done <<'EOF'
sublevel-above-mainlevel|set16 FF51 4 0x0433|IMF.sublevel||
mainlevel-12|set16 FF51 4 0x041C|IMF.mainlevel||
mainlevel-1-rate|set16 FF51 4 0x0411|level.mainlevel_rate|--fps 24|big
sublevel-rate-60fps|set16 FF51 4 0x0413|level.sublevel_rate|--fps 60|big
poc|insert-poc|IMF.POC||
tiles-1024|set32 FF51 22 1024|IMF.tiles||big
tiles-64|set32 FF51 22 64|IMF.tiles||
reversible|set8 FF52 13 1|IMF.transform||
levels-6|set8 FF52 9 6|IMF.levels||
cblk-64|set8 FF52 10 4|IMF.cblk||
style|set8 FF52 12 0x08|IMF.cblk_style||
layers-2|set16 FF52 6 2|IMF.layers||
order-rpcl|set8 FF52 5 2|IMF.order||
chroma-vertical|set8 FF51 45 2|IMF.subsampling||
signed|set8 FF51 40 0x89|IMF.depth||
origin|set32 FF51 14 1|IMF.origin||
as-imf4k-fine|set16 FF51 4 0x0513|||
as-dci2k|set16 FF51 4 0x0003|DCI.depth||
EOF
fi
if [ -n "$IMFR_BASE" ]; then
    expect_pass checker/grok-imf2k_r-ml6-sl4 "$IMFR_BASE" --fps 24
    "$T/mutate" "$IMFR_BASE" "$W/mi-r97.j2k" set8 FF52 13 0 2>/dev/null
    expect_rule checker/imf_r-mutation-irreversible "$W/mi-r97.j2k" IMF.transform
    "$T/mutate" "$IMFR_BASE" "$W/mi-rsl1.j2k" set16 FF51 4 0x0716 2>/dev/null
    expect_rule checker/imf_r-mutation-sublevel-1-rate "$W/mi-rsl1.j2k" level.sublevel_rate --fps 24
fi
if [ -n "$BC_BASE" ]; then
    expect_pass checker/grok-broadcast-single "$BC_BASE" --fps 24
    "$T/mutate" "$BC_BASE" "$W/mb-cblk.j2k" set8 FF52 11 3 2>/dev/null
    expect_rule checker/broadcast-mutation-cblk-64x32 "$W/mb-cblk.j2k" BC.cblk
    "$T/mutate" "$BC_BASE" "$W/mb-levels.j2k" set8 FF52 9 0 2>/dev/null
    expect_rule checker/broadcast-mutation-levels-0 "$W/mb-levels.j2k" BC.levels
    "$T/mutate" "$BC_BASE" "$W/mb-multi-r.j2k" set16 FF51 4 0x0303 2>/dev/null
    expect_rule checker/broadcast-mutation-multi_r-with-97 "$W/mb-multi-r.j2k" BC.transform
    "$T/mutate" "$BC_BASE" "$W/mb-12bit.j2k" set8 FF51 40 12 2>/dev/null
    expect_rule checker/broadcast-mutation-13-bit "$W/mb-12bit.j2k" BC.depth
fi
if [ "${J2KC_TEST_QUICK:-0}" = 1 ]; then
    t_skip checker/grok-cinema4K "J2KC_TEST_QUICK=1"
elif ! t_have grk_compress; then
    t_fail checker/grok-cinema4K "grk_compress missing (Debian grokj2k-tools)"
else
    "$T/gen" -o "$W/dci4k.ppm" --size 4096x2160 --depth 12 --seed 11
    if grk_compress -i "$W/dci4k.ppm" -o "$W/grk4k.j2k" -x 24 -n 7 >/dev/null 2>&1; then
        expect_pass checker/grok-cinema4K-n7 "$W/grk4k.j2k" --fps 24
        "$T/mutate" "$W/grk4k.j2k" "$W/m4k-poc.j2k" set8 FF5F 9 5 2>/dev/null
        expect_rule checker/dci4k-mutation-poc-wrong "$W/m4k-poc.j2k" DCI.POC
        expect_rule checker/dci4k-at-48fps "$W/grk4k.j2k" DCI.fps --fps 48
    else
        t_fail checker/grok-cinema4K "grk_compress -cinema4K failed"
    fi
    rm -f "$W/dci4k.ppm"
fi

# ---- packet-level consistency (PLT sums, SOP numbering) on our own encoder's output ------------
if [ -x "$J2KC" ] && "$T/gen" -o "$W/plt.ppm" --size 128x96 --depth 8 &&
   "$J2KC" -q -i "$W/plt.ppm" -o "$W/plt.j2c" --lossless --sop --plt --layers 3 --order rpcl --prec 32x32 2>/dev/null; then
    expect_pass checker/own-sop-plt "$W/plt.j2c"
    "$T/mutate" "$W/plt.j2c" "$W/plt-bad.j2c" xor FF58 0 5 1 && expect_rule checker/plt-sum-wrong "$W/plt-bad.j2c" PLT.sum
    "$T/mutate" "$W/plt.j2c" "$W/sop-bad.j2c" xor FF91 3 5 2 && expect_rule checker/sop-nsop-wrong "$W/sop-bad.j2c" SOP.Nsop
else
    t_fail checker/own-sop-plt "j2kc could not encode the SOP/PLT base stream"
fi

# ---- IMF App 2E HTJ2K (imf_ht = APP2.HT.IRV, imf_ht_r = APP2.HT.REV): our own encoder's ----
# output passes with --profile; each mutation breaks one ST 2067-21:2023 Annex I rule
if [ -x "$J2KC" ] && "$T/gen" -o "$W/ht.ppm" --size 256x192 --depth 10 --seed 29 &&
   "$J2KC" -q -i "$W/ht.ppm" -o "$W/ht-irv.j2c" --profile imf_ht --bytes 20000 2>/dev/null &&
   "$J2KC" -q -i "$W/ht.ppm" -o "$W/ht-rev.j2c" --profile imf_ht_r 2>/dev/null &&
   "$J2KC" -q -i "$W/ht.ppm" -o "$W/ht-plain.j2c" --ht --bytes 20000 2>/dev/null &&
   "$J2KC" -q -i "$W/ht.ppm" -o "$W/imf2k.j2c" --profile imf2k --fps 24 2>/dev/null; then
    expect_pass checker/imf_ht-own "$W/ht-irv.j2c" --profile imf_ht
    expect_pass checker/imf_ht_r-own "$W/ht-rev.j2c" --profile imf_ht_r
    expect_pass checker/imf_ht-own-unnamed "$W/ht-irv.j2c"
    # at full rate the 9/7 steps would reach B = 15 here (10-bit): the encoder keeps the
    # bound of 11 (IMFHT.MAGB is among the rules checked); 16-bit: 18 with the ICT
    "$T/gen" -o "$W/ht16.ppm" --size 96x64 --depth 16 --seed 30
    if "$J2KC" -q -i "$W/ht.ppm" -o "$W/ht-irv-full.j2c" --profile imf_ht 2>/dev/null &&
       "$J2KC" -q -i "$W/ht16.ppm" -o "$W/ht-irv-full16.j2c" --profile imf_ht 2>/dev/null; then
        expect_pass checker/imf_ht-own-full-rate "$W/ht-irv-full.j2c" --profile imf_ht
        expect_pass checker/imf_ht-own-full-rate-16bit "$W/ht-irv-full16.j2c" --profile imf_ht
    else
        t_fail checker/imf_ht-own-full-rate "j2kc could not encode imf_ht at full rate"
    fi
    expect_rule checker/imf_ht_r-given-irv "$W/ht-irv.j2c" IMFHT.transform --profile imf_ht_r
    expect_rule checker/imf_ht-given-rev "$W/ht-rev.j2c" IMFHT.transform --profile imf_ht
    expect_rule checker/imf_ht-plain-ht "$W/ht-plain.j2c" IMFHT.order --profile imf_ht
    expect_rule checker/imf_ht-plain-ht-tlm "$W/ht-plain.j2c" IMFHT.TLM --profile imf_ht
    expect_rule checker/imf_ht-part1-imf2k "$W/imf2k.j2c" IMFHT.Rsiz --profile imf_ht
    # B of the 10-bit 5/3 stream with the RCT at 5 levels is the bound, 14 (MAGB 6): the
    # mutation to 15 below must fail
    b=$(python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); print(d[d.find(b"\xff\x50") + 9] & 31)' "$W/ht-rev.j2c" 2>&1)
    if [ "$b" = 6 ]; then t_ok checker/imf_ht_r-own-magb "MAGB 6, B = 14"
    else t_fail checker/imf_ht_r-own-magb "MAGB $b, 6 (B = 14) expected"; fi
    while IFS='|' read -r name base op rule prof; do
        [ -n "$name" ] || continue
        if ! "$T/mutate" "$W/$base.j2c" "$W/mh-$name.j2c" $op 2>"$W/mh-$name.err"; then
            t_fail "checker/imf_ht-mutation-$name" "mutate failed: $(cat "$W/mh-$name.err")"
            continue
        fi
        expect_rule "checker/imf_ht-mutation-$name" "$W/mh-$name.j2c" "$rule" --profile $prof
    done <<'EOF'
rsiz-no-ht|ht-irv|set16 FF51 4 0x0000|IMFHT.Rsiz|imf_ht
pcap-extra-bit|ht-irv|set32 FF50 4 0x00020002|IMFHT.CAP|imf_ht
ccap15-bit12|ht-irv|set16 FF50 8 0x1021|IMFHT.Ccap15|imf_ht
magb-above-bound|ht-irv|set16 FF50 8 0x0024|IMFHT.MAGB|imf_ht
magb-at-bound|ht-irv|set16 FF50 8 0x0023|!IMFHT.MAGB|imf_ht
magb-above-31|ht-irv|set16 FF50 8 0x0038|IMFHT.MAGB|imf_ht
rev-magb-15|ht-rev|set16 FF50 8 0x0007|IMFHT.MAGB|imf_ht_r
rev-htirv|ht-rev|set16 FF50 8 0x0026|IMFHT.Ccap15|imf_ht_r
origin|ht-irv|set32 FF51 14 1|IMFHT.origin|imf_ht
tiles-64|ht-irv|set32 FF51 22 64|IMFHT.tiles|imf_ht
chroma-vertical|ht-irv|set8 FF51 45 2|IMFHT.subsampling|imf_ht
chroma-one-422|ht-irv|set8 FF51 44 2|IMFHT.subsampling|imf_ht
depth-differs|ht-rev|set8 FF51 43 11|IMFHT.depth|imf_ht_r
signed|ht-irv|set8 FF51 40 0x89|IMFHT.depth|imf_ht
style-0x41|ht-irv|set8 FF52 12 0x41|IMFHT.cblk_style|imf_ht
style-0x48|ht-rev|set8 FF52 12 0x48|IMFHT.cblk_style|imf_ht_r
cblk-16-wide|ht-irv|set8 FF52 10 2|IMFHT.cblk|imf_ht
cblk-128-high|ht-irv|set8 FF52 11 5|IMFHT.cblk|imf_ht
cblk-128x64-wide-ok|ht-irv|set8 FF52 10 5|!IMFHT.cblk|imf_ht
levels-0|ht-irv|set8 FF52 9 0|IMFHT.levels|imf_ht
levels-6-below-2k|ht-rev|set8 FF52 9 6|IMFHT.levels|imf_ht_r
layers-2|ht-irv|set16 FF52 6 2|IMFHT.layers|imf_ht
order-cprl|ht-irv|set8 FF52 5 4|IMFHT.order|imf_ht
order-lrcp|ht-rev|set8 FF52 5 0|IMFHT.order|imf_ht_r
precinct-128-at-r1|ht-irv|set8 FF52 15 0x77|precincts|imf_ht
transform-53|ht-irv|set8 FF52 13 1|IMFHT.transform|imf_ht
transform-97|ht-rev|set8 FF52 13 0|IMFHT.transform|imf_ht_r
poc|ht-irv|insert-poc|IMFHT.POC|imf_ht
no-tlm|ht-irv|delete FF55|IMFHT.TLM|imf_ht
tile-parts-merged|ht-rev|merge-tp 1|IMFHT.tile_parts|imf_ht_r
EOF
else
    t_fail checker/imf_ht-own "j2kc could not encode the IMF HT base streams"
fi

# ---- generic syntax on hand-made streams ---------------------------------------------------
printf 'not a codestream' > "$W/garbage.j2k"
expect_rule checker/garbage "$W/garbage.j2k" SOC
: > "$W/empty.j2k"
expect_rule checker/empty "$W/empty.j2k" SOC
out=$("$CHECK" "$W/does-not-exist.j2k" 2>&1); rc=$?
if [ $rc = 2 ]; then t_ok checker/missing-file; else t_fail checker/missing-file "exit $rc, 2 expected"; fi

[ "$T_FAILED" = 0 ]
