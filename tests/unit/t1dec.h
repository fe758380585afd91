/*
 * Test-only decoders, written from ISO/IEC 15444-1 independently of the encoder headers:
 * the MQ decoder (C.3), the raw (bypass) bit reader (D.6), and a plain tier-1 decoder
 * (D.3, D.5, D.6, D.7) that recomputes every context from the neighbours' states with no
 * flags or lookup tables, and decides segment terminations itself (Table D.9).
 * Past the end of a segment every reader sees 0xFF bytes, as a decoder must (D.4.1).
 */
#ifndef J2KC_T1DEC_H
#define J2KC_T1DEC_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Table C.2, transcribed for the decoder: Qe, NMPS, NLPS, SWITCH */
static const struct { uint16_t qe; uint8_t nmps, nlps, sw; } td_qe[47] = {
    {0x5601, 1, 1, 1},   {0x3401, 2, 6, 0},   {0x1801, 3, 9, 0},   {0x0AC1, 4, 12, 0},
    {0x0521, 5, 29, 0},  {0x0221, 38, 33, 0}, {0x5601, 7, 6, 1},   {0x5401, 8, 14, 0},
    {0x4801, 9, 14, 0},  {0x3801, 10, 14, 0}, {0x3001, 11, 17, 0}, {0x2401, 12, 18, 0},
    {0x1C01, 13, 20, 0}, {0x1601, 29, 21, 0}, {0x5601, 15, 14, 1}, {0x5401, 16, 14, 0},
    {0x5101, 17, 15, 0}, {0x4801, 18, 16, 0}, {0x3801, 19, 17, 0}, {0x3401, 20, 18, 0},
    {0x3001, 21, 19, 0}, {0x2801, 22, 19, 0}, {0x2401, 23, 20, 0}, {0x2201, 24, 21, 0},
    {0x1C01, 25, 22, 0}, {0x1801, 26, 23, 0}, {0x1601, 27, 24, 0}, {0x1401, 28, 25, 0},
    {0x1201, 29, 26, 0}, {0x1101, 30, 27, 0}, {0x0AC1, 31, 28, 0}, {0x09C1, 32, 29, 0},
    {0x08A1, 33, 30, 0}, {0x0521, 34, 31, 0}, {0x0441, 35, 32, 0}, {0x02A1, 36, 33, 0},
    {0x0221, 37, 34, 0}, {0x0141, 38, 35, 0}, {0x0111, 39, 36, 0}, {0x0085, 40, 37, 0},
    {0x0049, 41, 38, 0}, {0x0025, 42, 39, 0}, {0x0015, 43, 40, 0}, {0x0009, 44, 41, 0},
    {0x0005, 45, 42, 0}, {0x0001, 45, 43, 0}, {0x5601, 46, 46, 0},
};

typedef struct { uint8_t idx, mps; } TdCtx;

typedef struct TdMq {
    const uint8_t *buf;
    uint32_t bp, end;
    uint32_t a, c;
    int ct;
    int raw_last;        /* raw reader: previous byte */
} TdMq;

static int td_byte(const TdMq *d, uint32_t i) { return i < d->end ? d->buf[i] : 0xFF; }

/* BYTEIN, C.3.4 (Figure C.19) */
static void td_bytein(TdMq *d)
{
    if (td_byte(d, d->bp) == 0xFF) {
        if (td_byte(d, d->bp + 1) > 0x8F) {
            d->c += 0xFF00;
            d->ct = 8;
        } else {
            d->bp++;
            d->c += (uint32_t)td_byte(d, d->bp) << 9;
            d->ct = 7;
        }
    } else {
        d->bp++;
        d->c += (uint32_t)td_byte(d, d->bp) << 8;
        d->ct = 8;
    }
}

/* INITDEC, C.3.5 */
static void td_mq_init(TdMq *d, const uint8_t *buf, uint32_t start, uint32_t end)
{
    d->buf = buf;
    d->bp = start;
    d->end = end;
    d->c = (uint32_t)td_byte(d, d->bp) << 16;
    td_bytein(d);
    d->c <<= 7;
    d->ct -= 7;
    d->a = 0x8000;
}

static void td_renormd(TdMq *d)
{
    do {
        if (d->ct == 0)
            td_bytein(d);
        d->a <<= 1;
        d->c <<= 1;
        d->ct--;
    } while (!(d->a & 0x8000));
}

/* DECODE, C.3.2: the encoder puts the LPS sub-interval (size Qe) at the bottom unless the
 * conditional exchange swapped the two */
static int td_mq_decode(TdMq *d, TdCtx *cx)
{
    uint32_t qe = td_qe[cx->idx].qe;
    int dec;
    d->a -= qe;
    if ((d->c >> 16) < qe) {
        if (d->a < qe) {
            dec = cx->mps;
            cx->idx = td_qe[cx->idx].nmps;
        } else {
            dec = !cx->mps;
            if (td_qe[cx->idx].sw)
                cx->mps = !cx->mps;
            cx->idx = td_qe[cx->idx].nlps;
        }
        d->a = qe;
        td_renormd(d);
    } else {
        d->c -= qe << 16;
        if (d->a & 0x8000)
            return cx->mps;
        if (d->a < qe) {
            dec = !cx->mps;
            if (td_qe[cx->idx].sw)
                cx->mps = !cx->mps;
            cx->idx = td_qe[cx->idx].nlps;
        } else {
            dec = cx->mps;
            cx->idx = td_qe[cx->idx].nmps;
        }
        td_renormd(d);
    }
    return dec;
}

static void td_raw_init(TdMq *d, const uint8_t *buf, uint32_t start, uint32_t end)
{
    d->buf = buf;
    d->bp = start;
    d->end = end;
    d->ct = 0;
    d->c = 0;
    d->raw_last = 0;
}

static int td_raw_bit(TdMq *d)
{
    if (d->ct == 0) {
        d->ct = d->raw_last == 0xFF ? 7 : 8;
        d->c = (uint32_t)td_byte(d, d->bp++);
        d->raw_last = (int)d->c;
    }
    d->ct--;
    return (int)((d->c >> d->ct) & 1);
}

/* Table D.7 */
static void td_reset_ctx(TdCtx *cx)
{
    int i;
    for (i = 0; i < 19; i++) {
        cx[i].idx = 0;
        cx[i].mps = 0;
    }
    cx[0].idx = 4;
    cx[17].idx = 3;
    cx[18].idx = 46;
}

#ifndef TD_NO_T1
/* ---- tier-1 decoder ---- */

typedef struct TdBlock {
    int w, h, orient, style, bypass_start, numbps;
    /* per sample (w * h): decoded index magnitude, sign, significance, lowest plane known */
    uint32_t *mag;
    uint8_t *neg, *sig, *visit, *refined;
    int *plane;
} TdBlock;

static int td_sig(const TdBlock *b, int x, int y, int cy)
{
    if (x < 0 || y < 0 || x >= b->w || y >= b->h)
        return 0;
    /* D.7 vertically causal: the next stripe does not count */
    if ((b->style & 0x08) && y > cy && y / 4 != cy / 4)
        return 0;
    return b->sig[y * b->w + x];
}

/* sign contribution: 1 positive significant, -1 negative significant, 0 otherwise */
static int td_sgn(const TdBlock *b, int x, int y, int cy)
{
    if (!td_sig(b, x, y, cy))
        return 0;
    return b->neg[y * b->w + x] ? -1 : 1;
}

/* Table D.1 */
static int td_zc(const TdBlock *b, int x, int y)
{
    int h = td_sig(b, x - 1, y, y) + td_sig(b, x + 1, y, y);
    int v = td_sig(b, x, y - 1, y) + td_sig(b, x, y + 1, y);
    int d = td_sig(b, x - 1, y - 1, y) + td_sig(b, x + 1, y - 1, y) +
            td_sig(b, x - 1, y + 1, y) + td_sig(b, x + 1, y + 1, y);
    if (b->orient == 3) {
        int hv = h + v;
        if (d >= 3) return 8;
        if (d == 2) return hv >= 1 ? 7 : 6;
        if (d == 1) return hv >= 2 ? 5 : hv == 1 ? 4 : 3;
        return hv >= 2 ? 2 : hv;
    }
    if (b->orient == 1) {       /* HL: H and V exchanged */
        int t = h;
        h = v;
        v = t;
    }
    if (h == 2) return 8;
    if (h == 1) return v >= 1 ? 7 : d >= 1 ? 6 : 5;
    if (v == 2) return 4;
    if (v == 1) return 3;
    return d >= 2 ? 2 : d;
}

static int td_any_nbr(const TdBlock *b, int x, int y)
{
    int dx, dy;
    for (dy = -1; dy <= 1; dy++)
        for (dx = -1; dx <= 1; dx++)
            if ((dx || dy) && td_sig(b, x + dx, y + dy, y))
                return 1;
    return 0;
}

/* Tables D.2 / D.3 */
static int td_sign(const TdBlock *b, TdMq *d, TdCtx *cx, int x, int y, int raw)
{
    static const int ctxs[3][3] = { {13, 12, 11}, {10, 9, 10}, {11, 12, 13} };  /* [H+1][V+1] */
    static const int xors[3][3] = { {1, 1, 1}, {1, 0, 0}, {0, 0, 0} };
    int h = td_sgn(b, x - 1, y, y) + td_sgn(b, x + 1, y, y);
    int v = td_sgn(b, x, y - 1, y) + td_sgn(b, x, y + 1, y);
    h = h > 1 ? 1 : h < -1 ? -1 : h;
    v = v > 1 ? 1 : v < -1 ? -1 : v;
    if (raw)
        return td_raw_bit(d);
    return td_mq_decode(d, &cx[ctxs[h + 1][v + 1]]) ^ xors[h + 1][v + 1];
}

static void td_becomes_sig(TdBlock *b, int i, int neg, int p)
{
    b->sig[i] = 1;
    b->neg[i] = (uint8_t)neg;
    b->mag[i] |= 1u << p;
}

/* Table D.9 */
static int td_term(const TdBlock *b, int i, int nb_passes)
{
    int k = (i + 2) / 3, type = (i + 2) % 3;
    if ((b->style & 0x04) || i == nb_passes - 1)
        return 1;
    if (!(b->style & 0x01))
        return 0;
    if (type == 1 && k >= b->bypass_start)
        return 1;
    return type == 2 && k + 1 >= b->bypass_start;
}

/**
 * Decodes passes [0, nb_dec) of a block coded with numbps planes (3 numbps - 2 passes in
 * all). seg_end[i] is the end of the data of the segment that holds pass i (only read for
 * the first pass of each segment). Returns 0, or -1 on a SEGMARK mismatch.
 */
static int td_decode(TdBlock *b, const uint8_t *data, const uint32_t *seg_end, int nb_dec)
{
    int n = b->w * b->h, i, x, y, y0;
    int nb_passes = 3 * b->numbps - 2;
    uint32_t start = 0;
    int new_seg = 1;
    TdCtx cx[19];
    TdMq d;
    memset(b->mag, 0, n * sizeof(*b->mag));
    memset(b->neg, 0, n);
    memset(b->sig, 0, n);
    memset(b->visit, 0, n);
    memset(b->refined, 0, n);
    for (i = 0; i < n; i++)
        b->plane[i] = b->numbps;
    td_reset_ctx(cx);
    for (i = 0; i < nb_dec; i++) {
        int k = (i + 2) / 3, type = (i + 2) % 3, p = b->numbps - 1 - k;
        int raw = (b->style & 0x01) && k >= b->bypass_start && type != 2;
        if (i > 0 && (b->style & 0x02))
            td_reset_ctx(cx);
        if (new_seg) {
            if (raw)
                td_raw_init(&d, data, start, seg_end[i]);
            else
                td_mq_init(&d, data, start, seg_end[i]);
            start = seg_end[i];
            new_seg = 0;
        }
        for (y0 = 0; y0 < b->h; y0 += 4) {
            for (x = 0; x < b->w; x++) {
                int y1 = y0 + 4 < b->h ? y0 + 4 : b->h;
                for (y = y0; y < y1; y++) {
                    int j = y * b->w + x;
                    if (type == 0) {
                        if (b->sig[j] || !td_any_nbr(b, x, y))
                            continue;
                        b->visit[j] = 1;
                        b->plane[j] = p;
                        if (raw ? td_raw_bit(&d) : td_mq_decode(&d, &cx[td_zc(b, x, y)]))
                            td_becomes_sig(b, j, td_sign(b, &d, cx, x, y, raw), p);
                    } else if (type == 1) {
                        int c;
                        if (!b->sig[j] || b->visit[j])
                            continue;
                        if (raw) {
                            c = td_raw_bit(&d);
                        } else {
                            int ctx = b->refined[j] ? 16 : td_any_nbr(b, x, y) ? 15 : 14;
                            c = td_mq_decode(&d, &cx[ctx]);
                        }
                        b->mag[j] |= (uint32_t)c << p;
                        b->refined[j] = 1;
                        b->plane[j] = p;
                    } else {
                        if (y == y0 && y1 - y0 == 4) {
                            int r, all = 1;
                            for (r = 0; r < 4; r++) {
                                int jr = (y0 + r) * b->w + x;
                                if (b->sig[jr] || b->visit[jr] || td_any_nbr(b, x, y0 + r))
                                    all = 0;
                            }
                            if (all) {
                                if (!td_mq_decode(&d, &cx[17])) {
                                    for (r = 0; r < 4; r++)
                                        b->plane[(y0 + r) * b->w + x] = p;
                                    break;          /* whole column insignificant */
                                }
                                r = td_mq_decode(&d, &cx[18]) << 1;
                                r |= td_mq_decode(&d, &cx[18]);
                                for (y = y0; y < y0 + r; y++)
                                    b->plane[y * b->w + x] = p;
                                j = y * b->w + x;
                                b->plane[j] = p;
                                td_becomes_sig(b, j, td_sign(b, &d, cx, x, y, 0), p);
                                continue;
                            }
                        }
                        if (b->sig[j] || b->visit[j]) {
                            b->visit[j] = 0;
                            continue;
                        }
                        b->plane[j] = p;
                        if (td_mq_decode(&d, &cx[td_zc(b, x, y)]))
                            td_becomes_sig(b, j, td_sign(b, &d, cx, x, y, 0), p);
                    }
                }
            }
        }
        if (type == 2 && (b->style & 0x20)) {
            int m = td_mq_decode(&d, &cx[18]) << 3;
            m |= td_mq_decode(&d, &cx[18]) << 2;
            m |= td_mq_decode(&d, &cx[18]) << 1;
            m |= td_mq_decode(&d, &cx[18]);
            if (m != 0xA)
                return -1;
        }
        if (td_term(b, i, nb_passes))
            new_seg = 1;
    }
    return 0;
}

static int td_block_alloc(TdBlock *b, int w, int h)
{
    size_t n = (size_t)w * h;
    b->w = w;
    b->h = h;
    b->mag = malloc(n * sizeof(*b->mag));
    b->plane = malloc(n * sizeof(*b->plane));
    b->neg = malloc(n);
    b->sig = malloc(n);
    b->visit = malloc(n);
    b->refined = malloc(n);
    return b->mag && b->plane && b->neg && b->sig && b->visit && b->refined ? 0 : -1;
}

static void td_block_free(TdBlock *b)
{
    free(b->mag);
    free(b->plane);
    free(b->neg);
    free(b->sig);
    free(b->visit);
    free(b->refined);
}

#endif /* TD_NO_T1 */

#endif
