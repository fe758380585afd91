#!/bin/bash
# Runs every `ffmpeg` example of README.md as a user would paste it: each command line of a
# code block (also after `mkdir ... &&`) and each inline `ffmpeg ...` span, found automatically,
# so a new example is tested without editing this script. Input files the README names (in.mov,
# film.mov, frame.ppm, ...) are generated first, by extension, in a fresh directory the command
# runs in; then the command must exit 0 and every output it names must decode with our ffmpeg.
# Examples that need CUDA (-hwaccel cuda, hwupload_cuda, cuda devices, -gpu) are skipped without a
# GPU.
#   tests/ffmpeg/readme-examples.sh [BUILD_DIR]
. "$(dirname "$0")/common.inc"
ff_require

README=$REPO/README.md
# Small but realistic inputs: 2 frames with a stereo PCM track.
SMALL="-f lavfi -i testsrc2=s=256x144:r=24 -f lavfi -i sine=frequency=1000:sample_rate=48000 -frames:v 2 -shortest"

# make_input NAME DIR [gpu]: writes DIR/NAME, chosen by its extension. For CUDA examples a .mov
# holds MPEG-2 video, which NVDEC decodes (ProRes it does not) and our build can write.
make_input() {
    local f=$2/$1
    mkdir -p "$(dirname "$f")"
    if [ "${3:-}" = gpu ] && [ "${1##*.}" = mov ]; then
        ff $SMALL -c:v mpeg2video -q:v 2 -pix_fmt yuv420p -c:a pcm_s24le "$f"; return
    fi
    case $1 in
    *%*)       ff -f lavfi -i testsrc2=s=256x144 -frames:v 2 "$f" ;;     # an image sequence
    *.mov)     ff $SMALL -c:v prores_ks -profile:v 3 -pix_fmt yuv422p10le -c:a pcm_s24le "$f" ;;
    *.mp4)     ff $SMALL -c:v mpeg4 -q:v 2 -c:a aac "$f" ;;
    *.mkv)     ff $SMALL -c:v ffv1 -pix_fmt yuv422p10le -c:a flac "$f" ;;
    *.mxf)     ff $SMALL -c:v mpeg2video -q:v 2 -pix_fmt yuv422p -c:a pcm_s16le "$f" ;;
    *.y4m)     ff $SMALL -an -pix_fmt yuv420p "$f" ;;
    *.ppm|*.png|*.tif|*.tiff|*.dpx|*.exr|*.bmp|*.tga|*.jpg)
               ff -f lavfi -i testsrc2=s=256x144 -frames:v 1 -update 1 "$f" ;;
    *)         echo "no generator for $1" > "$WORK/err"; return 1 ;;
    esac
}

# The example command lines, one per line: code-block lines whose command (or a command after
# `&&`) is ffmpeg, joined with their continuation lines (a trailing backslash), and inline code
# spans starting with "ffmpeg ". Trailing "# ..." comments go.
examples() {
    awk '/^```/ { block = !block; next }
         block && cont != "" { cont = cont " " $0
                               if (sub(/[ \t]*\\[ \t]*$/, "", cont)) next
                               print cont; cont = ""; next }
         block && ($1 == "ffmpeg" || $0 ~ /&& *ffmpeg /) {
             line = $0
             if (sub(/[ \t]*\\[ \t]*$/, "", line)) { cont = line; next }
             print; next }
         !block { line = $0
                  while (match(line, /`ffmpeg [^`]*`/)) {
                      print substr(line, RSTART + 1, RLENGTH - 2); line = substr(line, RSTART + RLENGTH) } }' "$README" |
        sed -e 's/[[:space:]]\{1,\}#.*$//' -e 's/[[:space:]]*$//'
}

needs_gpu() { case " $1 " in *" -hwaccel cuda "*|*hwupload_cuda*|*"-init_hw_device cuda"*|*" -gpu "*) return 0 ;; esac; return 1; }

# output_of CMD: the output file of an example: its last argument (README examples have one).
output_of() { echo "$1" | awk '{ print $NF }'; }

i=0
[ -f "$README" ] || { fail readme "no README.md"; finish; }
examples > "$WORK/examples"
[ -s "$WORK/examples" ] || { fail readme "no ffmpeg example found in README.md"; finish; }
while IFS= read -r cmd; do
    i=$((i + 1))
    t=example-$i
    short=$(echo "$cmd" | cut -c1-90)
    if needs_gpu "$cmd" && ! have_gpu; then
        skip $t "needs a GPU (CUDA frames or devices): $short"; continue
    fi
    d=$WORK/ex$i
    mkdir -p "$d"
    # inputs: every argument after -i that does not exist yet is generated
    bad=
    set -f
    prev=
    for a in $cmd; do
        if [ "$prev" = -i ] && [ ! -e "$d/$a" ]; then
            make_input "$a" "$d" $(needs_gpu "$cmd" && echo gpu) || bad="$a: $(last_err)"
        fi
        prev=$a
    done
    set +f
    if [ -n "$bad" ]; then fail $t "could not make the input $bad"; continue; fi
    # our ffmpeg for the word "ffmpeg", never reading the terminal
    run=$(echo "$cmd" | sed "s#\(^\|&& *\)ffmpeg #\1\"$FFMPEG\" -nostdin #g")
    (cd "$d" && timeout 600 bash -c "$run") > "$WORK/out" 2> "$WORK/err"
    rc=$?
    if [ $rc != 0 ]; then
        fail $t "exit status $rc: $short: $(tail -n 3 "$WORK/err" | tr '\n' ' ')"; continue
    fi
    case " $cmd " in
    *" -h "*|*" -version "*|*" -encoders "*|*" -filters "*)
        [ -s "$WORK/out" ] && ok $t "$short" || fail $t "no output: $short"; continue ;;
    esac
    out=$(output_of "$cmd")
    case $out in *%*) f=$(printf "$out" 1) ;; *) f=$out ;; esac
    if [ ! -s "$d/$f" ]; then fail $t "no output file $f: $short"; continue; fi
    frames=$(cd "$d" && "$FFPROBE" -v error -count_frames -select_streams v:0 \
             -show_entries stream=nb_read_frames,codec_name -of csv=p=0 "$out" 2> "$WORK/err")
    if [ -s "$WORK/err" ] || [ -z "$frames" ]; then fail $t "$out does not decode: $(last_err)"
    else ok $t "$short -> $out ($frames)"; fi
done < "$WORK/examples"
finish
