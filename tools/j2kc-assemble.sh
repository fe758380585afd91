#!/bin/bash
# j2kc-assemble.sh: joins the per-frame codestreams of tools/j2kc-segment.sh into one MXF
# track file, after checking that every frame is there, and checks the result.
#
#   tools/j2kc-assemble.sh DIR TOTAL FPS OUT.mxf [ffmpeg output options...]
#
# Before muxing: DIR must hold exactly 000000.j2c .. (TOTAL-1).j2c, each non-empty, and no
# other frame: a missing or failed segment is named, nothing is written. Muxing: FFmpeg's image2
# demuxer reads the codestreams in index order and its mxf muxer wraps them unchanged
# (-c copy; the options, e.g. -f mxf_opatom or the profile's, follow the ones shown in
# doc/ffmpeg.md). After muxing: the file must hold TOTAL frames, and the MD5 of each packet in
# the file, in order, must equal the MD5 of 000000.j2c, 000001.j2c, ...: the track file carries
# every codestream unchanged and in frame order. The output appears only when all checks pass.
# FFMPEG, FFPROBE: the programs to run (default: on PATH).
set -u
FFMPEG=${FFMPEG:-ffmpeg}
FFPROBE=${FFPROBE:-ffprobe}
die() { echo "j2kc-assemble: $*" >&2; exit 1; }
[ $# -ge 4 ] || die "usage: j2kc-assemble.sh DIR TOTAL FPS OUT.mxf [ffmpeg output options...]"
dir=$1 total=$2 fps=$3 out=$4
shift 4
case $total in ''|*[!0-9]*|??????????*) die "TOTAL must be a whole number >= 1 below 10^9 (got '$total')" ;; esac
total=$((10#$total))    # decimal whatever the leading zeros
[ "$total" -ge 1 ] || die "TOTAL must be a whole number >= 1 (got '$2')"
missing=() empty=()
for ((f = 0; f < total; f++)); do
    p=$(printf '%s/%06d.j2c' "$dir" "$f")
    if [ ! -e "$p" ]; then missing+=("$f"); elif [ ! -s "$p" ]; then empty+=("$f"); fi
done
[ ${#missing[@]} = 0 ] || die "${#missing[@]} of $total frames missing in $dir (first: frame ${missing[0]}, last: frame ${missing[-1]})"
[ ${#empty[@]} = 0 ] || die "${#empty[@]} empty codestreams in $dir (first: frame ${empty[0]})"
extra=$(find "$dir" -maxdepth 1 -name '*.j2c' | wc -l)
[ "$extra" = "$total" ] || die "$dir holds $extra codestreams, expected $total (frames past the end?)"
tmp="$out.partial.mxf"
trap 'rm -f "$tmp"' EXIT
"$FFMPEG" -nostdin -hide_banner -loglevel error -y -f image2 -framerate "$fps" \
    -i "$dir/%06d.j2c" -c copy -f mxf "$@" "$tmp" || die "ffmpeg could not mux $dir"
n=$("$FFPROBE" -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets \
    -of csv=p=0 "$tmp") || die "ffprobe cannot read $tmp"
[ "$n" = "$total" ] || die "the track file holds $n frames, expected $total"
want=$(for ((f = 0; f < total; f++)); do md5sum < "$(printf '%s/%06d.j2c' "$dir" "$f")"; done | cut -c1-32)
got=$("$FFMPEG" -nostdin -v error -i "$tmp" -map 0:v:0 -c copy -f framemd5 -hash md5 - |
      grep -v '^#' | awk -F', *' '{ print $6 }')
if [ "$got" != "$want" ]; then
    bad=$(diff <(echo "$want") <(echo "$got") | grep -m 1 -o '^[0-9]*')
    die "the track file's packets differ from the codestreams (first at frame $((${bad:-1} - 1)))"
fi
mv -f "$tmp" "$out" || die "$out: cannot write"
trap - EXIT
echo "$out: $total frames, every codestream unchanged and in order"
