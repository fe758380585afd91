#!/bin/bash
# Runs every GPU-less test: the unit test binaries of BUILD_DIR/tests, the CUDA tier-1 and DWT
# kernels, tier-2, rate control and the HT coder emulated on the host (make check-t1p-emu,
# check-dwt-emu, check-t2-emu, check-rc-emu, check-ht-emu, when configured with CUDA), then
# checker.sh, threads.sh,
# conformance.sh, bad-input.sh, cuda-driver.sh, ht.sh, ht-profiles.sh, quality.sh (when present), scaling.sh,
# tests/ffmpeg/*.sh, layering.sh and clang-cuda.sh. One line per test (ok / FAIL / skip),
# then "N passed, N failed, N skipped". Exit status 1 when anything failed.
#   tests/run-all.sh BUILD_DIR [SANITIZED_BUILD_DIR]
#      (environment: J2KC_TEST_QUICK=1 runs a smaller matrix). With a second build directory
#      (built with SANITIZE=1: AddressSanitizer + UndefinedBehaviorSanitizer), its unit tests and
#      bad-input.sh run there too, as asan/... lines.
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
SAN_BUILD=${2:+$(t_build_dir "$2")}
LOG="$BUILD/test-logs"
mkdir -p "$LOG"
pass=0 failed=0 skipped=0

count() {   # counts the result lines of a log
    local p f s
    p=$(grep -c '^ok ' "$1"); f=$(grep -c '^FAIL ' "$1"); s=$(grep -c '^skip ' "$1")
    pass=$((pass + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

# Unit tests: one result line per binary; its output is kept in the log, shown on failure.
run_units() {   # run_units BUILD_DIR PREFIX
    local t name rc reason logf
    for t in "$1"/tests/test_*; do
        [ -x "$t" ] || continue
        name=$(basename "$t")
        logf="$LOG/${2//\//-}$name.log"
        "$t" > "$logf" 2>&1
        rc=$?
        if [ $rc = 0 ]; then
            echo "ok $2unit/$name"; pass=$((pass + 1))
        else
            reason="exit $rc"
            t_crashed $rc && reason="crashed (exit $rc)"
            echo "FAIL $2unit/$name: $reason (log: $logf)"
            grep -m 10 -i 'fail\|error\|runtime error' "$logf" | sed 's/^/    /'
            failed=$((failed + 1))
        fi
    done
    if ! ls "$1"/tests/test_* >/dev/null 2>&1; then
        echo "FAIL $2unit: no unit test binaries in $1/tests (make unit-tests)"; failed=$((failed + 1))
    fi
}
run_units "$BUILD" ""

# The default CUDA tier-1 kernels (J2KI_T1_CUDA_PAR) run on the host, warps as threads, against
# the serial coder, and the CUDA DWT kernels (against dwt_ref.c), tier-2 (against the reference
# writer) and rate control (against rc_ref.c) the same way: their source is tested wherever the
# CUDA headers are, GPU or not.
if [ "$(sed -n 's/^HAVE_CUDA=//p' config.mak 2>/dev/null)" = 1 ]; then
    for e in t1p dwt t2 rc ht; do
        if make -s B="$BUILD" check-$e-emu > "$LOG/$e-emu.log" 2>&1; then
            echo "ok $e-emu: $(tail -n 1 "$LOG/$e-emu.log" | sed "s/^ok ${e}_emu: //")"; pass=$((pass + 1))
        else
            echo "FAIL $e-emu (log: $LOG/$e-emu.log)"; grep -m 10 '^FAIL' "$LOG/$e-emu.log" | sed 's/^/    /'
            failed=$((failed + 1))
        fi
    done
else
    echo "skip t1p-emu: configured without CUDA (no CUDA headers for the kernel source)"; skipped=$((skipped + 1))
    for e in dwt t2 rc ht; do
        echo "skip $e-emu: configured without CUDA"; skipped=$((skipped + 1))
    done
fi

run_script() {  # run_script NAME PATH: streams its result lines, counts them
    local name=$1 path=$2 rc log="$LOG/${1//\//-}.log"
    bash "$path" "$BUILD" 2>&1 | tee "$log" | grep --line-buffered -E '^(ok|FAIL|skip) |^    '
    rc=${PIPESTATUS[0]}
    count "$log"
    # 77: the whole script skipped (automake convention); it says why in a skip line.
    if [ "$rc" = 77 ] && ! grep -q -E '^(ok|FAIL|skip) ' "$log"; then
        echo "skip $name: script skipped itself (exit 77)"; skipped=$((skipped + 1))
    elif [ "$rc" != 0 ] && [ "$rc" != 77 ] && ! grep -q '^FAIL ' "$log"; then
        t_crashed "$rc" && rc="$rc, crashed"
        echo "FAIL $name: script exited with $rc without a FAIL line (log: $log)"
        failed=$((failed + 1))
    fi
}

for s in checker conformance bad-input threads cuda-driver ht ht-profiles quality fuzz-smoke longrun bench-classes bench-report scaling; do
    case $s in quality|fuzz-smoke|longrun|bench-classes|bench-report)   # optional (other owners)
        [ -f "$TESTS_DIR/$s.sh" ] || continue ;;
    esac
    if [ -f "$TESTS_DIR/$s.sh" ]; then
        run_script "$s" "$TESTS_DIR/$s.sh"
    else
        echo "FAIL $s: tests/$s.sh missing"; failed=$((failed + 1))
    fi
done
for s in "$TESTS_DIR"/ffmpeg/*.sh; do
    [ -f "$s" ] || continue
    run_script "ffmpeg/$(basename "$s" .sh)" "$s"
done

# The library's layers and include graph (sources only, quick)
run_script layering "$TESTS_DIR/layering.sh"
# The kernels built to PTX by clang without NVIDIA's SDK (skips without clang 19+ or CCCL)
run_script clang-cuda "$TESTS_DIR/clang-cuda.sh"

# The sanitizer build: unit tests and bad input again, where memory errors and undefined
# behaviour abort the program (halt_on_error) and so fail the test.
if [ -n "$SAN_BUILD" ]; then
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
    run_units "$SAN_BUILD" "asan/"
    if [ -f "$TESTS_DIR/bad-input.sh" ]; then
        SAVED_BUILD=$BUILD; BUILD=$SAN_BUILD
        run_script "asan/bad-input" "$TESTS_DIR/bad-input.sh"
        BUILD=$SAVED_BUILD
    fi
fi

echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
