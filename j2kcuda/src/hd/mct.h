/*
 * Input conversion, DC level shift (G.1.2) and the component transforms (Annex G):
 * RCT (reversible, integer) and ICT (irreversible, float). The per-sample maths is here once,
 * as inline functions that the reference loops (mct_ref.c) and the CUDA kernels (mct_cuda.cu)
 * both call, so the two match by construction. Float code is compiled without contraction
 * (-ffp-contract=off on the host, --fmad=false on the device).
 */
#ifndef J2KI_MCT_H
#define J2KI_MCT_H

#include "core/j2ki.h"

/** RCT, equation G-1: integer in, integer out. */
J2KI_HD void j2ki_rct_fwd_sample(int32_t r, int32_t g, int32_t b, int32_t *y, int32_t *u, int32_t *v)
{
    *y = (r + 2 * g + b) >> 2;   /* floor division by 4; arithmetic shift on every target we build for */
    *u = b - g;
    *v = r - g;
}

/** ICT, equation G-5, float32 with a fixed order of operations. */
J2KI_HD void j2ki_ict_fwd_sample(float r, float g, float b, float *y, float *cb, float *cr)
{
    *y  = ( 0.299f   * r +  0.587f   * g) +  0.114f   * b;
    *cb = (-0.16875f * r + -0.331260f * g) +  0.5f     * b;
    *cr = ( 0.5f     * r + -0.41869f * g) + -0.08131f * b;
}

/** Inverse RCT, equation G-2: exact inverse of j2ki_rct_fwd_sample. */
J2KI_HD void j2ki_rct_inv_sample(int32_t y, int32_t u, int32_t v, int32_t *r, int32_t *g, int32_t *b)
{
    *g = y - ((u + v) >> 2);
    *r = v + *g;
    *b = u + *g;
}

/** Inverse ICT, equation G-6, float32 with a fixed order of operations (tests, PSNR estimation). */
J2KI_HD void j2ki_ict_inv_sample(float y, float cb, float cr, float *r, float *g, float *b)
{
    *r = y + 1.402f * cr;
    *g = (y + -0.34413f * cb) + -0.71414f * cr;
    *b = y + 1.772f * cb;
}

/**
 * One input sample to the int32 value the transforms see (G.1.2): raw is the container value
 * (zero-extended for unsigned, sign-extended for signed containers); it is shifted right by
 * `shift`, clamped to the component's range (so the guard-bit bounds of quant.h hold whatever
 * the unused container bits hold) and, when unsigned, level shifted by -2^(depth-1).
 */
J2KI_HD int32_t j2ki_input_sample(int32_t raw, int shift, int depth, int is_signed)
{
    int32_t v = raw >> shift;            /* arithmetic shift for signed containers */
    int32_t lo = is_signed ? -((int32_t)1 << (depth - 1)) : 0;
    int32_t hi = is_signed ? ((int32_t)1 << (depth - 1)) - 1 : ((int32_t)1 << depth) - 1;
    v = v < lo ? lo : v > hi ? hi : v;
    return is_signed ? v : v - ((int32_t)1 << (depth - 1));
}

/**
 * Squared L2 norm of the inverse component transform's column for component c (0..2): the
 * factor by which quantisation noise in that transformed component reaches the image
 * (G-2 linearised for the RCT: 3, 11/16, 11/16; G-6 for the ICT). 1 for c >= 3.
 */
double j2ki_mct_synthesis_weight2(int reversible, int c);

/**
 * Reads one component of a frame (any of the J2kcFrame layouts) into the tile-component
 * buffer, applying j2ki_input_sample() (right shift, clamp, DC level shift of unsigned samples, G.1.2).
 * Samples are uint8 (int8 when signed) for depth <= 8, else uint16 (int16); step 0 means 1.
 * dst rows are w samples; (x0, y0) is the tile-component's top-left relative to the component origin.
 */
void j2ki_load_comp_ref(int32_t *dst, uint32_t w, uint32_t h, const J2kcFrame *f, int c,
                        uint32_t x0, uint32_t y0, int depth, int is_signed);

/** In-place forward RCT over n samples of three int32 planes (c0 = R -> Y, c1 = G -> U = B - G, c2 = B -> V = R - G). */
void j2ki_rct_fwd_ref(int32_t *c0, int32_t *c1, int32_t *c2, size_t n);
/** Converts n int32 samples to float in place (same storage), for the 9/7 path. */
void j2ki_int_to_float_ref(void *buf, size_t n);
/** In-place forward ICT over n samples of three float planes. */
void j2ki_ict_fwd_ref(float *c0, float *c1, float *c2, size_t n);

#endif
