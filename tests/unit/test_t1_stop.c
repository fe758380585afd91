/*
 * Tier-1's early stop (t1_stop.h, t1_stop.c): the threshold search (by digit histograms, on the
 * calling thread) against its definition evaluated by brute force (random keys with ties and
 * non-vertices; test_threads compares it on pools with a sorting search), the decision rule and
 * the known passes at each step, when it is enabled (byte budget, under J2KI_T1S_MAX_BPS),
 * and encodes through the API with it on and off: both within the budget. That the CUDA
 * coder takes the same decisions is checked on a GPU (check_cuda: limits, passes, bytes);
 * that its stop path ends a block as the serial coder does, by t1p_emu.
 */
#include <math.h>
#include <string.h>

#include "j2kcuda.h"
#include "core/params.h"
#include "hd/t1_stop.h"
#include "test.h"

/* The key k with S(> k) <= budget < S(>= k), S summing the bytes of the entries by key; 0 when
 * all of them fit. */
static uint32_t threshold_brute(const uint32_t *key, const uint32_t *bytes, size_t n, uint64_t budget)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t gt = 0, ge = 0;
        if (!key[i])
            continue;
        for (size_t j = 0; j < n; j++) {
            if (!key[j])
                continue;
            if (key[j] > key[i])
                gt += bytes[j];
            if (key[j] >= key[i])
                ge += bytes[j];
        }
        if (gt <= budget && budget < ge)
            return key[i];
    }
    return 0;
}

static void test_threshold(void)
{
    enum { N = 300 };
    static uint32_t key[N], bytes[N];
    void *scratch = malloc(j2ki_t1s_pool_threshold_scratch_size(1));
    int bad = 0;
    CHECK(scratch != NULL, "out of memory");
    for (int t = 0; t < 400 && scratch; t++) {
        size_t n = t < 3 ? (size_t)t : 1 + test_rand() % N;
        uint64_t total = 0;
        for (size_t i = 0; i < n; i++) {
            key[i] = test_rand() % 4 == 0 ? 0 : 1 + test_rand() % (t % 2 ? 8 : 100000);   /* ties when odd */
            bytes[i] = key[i] ? test_rand() % 200 : 0;
            total += bytes[i];
        }
        uint64_t budget = t % 5 == 0 ? total + 1 : total ? test_rand() % (total + 1) : 0;
        uint32_t a = j2ki_t1s_threshold_pool(key, bytes, n, budget, NULL, scratch);
        uint32_t b = threshold_brute(key, bytes, n, budget);
        if (a != b && bad++ < 5)
            fprintf(stderr, "threshold trial %d: n %zu budget %llu: %u, brute force %u\n", t, n,
                    (unsigned long long)budget, a, b);
    }
    CHECK(bad == 0, "%d of 400 threshold searches differ from the definition", bad);
    free(scratch);
    printf("ok t1_stop threshold: 400 random searches as defined\n");
}

/* 31 passes of 4 estimated bytes each, pass k lowering the distortion by 2^(20 - k): a convex
 * curve, every pass a hull vertex of slope 2^(18 - k). */
static void convex_passes(J2kiPass *p)
{
    memset(p, 0, 31 * sizeof(*p));
    for (int k = 0; k < 31; k++) {
        p[k].est = p[k].rate = 4u * (uint32_t)(k + 1);
        p[k].dist = ldexp(1.0, 20 - k);
    }
}

static void test_rules(void)
{
    uint32_t key[31] = { 9, 8, 0, 7, 6, 5, 4, 3, 2, 1, 0, 0 };
    J2kiPass p[31];
    const int e1 = 3 * J2KI_T1S_FIRST - 2, e2 = e1 + 3 * J2KI_T1S_PLANES;
    uint32_t t;
    CHECK(j2ki_t1s_chunk_end(1) == e1 && j2ki_t1s_chunk_end(2) == e2, "chunk ends %d %d", j2ki_t1s_chunk_end(1),
          j2ki_t1s_chunk_end(2));
    CHECK(j2ki_t1s_known(1, 31, 0) == e1 && j2ki_t1s_known(2, 31, 0) == e2 && j2ki_t1s_known(2, e1 + 1, 0) == e1 + 1 &&
          j2ki_t1s_known(2, 31, 5) == 5, "known passes");
    /* 10 known of 31: passes with key > t are chosen up to the last one; stop when at least
     * J2KI_T1S_MARGIN known passes follow it (a tail that lowers the distortion no more) */
    memset(p, 0, sizeof(p));
    for (int k = 0; k < 31; k++)
        p[k].est = p[k].rate = (uint32_t)(k + 1);
    p[0].dist = 1.0;
    CHECK(j2ki_t1s_decide(key, p, 10, 31, 1.0, 0) == 0, "no threshold, no stop");
    CHECK(j2ki_t1s_decide(key, p, 10, 10, 1.0, 5) == 0, "no passes to come, no stop");
    CHECK(j2ki_t1s_decide(key, p, 10, 31, 1.0, 2) == 0, "2 passes below: no stop");
    CHECK(j2ki_t1s_decide(key, p, 10, 31, 1.0, 3) == 10, "3 passes below: stop after 10");
    CHECK(j2ki_t1s_decide(key, p, 10, 31, 1.0, 100) == 10, "nothing chosen: stop");
    CHECK(j2ki_t1s_key(0.0) == 0 && j2ki_t1s_key(-1.0) == 0 && j2ki_t1s_key(2.0) > j2ki_t1s_key(1.5) &&
          j2ki_t1s_key(1e300) > j2ki_t1s_key(1e30), "keys order as slopes");

    /* Keys from the hull (step 1). At t = key(4000) the convex curve chooses passes 0 .. 6
     * (slopes 2^18 .. 2^12), the last three known ones pay (2^13 + 2^12 + 2^11) / 12 < 4000:
     * it stops after its 10 known passes. */
    t = j2ki_t1s_key(4000.0);
    convex_passes(p);
    j2ki_t1s_block_keys(p, 10, 31, 1.0, key, (uint32_t[31]){ 0 });
    CHECK(j2ki_t1s_decide(key, p, 10, 31, 1.0, t) == 10, "convex: stop after 10");
    /* A dip: pass 5 raises the distortion by 2^16 (a refinement of samples at one value), the
     * known passes end below the distortion of point 5, so the hull ends there and five known
     * passes lie below t: the margin alone would stop it, the passes that recover the dip are
     * still to come. */
    convex_passes(p);
    p[5].dist = -ldexp(1.0, 16);
    j2ki_t1s_block_keys(p, 10, 31, 1.0, key, (uint32_t[31]){ 0 });
    CHECK(key[5] == 0 && key[6] == 0 && key[9] == 0 && key[4] > t, "dip: the hull ends at pass 4");
    CHECK(j2ki_t1s_decide(key, p, 10, 31, 1.0, t) == 0, "dip: no stop");
    /* The dip recovered by pass 8 (2^16 + 2^12): the known passes end on their hull, whose last
     * segment pays (2^14 + 2^13 + 2^12 + 2^11) / 20 < 4000, but passes 7 .. 9 pay 79,872 / 12
     * bytes > 4000: the curve is still recovering, no stop. */
    p[8].dist = ldexp(1.0, 16) + ldexp(1.0, 12);
    j2ki_t1s_block_keys(p, 10, 31, 1.0, key, (uint32_t[31]){ 0 });
    CHECK(key[4] > t && key[5] <= t && key[6] <= t && key[7] <= t && key[8] <= t && key[9] <= t,
          "recovered dip: hull keys");
    CHECK(j2ki_t1s_decide(key, p, 10, 31, 1.0, t) == 0, "recovering tail: no stop");
    CHECK(j2ki_t1s_decide(key, p, 10, 31, 1.0, j2ki_t1s_key(10000.0)) == 10, "recovering tail under t: stop");
    printf("ok t1_stop rules: margin, dip, recovering tail\n");
}

static J2kcImageDesc image(uint32_t w, uint32_t h)
{
    J2kcImageDesc d;
    memset(&d, 0, sizeof(d));
    d.nb_comps = 3;
    d.width = w;
    d.height = h;
    for (int c = 0; c < 3; c++) {
        d.depth[c] = 12;
        d.dx[c] = d.dy[c] = 1;
    }
    return d;
}

static void test_enabled(void)
{
    J2kcImageDesc d = image(256, 128);                 /* 98,304 samples */
    J2kiCodingParams cp;
    J2kiLog log = { NULL, NULL, 0 };
    static const struct { const char *bytes, *stop; int on; } c[] = {
        { "12000", "1", 1 },     /* 0.98 bit/sample */
        { "12288", "1", 0 },     /* 1.0 */
        { "4000", "0", 0 },      /* switched off */
        { "4000", NULL, 0 },     /* the default: off (params.c) */
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        J2kcParams *p = j2kc_params_alloc();
        j2kc_params_set_log(p, NULL, NULL, 0);
        CHECK(j2kc_params_set(p, "bytes", c[i].bytes) == 0 &&
              (!c[i].stop || j2kc_params_set(p, "t1_stop", c[i].stop) == 0), "params");
        CHECK(j2ki_params_finalize(&cp, p, &d, &log) == 0, "finalize");
        CHECK(j2ki_t1s_enabled(&cp) == c[i].on, "bytes %s t1_stop %s: enabled %d", c[i].bytes,
              c[i].stop ? c[i].stop : "default", j2ki_t1s_enabled(&cp));
        j2kc_params_free(&p);
    }
    J2kcParams *p = j2kc_params_alloc();
    j2kc_params_set_log(p, NULL, NULL, 0);
    CHECK(j2kc_params_set(p, "quality", "40") == 0 && j2ki_params_finalize(&cp, p, &d, &log) == 0 &&
          !j2ki_t1s_enabled(&cp), "quality mode codes every pass");
    CHECK(j2kc_params_set(p, "t1_stop", "2") < 0, "t1_stop 2 accepted");
    j2kc_params_free(&p);
    printf("ok t1_stop enabled: byte budgets under 1 bit per sample, t1_stop=1\n");
}

/* Noise over a gradient: many bit-planes per block, so that blocks do stop at 0.3 bit/sample. */
static size_t encode(const J2kcImageDesc *d, const char *bytes, const char *stop, uint8_t **out)
{
    J2kcParams *p = j2kc_params_alloc();
    J2kcEncoder *enc = NULL;
    J2kcFrame f;
    J2kcPacket pkt;
    size_t n = (size_t)d->width * d->height, len = 0;
    uint16_t *buf = malloc(n * 3 * sizeof(uint16_t));
    uint64_t saved = test_rng_state;
    j2kc_params_set_log(p, NULL, NULL, 0);
    j2kc_params_set(p, "bytes", bytes);
    j2kc_params_set(p, "t1_stop", stop);
    j2kc_params_set(p, "cblk", "32x32");
    j2kc_params_set(p, "backend", "ref");
    memset(&f, 0, sizeof(f));
    for (int c = 0; c < 3; c++) {
        for (size_t i = 0; i < n; i++)
            buf[n * c + i] = (uint16_t)(((i % d->width) * 9 + (i / d->width) * 5 + (test_rand() & 1023)) & 4095);
        f.data[c] = buf + n * c;
        f.stride[c] = (ptrdiff_t)(d->width * 2);
    }
    test_rng_state = saved;
    if (j2kc_encoder_create(&enc, d, p) >= 0 && j2kc_encoder_submit(enc, &f) >= 0 &&
        j2kc_encoder_receive(enc, &pkt, 1) >= 0) {
        len = pkt.size;
        *out = malloc(len);
        memcpy(*out, pkt.data, len);
    }
    j2kc_encoder_free(&enc);
    j2kc_params_free(&p);
    free(buf);
    return len;
}

static void test_encode(void)
{
    J2kcImageDesc d = image(320, 192);                 /* 184,320 samples: 6,912 B = 0.3 bit/sample */
    uint8_t *a = NULL, *b = NULL;
    size_t la = encode(&d, "6912", "1", &a), lb = encode(&d, "6912", "0", &b);
    CHECK(la > 6500 && la <= 6912 && lb > 6500 && lb <= 6912, "sizes %zu (stop) and %zu (every pass), budget 6912",
          la, lb);
    CHECK(la >= 2 && a[0] == 0xFF && a[1] == 0x4F && a[la - 2] == 0xFF && a[la - 1] == 0xD9, "framing");
    printf("ok t1_stop encode: %zu bytes with the early stop, %zu coding every pass (%s)\n", la, lb,
           la == lb && !memcmp(a, b, la) ? "identical" : "different");
    free(a);
    free(b);
}

int main(void)
{
    test_seed("test_t1_stop", 20261125);
    test_threshold();
    test_rules();
    test_enabled();
    test_encode();
    return test_done("test_t1_stop");
}
