/*
 * CUDA forward DWT (ISO/IEC 15444-1 Annex F), see dwt_cuda.h: level by level, the vertical
 * pass (VER_SD) then the horizontal one (HOR_SD), each one launch of dwt_kern.cu's kernels
 * (whose comment gives the design and why the result equals dwt_ref.c's).
 */
extern "C" {
#include "hd/dwt_core.h"
}
#include "cuda/cuda_launch.h"
#include "cuda/dwt_kern.h"

extern "C" size_t j2ki_dwt_cuda_tmp_size(uint32_t w, uint32_t h)
{
    return ((size_t)w * h + 1) * 4;
}

template <class F>
static CUresult dwt_fwd(typename F::T *buf, uint32_t stride, uint32_t x0, uint32_t y0, uint32_t x1,
                        uint32_t y1, int nb_levels, void *d_tmp, CUstream st)
{
    typedef typename F::T T;
    constexpr uint32_t OUT = 32 * H_PAIRS - F::STEPS;
    T *tmp = (T *)d_tmp;
    for (int d = 1; d <= nb_levels && d <= J2KI_MAX_LEVELS; d++) {
        uint32_t u0 = j2ki_ceil_div_pow2(x0, d - 1), v0 = j2ki_ceil_div_pow2(y0, d - 1);
        uint32_t w = j2ki_ceil_div_pow2(x1, d - 1) - u0, h = j2ki_ceil_div_pow2(y1, d - 1) - v0;
        if (!w || !h)
            break;
        /* tiles of V_ROWS rows from coordinate v0 - p; pairs (n + p + 1) / 2 per row */
        const uint32_t tiles = (h + (v0 & 1) + V_ROWS - 1) / V_ROWS;
        const uint32_t segs = ((w + (u0 & 1) + 1) / 2 + OUT - 1) / OUT;
        const J2kiDwtParams ver = { buf, tmp, stride, w, h, v0 }, hor = { tmp, buf, stride, w, h, u0 };
        CUresult e;
        if ((e = j2ki_launch(F::VER, dim3((w + V_THREADS - 1) / V_THREADS, tiles), dim3(V_THREADS), 0, st,
                             ver)) != CUDA_SUCCESS ||
            (e = j2ki_launch(F::HOR, dim3((h + H_WARPS - 1) / H_WARPS, segs), dim3(32 * H_WARPS), 0, st,
                             hor)) != CUDA_SUCCESS)
            return e;
    }
    return CUDA_SUCCESS;
}

/* The filters' sample types and kernels. */
struct Dwt53Host {
    typedef int32_t T;
    static constexpr int STEPS = 2;
    static constexpr J2kiKernelOf<J2kiDwtParams> VER = j2ki_kernel<J2KI_K_DWT53_VER>, HOR = j2ki_kernel<J2KI_K_DWT53_HOR>;
};

struct Dwt97Host {
    typedef float T;
    static constexpr int STEPS = 4;
    static constexpr J2kiKernelOf<J2kiDwtParams> VER = j2ki_kernel<J2KI_K_DWT97_VER>, HOR = j2ki_kernel<J2KI_K_DWT97_HOR>;
};

extern "C" CUresult j2ki_dwt53_fwd_cuda(int32_t *d_buf, uint32_t stride, uint32_t x0, uint32_t y0,
                                        uint32_t x1, uint32_t y1, int nb_levels, void *d_tmp, CUstream st)
{
    return dwt_fwd<Dwt53Host>(d_buf, stride, x0, y0, x1, y1, nb_levels, d_tmp, st);
}

extern "C" CUresult j2ki_dwt97_fwd_cuda(float *d_buf, uint32_t stride, uint32_t x0, uint32_t y0,
                                        uint32_t x1, uint32_t y1, int nb_levels, void *d_tmp, CUstream st)
{
    return dwt_fwd<Dwt97Host>(d_buf, stride, x0, y0, x1, y1, nb_levels, d_tmp, st);
}
