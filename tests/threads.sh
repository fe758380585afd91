#!/bin/bash
# The reference backend's threads through the CLI (--threads N): for every profile (on small
# generated frames: DCI warns about the container size but encodes), lossy and lossless, HTJ2K, the
# codestream must be byte-identical with 1, 2, 3 and 7 threads and with the default (one per
# CPU it may run on); bad --threads values are refused with a message that names the option, exit
# status 1..127 and no output file. tests/unit/test_threads.c covers the library side (pool,
# key, many coding set-ups, concurrent encoders).
#   tests/threads.sh BUILD_DIR
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
J2KC="$BUILD/bin/j2kc"
T="$BUILD/testtools"
W="$BUILD/test-work/threads"
rm -rf "$W" && mkdir -p "$W"
T_FAILED=0
[ -x "$J2KC" ] || { t_fail threads/build "$J2KC not built"; exit 1; }
t_build_helpers "$BUILD" || { t_fail threads/helpers "cannot build tests/gen helpers"; exit 1; }

SEED=${J2KC_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "# threads.sh: seed $SEED (J2KC_TEST_SEED=$SEED replays it)"
"$T/gen" -o "$W/rgb12.ppm" --size 272x150 --depth 12 --seed "$SEED" || { t_fail threads/gen "gen failed"; exit 1; }
"$T/gen" -o "$W/y422.yuv" --size 198x110 --depth 10 --sub 422 --raw yuv422p10le --seed "$((SEED + 1))" ||
    { t_fail threads/gen "gen failed"; exit 1; }
YUV=(-i "$W/y422.yuv" --raw 198x110:yuv422p10le)

# same NAME INPUT-AND-OPTIONS...: every thread count gives the bytes of --threads 1
same() {
    local name=$1 t ref="$W/$1-1.j2c" msg sizes=""; shift
    if ! "$J2KC" -q "$@" --threads 1 -o "$ref" 2> "$W/$name.err"; then
        t_fail "threads/$name" "--threads 1 failed: $(head -c 200 "$W/$name.err" | tr '\n' ' ')"
        return
    fi
    for t in 2 3 7 0; do
        if ! "$J2KC" -q "$@" --threads $t -o "$W/$name-$t.j2c" 2> "$W/$name.err"; then
            t_fail "threads/$name" "--threads $t failed: $(head -c 200 "$W/$name.err" | tr '\n' ' ')"
            return
        fi
        if ! cmp -s "$ref" "$W/$name-$t.j2c"; then
            msg=$(cmp "$ref" "$W/$name-$t.j2c" 2>&1 | head -n 1)
            t_fail "threads/$name" "--threads $t differs from --threads 1: $msg"
            return
        fi
    done
    t_ok "threads/$name" "$(stat -c %s "$ref") bytes with 1, 2, 3, 7 and the default threads"
}

RGB=(-i "$W/rgb12.ppm")
same lossy-bytes        "${RGB[@]}" --bytes 15000
same lossy-quality      "${RGB[@]}" --quality 42 --tiles 100x64 --cblk 32x16
same lossless           "${RGB[@]}" --lossless
same lossless-422       "${YUV[@]}" --lossless
same lossy-422-layers   "${YUV[@]}" --bytes 6000 --layers 3 --order rpcl
same dci2k              "${RGB[@]}" --profile dci2k --fps 24
same dci2k-lowrate      "${RGB[@]}" --profile dci2k --fps 24 --bytes 4000
same dci4k              "${RGB[@]}" --profile dci4k --fps 24 --bytes 12000
same imf2k              "${RGB[@]}" --profile imf2k --fps 24 --bytes 20000
same imf4k              "${RGB[@]}" --profile imf4k --fps 24 --bytes 20000
same imf2k_r            "${RGB[@]}" --profile imf2k_r --fps 24
same imf4k_r-422        "${YUV[@]}" --profile imf4k_r --fps 24
same broadcast          "${YUV[@]}" --profile broadcast --fps 25 --bytes 9000
same broadcast_multi    "${RGB[@]}" --profile broadcast_multi --fps 25 --bytes 20000
same broadcast_multi_r  "${RGB[@]}" --profile broadcast_multi_r --fps 25
# the HT block coder: its plane chooser's sums are integers and its slope search exact, so the
# bytes do not depend on the split (hd/ht_plane.h), with and without refinement passes
same ht-bytes           "${RGB[@]}" --ht --bytes 15000
same ht-cleanup-only    "${YUV[@]}" --ht --ht-refine 0 --bytes 6000
same ht-lossless-422    "${YUV[@]}" --ht --lossless

# bad values: refused before anything is written
for v in -1 257 100000 two 1.5 ""; do
    out="$W/bad.j2c"
    rm -f "$out"
    "$J2KC" "${RGB[@]}" --threads "$v" -o "$out" > /dev/null 2> "$W/bad.err"
    rc=$?
    msg=$(head -c 200 "$W/bad.err" | tr '\n' ' ')
    if [ $rc = 0 ] || t_crashed $rc; then
        t_fail "threads/bad-value[$v]" "exit $rc: $msg"
    elif [ -e "$out" ] || ls "$W" | grep -q 'bad.j2c.tmp'; then
        t_fail "threads/bad-value[$v]" "output left behind"
    elif ! grep -q threads "$W/bad.err"; then
        t_fail "threads/bad-value[$v]" "message does not name threads: $msg"
    else
        t_ok "threads/bad-value[$v]" "exit $rc: $msg"
    fi
done

[ "$T_FAILED" = 0 ]
