/*
 * Image readers and writers for the command-line tools and the test programs: PNM (P5/P6,
 * maxval up to 65535, 16-bit big-endian), PGX (the JPEG 2000 conformance format, one component
 * per file; name_0.pgx, name_1.pgx... read as one image) and raw planar/packed video frames
 * described by FFmpeg-style pixel format names (yuv420p, yuv422p10le, gray16le, rgb48le...).
 *
 * Samples are kept in memory as one plane per component: uint8_t when depth <= 8, else
 * uint16_t in host order (int8_t/int16_t when signed), rows packed (stride = width * bytes).
 * No library calls: only the J2kcImageDesc type is shared with j2kcuda.h.
 */
#ifndef IMAGEIO_H
#define IMAGEIO_H

#include <stddef.h>
#include <stdint.h>

#include "j2kcuda.h"

typedef struct Image {
    J2kcImageDesc desc;
    uint32_t w[J2KC_MAX_COMPS], h[J2KC_MAX_COMPS];   /* component plane sizes */
    void    *plane[J2KC_MAX_COMPS];
} Image;

/** A raw frame layout parsed from "WxH:FMT". */
typedef struct RawFormat {
    uint32_t width, height;
    int nb_comps;
    int depth;          /* bits per sample */
    int bytes;          /* 1 or 2 per sample */
    int big_endian;
    int packed;         /* 1: interleaved (rgb24, rgb48le), 0: planar */
    int log2_dx, log2_dy; /* chroma subsampling of components 1 and 2 */
    int order[J2KC_MAX_COMPS]; /* component index of each stored plane/slot (gbrp: 1,2,0) */
    int shift;          /* sample value stored << shift (MSB-aligned formats like xyz12) */
} RawFormat;

/** Parses "WxH:FMT" (or "FMT" alone with w = h = 0). Returns 0 or -1 with err filled. */
int img_parse_raw(const char *spec, RawFormat *rf, char *err, size_t errlen);

/**
 * Reads an image: PNM or PGX chosen by content, raw when rf is non-NULL. Returns 0, or -1
 * with a one-line reason in err (and *img left empty).
 */
int img_read(const char *path, const RawFormat *rf, Image *img, char *err, size_t errlen);

/** Allocates the planes for img->desc (w/h computed from the subsampling). */
int img_alloc(Image *img);
void img_free(Image *img);

/** Sample access (host order, sign-extended when signed). */
int32_t img_get(const Image *img, int c, uint32_t x, uint32_t y);
void img_set(Image *img, int c, uint32_t x, uint32_t y, int32_t v);

/** Writers. PNM needs 1 or 3 equal-size components of equal depth. */
int img_write_pnm(const char *path, const Image *img, char *err, size_t errlen);
/** Writes one PGX per component: pattern has one %d (e.g. "out_%d.pgx"). */
int img_write_pgx(const char *pattern, const Image *img, char *err, size_t errlen);
int img_write_raw(const char *path, const Image *img, const RawFormat *rf, char *err, size_t errlen);

#endif /* IMAGEIO_H */
