# bench/classes.sh: the content classes of the benchmark (sourced by bench/run.sh, which
# defines SCR, B, GPU, QUICK, say, kv, psnr_of). See bench/README.md, "Content classes".
#
# Each class is a sequence of distinct frames (bench/classes.py). Per class, code-block size
# and budget, j2kbench encodes the whole sequence (frame i % N at every step), so the frames
# coded twice (qstep_try, J2kcStats.nb_recoded) are a count over N frames, not one frame
# repeated. Rows go to $OUTD/classes.tsv:
#   class budget cblk backend fps latency_ms latency_max_ms psnr_mean psnr_min bytes_mean
#   recoded frames load_recoded load_frames psnr_full fps_try0 recoded_frames notes
# psnr_full: the same sequence with the full-rate steps and every pass coded (qstep_rate=0
# t1_stop=0), the reference of the issue's 0.02 dB; fps_try0: frames coded once (qstep_try=0),
# the throughput against which coding twice is costed.
#
# Budgets (2048x1080 12-bit 4:4:4, the 2K DCI container):
#   dci    250 Mb/s at 24 fps = 1,302,083 B a frame, DCI 2K's settings written out (5 levels,
#          precincts 128/256, CPRL: the dci2k profile itself allows 32x32 code-blocks only)
#   bcast  the broadcast single-tile profile (15444-1 Amd 3, profiles.md), 150 Mb/s at 25 fps
#          = 750,000 B a frame: the profile allows 32x32 and 64x64 code-blocks

CLASS_LIST=${BENCH_CLASSES:-}
[ "$CLASS_LIST" = all ] && CLASS_LIST="grain photo cg text noise dark flat hdrpq"
CLASS_FRAMES=${BENCH_CLASS_FRAMES:-12}
CLASS_CBLKS=${BENCH_CLASS_CBLK:-32 64}
CLASS_BUDGETS=${BENCH_CLASS_BUDGETS:-dci bcast}
CLASS_FULL=${BENCH_CLASS_FULL:-1}        # also the full-rate steps' PSNR (psnr_full)
CLASS_THREADS=${BENCH_CLASS_THREADS:-}   # reference backend threads (default: the library's)

class_params() { # BUDGET CBLK -> library parameters
    case $1 in
    dci)   echo "bytes=1302083 levels=5 cblk=${2}x$2 prec=128x128,256x256 order=cprl" ;;
    bcast) echo "profile=broadcast fps=25 bitrate=150 cblk=${2}x$2" ;;
    *)     return 1 ;;
    esac
}

# class_encode NAME BACKEND "params" OUTPATTERN j2kbench-args... -> RESULT line (or nothing)
class_encode() {
    local name=$1 be=$2 params=$3 outp=$4 args=() p
    shift 4
    for p in $params backend=$be; do args+=(-p "$p"); done
    [ "$be" = ref ] && [ -n "$CLASS_THREADS" ] && args+=(-p "threads=$CLASS_THREADS")
    timeout "${BENCH_CLASS_TIMEOUT:-900}" "$SCR/bin/j2kbench" "${CLASS_IN[@]}" "${args[@]}" -o "$outp" "$@" \
        2>> "$SCR/class.err"
}

# class_psnr FILES... (the sequence's codestreams in $1's pattern) -> "mean min"
class_psnr() {
    local pat=$1 k=0 f ps all=
    for f in "${CLASS_FILES[@]}"; do
        ps=$(psnr_of "$f" "" "${pat/\%d/$k}")
        all="$all $ps"
        k=$((k + 1))
    done
    echo "$all" | awk '{ n = 0; s = 0; m = "";
        for (i = 1; i <= NF; i++) { if ($i == "-") { print "- -"; exit }
            if ($i == "inf") continue; n++; s += $i; if (m == "" || $i < m) m = $i }
        if (n == 0) print "inf inf"; else printf "%.3f %.3f\n", s / n, m }'
}

run_classes() {
    [ -n "$CLASS_LIST" ] || return 0
    [ $HAVE_OURS = 1 ] || { say "classes: no j2kbench, skipped"; return 0; }
    local CT=$OUTD/classes.tsv be n t l w cls budget cb params l0 lf lt ps psf fpst note
    : > "$CT"
    be=ref; [ $GPU = 1 ] && be=cuda
    n=300 t=4 l=21 w=5; [ "$QUICK" = 1 ] && { n=30; t=2; l=5; }
    [ $be = ref ] && { n=0; t=600; l=1; w=0; }   # without a GPU: the sequence pass only
    mkdir -p "$SCR/classes"
    say "== content classes ($be backend): $CLASS_LIST; $CLASS_FRAMES frames each; code-blocks $CLASS_CBLKS; budgets $CLASS_BUDGETS"
    for cls in $CLASS_LIST; do
        rm -f "$SCR"/classes/*.ppm
        if ! PEERS=$PEERS sh bench/frames.sh --classes "$cls" "$CLASS_FRAMES" "$FRAMES_SRC" "$SCR/classes" > "$SCR/class.gen" 2>&1; then
            say "  $cls: frames not made ($(tail -n 1 "$SCR/class.gen"))"
            for budget in $CLASS_BUDGETS; do for cb in $CLASS_CBLKS; do
                printf '%s\t%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tmissed: no frames\n' "$cls" "$budget" "$cb" "$be" >> "$CT"
            done; done
            continue
        fi
        grep -q WARNING "$SCR/class.gen" && say "  $cls: $(grep -m1 WARNING "$SCR/class.gen")"
        CLASS_FILES=("$SCR"/classes/${cls}_*.ppm)
        CLASS_IN=()
        for f in "${CLASS_FILES[@]}"; do CLASS_IN+=(-i "$f"); done
        for budget in $CLASS_BUDGETS; do
            for cb in $CLASS_CBLKS; do
                params=$(class_params "$budget" "$cb")
                : > "$SCR/class.err"
                l0=$(class_encode "$cls" $be "$params" "$SCR/classes/cs_%d.j2k" -n $n -t $t -l $l -w $w)
                if [ -z "$l0" ]; then
                    note="missed: encode failed: $(grep -v '^j2kbench:' "$SCR/class.err" | head -n 2 | tr '\n' ' ' | cut -c1-160)"
                    say "  $cls $budget ${cb}x$cb: $note"
                    printf '%s\t%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$cls" "$budget" "$cb" "$be" "$note" >> "$CT"
                    continue
                fi
                ps=$(class_psnr "$SCR/classes/cs_%d.j2k")
                psf=-
                if [ "$CLASS_FULL" = 1 ]; then
                    lf=$(class_encode "$cls" $be "$params qstep_rate=0 t1_stop=0" "$SCR/classes/full_%d.j2k" -n 0 -t 600 -l 1 -w 0)
                    [ -n "$lf" ] && psf=$(class_psnr "$SCR/classes/full_%d.j2k" | cut -d' ' -f1)
                fi
                fpst=-
                if [ $be = cuda ]; then
                    lt=$(class_encode "$cls" $be "$params qstep_try=0" "$SCR/classes/try0_%d.j2k" -n $n -t $t -l 1 -w $w)
                    [ -n "$lt" ] && fpst=$(kv "$lt" fps)
                fi
                note="identical=$(kv "$l0" identical); params: $params"
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
                    "$cls" "$budget" "$cb" "$be" "$([ $be = cuda ] && kv "$l0" fps || echo -)" \
                    "$(printf %.2f "$(kv "$l0" latency_ms)")" "$(printf %.2f "$(kv "$l0" latency_max_ms)")" \
                    ${ps% *} ${ps#* } "$(kv "$l0" seq_bytes_mean)" "$(kv "$l0" recoded)" "$(kv "$l0" seq_frames)" \
                    "$(kv "$l0" load_recoded)" "$(kv "$l0" frames)" "$psf" "$fpst" "$(kv "$l0" recoded_frames)" "$note" >> "$CT"
                say "  $cls $budget ${cb}x$cb: coded twice $(kv "$l0" recoded)/$(kv "$l0" seq_frames) ($(kv "$l0" recoded_frames)); PSNR ${ps% *} (min ${ps#* }; full-rate steps $psf); $([ $be = cuda ] && echo "$(kv "$l0" fps) fps (qstep_try=0: $fpst), ")latency $(kv "$l0" latency_ms) ms (max $(kv "$l0" latency_max_ms))"
            done
        done
        rm -f "$SCR"/classes/*
    done
}
