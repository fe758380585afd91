#!/bin/bash
# Runs every GPU-less test: the unit test binaries of BUILD_DIR/tests, then checker.sh,
# conformance.sh, bad-input.sh and tests/ffmpeg/*.sh. One line per test (ok / FAIL / skip),
# then "N passed, N failed, N skipped". Exit status 1 when anything failed.
#   tests/run-all.sh BUILD_DIR      (environment: J2KC_TEST_QUICK=1 runs a smaller matrix)
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
LOG="$BUILD/test-logs"
mkdir -p "$LOG"
pass=0 failed=0 skipped=0

count() {   # counts the result lines of a log
    local p f s
    p=$(grep -c '^ok ' "$1"); f=$(grep -c '^FAIL ' "$1"); s=$(grep -c '^skip ' "$1")
    pass=$((pass + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

# Unit tests: one result line per binary; its output is kept in the log, shown on failure.
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    "$t" > "$LOG/$name.log" 2>&1
    rc=$?
    if [ $rc = 0 ]; then
        echo "ok unit/$name"; pass=$((pass + 1))
    else
        reason="exit $rc"
        t_crashed $rc && reason="crashed (exit $rc)"
        echo "FAIL unit/$name: $reason (log: $LOG/$name.log)"
        grep -m 10 -i 'fail\|error\|runtime error' "$LOG/$name.log" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
done
if ! ls "$BUILD"/tests/test_* >/dev/null 2>&1; then
    echo "skip unit: no unit test binaries in $BUILD/tests (make unit-tests)"; skipped=$((skipped + 1))
fi

run_script() {  # run_script NAME PATH: streams its result lines, counts them
    local name=$1 path=$2 rc
    bash "$path" "$BUILD" 2>&1 | tee "$LOG/$name.log" | grep --line-buffered -E '^(ok|FAIL|skip) |^    '
    rc=${PIPESTATUS[0]}
    count "$LOG/$name.log"
    if [ "$rc" != 0 ] && ! grep -q '^FAIL ' "$LOG/$name.log"; then
        echo "FAIL $name: script exited with $rc without a FAIL line (log: $LOG/$name.log)"
        failed=$((failed + 1))
    fi
}

for s in checker conformance bad-input; do
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

echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
