/*
 * Tier-1 coding (ISO/IEC 15444-1 Annex D), t1_ref.c / t1_core.h, checked by the independent
 * decoder of t1dec.h on seeded random code-blocks:
 *  - every size of the brief, all orientations, every code-block style combination (BYPASS
 *    with bypass_start 1..5, RESET, TERMALL, VCAUSAL, PTERM, SEGMARK), sparse and dense
 *    data, frac_bits 0 and 6: all passes decode back to every index exactly;
 *  - truncated after any pass at its rate (terminated or not): each sample decodes to its
 *    index at the precision the decoder reached, which is the last plane (cleanup) or at
 *    most one plane less (mid-plane cut);
 *  - term flags follow Table D.9 (decided again by the decoder), rates non-decreasing and
 *    ending at the data length; layer segment lengths add up;
 *  - distortions: sum over all passes = sum of squared indices (exact when frac_bits = 0,
 *    within the midpoint residual otherwise); significance passes never negative;
 *  - error paths: too small data_cap / max_passes, numbps > M_b, all-zero block;
 *  - speed of a dense 64 x 64 block of 12-bit indices (printed);
 *  - a digest (FNV-1a) of everything tier-1 outputs for 3000 blocks of every size, style,
 *    orientation, density and frac_bits from a fixed generator (printed, not checked): a
 *    change meant to leave the output alone, such as a speed-up, must leave it unchanged.
 */
#include <math.h>
#include <time.h>

#include "test.h"
#include "t1dec.h"
#include "ref/t1_ref.h"

#define MAXN 4096

static int32_t coefs[MAXN];
static uint32_t seg_end[128];

typedef struct {
    int w, h, orient, style, bps, frac, mb, sparse;
} Case;

static int nb_blocks, nb_decodes;

static void gen(const Case *c)
{
    int i, n = c->w * c->h;
    for (i = 0; i < n; i++) {
        uint32_t q, f = c->frac ? test_rand() & ((1u << c->frac) - 1) : 0;
        int bits = 1 + test_rand() % c->mb;
        if (c->sparse && test_rand() % 16) {
            q = 0;
            f = test_rand() % 4 ? 0 : f;
        } else {
            q = (test_rand() | 0x80000000u) >> (32 - bits);   /* exactly `bits` bits */
            if (test_rand() % 3 == 0)
                q = test_rand() & ((1u << bits) - 1);
        }
        coefs[i] = (int32_t)((q << c->frac) | f);
        if (test_rand() & 1)
            coefs[i] = -coefs[i];
    }
    if (c->sparse && c->mb > 1) {   /* make sure the top plane is used */
        i = (int)(test_rand() % n);
        coefs[i] = (int32_t)(((1u << (c->mb - 1)) << c->frac) | 1u);
    }
}

/* decodes passes [0, np) with the last segment cut at `cut`; checks every sample */
static int check_decode(const Case *c, const J2kiCblk *cb, TdBlock *b, int np, uint32_t cut)
{
    int i, j, n = c->w * c->h, last = np - 1;
    int k = (last + 2) / 3, type = (last + 2) % 3, p = cb->numbps - 1 - k;
    for (i = 0; i < np; i++) {
        for (j = i; j < last && !cb->passes[j].term; j++)
            ;
        seg_end[i] = j == last ? cut : cb->passes[j].rate;
    }
    b->orient = c->orient;
    b->style = c->style;
    b->bypass_start = c->bps;
    b->numbps = cb->numbps;
    if (td_decode(b, cb->data, seg_end, np) < 0)
        return -1;
    nb_decodes++;
    for (i = 0; i < n; i++) {
        uint32_t m = coefs[i] < 0 ? 0u - (uint32_t)coefs[i] : (uint32_t)coefs[i];
        uint32_t q = m >> c->frac;
        int t = b->plane[i];
        if (t < p || t > p + (type != 2))
            return -2;
        if (b->mag[i] != ((q >> t) << t))
            return -3;
        if (b->mag[i] && b->neg[i] != (coefs[i] < 0))
            return -4;
    }
    return 0;
}

static void run_case(const Case *c, J2kiT1 *t1, TdBlock *b, int all_cuts)
{
    static uint8_t data[MAXN * 8 + 4096];
    static J2kiPass passes[128];
    J2kiCblk cb;
    int i, n = c->w * c->h, ret, expect_bps, nb_mag = c->mb + (int)(test_rand() % 3);
    uint32_t acc = 0, fails = 0, ff_ends = 0;
    double sumsq = 0, sumd = 0, mind = 0;
    memset(&cb, 0, sizeof(cb));
    cb.data = data;
    /* plan.h's bound leaves no room for one terminated segment per pass on tiny blocks
     * (TERMALL): up to 5 bytes each */
    cb.data_cap = j2ki_cblk_data_cap(c->w, c->h, nb_mag) + 5u * (uint32_t)j2ki_max_passes(nb_mag);
    cb.passes = passes;
    cb.max_passes = j2ki_max_passes(nb_mag);
    gen(c);
    for (i = 0; i < n; i++) {
        uint32_t m = coefs[i] < 0 ? 0u - (uint32_t)coefs[i] : (uint32_t)coefs[i];
        acc |= m >> c->frac;
        sumsq += ldexp((double)m, -c->frac) * ldexp((double)m, -c->frac);
    }
    for (expect_bps = 0; acc >> expect_bps; expect_bps++)
        ;
    ret = j2ki_t1_encode_cblk_ref(t1, coefs, c->w, c->w, c->h, c->orient, c->style, c->bps,
                                  nb_mag, c->frac, &cb);
    nb_blocks++;
    CHECK(ret == 0, "encode %dx%d style %#x: %d", c->w, c->h, c->style, ret);
    if (ret)
        return;
    CHECK(cb.numbps == expect_bps, "numbps %d expected %d", cb.numbps, expect_bps);
    CHECK(cb.nb_passes == (expect_bps ? 3 * expect_bps - 2 : 0), "nb_passes %d", cb.nb_passes);
    if (!cb.nb_passes)
        return;
    /* rates, terms, distortions */
    for (i = 0; i < cb.nb_passes; i++) {
        int k = (i + 2) / 3, type = (i + 2) % 3;
        b->style = c->style;
        b->bypass_start = c->bps;
        fails += cb.passes[i].term != td_term(b, i, cb.nb_passes);
        fails += i > 0 && cb.passes[i].rate < cb.passes[i - 1].rate;
        fails += cb.passes[i].rate > cb.passes[cb.nb_passes - 1].rate;
        /* no truncation point right after 0xFF: the next bytes of the packet could make a
         * marker code (B.10.1, C.3.4, D.6; found by tests/fuzz/fuzz_encode) */
        ff_ends += cb.passes[i].rate > 0 && cb.data[cb.passes[i].rate - 1] == 0xFF;
        if (type != 1 && cb.passes[i].dist < 0)
            fails++;
        (void)k;
        sumd += cb.passes[i].dist;
        mind = cb.passes[i].dist < mind ? cb.passes[i].dist : mind;
    }
    CHECK(!fails, "%dx%d style %#x bps %d: %u bad pass entries (term/rate/dist)", c->w, c->h,
          c->style, c->bps, fails);
    CHECK(!ff_ends, "%dx%d style %#x bps %d: %u pass rates end on a 0xFF byte", c->w, c->h, c->style,
          c->bps, ff_ends);
    CHECK(cb.passes[cb.nb_passes - 1].rate <= cb.data_cap, "rate past cap");
    if (c->frac == 0 && c->mb <= 18)
        CHECK(sumd == sumsq, "dist sum %.17g != sum of squares %.17g", sumd, sumsq);
    else
        CHECK(fabs(sumd - sumsq) <= 0.25 * n + ldexp(sumsq, -15),
              "dist sum %.17g vs sum of squares %.17g (n %d)", sumd, sumsq, n);
    /* layer segments: a random split of the passes in up to 3 layers */
    {
        uint32_t lens[128], tot = 0;
        int a = (int)(test_rand() % (cb.nb_passes + 1)), z = cb.nb_passes, l, nl, e = 0;
        int cuts[3] = { 0, a, z };
        for (l = 0; l < 2; l++) {
            nl = j2ki_t1_layer_segments(&cb, cuts[l], cuts[l + 1], lens, 128);
            for (i = 0; i < nl; i++)
                tot += lens[i];
            e += nl < 0;
        }
        CHECK(!e && tot == cb.passes[cb.nb_passes - 1].rate, "layer segments add to %u, not %u",
              tot, cb.passes[cb.nb_passes - 1].rate);
    }
    /* decode: everything, then cut after passes */
    ret = check_decode(c, &cb, b, cb.nb_passes, cb.passes[cb.nb_passes - 1].rate);
    CHECK(ret == 0, "%dx%d orient %d style %#x bps %d frac %d: full decode error %d", c->w, c->h,
          c->orient, c->style, c->bps, c->frac, ret);
    for (i = 0; i < cb.nb_passes - 1; i++) {
        if (!all_cuts && test_rand() % cb.nb_passes >= 3)
            continue;
        ret = check_decode(c, &cb, b, i + 1, cb.passes[i].rate);
        CHECK(ret == 0, "%dx%d orient %d style %#x bps %d frac %d: cut after pass %d/%d (term %d,"
              " rate %u) error %d", c->w, c->h, c->orient, c->style, c->bps, c->frac, i,
              cb.nb_passes, cb.passes[i].term, cb.passes[i].rate, ret);
    }
}

static void test_errors(J2kiT1 *t1)
{
    static uint8_t data[2048];
    J2kiPass passes[64];
    J2kiCblk cb;
    int i, ret, bad = 0;
    Case c = { 32, 32, 0, 0, 4, 0, 12, 0 };
    gen(&c);
    memset(&cb, 0, sizeof(cb));
    memset(data, 0xA5, sizeof(data));
    cb.data = data;
    cb.data_cap = 100;
    cb.passes = passes;
    cb.max_passes = 64;
    ret = j2ki_t1_encode_cblk_ref(t1, coefs, 32, 32, 32, 0, 0, 4, 12, 0, &cb);
    CHECK(ret == J2KC_ERR_BUFSIZE, "small data_cap: %d", ret);
    for (i = 100; i < (int)sizeof(data); i++)
        bad += data[i] != 0xA5;
    CHECK(!bad, "wrote %d bytes past data_cap", bad);
    cb.data_cap = sizeof(data);
    cb.max_passes = 10;
    ret = j2ki_t1_encode_cblk_ref(t1, coefs, 32, 32, 32, 0, 0, 4, 12, 0, &cb);
    CHECK(ret == J2KC_ERR_BUFSIZE, "small max_passes: %d", ret);
    cb.max_passes = 64;
    ret = j2ki_t1_encode_cblk_ref(t1, coefs, 32, 32, 32, 0, 0, 4, 11, 0, &cb);
    CHECK(ret == J2KC_ERR_INTERNAL, "numbps > M_b: %d", ret);
    memset(coefs, 0, sizeof(coefs));
    coefs[5] = 63;   /* only fractional bits */
    ret = j2ki_t1_encode_cblk_ref(t1, coefs, 32, 32, 32, 0, 0, 4, 12, 6, &cb);
    CHECK(ret == 0 && cb.nb_passes == 0 && cb.numbps == 0, "zero block: %d %d", ret, cb.nb_passes);
}

static void test_speed(J2kiT1 *t1)
{
    static uint8_t data[65536];
    static J2kiPass passes[64];
    J2kiCblk cb;
    Case c = { 64, 64, 1, 0, 4, 0, 12, 0 };
    int i, it = 200;
    clock_t t0;
    double us;
    memset(&cb, 0, sizeof(cb));
    cb.data = data;
    cb.data_cap = sizeof(data);
    cb.passes = passes;
    cb.max_passes = 64;
    gen(&c);
    t0 = clock();
    for (i = 0; i < it; i++)
        j2ki_t1_encode_cblk_ref(t1, coefs, 64, 64, 64, 1, 0, 4, 13, 0, &cb);
    us = (double)(clock() - t0) / CLOCKS_PER_SEC * 1e6 / it;
    printf("# 64x64 dense 12-bit block: %.0f us, %d passes, %u bytes\n", us, cb.nb_passes,
           cb.passes[cb.nb_passes - 1].rate);
    CHECK(us < 5000, "64x64 block takes %.0f us", us);
}

/* digest of the t1 output for a fixed set of blocks (xorshift32, own seed: independent of
 * the test seed so the number is comparable between builds) */
static uint64_t dg_h;
static uint32_t dg_s;

static uint32_t dg_rand(void)
{
    dg_s ^= dg_s << 13;
    dg_s ^= dg_s >> 17;
    dg_s ^= dg_s << 5;
    return dg_s;
}

static void dg_bytes(const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n--) {
        dg_h ^= *b++;
        dg_h *= 1099511628211ull;
    }
}

static void dg_u64(uint64_t v) { dg_bytes(&v, sizeof(v)); }

static void test_digest(J2kiT1 *t1)
{
    static const int sz[][2] = { {1, 1}, {1, 7}, {3, 5}, {4, 4}, {5, 3}, {17, 9}, {32, 32},
                                 {64, 64}, {128, 32}, {32, 128}, {64, 16}, {1024, 4},
                                 {4, 1024}, {8, 512}, {31, 33}, {64, 3} };
    static uint8_t data[MAXN * 8 + 4096];
    static J2kiPass passes[128];
    int it, i;
    dg_h = 1469598103934665603ull;
    dg_s = 12345;
    for (it = 0; it < 3000; it++) {
        int s = (int)(dg_rand() % 16), w = sz[s][0], h = sz[s][1], orient = (int)(dg_rand() % 4);
        int style = dg_rand() % 4 ? (dg_rand() % 2 ? 0 : (int)(dg_rand() % 64)) : (int)(dg_rand() % 64);
        int bps = 1 + (int)(dg_rand() % 6), frac = dg_rand() % 3 == 0 ? 0 : (int)(dg_rand() % 14);
        int mb = 1 + (int)(dg_rand() % (dg_rand() % 4 ? 16 : 30)), kind = (int)(dg_rand() % 4);
        int ret;
        J2kiCblk cb;
        if (mb + frac > 31)
            frac = 31 - mb;
        for (i = 0; i < w * h; i++) {
            uint32_t m;
            if (kind == 0) {                                   /* uniform */
                m = dg_rand() >> (32 - mb - frac);
            } else if (kind == 1) {                            /* sparse */
                m = dg_rand() % 8 ? 0 : dg_rand() >> (32 - mb - frac);
            } else {                                           /* skewed, some zero rows */
                int e = (int)(dg_rand() % (uint32_t)(mb + frac + 1));
                e = e * (int)(dg_rand() % 100) / 100;
                m = e ? dg_rand() >> (32 - e) : 0;
                if (kind == 3 && (i / w) % 8 < 3)
                    m = 0;
            }
            coefs[i] = (dg_rand() & 1) ? -(int32_t)m : (int32_t)m;
        }
        memset(&cb, 0, sizeof(cb));
        cb.data = data;
        cb.data_cap = dg_rand() % 50 == 0 ? dg_rand() % 200 : (uint32_t)sizeof(data);
        cb.passes = passes;
        cb.max_passes = dg_rand() % 70 == 0 ? (int)(dg_rand() % 20) : 128;
        ret = j2ki_t1_encode_cblk_ref(t1, coefs, w, w, h, orient, style, bps,
                                      mb + (int)(dg_rand() % 2), frac, &cb);
        dg_u64((uint64_t)(int64_t)ret);
        dg_u64((uint64_t)cb.nb_passes);
        dg_u64((uint64_t)cb.numbps);
        if (ret == 0 && cb.nb_passes) {
            dg_bytes(data, passes[cb.nb_passes - 1].rate);
            for (i = 0; i < cb.nb_passes; i++) {
                dg_u64(passes[i].rate);
                dg_u64(passes[i].term);
                dg_bytes(&passes[i].dist, sizeof(passes[i].dist));
            }
        }
    }
    printf("# t1 output digest (3000 fixed blocks): %016llx\n", (unsigned long long)dg_h);
}

int main(void)
{
    static const int sizes[][2] = { {1, 1}, {3, 5}, {4, 4}, {17, 9}, {32, 32}, {64, 64},
                                    {128, 32}, {1024, 4}, {4, 1024} };
    J2kiT1 *t1;
    TdBlock b;
    int s, style, bps, o, cnt = 0;
    test_seed("test_t1", 0x743163);
    t1 = j2ki_t1_alloc(1024, 1024);
    CHECK(t1 != NULL, "alloc");
    if (!t1 || td_block_alloc(&b, 1024, 1024) < 0)
        return test_done("test_t1");
    test_errors(t1);
    /* every orientation x size, default style, both densities and fractional bits */
    for (o = 0; o < 4; o++)
        for (s = 0; s < 9; s++) {
            Case c = { sizes[s][0], sizes[s][1], o, 0, 4, (s & 1) ? 6 : 0, 1 + (int)(test_rand() % 14),
                       o & 1 };
            b.w = c.w;
            b.h = c.h;
            run_case(&c, t1, &b, c.w * c.h <= 1024);
        }
    /* every style combination (BYPASS with bypass_start 1..5) x size */
    for (style = 0; style < 64; style++)
        for (bps = 1; bps <= ((style & J2KI_CBLK_BYPASS) ? 5 : 1); bps++)
            for (s = 0; s < 9; s++) {
                Case c;
                c.w = sizes[s][0];
                c.h = sizes[s][1];
                c.orient = cnt % 4;
                c.style = style;
                c.bps = bps;
                c.frac = (cnt / 4) % 2 ? 6 : 0;
                c.sparse = (cnt / 8) % 2;
                c.mb = cnt % 13 == 0 ? 24 : 1 + (int)(test_rand() % 14);
                cnt++;
                b.w = c.w;
                b.h = c.h;
                run_case(&c, t1, &b, c.w * c.h <= 1024);
            }
    printf("# %d blocks coded, %d decodes checked\n", nb_blocks, nb_decodes);
    test_speed(t1);
    test_digest(t1);
    td_block_free(&b);
    j2ki_t1_free(&t1);
    return test_done("test_t1");
}
