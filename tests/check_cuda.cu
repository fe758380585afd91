/*
 * check_cuda: the reference backend against the CUDA backend.
 *
 * Per configuration (image geometry + coding parameters) and seeded random frame:
 *   stage checks  each CUDA stage runs on the reference's own input to that stage (so a
 *                 mismatch is pinned on one stage) and its output is compared bit for bit:
 *                 load+MCT (G), DWT (F), quantisation (E), tier-1 (D: numbps, passes with
 *                 rate/dist/term, coded bytes). The first mismatch is printed as
 *                 (comp, res, band, x, y) in band coordinates (band -1: spatial samples).
 *   end to end    the same frames through the public API with backend=ref and backend=cuda
 *                 (host frames, then device frames, J2KC_MEM_CUDA), codestreams compared.
 * Once: two encoders in two threads, a device frame still being written on the legacy
 * default stream (cu_stream NULL, as FFmpeg's uploads), a GPU index that does not exist,
 * device memory running out.
 * Options: --seed N (else J2KC_TEST_SEED, else a fixed default), --only NAME, --bench
 * (adds a 2K timing run through the public API, and times every tier-1 kernel variant,
 * J2KI_T1_CUDA_PAR included). The test hooks J2KC_CUDA_T1_VARIANT and J2KC_CUDA_SMEM_OPTIN
 * (hooks.h) hold everywhere (the per-stage check and its overflow check read them as the end
 * to end encoders do), e.g. J2KC_CUDA_T1_VARIANT=8 checks the 8-lane serial kernel where the
 * default is J2KI_T1_CUDA_PAR (every code-block shape).
 * Exit status 0 only when every check passed; 77 when no CUDA device is present.
 */
extern "C" {
#include "j2kcuda.h"
#include "core/j2ki.h"
#include "core/params.h"
#include "core/plan.h"
#include "hd/mct.h"
#include "hd/dwt.h"
#include "hd/quant.h"
#include "ref/t1_ref.h"
#include "ref/ht_plane.h"
#include "ref/ht_ref.h"
#include "ref/t2_ref.h"
#include "core/threadpool.h"
#include "core/backend.h"
}
#include <cuda.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "cuda/cuda_launch.h"
#include "cuda/cuda_util.h"
#include "cuda/dwt_cuda.h"
#include "cuda/mct_cuda.h"
#include "cuda/quant_cuda.h"
#include "cuda/scan_cuda.h"
#include "cuda/sort_cuda.h"
#include "cuda/t1_cuda.h"
#include "cuda/ht_cuda.h"
#include "hd/t1_stop.h"
#include "test.h"

/* Device buffers come from j2ki_cuda_malloc, zeroed as the library's are (cuda_fault.cu): the
 * kernels read whole 32-bit words of byte lists, so initcheck sees the same memory as in use. */
#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, #call); \
    exit(1); } } while (0)
/* the same for the library's driver calls (cu_driver.h) */
#define CKD(call) do { CUresult e_ = (call); if (e_ != CUDA_SUCCESS) { \
    fprintf(stderr, "CUDA driver error %d at %s:%d: %s\n", (int)e_, __FILE__, __LINE__, #call); \
    exit(1); } } while (0)

typedef struct Cfg {
    const char *name;
    int nb_comps, w, h, x0, y0, depth, is_signed, dx1;  /* dx1: component 1 (and 2) subsampled by 2
                                                            horizontally (4:2:2), 2: both ways (4:2:0) */
    int shift, packed;                                   /* MSB-aligned containers; packed RGB (2: BGR) */
    const char *params;                                  /* "key=value key=value ..." */
    int flat;                                            /* every component one level, no noise */
} Cfg;

static const Cfg cfgs[] = {
    { "1x1-lossless",      1,    1,    1, 0, 0,  8, 0, 0, 0, 0, "lossless=1 levels=5" },
    { "1x1-97",            3,    1,    1, 0, 0,  8, 0, 0, 0, 0, "levels=3" },
    { "odd-53-rct",        3,   37,   23, 0, 0,  8, 0, 0, 0, 0, "lossless=1 levels=5" },
    { "odd-97-ict",        3,   37,   23, 0, 0,  8, 0, 0, 0, 0, "levels=5" },
    { "small-13x7",        1,   13,    7, 0, 0, 10, 0, 0, 0, 0, "levels=2" },
    { "offset-tiles-53",   3,  301,  203, 3, 5, 12, 0, 0, 4, 0, "lossless=1 tiles=64x48+1+2 levels=4" },
    { "offset-tiles-97",   3,  301,  203, 3, 5, 12, 0, 0, 4, 0, "tiles=64x48+1+2 levels=4 cblk=32x32" },
    { "max-levels-53",     1,  257,  129, 1, 1,  8, 0, 0, 0, 0, "lossless=1 levels=32" },
    { "max-levels-97",     1,  257,  129, 1, 1,  8, 0, 0, 0, 0, "levels=32" },
    { "signed16-97",       2,  130,   66, 0, 0, 16, 1, 0, 0, 0, "levels=5 mct=0" },
    { "signed16-53",       2,  130,   66, 0, 0, 16, 1, 0, 0, 0, "lossless=1 levels=5 mct=0" },
    { "packed-rgb",        3,  160,   90, 0, 0,  8, 0, 0, 0, 1, "levels=4" },
    /* packed frames staged as they are, the load reading them with their step (host frames
     * of 5.5 MB: the staging helpers and 2 parts); BGR order: the plane starts at component 2 */
    { "packed-bgr48-97",   3, 1280,  720, 0, 0, 12, 0, 0, 4, 2, "levels=5" },
    { "packed-rgb48-53",   3,  301,  203, 3, 5, 16, 0, 0, 0, 1, "lossless=1 tiles=64x48+1+2 levels=4" },
    { "subsampled-422",    3,  161,   77, 1, 0, 10, 0, 1, 6, 0, "levels=4 mct=0" },
    /* 4:2:0 8-bit planes, as FFmpeg's yuv420p (its CUDA frames too: one byte a sample, chroma
     * planes of their own) */
    { "subsampled-420-53", 3, 1920, 1080, 0, 0,  8, 0, 2, 0, 0, "lossless=1 levels=5" },
    { "subsampled-420-97", 3,  163,   79, 1, 1,  8, 0, 2, 0, 0, "levels=4" },
    { "cblk-4x4",          1,   45,   33, 0, 0,  8, 0, 0, 0, 0, "cblk=4x4 levels=3" },
    { "cblk-1024x4",       1, 1100,   21, 0, 0,  8, 0, 0, 0, 0, "cblk=1024x4 levels=2" },
    { "cblk-16x256",       1,   70,  300, 0, 0,  8, 0, 0, 0, 0, "cblk=16x256 levels=3 lossless=1" },
    { "style-bypass",      3,   97,   71, 0, 0, 12, 0, 0, 0, 0, "bypass=1 levels=4" },
    { "style-reset",       3,   97,   71, 0, 0, 12, 0, 0, 0, 0, "reset=1 levels=4" },
    { "style-termall",     3,   97,   71, 0, 0, 12, 0, 0, 0, 0, "termall=1 levels=4" },
    { "style-vcausal",     3,   97,   71, 0, 0, 12, 0, 0, 0, 0, "vcausal=1 levels=4" },
    { "style-pterm",       3,   97,   71, 0, 0, 12, 0, 0, 0, 0, "pterm=1 levels=4" },
    { "style-segmark",     3,   97,   71, 0, 0, 12, 0, 0, 0, 0, "segmark=1 levels=4" },
    { "style-all-53",      3,   97,   71, 0, 0, 12, 0, 0, 0, 0, "lossless=1 bypass=1 reset=1 termall=1 vcausal=1 pterm=1 segmark=1" },
    { "style-all-97",      3,   97,   71, 0, 0, 12, 0, 0, 0, 0, "bypass=1 reset=1 termall=1 vcausal=1 pterm=1 segmark=1" },
    { "bypass-pterm-53",   1,  120,  120, 0, 0, 16, 0, 0, 0, 0, "lossless=1 bypass=1 pterm=1 levels=3" },
    /* BYPASS on the column-parallel tier-1 (blocks of at most 1,024 samples): the raw passes
     * packed by the modelling warp, per stage (check_t1) and end to end; 64 x 16: two columns
     * per lane (t1p_model_warp<2>); a budget: the early stop's schedule */
    { "bypass-32-97",      3,  301,  203, 0, 0, 12, 0, 0, 0, 0, "bypass=1 cblk=32x32 levels=4 bytes=60000" },
    { "bypass-64x16-97",   3,  301,  203, 0, 0, 12, 0, 0, 0, 0, "bypass=1 cblk=64x16 levels=4" },
    { "style-all-32-53",   3,  301,  203, 0, 0, 12, 0, 0, 0, 0, "lossless=1 bypass=1 reset=1 termall=1 vcausal=1 pterm=1 segmark=1 cblk=32x32 levels=4" },
    { "layers-bytes",      3,  256,  192, 0, 0,  8, 0, 0, 0, 0, "layers=3 bytes=20000" },
    /* precincts without code-blocks (84 of 5,736 here) under rate control: their empty packets
     * cost bytes (1 each, 9 with SOP and EPH) that the GPU's sizing must count (e9832af) */
    { "empty-prec-97",     3,  301,  203, 3, 5, 12, 0, 0, 4, 0, "tiles=64x48+1+2 levels=4 prec=8x8 cblk=4x4 sop=1 eph=1 layers=2 bytes=200000" },
    /* qstep_try (planes predicted per frame, j2ki_quant_predict): the tried steps kept (0.3
     * bit/sample: 1 plane more predicted), coded once (7.9 bit/sample: none predicted), the
     * default on 12 bits at 0.81 (3 planes more predicted, K = 1 + 3), and coded again: a flat
     * frame at 200 bytes, whose integers predict 1 plane more (the estimate overrates flat
     * content) but whose codestream then stays under the budget; try-kept / try-once /
     * try-again assert the path the reference backend took (j2kc_encoder_stats) */
    { "try-kept-97",       3,  256,  192, 0, 0,  8, 0, 0, 0, 0, "levels=5 bytes=5530 qstep_try=1" },
    { "try-once-97",       3,  256,  192, 0, 0,  8, 0, 0, 0, 0, "levels=5 bytes=145000 qstep_try=5" },
    { "try-again-97",      3,  256,  192, 0, 0,  8, 0, 0, 0, 0, "levels=5 bytes=200 qstep_try=5", 1 },
    { "try-12bit-97",      3,  640,  360, 0, 0, 12, 0, 0, 0, 0, "levels=5 cblk=32x32 bytes=70000" },
    /* coded again with the column-parallel tier-1 */
    { "try-again-32-97",   3,  256,  192, 0, 0,  8, 0, 0, 0, 0, "levels=5 cblk=32x32 bytes=200 qstep_try=5", 1 },
    { "hd-97",             3, 1920, 1080, 0, 0, 10, 0, 0, 6, 0, "levels=5" },
    { "hd-53",             3, 1920, 1080, 0, 0,  8, 0, 0, 0, 0, "lossless=1 levels=5" },
    /* 8 x 512 blocks clipped to 350 rows: 88 stripes (the column-parallel tier-1's words at
     * ws = max_w: 11 KB for the thread block's 4 warps) */
    { "cblk-8x512-tall",   1,   40,  700, 0, 0,  8, 0, 0, 0, 0, "cblk=8x512 levels=1 lossless=1" },
    /* 128 x 8 blocks: two groups of 64 columns per stripe (t1p_model_warp) */
    { "cblk-128x8",        1,  300,   40, 0, 0,  8, 0, 0, 0, 0, "cblk=128x8 levels=2" },
    /* every legal code-block shape on the column-parallel tier-1: wide ones in groups of 64
     * columns, tall ones with many stripes, every style, BYPASS under a budget (the early stop),
     * 16-bit lossless at 64 x 64 */
    { "cblk-128x32-97",    3,  301,  203, 0, 0, 12, 0, 0, 0, 0, "cblk=128x32 levels=3" },
    { "cblk-32x128-53",    3,  301,  203, 0, 0, 12, 0, 0, 0, 0, "lossless=1 cblk=32x128 levels=3" },
    { "cblk-64x32-97",     3,  301,  203, 0, 0, 10, 0, 0, 0, 0, "cblk=64x32 levels=4 vcausal=1" },
    { "cblk-256x16-all",   3,  520,  130, 0, 0, 12, 0, 0, 0, 0, "bypass=1 reset=1 termall=1 vcausal=1 pterm=1 segmark=1 cblk=256x16 levels=2" },
    { "cblk-16x256-97",    1,  130,  520, 0, 0, 12, 0, 0, 0, 0, "cblk=16x256 levels=2 segmark=1" },
    { "cblk-512x8-bypass", 1, 1100,   40, 0, 0, 12, 0, 0, 0, 0, "bypass=1 cblk=512x8 levels=1 bytes=20000" },
    { "cblk-1024x4-53",    1, 2100,   20, 0, 0, 16, 0, 0, 0, 0, "lossless=1 cblk=1024x4 levels=1" },
    { "cblk-4x1024-53",    1,   20, 2100, 0, 0, 16, 0, 0, 0, 0, "lossless=1 cblk=4x1024 levels=1 reset=1" },
    { "cblk-64-16bit-53",  1,  300,  200, 0, 0, 16, 0, 0, 0, 0, "lossless=1 levels=3" },
    { "bypass-64-budget",  3,  301,  203, 0, 0, 12, 0, 0, 0, 0, "bypass=1 levels=4 bytes=60000" },
    /* the HT block coder (ht=1, cuda/ht_cuda.h): the plane chooser under a budget, lossless
     * 5/3, 4:2:2 10-bit, 12-bit 4:4:4, code-block shapes, layers, per-component caps, tiles,
     * 1-bit and 16-bit samples, qstep_try's two codings; check_ht per stage, then end to end */
    { "ht-97-bytes",       3,  301,  203, 0, 0, 12, 0, 0, 0, 0, "ht=1 levels=4 bytes=60000" },
    { "ht-53",             3,  301,  203, 3, 5, 10, 0, 0, 0, 0, "ht=1 lossless=1 levels=5" },
    { "ht-97-full",        3,  160,   90, 0, 0,  8, 0, 0, 0, 0, "ht=1 levels=4" },
    { "ht-422-10bit-53",   3,  640,  360, 0, 0, 10, 0, 1, 6, 0, "ht=1 lossless=1 levels=5 mct=0" },
    { "ht-422-10bit-97",   3,  640,  360, 0, 0, 10, 0, 1, 6, 0, "ht=1 levels=5 mct=0 bytes=90000" },
    { "ht-444-12bit-97",   3,  640,  360, 0, 0, 12, 0, 0, 0, 0, "ht=1 levels=5 bytes=70000" },
    { "ht-32x32-97",       3,  301,  203, 0, 0, 12, 0, 0, 0, 0, "ht=1 cblk=32x32 levels=4 bytes=40000" },
    { "ht-128x32-53",      3,  301,  203, 0, 0, 12, 0, 0, 0, 0, "ht=1 lossless=1 cblk=128x32 levels=3" },
    { "ht-1024x4-97",      1, 2100,   20, 0, 0, 12, 0, 0, 0, 0, "ht=1 cblk=1024x4 levels=1 bytes=20000" },
    { "ht-4x1024-53",      1,   20, 2100, 0, 0, 16, 0, 0, 0, 0, "ht=1 lossless=1 cblk=4x1024 levels=1" },
    { "ht-4x4-97",         1,   45,   33, 0, 0,  8, 0, 0, 0, 0, "ht=1 cblk=4x4 levels=3 bytes=900" },
    { "ht-layers",         3,  256,  192, 0, 0,  8, 0, 0, 0, 0, "ht=1 layers=3 bytes=20000" },
    { "ht-comp-bytes",     3,  256,  192, 0, 0, 12, 0, 0, 0, 0, "ht=1 tile_parts=C comp_bytes=6000 bytes=15000 levels=4" },
    { "ht-tiles-97",       3,  301,  203, 3, 5, 12, 0, 0, 4, 0, "ht=1 tiles=64x48+1+2 levels=4 bytes=50000" },
    { "ht-1bit-53",        1,  130,   66, 0, 0,  1, 0, 0, 0, 0, "ht=1 lossless=1 levels=3" },
    { "ht-signed16-97",    2,  130,   66, 0, 0, 16, 1, 0, 0, 0, "ht=1 levels=5 mct=0 bytes=12000" },
    { "ht-16bit-53",       1,  300,  200, 0, 0, 16, 0, 0, 0, 0, "ht=1 lossless=1 levels=3" },
    { "ht-try-97",         3,  256,  192, 0, 0,  8, 0, 0, 0, 0, "ht=1 levels=5 bytes=5530 qstep_try=1" },
    { "ht-cleanup-97",     3,  301,  203, 0, 0, 12, 0, 0, 0, 0, "ht=1 ht_refine=0 levels=4 bytes=50000" },
    { "ht-cleanup-422-53", 3,  640,  360, 0, 0, 10, 0, 1, 6, 0, "ht=1 ht_refine=0 lossless=1 levels=5 mct=0" },
    { "ht-try-again-97",   3,  256,  192, 0, 0,  8, 0, 0, 0, 0, "ht=1 levels=5 bytes=200 qstep_try=5", 1 },
};

static int verbose;
/* the library's test hooks (hooks.h), read once as an encoder reads them: the stage checks
 * call tier-1 with the variant and shared-memory limit the end-to-end encoders get */
static J2kiHooks g_hooks;

static void log_cb(void *opaque, int level, const char *msg)
{
    (void)opaque;
    if (level <= J2KC_LOG_WARNING || verbose)
        fprintf(stderr, "  [log %d] %s\n", level, msg);
}

/* ---- frames ---- */

typedef struct Frame {
    uint8_t *buf[J2KC_MAX_COMPS];     /* host planes (packed: buf[0] holds all) */
    void    *d_buf[J2KC_MAX_COMPS];
    size_t   size[J2KC_MAX_COMPS];
    J2kcFrame f, fd;                  /* host and device views */
} Frame;

static void comp_size(const J2kcImageDesc *img, int c, uint32_t *w, uint32_t *h)
{
    *w = j2ki_ceil_div(img->x0 + img->width, (uint32_t)img->dx[c]) - j2ki_ceil_div(img->x0, (uint32_t)img->dx[c]);
    *h = j2ki_ceil_div(img->y0 + img->height, (uint32_t)img->dy[c]) - j2ki_ceil_div(img->y0, (uint32_t)img->dy[c]);
}

/* Smooth gradients + texture + noise with flat and saturated regions: every pass type,
 * empty code-blocks and full-range samples occur. */
static uint32_t sample_value(uint32_t x, uint32_t y, int c, int depth, uint32_t kind)
{
    uint32_t maxv = (1u << depth) - 1;
    double v;
    switch (kind % 4) {
    case 0: v = 0.5 + 0.4 * sin(x * 0.05 + c) * cos(y * 0.07); break;                  /* smooth */
    case 1: v = ((x / 8 + y / 8 + c) & 1) ? 0.9 : 0.1; break;                         /* blocks */
    case 2: v = 0.5; break;                                                           /* flat */
    default: v = (test_rand() & 0xFFFF) / 65535.0; break;                             /* noise */
    }
    v += ((int)(test_rand() & 15) - 8) / 512.0;
    if (v < 0) v = 0;
    if (v > 1) v = 1;
    return (uint32_t)(v * maxv + 0.5);
}

static void frame_make(Frame *fr, const J2kcImageDesc *img, const Cfg *cfg)
{
    int bps = img->depth[0] <= 8 ? 1 : 2;
    memset(fr, 0, sizeof(*fr));
    if (cfg->packed) {
        uint32_t w, h;
        comp_size(img, 0, &w, &h);
        size_t stride = (size_t)w * 3 * bps + 5;         /* odd padding: strides need not align */
        fr->size[0] = stride * h;
        fr->buf[0] = (uint8_t *)malloc(fr->size[0]);
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++)
                for (int c = 0; c < 3; c++) {
                    uint32_t v = sample_value(x, y, c, img->depth[c], (x / 32 + y / 32) & 3) << cfg->shift;
                    int pos = cfg->packed == 2 ? 2 - c : c;
                    uint8_t *p = fr->buf[0] + y * stride + ((size_t)x * 3 + pos) * bps;
                    if (bps == 1) *p = (uint8_t)v; else { uint16_t u = (uint16_t)v; memcpy(p, &u, 2); }
                }
        for (int c = 0; c < 3; c++) {
            fr->f.data[c] = fr->buf[0] + (cfg->packed == 2 ? 2 - c : c) * bps;
            fr->f.stride[c] = (ptrdiff_t)stride;
            fr->f.step[c] = 3;
            fr->f.shift[c] = cfg->shift;
        }
    } else {
        for (int c = 0; c < img->nb_comps; c++) {
            uint32_t w, h;
            comp_size(img, c, &w, &h);
            size_t stride = (size_t)w * bps + (c & 1) * 2 + 2;
            fr->size[c] = stride * h + 1;
            fr->buf[c] = (uint8_t *)calloc(fr->size[c], 1);
            for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++) {
                    uint32_t v = cfg->flat ? (uint32_t)((0.3 + 0.1 * c) * ((1u << img->depth[c]) - 1) + 0.5)
                                           : sample_value(x, y, c, img->depth[c], (x / 24 + y / 40 + c) & 3);
                    uint8_t *p = fr->buf[c] + y * stride + (size_t)x * bps;
                    if (img->is_signed[c])
                        v = (uint32_t)((int32_t)v - (1 << (img->depth[c] - 1)));
                    v <<= cfg->shift;
                    if (bps == 1) *p = (uint8_t)v; else { uint16_t u = (uint16_t)v; memcpy(p, &u, 2); }
                }
            fr->f.data[c] = fr->buf[c];
            fr->f.stride[c] = (ptrdiff_t)stride;
            fr->f.step[c] = 1;
            fr->f.shift[c] = cfg->shift;
        }
    }
    fr->f.mem = J2KC_MEM_HOST;
    fr->fd = fr->f;
    fr->fd.mem = J2KC_MEM_CUDA;
    for (int c = 0; c < J2KC_MAX_COMPS; c++) {
        if (!fr->buf[c])
            continue;
        CKD(j2ki_cuda_malloc((void **)&fr->d_buf[c], fr->size[c]));
        CK(cudaMemcpy(fr->d_buf[c], fr->buf[c], fr->size[c], cudaMemcpyHostToDevice));
    }
    for (int c = 0; c < img->nb_comps; c++) {
        int owner = cfg->packed ? 0 : c;
        fr->fd.data[c] = (const uint8_t *)fr->d_buf[owner] + ((const uint8_t *)fr->f.data[c] - fr->buf[owner]);
    }
}

static void frame_free(Frame *fr)
{
    for (int c = 0; c < J2KC_MAX_COMPS; c++) {
        free(fr->buf[c]);
        if (fr->d_buf[c])
            cudaFree(fr->d_buf[c]);
    }
}

/* ---- mismatch location ---- */

static void report_sample(const char *cfg, const char *stage, const J2kiPlan *plan, int spatial,
                          size_t off, uint32_t ref, uint32_t got)
{
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < plan->cp->img.nb_comps; c++) {
            const J2kiTileComp *tc = &plan->tiles[t].comps[c];
            if (off < tc->buf_offset || off >= tc->buf_offset + (size_t)tc->w * tc->h)
                continue;
            uint32_t bx = (uint32_t)((off - tc->buf_offset) % tc->w), by = (uint32_t)((off - tc->buf_offset) / tc->w);
            if (spatial) {
                printf("FAIL %s %s: first mismatch (comp %d, res %d, band -1, x %u, y %u) tile %u: ref 0x%08x cuda 0x%08x\n",
                       cfg, stage, c, tc->nb_res - 1, tc->x0 + bx, tc->y0 + by, t, ref, got);
                return;
            }
            for (int r = 0; r < tc->nb_res; r++)
                for (int k = 0; k < tc->res[r].nb_bands; k++) {
                    const J2kiBand *b = &plan->bands[tc->res[r].first_band + k];
                    if (bx >= b->buf_x0 && bx < b->buf_x0 + (b->x1 - b->x0) && by >= b->buf_y0 &&
                        by < b->buf_y0 + (b->y1 - b->y0)) {
                        printf("FAIL %s %s: first mismatch (comp %d, res %d, band %d, x %u, y %u) tile %u: ref 0x%08x cuda 0x%08x\n",
                               cfg, stage, c, r, b->orient, b->x0 + bx - b->buf_x0, b->y0 + by - b->buf_y0, t, ref, got);
                        return;
                    }
                }
            printf("FAIL %s %s: first mismatch at buffer (%u, %u) of tile %u comp %d (in no band)\n", cfg, stage, bx, by, t, c);
            return;
        }
    printf("FAIL %s %s: first mismatch at sample %zu (outside every tile-component)\n", cfg, stage, off);
}

static int compare_samples(const char *cfg, const char *stage, const J2kiPlan *plan, int spatial,
                           const uint32_t *ref, const uint32_t *got)
{
    size_t n = plan->nb_samples, bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (ref[i] != got[i] && !bad++)
            first = i;
    test_checks++;
    if (bad) {
        test_failures++;
        report_sample(cfg, stage, plan, spatial, first, ref[first], got[first]);
        printf("     %zu of %zu samples differ\n", bad, n);
        return 0;
    }
    return 1;
}

/* ---- reference stages (the order of backend_ref.c) ---- */

static void ref_load_mct(const J2kiCodingParams *cp, const J2kiPlan *plan, const J2kcFrame *f, int32_t *s)
{
    const J2kcImageDesc *img = &cp->img;
    for (uint32_t t = 0; t < plan->nb_tiles; t++) {
        const J2kiTile *tile = &plan->tiles[t];
        for (int c = 0; c < img->nb_comps; c++) {
            const J2kiTileComp *tc = &tile->comps[c];
            uint32_t cx0 = j2ki_ceil_div(img->x0, (uint32_t)img->dx[c]);
            uint32_t cy0 = j2ki_ceil_div(img->y0, (uint32_t)img->dy[c]);
            j2ki_load_comp_ref(s + tc->buf_offset, tc->w, tc->h, f, c, tc->x0 - cx0, tc->y0 - cy0,
                               img->depth[c], img->is_signed[c]);
        }
        if (cp->mct) {
            size_t n = (size_t)tile->comps[0].w * tile->comps[0].h;
            int32_t *c0 = s + tile->comps[0].buf_offset, *c1 = s + tile->comps[1].buf_offset,
                    *c2 = s + tile->comps[2].buf_offset;
            if (cp->reversible) {
                j2ki_rct_fwd_ref(c0, c1, c2, n);
            } else {
                j2ki_int_to_float_ref(c0, n);
                j2ki_int_to_float_ref(c1, n);
                j2ki_int_to_float_ref(c2, n);
                j2ki_ict_fwd_ref((float *)c0, (float *)c1, (float *)c2, n);
            }
        }
        if (!cp->reversible)
            for (int c = cp->mct ? 3 : 0; c < img->nb_comps; c++)
                j2ki_int_to_float_ref(s + tile->comps[c].buf_offset, (size_t)tile->comps[c].w * tile->comps[c].h);
    }
}

static void ref_dwt(const J2kiCodingParams *cp, const J2kiPlan *plan, int32_t *s, void *scratch)
{
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < cp->img.nb_comps; c++) {
            const J2kiTileComp *tc = &plan->tiles[t].comps[c];
            if (cp->reversible)
                j2ki_dwt53_fwd_ref(s + tc->buf_offset, tc->w, tc->x0, tc->y0, tc->x1, tc->y1, cp->nb_levels, scratch);
            else
                j2ki_dwt97_fwd_ref((float *)(s + tc->buf_offset), tc->w, tc->x0, tc->y0, tc->x1, tc->y1,
                                   cp->nb_levels, scratch);
        }
}

static void ref_quant(const J2kiCodingParams *cp, const J2kiPlan *plan, int32_t *s)
{
    if (cp->reversible)
        return;
    for (uint32_t b = 0; b < plan->nb_bands; b++) {
        const J2kiBand *band = &plan->bands[b];
        const J2kiTileComp *tc = &plan->tiles[band->tile].comps[band->comp];
        uint32_t w = band->x1 - band->x0, h = band->y1 - band->y0;
        if (w && h)
            j2ki_quant_fwd_ref(s + tc->buf_offset + (size_t)band->buf_y0 * tc->w + band->buf_x0, tc->w, w, h,
                               band->inv_step, band->nb_mag_bits, band->frac_bits);
    }
}

/* ---- the CUDA stages (the order of backend_cuda.cu) on device frame planes ---- */

static J2kiLoadSrc dev_src(const J2kiCodingParams *cp, const J2kcFrame *fd, int c, const J2kiTileComp *tc)
{
    J2kiLoadSrc l;
    uint32_t ox = tc->x0 - j2ki_ceil_div(cp->img.x0, (uint32_t)cp->img.dx[c]);
    uint32_t oy = tc->y0 - j2ki_ceil_div(cp->img.y0, (uint32_t)cp->img.dy[c]);
    l.bytes = cp->img.depth[c] <= 8 ? 1 : 2;
    l.step = fd->step[c] > 1 ? fd->step[c] : 1;
    l.stride = fd->stride[c];
    l.shift = fd->shift[c];
    l.depth = cp->img.depth[c];
    l.is_signed = cp->img.is_signed[c];
    l.d_data = (const uint8_t *)fd->data[c] + (ptrdiff_t)oy * fd->stride[c] + (ptrdiff_t)ox * l.step * l.bytes;
    return l;
}

static void cuda_load_mct(const J2kiCodingParams *cp, const J2kiPlan *plan, const J2kcFrame *fd, uint32_t *d_s)
{
    for (uint32_t t = 0; t < plan->nb_tiles; t++) {
        const J2kiTile *tile = &plan->tiles[t];
        int c = 0;
        J2kiLoadSrc src[3];
        void *dst[3];
        if (cp->mct && cp->img.nb_comps >= 3) {
            for (int k = 0; k < 3; k++) {
                src[k] = dev_src(cp, fd, k, &tile->comps[k]);
                dst[k] = d_s + tile->comps[k].buf_offset;
            }
            CKD(j2ki_load_mct_cuda(dst, src, 3, tile->comps[0].w, tile->comps[0].h,
                                  cp->reversible ? J2KI_LOAD_RCT : J2KI_LOAD_ICT, 0));
            c = 3;
        }
        for (; c < cp->img.nb_comps; c++) {
            src[0] = dev_src(cp, fd, c, &tile->comps[c]);
            dst[0] = d_s + tile->comps[c].buf_offset;
            CKD(j2ki_load_mct_cuda(dst, src, 1, tile->comps[c].w, tile->comps[c].h,
                                  cp->reversible ? J2KI_LOAD_INT : J2KI_LOAD_FLOAT, 0));
        }
    }
}

static void cuda_dwt(const J2kiCodingParams *cp, const J2kiPlan *plan, uint32_t *d_s, void *d_tmp)
{
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < cp->img.nb_comps; c++) {
            const J2kiTileComp *tc = &plan->tiles[t].comps[c];
            if (cp->reversible)
                CKD(j2ki_dwt53_fwd_cuda((int32_t *)(d_s + tc->buf_offset), tc->w, tc->x0, tc->y0, tc->x1, tc->y1,
                                       cp->nb_levels, d_tmp, 0));
            else
                CKD(j2ki_dwt97_fwd_cuda((float *)(d_s + tc->buf_offset), tc->w, tc->x0, tc->y0, tc->x1, tc->y1,
                                       cp->nb_levels, d_tmp, 0));
        }
}

/* ---- one configuration ---- */

static int make_params(const Cfg *cfg, J2kcParams **out, const char *extra)
{
    J2kcParams *p = j2kc_params_alloc();
    char buf[512], *save = NULL;
    j2kc_params_set_log(p, log_cb, NULL, J2KC_LOG_DEBUG);
    snprintf(buf, sizeof(buf), "%s %s", cfg->params, extra ? extra : "");
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = 0;
        if (j2kc_params_set(p, tok, eq + 1) < 0) {
            printf("FAIL %s: parameter %s=%s refused\n", cfg->name, tok, eq + 1);
            j2kc_params_free(&p);
            return -1;
        }
    }
    *out = p;
    return 0;
}

static void image_desc(const Cfg *cfg, J2kcImageDesc *img)
{
    memset(img, 0, sizeof(*img));
    img->nb_comps = cfg->nb_comps;
    img->width = (uint32_t)cfg->w;
    img->height = (uint32_t)cfg->h;
    img->x0 = (uint32_t)cfg->x0;
    img->y0 = (uint32_t)cfg->y0;
    for (int c = 0; c < cfg->nb_comps; c++) {
        img->depth[c] = cfg->depth;
        img->is_signed[c] = cfg->is_signed;
        img->dx[c] = (cfg->dx1 && (c == 1 || c == 2)) ? 2 : 1;
        img->dy[c] = (cfg->dx1 == 2 && (c == 1 || c == 2)) ? 2 : 1;
    }
}

/* Tier-1: reference per code-block vs the CUDA kernel over the whole frame. stop_pct > 0:
 * with the early stop (t1_stop.h) at a budget of stop_pct % of the bytes of every pass: the
 * reference codes every block, replays the decisions (j2ki_t1s_plan_pool) and codes the
 * stopped blocks again; the device's limits must be the same, and so every pass and byte. */
/* The code-block table the tier-1 kernels read (as the backend's build_cblks lays it out): each
 * block's bytes 16-aligned, its passes max_passes long; *data_size and *nb_passes in all. */
static J2kiCblkDev *t1_table(const J2kiCodingParams *cp, const J2kiPlan *plan, size_t *data_size, size_t *nb_passes)
{
    uint32_t n = plan->nb_cblks;
    J2kiCblkDev *h = (J2kiCblkDev *)calloc(n ? n : 1, sizeof(*h));
    size_t data_off = 0, pass_off = 0;
    for (uint32_t i = 0; i < n; i++) {
        const J2kiCblk *cb = &plan->cblks[i];
        const J2kiBand *band = &plan->bands[cb->band_idx];
        const J2kiTileComp *tc = &plan->tiles[band->tile].comps[band->comp];
        h[i].buf = tc->buf_offset + (uint64_t)(band->buf_y0 + cb->y0 - band->y0) * tc->w + band->buf_x0 + cb->x0 - band->x0;
        h[i].stride = tc->w;
        h[i].w = (uint16_t)(cb->x1 - cb->x0);
        h[i].h = (uint16_t)(cb->y1 - cb->y0);
        h[i].orient = (uint8_t)band->orient;
        h[i].nb_mag_bits = (uint8_t)band->nb_mag_bits;
        h[i].frac_bits = (uint8_t)band->frac_bits;
        h[i].inv_step = cp->reversible ? 0.0f : band->inv_step;
        h[i].data_off = data_off;
        h[i].data_cap = cb->data_cap;
        h[i].pass_off = (uint32_t)pass_off;
        h[i].max_passes = (uint16_t)cb->max_passes;
        data_off += (cb->data_cap + 15u) & ~(size_t)15;
        pass_off += (size_t)cb->max_passes;
    }
    *data_size = data_off;
    *nb_passes = pass_off;
    return h;
}

/* Compares the device's tier-1 results of every code-block with the reference's (plan->cblks,
 * rret; hlim: the early stop's limits, whose last pass may keep another est); prints the first
 * mismatch (frame: "" or " frame k"); returns 1 when one was found. */
static int t1_compare(const Cfg *cfg, const char *frame, J2kiPlan *plan, const J2kiCblkDev *h, const int *rret,
                      const uint32_t *hlim, const uint8_t *g_data, const J2kiPass *g_passes,
                      const J2kiCblkRes *g_res, size_t *total_bytes, size_t *total_passes)
{
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        J2kiCblk *cb = &plan->cblks[i];
        const J2kiBand *band = &plan->bands[cb->band_idx];
        int ret = rret[i];
        const J2kiCblkRes *r = &g_res[i];
        const J2kiPass *gp = g_passes + h[i].pass_off;
        const char *what = NULL;
        int pi = -1;
        if (ret < 0 || r->err) {
            what = "error";
        } else if (r->numbps != cb->numbps) {
            what = "numbps";
        } else if (r->nb_passes != cb->nb_passes) {
            what = "nb_passes";
        } else {
            for (int k = 0; k < cb->nb_passes && !what; k++) {
                if (gp[k].rate != cb->passes[k].rate) what = "pass rate";
                else if (memcmp(&gp[k].dist, &cb->passes[k].dist, sizeof(double))) what = "pass dist";
                else if (gp[k].term != cb->passes[k].term) what = "pass term";
                /* est is causal; a stopped block's last pass keeps on the device the value the
                 * decisions saw (the block went on), the reference's ends there */
                else if (gp[k].est != cb->passes[k].est && !(hlim[i] && k == cb->nb_passes - 1)) what = "pass est";
                pi = k;
            }
            if (!what && cb->nb_passes) {
                uint32_t len = cb->passes[cb->nb_passes - 1].rate;
                if (r->len != len) what = "length";
                else if (memcmp(g_data + h[i].data_off, cb->data, len)) what = "bytes";
                *total_bytes += len;
                *total_passes += (size_t)cb->nb_passes;
            }
        }
        if (what) {
            printf("FAIL %s tier-1%s: code-block %u (comp %d, res %d, band %d, x %u, y %u) differs in %s"
                   " (pass %d; ref ret %d numbps %d passes %d; cuda err %d numbps %d passes %d)\n",
                   cfg->name, frame, i, band->comp, band->res, band->orient, cb->x0, cb->y0, what, pi, ret,
                   cb->numbps, cb->nb_passes, r->err, r->numbps, r->nb_passes);
            return 1;
        }
    }
    return 0;
}

/* Every code-block's band dist_weight on the device (the early stop's J2kiT1StopDev.d_weight). */
static double *t1_weights_dev(const J2kiPlan *plan)
{
    const uint32_t n = plan->nb_cblks;
    double *w = (double *)malloc((n ? n : 1) * sizeof(double)), *d_w;
    for (uint32_t i = 0; i < n; i++)
        w[i] = plan->bands[plan->cblks[i].band_idx].dist_weight;
    CKD(j2ki_cuda_malloc((void **)&d_w, (n ? n : 1) * sizeof(double)));
    CK(cudaMemcpy(d_w, w, n * sizeof(double), cudaMemcpyHostToDevice));
    free(w);
    return d_w;
}

/* The reference tier-1 of samples s, every block fully (plan->cblks, rret: each block's return);
 * returns the frame's bytes with every pass. */
static uint64_t t1_ref_full(const J2kiCodingParams *cp, J2kiPlan *plan, J2kiT1 *t1, const J2kiCblkDev *h,
                            const int32_t *s, int *rret)
{
    uint64_t full = 0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        J2kiCblk *cb = &plan->cblks[i];
        const J2kiBand *band = &plan->bands[cb->band_idx];
        const J2kiTileComp *tc = &plan->tiles[band->tile].comps[band->comp];
        rret[i] = j2ki_t1_encode_cblk_ref(t1, s + h[i].buf, tc->w, h[i].w, h[i].h, band->orient, cp->cblk_style,
                                          cp->bypass_start, band->nb_mag_bits, band->frac_bits, cb);
        if (rret[i] == 0 && cb->nb_passes)
            full += cb->passes[cb->nb_passes - 1].rate;
    }
    return full;
}

/* The early stop's reference after t1_ref_full: the host's replay of the decisions at budget
 * (hlim), then the stopped blocks coded again up to their limit. Returns the blocks stopped, or
 * -1 when the replay failed. */
static int t1_ref_stop(const J2kiCodingParams *cp, J2kiPlan *plan, J2kiT1 *t1, const J2kiCblkDev *h,
                       const int32_t *s, uint64_t budget, uint32_t *hlim, int *rret)
{
    int nb = 0, ret;
    /* on the calling thread (no pool), as the reference backend with one thread */
    void *work = malloc(j2ki_t1s_pool_scratch_size(plan, 1));
    ret = j2ki_t1s_plan_pool(plan, budget, hlim, work, NULL);
    free(work);
    if (ret < 0)
        return -1;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        J2kiCblk *cb = &plan->cblks[i];
        const J2kiBand *band = &plan->bands[cb->band_idx];
        const J2kiTileComp *tc = &plan->tiles[band->tile].comps[band->comp];
        if (!hlim[i])
            continue;
        nb++;
        rret[i] = j2ki_t1_encode_cblk_ref_lim(t1, s + h[i].buf, tc->w, h[i].w, h[i].h, band->orient, cp->cblk_style,
                                              cp->bypass_start, band->nb_mag_bits, band->frac_bits, cb, (int)hlim[i]);
    }
    return nb;
}

/* The device's early-stop limits (glim) against the reference's (hlim); prints the first
 * difference; returns 1 when there is one. */
static int t1_compare_limits(const Cfg *cfg, const char *frame, const J2kiPlan *plan, const uint32_t *glim,
                             const uint32_t *hlim)
{
    for (uint32_t i = 0; i < plan->nb_cblks; i++)
        if (glim[i] != hlim[i]) {
            const J2kiCblk *cb = &plan->cblks[i];
            const J2kiBand *band = &plan->bands[cb->band_idx];
            printf("FAIL %s tier-1%s stop: code-block %u (comp %d, res %d, band %d, x %u, y %u): limit %u, "
                   "reference %u\n", cfg->name, frame, i, band->comp, band->res, band->orient, cb->x0, cb->y0,
                   glim[i], hlim[i]);
            return 1;
        }
    return 0;
}

/* The HT block coder (ht=1): the reference's plane choice and sets (ref/ht_plane.c,
 * ref/ht_ref.c, one thread) against j2ki_ht_cuda on the same quantised samples, block by
 * block; then with a 2-byte buffer for the largest block, which must fail alike. */
static void check_ht(const Cfg *cfg, const J2kiCodingParams *cp, J2kiPlan *plan, const int32_t *s, uint32_t *d_s)
{
    uint32_t n = plan->nb_cblks;
    size_t data_off, pass_off;
    J2kiCblkDev *h = t1_table(cp, plan, &data_off, &pass_off), *d_cb;
    const int budget = cp->rc_mode == J2KI_RC_BYTES && cp->frame_bytes != 0;
    const int64_t target32 = budget ? j2ki_ht_plane_target32(cp->frame_bytes, j2ki_ht_plane_fixed_bytes(plan), n) : 0;
    uint8_t *d_data;
    J2kiPass *d_passes;
    J2kiCblkRes *d_res;
    uint32_t *d_flag, flag = 0;
    void *d_scratch;
    const size_t ss = j2ki_ht_cuda_scratch_size(n);
    double *d_w = t1_weights_dev(plan);
    CKD(j2ki_cuda_malloc((void **)&d_cb, (n ? n : 1) * sizeof(*h)));
    CK(cudaMemcpy(d_cb, h, n * sizeof(*h), cudaMemcpyHostToDevice));
    CKD(j2ki_cuda_malloc((void **)&d_data, data_off + 1));
    CKD(j2ki_cuda_malloc((void **)&d_passes, (pass_off + 1) * sizeof(J2kiPass)));
    CKD(j2ki_cuda_malloc((void **)&d_res, (n + 1) * sizeof(J2kiCblkRes)));
    CKD(j2ki_cuda_malloc((void **)&d_flag, 4));
    CKD(j2ki_cuda_malloc((void **)&d_scratch, ss));

    /* the reference */
    J2kiPool *pool = j2ki_pool_new(1);
    void *work = malloc(j2ki_ht_planes_scratch_size(plan));
    uint8_t *p = (uint8_t *)calloc(n ? n : 1, 1);
    int *rret = (int *)calloc(n ? n : 1, sizeof(int));
    uint32_t *hlim = (uint32_t *)calloc(n ? n : 1, sizeof(uint32_t));
    J2kiHt *ht = j2ki_ht_alloc();
    uint32_t planes_above0 = 0;
    j2ki_ht_planes_ref(plan, s, pool, work, p);
    for (uint32_t i = 0; i < n; i++) {
        J2kiCblk *cb = &plan->cblks[i];
        const J2kiBand *band = &plan->bands[cb->band_idx];
        rret[i] = j2ki_ht_encode_cblk_ref(ht, s + h[i].buf, h[i].stride, h[i].w, h[i].h, band->nb_mag_bits,
                                          band->frac_bits, p[i], cp->ht_refine, cb);
        planes_above0 += p[i] > 0 && cb->nb_passes > 0;
    }
    j2ki_ht_free(&ht);
    j2ki_pool_free(&pool);

    CK(cudaMemset(d_flag, 0, 4));
    CK(cudaMemset(d_data, 0xA5, data_off + 1));
    CK(cudaMemcpy(d_s, s, plan->nb_samples * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    float ms = 0;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0, 0));
    CKD(j2ki_ht_cuda(d_s, d_cb, d_w, n, budget, target32, cp->ht_refine, d_data, d_passes, d_res, d_flag, d_scratch, ss, 0));
    CK(cudaEventRecord(e1, 0));
    CK(cudaDeviceSynchronize());
    CK(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    uint8_t *g_data = (uint8_t *)malloc(data_off + 1);
    J2kiPass *g_passes = (J2kiPass *)malloc((pass_off + 1) * sizeof(J2kiPass));
    J2kiCblkRes *g_res = (J2kiCblkRes *)malloc((n + 1) * sizeof(J2kiCblkRes));
    CK(cudaMemcpy(g_data, d_data, data_off + 1, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g_passes, d_passes, (pass_off + 1) * sizeof(J2kiPass), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g_res, d_res, (n + 1) * sizeof(J2kiCblkRes), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&flag, d_flag, 4, cudaMemcpyDeviceToHost));
    size_t total_bytes = 0, total_passes = 0;
    /* with a budget, the chooser's per-block state first: where the bytes differ, this says which
     * step (statistics, measured sets) did */
    int bad = 0;
    if (budget && n) {
        std::vector<J2kiHtPlaneStat> gst(n);
        const J2kiHtPlaneStat *rst = (const J2kiHtPlaneStat *)work;
        CK(cudaMemcpy(gst.data(), j2ki_ht_cuda_stats(d_scratch), n * sizeof(J2kiHtPlaneStat), cudaMemcpyDeviceToHost));
        for (uint32_t i = 0; i < n && !bad; i++) {
            const J2kiHtPlaneStat *a = &gst[i], *r = &rst[i];
            const char *what = NULL;
            if (a->top != r->top || a->lo != r->lo || a->hi != r->hi || a->refine != r->refine ||
                a->exact != r->exact)
                what = "top / measured planes";
            for (int b = 0; !what && b < r->top; b++)
                if (a->q4[b] != r->q4[b] || memcmp(&a->dist[b], &r->dist[b], sizeof(double)))
                    what = b >= r->lo && b <= r->hi ? "measured cleanup bytes"
                         : r->exact >> b & 1u ? "cleanup bytes of an earlier round" : "model statistics";
            for (int b = r->lo; !what && b <= r->hi; b++)
                if (memcmp(a->rate[b - r->lo], r->rate[b - r->lo], sizeof(a->rate[0])) ||
                    memcmp(a->sdist[b - r->lo], r->sdist[b - r->lo], sizeof(a->sdist[0])))
                    what = "measured sets";
            if (what) {
                printf("FAIL %s tier-1 (ht): code-block %u's plane chooser differs in its %s (top %d/%d, "
                       "measured %d..%d / %d..%d)\n", cfg->name, i, what, a->top, r->top, a->lo, a->hi, r->lo, r->hi);
                bad = 1;
            }
        }
    }
    if (!bad)
        bad = t1_compare(cfg, " (ht)", plan, h, rret, hlim, g_data, g_passes, g_res, &total_bytes, &total_passes);
    if (!bad && flag) {
        bad = 1;
        printf("FAIL %s tier-1 (ht): error flag set\n", cfg->name);
    }
    /* capacity overflow: the largest block with a 2-byte buffer fails (BUFSIZE, flag), and
     * nothing past its capacity is written */
    if (!bad && n) {
        uint32_t big = 0;
        for (uint32_t i = 1; i < n; i++)
            if (g_res[i].len > g_res[big].len)
                big = i;
        if (g_res[big].len > 2) {
            J2kiCblkDev d = h[big];
            uint8_t tail[62];
            uint32_t f2 = 0;
            J2kiCblkRes r2;
            d.data_cap = 2;
            CK(cudaMemcpy(d_cb + big, &d, sizeof(d), cudaMemcpyHostToDevice));
            CK(cudaMemset(d_flag, 0, 4));
            CK(cudaMemset(d_data + d.data_off, 0xA5, 64));
            CKD(j2ki_ht_cuda(d_s, d_cb, d_w, n, budget, target32, cp->ht_refine, d_data, d_passes, d_res, d_flag, d_scratch, ss, 0));
            CK(cudaMemcpy(&f2, d_flag, 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(&r2, d_res + big, sizeof(r2), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(tail, d_data + d.data_off + 2, sizeof(tail), cudaMemcpyDeviceToHost));
            int clean = 1;
            for (size_t k = 0; k < sizeof(tail); k++)
                clean &= tail[k] == 0xA5;
            if (!f2 || r2.err != J2KC_ERR_BUFSIZE || !clean) {
                bad = 1;
                printf("FAIL %s tier-1 (ht) overflow: flag %u err %d, bytes past the capacity %s\n", cfg->name, f2,
                       r2.err, clean ? "untouched" : "written");
            }
        }
    }
    test_checks++;
    if (bad)
        test_failures++;
    else
        printf("ok   %s tier-1 (ht%s%s): %u code-blocks (%u at planes above 0), %zu passes, %zu bytes identical "
               "(%.2f ms on the device, first run)\n", cfg->name, budget ? ", planes chosen under the budget" : "",
               cp->ht_refine ? "" : ", cleanup only", n, planes_above0, total_passes, total_bytes, ms);
    free(p); free(rret); free(hlim); free(work);
    free(g_data); free(g_passes); free(g_res); free(h);
    cudaFree(d_w);
    cudaFree(d_cb); cudaFree(d_data); cudaFree(d_passes); cudaFree(d_res); cudaFree(d_flag); cudaFree(d_scratch);
}

static void check_t1(const Cfg *cfg, const J2kiCodingParams *cp, J2kiPlan *plan, const int32_t *s, uint32_t *d_s,
                     int variant, float *ms, int stop_pct)
{
    uint32_t n = plan->nb_cblks;
    size_t data_off, pass_off;
    J2kiCblkDev *h = t1_table(cp, plan, &data_off, &pass_off);
    J2kiT1 *t1 = j2ki_t1_alloc(plan->max_cblk_w, plan->max_cblk_h);
    J2kiCblkDev *d_cb;
    uint8_t *d_data;
    J2kiPass *d_passes;
    J2kiCblkRes *d_res;
    uint32_t *d_flag, flag = 0;
    void *d_scratch;
    size_t ss = j2ki_t1_cuda_scratch_size(n, plan->max_cblk_w, plan->max_cblk_h);
    CKD(j2ki_cuda_malloc((void **)&d_cb, (n ? n : 1) * sizeof(*h)));
    CK(cudaMemcpy(d_cb, h, n * sizeof(*h), cudaMemcpyHostToDevice));
    CKD(j2ki_cuda_malloc((void **)&d_data, data_off + 1));
    CKD(j2ki_cuda_malloc((void **)&d_passes, (pass_off + 1) * sizeof(J2kiPass)));
    CKD(j2ki_cuda_malloc((void **)&d_res, (n + 1) * sizeof(J2kiCblkRes)));
    CKD(j2ki_cuda_malloc((void **)&d_flag, 4));
    CKD(j2ki_cuda_malloc((void **)&d_scratch, ss));

    /* the reference, every block fully */
    int bad = 0, nb_stopped = 0;
    int *rret = (int *)calloc(n ? n : 1, sizeof(int));
    uint32_t *hlim = (uint32_t *)calloc(n ? n : 1, sizeof(uint32_t)), *glim = NULL;
    const uint64_t full_bytes = t1_ref_full(cp, plan, t1, h, s, rret);
    J2kiT1StopDev stop, *stopp = NULL;
    double *d_w = NULL;
    if (stop_pct > 0) {
        d_w = t1_weights_dev(plan);
        stop.budget = full_bytes * (uint64_t)stop_pct / 100;
        stop.d_weight = d_w;
        stop.scratch_size = j2ki_t1s_cuda_scratch_size(n);
        CKD(j2ki_cuda_malloc((void **)&stop.d_scratch, stop.scratch_size));
        stopp = &stop;
        if ((nb_stopped = t1_ref_stop(cp, plan, t1, h, s, stop.budget, hlim, rret)) < 0) {
            printf("FAIL %s tier-1 stop: j2ki_t1s_plan_pool\n", cfg->name);
            bad = 1;
        }
    }
    CK(cudaMemset(d_flag, 0, 4));
    CK(cudaMemset(d_data, 0xA5, data_off + 1));
    CK(cudaMemcpy(d_s, s, plan->nb_samples * 4, cudaMemcpyHostToDevice));
    {
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        for (int rep = 0; rep < (ms ? 3 : 1); rep++) {
            CK(cudaEventRecord(e0, 0));
            CKD(j2ki_t1_cuda_variant(d_s, d_cb, n, cp->cblk_style, cp->bypass_start, plan->max_cblk_w,
                                    plan->max_cblk_h, d_data, d_passes, d_res, d_flag, d_scratch, ss, variant,
                                    g_hooks.smem_optin, stopp, 0));
            CK(cudaEventRecord(e1, 0));
            CK(cudaDeviceSynchronize());
            if (ms) {
                float t;
                CK(cudaEventElapsedTime(&t, e0, e1));
                if (rep == 0 || t < *ms)
                    *ms = t;
            }
        }
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    }
    uint8_t *g_data = (uint8_t *)malloc(data_off + 1);
    J2kiPass *g_passes = (J2kiPass *)malloc((pass_off + 1) * sizeof(J2kiPass));
    J2kiCblkRes *g_res = (J2kiCblkRes *)malloc((n + 1) * sizeof(J2kiCblkRes));
    CK(cudaMemcpy(g_data, d_data, data_off + 1, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g_passes, d_passes, (pass_off + 1) * sizeof(J2kiPass), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g_res, d_res, (n + 1) * sizeof(J2kiCblkRes), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&flag, d_flag, 4, cudaMemcpyDeviceToHost));
    if (stopp) {
        glim = (uint32_t *)calloc(n ? n : 1, sizeof(uint32_t));
        CK(cudaMemcpy(glim, j2ki_t1s_cuda_limits(stopp), n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        if (!bad)
            bad = t1_compare_limits(cfg, "", plan, glim, hlim);
    }

    size_t total_bytes = 0, total_passes = 0;
    if (!bad)
        bad = t1_compare(cfg, "", plan, h, rret, hlim, g_data, g_passes, g_res, &total_bytes, &total_passes);
    if (!bad && flag) {
        bad = 1;
        printf("FAIL %s tier-1: error flag set\n", cfg->name);
    }
    /* capacity overflow: the largest block gets a 2-byte buffer; the kernel must flag it and
     * write nothing past the capacity */
    if (!bad && !ms && n && !stopp) {
        uint32_t big = 0;
        for (uint32_t i = 1; i < n; i++)
            if (g_res[i].len > g_res[big].len)
                big = i;
        if (g_res[big].len > 2) {
            J2kiCblkDev d = h[big];
            uint8_t tail[62];
            uint32_t f2 = 0;
            J2kiCblkRes r2;
            d.data_cap = 2;
            CK(cudaMemcpy(d_cb + big, &d, sizeof(d), cudaMemcpyHostToDevice));
            CK(cudaMemset(d_flag, 0, 4));
            CK(cudaMemset(d_data + d.data_off, 0xA5, 64));
            CKD(j2ki_t1_cuda_variant(d_s, d_cb, n, cp->cblk_style, cp->bypass_start, plan->max_cblk_w,
                                    plan->max_cblk_h, d_data, d_passes, d_res, d_flag, d_scratch, ss,
                                    g_hooks.t1_variant, g_hooks.smem_optin, NULL, 0));
            CK(cudaMemcpy(&f2, d_flag, 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(&r2, d_res + big, sizeof(r2), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(tail, d_data + d.data_off + 2, sizeof(tail), cudaMemcpyDeviceToHost));
            int clean = 1;
            for (size_t k = 0; k < sizeof(tail); k++)
                clean &= tail[k] == 0xA5;
            if (!f2 || r2.err != J2KC_ERR_BUFSIZE || !clean) {
                bad = 1;
                printf("FAIL %s tier-1 overflow: flag %u err %d, bytes past the capacity %s\n", cfg->name, f2, r2.err,
                       clean ? "untouched" : "written");
            }
        }
    }
    test_checks++;
    if (bad)
        test_failures++;
    else
        printf("ok   %s tier-1%s (kernel variant %d, %s): %u code-blocks%s, %zu passes, "
               "%zu bytes identical\n", cfg->name, stopp ? " early stop" : "", variant,
               j2ki_t1_cuda_kernel_name(variant, g_hooks.smem_optin, plan->max_cblk_w, plan->max_cblk_h), n,
               stopp ? (nb_stopped ? " (some stopped)" : " (NONE stopped)") : "", total_passes, total_bytes);
    if (stopp)
        printf("     %s tier-1 early stop at %d %% of %llu bytes: %d of %u code-blocks stopped, same limits\n",
               cfg->name, stop_pct, (unsigned long long)full_bytes, nb_stopped, n);
    free(rret); free(hlim); free(glim);
    if (stopp) {
        cudaFree(stop.d_scratch);
        cudaFree(d_w);
    }
    j2ki_t1_free(&t1);
    free(g_data); free(g_passes); free(g_res); free(h);
    cudaFree(d_cb); cudaFree(d_data); cudaFree(d_passes); cudaFree(d_res); cudaFree(d_flag); cudaFree(d_scratch);
}

/* Encodes nb frames through the public API; returns the concatenated codestreams. */
typedef CUresult (*CtxGetFn)(CUcontext *);

/* The current (primary) context and a fresh stream, as an application sharing its own would. */
static void caller_ctx(void **ctx, void **stream)
{
    static CtxGetFn get;
    cudaDriverEntryPointQueryResult q;
    CUcontext c = NULL;
    cudaStream_t st;
    CK(cudaFree(0));
    if (!get)
        CK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", (void **)&get, 12000, cudaEnableDefault, &q));
    if (get(&c) != CUDA_SUCCESS || !c) {
        printf("FAIL: cuCtxGetCurrent\n");
        exit(1);
    }
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    *ctx = c;
    *stream = st;
}

static int encode_api_run(const Cfg *cfg, const char *backend, int dev_frames, Frame *frames, int nb,
                          uint8_t **out, size_t *sizes, J2kcStats *st, double *wall_ms,
                          uint8_t *(*keep)[J2KC_MAX_COMPS]);

/* dev_frames: 0 host frames, 1 device frames, 2 device frames with the caller's context and
 * stream, 3 host frames in page-locked memory (cudaHostRegister: the upload reads them
 * directly), 4 the same flagged J2KC_FRAME_HELD (submit does not wait for the upload). Host
 * frames are overwritten after submit returns (held ones after their packet is received) and
 * restored at the end: the API lets the caller reuse its planes then, so the codestreams must
 * not change. */
static int encode_api(const Cfg *cfg, const char *backend, int dev_frames, Frame *frames, int nb,
                      uint8_t **out, size_t *sizes, J2kcStats *st, double *wall_ms)
{
    uint8_t *keep[8][J2KC_MAX_COMPS];
    memset(keep, 0, sizeof(keep));
    /* (not when timing: the bench measures the encoder, not these copies) */
    for (int i = 0; i < nb && i < 8 && ((dev_frames == 0 && !wall_ms) || dev_frames >= 3); i++)
        for (int c = 0; c < J2KC_MAX_COMPS; c++)
            if (frames[i].buf[c]) {
                keep[i][c] = (uint8_t *)malloc(frames[i].size[c]);
                memcpy(keep[i][c], frames[i].buf[c], frames[i].size[c]);
                if (dev_frames >= 3)
                    CK(cudaHostRegister(frames[i].buf[c], frames[i].size[c], cudaHostRegisterDefault));
            }
    int r = encode_api_run(cfg, backend, dev_frames, frames, nb, out, sizes, st, wall_ms, keep);
    for (int i = 0; i < nb && i < 8; i++)
        for (int c = 0; c < J2KC_MAX_COMPS; c++)
            if (keep[i][c]) {
                if (dev_frames >= 3)
                    CK(cudaHostUnregister(frames[i].buf[c]));
                memcpy(frames[i].buf[c], keep[i][c], frames[i].size[c]);
                free(keep[i][c]);
            }
    return r;
}

static int encode_api_run(const Cfg *cfg, const char *backend, int dev_frames, Frame *frames, int nb,
                          uint8_t **out, size_t *sizes, J2kcStats *st, double *wall_ms,
                          uint8_t *(*keep)[J2KC_MAX_COMPS])
{
    J2kcParams *p;
    J2kcEncoder *enc = NULL;
    J2kcImageDesc img;
    char extra[64];
    int ret, got = 0;
    struct timespec t0, t1;
    snprintf(extra, sizeof(extra), "backend=%s async_depth=3", backend);
    if (make_params(cfg, &p, extra) < 0)
        return -1;
    image_desc(cfg, &img);
    void *uctx = NULL, *ustream = NULL;
    if (dev_frames == 2) {   /* device frames, the caller's context and stream */
        caller_ctx(&uctx, &ustream);
        j2kc_params_set_cuda(p, uctx, ustream);
        for (int i = 0; i < nb; i++)
            frames[i].fd.cu_stream = ustream;
    }
    if ((ret = j2kc_encoder_create(&enc, &img, p)) < 0) {
        printf("FAIL %s: encoder_create(%s): %s\n", cfg->name, backend, j2kc_strerror(ret));
        j2kc_params_free(&p);
        return ret;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < nb || got < nb;) {
        if (i < nb) {
            J2kcFrame hf = frames[i].f;
            hf.flags = dev_frames == 4 ? J2KC_FRAME_HELD : 0;
            ret = j2kc_encoder_submit(enc, dev_frames == 1 || dev_frames == 2 ? &frames[i].fd : &hf);
            if (ret == 0) {
                for (int c = 0; dev_frames != 4 && i < 8 && c < J2KC_MAX_COMPS; c++)
                    if (keep[i][c])
                        memset(frames[i].buf[c], 0x5A, frames[i].size[c]);
                i++;
                continue;
            }
            if (ret != J2KC_ERR_AGAIN) break;
        }
        J2kcPacket pkt;
        if (dev_frames == 1) {   /* poll (block = 0) in this mode, to cover that path too */
            while ((ret = j2kc_encoder_receive(enc, &pkt, 0)) == J2KC_ERR_AGAIN)
                ;
        } else {
            ret = j2kc_encoder_receive(enc, &pkt, 1);
        }
        if (ret < 0) break;
        out[got] = (uint8_t *)malloc(pkt.size);
        memcpy(out[got], pkt.data, pkt.size);
        for (int c = 0; dev_frames == 4 && got < 8 && c < J2KC_MAX_COMPS; c++)
            if (keep[got][c])
                memset(frames[got].buf[c], 0x5A, frames[got].size[c]);
        sizes[got++] = pkt.size;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (wall_ms)
        *wall_ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
    if (ret < 0 && ret != J2KC_ERR_AGAIN)
        printf("FAIL %s: encoding with %s: %s\n", cfg->name, backend, j2kc_strerror(ret));
    if (st)
        j2kc_encoder_stats(enc, st);
    j2kc_encoder_free(&enc);
    j2kc_params_free(&p);
    if (ustream) {
        for (int i = 0; i < nb; i++)
            frames[i].fd.cu_stream = NULL;
        cudaStreamDestroy((cudaStream_t)ustream);
    }
    return got == nb ? 0 : (ret < 0 ? ret : -1);
}

static void check_cfg(const Cfg *cfg, int nb_frames, const int *t1_variants)
{
    J2kcParams *p;
    J2kcImageDesc img;
    J2kiCodingParams cp;
    J2kiLog log = { log_cb, NULL, J2KC_LOG_WARNING };
    J2kiPlan *plan = NULL;
    Frame frames[3];
    int ret;

    if (make_params(cfg, &p, NULL) < 0) {
        test_failures++;
        return;
    }
    image_desc(cfg, &img);
    memset(&cp, 0, sizeof(cp));
    if ((ret = j2ki_params_finalize(&cp, p, &img, &log)) < 0 || (ret = j2ki_plan_create(&plan, &cp, &log)) < 0) {
        printf("FAIL %s: setup: %s\n", cfg->name, j2kc_strerror(ret));
        test_failures++;
        j2kc_params_free(&p);
        return;
    }
    /* a case named empty-prec* exists for its precincts without code-blocks: fail if it has none */
    if (!strncmp(cfg->name, "empty-prec", 10)) {
        uint32_t nb_prec = 0, nb_empty = 0;
        for (uint32_t t = 0; t < plan->nb_tiles; t++)
            for (int c = 0; c < img.nb_comps; c++)
                for (int r = 0; r < plan->tiles[t].comps[c].nb_res; r++) {
                    const J2kiRes *res = &plan->tiles[t].comps[c].res[r];
                    for (uint32_t k = 0; k < res->nb_prec_w * res->nb_prec_h; k++) {
                        uint32_t n = 0;
                        for (int b = 0; b < res->precs[k].nb_bands; b++) {
                            const J2kiPrecBand *pb = &res->precs[k].bands[b];
                            n += (pb->cbx1 - pb->cbx0) * (pb->cby1 - pb->cby0);
                        }
                        nb_prec++;
                        nb_empty += !n;
                    }
                }
        if (!nb_empty) {
            printf("FAIL %s: no precinct without code-blocks (%u precincts)\n", cfg->name, nb_prec);
            test_failures++;
        } else {
            printf("     %s: %u of %u precincts have no code-block\n", cfg->name, nb_empty, nb_prec);
        }
    }
    for (int i = 0; i < nb_frames; i++)
        frame_make(&frames[i], &img, cfg);

    /* ---- stage checks on frame 0 ---- */
    size_t ns = plan->nb_samples ? plan->nb_samples : 1;
    int32_t *s_load = (int32_t *)calloc(ns, 4), *s_dwt = (int32_t *)calloc(ns, 4), *s_q = (int32_t *)calloc(ns, 4);
    uint32_t *g = (uint32_t *)calloc(ns, 4), *d_s;
    size_t tmp_sz = 0;
    uint32_t max_w = 1, max_h = 1;
    for (uint32_t t = 0; t < plan->nb_tiles; t++)
        for (int c = 0; c < img.nb_comps; c++) {
            const J2kiTileComp *tc = &plan->tiles[t].comps[c];
            size_t z = j2ki_dwt_cuda_tmp_size(tc->w, tc->h);
            tmp_sz = z > tmp_sz ? z : tmp_sz;
            max_w = tc->w > max_w ? tc->w : max_w;
            max_h = tc->h > max_h ? tc->h : max_h;
        }
    void *scratch = malloc(j2ki_dwt_scratch_size(max_w, max_h) * 4), *d_tmp;
    CKD(j2ki_cuda_malloc((void **)&d_s, ns * 4));
    CKD(j2ki_cuda_malloc((void **)&d_tmp, tmp_sz));

    ref_load_mct(&cp, plan, &frames[0].f, s_load);
    CK(cudaMemset(d_s, 0xFF, ns * 4));
    cuda_load_mct(&cp, plan, &frames[0].fd, d_s);
    CK(cudaMemcpy(g, d_s, ns * 4, cudaMemcpyDeviceToHost));
    int ok_load = compare_samples(cfg->name, "load+mct", plan, 1, (uint32_t *)s_load, g);

    memcpy(s_dwt, s_load, ns * 4);
    ref_dwt(&cp, plan, s_dwt, scratch);
    CK(cudaMemcpy(d_s, s_load, ns * 4, cudaMemcpyHostToDevice));
    cuda_dwt(&cp, plan, d_s, d_tmp);
    CK(cudaMemcpy(g, d_s, ns * 4, cudaMemcpyDeviceToHost));
    int ok_dwt = compare_samples(cfg->name, "dwt", plan, 0, (uint32_t *)s_dwt, g);

    memcpy(s_q, s_dwt, ns * 4);
    ref_quant(&cp, plan, s_q);
    int ok_q = 1;
    if (!cp.reversible) {
        uint32_t n = plan->nb_cblks;
        J2kiCblkDev *h = (J2kiCblkDev *)calloc(n ? n : 1, sizeof(*h)), *d_cb;
        for (uint32_t i = 0; i < n; i++) {
            const J2kiCblk *cb = &plan->cblks[i];
            const J2kiBand *band = &plan->bands[cb->band_idx];
            const J2kiTileComp *tc = &plan->tiles[band->tile].comps[band->comp];
            h[i].buf = tc->buf_offset + (uint64_t)(band->buf_y0 + cb->y0 - band->y0) * tc->w + band->buf_x0 + cb->x0 - band->x0;
            h[i].stride = tc->w;
            h[i].w = (uint16_t)(cb->x1 - cb->x0);
            h[i].h = (uint16_t)(cb->y1 - cb->y0);
            h[i].nb_mag_bits = (uint8_t)band->nb_mag_bits;
            h[i].frac_bits = (uint8_t)band->frac_bits;
            h[i].inv_step = band->inv_step;
        }
        CKD(j2ki_cuda_malloc((void **)&d_cb, (n ? n : 1) * sizeof(*h)));
        CK(cudaMemcpy(d_cb, h, n * sizeof(*h), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(d_s, s_dwt, ns * 4, cudaMemcpyHostToDevice));
        CKD(j2ki_quant_cuda(d_s, d_cb, n, 0));
        CK(cudaMemcpy(g, d_s, ns * 4, cudaMemcpyDeviceToHost));
        ok_q = compare_samples(cfg->name, "quant", plan, 0, (uint32_t *)s_q, g);
        /* qstep_try's histogram (quant.h) fused into the quantiser: the same integers, and the
         * same counts as the reference's, every key used (code-block i under key i % 6) */
        {
            uint8_t *hk = (uint8_t *)calloc(n ? n : 1, 1), *d_k;
            unsigned long long *d_hist, gh[J2KI_QPRED_HIST];
            uint64_t rh[J2KI_QPRED_HIST];
            memset(rh, 0, sizeof(rh));
            for (uint32_t i = 0; i < n; i++) {
                const J2kiCblk *cb = &plan->cblks[i];
                const J2kiBand *band = &plan->bands[cb->band_idx];
                hk[i] = (uint8_t)(i % (J2KI_QPRED_MAX_D + 1));
                j2ki_quant_hist_ref(s_q + h[i].buf, h[i].stride, h[i].w, h[i].h, band->frac_bits, hk[i], rh);
            }
            CK(cudaMalloc((void **)&d_k, n ? n : 1));
            CK(cudaMalloc((void **)&d_hist, sizeof(gh)));
            CK(cudaMemcpy(d_k, hk, n, cudaMemcpyHostToDevice));
            CK(cudaMemset(d_hist, 0, sizeof(gh)));
            CK(cudaMemcpy(d_s, s_dwt, ns * 4, cudaMemcpyHostToDevice));
            CKD(j2ki_quant_hist_cuda(d_s, d_cb, n, d_k, d_hist, 0));
            CK(cudaMemcpy(gh, d_hist, sizeof(gh), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(g, d_s, ns * 4, cudaMemcpyDeviceToHost));
            ok_q = ok_q && compare_samples(cfg->name, "quant+hist", plan, 0, (uint32_t *)s_q, g);
            for (int k = 0; k < J2KI_QPRED_HIST && ok_q; k++)
                if (gh[k] != rh[k]) {
                    printf("FAIL %s qstep_try histogram: bin %d: cuda %llu, ref %llu\n", cfg->name, k, gh[k],
                           (unsigned long long)rh[k]);
                    test_failures++;
                    ok_q = 0;
                }
            test_checks++;
            cudaFree(d_k);
            cudaFree(d_hist);
            free(hk);
        }
        cudaFree(d_cb);
        free(h);
    }
    if (ok_load && ok_dwt && ok_q)
        printf("ok   %s load+mct, dwt%s: %zu samples identical\n", cfg->name, cp.reversible ? "" : ", quant",
               plan->nb_samples);
    if (cp.cblk_style & J2KI_CBLK_HT) {
        /* the HT coder has one kernel set and no early stop */
        if (!t1_variants)
            check_ht(cfg, &cp, plan, s_q, d_s);
    } else if (t1_variants) {
        for (const int *v = t1_variants; *v != -2; v++) {
            float ms = 0;
            check_t1(cfg, &cp, plan, s_q, d_s, *v, &ms, 0);
            printf("bench %s tier-1 kernel variant %d: %.2f ms (best of 3)\n", cfg->name, *v, ms);
        }
    } else {
        check_t1(cfg, &cp, plan, s_q, d_s, g_hooks.t1_variant, NULL, 0);
        /* the early stop, at a budget of a tenth of the bytes (blocks stop at every step) */
        check_t1(cfg, &cp, plan, s_q, d_s, g_hooks.t1_variant, NULL, 10);
    }
    if (t1_variants)
        goto done;

    /* ---- end to end through the public API ---- */
    {
        uint8_t *ref[3] = { 0 }, *cu[3] = { 0 }, *cud[3] = { 0 };
        size_t rs[3], cs[3], cds[3];
        J2kcStats st_ref, st_cu;
        memset(&st_ref, 0, sizeof(st_ref));
        memset(&st_cu, 0, sizeof(st_cu));
        int r1 = encode_api(cfg, "ref", 0, frames, nb_frames, ref, rs, &st_ref, NULL);
        int r2 = encode_api(cfg, "cuda", 0, frames, nb_frames, cu, cs, &st_cu, NULL);
        int r3 = encode_api(cfg, "cuda", 1, frames, nb_frames, cud, cds, NULL, NULL);
        uint8_t *cux[3] = { 0 };
        size_t cxs[3];
        int r4 = encode_api(cfg, "cuda", 2, frames, nb_frames, cux, cxs, NULL, NULL);
        uint8_t *cup[3] = { 0 };
        size_t cps[3];
        int r5 = encode_api(cfg, "cuda", 3, frames, nb_frames, cup, cps, NULL, NULL);
        uint8_t *cuh[3] = { 0 };
        size_t chs[3];
        int r6 = encode_api(cfg, "cuda", 4, frames, nb_frames, cuh, chs, NULL, NULL);
        int same = r1 == 0 && r2 == 0 && r3 == 0 && r4 == 0 && r5 == 0 && r6 == 0;
        for (int i = 0; same && i < nb_frames; i++) {
            if (rs[i] != cs[i] || memcmp(ref[i], cu[i], rs[i])) {
                size_t k = 0;
                while (k < rs[i] && k < cs[i] && ref[i][k] == cu[i][k]) k++;
                printf("FAIL %s end-to-end: frame %d: host frames: ref %zu bytes, cuda %zu bytes, first difference at byte %zu\n",
                       cfg->name, i, rs[i], cs[i], k);
                same = 0;
            } else if (rs[i] != cxs[i] || memcmp(ref[i], cux[i], rs[i])) {
                printf("FAIL %s end-to-end: frame %d: device frames with the caller's context and stream differ\n",
                       cfg->name, i);
                same = 0;
            } else if (rs[i] != cps[i] || memcmp(ref[i], cup[i], rs[i])) {
                printf("FAIL %s end-to-end: frame %d: page-locked host frames differ (ref %zu bytes, cuda %zu)\n",
                       cfg->name, i, rs[i], cps[i]);
                same = 0;
            } else if (rs[i] != chs[i] || memcmp(ref[i], cuh[i], rs[i])) {
                printf("FAIL %s end-to-end: frame %d: held page-locked host frames differ (ref %zu bytes, cuda %zu)\n",
                       cfg->name, i, rs[i], chs[i]);
                same = 0;
            } else if (rs[i] != cds[i] || memcmp(ref[i], cud[i], rs[i])) {
                printf("FAIL %s end-to-end: frame %d: device frames differ (ref %zu bytes, cuda %zu)\n", cfg->name, i,
                       rs[i], cds[i]);
                same = 0;
            }
        }
        /* qstep_try: the last frame's path, the same on both backends (and the expected one) */
        const char *path = st_ref.nb_recoded ? "coded again" : "kept";
        if (same && st_ref.nb_recoded != st_cu.nb_recoded) {
            printf("FAIL %s end-to-end: the last frame was coded again by %s only\n", cfg->name,
                   st_ref.nb_recoded ? "ref" : "cuda");
            same = 0;
        } else if (same && ((!strncmp(cfg->name, "try-kept", 8) && st_ref.nb_recoded) ||
                            (!strncmp(cfg->name, "try-once", 8) && st_ref.nb_recoded) ||
                            (!strncmp(cfg->name, "try-again", 9) && !st_ref.nb_recoded))) {
            printf("FAIL %s end-to-end: qstep_try's steps %s, not as the case expects\n", cfg->name, path);
            same = 0;
        }
        test_checks++;
        if (!same)
            test_failures++;
        else
            printf("ok   %s end-to-end: %d frame(s), codestreams identical (%zu bytes first): host, page-locked host (waited, held), device, caller ctx+stream; qstep_try %s\n",
                   cfg->name, nb_frames, rs[0], path);
        for (int i = 0; i < 3; i++) { free(ref[i]); free(cu[i]); free(cud[i]); free(cux[i]); free(cup[i]); free(cuh[i]); }
    }

done:
    cudaFree(d_s);
    cudaFree(d_tmp);
    free(scratch); free(s_load); free(s_dwt); free(s_q); free(g);
    for (int i = 0; i < nb_frames; i++)
        frame_free(&frames[i]);
    j2ki_plan_free(&plan);
    j2kc_params_free(&p);
}

/* ---- two encoders in two threads ---- */

typedef struct ThreadJob {
    const Cfg *cfg;
    Frame frames[2];
    uint8_t *ref[2], *cu[2];
    size_t rs[2], cs[2];
    int ret;
} ThreadJob;

static void *thread_main(void *arg)
{
    ThreadJob *j = (ThreadJob *)arg;
    for (int rep = 0; rep < 3 && j->ret == 0; rep++) {
        for (int i = 0; i < 2; i++) { free(j->cu[i]); j->cu[i] = NULL; }
        j->ret = encode_api(j->cfg, "cuda", rep & 1, j->frames, 2, j->cu, j->cs, NULL, NULL);
        for (int i = 0; i < 2 && j->ret == 0; i++)
            if (j->rs[i] != j->cs[i] || memcmp(j->ref[i], j->cu[i], j->rs[i]))
                j->ret = -100;
    }
    return NULL;
}

static void check_threads(void)
{
    ThreadJob jobs[2];
    pthread_t th[2];
    J2kcImageDesc img;
    memset(jobs, 0, sizeof(jobs));
    jobs[0].cfg = &cfgs[3];   /* odd-97-ict */
    jobs[1].cfg = &cfgs[5];   /* offset-tiles-53 */
    for (int k = 0; k < 2; k++) {
        image_desc(jobs[k].cfg, &img);
        for (int i = 0; i < 2; i++)
            frame_make(&jobs[k].frames[i], &img, jobs[k].cfg);
        jobs[k].ret = encode_api(jobs[k].cfg, "ref", 0, jobs[k].frames, 2, jobs[k].ref, jobs[k].rs, NULL, NULL);
    }
    for (int k = 0; k < 2; k++)
        pthread_create(&th[k], NULL, thread_main, &jobs[k]);
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    test_checks++;
    if (jobs[0].ret || jobs[1].ret) {
        test_failures++;
        printf("FAIL two encoders in two threads: %s %d, %s %d\n", jobs[0].cfg->name, jobs[0].ret,
               jobs[1].cfg->name, jobs[1].ret);
    } else {
        printf("ok   two encoders in two threads (%s, %s): 3 rounds each, codestreams identical to ref\n",
               jobs[0].cfg->name, jobs[1].cfg->name);
    }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 2; i++) {
            frame_free(&jobs[k].frames[i]);
            free(jobs[k].ref[i]);
            free(jobs[k].cu[i]);
        }
}

/* ---- device frames still being written on the legacy default stream ---- */

static __global__ void spin_kernel(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles)
        ;
}

/*
 * A producer that writes a device frame on the legacy default stream (stream 0 of the current
 * context) and submits it at once with cu_stream NULL, as FFmpeg's CUDA hwcontext does: its
 * uploads (av_hwframe_transfer_data into a CUDA frame) are cuMemcpy2DAsync on hwctx->stream,
 * NULL by default, without a sync. The frame's data arrive only after a 300 ms kernel on that
 * stream (the buffer holds 0x5A until then); the backend's non-blocking slot streams do not
 * order themselves after stream 0, so the backend must wait for it, or it codes the old bytes.
 */
static void check_legacy_stream(void)
{
    const Cfg *cfg = &cfgs[3];   /* odd-97-ict */
    J2kcImageDesc img;
    J2kcParams *p = NULL;
    J2kcEncoder *enc = NULL;
    Frame fr;
    uint8_t *ref[1] = { NULL };
    size_t rs[1] = { 0 };
    void *src[J2KC_MAX_COMPS] = { 0 };
    const char *why = NULL;
    int clk = 0, dev = 0;
    J2kcPacket pkt;

    image_desc(cfg, &img);
    frame_make(&fr, &img, cfg);
    test_checks++;
    if (encode_api(cfg, "ref", 0, &fr, 1, ref, rs, NULL, NULL) < 0) {
        why = "reference encode failed";
        goto end;
    }
    if (make_params(cfg, &p, "backend=cuda async_depth=3") < 0 || j2kc_encoder_create(&enc, &img, p) < 0) {
        why = "encoder_create failed";
        goto end;
    }
    for (int c = 0; c < J2KC_MAX_COMPS; c++)
        if (fr.d_buf[c]) {
            CKD(j2ki_cuda_malloc((void **)&src[c], fr.size[c]));
            CK(cudaMemcpy(src[c], fr.d_buf[c], fr.size[c], cudaMemcpyDeviceToDevice));
            CK(cudaMemset(fr.d_buf[c], 0x5A, fr.size[c]));
        }
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev));    /* kHz */
    CK(cudaDeviceSynchronize());
    spin_kernel<<<1, 1, 0, 0>>>((long long)clk * 300);
    for (int c = 0; c < J2KC_MAX_COMPS; c++)
        if (fr.d_buf[c])
            CK(cudaMemcpyAsync(fr.d_buf[c], src[c], fr.size[c], cudaMemcpyDeviceToDevice, 0));
    fr.fd.cu_stream = NULL;
    if (j2kc_encoder_submit(enc, &fr.fd) < 0 || j2kc_encoder_receive(enc, &pkt, 1) < 0) {
        why = "submit or receive failed";
        goto end;
    }
    if (pkt.size != rs[0] || memcmp(pkt.data, ref[0], rs[0]))
        why = "the codestream differs from the reference's (the frame was read before stream 0 wrote it)";
end:
    CK(cudaDeviceSynchronize());
    if (why) {
        test_failures++;
        printf("FAIL device frame written on the legacy default stream, cu_stream NULL (%s): %s\n", cfg->name, why);
    } else {
        printf("ok   device frame written on the legacy default stream, cu_stream NULL (%s): waited for, "
               "codestream identical to ref\n", cfg->name);
    }
    j2kc_encoder_free(&enc);
    j2kc_params_free(&p);
    for (int c = 0; c < J2KC_MAX_COMPS; c++)
        if (src[c])
            CK(cudaFree(src[c]));
    free(ref[0]);
    frame_free(&fr);
}

static void bench(const char *name, const char *params, int depth, int nb)
{
    Cfg cfg = { name, 3, 2048, 1080, 0, 0, depth, 0, 0, depth > 8 ? 16 - depth : 0, 0, params };
    Frame frames[4];
    uint8_t *out[64];
    size_t sizes[64];
    J2kcStats st;
    double wall_ref = 0, wall = 0;
    J2kcImageDesc img;
    image_desc(&cfg, &img);
    for (int i = 0; i < 4; i++)
        frame_make(&frames[i], &img, &cfg);
    /* the frames cycle: frame k uses frames[k % 4] */
    Frame ring[64];
    for (int i = 0; i < nb; i++)
        ring[i] = frames[i % 4];
    if (encode_api(&cfg, "ref", 0, ring, 1, out, sizes, &st, &wall_ref) == 0) {
        printf("bench %s ref : 1 frame %.1f ms (mct+dwt %.1f, t1 %.1f, rc+t2 %.1f), %zu bytes\n", name, wall_ref,
               st.ms_mct_dwt, st.ms_t1, st.ms_rc, sizes[0]);
        free(out[0]);
    }
    for (int dev = 0; dev < 2; dev++) {
        encode_api(&cfg, "cuda", dev, ring, 3, out, sizes, NULL, NULL);   /* warm-up */
        for (int i = 0; i < 3; i++) free(out[i]);
        if (encode_api(&cfg, "cuda", dev, ring, nb, out, sizes, &st, &wall) == 0) {
            printf("bench %s cuda (%s frames): %d frames in %.1f ms = %.1f fps; last frame: upload %.2f, mct+dwt+quant %.2f,"
                   " t1 %.2f, download %.2f, rc+t2 %.2f, total %.2f ms; %.1f MiB device memory per slot\n",
                   name, dev ? "device" : "host", nb, wall, nb * 1e3 / wall, st.ms_upload, st.ms_mct_dwt, st.ms_t1,
                   st.ms_download, st.ms_rc, st.ms_total, st.device_bytes_per_slot / 1048576.0);
            for (int i = 0; i < nb; i++) free(out[i]);
        }
    }
    for (int i = 0; i < 4; i++)
        frame_free(&frames[i]);
}

/* Out of device memory: a 4K encoder of two slots (about 0.5 GiB each) when the device has only
 * 256 MiB free: backend=cuda gives J2KC_ERR_DEVMEM and gives back what it had allocated,
 * backend=auto falls back to the reference backend, and once memory is free again the CUDA
 * backend starts. */
/* ---- the sort and scan primitives (sort_cuda.h, scan_cuda.h) against the host ----------- */

/* Sizes around their tiles (4096 pairs a sort tile; 4096 uint32_t or 2048 uint64_t a scan
 * tile), many tiles, the largest the library sorts and scans (a 4K DCI frame's early stop:
 * 26,292 code-blocks x 22 keys) and four times that (8K). */
static const size_t g_ss_sizes[] = { 0, 1, 2, 31, 2047, 2048, 2049, 4095, 4096, 4097, 8192 + 5,
                                     41 * 4096 + 123, 26292, 26292 * 22, 4 * 26292 * 22 };

/* pattern 0: random keys below 2^end_bit; 1: all equal; 2: only the top bit or none; 3: few
 * distinct keys (many ties) */
static uint32_t ss_key(int pattern, int end_bit, uint32_t eq)
{
    const uint32_t mask = end_bit == 32 ? 0xFFFFFFFFu : (1u << end_bit) - 1;
    switch (pattern) {
    case 0:  return test_rand() & mask;
    case 1:  return eq & mask;
    case 2:  return (test_rand() & 1) ? 1u << (end_bit - 1) : 0;
    default: return (test_rand() % 5) * (mask / 5);
    }
}

static void ss_check(int ok, const char *what, size_t n, int a, int b, const char *detail)
{
    test_checks++;
    if (!ok) {
        test_failures++;
        printf("FAIL sortscan %s n=%zu (%d, %d): %s\n", what, n, a, b, detail);
    } else if (verbose) {
        printf("ok   sortscan %s n=%zu (%d, %d)\n", what, n, a, b);
    }
}

static void check_sort_case(size_t n, int end_bit, int pattern)
{
    std::vector<uint32_t> k(n), v(n), ko(n), vo(n);
    const uint32_t eq = test_rand();
    for (size_t i = 0; i < n; i++) {
        k[i] = ss_key(pattern, end_bit, eq);
        v[i] = (uint32_t)i;
    }
    const size_t tb = j2ki_sort_cuda_temp_size(n), b = n ? n * 4 : 4;
    uint32_t *d = NULL;
    void *tmp = NULL;
    char why[160] = "";
    int ok = cudaMalloc((void **)&d, 4 * b) == cudaSuccess && cudaMalloc(&tmp, tb) == cudaSuccess;
    if (ok) {
        /* the outputs start as garbage, the inputs must come back untouched */
        cudaMemcpy(d, k.data(), n * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(d + n, v.data(), n * 4, cudaMemcpyHostToDevice);
        cudaMemset(d + 2 * n, 0xA5, 2 * n * 4);
        J2kiSortArgs a = { d, d + n, d + 2 * n, d + 3 * n, n, end_bit, tmp, tb };
        CUresult e = j2ki_sort_cuda(&a, 0);
        if (e == CUDA_SUCCESS)
            e = J2KI_CUFN(cuStreamSynchronize)(0);
        if (e != CUDA_SUCCESS) {
            const char *ename, *etext;
            j2ki_cudrv_names(e, &ename, &etext);
            ok = 0;
            snprintf(why, sizeof(why), "%s", ename);
        } else {
            std::vector<uint32_t> ki(n), vi(n);
            cudaMemcpy(ko.data(), d + 2 * n, n * 4, cudaMemcpyDeviceToHost);
            cudaMemcpy(vo.data(), d + 3 * n, n * 4, cudaMemcpyDeviceToHost);
            cudaMemcpy(ki.data(), d, n * 4, cudaMemcpyDeviceToHost);
            cudaMemcpy(vi.data(), d + n, n * 4, cudaMemcpyDeviceToHost);
            /* the host's answer: std::stable_sort of the indices by decreasing key */
            std::vector<uint32_t> idx(v);
            std::stable_sort(idx.begin(), idx.end(), [&](uint32_t x, uint32_t y) { return k[x] > k[y]; });
            for (size_t i = 0; ok && i < n; i++)
                if (vo[i] != idx[i] || ko[i] != k[idx[i]]) {
                    ok = 0;
                    snprintf(why, sizeof(why), "at %zu: (%08x, %u), expected (%08x, %u)", i, ko[i], vo[i],
                             k[idx[i]], idx[i]);
                }
            if (ok && (ki != k || vi != v)) {
                ok = 0;
                snprintf(why, sizeof(why), "the input was modified");
            }
        }
    } else {
        snprintf(why, sizeof(why), "cudaMalloc");
    }
    ss_check(ok, "sort", n, end_bit, pattern, why);
    cudaFree(d);
    cudaFree(tmp);
}

template <typename T> static void check_scan_case(size_t n, int exclusive, int in_place)
{
    std::vector<T> x(n), y(n), ref(n);
    T run = 0;
    for (size_t i = 0; i < n; i++) {
        /* 32-bit sums wrap (as the device's do); 64-bit ones take lengths up to 2^40 */
        x[i] = sizeof(T) == 4 ? (T)test_rand() : (T)(((uint64_t)test_rand() << 8) | (test_rand() & 0xFF));
        if (exclusive) {
            ref[i] = run;
            run += x[i];
        } else {
            run += x[i];
            ref[i] = run;
        }
    }
    const size_t tb = j2ki_scan_cuda_temp_size(n, (int)sizeof(T)), b = n ? n * sizeof(T) : sizeof(T);
    T *d = NULL;
    void *tmp = NULL;
    char why[160] = "";
    int ok = cudaMalloc((void **)&d, 2 * b) == cudaSuccess && cudaMalloc(&tmp, tb) == cudaSuccess;
    if (ok) {
        cudaMemcpy(d, x.data(), n * sizeof(T), cudaMemcpyHostToDevice);
        J2kiScanArgs a = { d, in_place ? d : d + n, n, (int)sizeof(T), exclusive, tmp, tb };
        CUresult e = j2ki_scan_cuda(&a, 0);
        if (e == CUDA_SUCCESS)
            e = J2KI_CUFN(cuStreamSynchronize)(0);
        if (e != CUDA_SUCCESS) {
            const char *ename, *etext;
            j2ki_cudrv_names(e, &ename, &etext);
            ok = 0;
            snprintf(why, sizeof(why), "%s", ename);
        } else {
            cudaMemcpy(y.data(), in_place ? d : d + n, n * sizeof(T), cudaMemcpyDeviceToHost);
            for (size_t i = 0; ok && i < n; i++)
                if (y[i] != ref[i]) {
                    ok = 0;
                    snprintf(why, sizeof(why), "at %zu: %llu, expected %llu", i, (unsigned long long)y[i],
                             (unsigned long long)ref[i]);
                }
        }
    } else {
        snprintf(why, sizeof(why), "cudaMalloc");
    }
    ss_check(ok, sizeof(T) == 4 ? "scan32" : "scan64", n, exclusive, in_place, why);
    cudaFree(d);
    cudaFree(tmp);
}

/* Every size with the key widths the library sorts (18: tier-1's work keys; 31: the early
 * stop's float keys) and all 32, every key pattern; both scans, inclusive and exclusive. */
static void check_sort_scan(void)
{
    static const int bits[] = { 18, 31, 32, 1, 8, 9 };
    const int f0 = test_failures, c0 = test_checks;
    for (size_t s = 0; s < sizeof(g_ss_sizes) / sizeof(g_ss_sizes[0]); s++) {
        const size_t n = g_ss_sizes[s];
        for (int b = 0; b < (int)(sizeof(bits) / sizeof(bits[0])); b++)
            for (int pattern = 0; pattern < 4; pattern++)
                if (b < 3 || pattern == 0)
                    check_sort_case(n, bits[b], pattern);
        for (int ex = 0; ex < 2; ex++) {
            check_scan_case<uint32_t>(n, ex, s & 1);
            check_scan_case<uint64_t>(n, ex, !(s & 1));
        }
    }
    /* arguments out of range: refused, nothing launched */
    J2kiSortArgs a = { NULL, NULL, NULL, NULL, 1, 33, NULL, 0 };
    J2kiScanArgs c = { NULL, NULL, 1, 2, 0, NULL, 0 };
    ss_check(j2ki_sort_cuda(&a, 0) == CUDA_ERROR_INVALID_VALUE, "sort refuses end_bit 33", 1, 33, 0, "accepted");
    ss_check(j2ki_scan_cuda(&c, 0) == CUDA_ERROR_INVALID_VALUE, "scan refuses 2-byte elements", 1, 2, 0, "accepted");
    printf("%s sortscan: sort and scan primitives against std::stable_sort and a loop (%d checks)\n",
           test_failures == f0 ? "ok  " : "FAIL", test_checks - c0);
}

static void check_devmem(void)
{
    J2kcImageDesc img;
    J2kcEncoder *enc = NULL;
    J2kcParams *p = j2kc_params_alloc();
    size_t fr = 0, tot = 0, fr_hog = 0, fr_after = 0, keep = (size_t)256 << 20, n;
    void *hog = NULL;
    int r;

    memset(&img, 0, sizeof(img));
    img.nb_comps = 3;
    img.width = 4096;
    img.height = 2160;
    for (int c = 0; c < 3; c++) {
        img.depth[c] = 12;
        img.dx[c] = img.dy[c] = 1;
    }
    j2kc_params_set_log(p, log_cb, NULL, J2KC_LOG_WARNING);
    j2kc_params_set(p, "bytes", "1302083");
    j2kc_params_set(p, "levels", "6");
    j2kc_params_set(p, "async_depth", "2");
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess || fr < 2 * keep) {
        printf("skip devmem: cannot read free device memory\n");
        j2kc_params_free(&p);
        return;
    }
    for (n = fr - keep; n > keep && cudaMalloc(&hog, n) != cudaSuccess; n -= (size_t)64 << 20) {
        hog = NULL;
        cudaGetLastError();
    }
    if (!hog) {
        printf("skip devmem: could not take the device's memory\n");
        j2kc_params_free(&p);
        return;
    }
    cudaMemGetInfo(&fr_hog, &tot);
    j2kc_params_set(p, "backend", "cuda");
    r = j2kc_encoder_create(&enc, &img, p);
    j2kc_encoder_free(&enc);
    cudaMemGetInfo(&fr_after, &tot);
    test_checks++;
    if (r != J2KC_ERR_DEVMEM || fr_after + ((size_t)64 << 20) < fr_hog) {
        test_failures++;
        printf("FAIL devmem: backend=cuda with %zu MiB free: %d (%s), expected J2KC_ERR_DEVMEM; free after %zu MiB\n",
               fr_hog >> 20, r, j2kc_strerror(r), fr_after >> 20);
    } else {
        printf("ok   devmem: backend=cuda with %zu MiB free refused with J2KC_ERR_DEVMEM, %zu MiB free after\n",
               fr_hog >> 20, fr_after >> 20);
    }
    j2kc_params_set(p, "backend", "auto");
    r = j2kc_encoder_create(&enc, &img, p);
    test_checks++;
    if (r != 0 || strcmp(j2kc_encoder_backend(enc), "ref")) {
        test_failures++;
        printf("FAIL devmem: backend=auto: %d (%s), backend %s, expected the reference backend\n", r,
               j2kc_strerror(r), r ? "-" : j2kc_encoder_backend(enc));
    } else {
        printf("ok   devmem: backend=auto fell back to the reference backend\n");
    }
    j2kc_encoder_free(&enc);
    cudaFree(hog);
    j2kc_params_set(p, "backend", "cuda");
    r = j2kc_encoder_create(&enc, &img, p);
    test_checks++;
    if (r != 0) {
        test_failures++;
        printf("FAIL devmem: backend=cuda after the memory came back: %d (%s)\n", r, j2kc_strerror(r));
    } else {
        printf("ok   devmem: backend=cuda starts once the memory is free again\n");
    }
    j2kc_encoder_free(&enc);
    j2kc_params_free(&p);
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    int do_bench = 0, n = 0;
    uint64_t seed = 0x6a326b63ull;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 0);
            setenv("J2KC_TEST_SEED", argv[i], 1);
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            only = argv[++i];
        } else if (!strcmp(argv[i], "--bench")) {
            do_bench = 1;
        } else if (!strcmp(argv[i], "-v")) {
            verbose = 1;
        }
    }
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("SKIP check_cuda: no CUDA device\n");
        return 77;
    }
    /* the stages called directly below use the library's driver table, loaded as an encoder's
     * creation loads it; they run in the runtime's primary context, current on this thread */
    if (j2ki_cu_load(NULL, 0) < 0) {
        printf("FAIL: the CUDA driver cannot be loaded (cu_driver.h)\n");
        return 1;
    }
    CK(cudaFree(0));
    /* the kernels found in the embedded code and loaded into that context (cuda_launch.h), as
     * an encoder's creation does */
    if (j2ki_cuda_kernels_ready(NULL) < 0) {
        printf("FAIL: the library's kernels are not ready (cuda_launch.h)\n");
        return 1;
    }
    test_seed("check_cuda", seed);
    j2ki_hooks_read(&g_hooks);
    if (!only || strstr("sortscan", only))
        check_sort_scan();
    for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
        if (!only || strstr(cfgs[i].name, only))
            check_cfg(&cfgs[i], 2, NULL);
    if (!only) {
        check_threads();
        check_legacy_stream();
        /* a GPU index that does not exist: J2KC_ERR_NODEV, not a crash or a silent fallback */
        J2kcParams *p = j2kc_params_alloc();
        J2kcEncoder *enc = NULL;
        J2kcImageDesc img;
        image_desc(&cfgs[2], &img);
        j2kc_params_set_log(p, log_cb, NULL, J2KC_LOG_DEBUG);
        j2kc_params_set(p, "backend", "cuda");
        j2kc_params_set(p, "gpu", "1000");
        int r = j2kc_encoder_create(&enc, &img, p);
        test_checks++;
        if (r != J2KC_ERR_NODEV) {
            test_failures++;
            printf("FAIL gpu=1000: encoder_create returned %d (%s), expected J2KC_ERR_NODEV\n", r, j2kc_strerror(r));
        } else {
            printf("ok   gpu=1000 refused with J2KC_ERR_NODEV\n");
        }
        j2kc_encoder_free(&enc);
        j2kc_params_free(&p);
        check_devmem();
    }
    if (do_bench) {
        static const int variants[] = { 0, 1, 8, J2KI_T1_CUDA_SMEM + 8, J2KI_T1_CUDA_SMEM + 1, J2KI_T1_CUDA_PAR, -2 };
        static const Cfg bcfg[] = {
            { "bench-2k-97-12bit-32x32", 3, 2048, 1080, 0, 0, 12, 0, 0, 4, 0, "levels=5 cblk=32x32" },
            { "bench-2k-53-8bit-64x64",  3, 2048, 1080, 0, 0,  8, 0, 0, 0, 0, "lossless=1 levels=5" },
        };
        for (int i = 0; i < 2; i++)
            check_cfg(&bcfg[i], 1, variants);
        bench("2k-dci-97-12bit", "levels=5 cblk=32x32 bytes=1302083", 12, 24);
        bench("2k-lossless-8bit", "lossless=1 levels=5", 8, 24);
    }
    return test_done("check_cuda");
}
