#!/bin/bash
# What -c:v jpeg2000_cuda tells its users: the option help (every profile a named constant with
# a description, libopenjpeg's names accepted, named defaults instead of bare -1, internal
# tuning switches behind -j2kc_params, each hardware device type once, -threads taken), -psnr
# as the library's quality key, and
# how much it logs (nothing per frame at the default level, one line per frame at verbose,
# nothing about discarded coding attempts).
#   tests/ffmpeg/options.sh [BUILD_DIR]
. "$(dirname "$0")/common.inc"
ff_require

"$FFMPEG" -hide_banner -h encoder=jpeg2000_cuda > "$WORK/help" 2>&1 || { fail help "ffmpeg -h encoder=jpeg2000_cuda failed"; finish; }

# -- every profile is a named constant of -profile with a one-line description
t=help-profiles
missing=
for p in help auto none jpeg2000 dcinema_2k cinema2k dcinema_4k cinema4k broadcast broadcast_multi \
         broadcast_multi_r imf_2k imf_4k imf_8k imf_2k_r imf_4k_r imf_8k_r; do
    # constant lines: name, value, flags (E..V...), description
    grep -Eq "^ +$p +[-0-9]+ +E\.\.V\.+ +[A-Za-z]" "$WORK/help" || missing="$missing $p"
done
grep -Eq '^ +-profile +<int> ' "$WORK/help" || missing="$missing (no -profile option)"
[ -z "$missing" ] && ok $t "17 names with descriptions" || fail $t "missing or without a description:$missing"

# -- -profile:v help lists them and exits (as -gpu list does): no packet is written
t=profile-help
"$FFMPEG" -nostdin -hide_banner -y -f lavfi -i testsrc2=s=64x48 -frames:v 1 -c:v jpeg2000_cuda -profile:v help \
    -f image2pipe "$WORK/help.j2k" > "$WORK/ph.log" 2>&1
n=$(grep -Ec '^\[jpeg2000_cuda[^]]*\]   (dcinema_2k|cinema2k|imf_2k_r|broadcast_multi_r|none) +[A-Z]' "$WORK/ph.log")
if [ "$n" != 5 ]; then fail $t "$n of 5 sampled names listed: $(head -c 300 "$WORK/ph.log")"
elif [ -s "$WORK/help.j2k" ]; then fail $t "a codestream was written"
else ok $t "names listed, nothing encoded"; fi

# -- defaults are named: no "(default -1)"; the auto constants show instead
t=help-named-defaults
bare=$(grep -E '\(default -1\)' "$WORK/help" | awk '{ print $1 }' | tr '\n' ' ')
autos=$(grep -Ec '^ +-(pred|prog|numresolution|cblk_width|cblk_height|bypass|profile) .*\(default auto\)' "$WORK/help")
if [ -n "$bare" ]; then fail $t "options with (default -1): $bare"
elif [ "$autos" != 7 ]; then fail $t "$autos of 7 options show (default auto)"
else ok $t "pred prog numresolution cblk_* bypass profile: (default auto)"; fi

# -- tuning switches are j2kc_params keys, not options
t=help-j2kc_params
tuning=$(grep -Eo '^ +-(t1_stop|qstep_rate|qstep_try) ' "$WORK/help" | tr -d ' ' | tr '\n' ' ')
if [ -n "$tuning" ]; then fail $t "still options: $tuning"
elif ! grep -Eq '^ +-j2kc_params +<dictionary>' "$WORK/help"; then fail $t "no -j2kc_params option"
else ok $t; fi

# -- the quality target is -psnr with the library's range; -bypass is Part 1's lazy mode (a
#    boolean: other bit-plane counts are -j2kc_params bypass=N)
t=help-psnr-bypass
if ! grep -Eq '^ +-psnr +<double> .*\(from 0 to 200\)' "$WORK/help"; then fail $t "no -psnr <double> from 0 to 200: $(grep -e '-psnr' "$WORK/help")"
elif ! grep -Eq '^ +-bypass +<boolean> ' "$WORK/help"; then fail $t "-bypass is not a boolean: $(grep -e '-bypass' "$WORK/help")"
else ok $t; fi

# -- hardware devices listed once; threads: other (the library's pool)
t=help-hardware-devices
line=$(grep 'Supported hardware devices:' "$WORK/help")
if [ -z "$line" ]; then skip $t "built without CUDA hardware configurations"
elif [ "$(echo "$line" | grep -o cuda | wc -l)" != 1 ]; then fail $t "$line"
else ok $t "$(echo $line)"; fi
t=help-threads
grep -q 'Threading capabilities: other' "$WORK/help" && ok $t || fail $t "$(grep -i threading "$WORK/help")"

W=64 H=48
"$FFMPEG" -nostdin -v error -f lavfi -i "testsrc2=s=${W}x$H:r=25" -frames:v 8 -pix_fmt yuv444p \
    -f rawvideo "$WORK/src.raw" || { fail source "cannot make the test source"; finish; }
SRC="-f rawvideo -pixel_format yuv444p -video_size ${W}x$H -framerate 25 -i $WORK/src.raw"

# -- libopenjpeg's profile names give the same codestream as ours (DCI 2K on xyz12)
t=profile-cinema2k-alias
DCI="-f lavfi -i testsrc2=s=256x135:r=24 -frames:v 1 -vf scale=2048:1080,format=xyz12le -c:v jpeg2000_cuda -b:v 100M"
if ff $DCI -profile:v dcinema_2k "$WORK/a.j2c" && ff $DCI -profile:v cinema2k "$WORK/b.j2c"; then
    rsiz=$(od -An -tx1 -j6 -N2 "$WORK/b.j2c" | tr -d ' ')
    if ! cmp -s "$WORK/a.j2c" "$WORK/b.j2c"; then fail $t "cinema2k and dcinema_2k differ"
    elif [ "$rsiz" != 0003 ]; then fail $t "Rsiz $rsiz, want 0003"
    else ok $t "Rsiz 0003, same bytes"; fi
else
    fail $t "$(last_err)"
fi

# -- -psnr is the library's quality key (target PSNR in dB): one frame coded by ffmpeg -psnr T
#    equals j2kc --quality T's codestream of the same samples, for a target T drawn from a
#    printed seed (SEED=N to repeat); a higher target gives a larger frame, and the decoded
#    frame's PSNR (ffmpeg's psnr filter) is within 0.5 dB below and 1 dB above the target
J2KC=$BUILD/bin/j2kc
seed=${SEED:-$(( $(date +%s) % 100000 ))}
lo=$(( 300 + seed % 100 ))     # tenths of a dB: 30.0 .. 39.9
hi=$(( lo + 60 ))              # 6 dB higher
T=$(( lo / 10 )).$(( lo % 10 )) T2=$(( hi / 10 )).$(( hi % 10 ))
# one grey frame: a bare codestream of one component decodes as grey, so the psnr filter
# compares like with like
"$FFMPEG" -nostdin -v error -f lavfi -i testsrc2=s=128x96 -frames:v 1 -pix_fmt gray -f rawvideo \
    "$WORK/one.raw" || { fail source "cannot make the grey frame"; finish; }
ONE="-f rawvideo -pixel_format gray -video_size 128x96 -framerate 25 -i $WORK/one.raw"
t=psnr-is-quality-key
if [ ! -x "$J2KC" ]; then skip $t "$J2KC not built (make B=$BUILD)"
elif ff $ONE -c:v jpeg2000_cuda -psnr "$T" -flags +bitexact -f image2pipe "$WORK/p.j2k" &&
     "$J2KC" -q -i "$WORK/one.raw" --raw 128x96:gray --fps 25 --quality "$T" -o "$WORK/p-cli.j2c" \
         2> "$WORK/err"; then
    if cmp -s "$WORK/p.j2k" "$WORK/p-cli.j2c"; then ok $t "seed $seed: -psnr $T = j2kc --quality $T, $(stat -c %s "$WORK/p.j2k") bytes"
    else fail $t "seed $seed: -psnr $T ($(stat -c %s "$WORK/p.j2k") bytes) differs from j2kc --quality $T ($(stat -c %s "$WORK/p-cli.j2c") bytes)"; fi
else
    fail $t "seed $seed: $(last_err)"
fi
t=psnr-higher-target-larger
psnr_of() {   # psnr_of FILE: the average PSNR of FILE's frame against one.raw
    "$FFMPEG" -nostdin -hide_banner -i "$1" $ONE -lavfi "[0:v][1:v]psnr" -f null - 2>&1 |
        sed -n 's/.*PSNR .* average:\([0-9.inf]*\).*/\1/p' | head -n 1
}
if ff $ONE -c:v jpeg2000_cuda -psnr "$T2" -flags +bitexact -f image2pipe "$WORK/p2.j2k" &&
   [ -s "$WORK/p.j2k" ]; then
    a=$(stat -c %s "$WORK/p.j2k") b=$(stat -c %s "$WORK/p2.j2k")
    pa=$(psnr_of "$WORK/p.j2k") pb=$(psnr_of "$WORK/p2.j2k")
    if [ -z "$pa" ] || [ -z "$pb" ]; then fail $t "seed $seed: no PSNR measured"
    elif [ "$b" -le "$a" ]; then fail $t "seed $seed: -psnr $T2 gives $b bytes, -psnr $T $a"
    elif ! awk -v p="$pa" -v q="$pb" -v t="$T" -v u="$T2" -v tol=0.5 -v over=1 \
             'BEGIN { exit !(p >= t - tol && p <= t + over && q >= u - tol && q <= u + over && q > p) }'; then
        fail $t "seed $seed: measured $pa dB for -psnr $T, $pb dB for -psnr $T2"
    else ok $t "seed $seed: -psnr $T: $a bytes, $pa dB; -psnr $T2: $b bytes, $pb dB"; fi
else
    fail $t "seed $seed: $(last_err)"
fi

# -- quiet by default: the encoder prints the same lines for 2 frames as for 8 (none per
#    frame); at -v verbose exactly one more per frame, and nothing about coding attempts
#    (rate-control rounds, estimated PSNR, qstep_try's discarded codings)
enc_lines() {   # enc_lines LOGLEVEL FRAMES: lines of the encoder's log
    "$FFMPEG" -nostdin -hide_banner -nostats -loglevel "$1" -y $SRC -frames:v "$2" -c:v jpeg2000_cuda \
        -b:v 400k -f null - 2>&1 | grep -c '^\[jpeg2000_cuda'
}
t=quiet-default
a=$(enc_lines info 2) b=$(enc_lines info 8)
[ "$a" = "$b" ] && ok $t "$a encoder lines for 2 frames and for 8" || fail $t "$a lines for 2 frames, $b for 8"
t=verbose-one-line-per-frame
a=$(enc_lines verbose 2) b=$(enc_lines verbose 8)
[ $((b - a)) = 6 ] && ok $t "$a lines for 2 frames, $b for 8" || fail $t "$a lines for 2 frames, $b for 8 (want 6 more)"
t=verbose-no-attempts
"$FFMPEG" -nostdin -hide_banner -nostats -loglevel verbose -y $SRC -frames:v 8 -c:v jpeg2000_cuda \
    -b:v 400k -f null - > "$WORK/v.log" 2>&1
n=$(grep -Ec 'estimated PSNR|rate control: .*budget|qstep_try: the frame' "$WORK/v.log")
[ "$n" = 0 ] && ok $t || fail $t "$n lines about coding attempts: $(grep -Em 1 'PSNR|rate control|qstep_try: the' "$WORK/v.log")"

# -- -threads: the same bytes for any thread count, lossy and lossless (the library's pool
#    splits a frame's code-blocks; its results are put together in a fixed order)
for mode in "lossy:-b:v 600k" "lossless:-pred dwt53"; do
    t=threads-identical-${mode%%:*}
    opts=${mode#*:}
    ref=
    bad=
    for n in 1 2 3 7; do
        ff $SRC -c:v jpeg2000_cuda $opts -threads $n -f image2pipe "$WORK/t$n.j2k" || { bad="$bad $n(encode: $(last_err))"; continue; }
        [ -n "$ref" ] || ref=$WORK/t$n.j2k
        cmp -s "$ref" "$WORK/t$n.j2k" || bad="$bad $n"
    done
    pool=$("$FFMPEG" -nostdin -hide_banner -loglevel verbose -y $SRC -frames:v 1 -c:v jpeg2000_cuda -threads 2 \
               -f null - 2>&1 | grep -c "has no thread pool")
    note=$([ "$pool" = 0 ] && echo "library thread pool" || echo "this j2kcuda has no thread pool")
    [ -z "$bad" ] && ok $t "-threads 1 2 3 7: same bytes ($note)" || fail $t "differ from -threads 1:$bad"
done

finish
