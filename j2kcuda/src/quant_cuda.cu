/*
 * CUDA deadzone quantiser (Annex E, E.1), see quant_cuda.h: one thread block per code-block
 * (the code-blocks tile every band, B.7), j2ki_quant_sample() per coefficient with the
 * saturation quant_ref.c uses (integer part 2^M_b - 1, every fractional bit set).
 */
extern "C" {
#include "quant.h"
}
#include "quant_cuda.h"

__global__ void __launch_bounds__(256) quant_kernel(uint32_t *samples, const J2kiCblkDev *cblks)
{
    const J2kiCblkDev cb = cblks[blockIdx.x];
    if (cb.inv_step == 0.0f)
        return;
    const int32_t max_mag = (int32_t)(((int64_t)1 << (cb.nb_mag_bits + cb.frac_bits)) - 1);
    const uint32_t n = (uint32_t)cb.w * cb.h;
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
        uint32_t y = i / cb.w, x = i - y * cb.w;
        uint32_t *p = samples + cb.buf + (size_t)y * cb.stride + x;
        *p = (uint32_t)j2ki_quant_sample(__uint_as_float(*p), cb.inv_step, max_mag);
    }
}

extern "C" cudaError_t j2ki_quant_cuda(void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                                       cudaStream_t st)
{
    if (!nb_cblks)
        return cudaSuccess;
    quant_kernel<<<nb_cblks, 256, 0, st>>>((uint32_t *)d_samples, d_cblks);
    return cudaPeekAtLastError();
}
