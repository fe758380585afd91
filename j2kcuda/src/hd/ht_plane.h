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
 * ref/ht_plane.c finds the slope at which the blocks' picks fill the budget, then codes the
 * whole sets (cleanup, SigProp, MagRef) at the planes around each pick (J2KI_HT_PLANE_MEASURE):
 * their exact bytes and distortions are the truncation points PCRD-opt will see, so the slope
 * is found again over all of them (the model's cleanup elsewhere) and each block's set is the
 * one holding its best point at that slope (with the bytes measured, a coarser set would only
 * leave budget unused). A cleanup codes every plane above its
 * own, so a later HT set of a code-block supersedes the earlier ones: in a one-layer
 * codestream no choice of several sets beats the best single set, which this search finds
 * when every plane is measured. Written for host and device (J2KI_HD); only the reference
 * backend runs it so far.
 */
#ifndef J2KI_HT_PLANE_H
#define J2KI_HT_PLANE_H

#include <stdint.h>

#include "core/j2ki.h"
#include "hd/ht_core.h"

#define J2KI_HT_MAX_PLANES     32
/** CxtVLC codeword plus U-VLC of a significant quad, in quarter bits (about 3 bits). */
#define J2KI_HT_MODEL_VLC_Q4   12
/** MEL bits of an insignificant quad, in quarter bits (runs code them at about 1/4 bit). */
#define J2KI_HT_MODEL_MEL_Q4   1
/** Planes each side of the model's pick whose whole sets are coded to measure their points
 *  (the rest of the block's planes keep the model's cleanup, scaled by the ratio measured at
 *  the pick). 3 (up to 7 sets a block) gave the PSNR of measuring every plane on the bench
 *  frames, and 1 did not near the full rate (bench/results/ht-plane-choice.md). */
#define J2KI_HT_PLANE_MEASURE  3
/** Packet header bytes counted per code-block when the budget is shared out (inclusion, zero
 *  planes, passes and two lengths come to 2-4 bytes a contributing block). */
#define J2KI_HT_PLANE_HDR_BYTES 3

/** Per plane b < top: q4[b] modelled quarter bits of a cleanup at b, dist[b] its distortion
 *  decrease (tier-1 units). Returns top (0 for a block of zeros). */
J2KI_HD int j2ki_ht_plane_stats(const int32_t *coefs, ptrdiff_t stride, int w, int h, int frac_bits,
                                uint64_t *q4, double *dist)
{
    uint32_t acc = 0;
    int top = 0;
    double unit = 1.0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int32_t v = coefs[(ptrdiff_t)y * stride + x];
            acc |= (v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v) >> frac_bits;
        }
    while (acc) {
        top++;
        acc >>= 1;
    }
    for (int i = 0; i < frac_bits; i++)
        unit *= 0.5;
    for (int b = 0; b < top; b++) {
        q4[b] = 0;
        dist[b] = 0.0;
    }
    for (int qy = 0; qy < (h + 1) / 2; qy++)
        for (int qx = 0; qx < (w + 1) / 2; qx++) {
            uint32_t a[4], q[4];
            for (int n = 0; n < 4; n++) {
                int x = 2 * qx + (n >> 1), y = 2 * qy + (n & 1);
                a[n] = q[n] = 0;
                if (x < w && y < h) {
                    int32_t v = coefs[(ptrdiff_t)y * stride + x];
                    a[n] = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
                    q[n] = a[n] >> frac_bits;
                }
            }
            for (int b = 0; b < top; b++) {
                int nsig = 0, emax = 0;
                double step = 1.0;
                for (int i = 0; i < b; i++)
                    step *= 2.0;
                for (int n = 0; n < 4; n++) {
                    uint32_t mu = q[n] >> b;
                    if (mu) {
                        double xv = (double)a[n] * unit, e = xv - ((double)mu + 0.5) * step;
                        nsig++;
                        emax = j2ki_imax(emax, j2ki_ht_exponent(mu));
                        dist[b] += xv * xv - e * e;
                    }
                }
                q4[b] += nsig ? (uint64_t)(4 * nsig * emax + J2KI_HT_MODEL_VLC_Q4) : J2KI_HT_MODEL_MEL_Q4;
            }
        }
    return top;
}

/** The plane a block picks at slope lambda (weighted distortion per byte): the b maximising
 *  weight * dist[b] - lambda * bytes(b), or top when coding nothing is best. */
J2KI_HD int j2ki_ht_plane_pick(const uint64_t *q4, const double *dist, int top, double weight,
                               double lambda)
{
    int best = top;
    double best_v = 0.0;
    for (int b = 0; b < top; b++) {
        double v = weight * dist[b] - lambda * ((double)q4[b] / 32.0);
        if (v > best_v) {
            best_v = v;
            best = b;
        }
    }
    return best;
}

#endif
