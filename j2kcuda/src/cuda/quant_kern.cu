/*
 * The CUDA deadzone quantiser's kernels (device code only, Annex E, E.1), see quant_cuda.h:
 * one thread block per code-block (the code-blocks tile every band, B.7), j2ki_quant_sample()
 * per coefficient with the saturation quant_ref.c uses (integer part 2^M_b - 1, every
 * fractional bit set); with qstep_try, the histogram its prediction reads (quant.h), in the
 * same pass over the samples.
 */
extern "C" {
#include "hd/quant.h"
}
#include "cuda/quant_kern.h"

/* HIST: qstep_try's histogram (quant.h) as well: each thread block counts its code-block's
 * integer parts by bit length in shared memory (the zeros, most of a smooth block's samples,
 * by a warp vote rather than 32 atomics on one word), then adds its non-empty bins to the
 * frame's, under its band's most planes (dmax). Every warp is whole (blockDim a multiple of
 * 32) and runs every round, so the vote sees all its lanes. */
template <bool HIST>
__device__ __forceinline__ void quant_block(uint32_t *samples, const J2kiCblkDev *cblks, const uint8_t *dmax,
                                            unsigned long long *hist)
{
    __shared__ unsigned int bins[J2KI_QPRED_BINS];
    const J2kiCblkDev cb = cblks[blockIdx.x];
    if (cb.inv_step == 0.0f)
        return;
    if (HIST) {
        if (threadIdx.x < J2KI_QPRED_BINS)
            bins[threadIdx.x] = 0;
        __syncthreads();
    }
    const int32_t max_mag = (int32_t)(((int64_t)1 << (cb.nb_mag_bits + cb.frac_bits)) - 1);
    const uint32_t n = (uint32_t)cb.w * cb.h;
    for (uint32_t i0 = 0; i0 < n; i0 += blockDim.x) {
        const uint32_t i = i0 + threadIdx.x;
        int bin = -1;
        if (i < n) {
            uint32_t y = i / cb.w, x = i - y * cb.w;
            uint32_t *p = samples + cb.buf + (size_t)y * cb.stride + x;
            int32_t q = j2ki_quant_sample(__uint_as_float(*p), cb.inv_step, max_mag);
            *p = (uint32_t)q;
            if (HIST)
                bin = j2ki_quant_hist_bin(q, cb.frac_bits, 0);
        }
        if (HIST) {
            const unsigned zeros = __ballot_sync(0xffffffffu, bin == 0);
            if (bin > 0)
                atomicAdd(&bins[bin], 1u);
            if ((threadIdx.x & 31) == 0 && zeros)
                atomicAdd(&bins[0], (unsigned)__popc(zeros));
        }
    }
    if (HIST) {
        __syncthreads();
        if (threadIdx.x < J2KI_QPRED_BINS && bins[threadIdx.x])
            atomicAdd(&hist[dmax[blockIdx.x] * J2KI_QPRED_BINS + threadIdx.x], (unsigned long long)bins[threadIdx.x]);
    }
}


extern "C" __global__ void __launch_bounds__(QUANT_THREADS) j2ki_k_quant(const __grid_constant__ J2kiQuantParams p)
{
    quant_block<false>(p.samples, p.cblks, p.dmax, p.hist);
}

extern "C" __global__ void __launch_bounds__(QUANT_THREADS) j2ki_k_quant_hist(const __grid_constant__ J2kiQuantParams p)
{
    quant_block<true>(p.samples, p.cblks, p.dmax, p.hist);
}
