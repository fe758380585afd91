/*
 * Tier-1 coding of one code-block (ISO/IEC 15444-1 Annex D) as J2KI_HD inline functions:
 * context modelling (D.3), the three coding passes, the code-block style switches (D.6:
 * BYPASS, RESET, TERMALL, VCAUSAL, PTERM, SEGMARK), pass lengths and distortions. The
 * reference coder (t1_ref.c) and the CUDA coder (one thread per code-block) both run
 * j2ki_t1_load() then j2ki_t1_code(), so their output is identical by construction.
 *
 * Sample state: one uint16_t of flags per sample in a padded array of (w + 2) x (h + 2)
 * (stride w + 2, sample (x, y) at (y + 1) * stride + x + 1); the border is never coded, it
 * only absorbs the neighbour updates of edge samples so no update needs a bounds test.
 *   bit  0..7   significance of the 8 neighbours: NW N NE W E SW S SE (zero-coding index)
 *   bit  8..11  sign (1 = negative) of the N, S, W, E neighbours, set with their significance
 *   bit 12      SIG    the sample is significant
 *   bit 13      VISIT  coded by the significance propagation pass of the current bit-plane
 *   bit 14      REF    magnitude refinement already coded once (context 16, Table D.4)
 *   bit 15      NEG    the sample is negative
 * Magnitudes |v| (fractional bits included) sit in a uint32_t array with the same indexing.
 *
 * Tables: the zero-coding contexts of Table D.1 are a 3 x 256 lookup by neighbour bits,
 * generated from the table's rules by macros (J2KI_T1_ZC_INIT) and instantiated like the MQ
 * table in mqc.h: `static const` on the host, `static __constant__` for device code.
 * Sign contexts (Tables D.2, D.3) and refinement contexts (Table D.4) are computed.
 *
 * Bit-plane numbering: the block has numbps magnitude bit-planes p = numbps-1 .. 0 (index
 * bits); plane p is bit s = p + frac_bits of the magnitude. Pass i codes plane
 * k = (i + 2) / 3 counted from the most significant (k = 0: cleanup only), type
 * (i + 2) % 3: 0 significance propagation, 1 magnitude refinement, 2 cleanup.
 *
 * Codeword segments (D.4, Table D.9): pass i ends a segment (passes[i].term = 1) when
 *   - TERMALL is set, or it is the last pass;
 *   - BYPASS: it is a raw refinement pass, or a cleanup pass followed by a raw
 *     significance pass (plane k + 1 >= bypass_start).
 * Raw passes (BYPASS, plane k >= bypass_start, SPP and MRP) are bit-packed without the MQ
 * coder. The code-block's data is the concatenation of its segments; segment j spans
 * [end of segment j-1, passes[last pass of j].rate). The packet header (B.10.7) sends one
 * length per segment that a layer includes: rate(last included pass of the segment) - the
 * previous segment end (or the first included pass's start); j2ki_t1_seg_end() gives the
 * end of the segment holding a pass. Non-terminated passes carry a truncation length that
 * decodes every pass up to them (mqc.h, j2ki_mqc_trunc_len), for cutting a layer there.
 *
 * Distortion (t1.h): with magnitude m (frac_bits fractional bits) and bits above s known,
 * the decoder reconstructs at the middle of the set of magnitudes still possible; in units
 * of half a magnitude step the error is E_s = 2 (m mod 2^s) + 1 - 2^s (odd, exact), and
 * 2m before significance. A pass adds (2m)^2 - E_s^2 per newly significant sample and
 * E_(s+1)^2 - E_s^2 per refined sample. Above s = 18 the g = s - 18 lowest bits are dropped
 * (replaced by their midpoint) so one sample's term stays below 2^40 and a 4096-sample sum
 * below 2^52: the int64 sum converts to double exactly, scaled by ldexp(2g - 2F - 2) to
 * squared index units (relative error of a term above s = 18: about 2^-18). Up to s = 18 it
 * is exact, so with all passes kept the distortions of a reversible block add up to
 * sum(v^2) exactly.
 */
#ifndef J2KI_T1_CORE_H
#define J2KI_T1_CORE_H

#include <stdint.h>
#include <math.h>

#include "j2ki.h"
#include "plan.h"
#include "mqc.h"

#define J2KI_T1_NW     0x0001u
#define J2KI_T1_N      0x0002u
#define J2KI_T1_NE     0x0004u
#define J2KI_T1_W      0x0008u
#define J2KI_T1_E      0x0010u
#define J2KI_T1_SW     0x0020u
#define J2KI_T1_S      0x0040u
#define J2KI_T1_SE     0x0080u
#define J2KI_T1_NEG_N  0x0100u
#define J2KI_T1_NEG_S  0x0200u
#define J2KI_T1_NEG_W  0x0400u
#define J2KI_T1_NEG_E  0x0800u
#define J2KI_T1_SIG    0x1000u
#define J2KI_T1_VISIT  0x2000u
#define J2KI_T1_REF    0x4000u
#define J2KI_T1_NEG    0x8000u
#define J2KI_T1_NBRS   0x00FFu
/* VCAUSAL (D.7): neighbours in the next stripe count as insignificant for the last row */
#define J2KI_T1_VC_MASK ((uint32_t)~(J2KI_T1_SW | J2KI_T1_S | J2KI_T1_SE | J2KI_T1_NEG_S))

#define J2KI_T1_CTX_RL   17
#define J2KI_T1_CTX_UNI  18
#define J2KI_T1_DIST_BITS 18   /* bits below the plane kept exactly in distortion terms */
#define J2KI_T1_MAX_PLANES 31
#define J2KI_T1_MAX_PASSES (3 * J2KI_T1_MAX_PLANES - 2)

/* ---- Table D.1 as rules over the 8 neighbour bits i (layout above) ---- */
#define J2KI_ZB(i, b) (((i) >> (b)) & 1)
#define J2KI_ZH(i) (J2KI_ZB(i, 3) + J2KI_ZB(i, 4))
#define J2KI_ZV(i) (J2KI_ZB(i, 1) + J2KI_ZB(i, 6))
#define J2KI_ZD(i) (J2KI_ZB(i, 0) + J2KI_ZB(i, 2) + J2KI_ZB(i, 5) + J2KI_ZB(i, 7))
/* LL and LH: horizontal neighbours first; HL: the same with H and V exchanged */
#define J2KI_ZC_RULE(h, v, d) ((h) == 2 ? 8 : (h) == 1 ? ((v) ? 7 : (d) ? 6 : 5) : \
                               (v) == 2 ? 4 : (v) == 1 ? 3 : (d) >= 2 ? 2 : (d))
/* HH: diagonal neighbours first, then H + V */
#define J2KI_ZC_RULE_HH(hv, d) ((d) >= 3 ? 8 : (d) == 2 ? ((hv) ? 7 : 6) :           \
                                (d) == 1 ? ((hv) >= 2 ? 5 : (hv) == 1 ? 4 : 3) :       \
                                (hv) >= 2 ? 2 : (hv))
#define J2KI_ZC_LL(i) J2KI_ZC_RULE(J2KI_ZH(i), J2KI_ZV(i), J2KI_ZD(i))
#define J2KI_ZC_HL(i) J2KI_ZC_RULE(J2KI_ZV(i), J2KI_ZH(i), J2KI_ZD(i))
#define J2KI_ZC_HH(i) J2KI_ZC_RULE_HH(J2KI_ZH(i) + J2KI_ZV(i), J2KI_ZD(i))
#define J2KI_R4(M, b)  M((b) + 0), M((b) + 1), M((b) + 2), M((b) + 3)
#define J2KI_R16(M, b) J2KI_R4(M, (b) + 0), J2KI_R4(M, (b) + 4), J2KI_R4(M, (b) + 8), J2KI_R4(M, (b) + 12)
#define J2KI_R64(M, b) J2KI_R16(M, (b) + 0), J2KI_R16(M, (b) + 16), J2KI_R16(M, (b) + 32), J2KI_R16(M, (b) + 48)
#define J2KI_R256(M)   J2KI_R64(M, 0), J2KI_R64(M, 64), J2KI_R64(M, 128), J2KI_R64(M, 192)
/** 3 x 256 zero-coding contexts: [0] LL/LH, [1] HL, [2] HH. */
#define J2KI_T1_ZC_INIT { J2KI_R256(J2KI_ZC_LL), J2KI_R256(J2KI_ZC_HL), J2KI_R256(J2KI_ZC_HH) }

static const uint8_t j2ki_t1_zc_h[3 * 256] = J2KI_T1_ZC_INIT;
#if defined(__CUDACC__)
static __constant__ uint8_t j2ki_t1_zc_d[3 * 256] = J2KI_T1_ZC_INIT;
#endif
#if defined(__CUDA_ARCH__)
#define J2KI_T1_ZC j2ki_t1_zc_d
#else
#define J2KI_T1_ZC j2ki_t1_zc_h
#endif

/** Band orientation (0 LL, 1 HL, 2 LH, 3 HH) -> row of J2KI_T1_ZC. */
J2KI_HD int j2ki_t1_zc_class(int orient) { return orient == 1 ? 1 : orient == 3 ? 2 : 0; }

/** Coder state of one code-block; the arrays are the caller's ((w + 2) * (h + 2) each). */
typedef struct J2kiT1State {
    uint16_t *flags;
    uint32_t *mag;
    int       w, h, stride;
    int       zc_off;        /**< 256 * zero-coding class */
    uint32_t  vc_mask;       /**< mask for the last row of a stripe (all ones without VCAUSAL) */
    uint16_t  ctx[19];       /**< MQ context states (mqc.h) */
    J2kiMqc   mqc;
    J2kiMqcMark marks[J2KI_T1_MAX_PASSES];  /**< registers at non-terminated pass ends */
} J2kiT1State;

/* ---- distortion terms (see the header comment) ---- */

J2KI_HD int j2ki_t1_dist_shift(int s) { return s > J2KI_T1_DIST_BITS ? s - J2KI_T1_DIST_BITS : 0; }

/** Sample with magnitude m < 2^(s+1) becomes significant at bit s. */
J2KI_HD int64_t j2ki_t1_dist_sig(uint32_t m, int s, int g)
{
    int64_t l = (int64_t)(m >> g);
    int64_t t = 2 * l + (g > 0);
    int64_t e = 2 * (l & (((int64_t)1 << (s - g)) - 1)) + 1 - ((int64_t)1 << (s - g));
    return t * t - e * e;
}

/** Significant sample refined at bit s. */
J2KI_HD int64_t j2ki_t1_dist_ref(uint32_t m, int s, int g)
{
    int64_t l = (int64_t)((m & ((2u << s) - 1u)) >> g);
    int64_t eb = 2 * l + 1 - ((int64_t)2 << (s - g));
    int64_t ea = 2 * (l & (((int64_t)1 << (s - g)) - 1)) + 1 - ((int64_t)1 << (s - g));
    return eb * eb - ea * ea;
}

/* ---- context modelling ---- */

/** Sign context (Tables D.2, D.3) from flags f (VCAUSAL mask applied); *xorbit as D.3. */
J2KI_HD int j2ki_t1_sc_ctx(uint32_t f, int *xorbit)
{
    int cn = (int)((f >> 1) & 1) - 2 * (int)((f >> 8) & 1);
    int cs = (int)((f >> 6) & 1) - 2 * (int)((f >> 9) & 1);
    int cw = (int)((f >> 3) & 1) - 2 * (int)((f >> 10) & 1);
    int ce = (int)((f >> 4) & 1) - 2 * (int)((f >> 11) & 1);
    int h = cw + ce, v = cn + cs, x;
    h = h > 1 ? 1 : h < -1 ? -1 : h;
    v = v > 1 ? 1 : v < -1 ? -1 : v;
    x = h < 0 || (h == 0 && v < 0);
    if (x) {
        h = -h;
        v = -v;
    }
    *xorbit = x;
    return h ? 12 + v : 9 + v;
}

/** Refinement context (Table D.4). */
J2KI_HD int j2ki_t1_mr_ctx(uint32_t f)
{
    return (f & J2KI_T1_REF) ? 16 : (f & J2KI_T1_NBRS) ? 15 : 14;
}

/** Makes the sample at fp significant: updates its 8 neighbours' flags (D.3.1). */
J2KI_HD void j2ki_t1_set_sig(uint16_t *fp, int stride, uint32_t neg)
{
    uint32_t n = 0u - neg;   /* all ones when negative */
    fp[-stride - 1] |= (uint16_t)J2KI_T1_SE;
    fp[-stride]     |= (uint16_t)(J2KI_T1_S | (n & J2KI_T1_NEG_S));
    fp[-stride + 1] |= (uint16_t)J2KI_T1_SW;
    fp[-1]          |= (uint16_t)(J2KI_T1_E | (n & J2KI_T1_NEG_E));
    fp[1]           |= (uint16_t)(J2KI_T1_W | (n & J2KI_T1_NEG_W));
    fp[stride - 1]  |= (uint16_t)J2KI_T1_NE;
    fp[stride]      |= (uint16_t)(J2KI_T1_N | (n & J2KI_T1_NEG_N));
    fp[stride + 1]  |= (uint16_t)J2KI_T1_NW;
    fp[0]           |= (uint16_t)J2KI_T1_SIG;
}

/** Sign coding of a sample that just became significant (D.3.2), MQ. */
J2KI_MQC_HOT void j2ki_t1_code_sign(J2kiMqc *m, uint16_t *ctx, uint32_t f)
{
    int xorbit;
    int cx = j2ki_t1_sc_ctx(f, &xorbit);
    j2ki_mqc_encode(m, &ctx[cx], (int)(f >> 15) ^ xorbit);
}

/*
 * Stripe-column tests (a stripe column is the 4 samples of one column in one stripe, D.3).
 * Each is 0x100 when the sample with flags f may have to be coded by the pass and 0 when it
 * certainly has not, without branches, so a whole column is skipped with one test on the
 * OR of its four. They read the flags without the VCAUSAL mask: a column they let through
 * is still decided sample by sample with the mask applied, so being generous is harmless.
 *   SPP: insignificant with a significant neighbour; (f & 0xFF) + 0xFF reaches bit 8
 *        iff a neighbour bit is set, f >> 4 brings SIG (bit 12) to bit 8.
 *   MRP: significant and not coded by this plane's SPP; f >> 5 brings VISIT to bit 8.
 * j2ki_t1_cup_done is the opposite for the cleanup pass: 0x4000 when the sample is already
 * coded in this plane (SIG or VISIT: (f & 0x3000) + 0x3000 reaches bit 14 iff either is set).
 */
J2KI_HD uint32_t j2ki_t1_spp_cand(uint32_t f) { return ((f & J2KI_T1_NBRS) + 0xFFu) & ~(f >> 4) & 0x100u; }
J2KI_HD uint32_t j2ki_t1_mrp_cand(uint32_t f) { return (f >> 4) & ~(f >> 5) & 0x100u; }
J2KI_HD uint32_t j2ki_t1_cup_done(uint32_t f)
{
    return ((f & (J2KI_T1_SIG | J2KI_T1_VISIT)) + (J2KI_T1_SIG | J2KI_T1_VISIT)) & 0x4000u;
}

/*
 * ---- the three passes; each returns its distortion sum (header comment units) ----
 * Each pass works on a copy of the coder in a local variable and writes it back once at the
 * end, so that A, C and CT stay in registers across the pass (see J2KI_MQC_HOT). `raw` is a
 * constant at every call of the *_impl functions, so each is compiled once per mode.
 */

/** Significance propagation pass (D.3.1) at bit s; raw: BYPASS bit-packed (D.6). */
J2KI_MQC_HOT int64_t j2ki_t1_spp_impl(J2kiT1State *st, int s, int g, int raw)
{
    const uint8_t *zc = J2KI_T1_ZC + st->zc_off;
    const int stride = st->stride, w = st->w, h = st->h;
    const uint32_t vc = st->vc_mask;
    uint16_t *ctx = st->ctx;
    J2kiMqc m = st->mqc;
    int x, y0, r;
    int64_t dist = 0;
    for (y0 = 0; y0 < h; y0 += 4) {
        const int nr = j2ki_imin(4, h - y0);
        uint16_t *col = st->flags + (y0 + 1) * stride + 1;
        const uint32_t *mcol = st->mag + (y0 + 1) * stride + 1;
        for (x = 0; x < w; x++, col++, mcol++) {
            if (nr == 4 && !(j2ki_t1_spp_cand(col[0]) | j2ki_t1_spp_cand(col[stride]) |
                             j2ki_t1_spp_cand(col[2 * stride]) | j2ki_t1_spp_cand(col[3 * stride])))
                continue;
            for (r = 0; r < nr; r++) {
                uint16_t *fp = col + r * stride;
                uint32_t f = *fp & (r == 3 ? vc : 0xFFFFu);
                uint32_t mg, bit;
                if ((f & J2KI_T1_SIG) || !(f & J2KI_T1_NBRS))
                    continue;
                mg = mcol[r * stride];
                bit = (mg >> s) & 1;
                if (raw)
                    j2ki_mqc_raw_put(&m, (int)bit);
                else
                    j2ki_mqc_encode(&m, &ctx[zc[f & J2KI_T1_NBRS]], (int)bit);
                if (bit) {
                    if (raw)
                        j2ki_mqc_raw_put(&m, (int)(f >> 15));
                    else
                        j2ki_t1_code_sign(&m, ctx, f);
                    j2ki_t1_set_sig(fp, stride, f >> 15);
                    dist += j2ki_t1_dist_sig(mg, s, g);
                }
                *fp |= (uint16_t)J2KI_T1_VISIT;
            }
        }
    }
    st->mqc = m;
    return dist;
}

J2KI_HD int64_t j2ki_t1_spp(J2kiT1State *st, int s, int g, int raw)
{
    return raw ? j2ki_t1_spp_impl(st, s, g, 1) : j2ki_t1_spp_impl(st, s, g, 0);
}

/** Magnitude refinement pass (D.3.3) at bit s. */
J2KI_MQC_HOT int64_t j2ki_t1_mrp_impl(J2kiT1State *st, int s, int g, int raw)
{
    const int stride = st->stride, w = st->w, h = st->h;
    const uint32_t vc = st->vc_mask;
    uint16_t *ctx = st->ctx;
    J2kiMqc m = st->mqc;
    int x, y0, r;
    int64_t dist = 0;
    for (y0 = 0; y0 < h; y0 += 4) {
        const int nr = j2ki_imin(4, h - y0);
        uint16_t *col = st->flags + (y0 + 1) * stride + 1;
        const uint32_t *mcol = st->mag + (y0 + 1) * stride + 1;
        for (x = 0; x < w; x++, col++, mcol++) {
            if (nr == 4 && !(j2ki_t1_mrp_cand(col[0]) | j2ki_t1_mrp_cand(col[stride]) |
                             j2ki_t1_mrp_cand(col[2 * stride]) | j2ki_t1_mrp_cand(col[3 * stride])))
                continue;
            for (r = 0; r < nr; r++) {
                uint16_t *fp = col + r * stride;
                uint32_t f = *fp, mg, bit;
                if ((f & (J2KI_T1_SIG | J2KI_T1_VISIT)) != J2KI_T1_SIG)
                    continue;
                mg = mcol[r * stride];
                bit = (mg >> s) & 1;
                if (raw)
                    j2ki_mqc_raw_put(&m, (int)bit);
                else
                    j2ki_mqc_encode(&m, &ctx[j2ki_t1_mr_ctx(f & (r == 3 ? vc : 0xFFFFu))], (int)bit);
                dist += j2ki_t1_dist_ref(mg, s, g);
                *fp |= (uint16_t)J2KI_T1_REF;
            }
        }
    }
    st->mqc = m;
    return dist;
}

J2KI_HD int64_t j2ki_t1_mrp(J2kiT1State *st, int s, int g, int raw)
{
    return raw ? j2ki_t1_mrp_impl(st, s, g, 1) : j2ki_t1_mrp_impl(st, s, g, 0);
}

/** Cleanup pass (D.3.4) at bit s, with run-length mode on full stripe columns; clears VISIT. */
J2KI_HD int64_t j2ki_t1_cup(J2kiT1State *st, int s, int g)
{
    const uint8_t *zc = J2KI_T1_ZC + st->zc_off;
    const int stride = st->stride, w = st->w, h = st->h;
    const uint32_t vc = st->vc_mask;
    const uint32_t busy = J2KI_T1_SIG | J2KI_T1_VISIT | J2KI_T1_NBRS;
    const uint32_t done = J2KI_T1_SIG | J2KI_T1_VISIT;
    uint16_t *ctx = st->ctx;
    J2kiMqc m = st->mqc;
    int x, y0, r;
    int64_t dist = 0;
    for (y0 = 0; y0 < h; y0 += 4) {
        const int nr = j2ki_imin(4, h - y0);
        uint16_t *col = st->flags + (y0 + 1) * stride + 1;
        const uint32_t *mcol = st->mag + (y0 + 1) * stride + 1;
        for (x = 0; x < w; x++, col++, mcol++) {
            r = 0;
            if (nr == 4) {
                uint32_t f0 = col[0], f1 = col[stride], f2 = col[2 * stride], f3 = col[3 * stride];
                if (!((f0 | f1 | f2 | (f3 & vc)) & busy)) {
                    /* run-length mode: all four insignificant with zero contexts */
                    uint16_t *fp;
                    uint32_t mg;
                    for (r = 0; r < 4; r++)
                        if ((mcol[r * stride] >> s) & 1)
                            break;
                    j2ki_mqc_encode(&m, &ctx[J2KI_T1_CTX_RL], r < 4);
                    if (r == 4)
                        continue;
                    j2ki_mqc_encode(&m, &ctx[J2KI_T1_CTX_UNI], r >> 1);
                    j2ki_mqc_encode(&m, &ctx[J2KI_T1_CTX_UNI], r & 1);
                    fp = col + r * stride;
                    mg = mcol[r * stride];
                    j2ki_t1_code_sign(&m, ctx, *fp & (r == 3 ? vc : 0xFFFFu));
                    j2ki_t1_set_sig(fp, stride, (uint32_t)*fp >> 15);
                    dist += j2ki_t1_dist_sig(mg, s, g);
                    r++;
                } else if (j2ki_t1_cup_done(f0) & j2ki_t1_cup_done(f1) & j2ki_t1_cup_done(f2) &
                           j2ki_t1_cup_done(f3)) {
                    /* all four already coded in this plane: only VISIT to clear */
                    col[0] = (uint16_t)(f0 & ~J2KI_T1_VISIT);
                    col[stride] = (uint16_t)(f1 & ~J2KI_T1_VISIT);
                    col[2 * stride] = (uint16_t)(f2 & ~J2KI_T1_VISIT);
                    col[3 * stride] = (uint16_t)(f3 & ~J2KI_T1_VISIT);
                    continue;
                }
            }
            for (; r < nr; r++) {
                uint16_t *fp = col + r * stride;
                uint32_t f = *fp & (r == 3 ? vc : 0xFFFFu);
                uint32_t mg, bit;
                if (f & done) {
                    *fp &= (uint16_t)~J2KI_T1_VISIT;
                    continue;
                }
                mg = mcol[r * stride];
                bit = (mg >> s) & 1;
                j2ki_mqc_encode(&m, &ctx[zc[f & J2KI_T1_NBRS]], (int)bit);
                if (bit) {
                    j2ki_t1_code_sign(&m, ctx, f);
                    j2ki_t1_set_sig(fp, stride, f >> 15);
                    dist += j2ki_t1_dist_sig(mg, s, g);
                }
            }
        }
    }
    st->mqc = m;
    return dist;
}

/* ---- one code-block ---- */

/**
 * Loads w x h values (row stride `stride`) into the state arrays, clears the flags (border
 * included) and sets NEG. Returns the OR of all magnitudes (numbps = bits of it >> F).
 */
J2KI_HD uint32_t j2ki_t1_load(J2kiT1State *st, const int32_t *coefs, ptrdiff_t stride,
                              int w, int h, int orient, int cblk_style)
{
    int x, y, i, n;
    uint32_t acc = 0;
    st->w = w;
    st->h = h;
    st->stride = w + 2;
    st->zc_off = 256 * j2ki_t1_zc_class(orient);
    st->vc_mask = (cblk_style & J2KI_CBLK_VCAUSAL) ? J2KI_T1_VC_MASK : 0xFFFFu;
    n = (w + 2) * (h + 2);
    for (i = 0; i < n; i++)
        st->flags[i] = 0;
    for (y = 0; y < h; y++) {
        const int32_t *row = coefs + (ptrdiff_t)y * stride;
        int idx = (y + 1) * st->stride + 1;
        for (x = 0; x < w; x++) {
            int32_t v = row[x];
            uint32_t neg = (uint32_t)v >> 31;
            uint32_t m = neg ? 0u - (uint32_t)v : (uint32_t)v;
            st->mag[idx + x] = m;
            st->flags[idx + x] = (uint16_t)(neg << 15);
            acc |= m;
        }
    }
    return acc;
}

/** Number of bits of x (0 for 0). */
J2KI_HD int j2ki_t1_nbits(uint32_t x)
{
    int n = 0;
    while (x) {
        n++;
        x >>= 1;
    }
    return n;
}

/** 1 when pass i (numbering above) ends a codeword segment. */
J2KI_HD int j2ki_t1_pass_term(int i, int nb_passes, int cblk_style, int bypass_start)
{
    int k = (i + 2) / 3, type = (i + 2) % 3;
    if ((cblk_style & J2KI_CBLK_TERMALL) || i == nb_passes - 1)
        return 1;
    if (!(cblk_style & J2KI_CBLK_BYPASS))
        return 0;
    return (type == 1 && k >= bypass_start) || (type == 2 && k + 1 >= bypass_start);
}

/** 1 when pass i is coded raw (BYPASS). */
J2KI_HD int j2ki_t1_pass_raw(int i, int cblk_style, int bypass_start)
{
    int k = (i + 2) / 3, type = (i + 2) % 3;
    return (cblk_style & J2KI_CBLK_BYPASS) && k >= bypass_start && type != 2;
}

/** End (rate) of the codeword segment that holds pass i: the rate of the next pass with term. */
J2KI_HD uint32_t j2ki_t1_seg_end(const J2kiPass *passes, int nb_passes, int i)
{
    while (i < nb_passes - 1 && !passes[i].term)
        i++;
    return passes[i].rate;
}

/**
 * Codes every pass of a loaded block with numbps bit-planes (1..J2KI_T1_MAX_PLANES) into
 * buf[0, cap): fills passes[0 .. 3 numbps - 3] (rate, dist, term; slope = 0) and *len.
 * Returns 0 or J2KC_ERR_BUFSIZE (cap or max_passes too small; nothing is written past cap).
 */
J2KI_HD int j2ki_t1_code(J2kiT1State *st, int numbps, int cblk_style, int bypass_start,
                         int frac_bits, uint8_t *buf, uint32_t cap, J2kiPass *passes,
                         int max_passes, uint32_t *len)
{
    int nb_passes = 3 * numbps - 2, i, j, first = 0, open = 0;
    int pterm = (cblk_style & J2KI_CBLK_PTERM) != 0;
    int32_t seg_start = 0, end;
    uint32_t prev_rate = 0;
    if (nb_passes > max_passes || numbps > J2KI_T1_MAX_PLANES)
        return J2KC_ERR_BUFSIZE;
    j2ki_mqc_reset_ctx(st->ctx);
    for (i = 0; i < nb_passes; i++) {
        int k = (i + 2) / 3, type = (i + 2) % 3;
        int s = numbps - 1 - k + frac_bits, g = j2ki_t1_dist_shift(s);
        int raw = j2ki_t1_pass_raw(i, cblk_style, bypass_start);
        int term = j2ki_t1_pass_term(i, nb_passes, cblk_style, bypass_start);
        int64_t d;
        if (!open) {
            if (raw)
                j2ki_mqc_raw_init(&st->mqc, buf, cap, seg_start);
            else
                j2ki_mqc_init(&st->mqc, buf, cap, seg_start);
            open = 1;
            first = i;
        }
        if (type == 0)
            d = j2ki_t1_spp(st, s, g, raw);
        else if (type == 1)
            d = j2ki_t1_mrp(st, s, g, raw);
        else {
            d = j2ki_t1_cup(st, s, g);
            if (cblk_style & J2KI_CBLK_SEGMARK) {   /* D.5: 1010 in the uniform context */
                j2ki_mqc_encode(&st->mqc, &st->ctx[J2KI_T1_CTX_UNI], 1);
                j2ki_mqc_encode(&st->mqc, &st->ctx[J2KI_T1_CTX_UNI], 0);
                j2ki_mqc_encode(&st->mqc, &st->ctx[J2KI_T1_CTX_UNI], 1);
                j2ki_mqc_encode(&st->mqc, &st->ctx[J2KI_T1_CTX_UNI], 0);
            }
        }
        passes[i].dist = ldexp((double)d, 2 * g - 2 * frac_bits - 2);
        passes[i].slope = 0;
        passes[i].term = (uint8_t)term;
        if (term) {
            if (raw)
                end = j2ki_mqc_raw_flush(&st->mqc, pterm);
            else
                end = pterm ? j2ki_mqc_flush_pterm(&st->mqc) : j2ki_mqc_flush(&st->mqc);
            if (st->mqc.overflow)
                return J2KC_ERR_BUFSIZE;
            for (j = first; j < i; j++) {
                int32_t r = raw ? j2ki_imin(st->marks[j].bp, end)
                                : j2ki_mqc_trunc_len(buf, seg_start, end, &st->marks[j]);
                prev_rate = (uint32_t)r > prev_rate ? (uint32_t)r : prev_rate;
                passes[j].rate = prev_rate;
            }
            passes[i].rate = prev_rate = (uint32_t)end;
            seg_start = end;
            open = 0;
        } else if (raw) {
            st->marks[i].bp = j2ki_mqc_raw_len(&st->mqc);
        } else {
            st->marks[i] = j2ki_mqc_mark(&st->mqc);
        }
        if (st->mqc.overflow)
            return J2KC_ERR_BUFSIZE;
        if (cblk_style & J2KI_CBLK_RESET)
            j2ki_mqc_reset_ctx(st->ctx);
    }
    *len = (uint32_t)seg_start;
    return 0;
}

#endif /* J2KI_T1_CORE_H */
