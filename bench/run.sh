#!/usr/bin/env bash
# bench/run.sh BUILD_DIR: side-by-side speed benchmark (make bench). See bench/README.md.
#
# Same frames, one run: j2kcuda (CUDA and reference backends, through bench/j2kbench.c), Grok
# and OpenJPEG (all cores on one frame, and one single-threaded process per core), NVIDIA
# nvJPEG2000 at j2kcuda's PSNR. Prints progress, then a markdown table that it also writes to
# $BENCH_OUT/bench.md (default: $OUT when set, else BUILD_DIR/bench).
# Without a GPU (or without a CUDA build) the GPU rows are skipped with a message.
#
# Environment:
#   BENCH_CASES   frames to run, default "dci4k dci2k grain imf4k" ("none": none); the HTJ2K
#                 cases "ht-imf4k ht-dci4k" (issue 29) on request
#   BENCH_CLASSES content classes (bench/classes.sh; "all" or a list), default none;
#                 BENCH_CLASS_FRAMES, BENCH_CLASS_CBLK, BENCH_CLASS_BUDGETS, BENCH_CLASS_FULL,
#                 BENCH_CLASS_THREADS
#   BENCH_QUICK=1 fewer repetitions (harness testing)
#   BENCH_FFMPEG  ffmpeg with jpeg2000_cuda for the single-frame row (default BUILD_DIR/ffmpeg/ffmpeg)
#   BENCH_REF=0   skip the reference backend;  BENCH_PEERS=0 skip Grok/OpenJPEG
#   BENCH_OUT, BENCH_WORK (scratch, default /dev/shm), PEERS (default .dev/peers),
#   BENCH_FRAMES (frame sources, default .dev/frames)
set -u -o pipefail
commit_id() { { git rev-parse --short HEAD 2>/dev/null && { git diff --quiet HEAD 2>/dev/null || echo +dirty; } || echo unknown; } | tr -d '\n'; }
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
case $B in /*) ;; *) B=$ROOT/$B ;; esac
OUTD=${BENCH_OUT:-${OUT:-$B/bench}}
# scratch on tmpfs when it has room for the frames and codestreams (1 GB), else /tmp
shm_ok() { [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt 1048576 ]; }
SCR=${BENCH_WORK:-$(shm_ok && echo /dev/shm || echo /tmp)}/j2kbench.$$
CASES=${BENCH_CASES:-dci4k dci2k grain imf4k}
BYTE_EXACT=
QUICK=${BENCH_QUICK:-0}
DO_REF=${BENCH_REF:-1}
DO_PEERS=${BENCH_PEERS:-1}
PEERS=${PEERS:-$ROOT/.dev/peers}
FRAMES_SRC=${BENCH_FRAMES:-$ROOT/.dev/frames}
NVJ=$ROOT/.dev/nvjpeg2k
NPROC=$(nproc)
T_START=$(date +%s.%N)
mkdir -p "$OUTD" "$SCR/frames" "$SCR/cs" "$SCR/bin"
trap 'rm -rf "$SCR"' EXIT
RES=$OUTD/results.tsv
: > "$RES"

el() { awk -v a="$T_START" -v b="$(date +%s.%N)" 'BEGIN { printf "%6.1f", b - a }'; }
say() { echo "[bench $(el)s] $*"; }
now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b - a }'; }
# key=value field of a RESULT/PSNR line
kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }
# row: case encoder mode fps latency_ms bytes psnr notes
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$RES"; }

# ---- machine ---------------------------------------------------------------------------
say "j2kcuda bench: build=$B out=$OUTD cases='$CASES' cpus=$NPROC"
say "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
GPU=0
HAVE_CUDA=${BENCH_HAVE_CUDA:-$(sed -n 's/^HAVE_CUDA=//p' config.mak 2>/dev/null)}
CUDA_HOME=$(sed -n 's/^CUDA_HOME=//p' config.mak 2>/dev/null)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | head -n 1)"
    if [ "$HAVE_CUDA" = 1 ]; then GPU=1; else say "GPU present but config.mak has HAVE_CUDA=$HAVE_CUDA: GPU rows skipped"; fi
else
    say "no GPU here (nvidia-smi fails): the CUDA backend and nvJPEG2000 rows are skipped"
fi
[ -z "$CUDA_HOME" ] && CUDA_HOME=/usr/local/cuda

# ---- peers -----------------------------------------------------------------------------
if [ -x "$PEERS/bin/opj_compress" ]; then
    PLD=$PEERS/lib
    OPJ="env LD_LIBRARY_PATH=$PLD $PEERS/bin/opj_compress"
    GRK="env LD_LIBRARY_PATH=$PLD $PEERS/bin/grk_compress"
    say "peers: $PEERS (Debian bookworm $(grep -o 'libopenjp2-tools_[^_]*' "$PEERS/PACKAGES" | cut -d_ -f2), grokj2k $(grep -o 'grokj2k-tools_[^_]*' "$PEERS/PACKAGES" | cut -d_ -f2))"
elif command -v opj_compress >/dev/null && command -v grk_compress >/dev/null; then
    PLD=
    OPJ=opj_compress
    GRK=grk_compress
    say "peers: system opj_compress/grk_compress ($PEERS missing)"
else
    say "peers: none (run tools/fetch-peers.sh): Grok/OpenJPEG rows skipped"
    DO_PEERS=0
    PLD=
fi

# OpenJPH (HTJ2K only): from .dev/peers when tools/fetch-peers.sh put it there, else the system's
if [ -x "$PEERS/bin/ojph_compress" ]; then
    OJPH="env LD_LIBRARY_PATH=$PEERS/lib $PEERS/bin/ojph_compress"
elif command -v ojph_compress >/dev/null; then
    OJPH=ojph_compress
else
    OJPH=
fi
[ -n "$OJPH" ] && say "OpenJPH: ${OJPH##* } (HTJ2K cases)" || say "OpenJPH: none (tools/fetch-peers.sh): its HTJ2K rows say skip"

# ---- frames ----------------------------------------------------------------------------
if [ "$CASES" = none ]; then
    CASES=
else
    say "frames: from $FRAMES_SRC"
    PEERS=$PEERS sh bench/frames.sh "$FRAMES_SRC" "$SCR/frames" | sed 's/^/    /' || { say "frames failed"; exit 1; }
fi
F=$SCR/frames

# per case: file, j2kbench format args, our params, peer args, nvj args, label
case_setup() {
    C_FILE= ; C_FMT= ; C_OURS= ; C_OURS_FALLBACK= ; C_OPJ= ; C_GRK= ; C_NVJ= ; C_LABEL=
    C_OJPH= ; C_BYTES= ; C_LOSSLESS=0
    case $1 in
    dci4k)
        C_FILE=$(ls "$F"/dci4k_*.ppm 2>/dev/null | head -n 1)
        C_LABEL="4K DCI 4096x2160 12-bit 4:4:4, 250 Mb/s (1302083 B)"
        C_OURS="profile=dci4k fps=24 bitrate=250"
        C_OURS_FALLBACK="bytes=1302083 levels=6 cblk=32x32 prec=128x128,256x256 order=cprl"
        C_OPJ="-cinema4K"; C_GRK="-x 24"
        C_NVJ="--dci --levels 6 --cblk 32" ;;
    dci2k)
        C_FILE=$(ls "$F"/dci2k_*.ppm 2>/dev/null | head -n 1)
        C_LABEL="2K DCI $(basename "$C_FILE" | grep -o '[0-9][0-9]*x[0-9][0-9]*' | head -n 1) 12-bit 4:4:4, 250 Mb/s"
        C_OURS="profile=dci2k fps=24 bitrate=250"
        C_OURS_FALLBACK="bytes=1302083 levels=5 cblk=32x32 prec=128x128,256x256 order=cprl"
        C_OPJ="-cinema2K 24"; C_GRK="-w 24"
        C_NVJ="--dci --levels 5 --cblk 32" ;;
    grain)
        C_FILE=$(ls "$F"/grain_*.ppm 2>/dev/null | head -n 1)
        C_LABEL="grain $(basename "$C_FILE" | grep -o '[0-9][0-9]*x[0-9][0-9]*' | head -n 1) 12-bit (StEM film scan), 250 Mb/s"
        C_OURS="profile=dci2k fps=24 bitrate=250"
        C_OURS_FALLBACK="bytes=1302083 levels=5 cblk=32x32 prec=128x128,256x256 order=cprl"
        C_OPJ="-cinema2K 24"; C_GRK="-w 24"
        C_NVJ="--dci --levels 5 --cblk 32" ;;
    imf4k)
        C_FILE=$(ls "$F"/imf4k_*.yuv 2>/dev/null | head -n 1)
        C_FMT="-f yuv422p10le -s 4096x2160"
        C_LABEL="4K IMF 4096x2160 10-bit 4:2:2 lossless"
        C_OURS="profile=imf4k_r lossless=1"
        C_OURS_FALLBACK="lossless=1"
        C_OPJ="-F 4096,2160,3,10,u@1x1:2x1:2x1"; C_GRK=
        C_NVJ="--lossless --levels 5 --cblk 64" ;;
    # HTJ2K (ISO/IEC 15444-15, issue 29): the same frames with the High-Throughput block coder,
    # 5 levels and 64x64 code-blocks everywhere; OpenJPEG and Grok 10 do not encode HT
    ht-imf4k)
        C_FILE=$(ls "$F"/imf4k_*.yuv 2>/dev/null | head -n 1)
        C_FMT="-f yuv422p10le -s 4096x2160"
        C_LABEL="4K IMF 4096x2160 10-bit 4:2:2 lossless, HTJ2K"
        C_OURS="profile=imf_ht_r lossless=1"
        C_OURS_FALLBACK="ht=1 lossless=1"
        C_LOSSLESS=1
        # ojph_compress reads the planes (16-bit little-endian words) under a .yuv name; its raw
        # input takes no colour transform, so none is asked
        C_OJPH="-num_comps 3 -dims {4096,2160} -signed false,false,false -bit_depth 10,10,10 -downsamp {1,1},{2,1},{2,1} -reversible true"
        C_NVJ="--ht --lossless --levels 5 --cblk 64" ;;
    ht-dci4k)
        C_FILE=$(ls "$F"/dci4k_*.ppm 2>/dev/null | head -n 1)
        C_LABEL="4K 4096x2160 12-bit 4:4:4 X'Y'Z', HTJ2K at 1302083 B"
        C_BYTES=1302083
        C_OURS="ht=1 bytes=$C_BYTES cblk=64x64"
        C_OURS_FALLBACK=$C_OURS
        C_OJPH="-reversible false"
        C_NVJ="--ht --levels 5 --cblk 64" ;;
    esac
}

# ---- tools -----------------------------------------------------------------------------
LIB=$B/lib/libj2kcuda.a
HAVE_OURS=0
if [ -f "$LIB" ]; then
    if [ "$HAVE_CUDA" = 1 ]; then
        # --pinned's buffer through the library's driver table (cuda/cu_primary.h): its headers
        # and the CUDA SDK's; no CUDA library linked
        JB_FLAGS="-DJ2KB_CUDA=1 -Ij2kcuda/src -I$CUDA_HOME/include"
        JB_LIBS="-ldl -lrt -lstdc++ -lpthread -lm"
    else
        JB_FLAGS=
        JB_LIBS="-lm -lpthread"
    fi
    if cc -std=c99 -O2 -Wall $JB_FLAGS -Ij2kcuda/include -Ibench -o "$SCR/bin/j2kbench" \
          bench/j2kbench.c "$LIB" $JB_LIBS 2> "$SCR/jb.err"; then
        HAVE_OURS=1
        say "built j2kbench against $LIB"
    else
        say "j2kbench does not link against $LIB (library incomplete?): our rows skipped"
        head -n 5 "$SCR/jb.err" | sed 's/^/    /'
    fi
else
    say "$LIB missing (make B=$B first): our rows skipped"
fi
HAVE_PSNR=0
if [ -n "$PLD" ] && cc -std=c99 -O2 -Ibench -o "$SCR/bin/j2kpsnr" bench/j2kpsnr.c -L"$PLD" \
        -l:libopenjp2.so.7 -Wl,-rpath,"$PLD" -lm 2> "$SCR/jp.err"; then
    HAVE_PSNR=1
elif cc -std=c99 -O2 -Ibench -o "$SCR/bin/j2kpsnr" bench/j2kpsnr.c -l:libopenjp2.so.7 -lm 2> "$SCR/jp.err"; then
    HAVE_PSNR=1
fi
[ $HAVE_PSNR = 1 ] || say "j2kpsnr does not build (no libopenjp2.so.7): PSNR column empty"
HAVE_NVJ=0
if [ $GPU = 1 ]; then
    if [ -f "$NVJ/include/nvjpeg2k.h" ] && cc -std=c99 -O2 -Ibench -I"$CUDA_HOME/include" -I"$NVJ/include" \
            -o "$SCR/bin/nvj2k_bench" bench/nvj2k_bench.c -L"$NVJ/lib" -l:libnvjpeg2k.so.0 \
            -Wl,-rpath,"$NVJ/lib" -L"$CUDA_HOME/lib64" -lcudart_static -ldl -lrt -lpthread -lm 2> "$SCR/nv.err"; then
        HAVE_NVJ=1
        say "built nvj2k_bench against $NVJ"
    else
        say "nvj2k_bench not built ($NVJ missing or compile error): nvJPEG2000 rows skipped"
        head -n 5 "$SCR/nv.err" 2>/dev/null | sed 's/^/    /'
    fi
fi

HAVE_PCIE=0
if [ $GPU = 1 ]; then
    if cc -std=c99 -O2 -Wall -I"$CUDA_HOME/include" -o "$SCR/bin/pcie_floor" bench/pcie_floor.c \
            -L"$CUDA_HOME/lib64" -lcudart_static -ldl -lrt -lpthread -lm 2> "$SCR/pf.err"; then
        HAVE_PCIE=1
    else
        say "pcie_floor not built: the stage table has no PCIe floor"
        head -n 5 "$SCR/pf.err" | sed 's/^/    /'
    fi
fi
FFMPEG=${BENCH_FFMPEG:-$B/ffmpeg/ffmpeg}
NPY=${PYTHON:-}   # a python3 with numpy (ffmpeg's raw frame), found as bench/frames.sh does
if [ -z "$NPY" ]; then
    for p in python3 /usr/bin/python3; do "$p" -c 'import numpy' >/dev/null 2>&1 && { NPY=$p; break; }; done
fi

psnr_of() { # SRC_FILE FMT_ARGS CODESTREAM -> "psnr" or "-"
    [ $HAVE_PSNR = 1 ] || { echo -; return; }
    local l
    l=$("$SCR/bin/j2kpsnr" "$1" $2 "$3" "$NPROC" 2>/dev/null)
    [ -n "$l" ] && kv "$l" psnr || echo -
}

# ---- our encoder -----------------------------------------------------------------------
# ours CASE BACKEND MODE "params" j2kbench-args...   (params: C_OURS or C_OURS_FALLBACK + extra)
ours() {
    local cs=$1 be=$2 mode=$3 params=$4; shift 4
    local out=$SCR/cs/${cs}_ours_${be}_${mode}.j2k args=() p l rc
    # one j2kbench run with the current args (stderr appended to $SCR/err)
    jb() { timeout "${OURS_TIMEOUT:-300}" "$SCR/bin/j2kbench" -i "$C_FILE" $C_FMT "${args[@]}" -o "$out" "$@" 2>> "$SCR/err"; }
    for p in $params backend=$be; do args+=(-p "$p"); done
    : > "$SCR/err"
    l=$(jb "$@"); rc=$?
    if [ -z "$l" ] && grep -q "j2kc_encoder_create" "$SCR/err" && [[ "$params" == *profile=* ]]; then
        say "  profile refused ($(grep -m1 -v '^j2kbench:' "$SCR/err" | cut -c1-120)); retrying without the profile"
        params="$C_OURS_FALLBACK ${params#$C_OURS}"
        args=()
        for p in $params backend=$be; do args+=(-p "$p"); done
        : > "$SCR/err"
        l=$(jb "$@"); rc=$?
    fi
    if [ -z "$l" ]; then
        say "  j2kcuda $be $mode FAILED (rc=$rc): $(grep -v '^j2kbench:' "$SCR/err" | head -n 3 | tr '\n' ' ' | cut -c1-300)"
        row "$cs" "j2kcuda-$be" "$mode" - - - - "$([ $rc = 124 ] && echo "timed out after ${OURS_TIMEOUT:-300} s" || echo "failed rc=$rc")"
        return 1
    fi
    [ $rc = 3 ] && say "  WARNING: codestreams of one frame differ between runs (race?)"
    # GPU rows: BENCH_REPS runs (default 3), the row is the run of median frame rate (the
    # frame rates on one machine scatter by up to 10 % between runs a minute apart:
    # bench/results/history.md#run-to-run-spread)
    local reps=${BENCH_REPS:-3} runs=$l k l2 allfps
    [ "$QUICK" = 1 ] && reps=1
    if [ "$be" = cuda ] && [ "$reps" -gt 1 ] && [ "$(kv "$l" frames)" != 0 ]; then
        for k in $(seq 2 "$reps"); do
            l2=$(jb "$@") && [ -n "$l2" ] && runs=$(printf '%s\n%s' "$runs" "$l2")
        done
        allfps=$(echo "$runs" | while read -r x; do kv "$x" fps; done | sort -g | tr '\n' ' ')
        l=$(echo "$runs" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^fps=/) { split($i, a, "="); print a[2] "\t" $0 } }' |
            sort -g | awk -F'\t' '{ r[NR] = $2 } END { print r[int((NR + 1) / 2)] }')
    fi
    local ps fps
    ps=$(psnr_of "$C_FILE" "$C_FMT" "$out")
    fps=$(kv "$l" fps)
    [ "$(kv "$l" frames)" = 0 ] && fps=$(awk -v l="$(kv "$l" latency_ms)" 'BEGIN { printf "%.3f", 1000 / l }')
    local notes="identical=$(kv "$l" identical)"
    [ -n "$(kv "$l" cpu_cores)" ] && [ "$(kv "$l" frames)" != 0 ] && notes="$notes; CPU $(kv "$l" cpu_cores) cores"
    [ -n "${allfps:-}" ] && notes="$notes; median of $(echo $allfps | wc -w) runs: $(echo $allfps | sed 's/ / \/ /g') fps"
    f2() { printf %.2f "$(kv "$l" "$1")"; }
    [ -n "$(kv "$l" st_total)" ] && notes="$notes; stages ms: up $(f2 st_upload) mct+dwt $(f2 st_mct_dwt) t1 $(f2 st_t1) rc $(f2 st_rc) t2 $(f2 st_t2) down $(f2 st_download) total $(f2 st_total)$([ "$be" = cuda ] && echo "; devmem/slot $(kv "$l" devmem_mb) MB")"
    [ "$be" = cuda ] && [ -n "$(kv "$l" load_total)" ] && notes="$notes; under load ms: up $(f2 load_upload) mct+dwt $(f2 load_mct_dwt) t1 $(f2 load_t1) rc $(f2 load_rc) t2 $(f2 load_t2) down $(f2 load_download) total $(f2 load_total)"
    # start-up of every run, in run order (issue 26 point 3: the report takes their medians)
    allkv() { echo "$runs" | while read -r x; do kv "$x" "$1"; done | paste -sd' ' | sed 's/ / \/ /g'; }
    [ -n "$(kv "$l" create_ms)" ] && notes="$notes; start-up ms: create $(allkv create_ms), first $(allkv first_ms)"
    local lat; lat=$(printf %.2f "$(kv "$l" latency_ms)")
    row "$cs" "j2kcuda-$be" "$mode" "$fps" "$lat" "$(kv "$l" bytes)" "$ps" "$notes; params: $params"
    say "  j2kcuda $be $mode: $fps fps, latency $lat ms, $(kv "$l" bytes) B, PSNR $ps"
    LAST_PSNR=$ps
}

# cross-check with the CLI: j2kc --bench N (no warm-up: the first frame's start-up included)
cli_bench() {
    local cs=$1 l fps args=() p
    [ -x "$B/bin/j2kc" ] || return 0
    [ -z "$C_FMT" ] || return 0
    for p in $C_OURS; do args+=(--${p%%=*} "${p#*=}"); done
    l=$(timeout 60 "$B/bin/j2kc" -i "$C_FILE" -o "$SCR/cs/${cs}_cli.j2k" "${args[@]}" --backend cuda --async ${BENCH_ASYNC:-8} --bench 100 2>&1 | tail -n 1)
    fps=$(echo "$l" | grep -o '[0-9.]* frames/s' | cut -d' ' -f1)
    if [ -n "$fps" ]; then
        row "$cs" j2kc-cli "--bench 100" "$fps" - "$(stat -c %s "$SCR/cs/${cs}_cli.j2k" 2>/dev/null)" - "cross-check: tools/j2kc, first frame (start-up) included"
        say "  j2kc --bench 100: $fps fps"
    else
        say "  j2kc --bench failed: $(echo "$l" | cut -c1-200)"
    fi
}

# ---- PCIe floor and ffmpeg (issue 26, points 3 and 4) -----------------------------------
# ppm_geom PPM -> "width height maxval data_offset" (a binary P6 header; '#' comments, as
# opj_decompress writes, skipped)
ppm_geom() {
    python3 -c '
import re, sys
d = open(sys.argv[1], "rb").read(4096)
f, pos = [], 0
while len(f) < 4:
    m = re.compile(rb"(?:\s|#[^\n]*\n)*([^\s#]+)").match(d, pos)
    if not m:
        sys.exit(1)
    f.append(m.group(1))
    pos = m.end()
if f[0] != b"P6" or not all(x.isdigit() for x in f[1:]) or not d[pos:pos + 1].isspace():
    sys.exit(1)
print(*(int(x) for x in f[1:]), pos + 1)' "$1" 2>/dev/null
}

# pcie_row CASE: host-to-device copy of the frame's bytes (16-bit samples, as the library takes
# them) from pinned and from pageable memory, measured here in this run (bench/pcie_floor.c)
pcie_row() {
    local cs=$1 g bytes l
    [ $HAVE_PCIE = 1 ] || return 0
    if [ -n "$C_FMT" ]; then
        # planar raw frames (yuv422p10le) are the library's 16-bit samples already
        bytes=$(stat -c %s "$C_FILE")
    else
        g=$(ppm_geom "$C_FILE") || { say "  pcie_floor: $C_FILE is not a P6 PPM"; return 0; }
        set -- $g
        bytes=$(($1 * $2 * 3 * ($3 > 255 ? 2 : 1)))
    fi
    if ! l=$("$SCR/bin/pcie_floor" "$bytes" 2> "$SCR/pf.err") || [ -z "$l" ]; then
        say "  pcie_floor FAILED: $(tail -n 1 "$SCR/pf.err" | cut -c1-200)"
        row "$cs" pcie-h2d floor - - "$bytes" - "failed: $(tail -n 1 "$SCR/pf.err" | cut -c1-120)"
        return 0
    fi
    row "$cs" pcie-h2d floor - "$(kv "$l" pinned_ms)" "$bytes" - "${l#PCIE }"
    say "  PCIe floor, $bytes B host to device: pinned $(kv "$l" pinned_ms) ms ($(kv "$l" pinned_gbs) GB/s), pageable $(kv "$l" pageable_ms) ms ($(kv "$l" pageable_gbs) GB/s)"
}

# ffmpeg_row CASE: wall time of an ffmpeg process that encodes the frame alone with
# jpeg2000_cuda (process start, reading the raw frame, encoder creation, one frame, writing it),
# median of 3 (1 with BENCH_QUICK); the CUDA backend on the GPU machine, else the reference one.
# Its bytes are not compared with j2kbench's: FFmpeg's codestream carries a COM marker (the
# encoder's name) inside the same budget.
ffmpeg_row() {
    local cs=$1 be=ref raw=$SCR/frames/$1.xyz12le out=$SCR/cs/$1_ffmpeg.j2c g wh t0 t1 i med rc
    local reps=3 times=()
    [ "$QUICK" = 1 ] && reps=1
    [ $GPU = 1 ] && be=cuda
    if [ ! -x "$FFMPEG" ] || [[ "$("$FFMPEG" -hide_banner -h encoder=jpeg2000_cuda 2>/dev/null)" != *jpeg2000_cuda* ]]; then
        say "  ffmpeg: no ffmpeg with jpeg2000_cuda at $FFMPEG: row skipped"
        row "$cs" ffmpeg "1 frame" - - - - "skip: no ffmpeg with jpeg2000_cuda at $FFMPEG (BENCH_FFMPEG, or make ffmpeg)"
        return 0
    fi
    # the PPM's big-endian samples as FFmpeg's xyz12le: little-endian 16-bit words, the 12 bits
    # at the top (shift 4), so that ffmpeg converts nothing
    if ! g=$(ppm_geom "$C_FILE") || ! "${NPY:-python3}" -c '
import sys, numpy as np
w, h, mx, off = map(int, sys.argv[3:7])
a = np.fromfile(sys.argv[1], ">u2", count=w * h * 3, offset=off)
(a.astype("<u2") << (16 - mx.bit_length())).astype("<u2").tofile(sys.argv[2])' "$C_FILE" "$raw" $g 2> "$SCR/ff.log"; then
        say "  ffmpeg: frame conversion failed ($(tail -n 1 "$SCR/ff.log" | cut -c1-120))"
        row "$cs" ffmpeg "1 frame" - - - - "failed: frame conversion (python3 with numpy)"
        return 0
    fi
    set -- $g
    wh=${1}x$2
    for i in $(seq $reps); do
        rm -f "$out"
        t0=$(now)
        # one CUDA hardware queue per frame in flight, which the library leaves to the application
        # (doc/ffmpeg.md); j2kbench sets its own from its async_depth
        CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-8} timeout 120 "$FFMPEG" -nostdin -hide_banner -loglevel error -y -f rawvideo -pix_fmt xyz12le -s "$wh" \
            -framerate 24 -i "$raw" -frames:v 1 -c:v jpeg2000_cuda -backend $be -profile dcinema_4k -b:v 250M \
            -async_depth "${BENCH_ASYNC:-8}" -f image2 -update 1 "$out" > "$SCR/ff.log" 2>&1
        rc=$?
        t1=$(now)
        if [ $rc != 0 ] || [ ! -s "$out" ]; then
            say "  ffmpeg FAILED (rc=$rc): $(tail -n 2 "$SCR/ff.log" | tr '\n' ' ' | cut -c1-200)"
            row "$cs" ffmpeg "1 frame" - - - - "failed rc=$rc: $(tail -n 1 "$SCR/ff.log" | cut -c1-120)"
            rm -f "$raw"
            return 0
        fi
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')")
    done
    rm -f "$raw"
    med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    row "$cs" ffmpeg "1 frame" - "$med" "$(stat -c %s "$out")" "$(psnr_of "$C_FILE" "" "$out")" \
        "wall ms of $reps runs: $(echo "${times[*]}" | sed 's/ / \/ /g'); backend=$be async_depth=${BENCH_ASYNC:-8}; process start, raw xyz12le read from tmpfs, encoder creation, one frame, .j2c written"
    say "  ffmpeg, one frame alone: $med ms wall (runs: ${times[*]})"
}

# ---- peers -----------------------------------------------------------------------------
peer_in() { # the peers read PPM, or the raw planes under a .rawl name
    if [ -n "$C_FMT" ]; then ln -sf "$C_FILE" "$SCR/frames/$1.rawl"; echo "$SCR/frames/$1.rawl"; else echo "$C_FILE"; fi
}
# peer_threaded CASE NAME: one frame at a time, all cores; median of REPS
peer_threaded() {
    local cs=$1 name=$2 in out t0 t1 times=() reps=3 cmd
    [ "$QUICK" = 1 ] && reps=1
    in=$(peer_in "$cs")
    out=$SCR/cs/${cs}_${name}_mt.j2k
    if [ $name = opj ]; then cmd="$OPJ -i $in -o $out $C_OPJ -threads $NPROC"
    else [ -z "$C_GRK" ] && { row "$cs" grk threads=$NPROC - - - - "n/a: grk_compress 10.0.5 cannot read subsampled raw"; return; }
         cmd="$GRK -i $in -o $out $C_GRK -H $NPROC"; fi
    for i in $(seq $reps); do
        rm -f "$out"
        t0=$(now); $cmd > "$SCR/peer.log" 2>&1; t1=$(now)
        if [ ! -s "$out" ]; then
            say "  $name failed: $(grep -i -m 2 'error' "$SCR/peer.log" | tr '\n' ' ' | cut -c1-200)"
            row "$cs" "$name" "threads=$NPROC" - - - - failed; return
        fi
        times+=("$(sub "$t0" "$t1")")
    done
    local med ps
    med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    ps=$(psnr_of "$C_FILE" "$C_FMT" "$out")
    row "$cs" "$name" "threads=$NPROC" "$(awk -v t="$med" 'BEGIN { printf "%.3f", 1 / t }')" \
        "$(awk -v t="$med" 'BEGIN { printf "%.1f", t * 1000 }')" "$(stat -c %s "$out")" "$ps" "median of $reps, process start and file I/O (tmpfs) included"
    say "  $name $NPROC threads: $(awk -v t="$med" 'BEGIN { printf "%.3f", 1 / t }') fps ($med s/frame), $(stat -c %s "$out") B, PSNR $ps"
}
# peer_parallel CASE NAME: NPROC single-threaded processes, one frame each, all started together
peer_parallel() {
    local cs=$1 name=$2 in t0 t1 cmd n=$NPROC
    in=$(peer_in "$cs")
    [ $name = grk ] && [ -z "$C_GRK" ] && { row "$cs" grk "${n}x1 procs" - - - - "n/a: subsampled raw"; return; }
    t0=$(now)
    for i in $(seq $n); do
        if [ $name = opj ]; then $OPJ -i "$in" -o "$SCR/cs/${cs}_${name}_p$i.j2k" $C_OPJ -threads 1 > /dev/null 2>&1 &
        else $GRK -i "$in" -o "$SCR/cs/${cs}_${name}_p$i.j2k" $C_GRK -H 1 > /dev/null 2>&1 & fi
    done
    wait
    t1=$(now)
    local dt; dt=$(sub "$t0" "$t1")
    local ok; ok=$(ls "$SCR"/cs/${cs}_${name}_p*.j2k 2>/dev/null | wc -l)
    row "$cs" "$name" "${n}x1 procs" "$(awk -v n="$ok" -v t="$dt" 'BEGIN { printf "%.3f", n / t }')" \
        "$(awk -v t="$dt" 'BEGIN { printf "%.1f", t * 1000 }')" "$(stat -c %s "$SCR/cs/${cs}_${name}_p1.j2k" 2>/dev/null || echo -)" - \
        "$ok frames in ${dt}s; latency = wall time of the batch"
    say "  $name $n x 1-thread processes: $ok frames in ${dt}s = $(awk -v n="$ok" -v t="$dt" 'BEGIN { printf "%.3f", n / t }') fps"
    rm -f "$SCR"/cs/${cs}_${name}_p*.j2k
}

# ---- OpenJPH (HTJ2K cases) -------------------------------------------------------------
# ojph_run OUT [extra args]: one ojph_compress of the case's frame (single-threaded: OpenJPH's
# tool codes a frame on one thread)
ojph_run() { local o=$1; shift; $OJPH -i "$C_FILE" -o "$o" $C_OJPH "$@" > "$SCR/ojph.log" 2>&1 && [ -s "$o" ]; }
# ojph_qstep_search BYTES -> the -qstep whose codestream is closest to BYTES (size ~ qstep^-k,
# log-log secant steps; within 0.5 % or the closest of 10 tries)
ojph_qstep_search() {
    local target=$1 q=0.05 k=1.0 it b best= berr=1e30 lq0= lb0= err o=$SCR/cs/ojph_search.j2c
    for it in 1 2 3 4 5 6 7 8 9 10; do
        ojph_run "$o" -qstep "$q" || return 1
        b=$(stat -c %s "$o")
        err=$(awk -v b="$b" -v t="$target" 'BEGIN { e = b / t - 1; print (e < 0 ? -e : e) }')
        say "  OpenJPH qstep $q -> $b B (target $target)" >&2
        awk -v e="$err" -v be="$berr" 'BEGIN { exit !(e < be) }' && { berr=$err; best=$q; }
        awk -v e="$err" 'BEGIN { exit !(e < 0.005) }' && break
        read -r q k lq0 lb0 < <(awk -v q="$q" -v b="$b" -v t="$target" -v k="$k" -v lq0="$lq0" -v lb0="$lb0" 'BEGIN {
            lq = log(q); lb = log(b)
            if (lq0 != "" && lq != lq0) { k2 = -(lb - lb0) / (lq - lq0); if (k2 > 0.1 && k2 < 10) k = k2 }
            nq = exp(lq + (lb - log(t)) / k)
            if (nq > 0.5) nq = 0.5
            if (nq < 0.00001) nq = 0.00001
            printf "%.6g %.6g %.9g %.9g\n", nq, k, lq, lb }')
    done
    rm -f "$o"
    echo "$best"
}
# ojph_rows CASE BYTES|lossless: OpenJPH, one process on one frame (median of 3), then one
# single-threaded process per core started together (as peer_parallel)
ojph_rows() {
    local cs=$1 target=$2 q= extra=() out=$SCR/cs/${1}_ojph.j2c t0 t1 i times=() reps=3 med ps n=$NPROC ok dt note
    [ "$QUICK" = 1 ] && reps=1
    if [ -z "$OJPH" ]; then
        row "$cs" ojph "1 proc" - - - - "skip: no ojph_compress (tools/fetch-peers.sh, or Debian openjph-tools)"
        return 0
    fi
    if [ "$target" != lossless ]; then
        q=$(ojph_qstep_search "$target")
        if [ -z "$q" ]; then
            say "  OpenJPH failed: $(tail -n 1 "$SCR/ojph.log" | cut -c1-200)"
            row "$cs" ojph "1 proc" - - - - "failed: $(tail -n 1 "$SCR/ojph.log" | cut -c1-120)"
            return 0
        fi
        extra=(-qstep "$q")
        note="qstep $q searched for about $target B; "
    else
        note="-reversible true; "
    fi
    for i in $(seq $reps); do
        rm -f "$out"
        t0=$(now)
        if ! ojph_run "$out" "${extra[@]}"; then
            say "  OpenJPH failed: $(tail -n 1 "$SCR/ojph.log" | cut -c1-200)"
            row "$cs" ojph "1 proc" - - - - "failed: $(tail -n 1 "$SCR/ojph.log" | cut -c1-120)"
            return 0
        fi
        t1=$(now)
        times+=("$(sub "$t0" "$t1")")
    done
    med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    ps=$(psnr_of "$C_FILE" "$C_FMT" "$out")
    row "$cs" ojph "1 proc" "$(awk -v t="$med" 'BEGIN { printf "%.3f", 1 / t }')" \
        "$(awk -v t="$med" 'BEGIN { printf "%.1f", t * 1000 }')" "$(stat -c %s "$out")" "$ps" \
        "${note}median of $reps, one thread, process start and file I/O (tmpfs) included"
    say "  OpenJPH 1 process: $(awk -v t="$med" 'BEGIN { printf "%.3f", 1 / t }') fps, $(stat -c %s "$out") B, PSNR $ps"
    t0=$(now)
    for i in $(seq $n); do
        $OJPH -i "$C_FILE" -o "$SCR/cs/${cs}_ojph_p$i.j2c" $C_OJPH "${extra[@]}" > /dev/null 2>&1 &
    done
    wait
    t1=$(now)
    dt=$(sub "$t0" "$t1")
    ok=0
    for i in $(seq $n); do cmp -s "$out" "$SCR/cs/${cs}_ojph_p$i.j2c" && ok=$((ok + 1)); done
    row "$cs" ojph "${n}x1 procs" "$(awk -v n="$ok" -v t="$dt" 'BEGIN { printf "%.3f", n / t }')" \
        "$(awk -v t="$dt" 'BEGIN { printf "%.1f", t * 1000 }')" "$(stat -c %s "$out")" "$ps" \
        "${note}$ok of $n frames equal to the 1-process codestream in ${dt}s; latency = wall time of the batch"
    say "  OpenJPH $n x 1-thread processes: $ok frames in ${dt}s = $(awk -v n="$ok" -v t="$dt" 'BEGIN { printf "%.3f", n / t }') fps"
    rm -f "$SCR"/cs/${cs}_ojph_p*.j2c
}

# ---- nvJPEG2000 ------------------------------------------------------------------------
# nvj_ht CASE BYTES|lossless: nvJPEG2000's HT encoder, which takes no rate or PSNR target: its
# quantisation step is searched for about BYTES (nvj2k_bench --bytes), then timed at that step
nvj_ht() {
    local cs=$1 target=$2 l s out=$SCR/cs/${1}_nvj.j2k q= ps A=$C_NVJ
    local n=300 t=3; [ "$QUICK" = 1 ] && { n=30; t=2; }
    local NVB=$SCR/bin/nvj2k_bench qa=()
    if [ "$target" != lossless ]; then
        l=$("$NVB" -i "$C_FILE" $C_FMT $A --bytes "$target" -n 1 -l 1 -t 1 -o "$out" 2> "$SCR/nverr")
        q=$(kv "$l" quality)
        if [ -z "$q" ]; then
            say "  nvJPEG2000 HT step search FAILED: $(tail -n 2 "$SCR/nverr" | tr '\n' ' ' | cut -c1-300)"
            row "$cs" nvjpeg2k-ht "streams=1" - - - - "failed: $(tail -n 1 "$SCR/nverr" | cut -c1-120)"
            return 0
        fi
        say "  nvJPEG2000 HT: qstep $q -> $(kv "$l" bytes) B (target $target, $(kv "$l" search_iters) tries)"
        qa=(--qstep "$q")
    fi
    for s in 1 4; do
        l=$("$NVB" -i "$C_FILE" $C_FMT $A "${qa[@]}" --streams $s -n $n -t $t -o "$out" 2> "$SCR/nverr")
        if [ -z "$l" ]; then
            say "  nvJPEG2000 HT streams=$s FAILED: $(tail -n 3 "$SCR/nverr" | tr '\n' ' ' | cut -c1-300)"
            row "$cs" nvjpeg2k-ht "streams=$s" - - - - "failed: $(tail -n 1 "$SCR/nverr" | cut -c1-120)"
            continue
        fi
        ps=$(psnr_of "$C_FILE" "$C_FMT" "$out")
        row "$cs" nvjpeg2k-ht "streams=$s" "$(kv "$l" fps)" "$(printf %.2f "$(kv "$l" latency_ms)")" "$(kv "$l" bytes)" "$ps" \
            "$([ -n "$q" ] && echo "QUANTIZATION_STEP $q searched for about $target B" || echo "reversible 5/3"); 64x64 blocks; nvJPEG2000's own decode: $(kv "$l" psnr_nvj) dB; pinned input"
        say "  nvJPEG2000 HT streams=$s: $(kv "$l" fps) fps, latency $(kv "$l" latency_ms) ms, $(kv "$l" bytes) B, PSNR $ps"
    done
}

nvj() {
    local cs=$1 target=$2 l s out=$SCR/cs/${cs}_nvj.j2k q= ps it
    local n=300 t=3; [ "$QUICK" = 1 ] && { n=30; t=2; }
    local NVB=$SCR/bin/nvj2k_bench A=$C_NVJ note=
    if [ "$target" != lossless ]; then
        # quality search: first nvJPEG2000's own decode (in nvj2k_bench), then checked and
        # refined here with the OpenJPEG decode that measures every other row
        l=$("$NVB" -i "$C_FILE" $C_FMT $A --psnr "$target" -n 1 -l 1 -t 1 -o "$out" 2> "$SCR/nverr")
        if [ -z "$l" ] && [[ "$A" == *--dci* ]] &&
           ! "$NVB" -i "$C_FILE" $C_FMT $A --quality "$target" -n 1 -l 1 -t 1 -o "$out" > /dev/null 2>&1; then
            say "  nvJPEG2000 refuses the DCI precincts/CPRL ($(tail -n 1 "$SCR/nverr" | cut -c1-100)): default precincts, LRCP"
            A=${A/--dci/}
            note="; no DCI precincts (refused)"
            l=$("$NVB" -i "$C_FILE" $C_FMT $A --psnr "$target" -n 1 -l 1 -t 1 -o "$out" 2> "$SCR/nverr")
        fi
        if [ -n "$l" ]; then q=$(kv "$l" quality)
        else say "  nvJPEG2000 in-tool PSNR search failed ($(tail -n 1 "$SCR/nverr" | cut -c1-120)); searching with j2kpsnr"; q=$target; fi
        for it in 1 2 3 4 5; do
            l=$("$NVB" -i "$C_FILE" $C_FMT $A --quality "$q" -n 1 -l 1 -t 1 -o "$out" 2> "$SCR/nverr") || break
            ps=$(psnr_of "$C_FILE" "$C_FMT" "$out")
            [ "$ps" = - ] && break
            say "  nvJPEG2000 quality $q -> $ps dB (target $target)"
            awk -v p="$ps" -v t="$target" 'BEGIN { exit !(p >= t && p - t < 0.1) }' && break
            q=$(awk -v q="$q" -v p="$ps" -v t="$target" 'BEGIN { printf "%.4f", q + (t - p) + (p < t ? 0.02 : 0) }')
        done
    fi
    for s in 1 4; do
        if [ "$target" = lossless ]; then
            l=$("$NVB" -i "$C_FILE" $C_FMT $A --streams $s -n $n -t $t -o "$out" 2> "$SCR/nverr")
        else
            l=$("$NVB" -i "$C_FILE" $C_FMT $A --quality "$q" --streams $s -n $n -t $t -o "$out" 2> "$SCR/nverr")
        fi
        if [ -z "$l" ]; then
            say "  nvJPEG2000 streams=$s FAILED: $(tail -n 3 "$SCR/nverr" | tr '\n' ' ' | cut -c1-300)"
            row "$cs" nvjpeg2k "streams=$s" - - - - "failed: $(tail -n 1 "$SCR/nverr" | cut -c1-120)"
            continue
        fi
        ps=$(psnr_of "$C_FILE" "$C_FMT" "$out")
        row "$cs" nvjpeg2k "streams=$s" "$(kv "$l" fps)" "$(printf %.2f "$(kv "$l" latency_ms)")" "$(kv "$l" bytes)" "$ps" \
            "target $target dB; TARGET_PSNR quality $(kv "$l" quality) (nvJPEG2000's own decode: $(kv "$l" psnr_nvj) dB); pinned input$note"
        say "  nvJPEG2000 streams=$s: $(kv "$l" fps) fps, latency $(kv "$l" latency_ms) ms, $(kv "$l" bytes) B, PSNR $ps (target $target)"
    done
}

# ---- the HTJ2K cases (issue 29, point 5) ------------------------------------------------
# ht_case CASE: ours on the GPU (8 and 16 in flight) and on the reference backend, their
# codestreams compared, the lossless ones checked sample by sample (PSNR inf), then OpenJPH and
# nvJPEG2000's HT encoder at about our bytes (lossless: reversible, no search)
ht_case() {
    local cs=$1 n t l reps mode a b tgt ps r
    if [ $HAVE_OURS = 1 ] && [ $GPU = 1 ]; then
        n=300 t=4 l=21; [ "$QUICK" = 1 ] && { n=30; t=2; l=5; }
        export OURS_TIMEOUT=${BENCH_CUDA_TIMEOUT:-60}
        pcie_row "$cs"
        # a refused configuration (no CUDA HT coder in this build) leaves a failed row
        ours "$cs" cuda normal "$C_OURS async_depth=${BENCH_ASYNC:-8}" -n $n -t $t -l $l -w 5 &&
            ours "$cs" cuda depth16 "$C_OURS async_depth=16" -n $n -t $t -l $l -w 5
        unset OURS_TIMEOUT
    fi
    if [ $HAVE_OURS = 1 ] && [ "$DO_REF" = 1 ]; then
        if [ $GPU = 1 ]; then
            OURS_TIMEOUT=${BENCH_REF_TIMEOUT:-60} ours "$cs" ref normal "$C_OURS" -n 0 -l 1 -w 0 -t 100
        else
            reps=3; [ "$QUICK" = 1 ] && reps=1
            ours "$cs" ref normal "$C_OURS" -n 0 -l $reps -w 0 -t 60
        fi
    fi
    a=$SCR/cs/${cs}_ours_cuda_normal.j2k b=$SCR/cs/${cs}_ours_ref_normal.j2k
    if [ -s "$a" ] && [ -s "$b" ]; then
        if cmp -s "$a" "$b"; then
            say "  CUDA and reference HT codestreams are byte-identical"; BYTE_EXACT="$BYTE_EXACT $cs:identical"
            row "$cs" cmp normal - - "$(stat -c %s "$a")" - identical
        else
            say "  WARNING: CUDA and reference HT codestreams DIFFER ($(cmp "$a" "$b" 2>&1 | head -n 1))"
            BYTE_EXACT="$BYTE_EXACT $cs:DIFFER"
            row "$cs" cmp normal - - "$(stat -c %s "$a")" - DIFFER
        fi
    fi
    # the target of the peers: our bytes (the CUDA row's, else the reference one's)
    tgt=lossless
    if [ "$C_LOSSLESS" != 1 ]; then
        tgt=$(awk -F'\t' -v c="$cs" '$1 == c && ($2 == "j2kcuda-cuda" || $2 == "j2kcuda-ref") && $3 == "normal" && $6 != "-" { print $6; exit }' "$RES")
        [ -n "$tgt" ] || tgt=$C_BYTES
    fi
    if [ "${BENCH_PEERS:-1}" = 1 ]; then ojph_rows "$cs" "$tgt"; fi
    if [ $HAVE_NVJ = 1 ]; then nvj_ht "$cs" "$tgt"; fi
    # lossless: every codestream must decode to the source exactly (j2kpsnr: PSNR inf)
    if [ "$C_LOSSLESS" = 1 ]; then
        awk -F'\t' -v c="$cs" '$1 == c && $6 != "-" && $7 != "inf" && $2 != "cmp" && $2 != "pcie-h2d" { print $2 " " $3 ": PSNR " $7 }' "$RES" |
            while read -r r; do say "  WARNING: lossless row not exact: $r"; done
    fi
}

# ---- the runs --------------------------------------------------------------------------
# Warm-up, not reported: the first GPU row of a run on a machine that had been idle comes out
# slower than the rows after it, so one throw-away encode of the first case comes first
# (bench/results/history.md#bench-warm-up).
if [ $HAVE_OURS = 1 ] && [ $GPU = 1 ] && [ "$QUICK" != 1 ] && [ -n "$CASES" ]; then
    case_setup "${CASES%% *}"
    if [ -n "$C_FILE" ]; then
        say "warm-up: ${CASES%% *}, 200 frames (not reported)"
        wargs=()
        for p in $C_OURS async_depth=${BENCH_ASYNC:-8} backend=cuda; do wargs+=(-p "$p"); done
        timeout 120 "$SCR/bin/j2kbench" -i "$C_FILE" $C_FMT "${wargs[@]}" -n 200 -t 1 -l 1 -w 5 > /dev/null 2>&1 ||
            say "  warm-up failed (the rows below will say why)"
    fi
fi
for cs in $CASES; do
    case_setup "$cs"
    if [ -z "$C_FILE" ]; then say "$cs: no frame, skipped"; continue; fi
    say "== $cs: $C_LABEL ($(basename "$C_FILE"))"
    echo "$cs	$C_LABEL	$(basename "$C_FILE")" >> "$OUTD/cases.tsv.tmp"
    case $cs in ht-*) ht_case "$cs"; continue ;; esac
    LAST_PSNR=-
    CUDA_PSNR=
    if [ $HAVE_OURS = 1 ] && [ $GPU = 1 ]; then
        n=300 t=4 l=21; [ "$QUICK" = 1 ] && { n=30; t=2; l=5; }
        export OURS_TIMEOUT=${BENCH_CUDA_TIMEOUT:-60}
        # the bus floor of the stage table, measured on this machine in this run
        { [ "$cs" = dci4k ] || [ "$cs" = dci2k ]; } && pcie_row "$cs"
        ours "$cs" cuda normal "$C_OURS async_depth=${BENCH_ASYNC:-8}" -n $n -t $t -l $l -w 5 && CUDA_PSNR=$LAST_PSNR
        [ "$cs" = dci4k ] && ours "$cs" cuda pinned "$C_OURS async_depth=${BENCH_ASYNC:-8}" -n $n -t $t -l $l -w 5 --pinned
        # the components interleaved in one plane, as FFmpeg's xyz12le / rgb48le frames come
        [ "$cs" = dci4k ] && ours "$cs" cuda packed "$C_OURS async_depth=${BENCH_ASYNC:-8}" -n $n -t $t -l $l -w 5 --packed
        # 16 frames in flight (the library takes up to 32): a frame's own work leaves the GPU
        # part idle (its MQ chains, rate control's grid syncs), which more frames in flight fill
        # (bench/results/history.md#frames-in-flight)
        [ "$cs" != imf4k ] && ours "$cs" cuda depth16 "$C_OURS async_depth=16" -n $n -t $t -l $l -w 5
        # BYPASS against the same parameters without it (the profiles forbid code-block styles)
        ours "$cs" cuda noprofile "$C_OURS_FALLBACK async_depth=${BENCH_ASYNC:-8}" -n $n -t $t -l $l -w 5
        ours "$cs" cuda bypass "$C_OURS_FALLBACK async_depth=${BENCH_ASYNC:-8} bypass=1" -n $n -t $t -l $l -w 5
        # 64x64 code-blocks against noprofile's 32x32, all else equal (issue 26, point 1)
        [ "$cs" = dci4k ] && ours "$cs" cuda cblk64 "${C_OURS_FALLBACK/cblk=32x32/cblk=64x64} async_depth=${BENCH_ASYNC:-8}" -n $n -t $t -l $l -w 5
        unset OURS_TIMEOUT
        cli_bench "$cs"
    fi
    if [ $HAVE_OURS = 1 ] && [ "$DO_REF" = 1 ]; then
        if [ $GPU = 1 ]; then
            OURS_TIMEOUT=${BENCH_REF_TIMEOUT:-60} ours "$cs" ref normal "$C_OURS" -n 0 -l 1 -w 0 -t 100
            # the bytes of the code-block comparison's two rows, checked against the CUDA ones
            if [ "$cs" = dci4k ]; then
                OURS_TIMEOUT=${BENCH_REF_TIMEOUT:-60} ours "$cs" ref noprofile "$C_OURS_FALLBACK" -n 0 -l 1 -w 0 -t 100
                OURS_TIMEOUT=${BENCH_REF_TIMEOUT:-60} ours "$cs" ref cblk64 "${C_OURS_FALLBACK/cblk=32x32/cblk=64x64}" -n 0 -l 1 -w 0 -t 100
            fi
        else
            reps=3; [ "$QUICK" = 1 ] && reps=1
            ours "$cs" ref normal "$C_OURS" -n 0 -l $reps -w 0 -t 60
            if [ "$cs" = dci4k ] || [ "$cs" = imf4k ]; then
                ours "$cs" ref noprofile "$C_OURS_FALLBACK" -n 0 -l 1 -w 0 -t 60
                ours "$cs" ref bypass "$C_OURS_FALLBACK bypass=1" -n 0 -l 1 -w 0 -t 60
            fi
            [ "$cs" = dci4k ] && ours "$cs" ref cblk64 "${C_OURS_FALLBACK/cblk=32x32/cblk=64x64}" -n 0 -l 1 -w 0 -t 60
        fi
    fi
    # CUDA against reference codestreams, each mode that both ran (a "cmp" row for the report)
    for mode in normal noprofile cblk64; do
        a=$SCR/cs/${cs}_ours_cuda_$mode.j2k b=$SCR/cs/${cs}_ours_ref_$mode.j2k
        [ -s "$a" ] && [ -s "$b" ] || continue
        tag=$cs; [ $mode = normal ] || tag=$cs/$mode
        if cmp -s "$a" "$b"; then
            say "  CUDA and reference codestreams ($mode) are byte-identical"; BYTE_EXACT="$BYTE_EXACT $tag:identical"
            row "$cs" cmp "$mode" - - "$(stat -c %s "$a")" - identical
        else
            say "  WARNING: CUDA and reference codestreams ($mode) DIFFER ($(cmp "$a" "$b" 2>&1 | head -n 1))"
            BYTE_EXACT="$BYTE_EXACT $tag:DIFFER"
            row "$cs" cmp "$mode" - - "$(stat -c %s "$a")" - DIFFER
        fi
    done
    [ "$cs" = dci4k ] && ffmpeg_row "$cs"
    [ -z "$CUDA_PSNR" ] && CUDA_PSNR=$(awk -F'\t' -v c="$cs" '$1 == c && $2 == "j2kcuda-ref" && $3 == "normal" && $7 != "-" { print $7; exit }' "$RES")
    if [ "$DO_PEERS" = 1 ]; then
        for name in grk opj; do peer_threaded "$cs" $name; done
        for name in grk opj; do peer_parallel "$cs" $name; done
    fi
    if [ $HAVE_NVJ = 1 ]; then
        if [[ "$C_NVJ" == *--lossless* ]]; then nvj "$cs" lossless
        elif [ -n "$CUDA_PSNR" ] && [ "$CUDA_PSNR" != - ]; then nvj "$cs" "$CUDA_PSNR"
        else
            # no PSNR of ours: match OpenJPEG's at the same budget instead
            p=$(awk -F'\t' -v c="$cs" '$1 == c && $2 == "opj" && $7 != "-" { print $7; exit }' "$RES")
            [ -n "$p" ] && nvj "$cs" "$p" || say "  nvJPEG2000 skipped: no PSNR to match"
        fi
    fi
done
mv -f "$OUTD/cases.tsv.tmp" "$OUTD/cases.tsv" 2>/dev/null

# ---- content classes -------------------------------------------------------------------
rm -f "$OUTD/classes.tsv"
. bench/classes.sh
run_classes

# ---- report ----------------------------------------------------------------------------
say "report"
PY=
for p in python3 /usr/bin/python3; do command -v $p >/dev/null 2>&1 && { PY=$p; break; }; done
{
    echo "# j2kcuda side-by-side benchmark"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit: $(commit_id)"
    echo "- cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') x $NPROC"
    [ $GPU = 1 ] && echo "- gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)" || echo "- gpu: none (GPU rows skipped)"
    echo "- peers: OpenJPEG $(grep -o 'libopenjp2-tools_[^_]*' "$PEERS/PACKAGES" 2>/dev/null | cut -d_ -f2), Grok $(grep -o 'grokj2k-tools_[^_]*' "$PEERS/PACKAGES" 2>/dev/null | cut -d_ -f2), OpenJPH $(grep -o 'openjph-tools_[^_]*' "$PEERS/PACKAGES" 2>/dev/null | cut -d_ -f2) (Debian bookworm); nvJPEG2000 $(awk '/NVJPEG2K_VER_(MAJOR|MINOR|PATCH|BUILD)/ { v = v (v == "" ? "" : ".") $3 } END { print v }' "$NVJ/include/nvjpeg2k_version.h" 2>/dev/null) (PyPI nvidia-nvjpeg2k-cu13)"
    echo
    [ -n "$BYTE_EXACT" ] && echo "- CUDA vs reference backend codestreams:$BYTE_EXACT" && echo
    $PY bench/report.py "$RES" "$OUTD/cases.tsv" "$OUTD/classes.tsv"
} > "$OUTD/bench.md"
cat "$OUTD/bench.md"
say "done: $OUTD/bench.md"
