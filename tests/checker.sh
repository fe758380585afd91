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

# expect_rule NAME FILE RULE [ARGS]: the checker must exit 1 and report RULE.
expect_rule() {
    local name=$1 file=$2 rule=$3; shift 3
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

# ---- a compliant base stream for the mutations -------------------------------------------
# First choice: the Kakadu stream; else Grok's -cinema2K output (compliant, guard bits 1);
# else our own encoder's dci2k output. The base must pass before it is mutated.
BASE=
if [ -f "$X4" ]; then
    BASE="$X4"
else
    "$T/gen" -o "$W/dci2k.ppm" --size 2048x1080 --depth 12 --seed 7
    if t_have grk_compress && grk_compress -i "$W/dci2k.ppm" -o "$W/grk2k.j2k" -w 24 >/dev/null 2>&1 &&
       "$CHECK" -q "$W/grk2k.j2k"; then
        BASE="$W/grk2k.j2k"
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
        op=${op//PAD/$((1302086 - $(stat -c %s "$BASE")))}   # total 1,302,086 B: OpenJPEG 2.5.0's -cinema2K size
        if ! "$T/mutate" "$BASE" "$W/m-$name.j2k" $op 2>"$W/m-$name.err"; then
            t_fail "checker/mutation-$name" "mutate failed: $(cat "$W/m-$name.err")"
            continue
        fi
        expect_rule "checker/mutation-$name" "$W/m-$name.j2k" "$rule" $args
    done <<'EOF'
guard-bits-2|set8 FF5C 4 0x42|DCI.guard_bits|
poc-in-2k|insert-poc|DCI.POC|
missing-tlm|delete FF55|DCI.TLM|
too-big-24fps|pad-tp 2 1000|DCI.frame_size|--fps 24
comp-too-big|pad-tp 0 400000|DCI.comp_size|--fps 24
opj-1302086-bytes|pad-tp 2 PAD|DCI.frame_size|--fps 24
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

# ---- generic syntax on hand-made streams ---------------------------------------------------
printf 'not a codestream' > "$W/garbage.j2k"
expect_rule checker/garbage "$W/garbage.j2k" SOC
: > "$W/empty.j2k"
expect_rule checker/empty "$W/empty.j2k" SOC
out=$("$CHECK" "$W/does-not-exist.j2k" 2>&1); rc=$?
if [ $rc = 2 ]; then t_ok checker/missing-file; else t_fail checker/missing-file "exit $rc, 2 expected"; fi

[ "$T_FAILED" = 0 ]
