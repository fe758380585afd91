/*
 * One encoder over several devices (core/backend_multi.h), tested without GPUs: reference
 * backends stand in for the devices (the J2KC_MULTI_STANDIN hook), so the layer itself is
 * checked wherever the library builds:
 *  - the gpu key takes any, all, an index and lists of distinct indices, and refuses malformed
 *    lists, duplicates, indices out of 0..1023 and more than J2KI_MAX_GPUS devices, naming it;
 *  - frames of seeded random content, submitted and received in a seeded random interleaving,
 *    come back in submission order (tags) and byte-identical to a one-device encoder's, spread
 *    over every device (j2kc_encoder_device_frames), with gpu=all and with a list;
 *  - a listed index past the devices present is refused at creation, naming the device;
 *  - a device that fails (J2KC_MULTI_FAIL) fails its frames with an error naming it, the
 *    encoder then refuses new frames, and every frame in flight is still received (no hang);
 *  - frames in CUDA memory (the stand-ins read them as host memory) stay on the device that
 *    holds their context (j2kc_params_set_cuda; with stand-ins, the last listed) when it is
 *    among the least busy: one frame at a time all go there; a full pipeline spreads them
 *    over every device, in order and with one device's bytes; without a context they are
 *    refused; the pick itself (j2ki_multi_pick): least busy, ties to the holder, full ones
 *    never;
 *  - without stand-ins the reference backend ignores the list, and gpu=all with backend=auto
 *    on a machine without GPUs falls back to it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "j2kcuda.h"
#include "core/backend_multi.h"
#include "test.h"

static char last_log[512];
static void log_cb(void *opaque, int level, const char *msg)
{
    (void)opaque;
    if (level <= J2KC_LOG_WARNING)
        snprintf(last_log, sizeof(last_log), "%s", msg);
}

#define W 40
#define H 24
#define NC 3
#define NB_FRAMES 13

static J2kcImageDesc desc(void)
{
    J2kcImageDesc d;
    memset(&d, 0, sizeof(d));
    d.nb_comps = NC;
    d.width = W;
    d.height = H;
    for (int c = 0; c < NC; c++) {
        d.depth[c] = 10;
        d.dx[c] = d.dy[c] = 1;
    }
    return d;
}

static uint16_t planes[NB_FRAMES][NC][W * H];

static void frame(int k, J2kcFrame *f)
{
    memset(f, 0, sizeof(*f));
    for (int c = 0; c < NC; c++) {
        f->data[c] = planes[k][c];
        f->stride[c] = W * sizeof(uint16_t);
    }
    f->tag = 1000 + (uint64_t)k;
}

/* A CUDA context as the stand-ins see it: only compared, never used. */
static int fake_ctx;

static J2kcEncoder *create_ctx(const char *gpu, const char *backend, void *cu_ctx, int *ret)
{
    J2kcParams *p = j2kc_params_alloc();
    J2kcImageDesc d = desc();
    J2kcEncoder *enc = NULL;
    j2kc_params_set_log(p, log_cb, NULL, J2KC_LOG_INFO);
    j2kc_params_set(p, "backend", backend);
    j2kc_params_set(p, "threads", "1");
    j2kc_params_set(p, "async_depth", "2");
    j2kc_params_set(p, "levels", "3");
    if (gpu && j2kc_params_set(p, "gpu", gpu) < 0)
        fprintf(stderr, "gpu=%s refused: %s\n", gpu, last_log);
    if (cu_ctx)
        j2kc_params_set_cuda(p, cu_ctx, NULL);
    last_log[0] = 0;
    *ret = j2kc_encoder_create(&enc, &d, p);
    j2kc_params_free(&p);
    return enc;
}

static J2kcEncoder *create(const char *gpu, const char *backend, int *ret)
{
    return create_ctx(gpu, backend, NULL, ret);
}

static uint8_t *ref_cs[NB_FRAMES];
static size_t ref_len[NB_FRAMES];

/* The one-device codestreams of every frame. */
static void reference(void)
{
    int ret;
    J2kcEncoder *enc = create(NULL, "ref", &ret);
    CHECK(ret == 0, "reference encoder: %d %s", ret, last_log);
    for (int k = 0; enc && k < NB_FRAMES; k++) {
        J2kcFrame f;
        J2kcPacket pkt;
        frame(k, &f);
        CHECK(j2kc_encoder_submit(enc, &f) == 0, "reference submit %d", k);
        CHECK(j2kc_encoder_receive(enc, &pkt, 1) == 0, "reference receive %d", k);
        ref_cs[k] = malloc(pkt.size);
        memcpy(ref_cs[k], pkt.data, pkt.size);
        ref_len[k] = pkt.size;
    }
    j2kc_encoder_free(&enc);
}

static void test_params(void)
{
    static const char *good[] = { "any", "all", "0", "3", "0,1", "2,0,1", "1023", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15" };
    static const char *bad[] = { "", "0,0", "1,2,1", "0,", ",1", "0,,1", "a", "-1", "1024", "0,1024", "all,0", "0;1",
                                 "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16" };
    J2kcParams *p = j2kc_params_alloc();
    j2kc_params_set_log(p, log_cb, NULL, J2KC_LOG_INFO);
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        CHECK(j2kc_params_set(p, "gpu", good[i]) == 0, "gpu=%s refused: %s", good[i], last_log);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        last_log[0] = 0;
        CHECK(j2kc_params_set(p, "gpu", bad[i]) == J2KC_ERR_INVAL, "gpu=%s accepted", bad[i]);
        CHECK(strstr(last_log, "'gpu'"), "gpu=%s: the message does not name the key: %s", bad[i], last_log);
    }
    CHECK(j2kc_params_set(p, "gpu", "0,0") < 0 && strstr(last_log, "twice"), "duplicate: %s", last_log);
    CHECK(j2kc_params_set(p, "gpu", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16") < 0 && strstr(last_log, "16"),
          "too many: %s", last_log);
    j2kc_params_free(&p);
    printf("ok multi/params\n");
}

/* Encodes every frame through enc in a seeded random interleaving of submits and receives;
 * checks order and bytes; returns the number of frames received. */
static int run(J2kcEncoder *enc, const char *what)
{
    int sub = 0, rec = 0, guard = 0;
    while (rec < NB_FRAMES && guard++ < 100000) {
        if (sub < NB_FRAMES && (test_rand() & 1)) {
            J2kcFrame f;
            frame(sub, &f);
            int r = j2kc_encoder_submit(enc, &f);
            CHECK(r == 0 || r == J2KC_ERR_AGAIN, "%s: submit %d: %d", what, sub, r);
            if (r == 0)
                sub++;
        } else if (rec < sub) {
            J2kcPacket pkt;
            int r = j2kc_encoder_receive(enc, &pkt, test_rand() & 1);
            if (r == J2KC_ERR_AGAIN)
                continue;
            CHECK(r == 0, "%s: receive %d: %d %s", what, rec, r, last_log);
            if (r == 0) {
                CHECK(pkt.tag == 1000 + (uint64_t)rec, "%s: frame %d came back as tag %llu", what, rec,
                      (unsigned long long)pkt.tag);
                CHECK(pkt.size == ref_len[rec] && !memcmp(pkt.data, ref_cs[rec], pkt.size),
                      "%s: frame %d: %zu bytes, not the one-device codestream (%zu bytes)", what, rec,
                      pkt.size, ref_len[rec]);
            }
            rec++;
        }
    }
    CHECK(rec == NB_FRAMES, "%s: %d of %d frames received", what, rec, NB_FRAMES);
    return rec;
}

static void test_spread(const char *gpu, int nb_expected, const int *devs_expected)
{
    int ret, devs[20];
    uint64_t frames[20], sum = 0;
    J2kcEncoder *enc = create(gpu, "ref", &ret);
    CHECK(ret == 0 && enc, "gpu=%s with stand-ins: %d %s", gpu, ret, last_log);
    if (!enc)
        return;
    CHECK(j2kc_encoder_max_size(enc) > 0, "no max size");
    run(enc, gpu);
    int n = j2kc_encoder_device_frames(enc, devs, frames, 20);
    CHECK(n == nb_expected, "gpu=%s: %d devices, expected %d", gpu, n, nb_expected);
    for (int i = 0; i < n && i < 20; i++) {
        CHECK(devs[i] == devs_expected[i], "gpu=%s: device %d is %d, expected %d", gpu, i, devs[i], devs_expected[i]);
        CHECK(frames[i] > 0, "gpu=%s: device %d coded no frame", gpu, devs[i]);
        sum += frames[i];
    }
    CHECK(sum == NB_FRAMES, "gpu=%s: devices coded %llu frames, expected %d", gpu, (unsigned long long)sum, NB_FRAMES);
    J2kcFrame f;
    frame(0, &f);
    f.mem = J2KC_MEM_CUDA;
    last_log[0] = 0;
    CHECK(j2kc_encoder_submit(enc, &f) == J2KC_ERR_INVAL && strstr(last_log, "without its context"),
          "gpu=%s: a CUDA frame without a context: %s", gpu, last_log);
    j2kc_encoder_free(&enc);
    printf("ok multi/spread gpu=%s (%d devices, %d frames in order, bytes of one device)\n", gpu, n, NB_FRAMES);
}

/* j2ki_multi_pick on seeded random loads against a plain statement of the rule. */
static void test_pick(void)
{
    for (int t = 0; t < 2000; t++) {
        uint64_t busy[J2KI_MAX_GPUS];
        int holds[J2KI_MAX_GPUS], n = 2 + (int)(test_rand() % (J2KI_MAX_GPUS - 1)), slots = 1 + (int)(test_rand() % 4);
        int h = (int)(test_rand() % (uint32_t)(n + 1)) - 1;     /* the holder, -1: none */
        for (int i = 0; i < n; i++) {
            busy[i] = test_rand() % (uint32_t)(slots + 1);
            holds[i] = i == h;
        }
        uint64_t least = (uint64_t)slots;
        for (int i = 0; i < n; i++)
            if (busy[i] < least)
                least = busy[i];
        int want = -1;
        if (least < (uint64_t)slots) {
            if (h >= 0 && busy[h] == least)
                want = h;
            else
                for (int i = 0; i < n && want < 0; i++)
                    if (busy[i] == least)
                        want = i;
        }
        int got = j2ki_multi_pick(busy, holds, n, slots);
        CHECK(got == want, "pick %d: %d devices, %d slots, holder %d: got %d, want %d", t, n, slots, h, got, want);
    }
    printf("ok multi/pick (2000 seeded loads)\n");
}

/* CUDA frames in the caller's context (stand-ins: the last listed device, 1, holds it; ties
 * would otherwise go to device 0): one at a time they all stay on device 1; a full pipeline spreads them, in order, with one device's bytes. */
static void test_device_frames(void)
{
    int ret, devs[4];
    uint64_t frames[4];
    J2kcEncoder *enc = create_ctx("0,1", "ref", &fake_ctx, &ret);
    CHECK(ret == 0 && enc, "gpu=0,1 with the caller's context: %d %s", ret, last_log);
    if (!enc)
        return;
    for (int k = 0; k < NB_FRAMES; k++) {
        J2kcFrame f;
        J2kcPacket pkt;
        frame(k, &f);
        f.mem = J2KC_MEM_CUDA;
        CHECK(j2kc_encoder_submit(enc, &f) == 0, "lockstep submit %d: %s", k, last_log);
        CHECK(j2kc_encoder_receive(enc, &pkt, 1) == 0 && pkt.size == ref_len[k] &&
              !memcmp(pkt.data, ref_cs[k], pkt.size), "lockstep frame %d", k);
    }
    int n = j2kc_encoder_device_frames(enc, devs, frames, 4);
    CHECK(n == 2 && frames[0] == 0 && frames[1] == NB_FRAMES,
          "one frame at a time: %llu on device 0, %llu on device 1 (all %d expected on device 1)",
          (unsigned long long)frames[0], (unsigned long long)frames[1], NB_FRAMES);
    j2kc_encoder_free(&enc);

    enc = create_ctx("0,1", "ref", &fake_ctx, &ret);
    CHECK(ret == 0 && enc, "gpu=0,1 with the caller's context: %d %s", ret, last_log);
    if (!enc)
        return;
    int sub = 0, rec = 0;
    while (rec < NB_FRAMES) {
        while (sub < NB_FRAMES) {   /* fill every slot, then drain */
            J2kcFrame f;
            frame(sub, &f);
            f.mem = J2KC_MEM_CUDA;
            if (j2kc_encoder_submit(enc, &f) != 0)
                break;
            sub++;
        }
        while (rec < sub) {
            J2kcPacket pkt;
            int r = j2kc_encoder_receive(enc, &pkt, 1);
            CHECK(r == 0 && pkt.tag == 1000 + (uint64_t)rec && pkt.size == ref_len[rec] &&
                  !memcmp(pkt.data, ref_cs[rec], pkt.size), "full pipeline: frame %d: %d", rec, r);
            rec++;
        }
    }
    n = j2kc_encoder_device_frames(enc, devs, frames, 4);
    CHECK(n == 2 && frames[0] > 0 && frames[1] > 0 && frames[0] + frames[1] == NB_FRAMES,
          "full pipeline: %llu on device 0, %llu on device 1", (unsigned long long)frames[0],
          (unsigned long long)frames[1]);
    j2kc_encoder_free(&enc);
    printf("ok multi/device-frames (one at a time: all on the holder; full: %llu + %llu)\n",
           (unsigned long long)frames[0], (unsigned long long)frames[1]);
}

static void test_fail(void)
{
    int ret, failed = 0, got = 0, sub = 0, refused = 0;
    setenv("J2KC_MULTI_FAIL", "1", 1);
    J2kcEncoder *enc = create("0,1", "ref", &ret);
    unsetenv("J2KC_MULTI_FAIL");
    CHECK(ret == 0 && enc, "failing stand-in: %d %s", ret, last_log);
    if (!enc)
        return;
    for (int k = 0; k < NB_FRAMES; k++) {
        J2kcFrame f;
        frame(k, &f);
        int r = j2kc_encoder_submit(enc, &f);
        if (r == J2KC_ERR_BROKEN) {
            refused++;
            continue;
        }
        if (r == 0)
            sub++;
        J2kcPacket pkt;
        while (j2kc_encoder_in_flight(enc) >= 2 || (r == J2KC_ERR_AGAIN && j2kc_encoder_in_flight(enc))) {
            last_log[0] = 0;
            int rr = j2kc_encoder_receive(enc, &pkt, 1);
            if (rr == 0)
                got++;
            else {
                failed++;
                CHECK(rr == J2KC_ERR_CUDA && strstr(last_log, "gpu 1"), "a failed frame: %d '%s'", rr, last_log);
            }
            if (r == J2KC_ERR_AGAIN)
                break;
        }
    }
    for (int i = 0; i < 64 && j2kc_encoder_in_flight(enc); i++) {
        J2kcPacket pkt;
        int rr = j2kc_encoder_receive(enc, &pkt, 1);
        if (rr == 0) got++; else failed++;
    }
    CHECK(j2kc_encoder_in_flight(enc) == 0, "frames left in flight after a device failed");
    CHECK(failed > 0, "no frame failed");
    CHECK(refused > 0, "the encoder took new frames after a device failed");
    CHECK(got + failed == sub, "submitted %d, received %d + failed %d", sub, got, failed);
    j2kc_encoder_free(&enc);
    printf("ok multi/fail (%d submitted: %d coded, %d failed on gpu 1; %d refused afterwards)\n", sub, got, failed, refused);
}

int main(void)
{
    test_seed("test_multi", 0x5eed30);
    for (int k = 0; k < NB_FRAMES; k++)
        for (int c = 0; c < NC; c++)
            for (int i = 0; i < W * H; i++)
                planes[k][c][i] = (uint16_t)(((i % W) * (k + 3) + (i / W) * 5 + c * 77 + (test_rand() & 63)) & 1023);
    test_params();
    reference();

    /* without stand-ins: the reference backend ignores the list; gpu=all with backend=auto
     * runs on the reference backend where there is no GPU */
    int ret;
    J2kcEncoder *enc = create("0,1", "ref", &ret);
    CHECK(ret == 0 && !strcmp(j2kc_encoder_backend(enc), "ref"), "ref with gpu=0,1: %d %s", ret, last_log);
    if (enc) {
        int dev = 0;
        uint64_t nb = 0;
        run(enc, "ref gpu=0,1");
        CHECK(j2kc_encoder_device_frames(enc, &dev, &nb, 1) == 1 && dev == -1 && nb == NB_FRAMES,
              "ref with gpu=0,1: device %d coded %llu frames (want -1, none, and %d)", dev,
              (unsigned long long)nb, NB_FRAMES);
    }
    j2kc_encoder_free(&enc);
    enc = create("all", "auto", &ret);
    CHECK(ret == 0 && enc, "auto with gpu=all: %d %s", ret, last_log);
    if (enc) {
        printf("# gpu=all, backend=auto: backend %s\n", j2kc_encoder_backend(enc));
        run(enc, "auto gpu=all");
    }
    j2kc_encoder_free(&enc);

    setenv("J2KC_MULTI_STANDIN", "3", 1);
    static const int d02[] = { 0, 2 }, d012[] = { 0, 1, 2 }, d1[] = { 1 };
    test_spread("0,2", 2, d02);
    test_spread("all", 3, d012);
    test_spread("2,0,1", 3, (const int[]){ 2, 0, 1 });
    {   /* a one-device list is a one-device encoder */
        int devs[4];
        uint64_t frames[4];
        enc = create("1", "ref", &ret);
        CHECK(ret == 0 && j2kc_encoder_device_frames(enc, devs, frames, 4) == 1 && devs[0] == d1[0],
              "gpu=1 with stand-ins");
        j2kc_encoder_free(&enc);
    }
    enc = create("0,3", "ref", &ret);
    CHECK(ret == J2KC_ERR_NODEV && !enc && strstr(last_log, "device 3 does not exist"),
          "gpu=0,3 with 3 devices: %d '%s'", ret, last_log);
    j2kc_encoder_free(&enc);
    printf("ok multi/out-of-range (%s)\n", last_log);
    test_pick();
    test_device_frames();
    test_fail();
    unsetenv("J2KC_MULTI_STANDIN");
    for (int k = 0; k < NB_FRAMES; k++)
        free(ref_cs[k]);
    return test_done("test_multi");
}
