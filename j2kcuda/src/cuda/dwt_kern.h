/*
 * The parameters of the DWT kernels (dwt_kern.cu), filled by dwt_cuda.cu: one struct per
 * launch, the kernel's only argument (cuda_launch.h), and the tile geometry both sides use.
 */
#ifndef J2KI_DWT_KERN_H
#define J2KI_DWT_KERN_H

#include "cuda/dwt_cuda.h"

#define V_ROWS    32   /* vertical pass: output rows per thread (even) */
#define V_THREADS 128  /* vertical pass: columns per block */
#define H_PAIRS   8    /* horizontal pass: (L, H) pairs per lane, 64 * H_PAIRS samples per warp */
#define H_WARPS   4    /* horizontal pass: rows per block, one warp each */

/** J2KI_K_DWT53_* (int32_t samples) / J2KI_K_DWT97_* (float): one pass over the area
 *  [0,w) x [0,h) of src (row stride `stride` samples) into dst, de-interleaved; o: the
 *  coordinate of its first row (vertical pass) or column (horizontal pass). */
typedef struct J2kiDwtParams {
    const void *src;
    void       *dst;
    uint32_t    stride, w, h, o;
} J2kiDwtParams;

#endif /* J2KI_DWT_KERN_H */
