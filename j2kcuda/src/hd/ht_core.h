/*
 * HT block coder (Rec. ITU-T T.814 | ISO/IEC 15444-15, clause 7): the encoder of one HT set
 * of one code-block, on plain arrays, for the host (ref/ht_ref.c) and the device (cuda/ht_kern.cu).
 *
 * One HT set at bit-plane p codes three passes:
 *  - cleanup (7.3): every sample's magnitude index mu = |q| >> p, in 2x2 quads, with three
 *    byte streams in one segment Dcup of Lcup bytes:
 *      MagSgn  forward from byte 0, bits LSB first: for each significant sample the low
 *              m = U - e_k bits of v = 2 (mu - 1) + sign;
 *      MEL     forward after MagSgn, bits MSB first: the adaptive run-length coder of 7.3.3
 *              (13 states, exponent table J2KI_HT_MEL_E) coding "quad significant" in
 *              context 0 and, in the initial quad row, "both u > 2" for quad pairs;
 *      VLC     backward from the end, bits LSB first: the CxtVLC codeword of each quad
 *              (ht_vlc.h) and the U-VLC code of each u_q (7.3.6);
 *    the last two bytes hold Scup = MEL + VLC bytes (12 bits: byte Lcup-1 = Scup >> 4, the
 *    low nibble of byte Lcup-2 = Scup & 15), so Pcup = Lcup - Scup is where MEL starts;
 *  - SigProp (7.4) and MagRef (7.5), both at bit-plane p - 1, share a second segment Dref:
 *    SigProp forward from its start (LSB first; per 4-row stripe and group of 4 columns, the
 *    significance bits of the samples with a significant neighbour, column by column, then
 *    the signs of those that became significant), MagRef backward from its end (LSB first:
 *    bit p - 1 of every sample significant in the cleanup, stripe by stripe, column by column).
 *
 * Bit stuffing (7.1): a forward stream byte following 0xFF carries 7 bits (its MSB is 0); a
 * backward stream byte carries 7 bits when its 7 low bits are all 1 and the byte after it
 * (the one written before it) is above 0x8F. Terminations: MagSgn pads its last byte with 1s
 * and drops it (or a final 0xFF), which a decoder supplies; MEL, SigProp and the backward
 * streams pad with 0s. Nothing is fused: each stream keeps its own bytes.
 *
 * Everything here is integer except the distortion sums, which are doubles added in a fixed
 * order (J2KI_HT_DIST_LANES partial sums), so that a device port without contraction, one
 * thread or a warp, gets the same bits.
 */
#ifndef J2KI_HT_CORE_H
#define J2KI_HT_CORE_H

#include <stdint.h>

#include "core/j2ki.h"
#include "core/plan.h"
#include "hd/ht_vlc.h"

/** Largest code-block width and area (Table A.18: xcb, ycb <= 10 and xcb + ycb <= 12). */
#define J2KI_HT_MAX_W      1024
#define J2KI_HT_MAX_AREA   4096
/** Scup is 12 bits and T.814 caps it at 4079 (7.3.1). */
#define J2KI_HT_MAX_SCUP   4079
/** MEL bytes bound: at most 2 bits per quad pair plus the final run (area / 8 quads pairs). */
#define J2KI_HT_MEL_CAP    (J2KI_HT_MAX_AREA / 8 + 16)
/** Cleanup bytes bound for a 4096-sample block of up to 31-bit magnitudes: MagSgn <= 32 bits a
 *  sample, VLC <= 7 + 12 bits a quad, MEL, stuffing (1 bit in 8) and the Scup bytes. */
#define J2KI_HT_CUP_CAP    (J2KI_HT_MAX_AREA * 32 / 7 + J2KI_HT_MAX_SCUP + J2KI_HT_MEL_CAP + 16)
/** Refinement bytes bound: 2 bits (SigProp bit and sign, or MagRef bit) a sample, stuffed. */
#define J2KI_HT_REF_CAP    (J2KI_HT_MAX_AREA * 2 / 7 + 16)

/** MEL exponents E_MEL[k] of the 13 states (Table 2 of T.814). */
#define J2KI_HT_MEL_E_INIT { 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5 }

/** Forward bit writer with 0xFF stuffing, LSB first (MagSgn, SigProp) or MSB first (MEL).
 *  With buf NULL the bytes are counted, not stored (the plane chooser's measured sets): pos,
 *  overflow and the stuffing are those of a stored stream, which need only the bytes' values
 *  as they are formed. */
typedef struct J2kiHtFwd {
    uint8_t *buf;
    uint32_t pos, cap;
    uint32_t cur;       /* bits of the byte being formed */
    int      nb;        /* bits in cur */
    int      room;      /* bits this byte carries: 8, or 7 after 0xFF */
    uint32_t ff_run;    /* the 0xFF bytes that end the stream so far */
    int      overflow;
} J2kiHtFwd;

/** Backward bit writer, LSB first (VLC, MagRef); bytes are stored in the order written and
 *  laid out reversed by the caller (buf NULL: counted, as J2kiHtFwd). */
typedef struct J2kiHtBwd {
    uint8_t *buf;
    uint32_t pos, cap;
    uint32_t cur;
    int      nb;
    int      gt8f;      /* the byte written last (the next one up in the segment) > 0x8F */
    int      overflow;
} J2kiHtBwd;

/** Scratch of one cleanup coder that stores its bytes: the MEL and VLC bytes before they are
 *  laid out. */
typedef struct J2kiHtScratch {
    uint8_t mel[J2KI_HT_MEL_CAP];
    uint8_t vlc[J2KI_HT_MAX_SCUP + 1];
    uint32_t pcup, mel_len;            /* the last cleanup's MagSgn and MEL byte counts */
} J2kiHtScratch;

/** Per-sample significance of one HT set, one bit per sample (bit i % 32 of word i / 32, i =
 *  y w + x): sig, significant in the cleanup (written by j2ki_ht_cleanup); any, significant
 *  in the cleanup or made so by SigProp (written by j2ki_ht_refine: SigProp's new samples are
 *  those of any not in sig). Small enough for a thread's stack. */
typedef struct J2kiHtSig {
    uint32_t sig[J2KI_HT_MAX_AREA / 32];
    uint32_t any[J2KI_HT_MAX_AREA / 32];
} J2kiHtSig;

J2KI_HD int j2ki_ht_sig_get(const uint32_t *m, int i) { return (int)(m[i >> 5] >> (i & 31)) & 1; }
J2KI_HD void j2ki_ht_sig_set(uint32_t *m, int i) { m[i >> 5] |= 1u << (i & 31); }

/** The bits of samples x0..x1 (x0 <= x1 < w, at most 3) of row y of a w-wide bitmap, as the
 *  low bits of an integer (a row's bits are consecutive; two words where they straddle). */
J2KI_HD uint32_t j2ki_ht_sig_run(const uint32_t *m, int w, int y, int x0, int x1)
{
    const int i = y * w + x0, n = x1 - x0 + 1;
    uint64_t v = m[i >> 5];
    if ((i & 31) + n > 32)
        v |= (uint64_t)m[(i >> 5) + 1] << 32;
    return (uint32_t)(v >> (i & 31)) & ((1u << n) - 1u);
}

/** Number of significant bits of v (0 for 0). */
J2KI_HD int j2ki_ht_bits32(uint32_t v)
{
#if defined(__CUDA_ARCH__)
    return 32 - __clz(v);
#else
    return v ? 32 - __builtin_clz(v) : 0;
#endif
}

J2KI_HD void j2ki_ht_fwd_init(J2kiHtFwd *w, uint8_t *buf, uint32_t cap)
{
    w->buf = buf; w->pos = 0; w->cap = cap; w->cur = 0; w->nb = 0; w->room = 8; w->ff_run = 0; w->overflow = 0;
}

J2KI_HD void j2ki_ht_fwd_byte(J2kiHtFwd *w)
{
    if (w->pos < w->cap) {
        if (w->buf)
            w->buf[w->pos] = (uint8_t)w->cur;
        w->pos++;
    } else {
        w->overflow = 1;
    }
    w->room = w->cur == 0xff ? 7 : 8;
    w->ff_run = w->cur == 0xff ? w->ff_run + 1 : 0;
    w->cur = 0;
    w->nb = 0;
}

/** Appends the n low bits of v (n <= 32), least significant first (MagSgn, SigProp), as many
 *  at a time as the byte being formed takes. */
J2KI_HD void j2ki_ht_fwd_lsb(J2kiHtFwd *w, uint32_t v, int n)
{
    while (n > 0) {
        int k = w->room - w->nb;
        if (k > n)
            k = n;
        w->cur |= (v & ((1u << k) - 1u)) << w->nb;
        v >>= k;
        n -= k;
        w->nb += k;
        if (w->nb == w->room)
            j2ki_ht_fwd_byte(w);
    }
}

/** Appends one bit, most significant first within the byte (MEL). */
J2KI_HD void j2ki_ht_fwd_msb(J2kiHtFwd *w, int bit)
{
    w->cur = (w->cur << 1) | (uint32_t)(bit & 1);
    if (++w->nb == w->room)
        j2ki_ht_fwd_byte(w);
}

/** Ends an MSB-first stream: the last byte's unused low bits are 0. */
J2KI_HD void j2ki_ht_fwd_flush_msb(J2kiHtFwd *w)
{
    if (w->nb) {
        w->cur <<= w->room - w->nb;
        j2ki_ht_fwd_byte(w);
    }
}

/** Ends an LSB-first stream whose reader pads with 0s (SigProp): unused high bits are 0. */
J2KI_HD void j2ki_ht_fwd_flush_lsb0(J2kiHtFwd *w)
{
    if (w->nb)
        j2ki_ht_fwd_byte(w);
}

/** A forward stream that another follows must not end in 0xFF: a decoder reading ahead would
 *  take the next stream's first byte as a stuffed one (7 bits, at most 0x8F; OpenJPEG asserts
 *  it). A final 0xFF gets a 0x00 after it, which no decoder needs. */
J2KI_HD void j2ki_ht_fwd_no_ff_end(J2kiHtFwd *w)
{
    if (w->pos > 0 && w->ff_run) {
        w->cur = 0;
        w->nb = 0;
        j2ki_ht_fwd_byte(w);
    }
}

/** Ends MagSgn (7.3.8): unused bits are 1s, the byte is dropped when it becomes 0xFF, and so
 *  is a final 0xFF (a decoder reads 0xFF past the end of MagSgn). */
J2KI_HD void j2ki_ht_fwd_flush_magsgn(J2kiHtFwd *w)
{
    if (w->nb) {
        w->cur |= ((1u << w->room) - 1u) & ~((1u << w->nb) - 1u);
        if (w->cur != 0xff) {
            j2ki_ht_fwd_byte(w);
            return;
        }
        w->cur = 0;
        w->nb = 0;
    }
    while (w->pos > 0 && w->ff_run) {
        w->pos--;
        w->ff_run--;
    }
}

J2KI_HD void j2ki_ht_bwd_init(J2kiHtBwd *w, uint8_t *buf, uint32_t cap)
{
    w->buf = buf; w->pos = 0; w->cap = cap; w->cur = 0; w->nb = 0; w->gt8f = 1; w->overflow = 0;
}

J2KI_HD void j2ki_ht_bwd_byte(J2kiHtBwd *w)
{
    if (w->pos < w->cap) {
        if (w->buf)
            w->buf[w->pos] = (uint8_t)w->cur;
        w->pos++;
    } else {
        w->overflow = 1;
    }
    w->gt8f = w->cur > 0x8f;
    w->cur = 0;
    w->nb = 0;
}

/** Appends the n low bits of v (n <= 32), least significant first, with the backward
 *  stuffing rule, which is decided at the byte's seventh bit: up to it, then bit by bit. */
J2KI_HD void j2ki_ht_bwd_lsb(J2kiHtBwd *w, uint32_t v, int n)
{
    while (n > 0) {
        int k = w->nb < 7 ? 7 - w->nb : 1;
        if (k > n)
            k = n;
        w->cur |= (v & ((1u << k) - 1u)) << w->nb;
        v >>= k;
        n -= k;
        w->nb += k;
        if (w->nb == 8 || (w->nb == 7 && w->gt8f && w->cur == 0x7f))
            j2ki_ht_bwd_byte(w);
    }
}

J2KI_HD void j2ki_ht_bwd_flush(J2kiHtBwd *w)
{
    if (w->nb)
        j2ki_ht_bwd_byte(w);
}

/** Exponent E of a magnitude index (7.3.7): the bits of 2 mu - 1, 0 for mu = 0. */
J2KI_HD int j2ki_ht_exponent(uint32_t mu)
{
    return mu ? j2ki_ht_bits32(2u * mu - 1u) : 0;
}

/** Bits collected in stream order, least significant first, before they go to a writer: a
 *  quad pair's VLC bits (at most 2 x 7 codeword bits and 2 x 12 U-VLC bits), so that the
 *  serial coder and the warp coder (cuda/ht_warp.cuh) form them alike. */
typedef struct J2kiHtBits {
    uint64_t v;
    int      n;
} J2kiHtBits;

J2KI_HD void j2ki_ht_bits_put(J2kiHtBits *b, uint32_t v, int n)
{
    b->v |= (uint64_t)(v & (uint32_t)((1ull << n) - 1u)) << b->n;
    b->n += n;
}

/** Appends collected bits to a backward writer. */
J2KI_HD void j2ki_ht_bwd_bits(J2kiHtBwd *w, const J2kiHtBits *b)
{
    if (b->n > 32) {
        j2ki_ht_bwd_lsb(w, (uint32_t)b->v, 32);
        j2ki_ht_bwd_lsb(w, (uint32_t)(b->v >> 32), b->n - 32);
    } else if (b->n) {
        j2ki_ht_bwd_lsb(w, (uint32_t)b->v, b->n);
    }
}

/** The U-VLC prefix of u >= 1 (7.3.6): 1 -> "1", 2 -> "01", 3..4 -> "001", 5.. -> "000"
 *  (bits in stream order). */
J2KI_HD void j2ki_ht_uvlc_prefix(J2kiHtBits *vlc, int u)
{
    if (u == 1)
        j2ki_ht_bits_put(vlc, 1, 1);
    else if (u == 2)
        j2ki_ht_bits_put(vlc, 2, 2);
    else if (u <= 4)
        j2ki_ht_bits_put(vlc, 4, 3);
    else
        j2ki_ht_bits_put(vlc, 0, 3);
}

/** The U-VLC suffix: 1 bit (u - 3) for 3..4, 5 bits for u >= 5 (u - 5 below 28, else 28 +
 *  the low 2 bits of u - 33). */
J2KI_HD void j2ki_ht_uvlc_suffix(J2kiHtBits *vlc, int u)
{
    if (u == 3 || u == 4)
        j2ki_ht_bits_put(vlc, (uint32_t)(u - 3), 1);
    else if (u >= 5 && u - 5 < 28)
        j2ki_ht_bits_put(vlc, (uint32_t)(u - 5), 5);
    else if (u >= 5)
        j2ki_ht_bits_put(vlc, (uint32_t)(28 + ((u - 33) & 3)), 5);
}

/** The U-VLC extension: 4 bits ((u - 33) >> 2) when u >= 33. */
J2KI_HD void j2ki_ht_uvlc_ext(J2kiHtBits *vlc, int u)
{
    if (u >= 33)
        j2ki_ht_bits_put(vlc, (uint32_t)((u - 33) >> 2), 4);
}

/** MEL encoder state (7.3.3). */
typedef struct J2kiHtMel {
    int k, run;
} J2kiHtMel;

J2KI_HD void j2ki_ht_mel_sym(J2kiHtMel *m, J2kiHtFwd *w, int sym)
{
    const uint8_t mel_e[13] = J2KI_HT_MEL_E_INIT;
    int e = mel_e[m->k];
    if (!sym) {
        if (++m->run == (1 << e)) {
            j2ki_ht_fwd_msb(w, 1);
            m->run = 0;
            m->k = j2ki_imin(m->k + 1, 12);
        }
        return;
    }
    j2ki_ht_fwd_msb(w, 0);
    for (int i = e - 1; i >= 0; i--)
        j2ki_ht_fwd_msb(w, (m->run >> i) & 1);
    m->run = 0;
    m->k = j2ki_imax(m->k - 1, 0);
}

/** Ends MEL: an unfinished run is sent as a full one (the decoder stops before its end). */
J2KI_HD void j2ki_ht_mel_end(J2kiHtMel *m, J2kiHtFwd *w)
{
    if (m->run > 0)
        j2ki_ht_fwd_msb(w, 1);
    j2ki_ht_fwd_flush_msb(w);
}

/** One quad's values while its pair is coded. */
typedef struct J2kiHtQuad {
    uint32_t mu[4];
    int      sgn[4];
    int      e[4];
    int      rho, u, uoff, U, ek;
} J2kiHtQuad;

/** Magnitude index and sign of sample (x, y) at bit-plane p; 0 outside the block. */
J2KI_HD void j2ki_ht_load_quad(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits,
                               int p, int qx, int qy, J2kiHtQuad *q)
{
    q->rho = 0;
    for (int n = 0; n < 4; n++) {
        int x = 2 * qx + (n >> 1), y = 2 * qy + (n & 1);
        uint32_t mu = 0;
        int s = 0;
        if (x < w && y < h) {
            int32_t v = coefs[(ptrdiff_t)y * stride + x];
            uint32_t a = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
            mu = (a >> frac_bits) >> p;
            s = v < 0;
        }
        q->mu[n] = mu;
        q->sgn[n] = mu ? s : 0;
        q->e[n] = j2ki_ht_exponent(mu);
        q->rho |= (mu != 0) << n;
    }
}

/**
 * The CxtVLC codeword of a significant quad, or of any quad outside context 0 (7.3.5, 7.3.7):
 * sets q->U, q->u, q->uoff, q->ek and returns the table entry (J2KI_HT_VLC_CWD / _LEN), 0 when
 * the tables have none (cannot happen). kappa is the exponent floor (1 in the initial row).
 */
J2KI_HD uint16_t j2ki_ht_quad_vlc(J2kiHtQuad *q, int c, int kappa, int initial)
{
    int emax = 0, t = 0;
    uint16_t ent;
    for (int n = 0; n < 4; n++)
        emax = j2ki_imax(emax, q->e[n]);
    q->U = j2ki_imax(emax, kappa);
    q->u = q->U - kappa;
    q->uoff = q->u > 0;
    for (int n = 0; n < 4; n++)
        t |= (q->e[n] == q->U && q->e[n] > 0) << n;
    if (q->uoff)
        ent = initial ? J2KI_HT_VLC(j2ki_ht_vlc0_u1)[(c << 8) | (q->rho << 4) | t]
                      : J2KI_HT_VLC(j2ki_ht_vlc1_u1)[(c << 8) | (q->rho << 4) | t];
    else
        ent = initial ? J2KI_HT_VLC(j2ki_ht_vlc0_u0)[(c << 4) | q->rho] : J2KI_HT_VLC(j2ki_ht_vlc1_u0)[(c << 4) | q->rho];
    q->ek = ent ? J2KI_HT_VLC_EK(ent) : 0;
    return ent;
}

/**
 * Codes quad q of context c: MEL significance in context 0, the CxtVLC codeword, and sets
 * q->U, q->u, q->uoff, q->ek. kappa is the exponent floor (7.3.7: 1 in the initial row).
 * Returns 0, or J2KC_ERR_INTERNAL when the tables have no codeword (cannot happen).
 */
J2KI_HD int j2ki_ht_code_quad(J2kiHtQuad *q, int c, int kappa, int initial, J2kiHtMel *mel,
                              J2kiHtFwd *melw, J2kiHtBwd *vlc)
{
    uint16_t ent;
    q->U = 0; q->u = 0; q->uoff = 0; q->ek = 0;
    if (c == 0) {
        j2ki_ht_mel_sym(mel, melw, q->rho != 0);
        if (!q->rho)
            return 0;
    }
    ent = j2ki_ht_quad_vlc(q, c, kappa, initial);
    if (!ent)
        return J2KC_ERR_INTERNAL;
    j2ki_ht_bwd_lsb(vlc, J2KI_HT_VLC_CWD(ent), J2KI_HT_VLC_LEN(ent));
    return 0;
}

/** MagSgn bits of one quad (7.3.8): m = U - e_k bits of v = 2 (mu - 1) + sign per sample. */
J2KI_HD void j2ki_ht_magsgn_quad(const J2kiHtQuad *q, J2kiHtFwd *ms)
{
    for (int n = 0; n < 4; n++) {
        if (!q->mu[n])
            continue;
        j2ki_ht_fwd_lsb(ms, 2u * (q->mu[n] - 1u) + (uint32_t)q->sgn[n], q->U - ((q->ek >> n) & 1));
    }
}

/**
 * The U-VLC bits of a quad pair (7.3.6; q2 NULL for a lone last quad), appended to *vlc; in the
 * initial quad row, when both quads have u > 0, the MEL symbol "both u > 2" is returned (0 or
 * 1), else -1: it precedes the bits.
 */
J2KI_HD int j2ki_ht_u_pair_bits(const J2kiHtQuad *q1, const J2kiHtQuad *q2, int initial, J2kiHtBits *vlc)
{
    if (q2 && q1->uoff && q2->uoff) {
        if (initial) {
            int both = q1->u > 2 && q2->u > 2;
            if (both) {
                j2ki_ht_uvlc_prefix(vlc, q1->u - 2);
                j2ki_ht_uvlc_prefix(vlc, q2->u - 2);
                j2ki_ht_uvlc_suffix(vlc, q1->u - 2);
                j2ki_ht_uvlc_suffix(vlc, q2->u - 2);
                j2ki_ht_uvlc_ext(vlc, q1->u - 2);
                j2ki_ht_uvlc_ext(vlc, q2->u - 2);
                return 1;
            }
            if (q1->u > 2) {
                /* then q2->u is 1 or 2: one bit */
                j2ki_ht_uvlc_prefix(vlc, q1->u);
                j2ki_ht_bits_put(vlc, (uint32_t)(q2->u - 1), 1);
                j2ki_ht_uvlc_suffix(vlc, q1->u);
                j2ki_ht_uvlc_ext(vlc, q1->u);
                return 0;
            }
        }
        j2ki_ht_uvlc_prefix(vlc, q1->u);
        j2ki_ht_uvlc_prefix(vlc, q2->u);
        j2ki_ht_uvlc_suffix(vlc, q1->u);
        j2ki_ht_uvlc_suffix(vlc, q2->u);
        j2ki_ht_uvlc_ext(vlc, q1->u);
        j2ki_ht_uvlc_ext(vlc, q2->u);
        return initial ? 0 : -1;
    }
    if (q1->uoff) {
        j2ki_ht_uvlc_prefix(vlc, q1->u);
        j2ki_ht_uvlc_suffix(vlc, q1->u);
        j2ki_ht_uvlc_ext(vlc, q1->u);
    } else if (q2 && q2->uoff) {
        j2ki_ht_uvlc_prefix(vlc, q2->u);
        j2ki_ht_uvlc_suffix(vlc, q2->u);
        j2ki_ht_uvlc_ext(vlc, q2->u);
    }
    return -1;
}

/** The u values of a quad pair (7.3.6); q2 NULL for a lone last quad. */
J2KI_HD void j2ki_ht_code_u_pair(const J2kiHtQuad *q1, const J2kiHtQuad *q2, int initial,
                                 J2kiHtMel *mel, J2kiHtFwd *melw, J2kiHtBwd *vlc)
{
    J2kiHtBits b = { 0, 0 };
    int sym = j2ki_ht_u_pair_bits(q1, q2, initial, &b);
    if (sym >= 0)
        j2ki_ht_mel_sym(mel, melw, sym);
    j2ki_ht_bwd_bits(vlc, &b);
}

/** Exponent E (7.3.7) of sample (x, y)'s magnitude index at bit-plane p; 0 outside the block
 *  (the rows above the first and the columns beside the block count as insignificant). */
J2KI_HD int j2ki_ht_exp_at(const int32_t *coefs, ptrdiff_t stride, int w, int frac_bits, int p, int x, int y)
{
    int32_t v;
    if (x < 0 || x >= w || y < 0)
        return 0;
    v = coefs[(ptrdiff_t)y * stride + x];
    return j2ki_ht_exponent(((v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v) >> frac_bits) >> p);
}

/**
 * The cleanup pass of a w x h block at bit-plane p (7.3) into out[0..cap): sets *lcup and, with
 * sg, the cleanup significance sg->sig. Values follow tier-1's convention (t1_ref.h): the index
 * is |v| >> frac_bits. With out NULL nothing is stored (s may be NULL too): *lcup and the
 * errors are those of the stored segment. Returns 0, J2KC_ERR_BUFSIZE when cap is too small or
 * Scup would pass 4079, J2KC_ERR_INVAL for a bad shape.
 */
J2KI_HD int j2ki_ht_cleanup(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits,
                            int p, J2kiHtScratch *s, J2kiHtSig *sg, uint8_t *out, uint32_t cap, uint32_t *lcup)
{
    J2kiHtFwd ms, melw;
    J2kiHtBwd vlc;
    J2kiHtMel mel = { 0, 0 };
    int qw = (w + 1) >> 1, qh = (h + 1) >> 1;
    uint32_t scup, len;

    *lcup = 0;
    if (w <= 0 || h <= 0 || w > J2KI_HT_MAX_W || w * h > J2KI_HT_MAX_AREA || p < 0 || p > 30 || (out && !s))
        return J2KC_ERR_INVAL;
    if (sg)
        for (int i = 0; i < (w * h + 31) / 32; i++)
            sg->sig[i] = 0;
    j2ki_ht_fwd_init(&ms, out, cap);
    j2ki_ht_fwd_init(&melw, out ? s->mel : NULL, sizeof(s->mel));
    j2ki_ht_bwd_init(&vlc, out ? s->vlc : NULL, sizeof(s->vlc));
    /* the Scup bytes: byte Lcup-1 (a 0xFF for the stuffing rule), then 4 bits of 1s */
    vlc.cur = 0xff;
    j2ki_ht_bwd_byte(&vlc);
    vlc.cur = 0xf;
    vlc.nb = 4;

    for (int qy = 0; qy < qh; qy++) {
        int initial = qy == 0;
        int left_sig = 0;           /* the left quad's significance as this quad's context needs it
                                     * (set after each quad, below) */
        /* outside the initial row, the exponents of the row above at sample columns x - 1 ..
         * x + 2 of the quad at x, carried from quad to quad */
        int ea0 = 0, ea1 = 0, ea2 = 0, ea3 = 0;
        for (int qx = 0; qx < qw; qx += 2) {
            J2kiHtQuad q[2];
            int nq = qx + 1 < qw ? 2 : 1;
            for (int k = 0; k < nq; k++) {
                int x = 2 * (qx + k), c, kappa = 1, ret;
                J2kiHtQuad *cq = &q[k];
                if (!initial) {
                    if (x) {
                        ea0 = ea2;
                        ea1 = ea3;
                    } else {
                        ea1 = j2ki_ht_exp_at(coefs, stride, w, frac_bits, p, 0, 2 * qy - 1);
                    }
                    ea2 = j2ki_ht_exp_at(coefs, stride, w, frac_bits, p, x + 1, 2 * qy - 1);
                    ea3 = j2ki_ht_exp_at(coefs, stride, w, frac_bits, p, x + 2, 2 * qy - 1);
                }
                j2ki_ht_load_quad(coefs, stride, w, h, frac_bits, p, qx + k, qy, cq);
                if (initial) {
                    /* 7.3.5: (sigma_TL | sigma_BL) + 2 sigma_TR + 4 sigma_BR of the left quad,
                     * which left_sig holds in its bits 0, 1 and 2 */
                    c = left_sig;
                } else {
                    /* ea0 .. ea3: NW, N, NE and the one beyond (samples x - 1 .. x + 2 above) */
                    int sn = ea1 > 0, sne = ea2 > 0, snw = ea0 > 0, snf = ea3 > 0;
                    int sw = (left_sig & 3) != 0;
                    c = (sn | snw) | (sw << 1) | ((sne | snf) << 2);
                    if (cq->rho & (cq->rho - 1))
                        kappa = j2ki_imax(1, j2ki_imax(j2ki_imax(ea0, ea1), j2ki_imax(ea2, ea3)) - 1);
                }
                ret = j2ki_ht_code_quad(cq, c, kappa, initial, &mel, &melw, &vlc);
                if (ret < 0)
                    return ret;
                /* the next quad's view of this one */
                if (initial)
                    left_sig = ((cq->rho & 1) | ((cq->rho >> 1) & 1)) | (((cq->rho >> 2) & 1) << 1) |
                               (((cq->rho >> 3) & 1) << 2);
                else
                    left_sig = (cq->rho >> 2) & 3;
                if (sg)
                    for (int n = 0; n < 4; n++) {
                        int sx = x + (n >> 1), sy = 2 * qy + (n & 1);
                        if (cq->mu[n])
                            j2ki_ht_sig_set(sg->sig, sy * w + sx);
                    }
            }
            j2ki_ht_code_u_pair(&q[0], nq == 2 ? &q[1] : NULL, initial, &mel, &melw, &vlc);
            for (int k = 0; k < nq; k++)
                j2ki_ht_magsgn_quad(&q[k], &ms);
        }
    }
    j2ki_ht_fwd_flush_magsgn(&ms);
    j2ki_ht_mel_end(&mel, &melw);
    j2ki_ht_fwd_no_ff_end(&melw);
    j2ki_ht_bwd_flush(&vlc);
    if (ms.overflow || melw.overflow || vlc.overflow)
        return J2KC_ERR_BUFSIZE;
    scup = melw.pos + vlc.pos;
    if (scup > J2KI_HT_MAX_SCUP)
        return J2KC_ERR_BUFSIZE;
    len = ms.pos + scup;
    if (len > cap)
        return J2KC_ERR_BUFSIZE;
    if (out) {
        for (uint32_t i = 0; i < melw.pos; i++)
            out[ms.pos + i] = s->mel[i];
        for (uint32_t i = 0; i < vlc.pos; i++)
            out[len - 1 - i] = s->vlc[i];
        out[len - 1] = (uint8_t)(scup >> 4);
        out[len - 2] = (uint8_t)((out[len - 2] & 0xf0) | (scup & 0xf));
        s->pcup = ms.pos;
        s->mel_len = melw.pos;
    }
    *lcup = len;
    return 0;
}

/** Bit b of the magnitude index of sample (x, y) (|v| >> frac_bits), and its sign. */
J2KI_HD int j2ki_ht_bit(const int32_t *coefs, ptrdiff_t stride, int frac_bits, int x, int y, int b)
{
    int32_t v = coefs[(ptrdiff_t)y * stride + x];
    uint32_t a = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
    return (int)(((a >> frac_bits) >> b) & 1u);
}

/** SigProp's neighbourhood test (7.4): a neighbour (8-connected) significant in the cleanup,
 *  or made significant by this pass before (a sample not yet visited has no bit in any). The
 *  sample's own bit counts too: it is 0 (not significant in the cleanup, not yet visited). */
J2KI_HD int j2ki_ht_sp_nbr(const J2kiHtSig *sg, int w, int h, int x, int y)
{
    const int x0 = x > 0 ? x - 1 : 0, x1 = x + 1 < w ? x + 1 : w - 1;
    uint32_t acc = 0;
    for (int ny = y > 0 ? y - 1 : 0; ny <= y + 1 && ny < h; ny++)
        acc |= j2ki_ht_sig_run(sg->any, w, ny, x0, x1);
    return acc != 0;
}

/**
 * SigProp and MagRef at bit-plane p - 1 (7.4, 7.5; p >= 1) into out[0..cap): SigProp's bytes
 * (*lsp) then MagRef's (*lmr, laid out backwards from out[*lsp + *lmr - 1]); out NULL: counted
 * only. sg->sig must be the cleanup's significance (j2ki_ht_cleanup); sg->any becomes it and
 * the samples SigProp makes significant. Returns 0 or J2KC_ERR_BUFSIZE.
 */
J2KI_HD int j2ki_ht_refine(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits,
                           int p, J2kiHtSig *sg, uint8_t *out, uint32_t cap, uint32_t *lsp,
                           uint32_t *lmr)
{
    J2kiHtFwd sp;
    J2kiHtBwd mr;
    int b = p - 1;

    *lsp = *lmr = 0;
    if (p < 1)
        return J2KC_ERR_INVAL;
    for (int i = 0; i < (w * h + 31) / 32; i++)
        sg->any[i] = sg->sig[i];
    j2ki_ht_fwd_init(&sp, out, cap);
    for (int y0 = 0; y0 < h; y0 += 4) {
        int y1 = j2ki_imin(y0 + 4, h);
        for (int x0 = 0; x0 < w; x0 += 4) {
            int x1 = j2ki_imin(x0 + 4, w);
            for (int x = x0; x < x1; x++)
                for (int y = y0; y < y1; y++) {
                    if (j2ki_ht_sig_get(sg->sig, y * w + x))
                        continue;
                    if (j2ki_ht_sp_nbr(sg, w, h, x, y)) {
                        int bit = j2ki_ht_bit(coefs, stride, frac_bits, x, y, b);
                        j2ki_ht_fwd_lsb(&sp, (uint32_t)bit, 1);
                        if (bit)
                            j2ki_ht_sig_set(sg->any, y * w + x);
                    }
                }
            for (int x = x0; x < x1; x++)
                for (int y = y0; y < y1; y++)
                    if (j2ki_ht_sig_get(sg->any, y * w + x) && !j2ki_ht_sig_get(sg->sig, y * w + x))
                        j2ki_ht_fwd_lsb(&sp, coefs[(ptrdiff_t)y * stride + x] < 0, 1);
        }
    }
    j2ki_ht_fwd_flush_lsb0(&sp);
    j2ki_ht_fwd_no_ff_end(&sp);
    if (sp.overflow)
        return J2KC_ERR_BUFSIZE;
    j2ki_ht_bwd_init(&mr, out ? out + sp.pos : NULL, cap - sp.pos);
    /* bytes in the order written: stored forwards at out + lsp, reversed below */
    for (int y0 = 0; y0 < h; y0 += 4) {
        int y1 = j2ki_imin(y0 + 4, h);
        for (int x = 0; x < w; x++)
            for (int y = y0; y < y1; y++)
                if (j2ki_ht_sig_get(sg->sig, y * w + x))
                    j2ki_ht_bwd_lsb(&mr, (uint32_t)j2ki_ht_bit(coefs, stride, frac_bits, x, y, b), 1);
    }
    j2ki_ht_bwd_flush(&mr);
    if (mr.overflow)
        return J2KC_ERR_BUFSIZE;
    if (out)
        for (uint32_t i = 0; i < mr.pos / 2; i++) {
            uint8_t t = mr.buf[i];
            mr.buf[i] = mr.buf[mr.pos - 1 - i];
            mr.buf[mr.pos - 1 - i] = t;
        }
    *lsp = sp.pos;
    *lmr = mr.pos;
    return 0;
}

/** Lanes of the distortion sums: sample i = y w + x goes to partial sum i % 32, each partial
 *  adds its samples in scan order, and the partials are added in lane order. Both backends
 *  follow it (cuda/ht_warp.cuh: a lane per partial), so their doubles round alike. */
#define J2KI_HT_DIST_LANES 32

/** One sample's distortion decreases (j2ki_ht_dist) added to d[3]; unit = 2^-frac_bits, step =
 *  2^p, any_new: the sample became significant in SigProp. */
J2KI_HD void j2ki_ht_dist_sample(int32_t v, int frac_bits, int p, double unit, double step, int any_new, double d[3])
{
    uint32_t a = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
    uint32_t q = a >> frac_bits, mu = q >> p;
    double xv = (double)a * unit, e0, e1, e2;
    if (mu) {
        e0 = xv * xv;
        e1 = xv - ((double)mu + 0.5) * step;
        e1 *= e1;
        d[0] += e0 - e1;
        if (p > 0) {
            e2 = xv - ((double)(q >> (p - 1)) + 0.5) * step * 0.5;
            d[2] += e1 - e2 * e2;
        }
    } else if (p > 0 && any_new) {
        e0 = xv * xv;
        e2 = xv - 1.5 * step * 0.5;
        d[1] += e0 - e2 * e2;
    }
}

/** 2^-frac_bits and 2^p, as j2ki_ht_dist scales. */
J2KI_HD void j2ki_ht_dist_scale(int frac_bits, int p, double *unit, double *step)
{
    *unit = 1.0;
    *step = 1.0;
    for (int i = 0; i < frac_bits; i++)
        *unit *= 0.5;
    for (int i = 0; i < p; i++)
        *step *= 2.0;
}

/** Partial sum `lane` of j2ki_ht_dist (samples i = lane, lane + 32, ...), into d[3]. */
J2KI_HD void j2ki_ht_dist_lane(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits, int p,
                               const uint32_t *any, int lane, double d[3])
{
    double unit, step;
    j2ki_ht_dist_scale(frac_bits, p, &unit, &step);
    d[0] = d[1] = d[2] = 0.0;
    /* sample i = y w + x, stepped without a division */
    for (int i = lane, y = 0, x = lane; i < w * h; i += J2KI_HT_DIST_LANES) {
        while (x >= w) {
            x -= w;
            y++;
        }
        j2ki_ht_dist_sample(coefs[(ptrdiff_t)y * stride + x], frac_bits, p, unit, step,
                            any && j2ki_ht_sig_get(any, i), d);
        x += J2KI_HT_DIST_LANES;
    }
}

/**
 * Distortion decreases of the three passes of the HT set at bit-plane p (in squared index
 * units, as tier-1's J2kiPass.dist), after j2ki_ht_refine (or with p = 0 after the cleanup
 * alone: d[1] = d[2] = 0; any NULL: no SigProp, d[1] = 0). Reconstruction at the midpoint of
 * the interval left: (mu + 1/2) 2^p after the cleanup, 3/2 2^(p-1) for SigProp's new samples
 * (those of any insignificant in the cleanup), (mu' + 1/2) 2^(p-1) after MagRef. Summed in
 * J2KI_HT_DIST_LANES partial sums (their order above).
 */
J2KI_HD void j2ki_ht_dist(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits,
                          int p, const uint32_t *any, double d[3])
{
    double unit, step, part[J2KI_HT_DIST_LANES][3];
    j2ki_ht_dist_scale(frac_bits, p, &unit, &step);
    for (int l = 0; l < J2KI_HT_DIST_LANES; l++)
        part[l][0] = part[l][1] = part[l][2] = 0.0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int i = y * w + x;
            j2ki_ht_dist_sample(coefs[(ptrdiff_t)y * stride + x], frac_bits, p, unit, step,
                                any && j2ki_ht_sig_get(any, i), part[i % J2KI_HT_DIST_LANES]);
        }
    d[0] = d[1] = d[2] = 0.0;
    for (int l = 0; l < J2KI_HT_DIST_LANES; l++)
        for (int k = 0; k < 3; k++)
            d[k] += part[l][k];
}

/** The magnitude bit-planes of a block's indices (|v| >> frac_bits): the most significant
 *  plane plus 1, 0 for a block of zeros. An HT set codes planes below it. */
J2KI_HD int j2ki_ht_top_planes(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits)
{
    uint32_t acc = 0;
    int n = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int32_t v = coefs[(ptrdiff_t)y * stride + x];
            acc |= (v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v) >> frac_bits;
        }
    while (acc) {
        n++;
        acc >>= 1;
    }
    return n;
}

/** An HT truncation point: rate bytes (exact, so est = rate), its distortion decrease, whether
 *  it ends a codeword segment; no slope yet (rate control's). */
J2KI_HD void j2ki_ht_pass(J2kiPass *ps, uint32_t rate, double dist, int term)
{
    ps->rate = rate;
    ps->est = rate;
    ps->dist = dist;
    ps->slope = 0.0;
    ps->term = (uint8_t)term;
}

/**
 * One code-block's HT set at bit-plane p (clamped to its top plane) into data[0..cap): the
 * cleanup, and for p > 0 with refine SigProp and MagRef in the second segment, as truncation
 * points passes[0..*nb_passes) (cleanup and MagRef terminate a segment: the two lengths of the
 * packet header). Without refine the set is its cleanup alone: one pass, one segment (a
 * decoder that reads no refinement pass, nvJPEG2000's, takes it). A block of zeros codes nothing (*nb_passes = *numbps = 0). Both backends'
 * tier-1 with ht=1 (ref/ht_ref.c, cuda/ht_kern.cu). Returns 0, J2KC_ERR_BUFSIZE (cap or
 * max_passes too small), J2KC_ERR_INVAL (shape) or J2KC_ERR_INTERNAL (more planes than M_b).
 */
J2KI_HD int j2ki_ht_encode_set(const int32_t *coefs, ptrdiff_t stride, int w, int h, int nb_mag_bits,
                               int frac_bits, int p, int refine, J2kiHtScratch *s, uint8_t *data, uint32_t cap,
                               J2kiPass *passes, int max_passes, int *nb_passes, int *numbps,
                               uint32_t *len)
{
    J2kiHtSig sg;
    uint32_t lcup, lsp = 0, lmr = 0;
    double d[3];
    int top, ret;

    *nb_passes = 0;
    *numbps = 0;
    *len = 0;
    if (w <= 0 || h <= 0 || w > J2KI_HT_MAX_W || w * h > J2KI_HT_MAX_AREA || frac_bits < 0 ||
        frac_bits > 31 || p < 0)
        return J2KC_ERR_INVAL;
    top = j2ki_ht_top_planes(coefs, stride, w, h, frac_bits);
    if (!top)
        return 0;
    if (top > nb_mag_bits || top > 31)
        return J2KC_ERR_INTERNAL;
    p = j2ki_imin(p, top - 1);
    refine = refine && p > 0;
    if (max_passes < (refine ? 3 : 1))
        return J2KC_ERR_BUFSIZE;
    ret = j2ki_ht_cleanup(coefs, stride, w, h, frac_bits, p, s, &sg, data, cap, &lcup);
    if (ret < 0)
        return ret;
    if (refine) {
        ret = j2ki_ht_refine(coefs, stride, w, h, frac_bits, p, &sg, data + lcup, cap - lcup, &lsp, &lmr);
        if (ret < 0)
            return ret;
    }
    j2ki_ht_dist(coefs, stride, w, h, frac_bits, p, refine ? sg.any : NULL, d);   /* d[0] alone without refine */
    *numbps = p + 1;
    *nb_passes = refine ? 3 : 1;
    *len = lcup + lsp + lmr;
    j2ki_ht_pass(&passes[0], lcup, d[0], 1);
    if (refine) {
        j2ki_ht_pass(&passes[1], lcup + lsp, d[1], 0);
        j2ki_ht_pass(&passes[2], lcup + lsp + lmr, d[2], 1);
    }
    return 0;
}

#endif
