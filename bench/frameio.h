/*
 * frameio.h: loads one benchmark frame into planar native-endian uint16 host planes.
 * Shared by bench/j2kbench.c and bench/nvj2k_bench.c (header-only; static functions).
 *
 * Formats:
 *   .ppm/.pgm     P6/P5, maxval 2^d-1 with 9 <= d <= 16 (16-bit big-endian samples) or 255
 *   yuvSSSpDDle   raw planar little-endian 16-bit (yuv444p12le, yuv422p10le, yuv420p10le...),
 *                 size given separately; component 0 full size, 1 and 2 subsampled
 */
#ifndef BENCH_FRAMEIO_H
#define BENCH_FRAMEIO_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct BenchFrame {
    int       nb_comps;
    uint32_t  width, height;
    int       depth;
    int       dx[4], dy[4];
    uint32_t  comp_w[4], comp_h[4];
    uint16_t *plane[4];     /* comp_w x comp_h samples each, tightly packed */
} BenchFrame;

static void bench_frame_free(BenchFrame *f)
{
    for (int c = 0; c < 4; c++) {
        free(f->plane[c]);
        f->plane[c] = NULL;
    }
}

static int bench_read_all(const char *path, uint8_t **out, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    long n;
    if (!fp)
        return -1;
    if (fseek(fp, 0, SEEK_END) || (n = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET)) {
        fclose(fp);
        return -1;
    }
    *out = malloc((size_t)n + 1);
    if (!*out || fread(*out, 1, (size_t)n, fp) != (size_t)n) {
        fclose(fp);
        free(*out);
        *out = NULL;
        return -1;
    }
    fclose(fp);
    *size = (size_t)n;
    return 0;
}

static int bench_alloc_planes(BenchFrame *f)
{
    for (int c = 0; c < f->nb_comps; c++) {
        f->comp_w[c] = (f->width + (uint32_t)f->dx[c] - 1) / (uint32_t)f->dx[c];
        f->comp_h[c] = (f->height + (uint32_t)f->dy[c] - 1) / (uint32_t)f->dy[c];
        f->plane[c] = malloc((size_t)f->comp_w[c] * f->comp_h[c] * 2);
        if (!f->plane[c])
            return -1;
    }
    return 0;
}

/* Reads the next header token of a PNM file (skipping blanks and # comments). */
static long bench_pnm_token(const uint8_t *d, size_t n, size_t *pos)
{
    long v = -1;
    while (*pos < n && (d[*pos] == ' ' || d[*pos] == '\t' || d[*pos] == '\n' || d[*pos] == '\r' || d[*pos] == '#')) {
        if (d[*pos] == '#')
            while (*pos < n && d[*pos] != '\n')
                (*pos)++;
        else
            (*pos)++;
    }
    while (*pos < n && d[*pos] >= '0' && d[*pos] <= '9') {
        v = (v < 0 ? 0 : v * 10) + (d[*pos] - '0');
        (*pos)++;
    }
    return v;
}

static int bench_load_pnm(BenchFrame *f, const uint8_t *d, size_t n)
{
    size_t pos = 2;
    long w, h, maxval;
    int bps;
    if (n < 3 || d[0] != 'P' || (d[1] != '5' && d[1] != '6'))
        return -1;
    f->nb_comps = d[1] == '6' ? 3 : 1;
    w = bench_pnm_token(d, n, &pos);
    h = bench_pnm_token(d, n, &pos);
    maxval = bench_pnm_token(d, n, &pos);
    if (w <= 0 || h <= 0 || maxval <= 0 || maxval > 65535)
        return -1;
    pos++; /* the single whitespace after maxval */
    f->width = (uint32_t)w;
    f->height = (uint32_t)h;
    for (f->depth = 1; (1L << f->depth) - 1 < maxval; f->depth++)
        ;
    bps = maxval > 255 ? 2 : 1;
    if (pos + (size_t)w * h * f->nb_comps * bps > n)
        return -1;
    for (int c = 0; c < f->nb_comps; c++)
        f->dx[c] = f->dy[c] = 1;
    if (bench_alloc_planes(f))
        return -1;
    for (size_t i = 0; i < (size_t)w * h; i++)
        for (int c = 0; c < f->nb_comps; c++) {
            const uint8_t *s = d + pos + (i * f->nb_comps + c) * bps;
            f->plane[c][i] = bps == 2 ? (uint16_t)(s[0] << 8 | s[1]) : s[0];
        }
    return 0;
}

/* fmt "yuv444p12le", "yuv422p10le", "yuv420p10le", ... */
static int bench_load_yuv(BenchFrame *f, const uint8_t *d, size_t n, const char *fmt,
                          uint32_t w, uint32_t h)
{
    int sub, depth;
    size_t pos = 0;
    if (sscanf(fmt, "yuv%dp%dle", &sub, &depth) != 2 || depth <= 8 || depth > 16 || !w || !h)
        return -1;
    f->nb_comps = 3;
    f->width = w;
    f->height = h;
    f->depth = depth;
    f->dx[0] = f->dy[0] = 1;
    f->dx[1] = f->dx[2] = sub == 444 ? 1 : 2;
    f->dy[1] = f->dy[2] = sub == 420 ? 2 : 1;
    if (sub != 444 && sub != 422 && sub != 420)
        return -1;
    if (bench_alloc_planes(f))
        return -1;
    for (int c = 0; c < 3; c++) {
        size_t cnt = (size_t)f->comp_w[c] * f->comp_h[c];
        if (pos + cnt * 2 > n)
            return -1;
        for (size_t i = 0; i < cnt; i++)
            f->plane[c][i] = (uint16_t)(d[pos + 2 * i] | d[pos + 2 * i + 1] << 8);
        pos += cnt * 2;
    }
    return 0;
}

/* fmt NULL or "pnm": PPM/PGM; else a yuv format with w x h. Returns 0 or -1. */
static int bench_frame_load(BenchFrame *f, const char *path, const char *fmt, uint32_t w, uint32_t h)
{
    uint8_t *d = NULL;
    size_t n = 0;
    int ret;
    memset(f, 0, sizeof(*f));
    if (bench_read_all(path, &d, &n)) {
        fprintf(stderr, "cannot read %s\n", path);
        return -1;
    }
    if (!fmt || !strcmp(fmt, "pnm"))
        ret = bench_load_pnm(f, d, n);
    else
        ret = bench_load_yuv(f, d, n, fmt, w, h);
    free(d);
    if (ret) {
        fprintf(stderr, "%s: unsupported or truncated frame\n", path);
        bench_frame_free(f);
    }
    return ret;
}

/* Parses "WxH". */
static int bench_parse_size(const char *s, uint32_t *w, uint32_t *h)
{
    unsigned a, b;
    if (sscanf(s, "%ux%u", &a, &b) != 2)
        return -1;
    *w = a;
    *h = b;
    return 0;
}

#endif /* BENCH_FRAMEIO_H */
