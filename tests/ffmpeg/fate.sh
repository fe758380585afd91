#!/bin/bash
# Runs the FATE tests of jpeg2000_cuda (tests/fate/jpeg2000_cuda.mak in the patch series) in the
# FFmpeg build of BUILD_DIR, against the references in fate-refs/ (copied into the FFmpeg source
# tree by `make ffmpeg`). One result line per FATE test. On a GPU machine the FATE_HW test
# (CUDA frames, same reference as system memory) runs too.
#   tests/ffmpeg/fate.sh [BUILD_DIR]
#   GEN=1 tests/ffmpeg/fate.sh [BUILD_DIR]   regenerates the references, copies them to fate-refs/,
#                                            then runs again without GEN: they must hold.
. "$(dirname "$0")/common.inc"
ff_require

OBJ=$BUILD/ffmpeg
SRC=$BUILD/ffmpeg-src
JOBS=${JOBS:-2}

# Keep the references of the source tree in step with fate-refs/ (as make ffmpeg does).
sync_refs_in() {
    local d r
    for d in fate vsynth; do
        for r in "$REPO/fate-refs/$d"/*; do
            [ -f "$r" ] || continue
            mkdir -p "$SRC/tests/ref/$d"
            cmp -s "$r" "$SRC/tests/ref/$d/$(basename "$r")" || cp "$r" "$SRC/tests/ref/$d/"
        done
    done
}

# run_fate TARGET: runs the FATE target, one ok/FAIL line per test it contains.
run_fate() {
    local target=$1 tests t log=$WORK/$1.log
    tests=$(make -s -C "$OBJ" "$target" -n 2>/dev/null | grep -o 'fate-run.sh fate-[^ ]*' | sed 's/.* fate-//' | sort -u)
    if [ -z "$tests" ]; then
        fail $target "no tests in $target (patch series not applied, or a dependency disabled?)"
        return
    fi
    make -k -C "$OBJ" -j"$JOBS" ${GEN:+GEN=1} "$target" > "$log" 2>&1
    local rc=$? before=$FAILED
    for t in $tests; do
        if grep -q "^Test $t failed\|^Updating reference failed" "$log" ||
           grep -q "fate-$t\] Error" "$log"; then
            # the differing lines of the result (encoded md5, size, decoded md5, PSNR), or the message
            fail fate-$t "$( (grep -F "$t" "$log" | grep -v "^TEST\|^Test \|Error 1\|^src/tests/fate-run.sh"
                              grep '^[-+][^-+]' "$OBJ/tests/data/fate/$t.diff" 2>/dev/null |
                                  sed 's| \*\{0,1\}tests/data/fate/| |') | head -n 8 | tr '\n' ' ')"
        elif [ -n "$GEN" ] && grep -q "GEN .*/$t\$" "$log"; then
            ok fate-$t "reference written"
        else
            ok fate-$t
        fi
    done
    if [ $rc != 0 ] && [ $FAILED = $before ]; then
        fail $target "make failed: $(grep -m 3 'Error\|error:' "$log" | tr '\n' ' ')"
    fi
}

sync_refs_in
if [ -n "$GEN" ]; then
    run_fate fate-jpeg2000_cuda
    mkdir -p "$REPO/fate-refs/fate" "$REPO/fate-refs/vsynth"
    cp "$SRC"/tests/ref/fate/jpeg2000_cuda-* "$REPO/fate-refs/fate/" 2>/dev/null
    cp "$SRC"/tests/ref/vsynth/vsynth[123]-jpeg2000_cuda "$SRC"/tests/ref/vsynth/vsynth[123]-jpeg2000_cuda-[0-9g]* \
        "$REPO/fate-refs/vsynth/" 2>/dev/null
    # CUDA-frame tests: the system-memory references, file names changed (same bytes expected)
    for r in jpeg2000_cuda jpeg2000_cuda-53; do
        sed "s/vsynth1-$r\./vsynth1-$r-cudaframes./" "$REPO/fate-refs/vsynth/vsynth1-$r" \
            > "$REPO/fate-refs/vsynth/vsynth1-$r-cudaframes"
    done
    sync_refs_in
    echo "# references copied to $REPO/fate-refs; second run without GEN:"
    GEN=
fi
run_fate fate-jpeg2000_cuda
if have_gpu; then
    run_fate fate-jpeg2000_cuda-hw
else
    skip fate-jpeg2000_cuda-hw "no GPU (CUDA frames test, make fate-hw)"
fi
finish
