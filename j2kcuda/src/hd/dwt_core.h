/*
 * Per-sample lifting steps of the discrete wavelet transforms (ISO/IEC 15444-1 Annex F),
 * shared by the reference loops (dwt_ref.c) and the CUDA kernels (dwt_cuda.cu) so that both
 * compute the same values by construction.
 *
 * Sample naming: in a 1-D signal X(i0..i1-1) the samples at even coordinates are low-pass (L),
 * those at odd coordinates high-pass (H). A lifting step updates one sample from its two
 * neighbours of the other parity, a and b (left and right). At the signal ends the periodic
 * symmetric extension (F.3.7, F-4 / F.4.8) mirrors around the end sample, so a missing
 * neighbour equals the existing one: the caller passes a == b there.
 *
 * Float steps are written with one fixed order of operations, x + c * (a + b), and must be
 * compiled without contraction (-ffp-contract=off, nvcc --fmad=false): one rounding after the
 * sum, one after the product, one after the final add, on every target.
 */
#ifndef J2KI_DWT_CORE_H
#define J2KI_DWT_CORE_H

#include "hd/dwt.h"

/* ---- reversible 5/3 (forward F.4.8.1, inverse F.3.8.1) ---- */

/** Forward predict: Y(2n+1) = X(2n+1) - floor((X(2n) + X(2n+2)) / 2). */
J2KI_HD int32_t j2ki_dwt53_predict(int32_t x, int32_t a, int32_t b) { return x - ((a + b) >> 1); }
/** Forward update: Y(2n) = X(2n) + floor((Y(2n-1) + Y(2n+1) + 2) / 4). */
J2KI_HD int32_t j2ki_dwt53_update(int32_t x, int32_t a, int32_t b) { return x + ((a + b + 2) >> 2); }
/** Inverse of j2ki_dwt53_update (F.3.8.1 first step). */
J2KI_HD int32_t j2ki_dwt53_unupdate(int32_t y, int32_t a, int32_t b) { return y - ((a + b + 2) >> 2); }
/** Inverse of j2ki_dwt53_predict (F.3.8.1 second step). */
J2KI_HD int32_t j2ki_dwt53_unpredict(int32_t y, int32_t a, int32_t b) { return y + ((a + b) >> 1); }

/* ---- irreversible 9/7 (F.4.8.2 forward, F.3.8.2 inverse) ----
 * Forward: H += alpha (L+L); L += beta (H+H); H += gamma (L+L); L += delta (H+H);
 *          then H *= K, L *= 1/K.  Inverse runs the steps backwards with the signs flipped. */

/** One forward lifting step: x + c * (a + b). */
J2KI_HD float j2ki_dwt97_lift(float x, float a, float b, float c) { return x + c * (a + b); }
/** One inverse lifting step: x - c * (a + b). */
J2KI_HD float j2ki_dwt97_unlift(float x, float a, float b, float c) { return x - c * (a + b); }

/* ---- signal-end rules shared by both filters (F.3.6 / F.4.6, 1D_SR / 1D_SD) ----
 * A signal of one sample is not filtered: Y(i0) = X(i0) when i0 is even and Y(i0) = 2 X(i0)
 * when i0 is odd (forward); the inverse halves it again (exact in both int and float). */
J2KI_HD int32_t j2ki_dwt53_single_fwd(int32_t x, uint32_t i0) { return (i0 & 1) ? 2 * x : x; }
J2KI_HD int32_t j2ki_dwt53_single_inv(int32_t y, uint32_t i0) { return (i0 & 1) ? y / 2 : y; }
J2KI_HD float   j2ki_dwt97_single_fwd(float x, uint32_t i0)   { return (i0 & 1) ? 2.0f * x : x; }
J2KI_HD float   j2ki_dwt97_single_inv(float y, uint32_t i0)   { return (i0 & 1) ? 0.5f * y : y; }

/**
 * Index arithmetic of the de-interleaved signal [L(0..nl-1) | H(0..nh-1)] of X(i0..i1-1),
 * parity p = i0 & 1 (F.3.7: the first sample is low-pass when i0 is even):
 *   nl = ceil(i1/2) - ceil(i0/2), nh = floor(i1/2) - floor(i0/2);
 *   H(k) sits between L(k-p) and L(k-p+1); L(k) sits between H(k-1+p) and H(k+p).
 * These give the neighbour indices with the symmetric extension folded in (a missing neighbour
 * is replaced by the other one). Valid when nl >= 1 and nh >= 1 (signals of length >= 2).
 */
J2KI_HD void j2ki_dwt_h_nbrs(uint32_t k, int p, uint32_t nl, uint32_t *a, uint32_t *b)
{
    int64_t l = (int64_t)k - p, r = l + 1;
    if (l < 0) l = r;
    if (r >= (int64_t)nl) r = l;
    *a = (uint32_t)l;
    *b = (uint32_t)r;
}

J2KI_HD void j2ki_dwt_l_nbrs(uint32_t k, int p, uint32_t nh, uint32_t *a, uint32_t *b)
{
    int64_t l = (int64_t)k - 1 + p, r = l + 1;
    if (l < 0) l = r;
    if (r >= (int64_t)nh) r = l;
    *a = (uint32_t)l;
    *b = (uint32_t)r;
}

#endif /* J2KI_DWT_CORE_H */
