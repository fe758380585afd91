#!/bin/bash
# One fuzzing campaign: runs a libFuzzer target for SECONDS with JOBS processes (libFuzzer's
# fork mode: a crash, timeout or out-of-memory input is saved and the campaign goes on), on a
# working corpus that grows from the seed corpus tests/fuzz/corpus/TARGET. Prints the seed,
# the executions, execs/s and the crash files. Self-contained given the binary: on a bigger
# machine, copy the repository with its build-fuzz/ and run, e.g.
#   tests/fuzz/campaign.sh build-fuzz/fuzz/fuzz_check 3600 16
# Stopped early (SIGTERM, or Ctrl-C in a terminal), it ends the fuzzer and its jobs, still
# prints the summary of what ran, and exits 128 + the signal.
#
# Environment: FUZZ_WORK (working directory; default BIN's directory/campaign-TARGET),
# FUZZ_NICE (default 19), FUZZ_TIMEOUT (seconds per input, default 30), FUZZ_RSS_MB (default
# 2048), FUZZ_SEED (libFuzzer -seed; default random, printed). J2KC_FUZZ_SKIP_KNOWN=1 (the
# default here) leaves out the assertions that known defects fail (tests/fuzz/known-defects.txt).
set -u
BIN=${1:?usage: campaign.sh FUZZ_BINARY SECONDS [JOBS]}
SECONDS_RUN=${2:?usage: campaign.sh FUZZ_BINARY SECONDS [JOBS]}
JOBS=${3:-1}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TARGET=$(basename "$BIN"); TARGET=${TARGET#fuzz_}
SEEDS=$ROOT/tests/fuzz/corpus/$TARGET
WORK=${FUZZ_WORK:-$(dirname "$BIN")/campaign-$TARGET}
SEED=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
export J2KC_FUZZ_SKIP_KNOWN=${J2KC_FUZZ_SKIP_KNOWN:-1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
[ -x "$BIN" ] || { echo "campaign: $BIN: not built (make fuzz-build)" >&2; exit 2; }
[ -d "$SEEDS" ] || { echo "campaign: no seed corpus $SEEDS" >&2; exit 2; }
mkdir -p "$WORK/corpus" "$WORK/artifacts"
LOG=$WORK/campaign-$(date -u +%Y%m%dT%H%M%SZ).log
echo "campaign $TARGET: $SECONDS_RUN s, $JOBS job(s), seed $SEED, corpus $WORK/corpus, log $LOG"
# Stopped early (Ctrl-C, kill, a time limit around the campaign): fork mode's parent does not
# end on SIGINT, so the fuzzer and its jobs are ended here and the summary below is still
# printed from the status lines logged so far; the campaign then exits 128 + the signal.
stopped=0
# The fuzzer runs in a session of its own (setsid), so that its jobs (fork mode starts each
# through a shell) are ended with it as one process group.
stop() { stopped=$1; [ -n "${fuzzer:-}" ] && kill -TERM -- "-$fuzzer" 2>/dev/null; }
trap 'stop 130' INT
trap 'stop 143' TERM
setsid nice -n "${FUZZ_NICE:-19}" "$BIN" -fork="$JOBS" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$SECONDS_RUN" -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
    -seed="$SEED" -artifact_prefix="$WORK/artifacts/" -print_final_stats=1 \
    "$WORK/corpus" "$SEEDS" > "$LOG" 2>&1 &
fuzzer=$!
[ $stopped = 0 ] || stop $stopped     # a signal before $! was known
wait "$fuzzer"
rc=$?
if [ $stopped != 0 ]; then
    wait "$fuzzer"
    rc=$?
    echo "campaign $TARGET: stopped before its time"
fi
trap - INT TERM
# Fork mode's status lines: "#RUNS: cov: .. ft: .. corp: .. exec/s N oom/timeout/crash: a/b/c time: Ns ..."
last=$(grep -E '^#[0-9]+: cov:' "$LOG" | tail -n 1)
runs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<< "$last")
secs=$(sed -n 's/.* time: \([0-9]*\)s.*/\1/p' <<< "$last")
execs=$( [ -n "$runs" ] && [ "${secs:-0}" -gt 0 ] && echo $((runs / secs)) )
bad=$(sed -n 's/.* oom\/timeout\/crash: \([0-9/]*\).*/\1/p' <<< "$last")
crashes=$(find "$WORK/artifacts" -type f | wc -l)
echo "campaign $TARGET: ${runs:-?} runs in ${secs:-?} s (${execs:-?} exec/s), $JOBS job(s)," \
     "oom/timeout/crash ${bad:-?}, corpus $(find "$WORK/corpus" -type f | wc -l) files, libFuzzer exit $rc"
if [ "$crashes" -gt 0 ]; then
    # each saved input replayed once and grouped by what it triggers (tests/fuzz/common.inc)
    . "$ROOT/tests/fuzz/common.inc"
    echo "campaign $TARGET: $crashes input(s) saved in $WORK/artifacts (replay: $BIN FILE), by signature:"
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
    for f in "$WORK"/artifacts/*; do
        case $(basename "$f") in
        crash-*) timeout 120 "$BIN" "$f" > "$WORK/replay.log" 2>&1
                 sig=$(fuzz_signature "$WORK/replay.log"); echo "${sig:-no crash on replay}	$f" ;;
        *)       echo "$(basename "$f" | sed 's/-.*//') (slow, timeout or out of memory)	$f" ;;
        esac
    done | sort | awk -F'\t' '{ n[$1]++; if (!($1 in ex)) ex[$1] = $2 } END { for (s in n) printf "    %5d x %s\n            e.g. %s\n", n[s], s, ex[s] }'
    rm -f "$WORK/replay.log"
fi
[ $stopped = 0 ] || exit $stopped
[ -n "$runs" ]
