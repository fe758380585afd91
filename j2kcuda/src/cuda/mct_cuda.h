/*
 * CUDA stage 1: input conversion (container -> int32, right shift, DC level shift, G.1.2) fused
 * with the forward component transform (Annex G: RCT or ICT), or with the int -> float
 * conversion of the 9/7 path. Per-sample maths from mct.h, so the results equal mct_ref.c's.
 */
#ifndef J2KI_MCT_CUDA_H
#define J2KI_MCT_CUDA_H

#include <cuda.h>

#include "core/j2ki.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One input plane as the load kernel reads it (host staging or caller device memory). */
typedef struct J2kiLoadSrc {
    const void *d_data;      /**< sample (0, 0) of the area to read */
    ptrdiff_t   stride;      /**< bytes from one row to the next */
    int         step;        /**< samples from one column to the next (>= 1) */
    int         bytes;       /**< 1 (depth <= 8) or 2 */
    int         shift;       /**< right shift of the container value */
    int         depth, is_signed;
} J2kiLoadSrc;

enum {
    J2KI_LOAD_INT = 0,       /**< int32 out (5/3 path, no MCT) */
    J2KI_LOAD_FLOAT,         /**< float out (9/7 path, no MCT) */
    J2KI_LOAD_RCT,           /**< 3 planes, RCT (G-1), int32 out */
    J2KI_LOAD_ICT,           /**< 3 planes, ICT (G-5), float out */
};

/**
 * Loads nb_planes planes of w x h samples (1, or 3 for RCT/ICT) into d_dst[c] (rows of w
 * samples, int32 or float in the same 4-byte storage) on stream st.
 */
CUresult j2ki_load_mct_cuda(void *const d_dst[3], const J2kiLoadSrc src[3], int nb_planes,
                            uint32_t w, uint32_t h, int mode, CUstream st);

#ifdef __cplusplus
}
#endif

#endif
