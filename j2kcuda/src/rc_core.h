/*
 * Per-code-block maths of PCRD-opt rate control, shared by the reference backend (rc.c) and
 * the CUDA backend (one thread per code-block): the convex hull of a code-block's
 * rate-distortion points, the truncation point a slope threshold selects, and the fixed-point
 * residual distortion of a truncation used for PSNR estimates.
 *
 * Everything here is per code-block and in a fixed operation order, so host and device give
 * bit-identical doubles (compile without FMA contraction: -ffp-contract=off / --fmad=false).
 * Totals across code-blocks are integers (bytes, fixed-point distortion), never float sums.
 *
 * Rate-distortion points of a code-block (ISO/IEC 15444-1 Annex J.14.4, the PCRD-opt example):
 * point k (0 <= k <= nb_passes) is "the first k passes included": rate R_k = passes[k-1].rate
 * (R_0 = 0), cumulative distortion decrease D_k = passes[0].dist + ... + passes[k-1].dist
 * (D_0 = 0), summed in that order. Valid truncation points are the vertices of the upper convex
 * hull of these points where D still increases; their slopes (D_k - D_h) / (R_k - R_h) from the
 * previous vertex h strictly decrease along the hull.
 */
#ifndef J2KI_RC_CORE_H
#define J2KI_RC_CORE_H

#include "j2ki.h"
#include "plan.h"

/** Passes considered by the hull; later passes (never produced by a Part-1 coder, which has
 *  at most 3 * 38 - 2) are never truncation points. */
#define J2KI_RC_MAX_PASSES 255

/** Slope given to a vertex reached with no extra bytes (a pass of zero length that lowers the
 *  distortion): larger than any real slope, still finite so thresholds can be compared. */
#define J2KI_RC_SLOPE_MAX 1e300

/** Fixed-point scale of residual distortions: 2^32 units per (peak^2) of squared error. */
#define J2KI_RC_DIST_ONE 4294967296.0
/** Largest fixed-point residual of one code-block (2^46: a mean squared error of 4 peak^2 over
 *  4096 samples), so a sum over 2^17 code-blocks cannot overflow 63 bits. */
#define J2KI_RC_DIST_CBLK_MAX ((int64_t)1 << 46)

/** Slope of the hull segment from point (r0, d0) to point (r1, d1), unweighted; r1 > r0 or not. */
J2KI_HD double j2ki_rc_seg_slope(uint32_t r0, double d0, uint32_t r1, double d1)
{
    return r1 > r0 ? (d1 - d0) / (double)(r1 - r0) : J2KI_RC_SLOPE_MAX;
}

/**
 * Computes passes[k].slope for one code-block: weight * (hull slope) for each pass that ends on
 * a hull vertex (J2KI_RC_SLOPE_MAX, unweighted, for a vertex that costs no bytes), 0 for every
 * other pass. weight is the band's dist_weight (tier-1 units to
 * squared image error); a weight that is not > 0 puts no pass on the hull.
 *
 * Monotone-chain scan with a stack of vertices. While building, passes[k-1].slope holds D_k
 * (the cumulative distortion), so the only scratch is the stack of vertex indices; vertex
 * slopes are recomputed from the stored D with the same expression when needed, which gives
 * the same double each time. A new point k first needs D_k > D_top; then vertices are popped
 * while the slope into k is >= the top's own slope (collinear points are not vertices) or the
 * top has the same rate as k.
 */
J2KI_HD void j2ki_rc_hull_passes(J2kiPass *passes, int nb_passes, double weight)
{
    uint8_t stk[J2KI_RC_MAX_PASSES + 1];
    int n = nb_passes < J2KI_RC_MAX_PASSES ? nb_passes : J2KI_RC_MAX_PASSES;
    int top = 0, k, j;
    double d = 0.0;

    for (k = 0; k < nb_passes; k++) {
        d = d + passes[k].dist;
        passes[k].slope = d;
    }
    if (!(weight > 0.0)) {
        for (k = 0; k < nb_passes; k++)
            passes[k].slope = 0.0;
        return;
    }
    stk[0] = 0;
    for (k = 1; k <= n; k++) {
        uint32_t rk = passes[k - 1].rate;
        double dk = passes[k - 1].slope;
        for (;;) {
            int h = stk[top];
            uint32_t rh = h ? passes[h - 1].rate : 0;
            double dh = h ? passes[h - 1].slope : 0.0;
            if (!(dk > dh))
                break;                        /* no decrease from the hull's end: not a vertex */
            if (top > 0) {
                int g = stk[top - 1];
                uint32_t rg = g ? passes[g - 1].rate : 0;
                double dg = g ? passes[g - 1].slope : 0.0;
                if (rk <= rh || j2ki_rc_seg_slope(rh, dh, rk, dk) >= j2ki_rc_seg_slope(rg, dg, rh, dh)) {
                    top--;                    /* h lies on or under the chord g -> k */
                    continue;
                }
            }
            stk[++top] = (uint8_t)k;
            break;
        }
    }
    /* Replace D by slopes, from the last pass down, so a vertex's predecessor still holds D. */
    j = top;
    for (k = nb_passes; k >= 1; k--) {
        if (j > 0 && stk[j] == k) {
            int g = stk[j - 1];
            uint32_t rg = g ? passes[g - 1].rate : 0;
            double dg = g ? passes[g - 1].slope : 0.0;
            double s = j2ki_rc_seg_slope(rg, dg, passes[k - 1].rate, passes[k - 1].slope);
            s = s < J2KI_RC_SLOPE_MAX ? s * weight : J2KI_RC_SLOPE_MAX;
            passes[k - 1].slope = s < J2KI_RC_SLOPE_MAX ? s : J2KI_RC_SLOPE_MAX;
            j--;
        } else {
            passes[k - 1].slope = 0.0;
        }
    }
}

/**
 * Truncation point chosen by a threshold: the number of passes up to the last hull vertex whose
 * slope is > t, or >= t when inclusive. t < 0 selects every coded pass (no rate control).
 */
J2KI_HD int j2ki_rc_cblk_select(const J2kiPass *passes, int nb_passes, double t, int inclusive)
{
    int n = 0, k;
    if (t < 0.0)
        return nb_passes;
    for (k = 0; k < nb_passes; k++) {
        double s = passes[k].slope;
        if (s > 0.0 && (s > t || (inclusive && s == t)))
            n = k + 1;
    }
    return n;
}

/** Slope of the next hull vertex after the first n passes (the largest slope not included),
 *  0 when none is left. */
J2KI_HD double j2ki_rc_cblk_next_slope(const J2kiPass *passes, int nb_passes, int n)
{
    int k;
    for (k = n; k < nb_passes; k++)
        if (passes[k].slope > 0.0)
            return passes[k].slope;
    return 0.0;
}

/**
 * Fixed-point squared error left by keeping the first n passes: the tier-1 distortion of the
 * passes n..nb_passes-1 (summed in that order) times scale = dist_weight / peak^2 * 2^32,
 * rounded to an integer and clamped to +-J2KI_RC_DIST_CBLK_MAX. It is negative when the passes
 * left out would have raised the error (a refinement can). Summing these integers over
 * code-blocks gives the same total in any order, on host and device.
 */
J2KI_HD int64_t j2ki_rc_cblk_residual(const J2kiPass *passes, int nb_passes, int n, double scale)
{
    double rem = 0.0, v, a;
    int64_t q;
    int k;
    for (k = n; k < nb_passes; k++)
        rem = rem + passes[k].dist;
    v = rem * scale;
    a = v < 0.0 ? -v : v;
    if (!(a < (double)J2KI_RC_DIST_CBLK_MAX))
        q = a == a ? (int64_t)J2KI_RC_DIST_CBLK_MAX : 0;
    else
        q = (int64_t)(a + 0.5);
    return v < 0.0 ? -q : q;
}

#endif /* J2KI_RC_CORE_H */
