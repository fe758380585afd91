#!/bin/sh
# make check-cuda: the reference backend against the CUDA backend, stage by stage and end to
# end (tests/check_cuda.cu). Needs a CUDA device; fails when there is none.
# Usage: tests/check-cuda.sh BUILD_DIR [check_cuda options: --seed N --only NAME --bench -v]
# CHECK_CUDA_SANITIZE=1 also runs a few configurations under compute-sanitizer (memcheck, racecheck,
# synccheck, initcheck).
set -e
B=${1:-build}
[ $# -gt 0 ] && shift
cfg() { sed -n "s/^$1=//p" config.mak; }
NVCC=$(cfg NVCC)
GENCODE=$(cfg NVCC_GENCODE)
if [ "$(cfg HAVE_CUDA)" != 1 ] || [ -z "$NVCC" ]; then
    echo "check-cuda: the library was configured without CUDA (./configure found no nvcc)" >&2
    exit 1
fi
build() {   # build NAME: $B/tests/NAME from tests/NAME.cu and the static library
    local bin=$B/tests/$1
    if [ ! -x "$bin" ] || [ "tests/$1.cu" -nt "$bin" ] || [ "$B/lib/libj2kcuda.a" -nt "$bin" ]; then
        mkdir -p "$B/tests"
        echo "building $bin"
        # shellcheck disable=SC2086
        "$NVCC" -O2 -std=c++17 --fmad=false -Xcompiler -ffp-contract=off -Ij2kcuda/include -Ij2kcuda/src \
            -Itests/unit -DJ2KC_HAVE_CUDA=1 $GENCODE -o "$bin" "tests/$1.cu" "$B/lib/libj2kcuda.a" -lm -lpthread
    fi
}
BIN=$B/tests/check_cuda
build check_cuda
build cuda_faults
set +e
"$BIN" "$@"
rc=$?
if [ $rc -eq 77 ]; then
    echo "check-cuda: no CUDA device on this machine" >&2
    exit 1
fi
# forced SETTING WHAT CASE...: each case again with the environment SETTING (VAR=VALUE, or
# several separated by spaces); it must pass with every check identical and, when WHAT is
# given, name WHAT on its tier-1 line.
forced() {
    local set=$1 what=$2 c out r pat
    shift 2
    for c in "$@"; do
        # shellcheck disable=SC2086
        out=$(env $set "$BIN" --only "$c" 2>&1)
        r=$?
        pat="^ok   $c end-to-end"
        [ -n "$what" ] && pat="^ok   $c tier-1 .*$what"
        if [ $r -ne 0 ] || ! echo "$out" | grep -q "$pat"; then
            echo "$out" | grep -E "^(FAIL|ok   $c (end-to-end|tier-1))" | head -n 5
            echo "FAIL $c with $set${what:+: expected $what}, identical bytes (exit $r)"
            rc=1
        else
            echo "ok   $c with $set${what:+: $what}: all checks identical"
        fi
    done
}
if [ $rc -eq 0 ] && [ $# -eq 0 ] && [ -z "${J2KC_CUDA_T1_VARIANT:-}" ]; then
    # Smaller GPUs: the serial tier-1 kernel's shared memory per thread block (4 lanes of a
    # 64x64 block's words take 67,584 bytes) beyond the device's limit must fall back to fewer
    # lanes (Turing: 64 KB) or to words in global memory, with the same bytes.
    # J2KC_CUDA_SMEM_OPTIN lowers the limit the library sees; the tier-1 lines name the kernel
    # that ran. The column-parallel coder is the default for every shape, so the serial one
    # with shared words and 4 lanes (J2KI_T1_CUDA_SMEM + 4 = 68) is chosen here.
    forced "J2KC_CUDA_T1_VARIANT=68 J2KC_CUDA_SMEM_OPTIN=65536" "t1_smem_kernel<1>" hd-97 hd-53
    forced "J2KC_CUDA_T1_VARIANT=68 J2KC_CUDA_SMEM_OPTIN=16384" "t1_lanes_kernel<4>" hd-97 hd-53
    # Rate control sizing several thresholds per guided step (rc_ref.h, j2ki_rc_multi_probes; both
    # backends read the setting): the byte-budget cases, the same bytes as the reference.
    for n in 32 3; do
        forced J2KC_RC_PROBES=$n "" layers-bytes empty-prec-97 bypass-32-97 try-12bit-97 try-again-97
    done
    # Every precinct's headers coded by a team of warps (t2_cuda.h, J2KC_T2_TEAM_MIN=1: rate
    # control's sizing and tier-2's writing), and teams from 2 code-blocks up beside warps: the
    # same bytes as the reference.
    for n in 1 2; do
        forced J2KC_T2_TEAM_MIN=$n "" layers-bytes empty-prec-97 bypass-32-97 style-all-97 offset-tiles-53 \
            subsampled-420-97 max-levels-53 ht-32x32-97 ht-tiles-97
    done
fi
if [ $# -eq 0 ]; then
    # The embedded device code through the driver (cuda/cu_code.h, tests/cu_code_probe.c): a
    # probe kernel's fatbin embedded by tools/embed-fatbin.sh, loaded, found by name, launched.
    P=$B/tests/cu_code_probe
    CUDA_HOME=$(cfg CUDA_HOME)
    # shellcheck disable=SC2086
    if "$NVCC" $GENCODE -fatbin -o "$P.fatbin" tests/cu_code_probe_kern.cu &&
       sh tools/embed-fatbin.sh "$P.S" "$P.fatbin" && cc -c -o "$P.o" "$P.S" &&
       cc -std=c99 -O2 -Ij2kcuda/include -Ij2kcuda/src -I"$CUDA_HOME/include" -o "$P" tests/cu_code_probe.c "$P.o" \
          "$B/lib/libj2kcuda.a" -ldl -lrt -lstdc++ -lpthread -lm; then
        "$P" || { echo "FAIL cu_code_probe (exit $?)"; rc=1; }
    else
        echo "FAIL cu_code_probe: does not build"; rc=1
    fi
    # GPU faults survived (tests/cuda_faults.cu): each mode in a process of its own, since
    # trap leaves its context unusable
    for m in alloc pinned submit threads devfull trap syncrace codeload smemrace; do
        timeout 600 "$B/tests/cuda_faults" $m || { echo "FAIL cuda_faults $m (exit $?)"; rc=1; }
    done
fi
if [ $rc -eq 0 ] && [ "${CHECK_CUDA_SANITIZE:-0}" = 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
    # try-again-97 (a frame coded twice, qstep_try) under memcheck only: racecheck checks shared
    # memory, and the second coding runs the same kernels (device-verify with it in the racecheck
    # list ran past its 600 s call in that phase; memcheck of it passed)
    for tool in memcheck racecheck synccheck initcheck; do
        cases="odd-97-ict offset-tiles-53 style-all-97 packed-rgb48-53 bypass-32-97 cblk-256x16-all cblk-8x512-tall ht-32x32-97"
        [ $tool = memcheck ] && cases="$cases try-again-97"
        echo "compute-sanitizer --tool $tool ($cases)"
        for c in $cases; do
            compute-sanitizer --tool $tool --error-exitcode 9 "$BIN" --only "$c" >/dev/null || { echo "FAIL $tool $c"; rc=1; }
        done
        # the header coder's teams of warps (t2_cuda.h) on every precinct
        for c in layers-bytes offset-tiles-53; do
            J2KC_T2_TEAM_MIN=1 compute-sanitizer --tool $tool --error-exitcode 9 "$BIN" --only "$c" >/dev/null ||
                { echo "FAIL $tool $c (J2KC_T2_TEAM_MIN=1)"; rc=1; }
        done
    done
fi
exit $rc
