#!/bin/bash
# j2kc-segment.sh: encodes one segment of a raw clip, frames FIRST..FIRST+COUNT-1, to
# OUTDIR/NNNNNN.j2c, one JPEG 2000 codestream per frame named by its index in the whole clip.
# One segment is one job of a scheduler (a Slurm array task, a GNU parallel job on another
# host); doc/scaling.md shows the commands and tools/j2kc-assemble.sh joins the segments.
#
#   tools/j2kc-segment.sh CLIP WxH:FMT TOTAL FIRST COUNT OUTDIR [j2kc options...]
#
# CLIP is the raw clip (frames of WxH:FMT, the layout j2kc --raw reads, back to back); TOTAL
# its frame count: the frame size is the clip's size divided by TOTAL, which must be exact.
# COUNT is cut at the end of the clip, so every segment can be given the same COUNT. A frame is
# read with dd at its byte offset (no decoder, no seeking by time) and coded by its own j2kc
# run, so each codestream depends only on the frame and the options: byte-identical to the one
# a single process writes. Each file appears complete or not at all (j2kc writes through a
# temporary file and a rename). J2KC: the j2kc to run (default: j2kc on PATH).
set -u
J2KC=${J2KC:-j2kc}
die() { echo "j2kc-segment: $*" >&2; exit 1; }
[ $# -ge 6 ] || die "usage: j2kc-segment.sh CLIP WxH:FMT TOTAL FIRST COUNT OUTDIR [j2kc options...]"
clip=$1 raw=$2 total=$3 first=$4 count=$5 outdir=$6
shift 6
for v in "$total" "$first" "$count"; do
    case $v in ''|*[!0-9]*|??????????*) die "TOTAL, FIRST and COUNT must be whole numbers below 10^9 (got '$v')" ;; esac
done
# decimal whatever the leading zeros (seq -w writes 0240; bash arithmetic would read it as octal)
total=$((10#$total)) first=$((10#$first)) count=$((10#$count))
[ "$total" -gt 0 ] || die "TOTAL must be at least 1"
[ -f "$clip" ] || die "$clip: no such file"
size=$(stat -c %s "$clip") || die "$clip: cannot stat"
[ $((size % total)) = 0 ] || die "$clip: $size bytes is not $total frames of equal size"
fbytes=$((size / total))
[ "$first" -lt "$total" ] || die "FIRST $first is past the last frame ($((total - 1)))"
last=$((first + count))
[ "$last" -le "$total" ] || last=$total
mkdir -p "$outdir" || die "$outdir: cannot create"
tmp=$(mktemp "$outdir/.frame.XXXXXX") || die "$outdir: cannot write"
trap 'rm -f "$tmp"' EXIT
for ((f = first; f < last; f++)); do
    dd if="$clip" of="$tmp" bs="$fbytes" skip="$f" count=1 status=none ||
        die "frame $f: cannot read from $clip"
    out=$(printf '%s/%06d.j2c' "$outdir" "$f")
    "$J2KC" -q -i "$tmp" --raw "$raw" -o "$out" "$@" || die "frame $f: j2kc failed"
done
