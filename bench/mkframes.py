#!/usr/bin/env python3
"""Builds the benchmark's 4K frames from real content (numpy only, deterministic).

Input: the painting photo Elephants_5640x3172.jpg from Debian's mate-backgrounds, decoded to an
8-bit sRGB PPM by libjpeg-turbo's djpeg (bench/frames.sh). It is resized in linear light with a
separable Lanczos-3 filter to 4096 wide (4096x2304) and centre-cropped to 4096x2160, then written
as:
  dci4k_elephants_4096x2160_xyz12.ppm   DCI X'Y'Z' 12-bit 4:4:4 (PPM maxval 4095, 16-bit BE):
                                        sRGB primaries -> CIE XYZ, CV = 4095*(48*XYZ/52.37)^(1/2.6)
  imf4k_elephants_4096x2160_yuv422p10le.yuv
                                        Y'CbCr BT.709 narrow range 10-bit 4:2:2, planar, 16-bit LE
                                        (chroma: [1 2 1]/4 on co-sited even columns)
The 8-bit source becomes true 12/10-bit content: the resize and the transfer curves produce
values between the 8-bit codes.

Mode "2k" (only when ../shared/corpus is absent) makes the 2K DCI frame (1998x1080) and a grain
frame (2048x858, generated film grain on the painting) the same way.

Usage: mkframes.py 4k|2k SRC_8BIT.ppm OUTDIR
"""
import sys
import numpy as np

OUT_W, OUT_H = 4096, 2160


def lanczos(x, a=3.0):
    x = np.asarray(x, dtype=np.float64)
    out = np.sinc(x) * np.sinc(x / a)
    out[np.abs(x) >= a] = 0.0
    return out


def taps(n_in, n_out, out_idx, a=3.0):
    """Index and weight arrays (len(out_idx) x K) of a Lanczos-a resize n_in -> n_out."""
    s = n_out / n_in                       # < 1: downscale, the kernel widens by 1/s
    fs = min(s, 1.0)
    radius = a / fs
    c = (out_idx + 0.5) / s - 0.5          # centre of each output sample on the input grid
    j0 = np.floor(c - radius).astype(np.int64) + 1
    k = int(np.ceil(2 * radius)) + 1
    j = j0[:, None] + np.arange(k)[None, :]
    w = lanczos((j - c[:, None]) * fs, a)
    w /= w.sum(axis=1, keepdims=True)
    return np.clip(j, 0, n_in - 1), w


def resize_plane(p, rows, cols):
    """p: H x W float64; rows/cols: (idx, w) tap tables for the output rows and columns."""
    ri, rw = rows
    tmp = np.zeros((ri.shape[0], p.shape[1]), dtype=np.float64)
    for k in range(ri.shape[1]):           # fixed order: deterministic sums
        tmp += rw[:, k:k + 1] * p[ri[:, k], :]
    ci, cw = cols
    out = np.zeros((tmp.shape[0], ci.shape[0]), dtype=np.float64)
    for k in range(ci.shape[1]):
        out += cw[None, :, k] * tmp[:, ci[:, k]]
    return out


def srgb_to_linear(v):
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(v):
    v = np.clip(v, 0.0, 1.0)
    return np.where(v <= 0.0031308, v * 12.92, 1.055 * v ** (1 / 2.4) - 0.055)


def read_ppm8(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:                 # magic, width, height, maxval (no comments from djpeg)
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    assert fields[0] == b"P6" and fields[3] == b"255", "8-bit P6 PPM expected"
    w, h = int(fields[1]), int(fields[2])
    return np.frombuffer(data, dtype=np.uint8, count=w * h * 3, offset=pos + 1).reshape(h, w, 3)


def resize_linear(rgb8, out_w, out_h):
    """Lanczos-3 resize in linear light to out_w wide, centre crop to out_h: 3 x out_h x out_w."""
    sh, sw = rgb8.shape[:2]
    lut = srgb_to_linear(np.arange(256) / 255.0)
    full_h = int(round(sh * out_w / sw))   # 3172 * 4096/5640 -> 2304
    y_off = (full_h - out_h) // 2
    rows = taps(sh, full_h, np.arange(y_off, y_off + out_h, dtype=np.float64))
    cols = taps(sw, out_w, np.arange(out_w, dtype=np.float64))
    lin = np.empty((3, out_h, out_w), dtype=np.float64)
    for c in range(3):
        lin[c] = resize_plane(lut[rgb8[:, :, c]], rows, cols)
    return np.clip(lin, 0.0, 1.0)


def dci_xyz12(lin):
    """Linear sRGB-primaries light (white = 1) -> DCI X'Y'Z' 12-bit code values, H x W x 3.
    SMPTE 428-1: white at 48 cd/m2, normalising constant 52.37, exponent 1/2.6."""
    m = np.array([[0.4124564, 0.3575761, 0.1804375],
                  [0.2126729, 0.7151522, 0.0721750],
                  [0.0193339, 0.1191920, 0.9503041]])
    xyz = np.tensordot(m, lin, axes=1)
    cv = np.rint(4095.0 * np.clip(xyz * (48.0 / 52.37), 0.0, 1.0) ** (1 / 2.6))
    return cv.astype(np.uint16).transpose(1, 2, 0)


def write_ppm16(path, cv, maxval):
    h, w = cv.shape[:2]
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n%d\n" % (w, h, maxval))
        f.write(cv.astype(">u2").tobytes())
    print("mkframes: wrote", path, flush=True)


def write_yuv422p10(path, lin):
    """BT.709 Y'CbCr, narrow range 10-bit, chroma [1 2 1]/4 co-sited on even columns."""
    e = linear_to_srgb(lin)
    y = 0.2126 * e[0] + 0.7152 * e[1] + 0.0722 * e[2]
    cb = (e[2] - y) / 1.8556
    cr = (e[0] - y) / 1.5748

    def sub422(p):
        left = np.concatenate([p[:, :1], p[:, :-1]], axis=1)
        right = np.concatenate([p[:, 1:], p[:, -1:]], axis=1)
        return ((left + 2 * p + right) / 4.0)[:, 0::2]

    planes = (np.rint(64 + 876 * y), np.rint(512 + 896 * sub422(cb)), np.rint(512 + 896 * sub422(cr)))
    with open(path, "wb") as f:
        for p in planes:
            f.write(np.clip(p, 0, 1023).astype("<u2").tobytes())
    print("mkframes: wrote", path, flush=True)


def add_grain(cv, seed=20261121):
    """Film-grain stand-in: spatially correlated Gaussian noise (3x3 box-blurred white noise, so
    clumps of about 2 samples), amplitude largest in the mid-tones, the same for X', Y', Z' plus
    a weaker independent part per component (dye layers)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    h, w = cv.shape[:2]

    def clumps():
        n = rng.standard_normal((h + 2, w + 2))
        s = sum(n[dy:dy + h, dx:dx + w] for dy in range(3) for dx in range(3))
        return s / 3.0                     # unit variance again

    common = clumps()
    out = np.empty(cv.shape, dtype=np.float64)
    for c in range(3):
        v = cv[:, :, c] / 4095.0
        amp = 90.0 * (0.35 + 4.0 * v * (1.0 - v))     # 12-bit codes, sigma 30..90
        out[:, :, c] = cv[:, :, c] + amp * (0.8 * common + 0.6 * clumps())
    return np.clip(np.rint(out), 0, 4095).astype(np.uint16)


def main():
    mode, src, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
    rgb8 = read_ppm8(src)
    if mode == "4k":
        lin = resize_linear(rgb8, 4096, 2160)
        write_ppm16(f"{outdir}/dci4k_elephants_4096x2160_xyz12.ppm", dci_xyz12(lin), 4095)
        write_yuv422p10(f"{outdir}/imf4k_elephants_4096x2160_yuv422p10le.yuv", lin)
    elif mode == "2k":                     # used only without ../shared/corpus
        write_ppm16(f"{outdir}/dci2k_elephants_1998x1080_xyz12.ppm",
                    dci_xyz12(resize_linear(rgb8, 1998, 1080)), 4095)
        write_ppm16(f"{outdir}/grain_elephants_2048x858_xyz12.ppm",
                    add_grain(dci_xyz12(resize_linear(rgb8, 2048, 858))), 4095)
    else:
        sys.exit("usage: mkframes.py 4k|2k SRC_8BIT.ppm OUTDIR")


if __name__ == "__main__":
    main()
