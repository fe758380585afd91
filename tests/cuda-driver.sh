#!/bin/bash
# The CUDA backend without a usable NVIDIA driver (issue 31): the library loads the driver at
# run time (j2kcuda/src/cuda/cu_driver.h), and the test hook J2KC_CUDA_DRIVER makes it open
# another file instead of libcuda.so.1, so that these run on any machine, GPU or not:
#  - no driver (a path that does not exist): --backend auto encodes on the reference backend
#    with its notice, bytes identical to --backend ref; --backend cuda fails cleanly, the
#    message naming the library and the loader's reason, no output left;
#  - an old driver (tests/cuda_driver_stub.c, reporting CUDA 12.2): the message names the
#    driver's version and the one this build needs; auto falls back again;
#  - a driver that reports a new version but lacks the functions (the same stub): a clear
#    error, no crash;
#  - the shared library links no CUDA library (ldd) and imports no driver symbol (nm);
#  - no CUDA runtime inside either library (nm): no cuda* function and no registration of
#    device code (__cudaRegister*), the kernels being the embedded images (j2ki_cuda_images)
#    that the driver loads.
# Skips itself on a build without CUDA.
#   tests/cuda-driver.sh BUILD_DIR
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
J2KC="$BUILD/bin/j2kc"
T="$BUILD/testtools"
W="$BUILD/test-work/cuda-driver"
rm -rf "$W" && mkdir -p "$W"
T_FAILED=0
[ -x "$J2KC" ] || { t_fail cuda-driver/build "$J2KC not built"; exit 1; }
t_build_helpers "$BUILD" || { t_fail cuda-driver/helpers "cannot build tests/gen helpers"; exit 1; }

SEED=${J2KC_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "# cuda-driver: seed $SEED"
"$T/gen" -o "$W/in.ppm" --size 200x120 --depth 12 --seed "$SEED" > /dev/null ||
    { t_fail cuda-driver/gen "gen failed"; exit 1; }
NODRV="$W/no-such-dir/libcuda.so.1"

if J2KC_CUDA_DRIVER=$NODRV "$J2KC" -i "$W/in.ppm" -o "$W/probe.j2c" --backend cuda 2>&1 |
        grep -q 'built without CUDA'; then
    t_skip cuda-driver "the library was built without CUDA"
    exit 0
fi
"$J2KC" -i "$W/in.ppm" -o "$W/ref.j2c" --backend ref --bytes 20000 > /dev/null 2>&1 ||
    { t_fail cuda-driver/ref "the reference backend failed"; exit 1; }

# fallback NAME DRIVER WANT [ARGS]: --backend auto with DRIVER encodes on the reference backend
fallback() {
    local name=$1 drv=$2 want=$3 rc
    shift 3
    J2KC_CUDA_DRIVER=$drv "$J2KC" -i "$W/in.ppm" -o "$W/$name.j2c" --backend auto --bytes 20000 "$@" \
        > "$W/$name.out" 2> "$W/$name.err"
    rc=$?
    if [ $rc != 0 ]; then
        t_fail "cuda-driver/$name" "exit $rc: $(head -c 300 "$W/$name.err")"
    elif ! grep -q -E "$want" "$W/$name.err"; then
        t_fail "cuda-driver/$name" "no notice '$want': $(head -c 300 "$W/$name.err")"
    elif ! cmp -s "$W/ref.j2c" "$W/$name.j2c"; then
        t_fail "cuda-driver/$name" "bytes differ from --backend ref"
    else
        t_ok "cuda-driver/$name" "$(grep -E "$want" "$W/$name.err" | head -n 1)"
    fi
}

# refuse NAME DRIVER WANT [ARGS]: --backend cuda with DRIVER fails cleanly, naming WANT
refuse() {
    local name=$1 drv=$2 want=$3 rc msg
    shift 3
    J2KC_CUDA_DRIVER=$drv "$J2KC" -i "$W/in.ppm" -o "$W/$name.j2c" --backend cuda --bytes 20000 "$@" \
        > "$W/$name.out" 2> "$W/$name.err"
    rc=$?
    msg=$(head -c 400 "$W/$name.err" | tr '\n' ' ')
    if [ $rc = 0 ]; then
        t_fail "cuda-driver/$name" "accepted (exit 0)"
    elif t_crashed $rc; then
        t_fail "cuda-driver/$name" "crashed (exit $rc): $msg"
    elif grep -q -E 'AddressSanitizer|runtime error|LeakSanitizer' "$W/$name.err"; then
        t_fail "cuda-driver/$name" "sanitizer report: $msg"
    elif [ -e "$W/$name.j2c" ]; then
        t_fail "cuda-driver/$name" "output file left behind"
    elif ! grep -q -E "$want" "$W/$name.err"; then
        t_fail "cuda-driver/$name" "message does not name '$want': $msg"
    else
        t_ok "cuda-driver/$name" "exit $rc: $(grep -E "$want" "$W/$name.err" | head -n 1)"
    fi
}

fallback no-driver-auto "$NODRV" 'no usable CUDA device: encoding on the reference'
refuse no-driver-cuda "$NODRV" "no NVIDIA driver: cannot load $NODRV \(.+\)"
# a gpu list or all: the same fallback and the same message as one device
fallback no-driver-auto-gpu-all "$NODRV" 'no usable CUDA device: encoding on the reference' --gpu all
refuse no-driver-cuda-gpu-list "$NODRV" "no NVIDIA driver: cannot load $NODRV \(.+\)" --gpu 0,1

# the stub, as an old driver (CUDA 12.2) and as a new one without the functions
CC=${CC:-cc}
for v in 12020 99990; do
    if ! $CC -std=c99 -O1 -shared -fPIC -DSTUB_VERSION=$v -o "$W/stub$v.so" \
            "$REPO_DIR/tests/cuda_driver_stub.c" 2> "$W/stub$v.log"; then
        t_fail cuda-driver/stub "cannot build tests/cuda_driver_stub.c: $(head -c 300 "$W/stub$v.log")"
        exit 1
    fi
done
refuse old-driver-cuda "$W/stub12020.so" \
    'the NVIDIA driver supports CUDA 12\.2; this build needs CUDA [0-9]+\.[0-9] or newer'
fallback old-driver-auto "$W/stub12020.so" 'no usable CUDA device: encoding on the reference'
refuse incomplete-driver "$W/stub99990.so" 'the NVIDIA driver \(.*\) has no cu[A-Za-z]+ of CUDA'

# no CUDA library linked, no driver symbol imported: the driver comes from dlopen only
LIB="$BUILD/lib/libj2kcuda.so"
if [ ! -f "$LIB" ]; then
    t_fail cuda-driver/ldd "$LIB not built"
elif ! t_have ldd || ! t_have nm; then
    t_skip cuda-driver/ldd "no ldd or nm (binutils)"
else
    linked=$(ldd "$LIB" | grep -E 'libcuda|libcudart|libnv' | tr '\n' ' ')
    imported=$(nm -D --undefined-only "$LIB" | awk '{print $NF}' | grep -E '^cu[A-Z]' | tr '\n' ' ')
    if [ -n "$linked" ]; then
        t_fail cuda-driver/ldd "links $linked"
    elif [ -n "$imported" ]; then
        t_fail cuda-driver/ldd "imports driver symbols: $imported"
    else
        t_ok cuda-driver/ldd "no CUDA library in ldd, no cu* symbol imported"
    fi
fi
# no CUDA runtime: nothing of libcudart defined or called, the device code embedded as images
for lib in "$BUILD/lib/libj2kcuda.a" "$LIB"; do
    name=cuda-driver/no-runtime-$(basename "$lib")
    if [ ! -f "$lib" ]; then
        t_fail "$name" "$lib not built"
    elif ! t_have nm; then
        t_skip "$name" "no nm (binutils)"
    else
        rt=$(nm "$lib" 2>/dev/null | awk '$2 != "a" && $2 != "N" {print $NF}' |
             grep -E '^(cuda[A-Z]|__cuda|__nv_)' | sort -u | head -n 8 | tr '\n' ' ')
        if [ -n "$rt" ]; then
            t_fail "$name" "CUDA runtime symbols: $rt"
        elif ! nm "$lib" 2>/dev/null | grep -q ' j2ki_cuda_images$'; then
            t_fail "$name" "no embedded device code (j2ki_cuda_images)"
        else
            t_ok "$name" "no cuda*/__cuda* symbol; device code embedded (j2ki_cuda_images)"
        fi
    fi
done
[ "$T_FAILED" = 0 ]
