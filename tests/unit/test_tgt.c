/*
 * Tag trees (B.10.2): the worked example of the standard's tag-tree figure coded by hand, and
 * random trees and thresholds decoded back by an independent decoder written here from the
 * text of B.10.2 (with the bit unstuffing of B.10.1).
 */
#include "test.h"
#include "hd/tgt.h"

/* ---- bit reader with B.10.1 unstuffing ---- */
typedef struct { const uint8_t *p; size_t n, pos; int ct; uint32_t cur, prev; } Rd;

static int rd_bit(Rd *r)
{
    if (r->ct == 0) {
        r->prev = r->cur;
        r->cur = r->pos < r->n ? r->p[r->pos] : 0;
        r->pos++;
        r->ct = r->prev == 0xFF ? 7 : 8;
    }
    r->ct--;
    return (int)(r->cur >> r->ct) & 1;
}

/* ---- independent tag-tree decoder: explicit levels, parent by index arithmetic ---- */
#define MAXN 4096
typedef struct { int lv, w[40], h[40], off[40]; int low[MAXN], val[MAXN], known[MAXN]; } Dec;

static void dec_init(Dec *d, int w, int h)
{
    int n = 0;
    d->lv = 0;
    for (;;) {
        d->w[d->lv] = w; d->h[d->lv] = h; d->off[d->lv] = n;
        n += w * h; d->lv++;
        if (w == 1 && h == 1) break;
        w = (w + 1) / 2; h = (h + 1) / 2;
    }
    for (int i = 0; i < n; i++) { d->low[i] = 0; d->known[i] = 0; d->val[i] = -1; }
}

/* returns 1 and *v when the leaf's value is < threshold */
static int dec_leaf(Dec *d, Rd *r, int x, int y, int thr, int *v)
{
    int low = 0, idx = 0;
    for (int k = d->lv - 1; k >= 0; k--) {
        idx = d->off[k] + (y >> k) * d->w[k] + (x >> k);
        if (d->low[idx] > low) low = d->low[idx];
        if (d->known[idx]) { d->low[idx] = low; continue; }
        while (low < thr) {
            if (rd_bit(r)) { d->known[idx] = 1; d->val[idx] = low; break; }
            low++;
        }
        d->low[idx] = low;
    }
    if (d->known[idx]) { *v = d->val[idx]; return 1; }
    return 0;
}

static uint8_t mem[1 << 20];

static void test_example(void)
{
    /* the six-by-three example array of B.10.2 */
    static const int q0[3][6] = { { 1, 3, 2, 3, 2, 3 }, { 2, 2, 1, 4, 3, 2 }, { 2, 2, 2, 2, 1, 2 } };
    uint8_t out[16];
    J2kiBytes b;
    J2kiBits bw;
    J2kiTagTree *t = j2ki_tgt_init(mem, 6, 3);

    CHECK(t->nb_nodes == 18 + 6 + 2 + 1, "nodes %u", t->nb_nodes);
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 6; x++)
            j2ki_tgt_set_value(t, (uint32_t)(y * 6 + x), q0[y][x]);
    j2ki_bytes_init(&b, out, sizeof(out));
    j2ki_bits_init(&bw, &b);
    /* q0(0,0) = 1: root 0 1, q2 1, q1 1, q0 1 -> 01111 ; q0(1,0) = 3: 001 ; q0(2,0) = 2: q1(1,0) 1, q0 01 -> 101 */
    j2ki_tgt_encode(t, &bw, 0, INT32_MAX);
    j2ki_tgt_encode(t, &bw, 1, INT32_MAX);
    j2ki_tgt_encode(t, &bw, 2, INT32_MAX);
    j2ki_bits_flush(&bw);
    /* 01111 001 101 -> 0111 1001 1010 0000 */
    CHECK(b.pos == 2 && out[0] == 0x79 && out[1] == 0xA0, "example bits %zu %02x %02x", b.pos, out[0], out[1]);

    /* a single leaf of value 2 coded layer by layer (thresholds 1, 2, 3): 0, 0, 1 */
    t = j2ki_tgt_init(mem, 1, 1);
    j2ki_tgt_set_value(t, 0, 2);
    j2ki_bytes_init(&b, out, sizeof(out));
    j2ki_bits_init(&bw, &b);
    j2ki_tgt_encode(t, &bw, 0, 1);
    CHECK(bw.ct == 7 && bw.cur == 0x00, "threshold 1");
    j2ki_tgt_encode(t, &bw, 0, 2);
    j2ki_tgt_encode(t, &bw, 0, 3);
    j2ki_tgt_encode(t, &bw, 0, 4);       /* known already: no bit */
    j2ki_bits_flush(&bw);
    CHECK(b.pos == 1 && out[0] == 0x20, "layered %02x", out[0]);

    /* reset forgets what was sent */
    j2ki_tgt_reset(t);
    j2ki_tgt_set_value(t, 0, 0);
    j2ki_bytes_init(&b, out, sizeof(out));
    j2ki_bits_init(&bw, &b);
    j2ki_tgt_encode(t, &bw, 0, 1);
    j2ki_bits_flush(&bw);
    CHECK(out[0] == 0x80, "after reset %02x", out[0]);
    printf("ok tgt example\n");
}

static void test_random(void)
{
    static uint8_t out[1 << 16];
    static Dec d;
    for (int iter = 0; iter < 400; iter++) {
        int w = 1 + (int)(test_rand() % 20), h = 1 + (int)(test_rand() % 20);
        int vmax = 1 + (int)(test_rand() % 8), nl = 1 + (int)(test_rand() % 6);
        int val[400], got[400], ok = 1;
        J2kiBytes b;
        J2kiBits bw;
        Rd r = { out, 0, 0, 0, 0, 0 };
        J2kiTagTree *t = j2ki_tgt_init(mem, (uint32_t)w, (uint32_t)h);

        CHECK(j2ki_tgt_mem_size((uint32_t)w, (uint32_t)h) <= sizeof(mem), "mem");
        for (int i = 0; i < w * h; i++) {
            val[i] = (int)(test_rand() % (uint32_t)(vmax + 1));
            j2ki_tgt_set_value(t, (uint32_t)i, val[i]);
            got[i] = -1;
        }
        j2ki_bytes_init(&b, out, sizeof(out));
        j2ki_bits_init(&bw, &b);
        /* inclusion-style use: thresholds l + 1 for layers l, every leaf each layer */
        for (int l = 0; l < nl; l++)
            for (int i = 0; i < w * h; i++)
                if (got[i] < 0) {
                    j2ki_tgt_encode(t, &bw, (uint32_t)i, l + 1);
                    if (val[i] <= l) got[i] = 0;
                }
        /* then zero-bit-plane style: every leaf in full */
        for (int i = 0; i < w * h; i++)
            j2ki_tgt_encode(t, &bw, (uint32_t)i, INT32_MAX);
        j2ki_bits_flush(&bw);
        r.n = b.pos;

        dec_init(&d, w, h);
        for (int i = 0; i < w * h; i++) got[i] = -1;
        for (int l = 0; l < nl; l++)
            for (int i = 0; i < w * h; i++)
                if (got[i] < 0) {
                    int v;
                    if (dec_leaf(&d, &r, i % w, i / w, l + 1, &v)) {
                        got[i] = v;
                        if (v != val[i] || v > l) ok = 0;
                    } else if (val[i] <= l) {
                        ok = 0;
                    }
                }
        for (int i = 0; i < w * h; i++) {
            int v = -1;
            if (!dec_leaf(&d, &r, i % w, i / w, 1 << 30, &v) || v != val[i]) ok = 0;
        }
        /* alignment (B.10.1): a last byte 0xFF is followed by a stuffed byte */
        if (r.cur == 0xFF) r.pos++;
        CHECK(ok, "iteration %d (%dx%d)", iter, w, h);
        CHECK(r.pos == b.pos, "consumed %zu of %zu bytes", r.pos, b.pos);
        CHECK(b.pos == 0 || out[b.pos - 1] != 0xFF, "ends with 0xFF");
    }
    printf("ok tgt random\n");
}

static void test_stuffing(void)
{
    uint8_t out[64];
    J2kiBytes b;
    J2kiBits bw;

    /* 8 ones then 7 ones: FF then 7F (one stuffed 0 bit); 16 ones: FF 7F C0 */
    j2ki_bytes_init(&b, out, sizeof(out));
    j2ki_bits_init(&bw, &b);
    j2ki_bits_putn(&bw, 0xFFFF, 16);
    j2ki_bits_flush(&bw);
    CHECK(b.pos == 3 && out[0] == 0xFF && out[1] == 0x7F && out[2] == 0x80, "%zu %02x %02x %02x", b.pos, out[0], out[1], out[2]);
    /* a header that ends on 0xFF gets 0x00 */
    j2ki_bytes_init(&b, out, sizeof(out));
    j2ki_bits_init(&bw, &b);
    j2ki_bits_putn(&bw, 0xFF, 8);
    j2ki_bits_flush(&bw);
    CHECK(b.pos == 2 && out[0] == 0xFF && out[1] == 0x00, "trailing ff");
    /* counting mode gives the same size */
    j2ki_bytes_init(&b, NULL, 0);
    j2ki_bits_init(&bw, &b);
    j2ki_bits_putn(&bw, 0xFFFF, 16);
    j2ki_bits_flush(&bw);
    CHECK(b.pos == 3, "count mode %zu", b.pos);
    /* overflow is recorded, never written past */
    j2ki_bytes_init(&b, out, 1);
    j2ki_put16(&b, 0xABCD);
    CHECK(b.overflow && b.pos == 1 && out[0] == 0xAB, "overflow");
    printf("ok bit stuffing\n");
}

int main(void)
{
    test_seed("test_tgt", 0x7467u);
    test_example();
    test_stuffing();
    test_random();
    return test_done("test_tgt");
}
