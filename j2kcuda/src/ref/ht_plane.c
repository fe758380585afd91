/*
 * The HT set's bit-plane of every code-block under a byte budget (ht_plane.h): the model's
 * statistics per block on the worker pool, then a bisection over the slope, serial and in
 * block order (the same sums whatever the thread count).
 */
#include <math.h>

#include "ref/ht_plane.h"
#include "ref/t2_ref.h"

/** Bisection steps over log2(lambda): 2^-64 relative precision over the range below. */
#define HT_PLANE_ITERS     64
#define HT_PLANE_LOG2_MIN  (-80.0)
#define HT_PLANE_LOG2_MAX  80.0
/** Sets coded per block at most. */
#define HT_PLANE_SETS      (2 * J2KI_HT_PLANE_MEASURE + 1)

typedef struct PlaneStat {
    uint64_t q4[J2KI_HT_MAX_PLANES];
    double   dist[J2KI_HT_MAX_PLANES];
    int      top;
    int      lo, hi;                    /* the coded planes (lo > hi: none) */
    uint32_t rate[HT_PLANE_SETS][3];    /* the set at lo + k: cleanup, + SigProp, + MagRef */
    double   sdist[HT_PLANE_SETS][3];   /* their cumulative distortion decreases */
} PlaneStat;

/* per worker: the cleanup coder's scratch and output, to measure a cleanup's bytes */
typedef struct PlaneWork {
    J2kiHtScratch s;
    uint8_t       out[J2KI_HT_CUP_CAP + J2KI_HT_REF_CAP];
} PlaneWork;

typedef struct PlaneJob {
    const J2kiPlan *plan;
    const int32_t  *samples;
    PlaneStat      *st;
    PlaneWork      *work;
    double          lambda;     /* measure_item's slope: the model's */
} PlaneJob;

size_t j2ki_ht_planes_scratch_size(const J2kiPlan *plan, int nb_workers)
{
    return (size_t)(plan->nb_cblks ? plan->nb_cblks : 1) * sizeof(PlaneStat) +
           (size_t)nb_workers * sizeof(PlaneWork);
}

static void stat_item(void *opaque, uint32_t i, int worker)
{
    const PlaneJob *job = opaque;
    const J2kiCblk *cb = &job->plan->cblks[i];
    const J2kiBand *band = &job->plan->bands[cb->band_idx];
    const J2kiTileComp *tc = j2ki_cblk_tc(job->plan, cb);
    const int32_t *coefs = job->samples + j2ki_cblk_offset(job->plan, cb);
    PlaneStat *st = &job->st[i];
    int w = (int)(cb->x1 - cb->x0), h = (int)(cb->y1 - cb->y0);
    (void)worker;
    st->top = j2ki_ht_plane_stats(coefs, tc->w, w, h, band->frac_bits, st->q4, st->dist);
    st->lo = 1;
    st->hi = 0;
}

/* Second look: the sets around the plane the model picked at job->lambda are coded (cleanup,
 * SigProp and MagRef, as ht_ref.c codes them) and their exact bytes and distortions become
 * the block's truncation points there; the block's other planes keep the model's cleanup,
 * scaled by the ratio measured at the pick (the model's error is mostly a factor per block). */
static void measure_item(void *opaque, uint32_t i, int worker)
{
    const PlaneJob *job = opaque;
    const J2kiCblk *cb = &job->plan->cblks[i];
    const J2kiBand *band = &job->plan->bands[cb->band_idx];
    const J2kiTileComp *tc = j2ki_cblk_tc(job->plan, cb);
    const int32_t *coefs = job->samples + j2ki_cblk_offset(job->plan, cb);
    PlaneStat *st = &job->st[i];
    PlaneWork *pw = &job->work[worker];
    int w = (int)(cb->x1 - cb->x0), h = (int)(cb->y1 - cb->y0), b0, lo, hi;
    double ratio = 1.0;
    if (!st->top)
        return;
    b0 = j2ki_imin(j2ki_ht_plane_pick(st->q4, st->dist, st->top, band->dist_weight, job->lambda), st->top - 1);
    lo = j2ki_imax(b0 - J2KI_HT_PLANE_MEASURE, 0);
    hi = j2ki_imin(b0 + J2KI_HT_PLANE_MEASURE, st->top - 1);
    for (int b = lo; b <= hi; b++) {
        uint32_t lcup, lsp = 0, lmr = 0;
        double d[3];
        if (j2ki_ht_cleanup(coefs, tc->w, w, h, band->frac_bits, b, &pw->s, pw->out, J2KI_HT_CUP_CAP, &lcup) < 0 ||
            (b > 0 && j2ki_ht_refine(coefs, tc->w, w, h, band->frac_bits, b, &pw->s, pw->out + lcup,
                                     J2KI_HT_REF_CAP, &lsp, &lmr) < 0)) {
            /* cannot happen within the caps; the model's cleanup-only points stay */
            st->lo = 1;
            st->hi = 0;
            return;
        }
        j2ki_ht_dist(coefs, tc->w, w, h, band->frac_bits, b, pw->s.sig, d);
        st->rate[b - lo][0] = lcup;
        st->rate[b - lo][1] = lcup + lsp;
        st->rate[b - lo][2] = lcup + lsp + lmr;
        st->sdist[b - lo][0] = d[0];
        st->sdist[b - lo][1] = d[0] + d[1];
        st->sdist[b - lo][2] = d[0] + d[1] + d[2];
    }
    if (st->q4[b0])
        ratio = (double)st->rate[b0 - lo][0] * 32.0 / (double)st->q4[b0];
    for (int b = 0; b < st->top; b++)
        st->q4[b] = b >= lo && b <= hi ? (uint64_t)st->rate[b - lo][0] * 32u : (uint64_t)((double)st->q4[b] * ratio);
    st->lo = lo;
    st->hi = hi;
}

/* The block's best point at slope lambda over every plane: the coded sets' three points where
 * measured, the model's cleanup elsewhere. Returns the set's plane (top: nothing) and its
 * bytes in *bytes. */
static int pick_point(const PlaneStat *st, double weight, double lambda, double *bytes)
{
    int best = st->top;
    double best_v = 0.0;
    *bytes = 0.0;
    for (int b = 0; b < st->top; b++) {
        if (b >= st->lo && b <= st->hi) {
            for (int k = 0; k < (b ? 3 : 1); k++) {
                double v = weight * st->sdist[b - st->lo][k] - lambda * (double)st->rate[b - st->lo][k];
                if (v > best_v) {
                    best_v = v;
                    best = b;
                    *bytes = st->rate[b - st->lo][k];
                }
            }
        } else {
            double v = weight * st->dist[b] - lambda * ((double)st->q4[b] / 32.0);
            if (v > best_v) {
                best_v = v;
                best = b;
                *bytes = (double)st->q4[b] / 32.0;
            }
        }
    }
    return best;
}

static double bytes_at(const J2kiPlan *plan, const PlaneStat *st, double lambda);

/* The smallest slope (to 2^-64 relative) whose picks fit target bytes: bytes_at falls as the
 * slope grows. */
static double fill_slope(const J2kiPlan *plan, const PlaneStat *st, double target)
{
    double lo = HT_PLANE_LOG2_MIN, hi = HT_PLANE_LOG2_MAX;
    for (int it = 0; it < HT_PLANE_ITERS; it++) {
        double mid = 0.5 * (lo + hi);
        if (bytes_at(plan, st, exp2(mid)) > target)
            lo = mid;
        else
            hi = mid;
    }
    return exp2(hi);
}

static double bytes_at(const J2kiPlan *plan, const PlaneStat *st, double lambda)
{
    double sum = 0.0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiBand *band = &plan->bands[plan->cblks[i].band_idx];
        double bytes;
        pick_point(&st[i], band->dist_weight, lambda, &bytes);
        sum += bytes;
    }
    return sum;
}

void j2ki_ht_planes_ref(const J2kiPlan *plan, const int32_t *samples, J2kiPool *pool,
                        void *scratch, uint8_t *p)
{
    const J2kiCodingParams *cp = plan->cp;
    PlaneJob job = { .plan = plan, .samples = samples, .st = scratch,
                     .work = (PlaneWork *)((PlaneStat *)scratch + (plan->nb_cblks ? plan->nb_cblks : 1)) };
    double hi, target;

    if (cp->rc_mode != J2KI_RC_BYTES || !cp->frame_bytes) {
        for (uint32_t i = 0; i < plan->nb_cblks; i++)
            p[i] = 0;
        return;
    }
    j2ki_pool_run(pool, plan->nb_cblks, stat_item, &job);
    /* the budget less the main header and a packet header estimate per code-block */
    target = (double)cp->frame_bytes - (double)j2ki_main_header_size(plan) -
             J2KI_HT_PLANE_HDR_BYTES * (double)plan->nb_cblks;
    /* the model's slope, then the measured cleanups around its picks */
    job.lambda = bytes_at(plan, job.st, 0.0) <= target ? 0.0 : fill_slope(plan, job.st, target);
    j2ki_pool_run(pool, plan->nb_cblks, measure_item, &job);
    if (bytes_at(plan, job.st, 0.0) <= target) {
        /* every bit fits: plane 0 everywhere (a set above it cannot reach the samples SigProp
         * skips) */
        for (uint32_t i = 0; i < plan->nb_cblks; i++)
            p[i] = 0;
        return;
    }
    hi = log2(fill_slope(plan, job.st, target));
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiBand *band = &plan->bands[plan->cblks[i].band_idx];
        double bytes;
        int b = pick_point(&job.st[i], band->dist_weight, exp2(hi), &bytes);
        p[i] = (uint8_t)j2ki_imin(b, 31);
    }
}
