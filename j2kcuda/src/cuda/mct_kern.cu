/*
 * CUDA stage 1's kernels (device code only): load + DC level shift (G.1.2) + RCT/ICT
 * (Annex G), see mct_cuda.h. One thread per sample position; each reads its sample of every
 * plane, so the component transform needs no second pass over memory.
 */
extern "C" {
#include "hd/mct.h"
}
#include "cuda/mct_kern.h"

/** Container sample -> signed int32 through j2ki_input_sample (shift, clamp, DC level shift). */
__device__ __forceinline__ int32_t load_sample(const J2kiLoadSrc &s, uint32_t x, uint32_t y)
{
    const uint8_t *row = (const uint8_t *)s.d_data + (ptrdiff_t)y * s.stride;
    size_t i = (size_t)x * (size_t)s.step;
    int32_t raw;
    if (s.bytes == 1) {
        raw = s.is_signed ? (int32_t)(int8_t)row[i] : (int32_t)row[i];
    } else {
        /* 16-bit containers may be unaligned (odd strides): assemble from bytes (little-endian,
         * the native order of every CUDA host) */
        uint16_t u = (uint16_t)(row[2 * i] | (row[2 * i + 1] << 8));
        raw = s.is_signed ? (int32_t)(int16_t)u : (int32_t)u;
    }
    return j2ki_input_sample(raw, s.shift, s.depth, s.is_signed);
}

template <int MODE>
__device__ __forceinline__ void load_mct(J2kiLoadArgs a, uint32_t w, uint32_t h)
{
    uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    size_t o = (size_t)y * w + x;
    if (MODE == J2KI_LOAD_INT) {
        ((int32_t *)a.dst[0])[o] = load_sample(a.src[0], x, y);
    } else if (MODE == J2KI_LOAD_FLOAT) {
        ((float *)a.dst[0])[o] = (float)load_sample(a.src[0], x, y);
    } else if (MODE == J2KI_LOAD_RCT) {
        int32_t c0, c1, c2;
        j2ki_rct_fwd_sample(load_sample(a.src[0], x, y), load_sample(a.src[1], x, y),
                            load_sample(a.src[2], x, y), &c0, &c1, &c2);
        ((int32_t *)a.dst[0])[o] = c0;
        ((int32_t *)a.dst[1])[o] = c1;
        ((int32_t *)a.dst[2])[o] = c2;
    } else {
        float c0, c1, c2;
        j2ki_ict_fwd_sample((float)load_sample(a.src[0], x, y), (float)load_sample(a.src[1], x, y),
                            (float)load_sample(a.src[2], x, y), &c0, &c1, &c2);
        ((float *)a.dst[0])[o] = c0;
        ((float *)a.dst[1])[o] = c1;
        ((float *)a.dst[2])[o] = c2;
    }
}

extern "C" __global__ void j2ki_k_mct_int(const __grid_constant__ J2kiMctParams p)
{
    load_mct<J2KI_LOAD_INT>(p.a, p.w, p.h);
}

extern "C" __global__ void j2ki_k_mct_float(const __grid_constant__ J2kiMctParams p)
{
    load_mct<J2KI_LOAD_FLOAT>(p.a, p.w, p.h);
}

extern "C" __global__ void j2ki_k_mct_rct(const __grid_constant__ J2kiMctParams p)
{
    load_mct<J2KI_LOAD_RCT>(p.a, p.w, p.h);
}

extern "C" __global__ void j2ki_k_mct_ict(const __grid_constant__ J2kiMctParams p)
{
    load_mct<J2KI_LOAD_ICT>(p.a, p.w, p.h);
}
