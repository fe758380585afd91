#!/bin/bash
# IMF App 2E's HTJ2K profiles (imf_ht = APP2.HT.IRV, imf_ht_r = APP2.HT.REV, SMPTE ST
# 2067-21:2023 Annex I): random configurations (seeded; the seed is printed,
# J2KC_TEST_SEED=N replays one) of size, 1, 3 or 4 components (4:4:4 and 4:2:2), depth 8-16,
# code-block sizes the profiles allow (xcb 5..7, ycb 5..6, and Part 1's xcb + ycb <= 12) and
# levels up to the profile's cap. Each codestream must
# pass j2kc-check --profile imf_ht[_r], keep the profile's header values (Rsiz 0x4000, RPCL,
# one tile-part per resolution: read back with the checker's -v summary), stay within its
# byte budget, and decode with OpenJPEG and OpenJPH (3 components; 4:2:2 with OpenJPH only,
# to planar YUV) when present: imf_ht_r
# exactly (lossless), imf_ht above a PSNR floor; Grok 10.0.5 (Debian 12) too for the lossless
# streams (it stops with "Error in HT block coder" on blocks with refinement segments, which
# budget-truncated sets have: its sources hand OpenJPH's block decoder the total length of a
# block's segments as the cleanup's, doc/open-work.md). A missing decoder is a skip line
# with the reason.
#   tests/ht-profiles.sh [BUILD_DIR]
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
J2KC=$BUILD/bin/j2kc
CHECK=$BUILD/bin/j2kc-check
T=$BUILD/testtools
[ -x "$J2KC" ] && [ -x "$CHECK" ] || { echo "skip ht-profiles: $J2KC or $CHECK not built"; exit 77; }
t_build_helpers "$BUILD" && [ -x "$T/cmp" ] && [ -x "$T/gen" ] ||
    { echo "skip ht-profiles: cannot build tests/gen helpers (cmp, gen)"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
T_FAILED=0

# Lossy floor (dB, worst component) under a budget of 1 to 4 bits per sample; a broken
# stream decodes to noise (below 10 dB) or not at all. As tests/ht.sh's FLOOR.
FLOOR=12
HAVE_OPJ=0 HAVE_OJPH=0 HAVE_GRK=0
t_have opj_decompress && HAVE_OPJ=1
t_have ojph_expand && HAVE_OJPH=1
t_have grk_decompress && HAVE_GRK=1
[ $HAVE_OPJ = 1 ] || echo "skip ht-profiles/opj: opj_decompress missing (libopenjp2-tools)"
[ $HAVE_OJPH = 1 ] || echo "skip ht-profiles/ojph: ojph_expand missing (openjph-tools)"
[ $HAVE_GRK = 1 ] || echo "skip ht-profiles/grk: grk_decompress missing (grokj2k-tools)"

SEED=${J2KC_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "# ht-profiles.sh: seed $SEED (J2KC_TEST_SEED=$SEED replays it)"
RANDOM=$SEED
pick() { local -n out=$1; shift; local a=("$@"); out=${a[RANDOM % ${#a[@]}]}; }
psnr_min() { sed -n 's/.* min \([^ ]*\).*/\1/p' <<< "$1"; }

# decode DECODER STREAM OUT_BASE: writes OUT_BASE_0.pgx.. (PGX, one file per component)
decode() {
    case $1 in
        opj)  opj_decompress -i "$2" -o "$3.pgx" ;;
        grk)  grk_decompress -i "$2" -o "$3.pgx" ;;
    esac > "$3.log" 2>&1 && [ -f "$3_0.pgx" ]
}

N=${J2KC_HT_PROFILE_CASES:-12}
for i in $(seq 1 "$N"); do
    pick prof imf_ht imf_ht_r
    w=$(( 40 + RANDOM % 300 )) h=$(( 32 + RANDOM % 200 ))
    pick layout 1 3 3 4 422
    pick depth 8 10 12 16 10 12
    pick cb 64x64 32x32 128x32 64x32 32x64
    gen_args=(--size ${w}x$h --depth $depth --seed $(( SEED + i )))
    args=(--profile $prof --cblk $cb -q)
    # the levels: unset (the profile's cap), or 1..5 (every test image is under 2K)
    [ $(( RANDOM % 2 )) = 0 ] && args+=(--levels $(( 1 + RANDOM % 5 )))
    d=$W/$i
    mkdir -p "$d"
    comps=$layout
    if [ "$layout" = 422 ]; then
        # planar 4:2:2 from the generator's three full planes: every other chroma column
        comps=3 w=$(( w & ~1 ))
        gen_args=(--size ${w}x$h --depth $depth --seed $(( SEED + i )))
    fi
    "$T/gen" -o "$d/src_0.pgx" "${gen_args[@]}" --comps $comps || { t_fail "ht-profiles/$i" "gen failed"; continue; }
    in=(-i "$d/src_0.pgx")
    src=("$d/src_0.pgx")
    if [ "$layout" = 422 ]; then
        if ! python3 - "$d" $w $h $depth <<'PY'
import sys, struct
d, w, h, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
out = open(d + "/src.yuv", "wb")
for c in range(3):
    data = open("%s/src_%d.pgx" % (d, c), "rb").read()
    body = data[data.index(b"\n") + 1:]
    bps = 1 if depth <= 8 else 2
    for y in range(h):
        row = body[y * w * bps:(y + 1) * w * bps]
        vals = [row[x] if bps == 1 else (row[2 * x] << 8 | row[2 * x + 1]) for x in range(w)]
        if c:
            vals = vals[::2]
        if depth <= 8:
            out.write(bytes(vals))
        else:
            out.write(b"".join(struct.pack("<H", v) for v in vals))
PY
        then t_fail "ht-profiles/$i" "4:2:2 conversion failed"; continue; fi
        # the raw formats carry 8, 10, 12 or 16 bits
        case $depth in 8) fmt=yuv422p ;; 10) fmt=yuv422p10le ;; 12) fmt=yuv422p12le ;; *) fmt=yuv422p16le ;; esac
        in=(-i "$d/src.yuv" --raw ${w}x$h:$fmt)
        src=("$d/src.yuv" --raw-src ${w}x$h:$fmt)
    fi
    samples=$(( w * h * comps ))
    budget=
    if [ $prof = imf_ht ] || [ $(( RANDOM % 3 )) = 0 ]; then
        budget=$(( samples * (1 + RANDOM % 4) / 8 + 600 ))
        args+=(--bytes $budget)
    fi
    name="ht-profiles/$i $prof ${w}x$h $layout d$depth cb$cb${budget:+ $budget B}"
    out=$d/a.j2k
    if ! "$J2KC" "${in[@]}" -o "$out" "${args[@]}" > "$d/enc.log" 2>&1; then
        t_fail "$name" "j2kc ${args[*]}: $(head -2 "$d/enc.log" | tr '\n' ' ')"; continue
    fi
    problems= details=
    size=$(stat -c %s "$out")
    [ -n "$budget" ] && [ "$size" -gt "$budget" ] && problems="$problems; $size bytes over the budget $budget"
    chk=$("$CHECK" -v --profile $prof "$out" 2>&1) || problems="$problems; j2kc-check: $(echo "$chk" | grep -v '^[^:]*:   tile-part' | head -3 | tr '\n' ' ')"
    sum=$(echo "$chk" | grep -m1 'Rsiz 0x')
    nl=$(sed -n 's/.* NL \([0-9]*\),.*/\1/p' <<< "$sum")
    tp=$(sed -n 's/.* \([0-9]*\) tile-parts,.*/\1/p' <<< "$sum")
    [[ "$sum" == *"Rsiz 0x4000"* ]] || problems="$problems; Rsiz not 0x4000: $sum"
    [[ "$sum" == *"RPCL 1 layers"* ]] || problems="$problems; not RPCL with 1 layer: $sum"
    [ -n "$nl" ] && [ "$tp" = $(( nl + 1 )) ] || problems="$problems; $tp tile-parts for $nl levels"
    # the decoders' PGX planes keep 4:2:2 chroma at half width, as the raw source has them
    cmpmode=(--exact)
    [ $prof = imf_ht_r ] && [ -z "$budget" ] || cmpmode=()
    for dec in opj grk; do
        have=HAVE_${dec^^}
        [ "${!have}" = 1 ] || continue
        [ $dec = grk ] && [ ${#cmpmode[@]} = 0 ] && continue
        # OpenJPEG and Grok turn 4:2:2 three-component output into upsampled RGB (their sYCC
        # guess): 4:2:2 goes to OpenJPH's planar YUV output below instead
        [ "$layout" = 422 ] && continue
        if ! decode $dec "$out" "$d/$dec"; then
            problems="$problems; $dec failed: $(grep -m1 -i error "$d/$dec.log")"; continue
        fi
        if r=$("$T/cmp" "${src[@]}" "$d/${dec}_0.pgx" "${cmpmode[@]}" 2>&1); then
            worst=$(psnr_min "$r")
        else
            problems="$problems; $dec: $r"; continue
        fi
        details="$details $dec $worst"
        [ ${#cmpmode[@]} = 0 ] && [ "$worst" != inf ] && awk -v p="$worst" -v f=$FLOOR 'BEGIN { exit !(p + 0 < f) }' &&
            problems="$problems; $dec PSNR $worst dB below the floor $FLOOR"
    done
    if [ $HAVE_OJPH = 1 ] && { [ "$layout" = 3 ] || [ "$layout" = 422 ]; }; then
        dec=(); o=$d/ojph.ppm
        [ "$layout" = 422 ] && o=$d/ojph.yuv && dec=(--raw-dec ${w}x$h:$fmt)
        if ojph_expand -i "$out" -o "$o" > "$d/ojph.log" 2>&1 && [ -s "$o" ] &&
           ! grep -qi error "$d/ojph.log"; then
            if r=$("$T/cmp" "${src[@]}" "$o" "${dec[@]}" "${cmpmode[@]}" 2>&1); then
                p=$(psnr_min "$r")
                details="$details ojph $p"
                [ ${#cmpmode[@]} = 0 ] && [ "$p" != inf ] && awk -v p="$p" -v f=$FLOOR 'BEGIN { exit !(p + 0 < f) }' &&
                    problems="$problems; ojph PSNR $p dB below the floor $FLOOR"
            else
                problems="$problems; ojph: $r"
            fi
        else
            problems="$problems; ojph_expand failed: $(grep -m1 -i error "$d/ojph.log")"
        fi
    fi
    if [ -n "$problems" ]; then
        t_fail "$name" "${problems#; } (j2kc ${args[*]})"
    else
        t_ok "$name" "$size B,${details}"
    fi
done

[ "$T_FAILED" = 0 ]
