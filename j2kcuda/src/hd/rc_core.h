/*
 * Per-code-block maths of PCRD-opt rate control, shared by the reference backend (rc_ref.c) and
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

#include "core/j2ki.h"
#include "core/plan.h"

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
J2KI_HD void j2ki_rc_hull_passes_by(J2kiPass *passes, int nb_passes, double weight, int est)
{
#define J2KI_RC_R(k) (est ? passes[k].est : passes[k].rate)
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
        uint32_t rk = J2KI_RC_R(k - 1);
        double dk = passes[k - 1].slope;
        for (;;) {
            int h = stk[top];
            uint32_t rh = h ? J2KI_RC_R(h - 1) : 0;
            double dh = h ? passes[h - 1].slope : 0.0;
            if (!(dk > dh))
                break;                        /* no decrease from the hull's end: not a vertex */
            if (top > 0) {
                int g = stk[top - 1];
                uint32_t rg = g ? J2KI_RC_R(g - 1) : 0;
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
            uint32_t rg = g ? J2KI_RC_R(g - 1) : 0;
            double dg = g ? passes[g - 1].slope : 0.0;
            double s = j2ki_rc_seg_slope(rg, dg, J2KI_RC_R(k - 1), passes[k - 1].slope);
            s = s < J2KI_RC_SLOPE_MAX ? s * weight : J2KI_RC_SLOPE_MAX;
            passes[k - 1].slope = s < J2KI_RC_SLOPE_MAX ? s : J2KI_RC_SLOPE_MAX;
            j--;
        } else {
            passes[k - 1].slope = 0.0;
        }
    }
#undef J2KI_RC_R
}

/** j2ki_rc_hull_passes_by on the passes' rates (est = 1: on their causal estimates, .est,
 *  for tier-1's early stop, t1_stop.h). */
J2KI_HD void j2ki_rc_hull_passes(J2kiPass *passes, int nb_passes, double weight)
{
    j2ki_rc_hull_passes_by(passes, nb_passes, weight, 0);
}

/**
 * qstep_try's test of one code-block after rate control (quant.h, j2ki_quant_try_planes): bit
 * comp of the result when the block has a pass on its convex hull (slope > 0), bit 16 + comp
 * when one of them was left out of the last layer (kept = layer_passes[nb_layers - 1]). The
 * frame's mask is the OR over its blocks; j2ki_rc_mask_fills reads it.
 */
J2KI_HD uint32_t j2ki_rc_cblk_hull_bits(const J2kiPass *passes, int nb_passes, int kept, int comp)
{
    uint32_t m = 0;
    for (int k = 0; k < nb_passes; k++)
        if (passes[k].slope > 0.0)
            m |= k < kept ? 1u << comp : (1u << comp) | (1u << (16 + comp));
    return m;
}

/** Whether a frame's mask (j2ki_rc_cblk_hull_bits) says that it fills its budgets: every
 *  component with passes on a hull had one left out, so rate control, not the steps, ended
 *  every component's coding. A component whose blocks were all kept whole might have taken
 *  finer planes (a per-component budget can bind one component while others have room). */
J2KI_HD int j2ki_rc_mask_fills(uint32_t mask, int nb_comps)
{
    int any = 0;
    for (int c = 0; c < nb_comps; c++) {
        if (!(mask & (1u << c)))
            continue;
        if (!(mask & (1u << (16 + c))))
            return 0;
        any = 1;
    }
    return any;
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

/* ==== the threshold search, shared by rc_ref.c (host) and rc_cuda.cu (a cooperative grid) ==== */

/*
 * The whole PCRD-opt decision procedure of rc_ref.c's file comment lives here as J2KI_HD code that
 * only ever looks at a J2kiRcCtx: thresholds, floors, budgets and the last measurement. Every
 * look at the code-blocks goes through an op (J2kiRcOps, J2KI_RC_OP), which the host implements
 * with loops over plan->cblks (rc_ref.c) and the device with grid-wide loops and reductions
 * (rc_cuda.cu: every thread of the grid runs this control code on its own copy of the
 * context, in lockstep, so an op may synchronise the grid). All decisions are made on integers
 * (byte counts, fixed-point distortions, bit patterns of doubles) or on doubles that are per
 * code-block and compared exactly, so the host and the device take the same path and choose
 * the same passes.
 * Nothing here calls libm: the values that need it (SLOPE's 2^slope, PSNR's limit, the
 * geometric layer divisors) are computed by the host once (j2ki_rc_ctx_init in rc_ref.c).
 */

#define J2KI_RC_MAX_PROBES  40   /* bisection probes of one threshold search (tier-2 sizings) */
#define J2KI_RC_MAX_REFINE  16   /* distinct slopes tried after the bisection */
#define J2KI_RC_PSNR_PROBES 64   /* PSNR needs no sizing: bisect to adjacent doubles */

enum { J2KI_RC_PRED_BYTES, J2KI_RC_PRED_PSNR };

/** One layer's threshold: a hull pass is included when its slope is > t, or == t in a
 *  code-block whose index is < k; t < 0 selects every coded pass. */
typedef struct J2kiRcCfg {
    double   t;
    uint32_t k;
} J2kiRcCfg;

typedef struct J2kiRcCtx J2kiRcCtx;
typedef struct J2kiRcPred J2kiRcPred;

/** What the search asks of the code-blocks (see the comment above). */
typedef struct J2kiRcOps {
    /** Hull of every code-block (j2ki_rc_hull_passes with its band's weight); sets smin, smax. */
    void    (*hull)(J2kiRcCtx *c);
    /** Writes layer_passes of every code-block for c's thresholds and floors (j2ki_rc_cblk_apply). */
    void    (*apply)(J2kiRcCtx *c);
    /** Sizes the current layer_passes exactly (as j2ki_t2_size): sets total, comp_len[],
     *  layer_len[] and returns 0, or returns < 0. */
    int     (*size)(J2kiRcCtx *c);
    /** Sum over code-blocks of j2ki_rc_cblk_residual of the last layer (exact int64), >= 0. */
    int64_t (*dist_sum)(J2kiRcCtx *c);
    /** j2ki_rc_cblk_next_slope over the code-blocks layer l may grow, maximum (rc_ref.c's rc_next_slope). */
    double  (*next_slope)(J2kiRcCtx *c, int l);
    /** Whether those code-blocks hold two distinct hull slopes in (lo, hi]. */
    int     (*can_split)(J2kiRcCtx *c, int l, double lo, double hi);
    /** Smallest and largest index i, klo <= i < khi, of a code-block holding a pass of slope
     *  exactly s (j2ki_rc_cblk_has_slope); *first > *last when there is none. */
    void    (*tie_span)(J2kiRcCtx *c, double s, uint32_t klo, uint32_t khi, uint32_t *first, uint32_t *last);
    /** One narrowing level of the search guide: histograms the hull bytes of every
     *  code-block (j2ki_rc_hist_seg) over window (*L, *H], sets p->d to their sums when
     *  first, and runs j2ki_rc_hist_level on them (its return value). */
    int     (*hist)(J2kiRcCtx *c, int l, J2kiRcPred *p, uint64_t *L, uint64_t *H, int first);
    /** Final fill: collects every code-block's next hull vertex of the last layer (not for
     *  floored components), sorts them by (slope desc, index asc), keeps the greedy prefix
     *  whose estimated cost fits the slack (j2ki_rc_fill_est); returns how many are kept. */
    int64_t (*fill_prepare)(J2kiRcCtx *c);
    /** Last layer: the first p kept candidates at their new pass count, the others at the old. */
    void    (*fill_apply)(J2kiRcCtx *c, uint32_t p);
    /** One round of a multi-probe search (j2ki_rc_multi_round): sizes the selections of layer
     *  l (and the layers that move with it, j2ki_rc_set) at the n thresholds t[0] < ... <
     *  t[n-1] (slope bits, tie index 0) exactly, as size would one by one, and returns j*,
     *  the smallest j such that every probe j .. n-1 fits (j2ki_rc_fits), n when probe n-1
     *  does not; sets p->hi to probe j*'s sizes when j* < n and p->lo to probe j* - 1's when
     *  j* > 0. cfg is left as it was; layer_passes and the last measurement are not defined
     *  afterwards (the caller applies again). Returns < 0 on a sizing error. */
    int     (*size_multi)(J2kiRcCtx *c, int l, const uint64_t *t, int n, J2kiRcPred *p);
} J2kiRcOps;

struct J2kiRcCtx {
    const J2kiRcOps *ops;
    void          *opaque;                  /* the executor's own data */
    const J2kiLog *log;                     /* host only (NULL on the device) */
    uint32_t       nb_cblks;
    int            nb_layers, nb_comps, rc_mode;
    J2kiRcCfg      cfg[J2KI_MAX_LAYERS];
    double         floor[J2KC_MAX_COMPS];   /* 0: none; else slope >= floor, every layer */
    int            last_fixed;              /* searches of earlier layers leave the last alone */
    uint64_t       budget[J2KI_MAX_LAYERS]; /* cumulative, 0 = none */
    int            hard[J2KI_MAX_LAYERS];
    uint64_t       frame_budget, comp_budget; /* 0 = none */
    double         smin, smax;              /* smallest, largest positive hull slope */
    int64_t        dist_limit;              /* PSNR: largest fixed-point residual allowed */
    double         slope_t;                 /* SLOPE: 2^cp->slope */
    double         layer_div[J2KI_MAX_LAYERS]; /* 2^(0.5 (L - 1 - l)): geometric targets */
    /* last measurement */
    int64_t        total;
    uint64_t       comp_len[J2KC_MAX_COMPS];
    uint64_t       layer_len[J2KI_MAX_LAYERS];
    int            nb_probes;               /* thresholds sized */
    int            nb_rounds;               /* sizing steps (one per size, or per size_multi) */
    int            meas_valid;              /* the selection (cfg, floor, no fill since) is the
                                               one j2ki_rc_measure last sized: measuring it
                                               again is skipped */
    int            plain;                   /* tests: no guide, no tie narrowing, no skipped
                                               measurements (rc_ref.h) */
    int            multi;                   /* a BYTES search's guided steps size up to this
                                               many thresholds at once (j2ki_rc_multi_round;
                                               0 or 1: one at a time) */
    /* what went wrong, for the host's log: J2KI_RC_WHY_* and the layer or component */
    int            why, why_arg;
};

enum { J2KI_RC_WHY_NONE = 0, J2KI_RC_WHY_HEADERS, J2KI_RC_WHY_LAYER, J2KI_RC_WHY_OVER };

/*
 * How the control code calls an op: through c->ops on the host; on the device directly
 * rc_cuda.cu's grid-wide j2ki_rc_dev_* (no indirect calls, so the kernel's stack size is
 * known when it is compiled; rc_cuda.cu defines them, with C linkage, in the same unit).
 */
#if defined(__CUDA_ARCH__) || defined(J2KI_RC_EMU)       /* J2KI_RC_EMU: tests/rc_emu.cc */
__device__ void    j2ki_rc_dev_hull(J2kiRcCtx *c);
__device__ void    j2ki_rc_dev_apply(J2kiRcCtx *c);
__device__ int     j2ki_rc_dev_size(J2kiRcCtx *c);
__device__ int64_t j2ki_rc_dev_dist_sum(J2kiRcCtx *c);
__device__ double  j2ki_rc_dev_next_slope(J2kiRcCtx *c, int l);
__device__ int     j2ki_rc_dev_can_split(J2kiRcCtx *c, int l, double lo, double hi);
__device__ int     j2ki_rc_dev_hist(J2kiRcCtx *c, int l, J2kiRcPred *p, uint64_t *L, uint64_t *H, int first);
__device__ void    j2ki_rc_dev_tie_span(J2kiRcCtx *c, double s, uint32_t klo, uint32_t khi, uint32_t *first,
                                        uint32_t *last);
__device__ int64_t j2ki_rc_dev_fill_prepare(J2kiRcCtx *c);
__device__ void    j2ki_rc_dev_fill_apply(J2kiRcCtx *c, uint32_t p);
__device__ int     j2ki_rc_dev_size_multi(J2kiRcCtx *c, int l, const uint64_t *t, int n, J2kiRcPred *p);
#define J2KI_RC_OP(c, op) j2ki_rc_dev_##op
#else
#define J2KI_RC_OP(c, op) (c)->ops->op
#endif

#if defined(__CUDA_ARCH__)
#define J2KI_RC_LOG(c, ...) ((void)0)
#else
#define J2KI_RC_LOG(c, ...) j2ki_log((c)->log, __VA_ARGS__)
#endif

J2KI_HD uint64_t j2ki_rc_bits(double v)
{
    union { double d; uint64_t u; } x;
    x.d = v;
    return x.u;
}

J2KI_HD double j2ki_rc_from_bits(uint64_t b)
{
    union { double d; uint64_t u; } x;
    x.u = b;
    return x.d;
}

/** Passes of code-block i (component comp) for every layer under c's thresholds and floors,
 *  with the threshold of layers l0 <= l < l1 replaced by y, into out[0 .. layers - 1]: each
 *  layer selects by its threshold (or the component's floor when that is higher), then the
 *  counts are made non-decreasing over the layers. Every count is non-increasing in y.t (at a
 *  fixed y.k). */
J2KI_HD void j2ki_rc_cblk_sel_x(const J2kiRcCtx *c, const J2kiCblk *cb, uint32_t i, int comp, int l0, int l1,
                                J2kiRcCfg y, uint16_t *out)
{
    int L = c->nb_layers;
    double f = c->floor[comp];
    int n[J2KI_MAX_LAYERS];
    for (int l = 0; l < L; l++) {
        const J2kiRcCfg *x = l >= l0 && l < l1 ? &y : &c->cfg[l];
        if (x->t >= 0.0 && f > x->t)
            n[l] = j2ki_rc_cblk_select(cb->passes, cb->nb_passes, f, 1);
        else
            n[l] = j2ki_rc_cblk_select(cb->passes, cb->nb_passes, x->t, i < x->k);
    }
    for (int l = L - 2; l >= 0; l--)
        if (n[l] > n[l + 1])
            n[l] = n[l + 1];
    for (int l = 0; l < L; l++)
        out[l] = (uint16_t)n[l];
}

/** j2ki_rc_cblk_sel_x into cb's layer_passes. */
J2KI_HD void j2ki_rc_cblk_apply_x(const J2kiRcCtx *c, J2kiCblk *cb, uint32_t i, int comp, int l0, int l1,
                                  J2kiRcCfg y)
{
    j2ki_rc_cblk_sel_x(c, cb, i, comp, l0, l1, y, cb->layer_passes);
}

/** j2ki_rc_cblk_apply_x with c's own thresholds (no layer replaced). */
J2KI_HD void j2ki_rc_cblk_apply(const J2kiRcCtx *c, J2kiCblk *cb, uint32_t i, int comp)
{
    J2kiRcCfg none = { 0.0, 0 };
    j2ki_rc_cblk_apply_x(c, cb, i, comp, 0, 0, none);
}

/** Whether code-block cb (its component floored or not) can still grow layer l: the slope of
 *  its next hull vertex, 0 when none or when it may not grow (rc_next_slope's rule). */
J2KI_HD double j2ki_rc_cblk_growth(const J2kiRcCtx *c, const J2kiCblk *cb, int comp, int l)
{
    int n = cb->layer_passes[l];
    if (c->floor[comp] > 0.0)
        return 0.0;
    if (c->last_fixed && l < c->nb_layers - 1 && n >= cb->layer_passes[c->nb_layers - 1])
        return 0.0;
    return j2ki_rc_cblk_next_slope(cb->passes, cb->nb_passes, n);
}

/** can_split's per code-block part: smallest and largest hull slope in (lo, hi] among the
 *  passes layer l may take (mn = mx = 0 when none). */
J2KI_HD void j2ki_rc_cblk_range(const J2kiRcCtx *c, const J2kiCblk *cb, int comp, int l, double lo,
                                double hi, double *mn, double *mx)
{
    int end = cb->nb_passes;
    *mn = *mx = 0.0;
    if (c->floor[comp] > 0.0)
        return;
    if (c->last_fixed && l < c->nb_layers - 1)
        end = cb->layer_passes[c->nb_layers - 1];
    for (int k = 0; k < end; k++) {
        double v = cb->passes[k].slope;
        if (v > lo && v <= hi) {
            if (*mx == 0.0 || v < *mn)
                *mn = v;
            if (v > *mx)
                *mx = v;
        }
    }
}

/** Whether a pass of cb has slope exactly s (s > 0): the code-blocks whose selection a tie
 *  index k can change at threshold s (a superset of them: floors and layers aside). */
J2KI_HD int j2ki_rc_cblk_has_slope(const J2kiCblk *cb, double s)
{
    for (int k = 0; k < cb->nb_passes; k++)
        if (cb->passes[k].slope == s)
            return 1;
    return 0;
}

/** One candidate of the final fill: code-block i may grow from n_old to n_new passes. */
typedef struct J2kiRcFillCand {
    double   s;
    uint32_t i;
    uint16_t n_old, n_new;
} J2kiRcFillCand;

/** Fill candidate of code-block i (0 when it has none): its next hull vertex in the last layer. */
J2KI_HD int j2ki_rc_fill_cand(const J2kiRcCtx *c, const J2kiCblk *cb, uint32_t i, int comp, J2kiRcFillCand *out)
{
    int n = cb->layer_passes[c->nb_layers - 1], k;
    if (c->floor[comp] > 0.0)
        return 0;
    for (k = n; k < cb->nb_passes && !(cb->passes[k].slope > 0.0); k++)
        ;
    if (k >= cb->nb_passes)
        return 0;
    out->s = cb->passes[k].slope;
    out->i = i;
    out->n_old = (uint16_t)n;
    out->n_new = (uint16_t)(k + 1);
    return 1;
}

/** Order of the fill candidates: slope descending, then code-block index ascending. */
J2KI_HD int j2ki_rc_fill_before(const J2kiRcFillCand *x, const J2kiRcFillCand *y)
{
    if (x->s != y->s)
        return x->s > y->s;
    return x->i < y->i;
}

/** Estimated cost of a candidate: its new data bytes plus a few header bytes. */
J2KI_HD int64_t j2ki_rc_fill_est(const J2kiCblk *cb, const J2kiRcFillCand *x)
{
    return (int64_t)cb->passes[x->n_new - 1].rate - (x->n_old ? (int64_t)cb->passes[x->n_old - 1].rate : 0) +
           (x->n_old ? 2 : 5);
}

/**
 * Whether a candidate of component comp costing est fits the slacks left by the last
 * measurement (frame budget and comp_bytes). The greedy pick of fill_prepare only shrinks the
 * slacks, and every cost is positive, so a candidate that does not fit them now is never kept:
 * both executors leave such candidates out before sorting (the bench's 4K DCI frame: 10,717
 * of 26,292 code-blocks in the first fill, 81 in the second).
 */
J2KI_HD int j2ki_rc_fill_fits(const J2kiRcCtx *c, int comp, int64_t est)
{
    if (c->frame_budget && est > (int64_t)c->frame_budget - c->total)
        return 0;
    if (c->comp_budget && comp < c->nb_comps && est > (int64_t)c->comp_budget - (int64_t)c->comp_len[comp])
        return 0;
    return 1;
}

/**
 * Narrows a search on the tie index at threshold s, where (s, *klo) is ok and (s, *khi) is
 * not: the selection under (s, k) only changes where k passes a code-block holding a pass of
 * slope s, so every k in [*klo, first] selects what *klo does and every k in [last + 1, *khi]
 * what *khi does (sizes depend on the selection only): their outcomes are known without a
 * sizing. Leaves the bounds adjacent when no such code-block lies between them.
 */
J2KI_HD void j2ki_rc_tie_narrow(J2kiRcCtx *c, double s, uint32_t *klo, uint32_t *khi)
{
    uint32_t first, last;
    J2KI_RC_OP(c, tie_span)(c, s, *klo, *khi, &first, &last);
    if (first > last) {
        *khi = *klo + 1;
        return;
    }
    if (first > *klo)
        *klo = first;
    if (last + 1 < *khi)
        *khi = last + 1;
}

/** End (exclusive) of the layers that move with layer l's threshold: l and every later one
 *  the search may move with it. */
J2KI_HD int j2ki_rc_set_end(const J2kiRcCtx *c, int l)
{
    int end = c->last_fixed ? c->nb_layers - 1 : c->nb_layers;
    return end > l + 1 ? end : l + 1;
}

/** Sets layer l's threshold, and every later one the search may move with it. */
J2KI_HD void j2ki_rc_set(J2kiRcCtx *c, int l, J2kiRcCfg x)
{
    int end = j2ki_rc_set_end(c, l);
    for (int m = l; m < end; m++) {
        if (c->cfg[m].t != x.t || c->cfg[m].k != x.k)
            c->meas_valid = 0;              /* the selection may change */
        c->cfg[m] = x;
    }
}

/** Sizes the current layer_passes into c's measurement (not counted as a probe). */
J2KI_HD int j2ki_rc_size_now(J2kiRcCtx *c)
{
    int ret;
    for (int i = 0; i < J2KC_MAX_COMPS; i++)
        c->comp_len[i] = 0;
    for (int l = 0; l < J2KI_MAX_LAYERS; l++)
        c->layer_len[l] = 0;
    ret = J2KI_RC_OP(c, size)(c);
    return ret < 0 ? ret : 0;
}

J2KI_HD int j2ki_rc_measure_as_is(J2kiRcCtx *c)
{
    c->nb_probes++;
    c->nb_rounds++;
    return j2ki_rc_size_now(c);
}

/*
 * Applies cfg (and floor) and sizes the result; skipped when the last measurement was of this
 * very selection (meas_valid: cleared whenever cfg or floor change value and by every fill
 * step), since sizes depend on the selection only. The search and the fill often end on the
 * threshold they last probed (a 2K DCI frame: the final measurement after the component floors'
 * check, which ends on the chosen threshold).
 */
J2KI_HD int j2ki_rc_measure(J2kiRcCtx *c)
{
    int ret;
    if (c->meas_valid && !c->plain)
        return 0;
    J2KI_RC_OP(c, apply)(c);
    ret = j2ki_rc_measure_as_is(c);
    c->meas_valid = ret == 0;
    return ret;
}

/** Whether the last measurement keeps every hard budget, and layer l's own target. */
J2KI_HD int j2ki_rc_fits(const J2kiRcCtx *c, int l)
{
    if (c->frame_budget && (uint64_t)c->total > c->frame_budget)
        return 0;
    if (c->comp_budget)
        for (int cc = 0; cc < c->nb_comps; cc++)
            if (c->comp_len[cc] > c->comp_budget)
                return 0;
    for (int m = 0; m <= l; m++)
        if ((c->hard[m] || m == l) && c->budget[m] && c->layer_len[m] > c->budget[m])
            return 0;
    return 1;
}

/** Sets layer l to x and tells whether the result is "ok": within the budgets (BYTES), or not
 *  yet at the target quality (PSNR: ok means more passes are still needed). */
J2KI_HD int j2ki_rc_try(J2kiRcCtx *c, int l, int pred, J2kiRcCfg x, int *ok)
{
    int ret;
    j2ki_rc_set(c, l, x);
    if (pred == J2KI_RC_PRED_PSNR) {
        J2KI_RC_OP(c, apply)(c);
        *ok = J2KI_RC_OP(c, dist_sum)(c) > c->dist_limit;
        return 0;
    }
    if ((ret = j2ki_rc_measure(c)) < 0)
        return ret;
    *ok = j2ki_rc_fits(c, l);
    return 0;
}

/* ---- the guide of a BYTES search ---- */

/** Sizes of one measured threshold that a BYTES search of layer l watches. */
typedef struct J2kiRcEnd {
    int64_t  total;
    uint64_t comp[J2KC_MAX_COMPS];
    uint64_t layer;                          /* layer_len[l] */
} J2kiRcEnd;

/** What the guide knows: both ends measured, the hull bytes between them, and (between
 *  narrowing levels) the hull bytes above the current window. */
#define J2KI_RC_HIST_BINS   256
#define J2KI_RC_HIST_LEVELS 8                /* 8 levels of 256 bins cover any 64-bit range */
#define J2KI_RC_NEAR_BINS   3                /* a level's probes: its crossing bin's and the upper
                                                edges of this many non-empty bins on each side */
#define J2KI_RC_NEAR_MAX    (J2KI_RC_HIST_LEVELS * (2 * J2KI_RC_NEAR_BINS + 1))
#define J2KI_RC_MULTI_MAX   32               /* thresholds sized at once (j2ki_rc_multi_round) */

struct J2kiRcPred {
    J2kiRcEnd lo, hi;
    uint64_t  d[J2KC_MAX_COMPS];             /* hull bytes with slope in (lo, hi], per component */
    uint64_t  above[J2KC_MAX_COMPS];         /* ... with slope in (H, hi] (window (L, H]) */
    int       collect;                       /* hist appends each level's probes to near[] */
    int       nb_near;
    uint64_t  near[J2KI_RC_NEAR_MAX];
};

J2KI_HD void j2ki_rc_end_get(const J2kiRcCtx *c, int l, J2kiRcEnd *e)
{
    e->total = c->total;
    for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
        e->comp[cc] = c->comp_len[cc];
    e->layer = c->layer_len[l];
}

/**
 * One step of size_multi's walk over its probes from the top (J2kiRcOps.size_multi; both
 * executors end with it: the host sizes each probe as it goes and stops at the first that does
 * not fit, the device reads the probes it sized at once): c's measurement holds probe j's
 * sizes. When they fit, p->hi takes them and *js = j (every probe j .. n-1 fits so far):
 * returns 1, go on with j - 1. Else p->lo takes them: returns 0, the walk ends with *js.
 */
J2KI_HD int j2ki_rc_multi_step(const J2kiRcCtx *c, int l, int j, J2kiRcPred *p, int *js)
{
    if (!j2ki_rc_fits(c, l)) {
        j2ki_rc_end_get(c, l, &p->lo);
        return 0;
    }
    j2ki_rc_end_get(c, l, &p->hi);
    *js = j;
    return 1;
}

/** Bin width of a histogram of (L, H] (H > L + 1): the smallest shift that fits it in
 *  J2KI_RC_HIST_BINS bins; slope bits v go to bin (v - L - 1) >> shift. */
J2KI_HD int j2ki_rc_hist_shift(uint64_t L, uint64_t H)
{
    int sh = 0;
    while (((H - L - 1) >> sh) >= J2KI_RC_HIST_BINS)
        sh++;
    return sh;
}

/** The passes of code-block cb that a search of layer l can add (j2ki_rc_cblk_range's rule):
 *  the first n, n = 0 for a floored component. */
J2KI_HD int j2ki_rc_cblk_end(const J2kiRcCtx *c, const J2kiCblk *cb, int comp, int l)
{
    if (c->floor[comp] > 0.0)
        return 0;
    if (c->last_fixed && l < c->nb_layers - 1)
        return cb->layer_passes[c->nb_layers - 1];
    return cb->nb_passes;
}

/** Bytes of the hull segment ending at pass k of cb (from the previous hull vertex), when k
 *  is a hull vertex whose slope bits lie in (L, H] and k < end; else 0 with *bits = 0.
 *  *prev: the rate at the previous vertex, carried by the caller over k = 0, 1, ... */
J2KI_HD uint32_t j2ki_rc_hist_seg(const J2kiCblk *cb, int k, int end, uint64_t L, uint64_t H, uint32_t *prev,
                                  uint64_t *bits)
{
    double s = cb->passes[k].slope;
    uint32_t r = cb->passes[k].rate, n = 0;
    *bits = 0;
    if (!(s > 0.0))
        return 0;
    if (k < end) {
        uint64_t v = j2ki_rc_bits(s);
        if (v > L && v <= H) {
            *bits = v;
            n = r - *prev;
        }
    }
    *prev = r;
    return n;
}

/**
 * Whether the sizes predicted for adding hull bytes delta[] (per component) to the hi end are
 * over a budget that j2ki_rc_fits(c, l) checks. Each size is interpolated between the two
 * measured ends in proportion to the hull bytes added (exact at both ends; headers grow with
 * the bytes). Integers in, the same double operations on host and device, so both decide alike.
 */
J2KI_HD int j2ki_rc_pred_over(const J2kiRcCtx *c, int l, const J2kiRcPred *p, const uint64_t *delta)
{
    uint64_t dt = 0, tt = 0;
    for (int cc = 0; cc < J2KC_MAX_COMPS; cc++) {
        dt += delta[cc];
        tt += p->d[cc];
    }
    if (!tt)
        return 0;
    double f = (double)dt / (double)tt;
    if (c->frame_budget &&
        (double)p->hi.total + f * (double)(p->lo.total - p->hi.total) > (double)c->frame_budget)
        return 1;
    if (c->budget[l] && (double)p->hi.layer + f * ((double)p->lo.layer - (double)p->hi.layer) > (double)c->budget[l])
        return 1;
    if (c->comp_budget)
        for (int cc = 0; cc < c->nb_comps; cc++) {
            double g = p->d[cc] ? (double)delta[cc] / (double)p->d[cc] : 0.0;
            if ((double)p->hi.comp[cc] + g * ((double)p->lo.comp[cc] - (double)p->hi.comp[cc]) > (double)c->comp_budget)
                return 1;
        }
    return 0;
}

/**
 * The probes a histogram level offers a multi-probe round (j2ki_rc_multi_round): the upper
 * edges (largest slope bits) of the crossing bin j and of the J2KI_RC_NEAR_BINS nearest
 * non-empty bins below and above it, in that order (below nearest first, then above nearest
 * first). A threshold at bin b's upper edge leaves out bin b and every bin below it, so
 * these split the level's window between its non-empty bins around the predicted crossing.
 * Returns how many it wrote (at most 2 * J2KI_RC_NEAR_BINS + 1). rc_cuda.cu's hist applies
 * the same rule to the grid's histogram.
 */
J2KI_HD int j2ki_rc_hist_near(const uint64_t *mx, int j, uint64_t *out)
{
    int n = 0, got = 0;
    out[n++] = mx[j];
    for (int b = j - 1; b >= 0 && got < J2KI_RC_NEAR_BINS; b--)
        if (mx[b]) {
            out[n++] = mx[b];
            got++;
        }
    got = 0;
    for (int b = j + 1; b < J2KI_RC_HIST_BINS && got < J2KI_RC_NEAR_BINS; b++)
        if (mx[b]) {
            out[n++] = mx[b];
            got++;
        }
    return n;
}

/**
 * One narrowing level from a histogram of window (L, H] (bins of J2KI_RC_HIST_BINS, slope
 * bits): bytes[cc][b], and the smallest and largest slope bits of each bin (mx[b] = 0: empty).
 * The crossing bin j is the highest non-empty bin whose lower edge is predicted over
 * (j2ki_rc_pred_over with above + the bytes of bins >= b), else the lowest non-empty one; the
 * window becomes that bin's slopes, above takes the bins over it. Returns 1 when the new
 * window holds one distinct slope, 0 when it holds several, -1 when (L, H] held no slope.
 * The host runs this; rc_cuda.cu computes the same with a warp per block.
 */
J2KI_HD int j2ki_rc_hist_level(const J2kiRcCtx *c, int l, J2kiRcPred *p, const uint64_t (*bytes)[J2KI_RC_HIST_BINS],
                               const uint64_t *mn, const uint64_t *mx, uint64_t *L, uint64_t *H)
{
    uint64_t cum[J2KC_MAX_COMPS], up[J2KC_MAX_COMPS];
    int j = -1, jmin = -1;
    for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
        cum[cc] = p->above[cc];
    for (int b = J2KI_RC_HIST_BINS - 1; b >= 0; b--) {
        if (!mx[b])
            continue;
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
            cum[cc] += bytes[cc][b];
        if (j < 0 && j2ki_rc_pred_over(c, l, p, cum)) {
            j = b;
            for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
                up[cc] = cum[cc] - bytes[cc][b];
        }
        jmin = b;
    }
    if (jmin < 0)
        return -1;
    if (j < 0) {
        j = jmin;
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
            up[cc] = cum[cc] - bytes[cc][j];
    }
    for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
        p->above[cc] = up[cc];
    if (p->collect)
        p->nb_near += j2ki_rc_hist_near(mx, j, p->near + p->nb_near);
    *L = mn[j] - 1;
    *H = mx[j];
    return mn[j] == mx[j];
}

/**
 * The guided probe of a BYTES search between lo (not ok) and hi (ok), both measured into p:
 * narrows a window from (lo, hi] with up to J2KI_RC_HIST_LEVELS histograms (the hist op,
 * which also sets p->d on the first level) to the predicted crossing, then probes its
 * predicted-ok edge H, or its other edge L once hi is at H, or the middle when neither moves.
 */
J2KI_HD uint64_t j2ki_rc_guide(J2kiRcCtx *c, int l, J2kiRcPred *p, uint64_t lo, uint64_t hi)
{
    uint64_t L = lo, H = hi;
    for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
        p->above[cc] = 0;
    p->nb_near = 0;
    for (int lev = 0; lev < J2KI_RC_HIST_LEVELS && H > L + 1; lev++) {
        int r = J2KI_RC_OP(c, hist)(c, l, p, &L, &H, lev == 0);
        if (r != 0)
            break;
    }
    if (H < hi && H > lo)
        return H;
    if (L > lo && L < hi)
        return L;
    return lo + (hi - lo) / 2;
}

/**
 * A guided step that sizes up to c->multi thresholds at once (the PCRD-opt search of
 * ../shared/papers/gpu-pcrd-and-packetization.md probes 32 slope thresholds per iteration):
 * the guide runs as for one probe, collecting from each narrowing level the upper edges of
 * the non-empty bins around its predicted crossing (j2ki_rc_hist_near). The probes are the
 * guide's own probe, then those edges from the finest level to the coarsest, each kept when
 * it lies strictly inside (lo, hi) and is new, up to c->multi; fine levels place probes on the
 * distinct slopes next to the prediction, coarse ones further out, so one round brackets the
 * crossing even when the prediction misses by a few slopes. size_multi sizes them all (the
 * device: each precinct only where its selection changes from one probe to the next) and
 * returns the first of the ok probes at the top, j*; the new interval is (probe j* - 1,
 * probe j*], each end lo or hi when j* is 0 or n. The loop of j2ki_rc_search still ends only
 * when (lo, hi] holds at most one distinct slope, so the boundary is the one it finds with
 * one probe at a time. Returns j* and the probes through t / *n, or < 0 on an error.
 */
J2KI_HD int j2ki_rc_multi_round(J2kiRcCtx *c, int l, J2kiRcPred *p, uint64_t lo, uint64_t hi, uint64_t *t, int *n)
{
    int max = c->multi < J2KI_RC_MULTI_MAX ? c->multi : J2KI_RC_MULTI_MAX, m = 0;
    p->collect = 1;
    uint64_t g = j2ki_rc_guide(c, l, p, lo, hi);
    p->collect = 0;
    t[m++] = g;
    for (int i = p->nb_near - 1; i >= 0 && m < max; i--) {
        uint64_t v = p->near[i];
        int dup = !(v > lo && v < hi);
        for (int q = 0; q < m && !dup; q++)
            dup = t[q] == v;
        if (!dup)
            t[m++] = v;
    }
    for (int i = 1; i < m; i++) {           /* ascending */
        uint64_t v = t[i];
        int q = i;
        for (; q > 0 && t[q - 1] > v; q--)
            t[q] = t[q - 1];
        t[q] = v;
    }
    *n = m;
    c->meas_valid = 0;
    c->nb_probes += m;
    c->nb_rounds++;
    return J2KI_RC_OP(c, size_multi)(c, l, t, m, p);
}

/**
 * Whether the refine step's first probe (s, every tie index) selects exactly what the search's
 * last not-ok end, threshold lo (slopes > lo), selected, so that its outcome is known without
 * a sizing: (lo, hi] holds at most one distinct slope among the passes the layer may take
 * (the caller's condition), s is that slope (lo < s <= hi), so no such pass has a slope in
 * (lo, s); and no component's floor lies at or below hi, so every floored component selects by
 * its floor under both. Passes the layer may not take (beyond the last layer's, last_fixed)
 * are cut by the last layer's count under both alike. Selections, and so sizes and PSNR
 * estimates, are then equal.
 */
J2KI_HD int j2ki_rc_refine_known(const J2kiRcCtx *c, double s, uint64_t lo, uint64_t hi)
{
    uint64_t v = j2ki_rc_bits(s);
    double h = j2ki_rc_from_bits(hi);
    if (!(v > lo && v <= hi))
        return 0;
    for (int cc = 0; cc < c->nb_comps; cc++)
        if (c->floor[cc] > 0.0 && !(c->floor[cc] > h))
            return 0;
    return 1;
}

/**
 * Moves layer l's threshold from its current, ok value as far down as it stays ok. On return
 * cfg[l] (and the layers that follow it) hold the last ok threshold, *b the first not-ok one
 * found next to it (*has_b = 0 when every hull vertex is ok).
 */
J2KI_HD int j2ki_rc_search(J2kiRcCtx *c, int l, int pred, int max_probes, J2kiRcCfg *b, int *has_b)
{
    uint32_t nb = c->nb_cblks;
    J2kiRcCfg a = c->cfg[l], x;
    int ok, ret, probes = 0;

    J2kiRcPred pr;
    int hi_known = 0;
    *has_b = 0;
    if (!(c->smax > 0.0))
        return 0;
    /* the caller's last sizing is often of a itself (its ok test): then it is the hi end of
     * the guide from the start, and the first step is a guided one instead of a bisection */
    if (pred == J2KI_RC_PRED_BYTES && c->meas_valid && a.k == 0 && !c->plain) {
        j2ki_rc_end_get(c, l, &pr.hi);
        hi_known = 1;
    }
    x.t = c->smin;
    x.k = nb;
    if ((ret = j2ki_rc_try(c, l, pred, x, &ok)) < 0)
        return ret;
    if (ok)
        return 0;
    *b = x;
    *has_b = 1;

    /*
     * Log-domain search on the bit patterns: (smin excl. of its predecessor) is not ok. A step
     * is a bisection, or, with sizes (BYTES) and both ends measured, a guided probe: histograms
     * of the hull bytes between the ends by slope (j2ki_rc_guide, no sizing) predict where the
     * budget is crossed, down to one distinct slope, and the probe goes to the predicted-ok
     * side of it (or, once hi is there, to the other side). A probe may be anywhere in
     * (lo, hi): the loop still ends only when (lo, hi] holds at most one distinct slope, so
     * the boundary found is the one a bisection finds; it just takes about 3 sizings instead
     * of 15 to 20 (the guide's own cost is a few reductions over the code-blocks).
     */
    uint64_t lo = j2ki_rc_bits(c->smin) - 1, hi = j2ki_rc_bits(a.t);
    pr.collect = 0;
    pr.nb_near = 0;
    if (pred == J2KI_RC_PRED_BYTES)
        j2ki_rc_end_get(c, l, &pr.lo);
    while (hi > lo + 1 && probes < max_probes &&
           J2KI_RC_OP(c, can_split)(c, l, j2ki_rc_from_bits(lo), j2ki_rc_from_bits(hi))) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (pred == J2KI_RC_PRED_BYTES && hi_known && !c->plain && c->multi > 1) {
            uint64_t t[J2KI_RC_MULTI_MAX];
            int n, js = j2ki_rc_multi_round(c, l, &pr, lo, hi, t, &n);
            if (js < 0)
                return js;
            probes++;
            if (js < n) {                   /* pr.hi is probe js's */
                a.t = j2ki_rc_from_bits(t[js]);
                a.k = 0;
                hi = t[js];
            }
            if (js > 0) {                   /* pr.lo is probe js - 1's */
                b->t = j2ki_rc_from_bits(t[js - 1]);
                b->k = 0;
                lo = t[js - 1];
            }
            J2KI_RC_OP(c, apply)(c);        /* cfg is unchanged: its passes again */
            continue;
        }
        if (pred == J2KI_RC_PRED_BYTES && hi_known && !c->plain)
            mid = j2ki_rc_guide(c, l, &pr, lo, hi);
        x.t = j2ki_rc_from_bits(mid);
        x.k = 0;
        if ((ret = j2ki_rc_try(c, l, pred, x, &ok)) < 0)
            return ret;
        probes++;
        if (ok) {
            a = x;
            hi = mid;
            if (pred == J2KI_RC_PRED_BYTES)
                j2ki_rc_end_get(c, l, &pr.hi);
            hi_known = 1;
        } else {
            *b = x;
            lo = mid;
            if (pred == J2KI_RC_PRED_BYTES)
                j2ki_rc_end_get(c, l, &pr.lo);
        }
    }

    /* next distinct slopes, then the ties of the first one that does not fit, by index */
    const int single = hi <= lo + 1 || probes < max_probes;   /* the loop ended on (lo, hi] holding
                                                                  at most one distinct slope */
    for (int r = 0; r < J2KI_RC_MAX_REFINE; r++) {
        j2ki_rc_set(c, l, a);
        J2KI_RC_OP(c, apply)(c);
        double s = J2KI_RC_OP(c, next_slope)(c, l);
        if (!(s > 0.0))
            break;
        uint32_t klo = s == a.t ? a.k : 0, khi = nb;
        x.t = s;
        x.k = nb;
        if (r == 0 && single && !c->plain && j2ki_rc_refine_known(c, s, lo, hi)) {
            j2ki_rc_set(c, l, x);           /* what *b selected, which was not ok */
            ok = 0;
        } else if ((ret = j2ki_rc_try(c, l, pred, x, &ok)) < 0) {
            return ret;
        }
        if (ok) {
            a = x;
            continue;
        }
        *b = x;
        /* a and *b stay representatives: a k the narrowing skips selects what they do */
        if (!c->plain)
            j2ki_rc_tie_narrow(c, s, &klo, &khi);
        while (khi > klo + 1) {
            x.k = klo + (khi - klo) / 2;
            if ((ret = j2ki_rc_try(c, l, pred, x, &ok)) < 0)
                return ret;
            if (ok) {
                a = x;
                klo = x.k;
            } else {
                *b = x;
                khi = x.k;
            }
            if (!c->plain)
                j2ki_rc_tie_narrow(c, s, &klo, &khi);
        }
        break;
    }
    j2ki_rc_set(c, l, a);
    return 0;
}

/** BYTES: whether the codestream without any code-block data already breaks a budget. */
J2KI_HD int j2ki_rc_headers_too_big(J2kiRcCtx *c)
{
    int bad = 0;
    if (c->frame_budget && (uint64_t)c->total > c->frame_budget) {
        J2KI_RC_LOG(c, J2KC_LOG_ERROR, "rate control: the codestream without any code-block data "
                    "(headers and empty packets) is %lld bytes, over the budget of %llu bytes",
                    (long long)c->total, (unsigned long long)c->frame_budget);
        bad = 1;
    }
    for (int cc = 0; c->comp_budget && cc < c->nb_comps; cc++)
        if (c->comp_len[cc] > c->comp_budget) {
            J2KI_RC_LOG(c, J2KC_LOG_ERROR, "rate control: component %d's tile-parts without any "
                        "code-block data are %llu bytes, over comp_bytes=%llu", cc,
                        (unsigned long long)c->comp_len[cc], (unsigned long long)c->comp_budget);
            bad = 1;
        }
    for (int l = 0; l < c->nb_layers; l++)
        if (c->hard[l] && c->budget[l] && c->layer_len[l] > c->budget[l]) {
            J2KI_RC_LOG(c, J2KC_LOG_ERROR, "rate control: layer %d needs at least %llu bytes "
                        "(headers and empty packets), over its budget of %llu bytes", l,
                        (unsigned long long)c->layer_len[l], (unsigned long long)c->budget[l]);
            bad = 1;
        }
    if (bad)
        c->why = J2KI_RC_WHY_HEADERS;
    return bad ? J2KC_ERR_BUFSIZE : 0;
}

/** BYTES, last layer with comp_bytes: floors for components that break their budget first. */
J2KI_HD int j2ki_rc_comp_floors(J2kiRcCtx *c, J2kiRcCfg b, int has_b)
{
    int L = c->nb_layers, ret, ok;
    for (int round = 0; round < c->nb_comps && has_b; round++) {
        J2kiRcCfg a = c->cfg[L - 1];
        int nb_new = 0;
        double f = j2ki_rc_from_bits(j2ki_rc_bits(a.t) + 1);
        if ((ret = j2ki_rc_try(c, L - 1, J2KI_RC_PRED_BYTES, b, &ok)) < 0)
            return ret;
        for (int cc = 0; cc < c->nb_comps; cc++)
            if (c->floor[cc] == 0.0 && c->comp_len[cc] > c->comp_budget) {
                c->floor[cc] = f;
                c->meas_valid = 0;
                nb_new++;
                J2KI_RC_LOG(c, J2KC_LOG_DEBUG, "rate control: component %d held at a slope floor by "
                            "comp_bytes=%llu", cc, (unsigned long long)c->comp_budget);
            }
        if ((ret = j2ki_rc_try(c, L - 1, J2KI_RC_PRED_BYTES, a, &ok)) < 0)
            return ret;
        if (!nb_new)
            break;
        if (!ok) {
            /* only reachable if removing passes grew a packet header: keep the known fit */
            for (int cc = 0; cc < c->nb_comps; cc++)
                if (c->floor[cc] == f) {
                    c->floor[cc] = 0.0;
                    c->meas_valid = 0;
                }
            break;
        }
        if ((ret = j2ki_rc_search(c, L - 1, J2KI_RC_PRED_BYTES, J2KI_RC_MAX_PROBES, &b, &has_b)) < 0)
            return ret;
    }
    return 0;
}

/** NONE/SLOPE/PSNR with several layers: geometric targets for the layers below the last. */
J2KI_HD int j2ki_rc_lower_layers(J2kiRcCtx *c)
{
    int L = c->nb_layers, ret, ok, has_b;
    J2kiRcCfg none, b;
    none.t = c->smax;
    none.k = 0;
    if (L < 2)
        return 0;
    c->last_fixed = 1;
    for (int l = 0; l < L - 1; l++)
        c->cfg[l] = none;
    c->meas_valid = 0;
    if ((ret = j2ki_rc_measure(c)) < 0)
        return ret;
    for (int l = 0; l < L - 1; l++) {
        c->budget[l] = (uint64_t)((double)c->total / c->layer_div[l]);
        c->hard[l] = 0;
    }
    for (int l = 0; l < L - 1; l++) {
        if ((ret = j2ki_rc_try(c, l, J2KI_RC_PRED_BYTES, l ? c->cfg[l - 1] : none, &ok)) < 0)
            return ret;
        if (ok && (ret = j2ki_rc_search(c, l, J2KI_RC_PRED_BYTES, J2KI_RC_MAX_PROBES, &b, &has_b)) < 0)
            return ret;
    }
    return 0;
}

/**
 * Final fill of the last layer (BYTES): one threshold leaves up to one hull segment per
 * code-block of slack unused when the segment at the threshold is large. The candidates kept by
 * fill_prepare are in decreasing slope order (ties by code-block index); the longest prefix of
 * that list that keeps every budget is found by bisection on its length (sizes grow with the
 * prefix, so this is exact), twice. The whole list is probed first: fill_prepare kept only
 * candidates whose estimated costs fit the slacks together, so it mostly fits, and then it is
 * the longest prefix at one sizing. The prefix found is measured again only when the last
 * probe was another one.
 */
J2KI_HD int j2ki_rc_fill(J2kiRcCtx *c)
{
    int ret;
    for (int round = 0; round < 2; round++) {
        int64_t kept = J2KI_RC_OP(c, fill_prepare)(c);
        if (kept < 0)
            return (int)kept;
        if (!kept)
            break;
        uint32_t lo = 0, hi = (uint32_t)kept, last = 0;
        int probed = 0;
        c->meas_valid = 0;
        while (lo < hi) {
            uint32_t mid = !probed && !c->plain ? hi : lo + (hi - lo + 1) / 2;
            J2KI_RC_OP(c, fill_apply)(c, mid);
            if ((ret = j2ki_rc_measure_as_is(c)) < 0)
                return ret;
            probed = 1;
            last = mid;
            if (j2ki_rc_fits(c, c->nb_layers - 1))
                lo = mid;
            else
                hi = mid - 1;
        }
        if (last != lo || c->plain) {       /* kept > 0: the loop probed at least once */
            J2KI_RC_OP(c, fill_apply)(c, lo);
            if ((ret = j2ki_rc_measure_as_is(c)) < 0)
                return ret;
        }
        J2KI_RC_LOG(c, J2KC_LOG_DEBUG, "rate control fill %d: %u of %u candidates, %lld bytes",
                    round, lo, (uint32_t)kept, (long long)c->total);
        if (!lo)
            break;
    }
    return 0;
}

/**
 * The whole decision for c (prepared by the host: modes, budgets, slope_t, dist_limit,
 * layer_div): hulls, then the mode's searches, then (BYTES) the final fill. Leaves every
 * code-block's layer_passes set. Returns 0 or a negative J2KC_ERR_* (c->why tells which check).
 */
J2KI_HD int j2ki_rc_decide(J2kiRcCtx *c)
{
    int L = c->nb_layers, ret = 0, ok, has_b;
    J2kiRcCfg b, none;

    J2KI_RC_OP(c, hull)(c);
    none.t = c->smax;
    none.k = 0;
    switch (c->rc_mode) {
    case J2KI_RC_NONE:
        c->cfg[L - 1].t = -1.0;
        c->meas_valid = 0;
        J2KI_RC_OP(c, apply)(c);
        return j2ki_rc_lower_layers(c);
    case J2KI_RC_SLOPE:
        c->cfg[L - 1].t = c->slope_t;
        c->cfg[L - 1].k = c->nb_cblks;
        c->meas_valid = 0;
        J2KI_RC_OP(c, apply)(c);
        return j2ki_rc_lower_layers(c);
    case J2KI_RC_PSNR:
        if ((ret = j2ki_rc_try(c, 0, J2KI_RC_PRED_PSNR, none, &ok)) < 0)
            return ret;
        if (ok) {
            if ((ret = j2ki_rc_search(c, 0, J2KI_RC_PRED_PSNR, J2KI_RC_PSNR_PROBES, &b, &has_b)) < 0)
                return ret;
            if (has_b)
                j2ki_rc_set(c, 0, b);
            else
                J2KI_RC_LOG(c, J2KC_LOG_INFO, "rate control: the PSNR target is not reached with every pass");
        }
        c->cfg[L - 1] = c->cfg[0];
        c->meas_valid = 0;
        J2KI_RC_OP(c, apply)(c);
        return j2ki_rc_lower_layers(c);
    case J2KI_RC_BYTES:
        for (int l = 0; l < L; l++)
            c->cfg[l] = none;
        c->meas_valid = 0;
        if ((ret = j2ki_rc_measure(c)) < 0 || (ret = j2ki_rc_headers_too_big(c)) < 0)
            return ret;
        for (int l = 0; l < L; l++) {
            if (!l)
                ok = j2ki_rc_fits(c, 0);      /* the empty codestream just measured */
            else if ((ret = j2ki_rc_try(c, l, J2KI_RC_PRED_BYTES, c->cfg[l - 1], &ok)) < 0)
                return ret;
            if (!ok) {
                if (c->hard[l]) {
                    J2KI_RC_LOG(c, J2KC_LOG_ERROR, "rate control: layer %d's budget of %llu bytes "
                                "is below the %llu bytes that the earlier layers and its empty "
                                "packets take", l, (unsigned long long)c->budget[l],
                                (unsigned long long)c->layer_len[l]);
                    c->why = J2KI_RC_WHY_LAYER;
                    c->why_arg = l;
                    return J2KC_ERR_BUFSIZE;
                }
                continue;
            }
            if ((ret = j2ki_rc_search(c, l, J2KI_RC_PRED_BYTES, J2KI_RC_MAX_PROBES, &b, &has_b)) < 0)
                return ret;
            if (l == L - 1 && c->comp_budget && (ret = j2ki_rc_comp_floors(c, b, has_b)) < 0)
                return ret;
        }
        /* the search ends on an ok threshold, but the last sizing was another one: measure */
        if ((ret = j2ki_rc_measure(c)) < 0)
            return ret;
        if (j2ki_rc_fits(c, L - 1) && (ret = j2ki_rc_fill(c)) < 0)
            return ret;
        if (!j2ki_rc_fits(c, L - 1)) {
            J2KI_RC_LOG(c, J2KC_LOG_ERROR, "internal: rate control chose %lld bytes over a budget",
                        (long long)c->total);
            c->why = J2KI_RC_WHY_OVER;
            return J2KC_ERR_INTERNAL;
        }
        return 0;
    default:
        return J2KC_ERR_INVAL;
    }
}

#endif /* J2KI_RC_CORE_H */
