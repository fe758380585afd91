/*
 * CUDA stage 2: forward DWT (Annex F) of one tile-component, level by level, with the lifting
 * steps of dwt_core.h (the ones dwt_ref.c uses) and the Mallat layout contract of dwt.h.
 * Each 1-D pass works on tiles in shared memory with a halo as wide as the number of lifting
 * steps, so every kept sample sees exactly the neighbours the reference loop gives it.
 */
#ifndef J2KI_DWT_CUDA_H
#define J2KI_DWT_CUDA_H

#include <cuda.h>

#include "core/j2ki.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of device scratch the transforms need for a w x h tile-component buffer. */
size_t j2ki_dwt_cuda_tmp_size(uint32_t w, uint32_t h);

/** In-place forward 5/3 of [x0,x1) x [y0,y1) held in d_buf (row stride `stride` samples). */
CUresult j2ki_dwt53_fwd_cuda(int32_t *d_buf, uint32_t stride, uint32_t x0, uint32_t y0,
                             uint32_t x1, uint32_t y1, int nb_levels, void *d_tmp, CUstream st);
/** In-place forward 9/7, same contract. */
CUresult j2ki_dwt97_fwd_cuda(float *d_buf, uint32_t stride, uint32_t x0, uint32_t y0,
                             uint32_t x1, uint32_t y1, int nb_levels, void *d_tmp, CUstream st);

#ifdef __cplusplus
}
#endif

#endif
