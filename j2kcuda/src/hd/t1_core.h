/*
 * Tier-1 coding of one code-block (ISO/IEC 15444-1 Annex D) as J2KI_HD inline functions:
 * context modelling (D.3), the three coding passes, the code-block style switches (D.6:
 * BYPASS, RESET, TERMALL, VCAUSAL, PTERM, SEGMARK), pass lengths and distortions. The
 * reference coder (t1_ref.c) and the CUDA coder (one thread per code-block) both run
 * j2ki_t1_load() (or an equivalent) then j2ki_t1_code(), so their output is identical by
 * construction.
 *
 * The caller's scratch: flags, (w + 2) x (h + 2) uint16_t, and magnitudes mag, (w + 2) x
 * (h + 2) uint32_t, both with stride w + 2, sample (x, y) at (y + 1) * stride + x + 1; the
 * border is never coded. j2ki_t1_load() leaves per sample |v| in mag and, in flags, only the
 * sign (J2KI_T1_NEG, bit 15; every other bit 0, border included).
 *
 * j2ki_t1_code() then rebuilds the flags memory, in place, as one uint32_t per stripe column
 * (4 rows x 1 column, D.3; the last stripe may be shorter), (w + 2) words per stripe with a
 * column of padding each side (stripe k, column x at k * (w + 2) + x + 1), no padding
 * stripes: ceil(h / 4) * (w + 2) words always fit in the (h + 2) * (w + 2) uint16_t.
 * One word holds what the passes test and the contexts read, so a column is tested with
 * one load and a context is a shift and a mask:
 *   bits  0..17  sigma: significance of the 3 x 6 samples around the column, row j
 *                (0: the row above the stripe, 1..4: the stripe, 5: the row below) and
 *                column c (0: x - 1, 1: x, 2: x + 1) at bit 3 j + c
 *   bits 18..23  chi: sign (1 = negative) of column x in rows j = 0..5, from the start
 *                (only read where the sample is significant)
 *   bits 24..27  pi: row r (0..3) coded by this plane's significance propagation pass
 *   bits 28..31  mu: row r refined at least once (context 16, Table D.4)
 * So row r's 3 x 3 neighbourhood is bits 3r .. 3r + 8, the sample itself bit 3r + 4.
 *
 * Tables: the zero-coding contexts of Table D.1 are a 3 x 512 lookup by that 9-bit
 * neighbourhood, generated from the table's rules by macros (J2KI_T1_ZC_INIT) and
 * instantiated like the MQ table in mqc.h: `static const` on the host, `static
 * __constant__` for device code (or shared-memory copies, J2KI_T1_SMEM_TABLES: t1_cuda.cu). Sign contexts (Tables D.2, D.3) and refinement contexts
 * (Table D.4) are computed.
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
 * Distortion (t1_ref.h): with magnitude m (frac_bits fractional bits) and bits above s known,
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

#include "core/j2ki.h"
#include "core/plan.h"
#include "hd/mqc.h"

/* ---- per-sample flags as j2ki_t1_load() leaves them (and as load kernels must) ---- */
#define J2KI_T1_NEG    0x8000u
/* J2kiT1State.vc_mask with VCAUSAL (0xFFFF without); only compared with 0xFFFF */
#define J2KI_T1_VC_MASK 0xFFFFFD1Fu

/* ---- stripe-column words (see the header comment) ---- */
#define J2KI_T1_SIGMA(j, c) (1u << (3 * (j) + (c)))
#define J2KI_T1_SIGMA_ALL  0x0003FFFFu
#define J2KI_T1_CHI(j)     (1u << (18 + (j)))
#define J2KI_T1_PI(r)      (1u << (24 + (r)))
#define J2KI_T1_PI_ALL     0x0F000000u
#define J2KI_T1_MU(r)      (1u << (28 + (r)))
/* VCAUSAL (D.7): the row below the stripe counts as insignificant. Only the last row's
 * neighbourhood reaches row j = 5, so the mask can be applied to the whole word. */
#define J2KI_T1_VC_WORD    (~(J2KI_T1_SIGMA(5, 0) | J2KI_T1_SIGMA(5, 1) | J2KI_T1_SIGMA(5, 2) | \
                              J2KI_T1_CHI(5)))

#define J2KI_T1_CTX_RL   17
#define J2KI_T1_CTX_UNI  18
#define J2KI_T1_DIST_BITS 18   /* bits below the plane kept exactly in distortion terms */
#define J2KI_T1_MAX_PLANES 31
#define J2KI_T1_MAX_PASSES (3 * J2KI_T1_MAX_PLANES - 2)

/* ---- Table D.1 as rules over the 9-bit neighbourhood i: NW N NE W (self) E SW S SE ---- */
#define J2KI_ZB(i, b) (((i) >> (b)) & 1)
#define J2KI_ZH(i) (J2KI_ZB(i, 3) + J2KI_ZB(i, 5))
#define J2KI_ZV(i) (J2KI_ZB(i, 1) + J2KI_ZB(i, 7))
#define J2KI_ZD(i) (J2KI_ZB(i, 0) + J2KI_ZB(i, 2) + J2KI_ZB(i, 6) + J2KI_ZB(i, 8))
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
#define J2KI_R256(M, b) J2KI_R64(M, (b) + 0), J2KI_R64(M, (b) + 64), J2KI_R64(M, (b) + 128), J2KI_R64(M, (b) + 192)
#define J2KI_R512(M)   J2KI_R256(M, 0), J2KI_R256(M, 256)
/** 3 x 512 zero-coding contexts: [0] LL/LH, [1] HL, [2] HH (the self bit is ignored). */
#define J2KI_T1_ZC_INIT { J2KI_R512(J2KI_ZC_LL), J2KI_R512(J2KI_ZC_HL), J2KI_R512(J2KI_ZC_HH) }

static const uint8_t j2ki_t1_zc_h[3 * 512] = J2KI_T1_ZC_INIT;
#if defined(__CUDACC__)
static __constant__ uint8_t j2ki_t1_zc_d[3 * 512] = J2KI_T1_ZC_INIT;
#endif
#if defined(__CUDA_ARCH__) && defined(J2KI_T1_SMEM_TABLES)
#define J2KI_T1_ZC j2ki_t1_zc_s
#elif defined(__CUDA_ARCH__)
#define J2KI_T1_ZC j2ki_t1_zc_d
#else
#define J2KI_T1_ZC j2ki_t1_zc_h
#endif

/** Band orientation (0 LL, 1 HL, 2 LH, 3 HH) -> zero-coding class (J2kiT1State.zc_off / 256). */
J2KI_HD int j2ki_t1_zc_class(int orient) { return orient == 1 ? 1 : orient == 3 ? 2 : 0; }

/** Coder state of one code-block; the arrays are the caller's ((w + 2) * (h + 2) each). */
typedef struct J2kiT1State {
    uint16_t *flags;         /**< per-sample signs after load; stripe-column words while coding */
    uint32_t *mag;
    int       w, h, stride;
    int       zc_off;        /**< 256 * zero-coding class */
    uint32_t  vc_mask;       /**< 0xFFFF, or J2KI_T1_VC_MASK with VCAUSAL */
    uint16_t  ctx[19];       /**< MQ context states (mqc.h) */
    J2kiMqc   mqc;
    J2kiMqcMark marks[J2KI_T1_MAX_PASSES];  /**< registers at non-terminated pass ends */
} J2kiT1State;

/* ---- distortion terms (see the header comment) ---- */

J2KI_HD int j2ki_t1_dist_shift(int s) { return s > J2KI_T1_DIST_BITS ? s - J2KI_T1_DIST_BITS : 0; }

/*
 * A pass sums its terms in factored form, with one multiplication per pass instead of two
 * squares per sample. With u = s - g, l = m >> g (bits of m below bit s + 1 that are kept),
 * L = l mod 2^u (the bits below the plane) and c = (g > 0):
 *  - a sample becoming significant at s has l = 2^u + L, t = 2l + c, e = 2L + 1 - 2^u, so
 *      t^2 - e^2 = (t - e)(t + e) = (3 * 2^u + c - 1) * (2^u + c + 1 + 4L):
 *    the pass sums 4L + (2^u + c + 1) (j2ki_t1_sig_term) and multiplies by j2ki_t1_sig_scale;
 *  - a refined sample with bit b at s has eb = 2L + 1 - 2^(u+1) (1 - b), ea = 2L + 1 - 2^u:
 *      eb^2 - ea^2 = 2^u * (b ? t : 2^(u+1) - t),  t = 4L + 2 - 2^u,
 *    the pass sums the factor (j2ki_t1_ref_term, |factor| < 3 * 2^18) and multiplies by 2^u.
 * Both are the exact integers of the header comment, so the sums are bit for bit the same.
 */
J2KI_HD int64_t j2ki_t1_sig_scale(int s, int g) { return 3 * ((int64_t)1 << (s - g)) + (g > 0) - 1; }

J2KI_HD uint32_t j2ki_t1_sig_term(uint32_t m, int g, uint32_t lmask, uint32_t base)
{
    return 4 * ((m >> g) & lmask) + base;
}

J2KI_HD int32_t j2ki_t1_ref_term(uint32_t m, int s, int g, uint32_t lmask)
{
    int32_t pu = (int32_t)lmask + 1;
    int32_t t = 4 * (int32_t)((m >> g) & lmask) + 2 - pu;
    return ((m >> s) & 1) ? t : 2 * pu - t;
}

/* ---- context modelling on stripe-column words ---- */

/**
 * Sign context (Tables D.2, D.3) from the significance `sig` (bits 0..3: N, S, W, E, the
 * VCAUSAL mask applied) and signs `neg` (same bits, 1 = negative, only where significant)
 * of the four direct neighbours; *xorbit as D.3.
 */
J2KI_HD int j2ki_t1_sc_ctx(uint32_t sig, uint32_t neg, int *xorbit)
{
    int cn = (int)(sig & 1) - 2 * (int)(neg & 1);
    int cs = (int)((sig >> 1) & 1) - 2 * (int)((neg >> 1) & 1);
    int cw = (int)((sig >> 2) & 1) - 2 * (int)((neg >> 2) & 1);
    int ce = (int)((sig >> 3) & 1) - 2 * (int)((neg >> 3) & 1);
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

/*
 * Sign coding as one table lookup (the column-parallel coder, t1_par.h): the index gathers the
 * four direct neighbours' significance and signs where a column's word already holds them,
 * shifted to row r (j2ki_t1_sc_index): bit 1 N, 3 W, 5 E, 7 S significant (the word's sigma
 * bits of rows r, r + 1, r + 2), bits 0 N and 2 S negative (its chi bits of rows r, r + 2),
 * bits 4 W and 6 E negative (chi of row r + 1 in the neighbour columns' words). The entry is
 * context << 1 | xorbit, as j2ki_t1_sc_ctx; the symbol is entry ^ the sample's own sign.
 */
#define J2KI_SC_C(i, bs, bn) (J2KI_ZB(i, bs) ? (J2KI_ZB(i, bn) ? -1 : 1) : 0)
#define J2KI_SC_CLAMP(a) ((a) > 1 ? 1 : (a) < -1 ? -1 : (a))
#define J2KI_SC_H(i) J2KI_SC_CLAMP(J2KI_SC_C(i, 3, 4) + J2KI_SC_C(i, 5, 6))
#define J2KI_SC_V(i) J2KI_SC_CLAMP(J2KI_SC_C(i, 1, 0) + J2KI_SC_C(i, 7, 2))
#define J2KI_SC_X(i) (J2KI_SC_H(i) < 0 || (J2KI_SC_H(i) == 0 && J2KI_SC_V(i) < 0))
#define J2KI_SC_E(i) ((((J2KI_SC_H(i) ? 12 : 9) + (J2KI_SC_X(i) ? -J2KI_SC_V(i) : J2KI_SC_V(i))) << 1) | \
                      J2KI_SC_X(i))
#define J2KI_T1_SC_INIT { J2KI_R256(J2KI_SC_E, 0) }
static const uint8_t j2ki_t1_sc_h[256] = J2KI_T1_SC_INIT;
#if defined(__CUDACC__)
static __constant__ uint8_t j2ki_t1_sc_d[256] = J2KI_T1_SC_INIT;
#endif
#if defined(__CUDA_ARCH__) && defined(J2KI_T1_SMEM_TABLES)
#define J2KI_T1_SC j2ki_t1_sc_s
#elif defined(__CUDA_ARCH__)
#define J2KI_T1_SC j2ki_t1_sc_d
#else
#define J2KI_T1_SC j2ki_t1_sc_h
#endif

/** The J2KI_T1_SC index of row r: wm the column's word (VCAUSAL mask applied), cl and cr
 *  the words of columns x - 1 and x + 1 (only their chi bits are read). */
J2KI_HD uint32_t j2ki_t1_sc_index(uint32_t wm, uint32_t cl, uint32_t cr, int r)
{
    return ((wm >> (3 * r)) & 0xAAu) | ((wm >> (18 + r)) & 5u) | ((cl >> (15 + r)) & 0x10u) |
           ((cr >> (13 + r)) & 0x40u);
}

/** Rows (bit r) among the bits 0, 3, 6, 9 of x (one per row of a stripe column). */
#define J2KI_T1_ROWS_E(i) (((i) & 1) | ((i) >> 2 & 2) | ((i) << 1 & 4) | ((i) >> 1 & 8))
#define J2KI_T1_ROWS_INIT { J2KI_R16(J2KI_T1_ROWS_E, 0), J2KI_R16(J2KI_T1_ROWS_E, 16) }
static const uint8_t j2ki_t1_rows_h[32] = J2KI_T1_ROWS_INIT;
#if defined(__CUDACC__)
static __constant__ uint8_t j2ki_t1_rows_d[32] = J2KI_T1_ROWS_INIT;
#endif
#if defined(__CUDA_ARCH__) && defined(J2KI_T1_SMEM_TABLES)
#define J2KI_T1_ROWS j2ki_t1_rows_s
#elif defined(__CUDA_ARCH__)
#define J2KI_T1_ROWS j2ki_t1_rows_d
#else
#define J2KI_T1_ROWS j2ki_t1_rows_h
#endif
J2KI_HD uint32_t j2ki_t1_rows(uint32_t x)
{
    /* (x | x >> 5) & 0x1B holds rows 0, 2, 1, 3 at bits 0, 1, 3, 4 */
    return J2KI_T1_ROWS[(x | x >> 5) & 0x1Bu];
}

/*
 * Rows of a stripe column (bit r) that each pass codes, from its word without branches:
 *   SPP: insignificant with a significant neighbour. R gathers at bit 3j whether row j of
 *        the 3 x 6 window has a significant sample, R | R >> 3 | R >> 6 at bit 3r whether
 *        row r's 3 x 3 neighbourhood has one (the sample itself counts, harmlessly: it is
 *        insignificant when it matters). w: the word with the VCAUSAL mask applied.
 *   MRP: significant and not coded by this plane's SPP.
 *   cleanup: insignificant and not coded by this plane's SPP.
 * A row of the SPP mask can change while the column is coded (a sample that becomes
 * significant gives the row below its N neighbour); the others cannot.
 */
J2KI_HD uint32_t j2ki_t1_spp_rows(uint32_t w)
{
    uint32_t r = (w | w >> 1 | w >> 2) & 0x9249u;
    return j2ki_t1_rows((r | r >> 3 | r >> 6) & ~(w >> 4) & 0x249u);
}
J2KI_HD uint32_t j2ki_t1_mrp_rows(uint32_t w)
{
    return j2ki_t1_rows((w >> 4) & 0x249u) & ~(w >> 24);
}
J2KI_HD uint32_t j2ki_t1_cup_rows(uint32_t w)
{
    return j2ki_t1_rows(~(w >> 4) & 0x249u) & ~(w >> 24);
}

/** Index of the lowest set bit of x != 0. */
J2KI_HD int j2ki_t1_ctz(uint32_t x)
{
#if defined(__CUDA_ARCH__)
    return __ffs(x) - 1;
#elif defined(__GNUC__)
    return __builtin_ctz(x);
#else
    int n = 0;
    while (!(x & 1)) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

/** Index of the lowest set bit of x != 0, 64 bits. */
J2KI_HD int j2ki_t1_ctz64(uint64_t x)
{
#if defined(__CUDA_ARCH__)
    return __ffsll((long long)x) - 1;
#elif defined(__GNUC__)
    return __builtin_ctzll(x);
#else
    int n = 0;
    while (!(x & 1)) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

/*
 * ---- the three passes; each returns its distortion sum (header comment units) ----
 * A pass keeps everything its per-sample steps need in one local J2kiT1Pass, the MQ
 * registers included, and writes the registers back once at the end; all its functions are
 * inlined (J2KI_MQC_HOT), so the compiler keeps the struct in registers. Samples are
 * chosen through masks of the rows the pass codes (j2ki_t1_*_rows, 4 bits per column),
 * walked lowest set bit first: whether a given sample is coded is close to random, and a
 * mispredicted branch per sample, or per column, cost more than coding it. `raw` is a
 * constant at every call, so each pass is compiled once per mode.
 */
typedef struct J2kiT1Pass {
    J2kiMqcReg r;              /**< A, C, CT (MQ passes) */
    J2kiMqc   *m;              /**< the rest of the coder (raw passes: all of it) */
    uint16_t  *ctx;
    const uint8_t *zc;         /**< zero-coding row of the band's class */
    uint32_t  *cols;           /**< stripe-column words */
    const uint32_t *mag;
    int        stride;         /**< of mag, and words per stripe: w + 2 */
    int        w, h, nb_stripes;
    uint32_t   vcw;            /**< word mask: J2KI_T1_VC_WORD with VCAUSAL, else all ones */
    int        s, g;
    uint32_t   lmask;          /**< 2^(s-g) - 1 */
    uint32_t   base;           /**< 2^(s-g) + (g > 0) + 1, see j2ki_t1_sig_term */
    int64_t    sum;            /**< distortion sum, factored (see j2ki_t1_sig_scale) */
} J2kiT1Pass;

J2KI_MQC_HOT J2kiT1Pass j2ki_t1_pass_begin(J2kiT1State *st, int s, int g)
{
    J2kiT1Pass p;
    p.r = j2ki_mqc_reg_get(&st->mqc);
    p.m = &st->mqc;
    p.ctx = st->ctx;
    p.zc = J2KI_T1_ZC + 2 * st->zc_off;
    p.cols = (uint32_t *)(void *)st->flags;
    p.mag = st->mag;
    p.stride = st->stride;
    p.w = st->w;
    p.h = st->h;
    p.nb_stripes = (st->h + 3) >> 2;
    p.vcw = st->vc_mask != 0xFFFFu ? J2KI_T1_VC_WORD : 0xFFFFFFFFu;
    p.s = s;
    p.g = g;
    p.lmask = (1u << (s - g)) - 1u;
    p.base = p.lmask + 2u + (g > 0);
    p.sum = 0;
    return p;
}

/** Sign coding (D.3.2) of row r of the column whose word is *cp (w: that word, masked). */
J2KI_MQC_HOT void j2ki_t1_code_sign(J2kiT1Pass *p, const uint32_t *cp, uint32_t w, int r)
{
    uint32_t nb = w >> (3 * r);                           /* N bit 1, W 3, E 5, S 7 */
    uint32_t sig = ((nb >> 1) & 1) | ((nb >> 6) & 2) | ((nb >> 1) & 4) | ((nb >> 2) & 8);
    uint32_t neg = ((w >> (18 + r)) & 1) | ((w >> (19 + r)) & 2) |   /* chi of rows r, r + 2 */
                   ((cp[-1] >> (19 + r)) & 1) << 2 | ((cp[1] >> (19 + r)) & 1) << 3;
    int xorbit;
    int cx = j2ki_t1_sc_ctx(sig, neg & sig, &xorbit);
    j2ki_mqc_encode_r(p->m, &p->r, &p->ctx[cx], (int)((w >> (19 + r)) & 1) ^ xorbit);
}

/** Makes row r of stripe k's column *cp significant: its own sigma bit and those of the
 *  neighbouring columns, and of the stripes above and below for the first and last rows. */
J2KI_MQC_HOT void j2ki_t1_set_sig(J2kiT1Pass *p, uint32_t *cp, int k, int r)
{
    int pos = 3 * r;
    cp[-1] |= J2KI_T1_SIGMA(1, 2) << pos;
    cp[0] |= J2KI_T1_SIGMA(1, 1) << pos;
    cp[1] |= J2KI_T1_SIGMA(1, 0) << pos;
    if (r == 0 && k > 0) {
        uint32_t *up = cp - p->stride;
        up[-1] |= J2KI_T1_SIGMA(5, 2);
        up[0] |= J2KI_T1_SIGMA(5, 1);
        up[1] |= J2KI_T1_SIGMA(5, 0);
    } else if (r == 3 && k + 1 < p->nb_stripes) {
        uint32_t *dn = cp + p->stride;
        dn[-1] |= J2KI_T1_SIGMA(0, 2);
        dn[0] |= J2KI_T1_SIGMA(0, 1);
        dn[1] |= J2KI_T1_SIGMA(0, 0);
    }
}

/** Zero coding (D.3.1) of insignificant row r of stripe k's column *cp (magnitude *mp),
 *  with its sign when it becomes significant; SPP and cleanup. Returns 1 when it did. */
J2KI_MQC_HOT uint32_t j2ki_t1_zc_sample(J2kiT1Pass *p, uint32_t *cp, int k, int r,
                                        const uint32_t *mp, int raw)
{
    uint32_t w = *cp & p->vcw;
    uint32_t mg = *mp, bit = (mg >> p->s) & 1;
    if (raw)
        j2ki_mqc_raw_put(p->m, (int)bit);
    else
        j2ki_mqc_encode_r(p->m, &p->r, &p->ctx[p->zc[(w >> (3 * r)) & 0x1FFu]], (int)bit);
    if (bit) {
        if (raw)
            j2ki_mqc_raw_put(p->m, (int)((w >> (19 + r)) & 1));
        else
            j2ki_t1_code_sign(p, cp, w, r);
        j2ki_t1_set_sig(p, cp, k, r);
        p->sum += j2ki_t1_sig_term(mg, p->g, p->lmask, p->base);
    }
    return bit;
}

/**
 * Significance propagation pass (D.3.1) at bit s; raw: BYPASS bit-packed (D.6). The rows to
 * code are gathered for 16 columns at once (bit 4c + r for column x0 + c, row r) and walked
 * in one loop, as in the MRP. A sample that becomes significant can only add rows: the row
 * below it, and rows of the next column (its W neighbours); both are added to the mask
 * then, before the walk reaches them.
 */
J2KI_MQC_HOT int64_t j2ki_t1_spp_impl(J2kiT1State *st, int s, int g, int raw)
{
    J2kiT1Pass p = j2ki_t1_pass_begin(st, s, g);
    int k, x0, c, r;
    for (k = 0; k < p.nb_stripes; k++) {
        const uint32_t rows = (1u << j2ki_imin(4, p.h - 4 * k)) - 1u;
        uint32_t *cp = p.cols + k * p.stride + 1;
        const uint32_t *mp = p.mag + (4 * k + 1) * p.stride + 1;
        for (x0 = 0; x0 < p.w; x0 += 16, cp += 16, mp += 16) {
            const int nc = j2ki_imin(16, p.w - x0);
            uint64_t todo = 0;
            for (c = 0; c < nc; c++)
                todo |= (uint64_t)(j2ki_t1_spp_rows(cp[c] & p.vcw) & rows) << (4 * c);
            while (todo) {
                int b = j2ki_t1_ctz64(todo);
                todo &= todo - 1;
                c = b >> 2;
                r = b & 3;
                if (j2ki_t1_zc_sample(&p, cp + c, k, r, mp + c + r * p.stride, raw)) {
                    uint32_t below = (2u << r) & ~j2ki_t1_rows((cp[c] >> 4) & 0x249u) & rows;
                    todo |= (uint64_t)below << (4 * c);
                    if (c + 1 < nc)
                        todo |= (uint64_t)(j2ki_t1_spp_rows(cp[c + 1] & p.vcw) & rows)
                                << (4 * c + 4);
                }
                cp[c] |= J2KI_T1_PI(r);
            }
        }
    }
    if (!raw)
        j2ki_mqc_reg_put(&st->mqc, &p.r);
    return j2ki_t1_sig_scale(s, g) * p.sum;
}

J2KI_HD int64_t j2ki_t1_spp(J2kiT1State *st, int s, int g, int raw)
{
    return raw ? j2ki_t1_spp_impl(st, s, g, 1) : j2ki_t1_spp_impl(st, s, g, 0);
}

/**
 * Magnitude refinement pass (D.3.3) at bit s. Refinement changes no other sample's
 * candidacy or context, so the rows to code are gathered for 16 columns at once (bit
 * 4c + r for column x0 + c, row r) and walked in one loop: one hard-to-predict loop exit
 * per 16 columns instead of one per column.
 */
J2KI_MQC_HOT int64_t j2ki_t1_mrp_impl(J2kiT1State *st, int s, int g, int raw)
{
    J2kiT1Pass p = j2ki_t1_pass_begin(st, s, g);
    int k, x0, c, r;
    for (k = 0; k < p.nb_stripes; k++) {
        const uint32_t rows = (1u << j2ki_imin(4, p.h - 4 * k)) - 1u;
        uint32_t *cp = p.cols + k * p.stride + 1;
        const uint32_t *mp = p.mag + (4 * k + 1) * p.stride + 1;
        for (x0 = 0; x0 < p.w; x0 += 16, cp += 16, mp += 16) {
            const int nc = j2ki_imin(16, p.w - x0);
            uint64_t todo = 0;
            for (c = 0; c < nc; c++)
                todo |= (uint64_t)(j2ki_t1_mrp_rows(cp[c]) & rows) << (4 * c);
            while (todo) {
                uint32_t w, mg, bit, mu;
                int b = j2ki_t1_ctz64(todo), nz;
                todo &= todo - 1;
                c = b >> 2;
                r = b & 3;
                w = cp[c] & p.vcw;
                mg = mp[c + r * p.stride];
                bit = (mg >> s) & 1;
                if (raw) {
                    j2ki_mqc_raw_put(p.m, (int)bit);
                } else {
                    /* Table D.4: 16 after the first refinement, else 15 with a significant
                     * neighbour (the 3 x 3 neighbourhood less the sample), else 14 */
                    mu = (w >> (28 + r)) & 1;
                    nz = ((w >> (3 * r)) & 0x1EFu) != 0;
                    j2ki_mqc_encode_r(p.m, &p.r, &p.ctx[14 + (nz | (int)mu) + (int)mu], (int)bit);
                }
                p.sum += j2ki_t1_ref_term(mg, s, g, p.lmask);
                cp[c] |= J2KI_T1_MU(r);
            }
        }
    }
    if (!raw)
        j2ki_mqc_reg_put(&st->mqc, &p.r);
    return ((int64_t)1 << (s - g)) * p.sum;
}

J2KI_HD int64_t j2ki_t1_mrp(J2kiT1State *st, int s, int g, int raw)
{
    if (raw)
        return j2ki_t1_mrp_impl(st, s, g, 1);
    return g ? j2ki_t1_mrp_impl(st, s, g, 0) : j2ki_t1_mrp_impl(st, s, 0, 0);
}

/** Cleanup pass (D.3.4) at bit s, with run-length mode on full stripe columns; clears pi. */
J2KI_MQC_HOT int64_t j2ki_t1_cup(J2kiT1State *st, int s, int g)
{
    J2kiT1Pass p = j2ki_t1_pass_begin(st, s, g);
    /* run-length mode (D.3.4): the four rows insignificant, not coded by the SPP, with
     * zero contexts, i.e. nothing significant in the (VCAUSAL-masked) 3 x 6 window */
    const uint32_t rl_busy = (J2KI_T1_SIGMA_ALL | J2KI_T1_PI_ALL) & p.vcw;
    int k, x, r;
    for (k = 0; k < p.nb_stripes; k++) {
        const int nr = j2ki_imin(4, p.h - 4 * k);
        const uint32_t rows = (1u << nr) - 1u;
        uint32_t *cp = p.cols + k * p.stride + 1;
        const uint32_t *mp = p.mag + (4 * k + 1) * p.stride + 1;
        for (x = 0; x < p.w; x++, cp++, mp++) {
            uint32_t w = *cp, todo;
            if (nr == 4 && !(w & rl_busy)) {
                uint32_t bits = ((mp[0] >> s) & 1) | ((mp[p.stride] >> s) & 1) << 1 |
                                ((mp[2 * p.stride] >> s) & 1) << 2 |
                                ((mp[3 * p.stride] >> s) & 1) << 3;
                j2ki_mqc_encode_r(p.m, &p.r, &p.ctx[J2KI_T1_CTX_RL], bits != 0);
                if (!bits)
                    continue;
                r = j2ki_t1_ctz(bits);
                j2ki_mqc_encode_r(p.m, &p.r, &p.ctx[J2KI_T1_CTX_UNI], r >> 1);
                j2ki_mqc_encode_r(p.m, &p.r, &p.ctx[J2KI_T1_CTX_UNI], r & 1);
                j2ki_t1_code_sign(&p, cp, w & p.vcw, r);
                j2ki_t1_set_sig(&p, cp, k, r);
                p.sum += j2ki_t1_sig_term(mp[r * p.stride], g, p.lmask, p.base);
                todo = 0xEu << r & 0xFu;      /* the rows below: insignificant, not visited */
            } else {
                todo = j2ki_t1_cup_rows(w) & rows;
                *cp = w & ~J2KI_T1_PI_ALL;
            }
            while (todo) {
                r = j2ki_t1_ctz(todo);
                todo &= todo - 1;
                j2ki_t1_zc_sample(&p, cp, k, r, mp + r * p.stride, 0);
            }
        }
    }
    j2ki_mqc_reg_put(&st->mqc, &p.r);
    return j2ki_t1_sig_scale(s, g) * p.sum;
}

/**
 * Rebuilds the flags memory as stripe-column words (header comment) from the signs
 * j2ki_t1_load() left, in place, in two steps that each only overwrite data already read:
 * first the 6 chi bits of every word, through the uint16_t view, to element 2q for word q
 * (for stripe k >= 1 that lies below row 4k - 1, the first row stripe k reads; for stripe 0
 * it lies at most in row 1 left of the column being read); then every element 2q widened to
 * word q, whose two uint16_t it exactly replaces.
 */
J2KI_HD void j2ki_t1_build_cols(J2kiT1State *st)
{
    const int ws = st->w + 2, h = st->h, ns = (h + 3) >> 2;
    uint16_t *fl = st->flags;
    uint32_t *cols = (uint32_t *)(void *)st->flags;
    int k, i, j, q;
    for (k = 0; k < ns; k++) {
        /* rows j of stripe k's window are padded rows 4k + j; the border rows (0, h + 1)
         * hold no sign, so only 1 <= 4k + j <= h are read */
        int j0 = k ? 0 : 1, j1 = j2ki_imin(5, h - 4 * k);
        for (i = 0; i < ws; i++) {
            uint32_t chi = 0;
            for (j = j0; j <= j1; j++)
                chi |= (uint32_t)(fl[(4 * k + j) * ws + i] >> 15) << j;
            fl[2 * (k * ws + i)] = (uint16_t)chi;
        }
    }
    for (q = 0; q < ns * ws; q++)
        cols[q] = (uint32_t)fl[2 * q] << 18;
}

/* ---- one code-block ---- */

/**
 * Loads w x h values (row stride `stride`) into the state arrays: magnitudes, and flags
 * cleared (border included) but for J2KI_T1_NEG on negative samples; sets the geometry,
 * zc_off and vc_mask. Returns the OR of all magnitudes (numbps = bits of it >> F).
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
 * Codeword segments around a block's passes (D.4), shared by j2ki_t1_code_cols and the
 * column-parallel coder (t1_par.h: j2ki_t1p_code_pass, the CUDA MQ threads), which feeds a
 * pass's symbols between the same three steps: j2ki_t1_seg_open before the pass,
 * j2ki_t1_segmark after a cleanup pass, j2ki_t1_seg_close after it.
 */
typedef struct J2kiT1Seg {
    int32_t  seg_start;           /**< start of the open segment; after the last pass: *len */
    uint32_t prev_rate;           /**< rate of the last pass given one */
    int      first, open;         /**< first pass of the open segment, whether one is open */
} J2kiT1Seg;

J2KI_HD void j2ki_t1_seg_init(J2kiT1Seg *sg)
{
    sg->seg_start = 0;
    sg->prev_rate = 0;
    sg->first = 0;
    sg->open = 0;
}

/** Before pass i: opens a segment (MQ, or raw for a BYPASS raw pass) if none is open. */
J2KI_HD void j2ki_t1_seg_open(J2kiT1Seg *sg, J2kiMqc *m, int i, int raw, uint8_t *buf, uint32_t cap)
{
    if (sg->open)
        return;
    if (raw)
        j2ki_mqc_raw_init(m, buf, cap, sg->seg_start);
    else
        j2ki_mqc_init(m, buf, cap, sg->seg_start);
    sg->open = 1;
    sg->first = i;
}

/** After a cleanup pass: with SEGMARK, 1010 in the uniform context (D.5). */
J2KI_HD void j2ki_t1_segmark(J2kiMqc *m, uint16_t *ctx, int cblk_style)
{
    if (cblk_style & J2KI_CBLK_SEGMARK) {
        j2ki_mqc_encode(m, &ctx[J2KI_T1_CTX_UNI], 1);
        j2ki_mqc_encode(m, &ctx[J2KI_T1_CTX_UNI], 0);
        j2ki_mqc_encode(m, &ctx[J2KI_T1_CTX_UNI], 1);
        j2ki_mqc_encode(m, &ctx[J2KI_T1_CTX_UNI], 0);
    }
}

/**
 * After pass i (raw: j2ki_t1_pass_raw, term: j2ki_t1_pass_term): writes passes[i].slope (0)
 * and .term, terminates the segment
 * and writes the rates of its passes, or marks the pass's truncation point (marks[i]); RESET
 * resets ctx. passes[i].dist is the caller's. Returns 0 or J2KC_ERR_BUFSIZE (cap exceeded).
 */
J2KI_HD int j2ki_t1_seg_close(J2kiT1Seg *sg, J2kiMqc *m, uint16_t *ctx, J2kiMqcMark *marks, int i,
                              int raw, int term, int cblk_style, const uint8_t *buf, J2kiPass *passes)
{
    int pterm = (cblk_style & J2KI_CBLK_PTERM) != 0, j;
    int32_t end;
    passes[i].slope = 0;
    passes[i].term = (uint8_t)term;
    if (term) {
        if (raw)
            end = j2ki_mqc_raw_flush(m, pterm);
        else
            end = pterm ? j2ki_mqc_flush_pterm(m) : j2ki_mqc_flush(m);
        if (m->overflow)
            return J2KC_ERR_BUFSIZE;
        for (j = sg->first; j < i; j++) {
            int32_t r = raw ? j2ki_imin(marks[j].bp, end) : j2ki_mqc_trunc_len(buf, sg->seg_start, end, &marks[j]);
            /* No truncation point right after a 0xFF: the next code-block's bytes follow it in
             * the packet and could form a marker code (> 0xFF8F, which B.10.1, C.3.4 and D.6
             * keep out of packet data). The decoder reads 0xFF past the end of its data (C.3.4,
             * D.6), so the prefix without that byte decodes the same. */
            if (r > sg->seg_start && buf[r - 1] == 0xFF)
                r--;
            sg->prev_rate = (uint32_t)r > sg->prev_rate ? (uint32_t)r : sg->prev_rate;
            passes[j].rate = sg->prev_rate;
        }
        passes[i].rate = sg->prev_rate = (uint32_t)end;
        passes[i].est = (uint32_t)end;
        sg->seg_start = end;
        sg->open = 0;
    } else if (raw) {
        marks[i].bp = j2ki_mqc_raw_len(m);
        passes[i].est = (uint32_t)marks[i].bp;
    } else {
        marks[i] = j2ki_mqc_mark(m);
        /* bytes completed, plus B: j2ki_mqc_trunc_len never returns less */
        passes[i].est = (uint32_t)j2ki_imax(marks[i].bp + 1, sg->seg_start);
    }
    if (m->overflow)
        return J2KC_ERR_BUFSIZE;
    if (cblk_style & J2KI_CBLK_RESET)
        j2ki_mqc_reset_ctx(ctx);
    return 0;
}

/**
 * j2ki_t1_code for a block whose flags memory already holds the stripe-column words (as
 * j2ki_t1_build_cols leaves them; t1_cuda.cu builds them straight from the coefficients).
 */
J2KI_HD int j2ki_t1_code_cols_lim(J2kiT1State *st, int numbps, int cblk_style, int bypass_start,
                                  int frac_bits, uint8_t *buf, uint32_t cap, J2kiPass *passes,
                                  int max_passes, uint32_t *len, int lim)
{
    int nb_passes = 3 * numbps - 2, i, ret;
    J2kiT1Seg sg;
    if (nb_passes > max_passes || numbps > J2KI_T1_MAX_PLANES)
        return J2KC_ERR_BUFSIZE;
    if (lim > 0 && lim < nb_passes)
        nb_passes = lim;                  /* tier-1's early stop (t1_stop.h): the block ends here */
    j2ki_mqc_reset_ctx(st->ctx);
    j2ki_t1_seg_init(&sg);
    for (i = 0; i < nb_passes; i++) {
        int k = (i + 2) / 3, type = (i + 2) % 3;
        int s = numbps - 1 - k + frac_bits, g = j2ki_t1_dist_shift(s);
        int raw = j2ki_t1_pass_raw(i, cblk_style, bypass_start);
        int term = j2ki_t1_pass_term(i, nb_passes, cblk_style, bypass_start);
        int64_t d;
        j2ki_t1_seg_open(&sg, &st->mqc, i, raw, buf, cap);
        if (type == 0)
            d = j2ki_t1_spp(st, s, g, raw);
        else if (type == 1)
            d = j2ki_t1_mrp(st, s, g, raw);
        else {
            d = j2ki_t1_cup(st, s, g);
            j2ki_t1_segmark(&st->mqc, st->ctx, cblk_style);
        }
        passes[i].dist = ldexp((double)d, 2 * g - 2 * frac_bits - 2);
        if ((ret = j2ki_t1_seg_close(&sg, &st->mqc, st->ctx, st->marks, i, raw, term, cblk_style, buf,
                                     passes)) != 0)
            return ret;
    }
    *len = (uint32_t)sg.seg_start;
    return 0;
}

/** j2ki_t1_code_cols_lim without a pass limit: every pass of the numbps bit-planes. */
J2KI_HD int j2ki_t1_code_cols(J2kiT1State *st, int numbps, int cblk_style, int bypass_start,
                              int frac_bits, uint8_t *buf, uint32_t cap, J2kiPass *passes,
                              int max_passes, uint32_t *len)
{
    return j2ki_t1_code_cols_lim(st, numbps, cblk_style, bypass_start, frac_bits, buf, cap, passes, max_passes,
                                 len, 0);
}

/**
 * Codes every pass of a loaded block (once: it turns the flags into stripe-column words)
 * with numbps bit-planes (1..J2KI_T1_MAX_PLANES) into
 * buf[0, cap): fills passes[0 .. 3 numbps - 3] (rate, est, dist, term; slope = 0) and *len;
 * with 0 < lim < 3 numbps - 2 only the first lim passes, the last one terminated.
 * Returns 0 or J2KC_ERR_BUFSIZE (cap or max_passes too small; nothing is written past cap).
 */
J2KI_HD int j2ki_t1_code_lim(J2kiT1State *st, int numbps, int cblk_style, int bypass_start,
                             int frac_bits, uint8_t *buf, uint32_t cap, J2kiPass *passes,
                             int max_passes, uint32_t *len, int lim)
{
    if (3 * numbps - 2 > max_passes || numbps > J2KI_T1_MAX_PLANES)
        return J2KC_ERR_BUFSIZE;
    j2ki_t1_build_cols(st);
    return j2ki_t1_code_cols_lim(st, numbps, cblk_style, bypass_start, frac_bits, buf, cap, passes, max_passes,
                                 len, lim);
}

J2KI_HD int j2ki_t1_code(J2kiT1State *st, int numbps, int cblk_style, int bypass_start,
                         int frac_bits, uint8_t *buf, uint32_t cap, J2kiPass *passes,
                         int max_passes, uint32_t *len)
{
    return j2ki_t1_code_lim(st, numbps, cblk_style, bypass_start, frac_bits, buf, cap, passes, max_passes, len, 0);
}

#endif /* J2KI_T1_CORE_H */
