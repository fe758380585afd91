#!/bin/sh
# The main job (`make demo`): on a fresh Debian machine, installs what is missing, builds the
# library and FFmpeg 7.1 with jpeg2000_cuda, makes a one-second real clip (a slow pan across
# a photograph of a canvas painting from Debian's mate-backgrounds package, 2048x1080 at 24 fps,
# converted to 12-bit X'Y'Z'), encodes it as DCI 2K (250 Mb/s, 24 fps) through
#     ffmpeg -c:v jpeg2000_cuda -profile:v dcinema_2k -b:v 250M -f mxf
# and checks the result: every codestream against the DCI rules (j2kc-check), the MXF decoded
# back by FFmpeg, one frame decoded by OpenJPEG, PSNR against the source.
# The encoder runs on the GPU when one is usable, else on the reference backend (it says so).
#
#   tools/demo.sh [BUILD_DIR]      environment: DEMO_FRAMES (default 24)
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
B=${1:-build}
FRAMES=${DEMO_FRAMES:-24}
OUTDIR="$B/demo"
DEPS="$ROOT/.deps/content"
W=2048 H=1080

say() { echo "demo: $*"; }
die() { echo "demo: error: $*" >&2; exit 1; }

tests/install-deps.sh
[ -f config.mak ] || ./configure
make B="$B"
tools/ffmpeg-build.sh "$B"
FF="$B/ffmpeg/ffmpeg"
FFPROBE="$B/ffmpeg/ffprobe"
# one CUDA hardware queue per frame in flight, which the library recommends and leaves to the
# application (doc/ffmpeg.md); kept when the caller set it
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-8}
SYSFF=/usr/bin/ffmpeg            # Debian's FFmpeg: JPEG decoding and scaling of the source photo
[ -x "$FF" ] || die "FFmpeg with jpeg2000_cuda was not built"
[ -x "$SYSFF" ] || die "Debian's ffmpeg package is missing (tests/install-deps.sh installs it as root)"

# ---- content: a real photograph from a Debian package ---------------------------------------
mkdir -p "$DEPS" "$OUTDIR"
IMG=$(find "$DEPS" -name 'Elephants_5640x3172.jpg' 2>/dev/null | head -n 1)
if [ -z "$IMG" ]; then
    say "fetching Debian package mate-backgrounds (content)"
    (cd "$DEPS" && apt-get download mate-backgrounds >/dev/null) || die "apt-get download mate-backgrounds failed"
    dpkg -x "$DEPS"/mate-backgrounds_*.deb "$DEPS/x"
    IMG=$(find "$DEPS" -name 'Elephants_5640x3172.jpg' | head -n 1)
    [ -n "$IMG" ] || die "Elephants_5640x3172.jpg not found in mate-backgrounds"
fi

# ---- GPU or not ------------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    say "GPU found: $(nvidia-smi -L | head -n 1); encoding with backend=auto (CUDA)"
else
    say "NOTICE: no NVIDIA GPU here: jpeg2000_cuda runs on its reference (CPU) backend;"
    say "        the codestreams are byte-identical to the GPU's, only slower"
fi

# ---- source clip: pan across the painting, 12-bit X'Y'Z' ------------------------------------
SRC="$OUTDIR/source_xyz12.nut"
say "making a $FRAMES-frame ${W}x${H} clip from $(basename "$IMG")"
"$SYSFF" -hide_banner -loglevel error -y -loop 1 -framerate 24 -i "$IMG" \
    -vf "scale=4096:-2:flags=lanczos,crop=$W:$H:x='min(iw-$W\,n*16)':y='(ih-$H)/2',format=rgb48le,format=xyz12le,setsar=1" \
    -frames:v "$FRAMES" -c:v rawvideo -f nut "$SRC"

# ---- the encode -------------------------------------------------------------------------------
MXF="$OUTDIR/dci2k.mxf"
say "encoding: ffmpeg -i source -c:v jpeg2000_cuda -profile:v dcinema_2k -b:v 250M -r 24 -f mxf $MXF"
t0=$(date +%s.%N)
"$FF" -hide_banner -y -i "$SRC" -c:v jpeg2000_cuda -profile:v dcinema_2k -b:v 250M -r 24 \
    -f mxf "$MXF"
t1=$(date +%s.%N)

# ---- checks -----------------------------------------------------------------------------------
rm -rf "$OUTDIR/j2c" && mkdir -p "$OUTDIR/j2c"
"$FF" -hide_banner -loglevel error -y -i "$MXF" -c:v copy -f image2 "$OUTDIR/j2c/%06d.j2c"
n=$(ls "$OUTDIR/j2c" | wc -l)
[ "$n" = "$FRAMES" ] || die "$n codestreams in the MXF, expected $FRAMES"
"$B/bin/j2kc-check" --fps 24 "$OUTDIR"/j2c/*.j2c > "$OUTDIR/check.log" || {
    cat "$OUTDIR/check.log"; die "DCI profile check failed"; }
maxb=$(for f in "$OUTDIR"/j2c/*.j2c; do stat -c %s "$f"; done | sort -n | tail -n 1)
psnr=$("$SYSFF" -hide_banner -i "$MXF" -i "$SRC" -lavfi "[0:v]format=rgb48le[a];[1:v]format=rgb48le[b];[a][b]psnr" \
       -f null - 2>&1 | sed -n 's/.*PSNR.* average:\([0-9.inf]*\).*/\1/p' | tail -n 1)
opj_decompress -i "$OUTDIR/j2c/000001.j2c" -o "$OUTDIR/000001.ppm" >/dev/null || die "OpenJPEG could not decode frame 1"
probe=$("$FFPROBE" -v error -select_streams v:0 -show_entries stream=codec_name,profile,width,height,pix_fmt \
        -of compact=p=0 "$MXF")

say "------------------------------------------------------------------"
say "MXF:               $MXF ($(stat -c %s "$MXF") bytes, $FRAMES frames)"
say "ffprobe:           $probe"
say "largest frame:     $maxb bytes (DCI 2K limit at 24 fps: 1302083)"
say "profile check:     all $n codestreams pass j2kc-check --fps 24"
say "OpenJPEG decode:   frame 1 ok"
say "PSNR vs source:    ${psnr:-?} dB (FFmpeg decode, 16-bit RGB domain)"
say "encode wall time:  $(echo "$t1 - $t0" | bc) s for $FRAMES frames"
rm -f "$SRC"
