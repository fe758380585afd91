/*
 * The HT set's bit-plane under a byte budget (ISO/IEC 15444-15 leaves the choice to the
 * encoder): a code-block's HT set at bit-plane p offers PCRD-opt three truncation points,
 * the cleanup at p and SigProp / MagRef at p - 1, so p must be chosen before coding, near
 * where the budget's distortion-rate slope falls for that block.
 *
 * The estimate is per code-block and plane b: the exact distortion decrease of a cleanup at
 * b (midpoint reconstruction, tier-1 units) and a model of its bytes: per significant quad
 * (significant samples) x (largest exponent) MagSgn bits plus J2KI_HT_MODEL_VLC_Q4 quarter
 * bits of CxtVLC and U-VLC, per insignificant quad J2KI_HT_MODEL_MEL_Q4 quarter bits of MEL.
 * ref/ht_plane.c finds the slope at which the blocks' picks fill the budget, then measures the
 * whole sets (cleanup, SigProp, MagRef: coded, their bytes counted, not stored) at the planes
 * around each pick (J2KI_HT_PLANE_MEASURE):
 * their exact bytes and distortions are the truncation points PCRD-opt will see, so the slope
 * is found again over all of them (the model's cleanup elsewhere) and each block's set is the
 * one holding its best point at that slope (with the bytes measured, a coarser set would only
 * leave budget unused). Where the model's slope is far off (0 when the model's bytes of every
 * plane fit a high budget while the exact ones do not), the slope found over the measured
 * points picks planes the model alone priced: those blocks' sets are measured again around
 * the new pick and the slope found again (J2KI_HT_PLANE_ROUNDS). A cleanup codes every plane
 * above its own, so a later HT set of a code-block supersedes the earlier ones: in a one-layer
 * codestream no choice of several sets beats the best single set, which this search finds
 * when every plane is measured.
 *
 * Written once for both backends (J2KI_HD): ref/ht_plane.c runs the steps on the worker pool,
 * cuda/ht_kern.cu a thread per block or measured set (each bisection step of a slope search
 * a launch over every block, its decisions replayed from the steps' sums). The byte
 * sums are integers in 1/32 bytes (q4 units: exact, whatever the order of the sum); the slope
 * search bisects the bit patterns of positive doubles (ordered as their values), so it ends on
 * the same double on either side with no exp2 / log2, whose last bit differs between libm and
 * the device; the per-block doubles are the same expressions, never contracted.
 */
#ifndef J2KI_HT_PLANE_H
#define J2KI_HT_PLANE_H

#include <stdint.h>

#include "core/j2ki.h"
#include "core/plan.h"
#include "hd/ht_core.h"

#define J2KI_HT_MAX_PLANES     32
/** CxtVLC codeword plus U-VLC of a significant quad, in quarter bits (about 3 bits). */
#define J2KI_HT_MODEL_VLC_Q4   12
/** MEL bits of an insignificant quad, in quarter bits (runs code them at about 1/4 bit). */
#define J2KI_HT_MODEL_MEL_Q4   1
/** Planes each side of the model's pick whose whole sets are coded to measure their points
 *  (the rest of the block's planes keep the model's cleanup, scaled by the ratio measured at
 *  the pick). 3 (up to 7 sets a block and round) gave the PSNR of measuring every plane on
 *  the bench frames, and 1 did not near the full rate (bench/results/ht-plane-choice.md). */
#define J2KI_HT_PLANE_MEASURE  3
/** Measuring rounds: the first around the model's picks, each later one around the picks of
 *  the slope found over the measured points, for the blocks whose pick lies outside them
 *  (the choice of 2: bench/results/ht-plane-choice.md). */
#define J2KI_HT_PLANE_ROUNDS   2
/** Packet header bytes counted per code-block when the budget is shared out (inclusion, zero
 *  planes, passes and two lengths come to 2-4 bytes a contributing block). */
#define J2KI_HT_PLANE_HDR_BYTES 3
/** Sets coded per block at most. */
#define J2KI_HT_PLANE_SETS     (2 * J2KI_HT_PLANE_MEASURE + 1)
/** The slope search's range: the bit patterns of 2^-80 and 2^80 (about 60 bisection steps end
 *  on adjacent doubles). */
#define J2KI_HT_SLOPE_BITS_MIN 0x3AF0000000000000ull
#define J2KI_HT_SLOPE_BITS_MAX 0x44F0000000000000ull

/** One code-block's statistics and measured points. */
typedef struct J2kiHtPlaneStat {
    uint64_t q4[J2KI_HT_MAX_PLANES];    /* per plane: the cleanup's bytes, 1/32 units (model
                                           or, once measured, exact) */
    double   dist[J2KI_HT_MAX_PLANES];  /* the cleanup's distortion decrease (model) */
    uint32_t rate[J2KI_HT_PLANE_SETS][3];   /* the set at lo + k: cleanup, + SigProp, + MagRef */
    double   sdist[J2KI_HT_PLANE_SETS][3];  /* their cumulative distortion decreases */
    int32_t  top;                       /* magnitude planes (0: a block of zeros) */
    int32_t  lo, hi;                    /* the measured planes (lo > hi: none) */
    uint32_t exact;                     /* planes whose q4 is a measured cleanup's (top <= 32:
                                           j2ki_ht_top_planes counts the bits of a uint32_t) */
    int32_t  refine;                    /* the sets have SigProp and MagRef (ht_refine) */
    /* a measuring round's sets before they become the block's points (the device counts them
     * one thread a set, then j2ki_ht_plane_commit): the planes mlo..mhi around mb0 (mlo > mhi:
     * none this round), per set its points and whether it did not fit */
    uint32_t mrate[J2KI_HT_PLANE_SETS][3];
    double   msdist[J2KI_HT_PLANE_SETS][3];
    int32_t  mb0, mlo, mhi;
    uint8_t  mfail[J2KI_HT_PLANE_SETS];
} J2kiHtPlaneStat;

/** The start of a block's statistics: top magnitude planes, nothing measured yet. */
J2KI_HD void j2ki_ht_plane_stats_head(J2kiHtPlaneStat *st, int top, int refine)
{
    st->top = top;
    st->lo = 1;
    st->hi = 0;
    st->exact = 0;
    st->refine = refine;
    st->mlo = 1;
    st->mhi = 0;
}

/** Quad (qx, qy)'s share of the model at plane b (j2ki_ht_plane_stats_at): its modelled
 *  quarter bits added to *q4, its distortion decrease to *dist; unit = 2^-frac_bits, step =
 *  2^b. */
J2KI_HD void j2ki_ht_plane_stats_quad(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits, int b,
                                      double unit, double step, int qx, int qy, uint64_t *q4, double *dist)
{
    int nsig = 0, emax = 0;
    for (int n = 0; n < 4; n++) {
        int x = 2 * qx + (n >> 1), y = 2 * qy + (n & 1);
        if (x < w && y < h) {
            int32_t v = coefs[(ptrdiff_t)y * stride + x];
            uint32_t a = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
            uint32_t mu = (a >> frac_bits) >> b;
            if (mu) {
                double xv = (double)a * unit, e = xv - ((double)mu + 0.5) * step;
                nsig++;
                emax = j2ki_imax(emax, j2ki_ht_exponent(mu));
                *dist += xv * xv - e * e;
            }
        }
    }
    *q4 += nsig ? (uint64_t)(4 * nsig * emax + J2KI_HT_MODEL_VLC_Q4) : J2KI_HT_MODEL_MEL_Q4;
}

/** The model's statistics of plane b of a w x h block (values as t1_ref.h describes): q4[b]
 *  modelled quarter bits of a cleanup at b, dist[b] its distortion decrease (tier-1 units).
 *  The distortion is J2KI_HT_DIST_LANES partial sums, quad q (in scan order) to partial q %
 *  32, added in lane order: the device gives each partial a lane (cuda/ht_kern.cu STATS). */
J2KI_HD void j2ki_ht_plane_stats_at(J2kiHtPlaneStat *st, const int32_t *coefs, ptrdiff_t stride, int w, int h,
                                    int frac_bits, int b)
{
    double unit, step, part[J2KI_HT_DIST_LANES], dist = 0.0;
    uint64_t q4 = 0;
    const int qw = (w + 1) / 2;
    j2ki_ht_dist_scale(frac_bits, b, &unit, &step);
    for (int l = 0; l < J2KI_HT_DIST_LANES; l++)
        part[l] = 0.0;
    for (int q = 0; q < qw * ((h + 1) / 2); q++)
        j2ki_ht_plane_stats_quad(coefs, stride, w, h, frac_bits, b, unit, step, q % qw, q / qw, &q4,
                                 &part[q % J2KI_HT_DIST_LANES]);
    for (int l = 0; l < J2KI_HT_DIST_LANES; l++)
        dist += part[l];
    st->q4[b] = q4;
    st->dist[b] = dist;
}

/** The model's statistics of a w x h block, every plane below its top. refine: the sets will
 *  have refinement passes (ht_refine). */
J2KI_HD void j2ki_ht_plane_stats(J2kiHtPlaneStat *st, const int32_t *coefs, ptrdiff_t stride, int w, int h,
                                 int frac_bits, int refine)
{
    const int top = j2ki_ht_top_planes(coefs, stride, w, h, frac_bits);
    j2ki_ht_plane_stats_head(st, top, refine);
    for (int b = 0; b < top; b++)
        j2ki_ht_plane_stats_at(st, coefs, stride, w, h, frac_bits, b);
}

/** The block's best point at slope lambda (weighted distortion per byte) over every plane:
 *  the measured sets' points where measured (three, or the cleanup alone without refinement),
 *  the model's cleanup elsewhere. Returns the
 *  set's plane, or top when coding nothing is best; its bytes in 1/32 units in *bytes32. */
J2KI_HD int j2ki_ht_plane_point(const J2kiHtPlaneStat *st, double weight, double lambda, uint64_t *bytes32)
{
    int best = st->top;
    double best_v = 0.0;
    *bytes32 = 0;
    for (int b = 0; b < st->top; b++) {
        if (b >= st->lo && b <= st->hi) {
            for (int k = 0; k < (b && st->refine ? 3 : 1); k++) {
                double v = weight * st->sdist[b - st->lo][k] - lambda * (double)st->rate[b - st->lo][k];
                if (v > best_v) {
                    best_v = v;
                    best = b;
                    *bytes32 = (uint64_t)st->rate[b - st->lo][k] * 32u;
                }
            }
        } else {
            double v = weight * st->dist[b] - lambda * ((double)st->q4[b] / 32.0);
            if (v > best_v) {
                best_v = v;
                best = b;
                *bytes32 = st->q4[b];
            }
        }
    }
    return best;
}

/** The planes whose sets a measuring round codes for a block (st->top > 0): lo..hi around its
 *  pick at slope lambda, which is returned. */
J2KI_HD int j2ki_ht_plane_span(const J2kiHtPlaneStat *st, double weight, double lambda, int *lo, int *hi)
{
    uint64_t unused;
    int b0 = j2ki_imin(j2ki_ht_plane_point(st, weight, lambda, &unused), st->top - 1);
    *lo = j2ki_imax(b0 - J2KI_HT_PLANE_MEASURE, 0);
    *hi = j2ki_imin(b0 + J2KI_HT_PLANE_MEASURE, st->top - 1);
    return b0;
}

/** One measured set: the points of the HT set at plane b (cleanup, + SigProp, + MagRef: rates
 *  in bytes, cumulative distortion decreases) as j2ki_ht_encode_set would code it into cap
 *  bytes, counted without storing a byte. Returns 0, or < 0 when it does not fit cap. */
J2KI_HD int j2ki_ht_measure_set(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits, int b,
                                int refine, uint32_t cap, uint32_t rate[3], double sdist[3])
{
    J2kiHtSig sg;
    uint32_t lcup, lsp = 0, lmr = 0;
    double d[3];
    refine = refine && b > 0;
    if (j2ki_ht_cleanup(coefs, stride, w, h, frac_bits, b, NULL, &sg, NULL, cap, &lcup) < 0 ||
        (refine && j2ki_ht_refine(coefs, stride, w, h, frac_bits, b, &sg, NULL, cap - lcup, &lsp, &lmr) < 0))
        return -1;
    j2ki_ht_dist(coefs, stride, w, h, frac_bits, b, refine ? sg.any : NULL, d);
    rate[0] = lcup;
    rate[1] = lcup + lsp;
    rate[2] = lcup + lsp + lmr;
    sdist[0] = d[0];
    sdist[1] = d[0] + d[1];
    sdist[2] = d[0] + d[1] + d[2];
    return 0;
}

/** The sets of planes lo..hi around the pick b0, every one measured (rate[b - lo], sdist[b -
 *  lo]), become the block's points there; its other planes keep the model's cleanup, scaled
 *  by the ratio measured at the pick (the model's error is mostly a factor per block), or the
 *  exact bytes of a cleanup measured in an earlier round. */
J2KI_HD void j2ki_ht_plane_commit(J2kiHtPlaneStat *st, int b0, int lo, int hi, const uint32_t (*rate)[3],
                                  const double (*sdist)[3])
{
    double ratio = 1.0;
    for (int b = lo; b <= hi; b++)
        for (int k = 0; k < 3; k++) {
            st->rate[b - lo][k] = rate[b - lo][k];
            st->sdist[b - lo][k] = sdist[b - lo][k];
        }
    if (st->q4[b0])
        ratio = (double)st->rate[b0 - lo][0] * 32.0 / (double)st->q4[b0];
    for (int b = 0; b < st->top; b++)
        if (b >= lo && b <= hi)
            st->q4[b] = (uint64_t)st->rate[b - lo][0] * 32u;
        else if (!(st->exact >> b & 1u))
            st->q4[b] = (uint64_t)((double)st->q4[b] * ratio);
    for (int b = lo; b <= hi; b++)
        st->exact |= 1u << b;
    st->lo = lo;
    st->hi = hi;
}

/** Second look at one block: the sets around its pick at slope lambda are measured (as they
 *  would be coded into cap bytes) and become its points there (j2ki_ht_plane_commit). The
 *  points change only once every set has been measured: a set that does not fit cap leaves
 *  the block's points as they were. */
J2KI_HD void j2ki_ht_plane_measure(J2kiHtPlaneStat *st, const int32_t *coefs, ptrdiff_t stride, int w, int h,
                                   int frac_bits, double weight, double lambda, uint32_t cap)
{
    uint32_t rate[J2KI_HT_PLANE_SETS][3];
    double sdist[J2KI_HT_PLANE_SETS][3];
    int b0, lo, hi;
    if (!st->top)
        return;
    b0 = j2ki_ht_plane_span(st, weight, lambda, &lo, &hi);
    for (int b = lo; b <= hi; b++)
        if (j2ki_ht_measure_set(coefs, stride, w, h, frac_bits, b, st->refine, cap, rate[b - lo], sdist[b - lo]) < 0)
            return;
    j2ki_ht_plane_commit(st, b0, lo, hi, (const uint32_t (*)[3])rate, (const double (*)[3])sdist);
}

/** Whether the block's pick at slope lambda lies outside its measured planes (a plane the
 *  model alone priced): its sets are measured again around that pick. Asked after the first
 *  round only, where a block with no measured plane (lo > hi) is one whose sets did not fit
 *  its buffer: it is not tried again. */
J2KI_HD int j2ki_ht_plane_stale(const J2kiHtPlaneStat *st, double weight, double lambda)
{
    uint64_t unused;
    const int b = j2ki_ht_plane_point(st, weight, lambda, &unused);
    return b < st->top && st->lo <= st->hi && (b < st->lo || b > st->hi);
}

/** The plane of the set a block codes at slope lambda (its best point's, at most 31). */
J2KI_HD int j2ki_ht_plane_final(const J2kiHtPlaneStat *st, double weight, double lambda)
{
    uint64_t unused;
    return j2ki_imin(j2ki_ht_plane_point(st, weight, lambda, &unused), 31);
}

/** The bytes the blocks' picks may fill, in 1/32 units: the budget less the bytes no choice
 *  changes (fixed: ref/ht_plane.h's j2ki_ht_plane_fixed_bytes) and J2KI_HT_PLANE_HDR_BYTES of
 *  packet header per code-block (negative: nothing fits). */
J2KI_HD int64_t j2ki_ht_plane_target32(uint64_t frame_bytes, int64_t fixed, uint32_t nb_cblks)
{
    return 32 * ((int64_t)frame_bytes - fixed - J2KI_HT_PLANE_HDR_BYTES * (int64_t)nb_cblks);
}

/** Whether picks of sum32 bytes (1/32 units) are over target32. */
J2KI_HD int j2ki_ht_plane_over(uint64_t sum32, int64_t target32)
{
    return target32 < 0 || sum32 > (uint64_t)target32;
}

/** The slope whose bit pattern is bits (a positive double). */
J2KI_HD double j2ki_ht_slope(uint64_t bits)
{
    union { uint64_t u; double d; } c;
    c.u = bits;
    return c.d;
}

/** The slope search's step: the midpoint of the bit patterns lo < hi. The search keeps
 *  "over target at lo, within it at hi" (bytes fall as the slope grows) until hi = lo + 1,
 *  and ends on hi: the smallest double in range whose picks fit. */
J2KI_HD uint64_t j2ki_ht_slope_mid(uint64_t lo, uint64_t hi)
{
    return lo + (hi - lo) / 2;
}

#endif
