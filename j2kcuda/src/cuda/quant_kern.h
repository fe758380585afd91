/*
 * The parameters of the quantiser kernels (quant_kern.cu), filled by quant_cuda.cu: one
 * struct per launch, the kernel's only argument (cuda_launch.h).
 */
#ifndef J2KI_QUANT_KERN_H
#define J2KI_QUANT_KERN_H

#include "cuda/quant_cuda.h"

/** J2KI_K_QUANT / J2KI_K_QUANT_HIST: one thread block of QUANT_THREADS per code-block;
 *  dmax and hist are the histogram's (J2KI_K_QUANT_HIST only, else NULL). */
typedef struct J2kiQuantParams {
    uint32_t                *samples;
    const J2kiCblkDev       *cblks;
    const uint8_t           *dmax;
    unsigned long long      *hist;
} J2kiQuantParams;

#define QUANT_THREADS 256   /* threads per code-block (whole warps: the zeros' vote) */

#endif /* J2KI_QUANT_KERN_H */
