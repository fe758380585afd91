#!/bin/bash
# -gpu of -c:v jpeg2000_cuda: any, an index, a list (0,1), all, list (issue 30). Checked without
# GPUs: malformed values and the lists the library refuses fail with a message naming -gpu and
# the reason, with no output; -gpu all on a machine without a usable GPU falls back to the
# reference backend as -backend auto does (same bytes as no -gpu); -gpu 0,1 there fails as
# -gpu 0 does. With the library's stand-ins (J2KC_MULTI_STANDIN=N: reference backends in place
# of N devices, -backend ref) one encoder spreads the frames over the listed devices: the
# verbose log at the end gives each device's frames, which add up to the clip, every device
# coded some, and the file is byte-identical to one device's; a stand-in that fails
# (J2KC_MULTI_FAIL) ends the encode with an error naming it, no hang. Frame sizes and the clip
# are fixed; the source is testsrc2 (no seed).
#   tests/ffmpeg/gpu.sh [BUILD_DIR]
. "$(dirname "$0")/common.inc"
ff_require

W=64 H=48 N=12
"$FFMPEG" -nostdin -v error -f lavfi -i "testsrc2=s=${W}x$H:r=25" -frames:v $N -pix_fmt yuv444p \
    -f rawvideo "$WORK/src.raw" || { fail source "cannot make the test source"; finish; }
SRC=(-f rawvideo -pixel_format yuv444p -video_size ${W}x$H -framerate 25 -i "$WORK/src.raw")

# expect_error NAME 'MESSAGE REGEX' -gpu VALUE [ARGS...]: a non-zero exit that is not a signal,
# the message, no output file.
expect_error() {
    local t=$1 re=$2 rc
    shift 2
    rm -f "$WORK/e.j2k"
    timeout 60 "$FFMPEG" -nostdin -hide_banner -y "${SRC[@]}" -c:v jpeg2000_cuda "$@" \
        -f image2 -update 1 "$WORK/e.j2k" > /dev/null 2> "$WORK/err"
    rc=$?
    if [ $rc = 124 ]; then fail $t "hung (killed after 60 s)"; return; fi
    if signalled $rc; then fail $t "crashed (exit $rc)"; return; fi
    if [ $rc = 0 ]; then fail $t "ffmpeg succeeded"; return; fi
    if ! grep -Eq -e "$re" "$WORK/err"; then
        fail $t "no message matching /$re/: $(grep -m 2 -i 'error\|gpu\|jpeg2000' "$WORK/err" | tr '\n' ' ')"
        return
    fi
    if [ -s "$WORK/e.j2k" ]; then fail $t "wrote $WORK/e.j2k"; return; fi
    ok $t "$(grep -Em 1 -e "$re" "$WORK/err" | sed 's/^\[[^]]*\] //')"
}

# encode NAME OUT ARGS...: the clip to OUT (NUT, bit-exact), verbose log in $WORK/NAME.log.
encode() {
    local name=$1 out=$2
    shift 2
    timeout 120 "$FFMPEG" -nostdin -hide_banner -v verbose -y "${SRC[@]}" -c:v jpeg2000_cuda \
        -flags +bitexact -fflags +bitexact "$@" "$out" > /dev/null 2> "$WORK/$name.log"
}

# -- malformed values: the wrapper's message
i=0
for v in "" "," "0," ",1" "0,,1" "a" "-1" "0;1" "1 2" "all,0" "0x1" "any,1"; do
    i=$((i + 1))
    expect_error "syntax-$i" "Invalid -gpu '$v': expected any, all, list" -gpu "$v"
done
# -- well-formed lists the library refuses: its reason, then the wrapper's line naming -gpu
expect_error duplicate "listed twice" -gpu 0,1,0 -backend ref
grep -q 'listed twice' "$WORK/err" && grep -q 'Invalid -gpu 0,1,0: expected' "$WORK/err" ||
    fail duplicate-messages "want the library's 'listed twice' and 'Invalid -gpu 0,1,0': $(last_err)"
expect_error too-many "more than 16 devices" -gpu 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 -backend ref
expect_error index-1024 "device index 0..1023" -gpu 0,1024 -backend ref

# -- reference encode, then the values that must still work
if encode ref "$WORK/ref.nut" -backend ref; then ok ref-encode; else fail ref-encode "$(last_err)"; finish; fi
grep -q 'Frames coded per device: ref: '$N "$WORK/ref.log" && ok one-device-count "ref: $N" ||
    fail one-device-count "no 'Frames coded per device: ref: $N' in the verbose log: $(grep -i 'per device' "$WORK/ref.log")"
if encode any "$WORK/any.nut" -backend ref -gpu any && cmp -s "$WORK/ref.nut" "$WORK/any.nut"; then
    ok any "same bytes"
else
    fail any "-gpu any: failed or other bytes"
fi
t=list
timeout 60 "$FFMPEG" -nostdin -hide_banner -y "${SRC[@]}" -c:v jpeg2000_cuda -gpu list -f image2 \
    -update 1 "$WORK/l.j2k" > /dev/null 2> "$WORK/err"
rc=$?
if signalled $rc || [ $rc = 124 ]; then fail $t "exit $rc"
elif [ -s "$WORK/l.j2k" ]; then fail $t "wrote a file"
elif grep -Eq 'CUDA device\(s\)|Cannot list CUDA devices' "$WORK/err"; then ok $t "$(grep -Em 1 'CUDA device' "$WORK/err" | sed 's/^\[[^]]*\] //')"
else fail $t "no device list or reason: $(last_err)"; fi

if have_gpu; then
    skip no-gpu-all "a GPU is present (.dev/exp/multigpu.sh runs -gpu lists on GPUs)"
    skip no-gpu-list "a GPU is present"
else
    # -gpu all without a usable GPU: -backend auto's fallback, the reference backend's bytes
    if encode all "$WORK/all.nut" -gpu all && cmp -s "$WORK/ref.nut" "$WORK/all.nut" &&
       grep -q "reference (CPU) backend" "$WORK/all.log"; then
        ok no-gpu-all "fell back: $(grep -Em 1 'reference \(CPU\) backend' "$WORK/all.log" | sed 's/^\[[^]]*\] //')"
    else
        fail no-gpu-all "-gpu all did not fall back to the reference backend's bytes: $(grep -i 'error' "$WORK/all.log" | head -n 2)"
    fi
    # -gpu 0,1 names devices: the CUDA backend, which must say why it cannot run
    expect_error no-gpu-list 'built without CUDA|no usable GPU|no CUDA device|no NVIDIA driver' -gpu 0,1
fi

# -- stand-ins for devices: one encoder over several, the bytes of one
# standin NAME N GPU DEVICES...: J2KC_MULTI_STANDIN=N, -gpu GPU; wants each of DEVICES in the
# count line with at least one frame, N frames in all, and ref.nut's bytes.
standin() {
    local t=$1 n=$2 gpu=$3 line sum=0 d c
    shift 3
    if ! J2KC_MULTI_STANDIN=$n encode $t "$WORK/$t.nut" -backend ref -gpu "$gpu"; then
        fail $t "encode failed: $(grep -i error "$WORK/$t.log" | head -n 2 | tr '\n' ' ')"; return
    fi
    line=$(grep -m 1 'Frames coded per device:' "$WORK/$t.log" | sed 's/^.*per device://')
    for d in "$@"; do
        c=$(echo "$line" | grep -o "gpu $d: [0-9]*" | grep -o '[0-9]*$')
        if [ -z "$c" ] || [ "$c" = 0 ]; then fail $t "device $d coded no frame: '$line'"; return; fi
        sum=$((sum + c))
    done
    [ $sum = $N ] || { fail $t "devices coded $sum frames, the clip has $N: '$line'"; return; }
    cmp -s "$WORK/ref.nut" "$WORK/$t.nut" || { fail $t "bytes differ from one device's"; return; }
    ok $t "$line; same bytes as one device"
}
standin standin-0,1 2 0,1 0 1
standin standin-2,0 3 2,0 2 0
standin standin-all 3 all 0 1 2
J2KC_MULTI_STANDIN=2 expect_error standin-missing 'device 2 does not exist' -gpu 0,2 -backend ref
# a device failing mid-stream (J2KC_MULTI_FAIL=1: stand-in 1 fails every frame it is given): ffmpeg
# ends with an error naming it, not a hang or a crash (frames coded before it may be written)
t=standin-device-fails
J2KC_MULTI_STANDIN=2 J2KC_MULTI_FAIL=1 timeout 60 "$FFMPEG" -nostdin -hide_banner -y "${SRC[@]}" \
    -c:v jpeg2000_cuda -backend ref -gpu 0,1 -f nut "$WORK/f.nut" > /dev/null 2> "$WORK/err"
rc=$?
if [ $rc = 124 ]; then fail $t "hung (killed after 60 s)"
elif signalled $rc; then fail $t "crashed (exit $rc)"
elif [ $rc = 0 ]; then fail $t "ffmpeg succeeded"
elif ! grep -q 'gpu 1: device failed' "$WORK/err" || ! grep -q 'j2kcuda encoding failed' "$WORK/err"; then
    fail $t "no error naming gpu 1: $(last_err)"
else ok $t "exit $rc: $(grep -m 1 'gpu 1' "$WORK/err" | sed 's/^\[[^]]*\] //')"; fi

finish
