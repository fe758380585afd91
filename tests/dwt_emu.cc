/*
 * The CUDA forward DWT kernels (j2kcuda/src/dwt_cuda.cu, this very source) run on the host:
 * each launch is a loop over the grid's blocks, every thread of a block a std::thread, the
 * block's __syncthreads() a barrier of all its threads and __syncwarp() one of its warp, so a
 * collective that some threads skip deadlocks instead of passing. The whole transform
 * (dwt_fwd, every level) is compared sample for sample with the reference (dwt_ref.c) on
 * 20 geometries around the kernels' tile sizes (1 x 1, 2 and 3 rows, under one tile, one tile
 * and its halo, several tiles and a tail, odd origins) and 1 to 6 levels, for the 9/7 (float, bit for bit)
 * and the 5/3.
 * Not a GPU: memory ordering, timing and the device compiler are check_cuda's (make check-cuda).
 * Build and run: make B=build check-dwt-emu (g++ with C++20, the CUDA headers; no GPU).
 */
#include "dwt_cuda.h"     /* first: the CUDA headers' types and qualifiers, redefined below */

#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __shared__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

extern "C" {
#include "dwt.h"
}

struct Dim3 { unsigned x, y, z; };
thread_local Dim3 threadIdx, blockIdx;
static Dim3 blockDim;
static std::barrier<> *g_block_bar;
static std::vector<std::barrier<> *> g_warp_bar;
thread_local unsigned t_warp;
static long g_launches[2];

static void __syncthreads() { g_block_bar->arrive_and_wait(); }
static void __syncwarp() { g_warp_bar[t_warp]->arrive_and_wait(); }

/* one launch: blocks one after the other, the threads of a block together */
template <class F>
static void emu_launch(int which, dim3 grid, dim3 block, F body)
{
    const unsigned nt = block.x * block.y;
    g_launches[which]++;
    blockDim = { block.x, block.y, 1 };
    for (unsigned by = 0; by < grid.y; by++)
        for (unsigned bx = 0; bx < grid.x; bx++) {
            std::barrier<> bb((std::ptrdiff_t)nt);
            std::vector<std::barrier<> *> wb;
            for (unsigned w = 0; w < (nt + 31) / 32; w++)
                wb.push_back(new std::barrier<>((std::ptrdiff_t)(nt - 32 * w < 32 ? nt - 32 * w : 32)));
            g_block_bar = &bb;
            g_warp_bar = wb;
            std::vector<std::thread> th;
            for (unsigned ty = 0; ty < block.y; ty++)
                for (unsigned tx = 0; tx < block.x; tx++)
                    th.emplace_back([&, tx, ty, bx, by] {
                        threadIdx = { tx, ty, 0 };
                        blockIdx = { bx, by, 0 };
                        t_warp = (ty * block.x + tx) / 32;
                        body();
                    });
            for (auto &t : th)
                t.join();
            for (auto *b : wb)
                delete b;
        }
}

static int launch_id(const char *name)
{
    return strstr(name, "ver") ? 0 : 1;
}

#define DWT_LAUNCH(k, grid, block, st, ...) \
    emu_launch(launch_id(#k), grid, block, [&] { k(__VA_ARGS__); })
#define cudaPeekAtLastError() cudaSuccess

#include "dwt_cuda.cu"

static uint32_t rnd_state = 1;
static uint32_t rnd() { rnd_state ^= rnd_state << 13; rnd_state ^= rnd_state >> 17; rnd_state ^= rnd_state << 5; return rnd_state; }

/* one geometry, one filter: the emulated transform against the reference */
static int run(uint32_t x0, uint32_t y0, uint32_t w, uint32_t h, int levels, int rev)
{
    const uint32_t stride = w + 3;
    std::vector<float> f((size_t)stride * h), fr;
    std::vector<int32_t> iv((size_t)stride * h), ir;
    for (size_t i = 0; i < f.size(); i++) {
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
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            const size_t i = (size_t)y * stride + x;
            const int same = rev ? iv[i] == ir[i] : memcmp(&f[i], &fr[i], 4) == 0;
            if (!same) {
                printf("FAIL dwt_emu: %s %ux%u at (%u,%u), %d levels: first mismatch at x %u y %u "
                       "(%g vs %g)\n", rev ? "5/3" : "9/7", w, h, x0, y0, levels, x, y,
                       rev ? (double)iv[i] : (double)f[i], rev ? (double)ir[i] : (double)fr[i]);
                return 1;
            }
        }
    return 0;
}

int main(void)
{
    static const uint32_t geo[][5] = {
        /* w, h, x0, y0, levels */
        { 1, 1, 0, 0, 1 },       { 5, 3, 1, 0, 2 },     { 67, 70, 0, 1, 1 },    { 68, 68, 0, 0, 1 },
        { 68, 69, 1, 1, 2 },     { 131, 133, 3, 2, 3 }, { 132, 140, 0, 0, 1 },  { 200, 150, 1, 0, 4 },
        { 257, 75, 0, 3, 6 },    { 70, 260, 5, 5, 5 },  { 196, 197, 0, 0, 2 },  { 33, 300, 2, 1, 3 },
        { 3, 2, 0, 1, 1 },       { 9, 3, 1, 1, 1 },     { 40, 5, 0, 0, 1 },     { 35, 71, 1, 0, 1 },
        { 34, 72, 0, 1, 1 },     { 36, 129, 0, 0, 1 },  { 37, 133, 0, 1, 2 },   { 38, 135, 1, 1, 1 },
    };
    int fails = 0, n = 0;
    for (const auto &g : geo)
        for (int rev = 0; rev < 2; rev++) {
            fails += run(g[2], g[3], g[0], g[1], (int)g[4], rev);
            n++;
        }
    const int ran = g_launches[0] && g_launches[1];
    printf("%s dwt_emu: %d transforms (%d geometries, 9/7 and 5/3), %d failed; launches: vertical %ld, horizontal %ld\n",
           fails || !ran ? "FAIL" : "ok", n, (int)(sizeof(geo) / sizeof(geo[0])), fails, g_launches[0], g_launches[1]);
    return fails || !ran;
}
