/*
 * Tier-1 early stop: the passes that rate control cannot choose are not coded.
 *
 * With a byte budget, PCRD-opt keeps only the passes whose hull slope reaches the final
 * threshold. At 250 Mb/s a 4K DCI frame keeps 7 % of the sample-weighted passes tier-1 codes
 * (2K DCI frames about a third): the rest is modelled and MQ-coded, then thrown away. Tier-1
 * therefore codes every code-block in chunks of bit-planes (J2KI_T1S_FIRST, then
 * J2KI_T1S_PLANES each, as the CUDA coder does anyway, t1_par_cuda.cuh) and, at decision steps s = 1 .. J2KI_T1S_STEPS, when chunks
 * 0 .. s - 1 of every block are coded, estimates the threshold and stops the blocks that
 * already have passes to spare:
 *
 *   1. every block's convex hull over its known passes (chunks 0 .. s - 1, or all of them if
 *      it has no more, or those it stopped with), on the causal rate estimates J2kiPass.est,
 *      which do not depend on what is coded later;
 *   2. the threshold T_s: walking all blocks' hull vertices from the steepest down, the slope
 *      at which the bytes taken first exceed the frame budget (none: T_s = 0, nobody stops);
 *   3. a block with more passes to come stops after its known passes when at least
 *      J2KI_T1S_MARGIN of them lie below T_s, and its known passes neither end in a dip of
 *      the distortion nor are still recovering from one (j2ki_t1s_decide).
 *
 * Why this rarely changes what rate control picks: more passes only add hull points, so at
 * any threshold each block's chosen rate can only grow; the budget is met at a higher
 * threshold once everything is coded, i.e. T_s is a lower bound of the final threshold (the
 * estimates are lower bounds of the rates, and the headers are left out of the budget, both of
 * which lower T_s further). A stopped block's passes below T_s stay unchosen; what it loses
 * are passes a whole bit-plane (the margin) below ones already rejected, which the convex,
 * ever flatter rate-distortion curve of bit-plane coding does not pick; where the known passes
 * show a curve that is not (a dip of the distortion, or its recovery), the block goes on. (The
 * chosen rate growing with the passes holds for any curve: at a threshold PCRD-opt picks the
 * point of largest D - T R, and new points only add candidates of larger R.) It is a rule of the
 * encoder, not of the standard: both backends apply it identically, so the codestreams of the
 * reference and the CUDA backend stay the same bytes. The reference backend codes every block
 * fully, replays the decisions (the estimates are causal, so they are the ones the CUDA coder
 * had at each step) and codes the stopped blocks again up to their limit; the CUDA backend's
 * column-parallel coder stops them between its chunk launches.
 *
 * Thresholds are compared as keys: the bits of the slope rounded to float (positive floats
 * order as their bit patterns), so that the device can sort them as 32-bit integers. Byte
 * sums are integers; the hull is rc_core.h's, bit-identical on host and device.
 *
 * Only J2KI_RC_BYTES uses it, below J2KI_T1S_MAX_BPS bits per sample (J2kcParams key
 * "t1_stop", off by default: params.c says why); SLOPE and PSNR rate control and lossless
 * coding code every pass.
 *
 * What it saves and costs, per content class and budget, with the rules above:
 * bench/results/t1-stop-fix.md (the reference backend's log says per frame how many blocks
 * stop and how many passes are not coded).
 */
#ifndef J2KI_T1_STOP_H
#define J2KI_T1_STOP_H

#include "hd/rc_core.h"

#define J2KI_T1S_PLANES 4   /**< bit-planes per chunk after the first (= T1P_PLANES of the CUDA coder) */
#ifndef J2KI_T1S_FIRST
/** Bit-planes of chunk 0 (1 + 3 (F - 1) passes): 3 cost quality on tests/quality.sh's gen8,
 *  with 2 the first estimate of the threshold is too low to stop many
 *  (bench/results/history.md#tier-1-early-stop). */
#define J2KI_T1S_FIRST  4
#endif
#define J2KI_T1S_STEPS  2   /**< decision steps: after chunks 0 and 1 (a third stopped almost
                                 no block; history.md#tier-1-early-stop) */
#define J2KI_T1S_MARGIN 3   /**< known passes below the threshold before a block stops */
/** Budgets of at least this many bits per sample code every pass: the decisions cost more than
 *  they save there (bench/results/history.md#tier-1-early-stop). */
#define J2KI_T1S_MAX_BPS 1

/** First bit-plane (counted from the most significant) of chunk c. */
J2KI_HD int j2ki_t1s_plane0(int c) { return c ? J2KI_T1S_FIRST + J2KI_T1S_PLANES * (c - 1) : 0; }

/** Passes in chunks 0 .. s - 1 (s >= 1): every pass of their bit-planes but the first SPP and MRP. */
J2KI_HD int j2ki_t1s_chunk_end(int s) { return 3 * j2ki_t1s_plane0(s) - 2; }

/** Passes of a block known at decision step s: lim when it stopped (lim > 0), all of its
 *  nb_passes when they end within chunks 0 .. s - 1, else those of chunks 0 .. s - 1. */
J2KI_HD int j2ki_t1s_known(int s, int nb_passes, uint32_t lim)
{
    int e = j2ki_t1s_chunk_end(s);
    if (lim)
        return (int)lim;
    return nb_passes < e ? nb_passes : e;
}

/** Sort key of a hull slope: the bits of the positive float nearest to it (0: not a vertex). */
J2KI_HD uint32_t j2ki_t1s_key(double slope)
{
    union { float f; uint32_t u; } v;
    if (!(slope > 0.0))
        return 0;
    v.f = (float)slope;
    return v.u;
}

/**
 * Step 1 for one block: the hull of its first n passes on the estimates (passes[].slope is
 * overwritten; rate control recomputes it), then for each of its max pass slots k a key and
 * the estimated bytes the vertex adds to the previous one (0, 0 for the others).
 */
J2KI_HD void j2ki_t1s_block_keys(J2kiPass *passes, int n, int max, double weight, uint32_t *key,
                                 uint32_t *bytes)
{
    uint32_t prev = 0;
    int k;
    j2ki_rc_hull_passes_by(passes, n, weight, 1);
    for (k = 0; k < max; k++) {
        uint32_t kk = k < n ? j2ki_t1s_key(passes[k].slope) : 0;
        key[k] = kk;
        bytes[k] = kk ? passes[k].est - prev : 0;
        if (kk)
            prev = passes[k].est;
    }
}

/**
 * Step 3 for one block after its keys (step 1) and the threshold key t (step 2): the pass
 * limit if it stops now, else 0. n: its known passes, nb_passes: all it has; passes: its
 * passes (.dist and .est of the first n are read), weight: its band's dist_weight.
 *
 * The premise of the stop is that the block's rate-distortion curve is convex beyond its
 * known passes (ISO/IEC 15444-1 J.14.4; EBCOT's PCRD-opt): no later pass pays more distortion
 * per byte than the last known ones, so those known to lie below T_s bound all that follow.
 * Bit-plane coding makes it so on average, not always: a refinement pass (D.3.3) of samples
 * that share their high bits (the LL band of a near-black frame, all at about one value) can
 * move each reconstruction away from its value, a negative distortion decrease that the next
 * refinement passes recover. The hull of the known passes then ends before that dip, whole
 * bit-planes of known passes lie "below T_s", and the passes that recover the dip, and those
 * after them, are not coded although PCRD-opt takes them. So a block stops only when
 *   1. at least J2KI_T1S_MARGIN known passes follow its last vertex with key > t;
 *   2. its known passes end at the largest cumulative distortion decrease they reach (the
 *      end of their hull, or level with it): no dip is waiting to be recovered;
 *   3. each of its last J2KI_T1S_MARGIN known passes, from its start to the end of the known
 *      passes, pays at most t: the curve's tail is flat, not recovering.
 * The distortions are summed in the order of the hull (rc_core.h) and compared as keys, so
 * host and device decide alike.
 */
J2KI_HD uint32_t j2ki_t1s_decide(const uint32_t *key, const J2kiPass *passes, int n, int nb_passes, double weight,
                                 uint32_t t)
{
    double d = 0.0, dmax = 0.0, dtail[J2KI_T1S_MARGIN];
    uint32_t rtail[J2KI_T1S_MARGIN];
    int sel = 0, k;
    if (!t || n >= nb_passes)
        return 0;
    for (k = 0; k < n; k++)
        if (key[k] > t)
            sel = k + 1;
    if (n - sel < J2KI_T1S_MARGIN)
        return 0;
    /* point k: the first k passes (rc_core.h); the tail's starts are points n - MARGIN .. n - 1 */
    for (k = 0; k < n; k++) {
        if (k >= n - J2KI_T1S_MARGIN) {
            dtail[k - (n - J2KI_T1S_MARGIN)] = d;
            rtail[k - (n - J2KI_T1S_MARGIN)] = k ? passes[k - 1].est : 0;
        }
        d = d + passes[k].dist;
        if (d > dmax)
            dmax = d;
    }
    if (d < dmax)
        return 0;                                   /* 2: a dip */
    for (k = 0; k < J2KI_T1S_MARGIN; k++) {
        double s;
        if (!(d > dtail[k]))
            continue;                               /* pays nothing */
        s = j2ki_rc_seg_slope(rtail[k], dtail[k], passes[n - 1].est, d);
        s = s < J2KI_RC_SLOPE_MAX ? s * weight : J2KI_RC_SLOPE_MAX;
        if (j2ki_t1s_key(s) > t)
            return 0;                               /* 3: the tail still pays */
    }
    return (uint32_t)n;
}

/* ---- the host side (ref/t1_stop.c): the decisions replayed on fully coded blocks ---- */

#ifdef __cplusplus
extern "C" {
#endif

/** 1 when the coding parameters use the early stop (t1_stop on, a byte budget). */
int j2ki_t1s_enabled(const J2kiCodingParams *cp);

struct J2kiPool;

/**
 * Step 2 of the rule above on a worker pool (threadpool.h; NULL: the calling thread): the key
 * at which the bytes of the entries, taken in decreasing key order, first exceed budget (0 when
 * they never do; key 0 entries are not vertices). Found without sorting: the threshold is the
 * largest key v whose entries of key >= v hold more than budget bytes, one digit at a time (11,
 * 11 and 10 bits of the key) from per-worker histograms of byte sums over the entries that
 * match the digits found so far. Sums of integers: the same answer for any thread count.
 * scratch: j2ki_t1s_pool_threshold_scratch_size bytes (8-aligned).
 */
uint32_t j2ki_t1s_threshold_pool(const uint32_t *key, const uint32_t *bytes, size_t n, uint64_t budget,
                                 struct J2kiPool *pool, void *scratch);
size_t j2ki_t1s_pool_threshold_scratch_size(int nb_threads);

/** Bytes of the work area of j2ki_t1s_plan_pool for the plan and the pool's thread count. */
size_t j2ki_t1s_pool_scratch_size(const J2kiPlan *plan, int nb_threads);

/**
 * The decisions of every step over the plan's code-blocks, coded fully (cb->nb_passes,
 * passes[].est, .dist): lim[i] = the pass limit of block i, or 0 when it is not stopped. Every
 * per code-block part (keys, decisions) and the threshold run on the pool (NULL: the calling
 * thread alone); the limits do not depend on the thread count. passes[].slope is overwritten.
 * work: j2ki_t1s_pool_scratch_size bytes for the pool's thread count (8-aligned). Returns 0, or
 * J2KC_ERR_NOMEM when work is NULL.
 */
int j2ki_t1s_plan_pool(J2kiPlan *plan, uint64_t budget, uint32_t *lim, void *work, struct J2kiPool *pool);

#ifdef __cplusplus
}
#endif

#endif /* J2KI_T1_STOP_H */
