#!/bin/bash
# Long runs (issue 28 point 4): many frames through ffmpeg -c:v jpeg2000_cuda with the process's
# resident memory (VmRSS, /proc/PID/status) and, on the CUDA backend, its GPU memory
# (nvidia-smi) sampled while it runs; both must stay flat after the warm-up. Then the
# library's create/free cycles (unit test test_lifecycle) in their long variant.
#   tests/longrun.sh [BUILD_DIR]
# make check runs the short variant (1,000 frames of 176x144 on the reference backend, seconds);
# J2KC_TEST_LONG=1 (make check-long) the long one (10,000 frames, 1,000 cycles). Environment:
#   J2KC_LONGRUN_FRAMES   frames (default 1000, long 10000)
#   J2KC_LONGRUN_SIZE     WxH of the testsrc2 frames (default 176x144)
#   J2KC_LONGRUN_BACKEND  ref|cuda|auto (default ref)
#   J2KC_LONGRUN_ARGS     more encoder options (e.g. "-profile:v dci4k")
#   J2KC_LONGRUN_LOG      file receiving the samples (default BUILD_DIR/test-logs/longrun-samples.txt)
#   J2KC_LONGRUN_GPU      nvidia-smi index of the GPU watched when the process is not listed (0)
# On a GPU machine, e.g.: J2KC_TEST_LONG=1 J2KC_LONGRUN_SIZE=3840x2160 J2KC_LONGRUN_BACKEND=cuda \
#   tests/longrun.sh build
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
FFMPEG=$BUILD/ffmpeg/ffmpeg
long=0; [ "${J2KC_TEST_LONG:-0}" = 1 ] && long=1
FRAMES=${J2KC_LONGRUN_FRAMES:-$([ $long = 1 ] && echo 10000 || echo 1000)}
SIZE=${J2KC_LONGRUN_SIZE:-176x144}
BACKEND=${J2KC_LONGRUN_BACKEND:-ref}
SAMPLES=${J2KC_LONGRUN_LOG:-$BUILD/test-logs/longrun-samples.txt}
RSS_TOLERANCE_KIB=2048      # VmRSS growth allowed between the windows (below)
GPU_TOLERANCE_MIB=4         # GPU memory growth allowed between the windows
SAMPLE_PERIOD=0.02          # seconds between samples
mkdir -p "$(dirname "$SAMPLES")"
elapsed() { awk -v a="$EPOCHREALTIME" -v b="$start" 'BEGIN { printf "%.2f", a - b }'; }
NAME=longrun/ffmpeg-$FRAMES-$SIZE-$BACKEND

if [ ! -x "$FFMPEG" ]; then
    t_skip "$NAME" "ffmpeg not built in $BUILD/ffmpeg (make ffmpeg B=$BUILD)"
else
    err=$(mktemp)
    gpu=0
    [ "$BACKEND" != ref ] && t_have nvidia-smi && gpu=1
    # shellcheck disable=SC2086
    "$FFMPEG" -nostdin -hide_banner -loglevel error -f lavfi -i "testsrc2=s=$SIZE:r=25" \
        -frames:v "$FRAMES" -c:v jpeg2000_cuda -backend "$BACKEND" $J2KC_LONGRUN_ARGS -f null - 2> "$err" &
    pid=$!
    start=$EPOCHREALTIME
    : > "$SAMPLES"
    # one line per sample: seconds since the start, VmRSS in KiB, GPU memory in MiB (or -)
    while kill -0 "$pid" 2>/dev/null; do
        rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
        mem=-
        if [ $gpu = 1 ]; then
            # the process's own use; in a container whose PIDs nvidia-smi does not see, the
            # whole GPU's (the run is then meant to be the machine's only GPU user)
            mem=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
                  awk -F', *' -v p="$pid" '$1 == p { print $2 }')
            [ -n "$mem" ] || mem=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i "${J2KC_LONGRUN_GPU:-0}" 2>/dev/null)
        fi
        [ -n "$rss" ] && echo "$(elapsed) $rss ${mem:--}" >> "$SAMPLES"
        sleep $SAMPLE_PERIOD
    done
    wait "$pid"; rc=$?
    secs=$(elapsed)
    n=$(wc -l < "$SAMPLES")
    if [ $rc != 0 ]; then
        t_fail "$NAME" "ffmpeg exit $rc: $(head -n 3 "$err" | tr '\n' ' ')"
    elif [ "$n" -lt 10 ]; then
        t_fail "$NAME" "only $n samples of VmRSS in $secs s: run more frames (J2KC_LONGRUN_FRAMES)"
    else
        # Warm-up: the first 20% of the samples. Flat: the highest value of the last 20% is no
        # more than the tolerance above the highest of the 20% after the warm-up.
        verdict=$(awk -v tr=$RSS_TOLERANCE_KIB -v tg=$GPU_TOLERANCE_MIB '
            { t[NR] = $1; r[NR] = $2; g[NR] = $3 }
            END {
                n = NR; a = int(n / 5); b = int(2 * n / 5); c = n - int(n / 5)
                for (i = a + 1; i <= b; i++) { if (r[i] > r1) r1 = r[i]; if (g[i] != "-" && g[i] > g1) g1 = g[i] }
                for (i = c + 1; i <= n; i++) { if (r[i] > r2) r2 = r[i]; if (g[i] != "-" && g[i] > g2) g2 = g[i] }
                bad = (r2 - r1 > tr) || (g[n] != "-" && g2 - g1 > tg)
                printf "%s VmRSS %d KiB after warm-up, %d KiB at the end (%+d KiB, tolerance %d)", bad ? "FAIL" : "ok", r1, r2, r2 - r1, tr
                if (g[n] != "-") printf "; GPU %d MiB, %d MiB (%+d MiB, tolerance %d)", g1, g2, g2 - g1, tg
                printf "; %d samples\n", n
            }' "$SAMPLES")
        fps=$(awk -v f="$FRAMES" -v s="$secs" 'BEGIN { printf "%.1f", f / s }')
        detail="${verdict#* } over ${secs%.*} s, $fps fps, samples: $SAMPLES"
        case $verdict in
        ok*) t_ok "$NAME" "$detail" ;;
        *)   t_fail "$NAME" "memory grows: $detail" ;;
        esac
    fi
    rm -f "$err"
fi

# The library alone: create/encode/free cycles (tests/unit/test_lifecycle.c). make check runs
# its short variant among the unit tests; the long variant belongs here.
if [ $long = 1 ]; then
    t=$BUILD/tests/test_lifecycle
    if [ ! -x "$t" ]; then
        t_fail longrun/lifecycle "$t missing (make unit-tests B=$BUILD)"
    elif out=$(J2KC_TEST_LONG=1 J2KC_TEST_BACKEND=${J2KC_LONGRUN_BACKEND:-auto} "$t" 2>&1); then
        t_ok longrun/lifecycle "$(grep -E '^# (VmRSS|malloc|GPU)' <<< "$out" | sed 's/^# //' | tr '\n' ';')"
    else
        t_fail longrun/lifecycle "$(grep -E 'FAIL' <<< "$out" | head -n 3 | tr '\n' ' ')"
    fi
fi
exit 0
