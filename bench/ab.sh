#!/bin/bash
# bench/ab.sh NAME=DIR [NAME=DIR ...]: A/B frame rates of several builds on one GPU, their runs
# alternating, so that the machine's drift (frame rates scatter by about 10 % between runs:
# bench/results/history.md#run-to-run-spread) falls on all alike. Each DIR holds a tree's sources (for example made here with
#   git archive <commit> | tar -x -C .dev/base
# and carried to the device machine; "." is the working tree); each is configured with
# ./configure --cuda-arch=$ARCH and built in DIR/build-ab.
#
# Each variant runs bench/j2kbench on the bench frames (bench/frames.sh from FRAMES_SRC) with
# the cases' bench settings (profile DCI 4K / 2K at 250 Mb/s, AB_DEPTH frames in flight), and
# its first codestream is compared with the first variant's (a changed byte is a failure: the
# builds must write the same codestreams).
#
# Environment:
#   AB_CASES     cases of bench/run.sh (default "dci4k dci2k grain"; dci4k-pinned: page-locked input;
#                dci4k-packed, dci4k-packed-pinned: the components interleaved, as FFmpeg's xyz12;
#                dci4k-bypass, dci2k-bypass, grain-bypass, imf4k-bypass: BYPASS, as run.sh's rows;
#                dci4k-cblk32, dci4k-cblk64: the 4K DCI frame without the profile, 32x32 or 64x64
#                code-blocks (issue 26's code-block target);
#                sd, hd: broadcast 720x576 / 1080p 4:2:2 10-bit cut from the imf4k frame, 32x32 blocks;
#                sd-pinned: page-locked)
#   AB_VARIANTS  default: the NAMEs in order; a variant is a NAME, optionally with environment
#                settings after a colon, several separated by commas, e.g. "new:J2KC_CUDA_T1_VARIANT=68"
#   AB_REPS      rounds (default 3); AB_DEPTH frames in flight (default 8); ARCH (default 90);
#   AB_BACKEND   default cuda (ref: a dry run of this script on a machine without a GPU)
#   FRAMES_SRC   frame sources (default .dev/frames; see bench/README.md); PEERS (default .dev/peers)
# Output: one line per run, then a table of medians (fps; frame-alone latency and stage times).
set -u
[ $# -ge 1 ] || { echo "usage: bench/ab.sh NAME=DIR [NAME=DIR ...]" >&2; exit 2; }
declare -A TREE
NAMES=
for a in "$@"; do
    TREE[${a%%=*}]=$(cd "${a#*=}" && pwd) || exit 2
    NAMES="$NAMES ${a%%=*}"
done
ARCH=${ARCH:-90}
REPS=${AB_REPS:-3}
DEPTH=${AB_DEPTH:-8}
CASES=${AB_CASES:-"dci4k dci2k grain"}
VARIANTS=${AB_VARIANTS:-$NAMES}
FRAMES_SRC=${FRAMES_SRC:-.dev/frames}
export PEERS=${PEERS:-.dev/peers}
ROOT=$(pwd)
SCR=${AB_WORK:-/dev/shm/ab.$$}
mkdir -p "$SCR"
fail=0

build() {   # build DIR: library and j2kbench of the tree in DIR (in DIR/build-ab)
    (cd "$1" && ./configure --cuda-arch="$ARCH" > /dev/null && make -s -j"$(nproc)" B=build-ab all > "$SCR/build.log" 2>&1) ||
        { tail -n 30 "$SCR/build.log"; return 1; }
    CUDA_HOME=$(sed -n 's/^CUDA_HOME=//p' "$1/config.mak")
    # each tree's own j2kbench.c where it has one (it matches that tree's public header)
    local src="$1/bench/j2kbench.c"
    [ -f "$src" ] || src="$ROOT/bench/j2kbench.c"
    # --pinned's buffer: through the library's driver table (cuda/cu_primary.h), or, in an older
    # j2kbench.c, through the CUDA runtime (cudaHostAlloc), linked for that one only
    local rt=
    grep -q 'cudaHostAlloc(' "$src" && rt="-L$CUDA_HOME/lib64 -lcudart_static"
    cc -std=c99 -O2 -DJ2KB_CUDA=1 -I"$1/j2kcuda/include" -I"$1/j2kcuda/src" -I"$CUDA_HOME/include" \
        -I"$ROOT/bench" -o "$1/build-ab/j2kbench" "$src" "$1/build-ab/lib/libj2kcuda.a" $rt -ldl -lrt \
        -lstdc++ -lpthread -lm
}
for t in $NAMES; do
    echo "== build $t (${TREE[$t]})"
    build "${TREE[$t]}" || exit 1
done

echo "== frames"
sh bench/frames.sh "$FRAMES_SRC" "$SCR/frames" | sed 's/^/   /' || exit 1

args_of() {   # case -> "file|params|extra"
    case $1 in
    dci4k)        echo "$(ls "$SCR"/frames/dci4k_*.ppm)|profile=dci4k fps=24 bitrate=250|" ;;
    dci4k-pinned) echo "$(ls "$SCR"/frames/dci4k_*.ppm)|profile=dci4k fps=24 bitrate=250|--pinned" ;;
    dci4k-packed) echo "$(ls "$SCR"/frames/dci4k_*.ppm)|profile=dci4k fps=24 bitrate=250|--packed" ;;
    dci4k-packed-pinned) echo "$(ls "$SCR"/frames/dci4k_*.ppm)|profile=dci4k fps=24 bitrate=250|--packed --pinned" ;;
    dci2k)        echo "$(ls "$SCR"/frames/dci2k_*.ppm)|profile=dci2k fps=24 bitrate=250|" ;;
    # the code-block target of issue 26 (bench/run.sh's noprofile and cblk64 rows): the 4K DCI
    # frame at the profile's budget without the profile, 32x32 against 64x64, all else equal
    dci4k-cblk32) echo "$(ls "$SCR"/frames/dci4k_*.ppm)|$NOPROF cblk=32x32|" ;;
    dci4k-cblk64) echo "$(ls "$SCR"/frames/dci4k_*.ppm)|$NOPROF cblk=64x64|" ;;
    grain)        echo "$(ls "$SCR"/frames/grain_*.ppm)|profile=dci2k fps=24 bitrate=250|" ;;
    # BYPASS (bench/run.sh's bypass rows: the profiles' parameters without the profile, which
    # forbids code-block styles); imf4k-bypass: lossless, no byte budget, so no early stop
    dci4k-bypass) echo "$(ls "$SCR"/frames/dci4k_*.ppm)|$BYP levels=6|" ;;
    dci2k-bypass) echo "$(ls "$SCR"/frames/dci2k_*.ppm)|$BYP levels=5|" ;;
    grain-bypass) echo "$(ls "$SCR"/frames/grain_*.ppm)|$BYP levels=5|" ;;
    imf4k-bypass) echo "$(ls "$SCR"/frames/imf4k_*.yuv)|lossless=1 cblk=32x32 bypass=1|-f yuv422p10le -s 4096x2160" ;;
    # small frames (broadcast at 50 fps, 32x32 code-blocks: the column-parallel tier-1, whose
    # launches take several frames' code-blocks), cut from the middle of the imf4k frame
    sd)           echo "$(small 720 576)|profile=broadcast fps=50 bytes=250000 cblk=32x32|-f yuv422p10le -s 720x576" ;;
    sd-pinned)    echo "$(small 720 576)|profile=broadcast fps=50 bytes=250000 cblk=32x32|-f yuv422p10le -s 720x576 --pinned" ;;
    hd)           echo "$(small 1920 1080)|profile=broadcast fps=50 bytes=500000 cblk=32x32|-f yuv422p10le -s 1920x1080" ;;
    esac
}
small() {   # W H: a W x H yuv422p10le frame cut from the middle of the imf4k frame (its path)
    local o="$SCR/frames/small_$1x$2.yuv"
    [ -f "$o" ] || python3 - "$(ls "$SCR"/frames/imf4k_*.yuv)" "$o" "$1" "$2" <<'EOF'
import sys
import numpy as np
W, H = int(sys.argv[3]), int(sys.argv[4])
a = np.fromfile(sys.argv[1], '<u2')
n = 4096 * 2160
y0, x0 = (2160 - H) // 2, ((4096 - W) // 2) & ~1
Y = a[:n].reshape(2160, 4096)[y0:y0 + H, x0:x0 + W]
U = a[n:n + n // 2].reshape(2160, 2048)[y0:y0 + H, x0 // 2:(x0 + W) // 2]
V = a[n + n // 2:].reshape(2160, 2048)[y0:y0 + H, x0 // 2:(x0 + W) // 2]
np.concatenate([Y.ravel(), U.ravel(), V.ravel()]).astype('<u2').tofile(sys.argv[2])
EOF
    echo "$o"
}
BYP="bytes=1302083 cblk=32x32 prec=128x128,256x256 order=cprl bypass=1"
NOPROF="bytes=1302083 levels=6 prec=128x128,256x256 order=cprl"
val() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

: > "$SCR/runs.tsv"
for c in $CASES; do
    IFS='|' read -r file params extra <<< "$(args_of "$c")"
    [ -f "$file" ] || { echo "no frame for $c"; fail=1; continue; }
    p=()
    for kv in $params async_depth=$DEPTH backend=${AB_BACKEND:-cuda}; do p+=(-p "$kv"); done
    for r in $(seq 1 "$REPS"); do
        vi=0
        for v in $VARIANTS; do
            tree=${v%%:*}; envs=; [ "$v" != "$tree" ] && envs=${v#*:}; envs=${envs//,/ }
            dir=${TREE[$tree]:-}
            [ -n "$dir" ] || { echo "FAIL variant $v: no tree $tree"; fail=1; vi=$((vi + 1)); continue; }
            out="$SCR/$c.$vi.j2c"
            # shellcheck disable=SC2086
            line=$(env $envs "$dir/build-ab/j2kbench" -i "$file" "${p[@]}" -n 300 -t 4 -l 21 -w 5 $extra -o "$out" \
                   2> "$SCR/err" | grep '^RESULT')
            if [ -z "$line" ]; then
                echo "FAIL $c $v: $(head -n 3 "$SCR/err" | tr '\n' ' ')"; fail=1; vi=$((vi + 1)); continue
            fi
            same=identical
            if [ $vi -gt 0 ] && ! cmp -s "$out" "$SCR/$c.0.j2c"; then same=DIFFERENT; fail=1; fi
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$v" "$r" "$(val "$line" fps)" \
                "$(val "$line" latency_ms)" "$(val "$line" st_t1)" "$(val "$line" st_rc)" \
                "$(val "$line" st_mct_dwt)" "$(val "$line" bytes)" "$same" | tee -a "$SCR/runs.tsv"
            vi=$((vi + 1))
        done
    done
done

echo "== medians of $REPS rounds (fps with $DEPTH in flight; latency and stage ms of a frame alone)"
python3 - "$SCR/runs.tsv" <<'EOF'
import sys, statistics as st
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
keys = []
for r in rows:
    if (r[0], r[1]) not in keys:
        keys.append((r[0], r[1]))
print('| case | variant | fps (runs) | median fps | latency ms | t1 ms | rc ms | mct+dwt ms | bytes | vs first |')
print('|---|---|---|---:|---:|---:|---:|---:|---:|---|')
for k in keys:
    rs = [r for r in rows if (r[0], r[1]) == k]
    f = [float(r[3]) for r in rs]
    med = lambda i: st.median(float(r[i]) for r in rs)
    print('| %s | %s | %s | %.1f | %.2f | %.2f | %.2f | %.2f | %s | %s |' % (k[0], k[1], ' / '.join('%.1f' % x for x in f),
          st.median(f), med(4), med(5), med(6), med(7), rs[0][8], ','.join(sorted(set(r[9] for r in rs)))))
EOF
cp "$SCR/runs.tsv" "${OUT:-$SCR}/ab-runs.tsv" 2>/dev/null
exit $fail
