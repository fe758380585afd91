/*
 * Quantisation set-up and reference quantiser (ISO/IEC 15444-1 Annex E).
 *
 * Reversible (5/3): no quantisation (QCD Sqcd style 0, E.1.1.1 / A.6.4): epsilon_b only sets
 * M_b = G + epsilon_b - 1 (E-2); mu_b = 0, Delta_b = 1.
 * Irreversible (9/7): scalar expounded (style 2, E.1.1.2): every band signals its own
 *   Delta_b = 2^(R_b - epsilon_b) * (1 + mu_b / 2^11)        (E-3)
 * with R_b = depth + log2(gain_b), gain_b = 1 (LL), 2 (HL, LH), 4 (HH) (E-4, Table E.1).
 *
 * Units: the DWT works on samples in their own units (level-shifted integers, float for 9/7,
 * low-pass DC gain 1), which are exactly the units of E-3's Delta_b. So band->step is Delta_b
 * in sample units and inv_step = 2^frac_bits / Delta_b multiplies coefficients directly.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hd/dwt.h"
#include "hd/mct.h"
#include "hd/quant.h"

/*
 * Base quantisation step in sample units, before the per-band 1/(synthesis norm) weighting:
 * Delta_b = base / norm_b, so that every band adds the same mean squared error per coefficient,
 * base^2 / 12, to its component (noise balanced across bands).
 *
 * base = 2^(max(depth, 12) - 13):
 *  - depth <= 12: base = 1/2 sample: the error of a full-rate decode is about 0.14 sample RMS,
 *    below the 0.29 RMS of the decoder's own rounding to integers, i.e. the 9/7 path at full
 *    rate is nearly lossless (PSNR about 6.02 depth + 16.8 dB: 65 dB at 8 bits, 89 dB at 12);
 *  - deeper: 2^-13 of the dynamic range (PSNR about 89 dB), far above any rate of interest,
 *    while keeping M_b (and tier-1 work on bit-planes rate control will drop) bounded.
 * At DCI rates (about 1.5 bit/sample) 12-bit content decodes at 50..60 dB, so truncation by
 * rate control, not this step, sets the quality.
 */
static double base_step(int depth)
{
    return ldexp(1.0, j2ki_imax(depth, 12) - 13);
}

/* Whether qstep_rate applies to cp at all (9/7, a byte budget under 8 bits per sample). */
static int rate_planes_apply(const J2kiCodingParams *cp)
{
    return cp->qstep_rate && !cp->reversible && cp->rc_mode == J2KI_RC_BYTES && cp->frame_bytes &&
           cp->frame_bytes < j2ki_image_samples(&cp->img);    /* 8 bits per sample and more: none */
}

/*
 * qstep_rate: bit-planes the byte budget cannot reach. Under a budget of b bits per sample,
 * PCRD-opt truncates every code-block some bit-planes above the quantiser's last one; the
 * planes below are modelled and MQ-coded by tier-1, then dropped. Coarsening the step by 2^K
 * (epsilon_b - K in QCD) is exactly those K planes gone: floor(|x| / (2^K Delta)) is the
 * index without its K lowest bits, so where the budget truncates every block at least K
 * planes up the codestream holds the same passes either way (the pass distortions keep K
 * more fractional bits, so rate control's ties may fall differently).
 *
 * Where the budget reaches deeper, K planes cost quality: when the whole codestream of the
 * coarser quantiser (its full rate) is smaller than the budget. The smoother the content, the
 * smaller that full rate. The smoothest content measured: a 12-bit frame upscaled 4x by
 * bicubic interpolation (the 2K DCI bench frame down to 512x270 and back to 2048x1080), with
 * full rates of 0.29, 0.46, 0.69 and 1.01 bit per sample at P = 8, 9, 10, 11 bits of
 * precision relative to the range (P = depth + 1 - K at 12 bits and below, 13 - K deeper:
 * base_step), about 1.5x per bit; and FFmpeg's testsrc2 pattern at 4096x2160 in X'Y'Z', whose
 * full rate at P = 9 is 0.36 bit per sample (so about 0.24 at P = 8). So P needs
 * 8 + ceil(log1.5(b / 0.22)) bits (0.22: 8 % below testsrc2), and K is what the base step has
 * beyond that, at most 5. At 12 bits: K = 5 up to 0.22 bit/sample, 4 to 0.33, 3 to 0.50, 2 to
 * 0.74, 1 to 1.11, none above.
 * Content smoother still (flat synthetic frames, larger upscales) can lose PSNR: there the
 * frame comes out smaller than the budget, at the quality of the coarser quantiser.
 * Measured (reference backend, PSNR by OpenJPEG's decoder, against qstep_rate=0): testsrc2 in
 * 4K DCI at 250 Mb/s (0.39 bit/sample, K = 3) 73.405 against 73.424 dB (K = 4 would give
 * 70.60 at 1,189,144 bytes); the 4K DCI bench frame 33.495 both; the 4x upscale in 2K DCI at
 * 35, 60, 95, 125, 140 Mb/s (K = 5, 3, 2, 1, 1) at most 0.0004 dB lower, none from 190 Mb/s.
 * tests/quality.sh asserts the cost against qstep_rate=0 on
 * generated content, an upscale and testsrc2 included.
 */
int j2ki_quant_rate_planes(const J2kiCodingParams *cp, int depth)
{
    double b, p_need;
    int p0, k;
    if (!rate_planes_apply(cp))
        return 0;
    b = 8.0 * (double)cp->frame_bytes / (double)j2ki_image_samples(&cp->img);
    p_need = 8.0 + (b > 0.22 ? ceil(log(b / 0.22) / log(1.5)) : 0.0);
    p0 = depth <= 12 ? depth + 1 : 13;
    k = p0 - (int)p_need;
    return k < 0 ? 0 : k < 5 ? k : 5;
}

/*
 * qstep_try: the rule above is fitted to the smoothest content (an upscale), which needs far
 * more precision for a budget than most frames: the natural 2K DCI frame of bench/mkframes.py
 * (a painting) has, fully coded, 4.8 times its 250 Mb/s budget at the rule's steps (K = 0) and
 * still 1.48 times at K = 5, and decodes to 46.204 dB at the budget with either (reference
 * backend, OpenJPEG's decoder). So a frame is coded first with up to qstep_try planes more (at
 * most 5 in all; how many: j2ki_quant_predict, below), and kept when it fills its budget at
 * those steps: rate control left out a pass on some code-block's convex hull. Otherwise the
 * budget reaches planes the coarser steps dropped, and the frame is coded again at the rule's
 * steps (both backends alike, so the bytes stay the same on both). Measured at the edge
 * (reference backend, OpenJPEG's decoder, against the rule's steps at the same budget): the
 * painting at 1.01 times its K = 5 full rate 52.425 against 52.424 dB, at 1.016 times its K = 3
 * one 63.426 against 63.424; the film-grain bench frame (a DCI codestream decoded) fills at
 * K = 3 (1.001 times) and loses nothing there, and at K = 4 it fills only below 0.995 times its
 * 250 Mb/s budget: 1,290,000 bytes give 72.853 dB against 72.837, while at the full budget,
 * which K = 4 cannot fill, the rule's steps reach 80.357 dB and the frame is coded again. With
 * 3 planes the four bench frames keep the tried steps (tests/quality.sh checks the cost, the
 * planes predicted and the fall-back).
 */
int j2ki_quant_try_planes(const J2kiCodingParams *cp)
{
    if (!cp->qstep_try || !rate_planes_apply(cp))
        return 0;
    for (int c = 0; c < cp->img.nb_comps; c++)
        if (j2ki_quant_rate_planes(cp, cp->img.depth[c]) < 5)
            return cp->qstep_try;
    return 0;                               /* every component at 5 already */
}

int j2ki_quant_try_params(J2kiCodingParams *cp_try, const J2kiCodingParams *cp, int d)
{
    int n = j2ki_quant_try_planes(cp);
    *cp_try = *cp;
    cp_try->qstep_extra = n ? j2ki_imax(1, j2ki_imin(d, n)) : 0;
    return n;
}

/*
 * qstep_try's prediction. Coding every frame first with a fixed qstep_try planes more was kept
 * by few frames other than the richest (film grain, noise): with 3 planes the photographs, CG,
 * text, HDR PQ, near-black and flat content of the benchmark's classes could not fill their
 * budget and were coded twice, 2 frames in 3 (bench/results/recode-classes.md). Which planes a
 * frame can spare is visible before tier-1 in its integers: the planes a budget reaches grow
 * with the bits the coefficients have above the step. est(d) counts, for every integer part
 * (|q| >> frac_bits, then d_b = min(d, the band's most) planes fewer), its bit length plus a
 * sign bit: an upper bound of sorts for the bits of plane data, not of MQ coding, which codes
 * the zeros of sparse planes in far less than a bit and the significant bits in about one.
 * On the content classes' frames that did not fill, the whole codestream of the tried steps
 * was 1.30 to 3.0 times est(d) (flat frames aside, whose estimate is 1 to 2 per cent of the
 * budget; bench/results/recode-classes.md), so the frame is taken to fill at d when C est(d)
 * reaches the budget (quant.h: C); the largest such d is coded first, none: once, at
 * qstep_rate's steps. A frame that still does not fill is coded again, as before (only speed
 * is lost).
 */
static int band_try_max(const J2kiBand *band, const J2kiCodingParams *cp, int depth)
{
    int m;
    if (cp->reversible || !rate_planes_apply(cp))
        return 0;
    m = j2ki_imin(5 - j2ki_quant_rate_planes(cp, depth),
                  j2ki_imin(band->expn - j2ki_imax(0, 2 - cp->guard_bits), band->nb_mag_bits - 1));
    return m < 0 ? 0 : m;
}

int j2ki_quant_band_try_max(const J2kiBand *band, const J2kiCodingParams *cp)
{
    return band_try_max(band, cp, cp->img.depth[band->comp]);
}

void j2ki_quant_hist_ref(const int32_t *buf, ptrdiff_t stride, uint32_t w, uint32_t h, int frac_bits, int dmax,
                         uint64_t hist[J2KI_QPRED_HIST])
{
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            hist[j2ki_quant_hist_bin(buf[(size_t)y * (size_t)stride + x], frac_bits, dmax)]++;
}

uint64_t j2ki_quant_pred_bits(const uint64_t hist[J2KI_QPRED_HIST], int d)
{
    uint64_t bits = 0;
    for (int m = 0; m <= J2KI_QPRED_MAX_D; m++) {
        int db = j2ki_imin(d, m);
        for (int n = db + 1; n < J2KI_QPRED_BINS; n++)
            bits += hist[m * J2KI_QPRED_BINS + n] * (uint64_t)(n - db + 1);
    }
    return bits;
}

int j2ki_quant_predict(const J2kiCodingParams *cp, const uint64_t hist[J2KI_QPRED_HIST])
{
    for (int d = j2ki_quant_try_planes(cp); d > 0; d--)
        if (J2KI_QPRED_C_NUM * j2ki_quant_pred_bits(hist, d) >= J2KI_QPRED_C_DEN * 8 * cp->frame_bytes)
            return d;
    return 0;
}

void j2ki_quant_predict_log(const J2kiLog *log, const J2kiCodingParams *cp, const uint64_t hist[J2KI_QPRED_HIST],
                            int d)
{
    char est[8 * (J2KI_QPRED_MAX_D + 1) + 1] = "";
    size_t n = 0;
    for (int k = 0; k <= j2ki_quant_try_planes(cp) && n < sizeof(est) - 8; k++)
        n += (size_t)snprintf(est + n, sizeof(est) - n, " %.3f",
                              (double)j2ki_quant_pred_bits(hist, k) / (8.0 * (double)cp->frame_bytes));
    j2ki_log(log, J2KC_LOG_DEBUG, "qstep_try: the frame is coded first with %d bit-plane%s more (estimated "
             "rate / budget at 0..%d planes more:%s)", d, d == 1 ? "" : "s", j2ki_quant_try_planes(cp), est);
}

/*
 * Extra magnitude bits the 5/3 worst case needs above the nominal R_b (+1 for RCT chroma):
 * the L1 norms of the cascaded 5/3 analysis filters (1-D, any level) are at most 1.72 (low)
 * and 2.87 (high), so a band's coefficients reach at most 2.94 (LL), 2.46 (HL, LH, relative to
 * their nominal gain 2) and 2.05 (HH, relative to 4) times the nominal range: 2 bits cover
 * every band of a transformed component, 1 bit the untransformed one (|-2^(depth-1)| needs
 * depth bits). When the guard bits are fewer, epsilon_b is raised instead, so that a
 * reversible code-block never needs more than M_b bits. (9/7: 1.38 and 2.63, 1 bit; its
 * quantiser saturates instead, see j2ki_quant_sample.)
 */
static int rev_needed_guard(int level) { return level > 0 ? 2 : 1; }

void j2ki_quant_band_setup(J2kiBand *band, const J2kiCodingParams *cp, int depth)
{
    int gain = band->orient == 0 ? 0 : band->orient == 3 ? 2 : 1;   /* log2(gain_b) */
    int c = band->comp;
    int mct_on = cp->mct && cp->img.nb_comps >= 3 && c < 3;
    double w2 = mct_on ? j2ki_mct_synthesis_weight2(cp->reversible, c) : 1.0;
    double norm = j2ki_dwt_synthesis_norm(cp->reversible, band->level, band->orient);
    int g = cp->guard_bits;

    if (cp->reversible) {
        /* RCT chroma (B-G, R-G) has one more bit (G.2); luma gets it too so that every
         * component shares one QCD (DCI and broadcast profiles forbid QCC) */
        int extra = mct_on ? 1 : 0;
        band->expn = depth + gain + extra + j2ki_imax(0, rev_needed_guard(band->level) - g);
        band->mant = 0;
        band->nb_mag_bits = g + band->expn - 1;
        band->frac_bits = 0;
        band->step = 1.0f;
        band->inv_step = 1.0f;
        band->dist_weight = norm * norm * w2;
    } else {
        int rb = depth + gain;
        /* the step depends on the band only, not on the component, so one QCD serves every
         * component (profiles forbid QCC); the MCT weight enters the distortion weight, where
         * rate control balances the components */
        double delta = ldexp(base_step(depth), j2ki_quant_rate_planes(cp, depth)) / norm;
        int e, expn, mant, expn_max = 31 - g, expn_min = j2ki_imax(0, 2 - g);
        /* a profile's bound on M_b = G + epsilon_b - 1 (IMF HT: Ccap15's B, T.814 A.3) makes
         * the finest steps coarser; the quantiser saturates at 2^M_b - 1 either way */
        if (cp->max_mag_bits > 0)
            expn_max = j2ki_imax(expn_min, j2ki_imin(expn_max, cp->max_mag_bits - g + 1));
        /* delta / 2^R_b = f 2^e, f in [0.5, 1) -> 2^-(1-e) (1 + mu / 2^11) */
        double f = frexp(ldexp(delta, -rb), &e);
        double step;

        expn = 1 - e;
        mant = (int)floor((2.0 * f - 1.0) * 2048.0 + 0.5);
        if (mant == 2048) {                      /* rounded up to the next power of two */
            mant = 0;
            expn--;
        }
        /* epsilon_b is 5 bits (A.6.4); M_b = G + epsilon_b - 1 stays in 1..30 so that
         * magnitude and fractional bits fit a positive int32 */
        if (expn > expn_max) {
            expn = expn_max;
            mant = 0;
        }
        if (expn < expn_min) {
            expn = expn_min;
            mant = 2047;
        }
        step = ldexp(1.0 + mant / 2048.0, rb - expn);   /* exact: 12 significant bits */
        band->expn = expn;
        band->mant = mant;
        band->nb_mag_bits = g + expn - 1;
        band->frac_bits = j2ki_imax(0, j2ki_imin(J2KI_FRACBITS, 30 - band->nb_mag_bits));
        band->step = (float)step;
        band->inv_step = (float)(ldexp(1.0, band->frac_bits) / step);
        band->dist_weight = step * step * norm * norm * w2;
        /* qstep_try's plan: the same band with d planes fewer (K + d at most 5 in all, M_b at
         * least 1, epsilon_b in range). The quantiser's integers stay those of the plan above
         * (inv_step unchanged, d more fractional bits, so M_b + frac_bits is unchanged too) and
         * the distortion units shrink by 4^d where the weight grows by as much: rate control
         * sees the same slopes for the passes both plans code. */
        if (cp->qstep_extra > 0) {
            int d = j2ki_imin(cp->qstep_extra, band_try_max(band, cp, depth));
            if (d > 0) {
                band->expn -= d;
                band->nb_mag_bits -= d;
                band->frac_bits += d;
                band->step = (float)ldexp(step, d);
                band->dist_weight = ldexp(band->dist_weight, 2 * d);
            }
        }
    }
}

void j2ki_quant_fwd_ref(void *buf, ptrdiff_t stride, uint32_t w, uint32_t h,
                        float inv_step, int nb_mag_bits, int frac_bits)
{
    /* saturation: integer part 2^M_b - 1, every fractional bit set */
    int32_t max_mag = (int32_t)(((int64_t)1 << (nb_mag_bits + frac_bits)) - 1);
    unsigned char *base = buf;
    uint32_t x, y;

    for (y = 0; y < h; y++) {
        unsigned char *row = base + 4 * (size_t)y * (size_t)stride;
        for (x = 0; x < w; x++) {
            float c;
            int32_t q;
            memcpy(&c, row + 4 * (size_t)x, 4);   /* same storage: float in, int32 out */
            q = j2ki_quant_sample(c, inv_step, max_mag);
            memcpy(row + 4 * (size_t)x, &q, 4);
        }
    }
}
