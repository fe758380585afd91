/*
 * Reference forward and inverse DWT (ISO/IEC 15444-1 Annex F) in plain C: 5/3 on int32,
 * 9/7 on float32, by lifting (dwt_core.h), in the Mallat layout that dwt.h defines.
 *
 * One level d (F.4.2 2D_SD) of the area [u0,u1) x [v0,v1) (resolution NL-d+1, at the top-left
 * of the buffer):
 *   1. vertical pass (VER_SD): strips of J2KI_DWT_STRIP columns are copied into scratch with
 *      their rows de-interleaved (low-pass rows first), lifted row-vector by row-vector (every
 *      step walks whole strip rows, so memory is read sequentially), and copied back;
 *   2. horizontal pass (HOR_SD): each row is de-interleaved into scratch, lifted, copied back.
 * The inverse runs HOR_SR then VER_SR with the steps reversed, like a decoder (F.3.2).
 */
#include <string.h>

#include "hd/dwt.h"
#include "hd/dwt_core.h"

size_t j2ki_dwt_scratch_size(uint32_t w, uint32_t h)
{
    /* one row (horizontal pass) or one strip of h rows (vertical pass), 4-byte samples */
    size_t v = (size_t)J2KI_DWT_STRIP * h;
    return 4 * ((w > v ? w : v) + 1);
}

/* ---- index helpers ----
 * A signal of n samples starting at coordinate i0 with parity p = i0 & 1 has
 * nl = (n + 1 - p) / 2 low-pass samples, at positions p, p+2, ... and nh = n - nl high-pass
 * samples at positions 1-p, 3-p, ... (F.3.7: even coordinates are low-pass). */
static uint32_t nb_low(uint32_t n, int p) { return (n + 1 - (uint32_t)p) / 2; }

/* Copies n 4-byte samples of a row (src) into dst as [L | H]. */
static void deinterleave_row(void *dst, const void *src, uint32_t n, int p)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    uint32_t nl = nb_low(n, p), k;

    for (k = 0; k < nl; k++)
        memcpy(d + 4 * (size_t)k, s + 4 * ((size_t)2 * k + p), 4);
    for (k = 0; k < n - nl; k++)
        memcpy(d + 4 * ((size_t)nl + k), s + 4 * ((size_t)2 * k + 1 - p), 4);
}

/* Copies [L | H] (src) back into natural order (dst). */
static void interleave_row(void *dst, const void *src, uint32_t n, int p)
{
    const unsigned char *s = src;
    unsigned char *d = dst;
    uint32_t nl = nb_low(n, p), k;

    for (k = 0; k < nl; k++)
        memcpy(d + 4 * ((size_t)2 * k + p), s + 4 * (size_t)k, 4);
    for (k = 0; k < n - nl; k++)
        memcpy(d + 4 * ((size_t)2 * k + 1 - p), s + 4 * ((size_t)nl + k), 4);
}

/* ---- 1-D lifting over vectors of `cols` samples ----
 * l: nl vectors, h: nh vectors, each vector `cols` contiguous samples (row stride cols).
 * The horizontal pass calls these with cols = 1, the vertical one with a strip width. */

static inline void lift53_fwd(int32_t *l, int32_t *h, uint32_t nl, uint32_t nh, int p, uint32_t cols)
{
    uint32_t k, c, a, b;

    for (k = 0; k < nh; k++) {
        int32_t *y = h + (size_t)k * cols;
        const int32_t *la, *lb;
        j2ki_dwt_h_nbrs(k, p, nl, &a, &b);
        la = l + (size_t)a * cols;
        lb = l + (size_t)b * cols;
        for (c = 0; c < cols; c++)
            y[c] = j2ki_dwt53_predict(y[c], la[c], lb[c]);
    }
    for (k = 0; k < nl; k++) {
        int32_t *y = l + (size_t)k * cols;
        const int32_t *ha, *hb;
        j2ki_dwt_l_nbrs(k, p, nh, &a, &b);
        ha = h + (size_t)a * cols;
        hb = h + (size_t)b * cols;
        for (c = 0; c < cols; c++)
            y[c] = j2ki_dwt53_update(y[c], ha[c], hb[c]);
    }
}

static inline void lift53_inv(int32_t *l, int32_t *h, uint32_t nl, uint32_t nh, int p, uint32_t cols)
{
    uint32_t k, c, a, b;

    for (k = 0; k < nl; k++) {
        int32_t *y = l + (size_t)k * cols;
        const int32_t *ha, *hb;
        j2ki_dwt_l_nbrs(k, p, nh, &a, &b);
        ha = h + (size_t)a * cols;
        hb = h + (size_t)b * cols;
        for (c = 0; c < cols; c++)
            y[c] = j2ki_dwt53_unupdate(y[c], ha[c], hb[c]);
    }
    for (k = 0; k < nh; k++) {
        int32_t *y = h + (size_t)k * cols;
        const int32_t *la, *lb;
        j2ki_dwt_h_nbrs(k, p, nl, &a, &b);
        la = l + (size_t)a * cols;
        lb = l + (size_t)b * cols;
        for (c = 0; c < cols; c++)
            y[c] = j2ki_dwt53_unpredict(y[c], la[c], lb[c]);
    }
}

/* One 9/7 lifting step on the high-pass vectors (inverse: the undoing step). */
static inline void step97_h(float *h, const float *l, uint32_t nl, uint32_t nh, int p,
                            uint32_t cols, float coef, int inverse)
{
    uint32_t k, c, a, b;

    for (k = 0; k < nh; k++) {
        float *y = h + (size_t)k * cols;
        const float *la, *lb;
        j2ki_dwt_h_nbrs(k, p, nl, &a, &b);
        la = l + (size_t)a * cols;
        lb = l + (size_t)b * cols;
        if (inverse)
            for (c = 0; c < cols; c++)
                y[c] = j2ki_dwt97_unlift(y[c], la[c], lb[c], coef);
        else
            for (c = 0; c < cols; c++)
                y[c] = j2ki_dwt97_lift(y[c], la[c], lb[c], coef);
    }
}

/* One 9/7 lifting step on the low-pass vectors. */
static inline void step97_l(float *l, const float *h, uint32_t nl, uint32_t nh, int p,
                            uint32_t cols, float coef, int inverse)
{
    uint32_t k, c, a, b;

    for (k = 0; k < nl; k++) {
        float *y = l + (size_t)k * cols;
        const float *ha, *hb;
        j2ki_dwt_l_nbrs(k, p, nh, &a, &b);
        ha = h + (size_t)a * cols;
        hb = h + (size_t)b * cols;
        if (inverse)
            for (c = 0; c < cols; c++)
                y[c] = j2ki_dwt97_unlift(y[c], ha[c], hb[c], coef);
        else
            for (c = 0; c < cols; c++)
                y[c] = j2ki_dwt97_lift(y[c], ha[c], hb[c], coef);
    }
}

static void scale97(float *v, size_t n, float s)
{
    size_t i;
    for (i = 0; i < n; i++)
        v[i] = v[i] * s;
}

/* F.4.8.2: four lifting steps, then H *= K, L *= 1/K. */
static inline void lift97_fwd(float *l, float *h, uint32_t nl, uint32_t nh, int p, uint32_t cols)
{
    step97_h(h, l, nl, nh, p, cols, J2KI_DWT97_ALPHA, 0);
    step97_l(l, h, nl, nh, p, cols, J2KI_DWT97_BETA, 0);
    step97_h(h, l, nl, nh, p, cols, J2KI_DWT97_GAMMA, 0);
    step97_l(l, h, nl, nh, p, cols, J2KI_DWT97_DELTA, 0);
    scale97(l, (size_t)nl * cols, J2KI_DWT97_INV_K);
    scale97(h, (size_t)nh * cols, J2KI_DWT97_K);
}

/* F.3.8.2: L *= K, H *= 1/K, then the four steps backwards. */
static inline void lift97_inv(float *l, float *h, uint32_t nl, uint32_t nh, int p, uint32_t cols)
{
    scale97(l, (size_t)nl * cols, J2KI_DWT97_K);
    scale97(h, (size_t)nh * cols, J2KI_DWT97_INV_K);
    step97_l(l, h, nl, nh, p, cols, J2KI_DWT97_DELTA, 1);
    step97_h(h, l, nl, nh, p, cols, J2KI_DWT97_GAMMA, 1);
    step97_l(l, h, nl, nh, p, cols, J2KI_DWT97_BETA, 1);
    step97_h(h, l, nl, nh, p, cols, J2KI_DWT97_ALPHA, 1);
}

/* ---- passes over one level ----
 * `rev` selects the sample type: 1 = int32 / 5/3, 0 = float / 9/7. n >= 2 here; signals of
 * one sample are handled by single_*(). */

static void lift_fwd(void *l, void *h, uint32_t nl, uint32_t nh, int p, uint32_t cols, int rev)
{
    if (rev)
        lift53_fwd(l, h, nl, nh, p, cols);
    else
        lift97_fwd(l, h, nl, nh, p, cols);
}

static void lift_inv(void *l, void *h, uint32_t nl, uint32_t nh, int p, uint32_t cols, int rev)
{
    if (rev)
        lift53_inv(l, h, nl, nh, p, cols);
    else
        lift97_inv(l, h, nl, nh, p, cols);
}

/* 1D_SD / 1D_SR of a one-sample signal at coordinate i0 (F.4.6 / F.3.6): n samples in a row. */
static void single(void *row, uint32_t n, uint32_t i0, int rev, int inverse)
{
    uint32_t i;

    if (!(i0 & 1))
        return;
    for (i = 0; i < n; i++) {
        if (rev) {
            int32_t *v = (int32_t *)row + i;
            *v = inverse ? j2ki_dwt53_single_inv(*v, i0) : j2ki_dwt53_single_fwd(*v, i0);
        } else {
            float *v = (float *)row + i;
            *v = inverse ? j2ki_dwt97_single_inv(*v, i0) : j2ki_dwt97_single_fwd(*v, i0);
        }
    }
}

/* HOR_SD (inverse = 0) or HOR_SR (inverse = 1) of rows [0, h) of width w starting at coordinate u0. */
static void horizontal(unsigned char *buf, ptrdiff_t stride, uint32_t w, uint32_t h,
                       uint32_t u0, int rev, int inverse, unsigned char *scratch)
{
    int p = (int)(u0 & 1);
    uint32_t nl = nb_low(w, p), y;

    for (y = 0; y < h; y++) {
        unsigned char *row = buf + (size_t)y * (size_t)stride * 4;
        if (w == 1) {
            single(row, 1, u0, rev, inverse);
            continue;
        }
        if (!inverse) {
            deinterleave_row(scratch, row, w, p);
            lift_fwd(scratch, scratch + 4 * (size_t)nl, nl, w - nl, p, 1, rev);
            memcpy(row, scratch, 4 * (size_t)w);
        } else {
            lift_inv(row, row + 4 * (size_t)nl, nl, w - nl, p, 1, rev);
            interleave_row(scratch, row, w, p);
            memcpy(row, scratch, 4 * (size_t)w);
        }
    }
}

/* VER_SD / VER_SR of columns [0, w) of height h starting at coordinate v0, by strips. */
static void vertical(unsigned char *buf, ptrdiff_t stride, uint32_t w, uint32_t h,
                     uint32_t v0, int rev, int inverse, unsigned char *scratch)
{
    int p = (int)(v0 & 1);
    uint32_t nl = nb_low(h, p), x0, y;
    size_t rs = (size_t)stride * 4;

    if (h == 1) {
        single(buf, w, v0, rev, inverse);
        return;
    }
    for (x0 = 0; x0 < w; x0 += J2KI_DWT_STRIP) {
        uint32_t cw = w - x0 < J2KI_DWT_STRIP ? w - x0 : J2KI_DWT_STRIP;
        size_t vb = 4 * (size_t)cw;          /* bytes of one strip row */
        unsigned char *col = buf + 4 * (size_t)x0;

        if (!inverse) {
            /* row y (coordinate v0 + y) goes to L(k) or H(k) of the scratch strip */
            for (y = 0; y < h; y++) {
                uint32_t dst = ((y + (uint32_t)p) & 1) ? nl + (y - (1 - (uint32_t)p)) / 2 : (y - (uint32_t)p) / 2;
                memcpy(scratch + dst * vb, col + y * rs, vb);
            }
            lift_fwd(scratch, scratch + nl * vb, nl, h - nl, p, cw, rev);
            for (y = 0; y < h; y++)
                memcpy(col + y * rs, scratch + y * vb, vb);
        } else {
            for (y = 0; y < h; y++)
                memcpy(scratch + y * vb, col + y * rs, vb);
            lift_inv(scratch, scratch + nl * vb, nl, h - nl, p, cw, rev);
            for (y = 0; y < h; y++) {
                uint32_t src = ((y + (uint32_t)p) & 1) ? nl + (y - (1 - (uint32_t)p)) / 2 : (y - (uint32_t)p) / 2;
                memcpy(col + y * rs, scratch + src * vb, vb);
            }
        }
    }
}

/* Extent of the area level d transforms: [ceil(x0 / 2^(d-1)), ceil(x1 / 2^(d-1))) (B-14). */
static void level_area(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, int d,
                       uint32_t *u0, uint32_t *v0, uint32_t *w, uint32_t *h)
{
    *u0 = j2ki_ceil_div_pow2(x0, d - 1);
    *v0 = j2ki_ceil_div_pow2(y0, d - 1);
    *w  = j2ki_ceil_div_pow2(x1, d - 1) - *u0;
    *h  = j2ki_ceil_div_pow2(y1, d - 1) - *v0;
}

static void dwt_fwd(void *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                    int nb_levels, void *scratch, int rev)
{
    int d;

    for (d = 1; d <= nb_levels && d <= J2KI_MAX_LEVELS; d++) {
        uint32_t u0, v0, w, h;
        level_area(x0, y0, x1, y1, d, &u0, &v0, &w, &h);
        if (!w || !h)
            break;
        vertical(buf, stride, w, h, v0, rev, 0, scratch);
        horizontal(buf, stride, w, h, u0, rev, 0, scratch);
    }
}

static void dwt_inv(void *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                    int nb_levels, void *scratch, int rev)
{
    int d;

    for (d = j2ki_imin(nb_levels, J2KI_MAX_LEVELS); d >= 1; d--) {
        uint32_t u0, v0, w, h;
        level_area(x0, y0, x1, y1, d, &u0, &v0, &w, &h);
        if (!w || !h)
            continue;
        horizontal(buf, stride, w, h, u0, rev, 1, scratch);
        vertical(buf, stride, w, h, v0, rev, 1, scratch);
    }
}

void j2ki_dwt_level_size(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, int d, uint32_t *w, uint32_t *h)
{
    uint32_t u0, v0;
    if (d < 1 || d > J2KI_MAX_LEVELS) {
        *w = *h = 0;
        return;
    }
    level_area(x0, y0, x1, y1, d, &u0, &v0, w, h);
}

void j2ki_dwt_fwd_ver_ref(void *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                          int d, uint32_t col0, uint32_t col1, int rev, void *scratch)
{
    uint32_t u0, v0, w, h;
    level_area(x0, y0, x1, y1, d, &u0, &v0, &w, &h);
    if (col1 > w)
        col1 = w;
    if (col0 >= col1 || !h)
        return;
    /* col0 is a multiple of J2KI_DWT_STRIP, so the strips are those of the whole level's pass */
    vertical((unsigned char *)buf + 4 * (size_t)col0, stride, col1 - col0, h, v0, rev, 0, scratch);
}

void j2ki_dwt_fwd_hor_ref(void *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                          int d, uint32_t row0, uint32_t row1, int rev, void *scratch)
{
    uint32_t u0, v0, w, h;
    level_area(x0, y0, x1, y1, d, &u0, &v0, &w, &h);
    if (row1 > h)
        row1 = h;
    if (row0 >= row1 || !w)
        return;
    horizontal((unsigned char *)buf + 4 * (size_t)row0 * (size_t)stride, stride, w, row1 - row0, u0, rev, 0,
               scratch);
}

void j2ki_dwt53_fwd_ref(int32_t *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0,
                        uint32_t x1, uint32_t y1, int nb_levels, void *scratch)
{
    dwt_fwd(buf, stride, x0, y0, x1, y1, nb_levels, scratch, 1);
}

void j2ki_dwt97_fwd_ref(float *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0,
                        uint32_t x1, uint32_t y1, int nb_levels, void *scratch)
{
    dwt_fwd(buf, stride, x0, y0, x1, y1, nb_levels, scratch, 0);
}

void j2ki_dwt53_inv_ref(int32_t *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0,
                        uint32_t x1, uint32_t y1, int nb_levels, void *scratch)
{
    dwt_inv(buf, stride, x0, y0, x1, y1, nb_levels, scratch, 1);
}

void j2ki_dwt97_inv_ref(float *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0,
                        uint32_t x1, uint32_t y1, int nb_levels, void *scratch)
{
    dwt_inv(buf, stride, x0, y0, x1, y1, nb_levels, scratch, 0);
}

/*
 * 1-D synthesis norms per level d = 1..32: { low, high } = L2 norms of the impulse responses
 * of d cascaded synthesis stages that start from one low-pass (resp. high-pass) coefficient of
 * level d. Computed offline in double: synthesis taps from an impulse through the inverse
 * lifting steps, their autocorrelations a0, a1, and the exact recursion
 * r_d(z) = a0(z) r_{d-1}(z^2) (r_1 = a0 or a1), norm^2 = r_d[0].
 * A 2-D band's norm is the product of its horizontal and vertical 1-D norms.
 */
static const double synth_norm_53[J2KI_MAX_LEVELS][2] = {
    { 1.2247448713915889, 0.84779124789065852 },
    { 1.6583123951776999, 0.96014321848357598 },
    { 2.318404623873926, 1.2593401049756179 },
    { 3.2691742076555053, 1.7444107171191079 },
    { 4.6199296531440819, 2.4538713036750726 },
    { 6.5323713152269596, 3.4656517695088755 },
    { 9.2377452606141937, 4.8995276398597856 },
    { 13.063995129744958, 6.9283970402160842 },
    { 18.475226233391567, 9.7980274940131444 },
    { 26.127896819061039, 13.856430687111265 },
    { 36.950419430552479, 19.595926507653559 },
    { 52.255781958046278, 27.712815949424549 },
    { 73.900834731574164, 39.191836955204586 },
    { 104.51156245608291, 55.425626220744405 },
    { 147.80166894695697, 78.383671902895912 },
    { 209.0231247296646, 110.85125173172568 },
    { 295.60333782939, 156.76734355485269 },
    { 418.04624943651658, 221.70250337473098 },
    { 591.20667565071449, 313.53468707833798 },
    { 836.09249887018154, 443.40500673837192 },
    { 1182.4133513004208, 627.06937415275502 },
    { 1672.1849977400066, 886.81001347535755 },
    { 2364.8267026007156, 1254.1387483050198 },
    { 3344.369995479969, 1773.6200269505418 },
    { 4729.6534052014149, 2508.2774966099782 },
    { 6688.7399909599317, 3547.2400539010619 },
    { 9459.306810402828, 5016.5549932199492 },
    { 13377.479981919863, 7094.480107802121 },
    { 18918.613620805656, 10033.109986439897 },
    { 26754.959963839723, 14188.960215604242 },
    { 37837.227241611312, 20066.219972879793 },
    { 53509.919927679446, 28377.920431208484 },
};

static const double synth_norm_97[J2KI_MAX_LEVELS][2] = {
    { 1.4021081679297438, 0.72126138250807592 },
    { 2.0303718560818007, 0.9834713041227896 },
    { 2.9011625562785763, 1.4419624041394556 },
    { 4.1152851751758419, 2.0737604196716712 },
    { 5.8245108637728888, 2.9473248765339299 },
    { 8.2387599345726539, 4.1735894589296194 },
    { 11.65195464792132, 5.9043023275524984 },
    { 16.478560647064828, 8.3506390207825802 },
    { 23.304277644461319, 11.809832851612663 },
    { 32.957251561375145, 16.701712755430105 },
    { 46.608601348779793, 23.619819444082378 },
    { 65.914519407688786, 33.403479870837067 },
    { 93.217208455184718, 47.239658107726981 },
    { 131.82904085100881, 66.806966536853466 },
    { 186.43441763007493, 94.479318617916576 },
    { 263.65808195647327, 133.61393392310669 },
    { 372.86883535011538, 188.95863753614225 },
    { 527.31616394475679, 267.22786795239 },
    { 745.73767071148097, 377.91727510982548 },
    { 1054.6323278934963, 534.45573591805532 },
    { 1491.4753414243773, 755.83455022434805 },
    { 2109.2646557875032, 1068.9114718377766 },
    { 2982.9506828489498, 1511.6691004492925 },
    { 4218.5293115750956, 2137.8229436757742 },
    { 5965.9013656979596, 3023.3382008986778 },
    { 8437.0586231502548, 4275.6458873516031 },
    { 11931.802731395999, 6046.6764017974056 },
    { 16874.117246300615, 8551.2917747032643 },
    { 23863.605462792151, 12093.352803594891 },
    { 33748.234492601448, 17102.583549406641 },
    { 47727.210925584615, 24186.705607189939 },
    { 67496.468985203333, 34205.167098813501 },
};

double j2ki_dwt_synthesis_norm(int reversible, int level, int orient)
{
    const double (*t)[2] = reversible ? synth_norm_53 : synth_norm_97;
    double hor, ver;

    if (level <= 0)
        return 1.0;
    if (level > J2KI_MAX_LEVELS)
        level = J2KI_MAX_LEVELS;
    /* orient: 0 LL, 1 HL (high horizontally), 2 LH (high vertically), 3 HH */
    hor = t[level - 1][(orient & 1) ? 1 : 0];
    ver = t[level - 1][(orient & 2) ? 1 : 0];
    return hor * ver;
}
