/*
 * PNM / PGX / raw readers and writers (see imageio.h). Every size is checked against the
 * bytes actually present before anything is allocated, so a header announcing a huge image
 * fails with "truncated" instead of exhausting memory.
 */
#include "imageio.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMG_MAX_DIM (1u << 20)   /* 1M samples per side: beyond any JPEG 2000 profile here */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int bytes_of(int depth) { return depth <= 8 ? 1 : 2; }

int img_alloc(Image *img)
{
    J2kcImageDesc *d = &img->desc;
    for (int c = 0; c < d->nb_comps; c++) {
        uint32_t dx = (uint32_t)d->dx[c], dy = (uint32_t)d->dy[c];
        img->w[c] = (uint32_t)(((uint64_t)d->x0 + d->width + dx - 1) / dx - ((uint64_t)d->x0 + dx - 1) / dx);
        img->h[c] = (uint32_t)(((uint64_t)d->y0 + d->height + dy - 1) / dy - ((uint64_t)d->y0 + dy - 1) / dy);
        img->plane[c] = calloc((size_t)img->w[c] * img->h[c] + 1, (size_t)bytes_of(d->depth[c]));
        if (!img->plane[c])
            return -1;
    }
    return 0;
}

void img_free(Image *img)
{
    for (int c = 0; c < J2KC_MAX_COMPS; c++) {
        free(img->plane[c]);
        img->plane[c] = NULL;
    }
}

int32_t img_get(const Image *img, int c, uint32_t x, uint32_t y)
{
    size_t i = (size_t)y * img->w[c] + x;
    int sgn = img->desc.is_signed[c];
    if (bytes_of(img->desc.depth[c]) == 1)
        return sgn ? ((const int8_t *)img->plane[c])[i] : ((const uint8_t *)img->plane[c])[i];
    return sgn ? ((const int16_t *)img->plane[c])[i] : ((const uint16_t *)img->plane[c])[i];
}

void img_set(Image *img, int c, uint32_t x, uint32_t y, int32_t v)
{
    size_t i = (size_t)y * img->w[c] + x;
    if (bytes_of(img->desc.depth[c]) == 1)
        ((uint8_t *)img->plane[c])[i] = (uint8_t)v;
    else
        ((uint16_t *)img->plane[c])[i] = (uint16_t)v;
}

/* ---- whole-file helper -------------------------------------------------------------- */
static uint8_t *slurp(const char *path, size_t *size, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        seterr(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            uint8_t *nb = realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                seterr(err, errlen, "%s: out of memory", path);
                return NULL;
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (!r)
            break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        seterr(err, errlen, "%s: read error", path);
        return NULL;
    }
    fclose(f);
    buf[n] = 0;
    *size = n;
    return buf;
}

/* Reads an unsigned decimal of a text header; skips whitespace and #comments (PNM). */
static int hdr_uint(const uint8_t *b, size_t n, size_t *pos, uint64_t *v, int comments)
{
    size_t p = *pos;
    for (;;) {
        while (p < n && isspace(b[p]))
            p++;
        if (comments && p < n && b[p] == '#') {
            while (p < n && b[p] != '\n')
                p++;
            continue;
        }
        break;
    }
    if (p >= n || !isdigit(b[p]))
        return -1;
    uint64_t x = 0;
    while (p < n && isdigit(b[p])) {
        x = x * 10 + (uint64_t)(b[p] - '0');
        if (x > 0xFFFFFFFFull)
            return -1;
        p++;
    }
    *v = x;
    *pos = p;
    return 0;
}

static int check_dims(uint64_t w, uint64_t h, const char *path, char *err, size_t errlen)
{
    if (!w || !h)
        return seterr(err, errlen, "%s: empty image %llux%llu", path, (unsigned long long)w,
                      (unsigned long long)h);
    if (w > IMG_MAX_DIM || h > IMG_MAX_DIM)
        return seterr(err, errlen, "%s: image %llux%llu too large (max %u per side)", path,
                      (unsigned long long)w, (unsigned long long)h, IMG_MAX_DIM);
    return 0;
}

/* ---- PNM (P5 gray, P6 RGB; netpbm: 16-bit samples big-endian) ---------------------------- */
static int read_pnm(const char *path, const uint8_t *b, size_t n, Image *img, char *err, size_t errlen)
{
    int nc = b[1] == '5' ? 1 : 3;
    size_t p = 2;
    uint64_t w, h, maxval;
    if (hdr_uint(b, n, &p, &w, 1) || hdr_uint(b, n, &p, &h, 1) || hdr_uint(b, n, &p, &maxval, 1))
        return seterr(err, errlen, "%s: malformed PNM header", path);
    if (p >= n || !isspace(b[p]))
        return seterr(err, errlen, "%s: malformed PNM header (no whitespace after maxval)", path);
    p++;
    if (check_dims(w, h, path, err, errlen))
        return -1;
    if (maxval < 1 || maxval > 65535)
        return seterr(err, errlen, "%s: PNM maxval %llu unsupported (1..65535)", path,
                      (unsigned long long)maxval);
    int depth = 0;
    while ((1ull << depth) <= maxval)
        depth++;
    int bps = maxval > 255 ? 2 : 1;
    uint64_t need = w * h * (uint64_t)nc * (uint64_t)bps;
    if (n - p < need)
        return seterr(err, errlen, "%s: truncated PNM: %zu sample bytes, %llu needed for %llux%llu", path,
                      n - p, (unsigned long long)need, (unsigned long long)w, (unsigned long long)h);
    memset(img, 0, sizeof(*img));
    img->desc.nb_comps = nc;
    img->desc.width = (uint32_t)w;
    img->desc.height = (uint32_t)h;
    for (int c = 0; c < nc; c++) {
        img->desc.depth[c] = depth;
        img->desc.dx[c] = img->desc.dy[c] = 1;
    }
    if (img_alloc(img)) {
        img_free(img);
        return seterr(err, errlen, "%s: out of memory", path);
    }
    /* netpbm: every sample is at most maxval. One above it cannot be coded at the depth that
     * maxval gives (the library would clamp it), so the file is refused, as read_raw does. */
    const uint8_t *s = b + p;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (int c = 0; c < nc; c++) {
                int32_t v = bps == 1 ? s[0] : (s[0] << 8 | s[1]);
                s += bps;
                if ((uint64_t)v > maxval)
                    return seterr(err, errlen, "%s: sample %d at (%u,%u) is above maxval %llu", path, (int)v, x, y,
                                  (unsigned long long)maxval);
                img_set(img, c, x, y, v);
            }
    return 0;
}

/* ---- PGX: "PG" ML|LM [+|-] depth width height, one whitespace, samples ------------------ */
static int read_pgx1(const char *path, Image *img, int c, char *err, size_t errlen)
{
    size_t n;
    uint8_t *b = slurp(path, &n, err, errlen);
    if (!b)
        return -1;
    int ret = -1;
    size_t p = 2;
    uint64_t depth, w, h;
    int big, sgn = 0;
    if (n < 2 || b[0] != 'P' || b[1] != 'G') {
        seterr(err, errlen, "%s: not a PGX file", path);
        goto done;
    }
    while (p < n && b[p] == ' ')
        p++;
    if (p + 2 > n || !((b[p] == 'M' && b[p + 1] == 'L') || (b[p] == 'L' && b[p + 1] == 'M'))) {
        seterr(err, errlen, "%s: malformed PGX header (byte order must be ML or LM)", path);
        goto done;
    }
    big = b[p] == 'M';
    p += 2;
    while (p < n && b[p] == ' ')
        p++;
    if (p < n && (b[p] == '+' || b[p] == '-'))
        sgn = b[p++] == '-';
    if (hdr_uint(b, n, &p, &depth, 0) || hdr_uint(b, n, &p, &w, 0) || hdr_uint(b, n, &p, &h, 0) ||
        p >= n || !isspace(b[p])) {
        seterr(err, errlen, "%s: malformed PGX header", path);
        goto done;
    }
    p++;
    if (check_dims(w, h, path, err, errlen))
        goto done;
    if (depth < 1 || depth > 16) {
        seterr(err, errlen, "%s: PGX depth %llu unsupported (1..16)", path, (unsigned long long)depth);
        goto done;
    }
    int bps = depth <= 8 ? 1 : 2;
    if (n - p < w * h * (uint64_t)bps) {
        seterr(err, errlen, "%s: truncated PGX: %zu sample bytes, %llu needed", path, n - p,
               (unsigned long long)(w * h * (uint64_t)bps));
        goto done;
    }
    if (c == 0) {
        memset(img, 0, sizeof(*img));
        img->desc.width = (uint32_t)w;
        img->desc.height = (uint32_t)h;
    } else {
        /* Subsampling from the size: the smallest d with ceil(W / d) == w. */
        int dx = 0, dy = 0;
        for (int d = 1; d < 256 && !dx; d++)
            if ((img->desc.width + (uint32_t)d - 1) / (uint32_t)d == w)
                dx = d;
        for (int d = 1; d < 256 && !dy; d++)
            if ((img->desc.height + (uint32_t)d - 1) / (uint32_t)d == h)
                dy = d;
        if (!dx || !dy) {
            seterr(err, errlen, "%s: %llux%llu is no subsampling of %ux%u", path, (unsigned long long)w,
                   (unsigned long long)h, img->desc.width, img->desc.height);
            goto done;
        }
        img->desc.dx[c] = dx;
        img->desc.dy[c] = dy;
    }
    if (c == 0)
        img->desc.dx[0] = img->desc.dy[0] = 1;
    img->desc.depth[c] = (int)depth;
    img->desc.is_signed[c] = sgn;
    img->desc.nb_comps = c + 1;
    img->w[c] = (uint32_t)w;
    img->h[c] = (uint32_t)h;
    img->plane[c] = calloc((size_t)(w * h) + 1, (size_t)bps);
    if (!img->plane[c]) {
        seterr(err, errlen, "%s: out of memory", path);
        goto done;
    }
    /* Samples are stored in bps bytes, two's complement when signed; one outside the declared
     * depth cannot be coded at that depth (the library would clamp it): refused, as in read_raw. */
    const int32_t lo = sgn ? -(1 << (depth - 1)) : 0;
    const int32_t hi = sgn ? (1 << (depth - 1)) - 1 : (1 << depth) - 1;
    const uint8_t *s = b + p;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            int32_t v = bps == 1 ? s[0] : big ? (s[0] << 8 | s[1]) : (s[1] << 8 | s[0]);
            s += bps;
            if (sgn && v >= 1 << (8 * bps - 1))
                v -= 1 << (8 * bps);
            if (v < lo || v > hi) {
                seterr(err, errlen, "%s: sample %d at (%u,%u) is outside the %s %d-bit range %d..%d", path,
                       (int)v, x, y, sgn ? "signed" : "unsigned", (int)depth, (int)lo, (int)hi);
                goto done;
            }
            img_set(img, c, x, y, v);
        }
    ret = 0;
done:
    free(b);
    return ret;
}

static int read_pgx(const char *path, Image *img, char *err, size_t errlen)
{
    if (read_pgx1(path, img, 0, err, errlen)) {
        img_free(img);
        return -1;
    }
    /* name_0.pgx: also read name_1.pgx... as further components when they exist. */
    size_t len = strlen(path);
    if (len >= 6 && !strcmp(path + len - 6, "_0.pgx")) {
        char *alt = malloc(len + 1);
        if (!alt)
            return 0;
        memcpy(alt, path, len + 1);
        for (int c = 1; c < J2KC_MAX_COMPS; c++) {
            alt[len - 5] = (char)('0' + c);
            FILE *f = fopen(alt, "rb");
            if (!f)
                break;
            fclose(f);
            if (read_pgx1(alt, img, c, err, errlen)) {
                free(alt);
                img_free(img);
                return -1;
            }
        }
        free(alt);
    }
    return 0;
}

/* ---- raw ------------------------------------------------------------------------------ */
int img_parse_raw(const char *spec, RawFormat *rf, char *err, size_t errlen)
{
    memset(rf, 0, sizeof(*rf));
    const char *fmt = spec;
    const char *colon = strchr(spec, ':');
    if (colon) {
        char *end;
        unsigned long w = strtoul(spec, &end, 10);
        if (end == spec || (*end != 'x' && *end != 'X'))
            return seterr(err, errlen, "raw '%s': expected WxH:FMT", spec);
        const char *hs = end + 1;
        unsigned long h = strtoul(hs, &end, 10);
        if (end == hs || end != colon)
            return seterr(err, errlen, "raw '%s': expected WxH:FMT", spec);
        if (!w || !h || w > IMG_MAX_DIM || h > IMG_MAX_DIM)
            return seterr(err, errlen, "raw '%s': size %lux%lu out of range (1..%u)", spec, w, h, IMG_MAX_DIM);
        rf->width = (uint32_t)w;
        rf->height = (uint32_t)h;
        fmt = colon + 1;
    }
    /* family + optional depth + optional le/be */
    char base[32];
    size_t bl = 0;
    while (fmt[bl] && !isdigit((unsigned char)fmt[bl]) && bl < sizeof(base) - 1) {
        base[bl] = fmt[bl];
        bl++;
    }
    base[bl] = 0;
    const char *rest = fmt + bl;
    /* yuv420p etc: digits belong to the family name */
    int depth = 8;
    char fam[32];
    snprintf(fam, sizeof(fam), "%s", base);
    if (!strcmp(base, "yuv")) {
        if (strlen(rest) < 4 || rest[3] != 'p')
            return seterr(err, errlen, "raw format '%s' unknown", fmt);
        snprintf(fam, sizeof(fam), "yuv%.3sp", rest);
        rest += 4;
    } else if (!strcmp(base, "rgb") || !strcmp(base, "xyz") || !strcmp(base, "ya") || !strcmp(base, "rgba")) {
        /* rgb24 / rgb48le / xyz12le / ya8 / ya16le / rgba / rgba64le */
        snprintf(fam, sizeof(fam), "%s", base);
    }
    if (isdigit((unsigned char)*rest)) {
        char *end;
        depth = (int)strtol(rest, &end, 10);
        rest = end;
    }
    int be = 0;
    if (!strcmp(rest, "be"))
        be = 1;
    else if (*rest && strcmp(rest, "le"))
        return seterr(err, errlen, "raw format '%s' unknown", fmt);
    rf->order[0] = 0; rf->order[1] = 1; rf->order[2] = 2; rf->order[3] = 3;
    if (!strcmp(fam, "gray")) {
        rf->nb_comps = 1;
    } else if (!strcmp(fam, "yuv420p") || !strcmp(fam, "yuv422p") || !strcmp(fam, "yuv444p") ||
               !strcmp(fam, "yuv440p") || !strcmp(fam, "yuv411p")) {
        rf->nb_comps = 3;
        if (!strcmp(fam, "yuv422p")) rf->log2_dx = 1;
        if (!strcmp(fam, "yuv420p")) rf->log2_dx = rf->log2_dy = 1;
        if (!strcmp(fam, "yuv440p")) rf->log2_dy = 1;
        if (!strcmp(fam, "yuv411p")) rf->log2_dx = 2;
    } else if (!strcmp(fam, "rgbp")) {
        rf->nb_comps = 3;
    } else if (!strcmp(fam, "gbrp")) {
        rf->nb_comps = 3;
        rf->order[0] = 1; rf->order[1] = 2; rf->order[2] = 0;   /* planes G, B, R */
    } else if (!strcmp(fam, "rgb")) {
        rf->nb_comps = 3;
        rf->packed = 1;
        if (depth == 24) depth = 8;
        else if (depth == 48) depth = 16;
        else return seterr(err, errlen, "raw format '%s' unknown (rgb24, rgb48le)", fmt);
    } else if (!strcmp(fam, "ya")) {
        /* ya8 / ya16le: gray + alpha, interleaved */
        rf->nb_comps = 2;
        rf->packed = 1;
        if (depth != 8 && depth != 16)
            return seterr(err, errlen, "raw format '%s' unknown (ya8, ya16le)", fmt);
    } else if (!strcmp(fam, "rgba")) {
        /* rgba (8-bit) / rgba64le: interleaved */
        rf->nb_comps = 4;
        rf->packed = 1;
        if (depth == 64) depth = 16;
        else if (!*rest && depth == 8) depth = 8;
        else return seterr(err, errlen, "raw format '%s' unknown (rgba, rgba64le)", fmt);
    } else if (!strcmp(fam, "gbrap")) {
        rf->nb_comps = 4;
        rf->order[0] = 1; rf->order[1] = 2; rf->order[2] = 0; rf->order[3] = 3;
    } else if (!strcmp(fam, "xyz")) {
        rf->nb_comps = 3;
        rf->packed = 1;
        if (depth != 12)
            return seterr(err, errlen, "raw format '%s' unknown (xyz12le)", fmt);
        rf->shift = 4;
    } else {
        return seterr(err, errlen, "raw format '%s' unknown (gray, yuv420p, yuv422p, yuv444p, rgbp, gbrp, gbrap, rgb24, rgb48le, rgba, rgba64le, ya8, ya16le, xyz12le with optional depth 9..16 and le/be)", fmt);
    }
    if (depth < 1 || depth > 16)
        return seterr(err, errlen, "raw format '%s': depth %d unsupported", fmt, depth);
    if (depth > 8 && !*rest && !rf->packed)
        be = 0; /* "gray16" without suffix: little-endian like FFmpeg's native */
    rf->depth = depth;
    rf->bytes = (depth > 8 || rf->shift) ? 2 : 1;
    rf->big_endian = be;
    return 0;
}

static void raw_plane_dims(const RawFormat *rf, int c, uint32_t *w, uint32_t *h)
{
    int sx = (c == 1 || c == 2) ? rf->log2_dx : 0, sy = (c == 1 || c == 2) ? rf->log2_dy : 0;
    *w = (rf->width + (1u << sx) - 1) >> sx;
    *h = (rf->height + (1u << sy) - 1) >> sy;
}

static int read_raw(const char *path, const RawFormat *rf, Image *img, char *err, size_t errlen)
{
    if (!rf->width || !rf->height)
        return seterr(err, errlen, "raw input needs WxH:FMT");
    size_t n;
    uint8_t *b = slurp(path, &n, err, errlen);
    if (!b)
        return -1;
    uint64_t need = 0;
    for (int c = 0; c < rf->nb_comps; c++) {
        uint32_t w, h;
        raw_plane_dims(rf, c, &w, &h);
        need += (uint64_t)w * h * (uint64_t)rf->bytes;
    }
    if (n < need) {
        free(b);
        return seterr(err, errlen, "%s: truncated raw frame: %zu bytes, %llu needed for %ux%u", path, n,
                      (unsigned long long)need, rf->width, rf->height);
    }
    /* one frame exactly: more bytes mean a wrong size or format, or several frames, of which
     * only the first would be coded */
    if (n > need) {
        free(b);
        return seterr(err, errlen, "%s: %zu bytes, but one %ux%u frame is %llu (raw input must hold exactly one frame)",
                      path, n, rf->width, rf->height, (unsigned long long)need);
    }
    memset(img, 0, sizeof(*img));
    img->desc.nb_comps = rf->nb_comps;
    img->desc.width = rf->width;
    img->desc.height = rf->height;
    for (int c = 0; c < rf->nb_comps; c++) {
        img->desc.depth[c] = rf->depth;
        img->desc.dx[c] = 1 << ((c == 1 || c == 2) ? rf->log2_dx : 0);
        img->desc.dy[c] = 1 << ((c == 1 || c == 2) ? rf->log2_dy : 0);
    }
    if (img_alloc(img)) {
        free(b);
        img_free(img);
        return seterr(err, errlen, "%s: out of memory", path);
    }
    const uint8_t *s = b;
    int bad = 0;
    int32_t maxv = (int32_t)((1u << rf->depth) - 1);
    for (int slot = 0; slot < (rf->packed ? 1 : rf->nb_comps); slot++) {
        uint32_t w, h;
        raw_plane_dims(rf, rf->packed ? 0 : slot, &w, &h);
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++)
                for (int k = 0; k < (rf->packed ? rf->nb_comps : 1); k++) {
                    int32_t v = rf->bytes == 1 ? s[0] : rf->big_endian ? (s[0] << 8 | s[1]) : (s[1] << 8 | s[0]);
                    s += rf->bytes;
                    v >>= rf->shift;
                    if (v > maxv)
                        bad = 1;
                    img_set(img, rf->order[rf->packed ? k : slot], x, y, v);
                }
    }
    free(b);
    if (bad) {
        img_free(img);
        return seterr(err, errlen, "%s: sample above %d-bit range (wrong pixel format or byte order?)", path,
                      rf->depth);
    }
    return 0;
}

int img_read(const char *path, const RawFormat *rf, Image *img, char *err, size_t errlen)
{
    memset(img, 0, sizeof(*img));
    if (rf)
        return read_raw(path, rf, img, err, errlen);
    FILE *f = fopen(path, "rb");
    if (!f)
        return seterr(err, errlen, "%s: %s", path, strerror(errno));
    uint8_t magic[2] = { 0, 0 };
    size_t got = fread(magic, 1, 2, f);
    fclose(f);
    if (got == 2 && magic[0] == 'P' && magic[1] == 'G')
        return read_pgx(path, img, err, errlen);
    if (got == 2 && magic[0] == 'P' && (magic[1] == '5' || magic[1] == '6')) {
        size_t n;
        uint8_t *b = slurp(path, &n, err, errlen);
        if (!b)
            return -1;
        int r = read_pnm(path, b, n, img, err, errlen);
        free(b);
        if (r)
            img_free(img);
        return r;
    }
    return seterr(err, errlen, "%s: unknown image format (PNM P5/P6, PGX; raw needs --raw WxH:FMT)", path);
}

/* ---- writers -------------------------------------------------------------------------- */
static int write_file(const char *path, const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
                      char *err, size_t errlen)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return seterr(err, errlen, "%s: %s", path, strerror(errno));
    int ok = fwrite(a, 1, an, f) == an && (!bn || fwrite(b, 1, bn, f) == bn);
    ok &= fclose(f) == 0;
    return ok ? 0 : seterr(err, errlen, "%s: write error", path);
}

int img_write_pnm(const char *path, const Image *img, char *err, size_t errlen)
{
    const J2kcImageDesc *d = &img->desc;
    if (d->nb_comps != 1 && d->nb_comps != 3)
        return seterr(err, errlen, "PNM needs 1 or 3 components");
    for (int c = 0; c < d->nb_comps; c++)
        if (d->dx[c] != 1 || d->dy[c] != 1 || d->depth[c] != d->depth[0] || d->is_signed[c])
            return seterr(err, errlen, "PNM needs equal unsigned unsubsampled components");
    char hdr[64];
    int hl = snprintf(hdr, sizeof(hdr), "P%c\n%u %u\n%u\n", d->nb_comps == 1 ? '5' : '6', d->width,
                      d->height, (1u << d->depth[0]) - 1);
    int bps = d->depth[0] > 8 ? 2 : 1;
    size_t n = (size_t)d->width * d->height * (size_t)d->nb_comps * (size_t)bps;
    uint8_t *buf = malloc(n + 1), *s = buf;
    if (!buf)
        return seterr(err, errlen, "out of memory");
    for (uint32_t y = 0; y < d->height; y++)
        for (uint32_t x = 0; x < d->width; x++)
            for (int c = 0; c < d->nb_comps; c++) {
                int32_t v = img_get(img, c, x, y);
                if (bps == 2)
                    *s++ = (uint8_t)(v >> 8);
                *s++ = (uint8_t)v;
            }
    int r = write_file(path, (const uint8_t *)hdr, (size_t)hl, buf, n, err, errlen);
    free(buf);
    return r;
}

int img_write_pgx(const char *pattern, const Image *img, char *err, size_t errlen)
{
    for (int c = 0; c < img->desc.nb_comps; c++) {
        char path[4096], hdr[64];
        snprintf(path, sizeof(path), pattern, c);
        int depth = img->desc.depth[c];
        int hl = snprintf(hdr, sizeof(hdr), "PG ML %c %d %u %u\n", img->desc.is_signed[c] ? '-' : '+',
                          depth, img->w[c], img->h[c]);
        int bps = depth > 8 ? 2 : 1;
        size_t n = (size_t)img->w[c] * img->h[c] * (size_t)bps;
        uint8_t *buf = malloc(n + 1), *s = buf;
        if (!buf)
            return seterr(err, errlen, "out of memory");
        for (uint32_t y = 0; y < img->h[c]; y++)
            for (uint32_t x = 0; x < img->w[c]; x++) {
                int32_t v = img_get(img, c, x, y);
                if (bps == 2)
                    *s++ = (uint8_t)(v >> 8);
                *s++ = (uint8_t)v;
            }
        int r = write_file(path, (const uint8_t *)hdr, (size_t)hl, buf, n, err, errlen);
        free(buf);
        if (r)
            return r;
    }
    return 0;
}

int img_write_raw(const char *path, const Image *img, const RawFormat *rf, char *err, size_t errlen)
{
    if (rf->nb_comps != img->desc.nb_comps)
        return seterr(err, errlen, "raw format has %d components, image %d", rf->nb_comps, img->desc.nb_comps);
    size_t n = 0;
    for (int c = 0; c < rf->nb_comps; c++)
        n += (size_t)img->w[c] * img->h[c] * (size_t)rf->bytes;
    uint8_t *buf = malloc(n + 1), *s = buf;
    if (!buf)
        return seterr(err, errlen, "out of memory");
    for (int slot = 0; slot < (rf->packed ? 1 : rf->nb_comps); slot++) {
        int c0 = rf->order[slot];
        for (uint32_t y = 0; y < img->h[c0]; y++)
            for (uint32_t x = 0; x < img->w[c0]; x++)
                for (int k = 0; k < (rf->packed ? rf->nb_comps : 1); k++) {
                    int c = rf->order[rf->packed ? k : slot];
                    uint32_t v = (uint32_t)img_get(img, c, x, y) << rf->shift;
                    if (rf->bytes == 1) {
                        *s++ = (uint8_t)v;
                    } else if (rf->big_endian) {
                        *s++ = (uint8_t)(v >> 8);
                        *s++ = (uint8_t)v;
                    } else {
                        *s++ = (uint8_t)v;
                        *s++ = (uint8_t)(v >> 8);
                    }
                }
    }
    int r = write_file(path, buf, (size_t)(s - buf), NULL, 0, err, errlen);
    free(buf);
    return r;
}
