#!/bin/bash
# Reversible profiles are lossless unless a rate is asked for: imf_*_r, broadcast_multi_r and
# -pred dwt53 without -b:v/-psnr decode to the source frames exactly, with the IMF sublevel in
# Rsiz taken from the coded size; with -b:v the frames stay under the budget, are not lossless,
# and one warning at the default log level says so.
#   tests/ffmpeg/reversible.sh [BUILD_DIR]
. "$(dirname "$0")/common.inc"
ff_require

W=176 H=144 N=4
S=$WORK/src
mkdir -p "$S"
for fmt in yuv422p10le yuv444p gbrp; do
    ff -f lavfi -i "testsrc2=s=${W}x$H:r=25" -frames:v $N -vf format=$fmt -f rawvideo "$S/$fmt.raw" ||
        { fail "source-$fmt" "$(last_err)"; finish; }
done
raw() { echo "-f rawvideo -pixel_format $1 -video_size ${W}x$H -framerate 25 -i $S/$1.raw"; }
src_hashes() { "$FFMPEG" -nostdin -v error $(raw "$1") -f framemd5 - | frame_hashes; }
# rsiz FILE: the Rsiz field of a bare codestream (after SOC, SIZ and Lsiz), as 4 hex digits
rsiz() { od -An -tx1 -j6 -N2 "$1" | tr -d ' \n'; }

# lossless CASE PIX_FMT OUT_FMT WANT_RSIZ OPTIONS...: N frames as .j2c files, decoded by our
# ffmpeg as OUT_FMT and compared with the source frames; WANT_RSIZ: Rsiz of every file
lossless() {
    local t=lossless-$1 fmt=$2 out=$3 want=$4 d=$WORK/$1 dec got
    shift 4
    mkdir -p "$d"
    if ! ff $(raw $fmt) -c:v jpeg2000_cuda "$@" "$d/%03d.j2c"; then fail $t "$(last_err)"; return; fi
    got=$(for f in "$d"/*.j2c; do rsiz "$f"; echo; done | sort -u | tr '\n' ' ')
    dec=$("$FFMPEG" -nostdin -v error -i "$d/%03d.j2c" -pix_fmt $out -f framemd5 - | frame_hashes)
    if [ "$dec" != "$(src_hashes $fmt)" ]; then fail $t "decoded frames differ from the source ($*)"
    elif [ "$got" != "$want " ]; then fail $t "Rsiz $got, want $want"
    else ok $t "$* : $N frames bit-exact, Rsiz $want"; fi
}
# IMF 2K reversible, 176x144 4:2:2 at 25 fps: 1.3 Msamples/s is main level 1; a lossless frame
# far below 200 Mbit/s is sublevel 1: Rsiz 0x0711
lossless imf_2k_r yuv422p10le yuv422p10le 0711 -profile:v imf_2k_r
lossless imf_4k_r yuv422p10le yuv422p10le 0811 -profile:v imf_4k_r
lossless broadcast_multi_r yuv422p10le yuv422p10le 0301 -profile:v broadcast_multi_r
lossless pred-dwt53 yuv422p10le yuv422p10le 0000 -pred dwt53
lossless pred-dwt53-rgb gbrp gbrp 0000 -pred dwt53
# the sublevel given in the profile value is kept when the frames fit it
lossless imf_2k_r-0x0724 yuv422p10le yuv422p10le 0724 -profile:v 0x0724

# -- above sublevel 1: seeded 10-bit noise at 1000 fps (sublevel 1 allows 25000 bytes a frame,
#    a lossless noise frame takes about 60000): still lossless, each frame's Rsiz carrying the
#    smallest sublevel its size fits (200 * 2^(s-1) Mbit/s) and the smallest main level that
#    allows it (sublevel <= min(table, max(main - 2, 1)), 15444-1 Amd 8)
t=lossless-imf_2k_r-above-sublevel-1
SEED=${J2KC_TEST_SEED:-20261127}
echo "# reversible: noise seed $SEED"
python3 -c "
import random, struct, sys
random.seed($SEED)
n = $W * $H * 2 * $N
sys.stdout.buffer.write(struct.pack('<%dH' % n, *(random.getrandbits(10) for _ in range(n))))" > "$S/noise.raw"
NOISE="-f rawvideo -pixel_format yuv422p10le -video_size ${W}x$H -framerate 1000 -i $S/noise.raw"
mkdir -p "$WORK/hi"
if ff $NOISE -c:v jpeg2000_cuda -profile:v imf_2k_r "$WORK/hi/%03d.j2c"; then
    want=$("$FFMPEG" -nostdin -v error $NOISE -f framemd5 - | frame_hashes)
    dec=$("$FFMPEG" -nostdin -v error -i "$WORK/hi/%03d.j2c" -f framemd5 - | frame_hashes)
    bad=
    for f in "$WORK"/hi/*.j2c; do
        exp=$(stat -c %s "$f" | awk '{
            mbps = $1 * 8 * 1000 / 1e6; for (s = 1; 200 * 2 ^ (s - 1) < mbps; s++);
            split("1 1 1 2 3 4 5 6 7 8 9", tab, " ");
            for (m = 1; m <= 11; m++) { x = m - 2 < 1 ? 1 : m - 2; if ((tab[m] < x ? tab[m] : x) >= s) break }
            printf "07%x%x", s, m }')
        [ "$(rsiz "$f")" = "$exp" ] || bad="$bad $(basename "$f"):$(rsiz "$f")!=$exp"
    done
    sizes=$(for f in "$WORK"/hi/*.j2c; do stat -c %s "$f"; done | tr '\n' ' ')
    if [ "$dec" != "$want" ]; then fail $t "decoded frames differ from the source (sizes $sizes)"
    elif [ -n "$bad" ]; then fail $t "Rsiz not from the size:$bad"
    else ok $t "bit-exact, $sizes bytes, Rsiz $(rsiz "$WORK/hi/001.j2c")"; fi
else
    fail $t "$(last_err)"
fi

# -- with -b:v: under the budget, not lossless, and one warning at the default log level
t=imf_2k_r-with-bitrate
budget=$((2000000 / 25 / 8))
if "$FFMPEG" -nostdin -hide_banner -nostats -y $(raw yuv422p10le) -c:v jpeg2000_cuda -profile:v imf_2k_r \
       -b:v 2M "$WORK/br-%03d.j2c" 2> "$WORK/err"; then
    warn=$(grep -c 'reversible 5/3 transform is used, but the frames are lossy (not lossless)' "$WORK/err")
    over=$(for f in "$WORK"/br-*.j2c; do stat -c %s "$f"; done | awk -v b=$budget '$1 > b' | head -n 1)
    dec=$("$FFMPEG" -nostdin -v error -i "$WORK/br-%03d.j2c" -f framemd5 - | frame_hashes)
    if [ "$warn" != 1 ]; then fail $t "$warn warnings (want 1): $(head -c 300 "$WORK/err")"
    elif [ -n "$over" ]; then fail $t "a frame of $over bytes over the $budget-byte budget"
    elif [ "$(echo "$dec" | grep -c .)" != $N ]; then fail $t "$(echo "$dec" | grep -c .) frames decoded"
    elif [ "$dec" = "$(src_hashes yuv422p10le)" ]; then fail $t "lossless at 2 Mbit/s: the budget did not apply"
    else ok $t "frames <= $budget bytes, lossy, one warning"; fi
else
    fail $t "$(last_err)"
fi

t=pred-dwt53-with-bitrate-warns
if "$FFMPEG" -nostdin -hide_banner -nostats -y $(raw yuv444p) -c:v jpeg2000_cuda -pred dwt53 -b:v 2M \
       -f null - 2> "$WORK/err"; then
    n=$(grep -c '^\[jpeg2000_cuda.*-pred dwt53 with -b:v: .*lossy (not lossless)' "$WORK/err")
    [ "$n" = 1 ] && ok $t || fail $t "$n warnings: $(head -c 300 "$WORK/err")"
else
    fail $t "$(last_err)"
fi

t=pred-dwt53-with-psnr-warns
if "$FFMPEG" -nostdin -hide_banner -nostats -y $(raw yuv444p) -c:v jpeg2000_cuda -pred dwt53 -psnr 40 \
       -f null - 2> "$WORK/err"; then
    n=$(grep -c '^\[jpeg2000_cuda.*-pred dwt53 with -psnr: .*omit -psnr for lossless' "$WORK/err")
    [ "$n" = 1 ] && ok $t || fail $t "$n warnings: $(head -c 300 "$WORK/err")"
else
    fail $t "$(last_err)"
fi

finish
