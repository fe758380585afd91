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

typedef struct PlaneStat {
    uint64_t q4[J2KI_HT_MAX_PLANES];
    double   dist[J2KI_HT_MAX_PLANES];
    int      top;
} PlaneStat;

/* per worker: the cleanup coder's scratch and output, to measure a cleanup's bytes */
typedef struct PlaneWork {
    J2kiHtScratch s;
    uint8_t       out[J2KI_HT_CUP_CAP];
} PlaneWork;

typedef struct PlaneJob {
    const J2kiPlan *plan;
    const int32_t  *samples;
    PlaneStat      *st;
    PlaneWork      *work;
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
    const J2kiTileComp *tc = &job->plan->tiles[band->tile].comps[band->comp];
    const int32_t *coefs = job->samples + tc->buf_offset +
                           (size_t)(band->buf_y0 + cb->y0 - band->y0) * tc->w +
                           band->buf_x0 + (cb->x0 - band->x0);
    PlaneStat *st = &job->st[i];
    int w = (int)(cb->x1 - cb->x0), h = (int)(cb->y1 - cb->y0);
    st->top = j2ki_ht_plane_stats(coefs, tc->w, w, h, band->frac_bits, st->q4, st->dist);
    /* the model's bytes replaced by the cleanup's own where it codes (it is the cheap pass);
     * planes above J2KI_HT_PLANE_MEASURE from the top keep the model */
    for (int b = st->top - 1; b >= 0 && b >= st->top - J2KI_HT_PLANE_MEASURE; b--) {
        uint32_t lcup;
        PlaneWork *pw = &job->work[worker];
        if (j2ki_ht_cleanup(coefs, tc->w, w, h, band->frac_bits, b, &pw->s, pw->out, sizeof(pw->out), &lcup) == 0)
            st->q4[b] = (uint64_t)lcup * 32u;
    }
}

static double bytes_at(const J2kiPlan *plan, const PlaneStat *st, double lambda)
{
    double sum = 0.0;
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiBand *band = &plan->bands[plan->cblks[i].band_idx];
        int b = j2ki_ht_plane_pick(st[i].q4, st[i].dist, st[i].top, band->dist_weight, lambda);
        if (b < st[i].top)
            sum += (double)st[i].q4[b] / 32.0;
    }
    return sum;
}

void j2ki_ht_planes_ref(const J2kiPlan *plan, const int32_t *samples, J2kiPool *pool,
                        void *scratch, uint8_t *p)
{
    const J2kiCodingParams *cp = plan->cp;
    PlaneJob job = { .plan = plan, .samples = samples, .st = scratch,
                     .work = (PlaneWork *)((PlaneStat *)scratch + (plan->nb_cblks ? plan->nb_cblks : 1)) };
    double lo = HT_PLANE_LOG2_MIN, hi = HT_PLANE_LOG2_MAX, target;

    if (cp->rc_mode != J2KI_RC_BYTES || !cp->frame_bytes) {
        for (uint32_t i = 0; i < plan->nb_cblks; i++)
            p[i] = 0;
        return;
    }
    j2ki_pool_run(pool, plan->nb_cblks, stat_item, &job);
    /* the budget less the main header and a packet header estimate per code-block */
    target = (double)cp->frame_bytes - (double)j2ki_main_header_size(plan) -
             J2KI_HT_PLANE_HDR_BYTES * (double)plan->nb_cblks;
    if (bytes_at(plan, job.st, 0.0) <= target) {
        /* every bit fits the model's budget: no margin needed, and none wanted (a set above
         * plane 0 cannot reach the samples SigProp skips) */
        for (uint32_t i = 0; i < plan->nb_cblks; i++)
            p[i] = 0;
        return;
    }
    /* bytes_at falls as lambda grows: find the smallest lambda whose bytes fit */
    for (int it = 0; it < HT_PLANE_ITERS; it++) {
        double mid = 0.5 * (lo + hi);
        if (bytes_at(plan, job.st, exp2(mid)) > target)
            lo = mid;
        else
            hi = mid;
    }
    for (uint32_t i = 0; i < plan->nb_cblks; i++) {
        const J2kiBand *band = &plan->bands[plan->cblks[i].band_idx];
        int b = j2ki_ht_plane_pick(job.st[i].q4, job.st[i].dist, job.st[i].top, band->dist_weight, exp2(hi));
        p[i] = (uint8_t)j2ki_imin(b + J2KI_HT_PLANE_MARGIN, 31);
    }
}
