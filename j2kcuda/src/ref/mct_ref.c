/*
 * Reference input load, DC level shift (G.1.2) and component transforms (Annex G: RCT G.2,
 * ICT G.3). The per-sample maths is in mct.h, shared with the CUDA kernels.
 */
#include <string.h>

#include "hd/mct.h"

void j2ki_load_comp_ref(int32_t *dst, uint32_t w, uint32_t h, const J2kcFrame *f, int c,
                        uint32_t x0, uint32_t y0, int depth, int is_signed)
{
    const unsigned char *base = f->data[c];
    ptrdiff_t stride = f->stride[c];
    size_t step = f->step[c] > 1 ? (size_t)f->step[c] : 1;
    int shift = f->shift[c];
    uint32_t x, y;

    for (y = 0; y < h; y++) {
        const unsigned char *row = base + (ptrdiff_t)(y0 + y) * stride;
        int32_t *d = dst + (size_t)y * w;

        if (depth <= 8) {
            if (is_signed) {
                const int8_t *s = (const int8_t *)row + (size_t)x0 * step;
                for (x = 0; x < w; x++)
                    d[x] = j2ki_input_sample(s[x * step], shift, depth, 1);
            } else {
                const uint8_t *s = row + (size_t)x0 * step;
                for (x = 0; x < w; x++)
                    d[x] = j2ki_input_sample(s[x * step], shift, depth, 0);
            }
        } else {
            /* 16-bit containers: read through memcpy, rows need not be 2-byte aligned */
            if (is_signed) {
                for (x = 0; x < w; x++) {
                    int16_t v;
                    memcpy(&v, row + 2 * ((size_t)x0 + x) * step, 2);
                    d[x] = j2ki_input_sample(v, shift, depth, 1);
                }
            } else {
                for (x = 0; x < w; x++) {
                    uint16_t v;
                    memcpy(&v, row + 2 * ((size_t)x0 + x) * step, 2);
                    d[x] = j2ki_input_sample(v, shift, depth, 0);
                }
            }
        }
    }
}

void j2ki_rct_fwd_ref(int32_t *c0, int32_t *c1, int32_t *c2, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        int32_t y, u, v;
        j2ki_rct_fwd_sample(c0[i], c1[i], c2[i], &y, &u, &v);
        c0[i] = y;
        c1[i] = u;
        c2[i] = v;
    }
}

void j2ki_int_to_float_ref(void *buf, size_t n)
{
    unsigned char *p = buf;
    size_t i;

    /* same 4-byte storage, converted through memcpy (no type-punned lvalues) */
    for (i = 0; i < n; i++) {
        int32_t v;
        float f;
        memcpy(&v, p + 4 * i, 4);
        f = (float)v;                   /* exact: |v| < 2^24 for depths <= 16 (+ RCT bit) */
        memcpy(p + 4 * i, &f, 4);
    }
}

void j2ki_ict_fwd_ref(float *c0, float *c1, float *c2, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        float y, cb, cr;
        j2ki_ict_fwd_sample(c0[i], c1[i], c2[i], &y, &cb, &cr);
        c0[i] = y;
        c1[i] = cb;
        c2[i] = cr;
    }
}

double j2ki_mct_synthesis_weight2(int reversible, int c)
{
    /* columns of the inverse transforms: RCT G-2 without the floor (R, G, B from U: -1/4, -1/4,
     * 3/4; from V: 3/4, -1/4, -1/4), ICT G-6 */
    static const double rct[3][3] = { { 1, 1, 1 }, { -0.25, -0.25, 0.75 }, { 0.75, -0.25, -0.25 } };
    static const double ict[3][3] = { { 1, 1, 1 }, { 0, -0.34413, 1.772 }, { 1.402, -0.71414, 0 } };
    const double *col;

    if (c < 0 || c > 2)
        return 1.0;
    col = reversible ? rct[c] : ict[c];
    return col[0] * col[0] + col[1] * col[1] + col[2] * col[2];
}
