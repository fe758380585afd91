#!/bin/bash
# Frames whose size or pixel format changes mid-stream (issue 28 point 3): ffmpeg either
# converts them to what the encoder was opened for (system-memory frames: its auto-inserted
# scaler) or stops with a clear error (CUDA frames cannot be converted behind the encoder's
# back; the encoder refuses a frame whose size or frames context's sw_format changed). Never
# a wrong picture: every codestream written decodes to the opened geometry, and those made
# before the change are the bytes the unchanged clip alone gives.
#   tests/ffmpeg/midstream.sh [BUILD_DIR]
. "$(dirname "$0")/common.inc"
ff_require

N=4
cd "$WORK" || exit 1
# clip A: the opened format; B: a pixel-format change; C: a size change; all as rawvideo in NUT
ff -f lavfi -i testsrc2=s=320x240:r=25 -frames:v $N -pix_fmt yuv420p -c:v rawvideo a.nut &&
ff -f lavfi -i testsrc2=s=320x240:r=25 -frames:v $N -pix_fmt yuv444p -c:v rawvideo b.nut &&
ff -f lavfi -i testsrc2=s=640x480:r=25 -frames:v $N -pix_fmt yuv420p -c:v rawvideo c.nut ||
    { fail inputs "$(last_err)"; finish; }
printf "file a.nut\nfile b.nut\n" > ab.txt
printf "file a.nut\nfile c.nut\n" > ac.txt

# run NAME PATH-ARGS...: encodes a.nut alone and both concatenations through one path (the
# arguments before the input and the filter chain) and judges what was written.
run() {
    local name=$1 pre=$2 vf=$3 l rc n i ref
    "$FFMPEG" -nostdin -hide_banner -v error -y $pre -i a.nut ${vf:+-vf $vf} -c:v jpeg2000_cuda \
        -b:v 20M -f image2 "ref_${name}_%03d.j2c" 2> err || { fail $name/alone "$(head -n 2 err)"; return; }
    for l in ab ac; do
        "$FFMPEG" -nostdin -hide_banner -v error -y $pre -f concat -i $l.txt ${vf:+-vf $vf} \
            -c:v jpeg2000_cuda -b:v 20M -f image2 "${name}_${l}_%03d.j2c" 2> "err_$l"
        rc=$?
        n=$(ls ${name}_${l}_*.j2c 2>/dev/null | wc -l)
        if signalled $rc; then fail $name/$l "killed by signal $((rc - 128))"; continue; fi
        if [ $rc != 0 ] && ! grep -q . "err_$l"; then fail $name/$l "exit $rc without a message"; continue; fi
        # the frames before the change: the bytes of clip A alone
        for i in $(seq 1 $N); do
            ref=$(printf "ref_${name}_%03d.j2c" $i)
            [ -f "$(printf "${name}_${l}_%03d.j2c" $i)" ] || break
            cmp -s "$ref" "$(printf "${name}_${l}_%03d.j2c" $i)" ||
                { fail $name/$l "frame $i differs from clip A alone"; continue 2; }
        done
        # every codestream written: a valid one of the opened geometry
        for f in ${name}_${l}_*.j2c; do
            [ -f "$f" ] || continue
            g=$("$FFPROBE" -v error -show_entries stream=width,height -of csv=p=0 "$f" 2>&1)
            [ "$g" = "320,240" ] || { fail $name/$l "$f decodes as '$g', not 320,240"; continue 2; }
        done
        if [ $rc = 0 ]; then
            [ "$n" = $((2 * N)) ] && ok $name/$l "converted by ffmpeg: $n codestreams of 320x240" ||
                fail $name/$l "exit 0 with $n codestreams, $((2 * N)) expected"
        else
            ok $name/$l "refused after $n of $((2 * N)) frames: $(grep -m1 -iE 'changed|error|impossible' "err_$l" | cut -c1-120)"
        fi
    done
}

run sysmem "" ""
if have_gpu; then
    # CUDA frames: uploaded by the filter graph (a new frames context when the input changes)
    run cudaframes "-init_hw_device cuda=gpu:0 -filter_hw_device gpu" "hwupload"
    # CUDA frames from NVDEC: MPEG-2 clips of two sizes decoded with -hwaccel_output_format cuda
    ff -i a.nut -c:v mpeg2video -q:v 2 -f mpegts a.ts && ff -i c.nut -c:v mpeg2video -q:v 2 -f mpegts c.ts ||
        { fail nvdec/inputs "$(last_err)"; finish; }
    printf "file a.ts\nfile c.ts\n" > nv.txt
    "$FFMPEG" -nostdin -hide_banner -v error -y -hwaccel cuda -hwaccel_output_format cuda -f concat -i nv.txt \
        -c:v jpeg2000_cuda -b:v 20M -f image2 nv_%03d.j2c 2> err_nv
    rc=$?
    n=$(ls nv_*.j2c 2>/dev/null | wc -l)
    bad=
    for f in nv_*.j2c; do
        [ -f "$f" ] || continue
        g=$("$FFPROBE" -v error -show_entries stream=width,height -of csv=p=0 "$f" 2>&1)
        [ "$g" = "320,240" ] || bad="$f decodes as '$g'"
    done
    if signalled $rc; then fail nvdec "killed by signal $((rc - 128))"
    elif [ -n "$bad" ]; then fail nvdec "$bad"
    elif [ $rc = 0 ] && [ "$n" != $((2 * N)) ]; then fail nvdec "exit 0 with $n codestreams"
    elif [ $rc != 0 ] && ! grep -q . err_nv; then fail nvdec "exit $rc without a message"
    else ok nvdec "exit $rc, $n codestreams of 320x240${rc:+: $(grep -m1 -iE 'changed|error|impossible' err_nv | cut -c1-120)}"
    fi
else
    skip cudaframes "needs a GPU (CUDA frames)"
    skip nvdec "needs a GPU (NVDEC)"
fi
finish
