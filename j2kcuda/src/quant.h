/*
 * Scalar quantisation (Annex E): step sizes written in QCD (scalar expounded for 9/7, no
 * quantisation for 5/3) and the deadzone quantiser.
 */
#ifndef J2KI_QUANT_H
#define J2KI_QUANT_H

#include "j2ki.h"
#include "plan.h"

/**
 * Fills expn, mant, nb_mag_bits, frac_bits, step, inv_step and dist_weight of a band from the
 * coding parameters (depth of its component, level, orientation, reversible, guard bits, MCT).
 * Needs band->orient, level and comp. step is Delta_b of E-3 in sample units (the units the
 * DWT output is in; 1 when reversible); inv_step = 2^frac_bits / step; dist_weight =
 * step^2 * synthesis_norm^2 * MCT weight^2 (tier-1 index units -> squared image error).
 * Reversible: epsilon_b = depth + log2(gain_b) (+1 for RCT chroma), raised when guard_bits < 2
 * so that M_b always covers the 5/3 worst case (no saturation is ever needed).
 */
void j2ki_quant_band_setup(J2kiBand *band, const J2kiCodingParams *cp, int depth);

/**
 * K of qstep_rate: the bit-planes by which the 9/7 base step of a component of this depth is
 * coarsened for cp's byte budget (0..5; 0 without J2KI_RC_BYTES, when reversible or when
 * cp->qstep_rate is 0). j2ki_quant_band_setup applies it.
 */
int j2ki_quant_rate_planes(const J2kiCodingParams *cp, int depth);

/**
 * qstep_try: the bit-planes more (than j2ki_quant_rate_planes with qstep_extra 0) with which
 * each frame is coded first, or 0 when frames are coded once. A backend makes a second plan
 * from a copy of cp with qstep_extra set to this, codes each frame with it, and codes the frame
 * again with the first plan when j2ki_rc_fills says the frame did not fill its budget.
 */
int j2ki_quant_try_planes(const J2kiCodingParams *cp);

/**
 * The coding parameters of qstep_try's tried plan: *cp_try = *cp with qstep_extra set to
 * j2ki_quant_try_planes(cp). Returns that number (0: frames are coded once, *cp_try is then
 * a plain copy and no second plan is needed).
 */
int j2ki_quant_try_params(J2kiCodingParams *cp_try, const J2kiCodingParams *cp);

/**
 * Quantises one band in place: float coefficients (same storage, row stride `stride` samples)
 * become int32 values sign * floor(|c| * inv_step), i.e. the quantisation index with frac_bits
 * fractional bits, saturated to M_b integer bits: |value| <= 2^(M_b + frac_bits) - 1 (integer
 * part 2^M_b - 1, every fractional bit set). M_b + frac_bits <= 30 (j2ki_quant_band_setup).
 */
void j2ki_quant_fwd_ref(void *buf, ptrdiff_t stride, uint32_t w, uint32_t h,
                        float inv_step, int nb_mag_bits, int frac_bits);

/** Shared per-sample quantiser (host and device). */
J2KI_HD int32_t j2ki_quant_sample(float c, float inv_step, int32_t max_mag)
{
    float a = c < 0.0f ? -c : c;
    float q = a * inv_step;
    int32_t m = q >= (float)max_mag ? max_mag : (int32_t)q;
    return c < 0.0f ? -m : m;
}

#endif
