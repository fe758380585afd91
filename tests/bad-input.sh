#!/bin/bash
# Bad inputs and conflicting options: j2kc must refuse each one cleanly: exit status 1..127
# (no signal, no sanitizer report), a message on stderr, no output file (and no temporary
# file) left behind, and an existing output file left untouched.
#   tests/bad-input.sh BUILD_DIR
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
J2KC="$BUILD/bin/j2kc"
T="$BUILD/testtools"
W="$BUILD/test-work/bad-input"
rm -rf "$W" && mkdir -p "$W/in" "$W/out"
T_FAILED=0
[ -x "$J2KC" ] || { t_fail bad-input/build "$J2KC not built"; exit 1; }
t_build_helpers "$BUILD" || { t_fail bad-input/helpers "cannot build tests/gen helpers"; exit 1; }

# refuse NAME EXPECT_IN_STDERR j2kc-arguments... (the output is always $W/out/NAME.j2c)
refuse() {
    local name=$1 want=$2; shift 2
    local out="$W/out/$name.j2c" rc msg
    "$J2KC" "$@" -o "$out" > "$W/$name.stdout" 2> "$W/$name.stderr"
    rc=$?
    msg=$(head -c 300 "$W/$name.stderr" | tr '\n' ' ')
    if [ $rc = 0 ]; then
        t_fail "bad-input/$name" "accepted (exit 0)"
    elif t_crashed $rc; then
        t_fail "bad-input/$name" "crashed (exit $rc): $msg"
    elif grep -q -E 'AddressSanitizer|runtime error|LeakSanitizer' "$W/$name.stderr"; then
        t_fail "bad-input/$name" "sanitizer report: $msg"
    elif [ ! -s "$W/$name.stderr" ]; then
        t_fail "bad-input/$name" "exit $rc but nothing on stderr"
    elif [ -e "$out" ]; then
        t_fail "bad-input/$name" "output file left behind"
    elif ls "$W/out/" | grep -q tmp; then
        t_fail "bad-input/$name" "temporary file left behind: $(ls "$W/out" | tr '\n' ' ')"
    elif [ -n "$want" ] && ! grep -q -i -E "$want" "$W/$name.stderr"; then
        t_fail "bad-input/$name" "message does not mention '$want': $msg"
    else
        t_ok "bad-input/$name" "exit $rc: $msg"
    fi
    rm -f "$W"/out/*tmp*
}

I="$W/in"
# ---- malformed and unsupported images ------------------------------------------------------
printf 'P5\n0 0\n255\n' > "$I/zero.pgm"
printf 'P6\n100000000 100000000\n255\nxyz' > "$I/huge.ppm"
printf 'P5\n65536 65536\n65535\nxyz' > "$I/big-truncated.pgm"
printf 'P5\n4 4\n0\n0123456789abcdef' > "$I/maxval0.pgm"
printf 'P5\n4 4\n70000\n0123456789abcdef0123456789abcdef' > "$I/maxval70000.pgm"
printf 'P6\n16 16\n255\n0123456789' > "$I/truncated.ppm"
printf 'P6\nabc\n' > "$I/malformed.ppm"
printf 'P6\n16' > "$I/header-cut.ppm"
printf 'PG ML + 17 4 4\n0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef' > "$I/depth17.pgx"
printf 'PG ML + 0 4 4\n0123456789abcdef' > "$I/depth0.pgx"
printf 'PG XX + 8 4 4\n0123456789abcdef' > "$I/badorder.pgx"
printf 'PG ML + 8 4 4\n0123' > "$I/truncated.pgx"
printf 'GIF89a...' > "$I/unknown.bin"
: > "$I/empty.ppm"
head -c 100 /dev/zero > "$I/short.yuv"
"$T/gen" -o "$I/ok8.ppm" --size 64x64 --depth 8
"$T/gen" -o "$I/ok12.ppm" --size 64x64 --depth 12
"$T/gen" -o "$I/gray8.pgm" --size 64x64 --depth 8 --comps 1
"$T/gen" -o "$I/c2_0.pgx" --size 64x64 --depth 12 --comps 2
"$T/gen" -o "$I/wide12.ppm" --size 2049x1080 --depth 12 --noise 0
"$T/gen" -o "$I/big-imf.pgm" --size 2049x1557 --depth 10 --comps 1 --noise 0

refuse zero-size          'empty|size|0x0'      -i "$I/zero.pgm"
refuse huge-size          'large|size'          -i "$I/huge.ppm"
refuse big-truncated      'truncat'             -i "$I/big-truncated.pgm"
refuse pnm-maxval-0       'maxval'              -i "$I/maxval0.pgm"
refuse pnm-maxval-70000   'maxval'              -i "$I/maxval70000.pgm"
refuse pnm-truncated      'truncat'             -i "$I/truncated.ppm"
refuse pnm-malformed      'malformed|header'    -i "$I/malformed.ppm"
refuse pnm-header-cut     'malformed|header'    -i "$I/header-cut.ppm"
refuse pgx-depth-17       'depth'               -i "$I/depth17.pgx"
refuse pgx-depth-0        'depth'               -i "$I/depth0.pgx"
refuse pgx-bad-byteorder  'malformed|ML'        -i "$I/badorder.pgx"
refuse pgx-truncated      'truncat'             -i "$I/truncated.pgx"
refuse unknown-format     'format'              -i "$I/unknown.bin"
refuse empty-file         'format'              -i "$I/empty.ppm"
refuse missing-input      'No such file'        -i "$I/does-not-exist.ppm"
refuse input-is-directory ''                    -i "$I"
refuse raw-truncated      'truncat'             -i "$I/short.yuv" --raw 64x64:yuv420p
refuse raw-bad-format     'unknown'             -i "$I/short.yuv" --raw 8x8:yuv999p
refuse raw-no-size        'WxH'                 -i "$I/short.yuv" --raw yuv420p
refuse raw-zero-size      'size|range'          -i "$I/short.yuv" --raw 0x8:gray
head -c 128 /dev/zero > "$I/two-frames.gray"
refuse raw-longer-than-frame 'one frame'        -i "$I/two-frames.gray" --raw 8x8:gray
# samples outside what the header declares (fuzzing reproducers, tests/data/repro)
refuse pnm-sample-above-maxval  'maxval'        -i "$TESTS_DIR/data/repro/overmax8.pgm" --lossless
refuse pgx-sample-outside-depth 'range'         -i "$TESTS_DIR/data/repro/pgx_signed3.pgx" --lossless
printf 'P5\n2 1\n1000\n\003\350\003\351' > "$I/over1000.pgm"
refuse pnm16-sample-above-maxval 'maxval'       -i "$I/over1000.pgm"
printf 'PG ML + 9 2 1\n\001\377\002\000' > "$I/pgx9-over.pgx"
refuse pgx-9bit-sample-above    'range'         -i "$I/pgx9-over.pgx"

# ---- budgets and conflicting or invalid options --------------------------------------------------
refuse bytes-50                 ''  -i "$I/ok8.ppm" --bytes 50
refuse bytes-0                  ''  -i "$I/ok8.ppm" --bytes 0
refuse lossless-with-bytes      ''  -i "$I/ok8.ppm" --lossless --bytes 10000
# gpu lists (one encoder over several devices): malformed, duplicate, out of 0..1023, too many
refuse gpu-list-duplicate       'twice'         -i "$I/ok8.ppm" --gpu 0,1,0
refuse gpu-list-trailing-comma  "'gpu'"         -i "$I/ok8.ppm" --gpu 0,
refuse gpu-list-out-of-range    "'gpu'"         -i "$I/ok8.ppm" --gpu 0,1024
refuse gpu-list-too-many        'more than 16'  -i "$I/ok8.ppm" --gpu 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16
J2KC_MULTI_STANDIN=2 refuse gpu-list-no-such-device 'device 2 does not exist' -i "$I/ok8.ppm" --backend ref --gpu 0,2
refuse lossless-dci2k           ''  -i "$I/ok12.ppm" --lossless --profile dci2k --fps 24
refuse quality-with-bytes       ''  -i "$I/ok8.ppm" --quality 40 --bytes 10000
refuse cblk-2048x2              ''  -i "$I/ok8.ppm" --cblk 2048x2
refuse cblk-128x64              ''  -i "$I/ok8.ppm" --cblk 128x64
refuse cblk-3x3                 ''  -i "$I/ok8.ppm" --cblk 3x3
refuse levels-40                ''  -i "$I/ok8.ppm" --levels 40
refuse levels-negative          ''  -i "$I/ok8.ppm" --levels -1
refuse order-foo                ''  -i "$I/ok8.ppm" --order foo
refuse layers-0                 ''  -i "$I/ok8.ppm" --layers 0
refuse layers-65                ''  -i "$I/ok8.ppm" --layers 65
refuse layer-bytes-decreasing   ''  -i "$I/ok8.ppm" --layers 2 --layer-bytes 5000,3000
refuse guard-8                  ''  -i "$I/ok8.ppm" --guard 8
refuse tiles-0x0                ''  -i "$I/ok8.ppm" --tiles 0x0
refuse prec-1x1                 ''  -i "$I/ok8.ppm" --prec 1x1
refuse poc-garbage              ''  -i "$I/ok8.ppm" --poc garbage
refuse poc-beyond-resolutions   ''  -i "$I/ok8.ppm" --poc 9,0,1,10,3,lrcp
refuse fps-0                    ''  -i "$I/ok8.ppm" --fps 0
refuse bitrate-without-fps      ''  -i "$I/ok8.ppm" --bitrate 100
refuse tile-parts-x             ''  -i "$I/ok8.ppm" --tile-parts X
refuse backend-foo              ''  -i "$I/ok8.ppm" --backend foo
refuse set-unknown-key          ''  -i "$I/ok8.ppm" --set nokey=1
refuse set-no-equals            ''  -i "$I/ok8.ppm" --set levels
refuse unknown-option           ''  -i "$I/ok8.ppm" --frobnicate
refuse option-without-value     ''  -i "$I/ok8.ppm" --levels
refuse profile-unknown          ''  -i "$I/ok12.ppm" --profile dci3k
refuse profile-dci2k-8bit       ''  -i "$I/ok8.ppm" --profile dci2k --fps 24
refuse profile-dci2k-too-wide   ''  -i "$I/wide12.ppm" --profile dci2k --fps 24
refuse profile-dci2k-gray       ''  -i "$I/gray8.pgm" --profile dci2k --fps 24
refuse profile-dci2k-2comps     ''  -i "$I/c2_0.pgx" --profile dci2k --fps 24
refuse profile-dci4k-60fps      ''  -i "$I/ok12.ppm" --profile dci4k --fps 60
refuse profile-imf2k-too-big    ''  -i "$I/big-imf.pgm" --profile imf2k --fps 24
refuse profile-dci2k-cblk-64    ''  -i "$I/ok12.ppm" --profile dci2k --fps 24 --cblk 64x64
refuse profile-dci2k-layers-2   ''  -i "$I/ok12.ppm" --profile dci2k --fps 24 --layers 2
refuse profile-dci2k-poc        ''  -i "$I/ok12.ppm" --profile dci2k --fps 24 --poc 0,0,1,6,3,cprl
refuse profile-imf-sublevel-10  ''  -i "$I/ok12.ppm" --profile imf2k --fps 24 --sublevel 10
refuse profile-imf2k-levels-0   'decomposition levels' -i "$I/ok12.ppm" --profile imf2k --fps 24 --levels 0
refuse profile-imf4k_r-levels-0 'decomposition levels' -i "$I/ok12.ppm" --profile imf4k_r --fps 24 --levels 0
# HTJ2K (ht=1): DCI is Part 1 only, no other code-block style, byte targets only
refuse ht-dci2k                 'DCI'        -i "$I/ok12.ppm" --ht --profile dci2k --fps 24
refuse ht-imf2k                 'IMF'        -i "$I/ok12.ppm" --ht --profile imf2k --fps 24
refuse ht-bypass                'bypass'     -i "$I/ok8.ppm" --ht --bypass
refuse ht-quality               'quality'    -i "$I/ok8.ppm" --ht --quality 40
refuse ht-bytes-50              'header'     -i "$I/ok8.ppm" --ht --bytes 50
refuse ht-refine-without-ht     'ht_refine'  -i "$I/ok8.ppm" --ht-refine 0
# IMF App 2E's HT profiles (imf_ht = APP2.HT.IRV, imf_ht_r = APP2.HT.REV, ST 2067-21:2023 Annex I)
head -c 6144 /dev/zero > "$I/yuv420-64.yuv"
"$T/gen" -o "$I/wide-8193.pgm" --size 8193x8 --depth 10 --comps 1 --noise 0
refuse ht-broadcast             'broadcast'  -i "$I/ok8.ppm" --ht --profile broadcast
refuse ht-dci4k                 'DCI'        -i "$I/ok12.ppm" --ht --profile dci4k --fps 24
refuse ht-imf4k_r               'imf_ht'     -i "$I/ok12.ppm" --ht --profile imf4k_r --fps 24
refuse imf_ht-cblk-16x16        'code-blocks' -i "$I/ok12.ppm" --profile imf_ht --bytes 4000 --cblk 16x16
refuse imf_ht-cblk-32x128       'code-blocks' -i "$I/ok12.ppm" --profile imf_ht --bytes 4000 --cblk 32x128
refuse imf_ht_r-cblk-256x16     'code-blocks' -i "$I/ok12.ppm" --profile imf_ht_r --cblk 256x16
refuse imf_ht-bypass            '0x40'       -i "$I/ok12.ppm" --profile imf_ht --bytes 4000 --bypass
refuse imf_ht_r-vcausal         '0x40'       -i "$I/ok12.ppm" --profile imf_ht_r --vcausal
refuse imf_ht-ht-0              'HT block coder' -i "$I/ok12.ppm" --profile imf_ht --bytes 4000 --set ht=0
refuse imf_ht-order-cprl        'RPCL'       -i "$I/ok12.ppm" --profile imf_ht --bytes 4000 --order cprl
refuse imf_ht-layers-2          'layer'      -i "$I/ok12.ppm" --profile imf_ht --bytes 4000 --layers 2
refuse imf_ht-tiles             'tile'       -i "$I/ok12.ppm" --profile imf_ht --bytes 4000 --tiles 32x32
refuse imf_ht-tile-parts-C      'tile-part'  -i "$I/ok12.ppm" --profile imf_ht --bytes 4000 --tile-parts C
refuse imf_ht-prec              'precinct'   -i "$I/ok12.ppm" --profile imf_ht --bytes 4000 --prec 64x64
refuse imf_ht-levels-0          'decomposition levels' -i "$I/ok12.ppm" --profile imf_ht --bytes 4000 --levels 0
refuse imf_ht_r-levels-6-2k     'decomposition levels' -i "$I/ok12.ppm" --profile imf_ht_r --levels 6
refuse imf_ht-lossless          'lossless'   -i "$I/ok12.ppm" --profile imf_ht --lossless
refuse imf_ht_r-transform-97    '5/3'        -i "$I/ok12.ppm" --profile imf_ht_r --transform 97
refuse imf_ht_r-guard-3         'guard'      -i "$I/ok12.ppm" --profile imf_ht_r --guard 3
refuse imf_ht-sublevel          'level'      -i "$I/ok12.ppm" --profile imf_ht --bytes 4000 --sublevel 2
refuse imf_ht-quality           'quality'    -i "$I/ok12.ppm" --profile imf_ht --quality 40
refuse imf_ht-bytes-100         'header'     -i "$I/ok12.ppm" --profile imf_ht --bytes 100
refuse imf_ht-yuv420            'YRsiz'      -i "$I/yuv420-64.yuv" --raw 64x64:yuv420p --profile imf_ht --bytes 4000
refuse imf_ht-too-wide          'maximum'    -i "$I/wide-8193.pgm" --profile imf_ht --bytes 40000
# values at the ends of their types (no undefined behaviour: the sanitizer build runs these)
refuse bytes-2^64-1             'bytes'      -i "$I/ok8.ppm" --bytes 18446744073709551615
refuse bytes-2^53+1             'bytes'      -i "$I/ok8.ppm" --bytes 9007199254740993
refuse bitrate-5e15             '2\^53'      -i "$I/ok12.ppm" --fps 24 --bitrate 5e15
refuse bitrate-1e300-imf2k      ''           -i "$I/ok12.ppm" --profile imf2k --fps 24 --bitrate 1e300
refuse bitrate-1e300-dci2k      ''           -i "$I/ok12.ppm" --profile dci2k --fps 24 --bitrate 1e300
out=$("$J2KC" -q -i "$I/ok8.ppm" -o "$W/out/hugetiles.j2c" --tiles 4294967295x4294967295 2>&1); rc=$?
if [ $rc != 0 ] || [ -n "$out" ]; then
    t_fail bad-input/tiles-2^32-1-clamped "exit $rc: $(echo "$out" | head -3 | tr '\n' ' ')"
elif ! t_have opj_decompress; then
    t_ok bad-input/tiles-2^32-1-clamped "encoded (opj_decompress missing: not decoded)"
elif opj_decompress -i "$W/out/hugetiles.j2c" -o "$W/hugetiles.ppm" > "$W/hugetiles.log" 2>&1; then
    t_ok bad-input/tiles-2^32-1-clamped "encoded as one tile, OpenJPEG decodes it"
else
    t_fail bad-input/tiles-2^32-1-clamped "OpenJPEG cannot decode it: $(grep -m1 ERROR "$W/hugetiles.log")"
fi
rm -f "$W/out/hugetiles.j2c" "$W/hugetiles.ppm"

# ---- backend cuda: works (CUDA build with a GPU) or is refused cleanly ------------------------------
out=$("$J2KC" -i "$I/ok8.ppm" -o "$W/out/cuda.j2c" --backend cuda 2>&1); rc=$?
if t_crashed $rc; then t_fail bad-input/backend-cuda "crashed (exit $rc)"
elif [ $rc = 0 ] && [ -s "$W/out/cuda.j2c" ]; then t_ok bad-input/backend-cuda "encoded: $out"
elif [ $rc != 0 ] && [ ! -e "$W/out/cuda.j2c" ] && [ -n "$out" ]; then t_ok bad-input/backend-cuda "refused: $(echo "$out" | tr '\n' ' ')"
else t_fail bad-input/backend-cuda "exit $rc, output file state inconsistent: $out"; fi
rm -f "$W/out/cuda.j2c"

# ---- output handling --------------------------------------------------------------------------------
out=$("$J2KC" -i "$I/ok8.ppm" -o "$W/no/such/dir/x.j2c" 2>&1); rc=$?
if [ $rc != 0 ] && ! t_crashed $rc && [ -n "$out" ]; then t_ok bad-input/output-dir-missing "exit $rc: $out"
else t_fail bad-input/output-dir-missing "exit $rc: $out"; fi

echo "previous content" > "$W/out/keep.j2c"
"$J2KC" -i "$I/maxval0.pgm" -o "$W/out/keep.j2c" 2>/dev/null; rc=$?
if [ $rc != 0 ] && [ "$(cat "$W/out/keep.j2c")" = "previous content" ]; then
    t_ok bad-input/existing-output-kept
else
    t_fail bad-input/existing-output-kept "exit $rc; the existing output was changed or removed"
fi
"$J2KC" -i "$I/ok8.ppm" -o "$W/out/keep.j2c" --bytes 50 2>/dev/null; rc=$?
if [ $rc != 0 ] && [ "$(cat "$W/out/keep.j2c")" = "previous content" ]; then
    t_ok bad-input/existing-output-kept-on-encode-error
else
    t_fail bad-input/existing-output-kept-on-encode-error "exit $rc; the existing output was changed or removed"
fi

# ---- output targets that are not regular files (out_write, tools/outfile.c) -------------------------
# A device node, FIFO or symbolic link named by -o is written, never replaced by a regular file;
# regular files are replaced atomically with the umask's mode (a new one) or their own mode.
O="$W/outtargets"
mkdir -p "$O"
ftype() { stat -c %F "$1" 2>/dev/null; }
ok_out() {   # ok_out NAME: the last j2kc run must have exited 0
    if [ "$1" != 0 ]; then t_fail "bad-input/$2" "j2kc exit $1: $(head -c 200 "$O/err" | tr '\n' ' ')"; return 1; fi
}
# a private /dev/null (the real one is never at risk), where device nodes may be made and used
if mknod "$O/null" c 1 3 2>/dev/null && ( : > "$O/null" ) 2>/dev/null; then
    "$J2KC" -q -i "$I/ok8.ppm" -o "$O/null" 2>"$O/err"; rc=$?
    ln -s null "$O/null-link"
    "$J2KC" -q -i "$I/ok8.ppm" -o "$O/null-link" 2>>"$O/err"; rc2=$?
    if ok_out $rc output-char-device && ok_out $rc2 output-char-device; then
        if [ "$(ftype "$O/null")" = "character special file" ] && [ -L "$O/null-link" ] &&
           [ "$(ftype "$O/null-link")" = "symbolic link" ]; then
            t_ok bad-input/output-char-device "device node and a link to it written, still a device and a link"
        else
            t_fail bad-input/output-char-device "replaced: null is '$(ftype "$O/null")', null-link is '$(ftype "$O/null-link")'"
        fi
    fi
else
    t_skip bad-input/output-char-device "mknod not permitted here, or device nodes unusable on this filesystem (nodev)"
fi
mkfifo "$O/fifo"
# the reader gives up after 20 s: if j2kc replaced the FIFO instead of opening it, nothing
# else would ever open the FIFO it waits on
timeout 20 cat "$O/fifo" > "$O/fifo-got" &
reader=$!
timeout 20 "$J2KC" -q -i "$I/ok8.ppm" -o "$O/fifo" 2>"$O/err"; rc=$?
wait $reader
if ok_out $rc output-fifo; then
    if [ "$(ftype "$O/fifo")" != fifo ]; then t_fail bad-input/output-fifo "the FIFO was replaced by a $(ftype "$O/fifo")"
    elif [ "$(head -c 2 "$O/fifo-got" | od -An -tx1 | tr -d ' ')" != ff4f ]; then
        t_fail bad-input/output-fifo "the reader got $(stat -c %s "$O/fifo-got") bytes, no codestream"
    else t_ok bad-input/output-fifo "the reader got $(stat -c %s "$O/fifo-got") bytes; still a FIFO"; fi
fi
echo old > "$O/target"; chmod 640 "$O/target"; ln -s target "$O/link"
"$J2KC" -q -i "$I/ok8.ppm" -o "$O/link" 2>"$O/err"; rc=$?
if ok_out $rc output-symlink-to-file; then
    if [ ! -L "$O/link" ]; then t_fail bad-input/output-symlink-to-file "the link was replaced by a $(ftype "$O/link")"
    elif [ "$(head -c 2 "$O/target" | od -An -tx1 | tr -d ' ')" != ff4f ]; then t_fail bad-input/output-symlink-to-file "the target was not written"
    elif [ "$(stat -c %a "$O/target")" != 640 ]; then t_fail bad-input/output-symlink-to-file "target mode $(stat -c %a "$O/target"), 640 kept expected"
    elif ls "$O" | grep -q tmp; then t_fail bad-input/output-symlink-to-file "temporary file left: $(ls "$O" | tr '\n' ' ')"
    else t_ok bad-input/output-symlink-to-file "link kept, target rewritten, mode 640 kept"; fi
fi
for m in 022 077 002; do
    want=$(printf '%o' $((0666 & ~0$m)))
    (umask $m; "$J2KC" -q -i "$I/ok8.ppm" -o "$O/new-$m.j2c" 2>"$O/err"); rc=$?
    ok_out $rc "output-mode-umask-$m" || continue
    got=$(stat -c %a "$O/new-$m.j2c")
    if [ "$got" = "$want" ]; then t_ok "bad-input/output-mode-umask-$m" "mode $got"
    else t_fail "bad-input/output-mode-umask-$m" "mode $got, $want expected"; fi
done
out=$("$J2KC" -q -i "$I/ok8.ppm" -o "$O" 2>&1); rc=$?
if [ $rc != 0 ] && ! t_crashed $rc && echo "$out" | grep -q directory && [ -d "$O" ]; then
    t_ok bad-input/output-is-directory "exit $rc: $out"
else t_fail bad-input/output-is-directory "exit $rc: $out"; fi

# ---- the checker on hostile files: never a crash ---------------------------------------------------
CHECK="$BUILD/bin/j2kc-check"
if [ -x "$CHECK" ]; then
    bad=0
    for f in "$I"/*; do
        [ -f "$f" ] || continue
        "$CHECK" -q "$f" > /dev/null 2>&1; rc=$?
        t_crashed $rc && { bad=1; echo "    j2kc-check crashed on $f (exit $rc)"; }
    done
    # truncations of a real codestream at many points
    "$J2KC" -q -i "$I/ok8.ppm" -o "$W/base.j2c" --tlm --sop --eph --tile-parts R 2>/dev/null
    if [ -f "$W/base.j2c" ]; then
        size=$(stat -c %s "$W/base.j2c")
        for n in 1 2 3 10 40 60 80 100 150 200 300 $((size / 2)) $((size - 3)); do
            head -c "$n" "$W/base.j2c" > "$W/cut.j2c"
            "$CHECK" -q "$W/cut.j2c" > /dev/null 2>&1; rc=$?
            t_crashed $rc && { bad=1; echo "    j2kc-check crashed on a $n-byte prefix (exit $rc)"; }
            [ $rc = 0 ] && { bad=1; echo "    j2kc-check accepted a $n-byte prefix of a $size-byte stream"; }
        done
    fi
    if [ $bad = 0 ]; then t_ok bad-input/checker-hostile-files; else t_fail bad-input/checker-hostile-files "see above"; fi

    # fuzzing reproducers (tests/data/repro, README.md there): each must be reported with its
    # rule, exit 1, without a crash or a sanitizer report (the sanitizer build runs this too)
    RP="$TESTS_DIR/data/repro"
    checker_repro() {   # checker_repro NAME FILE RULE [ARGS...]
        local name=$1 file=$2 rule=$3 out rc; shift 3
        out=$("$CHECK" "$@" "$file" 2>&1); rc=$?
        if t_crashed $rc; then t_fail "bad-input/$name" "j2kc-check crashed (exit $rc): $(echo "$out" | grep -m2 -E 'ERROR|runtime error|Sanitizer')"
        elif echo "$out" | grep -q -E 'AddressSanitizer|runtime error|LeakSanitizer'; then
            t_fail "bad-input/$name" "sanitizer report: $(echo "$out" | grep -m1 -E 'Sanitizer|runtime error')"
        elif [ $rc != 1 ]; then t_fail "bad-input/$name" "exit $rc, 1 expected"
        elif ! echo "$out" | grep -q ": $rule: "; then t_fail "bad-input/$name" "$rule not reported: $(echo "$out" | head -2 | tr '\n' ' ')"
        else t_ok "bad-input/$name" "$(echo "$out" | grep -m1 ": $rule: " | sed 's/^[^:]*: //')"; fi
    }
    checker_repro checker-xrsiz0-imf-fps     "$RP/check_xrsiz0_fpe.j2c"         SIZ.XRsiz --fps 24
    checker_repro checker-xrsiz0-imf-fuzz    "$RP/check_xrsiz0_fpe_fuzz.j2c"    SIZ.XRsiz --fps 24
    checker_repro checker-coc-short-at-eof   "$RP/check_coc_overread.j2c"       COC.length
    checker_repro checker-coc-short-csiz300  "$RP/check_coc_overread_csiz300.j2c" COC.length
    checker_repro checker-qcc-short-at-eof   "$RP/check_qcc_overread.j2c"       QCC.length
    if t_have xz; then
        xz -dc "$RP/check_coc_overread_cli.j2c.xz" > "$W/coc_cli.j2c"
        checker_repro checker-coc-short-1mb  "$W/coc_cli.j2c"                   COC.length
    else
        t_skip bad-input/checker-coc-short-1mb "xz missing (Debian xz-utils)"
    fi
    # --fps: decimals beyond the limit are refused (they overflowed an int), large ones still judge
    out=$("$CHECK" --fps 1.0e10 "$RP/dci2k_small.j2c" 2>&1); rc=$?
    if [ $rc = 2 ] && echo "$out" | grep -q "bad --fps"; then t_ok bad-input/checker-fps-1e10 "$out"
    else t_fail bad-input/checker-fps-1e10 "exit $rc, 2 expected: $(echo "$out" | head -2 | tr '\n' ' ')"; fi
    checker_repro checker-fps-1e6-decimal "$RP/dci2k_small.j2c" DCI.frame_size --fps 1000000.0
fi

# The build's embedding of the device code (tools/embed-fatbin.sh): a missing or empty image,
# or a path the .incbin string cannot hold, is refused by name, and no output file is made.
embed_bad() {   # embed_bad NAME IMAGE EXPECTED-MESSAGE
    local out rc
    rm -f "$W/embed.S"
    out=$(sh "$REPO_DIR/tools/embed-fatbin.sh" "$W/embed.S" "$2" 2>&1); rc=$?
    if [ $rc = 0 ]; then t_fail "bad-input/$1" "accepted"
    elif [ -e "$W/embed.S" ] || [ -e "$W/embed.S.tmp" ]; then t_fail "bad-input/$1" "output left behind"
    elif ! echo "$out" | grep -q "$3"; then t_fail "bad-input/$1" "message: $out"
    else t_ok "bad-input/$1" "$out"; fi
}
: > "$W/empty.fatbin"
printf x > "$W/quo\"te.ptx"
embed_bad embed-image-missing "$W/no-such.fatbin" "missing or empty"
embed_bad embed-image-empty "$W/empty.fatbin" "missing or empty"
embed_bad embed-image-quote "$W/quo\"te.ptx" "a quote, backslash or newline"
mkdir -p "$W/back\\slash" && printf x > "$W/back\\slash/k.ptx"
embed_bad embed-image-backslash-folder "$W/back\\slash/k.ptx" "a quote, backslash or newline"

[ "$T_FAILED" = 0 ]
