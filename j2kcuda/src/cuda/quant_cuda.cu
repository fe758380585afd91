/*
 * CUDA deadzone quantiser (Annex E, E.1), see quant_cuda.h; the kernels are quant_kern.cu's.
 */
#include "cuda/cuda_launch.h"
#include "cuda/quant_kern.h"

extern "C" CUresult j2ki_quant_cuda(void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                                    CUstream st)
{
    const J2kiQuantParams p = { (uint32_t *)d_samples, d_cblks, NULL, NULL };
    if (!nb_cblks)
        return CUDA_SUCCESS;
    return j2ki_launch(j2ki_kernel<J2KI_K_QUANT>, nb_cblks, QUANT_THREADS, 0, st, p);
}

extern "C" CUresult j2ki_quant_hist_cuda(void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                                         const uint8_t *d_dmax, unsigned long long *d_hist, CUstream st)
{
    const J2kiQuantParams p = { (uint32_t *)d_samples, d_cblks, d_dmax, d_hist };
    if (!nb_cblks)
        return CUDA_SUCCESS;
    return j2ki_launch(j2ki_kernel<J2KI_K_QUANT_HIST>, nb_cblks, QUANT_THREADS, 0, st, p);
}
