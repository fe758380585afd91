#!/usr/bin/env bash
# bench/cpu-ref.sh BUILD_DIR [OUT.md]: reference backend speed on this machine's CPU against
# OpenJPEG and Grok, ONE thread each (opj_compress -threads 1, grk_compress -H 1; j2kcuda's
# reference backend is single-threaded), on the 2K and 4K DCI frames at 250 Mb/s
# (1,302,083 bytes a frame at 24 fps). Prints fps and PSNR as a markdown table (and writes it to
# OUT.md when given). Frames and peers as in bench/run.sh (tools/fetch-peers.sh first).
# Environment: REPS (default 3; median), BENCH_FRAMES, PEERS.
set -u
commit_id() { { git rev-parse --short HEAD 2>/dev/null && { git diff --quiet HEAD 2>/dev/null || echo +dirty; } || echo unknown; } | tr -d '\n'; }
B=${1:-build}
MD=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
case $B in /*) ;; *) B=$ROOT/$B ;; esac
REPS=${REPS:-3}
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
PEERS=${PEERS:-$ROOT/.dev/peers}
SCR=$(mktemp -d)
trap 'rm -rf "$SCR"' EXIT

if [ -x "$PEERS/bin/opj_compress" ]; then
    PLD=$PEERS/lib
    OPJ="env LD_LIBRARY_PATH=$PLD $PEERS/bin/opj_compress"
    GRK="env LD_LIBRARY_PATH=$PLD $PEERS/bin/grk_compress"
    PSNR_LINK=(-L"$PLD" -l:libopenjp2.so.7 -Wl,-rpath,"$PLD")
else
    OPJ=opj_compress; GRK=grk_compress; PSNR_LINK=(-l:libopenjp2.so.7)
fi
PEERS=$PEERS sh bench/frames.sh "${BENCH_FRAMES:-$ROOT/.dev/frames}" "$SCR" > /dev/null || exit 1
cc -std=c99 -O2 -Ij2kcuda/include -Ibench -o "$SCR/j2kbench" bench/j2kbench.c "$B/lib/libj2kcuda.a" -lm -lpthread || exit 1
cc -std=c99 -O2 -Ibench -o "$SCR/j2kpsnr" bench/j2kpsnr.c "${PSNR_LINK[@]}" -lm || exit 1

kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }
psnr() { kv "$("$SCR/j2kpsnr" "$1" "$2")" psnr; }
median_time() { # command... -> median wall seconds of REPS runs
    local t=() t0 t1
    for i in $(seq "$REPS"); do
        t0=$(date +%s.%N); "$@" > "$SCR/log" 2>&1 || { echo fail; return; }; t1=$(date +%s.%N)
        t+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
    done
    printf '%s\n' "${t[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

out=$(
echo "| frame | encoder (1 thread) | fps | ms/frame | bytes | PSNR dB | ref speed ÷ this |"
echo "|---|---|---:|---:|---:|---:|---:|"
for cs in dci2k dci4k; do
    f=$(ls "$SCR"/${cs}_*.ppm | head -n 1)
    if [ $cs = dci4k ]; then prof=dci4k; copt=-cinema4K; gopt="-x 24"; else prof=dci2k; copt="-cinema2K 24"; gopt="-w 24"; fi
    l=$("$SCR/j2kbench" -i "$f" -p profile=$prof -p fps=24 -p bitrate=250 -p backend=ref \
        -o "$SCR/ref.j2k" -n 0 -w 0 -l "$REPS" -t 600 2> "$SCR/err")
    if [ -z "$l" ]; then
        echo "| $(basename "$f") | j2kcuda ref | failed: $(grep -v '^j2kbench' "$SCR/err" | head -n 1 | cut -c1-80) | | | | |"
        ref_ms=
    else
        ref_ms=$(kv "$l" latency_ms)
        echo "| $(basename "$f") | j2kcuda ref | $(awk -v m="$ref_ms" 'BEGIN { printf "%.3f", 1000 / m }') | $(printf %.1f "$ref_ms") | $(kv "$l" bytes) | $(psnr "$f" "$SCR/ref.j2k") | 1.00x |"
    fi
    for enc in opj grk; do
        if [ $enc = opj ]; then s=$(median_time $OPJ -i "$f" -o "$SCR/$enc.j2k" $copt -threads 1)
        else s=$(median_time $GRK -i "$f" -o "$SCR/$enc.j2k" $gopt -H 1); fi
        if [ "$s" = fail ]; then echo "| $(basename "$f") | $enc | failed | | | | |"; continue; fi
        ms=$(awk -v s="$s" 'BEGIN { printf "%.1f", s * 1000 }')
        ratio=$([ -n "$ref_ms" ] && awk -v r="$ref_ms" -v m="$ms" 'BEGIN { printf "%.2fx", m / r }' || echo -)
        echo "| $(basename "$f") | $([ $enc = opj ] && echo "opj_compress -threads 1" || echo "grk_compress -H 1") | $(awk -v s="$s" 'BEGIN { printf "%.3f", 1 / s }') | $ms | $(stat -c %s "$SCR/$enc.j2k") | $(psnr "$f" "$SCR/$enc.j2k") | $ratio |"
    done
done
)
hdr="CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores (load average before the run: $LOAD); median of $REPS; $(date -u '+%Y-%m-%d'); commit $(commit_id). Peers' times include process start and file I/O; j2kcuda's are submit-to-codestream in host memory."
NOTES="Notes: the 2K frame is a decode of a 250 Mb/s DCI codestream (X_4), so its PSNR at 250 Mb/s measures generation loss, not coding efficiency; the 4K frame is fresh content (bench/README.md). The OpenJPEG and Grok cinema 4K modes cap each component at 1,041,666 bytes and so stop short of the frame budget."
echo "$hdr"; echo; echo "$out"; echo; echo "$NOTES"
if [ -n "$MD" ]; then
    { echo "# Reference backend vs OpenJPEG and Grok, one CPU thread each, DCI 250 Mb/s"; echo;
      echo "Command: \`bench/cpu-ref.sh $1${MD:+ $MD}\` (after \`tools/fetch-peers.sh\`)"; echo; echo "$hdr"; echo; echo "$out"
      echo; echo "$NOTES"; } > "$MD"
fi
