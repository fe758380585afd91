/*
 * Public API behaviour: parameter parsing errors, profile rejections, the submit/receive
 * ring (AGAIN when full, EOF when empty, tags back in order), determinism, byte budgets,
 * and codestream framing (SOC first, EOC last). Decoding by outside decoders is done by
 * tests/conformance.sh.
 */
#include <string.h>

#include "j2kcuda.h"
#include "test.h"

static char last_log[1024];
static void log_cb(void *opaque, int level, const char *msg)
{
    (void)opaque;
    if (level <= J2KC_LOG_WARNING)
        snprintf(last_log, sizeof(last_log), "%s", msg);
}

static J2kcParams *params(const char *const *kv)
{
    J2kcParams *p = j2kc_params_alloc();
    j2kc_params_set_log(p, log_cb, NULL, J2KC_LOG_INFO);
    for (; kv && kv[0]; kv += 2)
        if (j2kc_params_set(p, kv[0], kv[1]) < 0)
            fprintf(stderr, "param %s=%s rejected: %s\n", kv[0], kv[1], last_log);
    return p;
}

static J2kcImageDesc image(int nc, uint32_t w, uint32_t h, int depth)
{
    J2kcImageDesc d;
    memset(&d, 0, sizeof(d));
    d.nb_comps = nc;
    d.width = w;
    d.height = h;
    for (int c = 0; c < nc && c < J2KC_MAX_COMPS; c++) {
        d.depth[c] = depth;
        d.dx[c] = d.dy[c] = 1;
    }
    return d;
}

/* Smooth gradient + seeded noise in 16-bit planes. */
static uint16_t *make_planes(const J2kcImageDesc *d, J2kcFrame *f, uint64_t tag)
{
    size_t n = (size_t)d->width * d->height;
    uint16_t *buf = malloc(n * d->nb_comps * sizeof(uint16_t));
    memset(f, 0, sizeof(*f));
    for (int c = 0; c < d->nb_comps; c++) {
        uint16_t *pl = buf + n * c;
        uint32_t maxv = (1u << d->depth[c]) - 1;
        for (uint32_t y = 0; y < d->height; y++)
            for (uint32_t x = 0; x < d->width; x++) {
                uint32_t v = (x * 7 + y * 3 + c * 100) % (maxv + 1);
                v = (v + (test_rand() & 15)) & maxv;
                pl[(size_t)y * d->width + x] = (uint16_t)v;
            }
        f->data[c] = pl;
        f->stride[c] = (ptrdiff_t)(d->width * sizeof(uint16_t));
    }
    f->tag = tag;
    return buf;
}

static int encode_once(const char *const *kv, const J2kcImageDesc *d, uint8_t **out, size_t *len)
{
    J2kcParams *p = params(kv);
    J2kcEncoder *enc = NULL;
    J2kcFrame f;
    J2kcPacket pkt;
    uint64_t saved = test_rng_state;
    uint16_t *buf = make_planes(d, &f, 42);
    int ret = j2kc_encoder_create(&enc, d, p);
    if (ret >= 0)
        ret = j2kc_encoder_submit(enc, &f);
    if (ret >= 0)
        ret = j2kc_encoder_receive(enc, &pkt, 1);
    if (ret >= 0) {
        *out = malloc(pkt.size);
        memcpy(*out, pkt.data, pkt.size);
        *len = pkt.size;
    }
    test_rng_state = saved;   /* same content on the next call */
    free(buf);
    j2kc_encoder_free(&enc);
    j2kc_params_free(&p);
    return ret;
}

static void test_params(void)
{
    J2kcParams *p = params(NULL);
    CHECK(j2kc_params_set(p, "nonsense", "1") == J2KC_ERR_INVAL, "unknown key accepted");
    CHECK(j2kc_params_set(p, "levels", "33") == J2KC_ERR_INVAL, "levels 33 accepted");
    CHECK(j2kc_params_set(p, "cblk", "128x64") == J2KC_ERR_INVAL, "cblk area > 4096 accepted");
    CHECK(j2kc_params_set(p, "cblk", "48x48") == J2KC_ERR_INVAL, "non power of two cblk accepted");
    CHECK(j2kc_params_set(p, "order", "xyzw") == J2KC_ERR_INVAL, "bad order accepted");
    CHECK(j2kc_params_set(p, "bytes", "-5") == J2KC_ERR_INVAL, "negative bytes accepted");
    CHECK(j2kc_params_set(p, "qstep_rate", "2") == J2KC_ERR_INVAL, "qstep_rate=2 accepted");
    CHECK(j2kc_params_set(p, "qstep_rate", "0") == 0 && j2kc_params_set(p, "qstep_rate", "1") == 0,
          "qstep_rate 0/1 refused");
    CHECK(j2kc_params_set(p, "qstep_try", "6") == J2KC_ERR_INVAL && j2kc_params_set(p, "qstep_try", "-1") == J2KC_ERR_INVAL,
          "qstep_try outside 0..5 accepted");
    CHECK(j2kc_params_set(p, "qstep_try", "0") == 0 && j2kc_params_set(p, "qstep_try", "5") == 0 &&
          j2kc_params_set(p, "qstep_try", "3") == 0,
          "qstep_try 0/5 refused");
    CHECK(j2kc_params_set(p, "order", "cprl") == 0, "cprl refused");
    CHECK(j2kc_params_set(p, "async_depth", "32") == 0, "async_depth 32 refused");
    CHECK(j2kc_params_set(p, "async_depth", "33") == J2KC_ERR_INVAL && j2kc_params_set(p, "async_depth", "0") == J2KC_ERR_INVAL,
          "async_depth outside 1..32 accepted");
    CHECK(j2kc_params_set(p, "fps", "0.5") == 0, "fps 0.5 refused");
    CHECK(j2kc_params_set(p, "fps", "0") == J2KC_ERR_INVAL && j2kc_params_set(p, "fps", "0.0") == J2KC_ERR_INVAL,
          "fps 0 accepted");
    CHECK(j2kc_params_set(p, "poc", "0,0,1,3,3,cprl/3,0,1,6,3,lrcp") == 0, "poc refused");
    CHECK(strstr(j2kc_params_help(), "bypass") != NULL, "help lacks bypass");
    j2kc_params_free(&p);
    j2kc_params_free(&p);   /* NULL is fine */
    CHECK(!strcmp(j2kc_strerror(J2KC_ERR_BUFSIZE), "byte budget or buffer too small"), "strerror");
}

static void test_rejections(void)
{
    J2kcEncoder *enc = NULL;
    J2kcImageDesc d = image(3, 64, 64, 8);
    {
        const char *kv[] = { "lossless", "1", "bytes", "10000", NULL };
        J2kcParams *p = params(kv);
        CHECK(j2kc_encoder_create(&enc, &d, p) == J2KC_ERR_INVAL && !enc, "lossless+bytes accepted");
        j2kc_params_free(&p);
    }
    {
        const char *kv[] = { "profile", "dci2k", "fps", "24", NULL };
        J2kcParams *p = params(kv);
        CHECK(j2kc_encoder_create(&enc, &d, p) == J2KC_ERR_PROFILE, "8-bit 64x64 accepted as DCI 2K");
        CHECK(strstr(last_log, "12-bit") != NULL, "DCI message does not name the rule: %s", last_log);
        j2kc_params_free(&p);
    }
    {
        J2kcImageDesc big = image(3, 2049, 1080, 12);
        const char *kv[] = { "profile", "dci2k", NULL };
        J2kcParams *p = params(kv);
        CHECK(j2kc_encoder_create(&enc, &big, p) == J2KC_ERR_PROFILE, "2049 wide accepted as DCI 2K");
        j2kc_params_free(&p);
    }
    {
        J2kcImageDesc dd = image(3, 2048, 1080, 12);
        const char *kv[] = { "profile", "dci2k", "fps", "24", "bytes", "1302084", NULL };
        J2kcParams *p = params(kv);
        CHECK(j2kc_encoder_create(&enc, &dd, p) == J2KC_ERR_PROFILE, "DCI budget above 250 Mb/s accepted");
        j2kc_params_free(&p);
    }
    {
        const char *kv[] = { "bytes", "40", NULL };
        J2kcParams *p = params(kv);
        CHECK(j2kc_encoder_create(&enc, &d, p) == J2KC_ERR_BUFSIZE, "budget below the headers accepted");
        j2kc_params_free(&p);
    }
    {
        J2kcImageDesc z = image(3, 0, 64, 8);
        J2kcParams *p = params(NULL);
        CHECK(j2kc_encoder_create(&enc, &z, p) == J2KC_ERR_UNSUPPORTED, "zero width accepted");
        z = image(5, 8, 8, 8);
        CHECK(j2kc_encoder_create(&enc, &z, p) == J2KC_ERR_UNSUPPORTED, "5 components accepted");
        z = image(1, 8, 8, 17);
        CHECK(j2kc_encoder_create(&enc, &z, p) == J2KC_ERR_UNSUPPORTED, "17-bit accepted");
        /* a component without samples (B-1: ceil(4/2) - ceil(3/2) = 0 rows), found by
         * tests/fuzz/fuzz_encode: its codestream is undecodable by OpenJPEG and FFmpeg */
        z = image(2, 1, 1, 8);
        z.y0 = 3;
        z.dy[1] = 2;
        CHECK(j2kc_encoder_create(&enc, &z, p) == J2KC_ERR_UNSUPPORTED && !enc, "component with no rows accepted");
        CHECK(strstr(last_log, "component 1 has no samples") != NULL, "no reason given: %s", last_log);
        z.y0 = 2;   /* row 2 is sampled: one row each */
        CHECK(j2kc_encoder_create(&enc, &z, p) == 0, "1x1 image at y0 = 2 with YRsiz 2 refused: %s", last_log);
        j2kc_encoder_free(&enc);
        z = image(3, 3, 2, 8);
        z.x0 = 5;
        z.dx[2] = 4;   /* columns 5..7: ceil(8/4) - ceil(5/4) = 0 */
        CHECK(j2kc_encoder_create(&enc, &z, p) == J2KC_ERR_UNSUPPORTED && !enc, "component with no columns accepted");
        j2kc_params_free(&p);
    }
    {
        /* conflicts and profile rules found in review */
        J2kcImageDesc mixed = image(3, 64, 64, 8), dci = image(3, 2048, 1080, 12), hd = image(3, 1920, 1080, 10);
        mixed.depth[1] = 12;
        static const struct { const char *kv[9]; int which, want; const char *what; } cases[] = {
            { { "mct", "1", NULL }, 0, J2KC_ERR_INVAL, "mct=1 with unequal depths" },
            { { "comp_bytes", "20000", "tile_parts", "C", NULL }, 1, J2KC_ERR_INVAL, "comp_bytes without a frame budget" },
            { { "profile", "dci2k", "fps", "24", "quality", "40", NULL }, 2, J2KC_ERR_PROFILE, "quality with DCI's fixed budget" },
            { { "bitrate", "1e-7", "fps", "24", NULL }, 1, J2KC_ERR_BUFSIZE, "bitrate below a byte per frame" },
            { { "profile", "broadcast", "sublevel", "3", NULL }, 3, J2KC_ERR_PROFILE, "broadcast sublevel" },
            { { "mainlevel", "3", NULL }, 1, J2KC_ERR_INVAL, "mainlevel without a profile" },
            { { "profile", "dci2k", "fps", "24", "mct", "auto", NULL }, 2, 0, "DCI with mct=auto" },
            { { "profile", "imf2k", "fps", "24", "bitrate", "300", NULL }, 3, 0, "IMF main level raised for the rate" },
            { { "profile", "broadcast_multi", "tiles", "960x540+1+1", NULL }, 3, J2KC_ERR_PROFILE, "broadcast tile origin" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            J2kcParams *p = params(cases[i].kv);
            const J2kcImageDesc *d2 = cases[i].which == 0 ? &mixed : cases[i].which == 1 ? &d :
                                      cases[i].which == 2 ? &dci : &hd;
            int r = j2kc_encoder_create(&enc, d2, p);
            CHECK(r == cases[i].want, "%s: %s (want %s)", cases[i].what, j2kc_strerror(r), j2kc_strerror(cases[i].want));
            j2kc_encoder_free(&enc);
            j2kc_params_free(&p);
        }
    }
#if !J2KC_HAVE_CUDA
    {
        const char *kv[] = { "backend", "cuda", NULL };
        J2kcParams *p = params(kv);
        CHECK(j2kc_encoder_create(&enc, &d, p) == J2KC_ERR_NOTBUILT, "cuda backend without CUDA");
        j2kc_params_free(&p);
    }
#endif
}

static void test_ring(void)
{
    J2kcImageDesc d = image(1, 40, 24, 8);
    const char *kv[] = { "async_depth", "3", "backend", "ref", NULL };
    J2kcParams *p = params(kv);
    J2kcEncoder *enc = NULL;
    J2kcPacket pkt;
    J2kcFrame f[4];
    uint16_t *bufs[4];
    int ret = j2kc_encoder_create(&enc, &d, p);
    CHECK(ret == 0, "create: %s", j2kc_strerror(ret));
    if (ret < 0) {
        j2kc_params_free(&p);
        return;
    }
    CHECK(!strcmp(j2kc_encoder_backend(enc), "ref"), "backend name");
    CHECK(j2kc_encoder_receive(enc, &pkt, 1) == J2KC_ERR_EOF, "receive on empty encoder");
    for (int i = 0; i < 4; i++)
        bufs[i] = make_planes(&d, &f[i], 1000 + i);
    for (int i = 0; i < 3; i++)
        CHECK(j2kc_encoder_submit(enc, &f[i]) == 0, "submit %d", i);
    CHECK(j2kc_encoder_submit(enc, &f[3]) == J2KC_ERR_AGAIN, "4th submit with depth 3");
    CHECK(j2kc_encoder_in_flight(enc) == 3, "in flight");
    for (int i = 0; i < 3; i++) {
        ret = j2kc_encoder_receive(enc, &pkt, 1);
        CHECK(ret == 0 && pkt.tag == (uint64_t)(1000 + i), "packet %d tag %llu", i, (unsigned long long)pkt.tag);
        CHECK(pkt.size > 4 && pkt.data[0] == 0xFF && pkt.data[1] == 0x4F, "SOC first");
        CHECK(pkt.data[pkt.size - 2] == 0xFF && pkt.data[pkt.size - 1] == 0xD9, "EOC last");
    }
    CHECK(j2kc_encoder_submit(enc, &f[3]) == 0, "submit after receive");
    CHECK(j2kc_encoder_reset(enc) == 0 && j2kc_encoder_in_flight(enc) == 0, "reset");
    CHECK(j2kc_encoder_receive(enc, &pkt, 1) == J2KC_ERR_EOF, "receive after reset");
    for (int i = 0; i < 4; i++)
        free(bufs[i]);
    j2kc_encoder_free(&enc);
    CHECK(enc == NULL, "free clears the pointer");
    j2kc_params_free(&p);
}

static void test_budget_and_determinism(void)
{
    /* small odd image: budgets are never exceeded and two runs give the same bytes */
    J2kcImageDesc d = image(3, 173, 91, 10);
    J2kcImageDesc big = image(3, 320, 240, 8);
    uint8_t *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    static const char *budgets[] = { "800", "3000", "12000", "40000" };
    for (int i = 0; i < 4; i++) {
        const char *kv[] = { "bytes", budgets[i], "backend", "ref", NULL };
        int r1 = encode_once(kv, &d, &a, &la);
        int r2 = encode_once(kv, &d, &b, &lb);
        unsigned long budget = strtoul(budgets[i], NULL, 10);
        CHECK(r1 == 0 && r2 == 0, "encode at %s bytes: %s / %s", budgets[i], j2kc_strerror(r1), j2kc_strerror(r2));
        if (r1 == 0 && r2 == 0) {
            CHECK(la <= budget, "%zu bytes for a budget of %lu", la, budget);
            CHECK(la == lb && !memcmp(a, b, la), "two encodes differ");
        }
        free(a); free(b);
        a = b = NULL;
    }
    /* enough code-blocks for fine granularity: within 0.5% below the budget */
    static const char *budgets2[] = { "20000", "50000", "90000" };
    for (int i = 0; i < 3; i++) {
        const char *kv[] = { "bytes", budgets2[i], "backend", "ref", NULL };
        unsigned long budget = strtoul(budgets2[i], NULL, 10);
        int r1 = encode_once(kv, &big, &a, &la);
        CHECK(r1 == 0, "encode at %s bytes: %s", budgets2[i], j2kc_strerror(r1));
        if (r1 == 0)
            CHECK(la <= budget && la >= budget - budget / 200, "%zu bytes for a budget of %lu", la, budget);
        free(a);
        a = NULL;
    }
}

/* Reversible profiles without a rate target are lossless (the same bytes as lossless=1), with
 * the IMF sublevel taken from the coded size; a sublevel cap the frame exceeds is an error
 * naming the cap and the budget that fits; a rate target gives a lossy frame under it. */
static void test_reversible_profiles(void)
{
    J2kcImageDesc d = image(3, 128, 96, 12);
    J2kcImageDesc wide = image(3, 96, 96, 12);
    uint8_t *a = NULL, *b = NULL, *c = NULL;
    size_t la = 0, lb = 0, lc = 0;
    const char *implicit[] = { "profile", "imf2k_r", "fps", "24", "backend", "ref", NULL };
    const char *explicit_[] = { "profile", "imf2k_r", "fps", "24", "lossless", "1", "backend", "ref", NULL };
    const char *rate[] = { "profile", "imf2k_r", "fps", "24", "bytes", "4000", "backend", "ref", NULL };
    int r1 = encode_once(implicit, &d, &a, &la);
    int r2 = encode_once(explicit_, &d, &b, &lb);
    int r3 = encode_once(rate, &d, &c, &lc);
    CHECK(r1 == 0 && r2 == 0 && r3 == 0, "imf2k_r encodes: %s / %s / %s", j2kc_strerror(r1), j2kc_strerror(r2),
          j2kc_strerror(r3));
    if (r1 == 0 && r2 == 0 && r3 == 0) {
        CHECK(la == lb && !memcmp(a, b, la), "imf2k_r without a rate (%zu bytes) differs from lossless=1 (%zu)", la, lb);
        /* Rsiz right after SOC, SIZ, Lsiz: 0x07 | sublevel 1 << 4 | main level 1 for 0.9 Msamples/s */
        CHECK(la > 8 && a[6] == 0x07 && a[7] == 0x11, "Rsiz %02x%02x, want 0711", a[6], a[7]);
        CHECK(lc <= 4000 && lc < la, "with bytes=4000: %zu bytes (lossless %zu)", lc, la);
    }
    free(a); free(b); free(c);
    a = b = c = NULL;

    /* sublevel 1 fixed at 2000 fps allows 12500 bytes a frame: the lossless frame does not fit */
    const char *capped[] = { "profile", "imf2k_r", "fps", "2000", "sublevel", "1", "backend", "ref", NULL };
    last_log[0] = 0;
    r1 = encode_once(capped, &d, &a, &la);
    CHECK(r1 == J2KC_ERR_PROFILE, "lossless over the fixed sublevel 1: %s (%zu bytes)", j2kc_strerror(r1), la);
    CHECK(strstr(last_log, "sublevel 1 (200 Mbit/s)") && strstr(last_log, "bytes=12500"),
          "message does not name the cap and the budget: %s", last_log);
    free(a);
    a = NULL;
    /* without a fixed sublevel the cap is sublevel 9 (51200 Mbit/s = 6400 bytes at 1e6 fps) */
    const char *top[] = { "profile", "imf2k_r", "fps", "1000000", "backend", "ref", NULL };
    last_log[0] = 0;
    r1 = encode_once(top, &wide, &a, &la);
    CHECK(r1 == J2KC_ERR_PROFILE, "lossless over sublevel 9: %s", j2kc_strerror(r1));
    CHECK(strstr(last_log, "sublevel 9 (51200 Mbit/s)") && strstr(last_log, "bytes=6400"),
          "message does not name the cap and the budget: %s", last_log);
    free(a);
    a = NULL;
    /* broadcast_multi_r without a rate: the same bytes as lossless=1 */
    const char *bc[] = { "profile", "broadcast_multi_r", "backend", "ref", NULL };
    const char *bcl[] = { "profile", "broadcast_multi_r", "lossless", "1", "backend", "ref", NULL };
    r1 = encode_once(bc, &d, &a, &la);
    r2 = encode_once(bcl, &d, &b, &lb);
    CHECK(r1 == 0 && r2 == 0 && la == lb && !memcmp(a, b, la), "broadcast_multi_r: %s / %s, %zu / %zu bytes",
          j2kc_strerror(r1), j2kc_strerror(r2), la, lb);
    free(a); free(b);
}

int main(void)
{
    test_seed("api", 20261121);
    test_params();
    test_rejections();
    test_ring();
    test_budget_and_determinism();
    test_reversible_profiles();
    return test_done("api");
}
