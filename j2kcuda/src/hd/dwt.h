/*
 * Forward discrete wavelet transform (Annex F): reversible 5/3 on int32, irreversible 9/7 on
 * float32, by lifting, with symmetric extension (F.3.7 / F.4.8). The lifting steps are inline
 * functions shared with the CUDA kernels.
 *
 * Layout contract ("Mallat"): the tile-component buffer holds w x h samples (row stride
 * `stride` samples) of the tile-component [x0,x1) x [y0,y1). Level d (1..nb_levels) transforms
 * the top-left area that holds resolution NL-d+1, i.e. columns [0, u1-u0) with
 * u0 = ceil(x0 / 2^(d-1)), u1 = ceil(x1 / 2^(d-1)) (rows likewise), and writes its low-pass
 * samples first: ceil(u1/2) - ceil(u0/2) of them, then the high-pass ones. So after all levels
 * each band b sits at (band->buf_x0, band->buf_y0): HL of level d at x = width of resolution
 * NL-d, LH at y = height of resolution NL-d, HH at both, LL at (0,0).
 * The parity of u0 decides whether the first sample is low- or high-pass (F.3.7).
 * Each level filters the columns first (VER_SD) and the rows second (HOR_SD), the exact inverse
 * of the decoder's 2D_SR (F.3.2: HOR_SR, then VER_SR), so that 5/3 stays lossless; the inverse
 * functions below run HOR_SR then VER_SR like a decoder. A signal of one sample at an odd
 * coordinate is doubled (F.4.8 1D_SD; halved again by 1D_SR), for both filters.
 */
#ifndef J2KI_DWT_H
#define J2KI_DWT_H

#include "core/j2ki.h"

/* 9/7 lifting constants (F.4.8.2, Table F.4) and the scaling factor K. */
#define J2KI_DWT97_ALPHA (-1.586134342059924f)
#define J2KI_DWT97_BETA  (-0.052980118572961f)
#define J2KI_DWT97_GAMMA ( 0.882911075530934f)
#define J2KI_DWT97_DELTA ( 0.443506852043971f)
#define J2KI_DWT97_K     ( 1.230174104914001f)
/* 1/K, the forward low-pass scaling (F.4.8.2 step 6) and the inverse high-pass scaling; a
 * multiplication by this constant (not a division by K) on every target. */
#define J2KI_DWT97_INV_K ( 0.812893066115961f)

/* Columns per vertical strip of the reference transform: 32 samples = 128 bytes, two cache
 * lines, a vector-friendly width. */
#define J2KI_DWT_STRIP 32

/** Scratch bytes that j2ki_dwt*_{fwd,inv}_ref need for a tile-component of w x h. */
size_t j2ki_dwt_scratch_size(uint32_t w, uint32_t h);

void j2ki_dwt53_fwd_ref(int32_t *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0,
                        uint32_t x1, uint32_t y1, int nb_levels, void *scratch);
void j2ki_dwt97_fwd_ref(float *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0,
                        uint32_t x1, uint32_t y1, int nb_levels, void *scratch);

/*
 * One level of the forward transform in parts, for the reference backend's worker threads:
 * level d (1..J2KI_MAX_LEVELS) transforms the top-left w x h area that j2ki_dwt_level_size
 * gives (0 x 0: nothing left to transform). Its vertical pass (VER_SD) runs over columns
 * [col0, col1) (col0 a multiple of J2KI_DWT_STRIP), its horizontal pass (HOR_SD) over rows
 * [row0, row1); every column of the level must have had its vertical pass before any row has
 * its horizontal one, and level d must be complete before level d + 1 starts. rev: 1 = 5/3 on
 * int32, 0 = 9/7 on float. Each column and each row is computed exactly as by
 * j2ki_dwt*_fwd_ref, so the parts give the same samples in any order and split.
 * scratch: j2ki_dwt_scratch_size bytes of the tile-component, one per concurrent caller.
 */
void j2ki_dwt_level_size(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, int d, uint32_t *w, uint32_t *h);
void j2ki_dwt_fwd_ver_ref(void *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                          int d, uint32_t col0, uint32_t col1, int rev, void *scratch);
void j2ki_dwt_fwd_hor_ref(void *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                          int d, uint32_t row0, uint32_t row1, int rev, void *scratch);

/* Inverse transforms: used by the tests (perfect reconstruction) and by PSNR-driven rate control. */
void j2ki_dwt53_inv_ref(int32_t *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0,
                        uint32_t x1, uint32_t y1, int nb_levels, void *scratch);
void j2ki_dwt97_inv_ref(float *buf, ptrdiff_t stride, uint32_t x0, uint32_t y0,
                        uint32_t x1, uint32_t y1, int nb_levels, void *scratch);

/**
 * L2 norm of the synthesis basis function of a band (for distortion weights), orient 0..3
 * (LL, HL, LH, HH) at level 1..32 (level 0: the untransformed LL, norm 1), for the standard's
 * normalisation (low-pass DC gain 1, high-pass Nyquist gain 2). The 5/3 value is that of the
 * linear filters (rounding ignored). Values are tabulated (computed exactly from the lifting
 * steps by an autocorrelation recursion; tests/unit/test_dwt.c re-derives them).
 */
double j2ki_dwt_synthesis_norm(int reversible, int level, int orient);

#endif
