#!/bin/bash
# The fuzz targets' share of make check (tests/fuzz/, doc/reliability.md): builds them with
# clang's libFuzzer, ASan and UBSan in BUILD_DIR-fuzz, replays every input kept in the tree
# (the seed corpus tests/fuzz/corpus/TARGET and the crash reproducers tests/fuzz/regress/
# TARGET, each a test), then fuzzes each target for a few seconds from a copy of its corpus.
#   tests/fuzz-smoke.sh BUILD_DIR
# Environment: J2KC_FUZZ_SMOKE_SECONDS (per target, default 5).
# Without clang's libFuzzer (tests/install-deps.sh installs Debian's clang when root) the
# inputs are replayed through the gcc build of the same targets (replay.c) and the fuzzing is
# skipped with a notice.
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
FUZZ_B=$BUILD-fuzz
SECS=${J2KC_FUZZ_SMOKE_SECONDS:-5}
TARGETS="check image params encode"
KNOWN=$REPO_DIR/tests/fuzz/known-defects.txt
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
cd "$REPO_DIR" || exit 1
LOG=$FUZZ_B/smoke
mkdir -p "$LOG"

libfuzzer=0
if t_have clang; then
    printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }\n' > "$LOG/probe.c"
    clang -fsanitize=fuzzer,address,undefined -o "$LOG/probe" "$LOG/probe.c" > "$LOG/probe.log" 2>&1 && libfuzzer=1
fi
pkg-config --exists libopenjp2 2>/dev/null || TARGETS="check image params"
pkg-config --exists libopenjp2 2>/dev/null ||
    t_skip fuzz/encode "libopenjp2 development files missing (Debian libopenjp2-7-dev)"

if [ $libfuzzer = 1 ]; then
    start=$(date +%s)
    if ! make -s B="$BUILD" FUZZ_TARGETS="$TARGETS" fuzz-build > "$LOG/build.log" 2>&1; then
        t_fail fuzz/build "make fuzz-build failed (log: $LOG/build.log)"; tail -n 5 "$LOG/build.log" | sed 's/^/    /'
        exit 1
    fi
    t_ok fuzz/build "clang libFuzzer + ASan + UBSan, $(( $(date +%s) - start )) s"
    run_one() { "$FUZZ_B/fuzz/fuzz_$1" -runs=1 "${@:2}"; }
else
    if t_have clang; then why="clang cannot link -fsanitize=fuzzer (log: $LOG/probe.log)"
    else why="clang missing (Debian clang; tests/install-deps.sh installs it as root)"; fi
    t_skip fuzz/libfuzzer "$why: replaying the kept inputs through the gcc build only"
    if ! make -s B="$BUILD" FUZZ_TARGETS="$TARGETS" fuzz-replay > "$LOG/build.log" 2>&1; then
        t_fail fuzz/build "make fuzz-replay failed (log: $LOG/build.log)"; exit 1
    fi
    run_one() { "$BUILD/fuzz/replay_$1" "${@:2}"; }
fi

# A crash of the short runs below with the signature of a known defect's reproducer
# (tests/fuzz/common.inc) is that defect found again, not a failure.
. "$REPO_DIR/tests/fuzz/common.inc"
declare -A known_sig

for t in $TARGETS; do
    # the seed corpus: every input once, in one run
    files=("tests/fuzz/corpus/$t"/*)
    if run_one "$t" "${files[@]}" > "$LOG/$t-corpus.log" 2>&1; then
        t_ok "fuzz/$t/corpus" "${#files[@]} inputs"
    else
        t_fail "fuzz/$t/corpus" "an input of the seed corpus fails (log: $LOG/$t-corpus.log)"
        grep -m 5 -E 'ERROR|runtime error|fuzz_[a-z]*:|Running: ' "$LOG/$t-corpus.log" | sed 's/^/    /'
    fi
    # the crash reproducers: one test each
    for f in "tests/fuzz/regress/$t"/*; do
        [ -f "$f" ] || continue
        name=fuzz/$t/regress/$(basename "$f")
        known=$(awk -v k="$t/$(basename "$f")" '$1 == k { $1 = ""; sub(/^ +/, ""); print }' "$KNOWN" 2>/dev/null)
        if run_one "$t" "$f" > "$LOG/$t-$(basename "$f").log" 2>&1; then
            t_ok "$name" "${known:+known defect $known fixed: drop its line from tests/fuzz/known-defects.txt}"
        elif [ -n "$known" ]; then
            t_skip "$name" "known defect $known, fixed on another branch"
            sig=$(fuzz_signature "$LOG/$t-$(basename "$f").log")
            [ -n "$sig" ] && known_sig["$t:$sig"]=$known
        else
            t_fail "$name" "reproducer fails again (log: $LOG/$t-$(basename "$f").log)"
            grep -m 5 -E 'ERROR|runtime error|fuzz_[a-z]*:' "$LOG/$t-$(basename "$f").log" | sed 's/^/    /'
        fi
    done
done

[ $libfuzzer = 1 ] || exit 0
for t in $TARGETS; do
    work=$LOG/$t-work
    rm -rf "$work"; mkdir -p "$work/corpus" "$work/artifacts"
    seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    J2KC_FUZZ_SKIP_KNOWN=1 "$FUZZ_B/fuzz/fuzz_$t" -max_total_time="$SECS" -timeout=20 -rss_limit_mb=2048 \
        -seed="$seed" -artifact_prefix="$work/artifacts/" "$work/corpus" "tests/fuzz/corpus/$t" \
        > "$LOG/$t-fuzz.log" 2>&1
    rc=$?
    runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$LOG/$t-fuzz.log")
    sig=$(fuzz_signature "$LOG/$t-fuzz.log")
    if [ $rc = 0 ] && [ -n "$runs" ]; then
        t_ok "fuzz/$t/run" "seed $seed, $runs runs in $SECS s"
    elif [ -n "$sig" ] && [ -n "${known_sig["$t:$sig"]}" ]; then
        t_skip "fuzz/$t/run" "seed $seed: found the known defect ${known_sig["$t:$sig"]} again ($sig; input in $work/artifacts)"
    else
        t_fail "fuzz/$t/run" "seed $seed: libFuzzer exit $rc; input kept in $work/artifacts (log: $LOG/$t-fuzz.log)"
        grep -m 5 -E 'ERROR|runtime error|fuzz_[a-z]*:|SUMMARY' "$LOG/$t-fuzz.log" | sed 's/^/    /'
    fi
done
exit 0
