#!/usr/bin/env bash
# tests/bench-classes.sh BUILD_DIR: smoke test of the benchmark's content-class generator
# (bench/classes.py; the benchmark itself is not part of make check). A few seconds:
#  - the generated classes (noise, flat; text with the console font of .dev/frames when there)
#    are deterministic: two runs, the same SHA-256;
#  - every frame is a 2048x1080 P6 PPM of maxval 4095 of the right size, and the frames of a
#    sequence differ (distinct content, not one frame repeated);
#  - the SMPTE ST 2084 curve of the hdrpq class meets its reference points (0 and 10,000 cd/m2
#    at the ends, 100 cd/m2 at 0.5081).
. "$(dirname "$0")/gen/common.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=
for p in python3 /usr/bin/python3; do
    "$p" -c 'import numpy' >/dev/null 2>&1 && { PY=$p; break; }
done
if [ -z "$PY" ]; then
    t_skip bench-classes "no python3 with numpy (tests/install-deps.sh installs python3-numpy)"
    exit 0
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
FONT=$ROOT/.dev/frames/Uni2-Terminus32x16.psf.gz
ONLY=noise,flat
[ -f "$FONT" ] && ONLY=$ONLY,text || t_skip bench-classes/text "$FONT absent (tools/fetch-peers.sh)"
mkdir -p "$W/a" "$W/b"
for d in a b; do
    if ! "$PY" "$ROOT/bench/classes.py" --frames 2 --only "$ONLY" "$W" "$FONT" "$W/$d" > "$W/$d.log" 2>&1; then
        t_fail bench-classes/run "classes.py failed: $(tail -n 1 "$W/$d.log")"
        exit 1
    fi
done
(cd "$W/a" && sha256sum *.ppm) > "$W/sums"
if (cd "$W/b" && sha256sum --quiet -c "$W/sums" > /dev/null 2>&1); then
    t_ok bench-classes/deterministic "$(wc -l < "$W/sums") frames ($ONLY), two runs, same SHA-256"
else
    t_fail bench-classes/deterministic "two runs of classes.py made different frames"
fi
bad=
hdr='P6\n2048 1080\n4095\n'
hl=$(printf "$hdr" | wc -c)
for f in "$W"/a/*.ppm; do
    head -c "$hl" "$f" | cmp -s - <(printf "$hdr") || bad="$bad $(basename "$f"):header"
    [ "$(stat -c %s "$f")" = $((hl + 2048 * 1080 * 6)) ] || bad="$bad $(basename "$f"):size"
done
for c in ${ONLY//,/ }; do
    cmp -s "$W"/a/${c}_00_*.ppm "$W"/a/${c}_01_*.ppm && bad="$bad $c:frames-equal"
done
if [ -z "$bad" ]; then
    t_ok bench-classes/frames "2048x1080 12-bit PPMs, the frames of each sequence distinct"
else
    t_fail bench-classes/frames "$bad"
fi
# ST 2084 at its reference points: linear light 0, 100/203 (100 cd/m2 of the scene's diffuse
# white at 203) and the clip at 10,000 cd/m2
if out=$(cd "$ROOT/bench" && "$PY" -c '
import numpy as np, classes
lin = np.zeros((3, 1, 3))
lin[:, 0, 1] = 100.0 / 203.0
lin[:, 0, 2] = 1.0e3
print(" ".join(str(int(v)) for v in classes.pq_rgb12(lin)[0, :, 1]))' 2>&1) &&
   [ "$out" = "0 $(awk 'BEGIN { printf "%.0f", 4095 * 0.5081 }') 4095" ]; then
    t_ok bench-classes/pq "ST 2084 codes $out for 0, 100 cd/m2 and above 10,000"
else
    t_fail bench-classes/pq "ST 2084 codes '$out', expected 0 $(awk 'BEGIN { printf "%.0f", 4095 * 0.5081 }') 4095"
fi
