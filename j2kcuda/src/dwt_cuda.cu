/*
 * CUDA forward DWT (Annex F), see dwt_cuda.h. One level d (F.4.2 2D_SD), like dwt_ref.c:
 *   VER_SD: d_buf -> d_tmp, columns lifted, rows written de-interleaved (L rows, then H rows);
 *   HOR_SD: d_tmp -> d_buf, rows lifted, samples written de-interleaved (L, then H).
 *
 * Each block lifts a tile of the 1-D signals in shared memory: the positions it writes plus a
 * halo of HALO samples on both sides. At the signal's real ends the missing neighbour is the
 * mirrored one (F.3.7, as dwt_core.h states); at a tile's cut the same rule gives a wrong value,
 * but a wrong value moves one sample inwards per lifting step, so after S <= HALO steps it
 * stays inside the halo and every written sample equals the reference's.
 */
extern "C" {
#include "dwt_core.h"
}
#include "dwt_cuda.h"

#ifndef DWT_LAUNCH   /* tests/dwt_emu.cc runs the kernels on the host through its own */
#define DWT_LAUNCH(k, grid, block, st, ...) k<<<grid, block, 0, st>>>(__VA_ARGS__)
#endif

#define HALO   4     /* lifting steps of the 9/7 (the 5/3 has 2) */
#define V_COLS 32    /* vertical pass: columns per block (one warp wide) */
#define V_ROWS 64    /* vertical pass: output rows per block */
#define H_COLS 128   /* horizontal pass: output samples per row per block */
#define H_ROWS 8     /* horizontal pass: rows per block */

/* One lifting step over the positions of parity `odd` (1: high-pass) of a 1-D signal held
 * at s[pos * pitch] for pos in [lo, hi) (tile-local), absolute coordinate of pos 0 = c0. */
template <typename T, int REV>
__device__ __forceinline__ T lift_one(T x, T a, T b, int step)
{
    if (REV) {
        return step == 0 ? (T)j2ki_dwt53_predict((int32_t)x, (int32_t)a, (int32_t)b)
                         : (T)j2ki_dwt53_update((int32_t)x, (int32_t)a, (int32_t)b);
    } else {
        const float c = step == 0 ? J2KI_DWT97_ALPHA : step == 1 ? J2KI_DWT97_BETA
                      : step == 2 ? J2KI_DWT97_GAMMA : J2KI_DWT97_DELTA;
        return (T)j2ki_dwt97_lift((float)x, (float)a, (float)b, c);
    }
}

template <typename T>
__device__ __forceinline__ T single_fwd(T x, uint32_t i0);
template <>
__device__ __forceinline__ int32_t single_fwd<int32_t>(int32_t x, uint32_t i0) { return j2ki_dwt53_single_fwd(x, i0); }
template <>
__device__ __forceinline__ float single_fwd<float>(float x, uint32_t i0) { return j2ki_dwt97_single_fwd(x, i0); }

/*
 * Lifts n samples s[i * pitch], i in [0, n), of a tile whose sample i has parity
 * (par0 + i) & 1 (1 = high-pass). lo_real / hi_real: the tile's ends are the signal's ends.
 * Threads t = tid, tid + nthr, ... each take one position of the step's parity.
 */
template <typename T, int REV>
__device__ void lift_tile(T *s, int pitch, int n, int par0, int tid, int nthr)
{
    const int nb_steps = REV ? 2 : 4;
    for (int st = 0; st < nb_steps; st++) {
        int want = (st & 1) ? 0 : 1;                 /* even steps update H, odd steps L */
        int first = ((par0 & 1) == want) ? 0 : 1;    /* first tile index of that parity */
        for (int i = first + 2 * tid; i < n; i += 2 * nthr) {
            int l = i - 1, r = i + 1;
            if (l < 0) l = r;
            if (r >= n) r = l;
            s[i * pitch] = lift_one<T, REV>(s[i * pitch], s[l * pitch], s[r * pitch], st);
        }
        __syncthreads();
    }
    if (!REV) {
        for (int i = tid; i < n; i += nthr) {
            float v = (float)s[i * pitch];
            s[i * pitch] = (T)(((par0 + i) & 1) ? v * J2KI_DWT97_K : v * J2KI_DWT97_INV_K);
        }
        __syncthreads();
    }
}

/* VER_SD of the area [0,w) x [0,h) (first row at coordinate v0): src -> dst de-interleaved. */
template <typename T, int REV>
__global__ void __launch_bounds__(V_COLS * 8) dwt_ver_kernel(const T *src, T *dst, uint32_t stride,
                                                             uint32_t w, uint32_t h, uint32_t v0)
{
    __shared__ T s[(V_ROWS + 2 * HALO) * V_COLS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const uint32_t x = blockIdx.x * V_COLS + tx;
    const int64_t r0 = (int64_t)blockIdx.y * V_ROWS;
    const int64_t lo = r0 - HALO > 0 ? r0 - HALO : 0;
    const int64_t hi = r0 + V_ROWS + HALO < (int64_t)h ? r0 + V_ROWS + HALO : (int64_t)h;
    const int n = (int)(hi - lo);
    const int p = (int)(v0 & 1);
    const uint32_t nl = (h + 1 - (uint32_t)p) / 2;

    if (h == 1) {
        if (ty == 0 && blockIdx.y == 0 && x < w)
            dst[x] = single_fwd<T>(src[x], v0);
        return;
    }
    for (int i = ty; i < n; i += blockDim.y)
        if (x < w)
            s[i * V_COLS + tx] = src[(size_t)(lo + i) * stride + x];
    __syncthreads();
    /* columns beyond w lift garbage in their own shared column: harmless, never written */
    lift_tile<T, REV>(s + tx, V_COLS, n, (int)((v0 + (uint32_t)lo) & 1), ty, blockDim.y);
    if (x >= w)
        return;
    for (int64_t y = r0 + ty; y < r0 + V_ROWS && y < (int64_t)h; y += blockDim.y) {
        uint32_t yy = (uint32_t)y;
        uint32_t d = ((yy + (uint32_t)p) & 1) ? nl + (yy - (1 - (uint32_t)p)) / 2 : (yy - (uint32_t)p) / 2;
        dst[(size_t)d * stride + x] = s[(int)(y - lo) * V_COLS + tx];
    }
}

/* HOR_SD of the area [0,w) x [0,h) (first column at coordinate u0): src -> dst de-interleaved. */
template <typename T, int REV>
__global__ void __launch_bounds__(32 * H_ROWS) dwt_hor_kernel(const T *src, T *dst, uint32_t stride,
                                                              uint32_t w, uint32_t h, uint32_t u0)
{
    __shared__ T s[H_ROWS][H_COLS + 2 * HALO + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const uint32_t y = blockIdx.y * H_ROWS + ty;
    const int64_t c0 = (int64_t)blockIdx.x * H_COLS;
    const int64_t lo = c0 - HALO > 0 ? c0 - HALO : 0;
    const int64_t hi = c0 + H_COLS + HALO < (int64_t)w ? c0 + H_COLS + HALO : (int64_t)w;
    const int n = (int)(hi - lo);
    const int p = (int)(u0 & 1);
    const uint32_t nl = (w + 1 - (uint32_t)p) / 2;
    const bool row_ok = y < h;
    const T *in = src + (size_t)y * stride;
    T *out = dst + (size_t)y * stride;

    if (w == 1) {
        if (tx == 0 && blockIdx.x == 0 && row_ok)
            out[0] = single_fwd<T>(in[0], u0);
        return;
    }
    if (row_ok)
        for (int i = tx; i < n; i += 32)
            s[ty][i] = in[lo + i];
    __syncwarp();
    /* one warp per row: the steps need only warp-level ordering */
    {
        const int nb_steps = REV ? 2 : 4;
        const int par0 = (int)((u0 + (uint32_t)lo) & 1);
        for (int st = 0; st < nb_steps; st++) {
            int want = (st & 1) ? 0 : 1;
            int first = ((par0 & 1) == want) ? 0 : 1;
            for (int i = first + 2 * tx; i < n; i += 64) {
                int l = i - 1, r = i + 1;
                if (l < 0) l = r;
                if (r >= n) r = l;
                s[ty][i] = lift_one<T, REV>(s[ty][i], s[ty][l], s[ty][r], st);
            }
            __syncwarp();
        }
        if (!REV) {
            for (int i = tx; i < n; i += 32) {
                float v = (float)s[ty][i];
                s[ty][i] = (T)(((par0 + i) & 1) ? v * J2KI_DWT97_K : v * J2KI_DWT97_INV_K);
            }
            __syncwarp();
        }
    }
    if (!row_ok)
        return;
    for (int64_t x = c0 + tx; x < c0 + H_COLS && x < (int64_t)w; x += 32) {
        uint32_t xx = (uint32_t)x;
        uint32_t d = ((xx + (uint32_t)p) & 1) ? nl + (xx - (1 - (uint32_t)p)) / 2 : (xx - (uint32_t)p) / 2;
        out[d] = s[ty][(int)(x - lo)];
    }
}

extern "C" size_t j2ki_dwt_cuda_tmp_size(uint32_t w, uint32_t h)
{
    return ((size_t)w * h + 1) * 4;
}

template <typename T, int REV>
static cudaError_t dwt_fwd(T *buf, uint32_t stride, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                           int nb_levels, void *d_tmp, cudaStream_t st)
{
    T *tmp = (T *)d_tmp;
    for (int d = 1; d <= nb_levels && d <= J2KI_MAX_LEVELS; d++) {
        uint32_t u0 = j2ki_ceil_div_pow2(x0, d - 1), v0 = j2ki_ceil_div_pow2(y0, d - 1);
        uint32_t w = j2ki_ceil_div_pow2(x1, d - 1) - u0, h = j2ki_ceil_div_pow2(y1, d - 1) - v0;
        if (!w || !h)
            break;
        DWT_LAUNCH((dwt_ver_kernel<T, REV>), dim3((w + V_COLS - 1) / V_COLS, (h + V_ROWS - 1) / V_ROWS),
                   dim3(V_COLS, 8), st, buf, tmp, stride, w, h, v0);
        DWT_LAUNCH((dwt_hor_kernel<T, REV>), dim3((w + H_COLS - 1) / H_COLS, (h + H_ROWS - 1) / H_ROWS),
                   dim3(32, H_ROWS), st, tmp, buf, stride, w, h, u0);
        cudaError_t e = cudaPeekAtLastError();
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

extern "C" cudaError_t j2ki_dwt53_fwd_cuda(int32_t *d_buf, uint32_t stride, uint32_t x0, uint32_t y0,
                                           uint32_t x1, uint32_t y1, int nb_levels, void *d_tmp, cudaStream_t st)
{
    return dwt_fwd<int32_t, 1>(d_buf, stride, x0, y0, x1, y1, nb_levels, d_tmp, st);
}

extern "C" cudaError_t j2ki_dwt97_fwd_cuda(float *d_buf, uint32_t stride, uint32_t x0, uint32_t y0,
                                           uint32_t x1, uint32_t y1, int nb_levels, void *d_tmp, cudaStream_t st)
{
    return dwt_fwd<float, 0>(d_buf, stride, x0, y0, x1, y1, nb_levels, d_tmp, st);
}
