#!/bin/bash
# The multi-host workflow of doc/scaling.md on one machine, processes standing in for hosts:
# a raw clip is cut into segments by frame range, each segment coded by its own process
# (tools/j2kc-segment.sh: GNU parallel's jobs when parallel is installed, Slurm array tasks
# imitated by setting SLURM_ARRAY_TASK_ID), the codestreams compared byte for byte with a
# single-process encode, then joined into an MXF track file (tools/j2kc-assemble.sh, when
# FFmpeg is built in BUILD_DIR/ffmpeg) whose frame count and frame order are checked, and by
# mediainfo when installed. The faults the workflow must catch are injected: a segment that
# never ran, two frames swapped, a track file whose packets are out of order, a clip that is
# not whole frames. Reference backend, small frames: a few seconds.
#   tests/scaling.sh [BUILD_DIR]     (J2KC_TEST_SEED=N repeats a run)
. "$(dirname "$0")/gen/common.sh"
BUILD=$(t_build_dir "$1")
J2KC=$BUILD/bin/j2kc
[ -x "$J2KC" ] || { t_fail scaling "no $J2KC (make B=$BUILD)"; exit 1; }
export J2KC
if [ -x "$BUILD/ffmpeg/ffmpeg" ] && [ -x "$BUILD/ffmpeg/ffprobe" ]; then
    export FFMPEG=$BUILD/ffmpeg/ffmpeg FFPROBE=$BUILD/ffmpeg/ffprobe
else
    FFMPEG=
fi
t_build_helpers "$BUILD" || { t_fail scaling "test helpers do not build"; exit 1; }
GEN=$BUILD/testtools/gen
W=$(mktemp -d "${TMPDIR:-/tmp}/j2kc-scaling.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
SEG_TOOL=$REPO_DIR/tools/j2kc-segment.sh
ASM_TOOL=$REPO_DIR/tools/j2kc-assemble.sh
SEED=${J2KC_TEST_SEED:-$(( (RANDOM << 15) | RANDOM ))}
echo "# scaling.sh: seed $SEED"

# The clip: TOTAL frames of 10-bit 4:2:2, each its own seeded image, back to back.
TOTAL=14 SEG=4 FPS=24
FMT=64x48:yuv422p10le
CLIP=$W/clip.yuv
OPTS="--backend ref --lossless"
for ((f = 0; f < TOTAL; f++)); do
    "$GEN" -o "$W/f.yuv" --size 64x48 --depth 10 --comps 3 --sub 422 --raw yuv422p10le \
        --seed $((SEED + f)) || { t_fail scaling/clip "gen failed at frame $f"; exit 1; }
    cat "$W/f.yuv" >> "$CLIP"
done

# Single process: the whole clip as one segment, the reference.
if "$SEG_TOOL" "$CLIP" "$FMT" "$TOTAL" 0 "$TOTAL" "$W/ref" $OPTS 2>"$W/err"; then
    t_ok scaling/single "$TOTAL frames, $(cat "$W"/ref/*.j2c | wc -c) bytes"
else
    t_fail scaling/single "$(head -n 2 "$W/err" | tr '\n' ' ')"; exit 1
fi

# same DIR: one check line, whether DIR holds the reference's files, byte for byte
same() {
    local name=$1 dir=$2 f bad=() n
    n=$(ls "$dir" 2>/dev/null | grep -c '\.j2c$')
    for ((f = 0; f < TOTAL; f++)); do
        cmp -s "$(printf '%s/%06d.j2c' "$W/ref" $f)" "$(printf '%s/%06d.j2c' "$dir" $f)" || bad+=($f)
    done
    if [ ${#bad[@]} = 0 ] && [ "$n" = "$TOTAL" ]; then
        t_ok "$name" "$TOTAL codestreams byte-identical to the single-process encode"
    else
        t_fail "$name" "$n codestreams; frames differing or missing: ${bad[*]:-none}"
    fi
}

# GNU parallel, local job slots standing in for the -S host list of doc/scaling.md.
OUT=$W/par
cd "$REPO_DIR" || exit 1
if t_have parallel; then
    parallel --will-cite --jobs 4 tools/j2kc-segment.sh "$CLIP" "$FMT" "$TOTAL" {} "$SEG" "$OUT" $OPTS \
        ::: $(seq 0 "$SEG" $((TOTAL - 1))) 2>"$W/err" || t_fail scaling/parallel-run "$(head -n 2 "$W/err")"
    same scaling/parallel "$OUT"
else
    t_skip scaling/parallel "GNU parallel not installed (Debian: parallel): its run is not checked"
fi

# Slurm array tasks: the job script's line in doc/scaling.md, as it stands, run from the
# repository root by one background process per task.
OUT=$W/slurm
SLURM_LINE=$(grep '^tools/j2kc-segment\.sh .*SLURM_ARRAY_TASK_ID' "$REPO_DIR/doc/scaling.md")
[ "$(echo "$SLURM_LINE" | grep -c .)" = 1 ] ||
    { t_fail scaling/slurm-doc "doc/scaling.md: no single Slurm job line found"; SLURM_LINE=false; }
cd "$REPO_DIR" || exit 1
pids=()
for ((t = 0; t * SEG < TOTAL; t++)); do
    ( SLURM_ARRAY_TASK_ID=$t; eval "$SLURM_LINE" ) 2>"$W/err.$t" &
    pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ $rc = 0 ] || t_fail scaling/slurm-run "a task failed: $(cat "$W"/err.* | head -n 2 | tr '\n' ' ')"
same scaling/slurm "$OUT"

# Faults the comparison must see: two frames swapped, a segment that never ran.
cp -r "$OUT" "$W/swap"
A=$(printf '%06d' $((SEED % TOTAL))) B=$(printf '%06d' $(((SEED + 1) % TOTAL)))
mv "$W/swap/$A.j2c" "$W/swap/x" && mv "$W/swap/$B.j2c" "$W/swap/$A.j2c" && mv "$W/swap/x" "$W/swap/$B.j2c"
if same scaling/x "$W/swap" | grep -q "^FAIL .*$((10#$A)) $((10#$B))\|^FAIL .*$((10#$B)) $((10#$A))"; then
    t_ok scaling/order-caught "frames $A and $B swapped: reported"
else
    t_fail scaling/order-caught "swapping frames $A and $B went unnoticed"
fi
cp -r "$OUT" "$W/gap"
K=$(( (SEED % ((TOTAL + SEG - 1) / SEG)) * SEG ))
for ((f = K; f < K + SEG && f < TOTAL; f++)); do rm -f "$(printf '%s/%06d.j2c' "$W/gap" $f)"; done
if FFMPEG=/nonexistent "$ASM_TOOL" "$W/gap" "$TOTAL" "$FPS" "$W/gap.mxf" 2>"$W/err"; then
    t_fail scaling/gap-caught "assembled without the segment from frame $K"
elif grep -q "missing.*first: frame $K," "$W/err" && [ ! -e "$W/gap.mxf" ]; then
    t_ok scaling/gap-caught "$(cat "$W/err")"
else
    t_fail scaling/gap-caught "refused, but not for the missing frames: $(cat "$W/err")"
fi
# A clip that is not whole frames, a first frame past the end: refused, nothing written.
head -c $(( $(stat -c %s "$CLIP") - 1 )) "$CLIP" > "$W/short.yuv"
if "$SEG_TOOL" "$W/short.yuv" "$FMT" "$TOTAL" 0 1 "$W/bad" $OPTS 2>"$W/err"; then
    t_fail scaling/short-clip "a clip one byte short was accepted"
elif grep -q 'not .* frames of equal size' "$W/err" && [ -z "$(ls "$W/bad" 2>/dev/null)" ]; then
    t_ok scaling/short-clip "$(cat "$W/err")"
else
    t_fail scaling/short-clip "unclear refusal: $(cat "$W/err")"
fi
if "$SEG_TOOL" "$CLIP" "$FMT" "$TOTAL" "$TOTAL" "$SEG" "$W/bad" $OPTS 2>"$W/err"; then
    t_fail scaling/past-end "FIRST = TOTAL was accepted"
else
    t_ok scaling/past-end "$(cat "$W/err")"
fi

# Frame numbers with leading zeros (as `seq -w` writes them) are decimal: 010 is frame 10.
if "$SEG_TOOL" "$CLIP" "$FMT" "0$TOTAL" 010 02 "$W/padded" $OPTS 2>"$W/err" &&
        [ "$(ls "$W/padded" | tr '\n' ' ')" = "000010.j2c 000011.j2c " ] &&
        cmp -s "$W/ref/000010.j2c" "$W/padded/000010.j2c" && cmp -s "$W/ref/000011.j2c" "$W/padded/000011.j2c"; then
    t_ok scaling/leading-zeros "FIRST 010 COUNT 02: frames 10 and 11, the reference's bytes"
else
    t_fail scaling/leading-zeros "FIRST 010 COUNT 02 wrote: $(ls "$W/padded" 2>/dev/null | tr '\n' ' ')$(head -c 200 "$W/err")"
fi

# The track file.
if [ -z "$FFMPEG" ]; then
    t_skip scaling/mxf "ffmpeg not built in $BUILD/ffmpeg (make ffmpeg B=$BUILD): assembly not checked"
    exit $(( ${T_FAILED:-0} > 0 ))
fi
if "$ASM_TOOL" "$OUT" "$TOTAL" "$FPS" "$W/track.mxf" >"$W/asm.out" 2>"$W/err"; then
    t_ok scaling/mxf "$(cat "$W/asm.out")"
else
    t_fail scaling/mxf "$(head -n 3 "$W/err" | tr '\n' ' ')"
fi
if t_have mediainfo && [ -f "$W/track.mxf" ]; then
    n=$(mediainfo --Inform='Video;%FrameCount%' "$W/track.mxf")
    fmt=$(mediainfo --Inform='Video;%Format%' "$W/track.mxf")
    if [ "$n" = "$TOTAL" ] && [ "$fmt" = "JPEG 2000" ]; then
        t_ok scaling/mediainfo "$fmt, $n frames"
    else
        t_fail scaling/mediainfo "format '$fmt', $n frames (expected JPEG 2000, $TOTAL)"
    fi
else
    t_skip scaling/mediainfo "mediainfo not installed (Debian: mediainfo) or no track file"
fi
# The order check of the assembly must fail when the muxed packets are not the files' order:
# an ffmpeg that muxes a copy of DIR with two frames swapped.
cat > "$W/ff-swap" <<EOS
#!/bin/bash
a=()
for x in "\$@"; do case \$x in *%06d.j2c) a+=("$W/swap/%06d.j2c") ;; *) a+=("\$x") ;; esac; done
exec "$FFMPEG" "\${a[@]}"
EOS
chmod +x "$W/ff-swap"
if FFMPEG=$W/ff-swap "$ASM_TOOL" "$OUT" "$TOTAL" "$FPS" "$W/bad.mxf" 2>"$W/err"; then
    t_fail scaling/mxf-order-caught "a track file with frames $A and $B swapped passed"
elif grep -q "differ from the codestreams" "$W/err" && [ ! -e "$W/bad.mxf" ] &&
     [ ! -e "$W/bad.mxf.partial.mxf" ]; then
    t_ok scaling/mxf-order-caught "$(cat "$W/err")"
else
    t_fail scaling/mxf-order-caught "unclear refusal: $(cat "$W/err")"
fi
exit $(( ${T_FAILED:-0} > 0 ))
