/*
 * CUDA stage 1: load + DC level shift (G.1.2) + RCT/ICT (Annex G), see mct_cuda.h; the
 * kernels are mct_kern.cu's.
 */
#include "cuda/cuda_launch.h"
#include "cuda/mct_kern.h"

extern "C" CUresult j2ki_load_mct_cuda(void *const d_dst[3], const J2kiLoadSrc src[3], int nb_planes,
                                       uint32_t w, uint32_t h, int mode, CUstream st)
{
    J2kiMctParams p;
    dim3 blk(32, 8), grd((w + 31) / 32, (h + 7) / 8);
    for (int c = 0; c < 3; c++) {
        p.a.src[c] = src[c < nb_planes ? c : 0];
        p.a.dst[c] = d_dst[c < nb_planes ? c : 0];
    }
    p.w = w;
    p.h = h;
    if (!w || !h)
        return CUDA_SUCCESS;
    const J2kiKernelOf<J2kiMctParams> k = mode == J2KI_LOAD_INT   ? j2ki_kernel<J2KI_K_MCT_INT>
                                        : mode == J2KI_LOAD_FLOAT ? j2ki_kernel<J2KI_K_MCT_FLOAT>
                                        : mode == J2KI_LOAD_RCT   ? j2ki_kernel<J2KI_K_MCT_RCT>
                                        : j2ki_kernel<J2KI_K_MCT_ICT>;
    return j2ki_launch(k, grd, blk, 0, st, p);
}
