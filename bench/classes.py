#!/usr/bin/env python3
"""The benchmark's content classes: short sequences of distinct frames, made deterministically
(numpy only, fixed seeds) from Debian material or generated, so that per-class speed, quality
and the share of frames coded twice (qstep_try) are measured on many frames, not one.

Every class is a sequence of NB frames of 2048x1080 (2K DCI container), 12-bit 4:4:4, written as
16-bit PPM (maxval 4095) named CLASS_NN_2048x1080_xyz12.ppm (or _rgb12pq for hdrpq):

  grain    film-grain scan stand-in: the photographs below (panned) with generated film grain,
           a fresh grain field per frame (mkframes.add_grain with seed + frame), DCI X'Y'Z'
  photo    photographs: the 2560-wide nature JPEGs of Debian mate-backgrounds (decoded by djpeg),
           Lanczos-3 resized in linear light to 2048 wide, panned vertically, DCI X'Y'Z'
  cg       CG/animation: flat-colour shapes (rectangles, discs, triangles) with hard edges and
           dark outlines over a two-tone sky/ground, moving a few pixels per frame, DCI X'Y'Z'
  text     text and graphics: the Terminus 32x16 console font of Debian console-setup-linux
           (PSF2), lines of generated words on slide backgrounds with bar charts and rules,
           scrolling per frame, DCI X'Y'Z'
  noise    white noise, uniform over the 12-bit codes, a new seed per frame
  dark     near-black: a photograph scaled to 1/400 of its light (codes near 0 after the
           SMPTE 428-1 curve) plus Gaussian sensor noise (sigma 3 codes), DCI X'Y'Z'
  flat     flat colour: one X'Y'Z' colour per frame, no other detail
  hdrpq    HDR PQ: the photographs as a linear-light scene (diffuse white 203 cd/m2, highlights
           expanded up to 4000 cd/m2), BT.709 -> BT.2020 primaries, SMPTE ST 2084 PQ, R'G'B'
           12-bit full range

Usage: classes.py [--frames NB] [--only CLASS,..] JPEG_DIR FONT.psf[.gz] OUTDIR
  JPEG_DIR holds the photographs as 8-bit PPMs NAME.ppm decoded by djpeg (bench/frames.sh
  --classes does it) and FONT is Uni2-Terminus32x16.psf.gz; classes that need neither
  (noise, flat, cg) are made without them.
"""
import gzip
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mkframes  # noqa: E402  (resize, colour conversions, grain: one recipe for all frames)

W, H = 2048, 1080
CLASSES = ("grain", "photo", "cg", "text", "noise", "dark", "flat", "hdrpq")
PHOTOS = ("Aqua", "Garden", "LadyBird", "TwoWings", "YellowFlower", "Wood")
SEED = 20261127


def rng_for(name, k):
    """One generator per class and frame: a frame does not depend on the others made."""
    return np.random.Generator(np.random.PCG64([SEED, CLASSES.index(name), k]))


# ---- photographs --------------------------------------------------------------------------
_photo_cache = {}


def photo_linear(jpeg_dir, name):
    """Linear-light sRGB (3 x h x 2048, white = 1) of one photograph resized to 2048 wide."""
    if name not in _photo_cache:
        rgb8 = mkframes.read_ppm8(os.path.join(jpeg_dir, name + ".ppm"))
        full_h = int(round(rgb8.shape[0] * W / rgb8.shape[1]))
        _photo_cache[name] = mkframes.resize_linear(rgb8, W, full_h)
    return _photo_cache[name]


def photo_frame(jpeg_dir, k, nb):
    """Frame k of nb: the photographs in turn, each panned down over its height."""
    name = PHOTOS[k % len(PHOTOS)]
    lin = photo_linear(jpeg_dir, name)
    visits = (nb + len(PHOTOS) - 1) // len(PHOTOS)
    step = (lin.shape[1] - H) // max(1, visits - 1) if visits > 1 else 0
    y = min(lin.shape[1] - H, (k // len(PHOTOS)) * step)
    return lin[:, y:y + H, :]


# ---- generated content --------------------------------------------------------------------
def cg_frame(k):
    """Cel-animation-like frame: flat regions and hard edges, objects moving with the frame."""
    r = np.random.Generator(np.random.PCG64([SEED, CLASSES.index("cg")]))  # the scene: fixed
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float64)
    img = np.empty((3, H, W))
    horizon = 700
    sky = np.array([0.25, 0.45, 0.85])
    ground = np.array([0.20, 0.55, 0.15])
    for c in range(3):
        img[c] = np.where(yy < horizon, sky[c] * (0.7 + 0.3 * yy / horizon), ground[c])
    for s in range(40):
        kind = r.integers(3)
        col = r.uniform(0.05, 0.95, 3)
        cx0, cy0 = r.uniform(0, W), r.uniform(0, H)
        vx, vy = r.uniform(-12, 12), r.uniform(-4, 4)
        size = r.uniform(30, 220)
        cx, cy = cx0 + vx * k, cy0 + vy * k
        # the shape's window (every shape fits 1.1 size + 4 around its centre)
        ya, yb = int(max(0, cy - 1.1 * size - 6)), int(min(H, cy + 1.1 * size + 6))
        xa, xb = int(max(0, cx - 1.1 * size - 6)), int(min(W, cx + 1.1 * size + 6))
        if ya >= yb or xa >= xb:
            continue
        x, y = xx[ya:yb, xa:xb], yy[ya:yb, xa:xb]
        if kind == 0:
            inner = (np.abs(x - cx) < size) & (np.abs(y - cy) < size * 0.6)
            outer = (np.abs(x - cx) < size + 4) & (np.abs(y - cy) < size * 0.6 + 4)
        elif kind == 1:
            d2 = (x - cx) ** 2 + (y - cy) ** 2
            inner = d2 < size ** 2
            outer = d2 < (size + 4) ** 2
        else:
            u, v = (x - cx) / size, (y - cy) / size
            inner = (v < 0.8) & (v > -0.8 + 2 * np.abs(u))
            outer = (v < 0.85) & (v > -0.9 + 2 * np.abs(u) - 0.1)
        shade = 1.0 - 0.25 * ((y - cy) > 0) if kind == 1 else 1.0   # two-tone cel shading
        win = img[:, ya:yb, xa:xb]
        for c in range(3):
            win[c] = np.where(outer, 0.02, win[c])
            win[c] = np.where(inner, col[c] * shade, win[c])
    return np.clip(img, 0.0, 1.0) ** 2.2                                # colours chosen in sRGB-ish


def read_psf(path):
    """PSF2 (or PSF1) console font -> glyphs (n x h x w bool)."""
    data = open(path, "rb").read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    if data[:4] == b"\x72\xb5\x4a\x86":
        hdr = np.frombuffer(data[:32], dtype="<u4")
        off, n, size, h, w = int(hdr[2]), int(hdr[4]), int(hdr[5]), int(hdr[6]), int(hdr[7])
    elif data[:2] == b"\x36\x04":
        off, n, h, w = 4, 512 if data[2] & 1 else 256, data[3], 8
        size = h
    else:
        raise ValueError(f"{path}: not a PSF font")
    row = (w + 7) // 8
    g = np.frombuffer(data[off:off + n * size], dtype=np.uint8).reshape(n, h, row)
    bits = np.unpackbits(g, axis=2)[:, :, :w]
    return bits.astype(bool)


WORDS = ("frame budget code block rate control quantiser wavelet tier packet layer precinct "
         "cinema broadcast sample plane pass slope hull distortion entropy coder context "
         "stream header marker tile component colour light scene grain photo noise").split()


def text_frame(glyphs, k):
    """Slides of text (scrolling 24 lines a frame pair) with a bar chart and rules."""
    r = np.random.Generator(np.random.PCG64([SEED, CLASSES.index("text")]))  # the page: fixed
    gh, gw = glyphs.shape[1:]
    page_lines = 120
    lines = []
    for i in range(page_lines):
        words = r.choice(WORDS, size=r.integers(3, 12))
        s = " ".join(words)
        if r.random() < 0.3:
            s += f" {r.integers(0, 100000)}.{r.integers(0, 100):02d}"
        lines.append(s[: (W // 2 - 64) // gw])
    light = (k // 4) % 2 == 0                                  # dark and light slides alternate
    bg = np.array([0.92, 0.92, 0.90]) if light else np.array([0.02, 0.03, 0.12])
    fg = np.array([0.03, 0.03, 0.03]) if light else np.array([0.95, 0.95, 0.80])
    mask = np.zeros((H, W), dtype=bool)
    first = k * 6                                             # scroll: 6 lines a frame
    y = 40
    for i in range(first, first + (H - 80) // (gh + 4)):
        s = lines[i % page_lines]
        x = 48
        for ch in s:
            code = ord(ch) if ord(ch) < glyphs.shape[0] else ord("?")
            mask[y:y + gh, x:x + gw] |= glyphs[code]
            x += gw
        y += gh + 4
    img = np.empty((3, H, W))
    for c in range(3):
        img[c] = np.where(mask, fg[c], bg[c])
    # graphics on the right half: rules and a bar chart whose bars change with the frame
    x0, x1, y0, y1 = W // 2 + 40, W - 60, 120, H - 120
    img[:, y1:y1 + 4, x0:x1] = fg[:, None, None]
    img[:, y0:y1, x0:x0 + 4] = fg[:, None, None]
    nbar = 12
    bw = (x1 - x0 - 40) // nbar
    for b in range(nbar):
        hgt = int((y1 - y0 - 20) * (0.2 + 0.75 * abs(np.sin(0.7 * b + 0.35 * k))))
        col = np.array([0.9, 0.2, 0.1]) if b % 3 == 0 else np.array([0.1, 0.4, 0.9]) if b % 3 == 1 \
            else np.array([0.95, 0.7, 0.1])
        xb = x0 + 20 + b * bw
        img[:, y1 - hgt:y1, xb:xb + bw - 10] = col[:, None, None]
    for t in range(5):                                         # grid lines
        yl = y1 - t * (y1 - y0) // 5
        img[:, yl:yl + 1, x0:x1] = 0.5
    return img ** 2.2


# ---- colour ---------------------------------------------------------------------------------
def pq_rgb12(lin):
    """Linear sRGB-primaries light (white = 1) -> an HDR scene -> BT.2020 R'G'B' PQ 12-bit.
    Diffuse white at 203 cd/m2 (ITU-R BT.2408), the top 10 % of the light expanded towards
    4000 cd/m2 (highlights); ST 2084: E' = ((c1 + c2 Y^m1) / (1 + c3 Y^m1))^m2, Y = L / 10000."""
    m = np.array([[0.6274, 0.3293, 0.0433],          # BT.709 -> BT.2020 primaries (BT.2087)
                  [0.0691, 0.9195, 0.0114],
                  [0.0164, 0.0880, 0.8956]])
    rgb = np.tensordot(m, lin, axes=1)
    lum = 203.0 * rgb + 3800.0 * np.clip((rgb - 0.9) / 0.1, 0.0, 1.0) ** 2
    y = np.clip(lum / 10000.0, 0.0, 1.0)
    m1, m2 = 2610.0 / 16384, 2523.0 / 4096 * 128
    c1, c2, c3 = 3424.0 / 4096, 2413.0 / 4096 * 32, 2392.0 / 4096 * 32
    ym = y ** m1
    e = ((c1 + c2 * ym) / (1 + c3 * ym)) ** m2
    return np.rint(4095.0 * e).astype(np.uint16).transpose(1, 2, 0)


def make(name, k, nb, jpeg_dir, glyphs):
    """Frame k of class name: H x W x 3 uint16 codes and the file suffix."""
    if name == "photo":
        return mkframes.dci_xyz12(photo_frame(jpeg_dir, k, nb)), "xyz12"
    if name == "grain":
        return mkframes.add_grain(mkframes.dci_xyz12(photo_frame(jpeg_dir, k, nb)), seed=SEED + k), "xyz12"
    if name == "dark":
        cv = mkframes.dci_xyz12(photo_frame(jpeg_dir, k, nb) / 400.0).astype(np.float64)
        cv += 3.0 * rng_for(name, k).standard_normal(cv.shape)
        return np.clip(np.rint(cv), 0, 4095).astype(np.uint16), "xyz12"
    if name == "hdrpq":
        return pq_rgb12(photo_frame(jpeg_dir, k, nb)), "rgb12pq"
    if name == "cg":
        return mkframes.dci_xyz12(cg_frame(k)), "xyz12"
    if name == "text":
        return mkframes.dci_xyz12(text_frame(glyphs, k)), "xyz12"
    if name == "noise":
        return rng_for(name, k).integers(0, 4096, size=(H, W, 3), dtype=np.uint16), "xyz12"
    if name == "flat":
        col = rng_for(name, k).integers(200, 3900, size=3)
        return np.broadcast_to(col.astype(np.uint16), (H, W, 3)), "xyz12"
    raise ValueError(name)


def main():
    args = sys.argv[1:]
    nb, only = 12, list(CLASSES)
    while args and args[0].startswith("--"):
        if args[0] == "--frames":
            nb = int(args[1])
        elif args[0] == "--only":
            only = args[1].split(",")
        else:
            sys.exit(__doc__)
        args = args[2:]
    if len(args) != 3 or nb < 1 or any(c not in CLASSES for c in only):
        sys.exit(__doc__)
    jpeg_dir, font, outdir = args
    glyphs = read_psf(font) if "text" in only else None
    for name in only:
        for k in range(nb):
            cv, suffix = make(name, k, nb, jpeg_dir, glyphs)
            write(os.path.join(outdir, f"{name}_{k:02d}_{W}x{H}_{suffix}.ppm"), cv)


def write(path, cv):
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n4095\n" % (W, H))
        f.write(np.ascontiguousarray(cv, dtype=">u2").tobytes())
    print("classes: wrote", path, flush=True)


if __name__ == "__main__":
    main()
