/*
 * jpeg2000_cuda through the libavcodec API (what the ffmpeg CLI cannot reach): draining with
 * fewer frames than async_depth, pts/dts/duration/opaque carried through, avcodec_flush_buffers()
 * with frames in flight, the per-frame byte budget, the encoder's pixel format check, and CUDA
 * frames giving the same bytes as system-memory frames (when a GPU is present).
 * Every packet is decoded with FFmpeg's jpeg2000 decoder; lossless cases must give the input back.
 * Prints "ok NAME", "FAIL NAME: why" or "skip NAME: why" per check; exits 1 on any failure.
 *   api_test [seed]
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavutil/buffer.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>

#define W 96
#define H 64
#define MAX_PKTS 32

static int failures;
static unsigned seed = 1;

static void report(const char *name, int ok, const char *why)
{
    if (ok)
        printf("ok ffmpeg/api/%s\n", name);
    else {
        printf("FAIL ffmpeg/api/%s: %s\n", name, why);
        failures++;
    }
}

static unsigned rnd(void)
{
    seed = seed * 1103515245u + 12345u;
    return seed >> 16;
}

/* A frame of smooth content plus noise, different for each index. */
static AVFrame *make_frame(enum AVPixelFormat fmt, int index)
{
    AVFrame *f = av_frame_alloc();
    if (!f)
        return NULL;
    f->format = fmt;
    f->width = W;
    f->height = H;
    if (av_frame_get_buffer(f, 0) < 0) {
        av_frame_free(&f);
        return NULL;
    }
    for (int p = 0; p < 3; p++) {
        int w = p ? W / 2 : W, h = p ? H / 2 : H;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                f->data[p][y * f->linesize[p] + x] = (uint8_t)(x * 2 + y + index * 7 + p * 50 + (rnd() & 7));
    }
    return f;
}

static AVCodecContext *open_encoder(enum AVPixelFormat fmt, int async_depth, int64_t bit_rate,
                                    const char *pred, AVBufferRef *hw_frames)
{
    const AVCodec *c = avcodec_find_encoder_by_name("jpeg2000_cuda");
    AVCodecContext *ctx = c ? avcodec_alloc_context3(c) : NULL;
    if (!ctx)
        return NULL;
    ctx->width = W;
    ctx->height = H;
    ctx->pix_fmt = fmt;
    ctx->time_base = (AVRational){ 1, 25 };
    ctx->framerate = (AVRational){ 25, 1 };
    ctx->bit_rate = bit_rate;
    ctx->flags |= AV_CODEC_FLAG_COPY_OPAQUE | AV_CODEC_FLAG_FRAME_DURATION | AV_CODEC_FLAG_BITEXACT;
    av_opt_set_int(ctx->priv_data, "async_depth", async_depth, 0);
    if (pred)
        av_opt_set(ctx->priv_data, "pred", pred, 0);
    if (hw_frames && !(ctx->hw_frames_ctx = av_buffer_ref(hw_frames))) {
        avcodec_free_context(&ctx);
        return NULL;
    }
    if (avcodec_open2(ctx, c, NULL) < 0)
        avcodec_free_context(&ctx);
    return ctx;
}

typedef struct Pkts {
    AVPacket *p[MAX_PKTS];
    int n;
} Pkts;

static void pkts_free(Pkts *k)
{
    for (int i = 0; i < k->n; i++)
        av_packet_free(&k->p[i]);
    k->n = 0;
}

/* Receives every packet available now (until EAGAIN or EOF); returns the last status. */
static int drain_ready(AVCodecContext *ctx, Pkts *k)
{
    for (;;) {
        AVPacket *p = av_packet_alloc();
        int ret;
        if (!p)
            return AVERROR(ENOMEM);
        ret = avcodec_receive_packet(ctx, p);
        if (ret < 0) {
            av_packet_free(&p);
            return ret;
        }
        if (k->n == MAX_PKTS) {
            av_packet_free(&p);
            return AVERROR(ENOSPC);
        }
        k->p[k->n++] = p;
    }
}

/* Sends a frame with pts, duration and opaque/opaque_ref derived from id. */
static int send(AVCodecContext *ctx, AVFrame *f, int64_t pts, int id)
{
    int ret;
    f->pts = pts;
    f->duration = 1 + id % 3;
    f->opaque = (void *)(intptr_t)(1000 + id);
    av_buffer_unref(&f->opaque_ref);
    if (!(f->opaque_ref = av_buffer_alloc(sizeof(int))))
        return AVERROR(ENOMEM);
    memcpy(f->opaque_ref->data, &id, sizeof(id));
    ret = avcodec_send_frame(ctx, f);
    return ret;
}

/* Decodes pkt with the jpeg2000 decoder; returns 1 when it gives back exactly ref's samples. */
static int decodes_to(const AVPacket *pkt, const AVFrame *ref, int want_exact)
{
    const AVCodec *c = avcodec_find_decoder(AV_CODEC_ID_JPEG2000);
    AVCodecContext *d = c ? avcodec_alloc_context3(c) : NULL;
    AVFrame *out = av_frame_alloc();
    int ok = 0;
    if (!d || !out || avcodec_open2(d, c, NULL) < 0)
        goto end;
    if (avcodec_send_packet(d, pkt) < 0 || avcodec_receive_frame(d, out) < 0)
        goto end;
    if (out->width != W || out->height != H || out->format != ref->format)
        goto end;
    ok = 1;
    if (want_exact)
        for (int p = 0; p < 3 && ok; p++) {
            int w = p ? W / 2 : W, h = p ? H / 2 : H;
            for (int y = 0; y < h && ok; y++)
                ok = !memcmp(out->data[p] + y * out->linesize[p], ref->data[p] + y * ref->linesize[p], w);
        }
end:
    av_frame_free(&out);
    avcodec_free_context(&d);
    return ok;
}

/* Drain: 3 frames into an encoder keeping 8 in flight; nothing comes out before the flush
 * packet (NULL frame), then 3 packets in order with their pts/dts/duration/opaque, then EOF. */
static void test_drain(void)
{
    static const int64_t pts[3] = { 10, 20, 35 };
    AVCodecContext *ctx = open_encoder(AV_PIX_FMT_YUV420P, 8, 0, "dwt53", NULL);
    AVFrame *f[3] = { 0 };
    Pkts k = { 0 };
    char why[256] = "";
    int ret;

    if (!ctx) {
        report("drain", 0, "cannot open the encoder");
        return;
    }
    for (int i = 0; i < 3; i++) {
        f[i] = make_frame(AV_PIX_FMT_YUV420P, i);
        if (!f[i] || send(ctx, f[i], pts[i], i) < 0)
            snprintf(why, sizeof(why), "send %d failed", i);
    }
    ret = drain_ready(ctx, &k);
    if (!*why && (ret != AVERROR(EAGAIN) || k.n))
        snprintf(why, sizeof(why), "%d packets before draining (status %d), want 0", k.n, ret);
    avcodec_send_frame(ctx, NULL);
    ret = drain_ready(ctx, &k);
    if (!*why && (ret != AVERROR_EOF || k.n != 3))
        snprintf(why, sizeof(why), "%d packets after draining (status %d), want 3 then EOF", k.n, ret);
    for (int i = 0; !*why && i < 3; i++) {
        AVPacket *p = k.p[i];
        int id = -1;
        if (p->opaque_ref && p->opaque_ref->size == sizeof(int))
            memcpy(&id, p->opaque_ref->data, sizeof(id));
        if (p->pts != pts[i] || p->dts != pts[i] || p->duration != 1 + i % 3)
            snprintf(why, sizeof(why), "packet %d: pts %"PRId64" dts %"PRId64" duration %"PRId64
                     ", want %"PRId64" %"PRId64" %d", i, p->pts, p->dts, p->duration, pts[i], pts[i], 1 + i % 3);
        else if (p->opaque != (void *)(intptr_t)(1000 + i) || id != i)
            snprintf(why, sizeof(why), "packet %d: opaque/opaque_ref not carried through", i);
        else if (!(p->flags & AV_PKT_FLAG_KEY))
            snprintf(why, sizeof(why), "packet %d: not a key frame", i);
        else if (!decodes_to(p, f[i], 1))
            snprintf(why, sizeof(why), "packet %d does not decode to its frame (lossless 5/3)", i);
    }
    report("drain-fewer-than-async_depth", !*why, why);
    pkts_free(&k);
    for (int i = 0; i < 3; i++)
        av_frame_free(&f[i]);
    avcodec_free_context(&ctx);
}

/* Flush with frames in flight: the dropped frames never come out, the encoder goes on, and the
 * frames after the flush give the same bytes as on a fresh encoder. */
static void test_flush(void)
{
    AVCodecContext *ctx = open_encoder(AV_PIX_FMT_YUV420P, 4, 3000000, NULL, NULL);
    AVCodecContext *ref = open_encoder(AV_PIX_FMT_YUV420P, 4, 3000000, NULL, NULL);
    AVFrame *f[8] = { 0 };
    Pkts k = { 0 }, kr = { 0 };
    char why[256] = "";
    int before;

    if (!ctx || !ref) {
        report("flush", 0, "cannot open the encoder");
        goto end;
    }
    for (int i = 0; i < 8; i++)
        if (!(f[i] = make_frame(AV_PIX_FMT_YUV420P, i)))
            goto end;
    for (int i = 0; i < 6; i++)
        if (send(ctx, f[i], i, i) < 0 || drain_ready(ctx, &k) == AVERROR(ENOSPC))
            snprintf(why, sizeof(why), "send %d failed", i);
    before = k.n;    /* 6 frames in with 4 in flight: at most 3 out */
    avcodec_flush_buffers(ctx);
    for (int i = 6; i < 8 && !*why; i++)
        if (send(ctx, f[i], 100 + i, i) < 0)
            snprintf(why, sizeof(why), "send after flush failed");
    avcodec_send_frame(ctx, NULL);
    if (!*why && drain_ready(ctx, &k) != AVERROR_EOF)
        snprintf(why, sizeof(why), "no EOF after draining");
    for (int i = 6; i < 8; i++)
        send(ref, f[i], 100 + i, i);
    avcodec_send_frame(ref, NULL);
    drain_ready(ref, &kr);
    if (!*why && (before > 3 || k.n != before + 2))
        snprintf(why, sizeof(why), "%d packets before the flush, %d after (want <= 3, then 2)", before, k.n - before);
    for (int i = 0; !*why && i < 2; i++) {
        AVPacket *p = k.p[before + i];
        if (p->pts != 106 + i)
            snprintf(why, sizeof(why), "packet after flush has pts %"PRId64", want %d", p->pts, 106 + i);
        else if (kr.n != 2 || p->size != kr.p[i]->size || memcmp(p->data, kr.p[i]->data, p->size))
            snprintf(why, sizeof(why), "packet %d after flush differs from a fresh encoder's", i);
        else if (p->size > 3000000 / 25 / 8)
            snprintf(why, sizeof(why), "packet of %d bytes over the %d-byte budget", p->size, 3000000 / 25 / 8);
        else if (!decodes_to(p, f[6 + i], 0))
            snprintf(why, sizeof(why), "packet after flush does not decode");
    }
    report("flush-in-flight", !*why, why);
    /* a flushed encoder that was drained can start again */
    avcodec_flush_buffers(ctx);
    pkts_free(&k);
    if (send(ctx, f[0], 0, 0) < 0 || avcodec_send_frame(ctx, NULL) < 0 ||
        drain_ready(ctx, &k) != AVERROR_EOF || k.n != 1)
        report("flush-after-eof", 0, "encoder unusable after draining and flushing");
    else
        report("flush-after-eof", 1, "");
end:
    pkts_free(&k);
    pkts_free(&kr);
    for (int i = 0; i < 8; i++)
        av_frame_free(&f[i]);
    avcodec_free_context(&ctx);
    avcodec_free_context(&ref);
}

static int saw_list, saw_name;

static void capture_log(void *avcl, int level, const char *fmt, va_list vl)
{
    char line[1024];
    if (level > AV_LOG_ERROR)
        return;
    vsnprintf(line, sizeof(line), fmt, vl);
    saw_list |= strstr(line, "Supported pixel formats") != NULL;
    saw_name |= strstr(line, "yuv410p") != NULL;
}

/* The pixel format check: a clear error naming the format and listing the supported ones. */
static void test_pix_fmt(void)
{
    AVCodecContext *ctx;
    av_log_set_callback(capture_log);
    ctx = open_encoder(AV_PIX_FMT_YUV410P, 2, 0, NULL, NULL);
    av_log_set_callback(av_log_default_callback);
    report("unsupported-pix_fmt-rejected", !ctx && saw_list && saw_name,
           ctx ? "yuv410p was accepted" : "no error naming yuv410p and listing the supported formats");
    avcodec_free_context(&ctx);
}

/* CUDA frames (needs a GPU and the CUDA backend): same bytes as system-memory frames. */
static void test_cuda_frames(void)
{
    AVBufferRef *dev = NULL, *frames = NULL;
    AVCodecContext *sw = NULL, *hw = NULL;
    AVFrame *f[4] = { 0 }, *g = NULL;
    Pkts ks = { 0 }, kh = { 0 };
    char why[256] = "";

    if (av_hwdevice_ctx_create(&dev, AV_HWDEVICE_TYPE_CUDA, NULL, NULL, 0) < 0) {
        printf("skip ffmpeg/api/cuda-frames: no CUDA device\n");
        return;
    }
    frames = av_hwframe_ctx_alloc(dev);
    if (!frames)
        goto end;
    {
        AVHWFramesContext *fc = (AVHWFramesContext *)frames->data;
        fc->format = AV_PIX_FMT_CUDA;
        fc->sw_format = AV_PIX_FMT_YUV420P;
        fc->width = W;
        fc->height = H;
        fc->initial_pool_size = 0;
        if (av_hwframe_ctx_init(frames) < 0) {
            snprintf(why, sizeof(why), "cannot create CUDA frames");
            goto end;
        }
    }
    sw = open_encoder(AV_PIX_FMT_YUV420P, 3, 2000000, NULL, NULL);
    hw = open_encoder(AV_PIX_FMT_CUDA, 3, 2000000, NULL, frames);
    if (!sw || !hw) {
        snprintf(why, sizeof(why), "cannot open the encoder for %s frames", sw ? "CUDA" : "system-memory");
        goto end;
    }
    for (int i = 0; i < 4 && !*why; i++) {
        f[i] = make_frame(AV_PIX_FMT_YUV420P, i);
        g = av_frame_alloc();
        if (!f[i] || !g || av_hwframe_get_buffer(frames, g, 0) < 0 ||
            av_hwframe_transfer_data(g, f[i], 0) < 0) {
            snprintf(why, sizeof(why), "cannot upload frame %d", i);
            break;
        }
        if (send(sw, f[i], i, i) < 0 || send(hw, g, i, i) < 0)
            snprintf(why, sizeof(why), "send %d failed", i);
        av_frame_free(&g);      /* the encoder keeps its own reference to the device frame */
        drain_ready(sw, &ks);
        drain_ready(hw, &kh);
    }
    avcodec_send_frame(sw, NULL);
    avcodec_send_frame(hw, NULL);
    drain_ready(sw, &ks);
    drain_ready(hw, &kh);
    if (!*why && (ks.n != 4 || kh.n != 4))
        snprintf(why, sizeof(why), "%d/%d packets, want 4", ks.n, kh.n);
    for (int i = 0; !*why && i < 4; i++)
        if (ks.p[i]->size != kh.p[i]->size || memcmp(ks.p[i]->data, kh.p[i]->data, ks.p[i]->size))
            snprintf(why, sizeof(why), "packet %d from CUDA frames differs from system memory", i);
end:
    report("cuda-frames-same-bytes", !*why, why);
    pkts_free(&ks);
    pkts_free(&kh);
    av_frame_free(&g);
    for (int i = 0; i < 4; i++)
        av_frame_free(&f[i]);
    avcodec_free_context(&sw);
    avcodec_free_context(&hw);
    av_buffer_unref(&frames);
    av_buffer_unref(&dev);
}

int main(int argc, char **argv)
{
    seed = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 1;
    printf("# api_test seed %u\n", seed);
    av_log_set_level(AV_LOG_ERROR);
    if (!avcodec_find_encoder_by_name("jpeg2000_cuda")) {
        report("encoder-present", 0, "jpeg2000_cuda not in this libavcodec");
        return 1;
    }
    test_drain();
    test_flush();
    test_pix_fmt();
    test_cuda_frames();
    return failures ? 1 : 0;
}
