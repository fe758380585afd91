#!/bin/bash
# What the team runs on a GPU machine after GPU code changes (CI has no GPU):
#   1. build with CUDA, 2. make check-cuda (per-stage + end-to-end reference vs CUDA; again with the
#      serial tier-1 kernel J2KC_CUDA_T1_VARIANT=8),
#   3. reference vs CUDA codestreams, byte for byte, on 2K and 4K DCI frames and a lossless
#      4:2:2 10-bit frame through j2kc, with the HT block coder too (lossless 4:2:2, 4K budget, a
#      2K budget above the plane chooser's model), 4. compute-sanitizer memcheck and racecheck on the
#      check program's small cases, on a 2K and a 4K DCI encode and on a 2K BYPASS encode;
#      synccheck and initcheck on the small cases and the 2K encode.
# Usage: tests/device-verify.sh [BUILD_DIR] [OUT_DIR]    (environment: ARCH, default 90; SAN=0 skips 4)
set -u
B=${1:-build}
OUT=${2:-${OUT:-$B/device-verify}}
ARCH=${ARCH:-90}
mkdir -p "$OUT"
log() { echo "== $*"; }
fail=0

nvidia-smi -L || { echo "no GPU"; exit 1; }
log "build (sm_$ARCH)"
if ! { ./configure --cuda-arch="$ARCH" && make -s -j"$(nproc)" B="$B" all; } > "$OUT/build.log" 2>&1; then
    tail -n 40 "$OUT/build.log"; exit 1
fi

log "check-cuda"
bash tests/check-cuda.sh "$B" > "$OUT/check-cuda.log" 2>&1
rc=$?
grep -E "^(FAIL|ok|#)" "$OUT/check-cuda.log" | tail -n 25
[ $rc = 0 ] || { echo "FAIL check-cuda (exit $rc)"; fail=1; }

# The default tier-1 for blocks of up to 32x32 is the column-parallel coder; the serial
# kernels it replaced still code blocks wider than 64: check them on every configuration too.
log "check-cuda, serial tier-1 (J2KC_CUDA_T1_VARIANT=8)"
J2KC_CUDA_T1_VARIANT=8 bash tests/check-cuda.sh "$B" > "$OUT/check-cuda-v8.log" 2>&1
rc=$?
tail -n 1 "$OUT/check-cuda-v8.log"
[ $rc = 0 ] || { grep "^FAIL" "$OUT/check-cuda-v8.log" | head; echo "FAIL check-cuda variant 8 (exit $rc)"; fail=1; }

log "frames"
F=/tmp/dv
mkdir -p $F
python3 - "$F" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
rs = np.random.RandomState(12345)
def frame(w, h, depth):
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    m = (1 << depth) - 1
    base = 0.5 + 0.25 * np.sin(x / 97.0) * np.cos(y / 61.0) + 0.15 * np.sin((x + 2 * y) / 13.0)
    out = []
    for c in range(3):
        v = base + 0.05 * c + rs.normal(0, 0.02, (h, w)).astype(np.float32)
        out.append(np.clip(v * m, 0, m).astype('>u2'))
    return np.dstack(out)
for name, w, h in (('f2k', 2048, 1080), ('f4k', 4096, 2160)):
    a = frame(w, h, 12)
    open('%s/%s.ppm' % (d, name), 'wb').write(b'P6\n%d %d\n4095\n' % (w, h) + a.astype('>u2').tobytes())
# 4:2:2 10-bit planar for the lossless case
y = (frame(1920, 1080, 10)[..., 0]).astype('<u2')
c = (frame(960, 1080, 10)[..., 1:]).astype('<u2')
open('%s/imf.yuv' % d, 'wb').write(y.tobytes() + c[..., 0].tobytes() + c[..., 1].tobytes())
EOF

log "reference vs CUDA codestreams"
run_pair() {   # NAME J2KC-ARGS...
    local n=$1; shift
    "$B/bin/j2kc" "$@" --backend ref -o "$F/$n.ref.j2c" -q || { echo "FAIL $n: ref encode"; fail=1; return; }
    "$B/bin/j2kc" "$@" --backend cuda -o "$F/$n.cuda.j2c" -q || { echo "FAIL $n: cuda encode"; fail=1; return; }
    if cmp -s "$F/$n.ref.j2c" "$F/$n.cuda.j2c"; then
        echo "ok $n: identical ($(stat -c %s "$F/$n.ref.j2c") bytes)"
    else
        echo "FAIL $n: ref and cuda codestreams differ"; fail=1
    fi
}
run_pair dci2k -i $F/f2k.ppm --profile dci2k --fps 24
run_pair dci4k -i $F/f4k.ppm --profile dci4k --fps 24
run_pair lossless422 -i $F/imf.yuv --raw 1920x1080:yuv422p10le --lossless
run_pair bypass-layers -i $F/f2k.ppm --bytes 2000000 --layers 3 --bypass --order rpcl
run_pair quality -i $F/f2k.ppm --quality 48
# the HT block coder (ht=1): lossless 4:2:2, a 4K budget (the planes chosen on the device)
run_pair ht-lossless422 -i $F/imf.yuv --raw 1920x1080:yuv422p10le --lossless --ht
run_pair ht-4k-bytes -i $F/f4k.ppm --bytes 1300000 --ht
# a budget above the plane chooser's model (its slope 0, then a second measuring round): a
# decoded DCI frame of the shared corpus near its source rate (J2KC_CORPUS: the corpus folder)
CORPUS=${J2KC_CORPUS:-../shared/corpus}
if [ -f "$CORPUS/stem_wedding_2048x857_xyz12.ppm.xz" ] && xz -dc "$CORPUS/stem_wedding_2048x857_xyz12.ppm.xz" > $F/stem.ppm; then
    run_pair ht-2k-above-model -i $F/stem.ppm --bytes 2000000 --ht
else
    echo "skip ht-2k-above-model: no $CORPUS/stem_wedding_2048x857_xyz12.ppm.xz"
fi
for n in dci2k dci4k; do "$B/bin/j2kc-check" --fps 24 "$F/$n.cuda.j2c" || fail=1; done
"$B/bin/j2kc" -i $F/f4k.ppm --profile dci4k --fps 24 --backend cuda --bench 50 -o $F/b.j2c 2>&1 | tail -n 3

if [ "${SAN:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
    log "compute-sanitizer"
    CHECK_CUDA_SANITIZE=1 bash tests/check-cuda.sh "$B" --only odd-97-ict > "$OUT/san-check.log" 2>&1 ||
        { echo "FAIL sanitizer on check_cuda cases"; tail -n 20 "$OUT/san-check.log"; fail=1; }
    for tool in memcheck racecheck synccheck initcheck; do
        for n in f2k f4k f2k-bypass; do
            case $tool in synccheck|initcheck) [ $n = f2k ] || continue;; esac
            case $n in
            f2k) a="-i $F/f2k.ppm --profile dci2k --fps 24";;
            f4k) a="-i $F/f4k.ppm --profile dci4k --fps 24";;
            f2k-bypass) a="-i $F/f2k.ppm --bytes 1302083 --bypass";;   # the raw passes packed by warps
            esac
            timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 "$B/bin/j2kc" $a \
                --backend cuda -o $F/san.j2c -q > "$OUT/san-$tool-$n.log" 2>&1
            rc=$?
            case $rc in
            0) echo "ok $tool $n: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$tool-$n.log" | tail -n 1)";;
            124) echo "skip $tool $n: over 240 s";;
            *) echo "FAIL $tool $n (exit $rc)"; grep -m 5 -E "Invalid|Race|Error" "$OUT/san-$tool-$n.log"; fail=1;;
            esac
        done
    done
fi
[ $fail = 0 ] && echo "device-verify: all ok" || echo "device-verify: FAILURES"
exit $fail
