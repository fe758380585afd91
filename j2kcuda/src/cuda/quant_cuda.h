/*
 * CUDA stage 3: deadzone scalar quantisation (Annex E, E.1) of every code-block of the frame,
 * in place, with the per-sample quantiser of quant.h (the same function quant_ref.c uses).
 */
#ifndef J2KI_QUANT_CUDA_H
#define J2KI_QUANT_CUDA_H

#include <cuda.h>

#include "cuda/t1_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Quantises the float coefficients of every code-block in d_cblks[0..nb_cblks) (they tile
 * every band exactly) into int32 indices with frac_bits fractional bits, in d_samples.
 * Code-blocks of reversible bands (inv_step == 0) are left untouched.
 */
CUresult j2ki_quant_cuda(void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                         CUstream st);

/**
 * j2ki_quant_cuda, and qstep_try's histogram of the integers (quant.h, j2ki_quant_hist_bin:
 * J2KI_QPRED_HIST counters) added to d_hist, each code-block's under its band's most planes
 * d_dmax[i] (j2ki_quant_band_try_max). The counts equal j2ki_quant_hist_ref's over the same
 * code-blocks. The caller zeroes d_hist first. Irreversible code-blocks only (9/7).
 */
CUresult j2ki_quant_hist_cuda(void *d_samples, const J2kiCblkDev *d_cblks, uint32_t nb_cblks,
                              const uint8_t *d_dmax, unsigned long long *d_hist, CUstream st);

#ifdef __cplusplus
}
#endif

#endif
