#!/usr/bin/env bash
# bench/cpu-ref.sh BUILD_DIR [OUT.md]: reference backend speed on this machine's CPU against
# OpenJPEG 2.5 and Grok 10, in two tables (printed as markdown, and written to OUT.md when given):
#  1. one thread each (threads=1, opj_compress -threads 1, grk_compress -H 1) on the 2K and 4K
#     DCI frames at 250 Mb/s (1,302,083 bytes a frame at 24 fps): fps and PSNR;
#  2. scaling on one frame (the 4K DCI one by default) with the same thread count N for all:
#     j2kcuda through the API (bench/j2kbench.c, submit to codestream in host memory) and
#     through the CLI (j2kc --backend ref --threads N: process start, PPM read and file write
#     included, as the peers' times are), grk_compress -H N, opj_compress -threads N; each
#     codestream of j2kcuda must equal the one of the first thread count.
# Frames and peers as in bench/run.sh (tools/fetch-peers.sh first, then carry .dev/peers and
# .dev/frames: the device machine has neither the Debian packages nor a network).
# Environment: REPS (default 3; median), BENCH_FRAMES, PEERS, CPU_THREADS (table 2's thread
# counts, default "1 2 4 8 16"), CPU_SCALE_CASE (dci4k or dci2k, default dci4k),
# CPU_TABLES (default "single scaling").
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
[ -x "$B/bin/j2kc" ] && [ -f "$B/lib/libj2kcuda.a" ] || { echo "cpu-ref: build $B first (make B=$B)" >&2; exit 1; }
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

ms() { [ "$1" = fail ] && echo failed || awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
up() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2fx", a / b; else print "-" }'; }
TABLES=${CPU_TABLES:-single scaling}
THREADS=${CPU_THREADS:-1 2 4 8 16}
SCALE_CASE=${CPU_SCALE_CASE:-dci4k}
# case_opts CASE: profile for j2kcuda, then the peers' DCI options
case_opts() {
    if [ "$1" = dci4k ]; then prof=dci4k; copt=-cinema4K; gopt="-x 24"; else prof=dci2k; copt="-cinema2K 24"; gopt="-w 24"; fi
}

out=
case " $TABLES " in *" single "*) out=$(
echo "| frame | encoder (1 thread) | fps | ms/frame | bytes | PSNR dB | ref speed ÷ this |"
echo "|---|---|---:|---:|---:|---:|---:|"
for cs in dci2k dci4k; do
    f=$(ls "$SCR"/${cs}_*.ppm | head -n 1)
    case_opts $cs
    l=$("$SCR/j2kbench" -i "$f" -p profile=$prof -p fps=24 -p bitrate=250 -p backend=ref -p threads=1 \
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
) ;; esac

scale=
case " $TABLES " in *" scaling "*) scale=$(
f=$(ls "$SCR"/${SCALE_CASE}_*.ppm | head -n 1)
case_opts "$SCALE_CASE"
first= all_api=yes all_cli=yes
declare -A api_ms cli_ms grk_ms opj_ms
echo "| threads | j2kcuda ref API ms | j2kc CLI ms | grk_compress -H N ms | opj_compress -threads N ms | API speed-up | CLI speed-up | Grok speed-up | OpenJPEG speed-up | Grok time ÷ j2kc CLI time | same bytes |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for n in $THREADS; do
    l=$("$SCR/j2kbench" -i "$f" -p profile=$prof -p fps=24 -p bitrate=250 -p backend=ref -p threads=$n \
        -o "$SCR/api$n.j2k" -n 0 -w 0 -l "$REPS" -t 600 2> "$SCR/err")
    a=$([ -n "$l" ] && printf %.1f "$(kv "$l" latency_ms)" || echo failed)
    c=$(median_time "$B/bin/j2kc" -q -i "$f" -o "$SCR/cli$n.j2k" --profile $prof --fps 24 --bitrate 250 \
        --backend ref --threads $n)
    g=$(median_time $GRK -i "$f" -o "$SCR/grk$n.j2k" $gopt -H $n)
    o=$(median_time $OPJ -i "$f" -o "$SCR/opj$n.j2k" $copt -threads $n)
    c=$(ms "$c"); g=$(ms "$g"); o=$(ms "$o")
    [ -z "$first" ] && first=$n
    same=yes
    cmp -s "$SCR/api$first.j2k" "$SCR/api$n.j2k" && cmp -s "$SCR/api$first.j2k" "$SCR/cli$n.j2k" || same=NO
    api_ms[$n]=$a; cli_ms[$n]=$c; grk_ms[$n]=$g; opj_ms[$n]=$o
    ratio=$(up "$g" "$c")
    awk -v a="$g" -v b="$c" 'BEGIN { exit !(a + 0 > 0 && b + 0 > 0 && a + 0 >= b + 0) }' || all_cli=no
    awk -v a="$g" -v b="$a" 'BEGIN { exit !(a + 0 > 0 && b + 0 > 0 && a + 0 >= b + 0) }' || all_api=no
    echo "| $n | $a | $c | $g | $o | $(up "${api_ms[$first]}" "$a") | $(up "${cli_ms[$first]}" "$c") | $(up "${grk_ms[$first]}" "$g") | $(up "${opj_ms[$first]}" "$o") | $ratio | $same |"
done
echo
echo "Frame $(basename "$f"), profile $prof at 250 Mb/s (j2kcuda), grk_compress $gopt, opj_compress $copt; speed-ups against $first thread(s). j2kc CLI at least as fast as Grok at every thread count: $all_cli; the API (no file I/O) too: $all_api.$([ "$prof" = dci4k ] && echo " The peers' cinema 4K modes stop each component at 1,041,666 bytes (their codestreams are smaller than the frame budget j2kcuda fills).")"
) ;; esac

hdr="CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores (load average before the run: $LOAD); median of $REPS; $(date -u '+%Y-%m-%d'); commit $(commit_id). Peers' times include process start and file I/O, as the j2kc CLI's do; j2kcuda's API times (j2kbench) are submit-to-codestream in host memory."
NOTES="Notes: the 2K frame is a decode of a 250 Mb/s DCI codestream (X_4), so its PSNR at 250 Mb/s measures generation loss, not coding efficiency; the 4K frame is fresh content (bench/README.md). The OpenJPEG and Grok cinema 4K modes cap each component at 1,041,666 bytes and so stop short of the frame budget."
report() {
    echo "$hdr"
    [ -n "$out" ] && { echo; echo "## One thread each"; echo; echo "$out"; echo; echo "$NOTES"; }
    [ -n "$scale" ] && { echo; echo "## Scaling with the thread count"; echo; echo "$scale"; }
}
report
if [ -n "$MD" ]; then
    { echo "# Reference backend vs OpenJPEG and Grok on the CPU, DCI 250 Mb/s"; echo;
      echo "Command: \`bench/cpu-ref.sh $1${MD:+ $MD}\` (after \`tools/fetch-peers.sh\`)"; echo; report; } > "$MD"
fi
