/*
 * Input conversion, DC level shift (G.1.2) and the component transforms (Annex G):
 * RCT (reversible, integer) and ICT (irreversible, float). The per-sample maths is here once,
 * as inline functions that the reference loops (mct_ref.c) and the CUDA kernels (mct_cuda.cu)
 * both call, so the two match by construction. Float code is compiled without contraction
 * (-ffp-contract=off on the host, --fmad=false on the device).
 */
#ifndef J2KI_MCT_H
#define J2KI_MCT_H

#include "j2ki.h"

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

/**
 * Reads one component of a frame (any of the J2kcFrame layouts) into the tile-component
 * buffer, applying the right shift and the DC level shift of unsigned samples (G-? : I - 2^(depth-1)).
 * dst rows are w samples; (x0, y0) is the tile-component's top-left relative to the component origin.
 */
void j2ki_load_comp_ref(int32_t *dst, uint32_t w, uint32_t h, const J2kcFrame *f, int c,
                        uint32_t x0, uint32_t y0, int depth, int is_signed);

/** In-place forward RCT over n samples of three int32 planes. */
void j2ki_rct_fwd_ref(int32_t *c0, int32_t *c1, int32_t *c2, size_t n);
/** Converts n int32 samples to float in place (same storage), for the 9/7 path. */
void j2ki_int_to_float_ref(void *buf, size_t n);
/** In-place forward ICT over n samples of three float planes. */
void j2ki_ict_fwd_ref(float *c0, float *c1, float *c2, size_t n);

#endif
