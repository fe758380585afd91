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
 *    reproduces. Where both ends of the interval have been sized, the next probe is not the
 *    middle but the edge of the predicted crossing (rc_core.h, j2ki_rc_guide: histograms of
 *    the hull bytes by slope, as in the GPU PCRD-opt paper's per-threshold byte sums, narrowed
 *    to one distinct slope without sizing); any probe inside the interval keeps the result, so
 *    this only saves sizings (16 instead of 28 on a 4K DCI frame). A search whose starting
 *    threshold was the caller's last sizing (its ok test) has both ends sized after its first
 *    probe (the lowest threshold), so its first step is already a guided one (10 sizings per
 *    2K or 4K DCI frame instead of 11; 9 with the refine step's known outcome below). The paper probes 32 thresholds per iteration: with
 *    J2KC_RC_PROBES = n > 1 (rc_ref.h) a guided step sizes up to n thresholds at once, the guide's
 *    probe and the edges of the non-empty histogram bins around each level's predicted
 *    crossing (j2ki_rc_multi_round), which saves a step per search (DCI: 9 instead of 10) but
 *    measured slower on the GPU (each step sizes every precinct whose selection changes
 *    across the probes once per distinct selection), so one threshold per step is the
 *    default (bench/results/history.md#rate-control-probes-per-step). After the bisection (or J2KI_RC_MAX_PROBES probes), the next distinct hull
 *    slopes are tried one at a time (the first one without a sizing when it selects what the
 *    interval's not-ok end selected: j2ki_rc_refine_known), and where a set of code-blocks
 *    shares the slope that no longer fits, the ties are split by code-block index (a second bisection on that index), which uses the remaining
 *    bytes deterministically. That bisection only sizes indices where the selection changes:
 *    between two code-blocks holding the tied slope every index selects the same passes, so
 *    each step first narrows the index range to those code-blocks (one tied code-block, the
 *    usual case, needs no sizing at all; before, it cost about log2(code-blocks) sizings).
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
 * floats across code-blocks. The decision procedure itself (j2ki_rc_decide) lives in rc_core.h
 * and runs unchanged on the device (rc_cuda.cu); this file gives it its host operations (loops
 * over plan->cblks, tier-2 sizing by j2ki_t2_size) and prepares its context (j2ki_rc_ctx_init),
 * so the CUDA backend decides the same by construction.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/rc_ref.h"
#include "hd/rc_core.h"
#include "ref/t2_ref.h"
#include "core/threadpool.h"
#include "core/tuning.h"

/* Code-blocks per item of the hull, apply and histogram jobs on a worker pool (j2ki_rc_run_pool) */
#define RC_POOL_CBLKS J2KI_TUNE_RC_POOL_CBLKS

/** One worker's partial histogram of host_hist (the bins of j2ki_rc_hist_level). */
typedef struct RcHist {
    uint64_t bytes[J2KC_MAX_COMPS][J2KI_RC_HIST_BINS], mn[J2KI_RC_HIST_BINS], mx[J2KI_RC_HIST_BINS];
} RcHist;

/** The host executor of the ops: the plan, the size function, the fill candidates, and the
 *  optional worker pool with the per-worker partial results of its jobs. */
typedef struct RcHost {
    J2kiPlan      *plan;
    J2kiRcSizeFn   size_fn;
    void          *opaque;
    uint32_t       nb_cand;
    J2kiPool      *pool;
    J2kiRcCtx     *ctx;
    double         smin[J2KI_POOL_MAX_THREADS], smax[J2KI_POOL_MAX_THREADS];   /* hull job */
    RcHist        *hist;                    /* hist job: one per worker (j2ki_rc_pool_scratch_size) */
    uint32_t       hist_job;                /* hist job number; a worker's partial is cleared ... */
    uint32_t       hist_stamp[J2KI_POOL_MAX_THREADS];   /* ... at its first item of the job */
    int            hist_l, hist_sh;
    uint64_t       hist_lo, hist_hi;
} RcHost;

static int64_t rc_t2_size(void *opaque, J2kiPlan *plan, uint64_t *comp_len, uint64_t *layer_len)
{
    (void)opaque;
    return j2ki_t2_size(plan, comp_len, layer_len);
}

static int rc_comp(const J2kiPlan *plan, const J2kiCblk *cb) { return plan->bands[cb->band_idx].comp; }

/* Hulls of code-blocks [i0, i1), their smallest and largest positive slopes into *smin, *smax
 * (minimum and maximum: the same whichever blocks a worker did). */
static void hull_range(J2kiPlan *plan, uint32_t i0, uint32_t i1, double *smin, double *smax)
{
    for (uint32_t i = i0; i < i1; i++) {
        J2kiCblk *cb = &plan->cblks[i];
        j2ki_rc_hull(cb, plan->bands[cb->band_idx].dist_weight);
        for (int k = 0; k < cb->nb_passes; k++) {
            double s = cb->passes[k].slope;
            if (s > 0.0 && (*smin == 0.0 || s < *smin))
                *smin = s;
            if (s > *smax)
                *smax = s;
        }
    }
}

static void hull_item(void *opaque, uint32_t j, int worker)
{
    RcHost *h = opaque;
    uint32_t i0 = j * RC_POOL_CBLKS, i1 = i0 + RC_POOL_CBLKS;
    hull_range(h->plan, i0, i1 < h->plan->nb_cblks ? i1 : h->plan->nb_cblks, &h->smin[worker], &h->smax[worker]);
}

static void host_hull(J2kiRcCtx *c)
{
    RcHost *h = c->opaque;
    J2kiPlan *plan = h->plan;
    int nw = j2ki_pool_threads(h->pool);
    if (nw == 1) {
        hull_range(plan, 0, plan->nb_cblks, &c->smin, &c->smax);
        return;
    }
    for (int w = 0; w < nw; w++)
        h->smin[w] = h->smax[w] = 0.0;
    j2ki_pool_run(h->pool, (uint32_t)j2ki_ceil_div(plan->nb_cblks, RC_POOL_CBLKS), hull_item, h);
    for (int w = 0; w < nw; w++) {
        if (h->smin[w] > 0.0 && (c->smin == 0.0 || h->smin[w] < c->smin))
            c->smin = h->smin[w];
        if (h->smax[w] > c->smax)
            c->smax = h->smax[w];
    }
}

static void apply_item(void *opaque, uint32_t j, int worker)
{
    RcHost *h = opaque;
    J2kiPlan *plan = h->plan;
    uint32_t i0 = j * RC_POOL_CBLKS, i1 = i0 + RC_POOL_CBLKS;
    (void)worker;
    for (uint32_t i = i0; i < i1 && i < plan->nb_cblks; i++)
        j2ki_rc_cblk_apply(h->ctx, &plan->cblks[i], i, rc_comp(plan, &plan->cblks[i]));
}

static void host_apply(J2kiRcCtx *c)
{
    RcHost *h = c->opaque;
    j2ki_pool_run(h->pool, (uint32_t)j2ki_ceil_div(h->plan->nb_cblks, RC_POOL_CBLKS), apply_item, h);
}

static int host_size(J2kiRcCtx *c)
{
    RcHost *h = c->opaque;
    c->total = h->size_fn(h->opaque, h->plan, c->comp_len, c->layer_len);
    return c->total < 0 ? (int)c->total : 0;
}

/** Fixed-point scale of a band's residuals: dist_weight / peak^2 * 2^32 (rc_core.h). */
double j2ki_rc_dist_scale(const J2kiPlan *plan, const J2kiBand *band)
{
    double peak = ldexp(1.0, plan->cp->img.depth[band->comp]) - 1.0;
    return band->dist_weight / (peak * peak) * J2KI_RC_DIST_ONE;
}

/**
 * Fixed-point residual distortion of the last layer's truncation (see rc_core.h), summed as
 * integers (saturating; the total is never below 0: passes left out cannot make the error
 * negative overall).
 */
static int64_t rc_dist_sum(const J2kiPlan *plan)
{
    int last = plan->cp->nb_layers - 1;
    int64_t sum = 0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiCblk *cb = &plan->cblks[i];
        double scale = j2ki_rc_dist_scale(plan, &plan->bands[cb->band_idx]);
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

static int64_t host_dist_sum(J2kiRcCtx *c) { return rc_dist_sum(((RcHost *)c->opaque)->plan); }

static double host_next_slope(J2kiRcCtx *c, int l)
{
    J2kiPlan *plan = ((RcHost *)c->opaque)->plan;
    double s = 0.0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        double v = j2ki_rc_cblk_growth(c, &plan->cblks[i], rc_comp(plan, &plan->cblks[i]), l);
        if (v > s)
            s = v;
    }
    return s;
}

static int host_can_split(J2kiRcCtx *c, int l, double lo, double hi)
{
    J2kiPlan *plan = ((RcHost *)c->opaque)->plan;
    double mn = 0.0, mx = 0.0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        double a, b;
        j2ki_rc_cblk_range(c, &plan->cblks[i], rc_comp(plan, &plan->cblks[i]), l, lo, hi, &a, &b);
        if (b == 0.0)
            continue;
        if (mx == 0.0 || a < mn)
            mn = a;
        if (b > mx)
            mx = b;
        if (mn != mx)
            return 1;
    }
    return 0;
}

static void host_tie_span(J2kiRcCtx *c, double s, uint32_t klo, uint32_t khi, uint32_t *first, uint32_t *last)
{
    J2kiPlan *plan = ((RcHost *)c->opaque)->plan;
    *first = 1;
    *last = 0;
    for (uint32_t i = klo; i < khi && i < plan->nb_cblks; i++)
        if (j2ki_rc_cblk_has_slope(&plan->cblks[i], s)) {
            if (*first > *last)
                *first = i;
            *last = i;
        }
}

/* Histogram of code-blocks [i0, i1) into hs (bytes summed, smallest and largest value per bin:
 * the same whichever blocks a worker did and in whichever order). */
static void hist_range(const J2kiRcCtx *c, const J2kiPlan *plan, uint32_t i0, uint32_t i1, int l, uint64_t lo,
                       uint64_t hi, int sh, RcHist *hs)
{
    for (uint32_t i = i0; i < i1; i++) {
        const J2kiCblk *cb = &plan->cblks[i];
        int comp = rc_comp(plan, cb), end = j2ki_rc_cblk_end(c, cb, comp, l);
        uint32_t prev = 0;
        for (int k = 0; k < end; k++) {
            uint64_t v;
            uint32_t n = j2ki_rc_hist_seg(cb, k, end, lo, hi, &prev, &v);
            if (!v)
                continue;
            int b = (int)((v - lo - 1) >> sh);
            hs->bytes[comp][b] += n;
            if (!hs->mx[b] || v < hs->mn[b])
                hs->mn[b] = v;
            if (v > hs->mx[b])
                hs->mx[b] = v;
        }
    }
}

static void hist_item(void *opaque, uint32_t j, int worker)
{
    RcHost *h = opaque;
    uint32_t i0 = j * RC_POOL_CBLKS, i1 = i0 + RC_POOL_CBLKS;
    if (h->hist_stamp[worker] != h->hist_job) {
        memset(&h->hist[worker], 0, sizeof(h->hist[worker]));
        h->hist_stamp[worker] = h->hist_job;
    }
    hist_range(h->ctx, h->plan, i0, i1 < h->plan->nb_cblks ? i1 : h->plan->nb_cblks, h->hist_l, h->hist_lo,
               h->hist_hi, h->hist_sh, &h->hist[worker]);
}

static int host_hist(J2kiRcCtx *c, int l, J2kiRcPred *p, uint64_t *L, uint64_t *H, int first)
{
    RcHost *h = c->opaque;
    J2kiPlan *plan = h->plan;
    RcHist acc;
    uint64_t (*bytes)[J2KI_RC_HIST_BINS] = acc.bytes, *mn = acc.mn, *mx = acc.mx;
    uint64_t lo = *L, hi = *H;
    int sh = j2ki_rc_hist_shift(lo, hi), nw = j2ki_pool_threads(h->pool);
    memset(&acc, 0, sizeof(acc));
    if (nw == 1 || !h->hist) {
        hist_range(c, plan, 0, plan->nb_cblks, l, lo, hi, sh, &acc);
    } else {
        h->hist_job++;
        h->hist_l = l;
        h->hist_lo = lo;
        h->hist_hi = hi;
        h->hist_sh = sh;
        j2ki_pool_run(h->pool, (uint32_t)j2ki_ceil_div(plan->nb_cblks, RC_POOL_CBLKS), hist_item, h);
        for (int w = 0; w < nw; w++) {
            const RcHist *hs = &h->hist[w];
            if (h->hist_stamp[w] != h->hist_job)
                continue;       /* took no item */
            for (int b = 0; b < J2KI_RC_HIST_BINS; b++) {
                for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
                    bytes[cc][b] += hs->bytes[cc][b];
                if (!hs->mx[b])
                    continue;
                if (!mx[b] || hs->mn[b] < mn[b])
                    mn[b] = hs->mn[b];
                if (hs->mx[b] > mx[b])
                    mx[b] = hs->mx[b];
            }
        }
    }
    if (first)
        for (int cc = 0; cc < J2KC_MAX_COMPS; cc++) {
            p->d[cc] = 0;
            for (int b = 0; b < J2KI_RC_HIST_BINS; b++)
                p->d[cc] += bytes[cc][b];
        }
    return j2ki_rc_hist_level(c, l, p, (const uint64_t (*)[J2KI_RC_HIST_BINS])bytes, mn, mx, L, H);
}

static int rc_fill_cmp(const void *a, const void *b)
{
    const J2kiRcFillCand *x = a, *y = b;
    return j2ki_rc_fill_before(x, y) ? -1 : j2ki_rc_fill_before(y, x) ? 1 : 0;
}

static int64_t host_fill_prepare(J2kiRcCtx *c)
{
    RcHost *h = c->opaque;
    J2kiPlan *plan = h->plan;
    int last = c->nb_layers - 1;
    uint32_t nb = 0, kept = 0;
    if (!plan->rc_scratch && !(plan->rc_scratch = malloc((size_t)(plan->nb_cblks ? plan->nb_cblks : 1) *
                                                         sizeof(J2kiRcFillCand))))
        return J2KC_ERR_NOMEM;
    J2kiRcFillCand *cand = plan->rc_scratch;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiCblk *cb = &plan->cblks[i];
        int comp = rc_comp(plan, cb);
        nb += (uint32_t)(j2ki_rc_fill_cand(c, cb, i, comp, &cand[nb]) &&
                         j2ki_rc_fill_fits(c, comp, j2ki_rc_fill_est(cb, &cand[nb])));
    }
    h->nb_cand = 0;
    if (!nb)
        return 0;
    qsort(cand, nb, sizeof(*cand), rc_fill_cmp);
    /* greedy pick by estimated cost against the slack of the frame and of each component; what
     * is kept stays in slope order */
    int64_t slack = c->frame_budget ? (int64_t)c->frame_budget - c->total : INT64_MAX;
    int64_t cslack[J2KC_MAX_COMPS];
    for (int cc = 0; cc < J2KC_MAX_COMPS; cc++)
        cslack[cc] = c->comp_budget && cc < c->nb_comps ? (int64_t)c->comp_budget - (int64_t)c->comp_len[cc]
                                                        : INT64_MAX;
    for (uint32_t j = 0; j < nb; j++) {
        J2kiCblk *cb = &plan->cblks[cand[j].i];
        int comp = rc_comp(plan, cb);
        int64_t est = j2ki_rc_fill_est(cb, &cand[j]);
        if (est <= slack && est <= cslack[comp]) {
            slack -= est;
            cslack[comp] -= est;
            cand[kept++] = cand[j];
        } else {
            cb->layer_passes[last] = cand[j].n_old;
        }
    }
    h->nb_cand = kept;
    return kept;
}

static void host_fill_apply(J2kiRcCtx *c, uint32_t p)
{
    RcHost *h = c->opaque;
    const J2kiRcFillCand *cand = h->plan->rc_scratch;
    int last = c->nb_layers - 1;
    for (uint32_t j = 0; j < h->nb_cand; j++)
        h->plan->cblks[cand[j].i].layer_passes[last] = j < p ? cand[j].n_new : cand[j].n_old;
}

/* The probes one at a time from the top (j2ki_rc_multi_step): j* is found at the first that
 * does not fit, so the ones below it are not sized (the device sizes them all at once and
 * reads the same j*). */
static int host_size_multi(J2kiRcCtx *c, int l, const uint64_t *t, int n, J2kiRcPred *p)
{
    J2kiPlan *plan = ((RcHost *)c->opaque)->plan;
    int l1 = j2ki_rc_set_end(c, l), js = n, ret;
    for (int j = n - 1; j >= 0; j--) {
        J2kiRcCfg x = { j2ki_rc_from_bits(t[j]), 0 };
        for (uint32_t i = 0; i < plan->nb_cblks; i++)
            j2ki_rc_cblk_apply_x(c, &plan->cblks[i], i, rc_comp(plan, &plan->cblks[i]), l, l1, x);
        if ((ret = j2ki_rc_size_now(c)) < 0)   /* counted by j2ki_rc_multi_round */
            return ret;
        if (!j2ki_rc_multi_step(c, l, j, p, &js))
            break;
    }
    return js;
}

static const J2kiRcOps rc_host_ops = {
    host_hull, host_apply, host_size, host_dist_sum, host_next_slope, host_can_split,
    host_tie_span, host_hist, host_fill_prepare, host_fill_apply, host_size_multi,
};

double j2ki_rc_estimate_psnr(const J2kiPlan *plan)
{
    int64_t sum = rc_dist_sum(plan);
    if (!sum)
        return INFINITY;
    return 10.0 * log10((double)plan->nb_samples * J2KI_RC_DIST_ONE / (double)sum);
}

uint32_t j2ki_rc_hull_mask(const J2kiPlan *plan)
{
    uint32_t m = 0;
    int L = plan->cp->nb_layers;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiCblk *cb = &plan->cblks[i];
        m |= j2ki_rc_cblk_hull_bits(cb->passes, cb->nb_passes, cb->layer_passes[L - 1], rc_comp(plan, cb));
    }
    return m;
}

void j2ki_rc_hull(J2kiCblk *cb, double weight)
{
    j2ki_rc_hull_passes(cb->passes, cb->nb_passes, weight);
}

int j2ki_rc_multi_probes(const J2kiCodingParams *cp)
{
    const int x = cp->hooks.rc_probes;
    return x < 1 ? 1 : x > J2KI_RC_MULTI_MAX ? J2KI_RC_MULTI_MAX : x;
}

int j2ki_rc_ctx_init(J2kiRcCtx *c, const J2kiPlan *plan)
{
    const J2kiCodingParams *cp = plan->cp;
    int L = cp->nb_layers;

    memset(c, 0, sizeof(*c));
    if (L < 1 || L > J2KI_MAX_LAYERS)
        return J2KC_ERR_INVAL;
    c->nb_cblks = plan->nb_cblks;
    c->nb_layers = L;
    c->nb_comps = cp->img.nb_comps < J2KC_MAX_COMPS ? cp->img.nb_comps : J2KC_MAX_COMPS;
    c->rc_mode = cp->rc_mode;
    c->multi = j2ki_rc_multi_probes(cp);
    for (int l = 0; l < L; l++)
        c->layer_div[l] = pow(2.0, 0.5 * (L - 1 - l));
    switch (cp->rc_mode) {
    case J2KI_RC_NONE:
        break;
    case J2KI_RC_SLOPE:
        c->slope_t = exp2(cp->slope);
        break;
    case J2KI_RC_PSNR: {
        double lim = (double)plan->nb_samples * J2KI_RC_DIST_ONE * pow(10.0, -cp->psnr / 10.0);
        c->dist_limit = lim >= 9223372036854775807.0 ? INT64_MAX : (int64_t)lim;
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
        break;
    default:
        return J2KC_ERR_INVAL;
    }
    return 0;
}

static int rc_run(J2kiPlan *plan, const J2kiLog *log, J2kiRcSizeFn size_fn, void *opaque, int plain,
                  J2kiPool *pool, void *scratch);

int j2ki_rc_run_with(J2kiPlan *plan, const J2kiLog *log, J2kiRcSizeFn size_fn, void *opaque)
{
    return j2ki_rc_run_opts(plan, log, size_fn, opaque, 0);
}

int j2ki_rc_run_opts(J2kiPlan *plan, const J2kiLog *log, J2kiRcSizeFn size_fn, void *opaque, int plain)
{
    return rc_run(plan, log, size_fn, opaque, plain, NULL, NULL);
}

size_t j2ki_rc_pool_scratch_size(int nb_threads)
{
    return nb_threads > 1 ? (size_t)nb_threads * sizeof(RcHist) : 0;
}

int j2ki_rc_run_pool(J2kiPlan *plan, const J2kiLog *log, J2kiRcSizeFn size_fn, void *opaque, J2kiPool *pool,
                     void *scratch)
{
    return rc_run(plan, log, size_fn, opaque, 0, pool, scratch);
}

static int rc_run(J2kiPlan *plan, const J2kiLog *log, J2kiRcSizeFn size_fn, void *opaque, int plain, J2kiPool *pool,
                  void *scratch)
{
    const J2kiCodingParams *cp = plan->cp;
    J2kiRcCtx c;
    RcHost h;
    int ret;

    memset(&h, 0, sizeof(h));
    h.plan = plan;
    h.size_fn = size_fn;
    h.opaque = opaque;
    h.pool = pool;
    h.ctx = &c;
    h.hist = scratch;

    if (!size_fn || (ret = j2ki_rc_ctx_init(&c, plan)) < 0) {
        j2ki_log(log, J2KC_LOG_ERROR, "rate control: %d layers, mode %d", cp->nb_layers, cp->rc_mode);
        return J2KC_ERR_INVAL;
    }
    c.ops = &rc_host_ops;
    c.opaque = &h;
    c.log = log;
    c.plain = plain;
    if ((ret = j2ki_rc_decide(&c)) < 0)
        return ret;
    if (cp->rc_mode == J2KI_RC_BYTES)
        j2ki_log(log, J2KC_LOG_DEBUG, "rate control: %lld bytes for a budget of %llu, "
                 "threshold 2^%.4f, %d thresholds sized in %d rounds", (long long)c.total,
                 (unsigned long long)c.budget[cp->nb_layers - 1],
                 c.cfg[cp->nb_layers - 1].t > 0.0 ? log2(c.cfg[cp->nb_layers - 1].t) : -INFINITY, c.nb_probes,
                 c.nb_rounds);
    /* Under HT the magnitude planes below a code-block's set are in none of its passes, so
     * the residual the estimate sums leaves them out: it would be too high (inf at times). */
    if (log && log->fn && log->max_level >= J2KC_LOG_DEBUG && !(cp->cblk_style & J2KI_CBLK_HT))
        j2ki_log(log, J2KC_LOG_DEBUG, "rate control: estimated PSNR %.2f dB",
                 j2ki_rc_estimate_psnr(plan));
    return 0;
}

int j2ki_rc_run(J2kiPlan *plan, const J2kiLog *log)
{
    return j2ki_rc_run_with(plan, log, rc_t2_size, NULL);
}
