/*
 * The parameters of the tier-2 kernels (t2_kern.cu), filled by t2_cuda.cu: one struct per
 * launch, the kernel's only argument (cuda_launch.h).
 */
#ifndef J2KI_T2_KERN_H
#define J2KI_T2_KERN_H

#include "cuda/t2_cuda.h"

/* Warps per block of the precinct kernel, each with its J2KI_T2_WARP_WORDS of shared memory; a
 * block is a team (t2_cuda.h). 8 made the DCI frames' precinct kernels slower (fewer, larger
 * blocks for a few hundred small precincts: bench/results/history.md#precinct-teams). */
#define PREC_WARPS 4

/** J2KI_K_T2_IMPORT: the frame's view and tier-1's results. */
typedef struct J2kiT2ImportParams {
    J2kiT2DevView      v;
    const J2kiCblkRes *res;
} J2kiT2ImportParams;

/** The other tier-2 kernels: the frame's view, the codestream out (NULL: counting) and its
 *  capacity (J2KI_K_T2_FINAL). */
typedef struct J2kiT2OutParams {
    J2kiT2DevView v;
    uint8_t      *out;
    size_t        cap;
} J2kiT2OutParams;

#endif /* J2KI_T2_KERN_H */
