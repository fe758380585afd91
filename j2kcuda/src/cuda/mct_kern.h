/*
 * The parameters of the load + component transform kernels (mct_kern.cu), filled by
 * mct_cuda.cu: one struct per launch, the kernel's only argument (cuda_launch.h).
 */
#ifndef J2KI_MCT_KERN_H
#define J2KI_MCT_KERN_H

#include "cuda/mct_cuda.h"

/** The three source planes and destinations (unused ones repeat the first). */
typedef struct J2kiLoadArgs {
    J2kiLoadSrc src[3];
    void *dst[3];
} J2kiLoadArgs;

/** J2KI_K_MCT_*: the area w x h, one thread per sample position. */
typedef struct J2kiMctParams {
    J2kiLoadArgs a;
    uint32_t     w, h;
} J2kiMctParams;

#endif /* J2KI_MCT_KERN_H */
