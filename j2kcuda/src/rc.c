/*
 * Rate control by PCRD-opt (ISO/IEC 15444-1 Annex J.14.4; Taubman, EBCOT, IEEE TIP 2000).
 *
 * 1. Every code-block's passes get their convex-hull slopes (rc_core.h): distortion decrease
 *    per byte, weighted by the band's dist_weight so that slopes of all bands compare.
 * 2. A threshold selects, in every code-block, the passes up to the last hull vertex whose
 *    slope is above it. The codestream size of a selection is measured exactly by the tier-2
 *    simulation (j2ki_t2_size), so a budget is checked against real bytes, markers included.
 * 3. The threshold is found by bisection on the bit pattern of the (positive) double: for
 *    positive IEEE doubles the bit pattern is monotone in the value and nearly linear in its
 *    log2, so this is a log-domain bisection in pure integer arithmetic that every device
 *    reproduces. After RC_MAX_PROBES probes, the next distinct hull slopes are tried one at a
 *    time, and where a set of code-blocks shares the slope that no longer fits, the ties are
 *    split by code-block index (a second bisection on that index), which uses the remaining
 *    bytes deterministically.
 *
 * A threshold is the pair (t, k): a pass ending on a hull vertex is included when its slope is
 * > t, or == t in a code-block whose index in plan->cblks is < k. Larger t (then smaller k)
 * never includes more passes, so every size below is monotone in (t, k).
 *
 * Layers (BYTES mode): layer 0 is searched first against its own budget with every later layer
 * equal to it (no new passes), then layer 1 from layer 0's threshold downwards, and so on, so
 * thresholds never increase with the layer and layer_passes never decrease. Budgets given by
 * the user (cp->nb_layer_bytes of them, and always the last) are hard; the geometric ones that
 * the parameters derive for the other layers are targets. In the other modes the last layer is
 * decided first (all passes, a slope, a PSNR) and earlier layers get the same geometric targets
 * (sqrt(2) apart, as params.c derives them) below the resulting size.
 *
 * Per-component budgets (cp->comp_bytes, DCI): a component whose tile-parts exceed the budget
 * at the first threshold that no longer fits is frozen just above that threshold (a floor that
 * applies to that component only, in every layer), and the search resumes downwards for the
 * others; at most one round per component.
 *
 * Determinism: slopes are per code-block doubles computed in a fixed order; sizes are integer
 * byte counts; PSNR uses per code-block fixed-point residuals summed as integers. Nothing adds
 * floats across code-blocks, so the CUDA backend, probing the same thresholds, decides the same.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rc.h"
#include "rc_core.h"
#include "t2.h"

#define RC_MAX_PROBES  40   /* bisection probes of one threshold search (tier-2 sizings) */
#define RC_MAX_REFINE  16   /* distinct slopes tried after the bisection */
#define RC_PSNR_PROBES 64   /* PSNR needs no sizing: bisect to adjacent doubles */

enum { RC_PRED_BYTES, RC_PRED_PSNR };

/** One layer's threshold, see the file comment; t < 0 selects every coded pass. */
typedef struct RcCfg {
    double   t;
    uint32_t k;
} RcCfg;

typedef struct RcCtx {
    J2kiPlan      *plan;
    const J2kiLog *log;
    J2kiRcSizeFn   size_fn;
    void          *opaque;
    int            nb_layers, nb_comps;
    RcCfg          cfg[J2KI_MAX_LAYERS];
    double         floor[J2KC_MAX_COMPS];   /* 0: none; else slope >= floor, every layer */
    int            last_fixed;              /* searches of earlier layers leave the last alone */
    uint64_t       budget[J2KI_MAX_LAYERS]; /* cumulative, 0 = none */
    int            hard[J2KI_MAX_LAYERS];
    uint64_t       frame_budget, comp_budget; /* 0 = none */
    double         smin, smax;              /* smallest, largest positive hull slope */
    int64_t        dist_limit;              /* PSNR: largest fixed-point residual allowed */
    /* last measurement */
    int64_t        total;
    uint64_t       comp_len[J2KC_MAX_COMPS];
    uint64_t       layer_len[J2KI_MAX_LAYERS];
    int            nb_probes;
} RcCtx;

static uint64_t rc_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof(b));
    return b;
}

static double rc_from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof(v));
    return v;
}

static int64_t rc_t2_size(void *opaque, J2kiPlan *plan, uint64_t *comp_len, uint64_t *layer_len)
{
    (void)opaque;
    return j2ki_t2_size(plan, comp_len, layer_len);
}

/** Writes layer_passes of every code-block for the current thresholds and floors. */
static void rc_apply(const RcCtx *c)
{
    const J2kiPlan *plan = c->plan;
    int L = c->nb_layers;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        J2kiCblk *cb = &plan->cblks[i];
        double f = c->floor[plan->bands[cb->band_idx].comp];
        int n[J2KI_MAX_LAYERS];
        for (int l = 0; l < L; l++) {
            const RcCfg *x = &c->cfg[l];
            if (x->t >= 0.0 && f > x->t)
                n[l] = j2ki_rc_cblk_select(cb->passes, cb->nb_passes, f, 1);
            else
                n[l] = j2ki_rc_cblk_select(cb->passes, cb->nb_passes, x->t, i < x->k);
        }
        for (int l = L - 2; l >= 0; l--)
            if (n[l] > n[l + 1])
                n[l] = n[l + 1];
        for (int l = 0; l < L; l++)
            cb->layer_passes[l] = (uint16_t)n[l];
    }
}

/**
 * Fixed-point residual distortion of the last layer's truncation (see rc_core.h), summed as
 * integers (saturating; the total is never below 0: passes left out cannot make the error
 * negative overall).
 */
static int64_t rc_dist_sum(const J2kiPlan *plan)
{
    const J2kiCodingParams *cp = plan->cp;
    int last = cp->nb_layers - 1;
    int64_t sum = 0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiCblk *cb = &plan->cblks[i];
        const J2kiBand *band = &plan->bands[cb->band_idx];
        double peak = ldexp(1.0, cp->img.depth[band->comp]) - 1.0;
        double scale = band->dist_weight / (peak * peak) * J2KI_RC_DIST_ONE;
        int64_t r = j2ki_rc_cblk_residual(cb->passes, cb->nb_passes, cb->layer_passes[last], scale);
        if (r > 0 && sum > INT64_MAX - r)
            sum = INT64_MAX;
        else if (r < 0 && sum < INT64_MIN - r)
            sum = INT64_MIN;
        else
            sum += r;
    }
    return sum > 0 ? sum : 0;
}

double j2ki_rc_estimate_psnr(const J2kiPlan *plan)
{
    int64_t sum = rc_dist_sum(plan);
    if (!sum)
        return INFINITY;
    return 10.0 * log10((double)plan->nb_samples * J2KI_RC_DIST_ONE / (double)sum);
}

void j2ki_rc_hull(J2kiCblk *cb, double weight)
{
    j2ki_rc_hull_passes(cb->passes, cb->nb_passes, weight);
}

/** Sets layer l's threshold, and every later one the search may move with it. */
static void rc_set(RcCtx *c, int l, RcCfg x)
{
    int end = c->last_fixed ? c->nb_layers - 1 : c->nb_layers;
    c->cfg[l] = x;
    for (int m = l + 1; m < end; m++)
        c->cfg[m] = x;
}

static int rc_measure(RcCtx *c)
{
    rc_apply(c);
    memset(c->comp_len, 0, sizeof(c->comp_len));
    memset(c->layer_len, 0, sizeof(c->layer_len));
    c->total = c->size_fn(c->opaque, c->plan, c->comp_len, c->layer_len);
    c->nb_probes++;
    return c->total < 0 ? (int)c->total : 0;
}

/** Whether the last measurement keeps every hard budget, and layer l's own target. */
static int rc_fits(const RcCtx *c, int l)
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

/**
 * Sets layer l to x and tells whether the result is "ok": within the budgets (BYTES), or not
 * yet at the target quality (PSNR: ok means more passes are still needed).
 */
static int rc_try(RcCtx *c, int l, int pred, RcCfg x, int *ok)
{
    int ret;
    rc_set(c, l, x);
    if (pred == RC_PRED_PSNR) {
        rc_apply(c);
        *ok = rc_dist_sum(c->plan) > c->dist_limit;
        return 0;
    }
    if ((ret = rc_measure(c)) < 0)
        return ret;
    *ok = rc_fits(c, l);
    return 0;
}

/** The largest hull slope that layer l does not include yet, over code-blocks it may grow. */
static double rc_next_slope(const RcCtx *c, int l)
{
    const J2kiPlan *plan = c->plan;
    int last = c->nb_layers - 1;
    double s = 0.0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiCblk *cb = &plan->cblks[i];
        int n = cb->layer_passes[l];
        if (c->floor[plan->bands[cb->band_idx].comp] > 0.0)
            continue;
        if (c->last_fixed && l < last && n >= cb->layer_passes[last])
            continue;
        double v = j2ki_rc_cblk_next_slope(cb->passes, cb->nb_passes, n);
        if (v > s)
            s = v;
    }
    return s;
}

/** Whether some threshold in (t_lo, t_hi) selects for layer l differently from both ends:
 *  the code-blocks it may grow have at least two distinct hull slopes in (t_lo, t_hi]. */
static int rc_can_split(const RcCtx *c, int l, double t_lo, double t_hi)
{
    const J2kiPlan *plan = c->plan;
    int last = c->nb_layers - 1;
    double mn = 0.0, mx = 0.0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiCblk *cb = &plan->cblks[i];
        int end = cb->nb_passes;
        if (c->floor[plan->bands[cb->band_idx].comp] > 0.0)
            continue;
        if (c->last_fixed && l < last)
            end = cb->layer_passes[last];
        for (int k = 0; k < end; k++) {
            double v = cb->passes[k].slope;
            if (v > t_lo && v <= t_hi) {
                if (mx == 0.0)
                    mn = mx = v;
                else if (v != mn || v != mx)
                    return 1;
            }
        }
    }
    return 0;
}

/**
 * Moves layer l's threshold from its current, ok value as far down as it stays ok. On return
 * cfg[l] (and the layers that follow it) hold the last ok threshold, *b the first not-ok one
 * found next to it (*has_b = 0 when every hull vertex is ok).
 */
static int rc_search(RcCtx *c, int l, int pred, int max_probes, RcCfg *b, int *has_b)
{
    uint32_t nb = c->plan->nb_cblks;
    RcCfg a = c->cfg[l], x;
    int ok, ret, probes = 0;

    *has_b = 0;
    if (!(c->smax > 0.0))
        return 0;
    x.t = c->smin;
    x.k = nb;
    if ((ret = rc_try(c, l, pred, x, &ok)) < 0)
        return ret;
    if (ok)
        return 0;
    *b = x;
    *has_b = 1;

    /* log-domain bisection on the bit patterns: (smin excl. of its predecessor) is not ok */
    uint64_t lo = rc_bits(c->smin) - 1, hi = rc_bits(a.t);
    while (hi > lo + 1 && probes < max_probes &&
           rc_can_split(c, l, rc_from_bits(lo), rc_from_bits(hi))) {
        uint64_t mid = lo + (hi - lo) / 2;
        x.t = rc_from_bits(mid);
        x.k = 0;
        if ((ret = rc_try(c, l, pred, x, &ok)) < 0)
            return ret;
        probes++;
        if (ok) {
            a = x;
            hi = mid;
        } else {
            *b = x;
            lo = mid;
        }
    }

    /* next distinct slopes, then the ties of the first one that does not fit, by index */
    for (int r = 0; r < RC_MAX_REFINE; r++) {
        rc_set(c, l, a);
        rc_apply(c);
        double s = rc_next_slope(c, l);
        if (!(s > 0.0))
            break;
        uint32_t klo = s == a.t ? a.k : 0, khi = nb;
        x.t = s;
        x.k = nb;
        if ((ret = rc_try(c, l, pred, x, &ok)) < 0)
            return ret;
        if (ok) {
            a = x;
            continue;
        }
        *b = x;
        while (khi > klo + 1) {
            x.k = klo + (khi - klo) / 2;
            if ((ret = rc_try(c, l, pred, x, &ok)) < 0)
                return ret;
            if (ok) {
                a = x;
                klo = x.k;
            } else {
                *b = x;
                khi = x.k;
            }
        }
        break;
    }
    rc_set(c, l, a);
    return 0;
}

/** BYTES: logs which budget the codestream without any code-block data already breaks. */
static int rc_headers_too_big(RcCtx *c)
{
    int bad = 0;
    if (c->frame_budget && (uint64_t)c->total > c->frame_budget) {
        j2ki_log(c->log, J2KC_LOG_ERROR, "rate control: the codestream without any code-block data "
                 "(headers and empty packets) is %lld bytes, over the budget of %llu bytes",
                 (long long)c->total, (unsigned long long)c->frame_budget);
        bad = 1;
    }
    for (int cc = 0; c->comp_budget && cc < c->nb_comps; cc++)
        if (c->comp_len[cc] > c->comp_budget) {
            j2ki_log(c->log, J2KC_LOG_ERROR, "rate control: component %d's tile-parts without any "
                     "code-block data are %llu bytes, over comp_bytes=%llu", cc,
                     (unsigned long long)c->comp_len[cc], (unsigned long long)c->comp_budget);
            bad = 1;
        }
    for (int l = 0; l < c->nb_layers; l++)
        if (c->hard[l] && c->budget[l] && c->layer_len[l] > c->budget[l]) {
            j2ki_log(c->log, J2KC_LOG_ERROR, "rate control: layer %d needs at least %llu bytes "
                     "(headers and empty packets), over its budget of %llu bytes", l,
                     (unsigned long long)c->layer_len[l], (unsigned long long)c->budget[l]);
            bad = 1;
        }
    return bad ? J2KC_ERR_BUFSIZE : 0;
}

/** BYTES, last layer with comp_bytes: floors for components that break their budget first. */
static int rc_comp_floors(RcCtx *c, RcCfg b, int has_b)
{
    int L = c->nb_layers, ret, ok;
    for (int round = 0; round < c->nb_comps && has_b; round++) {
        RcCfg a = c->cfg[L - 1];
        int nb_new = 0;
        double f = rc_from_bits(rc_bits(a.t) + 1);
        if ((ret = rc_try(c, L - 1, RC_PRED_BYTES, b, &ok)) < 0)
            return ret;
        for (int cc = 0; cc < c->nb_comps; cc++)
            if (c->floor[cc] == 0.0 && c->comp_len[cc] > c->comp_budget) {
                c->floor[cc] = f;
                nb_new++;
                j2ki_log(c->log, J2KC_LOG_DEBUG, "rate control: component %d held at slope 2^%.4f "
                         "by comp_bytes=%llu", cc, log2(f), (unsigned long long)c->comp_budget);
            }
        if ((ret = rc_try(c, L - 1, RC_PRED_BYTES, a, &ok)) < 0)
            return ret;
        if (!nb_new)
            break;
        if (!ok) {
            /* only reachable if removing passes grew a packet header: keep the known fit */
            for (int cc = 0; cc < c->nb_comps; cc++)
                if (c->floor[cc] == f)
                    c->floor[cc] = 0.0;
            break;
        }
        if ((ret = rc_search(c, L - 1, RC_PRED_BYTES, RC_MAX_PROBES, &b, &has_b)) < 0)
            return ret;
    }
    return 0;
}

/** NONE/SLOPE/PSNR with several layers: geometric targets for the layers below the last. */
static int rc_lower_layers(RcCtx *c)
{
    int L = c->nb_layers, ret, ok, has_b;
    RcCfg none = { c->smax, 0 }, b;
    if (L < 2)
        return 0;
    c->last_fixed = 1;
    for (int l = 0; l < L - 1; l++)
        c->cfg[l] = none;
    if ((ret = rc_measure(c)) < 0)
        return ret;
    for (int l = 0; l < L - 1; l++) {
        c->budget[l] = (uint64_t)((double)c->total / pow(2.0, 0.5 * (L - 1 - l)));
        c->hard[l] = 0;
    }
    for (int l = 0; l < L - 1; l++) {
        if ((ret = rc_try(c, l, RC_PRED_BYTES, l ? c->cfg[l - 1] : none, &ok)) < 0)
            return ret;
        if (ok && (ret = rc_search(c, l, RC_PRED_BYTES, RC_MAX_PROBES, &b, &has_b)) < 0)
            return ret;
    }
    return 0;
}

/** One candidate of the final fill: code-block i may grow from n_old to n_new passes. */
typedef struct RcFillCand {
    double   s;
    uint32_t i;
    uint16_t n_old, n_new;
} RcFillCand;

static int rc_fill_cmp(const void *a, const void *b)
{
    const RcFillCand *x = a, *y = b;
    if (x->s != y->s)
        return x->s > y->s ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static void rc_fill_apply(RcCtx *c, const RcFillCand *cand, uint32_t nb, uint32_t p)
{
    int last = c->nb_layers - 1;
    for (uint32_t j = 0; j < nb; j++)
        c->plan->cblks[cand[j].i].layer_passes[last] = j < p ? cand[j].n_new : cand[j].n_old;
}

static int rc_measure_as_is(RcCtx *c)
{
    memset(c->comp_len, 0, sizeof(c->comp_len));
    memset(c->layer_len, 0, sizeof(c->layer_len));
    c->total = c->size_fn(c->opaque, c->plan, c->comp_len, c->layer_len);
    c->nb_probes++;
    return c->total < 0 ? (int)c->total : 0;
}

/**
 * Final fill of the last layer (BYTES): one threshold leaves up to one hull segment per
 * code-block of slack unused when the segment at the threshold is large. Candidates are each
 * code-block's next hull vertex, in decreasing slope order (ties by code-block index); the
 * longest prefix of that list that keeps every budget is found by bisection on its length
 * (sizes grow with the prefix, so this is exact), twice. Deterministic: sorted by (slope,
 * index), sized with integer byte counts.
 */
static int rc_fill(RcCtx *c)
{
    J2kiPlan *plan = c->plan;
    int last = c->nb_layers - 1, ret;
    if (!plan->rc_scratch && !(plan->rc_scratch = malloc((size_t)(plan->nb_cblks ? plan->nb_cblks : 1) *
                                                         sizeof(RcFillCand))))
        return J2KC_ERR_NOMEM;
    RcFillCand *cand = plan->rc_scratch;
    for (int round = 0; round < 2; round++) {
        uint32_t nb = 0;
        for (uint32_t i = 0; i < plan->nb_cblks; i++) {
            J2kiCblk *cb = &plan->cblks[i];
            int n = cb->layer_passes[last], k;
            if (c->floor[plan->bands[cb->band_idx].comp] > 0.0)
                continue;
            for (k = n; k < cb->nb_passes && !(cb->passes[k].slope > 0.0); k++)
                ;
            if (k >= cb->nb_passes)
                continue;
            cand[nb].s = cb->passes[k].slope;
            cand[nb].i = i;
            cand[nb].n_old = (uint16_t)n;
            cand[nb].n_new = (uint16_t)(k + 1);
            nb++;
        }
        if (!nb)
            break;
        qsort(cand, nb, sizeof(*cand), rc_fill_cmp);
        /* greedy pick by estimated cost (data bytes plus a few header bytes) against the slack
         * of the frame and of each component; what is kept stays in slope order */
        int64_t slack = c->frame_budget ? (int64_t)c->frame_budget - c->total : INT64_MAX;
        int64_t cslack[J2KC_MAX_COMPS];
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
            cslack[cc] = c->comp_budget && cc < c->nb_comps ? (int64_t)c->comp_budget - (int64_t)c->comp_len[cc]
                                                            : INT64_MAX;
        uint32_t kept = 0;
        for (uint32_t j = 0; j < nb; j++) {
            const J2kiCblk *cb = &plan->cblks[cand[j].i];
            int comp = plan->bands[cb->band_idx].comp;
            int64_t est = (int64_t)cb->passes[cand[j].n_new - 1].rate -
                          (cand[j].n_old ? (int64_t)cb->passes[cand[j].n_old - 1].rate : 0) +
                          (cand[j].n_old ? 2 : 5);
            if (est <= slack && est <= cslack[comp]) {
                slack -= est;
                cslack[comp] -= est;
                cand[kept++] = cand[j];
            } else {
                /* left as it is */
                cb->layer_passes[last] = cand[j].n_old;
            }
        }
        nb = kept;
        if (!nb)
            break;
        uint32_t lo = 0, hi = nb;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo + 1) / 2;
            rc_fill_apply(c, cand, nb, mid);
            if ((ret = rc_measure_as_is(c)) < 0)
                return ret;
            if (rc_fits(c, last))
                lo = mid;
            else
                hi = mid - 1;
        }
        rc_fill_apply(c, cand, nb, lo);
        if ((ret = rc_measure_as_is(c)) < 0)
            return ret;
        j2ki_log(c->log, J2KC_LOG_DEBUG, "rate control fill %d: %u of %u candidates, %lld bytes",
                 round, lo, nb, (long long)c->total);
        if (!lo)
            break;
    }
    return 0;
}

int j2ki_rc_run_with(J2kiPlan *plan, const J2kiLog *log, J2kiRcSizeFn size_fn, void *opaque)
{
    const J2kiCodingParams *cp = plan->cp;
    RcCtx *c, ctx;
    int L = cp->nb_layers, ret = 0, ok, has_b;
    RcCfg b;

    if (L < 1 || L > J2KI_MAX_LAYERS || !size_fn) {
        j2ki_log(log, J2KC_LOG_ERROR, "rate control: %d layers", L);
        return J2KC_ERR_INVAL;
    }
    c = &ctx;
    memset(c, 0, sizeof(*c));
    c->plan = plan;
    c->log = log;
    c->size_fn = size_fn;
    c->opaque = opaque;
    c->nb_layers = L;
    c->nb_comps = cp->img.nb_comps < J2KC_MAX_COMPS ? cp->img.nb_comps : J2KC_MAX_COMPS;

    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        J2kiCblk *cb = &plan->cblks[i];
        j2ki_rc_hull(cb, plan->bands[cb->band_idx].dist_weight);
        for (int k = 0; k < cb->nb_passes; k++) {
            double s = cb->passes[k].slope;
            if (s > 0.0 && (c->smin == 0.0 || s < c->smin))
                c->smin = s;
            if (s > c->smax)
                c->smax = s;
        }
    }
    RcCfg none = { c->smax, 0 };

    switch (cp->rc_mode) {
    case J2KI_RC_NONE:
        c->cfg[L - 1].t = -1.0;
        rc_apply(c);
        if ((ret = rc_lower_layers(c)) < 0)
            goto fail;
        break;
    case J2KI_RC_SLOPE:
        c->cfg[L - 1].t = exp2(cp->slope);
        c->cfg[L - 1].k = plan->nb_cblks;
        rc_apply(c);
        if ((ret = rc_lower_layers(c)) < 0)
            goto fail;
        break;
    case J2KI_RC_PSNR: {
        double lim = (double)plan->nb_samples * J2KI_RC_DIST_ONE * pow(10.0, -cp->psnr / 10.0);
        c->dist_limit = lim >= 9223372036854775807.0 ? INT64_MAX : (int64_t)lim;
        if ((ret = rc_try(c, 0, RC_PRED_PSNR, none, &ok)) < 0)
            goto fail;
        if (ok) {
            if ((ret = rc_search(c, 0, RC_PRED_PSNR, RC_PSNR_PROBES, &b, &has_b)) < 0)
                goto fail;
            if (has_b)
                rc_set(c, 0, b);
            else
                j2ki_log(log, J2KC_LOG_INFO, "rate control: %.2f dB not reached with every pass "
                         "(estimate %.2f dB)", cp->psnr, j2ki_rc_estimate_psnr(plan));
        }
        c->cfg[L - 1] = c->cfg[0];
        rc_apply(c);
        if ((ret = rc_lower_layers(c)) < 0)
            goto fail;
        break;
    }
    case J2KI_RC_BYTES:
        c->frame_budget = cp->frame_bytes;
        c->comp_budget = cp->comp_bytes;
        for (int l = 0; l < L; l++) {
            c->budget[l] = cp->layer_bytes[l];
            c->hard[l] = l < cp->nb_layer_bytes || l == L - 1;
        }
        if (!c->budget[L - 1] || (c->frame_budget && c->budget[L - 1] > c->frame_budget))
            c->budget[L - 1] = c->frame_budget;
        for (int l = 0; l < L; l++)
            c->cfg[l] = none;
        if ((ret = rc_measure(c)) < 0 || (ret = rc_headers_too_big(c)) < 0)
            goto fail;
        for (int l = 0; l < L; l++) {
            if (!l)
                ok = rc_fits(c, 0);           /* the empty codestream just measured */
            else if ((ret = rc_try(c, l, RC_PRED_BYTES, c->cfg[l - 1], &ok)) < 0)
                goto fail;
            if (!ok) {
                if (c->hard[l]) {
                    j2ki_log(log, J2KC_LOG_ERROR, "rate control: layer %d's budget of %llu bytes "
                             "is below the %llu bytes that the earlier layers and its empty "
                             "packets take", l, (unsigned long long)c->budget[l],
                             (unsigned long long)c->layer_len[l]);
                    ret = J2KC_ERR_BUFSIZE;
                    goto fail;
                }
                continue;
            }
            if ((ret = rc_search(c, l, RC_PRED_BYTES, RC_MAX_PROBES, &b, &has_b)) < 0)
                goto fail;
            if (l == L - 1 && c->comp_budget && (ret = rc_comp_floors(c, b, has_b)) < 0)
                goto fail;
        }
        break;
    default:
        j2ki_log(log, J2KC_LOG_ERROR, "rate control: unknown mode %d", cp->rc_mode);
        ret = J2KC_ERR_INVAL;
        goto fail;
    }
    if (cp->rc_mode == J2KI_RC_BYTES) {
        /* the search ends on an ok threshold, but the last sizing was another one: measure */
        if ((ret = rc_measure(c)) < 0)
            goto fail;
        if (rc_fits(c, L - 1) && (ret = rc_fill(c)) < 0)
            goto fail;
        if (!rc_fits(c, L - 1)) {
            j2ki_log(log, J2KC_LOG_ERROR, "internal: rate control chose %lld bytes over a budget",
                     (long long)c->total);
            ret = J2KC_ERR_INTERNAL;
            goto fail;
        }
        j2ki_log(log, J2KC_LOG_VERBOSE, "rate control: %lld bytes for a budget of %llu, "
                 "threshold 2^%.4f, %d sizings", (long long)c->total,
                 (unsigned long long)c->budget[L - 1], c->cfg[L - 1].t > 0.0 ? log2(c->cfg[L - 1].t) : -INFINITY,
                 c->nb_probes);
    }
    if (log && log->fn && log->max_level >= J2KC_LOG_VERBOSE)
        j2ki_log(log, J2KC_LOG_VERBOSE, "rate control: estimated PSNR %.2f dB",
                 j2ki_rc_estimate_psnr(plan));
    return 0;
fail:
    return ret;
}

int j2ki_rc_run(J2kiPlan *plan, const J2kiLog *log)
{
    return j2ki_rc_run_with(plan, log, rc_t2_size, NULL);
}
