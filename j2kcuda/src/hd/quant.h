/*
 * Scalar quantisation (Annex E): step sizes written in QCD (scalar expounded for 9/7, no
 * quantisation for 5/3) and the deadzone quantiser.
 */
#ifndef J2KI_QUANT_H
#define J2KI_QUANT_H

#include "core/j2ki.h"
#include "core/plan.h"

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
 * qstep_try: the most bit-planes more (than j2ki_quant_rate_planes with qstep_extra 0) with
 * which a frame is coded first, or 0 when frames are coded once. A backend makes a plan for
 * each d in 1..this from a copy of cp with qstep_extra set to d, codes each frame first with
 * the plan of j2ki_quant_predict's d (when not 0), and codes the frame again with the first
 * plan when j2ki_rc_mask_fills says the frame did not fill its budget.
 */
int j2ki_quant_try_planes(const J2kiCodingParams *cp);

/**
 * The coding parameters of qstep_try's plan for d planes more: *cp_try = *cp with qstep_extra
 * set to d (1..j2ki_quant_try_planes(cp)). Returns j2ki_quant_try_planes(cp) (0: frames are
 * coded once, *cp_try is then a plain copy and no other plan is needed).
 */
int j2ki_quant_try_params(J2kiCodingParams *cp_try, const J2kiCodingParams *cp, int d);

/*
 * qstep_try's prediction: the planes d* (0..j2ki_quant_try_planes) a frame is coded with first,
 * chosen from its quantised integers before tier-1 (quant_ref.c, j2ki_quant_predict). A
 * histogram of the integer parts' bit lengths, by the planes each code-block's band can drop,
 * gives every d's estimated rate exactly (integer sums: both backends decide alike).
 * J2KI_QPRED_C_NUM / J2KI_QPRED_C_DEN is C, the tuning constant: d is taken when C times its
 * estimate reaches the budget. The whole codestream of the tried steps ran 1.30 to 3.0 times the
 * estimate on the content classes' frames that did not fill (bench/results/recode-classes.md),
 * so with C = 1.15 a frame taken at d has at least 1.13 times its budget there: it fills with
 * a margin. Frames that fill barely are the ones that lose PSNR against qstep_rate's steps (the
 * budget reaches into the planes dropped): with C = 1.25, text in broadcast at 64x64 kept 2
 * planes more with estimates of 0.81-0.86 of the budget and lost 0.02 dB on the class's mean.
 * A frame that does not fill at d is coded again with qstep_rate's steps (speed lost, never
 * quality). Smaller C: fewer planes skipped, larger: more frames coded twice and lost dB
 * (bench/results/recode-predict.md).
 */
#define J2KI_QPRED_C_NUM 23
#define J2KI_QPRED_C_DEN 20
#define J2KI_QPRED_MAX_D 5                      /* K + d at most 5 (quant_ref.c) */
#define J2KI_QPRED_BINS  32                     /* bit lengths 0..31 of an integer part */
/** The histogram's size: bins per value 0..J2KI_QPRED_MAX_D of a band's most planes. */
#define J2KI_QPRED_HIST  ((J2KI_QPRED_MAX_D + 1) * J2KI_QPRED_BINS)

/**
 * The most bit-planes qstep_try may drop from band (of a plan with qstep_extra 0): 5 - K, and
 * M_b at least 1, epsilon_b in range; 0 where qstep_rate does not apply. A plan with
 * qstep_extra d drops min(d, this) from the band (j2ki_quant_band_setup).
 */
int j2ki_quant_band_try_max(const J2kiBand *band, const J2kiCodingParams *cp);

/**
 * Histogram bin of one quantised integer q (frac_bits fractional bits) of a code-block whose
 * band may drop at most dmax planes (j2ki_quant_band_try_max): dmax * J2KI_QPRED_BINS + the bit
 * length of the integer part |q| >> frac_bits.
 */
J2KI_HD int j2ki_quant_hist_bin(int32_t q, int frac_bits, int dmax)
{
    uint32_t m = (q < 0 ? 0u - (uint32_t)q : (uint32_t)q) >> frac_bits;
    int n = 0;
    while (m) {
        n++;
        m >>= 1;
    }
    return dmax * J2KI_QPRED_BINS + n;
}

/** Adds the w x h quantised integers at buf (row stride `stride` samples) to hist. */
void j2ki_quant_hist_ref(const int32_t *buf, ptrdiff_t stride, uint32_t w, uint32_t h, int frac_bits, int dmax,
                         uint64_t hist[J2KI_QPRED_HIST]);

/**
 * The estimated rate, in bits, of the frame coded with d planes fewer in every band (at most
 * each band's maximum): for every integer part m of bit length n > d_b, n - d_b + 1 bits (its
 * significant bits and a sign) -- est(d) of bench/results/recode-classes.md's proposal.
 */
uint64_t j2ki_quant_pred_bits(const uint64_t hist[J2KI_QPRED_HIST], int d);

/**
 * qstep_try's d* for a frame whose plan (qstep_extra 0) integers gave hist: the largest d in
 * 1..j2ki_quant_try_planes(cp) with C * est(d) >= the budget, else 0 (the frame is coded once,
 * with qstep_rate's steps: the bytes of qstep_try=0).
 */
int j2ki_quant_predict(const J2kiCodingParams *cp, const uint64_t hist[J2KI_QPRED_HIST]);

/** Logs (debug) the frame's d and est(d) / budget for d = 0..j2ki_quant_try_planes(cp). */
void j2ki_quant_predict_log(const J2kiLog *log, const J2kiCodingParams *cp, const uint64_t hist[J2KI_QPRED_HIST],
                            int d);

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
