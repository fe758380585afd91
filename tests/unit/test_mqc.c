/*
 * MQ coder (ISO/IEC 15444-1 Annex C) and raw segments (D.6), mqc.h:
 *  - the test sequence of ITU-T T.88 Annex H.2 (the same MQ coder as JPEG 2000): 256
 *    decisions in one context starting at I = 0, MPS = 0, and the published code bytes;
 *    T.88 FLUSH ends with the 0xFF 0xAC marker, JPEG 2000's FLUSH with the bytes before it;
 *  - the independent decoder of t1dec.h (C.3) decodes the published bytes back;
 *  - seeded random streams in random contexts, in consecutive segments of every kind (MQ
 *    with FLUSH or PTERM, raw with either termination), decoded back; no segment ends with
 *    0xFF, no 0xFF is followed by a byte > 0x8F; every truncation length computed for a
 *    mid-segment mark decodes the decisions before the mark;
 *  - j2ki_mqc_encode_sel (the CUDA MQ threads') against j2ki_mqc_encode_r, decision by
 *    decision, through renormalisations of one, two and three BYTEOUTs.
 */
#include "test.h"
#define TD_NO_T1
#include "t1dec.h"
#include "hd/mqc.h"

static const uint8_t h2_in[32] = {
    0x00, 0x02, 0x00, 0x51, 0x00, 0x00, 0x00, 0xC0, 0x03, 0x52, 0x87, 0x2A, 0xAA, 0xAA, 0xAA, 0xAA,
    0x82, 0xC0, 0x20, 0x00, 0xFC, 0xD7, 0x9E, 0xF6, 0xBF, 0x7F, 0xED, 0x90, 0x4F, 0x46, 0xA3, 0xBF,
};
static const uint8_t h2_out[30] = {
    0x84, 0xC7, 0x3B, 0xFC, 0xE1, 0xA1, 0x43, 0x04, 0x02, 0x20, 0x00, 0x00, 0x41, 0x0D, 0xBB,
    0x86, 0xF4, 0x31, 0x7F, 0xFF, 0x88, 0xFF, 0x37, 0x47, 0x1A, 0xDB, 0x6A, 0xDF, 0xFF, 0xAC,
};

static void test_t88(void)
{
    uint8_t buf[64];
    uint16_t cx = 0;
    J2kiMqc m;
    TdMq d;
    TdCtx dcx = {0, 0};
    int i, end, bad = 0;
    memset(buf, 0x55, sizeof(buf));
    j2ki_mqc_init(&m, buf, sizeof(buf), 0);
    for (i = 0; i < 256; i++)
        j2ki_mqc_encode(&m, &cx, (h2_in[i >> 3] >> (7 - (i & 7))) & 1);
    end = j2ki_mqc_flush(&m);
    CHECK(end == 28, "T.88 H.2: %d bytes, expected 28 (30 less the FF AC marker)", end);
    CHECK(!memcmp(buf, h2_out, 28), "T.88 H.2: coded bytes differ");
    CHECK(!m.overflow, "overflow");

    td_mq_init(&d, h2_out, 0, sizeof(h2_out));
    for (i = 0; i < 256; i++)
        bad += td_mq_decode(&d, &dcx) != ((h2_in[i >> 3] >> (7 - (i & 7))) & 1);
    CHECK(!bad, "T.88 H.2: decoder got %d decisions wrong", bad);

    /* buffer too small: no write past cap, overflow reported */
    memset(buf, 0x55, sizeof(buf));
    cx = 0;
    j2ki_mqc_init(&m, buf, 10, 0);
    for (i = 0; i < 256; i++)
        j2ki_mqc_encode(&m, &cx, (h2_in[i >> 3] >> (7 - (i & 7))) & 1);
    j2ki_mqc_flush(&m);
    CHECK(m.overflow, "overflow not reported");
    for (i = 10; i < 64; i++)
        bad += buf[i] != 0x55;
    CHECK(!bad, "wrote past cap");
    printf("# T.88 H.2 ok\n");
}

#define MAXSYM 4000
#define NSEG 8

typedef struct {
    int kind;              /* 0 MQ FLUSH, 1 MQ PTERM, 2 raw, 3 raw PTERM */
    int n;
    uint8_t sym[MAXSYM], ctx[MAXSYM];
    int mark_at;           /* decisions before the mark */
    int32_t start, end, trunc;
} Seg;

static void test_random(int iters)
{
    static uint8_t buf[NSEG * MAXSYM + 64];
    static Seg segs[NSEG];
    int it, s, i, bad_dec = 0, bad_trunc = 0, bad_ff = 0, bad_end = 0, nb_trunc = 0, bad_loose = 0;
    for (it = 0; it < iters; it++) {
        int nseg = 1 + test_rand() % NSEG;
        uint16_t ectx[19];
        uint32_t prob[19];
        int32_t pos = 0;
        J2kiMqc m = {0};
        for (i = 0; i < 19; i++)
            prob[i] = test_rand() % 65536;   /* P(1) per context, skewed */
        j2ki_mqc_reset_ctx(ectx);
        for (s = 0; s < nseg; s++) {
            Seg *g = &segs[s];
            J2kiMqcMark mk;
            int32_t rawmark = 0;
            g->kind = test_rand() % 4;
            g->n = test_rand() % 5 == 0 ? test_rand() % 8 : test_rand() % MAXSYM;
            g->mark_at = g->n ? (int)(test_rand() % (g->n + 1)) : 0;
            for (i = 0; i < g->n; i++) {
                g->ctx[i] = (uint8_t)(test_rand() % 19);
                g->sym[i] = (test_rand() & 0xFFFF) < prob[g->ctx[i]];
                if (it & 1)
                    g->sym[i] = (uint8_t)(test_rand() & 1);
            }
            g->start = pos;
            if (g->kind < 2)
                j2ki_mqc_init(&m, buf, sizeof(buf), pos);
            else
                j2ki_mqc_raw_init(&m, buf, sizeof(buf), pos);
            for (i = 0; i <= g->n; i++) {
                if (i == g->mark_at) {
                    mk = j2ki_mqc_mark(&m);
                    rawmark = j2ki_mqc_raw_len(&m);
                }
                if (i == g->n)
                    break;
                if (g->kind < 2)
                    j2ki_mqc_encode(&m, &ectx[g->ctx[i]], g->sym[i]);
                else
                    j2ki_mqc_raw_put(&m, g->sym[i]);
            }
            if (g->kind == 0)
                g->end = j2ki_mqc_flush(&m);
            else if (g->kind == 1)
                g->end = j2ki_mqc_flush_pterm(&m);
            else
                g->end = j2ki_mqc_raw_flush(&m, g->kind == 3);
            if (g->kind < 2)
                g->trunc = j2ki_mqc_trunc_len(buf, g->start, g->end, &mk);
            else
                g->trunc = rawmark < g->end ? rawmark : g->end;
            if (g->end > g->start && buf[g->end - 1] == 0xFF)
                bad_end++;
            for (i = g->start; i + 1 < g->end; i++)
                bad_ff += buf[i] == 0xFF && buf[i + 1] > (g->kind < 2 ? 0x8F : 0x7F);
            if (g->trunc < g->start || g->trunc > g->end)
                bad_trunc++;
            /* tight: the shortest decodable prefix ends within 5 bytes of the mark's byte
             * (a length that falls back to the segment end is too long for rate control) */
            if (g->kind < 2 && g->trunc > mk.bp + 5)
                bad_loose++;
            pos = g->end;
            bad_end += m.overflow;

        }
        /* decode back: every segment whole, then each one cut at its mark's length */
        {
            TdCtx dcx[19];
            int pass;
            for (pass = 0; pass < 2; pass++) {
                td_reset_ctx(dcx);
                for (s = 0; s < nseg; s++) {
                    Seg *g = &segs[s];
                    TdMq d;
                    int n = pass ? g->mark_at : g->n;
                    int32_t end = pass ? g->trunc : g->end;
                    TdCtx save[19];
                    memcpy(save, dcx, sizeof(save));
                    if (g->kind < 2)
                        td_mq_init(&d, buf, g->start, end);
                    else
                        td_raw_init(&d, buf, g->start, end);
                    for (i = 0; i < n; i++) {
                        int b = g->kind < 2 ? td_mq_decode(&d, &dcx[g->ctx[i]]) : td_raw_bit(&d);
                        if (b != g->sym[i]) {
                            if (pass)
                                bad_trunc++;
                            else
                                bad_dec++;
                            break;
                        }
                    }
                    if (pass) {
                        /* contexts of the rest of the segment: replay with the full data */
                        memcpy(dcx, save, sizeof(dcx));
                        if (g->kind < 2)
                            td_mq_init(&d, buf, g->start, g->end);
                        for (i = 0; i < g->n && g->kind < 2; i++)
                            td_mq_decode(&d, &dcx[g->ctx[i]]);
                        nb_trunc++;
                    }
                }
            }
        }
    }
    CHECK(!bad_dec, "%d segments decoded wrong", bad_dec);
    CHECK(!bad_trunc, "%d truncated segments decoded wrong (or length out of range)", bad_trunc);
    CHECK(!bad_loose, "%d truncation lengths more than 5 bytes past the mark", bad_loose);
    CHECK(!bad_ff, "%d 0xFF followed by a forbidden byte", bad_ff);
    CHECK(!bad_end, "%d segments end with 0xFF", bad_end);
    printf("# %d random streams, %d truncations checked\n", iters, nb_trunc);
}

/*
 * Truncation lengths must be tight, not only decodable: rate control prices each pass by them,
 * so a length that falls back to the segment end makes one pass look as expensive as the whole
 * rest. Marks after every symbol of random streams; each prefix must decode the symbols before
 * the mark and end within 5 bytes of the mark's byte position (C.2.9: at most 4 bytes of the
 * coder's registers are pending, plus a stuffed byte).
 */
static void test_tight(int iters)
{
    static uint8_t buf[8192];
    static J2kiMqcMark marks[2001];
    static uint8_t sym[2000], ctxn[2000];
    int bad_loose = 0, bad_dec = 0, nb = 0;
    for (int it = 0; it < iters; it++) {
        uint16_t ectx[19];
        uint32_t prob[19];
        J2kiMqc m;
        int n = 200 + (int)(test_rand() % 1800), end, i;
        for (i = 0; i < 19; i++)
            prob[i] = test_rand() % 65536;
        j2ki_mqc_reset_ctx(ectx);
        j2ki_mqc_init(&m, buf, sizeof(buf), 0);
        for (i = 0; i < n; i++) {
            ctxn[i] = (uint8_t)(test_rand() % 19);
            sym[i] = (test_rand() & 0xFFFF) < prob[ctxn[i]];
            marks[i] = j2ki_mqc_mark(&m);
            j2ki_mqc_encode(&m, &ectx[ctxn[i]], sym[i]);
        }
        end = j2ki_mqc_flush(&m);
        for (i = 1; i < n; i += 1 + (int)(test_rand() % 7)) {
            int32_t t = j2ki_mqc_trunc_len(buf, 0, end, &marks[i]);
            TdMq d;
            TdCtx dc[19];
            td_reset_ctx(dc);
            nb++;
            if (t > marks[i].bp + 5)
                bad_loose++;
            td_mq_init(&d, buf, 0, t);
            for (int k = 0; k < i; k++)
                if (td_mq_decode(&d, &dc[ctxn[k]]) != sym[k]) {
                    bad_dec++;
                    break;
                }
        }
    }
    CHECK(!bad_loose, "%d of %d truncation lengths more than 5 bytes past the mark", bad_loose, nb);
    CHECK(!bad_dec, "%d of %d truncated prefixes decode wrong", bad_dec, nb);
    printf("# %d marks checked for tight truncation\n", nb);
}

/*
 * j2ki_mqc_encode_sel (the CUDA MQ threads' ENCODE, BYTEOUT by selects) against
 * j2ki_mqc_encode_r (the reference's) on the same decisions: the coder's every register and
 * every byte written equal after each decision, the segment then flushed alike. The contexts
 * are driven to the most skewed states (I = 45, Qe = 1: an LPS shifts 15 bits, up to three
 * BYTEOUTs in one renormalisation) and through runs of 0xFF bytes; each renormalisation's
 * count of BYTEOUTs is tallied and every count 1..3 must have occurred.
 */
static void test_sel(int iters)
{
    static uint8_t b1[16384], b2[16384];
    int bad = 0, outs[4] = { 0, 0, 0, 0 }, nff = 0;
    for (int it = 0; it < iters && !bad; it++) {
        uint16_t c1[19], c2[19];
        uint32_t prob[19];
        J2kiMqc m1, m2;
        J2kiMqcReg r1, r2;
        int n = 500 + (int)(test_rand() % 4000), i, e1, e2;
        for (i = 0; i < 19; i++) {   /* very skewed, uniform or in between */
            uint32_t k = test_rand() % 4;
            prob[i] = k == 0 ? test_rand() % 64 : k == 1 ? 65536 - test_rand() % 64 : test_rand() % 65536;
        }
        j2ki_mqc_reset_ctx(c1);
        j2ki_mqc_reset_ctx(c2);
        memset(b1, 0x5A, sizeof(b1));
        memset(b2, 0x5A, sizeof(b2));
        j2ki_mqc_init(&m1, b1, sizeof(b1), 1 + it % 3);
        j2ki_mqc_init(&m2, b2, sizeof(b2), 1 + it % 3);
        r1 = j2ki_mqc_reg_get(&m1);
        r2 = j2ki_mqc_reg_get(&m2);
        for (i = 0; i < n; i++) {
            int cx = (int)(test_rand() % 19), d;
            int32_t bp0 = m2.bp;
            /* every 64th decision an LPS in a context that has only seen MPSs */
            d = (test_rand() & 0xFFFF) < prob[cx];
            if ((i & 63) == 63)
                d = !(c1[cx] & 1);
            j2ki_mqc_encode_r(&m1, &r1, &c1[cx], d);
            j2ki_mqc_encode_sel(&m2, &r2, &c2[cx], d);
            if (m2.bp - bp0 <= 3)
                outs[m2.bp - bp0]++;
            if (r1.a != r2.a || r1.c != r2.c || r1.ct != r2.ct || c1[cx] != c2[cx] || m1.b != m2.b ||
                m1.bp != m2.bp) {
                bad++;
                break;
            }
        }
        j2ki_mqc_reg_put(&m1, &r1);
        j2ki_mqc_reg_put(&m2, &r2);
        e1 = j2ki_mqc_flush(&m1);
        e2 = j2ki_mqc_flush(&m2);
        if (e1 != e2 || memcmp(b1, b2, sizeof(b1)))
            bad++;
        for (i = 1 + it % 3; i < e1; i++)
            nff += b1[i - 1] == 0xFF;
    }
    /* crafted: an LPS at I = 45 (A becomes Qe = 1: 15 bits to shift) from B = 0xFF, CT = 1
     * and C whose next byte is 0xFF again: three BYTEOUTs; and random states around it */
    for (int it = 0; it < 20000 && !bad; it++) {
        J2kiMqc m1, m2;
        J2kiMqcReg r1, r2;
        uint16_t x1, x2;
        int32_t bp0;
        j2ki_mqc_init(&m1, b1, sizeof(b1), 0);
        m1.bp = 5;
        m1.b = (it & 1) ? 0xFF : (int)(test_rand() & 0xFF);
        r1.a = 0x8000 | (test_rand() & 0x7FFF);
        r1.ct = (it & 2) ? 1 : 1 + (int)(test_rand() % 8);
        r1.c = (it & 4) ? (0x7F80000u | (test_rand() & 0x7FFFF)) : (test_rand() & 0xFFFFFFF) >> (r1.ct - 1);
        x1 = (uint16_t)((it & 8) ? 2 * 45 + (test_rand() & 1) : test_rand() % J2KI_MQC_NB_STATES);
        m2 = m1;
        m2.buf = b2;
        r2 = r1;
        x2 = x1;
        bp0 = m2.bp;
        {
            int d = (it & 16) ? (int)(test_rand() & 1) : !(x1 & 1);
            j2ki_mqc_encode_r(&m1, &r1, &x1, d);
            j2ki_mqc_encode_sel(&m2, &r2, &x2, d);
        }
        if (m2.bp - bp0 <= 3)
            outs[m2.bp - bp0]++;
        if (r1.a != r2.a || r1.c != r2.c || r1.ct != r2.ct || x1 != x2 || m1.b != m2.b || m1.bp != m2.bp ||
            memcmp(b1 + 5, b2 + 5, (size_t)(m1.bp - 5)))
            bad++;
    }
    CHECK(!bad, "j2ki_mqc_encode_sel differs from j2ki_mqc_encode_r");
    CHECK(outs[1] && outs[2] && outs[3], "BYTEOUTs per renormalisation: 1 x%d, 2 x%d, 3 x%d (each must occur)",
          outs[1], outs[2], outs[3]);
    CHECK(nff > 0, "no 0xFF byte coded");
    printf("# encode_sel: %d iterations, renormalisations with 1/2/3 BYTEOUTs %d/%d/%d, %d bytes 0xFF\n", iters,
           outs[1], outs[2], outs[3], nff);
}

int main(void)
{
    test_seed("test_mqc", 0x6d7163);
    test_t88();
    test_random(400);
    test_tight(300);
    test_sel(300);
    return test_done("test_mqc");
}
