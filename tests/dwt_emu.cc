/*
 * The CUDA forward DWT kernels (j2kcuda/src/cuda/dwt_kern.cu, launched by dwt_cuda.cu: these
 * very sources) run on the host, blocks and warps emulated by tests/warp_emu.h (threads as
 * fibers, shuffles as per-warp exchanges; a collective that some lane skips deadlocks and
 * fails the launch). The whole
 * transform (dwt_fwd, every level) is compared sample for sample, padding and one row past the
 * buffer included, with the reference (dwt_ref.c) on 56 geometries around the kernels' tile
 * sizes and paths (1 x 1 .. 5 x 5, columns of 31 .. 100 rows around the 32-row tiles, their
 * 4-sample halo and the 4-tile threshold of the end-placed tiles, rows of 251 .. 2001 samples
 * around the 512-sample segments and the 508 / 1012 thresholds of the end-placed and inner
 * segments, odd and even origins and strides, 1 to 6 levels), for the 9/7 (float, bit for
 * bit) and the 5/3, and it checks that every path of both kernels ran.
 * Not a GPU: memory ordering, timing and the device compiler are check_cuda's (make check-cuda).
 * Build and run: make B=build check-dwt-emu (g++ with C++20, the CUDA headers; no GPU).
 */
#include <cuda_runtime_api.h>  /* first: the CUDA headers' types and qualifiers (headers only), redefined below */
#include "cuda/dwt_cuda.h"

#define EMU_NAME "dwt_emu"
#include "warp_emu.h"

extern "C" {
#include "hd/dwt.h"
}

static long g_launches[2];     /* vertical, horizontal passes */

static long g_paths[16];

#define DWT_PATH_HOOK(path) g_paths[path]++

#include "cuda/cuda_launch.h"
#include "cuda/dwt_kern.cu"

/* the launch module's part here: dwt_cuda.cu's launches run on the host, counted */
extern "C" CUresult j2ki_cuda_launch(J2kiKernelId id, dim3 grid, dim3 block, size_t smem, CUstream st,
                                     const void *params)
{
    (void)smem;
    (void)st;
    g_launches[id == J2KI_K_DWT53_VER || id == J2KI_K_DWT97_VER ? 0 : 1]++;
    switch (id) {
    EMU_KERNEL_CASE(J2KI_K_DWT53_VER, j2ki_k_dwt53_ver, J2kiDwtParams)
    EMU_KERNEL_CASE(J2KI_K_DWT53_HOR, j2ki_k_dwt53_hor, J2kiDwtParams)
    EMU_KERNEL_CASE(J2KI_K_DWT97_VER, j2ki_k_dwt97_ver, J2kiDwtParams)
    EMU_KERNEL_CASE(J2KI_K_DWT97_HOR, j2ki_k_dwt97_hor, J2kiDwtParams)
    default:
        printf("FAIL dwt_emu: launch of kernel %d, not the DWT's\n", (int)id);
        exit(1);
    }
}

#include "cuda/dwt_cuda.cu"

static uint32_t rnd_state = 1;
static uint32_t rnd() { rnd_state ^= rnd_state << 13; rnd_state ^= rnd_state >> 17; rnd_state ^= rnd_state << 5; return rnd_state; }

/* One geometry, one filter: the emulated transform against the reference, on a buffer of
 * stride w + pad with one more row: the padding and that row must stay as they were. */
static int run(uint32_t x0, uint32_t y0, uint32_t w, uint32_t h, int levels, uint32_t pad, int rev)
{
    const uint32_t stride = w + pad;
    const size_t size = (size_t)stride * (h + 1);
    std::vector<float> f(size), fr;
    std::vector<int32_t> iv(size), ir;
    for (size_t i = 0; i < size; i++) {
        iv[i] = (int32_t)(rnd() % 4096) - 2048;
        f[i] = (float)iv[i] / 4096.0f + (float)(rnd() % 1000) * 1e-6f;
    }
    fr = f;
    ir = iv;
    std::vector<uint8_t> scratch(j2ki_dwt_scratch_size(w, h) + 64);
    std::vector<uint8_t> tmp(j2ki_dwt_cuda_tmp_size(w, h) > (size_t)stride * h * 4 ? j2ki_dwt_cuda_tmp_size(w, h)
                                                                                 : (size_t)stride * h * 4);
    if (rev) {
        j2ki_dwt53_fwd_ref(ir.data(), stride, x0, y0, x0 + w, y0 + h, levels, scratch.data());
        j2ki_dwt53_fwd_cuda(iv.data(), stride, x0, y0, x0 + w, y0 + h, levels, tmp.data(), 0);
    } else {
        j2ki_dwt97_fwd_ref(fr.data(), stride, x0, y0, x0 + w, y0 + h, levels, scratch.data());
        j2ki_dwt97_fwd_cuda(f.data(), stride, x0, y0, x0 + w, y0 + h, levels, tmp.data(), 0);
    }
    for (size_t i = 0; i < size; i++) {
        const int same = rev ? iv[i] == ir[i] : memcmp(&f[i], &fr[i], 4) == 0;
        if (!same) {
            printf("FAIL dwt_emu: %s %ux%u at (%u,%u), stride %u, %d levels: first mismatch at x %u y %u "
                   "(%g vs %g)\n", rev ? "5/3" : "9/7", w, h, x0, y0, stride, levels,
                   (unsigned)(i % stride), (unsigned)(i / stride),
                   rev ? (double)iv[i] : (double)f[i], rev ? (double)ir[i] : (double)fr[i]);
            return 1;
        }
    }
    return 0;
}

int main(void)
{
    /* Tile edges: vertical tiles of V_ROWS = 32 rows (+-HALO 4 / 2), the first inner one from
     * h = 68 - p (9/7), the first and last ones placed at the column's ends from h + p = 97
     * (4 tiles); horizontal segments of 256 pairs storing 252 (9/7) / 254 (5/3), the first and
     * last ones placed at the row's ends from about w = 508, an inner one from w = 1012 - p
     * (9/7) / 1018 - p (5/3). Odd and even strides and origins give the 8-byte and 4-byte
     * loads. */
    static const uint32_t geo[][6] = {
        /* w, h, x0, y0, levels, stride - w */
        { 1, 1, 0, 0, 1, 3 },      { 5, 3, 1, 0, 2, 3 },      { 67, 70, 0, 1, 1, 3 },    { 68, 68, 0, 0, 1, 3 },
        { 68, 69, 1, 1, 2, 3 },    { 131, 133, 3, 2, 3, 3 },  { 132, 140, 0, 0, 1, 3 },  { 200, 150, 1, 0, 4, 3 },
        { 257, 75, 0, 3, 6, 3 },   { 70, 260, 5, 5, 5, 3 },   { 196, 197, 0, 0, 2, 3 },  { 33, 300, 2, 1, 3, 3 },
        { 3, 2, 0, 1, 1, 3 },      { 9, 3, 1, 1, 1, 3 },      { 40, 5, 0, 0, 1, 3 },     { 35, 71, 1, 0, 1, 3 },
        { 34, 72, 0, 1, 1, 3 },    { 36, 129, 0, 0, 1, 3 },   { 37, 133, 0, 1, 2, 3 },   { 38, 135, 1, 1, 1, 3 },
        { 2, 2, 1, 1, 3, 0 },      { 1, 77, 0, 1, 2, 1 },     { 77, 1, 1, 0, 2, 0 },     { 4, 31, 0, 0, 1, 0 },
        { 31, 32, 0, 1, 1, 1 },    { 33, 33, 1, 0, 1, 0 },    { 63, 63, 0, 0, 1, 2 },    { 64, 64, 1, 1, 1, 0 },
        { 65, 65, 0, 1, 1, 0 },    { 66, 66, 1, 0, 1, 1 },    { 67, 67, 1, 1, 1, 0 },    { 100, 100, 0, 0, 1, 0 },
        { 251, 36, 0, 0, 1, 1 },   { 252, 37, 1, 1, 1, 0 },   { 253, 97, 0, 1, 1, 0 },   { 255, 99, 1, 0, 1, 0 },
        { 505, 101, 0, 0, 1, 0 },  { 508, 131, 1, 1, 2, 0 },  { 509, 164, 0, 1, 1, 3 },  { 1011, 20, 1, 0, 1, 0 },
        { 1012, 21, 0, 0, 1, 0 },  { 1013, 18, 1, 1, 1, 0 },  { 1017, 19, 0, 1, 1, 1 },  { 1019, 17, 1, 0, 1, 2 },
        { 1520, 35, 0, 0, 2, 0 },  { 2001, 69, 1, 1, 3, 1 },  { 37, 1003, 1, 1, 4, 1 },  { 600, 600, 3, 5, 6, 7 },
        { 5, 5, 0, 1, 1, 0 },      { 6, 6, 1, 0, 1, 1 },      { 5, 70, 1, 1, 1, 2 },     { 70, 4, 0, 1, 1, 1 },
        { 40, 96, 0, 0, 1, 0 },    { 41, 97, 0, 0, 1, 1 },    { 42, 96, 0, 1, 1, 0 },    { 507, 95, 0, 1, 1, 1 },
    };
    const int ngeo = (int)(sizeof(geo) / sizeof(geo[0]));
    int fails = 0, n = 0;
    for (const auto &g : geo)
        for (int rev = 0; rev < 2; rev++) {
            fails += run(g[2], g[3], g[0], g[1], (int)g[4], g[5], rev);
            n++;
        }
    /* every path of both kernels ran (the names in the order of enum DwtPath) */
    static const char *const names[PATH_COUNT] = {
        "ver inner", "top", "bottom", "edge", "hor 8-byte", "8-byte left", "8-byte right",
        "4-byte", "4-byte left", "4-byte right", "edge" };
    int paths_ok = g_launches[0] && g_launches[1] && g_shuffles > 0;
    printf("dwt_emu: threads per path:");
    for (int i = 0; i < PATH_COUNT; i++) {
        printf("%s %s %ld", i ? "," : "", names[i], g_paths[i]);
        paths_ok &= g_paths[i] > 0;
    }
    printf("\n%s dwt_emu: %d transforms (%d geometries, 9/7 and 5/3), %d failed, every path taken: %s; "
           "launches: vertical %ld, horizontal %ld; warp shuffles %ld\n",
           fails || !paths_ok ? "FAIL" : "ok", n, ngeo, fails, paths_ok ? "yes" : "NO", g_launches[0],
           g_launches[1], g_shuffles);
    return fails || !paths_ok;
}
