/*
 * MQ arithmetic encoder (ISO/IEC 15444-1 Annex C) and the raw (bypass) bit packer used by
 * the selective arithmetic coding bypass (D.6), as J2KI_HD inline functions shared by the
 * reference coder (t1_ref.c) and the CUDA coder (one thread per code-block).
 *
 * No libc, no mutable globals. The probability estimation table (Table C.2) is the only
 * table; nvcc cannot read a namespace-scope `static const` array from device code, so the
 * table is written once as an initializer macro (J2KI_MQC_TAB_INIT) and instantiated twice:
 * as a `static const` host array, and under nvcc also as a `static __constant__` device array
 * (one per translation unit, read-only, so two encoders never share mutable state).
 * J2KI_MQC_TAB names the right one in each compilation pass (__CUDA_ARCH__ is defined only
 * while nvcc compiles for the device).
 *
 * Context state: one uint16_t per context, s2 = 2 * I + MPS (I = index in Table C.2, MPS
 * the more probable symbol); not a byte, because a store through a char type may alias the
 * coder's registers and would force the compiler to reload them after every decision.
 * Packed table entry for s2 (the switch of Table C.2 folded in):
 *   bits  0..15  Qe
 *   bits 16..22  s2 after an MPS renormalisation (2 * NMPS + MPS)
 *   bits 24..30  s2 after an LPS                  (2 * NLPS + (MPS ^ SWITCH))
 *
 * Byte buffer model: the encoder keeps the byte B of C.2 in a register (`b`), `bp` is the
 * index in buf that B will be written to when it is complete (start - 1 for the dummy byte
 * before the segment, which is never written; a carry can never reach it since C + A <
 * 2^27 before the first BYTEOUT). Completed bytes are buf[start .. bp). Writes past `cap`
 * are dropped and set `overflow`; callers check it and report J2KC_ERR_BUFSIZE.
 */
#ifndef J2KI_MQC_H
#define J2KI_MQC_H

#include <stdint.h>

#include "core/j2ki.h"

#define J2KI_MQC_E(qe, nmps, nlps, sw)                                                 \
    ((uint32_t)(qe) | (uint32_t)(2 * (nmps)) << 16 | (uint32_t)(2 * (nlps) + (sw)) << 24), \
    ((uint32_t)(qe) | (uint32_t)(2 * (nmps) + 1) << 16 | (uint32_t)(2 * (nlps) + 1 - (sw)) << 24)

/* Table C.2: Qe, NMPS, NLPS, SWITCH for I = 0..46; two packed entries (MPS 0, MPS 1) each. */
#define J2KI_MQC_TAB_INIT {                                                            \
    J2KI_MQC_E(0x5601,  1,  1, 1), J2KI_MQC_E(0x3401,  2,  6, 0),                      \
    J2KI_MQC_E(0x1801,  3,  9, 0), J2KI_MQC_E(0x0AC1,  4, 12, 0),                      \
    J2KI_MQC_E(0x0521,  5, 29, 0), J2KI_MQC_E(0x0221, 38, 33, 0),                      \
    J2KI_MQC_E(0x5601,  7,  6, 1), J2KI_MQC_E(0x5401,  8, 14, 0),                      \
    J2KI_MQC_E(0x4801,  9, 14, 0), J2KI_MQC_E(0x3801, 10, 14, 0),                      \
    J2KI_MQC_E(0x3001, 11, 17, 0), J2KI_MQC_E(0x2401, 12, 18, 0),                      \
    J2KI_MQC_E(0x1C01, 13, 20, 0), J2KI_MQC_E(0x1601, 29, 21, 0),                      \
    J2KI_MQC_E(0x5601, 15, 14, 1), J2KI_MQC_E(0x5401, 16, 14, 0),                      \
    J2KI_MQC_E(0x5101, 17, 15, 0), J2KI_MQC_E(0x4801, 18, 16, 0),                      \
    J2KI_MQC_E(0x3801, 19, 17, 0), J2KI_MQC_E(0x3401, 20, 18, 0),                      \
    J2KI_MQC_E(0x3001, 21, 19, 0), J2KI_MQC_E(0x2801, 22, 19, 0),                      \
    J2KI_MQC_E(0x2401, 23, 20, 0), J2KI_MQC_E(0x2201, 24, 21, 0),                      \
    J2KI_MQC_E(0x1C01, 25, 22, 0), J2KI_MQC_E(0x1801, 26, 23, 0),                      \
    J2KI_MQC_E(0x1601, 27, 24, 0), J2KI_MQC_E(0x1401, 28, 25, 0),                      \
    J2KI_MQC_E(0x1201, 29, 26, 0), J2KI_MQC_E(0x1101, 30, 27, 0),                      \
    J2KI_MQC_E(0x0AC1, 31, 28, 0), J2KI_MQC_E(0x09C1, 32, 29, 0),                      \
    J2KI_MQC_E(0x08A1, 33, 30, 0), J2KI_MQC_E(0x0521, 34, 31, 0),                      \
    J2KI_MQC_E(0x0441, 35, 32, 0), J2KI_MQC_E(0x02A1, 36, 33, 0),                      \
    J2KI_MQC_E(0x0221, 37, 34, 0), J2KI_MQC_E(0x0141, 38, 35, 0),                      \
    J2KI_MQC_E(0x0111, 39, 36, 0), J2KI_MQC_E(0x0085, 40, 37, 0),                      \
    J2KI_MQC_E(0x0049, 41, 38, 0), J2KI_MQC_E(0x0025, 42, 39, 0),                      \
    J2KI_MQC_E(0x0015, 43, 40, 0), J2KI_MQC_E(0x0009, 44, 41, 0),                      \
    J2KI_MQC_E(0x0005, 45, 42, 0), J2KI_MQC_E(0x0001, 45, 43, 0),                      \
    J2KI_MQC_E(0x5601, 46, 46, 0) }

#define J2KI_MQC_NB_STATES 94   /* 47 indices x 2 MPS values */

static const uint32_t j2ki_mqc_tab_h[J2KI_MQC_NB_STATES] = J2KI_MQC_TAB_INIT;
#if defined(__CUDACC__)
static __constant__ uint32_t j2ki_mqc_tab_d[J2KI_MQC_NB_STATES] = J2KI_MQC_TAB_INIT;
#endif
#if defined(__CUDA_ARCH__) && defined(J2KI_T1_SMEM_TABLES)
/* t1_cuda.cu: the kernels copy the table to shared memory first (J2KI_T1_SMEM_TABLES) */
#define J2KI_MQC_TAB j2ki_mqc_tab_s
#elif defined(__CUDA_ARCH__)
#define J2KI_MQC_TAB j2ki_mqc_tab_d
#else
#define J2KI_MQC_TAB j2ki_mqc_tab_h
#endif

/** MQ encoder registers (C.2) plus the raw packer's, and the output buffer. */
typedef struct J2kiMqc {
    uint32_t a;          /**< interval size A (16 bits used) */
    uint32_t c;          /**< code register C: bit 27 carry, 26..19 next byte, 18..0 fraction */
    int      ct;         /**< CT: shifts left before the next BYTEOUT (raw: free bits in c) */
    int      b;          /**< byte B not yet written (carry may still increment it) */
    int32_t  bp;         /**< index in buf where B goes; start - 1 for the dummy byte */
    int32_t  start;      /**< first byte of the current codeword segment */
    uint8_t *buf;
    uint32_t cap;        /**< bytes of buf that may be written */
    int      overflow;   /**< set when a byte fell past cap */
} J2kiMqc;

/*
 * Hot-path functions are forced inline on the host too: the pass loops keep A, C and CT in
 * a local J2kiMqcReg (t1_core.h), and only if every function that touches it is inlined can
 * the compiler hold them in registers instead of reloading them from memory after each byte
 * store (a store through uint8_t * may alias anything whose address escaped).
 */
#if !defined(__CUDACC__) && defined(__GNUC__)
#define J2KI_MQC_HOT J2KI_HD __attribute__((always_inline))
#else
#define J2KI_MQC_HOT J2KI_HD
#endif

/* ---- buffer access ---- */

J2KI_MQC_HOT void j2ki_mqc_put(J2kiMqc *m, int32_t pos, int byte)
{
    if ((uint32_t)pos < m->cap)
        m->buf[pos] = (uint8_t)byte;
    else
        m->overflow = 1;
}

/* ---- MQ encoder, C.2 ---- */

/** INITENC (C.2.8) for a codeword segment starting at byte `start` of buf. */
J2KI_HD void j2ki_mqc_init(J2kiMqc *m, uint8_t *buf, uint32_t cap, int32_t start)
{
    m->buf = buf;
    m->cap = cap;
    m->start = start;
    m->overflow = 0;
    m->a = 0x8000;
    m->c = 0;
    m->ct = 12;
    m->b = 0;            /* dummy byte at start - 1: never 0xFF (no segment ends with 0xFF) */
    m->bp = start - 1;
}

/** Initial context states of Table D.7: all I = 0 MPS 0 except ctx 0 (I = 4), run-length 17
 *  (I = 3) and uniform 18 (I = 46). */
J2KI_HD void j2ki_mqc_reset_ctx(uint16_t *ctx)
{
    int i;
    for (i = 0; i < 19; i++)
        ctx[i] = 0;
    ctx[0] = 2 * 4;
    ctx[17] = 2 * 3;
    ctx[18] = 2 * 46;
}

/** BYTEOUT (C.2.7, Figure C.9) with bit stuffing after 0xFF and carry propagation into B. */
J2KI_MQC_HOT void j2ki_mqc_byteout(J2kiMqc *m)
{
    if (m->b == 0xFF) {
        if (m->bp >= m->start)
            j2ki_mqc_put(m, m->bp, m->b);
        m->bp++;
        m->b = (int)(m->c >> 20);
        m->c &= 0xFFFFF;
        m->ct = 7;
        return;
    }
    if (m->c & 0x8000000) {
        m->b++;
        m->c &= 0x7FFFFFF;
        if (m->b == 0xFF) {
            if (m->bp >= m->start)
                j2ki_mqc_put(m, m->bp, m->b);
            m->bp++;
            m->b = (int)(m->c >> 20);
            m->c &= 0xFFFFF;
            m->ct = 7;
            return;
        }
    }
    if (m->bp >= m->start)
        j2ki_mqc_put(m, m->bp, m->b);
    m->bp++;
    m->b = (int)(m->c >> 19);
    m->c &= 0x7FFFF;
    m->ct = 8;
}

/** Left shifts that bring 0 < a < 0x8000 to 0x8000 <= a < 0x10000. */
J2KI_MQC_HOT int j2ki_mqc_renorm_shift(uint32_t a)
{
#if defined(__CUDA_ARCH__)
    return __clz(a) - 16;
#elif defined(__GNUC__)
    return __builtin_clz(a) - 16;
#else
    int n = 0;
    while (!(a & 0x8000)) {
        a <<= 1;
        n++;
    }
    return n;
#endif
}

/** RENORME (C.2.6, Figure C.8) by n >= CT bits: shifts A and C left one bit at a time with a
 *  BYTEOUT each time CT reaches 0, here in runs of up to CT bits. Taken about once per
 *  output byte; it works on the coder in memory (j2ki_mqc_encode_r stores A, C, CT there
 *  first), so the pass loops need no registers for the byte buffer state. Inlined rather
 *  than called: around a call, every value the loop keeps would have to sit in one of the
 *  few registers a call preserves, and the rest, C among them, on the stack. */
J2KI_MQC_HOT void j2ki_mqc_renorme_bytes(J2kiMqc *m, int n)
{
    while (n >= m->ct) {
        m->a <<= m->ct;
        m->c <<= m->ct;
        n -= m->ct;
        j2ki_mqc_byteout(m);
    }
    m->a <<= n;
    m->c <<= n;
    m->ct -= n;
}

/** A, C, CT of an MQ coder as the pass loops keep them in local variables (one copy per
 *  pass, see J2KI_MQC_HOT); the rest of the coder stays in its J2kiMqc. */
typedef struct J2kiMqcReg {
    uint32_t a;
    int      ct;         /* between a and c: GCC would otherwise pack a and c into one
                            vector register (SLP) and pay moves in and out of it */
    uint32_t c;
} J2kiMqcReg;

J2KI_MQC_HOT J2kiMqcReg j2ki_mqc_reg_get(const J2kiMqc *m)
{
    J2kiMqcReg r;
    r.a = m->a;
    r.c = m->c;
    r.ct = m->ct;
    return r;
}

J2KI_MQC_HOT void j2ki_mqc_reg_put(J2kiMqc *m, const J2kiMqcReg *r)
{
    m->a = r->a;
    m->c = r->c;
    m->ct = r->ct;
}

/**
 * ENCODE (C.2.2) up to RENORME: codes decision d (0/1) in the context whose state is *cx, with
 * CODEMPS / CODELPS and their conditional exchange (Figures C.6, C.7) on the registers r (C
 * updated, the state moved); returns the new A, before renormalisation. Written without
 * branches on the decision: whether it is the MPS is as good as random to a branch predictor.
 * After A -= Qe, with x = (A < Qe) the conditional exchange test:
 *   MPS, !x: C += Qe          MPS, x: A = Qe
 *   LPS, !x: A = Qe           LPS, x: C += Qe   (A keeps A - Qe)
 * so "C += Qe, A kept" iff MPS != x, else "A = Qe". The state moves to NLPS after an LPS,
 * to NMPS after an MPS that needs renormalisation (A - Qe < 0x8000), else stays. A
 * renormalisation by 0 bits (MPS with A - Qe >= 0x8000) is a no-op.
 */
J2KI_MQC_HOT uint32_t j2ki_mqc_interval(J2kiMqcReg *r, uint16_t *cx, int d)
{
    uint32_t st = *cx;
    uint32_t e = J2KI_MQC_TAB[st];
    uint32_t qe = e & 0xFFFF;
    uint32_t a = r->a - qe;
    uint32_t lps = ((uint32_t)d ^ st) & 1;
    /* A, Qe < 2^16, so A - Qe has the sign bit of A < Qe; keep iff that equals lps */
    uint32_t keep = (((a - qe) >> 31) ^ lps) - 1;       /* all ones: C += Qe, A kept */
    uint32_t nmps = (a & 0x8000) ? st : (e >> 16) & 0x7F;
    *cx = (uint16_t)(lps ? e >> 24 : nmps);              /* bit 31 of e is 0 */
    r->c += qe & keep;
    return keep ? a : qe;
}

/** ENCODE: j2ki_mqc_interval, then RENORME (C.2.6) on the registers r; m holds the rest of
 *  the coder (its a, c, ct are stale while r is in use). */
J2KI_MQC_HOT void j2ki_mqc_encode_r(J2kiMqc *m, J2kiMqcReg *r, uint16_t *cx, int d)
{
    uint32_t a = j2ki_mqc_interval(r, cx, d);
    int n = j2ki_mqc_renorm_shift(a);
    if (n < r->ct) {                     /* the common case: no byte completes */
        r->a = a << n;
        r->c <<= n;
        r->ct -= n;
        return;
    }
    m->a = a;
    m->c = r->c;
    m->ct = r->ct;
    j2ki_mqc_renorme_bytes(m, n);
    *r = j2ki_mqc_reg_get(m);
}

/**
 * BYTEOUT (C.2.7) as j2ki_mqc_byteout, on C and CT in registers, written as selects instead of
 * its three branches: B == 0xFF before (a stuffed bit: 7 bits follow, the carry goes into
 * them), a carry into B (then B may become 0xFF), neither. With the carry taken into B first
 * the three cases are one: B is written, then the next B takes 7 bits of C if B is 0xFF,
 * else 8.
 */
J2KI_MQC_HOT void j2ki_mqc_byteout_sel(J2kiMqc *m, uint32_t *c, int *ct)
{
    const uint32_t carry = m->b != 0xFF ? (*c >> 27) & 1 : 0;
    int ff, sh;
    m->b += (int)carry;
    *c = carry ? *c & 0x7FFFFFF : *c;
    ff = m->b == 0xFF;
    if (m->bp >= m->start)
        j2ki_mqc_put(m, m->bp, m->b);
    m->bp++;
    sh = ff ? 20 : 19;
    m->b = (int)(*c >> sh);
    *c &= (1u << sh) - 1;
    *ct = ff ? 7 : 8;
}

/*
 * The table as the CUDA MQ threads address it (j2ki_t1p_code_run): in t1_cuda.cu's kernels
 * (J2KI_T1_SMEM_TABLES) a 32-bit shared-memory address held in a register, read with
 * ld.shared; left to itself nvcc recomputes the shared window's base (S2R SR_CgaCtaId, then
 * a LEA) before the table loads of every decision, on the decision chain. The loads have no
 * memory clobber: the table does not change once loaded, and every load depends on a state
 * read after the kernel's barrier. Elsewhere, the array.
 */
#if defined(__CUDA_ARCH__) && defined(J2KI_T1_SMEM_TABLES)
typedef uint32_t J2kiMqcTab;
J2KI_MQC_HOT J2kiMqcTab j2ki_mqc_tab(void)
{
    uint32_t t = (uint32_t)__cvta_generic_to_shared(J2KI_MQC_TAB);
    asm("" : "+r"(t));
    return t;
}
J2KI_MQC_HOT uint32_t j2ki_mqc_entry_t(J2kiMqcTab t, uint32_t s2)
{
    uint32_t v;
    asm("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(t + 4 * s2));
    return v;
}
#else
typedef const uint32_t *J2kiMqcTab;
J2KI_MQC_HOT J2kiMqcTab j2ki_mqc_tab(void)
{
    return J2KI_MQC_TAB;
}
J2KI_MQC_HOT uint32_t j2ki_mqc_entry_t(J2kiMqcTab t, uint32_t s2)
{
    return t[s2];
}
#endif

/**
 * j2ki_mqc_encode_r for the CUDA MQ threads (j2ki_t1p_code_run), which run 32 code-blocks per
 * warp, and whose chain of decisions is what a frame of large code-blocks waits for
 * (t1_par_cuda.cuh). The decision's context state s2 and its table entry e come in registers
 * (*st, *e) and leave as the context's new state and entry. The same arithmetic, so the same
 * bytes, arranged for a short dependency chain from one decision to the next:
 *   - the entries of both states the context may move to (NMPS, NLPS) are loaded as soon as
 *     e is known, before the outcome: the new entry is then a select, and a next decision in
 *     the same context waits on one table load after e, not on the arithmetic that picks the
 *     state and then a load (the caller forwards state and entry, j2ki_t1p_code_run);
 *   - the conditional exchange test A - Qe < Qe is taken as A < 2 Qe, beside the subtraction
 *     rather than after it;
 *   - the renormalisation shift (RENORME, C.2.6) of both outcomes is computed at once, that of
 *     A - Qe from A, that of Qe off the chain (it comes with the table entry), and the new A
 *     is selected already shifted: RENORME shifts A left by n bits whatever BYTEOUTs it runs
 *     on the way, so A never waits on the byte path;
 *   - the BYTEOUTs (j2ki_mqc_byteout_sel: selects instead of the three branches of C.2.7)
 *     work on C and CT alone. A lane completes a byte about every 8 to 16 decisions, so
 *     nearly every decision of a warp runs the byte path for some lane; RENORME shifts n <= 15
 *     bits (A >= 1 after the exchange), with a BYTEOUT each time CT bits are shifted; after
 *     one, CT is 7 or 8, so a second is rare and a third rarer still (the loop).
 */
J2KI_MQC_HOT void j2ki_mqc_encode_e(J2kiMqc *m, J2kiMqcReg *r, J2kiMqcTab tab, uint32_t *st, uint32_t *e, int d)
{
    const uint32_t s = *st, en = *e, qe = en & 0xFFFF, nm = (en >> 16) & 0x7F, nl = en >> 24;
    uint32_t em = j2ki_mqc_entry_t(tab, nm), el = j2ki_mqc_entry_t(tab, nl);
#if defined(__CUDA_ARCH__)
    /* both loads issued here, at once: left to itself, nvcc loads the NLPS entry only for an
     * LPS, into the register of the NMPS one, after the select that reads that one */
    asm("" : "+r"(em), "+r"(el));
#endif
    const uint32_t a = r->a - qe;
    const uint32_t lps = ((uint32_t)d ^ s) & 1;
    /* "C += Qe, A kept" iff the exchange test (A - Qe < Qe) equals lps (j2ki_mqc_interval) */
    const int keep = (uint32_t)(r->a < 2 * qe) == lps;
    /* NLPS after an LPS, NMPS after an MPS that renormalises (A - Qe < 0x8000), else kept */
    const int ren = !(a & 0x8000);
    const int na = j2ki_mqc_renorm_shift(a), nq = j2ki_mqc_renorm_shift(qe);
    int n = keep ? na : nq, ct = r->ct;
    uint32_t c = r->c + (keep ? qe : 0);
    *st = lps ? nl : ren ? nm : s;
    *e = lps ? el : ren ? em : en;
    r->a = keep ? a << na : qe << nq;
    while (n >= ct) {
        c <<= ct;
        n -= ct;
        j2ki_mqc_byteout_sel(m, &c, &ct);
    }
    r->c = c << n;
    r->ct = ct - n;
}

/** j2ki_mqc_encode_e on the context state *cx (the unit test's entry point). */
J2KI_MQC_HOT void j2ki_mqc_encode_sel(J2kiMqc *m, J2kiMqcReg *r, uint16_t *cx, int d)
{
    const J2kiMqcTab tab = j2ki_mqc_tab();
    uint32_t s = *cx, e = j2ki_mqc_entry_t(tab, s);
    j2ki_mqc_encode_e(m, r, tab, &s, &e, d);
    *cx = (uint16_t)s;
}

/** ENCODE on the coder's own registers (for the few decisions outside the pass loops). */
J2KI_MQC_HOT void j2ki_mqc_encode(J2kiMqc *m, uint16_t *cx, int d)
{
    J2kiMqcReg r = j2ki_mqc_reg_get(m);
    j2ki_mqc_encode_r(m, &r, cx, d);
    j2ki_mqc_reg_put(m, &r);
}

/**
 * FLUSH (C.2.9, Figure C.10): SETBITS picks the value of [C, C + A) with the most trailing
 * 1 bits, two BYTEOUTs emit it; B is written unless it is 0xFF (a segment never ends with
 * 0xFF: the decoder reads 0xFF past the end anyway). Returns the end of the segment (index
 * one past its last byte).
 */
J2KI_HD int32_t j2ki_mqc_flush(J2kiMqc *m)
{
    uint32_t tempc = m->c + m->a;
    m->c |= 0xFFFF;
    if (m->c >= tempc)
        m->c -= 0x8000;
    m->c <<= m->ct;
    j2ki_mqc_byteout(m);
    m->c <<= m->ct;
    j2ki_mqc_byteout(m);
    if (m->b != 0xFF && m->bp >= m->start) {
        j2ki_mqc_put(m, m->bp, m->b);
        m->bp++;
    }
    return m->bp > m->start ? m->bp : m->start;
}

/**
 * Predictable termination (D.4.2, PTERM): emits just enough bits of C (down to bit 15 of
 * the register, the top of A) that the decoder, reading 0xFF past the end, lands inside
 * [C, C + A); the rest of C is left out so a decoder can check the padding. k = 12 - CT bits
 * still have to leave the register before the B that holds them is complete.
 */
J2KI_HD int32_t j2ki_mqc_flush_pterm(J2kiMqc *m)
{
    int k = 11 - m->ct + 1;
    while (k > 0) {
        m->c <<= m->ct;
        m->ct = 0;
        j2ki_mqc_byteout(m);
        k -= m->ct;
    }
    if (m->b != 0xFF && m->bp >= m->start) {
        j2ki_mqc_put(m, m->bp, m->b);
        m->bp++;
    }
    return m->bp > m->start ? m->bp : m->start;
}

/* ---- raw (bypass) segments, D.6 ----
 * Bits are packed MSB first; after a 0xFF byte the next byte carries only 7 bits (its MSB is
 * a stuffed 0), so no 0xFF is ever followed by a byte > 0x7F. Registers reused: c holds the
 * bits of the byte being filled, ct the bits still free in it, bp the index of that byte,
 * b the last completed byte (for the stuffing rule). */

J2KI_HD void j2ki_mqc_raw_init(J2kiMqc *m, uint8_t *buf, uint32_t cap, int32_t start)
{
    m->buf = buf;
    m->cap = cap;
    m->start = start;
    m->overflow = 0;
    m->c = 0;
    m->ct = 8;
    m->b = 0;
    m->bp = start;
}

J2KI_MQC_HOT void j2ki_mqc_raw_put(J2kiMqc *m, int d)
{
    m->c = (m->c << 1) | (uint32_t)d;
    if (--m->ct == 0) {
        j2ki_mqc_put(m, m->bp, (int)m->c);
        m->bp++;
        m->b = (int)m->c;
        m->ct = m->b == 0xFF ? 7 : 8;
        m->c = 0;
    }
}

/**
 * The raw packer after bytes[0 .. k) were completed and the state became (c, ct, b), as a run
 * of j2ki_mqc_raw_put calls would leave it: the column-parallel BYPASS passes pack their bits
 * in a warp (t1_par_cuda.cuh, t1p_pack_raw) and the coder only appends the bytes.
 */
J2KI_HD void j2ki_mqc_raw_append(J2kiMqc *m, const uint8_t *bytes, uint32_t k, uint32_t c, int ct, int b)
{
    uint32_t i;
    for (i = 0; i < k; i++)
        j2ki_mqc_put(m, m->bp++, bytes[i]);
    m->c = c;
    m->ct = ct;
    m->b = b;
}

/** Bytes of the raw segment that hold every bit put so far (a truncation length). */
J2KI_HD int32_t j2ki_mqc_raw_len(const J2kiMqc *m)
{
    return m->bp + (m->ct < (m->b == 0xFF && m->bp > m->start ? 7 : 8));
}

/**
 * Terminates a raw segment: a partly filled byte is completed with alternating 0, 1, 0...
 * bits. A final 0xFF is dropped (the decoder reads 0xFF past the end), except with PTERM,
 * where it is followed by a stuffed byte of padding only (0 then 0101010 = 0x2A) so the end
 * is predictable. Returns the end of the segment.
 */
J2KI_HD int32_t j2ki_mqc_raw_flush(J2kiMqc *m, int pterm)
{
    int full = m->b == 0xFF && m->bp > m->start ? 7 : 8;
    if (m->ct < full || (pterm && full == 7)) {
        int bit = 0;
        while (m->ct > 0) {
            m->c = (m->c << 1) | (uint32_t)bit;
            m->ct--;
            bit ^= 1;
        }
        j2ki_mqc_put(m, m->bp, (int)m->c);
        m->bp++;
        m->b = (int)m->c;
        m->ct = 8;
        m->c = 0;
    } else if (full == 7) {
        m->bp--;        /* drop the trailing 0xFF */
    }
    return m->bp;
}

/* ---- truncation lengths of passes that do not end a segment (D.4.1) ---- */

/** Encoder registers at the end of a pass that does not terminate its segment. */
typedef struct J2kiMqcMark {
    int32_t  bp;
    int      b;
    uint32_t c, a;
    int      ct;
} J2kiMqcMark;

J2KI_HD J2kiMqcMark j2ki_mqc_mark(const J2kiMqc *m)
{
    J2kiMqcMark k;
    k.bp = m->bp;
    k.b = m->b;
    k.c = m->c;
    k.a = m->a;
    k.ct = m->ct;
    return k;
}

/**
 * Shortest prefix of a terminated MQ segment [start, end) of buf that still decodes every
 * decision coded before the mark, for a decoder that reads 0xFF past the end of its data
 * (C.3.4: 0xFF followed by a byte > 0x8F feeds 1 bits). Computed once the segment is final,
 * so the bytes after the mark (and a carry into B) are known: this is exact, not a guess.
 *
 * At the mark the interval is [L, L + A) with L = B * 2^(27 - CT) + C (B's least significant
 * bit sits at register bit 27 - CT). Keeping n bytes, the decoder sees the value
 *   V(n) = sum over kept bytes j of buf[j] * 2^pos_j  +  (2^pos_last - 1)
 * (pos drops by 8 per byte, by 7 after 0xFF), and the prefix is decodable iff
 * L <= V(n) < L + A. Both bounds are needed: the byte after a 0xFF may hold a carry in its
 * top bit (up to 0x8F), so cutting right after a 0xFF can fall below L. The first n that
 * fits is returned, else the segment end; it is found within a few bytes past B. Values are
 * kept in int64 scaled by 2^8 (pos_bp <= 27, L < 2^36 * 2^8); bytes far enough below A that
 * pos would fall under -8 are not needed and end the search at the segment end.
 */
J2KI_HD int32_t j2ki_mqc_trunc_len(const uint8_t *buf, int32_t start, int32_t end,
                                   const J2kiMqcMark *k)
{
    int pos = 27 - k->ct + 8;
    int64_t u = ((int64_t)k->b << pos) + ((int64_t)k->c << 8) + ((int64_t)k->a << 8);
    int prev = k->bp < start ? 0 : k->bp < end ? buf[k->bp] : 0xFF;
    int64_t v = (int64_t)prev << pos;
    int32_t n = k->bp + 1;
    int64_t l = u - ((int64_t)k->a << 8);
    for (;;) {
        int64_t vn = v + (((int64_t)1 << pos) - 1);
        /* the fit test comes first: the shortest prefix may need the byte at which pos drops
         * below 8 (then 0 <= pos < 8 here, and the loop ends below without a negative shift) */
        if (vn >= l && vn < u)
            return n > start ? n : start;
        if (n >= end || pos < 8)
            return end;
        pos -= prev == 0xFF ? 7 : 8;
        prev = buf[n++];
        v += (int64_t)prev << pos;
    }
}

#endif /* J2KI_MQC_H */
