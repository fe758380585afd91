/*
 * Tier-1 context modelling (ISO/IEC 15444-1 D.3) of one code-block, written column-parallel
 * ("lane x codes column x of a stripe"), separated from MQ coding (Annex C): each coding pass
 * becomes the ordered list of the (context, decision) pairs that the serial coder of
 * t1_core.h would feed to the MQ coder (or the bits it would feed to the raw packer, D.6),
 * its distortion sum, and the updated stripe-column words. j2ki_t1p_code() then feeds the
 * lists to mqc.h exactly as j2ki_t1_code_cols() does, so both give the same bytes, rates,
 * distortions and termination flags (tests/unit/test_t1_par.c compares them).
 *
 * Why it is exact. The passes visit the samples of a block stripe by stripe, column by column
 * inside a stripe, and row by row inside a stripe column (D.3, Figure D.2). Whether a sample
 * is coded by a pass, its contexts (zero coding D.3.1 Table D.1, sign coding D.3.2 Tables D.2
 * and D.3, refinement D.3.3 Table D.4, run-length D.3.4) and the decisions depend only on the
 * significance states (and fixed signs) of its 3 x 3 neighbourhood at the moment it is
 * visited. At that moment, relative to the pass:
 *   - the stripe above is final (visited before);
 *   - in column x - 1 of the same stripe all four rows are final, i.e. the stored word plus
 *     the rows that became significant there during this pass (the "left mask" L, 4 bits);
 *   - in its own column, the rows above it are final (the lane codes its column row by row);
 *   - column x + 1 and the stripe below still hold their state from before the pass.
 * So for a fixed stripe, everything lane x emits is a pure function f_x(L) of the stored
 * words (before the stripe is coded), the magnitudes of column x and the left mask L, and
 * its own output includes the mask f_x(L) of rows that became significant, which is the
 * left mask of column x + 1. The magnitude refinement pass has no such dependency (it does
 * not change significance); the significance propagation and cleanup passes do (a newly
 * significant sample adds neighbours to the SPP's candidates and changes zero-coding, sign
 * and run-length decisions of column x + 1 and of the rows below it).
 *
 * The cleanup pass is simpler than that: it codes every row that is insignificant and not
 * coded by the SPP (run-length mode included), so the rows it makes significant are those
 * with a magnitude bit of 1 among them, known from the stored word alone; only the contexts
 * depend on L, and L is known before any lane codes.
 *
 * Resolving the SPP chain in parallel (phase 1 below): every lane assumes L = 0 and
 * computes the mask of rows it would make significant (j2ki_t1p_spp_sig: without the
 * symbols, a carry of the rows whose stored neighbourhood is significant down through the
 * insignificant rows whose bit is 1, ten bit operations for the column; the part that does
 * not depend on L is computed once per stripe, j2ki_t1p_spp_nb); then each lane compares its
 * assumption with the mask that column x - 1 has just produced, takes that mask and, if any
 * lane's assumption was wrong (a warp ballot), all lanes compute again. Column 0 has no left
 * neighbour, so it is right after round 1, and by induction column x after round x + 1: at
 * most w rounds. When no lane's assumption changed, the masks are the fixed point
 * m_x = f_x(m_(x-1)), m_(-1) = 0, which is exactly the serial recurrence. A newly
 * significant sample rarely changes the next column's new-significance mask, so on DWT data
 * the mean is about 2.5 rounds per stripe (test_t1_par prints the statistics). Only then
 * does each lane code its column, once, with its final L.
 *
 * Phases of one stripe (a GPU puts __syncwarp() at each boundary; the host runs each phase
 * as a loop over the lanes):
 *   0 load:   lane x reads the stripe-column words of columns x - 1, x, x + 1 (of x +- 1
 *             only the chi bits, which never change) and the magnitude bits of its column;
 *   1 masks:  the new-significance mask of every column: cleanup directly; SPP by the
 *             rounds above (shuffle up by one lane + ballot per round); MRP: none. Each lane
 *             then takes its left neighbour's mask as L;
 *   2 code:   lane x codes its column (j2ki_t1p_spp_col / j2ki_t1p_mrp_col /
 *             j2ki_t1p_cup_col) into lane-private storage: symbols (<= 10), mask, pi / mu
 *             bits, distortion terms;
 *   3 scan:   prefix sum of the per-column symbol counts (log2 w steps), plus the stripe's
 *             total (the next stripe's base);
 *   4 emit:   lane x copies its symbols to [base + offset_x, ...) of the pass's list, adds
 *             its distortion terms to the pass sum (integer, so any order gives the serial
 *             sum exactly);
 *   5 update: lane x rewrites the words of column x: in this stripe sigma of rows 1..4 for
 *             columns x - 1, x, x + 1 (from the three new-significance masks), pi (SPP) or mu
 *             (MRP) bits, pi cleared (cleanup); row 5 of the stripe above (from the masks'
 *             row 0) and row 0 of the stripe below (from row 3). Each lane writes only its
 *             own column, so there are no write conflicts; the padding columns -1 and w
 *             (written by the serial coder too) are updated by lanes 0 and w - 1.
 * Stripes are coded one after the other (stripe k + 1's contexts read stripe k's final state).
 *
 * Symbols: one byte each, context << 1 | decision (contexts 0..18, mqc.h / t1_core.h);
 * raw (bypass) bits as J2KI_T1P_CX_RAW << 1 | bit. A pass yields at most 2 symbols per
 * sample plus 2 per full stripe column (the run-length and two uniform symbols replace at
 * most one zero-coding symbol), J2KI_T1P_MAX_SYMS for a block of at most 4096 samples.
 *
 * What the CUDA port must keep: the visiting order and the fixed-point test exactly as here
 * (one mask evaluation per lane per round, the comparison of the assumed with the produced left
 * mask as the ballot), the prefix-sum ordering of the symbols, integer distortion partial
 * sums, the update of the padding columns if the words are compared, and the stripe order.
 * For w > 32 a lane takes columns x and x + 32 (the left neighbour of column 32 is lane 31's
 * first column); for w > 64 the stripe is coded in groups of 64 columns, in column order,
 * the final mask of a group's last column being the left mask of the next group's first
 * (t1p_model_warp in t1_par_cuda.cuh).
 */
#ifndef J2KI_T1_PAR_H
#define J2KI_T1_PAR_H

#include <stdint.h>
#include <string.h>

#include "hd/t1_core.h"

#define J2KI_T1P_MAX_W     1024   /* widest code-block (Part 1: 2^10), the GPU port's too */
#define J2KI_T1P_COL_SYMS  10     /* run-length + 2 uniform + sign + 3 x (zero coding + sign) */
#define J2KI_T1P_MAX_SYMS  10240  /* 2 * 4096 + 2 * 1024: symbols of one pass, <= 4096 samples */
#define J2KI_T1P_CX_RAW    31     /* context field of a raw (bypass) bit */
#define J2KI_T1P_SYM(cx, d) ((uint8_t)((uint32_t)(cx) << 1 | (uint32_t)(d)))

/** Counters of the column-parallel passes, by pass type (0 SPP, 1 MRP, 2 cleanup). */
typedef struct J2kiT1pStats {
    uint64_t nb_passes[3];
    uint64_t nb_syms[3];
    uint64_t nb_stripes[3];       /**< stripe-passes */
    uint64_t rounds[3];           /**< sum over stripe-passes of the rounds phase 1 took
                                       (SPP; 1 for the others) */
    int      max_rounds[3];
    uint64_t hist[3][9];          /**< stripe-passes that took 1..8 rounds, [8]: 9 or more */
} J2kiT1pStats;

/** Constant inputs of one pass. */
typedef struct J2kiT1pPass {
    const uint8_t *zc;            /**< zero-coding row of the band's class */
    uint32_t      *cols;          /**< stripe-column words */
    const uint32_t *mag;
    int            stride;        /**< of mag, and words per stripe: w + 2 */
    int            w, h, nb_stripes;
    uint32_t       vcw;           /**< J2KI_T1_VC_WORD with VCAUSAL, else all ones */
    int            s, g, raw;
    uint32_t       lmask, base;   /**< as J2kiT1Pass (t1_core.h) */
} J2kiT1pPass;

/** What one lane produces for its column in one evaluation (lane-private storage). */
typedef struct J2kiT1pCol {
    uint32_t q0, q1, q2;          /**< the symbols as a 12-byte queue, pushed in at the top
                                       (byte 11) and shifted down: symbol q of n at byte
                                       12 - n + q (J2KI_T1P_COL_SYMS <= 12) */
    int      n;                   /**< symbols */
    uint32_t sig;                 /**< rows (bit r) that became significant */
    uint32_t set;                 /**< pi (SPP) or mu (MRP) bits to set in the word */
    int32_t  sum;                 /**< distortion terms, factored as the serial pass: at most
                                       4 of them, each of magnitude below 5 * 2^18
                                       (j2ki_t1_sig_term, j2ki_t1_ref_term; J2KI_T1_DIST_BITS
                                       = 18), so 32 bits hold the column's sum */
} J2kiT1pCol;

/* A column's symbols are packed in three integers rather than a byte array, and its
 * magnitudes are read through j2ki_t1p_mg: on the GPU an array indexed by a run-time row or
 * symbol number lives in local memory, these stay in registers. A push shifts the queue down
 * by a byte (funnel shifts, no run-time shift amounts or branches on the count). */
J2KI_HD uint32_t j2ki_t1p_fsr8(uint32_t lo, uint32_t hi)
{
#if defined(__CUDA_ARCH__)
    return __funnelshift_r(lo, hi, 8);
#else
    return lo >> 8 | hi << 24;
#endif
}

J2KI_HD void j2ki_t1p_push(J2kiT1pCol *o, uint32_t sym)
{
    o->q0 = j2ki_t1p_fsr8(o->q0, o->q1);
    o->q1 = j2ki_t1p_fsr8(o->q1, o->q2);
    o->q2 = j2ki_t1p_fsr8(o->q2, sym);
    o->n++;
}

J2KI_HD uint8_t j2ki_t1p_col_sym(const J2kiT1pCol *o, int q)
{
    const uint32_t b = (uint32_t)(12 - o->n + q), v = b < 4 ? o->q0 : b < 8 ? o->q1 : o->q2;
    return (uint8_t)(v >> (8 * (b & 3)));
}

/** The symbols in order from byte 0 of w[0..2] (symbol q in byte q & 3 of w[q >> 2]): the
 *  queue shifted down by its 12 - n empty bytes, once per column, so that a caller can take
 *  symbol q at a constant position. */
J2KI_HD void j2ki_t1p_col_words(const J2kiT1pCol *o, uint32_t w[3])
{
    const uint32_t e = (uint32_t)(12 - o->n), sh = 8 * (e & 3);
    uint32_t a = o->q0, b = o->q1, c = o->q2;
    if (e & 8) {                          /* 8..12 empty bytes: only q2 holds symbols */
        a = c;
        b = 0;
        c = 0;
    } else if (e & 4) {
        a = b;
        b = c;
        c = 0;
    }
    w[0] = sh ? (a >> sh | b << (32 - sh)) : a;
    w[1] = sh ? (b >> sh | c << (32 - sh)) : b;
    w[2] = c >> sh;
}

J2KI_HD void j2ki_t1p_col_clear(J2kiT1pCol *o)
{
    o->q0 = 0;
    o->q1 = 0;
    o->q2 = 0;
    o->n = 0;
    o->sig = 0;
    o->set = 0;
    o->sum = 0;
}

/* The row loops of the column coders are unrolled on the device: with r a constant in each
 * copy, the shifts by 3r and the choice of mg[r] fold into the instructions, and a row a lane
 * does not code is one predicate. */
#if defined(__CUDA_ARCH__)
#define J2KI_T1P_ROWS_UNROLL _Pragma("unroll")
#else
#define J2KI_T1P_ROWS_UNROLL
#endif

/** mg[r], r in 0..3, by selection (no run-time array index). */
J2KI_HD uint32_t j2ki_t1p_mg(const uint32_t *mg, int r)
{
    const uint32_t a = (r & 1) ? mg[1] : mg[0], b = (r & 1) ? mg[3] : mg[2];
    return (r & 2) ? b : a;
}

/** Per-stripe scratch of the lanes (a GPU keeps it in registers and shared memory). */
typedef struct J2kiT1pStripe {
    uint32_t   word[J2KI_T1P_MAX_W + 2];  /**< phase 0: words of columns -1 .. w (index x + 1) */
    uint32_t   bits[J2KI_T1P_MAX_W];      /**< phase 0: magnitude bits at s of each column */
    uint32_t   sig[J2KI_T1P_MAX_W];       /**< phase 1: new-significance mask of each column */
    uint32_t   left[J2KI_T1P_MAX_W];      /**< phase 1: assumed left mask of each lane */
    J2kiT1pCol col[J2KI_T1P_MAX_W];       /**< phase 2: what each lane coded */
    uint32_t   off[J2KI_T1P_MAX_W];       /**< phase 3: inclusive prefix sum of col[].n */
    uint32_t   tmp[J2KI_T1P_MAX_W];
} J2kiT1pStripe;

/** A pass of a w x h block at bit-plane s (g: j2ki_t1_dist_shift), zero-coding row zc, vcw
 *  J2KI_T1_VC_WORD with VCAUSAL else all ones; cols, mag and stride: the host model's arrays
 *  (the CUDA kernel keeps the words in shared memory and passes NULL). */
J2KI_HD J2kiT1pPass j2ki_t1p_pass_init(const uint8_t *zc, uint32_t *cols, const uint32_t *mag, int stride,
                                       int w, int h, uint32_t vcw, int s, int g, int raw)
{
    J2kiT1pPass p;
    p.zc = zc;
    p.cols = cols;
    p.mag = mag;
    p.stride = stride;
    p.w = w;
    p.h = h;
    p.nb_stripes = (h + 3) >> 2;
    p.vcw = vcw;
    p.s = s;
    p.g = g;
    p.raw = raw;
    p.lmask = (1u << (s - g)) - 1u;
    p.base = p.lmask + 2u + (g > 0);
    return p;
}

J2KI_HD J2kiT1pPass j2ki_t1p_pass_begin(J2kiT1State *st, int s, int g, int raw)
{
    return j2ki_t1p_pass_init(J2KI_T1_ZC + 2 * st->zc_off, (uint32_t *)(void *)st->flags, st->mag, st->stride,
                              st->w, st->h, st->vc_mask != 0xFFFFu ? J2KI_T1_VC_WORD : 0xFFFFFFFFu, s, g, raw);
}

/** Rows (bit r, 0..3) spread to bits 3r: the row bit of sigma at row j = r + 1 is then 3 + 3r. */
J2KI_HD uint32_t j2ki_t1p_spread(uint32_t m)
{
    return (m & 1u) | (m & 2u) << 2 | (m & 4u) << 4 | (m & 8u) << 6;
}

/** Sign-coding symbol (D.3.2) of row r: wm the column's word (VCAUSAL mask applied), cl and
 *  cr the words of columns x - 1 and x + 1 (only their chi bits are read). As j2ki_t1_code_sign,
 *  through the table J2KI_T1_SC (t1_core.h). */
J2KI_HD uint8_t j2ki_t1p_sign_sym(uint32_t wm, uint32_t cl, uint32_t cr, int r)
{
    return (uint8_t)(J2KI_T1_SC[j2ki_t1_sc_index(wm, cl, cr, r)] ^ ((wm >> (19 + r)) & 1));
}

/** Zero coding (D.3.1) of insignificant row r with magnitude mg, and its sign if it becomes
 *  significant (raw: the bits, D.6); *w is the column's current word. SPP and cleanup. */
J2KI_HD void j2ki_t1p_zc(const J2kiT1pPass *p, J2kiT1pCol *o, uint32_t *w, uint32_t cl,
                         uint32_t cr, int r, uint32_t mg)
{
    uint32_t wm = *w & p->vcw, bit = (mg >> p->s) & 1;
    j2ki_t1p_push(o, p->raw ? J2KI_T1P_SYM(J2KI_T1P_CX_RAW, bit)
                            : J2KI_T1P_SYM(p->zc[(wm >> (3 * r)) & 0x1FFu], bit));
    if (bit) {
        j2ki_t1p_push(o, p->raw ? J2KI_T1P_SYM(J2KI_T1P_CX_RAW, (wm >> (19 + r)) & 1)
                                : j2ki_t1p_sign_sym(wm, cl, cr, r));
        *w |= J2KI_T1_SIGMA(1, 1) << (3 * r);
        o->sig |= 1u << r;
        o->sum += (int32_t)j2ki_t1_sig_term(mg, p->g, p->lmask, p->base);
    }
}

/**
 * Rows (bit r, 0..3) insignificant in word w.
 */
J2KI_HD uint32_t j2ki_t1p_ins(uint32_t w)
{
    return j2ki_t1_rows(~(w >> 4) & 0x249u);
}

/**
 * Rows of column x that the SPP makes significant when the rows `left` of column x - 1 did
 * (bits: the column's magnitude bits at s, j2ki_t1p_bits), without coding them. Row r is coded
 * when, at its turn, it is insignificant with a significant neighbour; of its neighbours only
 * row r - 1 of its own column can have changed by then (column x - 1 is in `left`, the rest
 * is as stored), so with A the rows whose stored neighbourhood (plus `left`) is significant
 * and whose bit is 1, and P the insignificant rows whose bit is 1, the rows that become
 * significant are the runs of P going down from a row of A:
 *   sig_r = A_r | (P_r & sig_(r-1)),
 * three shift-and-or steps for 4 rows (the carry of a row through the rows below it).
 */
J2KI_HD uint32_t j2ki_t1p_spp_fill(uint32_t nb, uint32_t pr, uint32_t left)
{
    uint32_t sig = (nb | left | left << 1 | left >> 1) & pr;
    sig |= pr & sig << 1;
    sig |= pr & sig << 1;
    sig |= pr & sig << 1;
    return sig;
}

/* The stripe's part of j2ki_t1p_spp_fill, fixed while the rounds of phase 1 change `left`:
 * nb the rows whose stored neighbourhood is significant (as j2ki_t1_spp_rows: the west
 * column's rows r - 1, r, r + 1 are then added as left | left << 1 | left >> 1), pr the
 * insignificant rows whose bit is 1. */
J2KI_HD uint32_t j2ki_t1p_spp_nb(const J2kiT1pPass *p, uint32_t word)
{
    return j2ki_t1_spp_rows(word & p->vcw);
}

J2KI_HD uint32_t j2ki_t1p_spp_sig(const J2kiT1pPass *p, uint32_t word, uint32_t left,
                                  uint32_t bits, int nr)
{
    (void)nr;                                         /* bits holds only rows < nr */
    return j2ki_t1p_spp_fill(j2ki_t1p_spp_nb(p, word), bits & j2ki_t1p_ins(word), left);
}

/**
 * Lane x of a significance propagation pass (D.3.1) on a stripe of nr rows: word is the
 * column's stored word, left the rows of column x - 1 that became significant in this pass
 * (assumed or final), cl / cr the neighbour words, mg[r] the magnitudes and bits their bits
 * at s. The rows coded are known before any is coded: those with a significant stored
 * neighbourhood (west bits of `left` included) or whose row above becomes significant
 * (j2ki_t1p_spp_sig), insignificant ones only.
 */
J2KI_HD void j2ki_t1p_spp_col(const J2kiT1pPass *p, J2kiT1pCol *o, uint32_t word, uint32_t left,
                              uint32_t cl, uint32_t cr, const uint32_t *mg, uint32_t bits, int nr)
{
    uint32_t w = word | j2ki_t1p_spread(left) << 3;
    const uint32_t nb = j2ki_t1p_spp_nb(p, word), ins = j2ki_t1p_ins(word);
    const uint32_t sig = j2ki_t1p_spp_fill(nb, bits & ins, left);
    uint32_t todo = (nb | left | left << 1 | left >> 1 | sig << 1) & ins & ((1u << nr) - 1u);
    j2ki_t1p_col_clear(o);
    J2KI_T1P_ROWS_UNROLL
    for (int r = 0; r < 4; r++) {
        if ((todo >> r) & 1) {
            j2ki_t1p_zc(p, o, &w, cl, cr, r, j2ki_t1p_mg(mg, r));
            o->set |= J2KI_T1_PI(r);
        }
    }
}

/** Lane x of a magnitude refinement pass (D.3.3): no dependency on other columns. */
J2KI_HD void j2ki_t1p_mrp_col(const J2kiT1pPass *p, J2kiT1pCol *o, uint32_t word,
                              const uint32_t *mg, int nr)
{
    uint32_t wm = word & p->vcw;
    uint32_t todo = j2ki_t1_mrp_rows(word) & ((1u << nr) - 1u);
    j2ki_t1p_col_clear(o);
    J2KI_T1P_ROWS_UNROLL
    for (int r = 0; r < 4; r++) {
        if (!((todo >> r) & 1))
            continue;
        uint32_t m = j2ki_t1p_mg(mg, r), bit = (m >> p->s) & 1, mu, nz;
        if (p->raw) {
            j2ki_t1p_push(o, J2KI_T1P_SYM(J2KI_T1P_CX_RAW, bit));
        } else {
            /* Table D.4: 16 after the first refinement, else 15 with a significant
             * neighbour (3 x 3 less the sample), else 14 */
            mu = (wm >> (28 + r)) & 1;
            nz = ((wm >> (3 * r)) & 0x1EFu) != 0;
            j2ki_t1p_push(o, J2KI_T1P_SYM(14 + (nz | mu) + mu, bit));
        }
        o->sum += j2ki_t1_ref_term(m, p->s, p->g, p->lmask);
        o->set |= J2KI_T1_MU(r);
    }
}

/**
 * Lane x of a cleanup pass (D.3.4): run-length mode when the column is a full stripe column
 * whose (VCAUSAL-masked) 3 x 6 window holds no significant sample and no row was coded by the
 * SPP; else zero coding of every row that is insignificant and not coded by the SPP. The
 * window's west column includes `left`, so the choice depends on column x - 1 like the
 * contexts do. The caller clears pi afterwards (phase 5).
 */
J2KI_HD void j2ki_t1p_cup_col(const J2kiT1pPass *p, J2kiT1pCol *o, uint32_t word, uint32_t left,
                              uint32_t cl, uint32_t cr, const uint32_t *mg, int nr)
{
    const uint32_t rl_busy = (J2KI_T1_SIGMA_ALL | J2KI_T1_PI_ALL) & p->vcw;
    uint32_t w = word | j2ki_t1p_spread(left) << 3, todo;
    int r;
    j2ki_t1p_col_clear(o);
    if (nr == 4 && !(w & rl_busy)) {
        uint32_t bits = ((mg[0] >> p->s) & 1) | ((mg[1] >> p->s) & 1) << 1 |
                        ((mg[2] >> p->s) & 1) << 2 | ((mg[3] >> p->s) & 1) << 3;
        j2ki_t1p_push(o, J2KI_T1P_SYM(J2KI_T1_CTX_RL, bits != 0));
        if (!bits)
            return;
        r = j2ki_t1_ctz(bits);
        j2ki_t1p_push(o, J2KI_T1P_SYM(J2KI_T1_CTX_UNI, (uint32_t)r >> 1));
        j2ki_t1p_push(o, J2KI_T1P_SYM(J2KI_T1_CTX_UNI, (uint32_t)r & 1));
        j2ki_t1p_push(o, j2ki_t1p_sign_sym(w & p->vcw, cl, cr, r));
        w |= J2KI_T1_SIGMA(1, 1) << (3 * r);
        o->sig |= 1u << r;
        o->sum += (int32_t)j2ki_t1_sig_term(j2ki_t1p_mg(mg, r), p->g, p->lmask, p->base);
        todo = 0xEu << r & 0xFu;          /* the rows below: insignificant, not visited */
    } else {
        todo = j2ki_t1_cup_rows(w) & ((1u << nr) - 1u);
    }
    J2KI_T1P_ROWS_UNROLL
    for (r = 0; r < 4; r++)
        if ((todo >> r) & 1)
            j2ki_t1p_zc(p, o, &w, cl, cr, r, j2ki_t1p_mg(mg, r));
}

/** Magnitude bits at s of the nr rows of column x of stripe k (bit r). */
J2KI_HD uint32_t j2ki_t1p_bits(const J2kiT1pPass *p, int k, int x)
{
    const int nr = j2ki_imin(4, p->h - 4 * k);
    const uint32_t *mp = p->mag + (4 * k + 1) * p->stride + x + 1;
    uint32_t bits = 0;
    int r;
    for (r = 0; r < nr; r++)
        bits |= ((mp[r * p->stride] >> p->s) & 1) << r;
    return bits;
}

/**
 * Rows of column x of stripe k that a cleanup pass makes significant, from the stored word and
 * the magnitudes alone: the cleanup codes every row that is insignificant and was not coded
 * by the SPP (the run-length mode codes all four rows too, the first significant one through
 * the uniform symbols), so its new-significance mask does not depend on column x - 1.
 */
J2KI_HD uint32_t j2ki_t1p_cup_sig(const J2kiT1pPass *p, uint32_t word, uint32_t bits)
{
    return bits & j2ki_t1_cup_rows(word);
}

/** Phase 1 body: evaluates lane x's column of stripe k (type 0 SPP, 1 MRP, 2 cleanup). */
J2KI_HD void j2ki_t1p_eval(const J2kiT1pPass *p, J2kiT1pStripe *sc, int type, int k, int x)
{
    const int nr = j2ki_imin(4, p->h - 4 * k);
    const uint32_t *mp = p->mag + (4 * k + 1) * p->stride + x + 1;
    uint32_t mg[4] = { 0, 0, 0, 0 };
    int r;
    for (r = 0; r < nr; r++)
        mg[r] = mp[r * p->stride];
    if (type == 0)
        j2ki_t1p_spp_col(p, &sc->col[x], sc->word[x + 1], sc->left[x], sc->word[x],
                         sc->word[x + 2], mg, sc->bits[x], nr);
    else if (type == 1)
        j2ki_t1p_mrp_col(p, &sc->col[x], sc->word[x + 1], mg, nr);
    else
        j2ki_t1p_cup_col(p, &sc->col[x], sc->word[x + 1], sc->left[x], sc->word[x],
                         sc->word[x + 2], mg, nr);
}

/**
 * Phase 4 body for column x (-1 .. w) of stripe k: new sigma bits from the new-significance
 * masks of columns x - 1, x, x + 1 (rows 1..4 here, row 5 of the stripe above, row 0 of the
 * stripe below), the pass's pi / mu bits, pi cleared after a cleanup pass.
 */
J2KI_HD void j2ki_t1p_update(const J2kiT1pPass *p, const J2kiT1pStripe *sc, int type, int k, int x)
{
    uint32_t nw = x >= 1 ? sc->col[x - 1].sig : 0;
    uint32_t nc = x >= 0 && x < p->w ? sc->col[x].sig : 0;
    uint32_t ne = x + 1 < p->w ? sc->col[x + 1].sig : 0;
    uint32_t *cp = p->cols + k * p->stride + x + 1;
    uint32_t wd = sc->word[x + 1] | j2ki_t1p_spread(nw) << 3 | j2ki_t1p_spread(nc) << 4 |
                  j2ki_t1p_spread(ne) << 5;
    if (x >= 0 && x < p->w)
        wd |= sc->col[x].set;
    if (type == 2)
        wd &= ~J2KI_T1_PI_ALL;
    *cp = wd;
    if (k > 0)
        cp[-p->stride] |= ((nw & 1) | (nc & 1) << 1 | (ne & 1) << 2) << 15;          /* row 5 */
    if (k + 1 < p->nb_stripes)
        cp[p->stride] |= ((nw >> 3) & 1) | ((nc >> 3) & 1) << 1 | ((ne >> 3) & 1) << 2; /* row 0 */
}

/**
 * Context modelling of one whole pass (type 0 SPP, 1 MRP, 2 cleanup; raw: BYPASS bits) at
 * bit s with distortion shift g: writes its symbols in serial order to syms (room for
 * J2KI_T1P_MAX_SYMS when w * h <= 4096), their number to *nb_syms, updates the words, and
 * returns the distortion as the serial pass does. sc: scratch; stats: NULL or counters.
 */
J2KI_HD int64_t j2ki_t1p_pass(J2kiT1State *st, J2kiT1pStripe *sc, int type, int s, int g, int raw,
                              uint8_t *syms, uint32_t *nb_syms, J2kiT1pStats *stats)
{
    const J2kiT1pPass p = j2ki_t1p_pass_begin(st, s, g, raw);
    uint32_t base = 0;
    int64_t sum = 0;
    int k, x, d;
    for (k = 0; k < p.nb_stripes; k++) {
        int rounds = 0, changed;
        /* phase 0: load */
        for (x = -1; x <= p.w; x++)
            sc->word[x + 1] = p.cols[k * p.stride + x + 1];
        for (x = 0; x < p.w; x++)
            sc->bits[x] = j2ki_t1p_bits(&p, k, x);
        /* phase 1: new-significance masks. Cleanup: known from the word and the bits (each
         * lane, then a shuffle up by one). SPP: rounds of every lane assuming the mask of its
         * left neighbour from the previous round (first: none), until no lane's assumption
         * changed (a ballot); the masks are then the serial ones. */
        for (x = 0; x < p.w; x++) {
            sc->left[x] = 0;
            sc->sig[x] = type == 2 ? j2ki_t1p_cup_sig(&p, sc->word[x + 1], sc->bits[x]) : 0;
        }
        if (type == 0) {
            const int nr = j2ki_imin(4, p.h - 4 * k);
            do {
                rounds++;
                for (x = 0; x < p.w; x++)
                    sc->sig[x] = j2ki_t1p_spp_sig(&p, sc->word[x + 1], sc->left[x], sc->bits[x], nr);
                changed = 0;
                for (x = 1; x < p.w; x++) {                     /* shuffle up + ballot */
                    changed |= sc->sig[x - 1] != sc->left[x];
                    sc->left[x] = sc->sig[x - 1];
                }
            } while (changed);
        } else {
            rounds = 1;
            for (x = 1; x < p.w; x++)
                sc->left[x] = sc->sig[x - 1];
        }
        /* phase 2: every lane codes its column with the final left mask */
        for (x = 0; x < p.w; x++)
            j2ki_t1p_eval(&p, sc, type, k, x);
        /* phase 3: exclusive prefix sum of the counts (Hillis-Steele, log2 w steps) */
        for (x = 0; x < p.w; x++)
            sc->off[x] = (uint32_t)sc->col[x].n;
        for (d = 1; d < p.w; d <<= 1) {
            for (x = 0; x < p.w; x++)
                sc->tmp[x] = sc->off[x] + (x >= d ? sc->off[x - d] : 0);
            for (x = 0; x < p.w; x++)
                sc->off[x] = sc->tmp[x];
        }
        /* phase 4: emit (off[] is inclusive now: subtract the lane's own count) */
        for (x = 0; x < p.w; x++) {
            uint32_t o = base + sc->off[x] - (uint32_t)sc->col[x].n;
            int i;
            for (i = 0; i < sc->col[x].n; i++)
                syms[o + (uint32_t)i] = j2ki_t1p_col_sym(&sc->col[x], i);
            sum += sc->col[x].sum;
        }
        base += p.w ? sc->off[p.w - 1] : 0;
        /* phase 5: update the words of columns -1 .. w */
        for (x = -1; x <= p.w; x++)
            j2ki_t1p_update(&p, sc, type, k, x);
        if (stats) {
            stats->nb_stripes[type]++;
            stats->rounds[type] += (uint64_t)rounds;
            if (rounds > stats->max_rounds[type])
                stats->max_rounds[type] = rounds;
            stats->hist[type][rounds > 8 ? 8 : rounds - 1]++;
        }
    }
    *nb_syms = base;
    if (stats) {
        stats->nb_passes[type]++;
        stats->nb_syms[type] += base;
    }
    if (type == 1)
        return ((int64_t)1 << (s - g)) * sum;
    return j2ki_t1_sig_scale(s, g) * sum;
}

/** Feeds a pass's symbols to the MQ coder (or the raw packer) mqc, context states ctx. */
J2KI_HD void j2ki_t1p_feed(J2kiMqc *mqc, uint16_t *ctx, const uint8_t *syms, uint32_t n, int raw)
{
    uint32_t i;
#ifdef __CUDA_ARCH__
    /* On the device the list is read a 32-bit word at a time, the next word loaded 4 symbols
     * ahead, so that no symbol waits on its own load: the loads leave the dependency chain of
     * the coder (context state -> Qe -> A, C). Every word read holds a symbol of the list. */
    if (!n)
        return;
    const uintptr_t adr = (uintptr_t)syms;
    const uint32_t *w = (const uint32_t *)(adr & ~(uintptr_t)3);
    uint32_t left = 4 - (uint32_t)(adr & 3), cur = w[0] >> (8 * (adr & 3)), nxt = left < n ? w[1] : 0;
    J2kiMqcReg r = j2ki_mqc_reg_get(mqc);
    for (i = 0; i < n; i++) {
        uint32_t s;
        if (!left) {                       /* symbol i starts word w + 1 */
            cur = nxt;
            left = 4;
            w++;
            nxt = i + 4 < n ? w[1] : 0;
        }
        s = cur & 0xFF;
        cur >>= 8;
        left--;
        if (raw)
            j2ki_mqc_raw_put(mqc, s & 1);
        else
            j2ki_mqc_encode_r(mqc, &r, &ctx[s >> 1], s & 1);
    }
    if (!raw)
        j2ki_mqc_reg_put(mqc, &r);
#else
    if (raw) {
        for (i = 0; i < n; i++)
            j2ki_mqc_raw_put(mqc, syms[i] & 1);
    } else {
        J2kiMqcReg r = j2ki_mqc_reg_get(mqc);
        for (i = 0; i < n; i++)
            j2ki_mqc_encode_r(mqc, &r, &ctx[syms[i] >> 1], syms[i] & 1);
        j2ki_mqc_reg_put(mqc, &r);
    }
#endif
}

/**
 * The MQ side of j2ki_t1p_code, one pass at a time, so that a caller can feed the passes in
 * separate calls or kernels (t1_cuda.cu, J2KI_T1_CUDA_PAR), with the segment bookkeeping of
 * the serial coder (t1_core.h: J2kiT1Seg). The MQ coder, its context states and the marks are
 * passed apart (a J2kiT1pMq), so that a kernel can keep the coder in registers and the
 * contexts in fast memory for a run of passes and store them between runs.
 */
typedef struct J2kiT1pMq {
    J2kiMqc     *mqc;
    uint16_t    *ctx;
    J2kiMqcMark *marks;
} J2kiT1pMq;

J2KI_HD J2kiT1pMq j2ki_t1p_mq(J2kiT1State *st)
{
    J2kiT1pMq q;
    q.mqc = &st->mqc;
    q.ctx = st->ctx;
    q.marks = st->marks;
    return q;
}

J2KI_HD void j2ki_t1p_coder_init(uint16_t *ctx, J2kiT1Seg *sg)
{
    j2ki_mqc_reset_ctx(ctx);
    j2ki_t1_seg_init(sg);
}

/**
 * MQ coding of pass i (of nb_passes) from its n symbols (j2ki_t1p_pass), exactly as
 * j2ki_t1_code_cols() does around its pass. passes[i].dist is the caller's. Returns 0 or
 * J2KC_ERR_BUFSIZE (cap exceeded).
 */
J2KI_HD int j2ki_t1p_code_pass(J2kiT1pMq q, J2kiT1Seg *sg, int i, int nb_passes,
                               int cblk_style, int bypass_start, const uint8_t *syms, uint32_t n,
                               uint8_t *buf, uint32_t cap, J2kiPass *passes)
{
    int type = (i + 2) % 3;
    int raw = j2ki_t1_pass_raw(i, cblk_style, bypass_start);
    int term = j2ki_t1_pass_term(i, nb_passes, cblk_style, bypass_start);
    j2ki_t1_seg_open(sg, q.mqc, i, raw, buf, cap);
    j2ki_t1p_feed(q.mqc, q.ctx, syms, n, raw);
    if (type == 2)
        j2ki_t1_segmark(q.mqc, q.ctx, cblk_style);
    return j2ki_t1_seg_close(sg, q.mqc, q.ctx, q.marks, i, raw, term, cblk_style, buf, passes);
}

/*
 * A raw (BYPASS) pass packed by the modelling side (t1_par_cuda.cuh, t1p_pack_raw): in place
 * of its symbols, the bytes it completed, and one word that says how many and the packer's
 * state after them: bytes 0..12, ct 13..16, c 17..23 (at most 7 bits wait in a byte), b 24..31.
 * A pass of at most 8192 raw bits (two per sample of a 4096-sample block) completes at most
 * 1171 bytes.
 */
#define J2KI_T1P_PACKED(k, c, ct, b) ((uint32_t)(k) | (uint32_t)(ct) << 13 | (uint32_t)(c) << 17 | (uint32_t)(b) << 24)
#define J2KI_T1P_PACKED_BYTES(v) ((v) & 0x1FFFu)

/**
 * j2ki_t1p_code_pass for a raw pass that arrives packed (J2KI_T1P_PACKED word v, its bytes at
 * bytes): the segment bookkeeping is the same, the bits are not put one by one.
 */
J2KI_HD int j2ki_t1p_code_packed(J2kiT1pMq q, J2kiT1Seg *sg, int i, int nb_passes, int cblk_style,
                                 int bypass_start, const uint8_t *bytes, uint32_t v, uint8_t *buf, uint32_t cap,
                                 J2kiPass *passes)
{
    int term = j2ki_t1_pass_term(i, nb_passes, cblk_style, bypass_start);
    j2ki_t1_seg_open(sg, q.mqc, i, 1, buf, cap);
    j2ki_mqc_raw_append(q.mqc, bytes, J2KI_T1P_PACKED_BYTES(v), (v >> 17) & 0x7Fu, (int)((v >> 13) & 0xFu),
                        (int)(v >> 24));
    return j2ki_t1_seg_close(sg, q.mqc, q.ctx, q.marks, i, 1, term, cblk_style, buf, passes);
}

/**
 * Symbol j of a list of total symbols read a 32-bit word at a time (j2ki_t1p_code_run): cur
 * holds the next *left of them, nxt the word after cur's (*w), loaded 4 symbols ahead, and
 * never a word that holds no symbol of the list. Past the list's end, 0 (a symbol whose
 * context state the caller may read and not use). Without branches but the predicated load.
 */
J2KI_MQC_HOT uint32_t j2ki_t1p_sym_next(const uint32_t **w, uint32_t *cur, uint32_t *nxt, uint32_t *left,
                                        uint32_t j, uint32_t total)
{
    const int refill = !*left;         /* symbol j starts word *w + 1 */
    uint32_t s;
    *cur = refill ? *nxt : *cur;
    *left = refill ? 4 : *left;
    *w += refill;
    if (refill)
        *nxt = j + 4 < total ? (*w)[1] : 0;
    s = j < total ? *cur & 0xFF : 0;
    *cur >>= 8;
    *left -= 1;
    return s;
}

/**
 * j2ki_t1p_code_pass (and j2ki_t1p_code_packed for the packed raw passes) for passes i0 ..
 * i1 - 1 of a block, whose symbol lists lie back to back at syms (cnt[i - i0] symbols, or the
 * packed word, of pass i): the same calls on the coder in the same order, so the same bytes,
 * rates and marks. Returns 0 or J2KC_ERR_BUFSIZE. A packed raw pass takes only its bytes,
 * back to back with the next pass's symbols (packed by the modelling warp, t1_par_cuda.cuh).
 *
 * The flat loop: when the code-block style has no BYPASS, RESET, TERMALL or SEGMARK, the block
 * is one MQ segment from its first pass to its last, and a pass that ends inside the chunk
 * needs only its truncation mark (what j2ki_t1_seg_close does for a pass without
 * termination); then the chunk's passes are coded in ONE loop over all their symbols, the
 * marks taken where a pass's symbols end, and only the block's last pass is closed by
 * j2ki_t1_seg_close after the loop. Otherwise a loop per pass.
 *
 * Why: the CUDA MQ threads run 32 code-blocks per warp, and with a loop per pass the warp
 * waits at the end of every pass for its lane with the most symbols in that pass, so it runs
 * the sum over passes of the per-pass maxima instead of its largest per-block sum. The mark
 * is a few stores in the loop, with no call and no early return inside: lanes that left the
 * loop at a pass's end through a call or a return did not run together again (a first
 * version ran 13 times the warp instructions). Sorting the MQ threads by their symbol counts
 * (a CUB radix sort between the model and MQ launches) cost what the balance saved.
 * Measured: bench/results/history.md#flat-mq-loop.
 *
 * The symbols are read a 32-bit word at a time, the next word loaded 4 symbols ahead (the
 * loads stay off the coder's dependency chain: context state -> Qe -> A, C), and never a word
 * that holds no symbol of the list (j2ki_t1p_sym_next); decisions by j2ki_mqc_encode_e. Each
 * decision's context state and its table entry are read one decision ahead (its symbol two
 * ahead, so that the load starts the iteration), before the current decision's new state is
 * stored, and the new state and entry are taken instead when both decisions use the same
 * context (j2ki_mqc_encode_e loads the entries the context may move to before the outcome
 * is known): a decision then waits on the previous one's table load and a select, not on
 * the store of the previous state, the load of its own and its table entry's (t1_par_cuda.cuh:
 * the MQ chain of a block is what a frame of large blocks waits for). The table is addressed
 * from a register (j2ki_mqc_tab), not from the shared window's base that nvcc would
 * otherwise recompute at every decision. The same states in the same order, so the same
 * bytes. Measured: bench/results/history.md#mq-state-read-ahead and #64x64-code-blocks.
 */
J2KI_HD int j2ki_t1p_code_run(J2kiT1pMq q, J2kiT1Seg *sg, int i0, int i1, int nb_passes, int cblk_style,
                              int bypass_start, const uint8_t *syms, const uint32_t *cnt, uint8_t *buf,
                              uint32_t cap, J2kiPass *passes)
{
    const int plain = !(cblk_style & (J2KI_CBLK_BYPASS | J2KI_CBLK_RESET | J2KI_CBLK_TERMALL | J2KI_CBLK_SEGMARK));
    uint32_t pos = 0;
    int pi, ret = 0;
    if (plain && i0 < i1) {
        J2kiMqc *m = q.mqc;
        const int last = i1 == nb_passes ? i1 - 1 : i1;     /* passes i0 .. last - 1 end with a mark */
        uint32_t total = 0, end, k = 0, cur = 0, nxt = 0, left = 0;
        const uint32_t *w = (const uint32_t *)((uintptr_t)syms & ~(uintptr_t)3);
        J2kiMqcReg r;
        const J2kiMqcTab tab = j2ki_mqc_tab();
        int p = i0, stop = 0;
        /* symbol k, its context's state and table entry, symbol k + 1: read ahead */
        uint32_t sym = 0, st = 0, e = 0, s1 = 0;
        for (pi = i0; pi < i1; pi++)
            total += cnt[pi - i0];
        j2ki_t1_seg_open(sg, m, i0, 0, buf, cap);   /* only the block's first pass opens one */
        if (total) {
            const uint32_t o = (uint32_t)((uintptr_t)syms & 3);
            left = 4 - o;
            cur = w[0] >> (8 * o);
            nxt = left < total ? w[1] : 0;
            sym = cur & 0xFF;          /* symbol 0 read ahead */
            cur >>= 8;
            left--;
            s1 = j2ki_t1p_sym_next(&w, &cur, &nxt, &left, 1, total);
            st = q.ctx[sym >> 1];
            e = j2ki_mqc_entry_t(tab, st);
        }
        end = cnt[0];
        r = j2ki_mqc_reg_get(m);
        for (;;) {
            if (k == end && p < last) {
                /* pass p ends here: its truncation point, as j2ki_t1_seg_close without
                 * termination (bytes completed plus B for its estimate) */
                J2kiMqcMark *mk = &q.marks[p];
                mk->bp = m->bp;
                mk->b = m->b;
                mk->c = r.c;
                mk->a = r.a;
                mk->ct = r.ct;
                passes[p].slope = 0;
                passes[p].term = 0;
                passes[p].est = (uint32_t)j2ki_imax(m->bp + 1, sg->seg_start);
                stop = m->overflow;
                p++;
                end += p < i1 ? cnt[p - i0] : 0;
            } else if (k < total) {
                /* symbol k is sym, its context's state st and table entry e; the state and
                 * entry of symbol k + 1's context are read first (s1 came a decision
                 * earlier), before symbol k's state is stored, and the new state and entry
                 * forwarded when both symbols share the context; then symbol k + 2 */
                const uint32_t st2 = q.ctx[s1 >> 1], e2 = j2ki_mqc_entry_t(tab, st2);
                const uint32_t s3 = j2ki_t1p_sym_next(&w, &cur, &nxt, &left, k + 2, total);
                uint32_t sv = st, ev = e;
                int same;
                j2ki_mqc_encode_e(m, &r, tab, &sv, &ev, (int)(sym & 1));
                q.ctx[sym >> 1] = (uint16_t)sv;
                same = (s1 >> 1) == (sym >> 1);
                st = same ? sv : st2;
                e = same ? ev : e2;
                sym = s1;
                s1 = s3;
                k++;
            } else {
                stop = 1;
            }
            if (stop)
                break;
        }
        j2ki_mqc_reg_put(m, &r);
        if (m->overflow)
            return J2KC_ERR_BUFSIZE;
        if (last < i1)                          /* the block's last pass: termination */
            ret = j2ki_t1_seg_close(sg, m, q.ctx, q.marks, last, 0, 1, cblk_style, buf, passes);
        return ret;
    }
    for (pi = i0; pi < i1 && !ret; pi++) {
        const uint32_t v = cnt[pi - i0];
        if (j2ki_t1_pass_raw(pi, cblk_style, bypass_start)) {   /* packed by the model side */
            ret = j2ki_t1p_code_packed(q, sg, pi, nb_passes, cblk_style, bypass_start, syms + pos, v, buf, cap,
                                       passes);
            pos += J2KI_T1P_PACKED_BYTES(v);
        } else {
            ret = j2ki_t1p_code_pass(q, sg, pi, nb_passes, cblk_style, bypass_start, syms + pos, v, buf, cap,
                                     passes);
            pos += v;
        }
    }
    return ret;
}

/**
 * j2ki_t1_code_cols() through the column-parallel context modelling: same arguments, same
 * outputs (data, passes[].rate/dist/term, *len, errors), same final words; stats: NULL or
 * counters to add to. Also J2KC_ERR_UNSUPPORTED for w > J2KI_T1P_MAX_W or w * h > 4096.
 */
J2KI_HD int j2ki_t1p_code_stats(J2kiT1State *st, int numbps, int cblk_style, int bypass_start,
                                int frac_bits, uint8_t *buf, uint32_t cap, J2kiPass *passes,
                                int max_passes, uint32_t *len, J2kiT1pStats *stats)
{
    J2kiT1pStripe sc;
    J2kiT1Seg cd;
    uint8_t syms[J2KI_T1P_MAX_SYMS];
    int nb_passes = 3 * numbps - 2, i, ret;
    uint32_t n;
    if (nb_passes > max_passes || numbps > J2KI_T1_MAX_PLANES)
        return J2KC_ERR_BUFSIZE;
    if (st->w > J2KI_T1P_MAX_W || st->w * st->h > 4096)
        return J2KC_ERR_UNSUPPORTED;
    j2ki_t1p_coder_init(st->ctx, &cd);
    for (i = 0; i < nb_passes; i++) {
        int k = (i + 2) / 3, type = (i + 2) % 3;
        int s = numbps - 1 - k + frac_bits, g = j2ki_t1_dist_shift(s);
        int raw = j2ki_t1_pass_raw(i, cblk_style, bypass_start);
        int64_t d = j2ki_t1p_pass(st, &sc, type, s, g, raw, syms, &n, stats);
        passes[i].dist = ldexp((double)d, 2 * g - 2 * frac_bits - 2);
        if ((ret = j2ki_t1p_code_pass(j2ki_t1p_mq(st), &cd, i, nb_passes, cblk_style, bypass_start, syms, n,
                                      buf, cap, passes)) != 0)
            return ret;
    }
    *len = (uint32_t)cd.seg_start;
    return 0;
}

/** j2ki_t1_code_cols() with the column-parallel context modelling (see j2ki_t1p_code_stats). */
J2KI_HD int j2ki_t1p_code(J2kiT1State *st, int numbps, int cblk_style, int bypass_start,
                          int frac_bits, uint8_t *buf, uint32_t cap, J2kiPass *passes,
                          int max_passes, uint32_t *len)
{
    return j2ki_t1p_code_stats(st, numbps, cblk_style, bypass_start, frac_bits, buf, cap,
                               passes, max_passes, len, NULL);
}

#endif /* J2KI_T1_PAR_H */
