#!/bin/sh
# fetch-peers.sh: prepares .dev/ (git-ignored) with everything bench/run.sh needs on a machine
# that has no package registry (the lent GPU machine): the peer encoders, nvJPEG2000 and the
# benchmark's source content. Run it here (Debian bookworm, apt and pip reachable), then carry
# ".dev" to the device machine.
#
#   .dev/peers/     Debian bookworm OpenJPEG 2.5.0, Grok 10.0.5 and OpenJPH 0.9.0 (HTJ2K,
#                   ojph_compress/ojph_expand) command-line tools with every
#                   library they need beyond libc/libm/libstdc++/libgcc_s, unpacked with dpkg -x;
#                   run with LD_LIBRARY_PATH=.dev/peers/lib (bench/run.sh does this); djpeg too.
#   .dev/nvjpeg2k/  include/ and lib/ of the PyPI wheel nvidia-nvjpeg2k-cu13 (kept in .whl/)
#   .dev/frames/    compact sources of the benchmark frames (bench/README.md, "Frames"):
#                   Elephants_5640x3172.jpg (Debian mate-backgrounds), the DCI 2K codestreams
#                   X_4/X_5 of ../shared/corpus when present, and SHA256SUMS of the frames that
#                   bench/mkframes.py and opj_decompress make from them (checked on the device);
#                   for the content classes (bench/classes.py): six nature photographs of
#                   mate-backgrounds, the Terminus 32x16 console font of Debian
#                   console-setup-linux, and SHA256SUMS-classes of the class frames
#
# Usage: tools/fetch-peers.sh [--no-frames]     (from the repository root or anywhere in it)
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DEV=$ROOT/.dev
CORPUS=${J2KC_CORPUS:-$ROOT/../shared/corpus}
with_frames=1
[ "${1:-}" = --no-frames ] && with_frames=0

PEER_PKGS="libopenjp2-tools libopenjp2-7 grokj2k-tools libgrokj2k1 liblcms2-2 libtiff6
 libpng16-16 libjpeg62-turbo libjpeg-turbo-progs zlib1g libwebp7 libzstd1 liblzma5 liblerc4
 libjbig0 libdeflate0 libperl5.36 libcrypt1 openjph-tools libopenjph0.9"
NVJ_WHEEL=nvidia-nvjpeg2k-cu13==0.11.0.51

mkdir -p "$DEV/peers" "$DEV/frames" "$ROOT/.whl"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
DEBS=$tmp/debs
mkdir -p "$DEBS"

echo "fetch-peers: downloading Debian packages (apt-get download)"
(cd "$DEBS" && apt-get download $PEER_PKGS mate-backgrounds console-setup-linux >/dev/null 2>&1) || {
    echo "fetch-peers: apt-get download failed (run apt-get update?)" >&2; exit 1; }

echo "fetch-peers: unpacking into .dev/peers"
rm -rf "$DEV/peers" && mkdir -p "$DEV/peers/bin" "$DEV/peers/lib"
for pkg in $PEER_PKGS; do
    deb=$(ls "$DEBS/${pkg}_"*.deb | head -n 1)
    dpkg -x "$deb" "$tmp/x"
done
for b in opj_compress opj_decompress opj_dump grk_compress grk_decompress grk_dump ojph_compress \
         ojph_expand djpeg; do
    cp "$tmp/x/usr/bin/$b" "$DEV/peers/bin/"
done
# shared libraries only (no perl modules, no docs): the tools load nothing else at run time
find "$tmp/x/lib" "$tmp/x/usr/lib" -maxdepth 2 -name '*.so*' \( -type f -o -type l \) \
    -exec cp -P {} "$DEV/peers/lib/" \;
ls -1 "$DEBS" | grep -v -e mate-backgrounds -e console-setup-linux > "$DEV/peers/PACKAGES"

# check: every library a peer needs resolves inside .dev/peers or is a base-system library
# present on any glibc distribution (libc, libm, libstdc++, libgcc_s, the loader)
bad=$(for b in "$DEV"/peers/bin/*; do
          env -i LD_LIBRARY_PATH="$DEV/peers/lib" ldd "$b"; done |
      awk '/=>/ { print $1, $3 }' | sort -u |
      grep -v -e "$DEV/peers/lib/" -e '^libc\.so' -e '^libm\.so' -e '^libstdc++' \
              -e '^libgcc_s' -e '^ld-linux' -e '^linux-vdso' || true)
if [ -n "$bad" ]; then
    echo "fetch-peers: libraries resolved outside .dev/peers:" >&2; echo "$bad" >&2; exit 1
fi
env -i LD_LIBRARY_PATH="$DEV/peers/lib" "$DEV/peers/bin/opj_compress" -h 2>&1 | head -n 3 | grep -q . ||
    { echo "fetch-peers: opj_compress does not start" >&2; exit 1; }
env -i LD_LIBRARY_PATH="$DEV/peers/lib" "$DEV/peers/bin/ojph_compress" 2>&1 | grep -q -- -reversible ||
    { echo "fetch-peers: ojph_compress does not start" >&2; exit 1; }

echo "fetch-peers: nvJPEG2000 wheel ($NVJ_WHEEL) into .whl and .dev/nvjpeg2k"
if ! ls "$ROOT"/.whl/nvidia_nvjpeg2k_cu13-*.whl >/dev/null 2>&1; then
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --platform manylinux1_x86_64 -d "$ROOT/.whl" "$NVJ_WHEEL"
fi
rm -rf "$DEV/nvjpeg2k" && mkdir -p "$DEV/nvjpeg2k"
python3 -m zipfile -e "$(ls "$ROOT"/.whl/nvidia_nvjpeg2k_cu13-*.whl | head -n 1)" "$tmp/w"
cp -r "$tmp/w/nvidia/nvjpeg2k/include" "$tmp/w/nvidia/nvjpeg2k/lib" "$DEV/nvjpeg2k/"
rm -f "$DEV"/nvjpeg2k/*/__init__.py
ln -sf libnvjpeg2k.so.0 "$DEV/nvjpeg2k/lib/libnvjpeg2k.so"
cp "$tmp"/w/nvidia_nvjpeg2k_cu13-*.dist-info/licenses/LICENSE.txt "$DEV/nvjpeg2k/" 2>/dev/null || true

if [ $with_frames = 1 ]; then
    echo "fetch-peers: frame sources into .dev/frames"
    dpkg-deb --fsys-tarfile "$(ls "$DEBS"/mate-backgrounds_*.deb | head -n 1)" |
        tar -x -O --wildcards '*/abstract/Elephants_5640x3172.jpg' > "$DEV/frames/Elephants_5640x3172.jpg"
    for f in X_4_2K_24_185_CBR_WB_000.j2k X_5_2K_24_235_CBR_STEM24_000.j2k; do
        if [ -f "$CORPUS/$f" ]; then cp "$CORPUS/$f" "$DEV/frames/"
        else echo "fetch-peers: $CORPUS/$f missing: the 2K frames will be made from the painting"; fi
    done
    # make the frames once here and record their checksums: the device run checks that it made
    # the same bytes (same djpeg/opj binaries; numpy float64 rounding could differ by a code)
    rm -rf "$tmp/f" && mkdir -p "$tmp/f"
    PEERS="$DEV/peers" sh "$ROOT/bench/frames.sh" "$DEV/frames" "$tmp/f" >/dev/null
    (cd "$tmp/f" && sha256sum *.ppm *.yuv) > "$DEV/frames/SHA256SUMS"
    cat "$DEV/frames/SHA256SUMS"
    # the content classes' sources and checksums (bench/classes.py, 12 frames a class)
    dpkg-deb --fsys-tarfile "$(ls "$DEBS"/mate-backgrounds_*.deb | head -n 1)" | tar -x -C "$tmp" --wildcards '*/nature/*.jpg'
    for p in Aqua Garden LadyBird TwoWings YellowFlower Wood; do
        cp "$tmp/usr/share/backgrounds/mate/nature/$p.jpg" "$DEV/frames/"
    done
    dpkg-deb --fsys-tarfile "$(ls "$DEBS"/console-setup-linux_*.deb | head -n 1)" |
        tar -x -O --wildcards '*/consolefonts/Uni2-Terminus32x16.psf.gz' > "$DEV/frames/Uni2-Terminus32x16.psf.gz"
    : > "$DEV/frames/SHA256SUMS-classes"
    for c in grain photo cg text noise dark flat hdrpq; do
        rm -rf "$tmp/c" && mkdir -p "$tmp/c"
        PEERS="$DEV/peers" sh "$ROOT/bench/frames.sh" --classes $c 12 "$DEV/frames" "$tmp/c" >/dev/null
        (cd "$tmp/c" && sha256sum ${c}_*.ppm) >> "$DEV/frames/SHA256SUMS-classes"
    done
fi
du -sh "$DEV/peers" "$DEV/nvjpeg2k" "$DEV/frames"
echo "fetch-peers: carry .dev/peers .dev/nvjpeg2k .dev/frames ($(du -scm "$DEV/peers" "$DEV/nvjpeg2k" "$DEV/frames" | tail -n 1 | cut -f1) MB)"
