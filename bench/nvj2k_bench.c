/*
 * nvj2k_bench: host-to-host speed of NVIDIA nvJPEG2000's encoder (PyPI nvidia-nvjpeg2k-cu13),
 * measured like bench/j2kbench.c, at a PSNR chosen by the caller.
 *
 * nvJPEG2000 has no byte budget, so the comparison with j2kcuda is made at equal PSNR:
 * --psnr T searches the encoder's TARGET_PSNR quality value until the decoded image (decoded
 * by nvJPEG2000's own decoder, compared here with the source) has a PSNR of T within 0.05 dB,
 * preferring the closest value at or above T. PSNR is over every sample of every component:
 * 10*log10((2^depth-1)^2 * nb_samples / sum of squared errors) (same as bench/psnr.py).
 *
 * HTJ2K (--ht): the High-Throughput block coder of ISO/IEC 15444-15 (Rsiz bit 14 set,
 * code-block style 0x40). nvJPEG2000 0.11 refuses TARGET_PSNR with it and has no byte budget:
 * --bytes B searches the QUANTIZATION_STEP value (the step all sub-band steps derive from) for the
 * codestream size closest to B bytes (log-log secant steps, within 0.5 % or the closest of 12
 * tries); --qstep Q uses a given step. The comparison with j2kcuda's exact budget is then made at
 * about the same bytes, and the PSNR of both reported.
 *
 * Host to host: the frame starts in pinned host memory (the best case for nvJPEG2000, which
 * takes device planes only), the copy up is timed, and the codestream ends in host memory.
 * With --streams K, K encode states on K CUDA streams keep K frames in flight.
 *
 * Usage: nvj2k_bench -i FILE [-f yuv422p10le -s WxH]
 *        (--psnr T | --quality Q | --bytes B | --qstep Q | --lossless) [--ht]
 *        [--levels L] [--cblk 32|64] [--dci] [--mct 0|1] [-n N] [-t SEC] [-l L] [--streams K]
 *        [-o OUT.j2k]
 * Prints one "RESULT key=value ..." line.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <nvjpeg2k.h>

#include "frameio.h"
#include "timing.h"

#define MAX_SLOTS 8
#define MAX_REPS 1000
/* --bytes search: tries, and the relative size error that ends it early */
#define BYTES_SEARCH_TRIES 12
#define BYTES_SEARCH_TOL 0.005
/* the first step tried: a size near the raw frame when the step is in sample units, a small one
 * when it is relative to the full range (the header does not say which) */
#define BYTES_SEARCH_Q0 1.0

#define CK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); exit(1); } } while (0)
#define CK_NVJ(x) do { nvjpeg2kStatus_t s_ = (x); if (s_ != NVJPEG2K_STATUS_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s: nvjpeg2k status %d\n", __FILE__, __LINE__, #x, (int)s_); exit(1); } } while (0)

typedef struct Slot {
    cudaStream_t          stream;
    nvjpeg2kEncodeState_t state;
    void                 *d_plane[4];
    size_t                pitch[4];
    unsigned char        *h_out;
    size_t                out_size;
} Slot;

typedef struct Bench {
    BenchFrame             fr;
    uint16_t              *h_in;        /* pinned copy of the planes, one after another */
    size_t                 plane_off[4];
    nvjpeg2kEncoder_t      enc;
    nvjpeg2kEncodeParams_t params;
    nvjpeg2kEncodeConfig_t cfg;
    nvjpeg2kImageComponentInfo_t comp_info[4];
    Slot                   slot[MAX_SLOTS];
    int                    nb_slots;
    size_t                 out_cap;
} Bench;

/* copy up and enqueue the encode of the frame on slot s */
static void issue(Bench *b, int s)
{
    Slot *sl = &b->slot[s];
    nvjpeg2kImage_t img;
    for (int c = 0; c < b->fr.nb_comps; c++)
        CK_CUDA(cudaMemcpy2DAsync(sl->d_plane[c], sl->pitch[c], b->h_in + b->plane_off[c],
                                  b->fr.comp_w[c] * 2, b->fr.comp_w[c] * 2, b->fr.comp_h[c],
                                  cudaMemcpyHostToDevice, sl->stream));
    img.pixel_data = sl->d_plane;
    img.pitch_in_bytes = sl->pitch;
    img.pixel_type = NVJPEG2K_UINT16;
    img.num_components = (uint32_t)b->fr.nb_comps;
    CK_NVJ(nvjpeg2kEncode(b->enc, sl->state, b->params, &img, sl->stream));
}

/* bring slot s's codestream to host memory */
static void finish(Bench *b, int s)
{
    Slot *sl = &b->slot[s];
    size_t len = 0;
    CK_NVJ(nvjpeg2kEncodeRetrieveBitstream(b->enc, sl->state, NULL, &len, sl->stream));
    if (len > b->out_cap) {
        fprintf(stderr, "codestream of %zu bytes over the buffer\n", len);
        exit(1);
    }
    CK_NVJ(nvjpeg2kEncodeRetrieveBitstream(b->enc, sl->state, sl->h_out, &len, sl->stream));
    CK_CUDA(cudaStreamSynchronize(sl->stream));
    sl->out_size = len;
}

/* q: the TARGET_PSNR value, or with qstep the QUANTIZATION_STEP value (HT takes only steps) */
static void set_quality(Bench *b, int lossless, int qstep, double q)
{
    CK_NVJ(nvjpeg2kEncodeParamsSetEncodeConfig(b->params, &b->cfg));
    if (!lossless)
        CK_NVJ(nvjpeg2kEncodeParamsSpecifyQuality(b->params, qstep ? NVJPEG2K_QUALITY_TYPE_QUANTIZATION_STEP
                                                                   : NVJPEG2K_QUALITY_TYPE_TARGET_PSNR, q));
}

/* decodes slot 0's codestream with nvJPEG2000 and returns its PSNR against the source, NAN when
 * nvJPEG2000 cannot decode it (the caller then measures PSNR another way) */
#define SOFT(x) do { if ((x) != 0) { fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x); \
    goto fail; } } while (0)
static double decode_psnr(Bench *b, nvjpeg2kHandle_t h, nvjpeg2kDecodeState_t ds, nvjpeg2kStream_t js)
{
    Slot *sl = &b->slot[0];
    void *d_out[4] = { NULL, NULL, NULL, NULL };
    size_t pitch[4];
    nvjpeg2kImage_t out;
    uint16_t *dec = NULL;
    double sse = 0.0, cnt = 0.0, peak = (double)((1 << b->fr.depth) - 1), ret = NAN;
    SOFT(nvjpeg2kStreamParse(h, sl->h_out, sl->out_size, 0, 0, js));
    for (int c = 0; c < b->fr.nb_comps; c++) {
        pitch[c] = b->fr.comp_w[c] * 2;
        SOFT(cudaMalloc(&d_out[c], pitch[c] * b->fr.comp_h[c]));
    }
    out.pixel_data = d_out;
    out.pitch_in_bytes = pitch;
    out.pixel_type = NVJPEG2K_UINT16;
    out.num_components = (uint32_t)b->fr.nb_comps;
    SOFT(nvjpeg2kDecode(h, ds, js, &out, sl->stream));
    SOFT(cudaStreamSynchronize(sl->stream));
    for (int c = 0; c < b->fr.nb_comps; c++) {
        size_t n = (size_t)b->fr.comp_w[c] * b->fr.comp_h[c];
        if (!(dec = malloc(n * 2)))
            goto fail;
        SOFT(cudaMemcpy(dec, d_out[c], n * 2, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) {
            double e = (double)dec[i] - (double)b->fr.plane[c][i];
            sse += e * e;
        }
        cnt += (double)n;
        free(dec);
        dec = NULL;
    }
    ret = sse == 0.0 ? INFINITY : 10.0 * log10(peak * peak * cnt / sse);
fail:
    free(dec);
    for (int c = 0; c < b->fr.nb_comps; c++)
        cudaFree(d_out[c]);
    return ret;
}

int main(int argc, char **argv)
{
    const char *in = NULL, *fmt = NULL, *out = NULL;
    uint32_t w = 0, h = 0;
    double target = 0.0, quality = 0.0, tmax = 20.0, lat[MAX_REPS], t0, t1, psnr = NAN;
    int lossless = 0, levels = 5, cblk = 64, dci = 0, mct = -1, n = 100, reps = 11;
    int search = 0, nb_slots = 1, iters = 0, ht = 0, use_qstep = 0;
    double target_bytes = 0.0;
    Bench b;
    nvjpeg2kHandle_t dh;
    nvjpeg2kDecodeState_t ds;
    nvjpeg2kStream_t js;

    memset(&b, 0, sizeof(b));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--lossless")) { lossless = 1; continue; }
        if (!strcmp(a, "--dci")) { dci = 1; continue; }
        if (!strcmp(a, "--ht")) { ht = 1; continue; }
        i++;
        if (!strcmp(a, "-i")) in = v;
        else if (!strcmp(a, "-f")) fmt = v;
        else if (!strcmp(a, "-s")) bench_parse_size(v, &w, &h);
        else if (!strcmp(a, "-o")) out = v;
        else if (!strcmp(a, "-n")) n = atoi(v);
        else if (!strcmp(a, "-t")) tmax = atof(v);
        else if (!strcmp(a, "-l")) reps = atoi(v);
        else if (!strcmp(a, "--psnr")) { target = atof(v); search = 1; }
        else if (!strcmp(a, "--quality")) quality = atof(v);
        else if (!strcmp(a, "--qstep")) { quality = atof(v); use_qstep = 1; }
        else if (!strcmp(a, "--bytes")) { target_bytes = atof(v); use_qstep = 1; }
        else if (!strcmp(a, "--levels")) levels = atoi(v);
        else if (!strcmp(a, "--cblk")) cblk = atoi(v);
        else if (!strcmp(a, "--mct")) mct = atoi(v);
        else if (!strcmp(a, "--streams")) nb_slots = atoi(v);
        else { fprintf(stderr, "unknown option %s (see the comment at the top of nvj2k_bench.c)\n", a); return 2; }
    }
    if (ht && search) {
        fprintf(stderr, "nvj2k_bench: nvJPEG2000 refuses TARGET_PSNR with HT: use --bytes or --qstep\n");
        return 2;
    }
    if (!in || (!lossless && !search && quality <= 0 && target_bytes <= 0) || nb_slots < 1 || nb_slots > MAX_SLOTS ||
        reps < 1 || reps > MAX_REPS || n < 1) {
        fprintf(stderr, "usage: nvj2k_bench -i FILE [-f FMT -s WxH] (--psnr T|--quality Q|--lossless) ...\n");
        return 2;
    }
    if (bench_frame_load(&b.fr, in, fmt, w, h))
        return 1;
    b.nb_slots = nb_slots;

    /* pinned input planes */
    {
        size_t total = 0;
        for (int c = 0; c < b.fr.nb_comps; c++) {
            b.plane_off[c] = total;
            total += (size_t)b.fr.comp_w[c] * b.fr.comp_h[c];
        }
        CK_CUDA(cudaMallocHost((void **)&b.h_in, total * 2));
        for (int c = 0; c < b.fr.nb_comps; c++)
            memcpy(b.h_in + b.plane_off[c], b.fr.plane[c], (size_t)b.fr.comp_w[c] * b.fr.comp_h[c] * 2);
        /* room for a step search that starts fine (up to 1.5x the 16-bit frame) */
        b.out_cap = total * 3 + (1 << 20);
    }

    /* coding parameters: as close to the j2kcuda run as nvJPEG2000 allows */
    for (int c = 0; c < b.fr.nb_comps; c++) {
        b.comp_info[c].component_width = b.fr.comp_w[c];
        b.comp_info[c].component_height = b.fr.comp_h[c];
        b.comp_info[c].precision = (uint8_t)b.fr.depth;
        b.comp_info[c].sgn = 0;
    }
    b.cfg.stream_type = NVJPEG2K_STREAM_J2K;
    b.cfg.image_width = b.fr.width;
    b.cfg.image_height = b.fr.height;
    b.cfg.num_components = (uint32_t)b.fr.nb_comps;
    b.cfg.image_comp_info = b.comp_info;
    b.cfg.prog_order = dci ? NVJPEG2K_CPRL : NVJPEG2K_LRCP;
    b.cfg.num_layers = 1;
    if (mct < 0)
        mct = b.fr.nb_comps == 3 && b.fr.dx[1] == 1 && b.fr.dy[1] == 1;
    b.cfg.mct_mode = (uint32_t)mct;
    b.cfg.color_space = b.fr.nb_comps == 1 ? NVJPEG2K_COLORSPACE_GRAY
                      : mct ? NVJPEG2K_COLORSPACE_SRGB : NVJPEG2K_COLORSPACE_SYCC;
    b.cfg.num_resolutions = (uint32_t)levels + 1;
    b.cfg.code_block_w = (uint32_t)cblk;
    b.cfg.code_block_h = (uint32_t)cblk;
    b.cfg.irreversible = lossless ? 0 : 1;
    if (ht) {
        b.cfg.rsiz = NVJPEG2K_RSIZ_HT;
        b.cfg.encode_modes = NVJPEG2K_MODE_HT;
    }
    if (dci) { /* DCI: 256x256 precincts, 128x128 at the lowest resolution */
        b.cfg.num_precincts_init = (uint32_t)levels + 1;
        for (int r = 0; r <= levels; r++)
            b.cfg.precinct_width[r] = b.cfg.precinct_height[r] = r == 0 ? 128 : 256;
    }

    CK_NVJ(nvjpeg2kEncoderCreateSimple(&b.enc));
    CK_NVJ(nvjpeg2kEncodeParamsCreate(&b.params));
    CK_NVJ(nvjpeg2kEncodeParamsSetInputFormat(b.params, NVJPEG2K_FORMAT_PLANAR));
    for (int s = 0; s < nb_slots; s++) {
        Slot *sl = &b.slot[s];
        CK_CUDA(cudaStreamCreateWithFlags(&sl->stream, cudaStreamNonBlocking));
        CK_NVJ(nvjpeg2kEncodeStateCreate(b.enc, &sl->state));
        for (int c = 0; c < b.fr.nb_comps; c++)
            CK_CUDA(cudaMallocPitch(&sl->d_plane[c], &sl->pitch[c], b.fr.comp_w[c] * 2, b.fr.comp_h[c]));
        CK_CUDA(cudaMallocHost((void **)&sl->h_out, b.out_cap));
    }
    CK_NVJ(nvjpeg2kCreateSimple(&dh));
    CK_NVJ(nvjpeg2kDecodeStateCreate(dh, &ds));
    CK_NVJ(nvjpeg2kStreamCreate(&js));

    /* quality search (secant steps on the TARGET_PSNR value; about 1 dB per 1 dB) */
    if (search) {
        double q = target, best_q = target, best_p = -1.0, best_err = 1e9;
        for (iters = 1; iters <= 8; iters++) {
            double p, err;
            set_quality(&b, 0, 0, q);
            issue(&b, 0);
            finish(&b, 0);
            p = decode_psnr(&b, dh, ds, js);
            if (isnan(p)) {
                fprintf(stderr, "nvj2k_bench: nvJPEG2000 cannot decode its own codestream: no PSNR search\n");
                return 1;
            }
            err = p >= target ? p - target : (target - p) + 0.5; /* prefer at or above */
            fprintf(stderr, "nvj2k_bench: quality %.3f -> %.3f dB, %zu bytes\n", q, p, b.slot[0].out_size);
            if (err < best_err) { best_err = err; best_q = q; best_p = p; }
            if (p >= target && p - target < 0.05)
                break;
            q += (target - p) + (p < target ? 0.01 : 0.0);
            if (q <= 0)
                q = 1.0;
        }
        quality = best_q;
        (void)best_p;
    }
    /* byte search on the quantisation step: size ~ step^-k, k from the last two tries */
    if (target_bytes > 0 && !lossless) {
        double q = BYTES_SEARCH_Q0, k = 1.0, best_err = 1e30, lq0 = 0.0, lb0 = 0.0;
        for (iters = 1; iters <= BYTES_SEARCH_TRIES; iters++) {
            double lb, err;
            set_quality(&b, 0, 1, q);
            issue(&b, 0);
            finish(&b, 0);
            lb = log((double)b.slot[0].out_size);
            err = fabs((double)b.slot[0].out_size / target_bytes - 1.0);
            fprintf(stderr, "nvj2k_bench: qstep %.6g -> %zu bytes (target %.0f)\n", q, b.slot[0].out_size,
                    target_bytes);
            if (err < best_err) { best_err = err; quality = q; }
            if (err < BYTES_SEARCH_TOL)
                break;
            if (iters > 1 && fabs(log(q) - lq0) > 1e-9) {
                double k2 = -(lb - lb0) / (log(q) - lq0);
                if (k2 > 0.1 && k2 < 10.0)
                    k = k2;
            }
            lq0 = log(q);
            lb0 = lb;
            q = exp(lq0 + (lb - log(target_bytes)) / k);
        }
    }
    set_quality(&b, lossless, use_qstep, quality);

    /* warm-up and check */
    for (int i = 0; i < 3; i++) {
        issue(&b, 0);
        finish(&b, 0);
    }
    psnr = decode_psnr(&b, dh, ds, js);
    if (out) {
        FILE *fp = fopen(out, "wb");
        if (!fp || fwrite(b.slot[0].h_out, 1, b.slot[0].out_size, fp) != b.slot[0].out_size || fclose(fp)) {
            fprintf(stderr, "cannot write %s\n", out);
            return 1;
        }
    }

    /* latency */
    t0 = now_ms();
    for (int i = 0; i < reps; i++) {
        double t = now_ms();
        issue(&b, 0);
        finish(&b, 0);
        lat[i] = now_ms() - t;
        if (now_ms() - t0 > tmax * 1e3 / 2) { reps = i + 1; break; }
    }
    qsort(lat, (size_t)reps, sizeof(double), cmp_double);

    /* throughput: nb_slots frames in flight */
    t0 = now_ms();
    {
        int done = 0;
        for (int i = 0; i < n; i++) {
            int s = i % nb_slots;
            if (i >= nb_slots) { finish(&b, s); done++; }
            issue(&b, s);
            if (now_ms() - t0 > tmax * 1e3) { n = i + 1; break; }
        }
        for (int i = done; i < n; i++)
            finish(&b, i % nb_slots);
    }
    t1 = now_ms();

    printf("RESULT backend=nvjpeg2k width=%u height=%u comps=%d depth=%d bytes=%zu frames=%d fps=%.3f "
           "ms_per_frame=%.4f latency_ms=%.4f latency_min_ms=%.4f latency_reps=%d streams=%d "
           "quality=%.6g qstep=%d ht=%d psnr_nvj=%.4f search_iters=%d\n",
           b.fr.width, b.fr.height, b.fr.nb_comps, b.fr.depth, b.slot[0].out_size, n,
           n * 1e3 / (t1 - t0), (t1 - t0) / n, lat[reps / 2], lat[0], reps, nb_slots,
           lossless ? 0.0 : quality, use_qstep, ht, psnr, iters);

    nvjpeg2kStreamDestroy(js);
    nvjpeg2kDecodeStateDestroy(ds);
    nvjpeg2kDestroy(dh);
    for (int s = 0; s < nb_slots; s++) {
        Slot *sl = &b.slot[s];
        for (int c = 0; c < b.fr.nb_comps; c++)
            cudaFree(sl->d_plane[c]);
        cudaFreeHost(sl->h_out);
        nvjpeg2kEncodeStateDestroy(sl->state);
        cudaStreamDestroy(sl->stream);
    }
    nvjpeg2kEncodeParamsDestroy(b.params);
    nvjpeg2kEncoderDestroy(b.enc);
    cudaFreeHost(b.h_in);
    bench_frame_free(&b.fr);
    return 0;
}
