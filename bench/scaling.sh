#!/bin/bash
# scaling.sh BUILD_DIR [OUT.md]: one encoder over 1, 2, 4 (, 8) of this host's GPUs (gpu=0,1,..)
# against as many processes of one GPU each, host to host, on the bench's 4K DCI and 4K IMF
# lossless frames (bench/frames.sh). Frames are page-locked and submitted with J2KC_FRAME_HELD
# (j2kbench --pinned --held), so that one submitting thread keeps every GPU's upload in flight;
# one row without --held shows the bound of a submit that waits for its upload. Prints a
# markdown table with the machine and `nvidia-smi topo -m` (also written to OUT.md when given).
# Needs a CUDA build (./configure; make) and the frames' sources in .dev/frames and .dev/peers
# (tools/fetch-peers.sh).
# Environment: SCALING_CASES (default "dci4k imf4k"), SCALING_FRAMES (frames a run, default 3000
# for dci4k, 2000 for imf4k, scaled by the GPU count), SCALING_WORK (scratch, default /dev/shm).
set -u -o pipefail
B=${1:-build}
MD=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
case $B in /*) ;; *) B=$ROOT/$B ;; esac
command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1 || { echo "scaling.sh: no NVIDIA GPU here" >&2; exit 1; }
HAVE_CUDA=$(sed -n 's/^HAVE_CUDA=//p' config.mak 2> /dev/null)
CUDA_HOME=$(sed -n 's/^CUDA_HOME=//p' config.mak 2> /dev/null)
[ "${HAVE_CUDA:-0}" = 1 ] && [ -f "$B/lib/libj2kcuda.a" ] || { echo "scaling.sh: needs a CUDA build in $B" >&2; exit 1; }
SCR=${SCALING_WORK:-/dev/shm}/j2kscaling.$$
mkdir -p "$SCR/frames" "$SCR/cs"
trap 'rm -rf "$SCR"' EXIT
NG=$(nvidia-smi -L | grep -c '^GPU ')
export CUDA_DEVICE_MAX_CONNECTIONS=8

cc -std=c99 -O2 -Wall -DJ2KB_CUDA=1 -Ij2kcuda/src -I"$CUDA_HOME/include" -Ij2kcuda/include -Ibench \
   -o "$SCR/j2kbench" bench/j2kbench.c "$B/lib/libj2kcuda.a" -ldl -lrt -lstdc++ -lpthread -lm || exit 1
PEERS=${PEERS:-$ROOT/.dev/peers} sh bench/frames.sh "${SCALING_FRAMES_SRC:-$ROOT/.dev/frames}" "$SCR/frames" > "$SCR/frames.log" 2>&1 ||
    { cat "$SCR/frames.log" >&2; exit 1; }

kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }
T=$SCR/table.md
{
    echo "Host: $NG x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1), driver" \
         "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1), $(nproc) CPU cores;" \
         "tree $(git rev-parse --short HEAD 2> /dev/null || echo unknown); command: bench/scaling.sh $*"
    echo
    echo '```'
    nvidia-smi topo -m 2>&1 | sed -n '1,/^$/p' | sed 's/\x1b\[[0-9;]*m//g'
    echo '```'
    echo
    echo "| frame | GPUs | one encoder, fps | vs 1 GPU | frames per GPU | $NG processes of one GPU, fps (sum) | bytes = 1 GPU |"
    echo "|---|---:|---:|---:|---|---:|---|"
} > "$T"

for c in ${SCALING_CASES:-dci4k imf4k}; do
    case $c in
    dci4k) F=$(ls "$SCR"/frames/dci4k_*.ppm | head -n 1); FMT=(); P=(-p profile=dci4k -p fps=24 -p bitrate=250)
           LABEL="4K DCI 12-bit 4:4:4, 250 Mb/s"; N=${SCALING_FRAMES:-3000} ;;
    imf4k) F=$(ls "$SCR"/frames/imf4k_*.yuv | head -n 1); FMT=(-f yuv422p10le -s 4096x2160)
           P=(-p profile=imf4k_r -p lossless=1); LABEL="4K IMF 10-bit 4:2:2 lossless"; N=${SCALING_FRAMES:-2000} ;;
    *) echo "scaling.sh: unknown case $c" >&2; exit 1 ;;
    esac
    A=(-i "$F" "${FMT[@]}" "${P[@]}" -p backend=cuda -p async_depth=8 --pinned -t 30 -l 3 -w 8)
    base=
    g=1
    while [ "$g" -le "$NG" ]; do
        list=$(seq -s, 0 $((g - 1)))
        for held in --held ""; do
            [ -z "$held" ] && [ "$g" -ne "$NG" ] && continue      # the waiting submit: all GPUs only
            r=$("$SCR/j2kbench" "${A[@]}" -p gpu="$list" $held -n $((N * g)) -o "$SCR/cs/$c-$g$held.j2k" 2>&1 | grep '^RESULT')
            fps=$(kv "$r" fps)
            [ -n "$fps" ] || { echo "scaling.sh: $c gpu=$list failed" >&2; exit 1; }
            [ "$g" = 1 ] && [ -n "$held" ] && base=$fps
            same=no
            cmp -s "$SCR/cs/$c-1--held.j2k" "$SCR/cs/$c-$g$held.j2k" && [ "$(kv "$r" identical)" = 1 ] && same=yes
            procs=-
            if [ -n "$held" ] && [ "$g" -gt 1 ]; then
                for i in $(seq 0 $((g - 1))); do
                    CUDA_VISIBLE_DEVICES=$i "$SCR/j2kbench" "${A[@]}" -p gpu=0 --held -n "$N" > "$SCR/p$i.txt" 2>&1 &
                done
                wait
                procs=$(cat "$SCR"/p*.txt | sed -n 's/^RESULT.* fps=\([0-9.]*\).*/\1/p' |
                        awk '{ s += $1; l = l (NR > 1 ? " + " : "") sprintf("%.0f", $1) } END { printf "%s = %.0f", l, s }')
                rm -f "$SCR"/p*.txt
            fi
            row=$LABEL
            [ -z "$held" ] && row="$LABEL, submit waiting for each upload"
            printf '| %s | %d | %.1f | %.2fx | %s | %s | %s |\n' "$row" "$g" "$fps" \
                "$(awk -v a="$fps" -v b="$base" 'BEGIN { print a / b }')" "$(kv "$r" devices)" "$procs" "$same" >> "$T"
        done
        g=$((g * 2))
    done
done
cat "$T"
[ -n "$MD" ] && cp "$T" "$MD"
exit 0
