/*
 * Parameter values at and beyond their limits (regressions of the fuzzing
 * findings): a rejected j2kc_params_set() leaves the set exactly as it was; tile sizes, byte
 * budgets and bit rates near the ends of their types neither overflow (the sanitizer build
 * aborts on any undefined behaviour) nor produce a wrong budget; IMF profiles refuse
 * levels=0 (the checker's IMF.levels rule); is_signed is 0 or 1; a JP2 file stays within
 * its byte budget, boxes included.
 */
#include <string.h>

#include "j2kcuda.h"
#include "core/j2ki.h"
#include "test.h"

static char last_log[1024];
static void log_cb(void *opaque, int level, const char *msg)
{
    (void)opaque;
    if (level <= J2KC_LOG_WARNING)
        snprintf(last_log, sizeof(last_log), "%s", msg);
}

static J2kcImageDesc image(int nc, uint32_t w, uint32_t h, int depth)
{
    J2kcImageDesc d;
    memset(&d, 0, sizeof(d));
    d.nb_comps = nc;
    d.width = w;
    d.height = h;
    for (int c = 0; c < nc; c++) {
        d.depth[c] = depth;
        d.dx[c] = d.dy[c] = 1;
    }
    return d;
}

/* Creates an encoder for d with the key/value pairs of kv, encodes one seeded frame and
 * returns the codestream (malloc'ed) or NULL; *ret gets the first error. A rejected pair stops
 * there when strict, else it is skipped as a caller ignoring the error would. */
static uint8_t *encode(const J2kcImageDesc *d, const char *const *kv, int strict, int *ret, size_t *len)
{
    J2kcParams *p = j2kc_params_alloc();
    J2kcEncoder *e = NULL;
    J2kcPacket pkt;
    J2kcFrame f;
    uint8_t *out = NULL;
    size_t n = (size_t)d->width * d->height;
    uint16_t *px = malloc(n * d->nb_comps * sizeof(uint16_t));

    j2kc_params_set_log(p, log_cb, NULL, J2KC_LOG_WARNING);
    *ret = 0;
    for (; kv && kv[0] && !*ret; kv += 2)
        if (j2kc_params_set(p, kv[0], kv[1]) < 0 && strict)
            *ret = J2KC_ERR_INVAL;
    memset(&f, 0, sizeof(f));
    for (int c = 0; c < d->nb_comps; c++) {
        for (size_t i = 0; i < n; i++)
            px[n * c + i] = (uint16_t)(test_rand() & ((1u << d->depth[c]) - 1));
        f.data[c] = px + n * c;
        f.stride[c] = (ptrdiff_t)(d->width * sizeof(uint16_t));
    }
    if (!*ret)
        *ret = j2kc_encoder_create(&e, d, p);
    if (!*ret)
        *ret = j2kc_encoder_submit(e, &f);
    if (!*ret)
        *ret = j2kc_encoder_receive(e, &pkt, 1);
    if (!*ret) {
        out = malloc(pkt.size);
        memcpy(out, pkt.data, pkt.size);
        *len = pkt.size;
    }
    j2kc_encoder_free(&e);
    j2kc_params_free(&p);
    free(px);
    return out;
}

/* Every key, a value it accepts and values it rejects: after each rejection the whole
 * parameter set (coding parameters, set flags) must be byte-identical to before. */
static void test_failed_set_changes_nothing(void)
{
    static const struct { const char *key, *good, *bad[3]; } t[] = {
        { "cblk", "32x32", { "1024x1024", "3x3", "64x" } },
        { "prec", "64x64", { "2x2,3x3", "64x64,65536x2", "x" } },
        { "poc", "0,0,2,7,1,rlcp", { "5,0,1,7,1,rlcp/9,9,0,1,1,lrcp", "0,0,1,7,1,rlcp/1,0,1,7,1,xxxx", "" } },
        { "layer_bytes", "1000,2000", { "3000,x", "1000,500", "5,9007199254740993" } },
        { "tiles", "64x32+1+2", { "64x0", "0x5", "4294967296x1" } },
        { "fps", "24000/1001", { "0", "1/0", "24/" } },
        { "bytes", "5000", { "0", "18446744073709551615", "9007199254740993" } },
        { "comp_bytes", "5000", { "0", "-1", "x" } },
        { "bitrate", "100", { "0", "-5", "inf" } },
        { "quality", "40", { "0", "201", "nan" } },
        { "levels", "3", { "33", "-1", "" } },
        { "layers", "4", { "0", "65", "x" } },
        { "bypass", "1", { "65", "-1", "x" } },
        { "guard_bits", "1", { "8", "-1", "x" } },
        { "order", "rpcl", { "xyzw", "rpclx", "" } },
        { "profile", "imf2k", { "dci3k", "", "IMF2K" } },
        { "comment", "hello", { NULL, NULL, NULL } },
        { "mct", "1", { "2", "auto2", "" } },
        { "sublevel", "2", { "10", "-1", "x" } },
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        J2kcParams *p = j2kc_params_alloc(), before;
        j2kc_params_set_log(p, log_cb, NULL, J2KC_LOG_WARNING);
        CHECK(j2kc_params_set(p, "layers", "2") == 0, "layers=2");
        CHECK(j2kc_params_set(p, t[i].key, t[i].good) == 0, "%s=%s refused: %s", t[i].key, t[i].good, last_log);
        for (int k = 0; k < 3 && t[i].bad[k]; k++) {
            memcpy(&before, p, sizeof(before));
            CHECK(j2kc_params_set(p, t[i].key, t[i].bad[k]) == J2KC_ERR_INVAL, "%s=%s accepted", t[i].key,
                  t[i].bad[k]);
            CHECK(!memcmp(&before, p, sizeof(before)), "rejected %s=%s changed the parameter set", t[i].key,
                  t[i].bad[k]);
        }
        j2kc_params_free(&p);
    }
    /* end to end (the fuzzing reproducer): an encoder made after a rejected cblk/prec/poc/
     * layer_bytes writes the same codestream as one that never saw the rejected value */
    static const struct { const char *key, *good, *bad; } e2e[] = {
        { "cblk", "32x32", "1024x1024" },
        { "prec", "64x64", "2x2,3x3" },
        { "poc", "0,0,2,7,1,rlcp", "5,0,1,7,1,rlcp/9,9,0,1,1,lrcp" },
        { "layer_bytes", "1000,2000", "3000,x" },
    };
    J2kcImageDesc d = image(1, 64, 64, 8);
    for (size_t i = 0; i < sizeof(e2e) / sizeof(e2e[0]); i++) {
        const char *kv_good[] = { "layers", "2", e2e[i].key, e2e[i].good, NULL };
        const char *kv_bad[] = { "layers", "2", e2e[i].key, e2e[i].good, e2e[i].key, e2e[i].bad, NULL };
        int ra, rb;
        size_t la = 0, lb = 0;
        uint64_t seed = test_rng_state;
        uint8_t *a = encode(&d, kv_good, 1, &ra, &la);
        test_rng_state = seed;
        uint8_t *b = encode(&d, kv_bad, 0, &rb, &lb);
        CHECK(ra == 0 && a, "%s=%s: encode %d", e2e[i].key, e2e[i].good, ra);
        CHECK(rb == 0 && b, "%s=%s then %s=%s (rejected): encode %d (%s)", e2e[i].key, e2e[i].good,
              e2e[i].key, e2e[i].bad, rb, last_log);
        CHECK(!a || !b || (la == lb && !memcmp(a, b, la)), "%s: codestreams differ (%zu, %zu bytes)",
              e2e[i].key, la, lb);
        free(a);
        free(b);
    }
    printf("ok params: a rejected set changes nothing\n");
}

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

static void test_extreme_values(void)
{
    J2kcImageDesc d = image(3, 40, 24, 8);
    int ret;
    size_t len = 0;
    /* a tile far larger than the image: one tile, XTsiz/YTsiz clamped to the image (SIZ at
     * offset 2: Lsiz, Rsiz, Xsiz, Ysiz, XOsiz, YOsiz, then XTsiz, YTsiz) */
    {
        const char *kv[] = { "tiles", "4294967295x4294967295", NULL };
        uint8_t *cs = encode(&d, kv, 1, &ret, &len);
        CHECK(ret == 0 && cs, "huge tiles: %d (%s)", ret, last_log);
        if (cs)
            CHECK(rd32(cs + 24) == 40 && rd32(cs + 28) == 24, "XTsiz %u YTsiz %u, 40x24 expected",
                  rd32(cs + 24), rd32(cs + 28));
        free(cs);
        const char *kv2[] = { "tiles", "4000x16", NULL };
        cs = encode(&d, kv2, 1, &ret, &len);
        CHECK(ret == 0 && cs && rd32(cs + 24) == 40 && rd32(cs + 28) == 16, "tiles 4000x16: %d", ret);
        free(cs);
    }
    /* byte budgets: 2^53 is the largest accepted; beyond it, and UINT64_MAX, are refused */
    {
        J2kcParams *p = j2kc_params_alloc();
        j2kc_params_set_log(p, log_cb, NULL, J2KC_LOG_WARNING);
        CHECK(j2kc_params_set(p, "bytes", "9007199254740992") == 0, "bytes 2^53 refused");
        CHECK(j2kc_params_set(p, "bytes", "9007199254740993") == J2KC_ERR_INVAL, "bytes 2^53+1 accepted");
        CHECK(j2kc_params_set(p, "bytes", "18446744073709551615") == J2KC_ERR_INVAL, "bytes 2^64-1 accepted");
        CHECK(j2kc_params_set(p, "comp_bytes", "18446744073709551615") == J2KC_ERR_INVAL, "comp_bytes 2^64-1 accepted");
        j2kc_params_free(&p);
        const char *kv[] = { "bytes", "9007199254740992", "layers", "3", NULL };
        uint8_t *cs = encode(&d, kv, 1, &ret, &len);
        CHECK(ret == 0 && cs, "bytes 2^53, 3 layers: %d (%s)", ret, last_log);
        free(cs);
    }
    /* bit rates whose bytes per frame exceed every integer type: refused, not wrapped */
    {
        static const char *const rates[][4] = {
            { "5e15", "24", "none", "" }, { "1e300", "24", "imf2k", "" }, { "1e300", "1/1000000", "none", "" },
            { "1e300", "24", "dci2k", "" },
        };
        J2kcImageDesc d12 = image(3, 64, 32, 12);
        for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
            const char *kv[] = { "bitrate", rates[i][0], "fps", rates[i][1], "profile", rates[i][2], NULL };
            last_log[0] = 0;
            uint8_t *cs = encode(&d12, kv, 1, &ret, &len);
            CHECK(ret < 0 && !cs, "bitrate %s at %s fps (%s) accepted", rates[i][0], rates[i][1], rates[i][2]);
            CHECK(!strstr(last_log, "less than one byte"), "bitrate %s: wrapped to 0: %s", rates[i][0], last_log);
            free(cs);
        }
        /* the largest budget a bit rate may give still encodes */
        const char *kv[] = { "bitrate", "1e9", "fps", "1", NULL };
        uint8_t *cs = encode(&d12, kv, 1, &ret, &len);
        CHECK(ret == 0 && cs, "bitrate 1e9 at 1 fps: %d (%s)", ret, last_log);
        free(cs);
    }
    /* tiles of 2^31 + 8 on an image at 2^31 (not clamped: the image reaches past them) with
     * the default levels: the level limit's loop shifts by at most 31 */
    {
        J2kcImageDesc far = image(1, 16, 16, 8);
        far.x0 = far.y0 = 0x80000000u;
        const char *kv[] = { "tiles", "2147483656x2147483656", NULL };
        uint8_t *cs = encode(&far, kv, 1, &ret, &len);
        CHECK(ret == 0 && cs, "tiles 2^31+8: %d (%s)", ret, last_log);
        free(cs);
    }
    printf("ok params: extreme tile sizes, budgets and bit rates\n");
}

static void test_imf_levels(void)
{
    static const char *const profiles[] = { "imf2k", "imf4k", "imf8k", "imf2k_r", "imf4k_r", "imf8k_r" };
    J2kcImageDesc d = image(3, 96, 64, 12);
    int ret;
    size_t len;
    for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
        const char *kv0[] = { "profile", profiles[i], "fps", "24", "levels", "0", NULL };
        const char *kv1[] = { "profile", profiles[i], "fps", "24", "levels", "1", NULL };
        uint8_t *cs = encode(&d, kv0, 1, &ret, &len);
        CHECK(ret == J2KC_ERR_PROFILE && !cs, "%s levels=0: %d", profiles[i], ret);
        CHECK(strstr(last_log, "decomposition levels") != NULL, "%s levels=0: message '%s'", profiles[i], last_log);
        free(cs);
        cs = encode(&d, kv1, 1, &ret, &len);
        CHECK(ret == 0 && cs, "%s levels=1 refused: %d (%s)", profiles[i], ret, last_log);
        free(cs);
    }
    printf("ok params: IMF needs at least one decomposition level\n");
}

static void test_is_signed(void)
{
    J2kcImageDesc d = image(1, 16, 16, 8);
    int ret;
    size_t len;
    for (int v = -1; v <= 2; v++) {
        d.is_signed[0] = v;
        uint8_t *cs = encode(&d, NULL, 1, &ret, &len);
        if (v == 0 || v == 1)
            CHECK(ret == 0 && cs && (cs[42] >> 7) == v, "is_signed=%d: %d", v, ret);
        else
            CHECK(ret == J2KC_ERR_INVAL && !cs, "is_signed=%d accepted (%d)", v, ret);
        free(cs);
    }
    printf("ok params: is_signed is 0 or 1\n");
}

/* With format=jp2 a byte budget bounds the file: boxes included (header: "never exceeded"). */
static void test_jp2_budget(void)
{
    J2kcImageDesc d = image(3, 64, 48, 8);
    static const char *const budgets[] = { "2000", "3000", "5000", "7000" };
    int ret;
    size_t len = 0;
    for (size_t i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
        const char *kv[] = { "bytes", budgets[i], "format", "jp2", NULL };
        unsigned long b = strtoul(budgets[i], NULL, 10);
        uint8_t *f = encode(&d, kv, 1, &ret, &len);
        CHECK(ret == 0 && f, "jp2 at %s bytes: %d (%s)", budgets[i], ret, last_log);
        if (f)
            CHECK(len <= b && len >= b - b / 50 && !memcmp(f + 4, "jP  ", 4), "jp2 file of %zu bytes for %lu", len, b);
        free(f);
    }
    const char *kv[] = { "layers", "3", "layer_bytes", "1000,2000,3000", "format", "jp2", NULL };
    uint8_t *f = encode(&d, kv, 1, &ret, &len);
    CHECK(ret == 0 && f && len <= 3000, "jp2 layers: %d, %zu bytes", ret, len);
    free(f);
    const char *kv_small[] = { "bytes", "80", "format", "jp2", NULL };
    f = encode(&d, kv_small, 1, &ret, &len);
    CHECK(ret == J2KC_ERR_BUFSIZE && !f && strstr(last_log, "JP2 boxes"), "80 bytes jp2: %d (%s)", ret, last_log);
    free(f);
    printf("ok params: JP2 budgets include the boxes\n");
}

int main(void)
{
    test_seed("params_limits", 20261127);
    test_failed_set_changes_nothing();
    test_extreme_values();
    test_imf_levels();
    test_is_signed();
    test_jp2_budget();
    return test_done("params_limits");
}
